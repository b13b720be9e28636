"""The recipe of an estimator's results: its blocks from the fitted state, no formula.

``estimator_spec`` turns a fitted estimator's state (cut points, levels, feature kinds,
by-groups, strata, linear columns) into the :class:`~binarsity_stats.formula._recipe.Block`
objects the formula door builds, labelled as the formula door labels them
(``bin(age)``, ``C(region)``, ``bin(x):C(g)``); :class:`EstimatorSpec` is the
``DesignSpec`` of those blocks, coding the training rows and any new rows under the
fitted cut points and levels with the design layer's coding rules (``bin_codes``,
``category_codes``, ``linear_column``) — nothing is learned again, no formula text is
written, and a column name is only ever a key of the data.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..core._validation import code_dtype
from ..design._binarizer import bin_codes
from ..design._column_access import raise_bad_value
from ..design._cuts import distinct_in_levels
from ..design._features import BLOCK_KINDS, category_codes, fitted_column, linear_column
from ..design._spec import column_kinds
from ..formula._columns import as_float
from ..formula._names import shown_name
from ..formula._recipe import Block, Design, DesignSpec

__all__ = ["EstimatorSpec", "estimator_spec"]


@dataclass
class EstimatorSpec(DesignSpec):
    """A ``DesignSpec`` of plain columns: the blocks of a fitted estimator.

    ``model_spec`` is None (there is no formulaic state); ``formula`` is display text
    only, made of the blocks' labels (never parsed); ``transform`` codes rows by the
    blocks' cut points and levels, reading each column by its name.
    """

    def transform(self, data: Any) -> Design:
        """The design of new rows under the fitted cut points and levels.

        Parameters
        ----------
        data : DataFrame or mapping of columns
            Rows holding every column the model reads (``required``).

        Returns
        -------
        Design
            Codes (blocks × rows) and the dense linear columns.

        Raises
        ------
        ValueError
            A missing column, an unseen level, or a missing value where the model has
            no missing level (each message names the column).
        """
        data = self.frame_of(data)
        n = len(data)
        width = max((b.n_levels for b in self.blocks), default=1)
        codes = np.empty((len(self.blocks), n), dtype=code_dtype(width))
        for k, block in enumerate(self.blocks):
            if block.kind == "bin":
                codes[k] = _bin_codes(block, data)
            else:
                codes[k] = category_codes(
                    data[block.column], block.levels, block.has_missing_level, str(block.column)
                )
        dense = None
        if self.dense_columns:
            cols = [linear_column(data[c], str(c)) for c in self.dense_columns]
            dense = np.ascontiguousarray(np.column_stack(cols), dtype=np.float64)
        return Design(codes=codes, block_ptr=self.block_ptr, dense=dense, offset=None)


def _bin_codes(block: Block, data: Any) -> np.ndarray:
    """Codes of a binned block (one chain per level of its group for a by-group one)."""
    x = as_float(data[block.column], str(block.column), "a binned feature")
    codes, bad = bin_codes(x, block.edges, bool(block.has_missing_level))
    if bad >= 0:
        raise_bad_value(x[bad], f"column {str(block.column)!r}", bad, fitted=True)
    if block.by is None:
        return codes
    group = category_codes(data[block.by], block.by_levels, False, str(block.by))
    return group.astype(np.intp) * block.n_bins + codes


def _bin_labels(est: Any, st: dict) -> list[str | None]:
    """Per feature: the options of its ``bin()`` label (``, 20``, ``, min_count=5``...)."""
    kinds = st["_kinds"]
    k_min = int(getattr(est, "min_bin_count", 1) or 1)
    opt = f", min_count={k_min}" if k_min > 1 else ""
    per_feature = np.ndim(est.n_bins) == 1
    nb = list(est.n_bins) if per_feature else None
    if per_feature and len(nb) != len(kinds):  # one entry per binned feature
        it = iter(nb)
        nb = [next(it) if k == "bin" else None for k in kinds]
    shapes = st.get("monotone_")  # None: fitted before monotone features existed
    out: list[str | None] = []
    for j, kind in enumerate(kinds):
        shape = shapes[j] if shapes is not None else None
        if kind != "bin":
            out.append(None)
            continue
        opts = opt + (f", monotone={shape!r}" if shape else "")
        out.append(f", {int(nb[j])}{opts}" if per_feature else opts)
    return out


def estimator_spec(
    est: Any, st: dict, data: Any, names: list[str], response: str
) -> tuple[EstimatorSpec, Design]:
    """The recipe of a fitted estimator and the design of its training rows.

    Parameters
    ----------
    est : BinarsityGLM
        The fitted estimator (its ``n_bins``, ``min_bin_count``, ``fit_intercept``).
    st : dict
        Its validated fitted state (``est._fitted()``).
    data : DataFrame
        The training features, one column per input feature under ``names``.
    names : list of str
        The features' column names (``x0``, ``x1``... for an array).
    response : str
        The response's name, for the display text of the recipe.

    Returns
    -------
    spec : EstimatorSpec
        Blocks in the order of the fitted θ, dense columns in the order of
        ``linear_coef_``, the strata columns.
    design : Design
        The training rows coded by ``spec`` (the fitted cut points and levels).
    """
    kinds, bins = st["_kinds"], st["_bins"]
    shapes = st.get("monotone_")
    by = st.get("by_")
    options = _bin_labels(est, st)
    blocks: list[Block] = []
    shown: list[str] = []  # the display text of each term
    dense: list[str] = []
    used: set[str] = set()
    b = c = 0
    for j, kind in enumerate(kinds):
        name, q = names[j], shown_name(names[j])
        shape = shapes[j] if shapes is not None else None
        if kind == "linear":
            dense.append(name)
            shown.append(q)
            used.add(name)
            continue
        if kind not in BLOCK_KINDS:  # a by= group or a strata column: no block
            continue
        used.add(name)
        if kind == "bin":
            edges = np.asarray(bins.edges[b], dtype=np.float64)
            has_missing = bool(bins.has_missing[b])
            term = f"bin({q}{options[j]})"
            fields: dict[str, Any] = {}
            if by is not None and by[j] is not None:  # one chain per level of the group
                g = names[fitted_column(st, by[j])]
                levels = tuple(st["by_levels_"][j])
                fields = {"by": g, "by_levels": levels}
                used.add(g)
                shown.append(f"bin({q}{options[j]}, by={shown_name(g)})")
                term = f"{term}:C({shown_name(g)})"
                n_levels = len(levels) * (len(edges) + 1)
            else:
                shown.append(term)
                n_levels = len(edges) + 1 + int(has_missing)
            blocks.append(Block(
                term=term, kind="bin", column=name, n_levels=n_levels, edges=edges,
                has_missing_level=has_missing, monotone=shape, **fields,
            ))  # fmt: skip
            b += 1
            continue
        if kind == "ordered":  # an ordered pandas Categorical: its categories' order
            term = f"ordered({q}, monotone={shape!r})" if shape else f"ordered({q})"
        else:
            term = f"C({q})"
        levels = tuple(st["categories_"][c])
        has_missing = bool(st["categorical_missing_"][c])
        blocks.append(Block(
            term=term, kind="categorical", column=name, n_levels=len(levels) + int(has_missing),
            levels=levels, has_missing_level=has_missing, ordered=kind == "ordered",
            monotone=shape if kind == "ordered" else None,
        ))  # fmt: skip
        shown.append(term)
        c += 1
    strata = [names[fitted_column(st, s)] for s in st.get("strata_") or ()]
    rhs = " + ".join(shown) + ("" if est.fit_intercept else " - 1")
    if strata:
        rhs += f" + strata({', '.join(shown_name(s) for s in strata)})"
    per_feature = np.ndim(est.n_bins) == 1
    spec = EstimatorSpec(
        formula=f"{response} ~ {rhs}", rhs_formula=rhs, model_spec=None, blocks=blocks,
        block_columns=[blk.column for blk in blocks], dense_columns=dense, offset_columns=[],
        fit_intercept=bool(est.fit_intercept), n_bins=50 if per_feature else int(est.n_bins),
        missing=est.missing, required=sorted(used), strata=strata or None,
        column_kinds=column_kinds(data, sorted(used)),  # for the exporters, as glm()'s
    )  # fmt: skip
    design = spec.transform(data)
    # what the labels read of the training rows: the range of a binned column and the
    # levels that held one distinct value (labelled "= v"), as bin() records them
    for k, blk in enumerate(spec.blocks):
        if blk.kind != "bin":
            continue
        x = as_float(data[blk.column], str(blk.column), "a binned feature")
        codes = design.codes[k] if blk.by is None else design.codes[k] % blk.n_bins
        distinct, single = distinct_in_levels(x, codes, len(blk.edges) + 1)
        spec.blocks[k] = replace(
            blk, data_min=float(np.nanmin(x)), data_max=float(np.nanmax(x)),
            distinct=tuple(distinct), single_values=tuple(single),
        )  # fmt: skip
    return spec, design
