"""sklearn/_estimator_inspect.py: what a statistician reads of a fitted estimator.

Proved here: ``cut_points`` lists exactly the edges where θ jumps, with θ's difference
(recomputed here from ``coef_`` and the binarizer's edges) and the same cuts and jumps
as ``glm()``'s results on the matching formula; a ``by`` feature adds the level and a
monotone one the shape; ``results`` carries the estimator's solution and refuses other
data; ``to_spec`` rebuilt by ``from_spec`` predicts bit for bit what the estimator
does, an array-fitted estimator naming its columns by position.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from binarsity_stats import BinarsityGLM, from_spec
from binarsity_stats.model._model import glm


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    n = 200
    X = pd.DataFrame({"x": rng.normal(size=n), "g": rng.choice(list("abc"), n),
                      "z": rng.normal(size=n)})  # fmt: skip
    y = ((X.x > 0) + 0.3 * X.z + rng.normal(size=n)).to_numpy()
    return X, y


@pytest.fixture(scope="module")
def est(data):
    X, y = data
    return BinarsityGLM(n_bins=6, lam=0.01, categorical_features=["g"],
                        linear_features=["z"]).fit(X, y)  # fmt: skip


def test_cut_points_are_the_jumps_of_theta(data, est):
    X, y = data
    cuts = est.cut_points()
    assert list(cuts.columns) == ["feature", "cut", "jump"]
    theta = est.coef_[est.block_ptr_[0] : est.block_ptr_[1]]
    edges = est.binarizer_.edges_[0]
    diff = np.diff(theta)
    jumps = np.flatnonzero(np.abs(diff) > 1e-6)  # the fit's flat steps are exact zeros
    assert len(cuts) == jumps.size >= 2
    np.testing.assert_array_equal(cuts["cut"], edges[jumps])
    np.testing.assert_allclose(cuts["jump"], diff[jumps], rtol=1e-15)
    assert set(cuts["feature"]) == {"x"}
    formula = glm("y ~ bin(x, 6) + C(g) + z", X.assign(y=y)).fit(lam=0.01).cut_points()
    np.testing.assert_allclose(cuts["cut"], formula["cut"], rtol=1e-15)
    np.testing.assert_allclose(cuts["jump"], formula["jump"], atol=1e-6)


def test_cut_points_of_by_and_monotone_features(data):
    X, y = data
    by = BinarsityGLM(n_bins=4, lam=0.005, by={"x": "g"}, linear_features=["z"]).fit(X, y)
    cuts = by.cut_points()
    assert list(cuts.columns) == ["feature", "cut", "jump", "level"]
    assert set(cuts["level"]) <= {"a", "b", "c"} and len(cuts) > 0
    d = 4
    for _, row in cuts.iterrows():
        i = ["a", "b", "c"].index(row["level"])
        lev = by.coef_[i * d : (i + 1) * d]
        e = list(by.binarizer_.edges_[0]).index(row["cut"])
        assert row["jump"] == pytest.approx(lev[e + 1] - lev[e], rel=1e-15)
    mono = BinarsityGLM(n_bins=6, lam=0.005, monotone={"x": "increasing"},
                        categorical_features=["g"], linear_features=["z"]).fit(X, y)  # fmt: skip
    mcuts = mono.cut_points()
    assert list(mcuts.columns) == ["feature", "cut", "jump", "shape"]
    assert set(mcuts["shape"]) == {"increasing"} and np.all(mcuts["jump"] > 0)


def test_results_carry_the_solution_and_refuse_other_data(data, est):
    X, y = data
    res = est.results(X, y)
    np.testing.assert_array_equal(res.coef, est.coef_)
    assert res.intercept == est.intercept_
    pd.testing.assert_frame_equal(est.shape_functions(X, y), res.shape_functions())
    with pytest.raises(ValueError, match="not the data BinarsityGLM was fitted on.*'x'"):
        est.results(X.iloc[:-1], y[:-1])


def test_to_spec_predicts_bit_for_bit(data, est):
    X, y = data
    spec = json.loads(json.dumps(est.to_spec()))
    np.testing.assert_array_equal(from_spec(spec).predict(X), est.predict(X))
    names = [t["name"] for t in spec["terms"]]
    assert names == ["x", "g", "z"]
    assert spec["terms"][1]["penalty"] == "free" and spec["lam"] == 0.01
    arr = BinarsityGLM(n_bins=6, lam=0.01).fit(X[["x", "z"]].to_numpy(), y)
    aspec = arr.to_spec()
    assert [(t["name"], t["column"]) for t in aspec["terms"]] == [("x0", 0), ("x1", 1)]
    assert set(arr.cut_points()["feature"]) == {"x0", "x1"}
