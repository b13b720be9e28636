"""The proximal operators of ``_prox.py``: prox_tv, prox_binarsity, paper_algorithm1.

What is proved here:

* agreement with a reference solver: cvxpy (Clarabel) solves the prox problems
  on random instances (unequal counts with zeros, zero and large weights, blocks
  of size 1 and 2, step != 1);
* equivalences: equal counts reproduce the paper's Algorithm 1 (TV prox then
  mean subtraction); prox_tv is the weighted FLSA with unit weights;
* a counter-example: with unequal counts Algorithm 1 (TV prox then projection on
  n-perp) is feasible but has a strictly larger prox objective than the prox;
* properties (hypothesis): the prox satisfies its own optimality conditions and
  is non-expansive;
* every invalid argument raises an error that names it.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from binarsity_stats.penalty import _prox
from binarsity_stats.penalty._prox import (
    paper_algorithm1,
    prox_binarsity,
    prox_tv,
    weighted_fused_lasso,
)

# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def prox_objective(theta, v, block_ptr, weights, step):
    """1/2 ||theta - v||^2 + step sum_j sum_{k>=2} omega_jk |theta_jk - theta_j,k-1|."""
    tv = 0.0
    for a, b in zip(block_ptr[:-1], block_ptr[1:], strict=True):
        tv += np.sum(weights[a + 1 : b] * np.abs(np.diff(theta[a:b])))
    return 0.5 * np.sum((theta - v) ** 2) + step * tv


def cvxpy_prox(v, block_ptr, weights, counts, step):
    """The exact prox by cvxpy/Clarabel (counts None: no constraint, i.e. prox_tv)."""
    theta = cp.Variable(len(v))
    terms, cons = [0.5 * cp.sum_squares(theta - v)], []
    for a, b in zip(block_ptr[:-1], block_ptr[1:], strict=True):
        if b - a > 1:
            terms.append(
                step * cp.sum(cp.multiply(weights[a + 1 : b], cp.abs(cp.diff(theta[a:b]))))
            )
        if counts is not None and counts[a:b].sum() > 0:
            cons.append(counts[a:b] @ theta[a:b] == 0)
    prob = cp.Problem(cp.Minimize(sum(terms)), cons)
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    return theta.value


def kkt_violation(theta, v, block_ptr, weights, counts, step):
    """Largest violation of the prox's optimality conditions, per block.

    With S_l = sum_{k>=l} (theta_k - v_k + mu n_k) and mu fixed by S_0 = 0:
    S_l = -step omega_l sign(theta_l - theta_{l-1}) at a jump, |S_l| <= step
    omega_l elsewhere, and n' theta = 0 (design.md section 2).
    """
    worst = 0.0
    for a, b in zip(block_ptr[:-1], block_ptr[1:], strict=True):
        r = theta[a:b] - v[a:b]
        n = counts[a:b]
        lam = step * weights[a:b]
        mu = -r.sum() / n.sum() if n.sum() > 0 else 0.0
        S = np.cumsum((r + mu * n)[::-1])[::-1]
        scale = np.abs(v[a:b]).sum() + lam[1:].sum() + 1e-300
        viol = [abs(S[0]), abs(n @ theta[a:b])]
        d = np.diff(theta[a:b])
        tiny = 1e-12 * (np.abs(v[a:b]).max() + 1e-300)
        for l_ in range(1, b - a):
            if abs(d[l_ - 1]) > tiny:
                viol.append(abs(S[l_] + lam[l_] * np.sign(d[l_ - 1])))
            else:
                viol.append(max(abs(S[l_]) - lam[l_], 0.0))
        worst = max(worst, max(viol) / scale)
    return worst


def random_blocks(rng, sizes):
    sizes = np.asarray(sizes)
    ptr = np.concatenate([[0], np.cumsum(sizes)])
    d = int(ptr[-1])
    v = rng.normal(size=d) * 2.0
    weights = rng.exponential(size=d)
    weights[rng.random(d) < 0.2] = 0.0
    weights[rng.random(d) < 0.1] = 50.0
    counts = rng.integers(0, 30, size=d).astype(float)
    counts[rng.random(d) < 0.2] = 0.0
    return v, ptr, weights, counts


# ---------------------------------------------------------------------------
# agreement with cvxpy
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(12))
def test_prox_tv_matches_cvxpy(seed):
    """prox_tv equals the cvxpy prox to 1e-6, for zero and large weights, step != 1."""
    rng = np.random.default_rng(seed)
    m = int(rng.choice([1, 2, 3, 10, 40]))
    v, ptr, weights, _ = random_blocks(rng, [m])
    step = float(rng.choice([0.1, 0.7, 3.0]))
    theta = prox_tv(v, weights, step)
    ref = cvxpy_prox(v, ptr, weights, None, step)
    assert_allclose(theta, ref, rtol=0, atol=1e-6)
    assert prox_objective(theta, v, ptr, weights, step) <= prox_objective(
        ref, v, ptr, weights, step
    ) + 1e-9 * (1 + np.sum(v**2))


@pytest.mark.parametrize("seed", range(15))
def test_prox_binarsity_matches_cvxpy(seed):
    """The exact prox equals cvxpy's under n_j' theta_j = 0 to 1e-6 (theta) and
    1e-9 (objective), with unequal counts (zeros included), blocks of size 1
    and 2, zero and large weights, step != 1."""
    rng = np.random.default_rng(100 + seed)
    sizes = rng.choice([1, 2, 2, 3, 8, 20], size=int(rng.integers(1, 6)))
    v, ptr, weights, counts = random_blocks(rng, sizes)
    step = float(rng.choice([0.05, 0.5, 1.0, 4.0]))
    theta = prox_binarsity(v, ptr, weights, counts=counts, step=step)
    ref = cvxpy_prox(v, ptr, weights, counts, step)
    assert_allclose(theta, ref, rtol=0, atol=1e-6)
    f, f_ref = (prox_objective(t, v, ptr, weights, step) for t in (theta, ref))
    assert f <= f_ref + 1e-9 * (1 + np.sum(v**2))
    assert kkt_violation(theta, v, ptr, weights, counts, step) <= 1e-9


# ---------------------------------------------------------------------------
# equivalences and the counter-example
# ---------------------------------------------------------------------------


def test_equal_counts_reproduce_algorithm1():
    """counts=None, counts = c 1 and the paper's Algorithm 1 give the same prox."""
    rng = np.random.default_rng(0)
    v, ptr, weights, _ = random_blocks(rng, [1, 2, 5, 50, 7])
    alg1 = paper_algorithm1(v, ptr, weights, 0.8)
    assert_allclose(prox_binarsity(v, ptr, weights, step=0.8), alg1, rtol=0, atol=1e-13)
    for c in [1.0, 7.0]:
        exact = prox_binarsity(v, ptr, weights, counts=np.full(len(v), c), step=0.8)
        assert_allclose(exact, alg1, rtol=0, atol=1e-12)
    # Algorithm 1 with explicit equal counts is the same projection
    projected = paper_algorithm1(v, ptr, weights, 0.8, counts=np.full(len(v), 3.0))
    assert_allclose(projected, alg1, rtol=0, atol=1e-13)


