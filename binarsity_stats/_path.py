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
  with the folds in ``n_jobs`` worker processes (or threads) and the path on all rows
  walked alongside them;
* **the choice of λ**: :func:`cv_mean_se` and :func:`select_lambda` (the best mean and
  the one-standard-error rule).

Parallel folds and Ctrl-C. A fold's solve is mostly kernels, but the solver's loop
around them (the sweeps' bookkeeping, the polish's small dense algebra, the KKT checks)
is Python that holds the GIL: on two cores, threads over folds gave 1.6× at best. So
with ``n_jobs > 1`` on Linux the folds run in ``n_jobs`` forked worker processes
(``backend="processes"``): a fork shares the codes and every array copy-on-write, the
folds are dealt to the workers once (fold k to worker k mod n_jobs, which keeps its
prepared problems for the whole walk), and per chunk of λ values only the λ go out
and the held-out scores (K floats) come back. The path on all rows is walked in the
calling process at the same time, λ by λ with its own warm starts, instead of after
the folds. Where ``fork`` is missing (Windows, macOS) or the caller is itself a
daemonic process, daemon worker threads do the same (``backend="threads"``). Both
check a stop flag (threads) or are killed (processes) when the caller is interrupted
(``KeyboardInterrupt``) or a fold raises: pending fold work is dropped and the
exception propagates at once — the interpreter does not wait for folds still inside a
solve. Warnings of the workers are re-issued by the caller.

