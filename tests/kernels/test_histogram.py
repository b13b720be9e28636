"""kernels/_histogram.pyx: the per-bin histograms and gathers of the one-hot design.

Each kernel agrees with its NumPy twin (stated in its docstring); histograms of data
partitions add up (``out`` is not zeroed). The kernels read ``out[codes[i]]`` unchecked
(their contract: the driver ``design/_design.BinnedDesign`` validates every code
against its block first), so what is checked here for bad input is: a wrong dtype or a
non-contiguous array is refused by the typed memoryviews, and out-of-range codes never
reach a kernel because the driver refuses them, naming the block.
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from binarsity_stats.design._design import BinnedDesign
from binarsity_stats.kernels import _histogram as hk

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("dtype,K", [(np.uint8, 7), (np.uint8, 256), (np.uint16, 1000)])
def test_histograms_and_gathers_match_numpy(dtype, K):
    n = 5000
    codes = RNG.integers(0, K, n).astype(dtype)
    v = RNG.normal(size=n)
    u = RNG.normal(size=n)
    out = np.zeros(K)
    hk.bin_sums(codes, v, out)
    assert_allclose(out, np.bincount(codes, weights=v, minlength=K), rtol=1e-12, atol=1e-12)
    oa, ob = np.zeros(K), np.zeros(K)
    hk.bin_sums2(codes, v, u, oa, ob)
    assert_allclose(oa, np.bincount(codes, weights=v, minlength=K), atol=1e-12)
    assert_allclose(ob, np.bincount(codes, weights=u, minlength=K), atol=1e-12)
    cnt = np.zeros(K)
    hk.bin_counts(codes, cnt)
    assert_allclose(cnt, np.bincount(codes, minlength=K))
    table = RNG.normal(size=K)
    eta = v.copy()
    hk.gather_add(codes, table, eta)
    assert_allclose(eta, v + table[codes])


def test_blockwise_kernels_match_numpy():
    n, sizes = 3000, np.array([3, 10, 1, 50])
    bp = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
    codes = np.vstack([RNG.integers(0, s, n) for s in sizes]).astype(np.uint8)
    theta = RNG.normal(size=bp[-1])
    v = RNG.normal(size=n)
    eta = np.zeros(n)
    hk.gather_add_all(codes, bp, theta, eta)
    ref = sum(theta[bp[j] + codes[j]] for j in range(len(sizes)))
    assert_allclose(eta, ref, atol=1e-12)
    out = np.zeros(bp[-1])
    hk.bin_sums_all(codes, bp, v, out)
    ref = np.concatenate(
        [np.bincount(codes[j], weights=v, minlength=s) for j, s in enumerate(sizes)]
    )
    assert_allclose(out, ref, atol=1e-12)


def test_two_histograms_and_a_subset_of_blocks_match_numpy():
    n, sizes = 2000, np.array([4, 300, 2])
    bp = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
    codes = np.ascontiguousarray(np.vstack([RNG.integers(0, s, n) for s in sizes]),
                                 dtype=np.uint16)  # fmt: skip
    a, b = RNG.normal(size=n), RNG.uniform(size=n)
    oa, ob = np.zeros(bp[-1]), np.zeros(bp[-1])
    hk.bin_sums2_all(codes, bp, a, b, oa, ob)
    for j, s in enumerate(sizes):
        assert_allclose(oa[bp[j] : bp[j + 1]], np.bincount(codes[j], weights=a, minlength=s),
                        atol=1e-12)  # fmt: skip
        assert_allclose(ob[bp[j] : bp[j + 1]], np.bincount(codes[j], weights=b, minlength=s),
                        atol=1e-12)  # fmt: skip
    theta = RNG.normal(size=bp[-1])
    out = np.full(n, 0.5)
    hk.gather_add_blocks(codes, bp, np.array([2, 0], dtype=np.intp), theta, out)
    # two additions in another order: a few ulp of the terms (|θ| < 5)
    assert_allclose(out, 0.5 + theta[bp[0] + codes[0]] + theta[bp[2] + codes[2]], atol=1e-14)


def test_partial_histograms_add_up():
    codes = RNG.integers(0, 9, 1000).astype(np.uint8)
    v = RNG.normal(size=1000)
    out = np.zeros(9)
    hk.bin_sums(codes[:400], v[:400], out)  # two partitions into one buffer
    hk.bin_sums(codes[400:], v[400:], out)
    assert_allclose(out, np.bincount(codes, weights=v, minlength=9), atol=1e-12)


def test_wrong_dtype_and_layout_are_refused():
    codes = np.zeros(10, dtype=np.uint8)
    with pytest.raises(TypeError, match="No matching signature"):  # uint8/uint16 codes only
        hk.bin_sums(codes.astype(np.int64), np.zeros(10), np.zeros(3))
    with pytest.raises(ValueError, match="Buffer dtype mismatch"):
        hk.bin_sums(codes, np.zeros(10, dtype=np.float32), np.zeros(3))
    with pytest.raises(ValueError, match="not C-contiguous"):
        hk.bin_sums(codes, np.zeros(20)[::2], np.zeros(3))
    with pytest.raises(ValueError, match="Buffer dtype mismatch"):
        hk.gather_add_all(np.zeros((2, 10), np.uint8), np.array([0, 1, 2], np.int32),
                          np.zeros(2), np.zeros(10))  # fmt: skip


def test_out_of_range_codes_never_reach_the_kernels():
    codes = np.array([[0, 1, 3], [0, 4, 2]], dtype=np.uint8)
    with pytest.raises(ValueError, match="codes of block 1 reach 4 but the block has 4 levels"):
        BinnedDesign(codes, np.array([0, 4, 8]))
    with pytest.raises(ValueError, match="codes of block 0 reach 3 but the block has 3 levels"):
        BinnedDesign(codes, np.array([0, 3, 8]))


@pytest.mark.parametrize("dtype,Ka,Kb", [(np.uint8, 5, 7), (np.uint8, 16, 16), (np.uint16, 300, 3)])
def test_pair_sums2_matches_two_bincounts_of_the_cells(dtype, Ka, Kb):
    n = 4000
    ca = RNG.integers(0, Ka, n).astype(dtype)
    cb = RNG.integers(0, Kb, n).astype(dtype)
    v, w = RNG.normal(size=n), RNG.exponential(size=n)
    out_v, out_w = np.zeros(Ka * Kb), np.zeros(Ka * Kb)
    hk.pair_sums2(ca, cb, Kb, v, w, out_v, out_w)
    cell = ca.astype(np.int64) * Kb + cb
    assert_allclose(out_v, np.bincount(cell, weights=v, minlength=Ka * Kb), atol=1e-12)
    assert_allclose(out_w, np.bincount(cell, weights=w, minlength=Ka * Kb), atol=1e-12)


def test_pair_tables_driver_refuses_bad_codes_by_feature():
    from binarsity_stats.design._design import PairTables

    codes = np.array([[0, 1, 2], [0, 3, 1]], np.uint8)
    with pytest.raises(ValueError, match="feature 1"):
        PairTables(codes, [3, 3], np.zeros(3), np.ones(3))
    with pytest.raises(ValueError, match="weights"):
        PairTables(codes, [3, 4], np.zeros(3), np.ones(2))
    with pytest.raises(ValueError, match="uint8 or uint16"):
        PairTables(codes.astype(np.int64), [3, 4], np.zeros(3), np.ones(3))
    tables = PairTables(codes, [3, 4], np.array([1.0, 2.0, 3.0]), np.ones(3))
    v, w = tables.table(1, 0)  # the grid of (b, a): cell l·K_a + k
    assert v.tolist() == [1.0, 0, 0, 0, 0, 3.0, 0, 0, 0, 0, 2.0, 0]
    assert w.sum() == 3.0
