"""Suite ``results``: every statistic of a fitted model, timed and its memory measured.

What a statistician runs after a fit, at n = 1e5 and 1e6 rows (``--quick``: 5,000),
binomial and poisson, on simulated data with a known truth: p = 20 Toeplitz(0.5)
Gaussian features (:func:`benchmarks._data.toeplitz_gaussian`), 6 of them active
(steps alternating with sinusoids, :func:`benchmarks._data.additive_truth`), intercept
−0.5 (poisson: η* halved, so the mean count stays near 0.7). The formula bins every
feature at the package's defaults, ``y ~ bin(x0) + … + bin(x19)``, and every call uses
its defaults:

* ``fit``: ``glm(formula, df, family=...).fit()`` (binning included; λ = "theory");
* ``summary``: ``str(res.summary())``;
* ``to_sql``: ``res.to_sql()`` (SQLite), then the query run on 1,000 rows in SQLite and
  its largest difference from ``predict`` recorded;
* ``refit``: ``res.refit()`` (the unpenalised GLM on the selected design; at these sizes
  fitted from sufficient statistics, ``model/_refit_glm.py``);
* ``get_prediction``: ``ref.get_prediction(df).summary_frame(alpha=0.05)`` on all rows;
* ``cli_predict``: ``python -m binarsity_stats predict model.pkl new.csv --interval 0.95``
  on all rows (model saved as ``fit --save`` does, with its refit; CSV written untimed;
  a child process, so its time includes imports and reading the CSV; its bytecode
  compiled by the warm-up's child, as an installed package's is: ``_cli_env``);
* ``report``: ``res.report()`` (the HTML page as a string);
* ``bootstrap``: ``res.bootstrap(20, random_state=0)``;
* ``fit_cv``: ``glm(formula, df, family=...).fit_cv()`` (10 folds, 50 λ).

Each (family, n) runs in its own Python process, its steps in the order above. Before
any timing the process runs every step once on 2,000 rows (imports and first-call
set-up are not timed), notes its resident size (the baseline), then generates the data.
Before each step the kernel's peak-RSS mark is reset (``/proc/self/clear_refs``), so a
step's peak is its own: ``peak_mb`` is the peak resident size during the step above the
baseline (the data frame and the fitted model included, as they are resident), beside
the budget of issue 22, ``budget_mb`` = the data frame's bytes + 3 × the design's bytes
(the bin codes and dense columns the model keeps). ``cli_predict``'s peak is the child's
peak RSS above the baseline of this process. Times: ``x_fit`` = seconds / the fit's
seconds, and ``x_unit`` = seconds per unit / the fit's seconds, a unit being a resample
(bootstrap), a fitted (fold or full-data) path point (fit_cv), and the whole call
otherwise. Target: ``x_unit`` ≤ 2, ``peak_mb`` ≤
``budget_mb``.

``--only`` takes families, steps and sizes to split the run, e.g. ``--only
binomial,1e6,fit,refit``.
"""

from __future__ import annotations

import io
import json
import os
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from . import PACKAGE_DIR
from ._common import REPO, SuiteOutput, peak_rss_bytes, reset_peak_rss
from ._data import INTERCEPT, active_set, additive_truth, toeplitz_gaussian

P = 20
N_ACTIVE = 6
FAMILIES = ("binomial", "poisson")
STEPS = ("fit", "summary", "to_sql", "refit", "get_prediction", "cli_predict", "report",
         "bootstrap", "fit_cv")  # fmt: skip
SIZES = (100_000, 1_000_000)
QUICK_SIZES = (5_000,)
WARMUP_N = 2_000
N_BOOT = 20
SQL_ROWS = 1_000
TIMEOUT = 3600.0  # one (family, n) process
FORMULA = "y ~ " + " + ".join(f"bin(x{j})" for j in range(P))
MB = 2**20


def simulate(n: int, family: str, seed: int = 0):
    """The data frame of one run: ``x0`` … ``x19`` and the response ``y``.

    Parameters
    ----------
    n : int
        Rows.
    family : {"binomial", "poisson"}
        Response distribution.
    seed : int
        Seed of the features and the response.

    Returns
    -------
    pandas.DataFrame
        Float64 columns ``x0`` … ``x19``, ``y``.
    """
    import pandas as pd

    X = toeplitz_gaussian(n, P, seed=seed)
    eta = INTERCEPT + additive_truth(X, active_set(P, N_ACTIVE), smooth=False)
    rng = np.random.default_rng(seed + 1)
    if family == "binomial":
        y = (rng.random(n) < 1.0 / (1.0 + np.exp(-eta))).astype(np.float64)
    else:
        y = rng.poisson(np.exp(0.5 * eta)).astype(np.float64)
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(P)], copy=False)
    df["y"] = y
    return df


def _rss() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * resource.getpagesize()


