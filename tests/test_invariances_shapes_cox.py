"""Invariances and reported statistics of the session-5 shapes and of ``family="cox"``.

Issue 14 ("statistics must be right, not only run"), at the defaults a user runs (the
default ``tol``, solver and penalty weights; ``lam="theory"`` or a λ where the fit has
jumps), on hard data (heavy-tailed, tied, weights ×1e4):

* exposure units: ``offset(log(c·exposure))`` moves only the intercept (poisson, gamma,
  Tweedie);
* a strictly increasing map a·x + b of a monotone binned feature maps the cut-points and
  leaves every fitted value unchanged; reversing an ordered factor's levels swaps
  ``monotone="increasing"`` and ``"decreasing"`` and gives the same fit (the balanced
  penalty weights are symmetric); with continuous x, x → −x is *not* an exact
  invariance (the quantile bins of −x are not the mirror of those of x, docs);
* the level order of ``C()`` and of the factor of a by-group term ``bin(x):C(g)``;
* Cox: time units, strata labels, row order, weight scale (coefficients, cut-points,
  deviance in the weights' units, C-index, baseline hazard on the time scale), Efron =
  Breslow without tied times;
* against statsmodels on the same model: ``PHReg`` (Breslow and Efron, strata and
  offset: log-likelihood at λ = 0, refit coefficients and SEs), lifelines' weighted
  Efron likelihood; by-group and monotone refits equal the penalised fit at λ = 0 and
  statsmodels' GLM on the (level × bin) cells.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

import binarsity_stats as bs

FEW = settings(max_examples=3, deadline=None, derandomize=True,
               suppress_health_check=[HealthCheck.too_slow])  # fmt: skip


def _glm(formula, data, family="gaussian", **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return bs.glm(formula, data, family=family, **kw)


def _frame(n=700, seed=4):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"u": rng.uniform(0, 10, n), "g": rng.choice(["x", "y", "z"], n),
                       "r": rng.choice(["lo", "mid", "hi", "top"], n),
                       "w": 1e4 * rng.choice([0.5, 1.0, 3.0], n),
                       "exposure": rng.uniform(0.1, 1, n)})  # fmt: skip
    rank = df.r.map({"lo": 0, "mid": 1, "hi": 2, "top": 3})
    step = np.select([df.g == "x", df.g == "y"], [df.u > 4, df.u > 7], 0)
    mu = np.exp(0.6 * step + 0.2 * (df.g == "z") + 0.15 * rank) * df.exposure
    df["poisson"] = rng.poisson(3 * mu).astype(float)
    df["gamma"] = rng.gamma(3.0, mu / 3)
    df["tweedie"] = np.where(rng.random(n) < 0.5, 0.0, rng.gamma(2.0, mu))
    df["gaussian"] = 2 * step + 0.5 * rank + rng.standard_t(3, n)
    return df


DF = _frame()
FAMILY = {"gaussian": "gaussian", "poisson": "poisson", "gamma": "gamma",
          "tweedie": ("tweedie", 1.5)}  # fmt: skip


# ------------------------------------------------------------------ exposure units


@pytest.mark.parametrize("y", ["poisson", "gamma", "tweedie"])
@given(c=st.sampled_from([1e-6, 12.0, 1e4]))
@FEW
def test_exposure_units_move_only_the_intercept(y, c):
    f = f"{y} ~ bin(u) + C(g) + offset(np.log({{}} * exposure))"
    # Tweedie: lam="theory" fuses everything on this data; a λ with jumps instead
    lam = "theory" if y != "tweedie" else 0.2 * _glm(f.format(1.0), DF, FAMILY[y]).lambda_max()
    a = _glm(f.format(1.0), DF, FAMILY[y], sample_weight="w").fit(lam=lam)
    b = _glm(f.format(c), DF, FAMILY[y], sample_weight="w").fit(lam=lam)
    assert a.n_jumps > 0
    assert_allclose(b.lam, a.lam, rtol=1e-10)
    pa, pb = a.params.to_numpy(), b.params.to_numpy()
    assert_allclose(pb[0], pa[0] - np.log(c), rtol=0, atol=1e-8)
    assert_allclose(pb[1:], pa[1:], rtol=0, atol=1e-8)
    assert_allclose(b.fittedvalues, a.fittedvalues, rtol=1e-8)
    assert_allclose(b.deviance, a.deviance, rtol=1e-9)
    assert_allclose(b.refit().bse.to_numpy(), a.refit().bse.to_numpy(), rtol=1e-6)


# ------------------------------------------------------------------ monotone maps


@pytest.mark.parametrize("y", ["gaussian", "poisson", "gamma"])
@pytest.mark.parametrize("shape", ["increasing", "decreasing"])
@given(ab=st.sampled_from([(3.0, -7.0), (1e-6, 1e6), (1e8, 0.0)]))
@FEW
def test_increasing_map_of_a_monotone_feature_maps_the_cut_points(y, shape, ab):
    a_, b_ = ab
    f = f"{y} ~ bin(u, 20, monotone='{shape}') + C(r)"
    r1 = _glm(f, DF, FAMILY[y], sample_weight="w").fit()
    r2 = _glm(f, DF.assign(u=a_ * DF.u + b_), FAMILY[y], sample_weight="w").fit()
    c1, c2 = r1.cut_points(), r2.cut_points()
    assert len(c1) == len(c2)
    assert_allclose(c2["cut"].to_numpy(float), a_ * c1["cut"].to_numpy(float) + b_, rtol=1e-12)
    assert_allclose(r2.fittedvalues, r1.fittedvalues, rtol=1e-12)


@pytest.mark.parametrize("y", ["gaussian", "poisson", "tweedie"])
def test_reversed_ordered_factor_swaps_increasing_and_decreasing(y):
    levels = ["lo", "mid", "hi", "top"]
    fits = {}
    for name, lv, shape in (("up", levels, "increasing"), ("down", levels[::-1], "decreasing")):
        f = f"{y} ~ ordered(r, levels={lv!r}, monotone='{shape}') + bin(u, 10)"
        fits[name] = _glm(f, DF, FAMILY[y], sample_weight="w").fit()
    up, down = fits["up"], fits["down"]
    assert up.n_jumps > 0 and up.n_jumps == down.n_jumps
    assert_allclose(down.lam, up.lam, rtol=1e-10)
    assert_allclose(down.fittedvalues, up.fittedvalues, rtol=1e-8)
    # the same TV fit without the shape, too
    tv = [_glm(f"{y} ~ ordered(r, levels={lv!r}) + bin(u, 10)", DF, FAMILY[y],
               sample_weight="w").fit() for lv in (levels, levels[::-1])]  # fmt: skip
    assert_allclose(tv[1].fittedvalues, tv[0].fittedvalues, rtol=1e-8)


# ------------------------------------------------------------------ level orders


@pytest.mark.parametrize("y", ["gaussian", "poisson", "gamma"])
@pytest.mark.parametrize("term", ["bin(u, 8) + C(g{lv})", "bin(u, 8):C(g{lv})",
                                  "bin(u, 8, monotone='increasing'):C(g{lv})"])  # fmt: skip
def test_level_order_of_a_factor_changes_no_fit(y, term):
    fits = [
        _glm(f"{y} ~ {term.format(lv=lv)} + C(r)", DF, FAMILY[y], sample_weight="w").fit()
        for lv in ("", ", levels=['z', 'x', 'y']")
    ]
    assert fits[0].n_jumps > 0
    assert_allclose(fits[1].lam, fits[0].lam, rtol=1e-12)
    assert_allclose(fits[1].fittedvalues, fits[0].fittedvalues, rtol=1e-8)
    assert_allclose(fits[1].deviance, fits[0].deviance, rtol=1e-10)
    # renaming the levels (a different sort order) changes nothing either
    renamed = DF.assign(g=DF.g.map({"x": "b", "y": "c", "z": "a"}))
    other = _glm(f"{y} ~ {term.format(lv='')} + C(r)", renamed, FAMILY[y],
                 sample_weight="w").fit()  # fmt: skip
    assert_allclose(other.fittedvalues, fits[0].fittedvalues, rtol=1e-8)


# ------------------------------------------------------------------ by-group / monotone refits


@pytest.mark.parametrize("y", ["gaussian", "poisson", "gamma"])
def test_by_group_fit_at_lambda_zero_is_statsmodels_on_the_cells(y):
    model = _glm(f"{y} ~ bin(u, 5):C(g) + offset(np.log(exposure))", DF, FAMILY[y],
                 sample_weight="w")  # fmt: skip
    res = model.fit(lam=0.0, tol=1e-12, max_iter=5000)
    codes = np.asarray(model.design.codes[0]).astype(int)  # level·d + bin
    X = pd.get_dummies(pd.Series(codes)).to_numpy(float)
    fam = {"gaussian": sm.families.Gaussian(), "poisson": sm.families.Poisson(),
           "gamma": sm.families.Gamma(sm.families.links.Log())}[y]  # fmt: skip
    off = np.log(DF.exposure.to_numpy())
    ref = sm.GLM(DF[y].to_numpy(), X, family=fam, offset=off,
                 var_weights=DF.w.to_numpy()).fit(tol=1e-12)  # fmt: skip
    assert X.shape[1] == 15
    assert_allclose(res.fittedvalues, ref.fittedvalues, rtol=1e-8)
    assert_allclose(res.deviance, ref.deviance, rtol=1e-9)
    assert_allclose(res.llf, ref.llf, rtol=1e-9)
    refit = res.refit()
    assert_allclose(refit.llf, ref.llf, rtol=1e-9)
    # standard errors of the linear predictor do not depend on the parametrisation
    se = refit.predict(DF, type="link", se_fit=True)["se_fit"].to_numpy()
    se_ref = ref.get_prediction(X, offset=off, which="linear").se
    assert_allclose(se, se_ref, rtol=1e-6)


@pytest.mark.parametrize("y", ["gaussian", "poisson", "gamma"])
@pytest.mark.parametrize("term", ["bin(u, 8, monotone='increasing'):C(g)",
                                  "bin(u, 8, monotone='decreasing') + C(g)"])  # fmt: skip
def test_monotone_refit_at_lambda_zero_is_the_constrained_fit(y, term):
    # at λ = 0 the monotone fit is the isotonic MLE; its pooled segments satisfy the
    # score equations of the unconstrained GLM on those segments, so the refit is the fit
    res = _glm(f"{y} ~ {term}", DF, FAMILY[y], sample_weight="w").fit(
        lam=0.0, tol=1e-12, max_iter=5000
    )
    ref = res.refit()
    assert_allclose(ref.predict(DF), res.predict(DF), rtol=1e-8)
    assert_allclose(ref.llf, res.llf, rtol=1e-10)


# ------------------------------------------------------------------ Cox


def _surv(n=500, seed=3, tied=False):
    rng = np.random.default_rng(seed)
    age = rng.uniform(20, 80, n)
    bmi = 25 + 4 * rng.standard_t(3, n)  # heavy-tailed
    t = rng.exponential(np.exp(-(0.9 * (age > 60) - 0.5 * (bmi < 22))))
    cens = rng.exponential(1.5, n)
    df = pd.DataFrame({"time": np.minimum(t, cens), "event": (t <= cens).astype(int),
                       "age": age, "bmi": bmi, "s": rng.choice(["a", "b", "c"], n),
                       "w": rng.integers(1, 4, n).astype(float),
                       "off": rng.normal(0, 0.3, n)})  # fmt: skip
    if tied:
        df["time"] = np.ceil(df["time"] * 4)
    return df


SURV = _surv()
COX = "Surv(time, event) ~ bin(age) + bin(bmi) + strata(s) + offset(off)"
TIES = {"breslow": "cox", "efron": ("cox", "efron")}


def _cox_lam():
    # lam="theory" fuses every bin on 500 rows; 0.15 λ_max keeps ~10 cut-points
    return 0.15 * _glm(COX, SURV, "cox", sample_weight="w").lambda_max()


LAM = _cox_lam()


def _cox(data=SURV, ties="breslow", weights="w", formula=COX, **kw):
    kw.setdefault("lam", LAM)
    return _glm(formula, data, TIES[ties], sample_weight=weights).fit(**kw)


def _same_cox_fit(a, b, rtol=1e-10):
    assert a.n_jumps > 0 and b.n_jumps == a.n_jumps
    assert_allclose(b.params.to_numpy(), a.params.to_numpy(), rtol=rtol, atol=1e-12)
    assert_allclose(b.concordance, a.concordance, rtol=1e-12)


@pytest.mark.parametrize("ties", sorted(TIES))
@given(c=st.sampled_from([1e-6, 24.0, 1e6]))
@FEW
def test_cox_time_units_change_nothing_but_the_time_axis(ties, c):
    a = _cox(ties=ties)
    b = _cox(SURV.assign(time=c * SURV.time), ties=ties)
    _same_cox_fit(a, b)
    assert_allclose([b.llf, b.deviance], [a.llf, a.deviance], rtol=1e-12)
    ha, hb = a.baseline_hazard(), b.baseline_hazard()
    assert_allclose(hb["time"], c * ha["time"], rtol=1e-12)
    assert_allclose(hb["cumhaz"], ha["cumhaz"], rtol=1e-9)
    new = SURV.head(5)
    assert_allclose(b.predict(new, type="survival", times=[c * 0.5, c * 2.0]),
                    a.predict(new, type="survival", times=[0.5, 2.0]), rtol=1e-9)  # fmt: skip


@pytest.mark.parametrize("ties", sorted(TIES))
@given(c=st.sampled_from([3.0, 1e4, 1e-4]), seed=st.integers(0, 2**16))
@FEW
def test_cox_weight_scale_row_order_and_strata_labels(ties, c, seed):
    a = _cox(ties=ties)
    b = _cox(ties=ties, weights=c * SURV.w)
    _same_cox_fit(a, b, rtol=1e-6)
    assert_allclose(b.deviance, c * a.deviance, rtol=1e-7)  # in the weights' units
    perm = np.random.default_rng(seed).permutation(len(SURV))
    shuffled = SURV.iloc[perm].reset_index(drop=True)
    _same_cox_fit(a, _cox(shuffled, ties=ties), rtol=1e-6)
    relabel = SURV.assign(s=SURV.s.map({"a": "z", "b": "y", "c": "x"}))
    r = _cox(relabel, ties=ties)
    _same_cox_fit(a, r, rtol=1e-6)
    assert_allclose(r.llf, a.llf, rtol=1e-10)


def test_cox_efron_equals_breslow_without_tied_times():
    assert not SURV.time.duplicated().any()
    b, e = _cox(ties="breslow"), _cox(ties="efron")
    _same_cox_fit(b, e, rtol=1e-12)
    assert_allclose([e.llf, e.deviance], [b.llf, b.deviance], rtol=1e-12)


@pytest.mark.parametrize("tied", [False, True])
@pytest.mark.parametrize("ties", sorted(TIES))
def test_cox_at_lambda_zero_and_refit_equal_phreg_with_strata_and_offset(ties, tied):
    from statsmodels.duration.hazard_regression import PHReg

    df = _surv(400, seed=5, tied=tied)
    f = "Surv(time, event) ~ bin(age, 4) + bin(bmi, 3) + strata(s) + offset(off)"
    res = _cox(df, ties=ties, weights=None, formula=f, lam=0.0, tol=1e-12, max_iter=5000)
    X, _ = res.selected_design()
    ph = PHReg(df.time.to_numpy(), X, status=df.event.to_numpy(), strata=df.s.to_numpy(),
               offset=df.off.to_numpy(), ties=ties).fit()  # fmt: skip
    assert X.shape[1] == 5
    assert_allclose(res.llf, ph.llf, rtol=1e-12)
    ref = res.refit()
    assert_allclose(ref.params.to_numpy(), ph.params, rtol=1e-8)
    assert_allclose(ref.bse.to_numpy(), ph.bse, rtol=1e-8)
    # η is identified up to a constant (no intercept): the refit is reference-coded
    diff = res.predict(df, type="linear") - ref.predict(df, type="link")
    assert np.ptp(diff) < 1e-8


@pytest.mark.parametrize("tied", [False, True])
def test_weighted_cox_breslow_is_repeated_rows_and_efron_is_lifelines(tied):
    df = _surv(300, seed=6, tied=tied)
    f = "Surv(time, event) ~ bin(age, 4) + bin(bmi, 3) + strata(s)"
    kw = dict(formula=f, lam=0.0, tol=1e-12, max_iter=5000)
    weighted = _cox(df, "breslow", "w", **kw)
    repeated = _cox(df.loc[df.index.repeat(df.w.astype(int))].reset_index(drop=True),
                    "breslow", None, **kw)  # fmt: skip
    assert_allclose(weighted.params.to_numpy(), repeated.params.to_numpy(), atol=1e-9)
    assert_allclose([weighted.llf, weighted.deviance], [repeated.llf, repeated.deviance],
                    rtol=1e-10)  # fmt: skip
    lifelines = pytest.importorskip("lifelines")
    efron = _cox(df, "efron", "w", **kw)
    X, _ = efron.selected_design()
    frame = pd.DataFrame(X, columns=[f"c{i}" for i in range(X.shape[1])])
    frame = frame.assign(time=df.time.to_numpy(), event=df.event.to_numpy(),
                         w=df.w.to_numpy(), s=df.s.to_numpy())  # fmt: skip
    cph = lifelines.CoxPHFitter().fit(frame, "time", "event", weights_col="w", strata=["s"])
    assert_allclose(efron.llf, cph.log_likelihood_, rtol=1e-9)


# ------------------------------------------------------------------ gamma / Tweedie statistics


@pytest.mark.parametrize("kind", ["analytic", "freq"])
@pytest.mark.parametrize("intercept", [True, False])
@pytest.mark.parametrize("y", ["gamma", "tweedie"])
def test_gamma_tweedie_statistics_at_lambda_zero_equal_statsmodels(y, intercept, kind):
    df = DF.assign(wf=np.random.default_rng(1).integers(1, 4, len(DF)).astype(float))
    wcol = "w" if kind == "analytic" else "wf"
    f = f"{y} ~ bin(u, 4) + bin(exposure, 3) + C(g) + offset(np.log(exposure))"
    f += "" if intercept else " - 1"
    res = _glm(f, df, FAMILY[y], sample_weight=wcol, weights_kind=kind).fit(
        lam=0.0, tol=1e-12, max_iter=5000
    )
    X, _ = res.selected_design()
    fam = (sm.families.Gamma(sm.families.links.Log()) if y == "gamma" else
           sm.families.Tweedie(var_power=1.5, link=sm.families.links.Log()))  # fmt: skip
    w = {"var_weights" if kind == "analytic" else "freq_weights": df[wcol].to_numpy()}
    off = np.log(df.exposure.to_numpy())
    ref = sm.GLM(df[y].to_numpy(), X, family=fam, offset=off, **w).fit(tol=1e-13)
    assert X.shape[1] == 8
    for ours, theirs in ((res.deviance, ref.deviance), (res.pearson_chi2, ref.pearson_chi2),
                         (res.dispersion, ref.scale), (res.llf, ref.llf), (res.aic, ref.aic),
                         (res.df_resid, ref.df_resid)):  # fmt: skip
        assert_allclose(ours, theirs, rtol=1e-9)
    assert_allclose(res.fittedvalues, ref.fittedvalues, rtol=1e-9)
    refit = res.refit()
    assert_allclose(refit.scale, ref.scale, rtol=1e-9)
    se = refit.predict(df, type="link", se_fit=True)["se_fit"].to_numpy()
    assert_allclose(se, ref.get_prediction(X, offset=off, which="linear").se, rtol=1e-7)
    if intercept:
        assert_allclose(res.null_deviance, ref.null_deviance, rtol=1e-9)
    else:  # R's null model without an intercept: the offset alone
        null = fam.deviance(df[y].to_numpy(), np.exp(off), **w)
        assert_allclose(res.null_deviance, null, rtol=1e-9)


# ------------------------------------------------------------------ cross-validation


def test_cv_choice_is_invariant_to_weight_scale_and_time_units():
    cv = dict(folds=4, random_state=0, n_lambdas=20)
    a = _glm("gamma ~ bin(u) + C(g)", DF, "gamma", sample_weight="w").fit_cv(**cv)
    b = _glm("gamma ~ bin(u) + C(g)", DF, "gamma", sample_weight=1e-4 * DF.w).fit_cv(**cv)
    assert_allclose([b.lam_min, b.lam_1se], [a.lam_min, a.lam_1se], rtol=1e-9)
    assert b.best_.n_jumps == a.best_.n_jumps > 0
    c = _glm(COX, SURV, "cox", sample_weight="w").fit_cv(**cv)
    d = _glm(COX, SURV.assign(time=1e5 * SURV.time), "cox", sample_weight=3.0 * SURV.w).fit_cv(**cv)
    assert_allclose([d.lam_min, d.lam_1se], [c.lam_min, c.lam_1se], rtol=1e-9)
    assert d.best_.n_jumps == c.best_.n_jumps > 0
    # fold ids given as a column travel with the rows: a permutation changes nothing
    ids = SURV.assign(fold=np.arange(len(SURV)) % 4)
    perm = np.random.default_rng(1).permutation(len(ids))
    e, f = (_glm(COX, frame, "cox", sample_weight="w").fit_cv(folds="fold", n_lambdas=20)
            for frame in (ids, ids.iloc[perm].reset_index(drop=True)))  # fmt: skip
    assert_allclose([f.lam_min, f.lam_1se], [e.lam_min, e.lam_1se], rtol=1e-9)


@pytest.mark.parametrize("y", ["gaussian", "poisson"])
def test_negated_feature_swaps_monotone_when_every_value_has_its_own_bin(y):
    # docs/user_guide/binning.md: exact with fewer distinct values than bins
    tied = DF.assign(u=np.round(DF.u))  # 11 values, 20 bins
    up = _glm(f"{y} ~ bin(u, 20, monotone='increasing') + C(r)", tied, FAMILY[y],
              sample_weight="w").fit()  # fmt: skip
    down = _glm(f"{y} ~ bin(u, 20, monotone='decreasing') + C(r)", tied.assign(u=-tied.u),
                FAMILY[y], sample_weight="w").fit()  # fmt: skip
    assert up.n_jumps > 0 and down.n_jumps == up.n_jumps
    assert_allclose(down.fittedvalues, up.fittedvalues, rtol=1e-10)
    assert_allclose(np.sort(-down.cut_points()["cut"].to_numpy(float)),
                    np.sort(up.cut_points()["cut"].to_numpy(float)) + 1.0)  # fmt: skip


# ------------------------------------------------------------------ estimators


def test_estimators_by_monotone_and_strata_are_invariant_and_equal_the_formulas():
    X = DF[["u", "g", "r"]]
    relabel = {"x": "b", "y": "c", "z": "a"}
    perm = np.random.default_rng(0).permutation(len(DF))
    for kw, formula in (({"monotone": {"u": "increasing"}},
                         "poisson ~ bin(u, 50, monotone='increasing') + C(g) + C(r)"),
                        ({"by": {"u": "g"}}, "poisson ~ bin(u, 50):C(g) + C(r)")):  # fmt: skip
        est = dict(family="poisson", categorical_features=["g", "r"], **kw)
        a = bs.BinarsityGLM(**est).fit(X, DF.poisson, sample_weight=DF.w)
        pa = a.predict(X)
        b = bs.BinarsityGLM(**est).fit(X, DF.poisson, sample_weight=1e-4 * DF.w)
        c = bs.BinarsityGLM(**est).fit(X.iloc[perm], DF.poisson.iloc[perm],
                                       sample_weight=DF.w.iloc[perm])  # fmt: skip
        Xr = X.assign(g=X.g.map(relabel))
        d = bs.BinarsityGLM(**est).fit(Xr, DF.poisson, sample_weight=DF.w)
        f = _glm(formula, DF, "poisson", sample_weight="w").fit()
        # each fit is certified to the default tol (KKT ≤ 1e-7 in gradient units); since
        # the polish is skipped where CD's own rate meets it (issue 27), two fits of the
        # same problem agree to the tolerance's margin, not to rounding
        for other in (b.predict(X), c.predict(X), d.predict(Xr), f.predict(DF)):
            assert_allclose(other, pa, rtol=2e-6)
    Xs = SURV[["age", "bmi", "s"]]
    y = np.empty(len(SURV), dtype=[("event", bool), ("time", float)])
    y["event"], y["time"] = SURV.event == 1, SURV.time
    y2 = y.copy()
    y2["time"] = 1e4 * y["time"]
    for ties in TIES.values():
        est = dict(family=ties, strata="s", lam=LAM, categorical_features=["s"])
        a = bs.BinarsityGLM(**est).fit(Xs, y, sample_weight=SURV.w)
        b = bs.BinarsityGLM(**est).fit(Xs, y2, sample_weight=3 * SURV.w)
        f = _glm("Surv(time, event) ~ bin(age) + bin(bmi) + strata(s)", SURV, ties,
                 sample_weight="w").fit(lam=LAM)  # fmt: skip
        assert_allclose(b.predict(Xs), a.predict(Xs), rtol=1e-9)
        assert_allclose(f.predict(SURV, type="risk"), a.predict(Xs), rtol=1e-9)
        assert_allclose(b.score(Xs, y2), a.score(Xs, y), rtol=1e-12)
