"""``family="cox"`` against lifelines and scikit-survival (issue 14's families benchmark).

Part ``cox`` of suite ``families``: ``python -m benchmarks families --only cox [--quick]``
(or ``python -m benchmarks.families_cox [--quick]``); writes
``families_cox.{md,csv,json}`` in the benchmarks' output folder.

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
* tick's Cox with binarsity is not run: tick (the ``bench`` extra pins 0.8.0.2) does not
  install on this Python.
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from ._common import SuiteOutput


def _sim(n: int, seed: int = 0):
    import pandas as pd

    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 4))
    eta = 0.9 * (X[:, 0] > 0.6) - 0.6 * (X[:, 1] < 0.3) + 0.4 * ((X[:, 2] > 0.2) & (X[:, 2] <= 0.5))
    t = np.round(rng.exponential(np.exp(-eta)), 2) + 0.01
    c = np.round(rng.exponential(2.0, n), 2) + 0.01
    df = pd.DataFrame(X, columns=["x0", "x1", "x2", "x3"])
    df["t"], df["e"] = np.minimum(t, c), (t <= c).astype(int)
    return df, ["x0", "x1", "x2", "x3"], []


def _rossi():
    from lifelines.datasets import load_rossi

    df = load_rossi().rename(columns={"week": "t", "arrest": "e"})
    return df, ["age", "prio"], ["fin", "wexp", "mar", "paro", "race"]


def _c_index(df, risk) -> float:
    from binarsity_stats._cox import concordance_index

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
    methods = [("ours", _ours), ("lifelines", _lifelines), ("sksurv", _sksurv)]
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
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
