"""``bs.rank_pairs(results)``: pairs of binned features ranked by the pair term's λ_max.

What is proven here: with a true two-feature step interaction on (x1, x3) among five
features (n = 3000) the pair is ranked first, and its score relative to the fit's λ is
above the top score of the additive (null) truth; every score equals the λ_max of the
pair term built through the formula (``bin(a, 16):bin(b, 16)``) and read from its model
matrix at θ = 0 with the main effects at the fit (gaussian, binomial, poisson, with
weights and an offset) to 1e-8 relative; the scores do not depend on which feature is
named first (in the candidates or in the formula); integer weights score as replicated
rows; the offset is part of the gradient; bad input is refused by name.
"""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest

import binarsity_stats as bs
from binarsity_stats.penalty._grid import grid_lambda_max

MAINS = "y ~ bin(x1) + bin(x2) + bin(x3) + bin(x4) + bin(x5)"


def _frame(seed, interaction=1.0, n=3000, family="gaussian", offset=False):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.uniform(size=(n, 5)), columns=["x1", "x2", "x3", "x4", "x5"])
    eta = (0.6 * (df.x1 > 0.5) - 0.4 * (df.x2 > 0.3) + 0.3 * (df.x4 > 0.7)
           + interaction * ((df.x1 > 0.4) & (df.x3 > 0.6))).to_numpy()  # fmt: skip
    df["o"] = 0.3 * rng.normal(size=n) if offset else 0.0
    if family == "gaussian":
        df["y"] = eta + df.o + rng.normal(size=n)
    elif family == "binomial":
        df["y"] = rng.binomial(1, 1 / (1 + np.exp(-(eta + df.o - 0.3)))).astype(float)
    else:
        df["y"] = rng.poisson(np.exp(0.5 * eta + df.o)).astype(float)
    df["w"] = rng.integers(1, 4, n).astype(float)
    return df


@pytest.mark.parametrize("seed", [0, 1])
def test_the_true_pair_is_ranked_first_at_the_defaults(seed):
    res = bs.glm(MAINS, _frame(seed)).fit()  # lam="theory", 50 bins, balanced weights
    table = bs.rank_pairs(res)
    assert len(table) == 10 and list(table["rank"]) == list(range(1, 11))
    assert tuple(table.loc[0, ["feature_a", "feature_b"]]) == ("x1", "x3")
    assert table.loc[0, "score"] > 1.5 * table.loc[1, "score"]
    assert np.all(np.diff(table["score"].to_numpy()) <= 0)
    np.testing.assert_allclose(table["score_to_lam"], table["score"] / res.lam, rtol=1e-15)
    assert table.loc[0, "n_cells"] == 256


def test_the_null_truth_scores_below_the_interaction():
    top = []
    for interaction in (1.0, 0.0):
        cv = bs.glm(MAINS, _frame(5, interaction)).fit_cv(n_jobs=1, folds=5)
        table = bs.rank_pairs(cv)  # the fit at lam_1se
        top.append(table.loc[0, "score_to_lam"])
    assert top[0] > 1.5 * top[1]


def _brute_force(res, family, pair, weighted, offset):
    """The pair term through the formula: λ_max of its grid at θ = 0, from the model matrix."""
    df = res.model._data
    a, b = pair
    formula = MAINS + f" + bin({a}, 16):bin({b}, 16)" + (" + offset(o)" if offset else "")
    m2 = bs.glm(formula, df, family=family, sample_weight="w" if weighted else None)
    j = [blk.is_pair for blk in m2.spec.blocks].index(True)
    binned = m2.binned
    bp = binned.block_ptr
    n, d = binned.n_rows, int(bp[-1])
    X = np.zeros((n, d))
    for k in range(binned.n_blocks):
        X[np.arange(n), bp[k] + binned.codes[k]] = 1.0
    # the fit's η (main effects at the fit, the pair at θ = 0), the average loss' gradient
    theta = np.concatenate([res.solution.coef, np.zeros(d - len(res.solution.coef))])
    off = df["o"].to_numpy() if offset else 0.0
    eta = X @ theta + res.intercept + off
    mu = {"gaussian": eta, "binomial": 1 / (1 + np.exp(-eta)), "poisson": np.exp(eta)}[family]
    s = df["w"].to_numpy() if weighted else np.ones(n)
    G = X.T @ (s * (mu - df["y"].to_numpy())) / s.sum()
    grid = m2.prepare().prob.penalty.grids[j]
    cells = slice(bp[j], bp[j] + grid.n_cells)
    return grid_lambda_max(grid, G[cells], (s @ X)[cells])


@pytest.mark.parametrize(
    "family, weighted, offset",
    [("gaussian", False, False), ("binomial", True, False), ("poisson", False, True),
     ("gaussian", True, True)],
)  # fmt: skip
def test_scores_equal_the_pair_terms_lambda_max_from_its_model_matrix(family, weighted, offset):
    df = _frame(3, family=family, offset=offset)
    model = bs.glm(MAINS + (" + offset(o)" if offset else ""), df, family=family,
                   sample_weight="w" if weighted else None)  # fmt: skip
    res = model.fit(lam=0.05 * model.lambda_max())
    pairs = [("x1", "x3"), ("x2", "x5")]
    table = bs.rank_pairs(res, candidates=pairs).set_index(["feature_a", "feature_b"])
    for pair in pairs:
        ref = _brute_force(res, family, pair, weighted, offset)
        assert ref > 0
        assert abs(table.loc[pair, "score"] - ref) <= 1e-8 * ref


