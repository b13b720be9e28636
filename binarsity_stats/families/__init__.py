"""The families: loss, gradient, curvature, bounds, deviance (GLM families and Cox).

Public here: :class:`NegativeBinomial` (``family="nb"``; ``theta=`` fixes θ), resolved
on first use.
"""

import importlib
from typing import Any

__all__ = ["NegativeBinomial"]

#: public name → the module that defines it
_LAZY = {"NegativeBinomial": "._negbin"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module, __name__), name)
