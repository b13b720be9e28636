"""Offsets are validated once per prepared problem, not at every KKT check (issue 27)."""

import numpy as np
import pytest

from binarsity_stats.kernels._histogram import bin_sums_all
from binarsity_stats.penalty import _penalty
from binarsity_stats.engine._solvers import Prepared, lambda_max


def _problem(n=2_000, p=5, seed=0):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(5, 20, p)
    codes = np.ascontiguousarray(np.stack([rng.integers(0, s, n) for s in sizes]).astype(np.uint8))
    bp = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
    eta = 0.3 * np.sin(codes[0]) + 0.1 * codes[1]
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-eta))).astype(float)
    return codes, bp, y


def test_a_path_of_solves_does_not_revalidate_the_offsets(monkeypatch):
    codes, bp, y = _problem()
    counts = np.zeros(bp[-1])
    bin_sums_all(codes, bp, np.ones(codes.shape[1]), counts)
    w = _penalty.penalty_weights("theory", counts, bp)
    lmax = lambda_max(codes, bp, y, family="binomial", penalty_weights=w)
    prep = Prepared(codes, bp, y, family="binomial", penalty_weights=w)
    calls = []
    original = _penalty.check_block_ptr

    def counting(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(_penalty, "check_block_ptr", counting)
    ws = None
    for lam in lmax * np.geomspace(0.9, 0.02, 8):
        ws = prep.solve(lam, warm_start=ws)
        assert ws.converged
    # before issue 27: a full validation of the offsets at every KKT check (~3 per solve)
    assert calls == []


def test_the_public_suffix_sums_still_validate():
    with pytest.raises(ValueError):
        _penalty.block_suffix_sums(np.ones(5), np.array([0, 3, 6]))
    with pytest.raises(ValueError):
        _penalty.block_suffix_sums(np.ones(5), np.array([0, 3, 2, 5]))
    S = _penalty.block_suffix_sums(np.arange(5.0), np.array([0, 2, 5]))
    np.testing.assert_array_equal(S, [1.0, 1.0, 9.0, 7.0, 4.0])
