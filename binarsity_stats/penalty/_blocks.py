"""Block kinds: what a block of θ is, and the rules the engine applies to it (design.md §7).

A block of levels θ_j is a *kind* of chain, not just a weight vector. Each kind is one
entry of the table :data:`KINDS` and brings, in one place,

* ``step``: the id of its exact block step in the CD kernel (``_cd_fast.cd_sweep``
  dispatches on it; the step also computes the block's KKT violation of the quadratic
  model);
* ``kkt``: its optimality rule, the distance of the bin-gradient suffix sums S_jl to
  the subdifferential at every level l ≥ 1 (design.md §2), used by the KKT check;
* ``prox``: its proximal operator (unit metric, all blocks of the kind at once) and
  ``metric_prox``: the prox of one block in a diagonal metric (FISTA's variable metric,
  ``_metric``);
* ``penalized``: whether its edges carry λω_jl (and so enter the penalty and λ_max);
  an unpenalised kind has its weights forced to 0;
* ``screened``: whether the CD working set may leave one of its blocks out when the
  block has no jump and satisfies its KKT rule;
* ``direction``: the sign its jumps must have (0: either; +1 / −1 for a monotone chain),
  which λ_max, the polish's opening of flat edges and the shape checks read.

The kinds of today:

* ``"tv"``: the paper's total-variation chain, Σ_l ω_jl |θ_jl − θ_j,l−1|. An edge of
  weight 0 decouples its two levels (a "missing" level outside the chain).
* ``"free"``: free levels (a ``C()`` term): no penalty, the constraint n_jᵀθ_j = 0 kept.
* ``"grid"``: the two-feature grid of a pair term ``bin(a):bin(b)`` (design.md §10,
  ``_grid``): anisotropic TV over the cells with weighted zero margins. Its rules are
  block-level, read from the block's ``_grid.GridBlock`` (carried by its kind name,
  ``_grid.GridKind``): step id :data:`STEP_PYTHON` (``engine/_cd`` runs
  ``_grid.grid_block_step`` after each kernel sweep; the kernel never sees the block),
  KKT rule ``_grid.grid_gradient_map``, value and λ_max from the ``GridBlock``. It has
  no prox for FISTA (refused by ``engine/_backend``).
* ``"increasing"``, ``"decreasing"``: a monotone chain (``bin(x, monotone=...)``,
  design.md §7): the TV chain restricted to non-decreasing (non-increasing) θ on its
  positive-weight edges, whose penalty is then linear; block step and prox are a
  weighted isotonic regression of shifted targets (PAVA, ``_isotonic``). An edge of
  weight 0 (a "missing" level) is neither penalised nor ordered, whatever λ.

Every kind: an edge of weight 0 decouples its levels, so its KKT rule there is |S_l|
(the penalty applies that, whatever the kind's rule says).

Adding a kind (a monotone chain, a chain with breaks) means: a block step in
``_cd_fast.pyx`` with its id, a KKT rule and a prox here, and one :func:`register_kind`
call. Nothing else in the engine tests a block's weights to decide what it is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..kernels._cd_fast import KERNEL_STEPS, STEP_DECREASING, STEP_FUSED, STEP_INCREASING

__all__ = [
    "BlockKind",
    "KINDS",
    "register_kind",
    "get_kind",
    "STEP_FUSED",
    "STEP_PYTHON",
    "MONOTONE_KINDS",
    "infer_kinds",
    "as_kinds",
]

# STEP_FUSED: the weighted fused-lasso block step of ``_cd_fast.cd_sweep`` (exact for any
# non-negative edge weights, so also for free levels, whose weights are all 0);
# KERNEL_STEPS: every block step the compiled CD kernel knows.

#: Id of a block step the engine runs in Python (``engine/_cd``, after each kernel
#: sweep): the CD driver leaves such blocks out of the kernel's working set, so the
#: kernel needs no branch for them (its sweep builds the next block's histogram while it
#: updates z; a skipped block would break that pipeline).
STEP_PYTHON = 255


def _kkt_chain(S: np.ndarray, bound: np.ndarray, jump: np.ndarray, sign: np.ndarray):
    """TV chain: |S_l + λω_l sign(θ_l − θ_l−1)| at a jump, (|S_l| − λω_l)₊ elsewhere."""
    return np.where(jump, np.abs(S + bound * sign), np.maximum(np.abs(S) - bound, 0.0))


def _kkt_free(S: np.ndarray, bound: np.ndarray, jump: np.ndarray, sign: np.ndarray):
    """Free levels: every suffix sum must vanish, |S_l|."""
    return np.abs(S)


def _kkt_monotone(direction: int) -> Callable:
    """Monotone chain (sign σ = ``direction``): with s = σS_l, a jump the right way needs
    s = −λω_l (|s + λω_l|), a flat edge s ≥ −λω_l ((−s − λω_l)₊), a jump the wrong way
    is infeasible (∞)."""

    def kkt(S: np.ndarray, bound: np.ndarray, jump: np.ndarray, sign: np.ndarray):
        s = direction * S
        right = jump & (direction * sign > 0)
        wrong = jump & (direction * sign < 0)
        viol = np.where(right, np.abs(s + bound), np.maximum(-s - bound, 0.0))
        return np.where(wrong, np.inf, viol)

    kkt.__name__ = kkt.__qualname__ = f"_kkt_monotone_{'inc' if direction > 0 else 'dec'}"
    return kkt


def _prox_monotone(direction: int) -> Callable:
    """Exact prox of step·Σ ω|Δθ| + the order + n_jᵀθ_j = 0 (PAVA, ``_prox``)."""

    def prox(v, block_ptr, weights, counts, step):
        from ._prox import prox_monotone

        return prox_monotone(v, block_ptr, weights, counts=counts, step=step,
                             direction=direction)  # fmt: skip

    return prox


def _metric_prox_monotone(direction: int) -> Callable:
    """One block in the metric D: PAVA of v with weights D (``_isotonic``); ``linked``
    (ω_k > 0) says which edges are ordered, since λω is 0 on every edge at λ = 0."""

    def metric_prox(v, D, lam_w, counts, out, tol, linked=None):
        from ..kernels._isotonic import monotone_fused_lasso_py

        K = len(v)
        lk = np.ones(K, np.uint8) if linked is None else np.asarray(linked, np.uint8).copy()
        if K:
            lk[0] = 0
        monotone_fused_lasso_py(
            np.ascontiguousarray(D * v), np.ascontiguousarray(D), np.ascontiguousarray(lam_w),
            np.ascontiguousarray(counts, dtype=np.float64), lk, direction, True, out, tol,
        )  # fmt: skip

    return metric_prox


def _prox_chain(v, block_ptr, weights, counts, step):
    """Exact prox of step·Σ ω|Δθ| under n_jᵀθ_j = 0 (weighted FLSA, ``_prox``)."""
    from ._prox import prox_binarsity

    return prox_binarsity(v, block_ptr, weights, counts=counts, step=step)


def _metric_prox_chain(v, D, lam_w, counts, out, tol):
    """One block: argmin Σ_k (D_k/2)(θ_k − v_k)² + Σ_k λω_k|θ_k − θ_k−1|, nᵀθ = 0, into out."""
    from ..kernels._fused_lasso_constrained import constrained_fused_lasso_py

    constrained_fused_lasso_py(v, D, lam_w, counts, out, tol)


@dataclass(frozen=True)
class BlockKind:
    """One kind of block and its rules.

    Parameters
    ----------
    name : str
        The name blocks are tagged with (``"tv"``, ``"free"``).
    step : int
        Id of the block step in the CD kernel (one of ``KERNEL_STEPS``).
    kkt : callable
        ``kkt(S, bound, jump, sign) -> violation``, elementwise over the levels of this
        kind's blocks: S the suffix sums of the bin gradients (corrected by the
        constraint's multiplier without an intercept), ``bound`` = λω, ``jump`` whether
        θ_l ≠ θ_l−1 and ``sign`` = sign(θ_l − θ_l−1). Block starts are ignored.
    prox : callable
        ``prox(v, block_ptr, weights, counts, step) -> θ`` for blocks of this kind.
    metric_prox : callable
        ``metric_prox(v, D, lam_w, counts, out, tol)``: one block's prox in the diagonal
        metric D (weights λω_k on its edges, constraint nᵀθ = 0), written into ``out``.
    penalized : bool
        Whether its edges carry λω (False: weights forced to 0).
    screened : bool
        Whether CD may skip one of its blocks that has no jump and meets its KKT rule.
    description : str
        One line for the documentation.
    direction : int
        Sign every jump must have: 0 (either), +1 (non-decreasing), −1 (non-increasing).
        A kind with a direction gets ``linked=`` (ω_k > 0 per level) in ``metric_prox``.
    """

    name: str
    step: int
    kkt: Callable
    prox: Callable
    metric_prox: Callable
    penalized: bool
    screened: bool
    description: str = ""
    direction: int = 0


#: The table of block kinds, by name; the position of a kind is its code.
KINDS: dict[str, BlockKind] = {}


def register_kind(kind: BlockKind) -> BlockKind:
    """Add a block kind to :data:`KINDS` (refusing a name that is taken).

    Parameters
    ----------
    kind : BlockKind
        The kind and its rules.

    Returns
    -------
    BlockKind
        ``kind``, so that the call can be used as an assignment.
    """
    if kind.name in KINDS:
        raise ValueError(f"block kind {kind.name!r} is already registered.")
    if kind.step not in KERNEL_STEPS and kind.step != STEP_PYTHON:
        raise ValueError(
            f"block kind {kind.name!r}: the CD kernel has no block step {kind.step} "
            f"(known: {KERNEL_STEPS})."
        )
    KINDS[kind.name] = kind
    return kind


def get_kind(name: str) -> BlockKind:
    """The registered kind called ``name``; a ``ValueError`` naming the known ones if none.

    Parameters
    ----------
    name : str
        A kind's name.

    Returns
    -------
    BlockKind
    """
    try:
        return KINDS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown block kind {name!r}; known kinds: {sorted(KINDS)}.") from None


TV = register_kind(
    BlockKind(
        name="tv",
        step=STEP_FUSED,
        kkt=_kkt_chain,
        prox=_prox_chain,
        metric_prox=_metric_prox_chain,
        penalized=True,
        screened=True,
        description="total-variation chain (bin() terms)",
    )  # fmt: skip
)
FREE = register_kind(
    BlockKind(
        name="free",
        step=STEP_FUSED,
        kkt=_kkt_free,
        prox=_prox_chain,
        metric_prox=_metric_prox_chain,
        penalized=False,
        screened=False,
        description="free levels, unpenalised (C() terms)",
    )  # fmt: skip
)

INCREASING = register_kind(
    BlockKind(
        name="increasing",
        step=STEP_INCREASING,
        kkt=_kkt_monotone(1),
        prox=_prox_monotone(1),
        metric_prox=_metric_prox_monotone(1),
        penalized=True,
        screened=True,
        description="non-decreasing TV chain (bin(x, monotone='increasing'))",
        direction=1,
    )  # fmt: skip
)
DECREASING = register_kind(
    BlockKind(
        name="decreasing",
        step=STEP_DECREASING,
        kkt=_kkt_monotone(-1),
        prox=_prox_monotone(-1),
        metric_prox=_metric_prox_monotone(-1),
        penalized=True,
        screened=True,
        description="non-increasing TV chain (bin(x, monotone='decreasing'))",
        direction=-1,
    )  # fmt: skip
)

def _grid_not_elementwise(*args, **kwargs):
    """A grid block's rules are block-level (``BinarsityPenalty`` reads its GridBlock)."""
    raise ValueError(
        "a pair term (block kind 'grid') has no elementwise KKT rule and no prox: it is "
        "solved by the 'cd' solver's grid block step; FISTA cannot fit it."
    )


