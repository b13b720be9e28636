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

The module talks to the problem through the operations the solvers use: the linear
predictor, the family's derivatives, histograms (bin sums) and dense column products,
plus each block's codes recoded to segments (``recode_block``) for the pairwise
co-occurrence tables of the Hessian.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

__all__ = ["PolishResult", "polish", "Polisher"]

# Segments above this many unknowns are not polished (the dense solve is cubic).
MAX_UNKNOWNS = 1500
# Newton steps (each one pass over the rows plus the pairwise tables) per polish.
MAX_NEWTON = 200
# Flat edges opened (one at a time) per polish.
MAX_OPEN = 100
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
        d = prob.d
        seg = np.full(d, -1, dtype=np.intp)  # segment of each positive-count level
        seg_block, seg_first = [], []  # block and representative level of a segment
        # jump edges between consecutive segments: (left seg, right seg, weight, sign)
        jl, jr, jw, js = [], [], [], []
        fill = []  # zero-count levels: (level, left pos level, right pos level, cut)
        for j in range(prob.p):
            s, e = int(bp[j]), int(bp[j + 1])
            pos = np.flatnonzero(counts[s:e] > 0) + s
            if pos.size == 0:
                continue
            prev = -1
            for k in pos:
                if prev < 0:
                    new, wk = True, 0.0
                else:
                    ew = w[prev + 1 : k + 1]
                    wk = float(ew.min())
                    new = wk == 0.0 or theta[k] != theta[prev] or k in opened
                if new:
                    seg_block.append(j)
                    seg_first.append(k)
                    if prev >= 0 and wk > 0:
                        jl.append(len(seg_block) - 2)
                        jr.append(len(seg_block) - 1)
                        jw.append(wk)
                        js.append(opened.get(k, 0.0) or np.sign(theta[k] - theta[prev]))
                seg[k] = len(seg_block) - 1
                if prev >= 0 and k > prev + 1:
                    # the run between two positive levels takes the jump on its cheapest
                    # edge (free if one has weight 0): it has no rows, so no loss
                    cut = prev + 1 + int(np.argmin(w[prev + 1 : k + 1]))
                    fill.extend((m, prev, k, cut) for m in range(prev + 1, k))
                prev = k
            # zero-count ends copy their neighbour across penalised edges only
            first, last = int(pos[0]), int(pos[-1])
            for m in range(first - 1, s - 1, -1):
                if w[m + 1] == 0:
                    break
                fill.append((m, first, first, m))
            for m in range(last + 1, e):
                if w[m] == 0:
                    break
                fill.append((m, last, last, m))
        self.seg = seg
        self.M = len(seg_block)
        self.seg_block = np.asarray(seg_block, dtype=np.intp)
        self.seg_first = np.asarray(seg_first, dtype=np.intp)
        self.jl = np.asarray(jl, dtype=np.intp)
        self.jr = np.asarray(jr, dtype=np.intp)
        self.jw = np.asarray(jw, dtype=np.float64)
        self.fill = fill
        self.gamma = theta[self.seg_first].copy() if self.M else np.zeros(0)
        self.sign = np.asarray(js, dtype=np.float64)
        self.N = np.bincount(seg[seg >= 0], weights=counts[seg >= 0], minlength=self.M)
        # the unknowns: every segment but the largest of its block (the constraint
        # Σ N_s γ_s = 0 gives that one); blocks with one segment have none
        cols, ref = [], np.full(prob.p, -1, dtype=np.intp)
        for j in np.unique(self.seg_block):
            mine = np.flatnonzero(self.seg_block == j)
            r = int(mine[np.argmax(self.N[mine])])
            ref[j] = r
            cols.extend(int(m) for m in mine if m != r)
        self.ref = ref
        self.cols = np.asarray(cols, dtype=np.intp)
        # basis T (M × m): column c is e_s − (N_s / N_ref) e_ref
        m = len(cols)
        T = np.zeros((self.M, m))
        if m:
            T[self.cols, np.arange(m)] = 1.0
            rs = ref[self.seg_block[self.cols]]
            T[rs, np.arange(m)] = -self.N[self.cols] / self.N[rs]
        self.T = T
        self.blocks = np.unique(self.seg_block[self.cols]) if m else np.zeros(0, np.intp)

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


