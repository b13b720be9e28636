# cython: language_level=3
"""The polish's Newton system on the fused segments (design.md §9), single-threaded.

Called only by ``engine/_polish`` (its NumPy twins there, ``_face_hessian_numpy`` and
``_cholesky_numpy``, are what the tests compare with):

* :func:`face_hessian`: the curvature Gram of the bins ``B`` (d × d) summed over the
  segments of a face (O(d²) adds into an M × M table, no d-level temporaries), then
  taken to the face's unknowns e_c − a_c e_ref (O(m²)); :func:`face_cross` does the
  same for the bins × free-columns Gram.
* :func:`cholesky` and :func:`cholesky_solve`: the unblocked Cholesky factorisation of
  the small (Jacobi-scaled) face Hessian and its two triangular solves. No BLAS: a
  multi-threaded BLAS spends far more on waking its threads than a matrix of a few
  hundred unknowns costs (on a loaded machine, 100 ms for a 180 × 180 factor).

Every argument is checked before the loops (shapes; every index against the array it
indexes, O(d + m)): whatever they are handed, the kernels never read or write out of
bounds.
"""

cimport cython
from libc.math cimport sqrt


def face_hessian(
    const double[:, ::1] B,
    const Py_ssize_t[::1] seg,
    const Py_ssize_t[::1] cols,
    const Py_ssize_t[::1] refs,
    const double[::1] a,
    double[:, ::1] G,
    double[:, ::1] out,
):
    """Hessian of a face in its unknowns, from the bins' Gram ``B``.

    ``G`` (M × M, overwritten) receives ``G[s, t] = Σ_{seg[k]=s, seg[l]=t} B[k, l]``
    (levels with ``seg[k] < 0`` are skipped); ``out`` (m × m, overwritten) receives
    ``G[c, c'] − a[c'] G[c, r'] − a[c] G[r, c'] + a[c] a[c'] G[r, r']`` with
    c = cols[i], r = refs[i], c' = cols[j], r' = refs[j]. ``refs[i] < 0`` means the
    unknown has no reference segment (its a is ignored).
    """
    cdef Py_ssize_t d = B.shape[0], M = G.shape[0], m = cols.shape[0]
    cdef Py_ssize_t k, l, s, i, j, c, r, c2, r2
    cdef double v, ai, aj
    if B.shape[1] != d or seg.shape[0] != d:
        raise ValueError("face_hessian: B must be d × d and seg of length d")
    if G.shape[1] != M:
        raise ValueError("face_hessian: G must be square")
    if refs.shape[0] != m or a.shape[0] != m or out.shape[0] != m or out.shape[1] != m:
        raise ValueError("face_hessian: cols, refs, a and out must agree in size")
    for k in range(d):
        if seg[k] >= M or seg[k] < -1:
            raise ValueError("face_hessian: a segment index is out of range")
    for i in range(m):
        if cols[i] < 0 or cols[i] >= M or refs[i] >= M or refs[i] < -1:
            raise ValueError("face_hessian: an unknown's segment is out of range")
    with nogil:
        G[:, :] = 0.0
        for k in range(d):
            s = seg[k]
            if s < 0:
                continue
            for l in range(d):
                if seg[l] >= 0:
                    G[s, seg[l]] += B[k, l]
        for i in range(m):
            c = cols[i]
            r = refs[i]
            ai = a[i] if r >= 0 else 0.0
            for j in range(m):
                c2 = cols[j]
                r2 = refs[j]
                aj = a[j] if r2 >= 0 else 0.0
                v = G[c, c2]
                if r2 >= 0:
                    v -= aj * G[c, r2]
                if r >= 0:
                    v -= ai * G[r, c2]
                    if r2 >= 0:
                        v += ai * aj * G[r, r2]
                out[i, j] = v


def face_cross(
    const double[:, ::1] BU,
    const Py_ssize_t[::1] seg,
    const Py_ssize_t[::1] cols,
    const Py_ssize_t[::1] refs,
    const double[::1] a,
    double[:, ::1] S,
    double[:, ::1] out,
):
    """The bins × free-columns Gram ``BU`` (d × q) in the face's unknowns.

    ``S`` (M × q, overwritten) receives the segment sums of the rows of ``BU``;
    ``out`` (m × q, overwritten) ``S[cols[i]] − a[i] S[refs[i]]`` (no reference when
    ``refs[i] < 0``).
    """
    cdef Py_ssize_t d = BU.shape[0], q = BU.shape[1], M = S.shape[0], m = cols.shape[0]
    cdef Py_ssize_t k, s, i, t, r
    if seg.shape[0] != d or S.shape[1] != q:
        raise ValueError("face_cross: BU, seg and S must agree in size")
    if refs.shape[0] != m or a.shape[0] != m or out.shape[0] != m or out.shape[1] != q:
        raise ValueError("face_cross: cols, refs, a and out must agree in size")
    for k in range(d):
        if seg[k] >= M or seg[k] < -1:
            raise ValueError("face_cross: a segment index is out of range")
    for i in range(m):
        if cols[i] < 0 or cols[i] >= M or refs[i] >= M or refs[i] < -1:
            raise ValueError("face_cross: an unknown's segment is out of range")
    with nogil:
        S[:, :] = 0.0
        for k in range(d):
            s = seg[k]
            if s >= 0:
                for t in range(q):
                    S[s, t] += BU[k, t]
        for i in range(m):
            r = refs[i]
            for t in range(q):
                out[i, t] = S[cols[i], t] - (a[i] * S[r, t] if r >= 0 else 0.0)


def cholesky(double[:, ::1] A):
    """Factor the symmetric A = L Lᵀ in place (L in the lower triangle; the strict
    upper triangle is not read and is left as it was).

    Returns 0, or k + 1 when the k-th pivot is not positive (A not positive definite;
    A is then partly overwritten).
    """
    cdef Py_ssize_t m = A.shape[0], i, j, k, failed = 0
    cdef double s, dj
    if A.shape[1] != m:
        raise ValueError("cholesky: A must be square")
    with nogil:
        for j in range(m):
            s = A[j, j]
            for k in range(j):
                s -= A[j, k] * A[j, k]
            if not s > 0.0:
                failed = j + 1
                break
            dj = sqrt(s)
            A[j, j] = dj
            for i in range(j + 1, m):
                s = A[i, j]
                for k in range(j):
                    s -= A[i, k] * A[j, k]
                A[i, j] = s / dj
    return failed


def cholesky_solve(const double[:, ::1] L, double[::1] b):
    """Solve L Lᵀ x = b in place (L from :func:`cholesky`, lower triangle only)."""
    cdef Py_ssize_t m = L.shape[0], i, k
    cdef double s
    if L.shape[1] != m or b.shape[0] != m:
        raise ValueError("cholesky_solve: L must be m × m and b of length m")
    for i in range(m):
        if not L[i, i] != 0.0:
            raise ValueError("cholesky_solve: a zero pivot")
    with nogil:
        for i in range(m):
            s = b[i]
            for k in range(i):
                s -= L[i, k] * b[k]
            b[i] = s / L[i, i]
        for i in range(m - 1, -1, -1):
            s = b[i]
            for k in range(i + 1, m):
                s -= L[k, i] * b[k]
            b[i] = s / L[i, i]
