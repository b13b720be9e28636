"""Identifiability of by-group terms that share one group column (design.md §7).

A varying-coefficient block ``bin(x, n):C(g)`` holds one chain per level of g, separated
by breaks (penalty weight 0 at every chain start), so each chain can be shifted as a
whole without changing the penalty: the block carries g's level means (a ``C(g)`` term
is absorbed). Two such blocks on the same group column, ``bin(x1):C(g) + bin(x2):C(g)``,
would both carry them, and the fit's levels would not be unique (the loss sees only
their sum per level of g).

The parametrisation used here: the **first** by-group block of a group column keeps g's
level means; every **later** block of the same group column gets one constraint per
level of g, Σ_k n_gk θ_gk = 0 over the bins k of level g's chain (design.md §7's
per-level constraint), so it holds within-level shapes only. Any solution of the
engine is moved to it exactly (:func:`move_level_means`): the weighted mean of each of
a later block's chains is subtracted from it and added to the first block's chain of
the same level. The penalty (shift-invariant per chain), every η and so the objective
are unchanged; the block-wide constraints n_jᵀθ_j = 0 still hold.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["shared_group_donors", "move_level_means"]


def shared_group_donors(groups: Sequence[Any]) -> dict[int, int]:
    """For every by-group block whose group column an earlier block already uses, that
    earlier (first) block.

    Parameters
    ----------
    groups : sequence
        The group column of every block (None for a block that is no by-group block).

    Returns
    -------
    dict
        ``{later block: first block of the same group column}``.
    """
    first: dict[Any, int] = {}
    donors: dict[int, int] = {}
    for j, g in enumerate(groups):
        if g is None:
            continue
        key = repr(g)
        if key in first:
            donors[j] = first[key]
        else:
            first[key] = j
    return donors


def move_level_means(
    coef: np.ndarray,
    block_ptr: np.ndarray,
    counts: np.ndarray,
    chains: Sequence[Sequence[tuple[int, int, Any]] | None],
    donors: dict[int, int],
) -> np.ndarray:
    """θ with every later shared by-group block centred within each level of its group.

    Parameters
    ----------
    coef : ndarray of shape (d,)
        θ of every block (not modified).
    block_ptr : ndarray of shape (p + 1,)
        Block offsets in θ.
    counts : ndarray of shape (d,)
        Weighted level counts n_k.
    chains : sequence
        Per block, its chains ``(first level, length, group level)`` (None: no by-group
        block).
    donors : dict
        ``{later block: first block}`` (:func:`shared_group_donors`).

    Returns
    -------
    ndarray of shape (d,)
        θ in the identified parametrisation (a copy; ``coef`` itself when no block is
        shared).
    """
    if not donors:
        return coef
    out = np.array(coef, dtype=np.float64, copy=True)
    for j, a in donors.items():
        sj, sa = int(block_ptr[j]), int(block_ptr[a])
        where = {repr(lvl): (first, m) for first, m, lvl in chains[a]}
        for first, m, lvl in chains[j]:
            sl = slice(sj + first, sj + first + m)
            n = counts[sl]
            total = float(n.sum())
            if total <= 0 or repr(lvl) not in where:
                continue
            shift = float(np.dot(n, out[sl])) / total
            out[sl] -= shift
            fa, ma = where[repr(lvl)]
            out[sa + fa : sa + fa + ma] += shift
    return out
