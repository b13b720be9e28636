"""GLM families: every family-specific fact the engine and the reports use (design.md §8).

A :class:`Family` answers, for a response ``y``, sample weights ``s`` and a linear
predictor η:

* **the engine** — the loss Σ_i s_i ℓ(y_i, η_i), its gradient and IRLS curvature per row
  (:meth:`~Family.grad_hess`; for a non-canonical link the curvature is the
  Fisher-scoring weight μ'(η)² / V(μ)), a bound on the curvature (FISTA's first step,
  the U of the theory λ), whether the loss is quadratic (one Newton step is exact), the
  units of the gradient that ``tol`` is measured in, and the null fit (intercept with
  offset and weights) that every solver starts from;
* **the data checks** — the valid range of y and of the offset, with their messages;
* **the reports** — mean and link, deviance, Pearson dispersion, log-likelihood, the
  statsmodels counterpart used by ``refit``, the summary's header rows, and whether y
  is binary (stratified CV folds, ``scoring="auc"``).

No code outside this module looks at a family's name: a new family is a new class here.

Two kinds of family exist:

* the built-in ``"gaussian"``, ``"binomial"`` and ``"poisson"`` (canonical links), whose
  loss is s [b(η) − y η] and whose hot loops run in ``_glm_kernels.pyx`` (the Cython
  fast path);
* :class:`StatsmodelsFamily`, built from a statsmodels family instance (e.g.
  ``sm.families.Tweedie(var_power=1.5, link=sm.families.links.Log())``): a NumPy path
  driven by the link and variance functions, whose loss is **half the unit deviance**
  d(y, μ)/2. For a canonical family the two losses differ by a function of y only
  (d/2 = b(η) − yη − [b(θ_y) − y θ_y]), so gradients, solutions and the meaning of λ
  are the same.

Convexity. Only family/link pairs whose loss is convex in η on all of R are accepted
(the solvers' optimality certificate and the theory both need it); see
:data:`CONVEX_LINKS`. With a log link, μ = e^η and the Tweedie half deviance is
−y e^{(1−p)η}/(1−p) + e^{(2−p)η}/(2−p) (p ∉ {1, 2}), whose second derivative
(p−1) y e^{(1−p)η} + (2−p) e^{(2−p)η} is ≥ 0 for every y ≥ 0 and η iff 1 ≤ p ≤ 2
(p = 1 Poisson: e^η − yη; p = 2 gamma: y e^{−η} + η). A binomial link whose inverse is a
CDF F with a log-concave density (logit, probit, cloglog, loglog) gives
−y log F − (1−y) log(1−F), convex since F and 1−F are log-concave; the Cauchy link is
not. Links whose inverse leaves the mean's domain (identity or sqrt for Poisson,
inverse power for gamma, log for binomial) define the loss on a half-line only and
are refused, as are the gaussian with a non-identity link and the inverse Gaussian
(its log-link loss is concave for large η).

Where to add.

* A distribution or link: a :class:`Family` subclass here (or a row of
  :data:`CONVEX_LINKS` and its closed forms in :class:`StatsmodelsFamily`), plus tests;
  nothing else in the package changes.
* A Cython fast path: kernels in ``_glm_kernels.pyx`` named
  ``{family}_{link}_{quantity}``; a built-in family sets ``_loss_kernel`` and
  ``_grad_hess_kernel``, a statsmodels family is registered in :data:`_FAST_PATHS`
  (gamma/Tweedie, issue 14) and must return the half deviance.
* Cox (design.md §8) is not a per-row loss: it would be a Family built with the rows'
  times (sorted once) whose ``loss_sum``/``grad_hess`` compute risk-set sums (Breslow
  ties) and the diagonal of the Hessian, with no intercept and no ``mean``.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
from scipy import special

from . import _cox
from ..kernels import _glm_kernels as _k

__all__ = [
    "Family",
    "Gaussian",
    "Binomial",
    "Poisson",
    "StatsmodelsFamily",
    "CoxPH",
    "get_family",
    "family_note",
    "family_from_text",
    "user_family",
    "FAMILY_ALIASES",
    "family_from_dict",
    "FAMILIES",
    "CONVEX_LINKS",
]

#: |η| beyond which a log link's mean overflows (e^709 ≈ 1.8e308): gradients and
#: curvatures are evaluated at η clipped to this (as the Cython Poisson kernel does)
_LOG_ETA_MAX = 700.0


def _bad_values(y: np.ndarray, bad: np.ndarray) -> list:
    return y[bad][:3].tolist()


#: Smallest gradient unit of a scale family (gaussian, Tweedie): 1e-150 keeps the
#: squared loss and the tolerance (1e-7 of it) normal floats.
TINY_UNITS = 1e-150


def _scale_units(spread: float, mean: float) -> float:
    """Gradient units of a scale family (gaussian, Tweedie) whose typical gradient is
    ``spread``: equivariant to the scale of y, so y·c is fitted to the same relative
    accuracy whatever c (the former floor at 1 made the default ``tol`` absolute for a
    response of scale below 1: a gaussian y of scale 1e-6 missed a jump, a Tweedie y
    of scale 1e-8 was 6e-4 off). Two floors: 1e-6·abs(mean), below which the
    rounding of η − y (y far from 0 with a tiny spread) exceeds the tolerance, capped
    at the former floor 1; and :data:`TINY_UNITS`. A response of spread ≥ 1 is unchanged.
    """
    if not np.isfinite(spread) or not np.isfinite(mean):
        return 1.0
    return max(spread, min(1.0, 1e-6 * abs(mean)), TINY_UNITS)


def _check_squared_loss_range(y: np.ndarray) -> None:
    """Refuse a y the squared-error loss cannot hold: |y| beyond ~1e150 overflows its
    square, a y no larger than :data:`TINY_UNITS` underflows it (the loss, its gradient
    units and the tolerance would be subnormal or 0, and a fit "converged" at θ = 0)."""
    top = float(np.max(np.abs(y))) if y.size else 0.0
    if top > 1e150:
        # the loss squares y: beyond ~1e154 it overflows to inf
        raise ValueError(
            f"y has values as large as {top:.3g} in magnitude; the squared-error loss "
            "overflows beyond ~1e150: rescale y (e.g. divide by its standard deviation)."
        )
    if 0.0 < top < TINY_UNITS:
        # its square underflows: the loss, its gradient units and the tolerance
        # would be subnormal or 0, and a fit "converged" at θ = 0 (100 % off)
        raise ValueError(
            f"y has values no larger than {top:.3g} in magnitude; the squared-error "
            f"loss underflows below ~{TINY_UNITS:.0e}: rescale y (e.g. divide by its "
            "standard deviation)."
        )


class Family:
    """A GLM family: loss, derivatives and statistics on the linear predictor η.

    Subclasses implement :meth:`mean`, :meth:`link_function`, :meth:`variance`,
    :meth:`unit_deviance`, :meth:`log_likelihood` and either the Cython kernels
    (``_loss_kernel``, ``_grad_hess_kernel``) or :meth:`loss_sum` and
    :meth:`grad_hess` in NumPy.

    Attributes
    ----------
    name : str
        Short lower-case name (``"gaussian"``, ``"tweedie"``...), for messages only.
    link : str
        Name of the link function.
    quadratic : bool
        The loss is quadratic in η (a Newton step is exact: no line search).
    binary : bool
        y is 0/1 (CV folds are stratified on it; ``scoring="auc"`` applies).
    estimate_dispersion : bool
        The dispersion φ is unknown and estimated (gaussian σ², gamma, Tweedie): the
        theory λ estimates it from a first fit and refits once.
    dispersion_name : str
        How reports name φ (``"sigma^2"`` for the gaussian).
    overdispersion_threshold : float or None
        A Pearson dispersion above this gets an over-dispersion note in the summary
        (poisson: 1.5, a rule of thumb; None: no note).
    effect_label : str
        Units of a term's effect on the link scale, for plot axes (``"log-odds"``,
        ``"log rate"``, ``"mean"``...).
    ratio_label : str or None
        What exp(effect) is on the response scale (``"odds ratio"``, ``"rate ratio"``);
        None when the link is not log or logit (no ratio scale).
    has_intercept : bool
        The model has an intercept (False for Cox: the loss ignores a constant in η).
    survival : bool
        y is a packed survival response (``family="cox"``, :mod:`._cox`).
    row_separable : bool
        The loss is a sum over rows (False for Cox: a held-out fold is scored by the
        deviance of all rows minus that of the training rows, glmnet's coxnet rule).
    """

    name: str = ""
    has_intercept: bool = True
    survival: bool = False
    row_separable: bool = True
    link: str = ""
    quadratic: bool = False
    binary: bool = False
    estimate_dispersion: bool = False
    dispersion_name: str = "phi"
    overdispersion_threshold: float | None = None
    _loss_kernel = None
    _grad_hess_kernel = None
    _grad_hess_noloss_kernel = None
    _effect_labels = {"identity": "mean", "logit": "log-odds", "log": "log mean"}
    _ratio_labels = {"logit": "odds ratio", "log": "ratio of means"}

    @property
    def effect_label(self) -> str:
        """Units of an effect on the link scale (plot axes)."""
        return self._effect_labels.get(self.link, f"{self.link} scale")

    @property
    def ratio_label(self) -> str | None:
        """What exp(effect) is (``"odds ratio"``...); None without a log or logit link."""
        return self._ratio_labels.get(self.link)

    # -- the engine --------------------------------------------------------------------
    def loss_sum(self, eta: np.ndarray, y: np.ndarray, sample_weight: np.ndarray) -> float:
        """Return the unnormalised loss Σ_i s_i ℓ(y_i, η_i).

        Parameters
        ----------
        eta, y, sample_weight : ndarray of shape (n,)
            Linear predictor, response and weights (float64, contiguous).

        Returns
        -------
        float
            The weighted loss sum (built-in families: Σ s [b(η) − yη]).
        """
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
        """Fill ``grad_out`` = scale·s·∂ℓ/∂η and ``hess_out`` = scale·s·(IRLS weight).

        Parameters
        ----------
        eta, y, sample_weight : ndarray of shape (n,)
            Linear predictor, response and weights.
        scale : float
            Factor applied to both outputs (the engine passes 1/W).
        grad_out, hess_out : ndarray of shape (n,)
            Filled in place.

        Returns
        -------
        float
            The unnormalised loss sum at η.
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
        """As :meth:`grad_hess` when the loss is already known (skips the logarithms).

        Parameters
        ----------
        eta, y, sample_weight, scale, grad_out, hess_out
            As in :meth:`grad_hess`.
        """
        kernel = type(self)._grad_hess_noloss_kernel or type(self)._grad_hess_kernel
        kernel(eta, y, sample_weight, scale, grad_out, hess_out)

    def curvature(self, eta: np.ndarray) -> np.ndarray:
        """IRLS weight per row at unit sample weight: b''(η), or μ'(η)²/V(μ).

        Parameters
        ----------
        eta : ndarray of shape (n,)
            Linear predictor.

        Returns
        -------
        ndarray of shape (n,)
        """
        mu = self.mean(eta)
        return self.variance(mu)

    def curvature_bound(self) -> float | None:
        """sup over η of :meth:`curvature`, or None when it is unbounded.

        Returns
        -------
        float or None
            The bound (gaussian 1, binomial-logit 1/4, gamma-log 1); callers without
            one use the largest curvature at the data.
        """
        return None

    def gradient_units(self, y: np.ndarray, sample_weight: np.ndarray) -> float:
        """Units of the loss gradient, by which the solvers multiply ``tol``.

        The gradient of a row is in units of y (gaussian, poisson) or of a power of y
        (Tweedie): a response in large units would otherwise need an absolute tolerance
        below the rounding of its own gradient. Scale families (gaussian, Tweedie) follow
        the scale of y both ways (:func:`_scale_units`), so y·c is fitted to the same
        relative accuracy; the others are at least 1.

        Parameters
        ----------
        y, sample_weight : ndarray of shape (n,)
            Response and weights.

        Returns
        -------
        float
        """
        return 1.0

    def null_intercept(
        self,
        y: np.ndarray,
        sample_weight: np.ndarray,
        offset: np.ndarray | None = None,
    ) -> float:
        """β0 of the intercept-only fit with offset and weights (the null model).

        Parameters
        ----------
        y, sample_weight : ndarray of shape (n,)
            Response and weights.
        offset : ndarray of shape (n,), optional
            Offset of the linear predictor.

        Returns
        -------
        float
            The minimiser of the weighted loss over a constant β0 (clamped where the
            data put it at ±∞, e.g. an all-zero Poisson response).
        """
        sw = np.asarray(sample_weight, dtype=np.float64)
        off = np.zeros_like(y) if offset is None else offset
        W = float(sw.sum())
        b0 = self._start_intercept(y, sw, off, W)
        if offset is None:
            # at a constant η the score Σ s (μ − y) μ'/V(μ) vanishes at μ = ȳ: g(ȳ) exactly
            return b0
        # Fisher scoring on the 1-D convex loss, halving the step until the loss drops
        # (one pass over the rows per trial: the loss comes with the derivatives)
        n = len(y)
        g_out, h_out = np.empty(n), np.empty(n)
        g_try, h_try = np.empty(n), np.empty(n)
        f = self.grad_hess(b0 + off, y, sw, 1.0, g_out, h_out)
        for _ in range(100):
            g, h = float(g_out.sum()), float(h_out.sum())
            if not (h > 0 and np.isfinite(g)):
                break
            step = g / h
            for _ in range(60):
                f_new = self.grad_hess(b0 - step + off, y, sw, 1.0, g_try, h_try)
                if np.isfinite(f_new) and f_new <= f + 1e-12 * abs(f):
                    break
                step *= 0.5
            else:
                break
            b0 -= step
            f = f_new
            g_out, g_try = g_try, g_out
            h_out, h_try = h_try, h_out
            if abs(step) < 1e-13 * max(1.0, abs(b0)):
                break
        return float(b0)

    def _start_intercept(self, y, sw, off, W) -> float:
        """g(clipped weighted mean of y) − weighted mean offset: the Newton start."""
        mu0 = self._clip_mean(float(np.sum(sw * y) / W))
        return float(self.link_function(np.array([mu0]))[0]) - float(np.sum(sw * off) / W)

    def _clip_mean(self, mu: float) -> float:
        return mu

    # -- the data checks -----------------------------------------------------------------
    def validate_y(self, y: np.ndarray, *, proportions: bool = False) -> None:
        """Raise ``ValueError`` naming ``y`` and the family if a value is out of range.

        Parameters
        ----------
        y : ndarray of shape (n,)
            Response.
        proportions : bool, default=False
            Let a binomial response be a share of successes in [0, 1] (with the numbers
            of trials as sample weights, as R's and statsmodels' GLMs allow); ``glm()``
            and the engine allow it, the estimators do not. Other families ignore it.
        """
        if not np.all(np.isfinite(y)):
            raise ValueError(f"y contains NaN or infinite values (family={self.label!r}).")

    def check_offset(self, offset: np.ndarray) -> None:
        """Raise ``ValueError`` naming ``offset`` if its values overflow the mean.

        Parameters
        ----------
        offset : ndarray of shape (n,)
            Offset of the linear predictor (finite).
        """

    # -- the reports ---------------------------------------------------------------------
    def mean(self, eta: np.ndarray) -> np.ndarray:
        """Inverse link: the mean response μ = g⁻¹(η).

        Parameters
        ----------
        eta : ndarray
            Linear predictor.

        Returns
        -------
        ndarray
        """
        raise NotImplementedError

    def link_function(self, mu: np.ndarray) -> np.ndarray:
        """The link g(μ).

        Parameters
        ----------
        mu : ndarray
            Mean.

        Returns
        -------
        ndarray
        """
        raise NotImplementedError

    def variance(self, mu: np.ndarray) -> np.ndarray:
        """Variance function V(μ) (the variance of y is φ V(μ)).

        Parameters
        ----------
        mu : ndarray
            Mean.

        Returns
        -------
        ndarray
        """
        raise NotImplementedError

    def unit_deviance(self, y: np.ndarray, mu: np.ndarray) -> np.ndarray:
        """Per-row deviance d(y, μ) = 2 [ℓ(y; y) − ℓ(μ; y)].

        Parameters
        ----------
        y, mu : ndarray of shape (n,)
            Response and mean.

        Returns
        -------
        ndarray of shape (n,)
        """
        raise NotImplementedError

    def deviance(self, y: np.ndarray, mu: np.ndarray, sample_weight: np.ndarray) -> float:
        """Weighted deviance Σ_i s_i d(y_i, μ_i).

        Parameters
        ----------
        y, mu, sample_weight : ndarray of shape (n,)
            Response, mean and weights.

        Returns
        -------
        float
        """
        return float(np.sum(sample_weight * self.unit_deviance(y, mu)))

    def deviance_eta(self, y: np.ndarray, eta: np.ndarray, sample_weight: np.ndarray) -> float:
        """Weighted deviance Σ_i s_i d(y_i, g⁻¹(η_i)) computed from the linear predictor.

        The held-out score of cross-validation. The built-in families evaluate it in a
        closed form of η, exact at any scale of η (no round trip through the mean,
        which rounds to 0 or 1 or overflows for large |η|); a family without one falls
        back to :meth:`deviance` at ``mean(eta)``.

        Parameters
        ----------
        y, eta, sample_weight : ndarray of shape (n,)
            Response, linear predictor (offset included) and weights.

        Returns
        -------
        float
        """
        return self.deviance(y, self.mean(eta), sample_weight)

    def pearson_chi2(self, y: np.ndarray, mu: np.ndarray, sample_weight: np.ndarray) -> float:
        """Pearson's statistic Σ_i s_i (y_i − μ_i)² / V(μ_i).

        Parameters
        ----------
        y, mu, sample_weight : ndarray of shape (n,)
            Response, mean and weights.

        Returns
        -------
        float
        """
        return float(np.sum(sample_weight * (y - mu) ** 2 / self.variance(mu)))

    def dispersion(
        self,
        y: np.ndarray,
        mu: np.ndarray,
        sample_weight: np.ndarray,
        df: float = 0.0,
        nobs: float | None = None,
    ) -> float:
        """Pearson estimate of φ: χ² / (W (n_eff − df) / n_eff), n_eff = W² / Σ s².

        With unit weights this is χ² / (n − df), statsmodels' ``scale``.

        Parameters
        ----------
        y, mu, sample_weight : ndarray of shape (n,)
            Response, mean and weights.
        df : float, default=0
            Degrees of freedom used by the fit.
        nobs : float, optional
            The number of observations n_eff (default Kish's W² / Σ s², for analytic
            weights; W for frequency weights gives χ² / (W − df)).

        Returns
        -------
        float
        """
        sw = sample_weight
        n_eff = float(sw.sum() ** 2 / np.sum(sw**2)) if nobs is None else float(nobs)
        chi2 = self.pearson_chi2(y, mu, sw)
        return chi2 / float(sw.sum()) * n_eff / max(n_eff - df, 1.0)

    def null_dispersion(
        self, y: np.ndarray, sample_weight: np.ndarray, offset: np.ndarray | None = None
    ) -> float:
        """Pearson χ² / W at the null model: an upper bound on φ (theory λ's first pass).

        Parameters
        ----------
        y, sample_weight : ndarray of shape (n,)
            Response and weights.
        offset : ndarray of shape (n,), optional
            Offset.

        Returns
        -------
        float
        """
        b0 = self.null_intercept(y, sample_weight, offset)
        eta = np.full(len(y), b0) if offset is None else b0 + offset
        chi2 = self.pearson_chi2(y, self.mean(eta), sample_weight)
        return chi2 / float(sample_weight.sum())

    def log_likelihood(
        self,
        y: np.ndarray,
        mu: np.ndarray,
        var_weights: np.ndarray | None = None,
        freq_weights: np.ndarray | None = None,
        df: float = 0.0,
    ) -> float:
        """Full log-likelihood (with normalising constants), as statsmodels' GLM reports it.

        Σ_i f_i ℓ(y_i; μ_i, φ / v_i) with frequency weights f (row counts) and analytic
        (variance) weights v, statsmodels' ``freq_weights`` and ``var_weights``; a
        family with an estimated dispersion takes φ at its maximum-likelihood value.

        Parameters
        ----------
        y, mu : ndarray of shape (n,)
            Response and mean.
        var_weights, freq_weights : ndarray of shape (n,), optional
            Analytic and frequency weights (ones when omitted).
        df : float, default=0
            Degrees of freedom of the fit. statsmodels' convention for the dispersion
            in the likelihood: RSS / Σ f for the gaussian, Pearson χ² / (Σ f − df) for
            other families with an estimated dispersion.

        Returns
        -------
        float
        """
        v = np.ones_like(y) if var_weights is None else var_weights
        f = np.ones_like(y) if freq_weights is None else freq_weights
        return float(np.sum(f * v * self._unit_log_likelihood(y, mu)))

    def _unit_log_likelihood(self, y: np.ndarray, mu: np.ndarray) -> np.ndarray:
        """ℓ(y_i; μ_i) of one unweighted row (families without a dispersion)."""
        raise NotImplementedError

    def to_statsmodels(self) -> Any:
        """The statsmodels family instance of the same distribution and link (for refit).

        Returns
        -------
        statsmodels.genmod.families.Family
        """
        import statsmodels.api as sm

        return getattr(sm.families, type(self).__name__)()

    @property
    def label(self) -> str:
        """Name in messages: ``name``, with the parameters of a parametrised family."""
        return self.name

    def header_rows(self) -> list[tuple[str, str]]:
        """Rows of the summary header: family, link and any parameter (Tweedie power).

        Returns
        -------
        list of (str, str)
        """
        return [("Model Family", type(self).__name__), ("Link Function", self.link)]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable description, rebuilt by :func:`family_from_dict`.

        Returns
        -------
        dict
            ``{"name": "poisson", "link": "log"}`` for a built-in family; a statsmodels
            family adds ``"statsmodels"`` (its class), ``"sm_link"`` and its parameters.
        """
        return {"name": self.name, "link": self.link}

    # -- identity: families compare equal by value and pickle by value --------------------
    def _key(self) -> tuple:
        return (type(self).__name__,)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Family) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"{type(self).__name__}(link={self.link!r})"


class Gaussian(Family):
    """Normal distribution, identity link: b(z) = z²/2."""

    name = "gaussian"
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
        return np.exp(np.minimum(eta, _LOG_ETA_MAX))

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
        return np.exp(np.minimum(eta, _LOG_ETA_MAX))

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


def _check_log_offset(offset: np.ndarray, label: str) -> None:
    top = float(np.max(offset)) if offset.size else 0.0
    if top > _LOG_ETA_MAX:
        raise ValueError(
            f"offset has values as large as {top:.4g}; with the log link of family "
            f"{label} the mean e^offset overflows beyond {_LOG_ETA_MAX:g}: an offset is "
            "on the scale of the linear predictor (pass log(exposure), not exposure)."
        )


FAMILIES: dict[str, type[Family]] = {
    "gaussian": Gaussian,
    "binomial": Binomial,
    "poisson": Poisson,
    "cox": CoxPH,
}


# --------------------------------------------------------------------------- statsmodels

#: family/link pairs (statsmodels class names) whose half deviance is convex in η on
#: all of R; Tweedie additionally needs 1 ≤ var_power ≤ 2 (module docstring)
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


def _fast_path(fam_name: str, link_name: str, power: float | None) -> tuple | None:
    """The Cython kernels of a log-link gamma or Tweedie (1 < p <= 2) family, else None.

    Their loss is the half deviance and their curvature the Fisher weight, as the NumPy
    path of :class:`StatsmodelsFamily` (tests/test_families_gamma_tweedie.py checks
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
    import statsmodels.api as sm

    kw = dict(params)
    return getattr(sm.families, name)(link=getattr(sm.families.links, link)(), **kw)


def _from_key(name: str, link: str, params: tuple) -> StatsmodelsFamily:
    return StatsmodelsFamily(_make_sm_family(name, link, params))


class StatsmodelsFamily(Family):
    """A statsmodels family instance driving a generic NumPy path.

    The loss is half the unit deviance d(y, μ)/2 with μ = g⁻¹(η); its gradient is
    (μ − y) μ'(η) / V(μ) and the curvature the Fisher-scoring weight μ'(η)² / V(μ)
    (the Hessian for a canonical link). Only convex family/link pairs are accepted
    (module docstring).

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
        self._eta_max = _LOG_ETA_MAX if link_name == "Log" else np.inf
        # closed forms in η for the log link: variance μ^p, or μ + αμ² (negative binomial)
        powers = {"Poisson": 1.0, "Gamma": 2.0, "Tweedie": self._params.get("var_power")}
        self._power = powers.get(fam_name) if link_name == "Log" else None
        self._alpha = self._params.get("alpha") if link_name == "Log" else None
        self._fast = _FAST_PATHS.get(self._key_) or _fast_path(fam_name, link_name, self._power)

    # pickling by value: the statsmodels objects are rebuilt from the key
    def __reduce__(self):
        return (_from_key, self._key_)

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
            return max(mu, 1e-10)
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
        return self.sm_family.link(np.asarray(mu, dtype=float))

    def variance(self, mu):
        return self.sm_family.variance(np.asarray(mu, dtype=float))

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


def _times(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a·b with 0·(±inf) = 0 (a weight of zero on an infinite log or ratio)."""
    return np.where(a == 0, 0.0, a * b)


def _binary_deviance(y, log_mu, log_1mmu, sample_weight) -> float:
    """Σ s d(y, μ) of a binary family from log μ and log(1 − μ) (0·log 0 = 0)."""
    with np.errstate(over="ignore", invalid="ignore"):
        d = -(_times(y, log_mu) + _times(1 - y, log_1mmu))
        d = d + special.xlogy(y, y) + special.xlogy(1 - y, 1 - y)
    return 2.0 * float(np.sum(_times(sample_weight, d)))


def _expm1_over(c: float, r: np.ndarray) -> np.ndarray:
    """(e^{c r} − 1)/c, and its limit r at c = 0."""
    return r if c == 0.0 else np.expm1(c * r) / c


def _power_half_deviance_eta(p: float, eta: np.ndarray, y: np.ndarray) -> np.ndarray:
    """d(y, e^η)/2 for the variance μ^p (p ≥ 1), exact at any scale of η.

    With r = η − log y (y > 0) it is y^{2−p} [E(2−p, r) − E(1−p, r)], E(c, r) =
    (e^{cr} − 1)/c (r at c = 0): p = 1 gives y (e^r − 1 − r), p = 2 gives e^{−r} + r − 1.
    Nothing cancels but the terms of order r, no e^η overflows before the deviance
    itself does (then +inf); at y = 0 it is e^{(2−p)η}/(2−p) (p < 2).
    """
    eta = np.asarray(eta, dtype=float)
    y = np.asarray(y, dtype=float)
    a, b = 1.0 - p, 2.0 - p
    pos = y > 0
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        r = eta - np.log(np.where(pos, y, 1.0))
        inner = _expm1_over(b, r) - _expm1_over(a, r)
        yb = y if b == 1.0 else np.where(pos, y, 1.0) ** b
        zero = np.exp(b * eta) / b if b > 0 else np.full_like(eta, np.inf)
        return np.where(pos, yb * inner, zero)


def _log_link_power_half_deviance(p: float, eta: np.ndarray, y: np.ndarray) -> np.ndarray:
    """d(y, e^η)/2 for the variance μ^p (Tweedie; p = 1 Poisson, p = 2 gamma).

    p = 1: e^η − yη + y log y − y; p = 2: y e^{−η} + η − 1 − log y; otherwise
    y^{2−p}/((1−p)(2−p)) − y e^{(1−p)η}/(1−p) + e^{(2−p)η}/(2−p).
    """
    if p == 1.0:
        return np.exp(eta) - y * eta + special.xlogy(y, y) - y
    if p == 2.0:
        return y * np.exp(-eta) + eta - 1.0 - np.log(y)
    a, b = 1.0 - p, 2.0 - p
    return y**b / (a * b) - _times(y, np.exp(a * eta)) / a + np.exp(b * eta) / b


def _binomial_logs(link: str, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """log μ and log(1 − μ) for the binomial links, without cancellation."""
    if link == "Logit":
        return -np.logaddexp(0.0, -z), -np.logaddexp(0.0, z)
    if link == "Probit":
        return special.log_ndtr(z), special.log_ndtr(-z)
    if link == "CLogLog":  # μ = 1 − exp(−e^z)
        ez = np.exp(z)
        return np.log(-np.expm1(-ez)), -ez
    ez = np.exp(-z)  # LogLog: μ = exp(−e^{−z})
    return -ez, np.log(-np.expm1(-ez))


def _binomial_dlogs(link: str, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(log μ)' and −(log(1 − μ))' for the binomial links (see _binomial_logs)."""
    if link == "Logit":
        return special.expit(-z), special.expit(z)
    if link == "Probit":
        log_pdf = -0.5 * z * z - 0.5 * math.log(2 * math.pi)
        return np.exp(log_pdf - special.log_ndtr(z)), np.exp(log_pdf - special.log_ndtr(-z))
    if link == "CLogLog":
        ez = np.exp(np.minimum(z, _LOG_ETA_MAX))
        return np.where(ez > 0, ez / np.expm1(ez), 1.0), ez
    ez = np.exp(np.minimum(-z, _LOG_ETA_MAX))  # LogLog
    return ez, np.where(ez > 0, ez / np.expm1(ez), 1.0)


def get_family(family: str | Family | Any) -> Family:
    """Return the :class:`Family` for a name, a Family or a statsmodels family instance.

    Parameters
    ----------
    family : str, tuple, Family or statsmodels family
        ``"gaussian"``, ``"binomial"``, ``"poisson"``; ``"gamma"`` and ``"tweedie"``
        (power 1.5) or ``("tweedie", p)`` with 1 < p < 2 have a log link and the
        Cython kernels; ``"cox"`` (Breslow ties) or ``("cox", "efron")``. A statsmodels instance
        (``sm.families.Gamma(sm.families.links.Log())``) gives a
        :class:`StatsmodelsFamily`.

    Returns
    -------
    Family

    Raises
    ------
    ValueError
        For an unknown name, or a statsmodels family/link pair that is not convex.
    """
    if isinstance(family, Family):
        return family
    if isinstance(family, tuple) and len(family) == 2 and family[0] == "cox":
        return CoxPH(family[1])
    named = _named_log_family(family)
    if named is not None:
        return named
    if isinstance(family, str):
        name = family.strip().lower()
        name = FAMILY_ALIASES.get(name, name)
        if name in FAMILIES:
            return FAMILIES[name]()
    if not isinstance(family, str) and _is_statsmodels_family(family):
        return StatsmodelsFamily(family)
    import difflib

    known = sorted(FAMILIES) + list(LOG_LINK_FAMILIES) + sorted(FAMILY_ALIASES)
    close = (
        difflib.get_close_matches(str(family).lower(), known, n=1)
        if isinstance(family, str)
        else []
    )
    hint = f" Did you mean {close[0]!r}?" if close else ""
    raise ValueError(
        f"family must be one of {sorted(FAMILIES) + list(LOG_LINK_FAMILIES)}, "
        f"('tweedie', power) (also R's and statsmodels' spellings "
        f"{sorted(FAMILY_ALIASES)}) or a statsmodels family instance "
        f"(e.g. sm.families.Gamma(sm.families.links.Log())); got {family!r}.{hint}"
    )


#: the named log-link families (issue 14): ``family="gamma"``, ``"tweedie"`` (power 1.5,
#: glum's default) or ``("tweedie", p)`` with 1 < p < 2
LOG_LINK_FAMILIES = ("gamma", "tweedie")
TWEEDIE_DEFAULT_POWER = 1.5


def _named_log_family(family: Any) -> StatsmodelsFamily | None:
    """``"gamma"``, ``"tweedie"`` or ``("tweedie", p)`` as a log-link family, else None."""
    power = None
    if isinstance(family, tuple) and len(family) == 2 and isinstance(family[0], str):
        name, power = family[0].strip().lower(), family[1]
        if name != "tweedie":
            raise ValueError(
                f"family=(name, power) is for the Tweedie family only, e.g. "
                f"('tweedie', 1.5); got {family!r}."
            )
    elif isinstance(family, str) and family.strip().lower() in LOG_LINK_FAMILIES:
        name = family.strip().lower()
    else:
        return None
    import statsmodels.api as sm

    log = sm.families.links.Log()
    if name == "gamma":
        return StatsmodelsFamily(sm.families.Gamma(link=log))
    if power is None:
        power = TWEEDIE_DEFAULT_POWER
    try:
        p = float(power)
    except (TypeError, ValueError):
        p = math.nan
    if not 1.0 < p < 2.0:
        raise ValueError(
            f"family=('tweedie', power): power must be a number in (1, 2) (1 is the "
            f"Poisson, 2 the gamma: use family='poisson' or 'gamma'); got {power!r}."
        )
    return StatsmodelsFamily(sm.families.Tweedie(var_power=p, link=log))


#: Other spellings of the built-in families (R, statsmodels, glum, scikit-learn).
FAMILY_ALIASES = {
    "logistic": "binomial",
    "logit": "binomial",
    "bernoulli": "binomial",
    "normal": "gaussian",
    "linear": "gaussian",
    "log-linear": "poisson",
}


def _canonical_builtin(sm_family: Any) -> str | None:
    """The built-in family equal to a statsmodels instance (canonical link), else None."""
    name, link, params = _sm_key(sm_family)
    pairs = {("Gaussian", "Identity"): "gaussian", ("Binomial", "Logit"): "binomial",
             ("Poisson", "Log"): "poisson"}  # fmt: skip
    return None if params else pairs.get((name, link))


def user_family(family: Any) -> tuple[Family, str | None]:
    """The family of a user's ``family=`` argument and how it was read.

    As :func:`get_family`, except that a statsmodels family with its canonical link and
    no parameter (``sm.families.Binomial()``, ``Poisson()``, ``Gaussian()``) becomes the
    built-in family: the same model, fitted with the Cython kernels (its loss differs
    from the statsmodels twin's half deviance by a constant only).

    Parameters
    ----------
    family : str, Family or statsmodels family
        The argument.

    Returns
    -------
    family : Family
    note : str or None
        See :func:`family_note`.
    """
    if not isinstance(family, (str, Family)) and _is_statsmodels_family(family):
        target = _canonical_builtin(family)
        if target:
            return FAMILIES[target](), family_note(family)
    return get_family(family), family_note(family)


def family_from_text(text: str) -> Any:
    """The ``family=`` argument a command-line ``--family`` names.

    Parameters
    ----------
    text : str
        A built-in name or alias (``"binomial"``, ``"logit"``, ``"cox"``...),
        ``"cox:efron"`` / ``"cox:breslow"`` (the Cox model with these ties), ``"gamma"``,
        ``"tweedie"`` (P = 1.5, glm()'s default) or ``"tweedie:P"`` with 1 <= P <= 2
        (statsmodels' families with the log link: their canonical links are not convex).

    Returns
    -------
    str or statsmodels family
        What :func:`glm` takes.

    Raises
    ------
    ValueError
        For any other text, with the closest known name.
    """
    name = text.strip().lower()
    if name in FAMILIES or name in FAMILY_ALIASES:
        return text
    if name.startswith("cox:"):
        ties = name.split(":", 1)[1].strip()
        if ties not in ("breslow", "efron"):
            raise ValueError(f"cox:TIES needs TIES = breslow or efron; got {text!r}")
        return ("cox", ties)
    if name == "tweedie":
        name = "tweedie:1.5"  # glm(family="tweedie")'s variance power
    if name == "gamma" or name.startswith("tweedie:"):
        import statsmodels.api as sm

        log = sm.families.links.Log()
        if name == "gamma":
            return sm.families.Gamma(log)
        try:
            power = float(name.split(":", 1)[1])
        except ValueError:
            power = -1.0
        if not 1.0 <= power <= 2.0:
            raise ValueError(
                f"tweedie:P needs a variance power 1 <= P <= 2 (log link); got {text!r}"
            )
        return sm.families.Tweedie(var_power=power, link=log)
    import difflib

    known = sorted(FAMILIES) + sorted(FAMILY_ALIASES) + ["gamma", "tweedie", "cox:efron"]
    close = difflib.get_close_matches(name, known, n=1)
    raise ValueError(
        f"must be one of {', '.join(sorted(FAMILIES))}, cox:efron, gamma, tweedie or "
        f"tweedie:P (also {', '.join(sorted(FAMILY_ALIASES))}); got {text!r}"
        + (f". Did you mean {close[0]!r}?" if close else "")
    )


def family_note(family: Any) -> str | None:
    """How a family given under another spelling was read, for the summary (else None).

    Parameters
    ----------
    family : str, Family or statsmodels family
        The ``family`` argument as the user gave it.

    Returns
    -------
    str or None
        E.g. ``family='logit' read as 'binomial' (logit link).``; None when the
        argument is a built-in name, a Family or a statsmodels family kept as it is.
    """
    if isinstance(family, str):
        name = family.strip().lower()
        if name in FAMILY_ALIASES:
            target = FAMILY_ALIASES[name]
            link = FAMILIES[target]().link
            return f"family={family!r} read as {target!r} ({link} link)."
        return None
    if not isinstance(family, Family) and _is_statsmodels_family(family):
        target = _canonical_builtin(family)
        if target:
            return (
                f"family={type(family).__name__}() with its canonical link read as "
                f"{target!r} (the same model, fitted with the built-in kernels)."
            )
    return None


def family_from_dict(spec: dict[str, Any]) -> Family:
    """Rebuild a family from :meth:`Family.to_dict` (e.g. a model read back from JSON).

    Parameters
    ----------
    spec : dict
        The output of :meth:`Family.to_dict`.

    Returns
    -------
    Family
        A family equal to the one described.
    """
    if "ties" in spec:  # family="cox"
        return CoxPH(spec["ties"])
    if "statsmodels" not in spec:
        return get_family(spec["name"])
    params = tuple(
        (k, float(spec[k])) for k in ("var_power", "alpha") if k in spec
    )  # the order of _sm_key
    return _from_key(spec["statsmodels"], spec["sm_link"], params)


def _is_statsmodels_family(obj: Any) -> bool:
    """Whether obj is a statsmodels family, without importing statsmodels for a string."""
    module = type(obj).__module__ or ""
    if not module.startswith("statsmodels"):
        return False
    from statsmodels.genmod.families import Family as SMFamily

    return isinstance(obj, SMFamily)
