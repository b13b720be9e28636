"""Reports of monotone refits and stratified Cox fits (found by an audit on a fresh install).

* ``refit()`` of a monotone term is statsmodels' unconstrained GLM on the selected
  segments: on correlated features it can go against the declared direction although
  the penalised fit is monotone. It is now reported (``shape_violations``, a warning, a
  summary note) instead of passing silently;
* the summary of a stratified Cox fit (``strata(g)``) says so (header and note).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import binarsity_stats as bs


def _correlated(seed=9, n=300):
    """x monotone in truth, z = x + noise with an opposite step: a refit can reverse x."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(size=n)
    z = x + 0.15 * rng.normal(size=n)
    signal = 1.0 * (x > 0.5) - 1.2 * (z > 0.6) + 0.6 * rng.normal(size=n)
    y = (signal + rng.normal(size=n) > 0.2).astype(float)
    return pd.DataFrame({"x": x, "z": z, "y": y})


def _refit(res, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rf = res.refit(**kw)
    return rf, [w for w in caught if "declared direction" in str(w.message)]


def test_monotone_refit_against_its_direction_is_reported():
    df = _correlated()
    res = bs.glm("y ~ bin(x, 10, monotone='increasing') + bin(z, 10)", df,
                 family="binomial").fit(lam=0.005)  # fmt: skip
    # the penalised fit is monotone
    theta = res.shape_functions().query("term.str.startswith('bin(x')", engine="python")
    assert np.all(np.diff(theta["level"].to_numpy()) >= -1e-12)
    rf, warned = _refit(res)
    params = rf.params
    x_params = params[[k for k in params.index if k.startswith("bin(x")]].to_numpy()
    effects = np.r_[0.0, x_params]  # the first segment is the reference
    steps = np.diff(effects)
    assert np.any(steps < 0)  # this refit reverses the order somewhere
    viol = rf.shape_violations
    assert list(viol.columns) == ["term", "group", "from", "to", "change"]
    np.testing.assert_allclose(np.sort(viol["change"].to_numpy()), np.sort(steps[steps < 0]),
                               rtol=1e-12)  # fmt: skip
    assert set(viol["term"]) == {"bin(x, 10, monotone='increasing')"}
    assert len(warned) == 1 and "shape_violations" in str(warned[0].message)
    text = " ".join(rf.summary().as_text().split())
    assert "Monotone terms are NOT constrained" in text
    assert "goes against the declared direction" in text


def test_monotone_refit_keeping_its_direction_says_so_and_does_not_warn():
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"x": rng.uniform(size=400)})
    df["y"] = 1.0 * (df["x"] > 0.5) + rng.normal(size=400)
    res = bs.glm("y ~ bin(x, 20, monotone='decreasing')", df.assign(y=-df["y"])).fit(lam=0.002)
    rf, warned = _refit(res)
    assert rf.shape_violations.empty and not warned
    text = " ".join(rf.summary().as_text().split())
    assert "keep its direction" in text
    # a model without monotone terms has no such note
    free = bs.glm("y ~ bin(x, 20)", df).fit(lam=0.002).refit()
    assert "Monotone" not in free.summary().as_text() and free.shape_violations.empty


def test_monotone_refit_report_per_by_group_chain():
    from binarsity_stats.model._refit import _shape_violations

    df = _correlated(n=600)
    df["g"] = np.where(np.arange(600) % 2 == 0, "a", "b")
    res = bs.glm("y ~ bin(x, 8, monotone='increasing'):C(g) + bin(z, 10)", df,
                 family="binomial").fit(lam=0.002)  # fmt: skip
    rf, warned = _refit(res)
    assert rf.shape_violations.empty and not warned  # this refit keeps both chains ordered
    j = next(i for i, b in enumerate(res.model.spec.blocks) if b.by == "g")
    block, cols = res.model.spec.blocks[j], res._selection[0][j]
    params = rf.params.to_numpy().copy()
    # reverse group b's last step: its last segment drops below the one before
    first, length, group = block.chains()[1]
    assert group == "b"
    chain = cols[first:first + length]
    last, before = chain[-1], chain[chain != chain[-1]][-1]
    assert last >= 0 and before >= 0
    params[last] = params[before] - 0.25
    viol = _shape_violations(res, params)
    assert viol["group"].tolist() == ["b"]
    np.testing.assert_allclose(viol["change"].to_numpy(), [-0.25], rtol=1e-12)
    assert viol["to"].iloc[0].startswith("b: ")


