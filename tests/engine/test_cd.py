"""Unit tests of ``binarsity_stats.engine._cd``: the coordinate-descent solver ``_cd``,
its Gram backend ``_gram_solve`` and the Anderson extrapolation ``_anderson``.

``_cd`` is called directly on the solver data (no ``Prepared``: no merging of
identical blocks, no exact flattening at λ_max, ``tol`` in absolute units) and its
optimum is checked against cvxpy (CLARABEL) on the same objective written with a
dense one-hot matrix, and against KKT conditions recomputed from scratch.
"""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest
from numpy.testing import assert_allclose

from binarsity_stats.engine._cd import _anderson, _cd, _gram_solve
from binarsity_stats.engine._solution import ConvergenceWarning
from binarsity_stats.engine._solvers import _Problem
from binarsity_stats.families._families import get_family
from binarsity_stats.kernels._histogram import bin_sums_all
from binarsity_stats.penalty._penalty import BinarsityPenalty, penalty_weights


def _data(family, n=240, seed=0, dense=True):
    rng = np.random.default_rng(seed)
    sizes = [6, 4, 5]
    codes = np.stack([rng.integers(0, s, size=n) for s in sizes]).astype(np.uint8)
    bp = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
    Z = rng.normal(size=(n, 2)) * [1.0, 30.0] + [0.0, 5.0] if dense else None
    eta = 0.6 * (codes[0] >= 3) - 0.4 * (codes[1] == 1) - 0.2
    if dense:
        eta = eta + 0.3 * Z[:, 0] + 0.01 * Z[:, 1] - 0.05
    if family == "gaussian":
        y = eta + rng.normal(scale=0.7, size=n)
    elif family == "binomial":
        y = rng.binomial(1, 1 / (1 + np.exp(-eta))).astype(float)
    else:
        y = rng.poisson(np.exp(eta)).astype(float)
    sw = rng.uniform(0.3, 2.0, n)
    offset = rng.normal(scale=0.2, size=n)
    counts = np.zeros(bp[-1])
    bin_sums_all(codes, bp, sw, counts)
    w = penalty_weights("theory", counts, bp)
    return codes, bp, y, Z, sw, offset, w, counts


def _problem(family, codes, bp, y, Z, sw, offset, w, fit_intercept=True):
    return _Problem(codes, bp, y, family, w, dense=Z, sample_weight=sw, offset=offset,
                    fit_intercept=fit_intercept)  # fmt: skip


def _reference(family, codes, bp, y, Z, sw, offset, w, counts, lam):
    """F* by cvxpy on the dense one-hot matrix (the same objective, design.md §1)."""
    n, d = codes.shape[1], int(bp[-1])
    X = np.zeros((n, d))
    for j in range(codes.shape[0]):
        X[np.arange(n), bp[j] + codes[j]] = 1.0
    theta, b0, beta = cp.Variable(d), cp.Variable(), cp.Variable(Z.shape[1])
    eta = X @ theta + b0 + Z @ beta + offset
    if family == "gaussian":
        unit = 0.5 * cp.square(eta) - cp.multiply(y, eta)
    elif family == "binomial":
        unit = cp.logistic(eta) - cp.multiply(y, eta)
    else:
        unit = cp.exp(eta) - cp.multiply(y, eta)
    loss = cp.sum(cp.multiply(sw, unit)) / sw.sum()
    pen = cp.sum(cp.multiply(w[1:], cp.abs(cp.diff(theta))))
    cons = [counts[bp[j] : bp[j + 1]] @ theta[bp[j] : bp[j + 1]] == 0 for j in range(len(bp) - 1)]
    prob = cp.Problem(cp.Minimize(loss + lam * pen), cons)
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    # the constant of the loss the solvers add (y log y terms etc.) differs: compare
    # through the loss recomputed at cvxpy's point by the family
    fam = get_family(family)
    eta_ref = X @ theta.value + b0.value + Z @ beta.value + offset
    return fam.loss_sum(eta_ref, y, sw) / sw.sum() + lam * float(w[1:] @ np.abs(np.diff(theta.value)))


