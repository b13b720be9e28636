"""Example data sets that ship with a dependency (nothing is downloaded).

``fair`` (statsmodels): 6,366 women surveyed by Redbook in 1974 (Fair, 1978, "A Theory
of Extramarital Affairs", Journal of Political Economy 86). The binary outcome of the
demo is whether the time spent in extramarital affairs is positive.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["load_fair", "FAIR_FORMULA", "simulate_collinear_sizes"]

#: The demo model: binned ordinal/continuous covariates, categorical occupations.
FAIR_FORMULA = (
    "I(affairs > 0) ~ bin(rate_marriage) + bin(age) + bin(yrs_married) + bin(children)"
    " + bin(religious) + bin(educ) + C(occupation) + C(occupation_husb)"
)


def load_fair() -> pd.DataFrame:
    """Load statsmodels' ``fair`` data set.

    Returns
    -------
    DataFrame
        6,366 rows: ``rate_marriage`` (1–5), ``age``, ``yrs_married``, ``children``,
        ``religious`` (1–4), ``educ`` (years), ``occupation`` and ``occupation_husb``
        (codes 1–6) and ``affairs`` (time spent in affairs, ≥ 0).
    """
    from statsmodels.datasets import fair

    return fair.load_pandas().data.copy()


def simulate_collinear_sizes(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Near-collinear size measurements of one object, with a log price (diamonds-like).

    Carat ~ lognormal; length, width and depth ≈ carat^(1/3) with 1% noise; log price a
    smooth function of log carat plus noise. The hard gaussian case of the convergence
    tests and of ``python -m benchmarks convergence`` (both use this one generator).

    Parameters
    ----------
    n : int
        Number of rows.
    seed : int, default=0
        Seed of the NumPy generator.

    Returns
    -------
    X : ndarray of shape (n, 4)
        Carat, length, width, depth.
    y : ndarray of shape (n,)
        Log price.
    """
    rng = np.random.default_rng(seed)
    carat = rng.lognormal(-0.4, 0.5, n)
    size = carat ** (1 / 3)
    x = 6.5 * size * (1 + 0.01 * rng.standard_normal(n))
    y = 6.5 * size * (1 + 0.01 * rng.standard_normal(n))
    z = 4.0 * size * (1 + 0.01 * rng.standard_normal(n))
    logc = np.log(carat)
    logp = 8 + 1.7 * logc - 0.3 * logc**2 + 0.15 * rng.standard_normal(n)
    return np.column_stack([carat, x, y, z]), logp
