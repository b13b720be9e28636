"""scikit-learn style estimators: ``BinarsityGLM`` and ``BinarsityClassifier``.

They bin the raw features (``Binarizer``), compute the penalty weights and call the
engine (``_solvers.solve``). scikit-learn is not a run-time dependency: when it is
installed the estimators derive from its base classes (and so work in ``Pipeline``,
``GridSearchCV``, ``clone``); otherwise a minimal ``get_params``/``set_params`` base
stands in.
"""

from __future__ import annotations

import inspect
from numbers import Integral, Real

import numpy as np

from ._binarizer import Binarizer
from ._families import get_family
from ._penalty import penalty_weights as _penalty_weights
from ._solvers import SOLVERS, Solution, solve

__all__ = ["BinarsityGLM", "BinarsityClassifier"]

try:  # pragma: no cover - exercised when scikit-learn is installed (tests)
    from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
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

    class RegressorMixin:  # type: ignore[no-redef]
        """Stand-in for ``sklearn.base.RegressorMixin``."""

    class ClassifierMixin:  # type: ignore[no-redef]
        """Stand-in for ``sklearn.base.ClassifierMixin``."""


def _check_params(est) -> None:
    """Validate constructor arguments at fit time (never mutate them)."""
    get_family(est.family)
    lam = est.lam
    if isinstance(lam, bool) or not isinstance(lam, Real):
        raise TypeError(f"lam must be a non-negative number; got {lam!r}.")
    if not np.isfinite(lam) or lam < 0:
        raise ValueError(f"lam must be a finite non-negative number; got {lam!r}.")
    if est.solver not in SOLVERS:
        raise ValueError(f"solver must be one of {SOLVERS}; got {est.solver!r}.")
    if isinstance(est.tol, bool) or not isinstance(est.tol, Real) or not est.tol > 0:
        raise ValueError(f"tol must be a positive number; got {est.tol!r}.")
    if isinstance(est.max_iter, bool) or not isinstance(est.max_iter, Integral):
        raise TypeError(f"max_iter must be a positive integer; got {est.max_iter!r}.")
    if est.max_iter < 1:
        raise ValueError(f"max_iter must be a positive integer; got {est.max_iter!r}.")
    pw = est.penalty_weights
    if isinstance(pw, str) and pw not in ("theory", "uniform"):
        raise ValueError(
            f"penalty_weights must be 'theory', 'uniform' or an array; got {pw!r}."
        )


def _as_1d(values, name: str, n: int) -> np.ndarray | None:
    if values is None:
        return None
    arr = np.asarray(values)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be numeric; got dtype {arr.dtype}.")
    arr = arr.astype(np.float64).reshape(-1) if arr.ndim <= 1 or 1 in arr.shape else None
    if arr is None:
        raise ValueError(f"{name} must be one-dimensional.")
    if arr.shape[0] != n:
        raise ValueError(f"{name} has {arr.shape[0]} rows but X has {n}.")
    return arr


def _n_rows(X) -> int:
    shape = getattr(X, "shape", None)
    if shape is not None and len(shape) >= 1:
        return int(shape[0])
    return len(X)


