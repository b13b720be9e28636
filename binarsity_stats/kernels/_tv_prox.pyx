# cython: language_level=3
"""The TV and binarsity proximal operators, block by block (design.md §5).

The drivers of ``prox_tv`` / ``prox_binarsity`` (``_prox.py``): every block of θ
through the fastest exact kernel that applies —

* one penalty on every edge, unit weights: Condat's (2013) direct algorithm (here),
  with a re-scan budget that hands its O(K²) worst cases to the DP;
* other unit-weight blocks: the specialised unit-weight DP, and with the constraint
  (mode 2) the constrained search; values outside the unscaled kernels' range: the
  scaled DP — the exact 1-D fused-lasso solvers of ``_fused_lasso.pyx`` and
  ``_fused_lasso_constrained.pyx``, cimported through their ``.pxd`` files.

Only ``_prox.py`` calls the ``def`` functions at the bottom, after validation
(``prox_mean_fast`` checks its own inputs and declines anything unusual).
"""

from libc.math cimport fabs, INFINITY
from libc.stdlib cimport free, malloc

import numpy as np

from binarsity_stats.kernels._fused_lasso cimport (
    _data_range,
    _unit_fused_lasso,
    fused_lasso_work_size,
    weighted_fused_lasso,
)
from binarsity_stats.kernels._fused_lasso_constrained cimport constrained_fused_lasso

# The unscaled unit-weight arithmetic is safe for max |y| in this range (the same
# bounds as _fused_lasso's _UNIT_YMIN/_UNIT_YMAX, which it checks for its own DP).
cdef double _UNIT_YMAX = 1e100
cdef double _UNIT_YMIN = 1e-100


# ---------------------------------------------------------------------------
# Unit weights and one penalty for every edge: Condat's direct algorithm
# ---------------------------------------------------------------------------

# Condat's algorithm backtracks to the start of the current segment after each
# jump, so a contrived signal makes it O(K^2). The work spent re-scanning is
# counted and, past this many multiples of K, the block is left to the
# (worst-case linear) DP.
cdef Py_ssize_t _CONDAT_REWIND = 8


cdef inline Py_ssize_t _fill(double* out, Py_ssize_t first, Py_ssize_t last,
                             double v, double ymin, double ymax,
                             double* acc) noexcept nogil:
    """out[first..last] = v clipped to [ymin, ymax]; adds the run's sum to acc.
    Returns last + 1, the start of the next segment."""
    cdef Py_ssize_t i
    if v < ymin:
        v = ymin
    if v > ymax:
        v = ymax
    for i in range(first, last + 1):
        out[i] = v
    acc[0] += v * <double>(last - first + 1)
    return last + 1


