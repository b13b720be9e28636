"""The refit from sufficient statistics (``model/_refit_glm.py``, issue 22 item 5).

What is proved here:

* **It is statsmodels' GLM.** With the threshold lowered so that small data take the
  sufficient-statistics path, every statistic users read of a refit — coefficients,
  standard errors, z/t statistics, p-values, intervals, covariance, log-likelihood,
  deviance, null deviance, AIC, BIC, df, scale, number of rows, Pearson's χ², fitted
  values, the five kinds of residuals, the summary's numbers, ``get_prediction``'s
  frame (training and new rows) and ``predict(se_fit=True)`` — equals the statsmodels
  GLM that ``refit()`` fits below the threshold on the same model (run to a deviance
  change of 1e-13 relative), for gaussian,
  binomial, poisson and gamma, unweighted and with analytic or frequency weights, with
  an offset, without an intercept, and rank-deficient (the same parameters named
  non-identified, the same NaN standard errors, the identified ones equal). The margin:
  both IRLS stop where a further step moves no estimate beyond ~1e-10 relative
  (statsmodels' deviance rule, ours on the linear predictor), so 1e-7 relative
  (quantities near 0 against the largest of their kind).
* **It never builds the n × k design.** At 1e5 rows (the default threshold, so the path
  users get), ``refit()`` and ``get_prediction()`` on all rows allocate at their peak
  well under the n × k float64 design (tracemalloc), and equal the statsmodels refit on
  the explicit design.
"""

from __future__ import annotations

import re
import tracemalloc
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from numpy.testing import assert_allclose

import binarsity_stats as bs
from binarsity_stats.model import _refit_glm
from binarsity_stats.model._refit_glm import GLMRefit

RTOL = 1e-7


def _data(n=1500, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.normal(size=n), "b": rng.uniform(size=n),
                       "z": rng.normal(size=n), "g": rng.choice(list("pqr"), n),
                       "w": rng.uniform(0.3, 3.0, n), "f": rng.integers(1, 4, n).astype(float),
                       "t": rng.uniform(0.5, 2.0, n)})  # fmt: skip
    eta = 0.4 * np.sin(2 * df.a) + 0.3 * (df.b > 0.5) + 0.1 * df.z + 0.2 * (df.g == "q")
    df["yg"] = eta + rng.normal(size=n)
    df["yb"] = (rng.uniform(size=n) < 1 / (1 + np.exp(-eta))).astype(float)
    df["yp"] = rng.poisson(np.exp(eta) * df.t)
    df["ym"] = rng.gamma(2.0, np.exp(eta) / 2.0)
    df["z2"] = 2.0 * df.z  # collinear with z
    return df


RESPONSE = {"gaussian": "yg", "binomial": "yb", "poisson": "yp", "gamma": "ym"}


def _both(res, monkeypatch):
    """The refit of the same fit by statsmodels (default threshold) and by statistics."""
    glm_fit = sm.GLM.fit

    def tight(self, *args, **kwargs):
        # statsmodels from its own start to a deviance change of 1e-13 relative (the
        # refit starts it at a solution of the normal equations whose deviance is within
        # 1e-12, where one more step changes the deviance too little to be seen: the
        # estimates of a non-canonical link, gamma's log, then sit ~1e-8 from the optimum)
        kwargs.pop("start_params", None)
        return glm_fit(self, *args, **{**kwargs, "atol": 0.0, "rtol": 1e-13, "maxiter": 1000})

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with monkeypatch.context() as mp:
            mp.setattr(sm.GLM, "fit", tight)
            ref_sm = res.refit()
        with monkeypatch.context() as mp:
            mp.setattr(_refit_glm, "GRAM_MIN_CELLS", 0)
            ref_gram = res.refit()
    assert isinstance(ref_sm.sm_results.model, sm.GLM)
    assert isinstance(ref_gram.sm_results, GLMRefit)
    return ref_sm, ref_gram


