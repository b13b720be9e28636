"""Tests of the binarizer (binarsity_stats/_binarizer.py, _binning.pyx).

What is proved, by group:

* the code rule: codes are ``searchsorted(edges, x, "left")`` (right-closed bins), the
  Cython kernels agree with their NumPy twins, out-of-range values go to the end bins;
* the quantile rule: the documented position convention (type-1 quantiles at ranks
  ⌈k n/d⌉), the fast path on sorted data equals the tie-aware split on the distinct
  values, every bin is non-empty, and ties are handled as design.md §6 asks (spike with
  a tail, few distinct values, 40 distinct values);
* invariances: row order, strictly increasing transforms, memory layout / dtype of X;
* missing values, sample weights, the uniform method;
* every bad input raises an error that names the column.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from binarsity_stats.design._binarizer import (
    Binarizer,
    _assign_codes_2d_reference,
    _assign_codes_reference,
    _compact_column_reference,
    bin_codes,
)
from binarsity_stats.design._cuts import (
    _quantile_edges_sorted,
    _quantile_positions,
    tie_aware_cuts,
    _unique_counts,
)
from binarsity_stats.kernels._binning import assign_codes, assign_codes_2d, compact_column

RNG = np.random.default_rng(20190501)


def _check_fitted_invariants(b: Binarizer, X: np.ndarray) -> np.ndarray:
    """Codes follow the edge rule and every chain bin is non-empty on X; return codes."""
    codes = b.transform(X)
    X = np.asarray(X, dtype=np.float64)
    for j, edges in enumerate(b.edges_):
        assert edges.dtype == np.float64
        assert np.all(np.diff(edges) > 0)
        x = X[:, j]
        nan = np.isnan(x)
        expected = np.searchsorted(edges, x, side="left")
        expected[nan] = len(edges) + 1
        np.testing.assert_array_equal(codes[:, j], expected)
        counts = np.bincount(codes[:, j], minlength=b.n_bins_[j])
        assert counts.shape[0] == b.n_bins_[j]
        assert np.all(counts[: len(edges) + 1] > 0), "an empty chain bin"
        np.testing.assert_array_equal(counts, b.bin_counts_[j])
        assert b.has_missing_level_[j] == nan.any()
    return codes


# =====================================================================================
# The code rule and the kernels
# =====================================================================================


def test_codes_are_right_closed_searchsorted_left():
    """A value equal to a cut point belongs to the bin it closes: (e[k-1], e[k]]."""
    x = RNG.standard_normal((500, 1))
    b = Binarizer(n_bins=8).fit(x)
    edges = b.edges_[0]
    at_edges = edges[:, None]
    np.testing.assert_array_equal(b.transform(at_edges)[:, 0], np.arange(len(edges)))
    just_above = np.nextafter(edges, np.inf)[:, None]
    np.testing.assert_array_equal(b.transform(just_above)[:, 0], np.arange(1, len(edges) + 1))
    _check_fitted_invariants(b, x)


def test_out_of_range_values_fall_in_end_bins():
    """Values below the training minimum get code 0, above the maximum the last code."""
    x = RNG.uniform(0, 1, size=(300, 1))
    b = Binarizer(n_bins=5).fit(x)
    new = np.array([[-1e300], [-5.0], [0.0], [1.0], [7.0], [1e300]])
    np.testing.assert_array_equal(b.transform(new)[:, 0], [0, 0, 0, 4, 4, 4])


@pytest.mark.parametrize("m", [0, 1, 2, 7, 49, 255, 300])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_assign_codes_kernel_matches_numpy_twin(m, dtype):
    """The Cython kernel and its NumPy twin write the same codes and flags."""
    x = RNG.standard_normal(1001).astype(dtype)
    x[::97] = np.nan
    edges = np.unique(RNG.standard_normal(m))
    code_dtype = np.uint8 if len(edges) + 1 <= 255 else np.uint16
    for missing_code in (len(edges) + 1, -1):
        out, ref = np.zeros(x.shape, code_dtype), np.zeros(x.shape, code_dtype)
        flag = assign_codes(x, edges, out, missing_code)
        assert flag == _assign_codes_reference(x, edges, ref, missing_code)
        np.testing.assert_array_equal(out, ref)
        assert flag == (-1 if missing_code >= 0 else 0)
    x[500] = -np.inf  # first bad value when NaN is allowed
    out = np.zeros(x.shape, code_dtype)
    assert assign_codes(x, edges, out, len(edges) + 1) == 500
    assert _assign_codes_reference(x, edges, out, len(edges) + 1) == 500


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("order", ["C", "F", "reversed"])
def test_assign_codes_2d_kernel_matches_numpy_twin(dtype, order):
    """The row-blocked matrix kernel codes every feature as the column-wise twin does,
    whatever the memory order, with per-feature cut points and missing codes."""
    n = 20000  # several row blocks
    X = RNG.standard_normal((n, 4)).astype(dtype)
    X[::101, 1] = np.nan
    X = {"C": X, "F": np.asfortranarray(X), "reversed": X[::-1]}[order]
    edges = [np.sort(RNG.standard_normal(k)) for k in (49, 10, 0, 300)]  # 0: constant
    flat = np.concatenate(edges)
    edge_ptr = np.concatenate([[0], np.cumsum([len(e) for e in edges])]).astype(np.intp)
    missing = np.array([-1, 11, -1, -1], dtype=np.intp)
    out, ref = np.zeros((4, n), np.uint16), np.zeros((4, n), np.uint16)
    assert assign_codes_2d(X, flat, edge_ptr, missing, out) == (-1, -1)
    assert _assign_codes_2d_reference(X, flat, edge_ptr, missing, ref) == (-1, -1)
    np.testing.assert_array_equal(out, ref)
    no_edges = np.zeros(5, np.intp)  # every feature constant: an empty edge array
    assert assign_codes_2d(X, np.empty(0), no_edges, missing, out) == (-1, -1)
    assert not out[[0, 2, 3]].any() and np.array_equal(out[1] == 11, np.isnan(X[:, 1]))
    Xb = np.array(X)
    Xb[12345, 2] = np.inf
    assert assign_codes_2d(Xb, flat, edge_ptr, missing, out) == (12345, 2)
    Xb[:, 1] = 0.0
    Xb[7, 1] = np.nan
    assert assign_codes_2d(Xb, flat, edge_ptr, np.full(4, -1, np.intp), out) == (7, 1)


def test_assign_codes_kernel_reads_strided_columns():
    """A strided (even reversed) column is coded in place, as its contiguous copy."""
    X = RNG.standard_normal((400, 3))
    edges = np.sort(RNG.standard_normal(20))
    for col in (X[:, 1], X[::-1, 2], X[::3, 0]):
        out = np.empty(col.shape[0], np.uint8)
        assert assign_codes(col, edges, out, -1) == -1
        np.testing.assert_array_equal(out, np.searchsorted(edges, col))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_compact_column_kernel_matches_numpy_twin(dtype):
    """The one-pass scan keeps the non-NaN values in order and flags the first inf."""
    x = RNG.standard_normal(500).astype(dtype)
    x[[3, 40, 41]] = np.nan
    x[7] = -0.0
    out, ref = np.full(500, 9.0), np.full(500, 9.0)
    assert compact_column(x, out) == _compact_column_reference(x, ref) == (497, -1)
    np.testing.assert_array_equal(out, ref)
    assert np.signbit(out[6]) == np.False_  # -0.0 stored as +0.0
    x[100] = np.inf
    assert compact_column(x, out)[1] == _compact_column_reference(x, ref)[1] == 100


# =====================================================================================
# The quantile rule
# =====================================================================================


def test_quantile_positions_are_type1_quantiles():
    """Cut points are x_(⌈kn/d⌉): np.quantile(method="inverted_cdf") when kn/d ∉ ℤ.

    (n = 1009 is prime, so kn/d is never an integer and the floating-point rounding of
    k/d in np.quantile cannot move a position; the package computes it exactly.)
    """
    x = RNG.standard_normal((1009, 1))
    for d in (2, 3, 10, 50, 64):
        b = Binarizer(n_bins=d).fit(x)
        ref = np.quantile(x[:, 0], np.arange(1, d) / d, method="inverted_cdf")
        np.testing.assert_array_equal(b.edges_[0], ref)
    # Exact arithmetic where float would round: 7/50 * 100 = 14.000000000000002.
    np.testing.assert_array_equal(_quantile_positions(100, 50)[6], 13)


def test_tie_free_bins_have_sizes_differing_by_at_most_one():
    """On tie-free data every bin holds ⌊n/d⌋ or ⌈n/d⌉ rows."""
    for n, d in [(1000, 7), (1001, 50), (50, 50), (257, 256)]:
        x = RNG.permutation(n).astype(float)[:, None]
        b = Binarizer(n_bins=d).fit(x)
        assert b.n_bins_[0] == d
        assert b.bin_counts_[0].min() >= n // d
        assert b.bin_counts_[0].max() <= -(-n // d)


@pytest.mark.parametrize("n", [50, 51, 1000, 12345])
@pytest.mark.parametrize("d", [2, 7, 50])
def test_fast_path_equals_tie_aware_split_on_tie_free_data(n, d):
    """The fast path (candidates read at their ranks) is the tie-aware rule's function.

    Three routes to the same cut points on tie-free data: the sorted-array fast path,
    the tie-aware split on (distinct values, counts), and np.partition at the ranks.
    """
    x = RNG.standard_normal(n)
    s = np.sort(x)
    fast = _quantile_edges_sorted(s, d)
    values, counts = _unique_counts(s)
    slow = values[tie_aware_cuts(counts, d)]
    np.testing.assert_array_equal(fast, slow)
    if n >= d:
        pos = _quantile_positions(n, d)
        np.testing.assert_array_equal(fast, np.partition(x, pos)[pos])


def test_fast_path_equals_tie_aware_split_with_ties_that_keep_quantiles_distinct():
    """Ties that do not collapse candidates leave the quantiles alone, on both paths."""
    x = np.round(RNG.standard_normal(5000), 2)  # ~500 distinct values, many ties
    s = np.sort(x)
    values, counts = _unique_counts(s)
    for d in (5, 20, 50):
        fast = _quantile_edges_sorted(s, d)
        np.testing.assert_array_equal(fast, values[tie_aware_cuts(counts, d)])
        assert len(fast) == d - 1


def test_spike_at_zero_keeps_its_tail_resolved():
    """90% zeros + a continuous tail: zero alone, the tail in d - 1 near-equal bins."""
    n = 20000
    x = np.where(RNG.random(n) < 0.9, 0.0, RNG.lognormal(8, 1.5, n))[:, None]
    b = Binarizer(n_bins=50).fit(x)
    assert b.n_bins_[0] == 50
    assert b.edges_[0][0] == 0.0
    counts = b.bin_counts_[0]
    assert counts[0] == np.sum(x == 0)
    tail = counts[1:]
    assert tail.max() - tail.min() <= 1  # the tail is tie-free: equal shares
    _check_fitted_invariants(b, x)


def test_spike_with_heavy_tail_values_gets_them_their_own_bins():
    """Like Adult's capital-gain: repeated tail values with a big count get own bins."""
    n = 30000
    x = np.where(RNG.random(n) < 0.9, 0.0, RNG.integers(1, 20000, n).astype(float))
    x[:300] = 15024.0  # 1% of rows on one tail value
    x[300:500] = 99999.0
    x = x[:, None]
    b = Binarizer(n_bins=50).fit(x)
    assert b.n_bins_[0] == 50
    codes = _check_fitted_invariants(b, x)[:, 0]
    for v in (0.0, 15024.0, 99999.0):
        level = codes[x[:, 0] == v][0]
        assert np.all(x[codes == level, 0] == v), f"value {v} shares its bin"


