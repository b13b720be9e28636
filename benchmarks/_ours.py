"""Access to binarsity_stats from the suites, with a clear failure while it is missing.

The benchmarks need two public names of issue 2: ``Binarizer`` (bin codes, also used
to build tick's one-hot matrix so both sides see the same bins) and ``BinarsityGLM``.
Until ``Binarizer`` lands, :func:`bin_codes` falls back to a NumPy stand-in with the
same rules (quantile cut points, ties collapsed, right-closed bins, no empty bin) so
that tick's side can be measured already; every output says which one was used.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np


class EstimatorMissing(RuntimeError):
    """Raised when a suite needs a part of binarsity_stats that is not there yet."""


def _import(name: str) -> Any:
    try:
        import binarsity_stats
    except ImportError as exc:  # pragma: no cover - depends on the build state
        raise EstimatorMissing(
            f"binarsity_stats does not import ({exc}); build it first: pip install -e ."
        ) from exc
    obj = getattr(binarsity_stats, name, None)
    if obj is None:
        raise EstimatorMissing(
            f"binarsity_stats.{name} is not available yet (issue 2 delivers it); "
            "this part of the suite cannot run before it lands"
        )
    return obj


def estimator_class() -> type:
    """Return ``binarsity_stats.BinarsityGLM`` or raise :class:`EstimatorMissing`."""
    return _import("BinarsityGLM")


def has_estimator() -> bool:
    """Whether ``binarsity_stats.BinarsityGLM`` can be imported."""
    try:
        estimator_class()
    except EstimatorMissing:
        return False
    return True


def prox_binarsity() -> Any:
    """Return ``binarsity_stats.prox_binarsity`` or raise :class:`EstimatorMissing`."""
    return _import("prox_binarsity")


def fit_ours(X: np.ndarray, y: np.ndarray, **params: Any) -> Any:
    """Fit ``BinarsityGLM(**params)`` on the raw ``X`` and return the fitted estimator."""
    est = estimator_class()(**params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    return est


def standin_codes(X: np.ndarray, n_bins: int) -> np.ndarray:
    """Quantile bin codes, a stand-in for ``binarsity_stats.Binarizer``.

    Interior cut points are the ``k / n_bins`` quantiles (k = 1 … n_bins − 1), ties
    collapsed; ``code = searchsorted(edges, x, side="left")`` (right-closed bins);
    empty bins are then dropped by relabelling. Unlike the real binarizer it does not
    re-spend bins freed by ties (design.md §6), so spiky features get fewer bins.

    Parameters
    ----------
    X : ndarray of shape (n, p)
        Raw features.
    n_bins : int
        Requested number of bins per feature.

    Returns
    -------
    ndarray of shape (n, p), int64
        Bin codes, each column using 0 … d_j − 1 with every level present.
    """
    X = np.asarray(X, dtype=np.float64)
    codes = np.empty(X.shape, dtype=np.int64)
    qs = np.arange(1, n_bins) / n_bins
    for j in range(X.shape[1]):
        x = X[:, j]
        edges = np.unique(np.quantile(x, qs))
        raw = np.searchsorted(edges, x, side="left")
        _, codes[:, j] = np.unique(raw, return_inverse=True)
    return codes


def bin_codes(X: np.ndarray, n_bins: int) -> tuple[np.ndarray, np.ndarray, str]:
    """Bin codes of ``X`` in the layout of design.md §3, and where they came from.

    Uses ``binarsity_stats.Binarizer(n_bins).fit(X).transform(X)`` when it exists
    (the same bins ``BinarsityGLM(n_bins=...)`` uses), else :func:`standin_codes`.

    Parameters
    ----------
    X : ndarray of shape (n, p)
        Raw features.
    n_bins : int
        Requested number of bins per feature.

    Returns
    -------
    codes : ndarray of shape (p, n), C-ordered
        ``codes[j, i]`` is the bin of row i in feature j.
    block_ptr : ndarray of shape (p + 1,), int64
        Offsets of the feature blocks in the concatenated coefficient vector.
    source : str
        ``"binarsity_stats.Binarizer"`` or ``"stand-in"``.
    """
    try:
        binarizer_cls = _import("Binarizer")
    except EstimatorMissing:
        codes = standin_codes(X, n_bins)
        source = "stand-in"
    else:
        codes = np.asarray(binarizer_cls(n_bins=n_bins).fit(X).transform(X))
        source = "binarsity_stats.Binarizer"
    codes_t = np.ascontiguousarray(codes.T, dtype=np.int64)
    sizes = codes_t.max(axis=1) + 1
    block_ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    return codes_t, block_ptr, source