def _close(a, b, rtol=RTOL, atol=0.0, what=""):
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    assert a.shape == b.shape, what
    assert_allclose(b, a, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


def _compare(ref_sm, ref_gram, new):
    a, b = ref_sm, ref_gram
    assert a.names == b.names and a.non_identified == b.non_identified
    scale = float(np.max(np.abs(a.params.dropna())))  # params near 0: an absolute margin
    _close(a.params, b.params, atol=RTOL * scale, what="params")
    ident = [k for k in a.names if k not in a.non_identified]
    _close(a.bse, b.bse, what="bse")
    _close(a.tvalues[ident], b.tvalues[ident], atol=RTOL, what="tvalues")
    _close(a.pvalues[ident], b.pvalues[ident], atol=RTOL, what="pvalues")
    _close(a.conf_int(), b.conf_int(), atol=RTOL * scale, what="conf_int")
    cov_a, cov_b = np.asarray(a.cov_params()), np.asarray(b.cov_params())
    _close(cov_a, cov_b, atol=RTOL * np.max(np.abs(cov_a)), what="cov_params")
    for name in ("llf", "deviance", "null_deviance", "aic", "bic", "bic_llf", "scale",
                 "pearson_chi2", "llnull"):  # fmt: skip
        _close(getattr(a, name), getattr(b, name), what=name)
    for name in ("df_model", "df_resid", "nobs", "use_t", "converged"):
        assert getattr(a, name) == getattr(b, name), name
    for name in ("fittedvalues", "mu", "resid_response", "resid_pearson", "resid_deviance",
                 "resid_working", "resid_anscombe"):  # fmt: skip
        va = np.asarray(getattr(a, name))
        _close(va, getattr(b, name), atol=RTOL * np.max(np.abs(va)), what=name)
    for rows in (None, new):
        fa = a.get_prediction(rows).summary_frame(alpha=0.1)
        fb = b.get_prediction(rows).summary_frame(alpha=0.1)
        assert list(fa.columns) == list(fb.columns)
        _close(fa, fb, atol=RTOL * np.max(np.abs(fa.to_numpy())), what="get_prediction")
        pa = a.predict(rows, type="link", se_fit=True)
        _close(pa, b.predict(rows, type="link", se_fit=True), atol=RTOL, what="predict")

    # the same report, line by line, its numbers compared above (digits masked: a last
    # printed digit may round either way within the margin; date, time, iterations differ)
    def layout(ref):
        return [
            re.sub(r"[-+]?\d[\d.e+-]*", "#", line)
            for line in str(ref.summary()).splitlines()
            if not line.startswith(("Date:", "Time:", "No. Iterations:"))
        ]

    assert layout(a) == layout(b)
    assert "No. Iterations:" in str(b.summary())


@pytest.mark.parametrize("family", ["gaussian", "binomial", "poisson", "gamma"])
@pytest.mark.parametrize("weights", [None, "analytic", "freq"])
def test_the_statistics_refit_equals_statsmodels_glm(family, weights, monkeypatch):
    df = _data()
    kw = {}
    if weights is not None:
        kw = {"sample_weight": "w" if weights == "analytic" else "f", "weights_kind": weights}
    off = " + offset(np.log(t))" if family in ("poisson", "gamma") else ""
    model = bs.glm(f"{RESPONSE[family]} ~ bin(a, 12) + bin(b, 6) + C(g) + z{off}", df,
                   family=family, **kw)  # fmt: skip
    res = model.fit(1e-3)
    ref_sm, ref_gram = _both(res, monkeypatch)
    _compare(ref_sm, ref_gram, df.iloc[::7])


@pytest.mark.parametrize("family", ["gaussian", "poisson"])
def test_without_intercept_and_rank_deficient(family, monkeypatch):
    df = _data(seed=1)
    y = RESPONSE[family]
    res = bs.glm(f"{y} ~ 0 + C(g) + bin(a, 8) + z", df, family=family).fit(1e-3)
    _compare(*_both(res, monkeypatch), df.iloc[::5])
    # z and z2 = 2 z: both non-identified, their SEs NaN, the rest statsmodels'
    res = bs.glm(f"{y} ~ bin(a, 8) + C(g) + z + z2", df, family=family,
                 sample_weight="w").fit(1e-3)  # fmt: skip
    ref_sm, ref_gram = _both(res, monkeypatch)
    assert ref_gram.non_identified == ["z", "z2"]
    assert ref_gram.bse[["z", "z2"]].isna().all()
    _compare(ref_sm, ref_gram, df.iloc[::5])


def test_sample_splitting_takes_the_same_path(monkeypatch):
    df = _data(seed=2)
    res = bs.glm("yb ~ bin(a, 10) + bin(b, 5) + z", df, family="binomial").fit(1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = res.refit(split=0.5, random_state=3)
        monkeypatch.setattr(_refit_glm, "GRAM_MIN_CELLS", 0)
        b = res.refit(split=0.5, random_state=3)
    assert isinstance(b.sm_results, GLMRefit) and b.nobs == a.nobs == 750
    _close(a.params, b.params, atol=RTOL, what="params")
    _close(a.bse, b.bse, what="bse")
    _close(a.llf, b.llf, what="llf")


def _big(n=100_000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    eta = -0.5 + np.sin(2 * X[:, 0]) + 0.5 * (X[:, 1] > 0) + 0.3 * X[:, 2]
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(5)])
    df["y"] = (rng.uniform(size=n) < 1 / (1 + np.exp(-eta))).astype(float)
    return df


def test_at_1e5_rows_the_refit_and_its_predictions_never_build_the_n_by_k_design():
    df = _big()
    res = bs.glm("y ~ " + " + ".join(f"bin(x{j}, 30)" for j in range(5)), df,
                 family="binomial").fit(1e-5)  # fmt: skip
    n = len(df)
    tracemalloc.start()
    try:
        ref = res.refit()
        _, peak_refit = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        frame = ref.get_prediction().summary_frame()
        _, peak_pred = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    k = len(ref.names)
    assert k >= 60
    design_bytes = n * k * 8
    assert peak_refit < design_bytes / 4, (peak_refit, design_bytes)
    assert peak_pred < design_bytes / 4, (peak_pred, design_bytes)
    assert isinstance(ref.sm_results, GLMRefit)  # the default path at 1e5 rows
    # and it is statsmodels' GLM on the explicit design
    X, _ = res.selected_design()
    sm_res = sm.GLM(res.model.y, X, family=sm.families.Binomial()).fit(tol=1e-12)
    assert_allclose(ref.params.to_numpy(), sm_res.params, rtol=RTOL, atol=RTOL)
    assert_allclose(ref.bse.to_numpy(), sm_res.bse, rtol=RTOL)
    assert_allclose(ref.llf, sm_res.llf, rtol=1e-10)
    pred = sm_res.get_prediction(X).summary_frame()
    assert_allclose(frame.to_numpy(), pred.to_numpy(), rtol=RTOL, atol=1e-12)


def test_anova_and_compare_read_the_statistics_refit_like_statsmodels(monkeypatch):
    df = _data(seed=3)
    small = bs.glm("yp ~ bin(a, 8) + offset(np.log(t))", df, family="poisson").fit(1e-3)
    large = bs.glm("yp ~ bin(a, 8) + bin(b, 5) + z + offset(np.log(t))", df,
                   family="poisson").fit(1e-3)  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = bs.anova(small.refit(), large.refit())
        want_cmp = bs.compare(small.refit(), large.refit())
        monkeypatch.setattr(_refit_glm, "GRAM_MIN_CELLS", 0)
        a, b = small.refit(), large.refit()
        got = bs.anova(a, b)
        got_cmp = bs.compare(a, b)
    assert isinstance(a.sm_results, GLMRefit) and isinstance(b.sm_results, GLMRefit)
    assert_allclose(got.to_numpy(dtype=float), want.to_numpy(dtype=float), rtol=1e-7,
                    atol=1e-9)  # fmt: skip
    num = want_cmp.select_dtypes("number").columns
    assert_allclose(got_cmp[num].to_numpy(dtype=float), want_cmp[num].to_numpy(dtype=float),
                    rtol=1e-7, atol=1e-9, equal_nan=True)  # fmt: skip


@pytest.mark.parametrize("family", ["binomial", "poisson"])
def test_at_1e5_rows_the_refit_builds_XtWX_twice_and_its_covariance_is_the_final_weights(
    family, monkeypatch
):
    # XᵀWX (the codes' pair tables, O(n p²)) is the cost of an IRLS step; the chord steps
    # between reuse the first one and need only Xᵀ W g'(μ)(y − μ) (O(n p)). From the
    # penalised fit's η on this data the chord steps contract by ~0.11 (binomial) and
    # ~0.22 (poisson) per step, under CHORD_RATE = 0.3, so the refit builds XᵀWX once to
    # start and once to confirm convergence (was 5 and 4 Newton steps).
    df = _big()
    if family == "poisson":
        rng = np.random.default_rng(1)
        df["y"] = rng.poisson(np.exp(-0.5 + np.sin(2 * df.x0) + 0.3 * df.x2)).astype(float)
    res = bs.glm("y ~ " + " + ".join(f"bin(x{j})" for j in range(5)), df, family=family).fit()
    builds = []
    normal_equations = _refit_glm.SegmentDesign.normal_equations

    def counted(self, *args, **kwargs):
        builds.append(1)
        return normal_equations(self, *args, **kwargs)

    monkeypatch.setattr(_refit_glm.SegmentDesign, "normal_equations", counted)
    ref = res.refit()
    assert isinstance(ref.sm_results, GLMRefit)  # the default path at 1e5 rows
    assert len(builds) == 2
    assert ref.sm_results.converged
    # the covariance is the rank-cut inverse of XᵀWX at the final weights: μ moved by at
    # most ~1e-10 relative in the confirming step, so the weights by as little
    sm_fam = sm.families.Binomial() if family == "binomial" else sm.families.Poisson()
    X, _ = res.selected_design()
    mu = ref.sm_results.mu
    w = sm_fam.weights(mu)
    cov = _refit_glm.truncated_inverse(X.T @ (w[:, None] * X), len(df))
    assert_allclose(ref.sm_results.normalized_cov_params, cov, rtol=1e-7,
                    atol=1e-7 * np.max(np.abs(cov)))  # fmt: skip
    # and the estimate is statsmodels' GLM on the explicit design
    sm_res = sm.GLM(res.model.y, X, family=sm_fam).fit(tol=1e-12)
    assert_allclose(ref.params.to_numpy(), sm_res.params, rtol=RTOL, atol=RTOL)
    assert_allclose(ref.bse.to_numpy(), sm_res.bse, rtol=RTOL)
