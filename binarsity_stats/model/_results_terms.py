"""The per-term tables of a fit at one λ: cut-points kept, shape functions, the term
table, categorical effects in reference coding, each term's contribution and importance.

``TermTablesMixin`` is a base class of :class:`~binarsity_stats.model._results.BinarsityResults`
(its methods are documented there); it reads ``model``, ``coef``, ``dense_coef``,
``jumps``, ``_eta_unit`` and ``bootstrap_`` of the results.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..core._base import inconsistent
from ..core._statistics import is_flat

__all__ = ["TermTablesMixin"]


class TermTablesMixin:
    """The per-term tables of :class:`~binarsity_stats.model._results.BinarsityResults`."""

    # -- interpretation --------------------------------------------------------------------
    def term_contributions(self) -> pd.DataFrame:
        """Each term's contribution to the linear predictor on the training rows.

        Returns
        -------
        DataFrame of shape (n, terms)
            One column per term: θ_j of the row's level for a binned or categorical
            term, β_k x_k for a linear term. Their sum plus the intercept and the
            offset is :attr:`linear_predictor`.
        """
        m = self.model
        design = m.design
        cols: dict[str, np.ndarray] = {}
        for j, block in enumerate(m.spec.blocks):
            s, e = int(m.block_ptr[j]), int(m.block_ptr[j + 1])
            codes = np.asarray(design.codes[j], dtype=np.intp)
            if codes.size and (codes.min() < 0 or codes.max() >= e - s):
                raise inconsistent(f"the codes of {block.term} exceed its {e - s} levels")
            cols[block.term] = self.coef[s:e][codes]
        dense = design.dense
        for k, (name, value) in enumerate(
            zip(m.spec.dense_columns, self.dense_coef, strict=True)
        ):
            cols[name] = value * np.asarray(dense[:, k], dtype=np.float64)
        return pd.DataFrame(cols, index=pd.RangeIndex(m.nobs))

    def term_importance(self) -> pd.Series:
        """Mean absolute centred effect of every term (EBM's importance).

        For term j with contribution f_j(x_i) on training row i (see
        :meth:`term_contributions`) and weights s_i: Σ s_i abs(f_j(x_i) − f̄_j) / Σ s_i,
        f̄_j = Σ s_i f_j(x_i) / Σ s_i. Centring makes it independent of how a term's
        levels are coded (the intercept absorbs any shift).

        Returns
        -------
        Series
            Indexed by term, on the link scale.
        """
        m = self.model
        if m.rows_on_workers:  # the level counts and the dense columns' spread, reduced
            return self._worker_importance()
        w = np.asarray(m.unit_weight, dtype=np.float64)
        total = float(w.sum())
        values = {}
        # a binned or categorical term takes one value per level: sums over its levels'
        # weights (no n × terms table of contributions)
        for j, block in enumerate(m.spec.blocks):
            s, e = int(m.block_ptr[j]), int(m.block_ptr[j + 1])
            codes = np.asarray(m.design.codes[j], dtype=np.intp)
            if codes.size and (codes.min() < 0 or codes.max() >= e - s):
                raise inconsistent(f"the codes of {block.term} exceed its {e - s} levels")
            level_w = np.bincount(codes, weights=w, minlength=e - s)
            theta = self.coef[s:e]
            mean = float(level_w @ theta) / total if total > 0 else 0.0
            values[block.term] = float(level_w @ np.abs(theta - mean)) / total if total > 0 else 0.0
        for k, (name, value) in enumerate(
            zip(m.spec.dense_columns, self.dense_coef, strict=True)
        ):
            c = value * np.asarray(m.design.dense[:, k], dtype=np.float64)
            mean = float(w @ c) / total if total > 0 else 0.0
            values[name] = float(w @ np.abs(c - mean, out=c)) / total if total > 0 else 0.0
        return pd.Series(values, name="importance", dtype=np.float64).rename_axis("term")

    def _worker_importance(self) -> pd.Series:
        """:meth:`term_importance` of a model whose rows stay on the Dask workers.

        A block's contribution takes one value per level: the weighted level counts
        (reduced at the model's construction) give its mean and mean absolute
        deviation; a dense term β z has Σ s abs(β z − β z̄) / Σ s = abs(β) times the
        column's weighted mean absolute deviation (also reduced).
        """
        m = self.model
        stats = m.dask_stats
        level_w = np.asarray(stats.level_w, dtype=np.float64)
        total = float(stats.sum_w)
        values = {}
        for j, block in enumerate(m.spec.blocks):
            s, e = int(m.block_ptr[j]), int(m.block_ptr[j + 1])
            theta = self.coef[s:e]
            mean = float(level_w[s:e] @ theta) / total if total > 0 else 0.0
            values[block.term] = (float(level_w[s:e] @ np.abs(theta - mean)) / total
                                  if total > 0 else 0.0)  # fmt: skip
        for k, (name, value) in enumerate(
            zip(m.spec.dense_columns, self.dense_coef, strict=True)
        ):
            values[name] = abs(float(value)) * float(stats.dense_mad[k])
        return pd.Series(values, name="importance", dtype=np.float64).rename_axis("term")

    def _segments(self, j: int) -> list[tuple[int, int]]:
        """Chain positions (first, last) of the constant segments of binned block j."""
        block = self.model.spec.blocks[j]
        s = int(self.model.block_ptr[j])
        breaks = {first for first, _, _ in block.chains()}
        starts = [0] + [
            k for k in range(1, block.chain_length) if self.jumps[s + k] or k in breaks
        ]
        ends = [k - 1 for k in starts[1:]] + [block.chain_length - 1]
        return list(zip(starts, ends, strict=True))

    def cut_points(self, precision: int | None = None) -> pd.DataFrame:
        """The cut-points kept: where a binned term's step function jumps.

        Parameters
        ----------
        precision : int, optional
            Significant digits of the interval labels (default 6).

        Returns
        -------
        DataFrame
            One row per jump: ``term``, ``column``, ``cut`` (x ≤ cut is left of the
            jump), ``left`` and ``right`` (the constant segments on either side, as
            right-closed intervals ``(low, high]`` or ``= v`` for a single training
            value) and ``jump`` (θ_right − θ_left, on the link scale); a pair term
            ``bin(a):bin(b)`` lists the cut lines of its surface, one row per axis and
            cut where some pair of neighbouring cells across the line differs (``jump``:
            the largest such difference, ``left``/``right``: the axis' two bins); when a term is
            monotone (``bin(x, monotone=...)``), ``shape`` (``"increasing"``,
            ``"decreasing"`` or ``"free"``); after :meth:`bootstrap`, ``frequency`` (the
            share of resamples that jump there).
        """
        rows, edges = [], []
        m = self.model
        for j, block in enumerate(m.spec.blocks):
            if getattr(block, "is_pair", False):
                pair_rows = self._pair_cut_lines(j, precision)
                rows.extend(pair_rows)
                edges.extend((j, None) for _ in pair_rows)
                continue
            if not block.penalized:
                continue
            s = int(m.block_ptr[j])
            segs = self._segments(j)
            breaks = {first for first, _, _ in block.chains()}
            for (a, b), (c, d) in zip(segs[:-1], segs[1:], strict=True):
                if c in breaks:  # the next group level's chain (by-group terms)
                    continue
                cut_at = block.position(c)[0] if block.by is not None else c
                edges.append((j, c))
                rows.append(
                    {
                        "term": block.term,
                        "column": block.column,
                        "cut": float(block.edges[cut_at - 1]) if block.edges is not None
                        else np.nan,
                        "left": block.segment_label(a, b, precision),
                        "right": block.segment_label(c, d, precision),
                        "jump": float(self.coef[s + c] - self.coef[s + c - 1]),
                    }
                )
        cols = ["term", "column", "cut", "left", "right", "jump"]
        shapes = [getattr(b, "monotone", None) for b in m.spec.blocks]
        if any(shapes):
            # a monotone term's jumps all go its way: say which terms are constrained
            for row, (j, _) in zip(rows, edges, strict=True):
                row["shape"] = shapes[j] or "free"
            cols.append("shape")
        boot = getattr(self, "bootstrap_", None)
        if boot is not None:
            freq = boot._edge_frequency()
            lines: dict[int, dict] = {}  # a pair's cut lines: (column, cut) → frequency
            for row, (j, k) in zip(rows, edges, strict=True):
                if k is None:
                    if j not in lines:
                        lines[j] = {(r["column"], r["cut"]): r["frequency"]
                                    for r in boot._pair_line_frequencies(j)}  # fmt: skip
                    row["frequency"] = float(lines[j][(row["column"], row["cut"])])
                else:
                    row["frequency"] = float(freq[int(m.block_ptr[j]) + k])
            cols.append("frequency")
        return pd.DataFrame(rows, columns=cols)

    def shape_functions(self, merge: bool = False, precision: int | None = None) -> pd.DataFrame:
        """The fitted step function of every code block.

        Parameters
        ----------
        merge : bool, default=False
            Merge neighbouring bins with equal levels into one segment.
        precision : int, optional
            Significant digits of the interval labels (default 6).

        Returns
        -------
        DataFrame
            ``term``, ``label`` (``(low, high]``, ``= v`` for a bin that held one
            distinct training value, a category or ``missing``), ``low``, ``high`` (the
            interval (low, high]; NaN for a categorical or missing level), ``level`` (θ
            on the link scale) and ``count`` (weighted training rows). A pair term
            ``bin(a):bin(b)`` has a row per observed cell (``(a bin) x (b bin)``), or
            per fused region with ``merge``, then its level of the cells empty at
            training; its ``low`` and ``high`` are NaN (the cell is two intervals).
        """
        m = self.model
        rows = []
        for j, block in enumerate(m.spec.blocks):
            if getattr(block, "is_pair", False):
                rows.extend(self._pair_shape_rows(j, merge, precision))
                continue
            s = int(m.block_ptr[j])
            labels = block.level_labels(precision)
            theta = self.coef[s : int(m.block_ptr[j + 1])]
            counts = m.bin_counts[s : int(m.block_ptr[j + 1])]
            if block.penalized:
                segs = self._segments(j) if merge else [(k, k) for k in range(block.chain_length)]
                for a, b in segs:
                    rows.append(
                        {"term": block.term, "label": block.segment_label(a, b, precision),
                         "low": block.bounds(a)[0], "high": block.bounds(b)[1],
                         "level": float(theta[a]), "count": float(np.sum(counts[a : b + 1]))}
                    )  # fmt: skip
                extra = range(block.chain_length, block.n_levels)
            else:
                extra = range(block.n_levels)
            for k in extra:
                rows.append(
                    {"term": block.term, "label": labels[k], "low": np.nan, "high": np.nan,
                     "level": float(theta[k]), "count": float(counts[k])}
                )  # fmt: skip
        return pd.DataFrame(rows, columns=["term", "label", "low", "high", "level", "count"])

    def term_table(self) -> pd.DataFrame:
        """One row per term: kind, levels, cut-points kept, selected, range of effect.

        Returns
        -------
        DataFrame
            Indexed by term: ``kind`` ("bin", "categorical", "pair", "linear"),
            ``levels``, ``cuts_kept`` (of a pair term ``bin(a):bin(b)``: the fused
            regions of its surface that hold training rows), ``selected``, ``effect_min``, ``effect_max`` (θ over the
            populated levels; for a linear term β x at the smallest and the largest x of
            the training rows), ``effect_range`` (max − min: a linear term's
            abs(β) times its column's range) and ``importance``
            (:meth:`term_importance`).
        """
        m = self.model
        importance = self.term_importance()
        rows = []
        for j, block in enumerate(m.spec.blocks):
            s, e = int(m.block_ptr[j]), int(m.block_ptr[j + 1])
            theta, counts = self.coef[s:e], m.bin_counts[s:e]
            populated = theta[counts > 0] if np.any(counts > 0) else theta
            jumps = int(self.jumps[s:e].sum())
            if getattr(block, "is_pair", False):
                jumps = self._pair_regions(j)  # a pair's surface: its regions kept
            selected = self._block_selected(j)
            rows.append(
                {"term": block.term, "levels": block.n_levels,
                 "kind": "ordered" if getattr(block, "ordered", False) else block.kind,
                 "cuts_kept": jumps if block.penalized else np.nan, "selected": selected,
                 "effect_min": float(populated.min()), "effect_max": float(populated.max())}
            )  # fmt: skip
        stats = m.__dict__.get("dask_stats")  # rows on the Dask workers: reduced ranges
        dense = None if stats is not None else m.design.dense
        for k, (name, value) in enumerate(
            zip(m.spec.dense_columns, self.dense_coef, strict=True)
        ):
            if stats is not None:
                ends = value * np.array([stats.dense_min[k], stats.dense_max[k]])
            else:
                x = np.asarray(dense[:, k], dtype=np.float64)
                ends = value * np.array([x.min(), x.max()]) if x.size else np.zeros(2)
            rows.append(
                {"term": name, "kind": "linear", "levels": np.nan, "cuts_kept": np.nan,
                 "selected": bool(value != 0), "effect_min": float(ends.min()),
                 "effect_max": float(ends.max())}
            )  # fmt: skip
        for row in rows:
            row["effect_range"] = row["effect_max"] - row["effect_min"]
            row["importance"] = float(importance.get(row["term"], 0.0))
        cols = ["kind", "levels", "cuts_kept", "selected", "effect_min", "effect_max",
                "effect_range", "importance"]  # fmt: skip
        if not rows:
            return pd.DataFrame(columns=cols, index=pd.Index([], name="term", dtype=object))
        return pd.DataFrame(rows).set_index("term")[cols]

    def _pair_cut_lines(self, j: int, precision: int | None) -> list[dict[str, Any]]:
        """The cut lines of pair term j's surface (see :meth:`cut_points`)."""
        from ..core._statistics import jump_tolerance
        from ..formula._labels import interval_label

        m = self.model
        block = m.spec.blocks[j]
        grid = m.binned.kinds[j].block
        s = int(m.block_ptr[j])
        cells = self.coef[s : s + grid.n_cells]
        diff = grid.difference(cells)
        kept = np.abs(diff) > jump_tolerance(cells, self._eta_unit)
        k, l = grid.cell_rows()
        rows = []
        axes = [(block.column, block.edges, k, slice(grid.n_b_edges, None)),
                (block.pair_column, block.pair_edges, l, slice(0, grid.n_b_edges))]  # fmt: skip
        for column, cut_edges, pos, edge_slice in axes:
            lines = pos[grid.edges[edge_slice, 0]]  # an edge crosses the cut after its bin
            jumps, on = diff[edge_slice], kept[edge_slice]
            bounds = np.concatenate([[-np.inf], cut_edges, [np.inf]])
            for line in np.unique(lines[on]):
                sel = on & (lines == line)
                big = jumps[sel][np.argmax(np.abs(jumps[sel]))]
                rows.append({
                    "term": block.term, "column": column, "cut": float(cut_edges[line]),
                    "left": interval_label(bounds[line], bounds[line + 1], precision=precision),
                    "right": interval_label(bounds[line + 1], bounds[line + 2],
                                            precision=precision),
                    "jump": float(big),
                })  # fmt: skip
        return rows

    def _pair_line_jumps(self, j: int, coef: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per axis of pair term j (a, then b), whether each cut line is kept at ``coef``:
        a line (after bin k of the axis) is kept when a jump of the surface crosses it
        (the kept-cut rule of ``_statistics`` on the grid's edges, as :meth:`cut_points`)."""
        from ..core._statistics import jump_tolerance

        m = self.model
        block = m.spec.blocks[j]
        grid = m.binned.kinds[j].block
        s = int(m.block_ptr[j])
        cells = np.asarray(coef[s : s + grid.n_cells], dtype=np.float64)
        diff = grid.difference(cells)
        kept = np.abs(diff) > jump_tolerance(cells, self._eta_unit)
        k, l = grid.cell_rows()
        out = []
        for pos, edge_slice, n_lines in ((k, slice(grid.n_b_edges, None), len(block.edges)),
                                         (l, slice(0, grid.n_b_edges), len(block.pair_edges))):  # fmt: skip
            lines = pos[grid.edges[edge_slice, 0]]
            mask = np.zeros(n_lines, dtype=bool)
            mask[lines[kept[edge_slice]]] = True
            out.append(mask)
        return out[0], out[1]

    def _pair_region_ids(self, j: int) -> np.ndarray:
        """The fused region of every observed cell of pair term j's surface
        (``_statistics.grid_regions`` at the kept-cut tolerance of ``_statistics``)."""
        from ..core._statistics import grid_regions, jump_tolerance

        m = self.model
        grid = m.binned.kinds[j].block
        s = int(m.block_ptr[j])
        cells = self.coef[s : s + grid.n_cells]
        return grid_regions(grid, cells, jump_tolerance(cells, self._eta_unit))

    def _pair_regions(self, j: int) -> int:
        """The number of fused regions of pair term j's surface that hold training rows."""
        m = self.model
        s = int(m.block_ptr[j])
        region = self._pair_region_ids(j)
        return len(np.unique(region[m.bin_counts[s : s + region.size] > 0]))

    def _pair_shape_rows(
        self, j: int, merge: bool, precision: int | None
    ) -> list[dict[str, Any]]:
        """:meth:`shape_functions`' rows of pair term j: one per cell, or per fused
        region with ``merge`` (labelled as the refit labels it), then the level of the
        cells empty at training."""
        from ._results_inference import region_label

        m = self.model
        block = m.spec.blocks[j]
        grid = m.binned.kinds[j].block
        s, e = int(m.block_ptr[j]), int(m.block_ptr[j + 1])
        theta, counts = self.coef[s:e], m.bin_counts[s:e]
        labels = block.level_labels(precision)
        rows = []
        if merge:
            region = self._pair_region_ids(j)
            for r in range(int(region.max()) + 1 if region.size else 0):
                cells = np.flatnonzero(region == r)
                rows.append({"term": block.term, "label": region_label(block, grid, region, r),
                             "low": np.nan, "high": np.nan, "level": float(theta[cells[0]]),
                             "count": float(counts[cells].sum())})  # fmt: skip
            extra = range(grid.n_cells, e - s)
        else:
            extra = range(e - s)
        for k in extra:
            rows.append({"term": block.term, "label": labels[k], "low": np.nan, "high": np.nan,
                         "level": float(theta[k]), "count": float(counts[k])})  # fmt: skip
        return rows

    def _block_selected(self, j: int) -> bool:
        """Whether term j has an effect: a kept cut, or populated levels that differ by
        more than the jump tolerance (``_statistics``; the term table and the plots)."""
        m = self.model
        s, e = int(m.block_ptr[j]), int(m.block_ptr[j + 1])
        if np.any(self.jumps[s:e]):
            return True
        theta, counts = self.coef[s:e], m.bin_counts[s:e]
        populated = theta[counts > 0] if np.any(counts > 0) else theta
        if populated.size == 0:
            return False
        # a C() term's levels, a binned term's missing level or by-group level means
        return not is_flat(populated, self._eta_unit)

    def categorical_effects(self) -> pd.DataFrame:
        """``C()`` terms in reference coding: each level against the reference level.

        The reference is the level given by ``C(x, Treatment(level))`` (patsy's and
        formulaic's spelling; also ``Treatment(reference=level)``), else the first
        populated level. The fit identifies a categorical by the weighted sum-to-zero constraint; the
        differences θ_k − θ_ref are the same under any coding and are what an
        unpenalised GLM with treatment contrasts reports.

        Returns
        -------
        DataFrame
            ``term``, ``level``, ``reference``, ``effect`` (θ_k − θ_ref, link scale) and
            ``count`` (weighted training rows), one row per non-reference level.
        """
        m = self.model
        rows = []
        for j, block in enumerate(m.spec.blocks):
            if block.penalized:
                continue
            s, e = int(m.block_ptr[j]), int(m.block_ptr[j + 1])
            counts = m.bin_counts[s:e]
            populated = np.flatnonzero(counts > 0)
            if populated.size == 0:
                continue
            ref = int(populated[0])
            chosen = getattr(block, "reference", None)  # C(x, Treatment(level))
            if chosen is not None and chosen in list(block.levels):
                k_ref = list(block.levels).index(chosen)
                if counts[k_ref] <= 0:
                    raise ValueError(
                        f"{block.term}: the reference level {chosen!r} has no training weight."
                    )
                ref = k_ref
            labels = block.level_labels()
            for k in populated[populated != ref]:
                rows.append(
                    {"term": block.term, "level": labels[k], "reference": labels[ref],
                     "effect": float(self.coef[s + k] - self.coef[s + ref]),
                     "count": float(counts[k])}
                )  # fmt: skip
        return pd.DataFrame(rows, columns=["term", "level", "reference", "effect", "count"])

    def selected_terms(self) -> list[str]:
        """Terms with a non-zero effect (binned terms with at least one cut-point kept).

        Returns
        -------
        list of str
            Term names; ``C()`` and linear terms count when their effect is non-zero.
        """
        table = self.term_table()
        return [str(t) for t in table.index[table["selected"].astype(bool)]]
