# cython: language_level=3
"""The exact block step of a monotone chain: weighted isotonic regression (PAVA).

On a non-decreasing θ every |θ_k − θ_k−1| is θ_k − θ_k−1, so the chain's penalty is
*linear*, Σ_k c_k θ_k with c_k = λω_k − λω_k+1 (ω = 0 at the chain's ends and across an
unlinked edge), and (design.md §7)

    min_θ  Σ_k [(w_k/2) θ_k² − wy_k θ_k] + Σ_k c_k θ_k   s.t. θ non-decreasing

is a weighted isotonic regression of the shifted targets (wy_k − c_k) / w_k with weights
w_k: the pool-adjacent-violators algorithm solves it exactly in O(K). A pool's value is
(Σ wy − Σ c) / Σ w. A level with w_k = 0 has value ±∞ (the sign of its numerator), so it
pools with the neighbour its linear term pushes it towards; a pool of weight 0 that no
neighbour absorbs (a chain without curvature) takes its neighbour's value, or 0.
A non-increasing chain is the non-decreasing chain of −θ.

With the constraint nᵀθ = 0 (a block without an intercept; every prox), θ(μ) solves the
problem with wy − μn, and f(μ) = nᵀθ(μ) is non-increasing and piecewise linear in μ; on
the piece of a fixed pool structure f(μ) = A − μC with A = Σ_P N_P B_P / W_P and
C = Σ_P N_P² / W_P, so Newton's step from the pools at μ lands on the root of that piece:
a safeguarded Newton (bisection when the step leaves the bracket) ends on the exact root
after a few PAVA passes.

Called by ``_cd_fast.cd_sweep`` (the block step) and by the Python wrapper at the bottom
(``_prox``'s monotone prox, ``_metric``), after validation. The NumPy twin is
``_prox.monotone_fused_lasso_reference``.
"""

from libc.math cimport fabs, INFINITY, NAN, isnan

import numpy as np


cdef inline double _value(double w, double b) noexcept nogil:
    """Value of a pool with weight w and numerator b (±∞ or NaN when w = 0)."""
    if w > 0:
        return b / w
    if b > 0:
        return INFINITY
    if b < 0:
        return -INFINITY
    return NAN


