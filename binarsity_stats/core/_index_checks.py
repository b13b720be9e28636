"""Checks of the index arrays the kernels index memory with (block pointers, codes) and
the code dtype of a number of levels: part of ``_validation`` (which re-exports them),
kept apart because the kernels' memory safety rests on them alone.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "check_block_ptr",
    "check_codes",
    "code_dtype",
    "MAX_LEVELS",
]


#: Largest number of levels of one block that the uint16 codes can hold.
MAX_LEVELS = 65536

# --------------------------------------------------------------------------- index arrays
# (block pointers, codes: whatever a kernel will use to index memory)
#
# The kernels index θ, histograms and work buffers by ``block_ptr[j] + code`` without
# bounds checks. Everything they index with goes through these two functions first.
# Values are compared only after a *safe* conversion to the signed index type: an
# unsigned array wraps in its own dtype (np.diff of uint8 [0, 200, 5] is [200, 61]) and
# a uint64 ≥ 2**63 wraps to a negative index when cast.

_INDEX_MAX = int(np.iinfo(np.intp).max)


def check_block_ptr(
    block_ptr: ArrayLike,
    end: int | None = None,
    *,
    n_blocks: int | None = None,
    name: str = "block_ptr",
    end_name: str | None = None,
) -> NDArray[np.intp]:
    """Validate CSR block offsets and return them as a new C-contiguous intp array.

    The offsets must be integers (bool, float, complex, object and text dtypes are
    refused by name), 1-D with at least one entry, start at 0, be strictly
    increasing (no empty block) and end at ``end``; so every entry lies in
    [0, end]. The comparisons are made on values converted safely to intp: an
    unsigned value that does not fit is refused before any cast. The result is
    always a copy, so a caller mutating its own array cannot change the offsets
    between this check and the kernel that uses them.

    Parameters
    ----------
    block_ptr : array_like of int, shape (p + 1,)
        The offsets.
    end : int, optional
        The required last entry (the number of coefficients d). None: any last
        entry (it then defines d).
    n_blocks : int, optional
        The required number of blocks p (length p + 1).
    name : str, default="block_ptr"
        The argument's name in error messages.
    end_name : str, optional
        How ``end`` is described in the message, e.g. ``"len(v)"``.

    Returns
    -------
    ndarray of intp, shape (p + 1,)
        The validated offsets (a new array).

    Raises
    ------
    TypeError
        If the dtype is not an integer dtype.
    ValueError
        If the shape or a value is out of the rules above.
    """
    arr = np.asarray(block_ptr)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{name} must be an array of integers, got dtype {arr.dtype}")
    if arr.ndim != 1 or arr.shape[0] < 1:
        raise ValueError(f"{name} must be 1-D with at least one entry, got shape {arr.shape}")
    if n_blocks is not None and arr.shape[0] != n_blocks + 1:
        raise ValueError(
            f"{name} must have length n_blocks + 1 = {n_blocks + 1}, got {arr.shape[0]}"
        )
    if arr.dtype.kind == "u" and arr.dtype.itemsize >= np.dtype(np.intp).itemsize:
        top = int(arr.max())
        if top > _INDEX_MAX:
            raise ValueError(f"{name} has an entry {top} too large for an index (> 2**63 - 1)")
    ptr = np.array(arr, dtype=np.intp, order="C", copy=True)
    if ptr[0] != 0:
        raise ValueError(f"{name} must start at 0, got {int(ptr[0])}")
    if end is not None and ptr[-1] != end:
        what = f"{end_name} = {end}" if end_name else f"{end}"
        raise ValueError(f"{name} must end at {what}, got {int(ptr[-1])}")
    if ptr.shape[0] > 1 and np.any(ptr[1:] <= ptr[:-1]):
        raise ValueError(f"{name} must be strictly increasing (no empty blocks)")
    return ptr


def check_codes(
    codes: ArrayLike, block_ptr: NDArray[np.intp], *, name: str = "codes"
) -> np.ndarray:
    """Validate level codes against their blocks; return them as uint8/uint16, C order.

    ``codes[j, i]`` is the level of row i in block j; the kernels read
    ``theta[block_ptr[j] + codes[j, i]]``, so every code must be below its block's
    size ``block_ptr[j + 1] - block_ptr[j]``. uint8 and uint16 codes are used as they
    are (no copy when C-contiguous); other integer, bool or whole-number float codes
    in [0, 65535] are converted to the narrowest of the two.

    Parameters
    ----------
    codes : array_like of shape (p, n)
        The codes, one row per block.
    block_ptr : ndarray of intp, shape (p + 1,)
        Offsets already validated by :func:`check_block_ptr` (its length is not
        checked against ``codes`` here when it is the caller's to report).
    name : str, default="codes"
        The argument's name in error messages.

    Returns
    -------
    ndarray of uint8 or uint16, shape (p, n), C-contiguous

    Raises
    ------
    TypeError
        If the codes are not numbers.
    ValueError
        If they are not 2-D, not whole numbers in [0, 65535], there is not one row
        per block, or a code reaches its block's size.
    """
    arr = np.asarray(codes)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_blocks, n_samples); got shape {arr.shape}.")
    if arr.dtype not in (np.uint8, np.uint16):
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"{name} must be integers; got dtype {arr.dtype}.")
        if arr.dtype.kind == "f" and arr.size:
            if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
                raise ValueError(f"{name} must be whole numbers (no NaN or fractions).")
        if arr.size and (arr.min() < 0 or arr.max() > np.iinfo(np.uint16).max):
            raise ValueError(f"{name} must be integers in [0, 65535].")
        arr = arr.astype(code_dtype(int(arr.max()) + 1 if arr.size else 1))
    arr = np.ascontiguousarray(arr)
    p, n = arr.shape
    if block_ptr.shape != (p + 1,):
        raise ValueError(
            f"{name} has {p} block(s) but block_ptr describes {block_ptr.shape[0] - 1}."
        )
    if p and n:
        top = arr.max(axis=1)
        sizes = np.diff(block_ptr)
        bad = np.flatnonzero(top >= sizes)
        if bad.size:
            j = int(bad[0])
            raise ValueError(
                f"{name} of block {j} reach {int(top[j])} but the block has {int(sizes[j])} levels."
            )
    return arr


def code_dtype(n_levels: int) -> type:
    """The narrowest unsigned integer type holding codes of ``n_levels`` levels.

    Codes of a block with at most 256 levels are uint8, up to 65536 uint16
    (design.md §3). The one place where the code dtype is chosen.

    Parameters
    ----------
    n_levels : int
        Number of levels of the largest block.

    Returns
    -------
    type
        ``np.uint8`` or ``np.uint16``.

    Raises
    ------
    ValueError
        Beyond 65536 levels.
    """
    if n_levels <= 256:
        return np.uint8
    if n_levels <= MAX_LEVELS:
        return np.uint16
    raise ValueError(f"a block has {n_levels} levels; the uint16 codes hold at most {MAX_LEVELS}.")
