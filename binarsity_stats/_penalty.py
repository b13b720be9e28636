"""The binarsity penalty: weights, value, λ_max and the optimality check (design.md §1–2).

With ``block_ptr`` the CSR offsets of the blocks in the concatenated coefficient vector
θ (length d), the penalty is

    pen(θ) = Σ_j Σ_{k ≥ 1} ω_jk |θ_jk − θ_j,k−1|   subject to  n_jᵀ θ_j = 0 for every j,

stored as one array ``weights`` of length d whose entry at each block start is ignored
(it is treated as 0). Every block has a kind (``_blocks``: a TV chain or free levels),
which decides its KKT rule, its prox and whether its edges are penalised at all; an edge
of weight 0 in a chain decouples two levels (the "missing" level of a feature).
"""

from __future__ import annotations

import numpy as np

from ._blocks import as_kinds, get_kind, infer_kinds

__all__ = ["BinarsityPenalty", "penalty_weights", "block_suffix_sums"]


def _as_block_ptr(block_ptr) -> np.ndarray:
    return np.ascontiguousarray(block_ptr, dtype=np.intp)


def penalty_weights(
    kind: str | np.ndarray,
    bin_counts: np.ndarray,
    block_ptr: np.ndarray,
    chain_length: np.ndarray | None = None,
) -> np.ndarray:
    """Penalty weights ω of design.md §1 for every level of every block.

    Parameters
    ----------
    kind : {"theory", "uniform"} or array of shape (d,)
        ``"theory"``: ω_jk = sqrt(π̂_jk) with π̂_jk the weighted share of the block's rows
        in bins ≥ k (paper, Theorem 1, up to the scalar that λ absorbs);
        ``"uniform"``: ω_jk = 1 (tick's choice). An array is validated and returned.
    bin_counts : ndarray of shape (d,)
        Weighted bin counts n_jk.
    block_ptr : ndarray of shape (p + 1,)
        Block offsets.
    chain_length : ndarray of shape (p,), optional
        Number of levels of each block that belong to the TV chain; the remaining
        levels (a "missing" level) get weight 0 on their edge. Default: all levels.

    Returns
    -------
    ndarray of shape (d,)
        Weights, 0 at every block start.
    """
    block_ptr = _as_block_ptr(block_ptr)
    counts = np.asarray(bin_counts, dtype=np.float64)
    d = int(block_ptr[-1])
    if counts.shape != (d,):
        raise ValueError(f"bin_counts must have length {d}; got shape {counts.shape}.")
    p = len(block_ptr) - 1
    sizes = np.diff(block_ptr)
    if chain_length is None:
        chain_length = sizes
    chain_length = np.asarray(chain_length, dtype=np.intp)
    starts = block_ptr[:-1]
    if isinstance(kind, str):
        if kind == "uniform":
            w = np.ones(d)
        elif kind == "theory":
            w = np.zeros(d)
            for j in range(p):
                s, m = starts[j], chain_length[j]
                c = counts[s : s + sizes[j]]
                total = c.sum()
                if total > 0:
                    tail = np.cumsum(c[:m][::-1])[::-1]
                    w[s : s + m] = np.sqrt(tail / total)
        else:
            raise ValueError(
                f"penalty_weights must be 'theory', 'uniform' or an array; got {kind!r}."
            )
    else:
        w = np.array(kind, dtype=np.float64, copy=True)
        if w.shape != (d,):
            raise ValueError(f"penalty_weights must have length {d}; got shape {w.shape}.")
        if not np.all(np.isfinite(w)) or np.any(w < 0):
            raise ValueError("penalty_weights must be finite and non-negative.")
    # levels outside the chain (a missing level) are decoupled from it
    for j in range(p):
        w[starts[j] + chain_length[j] : starts[j] + sizes[j]] = 0.0
    w[starts] = 0.0
    return w