def test_the_order_of_the_names_does_not_change_the_scores():
    df = _frame(4)
    res = bs.glm(MAINS, df).fit(lam=0.01)
    one = bs.rank_pairs(res, candidates=[("x1", "x3"), ("x4", "x2")])
    two = bs.rank_pairs(res, candidates=[("x3", "x1"), ("x2", "x4")])
    np.testing.assert_array_equal(one["score"], two["score"])
    # the features in another order in the formula: the same fit, the same scores
    swapped = bs.glm("y ~ bin(x3) + bin(x2) + bin(x1) + bin(x5) + bin(x4)", df).fit(lam=0.01)
    three = bs.rank_pairs(swapped, candidates=[("x1", "x3"), ("x2", "x4")])
    assert set(zip(three.feature_a, three.feature_b)) == {("x3", "x1"), ("x2", "x4")}
    np.testing.assert_allclose(np.sort(three["score"]), np.sort(one["score"]), rtol=1e-6)


def test_integer_weights_score_as_replicated_rows():
    df = _frame(6, n=1500)
    rep = df.loc[df.index.repeat(df["w"].astype(int))].reset_index(drop=True)
    lam = 0.01
    weighted = bs.glm(MAINS, df, sample_weight="w", weights_kind="freq").fit(lam=lam, tol=1e-10)
    repeated = bs.glm(MAINS, rep).fit(lam=lam, tol=1e-10)
    tw, tr = bs.rank_pairs(weighted), bs.rank_pairs(repeated)
    assert list(zip(tw.feature_a, tw.feature_b)) == list(zip(tr.feature_a, tr.feature_b))
    np.testing.assert_allclose(tw["score"], tr["score"], rtol=1e-6)
    plain = bs.rank_pairs(bs.glm(MAINS, df).fit(lam=lam, tol=1e-10))
    assert np.max(np.abs(plain["score"].to_numpy() - tw["score"].to_numpy())) > 1e-4


def test_the_offset_is_part_of_the_gradient():
    df = _frame(7, family="poisson", offset=True)
    lam = 0.01
    with_off = bs.glm(MAINS + " + offset(o)", df, family="poisson").fit(lam=lam)
    without = bs.glm(MAINS, df, family="poisson").fit(lam=lam)
    a = bs.rank_pairs(with_off, candidates=[("x1", "x3")])["score"].iloc[0]
    b = bs.rank_pairs(without, candidates=[("x1", "x3")])["score"].iloc[0]
    assert abs(a - b) > 1e-3 * a
    assert abs(a - _brute_force(with_off, "poisson", ("x1", "x3"), False, True)) <= 1e-8 * a


def test_a_saved_model_ranks_with_its_data():
    df = _frame(8, n=800)
    res = bs.glm(MAINS, df).fit(lam=0.01)
    back = pickle.loads(pickle.dumps(res))
    with pytest.raises(ValueError, match="pass data="):
        bs.rank_pairs(back)
    pd.testing.assert_frame_equal(bs.rank_pairs(back, data=df), bs.rank_pairs(res))


def test_bad_input_is_refused_by_name():
    df = _frame(9, n=600)
    df["g"] = np.where(df.x5 > 0.5, "a", "b")
    res = bs.glm(MAINS, df).fit(lam=0.01)
    with pytest.raises(ValueError, match=r"'x9' in the candidate.*not a binned feature"):
        bs.rank_pairs(res, candidates=[("x1", "x9")])
    with pytest.raises(ValueError, match="with itself"):
        bs.rank_pairs(res, candidates=[("x1", "x1")])
    with pytest.raises(ValueError, match="n_bins"):
        bs.rank_pairs(res, n_bins=1)
    with pytest.raises(ValueError, match="at least two binned features.*'x1'"):
        bs.rank_pairs(bs.glm("y ~ bin(x1) + x2 + C(g)", df).fit(lam=0.01))
    with pytest.raises(ValueError, match="at least two binned features"):
        bs.rank_pairs(bs.glm("y ~ x1 + C(g)", df).fit(lam=0.01))
    with pytest.raises(TypeError, match="BinarsityResults"):
        bs.rank_pairs(df)
    adaptive = res.model.adaptive(res).fit(lam=0.01)
    with pytest.raises(ValueError, match="penalty_weights are 'adaptive'"):
        bs.rank_pairs(adaptive)
    df["t"] = np.random.default_rng(0).exponential(size=len(df))
    df["e"] = 1
    cox = bs.glm("Surv(t, e) ~ bin(x1) + bin(x2)", df, family="cox").fit(lam=0.01)
    with pytest.raises(ValueError, match="'cox'.*working gradient"):
        bs.rank_pairs(cox)


def test_the_true_pair_is_ranked_first_at_1e5_rows():
    res = bs.glm(MAINS, _frame(12, interaction=0.2, n=100_000)).fit()
    table = bs.rank_pairs(res)
    assert tuple(table.loc[0, ["feature_a", "feature_b"]]) == ("x1", "x3")
    assert table.loc[0, "score"] > 2 * table.loc[1, "score"]
