"""The grid block kind in the engine (design.md §10, issue 25): a pair block's cells
fitted by CD with its exact grid step, next to TV chains, equal to cvxpy.

What is proven here, on designs built directly (the formula door's own proof is
``tests/formula/test_pair_terms.py``): CD with a grid block reaches cvxpy's optimum of
the same objective (gaussian, binomial, poisson; row weights, an offset, an empty cell,
no intercept) to 1e-7 in relative objective, its margins hold to 1e-10, its reported KKT
violation (the grid's gradient map) is ≤ tol; λ_max is the smallest λ at which the grid
is exactly 0; FISTA and the Gram backend refuse the kind by name; identical grid blocks
are never merged.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

from binarsity_stats.design._design import BinnedDesign
from binarsity_stats.engine._solvers import Prepared
from binarsity_stats.penalty._grid import GridKind, grid_block, grid_weights
from binarsity_stats.penalty._penalty import penalty_weights


def _case(seed, family, n=500, Ka=4, Kb=3, weights=False, offset=False):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, Ka, n)
    b = rng.integers(0, Kb, n)
    b[a == Ka - 1] = np.minimum(b[a == Ka - 1], Kb - 2)  # the cell (Ka−1, Kb−1) is empty
    cell = a * Kb + b
    obs = np.unique(cell)
    eta = 0.4 * (a >= 2) - 0.3 * (b >= 1) + 0.8 * ((a >= 2) & (b >= 1))
    off = 0.2 * rng.normal(size=n) if offset else None
    full = eta + (0.0 if off is None else off)
    if family == "gaussian":
        y = full + rng.normal(size=n)
    elif family == "binomial":
        y = rng.binomial(1, 1 / (1 + np.exp(-full))).astype(float)
    else:
        y = rng.poisson(np.exp(full)).astype(float)
    sw = rng.uniform(0.5, 2.0, n) if weights else None
    s = np.ones(n) if sw is None else sw
    cnt = np.bincount(cell, weights=s, minlength=Ka * Kb).reshape(Ka, Kb)
    wa, wb = grid_weights(cnt, "balanced")
    grid = grid_block(obs, (Ka, Kb), wa, wb)
    codes = np.vstack([a, b, np.searchsorted(obs, cell)]).astype(np.uint8)
    bp = np.array([0, Ka, Ka + Kb, Ka + Kb + len(obs)])
    lev = np.concatenate([np.bincount(a, s, Ka), np.bincount(b, s, Kb), np.ones(len(obs))])
    w = penalty_weights("balanced", lev, bp)
    design = BinnedDesign(codes, bp, kinds=("tv", "tv", GridKind(grid)), offset=off,
                          sample_weight=sw)  # fmt: skip
    return design, y, w, grid, bp, s


def _cvxpy(design, y, family, prob, grid, bp, s, lam, intercept=True):
    """The objective as cvxpy writes it, and its optimum."""
    n, d = design.n_rows, int(bp[-1])
    X = np.zeros((n, d))
    for j in range(3):
        X[np.arange(n), bp[j] + design.codes[j]] = 1.0
    th, b0 = cp.Variable(d), cp.Variable()
    off = 0.0 if design.offset is None else design.offset
    eta = X @ th + (b0 if intercept else 0.0) + off
    W = s.sum()
    if family == "gaussian":
        loss = cp.sum(cp.multiply(s, 0.5 * cp.square(eta) - cp.multiply(y, eta))) / W
    elif family == "binomial":
        loss = cp.sum(cp.multiply(s, cp.logistic(eta) - cp.multiply(y, eta))) / W
    else:
        loss = cp.sum(cp.multiply(s, cp.exp(eta) - cp.multiply(y, eta))) / W
    w = prob.weights
    pen = 0
    for j in range(2):
        a, e = bp[j], bp[j + 1]
        pen += cp.sum(cp.multiply(w[a + 1 : e], cp.abs(th[a + 1 : e] - th[a : e - 1])))
    g = bp[2]
    pen += cp.sum(cp.multiply(grid.edge_weights,
                              cp.abs(th[g + grid.edges[:, 1]] - th[g + grid.edges[:, 0]])))  # fmt: skip
    cnt = s @ X  # the weighted counts, in the user's units
    cons = [cnt[bp[j] : bp[j + 1]] @ th[bp[j] : bp[j + 1]] == 0 for j in range(2)]
    cons.append(grid.margin_matrix(cnt[g:]) @ th[g:] == 0)
    problem = cp.Problem(cp.Minimize(loss + lam * pen), cons)
    problem.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    return problem.value, (lambda t, c: _value(loss + lam * pen, th, b0, t, c))


def _value(expr, th, b0, t, c):
    th.value, b0.value = t, c
    return float(expr.value)


@pytest.mark.parametrize(
    "family, weights, offset",
    [("gaussian", False, False), ("binomial", True, False), ("poisson", False, True),
     ("gaussian", True, True)],
)  # fmt: skip
def test_cd_with_a_grid_block_equals_cvxpy(family, weights, offset):
    design, y, w, grid, bp, s = _case(3, family, weights=weights, offset=offset)
    prep = Prepared.from_design(design, y, family=family, penalty_weights=w)
    lmax = prep.lambda_max()
    lam = 0.05 * lmax
    tol = 1e-8
    sol = prep.solve(lam, tol=tol)
    assert sol.converged and sol.kkt_violation <= tol * prep.tol_scale
    best, value_at = _cvxpy(design, y, family, prep.prob, grid, bp, s, lam)
    ours = value_at(sol.coef, sol.intercept)
    assert ours <= best + 1e-7 * abs(best)
    assert abs(ours - best) <= 1e-7 * abs(best)
    cells = sol.coef[bp[2] :]
    assert np.any(cells != 0)  # the interaction is found
    M = grid.margin_matrix(sol.bin_counts[bp[2] :])
    assert np.abs(M @ cells).max() <= 1e-10 * np.abs(M).sum(axis=1).max() * np.abs(cells).max()


def test_without_an_intercept_the_margins_still_identify_the_grid():
    design, y, w, grid, bp, s = _case(5, "gaussian")
    y = y + 3.0
    prep = Prepared.from_design(design, y, family="gaussian", penalty_weights=w,
                                fit_intercept=False)  # fmt: skip
    lam = 0.05 * prep.lambda_max()
    sol = prep.solve(lam, tol=1e-8)
    assert sol.converged
    best, value_at = _cvxpy(design, y, "gaussian", prep.prob, grid, bp, s, lam, intercept=False)
    assert abs(value_at(sol.coef, 0.0) - best) <= 1e-7 * abs(best)


def test_lambda_max_is_where_the_grid_vanishes():
    design, y, w, grid, bp, s = _case(7, "binomial")
    # main effects unpenalised: λ_max is the grid's alone
    w = w.copy()
    w[: bp[2]] = 0.0
    prep = Prepared.from_design(design, y, family="binomial", penalty_weights=w)
    lmax = prep.lambda_max()
    above = prep.solve(lmax * (1 + 1e-6), tol=1e-9)
    assert np.all(above.coef[bp[2] :] == 0.0)
    below = prep.solve(lmax * (1 - 1e-2), tol=1e-9)
    assert np.abs(below.coef[bp[2] :]).max() > 0


def test_fista_and_the_gram_backend_refuse_the_grid_by_name():
    design, y, w, *_ = _case(1, "gaussian")
    prep = Prepared.from_design(design, y, family="gaussian", penalty_weights=w)
    with pytest.raises(ValueError, match="grid"):
        prep.solve(0.01, solver="fista")
    with pytest.raises(ValueError, match="grid"):
        prep.solve(0.01, backend="gram")


def test_identical_grid_blocks_are_not_merged_and_split_the_surface():
    design, y, w, grid, bp, s = _case(2, "gaussian")
    codes = np.vstack([design.codes, design.codes[2:]])
    bp2 = np.append(bp, bp[-1] + grid.n_cells)
    twin = BinnedDesign(codes, bp2, kinds=("tv", "tv", GridKind(grid), GridKind(grid)))
    prep = Prepared.from_design(twin, y, family="gaussian", penalty_weights=np.append(w, w[bp[2]:]))
    assert prep.merged is None
    one = Prepared.from_design(design, y, family="gaussian", penalty_weights=w)
    lam = 0.05 * one.lambda_max()
    s1, s2 = one.solve(lam, tol=1e-9), prep.solve(lam, tol=1e-9)
    # two copies of a TV-penalised block: the sum of the two surfaces carries the same
    # penalty at half of each (TV is positively homogeneous): the same objective
    assert abs(s1.objective - s2.objective) <= 1e-7 * abs(s1.objective)


@pytest.mark.parametrize("family", ["gaussian", "binomial"])
@pytest.mark.parametrize("share", [0.05, 0.3])
def test_a_16_by_16_fit_proves_its_steps_mostly_without_lps(monkeypatch, family, share):
    """The CD's grid steps are warm-started and asked for a share of its tolerance: their
    region solves are proven by their own gap or the repaired dual, not by an LP per
    step (the code before solved one or more LPs at every step and KKT check); the fit
    still equals cvxpy's optimum and meets the margins."""
    from binarsity_stats.penalty import _grid

    calls = []
    real = _grid._edge_lp

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(_grid, "_edge_lp", counted)
    design, y, w, grid, bp, s = _case(11, family, n=2000, Ka=16, Kb=16)
    prep = Prepared.from_design(design, y, family=family, penalty_weights=w)
    lam = share * prep.lambda_max()
    calls.clear()  # λ_max is an LP of its own
    tol = 1e-8
    sol = prep.solve(lam, tol=tol)
    assert sol.converged and sol.kkt_violation <= tol * prep.tol_scale
    assert len(calls) <= 4  # the code before: one or more per step (6 to 17 here)
    best, value_at = _cvxpy(design, y, family, prep.prob, grid, bp, s, lam)
    ours = value_at(sol.coef, sol.intercept)
    assert abs(ours - best) <= 1e-7 * abs(best)
    cells = sol.coef[bp[2] :]
    M = grid.margin_matrix(sol.bin_counts[bp[2] :])
    assert np.abs(M @ cells).max() <= 1e-10 * np.abs(M).sum(axis=1).max() * max(np.abs(cells).max(), 1.0)
