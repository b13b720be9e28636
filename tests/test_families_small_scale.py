"""A Tweedie response of tiny scale is fitted as a response of unit scale (issue 22 item 6).

With the log link, y·c has the fit of y with the intercept moved by log c, when λ is
scaled by c^{2−p} (the loss, its gradient and the theory λ all scale so). Three places
lost this below y ~ 1e-16: statsmodels' Log link clips μ at machine epsilon (the
gradient units and the start of ȳ = 1e-50 were those of 2.2e-16: the fit "converged"
at the null fit, 100 % off), Pearson's (y − μ)² underflowed at y ~ 1e-200 (φ̂ = 0, so
``lam="theory"`` was 0 and every cut was kept) and V(μ) = μ^p at y ~ 1e-300 (φ̂ = inf).
The gaussian counterpart (a y whose square underflows is refused) is in test_jumps.py.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import binarsity_stats as bs
from binarsity_stats.engine._solution import ConvergenceWarning

P = 1.5
FORMULA = "y ~ bin(a, 10) + bin(b, 10)"


def _tweedie_data(n: int = 2000, seed: int = 5) -> pd.DataFrame:
    """Compound Poisson–gamma claims (zeros and positive amounts) with two step effects."""
    rng = np.random.default_rng(seed)
    a, b = rng.normal(size=n), rng.normal(size=n)
    mu = np.exp(0.3 + 0.8 * (a > 0) - 0.5 * (b > 0.5))
    counts = rng.poisson(np.sqrt(mu))
    y = np.array([rng.gamma(2.0, np.sqrt(m) / 2, size=k).sum() for k, m in zip(counts, mu)])
    return pd.DataFrame({"a": a, "b": b, "y": y})


@pytest.fixture(scope="module")
def reference():
    df = _tweedie_data()
    fixed = bs.glm(FORMULA, df, family=("tweedie", P)).fit(lam=0.01)
    theory = bs.glm(FORMULA, df, family=("tweedie", P)).fit()
    assert fixed.converged and theory.converged
    assert fixed.n_jumps > 0 and theory.n_jumps > 0
    return df, fixed, theory


def _fit(df, **kw):
    """The fit, with a ConvergenceWarning or a floating-point RuntimeWarning an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        warnings.simplefilter("error", RuntimeWarning)
        return bs.glm(FORMULA, df, family=("tweedie", P)).fit(**kw)


def _same_fit(scaled, ref, c):
    """The fit of y·c is the fit of y, its intercept moved by log c."""
    assert scaled.converged
    # coefficients to 1e-9 of their scale: the solver's steps are equivariant, so the
    # two runs differ by rounding only (measured: 1e-13)
    top = float(np.max(np.abs(ref.coef)))
    np.testing.assert_allclose(scaled.coef, ref.coef, rtol=0, atol=1e-9 * top)
    np.testing.assert_array_equal(scaled.jumps, ref.jumps)
    assert scaled.intercept - np.log(c) == pytest.approx(ref.intercept, abs=1e-9 * top)


@pytest.mark.parametrize("c", [1e-8, 1e-150, 1e-300])
def test_a_tiny_tweedie_y_is_fitted_as_one_of_unit_scale(reference, c):
    df, fixed, _ = reference
    scaled = df.assign(y=df["y"] * c)
    res = _fit(scaled, lam=0.01 * c ** (2 - P))
    _same_fit(res, fixed, c)


@pytest.mark.parametrize("c", [1e-8, 1e-150, 1e-300])
def test_the_theory_lambda_of_a_tiny_tweedie_y_scales_with_it(reference, c):
    df, _, theory = reference
    scaled = df.assign(y=df["y"] * c)
    res = _fit(scaled)
    # λ ∝ sqrt(U φ̂), both ∝ c^{2−p}; the same fit as at unit scale
    assert res.lam / c ** (2 - P) == pytest.approx(theory.lam, rel=1e-9)
    _same_fit(res, theory, c)
    assert res.n_jumps == theory.n_jumps


@pytest.mark.parametrize("c", [1e-50, 1e-300])
def test_the_statistics_of_a_tiny_tweedie_y_scale_with_it(reference, c):
    """The link of a tiny mean is not clipped, and Pearson's statistic stays finite."""
    df, _, _ = reference
    fam = bs.glm(FORMULA, df, family=("tweedie", P)).family
    y = df["y"].to_numpy()
    w = np.ones(len(y))
    assert fam.link_function(np.array([c]))[0] == pytest.approx(np.log(c), rel=1e-12)
    mu = np.full(len(y), float(np.mean(y)))
    chi2 = fam.pearson_chi2(y, mu, w)
    # (y − μ)² / μ^p scales as c^{2−p}
    assert fam.pearson_chi2(y * c, mu * c, w) / c ** (2 - P) == pytest.approx(chi2, rel=1e-9)
    assert fam.gradient_units(y * c, w) / c ** (2 - P) == pytest.approx(
        fam.gradient_units(y, w), rel=1e-9
    )
