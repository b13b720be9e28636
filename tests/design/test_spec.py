"""One model representation: ``to_spec()`` / ``from_spec()`` (``binarsity_stats.design._spec``).

What is proved here: for every kind of term — ``bin()`` with and without a missing
level, ``bin()`` of an expression, ``C()`` (with a missing level; an unseen level is
refused as by the fitted model), numeric and transformed linear terms (``x``,
``log(x)``, ``x:z``, ``I(z ** 2)``; a numeric term interacted with a categorical
column, ``z:g``, ``z*g``), ``offset()`` terms and an offset column, a model
without intercept (``- 1``), a statsmodels Tweedie family — and for the estimators
(binomial, gaussian, poisson, the classifier; fitted on a DataFrame or an array), the
description survives ``json.dumps``/``json.loads`` and the rebuilt model predicts
**bitwise** what the fitted object predicts (mean, link, class labels). The document
is versioned, its family carries its parameters, and bad documents are refused by name.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from _export_data import export_frame
from numpy.testing import assert_array_equal

from binarsity_stats import BinarsityClassifier, BinarsityGLM, SpecModel, from_spec, glm
from binarsity_stats.design._spec import SPEC_FORMAT, SPEC_VERSION

TRAIN, NEW = export_frame(300, 0), export_frame(80, 1)
NEW.loc[0, "x1"], NEW.loc[1, "x1"], NEW.loc[2, "x2"] = 1e6, -1e6, 1e-9  # out of range

FORMULAS = {
    "bin": ("yg ~ bin(x1, 8) + bin(x2, 6)", "gaussian", {}),
    "bin with missing level": ("yg ~ bin(x1, 5) + bin(x3, 6)", "gaussian", {"missing": "separate"}),
    "bin of an expression": ("y ~ bin(log(x2), 6)", "poisson", {}),
    "C()": ("yb ~ bin(x1, 6) + C(g)", "binomial", {}),
    "C() with missing level": ("yb ~ C(h) + bin(x1, 4)", "binomial", {"missing": "separate"}),
    "numeric linear": ("yg ~ bin(x1, 5) + z + x2", "gaussian", {}),
    "transformed linear": ("yg ~ bin(x1, 5) + log(x2) + x1:z + I(z ** 2)", "gaussian", {}),
    "offset terms": ("y ~ bin(x1, 6) + C(g) + z + offset(log(exposure))", "poisson", {}),
    "offset column": ("y ~ bin(x1, 6) + offset(log(exposure))", "poisson", {"offset": "off"}),
    "no intercept": ("yg ~ bin(x1, 6) + C(g) + z - 1", "gaussian", {}),
    "weights": ("yb ~ bin(x1, 6) + bin(x2, 5)", "binomial", {"sample_weight": "exposure"}),
    # a categorical factor of an interaction: one dummy column per level (full rank when
    # g has no main effect, treatment coded beside it)
    "numeric x categorical": ("yg ~ bin(x1, 5) + z:g", "gaussian", {}),
    "numeric * categorical": ("y ~ bin(x1, 5) + z*g + offset(log(exposure))", "poisson", {}),
    "transformed x categorical": ("yb ~ bin(x1, 5) + log(x2):g", "binomial", {}),
    # issue 14: the Treatment reference and the missing="drop" policy are recorded; new
    # rows missing x3, h or z predict NaN, the others bitwise
    "Treatment reference": ("y ~ bin(x1, 5) + C(g, Treatment('b')) + z", "poisson", {}),
    "missing='drop'": (
        "y ~ bin(x1, 5) + bin(x3, 6) + C(h) + z + offset(log(exposure))", "poisson",
        {"missing": "drop", "offset": "off"},
    ),
    "bin(x, missing='drop')": (
        "yb ~ bin(x3, 6, missing='drop') + C(h) + bin(x1, 4)", "binomial", {"missing": "separate"},
    ),
}


def _round_trip(spec: dict) -> SpecModel:
    text = json.dumps(spec, allow_nan=False)
    return from_spec(json.loads(text))


@pytest.mark.parametrize("case", sorted(FORMULAS))
def test_formula_results_round_trip_predict_bitwise(case):
    formula, family, kw = FORMULAS[case]
    res = glm(formula, TRAIN, family=family, **kw).fit(lam=2e-3)
    spec = res.to_spec()
    model = _round_trip(spec)
    for how in ("response", "link"):
        assert_array_equal(model.predict(NEW, type=how), res.predict(NEW, type=how))
    assert model.to_spec() == spec
    assert spec["format"] == SPEC_FORMAT and spec["format_version"] == SPEC_VERSION
    n_theta = sum(len(t["theta"]) for t in spec["terms"] if t["kind"] != "linear")
    assert n_theta == len(res.coef)


def test_the_description_names_each_kind_of_term():
    res = glm(FORMULAS["offset terms"][0], TRAIN, family="poisson").fit(lam=1e-3)
    spec = res.to_spec()
    kinds = {t["name"]: t["kind"] for t in spec["terms"]}
    assert kinds == {"bin(x1, 6)": "bin", "C(g)": "categorical", "z": "linear"}
    b = spec["terms"][0]
    assert b["column"] == "x1" and b["intervals"] == "right-closed" and b["penalty"] == "tv"
    assert_array_equal(b["edges"], res.model.spec.blocks[0].edges)
    assert spec["terms"][1]["levels"] == ["a", "b", "c"]
    assert spec["terms"][1]["penalty"] == "free"
    assert spec["offset"] == {"terms": [{"column": "exposure", "transform": "log"}],
                              "column": None}  # fmt: skip
    assert spec["family"] == {"name": "poisson", "link": "log"}
    assert spec["intercept"] == res.intercept and spec["lam"] == res.lam
    inter = glm(FORMULAS["transformed linear"][0], TRAIN).fit(lam=1e-3).to_spec()
    assert [t["factors"] for t in inter["terms"] if t["kind"] == "linear"] == [
        [{"column": "x2", "transform": "log"}],
        [{"column": "z", "transform": "power", "exponent": 2}],
        [{"column": "x1"}, {"column": "z"}],
    ]
    assert glm(FORMULAS["no intercept"][0], TRAIN).fit(lam=1e-3).to_spec()["fit_intercept"] is False


def test_an_unseen_level_is_refused_like_the_fitted_model():
    res = glm("yb ~ C(g)", TRAIN, family="binomial").fit(lam=1e-3)
    model = from_spec(res.to_spec())
    bad = NEW.copy()
    bad.loc[3, "g"] = "zzz"
    with pytest.raises(ValueError, match="zzz"):
        res.predict(bad)
    with pytest.raises(ValueError, match=r"column 'g' has level\(s\) not seen.*zzz"):
        model.predict(bad)


def test_statsmodels_tweedie_family_keeps_its_power():
    sm = pytest.importorskip("statsmodels.api")
    fam = sm.families.Tweedie(var_power=1.5, link=sm.families.links.Log())
    res = glm("y ~ bin(x1, 6) + bin(x2, 5) + offset(log(exposure))", TRAIN, family=fam).fit(
        lam=1e-3
    )
    spec = res.to_spec()
    assert spec["family"]["statsmodels"] == {
        "family": "Tweedie", "link": "Log", "params": {"var_power": 1.5}
    }  # fmt: skip
    model = _round_trip(spec)
    assert_array_equal(model.predict(NEW), res.predict(NEW))


@pytest.mark.parametrize("family", ["gaussian", "binomial", "poisson"])
@pytest.mark.parametrize("container", ["frame", "array"])
def test_estimators_round_trip_predict_bitwise(family, container):
    X, Xn = TRAIN[["x1", "x2", "x3"]], NEW[["x1", "x2", "x3"]]
    if container == "array":
        X, Xn = X.to_numpy(), Xn.to_numpy()
    y = {"gaussian": TRAIN["yg"], "binomial": TRAIN["yb"], "poisson": TRAIN["y"]}[family]
    est = BinarsityGLM(family=family, n_bins=7, missing="separate", lam=2e-3)
    est.fit(X, y, sample_weight=TRAIN["exposure"], offset=TRAIN["off"])
    spec = est.to_spec()
    model = _round_trip(spec)
    assert_array_equal(model.predict(Xn, offset=NEW["off"]), est.predict(Xn, offset=NEW["off"]))
    assert_array_equal(model.decision_function(Xn), est.decision_function(Xn))
    assert [t["kind"] for t in spec["terms"]] == ["bin"] * 3
    assert spec["terms"][2]["missing_level"] is True
    if container == "frame":
        assert [t["column"] for t in spec["terms"]] == ["x1", "x2", "x3"]
    else:
        assert [t["column"] for t in spec["terms"]] == [0, 1, 2]


def test_classifier_round_trip_predicts_labels_and_probabilities():
    X, Xn = TRAIN[["x1", "x2", "x3"]], NEW[["x1", "x2", "x3"]]
    labels = np.where(TRAIN["yb"] > 0, "event", "none")
    clf = BinarsityClassifier(n_bins=6, missing="separate", lam=2e-3).fit(X, labels)
    model = _round_trip(clf.to_spec())
    assert model.spec["response"]["classes"] == ["event", "none"]
    assert_array_equal(model.predict(Xn, type="class"), clf.predict(Xn))
    assert_array_equal(model.predict(Xn), clf.predict_proba(Xn)[:, 1])


def test_bad_documents_are_refused_by_name():
    spec = BinarsityGLM(n_bins=4).fit(TRAIN[["x1"]], TRAIN["yg"]).to_spec()
    with pytest.raises(ValueError, match="not a model description"):
        from_spec({"format": "something else"})
    with pytest.raises(ValueError, match="format_version 99 is not supported"):
        from_spec({**spec, "format_version": 99})
    broken = json.loads(json.dumps(spec))
    broken["terms"][0]["theta"] = broken["terms"][0]["theta"][:-1]
    with pytest.raises(ValueError, match="theta needs 4 values"):
        from_spec(broken)
    broken["terms"][0]["kind"] = "spline"
    with pytest.raises(ValueError, match="unknown kind 'spline'"):
        from_spec(broken)


def test_a_stateful_formulaic_transform_is_refused_at_to_spec():
    res = glm("yg ~ bin(x1, 5) + center(z)", TRAIN).fit(lam=1e-3)
    with pytest.raises(ValueError, match=r"center\(z\).*stateful transform"):
        res.to_spec()


def test_backtick_column_names_round_trip():
    df = TRAIN.rename(columns={"x1": "x 1", "z": "z.z"})
    new = NEW.rename(columns={"x1": "x 1", "z": "z.z"})
    res = glm("yg ~ bin(`x 1`, 6) + C(g) + `z.z`", df).fit(lam=1e-3)
    spec = res.to_spec()
    assert spec["terms"][0]["input"] == {"column": "x 1"} and spec["terms"][0]["column"] == "x 1"
    assert_array_equal(_round_trip(spec).predict(new), res.predict(new))


def test_interaction_dummies_are_described_by_level():
    res = glm("yg ~ bin(x1, 5) + z:g", TRAIN).fit(lam=1e-3)
    linear = [t for t in res.to_spec()["terms"] if t["kind"] == "linear"]
    assert [t["factors"][1]["level"] for t in linear] == ["a", "b", "c"]
    assert all(t["factors"][0] == {"column": "z"} and t["factors"][1]["column"] == "g"
               for t in linear)  # fmt: skip
    new = NEW.copy()
    new.loc[3, "g"] = "zzz"  # an unseen level of the interaction's factor is refused
    with pytest.raises(ValueError, match="column 'g' has level.*not seen"):
        _round_trip(res.to_spec()).predict(new)


def test_a_bad_interaction_factor_is_refused_by_name():
    spec = glm("yg ~ bin(x1, 5) + z:g", TRAIN).fit(lam=1e-3).to_spec()
    broken = json.loads(json.dumps(spec))
    broken["terms"][-1]["factors"][1]["level"] = "nope"
    with pytest.raises(ValueError, match=r"term 'z:g\[c\]': a factor must be"):
        from_spec(broken)


def test_the_reference_level_and_the_drop_policy_are_recorded():
    res = glm("y ~ bin(x1, 5) + bin(x3, 6) + C(g, Treatment('b')) + z", TRAIN,
              family="poisson", missing="drop").fit(lam=2e-3)  # fmt: skip
    spec = res.to_spec()
    assert spec["terms"][2]["reference"] == "b"
    assert sorted(spec["missing"]["drop_columns"]) == ["g", "x1", "x3", "z"]
    model = _round_trip(spec)
    na = NEW[["x1", "x3", "z", "g"]].isna().any(axis=1).to_numpy()
    assert na.any() and not na.all()
    offset = np.linspace(-0.2, 0.2, len(NEW))  # an offset array is cut to the rows kept
    for how in ("response", "link"):
        pred = model.predict(NEW, type=how, offset=offset)
        assert np.isnan(pred[na]).all() and np.isfinite(pred[~na]).all()
        assert_array_equal(pred, res.predict(NEW, type=how, offset=offset))
    mapping = {k: NEW[k].to_numpy() for k in ("x1", "x3", "z", "g")}
    assert_array_equal(model.predict(mapping), res.predict(NEW))
    with pytest.raises(ValueError, match="column 'x3' contains missing values"):
        model.predict(NEW, missing="error")
    with pytest.raises(ValueError, match="missing must be None, 'nan' or 'error'"):
        model.predict(NEW, missing="drop")
    # without the policy and without Treatment(), the keys are absent: NaN is an error
    plain = glm("y ~ bin(x1, 5) + bin(x3, 6) + C(g)", TRAIN.dropna(subset=["x3"]),
                family="poisson").fit(lam=2e-3).to_spec()  # fmt: skip
    assert "missing" not in plain and "reference" not in plain["terms"][2]
    with pytest.raises(ValueError, match="column 'x3' contains missing values"):
        _round_trip(plain).predict(NEW)


def test_bad_reference_or_missing_entries_are_refused_by_name():
    spec = glm("yg ~ bin(x1, 5) + C(g, Treatment('c'))", TRAIN, missing="drop").fit(
        lam=1e-3
    ).to_spec()
    broken = json.loads(json.dumps(spec))
    broken["terms"][1]["reference"] = "zzz"
    with pytest.raises(ValueError, match="reference 'zzz' is not one of its levels"):
        from_spec(broken)
    broken = json.loads(json.dumps(spec))
    broken["missing"] = {"drop_columns": "x1"}
    with pytest.raises(ValueError, match="missing.drop_columns: must be a list"):
        from_spec(broken)


def test_a_name_with_a_backtick_is_described_from_the_formula_not_its_label():
    # "y ~ ." names such a column by alias; the label shows it as bin(`t\`x`), which the
    # description used to parse (and refuse) instead of the formula's own factor
    import pandas as pd

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"t`x": rng.normal(size=200), "it's, `q`": rng.normal(size=200)})
    df["y"] = (df["t`x"] > 0) + rng.normal(scale=0.5, size=200)
    res = glm("y ~ .", df, n_bins=4).fit(lam=1e-3)
    spec = json.loads(json.dumps(res.to_spec()))
    assert [t["input"] for t in spec["terms"]] == [{"column": "t`x"}, {"column": "it's, `q`"}]
    assert_array_equal(from_spec(spec).predict(df), res.predict(df))
