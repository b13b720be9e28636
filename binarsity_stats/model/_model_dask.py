"""The Dask twins of ``BinarsityModel``'s construction and fits.

``ModelDask`` is a base class of :class:`~binarsity_stats.model._model.BinarsityModel`:
the design of a Dask DataFrame (mergeable binning, codes kept per partition on the
workers, the partitions also gathered for the statistics of the results) and
``fit``, ``fit_path`` and ``fit_cv`` with ``solver="dask"`` (the distributed solver of
``distributed/_dask_solve``, from per-partition statistics).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core._validation import check_cv_tol, check_lam, check_max_iter, check_tol
from ..engine._solvers import check_solver_options
from ..penalty._penalty import theory_lambda_fit
from ._path_results import CVResults, PathResults
from ._results import BinarsityResults

__all__ = ["ModelDask"]


class ModelDask:
    """``glm()`` on a Dask DataFrame and the fits of its distributed solver.

    A base class of :class:`~binarsity_stats.model._model.BinarsityModel`: these are
    the ``solver="dask"`` branches of its ``fit``, ``fit_path`` and ``fit_cv``.
    """

    def _from_dask(self, formula, data, sample_weight, offset, n_bins, missing, client=None):
        """The design of a Dask DataFrame: mergeable binning, codes per partition
        (``_dask_model``); the partitions are also concatenated here, so that every
        statistic of the results is computed as for in-memory data."""
        from ..distributed._dask_model import (
            collect_design,
            dask_formula_design,
            resolve_client,
            scheduler,
        )

        self.dask_client = client = resolve_client(client)
        with scheduler(client):
            built = dask_formula_design(
                formula, data, family=self.family, sample_weight=sample_weight, offset=offset,
                n_bins=n_bins, missing=missing,
            )  # fmt: skip
            # coded once, kept in the workers' memory: the solver's passes read the codes
            built.design = built.design.persist(client)
            design, y, sw, off_arg = collect_design(built)
        self.n_rows_data = y.shape[0]
        self.rows_kept = None
        self.weight_column, self.offset_column = built.weight_column, built.offset_column
        self.dask_design = built.design
        self.dask_binning = built.exact
        return built.spec, design, y, built.response, sw, off_arg

    def _check_dask_design(self) -> None:
        """``solver="dask"`` needs the design of a Dask DataFrame."""
        if self.dask_design is None:
            raise ValueError(
                'solver="dask" needs a model specified on a Dask DataFrame (glm(formula, '
                "dask_frame)); this one was given in-memory data."
            )

    def _fit_dask(self, lam: Any, tol: Any, max_iter: Any, warm_start: Any) -> BinarsityResults:
        """``fit(solver="dask")``: the distributed solver on ``dask_design``."""
        self._check_dask_design()
        from ..distributed._dask_solve import fit_dask

        tol = check_tol(tol)
        max_iter = min(check_max_iter(max_iter), 50)
        if not isinstance(lam, str):
            lam = check_lam(lam)
        elif lam != "theory":
            raise ValueError(f"lam must be a non-negative number or 'theory'; got {lam!r}.")

        def solve(value: float, start: Any) -> Any:
            return fit_dask(
                self.dask_design, self.family, value, penalty_weights=self.penalty_weights,
                fit_intercept=self.solver_intercept, tol=tol, max_iter=max_iter,
                warm_start=start, client=self.__dict__.get("dask_client"),
            )  # fmt: skip

        if lam != "theory":
            return BinarsityResults(self, solve(lam, warm_start), "user (dask)")
        sol, _, phi = theory_lambda_fit(
            solve, lambda phi: self.lambda_theory(phi=phi),
            (lambda s: self._dispersion_of(s, recompute_eta=True))
            if self.family.estimate_dispersion else None,
            warm_start,
        )  # fmt: skip
        how = "theory (dask)" if phi is None else (
            f"theory (dask; {self.family.dispersion_name} estimated: {phi:.4g})"
        )  # fmt: skip
        return BinarsityResults(self, sol, how)

    def _fit_path_dask(self, grid: np.ndarray, tol: Any, max_iter: Any) -> PathResults:
        """``fit_path(solver="dask")``: a warm-started path from per-partition statistics.

        One :class:`~binarsity_stats.distributed._dask_solve.DaskProblem` (one first pass) serves the
        whole grid; every λ starts from the previous solution and its statistics (a
        gaussian path: one pass of statistics for every λ).
        """
        self._check_dask_design()
        from ..distributed._dask_solve import DaskProblem, fit_path_dask

        prob = DaskProblem(
            self.dask_design, self.family, self.penalty_weights, self.solver_intercept,
            client=self.__dict__.get("dask_client"),
        )  # fmt: skip
        path = fit_path_dask(prob, grid, tol=check_tol(tol),
                             max_iter=min(check_max_iter(max_iter), 50))  # fmt: skip
        order = np.argsort(-np.asarray(grid, dtype=float), kind="stable")
        sols = [None] * len(grid)
        for i, sol in zip(order, path.solutions, strict=True):
            sols[i] = sol
        return PathResults(self, grid, sols)

    def _fit_cv_dask(self, folds, scoring, grid, tol, max_iter, cv_tol, **other) -> CVResults:
        """``fit_cv(solver="dask")``: fold paths and the path on all rows on Dask.

        One :class:`~binarsity_stats.distributed._dask_solve.DaskProblem` (one first pass, which also
        counts every fold) serves the K fold paths and the path on all rows. The folds are
        the engine's: a hash of (partition, row), reproducible, given back as ``fold_ids``
        (in the model's row order). The held-out mean loss of a fold becomes its mean
        deviance, 2 (loss − saturated loss) / W_fold, the in-memory ``fit_cv``'s score.
        The whole grid is evaluated (no early stopping or extension).
        """
        self._check_dask_design()
        if isinstance(folds, (bool, np.bool_)) or not isinstance(folds, (int, np.integer)):
            raise TypeError(
                'folds: fit_cv(solver="dask") takes an integer number of folds K (the '
                "engine hashes every row of every partition to a fold); fold-id arrays, "
                f"columns, splitters and (train, test) pairs are in-memory only; got {folds!r}."
            )
        if scoring != "deviance":
            raise ValueError(
                f'scoring={scoring!r}: fit_cv(solver="dask") scores the held-out deviance '
                "only (scoring='deviance')."
            )
        if other.get("groups") is not None:
            raise ValueError('groups: not supported by fit_cv(solver="dask").')
        if other.get("relax") not in (None, False):
            raise ValueError('relax: not supported by fit_cv(solver="dask").')
        K = int(folds)
        if K < 2:
            raise ValueError(f"folds must be an integer >= 2; got {K}.")
        from ..distributed._dask_solve import DaskProblem, fit_cv_dask, fit_path_dask

        tol = check_tol(tol)
        max_iter = min(check_max_iter(max_iter), 50)
        fold_tol = tol if cv_tol is None else float(check_cv_tol(cv_tol))
        client = self.__dict__.get("dask_client")
        prob = DaskProblem(
            self.dask_design, self.family, self.penalty_weights, self.solver_intercept,
            client=client, folds=K,
        )  # fmt: skip
        fold_ids = _dask_fold_ids(prob, K)
        if fold_ids.shape != self.y.shape:  # pragma: no cover - the gathered rows differ
            raise RuntimeError("the Dask partitions do not match the model's rows.")
        cv = fit_cv_dask(prob, grid, tol=fold_tol, max_iter=max_iter)
        # the engine's score is the held-out mean loss Σ s ℓ / Σ s; the model's, the mean
        # deviance: 2 (Σ s ℓ − Σ s ℓ_saturated) / Σ s, the saturated loss read on each
        # fold's rows (loss − deviance / 2 at any η: a function of y only)
        sw = self.sample_weight
        sw = np.ones(self.nobs) if sw is None else np.asarray(sw, dtype=np.float64)
        eta = np.full(self.nobs, prob.start_intercept())
        fam = self.family
        scores = np.empty_like(cv.cv_loss)
        for k in range(K):
            rows = fold_ids == k
            w, yk, ek = sw[rows], self.y[rows], eta[rows]
            W = float(w.sum())
            saturated = (fam.loss_sum(ek, yk, w) - 0.5 * fam.deviance(yk, fam.mean(ek), w)) / W
            scores[k] = 2.0 * (cv.cv_loss[k] - saturated)
        path = fit_path_dask(prob, grid, tol=tol, max_iter=max_iter)
        lams = np.asarray(cv.lambdas, dtype=np.float64)  # decreasing, as path.solutions
        sols = list(path.solutions)
        rule = {
            "folds": K, "scoring": scoring, "lams": grid, "cv_tol": cv_tol,
            "early_stopping": False, "patience": None, "groups": None, "extend": 0,
            "splits": None, "solver": "dask",
        }  # fmt: skip
        return CVResults(
            self, lams, scores, scoring, fold_ids, sols, len(grid), rule=rule,
            opts=check_solver_options("cd", tol, check_max_iter(max_iter), "auto"),
        )  # fmt: skip


def _dask_fold_ids(prob: Any, K: int) -> np.ndarray:
    """The engine's fold of every row, in the order the model gathered the partitions."""
    import dask

    from ..distributed._dask_solve import fold_of

    tasks = [dask.delayed(fold_of, pure=True)(part, i, K)
             for i, part in enumerate(prob.partitions)]  # fmt: skip
    from ..distributed._dask import compute

    parts = compute(*tasks, client=prob.client, what="the folds of the rows")
    return np.concatenate([np.asarray(f, dtype=np.int64) for f in parts])
