"""The Gram backend of the solvers: quadratic models solved from sufficient statistics (design.md §9).

For a quadratic model of the loss — the gaussian loss itself, or one IRLS step of a
binomial/poisson fit — everything the exact block steps need is the weighted Gram of
the design and its products with the working response (``design/_gram_stats``:
:class:`GramStats`, built in one pass over the rows by :func:`gram_statistics`; the
names are importable from here too).

:func:`solve_gram` minimises the penalised quadratic

    F(θ, f) = (1/W) ½ Σ_i w_i (z_i − η_i)² + λ Σ_j Σ_{k≥1} ω_jk |θ_jk − θ_j,k−1|,
    η = X^B θ + U f,   n_jᵀθ_j = 0 for every block j,

from the statistics alone: Gauss–Seidel sweeps of exact block steps (the weighted
fused-lasso step of ``_cd_fast``, with the gradient g = (Gθ + BU f − Bz)/W updated in
O(d_j · d) per block, a sweep O(d²) whatever n), a joint Newton step on the free
columns, Anderson extrapolation, and the active-set Newton solve on the fused
segments of ``_polish`` once the jump set has settled (exact to rounding on
near-collinear blocks, where sweeps crawl). Nothing in it touches a row.

:func:`gram_cd` is the in-memory solver behind ``backend="gram"``: a proximal Newton
(IRLS) loop through the ``SolverData`` protocol — one Gram per Newton step from
``bin_gram``/``bin_free_gram``/``free_gram`` (gaussian: one Gram for the whole λ path,
kept in a cache), the quadratic model solved exactly by the above, a backtracking line
search on the true objective for binomial and poisson. :func:`choose_backend` is the
cost model of ``backend="auto"``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
import scipy.linalg

from ..design._gram_stats import GramStats, bin_pair_gram, gram_statistics, gram_statistics_numpy
from ..kernels import _gram_fast
from ..kernels._fused_lasso import work_size as _fl_work_size
from ..penalty._penalty import BinarsityPenalty
from ._polish import MAX_BIN_GRAM, _BinGram, _solve_model
from ._problem import block_kkt

__all__ = [
    "GramStats",
    "GramSolution",
    "gram_statistics",
    "gram_statistics_numpy",
    "bin_pair_gram",
    "solve_gram",
    "gram_cd",
    "choose_backend",
    "BACKENDS",
    "FoldGrams",
]

#: The values of the solvers' ``backend`` option.
BACKENDS = ("auto", "rows", "gram")

_EPS = np.finfo(float).eps


# --------------------------------------------------------------------------- the model solve


@dataclass
class _Model:
    """A quadratic model in (θ, f): gradient (g, gU) at the current point, Hessian blocks."""

    B: np.ndarray  # d × d
    BU: np.ndarray  # d × m
    UU: np.ndarray  # m × m
    g: np.ndarray  # d
    gU: np.ndarray  # m


def _free_inverse(UU: np.ndarray) -> np.ndarray:
    """(UU + ridge)⁻¹ by a Jacobi-scaled Cholesky (pseudo-inverse when singular)."""
    m = UU.shape[0]
    if m == 0:
        return np.zeros((0, 0))
    dg = np.sqrt(np.maximum(np.diag(UU), 0.0))
    dg[dg == 0] = 1.0
    A = UU / dg[:, None] / dg[None, :] + 1e-12 * np.eye(m)
    try:
        inv = scipy.linalg.cho_solve(scipy.linalg.cho_factor(A), np.eye(m))
    except (np.linalg.LinAlgError, scipy.linalg.LinAlgError):
        inv = np.linalg.pinv(A, rcond=1e-10)
    return inv / dg[:, None] / dg[None, :]


def _face_view(penalty: BinarsityPenalty, counts, fit_intercept: bool):
    """What ``_polish``'s active-set solve reads of a problem (no rows)."""
    return SimpleNamespace(
        block_ptr=penalty.block_ptr, weights=penalty.weights, counts=counts,
        fit_intercept=fit_intercept, n_blocks=len(penalty.block_ptr) - 1,
        n_levels=int(penalty.block_ptr[-1]), penalty=penalty,
    )  # fmt: skip