def _seg_hist(face, prob, values) -> np.ndarray:
    """Segment sums Eᵀ v (from the bin histogram)."""
    hist = prob.histogram(values)
    has = face.seg >= 0
    return np.bincount(face.seg[has], weights=hist[has], minlength=face.M)


class _BinGram:
    """The curvature-weighted Gram of the bins and free columns: [X^B, U]ᵀ H [X^B, U].

    Block (j, l) of ``B`` is the co-occurrence table of the codes of blocks j and l
    weighted by h (one bincount over the rows per pair), its diagonal blocks are
    diagonal (the bin sums of h). A face's Hessian is this matrix aggregated over its
    segments, so one ``_BinGram`` serves every face at the same η (and every η when
    the loss is quadratic).
    """

    def __init__(self, prob, h, U):
        from . import _dense

        d, bp = prob.d, prob.block_ptr
        sizes = np.diff(bp)
        B = np.zeros((d, d))
        B[np.arange(d), np.arange(d)] = prob.histogram(h)
        for j in range(prob.p):
            sj, dj = int(bp[j]), int(sizes[j])
            cj = prob.codes[j].astype(np.int32)
            for k in range(j + 1, prob.p):
                sk, dk = int(bp[k]), int(sizes[k])
                idx = cj * dk
                idx += prob.codes[k]
                tab = np.bincount(idx, weights=h, minlength=dj * dk).reshape(dj, dk)
                B[sj : sj + dj, sk : sk + dk] = tab
                B[sk : sk + dk, sj : sj + dj] = tab.T
        self.B = B
        nu = 0 if U is None else U.shape[1]
        self.BU = np.zeros((d, nu))
        self.UU = np.zeros((nu, nu))
        if nu:
            for c in range(nu):
                self.BU[:, c] = prob.histogram(h * U[:, c])
            _dense.weighted_gram(U, h, self.UU)

    def face_hessian(self, face) -> np.ndarray:
        """Hessian in the face's unknowns [free columns, u]."""
        has = np.flatnonzero(face.seg >= 0)
        # (S T): level -> unknown, S the level-to-segment indicator
        ST = np.zeros((self.B.shape[0], face.T.shape[1]))
        ST[has] = face.T[face.seg[has]]
        rows = np.flatnonzero(np.any(ST != 0, axis=1))
        STr = ST[rows]
        Guu = STr.T @ (self.B[np.ix_(rows, rows)] @ STr)
        nu = self.UU.shape[0]
        if not nu:
            return Guu
        cross = STr.T @ self.BU[rows]
        k = nu + face.T.shape[1]
        K = np.empty((k, k))
        K[:nu, :nu] = self.UU
        K[:nu, nu:] = cross.T
        K[nu:, :nu] = cross
        K[nu:, nu:] = Guu
        return K


# Above this many levels the bins' Gram (d × d) is not formed: each face's Hessian is
# computed from the segment codes instead.
MAX_BIN_GRAM = 2000


