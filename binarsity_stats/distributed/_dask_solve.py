"""The fit on Dask: IRLS from per-partition sufficient statistics (design.md §9, issue 15).

The rows stay on the workers, in partitions; the client holds only vectors of length
d (levels), q (dense columns) and the Gram of the one-hot design, (d + n_free)² floats.
One *pass* over the data computes, in every partition at the current point
(θ, β, β0), the loss, the working gradient's bin sums and free-column sums, and the
curvature-weighted Gram

    M = [X^B, U]ᵀ diag(s b''(η)) [X^B, U] / W,     g = [X^B, U]ᵀ s (b'(η) − y) / W,

tree-reduced to the client (``dask.delayed`` sums with a fan-in of 8). The client then
solves the penalised quadratic model

    min_x  gᵀ(x − x₀) + ½ (x − x₀)ᵀ M (x − x₀) + λ pen(θ)   s.t. n_jᵀθ_j = 0

exactly (Gauss–Seidel over the blocks with each block's exact step in the metric
diag(M), ``_blocks.BlockKind.metric_prox``, and a joint Newton step on the free columns
U = [1, Z]) and takes a proximal-Newton step. The line search on the true objective is
folded into the next pass: that pass computes the statistics at the full step and the
loss at shorter steps t = ½, ¼, …, so an accepted full step costs one pass and a
shortened one two. A gaussian loss is quadratic: one pass gives every λ (a whole path,
and K-fold CV from the per-fold statistics, G_train = G − G_fold).

The design (``DaskDesign``-like: ``block_ptr``, ``kinds``, ``partitions``) has one
``dask.delayed`` per partition yielding a dict with ``codes`` (p, n_i) uint8/uint16,
``y``, and optional ``dense`` (n_i, q), ``weight``, ``offset`` and ``fold`` arrays.
Nothing here imports dask at module level.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..penalty._blocks import as_kinds, get_kind, infer_kinds
from ..design._design import BinnedDesign
from ..families._families import get_family
from ..penalty._penalty import BinarsityPenalty
from ..penalty._penalty import penalty_weights as _penalty_weights
from ..engine._solvers import ConvergenceWarning, Solution
from ..core._validation import check_codes

__all__ = [
    "DaskProblem",
    "DaskSolution",
    "DaskPath",
    "DaskCV",
    "fit_dask",
    "prepare_dask",
    "partitions_from_arrays",
    "fit_path_dask",
    "fit_cv_dask",
]

#: Gram size (d + n_free) above which the Gram solver refuses (d² floats per partition).
MAX_GRAM_LEVELS = 5000
_FAN_IN = 8
_STEPS = (1.0, 0.5, 0.1)


# --------------------------------------------------------------------- partitions


def partitions_from_arrays(codes, y, *, dense=None, weight=None, offset=None, n_parts=4):
    """Split in-memory arrays into ``dask.delayed`` partitions (tests and examples).

    Parameters
    ----------
    codes : ndarray of shape (p, n)
        Bin codes.
    y : ndarray of shape (n,)
        Response.
    dense : ndarray of shape (n, q), optional
        Dense columns.
    weight, offset : ndarray of shape (n,), optional
        Row weights and offset.
    n_parts : int
        Number of partitions (contiguous row ranges).

    Returns
    -------
    list of dask.delayed
        Each yields ``dict(codes=, y=, dense=, weight=, offset=)`` for its rows.
    """
    from dask import delayed

    n = np.shape(y)[0]
    cuts = np.linspace(0, n, n_parts + 1).astype(int)
    parts = []
    for a, b in zip(cuts[:-1], cuts[1:], strict=False):
        part = {
            "codes": np.ascontiguousarray(np.asarray(codes)[:, a:b]),
            "y": np.asarray(y, dtype=np.float64)[a:b],
            "dense": None if dense is None else np.asarray(dense, dtype=np.float64)[a:b],
            "weight": None if weight is None else np.asarray(weight, dtype=np.float64)[a:b],
            "offset": None if offset is None else np.asarray(offset, dtype=np.float64)[a:b],
        }
        parts.append(delayed(part, traverse=False))
    return parts


def _row_hash(index: int, n: int, salt: int) -> np.ndarray:
    """splitmix64 of (partition, row, salt): reproducible pseudo-random bits per row."""
    with np.errstate(over="ignore"):
        z = np.uint64(index) * np.uint64(0x100000000) + np.arange(n, dtype=np.uint64)
        z = z + np.uint64(0x9E3779B97F4A7C15) * np.uint64(1 + 2 * salt)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return z


def _fold_of(part: dict, index: int, K: int) -> np.ndarray:
    """Fold ids of a partition's rows: its ``fold`` column, else a hash of (partition, row)."""
    fold = part.get("fold")
    n = np.shape(part["y"])[0]
    if fold is not None:
        fold = np.asarray(fold)
        if fold.shape != (n,) or fold.dtype.kind not in "iu":
            raise ValueError("fold must be an integer column of the partition's length.")
        if n and (fold.min() < 0 or fold.max() >= K):
            raise ValueError(f"fold ids must lie in [0, {K - 1}] (folds={K}).")
        return fold.astype(np.int64)
    # splitmix64 of (partition, row): the same folds on every pass and every machine
    z = _row_hash(index, n, 0)
    return (z % np.uint64(K)).astype(np.int64)


# --------------------------------------------------------------------- per partition


def _summary(part: dict, block_ptr: np.ndarray, family, q: int, index: int, K: int) -> dict:
    """Pass 1 on one partition: rows, weights, bin counts, moments of y and Z (validated)."""
    codes = check_codes(np.asarray(part["codes"]), block_ptr)
    p, n = codes.shape
    y = np.asarray(part["y"], dtype=np.float64).ravel()
    if y.shape != (n,):
        raise ValueError(f"y has {y.shape[0]} rows but the partition's codes have {n}.")
    if not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or infinite values.")
    family.validate_y(y, proportions=True)
    sw = _weight(part, n, check=True)
    off = part.get("offset")
    if off is not None:
        off = np.asarray(off, dtype=np.float64)
        if off.shape != (n,) or not np.all(np.isfinite(off)):
            raise ValueError("offset must be finite, one value per row.")
        family.check_offset(off)
    Z = _dense(part, n, q, check=True)
    design = BinnedDesign._trusted(codes, block_ptr, None, None, None, None)
    fold = _fold_of(part, index, K) if K else None
    out = {
        "n": float(n),
        "W": float(sw.sum()),
        "max_w": float(sw.max()) if n else 0.0,
        "counts": design.histograms(sw),
        "sy": float(sw @ y),
        "syy": float(sw @ (y * y)),
        "sz": sw @ Z if q else np.zeros(0),
        "max_z": Z.max(axis=0) if q and n else np.full(q, -np.inf),
        "min_z": Z.min(axis=0) if q and n else np.full(q, np.inf),
        "max_off": float(off.max()) if off is not None and n else -np.inf,
    }
    if K:
        out["fold_counts"] = np.stack(
            [design.histograms(np.where(fold == k, sw, 0.0)) for k in range(K)]
        )
        out["fold_W"] = np.bincount(fold, weights=sw, minlength=K)
    return out


