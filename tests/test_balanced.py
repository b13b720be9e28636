"""penalty_weights="balanced": ω_jk = sqrt(π̂_jk (1 − π̂_jk)), the CUSUM normalisation.

Proved here: the weights against a direct NumPy computation (weights, ties, a missing
level), invariance to the scale of the sample weights, the KKT conditions of a fit on
real data (statsmodels' fair), the optimum of a small weighted problem against cvxpy,
and that every entry (formula, estimator, path, CV, spec, summary, CLI) accepts it.
"""

import cvxpy as cp
import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import binarsity_stats as bs
from binarsity_stats.penalty._penalty import block_suffix_sums, penalty_weights


def _balanced_numpy(codes, sizes, sw, chain):
    """ω from the definition: shares of the rows in chain bins ≥ k, centred in the chain."""
    out = []
    for c, m, size in zip(codes, chain, sizes, strict=True):
        W = sw.sum()
        in_chain = sw[c < m].sum() / W
        w = np.zeros(size)
        for k in range(1, m):
            pi = sw[(c >= k) & (c < m)].sum() / W
            w[k] = np.sqrt(pi * (1 - pi / in_chain))
        out.append(w)
    return np.concatenate(out)


def test_weights_match_a_direct_computation_with_weights_and_a_missing_level():
    rng = np.random.default_rng(1)
    n = 400
    sizes = np.array([6, 9, 4])
    chain = np.array([6, 8, 4])  # block 1 has a missing level (its last)
    codes = np.vstack([rng.integers(0, s, n) for s in sizes])
    codes[0, :50] = 2  # ties: a heavy bin
    sw = rng.uniform(0.1, 3.0, n)
    bp = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
    counts = np.concatenate([np.bincount(c, weights=sw, minlength=s)
                             for c, s in zip(codes, sizes, strict=True)])  # fmt: skip
    got = penalty_weights("balanced", counts, bp, chain)
    assert_allclose(got, _balanced_numpy(codes, sizes, sw, chain), rtol=1e-12, atol=1e-15)
    # without a missing level it is sqrt(π̂ (1 − π̂)), and never above "theory"
    theory = penalty_weights("theory", counts, bp, chain)
    j0 = slice(0, 6)
    pi = theory[j0] ** 2
    assert_allclose(got[j0], np.sqrt(pi * (1 - pi)), atol=1e-15)
    assert np.all(got <= theory + 1e-15)
    assert got[bp[1] + 8] == 0.0  # the missing level's edge is not penalised


def test_balanced_is_in_every_error_message():
    with pytest.raises(ValueError, match="balanced"):
        penalty_weights("balance", np.ones(4), np.array([0, 4]))
    X = np.random.default_rng(0).normal(size=(50, 2))
    with pytest.raises(ValueError, match="balanced"):
        bs.BinarsityGLM(penalty_weights="cusum").fit(X, X[:, 0])


def _fair():
    df = bs.load_fair()
    df["any"] = (df["affairs"] > 0).astype(float)
    return df


FAIR = "any ~ bin(age, 20) + bin(yrs_married, 20) + bin(educ) + C(occupation)"


def test_weight_scale_invariance():
    df = _fair()
    sw = np.random.default_rng(2).uniform(0.5, 2.0, len(df))
    a = bs.glm(FAIR, df, family="binomial", sample_weight=sw, penalty_weights="balanced")
    b = bs.glm(FAIR, df, family="binomial", sample_weight=sw * 1e6, penalty_weights="balanced")
    assert_allclose(a.penalty_weights, b.penalty_weights, rtol=1e-13)
    assert_allclose(a.lambda_theory(), b.lambda_theory(), rtol=1e-12)
    ra, rb = a.fit(), b.fit()
    assert_allclose(ra.coef, rb.coef, rtol=1e-6, atol=1e-8)


