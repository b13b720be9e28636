# Exact solvers of the weighted 1-D fused-lasso signal approximator (FLSA).
#
# Problem (design.md section 4, block step):
#
#     min_theta  sum_{k=0}^{K-1} (w_k / 2) (theta_k - y_k)^2
#              + sum_{k=1}^{K-1} lam_k |theta_k - theta_{k-1}|
#
# with w_k >= 0 and lam_k >= 0 (lam[0] is ignored). The constrained variant adds
# sum_k n_k theta_k = 0 (design.md section 5; _fused_lasso_constrained.pxd). Both
# run in O(K) (amortised), never allocate, never raise, and may be called under
# nogil in a loop.
#
# Pointer conventions: `w` may be NULL, meaning w_k = 1 for every k (the prox).
# `work` must hold at least fused_lasso_work_size(K) doubles; `out` must not
# alias any input.


from libc.math cimport fabs, INFINITY


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


# ---------------------------------------------------------------------------
# Shared with the constrained search (_fused_lasso_constrained.pyx): the DP on
# normalised values, its event type, the node slope and the scales, and the
# floors they read (values set in _fused_lasso.pyx).
# ---------------------------------------------------------------------------

cdef double _A_FLOOR
cdef double _S_FLOOR
cdef double _EDGE_RTOL


cdef struct DPEvent:
    # Unbounded tail met by the DP (only possible when a node with a_k = 0 has
    # b_k != 0, i.e. in the Lagrangian of the constrained problem).
    # side = +1: a flat left tail above +lam (theta -> -inf on run A lowers the
    # Lagrangian), side = -1: a flat right tail below -lam; 0: none.
    int side
    Py_ssize_t first
    Py_ssize_t last
    # mu * ratio is the value of mu at which run A stops being a descent ray.
    double ratio


cdef inline double _node_a(const double* w, Py_ssize_t k, double wsc) noexcept nogil:
    cdef double a
    if w == NULL:
        return 1.0 / wsc
    a = w[k] / wsc
    if a < _A_FLOOR:
        return 0.0
    return a


cdef inline bint _scales(Py_ssize_t K, const double* y, const double* w,
                         double* ysc, double* wsc, double* ymin,
                         double* ymax) noexcept nogil:
    """max(w) and max |y| over the nodes whose weight survives the floor; the
    range [ymin, ymax] of those y. False when the answer is theta = 0."""
    cdef Py_ssize_t k
    cdef double wmax = 0.0, s = 0.0, lo = INFINITY, hi = -INFINITY
    if w == NULL:
        wmax = 1.0
    else:
        for k in range(K):
            if w[k] > wmax:
                wmax = w[k]
    if not wmax > 0.0:
        return False
    for k in range(K):
        if w == NULL or w[k] / wmax >= _A_FLOOR:
            if fabs(y[k]) > s:
                s = fabs(y[k])
            if y[k] < lo:
                lo = y[k]
            if y[k] > hi:
                hi = y[k]
    if not s > 0.0:
        return False
    ysc[0] = s
    wsc[0] = wmax
    ymin[0] = lo
    ymax[0] = hi
    return True


cdef double _dp(
    Py_ssize_t K,
    const double* y,
    const double* w,
    const double* lam,
    const double* n,
    double ysc,
    double wsc,
    double nmu,
    double growth,
    double* out,
    double* work,
    DPEvent* ev,
) noexcept nogil