def _weight(part: dict, n: int, check: bool = False) -> np.ndarray:
    sw = part.get("weight")
    if sw is None:
        return np.ones(n)
    sw = np.asarray(sw, dtype=np.float64).ravel()
    if check and (sw.shape != (n,) or not np.all(np.isfinite(sw)) or np.any(sw < 0)):
        raise ValueError("weight must be finite and non-negative, one value per row.")
    return sw


def _dense(part: dict, n: int, q: int, check: bool = False) -> np.ndarray:
    Z = part.get("dense")
    if Z is None:
        if q:
            raise ValueError(f"dense: the design has {q} dense columns; a partition has none.")
        return np.zeros((n, 0))
    Z = np.asarray(Z, dtype=np.float64)
    if Z.ndim == 1:
        Z = Z[:, None]
    if check and (Z.shape != (n, q) or not np.all(np.isfinite(Z))):
        raise ValueError(f"dense must be finite with shape ({n}, {q}) in every partition.")
    return Z


@dataclass
class _Setup:
    """What a partition needs to evaluate a point (small; shipped with every task)."""

    block_ptr: np.ndarray
    family: object
    q: int
    fit_intercept: bool
    unit: float  # user weights × unit = the solver's weights
    center: np.ndarray
    scale: np.ndarray
    K: int = 0
    gram_fraction: float = 1.0

    @property
    def n_free(self) -> int:
        return self.q + int(self.fit_intercept)


class _Rows:
    """One partition's rows as the passes use them: y, unit weights, the free columns
    U = [1, (Z − center) / scale] and the bin codes, and η at a point (θ, free)."""

    def __init__(self, part: dict, setup: _Setup) -> None:
        codes = np.asarray(part["codes"])
        self.n = n = codes.shape[1]
        self.y = np.asarray(part["y"], dtype=np.float64).ravel()
        self.sw = _weight(part, n) * setup.unit
        self.offset = part.get("offset")
        Z = _dense(part, n, setup.q)
        self.U = U = np.empty((n, setup.n_free))
        if setup.fit_intercept:
            U[:, 0] = 1.0
        if setup.q:
            U[:, int(setup.fit_intercept) :] = (Z - setup.center) / setup.scale
        self.design = BinnedDesign._trusted(codes, setup.block_ptr, None, None, None, None)

    def eta(self, theta: np.ndarray, free: np.ndarray, offset: bool = True) -> np.ndarray:
        """η = U free (+ offset) + X^B θ on these rows."""
        eta = self.U @ free if self.U.shape[1] else np.zeros(self.n)
        if offset and self.offset is not None:
            eta += np.asarray(self.offset, dtype=np.float64)
        self.design.gather_add(theta, eta)
        return eta


def _point(part: dict, setup: _Setup, index: int, x, dx, gram: bool, fold: int) -> dict:
    """One partition at x + dx: loss, gradient, Gram (optional), losses at x + t dx.

    ``fold`` ≥ 0 uses the rows outside that fold (and reports the held-out loss on its
    rows); -2 returns the statistics of every fold separately (stacked, for CV from one
    pass); -1 uses every row.
    """
    rows = _Rows(part, setup)
    n, y, sw, U, design = rows.n, rows.y, rows.sw, rows.U, rows.design
    d = int(setup.block_ptr[-1])
    eta_of = rows.eta
    theta, free = x
    eta0 = eta_of(theta, free)
    if dx is not None:
        deta = eta_of(dx[0], dx[1], offset=False)
        eta = eta0 + deta
    else:
        eta = eta0
    fam = setup.family
    out = {}
    if fold >= 0 or fold == -2:
        fid = _fold_of(part, index, setup.K)
    if fold >= 0:
        test = fid == fold
        out["test_loss"] = fam.loss_sum(eta, y, np.where(test, sw, 0.0))
        sw = np.where(test, 0.0, sw)
    r, h = np.empty(n), np.empty(n)
    if dx is not None:
        out["loss_t"] = np.array([fam.loss_sum(eta0 + t * deta, y, sw) for t in _STEPS[1:]])
    groups = [sw] if fold != -2 else [np.where(fid == k, sw, 0.0) for k in range(setup.K)]
    stats = []
    for w in groups:
        loss = fam.grad_hess(eta, y, w, 1.0, r, h)
        g = np.concatenate([design.histograms(r), U.T @ r])
        one = {"loss": loss, "g": g}
        if gram:
            one["M"] = _sampled_gram(design, U, h, d, setup.gram_fraction, index)
        stats.append(one)
    if fold == -2:
        for key in stats[0]:
            out[key] = np.stack([np.asarray(s[key]) for s in stats])
    else:
        out.update(stats[0])
    return out


def _candidates(part: dict, setup: _Setup, index: int, x, steps: list, fold: int) -> dict:
    """One partition at x + s for every candidate step s: loss, gradient, bin curvature.

    The histogram solver's pass (d floats per candidate, no Gram): the loss, the working
    gradient's bin and free-column sums, the curvature's bin sums and the free columns'
    curvature Gram at every candidate point; ``fold`` ≥ 0 as in :func:`_point`.
    """
    rows = _Rows(part, setup)
    n, y, sw, U, design = rows.n, rows.y, rows.sw, rows.U, rows.design
    fam = setup.family
    test = None
    if fold >= 0:
        test = _fold_of(part, index, setup.K) == fold
        sw_test = np.where(test, sw, 0.0)
        sw = np.where(test, 0.0, sw)
    keys = ("loss", "g", "H", "UU") + (("test_loss",) if test is not None else ())
    out = {k: [] for k in keys}
    r, h = np.empty(n), np.empty(n)
    for step in steps:
        eta = rows.eta(x[0] + step[0], x[1] + step[1])
        out["loss"].append(fam.grad_hess(eta, y, sw, 1.0, r, h))
        gb, hb = design.histograms2(r, h)
        out["g"].append(np.concatenate([gb, U.T @ r]))
        out["H"].append(hb)
        out["UU"].append(U.T @ (h[:, None] * U))
        if test is not None:
            out["test_loss"].append(fam.loss_sum(eta, y, sw_test))
    return {k: np.asarray(v) for k, v in out.items()}


