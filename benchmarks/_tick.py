"""tick's binarsity, driven so that it solves exactly our objective.

What tick minimises (tick 0.8.0.2, read from its source and checked numerically by
``python -m benchmarks mapping``)::

    LogisticRegression(penalty="binarsity", C=C, blocks_start=..., blocks_length=...)
    min_w  (1/n) Σ_i log(1 + exp(−ỹ_i x_iᵀw − b))  +  (1/C) Σ_j Σ_{k≥2} |w_jk − w_j,k−1|

* labels ỹ ∈ {−1, 1} (``fit`` maps a {0, 1} y to them; {−1, 1} is passed through),
  and log(1 + e^{−ỹη}) = log(1 + e^η) − yη for y = (ỹ + 1)/2: the same loss as ours;
* ``ModelLogReg.loss`` is the mean over rows (the 1/n of design.md §1);
* the prox strength is 1/C (``LearnerOptim.C`` setter), ``ProxBinarsity.value`` is
  strength × Σ of the block TVs with unit weights — our ``penalty_weights="uniform"``;
* the intercept b is the last coefficient and lies outside the prox range: unpenalised;
* ``ProxBinarsity.call(v, step)`` is the TV prox at step·strength (Condat) followed by
  subtracting each block's plain mean, i.e. the constraint Σ_k w_jk = 0 instead of our
  Σ_k n_jk θ_jk = 0. With a free intercept both constraints only pick a representative
  of the same optimum (design.md §2, shift invariance), so the optimal value is the same.

Hence **λ = strength = 1/C**. Defaults: solver ``"svrg"`` with step 1/L_max
(``ModelLogReg.get_lip_max``), ``tol=1e-5`` on the relative change of the objective,
checked every ``record_every=10`` epochs, ``max_iter=100`` epochs, a random seed
unless ``random_state`` is set (we set 0 for reproducibility).

``FeaturesBinarizer(method="quantile", n_cuts=K)`` takes the
``np.linspace(0, 100, K + 2)`` percentiles with ``method="nearest"``, removes
duplicates, replaces the two end points by ∓inf and bins with ``pd.cut`` (right-closed,
as ours); then a scikit-learn ``OneHotEncoder`` drops empty levels. A column with at
most 15 distinct values is treated as discrete (one level per value). K cuts give up
to K + 1 bins, so ``n_bins`` bins means ``n_cuts = n_bins − 1``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ._common import timed


def tick_available() -> bool:
    """Whether tick's linear models import in this Python."""
    try:
        _tick_modules()
    except Exception:  # tick's C++ extensions may fail to load
        return False
    return True


def _tick_modules():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from tick.linear_model import LogisticRegression
        from tick.preprocessing import FeaturesBinarizer
    return LogisticRegression, FeaturesBinarizer


def onehot_csr(codes: np.ndarray, block_ptr: np.ndarray) -> sp.csr_matrix:
    """tick's one-hot design built from our bin codes.

    Row i has a 1 in column ``block_ptr[j] + codes[j, i]`` for every feature j: the
    matrix X^B of design.md §3, which tick needs materialised.

    Parameters
    ----------
    codes : ndarray of shape (p, n)
        Bin codes.
    block_ptr : ndarray of shape (p + 1,)
        Block offsets.

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n, d), float64
        Sorted column indices, exactly p non-zeros per row.
    """
    p, n = codes.shape
    indices = (codes + block_ptr[:-1, None]).T.ravel().astype(np.int32)
    indptr = np.arange(0, n * p + 1, p, dtype=np.int32)
    data = np.ones(n * p)
    return sp.csr_matrix((data, indices, indptr), shape=(n, int(block_ptr[-1])))


