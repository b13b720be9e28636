"""Cut continuous features into ordered bins and code every row (design.md §6).

``Binarizer`` learns, per feature j, strictly increasing interior cut points
``edges_[j]`` (d_j − 1 of them) and replays them on new data. Bins are right-closed:
bin k is ``(edges[k-1], edges[k]]`` and

    code(x) = np.searchsorted(edges, x, side="left"),

so values outside the training range fall in the end bins. The codes are stored in the
solver layout of design.md §3: a C-contiguous (n_features, n_samples) array of uint8
(every d_j ≤ 256) or uint16.

Quantile cut points (the default) are order statistics of the training column. Their
position convention, the tie-aware split used when ties collapse quantiles and the
treatment of sample weights are stated in the ``Binarizer`` docstring; the functions
below implement them and the tests hold them to it.

Layout of this module: the estimator; input validation and column access (never a
full float copy of X); the cut-point rules (pure functions of sorted values); the NumPy
reference twins of the Cython kernels of ``_binning.pyx``.
"""

from __future__ import annotations

import heapq
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..core._base import fitted_snapshot, inconsistent, not_fitted, publish_fitted
from ..kernels._binning import assign_codes, assign_codes_2d, compact_column
from ..core._validation import (
    as_real_array,
    check_min_bin_count,
    check_n_bins,
    check_sample_weight,
    code_dtype,
)

__all__ = ["Binarizer", "BinarizerCore"]  # noqa: F822 - Binarizer: built on first use

#: Largest number of levels (chain bins + missing level) that uint16 codes can hold.
MAX_LEVELS = 65536

_METHODS = ("quantile", "uniform")
_MISSING = ("error", "separate")


# =====================================================================================
# The estimator
# =====================================================================================


def __getattr__(name: str) -> Any:
    # PEP 562: the scikit-learn transformer is built on first use, so that the formula
    # layer (which uses BinarizerCore) never imports scikit-learn
    if name == "Binarizer":
        cls = _make_binarizer()
        globals()["Binarizer"] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _make_binarizer() -> type:
    from ..core._base import BaseEstimator, TransformerMixin

    class Binarizer(BinarizerCore, TransformerMixin, BaseEstimator):
        __doc__ = BinarizerCore.__doc__
        # named in the class body so that scikit-learn's set_output wraps them
        transform = BinarizerCore.transform
        fit_transform = BinarizerCore.fit_transform

        def __sklearn_tags__(self):
            tags = super().__sklearn_tags__()
            tags.input_tags.allow_nan = self.missing == "separate"
            # the output is integer codes (uint8/uint16), whatever the input dtype
            tags.transformer_tags.preserves_dtype = []
            return tags

    # pickles name the class binarsity_stats.design._binarizer.Binarizer (found through
    # this module's __getattr__), as they did when it was defined at module level
    Binarizer.__qualname__ = "Binarizer"
    Binarizer.__module__ = __name__
    return Binarizer


