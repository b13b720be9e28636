# cython: language_level=3
"""Kernels of the binarizer: bin codes from cut points, and the one-pass column scan.

A feature with interior cut points ``edges`` (strictly increasing, length d − 1) is cut
into d right-closed bins; bin k is ``(edges[k-1], edges[k]]`` and the code of a value x
is the number of cut points strictly below it:

    code(x) = np.searchsorted(edges, x, side="left")

* ``assign_codes``: codes of one column (a DataFrame column);
* ``assign_codes_2d``: codes of every feature of a matrix, row block by row block, so
  that a C-ordered X is read once rather than once per feature;
* ``compact_column``: the copy of a column's non-missing values that ``fit`` sorts,
  with the NaN / ±inf checks done in the same pass.

They hold no Python objects and no state; they are called only from the Python driver
in ``_binarizer.py``, which validates shapes, picks the missing-value codes and turns
the returned flags into errors that name the column. Inputs may be strided (read in
place, never copied). Each kernel has a NumPy twin in ``_binarizer.py``
(``_assign_codes_reference``, ``_assign_codes_2d_reference``,
``_compact_column_reference``) and a test that the two agree.
"""

from cython cimport floating
from libc.float cimport DBL_MAX
from libc.math cimport fabs
from libc.stdint cimport uint8_t, uint16_t

ctypedef fused code_t:
    uint8_t
    uint16_t


cdef enum:
    # Rows searched together: their binary searches are independent, so the CPU (or
    # the vectoriser, with gathers) overlaps them instead of waiting on each load.
    BLOCK = 32


cdef inline Py_ssize_t _lower_bound(const double* edges, Py_ssize_t m,
                                    double v) noexcept nogil:
    """Number of cut points strictly below ``v``: ``np.searchsorted(edges, v, "left")``.

    Branch-free binary search (Khuong & Morin, "Array layouts for comparison-based
    searching", 2017): the data-dependent step is a multiply, not a jump, so unsorted
    input costs no branch mispredictions. ``m`` may be 0.
    """
    cdef const double* base = edges
    cdef Py_ssize_t half
    if m == 0:
        return 0
    while m > 1:
        half = m >> 1
        # base = base + half if base[half] < v else base
        base += half * (base[half] < v)
        m -= half
    return (base - edges) + (base[0] < v)


cdef inline void _lower_bound_block(const double* edges, Py_ssize_t m, const double* v,
                                    Py_ssize_t* idx, Py_ssize_t nb) noexcept nogil:
    """``idx[b] = _lower_bound(edges, m, v[b])`` for ``b < nb``, searches interleaved.

    Every search takes the same sequence of halvings (it depends on m only), so the
    searches of a block advance in lock step. ``m`` must be at least 1.
    """
    cdef Py_ssize_t b, half
    for b in range(nb):
        idx[b] = 0
    while m > 1:
        half = m >> 1
        for b in range(nb):
            idx[b] += half * (edges[idx[b] + half] < v[b])
        m -= half
    for b in range(nb):
        idx[b] += edges[idx[b]] < v[b]


cdef Py_ssize_t _code_strided(const char* x, Py_ssize_t stride, Py_ssize_t n,
                              bint single, const double* edges, Py_ssize_t m,
                              Py_ssize_t missing_code, code_t* out) noexcept nogil:
    """Codes of the n values at ``x + i * stride`` (bytes) into ``out[:n]``.

    ``single``: the values are float32, else float64. Returns the index of the first
    value that is ±inf, or NaN while ``missing_code < 0``, else -1 (see
    ``assign_codes``). Values are read a block at a time; a block of finite values
    (nearly all of them) is searched with the interleaved binary search.
    """
    cdef Py_ssize_t i = 0, b, nb
    cdef double v
    cdef double vals[BLOCK]
    cdef Py_ssize_t idx[BLOCK]
    cdef bint finite
    while i < n:
        nb = min(<Py_ssize_t> BLOCK, n - i)
        finite = True
        for b in range(nb):
            if single:
                vals[b] = (<const float*> (x + (i + b) * stride))[0]
            else:
                vals[b] = (<const double*> (x + (i + b) * stride))[0]
            # fabs(v) <= DBL_MAX is false for NaN and ±inf alike.
            finite = finite & (fabs(vals[b]) <= DBL_MAX)
        if finite and m > 0:
            _lower_bound_block(edges, m, vals, idx, nb)
            for b in range(nb):
                out[i + b] = <code_t> idx[b]
        elif finite:
            for b in range(nb):
                out[i + b] = 0
        else:  # rare: a block holding NaN or ±inf, row by row
            for b in range(nb):
                v = vals[b]
                if fabs(v) <= DBL_MAX:
                    out[i + b] = <code_t> _lower_bound(edges, m, v)
                elif v != v and missing_code >= 0:
                    out[i + b] = <code_t> missing_code
                else:
                    return i + b
        i += nb
    return -1


