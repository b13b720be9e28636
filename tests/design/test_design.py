"""The binned design, the block-kind table and the solver data protocol (issue 11 §2–3).

What is proved here: ``BinnedDesign``'s gathers and histograms equal their NumPy
definitions; a fold built by ``subset(rows)`` fits bitwise as the same rows given to the
engine as raw arrays; kinds given explicitly fit bitwise as the engine's inference from
the weights (the old code path), and a ``"free"`` kind makes a block unpenalised
whatever its weights (its KKT rule: every suffix sum vanishes); a kind registered in the
table is used by the penalty, the prox, the KKT check and CD.
"""

import dataclasses

import numpy as np
import pytest

from binarsity_stats.penalty import _blocks
from binarsity_stats.penalty._blocks import KINDS, get_kind, register_kind
from binarsity_stats.design._design import BinnedDesign
from binarsity_stats.penalty._penalty import BinarsityPenalty, penalty_weights
from binarsity_stats.engine._solvers import Prepared, lambda_max, solve


def _problem(seed=0, n=300, family="binomial"):
    rng = np.random.default_rng(seed)
    sizes = np.array([6, 5, 3, 6])
    codes = np.vstack([rng.integers(0, k, n) for k in sizes]).astype(np.uint8)
    codes[3] = codes[0]  # a duplicate block: merged exactly by the engine
    bp = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
    sw = rng.uniform(0.3, 2.0, n)
    off = 0.2 * rng.normal(size=n)
    dense = np.column_stack([rng.normal(size=n) * 50 + 3, rng.uniform(size=n)])
    eta = 0.6 * (codes[0] > 2) - 0.4 * (codes[2] == 1) + off
    if family == "binomial":
        y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    elif family == "poisson":
        y = rng.poisson(np.exp(eta)).astype(float)
    else:
        y = eta + rng.normal(size=n)
    d = BinnedDesign(codes, bp, sample_weight=sw)
    w = penalty_weights("theory", d.counts, bp)
    w[bp[2] : bp[3]] = 0.0  # block 2: free levels (a C() term)
    return codes, bp, y, sw, off, dense, w


def _same(a, b):
    """Bitwise equality of two Solutions."""
    for f in ("coef", "dense_coef", "eta", "bin_counts"):
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f), err_msg=f)
    assert (a.intercept, a.objective, a.n_iter, a.n_sweeps) == (
        b.intercept, b.objective, b.n_iter, b.n_sweeps,
    )  # fmt: skip


def test_gathers_and_histograms_match_numpy():
    codes, bp, y, sw, off, dense, w = _problem()
    d = BinnedDesign(codes, bp, dense=dense, offset=off, sample_weight=sw)
    rng = np.random.default_rng(1)
    theta, beta, v, u = rng.normal(size=bp[-1]), rng.normal(size=2), y - 0.3, sw * 2
    eta = off + 0.7 + sum(theta[bp[j] + codes[j]] for j in range(4)) + dense @ beta
    np.testing.assert_allclose(d.linear_predictor(theta, beta, 0.7), eta, rtol=1e-13)

    def hist(vals):
        return np.concatenate([np.bincount(codes[j], vals, bp[j + 1] - bp[j]) for j in range(4)])

    np.testing.assert_allclose(d.counts, hist(sw), rtol=1e-13)
    np.testing.assert_allclose(d.histograms(v), hist(v), rtol=1e-13)
    a, b = d.histograms2(v, u)
    np.testing.assert_array_equal(a, d.histograms(v))
    np.testing.assert_array_equal(b, d.histograms(u))
    out = np.zeros(len(y))
    d.gather_add(theta, out, np.array([1, 3], dtype=np.intp))
    np.testing.assert_allclose(out, theta[bp[1] + codes[1]] + theta[bp[3] + codes[3]])


@pytest.mark.parametrize("solver", ["cd", "fista"])
def test_subset_fits_bitwise_as_the_same_rows_given_raw(solver):
    codes, bp, y, sw, off, dense, w = _problem(family="poisson")
    rows = np.flatnonzero(np.arange(len(y)) % 4 != 1)
    full = BinnedDesign(codes, bp, dense=dense, offset=off, sample_weight=sw)
    fold = Prepared.from_design(full.subset(rows), y[rows], family="poisson", penalty_weights=w)
    raw = Prepared(
        codes[:, rows], bp, y[rows], family="poisson", penalty_weights=w, dense=dense[rows],
        sample_weight=sw[rows], offset=off[rows],
    )  # fmt: skip
    np.testing.assert_array_equal(full.subset(rows).counts, raw.prob.design.counts)
    prev_a = prev_b = None
    for lam in (0.02, 0.005):
        prev_a = fold.solve(lam, solver=solver, tol=1e-8, warm_start=prev_a)
        prev_b = raw.solve(lam, solver=solver, tol=1e-8, warm_start=prev_b)
        _same(prev_a, prev_b)


