"""Suite ``scaling``: n from 1e4 to 1e7 — fit time, peak memory, log-log slope.

Simulated logistic design (:mod:`benchmarks._data`), p = 28, 50 bins, λ = 1e-3,
uniform weights. Each (method, n) runs in its own Python process so that its peak
resident memory (``ru_maxrss``) is its own; the data (X alone is 8·28·n bytes,
2.2 GB at n = 1e7) is generated before the fit and counted in the peak, and the
resident size before the fit is reported beside it. Each process first fits a small
problem (n = 2,000) untimed, so imports and first-call set-up are not timed.

* ours: ``BinarsityGLM(family="binomial", lam=1e-3, n_bins=50,
  penalty_weights="uniform")`` end to end, with ``n_iter_`` and, from ``solution_``,
  the prox-Newton iterations and the CD sweeps (each sweep is one pass over the codes);
* tick: ``FeaturesBinarizer(n_cuts=49)`` + SVRG defaults, end to end;
* LightGBM: ``LGBMClassifier(n_jobs=os.cpu_count())``, otherwise defaults (100 trees,
  255 bins). Its default ``n_jobs=-1`` lets OpenMP pick the thread count, which on this
  2-core VM oversubscribes it: 20–35 s instead of 1.1 s at n = 1e5.

A peer is not run at the next n once its time predicts (linearly) more than 10 minutes;
each process is killed after ``TIMEOUT`` seconds. The slope of log time on log n is
fitted over n ≥ 1e5, where fixed costs no longer dominate.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import warnings

import numpy as np

from ._common import REPO, SuiteOutput, new_figure, save_figure, timed, peak_rss_bytes, reset_peak_rss
from ._data import simulate_logistic
from ._ours import has_estimator

P = 28
N_BINS = 50
LAM = 1e-3
TIMEOUT = 900.0
LIMIT = 600.0


def _rss_gb() -> float:
    with open("/proc/self/statm") as fh:
        pages = int(fh.read().split()[1])
    return pages * resource.getpagesize() / 2**30


def _peak_gb() -> float:
    """Peak resident size since the last ``reset_peak_rss`` (else since start), GB."""
    return peak_rss_bytes() / 2**30


def worker(method: str, n: int) -> dict:
    """Generate the data, fit one method, return time and memory (run in a subprocess).

    Parameters
    ----------
    method : {"ours", "tick", "lightgbm"}
        What to fit.
    n : int
        Rows.

    Returns
    -------
    dict
        ``seconds``; ``rss_before_gb`` (resident size with the data, before the fit);
        ``peak_rss_gb`` (peak resident size during the fit, data included, from the
        kernel's VmHWM reset just before it); ``fit_extra_gb`` (their difference);
        method details (``n_iter``).
    """
    # A warm-up fit on a small problem first: imports and first-call set-up are not
    # what the scaling is about.
    small = simulate_logistic(2_000, P, seed=1)
    _fit(method, small.X, small.y)
    sim = simulate_logistic(n, P, seed=0)
    X, y = sim.X, sim.y
    del sim, small
    before = _rss_gb()
    reset_peak_rss()
    seconds, info = _fit(method, X, y)
    peak = _peak_gb()
    return {
        "seconds": seconds,
        "rss_before_gb": before,
        "peak_rss_gb": peak,
        "fit_extra_gb": peak - before,
        **info,
    }


def _fit(method: str, X: np.ndarray, y: np.ndarray) -> tuple[float, dict]:
    info: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method == "ours":
            from ._ours import fit_ours

            est, seconds = timed(
                lambda: fit_ours(
                    X, y, family="binomial", lam=LAM, n_bins=N_BINS, penalty_weights="uniform"
                )
            )
            info["n_iter"] = int(np.sum(getattr(est, "n_iter_", -1)))
            # CD sweeps: each is one pass over the codes of every (unscreened) feature
            solution = getattr(est, "solution_", None)
            info["n_outer"] = getattr(solution, "n_iter", None)
            info["n_sweeps"] = getattr(solution, "n_sweeps", None)
        elif method == "tick":
            from ._tick import fit_tick, tick_binarize

            def run():
                tb = tick_binarize(X, N_BINS)
                return fit_tick(tb.X_onehot, y, tb.block_ptr, LAM)

            fit, seconds = timed(run)
            info["n_iter"] = fit.n_epochs
        elif method == "lightgbm":
            from lightgbm import LGBMClassifier

            model = LGBMClassifier(verbose=-1, n_jobs=os.cpu_count())
            _, seconds = timed(lambda: model.fit(X, y))
        else:
            raise ValueError(f"unknown method {method!r}")
    return seconds, info


def _spawn(method: str, n: int) -> dict:
    cmd = [sys.executable, "-m", "benchmarks.scaling", method, str(n)]
    try:
        proc = subprocess.run(
            cmd, cwd=REPO, capture_output=True, text=True, timeout=TIMEOUT, check=False
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timeout after {TIMEOUT:.0f} s"}
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr else "failed"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run(out: SuiteOutput, quick: bool, only: set[str] | None = None, **_: object) -> None:
    """Run the suite and fill ``out``.

    Parameters
    ----------
    out : SuiteOutput
        Collector of the rows.
    quick : bool
        n up to 3e5 for ours and LightGBM, 1e5 for tick.
    only : set of str, optional
        Subset of {"ours", "tick", "lightgbm"} to run.
    """
    ns = [10_000, 30_000, 100_000, 300_000] + ([] if quick else [1_000_000, 3_000_000, 10_000_000])
    methods = [m for m in ("ours", "tick", "lightgbm") if only is None or m in only]
    if not has_estimator():
        methods = [m for m in methods if m != "ours"]
        out.note("binarsity_stats.BinarsityGLM is missing: only the peers are measured")
    caps = {"tick": 100_000 if quick else None}
    for method in methods:
        prev = None
        for n in ns:
            if caps.get(method) and n > caps[method]:
                break
            if prev is not None and prev[1] * n / prev[0] > LIMIT:
                out.note(f"{method}: n = {n:,} skipped (predicted > {LIMIT:.0f} s)")
                break
            res = _spawn(method, n)
            out.add(method=method, n=n, **res)
            print(f"  {method} n={n:,}: {res}", flush=True)
            if "error" in res:
                break
            prev = (n, res["seconds"])
    for method in methods:
        rows = [r for r in out.rows if r["method"] == method and "seconds" in r]
        big = [r for r in rows if r["n"] >= 100_000]
        if len(big) >= 2:
            slope = np.polyfit(
                np.log([r["n"] for r in big]), np.log([r["seconds"] for r in big]), 1
            )[0]
            out.note(f"{method}: log-log slope of time on n (n ≥ 1e5) = {slope:.3f}")
    _figure(out, methods)
    out.write(
        [
            "method",
            "n",
            "seconds",
            "rss_before_gb",
            "peak_rss_gb",
            "fit_extra_gb",
            "n_iter",
            "n_sweeps",
            "error",
        ]
    )


def _figure(out: SuiteOutput, methods) -> None:
    fig, (ax1, ax2) = new_figure(ncols=2)
    for method in methods:
        rows = [r for r in out.rows if r["method"] == method and "seconds" in r]
        n = [r["n"] for r in rows]
        ax1.loglog(n, [r["seconds"] for r in rows], "o-", label=method)
        ax2.loglog(n, [r["peak_rss_gb"] for r in rows], "o-", label=method)
    ax1.set_xlabel("n (p = 28, 50 bins)")
    ax1.set_ylabel("fit seconds")
    ax2.set_xlabel("n")
    ax2.set_ylabel("peak RSS (GB, data included)")
    ax1.legend()
    ax1.set_title("Fit time")
    ax2.set_title("Peak memory")
    save_figure(fig, out.figure_path("time_memory"), out.machine_line())


if __name__ == "__main__":
    print(json.dumps(worker(sys.argv[1], int(sys.argv[2]))))
