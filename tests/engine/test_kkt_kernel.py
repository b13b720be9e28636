"""The per-λ checks of a path in compiled code (issue 27), against their NumPy rules.

* ``_cd_fast.kkt_blocks`` (through ``_problem.block_kkt``) is the penalty's NumPy KKT
  rule (``BinarsityPenalty.kkt_violation``) operation for operation: equal bit for bit on
  every chain kind, with and without an intercept, at λ = 0, with NaN; it refuses sizes
  and offsets it would read out of bounds with.
* ``_solvers._any_kept_cut`` answers as ``np.any(_statistics.kept_cuts(...))``.
* A CD fit and a CV give the same numbers through the kernel as through the NumPy rule.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from binarsity_stats.core._statistics import kept_cuts
from binarsity_stats.engine import _problem
from binarsity_stats.engine._problem import block_kkt
from binarsity_stats.engine._solvers import Prepared, _any_kept_cut, _inside_edges
from binarsity_stats.kernels import _cd_fast
from binarsity_stats.penalty._penalty import BinarsityPenalty

KINDS = ("tv", "free", "increasing", "decreasing")


def _random_case(rng, t):
    p = int(rng.integers(1, 6))
    sizes = rng.integers(1, 9, size=p)
    bp = np.concatenate([[0], np.cumsum(sizes)])
    d = int(bp[-1])
    kinds = [str(k) for k in rng.choice(KINDS, size=p)]
    weights = rng.random(d) * (rng.random(d) > 0.2)  # some loose (weight-0) edges
    counts = rng.random(d) * (rng.random(d) > 0.1)  # some empty bins
    pen = BinarsityPenalty(bp, weights, counts, kinds)
    theta = np.round(rng.normal(size=d), 1) * (rng.random(d) > 0.5)  # ties and jumps
    if t % 7 == 0:
        theta[rng.integers(d)] = np.nan
    g = rng.normal(size=d) * 10 ** rng.uniform(-8, 2)
    if t % 11 == 0:
        g[rng.integers(d)] = np.nan
    lam = float(rng.random()) if t % 5 else 0.0
    return pen, g, theta, lam


def test_kkt_kernel_is_the_numpy_rule_bit_for_bit():
    rng = np.random.default_rng(0)
    for t in range(1500):
        pen, g, theta, lam = _random_case(rng, t)
        for fit_intercept in (True, False):
            with np.errstate(all="ignore"):
                want = pen.kkt_violation(g, theta, lam, fit_intercept)
            got = block_kkt(pen, g, theta, lam, fit_intercept)
            assert got.shape == want.shape
            # the same operations in the same order: no tolerance is needed
            np.testing.assert_array_equal(got, want, err_msg=f"case {t}, {pen.kinds}")


def test_kkt_kernel_refuses_what_it_would_read_out_of_bounds():
    d, p = 6, 2
    g, theta, w, c = np.zeros(d), np.zeros(d), np.ones(d), np.ones(d)
    bp = np.array([0, 3, 6], dtype=np.intp)
    steps = np.zeros(p, dtype=np.uint8)
    S, N, out = np.empty(d + 1), np.empty(d + 1), np.empty(p)
    _cd_fast.kkt_blocks(g, theta, w, c, bp, steps, 0.1, True, S, N, out)  # valid
    bad = [
        dict(block_ptr=np.array([0, 3, 7], dtype=np.intp)),  # past the levels
        dict(block_ptr=np.array([0, 4, 2], dtype=np.intp)),  # decreasing
        dict(block_ptr=np.array([1, 3, 6], dtype=np.intp)),  # not from 0
        dict(theta=np.zeros(d - 1)),
        dict(S=np.empty(d)),
        dict(out=np.empty(p - 1)),
        dict(steps=np.array([0, 9], dtype=np.uint8)),  # an unknown step id
        dict(steps=np.zeros(p + 1, dtype=np.uint8)),
    ]
    for change in bad:
        args = dict(g=g, theta=theta, weights=w, counts=c, block_ptr=bp, steps=steps, S=S,
                    N=N, out=out)  # fmt: skip
        args.update(change)
        with pytest.raises(ValueError, match="kkt_blocks"):
            _cd_fast.kkt_blocks(
                args["g"], args["theta"], args["weights"], args["counts"], args["block_ptr"],
                args["steps"], 0.1, True, args["S"], args["N"], args["out"],
            )  # fmt: skip


def test_any_kept_cut_answers_as_kept_cuts():
    rng = np.random.default_rng(1)
    for t in range(3000):
        p = int(rng.integers(1, 5))
        sizes = rng.integers(1, 6, size=p)
        bp = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
        d = int(bp[-1])
        if t % 3 == 0:  # near-flat blocks: jumps around the tolerance
            theta = np.repeat(rng.normal(size=p) * 10 ** rng.uniform(-3, 3), sizes)
            theta += rng.normal(size=d) * 1e-8 * (rng.random(d) > 0.5)
        else:
            theta = rng.normal(size=d) * 10 ** rng.uniform(-9, 3, size=d) * (rng.random(d) > 0.4)
        if t % 13 == 0:
            theta[rng.integers(d)] = np.nan
        edges = rng.random(d) > 0.3
        unit = 10 ** rng.uniform(-3, 3)
        step = np.zeros(d)
        step[1:] = np.diff(theta)
        with np.errstate(invalid="ignore"):
            want = bool(np.any(kept_cuts(theta, bp, edges, unit)))
            assert _any_kept_cut(theta, step, bp, edges, unit) is want, t
            # the inside-edge mask a prepared problem keeps: the same answer
            inside = _inside_edges(bp, edges)
            assert _any_kept_cut(theta, step, bp, edges, unit, inside) is want, t


def _design(seed, n=1500):
    rng = np.random.default_rng(seed)
    sizes = [12, 9, 15, 5]
    codes = np.vstack([rng.integers(0, K, n) for K in sizes]).astype(np.uint8)
    bp = np.concatenate([[0], np.cumsum(sizes)])
    eta = 0.8 * (codes[0] > 5) - 0.5 * (codes[2] > 9) + 0.1 * codes[1]
    y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    weights = np.ones(bp[-1])
    kinds = ["tv", "increasing", "tv", "free"]
    return codes, bp, y, weights, kinds


@pytest.mark.parametrize("family", ["binomial", "gaussian"])
def test_a_path_is_the_same_through_the_kernel_as_through_numpy(monkeypatch, family):
    codes, bp, y, weights, kinds = _design(3)

    def walk():
        prep = Prepared(codes, bp, y, family=family, penalty_weights=weights,
                        block_kinds=kinds)  # fmt: skip
        lmax = prep.lambda_max()
        out, prev = [], None
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # every fit converges
            for lam in lmax * np.logspace(0, -3, 15):
                prev = prep.solve(lam, warm_start=prev, backend="rows")
                out.append(prev)
        return out

    fast = walk()
    monkeypatch.setattr(_problem, "_KERNEL_KKT_KINDS", frozenset())  # the NumPy rule
    slow = walk()
    for a, b in zip(fast, slow):
        # the same decisions on the same numbers: the same iterates
        assert a.objective == b.objective
        assert a.n_sweeps == b.n_sweeps
        np.testing.assert_array_equal(a.coef, b.coef)
