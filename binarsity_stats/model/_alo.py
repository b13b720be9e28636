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

from ._results_inference import segment_of_level

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
    layout = _segment_layout(res)
    width = layout[1] + layout[2]
    if width == 0:
        return eta.copy(), np.zeros_like(eta)
    n = eta.shape[0]
    step = row_block(width)
    # A = Xᵀ diag(ℓ'') X and every row's x_iᵀ A⁺ x_i, a block of rows at a time: the
    # n × k segment design is never held whole (at 1e6 rows and 120 segments, 1 GB)
    A = np.zeros((width, width), dtype=np.float64)
    for start in range(0, n, step):
        X = _indicator_rows(res, layout, start, min(n, start + step))
        A += X.T @ (X * hess[start : start + X.shape[0], None])
    # the segment design can be rank deficient (a column of zero weight): H is the same
    # on any basis of its column space, which the pseudo-inverse gives
    A_inv = np.linalg.pinv(A, rcond=1e-12, hermitian=True)
    h = np.empty(n, dtype=np.float64)
    for start in range(0, n, step):
        X = _indicator_rows(res, layout, start, min(n, start + step))
        h[start : start + X.shape[0]] = np.einsum("ij,ij->i", X @ A_inv, X)
    leverage = np.clip(h * hess, 0.0, 1.0)
    denominator = np.maximum(1.0 - leverage, MIN_DENOMINATOR)
    return eta + h * grad / denominator, leverage


#: Rows of the segment design built at once by :func:`alo_linear_predictor`: about this
#: many floats (32 MB) whatever the number of segments.
BLOCK_FLOATS = 1 << 22


def row_block(width: int) -> int:
    """Rows per block of an n × ``width`` float matrix held :data:`BLOCK_FLOATS` at a time."""
    return max(1, BLOCK_FLOATS // max(1, int(width)))


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
    n = int(res.model.design.n_obs)
    return _indicator_rows(res, _segment_layout(res), 0, n)


def _segment_layout(res: Any) -> tuple[list[np.ndarray], int, int]:
    """Per block the segment column of each level, the count of those columns (with
    the intercept's), and the dense columns' count."""
    m = res.model
    columns: list[np.ndarray] = []  # per block: the column of each of its levels
    k = 1 if m.fit_intercept else 0
    for j, block in enumerate(m.spec.blocks):
        s, e = int(m.block_ptr[j]), int(m.block_ptr[j + 1])
        if block.penalized:
            seg_of_level = segment_of_level(block, res.jumps[s:e])
        else:
            seg_of_level = np.arange(e - s)
        columns.append(k + seg_of_level)
        k += int(seg_of_level.max()) + 1 if seg_of_level.size else 0
    dense = m.design.dense
    q = 0 if dense is None else int(np.asarray(dense).shape[1])
    return columns, k, q


def _indicator_rows(
    res: Any, layout: tuple[list[np.ndarray], int, int], start: int, stop: int
) -> np.ndarray:
    """Rows ``start:stop`` of :func:`segment_indicators`."""
    m = res.model
    columns, k, q = layout
    X = np.zeros((stop - start, k + q), dtype=np.float64)
    if m.fit_intercept:
        X[:, 0] = 1.0
    rows = np.arange(stop - start)
    for j, level_col in enumerate(columns):
        X[rows, level_col[np.asarray(m.design.codes[j][start:stop])]] = 1.0
    if q:
        X[:, k:] = np.asarray(m.design.dense[start:stop], dtype=np.float64)
    return X


def _alo_row(res: Any, lam: float, y: np.ndarray, w: np.ndarray) -> tuple[dict, float]:
    """One row of the ALO curve and the standard error of its mean deviance (the
    weighted spread of the rows' deviances over √n, as CV's band uses the folds')."""
    m = res.model
    total = float(w.sum())
    eta_loo, leverage = alo_linear_predictor(res)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        deviance = float(m.family.deviance_eta(y, eta_loo, w))
        unit = m.family.unit_deviance(y, m.family.mean(eta_loo))
    mean = deviance / total if total > 0 else np.nan
    ok = np.isfinite(unit) & (w > 0)
    se = np.nan
    if total > 0 and np.count_nonzero(ok) > 1:
        wk = w[ok] / w[ok].sum()
        spread = float(np.sqrt(wk @ (unit[ok] - wk @ unit[ok]) ** 2))
        se = spread / np.sqrt(np.count_nonzero(ok))
    row = {"lam": float(lam), "df": float(res.df), "alo_deviance": mean,
           "high_leverage": int(np.count_nonzero(leverage > 0.99))}  # fmt: skip
    return row, se


def _table(rows: list[dict]) -> pd.DataFrame:
    table = pd.DataFrame(rows)
    score = table["alo_deviance"].to_numpy()
    best = int(np.nanargmin(np.where(np.isfinite(score), score, np.nan))) if np.isfinite(
        score).any() else 0  # fmt: skip
    table.attrs["lam_alo"] = float(table["lam"].iloc[best])
    table.attrs["best_index"] = best
    return table


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
        ``lam_alo``, the λ of the smallest ALO deviance, and ``best_index``, its
        position.
    """
    m = path.model
    y = np.asarray(m.y, dtype=np.float64)
    w = np.asarray(m.sample_weight, dtype=np.float64)
    return _table([_alo_row(path[i], path.lams[i], y, w)[0] for i in range(len(path))])


def curve_turned(scores: list[float], ses: list[float], patience: int) -> bool:
    """Whether the last ``patience`` ALO deviances all lie above the best one plus its
    standard error (the rule of ``fit_cv``'s early stopping, with the rows' spread in
    place of the folds')."""
    loss = np.asarray(scores, dtype=np.float64)
    if loss.size <= patience or not np.all(np.isfinite(loss[-patience:])):
        return False
    best = int(np.nanargmin(np.where(np.isfinite(loss), loss, np.nan)))
    if best >= loss.size - patience:
        return False
    band = loss[best] + (ses[best] if np.isfinite(ses[best]) else 0.0)
    return bool(np.all(loss[-patience:] > band))


def alo_walk(
    model: Any, opts: dict[str, Any], patience: int = 5
) -> tuple[np.ndarray, list, pd.DataFrame]:
    """Solve down ``model``'s default λ grid, scoring ALO after each λ, and stop once the
    curve has turned (:func:`curve_turned`): ``fit(lam="alo")`` without the tail of the
    path that CV's early stopping would not solve either.

    Returns
    -------
    lams : ndarray
        The λ values solved (a prefix of the grid).
    solutions : list of Solution
        Their solutions (without η), for a ``PathResults``.
    curve : DataFrame
        As :func:`alo_curve`, for those λ.
    """
    from ..engine._path import strip_eta
    from ._results import BinarsityResults

    grid = model.lambda_grid()
    prepared = model.prepare()
    y = np.asarray(model.y, dtype=np.float64)
    w = np.asarray(model.sample_weight, dtype=np.float64)
    sols: list = []
    rows: list[dict] = []
    scores: list[float] = []
    ses: list[float] = []
    prev = None
    for lam in grid:
        sol = strip_eta(prepared.solve(float(lam), warm_start=prev, **opts))
        sols.append(sol)
        prev = sol
        row, se = _alo_row(BinarsityResults(model, sol), lam, y, w)
        rows.append(row)
        scores.append(row["alo_deviance"])
        ses.append(se)
        if curve_turned(scores, ses, patience):
            break
    return grid[: len(sols)], sols, _table(rows)
