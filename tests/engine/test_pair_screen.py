"""Pair screening by the grid block's λ_max at a main-effects fit (design.md §10).

What is proven here: on simulated data with a true two-feature step interaction the true
pair is ranked first, far ahead of the others (at 1e4 and 1e5 rows); with no interaction
no pair's score reaches the main-effects fit's λ (no pair would enter); a pair's score is
its grid's λ_max built by hand, the same whichever feature comes first (swapping the grid's
axes), and bad input is refused by name.
"""

from __future__ import annotations

import numpy as np
import pytest

from binarsity_stats.engine._pair_screen import pair_screening
from binarsity_stats.engine._solvers import lambda_max, solve
from binarsity_stats.penalty._grid import grid_block, grid_lambda_max, grid_weights
from binarsity_stats.penalty._penalty import penalty_weights


def _fit(seed, interaction, n=10_000, p=5, K=8):
    rng = np.random.default_rng(seed)
    x = rng.random((p, n))
    codes = np.floor(x * K).astype(np.uint8)
    y = (0.8 * (x[0] > 0.3) - 0.5 * (x[2] > 0.6)
         + interaction * ((x[1] > 0.5) & (x[3] > 0.4)) + rng.normal(size=n))  # fmt: skip
    bp = np.arange(0, K * p + 1, K)
    counts = np.concatenate([np.bincount(c, minlength=K) for c in codes]).astype(float)
    w = penalty_weights("theory", counts, bp)
    lam = 0.05 * lambda_max(codes, bp, y, penalty_weights=w)
    sol = solve(codes, bp, y, lam=lam, penalty_weights=w)
    grad = (sol.eta - y) / n  # gaussian: b'(η) − y, averaged
    return codes, np.full(p, K), grad, lam


@pytest.mark.parametrize("seed", range(3))
def test_true_pair_is_ranked_first(seed):
    codes, K, grad, lam = _fit(seed, 1.0)
    scr = pair_screening(codes, K, grad)
    assert tuple(scr.pairs[0]) == (1, 3)
    assert scr.scores[0] > 3 * scr.scores[1]
    assert scr.scores[0] > lam  # the pair would enter the fit at its λ
    assert len(scr.pairs) == 10 and np.all(np.diff(scr.scores) <= 0)


def test_true_pair_first_at_1e5_rows():
    codes, K, grad, lam = _fit(7, 0.3, n=100_000, p=4)
    scr = pair_screening(codes, K, grad)
    assert tuple(scr.pairs[0]) == (1, 3)
    assert scr.scores[0] > 2 * scr.scores[1]


@pytest.mark.parametrize("seed", range(3))
def test_no_pair_enters_without_interaction(seed):
    codes, K, grad, lam = _fit(seed, 0.0)
    scr = pair_screening(codes, K, grad)
    assert scr.scores[0] < lam


def test_score_is_the_grid_lambda_max_and_symmetric():
    rng = np.random.default_rng(11)
    n = 3000
    codes = np.stack([rng.integers(0, 5, n), rng.integers(0, 4, n)]).astype(np.uint8)
    codes[1, codes[0] == 4] = 0  # empty cells
    grad = rng.normal(size=n) / n
    s = rng.exponential(size=n)
    scr = pair_screening(codes, [5, 4], grad, s)
    cell = codes[0].astype(int) * 4 + codes[1]
    N = np.bincount(cell, s, 20)
    G = np.bincount(cell, grad, 20)
    wa, wb = grid_weights(N.reshape(5, 4), "theory")
    block = grid_block(N.reshape(5, 4) > 0, (5, 4), wa, wb)
    assert block.n_cells == 17 and scr.n_cells[0] == 17
    ref = grid_lambda_max(block, G[block.cells], N[block.cells])
    np.testing.assert_allclose(scr.scores[0], ref, rtol=1e-9)
    # the axes swapped: the transposed grid has the same λ_max
    swapped = pair_screening(codes[::-1].copy(), [4, 5], grad, s)
    np.testing.assert_allclose(swapped.scores[0], ref, rtol=1e-6)
    assert scr.table(["a", "b"])[0][:2] == ("a", "b")


def test_bad_input_is_named():
    codes = np.zeros((2, 10), np.uint8)
    with pytest.raises(ValueError, match="n_bins"):
        pair_screening(codes, [2], np.zeros(10))
    with pytest.raises(ValueError, match="feature 1"):
        pair_screening(np.array([[0, 1], [0, 3]], np.uint8), [2, 3], np.zeros(2))
    with pytest.raises(ValueError, match="grad"):
        pair_screening(codes, [2, 2], np.zeros(9))
    with pytest.raises(ValueError, match="pairs"):
        pair_screening(codes, [2, 2], np.zeros(10), pairs=[(0, 0)])
