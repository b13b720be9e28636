"""The estimators' ``by=`` (varying coefficients) and ``strata=`` (Cox strata), issue 14.

An estimator with ``by={"x": "g"}`` is the formula ``bin(x, n):C(g)`` (written
``bin(x, n, by=g)`` to keep the blocks in column order), and ``strata="s"`` with
``family="cox"`` is ``strata(s)``: same λ, coefficients, objective, predictions and
baselines. Bad input is refused naming the argument and the column.
"""

from __future__ import annotations

import json
import pickle
import sqlite3

import numpy as np
import pandas as pd
import pytest

from binarsity_stats import (
    BinarsityClassifier,
    BinarsityClassifierCV,
    BinarsityGLM,
    BinarsityGLMCV,
    from_spec,
    glm,
    to_sql,
)
from binarsity_stats.design import standalone_scorer as scorer


def _frame(n=700, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "age": rng.uniform(18, 80, n).round(1),  # ties
        "region": rng.choice(["north", "south", "west"], n, p=[0.5, 0.3, 0.2]),
        "z": rng.standard_t(3, n),  # heavy tails
        "k": rng.integers(0, 4, n).astype(float),  # integral floats as group labels
    })
    step = np.select([df.region == "north", df.region == "south"], [df.age > 40, df.age > 60], 0)
    df["y"] = 1.0 * step + 0.5 * (df.region == "west") + 0.2 * df.z + rng.normal(0, 0.6, n)
    df["yb"] = (rng.uniform(size=n) < 1 / (1 + np.exp(1 - 1.5 * step))).astype(float)
    df["w"] = rng.uniform(0.2, 3.0, n)
    return df


DF = _frame()
X = DF[["age", "region", "z"]]


def _same(est, res, tol=1e-10):
    np.testing.assert_allclose(est.coef_, res.coef, rtol=0, atol=tol)
    assert est.lam_ == pytest.approx(res.lam, rel=1e-12)
    assert est.objective_ == pytest.approx(res.objective, rel=1e-10, abs=1e-12)


def test_by_equals_the_formula_at_theory_lambda_with_weights():
    est = BinarsityGLM(n_bins=12, by={"age": "region"}, tol=1e-10).fit(X, DF.y, sample_weight=DF.w)
    res = glm("y ~ bin(age, 12, by=region) + bin(z, 12)", DF, n_bins=12,
              sample_weight=DF.w).fit(tol=1e-10)  # fmt: skip
    _same(est, res)
    assert list(est.feature_kinds_) == ["bin", "group", "bin"]
    assert est.by_[0] == "region" and list(est.by_levels_[0]) == ["north", "south", "west"]
    assert est.coef_.size == 3 * 12 + 12
    np.testing.assert_allclose(est.predict(X), res.predict(DF), rtol=0, atol=1e-10)
    # bin(x):C(g) written as an interaction fits the same model (blocks in another order)
    inter = glm("y ~ bin(z, 12) + bin(age, 12):C(region)", DF, n_bins=12,
                sample_weight=DF.w).fit(lam=est.lam_, tol=1e-10)  # fmt: skip
    assert est.objective_ == pytest.approx(inter.objective, rel=1e-10)
    np.testing.assert_allclose(est.predict(X), inter.predict(DF), atol=1e-9)


def test_by_combines_with_monotone_n_bins_min_count_and_categoricals():
    cols = ["age", "region", "z", "k"]
    kw = dict(lam=0.004, n_bins=[10, 0, 8, 0], min_bin_count=15, tol=1e-10,
              monotone={"age": "increasing"}, by={"age": "region"},
              categorical_features=["k"])  # fmt: skip
    clf = BinarsityClassifier(**kw).fit(DF[cols], DF.yb)
    res = glm("yb ~ bin(age, 10, min_count=15, monotone='increasing', by=region)"
              " + bin(z, 8, min_count=15) + C(k)", DF, family="binomial").fit(lam=0.004, tol=1e-10)
    _same(clf, res)
    assert clf.monotone_[0] == "increasing"
    for g in range(3):  # each level's chain non-decreasing
        chain = clf.coef_[g * 10 : (g + 1) * 10]
        assert np.all(np.diff(chain) >= -1e-12)
    # the group column may also be named categorical: its main effect is in the term
    both = BinarsityClassifier(**dict(kw, categorical_features=["k", "region"])).fit(DF[cols], DF.yb)
    np.testing.assert_array_equal(both.coef_, clf.coef_)


def test_by_on_an_array_by_position_and_with_a_numeric_group():
    arr = DF[["age", "k", "z"]].to_numpy()
    est = BinarsityGLM(n_bins=6, lam=0.01, by={0: 1}, tol=1e-10).fit(arr, DF.y)
    res = glm("y ~ bin(age, 6, by=k) + bin(z, 6)", DF).fit(lam=0.01, tol=1e-10)
    _same(est, res)
    assert est.by_[0] == 1 and list(est.by_levels_[0]) == [0.0, 1.0, 2.0, 3.0]
    np.testing.assert_allclose(est.predict(arr), res.predict(DF), atol=1e-10)


