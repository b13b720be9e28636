"""sklearn/_estimator_results: an estimator's results built on its own blocks.

The results of ``est.results(X, y)`` are those of ``glm()`` on the same data (the same
edges exactly, coefficients, cut points and deviance to rounding), and building them
parses no formula: ``BinarsityModel.from_design`` on the estimator's blocks.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import binarsity_stats.formula._formula as formula_module
import binarsity_stats.model._model as model_module
from binarsity_stats import BinarsityClassifier, BinarsityGLM, glm

FAMILIES = ["gaussian", "binomial", "poisson", "cox"]


def _data(family, n=2000, seed=3):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({
        "a": rng.normal(size=n),
        "g": rng.choice(["u", "v", "w"], n, p=[0.5, 0.3, 0.2]),
        "z": rng.normal(size=n),
        "b": np.round(rng.normal(size=n), 1),  # ties
    })  # fmt: skip
    eta = np.where(X["a"] > 0, 0.8, -0.4) + 0.5 * (X["g"] == "v") + 0.3 * X["z"]
    sw = rng.uniform(0.5, 2.0, n)
    if family == "cox":
        time = rng.exponential(np.exp(-eta))
        event = (rng.uniform(size=n) < 0.8).astype(float)
        return X, np.column_stack([time, event]), sw
    draw = {
        "gaussian": lambda: eta + rng.normal(size=n),
        "binomial": lambda: rng.binomial(1, 1 / (1 + np.exp(-eta))),
        "poisson": lambda: rng.poisson(np.exp(eta - 0.5)),
    }
    y = np.asarray(draw[family](), dtype=float)
    return X, y, sw


def _no_formula_parsed(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a formula was parsed")

    monkeypatch.setattr(model_module, "build_design", refuse)
    monkeypatch.setattr(formula_module, "build_design", refuse)


@pytest.mark.parametrize("family", FAMILIES)
def test_results_are_the_formula_door_s_without_parsing_a_formula(family, monkeypatch):
    X, y, sw = _data(family)
    est = BinarsityGLM(family=family, n_bins=20, categorical_features=["g"],
                       linear_features=["z"]).fit(X, y, sample_weight=sw)  # fmt: skip
    with monkeypatch.context() as m:
        _no_formula_parsed(m)
        res = est.results(X, y, sample_weight=sw)
        cuts = res.cut_points()
        summary = str(res.summary())
    assert res.model.formula is None and res.model.spec.model_spec is None
    if family == "cox":
        data = X.assign(time=y[:, 0], event=y[:, 1])
        formula = "Surv(time, event) ~ bin(a) + C(g) + z + bin(b)"
    else:
        data, formula = X.assign(y=y), "y ~ bin(a) + C(g) + z + bin(b)"
    ref = glm(formula, data, family=family, sample_weight=sw, n_bins=20).fit()
    for got, want in zip(res.model.spec.blocks, ref.model.spec.blocks, strict=True):
        assert got.term == want.term and got.column == want.column
        if want.edges is not None:
            assert_array_equal(got.edges, want.edges)  # the same cut points, exactly
        assert got.levels == want.levels and got.distinct == want.distinct
    assert_array_equal(res.model.design.codes, ref.model.design.codes)
    assert_array_equal(res.model.penalty_weights, ref.model.penalty_weights)
    # two runs of one solver on one problem: equal up to rounding
    assert_allclose(res.lam, ref.lam, rtol=1e-12)
    scale = np.max(np.abs(ref.coef))
    assert_allclose(res.coef, ref.coef, rtol=1e-12, atol=1e-12 * scale)
    assert_allclose(res.dense_coef, ref.dense_coef, rtol=1e-12, atol=1e-12 * scale)
    assert_allclose(res.deviance, ref.deviance, rtol=1e-12)
    want_cuts = ref.cut_points()
    assert list(cuts["term"]) == list(want_cuts["term"])
    assert_array_equal(cuts["cut"].to_numpy(), want_cuts["cut"].to_numpy())
    assert_allclose(cuts["jump"].to_numpy(), want_cuts["jump"].to_numpy(), rtol=1e-9,
                    atol=1e-12 * scale)  # fmt: skip
    assert "bin(a)" in summary and "C(g)" in summary


def test_results_check_the_rows_without_binning_them_again():
    X, y, sw = _data("gaussian", n=600)
    est = BinarsityGLM(n_bins=10, categorical_features=["g"], lam=0.01).fit(X, y)
    with pytest.raises(ValueError, match="rows in the levels of feature 'g' differ"):
        est.results(X.assign(g=np.where(X["g"] == "u", "v", X["g"])), y)
    with pytest.raises(ValueError, match="rows in the bins of feature 'a' differ"):
        est.results(X.assign(a=X["a"] + 0.5), y)
    with pytest.raises(ValueError, match="X, y, offset or sample_weight are not the data"):
        est.results(X.assign(a=X["a"].to_numpy()[::-1]), y)  # the same counts, other rows


AWKWARD = ["a b", "it's", 'say "hi"', "x)", "__import__('pathlib').Path('PWNED').touch()",
           "tick`)"]  # fmt: skip


def test_awkward_names_are_labels_and_keys_only(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(4)
    n = 400
    X = pd.DataFrame({c: rng.normal(size=n) for c in AWKWARD[:-1]})
    X[AWKWARD[-1]] = rng.choice(["p", "q"], n)
    y = (X["a b"] + (X[AWKWARD[-1]] == "q") + rng.normal(size=n) > 0).astype(int)
    est = BinarsityClassifier(n_bins=6, lam=0.01, categorical_features=[AWKWARD[-1]],
                              linear_features=["x)"]).fit(X, y)  # fmt: skip
    res = est.results(X, y)
    text = str(res.summary())
    for name in AWKWARD[:-1]:  # the column name itself, inside its term's label
        assert name in text
    assert "C(`tick\\`)`)" in text  # a backtick escaped as the formula door labels it
    assert [b.column for b in res.model.spec.blocks] == [c for c in AWKWARD if c != "x)"]
    assert res.model.spec.dense_columns == ["x)"]
    description = res.to_spec()  # every input a column reference (was refused for `)
    inputs = [t.get("input", {"column": t.get("column")}) for t in description["terms"]]
    assert {"column": AWKWARD[-1]} in inputs
    assert_allclose(res.predict(X.iloc[:50]), est.predict_proba(X.iloc[:50])[:, 1],
                    rtol=1e-12, atol=1e-15)  # fmt: skip
    html = res.report()
    assert "PWNED" in html and os.listdir(tmp_path) == []  # shown, never run
