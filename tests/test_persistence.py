"""Persistence: fitted objects survive pickle and joblib, and stored models keep loading.

What is proved here:

* A pickle or joblib round trip (and ``copy.deepcopy``) of every fitted object —
  ``BinarsityGLM`` (each family), ``BinarsityClassifier``, ``Binarizer``, the
  ``glm()`` model, its results at one λ, path results, CV results and the
  unpenalised refit — gives bitwise-identical predictions, coefficients and reports,
  and the loaded estimators can be refitted.
* **A model saved by an earlier version loads in this one.** ``tests/data`` keeps the
  fitted objects written by ``tests/data/make_stored_model.py`` for each stored
  release: the pickle must load and predict what it predicted when it was written,
  and the version-independent JSON twin must reproduce those predictions from the
  documented rules alone (cut points, levels, intercept; NumPy only).
"""

from __future__ import annotations

import copy
import io
import json
import pickle
import sys
from pathlib import Path

import joblib
import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy import special

from binarsity_stats import Binarizer, BinarsityClassifier, BinarsityGLM, glm

DATA = Path(__file__).resolve().parent / "data"
STORED = sorted(DATA.glob("stored_model_v*.pkl"))


# ------------------------------------------------------------------ round trips


def _pickle(obj):
    return pickle.loads(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))


def _joblib(obj):
    buf = io.BytesIO()
    joblib.dump(obj, buf)
    buf.seek(0)
    return joblib.load(buf)


ROUND_TRIPS = {"pickle": _pickle, "joblib": _joblib, "deepcopy": copy.deepcopy}


def _frame(n: int, seed: int, family: str = "binomial") -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x1 = rng.normal(size=n)
    x2 = rng.integers(0, 30, size=n).astype(float)
    x3 = rng.gamma(2.0, size=n)
    x3[rng.random(n) < 0.1] = np.nan
    g = rng.choice(["a", "b", "c"], size=n)
    z = rng.normal(size=n)
    exposure = rng.uniform(0.5, 3.0, size=n)
    eta = 0.8 * (x1 > 0.3) - 0.6 * (x2 > 20) + 0.4 * (g == "b") + 0.3 * z
    if family == "binomial":
        y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    elif family == "gaussian":
        y = eta + rng.normal(size=n)
    else:
        y = rng.poisson(exposure * np.exp(eta - 0.5)).astype(float)
    return pd.DataFrame({"y": y, "x1": x1, "x2": x2, "x3": x3, "g": g, "z": z,
                         "exposure": exposure})  # fmt: skip


FEATURES = ["x1", "x2", "x3"]
TRAIN = {fam: _frame(250, 3, fam) for fam in ("gaussian", "binomial", "poisson")}
NEW = _frame(60, 4)


@pytest.mark.parametrize("how", sorted(ROUND_TRIPS))
@pytest.mark.parametrize("family", ["gaussian", "binomial", "poisson"])
@pytest.mark.parametrize("solver", ["cd", "fista"])
def test_estimator_round_trip_predicts_identically(family, solver, how):
    df = TRAIN[family]
    w = np.linspace(0.5, 2.0, len(df))
    est = BinarsityGLM(family=family, lam=2e-3, n_bins=8, missing="separate", solver=solver)
    est.fit(df[FEATURES], df["y"], sample_weight=w, offset=0.1 * df["z"])
    again = ROUND_TRIPS[how](est)
    off = 0.1 * NEW["z"]
    assert_array_equal(
        again.predict(NEW[FEATURES], offset=off), est.predict(NEW[FEATURES], offset=off)
    )
    assert_array_equal(again.decision_function(NEW[FEATURES]), est.decision_function(NEW[FEATURES]))
    for attr in ("coef_", "block_ptr_", "penalty_weights_", "bin_counts_", "feature_names_in_"):
        assert_array_equal(getattr(again, attr), getattr(est, attr))
    assert again.intercept_ == est.intercept_ and again.objective_ == est.objective_
    assert again.get_params() == est.get_params()
    # a loaded estimator is a working estimator: refitting gives the same fit
    again.fit(df[FEATURES], df["y"], sample_weight=w, offset=0.1 * df["z"])
    assert_array_equal(again.coef_, est.coef_)


