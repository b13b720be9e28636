"""``family="cox"`` against lifelines, scikit-survival and tick (issue 14's families benchmark).

Part ``cox`` of suite ``families``: ``python -m benchmarks families --only cox [--quick]``
(or ``python -m benchmarks.families_cox [--quick]``); writes
``families_cox.{md,csv,json}`` and ``families_cox_tick.{md,csv,json}`` in the
benchmarks' output folder.

Data (the rows split 70/30 at random, seed 0, the same split for every method):

* ``sim``: 4 features, a known step-shaped log hazard (0.9·1{x0 > 0.6} − 0.6·1{x1 < 0.3}
  + 0.4·1{0.2 < x2 ≤ 0.5}; x3 is noise), exponential times, ~35 % censoring, ties from
  rounding the times to 1/100; n = 2,000 (quick) or 20,000;
* ``rossi``: lifelines' Rossi recidivism data (432 rows, 7 covariates; ``week``,
  ``arrest``), only when lifelines is installed.

Methods, each fitted on the training rows and scored by Harrell's C on the held-out
rows (``_cox.concordance_index``: pairs with tied predictions count one half), with the
wall time of the fit:

* ``binarsity cv``: ``glm("Surv(t, e) ~ bin(x0) + ...", family="cox").fit_cv()`` (10
  folds, coxnet deviance, λ_min), time of the whole CV; ``binarsity 1se``: λ_1se of it;
  binary/few-valued Rossi columns enter as ``C()``;
* ``lifelines linear``: ``CoxPHFitter()`` on the raw columns;
* ``lifelines spline``: ``CoxPHFitter(penalizer=0.01)`` with ``bs(x, df=4)`` of every
  continuous column (lifelines' formula);
* ``sksurv coxnet bins``: scikit-survival's ``CoxnetSurvivalAnalysis`` (elastic net
  path, l1_ratio 1, λ chosen by 5-fold CV on C via ``GridSearchCV``) on the one-hot
  design of our bins (the same ``Binarizer`` edges) — a lasso on the levels, no TV;
* ``binarsity cv, uniform weights`` and ``tick CoxRegression binarsity``: tick 0.8.0.2's
  ``CoxRegression(penalty="binarsity", solver="agd")`` (the learner the Binacox paper's
  code drives; ``ModelCoxRegPartialLik`` + ``ProxBinarsity``, AGD at a fixed step 1/L) on
  the one-hot CSR of **our** bins (the same edges; ``C()`` levels as columns outside
  the blocks, unpenalised), at the λ_min of our 10-fold CV with
  ``penalty_weights="uniform"`` (tick's prox has unit weights), mapped to tick's
  strength λ W / m (:func:`benchmarks._tick.tick_cox_strength`). tick's fit time is
  one fit at that λ (no CV: tick has none), next to ours for one fit at that λ
  (formula, binning and fit). On these tied times tick's loss is not exactly ours
  (its risk sets of tied rows follow its sort order); its jumps are counted as
  |Δw| > 1e-8.

Part ``tick`` (table ``families_cox_tick``), the same objective solved by both (only
when tick imports): ``sim`` with untied times (tick's risk sets on tied times depend on
its sort order, not Breslow's rule; without ties both losses are the partial
likelihood), n = 20,000 (quick) or 100,000, all rows, λ ∈ {0.1, 0.01} × λ_max, uniform
weights. tick's AGD with the fixed step 1/L at its default stopping rule (tol 1e-5,
≤ 100 iterations), with its default backtracking step (which stalls, see
:func:`benchmarks._tick.fit_tick_cox`) and tight (step 1/L, tol 1e-10, ≤ 2,000); ours
``glm(...).fit(lam=λ, tol=t)`` with the loosest t in 1e-3 … 1e-10 whose objective is
≤ that of tick's 1/L run (the convention of suite ``speed``), and the loosest whose
objective is ≤ that of tick's tight run. Every solution is scored by our objective
(``Prepared.prob.objective``): tick's own value × m / W must equal it (the mapping
check). Times are medians of 3 runs: ours end to end (formula, binning and fit) and fit
only; tick's ``fit`` on the CSR of our codes (building it is not counted).

Without tick the part notes its absence and the rest runs.
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from ._common import SuiteOutput


def _sim(n: int, seed: int = 0, ties: bool = True):
    """The simulated step-hazard data; ``ties=False`` keeps the times unrounded."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 4))
    eta = 0.9 * (X[:, 0] > 0.6) - 0.6 * (X[:, 1] < 0.3) + 0.4 * ((X[:, 2] > 0.2) & (X[:, 2] <= 0.5))
    digits = 2 if ties else 15
    t = np.round(rng.exponential(np.exp(-eta)), digits) + 0.01
    c = np.round(rng.exponential(2.0, n), digits) + 0.01
    df = pd.DataFrame(X, columns=["x0", "x1", "x2", "x3"])
    df["t"], df["e"] = np.minimum(t, c), (t <= c).astype(int)
    return df, ["x0", "x1", "x2", "x3"], []


