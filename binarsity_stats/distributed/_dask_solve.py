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
shortened one two. A gaussian loss is quadratic: one pass gives every λ (a whole path,
and K-fold CV from the per-fold statistics, G_train = G − G_fold).

The design (``DaskDesign``-like: ``block_ptr``, ``kinds``, ``partitions``) has one
``dask.delayed`` per partition yielding a dict with ``codes`` (p, n_i) uint8/uint16,
``y``, and optional ``dense`` (n_i, q), ``weight``, ``offset`` and ``fold`` arrays.
Nothing here imports dask at module level.

Layout: this module holds the entry points (:func:`prepare_dask`, :func:`fit_dask`, the
path and K-fold CV); the client side (:class:`DaskProblem`, the quadratic model's
solve) is in ``_dask_problem.py``, what runs in one partition in ``_dask_partition.py``.
Their public names are re-exported here, as is ``fold_of`` (the modelling layer's
fold of a row); pickles name ``binarsity_stats.distributed._dask_solve.DaskSolution``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._dask_partition import fold_of as fold_of
from ._dask_partition import partitions_from_arrays
from ._dask_problem import DaskProblem, DaskSolution

__all__ = [
    "DaskProblem",
    "DaskSolution",
    "DaskPath",
    "DaskCV",
    "fit_dask",
    "prepare_dask",
    "partitions_from_arrays",
    "fit_path_dask",
    "fit_cv_dask",
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


@dataclass
class DaskPath:
    """A λ path on Dask: solutions in grid order, passes used."""

    lambdas: np.ndarray
    solutions: list
    n_passes: int


@dataclass
class DaskCV:
    """K-fold CV on Dask: held-out mean loss per fold and λ, the selected λ."""

    lambdas: np.ndarray
    cv_loss: np.ndarray  # (K, L): held-out loss per unit weight
    lam_min: float
    lam_1se: float
    n_passes: int

    @property
    def mean(self) -> np.ndarray:
        """Mean held-out loss over the folds, per λ."""
        return self.cv_loss.mean(axis=0)


def fit_path_dask(prob: DaskProblem, lambdas=None, *, n_lambdas: int = 20,
                  lam_min_ratio: float = 1e-2, tol: float = 1e-7, max_iter: int = 50,
                  fold: int = -1) -> DaskPath:  # fmt: skip
    """A warm-started λ path on Dask, largest λ first.

    Each fit starts from the previous solution and its statistics (no pass for them);
    a gaussian path needs no pass after the null fit's, every λ being solved from the
    same Gram.

    Parameters
    ----------
    prob : DaskProblem
        The prepared problem (:func:`prepare_dask`).
    lambdas : array-like, optional
        The grid (sorted decreasing); default λ_max · logspace(0, log10 lam_min_ratio).
    n_lambdas, lam_min_ratio : int, float
        The default grid.
    tol, max_iter : float, int
        As in :meth:`DaskProblem.fit`.
    fold : int
        -1: every row; k ≥ 0: the rows outside fold k.

    Returns
    -------
    DaskPath
    """
    from ..engine._path import lambda_grid

    start = prob.n_passes
    lmax = prob.lambda_max(tol=min(tol, 1e-9), fold=fold)
    if lambdas is None:
        lambdas = lambda_grid(lmax, n_lambdas, lam_min_ratio)
    lambdas = np.sort(np.asarray(lambdas, dtype=np.float64))[::-1]
    prev = prob._null
    sols = []
    for lam in lambdas:
        sol = prob.fit(lam, tol=tol, max_iter=max_iter, fold=fold, stats=prev._stats,
                       x0=prev._x)  # fmt: skip
        sols.append(sol)
        prev = sol
    return DaskPath(lambdas, sols, prob.n_passes - start)


def fit_cv_dask(prob: DaskProblem, lambdas=None, *, n_lambdas: int = 20,
                lam_min_ratio: float = 1e-2, tol: float = 1e-7,
                max_iter: int = 50) -> DaskCV:  # fmt: skip
    """K-fold CV on Dask: folds are row masks inside every partition.

    The folds are those of the problem (``folds=K`` in :func:`prepare_dask`: the
    partitions' ``fold`` column, else a hash of (partition, row)). A gaussian CV takes
    one pass: the statistics of every fold at one point, the training ones being the
    total minus the fold's (G_train = G − G_fold) and the held-out loss of every λ
    being read from the fold's own. Other families walk each fold's path in turn, the
    held-out loss coming with the statistics of every pass.

    Parameters
    ----------
    prob : DaskProblem
        Prepared with ``folds`` ≥ 2.
    lambdas : array-like, optional
        The grid; default from the whole data's λ_max.
    n_lambdas, lam_min_ratio, tol, max_iter
        As in :func:`fit_path_dask`.

    Returns
    -------
    DaskCV
        Held-out loss per unit weight, fold by λ, and λ by the minimum and one-SE rules.
    """
    from ..engine._path import lambda_grid

    K = prob.K
    if K < 2:
        raise ValueError("fit_cv_dask needs a problem prepared with folds >= 2.")
    start = prob.n_passes
    if lambdas is None:
        lambdas = lambda_grid(prob.lambda_max(tol=min(tol, 1e-9)), n_lambdas, lam_min_ratio)
    lambdas = np.sort(np.asarray(lambdas, dtype=np.float64))[::-1]
    cv = np.empty((K, len(lambdas)))
    if getattr(prob.family, "quadratic", False):
        x0 = (np.zeros(prob.d), np.zeros(prob.n_free))
        if prob.fit_intercept:
            x0[1][0] = prob.start_intercept()
        per = prob.stats(x0, fold=-2)
        total = {key: per[key].sum(axis=0) for key in ("loss", "g", "M")}
        for k in range(K):
            train = {key: total[key] - per[key][k] for key in total}
            test_W = float(prob.fold_W[k])
            x, st = x0, train
            for i, lam in enumerate(lambdas):
                sol = prob.fit(lam, tol=tol, max_iter=max_iter, fold=k, stats=st, x0=x)
                x, st = sol._x, sol._stats
                dx = np.concatenate([x[0] - x0[0], x[1] - x0[1]])
                test = per["loss"][k] + per["g"][k] @ dx + 0.5 * dx @ per["M"][k] @ dx
                cv[k, i] = test / test_W
    else:
        for k in range(K):
            path = fit_path_dask(prob, lambdas, tol=tol, max_iter=max_iter, fold=k)
            test_W = float(prob.fold_W[k])
            cv[k] = [sol._stats["test_loss"] / test_W for sol in path.solutions]
    from ..engine._scoring import select_lambda

    # the one-standard-error rule of every CV (NaN-aware; held-out deviance)
    _, _, best, one_se = select_lambda(cv, "deviance")
    return DaskCV(lambdas, cv, float(lambdas[best]), float(lambdas[one_se]),
                  prob.n_passes - start)  # fmt: skip