def _kkt(model: _Model, penalty, theta, lam, fit_intercept) -> tuple[float, np.ndarray]:
    per_block = block_kkt(penalty, model.g, theta, lam, fit_intercept)
    worst = float(per_block.max()) if per_block.size else 0.0
    if model.gU.size:
        worst = max(worst, float(np.abs(model.gU).max()))
    return worst, per_block


_ANDERSON_DEPTH = 5
# Sweeps with an unchanged jump pattern before the active-set Newton solve is tried.
_PATIENCE = 3


def anderson_weights(X: np.ndarray) -> np.ndarray | None:
    """The weights of Anderson extrapolation of the iterates in the rows of ``X``.

    With U the matrix of successive differences of the rows, the weights c minimise
    ‖Uᵀc‖ subject to Σ c = 1 (the candidate is ``c @ X[1:]``); a Tikhonov term of
    1e-9 · trace keeps them stable (and so the iterates reproducible under rounding)
    when successive differences are nearly collinear. Used by CD (``_anderson``) and
    by the Gram backend's quadratic solver (``_gram._anderson``).

    Parameters
    ----------
    X : ndarray of shape (k + 1, d)
        The last k + 1 iterates, oldest first.

    Returns
    -------
    ndarray of shape (k,) or None
        None when the system is singular or the weights are not finite.
    """
    U = np.diff(X, axis=0)
    C = U @ U.T
    C += 1e-9 * max(np.trace(C), np.finfo(float).tiny) * np.eye(len(C))
    try:
        c = np.linalg.solve(C, np.ones(len(C)))
    except np.linalg.LinAlgError:
        return None
    if not np.all(np.isfinite(c)) or c.sum() == 0:
        return None
    return c / c.sum()


def _anderson(history):
    """Anderson extrapolation of the last iterates (the weights of :func:`anderson_weights`)."""
    X = np.array(history)
    c = anderson_weights(X)
    return None if c is None else c @ X[1:]


