"""Suite ``rate``: the paper's Theorem 2 made visible — error ∝ n^{-2/3}.

Sparse additive gaussian model with Lipschitz components (:func:`simulate_gaussian`:
p = 10 Toeplitz(0.5) features mapped to [−3, 3] by their normal CDF, 4 active —
sinusoids and tanh ramps —, σ = 1),
D = ⌈n^{1/3}⌉ quantile bins per feature, ``penalty_weights="theory"`` (ω_jk = sqrt(π̂_jk))
and two λ schedules: ``"theory"``, λ = σ sqrt(2 log(p D) / n), the order of the paper's
weights (the constant is not tuned), and ``"n^-2/3"``, λ = σ n^{-2/3}, which shrinks
faster: with D = n^{1/3} bins both the binning bias (L/D)² and the variance σ²D/n are
of order n^{-2/3}, and a λ of order n^{-1/2} adds a shrinkage bias that decays more
slowly, so the first schedule is expected to fall short of −2/3. For n from 1e3 to 1e6 (averaged over seeds) we report the in-sample prediction
error (1/n) Σ_i (f̂(x_i) − f*(x_i))² — the quantity Theorem 2 bounds — and the same
on 100,000 fresh points, then the least-squares slope of log error on log n.
Theorem 2's rate for Lipschitz components is n^{-2/3}: slope ≈ −0.67.
"""

from __future__ import annotations

import math

import numpy as np

from ._common import SuiteOutput, new_figure, save_figure, timed
from ._data import additive_truth, simulate_gaussian, to_bounded, toeplitz_gaussian
from ._ours import estimator_class, fit_ours

P = 10
SIGMA = 1.0


def loglog_slope(n, err) -> float:
    """Least-squares slope of log(err) against log(n)."""
    return float(np.polyfit(np.log(np.asarray(n, float)), np.log(np.asarray(err, float)), 1)[0])


def run(out: SuiteOutput, quick: bool, **_: object) -> None:
    """Run the suite and fill ``out``.

    Parameters
    ----------
    out : SuiteOutput
        Collector of the rows.
    quick : bool
        n up to 1e5 and 2 seeds (full: 1e6 and 5 seeds).
    """
    estimator_class()  # fails early, with the reason, while the estimator is missing
    ns = [1_000, 3_000, 10_000, 30_000, 100_000] + ([] if quick else [300_000, 1_000_000])
    seeds = range(2 if quick else 5)
    X_test = to_bounded(toeplitz_gaussian(100_000, P, seed=12345))
    schedules = {
        "theory": lambda n, d: SIGMA * math.sqrt(2 * math.log(P * d) / n),
        "n^-2/3": lambda n, d: SIGMA * n ** (-2 / 3),
    }
    for (schedule, lam_of), n in ((s, n) for s in schedules.items() for n in ns):
        n_bins = math.ceil(n ** (1 / 3))
        lam = lam_of(n, n_bins)
        errs_in, errs_out, secs = [], [], []
        for seed in seeds:
            sim = simulate_gaussian(n, P, sigma=SIGMA, seed=1000 + seed)
            params = dict(family="gaussian", lam=lam, n_bins=n_bins, penalty_weights="theory")
            est, t = timed(lambda sim=sim, params=params: fit_ours(sim.X, sim.y, **params))
            errs_in.append(np.mean((est.predict(sim.X) - sim.eta) ** 2))
            f_test = additive_truth(X_test, sim.active, smooth=True)
            errs_out.append(np.mean((est.predict(X_test) - f_test) ** 2))
            secs.append(t)
        out.add(
            schedule=schedule,
            n=n,
            n_bins=n_bins,
            lam=lam,
            seeds=len(seeds),
            err_in_sample=float(np.mean(errs_in)),
            err_test=float(np.mean(errs_out)),
            fit_s=float(np.median(secs)),
        )
    fig, (ax,) = new_figure()
    for k, schedule in enumerate(schedules):
        rows = [r for r in out.rows if r["schedule"] == schedule]
        n = [r["n"] for r in rows]
        s_in = loglog_slope(n, [r["err_in_sample"] for r in rows])
        s_out = loglog_slope(n, [r["err_test"] for r in rows])
        s_top = loglog_slope(n[-3:], [r["err_in_sample"] for r in rows[-3:]])
        out.note(
            f"λ schedule {schedule}: log-log slope of the in-sample error {s_in:.3f} "
            f"(largest three n: {s_top:.3f}), test error {s_out:.3f}; Theorem 2: −2/3"
        )
        ax.loglog(
            n,
            [r["err_in_sample"] for r in rows],
            "o-",
            color=f"C{k}",
            label=f"λ {schedule}, in-sample (slope {s_in:.2f})",
        )
        ax.loglog(
            n,
            [r["err_test"] for r in rows],
            "s--",
            color=f"C{k}",
            label=f"λ {schedule}, test (slope {s_out:.2f})",
        )
    ref = np.asarray(n, float) ** (-2 / 3)
    ax.loglog(n, ref * out.rows[0]["err_in_sample"] / ref[0], "k:", label="n^(-2/3)")
    ax.set_xlabel("n")
    ax.set_ylabel("mean squared prediction error")
    ax.set_title("Theorem 2: D = n^(1/3) bins, Lipschitz additive truth")
    ax.legend(fontsize=7)
    save_figure(fig, out.figure_path("error"), out.machine_line())
    out.write()