def _gram(design: BinnedDesign, U: np.ndarray, h: np.ndarray, d: int) -> np.ndarray:
    """[X^B, U]ᵀ diag(h) [X^B, U] for one partition (design.md §9)."""
    m = U.shape[1]
    M = np.empty((d + m, d + m))
    M[:d, :d] = _bin_gram(design, h)
    if m:
        hU = h[:, None] * U
        bf = np.stack([design.histograms(np.ascontiguousarray(hU[:, c])) for c in range(m)], 1)
        M[:d, d:] = bf
        M[d:, :d] = bf.T
        M[d:, d:] = U.T @ hU
    return M


def _sampled_gram(design, U, h, d, fraction: float, index: int) -> np.ndarray:
    """The Gram of one partition, from a fixed sample of its rows when ``fraction`` < 1.

    A proximal-Newton step needs a good metric, not the exact Hessian (the gradient
    and the line search are exact, so the solution is): the Gram of a row sample
    (the same rows on every pass, a hash of (partition, row)) scaled by 1/fraction, plus
    the diagonal's shortfall from its exact value, which keeps it positive semidefinite
    and every bin's curvature exact.
    """
    if fraction >= 1.0:
        return _gram(design, U, h, d)
    keep = _row_hash(index, design.n_rows, 1) < np.uint64(fraction * 2.0**64)
    sub = BinnedDesign._trusted(np.ascontiguousarray(design.codes[:, keep]), design.block_ptr,
                                None, None, None, None)  # fmt: skip
    M = _gram(sub, np.ascontiguousarray(U[keep]), np.ascontiguousarray(h[keep]), d)
    M /= fraction
    exact = np.concatenate([design.histograms(h), np.einsum("ij,ij,i->j", U, U, h)])
    idx = np.arange(M.shape[0])
    M[idx, idx] += np.maximum(exact - M[idx, idx], 0.0)
    return M


def _bin_gram(design: BinnedDesign, h: np.ndarray) -> np.ndarray:
    """X^Bᵀ diag(h) X^B on one thread (a worker's task is one core's work)."""
    try:
        from ..design._gram_stats import bin_pair_gram
    except ImportError:  # before the Gram kernel (issue 15) is built
        return design.gram(h)
    return bin_pair_gram(design.codes, design.block_ptr, h, n_threads=1,
                         diagonal=design.histograms(h))  # fmt: skip


def _combine(*items: dict) -> dict:
    """Sum of partition statistics (max/min for the keys so named)."""
    out = {}
    for key in items[0]:
        vals = [it[key] for it in items]
        if key.startswith("max_"):
            out[key] = np.maximum.reduce(vals) if np.ndim(vals[0]) else max(vals)
        elif key.startswith("min_"):
            out[key] = np.minimum.reduce(vals) if np.ndim(vals[0]) else min(vals)
        else:
            out[key] = sum(vals[1:], vals[0]) if len(vals) > 1 else vals[0]
    return out


def _nbytes(stats: dict) -> int:
    return int(sum(np.asarray(v).nbytes for v in stats.values()))


# --------------------------------------------------------------------- the problem


def _tree_reduce(tasks: list):
    """Sum delayed partition statistics in a tree of fan-in 8; returns (root, n_messages)."""
    from dask import delayed

    combine = delayed(_combine, pure=True)
    messages = 0
    while len(tasks) > 1:
        messages += len(tasks)
        tasks = [combine(*tasks[i : i + _FAN_IN]) for i in range(0, len(tasks), _FAN_IN)]
    return tasks[0], messages + 1


@dataclass
class DaskSolution(Solution):
    """A :class:`~binarsity_stats.engine._solvers.Solution` from Dask, with its cost.

    Attributes
    ----------
    n_passes : int
        Passes over the data (the summary pass included when it was run for this fit).
    bytes_per_pass : int
        Bytes of statistics sent up the reduction tree per pass with a Gram.
    n_gram_passes : int
        Passes that computed a Gram (the others: loss and gradient only).
    """

    n_passes: int = 0
    bytes_per_pass: int = 0
    n_gram_passes: int = 0
    history: list = field(default_factory=list, repr=False)


