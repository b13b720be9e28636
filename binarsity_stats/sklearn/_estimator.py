"""scikit-learn style estimators: ``BinarsityGLM`` and ``BinarsityClassifier``.

They bin the raw features (``Binarizer``), compute the penalty weights and call the
engine (``_solvers.solve``). scikit-learn is not a run-time dependency: when it is
installed the estimators derive from its base classes (and so work in ``Pipeline``,
``GridSearchCV``, ``clone``); otherwise a minimal ``get_params``/``set_params`` base
stands in (``_base``).

Fitted state is published in one assignment at the end of ``fit`` and every prediction
reads one snapshot of it, validated before any kernel runs (``_fitted``): a ``predict``
racing a ``fit`` in another thread uses the old model or the new one, and a modified or
foreign pickle raises a clear error instead of reading out of bounds.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace
from numbers import Real
from typing import Any

import numpy as np

from ..families import _cox
from ..core._base import (
    BaseEstimator,
    ClassifierMixin,
    NotFittedError,
    fitted_snapshot,
    inconsistent,
    publish_fitted,
)
from ..core._base import DataConversionWarning as _DataConversionWarning
from ..design._binarizer import Binarizer, BinarizerCore
from ..distributed._dask import is_dask_collection
from ..design._assemble import BlockLayout, assemble
from ..design._design import BinnedDesign
from ..families._families import get_family
from ..design._features import (
    BLOCK_KINDS,
    LEVEL_KINDS,
    category_codes,
    feature_groups,
    feature_kinds,
    feature_shapes,
    feature_strata,
    fitted_column,
    learn_levels,
    linear_column,
)
from ..design._features import KINDS as FEATURE_KINDS
from ..design._identify import move_level_means, shared_group_donors
from ..penalty._penalty import (
    PENALTY_WEIGHTS,
    lambda_theory,
    theory_lambda_fit,
    theory_nobs,
)
from ..engine._solvers import SOLVERS, Prepared, Solution
from ..core._statistics import (
    chain_edges,
    coefficient_unit,
    degrees_of_freedom,
    jump_tolerance,
    kept_cuts,
)
from ..core._validation import (
    as_real_array,
    check_block_ptr,
    check_bool,
    check_codes,
    check_groups,
    check_lam,
    check_max_iter,
    check_offset,
    check_sample_weight,
    check_tol,
    check_weights_kind,
    code_dtype,
    is_missing,
    normalized_weights,
)

__all__ = ["BinarsityGLM", "BinarsityClassifier", "expected_failed_checks"]


def _check_params(est) -> None:
    """Validate constructor arguments at fit time (never mutate them)."""
    get_family(est.family)
    check_weights_kind(getattr(est, "weights_kind", "analytic"))
    if est.solver not in SOLVERS:
        raise ValueError(f"solver must be one of {SOLVERS}; got {est.solver!r}.")
    check_tol(est.tol)
    check_max_iter(est.max_iter)
    check_bool(est.fit_intercept, "fit_intercept")
    pw = est.penalty_weights
    if isinstance(pw, str) and pw not in PENALTY_WEIGHTS:
        raise ValueError(f"penalty_weights must be one of {PENALTY_WEIGHTS} or an array; got {pw!r}.")


@dataclass
class _EstimatorProblem:
    """The data of an estimator's fit once validated and binned (all rows).

    ``design`` holds the codes, blocks and kinds, offset and weights; ``chain`` the
    length of each block's TV chain (its missing level excluded); ``fit_intercept`` is
    the engine's (True when the intercept is absorbed into the first block); ``extra``
    is fitted state learned from y (a classifier's ``classes_``).
    """

    X: Any
    binarizer: Any
    design: BinnedDesign
    block_ptr: np.ndarray
    chain: np.ndarray
    y: np.ndarray
    family: Any
    penalty_weights: np.ndarray
    fit_intercept: bool
    absorbed: bool
    extra: dict = field(default_factory=dict)
    #: per input feature "bin" / "categorical" / "linear" (see ``_features``)
    kinds: np.ndarray | None = None
    #: per categorical feature: its levels and whether it has a missing level
    categories: list = field(default_factory=list)
    categorical_missing: list = field(default_factory=list)
    #: CV group labels (the *CV estimators' ``fit(..., groups=)``), checked
    groups: np.ndarray | None = None
    #: per block: its chains ``(first level, length)`` (several for a by-group feature)
    chains: list = field(default_factory=list)
    #: per block: the group column of a by-group feature (None for the others)
    by_groups: list = field(default_factory=list)

    @property
    def by_donors(self) -> dict[int, int]:
        """``{later by-group block: first block of the same group}`` (``_identify``)."""
        return shared_group_donors(self.by_groups)

    def identified(self, coef: np.ndarray) -> np.ndarray:
        """θ with the level means of a shared group in its first by-group block only."""
        donors = self.by_donors
        if not donors:
            return coef
        chains = [[(a, m, i) for i, (a, m) in enumerate(ch)] for ch in self.chains]
        return move_level_means(coef, self.block_ptr, self.design.counts, chains, donors)

    def prepared(self) -> Prepared:
        """The engine's problem on all rows."""
        return Prepared.from_design(
            self.design, self.y, family=self.family, penalty_weights=self.penalty_weights,
            fit_intercept=self.fit_intercept,
        )  # fmt: skip

    def path_data(self) -> Any:
        """The engine's path/CV data (``_path.PathData``) on the same design."""
        from ..engine._path import PathData

        return PathData.from_design(
            self.design, self.y, self.family, self.penalty_weights,
            fit_intercept=self.fit_intercept,
        )  # fmt: skip


def _y_array(y) -> np.ndarray:
    if y is None:
        raise ValueError("requires y to be passed, but the target y is None.")
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        warnings.warn(
            "A column-vector y was passed when a 1d array was expected; it is raveled.",
            _DataConversionWarning,
            stacklevel=3,
        )
        y = y[:, 0]
    if y.ndim != 1:
        raise ValueError(f"y should be a 1d array; got shape {y.shape}.")
    return y



def _check_missing(missing: Any) -> None:
    """The estimators' ``missing``: "error" or "separate"; "drop" refused with the reason.

    scikit-learn's estimators never drop rows: ``fit`` uses every row of X and y (a
    Pipeline, ``cross_val_score`` and the sample weights line rows up by position), and
    ``predict`` returns one finite prediction per row (a scorer fails on NaN). So
    ``missing="drop"`` — ``glm()``'s R convention, NaN predictions included — is not
    offered here; the message says what to do instead.
    """
    if isinstance(missing, str) and missing == "drop":
        raise ValueError(
            "missing must be one of ['error', 'separate'], got 'drop': the scikit-learn "
            "estimators do not drop rows (fit uses every row of X and y; predict returns "
            "one prediction per row). Drop the incomplete rows before fit (X.dropna()), "
            "give missing values a level of their own (missing='separate'), or use "
            "glm(..., missing='drop'), which drops them and predicts NaN for them."
        )

def _validate_X(X, allow_empty=False):
    """Check the container of X before binning; messages follow scikit-learn's wording.

    DataFrames pass through (the Binarizer checks their columns by name); anything
    else becomes a 2-D ndarray. Returns ``(X, n_rows)``.
    """
    if X is None:
        raise ValueError("X is None; expected a 2-D array or a DataFrame of numbers.")
    if hasattr(X, "columns") and hasattr(X, "iloc"):
        if X.shape[1] == 0:
            raise ValueError(
                f"Found array with 0 feature(s) (shape={X.shape}) while a minimum of 1 is required."
            )
        return X, int(X.shape[0])
    try:
        import scipy.sparse as sp

        if sp.issparse(X):
            raise TypeError(
                "Sparse input is not supported: the binarizer needs the raw numeric "
                "features; pass a dense array (X.toarray())."
            )
    except ImportError:  # pragma: no cover
        pass
    X = np.asarray(X)
    if X.ndim == 1:
        raise ValueError(
            "Expected 2D array, got 1D array instead. Reshape your data either using "
            "array.reshape(-1, 1) if your data has a single feature or array.reshape(1, -1) "
            "if it contains a single sample."
        )
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features); got shape {X.shape}.")
    if X.shape[1] == 0:
        raise ValueError(
            f"Found array with 0 feature(s) (shape={X.shape}) while a minimum of 1 is required."
        )
    if X.shape[0] == 0 and not allow_empty:
        raise ValueError(
            f"Found array with 0 sample(s) (shape={X.shape}) while a minimum of 1 is required."
        )
    if X.dtype.kind == "c":
        raise ValueError("Complex data not supported: X must hold real numbers.")
    return X, int(X.shape[0])


