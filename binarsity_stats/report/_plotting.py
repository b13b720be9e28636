"""Plots of fits, paths and cross-validation (matplotlib, imported lazily, only here).

Every function returns the matplotlib ``Figure`` it drew on and accepts ``ax``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

__all__ = [
    "plot_shapes",
    "plot_path",
    "plot_cv",
    "term_ranges",
    "plot_calibration",
    "calibration_table",
    "save_figure",
]


def _pyplot():
    import matplotlib.pyplot as plt

    return plt


def _plain(text: Any) -> str:
    """Text from the data (a column, term or level name) shown literally by matplotlib.

    A ``$`` pair would start mathtext (``$\\frac$`` fails to parse, ``$x$`` turns
    italic): every ``$`` is escaped, so the text is never math and shows as given.
    """
    return str(text).replace("$", r"\$")


def _axes_list(ax: Any, n: int, ncols: int = 3):
    """``n`` Axes: the ones given, or a new grid of subplots."""
    plt = _pyplot()
    if ax is None:
        ncols = max(1, min(ncols, n))
        nrows = max(1, -(-n // ncols))
        fig, axes = plt.subplots(nrows, ncols, figsize=(4.2 * ncols, 3.2 * nrows), squeeze=False)
        axes = list(axes.ravel())
        for extra in axes[n:]:
            extra.set_visible(False)
        return fig, axes[:n]
    axes = list(np.atleast_1d(np.asarray(ax, dtype=object)).ravel())
    if len(axes) < n:
        raise ValueError(f"need {n} Axes for {n} terms; got {len(axes)}.")
    return axes[0].figure, axes[:n]


def _mark_dropped(a: Any) -> None:
    a.text(0.5, 0.5, "dropped (flat)", transform=a.transAxes, ha="center", va="center",
           fontsize=10, color="0.35", style="italic")  # fmt: skip
    a.set_yticks([])


def _select_terms(m: Any, terms: Any) -> list[tuple[str, int, Any]]:
    """The terms to draw: ("block", j, Block) and ("linear", q, column name) items."""
    items = [("block", j, b) for j, b in enumerate(m.spec.blocks)]
    items += [("linear", q, name) for q, name in enumerate(m.spec.dense_columns)]
    if terms is not None:
        wanted = [terms] if isinstance(terms, str) else list(terms)
        name_of = {(k, j): (b.term if k == "block" else b) for k, j, b in items}
        known = set(name_of.values())
        unknown = [t for t in wanted if t not in known]
        if unknown:
            raise ValueError(f"unknown term(s) {unknown}; terms are {sorted(known)}.")
        items = [it for it in items if name_of[it[:2]] in wanted]
    if not items:
        raise ValueError("the model has no term to plot.")
    return items


def plot_shapes(
    res: Any,
    terms: Any = None,
    ax: Any = None,
    density: bool = True,
    bands: Any = None,
    scale: str = "link",
    sharey: bool = False,
    rug: Any = None,
) -> Figure:
    """Shapes of the terms: steps (binned), bars (categorical), lines (linear terms).

    A term the penalty dropped (all its levels equal) is marked "dropped (flat)"
    instead of being drawn as a flat line. A linear term whose column holds only 0 and
    1 is drawn as two bars. On the link scale, binned and categorical effects are 0 at
    the average training row while a linear term β·x is 0 at x = 0: a figure holding
    both says so in a note at its foot. A band reaching more than ``BAND_CLIP_SPANS``
    times the steps' span beyond them (a bin of few rows) is clipped there and marked
    by triangles, so that it cannot set the axis. The missing level of a binned term (its
    NaN rows, ``missing="separate"``) is a bar of its own, in a narrow panel to the
    right of the steps on the same y axis, labelled with its row count (and weight).

    Parameters
    ----------
    res : BinarsityResults
        A fit.
    terms : list of str, optional
        Terms to draw (``bin()`` and ``C()`` terms by their term, linear terms by their
        column); default every term.
    ax : Axes or array of Axes, optional
        One Axes per term; default a grid sized by the number of terms.
    density : bool, default=True
        Shade the weighted share of training rows per bin (right axis).
    bands : DataFrame, optional
        Pointwise bands, one row per level of every code block in block order with
        columns ``term``, ``lower`` and ``upper`` (``BootstrapResults.shape_bands``):
        drawn as a shaded step band (bins) or error bars (categories).
    scale : {"link", "response"}, default="link"
        ``"link"``: the effect in the link's units (log-odds, log rate, mean).
        ``"response"``: exp(effect − the effect of the average training row) — an odds
        ratio (binomial) or a rate ratio (poisson) relative to the average row, drawn on
        a log axis. A family whose link is neither log nor logit (the gaussian's
        identity) has no ratio scale: ``"response"`` raises ``ValueError`` (its link
        scale is already in the units of the mean).
    sharey : bool, default=False
        One y range for every drawn term (dropped terms are left out).
    rug : DataFrame, optional
        Cut-point frequencies, one row per edge with columns ``term``, ``cut`` and
        ``frequency`` (``BootstrapResults.cut_frequencies``): a rug of red ticks at the
        bottom of every binned term, each edge's tick as tall as its frequency (a tick
        of frequency 1 is 15% of the axes' height; edges never cut are not drawn).

    Returns
    -------
    matplotlib.figure.Figure
        The figure drawn on. The missing level's panel is an inset Axes of its term's
        Axes (gid ``"missing-level"``); the rug is a ``LineCollection`` with gid
        ``"cut-frequency-rug"``.

    Raises
    ------
    ValueError
        An unknown term or scale, ``scale="response"`` without a log or logit link, too
        few Axes, or a ``bands``/``rug`` frame that does not match the model's terms.
    """
    if scale not in ("link", "response"):
        raise ValueError(f"scale must be 'link' or 'response'; got {scale!r}.")
    m = res.model
    fam = m.family
    response = scale == "response"
    if response and fam.ratio_label is None:
        raise ValueError(
            f"scale='response' draws exp(effect) as a ratio and needs a log or logit link; "
            f"the {fam.name} family's {fam.link} link has none (its link scale is already in "
            f"units of the {fam.effect_label}): use scale='link'."
        )
    items = _select_terms(m, terms)
    fig, axes = _axes_list(ax, len(items))
    sw = np.asarray(m.sample_weight, dtype=np.float64)
    W = float(sw.sum())
    base = 1.0 if response else 0.0
    drawn = []
    for a, (what, j, block) in zip(axes, items, strict=True):
        if what == "linear":
            flat = _draw_linear(a, res, j, block, response, density, sw)
        else:
            flat = _draw_block(a, res, j, block, response, density, bands, W, rug)
        if flat:
            _mark_dropped(a)
        else:
            drawn.append(a)
            a.axhline(base, color="0.6", linewidth=0.8, zorder=0)
            if response:
                from matplotlib.ticker import FuncFormatter

                a.set_yscale("log")
                fmt = FuncFormatter(lambda v, _: f"{v:.3g}")
                a.yaxis.set_major_formatter(fmt)
                a.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
            a.set_ylabel(f"{fam.ratio_label} vs average row" if response
                         else f"effect ({fam.effect_label})")  # fmt: skip
    if sharey and drawn:
        lims = np.array([a.get_ylim() for a in drawn])
        for a in drawn:
            a.set_ylim(lims[:, 0].min(), lims[:, 1].max())
    if response:
        for a in drawn:
            _ratio_ticks(a)
    kinds = {what for what, _, _ in items}
    if not response and "linear" in kinds and kinds - {"linear"}:
        # the two kinds have different zeros: say so on the figure itself
        fig.text(0.01, 0.005, "Effects: 0 = the average training row for binned and "
                 "categorical terms; linear terms are β·x, 0 at x = 0.", fontsize=7,
                 color="0.35", ha="left", va="bottom", gid="centring-note")  # fmt: skip
        fig.tight_layout(rect=(0, 0.03, 1, 1))
    else:
        fig.tight_layout()
    return fig


def _ratio_ticks(a: Any) -> None:
    """Plain, evenly spread ticks on a ratio (log) axis whose range is under 20-fold.

    Matplotlib's log locator puts a single labelled tick (``1``) on a narrow range such
    as 0.8-1.25; here five or so round values are labelled instead.
    """
    from matplotlib.ticker import FixedLocator, MaxNLocator

    lo, hi = a.get_ylim()
    if not (0 < lo < hi) or hi / lo >= 20:
        return
    ticks = MaxNLocator(nbins=5, steps=[1, 2, 2.5, 5, 10]).tick_values(lo, hi)
    ticks = ticks[(ticks >= lo) & (ticks <= hi) & (ticks > 0)]
    if ticks.size >= 2:
        a.yaxis.set_major_locator(FixedLocator(ticks))
        a.set_ylim(lo, hi)


def _draw_linear(
    a: Any, res: Any, q: int, name: str, response: bool, density: bool, sw: np.ndarray
) -> bool:
    """A linear term: β·x over the column's training range (exp(β(x − x̄)) on ratios)."""
    x = np.asarray(res.model.design.dense[:, q], dtype=np.float64)
    beta = float(res.dense_coef[q])
    a.set_title(_plain(name), fontsize=10)
    a.set_xlabel(f"{_plain(name)} (linear, β = {beta:.4g})")
    lo, hi = float(np.min(x)), float(np.max(x))
    binary = bool(np.all((x == 0) | (x == 1)))
    if binary:  # a 0/1 column: two levels, drawn as bars
        share = float(sw[x == 1].sum() / sw.sum()) if sw.sum() > 0 else np.nan
        a.set_xticks([0, 1], ["0", "1"])
        a.set_xlim(-0.6, 1.6)
        if beta == 0.0:
            return True
        vals = np.array([0.0, beta])
        if response:
            vals = np.exp(beta * (np.array([0.0, 1.0]) - np.average(x, weights=sw)))
        bottom = 1.0 if response else 0.0
        a.bar([0, 1], vals - bottom, bottom=bottom, color="C0", alpha=0.8, width=0.6)
        if density:
            for p_, c in ((0, 1 - share), (1, share)):
                a.annotate(f"{c:.0%}", (p_, bottom), ha="center", va="bottom", fontsize=7,
                           color="0.3")  # fmt: skip
        return False
    if hi > lo:
        a.set_xlim(lo, hi)
    if density and hi > lo:
        twin = a.twinx()
        twin.hist(x, bins=20, weights=sw, color="0.3", alpha=0.15)
        _label_density(twin)
    if beta == 0.0:
        return True
    grid = np.linspace(lo, hi, 50)
    f = beta * grid
    if response:
        f = np.exp(beta * (grid - np.average(x, weights=sw)))
    a.plot(grid, f, color="C0", linewidth=2)
    return False


