"""Regularisation paths at the engine level: the data of a path and the warm-started walk.

What the formula layer (``BinarsityModel.fit_path`` / ``fit_cv``) and scikit-learn style
``*CV`` estimators share, written on arrays only (NumPy; no pandas, formulas or
scikit-learn at import time):

* **the data of a path**, :class:`PathData`: a ``BinnedDesign`` (codes, blocks and
  kinds, dense columns, offset, weights), the response, family and penalty weights; it
  prepares the engine's solver on all rows or on a subset (a fold) and scores held-out
  rows;
* **the grid**: :func:`lambda_grid` and :func:`check_grid`;
* **the walk**: :func:`solve_path` (warm starts down a decreasing grid).

K-fold cross-validation is in ``_cv`` (the lockstep walk of the folds), its folds in
``_folds`` and its scores and the choice of λ in ``_scoring``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ..core._validation import as_real_array
from ..design._design import BinnedDesign
from ..families import _cox
from ..families._families import get_family
from ._backend import IN_MEMORY
from ._scoring import score

__all__ = [
    "PathData",
    "lambda_grid",
    "check_grid",
    "solve_path",
    "strip_eta",
]


class PathData:
    """The data of a binarsity fit, solved at many λ and split into folds.

    Parameters
    ----------
    codes : ndarray of shape (p, n) or BinnedDesign
        Level codes, one row per block; or a validated design (then ``block_ptr`` is
        None and ``dense``, ``sample_weight``, ``offset`` come from it).
    block_ptr : ndarray of shape (p + 1,) or None
        Offsets of the blocks in θ.
    y : ndarray of shape (n,)
        Response.
    family : Family
        Distribution.
    penalty_weights : ndarray of shape (d,)
        ω, the same in every fold (those of all rows).
    dense : ndarray of shape (n, q), optional
        Unpenalised numeric columns.
    sample_weight : ndarray of shape (n,), optional
        Row weights (None: unweighted).
    offset : ndarray of shape (n,), optional
        Offset of the linear predictor.
    fit_intercept : bool, default=True
        Whether to fit β0.

    Attributes
    ----------
    design : BinnedDesign
        Codes, blocks and their kinds, dense columns, offset and row weights.
    capabilities : Capabilities
        What this backend supports (``_backend.IN_MEMORY``: everything).
    """

    capabilities = IN_MEMORY

    def __init__(
        self,
        codes: Any,
        block_ptr: Any,
        y: np.ndarray,
        family: Any,
        penalty_weights: np.ndarray,
        dense: np.ndarray | None = None,
        sample_weight: np.ndarray | None = None,
        offset: np.ndarray | None = None,
        fit_intercept: bool = True,
    ) -> None:
        if isinstance(codes, BinnedDesign):
            self.design = codes
        else:
            self.design = BinnedDesign(
                codes, block_ptr, dense=dense, offset=offset, sample_weight=sample_weight
            )
        self.y = y
        self.family = get_family(family)
        self.penalty_weights = penalty_weights
        self.fit_intercept = fit_intercept

    @classmethod
    def from_design(
        cls, design: BinnedDesign, y: np.ndarray, family: Any, penalty_weights: np.ndarray,
        fit_intercept: bool = True,
    ) -> PathData:  # fmt: skip
        """The data of a path on a validated design (arrays shared, nothing copied).

        Parameters
        ----------
        design : BinnedDesign
            Codes, blocks and kinds, dense columns, offset, weights.
        y, family, penalty_weights, fit_intercept
            As in the constructor.

        Returns
        -------
        PathData
        """
        return cls(design, None, y, family, penalty_weights, fit_intercept=fit_intercept)

    def with_folds(self, fold_ids: np.ndarray | None) -> PathData:
        """The data as a CV over these folds sees them: itself (folds are row subsets).

        A backend whose rows are not on the client (``distributed/_dask_backend``)
        returns a view whose rows carry their fold; here nothing is needed.

        Parameters
        ----------
        fold_ids : ndarray of shape (n,) or None
            Fold of every row.

        Returns
        -------
        PathData
            ``self``.
        """
        return self

    @property
    def n_obs(self) -> int:
        """Number of rows."""
        return int(self.y.shape[0])

    def prepare(self, rows: np.ndarray | None = None) -> Any:
        """The engine's problem of the given rows (all rows by default), not re-validated.

        Parameters
        ----------
        rows : ndarray of int, optional
            Row indices (a training fold).

        Returns
        -------
        Prepared
            Call ``solve(lam, warm_start=..., solver=..., tol=..., max_iter=...)``.
        """
        design = self.design if rows is None else self.design.subset(rows)
        y = self.y if rows is None else self.y[rows]
        return self._prepared(design, y, rows)

    def prepare_fold(self, rows: np.ndarray | None = None) -> Any:
        """The problem of a CV fold's training rows, sharing all rows' arrays.

        The same fit as :meth:`prepare` ``(rows)`` (its objective to rounding: sums
        over rows in another order), without a copy of the rows' codes, response,
        weights and offset: the problem is that of all rows with weight 0 on the other
        rows (``BinnedDesign.fold``). Its solutions' ``eta`` covers all rows. A loss
        that is not a sum over rows (Cox: risk sets) gets :meth:`prepare`'s copy.

        Parameters
        ----------
        rows : ndarray of int, optional
            The training rows (all by default).

        Returns
        -------
        Prepared
            As :meth:`prepare`.
        """
        if rows is None or not getattr(self.family, "row_separable", True):
            return self.prepare(rows)
        rows = np.asarray(rows, dtype=np.intp)
        if np.unique(rows).size != rows.size:  # a row counted twice: only a copy does that
            return self.prepare(rows)
        return self._prepared(self.design.fold(rows), self.y, rows)

    def _prepared(self, design: BinnedDesign, y: np.ndarray, rows: np.ndarray | None) -> Any:
        from ._solvers import Prepared

        mask = design.train_mask
        if mask is not None:
            rows = None  # not kept: the fold's mask says which rows (a byte a row)

        prep = Prepared.from_design(
            design, y, family=self.family, penalty_weights=self.penalty_weights,
            fit_intercept=self.fit_intercept,
        )  # fmt: skip
        if prep.prob.family.quadratic:
            # the Gram backend's Gram of these rows: all rows' less the held-out rows'
            # (one shared pass for every fold; used only if that backend is chosen)
            grams = self.__dict__.get("_fold_grams")
            if grams is None:
                from ._gram import FoldGrams

                grams = self.__dict__.setdefault("_fold_grams", FoldGrams(self.design))
            if mask is None:
                prep.set_gram_source(lambda: grams.train(rows))
            else:
                prep.set_gram_source(lambda: grams.train(np.flatnonzero(mask)))
        return prep

    def lambda_max(self) -> float:
        """λ_max of design.md §2 on all rows (0 when nothing is penalised).

        Returns
        -------
        float
            The smallest λ at which every penalised chain is flat.
        """
        from ._solvers import design_lambda_max

        return float(design_lambda_max(
            self.design, self.y, family=self.family, penalty_weights=self.penalty_weights,
            fit_intercept=self.fit_intercept,
        ))  # fmt: skip

    def fold_bytes(self, n_rows: int) -> int:
        """Memory a fold's problem (:meth:`prepare_fold`) of ``n_rows`` rows keeps.

        Its weights (one row vector of all rows) and working vectors r, h, plus its
        internal dense columns; a copied fold (Cox) also its codes, y and offset.

        Parameters
        ----------
        n_rows : int
            Rows of the fold.

        Returns
        -------
        int
            Bytes.
        """
        d = self.design
        if getattr(self.family, "row_separable", True):
            # weights, r, h and the internal dense columns (with an intercept, U's
            # [1, Z]; the intercept's column alone is the shared ones) and their copy
            # while they are built
            q = d.n_dense
            return self.n_obs * 8 * (3 + 2 * q + int(self.fit_intercept and q > 0))
        per_row = d.n_blocks * d.codes.dtype.itemsize + 8 * 4  # y, weights, r, h
        per_row += 8 * 2 * d.n_dense
        per_row += 8 * int(self.fit_intercept)  # the intercept's free column of ones
        per_row += 8 * (d.offset is not None)
        return int(n_rows) * per_row

    def linear_predictor(self, solution: Any, rows: np.ndarray | None = None) -> np.ndarray:
        """η = offset + β0 + Σ_j θ_j[c_ij] + Z β of a solution on all rows or some.

        Parameters
        ----------
        solution : Solution
            Coefficients (``coef``, ``dense_coef``, ``intercept``).
        rows : ndarray of int, optional
            Row indices.

        Returns
        -------
        ndarray
            One value per row.
        """
        design = self.design if rows is None else self.design.subset(rows)
        return design.linear_predictor(solution.coef, solution.dense_coef, solution.intercept)

    def held_out(self, rows: np.ndarray) -> tuple:
        """The rows a fold scores on, gathered once: (design, y, weights).

        Parameters
        ----------
        rows : ndarray of int
            Held-out row indices.

        Returns
        -------
        tuple
            What :meth:`score` takes.
        """
        if not getattr(self.family, "row_separable", True):
            # Cox (glmnet's coxnet rule): the fold's deviance is that of all rows minus
            # that of the training rows, both at the fold's fit; per event in the fold
            train = np.ones(self.n_obs, dtype=bool)
            train[rows] = False
            sw = self.design.unit_weight
            events = float(np.sum(sw[rows] * (self.y[rows] % 2)))
            fold = _CoxnetFold(self.design, self.y, np.flatnonzero(train), events, rows)
            return fold, None, None
        # the rows' indices only: their codes, y and weights are read from all rows'
        # arrays when scored (a CV keeps every fold's held-out set for its whole walk)
        return _HeldOutRows(self.design, self.y, rows), None, None

    def score(self, solution: Any, held_out: tuple, scoring: str) -> float:
        """Held-out score of a solution on the rows of :meth:`held_out`.

        Parameters
        ----------
        solution : Solution
            A fit on the other rows.
        held_out : tuple
            From :meth:`held_out`.
        scoring : {"deviance", "mse", "auc", "concordance"}
            Criterion.

        Returns
        -------
        float
            The score (lower is better, except for AUC and concordance).
        """
        design, y, sw = held_out
        if isinstance(design, _CoxnetFold):
            return design.score(self.family, solution, scoring)
        if isinstance(design, _HeldOutRows):
            return design.score(self.family, solution, scoring)
        eta = design.linear_predictor(solution.coef, solution.dense_coef, solution.intercept)
        return score(self.family, scoring, y, eta, sw)

class _HeldOutRows:
    """A held-out fold as indices into all rows' design and response (nothing copied).

    Scored as ``subset(rows)`` would be, bit for bit: η of the rows is gathered block
    after block in the kernel's order (``_histogram.gather_add_all``: offset and β0
    first, then θ_j[c_ij] for j = 0, 1, …, then Z β), y and the weights are taken for
    the call only.
    """

    def __init__(self, design: BinnedDesign, y: np.ndarray, rows: np.ndarray) -> None:
        self.design, self.y = design, y
        # int32 when it holds every row index (a CV keeps its K held-out sets for the
        # whole walk: half a row vector fewer); the gathers are the same
        small = design.n_rows <= np.iinfo(np.int32).max
        self.rows = np.asarray(rows, dtype=np.int32 if small else np.intp)

    def linear_predictor(self, solution: Any) -> np.ndarray:
        """η of the held-out rows at a solution."""
        d, rows = self.design, self.rows
        eta = np.full(rows.size, float(solution.intercept), dtype=np.float64)
        if d.offset is not None:
            eta += d.offset[rows]
        theta = np.asarray(solution.coef, dtype=np.float64)
        bp = d.block_ptr
        for j in range(d.n_blocks):
            eta += theta[bp[j] : bp[j + 1]][d.codes[j, rows]]
        beta = solution.dense_coef
        if d.dense is not None and beta is not None and len(beta):
            eta += np.ascontiguousarray(d.dense[rows]) @ beta
        return eta

    def score(self, family: Any, solution: Any, scoring: str) -> float:
        """The fold's held-out score (``_scoring.score``) at a solution."""
        eta = self.linear_predictor(solution)
        return score(family, scoring, self.y[self.rows], eta, self.design.sample_weight[self.rows])


