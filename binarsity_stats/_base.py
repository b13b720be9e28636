"""scikit-learn base classes, or small stand-ins when scikit-learn is not installed.

scikit-learn is not a run-time dependency. When it is installed the estimators and the
``Binarizer`` derive from its base classes (so they work in ``Pipeline``,
``GridSearchCV``, ``clone``); otherwise the minimal classes below stand in, with the
same ``get_params``/``set_params`` contract. Also: the fitted-state helpers shared by
every fitted object (publication in one assignment, one snapshot per read).
"""

from __future__ import annotations

import inspect
from typing import Any

__all__ = [
    "BaseEstimator",
    "ClassifierMixin",
    "TransformerMixin",
    "NotFittedError",
    "DataConversionWarning",
    "publish_fitted",
    "fitted_snapshot",
    "inconsistent",
]

try:  # pragma: no cover - exercised when scikit-learn is installed (tests)
    from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin
    from sklearn.exceptions import DataConversionWarning, NotFittedError
except ImportError:  # pragma: no cover

    class BaseEstimator:  # type: ignore[no-redef]
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

    class ClassifierMixin:  # type: ignore[no-redef]
        """Stand-in for ``sklearn.base.ClassifierMixin``."""

    class TransformerMixin:  # type: ignore[no-redef]
        """Stand-in for ``sklearn.base.TransformerMixin``."""

        def fit_transform(self, X, y=None, **fit_params):
            """Fit, then transform X."""
            return self.fit(X, **fit_params).transform(X)

    class NotFittedError(ValueError, AttributeError):  # type: ignore[no-redef]
        """Stand-in for ``sklearn.exceptions.NotFittedError``."""

    DataConversionWarning = UserWarning  # type: ignore[misc,assignment]


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
