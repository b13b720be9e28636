"""The rank-revealing inverse of a refit's normal equations, the same on every machine.

``truncated_inverse`` inverts XᵀWX after scaling its columns to unit diagonal and
cutting eigenvalues below a relative threshold (``rank_cut``): a column the selected
design does not identify gets no variance, and the cut does not depend on the BLAS
kernels' last bits. Used by both refit paths (``_refit_glm``, ``_refit_checks``), as is
``check_irls_outcome``, the verdict on an IRLS (in memory or on the Dask workers).
"""

from __future__ import annotations

import warnings

import numpy as np

__all__ = ["rank_cut", "truncated_inverse", "check_irls_outcome"]

_EPS = np.finfo(np.float64).eps


def _unit_scaling(gram: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    d = np.sqrt(np.clip(np.diag(gram), 0.0, None))
    d[d == 0] = 1.0
    S = gram / d[:, None] / d[None, :]
    return 0.5 * (S + S.T), d


def rank_cut(
    gram: np.ndarray, n_rows: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Eigen-decomposition of XᵀWX's unit-diagonal scaling, cut at the refit's rank rule.

    Eigenvalues below ``top · max((max(n, k) · eps · 10)², 10 k eps)`` (the square of
    the singular-value rule of ``_refit._non_identified``, floored at the
    eigen-decomposition's own error of ~k · eps) are the null space.

    Parameters
    ----------
    gram : ndarray of shape (k, k)
        Symmetric positive semi-definite.
    n_rows : int, optional
        Rows of X (default k).

    Returns
    -------
    vals, vecs : ndarray
        The kept eigenvalues and eigenvectors (columns) of the scaling.
    null : ndarray of shape (k − rank, k)
        The dropped eigenvectors (rows).
    """
    k = gram.shape[0]
    S, _ = _unit_scaling(np.asarray(gram, dtype=np.float64))
    vals, vecs = np.linalg.eigh(S)
    top = float(vals[-1]) if vals.size else 0.0
    if top <= 0:
        return vals[:0], vecs[:, :0], vecs.T
    tol = top * max((max(n_rows or k, k) * _EPS * 10) ** 2, 10 * k * _EPS)
    keep = vals > tol
    return vals[keep], vecs[:, keep], vecs[:, ~keep].T


def truncated_inverse(A: np.ndarray, n_rows: int | None = None) -> np.ndarray:
    """The pseudo-inverse of a symmetric positive semi-definite k × k matrix, rank cut.

    Eigenvalues of the unit-diagonal scaling of A cut by :func:`rank_cut` are dropped,
    so the null-space directions of a rank-deficient design get exactly no variance and
    the identified parameters the variance every generalised inverse gives them.
    ``np.linalg.pinv``'s cut (1e-15 relative) inverts rounding noise whose size depends
    on the machine's BLAS kernels: a noise eigenvalue of 7e-15 inverted on one CPU and
    1.7e-14 on another moved identified SEs by 8e-6, and gave negative variances for a
    weighted Cox refit.
    """
    return _cut_inverse(A, n_rows)[0]


def _cut_inverse(A: np.ndarray, n_rows: int | None) -> tuple[np.ndarray, int, np.ndarray]:
    """:func:`truncated_inverse`, the rank and the null space (rows), from one eigh."""
    A = np.asarray(A, dtype=np.float64)
    if A.shape[0] == 0:
        return A.copy(), 0, np.zeros((0, 0))
    _, d = _unit_scaling(A)
    vals, V, null = rank_cut(A, n_rows)
    inv = (V / vals) @ V.T
    return inv / d[:, None] / d[None, :], int(vals.size), null


def _null_columns(null: np.ndarray) -> list[int]:
    if not len(null):
        return []
    return [int(k) for k in np.flatnonzero(np.abs(null).max(axis=0) > 1e-8)]


def check_irls_outcome(beta: np.ndarray | None, converged: bool, max_iter: int) -> None:
    """The refit's verdict on its IRLS (in memory or on the Dask workers): an error when
    the first step was not finite (``beta`` None), a warning when it did not converge.

    Parameters
    ----------
    beta : ndarray or None
        The last estimate (None: the first step was not finite).
    converged : bool
        Whether the stopping rule was met.
    max_iter : int
        The iteration cap, for the message.
    """
    if beta is None:
        raise ValueError(
            "refit(): the first IRLS step is not finite (an overflow of the family's "
            "weights or working response)."
        )
    if not converged:
        warnings.warn(
            f"refit(): IRLS did not converge in {max_iter} iterations (a coefficient may be "
            "infinite: a segment whose rows are all 0 or all 1, or perfect separation).",
            UserWarning,
            stacklevel=5,
        )
