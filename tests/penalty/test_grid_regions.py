"""The grid step's certificates and region solves (``penalty/_grid_regions.py``; issue 25).

What is proven here: the margin step's Cholesky with the margins' null vectors gives the
pseudo-inverse's answer (connected and disconnected grids, one margin family); the
region solve by its multipliers equals the null-space solve it replaced; a region
solution's gap as a sum of non-negative terms equals P(θ) − g(u, ν) computed directly;
the repaired dual is within its bounds, and stationary at an optimal region solution.
"""

from __future__ import annotations

import numpy as np
import pytest

from binarsity_stats.penalty._grid import (
    grid_block,
    grid_block_step,
    grid_objective,
    grid_weights,
)


def _random_case(rng, h_spread=2.0):
    Ka, Kb = (int(k) for k in rng.integers(2, 7, 2))
    mask = rng.random((Ka, Kb)) > 0.25
    counts = rng.integers(1, 20, (Ka, Kb)) * mask
    wa, wb = grid_weights(counts, "theory")
    block = grid_block(mask, (Ka, Kb), wa, wb)
    d = block.n_cells
    z = rng.normal(size=d)
    h = 10.0 ** rng.uniform(-h_spread, 0.0, d)
    n = counts.ravel()[block.cells].astype(float)
    lam = 10.0 ** rng.uniform(-1.5, 0.3)
    return block, z, h, lam, n


def _ref_margin_pinv(M, h):
    """The margin step's A⁺ by an SVD of A = M H⁻¹ Mᵀ (the reference)."""
    return np.linalg.pinv((M / h) @ M.T, rcond=1e-12, hermitian=True)


@pytest.mark.parametrize("shape", ["connected", "two_components", "one_margin"])
def test_margin_solve_is_the_pseudo_inverse(shape):
    from binarsity_stats.penalty._grid_regions import _margin_solver

    rng = np.random.default_rng({"connected": 0, "two_components": 1, "one_margin": 2}[shape])
    Ka, Kb = 6, 5
    mask = rng.random((Ka, Kb)) > 0.2
    if shape == "two_components":  # rows 0-2 meet columns 0-1 only: two bipartite pieces
        mask[:3, 2:] = False
        mask[3:, :2] = False
    block = grid_block(mask, (Ka, Kb), margins=(True, shape != "one_margin"))
    n = rng.integers(1, 30, block.n_cells).astype(float)
    h = 10.0 ** rng.uniform(-3, 0, block.n_cells)
    M = block.margin_matrix(n)
    b = M @ rng.normal(size=block.n_cells)  # the step's right-hand sides lie in range(M)
    nu = _margin_solver(block, M, h, n)(b)
    ref = _ref_margin_pinv(M, h) @ b
    # what the step uses is Mᵀν (ν is free along the null space of Mᵀ)
    np.testing.assert_allclose(M.T @ nu, M.T @ ref, rtol=0, atol=1e-9 * np.abs(M.T @ ref).max())
    # the projected targets meet the margins
    x = rng.normal(size=block.n_cells)
    nu = _margin_solver(block, M, h, n)(M @ x)
    assert np.abs(M @ (x - (M.T @ nu) / h)).max() <= 1e-10 * np.abs(M).max() * np.abs(x).max()


def _null_space_region_solve(block, fused, sign, z, h, lam_w, M):
    """The regions' quadratic minimised through a null-space basis (the reference)."""
    from scipy.linalg import null_space
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    d = block.n_cells
    e = block.edges[fused]
    R, region = connected_components(coo_matrix((np.ones(len(e)), (e[:, 0], e[:, 1])), shape=(d, d)),
                                     directed=False)  # fmt: skip
    B = np.zeros((d, R))
    B[np.arange(d), region] = 1.0
    rhs = B.T @ (h * z - block.difference_t(lam_w * np.where(fused, 0.0, sign)))
    N = null_space(M @ B, rcond=1e-12)
    if N.shape[1] == 0:
        return np.zeros(d)
    return B @ (N @ np.linalg.solve(N.T @ ((B.T @ h)[:, None] * N), N.T @ rhs))


@pytest.mark.parametrize("seed", range(6))
def test_region_solve_equals_the_null_space_solve(seed):
    from binarsity_stats.penalty._grid_regions import _polish_regions

    rng = np.random.default_rng(400 + seed)
    block, z, h, lam, n = _random_case(rng, h_spread=2.0)
    lam_w = lam * block.edge_weights
    M = block.margin_matrix(n)
    ref = grid_block_step(block, z, h, lam, n)  # certified: its regions and signs
    Dt = block.difference(ref.theta)
    fused = (Dt == 0) & (lam_w > 0)
    ours, fused_out, _ = _polish_regions(block, np.sign(Dt), z, h, lam_w, M, fused)
    expected = _null_space_region_solve(block, fused_out, np.sign(Dt), z, h, lam_w, M)
    np.testing.assert_allclose(ours, expected, rtol=0, atol=1e-10 * (1 + np.abs(expected).max()))


@pytest.mark.parametrize("seed", range(4))
def test_region_gap_is_the_duality_gap_and_the_repair_is_a_certificate(seed):
    from binarsity_stats.penalty._grid_regions import _dual_value, _region_gap, _repair_dual

    rng = np.random.default_rng(500 + seed)
    block, z, h, lam, n = _random_case(rng)
    lam_w = lam * block.edge_weights
    M = block.margin_matrix(n)
    res = grid_block_step(block, z, h, lam, n)
    # any dual-feasible point: the gap as a sum of terms equals P − g computed directly
    u = np.clip(res.u + 0.1 * lam_w * rng.normal(size=len(lam_w)), -lam_w, lam_w)
    nu = res.nu + 0.1 * rng.normal(size=len(res.nu))
    theta_d = z - (block.difference_t(u) + M.T @ nu) / h
    direct = grid_objective(block, res.theta, z, h, lam) - _dual_value(block, z, h, u, M, nu)
    ours = _region_gap(block, res.theta, theta_d, h, lam_w, u, M, nu)
    assert abs(ours - direct) <= 1e-10 * (abs(direct) + grid_objective(block, res.theta, z, h, lam))
    # the repair is dual feasible from any point; from the step's own multipliers with
    # the margins' moved, it restores stationarity at the optimal θ
    u_r, nu_r, excess = _repair_dual(block, res.theta, z, h, lam_w, M, u, nu)
    assert np.all(np.abs(u_r) <= lam_w)
    nu_off = res.nu + 1e-6 * rng.normal(size=len(res.nu))
    u_r, nu_r, excess = _repair_dual(block, res.theta, z, h, lam_w, M, res.u, nu_off)
    resid = h * (res.theta - z) + block.difference_t(u_r) + M.T @ nu_r
    assert excess <= 1e-9
    assert np.abs(resid).max() <= 1e-10 * np.abs(h * z).max()
