"""model/_results_export.py: a fit's model description, SQL query and scorecard.

Proved here: the description holds the fit's own numbers (θ of every block, the cut
points of its recipe, β0, the dense coefficients, λ) as plain JSON, and rebuilt by
``from_spec`` it predicts what the fit predicts; the SQL query run by SQLite gives the
fit's predictions; the scorecard's score is the points formula of the odds written here;
what the description cannot replay is refused by term.
"""

from __future__ import annotations

import json
import math
import sqlite3

import numpy as np
import pandas as pd
import pytest

from binarsity_stats import from_spec
from binarsity_stats.model._model import glm


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(0)
    n = 300
    df = pd.DataFrame({"x": rng.normal(size=n), "g": rng.choice(list("abc"), n),
                       "z": rng.normal(size=n)})  # fmt: skip
    df["y"] = ((df.x > 0) + 0.4 * df.z + rng.normal(size=n) > 0.5).astype(float)
    return df, glm("y ~ bin(x, 6) + C(g) + z", df, family="binomial").fit(lam=0.005)


def test_the_description_holds_the_fit(fitted):
    _, res = fitted
    spec = json.loads(json.dumps(res.to_spec()))  # plain JSON values
    m = res.model
    ptr = m.block_ptr
    bin_term, cat_term, lin_term = spec["terms"]
    assert bin_term["kind"] == "bin" and bin_term["column"] == "x"
    np.testing.assert_array_equal(bin_term["theta"], res.coef[ptr[0] : ptr[1]])
    np.testing.assert_array_equal(bin_term["edges"], m.spec.blocks[0].edges)
    assert cat_term["levels"] == ["a", "b", "c"]
    np.testing.assert_array_equal(cat_term["theta"], res.coef[ptr[1] : ptr[2]])
    assert lin_term == {"kind": "linear", "name": "z", "factors": [{"column": "z"}],
                        "coef": float(res.dense_coef[0])}  # fmt: skip
    assert spec["intercept"] == res.intercept and spec["lam"] == res.lam
    assert spec["family"] == {"name": "binomial", "link": "logit"}
    assert spec["penalty"] == {"weights": "balanced"}
    assert res.relax(0.25).to_spec()["penalty"] == {"weights": "balanced", "relax": 0.25}


def test_the_rebuilt_description_predicts_as_the_fit(fitted):
    df, res = fitted
    rebuilt = from_spec(json.loads(json.dumps(res.to_spec())))
    np.testing.assert_array_equal(rebuilt.predict(df), res.predict(df))


def test_the_sql_query_scores_as_the_fit(fitted):
    df, res = fitted
    con = sqlite3.connect(":memory:")
    try:
        df[["x", "g", "z"]].to_sql("t", con, index=False)
        got = np.array([row[0] for row in con.execute(res.to_sql("t"))])
    finally:
        con.close()
    # decimal literals with 17 significant digits, exp/log in SQLite's libm
    np.testing.assert_allclose(got, res.predict(df), rtol=1e-12)


def test_the_scorecard_is_the_points_formula(fitted):
    df, res = fitted
    card = res.scorecard(pdo=20, base_score=600, base_odds=50)
    eta = res.predict(df, type="link")
    factor = 20 / math.log(2)
    # odds against the event are e^{-η}; base_score stands for odds of 50 : 1
    want = 600 + factor * (-eta - math.log(50))
    np.testing.assert_allclose(card.score(df), want, rtol=1e-12, atol=1e-9)
    rounded = res.scorecard(rounding=0)
    points = rounded.points(df)
    levels = points[["bin(x, 6)", "C(g)"]].to_numpy()  # a linear term's points stay exact
    np.testing.assert_array_equal(levels, np.round(levels))
    np.testing.assert_allclose(points["score"], points.drop(columns="score").sum(axis=1),
                               rtol=1e-12)  # fmt: skip


def test_what_cannot_be_described_is_refused_by_term(fitted):
    df, _ = fitted
    stateful = glm("y ~ bin(x, 6) + center(z)", df, family="binomial").fit(lam=0.01)
    with pytest.raises(ValueError, match="term 'center\\(z\\)' uses a stateful transform"):
        stateful.to_spec()
    expression = glm("y ~ bin(x, 6) + C(g + 'q')", df, family="binomial").fit(lam=0.01)
    with pytest.raises(ValueError, match="cannot be described"):
        expression.to_spec()
