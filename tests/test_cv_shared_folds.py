"""CV folds share all rows' arrays (issue 22 item 5): the same fits, without copies.

A training fold is the design of all rows with weight 0 on its held-out rows
(``BinnedDesign.fold``, ``PathData.prepare_fold``); a held-out fold is a vector of row
indices. What must not change:

* everything the engine computes from a fold's rows as sums in row order is the same
  bits as on the fold's copy (``subset``): bin counts, W, the null intercept's inputs;
* what is not a weighted sum is taken on the fold's rows alone: the dense columns'
  scale, the detection of identical blocks, the weights' normalisation;
* the fits agree with the copied fold's to the rounding of a sum taken in another
  order (objective within 1e-12 relative; the coefficients within 1e-9 of their
  scale), and cross-validation selects the same λ with scores within 1e-9 relative;
* the held-out scores are bit for bit those of the copied held-out rows (the same
  gather, the same order of additions).
"""

from __future__ import annotations

import tracemalloc
import warnings

import numpy as np
import pandas as pd
import pytest

import binarsity_stats as bs
from binarsity_stats.design._design import BinnedDesign
from binarsity_stats.engine._cv import cross_validate
from binarsity_stats.engine._folds import fold_ids
from binarsity_stats.engine._path import PathData
from binarsity_stats.engine._scoring import score
from binarsity_stats.families import _cox


def _frame(n=1500, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(4)])
    eta = 0.4 * np.sin(2 * X[:, 0]) + 0.5 * (X[:, 1] > 0) + 0.2 * X[:, 3]
    df["yb"] = (rng.uniform(size=n) < 1 / (1 + np.exp(-eta))).astype(float)
    df["yp"] = rng.poisson(np.exp(eta)).astype(float)
    df["yg"] = eta + rng.normal(size=n)
    df["w"] = rng.uniform(0.5, 3.0, size=n)
    df["off"] = rng.normal(scale=0.1, size=n)
    df["g"] = rng.integers(0, 4, size=n).astype(str)
    return df


FAMILIES = [("binomial", "yb"), ("poisson", "yp"), ("gaussian", "yg")]
EXTRAS = [{}, {"weights": "w"}, {"offset": "off"}]
RHS = "bin(x0) + bin(x1) + bin(x2) + x3 + C(g)"


def _model(family, y, extra, df=None, rhs=RHS):
    return bs.glm(f"{y} ~ {rhs}", _frame() if df is None else df, family=family, **extra)


@pytest.mark.parametrize("weighted", [False, True])
def test_a_fold_is_all_rows_with_weight_zero_elsewhere_and_the_copys_counts(weighted):
    rng = np.random.default_rng(0)
    n = 400
    codes = rng.integers(0, 5, size=(3, n)).astype(np.uint8)
    bp = np.array([0, 5, 10, 15], dtype=np.intp)
    sw = rng.uniform(0.1, 7.0, size=n) if weighted else None
    design = BinnedDesign(codes, bp, sample_weight=sw, offset=rng.normal(size=n))
    rows = np.flatnonzero(rng.uniform(size=n) < 0.8)
    fold, copy = design.fold(rows), design.subset(rows)
    # nothing row-level is copied
    assert fold.codes is design.codes and fold.offset is design.offset
    out = np.setdiff1d(np.arange(n), rows)
    assert np.all(fold.unit_weight[out] == 0.0)
    np.testing.assert_array_equal(fold.unit_weight[rows], copy.unit_weight)
    np.testing.assert_array_equal(fold.sample_weight[rows], copy.sample_weight)
    assert fold.weight_scale == copy.weight_scale
    # counts are row-order sums: adding the zeros changes no bit
    np.testing.assert_array_equal(fold.counts, copy.counts)
    assert fold.train_mask.dtype == bool and np.array_equal(np.flatnonzero(fold.train_mask), rows)


def test_identical_blocks_are_those_identical_on_the_folds_rows():
    rng = np.random.default_rng(2)
    n = 300
    a = rng.integers(0, 4, size=n).astype(np.uint8)
    b = a.copy()
    held = np.arange(0, n, 10)
    b[held] = (b[held] + 1) % 4  # differs from a on the held-out rows only
    codes = np.vstack([a, b, rng.integers(0, 4, size=n).astype(np.uint8)])
    design = BinnedDesign(codes, np.array([0, 4, 8, 12], dtype=np.intp))
    rows = np.setdiff1d(np.arange(n), held)
    assert design.duplicate_blocks() == []
    assert design.fold(rows).duplicate_blocks() == design.subset(rows).duplicate_blocks()
    assert design.fold(rows).duplicate_blocks() == [[0, 1]]
    # and the groups survive the derived designs of the fold (merged, segments)
    assert design.fold(rows).select_blocks([0, 1]).duplicate_blocks() == [[0, 1]]


