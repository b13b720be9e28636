"""kernels/_binning.pyx: bin codes from cut points and the one-pass column scan.

(The agreement of each kernel with its NumPy twin of ``design/_binarizer`` on random
columns, dtypes and memory orders is in tests/design/test_binarizer.py.) Proved here:
bins are right-closed — a value equal to a cut point goes left — for float32 values
compared in double precision, both zeros and the extremes; codes past 255 levels go to
uint16; the flags point at the first bad value; every length or shape the kernels check
is refused by message before anything is written past a buffer.
"""

import numpy as np
import pytest

from binarsity_stats.kernels._binning import assign_codes, assign_codes_2d, compact_column

RNG = np.random.default_rng(0)


def test_a_value_on_a_cut_point_goes_left():
    edges = np.array([-1.0, 0.0, 0.5, 2.0])
    x = np.array([-1.0, -0.9999999999, -0.0, 0.0, 1e-300, 0.5, 2.0, 2.0000000001,
                  -np.finfo(float).max, np.finfo(float).max])  # fmt: skip
    out = np.empty(x.size, np.uint8)
    assert assign_codes(x, edges, out, -1) == -1
    np.testing.assert_array_equal(out, [0, 1, 1, 1, 2, 2, 3, 4, 0, 4])
    np.testing.assert_array_equal(out, np.searchsorted(edges, x, side="left"))


def test_float32_values_are_compared_in_double_precision():
    edges = np.array([0.1, np.float64(np.float32(0.1))])  # 0.1 < 0.1f in double
    x = np.array([np.float32(0.1)] * 3, dtype=np.float32)
    out = np.empty(3, np.uint8)
    assign_codes(x, edges, out, -1)
    np.testing.assert_array_equal(out, np.searchsorted(edges, x.astype(np.float64)))
    assert out[0] == 1  # above 0.1, equal to the second cut point: left of it


def test_many_levels_take_uint16_codes():
    edges = np.sort(RNG.standard_normal(999))
    x = RNG.standard_normal(5000) * 2
    out = np.empty(x.size, np.uint16)
    assert assign_codes(x, edges, out, 1000) == -1
    np.testing.assert_array_equal(out, np.searchsorted(edges, x))
    assert out.max() <= 999


def test_flags_point_at_the_first_bad_value():
    x = np.array([0.0, np.nan, 1.0, np.inf, np.nan])
    out = np.zeros(5, np.uint8)
    assert assign_codes(x, np.array([0.5]), out, 7) == 3  # NaN allowed: the inf
    assert out[1] == 7
    assert assign_codes(x, np.array([0.5]), out, -1) == 1  # NaN not allowed
    vals = np.full(5, -1.0)
    assert compact_column(np.array([3.0, np.nan, -0.0, -np.inf, 2.0]), vals) == (2, 3)
    assert vals[0] == 3.0 and vals[1] == 0.0 and not np.signbit(vals[1])


def test_lengths_and_shapes_are_checked():
    x = np.zeros(10)
    buf = np.full(20, 200, np.uint8)  # room past the view: a write past it would show
    with pytest.raises(ValueError, match="out must have the length of x"):
        assign_codes(x, np.array([0.5]), buf[:9], -1)
    assert np.all(buf == 200)
    with pytest.raises(ValueError, match="out is shorter than x"):
        compact_column(x, np.empty(9))
    X = np.zeros((6, 2))
    edges = np.array([0.5, 1.0, 2.0])
    ptr = np.array([0, 1, 3], np.intp)
    miss = np.array([-1, -1], np.intp)
    with pytest.raises(ValueError, match="out must have shape \\(p, n\\)"):
        assign_codes_2d(X, edges, ptr, miss, np.zeros((2, 5), np.uint8))
    with pytest.raises(ValueError, match="the rows of out must be contiguous"):
        assign_codes_2d(X, edges, ptr, miss, np.zeros((2, 12), np.uint8)[:, ::2])
    with pytest.raises(ValueError, match="edge_ptr and missing_code must describe p features"):
        assign_codes_2d(X, edges, ptr[:2], miss, np.zeros((2, 6), np.uint8))
    with pytest.raises(ValueError, match="edge_ptr points past the end of edges"):
        assign_codes_2d(X, edges, np.array([0, 1, 4], np.intp), miss, np.zeros((2, 6), np.uint8))
    with pytest.raises(ValueError, match="Buffer dtype mismatch"):
        assign_codes(x, np.array([0.5], np.float32), np.zeros(10, np.uint8), -1)


def test_a_column_slice_of_the_output_is_written_in_place():
    X = RNG.standard_normal((50, 2))
    edges = np.array([-0.5, 0.0, 0.5, -1.0, 1.0])
    ptr = np.array([0, 3, 5], np.intp)
    out = np.full((2, 80), 99, np.uint8)
    assert assign_codes_2d(X, edges, ptr, np.array([-1, -1], np.intp), out[:, 10:60]) == (-1, -1)
    np.testing.assert_array_equal(out[0, 10:60], np.searchsorted(edges[:3], X[:, 0]))
    np.testing.assert_array_equal(out[1, 10:60], np.searchsorted(edges[3:], X[:, 1]))
    assert np.all(out[:, :10] == 99) and np.all(out[:, 60:] == 99)
