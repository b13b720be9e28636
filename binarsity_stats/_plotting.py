"""Plots of fits, paths and cross-validation (matplotlib, imported lazily, only here).

Every function returns the matplotlib ``Figure`` it drew on and accepts ``ax``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

__all__ = ["plot_shapes", "plot_path", "plot_cv", "term_ranges", "save_figure"]


def _pyplot():
    import matplotlib.pyplot as plt

    return plt


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


def plot_shapes(
    res: Any, terms: Any = None, ax: Any = None, density: bool = True, bands: Any = None
) -> Figure:
    """Step functions of the binned terms (bars for categoricals), with data density.

    Parameters
    ----------
    res : BinarsityResults
        A fit.
    terms : list of str, optional
        Terms to draw; default every ``bin()`` and ``C()`` term.
    ax : Axes or array of Axes, optional
        One Axes per term.
    density : bool, default=True
        Shade the weighted share of training rows per bin (right axis).
    bands : DataFrame, optional
        Pointwise bands, one row per level of every term in block order with columns
        ``term``, ``lower`` and ``upper`` (``BootstrapResults.shape_bands``): drawn as a
        shaded step band (bins) or error bars (categories).

    Returns
    -------
    matplotlib.figure.Figure
        The figure drawn on.
    """
    m = res.model
    blocks = list(enumerate(m.spec.blocks))
    if terms is not None:
        wanted = [terms] if isinstance(terms, str) else list(terms)
        known = {b.term for _, b in blocks}
        unknown = [t for t in wanted if t not in known]
        if unknown:
            raise ValueError(f"unknown term(s) {unknown}; terms are {sorted(known)}.")
        blocks = [(j, b) for j, b in blocks if b.term in wanted]
    if not blocks:
        raise ValueError("the model has no bin() or C() term to plot.")
    fig, axes = _axes_list(ax, len(blocks))
    W = float(m.sample_weight.sum())
    for a, (j, block) in zip(axes, blocks, strict=True):
        s, e = int(m.block_ptr[j]), int(m.block_ptr[j + 1])
        theta = res.coef[s:e]
        counts = m.bin_counts[s:e] / W
        if block.penalized:
            chain = block.chain_length
            x = _finite_edges(block, m, j)
            a.stairs(theta[:chain], x, baseline=None, color="C0", linewidth=2)
            if bands is not None:
                lo, hi = _band(bands, block, e - s)
                a.stairs(hi[:chain], x, baseline=lo[:chain], fill=True, alpha=0.25, color="C0")
            a.axhline(0.0, color="0.6", linewidth=0.8, zorder=0)
            for k in np.flatnonzero(res.jumps[s : s + chain]):
                a.axvline(x[k], color="C3", linewidth=0.8, linestyle=":")
            if density:
                twin = a.twinx()
                widths = np.diff(x)
                dens = np.divide(counts[:chain], widths, out=np.zeros(chain), where=widths > 0)
                twin.stairs(dens, x, fill=True, alpha=0.15, color="0.3")
                twin.set_yticks([])
                twin.set_ylim(0, dens.max() * 4 if dens.max() > 0 else 1)
            if block.has_missing_level:
                a.annotate(
                    f"missing: {theta[chain]:+.3g}", xy=(0.98, 0.04),
                    xycoords="axes fraction", ha="right", fontsize=8,
                )  # fmt: skip
            a.set_xlabel(block.column)
        else:
            labels = block.level_labels()
            pos = np.arange(len(labels))
            err = None
            if bands is not None:
                lo, hi = _band(bands, block, e - s)
                err = np.vstack([theta - lo, hi - theta]).clip(min=0)
            a.bar(pos, theta, color="C0", alpha=0.8, yerr=err, capsize=3 if err is not None else 0)
            a.axhline(0.0, color="0.6", linewidth=0.8)
            a.set_xticks(pos, labels, rotation=45 if len(labels) > 4 else 0, fontsize=8)
            if density:
                for p_, c in zip(pos, counts, strict=True):
                    a.annotate(
                        f"{c:.0%}", (p_, 0), ha="center", va="bottom", fontsize=7, color="0.3"
                    )
            a.set_xlabel(block.column)
        a.set_title(block.term, fontsize=10)
        a.set_ylabel("effect (link scale)")
    fig.tight_layout()
    return fig


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
            a.plot(lams, ranges[:, t], color=f"C{t % 10}", linewidth=1.5, label=name)
        a.set_ylabel(f"effect range ({m.family.effect_label})")
    elif kind in ("levels", "coef"):
        coefs = np.array([m.report_coef(s)[0] for s in path._solutions])
        if coefs.size:
            a.plot(lams, coefs, linewidth=0.8)
        a.set_ylabel(f"level θ ({m.family.effect_label})")
    elif kind == "df":
        a.step(lams, path.df, where="mid")
        a.set_ylabel("df (jumps + intercept + unpenalized)")
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
    finite = np.isfinite(lams)
    if finite.any():
        step = max(1, int(finite.sum()) // 8)
        where = np.flatnonzero(finite)[::step]
        top = a.secondary_xaxis("top")
        top.set_xticks(lams[where], [str(int(d)) for d in np.asarray(path.df)[where]])
        top.set_xlabel("df", fontsize=8)
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
    top = a.secondary_xaxis("top")
    top.set_xticks(
        lams[:: max(1, len(lams) // 8)], [str(d) for d in cv.path.df[:: max(1, len(lams) // 8)]]
    )
    top.set_xlabel("df", fontsize=8)
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
        Destination.

    Returns
    -------
    path
        The destination, as given.
    """
    plt = _pyplot()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
