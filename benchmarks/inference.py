"""Suite ``inference``: coverage of the bootstrap bands and of the refits' intervals (issue 12).

Simulated additive models whose shapes are known, one per family, each weighted and one
with an offset:

* ``gaussian``: y = f(x) + ε, ε ~ N(0, 1/w), analytic weights w ~ U(0.5, 2);
* ``binomial``: y = Binomial(w, p)/w with p = expit(−0.3 + f(x)), the trials w ∈ {1..4}
  as weights (a proportion response);
* ``poisson``: y = Poisson(w·t·e^{0.2 + f(x)})/w with exposure t ~ U(0.5, 2) as the
  offset ``log t`` and analytic weights w ∈ {1..3} (a rate averaged over w units).

f(x) = a·(step(x1) + smooth(x2)) + 0·x3: ``step`` jumps by +1 at 0.3 and by −0.7 at
0.7, ``smooth`` = 0.6 sin(2π x2), x3 has no effect (a is 1 for gaussian and poisson,
1.5 for binomial). All three are ``bin(·, n_bins=20)`` terms on U(0, 1) columns.

For every replicate data set (n = 2000), fits at four λ — the theory λ (``fit()``),
CV's ``lam_1se`` and ``lam_min`` (5 folds), and ``lam_min / 4`` (undersmoothing) — and
for each:

* ``res.bootstrap(B, lam="same")`` (and ``lam="cv"`` at ``lam_min`` on a few replicates):
  the pointwise bands of ``shape_bands(0.9, method=)`` for ``method`` = percentile,
  basic and relaxed (every resample's cut-points refitted without penalty) against the
  true shape on the fit's bins (the weighted mean of the true f over
  the training rows of each bin, centred as the fit is: Σ_k n_k θ_k = 0). Bins are
  grouped as ``step@cut`` (the bin holding a true cut and its two neighbours),
  ``step`` (the other bins of the step), ``smooth`` and ``null``;
* ``boot.predict(new, interval=0.9, method=)`` (percentile and relaxed, the default): coverage
  of the true mean on 500 new rows whose x1 is more than 0.05 from a true cut (away from the
  jumps, where no step estimate can be exact) — the intervals a user gets from
  ``res.predict(new, interval=0.9)``;
* how often the two edges with the highest ``cut_frequencies()`` of the step term
  bracket the two true cuts (each of the two is one of the two edges of the bin that
  holds a true cut, a different cut each);
* the split refit ``refit(split=0.5)`` and the naive ``refit()``: coverage of the 90%
  ``conf_int`` of the selected model's coefficients against their target (the
  coefficients of the same GLM fitted to the *true* means of its estimation rows: what
  the refit estimates when the selection is taken as given), and coverage of the 90%
  ``get_prediction`` intervals of the mean against the true mean on 500 new rows;
* the cost (seconds of the fit, of the bootstrap and of the relaxed refits, 1 thread).

Coverage is the share over replicates × bins (× coefficients, × rows); 90% is nominal.
"""

from __future__ import annotations

import time
import warnings
from pathlib import Path

import numpy as np

from ._common import SuiteOutput

LEVEL = 0.9
N_BINS = 20
CUTS = (0.3, 0.7)
FORMULA = f"y ~ bin(x1, n_bins={N_BINS}) + bin(x2, n_bins={N_BINS}) + bin(x3, n_bins={N_BINS})"
STEP_TERM = f"bin(x1, n_bins={N_BINS})"


def step(x: np.ndarray) -> np.ndarray:
    """The true step shape of x1."""
    return 1.0 * (x > CUTS[0]) - 0.7 * (x > CUTS[1])


def smooth(x: np.ndarray) -> np.ndarray:
    """The true smooth shape of x2."""
    return 0.6 * np.sin(2 * np.pi * x)


SCALE = {"gaussian": 1.0, "binomial": 1.5, "poisson": 1.0}


