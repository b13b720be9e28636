"""The data side of fits on Dask collections: mergeable binning and codes per partition.

Nothing here imports dask at module level (``import binarsity_stats`` stays light); the
functions that build task graphs import it when called.

**Binning from mergeable summaries.** A ``bin()`` feature's cut points depend on the
training values only through their distinct values and the (weighted) count of each
(``Binarizer`` Notes: the rule is a function of the multiset of values). So each
partition sends :class:`ValueSummary` — its distinct values with their row counts and
their weights in the Binarizer's exact fixed point — and summaries merge by adding the
counts of equal values. While the merged feature has at most ``max_distinct`` distinct
values (:data:`MAX_DISTINCT`, 100,000: ages, amounts in cents, ratings, counts), the
cut points, bin counts, missing level and ``min_count`` merges are *identical* to those
of the in-memory ``Binarizer`` on the concatenated data, whatever the partitioning.

Beyond that bound the summary becomes a *quantile sketch*: the distinct values are
thinned to at most ``sketch_size`` (:data:`SKETCH_SIZE`, 16,384) kept values, each
carrying the mass of the dropped values just below it. One thinning moves any
value's rank (its cumulative mass) by less than M / k (M the mass of the thinned
summary, k the sketch size): the mass between two kept values is below one k-th.
Merging adds the errors, so after thinning at L levels of the merge tree the rank of
every value is off by at most L · M / k, i.e. a cut point's quantile level is within
``rank_error`` (= L / k, stored on the summary, 6.1e-5 per level at the default) of
the exact one; with 50 bins (2% of the mass each) that is far below a bin's width.
The sketch keeps the exact minimum and maximum. Its cut points are those of the
Binarizer rule applied to the sketch (ties, big values and the Sainte-Laguë sharing
work on it unchanged); ``min_count`` merges use the sketch's approximate row counts.

**Codes per partition.** :class:`DaskDesign` is the solver's view: per partition a
dict with the codes (p, n_i) (uint8/uint16, block-major as ``BinnedDesign.codes``),
the dense columns, y, weights and offset, plus the block layout (``block_ptr``,
``kinds``) and the row count.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._binarizer import _bin_sums, _merge_small_bins, _tie_aware_cuts

#: Largest number of distinct values of a feature binned exactly (beyond: a sketch).
MAX_DISTINCT = 100_000
#: Values kept by one thinning of a quantile sketch (rank error 1 / SKETCH_SIZE per level).
SKETCH_SIZE = 16_384
#: Summaries merged per node of the reduction tree.
SPLIT_EVERY = 8


def is_dask_collection(obj: Any) -> bool:
    """Whether ``obj`` is a Dask collection (DataFrame, Series, Array), without importing dask.

    Parameters
    ----------
    obj : object
        Anything.

    Returns
    -------
    bool
    """
    module = type(obj).__module__ or ""
    return module.split(".")[0] == "dask" and hasattr(obj, "__dask_graph__")


# =====================================================================================
# Fixed-point weights (the Binarizer's, with the shift fixed by the whole data)
# =====================================================================================


def fixed_point_shift(n_rows: int, max_weight: float) -> tuple[int, int]:
    """``(e, bits)`` of the Binarizer's fixed point for ``n_rows`` rows of max weight.

    ``_binarizer._fixed_point`` computes ``q = rint(w / 2**e * 2**bits)`` with ``e`` the
    exponent of max(w) and ``bits = 61 - bit_length(n)``; fixing them from the whole
    data's n and max(w) makes every partition's q identical to the in-memory ones.

    Parameters
    ----------
    n_rows : int
        Rows of the whole data (missing values included).
    max_weight : float
        The largest weight.

    Returns
    -------
    tuple of int
    """
    _, e = np.frexp(float(max_weight))
    return int(e), 61 - int(n_rows).bit_length()


def to_fixed(w: np.ndarray, shift: tuple[int, int]) -> np.ndarray:
    """Weights as int64 multiples of the fixed-point unit (see :func:`fixed_point_shift`)."""
    e, bits = shift
    return np.rint(np.ldexp(np.ldexp(np.asarray(w, dtype=np.float64), -e), bits)).astype(np.int64)


# =====================================================================================
# Mergeable summary of one numeric feature
# =====================================================================================


@dataclass
class ValueSummary:
    """Distinct values of a feature with their counts: exact, or a quantile sketch.

    Attributes
    ----------
    values : ndarray of float64
        Strictly increasing values (all distinct non-missing values when exact).
    rows : ndarray of int64
        Rows holding each value (zero-weight rows included).
    rows_pos : ndarray of int64
        Rows of positive weight holding each value.
    mass : ndarray of int64
        Fixed-point weight of each value (``rows_pos`` when unweighted).
    exact : bool
        Whether the summary holds every distinct value.
    rank_error : float
        Bound on the error of any value's cumulative mass, as a fraction of the total.
    nan_rows : int
        Missing rows.
    vmin, vmax : float
        Smallest and largest non-missing value (NaN when none).
    qmin, qmax : int
        Smallest and largest positive fixed-point weight (-1 when none or unweighted).
    """

    values: np.ndarray
    rows: np.ndarray
    rows_pos: np.ndarray
    mass: np.ndarray
    exact: bool = True
    rank_error: float = 0.0
    nan_rows: int = 0
    vmin: float = np.nan
    vmax: float = np.nan
    qmin: int = -1
    qmax: int = -1
    levels: int = field(default=0)  # thinning levels behind rank_error

    @classmethod
    def of(
        cls,
        x: np.ndarray,
        q: np.ndarray | None = None,
        max_distinct: int = MAX_DISTINCT,
        sketch_size: int = SKETCH_SIZE,
    ) -> ValueSummary:
        """Summary of one partition's values ``x`` (float, NaN = missing).

        Parameters
        ----------
        x : ndarray of shape (n,)
            Values; ±inf must have been refused by the caller.
        q : ndarray of int64, shape (n,), optional
            Fixed-point weights (:func:`to_fixed`).
        max_distinct, sketch_size : int
            Beyond ``max_distinct`` distinct values the summary is thinned to a sketch.

        Returns
        -------
        ValueSummary
        """
        x = np.asarray(x, dtype=np.float64)
        nan = np.isnan(x)
        keep = ~nan
        xv = x[keep] + 0.0  # -0.0 → 0.0, as the Binarizer compares values
        order = np.argsort(xv, kind="stable")
        xs = xv[order]
        if xs.size == 0:
            empty_f, empty_i = np.empty(0), np.empty(0, dtype=np.int64)
            return cls(empty_f, empty_i, empty_i, empty_i, nan_rows=int(nan.sum()))
        first = np.empty(xs.size, dtype=bool)
        first[0] = True
        np.not_equal(xs[1:], xs[:-1], out=first[1:])
        starts = np.flatnonzero(first)
        values = xs[starts]
        rows = np.diff(starts, append=xs.size).astype(np.int64)
        qmin = qmax = -1
        if q is None:
            rows_pos, mass = rows, rows
        else:
            qs = np.asarray(q, dtype=np.int64)[keep][order]
            pos = qs > 0
            rows_pos = np.add.reduceat(pos.astype(np.int64), starts)
            mass = np.add.reduceat(qs, starts)
            positive = np.asarray(q, dtype=np.int64)
            positive = positive[positive > 0]
            if positive.size:
                qmin, qmax = int(positive.min()), int(positive.max())
        out = cls(values, rows, rows_pos, mass, nan_rows=int(nan.sum()),
                  vmin=float(values[0]), vmax=float(values[-1]), qmin=qmin, qmax=qmax)  # fmt: skip
        if values.size > max_distinct:
            out = out.thinned(sketch_size)
        return out

    @property
    def total_mass(self) -> int:
        """Total fixed-point weight (rows of positive weight when unweighted)."""
        return int(self.mass.sum())

    def thinned(self, k: int) -> ValueSummary:
        """A sketch of at most about ``k`` values; adds 1 / k to ``rank_error``.

        Kept: the first value of positive mass reaching each multiple of M / k in
        cumulative mass, plus the first and last such value; every kept value carries
        the mass (and rows) of the values dropped just below it.
        """
        live = self.mass > 0
        values, mass = self.values[live], self.mass[live]
        rows, rows_pos = self.rows[live], self.rows_pos[live]
        if values.size <= k:
            return ValueSummary(values, rows, rows_pos, mass, exact=False,
                                rank_error=self.rank_error, nan_rows=self.nan_rows,
                                vmin=self.vmin, vmax=self.vmax, qmin=self.qmin,
                                qmax=self.qmax, levels=self.levels)  # fmt: skip
        cum = np.cumsum(mass)
        total = int(cum[-1])
        j = np.arange(1, k + 1, dtype=np.float64)
        targets = np.ceil(j * (total / k)).astype(np.int64)
        idx = np.unique(np.concatenate([[0, values.size - 1],
                                        np.searchsorted(cum, targets, side="left")]))  # fmt: skip
        idx = idx[idx < values.size]
        bounds = np.concatenate([[0], idx[:-1] + 1])

        def add(a: np.ndarray) -> np.ndarray:
            return np.add.reduceat(a, bounds)

        return ValueSummary(values[idx], add(rows), add(rows_pos), add(mass), exact=False,
                            rank_error=self.rank_error + 1.0 / k, nan_rows=self.nan_rows,
                            vmin=self.vmin, vmax=self.vmax, qmin=self.qmin, qmax=self.qmax,
                            levels=self.levels + 1)  # fmt: skip

    @staticmethod
    def merge(
        parts: list[ValueSummary],
        max_distinct: int = MAX_DISTINCT,
        sketch_size: int = SKETCH_SIZE,
    ) -> ValueSummary:
        """Merge summaries: add the counts of equal values (exact while it fits the bound).

        Parameters
        ----------
        parts : list of ValueSummary
            Summaries of disjoint sets of rows.
        max_distinct, sketch_size : int
            As in :meth:`of`.

        Returns
        -------
        ValueSummary
        """
        parts = [p for p in parts if p is not None]
        values = np.concatenate([p.values for p in parts])
        order = np.argsort(values, kind="stable")
        xs = values[order]
        exact = all(p.exact for p in parts)
        err = max((p.rank_error for p in parts), default=0.0)
        levels = max((p.levels for p in parts), default=0)
        qs = [p for p in parts if p.qmin >= 0]
        qmin = min((p.qmin for p in qs), default=-1)
        qmax = max((p.qmax for p in qs), default=-1)
        vmin = np.nanmin([p.vmin for p in parts]) if any(p.values.size for p in parts) else np.nan
        vmax = np.nanmax([p.vmax for p in parts]) if any(p.values.size for p in parts) else np.nan
        nan_rows = sum(p.nan_rows for p in parts)
        if xs.size == 0:
            e = np.empty(0, dtype=np.int64)
            return ValueSummary(np.empty(0), e, e, e, exact, err, nan_rows, vmin, vmax, qmin,
                                qmax, levels)  # fmt: skip
        first = np.empty(xs.size, dtype=bool)
        first[0] = True
        np.not_equal(xs[1:], xs[:-1], out=first[1:])
        starts = np.flatnonzero(first)

        def add(name: str) -> np.ndarray:
            return np.add.reduceat(np.concatenate([getattr(p, name) for p in parts])[order],
                                   starts)  # fmt: skip

        out = ValueSummary(xs[starts], add("rows"), add("rows_pos"), add("mass"), exact, err,
                           nan_rows, float(vmin), float(vmax), qmin, qmax, levels)  # fmt: skip
        if out.values.size > max_distinct or (not exact and out.values.size > 2 * sketch_size):
            out = out.thinned(sketch_size)
        return out


def cuts_from_summary(
    s: ValueSummary, n_bins: int, min_count: int = 1, weighted: bool = False, label: str = "x"
) -> tuple[np.ndarray, np.ndarray]:
    """Interior cut points and chain-bin row counts by the Binarizer's quantile rule.

    With an exact summary the cut points are those of
    ``Binarizer(n_bins, min_bin_count=min_count).fit`` on the summarised rows (same
    weights) — the function of the distinct values and their counts that the
    Binarizer computes, including its equal-weights shortcut.

    Parameters
    ----------
    s : ValueSummary
        The merged summary of the feature.
    n_bins : int
        Largest number of chain bins.
    min_count : int, default=1
        ``min_bin_count``: bins of fewer rows (of positive weight) are merged.
    weighted : bool, default=False
        Whether ``mass`` holds fixed-point weights.
    label : str, default="x"
        How the feature is named in errors (e.g. ``"column 'age'"``).

    Returns
    -------
    edges : ndarray of float64
    rows : ndarray of int64
        Rows (of positive weight) per chain bin (approximate for a sketch).
    """
    if s.values.size == 0:
        raise ValueError(f"{label} has no non-missing value: no cut point can be placed.")
    live = s.rows_pos > 0
    if not np.any(live):
        raise ValueError(f"{label} has no non-missing value with a positive weight.")
    values, rows = s.values[live], s.rows_pos[live]
    equal = (not weighted) or s.qmin == s.qmax
    counts = rows if equal else s.mass[live]
    edges = values[_tie_aware_cuts(np.asarray(counts, dtype=np.int64), int(n_bins))]
    bin_rows = _bin_sums(values, rows, edges)
    if min_count > 1:
        edges, bin_rows, _ = _merge_small_bins(edges, bin_rows, bin_rows, int(min_count))
    return np.asarray(edges, dtype=np.float64), np.asarray(bin_rows, dtype=np.int64)


def distinct_per_bin(s: ValueSummary, edges: np.ndarray) -> tuple[list[int], list[float]] | None:
    """Per chain bin, the number of distinct values (capped at 2) and the single value.

    What ``_formula._distinct_per_bin`` computes on the rows; None for a sketch (the
    distinct values are not all known).
    """
    if not s.exact:
        return None
    n_chain = len(edges) + 1
    codes = np.searchsorted(edges, s.values, side="left")
    count = np.bincount(codes, minlength=n_chain)
    ref = np.full(n_chain, np.nan)
    ones = np.flatnonzero(count == 1)
    ref[codes[np.isin(codes, ones)]] = s.values[np.isin(codes, ones)]
    distinct = np.minimum(count, 2)
    return [int(k) for k in distinct], [float(u) for u in ref]


# =====================================================================================
# The solver's view of the data
# =====================================================================================


@dataclass
class DaskDesign:
    """The binned design of a Dask collection, partition by partition (design.md §9).

    Attributes
    ----------
    block_ptr : ndarray of int64, shape (p + 1,)
        Offsets of the blocks in θ.
    kinds : tuple of str
        Kind of every block (``"tv"``, ``"free"``...; ``_blocks``).
    n_dense : int
        Dense (unpenalised numeric) columns q.
    partitions : list of dask.delayed
        Each computes ``dict(codes=(p, n_i) uint8|uint16 C-contiguous, dense=(n_i, q)
        float64 | None, y=(n_i,) float64, weight=(n_i,) float64 | None, offset=(n_i,)
        float64 | None, fold=None)``. Values are validated (finite, codes in range).
    n_rows : int
        Total rows.
    labels : list of str or None
        Names of θ (one per level).
    counts : ndarray of int64 or None
        Exact unweighted rows per level when every binning was exact, else None.
    dense_names : list of str or None
        Names of the dense columns.
    partition_rows : list of int or None
        Rows of each partition.
    """

    block_ptr: np.ndarray
    kinds: tuple
    n_dense: int
    partitions: list
    n_rows: int
    labels: list | None = None
    counts: np.ndarray | None = None
    dense_names: list | None = None
    partition_rows: list | None = None

    @property
    def n_blocks(self) -> int:
        """Number of code blocks p."""
        return int(len(self.block_ptr) - 1)

    def persist(self, client: Any = None) -> DaskDesign:
        """The same design with its partitions computed and kept in (cluster) memory.

        Parameters
        ----------
        client : distributed.Client, optional
            Persist on this client's cluster (default: the current dask scheduler).

        Returns
        -------
        DaskDesign
        """
        import dask

        parts = (
            client.persist(self.partitions)
            if client is not None
            else dask.persist(*self.partitions)
        )
        out = DaskDesign(**{**self.__dict__})
        out.partitions = list(parts)
        return out

    def collect(self) -> dict[str, Any]:
        """All partitions concatenated in memory (for data that fits on one machine).

        Returns
        -------
        dict
            ``codes`` (p, n), ``dense`` (n, q) or None, ``y``, ``weight``, ``offset``.
        """
        import dask

        parts = dask.compute(*self.partitions)
        return concat_partitions(parts, self.n_blocks)


def concat_partitions(parts: Any, n_blocks: int) -> dict[str, Any]:
    """Concatenate partition dicts (see :class:`DaskDesign`) along the rows."""
    parts = list(parts)
    out: dict[str, Any] = {}
    if parts:
        dtype = parts[0]["codes"].dtype
    else:  # pragma: no cover - a collection always has a partition
        dtype = np.uint8
    out["codes"] = np.ascontiguousarray(
        np.concatenate([p["codes"] for p in parts], axis=1)
        if parts else np.empty((n_blocks, 0), dtype=dtype)
    )  # fmt: skip
    for key in ("dense", "y", "weight", "offset"):
        pieces = [p[key] for p in parts]
        out[key] = None if pieces[0] is None else np.concatenate(pieces, axis=0)
    return out