class BinarizerCore:
    """Cut each continuous feature into ordered bins and return integer bin codes.

    A scikit-learn transformer (``get_params``/``set_params``, ``clone``, ``Pipeline``,
    ``get_feature_names_out``) when scikit-learn is installed; it is not needed to run.

    Parameters
    ----------
    n_bins : int or sequence of int, default=50
        Largest number of bins d_j per feature (one value for all features, or one per
        feature), each at least 2. A feature gets fewer bins only when it has fewer
        distinct training values (quantile) or when equal-width bins are empty
        (uniform). With ``missing="separate"`` a feature with missing values gets one
        more level on top. At most 65536 levels fit the uint16 codes, so ``n_bins``
        is at most 65536 (65535 with ``missing="separate"``).
    method : {"quantile", "uniform"}, default="quantile"
        ``"quantile"``: cut points are quantiles of the training values (see Notes).
        ``"uniform"``: d equal-width bins over the training range [min, max], then
        every empty bin merged into the next one so that every bin is non-empty.
    missing : {"error", "separate"}, default="error"
        ``"error"``: a NaN (or ``pd.NA``) raises a ValueError that names the column.
        ``"separate"``: a feature that had missing values in training gets one extra
        level outside the total-variation chain, whose code is the number of chain
        bins (the last code); a missing value at transform time in a feature that had
        none in training still raises.
    min_bin_count : int, default=1
        Smallest number of training rows in a chain bin (LightGBM's
        ``min_data_in_bin``): after the cut points are placed, a bin holding fewer rows
        is merged into its smaller neighbour, the smallest first, until every bin holds
        at least this many rows (or one bin is left). Rows are counted whatever their
        weight (rows of zero weight excepted). It keeps features with few distinct
        values (counts, ratings) from getting bins of a single row.

    Attributes
    ----------
    edges_ : list of ndarray of float64
        Per feature, the strictly increasing interior cut points, length
        (number of chain bins − 1). Empty for a constant feature.
    n_bins_ : ndarray of int64, shape (n_features_in_,)
        Number of levels per feature, the missing level included when there is one.
    has_missing_level_ : ndarray of bool, shape (n_features_in_,)
        Whether the feature has a missing level (it had NaN in training and
        ``missing="separate"``). Its code is ``n_bins_[j] - 1``.
    bin_counts_ : list of ndarray
        Per feature, the training count of every level (int64), or the sum of the
        sample weights of its rows (float64) when weights were given. Chain bins
        always have a positive count; the missing level has weight 0 when all its
        rows have zero weight.
    feature_names_in_ : ndarray of object or None
        Column names when fitted on a DataFrame, else None.
    n_features_in_ : int
        Number of features seen in ``fit``.

    Notes
    -----
    **Quantile position convention.** Let x_(1) ≤ … ≤ x_(n) be the n non-missing
    training values of a feature and d = n_bins. The candidate cut points are the
    type-1 (inverted-CDF) sample quantiles

        q_k = x_(⌈k n / d⌉),   k = 1, …, d − 1,

    the smallest data value whose empirical CDF reaches k/d: what
    ``np.quantile(x, k / d, method="inverted_cdf")`` returns, except that the ranks are
    computed here in exact integer arithmetic (NumPy rounds k/d first, and so can move
    a rank by one where k n / d is an integer). When they are strictly increasing and q_{d−1} < max x they are
    the cut points, and bin k holds the rows of ranks ⌈k n/d⌉ + 1 … ⌈(k+1) n/d⌉: d bins
    whose sizes differ by at most one.

    **Ties.** Otherwise ties have collapsed candidates (a value of count > n/d spans
    several quantile positions) and the freed bins are spent again, as LightGBM's
    ``GreedyFindBin`` and EBM do. On the distinct values v_1 < … < v_m with counts
    c_i (m > d; with m ≤ d every distinct value gets its own bin):

    1. *Big values*: a value whose count is at least the mean bin size gets its own
       bin. The mean is that of the remaining mass over the remaining bins and is
       iterated to a fixed point (it only decreases as big values are set aside).
    2. The other values form runs between the big values. The remaining R bins are
       shared among the runs in proportion to their mass by the Sainte-Laguë
       (Webster) highest-averages rule, at most one bin per distinct value; a run that
       gets no bin (mass below about half a mean bin) joins the bin of the big value
       after it (the one before it, for a run at the top).
    3. Each run is cut into its share of bins by the same rule, recursively: its own
       type-1 quantiles when they are distinct, else steps 1–3 on the run.

    The result has exactly min(d, m) bins, all non-empty, and the cut points are data
    values. It is a function of the multiset of values only (hence independent of row
    order) and depends on them through their ranks and ties only, so codes are
    invariant under strictly increasing transforms of a feature. A spike with a
    continuous tail (90% zeros) keeps d − 1 near-equal bins for the tail.

    **Sample weights.** Counts become sums of weights and q_k the smallest value whose
    weighted CDF reaches k/d. Weights are summed exactly, in fixed point (integer
    multiples of a power of two, resolution n max(w) 2**-61), so that no decision
    depends on the order of the rows. Rows of zero weight are ignored when placing cut
    points, so they never create a bin; they are still coded. Equal positive weights
    give exactly the unweighted cut points, integer weights those of the rows repeated.
    The weighted path sorts with ``argsort`` and is a few times slower than the
    unweighted one.

    **Input.** X is a DataFrame or a 2-D array-like of numbers (bool and the pandas
    nullable integer, float and boolean dtypes included, ``pd.NA`` meaning missing).
    Values are compared in float64 (integers beyond 2**53 lose precision). ±inf is
    always an error.

    **Cost.** ``fit`` copies one column at a time (its non-missing values, as float64)
    and sorts it in place — NumPy's SIMD sort, measured several times faster than
    ``np.partition`` at the d − 1 ranks — then reads the candidates at their ranks;
    the distinct values are only computed when candidates collide. Bin counts come
    from the sorted column, so ``fit`` never codes the data. Coding is a Cython
    binary search over row blocks, reading X once whatever its memory order. Extra
    memory: one float64 column in ``fit`` (plus the int64 fixed-point weights when
    weighted), the codes in ``transform``; X is never copied as a whole.
    """

    #: binarizers pickled before this parameter existed read as the default
    min_bin_count: int = 1

    def __init__(
        self,
        n_bins: int | Sequence[int] = 50,
        method: str = "quantile",
        missing: str = "error",
        min_bin_count: int = 1,
    ) -> None:
        self.n_bins = n_bins
        self.method = method
        self.missing = missing
        self.min_bin_count = min_bin_count

    # -- public API -------------------------------------------------------------------
    def fit(self, X: Any, y: Any = None, sample_weight: Any = None) -> BinarizerCore:
        """Learn the cut points of every feature.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Numeric training features.
        y : None
            Ignored (scikit-learn's transformer signature).
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative row weights s_i; quantiles are those of the weighted
            distribution and ``bin_counts_`` are weighted.

        Returns
        -------
        Binarizer
            The fitted binarizer.
        """
        self._fit(X, sample_weight)
        return self

    def fit_transform(self, X: Any, y: Any = None, sample_weight: Any = None) -> np.ndarray:
        """Fit on X and return its codes.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Numeric training features.
        y : None
            Ignored (scikit-learn's transformer signature).
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative row weights.

        Returns
        -------
        ndarray of uint8 or uint16, shape (n_samples, n_features)
            The codes (a transposed view of the solver layout, see ``transform``).
        """
        cols, state = self._fit(X, sample_weight)
        return _code_all(cols, state).T

    def transform(self, X: Any) -> np.ndarray:
        """Bin codes of X in the sample-major shape.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Numeric features; a DataFrame is matched by column name when the
            binarizer was fitted on one (extra columns are ignored).

        Returns
        -------
        ndarray of uint8 or uint16, shape (n_samples, n_features)
            ``codes[i, j]`` is the level of row i in feature j. It is the transposed
            view of ``transform_codes(X)`` (Fortran-ordered; no copy).
        """
        return self.transform_codes(X).T

    def transform_codes(self, X: Any) -> np.ndarray:
        """Bin codes of X in the solver layout of design.md §3.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Numeric features; a DataFrame is matched by column name when the
            binarizer was fitted on one (extra columns are ignored).

        Returns
        -------
        ndarray of uint8 or uint16, shape (n_features, n_samples), C-contiguous
            Row j holds the codes of feature j. X is not copied: the extra memory is
            the codes, plus one converted column (or block of rows) when X is not
            float32/float64.
        """
        state = self._fitted_state()
        return _code_all(_columns_for_transform(X, state), state)

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """Names of the output columns: one code column per input feature.

        Parameters
        ----------
        input_features : array-like of str, optional
            Input feature names. Default: ``feature_names_in_`` when fitted on a
            DataFrame, else ``x0``, ``x1``, …; when given they must match those.

        Returns
        -------
        ndarray of object, shape (n_features_in_,)
            The output column names (the input names: a code replaces its feature).
        """
        state = self._fitted_state()
        names = state.names
        if input_features is None:
            if names is not None:
                return np.asarray(names, dtype=object)
            return np.asarray([f"x{j}" for j in range(state.p)], dtype=object)
        given = np.asarray(input_features, dtype=object)
        if given.ndim != 1 or len(given) != state.p:
            raise ValueError(
                f"input_features should have length equal to the number of features "
                f"({state.p}), got {given.shape[0] if given.ndim == 1 else given.shape}"
            )
        if names is not None and not np.array_equal(given, np.asarray(names, dtype=object)):
            raise ValueError("input_features is not equal to feature_names_in_")
        return given

    # -- fitting ----------------------------------------------------------------------
    def _fit(self, X: Any, sample_weight: Any) -> tuple[_Columns, _State]:
        method = _check_choice(self.method, "method", _METHODS)
        missing = _check_choice(self.missing, "missing", _MISSING)
        cols = _as_columns(X)
        n, p = cols.n_samples, cols.n_features
        if n == 0:
            raise ValueError("X has no rows: at least one sample is needed to fit.")
        n_bins = _check_n_bins(self.n_bins, p, missing)
        min_count = check_min_bin_count(self.min_bin_count)
        weights = _check_sample_weight(sample_weight, n)

        work = np.empty(n, dtype=np.float64)  # one column, reused for every feature
        edges, counts, has_nan = [], [], np.zeros(p, dtype=bool)
        for j in range(p):
            e, c, nan_count, any_nan = _fit_column(
                cols.get(j), weights, int(n_bins[j]), method, missing, work, cols.label(j),
                min_count,
            )
            has_nan[j] = any_nan
            edges.append(e)
            counts.append(np.append(c, nan_count) if any_nan else c)

        n_bins_ = np.array([len(e) + 1 + m for e, m in zip(edges, has_nan, strict=True)], np.int64)
        # published in one assignment: a transform racing this fit in another thread
        # codes with the old cut points or the new ones, never a mix
        publish_fitted(
            self,
            {
                "edges_": edges,
                "has_missing_level_": has_nan,
                "n_bins_": n_bins_,
                "bin_counts_": counts,
                "n_features_in_": p,
                "feature_names_in_": cols.names,
            },
        )
        return cols, _State(edges, has_nan, n_bins_, p, cols.names)

    # -- fitted state -----------------------------------------------------------------
    def _fitted_state(self) -> _State:
        """One validated snapshot of the fitted state (what coding reads, and only that).

        Coding writes each code into a uint8/uint16 array sized by ``n_bins_`` and the
        estimators gather ``coef_`` with it, so the cut points, the missing levels and
        ``n_bins_`` must agree: a modified or foreign pickle raises here instead.
        """
        return _State.of(fitted_snapshot(self))

    def _check_fitted(self) -> None:
        self._fitted_state()


