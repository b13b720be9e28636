"""penalty/_metric.py: FISTA's diagonal variable metric and its prox.

Proved here: the metric is the curvature diagonal (bin sums of the working weights,
their total for β0, the dense columns' Gram diagonal), floored for empty levels; its
norm is Σ D v²; its prox is the minimiser of ½‖θ − v‖²_D + λ Σ ω|Δθ| under every block's
n_jᵀθ_j = 0 (and a monotone block's direction), checked against CVXPY on the same
problem, and at λ = 0 against the closed-form D-projection on the constraint.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from binarsity_stats.model._model import glm
from binarsity_stats.penalty._metric import DiagonalMetric


def problem(formula: str, weights=None):
    rng = np.random.default_rng(0)
    n = 200
    df = pd.DataFrame({"x": rng.exponential(size=n), "g": rng.choice(list("abc"), n),
                       "z": rng.normal(size=n)})  # fmt: skip
    df["y"] = ((df.x > 1) + 0.3 * df.z + rng.normal(size=n) > 0.5).astype(float)
    m = glm(formula, df, family="binomial", sample_weight=weights)
    prob = m.prepare().prob
    eta = prob.linear_predictor(np.zeros(prob.n_levels), np.zeros(prob.n_dense), 0.3)
    prob.grad_hess(eta)
    return df, m, prob


def test_the_metric_is_the_curvature_diagonal():
    w = np.random.default_rng(1).uniform(0.5, 2.0, 200)
    df, m, prob = problem("y ~ bin(x, 6) + C(g) + z", w)
    metric = DiagonalMetric(prob, prob.h)
    # binomial at η = 0.3 + 0: h_i = s_i p(1 − p) / W on the unit weights
    p = 1 / (1 + np.exp(-0.3))
    h = m.unit_weight * p * (1 - p) / m.unit_weight.sum()
    codes, ptr = m.design.codes, m.block_ptr
    want = np.concatenate([np.bincount(codes[j], weights=h, minlength=ptr[j + 1] - ptr[j])
                           for j in range(2)])  # fmt: skip
    np.testing.assert_allclose(metric.theta, want, rtol=1e-12)
    assert metric.b0 == pytest.approx(h.sum(), rel=1e-12)
    zint = (df["z"].to_numpy() - prob.dense_center[0]) / prob.dense_scale[0]
    np.testing.assert_allclose(metric.beta, [np.sum(h * zint**2)], rtol=1e-10)
    d_theta, d_beta = np.arange(prob.n_levels, dtype=float), np.array([2.0])
    assert metric.norm2(d_theta, d_beta, 3.0) == pytest.approx(
        np.sum(want * d_theta**2) + np.sum(h * zint**2) * 4 + h.sum() * 9, rel=1e-12
    )


def test_an_empty_level_keeps_a_small_metric():
    df, _, _ = problem("y ~ bin(x, 6) + C(g)")
    w = np.where(df["g"].to_numpy() == "c", 0.0, 1.0)  # level c: no curvature
    _, m, prob = problem("y ~ bin(x, 6) + C(g)", w)
    metric = DiagonalMetric(prob, prob.h)
    c = m.block_ptr[1] + list(m.spec.blocks[1].level_labels()).index("c")
    # floored at 1e-12 of the largest curvature (a bin's, or the total's)
    assert metric.theta[c] == pytest.approx(1e-12 * max(metric.theta.max(), metric.b0))
    assert metric.beta.shape == (0,)


def cvxpy_prox(v, D, lam_w, counts, ptr, directions):
    cp = pytest.importorskip("cvxpy")
    theta = cp.Variable(v.size)
    obj = 0.5 * cp.sum(cp.multiply(D, cp.square(theta - v)))
    cons = []
    for j in range(len(ptr) - 1):
        s, e = ptr[j], ptr[j + 1]
        diff = theta[s + 1 : e] - theta[s : e - 1]
        obj = obj + cp.sum(cp.multiply(lam_w[s + 1 : e], cp.abs(diff)))
        cons.append(counts[s:e] @ theta[s:e] == 0)
        if directions[j] == 1:
            cons.append(diff >= 0)
    cp.Problem(cp.Minimize(obj), cons).solve(solver="CLARABEL", tol_gap_abs=1e-12,
                                             tol_gap_rel=1e-12, tol_feas=1e-12)  # fmt: skip
    return theta.value


@pytest.mark.parametrize("formula, directions", [
    ("y ~ bin(x, 6) + C(g) + z", (0, 0)),
    ("y ~ bin(x, 6, monotone='increasing') + C(g)", (1, 0)),
])  # fmt: skip
def test_the_prox_is_the_constrained_weighted_fused_lasso(formula, directions):
    _, m, prob = problem(formula)
    metric = DiagonalMetric(prob, prob.h)
    v = np.random.default_rng(2).normal(size=prob.n_levels)
    lam = 0.002
    got = metric.prox(v, lam)
    want = cvxpy_prox(v, metric.theta, lam * prob.weights, prob.counts, m.block_ptr, directions)
    # CLARABEL's interior point reaches ~1e-9; the DP is exact
    np.testing.assert_allclose(got, want, atol=1e-6)
    for j in range(2):
        s, e = m.block_ptr[j], m.block_ptr[j + 1]
        assert abs(prob.counts[s:e] @ got[s:e]) < 1e-10 * prob.counts[s:e].sum()
        if directions[j]:
            assert np.all(np.diff(got[s:e]) >= -1e-12)


def test_the_prox_at_zero_lambda_is_the_projection_on_the_constraint():
    _, m, prob = problem("y ~ bin(x, 6) + C(g)")
    metric = DiagonalMetric(prob, prob.h)
    v = np.random.default_rng(3).normal(size=prob.n_levels)
    got = metric.prox(v, 0.0)
    D, n = metric.theta, prob.counts
    for j in range(2):
        s, e = m.block_ptr[j], m.block_ptr[j + 1]
        # argmin ½ Σ D (θ − v)² s.t. nᵀθ = 0: θ = v − (nᵀv / Σ n²/D) n / D
        mult = n[s:e] @ v[s:e] / np.sum(n[s:e] ** 2 / D[s:e])
        np.testing.assert_allclose(got[s:e], v[s:e] - mult * n[s:e] / D[s:e], rtol=1e-10,
                                   atol=1e-12)  # fmt: skip
