"""``C(t)`` on a date column: its levels are dates (ISO 8601 text), never nanosecond integers.

On ``datetime64[ns]`` (pandas' default unit before 3.0, and what ``astype`` gives) the
levels were the integers 1704067200000000000..., and predicting on the same dates failed
("level(s) not seen"). Every unit now gives the same levels — ``"2024-01-31"`` for a
naive date at midnight, ``Timestamp.isoformat()`` otherwise — in labels, the summary,
``cut_points``/refit names and ``to_spec``; predict, ``from_spec`` and the standalone
scorer read the same dates (as dates or as the CSV text of them).
"""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

import binarsity_stats as bs
from binarsity_stats.design import standalone_scorer

DAYS = ["2024-01-01", "2024-02-01", "2024-03-01"]


def _frame(unit, n=300, seed=0):
    rng = np.random.RandomState(seed)
    t = pd.to_datetime(pd.Series(rng.choice(DAYS, n))).astype(f"datetime64[{unit}]")
    df = pd.DataFrame({"t": t, "x": rng.uniform(size=n)})
    df["y"] = rng.normal(size=n) + (df.t.dt.month == 2) + df.x
    return df


@pytest.mark.parametrize("unit", ["ns", "us", "s"])
def test_date_levels_print_as_dates_and_predict(unit):
    df = _frame(unit)
    res = bs.glm("y ~ bin(x, 4) + C(t)", df).fit(lam=1e-3)
    block = res.model.spec.blocks[1]
    assert list(block.level_labels()) == DAYS
    text = str(res.summary())
    assert "C(t)[2024-02-01]" in text and "1706745600" not in text
    spec = res.to_spec()
    (term,) = [t for t in spec["terms"] if t["kind"] == "categorical"]
    assert term["levels"] == DAYS
    assert [n for n in res.refit().params.index if n.startswith("C(t)")] == [
        "C(t)[2024-02-01]", "C(t)[2024-03-01]"]
    # new rows with the same dates, in any unit, or as the text of a CSV file
    pred = res.predict(df)
    np.testing.assert_array_equal(pred, res.predict(df.assign(t=df.t.astype("datetime64[ms]"))))
    back = pd.read_csv(io.StringIO(df.to_csv(index=False)))  # t read back as text
    assert not pd.api.types.is_datetime64_any_dtype(back.t)
    np.testing.assert_array_equal(res.predict(back), pred)
    model = bs.from_spec(json.loads(json.dumps(spec)))
    np.testing.assert_allclose(model.predict(df), pred, rtol=1e-12)
    np.testing.assert_allclose(model.predict(back), pred, rtol=1e-12)
    rows = back.drop(columns="y").to_dict("records")
    scored = standalone_scorer.predict(json.loads(json.dumps(spec)), rows)
    np.testing.assert_allclose(scored, pred, rtol=1e-12)
    with pytest.raises(ValueError, match=r"not seen when the model was fitted: \['2025-01-01'\]"):
        res.predict(df.assign(t=pd.Timestamp("2025-01-01")))


def test_date_levels_times_time_zones_and_missing():
    from binarsity_stats.design._column_access import date_levels

    s = pd.Series(pd.to_datetime(["2024-01-01", "2024-01-01 12:30", None], format="ISO8601"))
    out = date_levels(s.astype("datetime64[ns]"))
    assert out[0] == "2024-01-01" and out[1] == "2024-01-01T12:30:00" and pd.isna(out[2])
    tz = date_levels(pd.Series(pd.to_datetime(["2024-01-01"])).dt.tz_localize("Europe/Paris"))
    assert tz[0] == "2024-01-01T00:00:00+01:00"
    rng = np.random.RandomState(1)
    df = pd.DataFrame({
        "t": pd.to_datetime(rng.choice(["2024-01-01 08:00", "2024-01-01 20:00", None], 200),
                            format="ISO8601"),
        "y": rng.normal(size=200)})  # fmt: skip
    res = bs.glm("y ~ C(t)", df, missing="separate").fit(lam=1e-3)
    labels = list(res.model.spec.blocks[0].level_labels())
    assert labels[:2] == ["2024-01-01T08:00:00", "2024-01-01T20:00:00"]
    np.testing.assert_array_equal(res.predict(df), res.predict())