GRID = register_kind(
    BlockKind(
        name="grid",
        step=STEP_PYTHON,
        kkt=_grid_not_elementwise,
        prox=_grid_not_elementwise,
        metric_prox=_grid_not_elementwise,
        penalized=True,
        screened=False,
        description="two-feature grid, TV over cells with zero margins (bin(a):bin(b))",
    )  # fmt: skip
)

#: Names of the monotone kinds, by the ``monotone=`` value that asks for them.
MONOTONE_KINDS = {"increasing": "increasing", "decreasing": "decreasing"}


def infer_kinds(block_ptr: np.ndarray, weights: np.ndarray) -> tuple[str, ...]:
    """Kinds for callers of the raw engine API that give weights only.

    A block with a positive edge weight is a TV chain, one without is free (what the
    engine assumed before blocks had kinds). The modelling layers pass kinds.
    """
    bp = np.asarray(block_ptr, dtype=np.intp)
    w = np.asarray(weights, dtype=np.float64)
    kinds = []
    for j in range(len(bp) - 1):
        edge = w[bp[j] + 1 : bp[j + 1]]
        kinds.append("tv" if np.any(edge > 0) else "free")
    return tuple(kinds)


def as_kinds(kinds: Sequence[str] | None, n_blocks: int) -> tuple[str, ...] | None:
    """Validate a sequence of kind names (one per block); None passes through."""
    if kinds is None:
        return None
    if isinstance(kinds, str):
        kinds = (kinds,) * n_blocks
    kinds = tuple(kinds)
    if len(kinds) != n_blocks:
        raise ValueError(
            f"block_kinds must name one kind per block ({n_blocks}); got {len(kinds)}."
        )
    for k in kinds:
        get_kind(k)
    return kinds