@pytest.mark.parametrize("how", sorted(ROUND_TRIPS))
def test_classifier_and_binarizer_round_trips(how):
    df = TRAIN["binomial"]
    labels = np.where(df["y"] > 0, "event", "none")
    clf = BinarsityClassifier(lam=2e-3, n_bins=8, missing="separate").fit(df[FEATURES], labels)
    again = ROUND_TRIPS[how](clf)
    assert_array_equal(again.classes_, clf.classes_)
    assert_array_equal(again.predict(NEW[FEATURES]), clf.predict(NEW[FEATURES]))
    assert_array_equal(again.predict_proba(NEW[FEATURES]), clf.predict_proba(NEW[FEATURES]))

    b = Binarizer(n_bins=9, missing="separate").fit(df[FEATURES], sample_weight=df["exposure"])
    b2 = ROUND_TRIPS[how](b)
    assert_array_equal(b2.transform(NEW[FEATURES]), b.transform(NEW[FEATURES]))
    assert_array_equal(b2.n_bins_, b.n_bins_)
    for e1, e2 in zip(b.edges_, b2.edges_, strict=True):
        assert_array_equal(e1, e2)


@pytest.mark.parametrize("how", sorted(ROUND_TRIPS))
def test_estimator_fitted_on_an_array_round_trips(how):
    df = TRAIN["gaussian"]
    X = df[FEATURES].to_numpy()
    est = BinarsityGLM(n_bins=[4, 8, 5], missing="separate", lam=1e-3).fit(X, df["y"])
    again = ROUND_TRIPS[how](est)
    assert not hasattr(again, "feature_names_in_")
    assert_array_equal(
        again.predict(NEW[FEATURES].to_numpy()), est.predict(NEW[FEATURES].to_numpy())
    )


def test_unfitted_estimator_round_trip_fits_identically():
    df = TRAIN["poisson"]
    est = BinarsityGLM(family="poisson", n_bins=[5, 6, 7], missing="separate")
    a = _pickle(est).fit(df[FEATURES], df["y"])
    b = est.fit(df[FEATURES], df["y"])
    assert_array_equal(a.coef_, b.coef_)


FORMULA = "y ~ bin(x1, 8) + bin(x2, 5) + bin(x3, 6) + C(g) + z + offset(log(exposure))"


@pytest.fixture(scope="module")
def formula_fits():
    df = TRAIN["poisson"]
    model = glm(FORMULA, df, family="poisson", missing="separate",
                sample_weight=np.linspace(0.5, 2.0, len(df)))  # fmt: skip
    res = model.fit(lam=1e-3)
    _ = res.params, res.summary()  # cached state is pickled too
    path = model.fit_path(n_lambdas=5)
    cv = model.fit_cv(folds=3, n_lambdas=5, random_state=0)
    return model, res, path, cv


@pytest.mark.parametrize("how", sorted(ROUND_TRIPS))
def test_formula_objects_round_trip_predict_identically(formula_fits, how):
    model, res, path, cv = formula_fits
    checks = [
        (model, lambda m: m.spec.transform(NEW).codes),
        (res, lambda r: r.predict(NEW)),
        (res, lambda r: r.predict(NEW, type="link")),
        (res, lambda r: r.params.to_numpy()),
        (res, lambda r: r.cut_points().to_numpy()),
        (path, lambda p: np.array([p[i].predict(NEW) for i in range(len(p))])),
        (path, lambda p: p.coefs.to_numpy()),
        (cv, lambda c: c.best_.predict(NEW)),
        (cv, lambda c: np.r_[c.mean, c.se, c.lam_min, c.lam_1se]),
    ]
    for obj, get in checks:
        assert_array_equal(get(ROUND_TRIPS[how](obj)), get(obj))
    assert str(ROUND_TRIPS[how](res).summary()) == str(res.summary())
    # a loaded model fits again, to the same result
    again = ROUND_TRIPS[how](model).fit(lam=1e-3)
    assert_array_equal(again.coef, res.coef)
    assert again.intercept == res.intercept


def test_refit_results_round_trip(formula_fits):
    _, res, _, _ = formula_fits
    refit = res.refit()
    for how in ROUND_TRIPS.values():
        again = how(refit)
        assert_array_equal(again.params.to_numpy(), refit.params.to_numpy())
        assert_array_equal(again.bse.to_numpy(), refit.bse.to_numpy())


def test_pickle_of_a_fitted_estimator_does_not_grow_with_the_training_rows():
    df = pd.concat([TRAIN["binomial"]] * 40, ignore_index=True)
    est = BinarsityGLM(family="binomial", n_bins=8, missing="separate").fit(df[FEATURES], df["y"])
    size = len(pickle.dumps(est))
    assert size < 20_000, size


# ------------------------------------------------------------------ stored models