def test_kkt_of_a_balanced_fit_on_fair_with_weights():
    df = _fair()
    sw = np.random.default_rng(3).uniform(0.5, 2.0, len(df))
    model = bs.glm(FAIR, df, family="binomial", sample_weight=sw, penalty_weights="balanced")
    res = model.fit(tol=1e-9)
    assert res.converged and res.n_jumps > 0
    # the suffix sums recomputed from the data, independent of the solver
    r = sw * (res.fittedvalues - model.y) / sw.sum()
    bp, codes = model.block_ptr, model.design.codes
    g = np.concatenate([np.bincount(codes[j], weights=r, minlength=bp[j + 1] - bp[j])
                        for j in range(len(bp) - 1)])  # fmt: skip
    S = block_suffix_sums(g, bp)
    w = model.penalty_weights
    edge = w > 0
    assert np.all(np.abs(S[edge]) <= res.lam * w[edge] + 1e-8)
    jump = res.jumps
    assert jump.any()
    assert_allclose(np.abs(S[jump]), res.lam * w[jump], rtol=1e-5)


def test_matches_cvxpy_on_a_small_weighted_problem():
    rng = np.random.default_rng(4)
    n = 120
    x = rng.uniform(size=n)
    y = 1.0 * (x > 0.3) - 1.0 * (x > 0.8) + 0.5 * rng.standard_normal(n)
    sw = rng.uniform(0.2, 2.0, n)
    df = pd.DataFrame({"x": x, "y": y})
    model = bs.glm("y ~ bin(x, 8)", df, sample_weight=sw, penalty_weights="balanced")
    lam = 0.02
    res = model.fit(lam, tol=1e-10)
    codes, w, counts = model.design.codes[0], model.penalty_weights, model.bin_counts
    X = np.zeros((n, 8))
    X[np.arange(n), codes] = 1.0
    theta, b0 = cp.Variable(8), cp.Variable()
    eta = X @ theta + b0
    loss = cp.sum(cp.multiply(sw, 0.5 * cp.square(eta) - cp.multiply(y, eta))) / sw.sum()
    pen = cp.sum(cp.multiply(w[1:], cp.abs(cp.diff(theta))))
    prob = cp.Problem(cp.Minimize(loss + lam * pen), [counts @ theta == 0])
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    assert_allclose(res.coef, theta.value, atol=2e-5)
    assert_allclose(res.intercept, b0.value, atol=2e-5)


def test_every_entry_accepts_balanced(tmp_path):
    df = _fair()
    X = df[["age", "yrs_married", "educ"]]
    model = bs.glm("any ~ bin(age, 20) + bin(yrs_married, 20) + bin(educ)", df,
                   family="binomial", penalty_weights="balanced")  # fmt: skip
    est = bs.BinarsityClassifier(lam="theory", n_bins=20, penalty_weights="balanced")
    est.fit(X, df["any"])
    # the estimator's weights are the formula's (same bins: same shares)
    assert_allclose(est.penalty_weights_[: est.block_ptr_[1]],
                    model.penalty_weights[: model.block_ptr[1]], rtol=1e-12)  # fmt: skip
    res = model.fit()
    assert_allclose(res.lam, est.lam_, rtol=1e-10)
    assert "balanced" in str(res.summary())
    assert res.to_spec()["penalty"] == {"weights": "balanced"}
    assert est.to_spec()["penalty"] == {"weights": "balanced"}
    assert_allclose(bs.from_spec(res.to_spec()).predict(df), res.predict(df), rtol=1e-14)
    path = model.fit_path(n_lambdas=5)
    assert len(path.lams) == 5
    cv = model.fit_cv(folds=3, n_lambdas=8, random_state=0)
    assert cv.best_.model.penalty_kind == "balanced"


def test_cli_accepts_balanced(capsys):
    from binarsity_stats._cli import build_parser

    args = build_parser().parse_args(
        ["fit", "y ~ bin(x)", "--data", "data.csv", "--penalty-weights", "balanced"]
    )
    assert args.penalty_weights == "balanced"
