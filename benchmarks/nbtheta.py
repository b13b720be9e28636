"""Suite ``nbtheta``: θ of ``family="nb"`` along a path — estimated once vs at every λ.

Simulated negative binomial counts (θ = 1.5; two ``bin()`` terms of 50 bins with two and
a smooth effect, a four-level ``C()`` term). Two ways to give a path a θ (issue 28):

* ``fixed``: ``model.fit_path(n_lambdas)`` — θ estimated once by alternation at the
  grid's smallest λ, then held fixed along the path (what the package does);
* ``per_lambda``: ``model.fit(λ, warm_start=previous)`` at every λ of that grid, each
  alternating β and θ (warm-started from the previous λ's fit).

Reported: wall time (median of ``repeats``; one run of ``per_lambda`` in ``--quick``),
the θ of each (one value for ``fixed``, the range along the grid for ``per_lambda``).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from ._common import SuiteOutput

FORMULA = "y ~ bin(x1) + bin(x2) + C(g)"
THETA = 1.5


def _data(n: int, seed: int = 1):
    import pandas as pd

    rng = np.random.default_rng(seed)
    x1, x2 = rng.uniform(0, 10, n), rng.normal(size=n)
    g = rng.choice(list("abcd"), size=n)
    eta = (0.2 + np.where(x1 > 3, 0.5, 0) + np.where(x1 > 7, -0.4, 0) + 0.3 * np.sin(x2)
           + np.where(g == "b", 0.3, 0))  # fmt: skip
    mu = np.exp(eta)
    y = rng.negative_binomial(THETA, THETA / (THETA + mu)).astype(float)
    return pd.DataFrame({"y": y, "x1": x1, "x2": x2, "g": g})


def run(out: SuiteOutput, quick: bool, data_dir: Path, repeats: int = 3, **_: object) -> None:
    """Run the suite and fill ``out``.

    Parameters
    ----------
    out : SuiteOutput
        Collector of the rows.
    quick : bool
        n = 20,000 and one repeat (full: n = 100,000 and ``repeats`` for ``fixed``).
    data_dir : Path
        Unused (simulated data).
    repeats : int
        Timing repeats of the fixed-θ path (the median is reported).
    """
    import binarsity_stats as bs

    for n in (20_000,) if quick else (20_000, 100_000):
        model = bs.glm(FORMULA, _data(n), family="nb")
        for n_lambdas in (10, 50):
            times = []
            for _ in range(1 if quick else repeats):
                t0 = time.perf_counter()
                path = model.fit_path(n_lambdas=n_lambdas)
                times.append(time.perf_counter() - t0)
            theta = path[0].model.family.theta
            out.add(n=n, n_lambdas=n_lambdas, way="fixed",
                    seconds=round(float(np.median(times)), 2),
                    theta_min=round(theta, 4), theta_max=round(theta, 4))  # fmt: skip
            t0 = time.perf_counter()
            start, thetas = None, []
            for lam in path.lams:
                res = model.fit(float(lam), warm_start=start)
                start = res.solution
                thetas.append(res.model.family.theta)
            out.add(n=n, n_lambdas=n_lambdas, way="per_lambda",
                    seconds=round(time.perf_counter() - t0, 2),
                    theta_min=round(min(thetas), 4), theta_max=round(max(thetas), 4))  # fmt: skip
    out.note(f"formula: {FORMULA}; true theta {THETA}")
    out.write()
