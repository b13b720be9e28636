# cython: language_level=3
"""Per-bin histograms and gathers over the compact bin-code layout (design.md §3).

The one-hot matrix X^B of a block is never built: with ``codes`` the column of bin
codes of one feature,

* ``X^B θ`` is a gather:     ``eta[i] += theta[codes[i]]``
* ``(X^B)ᵀ r`` is a histogram: ``out[codes[i]] += r[i]``

These kernels are deliberately free of global state and of any knowledge of the
solver, so that a distributed backend can run them per data partition and add up the
partial histograms. Their only caller in the package is ``_design.BinnedDesign`` (the
Python driver), which validates that every code is below its block's size.
"""

cimport cython
from libc.stdint cimport uint8_t, uint16_t

ctypedef fused code_t:
    uint8_t
    uint16_t


def bin_sums(const code_t[::1] codes, const double[::1] values, double[::1] out):
    """Accumulate ``out[codes[i]] += values[i]`` (a weighted histogram).

    NumPy equivalent: ``out += np.bincount(codes, weights=values, minlength=len(out))``.
    ``out`` is not zeroed: partial histograms of data partitions add up.
    """
    cdef Py_ssize_t i, n = codes.shape[0]
    with nogil:
        for i in range(n):
            out[codes[i]] += values[i]


def bin_sums2(const code_t[::1] codes, const double[::1] values_a,
              const double[::1] values_b, double[::1] out_a, double[::1] out_b):
    """Two histograms in one pass: ``out_a[c] += values_a``, ``out_b[c] += values_b``.

    NumPy equivalent: two ``np.bincount(codes, weights=...)`` calls.
    """
    cdef Py_ssize_t i, n = codes.shape[0]
    cdef code_t c
    with nogil:
        for i in range(n):
            c = codes[i]
            out_a[c] += values_a[i]
            out_b[c] += values_b[i]


def pair_sums2(const code_t[::1] codes_a, const code_t[::1] codes_b, Py_ssize_t n_b,
               const double[::1] values_a, const double[::1] values_b,
               double[::1] out_a, double[::1] out_b):
    """Two histograms of the cells of a pair of features in one pass over their codes.

    ``out_a[c_a·n_b + c_b] += values_a``, ``out_b[c_a·n_b + c_b] += values_b``: the
    K_a × K_b tables (flat, row-major) of a pair term's grid (design.md §10), e.g. the
    working gradient and the weights for pair screening. NumPy equivalent: two
    ``np.bincount(codes_a * n_b + codes_b, weights=...)`` calls. The driver checks that
    every code is below its axis' size and the outputs hold K_a · n_b cells.
    """
    cdef Py_ssize_t i, c, n = codes_a.shape[0]
    with nogil:
        for i in range(n):
            c = <Py_ssize_t>codes_a[i] * n_b + <Py_ssize_t>codes_b[i]
            out_a[c] += values_a[i]
            out_b[c] += values_b[i]


def bin_counts(const code_t[::1] codes, double[::1] out):
    """Count rows per bin: ``out[codes[i]] += 1``.

    NumPy equivalent: ``out += np.bincount(codes, minlength=len(out))``.
    """
    cdef Py_ssize_t i, n = codes.shape[0]
    with nogil:
        for i in range(n):
            out[codes[i]] += 1.0


def gather_add(const code_t[::1] codes, const double[::1] table, double[::1] out):
    """Gather a block's levels into a row vector: ``out[i] += table[codes[i]]``.

    NumPy equivalent: ``out += table[codes]``.
    """
    cdef Py_ssize_t i, n = codes.shape[0]
    with nogil:
        for i in range(n):
            out[i] += table[codes[i]]


def gather_add_all(const code_t[:, ::1] codes, const Py_ssize_t[::1] block_ptr,
                   const double[::1] theta, double[::1] out):
    """``out[i] += Σ_j theta[block_ptr[j] + codes[j, i]]``: the full ``X^B θ``.

    NumPy equivalent: ``out += sum(theta[block_ptr[j] + codes[j]] for j)``.
    """
    cdef Py_ssize_t i, j, start, n = codes.shape[1], p = codes.shape[0]
    with nogil:
        for j in range(p):
            start = block_ptr[j]
            for i in range(n):
                out[i] += theta[start + codes[j, i]]


def bin_sums_all(const code_t[:, ::1] codes, const Py_ssize_t[::1] block_ptr,
                 const double[::1] values, double[::1] out):
    """All blocks' histograms: ``out[block_ptr[j] + codes[j, i]] += values[i]``.

    NumPy equivalent: ``(X^B)ᵀ values`` block by block with ``np.bincount``.
    """
    cdef Py_ssize_t i, j, start, n = codes.shape[1], p = codes.shape[0]
    with nogil:
        for j in range(p):
            start = block_ptr[j]
            for i in range(n):
                out[start + codes[j, i]] += values[i]


def bin_sums2_all(const code_t[:, ::1] codes, const Py_ssize_t[::1] block_ptr,
                  const double[::1] values_a, const double[::1] values_b,
                  double[::1] out_a, double[::1] out_b):
    """Two full histograms in one pass over the codes (gradient and Hessian sums).

    NumPy equivalent: ``bin_sums_all(codes, block_ptr, values_a, out_a)`` and the same
    for ``values_b``/``out_b``.
    """
    cdef Py_ssize_t i, j, k, n = codes.shape[1], p = codes.shape[0]
    with nogil:
        for j in range(p):
            for i in range(n):
                k = block_ptr[j] + codes[j, i]
                out_a[k] += values_a[i]
                out_b[k] += values_b[i]


def gather_add_blocks(const code_t[:, ::1] codes, const Py_ssize_t[::1] block_ptr,
                      const Py_ssize_t[::1] blocks, const double[::1] theta,
                      double[::1] out):
    """``out[i] += Σ_{j in blocks} theta[block_ptr[j] + codes[j, i]]`` (a subset of X^B θ).

    NumPy equivalent: ``out += sum(theta[block_ptr[j] + codes[j]] for j in blocks)``.
    """
    cdef Py_ssize_t i, a, j, start, n = codes.shape[1]
    with nogil:
        for a in range(blocks.shape[0]):
            j = blocks[a]
            start = block_ptr[j]
            for i in range(n):
                out[i] += theta[start + codes[j, i]]
