"""Issue 12's inference on the three families with weights and offsets, against statsmodels.

The matrix: gaussian, binomial (a proportion with the trials as weights) and poisson,
each with sample weights read as analytic (statsmodels ``var_weights``) or frequency
(``freq_weights``) weights, an offset, and with and without an intercept. For every
cell:

* ``bs.anova`` between two nested refits equals R's analysis of deviance computed from
  statsmodels' GLMs on explicit dummy designs (residual df, deviances, F or χ² test);
* residuals, fitted values, residual df, Pearson χ², dispersion, deviance, null deviance,
  the summary header and ``bs.compare``'s df, deviance, AIC and BIC of a penalised fit
  at λ = 0 (and of its refit) equal statsmodels' (the null deviance without an
  intercept is R's: the offset-only model);
* ``refit().get_prediction`` and ``predict(se_fit=True)`` on new rows equal statsmodels'
  on the explicit design (gaussian observation intervals: WLS for analytic weights,
  OLS on the repeated rows for frequency weights);
* ``refit(split=)`` is statsmodels' GLM on the estimation rows of a design built here
  from the cut-points the selection rows chose;
* ``bootstrap`` is reproducible with ``random_state`` and bitwise equal across ``n_jobs``
  (``lam="same"`` and ``lam="cv"``, rows and groups).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from numpy.testing import assert_allclose
from scipy import stats

import binarsity_stats as bs
from binarsity_stats.model._results import BinarsityResults

FAMILIES = {"gaussian": sm.families.Gaussian, "binomial": sm.families.Binomial,
            "poisson": sm.families.Poisson}  # fmt: skip
# every pair of (family, weights kind, intercept) values occurs in some cell
CELLS = [("gaussian", "analytic", True), ("gaussian", "freq", False),
         ("binomial", "analytic", False), ("binomial", "freq", True),
         ("poisson", "analytic", True), ("poisson", "freq", False)]  # fmt: skip
IDS = [f"{f}-{k}-{'intercept' if i else 'no_intercept'}" for f, k, i in CELLS]


def _frame(family: str, n: int = 400, seed: int = 0) -> pd.DataFrame:
    """Levels a (4) and b (3), a continuous x, a group g, integer weights w, an offset."""
    rng = np.random.default_rng(seed)
    d = pd.DataFrame({"a": rng.integers(0, 4, n), "b": rng.integers(0, 3, n),
                      "x": rng.uniform(0, 10, n), "g": rng.choice(list("pqr"), n)})  # fmt: skip
    d["w"] = rng.integers(1, 4, n).astype(float)
    d["off"] = rng.uniform(-0.3, 0.3, n)
    eta = (0.4 * d["a"] - 0.3 * (d["b"] == 2) + 0.6 * (d["x"] > 4) - 0.5 * (d["x"] > 7)
           + 0.2 * (d["g"] == "q") + d["off"])  # fmt: skip
    if family == "gaussian":
        d["y"] = eta + rng.normal(0, 1, n) / np.sqrt(d["w"])
    elif family == "binomial":  # the share of w trials
        d["y"] = rng.binomial(d["w"].astype(int), 1 / (1 + np.exp(-(eta - 0.5)))) / d["w"]
    else:
        d["y"] = rng.poisson(np.exp(eta + 0.3)).astype(float)
    return d


def _wkw(d: pd.DataFrame, kind: str, rows=slice(None)) -> dict:
    w = d["w"].to_numpy()[rows]
    return {"var_weights": w} if kind == "analytic" else {"freq_weights": w}


def _dummies(d: pd.DataFrame, cols: list[str], intercept: bool) -> pd.DataFrame:
    """Dummy design: the first column keeps all its levels when there is no intercept."""
    parts = []
    for k, c in enumerate(cols):
        full = pd.get_dummies(d[c].astype("category"), prefix=c, dtype=float)
        parts.append(full if (k == 0 and not intercept) else full.iloc[:, 1:])
    X = pd.concat(parts, axis=1)
    if intercept:
        X.insert(0, "const", 1.0)
    return X


def _rhs(terms: str, intercept: bool) -> str:
    return terms + ("" if intercept else " - 1")


@pytest.mark.parametrize("family, kind, intercept", CELLS, ids=IDS)
def test_anova_equals_r_analysis_of_deviance_on_statsmodels(family, kind, intercept):
    d = _frame(family)
    kw = {"family": family, "sample_weight": "w", "weights_kind": kind}
    fits = [
        bs.glm(f"y ~ {_rhs(t + ' + offset(off)', intercept)}", d, **kw)
        .fit(lam=0.0, tol=1e-12).refit()
        for t in ("bin(a)", "bin(a) + bin(b)")
    ]  # fmt: skip
    table = bs.anova(*fits)
    fam = FAMILIES[family]()
    refs = [
        sm.GLM(
            d["y"], _dummies(d, cols, intercept), family=fam, offset=d["off"], **_wkw(d, kind)
        ).fit(tol=1e-12)  # fmt: skip
        for cols in (["a"], ["a", "b"])
    ]
    small, big = refs
    assert table["Resid. Df"].tolist() == pytest.approx([small.df_resid, big.df_resid])
    if kind == "freq":  # observations are the weights' sum
        assert big.df_resid == d["w"].sum() - 6 == table.loc["Model 2", "Resid. Df"]
    assert table["Resid. Dev"].to_numpy() == pytest.approx([small.deviance, big.deviance],
                                                           rel=1e-8)  # fmt: skip
    ddev = small.deviance - big.deviance
    assert table.loc["Model 2", "Df"] == 2
    assert table.loc["Model 2", "Deviance"] == pytest.approx(ddev, rel=1e-6, abs=1e-9)
    if family == "gaussian":  # R: F = (Δdev/Δdf) / φ̂ of the larger model, F(Δdf, df_resid)
        phi = big.pearson_chi2 / big.df_resid
        assert table.attrs["dispersion"] == pytest.approx(phi, rel=1e-8)
        f = ddev / 2 / phi
        assert table.loc["Model 2", "F"] == pytest.approx(f, rel=1e-6)
        assert table.loc["Model 2", "Pr(>F)"] == pytest.approx(
            stats.f.sf(f, 2, big.df_resid), rel=1e-5
        )
    else:
        assert table.loc["Model 2", "Pr(>Chi)"] == pytest.approx(stats.chi2.sf(ddev, 2),
                                                                 rel=1e-5)  # fmt: skip


@pytest.mark.parametrize("family, kind, intercept", CELLS, ids=IDS)
def test_residuals_dispersion_and_header_equal_statsmodels(family, kind, intercept):
    d = _frame(family, seed=1)
    res = bs.glm(
        f"y ~ {_rhs('bin(a) + bin(b) + x + offset(off)', intercept)}",
        d,
        family=family,
        sample_weight="w",
        weights_kind=kind,
    ).fit(lam=0.0, tol=1e-12)
    X = _dummies(d, ["a", "b"], intercept).assign(x=d["x"])
    fam = FAMILIES[family]()
    ref = sm.GLM(d["y"], X, family=fam, offset=d["off"], **_wkw(d, kind)).fit(tol=1e-12)
    assert_allclose(res.fittedvalues, ref.fittedvalues, rtol=1e-6)
    for name in ("resid_response", "resid_pearson", "resid_deviance"):
        assert_allclose(getattr(res, name), getattr(ref, name), rtol=1e-5, atol=1e-7,
                        err_msg=name)  # fmt: skip
    assert res.df_resid == pytest.approx(ref.df_resid)
    assert res.pearson_chi2 == pytest.approx(ref.pearson_chi2, rel=1e-6)
    assert res.dispersion == pytest.approx(ref.pearson_chi2 / ref.df_resid, rel=1e-6)
    if family == "gaussian":
        assert res.dispersion == pytest.approx(ref.scale, rel=1e-6)
    assert res.deviance == pytest.approx(ref.deviance, rel=1e-7)
    assert res.llf == pytest.approx(ref.llf, rel=1e-7)
    if intercept:  # statsmodels' null model: intercept + offset
        assert res.null_deviance == pytest.approx(ref.null_deviance, rel=1e-7)
    else:  # R's, for a model without intercept: the offset alone
        mu0 = fam.link.inverse(d["off"].to_numpy())
        null = fam.deviance(d["y"].to_numpy(), mu0, **_wkw(d, kind))
        assert res.null_deviance == pytest.approx(null, rel=1e-7)
    # bs.compare: the penalised fit at λ = 0 and its refit are statsmodels' GLM
    table = bs.compare(res, res.refit(), names=["fit", "refit"])
    for row in ("fit", "refit"):
        assert table.loc[row, "df"] == len(ref.params)
        assert table.loc[row, "deviance"] == pytest.approx(ref.deviance, rel=1e-7)
        assert table.loc[row, "AIC"] == pytest.approx(ref.aic, rel=1e-7)
        assert table.loc[row, "BIC"] == pytest.approx(ref.bic_llf, rel=1e-7)
    header = res.summary().header
    assert float(header["Df Residuals"]) == pytest.approx(ref.df_resid)
    assert float(header["Pearson chi2"]) == pytest.approx(ref.pearson_chi2, rel=1e-3)
    disp = next(v for k, v in header.items() if k.startswith("Dispersion"))
    assert float(disp) == pytest.approx(ref.pearson_chi2 / ref.df_resid, rel=1e-3)
    assert float(header["Deviance"]) == pytest.approx(ref.deviance, rel=1e-3)
    assert header["Offset"] == "yes"


def _repeated(d: pd.DataFrame) -> pd.DataFrame:
    return d.loc[d.index.repeat(d["w"].astype(int))].reset_index(drop=True)


@pytest.mark.parametrize("family, kind, intercept", CELLS, ids=IDS)
def test_refit_predictions_equal_statsmodels_on_new_rows(family, kind, intercept):
    d = _frame(family, seed=2)
    res = bs.glm(
        f"y ~ {_rhs('bin(a) + bin(b) + x + offset(off)', intercept)}",
        d,
        family=family,
        sample_weight="w",
        weights_kind=kind,
    ).fit(lam=0.0, tol=1e-12)
    refit = res.refit()
    X = _dummies(d, ["a", "b"], intercept).assign(x=d["x"]).to_numpy()
    fam = FAMILIES[family]()
    gauss = family == "gaussian"
    ref = sm.GLM(d["y"], X, family=fam, offset=d["off"], **_wkw(d, kind)).fit(use_t=gauss)
    assert_allclose(refit.params.to_numpy(), ref.params, rtol=1e-7, atol=1e-10)
    assert_allclose(refit.bse.to_numpy(), ref.bse, rtol=1e-6)
    assert_allclose(refit.conf_int(0.1).to_numpy(), ref.conf_int(0.1), rtol=1e-6, atol=1e-9)
    rows = [3, 77, 150, 399]
    new, x_new, off_new = d.iloc[rows], X[rows], d["off"].to_numpy()[rows]
    got = refit.get_prediction(new).summary_frame(alpha=0.1)
    want = ref.get_prediction(x_new, offset=off_new).summary_frame(alpha=0.1)
    assert_allclose(got[list(want.columns)].to_numpy(), want.to_numpy(), rtol=1e-6)
    for type_, which in (("response", "mean"), ("link", "linear")):
        se = refit.predict(new, type=type_, se_fit=True)
        w = ref.get_prediction(x_new, offset=off_new, which=which)
        assert_allclose(se["fit"], w.predicted, rtol=1e-8)
        assert_allclose(se["se_fit"], w.se, rtol=1e-6)
    if gauss:  # the observation interval of one new unit of weight
        if kind == "analytic":
            ols = sm.WLS(d["y"] - d["off"], X, weights=d["w"]).fit()
        else:  # frequency weights are repeated rows
            rep = _repeated(d)
            ols = sm.OLS(rep["y"] - rep["off"], _dummies(rep, ["a", "b"], intercept)
                         .assign(x=rep["x"]).to_numpy()).fit()  # fmt: skip
        obs = ols.get_prediction(x_new).summary_frame(alpha=0.1)
        assert_allclose(got["obs_ci_lower"], obs["obs_ci_lower"] + off_new, rtol=1e-6)
        assert_allclose(got["obs_ci_upper"], obs["obs_ci_upper"] + off_new, rtol=1e-6)


def _segments(x: np.ndarray, cuts: np.ndarray, keep_first: bool) -> np.ndarray:
    seg = np.searchsorted(cuts, x, side="left")  # x <= cut is left of the jump
    first = 0 if keep_first else 1
    return (seg[:, None] == np.arange(first, len(cuts) + 1)[None, :]).astype(float)


@pytest.mark.parametrize("family, kind, intercept", CELLS, ids=IDS)
def test_split_refit_is_statsmodels_on_the_estimation_rows(family, kind, intercept):
    d = _frame(family, n=600, seed=3)
    formula = f"y ~ {_rhs('bin(x, 12) + C(g) + offset(off)', intercept)}"
    model = bs.glm(formula, d, family=family, sample_weight="w", weights_kind=kind)
    res = model.fit(lam=0.05 * model.lambda_max())
    split = res.refit(split=0.5, random_state=7)
    sel, est = split.split["select_rows"], split.split["estimate_rows"]
    selection = BinarsityResults(model, model.prepare(sel).solve(res.lam))
    cuts = selection.cut_points()["cut"].to_numpy()
    assert len(cuts) >= 1
    X = np.column_stack([
        *([np.ones(len(d))] if intercept else []),
        _segments(d["x"].to_numpy(), cuts, keep_first=not intercept),
        _dummies(d, ["g"], True).to_numpy()[:, 1:],
    ])  # fmt: skip
    fam = FAMILIES[family]()
    gauss = family == "gaussian"
    ref = sm.GLM(d["y"].to_numpy()[est], X[est], family=fam, offset=d["off"].to_numpy()[est],
                 **_wkw(d, kind, est)).fit(use_t=gauss)  # fmt: skip
    assert split.nobs == len(est)
    assert_allclose(split.params.to_numpy(), ref.params, rtol=1e-7, atol=1e-10)
    assert_allclose(split.bse.to_numpy(), ref.bse, rtol=1e-6)
    assert split.df_resid == pytest.approx(ref.df_resid)
    new = d.iloc[:6]
    got = split.get_prediction(new).summary_frame(alpha=0.05)
    want = ref.get_prediction(X[:6], offset=d["off"].to_numpy()[:6]).summary_frame(alpha=0.05)
    assert_allclose(got[list(want.columns)].to_numpy(), want.to_numpy(), rtol=1e-6)


@pytest.mark.parametrize("family, kind, intercept", CELLS, ids=IDS)
def test_bootstrap_reproducible_and_bitwise_equal_across_n_jobs(family, kind, intercept):
    d = _frame(family, n=300, seed=4)
    formula = f"y ~ {_rhs('bin(x, 8) + C(g) + offset(off)', intercept)}"
    res = bs.glm(formula, d, family=family, sample_weight="w", weights_kind=kind).fit()
    a = res.bootstrap(5, random_state=3, n_jobs=1)
    b = res.bootstrap(5, random_state=3, n_jobs=2)
    for name in ("coef", "dense_coef", "intercept", "lams", "converged"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert a.converged.all()
    again = res.bootstrap(5, random_state=np.random.default_rng(3), n_jobs=2)
    assert np.array_equal(again.coef, a.coef)  # an int seed and its Generator agree
    assert not np.array_equal(res.bootstrap(5, random_state=4).coef, a.coef)
    for method in ("percentile", "basic"):
        pd.testing.assert_frame_equal(a.shape_bands(0.8, method=method),
                                      b.shape_bands(0.8, method=method))  # fmt: skip
        pa, pb = a.predict(d.head(5), method=method), b.predict(d.head(5), method=method)
        pd.testing.assert_frame_equal(pa, pb)
        assert_allclose(pa["mean"], res.predict(d.head(5)), rtol=1e-12)
        assert np.all(pa["mean_ci_lower"] <= pa["mean_ci_upper"])


def test_bootstrap_lam_cv_and_groups_bitwise_equal_across_n_jobs():
    d = _frame("poisson", n=240, seed=5)
    model = bs.glm("y ~ bin(x, 6) + C(g) + offset(off)", d, family="poisson", sample_weight="w")
    cv = model.fit_cv(folds=3, random_state=0, n_lambdas=8, groups=np.arange(240) // 4)
    a = cv.best_.bootstrap(3, random_state=1, n_jobs=1, lam="cv")
    b = cv.best_.bootstrap(3, random_state=1, n_jobs=2, lam="cv")
    assert a.grouped and a.lam_rule == "cv"
    for name in ("coef", "intercept", "lams"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name


@pytest.mark.parametrize("family, kind, intercept", CELLS, ids=IDS)
def test_relaxed_resamples_are_statsmodels_glms_on_their_own_segments(family, kind, intercept):
    import copy

    from binarsity_stats.model._bootstrap import _resample_counts

    d = _frame(family, n=300, seed=6)
    formula = f"y ~ {_rhs('bin(x, 8) + C(g) + offset(off)', intercept)}"
    res = bs.glm(formula, d, family=family, sample_weight="w", weights_kind=kind).fit()
    boot = res.bootstrap(3, random_state=2, tol=1e-10)
    pred = boot.predict(method="relaxed", type="link")
    # the relaxed fit of the fit itself is the unpenalised refit on its cut-points
    assert_allclose(pred["mean"], res.refit().predict(type="link"), rtol=1e-6, atol=1e-7)
    relaxed = boot._relaxed()
    m = res.model
    freq = d["w"].to_numpy() if kind == "freq" else None
    seeds = np.random.default_rng(2).integers(0, 2**63 - 1, size=3, dtype=np.int64)
    fam = FAMILIES[family]()
    for b in range(3):
        counts = _resample_counts(len(d), None, np.random.default_rng(int(seeds[b])), freq)
        rows = np.flatnonzero(counts)
        w = counts[rows] * (1.0 if kind == "freq" else d["w"].to_numpy()[rows])
        mine = copy.copy(res)  # the selected design of resample b's cut-points
        mine.__dict__.pop("_selection", None)
        mine.__dict__["jumps"] = res._jumps_of(boot.coef[b])
        X, _ = mine.selected_design()
        kw = {"var_weights": w} if kind == "analytic" else {"freq_weights": w}
        ref = sm.GLM(d["y"].to_numpy()[rows], X[rows], family=fam,
                     offset=d["off"].to_numpy()[rows], **kw).fit(tol=1e-12)  # fmt: skip
        eta = m.linear_predictor(relaxed["coef"][b], relaxed["dense_coef"][b],
                                 relaxed["intercept"][b], m.design, m.offset)  # fmt: skip
        want = X @ ref.params + d["off"].to_numpy()
        assert_allclose(eta[rows], want[rows], rtol=1e-6, atol=1e-6)
        # its jumps are a subset of the resample's (a flat refit may merge two segments)
        assert not np.any(res._jumps_of(relaxed["coef"][b]) & ~mine.jumps)
    bands = boot.shape_bands(0.8, method="relaxed")
    assert np.all(bands["lower"] <= bands["upper"] + 1e-12)
    again = res.bootstrap(3, random_state=2, tol=1e-10, n_jobs=2)
    pd.testing.assert_frame_equal(again.shape_bands(0.8, method="relaxed"), bands)