def _rossi():
    from lifelines.datasets import load_rossi

    df = load_rossi().rename(columns={"week": "t", "arrest": "e"})
    return df, ["age", "prio"], ["fin", "wexp", "mar", "paro", "race"]


def _c_index(df, risk) -> float:
    from binarsity_stats.families._cox import concordance_index

    return float(concordance_index(df["t"].to_numpy(), df["e"].to_numpy(), risk))


def _ours(train, test, cont, cat):
    import binarsity_stats as bs

    terms = [f"bin({c})" for c in cont] + [f"C({c})" for c in cat]
    model = bs.glm("Surv(t, e) ~ " + " + ".join(terms), train, family="cox")
    t0 = time.perf_counter()
    cv = model.fit_cv(random_state=0)
    secs = time.perf_counter() - t0
    rows = []
    for which in ("lam_min", "lam_1se"):
        res = cv.results(which)
        c = _c_index(test, res.predict(test, type="linear"))
        rows.append((f"binarsity cv ({which})", secs, c, res.n_jumps))
    return rows


def tick_design(model) -> tuple:
    """tick's view of a fitted-to-be model's training bins.

    Parameters
    ----------
    model : BinarsityModel
        ``glm(...)`` of the benchmark (binned ``bin()`` terms, ``C()`` terms).

    Returns
    -------
    X_onehot : csr_matrix of shape (n, d)
        The one-hot of the model's codes (column = our level index).
    blocks_start, blocks_length : ndarray
        The TV blocks (``bin()`` terms) only: ``C()`` blocks stay out of tick's prox.
    """
    from ._tick import onehot_csr

    design = model.design
    ptr = np.asarray(design.block_ptr, dtype=np.int64)
    tv = np.array([kind == "tv" for kind in model._block_kinds()], dtype=bool)
    return onehot_csr(np.asarray(design.codes), ptr), ptr[:-1][tv], np.diff(ptr)[tv]


def our_objective(model, theta: np.ndarray, lam: float) -> float:
    """Our objective F = L(η)/W + λ Σ ω |Δθ| at any θ (e.g. tick's), on the training rows.

    The partial likelihood and the penalty are invariant to a constant added to one
    block, so θ need not satisfy our centring constraint.
    """
    prob = model.prepare().prob
    eta = prob.linear_predictor(np.asarray(theta, dtype=np.float64), np.empty(0), 0.0)
    return float(prob.objective(eta, np.asarray(theta, dtype=np.float64), lam))


def _formula(cont, cat) -> str:
    return "Surv(t, e) ~ " + " + ".join([f"bin({c})" for c in cont] + [f"C({c})" for c in cat])