def simulate(family: str, n: int, rng: np.random.Generator):
    """One data set: (DataFrame, true linear predictor without offset, glm keywords)."""
    import pandas as pd

    x = rng.uniform(0, 1, (n, 3))
    a = SCALE[family]
    f = a * (step(x[:, 0]) + smooth(x[:, 1]))
    df = pd.DataFrame({"x1": x[:, 0], "x2": x[:, 1], "x3": x[:, 2]})
    kw: dict = {"family": family, "sample_weight": "w"}
    if family == "gaussian":
        w = rng.uniform(0.5, 2.0, n)
        eta = f
        df["y"] = eta + rng.normal(0, 1, n) / np.sqrt(w)
    elif family == "binomial":
        w = rng.integers(1, 5, n).astype(float)
        eta = -0.3 + f
        df["y"] = rng.binomial(w.astype(int), 1 / (1 + np.exp(-eta))) / w
    else:
        w = rng.integers(1, 4, n).astype(float)
        t = rng.uniform(0.5, 2.0, n)
        eta = 0.2 + f
        df["y"] = rng.poisson(w * t * np.exp(eta)) / w
        df["logt"] = np.log(t)
        kw["offset"] = "logt"
    df["w"] = w
    return df, eta, kw


def _mean(family: str, eta: np.ndarray) -> np.ndarray:
    if family == "gaussian":
        return eta
    if family == "binomial":
        return 1 / (1 + np.exp(-eta))
    return np.exp(eta)


def true_levels(res, df, family) -> dict[str, np.ndarray]:
    """Per term, the true shape on the fit's bins, centred as the fit (Σ n_k θ_k = 0)."""
    m = res.model
    a = SCALE[family]
    shapes = {"x1": a * step(df["x1"].to_numpy()), "x2": a * smooth(df["x2"].to_numpy()),
              "x3": np.zeros(len(df))}  # fmt: skip
    w = df["w"].to_numpy()
    out = {}
    for j, block in enumerate(m.spec.blocks):
        s, e = int(m.block_ptr[j]), int(m.block_ptr[j + 1])
        codes = m.design.codes[j]
        num = np.bincount(codes, weights=w * shapes[block.column], minlength=e - s)
        den = np.bincount(codes, weights=w, minlength=e - s)
        truth = np.divide(num, den, out=np.zeros(e - s), where=den > 0)
        counts = m.bin_counts[s:e]
        out[block.column] = truth - np.sum(counts * truth) / counts.sum()
    return out


def bin_groups(res) -> dict[str, np.ndarray]:
    """Per term, the group of each level: step@cut, step, smooth, null."""
    m = res.model
    out = {}
    for block in m.spec.blocks:
        if block.column == "x1":
            lo, hi = block.intervals()
            holds = np.zeros(block.n_levels, dtype=bool)
            for c in CUTS:
                k = int(np.flatnonzero((lo < c) & (c <= hi))[0])
                holds[max(k - 1, 0) : k + 2] = True
            out["x1"] = np.where(holds, "step@cut", "step")
        else:
            out[block.column] = np.full(
                block.n_levels, "smooth" if block.column == "x2" else "null"
            )
    return out


def cut_recovery(boot) -> bool:
    """Do the two most frequent edges of the step term bracket the two true cuts?"""
    cf = boot.cut_frequencies()
    cf = cf[cf["term"] == STEP_TERM].reset_index(drop=True)
    edges = cf["cut"].to_numpy()
    top = np.argsort(-cf["frequency"].to_numpy(), kind="stable")[:2]
    hit = set()
    for i in top:
        for c_i, c in enumerate(CUTS):
            right = int(np.searchsorted(edges, c))  # first edge >= c
            if i in (right - 1, right):
                hit.add(c_i)
    return len(hit) == 2 and len(top) == 2


def projection_target(refit, mu_rows: np.ndarray):
    """The refit's GLM fitted to the true means of its own rows (its estimand)."""
    import statsmodels.api as sm

    smm = refit.sm_results.model
    kw = {"family": smm.family}
    if getattr(smm, "offset", None) is not None:
        kw["offset"] = smm.offset
    kw["var_weights"] = smm.var_weights
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(sm.GLM(mu_rows, smm.exog, **kw).fit().params)


def refit_rows(res, refit) -> np.ndarray:
    m = res.model
    rows = refit.split["estimate_rows"] if refit.split else np.arange(m.nobs)
    return rows[m.var_weights[rows] > 0] if m.var_weights is not None else rows


