"""The two-feature grid block (design.md §10): its exact step, certificate and λ_max.

A pair term ``bin(a):bin(b)`` owns one parameter θ_kl per *observed* cell (k, l) of the
K_a × K_b grid of the two features' bins (a cell without a training row carries no
parameter). Its penalty is the anisotropic TV of the grid graph,

    λ Σ_e ω_e |D_e θ|,   D_e θ = θ_{k+1,l} − θ_{kl} (an a-edge) or θ_{k,l+1} − θ_{kl} (a b-edge),

over the edges between adjacent observed cells, and it is identified against the main
effects by the weighted zero margins M θ = 0: Σ_l n_kl θ_kl = 0 for every k (the
a-margins) and Σ_k n_kl θ_kl = 0 for every l (the b-margins).

The block step solves, for a diagonal curvature h > 0 and targets z,

    min_θ ½ Σ h_kl (θ_kl − z_kl)² + λ Σ_e ω_e |D_e θ|   s.t.  M θ = 0.        (P)

It has no finite exact algorithm. Its dual, with edge multipliers |u_e| ≤ λω_e and
margin multipliers ν, s = Dᵀu + Mᵀν and θ(u, ν) = z − s / h, is

    max  g(u, ν) = sᵀz − ½ sᵀ H⁻¹ s,

and the dual is maximised by exact block coordinate ascent over three blocks (Barbero
& Sra, JMLR 2018, "modular proximal optimisation"; design.md §10): the a-chains and
b-chains of the grid, where maximising over one family of edges is the dual of a weighted
1-D TV prox on every row (column) — solved exactly by the package's DP
(``_fused_lasso.weighted_fused_lasso``), all rows as one chain with λ = 0 at the breaks —
and the margins, a small linear system in the metric H. After the margin step θ(u, ν)
meets the margins, and the duality gap is a sum of non-negative terms,

    gap = Σ_e (λω_e |D_e θ| − u_e D_e θ) − νᵀ M θ,

computed without cancellation: that is the certificate (h(θ − z) + Dᵀu + Mᵀν = 0 holds
by construction, |u_e| ≤ λω_e by clipping). Since (P) is strongly convex in the metric
H, ½‖θ − θ*‖²_H ≤ gap. An exact solve on the fused regions the iterate reveals (one
parameter per region, the jump signs fixed, the margins as constraints; ``_polish_regions``)
makes the answer exactly piecewise constant and θ = 0 exact for λ ≥ λ_max. It is proven
optimal, in this order of cost, by (1) its own gap against the ascent's dual point, a sum
of non-negative terms (``_region_gap``); (2) that dual point moved to stationarity at the
region solution by the least slack-weighted correction of the fused edges' multipliers
(``_repair_dual``: a d × d solve; it fits in the slack when the regions are right and the
ascent is near its optimum, as in a warm-started CD step); (3) an LP (``_active_set``,
HiGHS), needed only when the ascent is far from its optimum (cold starts near a
degenerate optimum, where it converges sublinearly).

λ_max (:func:`grid_lambda_max`) is the smallest λ for which θ = 0 has a certificate:
the linear programme min λ s.t. Dᵀu + Mᵀν = −g, |u_e| ≤ λω_e (HiGHS), g the block's
gradient at θ = 0 (g = −h z for the step).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..kernels import _fused_lasso
from ._grid_regions import (
    _dual_gap,
    _fused_candidates,
    _margin_solver,
    _polish_regions,
    _region_gap,
    _repair_dual,
)

__all__ = [
    "GridBlock",
    "GridKind",
    "grid_gradient_map",
    "GridStep",
    "grid_block",
    "grid_block_step",
    "grid_lambda_max",
    "grid_objective",
    "grid_weights",
]

#: Curvatures below this share of the largest are raised to it (a cell whose rows all
#: have weight 0 in a fold, or a curvature that underflowed): the metric H must be > 0.
H_FLOOR = 1e-12


def _as_grid_array(x: ArrayLike, shape: tuple[int, int], name: str) -> NDArray[np.float64]:
    arr = np.asarray(x, dtype=np.float64)
    if arr.shape != shape:
        raise ValueError(f"{name} must have shape {shape}; got {arr.shape}.")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"{name} must be finite and non-negative.")
    return arr


@dataclass(frozen=True, eq=False)
class GridBlock:
    """The structure of one pair block: its observed cells, edges, weights and margins.

    Build it with :func:`grid_block`. Cells are numbered 0..d−1 in the order of their
    flat grid id k·K_b + l (the codes of the block's rows).

    Attributes
    ----------
    shape : tuple of int
        (K_a, K_b), the bins of the two features.
    cells : ndarray of shape (d,)
        Flat grid ids k·K_b + l of the observed cells, increasing.
    edges : ndarray of shape (E, 2)
        Local cell indices (i, j) of each edge, D_e θ = θ_j − θ_i; the b-edges (within a
        row k) first, then the a-edges (within a column l).
    edge_weights : ndarray of shape (E,)
        ω_e ≥ 0 (0: the edge is not penalised and decouples its cells).
    n_b_edges : int
        Number of b-edges (the first ones of ``edges``).
    margins : tuple of bool
        Whether the a-margins (Σ_l n_kl θ_kl = 0 per k) and the b-margins
        (Σ_k n_kl θ_kl = 0 per l) are imposed.
    """

    shape: tuple[int, int]
    cells: NDArray[np.intp]
    edges: NDArray[np.intp]
    edge_weights: NDArray[np.float64]
    n_b_edges: int
    margins: tuple[bool, bool] = (True, True)
    # the two chain orders: positions of the cells, and each position's edge (or −1)
    _row_order: NDArray[np.intp] = field(repr=False, default=None)
    _row_edge: NDArray[np.intp] = field(repr=False, default=None)
    _col_order: NDArray[np.intp] = field(repr=False, default=None)
    _col_edge: NDArray[np.intp] = field(repr=False, default=None)

    @property
    def n_cells(self) -> int:
        """Number of observed cells d (the block's parameters)."""
        return len(self.cells)

    def cell_rows(self) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
        """The grid coordinates (k, l) of every observed cell."""
        return np.divmod(self.cells, self.shape[1])

    def margin_matrix(self, counts: ArrayLike) -> NDArray[np.float64]:
        """M (one row per imposed margin with a positive count) for the cell counts n."""
        n = np.asarray(counts, dtype=np.float64)
        k, l = self.cell_rows()
        rows = []
        for on, idx, size in ((self.margins[0], k, self.shape[0]), (self.margins[1], l, self.shape[1])):
            if not on:
                continue
            m = np.zeros((size, len(n)))
            m[idx, np.arange(len(n))] = n
            rows.append(m[np.any(m != 0, axis=1)])
        return np.vstack(rows) if rows else np.zeros((0, len(n)))

    def difference(self, theta: ArrayLike) -> NDArray[np.float64]:
        """D θ: the difference across every edge."""
        t = np.asarray(theta, dtype=np.float64)
        return t[self.edges[:, 1]] - t[self.edges[:, 0]]

    def difference_t(self, u: ArrayLike) -> NDArray[np.float64]:
        """Dᵀ u for edge values u."""
        u = np.asarray(u, dtype=np.float64)
        d = self.n_cells
        return np.bincount(self.edges[:, 1], u, d) - np.bincount(self.edges[:, 0], u, d)

    def penalty(self, theta: ArrayLike) -> float:
        """Σ_e ω_e |D_e θ| (λ not included)."""
        return float(np.sum(self.edge_weights * np.abs(self.difference(theta))))

    def lambda_max(self, grad: ArrayLike, counts: ArrayLike) -> float:
        """:func:`grid_lambda_max` of this block (for ``BinarsityPenalty``)."""
        return grid_lambda_max(self, grad, counts)

    def gradient_map(self, grad, theta, lam, counts, metric=None, warm_u=None, decide=None):
        """:func:`grid_gradient_map` of this block (its KKT rule, for ``BinarsityPenalty``)."""
        return grid_gradient_map(self, grad, theta, lam, counts, metric=metric, warm_u=warm_u,
                                 decide=decide)  # fmt: skip


def _chain(order: NDArray[np.intp], pos_of: NDArray[np.intp], step: int, line: NDArray[np.intp]):
    """Edges of the chains along one axis: consecutive cells of a line whose flat ids
    differ by ``step``; returns (edge pairs, position of each edge in the chain)."""
    flat = pos_of[order]
    pos = np.flatnonzero((np.diff(flat) == step) & (np.diff(line[order]) == 0)) + 1
    return np.stack([order[pos - 1], order[pos]], axis=1), pos


def grid_block(
    cells: ArrayLike,
    shape: tuple[int, int],
    omega_a: ArrayLike | None = None,
    omega_b: ArrayLike | None = None,
    margins: tuple[bool, bool] = (True, True),
) -> GridBlock:
    """The structure of a pair block from its observed cells and edge weights.

    Parameters
    ----------
    cells : array_like of int or bool array of shape (K_a, K_b)
        The observed cells: flat ids k·K_b + l, or a mask of the grid.
    shape : tuple of int
        (K_a, K_b).
    omega_a : array_like of shape (K_a − 1, K_b), optional
        Weight of the a-edge between (k, l) and (k + 1, l). Default 1.
    omega_b : array_like of shape (K_a, K_b − 1), optional
        Weight of the b-edge between (k, l) and (k, l + 1). Default 1.
    margins : tuple of bool, default=(True, True)
        Impose the a-margins and the b-margins.

    Returns
    -------
    GridBlock

    Raises
    ------
    ValueError
        If a cell id is outside the grid or repeated, or a weight array has the wrong
        shape or a negative or non-finite value.
    """
    Ka, Kb = (int(shape[0]), int(shape[1]))
    if Ka < 1 or Kb < 1:
        raise ValueError(f"shape must be two positive sizes; got {shape}.")
    c = np.asarray(cells)
    if c.dtype == bool:
        if c.shape != (Ka, Kb):
            raise ValueError(f"cells as a mask must have shape {(Ka, Kb)}; got {c.shape}.")
        c = np.flatnonzero(c.ravel())
    c = c.astype(np.intp).ravel()
    if c.size and (c.min() < 0 or c.max() >= Ka * Kb):
        raise ValueError(f"cells must be flat ids in [0, {Ka * Kb}).")
    if np.any(np.diff(np.sort(c)) == 0):
        raise ValueError("cells must not repeat.")
    c = np.sort(c)
    wa = np.ones((max(Ka - 1, 0), Kb)) if omega_a is None else _as_grid_array(omega_a, (Ka - 1, Kb), "omega_a")
    wb = np.ones((Ka, max(Kb - 1, 0))) if omega_b is None else _as_grid_array(omega_b, (Ka, Kb - 1), "omega_b")
    k, l = np.divmod(c, Kb)
    d = len(c)
    row_order = np.arange(d, dtype=np.intp)  # cells sorted by (k, l)
    col_order = np.lexsort((k, l)).astype(np.intp)  # by (l, k)
    eb, pos_b = _chain(row_order, c, 1, k)
    ea, pos_a = _chain(col_order, c, Kb, l)
    wb_e = wb[k[eb[:, 0]], l[eb[:, 0]]] if len(eb) else np.zeros(0)
    wa_e = wa[k[ea[:, 0]], l[ea[:, 0]]] if len(ea) else np.zeros(0)
    row_edge = np.full(d, -1, np.intp)
    row_edge[pos_b] = np.arange(len(eb))
    col_edge = np.full(d, -1, np.intp)
    col_edge[pos_a] = len(eb) + np.arange(len(ea))
    return GridBlock(
        shape=(Ka, Kb),
        cells=c,
        edges=np.concatenate([eb, ea]).reshape(-1, 2).astype(np.intp),
        edge_weights=np.concatenate([wb_e, wa_e]).astype(np.float64),
        n_b_edges=len(eb),
        margins=(bool(margins[0]), bool(margins[1])),
        _row_order=row_order,
        _row_edge=row_edge,
        _col_order=col_order,
        _col_edge=col_edge,
    )


def grid_weights(counts: ArrayLike, kind: str = "theory") -> tuple[NDArray, NDArray]:
    """Edge weights of a grid by the rule of 1-D chains applied to every row and column.

    Parameters
    ----------
    counts : array_like of shape (K_a, K_b)
        Weighted cell counts n_kl.
    kind : {"theory", "balanced", "uniform"}, default="theory"
        The 1-D rule (``penalty_weights``): along each column l the a-edge into row k
        gets the weight of level k of the chain of counts n_{·l}; along each row k the
        b-edge into column l the weight of level l of the chain n_{k·}; each chain's
        weights are scaled by √(its share of the rows), as the by-group chains of
        design.md §7 are.

    Returns
    -------
    omega_a : ndarray of shape (K_a − 1, K_b)
    omega_b : ndarray of shape (K_a, K_b − 1)
    """
    from ._penalty import penalty_weights

    n = np.asarray(counts, dtype=np.float64)
    if n.ndim != 2:
        raise ValueError(f"counts must be a 2-D grid; got shape {n.shape}.")
    total = n.sum()

    def along(mat: NDArray) -> NDArray:
        # one chain per row of mat; its weight for the edge into level m, m ≥ 1
        out = np.zeros((mat.shape[0], max(mat.shape[1] - 1, 0)))
        for i, row in enumerate(mat):
            if row.sum() <= 0 or mat.shape[1] < 2:
                continue
            w = penalty_weights(kind, row, np.array([0, len(row)]))
            out[i] = w[1:] * (np.sqrt(row.sum() / total) if kind != "uniform" else 1.0)
        return out

    omega_b = along(n)
    omega_a = along(n.T).T
    return omega_a, omega_b


def grid_objective(block: GridBlock, theta, z, h, lam: float) -> float:
    """½ Σ h (θ − z)² + λ Σ_e ω_e |D_e θ| (the margins not checked)."""
    t = np.asarray(theta, dtype=np.float64)
    return float(0.5 * np.sum(h * (t - z) ** 2) + lam * block.penalty(t))


@dataclass
class GridStep:
    """The result of :func:`grid_block_step`.

    Attributes
    ----------
    theta : ndarray of shape (d,)
        The solution; it meets the margins to rounding.
    u : ndarray of shape (E,)
        Edge multipliers, |u_e| ≤ λω_e.
    nu : ndarray of shape (m,)
        Margin multipliers (rows of ``block.margin_matrix(counts)``).
    gap : float
        Certified duality gap P(θ) − g(u, ν) ≥ ½‖θ − θ*‖²_H.
    n_iter : int
        Sweeps of the dual block ascent.
    converged : bool
        Whether ``gap <= tol``.
    polished : bool
        Whether the exact solve on the fused regions was kept.
    """

    theta: NDArray[np.float64]
    u: NDArray[np.float64]
    nu: NDArray[np.float64]
    gap: float
    n_iter: int
    converged: bool
    polished: bool


def _chain_dual(order, edge_pos, t, h, lam_w):
    """Exact weighted TV prox of every chain of one axis at targets t; the edge
    multipliers of its optimality conditions (prefix sums of h(θ − t) within runs)."""
    tt = np.ascontiguousarray(t[order])
    hh = np.ascontiguousarray(h[order])
    has = edge_pos >= 0
    lw = np.zeros(len(order))
    lw[has] = lam_w[edge_pos[has]]
    th = np.empty_like(tt)
    _fused_lasso.weighted_fused_lasso_py(tt, hh, lw, th)
    r = hh * (th - tt)
    cs = np.cumsum(r)
    # run starts: no edge into the position; u at an edge position i = Σ r over [start, i)
    # (a zero bound decouples the chain too: its multiplier is 0, a new run starts)
    start = np.maximum.accumulate(np.where(lw > 0, 0, np.arange(len(order))))
    before = np.where(start > 0, cs[start - 1], 0.0)
    u_pos = cs - r - before  # Σ_{m < i} r_m within the run (cs[i-1] − before)
    return edge_pos[has], u_pos[has]


def grid_block_step(
    block: GridBlock,
    z: ArrayLike,
    h: ArrayLike,
    lam: float,
    counts: ArrayLike,
    *,
    tol: float | None = None,
    max_iter: int = 20000,
    warm_u: ArrayLike | None = None,
    polish: bool = True,
    accuracy: float | None = None,
    lp: bool = True,
) -> GridStep:
    """Solve the grid block step (P) of the module docstring, certified by its duality gap.

    The dual block ascent runs; at sweeps 1, 2, 4, 8, … the fused regions its iterate
    reveals are solved exactly (one parameter per region) and that point's gap, a sum of
    non-negative terms (``_region_gap``), is checked against ``tol``: a certificate
    without a linear programme. Only when the gap cannot reach ``tol`` (it is below the
    rounding of the ascent) are the regions proven optimal by the LP (HiGHS), from the
    16th sweep on, once the guess of the fused edges has stopped changing.

    Parameters
    ----------
    block : GridBlock
        The block's structure.
    z : array_like of shape (d,)
        Targets.
    h : array_like of shape (d,)
        Curvatures ≥ 0 (values below ``H_FLOOR`` × max h are raised to it).
    lam : float
        λ ≥ 0 (the edge bounds are λω_e).
    counts : array_like of shape (d,)
        The n_kl of the margins (≥ 0).
    tol : float, optional
        Stop when the duality gap is ≤ tol. Default: from ``accuracy`` when given, else
        1e-20 × (½ Σ h z² + tiny), i.e. a relative error of about 1e-10 on θ.
    max_iter : int, default=20000
        Sweeps of the dual block ascent.
    warm_u : array_like of shape (E,), optional
        Edge multipliers to start from (a previous step's ``u``).
    polish : bool, default=True
        Solve on the fused regions (at the check points and at the end).
    accuracy : float, optional
        When ``tol`` is not given: stop once ‖H(θ − θ*)‖_∞ ≤ accuracy is certified
        (θ* the exact step; ‖H(θ − θ*)‖_∞² ≤ 2 · gap · max h, so tol = accuracy² /
        (2 max h)). The CD solver passes a small share of its KKT tolerance.
    lp : bool, default=True
        Whether an LP may prove the regions (False: the step returns after ``max_iter``
        sweeps with its gap, a bound that is still valid).

    Returns
    -------
    GridStep
    """
    d = block.n_cells
    z = np.asarray(z, dtype=np.float64)
    h = np.asarray(h, dtype=np.float64)
    n = np.asarray(counts, dtype=np.float64)
    for name, arr in (("z", z), ("h", h), ("counts", n)):
        if arr.shape != (d,):
            raise ValueError(f"{name} must have length {d} (the block's cells); got {arr.shape}.")
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} must be finite.")
    if np.any(h < 0) or np.any(n < 0):
        raise ValueError("h and counts must be non-negative.")
    lam = float(lam)
    if not np.isfinite(lam) or lam < 0:
        raise ValueError(f"lam must be finite and >= 0; got {lam}.")
    if accuracy is not None:
        accuracy = float(accuracy)
        if not np.isfinite(accuracy) or accuracy <= 0:
            raise ValueError(f"accuracy must be finite and > 0; got {accuracy}.")
    hmax = float(h.max()) if d else 0.0
    h = np.maximum(h, H_FLOOR * hmax) if hmax > 0 else np.ones(d)
    lam_w = lam * block.edge_weights
    E = len(lam_w)
    M = block.margin_matrix(n)
    solve_margins = _margin_solver(block, M, h, n)
    scale = 0.5 * float(np.sum(h * z * z))
    if tol is None:
        if accuracy is not None:
            tol = accuracy * accuracy / (2.0 * float(h.max(initial=1.0)))
        else:
            tol = 1e-20 * scale + 1e-300
    u = np.zeros(E) if warm_u is None else np.clip(np.asarray(warm_u, np.float64), -lam_w, lam_w)
    nb = block.n_b_edges
    is_a = np.arange(E) >= nb

    def margin_step(s_edges):
        nu = solve_margins(M @ (z - s_edges / h)) if len(M) else np.zeros(0)
        s_m = M.T @ nu
        return nu, s_m

    s_u = block.difference_t(u)
    nu, s_m = margin_step(s_u)
    theta = z - (s_u + s_m) / h
    gap = np.inf
    it = 0
    check = 1
    last_guess = None
    polished = certified = False
    while True:
        it += 1
        # the b-chains (rows k) given the a-edges and the margins
        s_a = block.difference_t(np.where(is_a, u, 0.0))
        idx, val = _chain_dual(block._row_order, block._row_edge, z - (s_a + s_m) / h, h, lam_w)
        u[idx] = val
        s_b = block.difference_t(np.where(is_a, 0.0, u))
        nu, s_m = margin_step(s_a + s_b)
        idx, val = _chain_dual(block._col_order, block._col_edge, z - (s_b + s_m) / h, h, lam_w)
        u[idx] = val
        np.clip(u, -lam_w, lam_w, out=u)
        s_u = block.difference_t(u)
        nu, s_m = margin_step(s_u)
        theta = z - (s_u + s_m) / h
        gap = _region_gap(block, theta, theta, h, lam_w, u, M, nu)
        if gap <= tol or it >= max_iter:
            break
        if not (polish and E and it == check):
            continue
        check *= 2
        guesses = _fused_candidates(block, theta, u, h, lam_w, gap)[:2]
        # the regions of the likeliest guess solved exactly: certified by their own gap
        cand = _polish_regions(block, np.sign(block.difference(theta)), z, h, lam_w, M, guesses[0])[0]
        gap_c = _region_gap(block, cand, theta, h, lam_w, u, M, nu)
        if gap_c <= tol:
            theta, gap, polished = cand, gap_c, True
            break
        # or by the ascent's dual point moved to stationarity at the region solution
        # (a d × d solve: tried when the regions look right — a warm start's first sweeps —
        # at sweeps 8 and 16, then when the guess of the fused edges stayed the same)
        same = last_guess is not None and np.array_equal(guesses[0], last_guess)
        near = gap_c <= 1e-6 * scale or (it >= 8 and gap_c <= 1e-2 * scale and (same or it <= 16))
        fixed = _repair_dual(block, cand, z, h, lam_w, M, u, nu) if near else None
        if fixed is not None:
            u_r, nu_r, excess = fixed
            theta_r = z - (block.difference_t(u_r) + (M.T @ nu_r if len(M) else 0.0)) / h
            gap_r = _region_gap(block, cand, theta_r, h, lam_w, u_r, M, nu_r)
            # the LP's own acceptance (stationarity to 1e-10 of the right-hand side, the
            # bounds to 1e-9): below that the gap is the margins' rounding, νᵀMθ
            resid = float(np.max(np.abs(h * (theta_r - cand)), initial=0.0))
            rhs = float(np.max(np.abs(h * (z - cand)), initial=0.0))
            proven = excess <= 1e-9 and resid <= 1e-10 * rhs
            if gap_r <= tol or proven:
                theta, u, nu, gap, polished = cand, u_r, nu_r, gap_r, True
                certified = proven
                break
        last_guess = guesses[0]
        if it < 16 or not lp:
            continue
        # the LP certificate — tried once the guess of the fused edges has stopped
        # changing (LPs cost)
        if not same and check <= 1024:
            continue
        for fused in guesses:
            cert = _active_set(block, np.sign(block.difference(theta)), fused, z, h, lam_w, M)
            if cert is not None:
                theta, u, nu = cert
                gap = _dual_gap(block, theta, z, h, lam_w, u, M, nu)
                polished = certified = True
                break
        if polished:
            break
    if polish and E and not polished:
        fused = _fused_candidates(block, theta, u, h, lam_w, gap)[-1]
        cand = _polish_regions(block, np.sign(block.difference(theta)), z, h, lam_w, M, fused)[0]
        if cand is not None:
            # kept when it is a better primal point for the same dual one (a smaller gap
            # is a lower P: both are P − g(u, ν))
            gap_c = _region_gap(block, cand, theta, h, lam_w, u, M, nu)
            if gap_c <= gap:
                theta, polished, gap = cand, True, gap_c
    gap = max(gap, 0.0)
    # a certified region solve is optimal to rounding whatever tol says
    return GridStep(theta, u, nu, gap, it, gap <= tol or certified, polished)


def _active_set(block, sign, fused, z, h, lam_w, M, max_rounds: int = 4):
    """Exact solution by a primal-dual active set on the edges, or None.

    From a guess of the fused edges and the jumps' signs: solve on the regions
    (``_polish_regions``), then look for multipliers proving it optimal — u_e = λω_e
    sign_e on the jumps, |u_e| ≤ t λω_e on the fused edges, Dᵀu + Mᵀν = −h(θ − z), t
    minimal (an LP). t ≤ 1 certifies θ (returned with u, ν); otherwise the fused edges
    whose multipliers saturate the min-max (the bottleneck cut) open, with the sign of
    their multiplier, and the regions are solved again.
    """
    fused = fused.copy()
    pen = lam_w > 0
    for _ in range(max_rounds):
        theta, fused, sign = _polish_regions(block, sign, z, h, lam_w, M, fused)
        Dt = block.difference(theta)
        jump = np.abs(Dt) > 0
        fixed = np.where(jump, lam_w * np.sign(Dt), 0.0)
        free = ~jump & pen
        res = _edge_lp(block, -h * (theta - z), M, lam_w, free=free, fixed=fixed)
        if res is None:
            return None
        t, u, nu = res
        if t <= 1.0 + 1e-9:
            return theta, np.clip(u, -lam_w, lam_w), nu
        sat = free & (np.abs(u) >= (1.0 - 1e-7) * t * lam_w)
        if not sat.any():
            return None
        fused = free & ~sat
        sign = np.where(sat, np.sign(u), np.sign(Dt))
    return None


def _edge_lp(block, rhs, M, cap, free, fixed, strict=False):
    """min t s.t. Dᵀu + Mᵀν = rhs, |u_e| ≤ t·cap_e on the ``free`` edges, u_e = fixed_e
    elsewhere (HiGHS); (t, u, ν), or None when infeasible."""
    from scipy import sparse
    from scipy.optimize import linprog

    d = block.n_cells
    E, m = len(cap), M.shape[0]
    scale = float(np.abs(rhs).max()) + float(np.abs(fixed).max(initial=0.0))
    if scale == 0.0:
        return 0.0, np.zeros(E), np.zeros(m)
    ar = np.arange(E)
    Dt = sparse.csr_matrix(
        (np.r_[np.ones(E), -np.ones(E)], (np.r_[block.edges[:, 1], block.edges[:, 0]], np.r_[ar, ar])),
        shape=(d, E),
    )
    # ν is free: rows of M scaled to unit size keep HiGHS well conditioned
    mrow = np.abs(M).max(axis=1) if m else np.ones(0)
    mrow = np.where(mrow > 0, mrow, 1.0)
    A_eq = sparse.hstack([Dt, sparse.csr_matrix((M / mrow[:, None]).T), sparse.csr_matrix((d, 1))],
                         format="csr")  # fmt: skip
    fr = np.flatnonzero(free)
    nf = len(fr)
    sel = sparse.csr_matrix((np.ones(nf), (np.arange(nf), fr)), shape=(nf, E))
    c = sparse.csr_matrix(cap[fr][:, None] / scale)
    zm = sparse.csr_matrix((nf, m))
    A_ub = sparse.vstack([sparse.hstack([sel, zm, -c]), sparse.hstack([-sel, zm, -c])], format="csr")
    cost = np.zeros(E + m + 1)
    cost[-1] = 1.0
    fx = fixed / scale
    bounds = [(None, None) if free[e] else (fx[e], fx[e]) for e in range(E)]
    bounds += [(None, None)] * m + [(0.0, None)]
    for method in ("highs-ds", "highs-ipm"):
        res = linprog(cost, A_ub=A_ub if nf else None, b_ub=np.zeros(2 * nf) if nf else None,
                      A_eq=A_eq, b_eq=rhs / scale, bounds=bounds, method=method,
                      options={"primal_feasibility_tolerance": 1e-10,
                               "dual_feasibility_tolerance": 1e-10})  # fmt: skip
        if res.status in (0, 2):
            break
    if res.status == 2:
        return None
    if res.status != 0:
        if not strict:
            return None  # no certificate: the caller keeps iterating
        raise RuntimeError(f"the grid block's linear programme failed ({res.message}).")
    x = res.x * scale
    return float(res.x[-1]), x[:E], x[E : E + m] / mrow


def grid_lambda_max(block: GridBlock, grad: ArrayLike, counts: ArrayLike) -> float:
    """The smallest λ for which θ = 0 solves the block (λ_max of a pair block).

    θ = 0 is optimal iff some u with |u_e| ≤ λω_e and ν satisfy g + Dᵀu + Mᵀν = 0,
    g the block's gradient at θ = 0; this is the linear programme min λ over (u, ν, λ)
    (HiGHS). It is also the pair's screening score (design.md §10).

    Parameters
    ----------
    block : GridBlock
        The block's structure.
    grad : array_like of shape (d,)
        The gradient of the smooth part with respect to the block's cells at θ = 0.
    counts : array_like of shape (d,)
        The n_kl of the margins.

    Returns
    -------
    float
        λ_max (0 when g is in the span of the margins; ``inf`` when no λ makes θ = 0
        optimal, e.g. cells cut off by zero-weight edges and not fixed by a margin).
    """
    d = block.n_cells
    g = np.asarray(grad, dtype=np.float64)
    if g.shape != (d,) or not np.all(np.isfinite(g)):
        raise ValueError(f"grad must be {d} finite values (the block's cells).")
    M = block.margin_matrix(counts)
    w = block.edge_weights
    res = _edge_lp(block, -g, M, w, free=w > 0, fixed=np.zeros(len(w)), strict=True)
    return float("inf") if res is None else res[0]


class GridKind(str):
    """The block kind name ``"grid"`` carrying its block's :class:`GridBlock`.

    A design's ``kinds`` (one name per block) travel with every copy of the design (a
    CV fold, a resample, a selection of blocks); a grid block's structure travels with
    its name: ``GridKind(block) == "grid"`` and ``.block`` is the structure, which
    ``BinarsityPenalty`` reads as the block's metadata. The block's levels are its
    ``block.n_cells`` observed cells in the order of ``block.cells``; levels past them
    (a new row's cell that was empty at training) carry no parameter (θ = 0).

    Parameters
    ----------
    block : GridBlock
        The structure of the pair block.
    """

    block: GridBlock

    def __new__(cls, block: GridBlock) -> GridKind:
        if not isinstance(block, GridBlock):
            raise TypeError(f"GridKind needs a GridBlock; got {type(block).__name__}.")
        obj = super().__new__(cls, "grid")
        obj.block = block
        return obj

    def __reduce__(self):
        return (GridKind, (self.block,))


def grid_gradient_map(
    block: GridBlock, grad: ArrayLike, theta: ArrayLike, lam: float, counts: ArrayLike,
    metric: ArrayLike | None = None, warm_u: ArrayLike | None = None,
    accuracy: float | None = None, decide: float | None = None,
) -> tuple[float, GridStep]:
    """The grid block's optimality measure at θ: its gradient mapping (the KKT rule).

    With the block's gradient g at θ and a diagonal metric H > 0, θ⁺ is the block step
    (P) at targets θ − g / H; θ is optimal for the block iff θ⁺ = θ, and
    ‖H (θ − θ⁺)‖_∞ is a violation in the gradient's units, as the chains' KKT rule is.
    θ⁺ is certified by its duality gap: the measure is exact to √(2 gap · max H), and
    that bound is added, so the violation returned is never below the exact one.

    Parameters
    ----------
    block : GridBlock
    grad : array_like of shape (d,)
        The smooth part's gradient with respect to the block's cells at θ.
    theta : array_like of shape (d,)
        The block's cells.
    lam : float
        λ.
    counts : array_like of shape (d,)
        The n_kl of the margins.
    metric : array_like of shape (d,), optional
        H (default: the cells' share of the rows, the gaussian curvature).
    warm_u : array_like of shape (E,), optional
        Edge multipliers to start the step from.
    accuracy : float, optional
        The step stops once the measure is certified to this (``grid_block_step``'s
        ``accuracy``). Default: 1e-9 × (‖g‖_∞ + ‖H θ‖_∞) — far below the solvers' KKT
        tolerance (1e-7 of the gradient's units) — or 1 % of the measure when that is
        larger (a large violation is not met by any tolerance: its digits do not matter).
    decide : float, optional
        The tolerance the violation is compared with (a solver's KKT tolerance). A
        first step, at most 16 sweeps and no LP, stops here when its bounds already
        decide (the measure minus its error above ``decide``, or plus its error at most
        ``decide``); the violation returned is still an upper bound.

    Returns
    -------
    violation : float
    step : GridStep
        The step to θ⁺ (its ``gap`` is the certificate).
    """
    g = np.asarray(grad, dtype=np.float64)
    t = np.asarray(theta, dtype=np.float64)
    n = np.asarray(counts, dtype=np.float64)
    if metric is None:
        total = n.sum()
        metric = n / total if total > 0 else np.ones(len(n))
    H = np.asarray(metric, dtype=np.float64)
    hmax = float(H.max()) if len(H) else 0.0
    H = np.maximum(H, H_FLOOR * hmax) if hmax > 0 else np.ones(len(H))
    hmax = float(H.max(initial=0.0))
    if accuracy is not None:
        step = grid_block_step(block, t - g / H, H, lam, n, warm_u=warm_u, accuracy=accuracy)
        viol = float(np.max(np.abs(H * (t - step.theta)), initial=0.0))
        return viol + float(np.sqrt(2.0 * step.gap * hmax)), step
    unit = float(np.max(np.abs(g), initial=0.0)) + float(np.max(np.abs(H * t), initial=0.0))
    if unit == 0.0:
        step = grid_block_step(block, t - g / H, H, lam, n, warm_u=warm_u)
        return float(np.max(np.abs(H * (t - step.theta)), initial=0.0)), step
    # a large violation needs only a few digits (whatever the solver's tolerance, it is
    # not met): first to 1e-3 of the gradient, then, unless the measure is ≥ 100× its
    # error, to 1e-9 of the gradient or 1 % of the measure, warm-started
    decided = False
    if decide is not None:
        step = grid_block_step(block, t - g / H, H, lam, n, warm_u=warm_u,
                               accuracy=1e-3 * unit, max_iter=16, lp=False)  # fmt: skip
        viol = float(np.max(np.abs(H * (t - step.theta)), initial=0.0))
        err = float(np.sqrt(2.0 * step.gap * hmax))
        decided = viol - err > decide or viol + err <= decide
    else:
        step = grid_block_step(block, t - g / H, H, lam, n, warm_u=warm_u, accuracy=1e-3 * unit)
        viol = float(np.max(np.abs(H * (t - step.theta)), initial=0.0))
        err = float(np.sqrt(2.0 * step.gap * hmax))
    if not decided and err > 1e-9 * unit and err > 0.01 * viol:
        acc = max(1e-9 * unit, 0.01 * viol)
        step = grid_block_step(block, t - g / H, H, lam, n, warm_u=step.u, accuracy=acc)
        viol = float(np.max(np.abs(H * (t - step.theta)), initial=0.0))
        err = float(np.sqrt(2.0 * step.gap * hmax))
    return viol + err, step