def _tick(train, test, cont, cat):
    """Our uniform-weight CV and tick's binarsity Cox at its λ_min (held-out C)."""
    import binarsity_stats as bs

    from ._tick import fit_tick_cox, tick_cox_available

    if not tick_cox_available():
        raise ImportError("tick (tick.survival.CoxRegression) does not import")
    model = bs.glm(_formula(cont, cat), train, family="cox", penalty_weights="uniform")
    t0 = time.perf_counter()
    cv = model.fit_cv(random_state=0)
    secs = time.perf_counter() - t0
    res = cv.results("lam_min")
    rows = [("binarsity cv, uniform weights (lam_min)", secs,
             _c_index(test, res.predict(test, type="linear")), res.n_jumps)]  # fmt: skip
    t0 = time.perf_counter()
    one = bs.glm(_formula(cont, cat), train, family="cox", penalty_weights="uniform").fit(
        lam=res.lam
    )
    rows.append(("binarsity one fit at that lam (uniform)", time.perf_counter() - t0,
                 _c_index(test, one.predict(test, type="linear")), one.n_jumps))  # fmt: skip
    X_oh, starts, lengths = tick_design(model)
    fit = fit_tick_cox(X_oh, train["t"].to_numpy(), train["e"].to_numpy(), starts, lengths,
                       res.lam, float(len(train)))  # fmt: skip
    eta = model.linear_predictor(fit.coef, np.empty(0), 0.0, design=model.spec.transform(test))
    jumps = sum(int(np.count_nonzero(np.abs(np.diff(fit.coef[a : a + k])) > 1e-8))
                for a, k in zip(starts, lengths, strict=True))  # fmt: skip
    rows.append(("tick CoxRegression binarsity (agd) at that lam", fit.seconds,
                 _c_index(test, eta), jumps))  # fmt: skip
    return rows


def _lifelines(train, test, cont, cat):
    from lifelines import CoxPHFitter

    cols = cont + cat + ["t", "e"]
    rows = []
    t0 = time.perf_counter()
    cph = CoxPHFitter().fit(train[cols], "t", "e")
    secs = time.perf_counter() - t0
    rows.append(("lifelines linear", secs, _c_index(test, cph.predict_log_partial_hazard(test)),
                 np.nan))  # fmt: skip
    formula = " + ".join([f"bs({c}, df=4, extrapolation='clip')" for c in cont] + cat)
    t0 = time.perf_counter()
    cph = CoxPHFitter(penalizer=0.01).fit(train[cols], "t", "e", formula=formula)
    secs = time.perf_counter() - t0
    rows.append(("lifelines spline bs(df=4)", secs,
                 _c_index(test, cph.predict_log_partial_hazard(test)), np.nan))  # fmt: skip
    return rows


def _sksurv(train, test, cont, cat):
    from sklearn.model_selection import GridSearchCV, KFold
    from sksurv.linear_model import CoxnetSurvivalAnalysis
    from sksurv.util import Surv

    from binarsity_stats import Binarizer

    b = Binarizer(n_bins=50)
    codes_tr = b.fit_transform(train[cont].to_numpy())
    codes_te = b.transform(test[cont].to_numpy())

    def onehot(codes, frame):
        cols = [(codes[:, j][:, None] == np.arange(k)[None, :]).astype(float)
                for j, k in enumerate(b.n_bins_)]  # fmt: skip
        cols += [frame[cat].to_numpy(dtype=float)] if cat else []
        return np.hstack(cols)

    Xtr, Xte = onehot(codes_tr, train), onehot(codes_te, test)
    y = Surv.from_arrays(train["e"].to_numpy() == 1, train["t"].to_numpy())
    t0 = time.perf_counter()
    path = CoxnetSurvivalAnalysis(l1_ratio=1.0, alpha_min_ratio=0.01, n_alphas=30).fit(Xtr, y)
    grid = GridSearchCV(
        CoxnetSurvivalAnalysis(l1_ratio=1.0, fit_baseline_model=False),
        {"alphas": [[a] for a in path.alphas_]},
        cv=KFold(5, shuffle=True, random_state=0),
    ).fit(Xtr, y)
    secs = time.perf_counter() - t0
    c = _c_index(test, grid.best_estimator_.predict(Xte))
    nz = int(np.count_nonzero(grid.best_estimator_.coef_))
    return [("sksurv coxnet on our bins (lasso, CV)", secs, c, nz)]


def run_cox(out: SuiteOutput, quick: bool) -> None:
    """Add the Cox rows (held-out C-index and fit time per method and data set).

    Parameters
    ----------
    out : SuiteOutput
        Collector of the rows.
    quick : bool
        n = 2,000 simulated rows (full: 20,000).
    """
    datasets = [("sim", _sim(2_000 if quick else 20_000))]
    try:
        datasets.append(("rossi", _rossi()))
    except ImportError:
        out.note("lifelines is not installed: no Rossi data, no lifelines rows.")
    methods = [("ours", _ours), ("lifelines", _lifelines), ("sksurv", _sksurv), ("tick", _tick)]
    for name, (df, cont, cat) in datasets:
        rng = np.random.default_rng(0)
        test_rows = rng.random(len(df)) < 0.3
        train, test = df[~test_rows].reset_index(drop=True), df[test_rows].reset_index(drop=True)
        for peer, fn in methods:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    rows = fn(train, test, cont, cat)
            except ImportError as exc:
                out.note(f"{peer} not run on {name}: {exc}.")
                continue
            for method, secs, c, size in rows:
                out.add(family="cox", data=name, n_train=len(train), method=method,
                        seconds=secs, c_index_test=c, cuts_or_nonzero=size)  # fmt: skip
        print(f"  cox {name}: done", flush=True)
    out.note(
        "cox rows: Harrell's C of the linear predictor on the held-out 30 % of the rows; "
        "seconds = the whole fit on the training rows (binarsity: 10-fold CV of the path "
        "and the final path; sksurv: its path plus a 5-fold GridSearchCV over it). "
        "cuts_or_nonzero: cut-points kept (binarsity) or non-zero one-hot levels (sksurv)."
    )


OUR_TOLS = (1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10)
LAM_FRACTIONS = (0.1, 0.01)