class _State:
    """The fitted state of a ``Binarizer``, validated (see ``Binarizer._fitted_state``)."""

    __slots__ = ("edges", "has_missing", "n_bins", "p", "names")

    def __init__(self, edges, has_missing, n_bins, p, names) -> None:
        self.edges, self.has_missing, self.n_bins = edges, has_missing, n_bins
        self.p, self.names = p, names

    @classmethod
    def of(cls, attrs: dict[str, Any]) -> _State:
        if "edges_" not in attrs:
            raise not_fitted("Binarizer")
        p = attrs.get("n_features_in_")
        if isinstance(p, bool) or not isinstance(p, numbers.Integral) or p < 1:
            raise inconsistent(f"n_features_in_ is {p!r}")
        p = int(p)
        raw = attrs["edges_"]
        if not isinstance(raw, list | tuple) or len(raw) != p:
            raise inconsistent(f"edges_ is not a list of {p} arrays of cut points")
        edges = []
        for j, e in enumerate(raw):
            e = np.asarray(e)
            if e.ndim != 1 or e.dtype.kind not in "iuf":
                raise inconsistent(f"edges_[{j}] is not a 1-D array of numbers")
            edges.append(np.ascontiguousarray(e, dtype=np.float64))
        # finite and strictly increasing within each feature, in a few vectorised passes
        flat = np.concatenate(edges) if edges else np.empty(0)
        if flat.size:
            ok = np.isfinite(flat)
            step_ok = flat[1:] > flat[:-1]
            starts = np.cumsum([len(e) for e in edges])[:-1]  # first edge of features 1..
            starts = starts[(starts > 0) & (starts < flat.size)]
            step_ok[starts - 1] = True  # across two features: no order required
            if not (ok.all() and step_ok.all()):
                bad = int(np.flatnonzero(~ok)[0]) if not ok.all() else 1 + int(np.argmin(step_ok))
                j = int(np.searchsorted(np.cumsum([len(e) for e in edges]), bad, side="right"))
                raise inconsistent(f"edges_[{j}] is not finite and strictly increasing")
        has_missing = np.asarray(attrs.get("has_missing_level_"))
        if has_missing.shape != (p,) or has_missing.dtype.kind != "b":
            raise inconsistent(f"has_missing_level_ is not {p} booleans")
        n_bins = np.asarray(attrs.get("n_bins_"))
        expect = np.array([len(e) + 1 for e in edges], dtype=np.int64) + has_missing
        if n_bins.shape != (p,) or n_bins.dtype.kind not in "iu" or np.any(n_bins != expect):
            raise inconsistent(
                "n_bins_ does not match the cut points (len(edges_[j]) + 1, plus the missing level)"
            )
        if int(expect.max()) > MAX_LEVELS:
            raise inconsistent(f"a feature has more than {MAX_LEVELS} levels")
        names = attrs.get("feature_names_in_")
        if names is not None and len(names) != p:
            raise inconsistent(f"feature_names_in_ does not have {p} names")
        return cls(edges, has_missing.copy(), expect, p, names)


def _columns_for_transform(X: Any, state: _State) -> _Columns:
    names = state.names
    if isinstance(X, pd.DataFrame) and names is not None:
        cols = _as_columns(X, select=names)
    else:
        cols = _as_columns(X)
    if cols.n_features != state.p:
        raise ValueError(
            f"X has {cols.n_features} features, but Binarizer is expecting {state.p} "
            "features as input."
        )
    return cols


