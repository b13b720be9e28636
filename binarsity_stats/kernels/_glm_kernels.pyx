# cython: language_level=3
"""Row-wise loss, gradient and Hessian of the canonical-link GLM families.

For a family with cumulant function ``b`` the per-row loss is
``s_i [b(η_i) − y_i η_i]``, its derivative ``s_i (b'(η_i) − y_i)`` and its second
derivative ``s_i b''(η_i)`` (design.md §1). Kernels are named
``{family}_{link}_{quantity}``; output buffers end in ``_out``; every loss kernel
returns the unnormalised sum Σ_i s_i [b(η_i) − y_i η_i] (the caller divides by W).
Every kernel checks that its arrays are as long as ``eta`` before its loop: whatever it
is handed, it never reads or writes past an array's end.
"""

cimport cython
from libc.math cimport exp, log, log1p, fabs, pow

cdef double _POISSON_ETA_MAX = 700.0   # exp(700) ~ 1e304: keep b'' finite


cdef inline double _log1pexp(double x) noexcept nogil:
    # log(1 + e^x) without overflow
    if x > 0:
        return x + log1p(exp(-x))
    return log1p(exp(x))


cdef inline double _sigmoid(double x) noexcept nogil:
    cdef double e
    if x >= 0:
        return 1.0 / (1.0 + exp(-x))
    e = exp(x)
    return e / (1.0 + e)


def gaussian_identity_loss(const double[::1] eta, const double[::1] y,
                           const double[::1] sw):
    """Σ s_i (η_i²/2 − y_i η_i).  NumPy: ``np.sum(sw * (eta**2 / 2 - y * eta))``."""
    cdef Py_ssize_t i, n = eta.shape[0]
    cdef double acc = 0.0
    if y.shape[0] < n or sw.shape[0] < n:
        raise ValueError("eta, y and sw must have the same length.")
    with nogil:
        for i in range(n):
            acc += sw[i] * (0.5 * eta[i] * eta[i] - y[i] * eta[i])
    return acc


def binomial_logit_loss(const double[::1] eta, const double[::1] y,
                        const double[::1] sw):
    """Σ s_i (log(1 + e^{η_i}) − y_i η_i).  NumPy: ``np.sum(sw * (np.logaddexp(0, eta) - y * eta))``."""
    cdef Py_ssize_t i, n = eta.shape[0]
    cdef double acc = 0.0
    if y.shape[0] < n or sw.shape[0] < n:
        raise ValueError("eta, y and sw must have the same length.")
    with nogil:
        for i in range(n):
            acc += sw[i] * (_log1pexp(eta[i]) - y[i] * eta[i])
    return acc


def poisson_log_loss(const double[::1] eta, const double[::1] y,
                     const double[::1] sw):
    """Σ s_i (e^{η_i} − y_i η_i).  NumPy: ``np.sum(sw * (np.exp(eta) - y * eta))``."""
    cdef Py_ssize_t i, n = eta.shape[0]
    cdef double acc = 0.0
    if y.shape[0] < n or sw.shape[0] < n:
        raise ValueError("eta, y and sw must have the same length.")
    with nogil:
        for i in range(n):
            acc += sw[i] * (exp(eta[i]) - y[i] * eta[i])
    return acc


def gaussian_identity_grad_hess(const double[::1] eta, const double[::1] y,
                                const double[::1] sw, double scale,
                                double[::1] grad_out, double[::1] hess_out):
    """``grad_out = scale·s(η − y)``, ``hess_out = scale·s``; returns the loss sum.

    NumPy: ``grad_out[:] = scale * sw * (eta - y); hess_out[:] = scale * sw``.
    """
    cdef Py_ssize_t i, n = eta.shape[0]
    cdef double acc = 0.0, e
    if y.shape[0] < n or sw.shape[0] < n or grad_out.shape[0] < n or hess_out.shape[0] < n:
        raise ValueError("eta, y, sw, grad_out and hess_out must have the same length.")
    with nogil:
        for i in range(n):
            e = eta[i]
            acc += sw[i] * (0.5 * e * e - y[i] * e)
            grad_out[i] = scale * sw[i] * (e - y[i])
            hess_out[i] = scale * sw[i]
    return acc


