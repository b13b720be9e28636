"""Example data sets that ship with a dependency (nothing is downloaded).

``fair`` (statsmodels): 6,366 women surveyed by Redbook in 1974 (Fair, 1978, "A Theory
of Extramarital Affairs", Journal of Political Economy 86). The binary outcome of the
demo is whether the time spent in extramarital affairs is positive.
"""

from __future__ import annotations

import pandas as pd

__all__ = ["load_fair", "FAIR_FORMULA"]

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
