"""``formula/_recipe.py``: the replayable design recipe (``DesignSpec``).

What is proved here: replaying one recipe from many threads at once (what Dask's
threaded workers do with the partitions of a frame) gives every thread the codes of a
single-threaded replay — formulaic's evaluations hold ``FORMULAIC_LOCK``, since
CPython 3.11's ``ast`` parser fails when threads parse at the same time.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd

import binarsity_stats as bstats
from binarsity_stats.formula._columns import FORMULAIC_LOCK


def test_threads_replaying_one_recipe_get_the_single_threaded_codes():
    rng = np.random.default_rng(0)
    n = 300
    d = pd.DataFrame({"a": rng.normal(size=n), "b": rng.uniform(size=n),
                      "g": rng.choice(["x", "y", "z"], n), "u": rng.normal(size=n)})
    d["y"] = d["a"] + rng.normal(size=n)
    spec = bstats.glm("y ~ bin(a, 10) + bin(b, 8) + C(g) + I(u * 2) + np.log1p(b)", d).spec
    parts = [d.iloc[i::16] for i in range(16)]
    expected = [np.asarray(spec.transform(p).codes) for p in parts]
    with ThreadPoolExecutor(max_workers=8) as pool:
        for _ in range(5):
            got = list(pool.map(lambda p: np.asarray(spec.transform(p).codes), parts))
            for e, g in zip(expected, got, strict=True):
                np.testing.assert_array_equal(g, e)
    assert FORMULAIC_LOCK.acquire(blocking=False)  # released after every evaluation
    FORMULAIC_LOCK.release()