class BinarsityGLM(RegressorMixin, BaseEstimator):
    """Generalized linear model on quantile-binned features under the binarsity penalty.

    Each feature is cut into ``n_bins`` quantile bins; the model is additive in
    step functions of the features, fitted by minimising (design.md §1)

    .. math::

        \\frac{1}{W}\\sum_i s_i [b(\\eta_i) - y_i\\eta_i]
        + \\lambda \\sum_j \\sum_{k\\ge 2} \\omega_{jk} |\\theta_{jk} - \\theta_{j,k-1}|
        \\quad\\text{s.t.}\\quad \\sum_k n_{jk}\\theta_{jk} = 0 .

    Parameters
    ----------
    family : {"gaussian", "binomial", "poisson"}, default="gaussian"
        Distribution of the response (canonical link).
    lam : float, default=1e-3
        The penalty strength λ ≥ 0.
    n_bins : int or sequence of int, default=50
        Number of bins per feature (fewer when a feature has fewer distinct values).
    penalty_weights : {"theory", "uniform"} or array of shape (d,), default="theory"
        ω: ``"theory"`` is the paper's data-driven weight sqrt(π̂_jk), ``"uniform"``
        weighs every jump 1 (tick's choice).
    solver : {"cd", "fista"}, default="cd"
        Block coordinate descent with exact block steps, or accelerated proximal
        gradient with the exact binarsity prox.
    tol : float, default=1e-7
        Stop when the largest KKT violation (design.md §2) is at most ``tol``.
    max_iter : int, default=1000
        Cap on passes over the data.
    fit_intercept : bool, default=True
        Whether to fit an intercept.
    missing : {"error", "separate"}, default="error"
        NaN in a feature raises, or gets its own level outside the TV chain.

    Attributes
    ----------
    binarizer_ : Binarizer
        The fitted binarizer (cut points in ``binarizer_.edges_``).
    coef_ : ndarray of shape (d,)
        All levels θ, features in column order.
    block_ptr_ : ndarray of shape (n_features + 1,)
        Offsets of each feature's levels in ``coef_``.
    intercept_ : float
        β0.
    penalty_weights_ : ndarray of shape (d,)
        ω used (0 at each block start).
    bin_counts_ : ndarray of shape (d,)
        Weighted bin counts n_jk.
    n_iter_ : int
        Passes over the data (cd) or iterations (fista).
    converged_ : bool
        Whether the KKT tolerance was met.
    kkt_violation_ : float
        Largest KKT violation at the solution.
    objective_ : float
        Objective value at the solution.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of str
        Column names, when ``X`` was a DataFrame with string column names.
    """

    def __init__(
        self,
        family: str = "gaussian",
        lam: float = 1e-3,
        n_bins=50,
        penalty_weights="theory",
        solver: str = "cd",
        tol: float = 1e-7,
        max_iter: int = 1000,
        fit_intercept: bool = True,
        missing: str = "error",
    ):
        self.family = family
        self.lam = lam
        self.n_bins = n_bins
        self.penalty_weights = penalty_weights
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.missing = missing

    # -- fitting ----------------------------------------------------------------------
    def _prepare_y(self, y, n):
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            y = y[:, 0]
        if y.ndim != 1:
            raise ValueError(f"y must be one-dimensional; got shape {y.shape}.")
        if y.dtype.kind not in "biuf":
            raise TypeError(f"y must be numeric; got dtype {y.dtype}.")
        if y.shape[0] != n:
            raise ValueError(f"y has {y.shape[0]} rows but X has {n}.")
        return y.astype(np.float64)

    def fit(self, X, y, sample_weight=None, offset=None) -> BinarsityGLM:
        """Bin the features and fit the penalised GLM.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Numeric features.
        y : array-like of shape (n_samples,)
            Response (0/1 for binomial, counts ≥ 0 for poisson).
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative row weights s_i.
        offset : array-like of shape (n_samples,), optional
            Fixed part of the linear predictor (e.g. log exposure).

        Returns
        -------
        self
        """
        _check_params(self)
        family = get_family(self.family)
        n = _n_rows(X)
        y = self._prepare_y(y, n)
        sw = _as_1d(sample_weight, "sample_weight", n)
        off = _as_1d(offset, "offset", n)
        binarizer = Binarizer(n_bins=self.n_bins, missing=self.missing)
        binarizer.fit(X, sample_weight=sw)
        codes = binarizer.transform_codes(X)
        self._fit_codes(codes, binarizer, y, family, sw, off)
        return self

    def _fit_codes(self, codes, binarizer, y, family, sw, off, warm_start=None):
        sizes = np.asarray(binarizer.n_bins_, dtype=np.intp)
        block_ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
        counts = np.zeros(int(block_ptr[-1]))
        from ._histogram import bin_sums_all

        bin_sums_all(codes, block_ptr, np.ones(codes.shape[1]) if sw is None else sw, counts)
        chain = sizes - np.asarray(binarizer.has_missing_level_, dtype=np.intp)
        weights = _penalty_weights(self.penalty_weights, counts, block_ptr, chain)
        sol: Solution = solve(
            codes,
            block_ptr,
            y,
            family=family,
            lam=float(self.lam),
            penalty_weights=weights,
            sample_weight=sw,
            offset=off,
            fit_intercept=self.fit_intercept,
            solver=self.solver,
            tol=float(self.tol),
            max_iter=int(self.max_iter),
            warm_start=warm_start,
        )
        self.binarizer_ = binarizer
        self.coef_ = sol.coef
        self.intercept_ = sol.intercept
        self.block_ptr_ = block_ptr
        self.penalty_weights_ = weights
        self.bin_counts_ = sol.bin_counts
        self.n_iter_ = sol.n_sweeps
        self.converged_ = sol.converged
        self.kkt_violation_ = sol.kkt_violation
        self.objective_ = sol.objective
        self.solution_ = sol
        self.n_features_in_ = binarizer.n_features_in_
        names = getattr(binarizer, "feature_names_in_", None)
        if names is not None:
            self.feature_names_in_ = np.asarray(names, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        return self

    # -- prediction -------------------------------------------------------------------
    def _check_fitted(self):
        if not hasattr(self, "coef_"):
            try:
                from sklearn.exceptions import NotFittedError
            except ImportError:  # pragma: no cover
                NotFittedError = AttributeError  # noqa: N806
            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet; call 'fit' first."
            )

    def decision_function(self, X, offset=None) -> np.ndarray:
        """Linear predictor η = offset + β0 + Σ_j θ_j[code_ij].

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Features (columns matched by name when fitted on a DataFrame).
        offset : array-like of shape (n_samples,), optional
            Offset added to the linear predictor.

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        self._check_fitted()
        from ._histogram import gather_add_all

        codes = self.binarizer_.transform_codes(X)
        n = codes.shape[1]
        eta = np.full(n, self.intercept_, dtype=np.float64)
        off = _as_1d(offset, "offset", n)
        if off is not None:
            if not np.all(np.isfinite(off)):
                raise ValueError("offset contains NaN or infinite values.")
            eta += off
        gather_add_all(codes, self.block_ptr_, self.coef_, eta)
        return eta

    def predict(self, X, offset=None) -> np.ndarray:
        """Mean response b'(η) (for binomial: the probability of the event).

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Features.
        offset : array-like of shape (n_samples,), optional
            Offset added to the linear predictor.

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        return get_family(self.family).mean(self.decision_function(X, offset=offset))

    # -- inspection -------------------------------------------------------------------
    def cut_points(self) -> list[np.ndarray]:
        """The selected cut points of each feature: the bin edges where the level jumps.

        Returns
        -------
        list of ndarray
            For each feature, the interior edges e_k with θ_{k+1} ≠ θ_k.
        """
        self._check_fitted()
        out = []
        for j, edges in enumerate(self.binarizer_.edges_):
            s = self.block_ptr_[j]
            m = len(edges) + 1
            lev = self.coef_[s : s + m]
            out.append(np.asarray(edges)[np.diff(lev) != 0])
        return out

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = self.missing == "separate"
        return tags


