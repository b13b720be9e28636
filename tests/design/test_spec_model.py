"""Unit tests of ``binarsity_stats.design._spec_model``: reading a model description
(``check_spec``, ``load_json``, ``from_spec``) and predicting from it (``SpecModel``,
``input_values``). A description written here by hand is scored against η computed
term by term with NumPy; a fitted model's own description predicts what it predicts."""

from __future__ import annotations

import copy
import json

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from binarsity_stats.design._spec_model import (
    SpecModel,
    check_spec,
    from_spec,
    input_values,
    load_json,
)

EDGES = [-0.5, 0.0, 0.8]
THETA_X = [-0.3, -0.1, 0.1, 0.3]
THETA_G = [-0.2, 0.05, 0.15]
SPEC = {
    "format": "binarsity_stats.model_spec",
    "format_version": 2,
    "package_version": "0.1.0",
    "source": "BinarsityResults",
    "family": {"name": "poisson", "link": "log"},
    "intercept": 0.4,
    "fit_intercept": True,
    "lam": 0.01,
    "response": {"name": "y", "kind": "numeric"},
    "terms": [
        {"kind": "bin", "name": "bin(x, 4)", "column": "x", "input": {"column": "x"}, "edges": EDGES,
         "intervals": "right-closed", "missing_level": False, "penalty": "tv", "theta": THETA_X},
        {"kind": "categorical", "name": "C(g)", "column": "g", "levels": ["a", "b", "c"],
         "missing_level": False, "unseen": "error", "penalty": "free", "theta": THETA_G},
        {"kind": "linear", "name": "z", "factors": [{"column": "z"}], "coef": -0.25},
    ],
    "offset": {"terms": [{"column": "t", "transform": "log"}], "column": None},
    "penalty": {"weights": "balanced"},
    "column_kinds": {"g": "object", "t": "float", "x": "float", "z": "float"},
}  # fmt: skip


def _data(n=50, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"x": rng.normal(size=n), "g": rng.choice(list("abc"), n),
                         "z": rng.normal(size=n), "t": rng.uniform(0.5, 2.0, n)})  # fmt: skip


def _eta_by_hand(df):
    code_x = np.searchsorted(EDGES, df["x"].to_numpy(), side="left")  # right-closed bins
    code_g = df["g"].map({"a": 0, "b": 1, "c": 2}).to_numpy()
    return (0.4 + np.asarray(THETA_X)[code_x] + np.asarray(THETA_G)[code_g]
            - 0.25 * df["z"].to_numpy() + np.log(df["t"].to_numpy()))  # fmt: skip


def test_predictions_equal_eta_computed_term_by_term():
    df = _data()
    model = SpecModel(SPEC)
    eta = _eta_by_hand(df)
    # a sum of five terms: rounding a few eps of the largest term
    assert_allclose(model.predict(df, type="link"), eta, rtol=0, atol=1e-14)
    assert_allclose(model.predict(df), np.exp(eta), rtol=1e-14)
    assert_allclose(model.decision_function(df), eta, rtol=0, atol=1e-14)
    # a mapping of columns reads the same
    assert_allclose(model.predict({k: df[k].to_numpy() for k in df}, type="link"), eta, atol=1e-14)


def test_an_explicit_offset_replaces_the_offset_column_but_adds_to_offset_terms():
    df = _data(10)
    spec = copy.deepcopy(SPEC)
    spec["offset"] = {"terms": [], "column": "t"}
    model = SpecModel(spec)
    base = _eta_by_hand(df) - np.log(df["t"].to_numpy())
    assert_allclose(model.predict(df, type="link"), base + df["t"].to_numpy(), atol=1e-14)
    assert_allclose(model.predict(df, type="link", offset=np.ones(10)), base + 1.0, atol=1e-14)
    with pytest.raises(ValueError, match=r"^offset has 3 rows but the data has 10"):
        model.predict(df, offset=np.ones(3))


def test_to_spec_and_from_spec_round_trip_and_copy():
    model = from_spec(json.dumps(SPEC))
    out = model.to_spec()
    assert out == SPEC
    out["intercept"] = 99.0  # a copy: the model is unchanged
    assert model.to_spec()["intercept"] == 0.4
    assert repr(model) == "<SpecModel from BinarsityResults (poisson, 3 terms, package 0.1.0)>"


def test_the_description_is_validated_naming_the_field():
    bad = copy.deepcopy(SPEC)
    bad["terms"][0]["edges"] = [0.0, -1.0, 2.0]
    with pytest.raises(ValueError, match=r"terms\[0\].*edges"):
        SpecModel(bad)
    bad = copy.deepcopy(SPEC)
    bad["family"] = {"name": "nosuchfamily", "link": "log"}
    with pytest.raises(ValueError, match=r"^model description, family\.name: "):
        check_spec(bad)
    with pytest.raises(ValueError, match=r"^model description: not valid JSON"):
        from_spec("{not json")
    with pytest.raises(ValueError, match=r"^model description: the JSON is nested too deeply"):
        load_json("[" * 100000 + "]" * 100000)