def _draw_block(
    a: Any,
    res: Any,
    j: int,
    block: Any,
    response: bool,
    density: bool,
    bands: Any,
    W: float,
    rug: Any = None,
) -> bool:
    """A code block: a step function (binned) or bars (categorical)."""
    m = res.model
    s, e = int(m.block_ptr[j]), int(m.block_ptr[j + 1])
    theta = np.asarray(res.coef[s:e], dtype=np.float64)
    wcounts = np.asarray(m.bin_counts[s:e], dtype=np.float64)
    counts = wcounts / W
    shape = getattr(block, "monotone", None)  # None on models pickled before it existed
    a.set_title(_plain(block.column) + (f" ({shape})" if shape else ""), fontsize=10)
    a.set_xlabel(_plain(block.term))
    # the term table's verdict (one definition of a kept cut: ``_statistics``)
    flat = not res._block_selected(j)
    lo = hi = None
    if bands is not None:
        lo, hi = _band(bands, block, e - s)
    # the average training row's effect of this term: Σ w θ / Σ w
    center = float(wcounts @ theta / wcounts.sum()) if wcounts.sum() > 0 else 0.0

    def tr(v):
        return np.exp(v - center) if response else v

    if block.penalized and getattr(block, "by", None) is not None:
        # bin(x):C(g): one step curve per level of g over the same intervals (with a main
        # bin(x), the reference level's rows share one level: a dashed line)
        x = _finite_edges(block, m, j)
        a.set_xlim(x[0], x[-1])
        if flat:
            return True
        for i, (first, size, level) in enumerate(block.chains()):
            if size == 1 and block.by_main:
                a.axhline(tr(theta[first]), color=f"C{i}", linestyle="--", linewidth=1.2,
                          label=f"{_plain(level)} (reference)")  # fmt: skip
                continue
            a.stairs(tr(theta[first : first + size]), x, baseline=None, color=f"C{i}",
                     linewidth=2, label=_plain(level))  # fmt: skip
        a.legend(title=_plain(block.by), fontsize=7, title_fontsize=7)
        return False
    if block.penalized and block.edges is not None:
        chain = block.chain_length
        x = _finite_edges(block, m, j)
        a.set_xlim(x[0], x[-1])
        if density:
            twin = a.twinx()
            widths = np.diff(x)
            dens = np.divide(counts[:chain], widths, out=np.zeros(chain), where=widths > 0)
            twin.stairs(dens, x, fill=True, alpha=0.15, color="0.3")
            twin.set_ylim(0, dens.max() * 4 if dens.max() > 0 else 1)
            _label_density(twin)
        if rug is not None:
            _draw_rug(a, rug, block)
        if flat:
            return True
        a.stairs(tr(theta[:chain]), x, baseline=None, color="C0", linewidth=2)
        if lo is not None:
            blo, bhi = _clip_band(a, theta[:chain], lo[:chain], hi[:chain], x, tr)
            a.stairs(tr(bhi), x, baseline=tr(blo), fill=True, alpha=0.25, color="C0")
        for k in np.flatnonzero(res.jumps[s : s + chain]):
            a.axvline(x[k], color="C3", linewidth=0.8, linestyle=":")
        if block.has_missing_level:
            err = None
            if lo is not None:
                err = (tr(lo[chain]), tr(hi[chain]))
            rows = int(np.count_nonzero(np.asarray(m.design.codes[j]) == chain))
            weight = float(wcounts[chain]) if getattr(m, "weighted", False) else None
            _draw_missing(a, tr(theta[chain]), 1.0 if response else 0.0, rows, weight, err)
        return False
    labels = block.level_labels()
    pos = np.arange(len(labels))
    a.set_xticks(pos, [_plain(lb) for lb in labels], rotation=45 if len(labels) > 4 else 0,
                 fontsize=8)  # fmt: skip
    if flat:
        return True
    vals = tr(theta)
    err = None
    if lo is not None:
        err = np.vstack([vals - tr(lo), tr(hi) - vals]).clip(min=0)
    bottom = 1.0 if response else 0.0
    a.bar(pos, vals - bottom, bottom=bottom, color="C0", alpha=0.8, yerr=err,
          capsize=3 if err is not None else 0)  # fmt: skip
    if density:
        for p_, c in zip(pos, counts, strict=True):
            a.annotate(f"{c:.0%}", (p_, bottom), ha="center", va="bottom", fontsize=7, color="0.3")
    return False


