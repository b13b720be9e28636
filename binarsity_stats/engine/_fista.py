"""Accelerated proximal gradient: the ``"fista"`` solver (design.md §4).

FISTA with backtracking and function-value restart, using the exact binarsity prox
(``penalty/_prox.prox_binarsity``). Called by ``_solvers.solve`` and
``Prepared.solve`` only.
"""

from __future__ import annotations

import numpy as np

from ..penalty._metric import DiagonalMetric
from ._polish import Polisher
from ._problem import SolverData
from ._solution import Solution, _finish, _initial_point

__all__: list[str] = []


def _fista(prob: SolverData, lam: float, tol: float, max_iter: int, warm_start) -> Solution:
    theta, beta, b0 = _initial_point(prob, warm_start)
    if prob.fit_intercept:
        b0 += prob.recenter(theta)
    else:
        theta = prob.penalty.prox(theta, 0.0)
    fit_b0 = prob.fit_intercept
    eta = prob.linear_predictor(theta, beta, b0)
    prob.grad_hess(eta)
    # variable metric: the curvature diagonal (bin sums of the working weights), in
    # which the exact prox is the weighted constrained DP; since each row sits in one
    # bin per block, Hess ≤ (p + 1) D and the backtracking constant L is O(1)..p + 1
    metric = DiagonalMetric(prob, prob.h)
    L = 1.0
    polisher = Polisher(prob)
    x_theta, x_beta, x_b0 = theta, beta, b0
    y_theta, y_beta, y_b0 = theta.copy(), beta.copy(), b0
    t = 1.0
    F_x = prob.objective(eta, theta, lam)
    kkt = np.inf
    converged = False
    n_eval = 0
    it = 0
    restarted = False
    for it in range(1, max_iter + 1):
        eta_y = prob.linear_predictor(y_theta, y_beta, y_b0)
        f_y = prob.grad_hess(eta_y)
        r = prob.r
        g_theta = prob.histogram(r)
        g_beta = prob.dense_dot(r)
        g_b0 = prob.row_sum(r) if fit_b0 else 0.0
        n_eval += 1
        L = max(L * 0.7, 1e-12)
        while True:
            step = 1.0 / L
            n_theta = metric.prox(y_theta - step * g_theta / metric.theta, step * lam)
            n_beta = y_beta - step * g_beta / metric.beta
            n_b0 = y_b0 - step * g_b0 / metric.b0
            d_theta, d_beta, d_b0 = n_theta - y_theta, n_beta - y_beta, n_b0 - y_b0
            eta_n = prob.linear_predictor(n_theta, n_beta, n_b0)
            f_n = prob.loss(eta_n)
            n_eval += 1
            lin = float(g_theta @ d_theta + g_beta @ d_beta + g_b0 * d_b0)
            sq = metric.norm2(d_theta, d_beta, d_b0)
            if np.isfinite(f_n) and f_n <= f_y + lin + 0.5 * L * sq + 1e-15 * abs(f_y):
                break
            L *= 2.0
            if L > 1e300:
                break
        F_n = f_n + lam * prob.penalty.value(n_theta)
        if F_n > F_x + 64 * np.finfo(float).eps * abs(F_x) and not restarted:
            # function-value restart: drop the momentum and step from x instead
            t = 1.0
            y_theta, y_beta, y_b0 = x_theta.copy(), x_beta.copy(), x_b0
            restarted = True
            if not prob.family.quadratic:
                metric = DiagonalMetric(prob, prob.h)  # the curvature has moved
            continue
        restarted = False
        t_next = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
        mom = (t - 1.0) / t_next
        y_theta = n_theta + mom * (n_theta - x_theta)
        y_beta = n_beta + mom * (n_beta - x_beta)
        y_b0 = n_b0 + mom * (n_b0 - x_b0)
        x_theta, x_beta, x_b0, F_x, t = n_theta, n_beta, n_b0, F_n, t_next
        eta = eta_n
        if it % 5 == 0 or sq < 1e-30:
            prob.grad_hess(eta)
            kkt, _, _ = prob.kkt(prob.r, x_theta, lam)
            if kkt <= tol:
                converged = True
                break
            polisher.observe(x_theta, passes=5.0)
            if polisher.ready():
                # the jump set has settled: Newton on its segments (design.md §9)
                res = polisher.run(x_theta, x_beta, x_b0, lam, tol, F_x)
                if res is not None:
                    x_theta, x_beta, x_b0, F_x, eta = (
                        res.theta, res.beta, res.b0, res.objective, res.eta
                    )
                    kkt = res.kkt
                    if kkt <= tol:
                        converged = True
                        break
                    t = 1.0  # restart the momentum from the polished point
                    y_theta, y_beta, y_b0 = x_theta.copy(), x_beta.copy(), x_b0
    else:
        prob.grad_hess(prob.linear_predictor(x_theta, x_beta, x_b0))
        kkt, _, _ = prob.kkt(prob.r, x_theta, lam)
        converged = kkt <= tol
    theta = x_theta.copy()
    b0 = x_b0
    if prob.fit_intercept:
        b0 += prob.recenter(theta)
    eta = prob.linear_predictor(theta, x_beta, b0)
    return _finish(prob, theta, x_beta, b0, lam, eta, kkt, converged, it, n_eval, tol)