cdef bint _condat_tv(
    Py_ssize_t K,
    const double* y,
    double lm,
    double ymin,
    double ymax,
    double* out,
    double* total,
    Py_ssize_t budget,
) noexcept nogil:
    """TV prox of y with the same penalty lm > 0 on every edge, by L. Condat,
    "A direct algorithm for 1-D total variation denoising", IEEE Signal Process.
    Lett. 20(11):1054-1057, 2013 (the 2013 version, not the 2017 one).

    The algorithm follows the dual u_k = u_{k-1} + y_k - theta_k (u_{-1} = 0,
    |u_k| <= lm, u_k = +lm at a downward jump after k, -lm at an upward one,
    u_{K-1} = 0):
    for the segment that starts at k0 it keeps the range [vmin, vmax] of the
    levels still feasible and the values umin, umax that u_k takes at the
    current sample k if the segment's level is vmin, vmax (shifted so that
    both start from +-lm). Adding y_{k+1} moves both; when the lowest
    level would push u below -lm the segment must end with a downward jump at
    the last place kminus where vmin was tight (symmetrically for the highest
    level and an upward jump at kplus), its level is vmin (vmax), and the
    scan restarts at the next sample. When neither happens, a candidate level
    that has become tight is raised (lowered) to the mean that keeps u = +lm
    (-lm), the division below. At the right end u must be 0, which decides the
    last segments the same way.

    Per sample this is two additions and two comparisons on the dependent
    chain, with a division only when a bound moves, against the DP's
    pop-and-divide per knot; but the restart after a jump re-reads the
    samples from k0, so the work is O(K^2) in the worst case. That re-read is
    counted and, past `budget` samples, False is returned with out
    partially written (the caller then runs the DP). Otherwise out holds the
    solution clipped to [ymin, ymax] (the exact one lies there; the clip only
    removes rounding), total[0] its sum, and True is returned. K >= 2.
    """
    cdef Py_ssize_t k = 0, k0 = 0, kminus = 0, kplus = 0
    cdef Py_ssize_t rewound = 0
    cdef double umin = lm, umax = -lm
    cdef double vmin = y[0] - lm, vmax = y[0] + lm
    cdef double twolm = 2.0 * lm
    cdef double acc = 0.0
    while True:
        if k == K - 1:
            # right boundary: the residual of the segment must vanish
            if umin < 0.0:
                # even the lowest level leaves too little: jump down after
                # kminus (kminus < K - 1 here, since umin = lm when it is set)
                rewound += k - kminus
                k0 = _fill(out, k0, kminus, vmin, ymin, ymax, &acc)
                k = k0
                kminus = k0
                vmin = y[k0]
                umin = lm
                # vmax is kept: the new segment's upper bound is unchanged
                umax = vmin + umin - vmax
            elif umax > 0.0:
                rewound += k - kplus
                k0 = _fill(out, k0, kplus, vmax, ymin, ymax, &acc)
                k = k0
                kplus = k0
                vmax = y[k0]
                umax = -lm
                umin = vmax + umax - vmin
            else:
                # the level is the mean that makes the residual 0
                vmin += umin / <double>(k - k0 + 1)
                _fill(out, k0, k, vmin, ymin, ymax, &acc)
                total[0] = acc
                return True
            if rewound > budget:
                return False
            continue
        umin += y[k + 1] - vmin
        if umin < -lm:
            # negative jump after kminus; restart there with both bounds
            # anchored at y[k0] (the incoming dual is now -lm)
            rewound += k - kminus
            k0 = _fill(out, k0, kminus, vmin, ymin, ymax, &acc)
            k = k0
            kminus = k0
            kplus = k0
            vmin = y[k0]
            vmax = vmin + twolm
            umin = lm
            umax = -lm
            if rewound > budget:
                return False
            continue
        umax += y[k + 1] - vmax
        if umax > lm:
            # positive jump after kplus (incoming dual +lm)
            rewound += k - kplus
            k0 = _fill(out, k0, kplus, vmax, ymin, ymax, &acc)
            k = k0
            kminus = k0
            kplus = k0
            vmax = y[k0]
            vmin = vmax - twolm
            umin = lm
            umax = -lm
            if rewound > budget:
                return False
            continue
        k += 1
        if umin >= lm:
            # the lowest level is tight: raise it so that u = lm again
            kminus = k
            vmin += (umin - lm) / <double>(k - k0 + 1)
            umin = lm
        if umax <= -lm:
            kplus = k
            vmax += (umax + lm) / <double>(k - k0 + 1)
            umax = -lm


cdef bint _condat_block(
    Py_ssize_t K,
    const double* y,
    const double* lam,
    double step,
    double* out,
    double* total,
) noexcept nogil:
    """The TV prox of one block by Condat's algorithm when it applies: K >= 2,
    every edge penalty step * lam[1..K-1] equal (tested on lam), finite and
    > 0, and max |y| in the unit kernel's range [_UNIT_YMIN, _UNIT_YMAX] (the
    same unscaled arithmetic is then safe). Returns False, with nothing
    promised about out, when it does not apply or Condat's re-scan budget runs
    out; the caller then runs `_unit_fused_lasso`. Otherwise out and total[0]
    as in `_unit_fused_lasso`."""
    cdef Py_ssize_t k
    cdef double l1, lm, ymin, ymax, big, s
    if K < 2:
        return False
    l1 = lam[1]
    # four edges per test: one branch per chunk instead of one per edge
    k = 2
    while k + 4 <= K:
        if (lam[k] != l1) | (lam[k + 1] != l1) | (lam[k + 2] != l1) | (lam[k + 3] != l1):
            return False
        k += 4
    while k < K:
        if lam[k] != l1:
            return False
        k += 1
    lm = step * l1
    if not (0.0 < lm < INFINITY):
        return False
    if not _data_range(K, y, &ymin, &ymax):
        return False
    big = ymax if ymax > -ymin else -ymin
    if not (_UNIT_YMIN <= big <= _UNIT_YMAX):
        return False
    if lm >= 0.5 * <double>K * (ymax - ymin):
        # No jump: the mean's dual u_l = sum_{k<l} (mean - y_k) has
        # |u_l| <= min(l, K - l) (max y - min y) <= lm, so the constant mean
        # is optimal. Returned directly, since Condat's bounds y_0 -+ lm would
        # cost eps * lm of accuracy.
        s = 0.0
        for k in range(K):
            s += y[k]
        total[0] = 0.0
        _fill(out, 0, K - 1, s / <double>K, ymin, ymax, total)
        return True
    return _condat_tv(K, y, lm, ymin, ymax, out, total, _CONDAT_REWIND * K)