def test_bad_data_is_refused_naming_the_column():
    model = SpecModel(SPEC)
    df = _data(5)
    with pytest.raises(ValueError, match=r"^column 'z' \(used by the model\) is missing from the data"):
        model.predict(df.drop(columns="z"))
    with pytest.raises(ValueError, match=r"^column 'x' contains missing values \(NaN\) but the model has no missing level"):
        model.predict(df.assign(x=[np.nan, 0, 0, 0, 0]))
    with pytest.raises(ValueError, match=r"^column 'x' contains infinite values"):
        model.predict(df.assign(x=[np.inf, 0, 0, 0, 0]))
    with pytest.raises(ValueError, match=r"column 'g' has level\(s\) not seen"):
        model.predict(df.assign(g=["a", "b", "d", "a", "a"]))
    with pytest.raises(ValueError, match=r"^term 'z' has missing or infinite values"):
        model.predict(df.assign(z=[0.0, np.nan, 0, 0, 0]))
    with pytest.raises(ValueError, match=r"^offset term .* has missing or infinite values"):
        model.predict(df.assign(t=[0.0, 1, 1, 1, 1]))  # log(0) = -inf
    with pytest.raises(TypeError, match=r"^column 'z' must be numeric"):
        model.predict(df.assign(z=["a", "b", "c", "d", "e"]))
    with pytest.raises(ValueError, match=r"^type must be 'response', 'link' or 'class'; got 'mean'"):
        model.predict(df, type="mean")
    with pytest.raises(ValueError, match=r"^type='class' needs a classifier's description"):
        model.predict(df, type="class")


def test_rows_missing_a_dropped_column_predict_nan():
    spec = copy.deepcopy(SPEC)
    spec["missing"] = {"drop_columns": ["x"]}
    model = SpecModel(spec)
    df = _data(6).assign(x=[0.1, np.nan, 0.3, np.nan, -1.0, 2.0])
    out = model.predict(df, type="link")
    keep = ~np.isnan(df["x"].to_numpy())
    assert_array_equal(np.isnan(out), ~keep)
    assert_allclose(out[keep], _eta_by_hand(df[keep]), atol=1e-14)
    with pytest.raises(ValueError, match=r"contains missing values"):
        model.predict(df, missing="error")
    with pytest.raises(ValueError, match=r"^missing must be None, 'nan' or 'error'"):
        model.predict(df, missing="drop")


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ({"column": "a"}, [1.0, 4.0, 9.0]),
        ({"column": "a", "transform": "sqrt"}, [1.0, 2.0, 3.0]),
        ({"column": "a", "transform": "log10"}, np.log10([1.0, 4.0, 9.0])),
        ({"column": "a", "transform": "power", "exponent": 0.5}, [1.0, 2.0, 3.0]),
        ({"column": "a", "transform": "scale", "center": 1.0, "scale": 2.0}, [0.0, 1.5, 4.0]),
        ({"transform": "sub", "operands": ["a", "b"]}, [0.0, 2.0, 6.0]),
        ({"transform": "div", "operands": ["a", 2.0]}, [0.5, 2.0, 4.5]),
        ({"transform": "mul", "operands": [3.0, "b"]}, [3.0, 6.0, 9.0]),
    ],
)
def test_input_values_apply_one_transform_of_the_closed_list(source, expected):
    data = pd.DataFrame({"a": [1.0, 4.0, 9.0], "b": [1.0, 2.0, 3.0]})
    assert_allclose(input_values(data, source), expected, rtol=1e-15)


def test_input_values_from_an_array_by_position_and_outside_the_domain():
    X = np.array([[1.0, -1.0], [2.0, 0.0]])
    assert_array_equal(input_values(X, {"column": 1}), [-1.0, 0.0])
    out = input_values(X, {"column": 1, "transform": "log"})
    assert np.isnan(out[0]) and out[1] == -np.inf  # NumPy's values, no warning
    with pytest.raises(ValueError, match=r"^X needs at least 4 columns \(2-D\); got shape \(2, 2\)"):
        input_values(X, {"column": 3})


def test_a_fitted_models_description_predicts_what_it_predicts():
    import binarsity_stats as bs

    df = _data(300, seed=3)
    rng = np.random.default_rng(4)
    df["y"] = rng.poisson(np.exp(0.3 * df["x"] + 0.2 * (df["g"] == "b")) * df["t"])
    res = bs.glm("y ~ bin(x, 5) + C(g) + z + offset(np.log(t))", df, family="poisson").fit(lam=1e-3)
    new = _data(40, seed=5)
    model = from_spec(res.to_spec())
    assert_array_equal(model.predict(new, type="link"), res.predict(new, type="link"))
    assert_array_equal(model.predict(new), res.predict(new))
