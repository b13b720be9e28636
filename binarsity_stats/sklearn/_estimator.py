"""scikit-learn style estimators: ``BinarsityGLM`` and ``BinarsityClassifier``.

They bin the raw features (``Binarizer``), compute the penalty weights and call the
engine (``_solvers.solve``). scikit-learn is not a run-time dependency: when it is
installed the estimators derive from its base classes (and so work in ``Pipeline``,
``GridSearchCV``, ``clone``); otherwise a minimal ``get_params``/``set_params`` base
stands in (``_base``).

``fit`` is three steps: ``_problem`` (``_estimator_problem``: the data validated by
``_estimator_input``, binned and assembled), ``_choose`` (λ and its fit) and
``_publish``. Fitted state is published in one assignment at the end of ``fit``;
prediction (``_estimator_predict``) reads one checked snapshot of it, and inspection
(``_estimator_inspect``) the same snapshot or the formula layer's results.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ..core._base import BaseEstimator, ClassifierMixin, inconsistent, publish_fitted
from ..core._statistics import chain_edges, coefficient_unit, degrees_of_freedom, kept_cuts
from ..core._validation import check_lam
from ..design._features import BLOCK_KINDS
from ..distributed._dask import is_dask_collection
from ..engine._solvers import Solution
from ..families import _cox
from ..families._families import get_family
from ..penalty._penalty import lambda_theory, theory_lambda_fit, theory_nobs
from ._estimator_input import _check_params, class_labels, response_y
from ._estimator_inspect import _InspectMixin
from ._estimator_predict import _map_dask, _PredictMixin
from ._estimator_pairs import check_interactions, fit_pairs
from ._estimator_problem import _EstimatorProblem, _ProblemMixin

__all__ = ["BinarsityGLM", "BinarsityClassifier", "expected_failed_checks"]


def expected_failed_checks(estimator: Any) -> dict[str, str]:
    """scikit-learn checks that an estimator of this package fails by design, with why.

    scikit-learn's own mechanism for expected failures:
    ``check_estimator(est, expected_failed_checks=expected_failed_checks(est))`` or
    ``parametrize_with_checks(estimators, expected_failed_checks=expected_failed_checks)``.

    Parameters
    ----------
    estimator : BinarsityGLM, BinarsityClassifier, BinarsityGLMCV or BinarsityClassifierCV
        The estimator with its parameters (the declaration depends on them).

    Returns
    -------
    dict of str to str
        Check name to reason; empty when every check must pass.
    """
    out: dict[str, str] = {}
    theory = isinstance(getattr(estimator, "lam", None), str)
    if theory and getattr(estimator, "weights_kind", "analytic") == "analytic":
        out["check_sample_weight_equivalence_on_dense_data"] = (
            "weights_kind='analytic' (the default) reads sample_weight as R's prior "
            "weights for lam='theory': λ is computed with Kish's effective n "
            "(Σs)²/Σs², not the Σs of the repeated rows, so integer weights and "
            "repeated rows get different λ. At a given λ they give the same fit, and "
            "weights_kind='freq' passes this check."
        )
    return out


class BinarsityGLM(_InspectMixin, _PredictMixin, _ProblemMixin, BaseEstimator):
    """Generalized linear model on quantile-binned features under the binarsity penalty.

    Each feature is cut into ``n_bins`` quantile bins; the model is additive in
    step functions of the features, fitted by minimising (design.md §1)

    .. math::

        \\frac{1}{W}\\sum_i s_i [b(\\eta_i) - y_i\\eta_i]
        + \\lambda \\sum_j \\sum_{k\\ge 2} \\omega_{jk} |\\theta_{jk} - \\theta_{j,k-1}|
        \\quad\\text{s.t.}\\quad \\sum_k n_{jk}\\theta_{jk} = 0 .

    Parameters
    ----------
    family : str, tuple or statsmodels family, default="gaussian"
        Distribution of the response: a name — ``"gaussian"``, ``"binomial"``,
        ``"poisson"`` (canonical links), ``"gamma"``, ``"tweedie"`` or
        ``("tweedie", p)`` with 1 < p < 2 (log link), all with Cython kernels, or
        ``"cox"`` / ``("cox", "efron")`` (proportional hazards; ``y`` a structured
        array with an event and a time field, or two columns (time, event)) — or a
        statsmodels family instance with a link whose loss is convex, e.g.
        ``sm.families.Tweedie(var_power=1.5, link=sm.families.links.Log())`` (the loss
        is then half the unit deviance; see ``_families``).
    lam : float or "theory", default="theory"
        The penalty strength λ ≥ 0, or ``"theory"`` for the paper's Theorem 1 scale
        sqrt(2 U φ (A + log d) / n) (as ``glm().fit(lam="theory")``, the formula
        default; φ estimated from a first fit and the model refitted once for the
        gaussian). A fixed λ has no scale common to all families (the theory λ of the
        same data differs by orders of magnitude between gaussian and binomial), so
        the default adapts to the family, n and d; tune around ``lam_`` with
        ``GridSearchCV`` when prediction is the goal.
    n_bins : int or sequence of int, default=50
        Number of bins per feature (fewer when a feature has fewer distinct values).
        A sequence has one entry per feature (those of categorical and linear
        features are ignored) or one per binned feature.
    penalty_weights : {"theory", "uniform", "balanced"} or array of shape (d,), default="balanced"
        ω: ``"balanced"`` is sqrt(π̂_jk (1 − π̂_jk)), the noise level of the centred
        suffix sums (the default: see the user guide's penalty page and the
        ``selection`` benchmark), ``"theory"`` the paper's data-driven weight
        sqrt(π̂_jk), ``"uniform"`` weighs every jump 1 (tick's choice).
    solver : {"cd", "fista"}, default="cd"
        Block coordinate descent with exact block steps, or accelerated proximal
        gradient with the exact binarsity prox.
    tol : float, default=1e-7
        Stop when the largest KKT violation (design.md §2) is at most ``tol``.
    max_iter : int, default=1000
        Cap on passes over the data.
    fit_intercept : bool, default=True
        Whether the model has an intercept β0. ``False`` has the meaning of ``- 1`` in a
        formula (R's coding): the first feature's levels carry full coding — no
        sum-to-zero constraint — and absorb the intercept, so ``intercept_`` is 0 and
        the fit, its predictions and ``lam="theory"`` are the intercept model's (the
        first block's levels shifted by its β0; the total-variation penalty is
        shift-invariant). Keeping every constraint would force the average row to η = 0.
    missing : {"error", "separate"}, default="error"
        NaN in a feature raises, or gets its own level outside the TV chain. No
        ``"drop"``: an estimator uses every row (scikit-learn's convention); drop rows
        before ``fit`` or use ``glm(..., missing="drop")``.
    weights_kind : {"analytic", "freq"}, default="analytic"
        What ``sample_weight`` means for ``lam="theory"``: analytic (precision) weights
        give n = Kish's effective number (Σ s)² / Σ s², frequency weights n = Σ s (the
        n of the repeated rows). The fit at a given λ does not depend on it: there a
        weight of k is k repeated rows (scikit-learn's convention). So only
        ``"freq"`` makes a ``lam="theory"`` fit with integer weights that of the
        repeated rows — scikit-learn's ``check_sample_weight_equivalence_*`` checks;
        the default keeps R's prior weights (``glm()``'s default) and declares those
        checks as expected failures (:func:`expected_failed_checks`).
    categorical_features : None, "auto", or array-like of str, int or bool, default=None
        Features that are categorical: a block of free (unpenalised) levels, what
        ``C(x)`` is in a formula — so one-hot dummies or codes are not binned. Column
        names (X a DataFrame), positions, or a boolean mask of length n_features
        (scikit-learn's ``HistGradientBoosting*`` convention); ``"auto"``: the pandas
        ``category`` columns. Levels are a category column's categories, else the
        sorted distinct values; an unseen level at predict time raises, naming it. A
        column with an *ordered* pandas ``Categorical`` dtype is an ordered factor
        instead: a TV chain over its categories in their order (``ordered(x)``).
    linear_features : None or array-like of str, int or bool, default=None
        Features that enter linearly and unpenalised (one coefficient each, in
        ``linear_coef_``), what a plain numeric term is in a formula.
    min_bin_count : int, default=1
        Smallest number of training rows in a bin of a binned feature (LightGBM's
        ``min_data_in_bin``, ``bin(x, min_count=k)`` in a formula): smaller bins are
        merged into a neighbour (see ``Binarizer``).
    monotone : None or dict, default=None
        Binned features whose step function must be monotone:
        ``{column: "increasing" | "decreasing"}`` (columns by name or position), what
        ``bin(x, monotone=...)`` is in a formula — a non-decreasing (non-increasing) TV
        chain, fitted exactly by weighted isotonic block steps (design.md §7). An
        ordered factor (a column of ordered pandas ``Categorical`` dtype) may be
        monotone too, as ``ordered(x, monotone=...)``: its levels' effects in the
        categories' order.
    by : None or dict, default=None
        Varying coefficients: ``{feature: group column}`` (columns by name or position),
        what ``bin(x, n):C(g)`` is in a formula — one TV chain of the binned feature x
        per level of the column g over the same cut points, with no penalty across
        levels. g is a column of X that is then no feature of its own: the breaks
        between the chains leave g's level means free, so the term holds g's main
        effect (a ``C(g)`` next to it would be absorbed, as in a formula). g's levels
        are learned as a categorical feature's (a category column's categories, else
        the sorted distinct values); g has no missing level, and an unseen level at
        predict time raises, naming it. Combines with ``monotone`` (each level's chain
        monotone), per-feature ``n_bins`` and ``min_bin_count``.
    strata : None, column or list of columns, default=None
        ``family="cox"`` only: the column(s) of X (by name or position) whose values
        label the strata, what ``strata(g)`` is in a formula — risk sets never cross
        strata and each stratum has its own Breslow baseline (``baseline_hazard_`` is
        then a dict). The strata columns are no features.
    interactions : int or list of (feature, feature), default=0
        Pair terms ``bin(a, 16):bin(b, 16)`` (design.md §10): after the main-effects fit
        at the chosen λ, every pair of binned features is ranked by its pair term's
        λ_max at that fit (``binarsity_stats.rank_pairs``), the top ``interactions``
        pairs (or the pairs given, by name or position) are added and the model is
        refitted jointly at the same λ. 0 (the default): main effects only. The pair
        terms are not described by ``to_spec``, ``cut_points`` or ``results`` yet
        (refused by name).

    Attributes
    ----------
    binarizer_ : Binarizer
        The fitted binarizer (cut points in ``binarizer_.edges_``).
    coef_ : ndarray of shape (d,)
        All levels θ, binned and categorical features in column order.
    block_ptr_ : ndarray of shape (n_blocks + 1,)
        Offsets of each binned or categorical feature's levels in ``coef_``.
    linear_coef_ : ndarray of shape (n_linear,)
        Coefficients of the linear features, in column order.
    feature_kinds_ : ndarray of str, shape (n_features_in_,)
        ``"bin"``, ``"categorical"``, ``"ordered"`` (an ordered pandas ``Categorical``:
        a TV chain over its categories) or ``"linear"`` for every feature
        (``"group"``/``"strata"`` for a ``by=`` group or ``strata=`` column).
    monotone_ : ndarray of object, shape (n_features_in_,)
        ``"increasing"``, ``"decreasing"`` or None (no order) for every feature.
    by_ : ndarray of object, shape (n_features_in_,)
        The group column (name, or position for an array X) of every by-group feature,
        None for the others.
    by_levels_ : list
        Per feature: the levels of its group column (block order), or None.
    strata_ : list
        The strata columns (names, or positions), empty without strata.
    column_kinds_ : dict or None
        Fitted on a DataFrame: the kind of every column (``"bool"``, ``"int"``,
        ``"float"``, ``"category"`` or ``"object"``), written to ``to_spec()`` as
        ``column_kinds`` (``to_sql`` reads a boolean column as 1/0). Not set when fitted
        on an array.
    categories_ : list of ndarray
        The levels of every categorical feature, in column order.
    categorical_missing_ : ndarray of bool
        Whether each categorical feature has a missing level (the last).
    intercept_ : float
        β0 (0 when ``fit_intercept=False``: the first feature's levels include it).
    lam_ : float
        The λ fitted (the value of ``lam="theory"``).
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
        Column names, when ``X`` was a DataFrame (a ``ColumnTransformer`` with
        ``set_output(transform="pandas")`` passes its output names through).
    dispersion_ : float
        The dispersion φ estimated for ``lam="theory"`` (gaussian σ², gamma and
        Tweedie φ); absent for other families and a numeric ``lam``.
    interactions_ : list of tuple
        With ``interactions``: the pairs added (feature names, or positions for an
        array X), best first.
    pair_ranking_ : DataFrame
        With ``interactions``: every pair ranked at the main-effects fit
        (``feature_a``, ``feature_b``, ``score``, ``score_to_lam``, ``n_cells``,
        ``rank``, as ``binarsity_stats.rank_pairs``).
    pair_terms_ : list of dict
        With ``interactions``: per pair, its ``features`` (input positions), the two
        axes' ``edges``, the observed ``cells`` (flat ids k·K_b + l) and their ``coef``
        (one per cell, then 0 for a cell without training rows).
    """

    #: estimators pickled before these parameters existed read as the defaults
    weights_kind: str = "analytic"
    categorical_features: Any = None
    linear_features: Any = None
    min_bin_count: int = 1
    monotone: Any = None
    by: Any = None
    strata: Any = None
    interactions: Any = 0

    def __init__(
        self,
        family: Any = "gaussian",
        lam: float | str = "theory",
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
        interactions: Any = 0,
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
        self.weights_kind = weights_kind
        self.categorical_features = categorical_features
        self.linear_features = linear_features
        self.min_bin_count = min_bin_count
        self.monotone = monotone
        self.by = by
        self.strata = strata
        self.interactions = interactions

    # -- fitting ----------------------------------------------------------------------
    def _prepare_y(self, y, n):
        return response_y(get_family(self.family), y, n)

    def fit(self, X, y, sample_weight=None, offset=None) -> BinarsityGLM:
        """Bin the features and fit the penalised GLM.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Numeric features; or a Dask DataFrame/Array (y, sample_weight and offset then
            Dask collections partitioned like X, or arrays): the bins are learned from
            per-partition summaries and the binned columns coded on the workers.
        y : array-like of shape (n_samples,)
            Response (0/1 for binomial, counts ≥ 0 for poisson). With
            ``family="cox"``: a structured array with an event (boolean) and a time
            (float) field, as scikit-survival's ``Surv.from_arrays(event, time)``, or
            two columns ``(time, event)`` — the event boolean, 0/1, or R's 1 = censored /
            2 = event when its largest value is 2, read as ``Surv()`` reads it (the
            summary says so); ``intercept_`` is then 0, ``predict`` gives
            the relative risk e^η, ``score`` Harrell's C and ``baseline_hazard_`` holds
            Breslow's baseline (event times, cumulative hazard).
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative row weights s_i. At a given λ (the bins, ω and the fit) a
            weight of k is k repeated rows and 0 a dropped row: scikit-learn's frequency
            weights. Only the n of ``lam="theory"`` depends on ``weights_kind``: Kish's
            effective n for the default ``"analytic"`` (R's prior weights, as
            ``glm()``), Σ s for ``"freq"``.
        offset : array-like of shape (n_samples,), optional
            Fixed part of the linear predictor (e.g. log exposure).

        Returns
        -------
        self : BinarsityGLM
            The fitted estimator.
        """
        _check_params(self)
        self._check_lam_params()
        pairs = self._check_interactions(X)
        problem = self._problem(X, y, sample_weight, offset)
        sol, lam, state = self._choose(problem)
        if pairs:  # interactions=: rank the pairs at this fit, add them, refit jointly
            sol, lam, state = fit_pairs(self, problem, sol, lam, state, refit_cv=False)
        self._publish(problem, sol, lam, state)
        return self

    def _check_interactions(self, X) -> bool:
        """Check ``interactions`` before any work; whether pairs are asked for."""
        wanted = check_interactions(getattr(self, "interactions", 0))
        if wanted and is_dask_collection(X):
            raise ValueError(
                "interactions= is not supported on a Dask X (pair ranking reads the raw "
                "columns); compute X into memory first, or interactions=0."
            )
        return bool(wanted)

    # The three steps of fit, shared by the *CV estimators (_estimator_cv): the problem
    # (binning, design, ω), the choice of λ and its solution, the publication.
    def _check_lam_params(self) -> None:
        """Check the parameters of the choice of λ (here ``lam``) before any work."""
        if isinstance(self.lam, str):
            if self.lam != "theory":
                raise TypeError(f"lam must be a non-negative number or 'theory'; got {self.lam!r}.")
        else:
            check_lam(self.lam)


    def _solver_options(self) -> dict:
        return {"solver": self.solver, "tol": float(self.tol), "max_iter": int(self.max_iter)}

    def _choose(self, problem: _EstimatorProblem) -> tuple[Solution, float, dict]:
        """λ (``lam``: a number or "theory") and the fit at it; no extra fitted state."""
        prepared = problem.prepared()
        opts = self._solver_options()
        design, y, family = problem.design, problem.y, problem.family
        if isinstance(self.lam, str):  # "theory", as glm().fit(lam="theory")
            sw, off = design.sample_weight, design.offset
            unit, scale, counts = design.unit_weight, design.weight_scale, design.counts
            block_ptr, chain = problem.block_ptr, problem.chain
            sizes = np.diff(block_ptr)
            binned = problem.kinds[np.isin(problem.kinds, BLOCK_KINDS)] == "bin"
            kind = getattr(self, "weights_kind", "analytic") if sw is not None else "analytic"
            nobs = theory_nobs(unit, kind, scale)
            # d: the binary features of the binned terms, as the formula counts them
            d, fi = int(np.sum(sizes[binned])), problem.fit_intercept
            def dispersion(sol: Solution) -> float:
                # φ from the first fit's Pearson χ² on its df, then one refit; df as
                # the formula's: jumps and populated missing levels of binned blocks,
                # populated levels − 1 of categorical ones, one per linear column
                chains = [problem.chains[j] if binned[j] else [] for j in range(len(sizes))]
                unit_eta = coefficient_unit(family, y, unit)
                jumps = kept_cuts(sol.coef, block_ptr, chain_edges(block_ptr, chains), unit_eta)
                dof = degrees_of_freedom(
                    jumps, counts, block_ptr, chains, [bool(binned[j] and sizes[j] > chain[j])
                    for j in range(len(sizes))], int(fi) + design.n_dense, problem.by_donors,
                )  # fmt: skip
                return family.dispersion(y, family.mean(sol.eta), unit, dof, nobs=nobs)

            sol, lam, phi = theory_lambda_fit(
                lambda value, start: prepared.solve(value, warm_start=start, **opts),
                lambda phi: lambda_theory(family, y, unit, off, d, nobs, fit_intercept=fi,
                                          phi=phi),
                dispersion if family.estimate_dispersion else None,
            )  # fmt: skip
            if phi is not None:
                return sol, float(lam), {"dispersion_": float(phi)}
        else:
            lam = float(self.lam)
            sol = prepared.solve(lam, **opts)
        return sol, float(lam), {}

    def _publish(self, problem: _EstimatorProblem, sol: Solution, lam: float,
                 state: dict) -> None:  # fmt: skip
        """Publish the fitted state of ``sol`` at ``lam`` (plus ``state``) in one go."""
        block_ptr, binarizer = problem.block_ptr, problem.binarizer
        coef, intercept = np.array(sol.coef, dtype=np.float64), float(sol.intercept)
        linear = np.array(sol.dense_coef, dtype=np.float64).reshape(-1)
        if problem.absorbed:  # reported as the model without intercept: η unchanged
            coef[int(block_ptr[0]) : int(block_ptr[1])] += intercept
            intercept = 0.0
        coef = problem.identified(coef)  # by-group features sharing a group column
        state = dict(problem.extra, **state)
        survival = state.pop("_survival", None)
        strata = state.pop("_strata", None)
        state.pop("_r_coding", None)  # how y was coded: re-read by results()
        if survival is not None:  # family="cox": no intercept; Breslow's baseline
            intercept = 0.0
            eta = problem.design.linear_predictor(coef, linear, 0.0)
            base = _cox.breslow_baseline(*survival, eta, problem.design.unit_weight, strata)
            # one (times, H0) per stratum label with strata=, else the one baseline
            state["baseline_hazard_"] = base if strata is not None else base[""]
        state.update(
            binarizer_=binarizer,
            coef_=coef,
            linear_coef_=linear,
            categories_=list(problem.categories),
            categorical_missing_=np.asarray(problem.categorical_missing, dtype=bool),
            intercept_=intercept,
            lam_=float(lam),
            block_ptr_=block_ptr,
            penalty_weights_=problem.penalty_weights,
            bin_counts_=sol.bin_counts,
            n_iter_=sol.n_sweeps,
            converged_=sol.converged,
            kkt_violation_=sol.kkt_violation,
            objective_=sol.objective,
            # without the (n,) linear predictor: a pickle must not grow with the data
            solution_=replace(sol, eta=None),
            n_features_in_=len(problem.kinds),
            # the unit of η of the jump tolerance (``_statistics``): cut_points
            _eta_unit_=coefficient_unit(problem.family, problem.y, problem.design.unit_weight),
        )
        # one assignment: the previous fit's attributes (feature_names_in_ included)
        # are replaced as a whole, never attribute by attribute
        publish_fitted(self, state)


    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = self.missing == "separate"
        return tags


class BinarsityClassifier(ClassifierMixin, BinarsityGLM):
    """Binary classifier: a binomial ``BinarsityGLM`` with class labels.

    Parameters
    ----------
    lam : float or "theory", default="theory"
        The penalty strength λ ≥ 0, or ``"theory"`` (see :class:`BinarsityGLM`).
    n_bins : int or sequence of int, default=50
        Number of bins per feature.
    penalty_weights : {"theory", "uniform", "balanced"} or array, default="balanced"
        ω (see :class:`BinarsityGLM`).
    solver : {"cd", "fista"}, default="cd"
        Solver.
    tol : float, default=1e-7
        KKT tolerance.
    max_iter : int, default=1000
        Cap on passes over the data.
    fit_intercept : bool, default=True
        Whether the model has an intercept; ``False`` moves it into the first feature's
        levels (``intercept_`` = 0, same predictions; see :class:`BinarsityGLM`).
    missing : {"error", "separate"}, default="error"
        Missing-value policy. No ``"drop"``: an estimator
        uses every row (scikit-learn's convention); drop rows before ``fit`` or use
        ``glm(..., missing="drop")``.
    weights_kind : {"analytic", "freq"}, default="analytic"
        What ``sample_weight`` means for ``lam="theory"`` (see :class:`BinarsityGLM`).
    categorical_features : None, "auto", or array-like of str, int or bool, default=None
        Categorical features (free levels, as ``C()``; an ordered pandas ``Categorical``:
        a TV chain, as ``ordered()``; see :class:`BinarsityGLM`).
    linear_features : None or array-like of str, int or bool, default=None
        Unpenalised linear features (see :class:`BinarsityGLM`).
    min_bin_count : int, default=1
        Smallest number of training rows in a bin (see :class:`BinarsityGLM`).
    monotone : None or dict, default=None
        ``{column: "increasing" | "decreasing"}``: monotone binned features (see
        :class:`BinarsityGLM`).
    by : None or dict, default=None
        ``{feature: group column}``: one chain of the feature per level of the group
        column, ``bin(x):C(g)`` (see :class:`BinarsityGLM`).
    interactions : int or list of (feature, feature), default=0
        Pair terms added after the main-effects fit (see :class:`BinarsityGLM`;
        ``interactions_``, ``pair_ranking_``, ``pair_terms_``).

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
        lam: float | str = "theory",
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
        interactions: Any = 0,
    ):
        self.lam = lam
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
        self.interactions = interactions

    #: the family is fixed (a class attribute, not a constructor parameter)
    family = "binomial"

    def _prepare_y(self, y, n):
        # published with the rest of the fitted state, at the end of fit
        return class_labels(y, n)

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
            Probability of ``classes_[0]`` and of ``classes_[1]`` for each row.
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
            The predicted class label of each row.
        """
        st = self._fitted()
        classes = np.asarray(st.get("classes_", ()))
        if classes.shape != (2,):
            raise inconsistent(f"classes_ holds {classes.size} labels, not 2")
        if is_dask_collection(X):
            return _map_dask(self, "predict", X, offset, classes.dtype)
        eta = self._eta(st, X, offset)
        return classes[(eta > 0).astype(int)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags
