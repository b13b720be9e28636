"""Suite ``selection``: which cut-points do the penalty weights and the remedies find?

Known-truth simulations (issue 16). Three features x1, x2, x3 ~ U(0, 1), 50 quantile
bins each (``glm("y ~ bin(x1, 50) + bin(x2, 50) + bin(x3, 50)")``); the truth depends on
x1 only (x2, x3 are null features), or on nothing:

* ``null``: η = 0 (every feature is null);
* ``steps``: η = a (1{x1 > 0.2} − 1{x1 > 0.5} + 1{x1 > 0.85}) — three true cuts, one
  near each end and one in the middle;
* ``smooth``: η = a sin(2π x1) — no cut-points, a smooth shape to approximate.

gaussian (y = η + N(0, 1), a = 0.5) and binomial (logit, a = 1.0). Methods:

* ``uniform``, ``theory``, ``balanced``: the penalty weights, λ by 5-fold CV
  (``fit_cv``, deviance, λ_min);
* ``uniform@th``, ``theory@th``, ``balanced@th``: the same weights at ``lam="theory"``
  (the union bound behind it holds for all three: ω = 1 ≥ sqrt(π̂ (1 − π̂)));
* ``relaxed(w)``: ``fit_cv(relax=True)`` on weights w — λ and glmnet's γ ∈ {0, .25, .5,
  .75, 1} chosen jointly by the same folds;
* ``adaptive(w)``: a second stage ``res.adaptive()`` of the CV fit on weights w, its λ
  by 5-fold CV again.

Measured per method, over replications: the cuts kept on x1 matched one-to-one to the
true cuts within ``TOL`` = 0.03 in x (1.5 bin widths): precision (matched / kept) and
recall (matched / true); the cuts kept on null features, by decile of x (false cuts
per feature per replication); the number of cuts on x1; and the prediction error
mean (η̂ − η)² on 20,000 fresh rows. A cheap second table: on pure noise, the decile
of the *first* cut to enter the path (the edge attaining λ_max) over 400 replications
per weighting — the measurement of issue 16.

The paper's data (``--data-dir``; continuous features only, as the ``paper`` suite):
33 % stratified test split (``random_state=0``), each method fitted on the rest with
5-fold CV; test deviance (mean per row) and AUC, and the number of cuts kept.

Default run (a few minutes on 2 shared cores): n = 1,000 with 6 replications, the
first-cut table (400 replications), and churn. ``--quick``: 2 replications, no real
data. Full run (``REPS``; about 45 minutes on 2 shared cores, split it with
``--only``): ``python -m benchmarks selection --only full`` — n = 1,000 (20
replications), 10,000 (5) and 100,000 (1), the first-cut table, and adult, bank and
churn; ``--only 1e4``, ``--only 1e5,adult`` ... run parts of it.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from ._common import SuiteOutput

TOL = 0.03
N_BINS = 50
FOLDS = 5
N_LAMBDAS = 30
TRUE_CUTS = (0.2, 0.5, 0.85)
AMPLITUDE = {"gaussian": 0.5, "binomial": 1.0}
FAMILY_SEED = {"gaussian": 0, "binomial": 1}
SCENARIO_SEED = {"null": 0, "steps": 1, "smooth": 2}
FORMULA = "y ~ bin(x1, 50) + bin(x2, 50) + bin(x3, 50)"
METHODS = (
    "uniform", "theory", "balanced", "uniform@th", "theory@th", "balanced@th",
    "relaxed(theory)", "relaxed(balanced)", "adaptive(theory)", "adaptive(balanced)",
)  # fmt: skip
#: (n, replications) of the default and the full run
REPS = {"default": ((1_000, 6),), "quick": ((1_000, 2),),
        "full": ((1_000, 20), (10_000, 5), (100_000, 1))}  # fmt: skip


def truth(scenario: str, family: str, x1: np.ndarray) -> np.ndarray:
    """The true linear predictor η of a scenario."""
    a = AMPLITUDE[family]
    if scenario == "null":
        return np.zeros_like(x1)
    if scenario == "steps":
        c1, c2, c3 = TRUE_CUTS
        return a * (1.0 * (x1 > c1) - 1.0 * (x1 > c2) + 1.0 * (x1 > c3))
    return a * np.sin(2 * np.pi * x1)


def simulate(scenario: str, family: str, n: int, rng: np.random.Generator):
    """A data frame (x1, x2, x3, y) and its true η."""
    import pandas as pd

    X = rng.uniform(size=(n, 3))
    eta = truth(scenario, family, X[:, 0])
    if family == "gaussian":
        y = eta + rng.standard_normal(n)
    else:
        y = rng.binomial(1, 1 / (1 + np.exp(-eta))).astype(float)
    return pd.DataFrame({"x1": X[:, 0], "x2": X[:, 1], "x3": X[:, 2], "y": y}), eta


def fit_methods(df, family: str, seed: int, methods=METHODS, formula: str = FORMULA) -> dict:
    """Every method's fit (a BinarsityResults) on one data set."""
    import binarsity_stats as bs
    from binarsity_stats.engine._scoring import select_lambda

    out = {}
    cv_kw = dict(folds=FOLDS, n_lambdas=N_LAMBDAS, random_state=seed)
    for w in ("uniform", "theory", "balanced"):
        wanted = [m for m in methods if m == w or m.endswith(f"({w})") or m == f"{w}@th"]
        if not wanted:
            continue
        model = bs.glm(formula, df, family=family, penalty_weights=w)
        relax = f"relaxed({w})" in wanted
        cv = model.fit_cv(relax=relax, **cv_kw)
        if relax:
            out[f"relaxed({w})"] = cv.best_
            # the penalised CV is the γ = 1 curve of the same folds
            _, _, i, _ = select_lambda(cv.relaxed_scores[-1], "deviance")
            best = cv.path[i]
        else:
            best = cv.best_
        if w in wanted:
            out[w] = best
        if f"{w}@th" in wanted:
            out[f"{w}@th"] = model.fit()
        if f"adaptive({w})" in wanted:
            second = best.adaptive()
            out[f"adaptive({w})"] = second.fit_cv(**cv_kw).best_
    return out