def test_algorithm1_is_not_the_prox_for_unequal_counts():
    """One 8-bin block (found with np.random.default_rng(8), rounded), unit
    weights, step 0.5: Algorithm 1 (TV prox, then projection on n-perp) is
    feasible but its prox objective 6.1613 exceeds the exact prox's 5.0826,
    which cvxpy confirms. (design.md quotes 1.8386 vs 1.7529 on another
    instance.)"""
    v = np.array([-1.74, -1.34, -1.36, -0.35, -2.31, -0.19, -0.96, 0.89])
    n = np.array([2.0, 4, 16, 14, 28, 7, 25, 8])
    w, ptr, step = np.ones(8), np.array([0, 8]), 0.5
    exact = prox_binarsity(v, ptr, w, counts=n, step=step)
    alg1 = paper_algorithm1(v, ptr, w, step, counts=n)
    assert abs(n @ exact) < 1e-12 and abs(n @ alg1) < 1e-12
    f_exact = prox_objective(exact, v, ptr, w, step)
    f_alg1 = prox_objective(alg1, v, ptr, w, step)
    assert_allclose([f_exact, f_alg1], [5.0826, 6.1613], atol=1e-4)
    assert f_alg1 > f_exact + 1.0
    ref = cvxpy_prox(v, ptr, w, n, step)
    assert_allclose(f_exact, prox_objective(ref, v, ptr, w, step), rtol=1e-8)
    # tick's rule (plain mean subtraction) is not even feasible here
    assert abs(n @ paper_algorithm1(v, ptr, w, step)) > 1.0


