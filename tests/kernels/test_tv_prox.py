"""kernels/_tv_prox.pyx: the block-wise TV / binarsity prox and Condat's algorithm.

Each path agrees with the independent taut-string twin of ``penalty/_prox``
(``_reference_weighted_fused_lasso``, unit weights) and, for the constrained mode, with
CVXPY: Condat's direct algorithm (one penalty on every edge), the unit-weight DP (edge
penalties that vary), the scaled DP (values beyond 1e100, checked by homogeneity:
prox(c v, c λ) = c prox(v, λ)), the mean-subtracted mode and the constrained mode.
``prox_mean_fast`` declines (None) whatever it does not take, and otherwise equals the
full kernel bit for bit; bad lengths and unvalidated non-finite inputs are refused.
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from binarsity_stats.kernels import _tv_prox
from binarsity_stats.penalty._prox import _reference_weighted_fused_lasso as reference

RNG = np.random.default_rng(0)
TOL = 1e-12


def tv(v, lam):
    """TV prox of one chain by the reference (lam[k]: the edge (k-1, k); lam[0] unused)."""
    return reference(v, np.ones(len(v)), lam)


def blocks(sizes=(1, 7, 30, 2)):
    ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
    return ptr, RNG.normal(size=ptr[-1]) * 3


def test_condat_matches_the_reference():
    for K, lm in [(2, 0.1), (10, 0.5), (200, 0.3), (50, 100.0)]:
        y = np.cumsum(RNG.normal(size=K))
        out = np.empty(K)
        assert _tv_prox.condat_tv_py(y, lm, out, 10**9)
        assert_allclose(out, tv(y, np.full(K, lm)), atol=1e-10 * max(1, np.abs(y).max()))
    with pytest.raises(ValueError, match="K >= 2 and out of the same length"):
        _tv_prox.condat_tv_py(np.zeros(1), 0.1, np.zeros(1), 10)
    with pytest.raises(ValueError, match="K >= 2 and out of the same length"):
        _tv_prox.condat_tv_py(np.zeros(5), 0.1, np.zeros(4), 10)


@pytest.mark.parametrize("constant", [True, False])  # Condat's blocks, or the unit DP
def test_modes_0_and_1_match_the_reference(constant):
    ptr, v = blocks()
    lam = np.full(ptr[-1], 0.4) if constant else RNG.uniform(0.0, 0.8, ptr[-1])
    for mode in (0, 1):
        out = np.empty_like(v)
        assert _tv_prox.prox_blocks_py(v, ptr, lam, None, out, mode, TOL, 1.5) >= 0
        for j in range(len(ptr) - 1):
            s, e = ptr[j], ptr[j + 1]
            want = tv(v[s:e], 1.5 * lam[s:e])
            if mode == 1:
                want = want - want.mean()
            assert_allclose(out[s:e], want, atol=1e-10)


def test_the_scaled_dp_for_values_beyond_the_unit_range():
    ptr, v = blocks((5, 40))
    lam = RNG.uniform(0.1, 0.5, ptr[-1])
    small, big = np.empty_like(v), np.empty_like(v)
    _tv_prox.prox_blocks_py(v, ptr, lam, None, small, 0, TOL)
    c = 1e150
    _tv_prox.prox_blocks_py(v * c, ptr, lam * c, None, big, 0, TOL)
    assert_allclose(big / c, small, atol=1e-10)


def test_mode_2_is_the_constrained_prox():
    cp = pytest.importorskip("cvxpy")
    ptr, v = blocks((3, 12))
    lam = RNG.uniform(0.1, 0.6, ptr[-1])
    counts = RNG.integers(1, 20, ptr[-1]).astype(float)
    out = np.empty_like(v)
    assert _tv_prox.prox_blocks_py(v, ptr, lam, counts, out, 2, TOL) >= 0
    for j in range(2):
        s, e = ptr[j], ptr[j + 1]
        t = cp.Variable(e - s)
        obj = 0.5 * cp.sum_squares(t - v[s:e]) + cp.sum(
            cp.multiply(lam[s + 1 : e], cp.abs(t[1:] - t[:-1]))
        )
        cp.Problem(cp.Minimize(obj), [counts[s:e] @ t == 0]).solve(
            solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12
        )
        assert_allclose(out[s:e], t.value, atol=1e-6)  # CLARABEL to ~1e-8
        assert abs(counts[s:e] @ out[s:e]) < 1e-9 * counts[s:e].sum()
    with pytest.raises(ValueError, match="counts of the same length as v are required"):
        _tv_prox.prox_blocks_py(v, ptr, lam, counts[:-1], out, 2, TOL)
    with pytest.raises(ValueError, match="counts of the same length as v are required"):
        _tv_prox.prox_blocks_py(v, ptr, lam, None, out, 2, TOL)


def test_unvalidated_inputs_stop_the_run():
    ptr, v = blocks()
    lam = np.full(ptr[-1], 0.3)
    out = np.empty_like(v)
    bad_v = v.copy()
    bad_v[ptr[2] + 3] = np.nan
    assert _tv_prox.prox_blocks_py(bad_v, ptr, lam, None, out, 1, TOL, 1.0, True) == -2
    bad_lam = RNG.uniform(0.1, 0.5, ptr[-1])
    bad_lam[ptr[2] + 4] = -1.0
    assert _tv_prox.prox_blocks_py(v, ptr, bad_lam, None, out, 0, TOL, 1.0, True) == -2
    with pytest.raises(ValueError, match="Buffer dtype mismatch"):
        _tv_prox.prox_blocks_py(v, ptr.astype(np.int32), lam, None, out, 0, TOL)


def test_prox_mean_fast_declines_or_equals_the_kernel():
    ptr, v = blocks()
    w = RNG.uniform(0.0, 0.6, ptr[-1])
    got = _tv_prox.prox_mean_fast(v, ptr, w, 0.7, TOL)
    want = np.empty_like(v)
    _tv_prox.prox_blocks_py(v, ptr, w, None, want, 1, TOL, 0.7)
    assert np.array_equal(got, want)
    declined = [
        (v, ptr, w, 1),  # step not a float
        (v, ptr.astype(np.int64 if np.intp is not np.int64 else np.int32), w, 0.7),
        (v.astype(np.float32), ptr, w, 0.7),
        (v, ptr, w[:-1], 0.7),  # lengths differ
        (v, ptr[:-1], w, 0.7),  # the blocks do not cover v
        (v, ptr[::-1].copy(), w, 0.7),  # not increasing
        (np.repeat(v, 2)[::2], ptr, w, 0.7),  # not contiguous
        (v, ptr, w, -1.0),  # negative step
        (np.where(np.arange(len(v)) == 3, np.inf, v), ptr, w, 0.7),  # not finite
        (v, ptr, np.where(np.arange(len(v)) == 9, -0.1, w), 0.7),  # negative weight
    ]
    for args in declined:
        assert _tv_prox.prox_mean_fast(*args, TOL) is None
    assert _tv_prox.prox_mean_fast(np.empty(0), np.zeros(1, np.intp), np.empty(0), 0.5,
                                   TOL).shape == (0,)  # fmt: skip
