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

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ._blocks import STEP_PYTHON, as_kinds, get_kind, infer_kinds
from ..core._validation import check_block_ptr

__all__ = [
    "BinarsityPenalty",
    "penalty_weights",
    "by_chain_weights",
    "block_suffix_sums",
    "lambda_theory",
    "theory_lambda_fit",
    "theory_nobs",
    "THEORY_A",
    "PENALTY_WEIGHTS",
]

#: The named penalty weights ω (``penalty_weights=``); an array is also accepted.
PENALTY_WEIGHTS = ("theory", "uniform", "balanced")

#: A of Theorem 1: the oracle bound holds with probability 1 − 2e^{−A} = 0.95.
THEORY_A = math.log(40.0)


def theory_nobs(
    sample_weight: np.ndarray | None, weights_kind: str = "analytic", scale: float = 1.0
) -> float:
    """The n of the theory λ: Σ s for frequency weights, else Kish's (Σ s)² / Σ s².

    Parameters
    ----------
    sample_weight : ndarray of shape (n,) or None
        Row weights (None: unweighted, n rows), possibly divided by ``scale``.
    weights_kind : {"analytic", "freq"}, default="analytic"
        Frequency weights count rows, so that they give the n of the repeated rows;
        analytic (precision) weights give Kish's effective number, which a common
        scale of the weights does not change.
    scale : float, default=1
        The factor ``sample_weight`` was divided by (for frequency weights).

    Returns
    -------
    float
    """
    from ..core._validation import check_weights_kind

    check_weights_kind(weights_kind)
    if sample_weight is None:
        raise ValueError("theory_nobs needs the weights (ones when unweighted).")
    sw = np.asarray(sample_weight, dtype=np.float64)
    if weights_kind == "freq":
        return float(sw.sum()) * float(scale)
    return float(sw.sum() ** 2 / np.sum(sw**2))



def theory_lambda_fit(
    solve: Callable[[float, Any], Any],
    theory: Callable[[float | None], float],
    dispersion: Callable[[Any], float] | None,
    warm_start: Any = None,
) -> tuple[Any, float, float | None]:
    """The fit at the theory λ, the dispersion estimated once where the family has one.

    The one definition of the step that every door runs for ``lam="theory"`` (formula
    fits in memory and on Dask, the estimators): a fit at λ(φ̂₀) — ``theory(None)``,
    whose φ̂₀ is 1 without an estimated dispersion, else Pearson's χ² / W at the null
    fit, an upper bound — then, for a family that estimates φ, φ̂ from that fit
    (Pearson's χ² on its df) and one more fit at λ(φ̂), warm-started.

    Parameters
    ----------
    solve : callable
        ``solve(lam, warm_start) -> solution``.
    theory : callable
        ``theory(phi) -> λ`` (:func:`lambda_theory` with the model's data bound).
    dispersion : callable or None
        ``dispersion(solution) -> φ̂``; None when the family's dispersion is known.
    warm_start : optional
        Warm start of the first fit.

    Returns
    -------
    solution
        The fit at the final λ.
    lam : float
        The final λ.
    phi : float or None
        φ̂, or None when it was not estimated.
    """
    lam = theory(None)
    sol = solve(lam, warm_start)
    if dispersion is None:
        return sol, lam, None
    phi = dispersion(sol)
    lam = theory(phi)
    return solve(lam, sol), lam, phi


