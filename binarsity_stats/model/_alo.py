"""Approximate leave-one-out risk along a path: λ chosen from one path, not K + 1.

On the fused segments of a fit the binarsity model is a smooth GLM: the penalty is
linear there (each kept jump has a fixed sign) and every fused jump stays fused under a
small change of the data. Deleting row i then moves the linear predictor of that row
from η_i to, to first order (Wang, Zhou, Lu, Maleki & Mirrokni, "Approximate
Leave-One-Out for Fast Parameter Tuning in High Dimensions", ICML 2018, for
generalised-lasso penalties),

    η̃_i = η_i + H_ii ℓ'_i / (1 − H_ii ℓ''_i),   H = X (Xᵀ diag(ℓ'') X)⁺ Xᵀ,

with X the segment design of the fit (the refit's: intercept, segment and level
indicators, dense columns), ℓ' and ℓ'' the first and second derivatives of row i's
weighted loss in η (the IRLS weight for a non-canonical link). For the gaussian family
and a row whose deletion keeps the fit's jump set this is the exact leave-one-out
prediction. The ALO risk is the mean deviance of the rows at their η̃.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

__all__ = ["alo_curve", "alo_linear_predictor"]

#: Smallest 1 − H_ii ℓ''_i: a row that alone determines a segment (leverage 1) has no
#: leave-one-out prediction; its η̃ is pushed far out, so such fits score badly.
MIN_DENOMINATOR = 1e-8


def alo_linear_predictor(res: Any) -> tuple[np.ndarray, np.ndarray]:
    """The approximate leave-one-out linear predictor of every training row.

    Parameters
    ----------
    res : BinarsityResults
        A fit of a GLM family (not Cox: its loss does not split by row).

    Returns
    -------
    eta_loo : ndarray of shape (n,)
        η̃_i, the linear predictor of row i from the fit without it (to first order).
    leverage : ndarray of shape (n,)
        H_ii ℓ''_i, in [0, 1]: 1 for a row that alone determines a segment.
    """
    m = res.model
    if m.family.survival:
        raise ValueError(
            "approximate leave-one-out needs a loss that splits by row; the Cox partial "
            "likelihood does not (use fit_cv)."
        )
    eta = np.ascontiguousarray(res.linear_predictor, dtype=np.float64)
    y = np.ascontiguousarray(m.y, dtype=np.float64)
    w = np.ascontiguousarray(m.sample_weight, dtype=np.float64)
    grad, hess = np.empty_like(eta), np.empty_like(eta)
    m.family.grad_hess_only(eta, y, w, 1.0, grad, hess)
    X = segment_indicators(res)
    if X.shape[1] == 0:
        return eta.copy(), np.zeros_like(eta)
    A = X.T @ (X * hess[:, None])
    # the segment design can be rank deficient (a column of zero weight): H is the same
    # on any basis of its column space, which the pseudo-inverse gives
    A_inv = np.linalg.pinv(A, rcond=1e-12, hermitian=True)
    h = np.einsum("ij,jk,ik->i", X, A_inv, X, optimize=True)
    leverage = np.clip(h * hess, 0.0, 1.0)
    denominator = np.maximum(1.0 - leverage, MIN_DENOMINATOR)
    return eta + h * grad / denominator, leverage


def segment_indicators(res: Any) -> np.ndarray:
    """A basis of the column space of the fit's segment design (no labels, no coding).

    The leverages H_ii do not depend on the basis of X's column space, so instead of
    the refit's reference-coded design (``selected_design()``, whose column names cost
    more than the rest of ALO along a path) this takes every segment's indicator of
    every block, the intercept and the dense columns: the same span (the reference
    indicator of a block is the constant minus its other indicators; a by-group chain's
    are the level indicators of g, carried by the term that keeps g's level means), made
    rank deficient on purpose — the pseudo-inverse below handles it. A segment without
    training weight gives a column that is zero on every weighted row.

    Returns
    -------
    ndarray of shape (n, k)
    """
    m = res.model
    n = int(m.design.n_obs)
    columns: list[np.ndarray] = []  # per block: the column of each of its levels
    k = 1 if m.fit_intercept else 0
    for j, block in enumerate(m.spec.blocks):
        s, e = int(m.block_ptr[j]), int(m.block_ptr[j + 1])
        if block.penalized:
            new = np.asarray(res.jumps[s:e][: block.chain_length], dtype=bool).copy()
            new[[first for first, _, _ in block.chains() if first > 0]] = True
            seg = np.cumsum(new)
            seg_of_level = np.concatenate(
                [seg, np.arange(block.chain_length, e - s) - block.chain_length + seg[-1] + 1]
            )
        else:
            seg_of_level = np.arange(e - s)
        columns.append(k + seg_of_level)
        k += int(seg_of_level.max()) + 1 if seg_of_level.size else 0
    dense = m.design.dense
    q = 0 if dense is None else int(np.asarray(dense).shape[1])
    if q == 0:
        dense = None
    X = np.zeros((n, k + q), dtype=np.float64)
    if m.fit_intercept:
        X[:, 0] = 1.0
    rows = np.arange(n)
    for j, level_col in enumerate(columns):
        X[rows, level_col[np.asarray(m.design.codes[j])]] = 1.0
    if q:
        X[:, k:] = np.asarray(dense, dtype=np.float64)
    return X


def alo_curve(path: Any) -> pd.DataFrame:
    """The approximate leave-one-out deviance at every λ of a path.

    Parameters
    ----------
    path : PathResults
        A path (``model.fit_path()``) of a GLM family.

    Returns
    -------
    DataFrame
        One row per λ: ``lam``, ``df``, ``alo_deviance`` (the mean ALO deviance per
        unit weight, Σ s d(y, μ(η̃)) / Σ s; lower is better) and ``high_leverage``
        (rows of leverage above 0.99: a segment they alone determine). ``attrs``:
        ``lam_alo``, the λ of the smallest ALO deviance.
    """
    m = path.model
    y = np.asarray(m.y, dtype=np.float64)
    w = np.asarray(m.sample_weight, dtype=np.float64)
    total = float(w.sum())
    rows = []
    for i in range(len(path)):
        res = path[i]
        eta_loo, leverage = alo_linear_predictor(res)
        with np.errstate(over="ignore", invalid="ignore"):
            deviance = float(m.family.deviance_eta(y, eta_loo, w))
        rows.append({"lam": float(path.lams[i]), "df": float(res.df),
                     "alo_deviance": deviance / total if total > 0 else np.nan,
                     "high_leverage": int(np.count_nonzero(leverage > 0.99))})  # fmt: skip
    table = pd.DataFrame(rows)
    score = table["alo_deviance"].to_numpy()
    best = int(np.nanargmin(np.where(np.isfinite(score), score, np.nan))) if np.isfinite(
        score).any() else 0  # fmt: skip
    table.attrs["lam_alo"] = float(table["lam"].iloc[best])
    return table
