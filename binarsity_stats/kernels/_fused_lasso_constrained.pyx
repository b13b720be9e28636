# cython: language_level=3
"""The constrained 1-D weighted fused lasso: sum_k n_k theta_k = 0 (design.md section 5).

The search over the Lagrange multiplier mu of the constraint: theta(mu) is Johnson's
DP of ``_fused_lasso.pyx`` with node intercepts b_k = -w_k y_k + mu n_k (``_dp``,
cimported with its event type, the node slope and the scales through
``_fused_lasso.pxd``), and g(mu) = n' theta(mu) is non-increasing and piecewise
linear; ``constrained_fused_lasso`` finds its root (see its docstring). The block
step of a TV chain without intercept (``_block_step.pxd``) and the TV / binarsity
prox with the constraint (``_tv_prox.pyx``) cimport it through
``_fused_lasso_constrained.pxd``.

Only ``penalty/_prox.py`` and ``penalty/_blocks.py`` call the ``def`` wrapper at the
bottom; it checks lengths, NaN and signs itself before the C loop.
"""

from libc.math cimport fabs, sqrt, INFINITY, NAN

import numpy as np

from binarsity_stats.kernels._fused_lasso cimport (
    DPEvent,
    _EDGE_RTOL,
    _dp,
    _node_a,
    _scales,
    fused_lasso_work_size,
    weighted_fused_lasso,
)

cdef extern from "float.h":
    double DBL_EPSILON
    double DBL_MAX

cdef int _MAXIT = 200


cdef inline double _evaluate(
    Py_ssize_t K, const double* y, const double* w, const double* lam,
    const double* n, double ysc, double wsc, double nsc, double mu,
    double* out, double* work, DPEvent* ev, double* absg, double* slope,
    double* q, double* res,
) noexcept nogil:
    """theta(mu) (normalised) into out; returns g = sum n'_k theta_k with
    n' = n / nsc, sets absg = sum n'|theta|, slope = -sum_S n'_S^2 / a_S
    over the fused segments S (the exact dg/dmu on a fixed segment structure;
    -inf when a zero-weight segment carries counts), q = the Lagrangian at
    theta(mu), i.e. the dual function q(mu), whose derivative is g, and res =
    the floating-point resolution of g."""
    cdef Py_ssize_t k
    cdef double g = 0.0, ag = 0.0, sl = 0.0, segn = 0.0, sega = 0.0, nk, a, d
    cdef double L = 0.0, mag = 0.0, gres = 0.0
    cdef double growth = 1.0, check, big
    while True:
        check = _dp(K, y, w, lam, n, ysc, wsc, mu / nsc, growth, out, work, ev)
        if check == INFINITY or (ev.side != 0 and ev.ratio < 1.0 - _EDGE_RTOL):
            break
        big = 0.0
        for k in range(K):
            if fabs(out[k]) > big:
                big = fabs(out[k])
        if big <= check:
            break
        # the guess of the solution's radius was too small: the cap may have
        # changed the answer, solve again with a larger one (uncapped at last)
        growth = INFINITY if growth > 1e30 else 16.0 * growth
    for k in range(K):
        nk = n[k] / nsc
        g += nk * out[k]
        ag += nk * fabs(out[k])
        a = _node_a(w, k, wsc)
        if a > 0.0:
            d = out[k] - y[k] / ysc
            L += 0.5 * a * d * d
            mag += a * (1.0 + fabs(y[k] / ysc))
        mag += fabs(mu) * nk
        if k > 0 and out[k] != out[k - 1]:
            L += (lam[k] / ysc) / wsc * fabs(out[k] - out[k - 1])
            if segn > 0.0:
                if sega > 0.0:
                    sl -= segn * segn / sega
                    gres += segn / sega
                else:
                    sl = -INFINITY
            segn = 0.0
            sega = 0.0
        segn += nk
        sega += a
    if segn > 0.0:
        if sega > 0.0:
            sl -= segn * segn / sega
            gres += segn / sega
        else:
            sl = -INFINITY
    absg[0] = ag
    slope[0] = sl
    # resolution of g: a segment level is a sum of O(mag) terms over a_S, so it
    # carries an error ~ eps mag / a_S; one ulp of mu moves g by slope mu eps
    res[0] = 64.0 * DBL_EPSILON * (mag * gres + (fabs(sl * mu) if sl > -INFINITY else 0.0))
    q[0] = L + mu * g
    return g


