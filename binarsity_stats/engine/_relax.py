"""Remedies for spurious steps: the relaxed fit and the adaptive weights (engine layer).

The fused lasso over-segments: with two true cut-points a penalised step function
typically has several more, because the penalty that removes noise also shrinks the
true jumps, and the loss then buys part of them back with small extra steps. Two
classical remedies, both on top of a penalised fit θ̂(λ):

* **Relaxed fit** (Meinshausen 2007; glmnet's ``relax=TRUE``, Hastie, Tibshirani and
  Tibshirani 2020). Keep the segments of θ̂(λ) (its jump set, with every zero-weight
  edge — a missing level, a ``C()`` level — a boundary too) and refit the GLM on them
  without penalty: θ̃(λ). The relaxed fit is the mix, for γ ∈ [0, 1],

      θ_γ = γ θ̂(λ) + (1 − γ) θ̃(λ)   (the same mix of β0 and the dense coefficients),

  glmnet's γ: 1 is the penalised fit, 0 the unpenalised refit on its segments. The mix
  keeps the jump set of θ̂ (both have their steps there) and the constraints
  n_jᵀθ_j = 0 (both satisfy them). γ is chosen by CV jointly with λ.
* **Adaptive weights** (Zou 2006, the adaptive lasso; for fused penalties Rinaldo 2009,
  Viallon et al. 2013): a second stage with weights ω_jk / |θ̂_jk − θ̂_j,k−1|^power from a
  first-stage fit. Large first-stage jumps are penalised less (less shrinkage of the
  true steps), small ones more; an edge the first stage fused gets an infinite weight,
  represented by :data:`FUSED_FACTOR` times the largest finite adaptive weight (it
  stays fused at every λ of a path).

Everything here works on a :class:`~binarsity_stats.design._design.BinnedDesign` and engine
``Solution`` objects; the modelling layer (``BinarsityResults.relax``,
``BinarsityModel.adaptive``) calls it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..penalty._blocks import get_kind
from ..design._design import BinnedDesign
from ..core._statistics import coefficient_unit, kept_cuts

__all__ = [
    "segment_maps",
    "unpenalized_on_segments",
    "mix_solutions",
    "adaptive_weights",
    "check_gamma",
    "GAMMAS",
    "FUSED_FACTOR",
]

#: glmnet's default γ grid of ``cv.glmnet(relax=TRUE)``.
GAMMAS = (0.0, 0.25, 0.5, 0.75, 1.0)

#: An edge fused by the first stage gets this many times the largest finite adaptive
#: weight (its weight is infinite in theory; a finite one keeps λ_max and the solvers
#: unchanged, and it stays fused down to λ_max / FUSED_FACTOR).
FUSED_FACTOR = 1e6

def check_gamma(gamma: Any, name: str = "gamma") -> float:
    """γ of a relaxed fit: a real number in [0, 1].

    Parameters
    ----------
    gamma : float
        The value to check.
    name : str, default="gamma"
        Argument name for the error message.

    Returns
    -------
    float
    """
    if isinstance(gamma, bool) or not isinstance(gamma, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number in [0, 1]; got {gamma!r}.")
    g = float(gamma)
    if not 0.0 <= g <= 1.0:
        raise ValueError(f"{name} must be in [0, 1]; got {gamma!r}.")
    return g


def _jumps(
    theta: np.ndarray, weights: np.ndarray, block_ptr: np.ndarray, unit: float = 1.0
) -> np.ndarray:
    """True at level k when a positive-weight edge (k−1, k) is a kept cut
    (``_statistics.kept_cuts``: the results' definition of a jump)."""
    return kept_cuts(theta, block_ptr, np.asarray(weights) > 0, unit)


def segment_maps(
    theta: np.ndarray, weights: np.ndarray, block_ptr: np.ndarray, unit: float = 1.0
) -> list[np.ndarray]:
    """The constant segments of a penalised fit, per block: level → segment index.

    A new segment starts at every jump of a penalised edge and at every edge of weight
    0 (a missing level, the levels of a free ``C()`` block): those levels are free in
    the penalised fit, so they are free in its refit too.

    Parameters
    ----------
    theta : ndarray of shape (d,)
        The penalised levels θ̂.
    weights : ndarray of shape (d,)
        The penalty weights ω (0 at each block start).
    block_ptr : ndarray of shape (p + 1,)
        Block offsets.
    unit : float, default=1.0
        The unit of η (``_statistics.coefficient_unit``) of the jump tolerance.

    Returns
    -------
    list of ndarray of int
        ``maps[j][k]``: the segment (0, 1, … in order) of level k of block j.
    """
    theta = np.asarray(theta, dtype=np.float64)
    weights = np.asarray(weights, dtype=np.float64)
    jump = _jumps(theta, weights, block_ptr, unit)
    maps = []
    for j in range(len(block_ptr) - 1):
        s, e = int(block_ptr[j]), int(block_ptr[j + 1])
        new = np.ones(e - s, dtype=bool)
        new[1:] = jump[s + 1 : e] | (weights[s + 1 : e] == 0)
        maps.append(np.cumsum(new) - 1)
    return maps


def unpenalized_on_segments(
    design: BinnedDesign,
    y: np.ndarray,
    family: Any,
    solution: Any,
    weights: np.ndarray,
    *,
    fit_intercept: bool = True,
    tol: float = 1e-7,
    max_iter: int = 1000,
) -> Any:
    """θ̃(λ): the GLM refitted without penalty on the segments of a penalised solution.

    The segment design (one free level per segment, its constraint kept) is solved by
    the engine at λ = 0; its levels are then spread back over the original levels, so
    θ̃ has the jump set of θ̂ (or a subset) and satisfies n_jᵀθ̃_j = 0. A segment without
    training weight keeps the penalised value (nothing identifies it). A monotone
    block's segments keep its order (the refit is the isotonic one on them).

    Parameters
    ----------
    design : BinnedDesign
        The training rows (the design the penalised fit was solved on).
    y : ndarray of shape (n,)
        Response.
    family : Family
        Distribution.
    solution : Solution
        The penalised fit θ̂(λ) on ``design``.
    weights : ndarray of shape (d,)
        The penalty weights ω of that fit.
    fit_intercept : bool, default=True
        Whether the model has an intercept.
    tol, max_iter
        Solver tolerance and cap of the unpenalised solve.

    Returns
    -------
    Solution
        The unpenalised refit on the segments (``lam`` is the penalised fit's λ, so that
        it is reported at the λ that chose its segments).
    """
    from ._solvers import Prepared

    bp = design.block_ptr
    unit = coefficient_unit(family, y, design.sample_weight)
    maps = segment_maps(solution.coef, weights, bp, unit)
    seg_design = design.segments(maps, dense=design.dense)
    seg_weights = np.zeros(seg_design.n_levels)
    if design.kinds is not None and any(get_kind(k).direction for k in design.kinds):
        # a monotone block's segments stay ordered: its kind, with a positive weight on
        # every edge its chain links (λ = 0: no penalty, only the order)
        seg_kinds, sbp, k = [], seg_design.block_ptr, 0
        for j, seg in enumerate(maps):
            if seg[-1] > 0:
                kind = design.kinds[j]
                if get_kind(kind).direction:
                    first = np.searchsorted(seg, np.arange(1, int(seg[-1]) + 1))
                    seg_weights[sbp[k] + 1 : sbp[k + 1]] = weights[bp[j] + first] > 0
                    seg_kinds.append(kind)
                else:
                    seg_kinds.append("free")
                k += 1
        seg_design = seg_design.with_kinds(seg_kinds)
    prepared = Prepared.from_design(
        seg_design, y, family=family, penalty_weights=seg_weights,
        fit_intercept=fit_intercept,
    )  # fmt: skip
    sol = prepared.solve(0.0, tol=tol, max_iter=max_iter)
    theta = np.zeros(design.n_levels)
    sbp = seg_design.block_ptr
    counts = seg_design.counts
    k = 0
    for j, seg in enumerate(maps):
        s, e = int(bp[j]), int(bp[j + 1])
        if seg[-1] > 0:
            levels = sol.coef[sbp[k] : sbp[k + 1]]
            empty = counts[sbp[k] : sbp[k + 1]] <= 0
            if np.any(empty):  # nothing identifies an empty segment: keep θ̂ there
                levels = levels.copy()
                first = np.searchsorted(seg, np.flatnonzero(empty))
                levels[empty] = np.asarray(solution.coef)[s + first]
            theta[s:e] = levels[seg]
            k += 1
    return dataclasses.replace(sol, coef=theta, lam=float(solution.lam),
                               bin_counts=solution.bin_counts)  # fmt: skip


def mix_solutions(penalized: Any, unpenalized: Any, gamma: float) -> Any:
    """The relaxed solution γ θ̂ + (1 − γ) θ̃ (glmnet's γ; also β0 and dense coefficients).

    Parameters
    ----------
    penalized : Solution
        θ̂(λ).
    unpenalized : Solution
        θ̃(λ) from :func:`unpenalized_on_segments`.
    gamma : float
        In [0, 1]: 1 is the penalised fit, 0 the unpenalised refit.

    Returns
    -------
    Solution
        Coefficients mixed; ``eta`` mixed as well (η is linear in them); the
        penalised fit's λ, convergence and KKT violation (what chose the segments);
        ``objective`` is NaN (the mix optimises no single objective).
    """
    g = check_gamma(gamma)

    def mix(a, b):
        return g * np.asarray(a, dtype=np.float64) + (1.0 - g) * np.asarray(b, dtype=np.float64)

    eta = None
    if (
        getattr(penalized, "eta", None) is not None
        and getattr(unpenalized, "eta", None) is not None
    ):
        eta = mix(penalized.eta, unpenalized.eta)
    return dataclasses.replace(
        penalized,
        coef=mix(penalized.coef, unpenalized.coef),
        dense_coef=mix(penalized.dense_coef, unpenalized.dense_coef),
        intercept=float(g * penalized.intercept + (1.0 - g) * unpenalized.intercept),
        objective=float("nan"),
        converged=bool(penalized.converged and unpenalized.converged),
        eta=eta,
    )


def adaptive_weights(
    weights: np.ndarray,
    theta: np.ndarray,
    block_ptr: np.ndarray,
    power: float = 1.0,
    unit: float = 1.0,
) -> np.ndarray:
    """Second-stage weights ω_jk / |θ̂_jk − θ̂_j,k−1|^power (the adaptive lasso's).

    Parameters
    ----------
    weights : ndarray of shape (d,)
        The first stage's ω (edges of weight 0 stay 0: free levels stay free).
    theta : ndarray of shape (d,)
        The first-stage levels θ̂.
    block_ptr : ndarray of shape (p + 1,)
        Block offsets.
    power : float, default=1
        The exponent (Zou's γ; 1 is the usual choice).
    unit : float, default=1.0
        The unit of η (``_statistics.coefficient_unit``): jumps below its tolerance are
        fused edges.

    Returns
    -------
    ndarray of shape (d,)
        The adaptive weights; an edge the first stage fused gets :data:`FUSED_FACTOR`
        times the largest finite adaptive weight (1 when the first stage fused every
        edge), i.e. it stays fused.
    """
    if isinstance(power, bool) or not isinstance(power, (int, float, np.integer, np.floating)):
        raise TypeError(f"power must be a positive number; got {power!r}.")
    if not (np.isfinite(power) and power > 0):
        raise ValueError(f"power must be a positive number; got {power!r}.")
    w = np.asarray(weights, dtype=np.float64)
    theta = np.asarray(theta, dtype=np.float64)
    if theta.shape != w.shape:
        raise ValueError(f"theta has shape {theta.shape} but the weights {w.shape}.")
    jump = _jumps(theta, w, block_ptr, unit)
    diff = np.zeros_like(theta)
    diff[1:] = np.abs(np.diff(theta))
    out = np.zeros_like(w)
    out[jump] = w[jump] / diff[jump] ** float(power)
    fused = (w > 0) & ~jump
    top = float(out[jump].max()) if np.any(jump) else 1.0
    out[fused] = FUSED_FACTOR * top
    out[np.asarray(block_ptr[:-1], dtype=np.intp)] = 0.0
    return out


def relaxed_path_scores(
    prepared: Any,
    design: BinnedDesign,
    y: np.ndarray,
    family: Any,
    weights: np.ndarray,
    lams: np.ndarray,
    gammas: Sequence[float],
    held_out: tuple,
    score: Any,
    *,
    fit_intercept: bool,
    opts: dict[str, Any],
) -> np.ndarray:
    """Held-out scores of the relaxed fits of one fold: shape (len(gammas), len(lams)).

    The penalised path is solved on the fold's training rows with warm starts; for each
    λ the unpenalised refit on its segments is computed once (and reused while the jump
    set does not change) and every γ mix is scored on the held-out rows.

    Parameters
    ----------
    prepared : Prepared
        The fold's training problem.
    design : BinnedDesign
        The fold's training rows.
    y : ndarray
        The fold's training response.
    family : Family
        Distribution.
    weights : ndarray of shape (d,)
        ω.
    lams : ndarray of shape (m,)
        The λ grid, decreasing.
    gammas : sequence of float
        The γ values.
    held_out : tuple
        What ``score`` reads.
    score : callable
        ``score(solution, held_out) -> float``.
    fit_intercept : bool
        Whether the model has an intercept.
    opts : dict
        ``solver``, ``tol``, ``max_iter`` of the fold fits.

    Returns
    -------
    ndarray of shape (len(gammas), len(lams))
    """
    out = np.empty((len(gammas), len(lams)))
    unit = coefficient_unit(family, y, design.sample_weight)
    warm = None
    cache: dict[bytes, Any] = {}
    for i, lam in enumerate(lams):
        sol = prepared.solve(float(lam), warm_start=warm, **opts)
        warm = sol
        maps = segment_maps(sol.coef, weights, design.block_ptr, unit)
        key = np.concatenate(maps).tobytes() if maps else b""
        unpen = cache.get(key)
        if unpen is None:
            unpen = unpenalized_on_segments(
                design, y, family, sol, weights, fit_intercept=fit_intercept,
                tol=opts.get("tol", 1e-7), max_iter=opts.get("max_iter", 1000),
            )  # fmt: skip
            cache = {key: unpen}  # jump sets change along the path; keep the last
        for g, gamma in enumerate(gammas):
            out[g, i] = score(mix_solutions(sol, unpen, gamma), held_out)
    return out
