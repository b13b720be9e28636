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


# --------------------------------------------------------------------------- Cox

#: tick's solvers of ``CoxRegression`` (the only two it accepts)
COX_SOLVERS = ("agd", "gd")


def tick_cox_available() -> bool:
    """Whether tick's Cox regression imports in this Python."""
    try:
        _tick_cox_class()
    except Exception:  # tick missing, or its C++ extensions fail to load
        return False
    return True


def _tick_cox_class():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from tick.survival import CoxRegression
    return CoxRegression


def tick_cox_failures(time: np.ndarray, event: np.ndarray) -> int:
    """The number of failures m by which tick's Cox loss is divided.

    ``ModelCoxRegPartialLik`` sorts the rows by decreasing time and, when the row with
    the largest time is an event, counts it as censored (its term of the partial
    likelihood, log(e^η / e^η), is 0): m = events − 1{the largest time is an event}.

    Parameters
    ----------
    time, event : ndarray of shape (n,)
        Follow-up times and 0/1 event indicators.

    Returns
    -------
    int
    """
    time = np.asarray(time, dtype=np.float64)
    event = np.asarray(event)
    m = int(np.count_nonzero(event))
    last = time == time.max()
    # several rows may share the largest time: tick's sort puts one of them first;
    # only an untied largest time is unambiguous (the case the mapping is exact for)
    if np.count_nonzero(last) == 1 and event[last][0] != 0:
        m -= 1
    return m


def tick_cox_strength(lam: float, total_weight: float, n_failures: int) -> float:
    """tick's binarsity strength that solves our Cox objective at λ.

    Ours (design.md §1, §8): F = L(η)/W + λ TV(θ) with L the partial likelihood (sum over
    events), W the total row weight. tick's ``CoxRegression``: L(η)/m + s TV(θ), m its
    failure count (:func:`tick_cox_failures`). Multiplying F by W/m gives tick's
    objective with s = λ W / m: the same minimisers, and tick's value = (W/m) F.

    Parameters
    ----------
    lam : float
        Our λ (uniform penalty weights).
    total_weight : float
        W = n for unit weights.
    n_failures : int
        m.

    Returns
    -------
    float
        s; tick's ``C`` is 1 / s.
    """
    return float(lam) * float(total_weight) / float(n_failures)


@dataclass
class TickCoxFit:
    """A fitted tick Cox binarsity model, its own objective and what it cost."""

    coef: np.ndarray
    seconds: float
    n_iter: int
    tick_objective: float
    n_failures: int
    strength: float
    step: float


def fit_tick_cox(
    X_onehot: sp.csr_matrix,
    time: np.ndarray,
    event: np.ndarray,
    blocks_start: np.ndarray,
    blocks_length: np.ndarray,
    lam: float,
    total_weight: float,
    solver: str = "agd",
    tol: float = 1e-5,
    max_iter: int = 100,
    step: float | str = "1/L",
) -> TickCoxFit:
    """Fit tick's ``CoxRegression(penalty="binarsity")`` at our λ and time ``fit``.

    The Binacox paper's code drives the same learner (``solver="agd"``, a fixed
    ``step=0.3`` with ``linesearch`` off). tick's own default (``step=None``: backtracking
    from a step of 1e9) stalls on this model: measured on the benchmark's simulated data,
    its step falls from ~30 to ~1e-9 within 4 iterations and to ~1e-12 by the 11th (its
    sufficient-decrease test compares whole objectives, prox'ed and centred), so the
    objective stops moving up to ~1e-3 (relative) above the optimum whatever ``tol``. So the
    step is fixed, by default at 1/L with L = max_i ‖x_i‖² (= the number of blocks for a
    one-hot design): the Hessian of the partial likelihood / m is a mixture of
    covariances of the rows over risk sets, ≼ max_i ‖x_i‖² I. ``tol`` is on the relative
    change of the objective, checked every ``record_every=10`` iterations. Columns outside the blocks (``C()`` levels) are in
    the prox's range but in no block: ``ProxBinarsity`` leaves them unpenalised.

    Parameters
    ----------
    X_onehot : csr_matrix of shape (n, d)
        One-hot design (one 1 per block and row).
    time, event : ndarray of shape (n,)
        Follow-up times and 0/1 event indicators.
    blocks_start, blocks_length : ndarray
        The penalised (TV) blocks.
    lam : float
        Our λ; tick's strength is λ W / m (:func:`tick_cox_strength`,
        :func:`tick_cox_failures`).
    total_weight : float
        W (n for unit weights).
    solver : {"agd", "gd"}
        tick's solver.
    tol, max_iter : float, int
        tick's stopping rule (its defaults: 1e-5 and 100).
    step : float, "1/L" or "linesearch"
        A fixed step (linesearch off), 1/L (above), or tick's default backtracking.

    Returns
    -------
    TickCoxFit
        w, the seconds of ``fit``, iterations run, tick's own objective at w, m and the
        strength used.
    """
    CoxRegression = _tick_cox_class()
    # fresh writable copies: tick's C++ refuses read-only arrays (pandas' to_numpy)
    times = np.array(time, dtype=np.float64, copy=True)
    censoring = np.array(event, dtype=np.ushort, copy=True)
    n_failures = tick_cox_failures(times, censoring)
    strength = tick_cox_strength(lam, total_weight, n_failures)
    if step == "1/L":
        X = sp.csr_matrix(X_onehot)
        step = 1.0 / float(np.max(np.asarray(X.multiply(X).sum(axis=1))))
    learner = CoxRegression(
        penalty="binarsity",
        C=1.0 / strength,
        solver=solver,
        step=None if step == "linesearch" else float(step),
        tol=tol,
        max_iter=max_iter,
        blocks_start=np.asarray(blocks_start, dtype=np.uint64),
        blocks_length=np.asarray(blocks_length, dtype=np.uint64),
        verbose=False,
    )
    if step != "linesearch":
        learner._solver_obj.linesearch = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, seconds = timed(lambda: learner.fit(X_onehot, times, censoring))
    coef = np.asarray(learner.coeffs, dtype=np.float64).copy()
    history = learner._solver_obj.history.values.get("n_iter", [0])
    value = float(learner._solver_obj.objective(coef))
    n_iter = int(history[-1]) if len(history) else 0
    return TickCoxFit(
        coef, seconds, n_iter, value, n_failures, strength, float(learner._solver_obj.step)
    )
