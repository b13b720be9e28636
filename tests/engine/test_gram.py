"""The sufficient statistics of the one-hot design and the Gram backend (design.md §9).

What is proved here:

* the statistics kernel equals the materialised one-hot products (NumPy reference) for
  uint8/uint16/intp codes, weights and dense columns, bit for bit whatever the number
  of threads, and equals ``BinnedDesign.gram`` (the polish's Gram) bit for bit;
* statistics add over partitions of the rows and subtract (a fold's training rows);
* :func:`solve_gram` from statistics alone gives the row solver's fit (weights, offsets
  folded into z, no intercept, free blocks, dense columns), and its KKT conditions hold;
* ``backend="gram"`` gives the row backend's fits for gaussian, binomial and poisson, on
  near-collinear, tied, weighted and tiny/huge-scale data, and the cost model keeps small
  problems (the pinned ones of ``test_protocol``) on rows;
* bad input gets a clear error naming the argument.
"""

from __future__ import annotations

import numpy as np
import pytest

from binarsity_stats._datasets import simulate_collinear_sizes
from binarsity_stats.design._design import BinnedDesign
from binarsity_stats.design import _gram_stats
from binarsity_stats.engine import _gram, _solvers


def _design(n, sizes, seed=0, collinear=False):
    rng = np.random.default_rng(seed)
    codes = np.array([rng.integers(0, K, n) for K in sizes], dtype=np.uint8)
    if collinear:
        codes[1] = np.minimum(codes[0] + (rng.random(n) < 0.05), sizes[1] - 1)
    bp = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
    w = np.ones(int(bp[-1]))
    w[bp[:-1]] = 0.0
    return rng, codes, bp, w


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.intp])
def test_statistics_equal_the_one_hot_products(dtype):
    rng, codes, bp, _ = _design(500, [4, 7, 3, 5], seed=1)
    Z = rng.normal(size=(500, 2)) * 100
    w = rng.exponential(size=500)
    z = rng.normal(size=500)
    st = _gram.gram_statistics(codes.astype(dtype), bp, Z, w, z, n_threads=2)
    ref = _gram.gram_statistics_numpy(codes, bp, Z, w, z)
    for name in ("BB", "BU", "UU", "Bz", "Uz", "zz"):
        np.testing.assert_allclose(getattr(st, name), getattr(ref, name), rtol=1e-12,
                                   atol=1e-9, err_msg=name)  # fmt: skip
    one = _gram.gram_statistics(codes.astype(dtype), bp, Z, w, z, n_threads=1)
    for name in ("BB", "BU", "Bz"):
        assert np.array_equal(getattr(st, name), getattr(one, name)), name
    np.testing.assert_array_equal(st.counts, np.bincount(codes[0], w, 4).tolist()
                                  + [st.BB[k, k] for k in range(4, 19)])  # fmt: skip


def test_pair_gram_is_the_designs_gram_bit_for_bit():
    rng, codes, bp, _ = _design(3000, [6, 9, 4, 8, 5], seed=2)
    h = rng.exponential(size=3000)
    design = BinnedDesign(codes, bp)
    ref = design.gram(h)
    assert np.array_equal(_gram.bin_pair_gram(codes, bp, h, n_threads=2), ref)
    assert np.array_equal(_gram.bin_pair_gram(codes, bp, h, n_threads=1), ref)


