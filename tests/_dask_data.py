"""The simulated frame of the Dask statistics and refit tests (one definition).

``y ~ bin(age, 8) + C(region) + z`` with weights ``w`` and a log exposure ``logt``: a
poisson, binomial or gaussian response with the same linear predictor.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def dask_test_frame(
    n: int = 2000, seed: int = 0, family: str = "poisson", zero_weights: bool = False
) -> pd.DataFrame:
    """The frame; ``zero_weights``: every 7th row's weight 0 (left out of a refit)."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "age": rng.integers(18, 80, n).astype(float),
        "region": rng.choice(["north", "south", "east"], n),
        "z": np.round(rng.normal(size=n), 2),
        "w": rng.uniform(0.5, 2.0, n),
        "logt": np.log(rng.uniform(0.5, 2.0, n)),
    })  # fmt: skip
    if zero_weights:
        df.loc[::7, "w"] = 0.0  # rows an analytic weight leaves out of the refit
    eta = 0.02 * (df.age - 50) + 0.3 * (df.region == "south") + 0.4 * df.z
    if family == "poisson":
        df["y"] = rng.poisson(np.exp(eta + df.logt)).astype(float)
    elif family == "binomial":
        df["y"] = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    else:
        df["y"] = 3.0 + eta + rng.normal(size=n)
    return df
