"""Every public name (``binarsity_stats.__all__``) documents its parameters and return
value, methods included: numpydoc's validator, as skglm checks its API."""

import inspect

import pytest

import binarsity_stats

CODES = {"GL08", "PR01", "PR02", "PR07", "RT01", "RT03", "SS01"}


def package_members(cls: type) -> dict:
    """The members of a class defined in this package: its own and those it inherits
    from the package's classes (a results class gets its methods from base classes by
    job), not those another library's class defines first in the MRO."""
    members: dict = {}
    seen: set[str] = set()
    for base in cls.__mro__:
        for attr, val in vars(base).items():
            if attr not in seen and base.__module__.split(".")[0] == "binarsity_stats":
                members[attr] = val
            seen.add(attr)
    return members


def _targets():
    for name in binarsity_stats.__all__:
        obj = getattr(binarsity_stats, name)
        path = f"{obj.__module__}.{obj.__qualname__}"
        yield path
        if inspect.isclass(obj) and not issubclass(obj, Warning):
            for attr, val in package_members(obj).items():
                if not attr.startswith("_") and (
                    inspect.isfunction(val) or isinstance(val, property)
                ):
                    yield f"{path}.{attr}"


def test_public_names_have_numpydoc_docstrings():
    validate = pytest.importorskip("numpydoc.validate").validate
    problems = []
    for target in _targets():
        errors = [c for c, _ in validate(target)["errors"] if c in CODES]
        if errors:
            problems.append((target, errors))
    assert problems == []
