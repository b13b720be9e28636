"""Effect plots: the predicted probability or mean against each feature, for one row.

What a team asks of a model is "what does the probability do as age grows, for a
typical client?". :func:`plot_effects` answers on the response scale: every other feature
held at a reference row (by default the training median of numeric columns and the most
frequent level of the others), the feature swept over its training range, the predicted
mean drawn with an interval — the refit's (conditional on the selected cut-points) or a
bootstrap's, each named in the legend.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd

from ._plotting import _axes_list, _plain

__all__ = ["plot_effects", "reference_row"]

#: Points of the sweep over a numeric feature's training range.
GRID_POINTS = 241


def _features(m: Any) -> list[str]:
    """The columns the terms read, in formula order (offset-only columns left out)."""
    used: list[str] = []
    for block in m.spec.blocks:
        for col in (block.column, getattr(block, "by", None)):
            if col is not None and col not in used:
                used.append(col)
    for name in m.spec.dense_columns:
        for col in m.spec.required:
            if col not in used and (name == col or re.search(
                    rf"(?<![\w.]){re.escape(col)}(?![\w.])", name)):  # fmt: skip
                used.append(col)
    return [c for c in used if c in m.spec.required]


def _categorical(m: Any, column: str, values: pd.Series) -> bool:
    for block in m.spec.blocks:
        if (block.column == column and block.edges is None) or getattr(block, "by", None) == column:
            return True
    return not pd.api.types.is_numeric_dtype(values.dtype) or pd.api.types.is_bool_dtype(
        values.dtype
    )


def reference_row(res: Any, reference: dict | None = None) -> pd.DataFrame:
    """The row other features are held at: training medians and most frequent levels.

    Parameters
    ----------
    res : BinarsityResults
        A fit whose model still holds its training rows (not a pickled one), unless
        ``reference`` gives every column the model reads.
    reference : dict, optional
        Values that replace the defaults, by column.

    Returns
    -------
    DataFrame
        One row, the columns the model reads.

    Raises
    ------
    ValueError
        A column without a value (a model loaded from a pickle keeps no training rows),
        or a ``reference`` key the model does not read.
    """
    m = res.model
    reference = dict(reference or {})
    unknown = [k for k in reference if k not in m.spec.required]
    if unknown:
        raise ValueError(
            f"reference names column(s) {unknown} the model does not read; it reads "
            f"{list(m.spec.required)}."
        )
    data = m.__dict__.get("_data")
    row: dict[str, Any] = {}
    for col in m.spec.required:
        if col in reference:
            row[col] = reference[col]
            continue
        if not isinstance(data, pd.DataFrame) or col not in data.columns:
            raise ValueError(
                f"no reference value for column {col!r}: the model keeps no training rows "
                "(it was loaded from a file); pass reference={...} with every column."
            )
        values = data[col].dropna()
        if _categorical(m, col, values):
            row[col] = values.mode().iloc[0]
        else:
            row[col] = float(np.median(values.to_numpy(dtype=np.float64)))
    return pd.DataFrame([row])


def _interval_frame(res: Any, rows: pd.DataFrame, interval: Any, level: float):
    """Lower and upper bounds of the mean at ``rows`` and the band's legend label."""
    if interval is None:
        return None, None, None
    if interval == "refit":
        pred = res.refit().get_prediction(rows).summary_frame(alpha=1 - level)
        label = f"{level:.0%} CI, refit (given the selected cut-points)"
    elif type(interval).__name__ == "BootstrapResults":
        pred = interval.predict(rows, interval=level)
        label = f"{level:.0%} bootstrap interval ({len(interval.coef)} resamples)"
    else:
        raise ValueError(
            f"interval must be 'refit', a BootstrapResults (res.bootstrap()) or None; got "
            f"{interval!r}."
        )
    return (pred["mean_ci_lower"].to_numpy(float), pred["mean_ci_upper"].to_numpy(float),
            label)  # fmt: skip


