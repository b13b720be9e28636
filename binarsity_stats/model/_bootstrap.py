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
from ..formula._formula import check_predict_missing, predict_complete

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

    from ._results import BinarsityResults

__all__ = ["BootstrapResults", "bootstrap"]

#: Show a progress bar (``verbose=None``) when n_boot × rows exceeds this.
_LONG_RUN = 20_000_000


def _check_level(level: Any, name: str = "level") -> float:
    if isinstance(level, bool) or not isinstance(level, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number in (0, 1); got {level!r}.")
    level = float(level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"{name} must be in (0, 1), e.g. 0.95; got {level!r}.")
    return level


_METHODS = ("percentile", "basic", "relaxed")

#: In a relaxed refit every edge that is not a jump gets this multiple of its penalty
#: weight at λ_max: far more than fuses it, so it stays fused (design.md §2: at λ_max·ω
#: every chain is flat); the jumps get weight 0 (free).
_FUSE = 100.0


def _check_method(method: Any) -> str:
    if method not in _METHODS:
        raise ValueError(f"method must be 'percentile', 'basic' or 'relaxed'; got {method!r}.")
    return method


def _interval(draws: np.ndarray, estimate: np.ndarray, level: float, method: str):
    """(lower, upper) of the bootstrap ``draws`` (axis 0) around ``estimate``.

    ``percentile``: the (1 − level)/2 and (1 + level)/2 quantiles of the draws.
    ``basic``: those quantiles reflected about the estimate, 2·θ̂ − q_hi and 2·θ̂ − q_lo
    (it corrects the bias the resamples show: where the refits sit below the fit, the
    interval moves up by as much).
    """
    lo, hi = np.quantile(draws, [(1 - level) / 2, (1 + level) / 2], axis=0)
    if method == "basic":
        lo, hi = 2 * estimate - hi, 2 * estimate - lo
    return lo, hi


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


class _Drawn:
    """A fit with other levels and dense coefficients (for drawing; the rest is the fit's)."""

    def __init__(self, results: Any, coef: np.ndarray, dense_coef: np.ndarray) -> None:
        self._results = results
        self.coef = coef
        self.dense_coef = dense_coef

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "_results":
            raise AttributeError(name)
        return getattr(self._results, name)


class BootstrapResults:
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

    def shape_bands(
        self, level: float = 0.95, precision: int | None = None, method: str = "percentile"
    ) -> pd.DataFrame:
        """Pointwise bootstrap bands of every code block's shape, level by level.

        Parameters
        ----------
        level : float, default=0.95
            Nominal coverage of each band.
        precision : int, optional
            Significant digits of the interval labels.
        method : {"percentile", "basic", "relaxed"}, default="percentile"
            ``"percentile"``: the (1 − level)/2 and (1 + level)/2 quantiles of the
            resamples' θ at that level. ``"basic"``: the same quantiles reflected about
            the fit's θ̂ (2θ̂ − q_hi, 2θ̂ − q_lo). ``"relaxed"``: the percentile band of
            the *relaxed* resamples — every resample's own cut-points kept, its levels
            refitted without penalty on its rows (the unpenalised GLM on its segments) —
            around the relaxed fit (``estimate`` is then the fit's refit on its own
            cut-points, as ``refit()``). The penalised bands inherit the shrinkage of
            the penalised estimate, which grows with λ: at the theory λ they miss a
            step almost everywhere. The relaxed band removes the shrinkage and keeps
            the uncertainty of the cut-points; it is the one to use at the theory λ or
            ``lam_1se`` (coverage in docs/benchmarks.md, suite ``inference``). Its
            first call costs one more solve per resample. A segment without events in
            some resample (binomial, poisson) has no finite unpenalised level there: its
            relaxed band then reaches far below (or above) the others, as it should.

        Returns
        -------
        DataFrame
            One row per level of every ``bin()`` and ``C()`` term: ``term``, ``column``,
            ``label`` (right-closed interval ``(low, high]``, ``= v``, a category or
            ``missing``), ``estimate`` (θ of the fit, link scale), ``lower``, ``upper``
            and ``count`` (weighted training rows).
        """
        level = _check_level(level)
        method = _check_method(method)
        m = self.model
        coef, est = self.coef, self.results.coef
        if method == "relaxed":
            relaxed = self._relaxed()
            coef, est = relaxed["coef"], relaxed["estimate"][0]
        q = np.stack(_interval(coef, est, level, method))
        rows = []
        for j, block in enumerate(m.spec.blocks):
            s = int(m.block_ptr[j])
            for k, label in enumerate(block.level_labels(precision)):
                rows.append(
                    {"term": block.term, "column": block.column, "label": label,
                     "estimate": float(est[s + k]), "lower": float(q[0, s + k]),
                     "upper": float(q[1, s + k]), "count": float(m.bin_counts[s + k])}
                )  # fmt: skip
        cols = ["term", "column", "label", "estimate", "lower", "upper", "count"]
        return pd.DataFrame(rows, columns=cols)

    def cut_frequencies(self) -> pd.DataFrame:
        """For every edge of every binned term, the share of resamples that jump there.

        Returns
        -------
        DataFrame
            One row per edge: ``term``, ``column``, ``cut`` (x ≤ cut is left of it),
            ``frequency`` (share of the B refits with a jump at this edge) and
            ``selected`` (whether the original fit jumps there).
        """
        m = self.model
        freq = self._jumps().mean(axis=0)
        rows = []
        for j, block in enumerate(m.spec.blocks):
            if not block.penalized:
                continue
            s = int(m.block_ptr[j])
            breaks = {first for first, _, _ in block.chains()}
            for k in range(1, block.chain_length):
                if k in breaks:  # the next level's chain of a by-group term
                    continue
                at = block.position(k)[0] if block.by is not None else k
                cut = float(block.edges[at - 1]) if block.edges is not None else np.nan
                rows.append(
                    {"term": block.term, "column": block.column,
                     "cut": cut, "frequency": float(freq[s + k]),
                     "selected": bool(self.results.jumps[s + k])}
                )  # fmt: skip
        return pd.DataFrame(rows, columns=["term", "column", "cut", "frequency", "selected"])

    def _edge_frequency(self) -> np.ndarray:
        """(d,) share of resamples with a jump at each level (0 where none can be)."""
        return self._jumps().mean(axis=0)

    def predict(
        self,
        newdata: Any = None,
        interval: float = 0.95,
        *,
        offset: Any = None,
        type: str = "response",
        method: str = "percentile",
        missing: str | None = None,
    ) -> pd.DataFrame:
        """Bootstrap intervals of the mean response (or the linear predictor).

        Parameters
        ----------
        newdata : DataFrame, optional
            Rows to predict (default: the training rows).
        interval : float, default=0.95
            Coverage of the intervals.
        offset : array-like, optional
            Offset of the new rows, as in ``BinarsityResults.predict``.
        type : {"response", "link"}, default="response"
            Scale.
        method : {"percentile", "basic", "relaxed"}, default="percentile"
            As in :meth:`shape_bands`; the basic interval is taken on the link scale
            and mapped by the inverse link (so a probability stays in (0, 1)); with
            ``"relaxed"``, ``mean`` is the prediction of the relaxed fit.
        missing : {None, "nan", "error"}, optional
            As in ``BinarsityResults.predict``: a row of NaN (or an error) for new rows
            with a missing value in a column whose missing values dropped training rows.

        Returns
        -------
        DataFrame
            ``mean`` (the fit's prediction), ``mean_ci_lower`` and ``mean_ci_upper`` (the
            interval over the resamples), one row per row of ``newdata``.
        """
        level = _check_level(interval, "interval")
        method = _check_method(method)
        if type not in ("response", "link"):
            raise ValueError(f"type must be 'response' or 'link'; got {type!r}.")
        check_predict_missing(missing)
        if newdata is not None:
            return predict_complete(
                self.model.spec, newdata, offset, missing,
                lambda rows, off: self._predict(rows, off, level, method, type),
            )  # fmt: skip
        return self._predict(None, offset, level, method, type)

    def _predict(
        self, newdata: Any, offset: Any, level: float, method: str, type: str  # noqa: A002
    ) -> pd.DataFrame:
        m = self.model
        if newdata is None:
            if offset is not None:
                raise ValueError("offset is only used together with newdata.")
            design, off = m.design, m.offset
        else:
            design, off = self.results._new_design(newdata, offset)
        fits = (self.coef, self.dense_coef, self.intercept)
        fit = (self.results.coef, self.results.dense_coef, self.results.intercept)
        if method == "relaxed":
            relaxed = self._relaxed()
            fits = (relaxed["coef"], relaxed["dense_coef"], relaxed["intercept"])
            fit = relaxed["estimate"]
            method = "percentile"
        etas = np.stack([
            m.linear_predictor(c, z, b0, design, off) for c, z, b0 in zip(*fits, strict=True)
        ])  # fmt: skip
        est = m.linear_predictor(*fit, design, off)
        if method == "basic":
            lo, hi = _interval(etas, est, level, method)
            if type == "response":  # a decreasing inverse link swaps the ends
                est, lo, hi = m.family.mean(est), m.family.mean(lo), m.family.mean(hi)
                lo, hi = np.minimum(lo, hi), np.maximum(lo, hi)
            return pd.DataFrame({"mean": est, "mean_ci_lower": lo, "mean_ci_upper": hi})
        if type == "response":
            etas, est = m.family.mean(etas), m.family.mean(est)
        lo, hi = _interval(etas, est, level, method)
        return pd.DataFrame({"mean": est, "mean_ci_lower": lo, "mean_ci_upper": hi})

    def _relaxed(self) -> dict:
        """The relaxed refits: every resample's (and the fit's) own cut-points kept, its
        levels refitted without penalty on its rows (cached)."""
        cached = self.__dict__.get("_relaxed_fits")
        if cached is not None:
            return cached
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

    def plot_shapes(
        self,
        terms: Any = None,
        ax: Any = None,
        density: bool = True,
        bands: bool = True,
        level: float = 0.95,
        method: str = "percentile",
        scale: str = "link",
        sharey: bool = False,
        rug: bool = False,
    ) -> Figure:
        """The fit's shapes with their pointwise bootstrap bands.

        Parameters
        ----------
        terms : list of str, optional
            Terms to draw (default: every ``bin()`` and ``C()`` term).
        ax : matplotlib Axes or array of Axes, optional
            Where to draw.
        density : bool, default=True
            Shade the weighted share of training rows per bin.
        bands : bool, default=True
            Draw the bands of :meth:`shape_bands`.
        level : float, default=0.95
            Their nominal coverage.
        method : {"percentile", "basic", "relaxed"}, default="percentile"
            The band, as in :meth:`shape_bands`; with ``"relaxed"`` the shapes drawn
            are those of the relaxed fit (the band's centre), not the penalised ones.
        scale : {"link", "response"}, default="link"
            The effect in the link's units, or exp(effect) relative to the average
            training row (odds or rate ratio; see ``BinarsityResults.plot_shapes``).
        sharey : bool, default=False
            One y range for all drawn terms.
        rug : bool, default=False
            Draw :meth:`cut_frequencies` as a rug at the bottom of every binned term.

        Returns
        -------
        matplotlib.figure.Figure
            The figure drawn on.
        """
        from ..report._plotting import plot_shapes

        band = self.shape_bands(level, method=method) if bands else None
        freq = self.cut_frequencies() if rug else None
        shown: Any = self.results
        if method == "relaxed":  # the band is around the relaxed fit: draw that one
            coef, dense, _ = self._relaxed()["estimate"]
            shown = _Drawn(self.results, coef, dense)
        return plot_shapes(shown, terms=terms, ax=ax, density=density, bands=band,
                           scale=scale, sharey=sharey, rug=freq)  # fmt: skip

    def report(
        self,
        path: Any = None,
        new: Any = None,
        y: Any = None,
        *,
        level: float = 0.95,
        method: str = "percentile",
        offset: Any = None,
        title: str | None = None,
        scale: str = "link",
        bins: int = 10,
        precision: int | None = None,
    ) -> Any:
        """The HTML report of the resampled fit, with this bootstrap's bands and stability.

        The page of ``BinarsityResults.report``, its shapes drawn with these bands
        (at ``level``) and cut-frequency rug, its cut-point table with these
        frequencies, and a bootstrap section (resamples, λ rule, convergence).

        Parameters
        ----------
        path : str or path-like, optional
            File to write; when omitted the page is returned as a string.
        new : DataFrame, optional
            Held-out rows for the calibration section.
        y : array-like or str, optional
            The observed response of ``new`` (default its response column).
        level : float, default=0.95
            Coverage of the bands.
        method : {"percentile", "basic", "relaxed"}, default="percentile"
            The bands, as in :meth:`shape_bands` (``"relaxed"`` draws the relaxed fit).
        offset : array-like, optional
            Offset of ``new``.
        title : str, optional
            Title of the page.
        scale : {"link", "response"}, default="link"
            Scale of the shape plots.
        bins : int, default=10
            Groups of the calibration plot.
        precision : int, optional
            Significant digits of cut-points and labels.

        Returns
        -------
        str or path-like
            ``path`` as given, or the HTML page.
        """
        from ..report._report import write_report

        res = self.results
        return write_report(
            res, path, new=new, y=y, offset=offset, cv=getattr(res, "cv_", None), boot=self,
            title=title, scale=scale, level=level, method=method, bins=bins,
            precision=precision,
        )  # fmt: skip

    def tidy(
        self, conf_level: float = 0.95, method: str = "percentile", exponentiate: bool = False
    ) -> pd.DataFrame:
        """One row per coefficient with its bootstrap interval: broom's ``tidy()``.

        Parameters
        ----------
        conf_level : float, default=0.95
            Coverage of the intervals.
        method : {"percentile", "basic", "relaxed"}, default="percentile"
            The interval, as in :meth:`shape_bands` (``"relaxed"``: the percentile
            interval of the relaxed resamples around the relaxed fit).
        exponentiate : bool, default=False
            exp() of the estimate and the interval.

        Returns
        -------
        DataFrame
            One row per parameter of ``results.params`` (intercept, every level, the
            linear terms): ``term``, ``estimate`` (the fit's), ``std.error`` (the
            standard deviation of the resamples), ``conf.low``, ``conf.high`` (the
            bootstrap interval: for the code blocks the ``lower`` and ``upper`` of
            :meth:`shape_bands`), ``conf.method`` (``"percentile"``, ``"basic"`` or
            ``"relaxed percentile"``: the interval is named by how it was made) and
            ``bias`` (mean of the resamples minus the estimate), as broom's ``tidy``
            of an R ``boot`` object. No test statistic or p-value.
        """
        from ._tidy import check_conf_level, tidy_bootstrap

        level = check_conf_level(conf_level)
        return tidy_bootstrap(self, level, _check_method(method), exponentiate, _interval)

    def glance(self) -> pd.DataFrame:
        """One row for the bootstrap: broom's ``glance()``.

        Returns
        -------
        DataFrame
            ``nobs``, ``n.boot``, ``n.converged``, ``lambda`` (the fit's),
            ``lambda.rule`` (``"same"`` or ``"cv"``), ``resampled`` (rows or groups),
            ``n.cuts`` (the fit's cut-points) and ``n.cuts.mean`` (their mean number
            over the resamples).
        """
        from ._tidy import glance_bootstrap

        return glance_bootstrap(self)

    def augment(
        self,
        newdata: Any = None,
        type_predict: str = "link",
        type_residuals: str = "deviance",
        *,
        interval: float = 0.95,
        method: str = "percentile",
        offset: Any = None,
        y: Any = None,
        missing: str | None = None,
    ) -> pd.DataFrame:
        """The data with the fit's predictions and their bootstrap intervals.

        Parameters
        ----------
        newdata : DataFrame, optional
            Rows to predict (default: the training rows).
        type_predict : {"link", "response"}, default="link"
            Scale of ``.fitted`` and of the interval (broom's ``type.predict``).
        type_residuals : {"deviance", "pearson", "response"}, default="deviance"
            Kind of ``.resid``.
        interval : float, default=0.95
            Coverage of ``.lower`` and ``.upper``.
        method : {"percentile", "basic", "relaxed"}, default="percentile"
            The interval, as in :meth:`predict`.
        offset : array-like, optional
            Offset of ``newdata``.
        y : array-like or str, optional
            Observed response of ``newdata`` for ``.resid``.
        missing : {None, "nan", "error"}, optional
            As in :meth:`predict`.

        Returns
        -------
        DataFrame
            The data (a copy) plus ``.fitted``, ``.lower``, ``.upper`` (:meth:`predict`'s
            ``mean``, ``mean_ci_lower``, ``mean_ci_upper``) and ``.resid`` when the
            response is known.
        """
        from ._tidy import augment_bootstrap

        return augment_bootstrap(self, newdata, type_predict, type_residuals, offset, y,
                                 interval, method, missing)  # fmt: skip

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
