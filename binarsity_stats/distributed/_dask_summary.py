"""Mergeable summaries of one numeric feature (see ``_dask``): :class:`ValueSummary` (exact
distinct values with row counts and fixed-point weights, or a quantile sketch with a
rank-error bound), the Binarizer's fixed point with the shift fixed by the whole data,
and the cut points and per-bin distinct values from a summary by the Binarizer's rule.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..design._cuts import bin_sums, merge_small_bins, tie_aware_cuts

__all__ = [
    "ValueSummary",
    "cuts_from_summary",
    "distinct_per_bin",
    "fixed_point_shift",
    "to_fixed",
    "MAX_DISTINCT",
    "SKETCH_SIZE",
]


#: Largest number of distinct values of a feature binned exactly (beyond: a sketch).
MAX_DISTINCT = 100_000
#: Values kept by one thinning of a quantile sketch (rank error 1 / SKETCH_SIZE per level).
SKETCH_SIZE = 16_384


# =====================================================================================
# Fixed-point weights (the Binarizer's, with the shift fixed by the whole data)
# =====================================================================================


def fixed_point_shift(n_rows: int, max_weight: float) -> tuple[int, int]:
    """``(e, bits)`` of the Binarizer's fixed point for ``n_rows`` rows of max weight.

    ``_column_access._fixed_point`` computes ``q = rint(w / 2**e * 2**bits)`` with ``e`` the
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
    nan_mass: int = 0  # fixed-point weight of the missing rows (nan_rows when unweighted)

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
            nan_mass = int(nan.sum()) if q is None else int(np.asarray(q, np.int64)[nan].sum())
            return cls(empty_f, empty_i, empty_i, empty_i, nan_rows=int(nan.sum()),
                       nan_mass=nan_mass)  # fmt: skip
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
        nan_mass = int(nan.sum()) if q is None else int(np.asarray(q, np.int64)[nan].sum())
        out = cls(values, rows, rows_pos, mass, nan_rows=int(nan.sum()),
                  vmin=float(values[0]), vmax=float(values[-1]), qmin=qmin, qmax=qmax,
                  nan_mass=nan_mass)  # fmt: skip
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
                                qmax=self.qmax, levels=self.levels,
                                nan_mass=self.nan_mass)  # fmt: skip
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
                            levels=self.levels + 1, nan_mass=self.nan_mass)  # fmt: skip

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
        nan_mass = sum(p.nan_mass for p in parts)
        if xs.size == 0:
            e = np.empty(0, dtype=np.int64)
            return ValueSummary(np.empty(0), e, e, e, exact, err, nan_rows, vmin, vmax, qmin,
                                qmax, levels, nan_mass)  # fmt: skip
        first = np.empty(xs.size, dtype=bool)
        first[0] = True
        np.not_equal(xs[1:], xs[:-1], out=first[1:])
        starts = np.flatnonzero(first)

        def add(name: str) -> np.ndarray:
            return np.add.reduceat(np.concatenate([getattr(p, name) for p in parts])[order],
                                   starts)  # fmt: skip

        out = ValueSummary(xs[starts], add("rows"), add("rows_pos"), add("mass"), exact, err,
                           nan_rows, float(vmin), float(vmax), qmin, qmax, levels,
                           nan_mass)  # fmt: skip
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
    edges = values[tie_aware_cuts(np.asarray(counts, dtype=np.int64), int(n_bins))]
    bin_rows = bin_sums(values, rows, edges)
    if min_count > 1:
        edges, bin_rows, _ = merge_small_bins(edges, bin_rows, bin_rows, int(min_count))
    return np.asarray(edges, dtype=np.float64), np.asarray(bin_rows, dtype=np.int64)


def distinct_per_bin(s: ValueSummary, edges: np.ndarray) -> tuple[list[int], list[float]] | None:
    """Per chain bin, the number of distinct values (capped at 2) and the single value.

    What ``_cuts.distinct_in_levels`` computes on the rows; None for a sketch (the
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
