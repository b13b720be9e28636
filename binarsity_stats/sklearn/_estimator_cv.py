"""Cross-validated estimators: ``BinarsityGLMCV`` and ``BinarsityClassifierCV``.

scikit-learn's ``LassoCV`` / ``LogisticRegressionCV`` pattern (glum's
``GeneralizedLinearRegressorCV``): ``fit`` bins the features once, walks a λ path
with warm starts in every fold (``_cv.cross_validate``: the same engine, folds and
rules as the formula layer's ``fit_cv``), chooses λ by the best mean held-out score or
the one-standard-error rule, and keeps the path's fit on all rows at that λ. Everything
else — binning, the design, prediction, ``to_spec``, inspection — is inherited from
``BinarsityGLM`` / ``BinarsityClassifier``: these classes override only the choice of λ
(``_choose``).

The bins are learned once on all training rows and shared by every fold, as in
``fit_cv`` (binning never sees y); a ``GridSearchCV`` over ``lam`` re-learns them per
split instead.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..core._validation import check_bool, check_cv_tol, check_n_jobs, check_random_state
from ..engine._cv import check_patience, cross_validate, grid_end_message
from ..engine._folds import resolve_folds
from ..engine._path import check_grid, lambda_grid
from ..engine._scoring import SCORINGS, check_scoring
from ..engine._solvers import Solution
from ._estimator import BinarsityClassifier, BinarsityGLM
from ._estimator_input import _check_params
from ._estimator_pairs import fit_pairs
from ._estimator_problem import _EstimatorProblem

__all__ = ["BinarsityGLMCV", "BinarsityClassifierCV"]

_SELECT = ("lam_min", "lam_1se")


class _CVMixin:
    """The choice of λ by cross-validation (shared by both estimators)."""

    def _check_lam_params(self) -> None:
        """Check the CV parameters before any work (the CV estimators have no ``lam``)."""
        if self.select not in _SELECT:
            raise ValueError(f"select must be 'lam_min' or 'lam_1se'; got {self.select!r}.")
        if self.scoring not in SCORINGS:
            raise ValueError(f"scoring must be one of {SCORINGS}; got {self.scoring!r}.")
        if isinstance(self.cv, (bool, np.bool_)) or self.cv is None:
            raise TypeError(f"cv must be an integer >= 2 or a fold specification; got {self.cv!r}.")
        if isinstance(self.cv, (int, np.integer)) and self.cv < 2:
            raise ValueError(f"cv must be >= 2; got {self.cv}.")
        if self.lams is None:
            lambda_grid(1.0, self.n_lambdas, self.lam_min_ratio)  # the arguments only
        else:
            check_grid(self.lams)
        check_cv_tol(self.cv_tol)
        check_bool(self.early_stopping, "early_stopping")
        check_bool(self.extend_grid, "extend_grid")
        check_patience(self.patience)
        check_n_jobs(1 if self.n_jobs is None else self.n_jobs)
        check_random_state(self.random_state)

    def fit(self, X, y, sample_weight=None, offset=None, groups=None):
        """Bin the features, cross-validate a λ path and keep the fit at the chosen λ.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Numeric features; or a Dask DataFrame/Array (y, sample_weight and offset then
            Dask collections partitioned like X, or arrays): the bins are learned from
            per-partition summaries and the binned columns coded on the workers.
        y : array-like of shape (n_samples,)
            Response (class labels for the classifier).
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative row weights s_i (in the fits and the held-out scores):
            frequency weights, a weight of k is k repeated rows in every fit and score
            (scikit-learn's convention) when those rows fall in one fold; an int ``cv``
            assigns a weighted row to one fold, not its repetitions to several.
        offset : array-like of shape (n_samples,), optional
            Fixed part of the linear predictor.
        groups : array-like of shape (n_samples,), optional
            Group labels: with an int ``cv``, all rows of a group go to the same fold;
            with a splitter, passed to its ``split`` (``GroupKFold``).

        Returns
        -------
        self
            The fitted estimator.
        """
        _check_params(self)
        self._check_lam_params()
        pairs = self._check_interactions(X)
        problem = self._problem(X, y, sample_weight, offset, groups=groups)
        sol, lam, state = self._choose(problem)
        if pairs:  # interactions=: rank at the CV's fit, add the pairs, cross-validate again
            sol, lam, state = fit_pairs(self, problem, sol, lam, state, refit_cv=True)
        self._publish(problem, sol, lam, state)
        return self

    def _choose(self, problem: _EstimatorProblem) -> tuple[Solution, float, dict]:
        """λ by cross-validation; the path's fit on all rows at that λ."""
        family, y = problem.family, problem.y
        scoring = check_scoring(self.scoring, family, y)
        data = problem.path_data()
        if self.lams is None:
            grid = lambda_grid(data.lambda_max(), self.n_lambdas, self.lam_min_ratio)
        else:
            grid = check_grid(self.lams)
        folds = resolve_folds(
            self.cv, y, groups=problem.groups, stratify=family.binary,
            random_state=check_random_state(self.random_state), X=problem.X, name="cv",
        )  # fmt: skip
        opts = self._solver_options()
        cv_tol = check_cv_tol(self.cv_tol)
        fold_opts = dict(opts, tol=opts["tol"] if cv_tol is None else float(cv_tol))
        extend = len(grid) if (self.lams is None and self.extend_grid) else 0
        cv = cross_validate(
            data, grid, folds, scoring=scoring, opts=opts, fold_opts=fold_opts,
            n_jobs=check_n_jobs(1 if self.n_jobs is None else self.n_jobs),
            early_stopping=bool(self.early_stopping), patience=check_patience(self.patience),
            extend=extend,
        )  # fmt: skip
        message = grid_end_message(
            cv, scoring, user_grid=self.lams is not None, lambda_max=data.lambda_max
        )
        if message is not None:
            warnings.warn(message, UserWarning, stacklevel=4)
        i = cv.idx_min if self.select == "lam_min" else cv.idx_1se
        state = {
            "lams_": cv.lams,
            "cv_scores_": cv.fold_scores,
            "cv_mean_": cv.mean,
            "cv_se_": cv.se,
            "lam_min_": cv.lam_min,
            "lam_1se_": cv.lam_1se,
            "best_index_": int(i),
            "fold_ids_": cv.fold_ids,
            "splits_": list(folds.splits),
            "n_folds_": folds.n_folds,
            "grid_extended_": int(cv.extended),
        }
        return cv.path[i], float(cv.lams[i]), state


_CV_PARAMS_DOC = """
    cv : int, array-like, scikit-learn splitter or iterable of pairs, default=5
        The folds: an int K (shuffled with ``random_state``, stratified on the classes
        for a binary response, whole ``groups`` per fold when ``fit`` is given
        ``groups``), a fold-id array of one integer per row (glmnet's ``foldid``), a
        scikit-learn splitter (``KFold``, ``StratifiedKFold``, ``GroupKFold``,
        ``TimeSeriesSplit``, ...: any object with ``split(X, y, groups)``) or an
        iterable of ``(train, test)`` index pairs — as ``fit_cv(folds=...)``.
    select : {"lam_min", "lam_1se"}, default="lam_min"
        The λ kept: the best mean held-out score, or the largest λ within one standard
        error of it (a simpler model).
    scoring : {"deviance", "mse", "auc", "concordance"}, default="deviance"
        Held-out criterion (AUC: binary response only).
    n_lambdas : int, default=50
        Length of the default grid, λ_max down to ``lam_min_ratio`` · λ_max.
    lam_min_ratio : float, default=1e-3
        Smallest λ of the default grid as a fraction of λ_max.
    lams : array-like, optional
        An explicit λ grid (sorted decreasing; never extended).
    cv_tol : float or None, default=1e-5
        KKT tolerance of the fold fits (None: ``tol``); the fits on all rows use ``tol``.
    early_stopping : bool, default=True
        Stop walking down the grid once the CV curve has turned (see ``fit_cv``).
    patience : int, default=5
        λ values outside the one-standard-error band that stop the walk.
    extend_grid : bool, default=True
        Continue the default grid below its end while its last λ scores best (at most
        as many values again); a warning names the fix when the best λ is still at the
        end (see ``fit_cv``).
    n_jobs : int or None, default=None
        Folds solved in parallel (None: 1; -1: one per CPU): forked worker processes on
        Linux, threads elsewhere. Results do not depend on it.
    random_state : int, numpy Generator or None, default=None
        Seed of the folds of an int ``cv``.
    interactions : int or list of (feature, feature), default=0
        Pair terms ``bin(a, 16):bin(b, 16)``: ranked at the fit at the λ cross-validated
        on the main effects (``binarsity_stats.rank_pairs``), the top ``interactions``
        (or the pairs given) added, and the cross-validation run again with them (its
        λ and fit are kept). See :class:`BinarsityGLM`.
"""

_CV_ATTRS_DOC = """
    interactions_, pair_ranking_, pair_terms_
        With ``interactions``: as in :class:`BinarsityGLM` (the CV attributes are then
        those of the model with the pairs).
    lam_ : float
        The λ chosen (``lam_min_`` or ``lam_1se_``, by ``select``).
    lam_min_, lam_1se_ : float
        The best mean score's λ and the one-standard-error λ.
    lams_ : ndarray of shape (m,)
        The λ values cross-validated (the grid, cut by early stopping or extended).
    cv_scores_ : ndarray of shape (n_folds, m)
        Held-out score of every fold at every λ.
    cv_mean_, cv_se_ : ndarray of shape (m,)
        Mean over folds and its standard error.
    best_index_ : int
        Position of ``lam_`` in ``lams_``.
    fold_ids_ : ndarray of shape (n_samples,) or None
        The fold holding out each row (−1: never held out; None when held-out sets
        overlap).
    splits_ : list of (ndarray, ndarray)
        ``(train, test)`` row indices of every fold.
    n_folds_ : int
        Number of folds.
    grid_extended_ : int
        λ values added below the default grid.
"""


_GLM_CV_DOC = (
    """``BinarsityGLM`` with λ chosen by K-fold cross-validation over a warm-started path.

    ``fit`` bins the features once, computes λ_max and a log grid, fits the path in
    every fold from warm starts, scores the held-out rows, chooses λ (best mean or one
    standard error) and keeps the fit on all rows at that λ — the same computation as
    ``glm(...).fit_cv(...)`` on the same bins and folds. Prediction, ``to_spec`` and
    inspection are those of :class:`BinarsityGLM`.

    Parameters
    ----------
    family : {"gaussian", "binomial", "poisson"} or statsmodels family, default="gaussian"
        Distribution of the response (see :class:`BinarsityGLM`).
    n_bins : int or sequence of int, default=50
        Number of bins per feature.
    penalty_weights : {"theory", "uniform", "balanced"} or array of shape (d,), default="balanced"
        ω (see :class:`BinarsityGLM`).
    solver : {"cd", "fista"}, default="cd"
        Solver.
    tol : float, default=1e-7
        KKT tolerance of the fits on all rows.
    max_iter : int, default=1000
        Cap on passes over the data.
    fit_intercept : bool, default=True
        Whether the model has an intercept (see :class:`BinarsityGLM`).
    missing : {"error", "separate"}, default="error"
        NaN in a feature raises, or gets its own level. No ``"drop"``: an estimator
        uses every row (scikit-learn's convention); drop rows before ``fit`` or use
        ``glm(..., missing="drop")``.
    weights_kind : {"analytic", "freq"}, default="analytic"
        What ``sample_weight`` means (see :class:`BinarsityGLM`; no effect on the CV).
    categorical_features : None, "auto", or array-like of str, int or bool, default=None
        Categorical features (free levels, as ``C()``; an ordered pandas ``Categorical``:
        a TV chain, as ``ordered()``; see :class:`BinarsityGLM`).
    linear_features : None or array-like of str, int or bool, default=None
        Unpenalised linear features (see :class:`BinarsityGLM`).
    min_bin_count : int, default=1
        Smallest number of training rows in a bin (see :class:`BinarsityGLM`).
    monotone : None or dict, default=None
        ``{column: "increasing" | "decreasing"}``: monotone binned features and
        ordered factors (see :class:`BinarsityGLM`).
    by : None or dict, default=None
        ``{feature: group column}``: one chain of the feature per level of the group
        column, ``bin(x):C(g)`` (see :class:`BinarsityGLM`).
    strata : None, column or list of columns, default=None
        ``family="cox"``: the strata columns, ``strata(g)`` (see :class:`BinarsityGLM`).
"""
    + _CV_PARAMS_DOC
    + """
    Attributes
    ----------
    coef_, intercept_, block_ptr_, binarizer_, penalty_weights_, bin_counts_
        As in :class:`BinarsityGLM`, at ``lam_``.
    linear_coef_ : ndarray
        Coefficients of the ``linear_features``, at ``lam_``.
    n_iter_, converged_, kkt_violation_, objective_
        Of the fit on all rows at ``lam_``.
"""
    + _CV_ATTRS_DOC
    + """
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of str
        Column names, when ``X`` was a DataFrame with string column names.
    """
)


class BinarsityGLMCV(_CVMixin, BinarsityGLM):
    __doc__ = _GLM_CV_DOC

    def __init__(
        self,
        family: Any = "gaussian",
        n_bins=50,
        penalty_weights="balanced",
        solver: str = "cd",
        tol: float = 1e-7,
        max_iter: int = 1000,
        fit_intercept: bool = True,
        missing: str = "error",
        weights_kind: str = "analytic",
        categorical_features: Any = None,
        linear_features: Any = None,
        min_bin_count: int = 1,
        monotone: Any = None,
        by: Any = None,
        strata: Any = None,
        cv: Any = 5,
        select: str = "lam_min",
        scoring: str = "deviance",
        n_lambdas: int = 50,
        lam_min_ratio: float = 1e-3,
        lams: Any = None,
        cv_tol: float | None = 1e-5,
        early_stopping: bool = True,
        patience: int = 5,
        extend_grid: bool = True,
        n_jobs: int | None = None,
        random_state: Any = None,
        interactions: Any = 0,
    ):
        self.family = family
        self.n_bins = n_bins
        self.penalty_weights = penalty_weights
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.missing = missing
        self.weights_kind = weights_kind
        self.categorical_features = categorical_features
        self.linear_features = linear_features
        self.min_bin_count = min_bin_count
        self.monotone = monotone
        self.by = by
        self.strata = strata
        self.cv = cv
        self.select = select
        self.scoring = scoring
        self.n_lambdas = n_lambdas
        self.lam_min_ratio = lam_min_ratio
        self.lams = lams
        self.cv_tol = cv_tol
        self.early_stopping = early_stopping
        self.patience = patience
        self.extend_grid = extend_grid
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.interactions = interactions


_CLASSIFIER_CV_DOC = (
    """``BinarsityClassifier`` with λ chosen by K-fold cross-validation (binomial).

    As :class:`BinarsityGLMCV` with class labels (``classes_``, ``predict`` gives
    labels, ``predict_proba`` probabilities); an int ``cv`` is stratified on the
    classes.

    Parameters
    ----------
    n_bins : int or sequence of int, default=50
        Number of bins per feature.
    penalty_weights : {"theory", "uniform", "balanced"} or array, default="balanced"
        ω (see :class:`BinarsityGLM`).
    solver : {"cd", "fista"}, default="cd"
        Solver.
    tol : float, default=1e-7
        KKT tolerance of the fits on all rows.
    max_iter : int, default=1000
        Cap on passes over the data.
    fit_intercept : bool, default=True
        Whether the model has an intercept (see :class:`BinarsityGLM`).
    missing : {"error", "separate"}, default="error"
        Missing-value policy. No ``"drop"``: an estimator
        uses every row (scikit-learn's convention); drop rows before ``fit`` or use
        ``glm(..., missing="drop")``.
    weights_kind : {"analytic", "freq"}, default="analytic"
        What ``sample_weight`` means (see :class:`BinarsityGLM`).
    categorical_features : None, "auto", or array-like of str, int or bool, default=None
        Categorical features (free levels, as ``C()``; an ordered pandas ``Categorical``:
        a TV chain, as ``ordered()``; see :class:`BinarsityGLM`).
    linear_features : None or array-like of str, int or bool, default=None
        Unpenalised linear features (see :class:`BinarsityGLM`).
    min_bin_count : int, default=1
        Smallest number of training rows in a bin (see :class:`BinarsityGLM`).
    monotone : None or dict, default=None
        ``{column: "increasing" | "decreasing"}``: monotone binned features and
        ordered factors (see :class:`BinarsityGLM`).
    by : None or dict, default=None
        ``{feature: group column}``: one chain of the feature per level of the group
        column, ``bin(x):C(g)`` (see :class:`BinarsityGLM`).
"""
    + _CV_PARAMS_DOC
    + """
    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two class labels; ``classes_[1]`` is the event.
    coef_, intercept_, block_ptr_, binarizer_, penalty_weights_, bin_counts_
        As in :class:`BinarsityGLM`, at ``lam_``.
"""
    + _CV_ATTRS_DOC
)


class BinarsityClassifierCV(_CVMixin, BinarsityClassifier):
    __doc__ = _CLASSIFIER_CV_DOC

    def __init__(
        self,
        n_bins=50,
        penalty_weights="balanced",
        solver: str = "cd",
        tol: float = 1e-7,
        max_iter: int = 1000,
        fit_intercept: bool = True,
        missing: str = "error",
        weights_kind: str = "analytic",
        categorical_features: Any = None,
        linear_features: Any = None,
        min_bin_count: int = 1,
        monotone: Any = None,
        by: Any = None,
        cv: Any = 5,
        select: str = "lam_min",
        scoring: str = "deviance",
        n_lambdas: int = 50,
        lam_min_ratio: float = 1e-3,
        lams: Any = None,
        cv_tol: float | None = 1e-5,
        early_stopping: bool = True,
        patience: int = 5,
        extend_grid: bool = True,
        n_jobs: int | None = None,
        random_state: Any = None,
        interactions: Any = 0,
    ):
        self.n_bins = n_bins
        self.penalty_weights = penalty_weights
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.missing = missing
        self.weights_kind = weights_kind
        self.categorical_features = categorical_features
        self.linear_features = linear_features
        self.min_bin_count = min_bin_count
        self.monotone = monotone
        self.by = by
        self.cv = cv
        self.select = select
        self.scoring = scoring
        self.n_lambdas = n_lambdas
        self.lam_min_ratio = lam_min_ratio
        self.lams = lams
        self.cv_tol = cv_tol
        self.early_stopping = early_stopping
        self.patience = patience
        self.extend_grid = extend_grid
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.interactions = interactions
