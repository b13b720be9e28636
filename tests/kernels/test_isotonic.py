"""kernels/_isotonic.pyx: the monotone fused lasso of one block (PAVA of shifted targets).

The kernel agrees with its NumPy twin (``penalty/_prox.monotone_fused_lasso_reference``,
written independently) and with CVXPY on the same problem: non-decreasing and
non-increasing chains, levels of weight 0, an unlinked edge (no penalty, no order
across it) and the constraint nᵀθ = 0. Arrays of different lengths or of the wrong
dtype are refused before the kernel runs.
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from binarsity_stats.kernels._isotonic import monotone_fused_lasso_py, work_size
from binarsity_stats.penalty._prox import monotone_fused_lasso_reference

RNG = np.random.default_rng(0)
TOL = 1e-12


def kernel(y, w, lam, direction=1, counts=None, linked=None):
    K = len(y)
    lk = np.ones(K, np.uint8) if linked is None else np.asarray(linked, np.uint8).copy()
    lk[0] = 0
    out = np.empty(K)
    n = np.zeros(K) if counts is None else counts
    it = monotone_fused_lasso_py(w * y, w, lam, n, lk, direction, counts is not None, out, TOL)
    assert it >= 0
    return out


def cvxpy_solution(y, w, lam, direction, counts=None, linked=None):
    cp = pytest.importorskip("cvxpy")
    K = len(y)
    lk = np.ones(K, bool) if linked is None else np.asarray(linked, bool)
    edges = np.flatnonzero(lk[1:]) + 1
    t = cp.Variable(K)
    d = t[edges] - t[edges - 1]
    obj = 0.5 * cp.sum(cp.multiply(w, cp.square(t - y))) + cp.sum(
        cp.multiply(lam[edges], cp.abs(d))
    )
    cons = [direction * d >= 0]
    if counts is not None:
        cons.append(counts @ t == 0)
    cp.Problem(cp.Minimize(obj), cons).solve(solver="CLARABEL", tol_gap_abs=1e-12,
                                             tol_gap_rel=1e-12, tol_feas=1e-12)  # fmt: skip
    return t.value


@pytest.mark.parametrize("direction", [1, -1])
@pytest.mark.parametrize("constrained", [False, True])
def test_agrees_with_the_twin_and_cvxpy(direction, constrained):
    K = 15
    y = np.cumsum(RNG.normal(size=K)) * direction * 0.5 + RNG.normal(size=K)
    w = RNG.uniform(0.5, 3.0, K)
    lam = RNG.uniform(0.0, 0.4, K)
    counts = RNG.integers(1, 10, K).astype(float) if constrained else None
    got = kernel(y, w, lam, direction, counts)
    twin = monotone_fused_lasso_reference(y, w, lam, direction, counts)
    assert_allclose(got, twin, atol=1e-10)
    assert_allclose(got, cvxpy_solution(y, w, lam, direction, counts), atol=1e-6)
    assert np.all(direction * np.diff(got) >= -1e-12)
    if constrained:
        assert abs(counts @ got) < 1e-9 * counts.sum()


def test_an_unlinked_edge_decouples_its_levels():
    K = 10
    y = np.array([3.0, 2.0, 1.0, 0.0, -1.0, 5.0, 4.0, 3.0, 2.0, 1.0])  # decreasing runs
    w, lam = np.ones(K), np.full(K, 0.1)
    linked = np.ones(K, bool)
    linked[5] = False  # levels 0-4 and 5-9 are two chains
    got = kernel(y, w, lam, 1, linked=linked)
    assert_allclose(got[:5], np.mean(y[:5]), atol=1e-12)  # each run pooled to its mean
    assert_allclose(got[5:], np.mean(y[5:]), atol=1e-12)
    assert got[5] > got[4]  # no order (or penalty) across the unlinked edge
    assert_allclose(got, monotone_fused_lasso_reference(y, w, lam, 1, linked=linked), atol=1e-12)


def test_a_level_without_weight_joins_its_neighbour():
    y = np.array([0.0, 1.0, 9.0, 2.0, 3.0])
    w = np.array([1.0, 1.0, 0.0, 1.0, 1.0])
    lam = np.full(5, 0.05)
    got = kernel(y, w, lam, 1)
    assert np.all(np.isfinite(got)) and np.all(np.diff(got) >= -1e-12)
    assert got[2] in (got[1], got[3])  # at a neighbour's value: no cost for it
    assert_allclose(got, monotone_fused_lasso_reference(y, w, lam, 1), atol=1e-12)


def test_bad_inputs_are_refused():
    K = 6
    ok = [np.ones(K)] * 4
    lk = np.ones(K, np.uint8)
    out = np.empty(K)
    with pytest.raises(ValueError, match="every array must have the same length"):
        monotone_fused_lasso_py(ok[0], np.ones(K - 1), ok[2], ok[3], lk, 1, False, out, TOL)
    with pytest.raises(ValueError, match="every array must have the same length"):
        monotone_fused_lasso_py(*ok, lk[:3], 1, False, out, TOL)
    with pytest.raises(ValueError, match="every array must have the same length"):
        monotone_fused_lasso_py(*ok, lk, 1, False, np.empty(K + 1), TOL)
    with pytest.raises(ValueError, match="Buffer dtype mismatch"):
        monotone_fused_lasso_py(*ok, lk.astype(bool).astype(np.int64), 1, False, out, TOL)
    assert monotone_fused_lasso_py(*(np.empty(0),) * 4, np.empty(0, np.uint8), 1, False,
                                   np.empty(0), TOL) == 0  # fmt: skip
    assert work_size(10) >= 5 * 10
