"""Pair terms chosen by the estimators: ``interactions=k`` (issue 25, design.md §10).

After the main-effects fit at the chosen λ (the CV estimators: cross-validated on the
main effects), every pair of binned features is ranked by the λ_max of its pair term
``bin(a, 16):bin(b, 16)`` at that fit (``model/_rank_pairs``, the ranking of
``bs.rank_pairs``); the top k pairs (or the pairs given) are added as grid blocks and
the model is refitted jointly — at the same λ, or, for the CV estimators, by
cross-validating again with the pairs. The pair blocks' coefficients are published
apart from ``coef_`` (``pair_terms_``), so that ``coef_``/``block_ptr_`` keep one block
per feature; prediction adds each pair's cell value (a cell without training rows adds
nothing). The methods that describe a model term by term (``results``, ``to_spec``,
``cut_points``, ...) refuse a fit with pairs by name for now.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ..core._validation import code_dtype
from ..design._assemble import BlockLayout, assemble
from ..design._binarizer import bin_codes
from ..engine._pair_screen import screen_columns
from ..model._rank_pairs import GRID_WEIGHT_RULES, ranking_table, working_gradient
from ._estimator_input import _feature_column

__all__ = ["PAIR_BINS", "check_interactions", "pair_eta", "refuse_pairs", "fit_pairs"]

#: Bins per axis of the estimators' pair terms (``bin(a):bin(b)``'s default).
PAIR_BINS = 16


def check_interactions(value: Any) -> int | list[tuple[Any, Any]]:
    """``interactions``: an integer k ≥ 0, or a list of pairs of features.

    Raises
    ------
    TypeError, ValueError
        Naming ``interactions`` and what it got.
    """
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"interactions must be an integer >= 0 or a list of pairs; got {value!r}.")
    if isinstance(value, (int, np.integer)):
        if value < 0:
            raise ValueError(f"interactions must be >= 0; got {value}.")
        return int(value)
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise TypeError(f"interactions must be an integer >= 0 or a list of pairs; got {value!r}.")
    pairs = []
    for pair in value:
        if isinstance(pair, (str, bytes)) or not hasattr(pair, "__len__") or len(pair) != 2:
            raise ValueError(f"interactions: each pair must be two features (a, b); got {pair!r}.")
        pairs.append((pair[0], pair[1]))
    return pairs


def refuse_pairs(est: Any, what: str) -> None:
    """Refuse ``what`` on a fit with pair terms (``interactions``), naming the pairs."""
    pairs = vars(est).get("interactions_") or []
    if pairs:
        raise NotImplementedError(
            f"{what} does not handle the pair terms {pairs} chosen by interactions= yet "
            "(a step surface is no chain of levels); fit with interactions=0, or with "
            "glm() and the pair terms bin(a):bin(b) in the formula."
        )


def _label(names: Any, j: int) -> str:
    return str(names[j]) if names is not None else f"x{j}"


def _resolve(feature: Any, names: Any, binned: list[int], p: int) -> int:
    """A feature given by name (or position for an array X) → its input position."""
    if names is not None and not isinstance(feature, (int, np.integer)):
        hits = [j for j in range(p) if str(names[j]) == str(feature)]
        if not hits:
            raise ValueError(f"interactions: {feature!r} is not a feature of X.")
        j = hits[0]
    elif isinstance(feature, (int, np.integer)) and not isinstance(feature, bool):
        j = int(feature)
        if not 0 <= j < p:
            raise ValueError(f"interactions: feature position {j} is outside X's {p} columns.")
    else:
        raise ValueError(
            f"interactions: {feature!r} names no feature (X has no column names: give "
            "positions)."
        )
    if j not in binned:
        raise ValueError(
            f"interactions: feature {_label(names, j)!r} is not a binned feature (a pair "
            "term pairs two binned features)."
        )
    return j


def fit_pairs(est: Any, problem: Any, sol: Any, lam: float, state: dict,
              refit_cv: bool) -> tuple[Any, float, dict]:  # fmt: skip
    """Rank pairs at the main-effects fit ``sol``, add the chosen ones, refit jointly.

    Returns the joint solution restricted to the main blocks (what ``_publish`` reads),
    its λ, and ``state`` with ``interactions_``, ``pair_ranking_`` and ``pair_terms_``
    (and, for the CV estimators, the CV of the model with the pairs).
    """
    wanted = check_interactions(est.interactions)
    kinds = problem.kinds
    names = problem.extra.get("feature_names_in_")
    by = problem.extra.get("by_")
    p = len(kinds)
    binned = [j for j in range(p) if kinds[j] == "bin" and (by is None or by[j] is None)]
    if len(binned) < 2:
        raise ValueError(
            f"interactions={est.interactions!r} needs at least two binned features; the model "
            f"has {len(binned)}."
        )
    rule = est.penalty_weights
    if not isinstance(rule, str) or rule not in GRID_WEIGHT_RULES:
        raise ValueError(
            "interactions: penalty_weights given as an array has no weights for a pair "
            f"term's grid edges; use one of {GRID_WEIGHT_RULES}."
        )
    cols = np.empty((problem.design.n_rows, len(binned)))
    for i, j in enumerate(binned):
        x = np.asarray(_feature_column(problem.X, j, names), dtype=np.float64)
        if not np.all(np.isfinite(x)):
            raise ValueError(
                f"interactions: feature {_label(names, j)!r} has missing values; a pair term "
                "has no missing level (drop those rows, or interactions=0)."
            )
        cols[:, i] = x
    labels = [_label(names, j) for j in binned]
    if isinstance(wanted, list):
        todo = []
        for a, b in wanted:
            ja, jb = _resolve(a, names, binned, p), _resolve(b, names, binned, p)
            if ja == jb:
                raise ValueError(f"interactions: the pair {(a, b)!r} pairs a feature with itself.")
            todo.append((binned.index(min(ja, jb)), binned.index(max(ja, jb))))
        todo = list(dict.fromkeys(todo))
    else:
        todo = None
    design = problem.design
    unit = design.unit_weight
    eta = sol.eta
    if eta is None:
        eta = design.linear_predictor(sol.coef, sol.dense_coef, sol.intercept)
    grad = working_gradient(problem.family, problem.y, eta, unit, who="interactions")
    screen, binner = screen_columns(
        cols, grad, unit, n_bins=PAIR_BINS, binning_weight=problem.sample_weight,
        pairs=todo, weights=rule,
    )  # fmt: skip
    ranking = ranking_table(screen, labels, lam)
    chosen = [tuple(pq) for pq in screen.pairs] if todo is not None else [
        tuple(pq) for pq in screen.pairs[: int(wanted)]
    ]  # fmt: skip
    state = dict(state, pair_ranking_=ranking)
    if not chosen:
        return sol, lam, dict(state, interactions_=[])
    # the pair blocks: the observed cells of each grid, a level each (+ the empty cell)
    axes = binner.transform_codes(cols)
    rows, layout, extra_sizes, terms = [], list(problem.layout), [], []
    for ia, ib in chosen:
        Ka, Kb = int(binner.n_bins_[ia]), int(binner.n_bins_[ib])
        flat = axes[ia].astype(np.intp) * Kb + axes[ib]
        cells = np.unique(flat)
        rows.append(np.searchsorted(cells, flat))
        term = f"bin({labels[ia]}, {Ka}):bin({labels[ib]}, {Kb})"
        layout.append(BlockLayout(penalized=True, chain_length=len(cells) + 1,
                                  grid=(cells, (Ka, Kb), term)))  # fmt: skip
        extra_sizes.append(len(cells) + 1)
        terms.append({
            "features": (binned[ia], binned[ib]),
            "edges": (np.asarray(binner.edges_[ia], dtype=np.float64),
                      np.asarray(binner.edges_[ib], dtype=np.float64)),
            "cells": cells.astype(np.int64),
            "term": term,
        })  # fmt: skip
    sizes = np.concatenate([np.diff(problem.block_ptr), extra_sizes]).astype(np.intp)
    ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
    codes = np.empty((len(sizes), design.n_rows), dtype=code_dtype(int(sizes.max())))
    codes[: design.codes.shape[0]] = design.codes
    for k, r in enumerate(rows):
        codes[design.codes.shape[0] + k] = r
    joint_design, weights = assemble(
        codes, ptr, layout, rule, dense=design.dense, offset=design.offset,
        sample_weight=problem.sample_weight,
    )  # fmt: skip
    joint = replace(
        problem, design=joint_design, block_ptr=ptr, penalty_weights=weights,
        chain=np.concatenate([problem.chain, extra_sizes]).astype(np.intp),
        chains=list(problem.chains) + [[(0, s)] for s in extra_sizes],
        by_groups=list(problem.by_groups) + [None] * len(extra_sizes), layout=layout,
    )  # fmt: skip
    if refit_cv:  # the CV again, with the pairs: its λ and its fit
        jsol, lam, cv_state = est._choose(joint)
        state.update(cv_state)
    else:  # the main effects' λ
        jsol = joint.prepared().solve(lam, **est._solver_options())
    d = int(problem.block_ptr[-1])
    for k, t in enumerate(terms):
        t["coef"] = np.array(jsol.coef[int(ptr[len(problem.layout) + k]) :
                                       int(ptr[len(problem.layout) + k + 1])], dtype=np.float64)
    main = replace(jsol, coef=jsol.coef[:d], bin_counts=jsol.bin_counts[:d])
    pairs = [(names[binned[a]] if names is not None else binned[a],
              names[binned[b]] if names is not None else binned[b]) for a, b in chosen]  # fmt: skip
    return main, float(lam), dict(state, interactions_=pairs, pair_terms_=terms)


def pair_eta(st: dict, X: Any, n: int) -> np.ndarray | None:
    """The pair terms' part of η on X (None without pair terms)."""
    terms = st.get("pair_terms_") or []
    if not terms:
        return None
    from ..core._base import inconsistent

    names = st.get("feature_names_in_")
    out = np.zeros(n)
    for t in terms:
        try:
            (ja, jb), (ea, eb) = t["features"], t["edges"]
            cells, coef = np.asarray(t["cells"], dtype=np.int64), np.asarray(t["coef"], dtype=np.float64)
            ok = len(coef) == len(cells) + 1 and np.all(np.isfinite(coef)) and len(cells) > 0
        except (KeyError, TypeError, ValueError):
            ok = False
        if not ok:
            raise inconsistent("pair_terms_ does not hold a pair's features, edges, cells and coef")
        Kb = len(eb) + 1
        codes = []
        for j, edges in ((ja, ea), (jb, eb)):
            x = np.asarray(_feature_column(X, j, names), dtype=np.float64)
            c, bad = bin_codes(x, np.asarray(edges, dtype=np.float64), False)
            if bad >= 0:
                raise ValueError(
                    f"column {_label(names, j)!r} has missing or infinite values; the pair term "
                    f"{t.get('term', '')} has no missing level."
                )
            codes.append(c.astype(np.int64))
        flat = codes[0] * Kb + codes[1]
        pos = np.minimum(np.searchsorted(cells, flat), len(cells) - 1)
        out += np.where(cells[pos] == flat, coef[pos], 0.0)
    return out
