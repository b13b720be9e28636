# cython: language_level=3
"""Sufficient statistics of the one-hot design and block steps solved from them (design.md §9).

Two kernels, each called only by its driver ``_gram`` (after validation):

* :func:`pair_tables` and :func:`bin_free_sums` build, in one pass over the rows per
  task, the weighted Gram of the one-hot design G = X^Bᵀ S X^B (block (j, l): the
  w-weighted d_j × d_l co-occurrence table of the codes of blocks j and l; diagonal
  blocks are diagonal, the bin sums of w) and the products with the free columns
  U and a response z: X^Bᵀ S U and X^Bᵀ S z. A *task* is one pair of blocks (or one
  block) and writes only its own cells, so the driver runs disjoint task lists in
  threads (the GIL is released for the whole call). Every cell is summed in row order:
  the result does not depend on the number of threads, and equals ``np.bincount`` of
  the same rows bit for bit.
* :func:`gram_cd_sweep`: one Gauss–Seidel sweep of exact block steps on the quadratic
  model m(x) = gᵀ(x − x⁰) + ½ (x − x⁰)ᵀ G (x − x⁰) with the gradient g kept up to date
  from the Gram: a block step costs O(d_j · d) (a sweep O(d²)) whatever n.
"""

cimport cython
from libc.math cimport fabs
from libc.stdint cimport uint8_t, uint16_t

from binarsity_stats.kernels._block_step cimport fused_block_step, recentre_block
from binarsity_stats.kernels._fused_lasso cimport fused_lasso_work_size

ctypedef fused code_t:
    uint8_t
    uint16_t
    Py_ssize_t

# Block steps this kernel knows, by id (the same ids as ``_cd_fast``'s).
cdef enum:
    _STEP_FUSED = 0

#: Every block step of :func:`gram_cd_sweep` (a block of another kind is refused).
KERNEL_STEPS = (_STEP_FUSED,)


def pair_tables(
    const code_t[:, ::1] codes,
    const Py_ssize_t[::1] block_ptr,
    const Py_ssize_t[::1] task_j,
    const Py_ssize_t[::1] task_l,
    const double[::1] w,
    double[:, ::1] out,
):
    """Add the w-weighted co-occurrence tables of the block pairs (j, l) into ``out``.

    For every task t with j = task_j[t] < l = task_l[t]:
    ``out[s_j + c_ij, s_l + c_il] += w_i`` over the rows (NumPy:
    ``np.bincount(c_j * d_l + c_l, weights=w)``), then the table's transpose is copied
    into block (l, j). A code at or above its block's size is skipped and counted:
    the number of such codes is returned (0 for valid input; the driver raises).
    """
    cdef Py_ssize_t n = codes.shape[1], n_tasks = task_j.shape[0]
    cdef Py_ssize_t t, i, j, l, sj, sl, dj, dl, a, b, cj, cl, bad = 0
    cdef Py_ssize_t d = out.shape[0], p = codes.shape[0]
    if w.shape[0] != n or out.shape[1] != d or block_ptr.shape[0] != p + 1:
        raise ValueError("pair_tables: inconsistent shapes")
    if task_l.shape[0] != n_tasks:
        raise ValueError("pair_tables: task lists differ in length")
    for t in range(n_tasks):
        j = task_j[t]
        l = task_l[t]
        if j < 0 or l < 0 or j >= p or l >= p or j == l:
            raise ValueError("pair_tables: bad task")
        if block_ptr[j + 1] > d or block_ptr[l + 1] > d:
            raise ValueError("pair_tables: block_ptr beyond the output")
    with nogil:
        for t in range(n_tasks):
            j = task_j[t]
            l = task_l[t]
            sj = block_ptr[j]
            sl = block_ptr[l]
            dj = block_ptr[j + 1] - sj
            dl = block_ptr[l + 1] - sl
            for i in range(n):
                cj = <Py_ssize_t>codes[j, i]
                cl = <Py_ssize_t>codes[l, i]
                if cj < 0 or cj >= dj or cl < 0 or cl >= dl:
                    bad += 1
                    continue
                out[sj + cj, sl + cl] += w[i]
            for a in range(dj):
                for b in range(dl):
                    out[sl + b, sj + a] = out[sj + a, sl + b]
    return bad


def bin_free_sums(
    const code_t[:, ::1] codes,
    const Py_ssize_t[::1] block_ptr,
    const Py_ssize_t[::1] blocks,
    const double[:, ::1] U,
    const double[::1] w,
    const double[::1] z,
    double[:, ::1] BU_out,
    double[::1] Bz_out,
):
    """Add X_jᵀ diag(w) U and X_jᵀ (w z) into rows s_j … of the outputs, for j in ``blocks``.

    NumPy: ``BU[s_j + c_ij, :] += w_i U_i`` and ``Bz[s_j + c_ij] += w_i z_i`` over the
    rows, in row order. ``U`` is C-ordered (n, m). Out-of-range codes are skipped and
    counted (the count is returned).
    """
    cdef Py_ssize_t n = codes.shape[1], m = U.shape[1], nb = blocks.shape[0]
    cdef Py_ssize_t d = BU_out.shape[0], p = codes.shape[0]
    cdef Py_ssize_t t, i, j, s, K, k, c, bad = 0
    cdef double wi
    if w.shape[0] != n or z.shape[0] != n or U.shape[0] != n:
        raise ValueError("bin_free_sums: inconsistent row counts")
    if BU_out.shape[1] != m or Bz_out.shape[0] != d or block_ptr.shape[0] != p + 1:
        raise ValueError("bin_free_sums: inconsistent shapes")
    for t in range(nb):
        j = blocks[t]
        if j < 0 or j >= p or block_ptr[j + 1] > d:
            raise ValueError("bin_free_sums: bad block")
    with nogil:
        for t in range(nb):
            j = blocks[t]
            s = block_ptr[j]
            K = block_ptr[j + 1] - s
            for i in range(n):
                k = <Py_ssize_t>codes[j, i]
                if k < 0 or k >= K:
                    bad += 1
                    continue
                wi = w[i]
                Bz_out[s + k] += wi * z[i]
                for c in range(m):
                    BU_out[s + k, c] += wi * U[i, c]
    return bad