class DaskProblem:
    """A penalised GLM on a Dask design, solved from reduced statistics on the client.

    Parameters
    ----------
    design : object
        ``block_ptr``, ``kinds`` (or None), ``partitions`` (``dask.delayed`` dicts) and
        ``n_dense`` (q; default 0).
    family : str or Family
        GLM family.
    penalty_weights : {"balanced", "theory", "uniform"} or array of shape (d,)
        ω, computed from the weighted bin counts of the first pass.
    fit_intercept : bool
        Whether β0 is fitted.
    client : distributed.Client, optional
        Where to compute (default: dask's current scheduler).
    folds : int
        Number of CV folds whose counts the first pass also tabulates (0: none).
    gram_rows : int
        Rows (over all partitions) from which a non-quadratic family's Gram is built:
        with more rows, every partition builds it from the same fixed sample of a share
        ``gram_rows / n`` of its rows (the metric of the Newton steps; the gradient, the
        objective and the KKT test always use every row). A gaussian Gram is exact.
    """

    def __init__(self, design, family, penalty_weights="balanced", fit_intercept=True,
                 client=None, folds: int = 0, gram_rows: int = 2_000_000) -> None:  # fmt: skip
        self.family = get_family(family)
        if not getattr(self.family, "row_separable", True):
            # a partial likelihood couples rows across partitions (risk sets)
            raise ValueError(
                f"family {self.family.label!r} is not a sum over rows (its loss couples "
                "rows through risk sets): the Dask solver supports row-separable families."
            )
        self.block_ptr = np.asarray(design.block_ptr, dtype=np.intp)
        self.partitions = list(design.partitions)
        if not self.partitions:
            raise ValueError("the design has no partitions.")
        self.q = int(getattr(design, "n_dense", 0) or 0)
        self.fit_intercept = bool(fit_intercept)
        self.client = client
        self.d = int(self.block_ptr[-1])
        self.p = len(self.block_ptr) - 1
        self.n_free = self.q + int(self.fit_intercept)
        self.D = self.d + self.n_free
        self.n_passes = 0
        self.K = int(folds)
        tasks = [
            _delayed(_summary)(part, self.block_ptr, self.family, self.q, i, self.K)
            for i, part in enumerate(self.partitions)
        ]
        s = self._run(tasks)
        if s["W"] <= 0:
            raise ValueError("the weights sum to 0: no rows to fit.")
        self.n_rows = int(s["n"])
        # weights scaled to a maximum in [1, 2), as the in-memory engine's unit weights
        k = math.frexp(s["max_w"])[1] - 1 if s["max_w"] > 0 else 0
        self.weight_scale = float(2.0**k)
        self.unit = 1.0 / self.weight_scale
        self.W = s["W"] * self.unit
        self.counts = s["counts"] * self.unit
        self.ybar = s["sy"] / s["W"]
        var = max(s["syy"] / s["W"] - self.ybar**2, 0.0)
        self.y_sd = math.sqrt(var)
        self.has_offset = bool(np.isfinite(s["max_off"]))
        center = np.zeros(self.q)
        scale = np.ones(self.q)
        if self.q:
            if self.fit_intercept:
                center = s["sz"] / s["W"]
            top = np.maximum(s["max_z"] - center, center - s["min_z"])
            scale = np.where(top > 0, top, 1.0)
        fraction = 1.0
        if not getattr(self.family, "quadratic", False) and self.n_rows > gram_rows:
            fraction = gram_rows / self.n_rows
        self.gram_fraction = fraction
        self.setup = _Setup(self.block_ptr, self.family, self.q, self.fit_intercept,
                            self.unit, center, scale, self.K, fraction)  # fmt: skip
        kinds = as_kinds(getattr(design, "kinds", None), self.p)
        if isinstance(penalty_weights, str):
            w = _penalty_weights(penalty_weights, self.counts, self.block_ptr)
        else:
            w = np.asarray(penalty_weights, dtype=np.float64)
        if kinds is None:
            kinds = infer_kinds(self.block_ptr, w)
        self.kinds = kinds
        self.penalty = BinarsityPenalty(self.block_ptr, w, self.counts, kinds)
        self.weights = self.penalty.weights
        if self.K:
            self.fold_counts = s["fold_counts"] * self.unit
            self.fold_W = s["fold_W"] * self.unit

    # -- passes --------------------------------------------------------------------------
    def _run(self, tasks: list) -> dict:
        from ._dask import compute

        root, messages = _tree_reduce(tasks)
        # on a distributed cluster: abandoned with a TimeoutError naming the scheduler's
        # state when it takes too long or no worker is left (binarsity_stats.dask_timeout)
        (out,) = compute(root, client=self.client, what="a pass of the Dask solver")
        self.n_passes += 1
        self.last_messages = messages
        return out

    def stats(self, x, dx=None, gram=True, fold=-1) -> dict:
        """One pass: the statistics at x + dx (see :func:`_point`), summed over partitions."""
        args = ((x[0], x[1]), None if dx is None else (dx[0], dx[1]))
        tasks = [
            _delayed(_point)(part, self.setup, i, args[0], args[1], gram, fold)
            for i, part in enumerate(self.partitions)
        ]
        out = self._run(tasks)
        self.last_bytes = self.last_messages * _nbytes(out)
        return out

    # -- helpers -------------------------------------------------------------------------
    def gradient_scale(self) -> float:
        """Units of the loss gradient (the family's rule from the moments of y)."""
        # a two-point response with the same weighted mean and sd as y
        yy = np.array([self.ybar - self.y_sd, self.ybar + self.y_sd])
        try:
            return float(self.family.gradient_units(yy, np.ones(2)))
        except Exception:  # pragma: no cover - a family reading more than moments
            return 1.0

    def start_intercept(self) -> float:
        """β0 of the intercept-only fit without offset (the cold start)."""
        if not self.fit_intercept:
            return 0.0
        return float(self.family.null_intercept(np.array([self.ybar]), np.ones(1), None))

    def kkt(self, g, theta, lam, penalty=None) -> float:
        """Worst KKT violation (design.md §2) from the gradient statistics g."""
        pen = self.penalty if penalty is None else penalty
        d = len(theta)
        v = pen.kkt_violation(g[:d], theta, lam, self.fit_intercept)
        worst = float(v.max()) if v.size else 0.0
        if self.n_free:
            worst = max(worst, float(np.max(np.abs(g[d:]))))
        return worst

    def to_user(self, x):
        """(θ, β, β0) in the user's units from the internal point."""
        theta, free = x
        b0 = float(free[0]) if self.fit_intercept else 0.0
        beta = free[int(self.fit_intercept) :] / self.setup.scale
        return theta, beta, b0 - float(self.setup.center @ beta)

    def from_user(self, sol):
        """The internal point of a solution (a warm start)."""
        beta = np.asarray(sol.dense_coef, dtype=np.float64)
        free = np.zeros(self.n_free)
        if self.fit_intercept:
            free[0] = float(sol.intercept) + float(self.setup.center @ beta)
        free[int(self.fit_intercept) :] = beta * self.setup.scale
        return np.array(sol.coef, dtype=np.float64), free

    # -- fitting -------------------------------------------------------------------------
    def fit(self, lam, *, tol=1e-7, max_iter=50, warm_start=None, fold=-1, stats=None,
            x0=None, quiet=False, null=False, refresh: str = "auto",
            method: str = "auto") -> DaskSolution:  # fmt: skip
        """Proximal-Newton (IRLS) fit at one λ: one pass per accepted step.

        Parameters
        ----------
        lam : float
            λ ≥ 0.
        tol : float
            KKT tolerance in the gradient's units (× :meth:`gradient_scale`).
        max_iter : int
            Largest number of Newton steps.
        warm_start : Solution, optional
            Starting point.
        fold : int
            -1: every row; k ≥ 0: the rows outside fold k (CV).
        stats : dict, optional
            Statistics already computed at the start point (no pass for them).
        x0 : tuple, optional
            Internal starting point (θ, free).
        quiet : bool
            No warning when max_iter is reached.
        null : bool
            Fit the null model instead (every positive-weight edge fused: λ = ∞), the
            point at which λ_max is read.
        refresh : {"auto", "always"}
            When a pass recomputes the Gram: ``"always"`` (exact Newton steps), or
            ``"auto"``: on the first two steps, after a shortened step and whenever the
            KKT violation fell by less than 10× on the last step; otherwise the pass
            computes only the loss and gradient (O(n p), not O(n p²)) and the step uses
            the last Gram (its curvature has settled; the line search keeps descent).
        method : {"auto", "gram", "histogram"}
            ``"gram"``: proximal-Newton steps from the Gram (d² floats per partition);
            ``"histogram"``: damped block-Jacobi proximal-Newton steps from per-bin
            gradient and curvature histograms (d floats per partition and candidate;
            more passes); ``"auto"``: the Gram up to :data:`MAX_GRAM_LEVELS` levels.

        Returns
        -------
        DaskSolution
        """
        lam = float(lam)
        if not (lam >= 0 and np.isfinite(lam)):
            raise ValueError(f"lam must be a finite number >= 0; got {lam}.")
        if method not in ("auto", "gram", "histogram"):
            raise ValueError(f"method must be 'auto', 'gram' or 'histogram'; got {method!r}.")
        if method == "auto":
            method = "gram" if self.D <= MAX_GRAM_LEVELS else "histogram"
        if method == "histogram":
            if null:
                raise ValueError("the null fit (lambda_max) needs the Gram solver.")
            return self._fit_histogram(lam, tol, max_iter, warm_start, fold, x0, quiet)
        if self.D > MAX_GRAM_LEVELS:
            raise ValueError(
                f"the design has {self.d} levels and {self.n_free} free columns: its Gram "
                f"({self.D}² floats per partition) is above the Gram solver's bound "
                f"({MAX_GRAM_LEVELS}); use method='histogram'."
            )
        passes0 = self.n_passes
        penalty, W = self._penalty_of(fold)
        P = None
        if null:
            P, penalty_s, bp_s = self._segments(penalty)
            lam = 0.0
        if x0 is not None:
            x = (x0[0].copy(), x0[1].copy())
        elif warm_start is not None:
            x = self.from_user(warm_start)
        else:
            free = np.zeros(self.n_free)
            if self.fit_intercept:
                free[0] = self.start_intercept()
            x = (np.zeros(self.d), free)
        st = self.stats(x, fold=fold) if stats is None else stats
        quadratic = bool(getattr(self.family, "quadratic", False))
        tol_abs = tol * self.gradient_scale()
        loss = st["loss"] / W
        F = loss + lam * penalty.value(x[0])
        history, converged, n_iter, sweeps, bytes_pp = [], False, 0, 0, 0
        grams, full_step, kkt_prev = 0, False, np.inf
        for it in range(1, max_iter + 1):
            n_iter = it
            g, M = st["g"] / W, st["M"] / W
            kkt = self._kkt_at(g, x, lam, penalty, P, bp_s if P is not None else None,
                               penalty_s if P is not None else None)  # fmt: skip
            history.append((F, kkt))
            if kkt <= tol_abs:
                converged = True
                break
            if P is None:
                xh, n_sw = solve_quadratic(M, g, x, lam, penalty, self.block_ptr,
                                           self.fit_intercept, tol=0.1 * tol_abs)  # fmt: skip
            else:
                # the model on the segments (P: levels and free columns → their segments),
                # solved from the current point's segment values
                xs = (np.zeros(int(bp_s[-1])), x[1])
                zs, n_sw = solve_quadratic(P.T @ M @ P, P.T @ g, xs, 0.0, penalty_s, bp_s,
                                           self.fit_intercept, tol=0.1 * tol_abs)  # fmt: skip
                full = P @ np.concatenate(zs)
                xh = (x[0] + full[: self.d], full[self.d :])
            sweeps += n_sw
            dx = (xh[0] - x[0], xh[1] - x[1])
            pen0 = penalty.value(x[0])
            lin = float(g @ np.concatenate(dx))
            quad = 0.5 * float(np.concatenate(dx) @ M @ np.concatenate(dx))
            decrease = lin + lam * (penalty.value(xh[0]) - pen0)
            if quadratic:
                # the model is the loss: its value and gradient at x̂ need no pass
                st = {"loss": st["loss"] + W * (lin + quad),
                      "g": st["g"] + st["M"] @ np.concatenate(dx), "M": st["M"]}  # fmt: skip
                x = xh
                F = st["loss"] / W + lam * penalty.value(x[0])
                continue
            if decrease >= -1e-16 * max(1.0, abs(F)):
                # no descent left in the model: converged to the model's precision
                converged = kkt <= 10 * tol_abs
                break
            need = (
                refresh == "always"
                or self.gram_fraction < 1.0
                or grams < 2
                or not full_step
                or kkt > 0.1 * kkt_prev
            )
            new = self.stats(x, dx, gram=need, fold=fold)
            grams += need
            if not need:
                new["M"] = st["M"]
            bytes_pp = max(bytes_pp, self.last_bytes)
            kkt_prev = kkt
            F1 = new["loss"] / W + lam * penalty.value(xh[0])
            full_step = bool(np.isfinite(F1) and F1 <= F + 1e-4 * decrease)
            if full_step:
                x, st, F = xh, new, F1
                continue
            for t, lt in zip(_STEPS[1:], new["loss_t"], strict=False):
                xt = (x[0] + t * dx[0], x[1] + t * dx[1])
                Ft = lt / W + lam * penalty.value(xt[0])
                if np.isfinite(Ft) and Ft <= F + 1e-4 * t * decrease:
                    x, F = xt, Ft
                    st = self.stats(x, fold=fold)
                    grams += 1
                    break
            else:
                converged = kkt <= 10 * tol_abs
                break
        else:
            g = st["g"] / W
            kkt = self._kkt_at(g, x, lam, penalty, P, bp_s if P is not None else None,
                               penalty_s if P is not None else None)  # fmt: skip
            converged = kkt <= tol_abs
        theta, beta, b0 = self.to_user(x)
        if not converged and not quiet:
            warnings.warn(
                f"The Dask solver stopped after {n_iter} Newton steps with a KKT violation "
                f"of {kkt:.3g} > tol={tol_abs:.3g}; increase max_iter or tol.",
                ConvergenceWarning,
                stacklevel=2,
            )
        counts = self.counts if fold < 0 else self.counts - self.fold_counts[fold]
        sol = DaskSolution(
            coef=theta, dense_coef=beta, intercept=b0, lam=lam, objective=float(F),
            kkt_violation=float(kkt), converged=bool(converged), n_iter=n_iter,
            n_sweeps=sweeps, eta=None, bin_counts=counts * self.weight_scale,
            n_passes=self.n_passes - passes0, bytes_per_pass=bytes_pp or self.last_bytes,
            history=history, n_gram_passes=grams + (stats is None),
        )  # fmt: skip
        sol._x = x
        sol._stats = st
        return sol

    def _start(self, warm_start, x0):
        if x0 is not None:
            return (x0[0].copy(), x0[1].copy())
        if warm_start is not None:
            return self.from_user(warm_start)
        free = np.zeros(self.n_free)
        if self.fit_intercept:
            free[0] = self.start_intercept()
        return (np.zeros(self.d), free)

    def _jacobi_step(self, x, g, H, UU, c, lam, penalty):
        """All blocks' exact steps at once in the metric c·diag(H) (and c·UU for U)."""
        theta = x[0]
        new = np.empty_like(theta)
        bp = self.block_ptr
        lam_w = lam * penalty.weights
        for j in range(self.p):
            a, b = int(bp[j]), int(bp[j + 1])
            Hj = c * H[a:b]
            v = np.where(Hj > 0, theta[a:b] - g[a:b] / np.where(Hj > 0, Hj, 1.0), theta[a:b])
            get_kind(penalty.kinds[j]).metric_prox(
                np.ascontiguousarray(v), np.ascontiguousarray(np.maximum(Hj, 1e-300)),
                np.ascontiguousarray(lam_w[a:b]), np.ascontiguousarray(penalty.counts[a:b]),
                new[a:b], 1e-12,
            )  # fmt: skip
        dfree = np.zeros(self.n_free)
        if self.n_free:
            try:
                dfree = np.linalg.solve(c * UU, -g[self.d :])
            except np.linalg.LinAlgError:
                dfree = np.linalg.lstsq(c * UU, -g[self.d :], rcond=None)[0]
        return new - theta, dfree

    def _fit_histogram(self, lam, tol, max_iter, warm_start, fold, x0, quiet) -> DaskSolution:
        """Damped block-Jacobi proximal Newton from per-bin histograms (design.md §9).

        Each pass evaluates four candidate steps at once, the blocks' exact steps in the
        metrics c·diag(H) for c = c_prev/2, c_prev, 2c_prev, 4c_prev (c ≥ 1: the blocks
        move together, so their joint step is damped), and keeps the one of least
        objective among those with sufficient decrease; its statistics are those of the
        next step. Messages are 4 (d + n_free + n_free²) floats per partition.
        """
        passes0 = self.n_passes
        penalty, W = self._penalty_of(fold)
        x = self._start(warm_start, x0)
        zero = [(np.zeros(self.d), np.zeros(self.n_free))]
        st = {k: v[0] for k, v in self._run_candidates(x, zero, fold).items()}
        tol_abs = tol * self.gradient_scale()
        F = st["loss"] / W + lam * penalty.value(x[0])
        c, history, converged, kkt, n_iter = 2.0, [], False, np.inf, 0
        for it in range(1, max_iter + 1):
            n_iter = it
            g, H, UU = st["g"] / W, st["H"] / W, st["UU"] / W
            kkt = self.kkt(g, x[0], lam, penalty)
            history.append((F, kkt))
            if kkt <= tol_abs:
                converged = True
                break
            cs = [max(1.0, c / 2), c, 2 * c, 4 * c]
            steps = [self._jacobi_step(x, g, H, UU, ci, lam, penalty) for ci in cs]
            res = self._run_candidates(x, steps, fold)
            best = None
            pen0 = penalty.value(x[0])
            for i, (ci, dx) in enumerate(zip(cs, steps, strict=True)):
                theta = x[0] + dx[0]
                Fi = res["loss"][i] / W + lam * penalty.value(theta)
                dec = float(g @ np.concatenate(dx)) + lam * (penalty.value(theta) - pen0)
                if np.isfinite(Fi) and Fi <= F + 1e-4 * dec and (best is None or Fi < best[0]):
                    best = (Fi, i, ci)
            if best is None:
                c = 8 * c
                continue
            F, i, c = best
            x = (x[0] + steps[i][0], x[1] + steps[i][1])
            st = {k: v[i] for k, v in res.items()}
        theta, beta, b0 = self.to_user(x)
        if not converged and not quiet:
            warnings.warn(
                f"The Dask histogram solver stopped after {n_iter} passes with a KKT "
                f"violation of {kkt:.3g} > tol={tol_abs:.3g}; increase max_iter or tol.",
                ConvergenceWarning,
                stacklevel=3,
            )
        counts = self.counts if fold < 0 else self.counts - self.fold_counts[fold]
        sol = DaskSolution(
            coef=theta, dense_coef=beta, intercept=b0, lam=float(lam), objective=float(F),
            kkt_violation=float(kkt), converged=bool(converged), n_iter=n_iter, n_sweeps=0,
            eta=None, bin_counts=counts * self.weight_scale,
            n_passes=self.n_passes - passes0, bytes_per_pass=self.last_bytes,
            history=history, n_gram_passes=0,
        )  # fmt: skip
        sol._x = x
        sol._stats = st
        return sol

    def _run_candidates(self, x, steps, fold) -> dict:
        tasks = [
            _delayed(_candidates)(part, self.setup, i, x, steps, fold)
            for i, part in enumerate(self.partitions)
        ]
        out = self._run(tasks)
        self.last_bytes = self.last_messages * _nbytes(out)
        return out

    def _kkt_at(self, g, x, lam, penalty, P, bp_s, penalty_s) -> float:
        if P is None:
            return self.kkt(g, x[0], lam, penalty)
        # the null model's optimality: its segments' gradients (a free problem)
        return self.kkt(P.T @ g, np.zeros(int(bp_s[-1])), 0.0, penalty_s)

    def _segments(self, penalty):
        """The null model's unknowns: one per segment of levels joined by ω > 0 edges.

        Returns the map P (D × D_s) from segment steps to level steps (blocks with a
        single segment are dropped: their constraint fixes them at 0), the segments'
        penalty (free levels) and block offsets.
        """
        bp, w = self.block_ptr, penalty.weights
        cols, ptr, seg_counts = [], [0], []
        for j in range(self.p):
            a, b = int(bp[j]), int(bp[j + 1])
            seg = np.cumsum(np.concatenate([[True], w[a + 1 : b] == 0])) - 1
            if seg[-1] == 0:
                continue
            for k in range(seg[-1] + 1):
                cols.append(a + np.flatnonzero(seg == k))
                seg_counts.append(float(penalty.counts[a:b][seg == k].sum()))
            ptr.append(ptr[-1] + seg[-1] + 1)
        ds = ptr[-1]
        P = np.zeros((self.D, ds + self.n_free))
        for k, levels in enumerate(cols):
            P[levels, k] = 1.0
        P[np.arange(self.d, self.D), ds + np.arange(self.n_free)] = 1.0
        bp_s = np.asarray(ptr, dtype=np.intp)
        pen_s = BinarsityPenalty(
            bp_s, np.zeros(ds), np.asarray(seg_counts), ["free"] * (len(ptr) - 1)
        )
        return P, pen_s, bp_s

    def lambda_max(self, tol: float = 1e-10, fold: int = -1) -> float:
        """λ_max (design.md §2) read at the null fit (passes: its Newton steps).

        Parameters
        ----------
        tol : float
            KKT tolerance of the null fit.
        fold : int
            -1: every row; k ≥ 0: the rows outside fold k.

        Returns
        -------
        float
        """
        sol = self.fit(0.0, tol=tol, null=True, fold=fold, quiet=True)
        penalty, W = self._penalty_of(fold)
        self._null = sol
        return float(penalty.lambda_max(sol._stats["g"][: self.d] / W))

    def _penalty_of(self, fold: int):
        if fold < 0:
            return self.penalty, self.W
        counts = self.counts - self.fold_counts[fold]
        pen = BinarsityPenalty(self.block_ptr, self.weights, counts, self.kinds)
        return pen, self.W - float(self.fold_W[fold])