def test_statistics_add_over_partitions_and_subtract_a_fold():
    rng, codes, bp, _ = _design(900, [5, 6, 4], seed=3)
    Z = rng.normal(size=(900, 1))
    w = rng.exponential(size=900)
    z = rng.normal(size=900)
    full = _gram.gram_statistics(codes, bp, Z, w, z)
    parts = [slice(0, 300), slice(300, 700), slice(700, 900)]
    total = sum(_gram.gram_statistics(codes[:, s], bp, Z[s], w[s], z[s]) for s in parts)
    fold = _gram.gram_statistics(codes[:, 300:700], bp, Z[300:700], w[300:700], z[300:700])
    train_rows = np.r_[0:300, 700:900]
    train = _gram.gram_statistics(codes[:, train_rows], bp, Z[train_rows], w[train_rows],
                                  z[train_rows])  # fmt: skip
    for name in ("BB", "BU", "UU", "Bz", "Uz", "zz"):
        np.testing.assert_allclose(getattr(total, name), getattr(full, name), atol=1e-10)
        np.testing.assert_allclose(getattr(full - fold, name), getattr(train, name), atol=1e-10)
    assert total.n_rows == 900 and (full - fold).n_rows == 500


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_solve_gram_is_the_row_solvers_fit(fit_intercept):
    rng, codes, bp, pw = _design(4000, [5, 7, 4, 9], seed=4, collinear=True)
    kinds = ["tv", "tv", "free", "tv"]
    Z = rng.normal(size=(4000, 2)) * 3 + 1
    s = rng.exponential(size=4000)
    off = rng.uniform(-1, 1, 4000)
    y = 1.0 * (codes[0] > 2) - 0.5 * (codes[3] > 3) + Z @ [0.3, -0.2] + off + rng.normal(size=4000)
    # the offset folded into the response: z = y − offset
    st = _gram.gram_statistics(codes, bp, Z, s, y - off)
    pw_free = pw.copy()
    pw_free[bp[2] : bp[3]] = 0.0
    for lam in (3e-2, 1e-3):
        sg = _gram.solve_gram(st, lam, pw, kinds=kinds, fit_intercept=fit_intercept, tol=1e-10)
        sr = _solvers.solve(codes, bp, y, lam=lam, penalty_weights=pw, dense=Z, sample_weight=s,
                            offset=off, fit_intercept=fit_intercept, block_kinds=kinds,
                            tol=1e-10, backend="rows")  # fmt: skip
        assert sg.converged and sg.kkt_violation <= 1e-10
        np.testing.assert_allclose(sg.coef, sr.coef, atol=1e-8)
        np.testing.assert_allclose(sg.dense_coef, sr.dense_coef, atol=1e-8)
        assert sg.intercept == pytest.approx(sr.intercept, abs=1e-8)
        # the package's gaussian F is (1/W) Σ s (η²/2 − y η): ½ Σ s y² / W less than
        # the model's ½ Σ s (z − η + offset)² / W (the same y − η)
        W = s.sum()
        assert sg.objective - 0.5 * (s @ y**2) / W == pytest.approx(sr.objective, abs=1e-10)
        # KKT from the rows at the Gram solution: the row solver's own check agrees
        prep = _solvers.Prepared(codes, bp, y, penalty_weights=pw, dense=Z, sample_weight=s,
                                 offset=off, fit_intercept=fit_intercept, block_kinds=kinds)  # fmt: skip
        ws = _solvers.Solution(sg.coef, sg.dense_coef, sg.intercept, lam, 0.0, 0.0, False, 0,
                               0, None, None)  # fmt: skip
        again = prep.solve(lam, tol=1e-9, warm_start=ws, backend="rows")
        assert again.n_iter == 0  # already optimal: no Newton step needed


def _fits(codes, bp, y, family, pw, lam_fracs, **kw):
    prep = _solvers.Prepared(codes, bp, y, family=family, penalty_weights=pw, **kw)
    lm = prep.lambda_max()
    out = []
    for frac in lam_fracs:
        r = prep.solve(lm * frac, tol=1e-9, backend="rows", max_iter=5000)
        g = prep.solve(lm * frac, tol=1e-9, backend="gram", max_iter=5000)
        assert prep.last_backend == "gram"
        out.append((r, g))
    return out


@pytest.mark.parametrize("family", ["gaussian", "binomial", "poisson"])
def test_gram_backend_equals_rows_on_weighted_offset_data(family):
    rng, codes, bp, pw = _design(6000, [8, 10, 6, 12], seed=5, collinear=True)
    kinds = ["tv", "tv", "free", "tv"]
    Z = rng.normal(size=(6000, 1)) * 50 + 1000  # huge scale dense column
    s = rng.exponential(size=6000) * 1e4
    off = rng.uniform(-0.3, 0.3, 6000)
    eta = 0.5 * (codes[0] > 3) - 0.4 * (codes[3] > 5) + 0.002 * (Z[:, 0] - 1000) + off
    y = {
        "gaussian": 1e-3 * (eta + rng.normal(size=6000)),  # tiny scale
        "binomial": (rng.random(6000) < 1 / (1 + np.exp(-eta))).astype(float),
        "poisson": rng.poisson(np.exp(eta)).astype(float),
    }[family]
    for fi in (True, False):
        for r, g in _fits(codes, bp, y, family, pw, (0.2, 0.01), dense=Z, sample_weight=s,
                          offset=off, fit_intercept=fi, block_kinds=kinds):  # fmt: skip
            assert g.converged
            assert g.objective == pytest.approx(r.objective, rel=1e-9, abs=1e-14)
            scale = max(np.abs(r.coef).max(), 1e-12)
            np.testing.assert_allclose(g.coef, r.coef, atol=1e-4 * scale)