def _binned_columns(X, idx: np.ndarray):
    """The binned features of X (positions ``idx``): a DataFrame's columns or an array.

    An object array's columns must hold numbers (text is refused, not parsed; None,
    NaN and pd.NA are missing); messages name the column's position in X.
    """
    if hasattr(X, "columns") and hasattr(X, "iloc"):
        return X.iloc[:, idx] if len(idx) != X.shape[1] else X
    sub = X[:, idx] if len(idx) != X.shape[1] else X
    if sub.dtype.kind == "O":
        sub = np.column_stack([as_real_array(X[:, j], f"column {j}") for j in idx])
        sub = sub.reshape(X.shape[0], len(idx))
    return sub


def _feature_names(X):
    """Column names of a DataFrame (unique; features are matched by them), else None."""
    if not (hasattr(X, "columns") and hasattr(X, "iloc")):
        return None
    if not X.columns.is_unique:
        dup = X.columns[X.columns.duplicated()].unique().tolist()
        raise ValueError(f"X has duplicated column names {dup}; names must be unique.")
    return np.asarray(X.columns, dtype=object)


def _feature_codes(st: dict, X, n: int):
    """Codes (blocks × rows) and the dense linear columns of X under the fitted state."""
    from ..design._binarizer import code_all, columns_for_transform

    kinds, bins = st["_kinds"], st["_bins"]
    names = st.get("feature_names_in_")
    blocks = [j for j in range(len(kinds)) if kinds[j] in BLOCK_KINDS]
    by = st.get("by_")
    codes = np.empty((len(blocks), n), dtype=code_dtype(int(np.diff(st["block_ptr_"]).max())))
    if bins is not None:
        binned = np.flatnonzero(kinds == "bin")
        sub = X if hasattr(X, "columns") and bins.names is not None else _binned_columns(X, binned)
        bcodes = code_all(columns_for_transform(sub, bins), bins)
    b = c = row = 0
    dense = []
    for j in range(len(kinds)):
        label = str(names[j]) if names is not None else f"column {j}"
        if kinds[j] == "linear":
            dense.append(linear_column(_feature_column(X, j, names), label))
            continue
        if kinds[j] not in BLOCK_KINDS:  # a by= group or a strata column: no block
            continue
        if kinds[j] == "bin":
            if by is not None and by[j] is not None:  # one chain per level of the group
                g = fitted_column(st, by[j])
                glabel = str(names[g]) if names is not None else f"column {g}"
                levels = st["by_levels_"][j]
                gc = category_codes(_feature_column(X, g, names), levels, False, glabel)
                d = int(bins.n_bins[b])
                codes[row] = gc.astype(np.intp) * d + bcodes[b]
            else:
                codes[row] = bcodes[b]
            b += 1
        else:
            codes[row] = category_codes(_feature_column(X, j, names), st["categories_"][c],
                                        bool(st["categorical_missing_"][c]), label)  # fmt: skip
            c += 1
        row += 1
    Z = np.ascontiguousarray(np.column_stack(dense), dtype=np.float64) if dense else None
    return codes, Z


def _group_levels(col, glabel: str, xlabel: str) -> list:
    """The levels of a by-group feature's group column (``by={x: g}``), checked."""
    from ..design._features import column_values

    vals, isna = column_values(col)
    where = f"by[{xlabel!r}]"
    if isna.any():
        raise ValueError(
            f"{where}: the group column {glabel!r} contains missing values; a by-group "
            "feature has no missing level (bin(x):C(g) neither): drop those rows or give "
            "them a level of their own (e.g. 'missing')."
        )
    x = np.asarray(col) if not hasattr(col, "dtype") else col
    if getattr(x, "dtype", np.dtype(object)).kind == "f":
        v = np.asarray(x, dtype=np.float64)
        if np.any(v != np.round(v)):
            bad = v[v != np.round(v)][:3].tolist()
            raise ValueError(
                f"{where}: the group column {glabel!r} holds non-integer numbers (e.g. "
                f"{bad}); a group column is a factor (one chain per level): give it labels "
                "or integer codes, or bin it first."
            )
    levels, _ = learn_levels(col, glabel, "error")
    return levels


