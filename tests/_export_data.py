"""Simulated data shared by the exporter tests (to_spec/from_spec, SQL, standalone scorer).

Not a test module (its name does not start with ``test_``): the exporter tests import
:func:`export_frame` from it, so that the three agree on one data set.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def export_frame(n: int, seed: int, *, sql_names: bool = False) -> pd.DataFrame:
    """Numeric, skewed, incomplete and categorical columns, an exposure and three responses.

    Columns: ``x1`` (normal), ``x2`` (gamma), ``x3`` (gamma, 15% missing), ``z``
    (normal), ``g`` (three levels), ``h`` (``g`` with 10% missing), ``exposure``, ``off``
    (a small offset) and the responses ``y`` (poisson with exposure), ``yb`` (binary),
    ``yg`` (gaussian). With ``sql_names`` the data test quoting in SQL: ``x2`` is named
    ``"x 2"``, the third level of ``g`` is ``"it's"``, and an integer column ``k`` is
    added (integer division); the random draws then differ from the default frame's.
    """
    rng = np.random.default_rng(seed)
    x1, x2, z = rng.normal(size=n), rng.gamma(2.0, size=n), rng.normal(size=n)
    x3 = rng.gamma(2.0, size=n)
    x3[rng.random(n) < 0.15] = np.nan
    g = rng.choice(["a", "b", "it's" if sql_names else "c"], size=n).astype(object)
    h = g.copy()
    h[rng.random(n) < 0.1] = None
    exposure = rng.uniform(0.5, 3.0, size=n)
    eta = 0.6 * (x1 > 0.3) - 0.4 * (x2 > 2) + 0.3 * (g == "b") + 0.2 * z
    cols = {"x1": x1, "x 2" if sql_names else "x2": x2, "x3": x3, "z": z}
    if sql_names:
        cols["k"] = rng.integers(1, 9, size=n)
    cols.update(g=g, h=h, exposure=exposure, off=rng.normal(scale=0.1, size=n))
    cols["y"] = rng.poisson(exposure * np.exp(eta - 0.3)).astype(float)
    cols["yb"] = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    cols["yg"] = eta + rng.normal(size=n)
    return pd.DataFrame(cols)
