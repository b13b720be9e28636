"""What the solvers return, and the start and end every solver shares (design.md §4).

:class:`Solution` (θ, β, β0, objective, KKT violation, convergence, η),
:class:`ConvergenceWarning`, the initial point of a solve (cold: the
intercept(+offset)-only fit; warm: a previous solution, checked against the design)
and :func:`_finish` (back to the user's scale of the dense columns, the objective, and
a warning when the solver did not converge or ended on non-finite values).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from ._problem import SolverData
from ..core._validation import check_warm_start

__all__ = ["Solution", "ConvergenceWarning"]


class ConvergenceWarning(UserWarning):
    """The solver stopped at ``max_iter`` before the KKT violation fell below ``tol``."""


@dataclass
class Solution:
    """What a solver returns.

    Attributes
    ----------
    coef : ndarray of shape (d,)
        Binned and categorical levels θ (re-centred: n_jᵀθ_j = 0).
    dense_coef : ndarray of shape (q,)
        Coefficients of the unpenalised dense columns.
    intercept : float
        β0 (0 without an intercept).
    lam : float
        λ.
    objective : float
        F at the solution.
    kkt_violation : float
        Largest violation of the optimality conditions.
    converged : bool
        Whether ``kkt_violation <= tol``.
    n_iter : int
        Outer iterations (cd: Newton steps; fista: proximal gradient steps).
    n_sweeps : int
        Passes over the active blocks (cd) or gradient evaluations (fista).
    eta : ndarray of shape (n,)
        Linear predictor at the solution, offset included.
    bin_counts : ndarray of shape (d,)
        Weighted bin counts n_jk.
    """

    coef: np.ndarray
    dense_coef: np.ndarray
    intercept: float
    lam: float
    objective: float
    kkt_violation: float
    converged: bool
    n_iter: int
    n_sweeps: int
    eta: np.ndarray = field(repr=False)
    bin_counts: np.ndarray = field(repr=False)


def _check_warm_start(prob: SolverData, warm_start) -> None:
    """A warm start must match the design's levels and columns and be finite."""
    check_warm_start(warm_start, prob.n_levels, prob.n_dense)


def _initial_point(prob: SolverData, warm_start):
    theta = np.zeros(prob.n_levels)
    beta = np.zeros(prob.n_dense)
    b0 = 0.0
    if warm_start is not None:
        _check_warm_start(prob, warm_start)
        theta = warm_start.coef.astype(np.float64, copy=True)
        beta = warm_start.dense_coef.astype(np.float64, copy=True)
        b0 = float(warm_start.intercept) if prob.fit_intercept else 0.0
        b0 += float(prob.dense_center @ beta)
        beta *= prob.dense_scale
    elif prob.fit_intercept:
        # the intercept(+offset)-only fit, a good start for every family
        b0 = prob.null_intercept()
    return theta, beta, b0


def _finish(prob, theta, beta, b0, lam, eta, kkt, converged, n_iter, n_sweeps, tol):
    # re-centring moved levels into the intercept without changing η
    loss = prob.loss(eta)
    beta = beta / prob.dense_scale
    intercept = float(b0 - prob.dense_center @ beta)
    objective = float(loss + lam * prob.penalty.value(theta))
    finite = bool(
        np.isfinite(objective) and np.isfinite(intercept) and np.isfinite(kkt)
        and np.all(np.isfinite(theta)) and np.all(np.isfinite(beta))
    )  # fmt: skip
    if not finite:
        # a NaN or infinite number is never an answer, whatever the KKT test said
        converged = False
        warnings.warn(
            f"The solver ended on non-finite values (objective {objective:.3g}, intercept "
            f"{intercept:.3g}): the fit failed; check the scale of y, the offset and the "
            "weights.",
            ConvergenceWarning,
            stacklevel=3,
        )
    elif not converged:
        warnings.warn(
            f"The solver stopped after {n_iter} iterations ({n_sweeps} passes) with a KKT "
            f"violation of {kkt:.3g} > tol={tol:.3g}; increase max_iter or tol.",
            ConvergenceWarning,
            stacklevel=3,
        )
    return Solution(
        coef=theta,
        dense_coef=beta,
        intercept=intercept,
        lam=float(lam),
        objective=objective,
        kkt_violation=float(kkt),
        converged=bool(converged),
        n_iter=int(n_iter),
        n_sweeps=int(n_sweeps),
        eta=eta,
        bin_counts=prob.counts * prob.weight_scale,  # in the user's units of weight
    )
