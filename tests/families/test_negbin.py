"""family="nb": the negative binomial with θ estimated as R's MASS::glm.nb (issue 28).

References: statsmodels' discrete ``NegativeBinomial(loglike_method="nb2")`` (β and
α = 1/θ by joint maximum likelihood) and its GLM family ``NegativeBinomial(alpha)``
at θ̂ (the IRLS fit whose standard errors R's glm.nb reports: expected information at
θ̂, dispersion 1).

Margins. The alternation stops when |Δθ|/θ < 1e-8 and the refit's IRLS when a Newton
step moves η by < 1e-10: the refit, θ̂ and the log-likelihood agree with the
references to 1e-6 relative. The penalised fit at λ = 0 stops at the KKT tolerance
(``tol``, default 1e-7 in gradient units), which bounds its coefficients' error by tol
times the inverse curvature: 1e-5 relative at the default, 1e-6 at ``tol=1e-10``.
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from statsmodels.discrete.discrete_model import NegativeBinomial as DiscreteNB

import binarsity_stats as bs
from binarsity_stats.engine._solvers import ConvergenceWarning
from binarsity_stats.families import NegativeBinomial
from binarsity_stats.families._families import family_from_dict, family_from_text, get_family
from binarsity_stats.families._negbin import THETA_MAX, theta_ml
from binarsity_stats.model import _theta


def _nb_data(n, theta=2.0, seed=0, exposure=False):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    g = rng.choice(list("abc"), size=n)
    t = rng.uniform(0.5, 2.0, size=n) if exposure else np.ones(n)
    mu = t * np.exp(0.5 + 0.3 * x + np.where(g == "b", 0.4, 0) + np.where(g == "c", -0.2, 0))
    y = rng.negative_binomial(theta, theta / (theta + mu)).astype(float)
    return pd.DataFrame({"y": y, "x": x, "g": g, "t": t})


def _design(df):
    g = df["g"].to_numpy()
    return np.column_stack([np.ones(len(df)), g == "b", g == "c", df["x"]]).astype(float)


def _discrete(y, X, **kw):
    """statsmodels' NB2 maximum likelihood, converged tightly (BFGS start, then Newton)."""
    model = DiscreteNB(y, X, loglike_method="nb2", **kw)
    start = model.fit(disp=0, method="bfgs", maxiter=2000).params
    return model.fit(start_params=start, disp=0, method="newton", maxiter=100, tol=1e-12)


def _reference_coded(res):
    """Intercept, C(g)[b], C(g)[c], x of a penalised fit (sum-to-zero levels)."""
    c = res.coef
    return np.r_[res.intercept + c[0], c[1:] - c[0], res.dense_coef]


@pytest.fixture(scope="module")
def data():
    return _nb_data(2000)


@pytest.fixture(scope="module")
def reference(data):
    return _discrete(data["y"].to_numpy(), _design(data))


# -- (a) λ = 0 and the refit vs statsmodels' discrete NB2 ----------------------------------
def test_lambda0_fit_equals_discrete_nb2(data, reference):
    res = bs.glm("y ~ x + C(g)", data, family="nb").fit(lam=0)
    fam = res.model.family
    alpha = reference.params[-1]
    np.testing.assert_allclose(1.0 / fam.theta, alpha, rtol=1e-6)
    np.testing.assert_allclose(res.llf, reference.llf, rtol=1e-9)
    np.testing.assert_allclose(_reference_coded(res), reference.params[:4], rtol=1e-5)
    tight = bs.glm("y ~ x + C(g)", data, family="nb").fit(lam=0, tol=1e-10)
    np.testing.assert_allclose(_reference_coded(tight), reference.params[:4], rtol=1e-6)
    # glm.nb's AIC counts θ: −2 llf + 2 (df + 1)
    assert res.df == 4
    np.testing.assert_allclose(res.aic, -2 * reference.llf + 2 * 5, rtol=1e-9)
    np.testing.assert_allclose(res.aic, reference.aic, rtol=1e-9)  # statsmodels counts α
    np.testing.assert_allclose(res.bic, -2 * reference.llf + np.log(2000) * 5, rtol=1e-9)
    glance = res.glance()
    np.testing.assert_allclose(glance["theta"][0], 1.0 / alpha, rtol=1e-6)
    # SE.theta: the observed information in θ given μ; at the MLE (score in α = 0)
    # −∂²ℓ/∂θ² = −α⁴ ∂²ℓ/∂α², with ∂²ℓ/∂α² the discrete model's analytic Hessian
    h_aa = reference.model.hessian(reference.params)[-1, -1]
    np.testing.assert_allclose(glance["theta_se"][0], 1 / (alpha**2 * np.sqrt(-h_aa)), rtol=1e-6)
    assert "Theta (estimated)" in str(res.summary())


