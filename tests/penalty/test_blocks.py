"""Monotone chains (design.md §7): the PAVA block step, its KKT rule, both solvers, λ_max.

What is proven here: the isotonic kernel and its NumPy twin solve the monotone fused
lasso exactly (cvxpy, on random chains with weights, ties, zero-weight levels, unlinked
edges, tiny and huge scales, with and without the constraint); CD and FISTA reach
cvxpy's optimum of small penalised GLMs with increasing, decreasing and TV blocks
(gaussian, binomial, poisson; weights, offsets, no intercept); the KKT rule holds on
simulated data with a known monotone truth and the fitted shapes are ordered (also under
hypothesis); λ_max is exact (flat at λ_max, not below), including when the gradient
pushes against the order.
"""

from __future__ import annotations

import zlib

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from binarsity_stats.penalty._blocks import KINDS, get_kind
from binarsity_stats.penalty._penalty import BinarsityPenalty
from binarsity_stats.penalty._prox import (
    monotone_fused_lasso,
    monotone_fused_lasso_reference,
    prox_monotone,
)
from binarsity_stats.engine._solvers import lambda_max, solve

# ----------------------------------------------------------------------------- kernel


def _chain_objective(x, y, w, lam, linked):
    return 0.5 * np.sum(w * (x - y) ** 2) + np.sum((lam * np.abs(np.diff(x, prepend=x[0])))[linked])


def _cvxpy_chain(y, w, lam, direction, counts, linked):
    K = y.size
    th = cp.Variable(K)
    obj = 0.5 * cp.sum(cp.multiply(w, cp.square(th - y)))
    cons = []
    for k in range(1, K):
        if linked[k]:
            obj += lam[k] * cp.abs(th[k] - th[k - 1])
            cons.append(direction * (th[k] - th[k - 1]) >= 0)
    if counts is not None and counts.sum() > 0:
        cons.append(counts @ th == 0)
    prob = cp.Problem(cp.Minimize(obj), cons)
    prob.solve(solver=cp.CLARABEL)
    return prob.value


def _random_chain(rng):
    K = int(rng.integers(1, 12))
    scale = 10.0 ** rng.uniform(-4, 4)
    y = rng.normal(size=K) * scale
    if rng.random() < 0.3:  # ties
        y = np.round(y / scale) * scale
    w = rng.exponential(size=K)
    empty = rng.random(K) < 0.2  # a bin without rows: no weight, no count
    w[empty] = 0.0
    lam = rng.exponential(size=K) * scale * rng.choice([0.0, 0.1, 1.0])
    counts = None
    if rng.random() < 0.5:
        counts = rng.integers(0, 5, size=K).astype(float)
        counts[empty] = 0.0
    linked = rng.random(K) < 0.85
    linked[0] = False
    return y, w, lam, int(rng.choice([1, -1])), counts, linked, scale


@pytest.mark.parametrize("seed", range(6))
def test_kernel_matches_cvxpy_and_its_numpy_twin(seed):
    rng = np.random.default_rng(seed)
    for _ in range(25):
        y, w, lam, direction, counts, linked, scale = _random_chain(rng)
        x = monotone_fused_lasso(y, w, lam, direction=direction, counts=counts, linked=linked)
        twin = monotone_fused_lasso_reference(y, w, lam, direction, counts, linked)
        np.testing.assert_allclose(x, twin, rtol=0, atol=1e-9 * scale)
        # ordered on every linked edge, exactly
        steps = direction * np.diff(x)
        assert np.all(steps[linked[1:]] >= 0)
        if counts is not None:
            assert abs(counts @ x) <= 1e-9 * scale * max(counts.sum(), 1.0)
        ref = _cvxpy_chain(y, w, lam, direction, counts, linked)
        f = _chain_objective(x, y, w, lam, linked)
        assert f <= ref + 1e-7 * max(abs(ref), scale**2)


def test_kernel_pools_a_zero_weight_level_with_its_neighbour():
    # an end level without rows: the penalty pushes it onto its neighbour
    x = monotone_fused_lasso([0.0, 1.0, 5.0], [1.0, 1.0, 0.0], [0.0, 0.1, 0.1])
    assert x[2] == x[1]
    # λ = 0 and an unlinked (missing) level: free, whatever the order
    x = monotone_fused_lasso([2.0, 1.0, -3.0], np.ones(3), np.zeros(3), linked=[0, 1, 0])
    np.testing.assert_allclose(x, [1.5, 1.5, -3.0])


