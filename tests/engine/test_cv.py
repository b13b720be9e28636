"""Parallel K-fold CV (``_cv.cross_validate``'s ``n_jobs`` and ``backend``).

What is proved here:

* the folds and the path on all rows give the same numbers bit for bit serially, in
  threads and in forked worker processes: scores, λ grid (with early stopping and with
  the grid extended below its end), every fit of the path — on a near-collinear gaussian
  model (row sweeps and the Gram backend), on a weighted binomial one with an offset,
  and through ``fit_cv``;
* with ``backend="processes"`` the folds are solved outside the calling process (the
  GIL of the caller is not shared), by ``n_jobs`` distinct workers, while the path on
  all rows is solved in the caller;
* a warning raised in a worker reaches the caller; bad ``backend`` values are refused
  by name.

The speed-up itself is measured in ``python -m benchmarks cv``, never here.
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_array_equal

from binarsity_stats import glm
from binarsity_stats._datasets import simulate_collinear_sizes
from binarsity_stats.engine._cv import cross_validate, fork_available, idle_cores, resolve_backend
from binarsity_stats.engine._folds import fold_ids

needs_fork = pytest.mark.skipif(not fork_available(), reason="fork start method (Linux)")


def _collinear(n=1500):
    X, y = simulate_collinear_sizes(n, seed=3)
    df = pd.DataFrame(X, columns=["carat", "x", "y", "z"])
    df["p"] = y
    return glm("p ~ bin(carat, 16) + bin(x, 16) + bin(y, 16) + bin(z, 16)", df)


def _binomial(n=900, seed=1):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.normal(size=n), "b": rng.gamma(2.0, size=n),
                       "w": rng.uniform(0.5, 2.0, n), "t": rng.uniform(-0.3, 0.3, n)})  # fmt: skip
    eta = 0.8 * (df["a"] > 0.1) - 0.4 * (df["b"] > 2.5) + df["t"]
    df["y"] = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    return glm("y ~ bin(a, 12) + bin(b, 12) + offset(t)", df, family="binomial",
               sample_weight="w")  # fmt: skip


def _run(model, backend, n_jobs, solver_backend="auto", **kw):
    data = model._path_data()
    grid = model.lambda_grid(kw.pop("n_lambdas", 12))
    ids = fold_ids(data.y, 5, random_state=0)
    opts = {"solver": "cd", "tol": 1e-7, "max_iter": 1000, "backend": solver_backend}
    return cross_validate(data, grid, ids, opts=opts, fold_opts=dict(opts, tol=1e-5),
                          n_jobs=n_jobs, backend=backend, **kw)  # fmt: skip


def _assert_same(a, b):
    assert_array_equal(a.lams, b.lams)
    assert_array_equal(a.fold_scores, b.fold_scores)
    assert (a.idx_min, a.idx_1se, a.extended) == (b.idx_min, b.idx_1se, b.extended)
    assert len(a.path) == len(b.path) == len(a.lams)
    for sa, sb in zip(a.path, b.path, strict=True):
        assert_array_equal(sa.coef, sb.coef)
        assert sa.intercept == sb.intercept
        assert sa.n_iter == sb.n_iter


@pytest.mark.parametrize("backend", ["threads", pytest.param("processes", marks=needs_fork)])
@pytest.mark.parametrize("make", [_collinear, _binomial])
def test_parallel_cv_is_bitwise_the_serial_cv(make, backend):
    model = make()
    for kw in ({"early_stopping": True, "patience": 3}, {"early_stopping": False, "keep": False,
                                                         "patience": 4}):  # fmt: skip
        serial = _run(model, "auto", 1, **kw)
        _assert_same(serial, _run(model, backend, 2, **kw))
        _assert_same(serial, _run(model, backend, 3, **kw))


@needs_fork
def test_the_gram_backend_in_worker_processes_is_bitwise_the_serial_cv():
    # the folds' Grams (all rows' statistics less the held-out rows') are built in the
    # workers: the same fits as serially
    model = _collinear()
    serial = _run(model, "auto", 1, solver_backend="gram", early_stopping=False)
    _assert_same(serial, _run(model, "processes", 2, solver_backend="gram",
                              early_stopping=False))  # fmt: skip


@needs_fork
def test_an_extended_grid_is_the_same_in_processes():
    # a grid that ends far too high: the walk extends it below its end
    model = _binomial()
    data = model._path_data()
    grid = model.lambda_grid(4, lam_min_ratio=0.6)
    ids = fold_ids(data.y, 4, random_state=2)
    serial = cross_validate(data, grid, ids, extend=12, patience=3)
    par = cross_validate(data, grid, ids, extend=12, patience=3, n_jobs=2, backend="processes")
    assert serial.extended > 0
    _assert_same(serial, par)


@needs_fork
def test_fit_cv_n_jobs_2_equals_n_jobs_1():
    model = _collinear(1200)
    a = model.fit_cv(folds=4, random_state=1, n_lambdas=15, n_jobs=1)
    b = model.fit_cv(folds=4, random_state=1, n_lambdas=15, n_jobs=2)
    assert_array_equal(a.fold_scores, b.fold_scores)
    assert_array_equal(a.best_.coef, b.best_.coef)
    assert a.best_.intercept == b.best_.intercept


@needs_fork
def test_processes_solve_the_folds_outside_the_caller(tmp_path):
    model = _binomial(400)
    data = model._path_data()

    def prepare(rows):
        # a file per call, named by the process that prepared it
        kind = "all" if rows is None else "fold"
        (tmp_path / f"{kind}-{os.getpid()}-{len(list(tmp_path.iterdir()))}").touch()
        return data.prepare(rows)

    grid = model.lambda_grid(5)
    ids = fold_ids(data.y, 4, random_state=0)
    cross_validate(data, grid, ids, n_jobs=2, backend="processes", prepare=prepare)
    seen = [p.name.split("-") for p in tmp_path.iterdir()]
    fold_pids = {int(pid) for kind, pid, _ in seen if kind == "fold"}
    all_pids = {int(pid) for kind, pid, _ in seen if kind == "all"}
    assert len(fold_pids) == 2 and os.getpid() not in fold_pids
    assert all_pids == {os.getpid()}
    assert sum(kind == "fold" for kind, _, _ in seen) == 4  # kept: prepared once


@needs_fork
def test_a_warning_in_a_worker_reaches_the_caller():
    model = _binomial(400)
    data = model._path_data()

    def prepare(rows):
        if rows is not None:
            warnings.warn("from a fold", RuntimeWarning, stacklevel=1)
        return data.prepare(rows)

    grid = model.lambda_grid(3)
    ids = fold_ids(data.y, 2, random_state=0)
    with pytest.warns(RuntimeWarning, match="from a fold"):
        cross_validate(data, grid, ids, n_jobs=2, backend="processes", prepare=prepare)


def test_backend_is_checked():
    with pytest.raises(ValueError, match="backend must be one of"):
        resolve_backend("dask", 2)
    assert resolve_backend("processes", 1) == "serial"
    assert resolve_backend("threads", 2) == "threads"


@needs_fork
def test_an_exception_that_does_not_pickle_reaches_the_caller_as_text():
    model = _binomial(300)
    data = model._path_data()

    class Local(Exception):  # a local class: pickle cannot find it by name
        pass

    def prepare(rows):
        if rows is not None:
            raise Local("fold broke")
        return data.prepare(rows)

    grid = model.lambda_grid(3)
    ids = fold_ids(data.y, 2, random_state=0)
    with pytest.raises(RuntimeError, match="Local: fold broke"):
        cross_validate(data, grid, ids, n_jobs=2, backend="processes", prepare=prepare)


# ---------------------------------------------------------------------------------------
# backend="auto": workers only when the folds' measured work pays for them (issue 27)
# ---------------------------------------------------------------------------------------


def test_parallel_pays_needs_the_work_and_idle_cores(monkeypatch):
    from binarsity_stats.engine import _cv

    monkeypatch.setattr(_cv, "PARALLEL_MIN_SECONDS", 0.05)
    # 10 λ in the chunk: 0.04 s per λ is below the bar, 0.06 s above it
    assert not _cv.parallel_pays(0.4, 10, 2, idle=2.0)
    assert _cv.parallel_pays(0.6, 10, 2, idle=2.0)
    assert not _cv.parallel_pays(0.6, 10, 2, idle=1.2)  # a busy machine: no second core
    assert not _cv.parallel_pays(60.0, 10, 1, idle=2.0)  # one worker is the caller
    assert not _cv.parallel_pays(1.0, 0, 2, idle=2.0)


def test_idle_cores_subtracts_the_load_but_not_this_process(monkeypatch):
    from binarsity_stats.engine import _cv

    monkeypatch.setattr(_cv.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(_cv.os, "getloadavg", lambda: (1.0, 0.0, 0.0))
    # the function itself (conftest replaces _cv.idle_cores for the rest of the suite)
    assert idle_cores() == 2.0
    monkeypatch.setattr(_cv.os, "getloadavg", lambda: (2.5, 0.0, 0.0))
    assert idle_cores() == 0.5

    def no_load():
        raise OSError("no load average")

    monkeypatch.setattr(_cv.os, "getloadavg", no_load)
    assert idle_cores() == 2.0


@pytest.mark.parametrize("backend", ["threads", pytest.param("processes", marks=needs_fork)])
def test_auto_stays_serial_when_the_folds_are_cheap(monkeypatch, backend):
    from binarsity_stats.engine import _cv

    # the folds' solves of this model take milliseconds: far below an hour per λ
    monkeypatch.setattr(_cv, "PARALLEL_MIN_SECONDS", 3600.0)
    monkeypatch.setattr(_cv, "idle_cores", lambda: 2.0)
    monkeypatch.setattr(_cv, "resolve_backend", lambda b, n: "serial" if n <= 1 else backend)
    model = _binomial(400)
    auto = _run(model, "auto", 2)
    assert auto.backend == "serial"
    _assert_same(_run(model, "auto", 1), auto)


@pytest.mark.parametrize("backend", ["threads", pytest.param("processes", marks=needs_fork)])
@pytest.mark.parametrize("switch_after", [1, 3])
def test_workers_started_mid_walk_give_the_serial_cv(monkeypatch, backend, switch_after):
    from binarsity_stats.engine import _cv

    calls = []

    def pays(seconds, n_lambdas, workers, idle=None):  # the measured work pays at chunk k
        calls.append(seconds)
        return len(calls) >= switch_after

    monkeypatch.setattr(_cv, "parallel_pays", pays)
    monkeypatch.setattr(_cv, "resolve_backend", lambda b, n: "serial" if n <= 1 else backend)
    for make in (_collinear, _binomial):
        calls.clear()
        model = make()
        serial = _run(model, "auto", 1)
        auto = _run(model, "auto", 2)
        assert auto.backend == backend and len(calls) == switch_after
        assert all(s >= 0 for s in calls)
        _assert_same(serial, auto)


@needs_fork
def test_an_explicit_backend_starts_its_workers_at_once(monkeypatch):
    from binarsity_stats.engine import _cv

    monkeypatch.setattr(_cv, "PARALLEL_MIN_SECONDS", 3600.0)
    called = []
    monkeypatch.setattr(_cv, "parallel_pays", lambda *a, **k: called.append(a) or False)
    res = _run(_binomial(300), "processes", 2)
    assert res.backend == "processes" and not called