def _delayed(fn):
    from dask import delayed

    return delayed(fn, pure=True)


# --------------------------------------------------------------------- client-side solve


def solve_quadratic(M, g, x0, lam, penalty, block_ptr, fit_intercept, tol=1e-10,
                    max_sweeps=10_000):  # fmt: skip
    """Exact minimiser of the penalised quadratic model from its statistics (§9).

    min_x gᵀ(x − x₀) + ½ (x − x₀)ᵀ M (x − x₀) + λ pen(θ), n_jᵀθ_j = 0, by Gauss–Seidel
    sweeps of exact block steps (each kind's ``metric_prox`` in the metric diag(M)) and
    a joint Newton step on the free columns, O(D²) per sweep whatever n.

    Returns
    -------
    (theta, free), n_sweeps
    """
    d = int(block_ptr[-1])
    theta, free = x0[0].copy(), x0[1].copy()
    x = np.concatenate([theta, free])
    x_ref = x.copy()
    u = g.copy()
    diag = np.diag(M).copy()
    p = len(block_ptr) - 1
    lam_w = lam * penalty.weights
    counts = penalty.counts if penalty.counts is not None else np.ones(d)
    kinds = [get_kind(k) for k in penalty.kinds] if penalty.kinds is not None else None
    free_idx = np.arange(d, len(x))
    Mff = M[np.ix_(free_idx, free_idx)] if len(free_idx) else None
    out = np.empty(int(np.max(np.diff(block_ptr))) if p else 0)
    n_sweeps = 0
    for n_sweeps in range(1, max_sweeps + 1):
        biggest = 0.0
        for j in range(p):
            a, b = int(block_ptr[j]), int(block_ptr[j + 1])
            H = diag[a:b]
            old = x[a:b]
            safe = np.where(H > 0, H, 1.0)
            v = np.where(H > 0, old - u[a:b] / safe, old)
            o = out[: b - a]
            kind = kinds[j] if kinds is not None else get_kind("tv")
            kind.metric_prox(np.ascontiguousarray(v), np.ascontiguousarray(np.maximum(H, 1e-300)),
                             np.ascontiguousarray(lam_w[a:b]), np.ascontiguousarray(counts[a:b]),
                             o, 1e-12)  # fmt: skip
            delta = o - old
            if np.any(delta):
                x[a:b] = o
                u += M[:, a:b] @ delta
                biggest = max(biggest, float(np.max(np.abs(delta) * np.sqrt(np.maximum(H, 0)))))
        if len(free_idx):
            try:
                step = np.linalg.solve(Mff, -u[free_idx])
            except np.linalg.LinAlgError:
                step = np.linalg.lstsq(Mff, -u[free_idx], rcond=None)[0]
            x[free_idx] += step
            u += M[:, free_idx] @ step
        viol = penalty.kkt_violation(u[:d], x[:d], lam, fit_intercept)
        worst = float(viol.max()) if viol.size else 0.0
        if len(free_idx):
            worst = max(worst, float(np.max(np.abs(u[free_idx]))))
        if worst <= tol or biggest <= 1e-15:
            break
        if n_sweeps % 50 == 0:
            # guard against drift in the maintained gradient
            u = g + M @ (x - x_ref)
    return (x[:d], x[d:]), n_sweeps


