"""The model's construction on a Dask DataFrame and the choice of a solver backend.

``ModelDask`` is a base class of :class:`~binarsity_stats.model._model.BinarsityModel`:
the design of a Dask DataFrame (mergeable binning, codes kept per partition on the
workers, the partitions also gathered for the statistics of the results), and
``_solver_data``: the path data of the backend a fit runs on (the in-memory engine, or
with ``solver="dask"`` the distributed solver's ``distributed/_dask_backend``), whose
unsupported requests are refused in one place (``engine/_backend``). ``fit``,
``fit_path`` and ``fit_cv`` have one code path for both.
"""

from __future__ import annotations

from typing import Any

from ..core._validation import check_max_iter, check_tol
from ..engine._backend import FISTA, GRAM, check_supported, kind_feature
from ..engine._solvers import check_solver_options

__all__ = ["ModelDask"]


class ModelDask:
    """``glm()`` on a Dask DataFrame and the solver backend of a fit.

    A base class of :class:`~binarsity_stats.model._model.BinarsityModel`.
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
