# cython: language_level=3
"""Exact O(K) solvers of the weighted 1-D fused-lasso signal approximator.

The kernel solves, exactly and without inner iterations,

    min_theta  sum_k (w_k / 2) (theta_k - y_k)^2 + sum_{k>=1} lam_k |theta_k - theta_{k-1}|

by Johnson's (2013) dynamic programme on the *derivative* of the partial value
function (and, for the TV prox with one penalty on every edge of a block, by
Condat's (2013) direct algorithm, see `_tv_prox._condat_tv`). With F_k(t) = min over
theta_0..theta_{k-1} of the partial objective with theta_k = t, its derivative
D_k = F_k' is continuous, non-decreasing and piecewise linear, and

    D_0(t)     = a_0 t + b_0
    D_{k+1}(t) = clip(D_k(t), -lam_{k+1}, +lam_{k+1}) + a_{k+1} t + b_{k+1}

with a_k = w_k and b_k = -w_k y_k (+ mu n_k for the Lagrangian of the constrained
problem; writing the node term as a slope and an intercept lets w_k = 0 carry a
linear term without dividing by it). With t-_k = sup{D_k < -lam_{k+1}} and
t+_k = inf{D_k > +lam_{k+1}}, the solution is theta_{K-1} in {D_{K-1} = 0} and
theta_k = clip(theta_{k+1}, t-_k, t+_k) backwards.

D_k is stored as a deque of knots (position, change of slope, change of
intercept when crossing it rightwards) plus its leftmost and rightmost pieces.
Adding a t + b only touches the two end pieces; finding t-_k pops knots from the
left, t+_k from the right, and each step pushes at most one knot per side, so
the total work is O(K).

This module is the DP itself: the general (scaled) DP `_dp`, the unit-weight DP
and `weighted_fused_lasso`. The constrained problem (sum_k n_k theta_k = 0: the
search over the Lagrange multiplier mu, each trial point one `_dp`) is
``_fused_lasso_constrained.pyx``, which cimports `_dp`, its event type, the node
slope and the scales through ``_fused_lasso.pxd`` (where those inline helpers and
the floors both modules read are declared). Only ``_prox.py`` calls the ``def``
wrappers at the bottom, after validation. Condat's algorithm and the block-wise
TV / binarsity prox drivers are in ``_tv_prox.pyx``, which cimports these kernels.
"""


from libc.math cimport fabs, INFINITY
from libc.stdlib cimport free, malloc

import numpy as np

cdef extern from "float.h":
    double DBL_MAX

# The floors are declared in _fused_lasso.pxd (its inline helpers and the
# constrained search read them) and given their values here.
# Normalised observation weights w_k / max(w) below this are treated as zero:
# their clip points would lie beyond the floating-point range.
_A_FLOOR = 1e-200
# A computed piece slope at or below this is flat (rounding of a zero slope).
_S_FLOOR = 1e-250
# An unbounded tail whose violation is within this relative margin is rounding
# at the boundary of the dual domain (constrained problem), not a violation.
_EDGE_RTOL = 1e-12


