"""Exact weighted fused-lasso solvers and the proximal operators of TV and binarsity.

Notation of design.md: a binned feature j owns the block ``theta_j`` of ``d_j``
coefficients (CSR-style offsets ``block_ptr``), penalty weights ``omega_jk`` and
weighted bin counts ``n_jk``. The binarsity penalty is

    bina(theta) = sum_j sum_{k >= 2} omega_jk |theta_jk - theta_j,k-1|
                  + delta{n_j' theta_j = 0 for every j}.

This module is the Python driver of the Cython kernels in ``_fused_lasso.pyx`` and
``_fused_lasso_constrained.pyx`` (the 1-D solvers) and ``_tv_prox.pyx`` (Condat's algorithm and the block-wise prox): it
validates every argument (errors name it), then calls the kernels, which run
without the GIL. Each kernel has a slow NumPy reference twin here, written
independently of the dynamic programme (a taut string), used by the tests.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..kernels import _fused_lasso
from ..kernels import _fused_lasso_constrained
from ..kernels import _isotonic
from ..kernels import _tv_prox
from ..core._validation import check_block_ptr, check_lam

__all__ = [
    "constrained_fused_lasso",
    "monotone_fused_lasso",
    "prox_monotone",
    "paper_algorithm1",
    "prox_binarsity",
    "prox_tv",
    "weighted_fused_lasso",
]

#: Relative tolerance on the constraint n' theta = 0 of the exact prox.
_TOL = 1e-12

_MODE_TV, _MODE_MEAN, _MODE_EXACT = 0, 1, 2


# ---------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------


def _as_vector(x: ArrayLike, name: str, length: int | None = None) -> NDArray[np.float64]:
    """`x` as a finite 1-D C-contiguous float64 array, or an error naming `name`.

    No copy is made when `x` already is one: the kernels only read their inputs
    and every driver returns a new array.
    """
    arr = np.asarray(x)
    # kinds f, i, u are exactly the floating and integer dtypes (not bool,
    # complex, object, strings or datetimes)
    if arr.dtype.kind not in "fiu":
        raise TypeError(f"{name} must be an array of real numbers, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if length is not None and arr.shape[0] != length:
        raise ValueError(f"{name} must have length {length}, got {arr.shape[0]}")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    # A finite sum proves every entry finite (a NaN or inf makes it NaN or
    # inf) in one vectorised pass with no temporary; only a non-finite sum,
    # which finite entries can also give by overflow, needs the full test.
    if not math.isfinite(np.add.reduce(arr)) and not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    return arr


def _nonnegative(arr: NDArray[np.float64], name: str) -> NDArray[np.float64]:
    if arr.size:
        low = np.minimum.reduce(arr)
        if low < 0:
            raise ValueError(f"{name} must be >= 0, got a minimum of {low!r}")
    return arr


def _as_scalar(x: object, name: str) -> float:
    # a finite number >= 0, with the wording of every such argument (lam, step, tol)
    return check_lam(x, name)


def _as_block_ptr(block_ptr: ArrayLike, d: int) -> NDArray[np.intp]:
    return check_block_ptr(block_ptr, d, end_name="len(v)")


def _chain(y: ArrayLike, weights: ArrayLike, lam: ArrayLike):
    y_ = _as_vector(y, "y")
    w_ = _nonnegative(_as_vector(weights, "weights", len(y_)), "weights")
    lam_ = _nonnegative(_as_vector(lam, "lam", len(y_)), "lam")
    return y_, w_, lam_


def _blocks(v: ArrayLike, block_ptr: ArrayLike, weights: ArrayLike, step: object):
    v_ = _as_vector(v, "v")
    ptr = _as_block_ptr(block_ptr, len(v_))
    w_ = _nonnegative(_as_vector(weights, "weights", len(v_)), "weights")
    step_ = _as_scalar(step, "step")
    return v_, ptr, w_, step_


def _prox_blocks(v, ptr, weights, step, counts, mode) -> NDArray[np.float64]:
    """The kernels on validated inputs; the penalties step * weights are formed
    in the kernel (an overflow to inf is a valid, infinitely strong fusion)."""
    out = np.empty_like(v)
    if len(v):
        status = _tv_prox.prox_blocks_py(v, ptr, weights, counts, out, mode, _TOL, step)
        if status < 0:
            warnings.warn(
                "the exact prox of binarsity hit its iteration limit on some block",
                RuntimeWarning,
                stacklevel=3,
            )
    return out


# ---------------------------------------------------------------------------
# weighted fused lasso (the exact block step of design.md section 4)
# ---------------------------------------------------------------------------


def weighted_fused_lasso(y: ArrayLike, weights: ArrayLike, lam: ArrayLike) -> NDArray[np.float64]:
    r"""Solve the weighted fused-lasso signal approximator exactly in O(K).

    .. math::

        \hat\theta = \arg\min_\theta \sum_{k=0}^{K-1} \frac{w_k}{2}(\theta_k - y_k)^2
                     + \sum_{k=1}^{K-1} \lambda_k |\theta_k - \theta_{k-1}|

    by Johnson's (2013) dynamic programme, with no inner iterations. This is the
    block step of block coordinate descent: ``weights`` are the bin sums H_jk of
    the working weights, ``y`` the bin means a_jk, ``lam`` = lambda * omega_j.

    Parameters
    ----------
    y : array_like of shape (K,)
        Targets, finite.
    weights : array_like of shape (K,)
        Observation weights w_k >= 0. Zeros are allowed: such a level is set by
        its neighbours.
    lam : array_like of shape (K,)
        Edge penalties lambda_k >= 0 between k-1 and k; ``lam[0]`` is ignored.
        A zero decouples the chain there.

    Returns
    -------
    theta : ndarray of shape (K,)
        The minimiser. It lies in [min y, max y] over the positive weights.
        Where the problem leaves a level free (a zero-weight run cut off from
        every positive weight by zero penalties), the level copies its right
        neighbour, or at the end of the chain is the point of that range
        nearest 0. All weights zero gives zeros. Weights below 1e-200 max(w)
        count as zero.

    Raises
    ------
    TypeError
        If an argument is not an array of real numbers.
    ValueError
        If shapes differ, a value is not finite, or a weight or penalty is < 0.
    """
    y_, w_, lam_ = _chain(y, weights, lam)
    out = np.empty_like(y_)
    _fused_lasso.weighted_fused_lasso_py(y_, w_, lam_, out)
    return out


def constrained_fused_lasso(
    y: ArrayLike,
    weights: ArrayLike,
    lam: ArrayLike,
    counts: ArrayLike,
    tol: float = _TOL,
) -> NDArray[np.float64]:
    r"""Solve the weighted fused-lasso signal approximator under n'theta = 0 exactly.

    .. math::

        \hat\theta = \arg\min_{\theta:\ \sum_k n_k\theta_k = 0}
            \sum_k \frac{w_k}{2}(\theta_k - y_k)^2
            + \sum_{k\ge1} \lambda_k |\theta_k - \theta_{k-1}|

    With the multiplier mu of the constraint, theta(mu) is the unconstrained
    solution with the node terms w_k (theta_k - y_k) + mu n_k, and
    g(mu) = n' theta(mu) is non-increasing and piecewise linear (design.md
    section 5). Its root is found by Newton steps on the current fused-segment
    structure (exact once the structure is right), guarded by a bracket.

    Parameters
    ----------
    y : array_like of shape (K,)
        Targets, finite.
    weights : array_like of shape (K,)
        Observation weights w_k >= 0.
    lam : array_like of shape (K,)
        Edge penalties lambda_k >= 0; ``lam[0]`` is ignored.
    counts : array_like of shape (K,)
        The n_k >= 0 of the constraint. All zero means no constraint.
    tol : float, default=1e-12
        Stop when |n'theta| <= tol (sum_k n_k |theta_k| + sum_k n_k max|y|),
        or when n'theta is below its floating-point resolution.

    Returns
    -------
    theta : ndarray of shape (K,)
        The minimiser. Where w_k = 0 on bins with n_k > 0 the problem may have
        its multiplier on the boundary of the dual domain, or several
        minimisers; an exact minimiser is still returned (see the kernel's
        docstring). K = 1 with n_0 > 0, all w zero, or y = 0 wherever w > 0
        give zeros.

    Raises
    ------
    TypeError
        If an argument is not an array of real numbers or `tol` not a number.
    ValueError
        If shapes differ, a value is not finite, or a weight, penalty, count or
        `tol` is < 0.

    Warns
    -----
    RuntimeWarning
        If the root search hit its iteration limit (the result is then the
        best estimate found; never observed on tests).
    """
    y_, w_, lam_ = _chain(y, weights, lam)
    n_ = _nonnegative(_as_vector(counts, "counts", len(y_)), "counts")
    tol_ = _as_scalar(tol, "tol")
    out = np.empty_like(y_)
    if len(y_) and _fused_lasso_constrained.constrained_fused_lasso_py(y_, w_, lam_, n_, out, tol_) < 0:
        warnings.warn(
            "constrained_fused_lasso hit its iteration limit", RuntimeWarning, stacklevel=2
        )
    return out


# ---------------------------------------------------------------------------
# proximal operators
# ---------------------------------------------------------------------------


def prox_tv(v: ArrayLike, weights: ArrayLike, step: float = 1.0) -> NDArray[np.float64]:
    r"""Proximal operator of the weighted total variation, exactly.

    .. math::

        \operatorname{prox}(v) = \arg\min_\theta \tfrac12\|\theta - v\|^2
            + \text{step} \sum_{k\ge1} \omega_k |\theta_k - \theta_{k-1}|

    Parameters
    ----------
    v : array_like of shape (m,)
        Point at which the prox is taken, finite.
    weights : array_like of shape (m,)
        Penalty weights omega_k >= 0; ``weights[0]`` is ignored.
    step : float, default=1.0
        Step size >= 0 multiplying the penalty.

    Returns
    -------
    theta : ndarray of shape (m,)
        A new array holding the prox.

    Raises
    ------
    TypeError
        If `v` or `weights` is not an array of real numbers, or `step` is not a
        real number.
    ValueError
        If the lengths differ, a value is not finite, or a weight or `step`
        is < 0.
    """
    v_ = _as_vector(v, "v")
    ptr = np.array([0, len(v_)], dtype=np.intp)
    w_ = _nonnegative(_as_vector(weights, "weights", len(v_)), "weights")
    step_ = _as_scalar(step, "step")
    return _prox_blocks(v_, ptr, w_, step_, None, _MODE_TV)


def prox_binarsity(
    v: ArrayLike,
    block_ptr: ArrayLike,
    weights: ArrayLike,
    counts: ArrayLike | None = None,
    step: float = 1.0,
) -> NDArray[np.float64]:
    r"""Exact proximal operator of binarsity (design.md section 5).

    For every block j (coefficients ``block_ptr[j]:block_ptr[j+1]``),

    .. math::

        \theta_j = \arg\min_{\theta:\ n_j'\theta = 0} \tfrac12\|\theta - v_j\|^2
            + \text{step} \sum_{k\ge2} \omega_{jk} |\theta_k - \theta_{k-1}|,

    computed as theta(mu) = prox_TV(v_j - mu n_j) with mu the root of
    n_j' theta(mu) = 0, found exactly. With equal counts this is the paper's
    Algorithm 1 (TV prox, then subtract the block mean); with unequal counts
    Algorithm 1 is *not* the prox (see :func:`paper_algorithm1`).

    Parameters
    ----------
    v : array_like of shape (d,)
        Point at which the prox is taken, finite.
    block_ptr : array_like of int, shape (p + 1,)
        Block offsets: starts at 0, strictly increasing, ends at d.
    weights : array_like of shape (d,)
        Penalty weights omega_jk >= 0; the entry at each block start is ignored.
    counts : array_like of shape (d,), optional
        Weighted bin counts n_jk >= 0. None means equal counts in each block.
    step : float, default=1.0
        Step size >= 0 multiplying the penalty.

    Returns
    -------
    theta : ndarray of shape (d,)
        A new array holding the prox. A block of size 1 is 0 (the constraint
        forces it), except that a block whose counts are all 0 has no
        constraint and gets the plain TV prox (for size 1: v itself).

    Raises
    ------
    TypeError
        If an array argument has a non-real dtype (``block_ptr``: non-integer)
        or `step` is not a real number.
    ValueError
        If shapes or offsets are inconsistent, a value is not finite, or a
        weight, count or `step` is < 0.
    """
    if counts is None:
        # the common call (float64/intp arrays, float step), checked and run
        # in compiled code; None on anything else or on bad input, which the
        # full path below then reports with its own error
        out = _tv_prox.prox_mean_fast(v, block_ptr, weights, step, _TOL)
        if out is not None:
            return out
    v_, ptr, w_, step_ = _blocks(v, block_ptr, weights, step)
    if counts is None:
        return _prox_blocks(v_, ptr, w_, step_, None, _MODE_MEAN)
    n_ = _nonnegative(_as_vector(counts, "counts", len(v_)), "counts")
    return _prox_blocks(v_, ptr, w_, step_, n_, _MODE_EXACT)


def paper_algorithm1(
    v: ArrayLike,
    block_ptr: ArrayLike,
    weights: ArrayLike,
    step: float = 1.0,
    *,
    counts: ArrayLike | None = None,
) -> NDArray[np.float64]:
    r"""The paper's Algorithm 1: TV prox per block, then project onto n_j-perp.

    .. math::

        \beta_j = \operatorname{prox}_{\text{step}\,TV_{\omega_j}}(v_j), \qquad
        \theta_j = \beta_j - \frac{n_j'\beta_j}{n_j'n_j}\, n_j

    With equal counts (``counts=None``) the projection is the subtraction of the
    block mean and the result is the exact prox. With unequal counts it is
    feasible but not the prox: kept to demonstrate that (design.md section 5);
    use :func:`prox_binarsity`.

    Parameters
    ----------
    v : array_like of shape (d,)
        Point at which the operator is applied, finite.
    block_ptr : array_like of int, shape (p + 1,)
        Block offsets: starts at 0, strictly increasing, ends at d.
    weights : array_like of shape (d,)
        Penalty weights omega_jk >= 0; the entry at each block start is ignored.
    step : float, default=1.0
        Step size >= 0 multiplying the penalty.
    counts : array_like of shape (d,), optional
        Weighted bin counts n_jk >= 0 defining the projection; None means equal
        counts (plain mean subtraction). Blocks with all-zero counts are left as
        the TV prox.

    Returns
    -------
    theta : ndarray of shape (d,)
        A new array.

    Raises
    ------
    TypeError
        If an array argument has a non-real dtype or `step` is not a number.
    ValueError
        If shapes or offsets are inconsistent, a value is not finite, or a
        weight, count or `step` is < 0.
    """
    v_, ptr, w_, step_ = _blocks(v, block_ptr, weights, step)
    if counts is None:
        return _prox_blocks(v_, ptr, w_, step_, None, _MODE_MEAN)
    n_ = _nonnegative(_as_vector(counts, "counts", len(v_)), "counts")
    beta = _prox_blocks(v_, ptr, w_, step_, None, _MODE_TV)
    for start, stop in zip(ptr[:-1], ptr[1:], strict=True):
        nj = n_[start:stop]
        nn = nj @ nj
        if nn > 0:
            beta[start:stop] -= (nj @ beta[start:stop]) / nn * nj
    return beta


# ---------------------------------------------------------------------------
# NumPy reference twins (slow, independent of the DP; used by the tests)
# ---------------------------------------------------------------------------


def _reference_weighted_fused_lasso(
    y: ArrayLike, w: ArrayLike, lam: ArrayLike
) -> NDArray[np.float64]:
    """Weighted FLSA by the taut string, O(K^2), written independently of the DP.

    KKT: with F_l = sum_{j<l} w_j theta_j and G_l = sum_{j<l} w_j y_j, the
    optimum satisfies |F_l - G_l| <= lam_l (l = 1..K-1), F_0 = G_0, F_K = G_K,
    with F_l - G_l = lam_l sign(theta_l - theta_{l-1}) at jumps. In the
    coordinates x_l = sum_{j<l} w_j, theta_j is the slope of F over node j, and
    the solution is the shortest path (taut string) from (0, 0) to
    (x_K, G_K) inside the tube G_l +- lam_l. Zero-weight nodes merge two tube
    posts at the same x (radius = the smaller); their levels are filled by the
    cheapest cut: the whole jump between the neighbours sits on the weakest edge.
    """
    y = np.asarray(y, dtype=float)
    w = np.asarray(w, dtype=float)
    lam = np.asarray(lam, dtype=float)
    K = len(y)
    theta = np.zeros(K)
    pos = np.flatnonzero(w > 0)
    if K == 0 or len(pos) == 0:
        return theta
    x = np.concatenate([[0.0], np.cumsum(w)])
    G = np.concatenate([[0.0], np.cumsum(w * y)])
    radius = np.concatenate([[0.0], lam[1:], [0.0]])
    # merge posts with equal x (node l has w_l = 0 <=> x_l == x_{l+1})
    group = np.concatenate([[0], np.cumsum(w > 0)])  # post l -> merged post
    M = group[-1]
    X = np.zeros(M + 1)
    lo = np.full(M + 1, -np.inf)
    hi = np.full(M + 1, np.inf)
    for post in range(K + 1):
        gidx = group[post]
        X[gidx] = x[post]
        lo[gidx] = max(lo[gidx], G[post] - radius[post])
        hi[gidx] = min(hi[gidx], G[post] + radius[post])
    # greedy taut string: from an anchor, narrow the cone of feasible slopes;
    # when it empties, the string bends at the post that last narrowed it
    F = np.zeros(M + 1)
    F[0] = 0.0
    i = 0
    while i < M:
        smax, smin = np.inf, -np.inf
        jmax = jmin = i
        j = i + 1
        while True:
            dx = X[j] - X[i]
            su = (hi[j] - F[i]) / dx
            sl = (lo[j] - F[i]) / dx
            if sl > smax:
                nxt, slope = jmax, smax
                break
            if su < smin:
                nxt, slope = jmin, smin
                break
            if su <= smax:
                smax, jmax = su, j
            if sl >= smin:
                smin, jmin = sl, j
            if j == M:
                nxt, slope = M, 0.5 * (smin + smax)
                break
            j += 1
        F[i + 1 : nxt + 1] = F[i] + slope * (X[i + 1 : nxt + 1] - X[i])
        i = nxt
    for k in pos:
        theta[k] = (F[group[k + 1]] - F[group[k]]) / w[k]
    # zero-weight runs: cheapest placement of the jump between the neighbours
    k = 0
    while k < K:
        if w[k] > 0:
            k += 1
            continue
        stop = k
        while stop < K and w[stop] == 0:
            stop += 1
        left = k - 1 if k > 0 else None
        right = stop if stop < K else None
        if left is None:
            theta[k:stop] = theta[right]
        elif right is None:
            theta[k:stop] = theta[left]
        else:
            cut = k + int(np.argmin(lam[k : stop + 1]))  # edges k..stop
            theta[k:cut] = theta[left]
            theta[cut:stop] = theta[right]
        k = stop
    return theta


def _reference_constrained_fused_lasso(
    y: ArrayLike, w: ArrayLike, lam: ArrayLike, n: ArrayLike, iters: int = 200
) -> NDArray[np.float64]:
    """Constrained FLSA for w > 0: bisection on mu around the taut string.

    theta(mu) is the unconstrained solution at targets y - mu n / w; the root of
    the non-increasing n' theta(mu) is bracketed by doubling and halved
    `iters` times (no Newton, no segment structure: independent of the kernel).
    """
    y = np.asarray(y, dtype=float)
    w = np.asarray(w, dtype=float)
    n = np.asarray(n, dtype=float)
    if np.any(w <= 0):
        raise ValueError("the reference needs w > 0")
    if not np.any(n > 0):
        return _reference_weighted_fused_lasso(y, w, lam)

    def g(mu: float) -> tuple[float, NDArray[np.float64]]:
        theta = _reference_weighted_fused_lasso(y - mu * n / w, w, lam)
        return float(n @ theta), theta

    lo_, hi_ = -1.0, 1.0
    while g(lo_)[0] <= 0:
        lo_ *= 2.0
    while g(hi_)[0] >= 0:
        hi_ *= 2.0
    for _ in range(iters):
        mid = 0.5 * (lo_ + hi_)
        if g(mid)[0] > 0:
            lo_ = mid
        else:
            hi_ = mid
    g_lo, th_lo = g(lo_)
    g_hi, th_hi = g(hi_)
    if g_lo == g_hi:
        return th_lo
    alpha = -g_hi / (g_lo - g_hi)
    return alpha * th_lo + (1 - alpha) * th_hi


# ---------------------------------------------------------------------------
# monotone chains (design.md §7): PAVA of shifted targets (``_isotonic.pyx``)
# ---------------------------------------------------------------------------


def _as_direction(direction: object) -> int:
    if direction in (1, "increasing"):
        return 1
    if direction in (-1, "decreasing"):
        return -1
    raise ValueError(f"direction must be 'increasing' (1) or 'decreasing' (-1); got {direction!r}.")


def monotone_fused_lasso(
    y: ArrayLike,
    weights: ArrayLike,
    lam: ArrayLike,
    *,
    direction: int | str = 1,
    counts: ArrayLike | None = None,
    linked: ArrayLike | None = None,
) -> NDArray[np.float64]:
    r"""Exact monotone weighted fused lasso of one chain (weighted isotonic regression).

    .. math::

        \min_\theta \sum_k \tfrac{w_k}{2} (\theta_k - y_k)^2
            + \sum_{k \ge 1} \lambda_k |\theta_k - \theta_{k-1}|
        \quad \text{s.t. } \theta \text{ monotone on every linked edge}
        \ [\text{and } n'\theta = 0],

    solved by the pool-adjacent-violators algorithm on the shifted targets (design.md
    §7) in O(K), with the constraint's multiplier found exactly by a safeguarded Newton
    search when ``counts`` are given.

    Parameters
    ----------
    y : array_like of shape (K,)
        Targets, finite.
    weights : array_like of shape (K,)
        Observation weights w_k >= 0 (a level of weight 0 takes its value from the
        penalty and its neighbours).
    lam : array_like of shape (K,)
        Edge penalties λ_k >= 0 (``lam[0]`` ignored).
    direction : {1, -1, "increasing", "decreasing"}, default=1
        Non-decreasing (1) or non-increasing (-1).
    counts : array_like of shape (K,), optional
        Weighted counts n_k >= 0 of the constraint n'θ = 0 (None: no constraint).
    linked : array_like of bool, shape (K,), optional
        Whether level k is joined to level k − 1 (default: every k >= 1); an unlinked
        edge is neither penalised nor ordered.

    Returns
    -------
    ndarray of shape (K,)
        The solution.

    Raises
    ------
    TypeError
        If an array argument has a non-real dtype.
    ValueError
        If lengths differ, a value is not finite, a weight, penalty or count is < 0, or
        ``direction`` is not one of the four accepted values.
    """
    y_, w_, lam_ = _chain(y, weights, lam)
    K = y_.shape[0]
    sign = _as_direction(direction)
    n_ = np.zeros(K) if counts is None else _nonnegative(_as_vector(counts, "counts", K), "counts")
    if linked is None:
        lk = np.ones(K, dtype=np.uint8)
    else:
        lk = np.asarray(linked)
        if lk.shape != (K,):
            raise ValueError(f"linked must have shape ({K},), got {lk.shape}")
        lk = lk.astype(bool).astype(np.uint8)
    if K:
        lk[0] = 0
    out = np.empty(K)
    it = _isotonic.monotone_fused_lasso_py(
        np.ascontiguousarray(w_ * y_), w_, lam_, n_, lk, sign, counts is not None, out, _TOL
    )
    if it < 0:
        warnings.warn("monotone_fused_lasso: the constraint search hit its iteration cap",
                      RuntimeWarning, stacklevel=2)  # fmt: skip
    return out


def prox_monotone(
    v: ArrayLike,
    block_ptr: ArrayLike,
    weights: ArrayLike,
    counts: ArrayLike | None = None,
    step: float = 1.0,
    direction: int | str = 1,
) -> NDArray[np.float64]:
    r"""Exact prox of step·Σ ω|Δθ| + a monotone order + n_jᵀθ_j = 0, block by block.

    For every block, ``argmin ½‖θ − v‖² + step Σ_k ω_k |θ_k − θ_{k−1}|`` over the θ
    that are monotone on the block's positive-weight edges (an edge of weight 0 — a
    "missing" level — is free) with n_jᵀθ_j = 0 (no constraint when ``counts`` is None
    or a block's counts are all 0).

    Parameters
    ----------
    v : array_like of shape (d,)
        Point at which the prox is taken.
    block_ptr : array_like of int, shape (p + 1,)
        Block offsets.
    weights : array_like of shape (d,)
        ω_jk >= 0 (the entry at each block start is ignored).
    counts : array_like of shape (d,), optional
        Weighted bin counts n_jk.
    step : float, default=1.0
        Step size >= 0.
    direction : {1, -1, "increasing", "decreasing"}, default=1
        The order of every block.

    Returns
    -------
    ndarray of shape (d,)

    Raises
    ------
    TypeError
        If an array argument has a non-real dtype or ``step`` is not a real number.
    ValueError
        If shapes or offsets are inconsistent, a value is not finite, a weight, count or
        ``step`` is < 0, or ``direction`` is not accepted.
    """
    v_, ptr, w_, step_ = _blocks(v, block_ptr, weights, step)
    d = v_.shape[0]
    n_ = None if counts is None else _nonnegative(_as_vector(counts, "counts", d), "counts")
    out = np.empty(d)
    ones = np.ones(d)
    for j in range(len(ptr) - 1):
        s, e = int(ptr[j]), int(ptr[j + 1])
        out[s:e] = monotone_fused_lasso(
            v_[s:e], ones[s:e], step_ * w_[s:e], direction=direction,
            counts=None if n_ is None else n_[s:e], linked=w_[s:e] > 0,
        )  # fmt: skip
    return out


def monotone_fused_lasso_reference(
    y: ArrayLike,
    weights: ArrayLike,
    lam: ArrayLike,
    direction: int = 1,
    counts: ArrayLike | None = None,
    linked: ArrayLike | None = None,
) -> NDArray[np.float64]:
    """NumPy twin of :func:`monotone_fused_lasso` (slow; for the tests).

    Written independently of the kernel: a quadratic-time pool-adjacent-violators pass
    on the shifted targets with explicit lists of pools (a weight-0 level carries its
    linear term only), and a plain bisection for the constraint's multiplier.
    """
    y = np.asarray(y, dtype=float)
    w = np.asarray(weights, dtype=float)
    lam = np.asarray(lam, dtype=float)
    K = y.size
    lk = np.ones(K, bool) if linked is None else np.asarray(linked, bool).copy()
    if K:
        lk[0] = False
    sg = 1.0 if _as_direction(direction) > 0 else -1.0
    lamk = np.where(lk, lam, 0.0)
    c = lamk - np.append(lamk[1:], 0.0)
    base = sg * w * y - c

    def solve(b):
        out = np.zeros(K)
        bounds = np.flatnonzero(~lk).tolist() + [K]
        for s, e in zip(bounds[:-1], bounds[1:], strict=True):
            pools = []  # [weight, numerator, first, last]
            for k in range(s, e):
                pools.append([w[k], b[k], k, k + 1])

                def val(p):
                    if p[0] > 0:
                        return p[1] / p[0]
                    return np.inf if p[1] > 0 else (-np.inf if p[1] < 0 else np.nan)

                while len(pools) > 1:
                    a, z = val(pools[-2]), val(pools[-1])
                    if not (np.isnan(a) or np.isnan(z) or a > z):
                        break
                    last = pools.pop()
                    pools[-1][0] += last[0]
                    pools[-1][1] += last[1]
                    pools[-1][3] = last[3]
            vals = [p[1] / p[0] if p[0] > 0 else np.nan for p in pools]
            finite = [x for x in vals if not np.isnan(x)]
            fill = finite[0] if finite else 0.0
            for p, x in zip(pools, vals, strict=True):
                fill = fill if np.isnan(x) else x
                out[p[2] : p[3]] = fill
        return out

    if counts is None or not np.sum(counts) > 0:
        return sg * solve(base)
    n = np.asarray(counts, dtype=float)

    def f(mu):
        return float(n @ solve(base - mu * n))

    lo, hi = -1.0, 1.0
    while f(lo) < 0:
        lo *= 2.0
    while f(hi) > 0:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if f(mid) > 0:
            lo = mid
        else:
            hi = mid
    return sg * solve(base - 0.5 * (lo + hi) * n)
