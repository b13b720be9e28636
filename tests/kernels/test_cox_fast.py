"""The compiled Cox kernel ``_cox_fast`` against its NumPy twin (issue 14, Cox speed).

What is proved here:

* ``_cox.loss_grad_hess`` (the Cython kernel) equals ``_cox._loss_grad_hess_numpy`` to
  ~1e-12 relative — loss, gradient and curvature, Breslow and Efron — on hard data:
  heavy ties, weights ×1e4 and ×1e-4, strata (one all censored), tiny and huge scales
  of η, a single event, zero-weight events, non-contiguous inputs and outputs;
* the loss is exact under a common shift of η by 2^26 (the linear term is taken on the
  shifted scale: no cancellation between two huge sums), and Efron's ties with events
  that all weigh 0 at the last time give finite numbers (they gave NaN before);
* the kernel refuses every table that would make it index outside its arrays;
* a small bins' Gram (the polish builds one per Newton step) starts no thread pool.
"""

from __future__ import annotations

import numpy as np
import pytest

from binarsity_stats.families import _cox
from binarsity_stats.kernels import _cox_fast
from binarsity_stats.design import _gram_stats
from binarsity_stats.engine import _gram
from binarsity_stats.design._design import BinnedDesign

TIES = ("breslow", "efron")


def _case(rng, n, n_times, n_strata, w_scale, eta_scale, censored=0.4):
    t = rng.integers(0, n_times, n).astype(float)
    e = (rng.uniform(size=n) > censored).astype(float)
    st = rng.integers(0, n_strata, n) if n_strata > 1 else None
    s = rng.uniform(0.1, 2.0, n) * w_scale
    eta = rng.normal(size=n) * eta_scale
    return t, e, st, s, eta


def _both(eta, y, s, ties, scale=0.7):
    n = y.size
    g1, h1, g2, h2 = (np.full(n, np.nan) for _ in range(4))
    L1 = _cox.loss_grad_hess(eta, y, s, scale, g1, h1, ties)
    L2 = _cox._loss_grad_hess_numpy(eta, y, s, scale, g2, h2, ties)
    return (L1, g1, h1), (L2, g2, h2)


def _assert_twins(eta, y, s, ties, rtol=1e-12):
    (L1, g1, h1), (L2, g2, h2) = _both(eta, y, s, ties)
    assert np.isfinite(L1) and np.all(np.isfinite(g1)) and np.all(np.isfinite(h1))
    assert abs(L1 - L2) <= rtol * max(abs(L2), 1e-300)
    gs = max(np.max(np.abs(g2)), 1e-300)
    assert np.max(np.abs(g1 - g2)) <= rtol * gs
    assert np.max(np.abs(h1 - h2)) <= rtol * max(np.max(np.abs(h2)), 1e-300)
    # the loss alone (no outputs) is the same number
    assert _cox.loss_grad_hess(eta, y, s, ties=ties) == L1


CASES = {
    "heavy ties": (800, 6, 1, 1.0, 1.0),
    "weights x1e4, strata": (600, 20, 4, 1e4, 1.0),
    "weights x1e-4": (300, 40, 2, 1e-4, 1.0),
    "tiny eta": (500, 50, 3, 1.0, 1e-9),
    "huge eta": (500, 50, 3, 1.0, 200.0),
    "distinct times": (400, 10**6, 1, 1.0, 2.0),
}


@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_kernel_equals_the_numpy_twin_on_hard_data(name, ties):
    rng = np.random.default_rng(sorted(CASES).index(name))
    t, e, st, s, eta = _case(rng, *CASES[name])
    _assert_twins(eta, _cox.encode(t, e, st), s, ties)


@pytest.mark.parametrize("ties", TIES)
def test_kernel_equals_the_twin_with_an_all_censored_stratum_and_a_single_event(ties):
    rng = np.random.default_rng(7)
    t, e, st, s, eta = _case(rng, 300, 15, 3, 1.0, 1.0)
    e[st == 1] = 0.0  # stratum 1: no event at all
    _assert_twins(eta, _cox.encode(t, e, st), s, ties)
    e[:] = 0.0
    e[17] = 1.0  # one event in the whole data
    _assert_twins(eta, _cox.encode(t, e, st), s, ties)
    # everything censored: the loss is 0 and so is the gradient
    y = _cox.encode(t, np.zeros_like(e), st)
    g, h = np.empty(t.size), np.empty(t.size)
    assert _cox.loss_grad_hess(eta, y, s, 1.0, g, h, ties) == 0.0
    assert not np.any(g) and not np.any(h)
    # one row
    _assert_twins(np.array([3.0]), _cox.encode([1.0], [1.0]), np.array([2.5]), ties)


@pytest.mark.parametrize("ties", TIES)
def test_zero_weight_events_at_the_last_time_are_finite(ties):
    # the last time's rows all weigh 0: D_g = 0 there; Efron's reference gave NaN
    t = np.array([1.0, 2, 2, 3, 3, 4, 4])
    e = np.array([1.0, 1, 0, 1, 1, 1, 1])
    s = np.array([1.0, 2, 1, 1, 3, 0, 0])
    eta = np.array([0.3, -0.2, 0.1, 0.5, -1.0, 0.7, 0.2])
    y = _cox.encode(t, e, None)
    _assert_twins(eta, y, s, ties)
    # and dropping those rows changes nothing
    g = np.empty(7)
    L = _cox.loss_grad_hess(eta, y, s, 1.0, g, np.empty(7), ties)
    g5 = np.empty(5)
    L5 = _cox.loss_grad_hess(eta[:5], _cox.encode(t[:5], e[:5]), s[:5], 1.0, g5, np.empty(5), ties)
    assert L == pytest.approx(L5, rel=1e-14)
    np.testing.assert_allclose(g[:5], g5, rtol=1e-13)
    assert not np.any(g[5:])


