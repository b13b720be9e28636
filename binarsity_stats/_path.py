"""Regularisation paths and K-fold cross-validation, at the engine level.

What the formula layer (``BinarsityModel.fit_path`` / ``fit_cv``) and scikit-learn style
``*CV`` estimators share, written on arrays only (NumPy; no pandas, formulas or
scikit-learn at import time):

* **the data of a path**, :class:`PathData`: a ``BinnedDesign`` (codes, blocks and
  kinds, dense columns, offset, weights), the response, family and penalty weights; it
  prepares the engine's solver on all rows or on a subset (a fold) and scores held-out
  rows;
* **fold assignment**: :func:`fold_ids` (shuffled, stratified on y if asked) and
  :func:`group_fold_ids` (whole groups per fold, balanced by rows);
* **the walk**: :func:`solve_path` (warm starts down a decreasing grid) and
  :func:`cross_validate`, which walks every fold down the grid in lockstep, scores the
  held-out rows after each λ and stops once the CV curve has turned (early stopping),
  in ``n_jobs`` threads (the kernels release the GIL);
* **the choice of λ**: :func:`cv_mean_se` and :func:`select_lambda` (the best mean and
  the one-standard-error rule).

Threads and Ctrl-C. Folds run in daemon worker threads that check a stop flag before
every λ; when the main thread is interrupted (``KeyboardInterrupt``) or a fold raises,
the flag is set, pending fold work is dropped and the exception propagates at once —
the interpreter does not wait for the folds still inside a solve.

Every fold is computed independently from its own warm starts, so results do not depend
on ``n_jobs`` (bit for bit), nor on whether a fold's prepared design is kept for the
whole walk or prepared again for each chunk of λ values (``keep``).
"""

from __future__ import annotations

import math
import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ._design import BinnedDesign
from ._validation import as_real_array, check_groups, check_n_jobs, check_random_state

__all__ = [
    "SCORINGS",
    "PathData",
    "CVPath",
    "fold_ids",
    "group_fold_ids",
    "lambda_grid",
    "check_grid",
    "solve_path",
    "cross_validate",
    "cv_mean_se",
    "select_lambda",
    "curve_turned",
    "score",
    "weighted_auc",
    "strip_eta",
    "resolve_n_jobs",
]

#: Held-out criteria of cross-validation.
SCORINGS = ("deviance", "mse", "auc")
#: Keep every fold's prepared design for the whole walk below this many bytes; above it,
#: a fold's design is prepared again for each chunk of λ values.
KEEP_BYTES = 1 << 30


# ---------------------------------------------------------------------------------------
# The data of a path
# ---------------------------------------------------------------------------------------


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
    """

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
        self.family = family
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
        from ._solvers import Prepared

        design = self.design if rows is None else self.design.subset(rows)
        y = self.y if rows is None else self.y[rows]
        return Prepared.from_design(
            design, y, family=self.family, penalty_weights=self.penalty_weights,
            fit_intercept=self.fit_intercept,
        )  # fmt: skip

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
        """Memory a prepared problem of ``n_rows`` rows holds (codes and float arrays).

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
        design = self.design.subset(rows)
        return design, self.y[rows], design.sample_weight

    def score(self, solution: Any, held_out: tuple, scoring: str) -> float:
        """Held-out score of a solution on the rows of :meth:`held_out`.

        Parameters
        ----------
        solution : Solution
            A fit on the other rows.
        held_out : tuple
            From :meth:`held_out`.
        scoring : {"deviance", "mse", "auc"}
            Criterion.

        Returns
        -------
        float
            The score (lower is better, except for AUC).
        """
        design, y, sw = held_out
        eta = design.linear_predictor(solution.coef, solution.dense_coef, solution.intercept)
        return score(self.family, scoring, y, eta, sw)


# ---------------------------------------------------------------------------------------
# Folds
# ---------------------------------------------------------------------------------------


