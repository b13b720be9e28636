"""Suite ``families``: gamma and Tweedie against the NumPy path, glum, LightGBM and EBM.

Four parts (``--only kernels,glum,heldout,cox``; all by default), each writing its
own table (``families.md``, ``families_glum.md``, ``families_heldout.md``,
``families_cox.md`` and ``families_cox_tick.md``; **cox**: ``family="cox"`` against
lifelines, scikit-survival and tick, see ``families_cox.py``):

**kernels** — for each n (quick: 10⁴ and 10⁵; full: also 10⁶) a simulated design of 5
features in 50 quantile bins (``penalty_weights="theory"``, unit weights, an exposure
offset) is fitted at λ = 0.01·λ_max with ``solver="cd"`` at the default ``tol``:

* ``"gaussian"``, ``"binomial"``, ``"poisson"`` (Cython kernels) and the same families
  given as statsmodels instances (the NumPy path of ``StatsmodelsFamily``, loss = half
  the unit deviance): same solution, the cost of the generic path;
* ``"gamma"`` and ``("tweedie", 1.5)`` (log link, Cython kernels since issue 14) and
  the same families forced onto the NumPy path (``StatsmodelsFamily`` with its kernels
  removed, ``np.gamma``/``np.tweedie-1.5``): same solution, the kernels' speed-up.

Reported per fit: median wall time of ``repeats``, CD sweeps and Newton steps, the KKT
violation and, for a named family and its statsmodels twin, the largest difference of
the levels.

**glum** — the same problem solved by glum. Our objective (design.md §1, with the
half-deviance loss of the log-link gamma/Tweedie families) is

    F(β0, θ) = (1/W) Σ_i s_i ½ d(y_i, μ_i) + λ Σ_j Σ_k ω_jk |θ_jk − θ_j,k−1|,

and glum's (``GeneralizedLinearRegressor`` docstring) is
``1/(2 Σ s) · deviance + α · l1_ratio · ‖P1 ∘ w‖₁``: the same loss. A lasso on the
*one-hot* of the bins penalises the levels, not their differences, so it is another
problem; on the cumulative ("thermometer") coding of the same bins, column
``1{code_ij ≥ k}`` for k = 1…d_j−1, the coefficient of column k *is* the jump
θ_jk − θ_j,k−1, so glum with ``alpha=λ``, ``l1_ratio=1``, ``P1=ω`` (the jumps'
weights), an unpenalised intercept and the same offset minimises exactly our F (our
sum-to-zero constraint only fixes the shift that glum's intercept absorbs). The suite
checks this: both solvers at a tight tolerance reach the same F (reported as
``F_tight_rel_diff``) and the same η. Then it times, from the codes (binning excluded
for both; glum's dense thermometer matrix built outside its timing; our ``Prepared``
inside ours): ours at its default ``tol`` and glum (``solver="irls-cd"``, its default
for an L1 penalty) at ``gradient_tol`` 1e-4 (its default) and 1e-8, each with its
suboptimality ``F − F*`` (F* = the smallest F any run reached). Balanced weights ω
(the package default), λ = 0.01·λ_max, n = 10⁴ and 10⁵ (full: also 3·10⁵), gamma and
Tweedie p = 1.5, one thread.

**heldout** — held-out deviance on a simulated insurance portfolio (the truth of the
vignette "Insurance pricing": 30,000 policies, exposure in (0.05, 1] years, claim
frequency with steps in driver age, bonus-malus and region, gamma claim costs with
steps in vehicle power and age; ``portfolio``). Each replication (quick: 2, full: 5)
draws a portfolio, holds out 30% and fits on the rest:

* ours, Tweedie p = 1.5 on the pure premium (cost / exposure) with exposure weights,
  ``bin(driver_age, 30) + bin(vehicle_power, 12) + bin(bonus_malus, 30) + C(region)``:
  the default ``fit()`` (``lam="theory"``) and 5-fold CV (``lam_min``, ``lam_1se``);
* ours, frequency × severity: poisson counts with ``offset(log(exposure))`` times a
  gamma model of the average claim cost weighted by the number of claims, each by
  5-fold CV at ``lam_min``;
* LightGBM (``objective="tweedie"``, ``tweedie_variance_power=1.5``, exposure
  weights, region as a categorical): its defaults (100 trees), and with early stopping
  (learning rate 0.05, up to 2,000 trees, stopped after 50 rounds without gain on 20%
  of the training rows); frequency × severity with early stopping (``"poisson"`` with
  ``init_score=log(exposure)``, ``"gamma"`` weighted by claims);
* EBM (interpret's ``ExplainableBoostingRegressor``, main effects only —
  ``interactions=0``; the truth is additive) with ``objective=
  "tweedie_deviance:variance_power=1.5"`` and exposure weights, and frequency ×
  severity (``"poisson_deviance"`` with ``init_score=log(exposure)``,
  ``"gamma_deviance"`` weighted by claims);
* a flat premium (the training rows' exposure-weighted mean) and the true premium.

Scored by the exposure-weighted Tweedie (p = 1.5) deviance per policy-year of the
held-out policies, reported as the excess over the true premium's deviance (mean and
standard error over the replications) with the fit time. Every method runs on one
thread.
"""

