"""Inference after selection for a fit at one λ: the unpenalised refit on the selected
design (its recipe, its dummy matrix) and the bootstrap's entry point.

``InferenceMixin`` is a base class of :class:`~binarsity_stats.model._results.BinarsityResults`
(its methods are documented there); it reads ``model``, ``jumps``, ``nobs`` and
``relax_gamma`` of the results and sets ``bootstrap_``. The work is done in
:mod:`._refit` (statsmodels or :mod:`._refit_glm`) and :mod:`._bootstrap`.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from ._refit import _NO_ESTIMATE, _REFERENCE, RefitResults, _fit_statsmodels, _split_refit

if TYPE_CHECKING:  # pragma: no cover
    from ._bootstrap import BootstrapResults

__all__ = ["InferenceMixin", "region_label"]


def segment_of_level(block: Any, jumps: np.ndarray) -> np.ndarray:
    """The segment of every level of a penalised block: a new segment at each kept jump
    and at each chain start; the levels after the chains (a missing level) one each.

    Parameters
    ----------
    block : Block
        The term's recipe block (its ``chain_length`` and ``chains()``).
    jumps : ndarray of bool
        The fit's kept jumps on the block's levels.

    Returns
    -------
    ndarray of int, one per level
    """
    new = np.asarray(jumps[: block.chain_length], dtype=bool).copy()
    new[[first for first, _, _ in block.chains() if first > 0]] = True
    seg = np.cumsum(new)
    rest = np.arange(block.chain_length, len(jumps)) - block.chain_length + seg[-1] + 1
    return np.concatenate([seg, rest])


#: rows of the selected design per block when its Gram is summed (pair terms' aliases)
_GRAM_ROWS = 16384
#: a pair region's column whose residual sum of squares on the other columns is at most
#: this share of its own is aliased (exact dependence leaves rounding, ~1e-13)
_ALIAS_RTOL = 1e-9


def region_label(block: Any, grid: Any, region: np.ndarray, r: int) -> str:
    """A pair region's label: ``(a bins) x (b bins)`` when its observed cells fill the
    rectangle they span (every observed cell in it is the region's), else ``region r
    (m cells)``."""
    from ..formula._labels import interval_label

    k, l = grid.cell_rows()
    on = region == r
    k0, k1, l0, l1 = k[on].min(), k[on].max(), l[on].min(), l[on].max()
    box = (k >= k0) & (k <= k1) & (l >= l0) & (l <= l1)
    if np.all(on[box]):
        a = np.concatenate([[-np.inf], block.edges, [np.inf]])
        b = np.concatenate([[-np.inf], block.pair_edges, [np.inf]])
        return f"{interval_label(a[k0], a[k1 + 1])} x {interval_label(b[l0], b[l1 + 1])}"
    return f"region {r + 1} ({int(on.sum())} cells)"


class InferenceMixin:
    """Refit and bootstrap of :class:`~binarsity_stats.model._results.BinarsityResults`."""

    # -- unpenalised refit -------------------------------------------------------------------
    @cached_property
    def _selection(self) -> tuple[list[np.ndarray], list[str]]:
        """The recipe of the selected design: per code block, the column of every level.

        A level maps to its segment's indicator column, to ``_REFERENCE`` (the reference
        segment or level, all zeros) or to ``_NO_ESTIMATE`` (a segment without training
        weight: the refit has no coefficient for it).
        """
        return self._selection_recipe(self.model.bin_counts)

    def _selection_recipe(self, bin_counts: np.ndarray) -> tuple[list[np.ndarray], list[str]]:
        """:attr:`_selection` with the segments populated according to ``bin_counts``
        (the weighted level counts of the rows the GLM is estimated on)."""
        m = self.model
        names: list[str] = ["Intercept"] if m.fit_intercept else []
        level_cols: list[np.ndarray] = []
        # without an intercept the first term is fully coded; a Cox model has no
        # intercept AND no constant direction (PHReg): every term is reference-coded
        full_first = not m.fit_intercept and m.family.has_intercept
        donors = m.by_donors
        for j, block in enumerate(m.spec.blocks):
            s, e = int(m.block_ptr[j]), int(m.block_ptr[j + 1])
            counts = bin_counts[s:e]
            if getattr(block, "is_pair", False):
                seg_of_level, seg_names = self._pair_segments(j)
                n_seg = len(seg_names)
                seg_count = np.bincount(seg_of_level, weights=counts, minlength=n_seg)
            elif block.penalized:
                seg_of_level = segment_of_level(block, self.jumps[s:e])
                seg = seg_of_level[: block.chain_length]
                seg_names = []
                for sid in range(int(seg[-1]) + 1):
                    levels = np.flatnonzero(seg == sid)
                    label = block.segment_label(int(levels[0]), int(levels[-1]))
                    seg_names.append(f"{block.term}[{label}]")
                if block.has_missing_level:
                    seg_names.append(f"{block.term}[missing]")
                n_seg = len(seg_names)
                seg_count = np.bincount(seg_of_level, weights=counts, minlength=n_seg)
            else:
                seg_of_level = np.arange(e - s)
                seg_names = block.param_names()
                n_seg = e - s
                seg_count = counts
            keep = [sid for sid in range(n_seg) if seg_count[sid] > 0]
            col_of_seg = np.full(n_seg, _NO_ESTIMATE, dtype=np.intp)
            if j in donors:  # one constraint per level of g: a reference segment per chain
                starts = {int(seg_of_level[first]) for first, _, _ in block.chains()}
                chain_of = np.cumsum([sid in starts for sid in range(n_seg)])
                refs = {next(sid for sid in keep if chain_of[sid] == c)
                        for c in {int(chain_of[sid]) for sid in keep}}  # fmt: skip
                for sid in refs:
                    col_of_seg[sid] = _REFERENCE
                keep = [sid for sid in keep if sid not in refs]
            elif keep and not full_first:
                col_of_seg[keep[0]] = _REFERENCE
                keep = keep[1:]
            full_first = False
            for sid in keep:
                col_of_seg[sid] = len(names)
                names.append(seg_names[sid])
            level_cols.append(col_of_seg[seg_of_level])
        names.extend(m.spec.dense_columns)
        return self._without_pair_aliases(level_cols, names)

    def _pair_segments(self, j: int) -> tuple[np.ndarray, list[str]]:
        """The refit's segments of pair term j: its fused regions (``grid_regions`` at the
        kept-cut tolerance), one indicator each; the levels after the cells (a cell
        without training rows) one segment without weight, so no coefficient."""
        m = self.model
        block = m.spec.blocks[j]
        grid = m.binned.kinds[j].block
        s, e = int(m.block_ptr[j]), int(m.block_ptr[j + 1])
        region = self._pair_region_ids(j)
        n_reg = int(region.max()) + 1 if region.size else 0
        rest = n_reg + np.arange(e - s - grid.n_cells)
        names = [f"{block.term}[{region_label(block, grid, region, r)}]" for r in range(n_reg)]
        names += [f"{block.term}[empty at training]"] * rest.size
        return np.concatenate([region, rest]).astype(np.intp), names

    def _without_pair_aliases(
        self, level_cols: list[np.ndarray], names: list[str]
    ) -> tuple[list[np.ndarray], list[str]]:
        """The selection without the pair regions' columns that the other columns span.

        A pair's region indicators overlap the main effects (a region that is a whole
        bin of a is that bin's indicator; the regions add up to the intercept): each
        region column that is a linear combination of the other terms' columns and the
        earlier kept regions (on the training rows of positive weight) is dropped — its
        levels join the reference — so the refit's span and fitted values are the same
        and every coefficient left is identified, as R's hierarchical dummy coding of
        an interaction. The Gram of the selected columns is summed over blocks of rows
        (never the n × k design at once).
        """
        from ._refit_glm import dense_rows

        m = self.model
        pairs = [j for j, b in enumerate(m.spec.blocks) if getattr(b, "is_pair", False)]
        if not pairs:
            return level_cols, names
        k = len(names)
        pair_cols = sorted({int(c) for j in pairs for c in level_cols[j] if c >= 0})
        design = m.design
        n = design.n_obs
        weight = np.asarray(m.unit_weight, dtype=np.float64)
        gram = np.zeros((k, k))
        for start in range(0, n, _GRAM_ROWS):
            rows = slice(start, min(n, start + _GRAM_ROWS))
            X = dense_rows(level_cols, k, m.fit_intercept,
                           lambda j: design.codes[j][rows],
                           design.dense[rows] if len(m.spec.dense_columns) else None,
                           rows.stop - rows.start)  # fmt: skip
            X *= np.sqrt(weight[rows] > 0)[:, None]
            gram += X.T @ X
        kept = [c for c in range(k) if c not in set(pair_cols)]
        dropped = []
        for c in pair_cols:
            g_cc = gram[c, c]
            if g_cc > 0 and kept:
                coef = np.linalg.lstsq(gram[np.ix_(kept, kept)], gram[kept, c], rcond=None)[0]
                resid = g_cc - gram[c, kept] @ coef
            else:
                resid = g_cc
            if resid <= _ALIAS_RTOL * g_cc:
                dropped.append(c)
            else:
                kept.append(c)
        if not dropped:
            return level_cols, names
        new_index = np.full(k, _REFERENCE, dtype=np.intp)
        left = [c for c in range(k) if c not in set(dropped)]
        new_index[left] = np.arange(len(left))
        out = []
        for cols in level_cols:
            cols = cols.copy()
            on = cols >= 0
            cols[on] = new_index[cols[on]]
            out.append(cols)
        return out, [names[c] for c in left]

    def _selected_matrix(
        self, design: Any, strict: bool = True, rows: slice | None = None
    ) -> np.ndarray:
        """The selected design's columns for the rows of a (training or replayed) design.

        A row in a level without training weight raises (``strict``) or gets zeros (the
        training rows to fit on: such a row has zero weight). ``rows``: only those rows
        (a block of a prediction).
        """
        from ._refit_glm import dense_rows

        m = self.model
        level_cols, names = self._selection
        rows = slice(0, design.n_obs) if rows is None else rows
        codes = [design.codes[j][rows] for j in range(len(m.spec.blocks))]
        if strict:
            for j, block in enumerate(m.spec.blocks):
                bad = level_cols[j][codes[j]] == _NO_ESTIMATE
                if np.any(bad):
                    level = block.level_labels()[int(codes[j][bad][0])]
                    raise ValueError(
                        f"term '{block.term}': level {level} had no training weight, so the "
                        "refit has no coefficient for it; drop these rows."
                    )
        q = len(m.spec.dense_columns)
        n = len(range(*rows.indices(design.n_obs)))
        return dense_rows(level_cols, len(names), m.fit_intercept, codes.__getitem__,
                          design.dense[rows] if q else None, n)  # fmt: skip

    def selected_design(self) -> tuple[np.ndarray, list[str]]:
        """The dummy design the selection produced (reference coding).

        Every binned term's constant segments become indicators with the first segment as
        reference (a populated missing level gets its own indicator); a ``C()`` term
        gets indicators of its populated levels but the first; dense columns are kept.
        Without an intercept the first code block keeps all its indicators. A segment
        or level without training weight gets no column (its rows, all of zero weight,
        get zeros).

        Returns
        -------
        X : ndarray of shape (n, k)
            Intercept, segment and level indicators, dense columns.
        names : list of str
            Column names, e.g. ``bin(age, 50)[38.0, 52.0]`` for a merged segment.
        """
        self.model.require("selected_design()")
        return self._selected_matrix(self.model.design, strict=False), list(self._selection[1])

    def refit(
        self, split: float | None = None, random_state: Any = None, *,
        cov_type: str = "nonrobust",
    ) -> RefitResults:
        """The unpenalised GLM on the design the selection produced.

        statsmodels' GLM (PHReg for ``family="cox"``) on the dense selected design;
        when rows × columns reach ``binarsity_stats.model._refit_glm.GRAM_MIN_CELLS``
        (4e6), IRLS from the codes' sufficient statistics instead (never the n × k
        design; the same estimates and statistics, ``sm_results`` then a
        :class:`~binarsity_stats.model._refit_glm.GLMRefit` with statsmodels' names).

        Sample weights are passed as statsmodels' ``var_weights`` (analytic weights, the
        default ``weights_kind``) or ``freq_weights`` (``weights_kind="freq"``); rows of
        zero analytic weight are left out, as R's ``glm`` does. Inference uses the
        t distribution with the residual df when the family has a dispersion to
        estimate (gaussian), the normal otherwise.

        A model whose rows stay on the Dask workers (``glm(formula, dask_frame,
        collect=False)``) is refitted by distributed IRLS (``model/_refit_dask``): a
        pass over the partitions per Newton step, XᵀWX and XᵀWz of the same segments
        reduced on the workers, the same estimates, covariance and non-identified
        columns as in memory (``sm_results`` a ``WorkerGLMRefit``); ``split`` and
        sandwich covariances need the rows there.

        Parameters
        ----------
        split : float in (0, 1), optional
            Honest inference by sample splitting: the cut-points are selected (same bins,
            same λ) on a random share ``split`` of the rows and the GLM is estimated on
            the other rows only, so its standard errors, tests and intervals are valid
            for the selected model. By default the selection of this fit is refitted on
            the same rows, and its inference is conditional on the selection.
        random_state : int, numpy Generator or None
            Seed of the split (ignored without ``split``).
        cov_type : {"nonrobust", "HC0", "HC1", "HC3"}, default="nonrobust"
            The covariance of the estimates: model-based, or the sandwich estimators of
            R's ``sandwich::vcovHC`` (``HC0`` White's, statsmodels' ``cov_type="HC0"``;
            ``HC1`` with the n / (n − k) correction; ``HC3`` with the hat values),
            valid when the variance function is wrong (over-dispersion, heteroskedastic
            noise). Standard errors, tests, intervals and ``get_prediction`` use it,
            with normal quantiles. GLM families only.

        Returns
        -------
        RefitResults
            Wraps the statsmodels (or ``GLMRefit``) results; ``predict``,
            ``get_prediction`` and ``conf_int`` replay the selected design on new rows.
        """
        from ._robust import COV_TYPES, apply_robust_cov

        if cov_type not in COV_TYPES:
            raise ValueError(f"cov_type must be one of {COV_TYPES}; got {cov_type!r}.")
        if cov_type != "nonrobust" and self.model.family.survival:
            raise ValueError("cov_type= (a sandwich covariance) is for GLM refits, not Cox.")
        if self.model.rows_on_workers:  # distributed IRLS (_refit_dask)
            if split is not None:
                self.model.require("refit(split=)", "refit(split=...)")
            if cov_type != "nonrobust":
                self.model.require("refit(cov_type=)", f"refit(cov_type={cov_type!r})")
            from ._refit_dask import fit_glm_workers

            return RefitResults(fit_glm_workers(self), self)
        if split is None:
            out = RefitResults(_fit_statsmodels(self, np.arange(self.nobs)), self)
        else:
            out = _split_refit(self, split, random_state)
        apply_robust_cov(out.sm_results, cov_type)
        return out

    # -- the bootstrap ---------------------------------------------------------------------
    def bootstrap(
        self,
        n_boot: int = 200,
        random_state: Any = None,
        n_jobs: int | None = None,
        lam: str = "same",
        *,
        groups: Any = None,
        solver: str = "cd",
        tol: float = 1e-6,
        max_iter: int = 1000,
        verbose: bool | None = None,
    ) -> BootstrapResults:
        """Refit on ``n_boot`` row resamples, on the same bins, warm-started from this fit.

        A row drawn c times enters a resample with its sample weight multiplied by c; with
        ``groups`` (by default those given to ``fit_cv``) whole groups are drawn; with
        frequency weights (``weights_kind="freq"``) the units they count are drawn, as
        from the repeated rows. The last bootstrap is kept: :meth:`cut_points` and the
        summary then show every cut-point's frequency.

        Which band: the percentile band (``shape_bands()``) is centred on the penalised
        estimate and inherits its shrinkage, which grows with λ; it suits a fit at CV's
        ``lam_min`` (or below). At the theory λ or ``lam_1se`` use
        ``shape_bands(method="relaxed")`` (each resample's cut-points refitted without
        penalty). No band covers exactly next to a true jump; coverage measured by
        ``python -m benchmarks inference`` is in docs/benchmarks.md. For intervals with
        a guarantee, ``refit(split=0.5)``.

        Parameters
        ----------
        n_boot : int, default=200
            Number of resamples.
        random_state : int, numpy Generator or None
            Seed; the result does not depend on ``n_jobs`` (bit for bit).
        n_jobs : int, optional
            Worker threads (None: 1; -1: one per CPU).
        lam : {"same", "cv"}, default="same"
            Keep this fit's λ, or choose λ again on every resample by the fit's
            cross-validation rule (results of ``fit_cv`` only).
        groups : array-like of shape (n,) or str, optional
            Group labels, or the name of a column of the data given to ``glm``:
            resample whole groups (the cluster bootstrap).
        solver : {"cd", "fista"}, default="cd"
            Engine solver of the refits.
        tol : float, default=1e-6
            KKT tolerance of the refits.
        max_iter : int, default=1000
            Cap on solver passes.
        verbose : bool, optional
            Progress bar; default: on for long runs.

        Returns
        -------
        BootstrapResults
            ``shape_bands``, ``cut_frequencies``, ``predict(new, interval=)``,
            ``plot_shapes(bands=True)``.
        """
        self.model.require("bootstrap()")
        if getattr(self, "relax_gamma", None) is not None:
            raise ValueError(
                "bootstrap() resamples the penalised fit; a relaxed fit (relax_gamma="
                f"{self.relax_gamma:g}) is not supported: bootstrap the penalised results."
            )
        from ._bootstrap import bootstrap

        boot = bootstrap(
            self, n_boot, random_state, n_jobs, lam, groups=groups, solver=solver, tol=tol,
            max_iter=max_iter, verbose=verbose,
        )  # fmt: skip
        self.bootstrap_ = boot
        return boot
