# cython: language_level=3
"""Inner sweep of block coordinate descent with exact block steps (design.md §4).

One outer (proximal-Newton) iteration fixes the working weights h_i = s_i b''(η_i)/W
and the working gradient r_i = s_i (b'(η_i) − y_i)/W at the current η. The quadratic
model of the loss in the change Δη of the linear predictor is

    Q(Δη) = Σ_i r_i Δη_i + ½ Σ_i h_i Δη_i²,

whose gradient at the current inner point is z_i = r_i + h_i Δη_i. For block j (with
the other blocks fixed) and θ⁰ its current levels, the block problem

    min_u  Σ_k [g_k (u_k − θ⁰_k) + ½ H_k (u_k − θ⁰_k)²] + Σ_{k≥1} λω_k |u_k − u_{k−1}|,

g_k = Σ_{i: c_ij = k} z_i (a histogram) and H_k = Σ_{i: c_ij = k} h_i, is a weighted
fused-lasso signal approximator with targets θ⁰_k − g_k / H_k, solved exactly by the
dynamic programme of ``_fused_lasso``. With an intercept the block is then re-centred
(n_jᵀu = 0) and the shift moved into the intercept: η does not change. Without an
intercept the constrained DP enforces n_jᵀu = 0 directly.
"""

cimport cython
from libc.math cimport fabs
from libc.stdint cimport uint8_t, uint16_t

from binarsity_stats.kernels._block_step cimport fused_block_step, recentre_block
from binarsity_stats.kernels._fused_lasso cimport fused_lasso_work_size
from binarsity_stats.kernels._isotonic cimport monotone_fused_lasso, monotone_work_size
from binarsity_stats.kernels._kkt cimport constrained_suffix_sums
from libc.math cimport INFINITY, NAN

ctypedef fused code_t:
    uint8_t
    uint16_t

# Block steps, by id (``_blocks.BlockKind.step``): a block's kind selects its step.
cdef enum:
    _STEP_FUSED = 0
    _STEP_INCREASING = 1
    _STEP_DECREASING = 2

#: Id of the weighted fused-lasso step (TV chains; free levels, whose weights are 0).
STEP_FUSED = _STEP_FUSED
#: Ids of the monotone chains' steps: weighted isotonic regression of shifted targets
#: (PAVA, ``_isotonic``; design.md §7), non-decreasing and non-increasing.
STEP_INCREASING = _STEP_INCREASING
STEP_DECREASING = _STEP_DECREASING
#: Every block step this kernel knows.
KERNEL_STEPS = (STEP_FUSED, STEP_INCREASING, STEP_DECREASING)


cdef inline double _monotone_violation(
    Py_ssize_t K, const double* g, const double* theta, const double* lam_w,
    const double* counts, bint fit_intercept, const unsigned char* linked, double sgn,
    double* S,
) noexcept nogil:
    """Largest KKT violation of one monotone block (sgn = +1 non-decreasing, −1 not).

    NumPy equivalent (``_blocks._kkt_monotone``): with s = sgn·S_l, a jump the right way
    needs s = −λω_l (violation |s + λω_l|), a flat edge s ≥ −λω_l (violation
    max(−s − λω_l, 0)), a jump the wrong way is infeasible (∞); an unlinked edge |S_l|.
    """
    cdef Py_ssize_t k
    cdef double v, s, d, worst = 0.0
    constrained_suffix_sums(K, g, counts, fit_intercept, S)
    for k in range(1, K):
        if linked != NULL and linked[k] == 0:
            v = S[k] if S[k] >= 0 else -S[k]
        else:
            s = sgn * S[k]
            d = sgn * (theta[k] - theta[k - 1])
            if d > 0:
                v = s + lam_w[k]
                if v < 0:
                    v = -v
            elif d < 0:
                v = INFINITY
            else:
                v = -s - lam_w[k]
        if v > worst:
            worst = v
    return worst


