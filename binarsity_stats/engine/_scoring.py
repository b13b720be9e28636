"""Held-out scores of cross-validation and the choice of λ.

The criteria (:data:`SCORINGS`: deviance, mse, AUC, Harrell's concordance), the score of
one held-out fold (:func:`score`, :func:`weighted_auc`), the mean and standard error
over folds (:func:`cv_mean_se`, NaN-aware), the best mean and the one-standard-error
rule (:func:`select_lambda`) and the early-stopping tests of the walk
(:func:`curve_turned`, :func:`best_is_last`) — one definition for in-memory, estimator
and Dask cross-validation.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "HIGHER_IS_BETTER",
    "CV_TIE_RTOL",
    "best_position",
    "SCORINGS",
    "best_is_last",
    "cv_mean_se",
    "select_lambda",
    "curve_turned",
    "score",
    "weighted_auc",
    "check_scoring",
]


#: Held-out criteria of cross-validation.
SCORINGS = ("deviance", "mse", "auc", "concordance")

# criteria where a higher held-out score is better (the others are losses)
HIGHER_IS_BETTER = ("auc", "concordance")

#: CV means within this relative distance of the best are ties: the rounding of the fold
#: fits and of the held-out sums is ~1e-15 relative, so differences below 1e-12 carry no
#: information — they differ between CPUs and BLAS kernels, and between weights and the
#: repeated rows they stand for. The largest λ among ties is chosen (glmnet's rule for
#: exact ties: ``lambda.min = max(lambda[cvm <= min(cvm)])``).
CV_TIE_RTOL = 1e-12

def check_scoring(scoring: Any, family: Any, y: np.ndarray) -> str:
    """A held-out criterion that fits the family and the response.

    Parameters
    ----------
    scoring : {"deviance", "mse", "auc", "concordance"}
        The argument.
    family : Family
        Distribution (``"auc"`` needs a binary one).
    y : ndarray of shape (n,)
        Response (``"auc"`` needs 0/1 values, not proportions).

    Returns
    -------
    str
        ``scoring``.
    """
    if scoring not in SCORINGS:
        raise ValueError(f"scoring must be one of {SCORINGS}; got {scoring!r}.")
    if getattr(family, "survival", False) and scoring not in ("deviance", "concordance"):
        raise ValueError(
            f"scoring={scoring!r} does not apply to family='cox'; use scoring='deviance' "
            "(the partial-likelihood deviance, glmnet's coxnet rule) or 'concordance' "
            "(Harrell's C)."
        )
    if scoring == "concordance" and not getattr(family, "survival", False):
        raise ValueError("scoring='concordance' (Harrell's C) needs family='cox'.")
    if scoring == "auc" and not family.binary:
        raise ValueError("scoring='auc' needs family='binomial'.")
    if scoring == "auc" and not np.all((y == 0) | (y == 1)):
        raise ValueError("scoring='auc' needs a 0/1 response; y holds proportions.")
    return scoring

def best_is_last(fold_scores: np.ndarray, sign: float) -> bool:
    """Whether the best mean score is at the last λ evaluated (the grid may end too soon).

    Parameters
    ----------
    fold_scores : ndarray of shape (K, m)
        Scores of the first m λ values.
    sign : float
        1 when lower scores are better, −1 when higher are (AUC).

    Returns
    -------
    bool
        True when the last column has the best finite mean.
    """
    mean, _ = cv_mean_se(fold_scores)
    loss = sign * mean
    if not np.any(np.isfinite(loss)):
        return False
    return best_position(loss) == loss.shape[0] - 1


def best_position(loss: np.ndarray) -> int:
    """Position of the best (smallest) loss on a decreasing grid, ties to the largest λ.

    Parameters
    ----------
    loss : ndarray of shape (m,)
        CV means, lower is better (NaN: undefined); at least one finite.

    Returns
    -------
    int
        The smallest position whose loss is within ``CV_TIE_RTOL`` (relative) of the
        minimum.
    """
    loss = np.asarray(loss, dtype=np.float64)
    best = loss[int(np.nanargmin(loss))]
    return int(np.flatnonzero(loss <= best + CV_TIE_RTOL * abs(best))[0])

def cv_mean_se(fold_scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean over folds and its standard error (std / sqrt(K)) per λ, NaN-aware.

    Parameters
    ----------
    fold_scores : ndarray of shape (K, m)
        Held-out score of every fold at every λ (NaN where undefined).

    Returns
    -------
    mean, se : ndarray of shape (m,)
        NaN mean where no fold is finite; se 0 where fewer than two folds are.
    """
    finite = np.isfinite(fold_scores)
    k = finite.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(k > 0, np.nansum(fold_scores, axis=0) / np.maximum(k, 1), np.nan)
        dev = np.where(finite, fold_scores - mean, 0.0)
        sd = np.sqrt(np.sum(dev**2, axis=0) / np.maximum(k - 1, 1))
    return mean, np.where(k >= 2, sd / np.sqrt(np.maximum(k, 1)), 0.0)