class BinarsityClassifier(ClassifierMixin, BinarsityGLM):
    """Binary classifier: a binomial ``BinarsityGLM`` with class labels.

    Parameters
    ----------
    lam : float, default=1e-3
        The penalty strength λ ≥ 0.
    n_bins : int or sequence of int, default=50
        Number of bins per feature.
    penalty_weights : {"theory", "uniform"} or array, default="theory"
        ω (see :class:`BinarsityGLM`).
    solver : {"cd", "fista"}, default="cd"
        Solver.
    tol : float, default=1e-7
        KKT tolerance.
    max_iter : int, default=1000
        Cap on passes over the data.
    fit_intercept : bool, default=True
        Whether to fit an intercept.
    missing : {"error", "separate"}, default="error"
        Missing-value policy.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two class labels; ``classes_[1]`` is the event (probability in
        ``predict_proba(X)[:, 1]``).
    coef_, intercept_, block_ptr_, binarizer_, penalty_weights_, bin_counts_, n_iter_
        As in :class:`BinarsityGLM`.
    """

    def __init__(
        self,
        lam: float = 1e-3,
        n_bins=50,
        penalty_weights="theory",
        solver: str = "cd",
        tol: float = 1e-7,
        max_iter: int = 1000,
        fit_intercept: bool = True,
        missing: str = "error",
    ):
        self.lam = lam
        self.n_bins = n_bins
        self.penalty_weights = penalty_weights
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.missing = missing

    #: the family is fixed (a class attribute, not a constructor parameter)
    family = "binomial"

    def _prepare_y(self, y, n):
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            y = y[:, 0]
        if y.ndim != 1:
            raise ValueError(f"y must be one-dimensional; got shape {y.shape}.")
        if y.shape[0] != n:
            raise ValueError(f"y has {y.shape[0]} rows but X has {n}.")
        if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
            raise ValueError("y contains NaN or infinite values.")
        classes, yi = np.unique(y, return_inverse=True)
        if len(classes) != 2:
            raise ValueError(
                f"BinarsityClassifier needs exactly 2 classes in y; got {len(classes)}."
            )
        self.classes_ = classes
        return yi.astype(np.float64)

    def predict_proba(self, X, offset=None) -> np.ndarray:
        """Class probabilities, columns in the order of ``classes_``.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Features.
        offset : array-like of shape (n_samples,), optional
            Offset of the linear predictor.

        Returns
        -------
        ndarray of shape (n_samples, 2)
        """
        p1 = BinarsityGLM.predict(self, X, offset=offset)
        return np.column_stack([1.0 - p1, p1])

    def predict(self, X, offset=None) -> np.ndarray:
        """Predicted class labels (event when its probability exceeds 1/2).

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Features.
        offset : array-like of shape (n_samples,), optional
            Offset of the linear predictor.

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        eta = self.decision_function(X, offset=offset)
        return self.classes_[(eta > 0).astype(int)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags
