"""Named gamma and Tweedie families (issue 14): ``family="gamma"``, ``"tweedie"``,
``("tweedie", p)``, their Cython kernels (equal to the NumPy half-deviance path to
rounding), fits with weights and an exposure offset on both solvers, summaries, refit,
pickles, to_spec, the standalone scorer and SQL (log link).
"""

from __future__ import annotations

import json
import pickle
import sqlite3

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from numpy.testing import assert_allclose

from binarsity_stats import BinarsityGLM
from binarsity_stats.families import _statsmodels
from binarsity_stats import from_spec
from binarsity_stats import glm
from binarsity_stats.design import standalone_scorer as scorer
from binarsity_stats.families._families import get_family
from binarsity_stats.families._statsmodels import StatsmodelsFamily

NAMED = {"gamma": "gamma", "tweedie": "tweedie", "tweedie13": ("tweedie", 1.3)}


def _generic(fam):
    """The same family on the NumPy path (no kernels)."""
    twin = StatsmodelsFamily(fam.to_statsmodels())
    twin._fast = None
    return twin


def _claims(n=600, seed=3, zeros=True):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "age": rng.integers(18, 80, n).astype(float),
        "power": rng.lognormal(0, 1, n),   # heavy-tailed
        "region": rng.choice(list("abc"), n),
        "exposure": rng.uniform(0.05, 1.0, n),
        "w": rng.choice([0.0, 0.5, 1.0, 3.0], n),
    })  # fmt: skip
    eta = 0.4 * (df.age < 30) + 0.3 * (df.power > 2) - 0.2 * (df.region == "c")
    mu = np.exp(eta + np.log(df.exposure))
    sev = rng.gamma(2.0, mu / 2.0)
    df["y"] = np.where(rng.random(n) < 0.4, 0.0, sev) if zeros else sev
    return df


def test_the_names_give_log_link_families_with_kernels():
    g = get_family("gamma")
    assert (g.name, g.link, g.label) == ("gamma", "log", "Gamma")
    t = get_family("tweedie")
    assert t.label == "Tweedie(var_power=1.5)" and t.link == "log"
    assert get_family(("Tweedie", 1.3)).to_statsmodels().var_power == 1.3
    for fam in (g, t, get_family(("tweedie", 1.3))):
        assert fam._fast is not None
    # a statsmodels instance of the same family gets the same kernels
    assert get_family(sm.families.Gamma(sm.families.links.Log()))._fast is not None
    assert get_family("gamma") == get_family(sm.families.Gamma(sm.families.links.Log()))


@pytest.mark.parametrize("bad, match", [
    (("tweedie", 2.5), r"power must be a number in \(1, 2\).*got 2.5"),
    (("tweedie", 1.0), r"power must be a number in \(1, 2\)"),
    (("tweedie", "x"), r"power must be a number"),
    (("gamma", 1.5), r"for the Tweedie family only"),
    ("gama", r"Did you mean 'gamma'"),
])  # fmt: skip
def test_bad_names_and_powers_are_refused_by_name(bad, match):
    with pytest.raises(ValueError, match=match):
        get_family(bad)


@pytest.mark.parametrize("name", sorted(NAMED))
def test_kernels_equal_the_numpy_path_to_rounding(name):
    fam = get_family(NAMED[name])
    twin = _generic(fam)
    rng = np.random.default_rng(1)
    n = 2000
    eta = np.concatenate([rng.normal(0, 3, n - 6), [-40.0, 40.0, 650.0, -650.0, 0.0, 1e-9]])
    y = rng.lognormal(0, 2, n)  # heavy-tailed, tiny and huge
    if name != "gamma":
        y[rng.random(n) < 0.3] = 0.0
    sw = rng.choice([0.0, 0.1, 1.0, 7.0], n)
    assert_allclose(fam.loss_sum(eta, y, sw), twin.loss_sum(eta, y, sw), rtol=1e-11)
    outs = [np.empty(n) for _ in range(4)]
    lf = fam.grad_hess(eta, y, sw, 0.25, outs[0], outs[1])
    lt = twin.grad_hess(eta, y, sw, 0.25, outs[2], outs[3])
    assert_allclose(lf, lt, rtol=1e-11)
    assert_allclose(outs[0], outs[2], rtol=1e-12, atol=0)
    assert_allclose(outs[1], outs[3], rtol=1e-12, atol=0)
    fam.grad_hess_only(eta, y, sw, 0.25, outs[0], outs[1])
    assert_allclose(outs[0], outs[2], rtol=1e-12, atol=0)
    # overflow: +inf loss (as the NumPy path), finite derivatives
    big = np.array([-800.0 if name == "gamma" else 3000.0])
    assert fam.loss_sum(big, np.ones(1), np.ones(1)) == np.inf
    assert twin.loss_sum(big, np.ones(1), np.ones(1)) == np.inf
    fam.grad_hess(big, np.ones(1), np.ones(1), 1.0, outs[0][:1], outs[1][:1])
    assert np.isfinite(outs[0][0]) and np.isfinite(outs[1][0])