def test_predict_new_rows_and_an_unseen_level():
    est = BinarsityGLM(n_bins=8, lam=0.01, by={"age": "region"}).fit(X, DF.y)
    res = glm("y ~ bin(age, 8, by=region) + bin(z, 8)", DF).fit(lam=0.01)
    new = _frame(50, 3)
    np.testing.assert_allclose(est.predict(new[X.columns]), res.predict(new), atol=1e-10)
    # the columns are matched by name: another order, extra columns
    np.testing.assert_allclose(est.predict(new[["z", "y", "region", "age"]]), res.predict(new),
                               atol=1e-10)  # fmt: skip
    bad = new[X.columns].copy()
    bad.loc[bad.index[3], "region"] = "east"
    with pytest.raises(ValueError, match=r"column 'region' has level\(s\) not seen.*'east'"):
        est.predict(bad)
    with pytest.raises(ValueError, match="region"):
        est.predict(new[["age", "z"]])


def _same_cv(est, ref):
    np.testing.assert_array_equal(est.lams_, ref.lams)
    np.testing.assert_array_equal(est.cv_mean_, ref.mean)
    assert est.lam_ == ref.lam_min
    np.testing.assert_array_equal(est.coef_, ref.results("lam_min").coef)


def test_cv_estimators_with_by_are_fit_cv():
    ids = np.arange(len(DF)) % 3
    cv = BinarsityGLMCV(n_bins=8, by={"age": "region"}, cv=ids, n_lambdas=12).fit(X, DF.y)
    ref = glm("y ~ bin(age, 8, by=region) + bin(z, 8)", DF).fit_cv(folds=ids, n_lambdas=12)
    _same_cv(cv, ref)
    assert cv.by_[0] == "region"
    clf = BinarsityClassifierCV(n_bins=6, by={"age": "region"}, cv=3, random_state=0,
                                n_lambdas=8).fit(X, DF.yb)  # fmt: skip
    assert clf.coef_.size == 3 * 6 + 6 and 0.0 <= clf.score(X, DF.yb) <= 1.0
    assert "by" in clf.get_params() and "strata" not in clf.get_params()


def test_by_pickles_clones_and_exports():
    from sklearn.base import clone

    est = BinarsityGLM(n_bins=8, lam=0.01, by={"age": "region"}).fit(X, DF.y)
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.predict(X), est.predict(X))
    assert clone(est).get_params()["by"] == {"age": "region"}
    new = _frame(40, 5)[list(X.columns)]
    spec = json.loads(json.dumps(est.to_spec()))
    assert spec["terms"][0]["by"] == {"column": "region", "main": False,
                                      "levels": ["north", "south", "west"]}  # fmt: skip
    np.testing.assert_allclose(from_spec(spec).predict(new), est.predict(new), atol=1e-12)
    rows = new.to_dict("records")
    np.testing.assert_allclose(scorer.predict(spec, rows), est.predict(new), atol=1e-12)
    con = sqlite3.connect(":memory:")
    new.to_sql("t", con, index=False)
    got = np.array([r[-1] for r in con.execute(to_sql(est)).fetchall()], dtype=float)
    np.testing.assert_allclose(got, est.predict(new), rtol=1e-12, atol=1e-12)


def test_by_results_tables_are_the_formulas():
    est = BinarsityGLM(n_bins=8, by={"age": "region"}).fit(X, DF.y)
    res = est.results(X, DF.y)
    assert list(res.term_table().index) == ["bin(age):C(region)", "bin(z)"]
    cuts = est.cut_points()
    assert set(cuts.loc[cuts.feature == "age", "level"]) <= {"north", "south", "west"}
    formula = glm("y ~ bin(age, by=region) + bin(z)", DF, n_bins=8).fit()
    pd.testing.assert_frame_equal(res.cut_points(), formula.cut_points(), atol=1e-10)