def cuts_of(res, column: str) -> np.ndarray:
    """Cut values kept on one column."""
    cp = res.cut_points()
    if len(cp) == 0:
        return np.zeros(0)
    return cp.loc[cp["column"] == column, "cut"].to_numpy(np.float64)


def match(found: np.ndarray, true: tuple, tol: float = TOL) -> int:
    """Cuts matched one-to-one (greedy by distance) within ``tol``."""
    pairs = sorted((abs(f - t), i, k) for i, f in enumerate(found) for k, t in enumerate(true))
    used_f, used_t, matched = set(), set(), 0
    for dist, i, k in pairs:
        if dist > tol:
            break
        if i in used_f or k in used_t:
            continue
        used_f.add(i)
        used_t.add(k)
        matched += 1
    return matched


def first_cut_deciles(n: int, reps: int, family: str, seed: int = 0) -> dict[str, np.ndarray]:
    """Decile of the first cut to enter (the edge attaining λ_max) on pure noise.

    The null fit is the intercept (every feature null), so S_jl are the suffix sums of
    the centred residuals and the first cut is argmax |S_jl| / ω_jl. The bins are the
    package's quantile bins (design.md §6: the k-th cut is x_(⌈kn/d⌉)), computed here
    directly for a continuous x.
    """
    from binarsity_stats.penalty._penalty import block_suffix_sums, penalty_weights

    rng = np.random.default_rng(seed)
    counts = {w: np.zeros(10) for w in ("uniform", "theory", "balanced")}
    bp = np.array([0, N_BINS], dtype=np.intp)
    ranks = np.ceil(np.arange(1, N_BINS) * n / N_BINS).astype(int) - 1
    for _ in range(reps):
        x = rng.uniform(size=n)
        y = rng.standard_normal(n) if family == "gaussian" else rng.binomial(1, 0.5, n) * 1.0
        edges = np.sort(x)[ranks]
        codes = np.searchsorted(edges, x, side="left")
        g = np.bincount(codes, weights=(y.mean() - y) / n, minlength=N_BINS)
        S = np.abs(block_suffix_sums(g, bp))
        nk = np.bincount(codes, minlength=N_BINS).astype(float)
        for w in counts:
            om = penalty_weights(w, nk, bp)
            k = int(np.argmax(np.where(om > 0, S / np.where(om > 0, om, 1.0), -1.0)))
            counts[w][min(int(edges[k - 1] * 10), 9)] += 1  # level k starts above edge k−1
    return {w: c / reps for w, c in counts.items()}


def _paired(values, reference) -> str:
    """Mean paired difference ± its standard error (same replications)."""
    if not reference or len(values) != len(reference) or len(values) < 2:
        return "-"
    d = np.asarray(values) - np.asarray(reference)
    return f"{d.mean():+.4f} ± {d.std(ddof=1) / np.sqrt(len(d)):.4f}"


def _deciles(cuts: np.ndarray) -> np.ndarray:
    return np.bincount(np.minimum((cuts * 10).astype(int), 9), minlength=10)


def simulations(out: SuiteOutput, plan, methods=METHODS) -> None:
    """The known-truth table: one row per (scenario, family, n, method)."""
    for n, reps in plan:
        for family in ("gaussian", "binomial"):
            for scenario in ("null", "steps", "smooth"):
                acc = {m: {"kept": 0, "matched": 0, "true": 0, "x1": [], "null": np.zeros(10),
                           "n_null": 0, "mse": [], "any_null": 0, "sec": 0.0}
                       for m in methods}  # fmt: skip
                t0 = time.perf_counter()
                for r in range(reps):
                    rng = np.random.default_rng([n, r, FAMILY_SEED[family], SCENARIO_SEED[scenario]])
                    df, _ = simulate(scenario, family, n, rng)
                    test, eta_test = simulate(scenario, family, 20_000, rng)
                    fits = fit_methods(df, family, seed=r, methods=methods)
                    for m, res in fits.items():
                        a = acc[m]
                        nulls = ("x1", "x2", "x3") if scenario == "null" else ("x2", "x3")
                        any_null = False
                        for col in nulls:
                            c = cuts_of(res, col)
                            a["null"] += _deciles(c)
                            a["n_null"] += 1
                            any_null |= len(c) > 0
                        a["any_null"] += any_null
                        if scenario != "null":
                            c1 = cuts_of(res, "x1")
                            a["x1"].append(len(c1))
                            if scenario == "steps":
                                a["kept"] += len(c1)
                                a["true"] += len(TRUE_CUTS)
                                a["matched"] += match(c1, TRUE_CUTS)
                        eta_hat = res.predict(test, type="link")
                        a["mse"].append(float(np.mean((eta_hat - eta_test) ** 2)))
                sec = time.perf_counter() - t0
                for m in methods:
                    a = acc[m]
                    null = a["null"] / max(a["n_null"], 1)
                    row = {
                        "n": n, "family": family, "scenario": scenario, "method": m,
                        "reps": reps,
                        "cuts_x1": round(float(np.mean(a["x1"])), 2) if a["x1"] else "-",
                        "precision": round(a["matched"] / a["kept"], 2) if a["kept"] else "-",
                        "recall": round(a["matched"] / a["true"], 2) if a["true"] else "-",
                        "false_cuts_per_null_feature": round(float(null.sum()), 2),
                        "false_bottom_decile": round(float(null[0]), 3),
                        "false_top_decile": round(float(null[9]), 3),
                        "false_inner_deciles": round(float(null[1:9].sum()), 3),
                        "P(any false cut)": round(a["any_null"] / reps, 2),
                        "mse_eta": round(float(np.mean(a["mse"])), 4),
                        "mse_se": round(float(np.std(a["mse"], ddof=1) / np.sqrt(reps)), 4)
                        if reps > 1 else "-",
                        # paired with "balanced" on the same data sets
                        "mse_minus_balanced": _paired(a["mse"], acc.get("balanced", {}).get("mse")),
                    }  # fmt: skip
                    out.add(**row)
                print(f"  n={n} {family} {scenario}: {sec:.1f} s", flush=True)


