"""Suite ``coxspeed``: where a Cox fit spends its time, and the compiled risk-set kernel.

``python -m benchmarks coxspeed [--quick] [--repeats R] [--only kernel,fit]``.

Data: ``families_cox``'s simulated step-shaped hazard (4 uniform features, ~35 %
censored, times rounded to 1/100: heavy ties) with three random strata,
``Surv(t, e) ~ bin(x0) + bin(x1) + bin(x2) + bin(x3) + strata(g)``.

* ``kernel``: one call of the loss + gradient + curvature majoriser (what every CD sweep
  and line search asks for), n = 2,000 and 50,000, Breslow and Efron ties: the compiled
  kernel ``_cox_fast.cox_loss_grad_hess`` (through ``_cox.loss_grad_hess``) against its
  NumPy reference ``_cox._loss_grad_hess_numpy``; median over R repeats of the mean
  CPU time of a call (the kernel is single-threaded).
* ``fit``: the whole ``fit_cv`` (10 folds, default grid) at n = 2,000 and, without
  ``--quick``, ``fit_path`` (50 λ) and a 5-fold ``fit_cv`` at n = 50,000, each run in
  two configurations in the same process: **before** — the NumPy loss and a thread pool
  for every bins' Gram of the polish (``_gram_stats.MIN_THREADED_CELLS = 0``, the behaviour
  before the kernel landed) — and **after** (the defaults). Wall and process CPU
  seconds (the CPU is the fairer number on a shared machine); the two configurations'
  CV curves must agree (max relative difference reported).
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from ._common import SuiteOutput


def _frame(n: int, seed: int = 0):
    import pandas as pd

    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 4))
    eta = 0.9 * (X[:, 0] > 0.6) - 0.6 * (X[:, 1] < 0.3) + 0.4 * ((X[:, 2] > 0.2) & (X[:, 2] <= 0.5))
    t = np.round(rng.exponential(np.exp(-eta)), 2) + 0.01
    c = np.round(rng.exponential(2.0, n), 2) + 0.01
    df = pd.DataFrame(X, columns=["x0", "x1", "x2", "x3"])
    df["t"], df["e"] = np.minimum(t, c), (t <= c).astype(int)
    df["g"] = rng.integers(0, 3, n)
    return df


FORMULA = "Surv(t, e) ~ bin(x0) + bin(x1) + bin(x2) + bin(x3) + strata(g)"


def _kernel(out: SuiteOutput, sizes, repeats: int) -> None:
    from binarsity_stats.families import _cox

    for n in sizes:
        df = _frame(n)
        y = _cox.encode(df["t"], df["e"], df["g"])
        s = np.ones(n)
        eta = np.random.default_rng(1).normal(size=n)
        g, h = np.empty(n), np.empty(n)
        _cox.risk_sets(y)  # the sort, cached (as in a fit)
        for ties in ("breslow", "efron"):
            times = {}
            for name, fn in (("numpy", _cox._loss_grad_hess_numpy), ("kernel", _cox.loss_grad_hess)):
                calls = max(5, int(2e6 // n))
                per = []
                for _ in range(max(3, repeats)):
                    t0 = time.process_time()  # one thread: CPU time, fairer under load
                    for _ in range(calls):
                        fn(eta, y, s, 1.0, g, h, ties)
                    per.append((time.process_time() - t0) / calls)
                times[name] = statistics.median(per)
            out.add(
                part="kernel",
                n=n,
                ties=ties,
                case="one loss + gradient + curvature call",
                before_ms=1e3 * times["numpy"],
                after_ms=1e3 * times["kernel"],
                speedup=times["numpy"] / times["kernel"],
            )


def _run_config(before: bool, fn):
    from binarsity_stats.families import _cox
    from binarsity_stats.design import _gram_stats

    saved = (_cox.loss_grad_hess, _gram_stats.MIN_THREADED_CELLS)
    if before:
        _cox.loss_grad_hess = _cox._loss_grad_hess_numpy
        _gram_stats.MIN_THREADED_CELLS = 0
    try:
        w0, c0 = time.perf_counter(), time.process_time()
        res = fn()
        return res, time.perf_counter() - w0, time.process_time() - c0
    finally:
        _cox.loss_grad_hess, _gram_stats.MIN_THREADED_CELLS = saved


def _fit(out: SuiteOutput, quick: bool) -> None:
    import binarsity_stats as bs

    cases = [(2000, "fit_cv (10 folds)", lambda m: m.fit_cv(random_state=0))]
    if not quick:
        cases += [
            (50000, "fit_path (50 λ)", lambda m: m.fit_path()),
            (50000, "fit_cv (5 folds)", lambda m: m.fit_cv(folds=5, random_state=0)),
        ]
    for n, what, call in cases:
        df = _frame(n)
        for family in ("cox", ("cox", "efron")):
            model = bs.glm(FORMULA, df, family=family)
            runs = {}
            for before in (True, False):
                runs[before] = _run_config(before, lambda model=model, call=call: call(model))
            r0, r1 = runs[True][0], runs[False][0]
            if hasattr(r0, "fold_scores"):  # CV: the mean held-out deviance per λ
                a, b = np.asarray(r0.mean), np.asarray(r1.mean)
            else:  # path: the training deviance per λ
                a, b = np.asarray(r0.deviance), np.asarray(r1.deviance)
            k = min(a.size, b.size)
            rel = float(np.max(np.abs(a[:k] - b[:k]) / np.maximum(np.abs(a[:k]), 1e-300)))
            out.add(
                part="fit",
                n=n,
                ties=family if isinstance(family, str) else family[1],
                case=what,
                before_s=runs[True][1],
                after_s=runs[False][1],
                before_cpu_s=runs[True][2],
                after_cpu_s=runs[False][2],
                speedup_cpu=runs[True][2] / runs[False][2],
                max_rel_diff=rel if a.size == b.size else float("nan"),
            )


def run(out: SuiteOutput, quick: bool = False, repeats: int = 3, only=None, **_) -> None:
    """Run the suite and write ``coxspeed.{md,csv,json}``.

    Parameters
    ----------
    out : SuiteOutput
        Collects the rows.
    quick : bool
        n = 2,000 only (seconds); else also n = 50,000 (a few minutes on 2 cores).
    repeats : int
        Timing repeats of the kernel part.
    only : set of str, optional
        ``{"kernel"}``, ``{"fit"}`` or both (default).
    """
    parts = only or {"kernel", "fit"}
    if "kernel" in parts:
        _kernel(out, (2000,) if quick else (2000, 50000), repeats)
    if "fit" in parts:
        _fit(out, quick)
    out.note(
        "before = NumPy risk-set sums (_cox._loss_grad_hess_numpy) and a thread pool for "
        "every bins' Gram of the polish; after = the Cython kernel (_cox_fast) and small "
        "Grams (< 2^18 row × pair cells) built in the calling thread."
    )
    out.write()
