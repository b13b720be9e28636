"""Plots of fits: the shapes of the terms (matplotlib, imported lazily; paths, CV and
calibration in ``_curves``).

Every function returns the matplotlib ``Figure`` it drew on and accepts ``ax``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

__all__ = [
    "plot_shapes",
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
        if what == "block" and getattr(block, "is_pair", False):
            # a pair's surface: a heat map, its own colour scale (no y axis of effects)
            if _draw_pair(a, res, j, block, response, density):
                _mark_dropped(a)
            continue
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


#: A pair term's grid of at most this many cells has its cells' row counts written in them
PAIR_COUNTS_MAX_CELLS = 100


def _draw_pair(a: Any, res: Any, j: int, block: Any, response: bool, density: bool) -> bool:
    """A pair term ``bin(a):bin(b)``: a heat map of its surface on the bin grid.

    The cells (a's bins across, b's up; the end bins closed at the training range) take
    the fitted θ of the cell (``scale="response"``: exp(θ), the ratio to a cell of
    effect 0) on a diverging scale centred at no effect; a cell without training rows
    is left blank. The regions' boundaries — the sides between neighbouring cells whose
    values differ by more than the kept-cut tolerance (``_statistics``), which lie on
    the surface's cut lines (``cut_points``) — are black segments (a ``LineCollection``,
    gid ``"pair-regions"``); with ``density`` and a grid of at most
    ``PAIR_COUNTS_MAX_CELLS`` cells, each cell holds its training row count (texts of
    gid ``"pair-cell-count"``). Returns whether the surface is flat (dropped).
    """
    from matplotlib.collections import LineCollection
    from matplotlib.colors import LogNorm, Normalize

    from ..core._statistics import jump_tolerance

    m = res.model
    grid = m.binned.kinds[j].block
    s = int(m.block_ptr[j])
    cells = np.asarray(res.coef[s : s + grid.n_cells], dtype=np.float64)
    ka, kb = block.grid_shape
    ia, ib = grid.cell_rows()
    table = np.full((ka, kb), np.nan)
    table[ia, ib] = cells
    xa = _finite_edges(block, m, j)
    xb = _finite_edges(_PairAxis(block.pair_edges, _pair_range(m, j, block)), m, j)
    a.set_title(_plain(block.term), fontsize=10)
    a.set_xlabel(_plain(block.column))
    a.set_ylabel(_plain(block.pair_column))
    a.set_xlim(xa[0], xa[-1])
    a.set_ylim(xb[0], xb[-1])
    if not res._block_selected(j):
        return True
    values = np.exp(table) if response else table
    bound = float(np.nanmax(np.abs(table))) or 1.0
    norm = (LogNorm(np.exp(-bound), np.exp(bound)) if response
            else Normalize(-bound, bound))  # fmt: skip
    mesh = a.pcolormesh(xa, xb, np.ma.masked_invalid(values.T), cmap="RdBu_r", norm=norm)
    mesh.set_gid("pair-surface")
    bar = a.figure.colorbar(mesh, ax=a)
    fam = m.family
    bar.set_label(f"{fam.ratio_label}" if response else f"effect ({fam.effect_label})",
                  fontsize=8)  # fmt: skip
    # the regions' boundaries: cell sides across which the surface jumps
    kept = np.abs(grid.difference(cells)) > jump_tolerance(cells, res._eta_unit)
    segments = []
    for e in np.flatnonzero(kept):
        c0 = int(grid.edges[e, 0])
        if e < grid.n_b_edges:  # (k, l) | (k, l + 1): a side at b = edges_b[l]
            y = xb[ib[c0] + 1]
            segments.append([(xa[ia[c0]], y), (xa[ia[c0] + 1], y)])
        else:  # (k, l) | (k + 1, l): a side at a = edges_a[k]
            x = xa[ia[c0] + 1]
            segments.append([(x, xb[ib[c0]]), (x, xb[ib[c0] + 1])])
    a.add_collection(LineCollection(segments, colors="k", linewidths=1.5, gid="pair-regions"))
    if density and ka * kb <= PAIR_COUNTS_MAX_CELLS:
        rows = np.bincount(np.asarray(m.design.codes[j], dtype=np.intp), minlength=grid.n_cells + 1)
        for c in range(grid.n_cells):  # white on the dark cells
            ink = "w" if abs(cells[c]) > 0.6 * bound else "0.15"
            a.text((xa[ia[c]] + xa[ia[c] + 1]) / 2, (xb[ib[c]] + xb[ib[c] + 1]) / 2, f"{rows[c]}",
                   ha="center", va="center", fontsize=7, color=ink, gid="pair-cell-count")  # fmt: skip
    return False


class _PairAxis:
    """The second axis of a pair term as ``_finite_edges`` reads a block."""

    def __init__(self, edges: np.ndarray, span: tuple[float, float]) -> None:
        self.edges = edges
        self.data_min, self.data_max = span


def _pair_range(model: Any, j: int, block: Any) -> tuple[float, float]:
    """The training range of a pair term's second axis (from the formula's state)."""
    spec = getattr(model.spec, "model_spec", None)
    for state in ({} if spec is None else spec.transform_state).values():
        ps = state.get("pair") if isinstance(state, dict) else None
        if ps is not None and np.array_equal(ps["edges"], block.pair_edges) and tuple(
            ps["cells"]) == tuple(block.cells):  # fmt: skip
            return float(ps["data_min"]), float(ps["data_max"])
    return -np.inf, np.inf


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