cdef inline void _record(DPEvent* ev, int side, Py_ssize_t first, Py_ssize_t last,
                         double ratio) noexcept nogil:
    # Keep the tightest event, but freeze after the first genuine violation: the
    # clamp that follows it shifts D, so later ratios are no longer exact.
    if ev.side == 0 or (ev.ratio >= 1.0 - _EDGE_RTOL and ratio < ev.ratio):
        ev.side = side
        ev.first = first
        ev.last = last
        ev.ratio = ratio


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
) noexcept nogil:
    """Normalised DP: node terms a_k = w_k/wsc, b_k = -a_k y_k/ysc + nmu n_k,
    edge weights lam_k/ysc/wsc. Writes the normalised solution to out. K >= 2.

    Returns the radius R the answer must be checked against (INFINITY: nothing
    to check); see the pre-pass. `growth` scales the guess of R."""
    cdef Py_ssize_t cap2 = 2 * K + 2
    cdef double* X = work
    cdef double* DS = work + cap2
    cdef double* DC = work + 2 * cap2
    # TM/TP first hold a_k/b_k, then t-_k/t+_k (slot k is rewritten after use).
    cdef double* TM = work + 3 * cap2
    cdef double* TP = TM + K
    cdef Py_ssize_t k, lo, hi, lo0, mL, mR
    cdef double a, b, sa, sb, R, bzero, cap, check, lam_e, lamL, lamR
    cdef double inv_y, inv_w, inv_l
    cdef bint fast
    cdef double sL, cL, sR, cR, s, c, x, xprev, tm, tp, delta, r1, r2, th

    # ---- pre-pass: node terms and a cap on lam that cannot change the answer.
    # If every minimiser lies in [-R, R], there |D_k| <= sum_j (a_j R + |b_j|)
    # (clipping only shrinks |D|), so clipping at any lam above twice that is
    # the identity where it matters, and t-, t+ fall outside [-R, R]: capping
    # lam changes nothing, and removes the cancellation of -lam + (c + lam)
    # that otherwise costs eps * lam of accuracy (fatal for huge lam).
    # * No node with a_k = 0 has b_k != 0 (the FLSA, or any Lagrangian with
    #   w > 0): the minimiser lies in the range of the targets -b_k / a_k, so
    #   R = max |b_k / a_k| is proven.
    # * Otherwise (w_k = 0 with a linear term mu n_k) the forces of those nodes
    #   can move a segment by sum |b| / a_S, with a_S unknown: guess
    #   R = max |b_k / a_k| + growth * sum_{a=0} |b_k| / sum_k a_k, and the
    #   caller checks the answer: if it lies in [-R, R], no capped edge jumps,
    #   so the capped problem's KKT conditions are the original's.
    # multiply by reciprocals where they are safe (one rounding more than a
    # division, at a fraction of its cost)
    fast = 1e-300 <= ysc <= 1e300 and 1e-150 <= wsc <= 1e150
    inv_y = 1.0 / ysc
    inv_w = 1.0 / wsc
    inv_l = inv_y * inv_w
    sa = 0.0
    sb = 0.0
    R = 0.0
    bzero = 0.0
    for k in range(K):
        if fast and w != NULL:
            a = w[k] * inv_w
            if a < _A_FLOOR:
                a = 0.0
        else:
            a = _node_a(w, k, wsc)
        if a > 0.0:
            b = -a * (y[k] * inv_y if fast else y[k] / ysc)
        else:
            b = 0.0
        if n != NULL:
            b += nmu * n[k]
        if a > 0.0:
            if fabs(b) > R * a:
                R = fabs(b) / a
        else:
            bzero += fabs(b)
        sa += a
        sb += fabs(b)
        TM[k] = a
        TP[k] = b
    check = INFINITY
    if bzero > 0.0:
        R += growth * bzero / sa
        check = R
    cap = 2.0 * (R * sa + sb) + 1.0
    if not cap <= DBL_MAX:
        check = INFINITY
    ev.side = 0
    ev.first = 0
    ev.last = 0
    ev.ratio = 1.0

    lo = K
    hi = K - 1
    sL = TM[0]
    cL = TP[0]
    sR = sL
    cR = cL
    mL = 0
    mR = 0
    lamL = 0.0
    lamR = 0.0
    for k in range(K - 1):
        lam_e = lam[k + 1] * inv_l if fast else (lam[k + 1] / ysc) / wsc
        if lam_e > cap:
            lam_e = cap
        # ---- a flat tail beyond +-lam_e: the Lagrangian is unbounded below
        # along run [m, k]. Record it and clamp the tail (a constant shift of
        # D), which is exact at the boundary of the dual domain.
        if sL <= _S_FLOOR and cL > lam_e:
            _record(ev, 1, mL, k, (lamL + lam_e) / (cL + lamL))
            delta = lam_e - cL
            cL += delta
            cR += delta
        elif sR <= _S_FLOOR and cR < -lam_e:
            _record(ev, -1, mR, k, (lamR + lam_e) / (lamR - cR))
            delta = -lam_e - cR
            cL += delta
            cR += delta

        # ---- t- = sup{D < -lam_e}, popping knots from the left
        tm = -INFINITY
        lo0 = lo
        if not (sL <= _S_FLOOR and cL >= -lam_e):
            s = sL
            c = cL
            xprev = -INFINITY
            while lo <= hi:
                x = X[lo]
                if s * x + c >= -lam_e:
                    break
                s += DS[lo]
                c += DC[lo]
                xprev = x
                lo += 1
            if lo > hi:
                # past every knot: the exact right end piece, not the sum of
                # deltas (which rounds a zero slope to +-1e-17)
                s = sR
                c = cR
            if s > _S_FLOOR:
                tm = (-lam_e - c) / s
                if tm < xprev:
                    tm = xprev
                if lo <= hi and tm > X[lo]:
                    tm = X[lo]
            else:
                # flat piece reached only through rounding: cross at the knot
                tm = xprev
            if -DBL_MAX <= tm <= DBL_MAX:
                lo -= 1
                X[lo] = tm
                DS[lo] = s
                DC[lo] = c + lam_e
                sL = 0.0
                cL = -lam_e
                lamL = lam_e
                mL = k + 1
            else:
                # no clip after all (overflow): leave D untouched
                tm = -INFINITY
                lo = lo0

        # ---- t+ = inf{D > +lam_e}, popping knots from the right
        tp = INFINITY
        if not (sR <= _S_FLOOR and cR <= lam_e):
            s = sR
            c = cR
            xprev = INFINITY
            while lo <= hi:
                x = X[hi]
                if s * x + c <= lam_e:
                    break
                s -= DS[hi]
                c -= DC[hi]
                xprev = x
                hi -= 1
            if lo > hi:
                s = sL
                c = cL
            if s > _S_FLOOR:
                tp = (lam_e - c) / s
                if tp > xprev:
                    tp = xprev
                if lo <= hi and tp < X[hi]:
                    tp = X[hi]
            else:
                tp = xprev
            if -DBL_MAX <= tp <= DBL_MAX:
                hi += 1
                X[hi] = tp
                DS[hi] = -s
                DC[hi] = lam_e - c
                sR = 0.0
                cR = lam_e
                lamR = lam_e
                mR = k + 1
            else:
                tp = INFINITY

        # ---- add node k + 1 (only the end pieces change)
        a = TM[k + 1]
        b = TP[k + 1]
        TM[k] = tm
        TP[k] = tp
        sL += a
        cL += b
        sR += a
        cR += b

    # ---- theta_{K-1}: the point of {D_{K-1} = 0} nearest to 0
    k = K - 1
    if sL <= _S_FLOOR and cL > 0.0:
        _record(ev, 1, mL, k, lamL / (cL + lamL))
        delta = -cL
        cL += delta
        cR += delta
    elif sR <= _S_FLOOR and cR < 0.0:
        _record(ev, -1, mR, k, lamR / (lamR - cR))
        delta = -cR
        cL += delta
        cR += delta
    # the left scan only moves `lo`; the right scan must see every knot again
    lo0 = lo
    r1 = -INFINITY
    if not (sL <= _S_FLOOR and cL >= 0.0):
        s = sL
        c = cL
        xprev = -INFINITY
        while lo <= hi:
            x = X[lo]
            if s * x + c >= 0.0:
                break
            s += DS[lo]
            c += DC[lo]
            xprev = x
            lo += 1
        if lo > hi:
            s = sR
            c = cR
        if s > _S_FLOOR:
            r1 = -c / s
            if r1 < xprev:
                r1 = xprev
            if lo <= hi and r1 > X[lo]:
                r1 = X[lo]
        else:
            r1 = xprev
        if not (-DBL_MAX <= r1 <= DBL_MAX):
            r1 = -INFINITY
    lo = lo0
    r2 = INFINITY
    if not (sR <= _S_FLOOR and cR <= 0.0):
        s = sR
        c = cR
        xprev = INFINITY
        while lo <= hi:
            x = X[hi]
            if s * x + c <= 0.0:
                break
            s -= DS[hi]
            c -= DC[hi]
            xprev = x
            hi -= 1
        if lo > hi:
            s = sL
            c = cL
        if s > _S_FLOOR:
            r2 = -c / s
            if r2 > xprev:
                r2 = xprev
            if lo <= hi and r2 < X[hi]:
                r2 = X[hi]
        else:
            r2 = xprev
        if not (-DBL_MAX <= r2 <= DBL_MAX):
            r2 = INFINITY
    th = 0.0
    if th < r1:
        th = r1
    if th > r2:
        th = r2

    # ---- backtrack: theta_k = clip(theta_{k+1}, t-_k, t+_k)
    out[K - 1] = th
    for k in range(K - 2, -1, -1):
        if th < TM[k]:
            th = TM[k]
        if th > TP[k]:
            th = TP[k]
        out[k] = th
    return check


