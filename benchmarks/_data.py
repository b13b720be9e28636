"""Data for the suites: the simulated designs and the paper's three UCI sets.

Simulated design (shared by ``speed``, ``timing``, ``scaling`` and ``rate``)
----------------------------------------------------------------------------
Features are Gaussian with Toeplitz covariance Σ_jk = ρ^|j−k| (ρ = 0.5, as in the
paper's simulations). They are drawn as a stationary AR(1) across columns,
x_j = ρ x_{j−1} + sqrt(1 − ρ²) z_j, which has exactly that covariance and needs
no Cholesky factor nor any n × p temporary, so n = 1e7 rows fit in memory.

The truth is sparse and additive: η*_i = β*_0 + Σ_{j ∈ S} f_j(x_ij), with S a set of
``n_active`` features spread over the p columns. Components alternate between

* a step function (two jumps), f(x) = 1.2·1{x > 0.5} − 0.8·1{x ≤ −0.3}, which
  binarsity can represent exactly up to the bin edges, and
* a sinusoid, f(x) = sin(π x / 1.5), smooth (Lipschitz) and non-monotone,

each centred by its mean under N(0, 1) so that β*_0 is the only level. For the
logistic model y_i ~ Bernoulli(σ(η*_i)) with β*_0 = −0.5; for the gaussian model
(the ``rate`` suite, where Theorem 2 needs Lipschitz components) every active
component is smooth: sinusoids alternate with f(x) = 1.5·tanh(2x) and
y_i = η*_i + σ ε_i; there the features are mapped to [−3, 3] by their normal CDF
(:func:`to_bounded`), because Theorem 2 assumes a bounded support and Gaussian tails
would leave wide end bins whose bias puts a floor under the error. (The components are
then centred under the Gaussian, not exactly under the new marginal: the intercept
absorbs the difference.)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

RHO = 0.5
INTERCEPT = -0.5

# Means under N(0, 1) of the raw components, computed once by quadrature so that
# each component has mean zero and the truth has the single level β*_0.
_GH_X, _GH_W = np.polynomial.hermite_e.hermegauss(200)
_GH_W = _GH_W / _GH_W.sum()


def _step(x: np.ndarray) -> np.ndarray:
    return 1.2 * (x > 0.5) - 0.8 * (x <= -0.3)


def _sine(x: np.ndarray) -> np.ndarray:
    return np.sin(np.pi * x / 1.5)


def _tanh(x: np.ndarray) -> np.ndarray:
    return 1.5 * np.tanh(2.0 * x)


def _centred(f):
    # The step's mean by quadrature is inexact at the jumps; use the normal CDF.
    from scipy.stats import norm

    if f is _step:
        mean = 1.2 * norm.sf(0.5) - 0.8 * norm.cdf(-0.3)
    else:
        mean = float(_GH_W @ f(_GH_X))
    return lambda x: f(x) - mean


STEP, SINE, TANH = _centred(_step), _centred(_sine), _centred(_tanh)


def active_set(p: int, n_active: int = 6) -> np.ndarray:
    """Indices of the active features: ``n_active`` columns spread evenly over ``p``."""
    k = min(p, n_active)
    return np.unique(np.linspace(0, p - 1, k).round().astype(int))


def toeplitz_gaussian(n: int, p: int, rho: float = RHO, seed: int = 0) -> np.ndarray:
    """Draw ``n`` rows of N(0, Σ) with Σ_jk = ρ^|j−k|, as a float64 (n, p) array.

    Parameters
    ----------
    n, p : int
        Rows and features.
    rho : float
        Correlation between neighbouring features.
    seed : int
        Seed of the NumPy generator.

    Returns
    -------
    ndarray of shape (n, p)
        C-ordered features.
    """
    rng = np.random.default_rng(seed)
    X = np.empty((n, p))
    s = np.sqrt(1.0 - rho**2)
    X[:, 0] = rng.standard_normal(n)
    for j in range(1, p):
        X[:, j] = rng.standard_normal(n)
        X[:, j] *= s
        X[:, j] += rho * X[:, j - 1]
    return X


@dataclass
class Simulated:
    """A simulated data set and its truth."""

    X: np.ndarray
    y: np.ndarray
    eta: np.ndarray  # true linear predictor (logistic) or regression function (gaussian)
    active: np.ndarray


def additive_truth(X: np.ndarray, active: np.ndarray, smooth: bool) -> np.ndarray:
    """Evaluate Σ_{j ∈ S} f_j(x_j) (without intercept); see the module docstring."""
    out = np.zeros(X.shape[0])
    for rank, j in enumerate(active):
        if smooth:
            f = SINE if rank % 2 == 0 else TANH
        else:
            f = STEP if rank % 2 == 0 else SINE
        out += f(X[:, j])
    return out


def simulate_logistic(n: int, p: int, n_active: int = 6, seed: int = 0) -> Simulated:
    """Sparse additive logistic model on Toeplitz Gaussian features.

    Parameters
    ----------
    n, p : int
        Rows and features.
    n_active : int
        Number of features with a non-zero component (steps alternate with sinusoids).
    seed : int
        Seed; features and labels are reproducible.

    Returns
    -------
    Simulated
        ``X`` (n, p), ``y`` in {0, 1} (float64), the true η* and the active set.
    """
    X = toeplitz_gaussian(n, p, seed=seed)
    active = active_set(p, n_active)
    eta = INTERCEPT + additive_truth(X, active, smooth=False)
    rng = np.random.default_rng(seed + 1)
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-eta))).astype(np.float64)
    return Simulated(X, y, eta, active)


def to_bounded(X: np.ndarray) -> np.ndarray:
    """Map Toeplitz Gaussian features to [−3, 3] through their normal CDF (a copula).

    The features keep their dependence but get a bounded support with a uniform
    marginal, as Theorem 2 assumes; quantile bins then have equal widths 6 / D.
    """
    from scipy.special import ndtr

    return 6.0 * ndtr(X) - 3.0


def simulate_gaussian(
    n: int, p: int, n_active: int = 4, sigma: float = 1.0, seed: int = 0
) -> Simulated:
    """Sparse additive gaussian model with Lipschitz components (for ``rate``).

    Parameters
    ----------
    n, p : int
        Rows and features.
    n_active : int
        Number of active features (sinusoids alternate with tanh ramps).
    sigma : float
        Noise standard deviation.
    seed : int
        Seed.

    Returns
    -------
    Simulated
        ``X`` (bounded, :func:`to_bounded`), ``y`` = f*(X) + σε, ``eta`` = f*(X) and
        the active set.
    """
    X = to_bounded(toeplitz_gaussian(n, p, seed=seed))
    active = active_set(p, n_active)
    f = additive_truth(X, active, smooth=True)
    rng = np.random.default_rng(seed + 1)
    return Simulated(X, f + sigma * rng.standard_normal(n), f, active)


# --- the paper's real data sets -------------------------------------------------------

#: Continuous features used by the paper's protocol (README of the data folder).
CONTINUOUS = {
    "adult": ["age", "fnlwgt", "capital-gain", "capital-loss", "hours-per-week"],
    "bank": ["age", "balance", "day", "duration", "campaign", "pdays", "previous"],
    # every numeric column but "Area Code", a 3-level region code
    "churn": [
        "Account Length",
        "VMail Message",
        "Day Mins",
        "Day Calls",
        "Day Charge",
        "Eve Mins",
        "Eve Calls",
        "Eve Charge",
        "Night Mins",
        "Night Calls",
        "Night Charge",
        "Intl Mins",
        "Intl Calls",
        "Intl Charge",
        "CustServ Calls",
    ],
}
_TARGET = {"adult": ("income", ">50K"), "bank": ("y", "yes"), "churn": ("Churn?", "True.")}

#: Published test AUCs of binarsity (tick) in the paper (data README).
PAPER_AUC = {"adult": 0.817, "bank": 0.873, "churn": 0.734}


def load_real(name: str, data_dir: Path) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Load one of the paper's data sets, continuous features only.

    Parameters
    ----------
    name : {"adult", "bank", "churn"}
        Data set.
    data_dir : Path
        Folder holding ``NAME.csv`` (``--data-dir``; never part of the repository).

    Returns
    -------
    X : ndarray of shape (n, p), float64
    y : ndarray of shape (n,), float64 in {0, 1}
    columns : list of str
        Names of the columns of ``X``.
    """
    import pandas as pd

    path = Path(data_dir) / f"{name}.csv"
    if not path.exists():
        raise FileNotFoundError(
            f"{path} not found: pass the folder of the paper's data sets with --data-dir"
        )
    df = pd.read_csv(path, skipinitialspace=True)
    columns = [c for c in CONTINUOUS[name] if c in df.columns]
    # education-num is numeric in some Adult extracts; use it when present.
    if name == "adult" and "education-num" in df.columns:
        columns.insert(1, "education-num")
    target, positive = _TARGET[name]
    y = (df[target].astype(str).str.strip() == positive).to_numpy(np.float64)
    X = df[columns].to_numpy(np.float64)
    return np.ascontiguousarray(X), y, columns
