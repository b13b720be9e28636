# Exact solvers of the weighted 1-D fused-lasso signal approximator (FLSA).
#
# Problem (design.md section 4, block step):
#
#     min_theta  sum_{k=0}^{K-1} (w_k / 2) (theta_k - y_k)^2
#              + sum_{k=1}^{K-1} lam_k |theta_k - theta_{k-1}|
#
# with w_k >= 0 and lam_k >= 0 (lam[0] is ignored). The constrained variant adds
# sum_k n_k theta_k = 0 (design.md section 5). Both run in O(K) (amortised),
# never allocate, never raise, and may be called under nogil in a loop.
#
# Pointer conventions: `w` may be NULL, meaning w_k = 1 for every k (the prox).
# `work` must hold at least fused_lasso_work_size(K) doubles; `out` must not
# alias any input.


cdef inline Py_ssize_t fused_lasso_work_size(Py_ssize_t K) noexcept nogil:
    # 3 knot arrays of 2K + 2, the 2K backtracking bounds, and the two
    # bracketing solutions of the constrained search (2K).
    return 10 * K + 8


cdef void weighted_fused_lasso(
    Py_ssize_t K,
    const double* y,
    const double* w,
    const double* lam,
    double* out,
    double* work,
) noexcept nogil


cdef int constrained_fused_lasso(
    Py_ssize_t K,
    const double* y,
    const double* w,
    const double* lam,
    const double* n,
    double* out,
    double* work,
    double tol,
) noexcept nogil


# Used by the TV prox drivers (_tv_prox.pyx): the data range with a finiteness test,
# and the unit-weight DP (TV prox of y with edge penalties step * lam_k).
cdef bint _data_range(Py_ssize_t K, const double* y, double* lo, double* hi) noexcept nogil


cdef bint _unit_fused_lasso(
    Py_ssize_t K,
    const double* y,
    const double* lam,
    double step,
    double* out,
    double* work,
    double* total,
) noexcept nogil