def test_kernels_refuse_short_buffers():
    from binarsity_stats.kernels import _glm_kernels as k

    a, b = np.ones(5), np.ones(3)
    with pytest.raises(ValueError, match="same length"):
        k.tweedie_log_loss(a, b, a, 1.5)
    with pytest.raises(ValueError, match="same length"):
        k.gamma_log_grad_hess(a, a, a, 1.0, a, b)


@pytest.mark.parametrize("solver", ["cd", "fista"])
@pytest.mark.parametrize("name", ["gamma", "tweedie"])
def test_fit_with_weights_and_exposure_equals_the_numpy_path(name, solver, monkeypatch):
    df = _claims(zeros=name != "gamma")
    formula = "y ~ bin(age, 10) + bin(power, 10) + C(region) + offset(np.log(exposure))"
    res = glm(formula, df, family=NAMED[name], sample_weight=df["w"]).fit(lam=3e-3, solver=solver)
    monkeypatch.setattr(_statsmodels, "_fast_path", lambda *a: None)
    slow = glm(formula, df, family=NAMED[name], sample_weight=df["w"])
    assert slow.family._fast is None
    ref = slow.fit(lam=3e-3, solver=solver)
    assert_allclose(res.predict(df), ref.predict(df), rtol=1e-6)
    # and the other solver reaches the same objective
    other = glm(formula, df, family=NAMED[name], sample_weight=df["w"]).fit(
        lam=3e-3, solver="fista" if solver == "cd" else "cd"
    )
    assert_allclose(res.predict(df), other.predict(df), rtol=1e-4)


def test_unpenalised_fit_equals_statsmodels_with_exposure_and_weights():
    df = _claims(zeros=False)
    res = glm("y ~ bin(age, 4) + C(region) + offset(np.log(exposure))", df, family="gamma",
              sample_weight=df["w"]).fit(lam=0.0, tol=1e-10)  # fmt: skip
    ref = res.refit()
    assert_allclose(res.predict(df), ref.predict(df), rtol=1e-6)


@pytest.mark.parametrize("name", sorted(NAMED))
def test_summary_pickle_spec_scorer_and_sql(name):
    df = _claims(zeros=name != "gamma")
    res = glm("y ~ bin(age, 8) + bin(power, 6) + C(region) + offset(np.log(exposure))", df,
              family=NAMED[name]).fit(lam=5e-3)  # fmt: skip
    text = str(res.summary())
    assert ("Gamma" in text or "Tweedie" in text) and "Link Function:" in text
    assert "Dispersion (phi, chi2/df)" in text
    back = pickle.loads(pickle.dumps(res))
    assert back.model.family == res.model.family and back.model.family._fast is not None
    assert_allclose(back.predict(df), res.predict(df), rtol=0, atol=0)
    refit = res.refit().sm_results
    assert type(refit.model.family).__name__ in ("Gamma", "Tweedie")
    spec = json.loads(json.dumps(res.to_spec()))
    assert_allclose(from_spec(spec).predict(df), res.predict(df), rtol=1e-12)
    rows = [dict(r) for r in df.to_dict("records")]
    assert_allclose(scorer.predict(spec, rows), res.predict(df), rtol=1e-12)
    con = sqlite3.connect(":memory:")
    df.to_sql("t", con, index=False)
    got = np.array([r[-1] for r in con.execute(res.to_sql(table="t")).fetchall()])
    assert_allclose(got, res.predict(df), rtol=1e-12)


def test_estimator_takes_the_names():
    df = _claims()
    X = df[["age", "power"]].to_numpy()
    est = BinarsityGLM(family=("tweedie", 1.5), lam=5e-3).fit(
        X, df["y"], sample_weight=df["w"] + 0.1, offset=np.log(df["exposure"])
    )
    res = glm("y ~ bin(age, 8)", df, family="tweedie").fit(lam=5e-3)
    assert np.all(est.predict(X, offset=np.log(df["exposure"])) > 0)
    assert res.model.family == get_family(est.family)
    back = pickle.loads(pickle.dumps(est))
    assert_allclose(back.predict(X), est.predict(X), rtol=0, atol=0)