def test_refit_reestimates_theta_and_matches_statsmodels(data, reference):
    res = bs.glm("y ~ x + C(g)", data, family="nb").fit(lam=0)
    refit = res.refit()
    fam = refit.refit_family
    np.testing.assert_allclose(refit.params.to_numpy(), reference.params[:4], rtol=1e-6)
    np.testing.assert_allclose(1.0 / fam.theta, reference.params[-1], rtol=1e-6)
    np.testing.assert_allclose(refit.llf, reference.llf, rtol=1e-9)
    np.testing.assert_allclose(refit.aic, reference.aic, rtol=1e-9)
    # the SEs of β are glm.nb's: IRLS at θ̂ (expected information, dispersion 1), i.e.
    # statsmodels' GLM family at α̂. (The discrete model's come from the observed joint
    # Hessian in (β, α): a different estimator, ~1e-3 apart here.)
    glm = sm.GLM(data["y"].to_numpy(), _design(data),
                 family=sm.families.NegativeBinomial(alpha=reference.params[-1])).fit()  # fmt: skip
    np.testing.assert_allclose(refit.bse.to_numpy(), glm.bse, rtol=1e-6)
    text = str(refit.summary())
    assert "theta = " in text
    assert {"theta", "theta_se"} <= set(refit.glance().columns)


