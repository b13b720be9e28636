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
the full step's derivatives are written into r and h (binomial and poisson alike);
6.6 since y is a view of the frame's float64 column (formulaic's copy freed with its
model matrix) and formulaic's evaluated codes are collected before the design's are
stacked (the build's peak: 7.5 → 5.1, below the solve's). The bound, 7.1 row vectors,
is 0.5 above the measure and 0.5 below the former one (7.6 fails it). What remains:
the ones (the unit weights and the intercept's column) and η, r, h, z, δη.

``fit_cv`` keeps its ten folds' problems between the λ of their paths: their codes
and y (≈ 0.9 n each) stay, their working vectors (r, h) no longer do, and unweighted
folds share the design's ones: 101 → 57 row-vector equivalents at 1e5 rows. Since
the folds share all rows' arrays (a training fold is the design with weight 0 on its
held-out rows, its weights dropped between solves and rebuilt from a byte-a-row mask;
a held-out fold and a split of fold ids are row indices made when read): 15.4, bound 20
(57 fails it). Since: the solve without the trial r and h (−2), the ten masks a bit a
row (1.25 → 0.16), the held-out indices int32 (1 → 0.5) and the binary deviance of the
result built in the buffers of its logarithms (the end of ``fit_cv`` was the peak once
the walk's was lower): 12.1; with y a view of the frame and the fold ids int8 (1 →
0.125; ``Folds.fold_ids`` still reads intp): 10.2, bound 11 (12.1 fails it). What
remains at the walk's peak: the solve's 5 working vectors, the fold's weights (1), the
held-out indices (0.5), the masks (0.16), the ones and the folds' coefficients.
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
    [("fit", "binomial", 7.1), ("fit", "poisson", 7.1), ("fit_cv", "binomial", 11)],
)
def test_the_fit_peak_at_1e5_rows_is_the_codes_and_a_few_row_vectors(step, family, bound):
    df = _frame(family=family)
    bs.glm(FORMULA, df.head(2000), family=family).fit()  # first-call set-up
    design_bytes = N * P  # uint8 codes (the defaults' 50 bins fit a byte)
    row = N * 8
    peak = _peak(lambda: getattr(bs.glm(FORMULA, df, family=family), step)())
    vectors = (peak - design_bytes) / row
    assert vectors <= bound, (step, peak / 2**20, vectors)


def test_a_float64_response_column_is_read_in_place_and_never_written():
    df = _frame(n=3000)
    res = bs.glm(FORMULA, df).fit()
    y = res.model.y
    assert np.shares_memory(y, df["y"].to_numpy())  # no copy of the frame's column
    assert not y.flags.writeable
    assert np.array_equal(y, df["y"].to_numpy())


def test_a_response_that_is_not_the_frame_column_is_a_copy():
    df = _frame(n=3000)
    df["yi"] = df["y"].astype(np.int64)  # another dtype: read as float64, a copy
    formula = FORMULA.replace("y ~", "yi ~")
    res_int = bs.glm(formula, df).fit()
    assert not np.shares_memory(res_int.model.y, df["yi"].to_numpy())
    res_expr = bs.glm(FORMULA.replace("y ~", "I(1 - y) ~"), df).fit()  # an expression
    assert not np.shares_memory(res_expr.model.y, df["y"].to_numpy())
    # the same fit as the float64 column's, bit for bit
    res = bs.glm(FORMULA, df).fit()
    assert np.array_equal(res_int.coef, res.coef)


def test_cv_fold_ids_are_kept_in_a_byte_a_row_and_read_as_intp():
    from binarsity_stats.engine._folds import Folds, fold_ids

    ids = fold_ids(np.zeros(1000), 10, random_state=0)
    folds = Folds.from_fold_ids(ids)
    assert folds._ids.dtype == np.int8 and folds._ids.nbytes == 1000
    assert folds.fold_ids.dtype == np.intp and np.array_equal(folds.fold_ids, ids)
    many = Folds.from_fold_ids(np.arange(1000) % 300)  # more folds than int8 holds
    assert many._ids.dtype == np.int16 and np.array_equal(many.fold_ids, np.arange(1000) % 300)
    train, test = folds.splits[3]
    assert np.array_equal(test, np.flatnonzero(ids == 3))
    assert np.array_equal(train, np.flatnonzero(ids != 3))
    cv = bs.glm(FORMULA, _frame(n=2000)).fit_cv(folds=3, n_lambdas=3, random_state=0)
    assert cv.fold_ids.dtype == np.intp and set(np.unique(cv.fold_ids)) == {0, 1, 2}


def test_replaying_new_rows_holds_two_copies_of_their_codes_not_three(monkeypatch):
    # the replay collects formulaic's evaluated codes (reference cycles) before it
    # stacks the design's, from _COLLECT_BYTES of codes (lowered here to 1e5 rows)
    import binarsity_stats.formula._recipe as recipe

    monkeypatch.setattr(recipe, "_COLLECT_BYTES", 1 << 20, raising=False)
    df = _frame()
    spec = bs.glm(FORMULA, df).spec
    new = df.drop(columns="y")
    spec.transform(new.head(100))  # first-call set-up
    design_bytes = N * P
    peak = _peak(lambda: spec.transform(new))
    # the model matrix's columns and the stacked codes (formulaic's evaluated columns
    # freed first) and its intercept column (0.4 of the codes' bytes): 2.54 copies of
    # the codes; 3.50 before (formulaic's evaluated columns too)
    assert peak / design_bytes <= 2.9, peak / design_bytes