def assign_codes(const floating[:] x, const double[::1] edges, code_t[::1] out,
                 Py_ssize_t missing_code):
    """Write the bin code of every ``x[i]`` into ``out[i]``.

    NumPy equivalent (for finite x)::

        out[:] = np.searchsorted(edges, x, side="left")
        out[np.isnan(x)] = missing_code

    Parameters
    ----------
    x : 1-D float32 or float64 memoryview, any stride
        Raw values of one feature.
    edges : 1-D float64 memoryview
        Strictly increasing interior cut points (may be empty: one bin).
    out : 1-D uint8 or uint16 memoryview of the same length as ``x``
        Receives the codes. Every code fits: the driver picks the dtype.
    missing_code : int
        Code written for NaN, or a negative number when NaN is not allowed.

    Returns
    -------
    int
        -1 when every value was coded; otherwise the index of the first value that
        is ±inf, or NaN while ``missing_code < 0``. The kernel stops there; ``out``
        is then only partly written and the driver raises.
    """
    cdef Py_ssize_t n = x.shape[0], m = edges.shape[0], bad = -1
    cdef const double* e = &edges[0] if m > 0 else NULL
    if out.shape[0] != n:
        raise ValueError("out must have the length of x")
    if n == 0:
        return -1
    with nogil:
        bad = _code_strided(<const char*> &x[0], x.strides[0], n, floating is float,
                            e, m, missing_code, &out[0])
    return bad


def assign_codes_2d(const floating[:, :] X, const double[::1] edges,
                    const Py_ssize_t[::1] edge_ptr, const Py_ssize_t[::1] missing_code,
                    code_t[:, :] out):
    """Code every feature of a matrix: ``out[j, i]`` is the code of ``X[i, j]``.

    NumPy equivalent::

        for j in range(p):
            e = edges[edge_ptr[j]:edge_ptr[j + 1]]
            out[j] = np.searchsorted(e, X[:, j], side="left")
            out[j, np.isnan(X[:, j])] = missing_code[j]

    Rows are taken in blocks of about 256 KiB and all features of a block are coded
    before the next: X is read once whatever its memory order, where coding a
    C-ordered matrix column by column would read every cache line p times.

    Parameters
    ----------
    X : 2-D float32 or float64 memoryview of shape (n, p), any strides
        Raw values.
    edges : 1-D float64 memoryview
        The cut points of all features, concatenated.
    edge_ptr : 1-D intp memoryview of length p + 1
        Feature j's cut points are ``edges[edge_ptr[j]:edge_ptr[j + 1]]``.
    missing_code : 1-D intp memoryview of length p
        Code for NaN per feature, negative when NaN is not allowed.
    out : 2-D uint8 or uint16 memoryview of shape (p, n), rows contiguous
        Receives the codes. Rows need not be adjacent: a column slice
        ``codes[:, i0:i1]`` of the full array is accepted.

    Returns
    -------
    (int, int)
        ``(-1, -1)`` when every value was coded; otherwise ``(i, j)`` of a value that
        is ±inf or a forbidden NaN (the first in block order); ``out`` is then only
        partly written and the driver raises.
    """
    cdef Py_ssize_t n = X.shape[0], p = X.shape[1]
    cdef Py_ssize_t i0, i1, j, bad = -1, bad_j = -1, rows
    cdef Py_ssize_t itemsize = sizeof(float) if floating is float else sizeof(double)
    cdef const double* e
    cdef const double* all_edges = &edges[0] if edges.shape[0] > 0 else NULL
    if out.shape[0] != p or out.shape[1] != n:
        raise ValueError("out must have shape (p, n)")
    if n > 1 and out.strides[1] != sizeof(code_t):
        raise ValueError("the rows of out must be contiguous")
    if edge_ptr.shape[0] != p + 1 or missing_code.shape[0] != p:
        raise ValueError("edge_ptr and missing_code must describe p features")
    if edge_ptr[p] > edges.shape[0]:
        raise ValueError("edge_ptr points past the end of edges")
    if n == 0 or p == 0:
        return -1, -1
    rows = max(<Py_ssize_t> BLOCK, (262144 // (p * itemsize)) // BLOCK * BLOCK)
    with nogil:
        i0 = 0
        while i0 < n and bad < 0:
            i1 = min(i0 + rows, n)
            for j in range(p):
                e = all_edges + edge_ptr[j] if all_edges != NULL else NULL
                bad = _code_strided(<const char*> &X[i0, j], X.strides[0], i1 - i0,
                                    floating is float, e, edge_ptr[j + 1] - edge_ptr[j],
                                    missing_code[j], &out[j, i0])
                if bad >= 0:
                    bad += i0
                    bad_j = j
                    break
            i0 = i1
    return bad, bad_j


def compact_column(const floating[:] x, double[::1] out):
    """Copy the non-NaN values of ``x`` into ``out`` as float64 and summarise them.

    NumPy equivalent::

        keep = ~np.isnan(x)
        n_valid = keep.sum(); out[:n_valid] = x[keep]
        first_inf = np.flatnonzero(np.isinf(x))[0] if np.isinf(x).any() else -1

    One pass and no temporaries, where the NumPy version makes three passes and two
    boolean masks of the column's length.

    Parameters
    ----------
    x : 1-D float32 or float64 memoryview, any stride
        Raw values of one feature.
    out : 1-D float64 memoryview with ``len(out) >= len(x)``
        Receives the non-NaN values, in row order, in ``out[:n_valid]``.

    Returns
    -------
    n_valid : int
        Number of non-NaN values copied.
    first_inf : int
        Index in ``x`` of the first ±inf, or -1. The scan stops there; ``n_valid``
        and ``out`` are then incomplete and the driver raises.
    """
    cdef Py_ssize_t i, n = x.shape[0], k = 0, first_inf = -1
    cdef double v
    if out.shape[0] < n:
        raise ValueError("out is shorter than x")
    with nogil:
        for i in range(n):
            v = x[i]
            if not (fabs(v) <= DBL_MAX):
                if v != v:
                    continue
                first_inf = i
                break
            # -0.0 + 0.0 == +0.0: the two zeros get one representation, so that the
            # cut points never depend on which zero a sort happened to put first.
            out[k] = v + 0.0
            k += 1
    return k, first_inf