def test_prox_tv_is_unit_weight_flsa():
    rng = np.random.default_rng(1)
    v = rng.normal(size=30)
    weights = rng.exponential(size=30)
    assert_allclose(prox_tv(v, weights, 2.5), weighted_fused_lasso(v, np.ones(30), 2.5 * weights))


def test_block_conventions():
    """Size-1 blocks are 0 unless their count is 0 (then no constraint: v);
    blocks whose counts are all 0 get the plain TV prox; step 0 is a projection."""
    v = np.array([3.0, -2.0, 1.0, 4.0, 5.0])
    ptr = np.array([0, 1, 2, 5])
    w = np.ones(5)
    counts = np.array([2.0, 0.0, 0.0, 0.0, 0.0])
    theta = prox_binarsity(v, ptr, w, counts=counts, step=0.5)
    assert_allclose(theta[:2], [0.0, -2.0])
    assert_allclose(theta[2:], prox_tv(v[2:], w[2:], 0.5))
    # step = 0: the Euclidean projection onto {n' theta = 0} in each block
    counts = np.array([1.0, 1.0, 1.0, 2.0, 3.0])
    theta = prox_binarsity(v, ptr, w, counts=counts, step=0.0)
    nj = counts[2:]
    assert_allclose(theta[2:], v[2:] - (nj @ v[2:]) / (nj @ nj) * nj, atol=1e-12)
    # empty input
    assert prox_binarsity([], [0], []).shape == (0,)
    assert prox_tv([], []).shape == (0,)


def test_returns_new_arrays():
    v = np.array([1.0, 2.0, 3.0])
    w = np.ones(3)
    for out in (prox_tv(v, w), prox_binarsity(v, [0, 3], w), paper_algorithm1(v, [0, 3], w)):
        assert not np.shares_memory(out, v)
    assert_allclose(v, [1.0, 2.0, 3.0])


# ---------------------------------------------------------------------------
# hypothesis: optimality conditions and non-expansiveness
# ---------------------------------------------------------------------------

finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)


@st.composite
def prox_problems(draw):
    sizes = draw(st.lists(st.integers(1, 12), min_size=1, max_size=5))
    d = sum(sizes)
    ptr = np.concatenate([[0], np.cumsum(sizes)])
    v = np.array(draw(st.lists(finite, min_size=d, max_size=d)))
    weights = np.array(draw(st.lists(st.floats(0, 100), min_size=d, max_size=d)))
    counts = np.array(
        draw(st.lists(st.sampled_from([0.0, 1.0, 2.0, 7.5, 40.0]), min_size=d, max_size=d))
    )
    step = draw(st.floats(0, 10))
    return v, ptr, weights, counts, step


@settings(max_examples=150, deadline=None)
@given(prox_problems())
def test_prox_satisfies_its_optimality_conditions(problem):
    """For random weights, counts and steps the output is a certified prox."""
    v, ptr, weights, counts, step = problem
    theta = prox_binarsity(v, ptr, weights, counts=counts, step=step)
    assert kkt_violation(theta, v, ptr, weights, counts, step) <= 1e-9
    theta = prox_binarsity(v, ptr, weights, step=step)
    ones = np.ones_like(v)
    assert kkt_violation(theta, v, ptr, weights, ones, step) <= 1e-9


@settings(max_examples=100, deadline=None)
@given(prox_problems(), st.integers(0, 2**32 - 1))
def test_prox_is_nonexpansive(problem, seed):
    """||prox(u) - prox(v)|| <= ||u - v|| (a prox of a convex function is firmly
    non-expansive), for the exact prox, the equal-counts prox and prox_tv."""
    v, ptr, weights, counts, step = problem
    u = v + np.random.default_rng(seed).normal(size=len(v)) * 10.0 ** np.random.default_rng(
        seed
    ).uniform(-6, 2)
    bound = np.linalg.norm(u - v) * (1 + 1e-9) + 1e-9
    for prox in (
        lambda x: prox_binarsity(x, ptr, weights, counts=counts, step=step),
        lambda x: prox_binarsity(x, ptr, weights, step=step),
        lambda x: prox_tv(x, weights, step),
    ):
        assert np.linalg.norm(prox(u) - prox(v)) <= bound