def block_suffix_sums(values: np.ndarray, block_ptr: np.ndarray) -> np.ndarray:
    """Suffix sums within blocks: ``S[k] = Σ_{m ≥ k, m in the block of k} values[m]``."""
    block_ptr = _as_block_ptr(block_ptr)
    c = np.cumsum(values[::-1])[::-1]
    c = np.append(c, 0.0)
    sizes = np.diff(block_ptr)
    ends = np.repeat(block_ptr[1:], sizes)
    return c[:-1] - c[ends]


class BinarsityPenalty:
    """The binarsity penalty of a fixed block structure.

    Parameters
    ----------
    block_ptr : ndarray of shape (p + 1,)
        Block offsets in θ.
    weights : ndarray of shape (d,)
        ω (entry at each block start ignored).
    counts : ndarray of shape (d,), optional
        Weighted bin counts n_jk of the linear constraints (None: all equal).
    kinds : sequence of str, optional
        Kind of every block (``_blocks.KINDS``). Default: a block with a positive edge
        weight is a ``"tv"`` chain, one without is ``"free"``. The weights of an
        unpenalised kind are set to 0.
    """

    def __init__(self, block_ptr, weights, counts=None, kinds=None):
        self.block_ptr = _as_block_ptr(block_ptr)
        d = int(self.block_ptr[-1])
        p = len(self.block_ptr) - 1
        self.weights = np.asarray(weights, dtype=np.float64).copy()
        self.weights[self.block_ptr[:-1]] = 0.0
        self.counts = np.ones(d) if counts is None else np.asarray(counts, dtype=np.float64)
        sizes = np.diff(self.block_ptr)
        kinds = as_kinds(kinds, p)
        self.kinds: tuple[str, ...] = (
            infer_kinds(self.block_ptr, self.weights) if kinds is None else kinds
        )
        self._kind = [get_kind(k) for k in self.kinds]
        #: the rules of every block's kind (``_blocks.BlockKind``), in block order
        self.block_rules = tuple(self._kind)
        for j, kind in enumerate(self._kind):
            if not kind.penalized:
                self.weights[self.block_ptr[j] : self.block_ptr[j + 1]] = 0.0
        self.block_of = np.repeat(np.arange(len(sizes)), sizes)
        self.is_start = np.zeros(d, dtype=bool)
        self.is_start[self.block_ptr[:-1]] = True
        #: per block, the id of its block step in the CD kernel
        self.steps = np.array([k.step for k in self._kind], dtype=np.uint8)
        # CD may leave a block out of its working set when its kind allows it and the
        # block has a penalised edge to judge it by (a chain without one is free)
        has_edge = (
            np.add.reduceat(self.weights, self.block_ptr[:-1]) > 0
            if d
            else (np.zeros(0, dtype=bool))
        )
        self.screened_block = np.array([k.screened for k in self._kind], dtype=bool) & has_edge
        self._groups = self._group_blocks()

    def _group_blocks(self) -> dict[str, np.ndarray]:
        """Blocks of every kind present (kind name -> block indices)."""
        groups: dict[str, list[int]] = {}
        for j, name in enumerate(self.kinds):
            groups.setdefault(name, []).append(j)
        return {k: np.asarray(v, dtype=np.intp) for k, v in groups.items()}

    def _levels_of(self, blocks: np.ndarray) -> np.ndarray:
        bp = self.block_ptr
        return np.concatenate([np.arange(bp[j], bp[j + 1]) for j in blocks])

    @property
    def penalized_block(self) -> np.ndarray:
        """Whether each block's kind carries the penalty (read from the kinds)."""
        return np.array([k.penalized for k in self._kind], dtype=bool)

    def value(self, theta: np.ndarray) -> float:
        """pen(θ) = Σ_k ω_k |θ_k − θ_{k−1}| within blocks."""
        if theta.size < 2:
            return 0.0
        return float(np.dot(self.weights[1:], np.abs(theta[1:] - theta[:-1])))

    def jumps(self, theta: np.ndarray) -> np.ndarray:
        """Boolean mask of the levels k where θ_k ≠ θ_{k−1} within a block (the support)."""
        jump = np.zeros(theta.shape, dtype=bool)
        jump[1:] = theta[1:] != theta[:-1]
        jump[self.is_start] = False
        return jump

    def prox(self, v: np.ndarray, step: float) -> np.ndarray:
        """Exact prox of step·pen + the linear constraints (see ``prox_binarsity``)."""
        proxes = {get_kind(k).prox for k in self._groups}
        if len(proxes) <= 1:
            # every kind present shares one prox (the chain's): one call over all blocks
            prox = proxes.pop() if proxes else get_kind("tv").prox
            return prox(v, self.block_ptr, self.weights, self.counts, step)
        out = np.empty(len(v))
        sizes = np.diff(self.block_ptr)
        for name, blocks in self._groups.items():
            idx = self._levels_of(blocks)
            bp = np.concatenate([[0], np.cumsum(sizes[blocks])]).astype(np.intp)
            out[idx] = get_kind(name).prox(
                np.ascontiguousarray(v[idx]), bp, self.weights[idx], self.counts[idx], step
            )
        return out

    def lambda_max(self, grad_hist: np.ndarray) -> float:
        """Smallest λ at which θ = 0 is optimal, given the bin gradients at the null fit.

        λ_max = max_{j, l ≥ 1, ω_jl > 0} |S_jl| / ω_jl (design.md §2).
        """
        S = block_suffix_sums(grad_hist, self.block_ptr)
        mask = self.weights > 0
        if not np.any(mask):
            return 0.0
        return float(np.max(np.abs(S[mask]) / self.weights[mask]))

    def edge_gradients(self, grad_hist: np.ndarray, fit_intercept: bool = True) -> np.ndarray:
        """S_jl = Σ_{k ≥ l} g_jk per level (plus μ_j Σ_{k≥l} n_jk without an intercept).

        At an optimum |S_jl| ≤ λ ω_jl on a flat edge and S_jl = −λ ω_jl sign(jump) on a
        jump (design.md §2); without an intercept the constraint's multiplier μ_j
        (chosen so that S_j0 = 0) enters.
        """
        S = block_suffix_sums(grad_hist, self.block_ptr)
        if not fit_intercept:
            N = block_suffix_sums(self.counts, self.block_ptr)
            starts = self.block_ptr[:-1]
            with np.errstate(invalid="ignore", divide="ignore"):
                mu = np.where(N[starts] > 0, -S[starts] / N[starts], 0.0)
            S = S + mu[self.block_of] * N
        return S

    def kkt_violation(
        self, grad_hist: np.ndarray, theta: np.ndarray, lam: float, fit_intercept: bool = True
    ) -> np.ndarray:
        """Per-block distance of the gradient to the subdifferential (design.md §2).

        Parameters
        ----------
        grad_hist : ndarray of shape (d,)
            Bin sums g_jk of the gradient of the (normalised) smooth loss.
        theta : ndarray of shape (d,)
            Current coefficients.
        lam : float
            Regularisation strength λ.
        fit_intercept : bool
            With an intercept the block sums S_j0 vanish at the optimum; without one,
            the constraint's multiplier μ_j absorbs them (S_jl + μ_j Σ_{k≥l} n_jk).

        Returns
        -------
        ndarray of shape (p,)
            The largest violation in each block.
        """
        S = self.edge_gradients(grad_hist, fit_intercept)
        bound = lam * self.weights
        jump = self.jumps(theta)
        sign = np.zeros_like(theta)
        np.sign(theta[1:] - theta[:-1], out=sign[1:])
        if len(self._groups) == 1:
            viol = get_kind(self.kinds[0]).kkt(S, bound, jump, sign)
        else:
            viol = np.empty_like(S)
            for name, blocks in self._groups.items():
                m = np.isin(self.block_of, blocks)
                viol[m] = get_kind(name).kkt(S[m], bound[m], jump[m], sign[m])
        # S_j0 is the intercept's (or the multiplier's) condition, checked elsewhere
        viol[self.is_start] = 0.0
        if viol.size == 0:
            return np.zeros(len(self.block_ptr) - 1)
        return np.maximum.reduceat(viol, self.block_ptr[:-1])
