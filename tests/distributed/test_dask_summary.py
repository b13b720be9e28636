"""Unit tests of ``binarsity_stats.distributed._dask_summary``: the mergeable summary of
one numeric feature (exact distinct values with counts and fixed-point weights, or a
quantile sketch with a rank-error bound) and the cut points read from it. NumPy only
(no Dask): checked against ``np.unique`` counts, the in-memory Binarizer and brute force."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from binarsity_stats.design._binarizer import BinarizerCore
from binarsity_stats.design._column_access import _fixed_point
from binarsity_stats.distributed._dask_summary import (
    ValueSummary,
    cuts_from_summary,
    distinct_per_bin,
    fixed_point_shift,
    to_fixed,
)


def _values(n=2000, seed=0, distinct=300):
    rng = np.random.default_rng(seed)
    x = np.round(rng.normal(size=n) * distinct / 6) / 7.0  # ties
    x[rng.random(n) < 0.05] = np.nan
    w = rng.uniform(0, 3, n)
    w[rng.random(n) < 0.1] = 0.0
    return x, w


def test_fixed_point_of_the_whole_data_is_the_binarizers():
    _, w = _values()
    q_ref, _ = _fixed_point(w)
    shift = fixed_point_shift(len(w), w.max())
    np.testing.assert_array_equal(to_fixed(w, shift), q_ref)
    # a partition converted with the whole data's shift has the same integers
    np.testing.assert_array_equal(to_fixed(w[100:300], shift), q_ref[100:300])


def test_summary_counts_equal_unique_counts():
    x, w = _values()
    q = to_fixed(w, fixed_point_shift(len(w), w.max()))
    s = ValueSummary.of(x, q)
    ok = ~np.isnan(x)
    values, inverse = np.unique(x[ok], return_inverse=True)
    np.testing.assert_array_equal(s.values, values)
    np.testing.assert_array_equal(s.rows, np.bincount(inverse))
    np.testing.assert_array_equal(s.rows_pos, np.bincount(inverse, weights=(q[ok] > 0)).astype(np.int64))
    np.testing.assert_array_equal(s.mass, [int(q[ok][inverse == k].sum()) for k in range(values.size)])
    assert s.exact and s.rank_error == 0.0
    assert s.nan_rows == int(np.isnan(x).sum()) and s.nan_mass == int(q[np.isnan(x)].sum())
    assert (s.vmin, s.vmax) == (values[0], values[-1])
    assert (s.qmin, s.qmax) == (int(q[q > 0].min()), int(q.max()))
    assert s.total_mass == int(q[ok].sum())


def test_unweighted_summary_and_signed_zero():
    s = ValueSummary.of(np.array([0.0, -0.0, 1.0, np.nan]))
    np.testing.assert_array_equal(s.values, [0.0, 1.0])
    assert not np.signbit(s.values[0])  # -0.0 is 0.0, as the Binarizer compares
    np.testing.assert_array_equal(s.rows, [2, 1])
    assert s.mass is s.rows and s.qmin == -1 and s.nan_rows == 1
    empty = ValueSummary.of(np.array([np.nan, np.nan]))
    assert empty.values.size == 0 and empty.nan_rows == 2 and np.isnan(empty.vmin)


def test_merged_partitions_equal_the_summary_of_all_rows():
    x, w = _values(seed=1)
    q = to_fixed(w, fixed_point_shift(len(w), w.max()))
    cuts = [0, 500, 501, 1400, 2000]
    parts = [ValueSummary.of(x[a:b], q[a:b]) for a, b in zip(cuts[:-1], cuts[1:], strict=True)]
    merged = ValueSummary.merge(parts)
    whole = ValueSummary.of(x, q)
    for name in ("values", "rows", "rows_pos", "mass"):
        np.testing.assert_array_equal(getattr(merged, name), getattr(whole, name))
    for name in ("exact", "nan_rows", "nan_mass", "vmin", "vmax", "qmin", "qmax"):
        assert getattr(merged, name) == getattr(whole, name), name


def _rank_gap(sketch: ValueSummary, x: np.ndarray, q: np.ndarray) -> float:
    """Largest |sketch's cumulative mass − true cumulative mass| at a kept value, / total."""
    ok = ~np.isnan(x)
    xs, qs = x[ok], q[ok]
    true = np.array([qs[xs <= v].sum() for v in sketch.values], dtype=np.float64)
    return float(np.max(np.abs(np.cumsum(sketch.mass) - true)) / qs.sum())