def _label_density(twin: Any) -> None:
    """The shaded share of rows: no ticks (its scale is arbitrary), but a label."""
    twin.set_yticks([])
    twin.set_ylabel("share of rows (shaded)", fontsize=7, color="0.45")


#: A band is drawn at most this many effect spans beyond the steps (then clipped).
BAND_CLIP_SPANS = 1.5


def _clip_band(
    a: Any, theta: np.ndarray, lo: np.ndarray, hi: np.ndarray, x: np.ndarray, tr: Any
) -> tuple[np.ndarray, np.ndarray]:
    """Clip a step band to the steps' range widened by ``BAND_CLIP_SPANS`` spans.

    A bin with few rows can have a band many times wider than the whole shape (a relaxed
    band of 1e±6 on the ratio scale); drawn as it is, it sets the axis and flattens the
    steps. The clipped bins are marked by triangles at the clip line (gid
    ``"clipped-band"``) and a note in the corner.
    """
    typical = np.nanmedian(hi - lo) if np.isfinite(hi - lo).any() else 0.0
    span = max(float(np.ptp(theta)), float(typical) if np.isfinite(typical) else 0.0, 1e-12)
    floor = float(theta.min()) - BAND_CLIP_SPANS * span
    ceil = float(theta.max()) + BAND_CLIP_SPANS * span
    low_cut, high_cut = ~(lo >= floor), ~(hi <= ceil)  # NaN/inf counted as cut
    if not (low_cut.any() or high_cut.any()):
        return lo, hi
    mids = (x[:-1] + x[1:]) / 2
    for cut, level, marker in ((high_cut, ceil, "^"), (low_cut, floor, "v")):
        if cut.any():
            a.plot(mids[cut], np.full(int(cut.sum()), tr(level)), linestyle="none",
                   marker=marker, color="C0", markersize=5, gid="clipped-band")  # fmt: skip
    a.text(0.99, 0.99, "band clipped at ▲/▼", transform=a.transAxes, ha="right", va="top",
           fontsize=7, color="0.35")  # fmt: skip
    return np.clip(np.nan_to_num(lo, nan=floor), floor, ceil), np.clip(
        np.nan_to_num(hi, nan=ceil), floor, ceil
    )


