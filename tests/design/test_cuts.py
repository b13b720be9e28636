"""A minimum bin size (LightGBM's ``min_data_in_bin``): ``Binarizer(min_bin_count=)``,
``bin(x, n, min_count=)`` in formulas and ``min_bin_count=`` in the estimators.

What is proved: every chain bin then holds at least that many training rows (or the
feature has one bin), on heavily tied count data like a marketing campaign's contacts,
with and without sample weights (rows are counted, zero-weight rows excepted) and with
a missing level; the cut points are a subset of those without the constraint (bins are
only merged); the default changes nothing; the formula, the estimators and the
Binarizer agree; bad values are refused by name.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from binarsity_stats import Binarizer, BinarsityClassifier, BinarsityGLMCV, from_spec, glm


def _counts_column(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.poisson(1.5, n).astype(float)
    x[:3] = [20.0, 25.0, 31.0]  # a few rare large values: bins of one row by default
    return x


def _rows_per_bin(x: np.ndarray, edges: np.ndarray) -> np.ndarray:
    x = x[~np.isnan(x)]
    return np.bincount(np.searchsorted(edges, x, side="left"), minlength=len(edges) + 1)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("min_count", [2, 15, 60])
def test_every_bin_holds_min_count_rows_and_edges_are_only_removed(seed, min_count):
    x = _counts_column(1000, seed)
    free = Binarizer(n_bins=50).fit(x[:, None]).edges_[0]
    assert _rows_per_bin(x, free).min() == 1  # the problem the option solves
    b = Binarizer(n_bins=50, min_bin_count=min_count).fit(x[:, None])
    edges = b.edges_[0]
    rows = _rows_per_bin(x, edges)
    assert rows.min() >= min_count or len(rows) == 1
    assert set(edges) <= set(free)
    np.testing.assert_array_equal(b.bin_counts_[0], rows)


def test_weights_count_rows_and_missing_values_keep_their_level():
    rng = np.random.default_rng(3)
    x = _counts_column(800, 1)
    x[rng.random(800) < 0.05] = np.nan
    w = rng.uniform(0.2, 5.0, 800)
    w[:50] = 0.0  # zero-weight rows are not counted
    b = Binarizer(n_bins=40, min_bin_count=25, missing="separate").fit(x[:, None], sample_weight=w)
    edges = b.edges_[0]
    counted = w > 0
    rows = _rows_per_bin(x[counted], edges)
    assert rows.min() >= 25
    assert b.has_missing_level_[0] and len(b.bin_counts_[0]) == len(edges) + 2
    keep = counted & ~np.isnan(x)
    sums = np.bincount(np.searchsorted(edges, x[keep], side="left"), weights=w[keep])
    np.testing.assert_allclose(b.bin_counts_[0][:-1], sums, rtol=1e-12)
    equal = Binarizer(n_bins=40, min_bin_count=25, missing="separate")
    same = Binarizer(n_bins=40, min_bin_count=25, missing="separate")
    np.testing.assert_array_equal(
        equal.fit(x[:, None], sample_weight=np.full(800, 2.0)).edges_[0],
        same.fit(x[:, None]).edges_[0],
    )


def test_the_default_changes_nothing_and_a_huge_minimum_leaves_one_bin():
    x = np.random.default_rng(0).normal(size=500)
    np.testing.assert_array_equal(
        Binarizer(n_bins=20, min_bin_count=1).fit(x[:, None]).edges_[0],
        Binarizer(n_bins=20).fit(x[:, None]).edges_[0],
    )
    assert Binarizer(n_bins=20, min_bin_count=10_000).fit(x[:, None]).edges_[0].size == 0


def test_formula_and_estimators_use_the_same_rule():
    x = _counts_column(1200, 7)
    rng = np.random.default_rng(7)
    df = pd.DataFrame({"campaign": x, "u": rng.normal(size=1200)})
    df["y"] = (rng.random(1200) < 0.2 + 0.2 * (x > 2)).astype(float)
    res = glm("y ~ bin(campaign, 50, min_count=40) + bin(u, 10)", df, family="binomial").fit()
    expected = Binarizer(n_bins=50, min_bin_count=40).fit(df[["campaign"]]).edges_[0]
    np.testing.assert_array_equal(res.model.spec.blocks[0].edges, expected)
    np.testing.assert_array_equal(from_spec(res.to_spec()).predict(df), res.predict(df))
    clf = BinarsityClassifier(min_bin_count=40).fit(df[["campaign", "u"]], df["y"])
    np.testing.assert_array_equal(clf.binarizer_.edges_[0], expected)
    cv = BinarsityGLMCV(family="binomial", min_bin_count=40, cv=3).fit(df[["campaign"]], df["y"])
    np.testing.assert_array_equal(cv.binarizer_.edges_[0], expected)


@pytest.mark.parametrize("bad", [0, -3, 2.5, "10", True])
def test_bad_values_are_refused_by_name(bad):
    x = np.arange(20.0)[:, None]
    with pytest.raises(ValueError, match="min_bin_count must be a positive integer"):
        Binarizer(min_bin_count=bad).fit(x)
    df = pd.DataFrame({"x": np.arange(20.0), "y": np.arange(20.0)})
    with pytest.raises(ValueError, match=r"min_count in bin\(x\) must be a positive integer"):
        glm(f"y ~ bin(x, 5, min_count={bad!r})", df)