# ---------------------------------------------------------------------------
# Unit observation weights: the TV prox (w = NULL)
# ---------------------------------------------------------------------------

# The unit-weight kernel runs on the caller's values, unscaled, when max |y|
# lies in this range: its intermediate values are then bounded by ~K^2 max|y|
# (far from overflow) and far above the subnormals. Outside it the general,
# scaled DP is used.
cdef double _UNIT_YMAX = 1e100
cdef double _UNIT_YMIN = 1e-100


cdef bint _data_range(Py_ssize_t K, const double* y, double* lo,
                      double* hi) noexcept nogil:
    """min and max of y[0..K-1], with four independent accumulators so that
    the comparisons do not form one dependent chain. Returns whether every
    y_k is finite: y - y is 0 for finite y and NaN otherwise, and a sum of
    them stays NaN (the comparisons alone would skip a NaN)."""
    cdef Py_ssize_t k = 0
    cdef double a0 = y[0], a1 = y[0], a2 = y[0], a3 = y[0]
    cdef double b0 = y[0], b1 = y[0], b2 = y[0], b3 = y[0]
    cdef double z0 = 0.0, z1 = 0.0, z2 = 0.0, z3 = 0.0
    while k + 4 <= K:
        a0 = y[k] if y[k] < a0 else a0
        a1 = y[k + 1] if y[k + 1] < a1 else a1
        a2 = y[k + 2] if y[k + 2] < a2 else a2
        a3 = y[k + 3] if y[k + 3] < a3 else a3
        b0 = y[k] if y[k] > b0 else b0
        b1 = y[k + 1] if y[k + 1] > b1 else b1
        b2 = y[k + 2] if y[k + 2] > b2 else b2
        b3 = y[k + 3] if y[k + 3] > b3 else b3
        z0 += y[k] - y[k]
        z1 += y[k + 1] - y[k + 1]
        z2 += y[k + 2] - y[k + 2]
        z3 += y[k + 3] - y[k + 3]
        k += 4
    while k < K:
        a0 = y[k] if y[k] < a0 else a0
        b0 = y[k] if y[k] > b0 else b0
        z0 += y[k] - y[k]
        k += 1
    a0 = a1 if a1 < a0 else a0
    a2 = a3 if a3 < a2 else a2
    lo[0] = a2 if a2 < a0 else a0
    b0 = b1 if b1 > b0 else b0
    b2 = b3 if b3 > b2 else b2
    hi[0] = b2 if b2 > b0 else b0
    return (z0 + z1) + (z2 + z3) == 0.0