def _draw_missing(
    a: Any, value: float, bottom: float, rows: int, weight: float | None, err: Any
) -> Any:
    """The missing level of a binned term: one bar in a narrow panel right of the steps.

    The panel shares the y axis of the steps (and so their scale and limits); the bar
    rises from the baseline (0, or 1 on the ratio scale) to the level's effect and is
    labelled with its row count (and weight, for a weighted fit).
    """
    ins = a.inset_axes([1.06, 0.0, 0.14, 1.0], sharey=a)
    ins.set_gid("missing-level")
    yerr = None
    if err is not None:
        yerr = np.array([[max(value - err[0], 0.0)], [max(err[1] - value, 0.0)]])
    ins.bar([0.0], [value - bottom], bottom=bottom, width=0.6, color="C1", alpha=0.8,
            yerr=yerr, capsize=3 if yerr is not None else 0)  # fmt: skip
    ins.axhline(bottom, color="0.6", linewidth=0.8, zorder=0)
    ins.set_xlim(-0.6, 0.6)
    label = f"missing\nn={rows}" if weight is None else f"missing\nn={rows}\nw={weight:.3g}"
    ins.set_xticks([0.0], [label], fontsize=7)
    ins.tick_params(axis="y", labelleft=False, left=False)
    return ins


def _draw_rug(a: Any, rug: Any, block: Any) -> Any:
    """Cut-point frequencies of one binned term as a rug of ticks at the bottom."""
    rows = rug[rug["term"] == block.term]
    n_edges = len(block.edges)
    if len(rows) != n_edges:
        raise ValueError(
            f"rug has {len(rows)} rows for term {block.term!r}; expected {n_edges} (one per "
            "edge, as BootstrapResults.cut_frequencies() gives)."
        )
    freq = rows["frequency"].to_numpy(float)
    cuts = rows["cut"].to_numpy(float)
    keep = freq > 0
    lines = a.vlines(cuts[keep], 0.0, 0.15 * freq[keep], transform=a.get_xaxis_transform(),
                     color="C3", linewidth=2, alpha=0.8,
                     label="cut frequency (bootstrap; full height 15% = 1)")  # fmt: skip
    lines.set_gid("cut-frequency-rug")
    a.legend(handles=[lines], fontsize=6, loc="upper left", frameon=False)
    return lines