def test_forty_distinct_values_are_not_collapsed():
    """40 distinct values with very uneven counts: min(d, 40) bins, never 2."""
    values = np.arange(40.0)
    counts = np.round(5000 * 0.8 ** np.arange(40)).astype(int) + 1  # geometric
    x = np.repeat(values, counts)[:, None]
    assert Binarizer(n_bins=50).fit(x).n_bins_[0] == 40
    for d in (5, 10, 20, 39):
        b = Binarizer(n_bins=d).fit(x)
        assert b.n_bins_[0] == d
        _check_fitted_invariants(b, x)


def test_few_distinct_values_get_one_bin_each():
    """≤ n_bins distinct values: one bin per value, the cut points are the values."""
    x = RNG.choice([-3.0, 0.5, 2.0, 7.0, 11.0], size=(999, 1), p=[0.9, 0.04, 0.03, 0.02, 0.01])
    b = Binarizer(n_bins=5).fit(x)
    np.testing.assert_array_equal(b.edges_[0], [-3.0, 0.5, 2.0, 7.0])
    b = Binarizer(n_bins=50).fit(np.array([[2.0], [1.0], [3.0]]))
    np.testing.assert_array_equal(b.edges_[0], [1.0, 2.0])


def test_boolean_feature_has_two_bins():
    """A 0/1 feature: two levels, cut point 0."""
    x = RNG.random((100, 1)) < 0.3
    b = Binarizer().fit(x)
    np.testing.assert_array_equal(b.edges_[0], [0.0])
    np.testing.assert_array_equal(b.transform(x)[:, 0], x[:, 0])