def fold_ids(
    y: np.ndarray, folds: int, *, stratify: bool = False, random_state: Any = None
) -> np.ndarray:
    """Assign rows to K folds after a seeded shuffle (stratified on y if asked).

    Parameters
    ----------
    y : ndarray of shape (n,)
        Response (its distinct values are the strata).
    folds : int
        K.
    stratify : bool, default=False
        Spread every class round-robin over the folds so each fold keeps the class
        proportions.
    random_state : int, numpy Generator or None
        Seed.

    Returns
    -------
    ndarray of shape (n,)
        Fold index in 0..K−1 of every row.
    """
    rng = np.random.default_rng(check_random_state(random_state))
    n = y.shape[0]
    out = np.empty(n, dtype=np.intp)
    if not stratify:
        out[rng.permutation(n)] = np.arange(n) % folds
        return out
    start = 0
    for cls in np.unique(y):
        idx = np.flatnonzero(y == cls)
        idx = idx[rng.permutation(idx.size)]
        out[idx] = (start + np.arange(idx.size)) % folds
        start += idx.size
    return out


def group_fold_ids(groups: Any, folds: int, n: int, *, random_state: Any = None) -> np.ndarray:
    """Assign whole groups of rows to K folds, balancing the number of rows per fold.

    Parameters
    ----------
    groups : array-like of shape (n,)
        Group label of every row (any hashable values, no missing values).
    folds : int
        K (at most the number of distinct groups).
    n : int
        Number of rows expected.
    random_state : int, numpy Generator or None
        Seed of the shuffle that breaks ties between groups of equal size.

    Returns
    -------
    ndarray of shape (n,)
        Fold index in 0..K−1 of every row; rows of one group share it.

    Raises
    ------
    ValueError
        If ``groups`` has the wrong length, missing values, or fewer than K groups.
    """
    import pandas as pd  # labels of any type: pandas' factorize and missing-value rules

    labels = pd.Series(check_groups(groups, n))
    codes, uniques = pd.factorize(labels, sort=True)
    n_groups = len(uniques)
    if n_groups < folds:
        raise ValueError(
            f"groups has {n_groups} distinct groups but folds={folds}; "
            "use at most as many folds as groups."
        )
    sizes = np.bincount(codes, minlength=n_groups)
    rng = np.random.default_rng(check_random_state(random_state))
    order = rng.permutation(n_groups)
    order = order[np.argsort(-sizes[order], kind="stable")]  # largest first, ties shuffled
    load = np.zeros(folds, dtype=np.int64)
    fold_of_group = np.empty(n_groups, dtype=np.intp)
    for g in order:
        k = int(np.argmin(load))
        fold_of_group[g] = k
        load[k] += sizes[g]
    return fold_of_group[codes]


# ---------------------------------------------------------------------------------------
# Grids and the walk
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


def resolve_n_jobs(n_jobs: Any) -> int:
    """Number of worker threads for ``n_jobs`` (see ``_validation.check_n_jobs``).

    Parameters
    ----------
    n_jobs : int
        Non-zero integer.

    Returns
    -------
    int
        At least 1.
    """
    return check_n_jobs(n_jobs)


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


class _FoldPool:
    """Daemon threads that run one task per fold and are never waited for on errors.

    ``concurrent.futures`` joins its (non-daemon) workers when the pool shuts down and
    again at interpreter exit, so a Ctrl-C waited for every running solve. Here the
    caller sets its stop flag and leaves; a worker finishing its λ sees the flag.
    """

    def __init__(self, workers: int) -> None:
        self._tasks: queue.SimpleQueue = queue.SimpleQueue()
        self._threads = [
            threading.Thread(target=self._work, name=f"binarsity-fold-{i}", daemon=True)
            for i in range(workers)
        ]
        for t in self._threads:
            t.start()

    def _work(self) -> None:
        while True:
            task = self._tasks.get()
            if task is None:
                return
            fn, arg, box, done = task
            try:
                box.append((True, fn(arg)))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                box.append((False, exc))
            done.release()

    def map(self, fn: Callable[[Any], Any], args: Sequence[Any]) -> list:
        boxes: list[list] = [[] for _ in args]
        done = threading.Semaphore(0)
        for arg, box in zip(args, boxes, strict=True):
            self._tasks.put((fn, arg, box, done))
        for _ in args:
            # a timed wait, so that a signal reaches the main thread on every platform
            while not done.acquire(timeout=0.2):
                pass
        out = []
        for box in boxes:
            ok, value = box[0]
            if not ok:
                raise value
            out.append(value)
        return out

    def close(self) -> None:
        for _ in self._threads:
            self._tasks.put(None)