def _code_all(cols: _Columns, state: _State) -> np.ndarray:
    """Codes of every column of ``cols`` in the (n_features, n_samples) layout.

    Every code is below ``state.n_bins[j]`` by construction (a binary search over
    ``len(edges) = n_bins - 1 - has_missing`` cut points, or the missing code
    ``n_bins - 1``), and the output dtype holds ``max(n_bins)`` levels.
    """
    n, p = cols.n_samples, cols.n_features
    out = np.empty((p, n), dtype=code_dtype(int(state.n_bins.max())))
    if cols.matrix is None and cols.rows is None:  # DataFrame: column by column
        for j in range(p):
            x = cols.get(j)
            _, bad = bin_codes(x, state.edges[j], bool(state.has_missing[j]), out[j])
            if bad >= 0:
                _raise_bad_value(x[bad], cols.label(j), bad, fitted=True)
        return out
    # All cut points in one array, feature j's at edges[edge_ptr[j]:edge_ptr[j+1]].
    sizes = [len(e) for e in state.edges]
    edge_ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
    edges = np.concatenate(state.edges) if edge_ptr[-1] else np.empty(0)
    missing = np.where(state.has_missing, np.add(sizes, 1), -1).astype(np.intp)
    if cols.matrix is not None:  # float32/64: one kernel call, X read once
        blocks = [(0, n, cols.matrix)]
    else:  # other numbers: converted to float64 a block of rows at a time
        step = max(1, 2**20 // (8 * p))
        blocks = ((i0, min(i0 + step, n), None) for i0 in range(0, n, step))
    for i0, i1, block in blocks:
        block = cols.rows(i0, i1) if block is None else block
        bad, j = assign_codes_2d(block, edges, edge_ptr, missing, out[:, i0:i1])
        if bad >= 0:
            _raise_bad_value(block[bad, j], cols.label(j), i0 + bad, fitted=True)
    return out


def level_codes(
    values: Sequence[Any],
    isna: np.ndarray,
    levels: Sequence[Any],
    has_missing_level: bool,
    name: str,
    out: np.ndarray,
) -> np.ndarray:
    """Codes of a categorical column under its learned levels (``C()`` terms).

    The code of a value is its index in ``levels``; a missing value gets
    ``len(levels)`` when the term has a missing level. The formula layer's ``C()``
    replay and ``from_spec`` models both code through here. Errors name the column.

    Parameters
    ----------
    values : sequence
        The column's values (their missing entries are ignored).
    isna : ndarray of bool
        Which values are missing.
    levels : sequence
        The learned levels, in code order.
    has_missing_level : bool
        Whether the term has a level for missing values.
    name : str
        Column name for the messages.
    out : ndarray of integers
        Output buffer of the same length as ``values``; filled and returned.

    Returns
    -------
    ndarray
        ``out``.
    """
    lookup = {lvl: k for k, lvl in enumerate(levels)}
    unseen = []
    for i, (v, na) in enumerate(zip(values, isna, strict=True)):
        if na:
            if not has_missing_level:
                raise ValueError(
                    f"column '{name}' contains missing values but the model has no "
                    "missing level for it."
                )
            out[i] = len(levels)
            continue
        k = lookup.get(v)
        if k is None:
            unseen.append(v)
            continue
        out[i] = k
    if unseen:
        shown = sorted({str(u) for u in unseen})[:5]
        raise ValueError(
            f"column '{name}' has level(s) not seen when the model was fitted: {shown}; "
            f"known levels are {[str(lv) for lv in levels][:20]}."
        )
    return out


def bin_codes(
    x: np.ndarray, edges: np.ndarray, has_missing_level: bool, out: np.ndarray | None = None
) -> tuple[np.ndarray, int]:
    """Codes of one feature under learned cut points: the module's coding rule.

    ``code(x) = searchsorted(edges, x, side="left")``, and ``len(edges) + 1`` for NaN
    when the feature has a missing level. The ``Binarizer`` and the formula layer's
    ``bin()`` replay both code through here, so the rule lives in one place.

    Parameters
    ----------
    x : ndarray of shape (n,)
        Values of the feature (float32/float64 are read in place, other numbers are
        converted to float64).
    edges : ndarray of shape (m,)
        Strictly increasing interior cut points.
    has_missing_level : bool
        Whether NaN gets the code ``m + 1``; otherwise a NaN is a bad value.
    out : ndarray of uint8 or uint16, shape (n,), optional
        Receives the codes; by default a new array of the narrowest type holding the
        m + 1 (+ 1) levels.

    Returns
    -------
    codes : ndarray of uint8 or uint16, shape (n,)
        The codes (``out`` when given).
    bad : int
        -1 when every value was coded; else the index of the first ±inf, or NaN
        without a missing level, where coding stopped (``codes`` is then only partly
        written: the caller raises, naming the column).
    """
    x = np.asarray(x)
    if x.dtype not in (np.float32, np.float64) or not x.dtype.isnative:
        x = x.astype(np.float64)
    edges = np.ascontiguousarray(edges, dtype=np.float64)
    n_levels = edges.shape[0] + 1 + int(has_missing_level)
    if out is None:
        if n_levels > MAX_LEVELS:
            raise ValueError(f"{n_levels} levels do not fit uint16 codes (at most {MAX_LEVELS}).")
        out = np.empty(x.shape[0], dtype=code_dtype(n_levels))
    elif out.dtype not in (np.uint8, np.uint16) or n_levels > np.iinfo(out.dtype).max + 1:
        # a code that does not fit would wrap silently (and index the wrong level)
        raise ValueError(f"out of dtype {out.dtype} cannot hold the codes of {n_levels} levels.")
    missing_code = edges.shape[0] + 1 if has_missing_level else -1
    return out, int(assign_codes(x, edges, out, missing_code))


# =====================================================================================
# Validation and column access
# =====================================================================================


def _check_choice(value: Any, name: str, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}.")
    return value


def _check_n_bins(n_bins: Any, n_features: int, missing: str) -> np.ndarray:
    """Validate ``n_bins`` and return it as one int64 per feature."""

    def one(v: Any, where: str) -> int:
        return check_n_bins(v, f"n_bins{where}", missing)

    if isinstance(n_bins, str | bytes) or not np.iterable(n_bins):
        return np.full(n_features, one(n_bins, ""), dtype=np.int64)
    values = list(n_bins)
    if len(values) != n_features:
        raise ValueError(f"n_bins has {len(values)} entries but X has {n_features} features.")
    return np.array([one(v, f"[{j}]") for j, v in enumerate(values)], dtype=np.int64)


def _check_sample_weight(sample_weight: Any, n: int) -> tuple[np.ndarray, int] | None:
    w = check_sample_weight(sample_weight, n)
    return None if w is None else _fixed_point(w)


def _fixed_point(w: np.ndarray) -> tuple[np.ndarray, int]:
    """Weights as int64 multiples ``q`` of ``2**-shift``, with Σ q < 2**61.

    ``shift`` is fixed by max(w) and n only. Sums of ``q`` are exact, so the per-value
    and per-bin weights, and every decision taken on them, do not depend on the order
    of the rows (float sums would, in their last bits). The resolution is
    n max(w) 2**-61; a weight below half of it counts as zero. The binning is invariant
    to the scale of the weights, so w is first divided by 2**e ≥ max(w) (exactly, a
    power of two): one factor 2**(61 - e - bits(n)) would overflow for max(w) below
    ~1e-289 (or underflow for huge weights). Convert sums back with ``_from_fixed``.
    """
    _, e = np.frexp(w.max())  # max(w) < 2**e, n < 2**bit_length
    bits = 61 - int(w.shape[0]).bit_length()
    q = np.rint(np.ldexp(np.ldexp(w, -int(e)), bits)).astype(np.int64)
    return q, bits - int(e)


def _from_fixed(q_sum: Any, shift: int) -> Any:
    """Weights back from fixed-point sums: ``q_sum * 2**-shift`` (exact when normal)."""
    return np.ldexp(np.asarray(q_sum, dtype=np.float64), -shift)


class _Columns:
    """Column-by-column access to a validated 2-D input, without copying X.

    ``get(j)`` returns column j as a 1-D float32/float64 array: a view when possible
    (possibly strided), else a float64 copy of that one column. ``matrix`` is X itself
    when it is a float32/float64 ndarray (coded in one kernel call), and ``rows(i0,
    i1)`` converts a block of rows of another numeric ndarray to float64; both are None
    for DataFrames, whose columns are separate arrays.
    """

    def __init__(
        self,
        n_samples: int,
        n_features: int,
        names: np.ndarray | None,
        get: Any,
        label: Any,
        matrix: np.ndarray | None = None,
        rows: Any = None,
    ) -> None:
        self.n_samples = n_samples
        self.n_features = n_features
        self.names = names
        self.get = get
        self.label = label
        self.matrix = matrix
        self.rows = rows


def _as_columns(X: Any, select: np.ndarray | None = None) -> _Columns:
    """Validate X (types, shape) and wrap it for column access.

    ``select``: for a DataFrame, the column names to take, in this order (the names
    seen in fit); missing names raise, other columns are ignored.
    """
    if isinstance(X, pd.DataFrame):
        return _frame_columns(X, select)
    if isinstance(X, pd.Series) or getattr(X, "ndim", 2) == 1:
        raise ValueError(
            "X must be 2-D (n_samples, n_features), got a 1-D input. Reshape your data: "
            "X.reshape(-1, 1) (or a one-column DataFrame) for a single feature."
        )
    if _is_sparse(X):
        raise TypeError(
            "Sparse input is not supported: the binarizer needs the raw numeric "
            "features; pass a dense array (X.toarray())."
        )
    arr = X if isinstance(X, np.ndarray) else np.asarray(X)
    if arr.dtype.kind in "US" and not isinstance(X, np.ndarray):
        arr = np.asarray(X, dtype=object)  # locate the offending column of a list
    if arr.ndim != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features), got {arr.ndim}-D.")
    n, p = arr.shape
    if p == 0:
        raise ValueError(_NO_FEATURES.format(shape=arr.shape))
    kind = arr.dtype.kind

    def label(j: int) -> str:
        return f"column {j}"

    if kind in "mM":
        raise TypeError(
            f"{label(0)} has dtype {arr.dtype}: datetimes/timedeltas are not numbers; "
            "convert them first (e.g. to days since a reference date)."
        )
    if kind == "c":
        raise ValueError(
            f"Complex data not supported: {label(0)} has dtype {arr.dtype}; the binarizer "
            "takes real numbers."
        )
    if kind in "USV":
        raise TypeError(
            f"{label(0)} has non-numeric dtype {arr.dtype}; the binarizer takes real numbers."
        )
    if kind == "O":
        # numbers only (text refused by column); None, NaN and pd.NA are missing values
        cols = [as_real_array(arr[:, j], label(j)) for j in range(p)]
        return _Columns(n, p, None, lambda j: cols[j], label)
    if kind == "f" and arr.dtype.itemsize in (4, 8) and arr.dtype.isnative:
        return _Columns(n, p, None, lambda j: arr[:, j], label, matrix=arr)
    # bool, integers, float16, non-native byte order
    return _Columns(
        n,
        p,
        None,
        lambda j: arr[:, j].astype(np.float64),
        label,
        rows=lambda i0, i1: arr[i0:i1].astype(np.float64),
    )


