"""Suite ``dask``: the Dask solver on a LocalCluster of 2 workers (issue 15).

The simulated design of ``scaling`` (p = 28 Toeplitz Gaussian features, ρ = 0.5, a
sparse additive truth), generated *partition by partition on the workers* (1e6 rows
each, at least 8 of them, seeded by the partition's index): the raw features of a partition exist only
while its codes are computed, and only the codes (uint8, 28 bytes per row) and y
(8 bytes per row) are persisted on the workers. Features are cut at the 49 quantiles
of their N(0, 1) marginal (50 bins; the population edges, so every partition bins
alike without a first pass). Each worker is a separate process with one thread and
a memory limit (``MEMORY_LIMIT``).

* ``gap``: n = 1e6 (``--quick``: 1e5), logistic and Poisson at λ = 1e-3 ("balanced"
  weights): the Dask objective against the in-memory CD solver on the same codes
  (gathered to the client), with passes, Gram passes and bytes per pass.
* ``scale``: a logistic fit at λ = 1e-3 for n = 1e6 and 1e7 (``--only 1e8`` adds
  1e8; ``--quick``: 1e5 and 1e6): fit time (data generation and persisting apart),
  passes, peak resident memory of each worker process, and the log-log slope of
  time on n.

* ``cv`` (issue 26): what a user runs, ``glm(formula, ddf).fit_cv(folds=5)`` then
  ``summary()`` of ``best_``, on a Dask DataFrame of n = 1e6 and 1e7 rows (``--quick``:
  1e5 and 1e6) generated on the workers (``cv_frame``: 7 numeric columns of the same
  AR(1) design, one 5-level categorical, a logistic y; 1e6 rows per partition), with
  the rows kept on the workers (``collect=False``, the default above 1e6 rows): seconds
  of the model's construction, of the CV and of the summary, passes over the data (one
  gather of results per pass), the bytes gathered, and the client's peak resident memory
  above its baseline (RSS sampled every 20 ms).

Commands: ``python -m benchmarks dask`` (``--quick``; ``--only 1e7,1e8`` for chosen
sizes of ``scale``; ``--only cv`` for the ``cv`` part alone, ``--only cv,1e7`` at
chosen sizes). With ``DASK_SCHEDULER_ADDRESS=tcp://host:8786`` set, the suite connects to that
scheduler instead of starting a LocalCluster (a multi-machine cluster: ``dask scheduler``
on one machine, ``dask worker tcp://host:8786 --nthreads 1 --memory-limit 4GiB`` on
each, started from the repository root so that ``benchmarks`` imports on the workers).
"""

from __future__ import annotations

import os
import resource
import time
import warnings
from contextlib import nullcontext

import numpy as np

from ._data import INTERCEPT, RHO, SINE, STEP, active_set

P = 28
N_BINS = 50
LAM = 1e-3
ROWS_PER_PART = 1_000_000
MEMORY_LIMIT = "4GiB"


def make_partition(index: int, rows: int, family: str, seed: int = 0) -> dict:
    """One partition of the simulated design: codes (p, rows) uint8 and y.

    The features are the stationary AR(1) across columns of ``_data.toeplitz_gaussian``
    (Σ_jk = ρ^|j−k|), drawn one column at a time in float32 and binned at once at the
    quantiles of their N(0, 1) marginal (code = ⌊50 Φ(x)⌋), so a partition never holds
    its (rows, p) matrix.
    """
    from scipy.special import ndtr

    rng = np.random.default_rng([seed, index])
    active = set(active_set(P, 6).tolist())
    funcs = [STEP, SINE]
    codes = np.empty((P, rows), dtype=np.uint8)
    eta = np.full(rows, INTERCEPT)
    x = rng.standard_normal(rows, dtype=np.float32)
    c = np.float32(np.sqrt(1.0 - RHO**2))
    k = 0
    for j in range(P):
        if j:
            x = np.float32(RHO) * x + c * rng.standard_normal(rows, dtype=np.float32)
        codes[j] = np.minimum(ndtr(x) * N_BINS, N_BINS - 1).astype(np.uint8)
        if j in active:
            eta += funcs[k % 2](x.astype(np.float64))
            k += 1
    if family == "binomial":
        y = (rng.random(rows) < 1.0 / (1.0 + np.exp(-eta))).astype(np.float64)
    else:
        y = rng.poisson(np.exp(0.5 * eta - 0.5)).astype(np.float64)
    return {"codes": codes, "y": y}


class _Design:
    def __init__(self, partitions):
        self.block_ptr = np.arange(0, P * N_BINS + 1, N_BINS)
        self.kinds = None
        self.n_dense = 0
        self.partitions = partitions


