"""The data of an estimator's fit: validated, binned, assembled (``_problem``).

``_ProblemMixin._problem`` is the first step of ``fit`` (shared by the *CV estimators):
X, y, weights and offset checked, the feature kinds read from the parameters, the bins
learned (or, for a Dask X, learned from per-partition summaries and coded on the
workers: ``_from_dask``), the by-group and strata columns, and the engine's design
assembled by the one assembler of every door (``design/_assemble``). It returns an
``_EstimatorProblem``: what ``_choose`` solves and ``_publish`` publishes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core._validation import check_groups, check_offset, check_sample_weight, code_dtype
from ..design._assemble import BlockLayout, assemble
from ..design._binarizer import Binarizer
from ..design._design import BinnedDesign
from ..design._features import (
    BLOCK_KINDS,
    category_codes,
    feature_groups,
    feature_kinds,
    feature_shapes,
    feature_strata,
    learn_levels,
    linear_column,
)
from ..design._identify import move_level_means, shared_group_donors
from ..distributed._dask import is_dask_collection
from ..engine._solvers import Prepared
from ..families import _cox
from ..families._families import get_family
from ._estimator_input import (
    _binned_columns,
    _by_block,
    _check_missing,
    _feature_column,
    _feature_names,
    _group_levels,
    _strata_labels,
    _validate_X,
)


@dataclass
class _EstimatorProblem:
    """The data of an estimator's fit once validated and binned (all rows).

    ``design`` holds the codes, blocks and kinds, offset and weights; ``chain`` the
    length of each block's TV chain (its missing level excluded); ``fit_intercept`` is
    the engine's (True when the intercept is absorbed into the first block); ``extra``
    is fitted state learned from y (a classifier's ``classes_``).
    """

    X: Any
    binarizer: Any
    design: BinnedDesign
    block_ptr: np.ndarray
    chain: np.ndarray
    y: np.ndarray
    family: Any
    penalty_weights: np.ndarray
    fit_intercept: bool
    absorbed: bool
    extra: dict = field(default_factory=dict)
    #: per input feature "bin" / "categorical" / "linear" (see ``_features``)
    kinds: np.ndarray | None = None
    #: per categorical feature: its levels and whether it has a missing level
    categories: list = field(default_factory=list)
    categorical_missing: list = field(default_factory=list)
    #: CV group labels (the *CV estimators' ``fit(..., groups=)``), checked
    groups: np.ndarray | None = None
    #: per block: its chains ``(first level, length)`` (several for a by-group feature)
    chains: list = field(default_factory=list)
    #: per block: the group column of a by-group feature (None for the others)
    by_groups: list = field(default_factory=list)
    #: per block: what the assembler read of it (pair terms are added to it, ``_estimator_pairs``)
    layout: list = field(default_factory=list)
    #: the checked row weights (None without), as the bins and ω were learned with them
    sample_weight: np.ndarray | None = None

    @property
    def by_donors(self) -> dict[int, int]:
        """``{later by-group block: first block of the same group}`` (``_identify``)."""
        return shared_group_donors(self.by_groups)

    def identified(self, coef: np.ndarray) -> np.ndarray:
        """θ with the level means of a shared group in its first by-group block only."""
        donors = self.by_donors
        if not donors:
            return coef
        chains = [[(a, m, i) for i, (a, m) in enumerate(ch)] for ch in self.chains]
        return move_level_means(coef, self.block_ptr, self.design.counts, chains, donors)

    def prepared(self) -> Prepared:
        """The engine's problem on all rows."""
        return Prepared.from_design(
            self.design, self.y, family=self.family, penalty_weights=self.penalty_weights,
            fit_intercept=self.fit_intercept,
        )  # fmt: skip

    def path_data(self) -> Any:
        """The engine's path/CV data (``_path.PathData``) on the same design."""
        from ..engine._path import PathData

        return PathData.from_design(
            self.design, self.y, self.family, self.penalty_weights,
            fit_intercept=self.fit_intercept,
        )  # fmt: skip


class _ProblemMixin:
    """``fit``'s first step: the estimator's data as an ``_EstimatorProblem``."""

    def _from_dask(self, X, y, sample_weight, offset):
        """A Dask X: the Binarizer fitted from per-partition summaries (``_dask``), the
        binned columns coded on the workers; returns the in-memory X with those columns
        replaced by their codes, y, weights, offset and ``(binarizer, codes)``."""
        from ..distributed._dask import (
            collect_estimator_data,
            fit_binarizer_dask,
            meta_of,
            partition_lengths,
            with_row_columns,
        )

        if y is None:
            raise ValueError("y is None; a Dask X needs y (a Dask Series/Array or an array).")
        X, row_values, extra = with_row_columns(X, y=y, w=sample_weight, off=offset)
        y, sample_weight, offset = row_values["y"], row_values["w"], row_values["off"]
        meta = meta_of(X)
        if extra:
            meta = meta.drop(columns=extra)
        names = _feature_names(meta)
        kinds = feature_kinds(
            meta, getattr(self, "categorical_features", None),
            getattr(self, "linear_features", None), names,
        )  # fmt: skip
        binned = np.flatnonzero(kinds == "bin")
        binarizer = None
        if binned.size:
            n_bins = self.n_bins
            if binned.size != len(kinds) and np.ndim(n_bins) == 1 and len(n_bins) == len(kinds):
                n_bins = [n_bins[j] for j in binned]
            binarizer = Binarizer(
                n_bins=n_bins, missing=self.missing,
                min_bin_count=getattr(self, "min_bin_count", 1),
            )  # fmt: skip
            info = fit_binarizer_dask(binarizer, X, binned, names, sample_weight, extra=extra)
            lengths = info["rows"]
        else:
            lengths = partition_lengths(X)
        data = collect_estimator_data(
            X, y, binarizer, binned, lengths, sample_weight, offset, extra=extra
        )
        prebinned = (binarizer, data["codes"] if binned.size else None)
        return data["X"], data["y"], data["sample_weight"], data["offset"], prebinned

    def _problem(self, X, y, sample_weight, offset, groups=None) -> _EstimatorProblem:
        """Validate the data, learn the bins and build the engine's design (all rows).

        Blocks follow the input order of the binned and categorical features; the
        linear features are the design's dense columns, in input order (the layout of
        the formula naming the features in that order). ``groups`` (CV group labels,
        the *CV estimators only) are checked and kept.
        """
        family = get_family(self.family)
        _check_missing(self.missing)
        by, strata = getattr(self, "by", None), getattr(self, "strata", None)
        if strata is not None and not family.survival:
            raise ValueError(
                f"strata={strata!r} needs family='cox' (one baseline hazard per stratum); "
                f"the family is {self.family!r}."
            )
        prebinned = None
        if is_dask_collection(X) and (by or strata is not None):
            raise ValueError(
                "by= and strata= are not supported on a Dask X (bin(x):C(g) and strata() "
                "are refused on Dask DataFrames too); compute X into memory first."
            )
        if is_dask_collection(X):  # bins from mergeable summaries, codes per partition
            X, y, sample_weight, offset, prebinned = self._from_dask(X, y, sample_weight, offset)
        X, n = _validate_X(X)
        y, extra = self._prepare_y(y, n)
        cv_groups = None if groups is None else check_groups(groups, n)
        family.validate_y(y)  # 0/1 for binomial: no proportions here, unlike glm()
        if family.estimated_parameter is not None:  # NB θ: estimated by glm() only
            raise ValueError(
                f"family={self.family!r}: the estimators do not estimate "
                f"{family.estimated_parameter}; fix it (e.g. "
                "binarsity_stats.families.NegativeBinomial(theta=2.0)) or use glm()."
            )
        sw = check_sample_weight(sample_weight, n)
        off = check_offset(offset, n)
        names = _feature_names(X)
        p = int(X.shape[1])
        kinds = feature_kinds(
            X, getattr(self, "categorical_features", None),
            getattr(self, "linear_features", None), names,
        )  # fmt: skip
        strata_pos, kinds = feature_strata(strata, kinds, names)
        groups, kinds = feature_groups(by, kinds, names)
        shapes = feature_shapes(getattr(self, "monotone", None), kinds, names)
        if strata_pos.size:  # family="cox": the packed response with the strata
            labels = _strata_labels(X, strata_pos, names)
            y = _cox.encode(*extra["_survival"], labels)
            extra = dict(extra, _strata=labels)
        binned = np.flatnonzero(kinds == "bin")
        binarizer, bcodes = None, None
        if prebinned is not None:
            binarizer, bcodes = prebinned
        elif binned.size:
            n_bins = self.n_bins
            if binned.size != p and np.ndim(n_bins) == 1 and len(n_bins) == p:
                n_bins = [n_bins[j] for j in binned]  # one entry per input feature
            binarizer = Binarizer(
                n_bins=n_bins, missing=self.missing,
                min_bin_count=getattr(self, "min_bin_count", 1),
            )  # fmt: skip
            # fit_transform codes the columns it has just read; .T: the (p, n) layout
            bcodes = binarizer.fit_transform(_binned_columns(X, binned), sample_weight=sw).T
        sizes, chain, rows, dense, chains, by_groups = [], [], [], [], [], []
        categories, cat_missing = [], []
        by_cols = np.full(p, None, dtype=object)
        by_levels: list = [None] * p
        b = 0
        for j in range(p):
            label = str(names[j]) if names is not None else f"column {j}"
            col = _feature_column(X, j, None)
            if kinds[j] == "linear":
                dense.append(linear_column(col, label))
            elif kinds[j] not in BLOCK_KINDS:  # a by= group or a strata column: no block
                continue
            elif kinds[j] == "bin" and groups[j] >= 0:  # one chain per level of the group
                g = int(groups[j])
                glabel = str(names[g]) if names is not None else f"column {g}"
                xlabel = str(names[j]) if names is not None else j
                if binarizer.has_missing_level_[b]:
                    raise ValueError(
                        f"by[{xlabel!r}]: column {label!r} contains missing values; a "
                        "by-group feature has no missing level (bin(x):C(g) neither): drop "
                        "those rows."
                    )
                gcol = _feature_column(X, g, None)
                levels = _group_levels(gcol, glabel, xlabel)
                d = int(binarizer.n_bins_[b])
                sizes.append(_by_block(xlabel, glabel, levels, d))
                gcodes = category_codes(gcol, levels, False, glabel).astype(np.intp)
                rows.append(gcodes * d + bcodes[b])
                chain.append(sizes[-1])
                chains.append([(i * d, d) for i in range(len(levels))])
                by_cols[j] = str(names[g]) if names is not None else g
                by_groups.append(g)
                by_levels[j] = np.asarray(levels, dtype=object)
                b += 1
            elif kinds[j] == "bin":
                rows.append(bcodes[b])
                sizes.append(int(binarizer.n_bins_[b]))
                chain.append(sizes[-1] - int(binarizer.has_missing_level_[b]))
                chains.append([(0, chain[-1])])
                by_groups.append(None)
                b += 1
            else:
                levels, has_missing = learn_levels(col, label, self.missing)
                rows.append(category_codes(col, levels, has_missing, label))
                categories.append(np.asarray(levels, dtype=object))
                cat_missing.append(has_missing)
                sizes.append(len(levels) + int(has_missing))
                chain.append(len(levels))
                chains.append([(0, chain[-1])])
                by_groups.append(None)
        sizes = np.asarray(sizes, dtype=np.intp)
        chain = np.asarray(chain, dtype=np.intp)
        block_ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
        if rows:
            codes = np.empty((len(rows), n), dtype=code_dtype(int(sizes.max())))
            for k, r in enumerate(rows):
                codes[k] = r
        else:
            codes = np.empty((0, n), dtype=np.uint8)
        Z = np.ascontiguousarray(np.column_stack(dense), dtype=np.float64) if dense else None
        # a binned feature is a TV chain (a missing level sits outside it), monotone in
        # its direction if given; a categorical one has free levels, unpenalised as a
        # C() term is; kinds and ω by the one assembler of every door (design/_assemble)
        has_block = np.isin(kinds, BLOCK_KINDS)
        free = kinds[has_block] == "categorical"
        block_shapes = shapes[has_block]
        layout = [
            BlockLayout(
                penalized=not free[k], chain_length=int(chain[k]), monotone=block_shapes[k],
                chains=chains[k] if len(chains[k]) > 1 else None,
            )  # fmt: skip
            for k in range(len(sizes))
        ]
        design, weights = assemble(
            codes, block_ptr, layout, self.penalty_weights, dense=Z, offset=off, sample_weight=sw
        )
        # fit_intercept=False has the formula's '- 1' meaning: the engine fits β0 and the
        # first block's levels absorb it (the TV penalty is shift-invariant, so this is
        # the optimum with the first block freely coded; see _absorbed_intercept)
        absorbed = not self.fit_intercept and len(sizes) > 0
        extra = dict(extra, feature_kinds_=kinds, monotone_=shapes, by_=by_cols,
                     by_levels_=by_levels,
                     strata_=[str(names[j]) if names is not None else int(j)
                              for j in strata_pos])  # fmt: skip
        if names is not None:
            extra["feature_names_in_"] = names
            if hasattr(X, "dtypes"):  # for the exporters: a bool column is 1/0 in SQL
                from ..design._spec import column_kinds

                extra["column_kinds_"] = column_kinds(X, [str(c) for c in names])
        return _EstimatorProblem(
            X=X, binarizer=binarizer, design=design, block_ptr=block_ptr, chain=chain, y=y,
            family=family, penalty_weights=weights,
            fit_intercept=bool(self.fit_intercept) or absorbed, absorbed=absorbed,
            extra=extra, kinds=kinds, categories=categories, categorical_missing=cat_missing,
            groups=cv_groups, chains=chains, by_groups=by_groups, layout=layout,
            sample_weight=sw,
        )  # fmt: skip
