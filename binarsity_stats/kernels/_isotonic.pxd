# The monotone fused lasso by weighted isotonic regression (PAVA), design.md section 7.
#
# Problem (one block, the exact block step of a monotone chain):
#
#     min_theta  sum_k [ (w_k / 2) theta_k^2 - wy_k theta_k ]
#              + sum_{k linked} lam_k |theta_k - theta_{k-1}|
#     subject to  direction * (theta_k - theta_{k-1}) >= 0  on every linked edge k
#                 [and sum_k n_k theta_k = 0 when `constrained`]
#
# with w_k >= 0 (wy_k = w_k y_k for targets y), lam_k >= 0, direction = +1
# (non-decreasing) or -1 (non-increasing). An edge that is not linked (linked[k] = 0;
# linked == NULL: every k >= 1 is linked) decouples its two levels (no penalty, no
# order). O(K) per evaluation; never allocates, never raises; callable under nogil.
# `work` must hold monotone_work_size(K) doubles; `out` must not alias an input.


cdef inline Py_ssize_t monotone_work_size(Py_ssize_t K) noexcept nogil:
    # the shifted numerators (K) and the pool stack: weights, sums, counts, starts (4K)
    return 5 * K + 1


cdef int monotone_fused_lasso(
    Py_ssize_t K,
    const double* wy,
    const double* w,
    const double* lam,
    const double* n,
    const unsigned char* linked,
    int direction,
    bint constrained,
    double* out,
    double* work,
    double tol,
) noexcept nogil