def refit_coverage(res, refit, mu, new, mu_new, family) -> tuple[float, float, int]:
    """(coefficient coverage, mean coverage on new rows, number of coefficients)."""
    rows = refit_rows(res, refit)
    target = projection_target(refit, mu[rows])
    ci = np.asarray(refit.conf_int(alpha=1 - LEVEL))
    coef_in = (ci[:, 0] <= target) & (target <= ci[:, 1])
    frame = refit.get_prediction(new, offset=None).summary_frame(alpha=1 - LEVEL)
    lo, hi = frame["mean_ci_lower"].to_numpy(), frame["mean_ci_upper"].to_numpy()
    mean_in = (lo <= mu_new) & (mu_new <= hi)
    return float(coef_in.mean()), float(mean_in.mean()), int(coef_in.size)


def run_setting(
    family: str, n: int, reps: int, n_boot: int, cv_reps: int, cv_boot: int, seed: int
) -> dict:
    """Accumulate the measures of one family over ``reps`` data sets (``lam="cv"``
    bootstraps of ``cv_boot`` resamples on the first ``cv_reps`` of them)."""
    import binarsity_stats as bs

    acc: dict = {}

    def add(key, name, values):
        acc.setdefault(key, {}).setdefault(name, []).extend(np.atleast_1d(values).tolist())

    for r in range(reps):
        rng = np.random.default_rng([seed, r])
        df, eta, kw = simulate(family, n, rng)
        new, eta_new, _ = simulate(family, 500, rng)
        mu = _mean(family, eta + (df["logt"].to_numpy() if "logt" in df else 0.0))
        if "logt" in new:  # new rows at exposure 1 (offset 0)
            new["logt"] = 0.0
        mu_new = _mean(family, eta_new)
        model = bs.glm(FORMULA, df, **kw)
        t0 = time.perf_counter()
        theory = model.fit()
        t_theory = time.perf_counter() - t0
        t0 = time.perf_counter()
        cv = model.fit_cv(folds=5, random_state=r)
        t_cv = time.perf_counter() - t0
        best = cv.results("lam_min")
        t0 = time.perf_counter()
        under = model.fit(best.lam / 4)
        t_under = t_cv + time.perf_counter() - t0
        fits = {"theory": (theory, t_theory), "lam_1se": (cv.results("lam_1se"), t_cv),
                "lam_min": (best, t_cv), "lam_min/4": (under, t_under)}  # fmt: skip
        runs = [(name, "same") for name in fits]
        if r < cv_reps:
            runs.append(("lam_min", "cv"))
        for name, rule in runs:
            res, t_fit = fits[name]
            key = (name, rule)
            truth = true_levels(res, df, family)
            groups = bin_groups(res)
            t0 = time.perf_counter()
            boot = res.bootstrap(n_boot if rule == "same" else cv_boot, random_state=r, lam=rule,
                                 verbose=False)  # fmt: skip
            add(key, "boot_s", time.perf_counter() - t0)
            add(key, "fit_s", t_fit)
            add(key, "lam", res.lam)
            for method in ("percentile", "basic", "relaxed"):
                t0 = time.perf_counter()
                bands = boot.shape_bands(LEVEL, method=method)
                if method == "relaxed":  # the first call makes the relaxed refits
                    add(key, "relax_s", time.perf_counter() - t0)
                for col in ("x1", "x2", "x3"):
                    sel = bands["column"] == col
                    lo, hi = bands.loc[sel, "lower"].to_numpy(), bands.loc[sel, "upper"].to_numpy()
                    inside = (lo - 1e-9 <= truth[col]) & (truth[col] <= hi + 1e-9)
                    for g in np.unique(groups[col]):
                        add(key, f"{method}:{g}", inside[groups[col] == g])
                    if col == "x1":
                        add(key, f"{method}:width", np.median(hi - lo))
            away = np.min(np.abs(new["x1"].to_numpy()[:, None] - np.asarray(CUTS)), axis=1) > 0.05
            for method in ("percentile", "relaxed"):
                with warnings.catch_warnings():  # the measured-coverage note of the default
                    warnings.simplefilter("ignore", UserWarning)
                    frame = boot.predict(new, interval=LEVEL, method=method)
                lo, hi = frame["mean_ci_lower"].to_numpy(), frame["mean_ci_upper"].to_numpy()
                inside = (lo <= mu_new) & (mu_new <= hi)
                add(key, f"{method}:predict", inside[away])
            add(key, "cut_top2", cut_recovery(boot))
            if rule == "same":
                for how, split in (("split", 0.5), ("naive", None)):
                    try:
                        refit = res.refit(split=split, random_state=r)
                        cov_c, cov_m, k = refit_coverage(res, refit, mu, new, mu_new, family)
                    except ValueError:  # a new row in a segment without estimation weight
                        continue
                    add(key, f"{how}:coef", cov_c)
                    add(key, f"{how}:mean", cov_m)
                    add(key, f"{how}:k", k)
    return acc


