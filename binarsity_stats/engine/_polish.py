"""Polish: a Newton solve on the fused segments once the jump set is found (design.md §9).

Once a solver has identified which levels are fused and the signs of the jumps, the
penalty is *linear* on that face: λ Σ_l ω_l σ_l (γ_s − γ_{s−1}) with σ_l fixed, and the
problem is an unpenalised GLM on the segment design (one indicator per constant segment,
the constraint Σ_s N_s γ_s = 0 per block, the intercept and the dense columns). Its
Hessian is small and dense (segments × segments, from the co-occurrence of segment codes
weighted by the curvature), so a few Newton steps solve it to rounding — where
Gauss–Seidel sweeps or proximal gradient steps crawl on near-collinear blocks.

The Newton steps are cut where a jump would change sign (that edge is fused instead and
the face shrinks), so the objective never rises. The result is the optimum only if the
flat edges still satisfy their KKT condition (|S_l| ≤ λ ω_l); the caller checks
``kkt`` and keeps sweeping otherwise (an edge must open, which only the solver can do).

The module talks to the problem through the ``SolverData`` protocol only: the linear
predictor, the family's derivatives, histograms (bin sums), the free columns' products
and the curvature-weighted Grams of the bins and free columns (``bin_gram``,
``bin_free_gram``, ``free_gram``: sufficient statistics a distributed backend adds up
over partitions).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from ..kernels import _segments

__all__ = ["PolishResult", "polish", "Polisher"]

# Faces above this many unknowns are not polished (the dense solve is cubic).
MAX_UNKNOWNS = 1500
_EPS = np.finfo(float).eps


@dataclass
class PolishResult:
    """A polished point (always at least as good as the one given, or ``None``)."""

    theta: np.ndarray
    beta: np.ndarray
    b0: float
    eta: np.ndarray
    objective: float
    kkt: float
    n_newton: int


def _derivs(prob, eta, r, h) -> float:
    """Working gradient r and curvature h (normalised by W) at η; return the loss."""
    return prob.grad_hess_into(eta, r, h)


class _Face:
    """The fused segments of θ and the fixed jump signs (one face of the penalty)."""

    def __init__(self, prob, theta, opened=None):
        opened = opened or {}  # level k -> sign: a flat edge opened with that sign
        bp, w, counts = prob.block_ptr, prob.weights, prob.counts
        d = prob.n_levels
        block_of = prob.penalty.block_of
        pos = np.flatnonzero(counts > 0)  # levels with rows: the chain the loss sees
        blk = block_of[pos]
        first = np.ones(pos.size, dtype=bool)  # first positive level of its block
        first[1:] = blk[1:] != blk[:-1]
        # weight of the edge between consecutive positive levels: the least ω over the
        # zero-count levels between them (the jump goes on the cheapest edge)
        wk = np.zeros(pos.size)
        if pos.size > 1:
            starts = pos[:-1] + 1
            idx = starts if pos[-1] + 1 >= d else np.append(starts, pos[-1] + 1)
            wk[1:] = np.minimum.reduceat(w, idx)[: starts.size]
        wk[first] = 0.0
        prev_theta = np.empty(pos.size)
        prev_theta[1:] = theta[pos[:-1]]
        prev_theta[0] = theta[pos[0]] if pos.size else 0.0
        is_open = np.zeros(pos.size, dtype=bool)
        if opened:
            is_open = np.isin(pos, np.fromiter(opened, dtype=np.intp))
        new = first | (wk == 0.0) | (theta[pos] != prev_theta) | is_open
        seg_of_pos = np.cumsum(new) - 1
        seg = np.full(d, -1, dtype=np.intp)
        seg[pos] = seg_of_pos
        self.seg = seg
        self.M = int(new.sum())
        self.seg_block = blk[new].astype(np.intp)
        self.seg_first = pos[new].astype(np.intp)
        jump = new & ~first & (wk > 0)
        self.jr = seg_of_pos[jump].astype(np.intp)
        self.jl = self.jr - 1
        self.jw = wk[jump]
        sign = np.sign(theta[pos[jump]] - prev_theta[jump])
        if opened:
            for i, k in enumerate(pos[jump]):
                if int(k) in opened:
                    sign[i] = opened[int(k)]
        self.sign = sign.astype(np.float64)
        # zero-count levels (rows of weight 0 only): filled from their neighbours
        fill = []
        gaps = np.flatnonzero(~first[1:] & (pos[1:] > pos[:-1] + 1)) + 1 if pos.size else []
        for i in gaps:
            lo, hi = int(pos[i - 1]), int(pos[i])
            cut = lo + 1 + int(np.argmin(w[lo + 1 : hi + 1]))
            fill.extend((m, lo, hi, cut) for m in range(lo + 1, hi))
        for i in np.flatnonzero(first):
            j = int(blk[i])
            s, e = int(bp[j]), int(bp[j + 1])
            lo = int(pos[i])
            last_i = i
            while last_i + 1 < pos.size and not first[last_i + 1]:
                last_i += 1
            hi = int(pos[last_i])
            # zero-count ends copy their neighbour across penalised edges only
            for m in range(lo - 1, s - 1, -1):
                if w[m + 1] == 0:
                    break
                fill.append((m, lo, lo, m))
            for m in range(hi + 1, e):
                if w[m] == 0:
                    break
                fill.append((m, hi, hi, m))
        self.fill = fill
        self.gamma = theta[self.seg_first].copy() if self.M else np.zeros(0)
        self.N = np.bincount(seg[pos], weights=counts[pos], minlength=self.M)
        # the unknowns: every segment but the largest of its block (the constraint
        # Σ N_s γ_s = 0 gives that one); blocks with one segment have none
        ref = np.full(prob.n_blocks, -1, dtype=np.intp)
        if self.M:
            order = np.lexsort((-self.N, self.seg_block))  # by block, largest first
            lead = np.ones(self.M, dtype=bool)
            lead[1:] = self.seg_block[order][1:] != self.seg_block[order][:-1]
            ref[self.seg_block[order[lead]]] = order[lead]
        self.ref = ref
        is_ref = np.zeros(self.M, dtype=bool)
        is_ref[ref[ref >= 0]] = True
        self.cols = np.flatnonzero(~is_ref).astype(np.intp)
        # basis T (M × m): column c is e_s − (N_s / N_ref) e_ref
        m = self.cols.size
        T = np.zeros((self.M, m))
        if m:
            T[self.cols, np.arange(m)] = 1.0
            rs = ref[self.seg_block[self.cols]]
            T[rs, np.arange(m)] = -self.N[self.cols] / self.N[rs]
        self.T = T

    def linear_term(self, lam) -> np.ndarray:
        """c with λ pen(θ) = cᵀγ on this face (sign fixed)."""
        c = np.zeros(self.M)
        a = lam * self.jw * self.sign
        np.add.at(c, self.jr, a)
        np.subtract.at(c, self.jl, a)
        return c

    def theta(self, prob, theta_old, gamma) -> np.ndarray:
        """The levels of γ (zero-count levels filled as their neighbours)."""
        th = theta_old.copy()
        has = self.seg >= 0
        th[has] = gamma[self.seg[has]]
        for m, left, right, cut in self.fill:
            th[m] = th[left] if m < cut else th[right]
        return th


class _BinGram:
    """The curvature-weighted Gram of the bins and free columns: [X^B, U]ᵀ H [X^B, U].

    Block (j, l) of ``B`` is the co-occurrence table of the codes of blocks j and l
    weighted by h (one bincount over the rows per pair); diagonal blocks are diagonal
    (the bin sums of h). With it the quadratic model of the loss at η is known in the
    bins (design.md §9): a face's Hessian is ``B`` aggregated over its segments, and the
    model's gradient after a step Δ is g + BΔ — no pass over the rows.
    """

    def __init__(self, prob, h):
        d = prob.n_levels
        # the bins' Gram X^Bᵀ diag(h) X^B: a sufficient statistic the data computes
        self.B = prob.bin_gram(h, chunk=_CHUNK)
        nu = prob.n_free
        self.BU = np.zeros((d, nu))
        self.UU = np.zeros((nu, nu))
        if nu:
            self.BU = prob.bin_free_gram(h)
            self.UU = prob.free_gram(h)

    def face_hessian(self, face) -> np.ndarray:
        """Hessian in the face's unknowns [free columns, u].

        ``B`` summed over the segments in O(d²) and taken to the unknowns
        (e_s − a_s e_ref) in O(m²) by the ``_segments`` kernel (a level without rows
        has a zero row in ``B``: it belongs to no segment); NumPy twin
        :func:`_face_hessian_numpy`.
        """
        cols = face.cols
        refs = face.ref[face.seg_block[cols]]
        a = face.N[cols] / face.N[refs]
        m = cols.size
        G = np.empty((face.M, face.M))
        nu = self.UU.shape[0]
        K = np.empty((nu + m, nu + m))
        Guu = np.empty((m, m)) if nu else K
        # the protocol's Grams may come in any layout (a distributed sum, a test's double)
        B = np.ascontiguousarray(self.B, dtype=np.float64)
        _segments.face_hessian(B, face.seg, cols, refs, a, G, Guu)
        if not nu:
            return K
        cross = np.empty((m, nu))
        BU = np.ascontiguousarray(self.BU, dtype=np.float64)
        _segments.face_cross(BU, face.seg, cols, refs, a, np.empty((face.M, nu)), cross)
        K[:nu, :nu] = self.UU
        K[:nu, nu:] = cross.T
        K[nu:, :nu] = cross
        K[nu:, nu:] = Guu
        return K


def _face_hessian_numpy(gram: _BinGram, face: _Face) -> np.ndarray:
    """NumPy twin of :meth:`_BinGram.face_hessian` (the tests compare the two)."""
    sf = face.seg_first
    G = np.add.reduceat(np.add.reduceat(gram.B, sf, axis=0), sf, axis=1)
    cols = face.cols
    refs = face.ref[face.seg_block[cols]]
    a = face.N[cols] / face.N[refs]
    Guu = (
        G[np.ix_(cols, cols)]
        - G[np.ix_(cols, refs)] * a[None, :]
        - a[:, None] * G[np.ix_(refs, cols)]
        + np.outer(a, a) * G[np.ix_(refs, refs)]
    )
    nu = gram.UU.shape[0]
    if not nu:
        return Guu
    BU = np.add.reduceat(gram.BU, sf, axis=0)
    cross = BU[cols] - a[:, None] * BU[refs]
    k = nu + cols.size
    K = np.empty((k, k))
    K[:nu, :nu] = gram.UU
    K[:nu, nu:] = cross.T
    K[nu:, :nu] = cross
    K[nu:, nu:] = Guu
    return K


# Operations the active-set steps may always spend (about 0.1 s).
_MIN_BUDGET = 1e8
# A Gram below this many operations (about a millisecond) is built without waiting.
_CHEAP = 1e6
# Codes per bincount call when the bins' Gram is built.
_CHUNK = 1 << 21
# Above this many levels the bins' Gram (d × d doubles) is not formed and no polish runs.
MAX_BIN_GRAM = 2500
# Active-set steps (face Newton steps, fusions, openings) per quadratic model.
MAX_STEPS = 400
# Face Hessians up to this many unknowns are factored by the single-threaded kernel
# (about 10 ms at 400 single-threaded; LAPACK's blocked factor pays beyond).
_OWN_CHOLESKY = 400
# Proximal Newton iterations per polish (one suffices for a quadratic loss).
MAX_OUTER = 25


def _direction(K, g, null_tol):
    """Newton direction −K⁻¹g for a positive semi-definite K; (direction, is_linear).

    K is Jacobi-scaled and factorised by Cholesky. When it is (nearly) singular — blocks
    whose segments coincide on the rows, more levels than rows — the step is taken in
    its range only (a pseudo-inverse with a relative cut-off), so that rounding noise in
    the flat directions is not amplified; if the gradient has a genuine component in the
    flat directions (> ``null_tol``), the model is linear along it, and that component
    is returned instead (``is_linear``: the caller steps to the first jump that reaches
    0).
    """
    dg = np.sqrt(np.maximum(np.diag(K), 0.0))
    dg[dg == 0] = 1.0
    Ks = K / dg[:, None] / dg[None, :]
    gs = g / dg
    if Ks.shape[0] <= _OWN_CHOLESKY and np.isfinite(Ks).all():
        # the small factor without BLAS threads (``_segments.cholesky``)
        L = Ks.copy()
        if _segments.cholesky(L) == 0:
            piv = np.abs(np.diag(L))
            if piv.min() ** 2 > 1e-10 * piv.max() ** 2:
                x = gs.copy()
                _segments.cholesky_solve(L, x)
                return -x / dg, False
    else:
        try:
            c = scipy.linalg.cho_factor(Ks, check_finite=False)
            piv = np.abs(np.diag(c[0]))
            if piv.min() ** 2 > 1e-10 * piv.max() ** 2:
                return -scipy.linalg.cho_solve(c, gs, check_finite=False) / dg, False
        except (np.linalg.LinAlgError, scipy.linalg.LinAlgError, ValueError):
            pass
    mu, V = scipy.linalg.eigh(Ks, check_finite=False)
    keep = mu > 1e-10 * max(mu.max(), 0.0)
    coef = V.T @ gs
    g0 = V[:, ~keep] @ coef[~keep]
    if np.abs(g0 / dg).max(initial=0.0) > null_tol:
        return -g0 / dg, True
    return -(V[:, keep] @ (coef[keep] / mu[keep])) / dg, False


def _solve_model(prob, gram, gbin, gU, theta, lam, tol, null_tol, budget=np.inf):
    """Minimise the quadratic model of the loss plus λ pen exactly, by active sets.

    The model at the current point is m(Δθ, Δf) = gᵀΔ + ½ ΔᵀGΔ (G = ``gram``, g the
    bin sums ``gbin`` and free-column products ``gU`` of the working gradient). Newton
    on the face of θ (fused segments, jump signs fixed), cut where a jump reaches 0
    (that edge fuses); on the face's optimum the flat edge that violates its condition
    |S| ≤ λω most by more than ``tol`` is opened with the sign that lowers the model.
    Every step lowers the model + penalty. Returns (θ_new, Δf, steps) — θ_new None when
    nothing moved. The steps stop when their operation count (d² per face, m³/3 per
    factorisation) passes ``budget``: the point reached still lowers the model.
    """
    nu = gU.shape[0]
    spent = 0.0
    face = _Face(prob, theta)
    th = face.theta(prob, theta, face.gamma)  # zero-count levels: the cheapest jump
    if face.T.shape[1] + nu > MAX_UNKNOWNS:
        return None, None, 0
    th0 = theta
    df = np.zeros(nu)
    g_bin = gbin + gram.B @ (th - th0)
    g_U = gU + gram.BU.T @ (th - th0)
    tried = set()
    steps = 0
    face_optimal = False
    K = None
    while steps < MAX_STEPS:
        step = None
        if face.T.shape[1] + nu and not face_optimal:
            c = face.linear_term(lam)
            gE = np.bincount(face.seg[face.seg >= 0], weights=g_bin[face.seg >= 0],
                             minlength=face.M) + c  # fmt: skip
            g = np.concatenate([g_U, face.T.T @ gE])
            if K is None:
                K = gram.face_hessian(face)
                spent += float(prob.n_levels) ** 2
            spent += K.shape[0] ** 3 / 3.0
            if spent > budget:
                break
            step, linear = _direction(K, g, null_tol)
            dec = float(g @ step)
        if step is None or not np.isfinite(dec) or dec >= 0:
            # optimal on this face: open the flat edge that violates its KKT condition
            # most (one at a time: the Newton step then moves it the right way)
            face_optimal = False
            opened = _most_violated(face, prob, g_bin, lam, 1e-3 * tol, tried)
            if opened is None:
                break
            tried.add(opened[0])
            face = _Face(prob, th, {opened[0]: opened[1]})
            K = None
            continue
        steps += 1
        d_free, du = step[:nu], step[nu:]
        dgam = face.T @ du
        # largest step that keeps every jump's sign
        ddiff = dgam[face.jr] - dgam[face.jl]
        diff = face.gamma[face.jr] - face.gamma[face.jl]
        shrink = face.sign * ddiff < 0
        amax, hit = (np.inf if linear else 1.0), None
        if np.any(shrink):
            ratios = np.full(diff.shape, np.inf)
            ratios[shrink] = -diff[shrink] / ddiff[shrink]
            k = int(np.argmin(ratios))
            if ratios[k] < amax:
                amax, hit = float(ratios[k]), k
        if not np.isfinite(amax):
            break  # a flat direction without a jump to stop it: leave it alone
        gam = face.gamma + amax * dgam
        if hit is not None:
            gam[face.jr[hit]] = gam[face.jl[hit]]  # the jump reached 0: fuse the edge
        th_new = face.theta(prob, th, gam)
        dth = th_new - th
        df += amax * d_free
        g_bin += gram.B @ dth + gram.BU @ (amax * d_free)
        g_U += gram.BU.T @ dth + gram.UU @ (amax * d_free)
        th = th_new
        if hit is not None:
            face = _Face(prob, th)
            K = None
        else:
            face.gamma = gam
            face_optimal = True  # a full Newton step solves the model on the face
    if steps == 0 and np.array_equal(th, th0):
        return None, None, 0
    return th, df, steps


def polish(
    prob, theta, beta, b0, lam, tol, objective=None, cache=None, budget=np.inf
) -> PolishResult | None:
    """Proximal Newton with the quadratic models solved exactly by active sets.

    Parameters
    ----------
    prob : SolverData
        The problem (through the protocol: Grams, histograms, free columns, penalty).
    theta, beta, b0 : the current point (θ re-centred or not).
    lam : float
        λ.
    tol : float
        KKT tolerance: a flat edge whose condition is violated by more is opened, and
        the Newton iterations stop when the KKT violation is at most ``tol``.
    objective : float, optional
        F at the current point (computed when not given).
    cache : dict, optional
        Keeps the bins' Gram across calls when the loss is quadratic (its curvature
        does not depend on η).
    budget : float, optional
        Operations the active-set steps of each quadratic model may spend.

    Returns
    -------
    PolishResult or None
        The polished point with its objective and KKT violation (never a higher
        objective than the given point's, up to rounding), or None when the problem is
        too big for the bins' Gram or nothing moved.
    """
    if prob.n_levels > MAX_BIN_GRAM or prob.n_blocks == 0:
        return None
    fit_b0 = prob.fit_intercept
    r, h = prob.row_vector(), prob.row_vector()
    theta = np.asarray(theta, dtype=np.float64).copy()
    beta = np.asarray(beta, dtype=np.float64).copy()
    eta = prob.linear_predictor(theta, beta, b0)
    loss = _derivs(prob, eta, r, h)
    pen = prob.penalty.value(theta)
    F = loss + lam * pen
    F0 = F if objective is None else objective
    quadratic = bool(prob.family.quadratic)
    if cache is None or not quadratic:
        cache = {}
    # flat directions: gradient components below this are rounding noise
    null_tol = 1e-9 * max(lam * float(prob.weights.max(initial=0.0)), 1e-300)
    n_newton = 0
    for _ in range(MAX_OUTER if not quadratic else 2):
        if "gram" not in cache:
            cache["gram"] = _BinGram(prob, h)
        gram = cache["gram"]
        gbin = prob.histogram(r)
        gU = np.concatenate([[prob.row_sum(r)] if fit_b0 else [], prob.dense_dot(r)])
        th_new, dfree, steps = _solve_model(prob, gram, gbin, gU, theta, lam, tol, null_tol, budget)
        if th_new is None:
            break
        n_newton += 1
        dth = th_new - theta
        decrease = float(gbin @ dth + gU @ dfree) + lam * (prob.penalty.value(th_new) - pen)
        free0 = np.concatenate([[b0] if fit_b0 else [], beta])
        alpha, accepted = 1.0, False
        for _ in range(30):
            th_t = th_new if alpha == 1.0 else prob.penalty.enforce_shape(theta + alpha * dth)
            free_t = free0 + alpha * dfree
            b0_t, beta_t = (float(free_t[0]), free_t[1:]) if fit_b0 else (0.0, free_t)
            eta_t = prob.linear_predictor(th_t, beta_t, b0_t)
            loss_t = _derivs(prob, eta_t, r, h)
            pen_t = prob.penalty.value(th_t)
            F_t = loss_t + lam * pen_t
            slack = 64 * _EPS * abs(F)
            if np.isfinite(F_t) and F_t <= F + 1e-4 * alpha * min(decrease, 0.0) + slack:
                accepted = True
                break
            alpha *= 0.5
        if not accepted:
            _derivs(prob, eta, r, h)
            break
        theta, eta, F, pen, b0, beta = th_t, eta_t, F_t, pen_t, b0_t, beta_t
        if not quadratic:
            cache.pop("gram", None)  # the curvature moved with η
        if _kkt(prob, r, theta, lam) <= tol * 1e-3:
            break
    if n_newton == 0:
        return None
    # the result, checked on the true objective and the full KKT conditions
    eta = prob.linear_predictor(theta, beta, b0)
    loss = _derivs(prob, eta, r, h)
    F_new = loss + lam * prob.penalty.value(theta)
    if not (np.isfinite(F_new) and F_new <= F0 + 64 * _EPS * abs(F0)):
        return None
    kkt = _kkt(prob, r, theta, lam)
    return PolishResult(theta, beta, float(b0), eta, float(F_new), kkt, n_newton)


def _most_violated(face, prob, g_bin, lam, tol, tried):
    """The flat edge (level k, sign to open with) whose |S_k| exceeds λ ω most, or None.

    An edge of a monotone block (sign σ) opens only with that sign, when −σS_k > λω.

    S_k = Σ_{k' ≥ k} g_k' within the block (less the constraint's multiplier without an
    intercept); an edge between two positive-count levels of one segment is flat, its
    weight the least ω over the zero-count levels between them.

    The violations of all blocks' flat edges in a few NumPy calls; the block that wins
    (the largest untried violation, the first block on ties) then picks its edge as
    :func:`_most_violated_loop` does (its twin, one block at a time; the same answer,
    which it gives where a violation is NaN).
    """
    S = prob.penalty.edge_gradients(g_bin, prob.fit_intercept)
    seg, w = face.seg, prob.weights
    pos = np.flatnonzero(seg >= 0)
    if pos.size < 2:
        return None
    prev, cur = pos[:-1], pos[1:]
    same = seg[prev] == seg[cur]  # a block starts a new segment: pairs within a block
    if not np.any(same):
        return None
    prev, cur = prev[same], cur[same]
    wk = w[cur]  # adjacent levels: the edge's own ω
    for i in np.flatnonzero(cur - prev > 1):
        wk[i] = w[prev[i] + 1 : cur[i] + 1].min()  # the least ω over the zero-count gap
    blk = prob.penalty.block_of[cur]
    sgn = prob.penalty.directions[blk]
    Sc = S[cur]
    v = np.where(sgn == 0, np.abs(Sc), -sgn * Sc) - lam * wk
    v[wk <= 0] = -np.inf
    if np.isnan(v).any():
        return _most_violated_loop(face, prob, g_bin, lam, tol, tried, S)
    cand = v > tol
    if tried:
        cand &= ~np.isin(cur, np.fromiter(tried, dtype=np.intp, count=len(tried)))
    if not np.any(cand):
        return None
    top = v[cand].max()
    j = blk[np.flatnonzero(cand & (v == top))[0]]
    inj = blk == j
    vj, cj = v[inj], cur[inj]
    for i in np.argsort(-vj):
        if vj[i] <= tol:
            break
        if int(cj[i]) not in tried:
            return int(cj[i]), -float(np.sign(S[cj[i]]))
    return None  # not reached: block j holds an untried edge above tol


def _most_violated_loop(face, prob, g_bin, lam, tol, tried, S=None):
    """:func:`_most_violated` one block at a time (its twin; the tests compare them)."""
    if S is None:
        S = prob.penalty.edge_gradients(g_bin, prob.fit_intercept)
    seg, w, bp = face.seg, prob.weights, prob.block_ptr
    directions = prob.penalty.directions
    best, best_v = None, tol
    for j in range(prob.n_blocks):
        s, e = int(bp[j]), int(bp[j + 1])
        pos = np.flatnonzero(seg[s:e] >= 0) + s
        if pos.size < 2:
            continue
        prev, cur = pos[:-1], pos[1:]
        same = seg[prev] == seg[cur]
        if not np.any(same):
            continue
        prev, cur = prev[same], cur[same]
        if np.all(cur - prev == 1):
            wk = w[cur]  # adjacent levels (no zero-count level between): the edge's own ω
        else:
            wk = np.array([w[a + 1 : k + 1].min() for a, k in zip(prev, cur, strict=True)])
        sgn = int(directions[j])
        # a monotone block (sign σ) opens an edge only the way of its order: −σS > λω
        v = (np.abs(S[cur]) if sgn == 0 else -sgn * S[cur]) - lam * wk
        v[wk <= 0] = -np.inf
        for i in np.argsort(-v):
            if v[i] <= best_v:
                break
            if int(cur[i]) not in tried:
                best, best_v = (int(cur[i]), -float(np.sign(S[cur[i]]))), float(v[i])
                break
    return best


def _kkt(prob, r, theta, lam) -> float:
    worst, _, _ = prob.kkt(r, theta, lam)
    return float(worst)


def _cost_in_sweeps(prob) -> tuple[float, float]:
    """(cost of the bins' Gram, cost of one polish pass) in sweeps, by a fixed model.

    A deterministic operation count (never a clock, so that fits are reproducible):
    a sweep visits n·p codes plus a per-block and per-sweep overhead; the Gram is one
    bincount per pair of blocks (about 3 code visits per row, and a call's overhead per
    block and chunk).
    """
    n, p = prob.n_rows, max(prob.n_blocks, 1)
    sweep = n * p + 200.0 * p + 10_000.0
    gram = 3.0 * n * p * (p - 1) / 2 + 2_500.0 * p + 1_000.0 * prob.n_levels
    if gram < _CHEAP:
        return 0.0, 0.0  # about a millisecond: not worth waiting for
    return gram / sweep, 3.0


# The fixed work of one polish (faces, the KKT checks, the line search; about 1 ms of
# NumPy calls), in the sweeps' operation units.
_POLISH_FIXED = 1e5
# Sweeps over which CD's linear rate is observed before it is trusted.
_RATE_WINDOW = 3


def _polish_ops(prob, n_segments: int, quadratic: bool) -> float:
    """The operations of one polish by the same fixed model (never a clock).

    The bins' Gram (one bincount per pair of blocks), per quadratic model the face
    Hessian summed from the d × d Gram (2d²) and its factor (m³/3 for m ≈ the
    segments), and the fixed cost; a non-quadratic loss solves about two models.
    """
    n, p, d = prob.n_rows, max(prob.n_blocks, 1), prob.n_levels
    gram = 3.0 * n * p * (p - 1) / 2 + 2_500.0 * p + 1_000.0 * d
    face = 2.0 * d * d + n_segments**3 / 3.0
    models = 1.0 if quadratic else 2.0
    return models * (gram + face) + _POLISH_FIXED


class Polisher:
    """When to polish: once the jump pattern is stable and the sweeps have paid for it.

    ``observe`` is called after every sweep (or every few iterations, with their count)
    with the current θ; ``ready`` says that the pattern has been stable for
    ``patience`` observations, was not polished yet, and that the passes spent so far
    are at least the polish's cost (the bins' Gram is O(n p²): an easy fit that the
    sweeps finish sooner is never slowed down; a crawling one pays at most about twice
    what it would have; a Gram of about a millisecond is not waited for). A failed
    attempt (the face was not the optimum's) moves the next one past twice its cost.

    It also waits while CD pays: ``observe`` may be given the sweep's KKT violation
    and the tolerance; while the last ``_RATE_WINDOW`` violations fall at a linear rate
    ρ that reaches the tolerance in fewer sweeps than the polish costs (its operations
    by :func:`_polish_ops`, in sweeps), ``ready`` is False — the sweeps finish first,
    and their KKT check certifies the solution as always. A stalling CD (ρ near 1, or
    violations that do not fall) is polished as before.
    """

    def __init__(self, prob, patience: int = 3):
        self.prob = prob
        self.patience = patience
        self._key = None
        self._stable = 0
        self._tried = None
        self.attempts = 0
        self.n_newton = 0
        self._cache: dict = {}
        gram, per_pass = _cost_in_sweeps(prob)
        self._quadratic = bool(prob.family.quadratic)
        # a non-quadratic loss needs the Gram at every proximal Newton step (about 3)
        self._cost = gram + per_pass if self._quadratic else 3 * (gram + per_pass)
        self._per_pass = per_pass
        self._spent = 0.0
        self._next_at = self._cost
        n_blocks = prob.n_blocks
        self._sweep_ops = prob.n_rows * max(n_blocks, 1) + 200.0 * n_blocks + 10_000.0
        # a grid block (pair term) has no segments: its step polishes its own regions
        self.enabled = prob.n_levels <= MAX_BIN_GRAM and n_blocks > 0 and not prob.penalty.grids
        self._viols: list[float] = []
        self._target = 0.0
        self.skipped = 0

    def _pattern(self, theta):
        s = np.sign(theta[1:] - theta[:-1]).astype(np.int8)  # np.diff's numbers, sooner
        s[self.prob.penalty.is_start[1:]] = 0
        return s.tobytes()

    def observe(
        self, theta, passes: float = 1.0, viol: float | None = None, target: float = 0.0
    ) -> None:
        """Record the jump pattern of θ after ``passes`` sweeps/iterations.

        ``viol`` (optional) is the KKT violation reached and ``target`` the tolerance
        it must reach (see :meth:`progress`).
        """
        self._spent += passes
        if not self.enabled:
            return
        if viol is not None:
            self.progress(viol, target)
        key = self._pattern(theta)
        if key == self._key:
            self._stable += 1
        else:
            self._key, self._stable = key, 0

    def progress(self, viol: float, target: float) -> None:
        """Record a KKT violation after the passes so far: CD's observed rate.

        The sweeps' own violations on a quadratic model (``observe``), or the true
        violation at each proximal Newton step of a non-quadratic loss; ``ready``
        waits while the rate per sweep reaches ``target`` sooner than a polish costs.
        """
        self._viols.append((self._spent, float(viol)))
        del self._viols[:-_RATE_WINDOW]
        self._target = float(target)

    def new_model(self) -> None:
        """A new quadratic model starts (the sweeps' violations are not comparable)."""
        self._viols.clear()

    def _cd_pays(self) -> bool:
        """Whether CD's observed linear rate reaches the tolerance sooner than a polish."""
        if len(self._viols) < 2 or not self._target > 0:
            return False
        (s0, v0), (s1, v1) = self._viols[0], self._viols[-1]
        if v1 <= self._target:
            return True
        if not (v0 > 0 and v1 > 0 and s1 > s0):
            return False
        rate = (v1 / v0) ** (1.0 / (s1 - s0))  # per sweep
        if not rate < 0.9:
            return False  # stalling (or not falling): the polish is what pays
        sweeps = np.log(self._target / v1) / np.log(rate)
        jumps = int(np.count_nonzero(np.frombuffer(self._key, np.int8)))
        cost = _polish_ops(self.prob, jumps + self.prob.n_blocks, self._quadratic)
        return bool(sweeps < cost / self._sweep_ops)

    def ready(self) -> bool:
        """Whether to polish now (stable pattern, not tried, paid for, CD not paying)."""
        if not (
            self.enabled
            and self._stable >= self.patience
            and self._key != self._tried
            and self._spent >= self._next_at
        ):
            return False
        if self._cd_pays():
            self.skipped += 1
            return False
        return True

    def run(self, theta, beta, b0, lam, tol, objective=None) -> PolishResult | None:
        """Polish at the current point; remember the pattern tried."""
        self._tried = self._key
        self.attempts += 1
        cached = "gram" in self._cache
        # the active-set steps may spend about what the sweeps so far have (≥ ~0.1 s)
        budget = max(_MIN_BUDGET, 2.0 * self._spent * self._sweep_ops)
        res = polish(self.prob, theta, beta, b0, lam, tol, objective, self._cache, budget)
        if res is not None:
            self.n_newton += res.n_newton
        if res is None or not res.kkt <= tol:
            cost = self._cost - (self._cost - self._per_pass) * (cached and self._quadratic)
            self._next_at = self._spent + 2 * cost
        return res
