"""Sufficient statistics of the one-hot design: its weighted Gram (design.md §9).

For the design [X^B, U] (X^B the one-hot bins, U = [1, Z] the free columns: the
intercept's column of ones, then the dense columns), row weights S = diag(w) and a
working response z:

    G   = X^Bᵀ S X^B   (d × d; block (j, l) the co-occurrence table of the codes of
                        blocks j and l, diagonal blocks diagonal = the bin counts)
    BU  = X^Bᵀ S U,    UU = Uᵀ S U,    Bz = X^Bᵀ S z,    Uz = Uᵀ S z,    zz = Σ s z².

:func:`gram_statistics` builds them in one pass over the rows (one task per pair of
blocks, in threads; the kernels in ``kernels/_gram_fast``). They are sums over rows,
so statistics of partitions of the rows add (``+``: merge partitions) and subtract
(``−``: the training rows of a CV fold are all rows minus the fold's). The Gram
backend of the solvers (``engine/_gram``), the design's level co-occurrences
(``_design``) and the Dask solver read them.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from ..kernels import _gram_fast

__all__ = [
    "GramStats",
    "gram_statistics",
    "gram_statistics_numpy",
    "bin_pair_gram",
    "pair_gram_into",
    "DEFAULT_THREADS",
]


@dataclass
class GramStats:
    """Sufficient statistics of a quadratic model on the one-hot design (design.md §9).

    All sums are over the rows with the model's row weights w (S = diag(w)); the free
    columns are U = [1, Z] (the ones column first, always present: without an intercept
    the solver drops it). Statistics of disjoint sets of rows add with ``+``; ``a − b``
    removes the rows of ``b`` from ``a`` (the training rows of a CV fold).

    Attributes
    ----------
    block_ptr : ndarray of shape (p + 1,)
        Offsets of the blocks in θ.
    BB : ndarray of shape (d, d)
        X^Bᵀ S X^B (block (j, l) the weighted co-occurrence table of blocks j and l).
    BU : ndarray of shape (d, q + 1)
        X^Bᵀ S U (column 0: the weighted bin counts).
    UU : ndarray of shape (q + 1, q + 1)
        Uᵀ S U (entry (0, 0): Σ w).
    Bz : ndarray of shape (d,)
        X^Bᵀ S z.
    Uz : ndarray of shape (q + 1,)
        Uᵀ S z.
    zz : float
        Σ w z².
    n_rows : int
        Number of rows summed.
    """

    block_ptr: np.ndarray
    BB: np.ndarray
    BU: np.ndarray
    UU: np.ndarray
    Bz: np.ndarray
    Uz: np.ndarray
    zz: float
    n_rows: int

    @property
    def n_levels(self) -> int:
        """d, the number of levels of θ."""
        return int(self.block_ptr[-1])

    @property
    def n_dense(self) -> int:
        """q, the number of dense columns (U has q + 1)."""
        return int(self.UU.shape[0]) - 1

    @property
    def counts(self) -> np.ndarray:
        """The weighted bin counts Σ_{i: c_ij = k} w_i (length d)."""
        return self.BU[:, 0].copy()

    @property
    def weight_sum(self) -> float:
        """Σ w."""
        return float(self.UU[0, 0])

    def _check_same(self, other) -> None:
        if not isinstance(other, GramStats):
            raise TypeError(f"cannot combine GramStats with {type(other).__name__}.")
        if not np.array_equal(self.block_ptr, other.block_ptr) or self.UU.shape != other.UU.shape:
            raise ValueError(
                "GramStats of different designs (block_ptr or number of dense columns differ)."
            )

    def __add__(self, other: GramStats) -> GramStats:
        if isinstance(other, int) and other == 0:  # sum() starts from 0
            return self
        self._check_same(other)
        return GramStats(
            self.block_ptr, self.BB + other.BB, self.BU + other.BU, self.UU + other.UU,
            self.Bz + other.Bz, self.Uz + other.Uz, self.zz + other.zz,
            self.n_rows + other.n_rows,
        )  # fmt: skip

    __radd__ = __add__

    def __sub__(self, other: GramStats) -> GramStats:
        self._check_same(other)
        return GramStats(
            self.block_ptr, self.BB - other.BB, self.BU - other.BU, self.UU - other.UU,
            self.Bz - other.Bz, self.Uz - other.Uz, self.zz - other.zz,
            self.n_rows - other.n_rows,
        )  # fmt: skip

    @property
    def nbytes(self) -> int:
        """Bytes of the statistics (what a partition sends)."""
        return int(self.BB.nbytes + self.BU.nbytes + self.UU.nbytes + self.Bz.nbytes
                   + self.Uz.nbytes + 8)  # fmt: skip


def _as_codes(codes, block_ptr):
    """Codes as a C-ordered (p, n) array of uint8/uint16/intp, block_ptr as intp; checked."""
    codes = np.asarray(codes)
    if codes.ndim != 2:
        raise ValueError(f"codes must be a 2-d array of shape (p, n); got {codes.ndim} dims.")
    if codes.dtype not in (np.uint8, np.uint16, np.intp):
        if codes.dtype.kind not in "iu":
            raise ValueError(f"codes must be integers; got dtype {codes.dtype}.")
        codes = codes.astype(np.intp)
    codes = np.ascontiguousarray(codes)
    bp = np.asarray(block_ptr)
    if bp.ndim != 1 or bp.shape[0] != codes.shape[0] + 1 or bp.dtype.kind not in "iu":
        raise ValueError(
            f"block_ptr must be integer offsets of length p + 1 = {codes.shape[0] + 1}."
        )
    bp = np.ascontiguousarray(bp, dtype=np.intp)
    if bp[0] != 0 or np.any(np.diff(bp) < 1):
        raise ValueError("block_ptr must start at 0 and increase (every block has a level).")
    p, n = codes.shape
    if p and n:
        lo, hi = codes.min(axis=1), codes.max(axis=1)
        bad = np.flatnonzero((lo < 0) | (hi >= np.diff(bp)))
        if bad.size:
            j = int(bad[0])
            raise ValueError(
                f"codes of block {j} must lie in [0, {int(bp[j + 1] - bp[j])}); "
                f"got values in [{int(lo[j])}, {int(hi[j])}]."
            )
    return codes, bp


def _row_vector(v, n, name, default):
    if v is None:
        return np.full(n, default, dtype=np.float64)
    v = np.ascontiguousarray(np.asarray(v, dtype=np.float64).ravel())
    if v.shape[0] != n:
        raise ValueError(f"{name} has {v.shape[0]} rows but codes have {n}.")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{name} must be finite.")
    return v


#: Threads of the statistics kernels when a call does not say (None: the machine's cores).
#: A process that runs several fits at once (CV workers) sets it to 1.
DEFAULT_THREADS: int | None = None


#: Below this many row × task cells a call that does not name its threads runs in the
#: calling thread: starting and joining a pool costs ~0.1-1 ms (more on a busy machine),
#: more than the tables of a small fold (the polish builds a Gram per Newton step).
MIN_THREADED_CELLS = 1 << 18


def _n_threads(n_threads, n_tasks, cells=None) -> int:
    if n_threads is None:
        if cells is not None and cells < MIN_THREADED_CELLS:
            return 1
        n_threads = DEFAULT_THREADS if DEFAULT_THREADS is not None else (os.cpu_count() or 1)
    n_threads = int(n_threads)
    if n_threads < 1:
        raise ValueError(f"n_threads must be a positive integer; got {n_threads}.")
    return max(1, min(n_threads, n_tasks))


def _split(costs: np.ndarray, k: int) -> list[np.ndarray]:
    """Indices of tasks split into k lists of about equal total cost (greedy, largest first)."""
    order = np.argsort(-costs, kind="stable")
    load = np.zeros(k)
    parts: list[list[int]] = [[] for _ in range(k)]
    for t in order:
        i = int(np.argmin(load))
        parts[i].append(int(t))
        load[i] += costs[t]
    return [np.sort(np.asarray(p, dtype=np.intp)) for p in parts if p]


def _run(jobs, n_threads):
    if n_threads == 1 or len(jobs) == 1:
        return [job() for job in jobs]
    with ThreadPoolExecutor(max_workers=n_threads) as ex:
        return [f.result() for f in [ex.submit(job) for job in jobs]]


def bin_pair_gram(codes, block_ptr, w, out=None, *, n_threads=None, diagonal=None) -> np.ndarray:
    """X^Bᵀ diag(w) X^B (d × d): the weighted co-occurrence tables of every pair of blocks.

    The pairs are split between ``n_threads`` threads (default: the machine's cores),
    each running ``_gram_fast.pair_tables`` without the GIL; every cell is summed in row
    order, so the result does not depend on the threads (and equals ``np.bincount``).

    Parameters
    ----------
    codes : ndarray of shape (p, n), uint8, uint16 or intp
        Level codes, one row per block (validated here).
    block_ptr : ndarray of shape (p + 1,)
        Offsets of the blocks.
    w : ndarray of shape (n,)
        Row weights.
    out : ndarray of shape (d, d), optional
        Zero-filled output (a new one when not given).
    n_threads : int, optional
        Threads (default: ``os.cpu_count()``).
    diagonal : ndarray of shape (d,), optional
        The bin sums of w if already known (else computed here).

    Returns
    -------
    ndarray of shape (d, d)
    """
    codes, bp = _as_codes(codes, block_ptr)
    p, n = codes.shape
    w = _row_vector(w, n, "w", 1.0)
    d = int(bp[-1])
    if out is None:
        out = np.zeros((d, d))
    if diagonal is None:
        diagonal = np.zeros(d)
        for j in range(p):
            diagonal[bp[j] : bp[j + 1]] = np.bincount(
                codes[j], weights=w, minlength=int(bp[j + 1] - bp[j])
            )
    out[np.arange(d), np.arange(d)] = diagonal
    pair_gram_into(codes, bp, w, out, n_threads)
    return out


def pair_gram_into(codes, bp, w, out, n_threads=None) -> None:
    """Add the pair tables of validated codes into ``out`` (``BinnedDesign.gram``'s route).

    Parameters
    ----------
    codes : ndarray of shape (p, n), C-ordered uint8/uint16/intp
        Codes already validated against ``bp``.
    bp : ndarray of intp
        Block offsets.
    w : ndarray of shape (n,), float64, contiguous
        Row weights.
    out : ndarray of shape (d, d)
        Output (its off-diagonal blocks zero).
    n_threads : int, optional
        Threads (default: the machine's cores).
    """
    p = codes.shape[0]
    tj, tl = np.triu_indices(p, k=1)
    if tj.size == 0:
        return
    tj, tl = tj.astype(np.intp), tl.astype(np.intp)
    k = _n_threads(n_threads, tj.size, cells=codes.shape[1] * tj.size)
    # one thread: every pair in order (what _split gives for k = 1, without its loop)
    parts = [np.arange(tj.size, dtype=np.intp)] if k == 1 else _split(np.ones(tj.size), k)
    jobs = [
        (
            lambda idx=idx: _gram_fast.pair_tables(
                codes, bp, np.ascontiguousarray(tj[idx]), np.ascontiguousarray(tl[idx]), w, out
            )
        )  # fmt: skip
        for idx in parts
    ]
    bad = sum(_run(jobs, k))
    if bad:
        raise ValueError(f"{bad} codes out of their block's range.")


def gram_statistics(
    codes, block_ptr, free=None, weight=None, z=None, *, n_threads=None
) -> GramStats:
    """The sufficient statistics of the weighted one-hot design, in one pass (design.md §9).

    Parameters
    ----------
    codes : ndarray of shape (p, n), uint8, uint16 or intp
        Level codes, one row per block (a partition's rows).
    block_ptr : ndarray of shape (p + 1,)
        Offsets of the blocks in θ.
    free : ndarray of shape (n, q), optional
        The dense (unpenalised) columns Z; the ones column of the intercept is added in
        front (U = [1, Z]).
    weight : ndarray of shape (n,), optional
        Row weights w of the quadratic model (gaussian: the sample weights; an IRLS
        step: sample weight × curvature b''(η)). Default 1.
    z : ndarray of shape (n,), optional
        Response of the quadratic model (gaussian: y − offset; an IRLS step: the
        working response η − offset + (y − μ)/b''(η)). Default 0.
    n_threads : int, optional
        Threads over the pairs of blocks (default: the machine's cores).

    Returns
    -------
    GramStats
        Mergeable with ``+`` (partitions) and ``−`` (fold removal).

    Examples
    --------
    >>> import numpy as np
    >>> from binarsity_stats.engine._gram import gram_statistics
    >>> codes = np.array([[0, 1, 1, 2], [1, 0, 1, 1]], dtype=np.uint8)
    >>> st = gram_statistics(codes, [0, 3, 5], z=[1.0, 2.0, 3.0, 4.0])
    >>> st.BB[:3, 3:]  # co-occurrence of block 0's levels with block 1's
    array([[0., 1.],
           [1., 1.],
           [0., 1.]])
    >>> half = gram_statistics(codes[:, :2], [0, 3, 5], z=[1.0, 2.0])
    >>> bool(np.allclose((st - half).Bz, gram_statistics(codes[:, 2:], [0, 3, 5],
    ...                                                    z=[3.0, 4.0]).Bz))
    True
    """
    codes, bp = _as_codes(codes, block_ptr)
    p, n = codes.shape
    d = int(bp[-1])
    w = _row_vector(weight, n, "weight", 1.0)
    if np.any(w < 0):
        raise ValueError("weight must be non-negative.")
    zv = _row_vector(z, n, "z", 0.0)
    if free is None:
        Z = np.zeros((n, 0))
    else:
        Z = np.asarray(free, dtype=np.float64)
        if Z.ndim == 1:
            Z = Z[:, None]
        if Z.ndim != 2 or Z.shape[0] != n:
            raise ValueError(f"free must have shape (n, q) with n = {n}; got {Z.shape}.")
        if not np.all(np.isfinite(Z)):
            raise ValueError("free must be finite.")
    U = np.ascontiguousarray(np.column_stack([np.ones(n), Z]))
    m = U.shape[1]
    BB = np.zeros((d, d))
    BU = np.zeros((d, m))
    Bz = np.zeros(d)
    # tasks: one per block (bins × free columns, bins × z) and one per pair of blocks,
    # balanced over the threads by their cost (rows × columns touched)
    tj, tl = np.triu_indices(p, k=1)
    costs = np.concatenate([np.full(p, 1.0 + m), np.ones(tj.size)])
    k = _n_threads(n_threads, costs.size, cells=n * float(costs.sum())) if costs.size else 1
    jobs = []
    for idx in _split(costs, k) if costs.size else []:
        blocks = np.ascontiguousarray(idx[idx < p], dtype=np.intp)
        pairs = idx[idx >= p] - p
        pj = np.ascontiguousarray(tj[pairs], dtype=np.intp)
        pl = np.ascontiguousarray(tl[pairs], dtype=np.intp)

        def job(blocks=blocks, pj=pj, pl=pl):
            bad = _gram_fast.bin_free_sums(codes, bp, blocks, U, w, zv, BU, Bz)
            return bad + _gram_fast.pair_tables(codes, bp, pj, pl, w, BB)

        jobs.append(job)
    bad = sum(_run(jobs, k)) if jobs else 0
    if bad:  # pragma: no cover - the codes were checked above
        raise ValueError(f"{bad} codes out of their block's range.")
    BB[np.arange(d), np.arange(d)] = BU[:, 0]
    UU = U.T @ (w[:, None] * U)
    Uz = U.T @ (w * zv)
    zz = float(np.dot(w, zv * zv))
    return GramStats(bp, BB, BU, UU, Bz, Uz, zz, n)


def gram_statistics_numpy(codes, block_ptr, free=None, weight=None, z=None) -> GramStats:
    """NumPy reference of :func:`gram_statistics` (the one-hot matrix, materialised).

    Parameters
    ----------
    codes, block_ptr, free, weight, z
        As in :func:`gram_statistics`.

    Returns
    -------
    GramStats
    """
    codes, bp = _as_codes(codes, block_ptr)
    p, n = codes.shape
    d = int(bp[-1])
    w = _row_vector(weight, n, "weight", 1.0)
    zv = _row_vector(z, n, "z", 0.0)
    X = np.zeros((n, d))
    for j in range(p):
        X[np.arange(n), bp[j] + codes[j].astype(np.intp)] = 1.0
    Z = np.zeros((n, 0)) if free is None else np.asarray(free, float).reshape(n, -1)
    U = np.column_stack([np.ones(n), Z])
    Xw, Uw = X * w[:, None], U * w[:, None]
    return GramStats(bp, X.T @ Xw, Xw.T @ U, U.T @ Uw, Xw.T @ zv, Uw.T @ zv,
                     float(w @ (zv * zv)), n)  # fmt: skip