@pytest.mark.parametrize("family", ["gaussian", "binomial", "poisson"])
def test_cd_reaches_the_convex_optimum_with_dense_columns_weights_and_offset(family):
    codes, bp, y, Z, sw, offset, w, counts = _data(family)
    lam = 0.01
    prob = _problem(family, codes, bp, y, Z, sw, offset, w)
    sol = _cd(prob, lam, 1e-10, 20000, None)
    assert sol.converged and sol.kkt_violation <= 1e-10
    ref = _reference(family, codes, bp, y, Z, sw, offset, w, counts, lam)
    # both are optimal to ~1e-10 in the KKT sense: their objectives agree far below 1e-7
    assert_allclose(sol.objective, ref, rtol=1e-7, atol=1e-9)
    assert sol.objective <= ref + 1e-9 * abs(ref)
    # the re-centring constraints n_jᵀθ_j = 0 hold in the user's units
    for j in range(len(bp) - 1):
        assert abs(counts[bp[j] : bp[j + 1]] @ sol.coef[bp[j] : bp[j + 1]]) < 1e-8 * counts.sum()


@pytest.mark.parametrize("family", ["gaussian", "binomial", "poisson"])
def test_cd_solution_satisfies_kkt_recomputed_from_scratch(family):
    codes, bp, y, Z, sw, offset, w, counts = _data(family, seed=1)
    lam = 0.005
    sol = _cd(_problem(family, codes, bp, y, Z, sw, offset, w), lam, 1e-9, 20000, None)
    fam = get_family(family)
    # η from the returned coefficients, independently of the solver's own η
    eta = offset + sol.intercept + Z @ sol.dense_coef
    for j in range(len(bp) - 1):
        eta = eta + sol.coef[bp[j] + codes[j]]
    assert_allclose(sol.eta, eta, rtol=0, atol=1e-10 * (1 + np.abs(eta).max()))
    r = sw * (fam.mean(eta) - y) / sw.sum()
    g = np.zeros(bp[-1])
    bin_sums_all(codes, bp, r, g)
    pen = BinarsityPenalty(bp, w, counts)
    assert float(pen.kkt_violation(g, sol.coef, lam).max()) <= 2e-9
    assert abs(r.sum()) <= 2e-9  # the intercept's condition
    assert np.abs(Z.T @ r).max() <= 2e-9 * np.abs(Z).max()  # the dense columns'


def test_cd_at_a_huge_lambda_is_the_weighted_null_fit():
    codes, bp, y, _, sw, offset, w, _ = _data("gaussian")
    sol = _cd(_problem("gaussian", codes, bp, y, None, sw, offset, w), 1e6, 1e-10, 1000, None)
    assert sol.converged
    assert np.abs(sol.coef).max() <= 1e-10
    # gaussian null fit: the weighted mean of y − offset
    assert_allclose(sol.intercept, np.average(y - offset, weights=sw), rtol=0, atol=1e-10)


def test_cd_without_intercept_keeps_the_intercept_at_zero():
    codes, bp, y, Z, sw, offset, w, counts = _data("poisson", seed=2)
    sol = _cd(_problem("poisson", codes, bp, y, Z, sw, offset, w, fit_intercept=False),
              0.01, 1e-9, 20000, None)  # fmt: skip
    assert sol.converged
    assert sol.intercept == 0.0


def test_cd_stopped_by_max_iter_warns_and_reports_not_converged():
    codes, bp, y, Z, sw, offset, w, _ = _data("binomial", seed=3)
    prob = _problem("binomial", codes, bp, y, Z, sw, offset, w)
    with pytest.warns(ConvergenceWarning, match=r"KKT violation of .* > tol=1e-12"):
        sol = _cd(prob, 1e-3, 1e-12, 1, None)
    assert not sol.converged
    assert sol.n_sweeps == 1
    assert sol.kkt_violation > 1e-12


def test_cd_warm_started_at_its_solution_stops_at_once_on_the_same_point():
    codes, bp, y, Z, sw, offset, w, _ = _data("gaussian", seed=4)
    prob = _problem("gaussian", codes, bp, y, Z, sw, offset, w)
    sol = _cd(prob, 0.02, 1e-9, 20000, None)
    assert sol.n_sweeps > 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        again = _cd(prob, 0.02, 1e-9, 20000, sol)
    assert again.converged and again.n_sweeps == 0 and again.n_iter == 0
    assert_allclose(again.coef, sol.coef, rtol=0, atol=1e-12)
    assert_allclose(again.dense_coef, sol.dense_coef, rtol=1e-12, atol=1e-12)