class _CoxnetFold:
    """A held-out fold of a loss that is not a sum over rows (Cox): glmnet's coxnet rule.

    The deviance score is [D(all rows) − D(training rows)] / (weighted events in the
    fold), both deviances at the fold's fit (``cv.glmnet(family="cox", grouped=TRUE)``);
    the concordance score is Harrell's C on the fold's rows (``type.measure="C"``), pairs
    compared within strata.
    """

    def __init__(self, full, y, train_rows, events, test_rows=None):
        self.full, self.train_rows, self.events = full, train_rows, events
        self.test_rows = test_rows
        # kept: the family caches the sort of a response array while it lives
        self.y, self.y_train = y, y[train_rows]
        self.sw, self.sw_train = full.unit_weight, full.unit_weight[train_rows]
        # the saturated losses Σ_g d_g log d_g: constants of the rows, once per fold
        self.sat = _cox.saturated_loss(self.y, self.sw)
        self.sat_train = _cox.saturated_loss(self.y_train, self.sw_train)

    def score(self, family, solution, scoring="deviance") -> float:
        args = (solution.coef, solution.dense_coef, solution.intercept)
        eta_all = self.full.linear_predictor(*args)
        if scoring == "concordance":
            rows = self.test_rows
            stratum, rank, event = _cox.decode(self.y[rows])
            # time ranks order the rows as the times do (ties kept): all C needs
            return _cox.concordance_index(rank, event, eta_all[rows],
                                          sample_weight=self.sw[rows], strata=stratum)  # fmt: skip
        # the deviances from η itself (the partial likelihood is shift-invariant): no
        # round trip through e^η, whose clip at η = 700 scored huge-η folds wrongly
        eta_tr = eta_all[self.train_rows]  # one pass over the codes, not two
        dev_all = family.deviance_eta(self.y, eta_all, self.sw, saturated=self.sat)
        dev_tr = family.deviance_eta(self.y_train, eta_tr, self.sw_train, saturated=self.sat_train)
        return (dev_all - dev_tr) / self.events if self.events > 0 else float("nan")