# ---------------------------------------------------------------------------
# Python entry points: called only by binarsity_stats.penalty._prox after validation.
# ---------------------------------------------------------------------------

def condat_tv_py(const double[::1] y, double lm, double[::1] out,
                 Py_ssize_t budget):
    """Condat's kernel alone (tests): the TV prox of y (K >= 2, lm > 0, finite
    values) into out, clipped to the data range. Returns False when more than
    `budget` samples were re-scanned (out is then incomplete)."""
    cdef Py_ssize_t K = y.shape[0], k
    cdef double ymin, ymax, total
    cdef bint ok
    if K < 2 or out.shape[0] != K:
        raise ValueError("K >= 2 and out of the same length are required")
    ymin = y[0]
    ymax = y[0]
    for k in range(K):
        ymin = y[k] if y[k] < ymin else ymin
        ymax = y[k] if y[k] > ymax else ymax
    with nogil:
        ok = _condat_tv(K, &y[0], lm, ymin, ymax, &out[0], &total, budget)
    return ok


def prox_blocks_py(const double[::1] v, const Py_ssize_t[::1] block_ptr,
                   const double[::1] lam, const double[::1] counts,
                   double[::1] out, int mode, double tol, double step=1.0,
                   bint check_lam=False):
    """Block-wise prox with unit observation weights (validated inputs).

    The edge penalties are step * lam (step = 1: lam itself). mode 0: TV prox
    of every block; mode 1: TV prox then subtract the block mean (paper's
    Algorithm 1 for equal counts); mode 2: exact prox with the constraint
    counts' theta_j = 0 (counts must be given). Returns the largest number of
    evaluations used by a block, or -1 if any block failed.

    check_lam (modes 0 and 1): neither lam nor v has been validated; a block
    with a lam that is not finite and >= 0, or a v that is not finite, stops
    the run and -2 is returned (out is then incomplete). The test is nearly
    free on Condat's blocks, whose penalties are compared with each other and
    whose values have their range taken anyway, and one pass over the block
    (in cache for the kernel that follows) on the others.
    """
    return _prox_blocks(v, block_ptr, lam, counts, out, mode, tol, step, check_lam)


cdef inline void _subtract_mean(double* out, Py_ssize_t K, double total) noexcept nogil:
    # mode 1 (equal counts): the constraint's projection is the block's mean shift
    cdef double mean = total / K
    cdef Py_ssize_t k
    for k in range(K):
        out[k] -= mean


