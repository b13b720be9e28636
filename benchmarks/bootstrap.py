"""Suite ``bootstrap``: the cost of ``res.bootstrap()`` on an Adult-sized fit.

Adult (32,561 rows; the paper data in ``--data-dir``): its five numeric columns binned
(age, fnlwgt, capital-gain, capital-loss, hours-per-week; 50 quantile bins) and four
categorical ones (workclass, education, marital-status, sex), binomial, at the theory λ;
then ``n_boot`` resamples at that fixed λ (``lam="same"``) with ``n_jobs`` = 1 and 2.
Reported: wall time (median of ``repeats``), resamples per second, the share converged,
and whether the two ``n_jobs`` runs are bitwise equal. The target of issue 12: 200
resamples in under 10 s on 2 cores.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from ._common import SuiteOutput

FORMULA = (
    "income ~ bin(age) + bin(fnlwgt) + bin(capital_gain) + bin(capital_loss)"
    " + bin(hours_per_week) + C(workclass) + C(education) + C(marital_status) + C(sex)"
)


def _adult(data_dir: Path):
    import pandas as pd

    df = pd.read_csv(Path(data_dir) / "adult.csv", skipinitialspace=True)
    df.columns = [c.replace("-", "_") for c in df.columns]
    df["income"] = (df["income"].str.strip() == ">50K").astype(float)
    return df


def run(out: SuiteOutput, quick: bool, data_dir: Path, repeats: int = 3, **_: object) -> None:
    """Run the suite and fill ``out``.

    Parameters
    ----------
    out : SuiteOutput
        Collector of the rows.
    quick : bool
        50 resamples, one repeat (full: 200 and ``repeats``).
    data_dir : Path
        Folder with ``adult.csv``.
    repeats : int
        Timing repeats (the median is reported).
    """
    import binarsity_stats as bs

    df = _adult(data_dir)
    res = bs.glm(FORMULA, df, family="binomial").fit()
    n_boot = 50 if quick else 200
    reps = 1 if quick else repeats
    coefs = {}
    for n_jobs in (1, 2):
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            boot = res.bootstrap(n_boot, random_state=0, n_jobs=n_jobs, verbose=False)
            times.append(time.perf_counter() - t0)
        coefs[n_jobs] = boot.coef
        wall = float(np.median(times))
        out.add(
            data="adult", n=res.nobs, n_boot=n_boot, n_jobs=n_jobs, lam=res.lam,
            seconds=round(wall, 2), per_second=round(n_boot / wall, 1),
            converged=float(boot.converged.mean()),
        )  # fmt: skip
    out.note(f"formula: {FORMULA}")
    out.note(f"bitwise equal across n_jobs: {bool(np.array_equal(coefs[1], coefs[2]))}")
    out.write()