#: the printed table (the CSV has every column, e.g. the bands' coverage on the null term)
COLUMNS = (
    "family", "lam", "resample", "B", "lam value",
    "pct step@cut", "pct step", "pct smooth", "basic step@cut", "basic step", "basic smooth",
    "relax step@cut", "relax step", "relax smooth", "pct width", "relax width",
    "pct predict", "relax predict", "top2 cuts",
    "split coef", "split mean", "naive coef", "naive mean", "fit s", "boot s", "relax s",
)  # fmt: skip


def _pct(values) -> float:
    return round(100 * float(np.mean(values)), 1) if len(values) else float("nan")


def run(
    out: SuiteOutput,
    quick: bool,
    data_dir: Path | None = None,
    only: set[str] | None = None,
    **_: object,
) -> None:
    """Run the suite and fill ``out``.

    Parameters
    ----------
    out : SuiteOutput
        Collector of the rows.
    quick : bool
        4 replicates with 40 resamples, ``lam="cv"`` on 1 of them with 10 resamples
        (default: 12 replicates, 100 resamples, ``lam="cv"`` on 3 with 20).
    data_dir : Path
        Unused (the data are simulated).
    only : set of str, optional
        Families to run (default all three; ``--only gaussian`` splits a run).
    """
    n = 2000
    reps, n_boot, cv_reps, cv_boot = (4, 40, 1, 10) if quick else (12, 100, 3, 20)
    families = ("gaussian", "binomial", "poisson")
    if only:
        unknown = sorted(set(only) - set(families))
        if unknown:
            raise ValueError(f"--only: unknown families {unknown}; choose from {families}")
        families = tuple(f for f in families if f in only)
    t_all = time.perf_counter()
    for family in families:
        acc = run_setting(family, n, reps, n_boot, cv_reps, cv_boot, seed=2026)
        for (name, rule), v in acc.items():
            row = {"family": family, "lam": name, "resample": rule,
                   "reps": len(v["lam"]), "B": n_boot if rule == "same" else cv_boot,
                   "lam value": float(np.median(v["lam"]))}  # fmt: skip
            for method in ("percentile", "basic", "relaxed"):
                if f"{method}:width" not in v:
                    continue
                short = {"percentile": "pct", "basic": "basic", "relaxed": "relax"}[method]
                for g in ("step@cut", "step", "smooth", "null"):
                    row[f"{short} {g}"] = _pct(v[f"{method}:{g}"])
                row[f"{short} width"] = float(np.median(v[f"{method}:width"]))
            for method, short in (("percentile", "pct"), ("relaxed", "relax")):
                row[f"{short} predict"] = _pct(v.get(f"{method}:predict", []))
            row["top2 cuts"] = _pct(v["cut_top2"])
            for how in ("split", "naive"):
                if f"{how}:coef" in v:
                    row[f"{how} coef"] = _pct(v[f"{how}:coef"])
                    row[f"{how} mean"] = _pct(v[f"{how}:mean"])
            row["fit s"] = float(np.median(v["fit_s"]))
            row["boot s"] = float(np.median(v["boot_s"]))
            row["relax s"] = float(np.median(v["relax_s"]))
            out.add(**row)
            print(row, flush=True)
    out.note(f"n = {n}, level {LEVEL:.0%}, formula: {FORMULA}; coverage in %")
    out.note(f"total time {time.perf_counter() - t_all:.0f} s")
    out.write(columns=COLUMNS)
