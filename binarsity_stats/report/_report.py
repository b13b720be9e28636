"""The HTML report of a fit: one self-contained page (``res.report("model.html")``).

The page needs nothing but a browser to be read: the plots are PNG images embedded as
``data:`` URIs, the style sheet is inline, there is no script and no reference to any
other file or address. Every text that comes from the data or the model (column names,
formula, category labels) is HTML-escaped.

Sections, each a ``<section id=...>`` in this order (the optional ones only when they
apply): ``data`` (the data and the model: formula, family, rows, weights, offset, every
term's column), ``summary`` (``summary().as_html()``), ``shapes`` (``plot_shapes``, with
the bootstrap's bands and cut-frequency rug when bootstrapped), ``cut-points`` (the
cut-points kept, with their bootstrap frequencies), ``bootstrap`` (when bootstrapped),
``cv`` (the cross-validation curve and path, when λ was chosen by ``fit_cv``),
``calibration`` (observed against predicted mean, on the training rows or on ``new``)
and ``versions`` (the package and the libraries it ran with).
"""

from __future__ import annotations

import base64
import copy
import datetime
import html
import io
import platform
from importlib import metadata
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["build_report", "write_report", "SECTIONS"]

#: Section ids of the page, in order (``bootstrap`` and ``cv`` only when they apply).
SECTIONS = (
    "data", "summary", "shapes", "cut-points", "bootstrap", "cv", "calibration", "versions",
)  # fmt: skip

#: Distributions whose versions the page lists (read from the installed metadata; none
#: is imported for it).
_LIBRARIES = (
    "numpy", "scipy", "pandas", "formulaic", "statsmodels", "matplotlib", "tqdm",
    "scikit-learn",
)  # fmt: skip

#: A cut-point not kept by the fit is listed in the stability table from this share of
#: resamples on.
_UNSTABLE_SHOWN = 0.10

_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial,
       sans-serif; max-width: 1100px; margin: 1.5em auto; padding: 0 1em; color: #222;
       line-height: 1.4; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; }
h2 { font-size: 1.2em; border-bottom: 1px solid #ccc; padding-bottom: 0.2em;
     margin-top: 1.8em; }
