"""Baselines in the same table (issue 28, item 3): ``heldout``, ``compare`` and ``anova``
take statsmodels' GLM and PHReg results and lifelines' CoxPHFitter next to binarsity fits.

Every number is checked against the tool that defines it: scored on the training rows,
``heldout`` gives statsmodels' deviance and log partial likelihood, lifelines'
``log_likelihood_`` (Efron's ties) and ``concordance_index_``, scikit-learn's weighted
AUC; ``anova`` against a statsmodels baseline equals the likelihood-ratio test computed
from the two statsmodels fits.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
import statsmodels.formula.api as smf
from scipy import stats

import binarsity_stats as bstats


def _glm_frame(n=1500, seed=0):
    rng = np.random.default_rng(seed)
    x, z = rng.uniform(-2, 2, n), rng.normal(size=n)
    expo = rng.uniform(0.5, 2.0, n)
    eta = np.where(x > 0, 0.8, -0.3) + 0.3 * z
    return pd.DataFrame({
        "x": x, "z": z, "expo": expo, "w": rng.uniform(0.5, 2.0, n),
        "b": rng.binomial(1, 1 / (1 + np.exp(-eta))),
        "c": rng.poisson(expo * np.exp(eta)),
    })  # fmt: skip


def _cox_frame(n=500, seed=1, ties=False):
    rng = np.random.default_rng(seed)
    x, z = rng.normal(size=n), rng.normal(size=n)
    t = rng.exponential(np.exp(-(np.where(x > 0, 0.9, 0.0) + 0.4 * z)))
    if ties:
        t = np.ceil(t * 4) / 4  # many tied times: Efron and Breslow differ
    return pd.DataFrame({"x": x, "z": z, "T": t, "E": rng.binomial(1, 0.7, n)})


def test_heldout_on_the_training_rows_is_each_tools_own_deviance():
    d = _glm_frame()
    lin = smf.glm("c ~ x + z", d, family=sm.families.Poisson(), offset=np.log(d.expo)).fit()
    h = bstats.heldout(lin, d, offset=np.log(d.expo))
    assert h["model"] == "statsmodels GLM" and h["family"] == "poisson"
    np.testing.assert_allclose(h["deviance"], lin.deviance, rtol=1e-10)
    # a binarsity fit with an offset term and a weight column replays both
    res = bstats.glm("c ~ bin(x, 10) + z + offset(np.log(expo))", d, family="poisson",
                     sample_weight="w").fit(lam=1e-3)  # fmt: skip
    h = bstats.heldout(res, d)
    np.testing.assert_allclose(h["deviance"], res.deviance, rtol=1e-10)
    assert h["weight"] == pytest.approx(d.w.sum(), rel=1e-12)
    # and its refit; weights given explicitly override the column
    np.testing.assert_allclose(bstats.heldout(res.refit(), d)["deviance"],
                               res.refit().sm_results.deviance, rtol=1e-8)  # fmt: skip
    ones = bstats.heldout(res, d, sample_weight=np.ones(len(d)))
    assert ones["weight"] == len(d)


def test_heldout_auc_is_the_weighted_auc_and_the_response_is_read_by_the_formula():
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    d = _glm_frame(seed=2)
    train, test = d.iloc[:1000], d.iloc[1000:]
    res = bstats.glm("I(b > 0) ~ bin(x, 10) + z", train, family="binomial").fit(lam=1e-3)
    h = bstats.heldout(res, test, sample_weight="w")
    p = res.predict(test)
    want = sklearn_metrics.roc_auc_score(test.b, p, sample_weight=test.w)
    assert h["AUC"] == pytest.approx(want, abs=1e-12)
    mu = np.clip(p, 1e-300, 1 - 1e-16)
    dev = -2 * np.sum(test.w * (test.b * np.log(mu) + (1 - test.b) * np.log1p(-mu)))
    np.testing.assert_allclose(h["deviance"], dev, rtol=1e-9)
    # a two-level factor response: the training's event level, whatever the test holds
    f = d.assign(g=np.where(d.b == 1, "yes", "no"))
    fres = bstats.glm("g ~ bin(x, 10) + z", f.iloc[:1000], family="binomial").fit(lam=1e-3)
    only_yes = f.iloc[1000:][f.iloc[1000:].g == "yes"]
    fh = bstats.heldout(fres, only_yes)
    pp = fres.predict(only_yes)
    np.testing.assert_allclose(fh["deviance"], -2 * np.sum(np.log(pp)), rtol=1e-9)


def test_heldout_cox_matches_lifelines_and_statsmodels_on_tied_times():
    lifelines = pytest.importorskip("lifelines")
    d = _cox_frame(ties=True)
    c = lifelines.CoxPHFitter().fit(d[["x", "z", "T", "E"]], "T", "E")  # Efron's ties
    h = bstats.heldout(c, d)
    assert h["family"] == "cox"
    np.testing.assert_allclose(h["partial loglik"], c.log_likelihood_, rtol=1e-9)
    np.testing.assert_allclose(h["C"], c.concordance_index_, rtol=1e-12)
    for ties in ("breslow", "efron"):
        ph = smf.phreg("T ~ x + z", d, status=d.E.to_numpy(), ties=ties).fit()
        hp = bstats.heldout(ph, d, y=("T", "E"))
        np.testing.assert_allclose(hp["partial loglik"], ph.llf, rtol=1e-9)


def test_heldout_cox_of_a_binarsity_fit_reads_r_status_coding():
    d = _cox_frame().assign(S=lambda f: f.E + 1)  # R's 1 = censored, 2 = event
    res = bstats.glm("Surv(T, E) ~ bin(x, 6) + z", d, family="cox").fit(lam=1e-3)
    h = bstats.heldout(res, d)
    np.testing.assert_allclose(h["partial loglik"], res.llf, rtol=1e-9)
    np.testing.assert_allclose(h["C"], res.concordance, rtol=1e-12)
    r12 = bstats.glm("Surv(T, S) ~ bin(x, 6) + z", d, family="cox").fit(lam=1e-3)
    assert bstats.heldout(r12, d)["partial loglik"] == pytest.approx(h["partial loglik"],
                                                                     rel=1e-12)  # fmt: skip


def test_heldout_errors_name_what_is_missing():
    d = _glm_frame()
    res = bstats.glm("b ~ bin(x, 5)", d, family="binomial").fit(lam=1e-3)
    with pytest.raises(ValueError, match="'b'"):
        bstats.heldout(res, d.drop(columns="b"))
    arrays = sm.GLM(d.b, sm.add_constant(d[["x"]]), family=sm.families.Binomial()).fit()
    with pytest.raises(TypeError, match="fitted on arrays.*smf.glm"):
        bstats.heldout(arrays, d)
    with pytest.raises(TypeError, match="got a dict"):
        bstats.heldout({"a": 1}, d)
    with pytest.raises(ValueError, match="sample_weight='nope' is not a column"):
        bstats.heldout(res, d, sample_weight="nope")
    ph = smf.phreg("T ~ x", _cox_frame(), status=_cox_frame().E.to_numpy()).fit()
    with pytest.raises(ValueError, match=r"y=\(time, event\)"):
        bstats.heldout(ph, _cox_frame())


def test_anova_with_statsmodels_baselines_is_their_likelihood_ratio_test():
    d = _glm_frame(seed=3)
    refit = bstats.glm("b ~ bin(x, 10) + z", d, family="binomial").fit(lam=3e-3).refit()
    null = smf.glm("b ~ 1", d, family=sm.families.Binomial()).fit()
    X = np.asarray(refit.sm_results.model.exog)
    bigger = sm.GLM(d.b, np.column_stack([X, d.expo]), family=sm.families.Binomial()).fit()
    table = bstats.anova(null, refit, bigger)
    dev = [null.deviance, refit.sm_results.deviance, bigger.deviance]
    np.testing.assert_allclose(table["Resid. Dev"], dev, rtol=1e-8)
    np.testing.assert_allclose(table["Deviance"].iloc[1:], -np.diff(dev), rtol=1e-6, atol=1e-8)
    ddf = [X.shape[1] - 1, 1]
    np.testing.assert_allclose(table["Df"].iloc[1:], ddf)
    np.testing.assert_allclose(table["Pr(>Chi)"].iloc[1:],
                               stats.chi2.sf(-np.diff(dev), ddf), rtol=1e-6)  # fmt: skip
    # a linear baseline is not nested in the steps: refused, pointing to compare()
    linear = smf.glm("b ~ x + z", d, family=sm.families.Binomial()).fit()
    with pytest.raises(ValueError, match="not nested.*compare"):
        bstats.anova(linear, refit)
    # other rows, families or offsets are refused by name
    with pytest.raises(ValueError, match="same response rows"):
        bstats.anova(smf.glm("b ~ 1", d.iloc[:-1], family=sm.families.Binomial()).fit(), refit)
    with pytest.raises(ValueError, match="different families"):
        bstats.anova(smf.glm("b ~ 1", d, family=sm.families.Poisson()).fit(), refit)
    with pytest.raises(ValueError, match="different offsets"):
        bstats.anova(smf.glm("b ~ 1", d, family=sm.families.Binomial(),
                             offset=np.full(len(d), 0.1)).fit(), refit)  # fmt: skip


def test_anova_of_identical_models_prints_zero_not_minus_zero():
    d = _glm_frame(seed=4)
    refit = bstats.glm("b ~ bin(x, 8)", d, family="binomial").fit(lam=3e-3).refit()
    table = bstats.anova(refit, refit)
    assert table["Df"].iloc[1] == 0 and not np.signbit(table["Df"].iloc[1])
    assert not np.signbit(table["Deviance"].iloc[1])


def test_cox_anova_with_a_statsmodels_phreg_baseline():
    d = _cox_frame(n=600, seed=5)
    refit = bstats.glm("Surv(T, E) ~ bin(x, 8) + z", d, family="cox").fit(lam=3e-3).refit()
    X = np.asarray(refit.sm_results.model.exog)
    big = sm.PHReg(d["T"], np.column_stack([X, d.x ** 2]), status=d.E).fit()
    table = bstats.anova(refit, big)
    lr = 2 * (big.llf - refit.sm_results.llf)
    assert table["Chisq"].iloc[1] == pytest.approx(lr, rel=1e-6)
    assert table["Pr(>|Chi|)"].iloc[1] == pytest.approx(stats.chi2.sf(lr, 1), rel=1e-6)
    efron = sm.PHReg(d["T"], X, status=d.E, ties="efron").fit()
    with pytest.raises(ValueError, match="different ties"):
        bstats.anova(refit, efron)
    with pytest.raises(ValueError, match="Cox model cannot be compared with a GLM"):
        bstats.anova(refit, smf.glm("E ~ x", d, family=sm.families.Binomial()).fit())


def test_compare_lays_baselines_beside_binarsity_fits_with_a_test_score():
    d = _glm_frame(seed=6)
    train, test = d.iloc[:1000], d.iloc[1000:]
    steps = bstats.glm("b ~ bin(x, 10) + z", train, family="binomial").fit(lam=1e-3)
    zero = bstats.glm("b ~ bin(x, 10) + z", train, family="binomial").fit(lam=0.0)
    linear = smf.glm("b ~ x + z", train, family=sm.families.Binomial()).fit()
    table = bstats.compare(steps, zero, linear, names=["steps", "lam 0", "linear"], test=test)
    assert list(table["kind"]) == ["penalized", "unpenalized (lam = 0)", "statsmodels GLM"]
    assert table.loc["linear", "AIC"] == pytest.approx(linear.aic, rel=1e-12)
    assert table.loc["linear", "df"] == 3
    assert np.isnan(table.loc["linear", "lam"])
    for name, fit in (("steps", steps), ("linear", linear)):
        h = bstats.heldout(fit, test)
        assert table.loc[name, "test deviance"] == pytest.approx(h["deviance"], rel=1e-12)
        assert table.loc[name, "test AUC"] == pytest.approx(h["AUC"], rel=1e-12)


def test_compare_and_anova_with_lifelines():
    lifelines = pytest.importorskip("lifelines")
    d = _cox_frame(seed=7)
    train, test = d.iloc[:350], d.iloc[350:]
    c = lifelines.CoxPHFitter().fit(train[["x", "z", "T", "E"]], "T", "E")
    res = bstats.glm("Surv(T, E) ~ bin(x, 6) + z", train, family="cox").fit(lam=1e-3)
    table = bstats.compare(res.refit(), c, test=test)
    assert table.loc["Model 2", "AIC"] == pytest.approx(c.AIC_partial_, rel=1e-10)
    assert table.loc["Model 2", "kind"] == "lifelines CoxPHFitter"
    assert table.loc["Model 2", "test C"] == pytest.approx(bstats.heldout(c, test)["C"])
    with pytest.raises(TypeError, match="does not keep its design.*smf.phreg"):
        bstats.anova(res.refit(), c)
