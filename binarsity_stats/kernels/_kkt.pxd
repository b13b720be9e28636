# The KKT rule of one block (design.md section 2), shared by the kernels that check it
# (_cd_fast on the rows, _gram_fast on the sufficient statistics). Inline functions only:
# nothing to import at run time. Never allocates, never raises; callable under nogil.

from libc.math cimport fabs


cdef inline void constrained_suffix_sums(
    Py_ssize_t K, const double* g, const double* counts, bint fit_intercept, double* S,
) noexcept nogil:
    """S = suffix sums of the bin gradients g; without an intercept each S_l is corrected
    by the block constraint's multiplier μ = −S_0 / Σ n (S_l += μ · Σ_{k ≥ l} n_k)."""
    cdef Py_ssize_t k
    cdef double acc = 0.0, nacc = 0.0, mu = 0.0
    for k in range(K - 1, -1, -1):
        acc += g[k]
        S[k] = acc
    if not fit_intercept:
        for k in range(K):
            nacc += counts[k]
        if nacc > 0:
            mu = -S[0] / nacc
        nacc = 0.0
        for k in range(K - 1, -1, -1):
            nacc += counts[k]
            S[k] += mu * nacc


cdef inline double block_violation(
    Py_ssize_t K, const double* g, const double* theta, const double* lam_w,
    const double* counts, bint fit_intercept, double* S,
) noexcept nogil:
    """Largest KKT violation of one TV block for the bin gradients g (S: K doubles).

    NumPy equivalent: ``S = suffix sums of g``; violation at l ≥ 1 is
    ``|S_l + λω_l sign(θ_l − θ_{l−1})|`` at a jump, ``max(|S_l| − λω_l, 0)`` elsewhere;
    without an intercept S_l is first corrected by the multiplier μ = −S_0 / Σ n.
    """
    cdef Py_ssize_t k
    cdef double v, s, worst = 0.0
    constrained_suffix_sums(K, g, counts, fit_intercept, S)
    for k in range(1, K):
        s = S[k]
        if theta[k] != theta[k - 1]:
            if theta[k] > theta[k - 1]:
                v = fabs(s + lam_w[k])
            else:
                v = fabs(s - lam_w[k])
        else:
            v = fabs(s) - lam_w[k]
        if v > worst:
            worst = v
    return worst
