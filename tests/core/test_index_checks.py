"""Unit tests of ``binarsity_stats.core._index_checks``: the index arrays the kernels
read memory with (block pointers, level codes) and the code dtype.

The kernels index ``theta[block_ptr[j] + codes[j, i]]`` without bounds checks, so each
rule is tested at its boundary: the last value accepted and the first refused.
"""

from __future__ import annotations

import numpy as np
import pytest

from binarsity_stats.core._index_checks import MAX_LEVELS, check_block_ptr, check_codes, code_dtype

# ---------------------------------------------------------------- check_block_ptr


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8, np.uint16, np.uint64])
def test_check_block_ptr_returns_an_intp_copy(dtype):
    src = np.array([0, 3, 5, 9], dtype=dtype)
    out = check_block_ptr(src, 9, n_blocks=3)
    assert out.dtype == np.intp and out.flags.c_contiguous
    np.testing.assert_array_equal(out, [0, 3, 5, 9])
    assert not np.shares_memory(out, src)
    src[1] = 7  # the caller's array changes; the checked offsets do not
    assert out[1] == 3


def test_check_block_ptr_single_entry_is_zero_blocks():
    np.testing.assert_array_equal(check_block_ptr([0], 0), [0])


def test_check_block_ptr_without_end_accepts_any_last_entry():
    np.testing.assert_array_equal(check_block_ptr([0, 2, 11]), [0, 2, 11])


@pytest.mark.parametrize("value", [np.array([0.0, 2.0]), np.array([False, True]), np.array(["0", "2"]),
                                   np.array([0, 2], dtype=object)])
def test_check_block_ptr_refuses_non_integer_dtypes_by_name(value):
    with pytest.raises(TypeError, match=r"^bp must be an array of integers, got dtype"):
        check_block_ptr(value, name="bp")


@pytest.mark.parametrize(
    ("value", "kw", "pattern"),
    [
        (np.zeros((2, 2), dtype=int), {}, r"^bp must be 1-D with at least one entry, got shape \(2, 2\)"),
        (np.zeros(0, dtype=int), {}, r"^bp must be 1-D with at least one entry, got shape \(0,\)"),
        ([0, 2, 4], {"n_blocks": 3}, r"^bp must have length n_blocks \+ 1 = 4, got 3"),
        ([1, 2, 4], {}, r"^bp must start at 0, got 1"),
        ([0, 2, 4], {"end": 5}, r"^bp must end at 5, got 4"),
        ([0, 2, 4], {"end": 5, "end_name": "len(v)"}, r"^bp must end at len\(v\) = 5, got 4"),
        ([0, 2, 2, 4], {}, r"^bp must be strictly increasing \(no empty blocks\)"),
        ([0, 3, 2, 4], {}, r"^bp must be strictly increasing"),
    ],
)
def test_check_block_ptr_refuses_bad_shapes_and_values_by_name(value, kw, pattern):
    with pytest.raises(ValueError, match=pattern):
        check_block_ptr(np.asarray(value), name="bp", **kw)


def test_check_block_ptr_unsigned_values_do_not_wrap():
    # uint8 [0, 200, 5]: np.diff in uint8 would be [200, 61] (both "positive")
    with pytest.raises(ValueError, match="strictly increasing"):
        check_block_ptr(np.array([0, 200, 5], dtype=np.uint8))
    # a uint64 beyond intp's range would become negative when cast
    with pytest.raises(ValueError, match=r"too large for an index"):
        check_block_ptr(np.array([0, 2**63 + 5], dtype=np.uint64))
    top = np.iinfo(np.intp).max
    np.testing.assert_array_equal(check_block_ptr(np.array([0, top], dtype=np.uint64)), [0, top])


# ---------------------------------------------------------------- check_codes

BP = np.array([0, 3, 8], dtype=np.intp)  # blocks of 3 and 5 levels


def test_check_codes_uint8_c_contiguous_is_used_as_is():
    codes = np.array([[0, 1, 2], [4, 0, 3]], dtype=np.uint8)
    out = check_codes(codes, BP)
    assert out is codes or np.shares_memory(out, codes)
    assert out.dtype == np.uint8