def _hessian(face, prob, h, U, cache=None) -> np.ndarray:
    """Hessian of the loss in the unknowns [intercept?, u, dense]: [1, E T, Z]ᵀ H [...].

    ``cache`` (a dict) keeps the bins' Gram for the current h: the caller empties it
    when h changes.
    """
    if prob.d <= MAX_BIN_GRAM:
        if cache is None:
            cache = {}
        if "gram" not in cache:
            cache["gram"] = _BinGram(prob, h, U)
        return cache["gram"].face_hessian(face)
    T = face.T
    G = np.diag(_seg_hist(face, prob, h))
    # off-diagonal blocks: weighted co-occurrence of the segment codes of two blocks
    blocks = [int(j) for j in face.blocks]
    local = {}
    for j in blocks:
        mine = np.flatnonzero(face.seg_block == j)
        s, e = int(prob.block_ptr[j]), int(prob.block_ptr[j + 1])
        lut = face.seg[s:e] - mine[0]
        lut[face.seg[s:e] < 0] = 0  # zero-count levels: no row carries them
        local[j] = (mine, prob.recode_block(j, lut))
    for a, j in enumerate(blocks):
        mj, cj = local[j]
        for k in blocks[a + 1 :]:
            ml, cl = local[k]
            tab = np.bincount(cj * len(ml) + cl, weights=h, minlength=len(mj) * len(ml))
            tab = tab.reshape(len(mj), len(ml))
            G[np.ix_(mj, ml)] = tab
            G[np.ix_(ml, mj)] = tab.T
    Guu = T.T @ G @ T
    if U is None:
        return Guu
    # the free columns (intercept, dense): U has them as columns
    from . import _dense

    nu = U.shape[1]
    UH = np.empty((nu, nu))
    _dense.weighted_gram(U, h, UH)
    EU = np.column_stack([_seg_hist(face, prob, h * U[:, c]) for c in range(nu)])
    cross = T.T @ EU
    k = nu + T.shape[1]
    K = np.empty((k, k))
    K[:nu, :nu] = UH
    K[:nu, nu:] = cross.T
    K[nu:, :nu] = cross
    K[nu:, nu:] = Guu
    return K


def _direction(K, g, null_tol):
    """Newton direction −K⁻¹g for a positive semi-definite K; (direction, is_linear).

    K is Jacobi-scaled and factorised by Cholesky. When it is (nearly) singular — blocks
    whose segments coincide on the rows, more levels than rows — the step is taken in
    its range only (a pseudo-inverse with a relative cut-off), so that rounding noise in
    the flat directions is not amplified; if the gradient has a genuine component in the
    flat directions (> ``null_tol``), the loss is constant along it and F linear, and
    that component is returned instead (``is_linear``: the caller steps to the first
    jump that reaches 0).
    """
    dg = np.sqrt(np.maximum(np.diag(K), 0.0))
    dg[dg == 0] = 1.0
    Ks = K / dg[:, None] / dg[None, :]
    gs = g / dg
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


