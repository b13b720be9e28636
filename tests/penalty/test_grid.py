"""The pair (grid) block step of design.md §10: exact, certified, invariant.

What is proven here: the dual block ascent with its region solve reaches cvxpy's optimum
of the grid block step on random small grids (empty cells, ties in z, zero edge weights,
curvatures spread over three orders of magnitude) to 1e-7, with the margins to 1e-10 and
a dual certificate (h(θ − z) + Dᵀu + Mᵀν = 0, |u_e| ≤ λω_e, a duality gap that bounds
the distance to cvxpy's objective); a 1 × K grid with only its row margin is the 1-D
constrained fused lasso; transposing the grid transposes the answer; λ_max (an LP) is
exact: θ = 0 exactly at λ_max·(1 + 1e-6), not at λ_max·(1 − 1e-2). Where the dual ascent
has not certified the optimum within its sweeps the step says so and its gap still bounds
the distance to cvxpy's optimum.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

from binarsity_stats.penalty._grid import (
    grid_block,
    grid_block_step,
    grid_lambda_max,
    grid_objective,
    grid_weights,
)
from binarsity_stats.penalty._penalty import penalty_weights
from binarsity_stats.penalty._prox import constrained_fused_lasso


def _cvxpy_grid(block, z, h, lam, n):
    d = block.n_cells
    th = cp.Variable(d)
    e = block.edges
    obj = 0.5 * cp.sum(cp.multiply(h, cp.square(th - z)))
    if len(e):
        obj += lam * cp.sum(cp.multiply(block.edge_weights, cp.abs(th[e[:, 1]] - th[e[:, 0]])))
    M = block.margin_matrix(n)
    cons = [M @ th == 0] if len(M) else []
    prob = cp.Problem(cp.Minimize(obj), cons)
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-13, tol_gap_rel=1e-13, tol_feas=1e-13)
    return th.value, prob.value


def _random_case(rng, h_spread=3.0):
    Ka, Kb = (int(k) for k in rng.integers(2, 7, 2))
    mask = rng.random((Ka, Kb)) > 0.25  # empty cells carry no parameter
    counts = rng.integers(1, 20, (Ka, Kb)) * mask
    wa, wb = grid_weights(counts, "theory")
    if rng.random() < 0.4:  # zero-weight edges
        wa = np.where(rng.random(wa.shape) < 0.3, 0.0, wa)
    block = grid_block(mask, (Ka, Kb), wa, wb)
    d = block.n_cells
    z = rng.normal(size=d)
    if rng.random() < 0.4:  # ties in z
        z = np.round(z)
    h = 10.0 ** rng.uniform(-h_spread, 0.0, d)
    n = counts.ravel()[block.cells].astype(float)
    lam = 10.0 ** rng.uniform(-1.5, 0.3)
    return block, z, h, lam, n


def _check_certificate(block, res, z, h, lam, n):
    M = block.margin_matrix(n)
    scale = float(np.abs(h * z).max()) + 1e-300
    # stationarity with the returned multipliers, and their bounds
    resid = h * (res.theta - z) + block.difference_t(res.u) + M.T @ res.nu
    assert np.abs(resid).max() <= 1e-8 * scale
    assert np.all(np.abs(res.u) <= lam * block.edge_weights * (1 + 1e-12) + 1e-15)
    # margins
    if len(M):
        assert np.abs(M @ res.theta).max() <= 1e-10 * (np.abs(M).sum(axis=1).max() * (np.abs(res.theta).max() + 1))


def test_grid_step_equals_cvxpy_or_reports_its_gap():
    converged = 0
    for seed in range(14):
        rng = np.random.default_rng(seed)
        block, z, h, lam, n = _random_case(rng, h_spread=3.0 if seed % 2 else 1.0)
        res = grid_block_step(block, z, h, lam, n, max_iter=4096)
        ref, ref_val = _cvxpy_grid(block, z, h, lam, n)
        P = grid_objective(block, res.theta, z, h, lam)
        # the certified gap bounds our distance to the optimum (cvxpy's accuracy ~1e-10)
        slack = 1e-9 * (abs(ref_val) + 1e-12)
        assert P - ref_val <= res.gap + slack
        assert 0.5 * np.sum(h * (res.theta - ref) ** 2) <= res.gap + slack
        _check_certificate(block, res, z, h, lam, n)
        if res.converged:
            converged += 1
            np.testing.assert_allclose(res.theta, ref, rtol=0, atol=1e-7 * (1 + np.abs(ref).max()))
    # the dual block ascent is slow when h spans orders of magnitude independently of the
    # counts and the optimum has tiny jumps; it then says so (not converged, its gap)
    assert converged >= 10


def test_warm_start_reaches_the_same_optimum():
    rng = np.random.default_rng(3)
    block, z, h, lam, n = _random_case(rng, h_spread=1.0)
    first = grid_block_step(block, z, h, lam, n)
    again = grid_block_step(block, z + 1e-3 * rng.normal(size=z.size), h, lam, n, warm_u=first.u)
    cold = grid_block_step(block, z + 0.0, h, lam, n)
    assert first.converged and again.converged and cold.converged
    np.testing.assert_allclose(first.theta, cold.theta, atol=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_one_row_grid_is_the_chain(seed):
    rng = np.random.default_rng(100 + seed)
    K = int(rng.integers(2, 12))
    counts = rng.integers(1, 9, K).astype(float)
    _, wb = grid_weights(counts[None, :], "uniform")
    block = grid_block(np.ones((1, K), bool), (1, K), None, wb * rng.uniform(0.2, 2, K - 1),
                       margins=(True, False))  # fmt: skip
    z = rng.normal(size=K)
    h = 10.0 ** rng.uniform(-3, 0, K)
    lam = 10.0 ** rng.uniform(-2, 0)
    res = grid_block_step(block, z, h, lam, counts)
    lam_chain = np.concatenate([[0.0], lam * block.edge_weights])
    ref = constrained_fused_lasso(z, h, lam_chain, counts)
    np.testing.assert_allclose(res.theta, ref, atol=1e-9 * (1 + np.abs(ref).max()))


@pytest.mark.parametrize("seed", range(5))
def test_transposing_the_grid_transposes_the_answer(seed):
    rng = np.random.default_rng(200 + seed)
    block, z, h, lam, n = _random_case(rng, h_spread=2.0)
    Ka, Kb = block.shape
    k, l = block.cell_rows()
    mask_t = np.zeros((Kb, Ka), bool)
    mask_t[l, k] = True
    # the same weights on the transposed grid: a-edges become b-edges
    wa = np.zeros((Ka - 1, Kb))
    wb = np.zeros((Ka, Kb - 1))
    for (i, j), w in zip(block.edges, block.edge_weights):
        ki, li = k[i], l[i]
        if k[j] == ki:
            wb[ki, li] = w
        else:
            wa[ki, li] = w
    block_t = grid_block(mask_t, (Kb, Ka), wb.T, wa.T)
    perm = np.searchsorted(block_t.cells, l * Ka + k)  # our cell i is their cell perm[i]
    zt, ht, nt = (np.empty_like(v) for v in (z, h, n))
    zt[perm], ht[perm], nt[perm] = z, h, n
    res = grid_block_step(block, z, h, lam, n)
    res_t = grid_block_step(block_t, zt, ht, lam, nt)
    assert res.converged and res_t.converged
    np.testing.assert_allclose(res_t.theta[perm], res.theta, atol=1e-9 * (1 + np.abs(res.theta).max()))


@pytest.mark.parametrize("seed", range(5))
def test_lambda_max_is_exact(seed):
    rng = np.random.default_rng(300 + seed)
    block, z, h, lam, n = _random_case(rng, h_spread=2.0)
    lmax = grid_lambda_max(block, -h * z, n)
    assert np.isfinite(lmax) and lmax > 0
    above = grid_block_step(block, z, h, lmax * (1 + 1e-6), n)
    assert np.all(above.theta == 0.0)
    below = grid_block_step(block, z, h, lmax * (1 - 1e-2), n, max_iter=2048)
    # below λ_max, θ = 0 is never certified (the step may not reach the tiny optimum)
    assert not (below.converged and np.all(below.theta == 0.0))
    # the certificate at λ_max(1 + 1e-6) is the LP's own: the step's gap is zero there
    assert above.converged


def test_lambda_max_of_margin_only_gradient_is_zero_and_infinite_when_unfixable():
    block = grid_block(np.ones((2, 3), bool), (2, 3))
    n = np.arange(1.0, 7.0)
    M = block.margin_matrix(n)
    # a gradient in the span of the margins is absorbed by ν: λ_max = 0
    assert grid_lambda_max(block, M.T @ np.array([1.0, -2.0, 0.5, 0.0, 3.0]), n) <= 1e-9
    # no margins and no penalised edges: a non-zero gradient can never be balanced
    free = grid_block(np.ones((1, 2), bool), (1, 2), None, np.zeros((1, 1)), margins=(False, False))
    assert grid_lambda_max(free, np.array([1.0, 0.5]), np.ones(2)) == np.inf


def test_grid_weights_follow_the_chain_rule():
    counts = np.array([[3.0, 1.0, 2.0], [1.0, 4.0, 2.0]])
    wa, wb = grid_weights(counts, "uniform")
    assert wa.shape == (1, 3) and wb.shape == (2, 2)
    assert np.all(wa == 1.0) and np.all(wb == 1.0)
    wa, wb = grid_weights(counts, "theory")
    row0 = penalty_weights("theory", counts[0], np.array([0, 3]))[1:]
    np.testing.assert_allclose(wb[0], row0 * np.sqrt(counts[0].sum() / counts.sum()), rtol=1e-14)


def test_bad_input_names_the_argument():
    block = grid_block(np.ones((2, 2), bool), (2, 2))
    with pytest.raises(ValueError, match="z must have length 4"):
        grid_block_step(block, np.zeros(3), np.ones(4), 0.1, np.ones(4))
    with pytest.raises(ValueError, match="lam"):
        grid_block_step(block, np.zeros(4), np.ones(4), -1.0, np.ones(4))
    with pytest.raises(ValueError, match="omega_a"):
        grid_block(np.ones((2, 2), bool), (2, 2), omega_a=np.ones((2, 2)))
    with pytest.raises(ValueError, match="cells"):
        grid_block([0, 4], (2, 2))


# -- speed without giving up the certificate (issue 25, "the block step") -------------


@pytest.mark.parametrize("lam_share", [0.2, 0.6, 1.5])
def test_warm_step_certifies_its_regions_without_an_lp(monkeypatch, lam_share):
    """The CD's steps: warm-started from the last step's multipliers at targets that moved
    a little, a step asked for an accuracy proves its region solve without an LP (by the
    region's own gap or the ascent's dual moved to stationarity), equal to cvxpy's. (The
    code before proved every step by LPs.)"""
    from binarsity_stats.penalty import _grid

    rng = np.random.default_rng(7)
    K = 8
    counts = rng.integers(5, 60, (K, K)).astype(float)
    wa, wb = grid_weights(counts, "theory")
    block = grid_block(counts > 0, (K, K), wa, wb)
    k, l = block.cell_rows()
    n = counts.ravel()
    h = n / n.sum()
    z = 0.5 * ((k >= 4) & (l >= 3)) - 0.3 * (l >= 6) + rng.normal(size=K * K) / np.sqrt(n)
    lam = lam_share * grid_lambda_max(block, -h * z, n)
    first = grid_block_step(block, z, h, lam, n)  # cold: the LP may prove it

    def no_lp(*args, **kwargs):
        raise AssertionError("an LP was solved")

    monkeypatch.setattr(_grid, "_edge_lp", no_lp)
    acc = 1e-9 * np.abs(h * z).max()
    for eps in (1e-5, 1e-6):  # a CD sweep's next step near the fit's optimum
        z2 = z + eps * np.random.default_rng(1).normal(size=z.size)
        res = grid_block_step(block, z2, h, lam, n, accuracy=acc, warm_u=first.u)
        assert res.converged and res.polished
        ref, ref_val = _cvxpy_grid(block, z2, h, lam, n)
        _check_certificate(block, res, z2, h, lam, n)
        np.testing.assert_allclose(res.theta, ref, rtol=0, atol=1e-7 * (1 + np.abs(ref).max()))
        P = grid_objective(block, res.theta, z2, h, lam)
        assert P - ref_val <= res.gap + 1e-9 * (abs(ref_val) + 1e-12)
        if lam_share > 1:
            assert np.all(res.theta == 0.0)  # exactly: the empty surface
