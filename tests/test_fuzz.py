"""Fuzz the public kernels' entry points: any input gives a finite result or a clear error.

Hypothesis draws the arguments of every entry that hands arrays to a Cython kernel (the
prox functions, the engine's ``solve``/``Prepared``/``lambda_max``, ``penalty_weights``,
a fitted ``Binarizer``'s ``transform``, an estimator's ``predict`` on tampered fitted
state) from every dtype (all integer widths, bool, float16/32/64, complex, object),
shapes (0-d, empty, 2-D, one entry short or long) and values (negative, huge, NaN, inf,
values that wrap in unsigned dtypes). Each call must return finite numbers or raise
``ValueError``/``TypeError``: never crash, never raise anything else. Under
``bash .ci/boundscheck`` an out-of-bounds access in a kernel raises ``IndexError``, which
fails this test too. Derandomized, with modest ``max_examples``: a few seconds.
"""

from __future__ import annotations

import copy
import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from binarsity_stats import Binarizer, BinarsityClassifier, BinarsityGLM
from binarsity_stats.penalty._penalty import BinarsityPenalty, block_suffix_sums, penalty_weights
from binarsity_stats.penalty._prox import (
    constrained_fused_lasso,
    paper_algorithm1,
    prox_binarsity,
    prox_tv,
    weighted_fused_lasso,
)
from binarsity_stats.engine._solvers import Prepared, Solution, lambda_max, solve

FUZZ = settings(
    derandomize=True,
    max_examples=120,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)

DTYPES = [
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
    "complex128",
    "object",
]

NAN, INF = float("nan"), float("inf")
# values that matter: small indices, values that wrap in unsigned dtypes, extremes
VALUES = [0, 1, 2, 3, 5, -1, -3, 200, 255, 256, 60000, 65535, 65536, 2**31, 2**63 - 1]
VALUES += [2**64 - 1, -(2**63), 0.5, 1e-300, 1e300, -1e300, NAN, INF, -INF]

SCALARS = [1.0, 0.0, 0.3, -1.0, NAN, INF, 1e308, 1e-308, True, None, "1", 2 + 0j]
SCALARS += [np.float32(2.0), np.int64(3), np.uint8(7), np.array(1.0), np.array([1.0])]

Allowed = (ValueError, TypeError)


def _cast(values: list, dtype: str) -> np.ndarray:
    """``values`` in ``dtype``: integers wrap modulo 2**bits, floats overflow to inf."""
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        bits = 8 * dt.itemsize
        out = []
        for v in values:
            w = int(v) if math.isfinite(v) else 0
            w %= 2**bits
            if dt.kind == "i" and w >= 2 ** (bits - 1):
                w -= 2**bits
            out.append(w)
        return np.array(out, dtype=dt)
    if dt.kind == "b":
        return np.array([bool(v) for v in values], dtype=bool)
    if dt.kind == "O":
        return np.array(list(values), dtype=object)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.array([float(v) for v in values]).astype(dt)


@st.composite
def arrays(draw, good: list | None = None, length: int | None = None) -> np.ndarray:
    """A 1-D argument: ``good`` (or random values) in a random dtype, often the right
    shape, sometimes 0-d, empty, 2-D, short or long, sometimes with one bad value."""
    if good is None:
        good = draw(st.lists(st.sampled_from(VALUES), min_size=length or 0, max_size=8))
        if length is not None:
            good = good[:length]
    values = list(good)
    if draw(st.integers(0, 3)) > 0:  # mostly clean: the other arguments get fuzzed
        dtype = "int64" if all(isinstance(v, int) for v in values) else "float64"
        return _cast(values, draw(st.sampled_from([dtype, dtype, "float64", "uint8"])))
    if values and draw(st.booleans()):
        values[draw(st.integers(0, len(values) - 1))] = draw(st.sampled_from(VALUES))
    dtype = draw(st.sampled_from(DTYPES + ["float64", "int64"] * 3))
    arr = _cast(values, dtype)
    shape = draw(st.sampled_from(["ok"] * 6 + ["0d", "empty", "2d", "short", "long"]))
    if shape == "0d":
        return arr[0] if arr.size else _cast([1], dtype)[0]
    if shape == "empty":
        return arr[:0]
    if shape == "2d":
        return arr[None, :]
    if shape == "short":
        return arr[:-1]
    if shape == "long":
        return np.concatenate([arr, arr[:1]]) if arr.size else _cast([0], dtype)
    return arr


