"""Each Cython kernel agrees with its NumPy equivalent (stated in its docstring)."""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import special

from binarsity_stats.kernels import _glm_kernels as gk
from binarsity_stats.kernels import _histogram as hk

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


def test_dense_kernels_match_numpy():
    from binarsity_stats.kernels import _dense

    n, q = 1000, 3
    U = np.asfortranarray(RNG.normal(size=(n, q)))
    z, h = RNG.normal(size=n), RNG.uniform(size=n)
    assert_allclose(_dense.dot(z, h), z @ h, rtol=1e-12)
    out = np.empty(q)
    _dense.columns_dot(U, z, out)
    assert_allclose(out, U.T @ z, rtol=1e-12)
    gram = np.empty((q, q))
    _dense.weighted_gram(U, h, gram)
    assert_allclose(gram, U.T @ (h[:, None] * U), rtol=1e-12)
    step = RNG.normal(size=q)
    z2, de = z.copy(), np.zeros(n)
    _dense.add_columns(U, step, h, z2, de)
    assert_allclose(de, U @ step, rtol=1e-12)
    assert_allclose(z2, z + h * (U @ step), rtol=1e-12)
    acc = np.zeros(n)
    _dense.matvec_add(U, step, acc)
    assert_allclose(acc, U @ step, rtol=1e-12)
    d = RNG.normal(size=n)
    assert_allclose(_dense.quadratic_model(z, h, d), z @ d + 0.5 * (h * d) @ d, rtol=1e-12)


def _numpy_cd_sweep(codes, bp, active, lam_w, H, counts, theta, z, delta_eta, h):
    """NumPy twin of ``_cd_fast.cd_sweep`` (with an intercept), built on the reference
    fused-lasso twin of ``_prox``."""
    from binarsity_stats.penalty._prox import _reference_weighted_fused_lasso

    shift = 0.0
    for j in active:
        s, e = bp[j], bp[j + 1]
        g = np.bincount(codes[j], weights=z, minlength=e - s)
        u = _reference_weighted_fused_lasso(theta[s:e] - g / H[s:e], H[s:e], lam_w[s:e])
        dl = u - theta[s:e]
        c = counts[s:e] @ u / counts[s:e].sum()
        theta[s:e] = u - c
        shift += c
        z += h * dl[codes[j]]
        delta_eta += dl[codes[j]]
    return shift


def test_cd_sweep_matches_numpy_twin():
    from binarsity_stats.kernels import _cd_fast
    from binarsity_stats.kernels._fused_lasso import work_size

    n, sizes = 400, np.array([5, 9, 1, 12])
    bp = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
    codes = np.ascontiguousarray(np.vstack([RNG.integers(0, s, n) for s in sizes]), np.uint8)
    h = RNG.uniform(0.1, 1.0, n) / n
    H = np.zeros(bp[-1])
    hk.bin_sums_all(codes, bp, h, H)
    counts = np.concatenate([np.bincount(codes[j], minlength=s) for j, s in enumerate(sizes)])
    counts = counts.astype(float)
    lam_w = RNG.uniform(0, 2e-3, bp[-1])
    active = np.array([0, 1, 2, 3], dtype=np.intp)
    theta0 = np.zeros(bp[-1])
    z0 = RNG.normal(size=n) / n
    a = (theta0.copy(), z0.copy(), np.zeros(n))
    b = (theta0.copy(), z0.copy(), np.zeros(n))
    work = np.empty(7 * sizes.max() + work_size(sizes.max()))
    for _ in range(3):
        _, shift_a, _ = _cd_fast.cd_sweep(codes, bp, active, lam_w, H, counts, a[0], a[1],
                                          a[2], h, True, 1e-12, work)  # fmt: skip
        shift_b = _numpy_cd_sweep(codes, bp, active, lam_w, H, counts, *b, h)
        assert_allclose(shift_a, shift_b, rtol=1e-9, atol=1e-12)
    for x, y in zip(a, b, strict=True):
        assert_allclose(x, y, rtol=1e-8, atol=1e-12)
