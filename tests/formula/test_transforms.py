"""Unit tests of ``binarsity_stats.formula._transforms``: the formula's own transforms
``bin()``, ``C()``, ``ordered()``, ``offset()``, ``cbind()``, ``Surv()``, ``Treatment()``,
called as formulaic calls them (the data, then ``_state``: learned when empty, replayed
when filled). Whole formulas are ``tests/formula/test_formula.py``'s job."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from formulaic.transforms.contrasts import SumContrasts, TreatmentContrasts

from binarsity_stats.formula._transforms import (
    BINARSITY_MARK,
    Surv,
    Treatment,
    cbind,
    offset,
    reference_of,
    resolve_reference,
    sort_key,
    transform_context,
)


def _ctx(**kw):
    return transform_context(**kw)


# ---------------------------------------------------------------- bin()


def test_bin_learns_equal_count_bins_and_codes_right_closed():
    x = pd.Series(np.arange(20.0), name="age")
    state = {}
    codes = _ctx(n_bins=4)["bin"](x, _state=state)
    assert state[BINARSITY_MARK] == "bin" and state["column"] == "age" and state["n_bins"] == 4
    edges = state["edges"]
    assert len(edges) == 3
    # right-closed bins: code = number of edges strictly below x (independent rule)
    np.testing.assert_array_equal(codes, np.searchsorted(edges, x.to_numpy(), side="left"))
    np.testing.assert_array_equal(np.bincount(codes), [5, 5, 5, 5])
    assert (state["data_min"], state["data_max"]) == (0.0, 19.0)
    assert codes.dtype == np.uint8


def test_bin_learns_weighted_quantiles():
    x = pd.Series(np.arange(20.0), name="x")
    w = np.where(x < 10, 1.0, 9.0)  # 10 of the 100 units of weight below 10
    state = {}
    codes = _ctx(n_bins=4, sample_weight=w)["bin"](x, _state=state)
    # weighted quantiles put the three cuts in the heavy half
    assert np.all(state["edges"] >= 10)
    per_bin = np.bincount(codes, weights=w)
    # each bin holds a quarter of the weight, up to a row's weight (9) either side
    assert np.all(np.abs(per_bin - 25.0) <= 9.0 + 1e-12), per_bin


def test_bin_replays_the_learned_cuts_on_new_data():
    state = {}
    bin_ = _ctx(n_bins=4)["bin"]
    bin_(pd.Series(np.arange(20.0), name="age"), _state=state)
    edges = state["edges"].copy()
    new = pd.Series([-100.0, 4.0, 4.5, 1e9], name="age")
    codes = _ctx(n_bins=50)["bin"](new, _state=state)  # the context's defaults do not matter
    np.testing.assert_array_equal(codes, np.searchsorted(edges, new.to_numpy(), side="left"))
    np.testing.assert_array_equal(state["edges"], edges)


def test_bin_missing_separate_gives_nan_its_own_last_level():
    state = {}
    x = pd.Series([1.0, 2, np.nan, 4, 5, 6, 7, 8], name="age")
    codes = _ctx(n_bins=4, missing="separate")["bin"](x, _state=state)
    assert state["has_missing_level"] is True
    n = len(state["edges"]) + 1
    assert codes[2] == n and np.all(codes[np.arange(8) != 2] < n)


@pytest.mark.parametrize(
    ("x", "kw", "pattern"),
    [
        ([1.0, np.inf, 2.0], {}, r"^column 'age' contains infinite values"),
        ([1.0, np.nan, 2.0], {}, r"^column 'age' contains missing values \(NaN\); pass missing='separate'"),
        ([np.nan, np.nan], {"missing": "separate"}, r"^column 'age' has only missing values"),
        ([1.0, 2.0], {"missing": "omit"}, r"missing must be one of \('error', 'separate', 'drop'\); got 'omit' in bin\(age\)"),
        ([1.0, 2.0], {"n_bins": 1}, r"n_bins.* in bin\(age\)"),
        ([1.0, 2.0], {"n_bins": 2.5}, r"n_bins.* in bin\(age\)"),
    ],
)
def test_bin_refuses_bad_data_and_arguments_naming_the_column(x, kw, pattern):
    with pytest.raises((ValueError, TypeError), match=pattern):
        _ctx()["bin"](pd.Series(x, name="age"), _state={}, **kw)


def test_bin_replay_refuses_nan_without_a_missing_level():
    for missing, pattern in (("error", r"but the model has no missing level"),
                             ("drop", r"the model dropped such rows at fit")):  # fmt: skip
        state = {}
        _ctx(missing=missing)["bin"](pd.Series(np.arange(10.0), name="age"), 3, _state=state)
        with pytest.raises(ValueError, match=f"^column 'age' contains missing values.*{pattern[:20]}"):
            _ctx()["bin"](pd.Series([1.0, np.nan], name="age"), _state=state)


def test_bin_by_group_codes_one_chain_per_level():
    x = pd.Series(np.arange(12.0), name="x")
    g = pd.Series(list("abcabcabcabc"), name="g")
    state = {}
    codes = _ctx()["bin"](x, 3, by=g, _state=state)
    assert state["by"] == {"column": "g", "levels": ["a", "b", "c"], "main": False}
    plain = np.searchsorted(state["edges"], x.to_numpy(), side="left")
    level = np.array(["abc".index(v) for v in g])
    np.testing.assert_array_equal(codes, level * 3 + plain)
    # with a main effect of x, the reference level's rows share code 0
    state = {}
    codes = _ctx()["bin"](x, 3, by=g, _main=True, _state=state)
    np.testing.assert_array_equal(codes, np.where(level == 0, 0, 1 + (level - 1) * 3 + plain))
    with pytest.raises(ValueError, match=r"^column 'g' contains missing values; the by-group term bin\(x\):C\(g\)"):
        _ctx()["bin"](x[:3], 3, by=pd.Series(["a", None, "b"], name="g"), _state={})


# ---------------------------------------------------------------- C() and Treatment


def test_c_learns_sorted_levels_numbers_before_text_and_replays_them():
    state = {}
    C = _ctx(missing="separate")["C"]
    codes = C(pd.Series(["b", None, "a", 2, 1.5], name="g"), _state=state)
    assert state["levels"] == [1.5, 2, "a", "b"] and state["has_missing_level"] is True
    np.testing.assert_array_equal(codes, [3, 4, 2, 1, 0])
    np.testing.assert_array_equal(C(pd.Series(["a", "a", 2], name="g"), _state=state), [2, 2, 1])
    with pytest.raises(ValueError, match=r"^column 'g' has level\(s\) not seen when the model was fitted: \['z'\]"):
        C(pd.Series(["z"], name="g"), _state=state)


def test_c_levels_of_a_categorical_and_given_levels_keep_their_order():
    state = {}
    cat = pd.Series(pd.Categorical(["lo", "hi", "mid"], categories=["lo", "mid", "hi"]), name="r")
    np.testing.assert_array_equal(_ctx()["C"](cat, _state=state), [0, 2, 1])
    state = {}
    codes = _ctx()["C"](pd.Series(["x", "y"], name="r"), levels=["y", "x", "w"], _state=state)
    assert state["levels"] == ["y", "x", "w"]
    np.testing.assert_array_equal(codes, [1, 0])


def test_c_refuses_missing_values_and_empty_columns_by_name():
    with pytest.raises(ValueError, match=r"^column 'g' contains missing values \(NaN\)"):
        _ctx()["C"](pd.Series(["a", None], name="g"), _state={})
    with pytest.raises(ValueError, match=r"^column 'g' has no non-missing values"):
        _ctx(missing="separate")["C"](pd.Series([None, None], name="g"), _state={})


def test_treatment_references():
    state = {}
    _ctx()["C"](pd.Series(["a", "b", "c"], name="g"), Treatment("b"), _state=state)
    assert state["reference"] == "b"
    assert repr(Treatment("b")) == "Treatment('b')" and Treatment(base="c").reference == "c"
    with pytest.raises(ValueError, match="reference or base, not both"):
        Treatment("a", base="b")
    # formulaic's own treatment contrasts; patsy's integer position
    assert reference_of(TreatmentContrasts(base="c"), "g") == (True, "c")
    assert reference_of(TreatmentContrasts(), "g") == (False, None)
    assert reference_of(None, "g") == (False, None)
    assert resolve_reference(-1, ["a", "b", "c"], "g") == "c"
    assert resolve_reference("2", [1, 2, 3], "g") == 2  # a value by its text
    with pytest.raises(ValueError, match=r"^C\(g, Treatment\('z'\)\): 'z' is not a level of column 'g'; its levels are \['a', 'b'\]"):
        resolve_reference("z", ["a", "b"], "g")
    with pytest.raises(ValueError, match=r"^C\(g, .*only treatment coding is supported"):
        reference_of(SumContrasts(), "g")


def test_sort_key_orders_numbers_before_text():
    assert sorted(["b", 10, "a", 2.5, np.int64(1)], key=sort_key) == [np.int64(1), 2.5, 10, "a", "b"]


# ---------------------------------------------------------------- ordered()


def test_ordered_codes_positions_in_the_given_levels():
    state = {}
    codes = _ctx()["ordered"](pd.Series(["B", "AAA", "A"], name="rating"), levels=["AAA", "A", "B"],
                              monotone="decreasing", _state=state)  # fmt: skip
    np.testing.assert_array_equal(codes, [2, 0, 1])
    assert state[BINARSITY_MARK] == "ordered" and state["monotone"] == "decreasing"


@pytest.mark.parametrize(
    ("kw", "error", "pattern"),
    [
        ({"levels": "AB"}, TypeError, r"^levels of ordered\(rating\) must be a list of values"),
        ({"levels": ["A", "B", "A"]}, ValueError, r"^levels of ordered\(rating\) repeat a value"),
        ({"levels": ["A"]}, ValueError, r"^ordered\(rating\) needs at least two levels"),
        ({"monotone": "up"}, ValueError, r"monotone in ordered\(rating\)"),
    ],
)
def test_ordered_refuses_bad_arguments_by_name(kw, error, pattern):
    with pytest.raises(error, match=pattern):
        _ctx()["ordered"](pd.Series(["A", "B"], name="rating"), _state={}, **kw)


# ---------------------------------------------------------------- offset, cbind, Surv, the context


def test_offset_is_the_column_as_floats_and_marks_its_state():
    state = {}
    out = offset(pd.Series([1, 2, 3], name="logt"), _state=state)
    np.testing.assert_array_equal(out, [1.0, 2.0, 3.0])
    assert np.asarray(out).dtype == np.float64 and state[BINARSITY_MARK] == "offset"
    with pytest.raises(TypeError, match="logt"):
        offset(pd.Series(["a", "b"], name="logt"), _state={})


def test_cbind_and_surv_are_two_float_columns_refusing_text_by_name():
    out = cbind(pd.Series([1, 2], name="s"), pd.Series([3, 0], name="f"))
    assert list(out.columns) == ["successes", "failures"]
    np.testing.assert_array_equal(out.to_numpy(), [[1.0, 3.0], [2.0, 0.0]])
    out = Surv(pd.Series([5.0, 2.0], name="t"), pd.Series([True, False], name="e"))
    np.testing.assert_array_equal(out.to_numpy(), [[5.0, 1.0], [2.0, 0.0]])
    with pytest.raises(TypeError, match=r"fails"):
        cbind(pd.Series([1, 2], name="s"), pd.Series(["a", "b"], name="fails"))


def test_transform_context_names():
    ctx = transform_context()
    assert set(ctx) == {"bin", "C", "ordered", "offset", "Treatment", "cbind", "Surv"}
    assert ctx["bin"] is not bin and ctx["Treatment"] is Treatment