cdef inline double _quad_gap(double m, double lo, double glo, double slo,
                             double qlo, double hi, double ghi, double shi,
                             double qhi) noexcept nogil:
    # Q_lo(m) - Q_hi(m), Q_s(m) = q_s + g_s (m - s) + slope_s (m - s)^2 / 2:
    # the dual function continued along each end's fixed segment structure.
    return ((qlo + glo * (m - lo) + 0.5 * slo * (m - lo) * (m - lo))
            - (qhi + ghi * (m - hi) + 0.5 * shi * (m - hi) * (m - hi)))


cdef inline double _structure_switch(double lo, double glo, double slo,
                                     double qlo, double hi, double ghi,
                                     double shi, double qhi) noexcept nogil:
    """Where the dual function q switches from lo's segment structure to hi's.

    Each continuation Q_s >= q (it evaluates the Lagrangian at a feasible
    theta), with equality on its own piece, so when lo and hi have adjacent
    structures q = min(Q_lo, Q_hi) and the switch - where g jumps or kinks - is
    the root of Q_lo - Q_hi in [lo, hi]. Bisection on that quadratic costs no
    DP evaluation. Returns NaN when the signs do not bracket a root."""
    cdef double a = lo, b = hi, m, fa, fm
    cdef int _i
    fa = _quad_gap(a, lo, glo, slo, qlo, hi, ghi, shi, qhi)
    if not (fa <= 0.0 and _quad_gap(b, lo, glo, slo, qlo, hi, ghi, shi, qhi) >= 0.0):
        return NAN
    for _i in range(200):
        m = 0.5 * (a + b)
        if not (m > a and m < b):
            break
        fm = _quad_gap(m, lo, glo, slo, qlo, hi, ghi, shi, qhi)
        if fm <= 0.0:
            a = m
        else:
            b = m
    return 0.5 * (a + b)


cdef inline double _midpoint(double lo, double hi) noexcept nogil:
    # geometric when the bracket spans orders of magnitude on one side of 0
    if lo > 0.0 and hi > 4.0 * lo:
        return sqrt(lo) * sqrt(hi)
    if hi < 0.0 and lo < 4.0 * hi:
        return -sqrt(-lo) * sqrt(-hi)
    return 0.5 * (lo + hi)


cdef inline bint _finish(Py_ssize_t K, double* out, double ysc) noexcept nogil:
    # back to the caller's units; False (and zeros) if anything is not finite,
    # which no input has been found to trigger but the contract forbids
    cdef Py_ssize_t k
    cdef bint ok = True
    for k in range(K):
        out[k] *= ysc
        if not (-DBL_MAX <= out[k] <= DBL_MAX):
            ok = False
    if not ok:
        for k in range(K):
            out[k] = 0.0
    return ok


