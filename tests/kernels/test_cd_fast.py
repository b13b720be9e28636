"""kernels/_cd_fast.pyx: one Gauss–Seidel sweep of exact block steps.

The sweep agrees with its NumPy twin (built on the reference fused-lasso of
``penalty/_prox``); repeated sweeps without an intercept converge to the minimiser of
the quadratic model plus the penalty under n_jᵀθ_j = 0, found here by CVXPY; a
monotone step keeps its block ordered; the arguments the kernel checks itself (the work
buffer, ``steps``, ``linked``) are refused by name, and a wrong dtype by the typed
memoryviews. Codes and lengths are the driver's to check (``_design``, ``engine/_cd``).
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from binarsity_stats.kernels import _cd_fast
from binarsity_stats.kernels import _histogram as hk
from binarsity_stats.kernels._fused_lasso import work_size

RNG = np.random.default_rng(0)


def _numpy_cd_sweep(codes, bp, active, lam_w, H, counts, theta, z, delta_eta, h):
    """NumPy twin of ``_cd_fast.cd_sweep`` (with an intercept), built on the reference
    fused-lasso twin of ``_prox``."""
    from binarsity_stats.penalty._prox import _reference_weighted_fused_lasso

    shift = 0.0
    for j in active:
        s, e = bp[j], bp[j + 1]
        g = np.bincount(codes[j], weights=z, minlength=e - s)
        u = _reference_weighted_fused_lasso(theta[s:e] - g / H[s:e], H[s:e], lam_w[s:e])
        dl = u - theta[s:e]
        c = counts[s:e] @ u / counts[s:e].sum()
        theta[s:e] = u - c
        shift += c
        z += h * dl[codes[j]]
        delta_eta += dl[codes[j]]
    return shift


def test_cd_sweep_matches_numpy_twin():
    n, sizes = 400, np.array([5, 9, 1, 12])
    bp = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
    codes = np.ascontiguousarray(np.vstack([RNG.integers(0, s, n) for s in sizes]), np.uint8)
    h = RNG.uniform(0.1, 1.0, n) / n
    H = np.zeros(bp[-1])
    hk.bin_sums_all(codes, bp, h, H)
    counts = np.concatenate([np.bincount(codes[j], minlength=s) for j, s in enumerate(sizes)])
    counts = counts.astype(float)
    lam_w = RNG.uniform(0, 2e-3, bp[-1])
    active = np.array([0, 1, 2, 3], dtype=np.intp)
    theta0 = np.zeros(bp[-1])
    z0 = RNG.normal(size=n) / n
    a = (theta0.copy(), z0.copy(), np.zeros(n))
    b = (theta0.copy(), z0.copy(), np.zeros(n))
    work = np.empty(7 * sizes.max() + work_size(sizes.max()))
    for _ in range(3):
        _, shift_a, _ = _cd_fast.cd_sweep(codes, bp, active, lam_w, H, counts, a[0], a[1],
                                          a[2], h, True, 1e-12, work)  # fmt: skip
        shift_b = _numpy_cd_sweep(codes, bp, active, lam_w, H, counts, *b, h)
        assert_allclose(shift_a, shift_b, rtol=1e-9, atol=1e-12)
    for x, y in zip(a, b, strict=True):
        assert_allclose(x, y, rtol=1e-8, atol=1e-12)


def small_problem(n=120, sizes=(4, 6)):
    sizes = np.asarray(sizes)
    bp = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
    codes = np.ascontiguousarray(np.vstack([RNG.integers(0, s, n) for s in sizes]), np.uint8)
    h = RNG.uniform(0.2, 1.0, n) / n
    H = np.zeros(bp[-1])
    hk.bin_sums_all(codes, bp, h, H)
    counts = np.zeros(bp[-1])
    hk.bin_sums_all(codes, bp, np.ones(n), counts)
    lam_w = np.full(bp[-1], 3e-3)
    lam_w[bp[:-1]] = 0.0  # no edge before a block's first level
    r = RNG.normal(size=n) / n
    work = np.empty(7 * sizes.max() + work_size(sizes.max()))
    return sizes, bp, codes, h, H, counts, lam_w, r, work


def test_sweeps_without_intercept_reach_the_constrained_optimum():
    cp = pytest.importorskip("cvxpy")
    sizes, bp, codes, h, H, counts, lam_w, r, work = small_problem()
    n = codes.shape[1]
    theta, z, de = np.zeros(bp[-1]), r.copy(), np.zeros(n)
    active = np.arange(len(sizes), dtype=np.intp)
    for _ in range(300):
        viol, shift, step = _cd_fast.cd_sweep(codes, bp, active, lam_w, H, counts, theta, z,
                                              de, h, False, 1e-12, work)  # fmt: skip
        assert shift == 0.0  # no intercept: nothing moves into it
        if step < 1e-13:
            break
    # Δη = X θ and z = r + h Δη are kept in step with θ
    X = np.zeros((n, bp[-1]))
    for j in range(len(sizes)):
        X[np.arange(n), bp[j] + codes[j]] = 1.0
    assert_allclose(de, X @ theta, atol=1e-14)
    assert_allclose(z, r + h * (X @ theta), atol=1e-14)
    t = cp.Variable(bp[-1])
    eta = X @ t
    obj = r @ eta + 0.5 * cp.sum(cp.multiply(h, cp.square(eta)))
    cons = []
    for j in range(len(sizes)):
        s, e = bp[j], bp[j + 1]
        obj = obj + cp.sum(cp.multiply(lam_w[s + 1 : e], cp.abs(t[s + 1 : e] - t[s : e - 1])))
        cons.append(counts[s:e] @ t[s:e] == 0)
    cp.Problem(cp.Minimize(obj), cons).solve(solver="CLARABEL", tol_gap_abs=1e-14,
                                             tol_gap_rel=1e-12, tol_feas=1e-12)  # fmt: skip
    # block CD on a strictly convex problem; CLARABEL's interior point to ~1e-8
    assert_allclose(theta, t.value, atol=2e-6)
    for j in range(len(sizes)):
        s, e = bp[j], bp[j + 1]
        assert abs(counts[s:e] @ theta[s:e]) < 1e-10


def test_a_monotone_step_keeps_its_block_ordered():
    sizes, bp, codes, h, H, counts, lam_w, r, work = small_problem()
    theta, z, de = np.zeros(bp[-1]), r.copy(), np.zeros(codes.shape[1])
    steps = np.array([_cd_fast.STEP_INCREASING, _cd_fast.STEP_DECREASING], dtype=np.uint8)
    active = np.arange(2, dtype=np.intp)
    for _ in range(20):
        _cd_fast.cd_sweep(codes, bp, active, lam_w * 0.01, H, counts, theta, z, de, h, True,
                          1e-12, work, steps)  # fmt: skip
    assert np.all(np.diff(theta[bp[0] : bp[1]]) >= -1e-12)
    assert np.all(np.diff(theta[bp[1] : bp[2]]) <= 1e-12)
    assert np.ptp(theta) > 1e-3  # not trivially flat


def test_arguments_the_kernel_checks_are_refused():
    sizes, bp, codes, h, H, counts, lam_w, r, work = small_problem()
    theta, z, de = np.zeros(bp[-1]), r.copy(), np.zeros(codes.shape[1])
    active = np.arange(2, dtype=np.intp)
    args = (codes, bp, active, lam_w, H, counts, theta, z, de, h, True, 1e-12)
    with pytest.raises(ValueError, match="cd_sweep: work buffer too small"):
        _cd_fast.cd_sweep(*args, work[:10])
    with pytest.raises(ValueError, match="cd_sweep: steps must have one entry per block"):
        _cd_fast.cd_sweep(*args, work, np.zeros(3, dtype=np.uint8))
    with pytest.raises(ValueError, match="cd_sweep: block 1 has an unknown step 7"):
        _cd_fast.cd_sweep(*args, work, np.array([0, 7], dtype=np.uint8))
    with pytest.raises(ValueError, match="cd_sweep: linked must have one entry per level"):
        _cd_fast.cd_sweep(*args, work, None, np.ones(3, dtype=np.uint8))
    with pytest.raises(ValueError, match="Buffer dtype mismatch"):
        _cd_fast.cd_sweep(codes, bp.astype(np.int32), *args[2:], work)
    assert _cd_fast.cd_sweep(codes, bp, active[:0], *args[3:], work) == (0.0, 0.0, 0.0)
    assert np.all(theta == 0)  # every refusal came before any update