def test_prox_monotone_is_the_prox():
    rng = np.random.default_rng(3)
    bp = np.array([0, 4, 9])
    v = rng.normal(size=9)
    w = rng.uniform(0.5, 1.5, size=9)
    counts = rng.integers(1, 5, size=9).astype(float)
    for direction in (1, -1):
        x = prox_monotone(v, bp, w, counts, step=0.3, direction=direction)
        for j in range(2):
            s, e = bp[j], bp[j + 1]
            lk = np.ones(e - s, bool)
            lk[0] = False
            ref = _cvxpy_chain(v[s:e], np.ones(e - s), 0.3 * w[s:e], direction, counts[s:e], lk)
            f = _chain_objective(x[s:e], v[s:e], np.ones(e - s), 0.3 * w[s:e], lk)
            assert f <= ref + 1e-8
            assert abs(counts[s:e] @ x[s:e]) < 1e-10


def test_kinds_are_registered():
    assert get_kind("increasing").direction == 1
    assert get_kind("decreasing").direction == -1
    assert {"tv", "free", "increasing", "decreasing"} <= set(KINDS)


# ----------------------------------------------------------------------------- solvers

KINDS3 = ("increasing", "decreasing", "tv")


def _glm(rng, family, n=160, sizes=(5, 4, 6), scale=1.0, offset=True):
    codes = np.vstack([rng.integers(0, s, size=n) for s in sizes]).astype(np.uint8)
    bp = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
    eta = 0.6 * codes[0] / sizes[0] - 0.4 * codes[1] / sizes[1]
    sw = rng.exponential(size=n)
    off = 0.2 * rng.normal(size=n) if offset else None
    if family == "gaussian":
        y = (eta + rng.normal(size=n)) * scale
    elif family == "binomial":
        y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    else:
        y = rng.poisson(np.exp(eta)).astype(float)
    w = rng.uniform(0.5, 1.5, size=bp[-1])
    return codes, bp, y, sw, off, w


def _cvxpy_glm(codes, bp, y, sw, off, w, family, lam, kinds, fit_intercept):
    d = int(bp[-1])
    th = cp.Variable(d)
    b0 = cp.Variable() if fit_intercept else 0.0
    eta = b0 + sum(th[bp[j] + codes[j]] for j in range(len(kinds)))
    if off is not None:
        eta = eta + off
    W = sw.sum()
    if family == "gaussian":
        loss = cp.sum(cp.multiply(sw, 0.5 * cp.square(eta) - cp.multiply(y, eta))) / W
    elif family == "binomial":
        loss = cp.sum(cp.multiply(sw, cp.logistic(eta) - cp.multiply(y, eta))) / W
    else:
        loss = cp.sum(cp.multiply(sw, cp.exp(eta) - cp.multiply(y, eta))) / W
    pen, cons = 0.0, []
    for j, kind in enumerate(kinds):
        s, e = bp[j], bp[j + 1]
        counts = np.bincount(codes[j], weights=sw, minlength=e - s)
        for k in range(s + 1, e):
            pen += w[k] * cp.abs(th[k] - th[k - 1])
            if kind == "increasing":
                cons.append(th[k] >= th[k - 1])
            elif kind == "decreasing":
                cons.append(th[k] <= th[k - 1])
        cons.append(counts @ th[s:e] == 0)
    prob = cp.Problem(cp.Minimize(loss + lam * pen), cons)
    prob.solve(solver=cp.CLARABEL)
    return prob.value


def _ordered(theta, bp, kinds, atol=0.0):
    for j, kind in enumerate(kinds):
        dt = np.diff(theta[bp[j] : bp[j + 1]])
        if kind == "increasing" and np.any(dt < -atol):
            return False
        if kind == "decreasing" and np.any(dt > atol):
            return False
    return True


# cvxpy may flag its own answer as inaccurate: ours must still be at least as good
@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")
@pytest.mark.parametrize("family", ["gaussian", "binomial", "poisson"])
@pytest.mark.parametrize("solver", ["cd", "fista"])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_solvers_match_cvxpy(family, solver, fit_intercept):
    # a seed fixed across processes (hash() of strings is salted per process: the data
    # changed from run to run, and one draw in hundreds kept FISTA above tol=1e-9 at its
    # default 1,000 iterations); FISTA's O(1/k²) rate gets the iterations a 1e-9 tolerance
    # can need on a hard draw
    rng = np.random.default_rng(zlib.crc32(f"{family}-{solver}-{fit_intercept}".encode()))
    codes, bp, y, sw, off, w = _glm(rng, family)
    for lam in (0.0, 0.02):
        sol = solve(codes, bp, y, family=family, lam=lam, penalty_weights=w, sample_weight=sw,
                    offset=off, fit_intercept=fit_intercept, solver=solver, tol=1e-9,
                    max_iter=20_000, block_kinds=KINDS3)  # fmt: skip
        ref = _cvxpy_glm(codes, bp, y, sw, off, w, family, lam, KINDS3, fit_intercept)
        assert sol.converged
        assert sol.objective <= ref + 1e-7 * max(1.0, abs(ref))
        assert _ordered(sol.coef, bp, KINDS3)