def test_the_dense_columns_scale_is_that_of_the_folds_rows():
    df = _frame(600)
    df.loc[df.index[:30], "x3"] = 1e3  # the largest values sit in the held-out rows
    m = _model("gaussian", "yg", {}, df)
    data = m._path_data()
    rows = np.arange(30, 600)
    a, b = data.prepare(rows).prob, data.prepare_fold(rows).prob
    np.testing.assert_array_equal(b.dense_scale, a.dense_scale)
    np.testing.assert_allclose(b.dense_center, a.dense_center, rtol=1e-13)
    assert b.n_rows == 600 and a.n_rows == 570


@pytest.mark.parametrize("family, y", FAMILIES)
@pytest.mark.parametrize("extra", EXTRAS, ids=["plain", "weights", "offset"])
def test_a_shared_fold_fits_as_its_copy_along_a_path(family, y, extra):
    m = _model(family, y, extra)
    data = m._path_data()
    ids = fold_ids(m.y, 5, random_state=0)
    rows = np.flatnonzero(ids != 1)
    copy, shared = data.prepare(rows), data.prepare_fold(rows)
    assert shared.prob.design.codes is data.design.codes
    wa = wb = None
    for lam in m.lambda_grid(10):
        sa = copy.solve(lam, warm_start=wa)
        sb = shared.solve(lam, warm_start=wb)
        wa, wb = sa, sb
        assert sa.converged and sb.converged
        assert abs(sb.objective - sa.objective) <= 1e-12 * abs(sa.objective)
        scale = max(1.0, float(np.max(np.abs(sa.coef))))
        np.testing.assert_allclose(sb.coef, sa.coef, rtol=0, atol=1e-9 * scale)
        np.testing.assert_allclose(sb.intercept, sa.intercept, rtol=0, atol=1e-9 * scale)
        # the shared fold's η covers all rows; on the fold's rows it is the copy's
        np.testing.assert_allclose(sb.eta[rows], sa.eta, rtol=0, atol=1e-9 * scale)


def test_identical_blocks_on_a_shared_fold_are_merged_as_on_its_copy():
    df = _frame()
    df["x5"] = df["x0"]
    m = _model("binomial", "yb", {}, df, rhs="bin(x0) + bin(x1) + bin(x5)")
    data = m._path_data()
    rows = np.flatnonzero(fold_ids(m.y, 5, random_state=0) != 0)
    copy, shared = data.prepare(rows), data.prepare_fold(rows)
    assert shared.groups == copy.groups == [[0, 2]]
    lam = m.lambda_grid(10)[5]
    sa, sb = copy.solve(lam), shared.solve(lam)
    assert abs(sb.objective - sa.objective) <= 1e-12 * abs(sa.objective)


@pytest.mark.parametrize("family, y", FAMILIES)
def test_held_out_rows_score_bit_for_bit_as_their_copy(family, y):
    m = _model(family, y, {"offset": "off", "weights": "w"})
    data = m._path_data()
    test = np.flatnonzero(fold_ids(m.y, 5, random_state=0) == 2)
    sol = data.prepare().solve(m.lambda_grid(10)[4])
    held = data.held_out(test)
    copy = data.design.subset(test)
    eta = copy.linear_predictor(sol.coef, sol.dense_coef, sol.intercept)
    for scoring in ("deviance", "mse"):
        assert data.score(sol, held, scoring) == score(
            data.family, scoring, m.y[test], eta, copy.sample_weight
        )
    # and a held-out set holds no copy of its rows' codes, y or weights
    splits = [np.flatnonzero(fold_ids(m.y, 5, random_state=0) == k) for k in range(5)]
    tracemalloc.start()
    try:
        sets = [data.held_out(t) for t in splits]
        held_bytes = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    # a copy holds (p + 24) bytes a row (codes, y, weights, offset): 42,000 here; a
    # held-out set its rows' indices, int32 (4 bytes a held-out row: 6,000 here)
    assert sets and held_bytes < 6 * m.nobs, held_bytes
    assert all(h.rows.dtype == np.int32 for h, _, _ in sets)


