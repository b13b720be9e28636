"""Solvers for the binarsity-penalised GLM (design.md §4).

Both solvers minimise, over the intercept β0, the binned levels θ and the coefficients
β of unpenalised dense columns Z,

    F = (1/W) Σ_i s_i [b(η_i) − y_i η_i] + λ Σ_j Σ_{k≥1} ω_jk |θ_jk − θ_j,k−1|,
    η_i = offset_i + β0 + Σ_j θ_j[c_ij] + Z_i β,   subject to n_jᵀθ_j = 0 ∀ j,

and stop when the largest violation of the KKT conditions of design.md §2 is ≤ ``tol``
(the conditions are on the normalised gradient, so ``tol`` is in units of the average
per-row loss gradient).

* ``"cd"``: proximal Newton (IRLS) outer loop; inner Gauss–Seidel sweeps over the
  blocks with exact block steps (weighted fused-lasso DP), screening of flat blocks by
  their KKT condition, a backtracking line search on F for binomial and poisson.
* ``"fista"``: accelerated proximal gradient with backtracking and function-value
  restart, using the exact binarsity prox (``_prox.prox_binarsity``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..design._design import BinnedDesign
from ..families._families import Family
from ._cd import _cd, _gram_solve
from ._fista import _fista
from ._gram import BACKENDS, choose_backend
from ._problem import InMemoryProblem, SolverData
from ._solution import ConvergenceWarning, Solution, _check_warm_start
from ..core._statistics import kept_cuts
from ..core._validation import check_lam, check_max_iter, check_tol

__all__ = [
    "Solution",
    "solve",
    "Prepared",
    "lambda_max",
    "design_lambda_max",
    "ConvergenceWarning",
    "SOLVERS",
    "check_solver_options",
    "BACKENDS",
]

SOLVERS = ("cd", "fista")


def check_solver_options(
    solver: Any, tol: Any, max_iter: Any, backend: Any = "auto"
) -> dict[str, Any]:
    """The solver arguments, checked once for every door (fit, path, CV, estimators).

    Parameters
    ----------
    solver : {"cd", "fista"}
    tol : float
        Positive tolerance.
    max_iter : int
        Positive number of outer iterations.
    backend : {"auto", "rows", "gram"}, default="auto"
        CD's data backend (``"gram"`` is refused with FISTA).

    Returns
    -------
    dict
        ``solver``, ``tol``, ``max_iter`` and ``backend``, validated.

    Raises
    ------
    ValueError
        Naming the argument.
    """
    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {SOLVERS}; got {solver!r}.")
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}; got {backend!r}.")
    if solver == "fista" and backend == "gram":
        raise ValueError("backend='gram' is a CD backend; use solver='cd'.")
    return {"solver": solver, "tol": check_tol(tol), "max_iter": check_max_iter(max_iter),
            "backend": backend}  # fmt: skip


# --------------------------------------------------------------------------- helpers


class _Problem(InMemoryProblem):
    """An :class:`~binarsity_stats.engine._problem.InMemoryProblem` from raw arrays (validated).

    The solvers take any ``_problem.SolverData``; this keeps the engine's former
    constructor for callers that hold arrays rather than a ``BinnedDesign``.
    """

    def __init__(
        self, codes, block_ptr, y, family, penalty_weights, dense=None, sample_weight=None,
        offset=None, fit_intercept=True, block_kinds=None,
    ) -> None:  # fmt: skip
        design = BinnedDesign(
            codes, block_ptr, kinds=block_kinds, dense=dense, offset=offset,
            sample_weight=sample_weight,
        )  # fmt: skip
        super().__init__(design, y, family, penalty_weights, fit_intercept)


def make_problem(design: BinnedDesign, y, family, penalty_weights, fit_intercept) -> SolverData:
    """The solvers' data of one fit: where a backend is chosen for its design.

    Today every design is in memory (:class:`~binarsity_stats.engine._problem.InMemoryProblem`);
    a distributed design would get its backend's ``SolverData`` here. Everything below
    (CD, FISTA, the polish, λ_max, paths, CV) uses only the protocol's members.

    Parameters
    ----------
    design : BinnedDesign
        Codes, blocks and kinds, dense columns, offset and weights.
    y, family, penalty_weights, fit_intercept
        As in :func:`solve`.

    Returns
    -------
    SolverData
    """
    return InMemoryProblem(design, y, family, penalty_weights, fit_intercept)


# --------------------------------------------------------------------------- API


def solve(
    codes,
    block_ptr,
    y,
    *,
    family: str | Family = "gaussian",
    lam: float,
    penalty_weights,
    dense=None,
    sample_weight=None,
    offset=None,
    fit_intercept: bool = True,
    solver: str = "cd",
    tol: float = 1e-7,
    max_iter: int = 1000,
    warm_start: Solution | None = None,
    block_kinds=None,
    backend: str = "auto",
) -> Solution:
    """Fit the binarsity-penalised GLM on a compact binned design.

    Parameters
    ----------
    codes : ndarray of shape (p, n), uint8 or uint16
        Level codes, one row per block (binned features and categorical terms).
    block_ptr : ndarray of shape (p + 1,)
        Offsets of the blocks in θ.
    y : ndarray of shape (n,)
        Response.
    family : {"gaussian", "binomial", "poisson"}, statsmodels family or Family
        Distribution (see ``_families.get_family``).
    lam : float
        λ ≥ 0.
    penalty_weights : ndarray of shape (d,)
        ω_jk (block starts ignored; 0 on the blocks of an unpenalised kind).
    dense : ndarray of shape (n, q), optional
        Unpenalised numeric columns.
    sample_weight, offset : ndarray of shape (n,), optional
        Row weights s_i ≥ 0 and offsets of the linear predictor.
    fit_intercept : bool
        Whether to fit β0.
    solver : {"cd", "fista"}
        Block coordinate descent (default) or accelerated proximal gradient.
    tol : float
        Stop when the KKT violation is at most ``tol`` times the gradient's units
        (the weighted sd of y for gaussian, max(1, mean of y) for poisson, 1 for binomial;
        ``_families.Family.gradient_units``).
    max_iter : int
        Cap on passes over the data (cd) or iterations (fista).
    warm_start : Solution, optional
        Starting point (e.g. the solution at a nearby λ).
    block_kinds : sequence of str, optional
        Kind of every block (``_blocks.KINDS``: ``"tv"``, ``"free"``). Default: a block
        with a positive edge weight is a TV chain, the others are free levels.
    backend : {"auto", "rows", "gram"}
        CD's data backend: sweeps over the rows, or block steps solved from the Gram of
        the one-hot design (design.md §9; ``_gram``); ``"auto"`` chooses by a cost
        model (``_gram.choose_backend``).

    Returns
    -------
    Solution
    """
    prepared = Prepared(
        codes, block_ptr, y, family=family, penalty_weights=penalty_weights, dense=dense,
        sample_weight=sample_weight, offset=offset, fit_intercept=fit_intercept,
        block_kinds=block_kinds,
    )  # fmt: skip
    return prepared.solve(lam, solver=solver, tol=tol, max_iter=max_iter, warm_start=warm_start,
                          backend=backend)  # fmt: skip


class Prepared:
    """A validated design ready to be solved at many λ (what :func:`solve` does once).

    Validation, bin counts, the penalty and the detection of identical blocks depend on
    the data only, so a λ path (or every fold of a CV) prepares its design once and
    calls :meth:`solve` per λ. Not thread-safe: one instance per thread (it holds
    scratch buffers). :meth:`from_design` prepares an already validated
    :class:`~binarsity_stats.design._design.BinnedDesign` (the modelling layers' route).

    Parameters
    ----------
    codes, block_ptr, y, family, penalty_weights, dense, sample_weight, offset, fit_intercept
        As in :func:`solve`.
    block_kinds : sequence of str, optional
        As in :func:`solve`.
    """

    def __init__(
        self,
        codes,
        block_ptr,
        y,
        *,
        family: str | Family = "gaussian",
        penalty_weights,
        dense=None,
        sample_weight=None,
        offset=None,
        fit_intercept: bool = True,
        block_kinds=None,
    ) -> None:
        design = BinnedDesign(
            codes, block_ptr, kinds=block_kinds, dense=dense, offset=offset,
            sample_weight=sample_weight,
        )  # fmt: skip
        self._init(design, y, family, penalty_weights, fit_intercept)

    @classmethod
    def from_design(
        cls,
        design: BinnedDesign,
        y,
        *,
        family: str | Family = "gaussian",
        penalty_weights,
        fit_intercept: bool = True,
    ) -> Prepared:
        """Prepare a validated design (no validation of its arrays, no re-count).

        Parameters
        ----------
        design : BinnedDesign
            Codes, blocks and kinds, dense columns, offset and weights.
        y, family, penalty_weights, fit_intercept
            As in :func:`solve`.

        Returns
        -------
        Prepared
        """
        self = cls.__new__(cls)
        self._init(design, y, family, penalty_weights, fit_intercept)
        return self

    def _init(self, design, y, family, penalty_weights, fit_intercept) -> None:
        self._init_problem(make_problem(design, y, family, penalty_weights, fit_intercept))

    def _init_problem(self, prob: SolverData) -> None:
        self.prob = prob
        # the Gram backend (``_gram``): its Gram of a quadratic loss, kept across λ, and
        # what the cost model has seen (solves so far, the last fit's sweeps)
        self._gram_cache: dict = {}
        self._n_solves = 0
        self._last_sweeps = None
        self.last_backend: str | None = None
        self.tol_scale = prob.gradient_scale()
        self.groups = prob.duplicate_blocks()
        self.merged: Prepared | None = None
        if self.groups:
            self._prepare_merged()

    def set_gram_source(self, source) -> None:
        """Where the Gram backend gets this problem's Gram for a quadratic loss.

        Parameters
        ----------
        source : callable
            ``source() -> _gram.GramStats`` of this problem's rows with weights
            proportional to its sample weights (e.g. ``FoldGrams.train(rows)``: all rows'
            statistics less the held-out fold's). Called at most once, when the Gram
            backend first needs the Gram.
        """
        self._gram_cache["source"] = source

    def lambda_max(self, tol: float = 1e-10) -> float:
        """λ_max of this design (see :func:`lambda_max`).

        Parameters
        ----------
        tol : float
            KKT tolerance of the null fit.

        Returns
        -------
        float
        """
        return _lambda_max(self.prob, tol)

    def solve(
        self,
        lam: float,
        *,
        solver: str = "cd",
        tol: float = 1e-7,
        max_iter: int = 1000,
        warm_start: Solution | None = None,
        backend: str = "auto",
    ) -> Solution:
        """Fit at one λ; arguments and result as in :func:`solve`.

        ``backend`` (CD only): ``"rows"`` sweeps over the rows, ``"gram"`` solves
        every quadratic model from its Gram (``_gram.gram_cd``; gaussian: one Gram for
        every λ of this problem), ``"auto"`` chooses by ``_gram.choose_backend``'s cost
        model. The backend used is in :attr:`last_backend`.
        """
        lam = check_lam(lam)
        opts = check_solver_options(solver, tol, max_iter, backend)
        tol, max_iter = opts["tol"], opts["max_iter"]
        if self.merged is not None:
            sol = self._solve_merged(lam, solver, tol, int(max_iter), warm_start, backend)
            self.last_backend = self.merged.last_backend
            return sol
        tol = tol * self.tol_scale
        sol = self._solve_scaled(lam, solver, tol, max_iter, warm_start, backend)
        return self._exactly_flat(sol, lam, tol)

    def _solve_scaled(self, lam, solver, tol, max_iter, warm_start, backend) -> Solution:
        """The solve of :meth:`solve` with ``tol`` already in the gradient's units."""
        with np.errstate(over="ignore"):
            if solver == "fista":
                self.last_backend = "rows"
                return _fista(self.prob, lam, tol, int(max_iter), warm_start)
            self._n_solves += 1
            chosen = choose_backend(
                self.prob, backend, n_lambdas=self._n_solves, sweeps=self._last_sweeps,
                gram_cached="gram" in self._gram_cache or "source" in self._gram_cache,
            )  # fmt: skip
            self.last_backend = chosen
            if chosen == "gram":
                return _gram_solve(self.prob, lam, tol, int(max_iter), warm_start,
                                   self._gram_cache)  # fmt: skip
            sol = _cd(self.prob, lam, tol, int(max_iter), warm_start)
            self._last_sweeps = sol.n_sweeps
            return sol

    def _exactly_flat(self, sol: Solution, lam: float, tol: float) -> Solution:
        """The exact null fit in place of a solution that is flat within the jump
        tolerance (``_statistics``) at λ ≥ λ_max.

        At λ_max an edge is on its threshold and a solver may leave it open by its
        stopping error (a jump of 1e-10 where λ_max itself is known to 1e-10); the
        solution there is the null fit (design.md §2), with every penalised edge exactly
        flat. A solution with exactly flat penalised edges, or with a kept cut, or at
        λ < λ_max is returned as it is. λ_max is computed (once per prepared problem)
        only when a solution is flat within the tolerance without being exactly flat.
        """
        prob = self.prob
        known = getattr(self, "_null", None)
        if known is not None and lam < known[0]:
            return sol  # below λ_max (known from an earlier solve): nothing to check
        masks = self.__dict__.get("_edge_masks")
        if masks is None or masks[0] is not prob.weights or masks[1] is not prob.block_ptr:
            # the penalised edges: fixed for the problem
            edges = prob.weights > 0
            masks = (prob.weights, prob.block_ptr, edges, bool(np.any(edges)))
            self._edge_masks = masks
        _, _, edges, any_edge = masks
        if not any_edge:
            return sol
        theta = sol.coef
        step = np.zeros_like(theta)
        step[1:] = np.diff(theta)
        if not np.any(step[edges] != 0):
            return sol
        unit = self.tol_scale if getattr(prob.family, "quadratic", False) else 1.0
        if np.any(kept_cuts(theta, prob.block_ptr, edges, unit)):
            return sol
        if getattr(self, "_null", None) is None:
            null = _null_fit(prob, _NULL_TOL * self.tol_scale)
            r, h = prob.row_vector(), prob.row_vector()
            prob.grad_hess_into(null.eta, r, h)
            self._null = (prob.penalty.lambda_max(prob.histogram(r)), null, r)
        lmax, null, r = self._null
        if lam < lmax or not null.converged:
            return sol
        kkt, _, _ = prob.kkt(r, null.coef, lam)
        objective = float(prob.loss(null.eta) + lam * prob.penalty.value(null.coef))
        # the null fit ran on this problem's internal (centred, scaled) dense columns
        # (``segment_problem``): back to the data's units, as ``_finish`` does
        beta = null.dense_coef / prob.dense_scale
        intercept = float(null.intercept - prob.dense_center @ beta)
        return Solution(
            coef=null.coef.copy(), dense_coef=beta, intercept=intercept,
            lam=float(lam), objective=objective,
            kkt_violation=float(kkt), converged=bool(kkt <= tol), n_iter=sol.n_iter,
            n_sweeps=sol.n_sweeps, eta=null.eta.copy(), bin_counts=sol.bin_counts,
        )  # fmt: skip

    def _prepare_merged(self) -> None:
        """The problem with every group of identical blocks merged into one, exactly.

        For blocks with identical codes, only the sum s = Σ_g θ_g enters η, and the
        least penalty of a given s is Σ_k min_g ω_gk |s_k − s_{k−1}| (each jump is put
        where it is cheapest). So the merged problem has weights min_g ω_gk; its
        solution is split back by giving every jump to the block with the smallest
        weight on that edge (the first on ties). The KKT conditions then hold for every
        original block.
        """
        merged, self.take = self.prob.merge_blocks(self.groups)
        self.merged = Prepared.__new__(Prepared)
        self.merged._init_problem(merged)

    def _solve_merged(self, lam, solver, tol, max_iter, warm_start, backend="auto") -> Solution:
        prob, groups, take = self.prob, self.groups, self.take
        bp, sizes = prob.block_ptr, np.diff(prob.block_ptr)
        ws = None
        if warm_start is not None:
            _check_warm_start(prob, warm_start)
            theta = warm_start.coef.astype(float, copy=True)
            for g in groups:
                s, K = bp[g[0]], sizes[g[0]]
                theta[s : s + K] = np.sum([warm_start.coef[bp[j] : bp[j] + K] for j in g], axis=0)
            ws = Solution(
                coef=theta[take], dense_coef=warm_start.dense_coef,
                intercept=warm_start.intercept, lam=warm_start.lam, objective=np.nan,
                kkt_violation=np.nan, converged=False, n_iter=0, n_sweeps=0,
                eta=warm_start.eta, bin_counts=prob.counts[take],
            )  # fmt: skip
        sol = self.merged.solve(lam, solver=solver, tol=tol, max_iter=max_iter, warm_start=ws,
                                backend=backend)  # fmt: skip
        theta = np.zeros(prob.n_levels)
        theta[take] = sol.coef
        for g in groups:
            s0, K = bp[g[0]], sizes[g[0]]
            merged = theta[s0 : s0 + K].copy()
            jumps = np.diff(merged)
            owner = np.argmin([prob.weights[bp[j] + 1 : bp[j] + K] for j in g], axis=0)
            counts = prob.counts[s0 : s0 + K]
            for m, j in enumerate(g):
                lev = np.concatenate([[0.0], np.cumsum(np.where(owner == m, jumps, 0.0))])
                if counts.sum() > 0:
                    lev -= counts @ lev / counts.sum()
                theta[bp[j] : bp[j] + K] = lev
        sol.coef = theta
        sol.bin_counts = prob.counts * prob.weight_scale
        return sol


def lambda_max(
    codes,
    block_ptr,
    y,
    *,
    family: str | Family = "gaussian",
    penalty_weights,
    dense=None,
    sample_weight=None,
    offset=None,
    fit_intercept: bool = True,
    tol: float = 1e-10,
    block_kinds=None,
) -> float:
    """The smallest λ at which every penalised chain is flat (design.md §2).

    The null model (intercept, offset, unpenalised columns and levels, every penalised
    chain fused) is fitted exactly, then λ_max = max_{j, l≥1, ω_jl>0} |S_jl| / ω_jl.

    Parameters
    ----------
    codes, block_ptr, y, family, penalty_weights, dense, sample_weight, offset, fit_intercept
        As in :func:`solve`.
    tol : float
        KKT tolerance of the null fit.
    block_kinds : sequence of str, optional
        As in :func:`solve`.

    Returns
    -------
    float
    """
    design = BinnedDesign(
        codes, block_ptr, kinds=block_kinds, dense=dense, offset=offset,
        sample_weight=sample_weight,
    )  # fmt: skip
    return _lambda_max(make_problem(design, y, family, penalty_weights, fit_intercept), tol)


def design_lambda_max(
    design: BinnedDesign,
    y,
    *,
    family: str | Family = "gaussian",
    penalty_weights,
    fit_intercept: bool = True,
    tol: float = 1e-10,
) -> float:
    """:func:`lambda_max` of a validated :class:`~binarsity_stats.design._design.BinnedDesign`.

    Parameters
    ----------
    design : BinnedDesign
        Codes, blocks and kinds, dense columns, offset and weights.
    y, family, penalty_weights, fit_intercept, tol
        As in :func:`lambda_max`.

    Returns
    -------
    float
    """
    return _lambda_max(make_problem(design, y, family, penalty_weights, fit_intercept), tol)


#: KKT tolerance of the null fit behind λ_max (in the gradient's units).
_NULL_TOL = 1e-10


def _lambda_max(prob: SolverData, tol: float) -> float:
    null = _null_fit(prob, tol * prob.gradient_scale())  # tol in the gradient's units
    r = prob.row_vector()
    h = prob.row_vector()
    prob.grad_hess_into(null.eta, r, h)
    return prob.penalty.lambda_max(prob.histogram(r))


def _null_fit(prob: SolverData, tol: float) -> Solution:
    """Fit the model with every penalised edge fused (λ = ∞), exactly.

    Levels joined by positive-weight edges form one segment; the null model is the
    unpenalised GLM on the segments of blocks that have more than one, which we solve by
    the same CD on a reduced design whose codes are the segment indices.
    """
    bp, w = prob.block_ptr, prob.weights
    maps = []
    for j in range(prob.n_blocks):
        s, e = bp[j], bp[j + 1]
        new_seg = np.ones(e - s, dtype=bool)
        new_seg[1:] = w[s + 1 : e] == 0
        if j in prob.penalty.grids:
            new_seg[1:] = False  # a fused grid meets its margins at 0 only
        maps.append((j, np.cumsum(new_seg) - 1))
    sub = prob.segment_problem([seg for _, seg in maps])
    sbp = sub.block_ptr
    sol = _cd(sub, 0.0, tol, 10_000, None)
    theta = np.zeros(prob.n_levels)
    k = 0
    for j, seg in maps:
        if seg[-1] > 0:
            theta[bp[j] : bp[j + 1]] = sol.coef[sbp[k] + seg]
            k += 1
    sol.coef = theta
    sol.bin_counts = prob.counts.copy()
    return sol