def test_refit_on_selected_segments_equals_discrete_nb2():
    rng = np.random.default_rng(3)
    n = 3000
    z = rng.uniform(0, 10, n)
    mu = np.exp(0.3 + 0.6 * (z > 4) - 0.5 * (z > 7))
    y = rng.negative_binomial(1.5, 1.5 / (1.5 + mu)).astype(float)
    df = pd.DataFrame({"y": y, "z": z})
    res = bs.glm("y ~ bin(z, 20)", df, family="nb").fit(lam=0.02)
    assert 1 <= res.n_jumps < 19
    refit = res.refit()
    X = np.asarray(refit.sm_results.model.exog, dtype=float)
    ref = _discrete(y, X)
    np.testing.assert_allclose(refit.params.to_numpy(), ref.params[:-1], rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(refit.refit_family.theta, 1.0 / ref.params[-1], rtol=1e-6)
    np.testing.assert_allclose(refit.llf, ref.llf, rtol=1e-9)
    # the penalised fit's θ is its own (at λ), the refit's is re-estimated
    assert res.model.family.theta != refit.refit_family.theta


# -- (b) prior weights and an exposure --------------------------------------------------------
def test_weights_and_exposure_equal_statsmodels_glm_at_theta_hat():
    df = _nb_data(1500, seed=5, exposure=True)
    w = np.random.default_rng(6).integers(1, 4, size=len(df)).astype(float)
    res = bs.glm("y ~ x + C(g)", df, family="nb", weights=w, exposure="t").fit(lam=0)
    theta = res.model.family.theta
    X, y = _design(df), df["y"].to_numpy()
    glm = sm.GLM(y, X, family=sm.families.NegativeBinomial(alpha=1 / theta), var_weights=w,
                 offset=np.log(df["t"].to_numpy())).fit()  # fmt: skip
    refit = res.refit()
    np.testing.assert_allclose(_reference_coded(res), glm.params, rtol=1e-5)
    np.testing.assert_allclose(res.llf, glm.llf, rtol=1e-9)
    np.testing.assert_allclose(refit.params.to_numpy(), glm.params, rtol=1e-6)
    np.testing.assert_allclose(refit.bse.to_numpy(), glm.bse, rtol=1e-6)
    np.testing.assert_allclose(refit.refit_family.theta, theta, rtol=1e-6)
    # prior weights enter the likelihood as glm.nb's: integer weights are repeated rows
    rep = np.repeat(np.arange(len(df)), w.astype(int))
    ref = _discrete(y[rep], X[rep], exposure=df["t"].to_numpy()[rep])
    np.testing.assert_allclose(theta, 1 / ref.params[-1], rtol=1e-6)
    np.testing.assert_allclose(refit.params.to_numpy(), ref.params[:-1], rtol=1e-6)
    freq = bs.glm("y ~ x + C(g)", df, family="nb", weights=w, exposure="t",
                  weights_kind="freq").fit(lam=0)  # fmt: skip
    np.testing.assert_allclose(freq.model.family.theta, theta, rtol=1e-7)
    np.testing.assert_allclose(freq.llf, ref.llf, rtol=1e-9)


# -- (c) a penalised fit at n = 1e5: θ near the truth; path and CV hold θ fixed ----------------
def test_penalised_fit_recovers_theta_at_1e5_rows():
    rng = np.random.default_rng(11)
    n, theta = 100_000, 1.5
    z, x = rng.uniform(0, 10, n), rng.normal(size=n)
    mu = np.exp(0.2 + 0.5 * (z > 3) - 0.4 * (z > 7) + 0.2 * x)
    y = rng.negative_binomial(theta, theta / (theta + mu)).astype(float)
    res = bs.glm("y ~ bin(z) + x", pd.DataFrame({"y": y, "z": z, "x": x}), family="nb").fit()
    fam = res.model.family
    assert abs(fam.theta - theta) < 4 * fam.theta_se, (fam.theta, fam.theta_se)
    assert 0.005 < fam.theta_se < 0.05
    assert res.n_jumps >= 2


def test_path_and_cv_hold_one_theta(data):
    model = bs.glm("y ~ bin(x, 10) + C(g)", data, family="nb")
    path = model.fit_path(n_lambdas=8)
    thetas = {path[i].model.family.theta for i in range(len(path.lams))}
    assert len(thetas) == 1
    (theta,) = thetas
    # the θ of the alternation at the smallest λ of the grid at the start θ (θ given
    # the Poisson null fit: where λ_max is evaluated)
    theta0 = _theta.start_parameter(model.family, model.y, model.sample_weight, None)
    start = _theta._at(model, model.family.with_parameter(theta0))
    at_min = model.fit(float(np.min(start.lambda_grid(8, 1e-3))))
    np.testing.assert_allclose(theta, at_min.model.family.theta, rtol=1e-7)
    assert path[0].n_jumps == 0  # the grid is at θ̂: its λ_max flattens every term
    cv = model.fit_cv(folds=3, n_lambdas=8, random_state=0)
    assert cv.best_.model.family.theta == theta
    assert cv.best_.model.family.extra_df == 1
    assert model.family.estimated_parameter == "theta"  # the user's model is unchanged


# -- (d) a fixed θ is statsmodels' family --------------------------------------------------------
def test_fixed_theta_equals_the_statsmodels_family(data):
    a = bs.glm("y ~ bin(x, 10) + C(g)", data, family=NegativeBinomial(theta=2.0)).fit(lam=0.01)
    b = bs.glm("y ~ bin(x, 10) + C(g)", data,
               family=sm.families.NegativeBinomial(alpha=0.5)).fit(lam=0.01)  # fmt: skip
    np.testing.assert_allclose(a.coef, b.coef, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(a.llf, b.llf, rtol=1e-12)
    np.testing.assert_allclose(a.aic, b.aic, rtol=1e-12)  # a given θ is not a parameter
    assert a.model.family.theta == 2.0 and a.model.family.extra_df == 0
    refit = a.refit()
    assert refit.refit_family.theta == 2.0  # not re-estimated
    c = bs.glm("y ~ x + C(g)", data, family=NegativeBinomial(theta=2.0)).fit(lam=0, tol=1e-10)
    glm = sm.GLM(data["y"].to_numpy(), _design(data),
                 family=sm.families.NegativeBinomial(alpha=0.5)).fit()  # fmt: skip
    np.testing.assert_allclose(_reference_coded(c), glm.params, rtol=1e-6)
    np.testing.assert_allclose(c.llf, glm.llf, rtol=1e-9)


# -- names, descriptions, pickles -------------------------------------------------------------------
def test_names_aliases_descriptions_and_pickles(data):
    for name in ("nb", "negative_binomial", "negbin", "NB"):
        fam = get_family(name)
        assert isinstance(fam, NegativeBinomial) and fam.estimated_parameter == "theta"
    assert family_from_text("negbin") == "negbin"
    res = bs.glm("y ~ bin(x, 10) + C(g)", data, family="negbin").fit(lam=0.01)
    fam = res.model.family
    assert family_from_dict(fam.to_dict()) == NegativeBinomial(fam.theta)
    back = pickle.loads(pickle.dumps(res))
    assert back.model.family == fam and back.model.family.theta_se == fam.theta_se
    np.testing.assert_allclose(back.aic, res.aic, rtol=0)
    refit = res.refit()
    again = pickle.loads(pickle.dumps(refit))
    assert again.refit_family.theta == refit.refit_family.theta
    # the description holds θ̂ as a fixed α = 1/θ̂; it predicts the mean (log link)
    spec = res.to_spec()
    assert spec["family"]["statsmodels"]["params"]["alpha"] == pytest.approx(1 / fam.theta)
    scorer = bs.from_spec(spec)
    np.testing.assert_allclose(scorer.predict(data), res.predict(data), rtol=1e-12)


# -- (e) bad input -----------------------------------------------------------------------------
def test_bad_input():
    df = _nb_data(300, seed=2)
    bad = df.assign(y=df["y"] - 1.0)
    with pytest.raises(ValueError, match=r"y must be non-negative for family nb"):
        bs.glm("y ~ x", bad, family="nb")
    # R's dnbinom warns on a non-integer count; statsmodels accepts it silently
    with pytest.warns(UserWarning, match="non-integer"):
        bs.glm("y ~ x", df.assign(y=df["y"] + 0.5), family="nb")
    for theta in (0, -1.0, np.inf, np.nan, "2", True):
        with pytest.raises(ValueError, match="theta must be a positive finite number"):
            NegativeBinomial(theta=theta)
    with pytest.raises(ValueError, match="0 in every row: theta"):
        bs.glm("y ~ x", df.assign(y=0.0), family="nb")
    NegativeBinomial(theta=1.0).validate_y(np.zeros(5))  # a fixed θ: Poisson-like, allowed
    with pytest.raises(ValueError, match="family 'nb' estimates theta.*not supported by the dask"):
        bs.glm("y ~ x", df, family="nb").fit(lam=0, solver="dask")


def test_no_overdispersion_caps_theta_with_a_warning():
    rng = np.random.default_rng(4)
    y = rng.binomial(4, 0.5, size=2000).astype(float)  # under-dispersed: θ̂ → ∞
    mu = np.full(y.size, y.mean())
    with pytest.warns(RuntimeWarning, match="no over-dispersion"):
        theta, se, ok = theta_ml(y, mu, np.ones(y.size))
    assert theta == THETA_MAX and ok


def test_alternation_that_does_not_converge_warns_naming_theta(data, monkeypatch):
    monkeypatch.setattr(_theta, "MAX_ALTERNATIONS", 1)
    with pytest.warns(ConvergenceWarning, match="theta of family 'nb' did not converge"):
        bs.glm("y ~ x + C(g)", data, family="nb").fit(lam=0)


def test_theta_ml_is_the_score_root():
    rng = np.random.default_rng(8)
    mu = rng.uniform(0.5, 5, 5000)
    y = rng.negative_binomial(3.0, 3.0 / (3.0 + mu)).astype(float)
    w = rng.uniform(0.5, 2, y.size)
    theta, se, ok = theta_ml(y, mu, w)
    assert ok
    # the weighted log-likelihood in θ is maximal there (statsmodels' family loglike)
    def ll(t):
        return sm.families.NegativeBinomial(alpha=1 / t).loglike(y, mu, var_weights=w)

    h = 1e-4 * theta
    assert ll(theta) >= max(ll(theta - h), ll(theta + h))
    # its curvature is the observed information (central difference: error O(h²))
    curv = -(ll(theta + h) - 2 * ll(theta) + ll(theta - h)) / h**2
    np.testing.assert_allclose(1 / np.sqrt(curv), se, rtol=1e-4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert theta_ml(y, mu, w, start=50.0)[0] == pytest.approx(theta, rel=1e-10)


def test_estimators_need_a_fixed_theta():
    df = _nb_data(300, seed=9)
    X, y = df[["x"]], df["y"]
    with pytest.raises(ValueError, match="the estimators do not estimate theta"):
        bs.BinarsityGLM(family="nb", lam=0.01).fit(X, y)
    est = bs.BinarsityGLM(family=NegativeBinomial(theta=2.0), lam=0.01).fit(X, y)
    ref = bs.BinarsityGLM(family=sm.families.NegativeBinomial(alpha=0.5), lam=0.01).fit(X, y)
    np.testing.assert_allclose(est.predict(X), ref.predict(X), rtol=1e-10)


# ---------------------------------------------------------------- the module's own functions


def test_nb_log_likelihood_is_scipys_weighted_logpmf():
    from scipy import stats

    from binarsity_stats.families._negbin import nb_log_likelihood

    rng = np.random.default_rng(11)
    mu = rng.uniform(0.2, 8.0, 400)
    theta = 1.7
    y = rng.negative_binomial(theta, theta / (theta + mu)).astype(float)
    w = rng.uniform(0.0, 2.0, 400)
    w[:5] = 0.0
    ref = float(np.sum(w * stats.nbinom.logpmf(y, theta, theta / (theta + mu))))
    np.testing.assert_allclose(nb_log_likelihood(theta, y, mu, w), ref, rtol=1e-12)


def test_nb_log_likelihood_is_silent_on_a_zero_weight_row_of_zero_mean():
    from scipy import stats

    from binarsity_stats.families._negbin import nb_log_likelihood

    theta = 1.7
    y2, mu2, w2 = np.array([3.0, 1.0]), np.array([0.0, 1.0]), np.array([0.0, 1.0])
    ref2 = float(stats.nbinom.logpmf(1.0, theta, theta / (theta + 1.0)))
    np.testing.assert_allclose(nb_log_likelihood(theta, y2, mu2, w2), ref2, rtol=1e-12)


def test_score_and_information_are_the_derivatives_of_the_log_likelihood():
    from binarsity_stats.families._negbin import _score_info, nb_log_likelihood

    rng = np.random.default_rng(12)
    mu = rng.uniform(0.5, 6.0, 300)
    y = rng.poisson(mu).astype(float)
    w = rng.uniform(0.5, 2.0, 300)
    theta, h = 2.5, 1e-4
    score, info = _score_info(theta, y, mu, w)

    def ll(t):
        return nb_log_likelihood(t, y, mu, w)

    # central differences: truncation O(h²)·ℓ''' and rounding eps·|ℓ|/h; both ≲ 1e-6 relative
    np.testing.assert_allclose(score, (ll(theta + h) - ll(theta - h)) / (2 * h), rtol=1e-6)
    curv = (ll(theta + h) - 2 * ll(theta) + ll(theta - h)) / h**2
    np.testing.assert_allclose(info, -curv, rtol=1e-4)


def test_theta_moment_is_mass_start_clipped_to_its_range():
    from binarsity_stats.families._negbin import THETA_MIN, theta_moment

    y = np.array([0.0, 2.0, 5.0, 1.0])
    mu = np.array([1.0, 2.0, 2.5, 3.0])
    w = np.array([1.0, 2.0, 1.0, 0.0])
    den = 1.0 * (0 / 1 - 1) ** 2 + 2.0 * (2 / 2 - 1) ** 2 + 1.0 * (5 / 2.5 - 1) ** 2
    np.testing.assert_allclose(theta_moment(y, mu, w), 4.0 / den, rtol=1e-15)
    assert theta_moment(mu, mu, np.ones(4)) == THETA_MAX  # y = μ: no over-dispersion
    assert theta_moment(np.array([1e9, 0.0]), np.array([1e-9, 1.0]), np.ones(2)) == THETA_MIN


def test_family_descriptions_at_each_state_of_theta():
    est = NegativeBinomial()
    assert est.theta is None and est.estimated_parameter == "theta" and est.extra_df == 1
    assert est.label == "nb(theta estimated)" and est.to_dict() == {"name": "nb", "link": "log"}
    assert est.header_rows()[-1] == ("Theta", "to be estimated")
    fitted = est.with_parameter(2.5, 0.25)
    assert fitted.estimated_parameter is None and fitted.extra_df == 1
    assert fitted.label == "nb(theta=2.5, estimated)"
    assert fitted.header_rows()[-1] == ("Theta (estimated)", "2.5 (SE 0.25)")
    assert fitted.parameter_columns() == {"theta": 2.5, "theta_se": 0.25}
    assert fitted.to_dict() == {"name": "nb", "link": "log", "theta": 2.5}
    fixed = NegativeBinomial(theta=2.5)
    assert fixed.extra_df == 0 and fixed.label == "nb(theta=2.5)"
    assert fixed.header_rows()[-1] == ("Theta (fixed)", "2.5")
    assert fixed != fitted and fixed == NegativeBinomial(2.5)  # estimated or not differ
    assert repr(fixed) == "NegativeBinomial(theta=2.5)"
    assert np.isnan(est.parameter_columns()["theta"])
    back = pickle.loads(pickle.dumps(fitted))
    assert back == fitted and back.theta_se == 0.25
    # the variance μ + μ²/θ
    np.testing.assert_allclose(fixed.variance(np.array([1.0, 4.0])), [1.4, 4.0 + 16.0 / 2.5], rtol=1e-15)