def _load_json(path: Path) -> dict:
    with open(path) as fh:
        doc = json.load(fh)
    assert doc["format"] == "binarsity_stats.stored_model"
    assert doc["format_version"] == 1
    return doc


def _column(newdata: dict, name: str) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in newdata[name]], dtype=np.float64)


def _codes(x: np.ndarray, edges: list, has_missing: bool) -> np.ndarray:
    """The documented coding rule, in NumPy: right-closed bins, the missing level last."""
    edges = np.asarray(edges, dtype=np.float64)
    codes = np.searchsorted(edges, x, side="left")
    nan = np.isnan(x)
    assert has_missing or not nan.any()
    codes[nan] = len(edges) + 1
    return codes


MEAN = {"gaussian": lambda e: e, "binomial": special.expit, "poisson": np.exp}


def _predict_estimator(spec: dict, newdata: dict, offset=None) -> np.ndarray:
    eta = np.full(len(newdata[spec["features"][0]["column"]]), spec["intercept"])
    if offset is not None:
        eta += offset
    for feat in spec["features"]:
        codes = _codes(_column(newdata, feat["column"]), feat["edges"], feat["has_missing_level"])
        eta += np.asarray(feat["levels"])[codes]
    return eta


def _predict_results(spec: dict, newdata: dict) -> np.ndarray:
    n = len(newdata["exposure"])
    assert spec["offset"] == "log(exposure)"
    eta = spec["intercept"] + np.log(_column(newdata, "exposure"))
    for block in spec["blocks"]:
        if block["kind"] == "bin":
            codes = _codes(_column(newdata, block["column"]), block["edges"],
                           block["has_missing_level"])  # fmt: skip
        else:
            lookup = {c: k for k, c in enumerate(block["categories"])}
            codes = np.array([lookup[v] for v in newdata[block["column"]]])
        eta += np.asarray(block["levels"])[codes]
    for term in spec["dense"]:
        eta += term["coef"] * _column(newdata, term["column"])
    assert eta.shape == (n,)
    return eta


def test_stored_models_exist_for_this_release():
    import binarsity_stats

    versions = [p.stem.removeprefix("stored_model_v") for p in STORED]
    assert versions, "no stored model under tests/data"
    for p in STORED:
        assert p.with_suffix(".json").exists(), f"{p.name} has no JSON twin"
    # the generator still runs against this version (it is what the next release uses)
    sys.path.insert(0, str(DATA))
    try:
        import make_stored_model as maker
    finally:
        sys.path.remove(str(DATA))
    train = maker.make_data(160, seed=2024)
    new = maker.make_data(40, seed=7)
    models = maker.fit_models(train)
    doc = maker.to_json(models, new, maker.predictions(models, new))
    assert doc["package_version"] == binarsity_stats.__version__
    json.dumps(doc, allow_nan=False)


@pytest.mark.parametrize("path", STORED, ids=[p.name for p in STORED])
def test_stored_pickle_loads_and_predicts_as_when_saved(path):
    with open(path, "rb") as fh:
        stored = pickle.load(fh)
    models, new, expected = stored["models"], stored["newdata"], stored["predictions"]
    X = new[FEATURES]
    # Same rules, possibly a different summation order in a later version: 1e-12.
    tol = {"rtol": 1e-12, "atol": 1e-14}
    assert_allclose(models["estimator"].predict(X, offset=new["off"]), expected["estimator"], **tol)
    assert_allclose(models["estimator"].decision_function(X, offset=new["off"]),
                    expected["estimator_link"], **tol)  # fmt: skip
    assert_allclose(
        models["classifier"].predict_proba(X)[:, 1], expected["classifier_proba"], **tol
    )
    assert_array_equal(models["classifier"].predict(X), expected["classifier_labels"])
    assert_array_equal(models["binarizer"].transform(X), expected["binarizer"])
    assert_allclose(models["results"].predict(new), expected["results"], **tol)
    assert_allclose(models["results"].predict(new, type="link"), expected["results_link"], **tol)
    # the loaded objects still do everything a fresh fit does
    assert "poisson" in str(models["results"].summary()).lower()
    assert "cut" in models["results"].cut_points().columns