cdef double _isotonic(
    Py_ssize_t K, const double* w, const double* b, const double* n, double mu,
    const unsigned char* linked, double* out, double* work, double* A, double* C,
) noexcept nogil:
    """PAVA of (b − μn)/w on every linked run; returns f = nᵀθ, and A, C of its pools.

    NumPy equivalent: for each run of linked levels, repeatedly merge adjacent pools
    while value(left) > value(right), then θ = the pool values (``_prox``'s twin).
    """
    cdef double* pw = work
    cdef double* pb = work + K
    cdef double* pn = work + 2 * K
    cdef double* ps = work + 3 * K
    cdef Py_ssize_t s = 0, e, k, t, top, first, last
    cdef double v, vl, vr, f = 0.0, fill, nk
    A[0] = 0.0
    C[0] = 0.0
    while s < K:
        e = s + 1
        while e < K and (linked == NULL or linked[e] != 0):
            e += 1
        top = -1
        for k in range(s, e):
            top += 1
            nk = n[k] if n != NULL else 0.0
            pw[top] = w[k]
            pb[top] = b[k]
            pn[top] = nk
            ps[top] = <double>k
            while top > 0:
                vl = _value(pw[top - 1], pb[top - 1] - mu * pn[top - 1])
                vr = _value(pw[top], pb[top] - mu * pn[top])
                if not (isnan(vl) or isnan(vr) or vl > vr):
                    break
                pw[top - 1] += pw[top]
                pb[top - 1] += pb[top]
                pn[top - 1] += pn[top]
                top -= 1
        # pool values; a pool of weight 0 takes the last finite value to its left, or
        # (at the start of the run) the first finite value to its right, or 0
        fill = NAN
        for t in range(top + 1):
            v = _value(pw[t], pb[t] - mu * pn[t])
            if pw[t] > 0:
                fill = v
                break
        if isnan(fill):
            fill = 0.0
        for t in range(top + 1):
            first = <Py_ssize_t>ps[t]
            last = <Py_ssize_t>ps[t + 1] if t < top else e
            if pw[t] > 0:
                v = (pb[t] - mu * pn[t]) / pw[t]
                fill = v
                A[0] += pn[t] * pb[t] / pw[t]
                C[0] += pn[t] * pn[t] / pw[t]
            else:
                v = fill
            for k in range(first, last):
                out[k] = v
        s = e
    if n != NULL:
        for k in range(K):
            f += n[k] * out[k]
    return f


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
) noexcept nogil:
    """Exact monotone fused lasso of one block (see ``_isotonic.pxd``); returns the
    number of PAVA passes, or −1 when the constrained search hit its iteration cap."""
    cdef double* b = work
    cdef double* pool = work + K
    cdef Py_ssize_t k
    cdef double sgn = 1.0 if direction >= 0 else -1.0
    cdef double lk, lk1, nsum = 0.0, f, A, C, mu = 0.0, lo = -INFINITY, hi = INFINITY
    cdef double cand, scale
    cdef int it = 0
    if K <= 0:
        return 0
    # numerators of the increasing problem in sgn·θ: sgn·wy_k − (λω_k − λω_k+1)
    for k in range(K):
        lk = lam[k] if (k > 0 and (linked == NULL or linked[k] != 0)) else 0.0
        lk1 = lam[k + 1] if (k + 1 < K and (linked == NULL or linked[k + 1] != 0)) else 0.0
        b[k] = sgn * wy[k] - (lk - lk1)
    if constrained and n != NULL:
        for k in range(K):
            nsum += n[k]
    if not constrained or n == NULL or not nsum > 0:
        _isotonic(K, w, b, NULL, 0.0, linked, out, pool, &A, &C)
        it = 1
    else:
        # safeguarded Newton on f(μ) = nᵀθ(μ) (non-increasing, piecewise linear)
        while True:
            f = _isotonic(K, w, b, n, mu, linked, out, pool, &A, &C)
            it += 1
            scale = 0.0
            for k in range(K):
                scale += n[k] * fabs(out[k])
            if fabs(f) <= tol * scale or f == 0.0:
                break
            if it >= 200:
                it = -1
                break
            if f > 0:
                lo = mu
            else:
                hi = mu
            cand = A / C if C > 0 else NAN
            if cand == mu:
                break  # the root of this piece is μ itself: rounding
            if not (cand > lo and cand < hi):
                if lo > -INFINITY and hi < INFINITY:
                    cand = 0.5 * (lo + hi)
                    if cand == lo or cand == hi:
                        break  # the bracket is as narrow as the doubles allow
                elif lo > -INFINITY:
                    cand = lo + (fabs(lo) + 1.0)
                else:
                    cand = hi - (fabs(hi) + 1.0)
            mu = cand
    if sgn < 0:
        for k in range(K):
            out[k] = -out[k]
    return it


# ---------------------------------------------------------------------------
# Python wrapper: called only by binarsity_stats.penalty._prox / _blocks after validation.
# ---------------------------------------------------------------------------

def work_size(Py_ssize_t K):
    """Number of doubles of work space the kernel needs for a chain of K."""
    return monotone_work_size(K)


def monotone_fused_lasso_py(const double[::1] wy, const double[::1] w,
                            const double[::1] lam, const double[::1] n,
                            const unsigned char[::1] linked, int direction,
                            bint constrained, double[::1] out, double tol):
    """Exact monotone fused lasso of one block into ``out`` (validated inputs, all of
    length K); returns the number of PAVA passes or −1."""
    cdef Py_ssize_t K = wy.shape[0]
    cdef double[::1] work = np.empty(monotone_work_size(K))
    cdef int it
    if K == 0:
        return 0
    if (w.shape[0] != K or lam.shape[0] != K or n.shape[0] != K or linked.shape[0] != K
            or out.shape[0] != K):
        raise ValueError("monotone_fused_lasso_py: every array must have the same length")
    with nogil:
        it = monotone_fused_lasso(K, &wy[0], &w[0], &lam[0], &n[0], &linked[0],
                                  direction, constrained, &out[0], &work[0], tol)
    return it