def real_data(out: SuiteOutput, data_dir: Path, names, methods=METHODS) -> None:
    """Test deviance and AUC on the paper's data sets (continuous features)."""
    import pandas as pd
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import train_test_split

    from ._data import load_real

    for name in names:
        X, y, columns = load_real(name, data_dir)
        cols = [f"x{i}" for i in range(X.shape[1])]
        df = pd.DataFrame(X, columns=cols)
        df["y"] = y
        train, test = train_test_split(df, test_size=0.33, stratify=y, random_state=0)
        formula = "y ~ " + " + ".join(f"bin({c}, {N_BINS})" for c in cols)
        t0 = time.perf_counter()
        fits = fit_methods(train, "binomial", seed=0, methods=methods, formula=formula)
        sec = time.perf_counter() - t0
        for m, res in fits.items():
            p = np.clip(res.predict(test), 1e-12, 1 - 1e-12)
            yt = test["y"].to_numpy()
            dev = float(-2 * np.mean(yt * np.log(p) + (1 - yt) * np.log(1 - p)))
            out.add(n=len(train), family="binomial", scenario=f"data:{name}", method=m,
                    reps=1, cuts_total=res.n_jumps, test_deviance=round(dev, 4),
                    test_auc=round(float(roc_auc_score(yt, p)), 4))  # fmt: skip
        print(f"  {name}: {sec:.1f} s ({', '.join(columns)})", flush=True)


def first_cut_table(out: SuiteOutput, reps: int) -> None:
    """The first-cut deciles on pure noise (rows with scenario 'first cut')."""
    for family in ("gaussian", "binomial"):
        dec = first_cut_deciles(1_000, reps, family)
        for w, share in dec.items():
            out.add(n=1_000, family=family, scenario="first cut (noise)", method=w, reps=reps,
                    first_bottom_decile=round(float(share[0]), 3),
                    first_top_decile=round(float(share[9]), 3),
                    first_inner_max=round(float(share[1:9].max()), 3),
                    first_inner_min=round(float(share[1:9].min()), 3))  # fmt: skip


def run(
    out: SuiteOutput,
    quick: bool,
    data_dir: Path,
    only: set[str] | None = None,
    **_: object,
) -> None:
    """Run the suite and fill ``out``.

    Parameters
    ----------
    out : SuiteOutput
        Collector of the rows.
    quick : bool
        3 replications at n = 1,000, 100 first-cut replications, no real data.
    data_dir : Path
        Folder with the paper's data (``adult.csv``, ``bank.csv``, ``churn.csv``).
    only : set of str, optional
        Parts to run: ``full`` (everything of the full run), sizes ``1e3``, ``1e4``,
        ``1e5`` (the full run's replications), ``first`` (the first-cut table), data
        set names ``adult``, ``bank``, ``churn``. Default: the default run.
    """
    only = set(only or ())
    if "full" in only:
        only |= {"1e3", "1e4", "1e5", "first", "adult", "bank", "churn"}
    sizes = {"1e3": 1_000, "1e4": 10_000, "1e5": 100_000}
    if not only:
        plan = REPS["quick" if quick else "default"]
        first, names = True, ([] if quick else ["churn"])
    else:
        wanted = {sizes[k] for k in only if k in sizes}
        plan = tuple((n, r) for n, r in REPS["full"] if n in wanted)
        first = "first" in only
        names = [d for d in ("adult", "bank", "churn") if d in only]
    if first:
        first_cut_table(out, 100 if quick else 400)
    if plan:
        simulations(out, plan)
    if names:
        real_data(out, data_dir, names)
    out.note(f"formula: {FORMULA}; {FOLDS}-fold CV on {N_LAMBDAS} λ (deviance, λ_min)")
    out.note(f"true cuts {TRUE_CUTS}, tolerance {TOL}; amplitudes {AMPLITUDE}")
    out.write()
