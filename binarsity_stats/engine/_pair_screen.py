"""Pair screening (design.md §10): rank pairs of binned features by their grid λ_max.

At a fitted main-effects model, a pair term ``bin(a):bin(b)`` absent from the fit has
θ = 0; the smallest λ at which that empty block still meets its optimality condition is
the pair block's λ_max (``penalty/_grid.grid_lambda_max``) at the fit's gradient. It is
the KKT violation of adding the pair, in λ's own units: a principled analogue of EBM's
FAST, and the score by which pairs are chosen (``interactions=k``, ``rank_pairs``).

Per pair the cost is one pass over two rows of codes (``design/_design.PairTables``:
the kernel ``_histogram.pair_sums2`` sums the working gradient and the sample weights
per cell k·K_b + l) and a small LP on the K_a × K_b grid. :func:`screen_columns` bins
raw columns first, each axis as ``bin(a, n_bins)`` of a pair term bins it (the
Binarizer's weighted quantiles, the same cut points as ``bin(a, n):bin(b, m)``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..core._index_checks import code_dtype
from ..design._binarizer import BinarizerCore
from ..design._design import PairTables
from ..penalty._grid import grid_block, grid_lambda_max, grid_weights

__all__ = ["PairScreen", "pair_screening", "screen_columns"]


@dataclass
class PairScreen:
    """Pairs of features ranked by their grid λ_max, largest first.

    Attributes
    ----------
    pairs : ndarray of shape (m, 2)
        Feature indices (a, b), a < b, in decreasing order of score.
    scores : ndarray of shape (m,)
        λ_max of each pair's grid block at the given gradient.
    n_cells : ndarray of shape (m,)
        Observed cells of each pair's grid (its parameters).
    """

    pairs: NDArray[np.intp]
    scores: NDArray[np.float64]
    n_cells: NDArray[np.intp]

    def table(self, names: Sequence[str] | None = None) -> list[tuple[str, str, float, int]]:
        """Rows (first, second, score, cells), best first; features named by ``names``."""
        label = (lambda j: str(j)) if names is None else (lambda j: str(names[j]))
        return [
            (label(a), label(b), float(s), int(c))
            for (a, b), s, c in zip(self.pairs, self.scores, self.n_cells)
        ]


def pair_screening(
    codes: ArrayLike,
    n_bins: ArrayLike,
    grad: ArrayLike,
    sample_weight: ArrayLike | None = None,
    *,
    pairs: Sequence[tuple[int, int]] | None = None,
    weights: str = "theory",
) -> PairScreen:
    """Score every pair of binned features by its pair block's λ_max at a fit.

    Parameters
    ----------
    codes : array_like of int, shape (p, n)
        Bin codes of the p binned features (one row per feature).
    n_bins : array_like of int, shape (p,)
        K_j, the number of bins of each feature (codes are in [0, K_j)).
    grad : array_like of shape (n,)
        Per-row gradient of the average loss with respect to η at the main-effects fit,
        s_i (b'(η_i) − y_i) / W (its cell sums are the pair block's gradient).
    sample_weight : array_like of shape (n,), optional
        s_i ≥ 0, for the cell counts of the margins and the weights. Default 1.
    pairs : sequence of (int, int), optional
        The pairs to score. Default: every pair a < b.
    weights : {"theory", "balanced", "uniform"}, default="theory"
        Edge weights of each grid (``grid_weights``).

    Returns
    -------
    PairScreen

    Raises
    ------
    ValueError
        If shapes disagree, a code is outside its feature's bins, or a pair names a
        feature that does not exist or the same feature twice.
    """
    c = np.asarray(codes)
    if c.ndim != 2 or c.dtype.kind not in "iu":
        raise ValueError(f"codes must be a 2-D array of integers (p, n); got {c.dtype} {c.shape}.")
    p, n = c.shape
    K = np.asarray(n_bins, dtype=np.int64)
    if K.shape != (p,) or np.any(K < 1):
        raise ValueError(f"n_bins must be {p} positive integers (one per row of codes).")
    if n and (np.any(c.min(axis=1) < 0) or np.any(c.max(axis=1) >= K)):
        bad = int(np.flatnonzero((c.min(axis=1) < 0) | (c.max(axis=1) >= K))[0])
        raise ValueError(f"codes of feature {bad} are outside [0, n_bins[{bad}]).")
    g = np.asarray(grad, dtype=np.float64)
    if g.shape != (n,) or not np.all(np.isfinite(g)):
        raise ValueError(f"grad must be {n} finite values (one per row).")
    s = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    if s.shape != (n,) or not np.all(np.isfinite(s)) or np.any(s < 0):
        raise ValueError(f"sample_weight must be {n} finite non-negative values.")
    if pairs is None:
        todo = [(a, b) for a in range(p) for b in range(a + 1, p)]
    else:
        todo = []
        for a, b in pairs:
            a, b = int(a), int(b)
            if not (0 <= a < p and 0 <= b < p) or a == b:
                raise ValueError(f"pairs: ({a}, {b}) is not a pair of two of the {p} features.")
            todo.append((min(a, b), max(a, b)))
    scores = np.empty(len(todo))
    cells = np.empty(len(todo), np.intp)
    tables = PairTables(c.astype(code_dtype(int(K.max())), copy=False), K, g, s)
    for i, (a, b) in enumerate(todo):
        Ka, Kb = int(K[a]), int(K[b])
        G, N = tables.table(a, b)
        grid = N.reshape(Ka, Kb)
        wa, wb = grid_weights(grid, weights)
        block = grid_block(grid > 0, (Ka, Kb), wa, wb)
        scores[i] = grid_lambda_max(block, G[block.cells], N[block.cells])
        cells[i] = block.n_cells
    order = np.argsort(-scores, kind="stable")
    return PairScreen(
        pairs=np.asarray(todo, dtype=np.intp).reshape(-1, 2)[order],
        scores=scores[order],
        n_cells=cells[order],
    )


def screen_columns(
    columns: NDArray[np.float64],
    grad: ArrayLike,
    sample_weight: ArrayLike | None = None,
    *,
    n_bins: int = 16,
    binning_weight: ArrayLike | None = None,
    pairs: Sequence[tuple[int, int]] | None = None,
    weights: str = "balanced",
) -> tuple[PairScreen, BinarizerCore]:
    """Bin raw columns as a pair term's axes, then :func:`pair_screening`.

    Parameters
    ----------
    columns : ndarray of shape (n, p)
        The raw values of the p candidate features (finite: a pair has no missing level).
    grad : array_like of shape (n,)
        Per-row gradient of the average loss with respect to η at the fit.
    sample_weight : array_like of shape (n,), optional
        The fit's row weights s_i (cell counts of the margins and the grid weights).
    n_bins : int, default=16
        Bins per axis, learned as ``bin(a, n_bins)`` of a pair term learns them
        (weighted quantiles, ``missing="error"``).
    binning_weight : array_like of shape (n,), optional
        The weights the cut points are learned with (a formula's pair term: the user's
        ``sample_weight``, None without one).
    pairs : sequence of (int, int), optional
        Column indices of the pairs to score. Default: every pair.
    weights : {"theory", "balanced", "uniform"}, default="balanced"
        Edge weights of each grid (the fit's ``penalty_weights`` rule).

    Returns
    -------
    screen : PairScreen
    binarizer : BinarizerCore
        The axes' binning, fitted (``edges_``, ``n_bins_``: fewer than ``n_bins`` for a
        column with few values).
    """
    X = np.asarray(columns, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"columns must be a 2-D array (n, p); got shape {X.shape}.")
    binner = BinarizerCore(n_bins=int(n_bins), method="quantile", missing="error")
    codes = binner.fit(X, sample_weight=binning_weight).transform_codes(X)
    K = np.asarray(binner.n_bins_, dtype=np.intp)
    return pair_screening(codes, K, grad, sample_weight, pairs=pairs, weights=weights), binner
