"""The statistics every report, export and estimator shares: a kept cut, df, dispersion.

One definition each, used by the formula results (summary, term table, ``cut_points``,
``df``, ``refit``'s segments, plots, bootstrap), the relaxed fits, the estimators and the
solver's exact null fit at λ ≥ λ_max. Plain NumPy: the engine may use it too.

**A kept cut (a jump).** Level k of a penalised chain jumps when

    |θ_k − θ_{k−1}| > τ_j,   τ_j = JUMP_RTOL · max(u, max_k |θ_jk|),

where u is the unit of the linear predictor (:func:`coefficient_unit`: the weighted
spread of y for a quadratic family — the gaussian, whose η is in y's units — and 1 for
every other link, whose η is dimensionless) and ``JUMP_RTOL`` = 1e-7 is the solvers'
default ``tol``. Why that size: the solvers stop when the KKT violation is at most
``tol`` in the gradient's units, and a block step's curvature h_jk is a share of the
rows (at most 1 in η's units), so a coefficient is only known to about ``tol · u / h_jk``
≥ ``tol · u``: a smaller jump cannot be told from the solver's stopping error (for
example the 5.6e-10 an edge at λ_max is left with when λ_max itself is known to
1e-10). The max with the block's own largest level keeps rounding (1e-16 of it) far
below τ. The tolerance is fixed — not the ``tol`` of one fit — so that a cut means the
same in every report, whichever solver options produced it. Jumps are looked for only
within a chain: the first level of each chain (the levels of a by-group, a missing
level, the levels of a ``C()`` term) never jumps.

**Degrees of freedom** (design.md §2): the jumps, plus one per populated missing level,
plus the free level means of a by-group term (populated levels − 1, held by the first
term of that group only), plus populated levels − 1 of a free (``C()``) block, plus the
unpenalised parameters (intercept, dense columns).

**Dispersion**: Pearson's χ² / (observations − df), NaN when no residual df is left. It
is not informative for a Bernoulli (0/1, one trial per row) response: Pearson's χ² of
0/1 data does not measure over-dispersion (McCullagh & Nelder 1989, §4.4.5), so the
reports leave it out there (:func:`dispersion_informative`).

**A statistic added to the reports**: one entry of :data:`SUMMARY_STATISTICS` (a name and
a function of the results); ``glance()`` and ``summary()`` read the table.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = [
    "grid_dof",
    "grid_regions",
    "JUMP_RTOL",
    "coefficient_unit",
    "jump_tolerance",
    "kept_cuts",
    "chain_edges",
    "is_flat",
    "degrees_of_freedom",
    "pearson_dispersion",
    "dispersion_informative",
    "SUMMARY_STATISTICS",
]

#: Statistics of a penalised fit added by name — the one place to add one: each function
#: takes the results (``BinarsityResults``) and returns a number, which ``glance()`` shows
#: as a column and ``summary()`` as a row of its header (after AIC and BIC), in this
#: table's order. Empty in the package: its own statistics are the results' attributes.
SUMMARY_STATISTICS: dict[str, Callable[[Any], float]] = {}

#: Relative size of the smallest kept jump, in units of η (see the module docstring):
#: the solvers' default KKT tolerance.
JUMP_RTOL = 1e-7


def coefficient_unit(family: Any, y: np.ndarray, sample_weight: np.ndarray | None = None) -> float:
    """The unit of the linear predictor η, by which :data:`JUMP_RTOL` is multiplied.

    Parameters
    ----------
    family : Family
        The fitted family.
    y : ndarray of shape (n,)
        The response (the packed survival response for Cox).
    sample_weight : ndarray of shape (n,), optional
        Weights (default: ones).

    Returns
    -------
    float
        For a quadratic family (gaussian: η is in y's units) its gradient units, the
        weighted spread of y (``Family.gradient_units``); 1 for every other family.
    """
    if not getattr(family, "quadratic", False):
        return 1.0
    y = np.asarray(y, dtype=np.float64)
    sw = np.ones_like(y) if sample_weight is None else np.asarray(sample_weight, np.float64)
    unit = float(family.gradient_units(y, sw))
    return unit if np.isfinite(unit) and unit > 0 else 1.0


def jump_tolerance(theta_block: np.ndarray, unit: float = 1.0) -> float:
    """τ_j: the smallest jump of one block that counts as a kept cut.

    Parameters
    ----------
    theta_block : ndarray
        The levels θ_j of the block.
    unit : float, default=1.0
        The unit of η (:func:`coefficient_unit`).

    Returns
    -------
    float
        ``JUMP_RTOL · max(unit, max |θ_j|)``.
    """
    top = float(np.max(np.abs(theta_block))) if np.size(theta_block) else 0.0
    return JUMP_RTOL * max(float(unit), top)


def is_flat(values: np.ndarray, unit: float = 1.0) -> bool:
    """Whether a term's levels are all equal within the jump tolerance (a dropped term).

    Parameters
    ----------
    values : ndarray
        The levels (or the populated ones).
    unit : float, default=1.0
        The unit of η (:func:`coefficient_unit`).

    Returns
    -------
    bool
        ``max − min ≤ jump_tolerance(values, unit)``.
    """
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return True
    return bool(np.ptp(values) <= jump_tolerance(values, unit))


def chain_edges(block_ptr: np.ndarray, chains: Sequence[Sequence[tuple[int, int]]]) -> np.ndarray:
    """Mask (d,) of the levels k whose edge (k − 1, k) lies inside a penalised chain.

    Parameters
    ----------
    block_ptr : ndarray of shape (p + 1,)
        Block offsets.
    chains : sequence of sequences of (first, length)
        Per block, its penalised chains (positions within the block); an empty sequence
        for a block without one (a ``C()`` term).

    Returns
    -------
    ndarray of bool of shape (d,)
    """
    inside = np.zeros(int(block_ptr[-1]), dtype=bool)
    for j, block_chains in enumerate(chains):
        s = int(block_ptr[j])
        for first, length in block_chains:
            inside[s + int(first) + 1 : s + int(first) + int(length)] = True
    return inside


def kept_cuts(
    theta: np.ndarray, block_ptr: np.ndarray, edges: np.ndarray, unit: float = 1.0
) -> np.ndarray:
    """The kept cuts: True at level k when θ_k − θ_{k−1} is a jump (module docstring).

    Parameters
    ----------
    theta : ndarray of shape (d,)
        The levels θ.
    block_ptr : ndarray of shape (p + 1,)
        Block offsets.
    edges : ndarray of bool of shape (d,)
        The levels whose edge (k − 1, k) may jump (:func:`chain_edges`, or the
        positive-weight edges of a penalty).
    unit : float, default=1.0
        The unit of η (:func:`coefficient_unit`).

    Returns
    -------
    ndarray of bool of shape (d,)
    """
    theta = np.asarray(theta, dtype=np.float64)
    jump = np.zeros(theta.shape, dtype=bool)
    starts = np.asarray(block_ptr, dtype=np.intp)[:-1]
    sizes = np.diff(np.asarray(block_ptr, dtype=np.intp))
    inside = np.array(edges, dtype=bool)  # a copy: the edges inside a block
    nonempty = sizes > 0
    inside[starts[nonempty]] = False  # a block's first level has no edge
    if not np.any(inside):
        return jump
    # τ_j per block, vectorised over the blocks: the largest |θ| of each block, with a
    # NaN top left out of max(unit, top) (fmax), as ``jump_tolerance`` leaves it out
    top = np.zeros(sizes.size)
    with np.errstate(invalid="ignore"):
        top[nonempty] = np.maximum.reduceat(np.abs(theta), starts[nonempty])
    tau = JUMP_RTOL * np.fmax(float(unit), top)
    step = np.abs(theta[1:] - theta[:-1])
    with np.errstate(invalid="ignore"):
        jump[1:] = inside[1:] & (step > np.repeat(tau, sizes)[1:])
    return jump


def degrees_of_freedom(
    jumps: np.ndarray,
    counts: np.ndarray,
    block_ptr: np.ndarray,
    chains: Sequence[Sequence[tuple[int, int]]],
    missing_level: Sequence[bool],
    n_unpenalized: int,
    by_donors: Any = (),
) -> int:
    """Degrees of freedom of a fit: jumps + intercept + unpenalised parameters.

    Parameters
    ----------
    jumps : ndarray of bool of shape (d,)
        The kept cuts (:func:`kept_cuts`).
    counts : ndarray of shape (d,)
        Weighted bin counts n_jk.
    block_ptr : ndarray of shape (p + 1,)
        Block offsets.
    chains : sequence of sequences of (first, length)
        Per block its penalised chains (empty for a free block).
    missing_level : sequence of bool
        Per block, whether its last level is a missing level (outside its chains).
    n_unpenalized : int
        Intercept (1, also when absorbed by a fully coded first term) plus dense columns.
    by_donors : container of int, default=()
        Blocks of a by-group whose level means another block of the same group holds.

    Returns
    -------
    int
    """
    dof = int(n_unpenalized) + int(np.sum(jumps))
    for j, block_chains in enumerate(chains):
        s, e = int(block_ptr[j]), int(block_ptr[j + 1])
        if block_chains:
            if missing_level[j] and counts[e - 1] > 0:
                dof += 1
            if len(block_chains) > 1 and j not in by_donors:  # free level means of g
                filled = [np.any(counts[s + a : s + a + k] > 0) for a, k in block_chains]
                dof += max(int(np.sum(filled)) - 1, 0)
        else:
            dof += max(int(np.sum(counts[s:e] > 0)) - 1, 0)
    return dof


def pearson_dispersion(pearson_chi2: float, df_resid: float) -> float:
    """Pearson's estimate of the dispersion, χ² / df_resid (NaN without residual df).

    Parameters
    ----------
    pearson_chi2 : float
        Σ s (y − μ)² / V(μ).
    df_resid : float
        Observations minus df.

    Returns
    -------
    float
    """
    return float(pearson_chi2) / float(df_resid) if df_resid > 0 else float("nan")


def dispersion_informative(family: Any, y: np.ndarray, trials: np.ndarray | None = None) -> bool:
    """Whether Pearson's dispersion says anything about over-dispersion.

    Not for a Bernoulli response — a binary family, y in {0, 1} and one trial per row
    (no ``cbind`` trials, or every row a single trial): there Pearson's χ² / df is fixed
    by the fitted probabilities and is no test of over-dispersion.

    Parameters
    ----------
    family : Family
        The fitted family.
    y : ndarray of shape (n,)
        The response.
    trials : ndarray of shape (n,), optional
        The binomial trials of a ``cbind(successes, failures)`` response.

    Returns
    -------
    bool
    """
    if not getattr(family, "binary", False):
        return True
    if trials is not None and np.any(np.asarray(trials) > 1):
        return True
    y = np.asarray(y, dtype=np.float64)
    return not bool(np.all((y == 0) | (y == 1)))


def grid_regions(block: Any, theta: np.ndarray, tau: float) -> np.ndarray:
    """The fused regions of a pair term's surface: connected components of its cells
    joined by an edge whose jump is at most ``tau`` (:func:`jump_tolerance`).

    Parameters
    ----------
    block : penalty._grid.GridBlock
        The pair's grid (its ``edges``, ``difference`` and ``n_cells`` are read).
    theta : ndarray of shape (d,)
        The cells' values.
    tau : float
        The jump tolerance.

    Returns
    -------
    ndarray of int of shape (d,)
        The region of every cell (0, 1, … in the order of their first cell).
    """
    parent = np.arange(block.n_cells)

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, j in block.edges[np.abs(block.difference(theta)) <= tau]:
        ri, rj = root(int(i)), root(int(j))
        if ri != rj:
            parent[max(ri, rj)] = min(ri, rj)
    roots = np.array([root(i) for i in range(block.n_cells)], dtype=np.intp)
    return np.unique(roots, return_inverse=True)[1].astype(np.intp)


def grid_dof(block: Any, theta: np.ndarray, counts: np.ndarray, tau: float) -> int:
    """Degrees of freedom of a pair term: the dimension of the surfaces constant on its
    fused regions (:func:`grid_regions`) that meet its margins — the face of the
    fused-lasso estimate, as a chain's segments minus its constraint.

    Parameters
    ----------
    block : penalty._grid.GridBlock
        The pair's grid.
    theta : ndarray of shape (d,)
        The cells' values.
    counts : ndarray of shape (d,)
        The cells' weighted counts (the margins' n_kl).
    tau : float
        The jump tolerance.

    Returns
    -------
    int
    """
    region = grid_regions(block, theta, tau)
    n = np.asarray(counts, dtype=np.float64)
    filled = np.unique(region[n > 0])
    if filled.size == 0:
        return 0
    B = (region[:, None] == filled[None, :]).astype(np.float64)
    A = block.margin_matrix(n) @ B
    return int(B.shape[1] - (np.linalg.matrix_rank(A) if A.size else 0))
