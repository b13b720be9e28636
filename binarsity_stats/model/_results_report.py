"""What a fit at one λ shows a reader: the statsmodels-style summary, the shape and
calibration plots, the self-contained HTML report (each drawn by :mod:`..report`).

``ReportMixin`` is a base class of :class:`~binarsity_stats.model._results.BinarsityResults`
(its methods are documented there); it reads ``bootstrap_`` and ``cv_`` of the results.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

    from ..report._summary import Summary

__all__ = ["ReportMixin"]


class ReportMixin:
    """Summary, plots and report of :class:`~binarsity_stats.model._results.BinarsityResults`."""

    # -- the summary -----------------------------------------------------------------------
    def summary(self, precision: int | None = None, sort: str | None = None) -> Summary:
        """A statsmodels-style report of the fit.

        Parameters
        ----------
        precision : int, optional
            Significant digits of the cut points and interval labels (default 6).
        sort : {None, "importance"}, optional
            ``"importance"`` lists the terms by decreasing :meth:`term_importance`;
            by default they appear in formula order.

        Returns
        -------
        Summary
            Printable (``print(res.summary())``); ``as_text()``, ``as_html()``,
            ``as_latex()`` and ``tables`` (DataFrames).
        """
        from ..report._summary import make_summary

        if sort not in (None, "importance"):
            raise ValueError(f"sort must be None or 'importance', got {sort!r}")
        return make_summary(self, precision=precision, sort=sort)

    # -- plots -------------------------------------------------------------------------------
    def plot_shapes(
        self,
        terms: Any = None,
        ax: Any = None,
        density: bool = True,
        bands: bool = False,
        scale: str = "link",
        sharey: bool = False,
        rug: bool = False,
    ) -> Figure:
        """Shape of every (or the named) term, with the data density.

        Binned terms are step functions, ``C()`` terms bars, linear terms a line over
        their training range; a term the penalty dropped is marked "dropped (flat)". The
        missing level of a binned term (``missing="separate"``) is a bar of its own,
        right of the steps, with its row count.

        Parameters
        ----------
        terms : list of str, optional
            Terms to draw (default: every term; a linear term by its column name).
        ax : matplotlib Axes or array of Axes, optional
            Where to draw (one Axes per term).
        density : bool, default=True
            Shade the weighted share of training rows per bin.
        bands : bool, default=False
            Draw the 95% pointwise bands of the last :meth:`bootstrap`.
        scale : {"link", "response"}, default="link"
            The effect in the link's units (log-odds, log rate, mean), or exp(effect)
            relative to the average training row: an odds ratio (binomial), a rate
            ratio (poisson). The gaussian (identity link) has no ratio scale and
            refuses ``"response"``.
        sharey : bool, default=False
            One y range for all drawn terms.
        rug : bool, default=False
            Draw the cut-point frequencies of the last :meth:`bootstrap` as a rug at the
            bottom of every binned term (a tick per edge, as tall as the share of
            resamples that jump there).

        Returns
        -------
        matplotlib.figure.Figure
            The figure drawn on.
        """
        self.model.needs_rows("plot_shapes()")
        from ..report._plotting import plot_shapes

        band = freq = None
        boot = getattr(self, "bootstrap_", None)
        if (bands or rug) and boot is None:
            what = "bands=True" if bands else "rug=True"
            raise ValueError(f"{what} needs a bootstrap first: call res.bootstrap().")
        if bands:
            band = boot.shape_bands()
        if rug:
            freq = boot.cut_frequencies()
        return plot_shapes(self, terms=terms, ax=ax, density=density, bands=band, scale=scale,
                           sharey=sharey, rug=freq)  # fmt: skip

    def plot_calibration(
        self, new: Any = None, y: Any = None, bins: int = 10, ax: Any = None,
        scale: str = "auto",
    ) -> Figure:
        """Calibration: binned observed against predicted mean, with the row counts.

        Parameters
        ----------
        new : DataFrame, optional
            New rows; the training rows (and weights) when omitted.
        y : array-like or str, optional
            The observed response of ``new`` (or its column name); needed with ``new``.
        bins : int, default=10
            Groups of equal row counts by predicted mean.
        ax : matplotlib Axes, optional
            Where to draw.
        scale : {"auto", "linear", "logit"}, default="auto"
            Logit axes spread rare (or near-certain) binomial events that a linear axis
            crowds at 0 (or 1); ``"auto"`` takes them when every group's predicted mean
            is below 0.1 or above 0.9.

        Returns
        -------
        matplotlib.figure.Figure
            The figure drawn on (numbers: ``_curves.calibration_table``).
        """
        self.model.needs_rows("plot_calibration()")
        from ..report._curves import plot_calibration

        return plot_calibration(self, new=new, y=y, bins=bins, ax=ax, scale=scale)

    def plot_effects(
        self,
        features: Any = None,
        reference: dict | None = None,
        interval: Any = "refit",
        level: float = 0.95,
        ax: Any = None,
    ) -> Figure:
        """Predicted probability (or mean) against each feature, the others at a typical row.

        Parameters
        ----------
        features : str or list of str, optional
            Columns to sweep (default: every column a term reads).
        reference : dict, optional
            Values of the reference row by column (default: training medians of
            numeric columns, most frequent levels of the others); printed on the figure.
        interval : "refit", BootstrapResults or None, default="refit"
            The band: the refit's interval of the mean (valid given the selected
            cut-points), a bootstrap's percentile interval, or none.
        level : float, default=0.95
            Coverage of the band.
        ax : matplotlib Axes or array of Axes, optional
            One Axes per feature.

        Returns
        -------
        matplotlib.figure.Figure
            One panel per feature (``report/_effects.plot_effects``).
        """
        self.model.refuse_pairs("plot_effects()")
        from ..report._effects import plot_effects

        return plot_effects(self, features=features, reference=reference, interval=interval,
                            level=level, ax=ax)  # fmt: skip

    # -- the report ------------------------------------------------------------------------
    def report(
        self,
        path: Any = None,
        new: Any = None,
        y: Any = None,
        *,
        offset: Any = None,
        title: str | None = None,
        scale: str = "link",
        level: float = 0.95,
        method: str = "relaxed",
        bins: int = 10,
        precision: int | None = None,
    ) -> Any:
        """One self-contained HTML page of the fit, for a reader with only a browser.

        The page holds: the data and the model (formula, family, rows, weights, offset,
        every term's column and training range), the :meth:`summary`, the shape plots
        (with the 95% bands and the cut-frequency rug of the last :meth:`bootstrap`, if
        any), the cut-points kept (with their bootstrap frequencies, and the edges not
        kept that resamples often cut), the bootstrap's settings, the cross-validation
        curve and path (when λ came from ``fit_cv``), calibration (binned observed
        against predicted mean) on the training rows or on ``new``, and the versions of
        the package and its libraries. Plots are embedded PNG images; there is no
        script and no link to any file or address, so the page reads offline and can
        be mailed or archived as it is. Every text from the data is HTML-escaped.

        Parameters
        ----------
        path : str or path-like, optional
            File to write (UTF-8). When omitted the page is returned as a string.
        new : DataFrame, optional
            Held-out rows for the calibration section (and a held-out deviance);
            default: the training rows, with their weights.
        y : array-like or str, optional
            The observed response of ``new``, or the name of its column; default the
            formula's response column, when ``new`` has it.
        offset : array-like, optional
            Offset of ``new``, as in :meth:`predict`.
        title : str, optional
            Title of the page (default "Binarsity GLM: " and the formula).
        scale : {"link", "response"}, default="link"
            Scale of the shape plots (see :meth:`plot_shapes`).
        level : float, default=0.95
            Coverage of the bootstrap bands, when bootstrapped.
        method : {"percentile", "basic", "relaxed"}, default="relaxed"
            The bootstrap bands (``BootstrapResults.shape_bands``): ``"relaxed"``
            removes the penalty's shrinkage (the one to use at the theory λ or
            ``lam_1se``; it draws the relaxed fit under its band).
        bins : int, default=10
            Groups of equal row counts in the calibration plot.
        precision : int, optional
            Significant digits of cut-points and interval labels (default 6).

        Returns
        -------
        str or path-like
            ``path`` as given, or the HTML page when ``path`` is None.

        Raises
        ------
        ValueError
            A bad ``scale``, ``level`` or ``bins``; ``y`` or ``offset`` without ``new``;
            ``new`` without ``y`` and without the response column.

        See Also
        --------
        CVResults.report : the report of a cross-validated fit.
        BootstrapResults.report : the report with that bootstrap's bands.

        Examples
        --------
        >>> res = glm("y ~ bin(x)", df).fit()  # doctest: +SKIP
        >>> res.bootstrap(200, random_state=0)  # doctest: +SKIP
        >>> res.report("model.html")  # doctest: +SKIP
        'model.html'
        """
        self.model.needs_rows(
            "report()", "summary() is computed from per-partition statistics."
        )
        from ..report._report import write_report

        return write_report(
            self, path, new=new, y=y, offset=offset, cv=getattr(self, "cv_", None),
            boot=getattr(self, "bootstrap_", None), title=title, scale=scale, level=level,
            method=method, bins=bins, precision=precision,
        )  # fmt: skip