def _cli_env(tmp: Path) -> dict:
    """The CLI child's environment: the package of this checkout, bytecode cached.

    An installed package has its bytecode compiled (pip writes ``__pycache__``); a
    checkout run with ``PYTHONDONTWRITEBYTECODE`` would compile every module in every
    child (≈ 76 modules, a second under load). The children write and read their
    bytecode under ``tmp`` (``PYTHONPYCACHEPREFIX``; nothing is written into the
    checkout): the warm-up's child compiles, the timed one reads, as after an install.
    """
    env = dict(os.environ)
    env["PYTHONPATH"] = str(Path(PACKAGE_DIR).parent)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
    return env


class _Run:
    """The state one process carries from step to step."""

    def __init__(self, df, family: str, tmp: Path):
        self.df = df
        self.family = family
        self.tmp = tmp
        self.res = None
        self.ref = None
        self.unit = 1

    def fit(self):
        import binarsity_stats as bs

        self.res = bs.glm(FORMULA, self.df, family=self.family).fit()
        return {"n_iter": int(self.res.solution.n_iter), "n_jumps": int(self.res.n_jumps)}

    def summary(self):
        return {"chars": len(str(self.res.summary()))}

    def to_sql(self):
        sql = self.res.to_sql()
        return {"chars": len(sql), "_sql": sql}

    def refit(self):
        self.ref = self.res.refit()
        hist = getattr(self.ref.sm_results, "fit_history", {}) or {}
        return {"columns": len(self.ref.params), "irls_iterations": hist.get("iteration")}

    def get_prediction(self):
        frame = self.ref.get_prediction(self.df).summary_frame(alpha=0.05)
        return {"rows": len(frame)}

    def report(self):
        return {"chars": len(self.res.report())}

    def bootstrap(self):
        boot = self.res.bootstrap(N_BOOT, random_state=0, verbose=False)
        self.unit = N_BOOT
        return {"converged": float(np.mean(boot.converged))}

    def fit_cv(self):
        import binarsity_stats as bs

        cv = bs.glm(FORMULA, self.df, family=self.family).fit_cv()
        folds = np.asarray(cv.fold_scores)
        self.unit = int(np.isfinite(folds).sum()) + len(cv.lams)
        return {"path_points": self.unit, "lam_min": float(cv.lam_min)}


def _prepare_cli(run: _Run) -> list[str]:
    from binarsity_stats._cli import _save

    model = run.tmp / "model.pkl"
    _save(run.res, model, io.StringIO())  # as fit --save writes it: with its refit
    new = run.tmp / "new.csv"
    run.df.drop(columns="y").to_csv(new, index=False)
    out = run.tmp / "pred.csv"
    return [sys.executable, "-m", "binarsity_stats", "predict", str(model), str(new),
            "--interval", "0.95", "-o", str(out)]  # fmt: skip


def _check_sql(run: _Run, sql: str) -> float:
    """Largest |SQL − predict| (the mean response) on the first rows, run in SQLite."""
    rows = run.df.iloc[:SQL_ROWS]
    con = sqlite3.connect(":memory:")
    try:
        rows.to_sql("t", con, index=False)
        got = np.array([r[-1] for r in con.execute(sql).fetchall()], dtype=float)
    finally:
        con.close()
    want = run.res.predict(rows)
    return float(np.max(np.abs(got - want)))


def _one_pass(df, family: str, steps: tuple[str, ...], tmp: Path, emit) -> None:
    """Run ``steps`` in order on ``df``; ``emit(run, step, seconds, rss before, peak, info)``."""
    run = _Run(df, family, tmp)
    for step in steps:
        run.unit = 1
        cmd = _prepare_cli(run) if step == "cli_predict" else None
        before = _rss()
        reset_peak_rss()
        t0 = time.perf_counter()
        if step == "cli_predict":
            # run elsewhere than the repository root: `python -m` puts the working folder
            # first on sys.path, which would import the uncompiled source folder
            proc = subprocess.run(cmd, env=_cli_env(run.tmp), cwd=run.tmp, capture_output=True,
                                  text=True)  # fmt: skip
            seconds = time.perf_counter() - t0
            if proc.returncode != 0:
                raise RuntimeError(f"cli predict failed: {proc.stderr[-2000:]}")
            info: dict = {}
            # the largest peak of the children waited for: the CLI runs of this process
            peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
        else:
            info = getattr(run, step)()
            seconds = time.perf_counter() - t0
            peak = peak_rss_bytes()
        if step == "to_sql":
            info["sql_vs_predict"] = _check_sql(run, info.pop("_sql"))
        emit(run, step, seconds, before, peak, info)


def _design_bytes(design) -> int:
    """Bytes of the binned design a fitted model keeps (bin codes, dense columns)."""
    total = sum(np.asarray(c).nbytes for c in design.codes)
    if design.dense is not None:
        total += np.asarray(design.dense).nbytes
    return int(total)