def _band(bands: Any, block: Any, n_levels: int) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper band of one block's levels, from a ``shape_bands`` frame."""
    rows = bands[bands["term"] == block.term]
    if len(rows) != n_levels:
        raise ValueError(
            f"bands has {len(rows)} rows for term {block.term!r}; expected {n_levels}."
        )
    return rows["lower"].to_numpy(float), rows["upper"].to_numpy(float)


def _finite_edges(block: Any, model: Any, j: int) -> np.ndarray:
    """Cut points closed by the training range of the feature (for drawing)."""
    edges = np.asarray(block.edges, dtype=np.float64)
    lo, hi = _data_range(block, model, j)
    if edges.size:
        span = edges[-1] - edges[0] if edges.size > 1 else max(abs(edges[0]), 1.0)
        lo = min(lo, edges[0] - 0.05 * span) if np.isfinite(lo) else edges[0] - 0.05 * span
        hi = max(hi, edges[-1] + 0.05 * span) if np.isfinite(hi) else edges[-1] + 0.05 * span
        if lo >= edges[0]:
            lo = edges[0] - 0.05 * max(span, 1e-12)
        if hi <= edges[-1]:
            hi = edges[-1] + 0.05 * max(span, 1e-12)
    else:
        if not (np.isfinite(lo) and np.isfinite(hi)) or hi <= lo:
            lo, hi = (lo - 0.5, lo + 0.5) if np.isfinite(lo) else (0.0, 1.0)
    return np.concatenate([[lo], edges, [hi]])


def _data_range(block: Any, model: Any, j: int) -> tuple[float, float]:
    if block.data_min is not None and block.data_max is not None:
        return float(block.data_min), float(block.data_max)
    return -np.inf, np.inf


def _dense_ranges(model: Any) -> np.ndarray:
    """Training range (max − min) of every dense column (its effect range per unit β)."""
    dense = getattr(model.design, "dense", None)
    if dense is None or dense.size == 0:
        return np.zeros(0)
    return np.ptp(np.asarray(dense, dtype=np.float64), axis=0)


def term_ranges(path: Any) -> tuple[list[str], np.ndarray]:
    """Effect range of every term along a path (what ``plot_path(kind="range")`` draws).

    Parameters
    ----------
    path : PathResults
        A path.

    Returns
    -------
    names : list of str
        The terms: every code block, then every dense column.
    ranges : ndarray of shape (n_lambdas, n_terms)
        max θ − min θ over a block's levels; |β|·(max x − min x) for a dense column.
    """
    m = path.model
    blocks = m.spec.blocks
    ptr = np.asarray(m.block_ptr)
    spans = _dense_ranges(m)
    names = [b.term for b in blocks] + list(m.spec.dense_columns)
    rows = []
    for sol in path._solutions:
        theta = m.report_coef(sol)[0]
        r = [float(np.ptp(theta[ptr[j] : ptr[j + 1]])) if ptr[j + 1] > ptr[j] else 0.0
             for j in range(len(blocks))]  # fmt: skip
        beta = np.asarray(sol.dense_coef, dtype=np.float64)
        r += list(np.abs(beta) * spans) if beta.size == spans.size else [np.nan] * spans.size
        rows.append(r)
    return names, np.asarray(rows, dtype=np.float64).reshape(len(rows), len(names))