@pytest.mark.parametrize(
    "by, kw, match",
    [
        ({"age": "nope"}, {}, r"by\['age'\] names column\(s\) \['nope'\]"),
        ({"nope": "region"}, {}, r"by names column\(s\) \['nope'\]"),
        ({"age": "age"}, {}, r"by\['age'\]: the group column is the feature itself"),
        ({"region": "age"}, {"categorical_features": ["region"]},
         r"by\['region'\]: column 'region' is categorical, not binned"),
        ({"age": "z"}, {}, r"by\['age'\]: the group column 'z' holds non-integer numbers"),
        ({"age": "z"}, {"linear_features": ["z"]}, r"by\['age'\]: the group column 'z' is in linear"),
        (["age"], {}, "by must be None or a dict"),
        ({"age": 1.5}, {}, r"by\['age'\]: 1.5 is not a column"),
        ({"age": "region", "region": "z"}, {}, "'region' is categorical, not binned"),
        ({"age": "z", "z": "region"}, {}, "column 'z' is the group of a feature and has a group"),
        ({"age": "region"}, {"monotone": {"region": "increasing"}}, "column 'region' is group"),
    ],
)
def test_by_bad_input_names_the_argument(by, kw, match):
    kw = {"categorical_features": ["region"], **kw}
    with pytest.raises(ValueError, match=match):
        BinarsityGLM(by=by, **kw).fit(X, DF.y)


def test_by_group_with_missing_values_or_too_many_levels():
    bad = X.copy()
    bad.loc[bad.index[0], "region"] = None
    with pytest.raises(ValueError, match=r"by\['age'\]: the group column 'region' contains missing"):
        BinarsityGLM(by={"age": "region"}).fit(bad, DF.y)
    bad = X.copy()
    bad.loc[bad.index[0], "age"] = np.nan
    with pytest.raises(ValueError, match=r"by\['age'\]: column 'age' contains missing values"):
        BinarsityGLM(by={"age": "region"}, missing="separate").fit(bad, DF.y)
    ids = pd.DataFrame({"x": DF.age, "id": np.arange(len(DF))})  # one level per row
    with pytest.raises(ValueError, match=r"by\['x'\]: 700 levels of the group column 'id'"):
        BinarsityGLM(by={"x": "id"}, n_bins=100).fit(ids, DF.y)


# -- Cox strata ------------------------------------------------------------------------
def _survival(n=500, seed=1):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"age": rng.uniform(18, 80, n), "site": rng.choice(["a", "b", "c"], n),
                       "z": rng.normal(size=n), "arm": rng.integers(0, 2, n)})  # fmt: skip
    base = df.site.map({"a": 1.0, "b": 3.0, "c": 0.4}).to_numpy()
    t = rng.exponential(1 / (base * np.exp(0.8 * (df.age > 50) + 0.3 * df.z)))
    c = rng.exponential(2.0, n)
    df["time"], df["event"] = np.minimum(t, c).round(2), (t <= c).astype(int)  # tied times
    df["w"] = rng.uniform(0.5, 2.0, n)
    return df


SDF = _survival()
SX = SDF[["age", "site", "z", "arm"]]
SY = np.column_stack([SDF.time, SDF.event])


def test_strata_equal_the_formula_fit():
    est = BinarsityGLM(family="cox", n_bins=10, strata=["site", "arm"], tol=1e-10).fit(
        SX, SY, sample_weight=SDF.w
    )
    res = glm("Surv(time, event) ~ bin(age, 10) + bin(z, 10) + strata(site, arm)", SDF,
              family="cox", sample_weight=SDF.w).fit(tol=1e-10)  # fmt: skip
    _same(est, res)
    assert list(est.feature_kinds_) == ["bin", "strata", "bin", "strata"]
    assert est.strata_ == ["site", "arm"] and set(est.baseline_hazard_) == set(res._baseline)
    new = _survival(30, 7)
    times = [0.2, 0.7, 1.5]
    np.testing.assert_allclose(est.predict_survival(new[SX.columns], times),
                               res.predict(new, type="survival", times=times), atol=1e-12)  # fmt: skip
    assert est.score(SX, SY, sample_weight=SDF.w) == pytest.approx(res.concordance, rel=1e-12)
    # the strata change the fit: risk sets no longer cross sites
    plain = BinarsityGLM(family="cox", n_bins=10, lam=est.lam_).fit(SX[["age", "z"]], SY)
    assert np.max(np.abs(plain.coef_ - est.coef_)) > 1e-3
    summary = est.results(SX, SY, sample_weight=SDF.w).baseline_hazard()
    assert set(summary["stratum"]) == set(est.baseline_hazard_)


