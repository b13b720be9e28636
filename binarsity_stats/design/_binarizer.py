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

Layout: this module holds the estimator and the NumPy reference twins of the Cython
kernels of ``_binning.pyx``; input validation and column access (never a full float copy
of X) are in ``_column_access.py``, the cut-point rules (pure functions of sorted values)
in ``_cuts.py``.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..core._base import fitted_snapshot, inconsistent, not_fitted, publish_fitted
from ..core._validation import check_min_bin_count, code_dtype
from ..kernels._binning import assign_codes, assign_codes_2d
from ._column_access import (
    as_columns,
    _check_choice,
    check_binarizer_n_bins,
    _check_sample_weight,
    _Columns,
    raise_bad_value,
)
from ._cuts import _fit_column

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
        return code_all(cols, state).T

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
        return code_all(columns_for_transform(X, state), state)

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
        cols = as_columns(X)
        n, p = cols.n_samples, cols.n_features
        if n == 0:
            raise ValueError("X has no rows: at least one sample is needed to fit.")
        n_bins = check_binarizer_n_bins(self.n_bins, p, missing)
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


def columns_for_transform(X: Any, state: _State) -> _Columns:
    names = state.names
    if isinstance(X, pd.DataFrame) and names is not None:
        cols = as_columns(X, select=names)
    else:
        cols = as_columns(X)
    if cols.n_features != state.p:
        raise ValueError(
            f"X has {cols.n_features} features, but Binarizer is expecting {state.p} "
            "features as input."
        )
    return cols


def code_all(cols: _Columns, state: _State) -> np.ndarray:
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
                raise_bad_value(x[bad], cols.label(j), bad, fitted=True)
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
            raise_bad_value(block[bad, j], cols.label(j), i0 + bad, fitted=True)
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