def test_gram_backend_on_near_collinear_sizes_and_ties():
    from binarsity_stats.design._binarizer import Binarizer

    X, y = simulate_collinear_sizes(5000, seed=1)
    X[:, 0] = np.round(X[:, 0], 1)  # heavy ties in carat
    b = Binarizer(n_bins=20).fit(X)
    codes = np.ascontiguousarray(b.transform_codes(X))
    bp = np.concatenate([[0], np.cumsum(b.n_bins_)]).astype(np.intp)
    pw = np.ones(int(bp[-1]))
    pw[bp[:-1]] = 0.0
    for r, g in _fits(codes, bp, y, "gaussian", pw, (0.05, 0.002)):
        assert g.converged and r.converged
        assert g.objective == pytest.approx(r.objective, rel=1e-10)


def test_gram_backend_path_uses_one_gram():
    rng, codes, bp, pw = _design(20000, [10, 10, 10, 10, 10, 10], seed=6)
    y = 0.3 * (codes[0] > 4) + rng.normal(size=20000)
    prep = _solvers.Prepared(codes, bp, y, penalty_weights=pw)
    lm = prep.lambda_max()
    calls = []
    real = prep.prob.bin_gram
    prep.prob.bin_gram = lambda h, chunk=1 << 21: calls.append(1) or real(h, chunk)
    sols = []
    for frac in (0.5, 0.1, 0.02):
        sol = prep.solve(lm * frac, backend="gram", warm_start=sols[-1] if sols else None)
        assert sol.converged
        sols.append(sol)
    assert len(calls) == 1
    # the later λ are solved in the statistics alone: their KKT conditions hold on the rows
    prob = prep.prob
    for frac, sol in zip((0.5, 0.1, 0.02), sols, strict=True):
        prob.grad_hess(sol.eta)
        kkt, _, _ = prob.kkt(prob.r, sol.coef, lm * frac)
        assert kkt <= 1e-7 * prep.tol_scale
        rows = prep.solve(lm * frac, backend="rows")
        assert sol.objective == pytest.approx(rows.objective, rel=1e-12)


def test_cost_model_keeps_small_problems_on_rows_and_picks_the_gram_for_long_ones():
    rng, codes, bp, pw = _design(240, [6, 8, 5, 7], seed=7)
    y = rng.normal(size=240)
    prep = _solvers.Prepared(codes, bp, y, penalty_weights=pw)
    prep.solve(0.01)
    assert prep.last_backend == "rows"
    rng, codes, bp, pw = _design(100_000, [10, 10, 10], seed=8)
    y = rng.normal(size=100_000)
    prep = _solvers.Prepared(codes, bp, y, penalty_weights=pw)
    assert _gram.choose_backend(prep.prob, "auto") == "gram"
    assert _gram.choose_backend(prep.prob, "auto", sweeps=1) == "rows"
    assert _gram.choose_backend(prep.prob, "rows") == "rows"
    # a gaussian CV fold whose Gram comes from the shared statistics: the Gram backend
    from binarsity_stats.engine._path import PathData
    from binarsity_stats.families._families import get_family

    rng, codes, bp, pw = _design(25000, [50, 50, 50, 50], seed=12)
    y = rng.normal(size=25000)
    data = PathData(codes, bp, y, get_family("gaussian"), pw)
    fold = data.prepare(np.arange(22500))
    fold.solve(0.01)
    assert fold.last_backend == "gram"
    alone = _solvers.Prepared(codes, bp, y, penalty_weights=pw)
    assert _gram.choose_backend(alone.prob, "auto") == "rows"  # a single fit: not paid for


def test_statistics_threads_default(monkeypatch):
    rng, codes, bp, _ = _design(2000, [5, 6, 7, 8], seed=13)
    w = rng.exponential(size=2000)
    two = _gram.gram_statistics(codes, bp, weight=w, n_threads=2)
    monkeypatch.setattr(_gram_stats, "DEFAULT_THREADS", 1)
    assert _gram_stats._n_threads(None, 10) == 1
    one = _gram.gram_statistics(codes, bp, weight=w)
    assert np.array_equal(one.BB, two.BB) and np.array_equal(one.BU, two.BU)
    with pytest.raises(ValueError, match="n_threads"):
        _gram.gram_statistics(codes, bp, n_threads=0)


