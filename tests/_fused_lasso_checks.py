"""Checks shared by the fused-lasso kernel tests (tests/kernels/test_fused_lasso.py and
test_fused_lasso_constrained.py): the objective, a cvxpy reference, a KKT certificate
and random hard instances."""

from __future__ import annotations

import cvxpy as cp
import numpy as np


def objective(theta, y, w, lam):
    """sum (w/2)(theta - y)^2 + sum_{k>=1} lam_k |theta_k - theta_{k-1}|."""
    return 0.5 * np.sum(w * (theta - y) ** 2) + np.sum(lam[1:] * np.abs(np.diff(theta)))


def cvxpy_flsa(y, w, lam, counts=None):
    """Reference solution by cvxpy/Clarabel (tight tolerances, default on failure).

    The problem is handed to Clarabel in units where max|y| = max w = 1 (an
    interior-point method is not scale invariant), then scaled back.
    """
    ys = np.abs(y).max() or 1.0
    ws = w.max() or 1.0
    yn, wn, lamn = y / ys, w / ws, np.minimum(lam / (ys * ws), 1e6)
    theta = cp.Variable(len(y))
    obj = 0.5 * cp.sum(cp.multiply(wn, cp.square(theta - yn)))
    if len(y) > 1:
        obj = obj + cp.sum(cp.multiply(lamn[1:], cp.abs(cp.diff(theta))))
    cons = [(counts / counts.max()) @ theta == 0] if counts is not None else []
    prob = cp.Problem(cp.Minimize(obj), cons)
    try:
        prob.solve(solver="CLARABEL", tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    except cp.error.SolverError:
        prob.solve(solver="CLARABEL")
    return theta.value * ys, objective(theta.value * ys, y, w, lam)


def kkt_violation(theta, y, w, lam, counts=None):
    """Largest violation of the KKT conditions, relative to the problem's scale.

    S_l = sum_{k>=l} [w_k (theta_k - y_k) + mu n_k] must be 0 at l = 0 (this
    defines mu), -lam_l sign(theta_l - theta_{l-1}) at a jump and within
    [-lam_l, lam_l] elsewhere (design.md section 2). Differences below 1e-12 of
    the scale of theta count as "maybe a jump": only the box is required.
    """
    r = w * (theta - y)
    n = np.zeros_like(y) if counts is None else counts
    mu = -r.sum() / n.sum() if n.sum() > 0 else 0.0
    S = np.cumsum((r + mu * n)[::-1])[::-1]
    scale = np.sum(np.abs(r)) + np.sum(w * np.abs(y)) + np.abs(mu) * n.sum() + lam[1:].sum()
    scale += 1e-300
    viol = [abs(S[0]) / scale]
    d = np.diff(theta)
    tiny = 1e-12 * (np.abs(theta).max() + np.abs(y).max() + 1e-300)
    for l_ in range(1, len(y)):
        if abs(d[l_ - 1]) > tiny:
            viol.append(abs(S[l_] + lam[l_] * np.sign(d[l_ - 1])) / scale)
        else:
            viol.append(max(abs(S[l_]) - lam[l_], 0.0) / scale)
    return max(viol)


def random_instance(rng, K, zero_w=0.3, zero_lam=0.2, huge_lam=0.05):
    """Unequal weights with zeros, penalties with zeros and huge values."""
    y = rng.normal(size=K) * rng.choice([1e-3, 1.0, 1e3])
    w = rng.exponential(size=K)
    w[rng.random(K) < zero_w] = 0.0
    lam = rng.exponential(size=K) * rng.choice([0.01, 0.3, 1.0, 10.0]) * np.abs(y).max()
    lam[rng.random(K) < zero_lam] = 0.0
    lam[rng.random(K) < huge_lam] *= 1e4
    return y, w, lam
