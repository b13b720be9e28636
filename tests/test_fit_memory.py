"""The fit's peak memory at 1e5 rows (issue 22 item 5: frame + 3 × the design's bytes).

Measured with tracemalloc (every NumPy buffer, counted the same on any CPU or BLAS):
the peak that ``glm(formula, df).fit()`` and ``fit_cv()`` allocate above what was
allocated before (the data frame is the caller's), in units of the design's bytes
(the uint8 codes, n × p) and of float64 row vectors (n × 8 bytes).

What the fit needs at its peak: the codes (1 design), y and one vector of unit weights
shared by the model, its design and the intercept's column, and CD's working vectors
(η, r, h, z and δη of the inner sweeps) — 7 row vectors. Before issue 22 item 5 the
peak also held formulaic's copy of the codes (reference cycles freed only by a later
collection), two more vectors of ones and the line search's trial η: 16.1 row vectors
besides the codes at 1e5 rows; then 9.6 with the line search's trial r and h; 7.6 since
the full step's derivatives are written into r and h (binomial and poisson alike). The
bound, 9 row vectors, is 1.4 above the measure and 0.6 below the former one.

``fit_cv`` keeps its ten folds' problems between the λ of their paths: their codes
and y (≈ 0.9 n each) stay, their working vectors (r, h) no longer do, and unweighted
folds share the design's ones: 101 → 57 row-vector equivalents at 1e5 rows. Since
the folds share all rows' arrays (a training fold is the design with weight 0 on its
held-out rows, its weights dropped between solves and rebuilt from a byte-a-row mask;
a held-out fold and a split of fold ids are row indices made when read): 15.4, bound 20
(57 fails it). Since: the solve without the trial r and h (−2), the ten masks a bit a
row (1.25 → 0.16), the held-out indices int32 (1 → 0.5) and the binary deviance of the
result built in the buffers of its logarithms (the end of ``fit_cv`` was the peak once
the walk's was lower): 12.1, bound 14 (15.4 fails it). What remains at the walk's peak:
the solve's 5 working vectors, the fold's weights (1), the fold ids (int64, 1), the
held-out indices (0.5), the masks (0.16), y and the ones.
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


def _frame(n=N, seed=0, family="binomial"):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, P))
    eta = -0.5 + np.sin(2 * X[:, 0]) + 0.5 * (X[:, 1] > 0) - 0.7 * (X[:, 2] > 0.5)
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(P)])
    if family == "poisson":
        df["y"] = rng.poisson(np.exp(eta / 2)).astype(float)
    else:
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


@pytest.mark.parametrize(
    "step, family, bound",
    [("fit", "binomial", 9), ("fit", "poisson", 9), ("fit_cv", "binomial", 14)],
)
def test_the_fit_peak_at_1e5_rows_is_the_codes_and_a_few_row_vectors(step, family, bound):
    df = _frame(family=family)
    bs.glm(FORMULA, df.head(2000), family=family).fit()  # first-call set-up
    design_bytes = N * P  # uint8 codes (the defaults' 50 bins fit a byte)
    row = N * 8
    peak = _peak(lambda: getattr(bs.glm(FORMULA, df, family=family), step)())
    vectors = (peak - design_bytes) / row
    assert vectors <= bound, (step, peak / 2**20, vectors)