def binomial_logit_grad_hess(const double[::1] eta, const double[::1] y,
                             const double[::1] sw, double scale,
                             double[::1] grad_out, double[::1] hess_out):
    """``grad_out = scale·s(μ − y)``, ``hess_out = scale·s μ(1 − μ)``, μ = sigmoid(η).

    NumPy: ``mu = expit(eta); grad_out[:] = scale*sw*(mu - y);
    hess_out[:] = scale*sw*mu*(1 - mu)``. Returns the loss sum.
    """
    cdef Py_ssize_t i, n = eta.shape[0]
    cdef double acc = 0.0, e, t, mu, nu, inv
    if y.shape[0] < n or sw.shape[0] < n or grad_out.shape[0] < n or hess_out.shape[0] < n:
        raise ValueError("eta, y, sw, grad_out and hess_out must have the same length.")
    with nogil:
        for i in range(n):
            e = eta[i]
            # one exponential per row, t = e^{-|η|}; μ and 1 − μ both without cancellation
            t = exp(-fabs(e))
            inv = 1.0 / (1.0 + t)
            if e >= 0:
                mu = inv
                nu = t * inv
                acc += sw[i] * (e + log1p(t) - y[i] * e)
            else:
                mu = t * inv
                nu = inv
                acc += sw[i] * (log1p(t) - y[i] * e)
            grad_out[i] = scale * sw[i] * (mu * (1.0 - y[i]) - nu * y[i])
            hess_out[i] = scale * sw[i] * t * inv * inv
    return acc


def binomial_logit_grad_hess_noloss(const double[::1] eta, const double[::1] y,
                                    const double[::1] sw, double scale,
                                    double[::1] grad_out, double[::1] hess_out):
    """As ``binomial_logit_grad_hess`` without the loss (returns 0.0): no logarithm."""
    cdef Py_ssize_t i, n = eta.shape[0]
    cdef double e, t, mu, nu, inv
    if y.shape[0] < n or sw.shape[0] < n or grad_out.shape[0] < n or hess_out.shape[0] < n:
        raise ValueError("eta, y, sw, grad_out and hess_out must have the same length.")
    with nogil:
        for i in range(n):
            e = eta[i]
            t = exp(-fabs(e))
            inv = 1.0 / (1.0 + t)
            if e >= 0:
                mu = inv
                nu = t * inv
            else:
                mu = t * inv
                nu = inv
            grad_out[i] = scale * sw[i] * (mu * (1.0 - y[i]) - nu * y[i])
            hess_out[i] = scale * sw[i] * t * inv * inv
    return 0.0


def poisson_log_grad_hess(const double[::1] eta, const double[::1] y,
                          const double[::1] sw, double scale,
                          double[::1] grad_out, double[::1] hess_out):
    """``grad_out = scale·s(e^η − y)``, ``hess_out = scale·s e^η`` (η capped at 700).

    NumPy: ``mu = np.exp(np.minimum(eta, 700)); grad_out[:] = scale*sw*(mu - y);
    hess_out[:] = scale*sw*mu``. Returns the loss sum (uncapped).
    """
    cdef Py_ssize_t i, n = eta.shape[0]
    cdef double acc = 0.0, e, mu
    if y.shape[0] < n or sw.shape[0] < n or grad_out.shape[0] < n or hess_out.shape[0] < n:
        raise ValueError("eta, y, sw, grad_out and hess_out must have the same length.")
    with nogil:
        for i in range(n):
            e = eta[i]
            acc += sw[i] * (exp(e) - y[i] * e)
            if e > _POISSON_ETA_MAX:
                e = _POISSON_ETA_MAX
            mu = exp(e)
            grad_out[i] = scale * sw[i] * (mu - y[i])
            hess_out[i] = scale * sw[i] * mu
    return acc


# ------------------------------------------------------------------ log-link Tweedie/gamma
# These kernels return the **half deviance** Σ s d(y, μ)/2 (the loss of the statsmodels
# path in ``_families.StatsmodelsFamily``, not b(η) − yη) and the Fisher-scoring weight
# μ'(η)²/V(μ) = e^{(2−p)η} as the curvature, so that they agree with that NumPy path to
# rounding. Rows with s_i = 0 contribute nothing (not even a NaN). Gradients and weights
# are evaluated at η clipped to ±700 (e^709 overflows); the loss at η itself (+inf when
# it overflows).

cdef double _LOG_ETA_MAX = 700.0