# --------------------------------------------------------------------- entry points


def prepare_dask(design, family, penalty_weights="balanced", fit_intercept=True, client=None,
                 folds: int = 0, gram_rows: int = 2_000_000) -> DaskProblem:  # fmt: skip
    """The first pass over a Dask design: counts, ω, scales (:class:`DaskProblem`).

    Parameters
    ----------
    design, family, penalty_weights, fit_intercept, client, folds, gram_rows
        As in :class:`DaskProblem`.

    Returns
    -------
    DaskProblem
    """
    return DaskProblem(design, family, penalty_weights, fit_intercept, client, folds, gram_rows)


def fit_dask(design, family, lam, *, penalty_weights="balanced", fit_intercept=True,
             tol=1e-7, max_iter=50, warm_start=None, client=None) -> DaskSolution:  # fmt: skip
    """Fit a binarsity GLM at one λ on a Dask design (passes: 1 + Newton steps).

    Parameters
    ----------
    design : object
        ``block_ptr``, ``kinds``, ``n_dense`` and ``partitions`` (``dask.delayed`` dicts).
    family : str or Family
        GLM family.
    lam : float
        λ.
    penalty_weights : str or array
        ω (default ``"balanced"``, as the in-memory engine).
    fit_intercept : bool
        Whether to fit β0.
    tol, max_iter : float, int
        KKT tolerance and largest number of Newton steps.
    warm_start : Solution, optional
        Starting point.
    client : distributed.Client, optional
        Where to compute.

    Returns
    -------
    DaskSolution
        θ, β, β0, objective, KKT, passes over the data (the first pass included) and
        bytes per pass.
    """
    prob = DaskProblem(design, family, penalty_weights, fit_intercept, client)
    sol = prob.fit(lam, tol=tol, max_iter=max_iter, warm_start=warm_start)
    sol.n_passes = prob.n_passes
    return sol


