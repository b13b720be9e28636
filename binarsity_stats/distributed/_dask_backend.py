"""The Dask solver as a backend of the shared fit, path and CV (issue 23).

:class:`DaskPathData` is the Dask backend's *path data*: the object that
``BinarsityModel.fit``, ``fit_path`` and ``fit_cv`` (through ``engine/_path.solve_path``
and ``engine/_cv.cross_validate``) ask for ``lambda_max()``, ``prepare(rows)`` /
``prepare_fold(rows)`` (a problem with ``solve(lam, warm_start=..., tol=...,
max_iter=...)``), ``held_out(rows)``, ``score(solution, held_out, scoring)`` and
``fold_bytes(n)`` — the members the in-memory ``engine/_path.PathData`` has. So the λ
grid and its extension, the lockstep walk of the folds, early stopping and the
one-standard-error rule are the in-memory ones; only the solves and the held-out scores
are computed on the cluster, from the per-partition statistics of
``_dask_problem.DaskProblem`` (design.md §9).

What the backend supports is declared in :data:`CAPABILITIES` and refused by
``engine/_backend.check_supported`` before any work.

Folds. The CV's folds are the shared ones (``engine/_folds.resolve_folds``: stratified
on y for binomial, whole groups, or the user's fold ids), given as one fold id per row;
:meth:`DaskPathData.with_folds` ships them once to the workers (a ``fold`` column kept
next to each partition's codes), and one :class:`DaskProblem` whose first pass counts
every fold serves the K folds and the path on all rows. A fold of the walk is named by
its rows (``Folds.splits``): the held-out rows of fold k, the training rows the others.

Passes. Every solve starts from the previous solution of the same fold and its
statistics (no pass for them) or, first, from the fold's null fit (its λ_max's); a
gaussian CV computes every fold's statistics in one pass (G_train = G − G_fold)
and then needs no other: the held-out loss of a gaussian fit is read from its fold's
statistics (a quadratic).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._dask_partition import _n_rows, _saturated, _with_fold
from ._dask_problem import CAPABILITIES, DaskProblem, _delayed

__all__ = ["CAPABILITIES", "MAX_NEWTON_STEPS", "DaskPathData", "DaskPrepared"]

#: Newton steps at most per solve (each is one pass over the data): a ``max_iter``
#: larger than this (the in-memory solvers' default is 1000 sweeps) is capped.
MAX_NEWTON_STEPS = 50


class DaskPathData:
    """The data of a path and its folds on Dask (see the module docstring).

    Parameters
    ----------
    design : object
        ``block_ptr``, ``kinds``, ``n_dense``, ``partitions`` (``DaskDesign``).
    family : Family
        A row-separable family.
    penalty_weights : ndarray of shape (d,) or str
        ω (those of all rows, in every fold).
    fit_intercept : bool
        Whether β0 is fitted.
    client : distributed.Client, optional
        Where to compute (default: dask's current scheduler).
    fold_ids : ndarray of shape (n,), optional
        Fold of every row, in the order of the partitions' rows (see
        :meth:`with_folds`).
    worker_folds : WorkerFolds, optional
        Folds whose ids each partition computed itself (a model whose rows stay on the
        workers; ``_dask_folds``): the CV walk names their rows by ``FoldRows``.
    """

    capabilities = CAPABILITIES

    def __init__(self, design: Any, family: Any, penalty_weights: Any, fit_intercept: bool,
                 client: Any = None, fold_ids: np.ndarray | None = None,
                 worker_folds: Any = None) -> None:  # fmt: skip
        self.design = design
        self.family = family
        self.penalty_weights = penalty_weights
        self.fit_intercept = bool(fit_intercept)
        self.client = client
        self.fold_ids = fold_ids
        #: folds whose ids were computed on the workers (``_dask_folds.WorkerFolds``)
        self.worker_folds = worker_folds
        if worker_folds is not None:
            self.K = int(worker_folds.n_folds)
        else:
            self.K = 0 if fold_ids is None else int(fold_ids.max()) + 1
        self._problem: Any = None
        self._fold_stats: Any = None
        self._saturated: np.ndarray | None = None

    # -- the problem -----------------------------------------------------------------
    @property
    def problem(self) -> Any:
        """The :class:`~binarsity_stats.distributed._dask_problem.DaskProblem` (its first
        pass is run on first use)."""
        if self._problem is None:
            self._problem = DaskProblem(
                self.design, self.family, self.penalty_weights, self.fit_intercept,
                client=self.client, folds=self.K,
            )  # fmt: skip
        return self._problem

    def with_folds(self, fold_ids: Any) -> DaskPathData:
        """The same data with a CV's folds: one fold id per row, kept on the workers.

        Parameters
        ----------
        fold_ids : ndarray of shape (n,) or WorkerFolds
            Values 0..K−1, in the order of the partitions' rows (shipped from the
            client); or the folds of a model whose rows stay on the workers
            (``_dask_folds.WorkerFolds``), whose ids each partition computes itself.

        Returns
        -------
        DaskPathData
            A new object (its own first pass counts every fold).
        """
        import dask

        from ._dask import compute

        if getattr(fold_ids, "on_workers", False):
            return self._with_worker_folds(fold_ids)
        fold_ids = np.asarray(fold_ids, dtype=np.int64)
        parts = list(self.design.partitions)
        sizes = getattr(self.design, "partition_rows", None)
        if sizes is None or len(sizes) != len(parts):
            sizes = compute(*[dask.delayed(_n_rows, pure=True)(p) for p in parts],
                            client=self.client, what="the rows of the partitions")  # fmt: skip
        ends = np.cumsum([0, *sizes])
        if ends[-1] != fold_ids.shape[0]:
            raise ValueError(
                f"fold ids: {fold_ids.shape[0]} values for the {ends[-1]} rows of the "
                "Dask design."
            )
        parts = [
            dask.delayed(_with_fold, pure=True)(p, fold_ids[a:b])
            for p, a, b in zip(parts, ends[:-1], ends[1:], strict=True)
        ]
        return self._on_fold_partitions(parts, fold_ids)

    def _with_worker_folds(self, folds: Any) -> DaskPathData:
        """:meth:`with_folds` of folds computed on the workers (nothing of size n sent)."""
        import dask

        from ._dask_folds import with_worker_fold

        if folds.plans is None or len(folds.plans) != len(self.design.partitions):
            raise ValueError(
                "these folds were computed for other partitions (or saved without them); "
                "compute them again on this model (fit_cv(folds=...))."
            )
        task = dask.delayed(with_worker_fold, pure=True)
        parts = [task(p, i, plan) for i, (p, plan)
                 in enumerate(zip(self.design.partitions, folds.plans, strict=True))]  # fmt: skip
        return self._on_fold_partitions(parts, worker_folds=folds)

    def _on_fold_partitions(self, parts: list, *fold_args: Any, **fold_kwargs: Any) -> DaskPathData:
        """This problem on partitions that carry their fold ids (``with_folds``): persisted,
        so that the passes read them and the fold ids are shipped once."""
        import dask

        if self.client is not None:
            parts = self.client.persist(parts)
        else:
            parts = list(dask.persist(*parts))
        design = _DesignView(self.design, parts)
        return type(self)(design, self.family, self.penalty_weights, self.fit_intercept,
                          self.client, *fold_args, **fold_kwargs)  # fmt: skip

    @property
    def n_passes(self) -> int:
        """Passes over the data so far (0 before the first)."""
        return 0 if self._problem is None else int(self._problem.n_passes)

    # -- what the shared path and CV ask -------------------------------------------------
    def lambda_max(self) -> float:
        """λ_max on all rows (design.md §2), from the statistics of the null fit.

        Returns
        -------
        float
        """
        return float(self.problem.lambda_max())

    def prepare(self, rows: Any = None) -> DaskPrepared:
        """The problem on all rows (None) or on the training rows of one fold.

        Parameters
        ----------
        rows : ndarray of int, optional
            The training rows of a fold of :attr:`fold_ids` (every row of the other
            folds), or None.

        Returns
        -------
        DaskPrepared
        """
        return DaskPrepared(self, -1 if rows is None else self._fold(rows, held_out=False))

    prepare_fold = prepare

    def held_out(self, rows: Any) -> int:
        """The fold whose held-out rows are ``rows`` (its index).

        Parameters
        ----------
        rows : ndarray of int
            Every row of one fold.

        Returns
        -------
        int
        """
        return self._fold(rows, held_out=True)

    def score(self, solution: Any, held_out: int, scoring: str) -> float:
        """The held-out mean deviance of fold ``held_out`` at ``solution``.

        2 (Σ s ℓ − Σ s ℓ_saturated) / Σ s over the fold's rows, from the held-out loss
        of the fold's statistics at the solution: the in-memory ``PathData.score``.

        Parameters
        ----------
        solution : DaskSolution
            A solve of :meth:`prepare` on the fold's training rows.
        held_out : int
            The fold (:meth:`held_out`).
        scoring : str
            ``"deviance"`` (the backend's only score, see :data:`CAPABILITIES`).

        Returns
        -------
        float
        """
        if scoring != "deviance":  # pragma: no cover - refused by check_supported first
            raise ValueError(f"the dask backend scores the deviance only; got {scoring!r}.")
        k = int(held_out)
        prob = self.problem
        W = float(prob.fold_W[k])
        if W <= 0:
            return float("nan")
        if getattr(self.family, "quadratic", False):
            x = solution._x
            per, x0 = self.fold_statistics()
            dx = np.concatenate([x[0] - x0[0], x[1] - x0[1]])
            test = per["loss"][k] + per["g"][k] @ dx + 0.5 * dx @ per["M"][k] @ dx
        else:
            test = solution._stats["test_loss"]
        return 2.0 * (float(test) / W - float(self.saturated()[k]))

    def fold_bytes(self, n_rows: int) -> int:
        """Client memory of a kept fold problem: its Gram and statistics, O(d²).

        Parameters
        ----------
        n_rows : int
            The fold's training rows (unused: nothing of size n is on the client).

        Returns
        -------
        int
        """
        D = int(self.design.block_ptr[-1]) + int(getattr(self.design, "n_dense", 0) or 0) + 1
        return 3 * 8 * D * D

    # -- the folds' statistics -----------------------------------------------------------
    def fold_statistics(self) -> tuple[dict, tuple]:
        """Every fold's statistics at the cold start, from one pass (cached).

        Returns
        -------
        per : dict
            ``loss`` (K,), ``g`` (K, D), ``M`` (K, D, D) of each fold's rows.
        x0 : tuple
            The internal point (θ, free) they were computed at.
        """
        if self._fold_stats is None:
            prob = self.problem
            x0 = prob._start(None, None)
            self._fold_stats = (prob.stats(x0, fold=-2), x0)
        return self._fold_stats

    def saturated(self) -> np.ndarray:
        """The saturated loss per unit weight of every fold's rows (one pass, cached).

        Returns
        -------
        ndarray of shape (K,)
        """
        if self._saturated is None:
            prob = self.problem
            eta0 = prob.start_intercept()
            tasks = [_delayed(_saturated)(part, prob.setup, i, eta0)
                     for i, part in enumerate(prob.partitions)]  # fmt: skip
            self._saturated = prob._run(tasks)["sat"] / prob.fold_W
        return self._saturated

    def _fold(self, rows: Any, held_out: bool) -> int:
        """The fold k whose held-out rows (or training rows) are ``rows``."""
        if self.worker_folds is not None:  # the CV walk's tokens for the folds' rows
            from ._dask_folds import FoldRows

            if not isinstance(rows, FoldRows) or rows.train == held_out:
                raise ValueError(
                    "folds on the workers are named by their FoldRows (Folds.splits), "
                    "one fold held out and every other row trained on."
                )
            return rows.fold
        if self.fold_ids is None:
            raise ValueError("these Dask data have no folds (DaskPathData.with_folds).")
        rows = np.asarray(rows, dtype=np.intp)
        ids = self.fold_ids[rows]
        sizes = np.bincount(self.fold_ids, minlength=self.K)
        if held_out:
            k = int(ids[0]) if ids.size else -1
            ok = ids.size and np.all(ids == k) and rows.size == sizes[k]
        else:
            missing = np.flatnonzero(np.bincount(ids, minlength=self.K) == 0)
            k = int(missing[0]) if missing.size == 1 else -1
            ok = k >= 0 and rows.size == self.fold_ids.size - sizes[k]
        if not ok:
            raise ValueError(
                "the dask backend solves the folds of its fold ids only (one fold held "
                "out, every other row trained on)."
            )
        return k


class DaskPrepared:
    """A problem of :class:`DaskPathData` on all rows (``fold=-1``) or one fold's
    training rows, solved at one λ after another with warm starts.

    Parameters
    ----------
    data : DaskPathData
        The data.
    fold : int
        -1 (all rows) or the held-out fold.
    """

    def __init__(self, data: DaskPathData, fold: int) -> None:
        self.data = data
        self.fold = int(fold)
        self._last: Any = None

    def solve(self, lam: float, warm_start: Any = None, *, tol: float = 1e-7,
              max_iter: int = MAX_NEWTON_STEPS, **_: Any) -> Any:  # fmt: skip
        """The fit at λ (``DaskProblem.fit``), warm-started.

        A warm start equal to this problem's last solution (the walk's usual case,
        without its private statistics after ``strip_eta``) restarts from that
        solution's statistics: no pass for them.

        Parameters
        ----------
        lam : float
            λ.
        warm_start : Solution, optional
            Starting point.
        tol : float
            KKT tolerance.
        max_iter : int
            Newton steps at most (capped at :data:`MAX_NEWTON_STEPS`).
        **_
            The in-memory solvers' other options (``solver``, ``backend``): ignored.

        Returns
        -------
        DaskSolution
            With ``n_passes``: the passes over the data this solve caused (the
            problem's first pass and a null fit included when it ran them).
        """
        before = self.data.n_passes  # 0 before the problem's first pass
        data, prob, fold = self.data, self.data.problem, self.fold
        x0 = stats = None
        last = self._last
        if warm_start is not None and last is not None and _same_point(warm_start, last):
            x0, stats = last._x, last._stats
        elif warm_start is None:
            if getattr(self.data.family, "quadratic", False) and data.K >= 2:
                per, x0 = data.fold_statistics()
                total = {key: per[key].sum(axis=0) for key in ("loss", "g", "M")}
                stats = total if fold < 0 else {
                    key: total[key] - per[key][fold] for key in total
                }  # fmt: skip
            else:
                # a walk starts at the fold's null fit (the fit at its λ_max, which the
                # flat solutions of λ ≥ λ_max also read): computed once per fold
                if fold not in prob.__dict__.get("_nulls", {}):
                    prob.lambda_max(fold=fold)
                null = prob.__dict__.get("_nulls", {}).get(fold)
                if null is not None:
                    x0, stats = null[1]._x, null[1]._stats
        sol = prob.fit(
            float(lam), tol=tol, max_iter=min(int(max_iter), MAX_NEWTON_STEPS),
            warm_start=warm_start if x0 is None else None, fold=fold, stats=stats, x0=x0,
        )  # fmt: skip
        # every pass this solve caused: the first pass and the null fit included
        sol.n_passes = data.n_passes - before
        self._last = sol
        return sol


class _DesignView:
    """A Dask design with other partitions (the same blocks, kinds and dense columns)."""

    def __init__(self, design: Any, partitions: list) -> None:
        self.block_ptr = design.block_ptr
        self.kinds = getattr(design, "kinds", None)
        self.n_dense = getattr(design, "n_dense", 0)
        self.partitions = partitions
        self.partition_rows = getattr(design, "partition_rows", None)


def _same_point(a: Any, b: Any) -> bool:
    """Whether two solutions have the same coefficients (a stripped copy of ``b``)."""
    return (
        float(a.intercept) == float(b.intercept)
        and np.array_equal(np.asarray(a.coef), np.asarray(b.coef))
        and np.array_equal(np.asarray(a.dense_coef), np.asarray(b.dense_coef))
    )
