"""The negative binomial family with θ fixed or estimated (R's ``MASS::glm.nb``).

``family="nb"`` (also ``"negative_binomial"``, ``"negbin"``) or
:class:`NegativeBinomial` ``(theta=None)``: log link, variance V(μ) = μ + μ²/θ (R's θ;
statsmodels' ``alpha`` is 1/θ). With ``theta`` given the family is statsmodels'
``NegativeBinomial(alpha=1/theta)`` on the NumPy path of :class:`StatsmodelsFamily`
(half the unit deviance, convex in η for the log link). With ``theta=None`` θ is
estimated: the model layer alternates the fit of β at θ with :func:`theta_ml` (θ by
maximum likelihood given μ, MASS's ``theta.ml``), and the fitted model carries
:meth:`NegativeBinomial.with_parameter` — the same family at θ̂, which still counts θ
as an estimated parameter (AIC = −2 llf + 2 (df + 1), as R's ``glm.nb``) and reports
its standard error (the observed information in θ given μ, glm.nb's ``SE.theta``).

The model layer never looks at the name: it asks ``family.estimated_parameter``
(``"theta"`` while θ is still to be estimated), ``family.fit_parameter`` and
``family.with_parameter``, ``family.extra_df`` (parameters of the family counted by
AIC/BIC) and ``family.parameter_columns()`` (glance's ``theta`` and ``theta_se``).
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

import numpy as np
from scipy import special

from ._family import _bad_values
from ._statsmodels import StatsmodelsFamily

__all__ = ["NegativeBinomial", "theta_ml", "theta_moment", "nb_log_likelihood"]

#: the largest θ: beyond it the NB variance μ + μ²/θ is the Poisson one to ~1e-6 for
#: any μ up to 1 and the score in θ is below the rounding of its digamma terms (the
#: Poisson limit θ → ∞ is reported with a warning, not followed)
THETA_MAX = 1e6
#: the smallest θ the estimate may take (a variance of μ²·1e8: no count data need less)
THETA_MIN = 1e-8


def _check_theta(theta: Any) -> float | None:
    if theta is None:
        return None
    number = isinstance(theta, numbers.Real) and not isinstance(theta, (bool, np.bool_))
    value = float(theta) if number else math.nan
    if not (math.isfinite(value) and value > 0):
        raise ValueError(
            f"theta must be a positive finite number (the negative binomial's θ: variance "
            f"μ + μ²/θ) or None to estimate it; got {theta!r}."
        )
    return value


def nb_log_likelihood(theta: float, y: np.ndarray, mu: np.ndarray, w: np.ndarray) -> float:
    """Σ w log f(y; μ, θ), the negative binomial log-likelihood (R's glm.nb ``loglik``).

    Parameters
    ----------
    theta : float
        θ > 0.
    y, mu, w : ndarray of shape (n,)
        Counts, means and prior weights.

    Returns
    -------
    float
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        r = mu / theta
        ll = (special.gammaln(theta + y) - special.gammaln(theta) - special.gammaln(y + 1)
              - theta * np.log1p(r) + special.xlogy(y, mu) - y * np.log(theta + mu))  # fmt: skip
    # the product only where w > 0: a zero-weight row of log-density −inf adds 0, not 0·(−inf)
    w, ll = np.broadcast_arrays(np.asarray(w, dtype=float), ll)
    return float(np.sum(np.multiply(w, ll, out=np.zeros(ll.shape), where=w > 0)))


def _score_info(theta: float, y, mu, w) -> tuple[float, float]:
    """The score in θ and the observed information −∂score/∂θ (MASS's ``theta.ml``)."""
    t = theta
    score = (special.digamma(t + y) - special.digamma(t) - np.log1p(mu / t)
             + (mu - y) / (mu + t))  # fmt: skip
    info = (-special.polygamma(1, t + y) + special.polygamma(1, t) - 1.0 / t
            + 2.0 / (mu + t) - (y + t) / (mu + t) ** 2)  # fmt: skip
    return float(np.sum(w * score)), float(np.sum(w * info))


def theta_moment(y: np.ndarray, mu: np.ndarray, w: np.ndarray) -> float:
    """MASS's start for θ: Σ w / Σ w (y/μ − 1)², clipped to [THETA_MIN, THETA_MAX].

    Parameters
    ----------
    y, mu, w : ndarray of shape (n,)
        Counts, means and prior weights.

    Returns
    -------
    float
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        den = float(np.sum(np.where(w > 0, w * (y / mu - 1.0) ** 2, 0.0)))
    t = float(np.sum(w)) / den if den > 0 else THETA_MAX
    return float(min(max(t, THETA_MIN), THETA_MAX)) if math.isfinite(t) else THETA_MAX


def theta_ml(
    y: np.ndarray,
    mu: np.ndarray,
    w: np.ndarray,
    start: float | None = None,
    max_iter: int = 100,
) -> tuple[float, float, bool]:
    """θ by maximum likelihood given the means μ (MASS's ``theta.ml``), and its SE.

    Newton's method on the score in θ from ``start`` (default the moment estimate,
    :func:`theta_moment`), kept inside the bracket where the score changes sign (a step
    that leaves it is replaced by the geometric mean of the bracket's ends), until a
    step moves θ by less than 1e-12 of θ. The standard error is 1/√(observed
    information) at θ̂, glm.nb's ``SE.theta``. When the score is still positive at
    :data:`THETA_MAX` the data show no over-dispersion given μ: θ is capped there
    (the Poisson limit θ → ∞) with a ``RuntimeWarning``.

    Parameters
    ----------
    y, mu, w : ndarray of shape (n,)
        Counts, means (positive) and prior weights (the log-likelihood is Σ w ℓ_i).
    start : float, optional
        Starting θ.
    max_iter : int, default=100
        Newton steps.

    Returns
    -------
    theta : float
    se : float
    converged : bool
    """
    keep = w > 0
    y, mu, w = y[keep], mu[keep], w[keep]
    t = theta_moment(y, mu, w) if start is None else float(min(max(start, THETA_MIN), THETA_MAX))
    lo, hi = 0.0, math.inf
    converged = False
    with np.errstate(all="ignore"):
        for _ in range(max_iter):
            g, h = _score_info(t, y, mu, w)
            if g > 0:
                lo = t
            else:
                hi = t
            new = t + g / h if h > 0 else math.nan
            if not (lo < new < hi):
                if math.isfinite(hi) and lo > 0:
                    new = math.sqrt(lo * hi)
                else:
                    new = t * 10.0 if g > 0 else t / 10.0
            if new >= THETA_MAX:
                g_max, _ = _score_info(THETA_MAX, y, mu, w)
                if g_max >= 0:
                    warnings.warn(
                        f"theta (negative binomial) reached its cap {THETA_MAX:g}: the "
                        "data show no over-dispersion given the fitted means (the Poisson "
                        "limit, theta -> infinity); family='poisson' fits this model.",
                        RuntimeWarning,
                        stacklevel=3,
                    )
                    t, converged = THETA_MAX, True
                    break
                new = math.sqrt(t * THETA_MAX)
            new = max(new, THETA_MIN)
            done = abs(new - t) <= 1e-12 * t
            t = new
            if done:
                converged = True
                break
        _, info = _score_info(t, y, mu, w)
    se = 1.0 / math.sqrt(info) if info > 0 else math.nan
    return float(t), float(se), converged


def _rebuild(theta: float | None, estimated: bool, se: float | None) -> NegativeBinomial:
    """Unpickle a :class:`NegativeBinomial` (pickles name this function)."""
    fam = NegativeBinomial(theta)
    if estimated and theta is not None:
        fam = fam.with_parameter(theta, se)
    return fam


class NegativeBinomial(StatsmodelsFamily):
    """Negative binomial with log link, variance μ + μ²/θ; θ fixed or estimated.

    Parameters
    ----------
    theta : float, optional
        θ > 0 held fixed (statsmodels' ``NegativeBinomial(alpha=1/theta)``); None
        (default): estimated by maximum likelihood, alternating with the fit of β as
        R's ``MASS::glm.nb`` does.

    Attributes
    ----------
    theta : float or None
        θ (None before it is estimated).
    theta_se : float or None
        Standard error of an estimated θ (observed information given μ).
    estimated_parameter : str or None
        ``"theta"`` while θ is to be estimated, else None.
    extra_df : int
        Parameters of the family counted by AIC and BIC: 1 for an estimated θ.

    Raises
    ------
    ValueError
        For ``theta`` not a positive finite number.

    Examples
    --------
    >>> from binarsity_stats.families import NegativeBinomial
    >>> NegativeBinomial(theta=2.0).variance(3.0)
    array(7.5)
    """

    def __init__(self, theta: float | None = None) -> None:
        from statsmodels.genmod import families

        value = _check_theta(theta)
        # θ = 1 stands in for the engine until the model layer estimates θ
        alpha = 1.0 / (1.0 if value is None else value)
        super().__init__(families.NegativeBinomial(alpha=alpha, link=families.links.Log()))
        self.name = "nb"
        self.theta = value
        self.theta_se: float | None = None
        self._estimated = value is None

    @property
    def estimated_parameter(self) -> str | None:
        """``"theta"`` while θ is to be estimated, else None."""
        return "theta" if self.theta is None else None

    @property
    def extra_df(self) -> int:
        """Parameters of the family counted by AIC and BIC: 1 for an estimated θ."""
        return 1 if self._estimated else 0

    def with_parameter(self, value: float, se: float | None = None) -> NegativeBinomial:
        """This family at an estimated θ (fixed for the fit, counted as estimated).

        Parameters
        ----------
        value : float
            θ̂.
        se : float, optional
            Its standard error.

        Returns
        -------
        NegativeBinomial
        """
        fam = NegativeBinomial(value)
        fam._estimated = True
        fam.theta_se = None if se is None else float(se)
        return fam

    def fit_parameter(
        self, y: np.ndarray, mu: np.ndarray, weights: np.ndarray, start: float | None = None
    ) -> tuple[float, float, bool]:
        """θ by maximum likelihood given μ (:func:`theta_ml`).

        Parameters
        ----------
        y, mu, weights : ndarray of shape (n,)
            Counts, fitted means and prior weights.
        start : float, optional
            Starting θ (default the moment estimate).

        Returns
        -------
        theta, se : float
        converged : bool
        """
        return theta_ml(y, mu, weights, start)

    def parameter_columns(self) -> dict[str, float]:
        """glance()'s columns of the family: ``theta`` and ``theta_se``.

        Returns
        -------
        dict
        """
        se = math.nan if self.theta_se is None else self.theta_se
        theta = math.nan if self.theta is None else self.theta
        return {"theta": theta, "theta_se": se}

    def __reduce__(self):
        return (_rebuild, (self.theta, self._estimated, self.theta_se))

    def _key(self) -> tuple:
        return ("nb", self.theta, self._estimated)

    @property
    def label(self) -> str:
        if self.theta is None:
            return "nb(theta estimated)"
        return f"nb(theta={self.theta:.6g}{', estimated' if self._estimated else ''})"

    def __repr__(self) -> str:
        return f"NegativeBinomial(theta={self.theta!r})"

    def header_rows(self) -> list[tuple[str, str]]:
        rows = [("Model Family", "NegativeBinomial"), ("Link Function", "log")]
        if self.theta is None:
            rows.append(("Theta", "to be estimated"))
        elif self._estimated:
            se = "nan" if self.theta_se is None else f"{self.theta_se:.4g}"
            rows.append(("Theta (estimated)", f"{self.theta:.6g} (SE {se})"))
        else:
            rows.append(("Theta (fixed)", f"{self.theta:.6g}"))
        return rows

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": "nb", "link": "log"}
        if self.theta is not None:
            out["theta"] = self.theta
        return out

    def validate_y(self, y: np.ndarray, *, proportions: bool = False) -> None:
        """Counts: y ≥ 0 (an error); a non-integer y is accepted with a warning, as R's
        ``dnbinom`` does (statsmodels accepts it silently: its likelihood uses Γ)."""
        super().validate_y(y)  # finite and non-negative
        frac = y != np.floor(y)
        if np.any(frac):
            warnings.warn(
                f"y has non-integer values for family {self.label} (such as "
                f"{_bad_values(y, frac)}): the negative binomial is a count distribution; "
                "its likelihood is evaluated with the gamma function (R's dnbinom warns "
                "likewise).",
                UserWarning,
                stacklevel=3,
            )
        if self.theta is None and y.size and not np.any(y > 0):
            raise ValueError(
                "y is 0 in every row: theta of family 'nb' is not identified (the mean is "
                "0 and no variance is observed); give theta= or use family='poisson'."
            )
