"""The fit on Dask: IRLS from per-partition sufficient statistics (design.md §9, issue 15).

The rows stay on the workers, in partitions; the client holds only vectors of length
d (levels), q (dense columns) and the Gram of the one-hot design, (d + n_free)² floats.
One *pass* over the data computes, in every partition at the current point
(θ, β, β0), the loss, the working gradient's bin sums and free-column sums, and the
curvature-weighted Gram

    M = [X^B, U]ᵀ diag(s b''(η)) [X^B, U] / W,     g = [X^B, U]ᵀ s (b'(η) − y) / W,

tree-reduced to the client (``dask.delayed`` sums with a fan-in of 8). The client then
solves the penalised quadratic model

    min_x  gᵀ(x − x₀) + ½ (x − x₀)ᵀ M (x − x₀) + λ pen(θ)   s.t. n_jᵀθ_j = 0

exactly (Gauss–Seidel over the blocks with each block's exact step in the metric
diag(M), ``_blocks.BlockKind.metric_prox``, and a joint Newton step on the free columns
U = [1, Z]) and takes a proximal-Newton step. The line search on the true objective is
folded into the next pass: that pass computes the statistics at the full step and the
loss at shorter steps t = ½, ¼, …, so an accepted full step costs one pass and a
shortened one two. A gaussian loss is quadratic: one pass gives every λ.

The design (``DaskDesign``-like: ``block_ptr``, ``kinds``, ``partitions``) has one
``dask.delayed`` per partition yielding a dict with ``codes`` (p, n_i) uint8/uint16,
``y``, and optional ``dense`` (n_i, q), ``weight``, ``offset`` and ``fold`` arrays.
Nothing here imports dask at module level.

Layout: this module holds the entry points (:func:`prepare_dask`, :func:`fit_dask`);
the client side (:class:`DaskProblem`, the quadratic model's solve) is in
``_dask_problem.py``, what runs in one partition in ``_dask_partition.py``. Paths and
K-fold CV are not here: ``_dask_backend.DaskPathData`` makes the Dask solver a backend
of the shared ``engine/_path.solve_path`` and ``engine/_cv.cross_validate`` (one grid,
one early stopping, one one-SE rule). Public names are re-exported here; pickles name
``binarsity_stats.distributed._dask_solve.DaskSolution``.
"""

from __future__ import annotations

from ._dask_partition import partitions_from_arrays
from ._dask_problem import DaskProblem, DaskSolution

__all__ = [
    "DaskProblem",
    "DaskSolution",
    "fit_dask",
    "prepare_dask",
    "partitions_from_arrays",
]


def prepare_dask(design, family, penalty_weights="balanced", fit_intercept=True, client=None,
                 folds: int = 0, gram_rows: int = 2_000_000) -> DaskProblem:  # fmt: skip
    """The first pass over a Dask design: counts, ω, scales (:class:`DaskProblem`).

    Parameters
    ----------
    design, family, penalty_weights, fit_intercept, client, folds, gram_rows
        As in :class:`DaskProblem`.

    Returns
    -------
    DaskProblem
    """
    return DaskProblem(design, family, penalty_weights, fit_intercept, client, folds, gram_rows)


def fit_dask(design, family, lam, *, penalty_weights="balanced", fit_intercept=True,
             tol=1e-7, max_iter=50, warm_start=None, client=None) -> DaskSolution:  # fmt: skip
    """Fit a binarsity GLM at one λ on a Dask design (passes: 1 + Newton steps).

    Parameters
    ----------
    design : object
        ``block_ptr``, ``kinds``, ``n_dense`` and ``partitions`` (``dask.delayed`` dicts).
    family : str or Family
        GLM family.
    lam : float
        λ.
    penalty_weights : str or array
        ω (default ``"balanced"``, as the in-memory engine).
    fit_intercept : bool
        Whether to fit β0.
    tol, max_iter : float, int
        KKT tolerance and largest number of Newton steps.
    warm_start : Solution, optional
        Starting point.
    client : distributed.Client, optional
        Where to compute.

    Returns
    -------
    DaskSolution
        θ, β, β0, objective, KKT, passes over the data (the first pass included) and
        bytes per pass.
    """
    prob = DaskProblem(design, family, penalty_weights, fit_intercept, client)
    sol = prob.fit(lam, tol=tol, max_iter=max_iter, warm_start=warm_start)
    sol.n_passes = prob.n_passes
    return sol
