"""The refit of a weighted ``family="cox"`` fit (issue 14: own Newton, exact Hessian).

* unit weights: equal to statsmodels' PHReg (Breslow and Efron, strata, offset);
* integer weights under Breslow: equal to PHReg on the rows repeated;
* weighted Efron: equal to lifelines' ``CoxPHFitter(weights_col=)`` (non-robust SEs);
* weights c·w: the same coefficients, standard errors ∝ 1/√c.
"""

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
sm_hr = pytest.importorskip("statsmodels.duration.hazard_regression")


def _frame(seed, n=300):
    rng = np.random.RandomState(seed)
    age = rng.uniform(20, 80, n)
    bmi = np.round(rng.normal(25, 4, n), 1)
    x = 0.6 * (age - 50) / 17 + rng.normal(scale=0.8, size=n)  # correlated with age
    g = rng.choice(["a", "b", "c"], n)
    off = rng.normal(scale=0.3, size=n)
    eta = 0.9 * (age > 60) - 0.5 * (bmi < 22) + 0.4 * x + off
    t = np.ceil(rng.exponential(np.exp(-eta)) * 20)  # many tied times
    c = np.ceil(rng.exponential(1.5, n) * 20)
    return pd.DataFrame({"time": np.minimum(t, c), "status": (t <= c).astype(int),
                         "age": age, "bmi": bmi, "x": x, "g": g, "off": off})  # fmt: skip


def _fit(df, w, ties="breslow", formula="bin(age) + bin(bmi) + x", lam=0.02):
    import binarsity_stats as bs

    family = "cox" if ties == "breslow" else ("cox", "efron")
    return bs.glm(f"Surv(time, status) ~ {formula}", df, family=family,
                  sample_weight=w).fit(lam=lam)  # fmt: skip


@pytest.mark.parametrize("ties", ["breslow", "efron"])
def test_unit_weights_equal_phreg_with_strata_and_offset(ties):
    df = _frame(1)
    res = _fit(df, np.ones(len(df)), ties, "bin(age) + bin(bmi) + x + strata(g) + offset(off)")
    ref = res.refit()
    X, names = res.selected_design()
    assert ref.names == names and X.shape[1] >= 3
    ph = sm_hr.PHReg(df["time"].to_numpy(), X, status=df["status"].to_numpy(), ties=ties,
                     strata=df["g"].to_numpy(), offset=df["off"].to_numpy()).fit()  # fmt: skip
    np.testing.assert_allclose(ref.params.to_numpy(), ph.params, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(ref.bse.to_numpy(), ph.bse, rtol=1e-8)
    np.testing.assert_allclose(ref.llf, ph.llf, rtol=1e-10)
    np.testing.assert_allclose(ref.pvalues.to_numpy(), ph.pvalues, rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(np.asarray(ref.conf_int()), ph.conf_int(), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(
        ref.predict(df, type="link"), X @ ph.params + df["off"].to_numpy(), rtol=1e-8, atol=1e-10
    )
    text = str(ref.summary())
    assert "CONDITIONAL ON THE SELECTION" in text and "inverse observed information" in text
    assert "log HR" in text and ref.params.index[0] in text


def test_integer_weights_equal_phreg_on_repeated_rows_breslow():
    df = _frame(2)
    w = np.random.RandomState(2).randint(1, 4, len(df)).astype(float)
    w[::50] = 0.0  # a zero weight drops the row
    res = _fit(df, w, "breslow", "bin(age) + bin(bmi) + x + strata(g) + offset(off)")
    ref = res.refit()
    X, _ = res.selected_design()
    assert ref.converged and X.shape[1] >= 3
    rep = np.repeat(np.arange(len(df)), w.astype(int))
    ph = sm_hr.PHReg(df["time"].to_numpy()[rep], X[rep], status=df["status"].to_numpy()[rep],
                     ties="breslow", strata=df["g"].to_numpy()[rep],
                     offset=df["off"].to_numpy()[rep]).fit()  # fmt: skip
    np.testing.assert_allclose(ref.params.to_numpy(), ph.params, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(ref.bse.to_numpy(), ph.bse, rtol=1e-8)
    np.testing.assert_allclose(ref.llf, ph.llf, rtol=1e-10)


def test_weighted_efron_equals_lifelines():
    lifelines = pytest.importorskip("lifelines")
    df = _frame(3)
    w = np.random.RandomState(3).uniform(0.2, 3.0, len(df))  # analytic, non-integer
    res = _fit(df, w, "efron")
    ref = res.refit()
    X, names = res.selected_design()
    cols = [f"c{k}" for k in range(X.shape[1])]
    data = pd.DataFrame(X, columns=cols).assign(T=df["time"], E=df["status"], w=w)
    with pytest.warns(Warning):  # lifelines advises robust=True for non-integer weights
        cph = lifelines.CoxPHFitter().fit(data, "T", "E", weights_col="w")
    np.testing.assert_allclose(ref.llf, cph.log_likelihood_, rtol=1e-8)
    # lifelines stops its Newton earlier (measured: 2.4e-8 in the coefficients)
    np.testing.assert_allclose(ref.params.to_numpy(), cph.params_[cols].to_numpy(),
                               rtol=1e-6, atol=1e-6)  # fmt: skip
    np.testing.assert_allclose(ref.bse.to_numpy(), cph.standard_errors_[cols].to_numpy(),
                               rtol=1e-7)  # fmt: skip
    text = str(ref.summary())
    assert "case weights" in text and "var_weights" not in text


def test_weight_scale_keeps_coefficients_and_scales_standard_errors():
    df = _frame(4)
    w = np.random.RandomState(4).uniform(0.5, 2.0, len(df))
    base = _fit(df, w, "efron", "bin(age) + x + strata(g)").refit()
    for c in (1e-3, 7.0, 1e4):
        scaled = _fit(df, c * w, "efron", "bin(age) + x + strata(g)").refit()
        assert list(scaled.names) == list(base.names)
        np.testing.assert_allclose(scaled.params, base.params, rtol=1e-7, atol=1e-9)
        np.testing.assert_allclose(scaled.bse * np.sqrt(c), base.bse, rtol=1e-7)


def test_split_refit_of_a_weighted_cox_fit():
    df = _frame(5)
    w = np.random.RandomState(5).uniform(0.5, 2.0, len(df))
    ref = _fit(df, w, "breslow", "bin(age) + x").refit(split=0.5, random_state=0)
    assert ref.params.size > 0 and np.all(np.isfinite(ref.bse))
    assert "SAMPLE SPLITTING" in str(ref.summary())
