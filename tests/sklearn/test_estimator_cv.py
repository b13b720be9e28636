"""``BinarsityGLMCV`` and ``BinarsityClassifierCV`` (scikit-learn's ``*CV`` pattern).

What is proved here:

* (scikit-learn's checks at their default parameters: test_sklearn_contract.py)
* they are ``glm(...).fit_cv(...)``: on the same data, bins and folds (an int ``cv``
  with the same seed, or fold ids) the grid, every fold's scores, ``lam_min``/
  ``lam_1se`` and the fit at the chosen λ are bit for bit those of the formula layer
  (binomial with weights; poisson with an offset; ``select="lam_1se"``; categorical
  and linear features against ``C()`` and a linear term);
* ``n_jobs`` does not change the result; ``groups`` in ``fit`` keeps groups whole
  (an int ``cv`` and ``GroupKFold``);
* they work in ``Pipeline``, ``GridSearchCV``, ``clone`` and pickle, and ``to_spec``
  describes the chosen fit (it read ``self.lam``, which a CV estimator has not);
* bad CV parameters raise errors naming them before any work.
"""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_array_equal

from binarsity_stats import (
    BinarsityClassifier,
    BinarsityClassifierCV,
    BinarsityGLM,
    BinarsityGLMCV,
    from_spec,
    glm,
)

pytest.importorskip("sklearn")


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    x1, x2 = rng.normal(size=n), rng.gamma(2.0, size=n)
    eta = 0.9 * (x1 > 0.2) - 0.5 * (x2 > 2.5)
    y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    t = rng.uniform(0.5, 2.0, n)
    counts = rng.poisson(t * np.exp(0.3 + 0.5 * eta))
    return pd.DataFrame({"x1": x1, "x2": x2, "y": y, "w": rng.uniform(0.5, 2.0, n),
                         "t": t, "counts": counts, "g": np.arange(n) // 15})  # fmt: skip


def _same(est, cv, which="lam_min"):
    assert_array_equal(est.lams_, cv.lams)
    assert_array_equal(est.cv_scores_, cv.fold_scores)
    assert_array_equal(est.cv_mean_, cv.mean)
    assert (est.lam_min_, est.lam_1se_) == (cv.lam_min, cv.lam_1se)
    res = cv.results(which)
    assert est.lam_ == res.lam
    assert_array_equal(est.coef_, res.coef)
    assert est.intercept_ == res.intercept


def test_classifier_cv_is_fit_cv_on_the_same_bins_and_folds():
    df = _data()
    X = df[["x1", "x2"]]
    model = glm("y ~ bin(x1, 12) + bin(x2, 12)", df, family="binomial", sample_weight="w")
    ref = model.fit_cv(folds=4, random_state=5, n_lambdas=20)
    est = BinarsityClassifierCV(n_bins=12, cv=4, random_state=5, n_lambdas=20)
    est.fit(X, df["y"].map({0.0: "no", 1.0: "yes"}), sample_weight=df["w"])
    assert list(est.classes_) == ["no", "yes"]
    _same(est, ref)
    assert_array_equal(est.fold_ids_, ref.fold_ids)
    assert est.n_folds_ == 4 and len(est.splits_) == 4
    # one standard error, on fold ids given to both
    ids = np.arange(len(df)) % 3
    ref = model.fit_cv(folds=ids, n_lambdas=20)
    est = BinarsityClassifierCV(n_bins=12, cv=ids, n_lambdas=20, select="lam_1se")
    est.fit(X, df["y"], sample_weight=df["w"])
    _same(est, ref, "lam_1se")
    assert est.lam_ == est.lam_1se_ >= est.lam_min_


def test_poisson_glm_cv_with_an_offset_is_fit_cv():
    df = _data(seed=1)
    off = np.log(df["t"].to_numpy())
    model = glm("counts ~ bin(x1, 10) + bin(x2, 10)", df, family="poisson", offset=off)
    ref = model.fit_cv(folds=5, random_state=0, n_lambdas=15, scoring="mse")
    est = BinarsityGLMCV(family="poisson", n_bins=10, cv=5, random_state=0, n_lambdas=15,
                         scoring="mse")  # fmt: skip
    est.fit(df[["x1", "x2"]], df["counts"], offset=off)
    _same(est, ref)
    assert_array_equal(est.predict(df[["x1", "x2"]], offset=off),
                       ref.best_.predict(df, offset=off))  # fmt: skip


def test_n_jobs_and_groups():
    from sklearn.model_selection import GroupKFold

    df = _data()
    X, y, g = df[["x1", "x2"]], df["y"], df["g"].to_numpy()
    one = BinarsityClassifierCV(n_bins=8, cv=4, random_state=0, n_lambdas=12).fit(X, y, groups=g)
    two = BinarsityClassifierCV(n_bins=8, cv=4, random_state=0, n_lambdas=12, n_jobs=2)
    two.fit(X, y, groups=g)
    assert_array_equal(one.cv_scores_, two.cv_scores_)
    assert_array_equal(one.coef_, two.coef_)
    by_splitter = BinarsityClassifierCV(n_bins=8, cv=GroupKFold(4), n_lambdas=12)
    for est in (one, by_splitter.fit(X, y, groups=g)):
        for tr, te in est.splits_:
            assert not set(g[tr]) & set(g[te])


def test_pipeline_grid_search_clone_pickle_and_spec():
    from sklearn.base import clone
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    df = _data()
    X, y = df[["x1", "x2"]], df["y"]
    pipe = make_pipeline(FunctionTransformer(), BinarsityClassifierCV(cv=3, n_lambdas=10,
                                                                        random_state=0))  # fmt: skip
    search = GridSearchCV(pipe, {"binarsityclassifiercv__n_bins": [5, 10]}, cv=2).fit(X, y)
    assert search.best_params_["binarsityclassifiercv__n_bins"] in (5, 10)
    est = clone(BinarsityGLMCV(n_bins=10, cv=3, random_state=0, n_lambdas=10)).fit(X, y)
    again = pickle.loads(pickle.dumps(est))
    assert_array_equal(again.predict(X), est.predict(X))
    assert again.lam_ == est.lam_
    spec = est.to_spec()
    assert spec["lam"] == est.lam_
    assert_array_equal(from_spec(spec).predict(X), est.predict(X))
    # BinarsityGLM(lam="theory").to_spec() wrote float("theory") before
    theory = BinarsityGLM(lam="theory", n_bins=10).fit(X, y)
    assert theory.to_spec()["lam"] == theory.lam_


@pytest.mark.parametrize(
    ("params", "err", "match"),
    [
        ({"select": "1se"}, ValueError, "select must be 'lam_min' or 'lam_1se'"),
        ({"cv": 1}, ValueError, "cv must be >= 2"),
        ({"cv": True}, TypeError, "cv must be an integer"),
        ({"cv": np.zeros(7, dtype=int)}, ValueError, "cv \\(fold ids\\) has 7 rows"),
        ({"scoring": "auc"}, ValueError, "scoring='auc' needs family='binomial'"),
        ({"scoring": "r2"}, ValueError, "scoring must be one of"),
        ({"patience": 0}, ValueError, "patience must be >= 1"),
        ({"n_lambdas": 0}, ValueError, "n_lambdas must be >= 1"),
        ({"lams": [-1.0]}, ValueError, "lams must be"),
        ({"extend_grid": 1}, TypeError, "extend_grid"),
        ({"n_jobs": 0}, ValueError, "n_jobs"),
    ],
)
def test_bad_cv_parameters_name_themselves(params, err, match):
    df = _data(60)
    with pytest.raises(err, match=match):
        BinarsityGLMCV(**params).fit(df[["x1", "x2"]], df["y"])


def test_feature_kinds_are_inherited_and_equal_fit_cv_with_c_and_linear_terms():
    df = _data(seed=2).assign(g=lambda d: (d["x2"] * 2).astype(int).clip(0, 4),
                              z=lambda d: d["x1"] ** 2)  # fmt: skip
    model = glm("y ~ bin(x1, 10) + C(g) + z", df)
    ids = np.arange(len(df)) % 4
    ref = model.fit_cv(folds=ids, n_lambdas=15)
    est = BinarsityGLMCV(n_bins=10, categorical_features=["g"], linear_features=["z"],
                         cv=ids, n_lambdas=15).fit(df[["x1", "g", "z"]], df["y"])  # fmt: skip
    _same(est, ref)
    assert_array_equal(est.linear_coef_, ref.best_.solution.dense_coef)


def test_inspection_through_the_formula_layer_is_inherited():
    df = _data()
    X, y = df[["x1", "x2"]], df["y"]
    est = BinarsityClassifierCV(n_bins=10, cv=3, random_state=0, n_lambdas=10).fit(X, y)
    res = est.results(X, y)
    assert res.lam == est.lam_ and res.lam_source == "3-fold CV (lam_min, deviance)"
    assert_array_equal(res.predict(df), est.predict_proba(X)[:, 1])
    assert "3-fold CV" in str(est.summary(X, y))


# -- missing values: no "drop" in the estimators, and a clear error naming the column ----


def _holes():
    rng = np.random.default_rng(3)
    n = 120
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n),
                      "g": rng.choice(["x", "y", "z"], n).astype(object)})  # fmt: skip
    y = (X["a"] + rng.normal(size=n) > 0).astype(float)
    return X, y