def _solve_model_cd(model: _Model, penalty, counts, fit_intercept, lam, tol, max_sweeps,
                    theta, f, null_tol=None):  # fmt: skip
    """Minimise the quadratic model + λ pen exactly from its Gram; (θ, f, sweeps, kkt).

    Updates ``model.g``/``model.gU`` to the gradient at the returned point. Sweeps of
    exact block steps (working set: blocks with a jump, a violated condition or an
    unscreened kind), the free columns' joint Newton step after every sweep, Anderson
    extrapolation every few sweeps (accepted when the model objective drops), and the
    active-set Newton solve of ``_polish`` once the jump pattern has been stable for
    three sweeps.
    """
    d, m = model.B.shape[0], model.UU.shape[0]
    bp = penalty.block_ptr
    p = len(bp) - 1
    theta = np.array(theta, dtype=np.float64)
    f = np.array(f, dtype=np.float64)
    lam_w = np.ascontiguousarray(lam * penalty.weights)
    H = np.ascontiguousarray(np.diag(model.B).copy())
    ridge = 1e-12 * max(float(H.sum()), 1e-300)
    H += ridge
    counts = np.ascontiguousarray(counts, dtype=np.float64)
    maxK = int(np.diff(bp).max()) if p else 1
    work = np.empty(6 * maxK + _fl_work_size(maxK))
    UU_inv = _free_inverse(model.UU)
    always = ~penalty.screened_block if p else np.zeros(0, bool)
    steps = penalty.steps
    view = _face_view(penalty, counts, fit_intercept)
    gram = _BinGram.__new__(_BinGram)
    gram.B, gram.BU, gram.UU = model.B, model.BU, model.UU
    if null_tol is None:
        null_tol = 1e-9 * max(lam * float(penalty.weights.max(initial=0.0)), 1e-300)

    def model_value_change(th0, f0, g0, gU0, th1, f1, g1, gU1):
        # m(x1) − m(x0) = ½ (g0 + g1)ᵀ (x1 − x0) for a quadratic
        return 0.5 * (float((g0 + g1) @ (th1 - th0)) + float((gU0 + gU1) @ (f1 - f0)))

    def move_to(th_new, f_new):
        dth, dfr = th_new - theta, f_new - f
        model.g += model.B @ dth + model.BU @ dfr
        model.gU += model.BU.T @ dth + model.UU @ dfr

    sweeps = 0
    key, stable, tried = None, 0, None
    kkt, per_block = _kkt(model, penalty, theta, lam, fit_intercept)
    while kkt > tol and sweeps < max_sweeps:
        if p:
            has_jump = np.logical_or.reduceat(penalty.jumps(theta), bp[:-1])
            active = np.flatnonzero(has_jump | (per_block > tol) | always).astype(np.intp)
        else:
            active = np.zeros(0, np.intp)
        history = []
        while sweeps < max_sweeps:
            viol, shift, _ = _gram_fast.gram_cd_sweep(
                bp, active, lam_w, H, counts, model.B, model.BU, theta, model.g, model.gU,
                fit_intercept, 1e-12, work, steps,
            )  # fmt: skip
            sweeps += 1
            if fit_intercept:
                f[0] += shift
            if m:
                viol = max(viol, float(np.abs(model.gU).max()))
                step = -(UU_inv @ model.gU)
                f += step
                model.g += model.BU @ step
                model.gU += model.UU @ step
            if viol <= tol:
                break
            pattern = np.sign(np.diff(theta)).astype(np.int8)
            if p:
                pattern[penalty.is_start[1:]] = 0
            pk = pattern.tobytes()
            stable = stable + 1 if pk == key else 0
            key = pk
            if stable >= _PATIENCE and key != tried and d <= MAX_BIN_GRAM:
                # the jump set has settled: Newton on its fused segments, from the Gram
                tried = key
                th_new, dfree, _ = _solve_model(view, gram, model.g.copy(), model.gU.copy(),
                                                theta, lam, tol, null_tol)  # fmt: skip
                if th_new is not None:
                    f_new = f + dfree
                    pen0 = penalty.value(theta)
                    g0, gU0, th0, f0 = model.g.copy(), model.gU.copy(), theta.copy(), f.copy()
                    move_to(th_new, f_new)
                    change = model_value_change(th0, f0, g0, gU0, th_new, f_new, model.g,
                                                model.gU) + lam * (penalty.value(th_new) - pen0)  # fmt: skip
                    if change <= 64 * _EPS * (1.0 + abs(pen0 * lam)):
                        theta, f = th_new, f_new
                    else:  # pragma: no cover - the active-set steps never raise the model
                        model.g, model.gU = g0, gU0
                    break
            # Anderson extrapolation of the sweeps (skglm's CD; _solvers._cd)
            history.append(np.concatenate([theta, f]))
            if len(history) == _ANDERSON_DEPTH + 1:
                cand = _anderson(history)
                history.clear()
                if cand is not None:
                    th_e, f_e = cand[:d], cand[d:]
                    g0, gU0 = model.g.copy(), model.gU.copy()
                    g1 = g0 + model.B @ (th_e - theta) + model.BU @ (f_e - f)
                    gU1 = gU0 + model.BU.T @ (th_e - theta) + model.UU @ (f_e - f)
                    change = model_value_change(theta, f, g0, gU0, th_e, f_e, g1, gU1)
                    change += lam * (penalty.value(th_e) - penalty.value(theta))
                    if change < -1e-12 * abs(lam * penalty.value(theta)) and change < 0:
                        theta, f = th_e, f_e
                        model.g, model.gU = g1, gU1
        if fit_intercept and p:
            f[0] += _recenter(theta, bp, counts)
        kkt, per_block = _kkt(model, penalty, theta, lam, fit_intercept)
    return theta, f, sweeps, kkt


def _recenter(theta, bp, counts) -> float:
    """Re-centre every block in place (n_jᵀθ_j = 0); the total shift (for β0)."""
    num = np.add.reduceat(counts * theta, bp[:-1])
    den = np.add.reduceat(counts, bp[:-1])
    shift = np.divide(num, den, out=np.zeros_like(num), where=den > 0)
    theta -= np.repeat(shift, np.diff(bp))
    return float(shift.sum())


