"""The package's import graph: no cycles, and the layers import only downwards.

What is proved here, by parsing every module of ``binarsity_stats`` with ``ast`` (every
``import`` statement counts, also inside functions; only ``if TYPE_CHECKING:`` blocks,
which never run, are left out):

* no module imports another in a loop (directly or through others);
* the engine (solvers, path and CV, families, penalty, prox, binarizer, feature kinds)
  never imports the modelling layer (formulas, models, results, plots), the reports
  or the CLI; nothing imports the CLI but ``__main__``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "binarsity_stats"
NAME = "binarsity_stats"

#: The engine: plain Python over the kernels, no formulas, results or plots.
ENGINE = {
    "_base", "_binarizer", "_blocks", "_dask", "_dask_solve", "_design", "_families",
    "_features", "_metric", "_path", "_penalty", "_polish", "_problem", "_prox", "_solvers",
    "_spec", "_statistics",
    "_validation", "_version",
}  # fmt: skip
#: The modelling layer and above.
MODELLING = {
    "_formula", "_model", "_results", "_refit", "_path_results", "_bootstrap", "_compare",
    "_plotting", "_datasets", "_summary", "_cli", "_export_sql", "_scorecard",
    # the estimators reach the formula results (summary, shapes, bootstrap) lazily
    "_estimator", "_estimator_cv", "_estimator_results",
    "_report",
    # glm() on Dask DataFrames: the formula's design from mergeable summaries
    "_dask_model",
}  # fmt: skip


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(path: Path, modules: set[str]) -> set[str]:
    """Package modules imported by one file (``__init__`` for the package itself)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == NAME:
                    found.add(parts[1] if len(parts) > 1 else "__init__")
        elif isinstance(node, ast.ImportFrom):
            if node.level == 1 or node.module == NAME or (node.module or "").startswith(NAME + "."):
                base = node.module if node.level == 1 else (node.module or "")[len(NAME) + 1 :]
                if base:
                    found.add(base.split(".")[0])
                else:  # from . import x: a module, or a name of __init__
                    for alias in node.names:
                        found.add(alias.name if alias.name in modules else "__init__")
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def import_graph() -> dict[str, set[str]]:
    """Module → the package's Python modules it imports (extension modules left out)."""
    files = {p.stem: p for p in PACKAGE.glob("*.py")}
    kernels = {p.name.split(".")[0] for p in PACKAGE.glob("*.pyx")}
    graph = {}
    for name, path in files.items():
        deps = _imports(path, set(files) | kernels)
        graph[name] = {d for d in deps if d in files and d != name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a list of modules, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def dfs(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                return stack[stack.index(dep) :] + [dep]
            if dep not in state:
                found = dfs(dep)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = dfs(node)
            if found:
                return found
    return None


def test_the_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_the_parser_sees_function_level_imports_and_skips_type_checking(tmp_path):
    src = tmp_path / "mod.py"
    src.write_text(
        "from typing import TYPE_CHECKING\n"
        "from . import _histogram\n"
        "from ._formula import x\n"
        "import binarsity_stats._solvers\n"
        "if TYPE_CHECKING:\n    from ._results import R\n"
        "def f():\n    from ._model import glm\n    from . import glm as g\n"
    )
    found = _imports(src, {"_histogram"})
    assert found == {"_histogram", "_formula", "_solvers", "_model", "__init__"}


def test_no_module_imports_another_in_a_loop():
    graph = import_graph()
    assert {"_model", "_results", "_solvers", "_path"} <= set(graph)
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_results_do_not_import_the_model():
    assert "_model" not in import_graph()["_results"]


@pytest.mark.parametrize("module", sorted(ENGINE))
def test_the_engine_never_imports_the_modelling_layer(module):
    graph = import_graph()
    if module not in graph:
        pytest.skip(f"{module} does not exist (yet)")
    assert not graph[module] & (MODELLING | {"__init__"}), graph[module]


def test_nothing_but_main_imports_the_cli():
    graph = import_graph()
    users = sorted(m for m, deps in graph.items() if "_cli" in deps)
    assert users in ([], ["__main__"]), users


HEAVY = ("pandas", "formulaic", "sklearn", "matplotlib", "statsmodels", "dask", "distributed")


@pytest.mark.parametrize(
    ("statement", "allowed"),
    [
        ("import binarsity_stats", ()),
        ("import binarsity_stats._solvers", ()),
        ("import binarsity_stats._path", ()),
        ("from binarsity_stats import glm", ("pandas", "formulaic")),
        ("from binarsity_stats import BinarsityGLM", ("pandas", "sklearn")),
    ],
)
def test_heavy_dependencies_are_imported_where_first_used(statement, allowed, tmp_path):
    import os
    import subprocess
    import sys

    import binarsity_stats

    # the child imports the package these tests import (the installed one in CI, whose
    # kernels are compiled), never the source folder of a checkout: run it elsewhere
    imported = Path(binarsity_stats.__file__).resolve().parent.parent
    code = f"import sys; {statement}; print(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    env = dict(os.environ, PYTHONPATH=str(imported))
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env,
        cwd=str(tmp_path), check=True,
    ).stdout.split()  # fmt: skip
    assert set(out) <= set(allowed), f"{statement!r} loaded {sorted(set(out) - set(allowed))}"


def test_lazy_public_names_resolve_and_are_listed():
    import binarsity_stats

    for name in binarsity_stats.__all__:
        assert getattr(binarsity_stats, name).__name__ == name
        assert name in dir(binarsity_stats)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        binarsity_stats.nope  # noqa: B018
