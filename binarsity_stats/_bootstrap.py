"""The nonparametric bootstrap of a binarsity fit: bands, cut-point stability, intervals.

A fit is refitted on ``n_boot`` resamples of its training rows, on the *same* bins (the
codes are never learned again, so every resample's θ lives on the fit's levels):

* a resample draws n rows with replacement; a row drawn c times enters the fit once with
  its sample weight multiplied by c (rows not drawn are left out), which is the weighted
  bootstrap of a weighted fit. With ``groups`` whole groups are drawn (the cluster
  bootstrap): a group drawn c times has all its rows at weight × c;
* λ is the fit's (``lam="same"``) or chosen again on every resample by the fit's
  cross-validation rule (``lam="cv"``: same folds, criterion, grid and rule, the folds
  drawn on the resample's distinct rows so that copies of a row never sit on both sides
  of a fold);
* every refit starts from the original solution (a warm start).

Resamples run in ``n_jobs`` threads (the kernels release the GIL). Every resample has its
own seed drawn up front from ``random_state`` and its own warm start, so the results do
not depend on ``n_jobs`` (bit for bit).

What the refits give: pointwise percentile bands of every term's shape
(:meth:`BootstrapResults.shape_bands`), the share of resamples in which each edge of a
binned term is a jump (:meth:`BootstrapResults.cut_frequencies`, the stability of a
cut-point) and percentile intervals of the mean response on new rows
(:meth:`BootstrapResults.predict`).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ._path import PathData, _FoldPool, fold_ids, group_fold_ids, resolve_n_jobs, select_lambda
from ._validation import (
    check_groups,
    check_int,
    check_max_iter,
    check_random_state,
    check_tol,
)

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


def _resample_counts(n: int, group_codes: np.ndarray | None, rng: np.random.Generator):
    """How many times each row is drawn: n rows, or as many whole groups as there are."""
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
        self.fit_intercept = m._solver_intercept
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
    groups : array-like of shape (n,), optional
        Resample whole groups. Default: the ``groups`` given to ``fit_cv`` if any.
    solver, tol, max_iter
        Engine options of the refits.
    verbose : bool, optional
        Progress bar (tqdm); default: on for long runs.

    Returns
    -------
    BootstrapResults
    """
    from ._solvers import SOLVERS

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
        group_codes = pd.factorize(pd.Series(check_groups(groups, m.nobs)), sort=True)[0]
    seeds = np.random.default_rng(check_random_state(random_state)).integers(
        0, 2**63 - 1, size=n_boot, dtype=np.int64
    )
    sampler = _Resampler(res, group_codes)
    start = res.solution

    def one(b: int) -> tuple:
        rng = np.random.default_rng(int(seeds[b]))
        counts = _resample_counts(m.nobs, group_codes, rng)
        rows = np.flatnonzero(counts)
        data = sampler.data(rows, counts[rows])
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
            pool = _FoldPool(min(workers, n_boot))
            try:
                fits = pool.map(one, range(n_boot))
            finally:
                pool.close()
    finally:
        if bar is not None:
            bar.close()
    return BootstrapResults(
        res,
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
    from ._path import cross_validate

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
    ) -> None:
        self.results = results
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

    def shape_bands(self, level: float = 0.95, precision: int | None = None) -> pd.DataFrame:
        """Pointwise percentile bands of every code block's shape, level by level.

        Parameters
        ----------
        level : float, default=0.95
            Coverage of each band: the (1 − level)/2 and (1 + level)/2 quantiles of the
            resamples' θ at that level.
        precision : int, optional
            Significant digits of the interval labels.

        Returns
        -------
        DataFrame
            One row per level of every ``bin()`` and ``C()`` term: ``term``, ``column``,
            ``label`` (right-closed interval ``(low, high]``, ``= v``, a category or
            ``missing``), ``estimate`` (θ of the fit, link scale), ``lower``, ``upper``
            and ``count`` (weighted training rows).
        """
        level = _check_level(level)
        m = self.model
        q = np.quantile(self.coef, [(1 - level) / 2, (1 + level) / 2], axis=0)
        rows = []
        for j, block in enumerate(m.spec.blocks):
            s = int(m.block_ptr[j])
            for k, label in enumerate(block.level_labels(precision)):
                rows.append(
                    {"term": block.term, "column": block.column, "label": label,
                     "estimate": float(self.results.coef[s + k]), "lower": float(q[0, s + k]),
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
            for k in range(1, block.chain_length):
                rows.append(
                    {"term": block.term, "column": block.column,
                     "cut": float(block.edges[k - 1]), "frequency": float(freq[s + k]),
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
    ) -> pd.DataFrame:
        """Percentile intervals of the mean response (or the linear predictor).

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

        Returns
        -------
        DataFrame
            ``mean`` (the fit's prediction), ``mean_ci_lower`` and ``mean_ci_upper`` (the
            percentile interval over the resamples), one row per row of ``newdata``.
        """
        level = _check_level(interval, "interval")
        if type not in ("response", "link"):
            raise ValueError(f"type must be 'response' or 'link'; got {type!r}.")
        m = self.model
        if newdata is None:
            if offset is not None:
                raise ValueError("offset is only used together with newdata.")
            design, off = m.design, m.offset
        else:
            design, off = self.results._new_design(newdata, offset)
        etas = np.stack([
            m.linear_predictor(c, z, b0, design, off)
            for c, z, b0 in zip(self.coef, self.dense_coef, self.intercept, strict=True)
        ])  # fmt: skip
        est = m.linear_predictor(
            self.results.coef, self.results.dense_coef, self.results.intercept, design, off
        )
        if type == "response":
            etas, est = m.family.mean(etas), m.family.mean(est)
        lo, hi = np.quantile(etas, [(1 - level) / 2, (1 + level) / 2], axis=0)
        return pd.DataFrame({"mean": est, "mean_ci_lower": lo, "mean_ci_upper": hi})

    def plot_shapes(
        self,
        terms: Any = None,
        ax: Any = None,
        density: bool = True,
        bands: bool = True,
        level: float = 0.95,
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
            Their coverage.

        Returns
        -------
        matplotlib.figure.Figure
            The figure drawn on.
        """
        from ._plotting import plot_shapes

        band = self.shape_bands(level) if bands else None
        return plot_shapes(self.results, terms=terms, ax=ax, density=density, bands=band)

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