def tweedie_log_loss(const double[::1] eta, const double[::1] y,
                     const double[::1] sw, double power):
    """Σ s_i d(y_i, e^{η_i})/2 for the variance μ^p, 1 < p < 2.

    NumPy: ``np.sum(sw * (y**(2-p)/((1-p)*(2-p)) - y*np.exp((1-p)*eta)/(1-p)
    + np.exp((2-p)*eta)/(2-p)))``, with 0·inf = 0 where y = 0.
    """
    cdef Py_ssize_t i, n = eta.shape[0]
    cdef double acc = 0.0, e, a = 1.0 - power, b = 2.0 - power, d
    if y.shape[0] < n or sw.shape[0] < n:
        raise ValueError("eta, y and sw must have the same length.")
    with nogil:
        for i in range(n):
            if not sw[i] > 0:
                continue
            e = eta[i]
            d = exp(b * e) / b
            if y[i] != 0:
                d = d + pow(y[i], b) / (a * b) - y[i] * exp(a * e) / a
            acc += sw[i] * d
    return acc


def tweedie_log_grad_hess(const double[::1] eta, const double[::1] y,
                          const double[::1] sw, double scale,
                          double[::1] grad_out, double[::1] hess_out, double power):
    """``grad_out = scale·s(e^{(2−p)η} − y e^{(1−p)η})``, ``hess_out = scale·s e^{(2−p)η}``.

    The gradient of the half deviance and the Fisher weight (η clipped to ±700 there).
    Returns the loss sum (as ``tweedie_log_loss``).
    """
    cdef Py_ssize_t i, n = eta.shape[0]
    cdef double acc = 0.0, e, a = 1.0 - power, b = 2.0 - power, w, s, d
    if y.shape[0] < n or sw.shape[0] < n or grad_out.shape[0] < n or hess_out.shape[0] < n:
        raise ValueError("eta, y, sw, grad_out and hess_out must have the same length.")
    with nogil:
        for i in range(n):
            if not sw[i] > 0:
                grad_out[i] = 0.0
                hess_out[i] = 0.0
                continue
            e = eta[i]
            d = exp(b * e) / b
            if y[i] != 0:
                d = d + pow(y[i], b) / (a * b) - y[i] * exp(a * e) / a
            acc += sw[i] * d
            if e > _LOG_ETA_MAX:
                e = _LOG_ETA_MAX
            elif e < -_LOG_ETA_MAX:
                e = -_LOG_ETA_MAX
            w = exp(b * e)
            s = scale * sw[i]
            hess_out[i] = s * w
            if y[i] != 0:
                grad_out[i] = s * (w - y[i] * exp(a * e))
            else:
                grad_out[i] = s * w
    return acc


def gamma_log_loss(const double[::1] eta, const double[::1] y, const double[::1] sw):
    """Σ s_i (y_i e^{−η_i} + η_i − 1 − log y_i), half the gamma deviance (y > 0).

    NumPy: ``np.sum(sw * (y * np.exp(-eta) + eta - 1 - np.log(y)))``.
    """
    cdef Py_ssize_t i, n = eta.shape[0]
    cdef double acc = 0.0
    if y.shape[0] < n or sw.shape[0] < n:
        raise ValueError("eta, y and sw must have the same length.")
    with nogil:
        for i in range(n):
            if not sw[i] > 0:
                continue
            acc += sw[i] * (y[i] * exp(-eta[i]) + eta[i] - 1.0 - log(y[i]))
    return acc


def gamma_log_grad_hess(const double[::1] eta, const double[::1] y,
                        const double[::1] sw, double scale,
                        double[::1] grad_out, double[::1] hess_out):
    """``grad_out = scale·s(1 − y e^{−η})``, ``hess_out = scale·s`` (the Fisher weight).

    η clipped to ±700 in the gradient; returns the loss sum (as ``gamma_log_loss``).
    """
    cdef Py_ssize_t i, n = eta.shape[0]
    cdef double acc = 0.0, e, s
    if y.shape[0] < n or sw.shape[0] < n or grad_out.shape[0] < n or hess_out.shape[0] < n:
        raise ValueError("eta, y, sw, grad_out and hess_out must have the same length.")
    with nogil:
        for i in range(n):
            if not sw[i] > 0:
                grad_out[i] = 0.0
                hess_out[i] = 0.0
                continue
            e = eta[i]
            acc += sw[i] * (y[i] * exp(-e) + e - 1.0 - log(y[i]))
            if e > _LOG_ETA_MAX:
                e = _LOG_ETA_MAX
            elif e < -_LOG_ETA_MAX:
                e = -_LOG_ETA_MAX
            s = scale * sw[i]
            grad_out[i] = s * (1.0 - y[i] * exp(-e))
            hess_out[i] = s
    return acc
