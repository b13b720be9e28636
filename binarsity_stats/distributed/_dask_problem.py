"""The Dask fit on the client: :class:`DaskProblem` runs passes over the partitions
(tree-reduced ``dask.delayed`` sums) and takes exact proximal-Newton steps from their
statistics (:func:`solve_quadratic`, the penalised quadratic model solved by
Gauss–Seidel over the blocks), or damped block-Jacobi steps from histograms for designs
too large for a Gram; λ_max and the KKT check from the same statistics.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..core._statistics import kept_cuts
from ..engine._backend import Capabilities, check_supported, kind_feature
from ..engine._solvers import ConvergenceWarning, Solution
from ..families._families import get_family
from ..penalty._blocks import as_kinds, get_kind, infer_kinds
from ..penalty._penalty import BinarsityPenalty
from ..penalty._penalty import penalty_weights as _penalty_weights
from ._dask_partition import _STEPS, _candidates, _combine, _nbytes, _point, _Setup, _summary

__all__ = [
    "CAPABILITIES",
    "DaskProblem",
    "DaskSolution",
    "solve_quadratic",
]


#: What the Dask backend supports (``engine/_backend``): TV chains and free levels
#: (monotone chains need the shape guard of the in-memory line search; by-group chains,
#: a partial likelihood, a family parameter to estimate, relaxed CV and ALO are not
#: there yet), the held-out deviance as the CV score.
CAPABILITIES = Capabilities(
    "dask",
    frozenset({kind_feature("tv"), kind_feature("free"), "scoring:deviance"}),
)

#: Gram size (d + n_free) above which the Gram solver refuses (d² floats per partition).
MAX_GRAM_LEVELS = 5000
#: KKT tolerance (× the gradient's units) of the exact null fit at λ ≥ λ_max, as the
#: in-memory solver's ``engine._solvers._NULL_TOL``.
_NULL_TOL = 1e-10
_FAN_IN = 8


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
        Number of CV folds whose counts the first pass also tabulates (0: none); every
        partition then has a ``fold`` column (``_dask_backend.DaskPathData.with_folds``).
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
            # a partial likelihood couples rows across partitions (risk sets): refused
            # as every request the backend lacks (engine/_backend)
            check_supported(CAPABILITIES, [("coupled_rows", f"family {self.family.label!r}")])
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
        kinds = as_kinds(getattr(design, "kinds", None), self.p)
        check_supported(CAPABILITIES, [
            (kind_feature(k), f"block {j} of the design") for j, k in enumerate(kinds or ())
        ])  # fmt: skip
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
        return sol if null else self._exactly_flat(sol, lam, tol, fold)

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
        return self._exactly_flat(sol, lam, tol, fold)

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
        lmax = float(penalty.lambda_max(sol._stats["g"][: self.d] / W))
        if tol <= _NULL_TOL * 10:  # exact enough for the null fit of _exactly_flat
            self.__dict__.setdefault("_nulls", {})[fold] = (lmax, sol)
        return lmax

    def _exactly_flat(self, sol: DaskSolution, lam: float, tol: float, fold: int) -> DaskSolution:
        """The exact null fit in place of a solution flat within the jump tolerance at
        λ ≥ λ_max, as the in-memory solver does (``Prepared._exactly_flat``).

        At λ_max an edge is on its threshold and the proximal-Newton steps leave it open
        by their stopping error (θ of 5e-9 at λ_max, 1e-16 of re-centring above it):
        the solution there is the null fit, every penalised edge exactly flat, the
        intercept (and the free levels and dense columns) those of the unpenalised fit
        on the fused segments with the offsets. A solution with exactly flat edges, a
        kept cut (``_statistics.kept_cuts``), at λ < λ_max, or whose null fit needs
        the Gram solver beyond :data:`MAX_GRAM_LEVELS` is returned as it is. λ_max is
        computed (once per fold) only when a solution is flat within the tolerance
        without being exactly flat.
        """
        penalty, W = self._penalty_of(fold)
        edges = penalty.weights > 0
        theta = np.asarray(sol.coef, dtype=np.float64)
        step = np.zeros_like(theta)
        step[1:] = np.diff(theta)
        # a fused block whose levels are a constant ≠ 0 (re-centring leaves 1e-16) is
        # not the null fit either: its constraint n_jᵀθ_j = 0 makes that constant 0
        bp = self.block_ptr
        fused_off = any(
            np.all(edges[int(a) + 1 : int(b)]) and np.any(theta[int(a) : int(b)] != 0)
            for a, b in zip(bp[:-1], bp[1:], strict=True) if b - a > 1
        )  # fmt: skip
        if not np.any(edges) or not (np.any(step[edges] != 0) or fused_off):
            return sol
        unit = self.gradient_scale() if getattr(self.family, "quadratic", False) else 1.0
        if np.any(kept_cuts(theta, self.block_ptr, edges, unit)) or self.D > MAX_GRAM_LEVELS:
            return sol
        nulls = self.__dict__.setdefault("_nulls", {})
        if fold not in nulls:
            passes = self.n_passes
            self.lambda_max(tol=_NULL_TOL, fold=fold)
            sol.n_passes += self.n_passes - passes
        lmax, null = nulls[fold]
        tol_abs = tol * self.gradient_scale()
        # the null fit's Newton steps stall near 1e-9 for a binomial (the reduced
        # statistics' rounding): it serves when it is converged to this fit's tol
        if not null.kkt_violation <= tol_abs:
            return sol
        st = null._stats
        kkt = self.kkt(st["g"] / W, null.coef, lam, penalty)
        if lam < lmax and kkt > tol_abs:
            # below λ_max by more than the tolerance (λ_max, read at a null fit of
            # tolerance 1e-10, may differ from the in-memory one in its last digits)
            return sol
        flat = dataclasses.replace(
            null, lam=float(lam), objective=float(st["loss"] / W + lam * penalty.value(null.coef)),
            kkt_violation=float(kkt), converged=bool(kkt <= tol_abs),
            n_iter=sol.n_iter, n_sweeps=sol.n_sweeps, n_passes=sol.n_passes,
            bytes_per_pass=sol.bytes_per_pass, n_gram_passes=sol.n_gram_passes,
            history=sol.history,
        )  # fmt: skip
        flat.coef = null.coef.copy()
        flat._x = (null._x[0].copy(), null._x[1].copy())
        flat._stats = st
        return flat

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
