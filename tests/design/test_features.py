"""Unit tests of ``binarsity_stats.design._features``: the estimators' feature kinds
(binned, categorical, ordered, linear, group, strata), monotone shapes, levels and
codes of categorical columns, linear columns; every refusal names the argument and
the column."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from binarsity_stats.design._features import (
    category_codes,
    column_values,
    feature_groups,
    feature_kinds,
    feature_shapes,
    feature_strata,
    fitted_column,
    learn_levels,
    linear_column,
)

FRAME = pd.DataFrame(
    {
        "age": [30.0, 40.0, 50.0],
        "region": pd.Categorical(["n", "s", "n"]),
        "rating": pd.Categorical(["A", "B", "A"], categories=["B", "A"], ordered=True),
        "z": [1.0, 2.0, 3.0],
    }
)
NAMES = list(FRAME.columns)


# ---------------------------------------------------------------- feature_kinds


def test_auto_takes_category_columns_and_ordered_ones_are_ordered():
    kinds = feature_kinds(FRAME, "auto", ["z"], NAMES)
    assert kinds.tolist() == ["bin", "categorical", "ordered", "linear"]
    # an array has no category columns
    assert feature_kinds(np.zeros((3, 2)), "auto", None, None).tolist() == ["bin", "bin"]


@pytest.mark.parametrize(
    ("cat", "lin", "expected"),
    [
        (["region"], [3], ["bin", "categorical", "bin", "linear"]),
        ([1, -2], None, ["bin", "categorical", "ordered", "bin"]),  # negative positions
        ([False, True, False, False], [True, False, False, False], ["linear", "categorical", "bin", "bin"]),
        ([], [], ["bin", "bin", "bin", "bin"]),
        (None, None, ["bin", "bin", "bin", "bin"]),
    ],
)
def test_names_positions_and_masks_select_the_same_way(cat, lin, expected):
    assert feature_kinds(FRAME, cat, lin, NAMES).tolist() == expected


@pytest.mark.parametrize(
    ("cat", "lin", "names", "pattern"),
    [
        ("region", None, NAMES, r"^categorical_features must be None, 'auto' .*got 'region'"),
        ([1.5], None, NAMES, r"^categorical_features must hold only column names, only integer positions"),
        ([True, False], None, NAMES, r"^categorical_features as a boolean mask needs one entry per feature \(4\); got 2"),
        (["nope"], None, NAMES, r"^categorical_features names column\(s\) \['nope'\] that are not in X"),
        (["age"], None, None, r"^categorical_features names columns \['age'\] but X has no column names"),
        ([0, "z"], None, NAMES, r"only column names, only integer positions or only booleans"),
        (None, [7], NAMES, r"^linear_features has position\(s\) outside 0\.\.3: \[7\]"),
        (["z"], ["z"], NAMES, r"^column 'z' is in both categorical_features and linear_features"),
        (np.zeros((2, 2), dtype=int), None, NAMES, r"^categorical_features must be one-dimensional"),
    ],
)
def test_bad_selections_are_refused_by_name(cat, lin, names, pattern):
    with pytest.raises(ValueError, match=pattern):
        feature_kinds(FRAME, cat, lin, names)


# ---------------------------------------------------------------- shapes, groups, strata


def test_feature_shapes():
    kinds = feature_kinds(FRAME, "auto", ["z"], NAMES)
    shapes = feature_shapes({"age": "increasing", 2: "decreasing"}, kinds, NAMES)
    assert shapes.tolist() == ["increasing", None, "decreasing", None]
    assert feature_shapes(None, kinds, NAMES).tolist() == [None] * 4
    with pytest.raises(ValueError, match=r"^monotone\['region'\]: column 'region' is categorical, not binned"):
        feature_shapes({"region": "increasing"}, kinds, NAMES)
    with pytest.raises(ValueError, match=r"^monotone must be None or a dict"):
        feature_shapes(["age"], kinds, NAMES)
    with pytest.raises(ValueError, match=r"monotone\['age'\]"):
        feature_shapes({"age": "up"}, kinds, NAMES)


def test_feature_groups_mark_group_columns():
    kinds = np.array(["bin", "categorical", "bin", "bin"], dtype=object)
    groups, new = feature_groups({"age": "region", 3: 1}, kinds, NAMES)
    assert groups.tolist() == [1, -1, -1, 1]
    assert new.tolist() == ["bin", "group", "bin", "bin"]
    assert kinds[1] == "categorical"  # the input is not modified
    none, same = feature_groups(None, kinds, NAMES)
    assert none.tolist() == [-1] * 4 and same is kinds


@pytest.mark.parametrize(
    ("by", "kinds", "pattern"),
    [
        ({"age": "age"}, ["bin", "bin", "bin", "bin"], r"^by\['age'\]: the group column is the feature itself"),
        ({"region": "age"}, ["bin", "categorical", "bin", "bin"], r"^by\['region'\]: column 'region' is categorical, not binned"),
        ({"age": "z"}, ["bin", "bin", "bin", "linear"], r"^by\['age'\]: the group column 'z' is in linear_features"),
        ({"age": "z"}, ["bin", "bin", "bin", "strata"], r"^by\['age'\]: column 'z' is a strata column"),
        ({"age": "z", "z": "rating"}, ["bin"] * 4, r"^by: column 'z' is the group of a feature and has a group of its own"),
        ({"age": 1.5}, ["bin"] * 4, r"^by\['age'\]: 1\.5 is not a column"),
        (["age"], ["bin"] * 4, r"^by must be None or a dict"),
    ],
)
def test_feature_groups_refusals(by, kinds, pattern):
    with pytest.raises(ValueError, match=pattern):
        feature_groups(by, np.array(kinds, dtype=object), NAMES)


def test_feature_strata():
    kinds = np.array(["bin", "categorical", "bin", "bin"], dtype=object)
    pos, new = feature_strata(["z", "region"], kinds, NAMES)
    assert pos.tolist() == [3, 1] and new.tolist() == ["bin", "strata", "bin", "strata"]
    pos, _ = feature_strata("z", kinds, NAMES)
    assert pos.tolist() == [3]
    assert feature_strata(None, kinds, NAMES)[0].size == 0
    with pytest.raises(ValueError, match=r"^strata names column 'z' twice"):
        feature_strata(["z", "z"], kinds, NAMES)
    with pytest.raises(ValueError, match=r"^strata: column 'z' is in linear_features"):
        feature_strata("z", np.array(["bin", "bin", "bin", "linear"], dtype=object), NAMES)
    with pytest.raises(ValueError, match=r"^strata names every column of X"):
        feature_strata([0, 1], np.array(["bin", "bin"], dtype=object), None)
    with pytest.raises(ValueError, match=r"^strata must be None, a column"):
        feature_strata([], kinds, NAMES)


def test_fitted_column():
    st = {"feature_names_in_": np.array(["a", "b"], dtype=object)}
    assert fitted_column(st, "b") == 1 and fitted_column(st, 0) == 0
    assert fitted_column({}, 3) == 3
    with pytest.raises(ValueError, match=r"the fitted state is inconsistent: the column 'c'"):
        fitted_column(st, "c")


# ---------------------------------------------------------------- levels and codes


def test_learn_levels_sorted_numbers_before_text_or_the_categories():
    levels, has_missing = learn_levels(np.array(["b", 2, None, "a", 1.5], dtype=object), "g", "separate")
    assert levels == [1.5, 2, "a", "b"] and has_missing is True
    levels, has_missing = learn_levels(FRAME["rating"], "rating", "error")
    assert levels == ["B", "A"] and has_missing is False


def test_learn_levels_refusals():
    with pytest.raises(ValueError, match=r"^categorical column 'g' contains missing values; pass missing='separate'"):
        learn_levels(pd.Series(["a", None]), "g", "error")
    with pytest.raises(ValueError, match=r"^categorical column 'g' has no non-missing values"):
        learn_levels(pd.Series([None, np.nan]), "g", "separate")


def test_category_codes_follow_the_levels_and_the_missing_level():
    col = pd.Series(["b", None, "a", "b"])
    codes = category_codes(col, ["a", "b"], True, "g")
    assert codes.tolist() == [1, 2, 0, 1] and codes.dtype == np.uint8
    wide = category_codes(np.arange(300), list(range(300)), False, "g")
    assert wide.dtype == np.uint16 and wide.tolist() == list(range(300))
    with pytest.raises(ValueError, match=r"column 'g' has level\(s\) not seen .*\['c'\]"):
        category_codes(pd.Series(["c"]), ["a", "b"], False, "g")


def test_column_values_recognise_every_missing_marker():
    vals, na = column_values(np.array([1, None, np.nan, pd.NA, "x"], dtype=object))
    assert na.tolist() == [False, True, True, True, False] and vals[4] == "x"
    vals, na = column_values(pd.Series([1.0, np.nan]))
    assert na.tolist() == [False, True]


def test_linear_column():
    out = linear_column(pd.Series([1, 2, 3]), "z")
    assert out.dtype == np.float64 and out.tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(ValueError, match=r"^linear feature 'z' has missing or infinite values"):
        linear_column(np.array([1.0, np.inf]), "z")
    with pytest.raises(TypeError, match=r"^linear feature 'z' holds a non-numeric value 'a'"):
        linear_column(np.array([1.0, "a"], dtype=object), "z")
