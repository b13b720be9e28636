"""Unit tests of ``binarsity_stats.families._builtin``: the built-in families with a
Cython fast path (gaussian, binomial, poisson) and the Cox family.

Each family's loss and derivatives (Cython kernels) are compared with the NumPy
formulas of its b(η); deviances, log-likelihoods and the Cox partial likelihood with
statsmodels; null fits with their closed forms or a scalar minimiser.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import statsmodels.api as sm
from numpy.testing import assert_allclose
from scipy import optimize, special

from binarsity_stats.families import _cox
from binarsity_stats.families._builtin import FAMILIES, Binomial, CoxPH, Gaussian, Poisson

RNG = np.random.default_rng(0)
N = 300
ETA = RNG.normal(scale=1.5, size=N)
SW = RNG.uniform(0.1, 3.0, N)
OFF = RNG.normal(scale=0.4, size=N)
Y = {
    "gaussian": ETA + RNG.normal(size=N),
    "binomial": RNG.binomial(1, special.expit(ETA)).astype(float),
    "poisson": RNG.poisson(np.exp(ETA)).astype(float),
}
#: b(η), b'(η), b''(η) of each canonical family, in NumPy
B = {
    "gaussian": (lambda e: e**2 / 2, lambda e: e, np.ones_like),
    "binomial": (lambda e: np.logaddexp(0, e), special.expit, lambda e: special.expit(e) * special.expit(-e)),
    "poisson": (np.exp, np.exp, np.exp),
}
CLASSES = {"gaussian": Gaussian, "binomial": Binomial, "poisson": Poisson}
SM = {"gaussian": sm.families.Gaussian(), "binomial": sm.families.Binomial(), "poisson": sm.families.Poisson()}


@pytest.mark.parametrize("name", ["gaussian", "binomial", "poisson"])
def test_loss_and_derivatives_match_numpy(name):
    fam, y = CLASSES[name](), Y[name]
    b, db, d2b = B[name]
    loss = float(np.sum(SW * (b(ETA) - y * ETA)))
    assert_allclose(fam.loss_sum(ETA, y, SW), loss, rtol=1e-12)
    g, h = np.empty(N), np.empty(N)
    scale = 1.0 / SW.sum()
    assert_allclose(fam.grad_hess(ETA, y, SW, scale, g, h), loss, rtol=1e-12)
    assert_allclose(g, scale * SW * (db(ETA) - y), rtol=1e-12, atol=1e-17)
    assert_allclose(h, scale * SW * d2b(ETA), rtol=1e-12)
    g2, h2 = np.full(N, np.nan), np.full(N, np.nan)
    fam.grad_hess_only(ETA, y, SW, scale, g2, h2)
    assert_allclose(g2, g, rtol=1e-14, atol=1e-18)
    assert_allclose(h2, h, rtol=1e-14)
    assert_allclose(fam.curvature(ETA), d2b(ETA), rtol=1e-12)
    bound = fam.curvature_bound()
    if bound is not None:
        assert np.all(fam.curvature(np.linspace(-30, 30, 601)) <= bound)
        assert_allclose(fam.curvature(np.zeros(1)), bound)  # attained at η = 0


@pytest.mark.parametrize("name", ["gaussian", "binomial", "poisson"])
def test_mean_link_variance_deviance_and_llf_match_statsmodels(name):
    fam, y, ref = CLASSES[name](), Y[name], SM[name]
    mu = fam.mean(ETA)
    assert_allclose(mu, ref.link.inverse(ETA), rtol=1e-12)
    assert_allclose(fam.link_function(mu), ETA, rtol=1e-10, atol=1e-12)
    assert_allclose(fam.variance(mu), ref.variance(mu), rtol=1e-12)
    dev = ref.deviance(y, mu, var_weights=SW)
    assert_allclose(fam.deviance(y, mu, SW), dev, rtol=1e-10)
    assert_allclose(fam.deviance_eta(y, ETA, SW), dev, rtol=1e-10)
    assert_allclose(fam.pearson_chi2(y, mu, SW), np.sum(SW * (y - mu) ** 2 / ref.variance(mu)), rtol=1e-12)
    f = RNG.integers(1, 4, N).astype(float)
    if name == "gaussian":
        scale = np.sum(f * SW * (y - mu) ** 2) / f.sum() / SW.max()  # σ² at its MLE, v / max v
        llf = ref.loglike(y, mu, var_weights=SW / SW.max(), freq_weights=f, scale=scale)
    else:
        llf = ref.loglike(y, mu, var_weights=SW, freq_weights=f)
    assert_allclose(fam.log_likelihood(y, mu, var_weights=SW, freq_weights=f), llf, rtol=1e-10)


def test_gaussian_llf_is_unchanged_by_a_rescaling_of_the_analytic_weights_and_inf_when_perfect():
    fam, y = Gaussian(), Y["gaussian"]
    a = fam.log_likelihood(y, ETA, var_weights=SW)
    assert_allclose(fam.log_likelihood(y, ETA, var_weights=SW * 1e300), a, rtol=1e-12)
    assert fam.log_likelihood(y, y) == np.inf


def test_deviance_eta_is_exact_where_the_mean_rounds():
    # binomial at η = ±40: μ rounds to 1 (deviance of a y = 0 row is 2·40 + ...)
    eta = np.array([40.0, -40.0, 40.0])
    y = np.array([0.0, 1.0, 1.0])
    got = Binomial().deviance_eta(y, eta, np.ones(3))
    expected = 2 * (np.logaddexp(0, 40.0) + np.logaddexp(0, 40.0) + np.logaddexp(0, -40.0))
    assert_allclose(got, expected, rtol=1e-14)
    # poisson at η = log y + 1e-8: the deviance ≈ y·r², no cancellation
    y = np.array([1e10])
    r = 1e-8
    got = Poisson().deviance_eta(y, np.log(y) + r, np.ones(1))
    assert_allclose(got, 2 * y[0] * (np.expm1(r) - r), rtol=1e-6)


def test_poisson_deviance_eta_is_silent_on_a_zero_weight_row_that_overflows():
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        got = Poisson().deviance_eta(np.array([0.0, 1.0]), np.array([800.0, 0.0]), np.array([0.0, 1.0]))
    assert_allclose(got, 0.0, atol=1e-15)  # row 0 weighs 0; row 1 is fitted exactly (μ = y = 1)


# ---------------------------------------------------------------- null fits and units


def test_gaussian_null_fit_dispersion_and_units():
    fam, y = Gaussian(), Y["gaussian"]
    assert_allclose(fam.null_intercept(y, SW, OFF), np.average(y - OFF, weights=SW), rtol=1e-13)
    r = y - OFF
    var = np.average((r - np.average(r, weights=SW)) ** 2, weights=SW)
    assert_allclose(fam.null_dispersion(y, SW, OFF), var, rtol=1e-12)
    sd = np.sqrt(np.average((y - np.average(y, weights=SW)) ** 2, weights=SW))
    assert_allclose(fam.gradient_units(y, SW), sd, rtol=1e-12)
    # equivariant: y·c has units c·sd (no floor at 1)
    assert_allclose(fam.gradient_units(y * 1e-6, SW), sd * 1e-6, rtol=1e-12)


def test_binomial_null_fit_with_offset_minimises_the_loss():
    fam, y = Binomial(), Y["binomial"]
    b0 = fam.null_intercept(y, SW, OFF)
    res = optimize.minimize_scalar(lambda b: fam.loss_sum(b + OFF, y, SW), bracket=(-3, 3), tol=1e-12)
    assert fam.loss_sum(b0 + OFF, y, SW) <= res.fun * (1 + 1e-13)
    # the score equation Σ s (μ − y) = 0 at β0
    assert abs(np.sum(SW * (special.expit(b0 + OFF) - y))) <= 1e-9 * SW.sum()
    # without offset: logit of the weighted mean; an all-zero y is clamped, not −inf
    assert_allclose(fam.null_intercept(y, SW), special.logit(np.average(y, weights=SW)), rtol=1e-13)
    assert_allclose(fam.null_intercept(np.zeros(4), np.ones(4)), special.logit(1e-10))


def test_poisson_null_fit_survives_tiny_exposures_and_units():
    fam, y = Poisson(), Y["poisson"]
    assert_allclose(fam.null_intercept(y, SW, OFF), np.log(np.sum(SW * y) / np.sum(SW * np.exp(OFF))),
                    rtol=1e-13)  # fmt: skip
    # offsets near −800: e^offset underflows to 0 in a plain sum
    off = OFF - 800.0
    expected = np.log(np.sum(SW * y)) - (-800.0 + np.log(np.sum(SW * np.exp(OFF))))
    assert_allclose(fam.null_intercept(y, SW, off), expected, rtol=1e-13)
    assert fam.null_intercept(np.zeros(3), np.ones(3)) == np.log(1e-300 / 3)  # clamped
    assert_allclose(fam.gradient_units(y, SW), max(1.0, np.average(y, weights=SW)), rtol=1e-14)
    assert fam.gradient_units(np.zeros(3), np.ones(3)) == 1.0


# ---------------------------------------------------------------- the data checks


@pytest.mark.parametrize(
    ("fam", "y", "kw", "pattern"),
    [
        (Gaussian(), [1.0, np.nan], {}, r"^y contains NaN or infinite values \(family='gaussian'\)"),
        (Gaussian(), [1.0, 1e200], {}, r"^y has values as large as 1e\+200"),
        (Binomial(), [0.0, 0.5, 2.0], {}, r"^y must be 0 or 1 for family='binomial'; found values such as \[0\.5, 2\.0\]"),
        (Binomial(), [0.0, 0.5, 1.5], {"proportions": True}, r"or a proportion in \[0, 1\].* \[1\.5\]"),
        (Poisson(), [1.0, -2.0, 3.0], {}, r"^y must be non-negative for family='poisson'; found values such as \[-2\.0\]"),
        (Poisson(), [1.0, np.inf], {}, r"family='poisson'"),
    ],
)
def test_validate_y_names_y_the_family_and_the_bad_values(fam, y, kw, pattern):
    with pytest.raises(ValueError, match=pattern):
        fam.validate_y(np.asarray(y), **kw)


def test_validate_y_accepts_the_valid_ranges():
    Gaussian().validate_y(np.array([-1e150, 0.0, 1e150]))
    Binomial().validate_y(np.array([0.0, 1.0]))
    Binomial().validate_y(np.array([0.0, 0.25, 1.0]), proportions=True)
    Poisson().validate_y(np.array([0.0, 2.5]))


def test_log_link_families_refuse_an_exposure_as_offset():
    Poisson().check_offset(np.array([700.0]))
    with pytest.raises(ValueError, match=r"^offset has values as large as 1000; with the log link of family poisson"):
        Poisson().check_offset(np.array([1000.0]))
    with pytest.raises(ValueError, match=r"family cox"):
        CoxPH().check_offset(np.array([1000.0]))


def test_labels_and_descriptions():
    # the built-in four (other modules register more families in the same table)
    builtin = {"gaussian": Gaussian, "binomial": Binomial, "poisson": Poisson, "cox": CoxPH}
    assert all(FAMILIES[k] is cls and cls().name == k for k, cls in builtin.items())
    assert Gaussian().quadratic and not Binomial().quadratic and Binomial().binary
    assert Poisson().ratio_label == "rate ratio" and Binomial().ratio_label == "odds ratio"
    assert Gaussian().ratio_label is None and Gaussian().dispersion_name == "sigma^2"
    assert Poisson().to_dict() == {"name": "poisson", "link": "log"}
    assert isinstance(Binomial().to_statsmodels(), sm.families.Binomial)


# ---------------------------------------------------------------- Cox


def _survival(n=60, seed=1):
    rng = np.random.default_rng(seed)
    time = rng.integers(1, 15, n).astype(float)  # ties
    event = rng.binomial(1, 0.7, n)
    eta = rng.normal(scale=0.8, size=n)
    return time, event, eta


@pytest.mark.parametrize("ties", ["breslow", "efron"])
def test_cox_loss_is_statsmodels_negative_partial_log_likelihood(ties):
    time, event, eta = _survival()
    y = _cox.encode(time, event)
    fam = CoxPH(ties)
    ref = sm.PHReg(time, eta[:, None], status=event, ties=ties).loglike(np.array([1.0]))
    assert_allclose(fam.loss_sum(eta, y, np.ones(len(y))), -ref, rtol=1e-12)
    assert_allclose(fam.log_likelihood(y, np.exp(eta)), ref, rtol=1e-12)
    assert_allclose(fam.log_likelihood(y, np.exp(eta), eta=eta), ref, rtol=1e-12)
    # invariant to a constant in η: no intercept
    assert_allclose(fam.loss_sum(eta + 3.0, y, np.ones(len(y))), -ref, rtol=1e-12)


def test_cox_gradient_is_the_derivative_of_the_loss():
    time, event, eta = _survival(seed=2)
    y = _cox.encode(time, event)
    sw = np.random.default_rng(3).uniform(0.5, 2.0, len(y))
    fam = CoxPH("efron")
    g, h = np.empty(len(y)), np.empty(len(y))
    loss = fam.grad_hess(eta, y, sw, 1.0, g, h)
    assert_allclose(loss, fam.loss_sum(eta, y, sw), rtol=1e-14)
    eps = 1e-6
    for i in (0, 7, 31):
        e = np.zeros(len(y))
        e[i] = eps
        num = (fam.loss_sum(eta + e, y, sw) - fam.loss_sum(eta - e, y, sw)) / (2 * eps)
        assert_allclose(g[i], num, rtol=1e-6, atol=1e-8)
    assert np.all(h >= 0)


def test_cox_deviance_is_twice_loss_minus_saturated():
    time, event, eta = _survival(seed=4)
    y = _cox.encode(time, event)
    sw = np.ones(len(y))
    fam = CoxPH()
    sat = _cox.saturated_loss(y, sw)
    expected = 2 * (fam.loss_sum(eta, y, sw) - sat)
    assert_allclose(fam.deviance(y, np.exp(eta), sw), expected, rtol=1e-12)
    assert_allclose(fam.deviance_eta(y, eta, sw), expected, rtol=1e-12)
    assert_allclose(fam.deviance_eta(y, eta, sw, saturated=sat), expected, rtol=1e-12)


def test_cox_identity_and_refusals():
    assert CoxPH() == CoxPH("breslow") and CoxPH("efron") != CoxPH()
    assert hash(CoxPH("efron")) == hash(CoxPH("efron"))
    assert CoxPH().label == "cox" and CoxPH("efron").label == "('cox', 'efron')"
    assert repr(CoxPH("efron")) == "CoxPH(ties='efron')"
    assert CoxPH("efron").to_dict() == {"name": "cox", "link": "log", "ties": "efron"}
    assert CoxPH("efron").header_rows()[1] == ("Ties", "Efron")
    assert CoxPH().null_intercept(np.ones(3), np.ones(3), np.ones(3)) == 0.0
    assert CoxPH().dispersion(None, None, None) == 1.0
    assert np.isnan(CoxPH().pearson_chi2(None, None, None))
    assert CoxPH().mean(np.array([800.0]))[0] == np.exp(700.0)  # clipped, finite
    with pytest.raises(ValueError, match=r"^ties must be 'breslow' or 'efron' for family='cox'; got 'exact'"):
        CoxPH("exact")
    with pytest.raises(NotImplementedError, match="no per-row deviance"):
        CoxPH().unit_deviance(np.ones(2), np.ones(2))
    with pytest.raises(NotImplementedError, match="PHReg"):
        CoxPH().to_statsmodels()