# ---------------------------------------------------------------------------------------
# Folds
# ---------------------------------------------------------------------------------------

def lambda_grid(lmax: float, n_lambdas: int = 50, lam_min_ratio: float = 1e-3) -> np.ndarray:
    """Log-spaced λ grid from ``lmax`` down to ``lam_min_ratio`` · ``lmax``.

    Parameters
    ----------
    lmax : float
        λ_max (0 or less: nothing to penalise, the grid is ``[0.0]``).
    n_lambdas : int, default=50
        Number of values (a positive integer).
    lam_min_ratio : float, default=1e-3
        Smallest λ as a fraction of λ_max, in (0, 1).

    Returns
    -------
    ndarray
        Decreasing.
    """
    if isinstance(n_lambdas, bool) or not isinstance(n_lambdas, (int, np.integer)):
        raise TypeError(f"n_lambdas must be a positive integer; got {n_lambdas!r}.")
    if n_lambdas < 1:
        raise ValueError(f"n_lambdas must be >= 1; got {n_lambdas}.")
    if not (0 < float(lam_min_ratio) < 1):
        raise ValueError(f"lam_min_ratio must be in (0, 1); got {lam_min_ratio!r}.")
    if not lmax > 0:
        # nothing to penalise (no binned term, or every binned term constant)
        return np.zeros(1)
    if n_lambdas == 1:
        return np.array([lmax])
    return lmax * np.logspace(0.0, math.log10(lam_min_ratio), int(n_lambdas))

