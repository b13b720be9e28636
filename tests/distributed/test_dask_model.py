"""Unit tests of ``binarsity_stats.distributed._dask_model``: a formula's design learned
on a Dask DataFrame (``dask_formula_design``, ``collect_design``), the summary
transforms and the merge of their states, the column and client arguments, and
prediction on a Dask DataFrame. Everything runs on Dask's synchronous scheduler; the
in-memory ``glm()`` is the reference (``tests/distributed/test_dask.py`` compares whole
fits)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")

from binarsity_stats import glm  # noqa: E402
from binarsity_stats.distributed._dask_model import (  # noqa: E402
    _column_arg,
    _merge_states,
    _summary_context,
    collect_design,
    dask_formula_design,
    resolve_client,
)
from binarsity_stats.distributed._dask_summary import ValueSummary  # noqa: E402
from binarsity_stats.families._families import get_family  # noqa: E402


@pytest.fixture(autouse=True)
def _sync_scheduler():
    with dask.config.set(scheduler="sync"):
        yield


def _frame(n=400, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "age": rng.integers(18, 80, n).astype(float),
        "region": rng.choice(["north", "south", "east"], n),
        "z": rng.normal(size=n),
        "w": rng.uniform(0.5, 2.0, n),
    })  # fmt: skip
    df["y"] = rng.poisson(np.exp(0.01 * (df.age - 50) + 0.2 * (df.region == "south")))
    return df


FORMULA = "y ~ bin(age, 8) + C(region) + z"


@pytest.mark.parametrize("weighted", [False, True])
def test_the_learned_design_is_the_in_memory_one(weighted):
    df = _frame()
    ddf = dd.from_pandas(df, npartitions=4)
    w = "w" if weighted else None
    built = dask_formula_design(FORMULA, ddf, family=get_family("poisson"), sample_weight=w)
    design, y, sw, off_arg = collect_design(built)
    ref = glm(FORMULA, df, family="poisson", sample_weight=w)
    np.testing.assert_array_equal(design.codes, ref.design.codes)
    np.testing.assert_array_equal(design.block_ptr, ref.design.block_ptr)
    np.testing.assert_array_equal(design.dense, ref.design.dense)
    np.testing.assert_array_equal(y, df["y"].to_numpy(dtype=float))
    if weighted:
        np.testing.assert_array_equal(sw, df["w"].to_numpy())
    else:
        assert sw is None
    assert off_arg is None
    assert [repr(b) for b in built.spec.blocks] == [repr(b) for b in ref.spec.blocks]
    assert built.response.name == "y" and built.response.kind == "numeric"
    assert built.weight_column == w and built.offset_column is None
    assert all(v["exact"] for v in built.exact.values())
    assert built.design.n_rows == len(df) and len(built.design.partitions) == 4


def test_column_arguments_name_columns_of_the_data():
    cols = pd.Index(["age", "weight"])
    assert _column_arg(None, "sample_weight", cols) is None
    assert _column_arg("weight", "sample_weight", cols) == "weight"
    with pytest.raises(TypeError, match=r"^sample_weight: on a Dask DataFrame give the name of a column"):
        _column_arg(np.ones(3), "sample_weight", cols)
    with pytest.raises(ValueError, match=r"^offset='wieght' is not a column of the data\..*weight"):
        _column_arg("wieght", "offset", cols)


def test_resolve_client():
    assert resolve_client(None) is None

    class Fake:
        compute = scheduler = None

    fake = Fake()
    assert resolve_client(fake) is fake
    with pytest.raises(TypeError, match=r"^client must be a distributed\.Client or a scheduler address .* got int"):
        resolve_client(3)


# ---------------------------------------------------------------- summary transforms


def test_summary_transforms_record_summaries_and_levels():
    ctx = _summary_context(10, "error", None, 1000, 100)
    state = {}
    codes = ctx["bin"](pd.Series([3.0, 1.0, 3.0], name="age"), 4, _state=state)
    assert not codes.any() and state["n_bins"] == 4 and state["column"] == "age"
    np.testing.assert_array_equal(state["summary"].values, [1.0, 3.0])
    np.testing.assert_array_equal(state["summary"].rows, [1, 2])
    state = {}
    ctx["C"](pd.Series(["b", "a", "b"], name="g"), _state=state)
    assert state["seen"] == ["b", "a"] and state["ordered"] is False and state["any_na"] is False


def test_summary_transforms_refuse_what_a_partition_cannot_learn():
    ctx = _summary_context(10, "error", None, 1000, 100)
    with pytest.raises(ValueError, match=r"^bin\(age, by=\.\.\.\) is not supported on a Dask DataFrame"):
        ctx["bin"](pd.Series([1.0], name="age"), by=pd.Series(["a"]), _state={})
    with pytest.raises(ValueError, match=r"^column 'g' contains missing values \(NaN\)"):
        ctx["C"](pd.Series(["a", None], name="g"), _state={})
    with pytest.raises(ValueError, match=r"^missing must be one of .* got 'omit' in bin\(age\)"):
        ctx["bin"](pd.Series([1.0], name="age"), missing="omit", _state={})
    with pytest.raises(ValueError, match=r"^ordered\(\) terms are not supported on a Dask DataFrame"):
        ctx["ordered"](pd.Series(["a"]))


def test_merged_states_union_levels_in_first_seen_order_and_merge_summaries():
    def states(values, levels, na=False):
        return {
            "bin(x)": {"__binarsity__": "bin", "summary": ValueSummary.of(np.asarray(values)),
                       "bounds": (1000, 100)},
            "C(g)": {"__binarsity__": "C", "seen": levels, "ordered": False, "any_na": na},
            "z": {"other": 1},
        }  # fmt: skip

    merged = _merge_states([states([1.0, 2.0], ["b", "a"]), states([2.0, 5.0], ["c", "b"], True)])
    assert merged["C(g)"]["seen"] == ["b", "a", "c"] and merged["C(g)"]["any_na"] is True
    s = merged["bin(x)"]["summary"]
    np.testing.assert_array_equal(s.values, [1.0, 2.0, 5.0])
    np.testing.assert_array_equal(s.rows, [1, 2, 1])
    assert merged["z"] == {"other": 1}
    # categories given in order (levels= or a categorical): the first partition's, kept
    ordered = [{"C(g)": {"__binarsity__": "C", "seen": ["lo", "hi"], "ordered": True, "any_na": False}},
               {"C(g)": {"__binarsity__": "C", "seen": ["hi", "lo"], "ordered": True, "any_na": False}}]  # fmt: skip
    assert _merge_states(ordered)["C(g)"]["seen"] == ["lo", "hi"]


# ---------------------------------------------------------------- prediction


def test_predictions_on_a_dask_frame_are_lazy_and_equal_the_in_memory_ones():
    df = _frame(300, seed=1)
    res = glm(FORMULA, df, family="poisson").fit(lam=1e-3)
    new = dd.from_pandas(_frame(90, seed=2), npartitions=3)
    pred = res.predict(new)
    assert isinstance(pred, dd.Series)
    np.testing.assert_array_equal(pred.compute().to_numpy(), res.predict(new.compute()))
    eta = res.predict(new, type="link").compute()
    assert eta.name == "eta"
    np.testing.assert_array_equal(eta.to_numpy(), res.predict(new.compute(), type="link"))
    with pytest.raises(TypeError, match=r"^offset: on a Dask DataFrame the offset is read from the data"):
        res.predict(new, offset=np.zeros(90))


def test_predicting_a_dask_array_or_series_names_what_is_needed():
    import dask.array as da

    res = glm(FORMULA, _frame(200), family="poisson").fit(lam=1e-3)
    with pytest.raises(TypeError, match=r"^newdata must be a Dask DataFrame; got Array"):
        res.predict(da.ones((30, 3)))
    # a Dask Series has map_partitions and a .columns ([None]) as well
    series = dd.from_pandas(_frame(30, seed=3)["age"], npartitions=2)
    with pytest.raises(TypeError, match=r"^newdata must be a Dask DataFrame; got Series"):
        res.predict(series, type="link")
