"""Engine-level paths and K-fold CV (``binarsity_stats.engine._path``).

What is proved here:

* the engine's ``cross_validate`` on arrays (what a scikit-learn ``*CV`` estimator
  calls: binarizer codes, penalty weights, a few lines) gives bit for bit the folds,
  scores, λ grid and refits of the formula layer's ``fit_cv`` on the same model;
* ``select_lambda`` implements the minimum and the one-standard-error rule (a hand
  example), and refuses scores undefined everywhere;
* a fold that fails stops the walk with its own exception, in threads too;
* **Ctrl-C** during ``fit_cv(n_jobs=2)`` ends the process within a few seconds (a
  subprocess receives SIGINT in the middle of a CV that would run far longer; before,
  the process kept waiting for the pending folds).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_array_equal

from binarsity_stats import Binarizer, glm
from binarsity_stats.engine._cv import cross_validate
from binarsity_stats.engine._folds import fold_ids
from binarsity_stats.engine._path import PathData, lambda_grid
from binarsity_stats.engine._scoring import select_lambda
from binarsity_stats.families._families import get_family
from binarsity_stats.kernels._histogram import bin_sums_all
from binarsity_stats.penalty._penalty import penalty_weights


def _data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    x1, x2 = rng.normal(size=n), rng.gamma(2.0, size=n)
    eta = 0.9 * (x1 > 0.2) - 0.5 * (x2 > 2.5)
    y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    return pd.DataFrame({"x1": x1, "x2": x2, "y": y, "w": rng.uniform(0.5, 2.0, n)})


def _engine_cv(X, y, sw, *, n_bins, folds, random_state, **kw):
    """A ``BinarsityClassifierCV.fit`` in a few lines: bin, weigh, cross-validate."""
    binarizer = Binarizer(n_bins=n_bins).fit(X, sample_weight=sw)
    codes = np.ascontiguousarray(binarizer.transform_codes(X))
    sizes = np.asarray(binarizer.n_bins_, dtype=np.intp)
    block_ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
    counts = np.zeros(int(block_ptr[-1]))
    bin_sums_all(codes, block_ptr, sw, counts)
    omega = penalty_weights("balanced", counts, block_ptr, sizes)  # the formula default
    data = PathData(codes, block_ptr, y, get_family("binomial"), omega, sample_weight=sw)
    grid = lambda_grid(data.lambda_max(), kw.pop("n_lambdas"), kw.pop("lam_min_ratio"))
    ids = fold_ids(y, folds, stratify=True, random_state=random_state)
    return cross_validate(data, grid, ids, **kw)


def test_engine_cv_on_arrays_equals_the_formula_layers_fit_cv():
    df = _data()
    model = glm("y ~ bin(x1, 12) + bin(x2, 12)", df, family="binomial", sample_weight="w")
    opts = {"solver": "cd", "tol": 1e-7, "max_iter": 1000}
    for early in (True, False):
        ref = model.fit_cv(folds=4, random_state=5, n_lambdas=25, early_stopping=early,
                           patience=3, n_jobs=2)  # fmt: skip
        cv = _engine_cv(
            df[["x1", "x2"]], df["y"].to_numpy(), df["w"].to_numpy(), n_bins=12, folds=4,
            random_state=5, n_lambdas=25, lam_min_ratio=1e-3, opts=opts,
            fold_opts=dict(opts, tol=1e-5), early_stopping=early, patience=3,
        )  # fmt: skip
        assert_array_equal(cv.fold_ids, ref.fold_ids)
        assert_array_equal(cv.lams, ref.lams)
        assert_array_equal(cv.fold_scores, ref.fold_scores)
        assert (cv.lam_min, cv.lam_1se, cv.grid_size) == (ref.lam_min, ref.lam_1se, ref.grid_size)
        assert_array_equal(cv.path[cv.idx_min].coef, ref.best_.coef)
        assert cv.path[cv.idx_min].intercept == ref.best_.intercept


def test_select_lambda_minimum_and_one_standard_error_rule():
    # three folds, four λ (decreasing): means 3, 2, 1, 1.5
    scores = np.array([[3.0, 2.0, 0.5, 1.5], [3.0, 2.0, 1.0, 1.0], [3.0, 2.0, 1.5, 2.0]])
    mean, se, i_min, i_1se = select_lambda(scores, "deviance")
    assert_array_equal(mean, [3.0, 2.0, 1.0, 1.5])
    assert i_min == 2
    assert se[2] == pytest.approx(np.std([0.5, 1.0, 1.5], ddof=1) / np.sqrt(3))
    assert i_1se == 2  # 2.0 > 1 + 0.2887: λ_1se is λ_min here
    assert select_lambda(scores + [[0, -0.8, 0, 0]] * 3, "deviance")[3] == 1
    assert select_lambda(-scores, "auc")[2] == 2  # AUC is maximised
    with pytest.raises(ValueError, match="undefined on every fold"):
        select_lambda(np.full((3, 4), np.nan), "auc")


@pytest.mark.parametrize(("n_jobs", "backend"), [(1, "auto"), (2, "threads"), (2, "processes")])
def test_a_failing_fold_stops_the_walk_with_its_exception(n_jobs, backend):
    df = _data(200)
    model = glm("y ~ bin(x1, 8) + bin(x2, 8)", df, family="binomial")
    data = model._path_data()
    calls = []

    def prepare(rows):
        calls.append(rows)
        if len(calls) == 3:
            raise RuntimeError("fold 3 failed")
        return data.prepare(rows)

    grid = model.lambda_grid(10)
    ids = fold_ids(data.y, 4, random_state=0)
    with pytest.raises(RuntimeError, match="fold 3 failed"):
        cross_validate(data, grid, ids, n_jobs=n_jobs, prepare=prepare, keep=False, patience=5,
                       backend=backend)  # fmt: skip
    if backend == "processes":
        # the folds are prepared in the workers (each its own copy of ``calls``: the
        # third call is a worker's second chunk); only the path on all rows is here
        assert all(rows is None for rows in calls)
    else:
        # the first chunk of 5 λ prepares each fold and the path on all rows at most
        # once; the second chunk never starts
        assert 3 <= len(calls) <= 5


CHILD = textwrap.dedent(
    """
    import sys, time
    import numpy as np, pandas as pd
    from binarsity_stats import glm
    from binarsity_stats.engine import _cv
    # workers at once, whatever the machine's load (the rule is tested in test_cv.py)
    _cv.PARALLEL_MIN_SECONDS, _cv.idle_cores = 0.0, lambda: 2.0
    rng = np.random.default_rng(0)
    n = 40000
    X = rng.normal(size=(n, 6))
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(6)])
    eta = (X[:, 0] > 0) - X[:, 1] + np.sin(3 * X[:, 2])
    df["y"] = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    model = glm("y ~ " + " + ".join(f"bin(x{j}, 64)" for j in range(6)), df,
                family="binomial")
    print("ready", flush=True)
    model.fit_cv(folds=10, n_jobs=2, n_lambdas=80, lam_min_ratio=1e-6, cv_tol=1e-10,
                 early_stopping=False)
    print("done", flush=True)
    """
)


def _default_sigint() -> None:
    """In a child before exec: SIGINT back to its default disposition (see below)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process")
