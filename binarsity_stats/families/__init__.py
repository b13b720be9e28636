"""The families: loss, gradient, curvature, bounds, deviance (GLM families and Cox).

Public here: :class:`NegativeBinomial` (``family="nb"``; ``theta=`` fixes θ).
"""

from typing import Any

__all__ = ["NegativeBinomial"]


def __getattr__(name: str) -> Any:
    if name == "NegativeBinomial":
        from ._negbin import NegativeBinomial

        return NegativeBinomial
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
