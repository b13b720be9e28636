"""The constrained weighted fused lasso (``_fused_lasso_constrained.pyx``: sum_k n_k
theta_k = 0) through its driver ``penalty._prox.constrained_fused_lasso`` and its ``def``
wrapper.

What is proved here:

* agreement with cvxpy (Clarabel) under the constraint, feasibility to 1e-10, with
  zero weights, zero counts and zero/huge penalties, K = 1, 2, 3, 50;
* the KKT conditions (with the multiplier from S_0 = 0) to 1e-9, and agreement with
  the bisection-on-mu NumPy twin;
* the equal-counts constraint as a mean shift of the unconstrained solution;
* the documented exact answers on degenerate inputs (zero weights on bins with
  counts), and finiteness at extreme magnitudes;
* the wrapper refuses short arrays, NaN and negative weights, penalties, counts or
  tol with a ValueError naming the argument, before its C loop reads anything.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _fused_lasso_checks import cvxpy_flsa, kkt_violation, objective, random_instance
from numpy.testing import assert_allclose

from binarsity_stats.kernels._fused_lasso_constrained import constrained_fused_lasso_py
from binarsity_stats.penalty._prox import (
    _reference_constrained_fused_lasso,
    constrained_fused_lasso,
    weighted_fused_lasso,
)


@pytest.mark.parametrize("K, n_inst", [(1, 3), (2, 20), (3, 20), (50, 25)])
def test_constrained_matches_cvxpy(K, n_inst):
    """Objective within 1e-6 of Clarabel's under the constraint, feasibility to
    1e-10, with zero weights, zero counts and zero/huge penalties."""
    rng = np.random.default_rng(10 + K)
    for _ in range(n_inst):
        y, w, lam = random_instance(rng, K)
        n = rng.integers(0, 5, size=K).astype(float)
        n[rng.integers(K)] += 1.0
        theta = constrained_fused_lasso(y, w, lam, n)
        ref, ref_val = cvxpy_flsa(y, w, lam, n)
        scale = max(abs(ref_val), np.sum(w * y**2), 1e-12)
        assert objective(theta, y, w, lam) <= ref_val + 1e-6 * scale
        assert abs(n @ theta) <= 1e-10 * (n @ np.abs(theta) + n.sum() * np.abs(y).max())
        m = w > 0
        assert_allclose(theta[m], ref[m], rtol=0, atol=1e-5 * np.abs(y).max())


def test_constrained_kkt_and_twin():
    """KKT (with mu from S_0 = 0) to 1e-9, and agreement with the bisection-on-mu
    twin (w > 0) to 1e-9."""
    rng = np.random.default_rng(5)
    for _ in range(120):
        K = int(rng.choice([2, 3, 8, 20]))
        y, w, lam = random_instance(rng, K, huge_lam=0.0)
        n = rng.integers(0, 6, size=K).astype(float)
        n[0] += 1.0
        theta = constrained_fused_lasso(y, w, lam, n)
        assert kkt_violation(theta, y, w, lam, n) <= 1e-9
        w_pos = w + 0.1
        theta = constrained_fused_lasso(y, w_pos, lam, n)
        twin = _reference_constrained_fused_lasso(y, w_pos, lam, n, iters=70)
        assert_allclose(theta, twin, rtol=0, atol=1e-9 * np.abs(y).max())


def test_constrained_equal_counts_is_a_mean_shift():
    """With unit weights and n = c 1, the solution is the unconstrained one minus
    its mean (the reason the paper's Algorithm 1 is exact for equal counts)."""
    rng = np.random.default_rng(6)
    for K in [2, 5, 40]:
        y = rng.normal(size=K)
        lam = rng.exponential(size=K)
        free = weighted_fused_lasso(y, np.ones(K), lam)
        theta = constrained_fused_lasso(y, np.ones(K), lam, np.full(K, 3.0))
        assert_allclose(theta, free - free.mean(), rtol=0, atol=1e-12)


def test_constrained_degenerate_zero_weights():
    """Documented exact answers when w = 0 on bins with counts."""
    # the multiplier sits on the boundary of the dual domain: theta_0 is pinned
    # to 0 by the constraint, theta_1 = argmin (t - 5)^2 / 2 + |t| = 4
    theta = constrained_fused_lasso([0.0, 5.0], [0.0, 1.0], [0.0, 1.0], [1.0, 0.0])
    assert_allclose(theta, [0.0, 4.0], atol=1e-12)
    # a zero-weight bin cut off by lam = 0 edges absorbs the constraint alone
    y = np.array([1.0, 2.0, 7.0, 3.0])
    w = np.array([1.0, 1.0, 0.0, 1.0])
    lam = np.array([0.0, 0.5, 0.0, 0.0])
    n = np.array([1.0, 1.0, 2.0, 1.0])
    theta = constrained_fused_lasso(y, w, lam, n)
    free = weighted_fused_lasso(y[:2], w[:2], lam[:2])
    assert_allclose(theta[[0, 1, 3]], [*free, 3.0], atol=1e-12)
    assert abs(n @ theta) < 1e-12
    # no counts: no constraint; K = 1 with a count: 0
    assert_allclose(
        constrained_fused_lasso(y, w + 1, lam, np.zeros(4)),
        weighted_fused_lasso(y, w + 1, lam),
    )
    assert_allclose(constrained_fused_lasso([4.0], [1.0], [0.0], [2.0]), [0.0])


def test_constrained_extreme_magnitudes_finite():
    """Overall scales 1e-100..1e100 with weights and counts spanning 20 orders
    of magnitude inside one chain: the root search converges (no warning) and
    the output is finite. Beyond that (weights 1e80 apart) the search may give
    up - documented - but the output is still finite."""
    rng = np.random.default_rng(7)
    for span, converges in [(10.0, True), (100.0, False)]:
        for _ in range(150):
            K = int(rng.choice([2, 5, 20]))
            y = rng.normal(size=K) * 10.0 ** rng.uniform(-100, 100)
            w = rng.exponential(size=K) * 10.0 ** rng.uniform(-span, span, size=K)
            w *= 10.0 ** rng.uniform(-100, 100)
            w[rng.random(K) < 0.3] = 0.0
            lam = rng.exponential(size=K) * 10.0 ** rng.uniform(-span, span)
            lam *= np.abs(y).max() * w.max()
            n = rng.integers(0, 4, size=K) * 10.0 ** rng.uniform(-span, span, size=K)
            n[0] += 1.0
            with warnings.catch_warnings():
                warnings.simplefilter("error" if converges else "ignore", RuntimeWarning)
                theta = constrained_fused_lasso(y, w, lam, n)
            assert np.all(np.isfinite(theta))


# ---------------------------------------------------------------------------
# the def wrapper checks its arguments itself
# ---------------------------------------------------------------------------


def _args(K=5):
    rng = np.random.default_rng(8)
    return {"y": rng.normal(size=K), "w": rng.uniform(0.5, 2.0, K), "lam": np.full(K, 0.3),
            "n": rng.integers(1, 4, K).astype(float), "out": np.empty(K)}  # fmt: skip


def _call(a, tol=1e-12):
    return constrained_fused_lasso_py(a["y"], a["w"], a["lam"], a["n"], a["out"], tol)


def test_the_wrapper_solves_what_the_driver_solves():
    a = _args()
    assert _call(a) > 0
    assert_allclose(a["out"], constrained_fused_lasso(a["y"], a["w"], a["lam"], a["n"]),
                    rtol=0, atol=0)  # fmt: skip


@pytest.mark.parametrize("name", ["w", "lam", "n", "out"])
@pytest.mark.parametrize("length", [0, 4, 6])
def test_the_wrapper_refuses_arrays_of_another_length(name, length):
    a = _args()
    a[name] = np.ones(length)
    with pytest.raises(ValueError, match=r"^y, w, lam, n and out must have the same length"):
        _call(a)


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("y", np.nan, r"^y\[2\] is NaN"),
        ("w", np.nan, r"^w must be >= 0 and not NaN; got w\[2\] = nan"),
        ("w", -1.0, r"^w must be >= 0 and not NaN; got w\[2\] = -1\.0"),
        ("lam", np.nan, r"^lam must be >= 0 and not NaN; got lam\[2\] = nan"),
        ("lam", -0.5, r"^lam must be >= 0 and not NaN; got lam\[2\] = -0\.5"),
        ("n", np.nan, r"^n must be >= 0 and not NaN; got n\[2\] = nan"),
        ("n", -2.0, r"^n must be >= 0 and not NaN; got n\[2\] = -2\.0"),
    ],
)
def test_the_wrapper_refuses_nan_and_negative_values(name, value, message):
    a = _args()
    a[name][2] = value
    a["out"][:] = 7.0
    with pytest.raises(ValueError, match=message):
        _call(a)
    assert np.all(a["out"] == 7.0)  # refused before anything was written


@pytest.mark.parametrize("tol", [np.nan, -1e-12])
def test_the_wrapper_refuses_a_bad_tol(tol):
    with pytest.raises(ValueError, match=r"^tol must be >= 0"):
        _call(_args(), tol)


def test_the_driver_names_the_argument():
    a = _args()
    with pytest.raises(ValueError, match="counts"):
        constrained_fused_lasso(a["y"], a["w"], a["lam"], -a["n"])
