"""Exponential-family distributions with their canonical links (paper, Table 1).

A family knows its cumulant function ``b`` through three vectorised quantities on the
linear predictor η: the loss ``s [b(η) − y η]``, its gradient and its Hessian
(design.md §1), plus what the report needs (mean, deviance, log-likelihood). The hot
loops run in ``_glm_kernels.pyx``; each method here validates and dispatches.
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np
from scipy import special

from . import _glm_kernels as _k

__all__ = ["Family", "Gaussian", "Binomial", "Poisson", "get_family", "FAMILIES"]


class Family:
    """Base class of a canonical-link GLM family.

    Subclasses set ``name``, ``link`` and the kernels, and implement the mean,
    the validation of ``y`` and the deviance.
    """

    name: ClassVar[str] = ""
    link: ClassVar[str] = ""
    _loss_kernel = None
    _grad_hess_kernel = None
    _grad_hess_noloss_kernel = None

    def validate_y(self, y: np.ndarray) -> None:
        """Raise ``ValueError`` naming ``y`` if a value is outside the family's domain."""
        if not np.all(np.isfinite(y)):
            raise ValueError(f"y contains NaN or infinite values (family={self.name!r}).")

    def loss_sum(self, eta: np.ndarray, y: np.ndarray, sample_weight: np.ndarray) -> float:
        """Return Σ_i s_i [b(η_i) − y_i η_i] (not normalised)."""
        return float(type(self)._loss_kernel(eta, y, sample_weight))

    def grad_hess(
        self,
        eta: np.ndarray,
        y: np.ndarray,
        sample_weight: np.ndarray,
        scale: float,
        grad_out: np.ndarray,
        hess_out: np.ndarray,
    ) -> float:
        """Fill ``grad_out`` = scale·s(b'(η) − y) and ``hess_out`` = scale·s b''(η).

        Returns the unnormalised loss sum at η.
        """
        return float(type(self)._grad_hess_kernel(eta, y, sample_weight, scale, grad_out, hess_out))

    def grad_hess_only(
        self,
        eta: np.ndarray,
        y: np.ndarray,
        sample_weight: np.ndarray,
        scale: float,
        grad_out: np.ndarray,
        hess_out: np.ndarray,
    ) -> None:
        """As :meth:`grad_hess` when the loss is already known (skips the logarithms)."""
        kernel = type(self)._grad_hess_noloss_kernel or type(self)._grad_hess_kernel
        kernel(eta, y, sample_weight, scale, grad_out, hess_out)

    def mean(self, eta: np.ndarray) -> np.ndarray:
        """Inverse link: the mean response b'(η)."""
        raise NotImplementedError

    def link_function(self, mu: np.ndarray) -> np.ndarray:
        """The canonical link g(μ) = (b')⁻¹(μ)."""
        raise NotImplementedError

    def unit_deviance(self, y: np.ndarray, mu: np.ndarray) -> np.ndarray:
        """Per-row deviance d(y, μ) = 2 [ℓ(y; y) − ℓ(μ; y)]."""
        raise NotImplementedError

    def deviance(self, y: np.ndarray, mu: np.ndarray, sample_weight: np.ndarray) -> float:
        """Weighted deviance Σ_i s_i d(y_i, μ_i)."""
        return float(np.sum(sample_weight * self.unit_deviance(y, mu)))

    def log_likelihood(
        self, y: np.ndarray, mu: np.ndarray, sample_weight: np.ndarray, scale: float = 1.0
    ) -> float:
        """Full log-likelihood (with normalising constants), as statsmodels reports it."""
        raise NotImplementedError

    def null_mean(self, y: np.ndarray, sample_weight: np.ndarray) -> float:
        """Weighted mean of y, the intercept-only fitted mean without offset."""
        return float(np.average(y, weights=sample_weight))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(link={self.link!r})"


class Gaussian(Family):
    """Normal distribution, identity link: b(z) = z²/2."""

    name = "gaussian"
    link = "identity"
    _loss_kernel = _k.gaussian_identity_loss
    _grad_hess_kernel = _k.gaussian_identity_grad_hess

    def validate_y(self, y):
        super().validate_y(y)
        top = float(np.max(np.abs(y))) if y.size else 0.0
        if top > 1e150:
            # the loss squares y: beyond ~1e154 it overflows to inf
            raise ValueError(
                f"y has values as large as {top:.3g} in magnitude; the squared-error loss "
                "overflows beyond ~1e150: rescale y (e.g. divide by its standard deviation)."
            )

    def mean(self, eta):
        return np.asarray(eta, dtype=float)

    def link_function(self, mu):
        return np.asarray(mu, dtype=float)

    def unit_deviance(self, y, mu):
        return (y - mu) ** 2

    def log_likelihood(self, y, mu, sample_weight, scale=1.0):
        # statsmodels' convention: scale = deviance / n (the MLE of σ²) for the llf
        w = sample_weight
        nobs = np.sum(w)
        dev = np.sum(w * (y - mu) ** 2)
        scale = dev / nobs
        if scale <= 0:
            return np.inf  # a perfect fit: the likelihood is unbounded
        return float(-nobs / 2 * (np.log(2 * np.pi * scale) + 1))