Every fold is computed independently from its own warm starts, so results do not depend
on ``n_jobs`` or the backend (bit for bit), nor on whether a fold's prepared design is
kept for the whole walk or prepared again for each chunk of λ values (``keep``).
"""

from __future__ import annotations

import math
import multiprocessing
import os
import queue
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from . import _cox
from ._design import BinnedDesign
from ._families import get_family
from ._validation import as_real_array, check_groups, check_n_jobs, check_random_state

__all__ = [
    "HIGHER_IS_BETTER",
    "CV_TIE_RTOL",
    "best_position",
    "SCORINGS",
    "PathData",
    "CVPath",
    "fold_ids",
    "group_fold_ids",
    "Folds",
    "check_fold_ids",
    "is_fold_ids",
    "resolve_folds",
    "lambda_grid",
    "check_grid",
    "solve_path",
    "cross_validate",
    "best_is_last",
    "grid_end_message",
    "cv_mean_se",
    "select_lambda",
    "curve_turned",
    "score",
    "weighted_auc",
    "strip_eta",
    "resolve_n_jobs",
    "resolve_backend",
    "fork_available",
    "CV_BACKENDS",
    "check_scoring",
    "check_patience",
]

#: Held-out criteria of cross-validation.
SCORINGS = ("deviance", "mse", "auc", "concordance")
# criteria where a higher held-out score is better (the others are losses)
HIGHER_IS_BETTER = ("auc", "concordance")

#: CV means within this relative distance of the best are ties: the rounding of the fold
#: fits and of the held-out sums is ~1e-15 relative, so differences below 1e-12 carry no
#: information — they differ between CPUs and BLAS kernels, and between weights and the
#: repeated rows they stand for. The largest λ among ties is chosen (glmnet's rule for
#: exact ties: ``lambda.min = max(lambda[cvm <= min(cvm)])``).
CV_TIE_RTOL = 1e-12
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
            prep.set_gram_source(lambda: grams.train(rows))
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
        if not getattr(self.family, "row_separable", True):
            # Cox (glmnet's coxnet rule): the fold's deviance is that of all rows minus
            # that of the training rows, both at the fold's fit; per event in the fold
            train = np.ones(self.n_obs, dtype=bool)
            train[rows] = False
            sw = self.design.unit_weight
            events = float(np.sum(sw[rows] * (self.y[rows] % 2)))
            fold = _CoxnetFold(self.design, self.y, np.flatnonzero(train), events, rows)
            return fold, None, None
        return design, self.y[rows], design.sample_weight

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
        eta = design.linear_predictor(solution.coef, solution.dense_coef, solution.intercept)
        return score(self.family, scoring, y, eta, sw)


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


class Folds:
    """The train/test splits of a cross-validation, however they were given.

    Parameters
    ----------
    splits : list of (ndarray, ndarray)
        Row indices (int) of the training and of the held-out rows of every split.
    n_obs : int
        Number of rows.

    Attributes
    ----------
    splits : list of (ndarray, ndarray)
        ``(train, test)`` row indices per split, as scikit-learn's ``split`` yields them.
    fold_ids : ndarray of shape (n,) or None
        The split whose held-out set holds each row (glmnet's ``foldid``, 0-based); −1
        for a row in no held-out set (e.g. the first block of ``TimeSeriesSplit``).
        None when held-out sets overlap (``ShuffleSplit``, ``RepeatedKFold``).
    n_folds : int
        Number of splits.
    """

    def __init__(self, splits: list, n_obs: int) -> None:
        self.splits = [(np.asarray(tr, dtype=np.intp), np.asarray(te, dtype=np.intp))
                       for tr, te in splits]  # fmt: skip
        self.n_obs = int(n_obs)
        ids = np.full(self.n_obs, -1, dtype=np.intp)
        seen = np.zeros(self.n_obs, dtype=np.intp)
        for k, (_, test) in enumerate(self.splits):
            ids[test] = k
            np.add.at(seen, test, 1)
        self.fold_ids = ids if np.all(seen <= 1) else None

    @property
    def n_folds(self) -> int:
        """Number of splits."""
        return len(self.splits)

    @classmethod
    def from_fold_ids(cls, fold_id: np.ndarray) -> Folds:
        """Splits of a fold-id array of values 0..K−1 (every row held out once).

        Parameters
        ----------
        fold_id : ndarray of shape (n,)
            Fold of every row.

        Returns
        -------
        Folds
            Split k trains on the rows of the other folds and scores fold k.
        """
        fold_id = np.asarray(fold_id, dtype=np.intp)
        k = int(fold_id.max()) + 1
        splits = [(np.flatnonzero(fold_id != j), np.flatnonzero(fold_id == j)) for j in range(k)]
        return cls(splits, fold_id.shape[0])

    def restrict(self, rows: np.ndarray) -> Folds | None:
        """The same splits on a subset of the rows, renumbered to positions in ``rows``.

        A bootstrap resample replays fixed folds this way: each distinct drawn row keeps
        its side of every split. Splits left without a training or a held-out row are
        dropped.

        Parameters
        ----------
        rows : ndarray of int
            Distinct row indices, increasing.

        Returns
        -------
        Folds or None
            None when no split keeps both sides.
        """
        rows = np.asarray(rows, dtype=np.intp)
        pos = np.full(self.n_obs, -1, dtype=np.intp)
        pos[rows] = np.arange(rows.size)
        out = []
        for train, test in self.splits:
            tr, te = pos[train], pos[test]
            tr, te = tr[tr >= 0], te[te >= 0]
            if tr.size and te.size:
                out.append((tr, te))
        return Folds(out, rows.size) if out else None

    def __repr__(self) -> str:
        return f"<Folds {self.n_folds} splits of {self.n_obs} rows>"


def _is_splitter(obj: Any) -> bool:
    return callable(getattr(obj, "split", None)) and not isinstance(obj, (str, bytes, np.ndarray))


def _looks_like_pairs(obj: Any) -> bool:
    """An iterable of (train, test) index pairs (scikit-learn's ``cv=`` iterable)."""
    if isinstance(obj, (str, bytes, np.ndarray)) or hasattr(obj, "dtype"):
        return False
    if not isinstance(obj, (list, tuple)):
        return hasattr(obj, "__iter__") and not hasattr(obj, "__len__")  # a generator
    return len(obj) > 0 and all(
        isinstance(p, (list, tuple)) and len(p) == 2 and np.ndim(p[0]) == 1 for p in obj
    )


def is_fold_ids(folds: Any) -> bool:
    """Whether ``folds`` would be read as a fold-id array (not an int, splitter or pairs).

    Parameters
    ----------
    folds : Any
        A ``folds=`` argument.

    Returns
    -------
    bool
        True for an array-like of per-row values (what :func:`check_fold_ids` reads).
    """
    if folds is None or isinstance(folds, (bool, np.bool_, int, np.integer, float, str, bytes)):
        return False
    return not _is_splitter(folds) and not _looks_like_pairs(folds)


def _check_splits(splits: Any, n: int, what: str) -> list:
    out = []
    for k, pair in enumerate(splits):
        if not (isinstance(pair, (list, tuple)) and len(pair) == 2):
            raise ValueError(f"{what} must yield (train, test) pairs of row indices; "
                             f"split {k} is {type(pair).__name__}.")  # fmt: skip
        sides = []
        for side, idx in zip(("train", "test"), pair, strict=True):
            arr = np.asarray(idx)
            if arr.ndim != 1 or (arr.size and arr.dtype.kind not in "iu"):
                raise ValueError(
                    f"{what}: the {side} rows of split {k} must be a 1-D array of integer "
                    f"row indices; got dtype {arr.dtype} and shape {arr.shape}."
                )
            if arr.size == 0:
                raise ValueError(f"{what}: split {k} has no {side} rows.")
            if arr.min() < 0 or arr.max() >= n:
                raise ValueError(
                    f"{what}: split {k} has {side} row indices outside 0..{n - 1} "
                    f"(the data has {n} rows)."
                )
            sides.append(arr.astype(np.intp))
        if np.intersect1d(sides[0], sides[1]).size:
            raise ValueError(f"{what}: split {k} has rows both in train and in test.")
        out.append((sides[0], sides[1]))
    if not out:
        raise ValueError(f"{what} yielded no split.")
    return out


def check_fold_ids(fold_id: Any, n: int, name: str = "folds") -> np.ndarray:
    """A fold-id array (glmnet's ``foldid``) → fold indices 0..K−1.

    Parameters
    ----------
    fold_id : array-like of shape (n,)
        Integer labels, one per row (any K ≥ 2 distinct non-negative values; fold k is
        the k-th smallest label, so glmnet's 1..K become 0..K−1).
    n : int
        Number of rows.
    name : str, default="folds"
        The argument's name in messages.

    Returns
    -------
    ndarray of shape (n,)
        Fold index of every row.
    """
    arr = np.asarray(fold_id)
    if arr.dtype.kind == "O" and arr.ndim == 1:  # a column of numbers read as objects
        try:
            arr = as_real_array(arr, name)
        except (TypeError, ValueError):
            pass  # refused below with the message listing what folds may be
    if arr.dtype.kind == "b" or arr.dtype.kind not in "iuf" or arr.ndim != 1:
        raise TypeError(
            f"{name} must be an integer >= 2, a fold-id array (one integer per row), a scikit-learn "
            f"splitter (an object with .split) or (train, test) pairs; got {fold_id!r:.80}."
        )
    if arr.shape[0] != n:
        raise ValueError(f"{name} (fold ids) has {arr.shape[0]} rows but the data has {n}.")
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise ValueError(f"{name} (fold ids) must hold whole numbers (no NaN, no fractions).")
    if np.any(arr < 0):
        raise ValueError(
            f"{name} (fold ids) must be >= 0; for rows never held out use scikit-learn's "
            f"PredefinedSplit(test_fold) as {name}."
        )
    labels, codes = np.unique(arr, return_inverse=True)
    if labels.size < 2:
        raise ValueError(f"{name} (fold ids) needs at least 2 distinct folds; got {labels.size}.")
    return codes.reshape(-1).astype(np.intp)


def resolve_folds(
    folds: Any,
    y: np.ndarray,
    *,
    groups: Any = None,
    stratify: bool = False,
    random_state: Any = None,
    X: Any = None,
    split_y: Any = None,
    name: str = "folds",
) -> Folds:
    """The splits of a cross-validation from any of the usual ways to give them.

    Parameters
    ----------
    folds : int, array-like, splitter or iterable of pairs
        * an int K (2 ≤ K ≤ n): shuffled K folds (:func:`fold_ids`, stratified on y if
          ``stratify``), or whole groups per fold when ``groups`` is given
          (:func:`group_fold_ids`);
        * a fold-id array of n integers (glmnet's ``foldid``; :func:`check_fold_ids`);
        * a scikit-learn splitter — any object with ``split(X, y, groups)`` (``KFold``,
          ``StratifiedKFold``, ``GroupKFold``, ``TimeSeriesSplit``...);
        * an iterable of ``(train, test)`` row-index pairs.
    y : ndarray of shape (n,)
        Response (the strata of an int K; what a splitter sees unless ``split_y``).
    groups : array-like of shape (n,), optional
        Group labels, for an int K or a splitter (refused with fold ids or pairs).
    stratify : bool, default=False
        Stratify an int K on y.
    random_state : int, numpy Generator or None
        Seed of an int K's shuffle (a splitter uses its own).
    X : array-like, optional
        What a splitter's ``split`` receives as X (default: a placeholder of n rows).
    split_y : array-like, optional
        What a splitter receives as y (default ``y``; a classifier's labels).
    name : str, default="folds"
        The argument's name in messages (the estimators' ``cv``).

    Returns
    -------
    Folds
        The splits, checked: integer indices within the rows, non-empty sides, no row
        in both.
    """
    n = int(y.shape[0])
    if isinstance(folds, (int, np.integer)) and not isinstance(folds, (bool, np.bool_)):
        if not 2 <= folds <= n:
            raise ValueError(
                f"{name} must be between 2 and the number of rows (n_samples = {n}); got {folds}."
            )
        if groups is None:
            ids = fold_ids(y, int(folds), stratify=stratify, random_state=random_state)
        else:
            ids = group_fold_ids(groups, int(folds), n, random_state=random_state)
        return Folds.from_fold_ids(ids)
    if isinstance(folds, (bool, np.bool_, float, str, bytes)) or folds is None:
        raise TypeError(
            f"{name} must be an integer >= 2, a fold-id array (one integer per row), a "
            f"scikit-learn splitter (an object with .split) or (train, test) pairs; got "
            f"{folds!r}."
        )
    if _is_splitter(folds):
        if groups is not None:
            groups = check_groups(groups, n)
        Xs = np.zeros((n, 1)) if X is None else X
        ys = y if split_y is None else split_y
        what = f"{name} ({type(folds).__name__})"
        return Folds(_check_splits(folds.split(Xs, ys, groups), n, what), n)
    if groups is not None:
        raise ValueError(
            "groups is used with folds=int or a scikit-learn splitter; fold ids or "
            "(train, test) pairs already say which rows are held out together."
        )
    if _looks_like_pairs(folds):
        return Folds(_check_splits(folds, n, f"{name} (train, test pairs)"), n)
    return Folds.from_fold_ids(check_fold_ids(folds, n, name))


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


def check_scoring(scoring: Any, family: Any, y: np.ndarray) -> str:
    """A held-out criterion that fits the family and the response.

    Parameters
    ----------
    scoring : {"deviance", "mse", "auc", "concordance"}
        The argument.
    family : Family
        Distribution (``"auc"`` needs a binary one).
    y : ndarray of shape (n,)
        Response (``"auc"`` needs 0/1 values, not proportions).

    Returns
    -------
    str
        ``scoring``.
    """
    if scoring not in SCORINGS:
        raise ValueError(f"scoring must be one of {SCORINGS}; got {scoring!r}.")
    if getattr(family, "survival", False) and scoring not in ("deviance", "concordance"):
        raise ValueError(
            f"scoring={scoring!r} does not apply to family='cox'; use scoring='deviance' "
            "(the partial-likelihood deviance, glmnet's coxnet rule) or 'concordance' "
            "(Harrell's C)."
        )
    if scoring == "concordance" and not getattr(family, "survival", False):
        raise ValueError("scoring='concordance' (Harrell's C) needs family='cox'.")
    if scoring == "auc" and not family.binary:
        raise ValueError("scoring='auc' needs family='binomial'.")
    if scoring == "auc" and not np.all((y == 0) | (y == 1)):
        raise ValueError("scoring='auc' needs a 0/1 response; y holds proportions.")
    return scoring


def check_patience(patience: Any) -> int:
    """The early-stopping patience: a positive integer.

    Parameters
    ----------
    patience : int
        The argument.

    Returns
    -------
    int
        ``patience``.
    """
    if isinstance(patience, bool) or not isinstance(patience, (int, np.integer)):
        raise TypeError(f"patience must be a positive integer; got {patience!r}.")
    if patience < 1:
        raise ValueError(f"patience must be >= 1; got {patience}.")
    return int(patience)


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


#: Parallel execution of the folds (:func:`cross_validate`'s ``backend``).
CV_BACKENDS = ("auto", "processes", "threads")


def fork_available() -> bool:
    """Whether fold workers can be forked processes (Linux, not inside a daemonic process).

    Returns
    -------
    bool
        True on Linux when the ``fork`` start method exists and the current process may
        have children (a ``multiprocessing`` daemonic worker may not).
    """
    return (
        sys.platform.startswith("linux")
        and "fork" in multiprocessing.get_all_start_methods()
        and not multiprocessing.current_process().daemon
    )


def resolve_backend(backend: Any, n_jobs: int) -> str:
    """The execution of the folds: ``"serial"``, ``"processes"`` or ``"threads"``.

    Parameters
    ----------
    backend : {"auto", "processes", "threads"}
        Requested backend; ``"auto"`` is processes where :func:`fork_available`, else
        threads. A request for processes where fork is missing falls back to threads.
    n_jobs : int
        Workers (1: serial, whatever the backend).

    Returns
    -------
    str
        The backend used.
    """
    if backend not in CV_BACKENDS:
        raise ValueError(f"backend must be one of {CV_BACKENDS}; got {backend!r}.")
    if n_jobs <= 1:
        return "serial"
    if backend in ("auto", "processes") and fork_available():
        return "processes"
    return "threads"


def _die_with_parent(parent_pid: int) -> None:
    """Ask Linux to kill this process when its parent dies (``PR_SET_PDEATHSIG``).

    A worker must never outlive the process that forked it: a parent stopped by Ctrl-C
    between forking and its ``try``, killed, or exiting through a path that skips
    :meth:`_ProcessFolds.kill` would otherwise leave orphans fitting for minutes (and
    holding its stdout/stderr pipes open). Where ``prctl`` is unavailable nothing happens.
    """
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent_pid:  # the parent died before prctl took effect
        os._exit(1)


def _process_worker(
    conn: Any, tasks: Sequence[int], run: Callable, parent_pid: int | None = None
) -> None:
    """A forked fold worker: solve its folds on every chunk of λ it receives.

    It receives an array of λ (None: exit) and answers ``("ok", scores per task,
    warnings)`` or ``("err", exception)``. Ctrl-C is the parent's to handle: the parent
    kills its workers, and the worker dies with its parent whatever the parent's exit.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if parent_pid is not None:
        _die_with_parent(parent_pid)
    from . import _gram

    # the workers already fill the cores: the Gram kernels of a fold run on one thread
    _gram.DEFAULT_THREADS = 1
    while True:
        try:
            lams = conn.recv()
        except (EOFError, OSError):
            return
        if lams is None:
            return
        try:
            with warnings.catch_warnings(record=True) as caught:
                out = [run(k, lams) for k in tasks]
            msg = ("ok", out, [(str(w.message), w.category) for w in caught])
        except BaseException as exc:  # noqa: BLE001 - handed to the parent
            msg = ("err", exc)
        try:
            try:
                conn.send(msg)
            except OSError:  # the parent is gone
                return
            except Exception:  # an exception that does not pickle: its text
                exc = msg[1]
                conn.send(("err", RuntimeError(f"{type(exc).__name__}: {exc}")))
        except OSError:
            return
        if msg[0] == "err":
            return


class _ProcessFolds:
    """Forked worker processes, each holding a fixed set of folds for the whole walk.

    Fold k goes to worker k mod ``workers``; a worker keeps the problems it prepared
    (with ``keep``), so only λ values and scores cross the pipes. The parent polls the
    pipes with a timeout so that Ctrl-C reaches it at once, and kills the workers on any
    error.
    """

    def __init__(self, workers: int, tasks: Sequence[int], run: Callable) -> None:
        ctx = multiprocessing.get_context("fork")
        self.parts = [list(tasks[i::workers]) for i in range(workers)]
        self.conns: list[Any] = []
        self.procs: list[Any] = []
        try:
            for i, part in enumerate(self.parts):
                parent, child = ctx.Pipe()
                proc = ctx.Process(
                    target=_process_worker, args=(child, part, run, os.getpid()),
                    name=f"binarsity-fold-{i}", daemon=True,
                )  # fmt: skip
                with warnings.catch_warnings():
                    # Python >= 3.12 warns when a multi-threaded process forks; the
                    # workers only run the solver and their pipe, no other thread's locks
                    warnings.simplefilter("ignore", DeprecationWarning)
                    proc.start()
                child.close()
                self.conns.append(parent)
                self.procs.append(proc)
        except BaseException:
            self.kill()
            raise

    def send(self, lams: np.ndarray) -> None:
        for conn in self.conns:
            conn.send(lams)

    def gather(self) -> dict[int, list[float]]:
        out: dict[int, list[float]] = {}
        for part, conn, proc in zip(self.parts, self.conns, self.procs, strict=True):
            # a timed wait, so that a signal reaches the main thread promptly
            while not conn.poll(0.2):
                if not proc.is_alive() and not conn.poll(0):
                    raise RuntimeError(
                        f"a cross-validation worker process died (exit code {proc.exitcode})."
                    )
            try:
                msg = conn.recv()
            except EOFError:
                raise RuntimeError("a cross-validation worker process died.") from None
            if msg[0] == "err":
                raise msg[1]
            for message, category in msg[2]:
                warnings.warn(message, category, stacklevel=4)
            out.update(zip(part, msg[1], strict=True))
        return out

    def close(self) -> None:
        for conn in self.conns:
            try:
                conn.send(None)
            except OSError:
                pass
        for proc in self.procs:
            proc.join(timeout=1.0)
        self.kill()

    def kill(self) -> None:
        for proc in self.procs:
            if proc.is_alive():
                proc.kill()
        for proc in self.procs:
            proc.join(timeout=1.0)
        for conn in self.conns:
            conn.close()
        self.procs, self.conns = [], []


@dataclass
class CVPath:
    """What :func:`cross_validate` returns.

    Attributes
    ----------
    lams : ndarray of shape (m,)
        The λ values evaluated (the grid, cut where the walk stopped, or extended
        below its end: see ``extended``).
    fold_scores : ndarray of shape (K, m)
        Held-out score of every fold at every λ.
    fold_ids : ndarray of shape (n,) or None
        Fold of every row (see :class:`Folds`).
    grid_size : int
        Length of the grid requested (more than m when the walk stopped early).
    path : list of Solution or None
        Fits on all rows along ``lams`` (None when not asked for).
    mean, se : ndarray of shape (m,)
        Mean score over folds and its standard error.
    idx_min, idx_1se : int
        Positions of ``lam_min`` and ``lam_1se`` in ``lams``.
    folds : Folds or None
        The splits.
    extended : int
        λ values added below the grid's end (``extend``) because the best λ was the
        last one evaluated.
    """

    lams: np.ndarray
    fold_scores: np.ndarray
    fold_ids: np.ndarray | None
    grid_size: int
    path: list | None
    mean: np.ndarray
    se: np.ndarray
    idx_min: int
    idx_1se: int
    folds: Folds | None = None
    extended: int = 0

    @property
    def lam_min(self) -> float:
        """λ with the best mean score."""
        return float(self.lams[self.idx_min])

    @property
    def lam_1se(self) -> float:
        """Largest λ whose mean score is within one standard error of the best."""
        return float(self.lams[self.idx_1se])


def best_is_last(fold_scores: np.ndarray, sign: float) -> bool:
    """Whether the best mean score is at the last λ evaluated (the grid may end too soon).

    Parameters
    ----------
    fold_scores : ndarray of shape (K, m)
        Scores of the first m λ values.
    sign : float
        1 when lower scores are better, −1 when higher are (AUC).

    Returns
    -------
    bool
        True when the last column has the best finite mean.
    """
    mean, _ = cv_mean_se(fold_scores)
    loss = sign * mean
    if not np.any(np.isfinite(loss)):
        return False
    return best_position(loss) == loss.shape[0] - 1


def best_position(loss: np.ndarray) -> int:
    """Position of the best (smallest) loss on a decreasing grid, ties to the largest λ.

    Parameters
    ----------
    loss : ndarray of shape (m,)
        CV means, lower is better (NaN: undefined); at least one finite.

    Returns
    -------
    int
        The smallest position whose loss is within ``CV_TIE_RTOL`` (relative) of the
        minimum.
    """
    loss = np.asarray(loss, dtype=np.float64)
    best = loss[int(np.nanargmin(loss))]
    return int(np.flatnonzero(loss <= best + CV_TIE_RTOL * abs(best))[0])


def cross_validate(
    data: PathData,
    grid: np.ndarray,
    folds: Any,
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
    extend: int = 0,
    backend: str = "auto",
) -> CVPath:
    """Cross-validation of a λ grid: the folds walk down it in lockstep.

    Every fold solves the grid from its own warm starts; after each λ the held-out rows
    are scored. With ``early_stopping`` the walk stops once the last ``patience`` mean
    scores are all outside the one-standard-error band of the best so far
    (:func:`curve_turned`); then the fits on all rows (``refit_path``) cover the
    evaluated grid. When the grid is exhausted and its last λ has the best mean score
    (:func:`best_is_last`), up to ``extend`` more values continue it downwards at the
    grid's own ratio, ``patience`` at a time, until the best λ is no longer the last.

    Parameters
    ----------
    data : PathData
        All rows.
    grid : ndarray of shape (m,)
        λ values, decreasing (from all rows).
    folds : Folds or ndarray of shape (n,)
        The splits (:func:`resolve_folds`), or a fold-id array of values 0..K−1
        (:func:`fold_ids`, :func:`group_fold_ids`).
    scoring : {"deviance", "mse", "auc", "concordance"}, default="deviance"
        Held-out criterion (AUC is maximised, the others minimised).
    opts : dict, optional
        ``solver``, ``tol``, ``max_iter`` of the fits on all rows.
    fold_opts : dict, optional
        The same for the fold fits (default: ``opts``).
    n_jobs : int, default=1
        Fold workers (results do not depend on it). The path on all rows is walked
        alongside, in the calling process (or as one more task of the threads).
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
    extend : int, default=0
        At most this many λ values added below the grid's end (0: never).
    backend : {"auto", "processes", "threads"}, default="auto"
        How ``n_jobs > 1`` workers run (see the module docstring): forked processes
        where available (``"auto"``), else threads. Results do not depend on it.

    Returns
    -------
    CVPath
        Scores, the evaluated grid, the choice of λ and the path on all rows.
    """
    opts = {} if opts is None else dict(opts)
    fold_opts = opts if fold_opts is None else dict(fold_opts)
    prepare = data.prepare if prepare is None else prepare
    mode = resolve_backend(backend, int(n_jobs))
    if not isinstance(folds, Folds):
        folds = Folds.from_fold_ids(folds)
    n_folds = folds.n_folds
    sign = -1.0 if scoring in HIGHER_IS_BETTER else 1.0  # lower sign * score is better
    rows = [train for train, _ in folds.splits]
    held_out = [data.held_out(test) for _, test in folds.splits]
    if keep is None:
        keep = sum(data.fold_bytes(len(r)) for r in rows) <= KEEP_BYTES
    chunk = 1 if keep else int(patience)
    # task k < K is fold k; task K (with refit_path) the path on all rows, walked with
    # the folds instead of after them (its warm starts are its own: the same fits)
    full = n_folds if refit_path else None
    prepared: list[Any] = [None] * (n_folds + 1)
    warm: list[Any] = [None] * (n_folds + 1)
    path_sols: list[Any] = []
    stop = threading.Event()

    def run_chunk(k: int, lams: np.ndarray, tick: Callable[[], None] | None = None) -> list:
        if stop.is_set():
            return []
        if k == full:
            if prepared[k] is None:  # kept: the full problem is solved once per λ anyway
                prepared[k] = prepare(None)
            path_sols.extend(solve_path(prepared[k], lams, opts, tick, warm_start=warm[k]))
            warm[k] = path_sols[-1] if path_sols else warm[k]
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

    grid_size = len(grid)
    grid = np.asarray(grid, dtype=np.float64)
    # the grid's own log step continues it (a single value or a zero end cannot)
    ratio = grid[-1] / grid[-2] if grid_size >= 2 and grid[-1] > 0 else 0.0
    extend = int(extend) if 0 < ratio < 1 else 0
    extended = 0
    columns: list[np.ndarray] = []
    workers = min(int(n_jobs), n_folds)
    tasks = list(range(n_folds)) + ([full] if full is not None else [])
    pool: Any = None
    if mode == "threads":
        pool = _FoldPool(min(int(n_jobs), len(tasks)))
    elif mode == "processes":
        pool = _ProcessFolds(workers, range(n_folds), run_chunk)

    def run_block(lams: np.ndarray) -> list:
        if mode == "threads":
            return pool.map(lambda k, lams=lams: run_chunk(k, lams, tick), tasks)[:n_folds]
        if mode == "serial":
            return [run_chunk(k, lams, tick) for k in tasks][:n_folds]
        pool.send(lams)  # the workers solve the folds while this process walks the path
        if full is not None:
            run_chunk(full, lams, tick)
        scores = pool.gather()
        if tick is not None:
            for _ in range(sum(len(v) for v in scores.values())):
                tick()
        return [scores[k] for k in range(n_folds)]

    try:
        first = 0
        while True:
            if first >= len(grid):
                if extended >= extend or not best_is_last(np.column_stack(columns), sign):
                    break
                more = min(int(patience), extend - extended)
                grid = np.concatenate([grid, grid[-1] * ratio ** np.arange(1, more + 1)])
                extended += more
            lams = grid[first : first + chunk]
            first += len(lams)
            block = np.asarray(run_block(lams), dtype=np.float64).reshape(n_folds, len(lams))
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
        if mode == "processes":
            pool.kill()
            pool = None
        raise
    finally:
        if pool is not None:
            pool.close()
    lams = np.asarray(grid[: len(columns)], dtype=np.float64)
    extended = max(0, len(lams) - grid_size)
    scores = np.column_stack(columns)
    path = path_sols[: len(lams)] if refit_path else None
    mean, se, idx_min, idx_1se = select_lambda(scores, scoring)
    return CVPath(lams, scores, folds.fold_ids, grid_size, path, mean, se, idx_min, idx_1se,
                  folds=folds, extended=extended)  # fmt: skip


def grid_end_message(
    cv: CVPath, scoring: str, *, user_grid: bool, lambda_max: Callable[[], float]
) -> str | None:
    """A warning when the best λ sits at an end of the grid that could have gone further.

    * the smallest λ evaluated is the best (the CV curve was still improving): after
      the automatic extension of a default grid, or with an explicit grid;
    * with an explicit grid, its largest λ is the best and lies below λ_max (larger λ —
      simpler fits — were not tried). A default grid starts at λ_max, where every
      chain is already flat: its top end is never too low.

    Parameters
    ----------
    cv : CVPath
        The result of :func:`cross_validate`.
    scoring : str
        The criterion (for the message).
    user_grid : bool
        Whether the grid was given explicitly (``lams``).
    lambda_max : callable
        Returns λ_max (called only when needed).

    Returns
    -------
    str or None
        The message naming the fix, or None.
    """
    m = len(cv.lams)
    if m < 2:
        return None
    if cv.idx_min == m - 1 and cv.lams[-1] > 0:
        where = (f"after extending the grid by {cv.extended} values" if cv.extended
                 else "the end of the grid")  # fmt: skip
        if user_grid:
            fix = "pass lams reaching further down (or lams=None: the default grid extends itself)"
        else:
            fix = ("pass a smaller lam_min_ratio or lams reaching further down; a CV that "
                   "prefers the least penalised fit may also want finer bins (n_bins)")  # fmt: skip
        return (
            f"lam_min = {cv.lams[-1]:.4g} is the smallest λ evaluated ({where}): the CV "
            f"{scoring} was still improving there, so a smaller λ may be better; {fix}."
        )
    if cv.idx_min == 0 and user_grid:
        lmax = float(lambda_max())
        if cv.lams[0] < lmax * (1 - 1e-9):
            return (
                f"lam_min = {cv.lams[0]:.4g} is the largest λ of lams, below λ_max = "
                f"{lmax:.4g}: larger λ (simpler fits) were not tried; add values up to "
                "λ_max (or pass lams=None for the default grid, which starts there)."
            )
    return None


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
    scoring : {"deviance", "mse", "auc", "concordance"}
        AUC is maximised, the others minimised.

    Returns
    -------
    mean, se : ndarray of shape (m,)
        From :func:`cv_mean_se`.
    idx_min : int
        Position of the best mean (of the largest λ among means equal to the best up
        to ``CV_TIE_RTOL``: :func:`best_position`).
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
            "fold needs both classes, for 'concordance' a comparable pair); use fewer "
            "folds or scoring='deviance'."
        )
    mean, se = cv_mean_se(fold_scores)
    sign = -1.0 if scoring in HIGHER_IS_BETTER else 1.0  # minimise sign * score
    loss = sign * mean
    idx_min = best_position(loss)
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
    best = best_position(loss)
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
    scoring : {"deviance", "mse", "auc", "concordance"}
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
    W = float(sw.sum())
    if scoring == "mse":
        mu = family.mean(eta)
        return float(np.sum(sw * (y - mu) ** 2) / W)
    # from η, not from μ = g⁻¹(η): exact however large |η| is
    return family.deviance_eta(y, eta, sw) / W