_NO_FEATURES = "Found array with 0 feature(s) (shape={shape}) while a minimum of 1 is required."


def _is_sparse(X: Any) -> bool:
    try:
        import scipy.sparse as sp
    except ImportError:  # pragma: no cover
        return False
    return sp.issparse(X)


def _frame_columns(X: pd.DataFrame, select: np.ndarray | None) -> _Columns:
    columns = X.columns
    if select is None:
        if not columns.is_unique:
            dup = columns[columns.duplicated()].unique().tolist()
            raise ValueError(f"X has duplicated column names {dup}; names must be unique.")
        positions = np.arange(len(columns))
        names = np.asarray(columns, dtype=object)
    else:
        missing = [name for name in select if name not in columns]
        if missing:
            raise ValueError(
                f"X lacks column(s) {missing} seen in fit (columns are matched by name)."
            )
        positions = []
        for name in select:
            loc = columns.get_loc(name)
            if not isinstance(loc, numbers.Integral):
                raise ValueError(f"column {name!r} appears more than once in X.")
            positions.append(int(loc))
        positions = np.asarray(positions, dtype=np.intp)
        names = np.asarray(select, dtype=object)
    if len(positions) == 0:
        raise ValueError(_NO_FEATURES.format(shape=X.shape))

    def label(j: int) -> str:
        return f"column {names[j]!r}"

    readers = [_series_reader(X.dtypes.iloc[pos], label(j)) for j, pos in enumerate(positions)]

    def get(j: int) -> np.ndarray:
        return readers[j](X.iloc[:, positions[j]])

    return _Columns(len(X), len(positions), names, get, label)