@dataclass
class CVPath:
    """What :func:`cross_validate` returns.

    Attributes
    ----------
    lams : ndarray of shape (m,)
        The λ values evaluated (the grid, cut where the walk stopped).
    fold_scores : ndarray of shape (K, m)
        Held-out score of every fold at every λ.
    fold_ids : ndarray of shape (n,)
        Fold of every row.
    grid_size : int
        Length of the grid requested (more than m when the walk stopped early).
    path : list of Solution or None
        Fits on all rows along ``lams`` (None when not asked for).
    mean, se : ndarray of shape (m,)
        Mean score over folds and its standard error.
    idx_min, idx_1se : int
        Positions of ``lam_min`` and ``lam_1se`` in ``lams``.
    """

    lams: np.ndarray
    fold_scores: np.ndarray
    fold_ids: np.ndarray
    grid_size: int
    path: list | None
    mean: np.ndarray
    se: np.ndarray
    idx_min: int
    idx_1se: int

    @property
    def lam_min(self) -> float:
        """λ with the best mean score."""
        return float(self.lams[self.idx_min])

    @property
    def lam_1se(self) -> float:
        """Largest λ whose mean score is within one standard error of the best."""
        return float(self.lams[self.idx_1se])


def cross_validate(
    data: PathData,
    grid: np.ndarray,
    fold_id: np.ndarray,
    *,
    scoring: str = "deviance",
    opts: dict[str, Any] | None = None,
    fold_opts: dict[str, Any] | None = None,
    n_jobs: int = 1,
    early_stopping: bool = True,
    patience: int = 5,
    keep: bool | None = None,
    refit_path: bool = True,
    prepare: Callable[[np.ndarray | None], Any] | None = None,
    tick: Callable[[], None] | None = None,
) -> CVPath:
    """K-fold cross-validation of a λ grid: the folds walk down it in lockstep.

    Every fold solves the grid from its own warm starts; after each λ the held-out rows
    are scored. With ``early_stopping`` the walk stops once the last ``patience`` mean
    scores are all outside the one-standard-error band of the best so far
    (:func:`curve_turned`); then the fits on all rows (``refit_path``) cover the
    evaluated grid.

    Parameters
    ----------
    data : PathData
        All rows.
    grid : ndarray of shape (m,)
        λ values, decreasing (from all rows).
    fold_id : ndarray of shape (n,)
        Fold of every row (:func:`fold_ids`, :func:`group_fold_ids`), values 0..K−1.
    scoring : {"deviance", "mse", "auc"}, default="deviance"
        Held-out criterion (AUC is maximised, the others minimised).
    opts : dict, optional
        ``solver``, ``tol``, ``max_iter`` of the fits on all rows.
    fold_opts : dict, optional
        The same for the fold fits (default: ``opts``).
    n_jobs : int, default=1
        Worker threads (results do not depend on it).
    early_stopping : bool, default=True
        Stop once the CV curve has turned.
    patience : int, default=5
        λ values outside the band that stop the walk.
    keep : bool, optional
        Keep every fold's prepared problem for the whole walk (True), or prepare a fold
        again for each chunk of ``patience`` λ values (False, bounded memory). Default:
        keep when all folds take at most ``KEEP_BYTES``.
    refit_path : bool, default=True
        Also solve the evaluated grid on all rows (``CVPath.path``).
    prepare : callable, optional
        ``prepare(rows)`` → a problem with ``solve``; default ``data.prepare``.
    tick : callable, optional
        Called after every solve (a progress bar).

    Returns
    -------
    CVPath
        Scores, the evaluated grid, the choice of λ and the path on all rows.
    """
    opts = {} if opts is None else dict(opts)
    fold_opts = opts if fold_opts is None else dict(fold_opts)
    prepare = data.prepare if prepare is None else prepare
    n_folds = int(fold_id.max()) + 1
    sign = -1.0 if scoring == "auc" else 1.0  # lower sign * score is better
    rows = [np.flatnonzero(fold_id != k) for k in range(n_folds)]
    held_out = [data.held_out(np.flatnonzero(fold_id == k)) for k in range(n_folds)]
    if keep is None:
        keep = data.fold_bytes(len(rows[0])) * n_folds <= KEEP_BYTES
    chunk = 1 if keep else int(patience)
    prepared: list[Any] = [None] * n_folds
    warm: list[Any] = [None] * n_folds
    stop = threading.Event()

    def run_chunk(k: int, lams: np.ndarray) -> list[float]:
        if stop.is_set():
            return []
        prep = prepared[k] if prepared[k] is not None else prepare(rows[k])
        if keep:
            prepared[k] = prep
        out = []
        for lam in lams:
            if stop.is_set():  # interrupted, or another fold failed: drop the rest
                break
            sol = prep.solve(float(lam), **fold_opts, warm_start=warm[k])
            warm[k] = strip_eta(sol)  # a warm start needs the coefficients only
            if tick is not None:
                tick()
            out.append(data.score(sol, held_out[k], scoring))
        return out

    columns: list[np.ndarray] = []
    pool = _FoldPool(min(n_jobs, n_folds)) if n_jobs > 1 else None
    try:
        for first in range(0, len(grid), chunk):
            lams = grid[first : first + chunk]
            if pool is not None:
                block = pool.map(lambda k, lams=lams: run_chunk(k, lams), range(n_folds))
            else:
                block = [run_chunk(k, lams) for k in range(n_folds)]
            block = np.asarray(block, dtype=np.float64).reshape(n_folds, len(lams))
            turned = False
            for j in range(len(lams)):
                columns.append(block[:, j])
                if early_stopping and curve_turned(np.column_stack(columns), sign,
                                                   int(patience)):  # fmt: skip
                    turned = True
                    break
            if turned:
                break
    except BaseException:
        stop.set()
        raise
    finally:
        if pool is not None:
            pool.close()
    grid_size = len(grid)
    lams = np.asarray(grid[: len(columns)], dtype=np.float64)
    scores = np.column_stack(columns)
    path = solve_path(prepare(None), lams, opts, tick) if refit_path else None
    mean, se, idx_min, idx_1se = select_lambda(scores, scoring)
    return CVPath(lams, scores, fold_id, grid_size, path, mean, se, idx_min, idx_1se)