# ---------------------------------------------------------------------------
# validation: every error names its argument
# ---------------------------------------------------------------------------

V = np.array([1.0, 2.0, 3.0])
W = np.ones(3)
PTR = np.array([0, 1, 3])


@pytest.mark.parametrize(
    "call, exc, name",
    [
        (lambda: prox_tv([[1.0, 2.0]], [1.0, 1.0]), ValueError, "v"),
        (lambda: prox_tv([1.0, np.nan], [1.0, 1.0]), ValueError, "v"),
        (lambda: prox_tv(["a", "b"], [1.0, 1.0]), TypeError, "v"),
        (lambda: prox_tv(V, [1.0, 1.0]), ValueError, "weights"),
        (lambda: prox_tv(V, [1.0, -1.0, 1.0]), ValueError, "weights"),
        (lambda: prox_tv(V, [1.0, np.inf, 1.0]), ValueError, "weights"),
        (lambda: prox_tv(V, W, step=-1.0), ValueError, "step"),
        (lambda: prox_tv(V, W, step=np.nan), ValueError, "step"),
        (lambda: prox_tv(V, W, step="1"), TypeError, "step"),
        (lambda: prox_binarsity(V, [0, 3.0], W), TypeError, "block_ptr"),
        (lambda: prox_binarsity(V, [1, 3], W), ValueError, "block_ptr"),
        (lambda: prox_binarsity(V, [0, 2], W), ValueError, "block_ptr"),
        (lambda: prox_binarsity(V, [0, 2, 2, 3], W), ValueError, "block_ptr"),
        (lambda: prox_binarsity(V, [[0, 3]], W), ValueError, "block_ptr"),
        (lambda: prox_binarsity(V, PTR, W[:2]), ValueError, "weights"),
        (lambda: prox_binarsity(V, PTR, W, counts=[1.0, 2.0]), ValueError, "counts"),
        (lambda: prox_binarsity(V, PTR, W, counts=[1.0, -2.0, 1.0]), ValueError, "counts"),
        (lambda: prox_binarsity(V, PTR, W, counts=[1.0, np.nan, 1.0]), ValueError, "counts"),
        (lambda: prox_binarsity(V, PTR, W, step=True), TypeError, "step"),
        (lambda: paper_algorithm1(V, PTR, W, counts=[-1.0, 1.0, 1.0]), ValueError, "counts"),
        (lambda: paper_algorithm1(V, [0, 4], W), ValueError, "block_ptr"),
        (lambda: _prox.weighted_fused_lasso(V, W, [0.0, -1.0, 0.0]), ValueError, "lam"),
        (lambda: _prox.weighted_fused_lasso(V, [1.0, 1.0], W), ValueError, "weights"),
        (lambda: _prox.constrained_fused_lasso(V, W, W, [1.0, 1.0]), ValueError, "counts"),
        (lambda: _prox.constrained_fused_lasso(V, W, W, W, tol=-1.0), ValueError, "tol"),
        (lambda: _prox.weighted_fused_lasso(np.array([1 + 1j]), W[:1], W[:1]), TypeError, "y"),
    ],
)
def test_bad_input_names_the_argument(call, exc, name):
    with pytest.raises(exc, match=rf"^{name} "):
        call()


def test_public_docstrings_are_numpydoc():
    """Every public name documents its parameters, returns and errors."""
    for name in _prox.__all__:
        doc = getattr(_prox, name).__doc__
        for section in ("Parameters\n", "Returns\n", "Raises\n"):
            assert section in doc, (name, section)


# ---------------------------------------------------------------------------
# prox_binarsity's fast path (float64 arrays, intp block_ptr, float step)
# ---------------------------------------------------------------------------


def _error(call):
    try:
        call()
    except (TypeError, ValueError) as exc:
        return type(exc), str(exc)
    return None


def test_fast_path_equals_full_path_bitwise():
    """The fast path (checks fused into the kernel) and the full path (lists,
    other dtypes) give the same array, bit for bit, on constant-weight blocks
    (Condat), mixed blocks (the DP), size-1 blocks and step = 0."""
    rng = np.random.default_rng(11)
    sizes = [1, 40, 2, 40, 1, 100, 7]
    ptr = np.r_[0, np.cumsum(sizes)]
    d = int(ptr[-1])
    v = rng.normal(size=d)
    w = np.ones(d)
    w[ptr[3] + 5] = 2.0
    w[ptr[5] : ptr[6]] = rng.exponential(size=100)
    for step in [0.0, 0.3, 2.0]:
        fast = prox_binarsity(v, ptr.astype(np.intp), w, None, step)
        full = prox_binarsity(list(v), list(ptr), list(w), None, step)
        assert np.array_equal(fast, full)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf, -1.0, -1e-300])
