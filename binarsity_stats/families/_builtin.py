"""The built-in families with a Cython fast path: ``"gaussian"``, ``"binomial"`` and
``"poisson"`` (canonical links, loss s [b(η) − y η], kernels in ``_glm_kernels.pyx``), and
``"cox"`` (the partial likelihood over risk sets, ``_cox``); :data:`FAMILIES` names them.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from ..kernels import _glm_kernels as _k
from . import _cox
from ._family import (
    LOG_ETA_MAX,
    Family,
    _binary_deviance,
    _binomial_logs,
    _check_log_offset,
    _check_squared_loss_range,
    _power_half_deviance_eta,
    _scale_units,
    _times,
)

__all__ = [
    "Gaussian",
    "Binomial",
    "Poisson",
    "CoxPH",
    "FAMILIES",
]


class Gaussian(Family):
    """Normal distribution, identity link: b(z) = z²/2."""

    name = "gaussian"
    profiled_log_likelihood = True
    statistics_on_workers = True
    link = "identity"
    quadratic = True
    estimate_dispersion = True
    dispersion_name = "sigma^2"
    _loss_kernel = _k.gaussian_identity_loss
    _grad_hess_kernel = _k.gaussian_identity_grad_hess

    def validate_y(self, y, *, proportions=False):
        super().validate_y(y)
        _check_squared_loss_range(y)

    def curvature_bound(self):
        return 1.0

    def curvature(self, eta):
        return np.ones_like(np.asarray(eta, dtype=float))

    def gradient_units(self, y, sample_weight):
        # the gradient s (η − y) / W: units of y, measured by its weighted sd
        w = sample_weight / float(sample_weight.sum())
        mean = float(w @ y)
        return _scale_units(float(np.sqrt(w @ (y - mean) ** 2)), mean)

    def null_intercept(self, y, sample_weight, offset=None):
        off = np.zeros_like(y) if offset is None else offset
        return float(np.sum(sample_weight * (y - off)) / np.sum(sample_weight))

    def null_dispersion(self, y, sample_weight, offset=None):
        r = y if offset is None else y - offset
        return float(np.average((r - np.average(r, weights=sample_weight)) ** 2,
                                weights=sample_weight))  # fmt: skip

    def mean(self, eta):
        return np.asarray(eta, dtype=float)

    def link_function(self, mu):
        return np.asarray(mu, dtype=float)

    def variance(self, mu):
        return np.ones_like(np.asarray(mu, dtype=float))

    def unit_deviance(self, y, mu):
        return (y - mu) ** 2

    def pearson_chi2(self, y, mu, sample_weight):
        return float(np.sum(sample_weight * (y - mu) ** 2))

    def log_likelihood(self, y, mu, var_weights=None, freq_weights=None, df=0.0):
        # statsmodels' convention: σ² at its MLE Σ f v r² / Σ f; an analytic weight v_i
        # makes row i's variance σ²/v_i, so rescaling v leaves the llf unchanged
        v = np.ones_like(y) if var_weights is None else var_weights
        f = np.ones_like(y) if freq_weights is None else freq_weights
        top = float(np.max(v)) if v.size else 1.0
        if top > 0:
            v = v / top  # the llf does not depend on it, and Σ v r² cannot overflow
        nobs = np.sum(f)
        scale = np.sum(f * v * (y - mu) ** 2) / nobs
        if scale <= 0:
            return np.inf  # a perfect fit: the likelihood is unbounded
        pos = (f > 0) & (v > 0)  # a zero-weight row carries no likelihood
        log_v = np.sum(f[pos] * np.log(v[pos]))
        return float(-nobs / 2 * (np.log(2 * np.pi * scale) + 1) + log_v / 2)


class Binomial(Family):
    """Bernoulli distribution, logit link: b(z) = log(1 + e^z)."""

    name = "binomial"
    statistics_on_workers = True
    link = "logit"
    binary = True
    _loss_kernel = _k.binomial_logit_loss
    _grad_hess_kernel = _k.binomial_logit_grad_hess
    _grad_hess_noloss_kernel = _k.binomial_logit_grad_hess_noloss

    def validate_y(self, y, *, proportions=False):
        super().validate_y(y)
        if proportions:
            if np.any((y < 0) | (y > 1)):
                bad = y[(y < 0) | (y > 1)][:3]
                raise ValueError(
                    "y must be 0 or 1 for family='binomial' (or a proportion in [0, 1] with "
                    f"the numbers of trials as sample_weight); found values such as {bad.tolist()}."
                )
            return
        if not np.all((y == 0) | (y == 1)):
            bad = y[(y != 0) & (y != 1)][:3]
            raise ValueError(
                f"y must be 0 or 1 for family='binomial'; found values such as {bad.tolist()}."
            )

    def curvature_bound(self):
        return 0.25

    def _clip_mean(self, mu):
        return min(max(mu, 1e-10), 1 - 1e-10)

    def mean(self, eta):
        return special.expit(eta)

    def link_function(self, mu):
        return special.logit(mu)

    def variance(self, mu):
        return mu * (1 - mu)

    def unit_deviance(self, y, mu):
        mu = np.clip(mu, 1e-300, 1 - 1e-16)
        return 2 * (special.xlogy(y, y / mu) + special.xlogy(1 - y, (1 - y) / (1 - mu)))

    def deviance_eta(self, y, eta, sample_weight):
        # 2 [y log(1 + e^{−η}) + (1 − y) log(1 + e^η) + y log y + (1 − y) log(1 − y)]:
        # no clipping of μ (which capped a row's deviance at 2·log(1e16) ≈ 73.7)
        log_mu, log_1mmu = _binomial_logs("Logit", np.asarray(eta, dtype=float))
        return _binary_deviance(y, log_mu, log_1mmu, sample_weight)

    def _unit_log_likelihood(self, y, mu):
        mu = np.clip(mu, 1e-300, 1 - 1e-16)
        ll = special.xlogy(y, mu) + special.xlogy(1 - y, 1 - mu)
        # statsmodels' constant for one trial, zero unless y is a proportion
        return ll - special.gammaln(y + 1) - special.gammaln(2 - y)


class Poisson(Family):
    """Poisson distribution, log link: b(z) = e^z."""

    name = "poisson"
    statistics_on_workers = True
    overdispersion_threshold = 1.5
    link = "log"
    _effect_labels = {"log": "log rate"}
    _ratio_labels = {"log": "rate ratio"}
    _loss_kernel = _k.poisson_log_loss
    _grad_hess_kernel = _k.poisson_log_grad_hess

    def validate_y(self, y, *, proportions=False):
        super().validate_y(y)
        if np.any(y < 0):
            bad = y[y < 0][:3]
            raise ValueError(
                f"y must be non-negative for family='poisson'; found values such as {bad.tolist()}."
            )

    def check_offset(self, offset):
        _check_log_offset(offset, self.label)

    def curvature(self, eta):
        return np.exp(eta)

    def gradient_units(self, y, sample_weight):
        # the gradient s (μ − y) / W: units of counts, measured by their weighted mean
        w = sample_weight / float(sample_weight.sum())
        return max(1.0, float(w @ y))

    def null_intercept(self, y, sample_weight, offset=None):
        # closed form: e^{β0} Σ s e^{off} = Σ s y
        sw = sample_weight
        if offset is None:
            return float(math.log(max(float(np.sum(sw * y)), 1e-300) / float(np.sum(sw))))
        # log Σ s e^{off} with the largest offset factored out: e^{off} of offsets below
        # -745 underflows to 0 (tiny exposures), which made the plain sum 0
        top = float(np.max(offset[sw > 0]))
        log_tot = top + math.log(float(np.sum(sw * np.exp(offset - top))))
        return float(math.log(max(float(np.sum(sw * y)), 1e-300)) - log_tot)

    def mean(self, eta):
        return np.exp(eta)

    def link_function(self, mu):
        return np.log(mu)

    def variance(self, mu):
        return np.asarray(mu, dtype=float)

    def unit_deviance(self, y, mu):
        return 2 * (special.xlogy(y, y / mu) - (y - mu))

    def deviance_eta(self, y, eta, sample_weight):
        return 2.0 * float(np.sum(_times(sample_weight, _power_half_deviance_eta(1.0, eta, y))))

    def _unit_log_likelihood(self, y, mu):
        return special.xlogy(y, mu) - mu - special.gammaln(y + 1)


class CoxPH(Family):
    """Cox proportional hazards: negative log partial likelihood, Breslow or Efron ties.

    ``family="cox"`` (Breslow's ties) or ``family=("cox", "efron")``.

    The response is the packed survival response of :func:`._cox.encode` (time rank,
    event, stratum in one float per row); the loss, gradient and diagonal majoriser of
    the Hessian come from risk-set cumulative sums after one sort (:mod:`._cox`). The
    "mean" is the relative risk e^η, so ``deviance(y, e^η, s)`` is the partial-likelihood
    deviance 2 (L(η) − Σ_g d_g log d_g) of glmnet's coxnet and ``log_likelihood`` the
    partial log-likelihood −L(η). The loss is invariant to a constant added to η: the
    model has no intercept (its null fit is η = offset, β0 = 0), and no dispersion.
    """

    name = "cox"
    link = "log"
    has_intercept = False
    survival = True
    row_separable = False
    ties = "breslow"
    _effect_labels = {"log": "log hazard ratio"}
    _ratio_labels = {"log": "hazard ratio"}

    def __init__(self, ties: str = "breslow") -> None:
        if ties not in ("breslow", "efron"):
            raise ValueError(f"ties must be 'breslow' or 'efron' for family='cox'; got {ties!r}.")
        self.ties = ties

    def _key(self) -> tuple:
        return (type(self).__name__, self.ties)

    @property
    def label(self) -> str:
        return "cox" if self.ties == "breslow" else "('cox', 'efron')"

    def to_dict(self):
        return {"name": self.name, "link": self.link, "ties": self.ties}

    def __repr__(self) -> str:
        return f"CoxPH(ties={self.ties!r})"

    def loss_sum(self, eta, y, sample_weight):
        return _cox.loss_grad_hess(eta, y, sample_weight, ties=self.ties)

    def grad_hess(self, eta, y, sample_weight, scale, grad_out, hess_out):
        return _cox.loss_grad_hess(eta, y, sample_weight, scale, grad_out, hess_out, self.ties)

    def grad_hess_only(self, eta, y, sample_weight, scale, grad_out, hess_out):
        _cox.loss_grad_hess(eta, y, sample_weight, scale, grad_out, hess_out, self.ties)

    def curvature(self, eta):
        return np.exp(np.minimum(eta, LOG_ETA_MAX))

    def validate_y(self, y, *, proportions=False):
        _cox.check_encoded(np.asarray(y, dtype=np.float64))

    def check_offset(self, offset):
        _check_log_offset(offset, self.label)

    def null_intercept(self, y, sample_weight, offset=None):
        # the partial likelihood does not see a constant in η
        return 0.0

    def null_dispersion(self, y, sample_weight, offset=None):
        return 1.0

    def mean(self, eta):
        return np.exp(np.minimum(eta, LOG_ETA_MAX))

    def link_function(self, mu):
        return np.log(mu)

    def variance(self, mu):
        return np.asarray(mu, dtype=float)

    def unit_deviance(self, y, mu):
        raise NotImplementedError(
            "the Cox partial likelihood is not a sum over rows: it has no per-row deviance."
        )

    def deviance(self, y, mu, sample_weight):
        # Breslow's saturated loss Σ d log d also for Efron's ties: a constant of the
        # data, so differences of deviances (CV, null vs fit) are Efron's exactly
        eta = np.log(np.maximum(mu, 1e-300))
        loss = _cox.loss_grad_hess(eta, y, sample_weight, ties=self.ties)
        return 2.0 * (loss - _cox.saturated_loss(y, sample_weight))

    def deviance_eta(self, y, eta, sample_weight, saturated=None):
        """2 (L(η) − Σ_g d_g log d_g) from η itself (L is invariant to a shift of η).

        Parameters
        ----------
        y, eta, sample_weight : ndarray of shape (n,)
            Packed response, linear predictor and weights.
        saturated : float, optional
            :func:`._cox.saturated_loss` of ``(y, sample_weight)`` when already known
            (a constant of the rows: cross-validation computes it once per fold).

        Returns
        -------
        float
        """
        if saturated is None:
            saturated = _cox.saturated_loss(y, sample_weight)
        eta = np.ascontiguousarray(eta, dtype=np.float64)
        return 2.0 * (_cox.loss_grad_hess(eta, y, sample_weight, ties=self.ties) - saturated)

    def pearson_chi2(self, y, mu, sample_weight):
        return float("nan")

    def dispersion(self, y, mu, sample_weight, df=0.0, nobs=None):
        return 1.0

    def log_likelihood(self, y, mu, var_weights=None, freq_weights=None, df=0.0, eta=None):
        # eta: the linear predictor itself when known (μ = e^η is clipped at η = 700)
        w = np.ones_like(y)
        if var_weights is not None:
            w = w * var_weights
        if freq_weights is not None:
            w = w * freq_weights
        if eta is None:
            eta = np.log(np.maximum(mu, 1e-300))
        return -_cox.loss_grad_hess(eta, y, w, ties=self.ties)

    def to_statsmodels(self):
        raise NotImplementedError(
            "family='cox' has no statsmodels GLM family; its unpenalised twin is "
            f"statsmodels' PHReg (ties={self.ties!r})."
        )

    def header_rows(self):
        return [("Model Family", "Cox PH"), ("Ties", self.ties.capitalize()),
                ("Link Function", "log")]  # fmt: skip


FAMILIES: dict[str, type[Family]] = {
    "gaussian": Gaussian,
    "binomial": Binomial,
    "poisson": Poisson,
    "cox": CoxPH,
}