@dataclass
class GramSolution:
    """The solution of a penalised quadratic model solved from its statistics.

    Attributes
    ----------
    coef : ndarray of shape (d,)
        θ (re-centred: n_jᵀθ_j = 0 with the counts given).
    dense_coef : ndarray of shape (q,)
        β of the dense columns.
    intercept : float
        β0 (0 without an intercept).
    lam : float
        λ.
    objective : float
        F = (1/W) ½ Σ w (z − η)² + λ pen(θ), from the statistics.
    kkt_violation : float
        Largest KKT violation of the model (in the units of its gradient).
    converged : bool
        Whether ``kkt_violation <= tol``.
    n_sweeps : int
        Sweeps of block steps (each O(d²), no pass over the rows).
    """

    coef: np.ndarray
    dense_coef: np.ndarray
    intercept: float
    lam: float
    objective: float
    kkt_violation: float
    converged: bool
    n_sweeps: int


def solve_gram(
    stats: GramStats,
    lam: float,
    penalty_weights,
    *,
    kinds=None,
    counts=None,
    fit_intercept: bool = True,
    loss_scale: float | None = None,
    warm_start=None,
    tol: float = 1e-7,
    max_iter: int = 1000,
) -> GramSolution:
    """Minimise the penalised quadratic model of ``stats`` (design.md §9), on the client.

    F(θ, β0, β) = (1/W) ½ Σ_i w_i (z_i − η_i)² + λ Σ_j Σ_{k≥1} ω_jk |θ_jk − θ_j,k−1|,
    η = β0 + X^B θ + Z β, subject to n_jᵀθ_j = 0, from the statistics only (no rows).
    One call per IRLS step of a distributed binomial/poisson fit (w = s b''(η),
    z = the working response with the offset removed, W = Σ s); one call per λ for a
    gaussian fit (w = s, z = y − offset).

    Parameters
    ----------
    stats : GramStats
        The model's statistics (:func:`gram_statistics`, summed over partitions).
    lam : float
        λ ≥ 0.
    penalty_weights : array-like of shape (d,)
        ω_jk (block starts ignored; forced to 0 on unpenalised kinds).
    kinds : sequence of str, optional
        Kind of every block (``"tv"``, ``"free"``; default inferred from the weights).
    counts : array-like of shape (d,), optional
        n_jk of the constraints n_jᵀθ_j = 0 (the bin counts of the *sample* weights).
        Default: the statistics' weighted bin counts (right for gaussian; an IRLS step
        must pass the sample-weight counts, as its w includes the curvature).
    fit_intercept : bool, default=True
        Whether to fit β0 (the ones column of U); without it the constraints are kept
        by the constrained block step.
    loss_scale : float, optional
        W of the objective (default Σ w; an IRLS step passes Σ s).
    warm_start : GramSolution or tuple (coef, dense_coef, intercept), optional
        Starting point (e.g. the previous IRLS step's or λ's solution).
    tol : float, default=1e-7
        Stop when the model's KKT violation (design.md §2; gradient of F) is ≤ tol.
    max_iter : int, default=1000
        Cap on sweeps.

    Returns
    -------
    GramSolution

    Examples
    --------
    >>> import numpy as np
    >>> from binarsity_stats.engine._gram import gram_statistics, solve_gram
    >>> rng = np.random.default_rng(0)
    >>> codes = rng.integers(0, 4, size=(2, 500)).astype(np.uint8)
    >>> y = 1.0 * (codes[0] >= 2) + rng.normal(size=500)
    >>> st = gram_statistics(codes, [0, 4, 8], z=y)
    >>> w = np.ones(8)
    >>> sol = solve_gram(st, 0.01, w)
    >>> bool(sol.converged), round(sol.coef[3] - sol.coef[0], 1)
    (True, 1.0)
    """
    if not isinstance(stats, GramStats):
        raise TypeError(f"stats must be a GramStats; got {type(stats).__name__}.")
    lam = float(lam)
    if not np.isfinite(lam) or lam < 0:
        raise ValueError(f"lam must be a finite number >= 0; got {lam}.")
    d, bp = stats.n_levels, stats.block_ptr
    if counts is None:
        counts = stats.counts
    counts = np.ascontiguousarray(np.asarray(counts, dtype=np.float64).ravel())
    if counts.shape != (d,) or not np.all(np.isfinite(counts)) or np.any(counts < 0):
        raise ValueError(f"counts must be {d} finite non-negative numbers.")
    w = np.asarray(penalty_weights, dtype=np.float64).ravel()
    if w.shape != (d,) or not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError(f"penalty_weights must be {d} finite non-negative numbers.")
    penalty = BinarsityPenalty(bp, w, counts, kinds)
    _check_steps(penalty)
    W = stats.weight_sum if loss_scale is None else float(loss_scale)
    if not np.isfinite(W) or W <= 0:
        raise ValueError(f"loss_scale (W) must be a positive number; got {W}.")
    sel = slice(0, None) if fit_intercept else slice(1, None)
    B, BU, UU = stats.BB / W, stats.BU[:, sel] / W, stats.UU[sel, sel] / W
    bz, uz = stats.Bz / W, stats.Uz[sel] / W
    q = stats.n_dense
    theta = np.zeros(d)
    beta = np.zeros(q)
    b0 = 0.0
    if warm_start is not None:
        if isinstance(warm_start, GramSolution):
            ws = (warm_start.coef, warm_start.dense_coef, warm_start.intercept)
        else:
            ws = warm_start
        theta = np.array(ws[0], dtype=np.float64).ravel()
        beta = np.array(ws[1], dtype=np.float64).ravel()
        b0 = float(ws[2]) if fit_intercept else 0.0
        if theta.shape != (d,) or beta.shape != (q,):
            raise ValueError(f"warm_start must have {d} levels and {q} dense coefficients.")
    elif fit_intercept and stats.UU[0, 0] > 0:
        b0 = float(stats.Uz[0] / stats.UU[0, 0])
    f = np.concatenate([[b0], beta]) if fit_intercept else beta
    model = _Model(B, BU, UU, B @ theta + BU @ f - bz, BU.T @ theta + UU @ f - uz)
    theta, f, sweeps, kkt = _solve_model_cd(model, penalty, counts, fit_intercept, lam, tol,
                                            int(max_iter), theta, f)  # fmt: skip
    x_quad = 0.5 * (float(theta @ (model.g - bz)) + float(f @ (model.gU - uz)))
    # ½ xᵀGx − bᵀx = ½ xᵀ(g + b) − bᵀx = ½ xᵀ(g − b)
    objective = x_quad + 0.5 * stats.zz / W + lam * penalty.value(theta)
    b0 = float(f[0]) if fit_intercept else 0.0
    beta = f[1:].copy() if fit_intercept else f.copy()
    return GramSolution(theta, beta, b0, lam, float(objective), float(kkt), bool(kkt <= tol),
                        sweeps)  # fmt: skip