cdef int constrained_fused_lasso(
    Py_ssize_t K,
    const double* y,
    const double* w,
    const double* lam,
    const double* n,
    double* out,
    double* work,
    double tol,
) noexcept nogil:
    """Exact weighted FLSA subject to sum_k n_k theta_k = 0 (design.md section 5).

    theta(mu) = argmin sum (w_k/2)(theta_k - y_k)^2 + mu sum n_k theta_k + TV is
    the DP with node intercepts b_k = -w_k y_k + mu n_k, and g(mu) = n' theta(mu)
    is non-increasing and piecewise linear. Its root is found by safeguarded
    Newton steps (exact once the fused-segment structure is right), secant and
    bisection on a bracket, stopping when |g| <= tol (sum n|theta| + sum n max|y|)
    or |g| is below its own floating-point resolution (which matters only when
    weights span many orders of magnitude).

    Degenerate cases (only possible when some w_k = 0 with n_k > 0):
    * mu beyond the domain of the dual function (the Lagrangian is unbounded
      below along a zero-weight run A): the DP reports A and the exact mu at which
      A stops being a descent ray; the search never steps past it.
    * the root sits on that boundary: theta(mu_b) is completed by shifting run A
      (a recession direction of the Lagrangian's minimisers there) until the
      constraint holds - still an exact minimiser.
    * g jumps at the root (a zero-weight segment with counts is free there): the
      bracket collapses and the two one-sided solutions are mixed to meet the
      constraint exactly.

    Returns the number of DP evaluations, 0 for the trivial cases (n all zero:
    the unconstrained solution; w all zero or y = 0 where w > 0: theta = 0;
    K = 1: theta = 0), or -1 if the iteration limit was hit (out then holds the
    best feasible-by-mixing estimate; always finite).
    """
    cdef Py_ssize_t K2 = 2 * K + 2
    cdef double* th_lo = work + 3 * K2 + 2 * K
    cdef double* th_hi = th_lo + K
    cdef Py_ssize_t k, it, a_first = 0, a_last = 0, b_first = 0, b_last = 0
    cdef double nsc = 0.0, ysc, wsc, ymin, ymax, mu, g, absg, slope, nA, cand
    cdef double lo = -INFINITY, hi = INFINITY, glo = 0.0, ghi = 0.0
    cdef double bnd_hi = INFINITY, bnd_lo = -INFINITY, thr, alpha, scale
    cdef double width_old = INFINITY, upper, lower, q = 0.0, q_lo = 0.0, q_hi = 0.0
    cdef double slope_lo = 0.0, slope_hi = 0.0, nudge, res
    cdef bint have_lo = False, have_hi = False, bisect = False, newton
    cdef int stalls = 0
    cdef DPEvent ev

    if K <= 0:
        return 0
    for k in range(K):
        if n[k] > nsc:
            nsc = n[k]
    if not nsc > 0.0:
        weighted_fused_lasso(K, y, w, lam, out, work)
        return 0
    if K == 1 or not _scales(K, y, w, &ysc, &wsc, &ymin, &ymax):
        # K = 1: n_0 > 0 forces theta_0 = 0. Otherwise theta = 0 is feasible
        # and has objective 0 (or every objective term is TV).
        for k in range(K):
            out[k] = 0.0
        return 0
    scale = 0.0
    for k in range(K):
        scale += n[k] / nsc

    mu = 0.0
    for it in range(1, _MAXIT + 1):
        g = _evaluate(K, y, w, lam, n, ysc, wsc, nsc, mu, out, work, &ev,
                      &absg, &slope, &q, &res)
        if ev.side != 0 and ev.ratio < 1.0 - _EDGE_RTOL:
            # beyond the dual domain: mu * ratio bounds it (never crossed again)
            thr = mu * ev.ratio
            if ev.side > 0:
                if thr < bnd_hi:
                    bnd_hi = thr
                    a_first = ev.first
                    a_last = ev.last
                if have_lo and bnd_hi <= lo:
                    # the boundary is the last bounded point: finish there
                    for k in range(K):
                        out[k] = th_lo[k]
                    g = glo
                    mu = lo
                    break
                mu = bnd_hi
            else:
                if thr > bnd_lo:
                    bnd_lo = thr
                    b_first = ev.first
                    b_last = ev.last
                if have_hi and bnd_lo >= hi:
                    for k in range(K):
                        out[k] = th_hi[k]
                    g = ghi
                    mu = hi
                    break
                mu = bnd_lo
            continue
        # converged, up to the floating-point resolution of g itself
        if fabs(g) <= tol * (absg + scale) + res:
            return it if _finish(K, out, ysc) else -1
        if g > 0.0:
            if mu >= bnd_hi:
                break
            lo = mu
            glo = g
            slope_lo = slope
            q_lo = q
            have_lo = True
            for k in range(K):
                th_lo[k] = out[k]
        else:
            if mu <= bnd_lo:
                break
            hi = mu
            ghi = g
            slope_hi = slope
            q_hi = q
            have_hi = True
            for k in range(K):
                th_hi[k] = out[k]
        if have_lo and have_hi:
            if hi - lo <= 64.0 * DBL_EPSILON * (fabs(lo) + fabs(hi)) + 1e-300:
                break
            # bisect whenever two steps failed to halve the bracket
            if hi - lo > 0.5 * width_old:
                stalls += 1
            else:
                stalls = 0
                width_old = hi - lo
            bisect = stalls >= 2
            if bisect:
                stalls = 0
                width_old = hi - lo

        # ---- next trial point: Newton if it stays inside the bracket
        newton = slope < 0.0 and slope > -INFINITY
        cand = mu - g / slope if newton else mu
        upper = bnd_hi if hi > bnd_hi else hi
        lower = bnd_lo if lo < bnd_lo else lo
        if newton and not bisect and cand > lower and cand < upper and cand != mu:
            pass
        elif have_lo and have_hi:
            cand = NAN
            if not bisect:
                if slope_lo == -INFINITY or slope_hi == -INFINITY:
                    # a zero-weight segment with counts is free at that end:
                    # g likely jumps right there, probe just inside it
                    if g < 0.0 and slope_lo == -INFINITY:
                        cand = lo + 16.0 * DBL_EPSILON * fabs(lo) + 1e-300
                    elif g > 0.0 and slope_hi == -INFINITY:
                        cand = hi - 16.0 * DBL_EPSILON * fabs(hi) - 1e-300
                elif lo - glo / slope_lo >= hi and hi - ghi / slope_hi <= lo:
                    # both ends' Newton lines miss the bracket: g jumps (or
                    # kinks) in between, where the dual function changes piece
                    cand = _structure_switch(lo, glo, slope_lo, q_lo, hi, ghi,
                                             slope_hi, q_hi)
                    # stay clear of the ends so that the bracket collapses
                    nudge = 16.0 * DBL_EPSILON * (fabs(lo) + fabs(hi)) + 1e-300
                    if cand < lo + nudge:
                        cand = lo + nudge
                    if cand > hi - nudge:
                        cand = hi - nudge
                if not (cand > lo and cand < hi):
                    # secant (no cancellation when one end is mu = 0)
                    cand = lo + glo * ((hi - lo) / (glo - ghi))
            if not (cand > lo and cand < hi):
                cand = _midpoint(lo, hi)
        elif g > 0.0:
            # no point with g < 0 yet: go up, at most to the domain boundary
            if not (newton and cand > mu):
                cand = mu + (2.0 * fabs(mu) if fabs(mu) > 1.0 else 1.0)
            if cand >= bnd_hi:
                cand = bnd_hi
        else:
            if not (newton and cand < mu):
                cand = mu - (2.0 * fabs(mu) if fabs(mu) > 1.0 else 1.0)
            if cand <= bnd_lo:
                cand = bnd_lo
        mu = cand
    else:
        # iteration limit: best estimate, then report failure
        if have_lo and have_hi and glo > ghi:
            alpha = -ghi / (glo - ghi)
            for k in range(K):
                out[k] = alpha * th_lo[k] + (1.0 - alpha) * th_hi[k]
        elif have_lo:
            for k in range(K):
                out[k] = th_lo[k]
        elif have_hi:
            for k in range(K):
                out[k] = th_hi[k]
        _finish(K, out, ysc)
        return -1

    # ---- exits by `break`
    if g > 0.0 and mu >= bnd_hi:
        # root on the upper boundary: lower run A until n' theta = 0
        nA = 0.0
        for k in range(a_first, a_last + 1):
            nA += n[k] / nsc
        if nA > 0.0:
            for k in range(a_first, a_last + 1):
                out[k] -= g / nA
    elif g < 0.0 and mu <= bnd_lo:
        nA = 0.0
        for k in range(b_first, b_last + 1):
            nA += n[k] / nsc
        if nA > 0.0:
            for k in range(b_first, b_last + 1):
                out[k] -= g / nA
    elif glo > ghi:
        # collapsed bracket: g jumps at the root; mix the one-sided solutions
        alpha = -ghi / (glo - ghi)
        for k in range(K):
            out[k] = alpha * th_lo[k] + (1.0 - alpha) * th_hi[k]
    return it if _finish(K, out, ysc) else -1


