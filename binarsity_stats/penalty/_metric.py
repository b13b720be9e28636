"""A diagonal variable metric for proximal gradient (design.md §4, FISTA).

Plain proximal gradient takes one step size for every level, set by the largest
curvature: levels of small bins (a binary feature with 1% of the rows, a tail bin of a
skewed feature, a heavily weighted row) then move by tiny steps and FISTA crawls. The
curvature of the loss in θ_j is diagonal per block (design.md §2: the bin sums
H_jk of the working weights), so the metric D = diag(H) makes every block's step
Newton-like, and the prox in that metric is still exact: per block it is the weighted
fused-lasso signal approximator under n_jᵀθ_j = 0,

    argmin_θ Σ_k (L H_k / 2)(θ_k − v_k)² + λ Σ_k ω_k |θ_k − θ_k−1|,  v = y − g / (L H),

which the constrained DP (``_fused_lasso_constrained.constrained_fused_lasso``) solves with
observation weights. Since each row sits in one bin per block, Hess ≤ (p + 1) D: the
backtracking constant L stays in [~1, p + 1] instead of spanning the bin counts' range.
"""

from __future__ import annotations

from functools import partial

import numpy as np

__all__ = ["DiagonalMetric"]

_TOL = 1e-12


class DiagonalMetric:
    """The curvature diagonal of the smooth loss at η, per level, intercept and column.

    Parameters
    ----------
    prob : SolverData
        The problem (its histograms, free columns' Gram, counts and penalty weights).
    h : ndarray of shape (n,)
        Working weights (curvature, normalised by W) at the reference point.
    """

    def __init__(self, prob, h):
        self.prob = prob
        hist = prob.histogram(h)
        total = prob.row_sum(h)
        # a level without curvature (no rows, or weight 0) keeps a small metric so that
        # the prox still sets it (from its neighbours, by the penalty)
        floor = 1e-12 * max(float(hist.max(initial=0.0)), total, 1e-300)
        self.theta = np.maximum(hist, floor)
        self.b0 = max(total, 1e-300)
        q = prob.n_dense
        if q:
            # the dense columns are the last q free columns (after the intercept's)
            gram_diag = np.diag(prob.free_gram(h))[prob.n_free - q :]
            self.beta = np.maximum(gram_diag, floor)
        else:
            self.beta = np.zeros(0)
        self._w = prob.weights
        self._counts = prob.counts
        self._bp = prob.block_ptr
        # every block's prox in this metric is its kind's (``_blocks``); a kind with a
        # direction (monotone) also gets the block's linked edges (ω > 0), which λω
        # cannot tell at λ = 0
        pen = prob.penalty
        self._prox = [
            partial(kind.metric_prox, linked=pen.linked[self._bp[j] : self._bp[j + 1]])
            if kind.direction
            else kind.metric_prox
            for j, kind in enumerate(pen.block_rules)
        ]

    def prox(self, v, scaled_lam) -> np.ndarray:
        """argmin_θ ½‖θ − v‖²_D + scaled_lam·pen(θ) under every block's constraint."""
        out = np.empty_like(v)
        bp, w, n, D = self._bp, self._w, self._counts, self.theta
        lam_w = scaled_lam * w
        for j in range(len(bp) - 1):
            s, e = int(bp[j]), int(bp[j + 1])
            self._prox[j](v[s:e], D[s:e], lam_w[s:e], n[s:e], out[s:e], _TOL)
        return out

    def norm2(self, d_theta, d_beta, d_b0) -> float:
        """‖(dθ, dβ, dβ0)‖²_D."""
        return float(
            d_theta @ (self.theta * d_theta) + d_beta @ (self.beta * d_beta) + self.b0 * d_b0**2
        )
