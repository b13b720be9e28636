"""Unit tests of ``binarsity_stats.engine._fista``: the accelerated proximal gradient
solver, called directly on the solver data (``tol`` in absolute units).

Its optimum is checked against KKT conditions recomputed from scratch (bin sums of the
weighted residuals, the penalty's subgradient rule) and against the independent CD
solver (``tests/engine/test_cd.py`` checks CD against cvxpy).
"""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

from binarsity_stats.engine._cd import _cd
from binarsity_stats.engine._fista import _fista
from binarsity_stats.engine._solution import ConvergenceWarning
from binarsity_stats.engine._solvers import _Problem
from binarsity_stats.families._families import get_family
from binarsity_stats.kernels._histogram import bin_sums_all
from binarsity_stats.penalty._penalty import BinarsityPenalty, penalty_weights


def _data(family, n=200, seed=0, dense=True):
    rng = np.random.default_rng(seed)
    sizes = [5, 4, 6]
    codes = np.stack([rng.integers(0, s, size=n) for s in sizes]).astype(np.uint8)
    bp = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
    Z = rng.normal(size=(n, 1)) * 4.0 + 2.0 if dense else None
    eta = 0.7 * (codes[0] >= 2) - 0.5 * (codes[2] == 5) - 0.1
    if dense:
        eta = eta + 0.1 * Z[:, 0] - 0.2
    if family == "gaussian":
        y = eta + rng.normal(scale=0.5, size=n)
    elif family == "binomial":
        y = rng.binomial(1, 1 / (1 + np.exp(-eta))).astype(float)
    else:
        y = rng.poisson(np.exp(eta)).astype(float)
    sw = rng.uniform(0.5, 1.5, n)
    offset = rng.normal(scale=0.2, size=n)
    counts = np.zeros(bp[-1])
    bin_sums_all(codes, bp, sw, counts)
    w = penalty_weights("theory", counts, bp)
    return codes, bp, y, Z, sw, offset, w, counts


def _problem(family, data, fit_intercept=True):
    codes, bp, y, Z, sw, offset, w, _ = data
    return _Problem(codes, bp, y, family, w, dense=Z, sample_weight=sw, offset=offset,
                    fit_intercept=fit_intercept)  # fmt: skip


def _kkt(sol, family, data, lam):
    codes, bp, y, Z, sw, offset, w, counts = data
    eta = offset + sol.intercept + (Z @ sol.dense_coef if Z is not None else 0.0)
    for j in range(len(bp) - 1):
        eta = eta + sol.coef[bp[j] + codes[j]]
    r = sw * (get_family(family).mean(eta) - y) / sw.sum()
    g = np.zeros(bp[-1])
    bin_sums_all(codes, bp, r, g)
    viol = float(BinarsityPenalty(bp, w, counts).kkt_violation(g, sol.coef, lam).max())
    dense = float(np.abs(Z.T @ r).max()) if Z is not None else 0.0
    return viol, abs(r.sum()), dense


@pytest.mark.parametrize("family", ["gaussian", "binomial", "poisson"])
def test_fista_solution_satisfies_kkt_and_agrees_with_cd(family):
    data = _data(family)
    lam = 0.01
    sol = _fista(_problem(family, data), lam, 1e-9, 50000, None)
    assert sol.converged and sol.kkt_violation <= 1e-9
    viol, intercept_grad, dense_grad = _kkt(sol, family, data, lam)
    assert viol <= 2e-9 and intercept_grad <= 2e-9 and dense_grad <= 2e-8
    ref = _cd(_problem(family, data), lam, 1e-10, 20000, None)
    # two solutions optimal to 1e-9 in the KKT sense: objectives agree to far below 1e-7
    assert_allclose(sol.objective, ref.objective, rtol=1e-7)
    assert sol.n_sweeps >= sol.n_iter  # gradient evaluations, at least one per step


def test_fista_without_intercept_projects_the_start_and_keeps_b0_zero():
    data = _data("poisson", seed=1)
    lam = 0.02
    sol = _fista(_problem("poisson", data, fit_intercept=False), lam, 1e-9, 50000, None)
    assert sol.converged and sol.intercept == 0.0
    ref = _cd(_problem("poisson", data, fit_intercept=False), lam, 1e-10, 20000, None)
    assert_allclose(sol.objective, ref.objective, rtol=1e-7)
    # the constraints n_jᵀθ_j = 0 hold
    counts, bp = data[7], data[1]
    for j in range(len(bp) - 1):
        assert abs(counts[bp[j] : bp[j + 1]] @ sol.coef[bp[j] : bp[j + 1]]) < 1e-8 * counts.sum()


def test_fista_at_a_huge_lambda_is_the_null_fit():
    data = _data("binomial", seed=2, dense=False)
    sol = _fista(_problem("binomial", data), 1e6, 1e-10, 5000, None)
    assert sol.converged
    assert np.abs(sol.coef).max() <= 1e-10
    y, sw, offset = data[2], data[4], data[5]
    # the null fit's condition: Σ s_i (μ_i − y_i) = 0 at η = β0 + offset
    mu = 1 / (1 + np.exp(-(sol.intercept + offset)))
    assert abs(np.sum(sw * (mu - y)) / sw.sum()) <= 1e-9


def test_fista_stopped_by_max_iter_warns_and_reports_the_iterations():
    data = _data("gaussian", seed=3)
    with pytest.warns(ConvergenceWarning, match=r"stopped after 3 iterations"):
        sol = _fista(_problem("gaussian", data), 1e-4, 1e-14, 3, None)
    assert not sol.converged and sol.n_iter == 3
    assert sol.kkt_violation > 1e-14


def test_fista_warm_started_at_the_optimum_stays_there():
    data = _data("gaussian", seed=4)
    lam = 0.01
    first = _cd(_problem("gaussian", data), lam, 1e-11, 20000, None)
    sol = _fista(_problem("gaussian", data), lam, 1e-9, 50000, first)
    assert sol.converged
    assert sol.n_iter <= 5  # the first KKT check (every 5 steps) passes
    assert_allclose(sol.objective, first.objective, rtol=1e-9)
