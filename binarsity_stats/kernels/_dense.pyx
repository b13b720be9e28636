# cython: language_level=3
"""Deterministic, single-threaded reductions for the unpenalised dense columns.

BLAS matrix-vector products on a tall (n, q) matrix with q small are dominated by
thread start-up on a busy machine and may sum in an order that depends on the thread
count; these loops sum in row order, release the GIL and cost one pass over the data.
"""

cimport cython


def dot(const double[::1] a, const double[::1] b):
    """Σ_i a_i b_i.  NumPy: ``float(a @ b)``."""
    cdef Py_ssize_t i, n = a.shape[0]
    cdef double acc = 0.0
    with nogil:
        for i in range(n):
            acc += a[i] * b[i]
    return acc


def columns_dot(const double[::1, :] U, const double[::1] z, double[::1] out):
    """``out[k] = Σ_i U[i, k] z[i]`` for every column.  NumPy: ``out[:] = U.T @ z``."""
    cdef Py_ssize_t i, k, n = U.shape[0], q = U.shape[1]
    cdef double acc
    with nogil:
        for k in range(q):
            acc = 0.0
            for i in range(n):
                acc += U[i, k] * z[i]
            out[k] = acc


def weighted_gram(const double[::1, :] U, const double[::1] h, double[:, ::1] out):
    """``out = Uᵀ diag(h) U``.  NumPy: ``out[:] = U.T @ (h[:, None] * U)``."""
    cdef Py_ssize_t i, a, b, n = U.shape[0], q = U.shape[1]
    cdef double acc
    with nogil:
        for a in range(q):
            for b in range(a, q):
                acc = 0.0
                for i in range(n):
                    acc += U[i, a] * h[i] * U[i, b]
                out[a, b] = acc
                out[b, a] = acc


def add_columns(const double[::1, :] U, const double[::1] step, const double[::1] h,
                double[::1] z, double[::1] delta_eta):
    """``m = U @ step``; ``z += h * m``; ``delta_eta += m`` in one pass.

    NumPy: ``m = U @ step; z += h * m; delta_eta += m``.
    """
    cdef Py_ssize_t i, k, n = U.shape[0], q = U.shape[1]
    cdef double m
    with nogil:
        for i in range(n):
            m = 0.0
            for k in range(q):
                m += U[i, k] * step[k]
            z[i] += h[i] * m
            delta_eta[i] += m


def matvec_add(const double[::1, :] U, const double[::1] step, double[::1] out):
    """``out += U @ step`` in row order.  NumPy: ``out += U @ step``."""
    cdef Py_ssize_t i, k, n = U.shape[0], q = U.shape[1]
    cdef double m
    with nogil:
        for i in range(n):
            m = 0.0
            for k in range(q):
                m += U[i, k] * step[k]
            out[i] += m


def quadratic_model(const double[::1] r, const double[::1] h, const double[::1] d):
    """Σ_i r_i d_i + ½ h_i d_i², the local quadratic model of the loss.

    NumPy: ``float(r @ d + 0.5 * (h * d) @ d)``.
    """
    cdef Py_ssize_t i, n = r.shape[0]
    cdef double acc = 0.0
    with nogil:
        for i in range(n):
            acc += d[i] * (r[i] + 0.5 * h[i] * d[i])
    return acc
