"""A family parameter estimated alternately with β: the negative binomial's θ (R's
``MASS::glm.nb``; issue 28).

A family whose ``estimated_parameter`` is set (``family="nb"``) is fitted by
alternation: β at θ (the binarsity fit at the user's λ, warm-started from the previous
one), then θ by maximum likelihood given μ (``family.fit_parameter``), until
|Δθ|/θ < 1e-8 (:data:`THETA_TOL`) or :data:`MAX_ALTERNATIONS` rounds (then a
``ConvergenceWarning`` naming θ). The fitted model is a shallow copy of the user's
whose family is ``family.with_parameter(θ̂, se)``: θ̂ held fixed, counted as one
estimated parameter by AIC/BIC. Results, ``results(λ)``, bootstrap and exports read
that copy, so they all use θ̂.

Path and cross-validation (:func:`fixed_parameter_model`): θ is estimated once, by
alternation at the smallest λ of the grid (the fit closest to glm.nb's maximum
likelihood), and held fixed along the path and in every fold. One estimate costs a few
warm-started fits at one λ instead of a few at every λ (4× to 8× less: docs/benchmarks.md,
suite ``nbtheta``), and the held-out deviances of CV are then all at one θ — a
deviance at another θ is another loss, so per-λ θ would not compare like with like.
The refit re-estimates θ on the selected segments (``_refit``).
"""

from __future__ import annotations

import copy
import warnings
from typing import Any

import numpy as np

from ..engine._path import check_grid
from ..engine._solvers import ConvergenceWarning

__all__ = ["THETA_TOL", "MAX_ALTERNATIONS", "fit_alternating", "fixed_parameter_model",
           "start_parameter", "alternate_refit"]  # fmt: skip

#: relative change of θ between two rounds at which the alternation stops (glm.nb's
#: ``epsilon``)
THETA_TOL = 1e-8
#: rounds of (β at θ, θ given μ) before a ConvergenceWarning (glm.nb's ``maxit``)
MAX_ALTERNATIONS = 25


def _at(model: Any, family: Any) -> Any:
    """A shallow copy of ``model`` with another family (the design is shared)."""
    other = copy.copy(model)
    other.family = family
    return other


def _warn(family: Any, theta: float, change: float) -> None:
    warnings.warn(
        f"{family.estimated_parameter} of family {family.name!r} did not converge in "
        f"{MAX_ALTERNATIONS} alternations of the fit and its maximum-likelihood update "
        f"(last value {theta:.6g}, relative change {change:.2g} > {THETA_TOL:g}).",
        ConvergenceWarning,
        stacklevel=4,
    )


def start_parameter(family: Any, y: np.ndarray, weights: np.ndarray,
                    offset: np.ndarray | None) -> float:  # fmt: skip
    """θ given the Poisson null fit's μ (intercept and offset), glm.nb's start.

    Parameters
    ----------
    family : Family
        A family with ``estimated_parameter``.
    y, weights : ndarray of shape (n,)
        Response and prior weights.
    offset : ndarray of shape (n,) or None
        Offset.

    Returns
    -------
    float
    """
    off = np.zeros_like(y) if offset is None else offset
    shift = float(np.max(off)) if off.size else 0.0
    e = np.exp(off - shift)
    mu = e * (float(np.sum(weights * y)) / float(np.sum(weights * e)))
    return family.fit_parameter(y, mu, weights)[0]


def fit_alternating(model: Any, fit_at: Any, warm_start: Any = None) -> Any:
    """The fit with the family's parameter estimated by alternation.

    Parameters
    ----------
    model : BinarsityModel
        A model whose family has ``estimated_parameter``.
    fit_at : callable
        ``fit_at(model_at_theta, warm_start) -> BinarsityResults``: the fit at the
        user's λ of a copy of the model with θ fixed.
    warm_start : Solution, optional
        Start of the first fit.

    Returns
    -------
    BinarsityResults
        The last fit, on a model whose family is at θ̂ (with its standard error).
    """
    family = model.family
    y, w = model.y, model.sample_weight
    theta = start_parameter(family, y, w, model.offset)
    start, res, change = warm_start, None, np.inf
    for _ in range(MAX_ALTERNATIONS):
        res = fit_at(_at(model, family.with_parameter(theta)), start)
        new, se, _ = family.fit_parameter(y, res.fittedvalues, w, start=theta)
        change = abs(new - theta) / theta
        theta, start = new, res.solution
        if change <= THETA_TOL:
            break
    else:
        _warn(family, theta, change)
    res.model = _at(model, family.with_parameter(theta, se))
    return res


def fixed_parameter_model(model: Any, lams: Any, n_lambdas: int, lam_min_ratio: float,
                          opts: dict[str, Any]) -> Any:  # fmt: skip
    """The model at θ̂ for a path or cross-validation: θ estimated once, by alternation
    at the grid's smallest λ (the grid of the model at the start θ), then fixed.

    Parameters
    ----------
    model : BinarsityModel
        A model whose family has ``estimated_parameter``.
    lams, n_lambdas, lam_min_ratio
        As in ``fit_path``.
    opts : dict
        Solver options (``solver``, ``tol``, ``max_iter``, ``backend``).

    Returns
    -------
    BinarsityModel
        A copy whose family is at θ̂ (counted as estimated).
    """
    family = model.family
    theta0 = start_parameter(family, model.y, model.sample_weight, model.offset)
    if lams is None:
        grid = _at(model, family.with_parameter(theta0)).lambda_grid(n_lambdas, lam_min_ratio)
    else:
        grid = check_grid(lams)
    lam = float(np.min(grid))
    res = fit_alternating(model, lambda m, start: m.fit(lam, warm_start=start, **opts))
    return res.model


def alternate_refit(family: Any, fit_at: Any, y: np.ndarray, weights: np.ndarray,
                    theta: float) -> tuple[Any, Any]:  # fmt: skip
    """The unpenalised refit with θ re-estimated: IRLS at θ, then θ given μ, repeated.

    Parameters
    ----------
    family : Family
        The fitted model's family (at the penalised fit's θ̂).
    fit_at : callable
        ``fit_at(family_at_theta) -> statsmodels-like results`` with ``fittedvalues``
        (``mu`` of the rows).
    y, weights : ndarray
        Response and prior weights of the refit's rows.
    theta : float
        Starting θ.

    Returns
    -------
    results : the last refit
    family : the family at the refit's θ̂ (with its standard error)
    """
    change = np.inf
    for _ in range(MAX_ALTERNATIONS):
        fit = fit_at(family.with_parameter(theta))
        mu = np.asarray(fit.fittedvalues, dtype=np.float64)
        new, se, _ = family.fit_parameter(y, mu, weights, start=theta)
        change = abs(new - theta) / theta
        theta = new
        if change <= THETA_TOL:
            break
    else:
        _warn(family, theta, change)
    return fit, family.with_parameter(theta, se)