@st.composite
def blocks(draw) -> list[int]:
    """Block sizes of a valid design (1 to 3 blocks of 1 to 5 levels)."""
    return draw(st.lists(st.integers(1, 5), min_size=1, max_size=3))


def _ptr(sizes: list[int]) -> list[int]:
    return [0, *np.cumsum(sizes).tolist()]


@st.composite
def offsets(draw, sizes: list[int]) -> np.ndarray:
    """Block offsets: valid, fuzzed, or unsigned with an entry that wraps in np.diff
    (uint8 [0, 200, 5]: the values that used to pass validation and write out of bounds)."""
    good = _ptr(sizes)
    if len(good) > 2 and draw(st.integers(0, 2)) == 0:
        dtype = draw(st.sampled_from(["uint8", "uint16", "uint32", "uint64"]))
        top = int(np.iinfo(dtype).max)
        arr = np.array(good, dtype=dtype)
        arr[draw(st.integers(1, len(good) - 2))] = draw(st.sampled_from([top, top - 1, 200]))
        return arr
    return draw(arrays(good=good))


def _finite(out) -> bool:
    if isinstance(out, Solution):
        parts = [out.coef, out.dense_coef, [out.intercept, out.objective, out.kkt_violation]]
        return all(np.all(np.isfinite(np.asarray(p, dtype=np.float64))) for p in parts)
    if isinstance(out, tuple | list):
        return all(_finite(o) for o in out)
    arr = np.asarray(out)
    if arr.dtype.kind in "biu":
        return True
    try:
        return bool(np.all(np.isfinite(arr.astype(np.complex128))))
    except (TypeError, ValueError):
        return False


def _call(fn, finite: bool = True):
    """Run ``fn``: a finite result or ValueError/TypeError; anything else fails.

    ``finite=False`` for helpers that map non-finite input to non-finite output.
    """
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")  # ConvergenceWarning, the prox's iteration limit
        try:
            out = fn()
        except Allowed:
            return None
    assert not finite or _finite(out), f"non-finite result {out!r}"
    return out


# --------------------------------------------------------------------------- prox


@FUZZ
@given(data=st.data(), sizes=blocks())
def test_fuzz_prox_functions(data, sizes):
    d = sum(sizes)
    kind = data.draw(st.sampled_from(["tv", "binarsity", "binarsity_counts", "alg1", "wfl", "cfl"]))
    v = data.draw(
        arrays(length=d, good=data.draw(st.lists(st.floats(-5, 5), min_size=d, max_size=d)))
    )
    w = data.draw(arrays(good=[1.0] * d))
    counts = data.draw(arrays(good=[2.0] * d))
    ptr = data.draw(offsets(sizes))
    step = data.draw(st.sampled_from([1.0, 0.5, 0.0] * 3 + SCALARS))
    if kind == "tv":
        _call(lambda: prox_tv(v, w, step=step))
    elif kind == "binarsity":
        _call(lambda: prox_binarsity(v, ptr, w, step=step))
    elif kind == "binarsity_counts":
        _call(lambda: prox_binarsity(v, ptr, w, counts=counts, step=step))
    elif kind == "alg1":
        _call(lambda: paper_algorithm1(v, ptr, w, step=step, counts=counts))
    elif kind == "wfl":
        _call(lambda: weighted_fused_lasso(v, counts, w))
    else:
        _call(lambda: constrained_fused_lasso(v, counts, w, counts, tol=step))


