"""Scorecards (``res.scorecard()``, ``bs.scorecard(model)``): points that add up to the model.

What is proved: unrounded, the points of every row add up to offset − factor · η
exactly (to rounding) — for bins with missing levels, ``C()`` terms, linear terms and
offsets, formula results and classifiers; ``base_score`` points mean odds of
``base_odds`` : 1 against the event and ``pdo`` points double them (the pdo/odds scaling
of credit scoring, Siddiqi 2006); rounded, the score moves by at most the declared
bound and the rows keep their order up to it; the table has one row per interval with
right-closed labels; non-binomial models and bad arguments are refused by name; a pair
term ``bin(a):bin(b)`` gets a two-way table of points (its unseen cells: the intercept's
share) and its points add up to the model too.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from binarsity_stats import BinarsityClassifier, Scorecard, glm, scorecard


def _frame(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    age = rng.uniform(18, 80, n)
    income = rng.lognormal(10, 0.6, n)
    income[rng.random(n) < 0.1] = np.nan
    region = rng.choice(["north", "south", "east"], n).astype(object)
    eta = -1 + 0.8 * (age < 30) - 0.5 * (np.nan_to_num(income, nan=3e4) > 3e4) + 0.3 * (
        region == "east"
    )
    return pd.DataFrame(
        {"age": age, "income": income, "region": region, "tenure": rng.uniform(0, 10, n),
         "exposure": rng.uniform(0.5, 2, n),
         "default": (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)}
    )  # fmt: skip


TRAIN, NEW = _frame(800, 0), _frame(100, 1)
FORMULA = "default ~ bin(age, 10) + bin(income, 8) + C(region) + tenure"


@pytest.fixture(scope="module")
def res():
    return glm(FORMULA, TRAIN, family="binomial", missing="separate").fit(lam=1e-3)


def test_points_add_up_to_the_model_exactly(res):
    card = res.scorecard(pdo=20, base_score=600, base_odds=50)
    eta = res.predict(NEW, type="link")
    factor = 20 / math.log(2)
    np.testing.assert_allclose(card.score(NEW), 600 - factor * (eta + math.log(50)), rtol=1e-12)
    pts = card.points(NEW)
    assert list(pts.columns) == ["bin(age, 10)", "bin(income, 8)", "C(region)", "tenure", "score"]
    np.testing.assert_allclose(pts.drop(columns="score").sum(axis=1), pts["score"], rtol=1e-13)


def test_the_scaling_means_what_it_says(res):
    card = res.scorecard(pdo=20, base_score=600, base_odds=50)
    p = res.predict(NEW)
    odds_against = (1 - p) / p
    # score = base_score + pdo * log2(odds / base_odds): doubling the odds adds pdo points
    np.testing.assert_allclose(card.score(NEW), 600 + 20 * np.log2(odds_against / 50), rtol=1e-12)
    assert card.factor == pytest.approx(20 / math.log(2))
    assert card.offset == pytest.approx(600 - card.factor * math.log(50))


def test_the_table_has_one_row_per_interval_and_level(res):
    table = res.scorecard().table
    spec = res.to_spec()
    age = table[table["term"] == "bin(age, 10)"]
    assert len(age) == len(spec["terms"][0]["edges"]) + 1
    assert age["bin"].iloc[0].startswith("(-inf, ") and age["bin"].iloc[-1].endswith(", inf]")
    assert table[table["term"] == "bin(income, 8)"]["bin"].iloc[-1] == "missing"
    assert list(table[table["term"] == "C(region)"]["bin"]) == ["east", "north", "south"]
    assert table[table["term"] == "tenure"]["bin"].tolist() == ["per unit"]


@pytest.mark.parametrize("rounding", [0, 1])
def test_rounded_points_move_the_score_by_at_most_the_bound(res, rounding):
    exact = res.scorecard().score(NEW)
    card = res.scorecard(rounding=rounding)
    rounded = card.score(NEW)
    assert card.max_rounding_error == 3 * 0.5 * 10.0**-rounding
    assert np.max(np.abs(rounded - exact)) <= card.max_rounding_error + 1e-9
    blocks = card.table[card.table["bin"] != "per unit"]["points"]
    np.testing.assert_array_equal(blocks, np.round(blocks, rounding))
    # rows whose exact scores differ by more than twice the bound keep their order
    i, j = np.triu_indices(len(exact), 1)
    far = np.abs(exact[i] - exact[j]) > 2 * card.max_rounding_error
    assert np.all(np.sign(exact[i] - exact[j])[far] == np.sign(rounded[i] - rounded[j])[far])


def test_classifiers_and_offsets():
    X = TRAIN[["age", "tenure"]]
    clf = BinarsityClassifier(n_bins=6, lam=1e-3).fit(X, TRAIN["default"])
    card = scorecard(clf, pdo=40, base_score=500, base_odds=20)
    eta = clf.decision_function(NEW[["age", "tenure"]])
    expected = 500 - 40 / math.log(2) * (eta + math.log(20))
    np.testing.assert_allclose(card.score(NEW[["age", "tenure"]]), expected, rtol=1e-12)
    res = glm("default ~ bin(age, 6) + offset(np.log(exposure))", TRAIN, family="binomial").fit(
        lam=1e-3
    )
    card = res.scorecard()
    assert card.table["term"].iloc[-1] == "offset"
    eta = res.predict(NEW, type="link")
    np.testing.assert_allclose(card.score(NEW), card.offset - card.factor * eta, rtol=1e-12)


def test_refusals_name_the_problem(res):
    gauss = glm("tenure ~ bin(age, 5)", TRAIN).fit(lam=1e-3)
    with pytest.raises(ValueError, match="needs a binomial model with the logit link"):
        gauss.scorecard()
    with pytest.raises(ValueError, match="pdo must be a positive number"):
        res.scorecard(pdo=0)
    with pytest.raises(ValueError, match="base_odds must be a positive number"):
        res.scorecard(base_odds=-1)
    with pytest.raises(ValueError, match="rounding must be None or an integer"):
        res.scorecard(rounding=1.5)
    with pytest.raises(TypeError, match="needs a fitted binomial model"):
        scorecard("model")
    assert isinstance(scorecard(res.to_spec()), Scorecard)
    assert "pdo=20" in repr(res.scorecard())


@pytest.fixture(scope="module")
def pair_res():
    # tenure follows age: the cells (young, long tenure) and (old, short tenure) are empty
    rng = np.random.default_rng(5)
    df = TRAIN[["age", "default"]].copy()
    df["tenure"] = (df["age"] - 18) / 6.2 + rng.uniform(0, 1, len(df))
    return glm("default ~ bin(age, 4) + bin(tenure, 3) + bin(age, 4):bin(tenure, 3)", df,
               family="binomial").fit(lam=1e-3)  # fmt: skip


def test_a_pair_term_gets_a_two_way_points_table(pair_res):
    term = "bin(age, 4):bin(tenure, 3)"
    card = pair_res.scorecard(pdo=20, base_score=600, base_odds=50)
    spec = pair_res.to_spec()
    table = [t for t in spec["terms"] if t["kind"] == "pair"][0]["table"]
    factor, offset = 20 / math.log(2), 600 - 20 / math.log(2) * math.log(50)
    share = (offset - factor * spec["intercept"]) / 3
    two = card.two_way[term]
    assert two.shape == (4, 3) and (two.index.name, two.columns.name) == ("age", "tenure")
    assert two.index[0].startswith("(-inf, ") and two.columns[-1].endswith(", inf]")
    expected = np.array([[share - factor * (0.0 if v is None else v) for v in row]
                         for row in table])  # fmt: skip
    np.testing.assert_allclose(two.to_numpy(), expected, rtol=1e-12)
    empty = [(k, m) for k, row in enumerate(table) for m, v in enumerate(row) if v is None]
    assert empty  # the unseen cells score the intercept's share alone
    long = card.table[card.table.term == term]
    assert len(long) == 12 and long.bin.str.contains(" x ").all()
    assert long.bin.str.endswith("(empty at training)").sum() == len(empty)
    np.testing.assert_allclose(long.points.to_numpy(), expected.ravel(), rtol=1e-12)


def test_a_pair_term_s_points_add_up_to_the_model(pair_res):
    card = pair_res.scorecard(pdo=20, base_score=600, base_odds=50)
    new = NEW[["age"]].copy()
    new["tenure"] = np.r_[np.linspace(-5, 20, 50), (NEW["age"].to_numpy()[50:] - 18) / 6.2]
    eta = pair_res.predict(new, type="link")
    factor = 20 / math.log(2)
    np.testing.assert_allclose(card.score(new), 600 - factor * (eta + math.log(50)), rtol=1e-12)
    rounded = pair_res.scorecard(rounding=0)
    assert np.abs(rounded.score(new) - card.score(new)).max() <= rounded.max_rounding_error
    assert rounded.max_rounding_error == 1.5  # three terms, the pair one of them
