"""Unit tests of ``binarsity_stats.core._rows``: the checkers of the row arrays.

Each checker is given good input (its result is compared with an independent NumPy
computation) and each kind of bad input (the message names the argument, the row
and what the rows are counted against). The end-to-end agreement of the entries
(glm, the estimators, the engine) is ``tests/core/test_validation.py``'s job.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from binarsity_stats.core._rows import (
    as_real_array,
    check_groups,
    check_offset,
    check_offset_loss,
    check_sample_weight,
    check_unique_names,
    check_weights_kind,
    is_missing,
    normalized_weights,
)
from binarsity_stats.families._families import get_family

# ---------------------------------------------------------------- is_missing


@pytest.mark.parametrize(
    "value", [None, np.nan, float("nan"), pd.NA, pd.NaT, np.datetime64("NaT"), np.float32("nan")]
)
def test_is_missing_recognises_every_missing_marker(value):
    assert is_missing(value) is True


@pytest.mark.parametrize("value", [0, 0.0, "", "nan", False, np.inf, -np.inf, (1, 2), "NA"])
def test_is_missing_refuses_values_that_are_present(value):
    assert is_missing(value) is False


def test_is_missing_survives_objects_whose_comparison_raises():
    class Odd:
        def __ne__(self, other):
            raise TypeError("no comparison")

    assert is_missing(Odd()) is False
    # an array's != is ambiguous as a bool: not missing (and no exception)
    assert is_missing(np.array([1.0, np.nan])) is False


# ---------------------------------------------------------------- as_real_array


@pytest.mark.parametrize(
    "value",
    [
        [True, False, True],
        np.array([1, 2, 3], dtype=np.int8),
        np.array([1, 2, 3], dtype=np.uint64),
        np.array([0.5, 1.5, 2.5], dtype=np.float32),
    ],
)
def test_as_real_array_converts_real_dtypes_to_float64(value):
    out = as_real_array(value, "w")
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, np.asarray(value).astype(np.float64))


def test_as_real_array_keeps_the_shape():
    value = np.arange(6, dtype=np.int32).reshape(2, 3)
    out = as_real_array(value, "w")
    assert out.shape == (2, 3)
    np.testing.assert_array_equal(out, value)


def test_as_real_array_object_arrays_map_missing_to_nan():
    value = np.array([1, None, 2.5, np.nan, pd.NA, True, np.int16(4)], dtype=object)
    out = as_real_array(value, "w")
    expected = np.array([1.0, np.nan, 2.5, np.nan, np.nan, 1.0, 4.0])
    np.testing.assert_array_equal(out, expected)


def test_as_real_array_pandas_nullable_na_becomes_nan():
    s = pd.Series([1, None, 3], dtype="Int64")
    np.testing.assert_array_equal(as_real_array(s, "w"), [1.0, np.nan, 3.0])
    f = pd.Series([0.5, None], dtype="Float64")
    np.testing.assert_array_equal(as_real_array(f, "w"), [0.5, np.nan])


@pytest.mark.parametrize(
    ("value", "bad"),
    [
        (np.array([1.0, "1.5"], dtype=object), "'1.5'"),
        (np.array([1.0, 2 + 1j], dtype=object), "(2+1j)"),
        (pd.Series(["a", "b"], dtype=object), "'a'"),
    ],
)
def test_as_real_array_refuses_text_and_complex_naming_argument_and_row(value, bad):
    with pytest.raises(TypeError, match=r"my_arg holds a non-numeric value") as err:
        as_real_array(value, "my_arg")
    assert bad in str(err.value)
    row = [i for i, v in enumerate(np.asarray(value, dtype=object)) if isinstance(v, (str, complex))][0]
    assert f"at row {row}" in str(err.value)


@pytest.mark.parametrize(
    "value",
    [np.array(["1", "2"]), np.array([1 + 0j, 2 + 0j]), np.array(["2020-01-01"], dtype="M8[D]")],
)
def test_as_real_array_refuses_non_numeric_dtypes_by_name(value):
    with pytest.raises(TypeError, match=r"^my_arg must be numeric; got dtype"):
        as_real_array(value, "my_arg")


# ---------------------------------------------------------------- check_sample_weight


def test_check_sample_weight_none_stays_none():
    assert check_sample_weight(None, 5) is None


def test_check_sample_weight_returns_user_units_contiguous_float64():
    sw = np.arange(10, dtype=np.int64)[::2]  # a strided view
    out = check_sample_weight(sw, 5)
    assert out.dtype == np.float64 and out.flags.c_contiguous
    np.testing.assert_array_equal(out, [0.0, 2.0, 4.0, 6.0, 8.0])


@pytest.mark.parametrize(
    ("value", "pattern"),
    [
        (np.ones((2, 2)), r"^w must be one-dimensional; got shape \(2, 2\)"),
        (np.ones(3), r"^w has 3 rows but y has 4\."),
        (np.array([1.0, np.nan, 1.0, np.inf]), r"^w contains NaN or infinite values \(first at row 1: nan\)"),
        (np.array([1.0, 1.0, -0.5, -1.0]), r"^w must be non-negative; row 2 has -0.5\."),
        (np.zeros(4), r"^w is zero for every row"),
        (np.array([1e300, 1e-20, 1.0, 0.0]), r"^w ranges from 1e-20 to 1e\+300"),
    ],
)
def test_check_sample_weight_refuses_bad_values_by_name(value, pattern):
    with pytest.raises(ValueError, match=pattern):
        check_sample_weight(value, 4, rows_of="y", name="w")


def test_check_sample_weight_accepts_extreme_but_representable_scales():
    for scale in (1e306, 1e-312):
        out = check_sample_weight(np.full(3, scale), 3)
        np.testing.assert_array_equal(out, np.full(3, scale))


# ---------------------------------------------------------------- normalized_weights


@pytest.mark.parametrize("top", [1.0, 3.0, 1e306, 1e-312, 0.75, 2.0**40])
def test_normalized_weights_largest_in_one_two_and_exact(top):
    rng = np.random.default_rng(0)
    sw = np.concatenate([[top], top * rng.uniform(0, 1, size=20), [0.0]])
    out, scale = normalized_weights(sw)
    assert 1.0 <= out.max() < 2.0
    # the scale is a power of two, so the division is exact: multiplying back is bitwise
    mant, _ = np.frexp(scale)
    assert mant == 0.5
    np.testing.assert_array_equal(out * scale, sw)
    # independent: the exponent of the largest weight
    assert scale == 2.0 ** np.floor(np.log2(top))


def test_normalized_weights_unit_weights_unchanged():
    out, scale = normalized_weights(np.ones(7))
    assert scale == 1.0
    np.testing.assert_array_equal(out, np.ones(7))


def test_normalized_weights_power_of_two_multiples_give_the_same_weights():
    sw = np.array([0.3, 1.7, 0.0, 5.5])
    a, _ = normalized_weights(sw)
    b, _ = normalized_weights(sw * 2.0**37)
    np.testing.assert_array_equal(a, b)


def test_normalized_weights_refuses_a_range_beyond_float64():
    with pytest.raises(ValueError, match=r"^sw_name ranges from 1e-300 to 1e\+300"):
        normalized_weights(np.array([1e300, 1e-300]), "sw_name")


# ---------------------------------------------------------------- check_offset


def test_check_offset_none_and_values():
    assert check_offset(None, 3) is None
    out = check_offset(pd.Series([1, 2, 3]), 3)
    np.testing.assert_array_equal(out, [1.0, 2.0, 3.0])
    assert out.dtype == np.float64


@pytest.mark.parametrize(
    ("value", "pattern"),
    [
        ([1.0, 2.0], r"^offset has 2 rows but the data has 3\."),
        ([1.0, np.nan, 2.0], r"^offset contains NaN or infinite values \(first at row 1"),
        (np.ones((3, 1)), r"^offset must be one-dimensional"),
    ],
)
def test_check_offset_refuses_by_name(value, pattern):
    with pytest.raises(ValueError, match=pattern):
        check_offset(value, 3, rows_of="the data")


def test_check_offset_refuses_text():
    with pytest.raises(TypeError, match=r"^exposure holds a non-numeric value 'x'"):
        check_offset(np.array([1.0, "x"], dtype=object), 2, name="exposure")


# ---------------------------------------------------------------- check_offset_loss


def test_check_offset_loss_accepts_ordinary_offsets_and_none():
    y = np.array([0.0, 1.0, 3.0])
    sw = np.ones(3)
    check_offset_loss(get_family("poisson"), y, None, sw)
    check_offset_loss(get_family("poisson"), y, np.log(np.array([1.0, 2.0, 3.0])), sw)
    check_offset_loss(get_family("gaussian"), y, np.full(3, 1e100), sw)


def test_check_offset_loss_poisson_bound_is_where_exp_overflows():
    y = np.array([0.0, 1.0, 3.0])
    sw = np.ones(3)
    fam = get_family("poisson")
    # the average loss exp(η)/3 - ...: finite below ~690 + log 3, refused beyond 710
    check_offset_loss(fam, y, np.array([0.0, 0.0, 680.0]), sw)
    with pytest.raises(ValueError, match=r"^offset has values as large as 720 .* poisson loss"):
        check_offset_loss(fam, y, np.array([0.0, 0.0, 720.0]), sw)


def test_check_offset_loss_gaussian_refuses_a_loss_beyond_the_limit():
    y = np.zeros(2)
    with pytest.raises(ValueError, match=r"gaussian loss at the offset alone"):
        check_offset_loss(get_family("gaussian"), y, np.array([0.0, 1e160]), np.ones(2))


# ---------------------------------------------------------------- check_groups


def test_check_groups_returns_object_labels():
    out = check_groups(pd.Series(["a", "b", "a"]), 3)
    assert out.dtype == object
    assert list(out) == ["a", "b", "a"]
    out = check_groups([1, 2, 2], 3)
    assert list(out) == [1, 2, 2]


@pytest.mark.parametrize(
    ("value", "error", "pattern"),
    [
        ("abc", TypeError, r"^groups must be an array of one label per row"),
        (5, TypeError, r"^groups must be an array of one label per row; got 5"),
        ([[1, 2], [3, 4], [5, 6]], ValueError, r"^groups must be 1-D"),
        ([1, 2], ValueError, r"^groups has 2 rows but X has 3\."),
        (["a", None, "b"], ValueError, r"first at row 1"),
        (pd.Series([1.0, 2.0, np.nan]), ValueError, r"first at row 2"),
    ],
)
def test_check_groups_refuses_by_name(value, error, pattern):
    with pytest.raises(error, match=pattern):
        check_groups(value, 3, rows_of="X")


# ---------------------------------------------------------------- names and kinds


def test_check_unique_names_lists_each_duplicate_once():
    check_unique_names(["a", "b", "c"], "X")
    with pytest.raises(ValueError, match=r"^data has duplicated column names \['a', 'b'\]"):
        check_unique_names(["a", "b", "a", "a", "b", "c"], "data")


@pytest.mark.parametrize("kind", ["analytic", "freq"])
def test_check_weights_kind_accepts_the_two_kinds(kind):
    assert check_weights_kind(kind) == kind


@pytest.mark.parametrize("kind", ["Freq", "frequency", None, 1, ["freq"]])
def test_check_weights_kind_refuses_others_by_name(kind):
    with pytest.raises(ValueError, match=r"^weights_kind must be 'analytic'.*got"):
        check_weights_kind(kind)