.meta { color: #555; font-size: 0.9em; }
nav ol { columns: 2; font-size: 0.9em; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.85em; }
th, td { border: 1px solid #ddd; padding: 0.2em 0.5em; text-align: right;
         vertical-align: top; }
th { background: #f4f4f4; }
td.text, th.text { text-align: left; }
caption { text-align: left; font-weight: bold; padding: 0.3em 0; }
table.facts th { text-align: left; }
table.facts td { text-align: left; }
figure { margin: 0.8em 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: 0.85em; color: #444; }
code { background: #f4f4f4; padding: 0 0.2em; }
.note { font-size: 0.85em; color: #444; }
"""


def _esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _num(value: Any, digits: int = 4) -> str:
    """A number for a table cell: 4 significant digits, integers as integers."""
    if value is None:
        return ""
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    try:
        v = float(value)
    except (TypeError, ValueError):
        return str(value)
    if np.isnan(v):
        return ""
    if v == int(v) and abs(v) < 1e15:
        return f"{int(v):,}"
    return f"{v:.{digits}g}"


def _table(frame: pd.DataFrame, caption: str | None = None, index: bool = False,
           formats: dict | None = None, css: str = "") -> str:  # fmt: skip
    """An HTML table of a DataFrame, every cell escaped; numbers right-aligned."""
    formats = formats or {}
    out = [f'<table class="{css}">' if css else "<table>"]
    if caption:
        out.append(f"<caption>{_esc(caption)}</caption>")
    cols = list(frame.columns)
    head = ['<th class="text"></th>'] if index else []
    for c in cols:
        kind = "num" if pd.api.types.is_numeric_dtype(frame[c]) else "text"
        head.append(f'<th class="{kind}">{_esc(c)}</th>')
    out.append("<thead><tr>" + "".join(head) + "</tr></thead><tbody>")
    if not len(frame):
        out.append(f'<tr><td class="text" colspan="{len(cols) + int(index)}">(none)</td></tr>')
    for idx, row in zip(frame.index, frame.itertuples(index=False), strict=True):
        cells = [f'<th class="text">{_esc(idx)}</th>'] if index else []
        for c, v in zip(cols, row, strict=True):
            if c in formats:
                cells.append(f"<td>{_esc(formats[c](v))}</td>")
            elif isinstance(v, str) or not pd.api.types.is_numeric_dtype(frame[c]):
                cells.append(f'<td class="text">{_esc(v)}</td>')
            else:
                cells.append(f"<td>{_esc(_num(v))}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def _facts(rows: list[tuple[str, Any]], caption: str | None = None) -> str:
    """A two-column table of labelled facts."""
    out = ['<table class="facts">']
    if caption:
        out.append(f"<caption>{_esc(caption)}</caption>")
    for label, value in rows:
        out.append(f"<tr><th>{_esc(label)}</th><td>{_esc(value)}</td></tr>")
    out.append("</table>")
    return "\n".join(out)


def _png(fig: Any) -> str:
    """A figure as a base64 PNG ``data:`` URI (the figure is closed)."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    try:
        fig.savefig(buf, format="png", dpi=100)
    finally:
        plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _figure(fig: Any, alt: str, caption: str) -> str:
    return (
        f'<figure><img src="{_png(fig)}" alt="{_esc(alt)}">'
        f"<figcaption>{_esc(caption)}</figcaption></figure>"
    )


def _section(sid: str, title: str, body: list[str]) -> str:
    return "\n".join([f'<section id="{sid}">', f"<h2>{_esc(title)}</h2>", *body, "</section>"])


def _para(text: str, css: str = "") -> str:
    return f'<p class="{css}">{_esc(text)}</p>' if css else f"<p>{_esc(text)}</p>"


# -- sections --------------------------------------------------------------------------


def _response_facts(res: Any) -> list[tuple[str, Any]]:
    """What the response looks like on the training rows (weighted)."""
    m = res.model
    y = np.asarray(m.y, dtype=np.float64)
    w = np.asarray(m.sample_weight, dtype=np.float64)
    mean = float(np.average(y, weights=w))
    rows: list[tuple[str, Any]] = []
    if m.family.binary:
        rows.append(("Share of events (weighted)", f"{mean:.4g}"))
        rows.append(("Events (rows with y = 1)", _num(int(np.count_nonzero(y == 1)))))
    else:
        sd = float(np.sqrt(np.average((y - mean) ** 2, weights=w)))
        rows.append(("Mean of the response (weighted)", f"{mean:.4g}"))
        rows.append(("Standard deviation (weighted)", f"{sd:.4g}"))
        rows.append(("Range of the response", f"{_num(y.min())} to {_num(y.max())}"))
    return rows


def _shown_formula(m: Any) -> str:
    """The model's formula with column names in place of the package's aliases."""
    return m.shown_formula


def _data_section(res: Any) -> str:
    m = res.model
    fam = m.family
    weights = "none"
    if getattr(m, "weighted", False):
        src = f"column {m.weight_column}" if m.weight_column else "an array"
        weights = (f"{src} ({m.weights_kind}; total "
                   f"{_num(float(np.sum(m.sample_weight)))})")  # fmt: skip
    offset = []
    if m.design.offset is not None:
        offset.append("the formula's offset() term(s)")
    if m.offset_arg is not None:
        offset.append(f"column {m.offset_column}" if m.offset_column else "an array")
    facts = [
        ("Formula", _shown_formula(m)),
        ("Response", m.response.describe()),
        ("Family", fam.label),
        ("Link", fam.link),
        ("Rows", _num(m.nobs)),
        ("Sample weights", weights),
        ("Offset", " + ".join(offset) or "none"),
        ("Bins per bin() term (n_bins)", _num(m.n_bins)),
        ("Missing values in bin()/C() columns", m.missing),
        ("Penalty weights", m.penalty_kind),
        ("λ", f"{res.lam:.6g} ({res.lam_source})"),
    ]
    body = [_facts(facts, "The data and the model"),
            _facts(_response_facts(res), "The response (training rows)")]  # fmt: skip
    body.append(_terms_table(res))
    return _section("data", "Data and model", body)


def _terms_table(res: Any) -> str:
    """Every term: its column, kind, levels, training range and missing rows."""
    m = res.model
    rows = []
    codes = m.design.codes
    for j, block in enumerate(m.spec.blocks):
        n_lv = int(block.n_levels)
        missing = 0
        if block.has_missing_level:
            missing = int(np.count_nonzero(np.asarray(codes[j]) == n_lv - 1))
        column = block.column
        if getattr(block, "is_pair", False):  # bin(a):bin(b): cells of a grid
            ka, kb = block.grid_shape
            column = f"{block.column} x {block.pair_column}"
            kind = "pair (grid TV penalised)"
            n_lv = f"{len(block.cells)} of {ka} x {kb} cells"
            lo, hi = block.data_min, block.data_max
            what = "-" if lo is None else f"{_num(lo)} to {_num(hi)} ({block.column})"
        elif getattr(block, "ordered", False):
            kind = "ordered factor (TV penalised)"
            what = ", ".join(lv for lv in block.level_labels() if lv != "missing")
        elif block.penalized:
            kind = "bin (TV penalised)"
            lo, hi = block.data_min, block.data_max
            what = "-" if lo is None else f"{_num(lo)} to {_num(hi)}"
        else:
            kind = "C (categorical)"
            labels = [lv for lv in block.level_labels() if lv != "missing"]
            what = ", ".join(labels[:8]) + (f", … ({len(labels)} in all)"
                                            if len(labels) > 8 else "")  # fmt: skip
        rows.append({"term": block.term, "column": column, "kind": kind,
                     "levels": n_lv, "training values": what,
                     "missing rows": missing})  # fmt: skip
    dense = getattr(m.design, "dense", None)
    for q, name in enumerate(m.spec.dense_columns):
        x = np.asarray(dense[:, q], dtype=np.float64)
        rows.append({"term": name, "column": name, "kind": "linear (unpenalised)",
                     "levels": 1, "training values": f"{_num(x.min())} to {_num(x.max())}",
                     "missing rows": 0})  # fmt: skip
    cols = ["term", "column", "kind", "levels", "training values", "missing rows"]
    return _table(pd.DataFrame(rows, columns=cols), "Terms of the formula")


_BAND_MEANING = {
    "percentile": "percentile bands of the penalised refits (they inherit the penalty's "
    "shrinkage, which grows with λ: at the theory λ or λ_1se they can miss a step almost "
    "everywhere; method='relaxed' removes it)",
    "basic": "basic bootstrap bands (the percentile quantiles reflected about the fit)",
    "relaxed": "percentile bands of the relaxed refits (each resample's own cut-points, its "
    "levels refitted without penalty), drawn around the relaxed fit: this fit's "
    "cut-points refitted without penalty, the line shown",
}


def _shapes_section(res: Any, boot: Any, scale: str, level: float, method: str) -> str:
    m = res.model
    if not (m.spec.blocks or m.spec.dense_columns):
        return _section("shapes", "Shape functions",
                        [_para("The model has no term besides the intercept.")])  # fmt: skip
    from ._plotting import plot_shapes

    has_binned = any(b.penalized for b in m.spec.blocks)
    if boot is None:
        fig = plot_shapes(res, scale=scale)
    else:  # the bootstrap draws its bands (and, for relaxed ones, the relaxed fit)
        fig = boot.plot_shapes(level=level, method=method, scale=scale, rug=has_binned)
    what = ("the effect on the link scale" if scale == "link"
            else "exp(effect) relative to the average training row")  # fmt: skip
    cap = (f"Every term's shape, {what}: steps for bin() terms (dotted red lines at the "
           "cut-points kept, grey the share of training rows per unit of x), bars for C() "
           "terms, a line for linear terms; a missing level is a bar of its own.")  # fmt: skip
    if boot is not None:
        note = boot.shape_bands(level, method=method).attrs.get("coverage_note", "")
        cap += (
            f" Shaded: {level:.0%} pointwise {_BAND_MEANING[method]}; {boot.n_boot} "
            "resamples. Red ticks at the bottom: the share of resamples that cut at each edge."
            f" Measured coverage: {note}."
        )
    return _section("shapes", "Shape functions", [_figure(fig, "shape functions", cap)])


def _cut_section(res: Any, boot: Any, precision: int | None) -> str:
    m = res.model
    if not any(b.penalized for b in m.spec.blocks):
        return _section("cut-points", "Cut-points", [_para("The model has no bin() term.")])
    cuts = res.cut_points(precision=precision).drop(columns="frequency", errors="ignore")
    if boot is not None:  # this bootstrap's frequencies (res.bootstrap_ may be another)
        freq = boot.cut_frequencies()
        freq = freq[freq["selected"]][["term", "frequency"]].copy()
        # the k-th cut kept of a term (a by-group term repeats its cuts once per level,
        # an ordered factor has no numeric cut): both tables list the jumps in order
        freq["_k"] = freq.groupby("term").cumcount()
        cuts["_k"] = cuts.groupby("term").cumcount()
        cuts = cuts.merge(freq, on=["term", "_k"], how="left", validate="one_to_one")
        cuts = cuts.drop(columns="_k")
    fmt = {"frequency": lambda f: f"{f:.0%}", "cut": lambda c: _num(c, 6)}
    body = [_table(cuts, f"Cut-points kept ({len(cuts)}): the linear predictor jumps by 'jump' where "
                   "x passes the cut", formats=fmt)]  # fmt: skip
    if boot is None:
        body.append(_para("Bootstrap frequencies: call res.bootstrap() before the report to "
                          "see how often each cut-point is chosen again on resampled rows.",
                          "note"))  # fmt: skip
    else:
        table = boot.cut_frequencies()
        other = table[(~table["selected"]) & (table["frequency"] >= _UNSTABLE_SHOWN)]
        other = other.sort_values("frequency", ascending=False, kind="stable")
        body.append(_table(
            other[["term", "column", "cut", "frequency"]],
            f"Edges not kept by the fit but cut in at least {_UNSTABLE_SHOWN:.0%} of the "
            f"{boot.n_boot} resamples", formats=fmt))  # fmt: skip
    return _section("cut-points", "Cut-points", body)


def _bootstrap_section(boot: Any, level: float, method: str) -> str:
    frame = boot.summary_frame()
    facts = [
        ("Resamples", _num(boot.n_boot)),
        ("Resampled", "whole groups" if boot.grouped else "rows (weights × times drawn)"),
        ("λ of every resample", "the fit's λ" if boot.lam_rule == "same"
         else "chosen again by the fit's cross-validation rule"),  # fmt: skip
        ("Converged refits", f"{int(np.sum(boot.converged))} of {boot.n_boot}"),
        ("Cut-points kept per resample (median, range)",
         f"{_num(float(np.median(frame['n_jumps'])))} "
         f"({_num(int(frame['n_jumps'].min()))} to {_num(int(frame['n_jumps'].max()))})"),
        ("Bands", f"{level:.0%} pointwise, method '{method}': {_BAND_MEANING[method]}"),
    ]  # fmt: skip
    return _section("bootstrap", "Bootstrap", [_facts(facts)])


def _cv_section(res: Any, cv: Any) -> str:
    from ._curves import plot_cv, plot_path

    which = (res.cv_rule or {}).get("which", "lam_min") if res.cv_rule else None
    facts = [
        ("Folds", _num(cv.folds)),
        ("Criterion", cv.scoring),
        ("λ grid", f"{len(cv.lams)} values from {cv.lams[0]:.4g} to {cv.lams[-1]:.4g}"
         + (" (stopped early: the curve had turned)" if cv.stopped_early else "")),
        ("λ_min (best mean)", f"{cv.lam_min:.6g}"),
        ("λ_1se (largest within one standard error)", f"{cv.lam_1se:.6g}"),
        ("Reported fit", f"{which or 'λ'} = {res.lam:.6g}"),
    ]  # fmt: skip
    if res.cv_score:
        facts.append((f"CV {res.cv_score['scoring']} at the reported λ",
                      f"{res.cv_score['mean']:.6g} ± {res.cv_score['se']:.3g} "
                      "(mean ± standard error over folds)"))  # fmt: skip
    body = [_facts(facts, "Cross-validation")]
    body.append(_figure(plot_cv(cv), "cross-validation curve",
                        f"Mean held-out {cv.scoring} over {cv.folds} folds ± one standard "
                        "error against λ, with λ_min and λ_1se; top axis: df of the fit on "
                        "all rows."))  # fmt: skip
    marks = {"λ_min": cv.lam_min, "λ_1se": cv.lam_1se}
    body.append(
        _figure(
            plot_path(cv.path, marks=marks),
            "regularisation path",
            "The path on all rows: every term's effect range against λ.",
        )
    )
    return _section("cv", "Cross-validation", body)


def _calibration_section(res: Any, new: Any, y: Any, offset: Any, bins: int) -> str:
    from ._curves import calibration_table, plot_calibration

    m = res.model
    on_new = new is not None
    table = calibration_table(res, new, y, bins, offset=offset)
    fig = plot_calibration(res, new, y, bins, offset=offset)
    where = "the new rows given to the report" if on_new else "the training rows"
    body = [_figure(fig, "calibration plot",
                    f"Calibration on {where}: rows grouped by predicted mean into "
                    f"{len(table)} groups of equal size; each group's observed mean against "
                    "its predicted mean (weighted by the sample weights on training rows), "
                    "annotated with its row count. On the dashed line the model is "
                    "calibrated.")]  # fmt: skip
    body.append(_table(table, "Calibration table",
                       formats={"predicted": _num, "observed": _num}))  # fmt: skip
    if on_new:
        obs, pred = _observed_predicted(res, new, y, offset)
        fam = m.family
        dev = float(fam.deviance(obs, pred, np.ones_like(obs)))
        facts = [("New rows", _num(obs.size)),
                 ("Deviance on the new rows (per row)", f"{dev / obs.size:.6g}"),
                 ("Training deviance (per unit weight)",
                  f"{res.deviance / float(np.sum(m.sample_weight)):.6g}")]  # fmt: skip
        body.insert(0, _facts(facts, "Held-out rows"))
    return _section("calibration", "Calibration", body)


def _observed_predicted(res: Any, new: Any, y: Any, offset: Any) -> tuple[np.ndarray, ...]:
    if isinstance(y, str):
        y = new[y]
    obs = np.asarray(y, dtype=np.float64).ravel()
    pred = np.asarray(res.predict(new, offset=offset), dtype=np.float64)
    return obs, pred


def _versions_section() -> str:
    from .._version import __version__

    rows = [
        ("binarsity_stats", __version__),
        ("Python", f"{platform.python_version()} ({platform.python_implementation()})"),
    ]
    for name in _LIBRARIES:
        try:
            rows.append((name, metadata.version(name)))
        except metadata.PackageNotFoundError:
            rows.append((name, "not installed"))
    rows.append(("Platform", platform.platform()))
    return _section("versions", "Versions", [_facts(rows)])


# -- the page --------------------------------------------------------------------------


def _check_report_args(res: Any, new: Any, y: Any, offset: Any, scale: Any, level: Any,
                       bins: Any) -> Any:  # fmt: skip
    if scale not in ("link", "response"):
        raise ValueError(f"scale must be 'link' or 'response'; got {scale!r}.")
    if scale == "response" and res.model.family.ratio_label is None:
        fam = res.model.family
        raise ValueError(
            f"scale='response' draws exp(effect) as a ratio and needs a log or logit link; "
            f"the {fam.name} family's {fam.link} link has none: use scale='link'."
        )
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0 < level < 1:
        raise ValueError(f"level must be a number strictly between 0 and 1; got {level!r}.")
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 1:
        raise ValueError(f"bins must be a positive integer; got {bins!r}.")
    if new is None:
        if y is not None:
            raise ValueError("y is only used together with new (the training y is known).")
        if offset is not None:
            raise ValueError("offset is only used together with new.")
        return None
    if not isinstance(new, pd.DataFrame):
        raise TypeError(f"new must be a pandas DataFrame; got {type(new).__name__}.")
    if y is None:
        y = _new_response(res.model, new)
    return y


def _new_response(m: Any, new: pd.DataFrame) -> Any:
    """The observed response of ``new``: its response column, or the formula's left-hand
    side (``I(affairs > 0)``, a two-level factor) evaluated on it as on the training data."""
    name = m.response.name
    if name in new.columns and m.response.kind == "numeric":
        return name
    from ..formula._formula import build_design

    try:
        if m.formula is None:  # a model without a formula (an estimator's)
            raise ValueError(f"{name!r} is not a column of new")
        _, _, y, resp = build_design(m.formula, new, n_bins=2, missing="separate",
                                     family=m.family)  # fmt: skip
    except (ValueError, TypeError) as exc:
        raise ValueError(
            f"y: the response {name!r} cannot be read from new ({exc}); pass y=, the "
            "observed response of new (an array or a column name)."
        ) from None
    if resp.kind == "factor" and resp.event != m.response.event:
        raise ValueError(
            f"y: in new the response {name!r} counts {resp.event!r} as the event, the fit "
            f"counts {m.response.event!r}; pass y= as 0/1."
        )
    return y


def build_report(
    res: Any,
    new: Any = None,
    y: Any = None,
    *,
    offset: Any = None,
    cv: Any = None,
    boot: Any = None,
    title: str | None = None,
    scale: str = "link",
    level: float = 0.95,
    method: str = "relaxed",
    bins: int = 10,
    precision: int | None = None,
) -> str:
    """The HTML page of a fit (see ``BinarsityResults.report`` for the arguments).

    Parameters
    ----------
    res : BinarsityResults
        The fit.
    new : DataFrame, optional
        Rows on which to check the calibration (default: the training rows).
    y : array-like or str, optional
        The observed response of ``new`` or its column (default: the response column).
    offset : array-like, optional
        Offset of ``new`` (as in ``res.predict``).
    cv : CVResults, optional
        The cross-validation that chose λ: its curve and path are drawn.
    boot : BootstrapResults, optional
        A bootstrap of ``res``: bands, rug and cut-point frequencies.
    title : str, optional
        The page's title (default from the formula).
    scale : {"link", "response"}, default="link"
        Scale of the shape plots.
    level : float, default=0.95
        Coverage of the bootstrap bands.
    method : {"percentile", "basic", "relaxed"}, default="relaxed"
        The bootstrap bands (``BootstrapResults.shape_bands``).
    bins : int, default=10
        Groups of the calibration plot.
    precision : int, optional
        Significant digits of the cut-points and interval labels.

    Returns
    -------
    str
        The page (UTF-8 HTML5).
    """
    y = _check_report_args(res, new, y, offset, scale, level, bins)
    if method not in _BAND_MEANING:
        raise ValueError(f"method must be 'percentile', 'basic' or 'relaxed'; got {method!r}.")
    if boot is not None and boot.results is not res:
        raise ValueError("boot is a bootstrap of another fit.")
    if getattr(res, "bootstrap_", None) is not boot:
        # every table of the page (the summary's 'boot freq' too) from this bootstrap
        res = copy.copy(res)
        res.bootstrap_ = boot
    m = res.model
    title = title if title is not None else f"Binarsity GLM: {_shown_formula(m)}"
    from .._version import __version__

    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    sections = [
        _data_section(res),
        _section("summary", "Summary", [res.summary(precision=precision).as_html()]),
        _shapes_section(res, boot, scale, level, method),
        _cut_section(res, boot, precision),
    ]
    if boot is not None:
        sections.append(_bootstrap_section(boot, level, method))
    if cv is not None:
        sections.append(_cv_section(res, cv))
    if not res.model.family.survival:  # a Cox model predicts no mean to calibrate
        sections.append(_calibration_section(res, new, y, offset, bins))
    sections.append(_versions_section())
    ids = [s.split('"', 2)[1] for s in sections]
    names = {"data": "Data and model", "summary": "Summary", "shapes": "Shape functions",
             "cut-points": "Cut-points", "bootstrap": "Bootstrap", "cv": "Cross-validation",
             "calibration": "Calibration", "versions": "Versions"}  # fmt: skip
    nav = ("<nav><ol>" + "".join(f'<li><a href="#{i}">{_esc(names[i])}</a></li>' for i in ids)
           + "</ol></nav>")  # fmt: skip
    head = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f'<meta name="generator" content="binarsity_stats {_esc(__version__)}">',
        f"<title>{_esc(title)}</title>",
        f"<style>{_STYLE}</style>",
        "</head>",
        "<body>",
        f"<header><h1>{_esc(title)}</h1>",
        _para(
            f"{m.family.name} binarsity GLM on {m.nobs:,} rows, λ = {res.lam:.4g} "
            f"({res.lam_source}); made by binarsity_stats {__version__} on {stamp}.",
            "meta",
        ),  # fmt: skip
        "</header>",
        nav,
        "<main>",
    ]
    tail = ["</main>", "</body>", "</html>", ""]
    return "\n".join(head + sections + tail)


def write_report(res: Any, path: Any = None, **kwargs: Any) -> Any:
    """Build the page and write it to ``path`` (UTF-8), or return it when ``path`` is None.

    Parameters
    ----------
    res : BinarsityResults
        The fit.
    path : str or path-like, optional
        Destination file, written whole or not at all (a temporary file in its folder,
        renamed over it when complete).
    **kwargs
        Passed to :func:`build_report`.

    Returns
    -------
    str or path-like
        ``path`` as given, or the HTML when ``path`` is None.
    """
    page = build_report(res, **kwargs)
    if path is None:
        return page
    from ..core._atomic import write_atomic

    # a temporary file in the same folder, renamed over path when complete: a failed
    # write (full disk, Ctrl-C) leaves an existing report intact and no partial file
    return write_atomic(path, lambda fh: fh.write(page))