@pytest.mark.parametrize("path", STORED, ids=[p.name for p in STORED])
def test_stored_json_reproduces_the_predictions_from_the_documented_rules(path):
    doc = _load_json(path.with_suffix(".json"))
    new, expected, models = doc["newdata"], doc["predictions"], doc["models"]
    tol = {"rtol": 1e-12, "atol": 1e-14}

    est = models["estimator"]
    eta = _predict_estimator(est, new, offset=_column(new, "off"))
    assert_allclose(eta, expected["estimator_link"], **tol)
    assert_allclose(MEAN[est["family"]](eta), expected["estimator"], **tol)

    clf = models["classifier"]
    eta = _predict_estimator(clf, new)
    assert_allclose(special.expit(eta), expected["classifier_proba"], **tol)
    assert_array_equal(np.asarray(clf["classes"])[(eta > 0).astype(int)],
                       expected["classifier_labels"])  # fmt: skip

    codes = np.column_stack([
        _codes(_column(new, f["column"]), f["edges"], f["has_missing_level"])
        for f in models["binarizer"]["features"]
    ])  # fmt: skip
    assert_array_equal(codes, expected["binarizer"])

    res = models["results"]
    eta = _predict_results(res, new)
    assert_allclose(eta, expected["results_link"], **tol)
    assert_allclose(MEAN[res["family"]](eta), expected["results"], **tol)


@pytest.mark.parametrize("path", STORED, ids=[p.name for p in STORED])
def test_stored_json_and_pickle_describe_the_same_models(path):
    """The JSON is a faithful export: the pickle's objects give the same numbers."""
    doc = _load_json(path.with_suffix(".json"))
    with open(path, "rb") as fh:
        models = pickle.load(fh)["models"]
    est, spec = models["estimator"], doc["models"]["estimator"]
    assert spec["intercept"] == est.intercept_
    assert_array_equal(np.concatenate([f["levels"] for f in spec["features"]]), est.coef_)
    for f, edges in zip(spec["features"], est.binarizer_.edges_, strict=True):
        assert_array_equal(f["edges"], edges)
    res, rspec = models["results"], doc["models"]["results"]
    assert rspec["formula"] == res.model.formula and rspec["intercept"] == res.intercept
    assert_array_equal(np.concatenate([b["levels"] for b in rspec["blocks"]]), res.coef)


def _maker():
    sys.path.insert(0, str(DATA))
    try:
        import make_stored_model as maker
    finally:
        sys.path.remove(str(DATA))
    return maker


@pytest.mark.parametrize("path", STORED, ids=[p.name for p in STORED])
def test_stored_json_models_load_through_from_spec(path):
    """The stored models move onto the package's one model description: a version-1
    file (v0.1.0) is upgraded to ``to_spec()`` documents, later files hold them; either
    way ``from_spec`` predicts what the models predicted when they were stored."""
    from binarsity_stats import from_spec

    with open(path.with_suffix(".json")) as fh:
        doc = json.load(fh)
    specs = _maker().upgrade_v1(doc) if doc["format_version"] == 1 else doc["models"]
    new = pd.DataFrame({k: _column(doc["newdata"], k) if k not in ("g", "label") else v
                        for k, v in doc["newdata"].items()})  # fmt: skip
    expected = doc["predictions"]
    tol = {"rtol": 1e-12, "atol": 1e-14}
    X = new[FEATURES]
    est = from_spec(json.dumps(specs["estimator"]))
    assert_allclose(est.predict(X, type="link", offset=new["off"]), expected["estimator_link"],
                    **tol)  # fmt: skip
    assert_allclose(est.predict(X, offset=new["off"]), expected["estimator"], **tol)
    clf = from_spec(specs["classifier"])
    assert_allclose(clf.predict(X), expected["classifier_proba"], **tol)
    assert_array_equal(clf.predict(X, type="class"), expected["classifier_labels"])
    res = from_spec(specs["results"])
    assert_allclose(res.predict(new, type="link"), expected["results_link"], **tol)
    assert_allclose(res.predict(new), expected["results"], **tol)


def test_this_versions_json_holds_model_descriptions_that_predict_like_the_objects():
    from binarsity_stats import from_spec

    maker = _maker()
    train, new = maker.make_data(160, seed=2024), maker.make_data(40, seed=7)
    models = maker.fit_models(train)
    doc = json.loads(json.dumps(maker.to_json(models, new, maker.predictions(models, new))))
    assert doc["format_version"] == 2
    X = new[FEATURES]
    est = from_spec(doc["models"]["estimator"])
    assert_array_equal(est.predict(X, offset=new["off"]),
                       models["estimator"].predict(X, offset=new["off"]))  # fmt: skip
    assert_array_equal(from_spec(doc["models"]["results"]).predict(new),
                       models["results"].predict(new))  # fmt: skip
