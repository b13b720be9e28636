"""broom's tidy outputs (issue 28, item 4): ``tidy()``, ``glance()``, ``augment()`` on the
penalised fit, the refit, the bootstrap and the cross-validation.

Refits are checked against statsmodels fitted independently on the refit's selected
design (to 1e-8, the precision of two IRLS fits stopped by the same rule); the other
objects against their own existing outputs (``params``, ``shape_functions``,
``shape_bands``, ``predict``, ``to_frame``), which the tidy frames must repeat exactly.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from numpy.testing import assert_allclose, assert_array_equal

import binarsity_stats as bs

BROOM = ["term", "estimate", "std.error", "statistic", "p.value", "conf.low", "conf.high"]


def _binary(n: int = 2000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"age": rng.uniform(20, 70, n), "region": rng.choice(["a", "b", "c"], n),
                       "z": rng.normal(size=n)})  # fmt: skip
    eta = -0.5 + 1.0 * (df["age"] > 45) + 0.3 * (df["region"] == "b") + 0.2 * df["z"]
    df["y"] = rng.binomial(1, 1 / (1 + np.exp(-eta)))
    return df


FORMULA = "y ~ bin(age, 10) + C(region) + z"


@pytest.fixture(scope="module")
def data() -> pd.DataFrame:
    return _binary()


@pytest.fixture(scope="module")
def res(data):
    return bs.glm(FORMULA, data, family="binomial").fit()  # the default: theory λ


@pytest.fixture(scope="module")
def boot(res):
    return res.bootstrap(n_boot=30, random_state=1)


def _statsmodels_refit(res, family, use_t=False):
    """statsmodels' GLM on the selected design, its IRLS run to convergence (its default
    stops when the deviance changes by less than 1e-8: parameters to ~1e-7 only)."""
    X, names = res.selected_design()
    model = sm.GLM(res.model.y, pd.DataFrame(X, columns=names), family=family)
    return model.fit(use_t=use_t, tol=1e-13, maxiter=200)


def _assert_wald_table(t, ref, ci):
    """The tidy table of a refit against statsmodels: estimates, SEs, statistics and
    bounds to a relative 1e-8 (two IRLS fits run to convergence); p-values to an
    absolute 1e-8, the margin that a relative 1e-8 on z gives p = 2Φ(−abs(z)), since
    abs(dp/dz) · abs(z) = 2 abs(z) φ(z) ≤ 0.5 (relative errors of tiny p-values are
    not bounded)."""
    for col, value in [
        ("estimate", ref.params),
        ("std.error", ref.bse),
        ("statistic", ref.tvalues),
        ("conf.low", ci[0]),
        ("conf.high", ci[1]),
    ]:
        assert_allclose(t[col].to_numpy(), np.asarray(value), rtol=1e-8, atol=1e-12, err_msg=col)
    assert_allclose(t["p.value"].to_numpy(), np.asarray(ref.pvalues), rtol=0, atol=1e-8)


# -- the penalised fit -----------------------------------------------------------------------
def test_tidy_of_the_fit_repeats_params_with_nan_standard_errors(res):
    t = res.tidy()
    assert list(t.columns[:7]) == BROOM
    assert list(t.columns[7:]) == ["variable", "level", "cut", "count"]
    assert list(t["term"]) == list(res.params.index)
    assert_array_equal(t["estimate"].to_numpy(), res.params.to_numpy())
    # no valid standard error for a penalised estimate: present and NaN
    assert t[["std.error", "statistic", "p.value", "conf.low", "conf.high"]].isna().all().all()
    # one row per level: the kept cuts are the fit's, the counts its bin counts
    assert int(t["cut"].sum()) == res.n_jumps > 0
    levels = t["level"].notna()
    assert_array_equal(t.loc[levels, "count"].to_numpy(), res.model.bin_counts)
    assert set(t["variable"]) == {"Intercept", "bin(age, 10)", "C(region)", "z"}
    odds = res.tidy(exponentiate=True, conf_int=False)
    assert "conf.low" not in odds.columns
    assert_allclose(odds["estimate"].to_numpy(), np.exp(res.params.to_numpy()), rtol=1e-15)


def test_tidy_merge_gives_one_row_per_constant_segment(res):
    t = res.tidy(merge=True)
    shapes = res.shape_functions(merge=True)
    blocks = t[t["level"].notna()]
    names = [f"{a}[{b}]" for a, b in zip(shapes["term"], shapes["label"], strict=True)]
    assert list(blocks["term"]) == names
    assert_array_equal(blocks["estimate"].to_numpy(), shapes["level"].to_numpy())
    assert_array_equal(blocks["count"].to_numpy(), shapes["count"].to_numpy())
    age = t[t["variable"] == "bin(age, 10)"]
    # every segment but the first starts at a kept cut-point
    assert len(age) == res.n_jumps + 1
    assert list(age["cut"]) == [False] + [True] * res.n_jumps
    assert list(age["level"].iloc[1:]) == list(res.cut_points()["right"])


def test_glance_of_the_fit_repeats_its_statistics(res, data):
    g = res.glance()
    assert len(g) == 1
    row = g.iloc[0]
    assert row["nobs"] == res.nobs == len(data)
    assert row["df"] == res.df and row["n.cuts"] == res.n_jumps
    for col, value in [("deviance", res.deviance), ("null.deviance", res.null_deviance),
                       ("logLik", res.llf), ("AIC", res.aic), ("BIC", res.bic),
                       ("lambda", res.lam), ("df.residual", res.df_resid)]:  # fmt: skip
        assert row[col] == value, col
    assert row["cv.scoring"] is None and np.isnan(row["cv.score"])


def test_augment_of_the_fit_on_training_and_new_rows(res, data):
    a = res.augment()
    assert list(a.columns) == [*data.columns, ".fitted", ".resid"]
    assert_array_equal(a[".fitted"].to_numpy(), res.predict(type="link"))
    assert_array_equal(a[".resid"].to_numpy(), res.resid_deviance)
    p = res.augment(type_predict="response", type_residuals="pearson")
    assert_array_equal(p[".fitted"].to_numpy(), res.predict())
    assert_array_equal(p[".resid"].to_numpy(), res.resid_pearson)
    new = data.iloc[:50].copy()
    out = res.augment(new, type_predict="response", type_residuals="response")
    assert_array_equal(out[".fitted"].to_numpy(), res.predict(new))
    assert_allclose(out[".resid"].to_numpy(), new["y"].to_numpy() - res.predict(new), rtol=1e-15)
    # deviance residuals of new rows: R's sign(y − μ) √(−2 log-likelihood of the row)
    dev = res.augment(new)
    mu = res.predict(new)
    y = new["y"].to_numpy()
    expected = np.sign(y - mu) * np.sqrt(-2 * (y * np.log(mu) + (1 - y) * np.log(1 - mu)))
    assert_allclose(dev[".resid"].to_numpy(), expected, rtol=1e-12)
    # the data are copied, never modified
    assert ".fitted" not in new.columns
    # without the response no residual; an explicit y gives it back
    no_y = res.augment(new.drop(columns="y"))
    assert ".resid" not in no_y.columns
    given = res.augment(new.drop(columns="y"), y=y)
    assert_allclose(given[".resid"].to_numpy(), dev[".resid"].to_numpy(), rtol=1e-15)


def test_augment_of_a_factor_response_counts_its_event_level(data):
    df = data.assign(outcome=np.where(data["y"] == 1, "yes", "no"))
    res = bs.glm("outcome ~ bin(age, 10) + z", df, family="binomial").fit()
    out = res.augment(df.iloc[:40], type_residuals="response", type_predict="response")
    assert_allclose(out[".resid"].to_numpy(),
                    df["y"].to_numpy()[:40] - res.predict(df.iloc[:40]), rtol=1e-15)  # fmt: skip


def test_arguments_are_checked_by_name(res, data):
    with pytest.raises(ValueError, match="type_predict"):
        res.augment(type_predict="probability")
    with pytest.raises(ValueError, match="type_residuals"):
        res.augment(type_residuals="working")
    with pytest.raises(ValueError, match="conf_level"):
        res.tidy(conf_level=95)
    with pytest.raises(TypeError, match="merge"):
        res.tidy(merge="yes")
    with pytest.raises(ValueError, match="only used together with newdata"):
        res.augment(y=data["y"])
    with pytest.raises(TypeError, match="newdata must be a pandas, polars or pyarrow DataFrame"):
        res.augment(data.to_numpy())
    with pytest.raises(ValueError, match="y has 3 values for 50 rows"):
        res.augment(data.iloc[:50], y=[0, 1, 0])


# -- the refit -------------------------------------------------------------------------------
@pytest.mark.parametrize("level", [0.95, 0.9])
def test_tidy_of_the_refit_equals_statsmodels(res, level):
    refit = res.refit()
    t = refit.tidy(conf_level=level)
    ref = _statsmodels_refit(res, sm.families.Binomial())
    assert list(t.columns) == BROOM
    assert list(t["term"]) == list(ref.params.index)
    _assert_wald_table(t, ref, ref.conf_int(alpha=1 - level))
    odds = refit.tidy(conf_level=level, exponentiate=True)
    assert_allclose(odds["conf.low"].to_numpy(), np.exp(t["conf.low"].to_numpy()), rtol=1e-15)
    assert_array_equal(odds["std.error"].to_numpy(), t["std.error"].to_numpy())


def test_tidy_and_glance_of_a_gaussian_refit_use_t_as_statsmodels():
    rng = np.random.default_rng(3)
    n = 1500
    df = pd.DataFrame({"x": rng.uniform(0, 1, n), "w": rng.normal(size=n)})
    df["y"] = 2.0 * (df["x"] > 0.4) + 0.5 * df["w"] + rng.normal(size=n)
    res = bs.glm("y ~ bin(x, 15) + w", df).fit()
    refit = res.refit()
    ref = _statsmodels_refit(res, sm.families.Gaussian(), use_t=True)
    t = refit.tidy()
    _assert_wald_table(t, ref, ref.conf_int())
    g = refit.glance().iloc[0]
    for col, value in [("deviance", ref.deviance), ("null.deviance", ref.null_deviance),
                       ("logLik", ref.llf), ("AIC", ref.aic), ("BIC", ref.bic),
                       ("dispersion", ref.scale), ("df.residual", ref.df_resid)]:  # fmt: skip
        assert_allclose(g[col], value, rtol=1e-8, err_msg=col)
    assert g["nobs"] == ref.nobs and g["df"] == len(ref.params)
    assert g["inference"] == "conditional on the selection"


def test_glance_and_augment_of_the_refit_equal_statsmodels(res, data):
    refit = res.refit()
    ref = _statsmodels_refit(res, sm.families.Binomial())
    g = refit.glance().iloc[0]
    for col, value in [("deviance", ref.deviance), ("null.deviance", ref.null_deviance),
                       ("logLik", ref.llf), ("AIC", ref.aic), ("BIC", ref.bic)]:  # fmt: skip
        assert_allclose(g[col], value, rtol=1e-8, err_msg=col)
    # training rows: statsmodels' residuals of every kind
    for kind, value in [("deviance", ref.resid_deviance), ("pearson", ref.resid_pearson),
                        ("response", ref.resid_response)]:  # fmt: skip
        a = refit.augment(type_residuals=kind)
        assert_allclose(a[".resid"].to_numpy(), np.asarray(value), rtol=1e-8, atol=1e-10)
    # new rows: the fit, its SE and interval are get_prediction's, on either scale
    new = data.iloc[100:160]
    for scale, cols in [
        ("link", ("predicted", "se", "ci_lower", "ci_upper")),
        ("response", ("mean", "mean_se", "mean_ci_lower", "mean_ci_upper")),
    ]:
        out = refit.augment(new, type_predict=scale, se_fit=True, interval=0.9)
        frame = refit.get_prediction(new, type=scale).summary_frame(alpha=0.1)
        for ours, theirs in zip((".fitted", ".se.fit", ".lower", ".upper"), cols, strict=True):
            assert_allclose(out[ours].to_numpy(), frame[theirs].to_numpy(), rtol=1e-10,
                            err_msg=f"{scale} {ours}")  # fmt: skip
    assert ".se.fit" not in refit.augment(new).columns


def test_glance_of_a_split_refit_says_so(res):
    refit = res.refit(split=0.5, random_state=0)
    g = refit.glance().iloc[0]
    assert g["inference"] == "sample splitting"
    assert g["nobs"] == len(refit.split["estimate_rows"])


# -- the bootstrap ---------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["percentile", "basic"])
def test_tidy_of_the_bootstrap_repeats_its_bands(res, boot, method):
    t = boot.tidy(conf_level=0.9, method=method)
    assert list(t.columns) == ["term", "estimate", "std.error", "conf.low", "conf.high",
                               "conf.method", "bias"]  # fmt: skip
    assert (t["conf.method"] == method).all()
    assert list(t["term"]) == list(res.params.index)
    assert_array_equal(t["estimate"].to_numpy(), res.params.to_numpy())
    bands = boot.shape_bands(0.9, method=method)
    levels = t.iloc[1 : 1 + len(bands)]
    assert_array_equal(levels["conf.low"].to_numpy(), bands["lower"].to_numpy())
    assert_array_equal(levels["conf.high"].to_numpy(), bands["upper"].to_numpy())
    assert_allclose(levels["std.error"].to_numpy(), boot.coef.std(axis=0, ddof=1), rtol=1e-12)
    assert_allclose(levels["bias"].to_numpy(), boot.coef.mean(axis=0) - res.coef, atol=1e-14)
    # the intercept and the linear term from their own resamples
    q = np.quantile(boot.intercept, [0.05, 0.95])
    if method == "basic":
        q = 2 * res.intercept - q[::-1]
    assert_allclose(t.loc[0, ["conf.low", "conf.high"]].to_numpy(dtype=float), q, rtol=1e-14)
    assert_allclose(t.iloc[-1]["std.error"], boot.dense_coef[:, 0].std(ddof=1), rtol=1e-12)


def test_glance_and_augment_of_the_bootstrap(res, boot, data):
    g = boot.glance().iloc[0]
    assert g["n.boot"] == boot.n_boot == 30 and g["n.converged"] == int(boot.converged.sum())
    assert g["n.cuts"] == res.n_jumps
    assert g["n.cuts.mean"] == pytest.approx(boot.summary_frame()["n_jumps"].mean(), rel=1e-15)
    new = data.iloc[:30]
    out = boot.augment(new, type_predict="response", interval=0.8)
    band = boot.predict(new, interval=0.8)
    assert_array_equal(out[".fitted"].to_numpy(), band["mean"].to_numpy())
    assert_array_equal(out[".lower"].to_numpy(), band["mean_ci_lower"].to_numpy())
    assert_array_equal(out[".upper"].to_numpy(), band["mean_ci_upper"].to_numpy())
    # percentile bands are centred on the penalised fit, the default relaxed ones on its
    # cut-points refitted without penalty
    train = boot.augment(method="percentile")
    assert_array_equal(train[".resid"].to_numpy(), res.resid_deviance)
    relaxed = boot.augment()
    assert_array_equal(relaxed[".fitted"].to_numpy(), boot.predict(type="link")["mean"].to_numpy())


# -- the cross-validation --------------------------------------------------------------------
def test_tidy_glance_augment_of_the_cv(data):
    cv = bs.glm(FORMULA, data, family="binomial").fit_cv(folds=3, n_lambdas=8, random_state=0)
    t = cv.tidy()
    frame = cv.to_frame()
    assert list(t.columns) == ["lambda", "estimate", "std.error", "conf.low", "conf.high", "df"]
    assert_array_equal(t["lambda"].to_numpy(), frame["lam"].to_numpy())
    assert_array_equal(t["estimate"].to_numpy(), frame["mean"].to_numpy())
    assert_array_equal(t["conf.high"].to_numpy(), (frame["mean"] + frame["se"]).to_numpy())
    g = cv.glance().iloc[0]
    assert (g["lambda.min"], g["lambda.1se"]) == (cv.lam_min, cv.lam_1se)
    assert g["cv.score"] == frame["mean"].min() and g["folds"] == 3
    a = cv.augment(data.iloc[:20])
    assert_array_equal(a[".fitted"].to_numpy(),
                       cv.predict(data.iloc[:20], type="link"))  # fmt: skip
    best = cv.best_.glance().iloc[0]
    assert best["cv.scoring"] == "deviance" and best["cv.score"] == g["cv.score"]


# -- Cox and scale -----------------------------------------------------------------------------
def test_cox_outputs_have_no_residuals_and_report_concordance():
    rng = np.random.default_rng(5)
    n = 600
    df = pd.DataFrame({"x": rng.uniform(0, 1, n)})
    df["time"] = rng.exponential(1 / np.exp(1.0 * (df["x"] > 0.5)))
    df["event"] = (rng.random(n) < 0.8).astype(int)
    res = bs.glm("Surv(time, event) ~ bin(x, 8)", df, family="cox").fit()
    assert res.glance().iloc[0]["concordance"] == res.concordance
    a = res.augment(df.iloc[:10])
    assert ".resid" not in a.columns
    assert_array_equal(a[".fitted"].to_numpy(), res.predict(df.iloc[:10], type="link"))
    refit = res.refit()
    with pytest.raises(ValueError, match="cox"):
        refit.augment(df.iloc[:10], se_fit=True)
    t = refit.tidy()
    assert_array_equal(t["estimate"].to_numpy(), np.asarray(refit.params))
    assert_array_equal(t["std.error"].to_numpy(), np.asarray(refit.bse))
    assert_array_equal(t[["conf.low", "conf.high"]].to_numpy(), np.asarray(refit.conf_int()))
    g = refit.glance().iloc[0]
    assert g["nobs"] == n and g["df"] == len(t) and np.isnan(g["deviance"])
    assert g["AIC"] == pytest.approx(-2 * refit.llf + 2 * len(t), rel=1e-15)


def test_outputs_at_1e5_rows_repeat_the_fit():
    rng = np.random.default_rng(7)
    n = 100_000
    df = pd.DataFrame({"x": rng.uniform(0, 10, n)})
    df["y"] = np.sin(df["x"]) + rng.normal(size=n)
    res = bs.glm("y ~ bin(x, 20)", df).fit()
    a = res.augment()
    assert len(a) == n
    assert_array_equal(a[".fitted"].to_numpy(), res.predict(type="link"))
    # gaussian: the deviance residuals are y − μ and add up to the deviance
    assert_allclose(np.sum(a[".resid"].to_numpy() ** 2), res.glance().iloc[0]["deviance"],
                    rtol=1e-10)  # fmt: skip
    t = res.refit().tidy()
    assert t["std.error"].notna().all() and (t["conf.low"] < t["conf.high"]).all()
