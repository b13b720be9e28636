"""The nonparametric bootstrap of a binarsity fit: bands, cut-point stability, intervals.

A fit is refitted on ``n_boot`` resamples of its training rows, on the *same* bins (the
codes are never learned again, so every resample's θ lives on the fit's levels):

* a resample draws n rows with replacement; a row drawn c times enters the fit once with
  its sample weight multiplied by c (rows not drawn are left out), which is the weighted
  bootstrap of a weighted fit. With ``groups`` whole groups are drawn (the cluster
  bootstrap): a group drawn c times has all its rows at weight × c. Frequency weights
  (``weights_kind="freq"``, no groups) count units: the Σ f units are drawn (a
  multinomial over the rows with probabilities f / Σ f) and a row drawn c times has
  weight c, so a row of weight 10 resamples as its 10 repeated rows would;
* λ is the fit's (``lam="same"``) or chosen again on every resample by the fit's
  cross-validation rule (``lam="cv"``: same folds, criterion, grid and rule, the folds
  drawn on the resample's distinct rows so that copies of a row never sit on both sides
  of a fold);
* every refit starts from the original solution (a warm start).

Resamples run in ``n_jobs`` threads (the kernels release the GIL). Every resample has its
own seed drawn up front from ``random_state`` and its own warm start, so the results do
not depend on ``n_jobs`` (bit for bit).

What the refits give: pointwise bands of every term's shape
(:meth:`BootstrapResults.shape_bands`), the share of resamples in which each edge of a
binned term is a jump (:meth:`BootstrapResults.cut_frequencies`, the stability of a
cut-point) and intervals of the mean response on new rows
(:meth:`BootstrapResults.predict`).

Bands and intervals come in three kinds (``method=``): ``"percentile"`` (quantiles of
the resamples), ``"basic"`` (those quantiles reflected about the fit) and ``"relaxed"``
(quantiles of the *relaxed* resamples: each resample's own cut-points kept and its
levels refitted without penalty — an engine solve in which the resample's jumps have
penalty weight 0 and every other edge a weight far above λ_max's, which is the
unpenalised GLM on its segments). The first two inherit the shrinkage of the penalised
estimate; the measured coverage of all three (``python -m benchmarks inference``,
docs/benchmarks.md) says: percentile at ``lam_min`` or below, relaxed at the theory λ
or ``lam_1se`` (and at least as good at ``lam_min``), no band exact next to a true jump.

This module draws the resamples and refits them (and the relaxed refits);
``BootstrapResults`` reads them with the methods of :mod:`._bootstrap_bands`.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..core._validation import (
    check_groups,
    check_int,
    check_max_iter,
    check_random_state,
    check_tol,
)
from ..engine._cv import FoldPool, resolve_n_jobs
from ..engine._folds import fold_ids, group_fold_ids
from ..engine._path import PathData
from ..engine._scoring import select_lambda
from ._bootstrap_bands import BootstrapBandsMixin

if TYPE_CHECKING:  # pragma: no cover
    from ._results import BinarsityResults

__all__ = ["BootstrapResults", "bootstrap"]

#: Show a progress bar (``verbose=None``) when n_boot × rows exceeds this.
_LONG_RUN = 20_000_000

#: In a relaxed refit every edge that is not a jump gets this multiple of its penalty
#: weight at λ_max: far more than fuses it, so it stays fused (design.md §2: at λ_max·ω
#: every chain is flat); the jumps get weight 0 (free).
_FUSE = 100.0


def _resample_counts(
    n: int,
    group_codes: np.ndarray | None,
    rng: np.random.Generator,
    freq_weights: np.ndarray | None = None,
) -> np.ndarray:
    """How many times each row is drawn: n rows, or as many whole groups as there are.

    With ``freq_weights`` (and no groups) a row stands for that many units and the
    units are drawn: round(Σ f) draws with probabilities f / Σ f (for integer weights
    exactly the bootstrap of the repeated rows); the count is then the row's new weight.
    """
    if group_codes is None and freq_weights is not None:
        total = float(np.sum(freq_weights))
        return rng.multinomial(max(1, int(round(total))), freq_weights / total)
    if group_codes is None:
        return np.bincount(rng.integers(0, n, size=n), minlength=n)
    n_groups = int(group_codes.max()) + 1
    drawn = np.bincount(rng.integers(0, n_groups, size=n_groups), minlength=n_groups)
    return drawn[group_codes]


class _Resampler:
    """The fit's design, restricted and reweighted per resample (codes shared, not re-binned)."""

    def __init__(self, res: BinarsityResults, group_codes: np.ndarray | None) -> None:
        m = res.model
        self.design = m.binned
        self.y, self.family, self.omega = m.y, m.family, m.penalty_weights
        self.fit_intercept = m.solver_intercept
        self.group_codes = group_codes

    def data(self, rows: np.ndarray, mult: np.ndarray) -> PathData:
        """The path data of the distinct rows drawn, weights × times drawn."""
        return PathData.from_design(
            self.design.subset(rows, multiplier=mult), self.y[rows], self.family, self.omega,
            fit_intercept=self.fit_intercept,
        )  # fmt: skip