def worker(family: str, n: int, steps: tuple[str, ...]) -> None:
    """Run the steps for one (family, n), printing one JSON line per step.

    Parameters
    ----------
    family : {"binomial", "poisson"}
        Response distribution.
    n : int
        Rows.
    steps : tuple of str
        Steps to run, in :data:`STEPS` order (``fit`` always runs first: the others
        need it).
    """
    warnings.simplefilter("ignore")
    steps = ("fit",) + tuple(s for s in STEPS if s in steps and s != "fit")
    with tempfile.TemporaryDirectory() as tmp:
        # every step once on a small problem: imports and first calls are not timed
        _one_pass(simulate(WARMUP_N, family, seed=7), family, steps, Path(tmp),
                  lambda *a: None)  # fmt: skip
        baseline = _rss()
        df = simulate(n, family)
        frame_bytes = int(df.memory_usage(deep=True).sum())
        state: dict = {}

        def emit(run, step, seconds, before, peak, info):
            if step == "fit":
                state["fit"] = seconds
                state["design"] = _design_bytes(run.res.model.design)
            row = {
                "step": step, "seconds": seconds, "unit": run.unit,
                "x_fit": seconds / state["fit"], "x_unit": seconds / run.unit / state["fit"],
                "peak_mb": (peak - baseline) / MB, "step_extra_mb": (peak - before) / MB,
                "frame_mb": frame_bytes / MB, "design_mb": state["design"] / MB,
                **info,
            }  # fmt: skip
            print("RESULT " + json.dumps(row), flush=True)

        _one_pass(df, family, steps, Path(tmp), emit)


def run(
    out: SuiteOutput,
    quick: bool,
    only: set[str] | None = None,
    **_: object,
) -> None:
    """Run the suite and fill ``out``.

    Parameters
    ----------
    out : SuiteOutput
        Collector of the rows.
    quick : bool
        n = 5,000 only (a smoke run); else n = 1e5 and 1e6.
    only : set of str, optional
        Families, steps and/or sizes (``1e5``, ``1e6``) to run; ``fit`` always runs
        (the others need it).
    """
    only = only or set()
    size_names = {f"1e{round(np.log10(n))}": n for n in SIZES}
    unknown = only - set(FAMILIES) - set(STEPS) - set(size_names)
    if unknown:
        raise SystemExit(
            f"--only {','.join(sorted(unknown))}: not a family ({', '.join(FAMILIES)}), "
            f"a step ({', '.join(STEPS)}) nor a size ({', '.join(size_names)}) of the "
            "results suite."
        )
    families = [f for f in FAMILIES if f in only] or list(FAMILIES)
    steps = tuple(s for s in STEPS if s in only) or STEPS
    sizes = [n for name, n in size_names.items() if name in only] or list(SIZES)
    for family in families:
        for n in QUICK_SIZES if quick else sizes:
            print(f"results: {family}, n = {n:,}", flush=True)
            for row in _spawn(family, n, steps):
                out.add(family=family, n=n, **row)
    out.note(f"formula: {FORMULA}; data: {P} Toeplitz(0.5) Gaussian features, "
             f"{N_ACTIVE} active (steps and sinusoids)")  # fmt: skip
    out.note(
        "peak_mb: peak resident size during the step above the process's baseline "
        "(data frame and fitted model included); budget: frame_mb + 3 × design_mb. "
        "x_unit: seconds per unit (resample, path point, else the call) "
        "/ fit seconds; target ≤ 2."
    )
    out.write(columns=["family", "n", "step", "seconds", "x_fit", "unit", "x_unit",
                       "peak_mb", "step_extra_mb", "frame_mb", "design_mb"])  # fmt: skip


def _spawn(family: str, n: int, steps: tuple[str, ...]) -> list[dict]:
    cmd = [sys.executable, "-m", "benchmarks.results", family, str(n), ",".join(steps)]
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)  # fmt: skip
    try:
        stdout, stderr = proc.communicate(timeout=TIMEOUT)
        failed = proc.returncode != 0
    except subprocess.TimeoutExpired:
        proc.kill()
        stdout, stderr = proc.communicate()
        failed = True
        stderr = f"killed after {TIMEOUT:.0f} s\n" + stderr
    rows = [json.loads(line[7:]) for line in io.StringIO(stdout) if line.startswith("RESULT ")]
    done = {r["step"] for r in rows}
    if failed:
        reason = stderr.strip().splitlines()[-1] if stderr.strip() else "no output"
        for step in ("fit",) + steps:
            if step not in done:
                rows.append({"step": step, "seconds": float("nan"), "error": reason})
                done.add(step)
    return rows


if __name__ == "__main__":
    worker(sys.argv[1], int(sys.argv[2]), tuple(sys.argv[3].split(",")))