@cython.boundscheck(False)
def cd_sweep(
    const code_t[:, ::1] codes,
    const Py_ssize_t[::1] block_ptr,
    const Py_ssize_t[::1] active,
    const double[::1] lam_w,
    const double[::1] H,
    const double[::1] counts,
    double[::1] theta,
    double[::1] z,
    double[::1] delta_eta,
    const double[::1] h,
    bint fit_intercept,
    double constraint_tol,
    double[::1] work,
    const unsigned char[::1] steps=None,
    const unsigned char[::1] linked=None,
):
    """One Gauss–Seidel sweep over the ``active`` blocks; updates θ, z and Δη in place.

    Parameters are validated by ``_design.BinnedDesign`` (codes of block j are < its
    size) and ``_solvers._cd`` (``H > 0`` wherever a bin has rows, ``work`` large
    enough). ``steps[j]`` is the id of block j's step (its kind's, ``_blocks``; None:
    every block takes the fused-lasso step); an unknown id is refused. ``linked[k]``
    (one per level; None: every edge) says whether level k is joined to level k − 1 in
    its chain: a monotone step orders only linked edges (an unlinked one, such as a
    "missing" level's, is free whatever λ). Returns
    ``(max_violation, intercept_shift, max_abs_step)``: the largest block KKT violation
    of the quadratic model seen *before* each block's update, the total shift moved
    from the blocks into the intercept, and the largest level change.

    The pass that applies block j's change to z also builds the histogram of the new z
    for the next active block, so a block costs one pass over the rows, not two.
    """
    cdef Py_ssize_t n = codes.shape[1]
    cdef Py_ssize_t a, j, jn, k, i, K, Kn, start, maxK = 0, n_active = active.shape[0]
    cdef double worst = 0.0, viol, shift_total = 0.0, dk, zi, step_max = 0.0
    cdef double *g
    cdef double *gn
    cdef double *tmp
    cdef double *yt
    cdef double *wt
    cdef double *u
    cdef double *dl
    cdef double *S
    cdef double *dpw
    cdef bint moved
    cdef int status = 0
    cdef bint has_steps = steps is not None
    cdef unsigned char stp = _STEP_FUSED
    cdef const unsigned char* lk = NULL

    if has_steps and steps.shape[0] != block_ptr.shape[0] - 1:
        raise ValueError("cd_sweep: steps must have one entry per block")
    for a in range(n_active):
        j = active[a]
        K = block_ptr[j + 1] - block_ptr[j]
        if K > maxK:
            maxK = K
        if has_steps and steps[j] > _STEP_DECREASING:
            raise ValueError(f"cd_sweep: block {j} has an unknown step {steps[j]}")
    if work.shape[0] < 7 * maxK + fused_lasso_work_size(maxK):
        raise ValueError("cd_sweep: work buffer too small")
    if monotone_work_size(maxK) > fused_lasso_work_size(maxK):
        raise ValueError("cd_sweep: work buffer too small for a monotone step")
    if linked is not None:
        if linked.shape[0] != counts.shape[0] or block_ptr[block_ptr.shape[0] - 1] > linked.shape[0]:
            raise ValueError("cd_sweep: linked must have one entry per level")
        if linked.shape[0] > 0:
            lk = &linked[0]
    if n_active == 0:
        return 0.0, 0.0, 0.0

    with nogil:
        g = &work[0]
        gn = g + maxK
        yt = gn + maxK
        wt = yt + maxK
        u = wt + maxK
        dl = u + maxK
        S = dl + maxK
        dpw = S + maxK
        # histogram of z for the first active block: g = bincount(codes[j], weights=z)
        j = active[0]
        for k in range(block_ptr[j + 1] - block_ptr[j]):
            g[k] = 0.0
        for i in range(n):
            g[codes[j, i]] += z[i]
        for a in range(n_active):
            j = active[a]
            start = block_ptr[j]
            K = block_ptr[j + 1] - start
            viol = 0.0
            if has_steps:
                stp = steps[j]
            # the block's kind selects its KKT rule and exact step (one branch per step)
            if stp == _STEP_FUSED:
                # exact block step: weighted FLSA with targets θ⁰ − g/H
                viol = fused_block_step(K, g, &theta[start], &H[start], &lam_w[start],
                                        &counts[start], fit_intercept, constraint_tol,
                                        yt, wt, u, S, dpw, &status)
            else:
                # monotone chain: PAVA of the shifted targets (design.md §7); the
                # numerators H_k θ⁰_k − g_k are the block model's linear term
                viol = _monotone_violation(
                    K, g, &theta[start], &lam_w[start], &counts[start], fit_intercept,
                    (lk + start) if lk != NULL else NULL,
                    1.0 if stp == _STEP_INCREASING else -1.0, S)
                for k in range(K):
                    wt[k] = H[start + k]
                    yt[k] = wt[k] * theta[start + k] - g[k]
                status = monotone_fused_lasso(
                    K, yt, wt, &lam_w[start], &counts[start],
                    (lk + start) if lk != NULL else NULL,
                    1 if stp == _STEP_INCREASING else -1, not fit_intercept, u, dpw,
                    constraint_tol)
            if viol > worst:
                worst = viol
            moved = False
            for k in range(K):
                dl[k] = u[k] - theta[start + k]
                if dl[k] != 0.0:
                    moved = True
                if fabs(dl[k]) > step_max:
                    step_max = fabs(dl[k])
            if fit_intercept:
                # re-centre: n_jᵀθ_j = 0, the shift goes to the intercept (η unchanged)
                shift_total += recentre_block(K, &counts[start], u)
            for k in range(K):
                theta[start + k] = u[k]
            if a + 1 < n_active:
                jn = active[a + 1]
                Kn = block_ptr[jn + 1] - block_ptr[jn]
                for k in range(Kn):
                    gn[k] = 0.0
                if moved:
                    # z += h * dl[codes_j]; Δη += dl[codes_j]; gn = bincount(codes_jn, z)
                    for i in range(n):
                        dk = dl[codes[j, i]]
                        zi = z[i] + h[i] * dk
                        z[i] = zi
                        delta_eta[i] += dk
                        gn[codes[jn, i]] += zi
                else:
                    for i in range(n):
                        gn[codes[jn, i]] += z[i]
                tmp = g
                g = gn
                gn = tmp
            elif moved:
                for i in range(n):
                    dk = dl[codes[j, i]]
                    z[i] += h[i] * dk
                    delta_eta[i] += dk
    return worst, shift_total, step_max


