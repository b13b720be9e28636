"""The fit's peak memory at 1e5 rows (issue 22 item 5: frame + 3 × the design's bytes).

Measured with tracemalloc (every NumPy buffer, counted the same on any CPU or BLAS):
the peak that ``glm(formula, df).fit()`` and ``fit_cv()`` allocate above what was
allocated before (the data frame is the caller's), in units of the design's bytes
(the uint8 codes, n × p) and of float64 row vectors (n × 8 bytes).

What the fit needs at its peak: the codes (1 design), y and one vector of unit weights
shared by the model, its design and the intercept's column, and the solver's working
vectors (η, r, h and the line search's trial r, h; z and δη of the inner sweeps) —
about 9 row vectors. Before issue 22 item 5 the peak also held formulaic's copy of the
codes (reference cycles freed only by a later collection), two more vectors of ones
and the line search's trial η: 16.1 row vectors besides the codes at 1e5 rows; 9.6
after. The bound, 12 row vectors, is 2.4 above the measure and 4.1 below the old one.

``fit_cv`` keeps its ten folds' problems between the λ of their paths: their codes
and y (≈ 0.9 n each) stay, their working vectors (r, h) no longer do, and unweighted
folds share the design's ones: 101 → 57 row-vector equivalents at 1e5 rows. Since
the folds share all rows' arrays (a training fold is the design with weight 0 on its
held-out rows, its weights dropped between solves and rebuilt from a byte-a-row mask;
a held-out fold and a split of fold ids are row indices made when read): 15.4, bound 20
(57 fails it). What remains: the walk's solve (about 7 vectors), the fold ids, the ten
masks (1.25) and held-out indices (1), y and the ones.
"""

from __future__ import annotations

import gc
import tracemalloc

import numpy as np
import pandas as pd
import pytest

import binarsity_stats as bs

N = 100_000
P = 20


def _frame(n=N, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, P))
    eta = -0.5 + np.sin(2 * X[:, 0]) + 0.5 * (X[:, 1] > 0) - 0.7 * (X[:, 2] > 0.5)
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(P)])
    df["y"] = (rng.uniform(size=n) < 1 / (1 + np.exp(-eta))).astype(float)
    return df


FORMULA = "y ~ " + " + ".join(f"bin(x{j})" for j in range(P))


def _peak(call) -> float:
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        res = call()
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert res is not None
    return peak


@pytest.mark.parametrize("step, bound", [("fit", 12), ("fit_cv", 20)])
def test_the_fit_peak_at_1e5_rows_is_the_codes_and_a_few_row_vectors(step, bound):
    df = _frame()
    bs.glm(FORMULA, df.head(2000), family="binomial").fit()  # first-call set-up
    design_bytes = N * P  # uint8 codes (the defaults' 50 bins fit a byte)
    row = N * 8
    peak = _peak(lambda: getattr(bs.glm(FORMULA, df, family="binomial"), step)())
    vectors = (peak - design_bytes) / row
    assert vectors <= bound, (step, peak / 2**20, vectors)
