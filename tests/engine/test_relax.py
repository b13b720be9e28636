"""Relaxed fits (glmnet's relax=TRUE) and adaptive weights (the adaptive lasso's two stages).

Proved here: the unpenalised refit on the selected segments equals statsmodels' GLM on
the segment indicators (binomial with weights and an offset, gaussian with a linear
term); γ = 1 is the penalised fit and the mix is linear; the relaxed CV's γ = 1 curve is
the penalised CV's; adaptive weights follow their formula, keep fused edges fused, and
the second stage's optimum satisfies its KKT conditions; bad arguments are refused.
"""

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from numpy.testing import assert_allclose

import binarsity_stats as bs
from binarsity_stats.penalty._penalty import block_suffix_sums
from binarsity_stats.engine._relax import FUSED_FACTOR, adaptive_weights, segment_maps


def _data(n=1500, seed=0):
    rng = np.random.default_rng(seed)
    x, z, u = rng.uniform(size=(3, n))
    eta = 1.0 * (x > 0.3) - 1.2 * (x > 0.7) + 0.8 * (z > 0.5) + 0.5 * u - 0.4
    off = 0.2 * rng.standard_normal(n)
    y = rng.binomial(1, 1 / (1 + np.exp(-eta - off))).astype(float)
    g = rng.choice(["a", "b", "c"], n)
    return pd.DataFrame({"x": x, "z": z, "u": u, "g": g, "y": y, "off": off,
                         "yg": eta + rng.standard_normal(n)})  # fmt: skip


def _segment_frame(res):
    """The indicator columns of the fit's segments (the first segment of a block dropped)."""
    m = res.model
    cols = {}
    for j in range(len(m.spec.blocks)):
        s, e = int(m.block_ptr[j]), int(m.block_ptr[j + 1])
        w = m.penalty_weights[s:e]
        seg = segment_maps(res.solution.coef[s:e], w, np.array([0, e - s]))[0]
        row_seg = seg[m.design.codes[j]]
        for k in range(1, int(seg[-1]) + 1):
            cols[f"b{j}s{k}"] = (row_seg == k).astype(float)
    return pd.DataFrame(cols)


def test_relax_zero_is_statsmodels_on_the_segments_binomial_weights_offset():
    df = _data()
    sw = np.random.default_rng(5).uniform(0.5, 2.0, len(df))
    model = bs.glm("y ~ bin(x, 20) + bin(z, 20) + C(g) + u", df, family="binomial",
                   sample_weight=sw, offset="off", penalty_weights="balanced")  # fmt: skip
    res = model.fit(tol=1e-9)
    assert res.n_jumps >= 2
    relaxed = res.relax(0.0, tol=1e-10)
    X = sm.add_constant(pd.concat([_segment_frame(res), df[["u"]]], axis=1))
    ref = sm.GLM(df["y"], X, family=sm.families.Binomial(), var_weights=sw,
                 offset=df["off"]).fit(tol=1e-12)  # fmt: skip
    assert_allclose(relaxed.fittedvalues, ref.fittedvalues, rtol=1e-6)
    assert_allclose(relaxed.dense_coef, ref.params["u"], rtol=1e-6)
    # the relaxed fit keeps the cut-points, the constraint and the λ
    assert relaxed.n_jumps <= res.n_jumps
    assert not np.any(relaxed.jumps & ~res.jumps)
    for j in range(len(model.block_ptr) - 1):
        s, e = model.block_ptr[j], model.block_ptr[j + 1]
        assert abs(model.bin_counts[s:e] @ relaxed.coef[s:e]) < 1e-6 * model.bin_counts.sum()
    assert relaxed.lam == res.lam and relaxed.relax_gamma == 0.0
    assert relaxed.deviance <= res.deviance  # the unpenalised fit on the same segments


def test_gamma_mixes_linearly_and_one_is_the_penalised_fit():
    df = _data(seed=1)
    model = bs.glm("yg ~ bin(x, 30) + bin(z, 30) + u", df)
    res = model.fit()
    one, zero, half = res.relax(1.0), res.relax(0.0, tol=1e-11), res.relax(0.5, tol=1e-11)
    assert_allclose(one.coef, res.coef, rtol=0, atol=0)
    assert one.intercept == res.intercept
    assert_allclose(half.coef, 0.5 * (one.coef + zero.coef), atol=1e-14)
    assert_allclose(half.dense_coef, 0.5 * (one.dense_coef + zero.dense_coef), atol=1e-14)
    # relaxing a relaxed fit starts again from the penalised one
    assert_allclose(half.relax(0.0, tol=1e-11).coef, zero.coef, atol=0)
    # gaussian γ = 0: least squares on the segments (statsmodels OLS)
    X = sm.add_constant(pd.concat([_segment_frame(res), df[["u"]]], axis=1))
    ols = sm.OLS(df["yg"], X).fit()
    assert_allclose(zero.fittedvalues, ols.fittedvalues, rtol=1e-8, atol=1e-8)
    # shortcuts and reports
    assert_allclose(model.fit(relax=0.5, tol=1e-11).coef, half.coef, atol=1e-9)
    assert "relaxed, gamma=0.5" in str(half.summary())
    spec = half.to_spec()
    assert spec["penalty"] == {"weights": "balanced", "relax": 0.5}  # the default weights
    assert_allclose(bs.from_spec(spec).predict(df), half.predict(df), rtol=1e-14)