def polish(prob, theta, beta, b0, lam, tol, objective=None, cache=None) -> PolishResult | None:
    """Newton's method on the face of θ (its fused segments and jump signs).

    Parameters
    ----------
    prob : _Problem
        The problem (codes, counts, weights, family, dense columns).
    theta, beta, b0 : the current point (θ re-centred or not).
    lam : float
        λ.
    tol : float
        KKT tolerance: a flat edge whose condition is violated by more is opened.
    objective : float, optional
        F at the current point (computed when not given).
    cache : dict, optional
        Keeps the bins' Gram across calls when the loss is quadratic (its curvature
        does not depend on η).

    Returns
    -------
    PolishResult or None
        The polished point with its objective and KKT violation (never a higher
        objective than the given point's, up to rounding), or None when the face has
        too many unknowns or the steps did not lower F.
    """
    n = prob.n
    fit_b0 = prob.fit_intercept
    cols = []
    if fit_b0:
        cols.append(np.ones(n))
    U = None
    if fit_b0 or prob.q:
        U = np.asfortranarray(
            np.column_stack(cols + ([prob.dense] if prob.q else [])) if cols else prob.dense
        )
    nu = 0 if U is None else U.shape[1]
    r, h = np.empty(n), np.empty(n)
    theta = np.asarray(theta, dtype=np.float64).copy()
    beta = np.asarray(beta, dtype=np.float64).copy()
    eta = prob.linear_predictor(theta, beta, b0)
    loss = _derivs(prob, eta, r, h)
    F0 = loss + lam * prob.penalty.value(theta) if objective is None else objective
    face = _Face(prob, theta)
    theta = face.theta(prob, theta, face.gamma)  # zero-count levels: the cheapest jump
    if face.T.shape[1] + nu > MAX_UNKNOWNS:
        return None
    eta = prob.linear_predictor(theta, beta, b0)
    loss = _derivs(prob, eta, r, h)
    c = face.linear_term(lam)
    F = loss + c @ face.gamma + 0.0
    # gradient components below this in the flat directions are rounding noise
    null_tol = 1e-9 * max(lam * float(prob.weights.max(initial=0.0)), 1e-300)
    quadratic = bool(prob.family.quadratic)
    if cache is None or not quadratic:
        cache = {}
    K = None
    n_newton = n_open = 0
    full_steps = 0
    face_optimal = False
    tried = set()
    while n_newton < MAX_NEWTON:
        m = face.T.shape[1]
        step = None
        if m + nu and not face_optimal:
            gE = _seg_hist(face, prob, r) + c
            g = np.concatenate([U.T @ r if nu else np.zeros(0), face.T.T @ gE])
            if K is None or not quadratic:
                if not quadratic:
                    cache.pop("gram", None)  # h has moved with η
                K = _hessian(face, prob, h, U, cache)
            step, linear = _direction(K, g, null_tol)
            dec = float(g @ step)  # the predicted decrease (negative)
        if step is None or not np.isfinite(dec) or dec >= 0:
            # optimal on this face: open the flat edge that violates its KKT condition
            # most (one at a time: the Newton step then moves it the right way)
            face_optimal = False
            opened = None
            if n_open < MAX_OPEN:
                opened = _most_violated(face, prob, r, lam, tol, tried)
            if opened is None:
                break
            tried.add(opened[0])
            n_open += 1
            face = _Face(prob, theta, {opened[0]: opened[1]})
            c = face.linear_term(lam)
            K = None
            full_steps = 0
            F = loss + c @ face.gamma
            continue
        n_newton += 1
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
        dE = np.zeros(n)
        if nu:
            dE += U @ d_free
        dE += _gather_segments(face, prob, dgam)
        # below what F resolves, the line search cannot judge a step: the full Newton
        # step is taken (it is then in its quadratic regime) and is the last one
        tiny = not linear and -dec <= 1e3 * _EPS * abs(F)
        alpha, accepted = amax, False
        for _ in range(40):
            eta_t = eta + alpha * dE
            gam_t = face.gamma + alpha * dgam
            loss_t = _derivs(prob, eta_t, r, h)
            F_t = loss_t + c @ gam_t
            if np.isfinite(F_t) and (tiny or F_t <= F + 1e-4 * alpha * dec + 16 * _EPS * abs(F)):
                accepted = True
                break
            alpha *= 0.5
        if not accepted:
            loss = _derivs(prob, eta, r, h)
            break
        # apply the step
        free = np.concatenate([[b0] if fit_b0 else [], beta]) + alpha * d_free
        if fit_b0:
            b0, beta = float(free[0]), free[1:]
        else:
            beta = free
        gam = gam_t
        converged_step = hit is None and alpha == 1.0
        if hit is not None and alpha == amax:
            # the jump reached 0: fuse that edge and continue on the smaller face
            gam[face.jr[hit]] = gam[face.jl[hit]]
        theta = face.theta(prob, theta, gam)
        if hit is not None and alpha == amax:
            face = _Face(prob, theta)
            theta = face.theta(prob, theta, face.gamma)
            c = face.linear_term(lam)
            K = None
            full_steps = 0
            eta = prob.linear_predictor(theta, beta, b0)
            loss = _derivs(prob, eta, r, h)
            F = loss + c @ face.gamma
            continue
        face.gamma = gam
        eta, F, loss = eta_t, F_t, loss_t
        if converged_step:
            full_steps += 1
            # a quadratic is solved by one full step (one more refines the rounding)
            if tiny or (quadratic and full_steps >= 2):
                face_optimal = True  # its flat edges are checked next
    if n_newton == 0:
        return None
    # the result, checked on the true objective and the full KKT conditions
    eta = prob.linear_predictor(theta, beta, b0)
    loss = _derivs(prob, eta, r, h)
    F_new = loss + lam * prob.penalty.value(theta)
    if not (np.isfinite(F_new) and F_new <= F0 + 64 * np.finfo(float).eps * abs(F0)):
        return None
    kkt = _kkt(prob, r, theta, lam)
    return PolishResult(theta, beta, float(b0), eta, float(F_new), kkt, n_newton)