@FUZZ
@given(data=st.data(), sizes=blocks())
def test_fuzz_prox_fast_path(data, sizes):
    """The compiled fast path (float64 arrays, intp offsets, float step) on bad values."""
    d = sum(sizes)
    ptr = np.array(_ptr(sizes), dtype=np.intp)
    if data.draw(st.booleans()):
        ptr[data.draw(st.integers(0, len(ptr) - 1))] = data.draw(
            st.sampled_from([-1, 0, 1, d + 1, 2**62])
        )
    good = [0.0, 1.0, -2.0, 3.5] * 6
    v = np.array([data.draw(st.sampled_from(good + [NAN, INF, 1e300])) for _ in range(d)])
    w = np.array([data.draw(st.sampled_from(good[:2] + [-1.0, NAN, INF, 1e300])) for _ in range(d)])
    step = data.draw(st.sampled_from([1.0, 0.0, 0.5, 1e300]))
    _call(lambda: prox_binarsity(v, ptr, w, step=step))


# --------------------------------------------------------------------------- penalty


@FUZZ
@given(data=st.data(), sizes=blocks())
def test_fuzz_penalty_helpers(data, sizes):
    d = sum(sizes)
    ptr = data.draw(offsets(sizes))
    counts = data.draw(arrays(good=[3.0] * d))
    chain = data.draw(st.one_of(st.none(), arrays(good=list(sizes))))
    kind = data.draw(
        st.one_of(st.sampled_from(["theory", "uniform", "nope"]), arrays(good=[1.0] * d))
    )
    _call(lambda: penalty_weights(kind, counts, ptr, chain))
    _call(lambda: block_suffix_sums(counts, ptr), finite=_finite(counts))

    def penalty():
        pen = BinarsityPenalty(ptr, data.draw(arrays(good=[1.0] * d)), counts=counts)
        return pen.lambda_max(np.asarray(counts, dtype=np.float64))

    _call(penalty)


# --------------------------------------------------------------------------- engine


@st.composite
def designs(draw):
    sizes = draw(blocks())
    n = draw(st.integers(1, 12))
    p = len(sizes)
    good = [[draw(st.integers(0, s - 1)) for _ in range(n)] for s in sizes]
    dtype = draw(st.sampled_from(DTYPES + ["uint8"] * 6))
    codes = _cast([c for row in good for c in row], dtype).reshape(p, n)
    how = draw(st.sampled_from(["ok"] * 5 + ["bad value", "1-D", "transposed", "empty"]))
    if how == "bad value":
        flat = [c for row in good for c in row]
        flat[draw(st.integers(0, len(flat) - 1))] = draw(st.sampled_from(VALUES))
        codes = _cast(flat, dtype).reshape(p, n)
    elif how == "1-D":
        codes = codes.ravel()
    elif how == "transposed":
        codes = codes.T
    elif how == "empty":
        codes = codes[:, :0]
    ptr = draw(offsets(sizes))
    y = draw(arrays(good=draw(st.lists(st.sampled_from([0.0, 1.0]), min_size=n, max_size=n))))
    w = draw(arrays(good=[1.0] * sum(sizes)))
    return codes, ptr, y, w, n


@FUZZ
@given(design=designs(), data=st.data())
def test_fuzz_solve_prepared_lambda_max(design, data):
    codes, ptr, y, w, n = design
    family = data.draw(st.sampled_from(["gaussian", "binomial", "poisson"]))
    extra = {}
    for name in ("sample_weight", "offset", "dense"):
        if data.draw(st.booleans()):
            extra[name] = data.draw(arrays(good=[1.0] * n))
    lam = data.draw(st.sampled_from([0.01, 0.0, 1e3] * 3 + SCALARS))
    kw = {"family": family, "penalty_weights": w, **extra}
    _call(lambda: solve(codes, ptr, y, lam=lam, max_iter=20, **kw))
    _call(lambda: lambda_max(codes, ptr, y, **kw))

    def prepared():
        return Prepared(codes, ptr, y, **kw).solve(lam, solver="fista", max_iter=20)

    _call(prepared)


# --------------------------------------------------------------------------- fitted objects

_RNG = np.random.default_rng(12)
_X = _RNG.normal(size=(80, 3))
_X[:, 2] = np.round(_X[:, 2])  # a few distinct values: a small block
_BIN = Binarizer(n_bins=6).fit(_X)
_GLM = BinarsityGLM(n_bins=6, lam=0.01).fit(_X, _X[:, 0] + _RNG.normal(size=80))
_CLF = BinarsityClassifier(n_bins=6, lam=0.01).fit(_X, _X[:, 1] > 0)