def test_constant_column_has_one_bin():
    """A constant feature: no cut point, one level, every value coded 0."""
    X = np.column_stack([np.full(50, 3.5), RNG.standard_normal(50)])
    b = Binarizer(n_bins=4).fit(X)
    assert b.edges_[0].shape == (0,)
    assert b.n_bins_[0] == 1
    np.testing.assert_array_equal(b.bin_counts_[0], [50])
    np.testing.assert_array_equal(b.transform([[-1e9, 0.0], [1e9, 0.0]])[:, 0], [0, 0])


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    x=hnp.arrays(
        np.float64,
        st.integers(1, 300),
        elements=st.one_of(
            st.integers(-5, 5).map(float),  # heavy ties
            st.floats(-1e6, 1e6, allow_nan=False, allow_subnormal=False),
        ),
    ),
    d=st.integers(2, 40),
    seed=st.integers(0, 2**32 - 1),
)
def test_property_quantile_rule(x, d, seed):
    """On any data: min(d, m) bins, all non-empty, edges are data values and obey the
    code rule, fast path == tie-aware split, row order does not matter."""
    X = x[:, None]
    b = Binarizer(n_bins=d).fit(X)
    m = np.unique(x).shape[0]
    assert b.n_bins_[0] == min(d, m)
    assert np.all(np.isin(b.edges_[0], x))
    _check_fitted_invariants(b, X)
    s = np.sort(x)
    values, counts = _unique_counts(s)
    np.testing.assert_array_equal(_quantile_edges_sorted(s, d), values[tie_aware_cuts(counts, d)])
    perm = np.random.default_rng(seed).permutation(x.shape[0])
    np.testing.assert_array_equal(Binarizer(n_bins=d).fit(X[perm]).edges_[0], b.edges_[0])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    x=hnp.arrays(
        np.float64,
        st.integers(1, 200),
        elements=st.one_of(st.integers(-3, 3).map(float), st.floats(-1e3, 1e3)),
    ),
    d=st.integers(2, 30),
    seed=st.integers(0, 2**32 - 1),
)
def test_property_weights_and_uniform(x, d, seed):
    """Integer weights act as repeated rows; uniform bins are non-empty and at most d."""
    X = x[:, None]
    rng = np.random.default_rng(seed)
    w = rng.integers(0, 4, x.shape[0])
    w[0] = 1  # at least one positive weight
    bw = Binarizer(n_bins=d).fit(X, sample_weight=w)
    rep = Binarizer(n_bins=d).fit(np.repeat(X, w, axis=0))
    np.testing.assert_array_equal(bw.edges_[0], rep.edges_[0])
    np.testing.assert_array_equal(bw.bin_counts_[0], rep.bin_counts_[0])
    bu = Binarizer(n_bins=d, method="uniform").fit(X)
    assert bu.n_bins_[0] <= d
    _check_fitted_invariants(bu, X)


