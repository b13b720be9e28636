"""Any statsmodels family with a convex link: :class:`StatsmodelsFamily`, a NumPy path
driven by the link and variance functions whose loss is half the unit deviance, the
table of accepted family/link pairs (:data:`CONVEX_LINKS`, see ``_families`` for why
they are convex) and the Cython fast paths of gamma and Tweedie (:data:`_FAST_PATHS`).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
from scipy import special

from ..kernels import _glm_kernels as _k
from ._builtin import FAMILIES
from ._family import (
    LOG_ETA_MAX,
    Family,
    _bad_values,
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

__all__ = [
    "StatsmodelsFamily",
    "CONVEX_LINKS",
]


#: family/link pairs (statsmodels class names) whose half deviance is convex in η on
#: all of R; Tweedie additionally needs 1 ≤ var_power ≤ 2 (``_families``' module docstring)
CONVEX_LINKS: dict[str, tuple[str, ...]] = {
    "Gaussian": ("Identity",),
    "Binomial": ("Logit", "Probit", "CLogLog", "LogLog"),
    "Poisson": ("Log",),
    "Gamma": ("Log",),
    "Tweedie": ("Log",),
    "NegativeBinomial": ("Log",),
    "InverseGaussian": (),
}

#: Cython fast paths for statsmodels families, keyed by :func:`_sm_key` (family class,
#: link class, parameters), e.g. ``("Gamma", "Log", ())``: a pair ``(loss, grad_hess)``
#: of kernels with the signatures of ``_glm_kernels`` whose loss is the **half
#: deviance** Σ s d/2 (not b(η) − yη) and whose curvature is the Fisher weight, so that
#: they agree with the NumPy path (issue 14 adds gamma and Tweedie here)
_FAST_PATHS: dict[tuple, tuple] = {}
_FLOAT_EPS = float(np.finfo(np.float64).eps)  # statsmodels' clip of a mean at 0


def _fast_path(fam_name: str, link_name: str, power: float | None) -> tuple | None:
    """The Cython kernels of a log-link gamma or Tweedie (1 < p <= 2) family, else None.

    Their loss is the half deviance and their curvature the Fisher weight, as the NumPy
    path of :class:`StatsmodelsFamily` (tests/families/test_statsmodels.py checks
    the two agree to rounding).
    """
    if link_name != "Log" or fam_name not in ("Gamma", "Tweedie") or power is None:
        return None
    if power == 2.0:
        return _k.gamma_log_loss, _k.gamma_log_grad_hess
    if 1.0 < power < 2.0:
        return (
            functools.partial(_k.tweedie_log_loss, power=power),
            functools.partial(_k.tweedie_log_grad_hess, power=power),
        )
    return None


_LINK_NAMES = {
    "Identity": "identity", "Logit": "logit", "Probit": "probit", "CLogLog": "cloglog",
    "LogLog": "loglog", "Log": "log", "Cauchy": "cauchy", "InversePower": "inverse_power",
    "InverseSquared": "inverse_squared", "Sqrt": "sqrt", "Power": "power",
    "NegativeBinomial": "nbinom", "LogC": "logc",
}  # fmt: skip


def _sm_key(fam: Any) -> tuple:
    """(family class, link class, parameters) of a statsmodels family instance."""
    name = type(fam).__name__
    link = type(fam.link).__name__
    params: tuple = ()
    if name == "Tweedie":
        params = (("var_power", float(fam.var_power)),)
    elif name == "NegativeBinomial":
        params = (("alpha", float(fam.alpha)),)
    return name, link, params


def _make_sm_family(name: str, link: str, params: tuple) -> Any:
    from statsmodels.genmod import families  # not statsmodels.api: its graphics, tsa

    kw = dict(params)
    return getattr(families, name)(link=getattr(families.links, link)(), **kw)


def from_key(name: str, link: str, params: tuple) -> StatsmodelsFamily:
    return StatsmodelsFamily(_make_sm_family(name, link, params))


class StatsmodelsFamily(Family):
    """A statsmodels family instance driving a generic NumPy path.

    The loss is half the unit deviance d(y, μ)/2 with μ = g⁻¹(η); its gradient is
    (μ − y) μ'(η) / V(μ) and the curvature the Fisher-scoring weight μ'(η)² / V(μ)
    (the Hessian for a canonical link). Only convex family/link pairs are accepted
    (``_families``' module docstring).

    Parameters
    ----------
    sm_family : statsmodels.genmod.families.Family
        E.g. ``sm.families.Gamma(sm.families.links.Log())``.

    Raises
    ------
    ValueError
        For a family/link pair whose loss is not convex in η on all of R, or a family
        statsmodels class this module does not know.
    """

    def __init__(self, sm_family: Any) -> None:
        fam_name, link_name, params = _sm_key(sm_family)
        if fam_name not in CONVEX_LINKS:
            raise ValueError(
                f"family {fam_name} (statsmodels) is not supported; use one of "
                f"{sorted(CONVEX_LINKS)} or {sorted(FAMILIES)}."
            )
        what = f"{fam_name} with link {link_name}"
        if fam_name == "Tweedie":
            p = dict(params)["var_power"]
            what = f"Tweedie(var_power={p:g}) with link {link_name}"
            if link_name == "Log" and not 1.0 <= p <= 2.0:
                raise ValueError(
                    f"family {what}: the half deviance is not convex in η (a log-link "
                    "Tweedie needs 1 <= var_power <= 2); the solvers need a convex loss."
                )
        if fam_name == "NegativeBinomial" and not dict(params)["alpha"] > 0:
            raise ValueError(f"family {what}: alpha must be positive.")
        if link_name not in CONVEX_LINKS[fam_name]:
            ok = CONVEX_LINKS[fam_name]
            hint = f"use link {' or '.join(ok)}" if ok else "no link of this family is"
            raise ValueError(
                f"family {what}: the loss (half the deviance) is not convex in η on all of "
                f"R, which the solvers need; {hint}{' convex' if not ok else ''}."
            )
        self._key_ = (fam_name, link_name, params)
        self.sm_family = sm_family
        self.name = fam_name.lower()
        self.link = _LINK_NAMES.get(link_name, link_name.lower())
        self._params = dict(params)
        self.quadratic = fam_name == "Gaussian"
        self.binary = fam_name == "Binomial"
        self.estimate_dispersion = fam_name in ("Gaussian", "Gamma", "Tweedie")
        self.dispersion_name = "sigma^2" if self.quadratic else "phi"
        self._eta_max = LOG_ETA_MAX if link_name == "Log" else np.inf
        # closed forms in η for the log link: variance μ^p, or μ + αμ² (negative binomial)
        powers = {"Poisson": 1.0, "Gamma": 2.0, "Tweedie": self._params.get("var_power")}
        self._power = powers.get(fam_name) if link_name == "Log" else None
        self._alpha = self._params.get("alpha") if link_name == "Log" else None
        self._fast = _FAST_PATHS.get(self._key_) or _fast_path(fam_name, link_name, self._power)

    # pickling by value: the statsmodels objects are rebuilt from the key
    def __reduce__(self):
        return (from_key, self._key_)

    def _key(self) -> tuple:
        return ("statsmodels",) + self._key_

    @property
    def label(self) -> str:
        fam_name, _, params = self._key_
        if params:
            inner = ", ".join(f"{k}={v:g}" for k, v in params)
            return f"{fam_name}({inner})"
        return fam_name

    def header_rows(self):
        rows = [("Model Family", self._key_[0]), ("Link Function", self.link)]
        if "var_power" in self._params:
            rows.append(("Variance power", f"{self._params['var_power']:g}"))
        if "alpha" in self._params:
            rows.append(("NB alpha", f"{self._params['alpha']:g}"))
        return rows

    def __repr__(self) -> str:
        return f"StatsmodelsFamily({self.label}, link={self.link!r})"

    def to_statsmodels(self):
        return _make_sm_family(*self._key_)

    def to_dict(self):
        fam_name, link_name, params = self._key_
        out: dict[str, Any] = {"name": self.name, "link": self.link}
        out.update(statsmodels=fam_name, sm_link=link_name, **dict(params))
        return out

    # -- the engine --------------------------------------------------------------------
    def _half_deviance(self, eta, y, sw) -> np.ndarray:
        """Per-row s d(y, μ)/2, in a closed form of η where one is known (no NaN in
        the tails: +inf where the loss is infinite, the exact value where μ underflows).
        """
        with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
            if self.binary:
                # −y log μ − (1−y) log(1−μ) + the same at μ = y, with logs in closed form
                log_mu, log_1mmu = _binomial_logs(self._key_[1], eta)
                d = -(_times(y, log_mu) + _times(1 - y, log_1mmu))
                d = d + special.xlogy(y, y) + special.xlogy(1 - y, 1 - y)
            elif self._power is not None:
                d = _log_link_power_half_deviance(self._power, eta, y)
            elif self._alpha is not None:
                # negative binomial: y log(y/μ) − (y + 1/α) log((1 + αy)/(1 + αμ))
                a = self._alpha
                d = (special.xlogy(y, y) - y * eta
                     - (y + 1 / a) * (np.log1p(a * y) - np.logaddexp(0.0, math.log(a) + eta))
                     )  # fmt: skip
            else:
                # the generic form: statsmodels' unit deviance at μ = g⁻¹(η)
                mu = self.sm_family.link.inverse(eta)
                d = 0.5 * self.sm_family._resid_dev(y, mu)
        return sw * np.where(sw > 0, d, 0.0)

    def loss_sum(self, eta, y, sample_weight):
        if self._fast is not None:
            return float(self._fast[0](eta, y, sample_weight))
        total = float(np.sum(self._half_deviance(eta, y, sample_weight)))
        return total if not np.isnan(total) else np.inf

    def _derivatives(self, eta, y):
        """(∂ℓ/∂η, Fisher weight) per row at unit weight."""
        e = np.clip(eta, -self._eta_max, self._eta_max)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
            if self.binary:
                # a = (log μ)' = μ'/μ and b = −(log(1−μ))' = μ'/(1−μ): the gradient
                # −y a + (1−y) b = (μ−y) μ'/V(μ) and the weight a b = μ'²/V(μ), stable
                # in both tails (μ' and V underflow together)
                a, b = _binomial_dlogs(self._key_[1], e)
                return _times(1 - y, b) - _times(y, a), a * b
            if self._power is not None:
                # log link, V = μ^p: μ'/V = μ^{1−p}; gradient μ^{2−p} − y μ^{1−p}
                p = self._power
                w = np.exp((2.0 - p) * e)
                return w - _times(y, np.exp((1.0 - p) * e)), w
            if self._alpha is not None:
                # log link, V = μ + αμ²: μ'/V = 1/(1 + αμ)
                mu = np.exp(e)
                ratio = 1.0 / (1.0 + self._alpha * mu)
                return (mu - y) * ratio, mu * ratio
            # the generic form, from statsmodels' link and variance functions
            link, var = self.sm_family.link, self.sm_family.variance
            mu = link.inverse(e)
            dmu = link.inverse_deriv(e)
            ratio = dmu / var(mu)
            return (mu - y) * ratio, dmu * ratio

    def grad_hess(self, eta, y, sample_weight, scale, grad_out, hess_out):
        if self._fast is not None:
            return float(self._fast[1](eta, y, sample_weight, scale, grad_out, hess_out))
        g, h = self._derivatives(eta, y)
        s = scale * sample_weight
        np.multiply(s, np.where(s > 0, g, 0.0), out=grad_out)
        np.multiply(s, np.where(s > 0, h, 0.0), out=hess_out)
        return self.loss_sum(eta, y, sample_weight)

    def grad_hess_only(self, eta, y, sample_weight, scale, grad_out, hess_out):
        if self._fast is not None:
            self._fast[1](eta, y, sample_weight, scale, grad_out, hess_out)
            return
        g, h = self._derivatives(eta, y)
        s = scale * sample_weight
        np.multiply(s, np.where(s > 0, g, 0.0), out=grad_out)
        np.multiply(s, np.where(s > 0, h, 0.0), out=hess_out)

    def curvature(self, eta):
        return self._derivatives(np.asarray(eta, dtype=float), 0.0)[1]

    def curvature_bound(self):
        fam_name, link_name, _ = self._key_
        if fam_name == "Gaussian":
            return 1.0
        if (fam_name, link_name) == ("Binomial", "Logit"):
            return 0.25
        if (fam_name, link_name) == ("Gamma", "Log"):
            return 1.0  # μ² / μ²
        if fam_name == "NegativeBinomial":
            return 1.0 / self._params["alpha"]  # μ / (1 + αμ) < 1/α
        if fam_name == "Tweedie" and self._params["var_power"] == 2.0:
            return 1.0
        return None

    def gradient_units(self, y, sample_weight):
        # the gradient (μ − y) μ'(η)/V(μ) at the mean of y, with y's spread (sd for the
        # gaussian, else its mean) for μ − y: Poisson ȳ, gamma 1, Tweedie ȳ^{2−p}
        w = sample_weight / float(sample_weight.sum())
        ybar = float(w @ y)
        if self.quadratic:
            return _scale_units(float(np.sqrt(w @ (y - ybar) ** 2)), ybar)
        mu = self._clip_mean(ybar)
        eta = self.link_function(np.array([mu]))
        g, _ = self._derivatives(eta, np.zeros(1))
        unit = abs(float(g[0]))  # μ μ'(η)/V(μ)
        if not np.isfinite(unit):
            return 1.0
        if self._key_[0] == "Tweedie":  # a scale family: y·c has gradients ·c^{2−p}
            return _scale_units(unit, 0.0)
        return max(1.0, unit)

    def _clip_mean(self, mu):
        if self.binary:
            return min(max(mu, 1e-10), 1 - 1e-10)
        if self.link in ("log",):
            # only a mean of 0 is moved (to 1e-10): a positive mean of any scale is
            # kept, else a Tweedie y of scale 1e-50 got the units and the start of
            # ȳ = 1e-10 and "converged" at the null fit (100 % off)
            return mu if mu > 0 else 1e-10
        return mu

    # -- the data checks -----------------------------------------------------------------
    def validate_y(self, y, *, proportions=False):
        super().validate_y(y)
        fam_name = self._key_[0]
        if fam_name == "Binomial":
            bad = (y < 0) | (y > 1)
            need = "in [0, 1] (a 0/1 outcome or a proportion)"
        elif fam_name == "Gamma" or (fam_name == "Tweedie" and self._params["var_power"] >= 2):
            bad = y <= 0
            need = "positive"
        elif fam_name == "Gaussian":
            if self.quadratic:
                _check_squared_loss_range(y)
            return
        else:
            bad = y < 0
            need = "non-negative"
        if np.any(bad):
            raise ValueError(
                f"y must be {need} for family {self.label}; found values such as "
                f"{_bad_values(y, bad)}."
            )

    def check_offset(self, offset):
        if self.link == "log":
            _check_log_offset(offset, self.label)

    # -- the reports ---------------------------------------------------------------------
    def mean(self, eta):
        with np.errstate(over="ignore"):
            return self.sm_family.link.inverse(np.asarray(eta, dtype=float))

    def link_function(self, mu):
        mu = np.asarray(mu, dtype=float)
        if self._key_[1] == "Log":
            # statsmodels' Log link clips μ to machine epsilon (log 2.2e-16 = −36): a
            # mean of scale 1e-50 would get the η of 2.2e-16; only μ ≤ 0 is clipped here
            return np.log(np.where(mu > 0, mu, _FLOAT_EPS))
        return self.sm_family.link(mu)

    def variance(self, mu):
        return self.sm_family.variance(np.asarray(mu, dtype=float))

    def pearson_chi2(self, y, mu, sample_weight):
        if self._power is None:
            return super().pearson_chi2(y, mu, sample_weight)
        # V = μ^p underflows where μ does not (μ = 1e-300, p = 1.5: 1e-450 → 0, and a
        # Tweedie y of that scale got φ̂ = inf): the Pearson residual as (y − μ) μ^{−p/2}
        with np.errstate(divide="ignore", over="ignore"):
            r = (y - mu) * np.exp(-0.5 * self._power * np.log(mu))
        return float(np.sum(sample_weight * r * r))

    def unit_deviance(self, y, mu):
        return self.sm_family._resid_dev(y, mu)

    def deviance_eta(self, y, eta, sample_weight):
        eta = np.asarray(eta, dtype=float)
        if self.binary:
            log_mu, log_1mmu = _binomial_logs(self._key_[1], eta)
            return _binary_deviance(y, log_mu, log_1mmu, sample_weight)
        if self._power is not None:
            d = _power_half_deviance_eta(self._power, eta, y)
            return 2.0 * float(np.sum(_times(sample_weight, d)))
        # negative binomial's closed form, or statsmodels' deviance at g⁻¹(η)
        return 2.0 * float(np.sum(self._half_deviance(eta, y, sample_weight)))

    def log_likelihood(self, y, mu, var_weights=None, freq_weights=None, df=0.0):
        v = np.ones_like(y) if var_weights is None else var_weights
        f = np.ones_like(y) if freq_weights is None else freq_weights
        scale = 1.0
        if self.quadratic:  # the gaussian's concentrated likelihood: σ̂² = Σ f v r² / Σ f
            scale = self.deviance(y, mu, f * v) / float(f.sum())
        elif self.estimate_dispersion:  # statsmodels' scale: Pearson χ² / residual df
            scale = self.pearson_chi2(y, mu, f * v) / max(float(f.sum()) - df, 1.0)
        if not scale > 0:
            return np.inf  # a perfect fit: the likelihood is unbounded
        return float(self.sm_family.loglike(y, mu, var_weights=v, freq_weights=f, scale=scale))
