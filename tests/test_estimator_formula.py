"""The estimators against the formula layer: the same model gives the same numbers.

What is proved here: at its defaults an estimator fits what ``glm(...).fit()`` fits on
the same data (``lam="theory"``, bitwise), and its model description is valid at
those defaults.
"""

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_array_equal

from binarsity_stats import BinarsityClassifier, BinarsityGLM, from_spec, glm

FAMILIES = ["gaussian", "binomial", "poisson"]


def _frame(family, n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    X["c"] = 0.9 * X["a"] + 0.1 * X["c"]  # near-collinear with a
    eta = np.clip(X["a"], -1, 1) + 1.0 * (X["b"] > 0.5)
    if family == "binomial":
        y = rng.binomial(1, 1 / (1 + np.exp(-eta))).astype(float)
    elif family == "poisson":
        y = rng.poisson(np.exp(eta - 0.5)).astype(float)
    else:
        y = 50.0 * (eta + rng.normal(size=n))  # on a scale far from 1
    sw = rng.uniform(0.5, 2.0, n)
    off = rng.normal(scale=0.2, size=n) if family != "gaussian" else None
    return X, np.asarray(y), sw, off


@pytest.mark.parametrize("family", FAMILIES)
def test_the_default_lambda_is_the_formula_default(family):
    X, y, sw, off = _frame(family)
    est = BinarsityGLM(family=family, n_bins=20)
    assert est.get_params()["lam"] == "theory"
    est.fit(X, y, sample_weight=sw, offset=off)
    res = glm("y ~ bin(a) + bin(b) + bin(c)", X.assign(y=y), family=family, n_bins=20,
              sample_weight=sw, offset=off).fit()  # fmt: skip
    assert est.lam_ == res.lam
    assert_array_equal(est.coef_, res.coef)
    assert est.intercept_ == res.intercept


def test_the_theory_lambda_follows_the_family_and_the_scale_of_y():
    # why no fixed default: the λ that theory gives differs by orders of magnitude
    X, y, _, _ = _frame("gaussian")
    lam_gauss = BinarsityGLM(n_bins=20).fit(X, y).lam_
    lam_small = BinarsityGLM(n_bins=20).fit(X, y / 1000).lam_
    lam_binom = BinarsityClassifier(n_bins=20).fit(X, y > 0).lam_
    assert lam_gauss / lam_small == pytest.approx(1000, rel=1e-6)
    assert lam_gauss / lam_binom > 100
    assert BinarsityClassifier().get_params()["lam"] == "theory"


@pytest.mark.parametrize("est", [BinarsityGLM(n_bins=10), BinarsityClassifier(n_bins=10)])
def test_to_spec_at_the_default_lambda_records_the_fitted_lambda(est):
    X, y, _, _ = _frame("binomial")
    est.fit(X, y)
    spec = est.to_spec()
    assert spec["lam"] == est.lam_
    assert_array_equal(from_spec(spec).predict(X, type="link"), est.decision_function(X))


# -- feature kinds: categorical_features / linear_features ---------------------------------


def _mixed(family, n=500, seed=1):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({
        "a": rng.normal(size=n),
        "g": rng.choice(["u", "v", "w"], n, p=[0.5, 0.3, 0.2]),
        "z": rng.standard_t(3, size=n),  # heavy-tailed linear column
        "b": np.round(rng.normal(size=n), 1),  # tied
    })  # fmt: skip
    eta = np.clip(X["a"], -1, 1) + 0.7 * (X["g"] == "v") + 0.2 * X["z"].clip(-3, 3)
    if family == "binomial":
        y = rng.binomial(1, 1 / (1 + np.exp(-eta))).astype(float)
    elif family == "poisson":
        y = rng.poisson(np.exp(eta - 0.5)).astype(float)
    else:
        y = eta + rng.normal(size=n)
    return X, np.asarray(y), rng.uniform(0.5, 2.0, n)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_feature_kinds_fit_what_the_formula_fits(family, fit_intercept):
    X, y, sw = _mixed(family)
    off = np.random.default_rng(2).normal(scale=0.1, size=len(y))
    est = BinarsityGLM(family=family, n_bins=20, categorical_features=["g"], linear_features=[2],
                       fit_intercept=fit_intercept).fit(X, y, sample_weight=sw, offset=off)  # fmt: skip
    formula = "y ~ bin(a) + C(g) + z + bin(b)" + ("" if fit_intercept else " - 1")
    res = glm(formula, X.assign(y=y), family=family, n_bins=20, sample_weight=sw,
              offset=off).fit()  # fmt: skip
    assert list(est.feature_kinds_) == ["bin", "categorical", "linear", "bin"]
    assert est.lam_ == res.lam
    assert_array_equal(est.coef_, res.coef)
    assert_array_equal(est.linear_coef_, res.dense_coef)
    assert est.intercept_ == res.intercept
    assert_array_equal(est.predict(X, offset=off), res.predict(X, offset=off))


def test_names_positions_masks_and_auto_select_the_same_features():
    X, y, _ = _mixed("gaussian")
    ref = BinarsityGLM(n_bins=10, categorical_features=["g"], linear_features=["z"]).fit(X, y)
    Xc = X.assign(g=X["g"].astype("category"))
    for est, data in [
        (BinarsityGLM(n_bins=10, categorical_features=[1], linear_features=[-2]), X),
        (BinarsityGLM(n_bins=10, categorical_features=[False, True, False, False],
                      linear_features=np.array([False, False, True, False])), X),
        (BinarsityGLM(n_bins=10, categorical_features="auto", linear_features=["z"]), Xc),
    ]:  # fmt: skip
        est.fit(data, y)
        assert list(est.feature_kinds_) == list(ref.feature_kinds_)
        assert_array_equal(est.coef_, ref.coef_)
        assert_array_equal(est.linear_coef_, ref.linear_coef_)
    # an array: the same fit by position; text levels survive in an object array
    est = BinarsityGLM(n_bins=10, categorical_features=[1], linear_features=[2])
    est.fit(X.to_numpy(dtype=object), y)
    assert_array_equal(est.coef_, ref.coef_)
    assert not hasattr(est, "feature_names_in_")


def test_one_hot_dummies_of_a_column_transformer_are_not_binned():
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    X, y, _ = _mixed("binomial")
    ct = ColumnTransformer(
        [("oh", OneHotEncoder(drop="first", sparse_output=False), ["g"]),
         ("num", "passthrough", ["a", "z", "b"])]
    ).set_output(transform="pandas")  # fmt: skip
    dummies = ["oh__g_v", "oh__g_w"]
    pipe = make_pipeline(ct, BinarsityClassifier(n_bins=20, categorical_features=dummies,
                                                 linear_features=["num__z"]))  # fmt: skip
    pipe.fit(X, y)
    clf = pipe[-1]
    assert list(clf.feature_names_in_) == dummies + ["num__a", "num__z", "num__b"]
    assert list(clf.feature_kinds_) == ["categorical", "categorical", "bin", "linear", "bin"]
    assert [len(c) for c in clf.categories_] == [2, 2]  # 0/1, not 20 bins
    # the same model as C(g) in a formula: the same predictions
    res = glm("y ~ C(g) + bin(a) + z + bin(b)", X.assign(y=y), family="binomial",
              n_bins=20).fit()  # fmt: skip
    assert clf.lam_ == res.lam
    np.testing.assert_allclose(pipe.predict_proba(X)[:, 1], res.predict(X), rtol=1e-6)
    assert set(clf.cut_points()["feature"]) <= {"num__a", "num__b"}


def test_cut_points_is_a_table_with_feature_names():
    X, y, _ = _mixed("gaussian")
    est = BinarsityGLM(n_bins=10, categorical_features=["g"], lam=0.01).fit(X, y)
    cuts = est.cut_points()
    assert list(cuts.columns) == ["feature", "cut", "jump"]
    res = glm("y ~ bin(a) + C(g) + bin(z) + bin(b)", X.assign(y=y), n_bins=10).fit(lam=0.01)
    ref = res.cut_points()
    assert list(cuts["feature"]) == list(ref["column"])
    assert_array_equal(cuts["cut"], ref["cut"])
    assert_array_equal(cuts["jump"], ref["jump"])
    arr = BinarsityGLM(n_bins=10, lam=0.01).fit(X[["a", "b"]].to_numpy(), y).cut_points()
    assert set(arr["feature"]) <= {"x0", "x1"}


def test_feature_kinds_round_trip_pickle_clone_and_spec():
    import json
    import pickle

    from sklearn.base import clone

    X, y, _ = _mixed("poisson")
    for data in (X, X.to_numpy(dtype=object)):
        est = BinarsityGLM(family="poisson", n_bins=10, categorical_features=[1],
                           linear_features=[2], missing="separate").fit(data, y)  # fmt: skip
        again = pickle.loads(pickle.dumps(est))
        assert_array_equal(again.predict(data), est.predict(data))
        assert clone(est).get_params() == est.get_params()
        spec = json.loads(json.dumps(est.to_spec()))
        assert [t["kind"] for t in spec["terms"]] == ["bin", "categorical", "bin", "linear"]
        assert_array_equal(from_spec(spec).predict(data), est.predict(data))


@pytest.mark.parametrize(
    ("kw", "data", "match"),
    [
        ({"categorical_features": ["nope"]}, "frame", r"categorical_features names column\(s\) \['nope'\]"),
        ({"categorical_features": ["g"]}, "array", r"categorical_features names columns .* no column names"),
        ({"linear_features": [7]}, "frame", r"linear_features has position\(s\) outside"),
        ({"linear_features": [True, False]}, "frame", r"linear_features as a boolean mask needs one entry per feature \(4\)"),
        ({"categorical_features": "all"}, "frame", r"categorical_features must be None, 'auto'"),
        ({"categorical_features": [1], "linear_features": [1]}, "frame", r"column 'g' is in both"),
        ({"linear_features": ["g"]}, "frame", r"linear feature 'g'"),
    ],
)  # fmt: skip
def test_bad_feature_kinds_are_named(kw, data, match):
    X, y, _ = _mixed("gaussian")
    X = X if data == "frame" else X.to_numpy(dtype=object)
    with pytest.raises((ValueError, TypeError), match=match):
        BinarsityGLM(n_bins=10, **kw).fit(X, y)


def test_categorical_levels_missing_and_unseen_are_named():
    X, y, _ = _mixed("gaussian")
    est = BinarsityGLM(n_bins=10, categorical_features=["g"]).fit(X, y)
    with pytest.raises(ValueError, match=r"column 'g' has level\(s\) not seen .*\['zz'\]"):
        est.predict(X.assign(g="zz"))
    Xn = X.assign(g=X["g"].where(np.arange(len(X)) % 7 != 0, None))
    with pytest.raises(ValueError, match=r"categorical column 'g' contains missing values"):
        BinarsityGLM(n_bins=10, categorical_features=["g"]).fit(Xn, y)
    est = BinarsityGLM(n_bins=10, categorical_features=["g"], missing="separate").fit(Xn, y)
    assert est.categorical_missing_.tolist() == [True]
    res = glm("y ~ bin(a) + C(g) + bin(z) + bin(b)", Xn.assign(y=y), n_bins=10,
              missing="separate").fit()  # fmt: skip
    assert_array_equal(est.coef_, res.coef)
    with pytest.raises(ValueError, match=r"linear feature 'z' has missing or infinite"):
        BinarsityGLM(n_bins=10, linear_features=["z"], categorical_features=["g"]).fit(
            X.assign(z=np.nan), y
        )


# -- the formula layer's results of an estimator ---------------------------------------------


def _tables_equal(a, b):
    from pandas.testing import assert_frame_equal

    assert a.as_text() == b.as_text()
    assert len(a.tables) == len(b.tables)
    for ta, tb in zip(a.tables, b.tables, strict=True):
        assert_frame_equal(ta, tb)


@pytest.mark.parametrize("family", FAMILIES)
def test_estimator_tables_are_the_formula_tables(family):
    from pandas.testing import assert_frame_equal

    X, y, sw = _mixed(family)
    off = np.random.default_rng(3).normal(scale=0.1, size=len(y))
    est = BinarsityGLM(family=family, n_bins=20, categorical_features=["g"],
                       linear_features=["z"]).fit(X, y, sample_weight=sw, offset=off)  # fmt: skip
    res = glm("y ~ bin(a) + C(g) + z + bin(b)", X.assign(y=y), family=family, n_bins=20,
              sample_weight=sw, offset=off).fit()  # fmt: skip
    mine = est.results(X, y, sample_weight=sw, offset=off)
    assert mine.lam_source == res.lam_source
    _tables_equal(est.summary(X, y, sample_weight=sw, offset=off), res.summary())
    _tables_equal(mine.summary(sort="importance"), res.summary(sort="importance"))
    assert_frame_equal(
        est.shape_functions(X, y, sw, off, merge=True), res.shape_functions(merge=True)
    )
    assert_frame_equal(mine.cut_points(), res.cut_points())
    assert_frame_equal(mine.term_table(), res.term_table())
    assert mine.to_spec()["terms"] == res.to_spec()["terms"]
    # the bootstrap: the same resamples, bands and cut-point frequencies
    boot = est.bootstrap(X, y, sw, off, n_boot=8, random_state=1)
    ref = res.bootstrap(n_boot=8, random_state=1)
    assert_frame_equal(boot.shape_bands(), ref.shape_bands())
    assert_frame_equal(boot.cut_frequencies(), ref.cut_frequencies())
    assert_frame_equal(boot.results.cut_points(), res.cut_points())
    assert_array_equal(boot.predict(X, interval=0.9), ref.predict(X, interval=0.9))


def test_classifier_and_array_estimators_give_formula_results():
    from pandas.testing import assert_frame_equal

    X, y, _ = _mixed("binomial")
    labels = np.where(y == 1, "yes", "no")
    clf = BinarsityClassifier(n_bins=10, categorical_features=["g"], fit_intercept=False)
    clf.fit(X, labels)
    res = glm("y ~ bin(a) + C(g) + bin(z) + bin(b) - 1", X.assign(y=labels), family="binomial",
              n_bins=10).fit()  # fmt: skip
    _tables_equal(clf.summary(X, labels), res.summary())
    assert "'yes' (vs 'no')" in clf.summary(X, labels).as_text()  # the event level named
    with pytest.raises(ValueError, match="classes"):
        clf.results(X, np.where(y == 1, "a", "b"))
    # an array: columns x0, x1, ... as in the estimator's to_spec
    A = X[["a", "b"]].to_numpy()
    est = BinarsityGLM(family="binomial", n_bins=[8, 12]).fit(A, y)
    ref = glm("y ~ bin(x0, 8) + bin(x1, 12)", pd.DataFrame(A, columns=["x0", "x1"]).assign(y=y),
              family="binomial").fit()  # fmt: skip
    assert_frame_equal(est.shape_functions(A, y), ref.shape_functions())


def test_results_refuse_data_other_than_the_training_data():
    X, y, sw = _mixed("gaussian")
    est = BinarsityGLM(n_bins=10, categorical_features=["g"]).fit(X, y, sample_weight=sw)
    with pytest.raises(ValueError, match="rows in the bins of feature 'a' differ"):
        est.results(X.iloc[:300], y[:300], sample_weight=sw[:300])
    with pytest.raises(ValueError, match="not the data BinarsityGLM was fitted on"):
        est.results(X, y)  # the weights are part of the training data
    # another y (or offset) on the same X: the fitted solution's objective differs
    with pytest.raises(ValueError, match=r"y, offset or sample_weight are not the data"):
        est.results(X, y[::-1], sample_weight=sw)
    with pytest.raises(ValueError, match=r"y, offset or sample_weight are not the data"):
        est.results(X, y, sample_weight=sw, offset=np.full(len(y), 0.5))
    with pytest.raises(ValueError, match="not fitted"):
        BinarsityGLM().results(X, y)


def test_estimator_plot_shapes_draws_the_formula_plot():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    X, y, _ = _mixed("poisson")
    est = BinarsityGLM(family="poisson", n_bins=10, linear_features=["z"],
                       categorical_features=["g"]).fit(X, y)  # fmt: skip
    res = glm("y ~ bin(a) + C(g) + z + bin(b)", X.assign(y=y), family="poisson", n_bins=10).fit()
    fig = est.plot_shapes(X, y, scale="response")
    ref = res.plot_shapes(scale="response")
    got = [(a.get_title(), a.get_xlabel(), a.get_ylabel()) for a in fig.axes]
    want = [(a.get_title(), a.get_xlabel(), a.get_ylabel()) for a in ref.axes]
    assert got == want
    for a, b in zip(fig.axes, ref.axes, strict=True):
        for la, lb in zip(a.get_lines(), b.get_lines(), strict=True):
            assert_array_equal(la.get_ydata(), lb.get_ydata())
    plt.close("all")


def test_estimator_report_is_the_formula_report():
    pytest.importorskip("matplotlib")
    import re

    X, y, sw = _mixed("binomial")
    labels = np.where(y == 1, "yes", "no")
    clf = BinarsityClassifier(n_bins=10, categorical_features=["g"], linear_features=["z"])
    clf.fit(X.iloc[:400], labels[:400], sample_weight=sw[:400])
    res = glm("y ~ bin(a) + C(g) + z + bin(b)", X.iloc[:400].assign(y=labels[:400]),
              family="binomial", n_bins=10, sample_weight=sw[:400]).fit()  # fmt: skip
    page = clf.report(X.iloc[:400], labels[:400], sample_weight=sw[:400], new=X.iloc[400:],
                      new_y=labels[400:], title="t")  # fmt: skip
    ref = res.report(new=X.iloc[400:], y=y[400:], title="t")  # 0/1: see NOTES (labels fail)

    def text(html):  # the page without its images and its time stamp
        html = re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "", html)
        return re.sub(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC", "", html)

    assert text(page) == text(ref)
    with pytest.raises(ValueError, match="new_y must hold"):
        clf.report(X.iloc[:400], labels[:400], sample_weight=sw[:400], new=X.iloc[400:],
                   new_y=np.full(100, "maybe"))  # fmt: skip


def test_per_feature_n_bins_with_feature_kinds():
    X, y, _ = _mixed("gaussian")
    one_each = BinarsityGLM(n_bins=[6, 0, 0, 9], categorical_features=["g"], linear_features=["z"])
    binned_only = BinarsityGLM(n_bins=[6, 9], categorical_features=["g"], linear_features=["z"])
    a, b = one_each.fit(X, y), binned_only.fit(X, y)
    assert_array_equal(a.coef_, b.coef_)
    assert a.binarizer_.n_bins_.tolist() == [6, 9]
    res = glm("y ~ bin(a, 6) + C(g) + z + bin(b, 9)", X.assign(y=y)).fit()
    assert_array_equal(a.coef_, res.coef)
    from pandas.testing import assert_frame_equal

    assert_frame_equal(a.shape_functions(X, y), res.shape_functions())
