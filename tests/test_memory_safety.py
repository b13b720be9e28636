"""Memory safety: every index array a kernel uses is validated first (issue 10).

The Cython kernels index θ, histograms and work buffers by ``block_ptr[j] + code``
without bounds checks. These tests hand every public and semi-public entry the index
arrays that used to get through (unsigned offsets that wrap in ``np.diff``, offsets
that wrap when cast, float/bool offsets silently truncated) and check for a clear
error naming the argument. Before the fix the unsigned cases crashed the interpreter
(SIGSEGV, heap corruption) or returned garbage.
"""

from __future__ import annotations

import numpy as np
import pytest

from binarsity_stats._penalty import BinarsityPenalty, block_suffix_sums, penalty_weights
from binarsity_stats._prox import paper_algorithm1, prox_binarsity
from binarsity_stats._solvers import Prepared, lambda_max, solve
from binarsity_stats._validation import check_block_ptr, check_codes

# offsets that pass a check made in their own (unsigned) dtype: np.diff wraps
WRAPPING = {
    "uint8": np.array([0, 200, 5], dtype=np.uint8),
    "uint16": np.array([0, 60000, 5], dtype=np.uint16),
    "uint32": np.array([0, 2**32 - 1, 5], dtype=np.uint32),
    "uint64": np.array([0, 2**64 - 1, 5], dtype=np.uint64),
}


@pytest.mark.parametrize("dtype", list(WRAPPING))
@pytest.mark.parametrize("counts", [None, np.arange(1.0, 6.0)])
def test_prox_binarsity_refuses_unsigned_offsets_that_wrap(dtype, counts):
    with pytest.raises(ValueError, match="block_ptr"):
        prox_binarsity(np.ones(5), WRAPPING[dtype], np.ones(5), counts=counts)
    with pytest.raises(ValueError, match="block_ptr"):
        paper_algorithm1(np.ones(5), WRAPPING[dtype], np.ones(5))


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32, np.uint64, np.int8])
def test_valid_offsets_of_any_integer_dtype_give_the_intp_result(dtype):
    v = np.array([3.0, -1.0, 2.0, 0.5, 4.0])
    ref = prox_binarsity(v, np.array([0, 2, 5]), np.ones(5), step=0.3)
    got = prox_binarsity(v, np.array([0, 2, 5], dtype=dtype), np.ones(5), step=0.3)
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize(
    ("ptr", "error", "match"),
    [
        (np.array([0.0, 2.0, 5.0]), TypeError, "block_ptr must be an array of integers"),
        (np.array([False, True, True]), TypeError, "block_ptr must be an array of integers"),
        (np.array([0, 2, 5], dtype=object), TypeError, "block_ptr must be an array of integers"),
        (np.array([0, 2 + 0j, 5]), TypeError, "block_ptr must be an array of integers"),
        (np.array([[0, 2, 5]]), ValueError, "block_ptr must be 1-D"),
        (np.array(5), ValueError, "block_ptr must be 1-D"),
        (np.array([0, -3, 5]), ValueError, "strictly increasing"),
        (np.array([0, 2**63 - 1, 5]), ValueError, "strictly increasing"),
        (np.array([0, 2**63, 5], dtype=np.uint64), ValueError, "too large for an index"),
    ],
)
def test_check_block_ptr_refuses_by_name(ptr, error, match):
    with pytest.raises(error, match=match):
        check_block_ptr(ptr, 5)
    with pytest.raises(error, match=match):
        prox_binarsity(np.ones(5), ptr, np.ones(5))


def test_check_block_ptr_returns_a_private_copy():
    ptr = np.array([0, 2, 5], dtype=np.intp)
    out = check_block_ptr(ptr, 5)
    assert out.dtype == np.intp and out.flags.c_contiguous
    assert not np.shares_memory(out, ptr)


@pytest.mark.parametrize("dtype", list(WRAPPING))
def test_penalty_helpers_refuse_wrapping_offsets(dtype):
    ptr = WRAPPING[dtype]
    with pytest.raises(ValueError, match="block_ptr"):
        penalty_weights("theory", np.ones(5), ptr)
    with pytest.raises(ValueError, match="block_ptr"):
        BinarsityPenalty(ptr, np.ones(5))
    with pytest.raises(ValueError, match="block_ptr"):
        block_suffix_sums(np.ones(5), ptr)


def test_penalty_helpers_check_lengths_and_chain():
    ptr = np.array([0, 2, 5])
    with pytest.raises(ValueError, match="block_ptr must end at len\\(values\\) = 4"):
        block_suffix_sums(np.ones(4), ptr)
    with pytest.raises(ValueError, match="weights must have length 5"):
        BinarsityPenalty(ptr, np.ones(3))
    with pytest.raises(ValueError, match="counts must have length 5"):
        BinarsityPenalty(ptr, np.ones(5), counts=np.ones(7))
    with pytest.raises(ValueError, match="chain_length"):
        penalty_weights("theory", np.ones(5), ptr, chain_length=np.array([2, 9]))
    with pytest.raises(ValueError, match="chain_length"):
        penalty_weights("theory", np.ones(5), ptr, chain_length=np.array([-1, 3]))
    with pytest.raises(TypeError, match="chain_length"):
        penalty_weights("theory", np.ones(5), ptr, chain_length=np.array([2.0, 3.0]))


_RNG = np.random.default_rng(3)
CODES = _RNG.integers(0, 4, size=(2, 40)).astype(np.uint8)
Y = _RNG.normal(size=40)


@pytest.mark.parametrize(
    "ptr",
    [
        np.array([0, 4.5, 8]),  # float: used to be truncated to [0, 4, 8] silently
        np.array([0, 4, 8], dtype=float),
        np.array([0, 2**64 - 4, 8], dtype=np.uint64),
        np.array([0, 4, 8], dtype=bool),
    ],
)
def test_engine_entries_refuse_bad_offsets(ptr):
    kw = {"penalty_weights": np.ones(8)}
    for call in (
        lambda: solve(CODES, ptr, Y, lam=0.1, **kw),
        lambda: Prepared(CODES, ptr, Y, **kw),
        lambda: lambda_max(CODES, ptr, Y, **kw),
    ):
        with pytest.raises((TypeError, ValueError), match="block_ptr"):
            call()


def test_engine_accepts_unsigned_offsets_that_fit():
    a = solve(CODES, np.array([0, 4, 8], dtype=np.uint8), Y, lam=0.01, penalty_weights=np.ones(8))
    b = solve(CODES, np.array([0, 4, 8]), Y, lam=0.01, penalty_weights=np.ones(8))
    np.testing.assert_array_equal(a.coef, b.coef)


def test_check_codes_bounds_every_block():
    ptr = np.array([0, 4, 6], dtype=np.intp)
    codes = np.array([[0, 3, 1], [1, 0, 2]], dtype=np.uint8)
    with pytest.raises(ValueError, match="codes of block 1 reach 2 but the block has 2 levels"):
        check_codes(codes, ptr)
    with pytest.raises(ValueError, match="codes has 1 block"):
        check_codes(codes[:1], ptr)
    assert check_codes(codes[:, :0], ptr).shape == (2, 0)