_PATH_KINDS = ("range", "levels", "coef", "df", "deviance")


def _df_axis(a: Any, lams: np.ndarray, df: Any, max_ticks: int = 8) -> Any:
    """df on a top axis: a tick where df changes, thinned so labels never overlap.

    The λ axis is logarithmic; the top axis gets no minor ticks or labels of its own
    (matplotlib labels log minor ticks on a range under a decade, which overlapped the
    df labels).
    """
    from matplotlib.ticker import NullFormatter, NullLocator

    df = np.asarray(df)
    ok = np.flatnonzero(np.isfinite(lams) & (lams > 0))
    top = a.secondary_xaxis("top")
    top.xaxis.set_minor_locator(NullLocator())
    top.xaxis.set_minor_formatter(NullFormatter())
    top.set_xlabel("df", fontsize=8)
    if ok.size == 0:
        top.set_xticks([])
        return top
    changes = [i for k, i in enumerate(ok) if k == 0 or df[i] != df[ok[k - 1]]]
    logs = np.log10(lams[changes])
    gap = (logs.max() - logs.min()) / max_ticks if logs.size > 1 else 0.0
    keep: list[int] = []
    for i, lg in zip(changes, logs, strict=True):
        if not keep or abs(lg - np.log10(lams[keep[-1]])) >= gap:
            keep.append(i)
    top.set_xticks(lams[keep], [str(int(df[i])) for i in keep], fontsize=8)
    return top


def plot_path(path: Any, kind: str = "range", ax: Any = None, marks: Any = None) -> Figure:
    """Regularisation path against λ (log scale), df on the top axis.

    Parameters
    ----------
    path : PathResults
        A path.
    kind : {"range", "levels", "df", "deviance"}, default="range"
        ``"range"``: one labelled line per term, its effect range (max θ − min θ over
        its levels; |β|·range of the column for a linear term); ``"levels"`` (alias
        ``"coef"``): every level θ of every binned term; the degrees of freedom; or the
        training deviance.
    ax : Axes, optional
        Where to draw.
    marks : dict or float, optional
        λ values marked by vertical lines, ``{label: λ}`` (a bare float is labelled
        "fitted λ"); ``CVResults.plot_path`` passes λ_min and λ_1se.

    Returns
    -------
    matplotlib.figure.Figure
        The figure drawn on.
    """
    if kind not in _PATH_KINDS:
        raise ValueError(f"kind must be 'range', 'levels', 'df' or 'deviance'; got {kind!r}.")
    plt = _pyplot()
    fig, a = plt.subplots(figsize=(7.2, 4.6)) if ax is None else (ax.figure, ax)
    lams = np.where(path.lams > 0, path.lams, np.nan)
    m = path.model
    if kind == "range":
        names, ranges = term_ranges(path)
        for t, name in enumerate(names):
            a.plot(lams, ranges[:, t], color=f"C{t % 10}", linewidth=1.5, label=_plain(name))
        a.set_ylabel(f"effect range ({m.family.effect_label})")
    elif kind in ("levels", "coef"):
        coefs = np.array([m.report_coef(s)[0] for s in path._solutions])
        if coefs.size:
            a.plot(lams, coefs, linewidth=0.8)
        a.set_ylabel(f"level θ ({m.family.effect_label})")
    elif kind == "df":
        a.step(lams, path.df, where="mid")
        const = "intercept + " if (m.fit_intercept or m.intercept_absorbed) else ""
        a.set_ylabel(f"df (jumps + {const}unpenalized)")
    else:
        a.plot(lams, path.deviance, marker=".")
        a.set_ylabel("training deviance")
    if marks is not None:
        if not isinstance(marks, dict):
            marks = {"fitted λ": float(marks)}
        styles = ["--", ":", "-."]
        for i, (label, lam) in enumerate(marks.items()):
            a.axvline(float(lam), color="0.25", linestyle=styles[i % 3], linewidth=1,
                      label=f"{label} = {float(lam):.3g}")  # fmt: skip
    a.set_xscale("log")
    a.set_xlabel("λ")
    _df_axis(a, lams, path.df)
    if kind == "range" or marks is not None:
        a.legend(fontsize=7, loc="best", ncol=1 + (len(a.get_legend_handles_labels()[0]) > 8))
    if ax is None:
        fig.tight_layout()
    return fig