# =====================================================================================
# Invariances
# =====================================================================================


def _mixed_data(n=3000):
    return np.column_stack(
        [
            RNG.standard_normal(n),
            RNG.integers(0, 12, n).astype(float),  # ties
            np.where(RNG.random(n) < 0.8, 0.0, RNG.exponential(size=n)),  # spike
            RNG.integers(0, 3, n).astype(float),  # few values
        ]
    )


@pytest.mark.parametrize("method", ["quantile", "uniform"])
def test_row_order_does_not_change_edges(method):
    """Permuting the rows permutes the codes and leaves edges and counts unchanged."""
    X = _mixed_data()
    w = RNG.exponential(size=X.shape[0])
    perm = RNG.permutation(X.shape[0])
    for sw in (None, w):
        b1 = Binarizer(n_bins=20, method=method).fit(X, sample_weight=sw)
        b2 = Binarizer(n_bins=20, method=method).fit(
            X[perm], sample_weight=None if sw is None else sw[perm]
        )
        for e1, e2, c1, c2 in zip(
            b1.edges_, b2.edges_, b1.bin_counts_, b2.bin_counts_, strict=True
        ):
            np.testing.assert_array_equal(e1, e2)
            np.testing.assert_array_equal(c1, c2)
        np.testing.assert_array_equal(b1.transform(X)[perm], b2.transform(X[perm]))


def test_signed_zeros_give_identical_edges():
    """-0.0 and +0.0 are one value: the edges do not depend on which one sorts first."""
    x = np.where(RNG.random(1000) < 0.6, 0.0, RNG.standard_normal(1000))
    y = x.copy()
    y[(y == 0) & (RNG.random(1000) < 0.5)] = -0.0
    for d in (3, 20):
        e1 = Binarizer(n_bins=d).fit(x[:, None]).edges_[0]
        e2 = Binarizer(n_bins=d).fit(y[:, None]).edges_[0]
        assert e1.tobytes() == e2.tobytes()


def test_strictly_increasing_transform_gives_identical_codes():
    """Quantile bins depend on ranks and ties only: f increasing ⇒ same codes."""
    X = _mixed_data()
    # f exactly injective on these data: the dense rank of each column, and x³ + 2x
    # on the integer columns (exact in float64).
    ranks = np.column_stack([np.unique(c, return_inverse=True)[1] for c in X.T]).astype(float)
    cubic = X.copy()
    cubic[:, [1, 3]] = X[:, [1, 3]] ** 3 + 2 * X[:, [1, 3]]
    for d in (2, 5, 30):
        codes = Binarizer(n_bins=d).fit_transform(X)
        np.testing.assert_array_equal(Binarizer(n_bins=d).fit_transform(ranks), codes)
        np.testing.assert_array_equal(Binarizer(n_bins=d).fit_transform(cubic), codes)


def test_layout_and_dtype_of_x_do_not_change_codes():
    """float32, Fortran order, strided views and DataFrames give identical codes."""
    X32 = _mixed_data().astype(np.float32)
    X = X32.astype(np.float64)
    ref = Binarizer(n_bins=16).fit(X)
    codes = ref.transform(X)
    variants = {
        "float32": X32,
        "fortran": np.asfortranarray(X),
        "strided": np.repeat(X, 2, axis=1)[:, ::2],
        "frame": pd.DataFrame(X, columns=list("abcd")),
        "list": X.tolist(),
        "frame_float32": pd.DataFrame(X32),
    }
    for name, Xv in variants.items():
        b = Binarizer(n_bins=16).fit(Xv)
        for e1, e2 in zip(b.edges_, ref.edges_, strict=True):
            np.testing.assert_array_equal(e1, e2, err_msg=name)
        np.testing.assert_array_equal(b.transform(Xv), codes, err_msg=name)
        np.testing.assert_array_equal(ref.transform(Xv), codes, err_msg=name)
    reversed_rows = X[::-1]
    np.testing.assert_array_equal(ref.transform(reversed_rows), codes[::-1])
    # Integer-valued columns as int64 and bool arrays (converted by row blocks).
    Xi = X[:, [1, 3]].astype(np.int64)
    bi = Binarizer(n_bins=16).fit(Xi)
    np.testing.assert_array_equal(bi.transform(Xi), codes[:, [1, 3]])
    np.testing.assert_array_equal(bi.transform(np.asfortranarray(Xi)), codes[:, [1, 3]])
    np.testing.assert_array_equal(bi.transform(np.repeat(Xi, 30, axis=0))[::30], bi.transform(Xi))