cdef bint _unit_fused_lasso(
    Py_ssize_t K,
    const double* y,
    const double* lam,
    double step,
    double* out,
    double* work,
    double* total,
) noexcept nogil:
    """Johnson's DP specialised to unit weights: the TV prox of y with edge
    penalties step * lam_k (the product is formed here, as NumPy would, so that
    the prox driver needs no array of penalties).

    With w_k = 1 every piece of D_k has slope >= 1 (clipping leaves constant end
    pieces, and node k adds t - y_k everywhere), so D_k is strictly increasing:
    t-_k < t+_k (equal when lam = 0), the root of D_{K-1} is unique, and no
    piece is ever flat. That removes, compared with `_dp`, the zero-weight
    branches and events, the normalisation, and the second root scan; and the
    end pieces are known in closed form after each clip: slope 1, intercept
    -lam_e - y_{k+1} (left) and lam_e - y_{k+1} (right), as in Johnson's own
    implementation. Knots are stored interleaved (position, change of slope,
    change of intercept) so that a pop touches one cache line.

    Penalties are capped at C = 2 K (max y - min y): the minimiser lies in
    [min y, max y], so its dual variable u_l = sum_{k<l} (theta_k - y_k) obeys
    |u_l| <= K (max y - min y) / 2 < C and no capped edge can carry a jump
    (|u_l| = lam_l there); the capped problem therefore has the same solution,
    and -lam + (c + lam) never costs eps * lam of accuracy (lam = inf works).

    t-_k is written to out[k] (overwritten by the backtrack), t+_k to work
    after the knots. Returns False, out untouched, when max |y| is outside
    [_UNIT_YMIN, _UNIT_YMAX] (the caller then uses the scaled DP); otherwise
    out holds the solution, clipped to [min y, max y] like the general kernel's,
    and total[0] its sum (the block mean costs no extra pass). K >= 1.
    """
    cdef Py_ssize_t cap3 = 3 * (2 * K + 2)
    cdef double* TP = work + cap3
    cdef Py_ssize_t k, lo, hi
    cdef double ymin, ymax, big, cap
    cdef double lm, s, c, x, xprev, tm, tp, sm, cm, cl, cr, th, acc

    # finiteness is the callers' business (validated, or checked by the driver)
    _data_range(K, y, &ymin, &ymax)
    big = ymax if ymax > -ymin else -ymin
    if not (_UNIT_YMIN <= big <= _UNIT_YMAX):
        return False
    if K == 1:
        out[0] = y[0]
        total[0] = y[0]
        return True
    cap = 2.0 * <double>K * (ymax - ymin)

    # Knots lo..hi (empty when lo > hi) sit at work[3 i], work[3 i + 1],
    # work[3 i + 2]. Each step pushes one knot on each side, so starting from
    # the middle, K - 1 steps keep 1 <= lo and hi <= 2 K - 2.
    lo = K
    hi = K - 1
    # D_0(t) = t - y_0: both end pieces are (slope 1, intercept -y_0)
    cl = -y[0]
    cr = -y[0]
    for k in range(K - 1):
        lm = step * lam[k + 1]
        if lm > cap:
            lm = cap
        # ---- t- = sup{D < -lm}: pop knots from the left
        s = 1.0
        c = cl
        xprev = -INFINITY
        while lo <= hi:
            x = work[3 * lo]
            if s * x + c >= -lm:
                break
            s += work[3 * lo + 1]
            c += work[3 * lo + 2]
            xprev = x
            lo += 1
        if lo > hi:
            # past every knot: the exact right end piece, not the sum of deltas
            s = 1.0
            c = cr
            tm = -lm - c
        else:
            tm = (-lm - c) / s
            # rounding must not move the knot out of its piece
            if tm > work[3 * lo]:
                tm = work[3 * lo]
        if tm < xprev:
            tm = xprev
        lo -= 1
        work[3 * lo] = tm
        work[3 * lo + 1] = s
        work[3 * lo + 2] = c + lm
        # the piece right of t-, exact, for the right scan if it gets there
        sm = s
        cm = c
        # the solution lies in [min y, max y]: clip t- there now (the
        # backtrack's clip then keeps theta in range with no extra test)
        out[k] = tm if tm < ymax else ymax

        # ---- t+ = inf{D > lm}: pop knots from the right, down to t-
        # (D(t-) = -lm <= lm, so t+ >= t-)
        s = 1.0
        c = cr
        xprev = INFINITY
        while hi > lo:
            x = work[3 * hi]
            if s * x + c <= lm:
                break
            s -= work[3 * hi + 1]
            c -= work[3 * hi + 2]
            xprev = x
            hi -= 1
        if hi == lo:
            s = sm
            c = cm
        tp = (lm - c) / s
        if tp > xprev:
            tp = xprev
        if tp < work[3 * hi]:
            tp = work[3 * hi]
        hi += 1
        work[3 * hi] = tp
        work[3 * hi + 1] = -s
        work[3 * hi + 2] = lm - c
        TP[k] = tp if tp > ymin else ymin

        # ---- add node k + 1 to the clipped end pieces (0, -lm) and (0, lm)
        cl = -lm - y[k + 1]
        cr = lm - y[k + 1]

    # ---- theta_{K-1}: the root of the strictly increasing D_{K-1}
    s = 1.0
    c = cl
    xprev = -INFINITY
    while lo <= hi:
        x = work[3 * lo]
        if s * x + c >= 0.0:
            break
        s += work[3 * lo + 1]
        c += work[3 * lo + 2]
        xprev = x
        lo += 1
    if lo > hi:
        th = -cr
    else:
        th = -c / s
        if th > work[3 * lo]:
            th = work[3 * lo]
    if th < xprev:
        th = xprev
    if th < ymin:
        th = ymin
    if th > ymax:
        th = ymax

    # ---- backtrack: theta_k = clip(theta_{k+1}, t-_k, t+_k), summing as we go
    out[K - 1] = th
    acc = th
    for k in range(K - 2, -1, -1):
        if th < out[k]:
            th = out[k]
        if th > TP[k]:
            th = TP[k]
        out[k] = th
        acc += th
    total[0] = acc
    return True