cdef int _prox_blocks(const double[::1] v, const Py_ssize_t[::1] block_ptr,
                      const double[::1] lam, const double[::1] counts,
                      double[::1] out, int mode, double tol, double step,
                      bint check_lam) except -100:
    """prox_blocks_py's body (callable from C without new memoryviews)."""
    cdef Py_ssize_t p = block_ptr.shape[0] - 1
    cdef Py_ssize_t j, k, start, K, kmax = 1, wsize
    cdef const double* cptr = NULL
    cdef const double* lptr
    cdef double* work = NULL
    cdef double* lbuf
    cdef double mean
    cdef int it, worst = 0
    cdef bint nomem = False, bad = False
    cdef double lk
    for j in range(p):
        if block_ptr[j + 1] - block_ptr[j] > kmax:
            kmax = block_ptr[j + 1] - block_ptr[j]
    # the kernels' work space, then room for one block's step * lam (only the
    # general kernels read it). Allocated on the first block that needs it:
    # Condat's algorithm needs none, so constant-penalty blocks never pay it.
    wsize = fused_lasso_work_size(kmax)
    if counts is not None and counts.shape[0] > 0:
        cptr = &counts[0]
    if mode == 2 and (cptr == NULL or counts.shape[0] != v.shape[0]):
        raise ValueError("counts of the same length as v are required in mode 2")
    try:
        with nogil:
            for j in range(p):
                start = block_ptr[j]
                K = block_ptr[j + 1] - start
                if check_lam and not ((0.0 <= lam[start] < INFINITY)
                                      and fabs(v[start]) < INFINITY):
                    bad = True
                    break
                if mode != 2 and K == 1:
                    # no edge: theta = v, minus its own mean in mode 1
                    out[start] = 0.0 if mode == 1 else v[start]
                    continue
                # Condat's blocks have every lam[start + 1 ..] equal to l1 with
                # 0 < step * l1 < inf and step finite: all checked
                if mode != 2 and _condat_block(K, &v[start], &lam[start], step,
                                               &out[start], &mean):
                    if mode == 1:
                        _subtract_mean(&out[start], K, mean)
                    continue
                if check_lam:
                    for k in range(start + 1, start + K):
                        lk = lam[k]
                        if not ((0.0 <= lk < INFINITY) and fabs(v[k]) < INFINITY):
                            bad = True
                    if bad:
                        break
                if work == NULL:
                    work = <double*>malloc((wsize + kmax) * sizeof(double))
                    if work == NULL:
                        nomem = True
                        break
                lbuf = work + wsize
                if mode != 2 and _unit_fused_lasso(K, &v[start], &lam[start], step,
                                                   &out[start], work, &mean):
                    if mode == 1:
                        _subtract_mean(&out[start], K, mean)
                    continue
                lptr = &lam[start]
                if step != 1.0:
                    for k in range(K):
                        lbuf[k] = step * lam[start + k]
                    lptr = lbuf
                if mode == 2:
                    it = constrained_fused_lasso(K, &v[start], NULL, lptr,
                                                 cptr + start, &out[start],
                                                 work, tol)
                    if it < 0 or worst < 0:
                        worst = -1
                    elif it > worst:
                        worst = it
                else:
                    # max |v| outside the unscaled kernels' range: the scaled DP
                    weighted_fused_lasso(K, &v[start], NULL, lptr, &out[start],
                                         work)
                    if mode == 1:
                        mean = 0.0
                        for k in range(start, start + K):
                            mean += out[k]
                        _subtract_mean(&out[start], K, mean)
    finally:
        free(work)
    if nomem:
        raise MemoryError()
    if bad:
        return -2
    return worst



cdef object _F64 = np.dtype(np.float64)
cdef object _INTP = np.dtype(np.intp)


def prox_mean_fast(object v, object block_ptr, object weights, object step,
                   double tol):
    """prox_binarsity with equal counts for its common call, or None.

    Taken only when v and weights are float64 and block_ptr intp ndarrays
    (exact type, 1-D, C-contiguous), step a float in [0, inf), block_ptr from
    0 to len(v) strictly increasing and len(weights) = len(v); v's finiteness
    and weights' (finite, >= 0) are checked by the kernel (check_lam). None
    means "take the full path", which then raises its own error on bad input:
    no error is raised here, so the messages stay those of _prox._blocks.
    Same result, bit for bit, as the full path: the same kernel runs.
    """
    cdef const double[::1] vv
    cdef const double[::1] ww
    cdef const Py_ssize_t[::1] pp
    cdef double[::1] oo
    cdef double s
    cdef Py_ssize_t d, p, k
    cdef int status
    if (type(step) is not float or type(v) is not np.ndarray
            or type(weights) is not np.ndarray or type(block_ptr) is not np.ndarray):
        return None
    s = step
    if not (0.0 <= s < INFINITY):
        return None
    if v.dtype != _F64 or weights.dtype != _F64 or block_ptr.dtype != _INTP:
        return None
    try:
        # raises on a wrong number of dimensions or a non-contiguous array. The
        # offsets are copied (p + 1 entries): the kernel reads them without the GIL,
        # and another thread mutating the caller's array after the checks below
        # must not move a block past the end of v.
        vv = v
        ww = weights
        pp = block_ptr.copy()
    except (ValueError, TypeError, BufferError):
        return None
    d = vv.shape[0]
    p = pp.shape[0]
    if ww.shape[0] != d or p < 1 or pp[0] != 0 or pp[p - 1] != d:
        return None
    for k in range(p - 1):
        if pp[k + 1] <= pp[k]:
            return None
    out = np.empty(d)
    if d == 0:
        return out
    oo = out
    status = _prox_blocks(vv, pp, ww, None, oo, 1, tol, s, True)
    if status == -2:
        return None
    return out
