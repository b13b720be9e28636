"""The Family interface (issue 11 §1): one object per family, a generic statsmodels path."""

from __future__ import annotations

import ast
import pathlib

import binarsity_stats

PKG = pathlib.Path(binarsity_stats.__file__).parent
FAMILY_NAMES = {"gaussian", "binomial", "poisson", "gamma", "tweedie", "negativebinomial"}


def _name_switches(source: str) -> list[str]:
    """Comparisons with a family name, or a family's ``.name`` used to choose a branch."""
    found = []
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            parts = [node.left, *node.comparators]
            if any(
                isinstance(p, ast.Constant)
                and isinstance(p.value, str)
                and p.value.lower() in FAMILY_NAMES
                for p in parts
            ) or any("fam" in ast.unparse(p) and ast.unparse(p).endswith(".name") for p in parts):
                found.append(ast.unparse(node))
        elif isinstance(node, ast.Subscript):
            if "fam" in ast.unparse(node.slice) and ast.unparse(node.slice).endswith(".name"):
                found.append(ast.unparse(node))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr == "get" and any(
                "fam" in ast.unparse(a) and ast.unparse(a).endswith(".name") for a in node.args
            ):
                found.append(ast.unparse(node))
    return found


def test_no_code_outside_the_family_module_switches_on_a_family_name():
    offenders = {}
    for path in sorted(PKG.glob("*.py")):
        if path.name == "_families.py":
            continue
        hits = _name_switches(path.read_text(encoding="utf-8"))
        if hits:
            offenders[path.name] = hits
    assert offenders == {}


def test_the_name_switch_detector_sees_the_old_switches():
    old = (
        'if family.name == "gaussian":\n    pass\n'
        'hmax = {"gaussian": 1.0}.get(prob.family.name, None)\n'
        'fam = {"poisson": 1}[m.family.name]\n'
        'stratify = fam == "binomial"\n'
    )
    assert len(_name_switches(old)) == 4