# =====================================================================================
# Output layout, dtypes, attributes
# =====================================================================================


def test_transform_codes_layout_and_fit_transform():
    """transform_codes is C-contiguous (p, n); transform is its transpose; fit_transform
    equals fit + transform."""
    X = _mixed_data(500)
    b = Binarizer(n_bins=10).fit(X)
    tc = b.transform_codes(X)
    assert tc.shape == (4, 500) and tc.flags.c_contiguous and tc.dtype == np.uint8
    t = b.transform(X)
    assert t.shape == (500, 4)
    np.testing.assert_array_equal(t, tc.T)
    np.testing.assert_array_equal(Binarizer(n_bins=10).fit_transform(X), t)
    assert b.n_features_in_ == 4 and b.feature_names_in_ is None
    assert b.n_bins_.dtype == np.int64 and b.has_missing_level_.dtype == bool


def test_edge_cases_single_row_empty_transform_and_pickle():
    """One training row gives one bin; zero rows transform to an empty array; a
    pickled binarizer replays the same codes."""
    import pickle

    b = Binarizer().fit([[1.0, 2.0]])
    np.testing.assert_array_equal(b.n_bins_, [1, 1])
    assert b.transform(np.empty((0, 2))).shape == (0, 2)
    X = _mixed_data(300)
    b = Binarizer(n_bins=9, missing="separate").fit(X)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(b)).transform(X), b.transform(X))


def test_code_dtype_switches_to_uint16_above_256_levels():
    """uint8 while every feature has ≤ 256 levels, uint16 beyond (missing level counts)."""
    x = RNG.permutation(1000).astype(float)[:, None]
    assert Binarizer(n_bins=256).fit_transform(x).dtype == np.uint8
    codes = Binarizer(n_bins=257).fit_transform(x)
    assert codes.dtype == np.uint16 and codes.max() == 256
    xn = x.copy()
    xn[0] = np.nan
    b = Binarizer(n_bins=256, missing="separate")
    codes = b.fit_transform(xn)
    assert b.n_bins_[0] == 257 and codes.dtype == np.uint16 and codes[0, 0] == 256
    _check_fitted_invariants(b, xn)


def test_n_bins_per_feature():
    """A sequence of n_bins sets each feature's budget."""
    X = RNG.standard_normal((1000, 3))
    b = Binarizer(n_bins=[2, 10, 300]).fit(X)
    np.testing.assert_array_equal(b.n_bins_, [2, 10, 300])
    assert b.transform(X).dtype == np.uint16


def test_dataframe_columns_matched_by_name():
    """Fitted on a DataFrame: columns are found by name, reordering and extras are fine."""
    X = pd.DataFrame(_mixed_data(400), columns=["a", "b", "c", "d"])
    b = Binarizer(n_bins=8).fit(X)
    np.testing.assert_array_equal(b.feature_names_in_, ["a", "b", "c", "d"])
    codes = b.transform(X)
    shuffled = X[["d", "b", "a", "c"]].assign(extra=1.0)
    np.testing.assert_array_equal(b.transform(shuffled), codes)
    np.testing.assert_array_equal(b.transform(X.to_numpy()), codes)  # positional


# =====================================================================================
# Missing values
# =====================================================================================


def test_missing_separate_gives_a_last_level():
    """NaN gets code = number of chain bins (the last code); other features unaffected."""
    X = RNG.standard_normal((1000, 2))
    X[RNG.random(1000) < 0.1, 0] = np.nan
    b = Binarizer(n_bins=10, missing="separate").fit(X)
    np.testing.assert_array_equal(b.has_missing_level_, [True, False])
    np.testing.assert_array_equal(b.n_bins_, [11, 10])
    codes = _check_fitted_invariants(b, X)
    assert np.all(codes[np.isnan(X[:, 0]), 0] == 10)
    assert b.bin_counts_[0][-1] == np.isnan(X[:, 0]).sum()
    # The chain ignores the missing rows: the same cut points as without them.
    clean = X[~np.isnan(X[:, 0]), :1]
    np.testing.assert_array_equal(b.edges_[0], Binarizer(n_bins=10).fit(clean).edges_[0])
    with pytest.raises(ValueError, match=r"column 1 has a missing value \(NaN\) at row 0"):
        b.transform(np.array([[0.0, np.nan]]))


def test_missing_error_names_the_column():
    """missing="error": NaN in fit and in transform raise, naming the column."""
    X = pd.DataFrame({"age": [1.0, 2.0, np.nan], "x": [1.0, 2.0, 3.0]})
    with pytest.raises(ValueError, match="column 'age' has a missing value"):
        Binarizer().fit(X)
    b = Binarizer().fit(X.fillna(0))
    with pytest.raises(ValueError, match="column 'age' has a missing value"):
        b.transform(X)


