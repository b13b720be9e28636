"""A Dask fit never hangs on a cluster without workers (issue 22, item 8).

Killing both workers of a cluster 0.2 s into a default fit left ``dask.compute``
waiting for ever. Every computation of a fit on a ``distributed`` cluster is now
watched: with no worker alive for ``binarsity_stats.dask_no_workers_timeout`` seconds,
or after ``binarsity_stats.dask_timeout`` seconds, it is abandoned with a
``TimeoutError`` naming the scheduler's state (workers alive, tasks processing,
results pending, the scheduler's tasks by state). Tested on a real ``LocalCluster``:
one with no worker, one whose workers are closed while the fit runs, and the refit of
a model whose rows stay on the workers (issue 26): closing both workers mid-refit fails
within the limit, closing one of two lets Dask recompute its partitions and the refit
completes with the same estimates.
"""

from __future__ import annotations

import re
import threading
import time

import numpy as np
import pandas as pd
import pytest

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

from binarsity_stats import glm  # noqa: E402

FORMULA = "y ~ bin(x, 8) + bin(z, 8)"


def _frame(n=2000, seed=0):
    rng = np.random.RandomState(seed)
    df = pd.DataFrame({"x": rng.uniform(size=n), "z": rng.normal(size=n)})
    df["y"] = rng.poisson(np.exp(0.5 * (df.x > 0.5) + 0.2 * df.z)).astype(float)
    return df


def _raised_within(seconds, action):
    """What ``action()`` raised, run in a daemon thread that must end within ``seconds``
    (a hang fails the test instead of hanging the suite)."""
    box = {}

    def run():
        try:
            action()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            box["exc"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"still waiting after {seconds} s: the computation hangs"
    return box.get("exc")


def _cluster(n_workers):
    return distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1,
                                    processes=False, dashboard_address=":0")  # fmt: skip


def test_a_cluster_without_workers_fails_fast_naming_the_state():
    ddf = dd.from_pandas(_frame(), npartitions=4)
    with _cluster(0) as cluster, distributed.Client(cluster, set_as_default=False) as client:
        with dask.config.set({"binarsity_stats.dask_no_workers_timeout": 1.0}):
            exc = _raised_within(
                60, lambda: glm(FORMULA, ddf, family="poisson", client=client).fit(lam=1e-3)
            )
        assert isinstance(exc, TimeoutError), repr(exc)
        msg = str(exc)
        assert "no worker alive for 1 s" in msg and "0 worker(s) alive" in msg
        # the scheduler's tasks by state: none can run without a worker (queued, or
        # no-worker without the scheduler's queuing)
        assert re.search(r"tasks on the scheduler by state: .*\d+ (queued|no-worker)", msg), msg
        assert cluster.scheduler_address in msg and "result(s) not ready" in msg
        # the overall limit, also named
        from binarsity_stats.distributed._dask import compute

        slow = dask.delayed(time.sleep)(5)
        with dask.config.set({"binarsity_stats.dask_timeout": 0.5,
                              "binarsity_stats.dask_no_workers_timeout": None}), \
                pytest.raises(TimeoutError, match=r"did not finish within 0.5 s"):  # fmt: skip
            compute(slow, client=client)


def test_workers_closed_during_a_fit_raise_instead_of_hanging():
    df = _frame(20_000)
    ddf = dd.from_pandas(df, npartitions=8)
    with _cluster(2) as cluster, distributed.Client(cluster, set_as_default=False) as client:
        done = threading.Event()

        def kill():
            time.sleep(0.2)
            for w in list(cluster.workers.values()):
                client.sync(w.close)  # the worker dies; nothing restarts it
            done.set()

        def fits():
            for _ in range(200):  # the passes of glm() on the cluster, until the kill
                glm(FORMULA, ddf, family="poisson", client=client).fit(lam=1e-3)

        killer = threading.Thread(target=kill)
        killer.start()
        with dask.config.set({"binarsity_stats.dask_no_workers_timeout": 1.0}):
            exc = _raised_within(60, fits)
        killer.join(30)
        assert done.is_set()
        assert isinstance(exc, TimeoutError) and "0 worker(s) alive" in str(exc), repr(exc)


def test_local_schedulers_compute_as_dask_does():
    from binarsity_stats.distributed._dask import compute

    x = dask.delayed(sum)([1, 2, 3])
    with dask.config.set(scheduler="sync"):
        assert compute(x, x) == (6, 6)
    with dask.config.set({"binarsity_stats.dask_timeout": -1}), \
            _cluster(1) as cluster, distributed.Client(cluster, set_as_default=False) as c, \
            pytest.raises(ValueError, match="must be positive"):  # fmt: skip
        compute(x, client=c)


