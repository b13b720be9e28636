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


class StandinBinarizer:
    """Quantile binarizer standing in for ``binarsity_stats.Binarizer`` until it lands.

    Interior cut points are the ``k / n_bins`` quantiles (k = 1 … n_bins − 1) taken
    as data values (``method="inverted_cdf"``), ties collapsed, and cut points at or
    above the maximum dropped; ``code = searchsorted(edges, x, side="left")``
    (right-closed bins). Every edge is a training value, so every bin is non-empty on
    the training data. Unlike the real binarizer it does not re-spend bins freed by
    ties (design.md §6), so spiky features get fewer bins.

    Parameters
    ----------
    n_bins : int
        Requested number of bins per feature.
    """

    def __init__(self, n_bins: int = 50) -> None:
        self.n_bins = n_bins

    def fit(self, X: np.ndarray) -> StandinBinarizer:
        """Learn the cut points of every column of ``X``; return ``self``."""
        X = np.asarray(X, dtype=np.float64)
        qs = np.arange(1, self.n_bins) / self.n_bins
        self.edges_ = []
        for j in range(X.shape[1]):
            edges = np.unique(np.quantile(X[:, j], qs, method="inverted_cdf"))
            self.edges_.append(edges[edges < X[:, j].max()])
        self.n_bins_ = np.array([e.size + 1 for e in self.edges_])
        return self

    def transform(self, X: np.ndarray) -> np.ndarray:
        """Bin codes of ``X``, shape (n, p), values outside the range in the end bins."""
        X = np.asarray(X, dtype=np.float64)
        codes = np.empty(X.shape, dtype=np.int64)
        for j, edges in enumerate(self.edges_):
            codes[:, j] = np.searchsorted(edges, X[:, j], side="left")
        return codes

    def fit_transform(self, X: np.ndarray) -> np.ndarray:
        """``fit(X)`` then ``transform(X)``."""
        return self.fit(X).transform(X)


def make_binarizer(n_bins: int) -> tuple[Any, str]:
    """``binarsity_stats.Binarizer(n_bins)`` if it exists, else :class:`StandinBinarizer`.

    Returns
    -------
    binarizer : object
        Unfitted, with ``fit``, ``transform`` and (after fit) ``n_bins_``.
    source : str
        ``"binarsity_stats.Binarizer"`` or ``"stand-in"``.
    """
    try:
        binarizer_cls = _import("Binarizer")
    except EstimatorMissing:
        return StandinBinarizer(n_bins), "stand-in"
    return binarizer_cls(n_bins=n_bins), "binarsity_stats.Binarizer"


def codes_layout(codes: np.ndarray, n_bins: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(n, p) codes and per-feature bin counts → (p, n) codes and block offsets."""
    codes_t = np.ascontiguousarray(np.asarray(codes).T, dtype=np.int64)
    sizes = np.asarray(n_bins, dtype=np.int64)
    return codes_t, np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)


def bin_codes(X: np.ndarray, n_bins: int) -> tuple[np.ndarray, np.ndarray, str]:
    """Bin codes of ``X`` in the layout of design.md §3, and where they came from.

    Uses ``binarsity_stats.Binarizer(n_bins).fit(X).transform(X)`` when it exists
    (the same bins ``BinarsityGLM(n_bins=...)`` uses), else :class:`StandinBinarizer`.

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
    binarizer, source = make_binarizer(n_bins)
    codes = binarizer.fit(X).transform(X)
    codes_t, block_ptr = codes_layout(codes, binarizer.n_bins_)
    return codes_t, block_ptr, source