def _most_violated(face, prob, r, lam, tol, tried):
    """The flat edge (level k, sign to open with) whose |S_k| exceeds λ ω most, or None.

    S_k = Σ_{k' ≥ k} g_k' within the block (less the constraint's multiplier without an
    intercept); an edge between two positive-count levels of one segment is flat, its
    weight the least ω over the zero-count levels between them.
    """
    S = prob.penalty.edge_gradients(prob.histogram(r), prob.fit_intercept)
    seg, w, bp = face.seg, prob.weights, prob.block_ptr
    best, best_v = None, tol
    for j in range(prob.p):
        s, e = int(bp[j]), int(bp[j + 1])
        pos = np.flatnonzero(seg[s:e] >= 0) + s
        if pos.size < 2:
            continue
        prev, cur = pos[:-1], pos[1:]
        same = seg[prev] == seg[cur]
        for a, k in zip(prev[same], cur[same], strict=True):
            if k in tried:
                continue
            wk = float(w[a + 1 : k + 1].min())
            v = abs(S[k]) - lam * wk
            if wk > 0 and v > best_v:
                best, best_v = (int(k), -float(np.sign(S[k]))), v
    return best


def _gather_segments(face, prob, dgam) -> np.ndarray:
    """E dγ: the change of η from a change of the segment values."""
    delta = np.zeros(prob.d)
    has = face.seg >= 0
    delta[has] = dgam[face.seg[has]]
    out = np.zeros(prob.n)
    prob.gather_add(delta, out)
    return out


def _kkt(prob, r, theta, lam) -> float:
    worst, _, _ = prob.kkt(r, theta, lam)
    return float(worst)


class Polisher:
    """When to polish: after the jump pattern has stayed the same for a while.

    ``observe`` is called after every sweep (or iteration) with the current θ; ``ready``
    says that the pattern has been stable for ``patience`` observations and was not
    polished yet. A failed attempt doubles the patience, so that a problem whose face
    is not the optimum's pays at most a bounded share of its passes for polishing.
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

    def _pattern(self, theta):
        dt = np.diff(theta)
        s = np.sign(dt).astype(np.int8)
        s[self.prob.penalty.is_start[1:]] = 0
        return s.tobytes()

    def observe(self, theta) -> None:
        """Record the jump pattern of θ after one sweep/iteration."""
        key = self._pattern(theta)
        if key == self._key:
            self._stable += 1
        else:
            self._key, self._stable = key, 0

    def ready(self) -> bool:
        """Whether the pattern was stable for ``patience`` steps and not yet tried."""
        return self._stable >= self.patience and self._key != self._tried

    def run(self, theta, beta, b0, lam, tol, objective=None) -> PolishResult | None:
        """Polish at the current point; remember the pattern tried.

        A result that does not meet ``tol`` (the face was not the optimum's) doubles
        the patience before the next try.
        """
        self._tried = self._key
        self.attempts += 1
        res = polish(self.prob, theta, beta, b0, lam, tol, objective, self._cache)
        if res is not None:
            self.n_newton += res.n_newton
        if res is None or not res.kkt <= tol:
            self.patience *= 2
        return res
