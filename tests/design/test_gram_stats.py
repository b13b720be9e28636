"""Unit tests of ``binarsity_stats.design._gram_stats``: the weighted Gram of the one-hot
design (its co-occurrence tables, bin × free-column sums, moments of z), checked against
the one-hot matrix materialised here with NumPy and against ``np.bincount``; partitions
add and subtract; the result does not depend on the threads."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from binarsity_stats.design._gram_stats import (
    _n_threads,
    _split,
    bin_pair_gram,
    gram_statistics,
    gram_statistics_numpy,
)

SIZES = [4, 3, 6, 2]
BP = np.concatenate([[0], np.cumsum(SIZES)]).astype(np.intp)
D = int(BP[-1])


def _data(n=500, seed=0, dtype=np.uint8):
    rng = np.random.default_rng(seed)
    codes = np.stack([rng.integers(0, s, size=n) for s in SIZES]).astype(dtype)
    Z = rng.normal(size=(n, 2))
    w = rng.uniform(0.0, 2.0, n)
    z = rng.normal(size=n)
    return codes, Z, w, z


def _one_hot(codes):
    n = codes.shape[1]
    X = np.zeros((n, D))
    for j in range(len(SIZES)):
        X[np.arange(n), BP[j] + codes[j].astype(np.intp)] = 1.0
    return X


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int32])
def test_statistics_are_the_one_hot_designs_weighted_products(dtype):
    codes, Z, w, z = _data(dtype=dtype)
    st = gram_statistics(codes, BP, free=Z, weight=w, z=z)
    X = _one_hot(codes)
    U = np.column_stack([np.ones(len(w)), Z])
    # sums of ≤ 500 terms: rounding ≲ 500 eps relative to the sum of |terms|
    assert_allclose(st.BB, X.T @ (w[:, None] * X), rtol=1e-12, atol=1e-12)
    assert_allclose(st.BU, X.T @ (w[:, None] * U), rtol=1e-12, atol=1e-12)
    assert_allclose(st.UU, U.T @ (w[:, None] * U), rtol=1e-12, atol=1e-12)
    assert_allclose(st.Bz, X.T @ (w * z), rtol=1e-12, atol=1e-12)
    assert_allclose(st.Uz, U.T @ (w * z), rtol=1e-12, atol=1e-12)
    assert_allclose(st.zz, np.sum(w * z * z), rtol=1e-12)
    assert st.n_rows == 500 and st.n_levels == D and st.n_dense == 2
    assert_allclose(st.counts, X.T @ w, rtol=1e-12)
    assert_allclose(st.weight_sum, w.sum(), rtol=1e-12)
    # the NumPy reference of the module agrees too
    ref = gram_statistics_numpy(codes, BP, free=Z, weight=w, z=z)
    assert_allclose(st.BB, ref.BB, rtol=1e-12, atol=1e-12)
    assert_allclose(st.Bz, ref.Bz, rtol=1e-12, atol=1e-12)


def test_defaults_are_unit_weights_no_dense_columns_and_z_zero():
    codes, _, _, _ = _data(n=50)
    st = gram_statistics(codes, BP)
    X = _one_hot(codes)
    assert_array_equal(st.BB, X.T @ X)  # integer counts: exact
    assert st.UU.shape == (1, 1) and st.UU[0, 0] == 50 and st.n_dense == 0
    assert not st.Bz.any() and st.zz == 0.0
    # a 1-D free column is one column
    assert gram_statistics(codes, BP, free=np.arange(50.0)).n_dense == 1


def test_pair_tables_equal_bincount_bit_for_bit_whatever_the_threads():
    codes, _, w, _ = _data(n=3000, seed=1)
    one = bin_pair_gram(codes, BP, w, n_threads=1)
    many = bin_pair_gram(codes, BP, w, n_threads=3)
    assert_array_equal(one, many)
    for j in range(len(SIZES)):
        for k in range(j + 1, len(SIZES)):
            ref = np.bincount(codes[j].astype(np.intp) * SIZES[k] + codes[k], weights=w,
                              minlength=SIZES[j] * SIZES[k]).reshape(SIZES[j], SIZES[k])  # fmt: skip
            assert_array_equal(one[BP[j] : BP[j + 1], BP[k] : BP[k + 1]], ref)
        diag = np.bincount(codes[j], weights=w, minlength=SIZES[j])
        assert_array_equal(np.diag(one)[BP[j] : BP[j + 1]], diag)
    # bin_pair_gram fills the upper triangle of blocks; the statistics hold the same tables
    st1 = gram_statistics(codes, BP, weight=w, n_threads=1)
    st3 = gram_statistics(codes, BP, weight=w, n_threads=3)
    assert_array_equal(st1.BB, st3.BB)
    assert_array_equal(np.triu(st1.BB), np.triu(one))


def test_bin_pair_gram_uses_a_given_diagonal_and_output():
    codes, _, w, _ = _data(n=40)
    out = np.zeros((D, D))
    diag = np.arange(D, dtype=float)
    got = bin_pair_gram(codes, BP, w, out=out, diagonal=diag)
    assert got is out
    assert_array_equal(np.diag(got), diag)


def test_partitions_add_and_a_fold_subtracts():
    codes, Z, w, z = _data(n=600, seed=2)
    parts = [slice(0, 200), slice(200, 450), slice(450, 600)]
    stats = [gram_statistics(codes[:, s], BP, free=Z[s], weight=w[s], z=z[s]) for s in parts]
    whole = gram_statistics(codes, BP, free=Z, weight=w, z=z)
    total = sum(stats)  # sum() starts from 0
    for name in ("BB", "BU", "UU", "Bz", "Uz"):
        assert_allclose(getattr(total, name), getattr(whole, name), rtol=1e-12, atol=1e-11)
    assert_allclose(total.zz, whole.zz, rtol=1e-12)
    assert total.n_rows == 600
    train = whole - stats[1]
    ref = stats[0] + stats[2]
    assert_allclose(train.BB, ref.BB, rtol=1e-12, atol=1e-11)
    assert_allclose(train.Uz, ref.Uz, rtol=1e-12, atol=1e-11)
    assert train.n_rows == 350
    assert whole.nbytes == sum(getattr(whole, k).nbytes for k in ("BB", "BU", "UU", "Bz", "Uz")) + 8


def test_statistics_of_different_designs_do_not_combine():
    codes, Z, w, z = _data(n=30)
    a = gram_statistics(codes, BP, free=Z)
    with pytest.raises(ValueError, match=r"^GramStats of different designs"):
        a + gram_statistics(codes, BP)  # no dense columns
    other = np.array([0, 4, 7, 13, 16], dtype=np.intp)
    with pytest.raises(ValueError, match=r"^GramStats of different designs"):
        a - gram_statistics(np.vstack([codes, np.zeros((0, 30), np.uint8)]), other, free=Z)
    with pytest.raises(TypeError, match=r"^cannot combine GramStats with float"):
        a + 1.5


@pytest.mark.parametrize(
    ("kw", "pattern"),
    [
        ({"codes": np.zeros(5, np.uint8)}, r"^codes must be a 2-d array of shape \(p, n\); got 1 dims"),
        ({"codes": np.zeros((4, 5))}, r"^codes must be integers; got dtype float64"),
        ({"block_ptr": np.array([0, 4, 7])}, r"^block_ptr must be integer offsets of length p \+ 1 = 5"),
        ({"block_ptr": np.array([0, 4, 4, 10, 12])}, r"^block_ptr must start at 0 and increase"),
        ({"codes": np.full((4, 5), 3, np.uint8)}, r"^codes of block 1 must lie in \[0, 3\); got values in \[3, 3\]"),
        ({"weight": -np.ones(5)}, r"^weight must be non-negative"),
        ({"weight": np.ones(4)}, r"^weight has 4 rows but codes have 5"),
        ({"z": np.array([1.0, np.nan, 0, 0, 0])}, r"^z must be finite"),
        ({"free": np.ones((4, 2))}, r"^free must have shape \(n, q\) with n = 5; got \(4, 2\)"),
        ({"free": np.full((5, 1), np.inf)}, r"^free must be finite"),
    ],
)
def test_bad_arguments_are_refused_by_name(kw, pattern):
    args = {"codes": np.zeros((4, 5), np.uint8), "block_ptr": BP}
    args.update(kw)
    codes, bp = args.pop("codes"), args.pop("block_ptr")
    with pytest.raises(ValueError, match=pattern):
        gram_statistics(codes, bp, **args)


def test_thread_counts_and_the_cost_split():
    assert _n_threads(4, 2) == 2  # no more threads than tasks
    assert _n_threads(None, 10, cells=100) == 1  # a small call runs in the caller's thread
    with pytest.raises(ValueError, match=r"^n_threads must be a positive integer; got 0"):
        _n_threads(0, 3)
    costs = np.array([5.0, 1.0, 1.0, 1.0, 1.0, 1.0])
    parts = _split(costs, 2)
    assert sorted(np.concatenate(parts).tolist()) == list(range(6))  # every task once
    loads = sorted(float(costs[p].sum()) for p in parts)
    assert loads == [5.0, 5.0]
