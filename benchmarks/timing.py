"""Suite ``timing``: the paper's computing-time figure, p grows at fixed n.

Simulated logistic design (:mod:`benchmarks._data`), n = 10,000, 10 bins,
p ∈ {10, 50, 100, 200, 500}, λ = 1e-3 for every penalty. Measured (medians):

* tick binarsity: ``LogisticRegression(penalty="binarsity", C=1/λ)`` (SVRG defaults)
  on the CSR of our codes, and its objective (design.md §1);
* tick lasso: ``LogisticRegression(penalty="l1", C=1/λ)`` on the same CSR — the paper
  compares binarsity's cost to the lasso's on the same one-hot features;
* skglm lasso: ``SparseLogisticRegression(alpha=λ)`` (same objective scaling as tick's
  l1), a fast modern lasso on the same CSR;
* ours: ``BinarsityGLM(family="binomial", lam=λ, n_bins=10, penalty_weights="uniform")``
  on the raw X, time to reach tick's binarsity objective (as in ``speed``).

The binning of every competitor is excluded except ours (which is end to end), so the
ratio ours/tick is conservative for us.
"""

from __future__ import annotations

import warnings

import numpy as np

from ._common import SuiteOutput, median_time, new_figure, save_figure
from ._data import simulate_logistic
from ._objective import binomial_objective
from ._ours import bin_codes, estimator_class, has_estimator
from ._tick import _tick_modules, fit_tick, onehot_csr
from .speed import _reach

N = 10_000
N_BINS = 10
LAM = 1e-3


def _tick_lasso(X_oh, y, lam):
    LogisticRegression, _ = _tick_modules()
    learner = LogisticRegression(penalty="l1", C=1.0 / lam, random_state=0, verbose=False)
    learner.fit(X_oh, y)
    return learner


def _skglm_lasso(X_oh, y, lam):
    from skglm import SparseLogisticRegression

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return SparseLogisticRegression(alpha=lam, tol=1e-6).fit(X_oh, y)


def run(out: SuiteOutput, quick: bool, repeats: int = 3, **_: object) -> None:
    """Run the suite and fill ``out``.

    Parameters
    ----------
    out : SuiteOutput
        Collector of the rows.
    quick : bool
        p ∈ {10, 50, 100} only.
    repeats : int
        Timing repeats (medians).
    """
    ours_ok = has_estimator()
    if not ours_ok:
        out.note("binarsity_stats.BinarsityGLM is missing: only the peers are measured")
    ps = (10, 50, 100) if quick else (10, 50, 100, 200, 500)
    for p in ps:
        sim = simulate_logistic(N, p, seed=p)
        codes, block_ptr, source = bin_codes(sim.X, N_BINS)
        X_oh = onehot_csr(codes, block_ptr)
        fits = [fit_tick(X_oh, sim.y, block_ptr, LAM) for _ in range(repeats)]
        t_bin = float(np.median([f.seconds for f in fits]))
        F_tick = binomial_objective(codes, block_ptr, sim.y, fits[-1].coef, fits[-1].intercept, LAM)
        _, t_l1, _ = median_time(lambda X_oh=X_oh, y=sim.y: _tick_lasso(X_oh, y, LAM), repeats)
        _, t_skl1, _ = median_time(lambda X_oh=X_oh, y=sim.y: _skglm_lasso(X_oh, y, LAM), repeats)
        row = out.add(
            n=N,
            p=p,
            d=int(block_ptr[-1]),
            codes=source,
            tick_binarsity_s=t_bin,
            tick_lasso_s=t_l1,
            skglm_lasso_s=t_skl1,
            tick_binarsity_over_lasso=t_bin / t_l1,
            tick_objective=F_tick,
        )
        if ours_ok:
            est, F_ours, tol, t_ours, reached = _reach(
                sim.X, sim.y, LAM, F_tick, codes, block_ptr, repeats, n_bins=N_BINS
            )
            row.update(
                ours_s=t_ours,
                ours_tol=tol,
                ours_reached=reached,
                objective_gap=F_ours - F_tick,
                ours_over_skglm_lasso=t_ours / t_skl1,
                speedup_vs_tick=t_bin / t_ours,
            )
    _figure(out, ours_ok)
    out.write()
    if not ours_ok:
        estimator_class()


def _figure(out: SuiteOutput, ours_ok: bool) -> None:
    fig, (ax,) = new_figure()
    p = [r["p"] for r in out.rows]
    series = [
        ("tick_binarsity_s", "tick binarsity (SVRG)"),
        ("tick_lasso_s", "tick lasso (SVRG)"),
        ("skglm_lasso_s", "skglm lasso"),
    ]
    if ours_ok:
        series.append(("ours_s", "binarsity_stats (to tick's objective)"))
    for key, label in series:
        ax.plot(p, [r[key] for r in out.rows], "o-", label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("p (features), n = 10,000, 10 bins each")
    ax.set_ylabel("fit seconds (median)")
    ax.set_title("Computing time as p grows (paper, Figure 4 protocol)")
    ax.legend()
    save_figure(fig, out.figure_path("times"), out.machine_line())