def test_all_missing_column_is_an_error():
    """A feature with no observed value cannot be binned."""
    X = np.column_stack([np.full(5, np.nan), np.arange(5.0)])
    with pytest.raises(ValueError, match="column 0 has no non-missing value"):
        Binarizer(missing="separate").fit(X)


def test_pandas_nullable_dtypes():
    """Int64/Float64/boolean/UInt8 columns work, pd.NA is a missing value."""
    n = 200
    ints = RNG.integers(0, 30, n)
    X = pd.DataFrame(
        {
            "i": pd.array(ints, dtype="Int64"),
            "f": pd.array(RNG.standard_normal(n), dtype="Float64"),
            "b": pd.array(RNG.random(n) < 0.5, dtype="boolean"),
            "u": pd.array(ints, dtype="UInt8"),
            "bool": RNG.random(n) < 0.5,
            "i8": ints.astype(np.int8),
        }
    )
    dense = X.astype("float64").to_numpy()
    b = Binarizer(n_bins=8).fit(X)
    np.testing.assert_array_equal(b.transform(X), Binarizer(n_bins=8).fit_transform(dense))
    X.loc[3, "i"] = pd.NA
    with pytest.raises(ValueError, match="column 'i' has a missing value"):
        Binarizer().fit(X)
    b = Binarizer(n_bins=8, missing="separate").fit(X)
    assert b.transform(X)[3, 0] == b.n_bins_[0] - 1
    np.testing.assert_array_equal(b.has_missing_level_, [True] + [False] * 5)


# =====================================================================================
# Sample weights
# =====================================================================================


def test_zero_weight_rows_do_not_create_bins():
    """A zero-weight outlier is ignored for the cut points (and still coded)."""
    x = np.concatenate([RNG.standard_normal(999), [1e6]])[:, None]
    w = np.concatenate([np.ones(999), [0.0]])
    b = Binarizer(n_bins=10).fit(x, sample_weight=w)
    ref = Binarizer(n_bins=10).fit(x[:999])
    np.testing.assert_array_equal(b.edges_[0], ref.edges_[0])
    assert b.transform(x)[-1, 0] == 9
    assert b.bin_counts_[0].dtype == np.float64 and b.bin_counts_[0].sum() == 999.0


def test_equal_weights_equal_unweighted_and_integer_weights_equal_repetition():
    """Weighted quantiles: constant weights change nothing; integer weights act as
    repeated rows (on tie-free and tied data)."""
    for x in (RNG.standard_normal(777), RNG.integers(0, 9, 777).astype(float)):
        X = x[:, None]
        ref = Binarizer(n_bins=12).fit(X)
        b = Binarizer(n_bins=12).fit(X, sample_weight=np.full(777, 2.5))
        np.testing.assert_array_equal(b.edges_[0], ref.edges_[0])
        np.testing.assert_allclose(b.bin_counts_[0], 2.5 * ref.bin_counts_[0])
        w = RNG.integers(0, 4, 777)
        bw = Binarizer(n_bins=12).fit(X, sample_weight=w)
        rep = Binarizer(n_bins=12).fit(np.repeat(X, w, axis=0))
        np.testing.assert_array_equal(bw.edges_[0], rep.edges_[0])
        np.testing.assert_array_equal(bw.bin_counts_[0], rep.bin_counts_[0])


def test_weighted_bins_nonempty_in_weight_and_missing_level_weighted():
    """Every chain bin has positive weight; the missing level counts the NaN weights."""
    x = np.where(RNG.random(2000) < 0.7, 0.0, RNG.standard_normal(2000))
    x[:50] = np.nan
    w = RNG.exponential(size=2000)
    w[RNG.random(2000) < 0.3] = 0.0
    b = Binarizer(n_bins=25, missing="separate").fit(x[:, None], sample_weight=w)
    codes = b.transform(x[:, None])[:, 0]
    sums = np.bincount(codes, weights=w, minlength=b.n_bins_[0])
    np.testing.assert_allclose(b.bin_counts_[0], sums)
    assert np.all(sums[:-1] > 0)
    np.testing.assert_allclose(sums[-1], w[:50].sum())


def test_weighted_binning_is_invariant_to_the_scale_of_the_weights():
    """Multiplying the weights by c leaves the cut points unchanged and multiplies the
    bin weights by c, down to max(w) ~ 1e-300 and up to ~1e300 (the fixed point is
    taken relative to max(w)); a power-of-two c changes nothing in the last bit."""
    x = np.where(RNG.random(1500) < 0.3, 0.0, RNG.standard_normal(1500))[:, None]
    w = RNG.exponential(size=1500)
    ref = Binarizer(n_bins=20).fit(x, sample_weight=w)
    for c in (1e-300, 2.0**-990, 1e-150, 1e150, 2.0**990, 1e300):
        with np.errstate(all="raise"):
            b = Binarizer(n_bins=20).fit(x, sample_weight=w * c)
        np.testing.assert_array_equal(b.edges_[0], ref.edges_[0])
        np.testing.assert_allclose(b.bin_counts_[0], c * ref.bin_counts_[0], rtol=1e-12)
        if np.frexp(c)[0] == 0.5:  # c a power of two: w * c is exact, so are the sums
            np.testing.assert_array_equal(b.bin_counts_[0], c * ref.bin_counts_[0])
    tiny = Binarizer(n_bins=20).fit(x, sample_weight=np.full(1500, 1e-300))
    np.testing.assert_array_equal(tiny.edges_[0], Binarizer(n_bins=20).fit(x).edges_[0])