def blocks(block_ptr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """tick's ``(blocks_start, blocks_length)`` from CSR-style block offsets."""
    block_ptr = np.asarray(block_ptr, dtype=np.int64)
    return block_ptr[:-1].copy(), np.diff(block_ptr)


@dataclass
class TickFit:
    """A fitted tick binarsity model and what it cost."""

    coef: np.ndarray
    intercept: float
    seconds: float
    n_epochs: int


def fit_tick(
    X_onehot: sp.csr_matrix,
    y: np.ndarray,
    block_ptr: np.ndarray,
    lam: float,
    solver: str = "svrg",
    tol: float = 1e-5,
    max_iter: int = 100,
    random_state: int | None = 0,
) -> TickFit:
    """Fit tick's ``LogisticRegression(penalty="binarsity", C=1/lam)`` and time it.

    Parameters
    ----------
    X_onehot : csr_matrix of shape (n, d)
        One-hot design (:func:`onehot_csr` or tick's own ``FeaturesBinarizer``).
    y : ndarray of shape (n,)
        Labels in {0, 1} (mapped by tick, part of the timed work) or {−1, 1}.
    block_ptr : ndarray of shape (p + 1,)
        Block offsets of ``X_onehot``.
    lam : float
        Our λ; tick's strength is λ, i.e. ``C = 1 / lam``.
    solver, tol, max_iter : optional
        tick's solver settings (defaults: tick's own).
    random_state : int or None
        Seed of SVRG's sampling (tick's default, None, draws a fresh one).

    Returns
    -------
    TickFit
        θ, β0, the wall-clock seconds of ``fit`` and the epochs run.
    """
    LogisticRegression, _ = _tick_modules()
    starts, lengths = blocks(block_ptr)
    kwargs = (
        {}
        if random_state is None or solver not in ("svrg", "sgd", "sdca")
        else {"random_state": random_state}
    )
    learner = LogisticRegression(
        penalty="binarsity",
        C=1.0 / lam,
        solver=solver,
        tol=tol,
        max_iter=max_iter,
        blocks_start=starts,
        blocks_length=lengths,
        verbose=False,
        **kwargs,
    )
    _, seconds = timed(lambda: learner.fit(X_onehot, y))
    history = learner._solver_obj.history.values.get("n_iter", [0])
    return TickFit(
        np.asarray(learner.weights).copy(),
        float(learner.intercept),
        seconds,
        int(history[-1]) if len(history) else 0,
    )


@dataclass
class TickBinarized:
    """tick's own binarization of raw features."""

    X_onehot: sp.csr_matrix
    block_ptr: np.ndarray
    seconds: float
    binarizer: object  # the fitted FeaturesBinarizer, to transform new data


def tick_binarize(X: np.ndarray, n_bins: int) -> TickBinarized:
    """Run tick's ``FeaturesBinarizer(method="quantile", n_cuts=n_bins − 1)`` on raw X.

    Parameters
    ----------
    X : ndarray of shape (n, p)
        Raw features.
    n_bins : int
        Bins per feature (tick may return fewer when quantiles tie).

    Returns
    -------
    TickBinarized
        The one-hot CSR, its block offsets and the seconds ``fit_transform`` took.
    """
    _, FeaturesBinarizer = _tick_modules()

    def run():
        fb = FeaturesBinarizer(method="quantile", n_cuts=n_bins - 1)
        Xb = fb.fit_transform(X)
        return fb, Xb

    (fb, Xb), seconds = timed(run)
    starts = np.asarray(fb.blocks_start, dtype=np.int64)
    lengths = np.asarray(fb.blocks_length, dtype=np.int64)
    block_ptr = np.concatenate([starts, [starts[-1] + lengths[-1]]])
    return TickBinarized(sp.csr_matrix(Xb, dtype=np.float64), block_ptr, seconds, fb)


def onehot_to_codes(X_onehot: sp.csr_matrix, block_ptr: np.ndarray) -> np.ndarray:
    """Invert :func:`onehot_csr`: the (p, n) codes of a one-hot CSR with one 1 per block."""
    X = sp.csr_matrix(X_onehot)
    X.sort_indices()
    p = block_ptr.size - 1
    cols = X.indices.reshape(-1, p).T
    return np.ascontiguousarray(cols - block_ptr[:-1, None])