def gram_cd_sweep(
    const Py_ssize_t[::1] block_ptr,
    const Py_ssize_t[::1] active,
    const double[::1] lam_w,
    const double[::1] H,
    const double[::1] counts,
    const double[:, ::1] G,
    const double[:, ::1] BU,
    double[::1] theta,
    double[::1] g,
    double[::1] gU,
    bint fit_intercept,
    double constraint_tol,
    double[::1] work,
    const unsigned char[::1] steps=None,
):
    """One Gauss–Seidel sweep of exact block steps over ``active``, from the Gram.

    ``g`` is the model's gradient in the bins (Gθ + BU f − b) and ``gU`` in the free
    columns (BUᵀθ + UU f − b_U); both are updated with every block's change dl:
    ``g += G[block, :]ᵀ dl`` (G symmetric: rows are read), ``gU += BU[block, :]ᵀ dl``.
    The block step is the weighted fused lasso of ``_cd_fast.cd_sweep`` with weights
    H (the diagonal of G, plus a ridge) and targets θ⁰ − g/H. With an intercept the
    block is then re-centred (n_jᵀθ_j = 0) and the shift returned for β0: the model's
    gradient does not change (G 1_j = BU[:, 0] for the ones column). Returns
    ``(max_violation, intercept_shift, max_abs_step)``.
    """
    cdef Py_ssize_t d = theta.shape[0], m = gU.shape[0], p = block_ptr.shape[0] - 1
    cdef Py_ssize_t a, j, k, i, c, K, start, maxK = 0, n_active = active.shape[0]
    cdef double worst = 0.0, viol, shift_total = 0.0, dk, step_max = 0.0
    cdef double *yt
    cdef double *wt
    cdef double *u
    cdef double *dl
    cdef double *S
    cdef double *dpw
    cdef int status = 0
    cdef bint has_steps = steps is not None

    if (G.shape[0] != d or G.shape[1] != d or BU.shape[0] != d or BU.shape[1] != m
            or g.shape[0] != d or H.shape[0] != d or lam_w.shape[0] != d
            or counts.shape[0] != d or block_ptr[p] != d):
        raise ValueError("gram_cd_sweep: inconsistent shapes")
    if has_steps and steps.shape[0] != p:
        raise ValueError("gram_cd_sweep: steps must have one entry per block")
    for a in range(n_active):
        j = active[a]
        if j < 0 or j >= p:
            raise ValueError("gram_cd_sweep: active block out of range")
        K = block_ptr[j + 1] - block_ptr[j]
        if K < 0 or block_ptr[j] < 0:
            raise ValueError("gram_cd_sweep: bad block_ptr")
        if K > maxK:
            maxK = K
        if has_steps and steps[j] != _STEP_FUSED:
            raise ValueError(f"gram_cd_sweep: block {j} has an unknown step {steps[j]}")
    if work.shape[0] < 6 * maxK + fused_lasso_work_size(maxK):
        raise ValueError("gram_cd_sweep: work buffer too small")
    if n_active == 0:
        return 0.0, 0.0, 0.0

    with nogil:
        yt = &work[0]
        wt = yt + maxK
        u = wt + maxK
        dl = u + maxK
        S = dl + maxK
        dpw = S + maxK
        for a in range(n_active):
            j = active[a]
            start = block_ptr[j]
            K = block_ptr[j + 1] - start
            viol = fused_block_step(K, &g[start], &theta[start], &H[start], &lam_w[start],
                                    &counts[start], fit_intercept, constraint_tol,
                                    yt, wt, u, S, dpw, &status)
            if viol > worst:
                worst = viol
            # the model's gradient moves with the block's change (before re-centring)
            for k in range(K):
                dk = u[k] - theta[start + k]
                dl[k] = dk
                if fabs(dk) > step_max:
                    step_max = fabs(dk)
                if dk != 0.0:
                    for i in range(d):
                        g[i] += G[start + k, i] * dk
                    for c in range(m):
                        gU[c] += BU[start + k, c] * dk
            if fit_intercept:
                # re-centre: n_jᵀθ_j = 0, the shift goes to the intercept (model unchanged)
                shift_total += recentre_block(K, &counts[start], u)
            for k in range(K):
                theta[start + k] = u[k]
    return worst, shift_total, step_max