def _by_block(xlabel: str, glabel: str, levels: list, d: int) -> int:
    """The size of a by-group block (one chain of ``d`` bins per level), checked."""
    size = len(levels) * d
    if size > 65536:
        raise ValueError(
            f"by[{xlabel!r}]: {len(levels)} levels of the group column {glabel!r} times "
            f"{d} bins make {size} levels in one block, more than the 65536 a block can "
            "hold; use fewer levels (is the group column a factor?) or fewer bins."
        )
    return size


def _strata_labels(X, positions: Any, names) -> np.ndarray:
    """One stratum label per row from the strata columns (``strata()``'s labels)."""
    import pandas as pd

    from ..formula._formula import strata_labels

    cols = {}
    for j in positions:
        key = str(names[j]) if names is not None else f"x{j}"
        values = _feature_column(X, j, names)
        cols[key] = values.reset_index(drop=True) if hasattr(values, "reset_index") else values
    return strata_labels(pd.DataFrame(cols), list(cols))


class _PartitionMethod:
    """An estimator's method applied to one partition (a picklable task function)."""

    def __init__(self, est: Any, method: str) -> None:
        self.est, self.method = est, method

    def __call__(self, part):
        out = getattr(self.est, self.method)(part)
        if hasattr(part, "index"):
            import pandas as pd

            return pd.Series(out, index=part.index, name=self.method)
        return out


def _map_dask(est: Any, method: str, X: Any, offset: Any, dtype: Any) -> Any:
    """``est.method(X)`` on a Dask X: a lazy Dask Series (DataFrame X) or Array, per block."""
    if offset is not None:
        raise TypeError(
            "offset: predictions on a Dask X take no offset values; add the offset to the "
            "result (η + offset) or predict partition by partition."
        )
    fn = _PartitionMethod(est, method)
    if hasattr(X, "map_partitions") and hasattr(X, "columns"):
        import pandas as pd

        return X.map_partitions(fn, meta=pd.Series(np.empty(0, dtype=dtype), name=method))
    if getattr(X, "ndim", 0) != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features); got {X.ndim}-D.")
    return X.rechunk({1: -1}).map_blocks(fn, drop_axis=1, dtype=dtype)


def _feature_column(X, j: int, names):
    """Feature j of X: by name when fitted on a DataFrame with names, else by position."""
    if hasattr(X, "columns") and hasattr(X, "iloc"):
        if names is not None:
            key = names[j]
            if key not in X.columns:
                raise ValueError(f"column {str(key)!r} (used by the model) is missing from X.")
            return X[key]
        return X.iloc[:, j]
    return X[:, j]


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