from __future__ import annotations

import os
import time
import warnings
from dataclasses import replace
from typing import Any

import numpy as np

from ._common import SuiteOutput, median_time

PARTS = ("kernels", "glum", "heldout", "cox")


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


def _binned(X: np.ndarray, n_bins: int = 50):
    from binarsity_stats import Binarizer

    b = Binarizer(n_bins=n_bins)
    codes = np.ascontiguousarray(b.fit_transform(X).T)
    bp = np.concatenate([[0], np.cumsum(b.n_bins_)]).astype(np.intp)
    return codes, bp


def _counts(codes: np.ndarray, bp: np.ndarray) -> np.ndarray:
    from binarsity_stats.kernels._histogram import bin_sums_all

    counts = np.zeros(bp[-1])
    bin_sums_all(codes, bp, np.ones(codes.shape[1]), counts)
    return counts


def run(
    out: SuiteOutput, quick: bool, repeats: int = 3, only: set | None = None, **_: object
) -> None:
    """Run the suite and fill ``out`` (and the glum and held-out outputs).

    Parameters
    ----------
    out : SuiteOutput
        Collector of the rows of the kernels part (``families.md``).
    quick : bool
        Smaller runs (see the module docstring).
    repeats : int
        Timing repeats (the median is reported).
    only : set of str, optional
        Parts to run among ``kernels``, ``glum``, ``heldout``, ``cox`` (default: all).
    """
    parts = set(PARTS) if not only else set(only)
    unknown = parts - set(PARTS)
    if unknown:
        raise SystemExit(f"--only takes {', '.join(PARTS)}; got {sorted(unknown)}")
    if "kernels" in parts:
        _kernels(out, quick, repeats)
    if "glum" in parts:
        _glum(replace(out, suite="families_glum", rows=[], notes=[]), quick, repeats)
    if "heldout" in parts:
        _heldout(replace(out, suite="families_heldout", rows=[], notes=[]), quick)
    if "cox" in parts:
        from .families_cox import run_cox, run_cox_tick

        cox = replace(out, suite="families_cox", rows=[], notes=[])
        run_cox(cox, quick)
        cox.write()
        cox_tick = replace(out, suite="families_cox_tick", rows=[], notes=[])
        run_cox_tick(cox_tick, quick, repeats)
        cox_tick.write()


# ---------------------------------------------------------------------------------------
# kernels: the Cython path against the NumPy path
# ---------------------------------------------------------------------------------------


