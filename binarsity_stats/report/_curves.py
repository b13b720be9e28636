"""Plots of a path, a cross-validation and a calibration (matplotlib, imported lazily).

Every function returns the matplotlib ``Figure`` it drew on and accepts ``ax``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ._plotting import _pyplot, _plain, _dense_ranges

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

__all__ = [
    "plot_path",
    "plot_cv",
    "term_ranges",
    "plot_calibration",
    "calibration_table",
]


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
    binomial = res.model.family.binary
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