def test_check_codes_fortran_order_becomes_c_order():
    codes = np.asfortranarray(np.array([[0, 1, 2], [4, 0, 3]], dtype=np.uint16))
    out = check_codes(codes, BP)
    assert out.flags.c_contiguous and out.dtype == np.uint16
    np.testing.assert_array_equal(out, codes)


@pytest.mark.parametrize("dtype", [np.int64, np.float64, np.int8, bool])
def test_check_codes_converts_other_numbers_to_the_narrowest_code_dtype(dtype):
    codes = np.array([[0, 1, 1], [1, 0, 1]], dtype=dtype)
    out = check_codes(codes, BP)
    assert out.dtype == np.uint8
    np.testing.assert_array_equal(out, codes.astype(int))


def test_check_codes_wide_values_become_uint16():
    bp = np.array([0, 400], dtype=np.intp)
    codes = np.array([[0, 399, 256]], dtype=np.int64)
    out = check_codes(codes, bp)
    assert out.dtype == np.uint16
    np.testing.assert_array_equal(out, codes)


@pytest.mark.parametrize(
    ("codes", "error", "pattern"),
    [
        (np.zeros(3, dtype=np.uint8), ValueError, r"^cd must be 2-D \(n_blocks, n_samples\); got shape \(3,\)"),
        (np.array([["a", "b"], ["c", "d"]]), TypeError, r"^cd must be integers; got dtype"),
        (np.array([[0.0, 0.5], [0.0, 1.0]]), ValueError, r"^cd must be whole numbers"),
        (np.array([[0.0, np.nan], [0.0, 1.0]]), ValueError, r"^cd must be whole numbers"),
        (np.array([[0, -1], [0, 1]]), ValueError, r"^cd must be integers in \[0, 65535\]"),
        (np.array([[0, 65536], [0, 1]]), ValueError, r"^cd must be integers in \[0, 65535\]"),
        (np.zeros((3, 2), dtype=np.uint8), ValueError, r"^cd has 3 block\(s\) but block_ptr describes 2"),
        (np.array([[0, 3], [0, 4]], dtype=np.uint8), ValueError, r"^cd of block 0 reach 3 but the block has 3 levels"),
        (np.array([[0, 2], [5, 4]], dtype=np.int32), ValueError, r"^cd of block 1 reach 5 but the block has 5 levels"),
    ],
)
def test_check_codes_refuses_by_name(codes, error, pattern):
    with pytest.raises(error, match=pattern):
        check_codes(codes, BP, name="cd")


def test_check_codes_last_level_of_each_block_is_accepted():
    codes = np.array([[2, 0], [4, 4]], dtype=np.uint8)
    np.testing.assert_array_equal(check_codes(codes, BP), codes)


def test_check_codes_every_code_indexes_inside_its_block():
    # independent brute force: each block_ptr[j] + code lies in [block_ptr[j], block_ptr[j+1])
    rng = np.random.default_rng(1)
    sizes = rng.integers(1, 300, size=6)
    bp = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
    codes = np.stack([rng.integers(0, s, size=50) for s in sizes])
    out = check_codes(codes, bp)
    for j in range(len(sizes)):
        idx = bp[j] + out[j].astype(np.intp)
        assert np.all((idx >= bp[j]) & (idx < bp[j + 1]))
    bad = codes.copy()
    bad[3, 7] = sizes[3]
    with pytest.raises(ValueError, match=f"of block 3 reach {sizes[3]}"):
        check_codes(bad, bp)


def test_check_codes_empty_rows_are_fine():
    out = check_codes(np.zeros((2, 0), dtype=np.int64), BP)
    assert out.shape == (2, 0) and out.dtype == np.uint8


# ---------------------------------------------------------------- code_dtype


@pytest.mark.parametrize(
    ("n_levels", "dtype"), [(1, np.uint8), (256, np.uint8), (257, np.uint16), (MAX_LEVELS, np.uint16)]
)
def test_code_dtype_boundaries(n_levels, dtype):
    assert code_dtype(n_levels) is dtype
    # the largest code fits without wrapping
    assert int(np.array(n_levels - 1).astype(dtype)) == n_levels - 1


def test_code_dtype_refuses_more_than_max_levels():
    assert MAX_LEVELS == np.iinfo(np.uint16).max + 1
    with pytest.raises(ValueError, match=r"a block has 65537 levels; the uint16 codes hold at most 65536"):
        code_dtype(MAX_LEVELS + 1)