cdef void weighted_fused_lasso(
    Py_ssize_t K,
    const double* y,
    const double* w,
    const double* lam,
    double* out,
    double* work,
) noexcept nogil:
    """Exact weighted FLSA (see module docstring); `w` NULL means unit weights.

    Conventions: all w_k = 0 (or y_k = 0 wherever w_k > 0) gives theta = 0. A
    level not determined by the problem (a run of zero-weight nodes cut off from
    every positive weight by zero-penalty edges) copies its right neighbour, or,
    at the end of the chain, is the point of [min y, max y] nearest to 0.
    Weights below 1e-200 max(w) count as zero. The output always lies in
    [min y, max y] over the positive-weight nodes, hence is finite.
    """
    cdef Py_ssize_t k
    cdef double ysc, wsc, ymin, ymax, t
    cdef DPEvent ev
    if K <= 0:
        return
    if w == NULL and _unit_fused_lasso(K, y, lam, 1.0, out, work, &t):
        return
    if not _scales(K, y, w, &ysc, &wsc, &ymin, &ymax):
        for k in range(K):
            out[k] = 0.0
        return
    if K == 1:
        out[0] = y[0]
        return
    _dp(K, y, w, lam, NULL, ysc, wsc, 0.0, 1.0, out, work, &ev)
    # Rescale and clip to the data range: the exact solution lies in it, so the
    # clip only removes rounding and fixes the free levels' convention.
    for k in range(K):
        t = out[k] * ysc
        if t < ymin:
            t = ymin
        if t > ymax:
            t = ymax
        out[k] = t


# ---------------------------------------------------------------------------
# Python wrappers: called only by binarsity_stats.penalty._prox after validation.
# ---------------------------------------------------------------------------

def work_size(Py_ssize_t K):
    """Number of doubles of work space the kernels need for a chain of K."""
    return fused_lasso_work_size(K)


def weighted_fused_lasso_py(const double[::1] y, const double[::1] w,
                            const double[::1] lam, double[::1] out):
    """Exact weighted FLSA of one chain into `out`.

    The lengths are checked here (the values — finite y, w and lam >= 0 — by the caller,
    ``_prox._chain``): whatever it is handed, the DP never reads or writes past an array.
    """
    cdef Py_ssize_t K = y.shape[0]
    if w.shape[0] != K or lam.shape[0] != K or out.shape[0] != K:
        raise ValueError(
            f"y, w, lam and out must have the same length; got {K}, {w.shape[0]}, "
            f"{lam.shape[0]} and {out.shape[0]}."
        )
    cdef double[::1] work = np.empty(fused_lasso_work_size(K))
    if K == 0:
        return
    with nogil:
        weighted_fused_lasso(K, &y[0], &w[0], &lam[0], &out[0], &work[0])