def check_grid(lams: Any) -> np.ndarray:
    """An explicit λ grid, sorted decreasing.

    Parameters
    ----------
    lams : array-like
        λ values (finite, ≥ 0, at least one).

    Returns
    -------
    ndarray
        The values, decreasing.
    """
    if np.ndim(lams) == 0 or np.asarray(lams).dtype.kind == "b":
        raise TypeError(f"lams must be an array of non-negative numbers; got {lams!r}.")
    grid = np.sort(as_real_array(lams, "lams").ravel())[::-1]  # text refused, not parsed
    if grid.size == 0 or not np.all(np.isfinite(grid)) or np.any(grid < 0):
        raise ValueError("lams must be a non-empty array of finite values >= 0.")
    return grid

def strip_eta(solution: Any) -> Any:
    """A copy of a Solution without its (n,) linear predictor (for compact paths).

    Parameters
    ----------
    solution : Solution
        A solver result.

    Returns
    -------
    Solution
        The same with ``eta=None``.
    """
    return replace(solution, eta=None)

def solve_path(
    prepared: Any,
    lams: Sequence[float],
    opts: dict[str, Any],
    tick: Callable[[], None] | None = None,
    warm_start: Any = None,
) -> list:
    """Solve along ``lams`` with warm starts; the Solutions come without their η.

    Parameters
    ----------
    prepared : Prepared
        The problem (from :meth:`PathData.prepare`).
    lams : sequence of float
        λ values, usually decreasing.
    opts : dict
        ``solver``, ``tol``, ``max_iter``.
    tick : callable, optional
        Called after every λ (a progress bar).
    warm_start : Solution, optional
        Start of the first solve.

    Returns
    -------
    list of Solution
        One per λ.
    """
    sols = []
    prev = warm_start
    for lam in lams:
        # results recompute η from the coefficients: the solver's (n,) copy would
        # only hold memory (a path at n = 1e7 would keep gigabytes of it)
        sol = strip_eta(prepared.solve(float(lam), warm_start=prev, **opts))
        sols.append(sol)
        prev = sol
        if tick is not None:
            tick()
    return sols