def _kernels(out: SuiteOutput, quick: bool, repeats: int) -> None:
    import statsmodels.api as sm

    from binarsity_stats.families._families import StatsmodelsFamily, get_family
    from binarsity_stats.penalty._penalty import penalty_weights
    from binarsity_stats.engine._solvers import Prepared, lambda_max

    log = sm.families.links.Log()
    twins = {
        "gaussian": sm.families.Gaussian(),
        "binomial": sm.families.Binomial(),
        "poisson": sm.families.Poisson(),
    }

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
        codes, bp = _binned(X)
        w = penalty_weights("theory", _counts(codes, bp), bp)
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
        print(f"  kernels n={n}: done", flush=True)
    out.note(
        "sm.X = the statsmodels instance of family X (generic NumPy path, half-deviance "
        "loss); np.X = the log-link gamma/Tweedie family X on the NumPy path (its Cython "
        "kernels removed); max_level_diff = largest |θ| difference from the named (Cython) "
        "family."
    )
    out.write()


# ---------------------------------------------------------------------------------------
# glum: the same objective, thermometer coding
# ---------------------------------------------------------------------------------------


def thermometer(codes: np.ndarray, block_ptr: np.ndarray) -> np.ndarray:
    """The cumulative coding of the bins: column (j, k) is 1{code_ij ≥ k}, k = 1…d_j−1.

    Parameters
    ----------
    codes : ndarray of shape (p, n)
        Bin codes.
    block_ptr : ndarray of shape (p + 1,)
        Offsets of the blocks.

    Returns
    -------
    ndarray of shape (n, d − p)
        Its coefficients are the jumps θ_jk − θ_j,k−1 of the levels.
    """
    cols = []
    for j in range(codes.shape[0]):
        d = int(block_ptr[j + 1] - block_ptr[j])
        cols.append(codes[j][:, None] >= np.arange(1, d)[None, :])
    return np.hstack(cols).astype(np.float64)


def levels_from_jumps(jumps: np.ndarray, block_ptr: np.ndarray) -> np.ndarray:
    """θ (first level 0 in every block) from the thermometer coefficients.

    Parameters
    ----------
    jumps : ndarray of shape (d − p,)
        Coefficients of :func:`thermometer`'s columns.
    block_ptr : ndarray of shape (p + 1,)
        Offsets of the blocks.

    Returns
    -------
    ndarray of shape (d,)
        The levels.
    """
    out, k = [], 0
    for j in range(len(block_ptr) - 1):
        d = int(block_ptr[j + 1] - block_ptr[j])
        out.append(np.r_[0.0, np.cumsum(jumps[k : k + d - 1])])
        k += d - 1
    return np.concatenate(out)


