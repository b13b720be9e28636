"""The API pages list every public method of a class, also those it inherits from this
package's classes (``BinarsityResults`` gets most of its methods from base classes in
``model/``, one per job), and none that scikit-learn or Python's builtins define.

What is proved here: Sphinx, run with the repository's class template and
docs/conf.py's autodoc settings and hooks on a one-page project, writes every public
method and property of ``BinarsityResults``, ``BootstrapResults``, ``Binarizer``
(whose ``fit`` comes from ``BinarizerCore``) and ``BinarsityClassifier`` (``fit`` from
``BinarsityGLM``), and leaves out scikit-learn's ``ClassifierMixin.score``, which
``BinarsityClassifier`` inherits before ``BinarsityGLM``'s.
"""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
from functools import cached_property
from pathlib import Path

import pytest
from test_docstrings import package_members

import binarsity_stats as bs

ROOT = Path(__file__).resolve().parents[1]
CLASSES = ("BinarsityResults", "BootstrapResults", "Binarizer", "BinarsityClassifier")


def _conf(docs: Path) -> str:
    """docs/conf.py's autodoc settings and hooks, without its site (theme, notebooks)."""
    text = docs.joinpath("conf.py").read_text(encoding="utf-8")
    settings = text[text.index("# -- autodoc / autosummary") : text.index("# -- MyST")]
    hooks = text[text.index("# -- Hooks") :]
    return (
        "import inspect\nimport re\n"
        "extensions = ['sphinx.ext.autodoc', 'sphinx.ext.autosummary', 'numpydoc']\n"
        "templates_path = ['_templates']\n" + settings + hooks
    )


def _public(cls: type) -> set[str]:
    return {
        name
        for name, val in package_members(cls).items()
        if not name.startswith("_")
        and (inspect.isfunction(val) or isinstance(val, (property, cached_property)))
    }


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, str]:
    pytest.importorskip("sphinx")
    pytest.importorskip("numpydoc")
    src = tmp_path_factory.mktemp("api")
    docs = ROOT / "docs"
    (src / "_templates" / "autosummary").mkdir(parents=True)
    for tpl in (docs / "_templates" / "autosummary").iterdir():
        (src / "_templates" / "autosummary" / tpl.name).write_text(tpl.read_text("utf-8"), "utf-8")
    (src / "conf.py").write_text(_conf(docs), encoding="utf-8")
    (src / "index.rst").write_text(
        "API\n===\n\n.. currentmodule:: binarsity_stats\n\n.. autosummary::\n"
        "   :toctree: generated\n\n" + "".join(f"   {c}\n" for c in CLASSES),
        encoding="utf-8",
    )
    out = src / "_build"
    # the package this test imported (the checkout), not an installed copy
    env = dict(os.environ, PYTHONPATH=str(Path(bs.__file__).resolve().parents[1]))
    subprocess.run(
        [sys.executable, "-m", "sphinx", "-q", "-b", "text", str(src), str(out)],
        check=True, cwd=str(src), capture_output=True, text=True, env=env,
    )  # fmt: skip
    return {
        c: (out / "generated" / f"binarsity_stats.{c}.txt").read_text(encoding="utf-8")
        for c in CLASSES
    }


def _documented(page: str) -> set[str]:
    """The members a text page documents (``name(...)``, ``property name``, ``name``)."""
    return set(re.findall(r"^   (?:property )?([A-Za-z_]\w*)(?:\(|$| = )", page, flags=re.M))


@pytest.mark.parametrize("name", CLASSES)
def test_the_api_page_lists_every_public_method_of_the_class(pages, name):
    cls = getattr(bs, name)
    public = _public(cls)
    assert len(public) >= 5  # the members are found
    assert public - _documented(pages[name]) == set()


def test_inherited_methods_of_other_libraries_are_left_out(pages):
    clf = bs.BinarsityClassifier
    assert clf.score.__module__.startswith("sklearn")  # ClassifierMixin's, before ours
    documented = _documented(pages["BinarsityClassifier"])
    assert "fit" in documented  # inherited from BinarsityGLM
    assert "score" not in documented
