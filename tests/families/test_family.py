"""Unit tests of ``binarsity_stats.families._family``: the generic implementations of
the :class:`Family` base class and the closed forms the families share.

The base class is exercised through a family written here in plain NumPy (a Poisson
log-linear model that overrides only what the base class leaves abstract), so the
generic null fit (Fisher scoring), deviance, Pearson statistic, dispersion and
log-likelihood are checked against closed forms and against statsmodels.
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
import statsmodels.api as sm
from numpy.testing import assert_allclose
from scipy import optimize, special

from binarsity_stats.families._family import (
    LOG_ETA_MAX,
    TINY_UNITS,
    Family,
    _binary_deviance,
    _binomial_dlogs,
    _binomial_logs,
    _check_log_offset,
    _check_squared_loss_range,
    _log_link_power_half_deviance,
    _power_half_deviance_eta,
    _scale_units,
    _times,
)


class Poisson(Family):
    """A log-linear Poisson family in NumPy: only what the base class leaves abstract."""

    name = "mypoisson"
    link = "log"

    def loss_sum(self, eta, y, sample_weight):
        return float(np.sum(sample_weight * (np.exp(eta) - y * eta)))

    def grad_hess(self, eta, y, sample_weight, scale, grad_out, hess_out):
        mu = np.exp(eta)
        grad_out[:] = scale * sample_weight * (mu - y)
        hess_out[:] = scale * sample_weight * mu
        return self.loss_sum(eta, y, sample_weight)

    def mean(self, eta):
        return np.exp(eta)

    def link_function(self, mu):
        return np.log(mu)

    def variance(self, mu):
        return np.asarray(mu, dtype=float)

    def unit_deviance(self, y, mu):
        return 2 * (special.xlogy(y, y / mu) - (y - mu))

    def _unit_log_likelihood(self, y, mu):
        return special.xlogy(y, mu) - mu - special.gammaln(y + 1)


FAM = Poisson()
RNG = np.random.default_rng(0)
N = 200
Y = RNG.poisson(3.0, N).astype(float)
SW = RNG.uniform(0.2, 2.0, N)
OFF = RNG.normal(scale=0.5, size=N)
MU = np.exp(1.0 + 0.3 * RNG.normal(size=N))


# ---------------------------------------------------------------- the null fit


def test_null_intercept_without_offset_is_the_link_of_the_weighted_mean():
    assert_allclose(FAM.null_intercept(Y, SW), np.log(np.average(Y, weights=SW)), rtol=1e-14)


def test_null_intercept_with_offset_by_fisher_scoring_matches_the_closed_form():
    # Poisson: e^{β0} Σ s e^{o} = Σ s y
    expected = np.log(np.sum(SW * Y) / np.sum(SW * np.exp(OFF)))
    assert_allclose(FAM.null_intercept(Y, SW, OFF), expected, rtol=0, atol=1e-12)


def test_null_intercept_minimises_the_weighted_loss():
    b0 = FAM.null_intercept(Y, SW, OFF)
    res = optimize.minimize_scalar(lambda b: FAM.loss_sum(b + OFF, Y, SW), bracket=(-5, 5), tol=1e-12)
    assert FAM.loss_sum(b0 + OFF, Y, SW) <= res.fun + 1e-12 * abs(res.fun)
    assert_allclose(b0, res.x, atol=1e-5)  # the scalar minimiser's own accuracy


def test_null_dispersion_is_pearson_over_weight_sum_at_the_null_fit():
    b0 = FAM.null_intercept(Y, SW, OFF)
    mu = np.exp(b0 + OFF)
    assert_allclose(FAM.null_dispersion(Y, SW, OFF), np.sum(SW * (Y - mu) ** 2 / mu) / SW.sum(), rtol=1e-12)


# ---------------------------------------------------------------- statistics


def test_curvature_defaults_to_the_variance_at_the_mean():
    eta = np.array([-2.0, 0.0, 1.5])
    assert_allclose(FAM.curvature(eta), np.exp(eta), rtol=1e-15)
    assert FAM.curvature_bound() is None
    assert FAM.gradient_units(Y, SW) == 1.0


def test_deviance_and_deviance_eta_agree_with_statsmodels():
    ref = sm.families.Poisson().deviance(Y, MU, var_weights=SW)
    assert_allclose(FAM.deviance(Y, MU, SW), ref, rtol=1e-12)
    assert_allclose(FAM.deviance_eta(Y, np.log(MU), SW), ref, rtol=1e-12)


def test_pearson_chi2_and_dispersion():
    chi2 = float(np.sum(SW * (Y - MU) ** 2 / MU))
    assert_allclose(FAM.pearson_chi2(Y, MU, SW), chi2, rtol=1e-12)
    # unit weights: χ² / (n − df), statsmodels' scale
    ones = np.ones(N)
    chi1 = float(np.sum((Y - MU) ** 2 / MU))
    assert_allclose(FAM.dispersion(Y, MU, ones, df=5), chi1 / (N - 5), rtol=1e-12)
    # analytic weights: Kish's n_eff
    n_eff = SW.sum() ** 2 / np.sum(SW**2)
    assert_allclose(FAM.dispersion(Y, MU, SW, df=5), chi2 / SW.sum() * n_eff / (n_eff - 5), rtol=1e-12)
    # frequency weights: nobs = W gives χ² / (W − df)
    assert_allclose(FAM.dispersion(Y, MU, SW, df=5, nobs=SW.sum()), chi2 / (SW.sum() - 5), rtol=1e-12)
    # df beyond n_eff: the denominator n_eff − df is floored at 1 (χ² / W · n_eff)
    chi3 = float(np.sum((Y[:3] - MU[:3]) ** 2 / MU[:3]))
    assert_allclose(FAM.dispersion(Y[:3], MU[:3], np.ones(3), df=10), chi3 / 3 * 3 / 1.0, rtol=1e-12)


def test_log_likelihood_with_frequency_and_variance_weights_matches_statsmodels():
    f = RNG.integers(1, 4, N).astype(float)
    ref = sm.families.Poisson().loglike(Y, MU, var_weights=SW, freq_weights=f)
    assert_allclose(FAM.log_likelihood(Y, MU, var_weights=SW, freq_weights=f), ref, rtol=1e-12)
    ref1 = sm.families.Poisson().loglike(Y, MU)
    assert_allclose(FAM.log_likelihood(Y, MU), ref1, rtol=1e-12)


def test_abstract_members_raise():
    bare = Family()
    for call in (lambda: bare.mean(np.zeros(1)), lambda: bare.link_function(np.ones(1)),
                 lambda: bare.variance(np.ones(1)), lambda: bare.unit_deviance(np.ones(1), np.ones(1)),
                 lambda: bare._unit_log_likelihood(np.ones(1), np.ones(1))):  # fmt: skip
        with pytest.raises(NotImplementedError):
            call()


# ---------------------------------------------------------------- checks and identity


def test_validate_y_names_y_and_the_family():
    FAM.validate_y(Y)
    with pytest.raises(ValueError, match=r"^y contains NaN or infinite values \(family='mypoisson'\)"):
        FAM.validate_y(np.array([1.0, np.inf]))
    FAM.check_offset(np.array([1e6]))  # the base class checks nothing


def test_labels_header_dict_repr_and_statsmodels():
    assert FAM.label == "mypoisson"
    assert FAM.effect_label == "log mean" and FAM.ratio_label == "ratio of means"
    assert FAM.header_rows() == [("Model Family", "Poisson"), ("Link Function", "log")]
    assert FAM.to_dict() == {"name": "mypoisson", "link": "log"}
    assert repr(FAM) == "Poisson(link='log')"
    assert FAM.parameter_columns() == {}
    # the statsmodels family of the same class name
    assert isinstance(FAM.to_statsmodels(), sm.families.Poisson)

    class Odd(Family):
        link = "sqrt"

    assert Odd().effect_label == "sqrt scale" and Odd().ratio_label is None


def test_families_compare_and_hash_by_value():
    assert Poisson() == Poisson() and hash(Poisson()) == hash(Poisson())

    class Other(Poisson):
        pass

    assert Poisson() != Other()
    assert Poisson() != "mypoisson"
    assert len({Poisson(), Poisson(), Other()}) == 2


# ---------------------------------------------------------------- shared closed forms


def test_scale_units_follow_the_spread_with_two_floors():
    assert _scale_units(3.0, 100.0) == 3.0
    assert _scale_units(1e-6, 0.0) == 1e-6  # follows a small scale down
    assert _scale_units(1e-12, 5.0) == 1e-6 * 5.0  # y far from 0 with a tiny spread
    assert _scale_units(1e-12, 1e9) == 1.0  # that floor is capped at 1
    assert _scale_units(0.0, 0.0) == TINY_UNITS
    assert _scale_units(np.nan, 1.0) == 1.0 and _scale_units(1.0, np.inf) == 1.0


def test_squared_loss_range_refuses_overflow_and_underflow_naming_y():
    _check_squared_loss_range(np.array([1e150, -1.0]))
    _check_squared_loss_range(np.zeros(3))
    _check_squared_loss_range(np.zeros(0))
    with pytest.raises(ValueError, match=r"^y has values as large as 2e\+150 in magnitude"):
        _check_squared_loss_range(np.array([0.0, -2e150]))
    with pytest.raises(ValueError, match=r"^y has values no larger than 1e-160"):
        _check_squared_loss_range(np.array([1e-160, 0.0]))


def test_check_log_offset_refuses_an_exposure_passed_as_offset():
    _check_log_offset(np.array([LOG_ETA_MAX, -1e6]), "poisson")
    _check_log_offset(np.zeros(0), "poisson")
    with pytest.raises(ValueError, match=r"^offset has values as large as 1000; with the log link of family poisson"):
        _check_log_offset(np.array([1.0, 1000.0]), "poisson")


def test_times_makes_zero_times_infinity_zero():
    with np.errstate(invalid="ignore"):  # its callers evaluate it under errstate
        out = _times(np.array([0.0, 2.0, 0.0]), np.array([np.inf, 3.0, -np.inf]))
    assert_allclose(out, [0.0, 6.0, 0.0])


def test_binary_deviance_matches_statsmodels_and_handles_certain_rows():
    y = np.array([0.0, 1.0, 1.0, 0.0, 0.3])
    mu = np.array([0.2, 0.7, 0.99, 0.5, 0.4])
    sw = np.array([1.0, 2.0, 0.5, 1.0, 3.0])
    ref = sm.families.Binomial().deviance(y, mu, var_weights=sw)
    assert_allclose(_binary_deviance(y, np.log(mu), np.log1p(-mu), sw), ref, rtol=1e-12)
    # log μ = −inf on a row with y = 0 (or a zero weight): no NaN
    d = _binary_deviance(np.array([0.0, 1.0]), np.array([-np.inf, 0.0]), np.array([0.0, -np.inf]),
                         np.array([1.0, 0.0]))  # fmt: skip
    assert d == 0.0


def test_a_zero_weight_row_of_infinite_deviance_adds_zero_without_a_warning():
    """y = 1 at μ = 0 is an infinite deviance; with weight 0 it adds exactly 0, and the
    weighting (outside the function's np.errstate) evaluates no 0·inf."""
    import warnings

    y = np.array([1.0, 1.0, 0.0])
    log_mu = np.array([-np.inf, np.log(0.6), np.log(0.3)])
    log_1mmu = np.array([0.0, np.log(0.4), np.log(0.7)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        d = _binary_deviance(y, log_mu.copy(), log_1mmu.copy(), np.array([0.0, 1.0, 2.0]))
    assert_allclose(d, 2.0 * (-np.log(0.6) - 2.0 * np.log(0.7)), rtol=1e-14)


def _half_deviance_mp(p, eta, y):
    """d(y, e^η)/2 for the variance μ^p in 50-digit arithmetic (the plain formula)."""
    with mpmath.workdps(50):
        e, yy = mpmath.mpf(float(eta)), mpmath.mpf(float(y))
        if p == 1.0:
            out = mpmath.exp(e) - yy * e + (yy * mpmath.log(yy) if yy > 0 else 0) - yy
        elif p == 2.0:
            out = yy * mpmath.exp(-e) + e - 1 - mpmath.log(yy)
        else:
            a, b = 1 - mpmath.mpf(p), 2 - mpmath.mpf(p)
            out = yy**b / (a * b) - yy * mpmath.exp(a * e) / a + mpmath.exp(b * e) / b
        return float(out)


@pytest.mark.parametrize("p", [1.0, 1.5, 2.0, 3.0])
def test_power_half_deviance_eta_matches_high_precision_and_statsmodels(p):
    y = np.array([0.5, 1.0, 2.0, 7.0])
    eta = np.array([0.3, -1.0, 0.7, 2.5])
    stable = _power_half_deviance_eta(p, eta, y)
    exact = [_half_deviance_mp(p, e, v) for e, v in zip(eta, y, strict=True)]
    # r = η − log y is rounded (eps·|η|): relative error ≲ 4 eps |η| / |r| ≈ 1e-13 here
    assert_allclose(stable, exact, rtol=1e-12)
    # the plain form agrees where it does not cancel (its error ~eps·terms/deviance)
    assert_allclose(_log_link_power_half_deviance(p, eta, y), exact, rtol=1e-9)
    ref = sm.families.Tweedie(var_power=p, link=sm.families.links.Log()).resid_dev(y, np.exp(eta)) ** 2
    assert_allclose(2 * stable, ref, rtol=1e-9)


def test_power_half_deviance_eta_is_exact_where_the_plain_form_cancels_or_overflows():
    # y e^{-r}... near the optimum (η = log y + 1e-9) the deviance is ~y r²/2
    y = np.array([1e12])
    r = 1e-9
    got = _power_half_deviance_eta(1.0, np.log(y) + r, y)
    assert_allclose(got, y * (np.expm1(r) - r), rtol=1e-6)
    with np.errstate(all="ignore"):
        plain = _log_link_power_half_deviance(1.0, np.log(y) + r, y)
    assert abs(plain[0] - got[0]) > 1e-3 * got[0]  # the plain form lost it
    # y = 0: e^{(2−p)η}/(2−p); p ≥ 2 at y = 0 is infinite
    assert_allclose(_power_half_deviance_eta(1.5, np.array([0.4]), np.array([0.0])), np.exp(0.5 * 0.4) / 0.5)
    assert _power_half_deviance_eta(2.0, np.array([0.4]), np.array([0.0]))[0] == np.inf


def _logs_mp(link, z):
    """log μ and log(1 − μ) of the binomial link at z in 60-digit arithmetic (μ and
    1 − μ each computed directly, so neither cancels: 1 − μ is 1e-198 at probit 30)."""
    with mpmath.workdps(60):
        z = mpmath.mpf(float(z))
        if link == "Logit":
            mu, one_minus = 1 / (1 + mpmath.exp(-z)), 1 / (1 + mpmath.exp(z))
        elif link == "Probit":
            mu, one_minus = mpmath.ncdf(z), mpmath.ncdf(-z)
        elif link == "CLogLog":
            mu, one_minus = -mpmath.expm1(-mpmath.exp(z)), mpmath.exp(-mpmath.exp(z))
        else:
            mu, one_minus = mpmath.exp(-mpmath.exp(-z)), -mpmath.expm1(-mpmath.exp(-z))

        def log(q, complement):  # the log of the smaller one directly, else log1p
            return mpmath.log(q) if q < 0.5 else mpmath.log1p(-complement)

        return float(log(mu, one_minus)), float(log(one_minus, mu))


Z_TAILS = np.concatenate([np.linspace(-4, 4, 17), [-30.0, -8.0, 8.0, 30.0]])


@pytest.mark.parametrize("link", ["Logit", "Probit", "CLogLog", "LogLog"])
def test_binomial_logs_match_high_precision_into_the_tails(link):
    log_mu, log_1mmu = _binomial_logs(link, Z_TAILS)
    ref = np.array([_logs_mp(link, v) for v in Z_TAILS])
    # a few eps relative, also where a log is within eps of 0
    assert_allclose(log_mu, ref[:, 0], rtol=1e-12, atol=0)
    assert_allclose(log_1mmu, ref[:, 1], rtol=1e-12, atol=0)
    # statsmodels' link agrees away from the tails, where log μ is well conditioned
    mid = slice(4, 13)
    mu = getattr(sm.families.links, link)().inverse(Z_TAILS[mid])
    assert_allclose(log_mu[mid], np.log(mu), rtol=1e-10)


@pytest.mark.parametrize(("link", "column"), [("CLogLog", 0), ("LogLog", 1)])
def test_binomial_logs_are_relative_accurate_where_the_log_is_near_zero(link, column):
    z = np.array([3.0, 3.5, 4.0]) * (1 if link == "CLogLog" else -1)
    got = _binomial_logs(link, z)[column]
    ref = np.array([_logs_mp(link, v)[column] for v in z])
    assert_allclose(got, ref, rtol=1e-12)


@pytest.mark.parametrize("link", ["Logit", "Probit", "CLogLog", "LogLog"])
def test_binomial_dlogs_are_the_derivatives_of_the_logs(link):
    z = np.linspace(-3, 3, 13)
    h = 1e-6
    lp, l1p = _binomial_logs(link, z + h)
    lm, l1m = _binomial_logs(link, z - h)
    d_log_mu, minus_d_log_1mmu = _binomial_dlogs(link, z)
    # central differences: error O(h²) ≈ 1e-12 plus rounding 1e-16/h ≈ 1e-10
    assert_allclose(d_log_mu, (lp - lm) / (2 * h), rtol=1e-6, atol=1e-9)
    assert_allclose(minus_d_log_1mmu, -(l1p - l1m) / (2 * h), rtol=1e-6, atol=1e-9)