def bootstrap(
    res: BinarsityResults,
    n_boot: int = 200,
    random_state: Any = None,
    n_jobs: int | None = None,
    lam: str = "same",
    *,
    groups: Any = None,
    solver: str = "cd",
    tol: float = 1e-6,
    max_iter: int = 1000,
    verbose: bool | None = None,
) -> BootstrapResults:
    """Refit ``res`` on ``n_boot`` row resamples (see the module notes).

    Parameters
    ----------
    res : BinarsityResults
        The fit (of ``fit``, ``fit_cv().best_`` ...).
    n_boot : int, default=200
        Number of resamples.
    random_state : int, numpy Generator or None
        Seed of the resamples (and of the folds with ``lam="cv"``).
    n_jobs : int, optional
        Worker threads (None: 1; -1: one per CPU). Results do not depend on it.
    lam : {"same", "cv"}, default="same"
        Keep the fit's λ, or choose it again on every resample by the fit's CV rule
        (needs the results of ``fit_cv``).
    groups : array-like of shape (n,) or str, optional
        Resample whole groups (labels, or a column name of the model's data). Default: the ``groups`` given to ``fit_cv`` if any.
    solver, tol, max_iter
        Engine options of the refits.
    verbose : bool, optional
        Progress bar (tqdm); default: on for long runs.

    Returns
    -------
    BootstrapResults
    """
    from ..engine._solvers import SOLVERS

    m = res.model
    n_boot = check_int(n_boot, "n_boot", 1, None)
    if lam not in ("same", "cv"):
        raise ValueError(f"lam must be 'same' or 'cv'; got {lam!r}.")
    rule = getattr(res, "cv_rule", None)
    if lam == "cv" and rule is None:
        raise ValueError(
            "lam='cv' re-selects λ by the fit's cross-validation rule: bootstrap the results "
            "of fit_cv (e.g. model.fit_cv().best_), or use lam='same'."
        )
    workers = resolve_n_jobs(1 if n_jobs is None else n_jobs)
    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {SOLVERS}; got {solver!r}.")
    opts = {"solver": solver, "tol": check_tol(tol), "max_iter": check_max_iter(max_iter)}
    if groups is None and rule is not None:
        groups = rule.get("groups")
    group_codes = None
    if groups is not None:
        groups = m.per_row(groups, "groups")  # a column name of the data, or labels
        group_codes = pd.factorize(pd.Series(check_groups(groups, m.nobs)), sort=True)[0]
    seeds = np.random.default_rng(check_random_state(random_state)).integers(
        0, 2**63 - 1, size=n_boot, dtype=np.int64
    )
    sampler = _Resampler(res, group_codes)
    start = res.solution
    freq = m.sample_weight if m.weighted and m.weights_kind == "freq" else None
    if group_codes is not None:
        freq = None  # whole groups are drawn; their rows keep weight × times drawn

    def one(b: int) -> tuple:
        rng = np.random.default_rng(int(seeds[b]))
        counts = _resample_counts(m.nobs, group_codes, rng, freq)
        rows = np.flatnonzero(counts)
        mult = counts[rows] if freq is None else counts[rows] / freq[rows]
        data = sampler.data(rows, mult)
        if lam == "same":
            sol = data.prepare().solve(res.lam, warm_start=start, **opts)
        else:
            sol = _cv_solve(data, rows, rule, group_codes, rng, opts)
        coef, b0 = m.report_coef(sol)
        out = (coef, np.asarray(sol.dense_coef, dtype=np.float64), float(b0),
               float(sol.lam), bool(sol.converged))  # fmt: skip
        if bar is not None:
            with lock:
                bar.update(1)
        return out

    if verbose is None:
        verbose = n_boot * m.nobs > _LONG_RUN
    bar, lock = None, threading.Lock()
    if verbose:
        from tqdm.auto import tqdm

        bar = tqdm(total=n_boot, desc="bootstrap", unit="fit")
    try:
        if workers == 1:
            fits = [one(b) for b in range(n_boot)]
        else:
            pool = FoldPool(min(workers, n_boot))
            try:
                fits = pool.map(one, range(n_boot))
            finally:
                pool.close()
    finally:
        if bar is not None:
            bar.close()
    return BootstrapResults(
        res,
        seeds=seeds,
        group_codes=group_codes,
        n_jobs=workers,
        solver_opts=opts,
        coef=np.stack([f[0] for f in fits]),
        dense_coef=np.stack([f[1] for f in fits]).reshape(n_boot, -1),
        intercept=np.array([f[2] for f in fits]),
        lams=np.array([f[3] for f in fits]),
        converged=np.array([f[4] for f in fits]),
        lam_rule=lam,
        grouped=group_codes is not None,
    )