def _persisted(client, n: int, family: str):
    """Partitions generated and persisted on the workers; returns (design, seconds)."""
    from dask import delayed

    per = min(ROWS_PER_PART, -(-n // 8))  # at least 8 partitions, at most 1e6 rows each
    sizes = [per] * (n // per) + ([n % per] if n % per else [])
    parts = [delayed(make_partition, pure=True)(i, r, family) for i, r in enumerate(sizes)]
    t = time.perf_counter()
    parts = client.persist(parts)
    from distributed import wait

    wait(parts)
    return _Design(parts), time.perf_counter() - t


CV_FORMULA = ("y ~ bin(x0, 20) + bin(x1, 20) + bin(x2, 20) + bin(x3, 20) + bin(x4, 20)"
              " + bin(x5, 20) + bin(x6, 20) + C(g)")


def cv_frame(index: int, rows: int, seed: int = 1):
    """One partition of the ``cv`` part's DataFrame (built on a worker): 7 AR(1) N(0, 1)
    columns x0..x6 (ρ = 0.5), a 5-level categorical g, y ~ Bernoulli of a sparse
    additive logit (steps and sines of x0, x2, x4, a level effect of g)."""
    import pandas as pd

    rng = np.random.default_rng([seed, index])
    cols = {}
    x = rng.standard_normal(rows)
    for j in range(7):
        if j:
            x = RHO * x + np.sqrt(1.0 - RHO**2) * rng.standard_normal(rows)
        cols[f"x{j}"] = np.round(x, 3)
    g = rng.integers(0, 5, rows)
    cols["g"] = pd.Categorical.from_codes(g, ["a", "b", "c", "d", "e"])
    eta = (INTERCEPT + STEP(cols["x0"]) + SINE(cols["x2"]) + STEP(cols["x4"])
           + 0.3 * (g == 1) - 0.3 * (g == 3))  # fmt: skip
    cols["y"] = (rng.random(rows) < 1.0 / (1.0 + np.exp(-eta))).astype(np.float64)
    return pd.DataFrame(cols)


class _RssPeak:
    """The client's peak resident memory above its baseline, sampled by a thread."""

    def __init__(self, every: float = 0.02) -> None:
        import threading

        self.every = every
        self.base = self.peak = self._rss()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def _rss() -> int:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self.peak = max(self.peak, self._rss())

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self._rss())

    @property
    def above_mb(self) -> float:
        return (self.peak - self.base) / 1e6


def _cv_part(out, client, n: int) -> None:
    """``glm(CV_FORMULA, ddf).fit_cv(folds=5)`` + summary, rows on the workers."""
    import pickle

    import dask.dataframe as dd
    import distributed

    from binarsity_stats import glm

    per = min(ROWS_PER_PART, -(-n // 8))
    sizes = [per] * (n // per) + ([n % per] if n % per else [])
    ddf = dd.from_map(cv_frame, range(len(sizes)), sizes)  # built on the workers
    gathered = []  # (bytes) of every gather: one per pass
    gather = distributed.Client.gather

    def recording(self, futures, *args, **kwargs):
        res = gather(self, futures, *args, **kwargs)
        items = res if isinstance(res, list) else [res]
        gathered.append(sum(len(pickle.dumps(x, protocol=5)) for x in items))
        return res

    distributed.Client.gather = recording
    try:
        with _RssPeak() as rss:
            t = time.perf_counter()
            model = glm(CV_FORMULA, ddf, family="binomial", client=client, collect=False)
            t_build, passes_build = time.perf_counter() - t, len(gathered)
            t = time.perf_counter()
            cv = model.fit_cv(folds=5, random_state=0)
            t_cv, passes_cv = time.perf_counter() - t, len(gathered) - passes_build
            t = time.perf_counter()
            text = cv.best_.summary().as_text()
            t_summary = time.perf_counter() - t
            passes_summary = len(gathered) - passes_build - passes_cv
    finally:
        distributed.Client.gather = gather
    assert "Binarsity GLM Results" in text
    out.add(
        part="cv", family="binomial", n=n, partitions=len(sizes),
        seconds_build=round(t_build, 1), seconds_fit_cv=round(t_cv, 1),
        seconds_summary=round(t_summary, 1), passes_build=passes_build,
        passes_fit_cv=passes_cv, passes_summary=passes_summary,
        lams=f"{cv.lams.size} of {cv.grid_size}" + (f" +{cv.extended}" if cv.extended else ""),
        lam_min=f"{cv.lam_min:.3g}", lam_1se=f"{cv.lam_1se:.3g}",
        max_MB_gathered=round(max(gathered) / 1e6, 2),
        MB_gathered=round(sum(gathered) / 1e6, 1),
        client_peak_MB_above_baseline=round(rss.above_mb, 1),
    )  # fmt: skip
    print(out.rows[-1], flush=True)


def _peak_rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def run(out, quick: bool = False, data_dir=None, repeats: int = 3, only=None) -> None:
    """Run the suite (see the module docstring)."""
    from distributed import Client, LocalCluster

    from binarsity_stats.distributed._dask_solve import DaskProblem
    from binarsity_stats.engine._solvers import solve

    n_gap = 100_000 if quick else 1_000_000
    sizes = [100_000, 1_000_000] if quick else [1_000_000, 10_000_000]
    cv_sizes = list(sizes)
    only = set(only) if only else None
    cv_only = bool(only) and "cv" in only
    if only:
        only.discard("cv")
        chosen = [int(float(s)) for s in sorted(only, key=float)]
        if cv_only:
            cv_sizes = chosen or cv_sizes
            sizes = []
        else:
            sizes = chosen
    address = os.environ.get("DASK_SCHEDULER_ADDRESS")
    with (
        nullcontext(address) if address
        else LocalCluster(n_workers=2, threads_per_worker=1, memory_limit=MEMORY_LIMIT,
                          dashboard_address=":0")
    ) as cluster, Client(cluster) as client:  # fmt: skip
        client.run(lambda: __import__("os").environ.update(OMP_NUM_THREADS="1"))
        if not only and not cv_only:
            for family in ("binomial", "poisson"):
                design, _ = _persisted(client, n_gap, family)
                t = time.perf_counter()
                prob = DaskProblem(design, family, "balanced", client=client)
                sol = prob.fit(LAM, tol=1e-8)
                t_dask = time.perf_counter() - t
                local = client.compute(list(design.partitions), sync=True)
                codes = np.concatenate([pt["codes"] for pt in local], axis=1)
                y = np.concatenate([pt["y"] for pt in local])
                del local
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    t = time.perf_counter()
                    ref = solve(codes, design.block_ptr, y, family=family, lam=LAM,
                                penalty_weights=prob.weights, tol=1e-8, max_iter=2000)  # fmt: skip
                    t_mem = time.perf_counter() - t
                del codes, y
                gap = (sol.objective - ref.objective) / abs(ref.objective)
                out.add(
                    part="gap", family=family, n=n_gap, objective_dask=sol.objective,
                    objective_memory=ref.objective, rel_gap=f"{gap:.1e}",
                    passes=prob.n_passes, gram_passes=sol.n_gram_passes + 0,
                    MB_per_pass=round(sol.bytes_per_pass / 1e6, 1),
                    seconds_dask=round(t_dask, 1), seconds_memory=round(t_mem, 1),
                )  # fmt: skip
                print(out.rows[-1], flush=True)
                client.cancel(design.partitions)
                del design
        times = []
        for n in sizes:
            design, t_gen = _persisted(client, n, "binomial")
            t = time.perf_counter()
            prob = DaskProblem(design, "binomial", "balanced", client=client)
            sol = prob.fit(LAM, tol=1e-7)
            seconds = time.perf_counter() - t
            peaks = client.run(_peak_rss_gb)
            times.append((n, seconds))
            out.add(
                part="scale", family="binomial", n=n, partitions=len(design.partitions),
                seconds_generate=round(t_gen, 1), seconds_fit=round(seconds, 1),
                passes=prob.n_passes, gram_passes=sol.n_gram_passes + 0,
                MB_per_pass=round(sol.bytes_per_pass / 1e6, 1),
                kkt=f"{sol.kkt_violation:.1e}", converged=sol.converged,
                peak_worker_GB=" / ".join(f"{v:.2f}" for v in peaks.values()),
            )  # fmt: skip
            print(out.rows[-1], flush=True)
            client.cancel(design.partitions)
            del design
        if len(times) >= 2:
            ln = np.log([t[0] for t in times])
            lt = np.log([t[1] for t in times])
            slope = float(np.polyfit(ln, lt, 1)[0])
            out.note(f"log-log slope of fit time on n over {times[0][0]:.0e}–{times[-1][0]:.0e}: "
                     f"{slope:.2f}")  # fmt: skip
        if cv_only or not only:
            for n in cv_sizes:
                _cv_part(out, client, n)
    out.note(
        f"LocalCluster: 2 worker processes × 1 thread, memory_limit={MEMORY_LIMIT} each; "
        f"partitions of min(1e6, n/8) rows; λ = {LAM}; passes include the first "
        "(counts, ω, scales) pass; peak memory = the worker process's peak resident size "
        "since it started (ru_maxrss)."
    )
    out.write()
