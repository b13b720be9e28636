"""One assembler of the engine's design for every front door (the formula, the estimators).

A door reads its input its own way (a formula's terms, an estimator's columns and
feature kinds) and ends with the same facts about every block: its codes, whether it is
a penalised chain or free levels, its monotone direction, how many of its levels form
the chain (a missing level sits outside), and — for a by-group block — its chains, one
per level of the group. :func:`assemble` turns those facts into the engine's
:class:`~binarsity_stats.design._design.BinnedDesign` with its block kinds and the
penalty weights ω, so that which kind a block gets and how it is weighted is decided
in one place (:func:`block_penalty_weights`, :func:`block_kinds`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from ..core._statistics import grid_dof
from ..penalty._grid import GridKind, grid_block, grid_weights
from ..penalty._penalty import by_chain_weights, penalty_weights
from ._design import BinnedDesign

__all__ = ["BlockLayout", "assemble", "block_kinds", "block_penalty_weights", "grid_kind"]


@dataclass(frozen=True)
class BlockLayout:
    """What the assembler needs to know of one block of the design.

    Parameters
    ----------
    penalized : bool
        A chain under a named weighting (``bin()``); False for free levels (``C()``),
        which a weight array may still penalise as a chain over its levels.
    chain_length : int
        Levels of the block in its TV chain (the rest — a missing level — get weight 0).
    monotone : {"increasing", "decreasing"} or None, default=None
        The direction of a monotone chain.
    chains : sequence of tuple or None, default=None
        ``(first level, number of levels, ...)`` of every chain of a by-group block
        (each weighted as a chain, no penalty across them); None for a plain block.
    grid : tuple or None, default=None
        ``(cells, (K_a, K_b), term)`` of a pair term's grid block (design.md §10): its
        observed cells (flat ids, one level each, in order), the grid's shape and the
        term for messages. Its edges are weighted by the named rule applied to every
        row and column of the grid (``_grid.grid_weights``); its kind is ``"grid"``.
    """

    penalized: bool
    chain_length: int
    monotone: str | None = None
    chains: Sequence[tuple] | None = None
    grid: tuple | None = None


def block_penalty_weights(
    kind: str | np.ndarray,
    counts: np.ndarray,
    block_ptr: np.ndarray,
    layout: Sequence[BlockLayout],
) -> np.ndarray:
    """The penalty weights ω of every level of the design's blocks.

    The named weighting (or the given array) of
    :func:`~binarsity_stats.penalty._penalty.penalty_weights` on the chains; with a named
    weighting a block of free levels gets no penalty; a by-group block has each of its
    chains weighted as a chain (:func:`~binarsity_stats.penalty._penalty.by_chain_weights`).

    Parameters
    ----------
    kind : {"theory", "uniform", "balanced"} or ndarray of shape (d,)
        The weighting.
    counts : ndarray of shape (d,)
        Weighted level counts (on weights of any common scale: ω depends on shares only).
    block_ptr : ndarray of shape (p + 1,)
        Block offsets.
    layout : sequence of BlockLayout
        One per block.

    Returns
    -------
    ndarray of shape (d,)
        ω, 0 at every block and chain start.
    """
    bp = np.asarray(block_ptr)
    chain = np.asarray([b.chain_length for b in layout], dtype=np.intp)
    w = penalty_weights(kind, counts, bp, chain)
    if isinstance(kind, str):
        for j, block in enumerate(layout):
            if not block.penalized:
                w[bp[j] : bp[j + 1]] = 0.0
    for j, block in enumerate(layout):
        if block.chains is not None:
            s, e = int(bp[j]), int(bp[j + 1])
            w[s:e] = by_chain_weights(kind, counts[s:e], w[s:e], list(block.chains))
        if block.grid is not None:
            w[bp[j] : bp[j + 1]] = 0.0  # a grid's weights are on its edges (its kind)
    return w


def grid_kind(kind: str | np.ndarray, counts: np.ndarray, grid: tuple) -> GridKind:
    """The kind of a pair term's block: its GridBlock with the edge weights of ``kind``.

    Parameters
    ----------
    kind : {"theory", "uniform", "balanced"}
        The weighting (a weight array cannot weigh a grid's edges: refused).
    counts : ndarray
        The block's weighted level counts (its cells first).
    grid : tuple
        ``BlockLayout.grid``.

    Returns
    -------
    GridKind
    """
    cells, shape, term = grid
    if not isinstance(kind, str):
        raise ValueError(
            f"penalty_weights as an array has no weights for the edges of the pair term "
            f"{term!r}; use a named weighting ('balanced', 'theory', 'uniform')."
        )
    cells = np.asarray(cells, dtype=np.intp)
    grid_counts = np.zeros(int(shape[0]) * int(shape[1]))
    grid_counts[cells] = counts[: len(cells)]
    omega_a, omega_b = grid_weights(grid_counts.reshape(shape), kind)
    block = grid_block(cells, shape, omega_a, omega_b)
    # at λ = ∞ every penalised edge is fused; the margins must then fix the surface at
    # 0 (the null fit and λ_max assume it): not so when the cells fall into groups that
    # no penalised edge joins and whose values the margins leave free (isolated cells
    # in a checkerboard of empty ones)
    fused = SimpleNamespace(
        edges=block.edges[block.edge_weights > 0], n_cells=block.n_cells,
        difference=lambda t: np.zeros(int(np.sum(block.edge_weights > 0))),
        margin_matrix=block.margin_matrix,
    )  # fmt: skip
    if grid_dof(fused, np.zeros(block.n_cells), counts[: len(cells)], 0.0):
        raise ValueError(
            f"pair term {term!r}: its cells with training rows fall into groups that no "
            "two neighbouring cells join (e.g. isolated cells in sparse corners of the "
            "grid) and that its margins do not fix, so the surface has no λ_max; use "
            "fewer bins per axis."
        )
    return GridKind(block)


def block_kinds(
    weights: np.ndarray, block_ptr: np.ndarray, layout: Sequence[BlockLayout],
    counts: np.ndarray | None = None, penalty: str | np.ndarray | None = None,
) -> list[str]:
    """The kind of every block: a chain (``"tv"`` or its monotone direction) or ``"free"``.

    A penalised block is a chain; a block of free levels becomes one when the weights
    give one of its edges a positive weight (a weight array penalising a ``C()`` term
    over its levels in their order).

    Parameters
    ----------
    weights : ndarray of shape (d,)
        ω (:func:`block_penalty_weights`).
    block_ptr : ndarray of shape (p + 1,)
        Block offsets.
    layout : sequence of BlockLayout
        One per block.
    counts : ndarray of shape (d,), optional
        Weighted level counts; needed by a grid block (:func:`grid_kind`).
    penalty : str, optional
        The named weighting; needed by a grid block.

    Returns
    -------
    list of str
        One kind name per block (a grid block's is a ``GridKind``).
    """
    bp = np.asarray(block_ptr)
    kinds = []
    for j, block in enumerate(layout):
        if block.grid is not None:
            if counts is None:
                raise ValueError("block_kinds: a grid block needs the level counts.")
            kinds.append(grid_kind(penalty, counts[bp[j] : bp[j + 1]], block.grid))
            continue
        chain = block.penalized or bool(np.any(weights[bp[j] + 1 : bp[j + 1]] > 0))
        kinds.append((block.monotone or "tv") if chain else "free")
    return kinds


def assemble(
    codes: np.ndarray,
    block_ptr: np.ndarray,
    layout: Sequence[BlockLayout],
    penalty: str | np.ndarray,
    *,
    dense: np.ndarray | None = None,
    offset: np.ndarray | None = None,
    sample_weight: np.ndarray | None = None,
    ones: np.ndarray | None = None,
) -> tuple[BinnedDesign, np.ndarray]:
    """The engine's design of a door's blocks: kinds and penalty weights decided once.

    Parameters
    ----------
    codes : ndarray of shape (p, n)
        The level of every row in every block.
    block_ptr : ndarray of shape (p + 1,)
        Block offsets.
    layout : sequence of BlockLayout
        One per block.
    penalty : {"theory", "uniform", "balanced"} or ndarray of shape (d,)
        The weighting ω.
    dense : ndarray of shape (n, q), optional
        The unbinned columns.
    offset : ndarray of shape (n,), optional
        The total offset.
    sample_weight : ndarray of shape (n,), optional
        Row weights.
    ones : ndarray of shape (n,), optional
        The caller's row vector of ones, shared as the unit weights when
        ``sample_weight`` is None (a row vector fewer; never written).

    Returns
    -------
    design : BinnedDesign
        With the kind of every block.
    weights : ndarray of shape (d,)
        ω.
    """
    if len(layout) != len(block_ptr) - 1:
        raise ValueError(
            f"assemble: {len(layout)} block layouts for {len(block_ptr) - 1} blocks."
        )
    design = BinnedDesign(codes, block_ptr, dense=dense, offset=offset,
                          sample_weight=sample_weight, ones=ones)  # fmt: skip
    weights = block_penalty_weights(penalty, design.counts, block_ptr, layout)
    kinds = block_kinds(weights, block_ptr, layout, design.counts, penalty)
    return design.with_kinds(kinds), weights