class BinarsityGLM(BaseEstimator):
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
    """

    #: estimators pickled before these parameters existed read as the defaults
    weights_kind: str = "analytic"
    categorical_features: Any = None
    linear_features: Any = None
    min_bin_count: int = 1
    monotone: Any = None
    by: Any = None
    strata: Any = None

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

    # -- fitting ----------------------------------------------------------------------
    def _prepare_y(self, y, n):
        if get_family(self.family).survival:
            # family="cox": the packed response of _cox.encode (time order, events);
            # the times and events go to _publish for Breslow's baseline (not stored)
            time, event = _cox.survival_columns(y, n)
            return _cox.encode(time, event), {"_survival": (time, event)}
        y = _y_array(y)
        if y.dtype.kind == "c":
            raise ValueError("Complex data not supported: y must hold real numbers.")
        if y.dtype.kind not in "biuf":
            # numbers only: text (even "1.5") and dates are refused, not converted;
            # None, NaN and pd.NA in an object array are missing values
            try:
                if y.dtype.kind != "O":
                    raise TypeError
                y = as_real_array(y, "y")
            except TypeError:
                raise ValueError(
                    f"Unknown label type: y of dtype {y.dtype} is not numeric."
                ) from None
        if y.shape[0] != n:
            raise ValueError(f"y has {y.shape[0]} rows but X has {n}.")
        return y.astype(np.float64), {}

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
            two columns ``(time, event)``; ``intercept_`` is then 0, ``predict`` gives
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
        problem = self._problem(X, y, sample_weight, offset)
        sol, lam, state = self._choose(problem)
        self._publish(problem, sol, lam, state)
        return self

    # The three steps of fit, shared by the *CV estimators (_estimator_cv): the problem
    # (binning, design, ω), the choice of λ and its solution, the publication.
    def _check_lam_params(self) -> None:
        """Check the parameters of the choice of λ (here ``lam``) before any work."""
        if isinstance(self.lam, str):
            if self.lam != "theory":
                raise TypeError(f"lam must be a non-negative number or 'theory'; got {self.lam!r}.")
        else:
            check_lam(self.lam)

    def _from_dask(self, X, y, sample_weight, offset):
        """A Dask X: the Binarizer fitted from per-partition summaries (``_dask``), the
        binned columns coded on the workers; returns the in-memory X with those columns
        replaced by their codes, y, weights, offset and ``(binarizer, codes)``."""
        from ..distributed._dask import (
            collect_estimator_data,
            fit_binarizer_dask,
            meta_of,
            partition_lengths,
            with_row_columns,
        )

        if y is None:
            raise ValueError("y is None; a Dask X needs y (a Dask Series/Array or an array).")
        X, row_values, extra = with_row_columns(X, y=y, w=sample_weight, off=offset)
        y, sample_weight, offset = row_values["y"], row_values["w"], row_values["off"]
        meta = meta_of(X)
        if extra:
            meta = meta.drop(columns=extra)
        names = _feature_names(meta)
        kinds = feature_kinds(
            meta, getattr(self, "categorical_features", None),
            getattr(self, "linear_features", None), names,
        )  # fmt: skip
        binned = np.flatnonzero(kinds == "bin")
        binarizer = None
        if binned.size:
            n_bins = self.n_bins
            if binned.size != len(kinds) and np.ndim(n_bins) == 1 and len(n_bins) == len(kinds):
                n_bins = [n_bins[j] for j in binned]
            binarizer = Binarizer(
                n_bins=n_bins, missing=self.missing,
                min_bin_count=getattr(self, "min_bin_count", 1),
            )  # fmt: skip
            info = fit_binarizer_dask(binarizer, X, binned, names, sample_weight, extra=extra)
            lengths = info["rows"]
        else:
            lengths = partition_lengths(X)
        data = collect_estimator_data(
            X, y, binarizer, binned, lengths, sample_weight, offset, extra=extra
        )
        prebinned = (binarizer, data["codes"] if binned.size else None)
        return data["X"], data["y"], data["sample_weight"], data["offset"], prebinned

    def _problem(self, X, y, sample_weight, offset, groups=None) -> _EstimatorProblem:
        """Validate the data, learn the bins and build the engine's design (all rows).

        Blocks follow the input order of the binned and categorical features; the
        linear features are the design's dense columns, in input order (the layout of
        the formula naming the features in that order). ``groups`` (CV group labels,
        the *CV estimators only) are checked and kept.
        """
        family = get_family(self.family)
        _check_missing(self.missing)
        by, strata = getattr(self, "by", None), getattr(self, "strata", None)
        if strata is not None and not family.survival:
            raise ValueError(
                f"strata={strata!r} needs family='cox' (one baseline hazard per stratum); "
                f"the family is {self.family!r}."
            )
        prebinned = None
        if is_dask_collection(X) and (by or strata is not None):
            raise ValueError(
                "by= and strata= are not supported on a Dask X (bin(x):C(g) and strata() "
                "are refused on Dask DataFrames too); compute X into memory first."
            )
        if is_dask_collection(X):  # bins from mergeable summaries, codes per partition
            X, y, sample_weight, offset, prebinned = self._from_dask(X, y, sample_weight, offset)
        X, n = _validate_X(X)
        y, extra = self._prepare_y(y, n)
        cv_groups = None if groups is None else check_groups(groups, n)
        family.validate_y(y)  # 0/1 for binomial: no proportions here, unlike glm()
        sw = check_sample_weight(sample_weight, n)
        off = check_offset(offset, n)
        names = _feature_names(X)
        p = int(X.shape[1])
        kinds = feature_kinds(
            X, getattr(self, "categorical_features", None),
            getattr(self, "linear_features", None), names,
        )  # fmt: skip
        strata_pos, kinds = feature_strata(strata, kinds, names)
        groups, kinds = feature_groups(by, kinds, names)
        shapes = feature_shapes(getattr(self, "monotone", None), kinds, names)
        if strata_pos.size:  # family="cox": the packed response with the strata
            labels = _strata_labels(X, strata_pos, names)
            y = _cox.encode(*extra["_survival"], labels)
            extra = dict(extra, _strata=labels)
        binned = np.flatnonzero(kinds == "bin")
        binarizer, bcodes = None, None
        if prebinned is not None:
            binarizer, bcodes = prebinned
        elif binned.size:
            n_bins = self.n_bins
            if binned.size != p and np.ndim(n_bins) == 1 and len(n_bins) == p:
                n_bins = [n_bins[j] for j in binned]  # one entry per input feature
            binarizer = Binarizer(
                n_bins=n_bins, missing=self.missing,
                min_bin_count=getattr(self, "min_bin_count", 1),
            )  # fmt: skip
            # fit_transform codes the columns it has just read; .T: the (p, n) layout
            bcodes = binarizer.fit_transform(_binned_columns(X, binned), sample_weight=sw).T
        sizes, chain, rows, dense, chains, by_groups = [], [], [], [], [], []
        categories, cat_missing = [], []
        by_cols = np.full(p, None, dtype=object)
        by_levels: list = [None] * p
        b = 0
        for j in range(p):
            label = str(names[j]) if names is not None else f"column {j}"
            col = _feature_column(X, j, None)
            if kinds[j] == "linear":
                dense.append(linear_column(col, label))
            elif kinds[j] not in BLOCK_KINDS:  # a by= group or a strata column: no block
                continue
            elif kinds[j] == "bin" and groups[j] >= 0:  # one chain per level of the group
                g = int(groups[j])
                glabel = str(names[g]) if names is not None else f"column {g}"
                xlabel = str(names[j]) if names is not None else j
                if binarizer.has_missing_level_[b]:
                    raise ValueError(
                        f"by[{xlabel!r}]: column {label!r} contains missing values; a "
                        "by-group feature has no missing level (bin(x):C(g) neither): drop "
                        "those rows."
                    )
                gcol = _feature_column(X, g, None)
                levels = _group_levels(gcol, glabel, xlabel)
                d = int(binarizer.n_bins_[b])
                sizes.append(_by_block(xlabel, glabel, levels, d))
                gcodes = category_codes(gcol, levels, False, glabel).astype(np.intp)
                rows.append(gcodes * d + bcodes[b])
                chain.append(sizes[-1])
                chains.append([(i * d, d) for i in range(len(levels))])
                by_cols[j] = str(names[g]) if names is not None else g
                by_groups.append(g)
                by_levels[j] = np.asarray(levels, dtype=object)
                b += 1
            elif kinds[j] == "bin":
                rows.append(bcodes[b])
                sizes.append(int(binarizer.n_bins_[b]))
                chain.append(sizes[-1] - int(binarizer.has_missing_level_[b]))
                chains.append([(0, chain[-1])])
                by_groups.append(None)
                b += 1
            else:
                levels, has_missing = learn_levels(col, label, self.missing)
                rows.append(category_codes(col, levels, has_missing, label))
                categories.append(np.asarray(levels, dtype=object))
                cat_missing.append(has_missing)
                sizes.append(len(levels) + int(has_missing))
                chain.append(len(levels))
                chains.append([(0, chain[-1])])
                by_groups.append(None)
        sizes = np.asarray(sizes, dtype=np.intp)
        chain = np.asarray(chain, dtype=np.intp)
        block_ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
        if rows:
            codes = np.empty((len(rows), n), dtype=code_dtype(int(sizes.max())))
            for k, r in enumerate(rows):
                codes[k] = r
        else:
            codes = np.empty((0, n), dtype=np.uint8)
        Z = np.ascontiguousarray(np.column_stack(dense), dtype=np.float64) if dense else None
        # a binned feature is a TV chain (a missing level sits outside it), monotone in
        # its direction if given; a categorical one has free levels, unpenalised as a
        # C() term is; kinds and ω by the one assembler of every door (design/_assemble)
        has_block = np.isin(kinds, BLOCK_KINDS)
        free = kinds[has_block] == "categorical"
        block_shapes = shapes[has_block]
        layout = [
            BlockLayout(
                penalized=not free[k], chain_length=int(chain[k]), monotone=block_shapes[k],
                chains=chains[k] if len(chains[k]) > 1 else None,
            )  # fmt: skip
            for k in range(len(sizes))
        ]
        design, weights = assemble(
            codes, block_ptr, layout, self.penalty_weights, dense=Z, offset=off, sample_weight=sw
        )
        # fit_intercept=False has the formula's '- 1' meaning: the engine fits β0 and the
        # first block's levels absorb it (the TV penalty is shift-invariant, so this is
        # the optimum with the first block freely coded; see _absorbed_intercept)
        absorbed = not self.fit_intercept and len(sizes) > 0
        extra = dict(extra, feature_kinds_=kinds, monotone_=shapes, by_=by_cols,
                     by_levels_=by_levels,
                     strata_=[str(names[j]) if names is not None else int(j)
                              for j in strata_pos])  # fmt: skip
        if names is not None:
            extra["feature_names_in_"] = names
            if hasattr(X, "dtypes"):  # for the exporters: a bool column is 1/0 in SQL
                from ..design._spec import column_kinds

                extra["column_kinds_"] = column_kinds(X, [str(c) for c in names])
        return _EstimatorProblem(
            X=X, binarizer=binarizer, design=design, block_ptr=block_ptr, chain=chain, y=y,
            family=family, penalty_weights=weights,
            fit_intercept=bool(self.fit_intercept) or absorbed, absorbed=absorbed,
            extra=extra, kinds=kinds, categories=categories, categorical_missing=cat_missing,
            groups=cv_groups, chains=chains, by_groups=by_groups,
        )  # fmt: skip

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

    # -- prediction -------------------------------------------------------------------
    def _check_fitted(self):
        if "coef_" not in vars(self):
            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet; call 'fit' first."
            )

    def _fitted(self) -> dict:
        """One snapshot of the fitted state, checked for consistency before any kernel.

        ``coef_``, ``intercept_``, ``block_ptr_``, ``binarizer_`` and the feature kinds
        are read once (the state of one ``fit``, see ``publish_fitted``; a value set by
        hand is taken too) and must agree: ``block_ptr_`` valid offsets with
        ``block_ptr_[-1] == len(coef_)``, one block per binned feature whose size is the
        binarizer's ``n_bins_`` and one per categorical feature sized by its levels,
        one ``linear_coef_`` per linear feature, finite coefficients. Returns the
        snapshot with ``coef_`` and ``block_ptr_`` as private contiguous arrays, the
        binarizer's validated state under ``"_bins"`` and the kinds under ``"_kinds"``.
        """
        self._check_fitted()
        st = fitted_snapshot(self)
        p = st.get("n_features_in_")
        # estimators pickled before the feature kinds existed bin every feature
        kinds = np.asarray(st.get("feature_kinds_", ["bin"] * int(p or 0)), dtype=object)
        if kinds.ndim != 1 or not set(kinds.tolist()) <= set(FEATURE_KINDS) or kinds.size != p:
            raise inconsistent(f"feature_kinds_ is not one of {FEATURE_KINDS} per feature")
        n_bin = int(np.sum(kinds == "bin"))
        binarizer, bins = st.get("binarizer_"), None
        if n_bin:
            if not isinstance(binarizer, BinarizerCore):
                raise inconsistent("binarizer_ is not a fitted Binarizer")
            try:
                bins = binarizer._fitted_state()
            except NotFittedError:
                raise inconsistent("binarizer_ is not fitted") from None
            if bins.p != n_bin:
                raise inconsistent(f"binarizer_ has {bins.p} features, not the {n_bin} binned")
        cats = st.get("categories_", [])
        cat_missing = np.asarray(st.get("categorical_missing_", []))
        n_cat = int(np.sum(np.isin(kinds, LEVEL_KINDS)))
        if len(cats) != n_cat or cat_missing.shape != (n_cat,):
            raise inconsistent(f"categories_ does not hold the {n_cat} categorical features")
        coef = np.asarray(st["coef_"])
        if coef.ndim != 1 or coef.dtype.kind not in "iuf":
            raise inconsistent(f"coef_ is not a 1-D array of numbers (shape {coef.shape})")
        coef = np.array(coef, dtype=np.float64, order="C", copy=True)
        linear = np.asarray(st.get("linear_coef_", np.empty(0)))
        n_lin = int(np.sum(kinds == "linear"))
        if linear.shape != (n_lin,) or linear.dtype.kind not in "iuf":
            raise inconsistent(f"linear_coef_ does not hold the {n_lin} linear features")
        linear = np.array(linear, dtype=np.float64)
        if not (np.all(np.isfinite(coef)) and np.all(np.isfinite(linear))):
            raise inconsistent("coef_ or linear_coef_ holds NaN or infinite values")
        try:
            ptr = check_block_ptr(st.get("block_ptr_"), n_blocks=n_bin + n_cat, name="block_ptr_")
        except (TypeError, ValueError) as exc:
            raise inconsistent(str(exc)) from None
        if ptr[-1] != coef.shape[0]:
            raise inconsistent(f"len(coef_) = {coef.shape[0]} but block_ptr_[-1] = {ptr[-1]}")
        by = st.get("by_")  # None: fitted before by-group features existed
        by_levels = st.get("by_levels_")
        if by is not None:
            by = np.asarray(by, dtype=object)
            if by.shape != (p,) or not isinstance(by_levels, list) or len(by_levels) != p:
                raise inconsistent("by_ or by_levels_ does not hold one entry per feature")
            for j in np.flatnonzero([v is not None for v in by]):
                g = fitted_column(st, by[j])
                if kinds[j] != "bin" or not 0 <= g < p or kinds[g] != "group":
                    raise inconsistent(f"by_ gives feature {j} the group column {by[j]!r}")
                if by_levels[j] is None or len(by_levels[j]) == 0:
                    raise inconsistent(f"by_levels_ has no levels for feature {j}")
        strata = st.get("strata_") or []
        if not isinstance(strata, list) or len(strata) != int(np.sum(kinds == "strata")):
            raise inconsistent("strata_ does not list the strata columns of feature_kinds_")
        for key in strata:
            if not 0 <= fitted_column(st, key) < p or kinds[fitted_column(st, key)] != "strata":
                raise inconsistent(f"strata_ names {key!r}, not a strata column")
        expect, b, c = [], 0, 0
        for j, kind in enumerate(kinds):
            if kind == "bin":
                n_groups = len(by_levels[j]) if by is not None and by[j] is not None else 1
                expect.append(int(bins.n_bins[b]) * n_groups)
                b += 1
            elif kind in LEVEL_KINDS:
                expect.append(len(cats[c]) + int(bool(cat_missing[c])))
                c += 1
        sizes = np.diff(ptr)
        if np.any(sizes != np.asarray(expect, dtype=np.intp)):
            raise inconsistent(
                f"the block sizes {sizes.tolist()} differ from the features' levels {expect} "
                "(the binarizer's n_bins_, the categories)"
            )
        b0 = st.get("intercept_")
        if isinstance(b0, bool) or not isinstance(b0, Real) or not np.isfinite(b0):
            raise inconsistent(f"intercept_ is {b0!r}, not a finite number")
        st.update(
            coef_=coef, linear_coef_=linear, block_ptr_=ptr, intercept_=float(b0), _bins=bins,
            _kinds=kinds, categories_=list(cats), categorical_missing_=cat_missing.astype(bool),
            _name=type(self).__name__,
        )  # fmt: skip
        return st

    def decision_function(self, X, offset=None) -> np.ndarray:
        """Linear predictor η = offset + β0 + Σ_j θ_j[code_ij].

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Features (columns matched by name when fitted on a DataFrame). A Dask
            DataFrame or Array gives a lazy Dask Series or Array (one task per block).
        offset : array-like of shape (n_samples,), optional
            Offset added to the linear predictor (not with a Dask X).

        Returns
        -------
        ndarray of shape (n_samples,)
            The linear predictor of each row.
        """
        if is_dask_collection(X):
            return _map_dask(self, "decision_function", X, offset, np.float64)
        return self._eta(self._fitted(), X, offset)

    @staticmethod
    def _eta(st: dict, X, offset) -> np.ndarray:
        """η on the validated snapshot ``st`` (see ``_fitted``)."""
        X, n = _validate_X(X, allow_empty=True)  # no rows: no predictions, as for a frame
        p = len(st["_kinds"])
        if not hasattr(X, "columns") and X.shape[1] != p:
            raise ValueError(
                f"X has {X.shape[1]} features, but {st['_name']} is expecting "
                f"{p} features as input."
            )
        codes, dense = _feature_codes(st, X, n)
        try:
            codes = check_codes(codes, st["block_ptr_"])
        except ValueError as exc:  # pragma: no cover - the fitted state is checked
            raise inconsistent(str(exc)) from None
        off = check_offset(offset, n)
        design = BinnedDesign.checked(codes, st["block_ptr_"], dense=dense, offset=off)
        return design.linear_predictor(st["coef_"], st["linear_coef_"], st["intercept_"])

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
            The predicted mean response of each row.
        """
        if is_dask_collection(X):
            return _map_dask(self, "predict", X, offset, np.float64)
        return get_family(self.family).mean(self.decision_function(X, offset=offset))

    def predict_survival(self, X, times, offset=None) -> np.ndarray:
        """``family="cox"``: survival probabilities S(t | x) = exp(−H0(t) e^η).

        H0 is Breslow's baseline cumulative hazard on the training rows
        (``baseline_hazard_``), a step function of t; with ``strata``, each row's
        stratum's baseline (a stratum not seen in ``fit`` raises, naming it).

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Features.
        times : array-like of float
            Times at which S is evaluated (non-negative).
        offset : array-like of shape (n_samples,), optional
            Offset added to the linear predictor.

        Returns
        -------
        ndarray of shape (n_samples, len(times))
            S(t | x) of every row (rows) at every time (columns).
        """
        if not get_family(self.family).survival:
            raise ValueError("predict_survival needs family='cox'.")
        self._check_fitted()
        t = np.atleast_1d(np.asarray(times, dtype=np.float64))
        if t.ndim != 1 or not np.all(np.isfinite(t)) or np.any(t < 0):
            raise ValueError("times must be finite non-negative numbers.")
        risk = np.exp(self.decision_function(X, offset=offset))
        base = self.baseline_hazard_
        labels = self._strata_of(X)
        if labels is None:
            base, labels = {"": base}, np.full(risk.shape[0], "", dtype=object)
        h0 = np.empty((risk.shape[0], t.size))
        for label in np.unique(labels):
            if label not in base:
                raise ValueError(
                    f"stratum {str(label)!r} (strata={self.strata_!r}) was not seen when the "
                    f"model was fitted; known strata: {sorted(base)[:10]}."
                )
            event_times, cumhaz = base[label]
            at = np.searchsorted(event_times, t, side="right")
            h0[labels == label] = np.concatenate([[0.0], cumhaz])[at]
        return np.exp(-risk[:, None] * h0)

    def _strata_of(self, X) -> np.ndarray | None:
        """The stratum label of every row of X (None without strata)."""
        st = self._fitted()
        if not st.get("strata_"):
            return None
        X, _ = _validate_X(X, allow_empty=True)
        names = st.get("feature_names_in_")
        if not hasattr(X, "columns") and X.shape[1] != len(st["_kinds"]):
            raise ValueError(
                f"X has {X.shape[1]} features, but {st['_name']} is expecting "
                f"{len(st['_kinds'])} features as input."
            )
        return _strata_labels(X, [fitted_column(st, c) for c in st["strata_"]], names)

    def score(self, X, y, sample_weight=None, offset=None) -> float:
        """Fraction of deviance explained, D² = 1 − D(y, μ̂) / D(y, ȳ).

        For the gaussian family this is R². (``BinarsityGLM`` serves every family, so
        it scores by deviance, as scikit-learn's GLMs do.) With ``family="cox"``:
        Harrell's C of the linear predictor (scikit-survival's score; with ``strata``,
        pairs across strata are not compared, as the formula results' concordance).

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Features.
        y : array-like of shape (n_samples,)
            Response.
        sample_weight : array-like of shape (n_samples,), optional
            Row weights.
        offset : array-like of shape (n_samples,), optional
            Offset of the linear predictor.

        Returns
        -------
        float
            D² on the given rows (1 is a perfect fit, 0 the intercept-only model).
        """
        family = get_family(self.family)
        X, n = _validate_X(X)
        y, extra = BinarsityGLM._prepare_y(self, y, n)
        sw = check_sample_weight(sample_weight, n)
        sw = np.ones(n) if sw is None else normalized_weights(sw)[0]
        if family.survival:  # Harrell's C, scikit-survival's score
            eta = self.decision_function(X, offset=offset)
            return _cox.concordance_index(*extra["_survival"], eta, sw, self._strata_of(X))
        mu = self.predict(X, offset=offset)
        dev = family.deviance(y, mu, sw)
        null = family.deviance(y, np.full(n, np.average(y, weights=sw)), sw)
        return float(1.0 - dev / null) if null > 0 else float(dev == 0)

    # -- inspection -------------------------------------------------------------------
    def cut_points(self):
        """The selected cut points: the bin edges where a binned feature's level jumps.

        Returns
        -------
        DataFrame
            One row per jump: ``feature`` (the column name, or ``x0``, ``x1``, … when
            fitted on an array), ``cut`` (x ≤ cut is left of the jump) and ``jump``
            (θ_right − θ_left on the link scale), and ``shape`` (``"increasing"``,
            ``"decreasing"``, ``"free"``) when a feature is monotone, and ``level`` (the
            level of the group column whose chain jumps) when a feature has ``by``. The
            formula results' table (interval labels, bootstrap frequencies) is
            ``results(X, y).cut_points()``.
        """
        import pandas as pd

        st = self._fitted()
        names = st.get("feature_names_in_")
        ptr, coef, bins = st["block_ptr_"], st["coef_"], st["_bins"]
        shapes = st.get("monotone_")  # None: fitted before monotone features existed
        by, by_levels = st.get("by_"), st.get("by_levels_")
        unit = float(st.get("_eta_unit_", 1.0))  # 1: fitted before the unit was kept
        rows, k, b = [], 0, 0
        for j, kind in enumerate(st["_kinds"]):
            if kind not in BLOCK_KINDS:
                continue
            if kind == "bin":
                edges = np.asarray(bins.edges[b])
                d = int(bins.n_bins[b])
                levels = [None] if by is None or by[j] is None else list(by_levels[j])
                label = str(names[j]) if names is not None else f"x{j}"
                shape = shapes[j] if shapes is not None else None
                # a kept cut: the one jump tolerance (``_statistics``) of the block
                tau = jump_tolerance(coef[int(ptr[k]) : int(ptr[k + 1])], unit)
                for i, level in enumerate(levels):  # one chain per level of a by= group
                    lev = coef[int(ptr[k]) + i * d : int(ptr[k]) + i * d + len(edges) + 1]
                    for e in np.flatnonzero(np.abs(np.diff(lev)) > tau):
                        rows.append((label, float(edges[e]), float(lev[e + 1] - lev[e]),
                                     shape or "free", level))  # fmt: skip
                b += 1
            k += 1
        out = pd.DataFrame(rows, columns=["feature", "cut", "jump", "shape", "level"])
        if by is None or all(v is None for v in by):
            out = out.drop(columns="level")
        # the shape column only when a feature is monotone (as the formula results')
        return out if shapes is not None and any(shapes) else out.drop(columns="shape")

    # -- the formula layer's results ---------------------------------------------------
    def results(self, X, y, sample_weight=None, offset=None) -> Any:
        """The formula layer's results object of this fit, on its training data.

        The estimator keeps no training rows (its pickle does not grow with them), so
        the statistics that need them — deviance, df, residuals, the summary, the
        labels of bins holding one value, bootstraps — are computed on the data given
        here, which must be the data of ``fit``. The model is ``glm()`` of the formula
        naming every feature in column order (``bin(x)``, ``C(g)`` for a categorical
        feature, ``z`` for a linear one, ``- 1`` without intercept) with this
        estimator's family, bins, weights and penalty weights, and its solution is
        this estimator's: every table and plot is the formula's, number for number.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            The training features.
        y : array-like of shape (n_samples,)
            The training response (class labels for the classifier).
        sample_weight : array-like of shape (n_samples,), optional
            The training weights.
        offset : array-like of shape (n_samples,), optional
            The training offset.

        Returns
        -------
        BinarsityResults
            With ``summary()``, ``cut_points()``, ``shape_functions()``,
            ``plot_shapes()``, ``bootstrap()``, ``refit()``, ``to_spec()``...

        Raises
        ------
        ValueError
            When the data are not those of ``fit``: the bins, levels or penalty
            weights learned on them differ from the fitted ones, or the fitted
            solution's objective on them differs from ``objective_``.
        """
        from ._estimator_results import estimator_results

        st = self._fitted()
        X, n = _validate_X(X)
        return estimator_results(self, st, X, n, y, sample_weight, offset)

    def summary(self, X, y, sample_weight=None, offset=None, **kwargs) -> Any:
        """The statsmodels-style summary of the fit, as ``glm()`` results print it.

        Parameters
        ----------
        X, y, sample_weight, offset
            The training data (see :meth:`results`).
        **kwargs
            Options of ``BinarsityResults.summary`` (``precision``, ``sort``).

        Returns
        -------
        Summary
            ``print(est.summary(X, y))``; ``as_text()``, ``as_html()``, ``as_latex()``,
            ``tables``.
        """
        return self.results(X, y, sample_weight, offset).summary(**kwargs)

    def shape_functions(self, X, y, sample_weight=None, offset=None, **kwargs) -> Any:
        """The fitted step function of every binned and categorical feature.

        Parameters
        ----------
        X, y, sample_weight, offset
            The training data (see :meth:`results`).
        **kwargs
            Options of ``BinarsityResults.shape_functions`` (``merge``, ``precision``).

        Returns
        -------
        DataFrame
            ``term``, ``label``, ``low``, ``high``, ``level``, ``count``.
        """
        return self.results(X, y, sample_weight, offset).shape_functions(**kwargs)

    def plot_shapes(self, X, y, sample_weight=None, offset=None, **kwargs) -> Any:
        """Shape plot of every feature, as ``BinarsityResults.plot_shapes`` draws it.

        Parameters
        ----------
        X, y, sample_weight, offset
            The training data (see :meth:`results`).
        **kwargs
            Options of ``BinarsityResults.plot_shapes`` (``terms``, ``scale``, ...).

        Returns
        -------
        matplotlib.figure.Figure
            The figure drawn on.
        """
        return self.results(X, y, sample_weight, offset).plot_shapes(**kwargs)

    def report(
        self, X, y, path=None, sample_weight=None, offset=None, *, new=None, new_y=None,
        new_offset=None, **kwargs,
    ) -> Any:  # fmt: skip
        """The self-contained HTML report of the fit (``BinarsityResults.report``).

        For a report with bootstrap bands and cut-point frequencies, bootstrap the
        results first: ``res = est.results(X, y); res.bootstrap(); res.report(path)``.

        Parameters
        ----------
        X, y, sample_weight, offset
            The training data (see :meth:`results`).
        path : str or path-like, optional
            File to write; the page is returned as a string when omitted.
        new : DataFrame or array-like, optional
            Held-out rows for the calibration section (as ``X``; column names of
            ``feature_names_in_``, or ``x0``, ``x1``, ... for an estimator fitted on an
            array).
        new_y : array-like, optional
            The observed response of ``new`` (class labels for the classifier).
        new_offset : array-like, optional
            The offset of ``new``.
        **kwargs
            Other options of ``BinarsityResults.report`` (``title``, ``scale``,
            ``level``, ``bins``, ``precision``).

        Returns
        -------
        str or path-like
            ``path`` as given, or the HTML page when ``path`` is None.
        """
        from ._estimator_results import new_frame

        res = self.results(X, y, sample_weight, offset)
        if new is not None:
            new, n_new = _validate_X(new)
            new, new_y = new_frame(self, self._fitted(), new, n_new, new_y)
        return res.report(path, new, new_y, offset=new_offset, **kwargs)

    def bootstrap(self, X, y, sample_weight=None, offset=None, **kwargs) -> Any:
        """The bootstrap of the fit on its own bins (``BinarsityResults.bootstrap``).

        Parameters
        ----------
        X, y, sample_weight, offset
            The training data (see :meth:`results`).
        **kwargs
            Options of ``BinarsityResults.bootstrap`` (``n_boot``, ``random_state``,
            ``n_jobs``, ``groups``, ...).

        Returns
        -------
        BootstrapResults
            ``shape_bands()``, ``cut_frequencies()``, ``predict(new, interval=)``,
            ``plot_shapes(bands=True)``; ``boot.results`` has the cut-point
            frequencies in its ``cut_points()`` and summary.
        """
        return self.results(X, y, sample_weight, offset).bootstrap(**kwargs)

    def to_spec(self) -> dict:
        """A versioned, JSON-serialisable description of the fitted model.

        One term per feature: ``bin`` (cut points, right-closed; missing level; θ),
        ``categorical`` (levels, missing level, θ) or ``linear`` (coefficient), whose
        column is the feature name, or its position when fitted on an array; the
        intercept, family and link, a classifier's classes and the package version —
        the same document as ``BinarsityResults.to_spec`` (see
        ``binarsity_stats.design._spec``). ``binarsity_stats.from_spec`` rebuilds a model
        predicting bit for bit the same.

        Returns
        -------
        dict
            Plain JSON values.
        """
        st = self._fitted()  # one consistent snapshot, as predict reads
        from ..design._spec import bin_term, column_input, json_value, make_spec

        bins, ptr, coef, kinds = st["_bins"], st["block_ptr_"], st["coef_"], st["_kinds"]
        names = st.get("feature_names_in_")
        pw = np.asarray(st.get("penalty_weights_", ()))
        shapes = st.get("monotone_")  # None: fitted before monotone features existed
        by = st.get("by_")
        terms, linear = [], []
        k = b = c = 0
        for j, kind in enumerate(kinds):
            col = json_value(names[j]) if names is not None else j
            label = str(col) if names is not None else f"x{j}"
            if kind not in BLOCK_KINDS and kind != "linear":  # a by= group or strata column
                continue
            if kind == "linear":
                linear.append({"kind": "linear", "name": label, "factors": [column_input(col)],
                               "coef": float(st["linear_coef_"][len(linear)])})  # fmt: skip
                continue
            s, e = int(ptr[k]), int(ptr[k + 1])
            k += 1
            if kind == "bin":
                shape = shapes[j] if shapes is not None else None
                terms.append(bin_term(label, column_input(col), col, bins.edges[b], bins.has_missing[b],
                                      coef[s:e], penalty=shape or "tv"))  # fmt: skip
                if by is not None and by[j] is not None:  # bin(x):C(g), as the formula's
                    g = fitted_column(st, by[j])
                    gcol = json_value(names[g]) if names is not None else g
                    glabel = str(gcol) if names is not None else f"x{g}"
                    terms[-1]["name"] = f"{label}:C({glabel})"
                    terms[-1]["by"] = {"column": gcol, "main": False,
                                       "levels": [json_value(v) for v in st["by_levels_"][j]]}
                b += 1
                continue
            chain = pw.size == ptr[-1] and bool(np.any(pw[s + 1 : e] > 0))
            shape = (shapes[j] if shapes is not None else None) or "tv"  # ordered factors
            terms.append(
                {"kind": "categorical", "name": label, "column": col,
                 "levels": [json_value(v) for v in st["categories_"][c]],
                 "missing_level": bool(st["categorical_missing_"][c]), "unseen": "error",
                 "penalty": shape if chain else "free", "theta": [float(v) for v in coef[s:e]]}
            )  # fmt: skip
            c += 1
        response = {}
        if "classes_" in st:
            response["classes"] = [json_value(c) for c in st["classes_"]]
        return make_spec(
            source=type(self).__name__, family=get_family(self.family),
            intercept=st["intercept_"], fit_intercept=bool(self.fit_intercept),
            terms=terms + linear, lam=float(st["lam_"] if "lam_" in st else self.lam),
            response=response,
            penalty={"weights": pw if isinstance(pw := self.penalty_weights, str) else "array"},
            kinds=st.get("column_kinds_"),
        )  # fmt: skip

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

    #: the family is fixed (a class attribute, not a constructor parameter)
    family = "binomial"

    def _prepare_y(self, y, n):
        y = _y_array(y)
        if y.shape[0] != n:
            raise ValueError(f"y has {y.shape[0]} rows but X has {n}.")
        if y.dtype.kind == "f":
            if not np.all(np.isfinite(y)):
                raise ValueError("y contains NaN or infinite values.")
            if np.any(y != np.round(y)):
                raise ValueError(
                    "Unknown label type: continuous target; BinarsityClassifier needs "
                    "two class labels (use BinarsityGLM for a numeric response)."
                )
        if y.dtype.kind == "O" and any(is_missing(v) for v in y):
            raise ValueError("y contains missing labels (None or NaN).")
        try:
            classes, yi = np.unique(y, return_inverse=True)
        except TypeError:
            raise TypeError(
                "y mixes label types that cannot be ordered (e.g. numbers and strings)."
            ) from None
        if len(classes) > 2:
            raise ValueError(
                f"Only binary classification is supported. The target has {len(classes)} classes."
            )
        if len(classes) < 2:
            raise ValueError("BinarsityClassifier needs 2 classes; y has 1 class.")
        # published with the rest of the fitted state, at the end of fit
        return yi.astype(np.float64), {"classes_": classes}

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