@dataclass
class DaskPath:
    """A λ path on Dask: solutions in grid order, passes used."""

    lambdas: np.ndarray
    solutions: list
    n_passes: int


@dataclass
class DaskCV:
    """K-fold CV on Dask: held-out mean loss per fold and λ, the selected λ."""

    lambdas: np.ndarray
    cv_loss: np.ndarray  # (K, L): held-out loss per unit weight
    lam_min: float
    lam_1se: float
    n_passes: int

    @property
    def mean(self) -> np.ndarray:
        """Mean held-out loss over the folds, per λ."""
        return self.cv_loss.mean(axis=0)


def fit_path_dask(prob: DaskProblem, lambdas=None, *, n_lambdas: int = 20,
                  lam_min_ratio: float = 1e-2, tol: float = 1e-7, max_iter: int = 50,
                  fold: int = -1) -> DaskPath:  # fmt: skip
    """A warm-started λ path on Dask, largest λ first.

    Each fit starts from the previous solution and its statistics (no pass for them);
    a gaussian path needs no pass after the null fit's, every λ being solved from the
    same Gram.

    Parameters
    ----------
    prob : DaskProblem
        The prepared problem (:func:`prepare_dask`).
    lambdas : array-like, optional
        The grid (sorted decreasing); default λ_max · logspace(0, log10 lam_min_ratio).
    n_lambdas, lam_min_ratio : int, float
        The default grid.
    tol, max_iter : float, int
        As in :meth:`DaskProblem.fit`.
    fold : int
        -1: every row; k ≥ 0: the rows outside fold k.

    Returns
    -------
    DaskPath
    """
    from ..engine._path import lambda_grid

    start = prob.n_passes
    lmax = prob.lambda_max(tol=min(tol, 1e-9), fold=fold)
    if lambdas is None:
        lambdas = lambda_grid(lmax, n_lambdas, lam_min_ratio)
    lambdas = np.sort(np.asarray(lambdas, dtype=np.float64))[::-1]
    prev = prob._null
    sols = []
    for lam in lambdas:
        sol = prob.fit(lam, tol=tol, max_iter=max_iter, fold=fold, stats=prev._stats,
                       x0=prev._x)  # fmt: skip
        sols.append(sol)
        prev = sol
    return DaskPath(lambdas, sols, prob.n_passes - start)


