"""design/_assemble: the one assembler of the engine's design (kinds and ω) for every door."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from binarsity_stats import BinarsityGLM, glm
from binarsity_stats.design._assemble import (
    BlockLayout,
    assemble,
    block_kinds,
    block_penalty_weights,
)
from binarsity_stats.penalty._penalty import by_chain_weights, penalty_weights


def _codes(seed=0, n=400):
    rng = np.random.default_rng(seed)
    # block 0: 5 bins; block 1: 3 free levels; block 2: a by-group block, 2 levels × 4 bins
    c0 = rng.integers(0, 5, n)
    c1 = rng.integers(0, 3, n)
    c2 = rng.integers(0, 2, n) * 4 + rng.integers(0, 4, n)
    codes = np.vstack([c0, c1, c2]).astype(np.uint8)
    return codes, np.array([0, 5, 8, 16], dtype=np.intp)


LAYOUT = [
    BlockLayout(penalized=True, chain_length=5, monotone="increasing"),
    BlockLayout(penalized=False, chain_length=3),
    BlockLayout(penalized=True, chain_length=8, chains=[(0, 4), (4, 4)]),
]


def test_kinds_and_weights_follow_each_blocks_layout():
    codes, bp = _codes()
    design, w = assemble(codes, bp, LAYOUT, "balanced")
    assert list(design.kinds) == ["increasing", "free", "tv"]
    counts = design.counts
    plain = penalty_weights("balanced", counts, bp, np.array([5, 3, 8]))
    np.testing.assert_array_equal(w[:5], plain[:5])
    assert np.all(w[5:8] == 0)  # free levels: no penalty under a named weighting
    np.testing.assert_array_equal(w[8:], by_chain_weights("balanced", counts[8:], plain[8:], [(0, 4), (4, 4)]))
    assert w[8] == 0 and w[12] == 0  # no penalty across the group's levels
    assert np.all(w[[9, 10, 11, 13, 14, 15]] > 0)


def test_a_weight_array_that_penalises_free_levels_makes_them_a_chain():
    codes, bp = _codes()
    given = np.ones(16)
    _, w = assemble(codes, bp, LAYOUT, given)
    assert block_kinds(w, bp, LAYOUT)[1] == "tv"
    given[5:8] = 0.0
    assert block_kinds(block_penalty_weights(given, np.ones(16), bp, LAYOUT), bp, LAYOUT)[1] == "free"


def test_a_layout_of_another_length_is_refused():
    codes, bp = _codes()
    with pytest.raises(ValueError, match="2 block layouts for 3 blocks"):
        assemble(codes, bp, LAYOUT[:2], "balanced")


def test_the_formula_and_the_estimator_get_the_same_kinds_and_weights():
    rng = np.random.default_rng(1)
    n = 600
    df = pd.DataFrame({
        "a": rng.normal(size=n), "k": rng.choice(["p", "q"], n), "b": rng.uniform(size=n),
        "g": rng.choice(["u", "v", "w"], n),
    })  # fmt: skip
    df["y"] = (df.a > 0) + 0.3 * (df.g == "v") + rng.normal(size=n)
    model = glm("y ~ bin(a, 6, monotone='decreasing') + C(k) + bin(b, 6, by=g)", df)
    est = BinarsityGLM(n_bins=[6, 0, 6, 0], monotone={"a": "decreasing"}, by={"b": "g"},
                       categorical_features=["k"], lam=0.01)  # fmt: skip
    problem = est._problem(df[["a", "k", "b", "g"]], df.y, None, None)
    assert list(problem.design.kinds) == list(model.binned.kinds) == ["decreasing", "free", "tv"]
    np.testing.assert_array_equal(problem.penalty_weights, model.penalty_weights)