@pytest.mark.parametrize("scale", [1e-6, 1e6])
def test_tiny_and_huge_scales(scale):
    rng = np.random.default_rng(7)
    codes, bp, y, sw, off, w = _glm(rng, "gaussian", scale=scale, offset=False)
    lam = 0.02 * scale
    # tol is absolute in the gradient's units (× max(1, sd y)): scale it for tiny y
    tol = 1e-9 * min(scale, 1.0)
    sols = [solve(codes, bp, y, lam=lam, penalty_weights=w, sample_weight=sw, solver=s,
                  tol=tol, block_kinds=KINDS3) for s in ("cd", "fista")]  # fmt: skip
    ref = _cvxpy_glm(codes, bp, y / scale, sw, None, w, "gaussian", lam / scale, KINDS3, True)
    for sol in sols:
        assert sol.converged and _ordered(sol.coef, bp, KINDS3)
        assert sol.objective / scale**2 <= ref + 1e-7 * max(1.0, abs(ref))
    np.testing.assert_allclose(sols[0].coef, sols[1].coef, atol=1e-6 * scale)


def _truth_data(rng, n=3000, d=20):
    x1 = rng.integers(0, d, size=n)
    x2 = rng.integers(0, d, size=n)
    x3 = rng.integers(0, d, size=n)
    eta = np.where(x1 > 8, 0.8, 0.0) + 0.05 * x1 - np.where(x2 > 12, 0.6, 0.0)
    codes = np.vstack([x1, x2, x3]).astype(np.uint8)
    bp = np.array([0, d, 2 * d, 3 * d], dtype=np.intp)
    return codes, bp, eta


@pytest.mark.parametrize("family", ["gaussian", "poisson"])
def test_kkt_and_cd_vs_fista_on_a_known_monotone_truth(family):
    rng = np.random.default_rng(11)
    codes, bp, eta = _truth_data(rng)
    y = eta + rng.normal(size=eta.size) if family == "gaussian" else rng.poisson(np.exp(eta))
    y = np.asarray(y, dtype=float)
    counts = np.concatenate([np.bincount(c, minlength=20) for c in codes]).astype(float)
    pen = BinarsityPenalty(bp, np.ones(60), counts, ("increasing", "decreasing", "tv"))
    w = np.sqrt(np.concatenate([np.cumsum(c[::-1])[::-1] for c in counts.reshape(3, 20)]) / 3000)
    kinds = ("increasing", "decreasing", "increasing")
    lam = 0.003
    cd = solve(codes, bp, y, family=family, lam=lam, penalty_weights=w, tol=1e-10,
               block_kinds=kinds)  # fmt: skip
    fi = solve(codes, bp, y, family=family, lam=lam, penalty_weights=w, tol=1e-10,
               solver="fista", block_kinds=kinds)  # fmt: skip
    assert cd.converged and fi.converged
    assert cd.kkt_violation <= 1e-10 and fi.kkt_violation <= 1e-10
    assert _ordered(cd.coef, bp, kinds) and _ordered(fi.coef, bp, kinds)
    np.testing.assert_allclose(cd.coef, fi.coef, atol=1e-6)
    assert abs(cd.objective - fi.objective) <= 1e-9 * abs(cd.objective)
    # the true steps are found: x1 jumps up at 9, x2 down at 13
    assert cd.coef[9] - cd.coef[8] > 0.3 and cd.coef[33] - cd.coef[32] < -0.2
    assert pen.shape_violation(cd.coef) == 0.0


def test_kkt_rule_of_a_monotone_edge():
    rule = get_kind("increasing").kkt
    S = np.array([0.0, -1.0, 0.5, -0.2, -0.3])
    bound = np.array([0.0, 1.0, 1.0, 0.1, 0.1])
    jump = np.array([False, True, False, False, True])
    sign = np.array([0.0, 1.0, 0.0, 0.0, -1.0])
    viol = rule(S, bound, jump, sign)
    # right-way jump at the bound: 0; flat with S ≥ −λω: 0 even for S > λω (a TV edge
    # would open here); flat with S < −λω: (−S − λω); wrong-way jump: infeasible
    np.testing.assert_allclose(viol[:4], [0.0, 0.0, 0.0, 0.1])
    assert viol[4] == np.inf