def select_lambda(fold_scores: np.ndarray, scoring: str) -> tuple:
    """The best mean score and the one-standard-error rule on a decreasing grid.

    Parameters
    ----------
    fold_scores : ndarray of shape (K, m)
        Held-out scores, the grid decreasing.
    scoring : {"deviance", "mse", "auc", "concordance"}
        AUC is maximised, the others minimised.

    Returns
    -------
    mean, se : ndarray of shape (m,)
        From :func:`cv_mean_se`.
    idx_min : int
        Position of the best mean (of the largest λ among means equal to the best up
        to ``CV_TIE_RTOL``: :func:`best_position`).
    idx_1se : int
        Smallest position (largest λ) whose mean is within one standard error of the
        best.

    Raises
    ------
    ValueError
        If the score is undefined on every fold at every λ.
    """
    fold_scores = np.asarray(fold_scores, dtype=np.float64)
    if not np.any(np.isfinite(fold_scores)):
        # e.g. scoring="auc" when no held-out fold contains both classes
        raise ValueError(
            f"scoring={scoring!r} is undefined on every fold (for 'auc' each held-out "
            "fold needs both classes, for 'concordance' a comparable pair); use fewer "
            "folds or scoring='deviance'."
        )
    mean, se = cv_mean_se(fold_scores)
    sign = -1.0 if scoring in HIGHER_IS_BETTER else 1.0  # minimise sign * score
    loss = sign * mean
    idx_min = best_position(loss)
    bound = loss[idx_min] + se[idx_min]
    ok = np.flatnonzero(loss <= bound)
    return mean, se, idx_min, int(ok.min())

def curve_turned(fold_scores: np.ndarray, sign: float, patience: int) -> bool:
    """Whether the last ``patience`` λ values all score outside the 1-SE band of the best.

    Parameters
    ----------
    fold_scores : ndarray of shape (K, m)
        Scores of the first m λ values.
    sign : float
        1 when lower scores are better, −1 when higher are (AUC).
    patience : int
        How many λ values.

    Returns
    -------
    bool
        True when the walk can stop. The band is the best mean plus its standard error,
        as for ``lam_1se``.
    """
    m = fold_scores.shape[1]
    if m <= patience:
        return False
    mean, se = cv_mean_se(fold_scores)
    loss = sign * mean
    if not np.all(np.isfinite(loss[-patience:])):
        return False
    best = best_position(loss)
    if best >= m - patience:
        return False
    return bool(np.all(loss[-patience:] > loss[best] + se[best]))

def weighted_auc(y: np.ndarray, score_: np.ndarray, sw: np.ndarray) -> float:
    """Weighted ROC AUC (ties count one half); NaN when a class is absent.

    Parameters
    ----------
    y : ndarray of shape (n,)
        0/1 labels.
    score_ : ndarray of shape (n,)
        Scores (higher means more likely 1).
    sw : ndarray of shape (n,)
        Weights.

    Returns
    -------
    float
        The AUC in [0, 1].
    """
    pos = y > 0.5
    wp, wn = float(np.sum(sw[pos])), float(np.sum(sw[~pos]))
    if wp <= 0 or wn <= 0:
        return float("nan")
    uniq, inv = np.unique(score_, return_inverse=True)
    neg_w = np.bincount(inv, weights=np.where(pos, 0.0, sw), minlength=uniq.size)
    pos_w = np.bincount(inv, weights=np.where(pos, sw, 0.0), minlength=uniq.size)
    below = np.concatenate([[0.0], np.cumsum(neg_w)[:-1]])
    return float(np.sum(pos_w * (below + 0.5 * neg_w)) / (wp * wn))

def score(family: Any, scoring: str, y: np.ndarray, eta: np.ndarray, sw: np.ndarray) -> float:
    """Held-out score of a fit: mean deviance, MSE of the mean, or AUC.

    Parameters
    ----------
    family : Family
        Distribution.
    scoring : {"deviance", "mse", "auc", "concordance"}
        Criterion.
    y, eta, sw : ndarray of shape (n,)
        Response, linear predictor (offset included) and weights.

    Returns
    -------
    float
        The score (lower is better, except for AUC).
    """
    if scoring == "auc":
        return weighted_auc(y, eta, sw)
    W = float(sw.sum())
    if scoring == "mse":
        mu = family.mean(eta)
        return float(np.sum(sw * (y - mu) ** 2) / W)
    # from η, not from μ = g⁻¹(η): exact however large |η| is
    return family.deviance_eta(y, eta, sw) / W
