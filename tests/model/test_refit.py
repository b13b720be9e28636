"""The unpenalised refit: weights, information criteria and prediction on new rows.

What is proved here:

* **Weights mean what ``weights_kind`` says.** Analytic weights (the default) are
  statsmodels' ``var_weights``, frequency weights its ``freq_weights``: the refit's
  coefficients, standard errors, deviance and residual df equal statsmodels' GLM on the
  same selected design (gaussian and binomial proportions with the trials as weights on
  star98; poisson with an offset, with and without intercept). A common scale of
  analytic weights changes no standard error; frequency weights give exactly what the
  repeated rows give (standard errors, df, ``lam="theory"``, AIC and BIC).
* **The penalised fit's log-likelihood follows statsmodels' conventions**: at λ = 0 it
  equals statsmodels' llf, AIC and BIC for either kind of weight.
* **The refit predicts new rows**: ``predict``, ``get_prediction(...).summary_frame``
  (with observation intervals for gaussian) and ``conf_int`` equal statsmodels fitted on
  the explicit design matrix, whose new rows are built here independently.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from numpy.testing import assert_allclose

from binarsity_stats import glm

STAR_RHS = "bin(LOWINC, 8) + bin(PERMINTE, 6) + PERHISP"


@pytest.fixture(scope="module")
def star98() -> pd.DataFrame:
    d = sm.datasets.star98.load_pandas().data
    d = d[["NABOVE", "NBELOW", "LOWINC", "PERMINTE", "PERHISP"]].copy()
    d["trials"] = d["NABOVE"] + d["NBELOW"]
    d["p"] = d["NABOVE"] / d["trials"]
    return d


def _sm_kwargs(weights: np.ndarray, kind: str) -> dict:
    return {"var_weights": weights} if kind == "analytic" else {"freq_weights": weights}


def _reference(res, family, kind, weights, offset=None, use_t=False):
    """statsmodels' GLM on the refit's selected design, built from the penalised fit."""
    X, names = res.selected_design()
    kw = _sm_kwargs(weights, kind) if weights is not None else {}
    if offset is not None:
        kw["offset"] = offset
    return sm.GLM(res.model.y, X, family=family, **kw).fit(use_t=use_t)


@pytest.mark.parametrize("kind", ["analytic", "freq"])
@pytest.mark.parametrize(
    "family, sm_family",
    [("gaussian", sm.families.Gaussian()), ("binomial", sm.families.Binomial())],
)
def test_refit_weights_are_statsmodels_var_or_freq_weights(star98, kind, family, sm_family):
    # binomial: the share of students above the median with the trials as weights
    res = glm(f"p ~ {STAR_RHS}", star98, family=family, sample_weight="trials",
              weights_kind=kind).fit(lam=2e-4)  # fmt: skip
    assert res.n_jumps > 2
    refit = res.refit()
    w = star98["trials"].to_numpy(float)
    ref = _reference(res, sm_family, kind, w, use_t=family == "gaussian")
    assert_allclose(refit.params.to_numpy(), ref.params, rtol=1e-8)
    assert_allclose(refit.bse.to_numpy(), ref.bse, rtol=1e-8)
    assert refit.deviance == pytest.approx(ref.deviance, rel=1e-10)
    assert refit.df_resid == pytest.approx(ref.df_resid)
    assert refit.weights_kind == kind == res.weights_kind
    if kind == "analytic":
        # 303 schools, not 267,611 students: the residual df of the regression on rows
        assert refit.df_resid == len(star98) - len(refit.params)
    else:
        assert refit.df_resid == w.sum() - len(refit.params)
    text = str(refit.summary())
    assert ("var_weights" if kind == "analytic" else "freq_weights") in text


def test_analytic_weights_scale_leaves_standard_errors_and_criteria_unchanged(star98):
    w = star98["trials"].to_numpy(float)
    fits = [
        glm(f"p ~ {STAR_RHS}", star98, sample_weight=w * c).fit(lam="theory")
        for c in (1.0, 1e-3, 250.0)
    ]
    base, base_refit = fits[0], fits[0].refit()
    for res in fits[1:]:
        assert res.lam == pytest.approx(base.lam, rel=1e-9)  # Kish's n is scale-free
        assert_allclose(res.coef, base.coef, rtol=1e-6, atol=1e-9)
        for name in ("llf", "aic", "bic"):
            assert getattr(res, name) == pytest.approx(getattr(base, name), rel=1e-8)
        refit = res.refit()
        assert_allclose(refit.params, base_refit.params, rtol=1e-6)
        assert_allclose(refit.bse, base_refit.bse, rtol=1e-6)
    # a regression on 303 rows has an AIC on the scale of 303 rows, not of 267,611 weights
    assert abs(base.aic) < 1e4 and base.aic < base.bic


def test_penalised_llf_aic_bic_follow_statsmodels_at_lam_zero(star98):
    w = star98["trials"].to_numpy(float)
    for family, sm_family in (("gaussian", sm.families.Gaussian()),
                              ("binomial", sm.families.Binomial())):  # fmt: skip
        for kind in ("analytic", "freq"):
            res = glm(f"p ~ {STAR_RHS}", star98, family=family, sample_weight=w,
                      weights_kind=kind).fit(lam=0.0, tol=1e-10)  # fmt: skip
            ref = _reference(res, sm_family, kind, w)
            assert res.df == len(ref.params)
            assert res.llf == pytest.approx(ref.llf, rel=1e-7), (family, kind)
            assert res.aic == pytest.approx(ref.aic, rel=1e-7), (family, kind)
            assert res.bic == pytest.approx(ref.bic, rel=1e-7), (family, kind)
            assert ("analytic" if kind == "analytic" else "frequency") in str(res.summary())


def _poisson_frame(n: int = 400, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.gamma(2.0, size=n)
    g = rng.choice(["a", "b", "c"], size=n)
    exposure = rng.uniform(0.5, 4.0, size=n)
    eta = 0.7 * (x > 2) - 0.5 * (x > 4) + 0.3 * (g == "b")
    y = rng.poisson(exposure * np.exp(eta)).astype(float)
    w = rng.integers(1, 4, size=n).astype(float)
    return pd.DataFrame({"y": y, "x": x, "g": g, "exposure": exposure, "w": w})


@pytest.mark.parametrize("kind", ["analytic", "freq"])
@pytest.mark.parametrize("rhs", ["bin(x, 10) + C(g)", "C(g) + bin(x, 10) - 1"])
def test_poisson_refit_with_offset_matches_statsmodels(kind, rhs):
    d = _poisson_frame()
    res = glm(f"y ~ {rhs} + offset(np.log(exposure))", d, family="poisson",
              sample_weight="w", weights_kind=kind).fit(lam=1e-3)  # fmt: skip
    refit = res.refit()
    X, names = res.selected_design()
    assert ("Intercept" in names) == (" - 1" not in rhs)
    ref = _reference(res, sm.families.Poisson(), kind, d["w"].to_numpy(),
                     offset=np.log(d["exposure"].to_numpy()))  # fmt: skip
    assert_allclose(refit.params.to_numpy(), ref.params, rtol=1e-8)
    assert_allclose(refit.bse.to_numpy(), ref.bse, rtol=1e-8)
    assert refit.deviance == pytest.approx(ref.deviance, rel=1e-10)
    assert refit.df_resid == pytest.approx(ref.df_resid)
    # new rows (a single row included) replay bins, C() levels and the offset term
    new = d.iloc[[5, 17, 3, 250]].reset_index(drop=True)
    x_new, off_new = X[[5, 17, 3, 250]], np.log(new["exposure"].to_numpy())
    assert_allclose(refit.predict(new), ref.predict(x_new, offset=off_new), rtol=1e-10)
    assert_allclose(refit.predict(new.iloc[[2]]), ref.predict(x_new[[2]], offset=off_new[[2]]),
                    rtol=1e-10)  # fmt: skip
    assert_allclose(refit.predict(new, type="link"),
                    ref.predict(x_new, offset=off_new, which="linear"), rtol=1e-10)  # fmt: skip
    got = refit.get_prediction(new).summary_frame(alpha=0.1)
    want = ref.get_prediction(x_new, offset=off_new).summary_frame(alpha=0.1)
    assert list(got.columns) == ["mean", "mean_se", "mean_ci_lower", "mean_ci_upper"]
    assert_allclose(got.to_numpy(), want.to_numpy(), rtol=1e-8)
    got = refit.get_prediction(new, type="link").summary_frame(alpha=0.1)
    want = ref.get_prediction(x_new, offset=off_new, which="linear").summary_frame(alpha=0.1)
    assert_allclose(got.to_numpy(), want.to_numpy(), rtol=1e-8)


def test_freq_weights_equal_repeated_rows():
    d = _poisson_frame(n=300, seed=7)
    d["y"] = d["y"] + 0.5 * d["x"]  # a gaussian response
    rep = d.loc[d.index.repeat(d["w"].astype(int))].reset_index(drop=True)
    rhs = "bin(x, 12) + C(g)"
    weighted = glm(f"y ~ {rhs}", d, sample_weight="w", weights_kind="freq")
    repeated = glm(f"y ~ {rhs}", rep)
    assert weighted.lambda_theory() == pytest.approx(repeated.lambda_theory(), rel=1e-12)
    a, b = weighted.fit(lam="theory"), repeated.fit(lam="theory")
    assert a.lam == pytest.approx(b.lam, rel=1e-9)
    assert_allclose(a.coef, b.coef, rtol=1e-6, atol=1e-8)
    for name in ("df", "llf", "aic", "bic", "deviance"):
        assert getattr(a, name) == pytest.approx(getattr(b, name), rel=1e-7), name
    ra, rb = a.refit(), b.refit()
    assert ra.df_resid == rb.df_resid
    assert_allclose(ra.params, rb.params, rtol=1e-7)
    assert_allclose(ra.bse, rb.bse, rtol=1e-7)
    # the analytic reading of the same weights has fewer observations and wider errors
    c = glm(f"y ~ {rhs}", d, sample_weight="w").fit(lam=a.lam).refit()
    assert c.df_resid == len(d) - len(c.params)
    assert np.all(c.bse.to_numpy() > ra.bse.to_numpy())


def test_gaussian_refit_prediction_intervals_match_wls(star98):
    w = star98["trials"].to_numpy(float)
    res = glm(f"p ~ {STAR_RHS}", star98, sample_weight=w).fit(lam=2e-4)
    refit = res.refit()
    X, _ = res.selected_design()
    ref = sm.WLS(res.model.y, X, weights=w).fit()
    rows = [0, 10, 200, 302]
    new = star98.iloc[rows].reset_index(drop=True)
    # new rows of one unit of weight, as WLS's get_prediction assumes
    got = refit.get_prediction(new).summary_frame(alpha=0.05)
    want = ref.get_prediction(X[rows]).summary_frame(alpha=0.05)
    assert list(got.columns) == list(want.columns)
    assert {"obs_ci_lower", "obs_ci_upper"} <= set(got.columns)
    assert_allclose(got.to_numpy(), want.to_numpy(), rtol=1e-8)
    assert_allclose(refit.conf_int(0.1).to_numpy(), ref.conf_int(0.1), rtol=1e-8)
    assert_allclose(refit.get_prediction(new).conf_int(alpha=0.1),
                    ref.get_prediction(X[rows]).conf_int(alpha=0.1), rtol=1e-8)  # fmt: skip
    # observation intervals of new rows with their own analytic weights
    w_new = np.array([10.0, 400.0, 1.0, 55.0])
    got_w = refit.get_prediction(new, sample_weight=w_new).summary_frame(alpha=0.05)
    want_w = ref.get_prediction(X[rows], weights=w_new).summary_frame(alpha=0.05)
    assert_allclose(got_w.to_numpy(), want_w.to_numpy(), rtol=1e-8)


def test_refit_predicts_training_rows_and_checks_new_rows(star98):
    res = glm(f"p ~ {STAR_RHS}", star98, family="binomial", sample_weight="trials").fit(lam=2e-4)
    refit = res.refit()
    assert_allclose(refit.predict(), refit.fittedvalues, rtol=1e-12)
    assert_allclose(refit.predict(star98), refit.fittedvalues, rtol=1e-12)
    with pytest.raises(ValueError, match="LOWINC"):
        refit.predict(star98.drop(columns="LOWINC"))
    with pytest.raises(ValueError, match="type"):
        refit.predict(star98, type="odds")


def test_weights_kind_is_checked_and_kept_by_pickles(star98):
    import pickle

    with pytest.raises(ValueError, match="weights_kind"):
        glm(f"p ~ {STAR_RHS}", star98, sample_weight="trials", weights_kind="frequency")
    res = glm(f"p ~ {STAR_RHS}", star98, sample_weight="trials", weights_kind="freq").fit(1e-3)
    again = pickle.loads(pickle.dumps(res.refit()))
    assert again.weights_kind == "freq" and again.parent.model.weights_kind == "freq"
    assert_allclose(again.predict(star98.iloc[:5]), res.refit().predict(star98.iloc[:5]))


@pytest.mark.parametrize("kind", ["analytic", "freq"])
def test_estimator_theory_lambda_follows_weights_kind(kind):
    from binarsity_stats import BinarsityGLM

    d = _poisson_frame(n=300, seed=11)
    d["y"] = d["y"] + 0.5 * d["x"]
    X, y, w = d[["x", "exposure"]], d["y"].to_numpy(), d["w"].to_numpy()
    est = BinarsityGLM(lam="theory", n_bins=12, weights_kind=kind).fit(X, y, sample_weight=w)
    # the formula interface gives the same λ on the same bins
    model = glm("y ~ bin(x, 12) + bin(exposure, 12)", d, sample_weight="w", weights_kind=kind)
    assert est.lam_ == pytest.approx(model.fit(lam="theory").lam, rel=1e-6)
    rep = d.loc[d.index.repeat(d["w"].astype(int))]
    est_rep = BinarsityGLM(lam="theory", n_bins=12).fit(rep[["x", "exposure"]], rep["y"])
    if kind == "freq":  # frequency weights are repeated rows
        assert est.lam_ == pytest.approx(est_rep.lam_, rel=1e-6)
        assert_allclose(est.coef_, est_rep.coef_, rtol=1e-5, atol=1e-8)
    else:  # analytic: Kish's n, unchanged by a common scale of the weights
        assert est.lam_ > est_rep.lam_ * 1.05
        again = BinarsityGLM(lam="theory", n_bins=12).fit(X, y, sample_weight=w * 1e-4)
        assert again.lam_ == pytest.approx(est.lam_, rel=1e-9)
    with pytest.raises(ValueError, match="weights_kind"):
        BinarsityGLM(weights_kind="counts").fit(X, y)
    with pytest.raises(TypeError, match="lam must be a non-negative number or 'theory'"):
        BinarsityGLM(lam="oracle").fit(X, y)


def test_predict_se_fit_is_statsmodels_standard_error_of_the_prediction():
    d = _poisson_frame()
    res = glm("y ~ bin(x, 10) + C(g) + offset(np.log(exposure))", d, family="poisson",
              sample_weight="w").fit(lam=1e-3)  # fmt: skip
    refit = res.refit()
    X, _ = res.selected_design()
    ref = sm.GLM(res.model.y, X, family=sm.families.Poisson(), var_weights=d["w"].to_numpy(),
                 offset=np.log(d["exposure"].to_numpy())).fit()  # fmt: skip
    rows = [1, 50, 99]
    new, off = d.iloc[rows], np.log(d["exposure"].to_numpy()[rows])
    for type_, which in (("response", "mean"), ("link", "linear")):
        got = refit.predict(new, type=type_, se_fit=True)
        want = ref.get_prediction(X[rows], offset=off, which=which)
        assert list(got.columns) == ["fit", "se_fit"]
        assert_allclose(got["fit"], want.predicted, rtol=1e-10)
        assert_allclose(got["se_fit"], want.se, rtol=1e-8)
    # R's se.fit on the link scale: sqrt(x' V x); the response scale by the delta method
    link = refit.predict(new, type="link", se_fit=True)
    V = ref.cov_params()
    assert_allclose(link["se_fit"], np.sqrt(np.einsum("ij,jk,ik->i", X[rows], V, X[rows])))
    resp = refit.predict(new, se_fit=True)
    assert_allclose(resp["se_fit"], link["se_fit"] * resp["fit"], rtol=1e-8)


def _split_data(n: int = 600, seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 10, size=n)
    z = rng.normal(size=n)
    y = 1.0 * (x > 3) - 0.8 * (x > 7) + 0.5 * z + rng.normal(scale=0.7, size=n)
    return pd.DataFrame({"y": y, "x": x, "z": z, "w": rng.uniform(0.5, 2.0, size=n)})


def _design_from_cuts(x: np.ndarray, cuts: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Intercept, right-closed segment indicators (first segment the reference), z."""
    seg = np.searchsorted(cuts, x, side="left")  # x <= cut is left of the jump
    dummies = (seg[:, None] == np.arange(1, len(cuts) + 1)[None, :]).astype(float)
    return np.column_stack([np.ones(len(x)), dummies, z])


