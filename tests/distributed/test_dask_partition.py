"""Unit tests of ``binarsity_stats.distributed._dask_partition``: what the Dask fit
computes in one partition (the first pass's summary, the statistics at a point, the
losses at candidate steps, the exact or sampled Gram), the partitions of in-memory
arrays and the hashed folds. Each statistic is recomputed here from the rows with
NumPy (a one-hot matrix, the family's mean); no cluster is started."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from binarsity_stats.distributed._dask_partition import (
    _candidates,
    _combine,
    _gram,
    _point,
    _Rows,
    _sampled_gram,
    _Setup,
    _summary,
    fold_of,
    partitions_from_arrays,
)
from binarsity_stats.families._families import get_family

SIZES = [3, 4]
BP = np.array([0, 3, 7], dtype=np.intp)


def _part(n=120, seed=0, family="poisson"):
    rng = np.random.default_rng(seed)
    codes = np.stack([rng.integers(0, s, n) for s in SIZES]).astype(np.uint8)
    Z = rng.normal(size=(n, 2)) * [2.0, 0.5] + [1.0, -3.0]
    if family == "poisson":
        y = rng.poisson(2.0, n).astype(float)
    else:
        y = rng.binomial(1, 0.4, n).astype(float)
    w = rng.uniform(0.0, 2.0, n)
    off = rng.normal(scale=0.1, size=n)
    fold = rng.integers(0, 3, n)  # the shared CV's fold of each row (3 folds)
    return {"codes": codes, "y": y, "dense": Z, "weight": w, "offset": off, "fold": fold}


def _one_hot(codes):
    n = codes.shape[1]
    X = np.zeros((n, int(BP[-1])))
    for j in range(len(SIZES)):
        X[np.arange(n), BP[j] + codes[j]] = 1.0
    return X


def _setup(family="poisson", K=0, fraction=1.0):
    return _Setup(BP, get_family(family), 2, True, 0.5, np.array([1.0, -3.0]), np.array([2.0, 0.5]),
                  K=K, gram_fraction=fraction)  # fmt: skip


# ---------------------------------------------------------------- partitions and folds


def test_partitions_from_arrays_cover_the_rows_in_order():
    import dask

    part = _part(n=103)
    parts = partitions_from_arrays(part["codes"], part["y"], dense=part["dense"], weight=part["weight"],
                                   n_parts=4)  # fmt: skip
    got = dask.compute(*parts, scheduler="sync")
    assert len(got) == 4 and sum(p["y"].size for p in got) == 103
    assert_array_equal(np.concatenate([p["codes"] for p in got], axis=1), part["codes"])
    assert_array_equal(np.concatenate([p["dense"] for p in got]), part["dense"])
    assert all(p["offset"] is None for p in got)


def test_folds_without_a_fold_column_are_refused_naming_the_fix():
    # the folds are the shared CV's, given to the partitions; none are made up here
    with pytest.raises(ValueError, match=r"^folds=5: partition 2 has no fold column"):
        fold_of({"y": np.zeros(20)}, 2, 5)


def test_a_fold_column_is_used_and_checked():
    part = {"y": np.zeros(4), "fold": np.array([0, 2, 1, 2])}
    assert_array_equal(fold_of(part, 0, 3), [0, 2, 1, 2])
    with pytest.raises(ValueError, match=r"^fold ids must lie in \[0, 1\] \(folds=2\)"):
        fold_of(part, 0, 2)
    with pytest.raises(ValueError, match=r"^fold must be an integer column of the partition's length"):
        fold_of({"y": np.zeros(4), "fold": np.zeros(4)}, 0, 2)


# ---------------------------------------------------------------- the first pass


def test_summary_is_the_partitions_sums():
    part = _part()
    out = _summary(part, BP, get_family("poisson"), 2, index=3, K=4)
    w, y, Z = part["weight"], part["y"], part["dense"]
    X = _one_hot(part["codes"])
    assert out["n"] == 120.0 and out["W"] == pytest.approx(w.sum(), rel=1e-14)
    assert_allclose(out["counts"], X.T @ w, rtol=1e-13)
    assert_allclose(out["sy"], w @ y, rtol=1e-13)
    assert_allclose(out["syy"], w @ (y * y), rtol=1e-13)
    assert_allclose(out["sz"], w @ Z, rtol=1e-13)
    assert_array_equal(out["max_z"], Z.max(axis=0))
    assert_array_equal(out["min_z"], Z.min(axis=0))
    assert out["max_off"] == part["offset"].max() and out["max_w"] == w.max()
    folds = fold_of(part, 3, 4)
    assert_allclose(out["fold_W"], np.bincount(folds, weights=w, minlength=4), rtol=1e-13)
    assert_allclose(out["fold_counts"].sum(axis=0), out["counts"], rtol=1e-13)
    assert_allclose(out["fold_counts"][2], X.T @ np.where(folds == 2, w, 0.0), rtol=1e-13)


@pytest.mark.parametrize(
    ("change", "pattern"),
    [
        ({"y": np.zeros(5)}, r"^y has 5 rows but the partition's codes have 120"),
        ({"weight": -np.ones(120)}, r"^weight must be finite and non-negative"),
        ({"offset": np.full(120, np.nan)}, r"^offset must be finite, one value per row"),
        ({"offset": np.full(120, 1000.0)}, r"offset has values as large as 1000"),
        ({"dense": np.ones((120, 3))}, r"^dense must be finite with shape \(120, 2\)"),
        ({"dense": None}, r"^dense: the design has 2 dense columns; a partition has none"),
        ({"codes": np.full((2, 120), 3, np.uint8)}, r"codes of block 0 reach 3"),
    ],
)
def test_summary_refuses_bad_partitions_by_name(change, pattern):
    part = dict(_part(), **change)
    with pytest.raises(ValueError, match=pattern):
        _summary(part, BP, get_family("poisson"), 2, index=0, K=0)


def test_summary_validates_y_for_the_family():
    part = dict(_part(), y=np.full(120, -1.0))
    with pytest.raises(ValueError, match=r"y must be non-negative for family='poisson'"):
        _summary(part, BP, get_family("poisson"), 2, index=0, K=0)


# ---------------------------------------------------------------- a point


def _point_by_hand(part, setup, theta, free):
    X = _one_hot(part["codes"])
    U = np.column_stack([np.ones(len(part["y"])), (part["dense"] - setup.center) / setup.scale])
    eta = X @ theta + U @ free + part["offset"]
    mu = np.exp(eta)
    sw = part["weight"] * setup.unit
    loss = float(np.sum(sw * (mu - part["y"] * eta)))
    r = sw * (mu - part["y"])
    A = np.column_stack([X, U])
    return X, U, eta, loss, np.concatenate([X.T @ r, U.T @ r]), A.T @ ((sw * mu)[:, None] * A)


def test_point_statistics_equal_the_one_hot_computation():
    part, setup = _part(seed=1), _setup()
    rng = np.random.default_rng(2)
    theta, free = rng.normal(scale=0.3, size=7), np.array([0.2, 0.1, -0.1])
    X, U, eta, loss, g, M = _point_by_hand(part, setup, theta, free)
    assert_allclose(_Rows(part, setup).eta(theta, free), eta, rtol=1e-13, atol=1e-14)
    out = _point(part, setup, 0, (theta, free), None, True, -1)
    assert_allclose(out["loss"], loss, rtol=1e-12)
    assert_allclose(out["g"], g, rtol=1e-11, atol=1e-12)
    assert_allclose(out["M"], M, rtol=1e-11, atol=1e-12)
    assert "M" not in _point(part, setup, 0, (theta, free), None, False, -1)


def test_point_with_a_step_reports_the_losses_at_the_shorter_steps():
    part, setup = _part(seed=3), _setup()
    theta, free = np.zeros(7), np.array([0.5, 0.0, 0.0])
    dtheta, dfree = np.linspace(-0.2, 0.2, 7), np.array([-0.1, 0.05, 0.02])
    out = _point(part, setup, 0, (theta, free), (dtheta, dfree), False, -1)
    full = _point_by_hand(part, setup, theta + dtheta, free + dfree)[3]
    assert_allclose(out["loss"], full, rtol=1e-12)
    for t, got in zip((0.5, 0.1), out["loss_t"], strict=True):
        assert_allclose(got, _point_by_hand(part, setup, theta + t * dtheta, free + t * dfree)[3], rtol=1e-12)


def test_point_on_folds_trains_outside_the_fold_and_scores_inside():
    part, setup = _part(seed=4), _setup(K=3)
    theta, free = np.full(7, 0.01), np.array([0.3, 0.0, 0.1])
    folds = fold_of(part, 5, 3)
    each = _point(part, setup, 5, (theta, free), None, True, -2)
    whole = _point(part, setup, 5, (theta, free), None, True, -1)
    assert each["g"].shape == (3, 10) and each["M"].shape == (3, 10, 10)
    assert_allclose(each["loss"].sum(), whole["loss"], rtol=1e-12)
    assert_allclose(each["g"].sum(axis=0), whole["g"], rtol=1e-11, atol=1e-12)
    one = _point(part, setup, 5, (theta, free), None, False, 1)
    assert_allclose(one["loss"], whole["loss"] - each["loss"][1], rtol=1e-11)
    held = dict(part, weight=np.where(folds == 1, part["weight"], 0.0))
    assert_allclose(one["test_loss"], _point_by_hand(held, setup, theta, free)[3], rtol=1e-12)


def test_candidates_equal_points_at_each_step():
    part, setup = _part(seed=5), _setup()
    x = (np.zeros(7), np.array([0.4, 0.0, 0.0]))
    steps = [(np.full(7, 0.1), np.zeros(3)), (np.zeros(7), np.array([0.0, 0.2, 0.0]))]
    out = _candidates(part, setup, 0, x, steps, -1)
    for k, (dt, df) in enumerate(steps):
        X, U, eta, loss, g, M = _point_by_hand(part, setup, x[0] + dt, x[1] + df)
        assert_allclose(out["loss"][k], loss, rtol=1e-12)
        assert_allclose(out["g"][k], g, rtol=1e-11, atol=1e-12)
        assert_allclose(out["H"][k], np.diag(M)[:7], rtol=1e-12)
        assert_allclose(out["UU"][k], M[7:, 7:], rtol=1e-12)


# ---------------------------------------------------------------- Grams and sums


def test_sampled_gram_never_lowers_the_diagonal_and_stays_psd():
    part, setup = _part(n=2000, seed=6), _setup()
    rows = _Rows(part, setup)
    h = np.random.default_rng(7).uniform(0.1, 1.0, rows.n)
    exact = _gram(rows.design, rows.U, h, 7)
    assert_array_equal(_sampled_gram(rows.design, rows.U, h, 7, 1.0, 0), exact)
    sampled = _sampled_gram(rows.design, rows.U, h, 7, 0.25, 0)
    # the shortfall of the scaled sample's diagonal is added back: no curvature below
    # its exact value (a sample that overshoots keeps its larger value)
    assert np.all(np.diag(sampled) >= np.diag(exact) * (1 - 1e-12))
    assert np.any(np.diag(sampled) == np.diag(exact))
    assert np.linalg.eigvalsh(sampled).min() >= -1e-9 * np.abs(sampled).max()
    # the same rows on every call (a hash of the partition and the row)
    assert_array_equal(sampled, _sampled_gram(rows.design, rows.U, h, 7, 0.25, 0))
    # an unbiased estimate: off the diagonal within a few sampling sd of the exact Gram
    assert np.abs(sampled - exact).max() <= 0.3 * np.abs(exact).max()


def test_combine_adds_and_takes_max_and_min_by_key():
    a = {"n": 2.0, "g": np.array([1.0, 2.0]), "max_z": np.array([1.0, 5.0]), "min_z": np.array([0.0, 1.0]), "max_off": 3.0}
    b = {"n": 3.0, "g": np.array([0.5, 0.5]), "max_z": np.array([2.0, 4.0]), "min_z": np.array([-1.0, 2.0]), "max_off": -1.0}
    out = _combine(a, b)
    assert out["n"] == 5.0 and out["max_off"] == 3.0
    assert_array_equal(out["g"], [1.5, 2.5])
    assert_array_equal(out["max_z"], [2.0, 5.0])
    assert_array_equal(out["min_z"], [-1.0, 1.0])
    single = _combine(a)
    assert single.keys() == a.keys()
    for k in a:
        assert_array_equal(single[k], a[k])