def test_strata_with_by_cv_and_pickle():
    est = BinarsityGLM(family="cox", n_bins=6, lam=0.02, strata="site", by={"age": "arm"},
                       tol=1e-10).fit(SX, SY)  # fmt: skip
    res = glm("Surv(time, event) ~ bin(age, 6, by=arm) + bin(z, 6) + strata(site)", SDF,
              family="cox").fit(lam=0.02, tol=1e-10)  # fmt: skip
    _same(est, res)
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.predict_survival(SX, [1.0]), est.predict_survival(SX, [1.0]))
    ids = np.arange(len(SDF)) % 3
    cv = BinarsityGLMCV(family="cox", n_bins=6, strata="site", cv=ids, n_lambdas=8).fit(SX, SY)
    ref = glm("Surv(time, event) ~ bin(age, 6) + bin(z, 6) + bin(arm, 6) + strata(site)", SDF,
              family="cox").fit_cv(folds=ids, n_lambdas=8)  # fmt: skip
    _same_cv(cv, ref)
    assert cv.strata_ == ["site"] and 0.5 < cv.score(SX, SY) <= 1.0
    arr = BinarsityGLM(family="cox", n_bins=6, lam=0.02, strata=1).fit(
        SX[["age", "site", "z"]].to_numpy(dtype=object), SY
    )
    frame = BinarsityGLM(family="cox", n_bins=6, lam=0.02, strata="site").fit(
        SX[["age", "site", "z"]], SY
    )
    np.testing.assert_allclose(arr.coef_, frame.coef_, atol=1e-12)
    assert arr.strata_ == [1] and set(arr.baseline_hazard_) == {"a", "b", "c"}


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"family": "gaussian", "strata": "site"}, "strata='site' needs family='cox'"),
        ({"family": "cox", "strata": "nope"}, r"strata names column\(s\) \['nope'\]"),
        ({"family": "cox", "strata": ["site", "site"]}, "strata names column 'site' twice"),
        ({"family": "cox", "strata": "z", "linear_features": ["z"]},
         "strata: column 'z' is in linear_features"),
        ({"family": "cox", "strata": "arm", "by": {"age": "arm"}},
         r"by\['age'\]: column 'arm' is a strata column"),
        ({"family": "cox", "strata": {"site": 1}}, "strata must be None, a column"),
    ],
)
def test_strata_bad_input_names_the_argument(kw, match):
    y = SY if kw["family"] == "cox" else SDF.time
    with pytest.raises(ValueError, match=match):
        BinarsityGLM(**kw).fit(SX, y)


def test_an_unseen_stratum_is_named():
    est = BinarsityGLM(family="cox", n_bins=6, strata="site").fit(SX, SY)
    new = SX.iloc[:3].copy()
    new["site"] = ["a", "zz", "b"]
    est.predict(new)  # the relative risk needs no stratum
    with pytest.raises(ValueError, match=r"stratum 'zz' \(strata=\['site'\]\) was not seen"):
        est.predict_survival(new, [1.0])


def test_a_strata_field_in_y_points_to_the_strata_argument():
    three = np.column_stack([SDF.time, SDF.event, np.zeros(len(SDF))])
    with pytest.raises(ValueError, match="give the estimator strata='g'"):
        BinarsityGLM(family="cox").fit(SX[["age"]], three)


def test_by_without_intercept_and_on_dask():
    est = BinarsityGLM(n_bins=8, lam=0.01, by={"age": "region"}, fit_intercept=False,
                       tol=1e-10).fit(X, DF.y)  # fmt: skip
    res = glm("y ~ bin(age, 8, by=region) + bin(z, 8) - 1", DF).fit(lam=0.01, tol=1e-10)
    _same(est, res)
    assert est.intercept_ == 0.0
    dd = pytest.importorskip("dask.dataframe")
    with pytest.raises(ValueError, match="by= and strata= are not supported on a Dask X"):
        BinarsityGLM(by={"age": "region"}).fit(dd.from_pandas(X, npartitions=2),
                                              dd.from_pandas(DF.y, npartitions=2))  # fmt: skip


def test_a_tampered_fitted_state_is_refused():
    est = BinarsityGLM(family="cox", n_bins=6, strata="site", by={"age": "arm"}).fit(SX, SY)
    for attr, value in [("strata_", ["age"]), ("strata_", []), ("by_", np.array(
            [None, None, None, None], dtype=object)), ("by_levels_", [None] * 4)]:  # fmt: skip
        bad = pickle.loads(pickle.dumps(est))
        setattr(bad, attr, value)
        with pytest.raises(ValueError, match="the fitted state is inconsistent"):
            bad.predict_survival(SX, [1.0])


@pytest.mark.parametrize("pw", ["theory", "uniform", "array"])
def test_by_with_every_penalty_weighting(pw):
    model = glm("y ~ bin(age, 6, by=region) + bin(z, 6)", DF, penalty_weights="balanced")
    weights = model.penalty_weights * np.linspace(0.5, 2.0, model.penalty_weights.size)
    kind = weights if pw == "array" else pw
    est = BinarsityGLM(n_bins=6, lam=0.02, by={"age": "region"}, penalty_weights=kind,
                       tol=1e-10).fit(X, DF.y)  # fmt: skip
    res = glm("y ~ bin(age, 6, by=region) + bin(z, 6)", DF, penalty_weights=kind).fit(
        lam=0.02, tol=1e-10
    )
    np.testing.assert_array_equal(est.penalty_weights_, res.model.penalty_weights)
    _same(est, res)
    assert np.all(est.penalty_weights_[[0, 6, 12, 18]] == 0)  # breaks at every level start