@pytest.mark.parametrize("family", ["gaussian", "binomial", "poisson"])
@pytest.mark.parametrize("solver", ["cd", "fista"])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_explicit_kinds_fit_bitwise_as_kinds_inferred_from_weights(family, solver, fit_intercept):
    """The old engine decided "unpenalised" from all-zero weights; the kinds now say it.

    Weights, offset, dense columns, a merged duplicate block, with and without an
    intercept, along a warm-started path: the same bits.
    """
    codes, bp, y, sw, off, dense, w = _problem(family=family)
    kw = dict(family=family, penalty_weights=w, sample_weight=sw, offset=off, dense=dense,
              fit_intercept=fit_intercept)  # fmt: skip
    kinds = ["tv", "tv", "free", "tv"]
    assert lambda_max(codes, bp, y, **kw) == lambda_max(codes, bp, y, block_kinds=kinds, **kw)
    a = Prepared(codes, bp, y, **kw)
    b = Prepared(codes, bp, y, block_kinds=kinds, **kw)
    assert b.prob.penalty.kinds == tuple(kinds)
    assert a.prob.penalty.kinds == tuple(kinds)  # the inference for the raw API
    prev_a = prev_b = None
    for lam in (0.03, 0.01, 0.003):
        prev_a = a.solve(lam, solver=solver, tol=1e-8, warm_start=prev_a)
        prev_b = b.solve(lam, solver=solver, tol=1e-8, warm_start=prev_b)
        _same(prev_a, prev_b)


def test_free_kind_ignores_weights_and_meets_its_own_kkt_rule():
    codes, bp, y, sw, off, dense, w = _problem()
    w2 = w.copy()
    w2[bp[2] + 1 : bp[3]] = 5.0  # weights on the block that is declared free
    kinds = ["tv", "tv", "free", "tv"]
    a = solve(codes, bp, y, family="binomial", lam=0.01, penalty_weights=w, tol=1e-9)
    b = solve(codes, bp, y, family="binomial", lam=0.01, penalty_weights=w2, tol=1e-9,
              block_kinds=kinds)  # fmt: skip
    _same(a, b)
    # the free block's KKT rule: every suffix sum of its bin gradients is 0
    mu = 1 / (1 + np.exp(-b.eta))
    r = (mu - y) / len(y)
    g = np.bincount(codes[2], r, 3)
    S = np.cumsum(g[::-1])[::-1]
    assert np.max(np.abs(S[1:])) < 1e-8
    assert np.any(np.abs(np.diff(b.coef[bp[2] : bp[3]])) > 1e-3)  # and it is not fused


def test_penalty_rules_come_from_the_kind_table():
    bp = np.array([0, 3, 6], dtype=np.intp)
    w = np.array([0, 1.0, 1.0, 0, 1.0, 1.0])
    pen = BinarsityPenalty(bp, w, kinds=["tv", "free"])
    np.testing.assert_array_equal(pen.weights, [0, 1, 1, 0, 0, 0])
    assert list(pen.penalized_block) == [True, False]
    g = np.array([0.0, 0.5, -0.2, 0.0, 0.5, -0.2])
    # tv: (|S_l| − λω_l)₊ with S = (0.3, 0.3, −0.2); free: |S_l|
    np.testing.assert_allclose(pen.kkt_violation(g, np.zeros(6), 0.25), [0.05, 0.3])
    assert pen.lambda_max(g) == pytest.approx(0.3)
    v = np.array([1.0, 2.0, 3.0, 1.0, 2.0, 3.0])
    out = pen.prox(v, 10.0)
    np.testing.assert_allclose(out, [0, 0, 0, -1, 0, 1], atol=1e-12)


def test_the_kind_table_names_its_kinds_and_refuses_unknown_or_taken_names():
    assert {"tv", "free"} <= set(KINDS)
    assert get_kind("tv").penalized and not get_kind("free").penalized
    with pytest.raises(ValueError, match=r"unknown block kind 'monotone'.*'free'.*'tv'"):
        get_kind("monotone")
    with pytest.raises(ValueError, match="already registered"):
        register_kind(get_kind("tv"))
    with pytest.raises(ValueError, match="no block step 7"):
        register_kind(dataclasses.replace(get_kind("tv"), name="toy_step", step=7))
    codes, bp, y, sw, off, dense, w = _problem()
    with pytest.raises(ValueError, match="unknown block kind 'chain'"):
        BinnedDesign(codes, bp, kinds=["tv", "chain", "free", "tv"])
    with pytest.raises(ValueError, match="one kind per block"):
        BinnedDesign(codes, bp, kinds=["tv", "tv"])


