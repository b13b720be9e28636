"""Suite ``families``: the generic statsmodels-family path against the Cython kernels.

For each n (quick: 10⁴ and 10⁵; full: also 10⁶) a simulated design of 5 features in 50
quantile bins (``penalty_weights="theory"``, unit weights, an exposure offset) is fitted
at λ = 0.01·λ_max with ``solver="cd"`` at the default ``tol``:

* ``"gaussian"``, ``"binomial"``, ``"poisson"`` (Cython kernels) and the same families
  given as statsmodels instances (the NumPy path of ``StatsmodelsFamily``, loss = half
  the unit deviance): same solution, the cost of the generic path;
* ``"gamma"`` and ``("tweedie", 1.5)`` (log link, Cython kernels since issue 14) and
  the same families forced onto the NumPy path (``StatsmodelsFamily`` with its kernels
  removed, ``np.gamma``/``np.tweedie-1.5``): same solution, the kernels' speed-up.

Not here yet: glum (``GeneralizedLinearRegressor(family="tweedie")`` on the one-hot of
the bins), LightGBM's tweedie objective and EBM (issue 14); glum is not in the ``bench``
extra.

Reported per fit: median wall time of ``repeats``, CD sweeps and Newton steps, the KKT
violation and, for a named family and its statsmodels twin, the largest difference of
the levels.
"""

from __future__ import annotations

import warnings

import numpy as np

from ._common import SuiteOutput, median_time


def _data(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    eta = 0.5 * (X[:, 0] > 0) - 0.4 * np.tanh(2 * X[:, 1]) + 0.3 * (X[:, 2] > 1)
    off = np.log(rng.uniform(0.5, 2.0, n))
    mu = np.exp(eta + off)
    ys = {
        "gaussian": eta + off + rng.normal(size=n),
        "binomial": rng.binomial(1, 1 / (1 + np.exp(-eta - off))).astype(float),
        "poisson": rng.poisson(mu).astype(float),
        "gamma": rng.gamma(2.0, mu / 2.0),
        "tweedie": np.where(rng.random(n) < 0.6, 0.0, rng.gamma(2.0, mu / 2.0)),
    }
    return X, off, ys


def run(out: SuiteOutput, quick: bool, repeats: int = 3, **_: object) -> None:
    """Run the suite and fill ``out``.

    Parameters
    ----------
    out : SuiteOutput
        Collector of the rows.
    quick : bool
        n = 10⁴ and 10⁵ only (full: also 10⁶).
    repeats : int
        Timing repeats (the median is reported).
    """
    import statsmodels.api as sm

    from binarsity_stats import Binarizer
    from binarsity_stats._histogram import bin_sums_all
    from binarsity_stats._penalty import penalty_weights
    from binarsity_stats._solvers import Prepared, lambda_max

    log = sm.families.links.Log()
    twins = {
        "gaussian": sm.families.Gaussian(),
        "binomial": sm.families.Binomial(),
        "poisson": sm.families.Poisson(),
    }
    from binarsity_stats._families import StatsmodelsFamily, get_family

    def numpy_path(sm_family):
        fam = StatsmodelsFamily(sm_family)
        fam._fast = None  # the NumPy path of the same family
        return fam

    named = {"gamma": get_family("gamma"), "tweedie-1.5": get_family(("tweedie", 1.5))}
    numpy_twins = {
        "np.gamma": ("gamma", numpy_path(sm.families.Gamma(log)), "gamma"),
        "np.tweedie-1.5": (
            "tweedie",
            numpy_path(sm.families.Tweedie(var_power=1.5, link=log)),
            "tweedie-1.5",
        ),
    }
    for n in (10_000, 100_000) if quick else (10_000, 100_000, 1_000_000):
        X, off, ys = _data(n)
        b = Binarizer(n_bins=50)
        codes = np.ascontiguousarray(b.fit_transform(X).T)
        bp = np.concatenate([[0], np.cumsum(b.n_bins_)]).astype(np.intp)
        counts = np.zeros(bp[-1])
        bin_sums_all(codes, bp, np.ones(n), counts)
        w = penalty_weights("theory", counts, bp)
        cases = [(name, name, ys[name], name) for name in twins]
        cases += [(f"sm.{name}", twins[name], ys[name], name) for name in twins]
        cases += [(label, fam, ys[label.split("-")[0]], label) for label, fam in named.items()]
        cases += [(label, fam, ys[key], of) for label, (key, fam, of) in numpy_twins.items()]
        sols = {}
        for label, family, y, twin_of in cases:
            lam = 0.01 * lambda_max(codes, bp, y, family=family, penalty_weights=w, offset=off)
            prep = Prepared(codes, bp, y, family=family, penalty_weights=w, offset=off)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                sol, secs, _ = median_time(lambda p=prep, lam=lam: p.solve(lam), repeats)
            diff = np.nan
            if twin_of is not None and label != twin_of:
                diff = float(np.abs(sol.coef - sols[twin_of].coef).max())
            sols[label] = sol
            out.add(
                n=n, family=label, seconds=secs, sweeps=sol.n_sweeps, newton=sol.n_iter,
                kkt=sol.kkt_violation, converged=sol.converged, max_level_diff=diff,
            )  # fmt: skip
        print(f"  n={n}: done", flush=True)
    out.note(
        "sm.X = the statsmodels instance of family X (generic NumPy path, half-deviance "
        "loss); np.X = the log-link gamma/Tweedie family X on the NumPy path (its Cython "
        "kernels removed); max_level_diff = largest |θ| difference from the named (Cython) "
        "family."
    )
    out.write()