def fit_cv_dask(prob: DaskProblem, lambdas=None, *, n_lambdas: int = 20,
                lam_min_ratio: float = 1e-2, tol: float = 1e-7,
                max_iter: int = 50) -> DaskCV:  # fmt: skip
    """K-fold CV on Dask: folds are row masks inside every partition.

    The folds are those of the problem (``folds=K`` in :func:`prepare_dask`: the
    partitions' ``fold`` column, else a hash of (partition, row)). A gaussian CV takes
    one pass: the statistics of every fold at one point, the training ones being the
    total minus the fold's (G_train = G − G_fold) and the held-out loss of every λ
    being read from the fold's own. Other families walk each fold's path in turn, the
    held-out loss coming with the statistics of every pass.

    Parameters
    ----------
    prob : DaskProblem
        Prepared with ``folds`` ≥ 2.
    lambdas : array-like, optional
        The grid; default from the whole data's λ_max.
    n_lambdas, lam_min_ratio, tol, max_iter
        As in :func:`fit_path_dask`.

    Returns
    -------
    DaskCV
        Held-out loss per unit weight, fold by λ, and λ by the minimum and one-SE rules.
    """
    from ..engine._path import lambda_grid

    K = prob.K
    if K < 2:
        raise ValueError("fit_cv_dask needs a problem prepared with folds >= 2.")
    start = prob.n_passes
    if lambdas is None:
        lambdas = lambda_grid(prob.lambda_max(tol=min(tol, 1e-9)), n_lambdas, lam_min_ratio)
    lambdas = np.sort(np.asarray(lambdas, dtype=np.float64))[::-1]
    cv = np.empty((K, len(lambdas)))
    if getattr(prob.family, "quadratic", False):
        x0 = (np.zeros(prob.d), np.zeros(prob.n_free))
        if prob.fit_intercept:
            x0[1][0] = prob.start_intercept()
        per = prob.stats(x0, fold=-2)
        total = {key: per[key].sum(axis=0) for key in ("loss", "g", "M")}
        for k in range(K):
            train = {key: total[key] - per[key][k] for key in total}
            test_W = float(prob.fold_W[k])
            x, st = x0, train
            for i, lam in enumerate(lambdas):
                sol = prob.fit(lam, tol=tol, max_iter=max_iter, fold=k, stats=st, x0=x)
                x, st = sol._x, sol._stats
                dx = np.concatenate([x[0] - x0[0], x[1] - x0[1]])
                test = per["loss"][k] + per["g"][k] @ dx + 0.5 * dx @ per["M"][k] @ dx
                cv[k, i] = test / test_W
    else:
        for k in range(K):
            path = fit_path_dask(prob, lambdas, tol=tol, max_iter=max_iter, fold=k)
            test_W = float(prob.fold_W[k])
            cv[k] = [sol._stats["test_loss"] / test_W for sol in path.solutions]
    from ..engine._scoring import select_lambda

    # the one-standard-error rule of every CV (NaN-aware; held-out deviance)
    _, _, best, one_se = select_lambda(cv, "deviance")
    return DaskCV(lambdas, cv, float(lambdas[best]), float(lambdas[one_se]),
                  prob.n_passes - start)  # fmt: skip