def lambda_theory(
    family: Any,
    y: np.ndarray,
    sample_weight: np.ndarray,
    offset: np.ndarray | None,
    n_levels: int,
    nobs: float,
    *,
    fit_intercept: bool = True,
    phi: float | None = None,
    A: float = THEORY_A,
    curvature: float | None = None,
) -> float:
    """The scalar of the paper's Theorem 1 weights: sqrt(2 U_n φ (A + log d) / n).

    Parameters
    ----------
    family : Family
        The family: U_n is its curvature bound, else the largest curvature at the null
        fit (poisson: the largest null mean).
    y, sample_weight : ndarray of shape (n,)
        Response and weights (any common scale).
    offset : ndarray of shape (n,) or None
        Offset.
    n_levels : int
        d, the number of binary features of the penalised blocks (at least 2 is used).
    nobs : float
        n (see :func:`theory_nobs`).
    fit_intercept : bool, default=True
        Whether the null fit has an intercept.
    phi : float, optional
        Dispersion φ. Default: 1 without an estimated dispersion, else Pearson's
        χ² / W at the null fit (an upper bound on φ).
    A : float, default=log(40)
        Confidence parameter: the bound holds with probability ≥ 1 − 2e^{−A}.
    curvature : float, optional
        U_n for a family without a curvature bound when already known (the largest
        curvature at the null fit, reduced on a Dask model's partitions); y,
        ``sample_weight`` and ``offset`` are then not read for it.

    Returns
    -------
    float

    Notes
    -----
    The same scalar serves ``penalty_weights="theory"`` and ``"balanced"``; the
    balanced weight is the one this argument gives exactly. Under pure noise (every θ
    flat, the intercept fitted) the null fit has η̂ = β̂0, and for an unweighted sample
    the suffix sum of the KKT conditions (design.md §2) is the centred sum

        S_jk = (1/n) Σ_{i: c_ij ≥ k} (μ̂ − y_i) = −(1/n) [Σ_{c_ij ≥ k} ε_i − π̂_jk Σ_i ε_i],

    with ε_i = y_i − μ, whose variance is φ V π̂_jk (1 − π̂_jk) / n ≤ U_n φ π̂_jk (1 − π̂_jk) / n
    (V the variance function, bounded by U_n = sup b''). A sub-Gaussian tail
    P(|S_jk| > t) ≤ 2 exp(−t² / (2 Var S_jk)) and a union bound over the d edges give,
    with t_jk = sqrt(2 U_n φ (A + log d) / n) · sqrt(π̂_jk (1 − π̂_jk)),

        P(max_jk |S_jk| / t_jk > 1) ≤ 2 d e^{−(A + log d)} = 2 e^{−A},

    so λ = λ_theory with ω_jk = sqrt(π̂_jk (1 − π̂_jk)) keeps the null fit optimal (no
    false cut anywhere) with probability ≥ 1 − 2e^{−A}. The paper's weight sqrt(π̂_jk)
    is the bound for an *uncentred* sum (variance ∝ π̂_jk): with the same scalar it is
    valid but conservative, and the more so the lower the cut (π̂_jk → 1 where
    1 − π̂_jk → 0). A missing level is free at the null fit, so the chain's residuals
    are centred on their own: π̂_jk (1 − π̂_jk / π̂_j1) with π̂_j1 the chain's share.
    With weights, π̂ are the weighted shares and n the effective n (:func:`theory_nobs`).
    """
    d = max(int(n_levels), 2)
    U = family.curvature_bound()
    if U is None and curvature is not None:
        U = float(curvature)
    if U is None:
        b0 = family.null_intercept(y, sample_weight, offset) if fit_intercept else 0.0
        eta = np.full(len(y), b0) if offset is None else b0 + offset
        U = float(np.max(family.curvature(eta)))
    if phi is None:
        phi = (
            family.null_dispersion(y, sample_weight, offset) if family.estimate_dispersion else 1.0
        )
    return math.sqrt(2.0 * U * phi * (A + math.log(d)) / nobs)


def _as_block_ptr(block_ptr, d: int | None = None, end_name: str | None = None) -> np.ndarray:
    return check_block_ptr(block_ptr, d, end_name=end_name)