def _check_steps(penalty) -> None:
    unknown = sorted({int(s) for s in penalty.steps} - set(_gram_fast.KERNEL_STEPS))
    if unknown:
        kinds = sorted({k for k, s in zip(penalty.kinds, penalty.steps, strict=True)
                        if int(s) in unknown})  # fmt: skip
        raise ValueError(f"the Gram backend has no block step for the kind(s) {kinds}; "
                         "use backend='rows'.")  # fmt: skip


def supports(prob) -> bool:
    """Whether the Gram backend can solve this problem (its kinds' steps, size of d)."""
    steps = set(int(s) for s in prob.penalty.steps)
    return steps <= set(_gram_fast.KERNEL_STEPS) and prob.n_levels <= MAX_BIN_GRAM


# --------------------------------------------------------------------------- the backend


class FoldGrams:
    """The Grams of a design's rows, shared by the folds of a CV (design.md §9).

    For a quadratic loss the curvature is the row weight, so the Gram of a fold's
    training rows is the Gram of all rows less that of the held-out rows:
    G_train = G − G_held. All rows' statistics are computed once (thread-safe: the folds
    may ask from several threads); each fold then costs a pass over its held-out rows
    only — a K-fold CV and the path on all rows cost two passes in all instead of K.

    Parameters
    ----------
    design : BinnedDesign
        All rows (codes, dense columns, weights).
    """

    def __init__(self, design) -> None:
        self.design = design
        self._total: GramStats | None = None
        self._lock = threading.Lock()

    def _stats(self, rows=None) -> GramStats:
        des = self.design
        codes = des.codes if rows is None else np.ascontiguousarray(des.codes[:, rows])
        dense = None
        if des.dense is not None:
            dense = des.dense if rows is None else des.dense[rows]
        w = des.unit_weight if rows is None else des.unit_weight[rows]
        return gram_statistics(codes, des.block_ptr, dense, w)

    def total(self) -> GramStats:
        """The statistics of all rows (computed on first use)."""
        with self._lock:
            if self._total is None:
                self._total = self._stats()
            return self._total

    def train(self, rows=None) -> GramStats:
        """The statistics of the given rows (all rows by default), as all − held-out.

        Parameters
        ----------
        rows : ndarray of int, optional
            A fold's training rows.

        Returns
        -------
        GramStats
        """
        total = self.total()
        if rows is None:
            return total
        held = np.ones(self.design.n_rows, dtype=bool)
        held[np.asarray(rows, dtype=np.intp)] = False
        if not held.any():
            return total
        return total - self._stats(np.flatnonzero(held))


