"""The fitted-model interface of ``BinarsityModel``: what results, refits, bootstrap,
paths, CV results and the estimators' results read of a model.

``ModelInterface`` is a base class of :class:`~binarsity_stats.model._model.BinarsityModel`
(defined there, with the attributes these methods read: ``spec``, ``design``, ``y``,
``family``, ``sample_weight``, ``offset``, ``penalty_weights``...). It holds the rows and
weights (``per_row``, ``unit_weight``, ``nobs``, ``n_effective``), the engine's view of the
training data (``binned``, ``prepare()``, ``solver_intercept``), the reported coefficients
and η (``report_coef``, ``linear_predictor``) and the λ facts (``lambda_max``,
``lambda_grid``, ``lambda_theory``); docs/architecture.md, "The fitted-model interface",
lists the names other modules may use.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core._base import inconsistent
from ..core._validation import normalized_weights
from ..design._assemble import BlockLayout, block_kinds, block_penalty_weights
from ..design._design import BinnedDesign
from ..design._identify import move_level_means, shared_group_donors
from ..engine._path import PathData, lambda_grid
from ..engine._solvers import Prepared
from ..formula._formula import Design, did_you_mean
from ..penalty._penalty import THEORY_A, lambda_theory, theory_nobs
from ._model_dask import rows_error

__all__ = ["ModelInterface", "METHOD_NEEDS", "CHAINS", "ROWS"]

#: a method needs every binned term to be a chain of levels (not a pair's grid)
CHAINS = "chains"
#: a method needs the training rows in this process (not on the Dask workers)
ROWS = "rows"
_BOTH = frozenset({CHAINS, ROWS})

#: What each method needs that some models lack (:meth:`ModelInterface.lacks`), and what
#: to do instead when the rows are on the workers: declared once here, checked by the one
#: call :meth:`ModelInterface.require` each method makes first. A method that learns to
#: handle a pair term or rows on the workers drops that need here.
METHOD_NEEDS: dict[str, tuple[frozenset[str], str]] = {
    "fit(lam='alo')": (frozenset({CHAINS}), ""),
    "fit_cv(relax=)": (frozenset({CHAINS}), ""),
    "adaptive()": (_BOTH, ""),
    "relax()": (_BOTH, ""),
    "fitted values": (
        frozenset({ROWS}), "predict(dask_frame) gives them as a lazy Dask Series."
    ),
    "augment()": (
        frozenset({ROWS}),
        "predict(dask_frame) gives the fitted values as a lazy Dask Series.",
    ),
    "selected_design()": (frozenset({ROWS}), ""),
    "refit(split=)": (frozenset({ROWS}), ""),  # the split is drawn on the client
    "refit(cov_type=)": (frozenset({ROWS}), ""),  # the sandwich needs the rows' scores
    "bootstrap()": (frozenset({ROWS}), ""),
    "alo()": (frozenset({CHAINS}), ""),
    "rank_pairs()": (frozenset({ROWS}), ""),  # one histogram pass per pair, in memory
    "plot_shapes()": (frozenset({ROWS}), ""),
    "plot_effects()": (frozenset({CHAINS}), ""),
    "plot_calibration()": (frozenset({ROWS}), ""),
    "report()": (frozenset({ROWS}), "summary() is computed from per-partition statistics."),
}


class ModelInterface:
    """The rows, weights, engine design, reported coefficients and λ facts of a model.

    A base class of :class:`~binarsity_stats.model._model.BinarsityModel`; its public
    names are documented there.
    """

    # -- what a method needs that a model may lack -----------------------------------
    def lacks(self) -> frozenset[str]:
        """What this model lacks of what some methods need (:data:`METHOD_NEEDS`).

        Part of the fitted-model interface (docs/architecture.md).

        Returns
        -------
        frozenset of str
            ``"chains"`` when a binned term is not a chain of levels (a pair term
            ``bin(a):bin(b)``, a grid); ``"rows"`` when the training rows are not in
            this process (``glm(dask_frame, collect=False)`` keeps them on the workers).
        """
        lacking = set()
        if any(getattr(b, "is_pair", False) for b in self.spec.blocks):
            lacking.add(CHAINS)
        if getattr(self, "rows_on_workers", False):
            lacking.add(ROWS)
        return frozenset(lacking)

    def require(self, method: str, label: str | None = None) -> None:
        """The one check a method makes: refuse it by name when the model lacks what it needs.

        Part of the fitted-model interface (docs/architecture.md): what each method needs
        is declared once, in :data:`METHOD_NEEDS`; what a model lacks, in :meth:`lacks`.

        Parameters
        ----------
        method : str
            The method's key in :data:`METHOD_NEEDS` (``"refit()"``).
        label : str, optional
            The method as the user called it, for the message (default: ``method``).

        Raises
        ------
        ValueError
            When the method does not handle a pair term yet (naming the first one).
        RowsOnWorkersError
            When the method reads the training rows and they stay on the Dask workers.
        """
        needs, instead = METHOD_NEEDS[method]
        missing = needs & self.lacks()
        what = label or method
        if CHAINS in missing:
            pairs = [b.term for b in self.spec.blocks if getattr(b, "is_pair", False)]
            raise ValueError(
                f"{what} does not handle the pair term {pairs[0]!r} yet (a step surface "
                "over two features); fit, predict, fit_path, fit_cv, summary(), "
                "term_table(), cut_points(), shape_functions(), tidy(), refit(), "
                "bootstrap(), to_spec(), to_sql(), scorecard(), plot_shapes() and report() "
                "do. Fit the model without the pair term for this."
            )
        if ROWS in missing:
            raise rows_error(what, instead)

    # -- rows and weights ----------------------------------------------------------------
    def per_row(self, value: Any, name: str) -> Any:
        """A per-row argument (``groups=``, ``folds=``) as one value per training row.

        Part of the fitted-model interface (docs/architecture.md).

        Parameters
        ----------
        value : str, array-like or None
            A column name of the training data, or values for the rows of the data
            given to :func:`glm` (the rows kept are taken when ``missing="drop"``
            dropped some) or for the rows kept.
        name : str
            The argument's name, for messages.

        Returns
        -------
        ndarray or None
            One value per training row (None for None).
        """
        if value is None:
            return None
        if isinstance(value, str):
            data = self.__dict__.get("_data")
            if data is None and self.dask_design is not None:
                raise ValueError(
                    f"{name}={value!r}: a model on a Dask DataFrame does not keep its data; "
                    f"pass the {name} values, one per training row (e.g. "
                    f"data[{value!r}].compute().to_numpy())."
                )
            if data is None:
                raise ValueError(
                    f"{name}={value!r}: a saved (pickled) model does not keep its training "
                    f"data; pass the {name} values, one per training row."
                )
            if value not in data.columns:
                raise ValueError(
                    f"{name}={value!r} is not a column of the data."
                    + did_you_mean(value, data.columns)
                )
            return data[value].to_numpy(dtype=object)
        kept = self.rows_kept
        if kept is not None and np.ndim(value) == 1 and len(value) == kept.size != self.nobs:
            to_numpy = getattr(value, "to_numpy", None)
            values = to_numpy(dtype=object) if to_numpy is not None else np.asarray(value)
            return values[kept]
        return value

    @property
    def unit_weight(self) -> np.ndarray:
        """The weights divided by a power of two near their largest (see ``weight_scale``).

        Sums over rows are taken on these: the fit does not depend on the scale of the
        weights, and their totals can neither overflow nor underflow.
        """
        return normalized_weights(self.sample_weight)[0]

    @property
    def weight_scale(self) -> float:
        """The power of two by which ``unit_weight`` was divided (1 without weights)."""
        stats = self.__dict__.get("dask_stats")  # rows on the Dask workers: their largest
        if stats is not None:
            return normalized_weights(np.array([stats.max_w]))[1]
        return normalized_weights(self.sample_weight)[1]

    @property
    def nobs(self) -> int:
        """Number of training rows."""
        stats = self.__dict__.get("dask_stats")
        if stats is not None:
            return int(stats.n_rows)
        return int(self.y.shape[0])

    @property
    def has_offset(self) -> bool:
        """Whether the training rows have an offset (an ``offset()`` term or argument)."""
        stats = self.__dict__.get("dask_stats")
        if stats is not None:
            return bool(stats.has_offset)
        return self.offset is not None

    @property
    def wnobs(self) -> float:
        """Number of observations the weights stand for: Σ s for frequency weights,
        else the number of rows of positive weight (the n of BIC)."""
        stats = self.__dict__.get("dask_stats")
        if stats is not None:  # rows on the Dask workers: their reduced totals
            if self.weighted and self.weights_kind == "freq":
                return float(stats.sum_w)
            return float(stats.n_positive if self.weighted else stats.n_rows)
        if self.weighted and self.weights_kind == "freq":
            return float(self.unit_weight.sum()) * self.weight_scale
        if self.weighted:  # a zero analytic weight removes the row (as in R's glm)
            return float(np.count_nonzero(self.sample_weight > 0))
        return float(self.nobs)

    @property
    def n_effective(self) -> float:
        """The n of ``lam="theory"``: Σ s for frequency weights, Kish's effective
        number (Σ s)² / Σ s² for analytic ones (n when unweighted)."""
        stats = self.__dict__.get("dask_stats")
        if stats is not None:  # rows on the Dask workers: their reduced totals
            if not self.weighted:
                return float(stats.n_rows)
            if self.weights_kind == "freq":
                return float(stats.sum_w)
            return float(stats.sum_w**2 / stats.sum_w2)
        trials = getattr(self, "trials", None)
        if trials is not None:
            # cbind(successes, failures): row i stands for t_i Bernoulli trials, each of
            # the user's weight u_i; the n of those trials is Σ u t (frequency weights)
            # or Kish's (Σ u t)² / Σ u² t (analytic), Σ t unweighted
            t, t_scale = normalized_weights(trials)
            u = np.divide(self.sample_weight, trials, out=np.zeros_like(t), where=trials > 0)
            u, u_scale = normalized_weights(u) if np.any(u > 0) else (u, 1.0)
            if self.weights_kind == "freq":
                return float(np.sum(u * t)) * u_scale * t_scale
            return float(np.sum(u * t) ** 2 / np.sum(u * u * t)) * t_scale
        # on the weights scaled to a maximum in [1, 2): no overflow in the sums
        return theory_nobs(self.unit_weight, self.weights_kind, self.weight_scale)

    @property
    def var_weights(self) -> np.ndarray | None:
        """The weights as statsmodels' ``var_weights`` (analytic weights), else None."""
        return self.sample_weight if self.weighted and self.weights_kind == "analytic" else None

    @property
    def freq_weights(self) -> np.ndarray | None:
        """The weights as statsmodels' ``freq_weights`` (row counts), else None."""
        return self.sample_weight if self.weighted and self.weights_kind == "freq" else None

    # -- the engine's design and the reported coefficients --------------------------------
    @property
    def block_ptr(self) -> np.ndarray:
        """Offsets of the blocks in θ."""
        return self.design.block_ptr

    @property
    def fit_intercept(self) -> bool:
        """Whether the model has an intercept (the formula's; never for ``family="cox"``,
        whose partial likelihood does not see a constant: it is dropped with a note)."""
        return self.spec.fit_intercept and self.family.has_intercept

    @property
    def intercept_absorbed(self) -> bool:
        """Whether the first code block carries the intercept (``- 1`` with a block).

        Without an intercept, R codes the first factor with one column per level. Here
        the first ``bin()``/``C()`` block drops its sum-to-zero constraint instead: the
        engine fits the model with an intercept β0 and the reported levels of the first
        block are θ_1k + β0. The total-variation penalty is unchanged by a common shift
        of a block's levels, so this is exactly the optimum of the model whose first
        block is freely coded.
        """
        if not self.family.has_intercept:
            return False
        return not self.spec.fit_intercept and bool(self.spec.blocks)

    @property
    def solver_intercept(self) -> bool:
        """Whether the engine fits an intercept (also when the first block absorbs it).

        Always for a family without one (Cox): the engine's β0 then has a zero gradient
        and only absorbs the centring of the dense columns; it is reported as 0.
        """
        if not self.family.has_intercept:
            return True
        return self.spec.fit_intercept or self.intercept_absorbed

    def report_coef(self, solution: Any) -> tuple[np.ndarray, float]:
        """θ and β0 of an engine solution as reported (see :attr:`intercept_absorbed`).

        Parameters
        ----------
        solution : Solution
            The engine's solution on this model's design.

        Returns
        -------
        coef : ndarray of shape (d,)
            θ; with an absorbed intercept the first block's levels include β0.
        intercept : float
            β0; 0 with an absorbed intercept.
        """
        coef = np.array(solution.coef, dtype=np.float64)
        intercept = float(solution.intercept)
        if self.intercept_absorbed:
            coef[int(self.block_ptr[0]) : int(self.block_ptr[1])] += intercept
            intercept = 0.0
        if not self.family.has_intercept:
            intercept = 0.0  # a constant in η does not change the Cox model
        donors = self.by_donors
        if donors:  # later by-group blocks of a shared group: within-level shapes only
            blocks = self.spec.blocks
            chains = [b.chains() if b.by is not None else None for b in blocks]
            coef = move_level_means(coef, self.block_ptr, self.bin_counts, chains, donors)
        return coef, intercept

    @property
    def by_donors(self) -> dict[int, int]:
        """By-group blocks sharing a group column with an earlier one (``_identify``).

        ``{later block: first block}``: the first by-group block of a group column holds
        its level means, every later one one constraint per level of the group
        (within-level shapes only), so the levels reported are unique.
        """
        return shared_group_donors([b.by for b in self.spec.blocks])

    def _binned_design(self) -> BinnedDesign:
        return BinnedDesign(
            self.design.codes, self.design.block_ptr, dense=self.design.dense,
            offset=self.offset, sample_weight=self.sample_weight if self.weighted else None,
        )  # fmt: skip

    @property
    def engine_kinds(self) -> list[str]:
        """The kind of every block as the engine fits it (``binned.kinds``; from the
        blocks' layout alone when the rows stay on the Dask workers)."""
        if self.__dict__.get("dask_stats") is not None:
            return list(self._block_kinds())
        return list(self.binned.kinds)

    @property
    def binned(self) -> BinnedDesign:
        """The engine's view of the training data: codes, block kinds, dense, offset, weights."""
        binned = self.__dict__.get("_binned")
        if binned is None:  # a model pickled before the design object existed
            binned = self._binned_design().with_kinds(self._block_kinds())
            self._binned = binned
        return binned

    def _layout(self) -> list[BlockLayout]:
        """What the assembler needs of every block of the formula (design/_assemble)."""
        blocks = self.spec.blocks
        chain = self.spec.chain_length
        if chain is None:
            chain = np.diff(self.block_ptr)
        return [
            BlockLayout(
                penalized=bool(block.penalized), chain_length=int(chain[j]),
                # Block.monotone: None on models pickled before monotone chains existed
                monotone=getattr(block, "monotone", None),
                chains=block.chains() if block.by is not None else None,
                grid=((block.cells, block.grid_shape, block.term)
                      if getattr(block, "is_pair", False) else None),
            )  # fmt: skip
            for j, block in enumerate(blocks)
        ]

    def _block_kinds(self) -> list[str]:
        """Kind of every block: a TV chain for ``bin()``, free levels for ``C()``.

        A ``C()`` term given positive weights by a ``penalty_weights`` array is
        penalised as a chain over its levels in their order. A ``bin(x, monotone=...)``
        chain is the monotone kind of that name (``"increasing"``, ``"decreasing"``).
        """
        layout = self._layout()
        counts = None
        if any(b.grid is not None for b in layout):  # a pair term's grid needs its counts
            binned = self.__dict__.get("_binned") or self._binned_design()
            counts = binned.counts
        return block_kinds(self.penalty_weights, self.block_ptr, layout, counts,
                           getattr(self, "penalty_kind", None))  # fmt: skip

    def _penalty_weights(self, kind: str | np.ndarray) -> np.ndarray:
        # on the unit weights (shares only): no overflow
        return block_penalty_weights(kind, self.binned.counts, self.block_ptr, self._layout())

    def linear_predictor(
        self, coef: np.ndarray, dense_coef: np.ndarray, intercept: float,
        design: Design | None = None, offset: np.ndarray | None = None,
    ) -> np.ndarray:  # fmt: skip
        """η = offset + β0 + Σ_j θ_j[c_ij] + Z β on a design (the training one by default).

        Parameters
        ----------
        coef : ndarray of shape (d,)
            θ.
        dense_coef : ndarray of shape (q,)
            Coefficients of the dense columns.
        intercept : float
            β0.
        design : Design, optional
            A replayed design; the training design when omitted.
        offset : ndarray of shape (n,), optional
            Total offset; the training offset when ``design`` is omitted.

        Returns
        -------
        ndarray of shape (n,)
            The linear predictor of every row.
        """
        if design is None:
            design, offset = self.design, self.offset
        coef, codes, block_ptr, dense_coef, intercept = self._checked_levels(
            coef, dense_coef, intercept, design
        )
        binned = BinnedDesign.checked(codes, block_ptr, dense=design.dense, offset=offset)
        return binned.linear_predictor(coef, dense_coef, intercept)

    def _checked_levels(self, coef, dense_coef, intercept, design: Design):
        """The coefficients and codes checked against each other before the gather.

        A modified or foreign pickle (results, model or spec) raises a clear error
        instead of sending the kernel out of bounds: θ with one entry per level of
        the formula's blocks, the design's blocks those of the spec, every
        code below its block's size, the dense coefficients one per dense column.
        """
        from ..core._validation import check_block_ptr, check_codes

        coef = np.asarray(coef)
        if coef.ndim != 1 or coef.dtype.kind not in "iuf":
            raise inconsistent(f"coef is not a 1-D array of numbers (shape {coef.shape})")
        coef = np.array(coef, dtype=np.float64, order="C", copy=True)
        dense_coef = np.asarray(dense_coef, dtype=np.float64).reshape(-1)
        sizes = [int(b.n_levels) for b in self.spec.blocks]
        try:
            ptr = check_block_ptr(design.block_ptr, n_blocks=len(sizes))
            if np.any(np.diff(ptr) != sizes):
                raise ValueError(
                    f"the design's block sizes {np.diff(ptr).tolist()} are not the "
                    f"formula's {sizes}"
                )
            if ptr[-1] != coef.shape[0]:
                raise ValueError(f"len(coef) = {coef.shape[0]} but the blocks hold {ptr[-1]}")
            codes = check_codes(design.codes, ptr)
        except (TypeError, ValueError) as exc:
            raise inconsistent(str(exc)) from None
        q = 0 if design.dense is None else design.dense.shape[1]
        if dense_coef.shape[0] != q:
            raise inconsistent(f"{dense_coef.shape[0]} dense coefficients for {q} dense columns")
        return coef, codes, ptr, dense_coef, float(intercept)

    def _path_data(self) -> PathData:
        """The engine's view of the training rows (arrays shared, nothing copied)."""
        return PathData.from_design(
            self.binned, self.y, self.family, self.penalty_weights,
            fit_intercept=self.solver_intercept,
        )  # fmt: skip

    def prepare(self, rows: np.ndarray | None = None) -> Prepared:
        """The engine's validated problem on the given rows, for solves at many λ.

        Part of the fitted-model interface that results, refits, bootstrap and the
        estimators use (docs/architecture.md, "The fitted-model interface"): a re-solve
        at another λ is ``model.prepare().solve(lam, warm_start=...)``.

        Parameters
        ----------
        rows : ndarray of int, optional
            Training rows (all by default), e.g. a fold or a selection half.

        Returns
        -------
        Prepared
            The engine's prepared problem (``solve``, ``prob``).
        """
        return self._path_data().prepare(rows)

    # -- λ ---------------------------------------------------------------------------
    def lambda_max(self) -> float:
        """λ_max of design.md §2: the smallest λ at which every binned term is flat.

        Evaluated at the null fit: every penalised chain fused, while the intercept, the
        offset, the ``C()`` and linear terms and any missing level stay free (fitted
        exactly first); it is the intercept(+offset)-only fit only when the model has no
        unpenalised term.

        Returns
        -------
        float
            λ_max; 0 when nothing is penalised.
        """
        if self.__dict__.get("dask_stats") is not None:  # rows on the Dask workers
            return self._solver_data("dask", 1e-7, 1000, "auto")[0].lambda_max()
        return self._path_data().lambda_max()

    def lambda_grid(self, n_lambdas: int = 50, lam_min_ratio: float = 1e-3) -> np.ndarray:
        """Log-spaced λ grid from λ_max down to ``lam_min_ratio`` · λ_max.

        Parameters
        ----------
        n_lambdas : int, default=50
            Number of values.
        lam_min_ratio : float, default=1e-3
            Smallest λ as a fraction of λ_max (in (0, 1)).

        Returns
        -------
        ndarray of shape (n_lambdas,)
            Decreasing.
        """
        lambda_grid(1.0, n_lambdas, lam_min_ratio)  # the arguments, before λ_max's fit
        return lambda_grid(self.lambda_max(), n_lambdas, lam_min_ratio)

    def lambda_theory(self, phi: float | None = None, A: float = THEORY_A) -> float:
        """The scalar of the paper's Theorem 1 weights: sqrt(2 U_n φ (A + log d) / n).

        Parameters
        ----------
        phi : float, optional
            Dispersion φ. Default: 1 for binomial and poisson; for a family with an
            estimated dispersion, Pearson's χ² / W at the null fit (an upper bound on φ;
            for gaussian the weighted variance of y, an upper bound on σ²).
        A : float, default=log(40)
            Confidence parameter: the bound holds with probability ≥ 1 − 2e^{−A}.

        Returns
        -------
        float
            λ_theory.
        """
        if self.penalty_kind == "adaptive":
            raise ValueError(
                "lam='theory' is not defined for adaptive penalty weights (they depend "
                "on a first-stage fit); give lam a number or use fit_cv."
            )
        if self.__dict__.get("dask_stats") is not None:  # rows on the Dask workers
            return self._worker_lambda_theory(phi, A)
        d = sum(b.n_levels for b in self.spec.blocks if b.penalized)
        return lambda_theory(
            self.family, self.y, self.unit_weight, self.offset, d, self.n_effective,
            fit_intercept=self.solver_intercept, phi=phi, A=A,
        )  # fmt: skip