def test_bin_codes_is_the_rule_of_transform():
    """The one coding function (used by the formula layer's bin()) gives transform's
    codes: searchsorted(edges, x, "left"), NaN on the missing level, dtype by levels."""
    x = np.concatenate([RNG.standard_normal(400), [np.nan, -np.inf]])
    b = Binarizer(n_bins=300, missing="separate").fit(x[:-1, None])
    codes, bad = bin_codes(x[:-1], b.edges_[0], True)
    assert bad == -1 and codes.dtype == np.uint16
    np.testing.assert_array_equal(codes, b.transform(x[:-1, None])[:, 0])
    codes, bad = bin_codes(x[:-1].astype(np.float32), b.edges_[0][:10], False)
    assert bad == 400 and codes.dtype == np.uint8  # the NaN, as no missing level
    assert bin_codes(x, b.edges_[0], True)[1] == 401  # -inf is always bad


# =====================================================================================
# The uniform method
# =====================================================================================


def test_uniform_bins_are_equal_width_without_gaps():
    """Dense data: the cut points are the equal-width grid over [min, max]."""
    x = np.concatenate([[0.0, 10.0], RNG.uniform(0, 10, 5000)])[:, None]
    b = Binarizer(n_bins=10, method="uniform").fit(x)
    np.testing.assert_allclose(b.edges_[0], np.arange(1, 10.0))
    _check_fitted_invariants(b, x)


def test_uniform_empty_bins_are_merged():
    """A gap in the data: empty equal-width bins merge, every bin stays non-empty."""
    x = np.concatenate([RNG.uniform(0, 1, 500), RNG.uniform(9, 10, 500), [0.0, 10.0]])[:, None]
    b = Binarizer(n_bins=10, method="uniform").fit(x)
    np.testing.assert_allclose(b.edges_[0], [1.0])  # (1, 2], …, (8, 9] joined (9, ∞)
    _check_fitted_invariants(b, x)
    tiny = np.array([[1.0], [np.nextafter(1.0, 2.0)]])  # rounding: width of one ulp
    b = Binarizer(n_bins=50, method="uniform").fit(tiny)
    assert b.n_bins_[0] == 2
    _check_fitted_invariants(b, tiny)


# =====================================================================================
# Bad inputs
# =====================================================================================


def test_infinite_values_are_errors_naming_the_column():
    """±inf raises in fit (even with missing="separate") and in transform."""
    X = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [1.0, -np.inf, 3.0]})
    with pytest.raises(ValueError, match=r"column 'b' has an infinite value \(-inf\) at row 1"):
        Binarizer(missing="separate").fit(X)
    b = Binarizer().fit(X.replace(-np.inf, 0.0))
    with pytest.raises(ValueError, match="column 'b' has an infinite value"):
        b.transform(X)
    with pytest.raises(ValueError, match="column 1 has an infinite value"):
        Binarizer().fit(np.array([[1.0, np.inf]]))
    # float16 is converted a block of rows at a time: the row number is still global.
    X16 = np.zeros((70001, 2), dtype=np.float16)
    b = Binarizer().fit(X16)
    X16[70000, 1] = np.inf
    with pytest.raises(ValueError, match="column 1 has an infinite value .* at row 70000"):
        b.transform(X16)


@pytest.mark.parametrize(
    "column, match",
    [
        (["x", "y", "z"], "column 'bad' has non-numeric dtype"),
        (pd.array(["x", "y", "z"], dtype="string"), "column 'bad' has non-numeric dtype"),
        (pd.Categorical([1.0, 2.0, 3.0]), "column 'bad' is categorical.*categorical_features"),
        (pd.to_datetime(["2020-01-01"] * 3), "column 'bad' has datetime-like.*convert"),
        (pd.to_timedelta([1, 2, 3], unit="D"), "column 'bad' has datetime-like"),
        (pd.period_range("2020-01", periods=3, freq="M"), "column 'bad' has datetime-like"),
        (np.array([1 + 1j, 2, 3]), "column 'bad' has non-numeric dtype"),
        # an object column is read as an object ndarray: numbers pass, text does not
        (np.array(["x", 2.0, 3.0], dtype=object), "column 'bad' holds a non-numeric value 'x'"),
    ],
)
def test_non_numeric_dataframe_columns_are_type_errors(column, match):
    """Strings, categoricals, datetimes (…) raise TypeError naming the column."""
    X = pd.DataFrame({"ok": [1.0, 2.0, 3.0], "bad": column})
    with pytest.raises(TypeError, match=match):
        Binarizer().fit(X)
    b = Binarizer().fit(X[["ok"]].assign(bad=[1.0, 2.0, 3.0]))
    with pytest.raises(TypeError, match=match):
        b.transform(X)