def plot_cv(cv: Any, ax: Any = None) -> Figure:
    """Cross-validation curve with ±1 standard error, ``lam_min`` and ``lam_1se``.

    Parameters
    ----------
    cv : CVResults
        Cross-validation results.
    ax : Axes, optional
        Where to draw.

    Returns
    -------
    matplotlib.figure.Figure
        The figure drawn on.
    """
    plt = _pyplot()
    fig, a = plt.subplots(figsize=(6.4, 4.2)) if ax is None else (ax.figure, ax)
    lams = np.where(cv.lams > 0, cv.lams, np.nan)
    a.errorbar(
        lams, cv.mean, yerr=cv.se, fmt="o", color="C3", ecolor="0.6", markersize=3, capsize=2
    )
    a.axvline(cv.lam_min, color="C0", linestyle="--", linewidth=1, label="lam_min")
    a.axvline(cv.lam_1se, color="C2", linestyle=":", linewidth=1, label="lam_1se")
    a.set_xscale("log")
    a.set_xlabel("λ")
    a.set_ylabel(f"CV {cv.scoring} ({cv.folds} folds)")
    _df_axis(a, lams, cv.path.df)
    a.legend(fontsize=8)
    if ax is None:
        fig.tight_layout()
    return fig


def calibration_table(
    res: Any, new: Any = None, y: Any = None, bins: int = 10, offset: Any = None
) -> Any:
    """Binned observed vs predicted mean (what :func:`plot_calibration` draws).

    Rows are sorted by their predicted mean and split into ``bins`` groups of equal row
    counts, except that rows with the same prediction always share a group (that of the
    middle of their run; a group emptied by a large tie is left out), so that the rows'
    order never enters a group. Each group's predicted and observed means are weighted
    by the training weights (unit weights on new rows).

    Parameters
    ----------
    res : BinarsityResults
        A fit.
    new : DataFrame, optional
        New rows; the training rows when omitted.
    y : array-like or str, optional
        The observed response of ``new`` (or the name of its column); required with
        ``new``, not allowed without it.
    bins : int, default=10
        Number of groups (at most the number of rows).
    offset : array-like, optional
        Offset of ``new`` (as in ``res.predict``); only with ``new``.

    Returns
    -------
    DataFrame
        One row per group: ``predicted``, ``observed``, ``count`` (rows) and ``weight``.
    """
    import pandas as pd

    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 1:
        raise ValueError(f"bins must be a positive integer; got {bins!r}.")
    m = res.model
    if m.family.survival:
        raise ValueError(
            "calibration (observed against predicted mean) does not apply to family='cox': "
            "its prediction is a relative risk; see res.concordance (Harrell's C)."
        )
    if new is None:
        if y is not None:
            raise ValueError("y is only used together with new (the training y is known).")
        if offset is not None:
            raise ValueError("offset is only used together with new.")
        pred = np.asarray(res.fittedvalues, dtype=np.float64)
        obs = np.asarray(m.y, dtype=np.float64)
        w = np.asarray(m.sample_weight, dtype=np.float64)
    else:
        if y is None:
            raise ValueError("plot_calibration(new) needs y, the observed response of new.")
        if isinstance(y, str):
            if y not in new.columns:
                raise ValueError(f"y: column '{y}' is not in new.")
            y = new[y]
        y = np.asarray(y).ravel()
        event = getattr(m.response, "event", None)
        if event is not None and y.dtype.kind not in "biuf":  # labels: the event is 1
            obs = (y == event).astype(np.float64)
        else:
            obs = np.asarray(y, dtype=np.float64)
        pred = np.asarray(res.predict(new, offset=offset), dtype=np.float64)
        if obs.shape != pred.shape:
            raise ValueError(f"y has {obs.size} values for {pred.size} rows of new.")
        # rows predicted NaN (a missing value the model drops, missing="drop") are left out
        known = ~np.isnan(pred)
        if not known.any():
            raise ValueError("every row of new has a missing value the model drops.")
        pred, obs = pred[known], obs[known]
        if not np.all(np.isfinite(obs)):
            raise ValueError("y holds NaN or infinite values.")
        w = np.ones_like(pred)
    n = pred.size
    bins = min(int(bins), n)
    order = np.argsort(pred, kind="stable")
    # Rows of equal prediction stay in one group (the group of the middle of their run):
    # splitting a tie by row order would put the data's order into the groups (rows
    # sorted by y give a group of all zeros next to one of all ones at the same p̂).
    ps = pred[order]
    starts = np.flatnonzero(np.r_[True, ps[1:] != ps[:-1]])
    ends = np.r_[starts[1:], n]
    mid = (starts + ends - 1) // 2
    group = np.empty(n, dtype=np.intp)
    group[order] = np.repeat(mid * bins // n, ends - starts)
    rows = []
    for g in range(bins):
        sel = group == g
        if not sel.any():
            continue  # a tie larger than a group took its rows
        wg = w[sel]
        sw = wg.sum()
        rows.append(
            {"predicted": float(wg @ pred[sel] / sw) if sw > 0 else np.nan,
             "observed": float(wg @ obs[sel] / sw) if sw > 0 else np.nan,
             "count": int(sel.sum()), "weight": float(sw)}
        )  # fmt: skip
    return pd.DataFrame(rows)


def plot_calibration(
    res: Any, new: Any = None, y: Any = None, bins: int = 10, ax: Any = None, offset: Any = None,
    scale: str = "auto",
) -> Figure:
    """Calibration plot: binned observed against predicted mean, with the counts.

    Parameters
    ----------
    res : BinarsityResults
        A fit (binomial, poisson, or any family: the means are compared).
    new : DataFrame, optional
        New rows; the training rows when omitted.
    y : array-like or str, optional
        The observed response of ``new`` (or the name of its column).
    bins : int, default=10
        Number of groups of equal row counts, by predicted mean.
    ax : Axes, optional
        Where to draw.
    offset : array-like, optional
        Offset of ``new`` (as in ``res.predict``); only with ``new``.
    scale : {"auto", "linear", "logit"}, default="auto"
        Axes of the means. ``"logit"`` spreads rare (or near-certain) events, which a
        linear axis crowds at 0 (or 1): ``"auto"`` takes it for a binomial fit whose
        groups' predicted means all lie below 0.1 or above 0.9, else ``"linear"``.
        Groups observed at exactly 0 or 1 sit on the axis edge on the logit scale.

    Returns
    -------
    matplotlib.figure.Figure
        The figure drawn on; the points are :func:`calibration_table`'s
        ``predicted`` (x) and ``observed`` (y), each annotated with its row count.
    """
    if scale not in ("auto", "linear", "logit"):
        raise ValueError(f"scale must be 'auto', 'linear' or 'logit'; got {scale!r}.")
    binomial = res.model.family.name == "binomial"
    if scale == "logit" and not binomial:
        raise ValueError("scale='logit' is for binomial fits (means in (0, 1)).")
    table = calibration_table(res, new, y, bins, offset=offset)
    plt = _pyplot()
    fig, a = plt.subplots(figsize=(5.2, 5.0)) if ax is None else (ax.figure, ax)
    p, o = table["predicted"].to_numpy(), table["observed"].to_numpy()
    if scale == "auto":
        rare = np.isfinite(p).any() and (np.nanmax(p) < 0.1 or np.nanmin(p) > 0.9)
        scale = "logit" if binomial and rare else "linear"
    ok = np.isfinite(p) & np.isfinite(o)
    if scale == "logit":
        ok &= (p > 0) & (p < 1) & (o > 0) & (o < 1)
    lo = float(min(p[ok].min(), o[ok].min())) if ok.any() else 0.0
    hi = float(max(p[ok].max(), o[ok].max())) if ok.any() else 1.0
    a.plot([lo, hi], [lo, hi], color="0.6", linestyle="--", linewidth=1, label="perfect")
    a.plot(p, o, marker="o", color="C0", linewidth=1, label="observed")
    for pi, oi, c in zip(p, o, table["count"], strict=True):
        a.annotate(f"n={c}", (pi, oi), textcoords="offset points", xytext=(4, -10), fontsize=7,
                   color="0.3")  # fmt: skip
    if scale == "logit":
        a.set_xscale("logit", nonpositive="clip")
        a.set_yscale("logit", nonpositive="clip")
    a.set_xlabel("predicted mean" + (" (logit scale)" if scale == "logit" else ""))
    a.set_ylabel("observed mean" + (" (logit scale)" if scale == "logit" else ""))
    a.set_title(f"Calibration ({'training data' if new is None else 'new data'}, "
                f"{len(table)} bins)", fontsize=10)  # fmt: skip
    a.legend(fontsize=8)
    if ax is None:
        fig.tight_layout()
    return fig


def save_figure(fig: Any, path: Any) -> Any:
    """Save a figure as PNG and close it.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure.
    path : str or Path
        Destination (its suffix picks the format; PNG without one), written whole or
        not at all: a temporary file in its folder, renamed over it when complete.

    Returns
    -------
    path
        The destination, as given.
    """
    from pathlib import Path

    from ..core._atomic import write_atomic

    plt = _pyplot()
    fmt = Path(path).suffix[1:].lower() or "png"
    try:  # the file is written whole or not at all (a temporary file, then a rename)
        write_atomic(path, lambda fh: fig.savefig(fh, dpi=110, format=fmt), binary=True)
    finally:
        plt.close(fig)
    return path
