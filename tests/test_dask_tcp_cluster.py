"""The whole analysis through a real Dask cluster over TCP (issue 26).

A scheduler and two workers run as separate processes (``python -m dask scheduler``,
``python -m dask worker``) on 127.0.0.1, as a user starts them on a machine; the test
connects with ``glm(..., client="tcp://127.0.0.1:PORT")`` and runs what a user runs
after: ``fit`` (the distributed solver and the default one), ``fit_cv``, ``summary``,
``refit``, ``report`` and ``predict``. The numbers are checked against the same model
fitted in memory (the distributed binning and solver are exact: objective to 1e-9
relative), and the distributed solver's passes are shown to run on the workers (their
task counters grow). The first test gathers the rows to the client (``collect=True``,
the default below ``COLLECT_MAX_ROWS``); the second keeps them on the workers
(``collect=False``): fit, ``fit_cv`` with its fold ids mapped on the workers (its curve
equal to the in-memory CV's with the same folds) and ``summary`` from reductions.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

import binarsity_stats  # noqa: E402
from binarsity_stats import glm  # noqa: E402

FORMULA = "y ~ bin(x, 8) + bin(z, 8) + C(g)"
START_SECONDS = 90


def _frame(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x": rng.uniform(size=n), "z": rng.normal(size=n),
                       "g": rng.choice(["a", "b", "c"], size=n)})  # fmt: skip
    eta = -0.5 + 1.0 * (df.x > 0.5) + 0.4 * (df.z > 0.3) + 0.3 * (df.g == "b")
    df["y"] = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    return df


@pytest.fixture(scope="module")
def tcp_cluster(tmp_path_factory):
    """A scheduler and two single-thread workers, each its own process, on 127.0.0.1."""
    where = tmp_path_factory.mktemp("cluster")
    env = dict(os.environ)
    # the workers import the binarsity_stats this suite imports (compiled, installed or
    # in place), never a source folder without kernels
    env["PYTHONPATH"] = str(Path(binarsity_stats.__file__).resolve().parents[1])
    env["DASK_DISTRIBUTED__WORKER__DAEMON"] = "False"
    scheduler_file = where / "scheduler.json"
    procs = []
    logs = []

    def start(args, name):
        log = open(where / f"{name}.log", "wb")  # noqa: SIM115 - closed at teardown
        logs.append(log)
        procs.append(subprocess.Popen([sys.executable, "-m", "dask", *args], cwd=where,
                                      env=env, stdout=log, stderr=subprocess.STDOUT))  # fmt: skip

    try:
        start(["scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
               "--scheduler-file", str(scheduler_file)], "scheduler")  # fmt: skip
        deadline = time.monotonic() + START_SECONDS
        address = None
        while address is None and time.monotonic() < deadline:
            try:  # the scheduler writes the file in pieces: read once it parses
                address = json.loads(scheduler_file.read_text())["address"]
            except (OSError, ValueError, KeyError):
                time.sleep(0.2)
        assert address is not None, (where / "scheduler.log").read_text()
        assert address.startswith("tcp://127.0.0.1:")
        for i in range(2):
            start(["worker", address, "--nthreads", "1", "--nworkers", "1", "--no-dashboard",
                   "--host", "127.0.0.1", "--local-directory", str(where / f"w{i}"),
                   "--name", f"worker-{i}"], f"worker{i}")  # fmt: skip
        with distributed.Client(address, timeout=START_SECONDS) as client:
            client.wait_for_workers(2, timeout=START_SECONDS)
            worker_pids = set(client.run(os.getpid).values())
        assert len(worker_pids) == 2 and os.getpid() not in worker_pids
        yield address
    finally:
        for proc in reversed(procs):
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for log in logs:
            log.close()


def _tasks_done(client) -> int:
    """Tasks the workers have run so far (their own counters)."""
    counts = client.run(lambda dask_worker: dask_worker.state.transition_counter)
    return sum(counts.values())


def test_fit_cv_summary_refit_and_report_through_a_tcp_scheduler(tcp_cluster, tmp_path):
    df = _frame()
    ddf = dd.from_pandas(df, npartitions=4)
    model = glm(FORMULA, ddf, family="binomial", client=tcp_cluster)
    client = model.dask_client
    assert client.scheduler.address == tcp_cluster
    try:
        mem = glm(FORMULA, df, family="binomial").fit(lam=2e-3)
        before = _tasks_done(client)
        dist = model.fit(lam=2e-3, solver="dask")  # the distributed solver's passes
        assert _tasks_done(client) > before  # ran as tasks on the workers
        # the distributed bins and solve are the in-memory ones (design.md §9)
        assert np.isclose(dist.objective, mem.objective, rtol=1e-9, atol=0)

        res = model.fit(lam=2e-3)  # the default solver, on the codes the workers binned
        assert np.isclose(res.objective, mem.objective, rtol=1e-12, atol=0)
        np.testing.assert_allclose(res.coef, mem.coef, rtol=1e-6, atol=1e-6)

        cv = model.fit_cv(folds=3, n_lambdas=8, random_state=0)
        assert np.isfinite(cv.fold_scores).all() and cv.fold_scores.shape[0] == 3
        assert cv.lam_min in cv.lams and cv.lam_1se >= cv.lam_min

        text = str(res.summary())
        for term in ("bin(x, 8)", "bin(z, 8)", "C(g)"):
            assert term in text

        refit = res.refit()
        ref_mem = mem.refit()
        np.testing.assert_allclose(refit.params, ref_mem.params, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(refit.bse, ref_mem.bse, rtol=1e-5, atol=1e-6)

        out = res.report(tmp_path / "report.html")
        html = Path(out).read_text(encoding="utf-8")
        assert "<html" in html.lower() and "bin(x, 8)" in html

        pred = res.predict(ddf)
        pred = pred.compute() if hasattr(pred, "compute") else pred
        np.testing.assert_allclose(np.asarray(pred), mem.predict(df), rtol=1e-6, atol=1e-9)
    finally:
        client.close()


def test_fit_cv_and_summary_with_the_rows_on_the_workers_through_tcp(tcp_cluster):
    """``collect=False`` (the default above ``COLLECT_MAX_ROWS``): the rows, the codes and
    the CV's fold ids (a column of the data, mapped on the workers) stay on the two worker
    processes; the client gets reductions. The CV curve is the in-memory one."""
    df = _frame(4000, seed=1)
    df["fold"] = np.random.default_rng(2).integers(1, 4, len(df))
    ddf = dd.from_pandas(df, npartitions=4)
    model = glm(FORMULA, ddf, family="binomial", client=tcp_cluster, collect=False)
    client = model.dask_client
    assert client.scheduler.address == tcp_cluster
    try:
        assert model.rows_on_workers
        mem = glm(FORMULA, df, family="binomial")
        before = _tasks_done(client)
        res = model.fit(lam=2e-3)  # the Dask solver, the default here
        assert _tasks_done(client) > before  # ran as tasks on the workers
        ref = mem.fit(lam=2e-3, tol=1e-9)
        assert np.isclose(res.objective, ref.objective, rtol=1e-7, atol=0)

        cv = model.fit_cv(folds="fold", n_lambdas=4, tol=1e-9, cv_tol=None)
        ref_cv = mem.fit_cv(folds=df["fold"].to_numpy(), n_lambdas=4, tol=1e-9, cv_tol=None)
        assert cv.fold_ids is None and cv.fold_scores.shape == (3, cv.lams.size)
        np.testing.assert_allclose(cv.lams, ref_cv.lams, rtol=1e-8)
        np.testing.assert_allclose(cv.mean, ref_cv.mean, rtol=1e-8)
        assert cv.idx_min == ref_cv.idx_min and cv.idx_1se == ref_cv.idx_1se

        text = cv.best_.summary().as_text()
        assert "Binarsity GLM Results" in text and "No. Observations:" in text
        for term in ("bin(x, 8)", "bin(z, 8)", "C(g)"):
            assert term in text
    finally:
        client.close()
