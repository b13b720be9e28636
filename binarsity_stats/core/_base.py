"""scikit-learn base classes, or small stand-ins when scikit-learn is not installed.

scikit-learn is not a run-time dependency. When it is installed the estimators and the
``Binarizer`` derive from its base classes (so they work in ``Pipeline``,
``GridSearchCV``, ``clone``); otherwise the minimal classes below stand in, with the
same ``get_params``/``set_params`` contract. They are resolved on first use (the
formula layer never imports scikit-learn). Also: the fitted-state helpers shared by
every fitted object (publication in one assignment, one snapshot per read).
"""

from __future__ import annotations

import inspect
from typing import Any

# also BaseEstimator, ClassifierMixin, TransformerMixin, NotFittedError and
# DataConversionWarning, resolved on first use (module __getattr__ below)
__all__ = ["not_fitted", "publish_fitted", "fitted_snapshot", "inconsistent"]


def __getattr__(name: str) -> Any:
    # PEP 562: scikit-learn (or the stand-ins) is imported only by the modules that
    # derive from its classes (the estimators, the public Binarizer), never by the
    # formula layer: ``from binarsity_stats import glm`` does not load scikit-learn.
    if name in _SKLEARN_NAMES:
        value = _sklearn_names()[name]
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_SKLEARN_NAMES = (
    "BaseEstimator",
    "ClassifierMixin",
    "TransformerMixin",
    "NotFittedError",
    "DataConversionWarning",
)


def _sklearn_names() -> dict[str, Any]:
    try:  # pragma: no cover - exercised when scikit-learn is installed (tests)
        from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin
        from sklearn.exceptions import DataConversionWarning, NotFittedError
    except ImportError:  # pragma: no cover
        return _stand_ins()
    return {
        "BaseEstimator": BaseEstimator,
        "ClassifierMixin": ClassifierMixin,
        "TransformerMixin": TransformerMixin,
        "NotFittedError": NotFittedError,
        "DataConversionWarning": DataConversionWarning,
    }


def _stand_ins() -> dict[str, Any]:
    class BaseEstimator:
        """Minimal stand-in for ``sklearn.base.BaseEstimator``."""

        @classmethod
        def _get_param_names(cls):
            sig = inspect.signature(cls.__init__)
            return sorted(p for p in sig.parameters if p != "self")

        def get_params(self, deep=True):
            """Constructor parameters of the estimator."""
            return {k: getattr(self, k) for k in self._get_param_names()}

        def set_params(self, **params):
            """Set constructor parameters; returns self."""
            for k, v in params.items():
                if k not in self._get_param_names():
                    raise ValueError(f"Invalid parameter {k!r} for {type(self).__name__}.")
                setattr(self, k, v)
            return self

    class ClassifierMixin:
        """Stand-in for ``sklearn.base.ClassifierMixin``."""

    class TransformerMixin:
        """Stand-in for ``sklearn.base.TransformerMixin``."""

        def fit_transform(self, X, y=None, **fit_params):
            """Fit, then transform X."""
            return self.fit(X, **fit_params).transform(X)

    return {
        "BaseEstimator": BaseEstimator,
        "ClassifierMixin": ClassifierMixin,
        "TransformerMixin": TransformerMixin,
        "NotFittedError": _NotFittedError,
        "DataConversionWarning": UserWarning,
    }


class _NotFittedError(ValueError, AttributeError):
    """Stand-in for ``sklearn.exceptions.NotFittedError``."""


def not_fitted(name: str) -> Exception:
    """The error of a method that needs a fitted object (scikit-learn's class if installed)."""
    return __getattr__("NotFittedError")(
        f"This {name} instance is not fitted yet; call 'fit' first."
    )


def _is_fitted_name(name: str) -> bool:
    # scikit-learn's convention: fitted attributes end in "_" (dunders excluded)
    return name.endswith("_") and not name.startswith("__")


def publish_fitted(obj: Any, state: dict[str, Any]) -> None:
    """Replace every fitted attribute of ``obj`` by ``state`` in one assignment.

    ``fit`` builds its whole result on locals; this swaps the instance dictionary for
    a new one (constructor parameters kept, stale fitted attributes dropped). A
    reader that takes :func:`fitted_snapshot` in another thread sees the old or the
    new model, never a mix of the two.
    """
    new = {k: v for k, v in vars(obj).items() if not _is_fitted_name(k)}
    new.update(state)
    obj.__dict__ = new


def fitted_snapshot(obj: Any) -> dict[str, Any]:
    """One consistent copy of ``obj``'s attributes (see :func:`publish_fitted`)."""
    return obj.__dict__.copy()


def inconsistent(detail: str) -> ValueError:
    """The error of a fitted state whose parts do not agree (never a kernel crash)."""
    return ValueError(
        f"the fitted state is inconsistent: {detail} (was the model modified or "
        "unpickled from another version?)"
    )