@st.composite
def matrices(draw):
    n = draw(st.integers(0, 5))
    p = draw(st.sampled_from([3, 3, 3, 2, 4]))
    pool = VALUES + [0.1, -0.7, 2.5, -1.2, 0.0, 3.3] * 10
    flat = draw(st.lists(st.sampled_from(pool), min_size=n * p, max_size=n * p))
    X = _cast(flat, draw(st.sampled_from(DTYPES + ["float64"] * 4))).reshape(n, p)
    how = draw(st.sampled_from(["ok"] * 4 + ["1-D", "0-d", "3-D", "F"]))
    if how == "1-D":
        return X.ravel()
    if how == "0-d":
        return X.ravel()[:1].reshape(()) if X.size else np.array(0.0)
    if how == "3-D":
        return X[None]
    if how == "F":
        return np.asfortranarray(X)
    return X


@FUZZ
@given(X=matrices())
def test_fuzz_binarizer_transform(X):
    out = _call(lambda: _BIN.transform(X))
    if out is not None:
        assert out.dtype.kind == "u" and np.all(out < _BIN.n_bins_)


TAMPER = ["coef_", "block_ptr_", "intercept_", "edges_", "n_bins_", "has_missing_level_"]


@FUZZ
@given(X=matrices(), data=st.data())
def test_fuzz_predict_with_tampered_state(X, data):
    est = copy.deepcopy(data.draw(st.sampled_from([_GLM, _CLF])))
    what = data.draw(st.sampled_from(TAMPER + ["nothing"]))
    if what == "coef_" and data.draw(st.booleans()):
        est.coef_ = est.coef_[: data.draw(st.integers(0, len(est.coef_) - 1))]
    elif what == "block_ptr_" and data.draw(st.booleans()):
        est.block_ptr_ = est.block_ptr_ + data.draw(st.sampled_from([-(10**9), -1, 1, 10**9]))
    elif what in ("coef_", "block_ptr_"):
        setattr(est, what, data.draw(arrays(good=list(getattr(est, what)))))
    elif what == "intercept_":
        est.intercept_ = data.draw(st.sampled_from(SCALARS))
    elif what == "edges_":
        j = data.draw(st.integers(0, 2))
        est.binarizer_.edges_[j] = data.draw(arrays(good=list(est.binarizer_.edges_[j])))
    elif what in ("n_bins_", "has_missing_level_"):
        setattr(est.binarizer_, what, data.draw(arrays(good=list(getattr(est.binarizer_, what)))))
    method = data.draw(st.sampled_from(["predict", "decision_function", "predict_proba"]))
    if method == "predict_proba" and not isinstance(est, BinarsityClassifier):
        method = "predict"
    out = _call(lambda: getattr(est, method)(X))
    if out is None:
        return
    # it ran: then the state it ran on was consistent (checked here without kernels)
    coef, ptr = np.asarray(est.coef_), np.asarray(est.block_ptr_)
    n_bins = np.asarray(est.binarizer_.n_bins_)
    assert ptr.ndim == 1 and len(ptr) == len(n_bins) + 1 and ptr[0] == 0
    assert np.array_equal(np.diff(ptr.astype(object)), n_bins) and ptr[-1] == len(coef)
    edges = est.binarizer_.edges_
    assert all(
        len(e) + 1 + m == k
        for e, m, k in zip(edges, est.binarizer_.has_missing_level_, n_bins, strict=True)
    )
    if isinstance(est, BinarsityClassifier) and method == "predict":
        assert set(np.unique(out)) <= set(est.classes_)


def test_fuzz_entry_points_accept_good_input():
    """The fuzzing strategies reach the kernels: good input gives a result."""
    assert (
        _call(lambda: prox_binarsity(np.arange(5.0), np.array([0, 2, 5]), np.ones(5))) is not None
    )
    assert _call(lambda: _GLM.predict(_X)) is not None
    assert _call(lambda: _BIN.transform(_X)) is not None
    pytest.importorskip("hypothesis")