def run_cox_tick(out: SuiteOutput, quick: bool, repeats: int = 3) -> None:
    """Add the rows of part ``tick``: our objective solved by tick and by us.

    Parameters
    ----------
    out : SuiteOutput
        Collector of the rows (``families_cox_tick``).
    quick : bool
        n = 20,000 simulated rows without ties (full: 100,000).
    repeats : int
        Timing repeats (medians).
    """
    from ._common import median_time
    from ._tick import fit_tick_cox, tick_cox_available

    if not tick_cox_available():
        out.note("tick (tick.survival.CoxRegression) does not import: part tick not run.")
        return
    import binarsity_stats as bs

    df, cont, cat = _sim(20_000 if quick else 100_000, ties=False)
    formula = _formula(cont, cat)

    def model():
        return bs.glm(formula, df, family="cox", penalty_weights="uniform")

    base = model()
    X_oh, starts, lengths = tick_design(base)
    t, e, n = df["t"].to_numpy(), df["e"].to_numpy(), float(len(df))
    lam_max = base.lambda_max()
    for frac in LAM_FRACTIONS:
        lam = frac * lam_max
        runs = {}
        for label, step, tol, max_iter, reps in (
            ("1/L", "1/L", 1e-5, 100, repeats),
            ("linesearch", "linesearch", 1e-5, 100, 1),
            ("tight", "1/L", 1e-10, 2_000, 1),
        ):
            fits = [fit_tick_cox(X_oh, t, e, starts, lengths, lam, n, tol=tol,
                                 max_iter=max_iter, step=step) for _ in range(reps)]  # fmt: skip
            runs[label] = (fits[-1], float(np.median([f.seconds for f in fits])),
                           our_objective(base, fits[-1].coef, lam))  # fmt: skip
        fit, t_tick, F_tick = runs["1/L"]
        # the mapping: tick's own objective × m / W is ours at the same point
        mapping = abs(fit.tick_objective * fit.n_failures / n - F_tick) / abs(F_tick)

        def reach(F_target, lam=lam):
            # the loosest of our tols whose objective is at or below F_target
            target = F_target + 1e-12 * abs(F_target)
            for tol in OUR_TOLS:
                res = model().fit(lam=lam, tol=tol)
                if res.objective <= target:
                    break
            return tol, res, res.objective <= target

        def e2e(tol, lam=lam):
            return model().fit(lam=lam, tol=tol)

        def fit_only(tol, lam=lam):
            m = model()
            t0 = time.perf_counter()
            m.fit(lam=lam, tol=tol)
            return time.perf_counter() - t0

        tol, res, reached = reach(F_tick)
        _, t_e2e, _ = median_time(lambda tol=tol: e2e(tol), repeats)
        t_fit = float(np.median([fit_only(tol) for _ in range(repeats)]))
        ls, t_ls, F_ls = runs["linesearch"]
        tight, t_tight, F_tight = runs["tight"]
        tol_tight, res_tight, reached_tight = reach(F_tight)
        t_fit_tight = float(np.median([fit_only(tol_tight) for _ in range(repeats)]))
        F_star = min(res.objective, res_tight.objective, *(F for _, _, F in runs.values()))
        out.add(
            data="sim untied", n=int(n), d=int(X_oh.shape[1]), lam_over_lam_max=frac,
            lam=lam, tick_strength=fit.strength, tick_step=fit.step, tick_iter=fit.n_iter,
            tick_s=t_tick, tick_objective=F_tick, tick_excess=F_tick - F_star,
            mapping_rel_diff=mapping, tick_linesearch_iter=ls.n_iter,
            tick_linesearch_s=t_ls, tick_linesearch_excess=F_ls - F_star,
            tick_tight_iter=tight.n_iter, tick_tight_s=t_tight,
            tick_tight_excess=F_tight - F_star, ours_tol=tol, ours_reached=reached,
            ours_e2e_s=t_e2e, ours_fit_s=t_fit, ours_objective=res.objective,
            objective_gap=res.objective - F_tick, ours_excess=res.objective - F_star,
            ours_kkt=res.kkt_violation, ratio_e2e=t_tick / t_e2e, ratio_fit=t_tick / t_fit,
            ours_tight_tol=tol_tight, ours_tight_reached=reached_tight,
            ours_tight_fit_s=t_fit_tight, ours_tight_excess=res_tight.objective - F_star,
            ratio_tight_fit=t_tight / t_fit_tight,
        )  # fmt: skip
        print(f"  cox tick λ = {frac:g} λ_max: done", flush=True)
    out.note(
        "tick rows: our objective F = L/W + λ TV (uniform weights) scores every solution; "
        "tick solves it at strength λ W / m (mapping_rel_diff: |tick's own value × m / W − F| "
        "/ F at its solution). tick = CoxRegression(penalty='binarsity', solver='agd') with "
        "the fixed step 1/L (L = max row norm² = the number of features), tol 1e-5, ≤ 100 "
        "iterations (median of the repeats); tick_linesearch = its default backtracking "
        "step (stalls); tick_tight = step 1/L, tol 1e-10, ≤ 2,000 iterations. excess = F − "
        "the smallest F of all runs. ratio = tick's time / ours, ours at the loosest "
        "tol reaching tick's F (e2e = formula, binning and fit; fit = fit only); "
        "ratio_tight_fit = tick_tight / ours at the loosest tol reaching its F. Data "
        "without ties: on tied times tick's risk sets follow its sort order, not Breslow's "
        "rule."
    )


def main(argv: list[str] | None = None) -> int:
    """Run the Cox comparison alone and write its tables.

    Parameters
    ----------
    argv : list of str, optional
        ``["--quick"]`` for n = 2,000 simulated rows (default 20,000).

    Returns
    -------
    int
        0.
    """
    import argparse
    import sys
    from dataclasses import replace
    from pathlib import Path

    from ._common import DEFAULT_OUT_DIR

    parser = argparse.ArgumentParser(prog="python -m benchmarks.families_cox")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT_DIR, help="output folder")
    args = parser.parse_args(argv)
    command = "python -m benchmarks.families_cox" + (" --quick" if args.quick else "")
    out = SuiteOutput("families_cox", args.out, args.quick, command)
    run_cox(out, args.quick)
    out.write()
    tick_out = replace(out, suite="families_cox_tick", rows=[], notes=[])
    run_cox_tick(tick_out, args.quick)
    tick_out.write()
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