def _cv_solve(data: PathData, rows, rule: dict, group_codes, rng, opts: dict):
    """λ chosen on one resample by the fit's CV rule, then the fit at that λ."""
    from ..engine._cv import cross_validate

    seed = int(rng.integers(0, 2**63 - 1))
    fixed = rule.get("splits")  # fold ids, a splitter's or given pairs: kept per row
    folds = None if fixed is None else fixed.restrict(rows)
    if folds is not None:
        fold_id = folds
    elif group_codes is not None:
        fold_id = group_fold_ids(group_codes[rows], rule["folds"], len(rows), random_state=seed)
    else:
        fold_id = fold_ids(data.y, rule["folds"], stratify=data.family.binary, random_state=seed)
    cv = cross_validate(
        data, rule["lams"], fold_id, scoring=rule["scoring"], opts=opts,
        fold_opts=dict(opts, tol=rule.get("cv_tol") or opts["tol"]), n_jobs=1,
        early_stopping=rule["early_stopping"], patience=rule["patience"],
        extend=rule.get("extend", 0),
    )  # fmt: skip
    _, _, i_min, i_1se = select_lambda(cv.fold_scores, rule["scoring"])
    return cv.path[i_1se if rule.get("which") == "lam_1se" else i_min]


class BootstrapResults(BootstrapBandsMixin):
    """Refits of a binarsity fit on row resamples (made by ``BinarsityResults.bootstrap``).

    Parameters
    ----------
    results : BinarsityResults
        The fit that was resampled.
    coef : ndarray of shape (B, d)
        θ of every resample (as reported: ``model.report_coef``).
    dense_coef : ndarray of shape (B, q)
        Dense coefficients of every resample.
    intercept : ndarray of shape (B,)
        β0 of every resample.
    lams : ndarray of shape (B,)
        λ of every resample.
    converged : ndarray of shape (B,)
        Whether every refit met its tolerance.
    lam_rule : {"same", "cv"}
        How λ was set.
    grouped : bool
        Whether whole groups were resampled.
    seeds : ndarray of shape (B,), optional
        The seed of every resample (its rows are drawn again from it for the relaxed
        refits of ``method="relaxed"``).
    group_codes : ndarray of shape (n,), optional
        Group of every row when whole groups were resampled.
    n_jobs : int, default=1
        Worker threads of the relaxed refits.
    solver_opts : dict, optional
        Engine options of the relaxed refits (``solver``, ``tol``, ``max_iter``).

    Attributes
    ----------
    n_boot : int
        Number of resamples B.
    """

    def __init__(
        self,
        results: BinarsityResults,
        coef: np.ndarray,
        dense_coef: np.ndarray,
        intercept: np.ndarray,
        lams: np.ndarray,
        converged: np.ndarray,
        lam_rule: str = "same",
        grouped: bool = False,
        seeds: np.ndarray | None = None,
        group_codes: np.ndarray | None = None,
        n_jobs: int = 1,
        solver_opts: dict | None = None,
    ) -> None:
        self.results = results
        self.seeds = seeds
        self.group_codes = group_codes
        self.n_jobs = n_jobs
        self.solver_opts = solver_opts
        self.coef = coef
        self.dense_coef = dense_coef
        self.intercept = intercept
        self.lams = lams
        self.converged = converged
        self.lam_rule = lam_rule
        self.grouped = grouped
        self.n_boot = int(coef.shape[0])

    @property
    def model(self) -> Any:
        """The model of the fit."""
        return self.results.model

    def _jumps(self) -> np.ndarray:
        """(B, d) jump masks of the resamples."""
        return np.stack([self.results._jumps_of(c) for c in self.coef])

    def _relaxed(self) -> dict:
        """The relaxed refits: every resample's (and the fit's) own cut-points kept, its
        levels refitted without penalty on its rows (cached)."""
        cached = self.__dict__.get("_relaxed_fits")
        if cached is not None:
            return cached
        pairs = [b.term for b in self.model.spec.blocks if getattr(b, "is_pair", False)]
        if pairs:
            raise ValueError(
                f"method='relaxed' refits every resample's levels with its jumps free and "
                f"the rest fused, which the pair term {pairs[0]!r} (a surface over two "
                "features) does not support yet: use method='percentile' (or 'basic')."
            )
        if getattr(self, "seeds", None) is None:
            raise ValueError(
                "method='relaxed' redraws every resample's rows from its seed, which this "
                "BootstrapResults does not hold (made by an older version): bootstrap again."
            )
        res, m = self.results, self.model
        group_codes = self.group_codes
        freq = m.sample_weight if m.weighted and m.weights_kind == "freq" else None
        if group_codes is not None:
            freq = None
        opts = dict(self.solver_opts or {})
        lam = m.lambda_max()
        lam = lam if lam > 0 else 1.0  # no chain to fuse: λ is irrelevant
        sampler = _Resampler(res, group_codes)

        def refit(rows: np.ndarray | None, mult: np.ndarray | None, jumps: np.ndarray):
            omega = np.where(jumps, 0.0, _FUSE * m.penalty_weights)
            design = m.binned if rows is None else m.binned.subset(rows, multiplier=mult)
            y = m.y if rows is None else m.y[rows]
            data = PathData.from_design(
                design, y, m.family, omega, fit_intercept=sampler.fit_intercept
            )
            sol = data.prepare().solve(lam, warm_start=res.solution, **opts)
            coef, b0 = m.report_coef(sol)
            return coef, np.asarray(sol.dense_coef, dtype=np.float64), float(b0)

        def one(b: int) -> tuple:
            rng = np.random.default_rng(int(self.seeds[b]))
            counts = _resample_counts(m.nobs, group_codes, rng, freq)
            rows = np.flatnonzero(counts)
            mult = counts[rows] if freq is None else counts[rows] / freq[rows]
            return refit(rows, mult, res._jumps_of(self.coef[b]))

        workers = max(1, int(self.n_jobs or 1))
        if workers == 1:
            fits = [one(b) for b in range(self.n_boot)]
        else:
            pool = FoldPool(min(workers, self.n_boot))
            try:
                fits = pool.map(one, range(self.n_boot))
            finally:
                pool.close()
        out = {
            "coef": np.stack([f[0] for f in fits]),
            "dense_coef": np.stack([f[1] for f in fits]).reshape(self.n_boot, -1),
            "intercept": np.array([f[2] for f in fits]),
            "estimate": refit(None, None, res.jumps),
        }
        self.__dict__["_relaxed_fits"] = out
        return out

    def summary_frame(self) -> pd.DataFrame:
        """λ, convergence and number of cut-points kept of every resample.

        Returns
        -------
        DataFrame
            One row per resample: ``lam``, ``converged``, ``n_jumps``.
        """
        return pd.DataFrame(
            {"lam": self.lams, "converged": self.converged, "n_jumps": self._jumps().sum(1)}
        )

    def __repr__(self) -> str:
        how = "groups" if self.grouped else "rows"
        return (
            f"<BootstrapResults {self.n_boot} resamples of {how}, lam={self.lam_rule!r}, "
            f"{int(self.converged.sum())} converged>"
        )
