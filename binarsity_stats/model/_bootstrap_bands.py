"""What a bootstrap gives: pointwise bands of every term's shape, the cut-points'
frequencies, intervals of predictions, broom's tables, the plots and the report.

``BootstrapBandsMixin`` is the base class of
:class:`~binarsity_stats.model._bootstrap.BootstrapResults` that reads its resamples
(its methods are documented there): it reads ``results``, ``model`` and the resamples'
``coef``, ``dense_coef``, ``intercept``, their jump masks (``_jumps()``) and relaxed
refits (``_relaxed()``). The resampling and the relaxed refits are in
:mod:`._bootstrap`; the three kinds of band (``method=``) are described there.
"""

from __future__ import annotations

import warnings

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..formula._formula import check_predict_missing, predict_complete

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

__all__ = ["BootstrapBandsMixin"]


def _check_level(level: Any, name: str = "level") -> float:
    if isinstance(level, bool) or not isinstance(level, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number in (0, 1); got {level!r}.")
    level = float(level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"{name} must be in (0, 1), e.g. 0.95; got {level!r}.")
    return level


_METHODS = ("percentile", "basic", "relaxed")


#: The share of bins (%) whose true level the bands held, smallest and largest over the
#: gaussian, binomial and poisson step and smooth shapes of ``python -m benchmarks
#: inference`` (docs/benchmarks.md; n = 2,000, 12 data sets each, nominal 90%), by band
#: method and the λ it was fitted at (CV's ``best_`` is ``lam_min``).
MEASURED_COVERAGE: dict[tuple[str, str], tuple[float, float]] = {
    ("percentile", "theory"): (0.0, 22.1),
    ("percentile", "lam_1se"): (20.8, 46.7),
    ("percentile", "lam_min"): (62.5, 94.0),
    ("basic", "theory"): (0.0, 20.8),
    ("basic", "lam_1se"): (15.5, 52.8),
    ("basic", "lam_min"): (62.9, 91.7),
    ("relaxed", "theory"): (37.1, 97.6),
    ("relaxed", "lam_1se"): (79.6, 98.2),
    ("relaxed", "lam_min"): (79.2, 96.4),
}
#: The share of new rows (%) whose true mean the intervals of ``predict(new, interval=)``
#: held, away from the true jumps (x more than 0.05 from a true cut), smallest and largest
#: over the three families of the same benchmark run.
MEASURED_PREDICT_COVERAGE: dict[tuple[str, str], tuple[float, float]] = {
    ("percentile", "theory"): (11.6, 27.9),
    ("percentile", "lam_1se"): (42.2, 45.7),
    ("percentile", "lam_min"): (73.4, 83.5),
    ("relaxed", "theory"): (45.7, 58.9),
    ("relaxed", "lam_1se"): (78.2, 89.2),
    ("relaxed", "lam_min"): (83.8, 91.5),
}
#: Below this measured coverage (%, at nominal 90%) the bands come with a warning.
HONEST_COVERAGE = 85.0


def _lam_kind(lam_source: str) -> str | None:
    source = str(lam_source)
    for kind in ("lam_1se", "lam_min", "theory"):
        if kind in source:
            return kind
    return None


def coverage_note(results: Any, method: str, what: str = "bands") -> tuple[str, bool]:
    """What the benchmark measured of these bands' (or intervals') coverage, and whether
    it fell short.

    Parameters
    ----------
    results : BinarsityResults
        The fit the bootstrap resampled (its ``lam_source`` says which kind of λ).
    method : {"percentile", "basic", "relaxed"}
        The band method.
    what : {"bands", "intervals"}, default="bands"
        The shape bands (share of bins holding the true level) or the prediction
        intervals (share of new rows holding the true mean, away from the jumps).

    Returns
    -------
    note : str
        One sentence for the output (frames' ``attrs``, figures, the report).
    short : bool
        Whether the smallest measured coverage is below ``HONEST_COVERAGE`` (or was not
        measured at this kind of λ).
    """
    table = MEASURED_COVERAGE if what == "bands" else MEASURED_PREDICT_COVERAGE
    unit = "bins" if what == "bands" else "new rows away from the jumps"
    held = "level" if what == "bands" else "mean"
    kind = _lam_kind(getattr(results, "lam_source", ""))
    where = "docs/benchmarks.md, suite inference, nominal 90%"
    if kind is None or (method, kind) not in table:
        at = "" if kind is None else f" by the {method} method"
        lo, hi = table["relaxed", "lam_1se"]
        return (
            f"{method} {what} at a λ the coverage benchmark did not measure{at} (it "
            f"measured the theory λ, lam_1se and lam_min: {where}); at lam_1se relaxed "
            f"{what} held {lo:.0f}-{hi:.0f}% of true {held}s",
            True,
        )
    lo, hi = table[method, kind]
    note = (f"{method} {what} at {kind}: they held the true {held} in {lo:.0f}-{hi:.0f}% of "
            f"{unit} in the simulations of {where}")  # fmt: skip
    short = lo < HONEST_COVERAGE
    if short:
        note += ": below 85% for some shapes; do not read them as exact intervals"
    return note, short


def _warn_coverage(boot: Any, method: str, what: str = "bands") -> str:
    """The coverage note; a UserWarning the first time a short one is shown for ``boot``."""
    note, short = coverage_note(boot.results, method, what)
    shown = boot.__dict__.setdefault("_coverage_warned", set())
    if short and (method, what) not in shown:
        shown.add((method, what))
        warnings.warn(f"bootstrap {note}.", UserWarning, stacklevel=3)
    return note


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


class BootstrapBandsMixin:
    """Bands, frequencies, intervals, tables, plots and report of
    :class:`~binarsity_stats.model._bootstrap.BootstrapResults`."""

    def shape_bands(
        self, level: float = 0.95, precision: int | None = None, method: str = "relaxed"
    ) -> pd.DataFrame:
        """Pointwise bootstrap bands of every code block's shape, level by level.

        Parameters
        ----------
        level : float, default=0.95
            Nominal coverage of each band.
        precision : int, optional
            Significant digits of the interval labels.
        method : {"percentile", "basic", "relaxed"}, default="relaxed"
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
        out = pd.DataFrame(rows, columns=cols)
        out.attrs["coverage_note"] = _warn_coverage(self, method)
        return out

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
            if getattr(block, "is_pair", False):
                rows.extend(self._pair_line_frequencies(j))
                continue
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

    def _pair_line_frequencies(self, j: int) -> list[dict[str, Any]]:
        """The cut lines of pair term j, each axis's in turn: the share of resamples whose
        surface keeps the line (a jump crosses it), and whether the fit keeps it."""
        block = self.model.spec.blocks[j]
        per = [self.results._pair_line_jumps(j, c) for c in self.coef]
        fit = self.results._pair_line_jumps(j, self.results.coef)
        rows = []
        for axis, (column, edges) in enumerate(((block.column, block.edges),
                                                (block.pair_column, block.pair_edges))):  # fmt: skip
            freq = np.mean([p[axis] for p in per], axis=0)
            for line, cut in enumerate(edges):
                rows.append({"term": block.term, "column": column, "cut": float(cut),
                             "frequency": float(freq[line]), "selected": bool(fit[axis][line])})  # fmt: skip
        return rows

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
        method: str = "relaxed",
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
        method : {"percentile", "basic", "relaxed"}, default="relaxed"
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
            out = predict_complete(
                self.model.spec, newdata, offset, missing,
                lambda rows, off: self._predict(rows, off, level, method, type),
            )  # fmt: skip
        else:
            out = self._predict(None, offset, level, method, type)
        out.attrs["coverage_note"] = _warn_coverage(self, method, "intervals")
        out.attrs["interval"] = f"bootstrap ({method}, {self.n_boot} resamples)"
        return out

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

    def plot_shapes(
        self,
        terms: Any = None,
        ax: Any = None,
        density: bool = True,
        bands: bool = True,
        level: float = 0.95,
        method: str = "relaxed",
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
        method : {"percentile", "basic", "relaxed"}, default="relaxed"
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
        fig = plot_shapes(shown, terms=terms, ax=ax, density=density, bands=band,
                          scale=scale, sharey=sharey, rug=freq)  # fmt: skip
        if band is not None:
            fig.text(0.99, 0.995, f"{level:.0%} {band.attrs['coverage_note']}", fontsize=6,
                     color="0.35", ha="right", va="top", wrap=True, gid="coverage-note")  # fmt: skip
        return fig

    def report(
        self,
        path: Any = None,
        new: Any = None,
        y: Any = None,
        *,
        level: float = 0.95,
        method: str = "relaxed",
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
        method : {"percentile", "basic", "relaxed"}, default="relaxed"
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
        self, conf_level: float = 0.95, method: str = "relaxed", exponentiate: bool = False
    ) -> pd.DataFrame:
        """One row per coefficient with its bootstrap interval: broom's ``tidy()``.

        Parameters
        ----------
        conf_level : float, default=0.95
            Coverage of the intervals.
        method : {"percentile", "basic", "relaxed"}, default="relaxed"
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
        method: str = "relaxed",
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
        method : {"percentile", "basic", "relaxed"}, default="relaxed"
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