@cython.boundscheck(False)
@cython.wraparound(False)
cdef inline void _suffix_sums(
    const double[::1] x, double[::1] c, Py_ssize_t d
) noexcept nogil:
    """c_k = Σ_{m ≥ k} x_m for k < d and c_d = 0, as NumPy's cumsum of the reversed x.

    The same additions in the same order as ``np.cumsum(x[::-1])[::-1]`` (the first
    term taken as it is, not added to 0.0: −0.0 stays −0.0), so that ``kkt_blocks``
    agrees with the NumPy rule bit for bit. The caller has checked ``x`` has d entries
    and ``c`` at least d + 1.
    """
    cdef Py_ssize_t k
    cdef double acc = 0.0
    c[d] = 0.0
    for k in range(d - 1, -1, -1):
        if k == d - 1:
            acc = x[k]
        else:
            acc = acc + x[k]
        c[k] = acc


def kkt_blocks(
    const double[::1] g,
    const double[::1] theta,
    const double[::1] weights,
    const double[::1] counts,
    const Py_ssize_t[::1] block_ptr,
    const unsigned char[::1] steps,
    double lam,
    bint fit_intercept,
    double[::1] S,
    double[::1] N,
    double[::1] out,
):
    """Per-block KKT violation of the chain kinds, as ``BinarsityPenalty.kkt_violation``.

    The same arithmetic as the NumPy rule, operation for operation (the suffix sums as
    one reversed running sum over all levels less its value at the block's end, the
    multiplier μ_j = −S_j0 / N_j0 without an intercept, λω as ``lam * weights``, a
    weight-0 edge's |S_l|, NaN propagated), so the two agree bit for bit. ``steps[j]``
    is block j's step id (``STEP_FUSED``: a TV chain or free levels, whose weights are
    0; ``STEP_INCREASING``/``STEP_DECREASING``: a monotone chain). Every size and offset
    is checked here (O(p)): nothing is read out of bounds whatever is passed. ``S`` and
    ``N`` are scratch of length d + 1; the violations go to ``out`` (length p).
    """
    cdef Py_ssize_t d = g.shape[0], p = block_ptr.shape[0] - 1
    cdef Py_ssize_t j, k, s, e
    cdef double mu, v, sk, diff, worst, sgn
    cdef unsigned char stp
    cdef bint nan
    if p < 0:
        raise ValueError("kkt_blocks: block_ptr must have at least one entry")
    if (theta.shape[0] != d or weights.shape[0] != d or counts.shape[0] != d
            or S.shape[0] < d + 1 or N.shape[0] < d + 1):
        raise ValueError("kkt_blocks: g, theta, weights, counts must have one entry per "
                         "level and S, N at least d + 1")
    if steps.shape[0] != p or out.shape[0] != p:
        raise ValueError("kkt_blocks: steps and out must have one entry per block")
    if block_ptr[0] != 0 or block_ptr[p] != d:
        raise ValueError("kkt_blocks: block_ptr must run from 0 to the number of levels")
    for j in range(p):
        if block_ptr[j + 1] < block_ptr[j]:
            raise ValueError("kkt_blocks: block_ptr must be non-decreasing")
        if steps[j] > _STEP_DECREASING:
            raise ValueError(f"kkt_blocks: block {j} has an unknown step {steps[j]}")
    with nogil:
        _suffix_sums(g, S, d)
        if not fit_intercept:
            _suffix_sums(counts, N, d)
        for j in range(p):
            s = block_ptr[j]
            e = block_ptr[j + 1]
            worst = 0.0
            nan = False
            if e > s:
                # S_l = c_l − c_end (and N alike), then the multiplier's correction
                mu = 0.0
                if not fit_intercept:
                    if N[s] - N[e] > 0:
                        mu = -(S[s] - S[e]) / (N[s] - N[e])
                stp = steps[j]
                sgn = -1.0 if stp == _STEP_DECREASING else 1.0
                for k in range(s + 1, e):
                    sk = S[k] - S[e]
                    if not fit_intercept:
                        sk = sk + mu * (N[k] - N[e])
                    if weights[k] == 0:
                        v = fabs(sk)
                    elif stp == _STEP_FUSED:
                        diff = theta[k] - theta[k - 1]
                        if theta[k] != theta[k - 1]:
                            if diff > 0:
                                v = fabs(sk + lam * weights[k])
                            elif diff < 0:
                                v = fabs(sk - lam * weights[k])
                            else:
                                v = diff  # NaN: NumPy's sign is NaN
                        else:
                            v = fabs(sk) - lam * weights[k]
                    else:
                        sk = sgn * sk
                        diff = theta[k] - theta[k - 1]
                        if theta[k] != theta[k - 1] and sgn * diff > 0:
                            v = fabs(sk + lam * weights[k])
                        elif theta[k] != theta[k - 1] and sgn * diff < 0:
                            v = INFINITY
                        else:
                            v = -sk - lam * weights[k]
                    if v != v:
                        nan = True
                    elif v > worst:
                        worst = v
            out[j] = NAN if nan else worst
    return out
