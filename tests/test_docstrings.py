"""Every public name (``binarsity_stats.__all__``) documents its parameters and return
value, methods included: numpydoc's validator, as skglm checks its API."""

import inspect

import pytest

import binarsity_stats

CODES = {"GL08", "PR01", "PR02", "PR07", "RT01", "RT03", "SS01"}


def package_members(cls: type) -> dict:
    """The members of a class and of its bases defined in this package (a results class
    gets its methods from base classes by job), the nearest definition of each name."""
    members: dict = {}
    for base in cls.__mro__:
        if base.__module__.split(".")[0] == "binarsity_stats":
            for attr, val in vars(base).items():
                members.setdefault(attr, val)
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