def test_relaxed_cv_chooses_gamma_and_its_gamma_one_curve_is_the_penalised_cv():
    df = _data(seed=2)
    model = bs.glm("yg ~ bin(x, 30) + bin(z, 30)", df, penalty_weights="balanced")
    plain = model.fit_cv(folds=4, n_lambdas=15, random_state=0)
    cv = model.fit_cv(folds=4, n_lambdas=15, random_state=0, relax=True)
    assert cv.gammas == (0.0, 0.25, 0.5, 0.75, 1.0)
    assert_allclose(cv.relaxed_scores[-1], plain.fold_scores, rtol=1e-10)
    g = cv.gammas.index(cv.gamma_min)
    best = np.nanmin(np.nanmean(cv.relaxed_scores, axis=1), axis=1)
    assert best[g] == best.min()
    assert cv.best_.relax_gamma == cv.gamma_min and cv.best_.lam == cv.lam_min
    assert "mean_gamma_0.5" in cv.to_frame()
    assert cv.penalized_cv.lam_min == plain.lam_min
    assert_allclose(cv.penalized_cv.best_.coef, plain.best_.coef, rtol=1e-12)
    # on two true steps the relaxed fit keeps fewer cuts than the penalised λ_min fit
    assert cv.best_.n_jumps <= plain.best_.n_jumps
    two = model.fit_cv(folds=4, n_lambdas=15, random_state=0, relax=[0.0, 1.0], n_jobs=2)
    assert two.gammas == (0.0, 1.0)
    assert_allclose(two.relaxed_scores, cv.relaxed_scores[[0, -1]], rtol=1e-10)


def test_adaptive_weights_formula_and_fused_edges_stay_fused():
    df = _data(seed=3)
    model = bs.glm("yg ~ bin(x, 30) + bin(z, 30) + C(g)", df, penalty_weights="balanced")
    first = model.fit()
    second = first.adaptive()
    w0, w1, theta = model.penalty_weights, second.penalty_weights, first.solution.coef
    jump = first.jumps
    diff = np.abs(np.diff(theta, prepend=0.0))
    assert_allclose(w1[jump], w0[jump] / diff[jump], rtol=1e-12)
    fused = (w0 > 0) & ~jump
    assert_allclose(w1[fused], FUSED_FACTOR * w1[jump].max())
    assert np.all(w1[w0 == 0] == 0)  # C() levels and block starts stay free
    assert second.penalty_kind == "adaptive" and model.penalty_kind == "balanced"
    # at a small λ the second stage keeps no cut the first stage did not have
    res = second.fit(second.lambda_max() * 1e-3, tol=1e-9)
    assert not np.any(res.jumps & ~jump)
    # and it is optimal for its weights (KKT from the data)
    r = (res.fittedvalues - model.y) / len(df)
    bp, codes = model.block_ptr, model.design.codes
    g = np.concatenate([np.bincount(codes[j], weights=r, minlength=bp[j + 1] - bp[j])
                        for j in range(len(bp) - 1)])  # fmt: skip
    S = block_suffix_sums(g, bp)
    edge = w1 > 0
    assert np.all(np.abs(S[edge]) <= res.lam * w1[edge] + 1e-8)
    assert "adaptive" in str(res.summary())
    with pytest.raises(ValueError, match="theory"):
        second.fit()
    cv = second.fit_cv(folds=3, n_lambdas=10, random_state=0)
    assert cv.best_.model.penalty_kind == "adaptive"
    power2 = model.adaptive(first, power=2.0).penalty_weights
    assert_allclose(power2[jump], w0[jump] / diff[jump] ** 2, rtol=1e-12)


def test_bad_arguments_are_refused_by_name():
    df = _data(n=300, seed=4)
    model = bs.glm("yg ~ bin(x, 10)", df)
    res = model.fit(0.01)
    with pytest.raises(ValueError, match="gamma"):
        res.relax(1.5)
    with pytest.raises(TypeError, match="gamma"):
        res.relax("0")
    with pytest.raises(ValueError, match="relax"):
        model.fit(0.01, relax=-0.1)
    with pytest.raises(TypeError, match="relax"):
        model.fit_cv(folds=3, relax="yes")
    with pytest.raises(ValueError, match="relax"):
        model.fit_cv(folds=3, relax=[])
    with pytest.raises(ValueError, match="relaxed fit"):
        res.relax(0.5).bootstrap(5)
    with pytest.raises(ValueError, match="power"):
        res.adaptive(power=0)
    with pytest.raises(TypeError, match="first_stage"):
        model.adaptive("fit")
    other = bs.glm("yg ~ bin(x, 10)", df).fit(0.01)
    with pytest.raises(ValueError, match="first_stage"):
        model.adaptive(other)
    with pytest.raises(ValueError, match="theta"):
        adaptive_weights(np.ones(3), np.ones(4), np.array([0, 3]))