@pytest.mark.parametrize("family, y", FAMILIES)
@pytest.mark.parametrize("extra", EXTRAS, ids=["plain", "weights", "offset"])
def test_cross_validation_on_shared_folds_selects_as_on_copied_folds(family, y, extra):
    m = _model(family, y, extra)
    data = m._path_data()
    grid = m.lambda_grid(12)
    folds = fold_ids(m.y, 5, stratify=m.family.binary, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a grid end message, the same for both
        copied = cross_validate(data, grid, folds, prepare=data.prepare, refit_path=False)
        shared = cross_validate(data, grid, folds, prepare=data.prepare_fold, refit_path=False)
        default = cross_validate(data, grid[:3], folds, refit_path=False)  # the default
    np.testing.assert_array_equal(default.fold_scores, shared.fold_scores[:, :3])
    assert shared.lam_min == copied.lam_min and shared.lam_1se == copied.lam_1se
    # both walks solve the folds to cv_tol; CD stops them at different iterates within it
    # (sums in another order, and the polish is skipped while CD's rate pays): the
    # held-out scores agree to what that tolerance guarantees, the choices exactly
    np.testing.assert_allclose(shared.fold_scores, copied.fold_scores, rtol=1e-6, atol=0)


def test_cox_folds_keep_their_copy():
    # the partial likelihood is not a sum over rows (risk sets): a Cox fold is copied
    rng = np.random.default_rng(4)
    n = 200
    codes = rng.integers(0, 4, size=(2, n)).astype(np.uint8)
    bp = np.array([0, 4, 8], dtype=np.intp)
    w = np.ones(8)
    w[bp[:-1]] = 0.0
    y = _cox.encode(rng.exponential(size=n) * 10, (rng.uniform(size=n) < 0.7).astype(float))
    data = PathData(codes, bp, y, "cox", w)
    rows = np.arange(150)
    assert data.prepare_fold(rows).prob.n_rows == 150
    assert data.prepare_fold(rows).prob.design.train_mask is None


def test_folds_of_fold_ids_make_each_split_when_read_and_keep_none():
    import pickle

    from binarsity_stats.engine._folds import Folds

    n = 20_000
    ids = fold_ids(np.zeros(n), 10, random_state=0)
    tracemalloc.start()
    try:
        folds = Folds.from_fold_ids(ids)
        kept = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    # ten training index vectors would be 9 row vectors of int64 (1.44 MB here); the
    # fold ids are kept a byte a row (int8, the caller's int64 not held)
    assert kept < 2 * n, kept
    assert folds._ids.dtype == np.int8
    assert folds.n_folds == len(folds.splits) == 10
    for k, (train, test) in enumerate(folds.splits):
        np.testing.assert_array_equal(train, np.flatnonzero(ids != k))
        np.testing.assert_array_equal(test, np.flatnonzero(ids == k))
    np.testing.assert_array_equal(folds.splits[-1][1], np.flatnonzero(ids == 9))
    np.testing.assert_array_equal(folds.fold_ids, ids)
    back = pickle.loads(pickle.dumps(folds))
    assert back.splits == folds.splits and back.n_folds == 10
    with pytest.raises(IndexError):
        folds.splits[10]


def test_a_fold_that_repeats_a_row_is_copied():
    m = _model("binomial", "yb", {})
    data = m._path_data()
    rows = np.concatenate([np.arange(1000), np.arange(100)])  # rows 0..99 twice
    assert data.prepare_fold(rows).prob.n_rows == rows.size
    with pytest.raises(ValueError, match="repeats a row"):
        data.design.fold(rows)


@pytest.mark.parametrize("extra", [{}, {"weights": "w"}], ids=["plain", "weights"])
def test_a_kept_fold_drops_its_weights_between_solves_and_rebuilds_the_same_bits(extra):
    m = _model("poisson", "yp", extra)
    data = m._path_data()
    rows = np.flatnonzero(fold_ids(m.y, 5, random_state=0) != 3)
    prep = data.prepare_fold(rows)
    before = prep.prob.sw.copy()
    lams = m.lambda_grid(6)
    kept = [prep.solve(lam) for lam in lams[:3]]
    prep.prob.release_working()
    assert prep.prob.design.unit_weight is None and prep.prob._sw is None
    np.testing.assert_array_equal(prep.prob.sw, before)
    prep.prob.release_working()
    again = [prep.solve(lam) for lam in lams[:3]]  # a solve after a release: same bits
    for a, b in zip(kept, again, strict=True):
        assert a.objective == b.objective
        np.testing.assert_array_equal(a.coef, b.coef)
    # the derived designs of a released fold (segments, merged blocks) rebuild them
    prep.prob.release_working()
    assert prep.lambda_max() == pytest.approx(data.prepare(rows).lambda_max(), rel=1e-9)
    # a design of all its rows never releases
    assert not data.design.release_weights()
