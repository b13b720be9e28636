"""Suite ``pairs``: pair selection by ``bs.rank_pairs`` on simulated truths (issue 25).

Simulated gaussian data, n = 10,000 rows, five uniform features with three main-effect
steps; the ``interaction`` truth adds a two-feature step 0.5·1{x1 > 0.4, x3 > 0.6}, the
``null`` truth is additive. Per data set: ``glm("y ~ bin(x1) + … + bin(x5)").fit_cv()``
(5 folds, defaults), then ``bs.rank_pairs`` at its ``lam_1se`` fit (the 10 pairs,
16 bins per axis). Reported per truth over the data sets (20 each; 5 with ``--quick``):

* ``true_first_pct``: data sets ranking (x1, x3) first (target ≥ 90 % on ``interaction``);
* ``none_above_lam_pct``: data sets where no pair's score exceeds the fit's λ
  (``lam_1se``), i.e. no pair would enter at that λ (target ≥ 90 % on ``null``);
* ``true_above_lam_pct``: data sets where the true pair's score exceeds λ;
* the median top score relative to λ, and the median time of ``rank_pairs`` (seconds;
  the main-effects CV not included).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from ._common import SuiteOutput

FORMULA = "y ~ bin(x1) + bin(x2) + bin(x3) + bin(x4) + bin(x5)"
STRENGTH = 0.5


def _data(seed: int, interaction: bool, n: int = 10_000):
    import pandas as pd

    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 5))
    eta = 0.6 * (X[:, 0] > 0.5) - 0.4 * (X[:, 1] > 0.3) + 0.3 * (X[:, 3] > 0.7)
    if interaction:
        eta = eta + STRENGTH * ((X[:, 0] > 0.4) & (X[:, 2] > 0.6))
    df = pd.DataFrame(X, columns=["x1", "x2", "x3", "x4", "x5"])
    df["y"] = eta + rng.normal(size=n)
    return df


def run(out: SuiteOutput, quick: bool, data_dir: Path, repeats: int = 3, **_: object) -> None:
    """Run the suite and fill ``out``.

    Parameters
    ----------
    out : SuiteOutput
        Collector of the rows.
    quick : bool
        5 data sets per truth (full: 20).
    data_dir : Path
        Unused (simulated data).
    repeats : int
        Unused (one ranking per data set; its time is reported).
    """
    import binarsity_stats as bs

    n_sets = 5 if quick else 20
    for truth in ("interaction", "null"):
        first, none_above, true_above, top_rel, times = [], [], [], [], []
        for seed in range(n_sets):
            df = _data(1000 * (truth == "null") + seed, truth == "interaction")
            cv = bs.glm(FORMULA, df).fit_cv(n_jobs=1)
            res = cv.results("lam_1se")
            t0 = time.perf_counter()
            table = bs.rank_pairs(res)
            times.append(time.perf_counter() - t0)
            top = tuple(table.loc[0, ["feature_a", "feature_b"]])
            first.append(top == ("x1", "x3"))
            none_above.append(bool(table["score_to_lam"].max() <= 1.0))
            mask = (table.feature_a == "x1") & (table.feature_b == "x3")
            true_above.append(bool(table.loc[mask, "score_to_lam"].iloc[0] > 1.0))
            top_rel.append(float(table["score_to_lam"].max()))
            print(f"  {truth} seed {seed}: top {top} score/λ {top_rel[-1]:.3f} "
                  f"({times[-1]:.2f} s)", flush=True)  # fmt: skip
        out.add(
            truth=truth, n=10_000, data_sets=n_sets,
            true_first_pct=round(100 * np.mean(first), 1),
            none_above_lam_pct=round(100 * np.mean(none_above), 1),
            true_above_lam_pct=round(100 * np.mean(true_above), 1),
            median_top_score_to_lam=round(float(np.median(top_rel)), 3),
            rank_seconds_median=round(float(np.median(times)), 2),
        )  # fmt: skip
    out.note(f"formula: {FORMULA}; interaction {STRENGTH}·1{{x1 > 0.4, x3 > 0.6}}, "
             "gaussian noise sd 1; rank_pairs at fit_cv()'s lam_1se, 16 bins per axis")  # fmt: skip
    out.write()