def plot_effects(
    res: Any,
    features: Any = None,
    reference: dict | None = None,
    interval: Any = "refit",
    level: float = 0.95,
    ax: Any = None,
) -> Any:
    """Predicted probability (or mean) against each feature, the others at a reference row.

    Parameters
    ----------
    res : BinarsityResults
        A fit of a GLM family (Cox fits: use ``plot_shapes(scale="response")``).
    features : str or list of str, optional
        Columns to sweep (default: every column a term reads, in formula order).
    reference : dict, optional
        Values of the reference row by column; the others are the training median
        (numeric) or the most frequent level (categorical). The row is printed under
        the figure.
    interval : "refit", BootstrapResults or None, default="refit"
        The band: the unpenalised refit's delta-method interval of the mean, which is
        valid given the selected cut-points (not for the selection itself), or the
        percentile intervals of ``res.bootstrap()``, or none.
    level : float, default=0.95
        Coverage of the band.
    ax : Axes or array of Axes, optional
        One Axes per feature.

    Returns
    -------
    matplotlib.figure.Figure
        One panel per feature: a line over a numeric feature's training range (the
        steps of a binned term show as steps), points with error bars for the levels
        of a categorical one; the reference value is a dotted vertical line.

    Raises
    ------
    ValueError
        A Cox fit, an unknown feature, a reference column the model does not read, or
        a model without training rows and no full ``reference``.
    """
    m = res.model
    if m.family.survival:
        raise ValueError(
            "plot_effects draws predicted means of a GLM; for a Cox fit use "
            "plot_shapes(scale='response') (hazard ratios)."
        )
    if isinstance(level, bool) or not isinstance(level, int | float) or not 0 < level < 1:
        raise ValueError(f"level must be a number in (0, 1), e.g. 0.95; got {level!r}.")
    level = float(level)
    allowed = _features(m)
    if features is None:
        features = allowed
    features = [features] if isinstance(features, str) else list(features)
    unknown = [f for f in features if f not in allowed]
    if unknown or not features:
        raise ValueError(f"unknown feature(s) {unknown}; the features are {allowed}.")
    ref = reference_row(res, reference)
    data = m.__dict__.get("_data")
    fig, axes = _axes_list(ax, len(features))
    ylabel = "predicted probability" if m.family.binary else "predicted mean"
    for a, col in zip(axes, features, strict=True):
        train = data[col].dropna() if isinstance(data, pd.DataFrame) else None
        categorical = _categorical(m, col, train if train is not None else ref[col])
        if categorical:
            levels = (list(pd.unique(train)) if train is not None else [ref[col].iloc[0]])
            try:
                levels = sorted(levels)
            except TypeError:  # mixed level types: first-seen order
                pass
            grid = pd.Series(levels, dtype=train.dtype if train is not None else None)
        else:
            lo, hi = (float(train.min()), float(train.max())) if train is not None else (
                float(ref[col].iloc[0]), float(ref[col].iloc[0]))  # fmt: skip
            grid = pd.Series(np.linspace(lo, hi, GRID_POINTS))
        rows = pd.concat([ref] * len(grid), ignore_index=True)
        rows[col] = grid.to_numpy()
        mean = np.asarray(res.predict(rows, type="response"), dtype=np.float64)
        lower, upper, label = _interval_frame(res, rows, interval, level)
        if categorical:
            pos = np.arange(len(grid))
            err = None if lower is None else np.vstack([mean - lower, upper - mean]).clip(min=0)
            a.errorbar(pos, mean, yerr=err, fmt="o", color="C0", capsize=3, label=label)
            a.set_xticks(pos, [_plain(v) for v in grid], rotation=45 if len(grid) > 4 else 0,
                         fontsize=8)  # fmt: skip
            refpos = [i for i, v in enumerate(grid) if v == ref[col].iloc[0]]
            if refpos:
                a.axvline(refpos[0], color="0.5", linestyle=":", linewidth=1)
        else:
            x = grid.to_numpy(float)
            a.plot(x, mean, color="C0", linewidth=2)
            if lower is not None:
                a.fill_between(x, lower, upper, color="C0", alpha=0.2, linewidth=0, label=label)
            a.axvline(float(ref[col].iloc[0]), color="0.5", linestyle=":", linewidth=1)
        a.set_xlabel(_plain(col))
        a.set_ylabel(ylabel)
        a.set_title(_plain(col), fontsize=10)
        if label is not None:
            a.legend(fontsize=6, loc="best")
    shown = ", ".join(f"{_plain(c)} = {_short(ref[c].iloc[0])}" for c in ref.columns)
    fig.text(0.01, 0.005, f"Other features at the reference row: {shown}", fontsize=7,
             color="0.35", ha="left", va="bottom", gid="reference-row")  # fmt: skip
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    return fig


def _short(v: Any) -> str:
    return f"{v:.4g}" if isinstance(v, float | np.floating) else str(v)
