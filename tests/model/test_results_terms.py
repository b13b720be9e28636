"""Term importance (the summary's ranking) in memory linear in n, not n × terms.

``term_importance`` built the n × terms table of every row's contributions (as large
as the data frame: 160 MB at 1e6 rows and 20 terms) to average their absolute centred
values. A binned or categorical term takes one value per level, so the same sums come
from the weight of each level. Proved: the values equal the definition computed from
``term_contributions`` (sums in another order: 1e-12 relative), and tracemalloc's peak
stays below six float64 vectors of n, where the table alone is ten.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pandas as pd

import binarsity_stats as bs

N = 200_000


def test_importance_without_the_table_of_contributions():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((N, 9))
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(9)])
    df["g"] = rng.choice(["a", "b", "c"], N)
    eta = 0.8 * (X[:, 0] > 0) - 0.5 * X[:, 8] + 0.4 * (df["g"] == "b")
    df["y"] = (rng.random(N) < 1 / (1 + np.exp(-eta))).astype(float)
    w = rng.integers(1, 4, N).astype(float)
    formula = "y ~ " + " + ".join(f"bin(x{j})" for j in range(8)) + " + C(g) + x8"
    res = bs.glm(formula, df, sample_weight=w).fit()
    res.coef  # noqa: B018 - cached before measuring
    tracemalloc.start()
    try:
        got = res.term_importance()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 6 * 8 * N, f"peak {peak / 2**20:.1f} MiB"
    contrib = res.term_contributions()
    unit = res.model.unit_weight
    total = unit.sum()
    assert list(got.index) == list(contrib.columns)
    for name in contrib.columns:
        c = contrib[name].to_numpy()
        want = unit @ np.abs(c - (unit @ c) / total) / total
        np.testing.assert_allclose(got[name], want, rtol=1e-12, atol=1e-15)