def test_ctrl_c_during_a_parallel_cv_exits_promptly(tmp_path):
    import binarsity_stats

    # the child imports the package these tests import (the installed one in CI, whose
    # kernels are compiled), never the source folder of a checkout: run it elsewhere
    imported = Path(binarsity_stats.__file__).resolve().parent.parent
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(imported))
    started = time.perf_counter()
    # its own session: the fold workers it forks are killed with it if the test fails.
    # Ctrl-C at a terminal: a shell starts background jobs (CI steps, `cmd &`, nohup) with
    # SIGINT *ignored*, the child would inherit that and Python then installs no
    # KeyboardInterrupt handler at all — restore the default disposition in the child.
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env=env, cwd=str(tmp_path), start_new_session=True,
        preexec_fn=_default_sigint,
    )  # fmt: skip
    # The bounds are relative to a baseline taken under the machine's load of the moment:
    # the child's own start (interpreter, imports, data, binning), about 1 s on an idle
    # machine and 3-10 s on two cores shared by a dozen jobs. Stopping costs a traceback
    # and an interpreter exit, i.e. a fraction of that start; a Ctrl-C that waited for
    # the fold walk would take the rest of the CV, 80 λ × 10 folds at cv_tol=1e-10 (10 λ
    # took 95 s at load 10), far above both bounds. The child has stopped when its output
    # pipes close: when it and every fold worker holding them have exited.
    try:
        assert proc.stdout.readline().strip() == "ready"
        baseline = time.perf_counter() - started
        time.sleep(1.5)  # inside the fold walk (the whole CV takes far longer)
        assert proc.poll() is None
        start = time.perf_counter()
        proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=max(60.0, 20 * baseline))
        except subprocess.TimeoutExpired:
            pytest.fail(
                f"the process had not stopped {time.perf_counter() - start:.0f} s after "
                f"Ctrl-C (its start took {baseline:.1f} s)"
            )
        elapsed = time.perf_counter() - start
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the child and any worker left behind
        except ProcessLookupError:
            pass
        proc.communicate(timeout=60)
    assert "done" not in out
    assert "KeyboardInterrupt" in err
    bound = max(10.0, 5 * baseline)
    assert elapsed < bound, (
        f"the process took {elapsed:.1f} s to stop after Ctrl-C (bound {bound:.1f} s: 5 × "
        f"its start, {baseline:.1f} s)"
    )


def _children(pid: int) -> list[int]:
    """Pids whose parent is ``pid`` (from /proc)."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry))
    return out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forked workers, /proc")
def test_cv_workers_die_with_a_killed_parent(tmp_path):
    """A parent that dies without cleaning up (SIGKILL, or Ctrl-C at a bad moment) leaves
    no fold worker behind: orphans would fit for minutes and hold the parent's pipes."""
    import binarsity_stats

    imported = Path(binarsity_stats.__file__).resolve().parent.parent
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(imported))
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env=env, cwd=str(tmp_path), start_new_session=True,
    )  # fmt: skip
    workers: list[int] = []
    try:
        assert proc.stdout.readline().strip() == "ready"
        deadline = time.monotonic() + 120
        while len(workers) < 2 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
            workers = _children(proc.pid)
        assert len(workers) == 2, f"expected two fold workers, found {workers}"
        proc.kill()  # no KeyboardInterrupt, no atexit, no finally: only the kernel acts
        proc.wait()
        deadline = time.monotonic() + 30
        alive = workers
        while alive and time.monotonic() < deadline:
            time.sleep(0.2)
            alive = [
                w
                for w in workers
                if os.path.exists(f"/proc/{w}")
                and open(f"/proc/{w}/stat").read().rsplit(")", 1)[1].split()[0] != "Z"
            ]
        assert not alive, f"fold workers {alive} outlived their killed parent"
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.communicate()