@pytest.mark.parametrize(
    "make", [BinarsityGLM, BinarsityClassifier, BinarsityGLMCV, BinarsityClassifierCV]
)
def test_missing_drop_is_refused_with_the_reason_and_the_alternatives(make):
    X, y = _holes()
    with pytest.raises(ValueError, match=r"got 'drop': the scikit-learn estimators do not "
                       r"drop rows.*X\.dropna\(\).*missing='separate'.*glm\(\.\.\., "
                       r"missing='drop'\)"):  # fmt: skip
        make(missing="drop").fit(X[["a", "b"]], y)


@pytest.mark.parametrize(
    "make", [BinarsityGLM, BinarsityClassifier, BinarsityGLMCV, BinarsityClassifierCV]
)
def test_a_missing_value_is_an_error_naming_its_column(make):
    X, y = _holes()
    X.loc[7, "b"] = np.nan
    with pytest.raises(ValueError, match=r"column 'b' has a missing value \(NaN\) at row 7"):
        make().fit(X[["a", "b"]], y)
    with pytest.raises(ValueError, match=r"column 1 has a missing value \(NaN\) at row 7"):
        make().fit(X[["a", "b"]].to_numpy(), y)
    with pytest.raises(ValueError, match="linear feature 'b' has missing"):
        make(linear_features=["b"]).fit(X[["a", "b"]], y)
    X.loc[7, "b"], X.loc[9, "g"] = 0.0, None
    with pytest.raises(ValueError, match="categorical column 'g' contains missing values"):
        make(categorical_features=["g"]).fit(X, y)
    fitted = make().fit(X[["a", "b"]], y)
    X.loc[4, "a"] = np.nan
    with pytest.raises(ValueError, match=r"column 'a' has a missing value \(NaN\) at row 4"):
        fitted.predict(X[["a", "b"]])