def _series_reader(dtype: Any, label: str) -> Any:
    """Check a DataFrame column's dtype; return the function that reads it as floats."""
    if isinstance(dtype, pd.CategoricalDtype):
        raise TypeError(
            f"{label} is categorical: bins are for continuous features. Encode it as a "
            "factor (one level per category) instead, or pass numeric codes explicitly "
            "(e.g. X[col].cat.codes) if the categories are ordered."
        )
    if is_datetime_like(dtype):
        raise TypeError(
            f"{label} has datetime-like dtype {dtype}; convert it to a number first, "
            "e.g. (X[col] - reference).dt.days or X[col].dt.year."
        )
    if isinstance(dtype, np.dtype) and dtype.kind == "O":
        # an object column is read as an object ndarray is: real numbers (and missing
        # values) only, text refused by column
        return lambda s: as_real_array(s.to_numpy(), label)
    kind = getattr(dtype, "kind", "O")
    numeric = pd.api.types.is_bool_dtype(dtype) or (
        pd.api.types.is_numeric_dtype(dtype) and kind != "c"
    )
    if not numeric:
        raise TypeError(
            f"{label} has non-numeric dtype {dtype}; the binarizer takes real numbers "
            "(convert with pd.to_numeric, or encode categories as factors)."
        )
    if isinstance(dtype, np.dtype) and kind == "f" and dtype.itemsize in (4, 8):
        return lambda s: s.to_numpy()
    return lambda s: s.to_numpy(dtype=np.float64, na_value=np.nan)


def date_levels(values: Any) -> Any:
    """Dates and times as the ISO 8601 text a categorical level is (missing kept).

    Each value on its own (so training and new data agree): ``"2024-01-31"`` for a
    time-zone-naive date at midnight, else ``Timestamp.isoformat()``
    (``"2024-01-31T12:30:00"``, ``"2024-01-31T00:00:00+01:00"``). ``C(t)`` on a
    ``datetime64`` column has these levels (labels, summary, ``to_spec``), and a CSV
    column of the same dates, read as text, matches them.

    Parameters
    ----------
    values : Series of datetime64 dtype (naive or tz-aware)
        The column.

    Returns
    -------
    Series of object
        ISO strings, NaN where the value is missing (NaT).
    """
    s = pd.Series(values)
    out = pd.Series(np.full(len(s), np.nan, dtype=object), index=s.index)
    ok = s.notna().to_numpy()
    if ok.any():
        v = s[ok]
        iso = v.map(lambda t: t.isoformat()).astype(object)
        if getattr(v.dt, "tz", None) is None:
            midnight = (v == v.dt.normalize()).to_numpy()
            iso[midnight] = v[midnight].dt.strftime("%Y-%m-%d").astype(object)
        out[ok] = iso.to_numpy(dtype=object)
    return out


def is_datetime_like(dtype: Any) -> bool:
    """Datetimes (tz-aware too), timedeltas and periods: ordered, but not numbers."""
    return getattr(dtype, "kind", "O") in "mM" or isinstance(dtype, pd.PeriodDtype)


def _raise_bad_value(value: float, label: str, row: int, fitted: bool = False) -> None:
    if np.isnan(value):
        if fitted:
            raise ValueError(
                f"{label} has a missing value (NaN) at row {row}, but it had none in "
                "training, so it has no missing level. Impute it, or refit with "
                'missing="separate" on data that contains missing values.'
            )
        raise ValueError(
            f"{label} has a missing value (NaN) at row {row}. Impute it, or use "
            'missing="separate" to give missing values a level of their own.'
        )
    raise ValueError(f"{label} has an infinite value ({value}) at row {row}.")


# =====================================================================================
# Cut points of one column
# =====================================================================================


def _fit_column(
    x: np.ndarray,
    weights: tuple[np.ndarray, int] | None,
    n_bins: int,
    method: str,
    missing: str,
    work: np.ndarray,
    label: str,
    min_count: int = 1,
) -> tuple[np.ndarray, np.ndarray, float, bool]:
    """Cut points and chain-bin counts of one column, plus its missing-value summary.

    Returns ``(edges, counts, nan_count, any_nan)`` with ``counts`` the (weighted)
    count of every chain bin and ``nan_count`` that of the missing rows. With
    ``min_count`` > 1, bins holding fewer rows are merged into a neighbour
    (:func:`_merge_small_bins`).
    """
    n_valid, first_inf = compact_column(x, work)
    if first_inf >= 0:
        _raise_bad_value(x[first_inf], label, first_inf)
    any_nan = n_valid < x.shape[0]
    if any_nan and missing == "error":
        _raise_bad_value(np.nan, label, int(np.flatnonzero(np.isnan(x))[0]))
    valid = work[:n_valid]

    if weights is not None:
        q, shift = weights
        nan = np.isnan(x) if any_nan else np.zeros(x.shape[0], dtype=bool)
        keep = (q > 0) & ~nan
        qk = q[keep]
        if qk.size == 0:
            raise ValueError(f"{label} has no non-missing value with a positive weight.")
        xw = np.asarray(x[keep], dtype=np.float64) + 0.0
        nan_weight = float(_from_fixed(q[nan].sum(), shift))
        if qk.min() == qk.max():  # equal weights: exactly the unweighted rule, scaled
            xs = np.sort(xw)
            edges, counts = _fit_sorted(xs, n_bins, method)
            edges, counts, _ = _merge_small_bins(edges, counts, counts, min_count)
            return edges, _from_fixed(counts * qk[0], shift), nan_weight, any_nan
        values, sums = _weighted_unique(xw, qk)
        edges = _edges_from_counts(values, sums, n_bins, method)
        fixed = _bin_sums(values, sums, edges)
        if min_count > 1:
            rows = np.diff(np.searchsorted(np.sort(xw), edges, side="right"), prepend=0,
                           append=xw.shape[0])  # fmt: skip
            edges, rows, fixed = _merge_small_bins(edges, rows, fixed, min_count)
        return edges, _from_fixed(fixed, shift), nan_weight, any_nan

    if n_valid == 0:
        raise ValueError(f"{label} has no non-missing value: no cut point can be placed.")
    valid.sort()
    edges, counts = _fit_sorted(valid, n_bins, method)
    edges, counts, _ = _merge_small_bins(edges, counts, counts, min_count)
    return edges, counts, x.shape[0] - n_valid, any_nan


