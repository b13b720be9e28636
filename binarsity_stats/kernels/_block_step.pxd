# The exact block step of a TV chain (design.md section 4), shared by the two sweeps that
# take it: _cd_fast.cd_sweep (gradients from the rows) and _gram_fast.gram_cd_sweep
# (gradients from the sufficient statistics). Inline functions only: nothing to import
# at run time. Never allocates, never raises; callable under nogil.

from binarsity_stats.kernels._fused_lasso cimport weighted_fused_lasso
from binarsity_stats.kernels._fused_lasso_constrained cimport constrained_fused_lasso
from binarsity_stats.kernels._kkt cimport block_violation


cdef inline double fused_block_step(
    Py_ssize_t K, const double* g, const double* theta, const double* H,
    const double* lam_w, const double* counts, bint fit_intercept, double constraint_tol,
    double* yt, double* wt, double* u, double* S, double* work, int* status,
) noexcept nogil:
    """Solve one block's quadratic model exactly; return the block's KKT violation at θ⁰.

    The block problem ``min_u Σ_k [g_k (u_k − θ⁰_k) + ½ H_k (u_k − θ⁰_k)²] +
    Σ_{k≥1} λω_k |u_k − u_{k−1}|`` is the weighted fused-lasso signal approximator with
    weights H and targets θ⁰ − g/H (θ⁰ where H is 0), solved by the dynamic programme
    of ``_fused_lasso`` — with the block constraint nᵀu = 0 when there is no
    intercept (``status``: the constrained search's status). The solution goes to
    ``u``; yt, wt (K doubles), S (K) and work (``fused_lasso_work_size(K)``) are
    scratch. The violation is ``_kkt.block_violation`` of g at θ⁰.
    """
    cdef Py_ssize_t k
    cdef double viol = block_violation(K, g, theta, lam_w, counts, fit_intercept, S)
    for k in range(K):
        wt[k] = H[k]
        if wt[k] > 0:
            yt[k] = theta[k] - g[k] / wt[k]
        else:
            yt[k] = theta[k]
    if fit_intercept:
        weighted_fused_lasso(K, yt, wt, lam_w, u, work)
    else:
        status[0] = constrained_fused_lasso(K, yt, wt, lam_w, counts, u, work, constraint_tol)
    return viol


cdef inline double recentre_block(Py_ssize_t K, const double* counts, double* u) noexcept nogil:
    """Re-centre a block's levels, nᵀu = 0, and return the shift (the intercept takes it).

    The shift is the count-weighted mean of u; a block without counts is left as it is
    (shift 0).
    """
    cdef Py_ssize_t k
    cdef double c = 0.0, nsum = 0.0
    for k in range(K):
        c += counts[k] * u[k]
        nsum += counts[k]
    if nsum > 0:
        c /= nsum
        for k in range(K):
            u[k] -= c
        return c
    return 0.0