def test_split_refit_selects_on_one_half_and_estimates_on_the_other():
    from binarsity_stats.model._results import BinarsityResults

    d = _split_data()
    model = glm("y ~ bin(x, 20) + z", d, sample_weight="w")
    res = model.fit(lam=2e-3)
    split = res.refit(split=0.5, random_state=42)
    sel, est = split.split["select_rows"], split.split["estimate_rows"]
    assert len(sel) == 300 and len(est) == 300
    assert np.array_equal(np.sort(np.concatenate([sel, est])), np.arange(len(d)))
    assert split.nobs == len(est)
    # the selection: the penalised fit at the same λ on the selection rows alone
    selection = BinarsityResults(model, model.prepare(sel).solve(res.lam))
    cuts = selection.cut_points()["cut"].to_numpy()
    assert len(cuts) >= 2
    X = _design_from_cuts(d["x"].to_numpy(), cuts, d["z"].to_numpy())
    ref = sm.GLM(d["y"].to_numpy()[est], X[est], var_weights=d["w"].to_numpy()[est]).fit(use_t=True)
    assert_allclose(split.params.to_numpy(), ref.params, rtol=1e-8)
    assert_allclose(split.bse.to_numpy(), ref.bse, rtol=1e-8)
    assert_allclose(split.predict(d.iloc[:7]), X[:7] @ ref.params, rtol=1e-10)
    text = str(split.summary())
    assert "SAMPLE SPLITTING" in text and "CONDITIONAL ON THE SELECTION" not in text
    assert "winner's curse" in str(res.refit().summary())
    # the selection never sees the estimation half: changing its y keeps the cut-points
    d2 = d.copy()
    d2.loc[est, "y"] = d2.loc[est, "y"][::-1].to_numpy() + 5.0
    split2 = glm("y ~ bin(x, 20) + z", d2, sample_weight="w").fit(lam=2e-3)
    split2 = split2.refit(split=0.5, random_state=42)
    assert split2.names == split.names
    assert not np.allclose(split2.params, split.params)
    # reproducible with random_state, different without the same seed
    again = res.refit(split=0.5, random_state=42)
    assert np.array_equal(again.split["select_rows"], sel)
    assert_allclose(again.params, split.params, rtol=0, atol=0)
    other = res.refit(split=0.5, random_state=43)
    assert not np.array_equal(other.split["select_rows"], sel)
    one_third = res.refit(split=1 / 3, random_state=np.random.default_rng(0))
    assert len(one_third.split["select_rows"]) == 200