@pytest.fixture
def toy_kind(monkeypatch):
    """A registered kind with the TV chain's rules but its own (counting) prox and KKT."""
    calls = {"kkt": 0, "prox": 0, "metric_prox": 0}
    tv = get_kind("tv")

    def counted(name):
        def rule(*args):
            calls[name] += 1
            return getattr(tv, name)(*args)

        return rule

    monkeypatch.setattr(_blocks, "KINDS", dict(KINDS))
    register_kind(dataclasses.replace(
        tv, name="toy", kkt=counted("kkt"), prox=counted("prox"),
        metric_prox=counted("metric_prox"),
    ))  # fmt: skip
    return calls


@pytest.mark.parametrize("solver", ["cd", "fista"])
def test_a_registered_kind_is_used_by_every_rule(toy_kind, solver):
    codes, bp, y, sw, off, dense, w = _problem()
    kw = dict(family="binomial", lam=0.01, penalty_weights=w, tol=1e-9, solver=solver)
    ref = solve(codes, bp, y, block_kinds=["tv", "tv", "free", "tv"], **kw)
    toy = solve(codes, bp, y, block_kinds=["toy", "tv", "free", "toy"], **kw)
    np.testing.assert_allclose(toy.coef, ref.coef, atol=1e-6)
    assert toy_kind["kkt"] > 0
    assert (toy_kind["metric_prox"] > 0) == (solver == "fista")
    bp2 = np.array([0, 3, 6], dtype=np.intp)
    pen = BinarsityPenalty(bp2, np.ones(6), kinds=["toy", "tv"])
    pen.prox(np.arange(6.0), 0.1)
    assert toy_kind["prox"] == 1


def test_cd_kernel_takes_every_block_step_from_its_kind():
    """``cd_sweep`` dispatches on the blocks' step ids (the kinds'); unknown ids are refused."""
    from binarsity_stats.kernels import _cd_fast
    from binarsity_stats.kernels._fused_lasso import work_size

    assert _blocks.KERNEL_STEPS == _cd_fast.KERNEL_STEPS
    codes, bp, y, sw, off, dense, w = _problem(family="gaussian")
    prep = Prepared(codes, bp, y, penalty_weights=w, block_kinds=["tv", "tv", "free", "tv"])
    prob = prep.prob
    assert list(prob.penalty.steps) == [get_kind(k).step for k in prob.penalty.kinds]
    n, K = len(y), int(np.diff(bp).max())
    active = np.arange(4, dtype=np.intp)
    H = prob.histogram(np.full(n, 1.0 / n))
    r = (0.1 - y) / n

    def sweep(steps):
        theta, z, de = np.zeros(bp[-1]), r.copy(), np.zeros(n)
        out = _cd_fast.cd_sweep(
            prob.codes, bp, active, 0.01 * prob.weights, H, prob.counts, theta, z, de,
            np.full(n, 1.0 / n), True, 1e-12, np.empty(7 * K + work_size(K)), steps,
        )  # fmt: skip
        return out, theta, z, de

    a, b = sweep(None), sweep(prob.penalty.steps)
    assert a[0] == b[0]
    for x, y_ in zip(a[1:], b[1:], strict=True):
        np.testing.assert_array_equal(x, y_)
    with pytest.raises(ValueError, match="block 2 has an unknown step 9"):
        sweep(np.array([0, 0, 9, 0], dtype=np.uint8))
    with pytest.raises(ValueError, match="one entry per block"):
        sweep(np.zeros(3, dtype=np.uint8))


def test_bin_gram_is_the_weighted_gram_of_the_one_hot_design():
    codes, bp, y, sw, off, dense, w = _problem(n=120)
    d = BinnedDesign(codes, bp)
    X = np.zeros((len(y), bp[-1]))
    for j in range(codes.shape[0]):
        X[np.arange(len(y)), bp[j] + codes[j]] = 1.0
    np.testing.assert_allclose(d.gram(sw), X.T @ (sw[:, None] * X), rtol=1e-13, atol=1e-13)
    np.testing.assert_array_equal(d.gram(sw, chunk=1), d.gram(sw))
