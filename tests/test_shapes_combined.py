"""Monotone chains combined with by-group terms and ordered factors (design.md §7).

A by-group block's breaks (ω = 0 at each level start) are neither penalised nor ordered
by the monotone kinds, so ``bin(x, monotone="increasing"):C(g)`` has one non-decreasing
chain per level with free level means; ``ordered(x, monotone=...)`` orders the levels'
effects. Both are checked for the order and against the unconstrained fit's objective
(a constrained optimum is never below the free one).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

import binarsity_stats as bs


def _data(n: int = 300, seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    g = rng.choice(["a", "b"], n)
    eta = np.where(g == "a", 1.0 * (x > 0), 2.0 + 0.5 * (x > 0.5))
    return pd.DataFrame({"x": x, "g": g, "y": eta + rng.normal(scale=0.8, size=n)})


def test_monotone_by_group_chains_are_each_ordered_with_free_level_means():
    df = _data()
    res = bs.glm('y ~ bin(x, 8, monotone="increasing"):C(g)', df).fit(lam=1e-4)
    (block,) = res.model.spec.blocks
    assert block.by == "g" and block.monotone == "increasing"
    assert res.model._block_kinds() == ["increasing"]
    for first, size, _ in block.chains():
        assert np.all(np.diff(res.coef[first : first + size]) >= -1e-10)
    # the level means are not ordered: level b sits far above a's whole chain
    assert res.coef[8:16].min() > res.coef[0:8].max()
    free = bs.glm("y ~ bin(x, 8):C(g)", df).fit(lam=1e-4)
    assert res.objective >= free.objective - 1e-10


def test_an_ordered_factor_can_be_monotone():
    rng = np.random.default_rng(2)
    k = rng.integers(0, 6, 400)
    df = pd.DataFrame({"r": np.array(list("ABCDEF"))[k],
                       "y": 0.3 * k + rng.normal(scale=1.5, size=400)})  # fmt: skip
    res = bs.glm('y ~ ordered(r, monotone="increasing")', df).fit(lam=1e-4)
    assert res.model._block_kinds() == ["increasing"]
    assert np.all(np.diff(res.coef) >= -1e-10)
    free = bs.glm("y ~ ordered(r)", df).fit(lam=1e-4)
    assert res.objective >= free.objective - 1e-10
