"""The weighted Cox partial likelihood of a refit and Newton's method on it.

PHReg has no sample weights: ``_refit._fit_weighted_cox`` maximises the weighted log
partial likelihood (Breslow or Efron ties, per stratum) with the exact Hessian from
``_cox_loglike_derivs`` by ``_newton_cox``.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def _cox_loglike_derivs(
    beta: np.ndarray,
    X: np.ndarray,
    time: np.ndarray,
    status: np.ndarray,
    w: np.ndarray,
    strata: np.ndarray,
    offset: np.ndarray | None,
    ties: str,
) -> tuple[float, np.ndarray, np.ndarray]:
    """Weighted log partial likelihood, its gradient and its exact Hessian in β.

    Per stratum, after one sort of the rows by time (groups g of rows with equal time,
    D_g the weighted risk Σ_{t_j ≥ t_g} w_j e^{η_j}, d_g = Σ_{i∈g} w_i δ_i):
    Breslow ℓ = Σ w δ η − Σ_g d_g log D_g; Efron (R's coxph with weights, lifelines)
    replaces d_g log D_g by (d_g/m_g) Σ_{r<m_g} log(D_g − (r/m_g) F_g), F_g the risk of
    the m_g events of g. Writing c_j for row j's share of the denominators, the gradient
    is Xᵀ(wδ − w e^η c) and −∂²ℓ = Xᵀ diag(w e^η c) X − Σ_{g,r} (coef/den²) S S ᵀ with
    S = S1_g − (r/m_g) F1_g the risk-weighted sums of x.
    """
    n, p = X.shape
    eta = X @ beta
    if offset is not None:
        eta = eta + offset
    llf = 0.0
    coef = np.zeros(n)  # c_j: the rows' shares of the denominators
    outer = []  # rows of B: −∂²ℓ = Xᵀ diag(w e^η c) X − BᵀB
    risk = np.zeros(n)
    for h in np.unique(strata):
        rows = np.flatnonzero(strata == h)
        rows = rows[np.argsort(time[rows], kind="stable")]
        t, e, s, ev = time[rows], eta[rows], w[rows], status[rows]
        m = float(np.max(e))
        r = s * np.exp(e - m)  # risk on the shifted scale
        risk[rows] = r
        starts = np.flatnonzero(np.r_[True, t[1:] != t[:-1]])
        sizes = np.diff(np.r_[starts, rows.size])
        tail = np.cumsum(r[::-1])[::-1]
        tail1 = np.cumsum((r[:, None] * X[rows])[::-1], axis=0)[::-1]
        D, S1 = tail[starts], tail1[starts]
        d = np.add.reduceat(s * ev, starts)
        # on the shifted scale: the shift m cancels (Σ_g d_g = Σ w δ, also for Efron)
        llf += float(np.dot(s * ev, e - m))
        if ties == "efron":
            mg = np.add.reduceat(ev, starts).astype(np.int64)
            F = np.add.reduceat(r * ev, starts)
            F1 = np.add.reduceat((r * ev)[:, None] * X[rows], starts, axis=0)
            grp = np.repeat(np.arange(mg.size), mg)
            k = np.arange(grp.size) - np.repeat(np.cumsum(mg) - mg, mg)
            frac = k / mg[grp]
            den = D[grp] - frac * F[grp]
            wbar = (d / np.where(mg > 0, mg, 1))[grp]
            live = wbar > 0  # a group whose events all weigh 0 adds nothing
            grp, frac, den, wbar = grp[live], frac[live], den[live], wbar[live]
            llf -= float(np.sum(wbar * np.log(den)))
            a = np.bincount(grp, weights=wbar / den, minlength=mg.size)
            b = np.bincount(grp, weights=wbar * (1 - frac) / den, minlength=mg.size)
            before = np.repeat(np.cumsum(a) - a, sizes)
            own = np.where(ev > 0, np.repeat(b, sizes), np.repeat(a, sizes))
            coef[rows] = before + own
            Sr = S1[grp] - frac[:, None] * F1[grp]
            outer.append(Sr * (np.sqrt(wbar) / den)[:, None])
        else:
            live = d > 0
            llf -= float(np.sum(d[live] * np.log(D[live])))
            ratio = np.where(live, d / np.where(live, D, 1.0), 0.0)
            coef[rows] = np.repeat(np.cumsum(ratio), sizes)
            outer.append(S1[live] * (np.sqrt(d[live]) / D[live])[:, None])
    wr = risk * coef
    grad = X.T @ (w * status - wr)
    B = np.vstack(outer) if outer else np.zeros((0, p))
    info = (X * wr[:, None]).T @ X - B.T @ B
    return llf, grad, -info


def _newton_cox(
    derivs: Any, p: int, max_iter: int = 100
) -> tuple[np.ndarray, float, np.ndarray, bool]:
    """Newton's method with step halving on a concave log partial likelihood."""
    beta = np.zeros(p)
    llf, grad, hess = derivs(beta)
    converged = False
    for _ in range(max_iter):
        try:
            step = np.linalg.solve(-hess, grad)
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(-hess, grad, rcond=None)[0]
        t = 1.0
        while True:
            new = beta + t * step
            llf_new, grad_new, hess_new = derivs(new)
            if np.isfinite(llf_new) and llf_new >= llf - 1e-12 * (1.0 + abs(llf)):
                break
            t *= 0.5
            if t < 1e-10:
                break
        if t < 1e-10:  # no ascent along the Newton direction: at the maximum
            converged = bool(np.max(np.abs(step), initial=0.0) < 1e-6)
            break
        change = np.max(np.abs(new - beta), initial=0.0)
        beta, llf, grad, hess = new, llf_new, grad_new, hess_new
        if change <= 1e-12 * (1.0 + np.max(np.abs(beta), initial=0.0)):
            converged = True
            break
    return beta, llf, hess, converged
