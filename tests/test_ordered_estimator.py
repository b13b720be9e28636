"""Estimators read an ordered pandas Categorical as an ordered factor (a TV chain).

``categorical_features="auto"`` (or naming the column) with an *ordered* pandas dtype
gives the block of ``ordered(x)`` in a formula: the same fit as glm() (checked through
``est.results()``, which refits nothing and checks the levels and weights are the
formula's), the same predictions after to_spec/from_spec, and an unordered categorical
stays free levels.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.testing import assert_allclose

import binarsity_stats as bs

RATINGS = ["AAA", "AA", "A", "BBB", "BB", "B", "CCC", "D"]


def _data(n: int = 400, seed: int = 3):
    rng = np.random.default_rng(seed)
    k = rng.integers(0, len(RATINGS), n)
    X = pd.DataFrame({
        "rating": pd.Categorical(np.array(RATINGS)[k], categories=RATINGS, ordered=True),
        "x": rng.normal(size=n),
    })  # fmt: skip
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(2 - 1.0 * (k >= 3) - 1.5 * (k >= 6)))).astype(int)
    return X, y


def test_an_ordered_categorical_is_a_chain_as_in_the_formula():
    X, y = _data()
    est = bs.BinarsityClassifier(categorical_features="auto", n_bins=5, lam=0.01).fit(X, y)
    assert list(est.feature_kinds_) == ["ordered", "bin"]
    s, e = est.block_ptr_[0], est.block_ptr_[1]
    assert np.all(est.penalty_weights_[s + 1 : e] > 0)  # penalised, unlike C()
    df = X.assign(y=y)
    ref = bs.glm("y ~ ordered(rating) + bin(x, 5)", df, family="binomial").fit(lam=0.01)
    assert_allclose(est.coef_, ref.coef, atol=1e-7)
    res = est.results(X, y)  # checks levels and weights against the formula's
    assert res.term_table()["kind"].iloc[0] == "ordered"
    spec = est.to_spec()
    assert spec["terms"][0]["penalty"] == "tv"
    assert_allclose(bs.from_spec(spec).predict(X), est.predict_proba(X)[:, 1], rtol=1e-12)


def test_an_unordered_categorical_stays_free():
    X, y = _data()
    X["rating"] = X["rating"].cat.as_unordered()
    est = bs.BinarsityClassifier(categorical_features="auto", n_bins=5, lam=0.01).fit(X, y)
    assert list(est.feature_kinds_) == ["categorical", "bin"]
    s, e = est.block_ptr_[0], est.block_ptr_[1]
    assert np.all(est.penalty_weights_[s:e] == 0)