def test_gram_backend_reaches_the_same_optimum_as_the_row_sweeps():
    codes, bp, y, Z, sw, offset, w, _ = _data("gaussian", seed=5)
    rows = _cd(_problem("gaussian", codes, bp, y, Z, sw, offset, w), 0.01, 1e-10, 20000, None)
    gram = _gram_solve(_problem("gaussian", codes, bp, y, Z, sw, offset, w), 0.01, 1e-10, 20000,
                       None, {})  # fmt: skip
    assert rows.converged and gram.converged
    assert_allclose(gram.objective, rows.objective, rtol=1e-9)
    # the problem is strongly convex on the kept segments here: the points agree too
    assert_allclose(gram.eta, rows.eta, rtol=0, atol=1e-5)


def test_anderson_extrapolation_is_exact_on_a_linear_fixed_point_iteration():
    # x ← A x + b with ‖A‖ < 1: Anderson on 6 iterates of a 3-vector finds x* = (I − A)⁻¹ b
    rng = np.random.default_rng(0)
    Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    A = Q @ np.diag([0.9, 0.5, -0.3]) @ Q.T
    b = rng.normal(size=3)
    x_star = np.linalg.solve(np.eye(3) - A, b)
    x = np.zeros(3)
    history = []
    for _ in range(6):
        history.append((x[:2].copy(), x[2:].copy()))
        x = A @ x + b
    cand = _anderson(history)
    assert cand is not None
    theta, free = cand
    got = np.concatenate([theta, free])
    plain = np.concatenate(history[-1])
    # the plain iterate is still far (0.9⁵ of the start); the extrapolation is exact up
    # to its Tikhonov term (1e-9 · trace of UUᵀ; five differences in 3 dimensions leave
    # UUᵀ singular, and the term's bias is measured at ~3e-5 relative here)
    assert np.linalg.norm(plain - x_star) > 0.1 * np.linalg.norm(x_star)
    assert np.linalg.norm(got - x_star) <= 1e-3 * np.linalg.norm(plain - x_star)
    assert_allclose(got, x_star, rtol=1e-4)


def test_anderson_returns_none_on_a_singular_history():
    history = [(np.zeros(2), np.zeros(1))] * 6  # no movement: no direction to extrapolate
    assert _anderson(history) is None


def test_cd_keeps_a_monotone_block_ordered_at_the_constrained_optimum():
    # block 0 increasing while the data fall in it: the optimum is ordered (often flat)
    rng = np.random.default_rng(6)
    n = 400
    codes = np.stack([rng.integers(0, 6, n), rng.integers(0, 4, n)]).astype(np.uint8)
    bp = np.array([0, 6, 10], dtype=np.intp)
    y = -0.3 * codes[0] + 0.5 * (codes[1] == 2) + rng.normal(scale=0.5, size=n)
    sw = np.ones(n)
    counts = np.zeros(10)
    bin_sums_all(codes, bp, sw, counts)
    w = penalty_weights("theory", counts, bp)
    lam = 1e-3
    prob = _Problem(codes, bp, y, "gaussian", w, block_kinds=["increasing", "tv"])
    sol = _cd(prob, lam, 1e-10, 20000, None)
    assert sol.converged
    assert np.all(np.diff(sol.coef[:6]) >= -1e-12)
    # the same objective with the order as constraints, by cvxpy
    X = np.zeros((n, 10))
    for j in range(2):
        X[np.arange(n), bp[j] + codes[j]] = 1.0
    theta, b0 = cp.Variable(10), cp.Variable()
    eta = X @ theta + b0
    loss = cp.sum(0.5 * cp.square(eta) - cp.multiply(y, eta)) / n
    pen = cp.sum(cp.multiply(w[1:], cp.abs(cp.diff(theta))))
    cons = [counts[bp[j] : bp[j + 1]] @ theta[bp[j] : bp[j + 1]] == 0 for j in range(2)]
    cons.append(cp.diff(theta[:6]) >= 0)
    ref = cp.Problem(cp.Minimize(loss + lam * pen), cons)
    ref.solve(solver=cp.CLARABEL, tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    assert_allclose(sol.objective, float(ref.value), rtol=1e-7)