def test_stratified_cox_summary_names_its_strata():
    rng = np.random.default_rng(0)
    n = 300
    df = pd.DataFrame({"x": rng.normal(size=n), "s": rng.choice(["a", "b", "c"], n)})
    df["time"] = np.round(rng.exponential(size=n), 1) + 0.1
    df["event"] = (rng.uniform(size=n) < 0.7).astype(int)
    res = bs.glm("Surv(time, event) ~ bin(x) + strata(s)", df, family="cox").fit()
    text = res.summary().as_text()
    assert "Strata:" in text and "s (3)" in text
    assert "Stratified by strata(s) (3 strata)" in " ".join(text.split())
    plain = bs.glm("Surv(time, event) ~ bin(x)", df, family="cox").fit().summary().as_text()
    assert "Strata" not in plain and "Stratified" not in plain
    # the estimators' strata= (the rebuilt formula's strata(s)) says so too
    y = np.empty(n, dtype=[("event", bool), ("time", float)])
    y["event"], y["time"] = df["event"] == 1, df["time"]
    est = bs.BinarsityGLM(family="cox", strata="s", lam=0.01).fit(df[["x", "s"]], y)
    assert "Strata:" in est.summary(df[["x", "s"]], y).as_text()


def test_monotone_refit_by_sample_splitting_is_checked_too():
    df = _correlated(n=400)
    res = bs.glm("y ~ bin(x, 10, monotone='increasing') + bin(z, 10)", df,
                 family="binomial").fit(lam=0.003)  # fmt: skip
    rf, warned = _refit(res, split=0.5, random_state=0)
    assert len(rf.shape_violations) >= 1 and len(warned) == 1
    assert np.all(rf.shape_violations["change"].to_numpy() < 0)


RATINGS = ["AAA", "AA", "A", "BBB", "BB", "B", "CCC", "D"]


def _ratings(n=500, seed=4):
    """An ordinal rating whose effect rises, with a dip at BB that a monotone fit removes."""
    rng = np.random.default_rng(seed)
    k = rng.integers(0, len(RATINGS), n)
    X = pd.DataFrame({
        "rating": pd.Categorical(np.array(RATINGS)[k], categories=RATINGS, ordered=True),
        "x": rng.normal(size=n),
    })  # fmt: skip
    eta = -1.5 + 0.35 * k - 0.9 * (k == 4) + 0.5 * (X["x"] > 0)
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-eta))).astype(int)
    return X, y


@pytest.mark.parametrize("cv", [False, True])
def test_estimator_monotone_ordered_factor_equals_the_formula(cv):
    X, y = _ratings()
    # both solved to KKT 1e-10: two solves from different starts (the CV's path is warm-
    # started) agree to about tol / (the smallest level's curvature), so at the default
    # tol (1e-7) they may differ by ~1e-6; at 1e-10 by ~1e-9, well inside atol
    kw = dict(categorical_features="auto", n_bins=5, monotone={"rating": "increasing"},
              tol=1e-10)  # fmt: skip
    if cv:
        est = bs.BinarsityClassifierCV(cv=3, n_lambdas=6, **kw).fit(X, y)
    else:
        est = bs.BinarsityClassifier(lam=0.002, **kw).fit(X, y)
    assert list(est.feature_kinds_) == ["ordered", "bin"]
    assert list(est.monotone_) == ["increasing", None]
    lam = est.lam_ if cv else 0.002
    df = X.assign(y=y)
    formula = "y ~ ordered(rating, monotone='increasing') + bin(x, 5)"
    ref = bs.glm(formula, df, family="binomial").fit(lam=lam, tol=1e-10)
    assert_allclose(est.coef_, ref.coef, atol=1e-7)
    s, e = est.block_ptr_[0], est.block_ptr_[1]
    assert np.all(np.diff(est.coef_[s:e]) >= -1e-12)  # ordered along the categories
    if not cv:  # at this λ the data alone dip at BB (CV's λ may fuse the dip away)
        free = bs.glm("y ~ ordered(rating) + bin(x, 5)", df, family="binomial").fit(lam=lam)
        assert np.any(np.diff(free.coef[s:e]) < -1e-6)
    res = est.results(X, y)  # built on its blocks, labelled as the formula's term
    assert res.model.spec.blocks[0].term == "ordered(rating, monotone='increasing')"
    assert res.model.binned.kinds[0] == "increasing"
    assert "ordered" in res.summary().as_text()
    spec = est.to_spec()
    assert spec["terms"][0]["penalty"] == "increasing"
    assert spec["terms"][0]["penalty"] == ref.to_spec()["terms"][0]["penalty"]
    assert np.array_equal(bs.from_spec(spec).predict(X), est.predict_proba(X)[:, 1])


