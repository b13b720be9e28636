# The constrained 1-D weighted fused lasso (_fused_lasso_constrained.pyx):
#
#     min_theta  sum_k (w_k / 2) (theta_k - y_k)^2 + sum_{k>=1} lam_k |theta_k - theta_{k-1}|
#     subject to sum_k n_k theta_k = 0
#
# (design.md section 5), in O(K) per DP evaluation; never allocates, never raises,
# may be called under nogil. `work` must hold at least
# _fused_lasso.fused_lasso_work_size(K) doubles; `out` must not alias any input.
# Returns the number of DP evaluations, 0 for the trivial cases, -1 at the
# iteration limit.


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