def _glum(out: SuiteOutput, quick: bool, repeats: int) -> None:
    try:
        from glum import GeneralizedLinearRegressor, TweedieDistribution
    except ImportError as exc:  # pragma: no cover - glum is in the bench extra
        out.note(f"glum is not importable ({exc}): pip install '.[bench]'")
        out.write()
        return
    from binarsity_stats.families._families import get_family
    from binarsity_stats.penalty._penalty import penalty_weights
    from binarsity_stats.engine._solvers import Prepared, lambda_max

    families = {
        "gamma": (get_family("gamma"), "gamma"),
        "tweedie-1.5": (get_family(("tweedie", 1.5)), TweedieDistribution(1.5)),
    }
    for n in (10_000, 100_000) if quick else (10_000, 100_000, 300_000):
        X, off, ys = _data(n)
        codes, bp = _binned(X)
        w = penalty_weights("balanced", _counts(codes, bp), bp)
        # the jump between levels k-1 and k has weight w[bp[j] + k], k = 1..d_j-1
        p1 = np.concatenate([w[bp[j] + 1 : bp[j + 1]] for j in range(len(bp) - 1)])
        T = thermometer(codes, bp)
        for label, (fam, glum_family) in families.items():
            y = ys[label.split("-")[0]]
            lam = 0.01 * lambda_max(codes, bp, y, family=fam, penalty_weights=w, offset=off)
            prob = Prepared(codes, bp, y, family=fam, penalty_weights=w, offset=off).prob

            def objective(eta, theta, lam=lam, prob=prob):
                return float(prob.objective(eta, theta, lam))

            def ours(tol=None, fam=fam, y=y, lam=lam, codes=codes, bp=bp, w=w, off=off):
                prep = Prepared(codes, bp, y, family=fam, penalty_weights=w, offset=off)
                return prep.solve(lam) if tol is None else prep.solve(lam, tol=tol, max_iter=10_000)

            def theirs(tol, glum_family=glum_family, y=y, lam=lam, p1=p1, T=T, off=off):
                model = GeneralizedLinearRegressor(
                    alpha=lam, l1_ratio=1.0, P1=p1, family=glum_family, link="log",
                    gradient_tol=tol, max_iter=1000, solver="irls-cd",
                )  # fmt: skip
                return model.fit(T, y, offset=off)

            runs: dict[str, tuple[float, float, Any, float]] = {}
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                sol, secs, _ = median_time(ours, repeats)
                runs["binarsity (tol default)"] = (secs, sol.objective, sol.n_sweeps, np.nan)
                tight = ours(1e-12)
                eta_ours = tight.intercept + off + sum(
                    tight.coef[bp[j] + codes[j]] for j in range(len(bp) - 1)
                )
                runs["binarsity (tol 1e-12)"] = (np.nan, tight.objective, tight.n_sweeps, np.nan)
                for tol in (1e-4, 1e-8):
                    reps = 1 if n > 10_000 else repeats
                    model, secs, _ = median_time(lambda tol=tol: theirs(tol), reps)
                    eta = model.intercept_ + off + T @ model.coef_
                    f = objective(eta, levels_from_jumps(model.coef_, bp))
                    gap = float(np.abs(eta - eta_ours).max())
                    runs[f"glum (gradient_tol {tol:g})"] = (secs, f, model.n_iter_, gap)
            best = min(r[1] for r in runs.values())
            f_glum = runs["glum (gradient_tol 1e-08)"][1]
            rel = abs(f_glum - tight.objective) / abs(tight.objective)
            for solver, (secs, f, iters, gap) in runs.items():
                out.add(
                    n=n, family=label, solver=solver, seconds=secs, objective=f,
                    excess=f - best, iterations=iters, max_eta_diff_to_ours=gap,
                    F_tight_rel_diff=rel,
                )  # fmt: skip
            print(f"  glum n={n} {label}: done", flush=True)
    out.note(
        "excess = F − F*, F* the smallest F of the runs of that row group; iterations = our "
        "CD sweeps or glum's IRLS iterations; max_eta_diff_to_ours = largest |η| "
        "difference from our tol=1e-12 solution; F_tight_rel_diff = |F_glum(1e-8) − "
        "F_ours(1e-12)| / F (the two objectives are the same function)."
    )
    out.write(
        ["n", "family", "solver", "seconds", "objective", "excess", "iterations",
         "max_eta_diff_to_ours", "F_tight_rel_diff"]
    )  # fmt: skip


# ---------------------------------------------------------------------------------------
# heldout: a simulated insurance portfolio, ours against LightGBM and EBM
# ---------------------------------------------------------------------------------------

REGIONS = ["north", "south", "east", "west", "city"]
FEATURES = ["driver_age", "vehicle_power", "bonus_malus", "region"]
TERMS = "bin(driver_age, 30) + bin(vehicle_power, 12) + bin(bonus_malus, 30) + C(region)"


def portfolio(n: int, seed: int):
    """A simulated motor portfolio with a known premium (the vignette's truth).

    Parameters
    ----------
    n : int
        Policies.
    seed : int
        Random seed.

    Returns
    -------
    DataFrame
        Features, ``exposure`` (years), ``n_claims``, ``claim_cost``, ``avg_cost``
        (NaN without a claim), ``pure_premium`` (cost per year) and ``true_premium``.
    """
    import pandas as pd

    rng = np.random.default_rng(seed)
    pol = pd.DataFrame({
        "driver_age": rng.integers(18, 86, n),
        "vehicle_power": rng.integers(4, 16, n),
        "bonus_malus": np.clip(np.round(rng.gamma(2.0, 12, n) + 50), 50, 200),
        "region": rng.choice(REGIONS, n),
        "exposure": np.round(rng.uniform(0.05, 1.0, n), 3),
    })  # fmt: skip
    freq = 0.15 * np.exp(
        0.9 * (pol.driver_age < 25) + 0.4 * pol.driver_age.between(25, 29)
        - 0.2 * (pol.driver_age > 60)
        + 0.5 * (pol.bonus_malus > 100) + 0.3 * (pol.bonus_malus > 150)
        + 0.4 * (pol.region == "city")
    )  # fmt: skip
    sev = 1500 * np.exp(0.3 * (pol.vehicle_power >= 10) + 0.2 * (pol.driver_age < 25))
    pol["n_claims"] = rng.poisson(freq * pol.exposure)
    shape = 1.5  # each claim costs Gamma(shape, mean sev)
    pol["claim_cost"] = [rng.gamma(shape, s / shape, k).sum() for s, k in zip(sev, pol.n_claims, strict=True)]
    pol["avg_cost"] = pol.claim_cost / pol.n_claims.where(pol.n_claims > 0)
    pol["pure_premium"] = pol.claim_cost / pol.exposure
    pol["true_premium"] = freq * sev
    return pol