def penalty_weights(
    kind: str | np.ndarray,
    bin_counts: np.ndarray,
    block_ptr: np.ndarray,
    chain_length: np.ndarray | None = None,
) -> np.ndarray:
    """Penalty weights ω of design.md §1 for every level of every block.

    Parameters
    ----------
    kind : {"theory", "uniform", "balanced"} or array of shape (d,)
        ``"theory"``: ω_jk = sqrt(π̂_jk) with π̂_jk the weighted share of the block's rows
        in bins ≥ k (paper, Theorem 1, up to the scalar that λ absorbs);
        ``"uniform"``: ω_jk = 1 (tick's choice); ``"balanced"``:
        ω_jk = sqrt(π̂_jk (1 − π̂_jk / π̂_j1)), the standard deviation of the centred
        suffix sum S_jk under pure noise (the CUSUM normalisation; π̂_j1 is the share of
        the block's chain, 1 without a missing level, so ω_jk = sqrt(π̂_jk (1 − π̂_jk))).
        An array is validated and returned.
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
    if not np.all(np.isfinite(counts)) or np.any(counts < 0):
        raise ValueError("bin_counts must be finite and non-negative.")
    p = len(block_ptr) - 1
    sizes = np.diff(block_ptr)
    if chain_length is None:
        chain_length = sizes
    chain_length = _as_chain_length(chain_length, sizes)
    starts = block_ptr[:-1]
    if isinstance(kind, str):
        if kind == "uniform":
            w = np.ones(d)
        elif kind in ("theory", "balanced"):
            w = np.zeros(d)
            for j in range(p):
                s, m = starts[j], chain_length[j]
                c = counts[s : s + sizes[j]]
                total = c.sum()
                if total > 0:
                    tail = np.cumsum(c[:m][::-1])[::-1]
                    share = tail / total
                    if kind == "balanced":
                        # centred within the chain's rows (a missing level has its own
                        # free level, so the chain's residuals sum to zero on their own)
                        chain = tail[0] if m > 0 else 0.0
                        rest = np.clip(1.0 - tail / chain, 0.0, 1.0) if chain > 0 else 0.0
                        share = share * rest
                    w[s : s + m] = np.sqrt(share)
        else:
            raise ValueError(
                f"penalty_weights must be one of {PENALTY_WEIGHTS} or an array; got {kind!r}."
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


def _as_chain_length(chain_length, sizes: np.ndarray) -> np.ndarray:
    """Chain lengths: integers in [0, size of the block], one per block."""
    arr = np.asarray(chain_length)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"chain_length must be an array of integers, got dtype {arr.dtype}")
    if arr.shape != sizes.shape:
        raise ValueError(f"chain_length must have shape {sizes.shape}, got {arr.shape}")
    if arr.size and (np.any(arr < 0) or np.any(arr.astype(np.float64) > sizes)):
        raise ValueError("chain_length must be in [0, block size] for every block")
    return arr.astype(np.intp)


def block_suffix_sums(values: np.ndarray, block_ptr: np.ndarray) -> np.ndarray:
    """Suffix sums within blocks: ``S[k] = Σ_{m ≥ k, m in the block of k} values[m]``."""
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 1:
        raise ValueError(f"values must be 1-D, got shape {values.shape}")
    block_ptr = _as_block_ptr(block_ptr, values.shape[0], "len(values)")
    return _suffix_sums(values, np.repeat(block_ptr[1:], np.diff(block_ptr)))


def _suffix_sums(values: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """:func:`block_suffix_sums` with ``ends`` (the end offset of every level's block)
    taken from offsets validated once; only the length is checked (O(1))."""
    values = np.asarray(values, dtype=np.float64)
    if values.shape != ends.shape:
        raise ValueError(f"values must have shape {ends.shape}, got {values.shape}")
    c = np.cumsum(values[::-1])[::-1]
    c = np.append(c, 0.0)
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
        self.weights = np.array(weights, dtype=np.float64, copy=True)
        if self.weights.shape != (d,):
            raise ValueError(f"weights must have length {d}; got shape {self.weights.shape}.")
        self.weights[self.block_ptr[:-1]] = 0.0
        self.counts = np.ones(d) if counts is None else np.asarray(counts, dtype=np.float64)
        if self.counts.shape != (d,):
            raise ValueError(f"counts must have length {d}; got shape {self.counts.shape}.")
        sizes = np.diff(self.block_ptr)
        kinds = as_kinds(kinds, p)
        self.kinds: tuple[str, ...] = (
            infer_kinds(self.block_ptr, self.weights) if kinds is None else kinds
        )
        self._kind = [get_kind(k) for k in self.kinds]
        #: block index -> its ``_grid.GridBlock`` (the pair terms; their rules are
        #: block-level: no per-level weight, value, λ_max and KKT from the structure)
        self.grids = {
            j: _grid_of(k, int(self.block_ptr[j + 1] - self.block_ptr[j]), j)
            for j, k in enumerate(self.kinds) if get_kind(k).step == STEP_PYTHON
        }  # fmt: skip
        for j in self.grids:
            self.weights[self.block_ptr[j] : self.block_ptr[j + 1]] = 0.0
        #: the last gradient map's edge multipliers per grid block (warm starts)
        self._grid_u: dict[int, np.ndarray] = {}
        #: the KKT tolerance a solver checks the grids' violations against (set by CD):
        #: a grid's gradient map is then resolved only as far as that decision needs
        self.grid_tol: float | None = None
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
        #: per block, the sign its jumps must have (0: either; ±1: a monotone chain)
        self.directions = np.array([k.direction for k in self._kind], dtype=np.int8)
        #: per level, whether level k is joined to level k − 1 in its chain (ω_k > 0):
        #: the edges a monotone block orders, at every λ (uint8 for the CD kernel)
        self.linked = ((self.weights > 0) & ~self.is_start).astype(np.uint8)
        #: per level, the direction of its block on linked edges (0 elsewhere)
        self.edge_direction = np.where(
            self.linked.astype(bool), self.directions[self.block_of], 0
        ).astype(np.int8)
        self.has_direction = bool(np.any(self.edge_direction != 0))

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

    def grid_cells(self, j: int) -> slice:
        """The levels of θ that are grid block j's cells."""
        s = int(self.block_ptr[j])
        return slice(s, s + self.grids[j].n_cells)

    def value(self, theta: np.ndarray) -> float:
        """pen(θ) = Σ_k ω_k |θ_k − θ_{k−1}| within chains, plus Σ_e ω_e |D_e θ| of grids."""
        out = 0.0
        if theta.size >= 2:
            out = float(np.dot(self.weights[1:], np.abs(theta[1:] - theta[:-1])))
        for j, grid in self.grids.items():
            out += grid.penalty(theta[self.grid_cells(j)])
        return out

    def jumps(self, theta: np.ndarray) -> np.ndarray:
        """Boolean mask of the levels k where θ_k ≠ θ_{k−1} within a block (the support).

        A grid block's levels are marked where the cell differs from a neighbour across
        an edge (the cell at the edge's far end).
        """
        jump = np.zeros(theta.shape, dtype=bool)
        jump[1:] = theta[1:] != theta[:-1]
        jump[self.is_start] = False
        for j, grid in self.grids.items():
            s = int(self.block_ptr[j])
            jump[s : self.block_ptr[j + 1]] = False
            cells = theta[self.grid_cells(j)]
            jump[s + grid.edges[grid.difference(cells) != 0, 1]] = True
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

        λ_max = max_{j, l ≥ 1, ω_jl > 0} |S_jl| / ω_jl (design.md §2); on the edges of a
        monotone chain of sign σ, (−σ S_jl)₊ / ω_jl (a flat edge is optimal while
        σS_jl ≥ −λω_jl, so a gradient pushing against the order needs no λ).
        """
        grid_max = 0.0
        for j, grid in self.grids.items():
            cells = self.grid_cells(j)
            grid_max = max(grid_max, grid.lambda_max(grad_hist[cells], self.counts[cells]))
        S = _suffix_sums(grad_hist, self._block_ends())
        mask = self.weights > 0
        if not np.any(mask):
            return grid_max
        # a monotone edge (direction σ) stays flat while σS_l ≥ −λω_l: only −σS_l counts
        sd = self.edge_direction[mask]
        need = np.where(sd == 0, np.abs(S[mask]), np.maximum(-sd * S[mask], 0.0))
        return max(float(np.max(need / self.weights[mask])), grid_max)

    def _block_ends(self) -> np.ndarray:
        """The end offset of every level's block, from the offsets validated at
        construction (computed once per offsets array: the KKT checks of a fit need
        no new validation)."""
        cached = getattr(self, "_ends_cache", None)
        if cached is None or cached[0] is not self.block_ptr:
            bp = self.block_ptr
            cached = (bp, np.repeat(bp[1:], np.diff(bp)))
            self._ends_cache = cached
        return cached[1]

    def edge_gradients(self, grad_hist: np.ndarray, fit_intercept: bool = True) -> np.ndarray:
        """S_jl = Σ_{k ≥ l} g_jk per level (plus μ_j Σ_{k≥l} n_jk without an intercept).

        At an optimum |S_jl| ≤ λ ω_jl on a flat edge and S_jl = −λ ω_jl sign(jump) on a
        jump (design.md §2); without an intercept the constraint's multiplier μ_j
        (chosen so that S_j0 = 0) enters.
        """
        ends = self._block_ends()
        S = _suffix_sums(grad_hist, ends)
        if not fit_intercept:
            N = _suffix_sums(self.counts, ends)
            starts = self.block_ptr[:-1]
            with np.errstate(invalid="ignore", divide="ignore"):
                mu = np.where(N[starts] > 0, -S[starts] / N[starts], 0.0)
            S = S + mu[self.block_of] * N
        return S

    def shape_violation(self, theta: np.ndarray) -> float:
        """Largest step against a monotone block's order (0 when θ has every shape)."""
        if not self.has_direction or theta.size < 2:
            return 0.0
        back = -self.edge_direction[1:] * (theta[1:] - theta[:-1])
        return float(max(back.max(), 0.0))

    def enforce_shape(self, theta: np.ndarray) -> np.ndarray:
        """θ with every monotone run made monotone by a running max (min), in place.

        For the rounding of a combination of ordered points (a line search between two
        of them), which can leave steps of a few ulps against the order.
        """
        if not self.has_direction:
            return theta
        for k in np.flatnonzero(self.edge_direction):
            if self.edge_direction[k] > 0:
                if theta[k] < theta[k - 1]:
                    theta[k] = theta[k - 1]
            elif theta[k] > theta[k - 1]:
                theta[k] = theta[k - 1]
        return theta

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
        if len(self._groups) == 1 and not self.grids:
            viol = get_kind(self.kinds[0]).kkt(S, bound, jump, sign)
        else:
            viol = np.zeros_like(S)
            for name, blocks in self._groups.items():
                if get_kind(name).step == STEP_PYTHON:
                    continue  # block-level rule, below
                m = np.isin(self.block_of, blocks)
                viol[m] = get_kind(name).kkt(S[m], bound[m], jump[m], sign[m])
        # an edge of weight 0 decouples its two levels, whatever the kind: |S_l|
        loose = (self.weights == 0) & ~self.is_start
        if np.any(loose):
            viol = np.where(loose, np.abs(S), viol)
        # S_j0 is the intercept's (or the multiplier's) condition, checked elsewhere
        viol[self.is_start] = 0.0
        if viol.size == 0:
            return np.zeros(len(self.block_ptr) - 1)
        per_block = np.maximum.reduceat(viol, self.block_ptr[:-1])
        # the grids' violations decide ``kkt <= grid_tol`` only when every other block
        # meets it; otherwise a bound from a few sweeps is enough (``decide=inf``)
        decide = getattr(self, "grid_tol", None)  # (a penalty pickled before it had one)
        if decide is not None and self.grids:
            others = np.delete(per_block, list(self.grids))
            if others.size and float(others.max()) > decide:
                decide = np.inf
        for j in self.grids:
            per_block[j] = self.grid_violation(j, grad_hist, theta, lam, decide=decide)
        return per_block

    def grid_violation(self, j: int, grad_hist: np.ndarray, theta: np.ndarray,
                       lam: float, metric: np.ndarray | None = None,
                       decide: float | None = None) -> float:  # fmt: skip
        """Grid block j's KKT rule: its gradient map (``_grid.grid_gradient_map``).

        Parameters
        ----------
        j : int
            A grid block.
        grad_hist : ndarray of shape (d,)
            Bin sums of the gradient.
        theta : ndarray of shape (d,)
            Current coefficients.
        lam : float
            λ.
        metric : ndarray, optional
            The block's curvature (default: the cells' share of the rows).
        decide : float, optional
            The tolerance the violation is compared with (``grid_gradient_map``):
            resolved only as far as that comparison needs; an upper bound either way.

        Returns
        -------
        float
            The violation in the gradient's units.
        """
        cells = self.grid_cells(j)
        viol, step = self.grids[j].gradient_map(
            grad_hist[cells], theta[cells], lam, self.counts[cells], metric=metric,
            warm_u=self._grid_u.get(j), decide=decide,
        )  # fmt: skip
        self._grid_u[j] = step.u
        return viol


def _grid_of(kind, size: int, j: int):
    """The ``_grid.GridBlock`` a grid block's kind name carries (``_grid.GridKind``),
    checked against the block's size (this module does not import ``_grid``, which
    imports its weights: the block's own methods give its λ_max and KKT rule)."""
    block = getattr(kind, "block", None)
    if block is None or not hasattr(block, "n_cells"):
        raise ValueError(
            f"block {j} has kind 'grid' but no grid structure: give its kind as "
            "penalty._grid.GridKind(grid_block(...))."
        )
    if block.n_cells > size:
        raise ValueError(
            f"block {j}: its grid has {block.n_cells} observed cells but the block has "
            f"{size} levels."
        )
    return block


def by_chain_weights(kind, counts: np.ndarray, given: np.ndarray, chains: list) -> np.ndarray:
    """Penalty weights of a block of several chains (``(first, length, …)`` each).

    Varying coefficients (``bin(x):C(g)``, the estimators' ``by=``): a named weighting
    gives the chain of group level g the weights of a plain chain on that level's rows,
    times sqrt(N_g / N) (the level's share of the rows, so that a block of one level has
    exactly the plain chain's weights; "uniform" weighs every edge 1). Every chain start
    is a break (ω = 0: no penalty across levels); given weights are kept elsewhere.

    Parameters
    ----------
    kind : str or ndarray
        A named weighting (``"balanced"``, ``"theory"``, ``"uniform"``) or given weights.
    counts : ndarray of shape (m,)
        The block's weighted level counts.
    given : ndarray of shape (m,)
        The weights computed for the block as one chain (kept for a weight array).
    chains : list of tuple
        ``(first level, number of levels, ...)`` of every chain of the block.

    Returns
    -------
    ndarray of shape (m,)
        ω of the block, 0 at every chain start.
    """
    if isinstance(kind, str):
        w = np.zeros(len(counts))
        total = counts.sum()
        for first, m, *_ in chains:
            c = counts[first : first + m]
            if m > 1 and c.sum() > 0 and total > 0:
                cw = penalty_weights(kind, c, np.array([0, m], dtype=np.intp))
                w[first : first + m] = cw * (np.sqrt(c.sum() / total) if kind != "uniform" else 1)
    else:
        w = np.array(given, dtype=np.float64, copy=True)
    for first, *_ in chains:
        w[first] = 0.0
    return w
