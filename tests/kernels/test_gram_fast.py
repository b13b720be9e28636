"""kernels/_gram_fast.pyx: the one-hot design's sufficient statistics and the Gram sweep.

``pair_tables`` and ``bin_free_sums`` equal their NumPy twins (``np.bincount`` of the
same rows, summed in row order: bit for bit, as documented); a code at or above its
block's size is skipped and counted instead of written out of bounds; ``gram_cd_sweep``
takes the same exact block steps as the row sweep ``_cd_fast.cd_sweep`` on the same
quadratic model (θ, shift and gradient), reading only the Gram; every inconsistent
shape, task or block is refused by message before the kernel runs.
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from binarsity_stats.kernels import _cd_fast, _gram_fast
from binarsity_stats.kernels import _histogram as hk
from binarsity_stats.kernels._fused_lasso import work_size

RNG = np.random.default_rng(0)


def design(n=500, sizes=(3, 7, 12), dtype=np.uint8):
    sizes = np.asarray(sizes)
    bp = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
    codes = np.ascontiguousarray(np.vstack([RNG.integers(0, s, n) for s in sizes]), dtype)
    X = np.zeros((n, bp[-1]))
    for j in range(len(sizes)):
        X[np.arange(n), bp[j] + codes[j]] = 1.0
    return sizes, bp, codes, X


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.intp])
def test_pair_tables_are_bincounts(dtype):
    sizes, bp, codes, X = design(dtype=dtype)
    w = RNG.uniform(size=codes.shape[1])
    out = np.zeros((bp[-1], bp[-1]))
    tj, tl = np.array([0, 0, 1], np.intp), np.array([1, 2, 2], np.intp)
    assert _gram_fast.pair_tables(codes, bp, tj, tl, w, out) == 0
    for j, k in zip(tj, tl, strict=True):
        c = codes.astype(np.intp)
        table = np.bincount(c[j] * sizes[k] + c[k], weights=w,
                            minlength=sizes[j] * sizes[k]).reshape(sizes[j], sizes[k])  # fmt: skip
        np.testing.assert_array_equal(out[bp[j] : bp[j + 1], bp[k] : bp[k + 1]], table)
        np.testing.assert_array_equal(out[bp[k] : bp[k + 1], bp[j] : bp[j + 1]], table.T)
    off = X.T @ (w[:, None] * X)  # the off-diagonal blocks of the Gram
    for j in range(3):
        off[bp[j] : bp[j + 1], bp[j] : bp[j + 1]] = 0.0
    assert_allclose(out, off, rtol=1e-12, atol=1e-12)


def test_bin_free_sums_are_bincounts():
    sizes, bp, codes, X = design()
    n = codes.shape[1]
    U = np.ascontiguousarray(RNG.normal(size=(n, 2)))
    w, z = RNG.uniform(size=n), RNG.normal(size=n)
    BU, Bz = np.zeros((bp[-1], 2)), np.zeros(bp[-1])
    assert _gram_fast.bin_free_sums(codes, bp, np.array([0, 2], np.intp), U, w, z, BU, Bz) == 0
    for j in (0, 2):
        s = slice(bp[j], bp[j + 1])
        np.testing.assert_array_equal(Bz[s], np.bincount(codes[j], weights=w * z,
                                                         minlength=sizes[j]))  # fmt: skip
        for c in range(2):
            np.testing.assert_array_equal(BU[s, c], np.bincount(codes[j], weights=w * U[:, c],
                                                                minlength=sizes[j]))  # fmt: skip
    assert np.all(BU[bp[1] : bp[2]] == 0) and np.all(Bz[bp[1] : bp[2]] == 0)  # block 1 not asked


def test_out_of_range_codes_are_skipped_and_counted():
    sizes, bp, codes, _ = design(n=50)
    codes = codes.copy()
    codes[1, [3, 9]] = 7  # block 1 has 7 levels: code 7 is out of range
    w = np.ones(50)
    out = np.zeros((bp[-1] + 4, bp[-1] + 4))  # room past the blocks: a stray write shows
    assert _gram_fast.pair_tables(codes, bp, np.array([0], np.intp), np.array([1], np.intp),
                                  w, out) == 2  # fmt: skip
    assert out.sum() == 2 * 48  # the table and its transpose, without the two rows
    assert np.all(out[bp[-1] :] == 0) and np.all(out[:, bp[-1] :] == 0)
    BU, Bz = np.zeros((bp[-1] + 4, 1)), np.zeros(bp[-1] + 4)
    U = np.ones((50, 1))
    assert _gram_fast.bin_free_sums(codes, bp, np.array([1], np.intp), U, w, w, BU, Bz) == 2
    assert Bz.sum() == 48 and np.all(Bz[bp[2] :] == 0)


def test_the_gram_sweep_takes_the_row_sweeps_steps():
    sizes, bp, codes, X = design(n=400)
    n, d = codes.shape[1], bp[-1]
    h = RNG.uniform(0.1, 1.0, n) / n
    r = RNG.normal(size=n) / n
    G = X.T @ (h[:, None] * X)
    H = np.zeros(d)
    hk.bin_sums_all(codes, bp, h, H)
    counts = np.zeros(d)
    hk.bin_sums_all(codes, bp, np.ones(n), counts)
    lam_w = RNG.uniform(0, 2e-3, d)
    active = np.arange(3, dtype=np.intp)
    BU = np.zeros((d, 0))
    theta_g, g, gU = np.zeros(d), X.T @ r, np.zeros(0)
    theta_r, z, de = np.zeros(d), r.copy(), np.zeros(n)
    work = np.empty(7 * sizes.max() + work_size(sizes.max()))
    for _ in range(4):
        _, shift_g, _ = _gram_fast.gram_cd_sweep(bp, active, lam_w, H, counts, G, BU, theta_g,
                                                 g, gU, True, 1e-12, work)  # fmt: skip
        _, shift_r, _ = _cd_fast.cd_sweep(codes, bp, active, lam_w, H, counts, theta_r, z, de,
                                          h, True, 1e-12, work)  # fmt: skip
        assert shift_g == pytest.approx(shift_r, rel=1e-9, abs=1e-13)
        assert_allclose(theta_g, theta_r, rtol=1e-9, atol=1e-12)
        # the gradient kept from the Gram is the histogram of the row sweep's z
        assert_allclose(g, X.T @ z, rtol=1e-9, atol=1e-14)


def test_inconsistent_arguments_are_refused():
    sizes, bp, codes, X = design(n=30)
    d = bp[-1]
    w = np.ones(30)
    out = np.zeros((d, d))
    one, two = np.array([0], np.intp), np.array([1], np.intp)
    with pytest.raises(ValueError, match="pair_tables: inconsistent shapes"):
        _gram_fast.pair_tables(codes, bp, one, two, w[:29], out)
    with pytest.raises(ValueError, match="pair_tables: task lists differ in length"):
        _gram_fast.pair_tables(codes, bp, one, np.array([1, 2], np.intp), w, out)
    with pytest.raises(ValueError, match="pair_tables: bad task"):
        _gram_fast.pair_tables(codes, bp, one, one, w, out)
    with pytest.raises(ValueError, match="pair_tables: bad task"):
        _gram_fast.pair_tables(codes, bp, one, np.array([3], np.intp), w, out)
    with pytest.raises(ValueError, match="pair_tables: block_ptr beyond the output"):
        _gram_fast.pair_tables(codes, bp, one, np.array([2], np.intp), w, np.zeros((d - 1, d - 1)))
    U = np.ones((30, 1))
    with pytest.raises(ValueError, match="bin_free_sums: inconsistent row counts"):
        _gram_fast.bin_free_sums(codes, bp, one, U[:29], w, w, np.zeros((d, 1)), np.zeros(d))
    with pytest.raises(ValueError, match="bin_free_sums: bad block"):
        _gram_fast.bin_free_sums(codes, bp, np.array([5], np.intp), U, w, w, np.zeros((d, 1)),
                                 np.zeros(d))  # fmt: skip
    G, H, z = np.eye(d), np.ones(d), np.zeros(d)
    theta, g = np.zeros(d), np.zeros(d)
    work = np.empty(6 * 12 + work_size(12))
    args = (bp, np.arange(3, dtype=np.intp), z, H, H, G, np.zeros((d, 0)), theta, g, np.zeros(0),
            True, 1e-12)  # fmt: skip
    with pytest.raises(ValueError, match="gram_cd_sweep: inconsistent shapes"):
        _gram_fast.gram_cd_sweep(*args[:5], np.eye(d - 1), *args[6:], work)
    with pytest.raises(ValueError, match="gram_cd_sweep: active block out of range"):
        _gram_fast.gram_cd_sweep(bp, np.array([3], np.intp), *args[2:], work)
    with pytest.raises(ValueError, match="gram_cd_sweep: steps must have one entry per block"):
        _gram_fast.gram_cd_sweep(*args, work, np.zeros(2, np.uint8))
    with pytest.raises(ValueError, match="gram_cd_sweep: block 0 has an unknown step 1"):
        _gram_fast.gram_cd_sweep(*args, work, np.ones(3, np.uint8))
    with pytest.raises(ValueError, match="gram_cd_sweep: work buffer too small"):
        _gram_fast.gram_cd_sweep(*args, work[:5])
    assert np.all(theta == 0) and np.all(g == 0)
