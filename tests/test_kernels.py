"""Each Cython kernel agrees with its NumPy equivalent (stated in its docstring)."""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import special

from binarsity_stats import _glm_kernels as gk
from binarsity_stats import _histogram as hk

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("dtype,K", [(np.uint8, 7), (np.uint8, 256), (np.uint16, 1000)])
def test_histograms_and_gathers_match_numpy(dtype, K):
    n = 5000
    codes = RNG.integers(0, K, n).astype(dtype)
    v = RNG.normal(size=n)
    u = RNG.normal(size=n)
    out = np.zeros(K)
    hk.bin_sums(codes, v, out)
    assert_allclose(out, np.bincount(codes, weights=v, minlength=K), rtol=1e-12, atol=1e-12)
    oa, ob = np.zeros(K), np.zeros(K)
    hk.bin_sums2(codes, v, u, oa, ob)
    assert_allclose(oa, np.bincount(codes, weights=v, minlength=K), atol=1e-12)
    assert_allclose(ob, np.bincount(codes, weights=u, minlength=K), atol=1e-12)
    cnt = np.zeros(K)
    hk.bin_counts(codes, cnt)
    assert_allclose(cnt, np.bincount(codes, minlength=K))
    table = RNG.normal(size=K)
    eta = v.copy()
    hk.gather_add(codes, table, eta)
    assert_allclose(eta, v + table[codes])


def test_blockwise_kernels_match_numpy():
    n, sizes = 3000, np.array([3, 10, 1, 50])
    bp = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
    codes = np.vstack([RNG.integers(0, s, n) for s in sizes]).astype(np.uint8)
    theta = RNG.normal(size=bp[-1])
    v = RNG.normal(size=n)
    eta = np.zeros(n)
    hk.gather_add_all(codes, bp, theta, eta)
    ref = sum(theta[bp[j] + codes[j]] for j in range(len(sizes)))
    assert_allclose(eta, ref, atol=1e-12)
    out = np.zeros(bp[-1])
    hk.bin_sums_all(codes, bp, v, out)
    ref = np.concatenate(
        [np.bincount(codes[j], weights=v, minlength=s) for j, s in enumerate(sizes)]
    )
    assert_allclose(out, ref, atol=1e-12)


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