def _merge_small_bins(
    edges: np.ndarray, rows: np.ndarray, counts: np.ndarray, min_count: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Merge every bin holding fewer than ``min_count`` rows into a neighbour.

    LightGBM's ``min_data_in_bin``: repeatedly, the smallest bin (the lowest one among
    equals) is merged with its smaller neighbour (the upper one among equals) by
    removing the edge between them, until every bin holds ``min_count`` rows or one bin
    is left. ``rows`` are the row counts of the bins, ``counts`` what is reported
    (rows or weights; merged bins add up). Deterministic, a function of the counts.
    """
    if min_count <= 1 or edges.shape[0] == 0 or rows.min() >= min_count:
        return edges, rows, counts
    edges, rows, counts = list(edges), [int(r) for r in rows], list(counts)
    while len(rows) > 1 and min(rows) < min_count:
        i = int(np.argmin(rows))
        if i == 0:
            j = 1
        elif i == len(rows) - 1:
            j = i - 1
        else:
            j = i - 1 if rows[i - 1] < rows[i + 1] else i + 1
        lo = min(i, j)
        rows[lo : lo + 2] = [rows[lo] + rows[lo + 1]]
        counts[lo : lo + 2] = [counts[lo] + counts[lo + 1]]
        del edges[lo]
    return (np.asarray(edges, dtype=np.float64), np.asarray(rows, dtype=np.int64),
            np.asarray(counts))  # fmt: skip


def _fit_sorted(s: np.ndarray, n_bins: int, method: str) -> tuple[np.ndarray, np.ndarray]:
    """Cut points and bin counts from the sorted non-missing values ``s``."""
    if method == "quantile":
        edges = _quantile_edges_sorted(s, n_bins)
    else:
        edges = _uniform_edges(s, n_bins)
    below = np.searchsorted(s, edges, side="right")
    return edges, np.diff(below, prepend=0, append=s.shape[0]).astype(np.int64)


def _edges_from_counts(
    values: np.ndarray, counts: np.ndarray, n_bins: int, method: str
) -> np.ndarray:
    if method == "quantile":
        return values[_tie_aware_cuts(counts, n_bins)]
    return _uniform_edges(values, n_bins)


def _bin_sums(values: np.ndarray, counts: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Total count of every bin, from distinct values and their counts."""
    cum = np.concatenate([[0], np.cumsum(counts)])
    below = np.searchsorted(values, edges, side="right")
    return np.diff(cum[np.concatenate([[0], below, [values.shape[0]]])])


def _quantile_positions(n: int, n_bins: int) -> np.ndarray:
    """0-based ranks ⌈k n / d⌉ − 1, k = 1..d−1, of the candidate quantile cut points.

    Parameters
    ----------
    n : int
        Number of non-missing values.
    n_bins : int
        Number of bins d.

    Returns
    -------
    ndarray of int64, shape (d − 1,)
    """
    k = np.arange(1, n_bins, dtype=np.int64)
    return (k * n + n_bins - 1) // n_bins - 1


def _quantile_edges_sorted(s: np.ndarray, n_bins: int) -> np.ndarray:
    """Quantile cut points of the sorted values ``s`` (fast path, then tie-aware).

    The fast path reads the d − 1 candidates at their ranks and accepts them when they
    are distinct and below the maximum; it skips the pass that finds distinct values.
    It is the same function as ``_tie_aware_cuts`` on the distinct values (tested).
    """
    n = s.shape[0]
    if n >= n_bins:  # with fewer rows than bins the ranks collide
        candidates = s[_quantile_positions(n, n_bins)]
        if np.all(candidates[1:] > candidates[:-1]) and candidates[-1] < s[-1]:
            return candidates
    values, counts = _unique_counts(s)
    return values[_tie_aware_cuts(counts, n_bins)]