@pytest.mark.parametrize("family", ["gaussian", "binomial"])
def test_lambda_max_is_exact(family):
    rng = np.random.default_rng(5)
    codes, bp, y, sw, off, w = _glm(rng, family, n=400)
    for kinds in (KINDS3, ("decreasing", "increasing", "increasing")):
        kw = dict(family=family, penalty_weights=w, sample_weight=sw, offset=off,
                  block_kinds=kinds)  # fmt: skip
        lmax = lambda_max(codes, bp, y, **kw)
        at = solve(codes, bp, y, lam=lmax * (1 + 1e-9), tol=1e-10, **kw)
        assert np.all(at.coef == 0.0)
        below = solve(codes, bp, y, lam=lmax * 0.98, tol=1e-10, **kw)
        assert np.any(below.coef != 0.0)
        assert _ordered(below.coef, bp, kinds)
    # a block whose gradient only pushes against its order never leaves 0
    tv = lambda_max(codes, bp, y, family=family, penalty_weights=w, sample_weight=sw,
                    offset=off, block_kinds=("tv", "tv", "tv"))  # fmt: skip
    assert lmax <= tv


def test_lambda_max_against_the_order_is_zero():
    # y falls with the code: an increasing block is flat at every λ, even λ = 0
    codes = np.repeat(np.arange(4), 10)[None, :].astype(np.uint8)
    y = -np.repeat(np.arange(4.0), 10)
    bp = np.array([0, 4])
    lmax = lambda_max(codes, bp, y, penalty_weights=np.ones(4), block_kinds=("increasing",))
    assert lmax == 0.0
    sol = solve(codes, bp, y, lam=0.0, penalty_weights=np.ones(4), block_kinds=("increasing",))
    np.testing.assert_allclose(sol.coef, 0.0, atol=1e-14)


def test_missing_level_is_outside_the_order_even_at_lambda_zero():
    # the last level (weight 0 edge) is a "missing" level: free, not ordered
    rng = np.random.default_rng(2)
    codes = rng.integers(0, 5, size=(1, 300)).astype(np.uint8)
    level_mean = np.array([0.0, 1.0, 2.0, 3.0, -4.0])
    y = level_mean[codes[0]] + 0.01 * rng.normal(size=300)
    w = np.array([0.0, 1.0, 1.0, 1.0, 0.0])
    for solver in ("cd", "fista"):
        sol = solve(codes, np.array([0, 5]), y, lam=0.0, penalty_weights=w, solver=solver,
                    block_kinds=("increasing",), tol=1e-10)  # fmt: skip
        th = sol.coef + sol.intercept
        np.testing.assert_allclose(th, level_mean, atol=0.01)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    lam=st.floats(0.0, 0.05),
    solver=st.sampled_from(["cd", "fista"]),
    family=st.sampled_from(["gaussian", "binomial", "poisson"]),
)
def test_fitted_shape_is_monotone(seed, lam, solver, family):
    rng = np.random.default_rng(seed)
    codes, bp, y, sw, off, w = _glm(rng, family, n=80)
    kinds = tuple(rng.choice(["increasing", "decreasing"], size=3))
    sol = solve(codes, bp, y, family=family, lam=lam, penalty_weights=w, sample_weight=sw,
                offset=off, solver=solver, block_kinds=kinds, max_iter=5000)  # fmt: skip
    assert _ordered(sol.coef, bp, kinds)


def test_real_data_fair_against_cvxpy_and_across_solvers():
    # statsmodels' fair data: an affair is less likely in a better-rated marriage and
    # more likely the longer the marriage; the model's own bins and weights
    import binarsity_stats as bs

    df = bs.load_fair()
    df = df.assign(any_affair=(df.affairs > 0).astype(float))
    model = bs.glm("any_affair ~ bin(rate_marriage, 5, monotone='decreasing') "
                   "+ bin(yrs_married, 8, monotone='increasing') + bin(age, 8)", df,
                   family="binomial")  # fmt: skip
    kinds = ("decreasing", "increasing", "tv")
    assert tuple(model._block_kinds()) == kinds
    codes, bp, w = model.binned.codes, model.block_ptr, model.penalty_weights
    y = df.any_affair.to_numpy()
    for lam in (1e-3,):
        cd = model.fit(lam=lam, tol=1e-10)
        fi = model.fit(lam=lam, tol=1e-10, solver="fista")
        assert cd.kkt_violation <= 1e-10 and fi.kkt_violation <= 1e-10
        assert abs(cd.objective - fi.objective) <= 1e-10
        assert _ordered(cd.coef, bp, kinds) and _ordered(fi.coef, bp, kinds)
        ref = _cvxpy_glm(codes, bp, y, np.ones(y.size), None, w, "binomial", lam, kinds, True)
        assert cd.objective <= ref + 1e-8
