"""The grid block step's certificates and region solves (design.md §10; ``_grid``'s helpers).

``_grid.grid_block_step`` runs the dual block ascent; this module holds what turns its
iterate into a proven answer: the margin step's solve (``_margin_solver``), the guesses
of the fused edges (``_fused_candidates``), the exact solve on their regions
(``_polish_regions``), the duality gap of a region solution as a sum of non-negative
terms (``_region_gap``; ``_dual_gap``, ``_dual_value`` directly), and the ascent's dual
point moved to stationarity at a region solution (``_repair_dual``). The LP
certificate (``_grid._edge_lp``, ``_grid._active_set``) stays in ``_grid``. Plain NumPy
and SciPy; every function takes the block's structure (a ``_grid.GridBlock``) as its
first argument.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__: list[str] = []


def _pinv_psd(A: NDArray[np.float64]) -> NDArray[np.float64]:
    """Pseudo-inverse of a symmetric positive semidefinite matrix (eigenvalue cut)."""
    import scipy.linalg

    if A.size == 0:
        return A
    w, V = scipy.linalg.eigh(A, driver="ev", check_finite=False)
    keep = w > w.max() * 1e-12 * len(w)
    return (V[:, keep] / w[keep]) @ V[:, keep].T


def _margin_solver(block, M: NDArray[np.float64], h: NDArray[np.float64], n):
    """ν ↦ the margin step's solve: a function b ↦ A⁺b for A = M H⁻¹ Mᵀ, b ∈ range(M).

    A is singular exactly along the null space of Mᵀ: one vector per connected component
    of the bipartite graph of the a-rows and b-columns joined by a cell with a positive
    count (+1 on its a-margins, −1 on its b-margins; Mᵀv = 0 since each such cell enters
    one a-row and one b-row with the same n_kl). A + Σ s v vᵀ is then positive definite
    and equals A on range(A) = range(M) ⊥ v, so its Cholesky solve is A⁺b there (a
    Cholesky of an m × m matrix instead of an eigendecomposition per step). Falls back to
    the eigenvalue pseudo-inverse when the factor fails (rounding on a degenerate H).
    """
    import scipy.linalg

    m = M.shape[0]
    if m == 0:
        return lambda b: np.zeros(0)
    A = (M / h) @ M.T
    if block.margins[0] and block.margins[1]:
        from scipy.sparse import coo_matrix
        from scipy.sparse.csgraph import connected_components

        k, l = block.cell_rows()
        pos = n > 0
        rows_a = np.unique(k[pos])
        ra = len(rows_a)
        ia = np.searchsorted(rows_a, k[pos])
        ib = ra + np.searchsorted(np.unique(l[pos]), l[pos])
        graph = coo_matrix((np.ones(len(ia)), (ia, ib)), shape=(m, m))
        n_comp, label = connected_components(graph, directed=False)
        V = np.zeros((m, n_comp))
        V[np.arange(m), label] = np.where(np.arange(m) < ra, 1.0, -1.0)
        s = float(np.trace(A)) / m
        A = A + s * (V @ V.T)
    try:
        factor = scipy.linalg.cho_factor(A, check_finite=False)
    except np.linalg.LinAlgError:
        A_pinv = _pinv_psd((M / h) @ M.T)
        return lambda b: A_pinv @ b
    return lambda b: scipy.linalg.cho_solve(factor, b, check_finite=False)


def _repair_dual(block, theta, z, h, lam_w, M, u0, nu0):
    """A dual point for a region solution θ: the ascent's (u0, ν0) moved to stationarity.

    θ's jumps fix their multipliers (λω_e sign D_e θ); the fused edges keep u0 plus the
    least correction δ, weighted by their slack s_e = λω_e − |u0_e| (an edge at its
    bound does not move), with δν, that restores h(θ − z) + Dᵀu + Mᵀν = 0: δ = S² D φ,
    δν = c M φ, (Dᵀ S² D + c MᵀM) φ = ρ (ρ the stationarity residual; a sparse d × d
    LU with a tiny ridge and iterative refinement; ρ ⊥ its null space, the region
    solutions meeting the margins). Clipped to the bounds, the point is dual feasible
    whatever happened, so ``_region_gap`` at it is a valid certificate: when the
    correction fits in the slack it is ~0 and θ is proven optimal without an LP.
    Returns (u, ν, excess) — excess the largest |u_e| / λω_e − 1 before the clip — or
    None when the factorisation fails.
    """
    from scipy import sparse
    from scipy.sparse.linalg import splu

    d = block.n_cells
    Dt = block.difference(theta)
    jump = Dt != 0
    fused = (lam_w > 0) & ~jump
    u = np.where(jump, lam_w * np.sign(Dt), np.where(fused, u0, 0.0))
    rho = h * (z - theta) - block.difference_t(u) - (M.T @ nu0 if len(M) else 0.0)
    w = np.where(fused, np.maximum(lam_w - np.abs(u), 0.0), 0.0) ** 2
    e0, e1 = block.edges[:, 0], block.edges[:, 1]
    # the weighted Laplacian Dᵀ S² D plus c MᵀM, sparse (SuperLU: no threaded BLAS)
    G = sparse.coo_matrix((np.concatenate([w, w, -w, -w]),
                           (np.concatenate([e0, e1, e0, e1]), np.concatenate([e0, e1, e1, e0]))),
                          shape=(d, d)).tocsc()  # fmt: skip
    c = 0.0
    if len(M):
        mmax = float(np.abs(M).max())
        c = float(w.max(initial=0.0)) / (mmax * mmax) if mmax > 0 else 0.0
        c = c if c > 0 else 1.0
        Ms = sparse.csr_matrix(M)
        G = (G + c * (Ms.T @ Ms)).tocsc()
    ridge = 1e-13 * float(G.diagonal().sum()) / max(d, 1) + 1e-300
    try:
        factor = splu((G + ridge * sparse.identity(d, format="csc")).tocsc())
    except RuntimeError:  # exactly singular
        return None
    phi = np.zeros(d)
    r = rho
    for _ in range(4):  # refinement: the ridge's error shrinks geometrically on range(G)
        phi += factor.solve(r)
        r = rho - G @ phi
    u = u + w * block.difference(phi)
    pen = lam_w > 0
    excess = float(np.max(np.abs(u[pen]) / lam_w[pen] - 1.0, initial=0.0))
    u = np.clip(u, -lam_w, lam_w)
    nu = nu0 + c * (M @ phi) if len(M) else nu0
    return u, nu, excess


def _region_gap(block, theta, theta_d, h, lam_w, u, M, nu) -> float:
    """P(θ) − g(u, ν) for a margin-feasible θ, as a sum of non-negative terms.

    With θ_d = z − (Dᵀu + Mᵀν)/h the dual iterate, the gap of any θ is

        ½‖θ − θ_d‖²_H + Σ_e |D_e θ| (λω_e − u_e sign D_e θ) − νᵀ M θ,

    every term ≥ 0 but the last (rounding: M θ = 0); on a region solution the fused
    edges contribute exactly 0. Computed this way it has no cancellation, so a gap far
    below the rounding of P itself is resolved (P − g computed directly cannot go below
    ~1e-16 · P).
    """
    Dt = block.difference(theta)
    jump = Dt != 0
    slack = np.abs(Dt[jump]) * (lam_w[jump] - u[jump] * np.sign(Dt[jump]))
    val = 0.5 * float(np.sum(h * (theta - theta_d) ** 2)) + float(np.sum(slack))
    if len(nu):
        val -= float(nu @ (M @ theta))
    return max(val, 0.0)


def _dual_value(block, z, h, u, M, nu) -> float:
    """g(u, ν) = sᵀz − ½ sᵀH⁻¹s with s = Dᵀu + Mᵀν."""
    s = block.difference_t(u) + M.T @ nu
    return float(s @ z - 0.5 * np.sum(s * s / h))


def _dual_gap(block, theta, z, h, lam_w, u, M, nu) -> float:
    """P(θ) − g(u, ν) for a margin-feasible θ and a dual-feasible (u, ν)."""
    P = 0.5 * float(np.sum(h * (theta - z) ** 2)) + float(np.sum(lam_w * np.abs(block.difference(theta))))
    return max(P - _dual_value(block, z, h, u, M, nu), 0.0)


def _fused_candidates(block, theta, u, h, lam_w, gap) -> list[NDArray[np.bool_]]:
    """Guesses of the edges fused at the optimum, most likely first.

    An edge fused at the optimum has |D_e θ| ≤ 2√(2 gap / min h) at the iterate (the
    certified distance), and an edge whose multiplier is strictly inside its bound is
    fused at the optimum of the dual iterate. The guesses: the edges with |u_e| inside
    the bound; thresholds on |D_e θ| at the three widest gaps of their sorted values on
    a log scale below the bound; the bound itself.
    """
    Dt = np.abs(block.difference(theta))
    pen = lam_w > 0
    eps = 1e-13 * (np.abs(theta).max(initial=0.0) + 1e-300)
    bound = 2.0 * np.sqrt(2.0 * max(gap, 0.0) / h.min()) + eps
    v = np.sort(np.log(np.maximum(Dt[pen & (Dt <= bound)], eps)))
    v = np.concatenate([[np.log(eps)], v, [np.log(bound)]])
    widest = np.argsort(np.diff(v))[::-1][:3]
    interior = pen & (np.abs(u) < lam_w * (1.0 - 1e-6)) & (Dt <= bound)
    out = [interior]
    for t in [float(np.exp(0.5 * (v[i] + v[i + 1]))) for i in widest] + [bound]:
        mask = pen & (Dt <= t)
        if not any(np.array_equal(mask, m) for m in out):
            out.append(mask)
    return out


def _polish_regions(block, sign, z, h, lam_w, M, fused):
    """Exact minimiser on the regions of the ``fused`` edges with the jumps' ``sign``.

    On the regions (connected components of the fused edges) the objective is a
    quadratic with a diagonal curvature Q (the regions' Σ h) and a linear term
    λ Σ ω_e sign_e D_e θ, minimised under the margins A φ = 0 (A = M B, B the regions'
    indicator): by its multipliers, A Q⁻¹ Aᵀ μ = A Q⁻¹ r, φ = Q⁻¹ (r − Aᵀ μ), an m × m
    system (m the margins) instead of a null-space basis of A. When A has full column
    rank (no region surface meets the margins) θ = 0 exactly. A jump whose sign the
    solution reverses (or zeroes) is fused and the regions solved again. Returns the
    solution, the final fused edges and signs.
    """
    import scipy.linalg
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    d = block.n_cells
    m = M.shape[0]
    fused = fused.copy()
    sign0 = np.where(fused, 0.0, sign)
    hz = h * z
    for _ in range(len(fused) + 1):
        e = block.edges[fused]
        graph = coo_matrix((np.ones(len(e)), (e[:, 0], e[:, 1])), shape=(d, d))
        R, region = connected_components(graph, directed=False)
        Q = np.bincount(region, h, R)
        rhs = np.bincount(region, hz - block.difference_t(lam_w * sign0), R)
        if m:
            A = np.zeros((m, R))
            for i in range(m):  # A = M B: each margin's counts summed over the regions
                A[i] = np.bincount(region, M[i], R)
            AQ = A / Q
            # LAPACK's dsyev: numpy's dsyevd runs threaded BLAS even at m = 32 (30 times
            # slower on a loaded machine)
            w, V = scipy.linalg.eigh(AQ @ A.T, driver="ev", check_finite=False)
            keep = w > max(float(w.max()), 0.0) * 1e-14 * m
            if int(keep.sum()) >= R:
                return np.zeros(d), fused, sign0
            mu = (V[:, keep] / w[keep]) @ (V[:, keep].T @ (AQ @ rhs))
            phi = (rhs - A.T @ mu) / Q
        else:
            phi = rhs / Q
        cand = phi[region]
        Dc = block.difference(cand)
        # edges inside one region have D_e θ = 0 exactly; a jump must keep its sign
        wrong = (lam_w > 0) & (region[block.edges[:, 0]] != region[block.edges[:, 1]]) & (np.sign(Dc) != sign0)
        if not wrong.any():
            return cand, fused, sign0
        fused |= wrong
        sign0 = np.where(fused, 0.0, sign0)
    return cand, fused, sign0
