"""Data frames beyond pandas (issue 28, item 8): polars and pyarrow tables are read
through narwhals by ``glm()``, ``predict()``, the refit and ``augment()``, and frames
come back as the caller's kind. Mirrors ``binarsity_stats/formula/_columns.py``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import binarsity_stats as bstats
from binarsity_stats.formula._columns import as_frame, like_callers_frame

FORMULA = "y ~ bin(x, 8) + C(g) + offset(np.log(e))"


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    n = 600
    d = pd.DataFrame({"x": rng.uniform(size=n), "g": rng.choice(["a", "b", "c"], n),
                      "e": rng.uniform(1, 2, n)})  # fmt: skip
    d["y"] = rng.poisson(d.e * np.exp(np.where(d.x > 0.5, 1.0, 0.0) + 0.3 * (d.g == "b")))
    return d


def _tables(frame):
    pa = pytest.importorskip("pyarrow")
    out = [("pyarrow", pa.Table.from_pandas(frame, preserve_index=False))]
    try:
        import polars
    except ImportError:  # pragma: no cover - polars is in the test extra
        return out
    return out + [("polars", polars.from_pandas(frame))]


def test_polars_and_pyarrow_fit_and_predict_as_pandas_does(frame):
    ref = bstats.glm(FORMULA, frame, family="poisson").fit(lam=1e-3)
    tables = _tables(frame)
    assert tables
    for library, table in tables:
        res = bstats.glm(FORMULA, table, family="poisson").fit(lam=1e-3)
        np.testing.assert_array_equal(res.params.to_numpy(), ref.params.to_numpy())
        np.testing.assert_array_equal(res.predict(table), ref.predict(frame))
        np.testing.assert_array_equal(ref.predict(table), ref.predict(frame))
        np.testing.assert_allclose(ref.refit().predict(table), ref.refit().predict(frame),
                                   rtol=1e-12)  # fmt: skip
        out = ref.augment(table)
        assert type(out).__module__.split(".")[0] == library
        back = as_frame(out)
        np.testing.assert_array_equal(back[".fitted"].to_numpy(), ref.predict(frame, type="link"))
        assert list(back.columns[:4]) == list(frame.columns)


def test_other_objects_are_refused_naming_their_module(frame):
    with pytest.raises(TypeError, match=r"pandas, polars or pyarrow DataFrame.*list"):
        bstats.glm(FORMULA, [[1, 2]], family="poisson")
    polars = pytest.importorskip("polars")
    with pytest.raises(TypeError, match=r"LazyFrame.*polars.*\.collect\(\)"):
        bstats.glm(FORMULA, polars.from_pandas(frame).lazy(), family="poisson")


def test_like_callers_frame_keeps_pandas_as_it_is(frame):
    assert like_callers_frame(frame, frame) is frame
    assert like_callers_frame(frame, {"a": [1]}) is frame