def test_non_numeric_arrays_are_type_errors_naming_the_column():
    """Arrays and lists: the offending column is named."""
    with pytest.raises(TypeError, match="column 1 holds a non-numeric value 'a'"):
        Binarizer().fit([[1.0, "a"], [2.0, "b"]])
    with pytest.raises(TypeError, match="column 0 has dtype datetime64"):
        Binarizer().fit(np.array([["2020-01-01"]], dtype="datetime64[D]"))
    with pytest.raises(TypeError, match="non-numeric dtype <U1"):
        Binarizer().fit(np.array([["a"]]))
    ok = Binarizer(missing="separate").fit(np.array([[1.0, None], [2, 3]], dtype=object))
    assert ok.has_missing_level_.tolist() == [False, True]


def test_missing_column_at_transform_is_named():
    """A fitted column absent at transform time raises, naming it."""
    X = pd.DataFrame({"a": [1.0, 2.0], "b": [3.0, 4.0]})
    b = Binarizer().fit(X)
    with pytest.raises(ValueError, match=r"lacks column\(s\) \['b'\]"):
        b.transform(X[["a"]])


def test_wrong_number_of_features_for_arrays():
    """Arrays are matched by position: the column count must be the fitted one."""
    b = Binarizer().fit(np.ones((3, 2)))
    with pytest.raises(ValueError, match="X has 3 features, but .* expecting 2 features"):
        b.transform(np.ones((3, 3)))


@pytest.mark.parametrize(
    "n_bins, error, match",
    [
        (1, ValueError, "n_bins must be an integer between 2 and 65536; got 1"),
        (0, ValueError, "n_bins must be an integer between 2 and 65536; got 0"),
        (65537, ValueError, "got 65537: the codes are uint16"),
        (2.5, TypeError, "n_bins must be an integer between 2"),
        (True, TypeError, "n_bins must be an integer between 2"),
        ("10", TypeError, "n_bins must be an integer between 2"),
        ([10, 1], ValueError, r"n_bins\[1\] must be an integer between 2 and 65536; got 1"),
        ([10, 10, 10], ValueError, "3 entries but X has 2 features"),
    ],
)
def test_bad_n_bins(n_bins, error, match):
    """n_bins is validated at fit time with a precise message."""
    with pytest.raises(error, match=match):
        Binarizer(n_bins=n_bins).fit(np.ones((4, 2)))


def test_n_bins_limit_accounts_for_the_missing_level():
    """65536 levels fit uint16: n_bins ≤ 65536, or ≤ 65535 with a missing level."""
    Binarizer(n_bins=65536).fit(np.ones((2, 1)))
    with pytest.raises(ValueError, match="the codes are uint16"):
        Binarizer(n_bins=65536, missing="separate").fit(np.ones((2, 1)))


@pytest.mark.parametrize(
    "X, error, match",
    [
        (np.empty((0, 3)), ValueError, "no rows"),
        (pd.DataFrame({"a": []}, dtype=float), ValueError, "no rows"),
        (np.empty((5, 0)), ValueError, r"0 feature\(s\)"),
        (np.arange(5.0), ValueError, "must be 2-D.*reshape"),
        (pd.Series([1.0, 2.0]), ValueError, "must be 2-D"),
        (np.ones((2, 2, 2)), ValueError, "got 3-D"),
    ],
)
def test_bad_shapes(X, error, match):
    """Empty and non-2-D inputs are refused."""
    with pytest.raises(error, match=match):
        Binarizer().fit(X)


def test_bad_options_weights_and_unfitted_use():
    """method/missing values, sample weights and calling transform before fit."""
    X = np.ones((3, 1))
    with pytest.raises(ValueError, match="method must be one of"):
        Binarizer(method="kmeans").fit(X)
    with pytest.raises(ValueError, match="missing must be one of"):
        Binarizer(missing="impute").fit(X)
    for w, match in [
        ([1, 2], "has 2 rows"),
        ([1, -1, 1], "non-negative"),
        ([0, 0, 0], "zero for every"),
    ]:
        with pytest.raises(ValueError, match=match):
            Binarizer().fit(X, sample_weight=w)
    with pytest.raises(ValueError, match="column 0 has no non-missing value with a positive"):
        Binarizer(missing="separate").fit(
            np.array([[np.nan], [1.0]]), sample_weight=np.array([1.0, 0.0])
        )
    with pytest.raises(AttributeError, match="not fitted"):
        Binarizer().transform(X)


def test_duplicated_dataframe_columns_are_refused():
    """Columns are matched by name, so names must be unique."""
    X = pd.DataFrame(np.ones((2, 2)), columns=["a", "a"])
    with pytest.raises(ValueError, match="duplicated column names"):
        Binarizer().fit(X)


# =====================================================================================
# Documentation
# =====================================================================================


def test_public_api_has_numpydoc_docstrings():
    """Every public method documents its parameters and return value."""
    assert "Parameters" in Binarizer.__doc__ and "Attributes" in Binarizer.__doc__
    for name in ("fit", "transform", "transform_codes", "fit_transform"):
        doc = getattr(Binarizer, name).__doc__
        assert re.search(r"Parameters\n\s+-{10}", doc), name
        assert re.search(r"Returns\n\s+-{7}", doc), name
