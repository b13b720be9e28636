"""Example data sets (nothing is downloaded).

``fair`` (shipped by statsmodels): 6,366 women surveyed by Redbook in 1974 (Fair, 1978,
"A Theory of Extramarital Affairs", Journal of Political Economy 86). The binary outcome
of the demo is whether the time spent in extramarital affairs is positive.

``wine_quality`` (shipped with this package, ``datasets/wine_quality.csv.gz``): the
6,497 Vinho Verde wines of Cortez et al. (2009), eleven continuous laboratory
measurements and a sensory quality score; the data set of the course
(``docs/course``). Provenance and licence in :func:`load_wine_quality`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = [
    "load_fair",
    "FAIR_FORMULA",
    "load_wine_quality",
    "WINE_QUALITY_SHA256",
    "simulate_collinear_sizes",
]

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


#: SHA-256 of the uncompressed bytes of ``datasets/wine_quality.csv.gz`` (the exact data
#: this version ships; the loader refuses a file that differs).
WINE_QUALITY_SHA256 = "877847d971841832595647745bac0c99d7a2aafbdb44060ba9cb0d5ebbd4c653"

_WINE_COLUMNS = (
    "fixed_acidity",
    "volatile_acidity",
    "citric_acid",
    "residual_sugar",
    "chlorides",
    "free_sulfur_dioxide",
    "total_sulfur_dioxide",
    "density",
    "pH",
    "sulphates",
    "alcohol",
)


def load_wine_quality() -> pd.DataFrame:
    """Load the Vinho Verde wine quality data set that ships with this package.

    6,497 red and white variants of the Portuguese *Vinho Verde* wine, certified by the
    Viticulture Commission of the Vinho Verde Region (CVRVV) in 2004–2007: eleven
    physicochemical measurements made in the laboratory and a sensory quality score
    (the median of at least three blind grades by wine experts, on a 0–10 scale). The
    measurements are genuinely continuous (for example 103 distinct alcohol contents
    and 890 distinct densities among the white wines), so there is something to bin.

    Returns
    -------
    DataFrame
        6,497 rows (1,599 red, then 4,898 white, in the order of the source files) and
        13 columns, none missing: ``colour`` (categorical, ``"red"`` or ``"white"``);
        ``fixed_acidity`` (tartaric acid, g/dm³), ``volatile_acidity`` (acetic acid,
        g/dm³), ``citric_acid`` (g/dm³), ``residual_sugar`` (g/dm³), ``chlorides``
        (sodium chloride, g/dm³), ``free_sulfur_dioxide`` and ``total_sulfur_dioxide``
        (mg/dm³), ``density`` (g/cm³), ``pH``, ``sulphates`` (potassium sulphate,
        g/dm³), ``alcohol`` (% by volume), all float64; ``quality`` (int64, 3–9).

    Raises
    ------
    RuntimeError
        If the shipped file is not the one this version was released with (its
        SHA-256 differs from ``WINE_QUALITY_SHA256``).

    Notes
    -----
    **Source.** P. Cortez, A. Cerdeira, F. Almeida, T. Matos and J. Reis (2009),
    "Modeling wine preferences by data mining from physicochemical properties",
    *Decision Support Systems* 47(4), 547–553, doi:10.1016/j.dss.2009.05.016; deposited
    in the UCI Machine Learning Repository as "Wine Quality" (doi:10.24432/C56S3T).

    **Licence.** The UCI repository distributes the data set under the Creative
    Commons Attribution 4.0 International licence (CC BY 4.0), which permits
    redistribution and adaptation with attribution; the attribution is the citation
    above, which the authors ask users to include.

    **Changes from the source.** The two files (``winequality-red.csv``,
    ``winequality-white.csv``) are stacked, a ``colour`` column is added, the column
    names are written in snake case (``fixed acidity`` → ``fixed_acidity``), and the
    result is stored as one gzip-compressed CSV; no value is changed and no row is
    dropped (the source has duplicated rows: 240 red, 937 white — they are kept).

    Examples
    --------
    >>> import binarsity_stats as bstats
    >>> wine = bstats.load_wine_quality()
    >>> wine.shape
    (6497, 13)
    >>> wine["colour"].value_counts().to_dict()
    {'white': 4898, 'red': 1599}
    """
    import gzip
    import hashlib
    import io
    from importlib.resources import files

    import pandas as pd

    raw = gzip.decompress(
        files("binarsity_stats").joinpath("datasets", "wine_quality.csv.gz").read_bytes()
    )
    if hashlib.sha256(raw).hexdigest() != WINE_QUALITY_SHA256:
        raise RuntimeError(
            "binarsity_stats/datasets/wine_quality.csv.gz is not the file this version "
            "ships (its SHA-256 differs); reinstall the package."
        )
    dtypes = {"colour": "string", "quality": "int64"} | dict.fromkeys(_WINE_COLUMNS, "float64")
    df = pd.read_csv(io.BytesIO(raw), dtype=dtypes)
    df["colour"] = pd.Categorical(df["colour"], categories=["red", "white"])
    return df


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
