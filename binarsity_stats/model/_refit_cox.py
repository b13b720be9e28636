"""The weighted Cox partial likelihood of a refit and Newton's method on it.

PHReg has no sample weights: :func:`_fit_weighted_cox` maximises the weighted log
partial likelihood (Breslow or Efron ties, per stratum) with the exact Hessian from
``_cox_loglike_derivs`` by ``_newton_cox``.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ._rank import truncated_inverse as _truncated_inverse

if TYPE_CHECKING:  # pragma: no cover
    from ._results import BinarsityResults


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


class _WeightedCoxResults:
    """The weighted Cox refit: what :class:`RefitResults` reads of statsmodels' PHReg.

    Coefficients maximise the weighted partial likelihood (Newton's method, exact
    Hessian); standard errors come from the inverse observed information (R coxph's
    ``se(coef)``, not the robust sandwich).
    """

    def __init__(self, params, cov, llf, names, nobs, n_events, ties, n_strata, converged):
        self.params = pd.Series(params, index=names)
        self._cov = cov
        self.llf = float(llf)
        self.nobs = nobs
        self.n_events = n_events
        self.ties = ties
        self.n_strata = n_strata
        self.converged = converged
        self.df_model = len(names)

    def cov_params(self) -> pd.DataFrame:
        """Inverse observed information at the estimate."""
        idx = self.params.index
        return pd.DataFrame(self._cov, index=idx, columns=idx)

    @property
    def bse(self) -> pd.Series:
        """Model-based standard errors."""
        return pd.Series(np.sqrt(np.diag(self._cov)), index=self.params.index)

    @property
    def tvalues(self) -> pd.Series:
        """Wald z-statistics."""
        return self.params / self.bse

    @property
    def pvalues(self) -> pd.Series:
        """Two-sided normal p-values."""
        from scipy import stats

        return pd.Series(2 * stats.norm.sf(np.abs(self.tvalues)), index=self.params.index)

    def conf_int(self, alpha: float = 0.05) -> pd.DataFrame:
        """Wald intervals of the log hazard ratios."""
        from scipy import stats

        q = stats.norm.ppf(1 - alpha / 2)
        return pd.DataFrame({0: self.params - q * self.bse, 1: self.params + q * self.bse})

    def summary(self, title: str | None = None, alpha: float = 0.05) -> Any:
        """PHReg's layout (statsmodels' summary2) for the weighted fit."""
        from statsmodels.iolib import summary2

        smry = summary2.Summary()
        info = {"Model:": "PH Reg (weighted)", "Ties:": self.ties.capitalize(),
                "Sample size:": str(self.nobs), "Num. events:": str(self.n_events),
                "Log-likelihood:": f"{self.llf:.4f}"}  # fmt: skip
        if self.n_strata > 1:
            info["Num strata:"] = str(self.n_strata)
        smry.add_dict(info, align="l")
        ci = self.conf_int(alpha)
        lo, hi = f"[{alpha / 2:.3f}", f"{1 - alpha / 2:.3f}]"
        table = pd.DataFrame({"log HR": self.params, "log HR SE": self.bse,
                              "HR": np.exp(self.params), "z": self.tvalues,
                              "P>|z|": self.pvalues, lo: np.exp(ci[0]),
                              hi: np.exp(ci[1])})  # fmt: skip
        smry.add_df(table, float_format="%8.3f")
        smry.add_title(title=title)
        smry.add_text("Confidence intervals are for the hazard ratios")
        smry.add_text(
            "Standard errors: model-based, from the inverse observed information of the "
            "weighted partial likelihood (R coxph's se(coef), not the robust sandwich); "
            "they scale as 1/sqrt(c) when every weight is multiplied by c."
        )
        if not self.converged:
            smry.add_text("WARNING: Newton's method did not converge.")
        return smry


def _fit_weighted_cox(
    res: BinarsityResults, rows: np.ndarray, X: np.ndarray, names: list
) -> _WeightedCoxResults:
    """The unpenalised weighted Cox fit on the selected design of the given rows."""
    m = res.model
    w = np.asarray(m.sample_weight, dtype=float)
    rows = rows[w[rows] > 0]  # zero weight: not an observation
    Xr = np.ascontiguousarray(X[rows], dtype=float)
    time = np.asarray(m.survival[rows, 0], dtype=float)
    status = np.asarray(m.survival[rows, 1], dtype=float)
    strata = (np.zeros(rows.size, dtype=np.int64) if getattr(m, "strata", None) is None
              else np.unique(np.asarray(m.strata)[rows], return_inverse=True)[1])  # fmt: skip
    off = None if m.offset is None else np.asarray(m.offset, dtype=float)[rows]
    wr = w[rows]
    ties = m.family.ties

    def derivs(beta):
        return _cox_loglike_derivs(beta, Xr, time, status, wr, strata, off, ties)

    beta, llf, hess, converged = _newton_cox(derivs, Xr.shape[1])
    if not converged:
        warnings.warn(
            "refit(): Newton's method on the weighted partial likelihood did not converge "
            "(a coefficient may be infinite: a segment with no events, or all events).",
            UserWarning,
            stacklevel=4,
        )
    cov = _truncated_inverse(-hess)
    out = _WeightedCoxResults(beta, cov, llf, list(names), int(rows.size),
                              int(np.sum(status > 0)), ties, int(np.unique(strata).size),
                              converged)  # fmt: skip
    # what _non_identified checks: the design and the strata that have events
    out.identify_exog = Xr
    out.identify_strata = [np.flatnonzero(strata == k) for k in np.unique(strata)
                           if np.any(status[strata == k] > 0)]  # fmt: skip
    return out
