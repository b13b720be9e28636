"""glmnet's and scikit-learn's cross-validation conventions in ``fit_cv`` (issue 13).

What is proved here:

* ``folds=`` takes a fold-id array (glmnet's ``foldid``, 0..K−1 or 1..K; or its column
  name, on the rows ``missing="drop"`` kept), any
  scikit-learn splitter (``KFold``, ``GroupKFold`` with ``groups``, ``TimeSeriesSplit``,
  ``ShuffleSplit``) or ``(train, test)`` pairs; the splits used are exactly the
  splitter's (compared with scikit-learn's own ``split``) and are stored on the
  result; the same folds given three ways give bit for bit the same CV;
* bad fold specifications raise errors naming ``folds``;
* ``cv.results(λ)`` and ``cv.predict(new, s=...)`` at any λ of the grid: a grid value
  is the path's fit (bit for bit), a value between grid values an exact fit (the
  objective of ``model.fit(lam=λ)``), a value outside the grid is refused with its
  range; ``s`` defaults to ``"lam_1se"`` as in glmnet;
* the grid's ends: when the best λ is the last of the default grid, the grid is
  extended until it is not (the minimum found below the requested grid; before, the
  smallest λ of the grid was returned), and a warning names the fix when it still is,
  or when an explicit grid is too short at either end; a default grid whose best λ is
  λ_max (pure noise) is neither extended nor warned about. (The report, measured on
  statsmodels' ``randhie`` survey data, 20,190 rows, poisson ``mdvis`` on nine binned
  columns, 5 folds: lam_min is the last λ of the default grid; extended by 5 values
  the minimum is one step below it — too slow for this suite, quoted in the
  changelog.)
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from binarsity_stats import glm
from binarsity_stats.engine._folds import Folds, resolve_folds

sk = pytest.importorskip("sklearn.model_selection")


def _steps(n=400, seed=0, noise=0.5):
    """A jagged gaussian signal: its best λ is ~1% of λ_max."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1, n)
    y = np.where((x * 8).astype(int) % 2 == 0, 1.0, -1.0) + noise * rng.normal(size=n)
    return pd.DataFrame({"x": x, "y": y, "g": np.arange(n) // 10, "w": rng.uniform(0.5, 2, n)})


@pytest.fixture(scope="module")
def model():
    return glm("y ~ bin(x, 20)", _steps(), sample_weight="w")


def _cv(model, **kw):
    kw = {"n_lambdas": 12, "lam_min_ratio": 0.05, "extend_grid": False, **kw}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return model.fit_cv(**kw)


# ---------------------------------------------------------------------------------------
# Fold specifications
# ---------------------------------------------------------------------------------------


def test_fold_ids_in_two_codings_and_pairs_give_the_int_folds_cv_bit_for_bit(model):
    ref = _cv(model, folds=4, random_state=3)
    assert ref.fold_ids.min() == 0 and ref.fold_ids.max() == 3
    pairs = [(np.flatnonzero(ref.fold_ids != k), np.flatnonzero(ref.fold_ids == k))
             for k in range(4)]  # fmt: skip
    for folds in (ref.fold_ids, ref.fold_ids + 1, list(ref.fold_ids + 1), pairs, iter(pairs)):
        cv = _cv(model, folds=folds)
        assert_array_equal(cv.fold_ids, ref.fold_ids)
        assert_array_equal(cv.fold_scores, ref.fold_scores)
        assert (cv.lam_min, cv.lam_1se) == (ref.lam_min, ref.lam_1se)
        assert_array_equal(cv.best_.coef, ref.best_.coef)
        for (tr, te), (tr0, te0) in zip(cv.splits, pairs, strict=True):
            assert_array_equal(tr, tr0)
            assert_array_equal(te, te0)


def test_a_kfold_splitter_is_used_as_is(model):
    splitter = sk.KFold(5, shuffle=True, random_state=1)
    cv = _cv(model, folds=splitter)
    expected = list(splitter.split(np.zeros((model.nobs, 1))))
    assert cv.folds == 5 and len(cv.splits) == 5
    for (tr, te), (tr0, te0) in zip(cv.splits, expected, strict=True):
        assert_array_equal(tr, tr0)
        assert_array_equal(te, te0)
    # the same folds as fold ids: the same CV
    ids = np.empty(model.nobs, dtype=int)
    for k, (_, te) in enumerate(expected):
        ids[te] = k
    assert_array_equal(cv.fold_ids, ids)
    assert_array_equal(_cv(model, folds=ids).fold_scores, cv.fold_scores)


def test_group_kfold_keeps_groups_whole(model):
    groups = _steps()["g"].to_numpy()
    cv = _cv(model, folds=sk.GroupKFold(4), groups=groups)
    expected = list(sk.GroupKFold(4).split(np.zeros((model.nobs, 1)), groups=groups))
    for (tr, te), (_, te0) in zip(cv.splits, expected, strict=True):
        assert_array_equal(te, te0)
        assert not set(groups[tr]) & set(groups[te])
    # without groups, GroupKFold itself refuses (its own message)
    with pytest.raises(ValueError, match="groups"):
        _cv(model, folds=sk.GroupKFold(4))


def test_time_series_split_trains_on_the_past_only(model):
    cv = _cv(model, folds=sk.TimeSeriesSplit(4))
    assert len(cv.splits) == 4
    for tr, te in cv.splits:
        assert tr.max() < te.min()
    never = model.nobs - sum(te.size for _, te in cv.splits)
    assert np.sum(cv.fold_ids == -1) == never > 0  # the first block is never held out
    assert np.all(np.isfinite(cv.mean))


def test_overlapping_held_out_sets_have_no_fold_ids(model):
    cv = _cv(model, folds=sk.ShuffleSplit(6, test_size=0.3, random_state=0))
    assert cv.fold_ids is None and cv.folds == 6
    assert np.all(np.isfinite(cv.se)) and np.all(cv.se > 0)


@pytest.mark.parametrize(
    ("folds", "err", "match"),
    [
        (np.zeros(5, dtype=int), ValueError, "folds \\(fold ids\\) has 5 rows"),
        (np.r_[np.nan, np.zeros(399)], ValueError, "whole numbers"),
        (np.full(400, 0.5), ValueError, "whole numbers"),
        (np.r_[-1, np.zeros(399, dtype=int)], ValueError, "PredefinedSplit"),
        (np.zeros(400, dtype=int), ValueError, "at least 2 distinct folds"),
        (np.array(["a"] * 400), TypeError, "folds must be"),
        (True, TypeError, "folds must be"),
        (2.0, TypeError, "folds must be"),
        ("fold", ValueError, "folds='fold' is not a column of the data"),
        ([(np.arange(10), np.arange(5))], ValueError, "both in train and in test"),
        ([(np.arange(10), np.arange(395, 401))], ValueError, "outside 0..399"),
        ([(np.arange(10), np.array([], dtype=int))], ValueError, "no test rows"),
        ([(np.arange(10.0), np.arange(10, 20))], ValueError, "integer row indices"),
        (1, ValueError, "folds must be between 2 and the number of rows"),
    ],
)
def test_bad_fold_specifications_name_folds(model, folds, err, match):
    with pytest.raises(err, match=match):
        model.fit_cv(folds=folds, n_lambdas=3)


def test_groups_with_fold_ids_is_refused(model):
    with pytest.raises(ValueError, match="groups is used with folds=int or a scikit-learn"):
        model.fit_cv(folds=np.arange(400) % 3, groups=np.arange(400) // 10, n_lambdas=3)


def test_folds_restrict_to_a_resample_keeps_each_rows_side():
    folds = Folds.from_fold_ids(np.array([0, 1, 2, 0, 1, 2, 0, 1]))
    sub = folds.restrict(np.array([0, 1, 3, 4, 7]))
    assert sub.n_folds == 2  # fold 2 lost its held-out rows 2 and 5
    assert_array_equal(sub.fold_ids, [0, 1, 0, 1, 1])
    assert resolve_folds(3, np.zeros(9), random_state=0).n_folds == 3


def test_bootstrap_replays_fixed_fold_ids(model):
    ids = np.arange(model.nobs) % 4
    cv = _cv(model, folds=ids)
    assert cv.rule["splits"] is not None and cv.rule["folds"] == 4
    boot = cv.best_.bootstrap(n_boot=2, random_state=0, lam="cv")
    assert boot.lams.shape == (2,) and np.all(np.isin(boot.lams, cv.rule["lams"]))


# ---------------------------------------------------------------------------------------
# results(λ) and predict(s=)
# ---------------------------------------------------------------------------------------


def test_results_and_predict_at_any_lambda_of_the_grid(model):
    cv = _cv(model, folds=4, random_state=0)
    new = _steps(50, seed=9)
    i = 3
    res = cv.results(cv.lams[i])
    assert_array_equal(res.coef, cv.path[i].coef)
    assert res.cv_score["mean"] == cv.mean[i] and res.cv_rule is None
    assert_array_equal(cv.predict(new, s="lam_min"), cv.best_.predict(new))
    assert_array_equal(cv.predict(new), cv.results("lam_1se").predict(new))  # glmnet's default
    assert_array_equal(cv.predict(new, s=cv.lams[i], type="link"),
                       cv.path[i].predict(new, type="link"))  # fmt: skip
    # between two grid values: the exact fit at λ (the objective of a fit from scratch)
    lam = float(np.sqrt(cv.lams[4] * cv.lams[5]))
    between = cv.results(lam)
    direct = model.fit(lam=lam)
    assert between.lam == lam and between.cv_score is None
    assert_allclose(between.solution.objective, direct.solution.objective, rtol=1e-9)
    assert_allclose(between.predict(new), direct.predict(new), atol=1e-5)
    # outside the grid: refused with the grid's range
    for bad in (cv.lams[0] * 1.5, cv.lams[-1] / 2):
        with pytest.raises(ValueError, match=r"outside the cross-validated grid \[.*\]"):
            cv.predict(new, s=bad)
    with pytest.raises(TypeError, match="s must be 'lam_min', 'lam_1se' or a λ value"):
        cv.results([0.1])
    with pytest.raises(ValueError, match="which must be 'lam_min', 'lam_1se' or a λ"):
        cv.predict(new, s="lambda.1se")


# ---------------------------------------------------------------------------------------
# The ends of the grid
# ---------------------------------------------------------------------------------------


def _grid_warnings(fn):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        out = fn()
    return out, [str(w.message) for w in rec if issubclass(w.category, UserWarning)]


def test_a_default_grid_ending_too_soon_is_extended_until_the_minimum_is_inside(model):
    kw = dict(folds=5, random_state=0, n_lambdas=20, lam_min_ratio=0.03)
    short, msgs = _grid_warnings(lambda: model.fit_cv(extend_grid=False, **kw))
    assert short.idx_min == len(short.lams) - 1  # the report: lam_min = the smallest λ
    assert any("smallest λ evaluated" in m and "lam_min_ratio" in m for m in msgs)
    cv, msgs = _grid_warnings(lambda: model.fit_cv(**kw))
    assert not msgs
    assert cv.extended > 0 and len(cv.lams) == 20 + cv.extended
    assert cv.lam_min < short.lams[-1]  # found below the requested grid
    assert cv.idx_min < len(cv.lams) - 1  # and no longer at its end
    assert_allclose(np.diff(np.log(cv.lams)), np.log(0.03) / 19)  # the grid's own step
    assert_array_equal(cv.fold_scores[:, :20], short.fold_scores)  # the same walk first
    assert "added below the grid" in repr(cv)


def test_an_extension_that_reaches_its_floor_warns_with_the_fix(model):
    cv, msgs = _grid_warnings(lambda: model.fit_cv(folds=5, random_state=0, n_lambdas=10,
                                                   lam_min_ratio=0.5))  # fmt: skip
    assert cv.extended == 10 and cv.idx_min == len(cv.lams) - 1
    assert len(msgs) == 1 and "after extending the grid by 10 values" in msgs[0]
    assert "n_bins" in msgs[0]


def test_explicit_grids_are_not_extended_but_warned_about_at_both_ends(model):
    lmax = model.lambda_max()
    low, msgs = _grid_warnings(lambda: model.fit_cv(folds=5, random_state=0,
                                                    lams=lmax * np.array([0.5, 0.3, 0.2])))  # fmt: skip
    assert low.extended == 0 and low.idx_min == 2
    assert len(msgs) == 1 and "pass lams reaching further down" in msgs[0]
    noise = glm("y ~ bin(x, 20)", _steps().assign(y=np.random.default_rng(1).normal(size=400)))
    nmax = noise.lambda_max()
    high, msgs = _grid_warnings(lambda: noise.fit_cv(folds=5, random_state=0,
                                                     lams=nmax * np.array([0.3, 0.1, 0.03])))  # fmt: skip
    assert high.idx_min == 0
    assert len(msgs) == 1 and "largest λ of lams, below λ_max" in msgs[0]
    # the default grid starts at λ_max: a best λ there (noise) is the answer, not a fault
    top, msgs = _grid_warnings(lambda: noise.fit_cv(folds=5, random_state=0, n_lambdas=10))
    assert top.idx_min == 0 and top.lam_min == pytest.approx(nmax) and top.extended == 0
    assert not msgs


def test_fold_ids_as_a_column_name_use_the_rows_kept_by_missing_drop():
    df = _steps(200).assign(fold=lambda d: np.arange(len(d)) % 4)
    df.loc[[3, 50, 120], "x"] = np.nan
    model = glm("y ~ bin(x, 10)", df, missing="drop")
    assert model.nobs == 197
    kept = df["x"].notna().to_numpy()
    by_name = _cv(model, folds="fold")
    by_values = _cv(model, folds=df["fold"].to_numpy())  # the rows given to glm()
    by_kept = _cv(model, folds=df["fold"].to_numpy()[kept])
    for cv in (by_values, by_kept):
        assert_array_equal(cv.fold_ids, by_name.fold_ids)
        assert_array_equal(cv.fold_scores, by_name.fold_scores)
    assert_array_equal(by_name.fold_ids, df["fold"].to_numpy()[kept])