# ---------------------------------------------------------------------------
# Python wrapper: called only by binarsity_stats.penalty._prox and ._blocks; it
# checks lengths, NaN and signs before the C loop.
# ---------------------------------------------------------------------------

def constrained_fused_lasso_py(const double[::1] y, const double[::1] w,
                               const double[::1] lam, const double[::1] n,
                               double[::1] out, double tol):
    """Exact weighted FLSA with n' theta = 0 into `out`; returns the number of
    evaluations or -1.

    Checks its arguments before the C loop, which never reads or writes past an
    array's end: w, lam, n and out as long as y (ValueError naming the lengths), no
    NaN anywhere, w, lam, n and tol >= 0 (ValueError naming the argument and index).
    Other non-finite values are the callers' to refuse (``_prox`` does).
    """
    cdef Py_ssize_t K = y.shape[0], k
    cdef double[::1] work
    cdef int it
    if w.shape[0] != K or lam.shape[0] != K or n.shape[0] != K or out.shape[0] != K:
        raise ValueError(
            f"y, w, lam, n and out must have the same length; got {K}, {w.shape[0]}, "
            f"{lam.shape[0]}, {n.shape[0]} and {out.shape[0]}."
        )
    if not tol >= 0.0:
        raise ValueError(f"tol must be >= 0; got {tol!r}.")
    for k in range(K):
        if y[k] != y[k]:
            raise ValueError(f"y[{k}] is NaN.")
        if not w[k] >= 0.0:
            raise ValueError(f"w must be >= 0 and not NaN; got w[{k}] = {w[k]!r}.")
        if not lam[k] >= 0.0:
            raise ValueError(f"lam must be >= 0 and not NaN; got lam[{k}] = {lam[k]!r}.")
        if not n[k] >= 0.0:
            raise ValueError(f"n must be >= 0 and not NaN; got n[{k}] = {n[k]!r}.")
    if K == 0:
        return 0
    work = np.empty(fused_lasso_work_size(K))
    with nogil:
        it = constrained_fused_lasso(K, &y[0], &w[0], &lam[0], &n[0], &out[0],
                                     &work[0], tol)
    return it
