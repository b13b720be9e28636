"""Cut points of one column (design.md §6): pure functions of its sorted values, their
counts or weights — the quantile positions, the tie-aware split when ties collapse
quantiles, the merging of bins below ``min_bin_count``, uniform cuts.
"""

from __future__ import annotations

import heapq

import numpy as np

from ..kernels._binning import compact_column
from ._column_access import from_fixed, raise_bad_value


def distinct_in_levels(
    x: np.ndarray, codes: np.ndarray, n_chain: int
) -> tuple[list[int], list[float]]:
    """Per chain level: the number of distinct training values (capped at 2) and, when
    there is exactly one, that value (NaN otherwise). O(n): each level is compared with
    one of its own values."""
    inside = codes < n_chain  # a missing level (NaN rows) is outside the chain
    c = codes[inside].astype(np.intp)
    v = x[inside]
    count = np.bincount(c, minlength=n_chain)
    ref = np.zeros(n_chain)
    ref[c] = v
    differ = np.bincount(c, weights=v != ref[c], minlength=n_chain)
    distinct = np.where(count == 0, 0, np.where(differ == 0, 1, 2))
    single = np.where(distinct == 1, ref, np.nan)
    return [int(k) for k in distinct], [float(u) for u in single]


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
    (:func:`merge_small_bins`).
    """
    n_valid, first_inf = compact_column(x, work)
    if first_inf >= 0:
        raise_bad_value(x[first_inf], label, first_inf)
    any_nan = n_valid < x.shape[0]
    if any_nan and missing == "error":
        raise_bad_value(np.nan, label, int(np.flatnonzero(np.isnan(x))[0]))
    valid = work[:n_valid]

    if weights is not None:
        q, shift = weights
        nan = np.isnan(x) if any_nan else np.zeros(x.shape[0], dtype=bool)
        keep = (q > 0) & ~nan
        qk = q[keep]
        if qk.size == 0:
            raise ValueError(f"{label} has no non-missing value with a positive weight.")
        xw = np.asarray(x[keep], dtype=np.float64) + 0.0
        nan_weight = float(from_fixed(q[nan].sum(), shift))
        if qk.min() == qk.max():  # equal weights: exactly the unweighted rule, scaled
            xs = np.sort(xw)
            edges, counts = _fit_sorted(xs, n_bins, method)
            edges, counts, _ = merge_small_bins(edges, counts, counts, min_count)
            return edges, from_fixed(counts * qk[0], shift), nan_weight, any_nan
        values, sums = _weighted_unique(xw, qk)
        edges = _edges_from_counts(values, sums, n_bins, method)
        fixed = bin_sums(values, sums, edges)
        if min_count > 1:
            rows = np.diff(np.searchsorted(np.sort(xw), edges, side="right"), prepend=0,
                           append=xw.shape[0])  # fmt: skip
            edges, rows, fixed = merge_small_bins(edges, rows, fixed, min_count)
        return edges, from_fixed(fixed, shift), nan_weight, any_nan

    if n_valid == 0:
        raise ValueError(f"{label} has no non-missing value: no cut point can be placed.")
    valid.sort()
    edges, counts = _fit_sorted(valid, n_bins, method)
    edges, counts, _ = merge_small_bins(edges, counts, counts, min_count)
    return edges, counts, x.shape[0] - n_valid, any_nan


def merge_small_bins(
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
        return values[tie_aware_cuts(counts, n_bins)]
    return _uniform_edges(values, n_bins)


def bin_sums(values: np.ndarray, counts: np.ndarray, edges: np.ndarray) -> np.ndarray:
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
    It is the same function as ``tie_aware_cuts`` on the distinct values (tested).
    """
    n = s.shape[0]
    if n >= n_bins:  # with fewer rows than bins the ranks collide
        candidates = s[_quantile_positions(n, n_bins)]
        if np.all(candidates[1:] > candidates[:-1]) and candidates[-1] < s[-1]:
            return candidates
    values, counts = _unique_counts(s)
    return values[tie_aware_cuts(counts, n_bins)]


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


def tie_aware_cuts(counts: np.ndarray, n_bins: int) -> np.ndarray:
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
            ends.extend((a + tie_aware_cuts(counts[a:b], int(share[r]))).tolist())
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