class Binomial(Family):
    """Bernoulli distribution, logit link: b(z) = log(1 + e^z)."""

    name = "binomial"
    link = "logit"
    _loss_kernel = _k.binomial_logit_loss
    _grad_hess_kernel = _k.binomial_logit_grad_hess
    _grad_hess_noloss_kernel = _k.binomial_logit_grad_hess_noloss

    def validate_y(self, y):
        super().validate_y(y)
        if not np.all((y == 0) | (y == 1)):
            bad = y[(y != 0) & (y != 1)][:3]
            raise ValueError(
                f"y must be 0 or 1 for family='binomial'; found values such as {bad.tolist()}."
            )

    def mean(self, eta):
        return special.expit(eta)

    def link_function(self, mu):
        return special.logit(mu)

    def unit_deviance(self, y, mu):
        mu = np.clip(mu, 1e-300, 1 - 1e-16)
        return 2 * (special.xlogy(y, y / mu) + special.xlogy(1 - y, (1 - y) / (1 - mu)))

    def log_likelihood(self, y, mu, sample_weight, scale=1.0):
        mu = np.clip(mu, 1e-300, 1 - 1e-16)
        ll = special.xlogy(y, mu) + special.xlogy(1 - y, 1 - mu)
        return float(np.sum(sample_weight * ll))


class Poisson(Family):
    """Poisson distribution, log link: b(z) = e^z."""

    name = "poisson"
    link = "log"
    _loss_kernel = _k.poisson_log_loss
    _grad_hess_kernel = _k.poisson_log_grad_hess

    def validate_y(self, y):
        super().validate_y(y)
        if np.any(y < 0):
            bad = y[y < 0][:3]
            raise ValueError(
                f"y must be non-negative for family='poisson'; found values such as {bad.tolist()}."
            )

    def mean(self, eta):
        return np.exp(eta)

    def link_function(self, mu):
        return np.log(mu)

    def unit_deviance(self, y, mu):
        return 2 * (special.xlogy(y, y / mu) - (y - mu))

    def log_likelihood(self, y, mu, sample_weight, scale=1.0):
        ll = special.xlogy(y, mu) - mu - special.gammaln(y + 1)
        return float(np.sum(sample_weight * ll))


FAMILIES: dict[str, type[Family]] = {
    "gaussian": Gaussian,
    "binomial": Binomial,
    "poisson": Poisson,
}


def get_family(family: str | Family) -> Family:
    """Return the family instance for a name (``"gaussian"``, ``"binomial"``, ``"poisson"``)."""
    if isinstance(family, Family):
        return family
    if not isinstance(family, str) or family.lower() not in FAMILIES:
        raise ValueError(f"family must be one of {sorted(FAMILIES)}; got {family!r}.")
    return FAMILIES[family.lower()]()


def null_intercept(
    family: Family,
    y: np.ndarray,
    sw: np.ndarray,
    offset: np.ndarray | None,
    fit_intercept: bool = True,
) -> float:
    """β0 of the intercept-only GLM with offset (the null model of the deviance).

    Parameters
    ----------
    family : Family
        Distribution.
    y, sw : ndarray of shape (n,)
        Response and weights.
    offset : ndarray of shape (n,) or None
        Offset.
    fit_intercept : bool, default=True
        Without an intercept the null model is the offset alone (β0 = 0).

    Returns
    -------
    float
        The intercept of the null model.
    """
    if not fit_intercept:
        return 0.0
    off = np.zeros_like(y) if offset is None else offset
    W = float(sw.sum())
    if family.name == "gaussian":
        return float(np.sum(sw * (y - off)) / W)
    if family.name == "poisson":
        return float(math.log(max(np.sum(sw * y), 1e-300) / np.sum(sw * np.exp(off))))
    ybar = min(max(float(np.sum(sw * y) / W), 1e-10), 1 - 1e-10)
    b0 = math.log(ybar / (1 - ybar)) - float(np.sum(sw * off) / W)
    for _ in range(100):
        mu = family.mean(b0 + off)
        g = float(np.sum(sw * (mu - y)))
        h = float(np.sum(sw * mu * (1 - mu)))
        if h <= 0:
            break
        step = g / h
        b0 -= step
        if abs(step) < 1e-13 * max(1.0, abs(b0)):
            break
    return float(b0)