def problem_gram(prob, stats: GramStats):
    """(B, BU, UU) of a quadratic problem in its own units, from raw statistics.

    The problem's curvature is h = s/W and its free columns are U_int = [1, (Z − c)/σ]
    (with an intercept; Z/σ without), i.e. U_int = U T for U = [1, Z]: its Gram is
    (X^BᵀSX^B, X^BᵀSU T, TᵀUᵀSU T) / W. Exact for any common scale of the weights.

    Parameters
    ----------
    prob : SolverData
        The problem (``dense_center``, ``dense_scale``, ``fit_intercept``).
    stats : GramStats
        Statistics of the problem's rows with weight ∝ its sample weights.

    Returns
    -------
    tuple of ndarray
    """
    W = stats.weight_sum
    q = stats.n_dense
    T = np.zeros((q + 1, q + 1))
    T[0, 0] = 1.0
    if q:
        c, sc = np.asarray(prob.dense_center), np.asarray(prob.dense_scale)
        T[0, 1:] = -c / sc
        T[np.arange(1, q + 1), np.arange(1, q + 1)] = 1.0 / sc
    if not prob.fit_intercept:
        T = T[:, 1:]
    B = stats.BB / W
    BU = np.ascontiguousarray(stats.BU @ T / W)
    UU = T.T @ stats.UU @ T / W
    return B, BU, UU