def _methods() -> dict[str, Any]:
    """name → fit(train) returning predict(test) of the premium per policy-year (or a
    dict of such predictors, one per choice made from the same fit, e.g. λ)."""
    import pandas as pd
    from interpret.glassbox import ExplainableBoostingRegressor
    from lightgbm import LGBMRegressor, early_stopping

    import binarsity_stats as bs

    def ours_tweedie(cv):
        def fit(train):
            model = bs.glm(f"pure_premium ~ {TERMS}", train, family=("tweedie", 1.5),
                           sample_weight=train.exposure)  # fmt: skip
            if not cv:
                return model.fit().predict
            path = model.fit_cv(folds=5, random_state=0)  # one CV, two choices of λ
            return {s: path.results(s).predict for s in ("lam_min", "lam_1se")}

        return fit

    def ours_freq_sev(train):
        freq = bs.glm(f"n_claims ~ {TERMS} + offset(np.log(exposure))", train,
                      family="poisson").fit_cv(folds=5, random_state=0).results("lam_min")  # fmt: skip
        claims = train[train.n_claims > 0]
        sev = bs.glm(f"avg_cost ~ {TERMS}", claims, family="gamma",
                     sample_weight=claims.n_claims).fit_cv(folds=5, random_state=0)  # fmt: skip
        sev = sev.results("lam_min")
        return lambda test: freq.predict(test.assign(exposure=1.0)) * sev.predict(test)

    def lgb_X(df):
        X = df[FEATURES].copy()
        X["region"] = X["region"].astype(pd.CategoricalDtype(REGIONS))
        return X

    def lgb(objective, y, w, train, init=None, stop=True, **kw):
        params = dict(objective=objective, verbose=-1, random_state=0, n_jobs=1, **kw)
        if not stop:
            model = LGBMRegressor(**params)
            return model.fit(lgb_X(train), y(train), sample_weight=w(train), init_score=init)
        part = np.random.default_rng(1).random(len(train)) < 0.2
        fit, val = train[~part], train[part]
        model = LGBMRegressor(n_estimators=2000, learning_rate=0.05, **params)
        return model.fit(
            lgb_X(fit), y(fit), sample_weight=w(fit),
            init_score=None if init is None else init(fit),
            eval_set=[(lgb_X(val), y(val))],
            eval_sample_weight=None if w(val) is None else [w(val)],
            eval_init_score=None if init is None else [init(val)],
            callbacks=[early_stopping(50, verbose=False)],
        )  # fmt: skip

    def premium(df):
        return df.pure_premium.to_numpy()

    def exposure(df):
        return df.exposure.to_numpy()

    def lgb_tweedie(stop):
        def fit(train):
            model = lgb("tweedie", premium, exposure, train, stop=stop,
                        tweedie_variance_power=1.5)  # fmt: skip
            return lambda test: model.predict(lgb_X(test))

        return fit

    def lgb_freq_sev(train):
        freq = lgb("poisson", lambda d: d.n_claims.to_numpy(float), lambda d: None, train,
                   init=lambda d: np.log(d.exposure.to_numpy()))  # fmt: skip
        claims = train[train.n_claims > 0]
        sev = lgb("gamma", lambda d: d.avg_cost.to_numpy(), lambda d: d.n_claims.to_numpy(float),
                  claims)  # fmt: skip
        return lambda test: freq.predict(lgb_X(test)) * sev.predict(lgb_X(test))

    def ebm(objective):
        return ExplainableBoostingRegressor(objective=objective, interactions=0, n_jobs=1,
                                            random_state=0)  # fmt: skip

    def ebm_tweedie(train):
        model = ebm("tweedie_deviance:variance_power=1.5")
        model.fit(train[FEATURES], train.pure_premium, sample_weight=train.exposure)
        return lambda test: model.predict(test[FEATURES])

    def ebm_freq_sev(train):
        freq = ebm("poisson_deviance")
        freq.fit(train[FEATURES], train.n_claims, init_score=np.log(train.exposure.to_numpy()))
        claims = train[train.n_claims > 0]
        sev = ebm("gamma_deviance")
        sev.fit(claims[FEATURES], claims.avg_cost, sample_weight=claims.n_claims)
        return lambda test: freq.predict(test[FEATURES]) * sev.predict(test[FEATURES])

    return {
        "binarsity Tweedie, lam='theory' (default fit)": ours_tweedie(False),
        "binarsity Tweedie, 5-fold CV": ours_tweedie(True),
        "binarsity poisson × gamma, CV lam_min": ours_freq_sev,
        "LightGBM Tweedie, defaults": lgb_tweedie(False),
        "LightGBM Tweedie, early stopping": lgb_tweedie(True),
        "LightGBM poisson × gamma, early stopping": lgb_freq_sev,
        "EBM Tweedie (main effects)": ebm_tweedie,
        "EBM poisson × gamma (main effects)": ebm_freq_sev,
    }