@pytest.mark.parametrize("where", ["block_start", "constant_block", "mixed_block", "size_one"])
def test_fast_path_errors_are_the_full_paths(bad, where):
    """A bad weight, wherever it is (at a block start, inside a block of equal
    weights, inside a block of unequal ones, in a block of size 1), and a bad v
    (likewise) or block_ptr, raise through the fast path exactly the full
    path's error."""
    ptr = np.array([0, 1, 30, 60], dtype=np.intp)
    v = np.random.default_rng(12).normal(size=60)
    w = np.ones(60)
    w[45] = 3.0
    pos = {"block_start": 30, "constant_block": 10, "mixed_block": 50, "size_one": 0}[where]
    w[pos] = bad
    fast = _error(lambda: prox_binarsity(v, ptr, w, None, 0.5))
    full = _error(lambda: prox_binarsity(list(v), list(ptr), list(w), None, 0.5))
    assert fast is not None and fast == full
    assert "weights" in fast[1]
    # bad v (in the block of size 1, the equal-weight block, the unequal one)
    # and bad block_ptr, with bad weights too: the full path's order
    cases = [(v, np.array([0, 30, 30, 60], dtype=np.intp), w)]
    for vpos in [0, 3, 50]:
        v2 = v.copy()
        v2[vpos] = bad if not np.isfinite(bad) else np.nan
        cases += [(v2, ptr, w), (v2, ptr, np.ones(60))]
    for args in cases:
        fast = _error(lambda a=args: prox_binarsity(a[0], a[1], a[2], None, 0.5))
        full = _error(lambda a=args: prox_binarsity(list(a[0]), list(a[1]), list(a[2]), None, 0.5))
        assert fast is not None and fast == full
    # a bad step is reported after the weights, as in the full path
    fast = _error(lambda: prox_binarsity(v, ptr, w, None, -1.0))
    full = _error(lambda: prox_binarsity(list(v), list(ptr), list(w), None, -1.0))
    assert fast == full


def test_fast_path_declines_unusual_arguments():
    """Read-only, strided, 2-D, big-endian, int and empty arrays, a NumPy or
    int step: prox_binarsity gives the full path's result or error."""
    rng = np.random.default_rng(13)
    v = rng.normal(size=40)
    w = np.ones(40)
    ptr = np.array([0, 10, 40], dtype=np.intp)
    ref = prox_binarsity(list(v), list(ptr), list(w), None, 0.5)
    ro = v.copy()
    ro.flags.writeable = False
    big = v.astype(">f8")
    strided = np.repeat(v, 2)[::2]
    for args in [
        (ro, ptr, w, 0.5),
        (big, ptr, w, 0.5),
        (strided, ptr, w, 0.5),
        (v, ptr.astype(np.int32), w, 0.5),
        (v, ptr, w.astype(">f8"), 0.5),
        (v, ptr, w, np.float64(0.5)),
    ]:
        assert np.array_equal(prox_binarsity(args[0], args[1], args[2], None, args[3]), ref)
    assert np.array_equal(
        prox_binarsity(v, ptr, w.astype(int), None, 1), prox_binarsity(v, ptr, w, None, 1.0)
    )
    assert prox_binarsity(np.empty(0), np.array([0], dtype=np.intp), np.empty(0)).shape == (0,)
    for args in [
        (v.reshape(2, 20), ptr, w, 0.5),
        (v, ptr, w.reshape(2, 20), 0.5),
        (v, ptr, w[:-1], 0.5),
        (v, ptr.reshape(1, 3), w, 0.5),
        (v, ptr, w, float("nan")),
        (v, ptr, w, True),
    ]:
        fast = _error(lambda a=args: prox_binarsity(a[0], a[1], a[2], None, a[3]))
        full = _error(
            lambda a=args: prox_binarsity(a[0].tolist(), a[1].tolist(), a[2].tolist(), None, a[3])
        )
        assert fast is not None and fast == full
