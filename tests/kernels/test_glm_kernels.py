"""kernels/_glm_kernels.pyx: row-wise loss, gradient and curvature of the GLM families.

Each kernel agrees with its NumPy twin (the formula in its docstring), at extreme η too;
rows of zero weight contribute nothing to the Tweedie and gamma kernels; a wrong dtype,
a non-contiguous array or (Tweedie, gamma) a short array is refused. Short arrays are
made here as views into a longer buffer holding NaN past the view, so that a kernel
reading past its inputs reads valid memory and shows it by a NaN.
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import special

from binarsity_stats.families._families import get_family
from binarsity_stats.kernels import _glm_kernels as gk

RNG = np.random.default_rng(0)


def _numpy_family(name, eta, y, sw):
    if name == "gaussian":
        return sw * (eta**2 / 2 - y * eta), sw * (eta - y), sw
    if name == "binomial":
        # μ and 1 − μ each from expit, so that saturated rows keep their tiny gradient
        mu, nu = special.expit(eta), special.expit(-eta)
        return sw * (np.logaddexp(0, eta) - y * eta), sw * (mu * (1 - y) - nu * y), sw * mu * nu
    mu = np.exp(np.minimum(eta, 700))
    return sw * (np.exp(eta) - y * eta), sw * (mu - y), sw * mu


@pytest.mark.parametrize(
    "name,kernels",
    [
        ("gaussian", (gk.gaussian_identity_loss, gk.gaussian_identity_grad_hess)),
        ("binomial", (gk.binomial_logit_loss, gk.binomial_logit_grad_hess)),
        ("poisson", (gk.poisson_log_loss, gk.poisson_log_grad_hess)),
    ],
)
def test_family_kernels_match_numpy(name, kernels):
    n = 2000
    eta = RNG.normal(scale=3, size=n)
    eta[:5] = [-40, 40, 0, 700, -700] if name != "poisson" else [-40, 20, 0, 5, -700]
    y = {"gaussian": RNG.normal(size=n), "binomial": RNG.integers(0, 2, n).astype(float),
         "poisson": RNG.poisson(2, n).astype(float)}[name]  # fmt: skip
    sw = RNG.uniform(0, 2, n)
    loss, grad, hess = _numpy_family(name, eta, y, sw)
    assert_allclose(kernels[0](eta, y, sw), loss.sum(), rtol=1e-12)
    g, h = np.empty(n), np.empty(n)
    total = kernels[1](eta, y, sw, 0.5, g, h)
    assert_allclose(total, loss.sum(), rtol=1e-12)
    assert_allclose(g, 0.5 * grad, rtol=1e-12, atol=1e-300)
    assert_allclose(h, 0.5 * hess, rtol=1e-12, atol=1e-300)
    assert np.all(np.isfinite(g)) and np.all(np.isfinite(h))


def test_binomial_without_the_loss_gives_the_same_gradient():
    n = 500
    eta = RNG.normal(scale=5, size=n)
    eta[:2] = [-800, 800]
    y, sw = RNG.integers(0, 2, n).astype(float), RNG.uniform(0, 2, n)
    g1, h1, g2, h2 = (np.empty(n) for _ in range(4))
    gk.binomial_logit_grad_hess(eta, y, sw, 0.25, g1, h1)
    assert gk.binomial_logit_grad_hess_noloss(eta, y, sw, 0.25, g2, h2) == 0.0
    assert_allclose(g2, g1, rtol=1e-15, atol=1e-300)
    assert_allclose(h2, h1, rtol=1e-15, atol=1e-300)


def test_tweedie_and_gamma_match_their_half_deviance():
    n, p = 1000, 1.5
    eta = RNG.normal(size=n)
    eta[:2] = [800.0, -800.0]  # the gradient and weight at η clipped to ±700
    y = np.where(RNG.random(n) < 0.3, 0.0, RNG.gamma(2.0, 1.0, n))
    sw = RNG.uniform(0, 2, n)
    sw[10:20] = 0.0  # rows without weight: nothing, not even a NaN
    a, b = 1 - p, 2 - p
    with np.errstate(over="ignore"):
        d = np.exp(b * eta) / b + np.where(y > 0, y**b / (a * b) - y * np.exp(a * eta) / a, 0)
    keep = sw > 0
    want = np.sum(sw[keep] * d[keep])
    assert gk.tweedie_log_loss(eta[2:], y[2:], sw[2:], p) == pytest.approx(
        np.sum((sw * d)[2:][keep[2:]]), rel=1e-12
    )
    g, h = np.empty(n), np.empty(n)
    total = gk.tweedie_log_grad_hess(eta, y, sw, 0.5, g, h, p)
    assert total == want  # +inf: e^{(2-p)·800} overflows in the loss, as documented
    ec = np.clip(eta, -700, 700)
    assert_allclose(h, 0.5 * sw * np.exp(b * ec), rtol=1e-12)
    assert_allclose(g, 0.5 * sw * (np.exp(b * ec) - y * np.exp(a * ec)), rtol=1e-12, atol=1e-300)
    assert np.all(g[10:20] == 0) and np.all(h[10:20] == 0)

    yg = RNG.gamma(2.0, 1.0, n)
    loss = gk.gamma_log_loss(eta[2:], yg[2:], sw[2:])
    with np.errstate(over="ignore"):
        ref = sw * (yg * np.exp(-eta) + eta - 1 - np.log(yg))
    assert loss == pytest.approx(np.sum(ref[2:][keep[2:]]), rel=1e-12)
    gk.gamma_log_grad_hess(eta, yg, sw, 0.5, g, h)
    assert_allclose(g, np.where(keep, 0.5 * sw * (1 - yg * np.exp(-ec)), 0), rtol=1e-12,
                    atol=1e-300)  # fmt: skip
    assert_allclose(h, 0.5 * sw, rtol=1e-15)


def short(n, fill=np.nan):
    """n values in a longer buffer whose tail is ``fill``: reading past them is safe."""
    buf = np.full(n + 8, fill)
    buf[:n] = RNG.uniform(0.5, 2.0, n)
    return buf[:n]


def test_tweedie_and_gamma_refuse_short_arrays():
    eta = np.zeros(10)
    with pytest.raises(ValueError, match="eta, y and sw must have the same length"):
        gk.tweedie_log_loss(eta, short(9), np.ones(10), 1.5)
    with pytest.raises(ValueError, match="must have the same length"):
        gk.tweedie_log_grad_hess(eta, np.ones(10), np.ones(10), 1.0, np.empty(10),
                                 short(9), 1.5)  # fmt: skip
    with pytest.raises(ValueError, match="eta, y and sw must have the same length"):
        gk.gamma_log_loss(eta, np.ones(10), short(3))
    with pytest.raises(ValueError, match="must have the same length"):
        gk.gamma_log_grad_hess(eta, np.ones(10), np.ones(10), 1.0, short(9), np.empty(10))


def test_wrong_dtype_and_layout_are_refused():
    with pytest.raises(ValueError, match="Buffer dtype mismatch"):
        gk.binomial_logit_loss(np.zeros(5, dtype=np.float32), np.zeros(5), np.ones(5))
    with pytest.raises(ValueError, match="not C-contiguous"):
        gk.poisson_log_loss(np.zeros(10)[::2], np.zeros(5), np.ones(5))


@pytest.mark.parametrize("name", ["gaussian", "binomial", "poisson"])
def test_the_drivers_refuse_a_short_response(name):
    family = get_family(name)
    eta = np.zeros(10)
    with pytest.raises(ValueError):
        family.loss_sum(eta, short(8), np.ones(10))