def choose_backend(prob, backend: str = "auto", n_lambdas: int = 1, sweeps=None,
                   gram_cached: bool = False) -> str:  # fmt: skip
    """``"rows"`` or ``"gram"`` for this problem (the cost model of ``backend="auto"``).

    A row sweep visits the n·p codes; a Gram sweep costs O(d²) (d = levels) whatever n,
    after the Gram's pass of about n·p(p−1)/2 table updates (per Newton step for
    binomial/poisson, once per λ path for gaussian). With S sweeps expected per fit:
    rows ≈ S·n·p, gram ≈ (Grams per fit)·1.5·n·p² + S·d² (+ two passes over the rows
    per Newton step for η and the KKT check). The Gram is chosen when it costs less
    than half the rows (than the rows, when the Gram of a quadratic loss is already
    paid for: a path or a CV fold). S is the last fit's count when known (a warm path;
    a crawling near-collinear fit), else 30 per Newton step. A small problem
    (n·p ≤ 5e4) stays on rows, whose results are pinned bit for bit.

    Parameters
    ----------
    prob : SolverData
        The problem.
    backend : {"auto", "rows", "gram"}
        The user's choice; ``"auto"`` applies the model.
    n_lambdas : int
        λ values the Gram of a quadratic loss is shared by (a path).
    sweeps : float, optional
        Sweeps expected for this fit (e.g. the previous λ's).
    gram_cached : bool
        Whether the Gram of a quadratic loss is already built.

    Returns
    -------
    str
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}; got {backend!r}.")
    if backend == "rows":
        return "rows"
    ok = supports(prob)
    if backend == "gram":
        if not ok:
            _check_steps(prob.penalty)
            raise ValueError(
                f"backend='gram' needs at most {MAX_BIN_GRAM} levels; this design has "
                f"{prob.n_levels}."
            )
        return "gram"
    if not ok:
        return "rows"
    n, p, d = prob.n_rows, max(prob.n_blocks, 1), prob.n_levels
    if n * p <= 5e4:
        return "rows"
    quadratic = bool(prob.family.quadratic)
    newton = 1.0 if quadratic else 4.0  # Newton steps per fit (each a Gram when not quadratic)
    S = 30.0 * newton if sweeps is None else max(float(sweeps), 1.0)
    rows = S * (n * p + 200.0 * p + 10_000.0)
    grams = 0.0 if (quadratic and gram_cached) else newton / (max(n_lambdas, 1) if quadratic else 1)
    gram = grams * (1.5 * n * p * (p - 1) + n * (p + 1)) + S * (d * d + 2000.0 * p)
    gram += 2.0 * newton * n * p
    if quadratic and gram_cached:
        # the Gram is paid for (a path, a CV fold): a later λ reads the rows once
        return "gram" if gram < rows else "rows"
    return "gram" if gram < 0.5 * rows else "rows"


def gram_cd(prob, lam: float, tol: float, max_iter: int, theta, beta, b0, cache=None):
    """Fit at one λ by proximal Newton with every quadratic model solved from its Gram.

    Through the ``SolverData`` protocol only: per Newton step one Gram of the bins and
    free columns at the current curvature (``bin_gram``, ``bin_free_gram``,
    ``free_gram``; for a quadratic loss once, kept in ``cache`` across calls), the bin
    sums of the working gradient (``histogram``, ``free_dot``), the model solved
    exactly by :func:`_solve_model_cd`, and for binomial/poisson a backtracking line
    search on the true objective. The stopping test is the true KKT check of the rows
    (``kkt``), as the row solver's.

    Parameters
    ----------
    prob : SolverData
        The problem.
    lam, tol, max_iter
        As in ``_solvers._cd`` (``tol`` in the gradient's units already).
    theta, beta, b0
        The starting point (internal units of the free columns).
    cache : dict, optional
        Holds the Gram of a quadratic loss across calls (a λ path).

    Returns
    -------
    tuple
        ``(theta, beta, b0, eta, kkt, converged, n_outer, n_sweeps)`` for
        ``_solvers._finish``.
    """
    theta = np.array(theta, dtype=np.float64)
    beta = np.array(beta, dtype=np.float64)
    fit_b0 = prob.fit_intercept
    if fit_b0:
        b0 += prob.recenter(theta)
    quadratic = bool(prob.family.quadratic)
    if cache is None:
        cache = {}
    if not quadratic:
        cache.pop("gram", None)  # a curvature of another point
    counts = np.ascontiguousarray(prob.counts, dtype=np.float64)
    if quadratic and "gram" in cache and "lin" in cache:
        # a quadratic loss whose Gram and linear term are known (a later λ of a path):
        # the gradient is affine, g = G x − b, so the whole solve is in the statistics;
        # the rows are read once, for η
        B, BU, UU = cache["gram"]
        b, bU = cache["lin"]
        f0 = np.concatenate([[b0], beta]) if fit_b0 else beta.copy()
        model = _Model(B, BU, UU, B @ theta + BU @ f0 - b, BU.T @ theta + UU @ f0 - bU)
        theta, f, sweeps, kkt = _solve_model_cd(model, prob.penalty, counts, fit_b0, lam,
                                                0.5 * tol, max_iter, theta, f0)  # fmt: skip
        b0, beta = (float(f[0]), f[1:].copy()) if fit_b0 else (0.0, f.copy())
        if fit_b0:
            b0 += prob.recenter(theta)
        eta = prob.linear_predictor(theta, beta, b0)
        return theta, beta, b0, eta, kkt, bool(kkt <= tol), 1, sweeps
    eta = prob.linear_predictor(theta, beta, b0)
    r_try, h_try = prob.row_vector(), prob.row_vector()
    loss = prob.grad_hess(eta)
    F = loss + lam * prob.penalty.value(theta)
    n_sweeps = n_outer = 0
    converged = False
    kkt = np.inf
    while True:
        r, h = prob.r, prob.h
        g = prob.histogram(r)
        kkt, _, _ = prob.kkt(r, theta, lam, g)
        if kkt <= tol:
            converged = True
            break
        if n_sweeps >= max_iter or n_outer >= max_iter:
            break
        n_outer += 1
        source = cache.get("source")
        if "gram" not in cache and source is not None and quadratic:
            # the Gram from the rows' statistics (a CV fold's: all − held-out), if the
            # curvature is the normalised row weight (Σ h = 1) as the statistics assume
            if abs(prob.row_sum(h) - 1.0) <= 1e-9:
                cache["gram"] = problem_gram(prob, source())
        if "gram" not in cache:
            B = prob.bin_gram(h)
            BU = prob.bin_free_gram(h) if prob.n_free else np.zeros((prob.n_levels, 0))
            UU = prob.free_gram(h) if prob.n_free else np.zeros((0, 0))
            cache["gram"] = (B, np.ascontiguousarray(BU), UU)
        B, BU, UU = cache["gram"]
        gU = prob.free_dot(r) if prob.n_free else np.zeros(0)
        f0 = np.concatenate([[b0], beta]) if fit_b0 else beta.copy()
        if quadratic and "lin" not in cache:
            # the linear term of the affine gradient g = G x − b, for later λ
            cache["lin"] = (B @ theta + BU @ f0 - g, BU.T @ theta + UU @ f0 - gU)
        model = _Model(B, BU, UU, g.copy(), gU.copy())
        inner_tol = 0.5 * tol if quadratic else max(0.1 * kkt, 0.2 * tol)
        th_new, f_new, sweeps, _ = _solve_model_cd(model, prob.penalty, counts, fit_b0, lam,
                                                   inner_tol, max(max_iter - n_sweeps, 1),
                                                   theta, f0)  # fmt: skip
        n_sweeps += max(sweeps, 1)
        dth, dfr = th_new - theta, f_new - f0
        delta_eta = prob.row_vector(0.0)
        prob.gather_add_blocks(np.arange(prob.n_blocks, dtype=np.intp), dth, delta_eta)
        if prob.n_free:
            prob.free_matvec_add(np.ascontiguousarray(dfr), delta_eta)
        pen_old = prob.penalty.value(theta)
        if quadratic:
            theta, eta = th_new, eta + delta_eta
            b0, beta = (float(f_new[0]), f_new[1:].copy()) if fit_b0 else (0.0, f_new.copy())
            loss = prob.grad_hess(eta)
            F = loss + lam * prob.penalty.value(theta)
            if not np.any(dth) and not np.any(dfr):
                # the model is solved and nothing moves: the row check decides
                kkt, _, _ = prob.kkt(prob.r, theta, lam)
                converged = kkt <= tol
                break
            continue
        decrease = float(g @ dth + gU @ dfr) + lam * (prob.penalty.value(th_new) - pen_old)
        alpha, accepted = 1.0, False
        for _ in range(50):
            eta_try = eta + alpha * delta_eta
            th_try = theta + alpha * dth
            loss_try = prob.grad_hess_into(eta_try, r_try, h_try)
            F_try = loss_try + lam * prob.penalty.value(th_try)
            slack = 64 * _EPS * abs(F)
            if np.isfinite(F_try) and F_try <= F + 1e-4 * alpha * min(decrease, 0.0) + slack:
                accepted = True
                break
            alpha *= 0.5
        if not accepted:
            kkt, _, _ = prob.kkt(prob.r, theta, lam)
            converged = kkt <= tol
            break
        theta = th_try
        f_acc = f0 + alpha * dfr
        b0, beta = (float(f_acc[0]), f_acc[1:].copy()) if fit_b0 else (0.0, f_acc.copy())
        eta = eta_try
        r_try, h_try = prob.set_working(r_try, h_try)
        F = F_try
        cache.pop("gram", None)  # the curvature moved with η
    if fit_b0:
        b0 += prob.recenter(theta)
    return theta, beta, b0, eta, kkt, converged, n_outer, n_sweeps
