"""Harrell's C in O(n log² n): weighted counts of the pairs each event can be compared with.

After sorting a stratum's rows by time (the censored rows of a time after its events),
the partners of an event at position i are the positions from ``start[i]`` on (every
later time, and the censored rows of its own time). The concordant weight of the event
is then a two-sided range count, Σ_{j ≥ start[i]} s_j [r_j < r_i] (plus half the ties),
answered for all events at once on the dyadic blocks of the positions: the suffix
[start, N) is the union of at most one block per level (the blocks of a binary indexed
tree), and within a level the rows are sorted by (block, risk rank) with cumulative
weights, so each event's count in its block is two binary searches. log2(n) levels of
one sort each: no n × n (nor events × n) object is ever formed.
"""

from __future__ import annotations

import numpy as np

__all__ = ["concordant_weights"]


def concordant_weights(
    start: np.ndarray, risk: np.ndarray, weight: np.ndarray, events: np.ndarray
) -> tuple[float, float]:
    """Weighted concordant and comparable pair sums of one stratum.

    Parameters
    ----------
    start : ndarray of shape (n,)
        For a row at position i (rows sorted by time), the first position of its
        comparable partners; only the entries at ``events`` are read.
    risk : ndarray of shape (n,)
        Predicted risk of the rows in that order (only the order matters).
    weight : ndarray of shape (n,)
        Row weights s_j in that order.
    events : ndarray of int
        Positions of the rows with an event.

    Returns
    -------
    num : float
        Σ_i s_i Σ_{j ≥ start_i} s_j ([r_i > r_j] + ½ [r_i = r_j]) over events i.
    den : float
        Σ_i s_i Σ_{j ≥ start_i} s_j over events i.
    """
    n = risk.size
    if n == 0 or events.size == 0:
        return 0.0, 0.0
    rank = np.unique(risk, return_inverse=True)[1].astype(np.int64).ravel()
    n_ranks = int(rank.max()) + 1
    pos = np.arange(n, dtype=np.int64)
    q_start = np.asarray(start, dtype=np.int64)[events]
    q_rank = rank[events]
    less = np.zeros(events.size)
    equal = np.zeros(events.size)
    total = np.zeros(events.size)
    # a suffix from position 0 is the whole stratum (no block of the levels below)
    whole = q_start <= 0
    if np.any(whole):
        by_rank = np.concatenate([[0.0], np.cumsum(np.bincount(rank, weight, n_ranks))])
        less[whole] = by_rank[q_rank[whole]]
        equal[whole] = by_rank[q_rank[whole] + 1] - by_rank[q_rank[whole]]
        total[whole] = by_rank[-1]
    q_start = np.where(whole, n, q_start)  # nothing more for them below
    level = 0
    while (1 << level) < 2 * n:
        # the block of this level the suffix [start, n) uses, if any: k = start rounded
        # up to a multiple of 2^level; used when bit `level` of k is set
        k = (q_start + (1 << level) - 1) >> level
        used = (k & 1) == 1
        if level and np.any(used):
            block_of_row = pos >> level
            key = block_of_row * n_ranks + rank
            order = np.argsort(key, kind="stable")
            skey = key[order]
            cum = np.concatenate([[0.0], np.cumsum(weight[order])])
            qb = k[used]
            base = qb * n_ranks
            lo = np.searchsorted(skey, base, side="left")
            at = np.searchsorted(skey, base + q_rank[used], side="left")
            after = np.searchsorted(skey, base + q_rank[used], side="right")
            hi = np.searchsorted(skey, base + n_ranks, side="left")
            less[used] += cum[at] - cum[lo]
            equal[used] += cum[after] - cum[at]
            total[used] += cum[hi] - cum[lo]
        elif np.any(used):  # blocks of one row: the row at position k itself
            row = k[used]
            inside = row < n
            idx = np.flatnonzero(used)[inside]
            row = row[inside]
            w = weight[row]
            less[idx] += w * (rank[row] < q_rank[used][inside])
            equal[idx] += w * (rank[row] == q_rank[used][inside])
            total[idx] += w
        level += 1
    s = weight[events]
    num = float(np.sum(s * (less + 0.5 * equal)))
    den = float(np.sum(s * total))
    return num, den