class _LateFuture:
    """A future that finishes while it is being polled (a loaded machine), and whose
    first timed fetch hits distributed's race (``UnboundLocalError`` from its
    ``sync()``, 2026.8, under load). ``result()`` must not be asked before it is done."""

    status = "finished"

    def __init__(self, value, polls=3):
        self.value, self.polls, self.raced = value, polls, False

    def result(self, timeout=None):
        if self.polls > 0:
            raise AssertionError("result() was called before the future was done")
        if timeout is not None and not self.raced:
            self.raced = True
            raise UnboundLocalError("cannot access local variable 'result'")
        return self.value

    def done(self):
        self.polls -= 1
        return self.polls <= 0


class _LateClient:
    def __init__(self, values):
        self.futures = [_LateFuture(v) for v in values]

    def compute(self, objs):
        return self.futures

    def gather(self, futures):
        return [f.result() for f in futures]


def test_results_are_taken_once_done_and_a_racing_fetch_is_retried():
    # the CI failure of 2026-11: result(timeout=0.5) gave up, the future was done by the
    # next line, and its TimeoutError was taken for the task's own error; then
    # result(timeout=...) itself raised UnboundLocalError under load. The futures are
    # now polled with done(), fetched once done, and a fetch that races is retried.
    from binarsity_stats.distributed._dask import compute

    client = _LateClient([1, 2])
    assert compute("a", "b", client=client) == (1, 2)
    assert all(f.polls <= 0 and f.raced for f in client.futures)


def test_a_task_that_raises_timeout_error_is_raised_as_its_own():
    from binarsity_stats.distributed._dask import compute

    def boom():
        raise TimeoutError("the task's own timeout")

    with _cluster(1) as cluster, distributed.Client(cluster, set_as_default=False) as c:
        with pytest.raises(TimeoutError, match="the task's own timeout"):
            compute(dask.delayed(boom)(), client=c)


def _refit_model(client, n=20_000):
    df = _frame(n)
    ddf = dd.from_pandas(df, npartitions=8)
    model = glm(FORMULA, ddf, family="poisson", collect=False, client=client)
    return model.fit(lam=1e-3)


def _kill_later(cluster, client, names, delay):
    """Close the named workers ``delay`` seconds from now (nothing restarts them)."""
    done = threading.Event()

    def kill():
        time.sleep(delay)
        for name in names:
            client.sync(cluster.workers[name].close)
        done.set()

    thread = threading.Thread(target=kill)
    thread.start()
    return thread, done


def test_losing_one_of_two_workers_mid_refit_completes():
    with _cluster(2) as cluster, distributed.Client(cluster, set_as_default=False) as client:
        res = _refit_model(client)
        ref = res.refit()  # both workers alive
        refits = []

        def refit_until_killed():
            while not done.is_set():  # refits running while the worker goes
                refits.append(res.refit())
            refits.append(res.refit())  # and one on the worker left

        thread, done = _kill_later(cluster, client, [next(iter(cluster.workers))], 0.3)
        exc = _raised_within(120, refit_until_killed)
        thread.join(30)
        assert exc is None, repr(exc)
        assert len(client.nthreads()) == 1 and len(refits) >= 1
    for out in refits:  # the lost partitions recomputed from their lineage: the same sums
        np.testing.assert_allclose(out.params, ref.params, rtol=1e-12)
        np.testing.assert_allclose(out.bse, ref.bse, rtol=1e-12)
        np.testing.assert_allclose(out.deviance, ref.deviance, rtol=1e-12)


def test_all_workers_closed_mid_refit_raise_naming_the_state():
    with _cluster(2) as cluster, distributed.Client(cluster, set_as_default=False) as client:
        res = _refit_model(client)

        def refits():
            for _ in range(200):  # the passes of refit() on the cluster, until the kill
                res.refit()

        thread, done = _kill_later(cluster, client, list(cluster.workers), 0.3)
        with dask.config.set({"binarsity_stats.dask_no_workers_timeout": 1.0}):
            exc = _raised_within(60, refits)
        thread.join(30)
        assert done.is_set()
        assert isinstance(exc, TimeoutError), repr(exc)
        msg = str(exc)
        assert "0 worker(s) alive" in msg and "tasks on the scheduler by state:" in msg
        assert cluster.scheduler_address in msg