# ---------------------------------------------------------------------------------------
# Scores and the choice of λ
# ---------------------------------------------------------------------------------------


def cv_mean_se(fold_scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean over folds and its standard error (std / sqrt(K)) per λ, NaN-aware.

    Parameters
    ----------
    fold_scores : ndarray of shape (K, m)
        Held-out score of every fold at every λ (NaN where undefined).

    Returns
    -------
    mean, se : ndarray of shape (m,)
        NaN mean where no fold is finite; se 0 where fewer than two folds are.
    """
    finite = np.isfinite(fold_scores)
    k = finite.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(k > 0, np.nansum(fold_scores, axis=0) / np.maximum(k, 1), np.nan)
        dev = np.where(finite, fold_scores - mean, 0.0)
        sd = np.sqrt(np.sum(dev**2, axis=0) / np.maximum(k - 1, 1))
    return mean, np.where(k >= 2, sd / np.sqrt(np.maximum(k, 1)), 0.0)


def select_lambda(fold_scores: np.ndarray, scoring: str) -> tuple:
    """The best mean score and the one-standard-error rule on a decreasing grid.

    Parameters
    ----------
    fold_scores : ndarray of shape (K, m)
        Held-out scores, the grid decreasing.
    scoring : {"deviance", "mse", "auc"}
        AUC is maximised, the others minimised.

    Returns
    -------
    mean, se : ndarray of shape (m,)
        From :func:`cv_mean_se`.
    idx_min : int
        Position of the best mean.
    idx_1se : int
        Smallest position (largest λ) whose mean is within one standard error of the
        best.

    Raises
    ------
    ValueError
        If the score is undefined on every fold at every λ.
    """
    fold_scores = np.asarray(fold_scores, dtype=np.float64)
    if not np.any(np.isfinite(fold_scores)):
        # e.g. scoring="auc" when no held-out fold contains both classes
        raise ValueError(
            f"scoring={scoring!r} is undefined on every fold (for 'auc' each held-out "
            "fold needs both classes); use fewer folds or scoring='deviance'."
        )
    mean, se = cv_mean_se(fold_scores)
    sign = -1.0 if scoring == "auc" else 1.0  # minimise sign * score
    loss = sign * mean
    idx_min = int(np.nanargmin(loss))
    bound = loss[idx_min] + se[idx_min]
    ok = np.flatnonzero(loss <= bound)
    return mean, se, idx_min, int(ok.min())


def curve_turned(fold_scores: np.ndarray, sign: float, patience: int) -> bool:
    """Whether the last ``patience`` λ values all score outside the 1-SE band of the best.

    Parameters
    ----------
    fold_scores : ndarray of shape (K, m)
        Scores of the first m λ values.
    sign : float
        1 when lower scores are better, −1 when higher are (AUC).
    patience : int
        How many λ values.

    Returns
    -------
    bool
        True when the walk can stop. The band is the best mean plus its standard error,
        as for ``lam_1se``.
    """
    m = fold_scores.shape[1]
    if m <= patience:
        return False
    mean, se = cv_mean_se(fold_scores)
    loss = sign * mean
    if not np.all(np.isfinite(loss[-patience:])):
        return False
    best = int(np.nanargmin(loss))
    if best >= m - patience:
        return False
    return bool(np.all(loss[-patience:] > loss[best] + se[best]))


def weighted_auc(y: np.ndarray, score_: np.ndarray, sw: np.ndarray) -> float:
    """Weighted ROC AUC (ties count one half); NaN when a class is absent.

    Parameters
    ----------
    y : ndarray of shape (n,)
        0/1 labels.
    score_ : ndarray of shape (n,)
        Scores (higher means more likely 1).
    sw : ndarray of shape (n,)
        Weights.

    Returns
    -------
    float
        The AUC in [0, 1].
    """
    pos = y > 0.5
    wp, wn = float(np.sum(sw[pos])), float(np.sum(sw[~pos]))
    if wp <= 0 or wn <= 0:
        return float("nan")
    uniq, inv = np.unique(score_, return_inverse=True)
    neg_w = np.bincount(inv, weights=np.where(pos, 0.0, sw), minlength=uniq.size)
    pos_w = np.bincount(inv, weights=np.where(pos, sw, 0.0), minlength=uniq.size)
    below = np.concatenate([[0.0], np.cumsum(neg_w)[:-1]])
    return float(np.sum(pos_w * (below + 0.5 * neg_w)) / (wp * wn))


def score(family: Any, scoring: str, y: np.ndarray, eta: np.ndarray, sw: np.ndarray) -> float:
    """Held-out score of a fit: mean deviance, MSE of the mean, or AUC.

    Parameters
    ----------
    family : Family
        Distribution.
    scoring : {"deviance", "mse", "auc"}
        Criterion.
    y, eta, sw : ndarray of shape (n,)
        Response, linear predictor (offset included) and weights.

    Returns
    -------
    float
        The score (lower is better, except for AUC).
    """
    if scoring == "auc":
        return weighted_auc(y, eta, sw)
    mu = family.mean(eta)
    W = float(sw.sum())
    if scoring == "mse":
        return float(np.sum(sw * (y - mu) ** 2) / W)
    return family.deviance(y, mu, sw) / W