def test_a_thinned_summary_keeps_its_rank_error_bound():
    rng = np.random.default_rng(2)
    x = rng.normal(size=20000)
    w = rng.uniform(0.5, 1.5, x.size)
    q = to_fixed(w, fixed_point_shift(x.size, w.max()))
    s = ValueSummary.of(x, q, max_distinct=1000, sketch_size=200)
    assert not s.exact and s.levels == 1 and s.rank_error == pytest.approx(1 / 200)
    assert s.values.size <= 202 and s.total_mass == int(q.sum())  # no mass lost
    assert (s.vmin, s.vmax) == (x.min(), x.max())
    assert _rank_gap(s, x, q) <= s.rank_error
    # merging sketches of partitions keeps the bound: the largest of the parts' errors,
    # plus 1 / k for each further thinning (both in merged.rank_error)
    parts = [ValueSummary.of(x[i::3], q[i::3], max_distinct=1000, sketch_size=200) for i in range(3)]
    merged = ValueSummary.merge(parts, max_distinct=1000, sketch_size=200)
    assert merged.total_mass == int(q.sum())
    assert _rank_gap(merged, x, q) <= merged.rank_error + 1e-12


@pytest.mark.parametrize("n_bins", [2, 5, 20])
@pytest.mark.parametrize("weighted", [False, True])
def test_cut_points_of_an_exact_summary_are_the_binarizers(n_bins, weighted):
    x, w = _values(seed=3)
    if not weighted:
        w = np.ones_like(w)
    q = to_fixed(w, fixed_point_shift(len(w), w.max()))
    s = ValueSummary.merge([ValueSummary.of(x[:700], q[:700] if weighted else None),
                            ValueSummary.of(x[700:], q[700:] if weighted else None)])  # fmt: skip
    edges, rows = cuts_from_summary(s, n_bins, weighted=weighted)
    ref = BinarizerCore(n_bins=n_bins, method="quantile", missing="separate")
    ref.fit(pd.DataFrame({"x": x}), sample_weight=w if weighted else None)
    np.testing.assert_array_equal(edges, ref.edges_[0])
    # rows per chain bin, counted directly (rows of positive weight)
    live = ~np.isnan(x) & (w > 0)
    codes = np.searchsorted(edges, x[live], side="left")
    np.testing.assert_array_equal(rows, np.bincount(codes, minlength=len(edges) + 1))


def test_min_count_merges_small_bins_like_the_binarizer():
    x = np.concatenate([np.arange(100.0), [1000.0, 1001.0]])
    s = ValueSummary.of(x)
    edges, rows = cuts_from_summary(s, 51, min_count=5)
    ref = BinarizerCore(n_bins=51, method="quantile", missing="error", min_bin_count=5)
    ref.fit(pd.DataFrame({"x": x}))
    np.testing.assert_array_equal(edges, ref.edges_[0])
    assert rows.min() >= 5 and rows.sum() == x.size


def test_cut_points_refuse_a_feature_without_values_naming_it():
    with pytest.raises(ValueError, match=r"^column 'age' has no non-missing value: no cut point"):
        cuts_from_summary(ValueSummary.of(np.array([np.nan])), 4, label="column 'age'")
    s = ValueSummary.of(np.array([1.0, 2.0]), np.array([0, 0], dtype=np.int64))
    with pytest.raises(ValueError, match=r"^column 'age' has no non-missing value with a positive weight"):
        cuts_from_summary(s, 4, weighted=True, label="column 'age'")


def test_distinct_per_bin_is_a_brute_force_count():
    x = np.array([1.0, 1.0, 2.0, 5.0, 7.0, 7.0, 9.0])
    edges = np.array([1.0, 6.0])
    distinct, single = distinct_per_bin(ValueSummary.of(x), edges)
    # bins (-inf, 1], (1, 6], (6, inf): {1}, {2, 5}, {7, 9}
    assert distinct == [1, 2, 2]
    assert single[0] == 1.0 and np.isnan(single[1]) and np.isnan(single[2])
    sketch = ValueSummary.of(np.arange(50.0), max_distinct=10, sketch_size=5)
    assert distinct_per_bin(sketch, edges) is None