def test_split_refit_checks_its_arguments():
    d = _split_data(n=100)
    res = glm("y ~ bin(x, 20) + z", d).fit(lam=2e-3)
    with pytest.raises(ValueError, match="sample_weight must be non-negative; row 1"):
        res.refit().get_prediction(d.head(4), sample_weight=[1.0, -1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="sample_weight must be positive for a prediction"):
        res.refit().get_prediction(d.head(4), sample_weight=[1.0, 0.0, 1.0, 1.0])
    assert res.weights_kind is None
    for bad in (0, 1.0, 1.5, -0.2):
        with pytest.raises(ValueError, match="split"):
            res.refit(split=bad)
    with pytest.raises(TypeError, match="split"):
        res.refit(split="half")
    with pytest.raises(TypeError, match="random_state"):
        res.refit(split=0.5, random_state="seed")


def test_cli_weights_kind(tmp_path):
    import io

    from binarsity_stats._cli import main

    d = _poisson_frame(n=200)
    path = tmp_path / "d.csv"
    d.to_csv(path, index=False)
    for kind, label in (("freq", "frequency"), ("analytic", "analytic")):
        out = io.StringIO()
        code = main(["fit", "y ~ bin(x, 8) + C(g)", "--data", str(path), "--family", "poisson",
                     "--weights", "w", "--weights-kind", kind, "--lam", "0.001"], out=out)  # fmt: skip
        assert code == 0
        line = next(t for t in out.getvalue().splitlines() if "Sample weights:" in t)
        assert label in line


def test_zero_analytic_weights_leave_their_rows_out():
    d = _poisson_frame()
    d.loc[::5, "w"] = 0.0
    res = glm("y ~ bin(x, 10) + C(g)", d, family="poisson", sample_weight="w").fit(lam=1e-3)
    refit = res.refit()
    keep = d["w"].to_numpy() > 0
    X, _ = res.selected_design()
    ref = sm.GLM(d["y"].to_numpy()[keep], X[keep], family=sm.families.Poisson(),
                 var_weights=d["w"].to_numpy()[keep]).fit()  # fmt: skip
    assert refit.df_resid == keep.sum() - X.shape[1] == ref.df_resid
    assert_allclose(refit.bse.to_numpy(), ref.bse, rtol=1e-8)
    assert res.bic == pytest.approx(-2 * res.llf + np.log(keep.sum()) * res.df)
    # a level whose every training row weighs 0 has no refit coefficient: named, not guessed
    d.loc[d["g"] == "c", "w"] = 0.0
    res = glm("y ~ bin(x, 10) + C(g)", d, family="poisson", sample_weight="w").fit(lam=1e-3)
    refit = res.refit()
    assert not any("[c]" in name for name in refit.names)
    with pytest.raises(ValueError, match=r"C\(g\).*no training weight"):
        refit.predict(d[d["g"] == "c"].head(2))
    assert np.all(np.isfinite(refit.predict(d[d["g"] != "c"])))


def test_split_refit_survives_pickle_and_statsmodels_families_refit():
    import pickle

    d = _split_data(n=200)
    res = glm("y ~ bin(x, 10) + z", d, sample_weight="w").fit(lam=2e-3)
    split = res.refit(split=0.5, random_state=1)
    again = pickle.loads(pickle.dumps(split))
    assert_allclose(again.predict(d.head(5)), split.predict(d.head(5)), rtol=0, atol=0)
    assert again.split["share"] == 0.5 and "SAMPLE SPLITTING" in str(again.summary())
    # a statsmodels family (gamma, log link) with analytic weights: llf and refit as statsmodels
    scot = sm.datasets.scotland.load_pandas().data
    scot["w"] = np.random.default_rng(0).uniform(0.5, 2.0, len(scot))
    fam = sm.families.Gamma(link=sm.families.links.Log())
    res = glm("YES ~ bin(COUTAX, 6) + UNEMPF", scot, family=fam, sample_weight="w").fit(
        lam=0.0, tol=1e-10
    )
    X, _ = res.selected_design()
    ref = sm.GLM(scot["YES"].to_numpy(), X, family=fam, var_weights=scot["w"].to_numpy())
    ref = ref.fit(use_t=True)  # an estimated dispersion: t intervals, as R's glm
    assert res.llf == pytest.approx(ref.llf, rel=1e-7)
    assert res.aic == pytest.approx(ref.aic, rel=1e-7)
    refit = res.refit()
    assert_allclose(refit.params.to_numpy(), ref.params, rtol=1e-6)
    assert_allclose(refit.bse.to_numpy(), ref.bse, rtol=1e-6)
    frame = refit.get_prediction(scot.head(3)).summary_frame()
    want = ref.get_prediction(X[:3]).summary_frame()
    assert_allclose(frame.to_numpy(), want.to_numpy(), rtol=1e-6)


def test_gaussian_llf_of_huge_analytic_weights_does_not_overflow():
    d = _split_data(n=600)
    base = glm("y ~ bin(x, 10) + z", d, sample_weight="w").fit(lam=2e-3)
    huge = glm("y ~ bin(x, 10) + z", d, sample_weight=d["w"] * 1e306).fit(lam=2e-3)
    for name in ("llf", "aic", "bic"):
        assert getattr(huge, name) == pytest.approx(getattr(base, name), rel=1e-9), name


def test_conf_int_of_a_cox_refit_is_a_frame_named_by_parameter():
    # statsmodels' PHReg gives a bare array; the refit names its rows as GLM's frame does
    rng = np.random.default_rng(0)
    n = 400
    d = pd.DataFrame({"x": rng.uniform(size=n), "z": rng.normal(size=n)})
    t = rng.exponential(np.exp(-(0.8 * (d.x > 0.5) + 0.3 * d.z)))
    c = rng.exponential(2.0, n)
    d["time"], d["event"] = np.minimum(t, c), (t <= c).astype(int)
    refit = glm("Surv(time, event) ~ bin(x, 8) + z", d, family="cox").fit(lam=0.01).refit()
    ci = refit.conf_int()
    assert isinstance(ci, pd.DataFrame)
    assert list(ci.index) == list(refit.params.index)
    np.testing.assert_array_equal(ci.to_numpy(), refit.sm_results.conf_int())
    assert np.all(ci[0] < refit.params) and np.all(refit.params < ci[1])
