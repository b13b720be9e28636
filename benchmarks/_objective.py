"""Our objective (design.md §1) and its KKT check (§2), evaluated from bin codes.

Both sides of every comparison are scored by these functions on the same codes, so a
solution from tick and one from binarsity_stats are compared on one objective:

    F(β0, θ) = (1/n) Σ_i [log(1 + e^{η_i}) − y_i η_i] + λ Σ_j Σ_{k≥2} |θ_jk − θ_j,k−1|,
    η_i = β0 + Σ_j θ_j[c_ij],  y_i ∈ {0, 1}

(uniform penalty weights, no sample weights). F is invariant to θ_j ← θ_j + c·1,
β0 ← β0 − c, so the centring constraint need not hold for the value to be right.
"""

from __future__ import annotations

import numpy as np


def linear_predictor(
    codes: np.ndarray, block_ptr: np.ndarray, coef: np.ndarray, intercept: float
) -> np.ndarray:
    """η_i = β0 + Σ_j θ_j[c_ij] as a gather per feature (design.md §3).

    Parameters
    ----------
    codes : ndarray of shape (p, n)
        Bin codes.
    block_ptr : ndarray of shape (p + 1,)
        Block offsets into ``coef``.
    coef : ndarray of shape (d,)
        Concatenated θ.
    intercept : float
        β0.

    Returns
    -------
    ndarray of shape (n,)
    """
    eta = np.full(codes.shape[1], float(intercept))
    for j in range(codes.shape[0]):
        eta += coef[block_ptr[j] : block_ptr[j + 1]][codes[j]]
    return eta


def total_variation(coef: np.ndarray, block_ptr: np.ndarray) -> float:
    """Σ_j Σ_{k≥2} |θ_jk − θ_j,k−1| (uniform weights)."""
    diffs = np.abs(np.diff(coef))
    # drop the differences that straddle two blocks
    diffs[block_ptr[1:-1] - 1] = 0.0
    return float(diffs.sum())


def binomial_objective(
    codes: np.ndarray,
    block_ptr: np.ndarray,
    y: np.ndarray,
    coef: np.ndarray,
    intercept: float,
    lam: float,
) -> float:
    """Value of F (module docstring) for the binomial family, uniform weights.

    Parameters
    ----------
    codes, block_ptr : ndarray
        Bin codes (p, n) and block offsets (p + 1,).
    y : ndarray of shape (n,)
        Labels in {0, 1}.
    coef : ndarray of shape (d,)
        θ.
    intercept : float
        β0.
    lam : float
        λ.

    Returns
    -------
    float
    """
    eta = linear_predictor(codes, block_ptr, coef, intercept)
    loss = np.mean(np.logaddexp(0.0, eta) - y * eta)
    return float(loss + lam * total_variation(coef, block_ptr))


def binomial_kkt(
    codes: np.ndarray,
    block_ptr: np.ndarray,
    y: np.ndarray,
    coef: np.ndarray,
    intercept: float,
    lam: float,
    jump_tol: float = 1e-9,
) -> dict[str, float]:
    """KKT violation of (β0, θ) for F at λ (design.md §2, uniform weights).

    With g_jk = (1/n) Σ_{i: c_ij = k} (σ(η_i) − y_i) and S_jl = Σ_{k≥l} g_jk, an
    optimum has S_j1 = 0, S_jl = −λ sign(θ_jl − θ_j,l−1) at a jump and |S_jl| ≤ λ
    elsewhere.

    Parameters
    ----------
    codes, block_ptr, y, coef, intercept, lam
        As in :func:`binomial_objective`.
    jump_tol : float
        |θ_jl − θ_j,l−1| above this counts as a jump.

    Returns
    -------
    dict
        ``intercept_grad`` (|S_j1|, the same for every j), ``max_violation`` (over all
        l ≥ 2, relative to λ), ``n_jumps``, ``lam_hat`` (median |S_jl| over the jumps:
        the λ the solution is optimal for, whatever the solver called it) and
        ``lam_hat_q10``/``lam_hat_q90``.
    """
    eta = linear_predictor(codes, block_ptr, coef, intercept)
    r = 1.0 / (1.0 + np.exp(-eta)) - y
    n = r.shape[0]
    viol, at_jumps, s1 = [], [], 0.0
    for j in range(codes.shape[0]):
        theta = coef[block_ptr[j] : block_ptr[j + 1]]
        g = np.bincount(codes[j], weights=r, minlength=theta.size) / n
        S = np.cumsum(g[::-1])[::-1]
        s1 = max(s1, abs(S[0]))
        jump = np.diff(theta)
        tail = S[1:]
        is_jump = np.abs(jump) > jump_tol
        v = np.where(is_jump, np.abs(tail + lam * np.sign(jump)), np.maximum(np.abs(tail) - lam, 0))
        viol.append(v)
        at_jumps.append(np.abs(tail[is_jump]))
    v = np.concatenate(viol)
    a = np.concatenate(at_jumps)
    q = np.quantile(a, [0.1, 0.5, 0.9]) if a.size else [np.nan] * 3
    return {
        "intercept_grad": float(s1),
        "max_violation": float(v.max() / lam) if lam > 0 else float(v.max()),
        "n_jumps": int(a.size),
        "lam_hat": float(q[1]),
        "lam_hat_q10": float(q[0]),
        "lam_hat_q90": float(q[2]),
    }
