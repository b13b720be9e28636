"""The :class:`Family` base class: what every GLM family answers (loss, gradient and
curvature per row, bounds, data checks, null fit, deviance, dispersion, reports), with
the generic implementations, and the closed forms (deviances in η, the binomial links'
log-probabilities) that the built-in and the statsmodels families share; see
``_families`` for the families and how one is added.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import special

__all__ = [
    "Family",
]


#: |η| beyond which a log link's mean overflows (e^709 ≈ 1.8e308): gradients and
#: curvatures are evaluated at η clipped to this (as the Cython Poisson kernel does)
LOG_ETA_MAX = 700.0


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
    profiled_log_likelihood : bool
        The log-likelihood profiles out the scale (gaussian: σ² = RSS/n), so it is not a
        sum over rows; a distributed backend reduces the residual sums instead.
    statistics_on_workers : bool
        The results' statistics of a model whose rows stay on Dask workers
        (``glm(..., collect=False)``, ``distributed/_dask_stats``) are implemented for
        this family.
    """

    name: str = ""
    has_intercept: bool = True
    survival: bool = False
    row_separable: bool = True
    profiled_log_likelihood: bool = False
    statistics_on_workers: bool = False
    link: str = ""
    quadratic: bool = False
    binary: bool = False
    estimate_dispersion: bool = False
    dispersion_name: str = "phi"
    overdispersion_threshold: float | None = None
    #: the name of a family parameter still to be estimated alternately with β
    #: (``"theta"`` of ``family="nb"``), else None; such a family also has
    #: ``fit_parameter(y, mu, weights, start)`` and ``with_parameter(value, se)``
    estimated_parameter: str | None = None
    #: parameters of the family counted by AIC and BIC (1 for an estimated NB θ)
    extra_df: int = 0
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
        which rounds to 0 or 1 or overflows for a large absolute η); a family without one falls
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
        # the Pearson residual squared (statsmodels' form), not (y − μ)² / V: the
        # square of y − μ underflows for a Tweedie y of scale 1e-200 (then φ̂ = 0 and
        # lam="theory" was 0), its ratio to √V does not
        r = (y - mu) / np.sqrt(self.variance(mu))
        return float(np.sum(sample_weight * r * r))

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
        # the families module alone, not statsmodels.api (which imports its graphics
        # and time-series packages: 0.7 s of every CLI predict --interval)
        from statsmodels.genmod import families

        return getattr(families, type(self).__name__)()

    def parameter_columns(self) -> dict[str, float]:
        """glance()'s columns for the family's own parameters (``theta``, ``theta_se``
        of the negative binomial); none by default.

        Returns
        -------
        dict
        """
        return {}

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


def _check_log_offset(offset: np.ndarray, label: str) -> None:
    top = float(np.max(offset)) if offset.size else 0.0
    if top > LOG_ETA_MAX:
        raise ValueError(
            f"offset has values as large as {top:.4g}; with the log link of family "
            f"{label} the mean e^offset overflows beyond {LOG_ETA_MAX:g}: an offset is "
            "on the scale of the linear predictor (pass log(exposure), not exposure)."
        )


def _times(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a·b with 0·(±inf) = 0 (a weight of zero on an infinite log or ratio).

    The product is formed only where a ≠ 0, so a zero row never evaluates 0·inf
    (no 'invalid value' warning outside the caller's np.errstate).
    """
    a, b = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    return np.multiply(a, b, out=np.zeros(a.shape), where=a != 0)


def _times_into(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> np.ndarray:
    """:func:`_times` written into ``out`` (which may be ``b``): the same values.

    As there, the product is formed only where a ≠ 0 (no 0·inf, so no 'invalid value'
    warning even outside an np.errstate); the rows where a = 0 are then set to 0.
    """
    zero = a == 0
    np.multiply(a, b, out=out, where=~zero)
    out[zero] = 0.0
    return out


def _binary_deviance(y, log_mu, log_1mmu, sample_weight) -> float:
    """Σ s d(y, μ) of a binary family from log μ and log(1 − μ) (0·log 0 = 0).

    ``log_mu`` and ``log_1mmu`` (the caller's fresh arrays) are overwritten: the sums
    are built in their buffers (two row vectors fewer at a 1e6-row CV's end), with the
    operations and their order of ``-(y·log μ + (1 − y)·log(1 − μ)) + xlogy(y, y) +
    xlogy(1 − y, 1 − y)``, then the weights.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        d = _times_into(y, log_mu, log_mu)
        u = 1 - y
        d += _times_into(u, log_1mmu, log_1mmu)
        np.negative(d, out=d)
        d += special.xlogy(y, y)
        d += special.xlogy(u, u)
        del u
    return 2.0 * float(np.sum(_times_into(sample_weight, d, d)))


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
        return _log1mexp(ez), -ez
    ez = np.exp(-z)  # LogLog: μ = exp(−e^{−z})
    return -ez, _log1mexp(ez)


def _log1mexp(a: np.ndarray) -> np.ndarray:
    """log(1 − e^{−a}) for a ≥ 0 to a few eps relative (Mächler 2012, "Accurately
    computing log(1 − exp(−|a|))"): log(−expm1(−a)) for a ≤ log 2, where 1 − e^{−a} is
    small, and log1p(−e^{−a}) above, where the log itself is near 0.
    """
    a = np.asarray(a, dtype=float)
    out = np.empty_like(a)
    small = a <= math.log(2.0)
    out[small] = np.log(-np.expm1(-a[small]))
    large = ~small  # includes NaN, which stays NaN
    out[large] = np.log1p(-np.exp(-a[large]))
    return out


def _binomial_dlogs(link: str, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(log μ)' and −(log(1 − μ))' for the binomial links (see _binomial_logs)."""
    if link == "Logit":
        return special.expit(-z), special.expit(z)
    if link == "Probit":
        log_pdf = -0.5 * z * z - 0.5 * math.log(2 * math.pi)
        return np.exp(log_pdf - special.log_ndtr(z)), np.exp(log_pdf - special.log_ndtr(-z))
    if link == "CLogLog":
        ez = np.exp(np.minimum(z, LOG_ETA_MAX))
        return np.where(ez > 0, ez / np.expm1(ez), 1.0), ez
    ez = np.exp(np.minimum(-z, LOG_ETA_MAX))  # LogLog
    return ez, np.where(ez > 0, ez / np.expm1(ez), 1.0)