def test_bad_input_gets_a_clear_error():
    _, codes, bp, pw = _design(50, [3, 4], seed=9)
    bad = codes.copy()
    bad[1, 5] = 4
    with pytest.raises(ValueError, match="codes of block 1"):
        _gram.gram_statistics(bad, bp)
    with pytest.raises(ValueError, match="weight has 3 rows"):
        _gram.gram_statistics(codes, bp, weight=np.ones(3))
    with pytest.raises(ValueError, match="free must"):
        _gram.gram_statistics(codes, bp, free=np.ones((3, 1)))
    st = _gram.gram_statistics(codes, bp)
    other = _gram.gram_statistics(codes[:1], bp[:2])
    with pytest.raises(ValueError, match="different designs"):
        st + other
    with pytest.raises(ValueError, match="penalty_weights"):
        _gram.solve_gram(st, 0.1, np.ones(3))
    with pytest.raises(ValueError, match="lam"):
        _gram.solve_gram(st, -1.0, pw)
    with pytest.raises(ValueError, match="backend must be one of"):
        _solvers.solve(codes, bp, np.zeros(50), lam=0.1, penalty_weights=pw, backend="gpu")
    with pytest.raises(ValueError, match="CD backend"):
        _solvers.solve(codes, bp, np.zeros(50), lam=0.1, penalty_weights=pw, solver="fista",
                       backend="gram")  # fmt: skip


def test_fold_grams_are_the_training_rows_grams_and_cv_matches_rows(monkeypatch):
    from binarsity_stats.engine._cv import cross_validate
    from binarsity_stats.engine._folds import fold_ids
    from binarsity_stats.engine._path import PathData
    from binarsity_stats.engine._problem import InMemoryProblem

    rng, codes, bp, pw = _design(30000, [10, 12, 8, 10, 9, 11, 10], seed=10, collinear=True)
    Z = rng.normal(size=(30000, 1)) * 10 + 3
    s = rng.exponential(size=30000)
    y = 0.4 * (codes[0] > 4) - 0.3 * (codes[3] > 6) + 0.1 * Z[:, 0] + rng.normal(size=30000)
    from binarsity_stats.families._families import get_family

    data = PathData(codes, bp, y, get_family("gaussian"), pw, dense=Z, sample_weight=s)
    rows = np.flatnonzero(rng.random(30000) < 0.8)
    prep = data.prepare(rows)
    source = prep._gram_cache["source"]
    B, BU, UU = _gram.problem_gram(prep.prob, source())
    h = prep.prob.row_vector()
    prep.prob.grad_hess_into(prep.prob.row_vector(0.0), prep.prob.row_vector(), h)
    np.testing.assert_allclose(B, prep.prob.bin_gram(h), rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(BU, prep.prob.bin_free_gram(h), rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(UU, prep.prob.free_gram(h), rtol=1e-9, atol=1e-13)
    # a CV on the Gram backend: the fold Grams come from the shared statistics (no
    # bin_gram call) and rank the λ as the row backend does
    lm = data.lambda_max()
    grid = lm * np.geomspace(1, 1e-3, 12)
    folds = fold_ids(y, 5, random_state=0)
    out = {}
    calls = []
    real = InMemoryProblem.bin_gram
    monkeypatch.setattr(
        InMemoryProblem, "bin_gram", lambda *a, **k: calls.append(1) or real(*a, **k)
    )
    for backend in ("rows", "gram"):
        opts = {"tol": 1e-7, "backend": backend}
        out[backend] = cross_validate(data, grid, folds, opts=opts, early_stopping=False)
        if backend == "gram":
            assert not calls  # every fold's Gram (and the full path's) from the statistics
        calls.clear()
    np.testing.assert_allclose(out["gram"].fold_scores, out["rows"].fold_scores, rtol=1e-6)
    assert out["gram"].idx_min == out["rows"].idx_min


def test_glm_takes_the_backend_option():
    import pandas as pd

    from binarsity_stats import glm

    rng = np.random.default_rng(11)
    n = 20000
    df = pd.DataFrame(
        {"a": rng.normal(size=n), "b": rng.normal(size=n), "g": rng.integers(0, 3, n)}
    )
    df["y"] = np.sin(df.a) + 0.3 * (df.b > 0) + 0.2 * df.g + rng.normal(size=n)
    m = glm("y ~ bin(a) + bin(b) + C(g)", df)
    rows = m.fit(0.001, backend="rows", tol=1e-9)
    gram = m.fit(0.001, backend="gram", tol=1e-9)
    assert gram.objective == pytest.approx(rows.objective, rel=1e-10)
    np.testing.assert_allclose(gram.params, rows.params, atol=1e-6)
    path = m.fit_path(n_lambdas=5, backend="gram")
    assert len(path.lams) == 5
    with pytest.raises(ValueError, match="backend must be one of"):
        m.fit(0.001, backend="dask")
