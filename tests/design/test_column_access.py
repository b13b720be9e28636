"""Unit tests of ``binarsity_stats.design._column_access``: the binarizer's argument
checks, its exact fixed-point weights, column access to arrays and DataFrames without
a float copy of X, dates as ISO text, and the errors naming the column and row."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from binarsity_stats.design._column_access import (
    _check_choice,
    _fixed_point,
    as_columns,
    check_binarizer_n_bins,
    date_levels,
    from_fixed,
    is_datetime_like,
    raise_bad_value,
)

# ---------------------------------------------------------------- arguments


def test_check_binarizer_n_bins_one_or_one_per_feature():
    np.testing.assert_array_equal(check_binarizer_n_bins(5, 3, "error"), [5, 5, 5])
    out = check_binarizer_n_bins([2, 7], 2, "error")
    assert out.dtype == np.int64 and out.tolist() == [2, 7]
    with pytest.raises(ValueError, match=r"^n_bins has 3 entries but X has 2 features"):
        check_binarizer_n_bins([2, 3, 4], 2, "error")
    with pytest.raises((ValueError, TypeError), match=r"n_bins\[1\]"):
        check_binarizer_n_bins([2, 1], 2, "error")
    with pytest.raises((ValueError, TypeError), match=r"n_bins"):
        check_binarizer_n_bins("5", 2, "error")


def test_check_choice_names_the_argument():
    assert _check_choice("quantile", "method", ("quantile", "uniform")) == "quantile"
    with pytest.raises(ValueError, match=r"^method must be one of \['quantile', 'uniform'\], got 'q'"):
        _check_choice("q", "method", ("quantile", "uniform"))


# ---------------------------------------------------------------- fixed-point weights


def test_fixed_point_sums_are_exact_and_order_free():
    rng = np.random.default_rng(0)
    w = rng.uniform(0, 3, 1000)
    q, shift = _fixed_point(w)
    assert q.dtype == np.int64 and int(q.sum()) < 2**61
    # each weight is represented to the resolution n·max(w)·2**-61 (relative to the total)
    resolution = 2.0**-shift
    assert np.max(np.abs(from_fixed(q, shift) - w)) <= 0.5 * resolution
    assert resolution <= 1000 * w.max() * 2.0**-60
    # integer sums do not depend on the order of the rows; float sums may
    perm = rng.permutation(1000)
    assert int(q[perm].sum()) == int(q.sum())
    # and the sum converts back to within n half-resolutions of the exact rational sum
    exact = sum(Fraction(float(v)) for v in w)
    assert abs(Fraction(float(from_fixed(q.sum(), shift))) - exact) <= 1000 * Fraction(resolution) / 2


@pytest.mark.parametrize("scale", [2.0**-990, 1.0, 2.0**990])
def test_fixed_point_is_invariant_to_a_power_of_two_scale_of_the_weights(scale):
    w = np.array([1.0, 0.5, 0.25, 3.0])
    q1, s1 = _fixed_point(w)
    q2, s2 = _fixed_point(w * scale)
    if scale == 1.0:
        assert s1 == s2
    # the same integers (the binning's decisions are taken on them), another shift
    np.testing.assert_array_equal(q1, q2)
    assert s2 - s1 == -round(np.log2(scale))
    np.testing.assert_allclose(from_fixed(q2, s2), w * scale, rtol=1e-15)


# ---------------------------------------------------------------- arrays


def test_float_arrays_are_read_without_a_copy():
    X = np.asfortranarray(np.arange(12.0).reshape(4, 3))
    cols = as_columns(X)
    assert (cols.n_samples, cols.n_features, cols.names) == (4, 3, None)
    assert cols.matrix is X and np.shares_memory(cols.get(1), X)
    np.testing.assert_array_equal(cols.get(2), X[:, 2])
    assert cols.label(2) == "column 2"
    X32 = np.ones((2, 2), dtype=np.float32)
    assert as_columns(X32).get(0).dtype == np.float32


def test_integer_bool_and_object_arrays_are_read_as_float64():
    cols = as_columns(np.array([[1, 2], [3, 4]], dtype=np.int16))
    assert cols.matrix is None and cols.get(1).dtype == np.float64
    np.testing.assert_array_equal(cols.rows(0, 1), [[1.0, 2.0]])
    cols = as_columns(np.array([[1, None], [2.5, 3]], dtype=object))
    np.testing.assert_array_equal(cols.get(1), [np.nan, 3.0])
    with pytest.raises(TypeError, match=r"^column 1 holds a non-numeric value 'x' \(str\) at row 0"):
        as_columns(np.array([[1, "x"], [2, 3]], dtype=object))
    with pytest.raises(TypeError, match=r"^column 1 holds a non-numeric value 'b'"):
        as_columns([[1, "b"]])  # a list with text: the offending column is located


@pytest.mark.parametrize(
    ("X", "error", "pattern"),
    [
        (np.zeros(3), ValueError, r"^X must be 2-D \(n_samples, n_features\), got a 1-D input"),
        (pd.Series([1.0, 2.0]), ValueError, r"got a 1-D input"),
        (np.zeros((2, 2, 2)), ValueError, r"^X must be 2-D \(n_samples, n_features\), got 3-D"),
        (np.zeros((3, 0)), ValueError, r"^Found array with 0 feature\(s\) \(shape=\(3, 0\)\)"),
        (sp.csr_matrix(np.eye(2)), TypeError, r"^Sparse input is not supported"),
        (np.zeros((2, 2), dtype="M8[D]"), TypeError, r"^column 0 has dtype datetime64\[D\]"),
        (np.zeros((2, 2), dtype=complex), ValueError, r"^Complex data not supported"),
        (np.array([["a", "b"]]), TypeError, r"^column 0 has non-numeric dtype <U1"),
    ],
)
def test_bad_arrays_are_refused(X, error, pattern):
    with pytest.raises(error, match=pattern):
        as_columns(X)


# ---------------------------------------------------------------- DataFrames


def test_frames_are_read_column_by_column_by_name():
    X = pd.DataFrame({"a": [1.0, 2.0], "b": pd.array([1, None], dtype="Int64"), "c": [True, False]})
    cols = as_columns(X)
    assert cols.names.tolist() == ["a", "b", "c"] and cols.matrix is None
    np.testing.assert_array_equal(cols.get(1), [1.0, np.nan])
    np.testing.assert_array_equal(cols.get(2), [1.0, 0.0])
    assert cols.label(0) == "column 'a'"
    # select: the fitted names, in their order, other columns ignored
    cols = as_columns(X.assign(extra=0.0), select=np.array(["c", "a"], dtype=object))
    assert cols.names.tolist() == ["c", "a"]
    np.testing.assert_array_equal(cols.get(1), [1.0, 2.0])


@pytest.mark.parametrize(
    ("X", "select", "error", "pattern"),
    [
        (pd.DataFrame([[1.0, 2.0]], columns=["a", "a"]), None, ValueError, r"^X has duplicated column names \['a'\]"),
        (pd.DataFrame({"a": [1.0]}), ["a", "b"], ValueError, r"^X lacks column\(s\) \['b'\] seen in fit"),
        (pd.DataFrame([[1.0, 2.0]], columns=["a", "a"]), ["a"], ValueError, r"^column 'a' appears more than once in X"),
        (pd.DataFrame(index=[0, 1]), None, ValueError, r"^Found array with 0 feature"),
        (pd.DataFrame({"g": pd.Categorical(["x"])}), None, TypeError, r"^column 'g' is categorical: bins are for continuous features"),
        (pd.DataFrame({"t": pd.to_datetime(["2024-01-01"])}), None, TypeError, r"^column 't' has datetime-like dtype"),
        (pd.DataFrame({"s": pd.array(["x"], dtype="string")}), None, TypeError, r"^column 's' has non-numeric dtype string"),
    ],
)
def test_bad_frames_are_refused_naming_the_column(X, select, error, pattern):
    with pytest.raises(error, match=pattern):
        as_columns(X, None if select is None else np.asarray(select, dtype=object))


def test_object_frame_columns_refuse_text_on_read():
    cols = as_columns(pd.DataFrame({"o": np.array([1, "1.5"], dtype=object)}))
    with pytest.raises(TypeError, match=r"^column 'o' holds a non-numeric value '1\.5'"):
        cols.get(0)


# ---------------------------------------------------------------- dates and messages


def test_date_levels_are_iso_text_per_value():
    s = pd.Series([pd.Timestamp("2024-01-31"), pd.Timestamp("2024-01-31 12:30"), pd.NaT])
    out = date_levels(s)
    assert out.iloc[0] == "2024-01-31" and out.iloc[1] == "2024-01-31T12:30:00"
    assert pd.isna(out.iloc[2]) and out.dtype == object
    tz = pd.Series(pd.to_datetime(["2024-01-31"]).tz_localize("Europe/Paris"))
    assert date_levels(tz).iloc[0] == "2024-01-31T00:00:00+01:00"


def test_is_datetime_like():
    assert is_datetime_like(np.dtype("M8[ns]")) and is_datetime_like(np.dtype("m8[s]"))
    assert is_datetime_like(pd.PeriodDtype("D")) and is_datetime_like(pd.DatetimeTZDtype(tz="UTC"))
    assert not is_datetime_like(np.dtype(float)) and not is_datetime_like(object)


def test_raise_bad_value_names_label_and_row():
    with pytest.raises(ValueError, match=r"^column 'x' has a missing value \(NaN\) at row 3\. Impute it, or use"):
        raise_bad_value(np.nan, "column 'x'", 3)
    with pytest.raises(ValueError, match=r"at row 3, but it had none in training"):
        raise_bad_value(np.nan, "column 'x'", 3, fitted=True)
    with pytest.raises(ValueError, match=r"^column 'x' has an infinite value \(-inf\) at row 0"):
        raise_bad_value(-np.inf, "column 'x'", 0)
