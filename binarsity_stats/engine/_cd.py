"""Coordinate descent: the ``"cd"`` solver (design.md §4).

A proximal Newton (IRLS) outer loop; inner Gauss–Seidel sweeps over the blocks with
exact block steps (the weighted fused-lasso DP of ``kernels/_cd_fast``; a pair term's
grid block by ``penalty/_grid.grid_block_step`` after each kernel sweep), screening of
flat blocks by their KKT condition, Anderson extrapolation, the polish on the fused
segments (``_polish``), and a backtracking line search on F for binomial and poisson;
or every quadratic model solved from its Gram (``_gram.gram_cd``, ``backend="gram"``).
Called by ``_solvers.solve`` and ``Prepared.solve`` only.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from ..kernels._fused_lasso import work_size as fused_lasso_work_size_py
from ..penalty._grid import grid_block_step
from ._gram import anderson_weights, gram_cd
from ._polish import Polisher
from ._problem import SolverData
from ._solution import Solution, _finish, _initial_point

__all__: list[str] = []

_EPS = float(np.finfo(float).eps)


def _cd(prob: SolverData, lam: float, tol: float, max_iter: int, warm_start) -> Solution:
    theta, beta, b0 = _initial_point(prob, warm_start)
    b0 += prob.recenter(theta) if prob.fit_intercept else 0.0
    lam_w = np.ascontiguousarray(lam * prob.weights)
    eta = prob.linear_predictor(theta, beta, b0)
    quadratic = prob.family.quadratic
    n_blocks = prob.n_blocks
    sizes = np.diff(prob.block_ptr)
    maxK = int(sizes.max()) if n_blocks else 1
    work = np.empty(7 * maxK + fused_lasso_work_size_py(maxK))
    always_active = ~prob.penalty.screened_block if n_blocks else np.zeros(0, bool)
    # grid blocks (pair terms) are stepped here, never by the kernel (``STEP_PYTHON``)
    grids = prob.penalty.grids
    in_kernel = np.ones(n_blocks, bool)
    in_kernel[list(grids)] = False
    # the grid steps' edge multipliers, shared with the grid's KKT rule (its gradient map
    # solves the same block step at the same point): each step warm-starts from the last
    grid_u: dict[int, np.ndarray] = prob.penalty._grid_u
    if grids:
        prob.penalty.grid_tol = tol  # the grids' KKT rule resolves what decides kkt <= tol
    z = prob.row_vector()
    delta_eta = prob.row_vector()
    n_sweeps = 0
    n_outer = 0
    converged = False
    kkt = np.inf
    loss = prob.grad_hess(eta)
    # pen(θ) of the current θ when known (None after a polish): the line search's
    # pen(θ_old) without a second pass over the levels (the same number)
    pen = prob.penalty.value(theta)
    F = loss + lam * pen
    # the unpenalised columns (intercept first) are updated jointly by a Newton step
    n_free = prob.n_free
    polisher = Polisher(prob)
    while True:
        r, h = prob.r, prob.h
        G, H = prob.histograms2(r, h)
        kkt, per_block, _ = prob.kkt(r, theta, lam, G)
        if kkt <= tol:
            converged = True
            break
        if n_sweeps >= max_iter:
            break
        if not quadratic:
            polisher.progress(kkt, tol)  # the proximal Newton steps' rate
        if polisher.ready():
            # the jump set has settled: Newton on its segments (design.md §9)
            res = polisher.run(theta, beta, b0, lam, tol, F)
            if res is not None:
                theta, beta, b0, eta, F = res.theta, res.beta, res.b0, res.eta, res.objective
                pen = None
                loss = prob.grad_hess(eta)
                continue
        n_outer += 1
        # working set: blocks that have a jump, violate their condition, or are free
        if n_blocks:
            has_jump = np.logical_or.reduceat(prob.penalty.jumps(theta), prob.block_ptr[:-1])
            active = np.flatnonzero(
                (has_jump | (per_block > tol) | always_active) & in_kernel
            ).astype(np.intp)
        else:
            active = np.zeros(0, np.intp)
        ridge = 1e-12 * max(prob.row_sum(h), 1e-300)
        H += ridge
        if n_free:
            # the free columns' Gram Uᵀ diag(h) U (intercept's column first)
            gram = prob.free_gram(h)
            # the inverse once per Newton step: the sweeps then need a tiny mat-vec only
            if n_free == 1:
                gram_inv = 1.0 / (gram + ridge)  # the intercept alone: no factorisation
            else:
                eye = np.eye(n_free)
                gram_inv = scipy.linalg.cho_solve(scipy.linalg.cho_factor(gram + ridge * eye), eye)
        z[:] = r
        delta_eta[:] = 0.0
        theta_old, beta_old, b0_old = theta.copy(), beta.copy(), b0
        # inner loop on the quadratic model: its own KKT decides when to stop
        inner_tol = tol if quadratic else max(0.1 * kkt, 0.2 * tol)
        history = []
        if quadratic:
            polisher.new_model()
        while True:
            viol, shift, _ = prob.cd_sweep(active, lam_w, H, theta, z, delta_eta, h, work)
            if grids:
                viol = max(viol, _grid_steps(prob, grids, grid_u, lam, H, theta, z, delta_eta, h,
                                             0.01 * inner_tol))  # fmt: skip
            n_sweeps += 1
            b0 += shift
            if n_free:
                g_free = prob.free_dot(z)
                viol = max(viol, float(np.abs(g_free).max()))
                step = -(gram_inv @ g_free)
                prob.free_step(step, h, z, delta_eta)
                if prob.fit_intercept:
                    b0 += step[0]
                    beta += step[1:]
                else:
                    beta += step
            if quadratic:
                polisher.observe(theta, viol=viol, target=tol)
            else:
                polisher.observe(theta)
            if viol <= inner_tol or n_sweeps >= max_iter or polisher.ready():
                break
            # Anderson extrapolation of the sweeps (as skglm does for CD): on
            # ill-conditioned problems (near-duplicate features, tiny λ) Gauss–Seidel
            # converges linearly with a rate near 1; a combination of the last iterates
            # that lowers the model objective is taken instead.
            free_now = np.concatenate([[b0], beta])
            history.append((theta.copy(), free_now))
            if len(history) == _ANDERSON_DEPTH + 1:
                cand = _anderson(history)
                history.clear()
                if cand is not None and prob.penalty.shape_violation(cand[0]) > 0:
                    cand = None  # an affine mix of ordered blocks need not be ordered
                if cand is not None:
                    th_e, free_e = cand
                    de = prob.row_vector(0.0)
                    prob.gather_add_blocks(active, th_e - theta_old, de)
                    if n_free:
                        # the free columns, the intercept's first when fitted
                        dfree = free_e - np.concatenate([[b0_old], beta_old])
                        dfree = dfree if prob.fit_intercept else dfree[1:]
                        prob.free_matvec_add(dfree, de)
                    m_cur = prob.quadratic_model(r, h, delta_eta) + lam * prob.penalty.value(theta)
                    m_ext = prob.quadratic_model(r, h, de) + lam * prob.penalty.value(th_e)
                    if m_ext < m_cur - 1e-9 * abs(m_cur):
                        theta[:] = th_e
                        b0 = float(free_e[0])
                        beta = free_e[1:].copy()
                        delta_eta[:] = de
                        np.multiply(h, de, out=z)
                        z += r
        if quadratic:
            eta = eta + delta_eta
            loss = prob.grad_hess(eta)
            pen = prob.penalty.value(theta)
            F = loss + lam * pen
            continue
        # backtracking line search on F along the Newton direction
        pen_old = prob.penalty.value(theta_old) if pen is None else pen
        pen_new = prob.penalty.value(theta)
        decrease = prob.row_dot(r, delta_eta) + lam * (pen_new - pen_old)
        dtheta, dbeta, db0 = theta - theta_old, beta - beta_old, b0 - b0_old
        alpha = 1.0
        accepted = False
        for _ in range(50):
            # η + α δη in z's buffer (z is dead until the next outer step: a row vector
            # fewer at the fit's peak; the same sum, bit for bit)
            eta_try = np.multiply(delta_eta, alpha, out=z)
            eta_try += eta
            th_try = theta_old + alpha * dtheta
            if alpha != 1.0:
                # a monotone block stays ordered under the rounding of the combination
                prob.penalty.enforce_shape(th_try)
            if alpha == 1.0:
                # the full step is usually accepted: get its derivatives in the same pass,
                # into the working r and h (dead from here: a rejected step recomputes
                # them at the point taken; two row vectors fewer at the fit's peak)
                loss_try = prob.grad_hess_into(eta_try, r, h)
                pen_try = prob.penalty.value(th_try)
                F_try = loss_try + lam * pen_try
            else:
                pen_try = prob.penalty.value(th_try)
                F_try = prob.loss(eta_try) + lam * pen_try
            # Armijo, with slack for the rounding of F itself: near the optimum the
            # predicted decrease is below the resolution of F and a full step is right
            slack = 64 * _EPS * abs(F)
            if np.isfinite(F_try) and F_try <= F + 1e-4 * alpha * min(decrease, 0.0) + slack:
                accepted = True
                break
            alpha *= 0.5
        if not accepted:
            # no step lowers F: stay at the last point and report its KKT violation
            theta, beta, b0 = theta_old, beta_old, b0_old
            loss = prob.grad_hess(eta)
            kkt, _, _ = prob.kkt(prob.r, theta, lam)
            converged = kkt <= tol
            break
        else:
            theta, pen = th_try, pen_try
            beta = beta_old + alpha * dbeta
            b0 = b0_old + alpha * db0
            z, eta = eta, eta_try  # the old η's buffer is z's from now on
        # F_try is F at the accepted point: only the derivatives may be missing (the full
        # step's are already in r and h)
        if alpha != 1.0:
            prob.grad_hess_only(eta)
        F = F_try
    if prob.fit_intercept:
        b0 += prob.recenter(theta)
    return _finish(prob, theta, beta, b0, lam, eta, kkt, converged, n_outer, n_sweeps, tol)


_ANDERSON_DEPTH = 5


def _grid_steps(prob, grids, grid_u, lam, H, theta, z, delta_eta, h, accuracy) -> float:
    """One exact step of every grid block (Gauss–Seidel, after the kernel's sweep).

    For grid block j with cells c, the block's quadratic model (gradient g = (X^B)ᵀz on
    its cells, curvature H) is minimised under its TV and its weighted zero margins by
    ``grid_block_step`` at targets θ_c − g/H (warm-started from the last step's edge
    multipliers), certified to ``accuracy`` in the gradient's units (a share of the
    inner loop's tolerance: the step's region solve, proven by its duality gap, mostly
    without an LP); the margins replace the chains' re-centring (they imply n_jᵀθ_j = 0).
    z and Δη take the change. Returns the largest gradient map ‖H(θ_c − θ⁺_c)‖_∞ seen
    before each update (the kind's KKT rule of the model, as the kernel's violation).
    """
    worst = 0.0
    for j, grid in grids.items():
        cells = prob.penalty.grid_cells(j)
        g = prob.histogram(z)[cells]
        Hj = H[cells]
        old = theta[cells].copy()
        step = grid_block_step(grid, old - g / Hj, Hj, lam, prob.counts[cells],
                               warm_u=grid_u.get(j), accuracy=accuracy)  # fmt: skip
        grid_u[j] = step.u
        worst = max(worst, float(np.max(np.abs(Hj * (old - step.theta)), initial=0.0)))
        delta = np.zeros(prob.n_levels)
        delta[cells] = step.theta - old
        if not np.any(delta):
            continue
        theta[cells] = step.theta
        de = prob.row_vector(0.0)
        prob.gather_add_blocks(np.array([j], np.intp), delta, de)
        z += h * de
        delta_eta += de
    return worst


def _gram_solve(prob: SolverData, lam, tol, max_iter, warm_start, cache) -> Solution:
    """CD with every quadratic model solved from its Gram (``_gram.gram_cd``)."""
    theta, beta, b0 = _initial_point(prob, warm_start)
    theta, beta, b0, eta, kkt, converged, n_outer, n_sweeps = gram_cd(
        prob, lam, tol, max_iter, theta, beta, b0, cache
    )
    return _finish(prob, theta, beta, b0, lam, eta, kkt, converged, n_outer, n_sweeps, tol)


def _anderson(history):
    """Anderson extrapolation of fixed-point iterates (Anderson 1965; skglm's CD).

    With U the matrix of successive differences of the iterates, the weights c
    minimise ‖U c‖ subject to Σ c = 1; the candidate is Σ_i c_i x_{i+1}.
    Returns None when the system is singular.
    """
    thetas = np.array([t for t, _ in history])
    frees = np.array([f for _, f in history])
    c = anderson_weights(np.hstack([thetas, frees]))
    if c is None:
        return None
    return c @ thetas[1:], c @ frees[1:]