def test_estimator_monotone_on_an_unordered_categorical_is_refused_by_name():
    X, y = _ratings()
    X["rating"] = X["rating"].cat.as_unordered()
    est = bs.BinarsityClassifier(categorical_features="auto", monotone={"rating": "increasing"})
    with pytest.raises(ValueError, match=r"monotone\['rating'\].*categorical.*ordered factors"):
        est.fit(X, y)


def test_cli_family_cox_efron_and_bare_tweedie(tmp_path, capsys):
    import io
    import pickle

    import statsmodels.api as sm

    from binarsity_stats._cli import main

    rng = np.random.default_rng(2)
    n = 250
    d = pd.DataFrame({"x": rng.uniform(0, 3, n)})
    d["time"] = np.round(rng.exponential(np.exp(-(d.x > 1.5))), 1) + 0.1  # tied times
    d["event"] = (rng.uniform(size=n) < 0.8).astype(int)
    d["y"] = rng.gamma(1.5, np.exp(d.x > 2) / 1.5) * (rng.uniform(size=n) < 0.6)
    d.to_csv(tmp_path / "d.csv", index=False)
    cases = (
        ("cox:efron", "Surv(time, event) ~ bin(x, 10)", ("cox", "efron")),
        ("Cox:Breslow", "Surv(time, event) ~ bin(x, 10)", "cox"),
        ("tweedie", "y ~ bin(x, 10)", sm.families.Tweedie(var_power=1.5,
                                                           link=sm.families.links.Log())),
    )  # fmt: skip
    for flag, formula, family in cases:
        argv = ["fit", formula, "--data", str(tmp_path / "d.csv"), "--family", flag,
                "--lam", "0.01", "--save", str(tmp_path / "m.pkl")]  # fmt: skip
        code = main(argv, out=io.StringIO())
        assert code == 0, capsys.readouterr().err
        with open(tmp_path / "m.pkl", "rb") as fh:
            saved = pickle.load(fh)
        ref = bs.glm(formula, d, family=family).fit(lam=0.01)
        assert saved.model.family == ref.model.family
        np.testing.assert_array_equal(saved.coef, ref.coef)
    with pytest.raises(SystemExit):
        main(["fit", "Surv(time, event) ~ bin(x)", "--data", str(tmp_path / "d.csv"),
              "--family", "cox:exact"], out=io.StringIO())  # fmt: skip
    assert "cox:TIES needs TIES = breslow or efron" in capsys.readouterr().err


_FORMAT = "binarsity_stats.model_spec"


@pytest.mark.parametrize("spec", [{"format": _FORMAT, "format_version": 99}, {},
                                  {"format": _FORMAT, "format_version": 99,
                                   "family": {"name": "gaussian", "link": "identity"}}, [],
                                  {"format_version": 2}])  # fmt: skip
def test_standalone_scorer_refuses_other_descriptions_by_their_version(spec):
    from binarsity_stats.design import standalone_scorer

    with pytest.raises(ValueError, match="format_version 99 is not supported|not a model desc"):
        standalone_scorer.predict(spec, [{"x": 1.0}])