def _unique_counts(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct values of the sorted ``s`` and their counts (no re-sort, unlike np.unique)."""
    starts = _run_starts(s)
    return s[starts], np.diff(starts, append=s.shape[0]).astype(np.int64)


def _run_starts(s: np.ndarray) -> np.ndarray:
    """Index of the first element of every run of equal values of the sorted ``s``."""
    first = np.empty(s.shape[0], dtype=bool)
    first[0] = True
    np.not_equal(s[1:], s[:-1], out=first[1:])
    return np.flatnonzero(first)


def _weighted_unique(x: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct values of ``x`` and the sum of the fixed-point weights ``q`` of each.

    The sums are of integers, hence exact whatever the order of the rows.
    """
    order = np.argsort(x)
    xs, qs = x[order], q[order]
    starts = _run_starts(xs)
    if starts.shape[0] == xs.shape[0]:  # no ties
        return xs, qs
    return xs[starts], np.add.reduceat(qs, starts)


def _quantile_indices(cum: np.ndarray, n_bins: int) -> np.ndarray:
    """Index of the first distinct value whose cumulative count reaches k/d of the total.

    Exact integer arithmetic: cum ≥ ⌈k T / d⌉, with ⌈k T / d⌉ = k q + ⌈k r / d⌉ for
    T = q d + r, which cannot overflow int64 for T < 2**62.
    """
    k = np.arange(1, n_bins, dtype=np.int64)
    q, r = divmod(int(cum[-1]), n_bins)
    targets = k * q + (k * r + n_bins - 1) // n_bins
    return np.searchsorted(cum, targets, side="left")


def _tie_aware_cuts(counts: np.ndarray, n_bins: int) -> np.ndarray:
    """Cut indices into the distinct values: bin boundaries after values ``cuts``.

    ``counts`` (int64) are the counts, or fixed-point weights, of the sorted distinct
    values v_0 < … < v_{m−1}; the cut points are ``v[cuts]``. Implements the rule of
    the ``Binarizer`` Notes: type-1 quantiles when ties leave them distinct, else big
    values in bins of their own, the other runs sharing the remaining bins
    (recursively). Returns
    min(d, m) − 1 strictly increasing indices, all < m − 1.
    """
    m = counts.shape[0]
    if m <= n_bins:
        return np.arange(m - 1)
    if n_bins == 1:
        return np.arange(0)
    cum = np.cumsum(counts)
    idx = _quantile_indices(cum, n_bins)
    if np.all(idx[1:] > idx[:-1]) and idx[-1] < m - 1:
        return idx

    big = _big_values(counts, n_bins)
    rest_bins = n_bins - int(big.sum())
    # Runs of non-big values: [starts[r], stops[r]).
    steps = np.diff(np.concatenate([[0], (~big).astype(np.int8), [0]]))
    starts, stops = np.flatnonzero(steps == 1), np.flatnonzero(steps == -1)
    mass = np.array([counts[a:b].sum() for a, b in zip(starts, stops, strict=True)])
    share = _apportion(mass, stops - starts, rest_bins)

    items = sorted([(int(a), r) for r, a in enumerate(starts)] +
                   [(int(i), -1) for i in np.flatnonzero(big)])  # fmt: skip
    ends: list[int] = []
    for pos, r in items:
        if r < 0:  # a big value: a bin of its own (plus an empty-handed run before it)
            ends.append(pos)
        elif share[r] > 0:
            a, b = pos, int(stops[r])
            ends.extend((a + _tie_aware_cuts(counts[a:b], int(share[r]))).tolist())
            ends.append(b - 1)
    if ends[-1] != m - 1:  # a top run without a bin joins the last bin
        ends[-1] = m - 1
    return np.asarray(ends[:-1], dtype=np.intp)


def _big_values(counts: np.ndarray, n_bins: int) -> np.ndarray:
    """Values whose count reaches the mean bin size of what is left (fixed point)."""
    big = np.zeros(counts.shape[0], dtype=bool)
    rest_bins, rest_mass = n_bins, counts.sum()
    while True:
        new = ~big & (counts >= rest_mass / rest_bins)
        k = int(new.sum())
        # With more distinct values than bins k < rest_bins always holds (a sum of
        # k >= rest_bins counts each >= the mean would exceed the rest); the guard
        # protects against the rounding of the float mean.
        if k == 0 or k >= rest_bins:
            return big
        big |= new
        rest_bins -= k
        rest_mass = rest_mass - counts[new].sum()


def _apportion(mass: np.ndarray, capacity: np.ndarray, n_bins: int) -> np.ndarray:
    """Share ``n_bins`` among runs by mass: Sainte-Laguë, at most ``capacity`` each.

    Each bin goes to the run with the largest mass / (bins so far + 1/2); ties go to
    the leftmost run, so the result is deterministic.
    """
    share = np.zeros(mass.shape[0], dtype=np.int64)
    heap = [(-2.0 * float(mass[r]), r) for r in range(mass.shape[0]) if capacity[r] > 0]
    heapq.heapify(heap)
    for _ in range(n_bins):
        if not heap:
            break
        _, r = heapq.heappop(heap)
        share[r] += 1
        if share[r] < capacity[r]:
            heapq.heappush(heap, (-float(mass[r]) / (share[r] + 0.5), r))
    return share


def _uniform_edges(s: np.ndarray, n_bins: int) -> np.ndarray:
    """Equal-width cut points over [min, max] of the sorted ``s``, empty bins merged.

    An empty bin k = (e_{k−1}, e_k] loses its upper cut point and so joins the next
    bin; the last bin always holds the maximum, so every merged bin is non-empty.
    """
    lo, hi = float(s[0]), float(s[-1])
    if lo == hi:
        return np.empty(0)
    t = np.arange(1, n_bins) / n_bins
    width = hi - lo
    e = lo + width * t if np.isfinite(width) else lo * (1.0 - t) + hi * t
    e = np.unique(e[(e >= lo) & (e < hi)])  # rounding can repeat or reach hi
    below = np.searchsorted(s, e, side="right")
    nonempty = np.diff(below, prepend=0) > 0
    return e[nonempty]


# =====================================================================================
# NumPy reference twins of the kernels in _binning.pyx
# =====================================================================================


def _assign_codes_reference(
    x: np.ndarray, edges: np.ndarray, out: np.ndarray, missing_code: int
) -> int:
    """NumPy twin of ``_binning.assign_codes`` (same arguments, same return value)."""
    x = np.asarray(x, dtype=np.float64)
    bad = np.isinf(x) | (np.isnan(x) & (missing_code < 0))
    first = int(np.argmax(bad)) if bad.any() else -1
    stop = x.shape[0] if first < 0 else first
    codes = np.searchsorted(edges, x[:stop], side="left")
    codes[np.isnan(x[:stop])] = missing_code
    out[:stop] = codes
    return first


def _assign_codes_2d_reference(
    X: np.ndarray,
    edges: np.ndarray,
    edge_ptr: np.ndarray,
    missing_code: np.ndarray,
    out: np.ndarray,
) -> tuple[int, int]:
    """NumPy twin of ``_binning.assign_codes_2d``, up to which bad value is reported.

    The kernel reports the first bad value in its row-block order, this twin the first
    in column order; both return (-1, -1) exactly when there is none.
    """
    for j in range(X.shape[1]):
        e = edges[edge_ptr[j] : edge_ptr[j + 1]]
        bad = _assign_codes_reference(X[:, j], e, out[j], int(missing_code[j]))
        if bad >= 0:
            return bad, j
    return -1, -1


def _compact_column_reference(x: np.ndarray, out: np.ndarray) -> tuple[int, int]:
    """NumPy twin of ``_binning.compact_column`` (same arguments, same return value)."""
    x = np.asarray(x, dtype=np.float64)
    inf = np.flatnonzero(np.isinf(x))
    first_inf = int(inf[0]) if inf.size else -1
    head = x if first_inf < 0 else x[:first_inf]
    kept = head[~np.isnan(head)] + 0.0
    out[: kept.shape[0]] = kept
    return kept.shape[0], first_inf
