"""The model's construction on a Dask DataFrame and the choice of a solver backend.

``ModelDask`` is a base class of :class:`~binarsity_stats.model._model.BinarsityModel`:
the design of a Dask DataFrame (mergeable binning, codes kept per partition on the
workers; the partitions gathered for the statistics of the results, or with
``collect=False`` — by default above :data:`COLLECT_MAX_ROWS` rows — kept on the
workers, the results' statistics then computed from per-partition reductions,
``distributed/_dask_stats``), and
``_solver_data``: the path data of the backend a fit runs on (the in-memory engine, or
with ``solver="dask"`` the distributed solver's ``distributed/_dask_backend``), whose
unsupported requests are refused in one place (``engine/_backend``). ``fit``,
``fit_path`` and ``fit_cv`` have one code path for both.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core._validation import check_max_iter, check_tol
from ..engine._backend import FISTA, GRAM, check_supported, kind_feature
from ..engine._solvers import check_solver_options

__all__ = ["ModelDask", "COLLECT_MAX_ROWS", "RowsOnWorkersError", "WorkerDesign",
           "check_collect", "rows_error"]  # fmt: skip

#: ``collect="auto"``: a Dask DataFrame of more rows keeps them on the workers
COLLECT_MAX_ROWS = 1_000_000

#: the training-row attributes a model on the workers does not have
ROW_ATTRIBUTES = frozenset({"y", "sample_weight", "offset", "offset_arg", "_binned"})


class RowsOnWorkersError(ValueError):
    """A method needs the training rows in memory; the model keeps them on the workers."""


def rows_error(what: str, instead: str = "") -> RowsOnWorkersError:
    """The error of a method that needs rows a model on the workers does not hold.

    Parameters
    ----------
    what : str
        The method or attribute, as the user wrote it.
    instead : str, optional
        What the user can do instead (a sentence).

    Returns
    -------
    RowsOnWorkersError
    """
    return RowsOnWorkersError(
        f"{what} is not available: it needs the training rows in memory, and this model "
        "keeps them on the Dask workers (glm(formula, dask_frame, collect=False), the "
        f"default above {COLLECT_MAX_ROWS:,} rows); it is not computed from per-partition "
        "statistics yet. " + (instead + " " if instead else "")
        + "To gather the rows on the client, build the model with glm(..., collect=True)."
    )


def check_collect(collect: Any) -> bool | str:
    """``collect=``: True, False or "auto" (the error names the argument)."""
    if isinstance(collect, (bool, np.bool_)):
        return bool(collect)
    if isinstance(collect, str) and collect == "auto":
        return "auto"
    raise ValueError(f"collect must be True, False or 'auto'; got {collect!r}.")


class WorkerDesign:
    """The design of a model whose rows stay on the workers: its layout, no rows.

    Parameters
    ----------
    block_ptr : ndarray of shape (p + 1,)
        Offsets of the blocks in θ.
    n_dense : int
        Dense columns q.
    n_rows : int
        Training rows (on the workers).
    """

    #: read by the code that needs rows (and by the Dask predictor)
    on_workers = True

    def __init__(self, block_ptr: np.ndarray, n_dense: int, n_rows: int) -> None:
        self.block_ptr = np.asarray(block_ptr, dtype=np.int64)
        self.n_dense = int(n_dense)
        self.n_rows = int(n_rows)
        self.trials = self.survival = self.strata = None

    @property
    def codes(self) -> Any:
        """Refused: the codes are on the workers."""
        raise rows_error("the training codes (model.design.codes)")

    @property
    def dense(self) -> Any:
        """Refused: the dense columns are on the workers."""
        raise rows_error("the training dense columns (model.design.dense)")

    @property
    def offset(self) -> Any:
        """Refused: the offset is on the workers."""
        raise rows_error("the training offset (model.design.offset)")


class ModelDask:
    """``glm()`` on a Dask DataFrame and the solver backend of a fit.

    A base class of :class:`~binarsity_stats.model._model.BinarsityModel`.
    """

    #: on a model whose rows stay on the workers: their statistics (``_dask_stats``)
    dask_stats: Any = None

    @property
    def rows_on_workers(self) -> bool:
        """Whether the training rows stay on the Dask workers (``collect=False``)."""
        return self.__dict__.get("dask_stats") is not None

    def rows_refusal(self, what: str, instead: str = "") -> RowsOnWorkersError:
        """The error of ``what`` on this model, whose rows stay on the workers.

        Part of the fitted-model interface (a refit on the workers words its refusals by
        it; methods refuse through ``require``).

        Parameters
        ----------
        what : str
            What needs the rows, as the user would call it.
        instead : str, optional
            What the user can do instead (a sentence).

        Returns
        -------
        RowsOnWorkersError
            The error, to raise when the rows are asked for.
        """
        return rows_error(what, instead)

    def worker_null_fit(self, intercept: bool | None = None) -> tuple[float, float]:
        """The intercept and deviance of the null model of a model whose rows stay on the
        workers (``_dask_stats.null_fit``; computed once, kept with the model).

        Part of the fitted-model interface (the results' null deviance, ``lam="theory"``).

        Parameters
        ----------
        intercept : bool, optional
            Whether the null model has an intercept (default: the model's,
            ``fit_intercept``; ``lam="theory"`` asks with the engine's).

        Returns
        -------
        b0 : float
            The null model's intercept (0 without one).
        deviance : float
            Its deviance, in the weights' units.
        """
        intercept = self.fit_intercept if intercept is None else bool(intercept)
        cache = self.__dict__.setdefault("_worker_null", {})
        if intercept not in cache:
            from ..distributed._dask_stats import null_fit

            design = self.worker_design("the null model")
            cache[intercept] = null_fit(design, self.family, intercept, self.dask_stats,
                                        self.__dict__.get("dask_client"))  # fmt: skip
        return cache[intercept]

    def _worker_lambda_theory(self, phi: float | None, A: float) -> float:
        """``lambda_theory`` of a model whose rows stay on the workers: U_n and φ̂₀ from
        the reductions (the largest null curvature at the largest offset: a poisson's
        e^η increases with η; gaussian's φ̂₀ the weighted variance of y − offset)."""
        from ..penalty._penalty import lambda_theory

        stats, fam = self.dask_stats, self.family
        curvature = None
        if fam.curvature_bound() is None:
            b0 = self.worker_null_fit(self.solver_intercept)[0]
            curvature = float(fam.curvature(np.array([b0 + stats.offset_max]))[0])
        if phi is None:
            phi = stats.r_var if fam.estimate_dispersion else 1.0
        d = sum(b.n_levels for b in self.spec.blocks if b.penalized)
        return lambda_theory(fam, None, None, None, d, self.n_effective,
                             fit_intercept=self.solver_intercept, phi=phi, A=A,
                             curvature=curvature)  # fmt: skip

    def _worker_dispersion(self, sol: Any) -> float:
        """φ̂ of a fit of a model whose rows stay on the workers (the theory λ's second
        step): ``Family.dispersion`` — χ²/W · n_eff / max(n_eff − df, 1) — on the reduced
        Pearson χ² and total weight (``_dask_stats.fit_statistics``)."""
        from ..distributed._dask_stats import fit_statistics
        from ._results import degrees_of_freedom

        stats = self.dask_stats
        dof = degrees_of_freedom(self, sol.coef, len(sol.dense_coef))  # as _dispersion_of
        chi2 = fit_statistics(
            self.worker_design("the dispersion"), self.family, sol.coef, sol.dense_coef,
            float(sol.intercept), stats, None, self.__dict__.get("dask_client"),
        )["pearson"]  # fmt: skip
        n_eff = self.n_effective
        return chi2 / stats.sum_w * n_eff / max(n_eff - dof, 1.0)

    def worker_design(self, what: str) -> Any:
        """The Dask design of a model whose rows stay on the workers, for a reduction.

        Part of the fitted-model interface (the results' statistics call it).

        Parameters
        ----------
        what : str
            The statistic, for the message.

        Returns
        -------
        DaskDesign
            The persisted design (its partitions on the workers).

        Raises
        ------
        RowsOnWorkersError
            When the model was saved and loaded: its rows stayed with the cluster of the
            session that built it.
        """
        design = self.__dict__.get("dask_design")
        if design is None:
            raise RowsOnWorkersError(
                f"{what} is not available: this model's rows stayed on the Dask workers of "
                "the session that built it, and a saved model does not carry them (what "
                "was computed before saving is kept). Build the model again with "
                "glm(formula, dask_frame) on the cluster."
            )
        return design

    def _from_dask(self, formula, data, sample_weight, offset, n_bins, missing, client=None,
                   collect="auto", penalty_weights="balanced"):  # fmt: skip
        """The design of a Dask DataFrame: mergeable binning, codes per partition
        (``_dask_model``). With ``collect`` (by default up to :data:`COLLECT_MAX_ROWS`
        rows) the partitions are also concatenated here, so that every statistic of the
        results is computed as for in-memory data; otherwise the model is set up here
        from per-partition reductions and None is returned."""
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
            if collect == "auto":
                collect = built.design.n_rows <= COLLECT_MAX_ROWS
            if not collect:
                self._set_worker_rows(formula, data, built, n_bins, missing, penalty_weights)
                return None
            design, y, sw, off_arg = collect_design(built)
        self.n_rows_data = y.shape[0]
        self.rows_kept = None
        self.weight_column, self.offset_column = built.weight_column, built.offset_column
        self.dask_design = built.design
        self.dask_binning = built.exact
        return built.spec, design, y, built.response, sw, off_arg

    def _set_worker_rows(self, formula, data, built, n_bins, missing, penalty_weights) -> None:
        """The model of a Dask design whose rows stay on the workers: its recipe, layout,
        level counts and penalty weights from two passes (``_dask_stats.row_statistics``)."""
        from ..core._rows import normalized_weights
        from ..design._assemble import block_penalty_weights
        from ..design._spec import column_kinds
        from ..distributed._dask_stats import families_on_workers, row_statistics

        if not getattr(self.family, "statistics_on_workers", False):
            raise ValueError(
                f"family {self.family.name!r}: a model whose rows stay on the Dask workers "
                f"(collect=False) supports the families {families_on_workers()}; use "
                "glm(..., collect=True) to gather the rows."
            )
        spec = built.spec
        spec.drop_columns = None
        spec.column_kinds = column_kinds(data, [*spec.required, built.offset_column])
        self.n_rows_data = built.design.n_rows
        self.rows_kept = None
        self.weight_column, self.offset_column = built.weight_column, built.offset_column
        self.dask_design = built.design
        self.dask_binning = built.exact
        self.dask_frame = data  # fit_cv(folds="column"); not saved (__getstate__)
        self._data = None
        self.trials = self.survival = self.strata = None
        self.formula = formula
        self.spec = spec
        self.response = built.response
        self.weighted = built.weight_column is not None
        self.n_bins, self.missing = n_bins, missing
        self.penalty_kind = penalty_weights if isinstance(penalty_weights, str) else "array"
        self.design = WorkerDesign(spec.block_ptr, len(spec.dense_columns), built.design.n_rows)
        stats = row_statistics(built.design, self.__dict__.get("dask_client"))
        if not stats.max_w > 0:
            raise ValueError(
                f"sample_weight column '{built.weight_column}' is zero for every row; at "
                "least one must be positive."
            )
        self.dask_stats = stats
        self.bin_counts = stats.level_w
        scale = normalized_weights(np.array([stats.max_w]))[1]
        # ω depends on the shares of the levels only; on the unit weights as in memory
        self.penalty_weights = block_penalty_weights(
            penalty_weights, stats.level_w / scale, self.block_ptr, self._layout()
        )
        self.dask_design.kinds = tuple(self._block_kinds())

    def solve_on_cluster(self, lam: float, warm_start: Any, tol: float, max_iter: int) -> Any:
        """The fit at ``lam`` by the Dask solver on all rows, warm-started (the CV's
        ``results(λ)`` between grid values of a model whose rows stay on the workers).

        Part of the fitted-model interface.

        Parameters
        ----------
        lam : float
            λ.
        warm_start : Solution or None
            Starting point (a fit of the path).
        tol : float
            KKT tolerance.
        max_iter : int
            Newton steps at most.

        Returns
        -------
        DaskSolution
            The fit (its statistics reduced on the workers).
        """
        data, opts = self._solver_data("dask", tol, max_iter, "auto")
        return data.prepare(None).solve(float(lam), warm_start=warm_start, tol=opts["tol"],
                                        max_iter=opts["max_iter"])  # fmt: skip

    def worker_folds(self, folds: Any, groups: Any, random_state: Any) -> Any:
        """``fit_cv``'s folds on a model whose rows stay on the workers: their ids
        computed per partition, never gathered (``distributed/_dask_folds``).

        Parameters
        ----------
        folds : int, str or dask Series
            K, or fold ids: a column name of the Dask DataFrame or a Dask Series with its
            partitions.
        groups : None
            Refused otherwise (whole groups per fold need the rows).
        random_state : int, numpy Generator or None
            Seed of an int K's shuffles.

        Returns
        -------
        WorkerFolds
            K, the rows per fold and what each partition needs to compute its fold ids.
        """
        from ..distributed._dask_folds import worker_folds

        if groups is not None:
            raise rows_error(
                "fit_cv(groups=...)", "Give the folds instead: a column of fold ids of the "
                "Dask DataFrame (fit_cv(folds='column')) that keeps each group in one fold."
            )
        design = self.worker_design("fit_cv()")
        return worker_folds(
            design, folds, stratify=bool(self.family.binary), random_state=random_state,
            frame=self.__dict__.get("dask_frame"), client=self.__dict__.get("dask_client"),
        )  # fmt: skip

    def _check_dask_design(self) -> None:
        """``solver="dask"`` needs the design of a Dask DataFrame."""
        if self.dask_design is None:
            if self.rows_on_workers:  # a saved model of the workers' rows: says so
                self.worker_design("a fit")
            raise ValueError(
                'solver="dask" needs a model specified on a Dask DataFrame (glm(formula, '
                "dask_frame)); this one was given in-memory data."
            )

    def _backend_request(self) -> list[tuple[str, str]]:
        """What every fit of this model needs of a solver backend (``engine/_backend``):
        its family's loss and parameter, the kind of every block and by-group chains."""
        fam = self.family
        request = []
        if fam.survival or not getattr(fam, "row_separable", True):
            request.append(("coupled_rows", f"family {fam.name!r}"))
        if fam.estimated_parameter is not None:
            request.append((
                "estimated_parameter",
                f"family {fam.name!r} estimates {fam.estimated_parameter} (give it a fixed "
                "value, e.g. NegativeBinomial(theta=...), or fit in memory)",
            ))  # fmt: skip
        for block, kind in zip(self.spec.blocks, self._block_kinds(), strict=True):
            request.append((kind_feature(kind), f"term {block.term!r}"))
            if getattr(block, "by", None) is not None:
                request.append(("by_group", f"term {block.term!r}"))
        return request

    def _solver_data(
        self, solver: Any, tol: Any, max_iter: Any, backend: Any,
        request: list[tuple[str, str]] = (),
    ) -> tuple[Any, dict[str, Any]]:  # fmt: skip
        """The path data of the backend ``solver`` selects and its solver options.

        The in-memory engine's ``PathData`` for ``"cd"``/``"fista"``; the Dask backend's
        ``DaskPathData`` for ``"dask"`` (a model on a Dask DataFrame). ``fit``,
        ``fit_path`` and ``fit_cv`` then run one code path on either. Whatever the
        backend does not support — of the model (:meth:`_backend_request`) or of the
        call (``request``) — is refused here, by ``engine/_backend.check_supported``.
        """
        if self.rows_on_workers and solver != "dask":
            if solver != "cd":  # "cd", the default, is the Dask solver here
                check_solver_options(solver, tol, max_iter, backend)
                raise rows_error(
                    f"solver={solver!r}", 'Use solver="dask" (the default "cd" is read as '
                    '"dask" on this model).'
                )
            solver = "dask"
        if solver != "dask":
            opts = check_solver_options(solver, tol, max_iter, backend)
            data = self._path_data()
            check_supported(data.capabilities, request)
            if opts["solver"] == "fista" or opts.get("backend") == "gram":
                caps = FISTA if opts["solver"] == "fista" else GRAM
                check_supported(caps, self._backend_request())
            return data, opts
        from ..distributed._dask_backend import CAPABILITIES, DaskPathData

        check_supported(CAPABILITIES, [*self._backend_request(), *request])
        check_solver_options("cd", tol, max_iter, backend)  # the same argument checks
        self._check_dask_design()
        opts = {"solver": "dask", "tol": check_tol(tol), "max_iter": check_max_iter(max_iter)}
        data = DaskPathData(
            self.dask_design, self.family, self.penalty_weights, self.solver_intercept,
            client=self.__dict__.get("dask_client"),
        )  # fmt: skip
        return data, opts