def _heldout(out: SuiteOutput, quick: bool, n: int = 30_000) -> None:
    from binarsity_stats.families._families import get_family

    fam = get_family(("tweedie", 1.5))
    methods = _methods()
    reps = 2 if quick else 5
    scores: dict[str, list[float]] = {}
    times: dict[str, list[float]] = {}
    for r in range(reps):
        pol = portfolio(n, seed=r)
        held = np.random.default_rng(1000 + r).random(n) < 0.3
        train, test = pol[~held], pol[held]
        y, w = test.pure_premium.to_numpy(), test.exposure.to_numpy()

        def deviance(pred, y=y, w=w):
            return fam.deviance(y, np.asarray(pred, dtype=float), w) / w.sum()

        truth = deviance(test.true_premium)
        for name, fit in methods.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                start = time.perf_counter()
                predict = fit(train)
                secs = time.perf_counter() - start
            for choice, pred in (predict if isinstance(predict, dict) else {"": predict}).items():
                label = f"{name} {choice}".strip()
                times.setdefault(label, []).append(secs)
                scores.setdefault(label, []).append(deviance(pred(test)) - truth)
        flat = np.average(train.pure_premium, weights=train.exposure)
        scores.setdefault("flat premium", []).append(deviance(np.full(len(test), flat)) - truth)
        print(f"  heldout replication {r + 1}/{reps}: done (truth {truth:.3f})", flush=True)
    for name, values in scores.items():
        v = np.asarray(values)
        out.add(
            method=name, excess_deviance=float(v.mean()),
            se=float(v.std(ddof=1) / np.sqrt(len(v))) if len(v) > 1 else np.nan,
            fit_seconds=float(np.mean(times[name])) if name in times else np.nan,
            replications=len(v), n_train=int(round(0.7 * n)),
        )  # fmt: skip
    out.note(
        "excess_deviance = held-out exposure-weighted Tweedie (p = 1.5) deviance per "
        "policy-year minus that of the true premium (lower is better, 0 = the truth); se = "
        "its standard error over the replications; fit_seconds = mean wall time of the "
        "fit(s) (for a CV: the whole CV and the final fit, shared by lam_min and lam_1se) "
        f"on one thread (OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')})."
    )
    out.write()