@pytest.mark.parametrize("ties", TIES)
def test_a_huge_common_shift_of_eta_leaves_the_loss_exact(ties):
    rng = np.random.default_rng(3)
    t, e, st, s, eta = _case(rng, 400, 30, 2, 1.0, 1.0)
    y = _cox.encode(t, e, st)
    eta = np.round(eta * 1024) / 1024  # η + 2^26 is exact in float64
    L = _cox.loss_grad_hess(eta, y, s, ties=ties)
    for f in (_cox.loss_grad_hess, _cox._loss_grad_hess_numpy):
        assert f(eta + 2.0**26, y, s, ties=ties) == pytest.approx(L, rel=1e-12)


def test_non_contiguous_inputs_and_outputs():
    rng = np.random.default_rng(5)
    t, e, st, s, eta = _case(rng, 200, 12, 2, 1.0, 1.0)
    y = _cox.encode(t, e, st)
    ref_g, ref_h = np.empty(200), np.empty(200)
    L = _cox._loss_grad_hess_numpy(eta, y, s, 2.0, ref_g, ref_h, "efron")
    G = np.zeros((200, 2))
    H = np.zeros((200, 2))
    eta2 = np.repeat(eta, 2)[::2]
    s32 = s.astype(np.float32).astype(np.float64)
    assert _cox.loss_grad_hess(eta2, y, s, 2.0, G[:, 1], H[:, 0], "efron") == pytest.approx(L)
    np.testing.assert_allclose(G[:, 1], ref_g, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(H[:, 0], ref_h, rtol=1e-12)
    assert not np.any(G[:, 0]) and not np.any(H[:, 1])
    # only one of the outputs
    g = np.empty(200)
    _cox.loss_grad_hess(eta, y, s32, 1.0, g, None)
    assert np.all(np.isfinite(g))
    with pytest.raises(ValueError, match="eta has 199 rows"):
        _cox.loss_grad_hess(eta[:199], y, s)
    with pytest.raises(ValueError, match="grad_out"):
        _cox.loss_grad_hess(eta, y, s, 1.0, np.empty(199), None)
    with pytest.raises(ValueError, match="ties"):
        _cox.loss_grad_hess(eta, y, s, ties="exact")


def test_kernel_refuses_tables_that_would_index_out_of_bounds():
    rng = np.random.default_rng(2)
    t, e, st, s, eta = _case(rng, 50, 8, 2, 1.0, 1.0)
    rs = _cox.risk_sets(_cox.encode(t, e, st))
    n, G = 50, rs.group_bounds.size - 1
    good = dict(
        order=rs.order, event=rs.event, group_bounds=rs.group_bounds,
        strata_bounds=rs.strata_bounds, eta=eta, sw=s, scale=1.0, grad_out=np.empty(n),
        hess_out=np.empty(n), work=np.empty(2 * n), gwork=np.empty(2 * G), efron=True, want=True,
    )  # fmt: skip
    _cox_fast.cox_loss_grad_hess(**good)

    def bad(**kw):
        args = dict(good, **kw)
        with pytest.raises(ValueError):
            _cox_fast.cox_loss_grad_hess(**args)

    order = rs.order.copy()
    order[3] = n
    bad(order=order)
    order[3] = -1
    bad(order=order)
    gb = rs.group_bounds.copy()
    gb[-1] = n + 5
    bad(group_bounds=gb)
    gb = rs.group_bounds.copy()
    gb[2] = gb[1]
    bad(group_bounds=gb)
    gb = rs.group_bounds.copy()
    gb[0] = 1
    bad(group_bounds=gb)
    sb = rs.strata_bounds.copy()
    sb[-1] = G + 1
    bad(strata_bounds=sb)
    sb = np.array([0, G, 1, G], dtype=np.intp)
    bad(strata_bounds=sb)
    bad(group_bounds=np.zeros(0, dtype=np.intp))
    bad(event=rs.event[:-1])
    bad(eta=eta[:-1])
    bad(sw=s[:-1])
    bad(work=np.empty(2 * n - 1))
    bad(gwork=np.empty(2 * G - 1))
    bad(grad_out=np.empty(n - 1))
    bad(hess_out=np.empty(n + 1))
    # without outputs wanted, their length does not matter
    _cox_fast.cox_loss_grad_hess(**dict(good, want=False, grad_out=np.empty(0), hess_out=np.empty(0)))


def test_a_small_bins_gram_starts_no_thread_pool(monkeypatch):
    rng = np.random.default_rng(0)
    n = 2000
    codes = np.array([rng.integers(0, K, n) for K in (5, 6, 7, 8)], dtype=np.uint8)
    bp = np.concatenate([[0], np.cumsum([5, 6, 7, 8])]).astype(np.intp)
    design = BinnedDesign(codes, bp)
    h = rng.exponential(size=n)
    ref = _gram.bin_pair_gram(codes, bp, h, n_threads=2)

    class NoPool:
        def __init__(self, *a, **k):
            raise AssertionError("a thread pool was started for a small Gram")

    monkeypatch.setattr(_gram_stats.os, "cpu_count", lambda: 4)
    monkeypatch.setattr(_gram_stats, "DEFAULT_THREADS", None)
    monkeypatch.setattr(_gram_stats, "ThreadPoolExecutor", NoPool)
    assert np.array_equal(design.gram(h), ref)
    assert np.array_equal(_gram.bin_pair_gram(codes, bp, h), ref)
    # a large one (or an explicit thread count) still uses the threads
    monkeypatch.setattr(_gram_stats, "MIN_THREADED_CELLS", 1000)
    with pytest.raises(AssertionError, match="thread pool"):
        design.gram(h)
