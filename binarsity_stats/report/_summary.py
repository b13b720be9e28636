"""The statsmodels-style text report of a binarsity fit.

Layout: a two-column header (model, family, link, n, λ and how it was chosen, df,
deviance, null deviance, log-likelihood, AIC, BIC, convergence), one row per term
(levels, cut-points kept, selected or dropped, range of its effect), the unpenalised
linear terms, and notes on the constraint and on what df means.
"""

from __future__ import annotations

import html
from typing import Any

import numpy as np
import pandas as pd

from ..formula._labels import format_value
from ..core._statistics import SUMMARY_STATISTICS, dispersion_informative

__all__ = ["Summary", "make_summary"]

_WIDTH = 78


def _has_constant(m: Any) -> bool:
    """Whether the df counts a constant (an intercept, or one absorbed by a block)."""
    return bool(m.fit_intercept or m.intercept_absorbed)


def _df_label(m: Any) -> str:
    """The header's df label: without "intercept" for a model with no constant (Cox, '- 1')."""
    return "Df (jumps+intercept+unpen.)" if _has_constant(m) else "Df (jumps+unpen.)"


def _fmt(value: Any) -> str:
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if v == 0:
            return "0"
        if abs(v) >= 1e5 or abs(v) < 1e-3:
            return f"{v:.4g}"
        return f"{v:.6g}" if abs(v) >= 1 else f"{v:.4g}"
    return str(value)


def _fmt_table(value: float) -> str:
    return f"{value:.4g}"


class Summary:
    """A printable report, with statsmodels' ``Summary`` conventions.

    Parameters
    ----------
    title : str
        First line.
    left, right : list of (str, str)
        The two header columns (label, value).
    tables : list of (str, DataFrame)
        Titled tables, printed in order.
    notes : list of str
        Numbered notes printed last.

    Attributes
    ----------
    header : dict
        Every header label → value (for programmatic access).
    tables : list of DataFrame
        The header (first: one ``value`` column indexed by label, left column then
        right) and every table of the report in order; each table's title is in its
        ``attrs["title"]`` and in :attr:`titles`.
    titles : list of str
        The titles of :attr:`tables` (``""`` for the header).
    """

    def __init__(
        self,
        title: str,
        left: list[tuple[str, str]],
        right: list[tuple[str, str]],
        tables: list[tuple[str, pd.DataFrame]],
        notes: list[str],
    ) -> None:
        self.title = title
        self.left = left
        self.right = right
        self._titled = tables
        self.notes = notes
        self.header = dict(left + right)
        head = pd.DataFrame(
            {"value": [v for _, v in left + right]},
            index=pd.Index([k for k, _ in left + right], dtype=object),
        )
        head.attrs["title"] = ""
        self.tables: list[pd.DataFrame] = [head]
        for name, table in tables:
            table = table.copy()
            table.attrs["title"] = name
            self.tables.append(table)
        self.titles = [t.attrs["title"] for t in self.tables]

    def as_text(self) -> str:
        """The report as plain text.

        Returns
        -------
        str
            The formatted report.
        """
        wl = max((len(a) + len(b) + 3 for a, b in self.left), default=0)
        wr = max((len(a) + len(b) + 2 for a, b in self.right), default=0)
        width = max(_WIDTH, wl + wr)
        wl = max(wl, width - wr)
        lines = [self.title.center(width), "=" * width]
        for i in range(max(len(self.left), len(self.right))):
            row = ""
            for side, w in ((self.left, wl), (self.right, wr)):
                if i < len(side):
                    label, value = side[i]
                    pad = w - len(label) - 1 - (1 if side is self.left else 0)
                    row += f"{label}:{value:>{pad}}" + (" " if side is self.left else "")
                else:
                    row += " " * w
            lines.append(row.rstrip())
        for title, table in self._titled:
            lines.append("=" * width)
            if title:
                lines.append(title)
                lines.append("-" * width)
            text = (
                table.to_string(float_format=_fmt_table, na_rep="", justify="right")
                if len(table)
                else "(none)"
            )
            lines.extend(text.splitlines())
        lines.append("=" * width)
        if self.notes:
            lines.append("Notes:")
            for k, note in enumerate(self.notes, start=1):
                lines.extend(_wrap(f"[{k}] {note}", width))
        return "\n".join(lines)

    def as_html(self) -> str:
        """The report as an HTML fragment (tables with ``class="simpletable"``).

        The fragment is self-contained (no script, style or external resource): a
        caption, the two-column header, one table per section, and the notes as an
        ordered list. Every text is HTML-escaped.

        Returns
        -------
        str
            HTML.
        """
        esc = html.escape
        out = ['<div class="binarsity-summary">', '<table class="simpletable">',
               f"<caption>{esc(self.title)}</caption>"]  # fmt: skip
        for i in range(max(len(self.left), len(self.right))):
            cells = []
            for side in (self.left, self.right):
                if i < len(side):
                    label, value = side[i]
                    cells.append(f"<th>{esc(label)}:</th><td>{esc(str(value))}</td>")
                else:
                    cells.append("<th></th><td></td>")
            out.append("<tr>" + "".join(cells) + "</tr>")
        out.append("</table>")
        for title, table in self._titled:
            out.append('<table class="simpletable">')
            if title:
                out.append(f"<caption>{esc(title)}</caption>")
            out.append("<thead><tr><th></th>"
                       + "".join(f"<th>{esc(str(c))}</th>" for c in table.columns)
                       + "</tr></thead><tbody>")  # fmt: skip
            if not len(table):
                out.append(f'<tr><td colspan="{len(table.columns) + 1}">(none)</td></tr>')
            for idx, row in zip(table.index, table.itertuples(index=False), strict=True):
                out.append(f"<tr><th>{esc(str(idx))}</th>"
                           + "".join(f"<td>{esc(_cell(v))}</td>" for v in row) + "</tr>")  # fmt: skip
            out.append("</tbody></table>")
        if self.notes:
            out.append("<p>Notes:</p><ol>")
            out.extend(f"<li>{esc(n)}</li>" for n in self.notes)
            out.append("</ol>")
        out.append("</div>")
        return "\n".join(out)

    def as_latex(self) -> str:
        """The report as LaTeX ``tabular`` environments with booktabs rules.

        Each section is a ``tabular`` with ``\\toprule``, ``\\midrule`` and
        ``\\bottomrule`` (needs ``\\usepackage{booktabs}``); special characters are
        escaped; the notes follow as a numbered ``\\footnotesize`` paragraph.

        Returns
        -------
        str
            LaTeX source.
        """
        tex = _latex_escape
        out = ["\\begin{center}", f"\\textbf{{{tex(self.title)}}}\\\\[2pt]",
               "\\begin{tabular}{lrlr}", "\\toprule"]  # fmt: skip
        for i in range(max(len(self.left), len(self.right))):
            cells = []
            for side in (self.left, self.right):
                if i < len(side):
                    label, value = side[i]
                    cells += [tex(label) + ":", tex(str(value))]
                else:
                    cells += ["", ""]
            out.append(" & ".join(cells) + " \\\\")
        out += ["\\bottomrule", "\\end{tabular}"]
        for title, table in self._titled:
            ncol = len(table.columns)
            out.append("")
            if title:
                out.append(f"\\textit{{{tex(title)}}}\\\\[2pt]")
            out += ["\\begin{tabular}{l" + "r" * ncol + "}", "\\toprule"]
            out.append(" & ".join([""] + [tex(str(c)) for c in table.columns]) + " \\\\")
            out.append("\\midrule")
            if not len(table):
                out.append(f"\\multicolumn{{{ncol + 1}}}{{l}}{{(none)}} \\\\")
            for idx, row in zip(table.index, table.itertuples(index=False), strict=True):
                out.append(" & ".join([tex(str(idx))] + [tex(_cell(v)) for v in row])
                           + " \\\\")  # fmt: skip
            out += ["\\bottomrule", "\\end{tabular}"]
        out.append("\\end{center}")
        if self.notes:
            out.append("{\\footnotesize")
            out.extend(f"[{k}] {tex(n)}\\\\" for k, n in enumerate(self.notes, start=1))
            out.append("}")
        return "\n".join(out)

    def __str__(self) -> str:
        return self.as_text()

    def __repr__(self) -> str:
        return self.as_text()

    def _repr_html_(self) -> str:
        return self.as_html()


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
    "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}", "<": r"\textless{}", ">": r"\textgreater{}",
}  # fmt: skip


def _latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


def _cell(value: Any) -> str:
    """One table cell as text, formatted as in :meth:`Summary.as_text`."""
    if value is None or (isinstance(value, (float, np.floating)) and np.isnan(value)):
        return ""
    if isinstance(value, (float, np.floating)):
        return _fmt_table(float(value))
    return str(value)


def _wrap(text: str, width: int) -> list[str]:
    import textwrap

    return textwrap.wrap(text, width=width, subsequent_indent="    ")


def _counts(values: np.ndarray) -> np.ndarray:
    """Counts as integers when they are (unweighted fits), else as floats."""
    return values.astype(np.int64) if np.all(values == np.round(values)) else values


def _iterations(res: Any) -> str:
    sweeps = getattr(res.solution, "n_sweeps", None)
    return f"{res.n_iter} ({sweeps} sweeps)" if sweeps is not None else str(res.n_iter)


def _survival_rows(res: Any) -> list[tuple[str, str]]:
    """Header rows of a Cox fit: events, partial deviance and likelihood, Harrell's C."""
    m = res.model
    events = float(np.sum(m.survival[:, 1])) if m.survival is not None else float("nan")
    strata = getattr(m.spec, "strata", None)
    return [
        ("Events", _fmt(int(events)) if np.isfinite(events) else "-"),
        *([("Strata", f"{', '.join(map(str, strata))} ({_n_strata(m)})")] if strata else []),
        ("Deviance (partial)", _fmt(res.deviance)),
        ("Null deviance", _fmt(res.null_deviance)),
        ("Log partial lik.", _fmt(res.llf)),
        ("C-index (Harrell)", _fmt(res.concordance)),
    ]


def _n_strata(m: Any) -> int:
    """The number of strata of a stratified Cox fit (its training rows' labels)."""
    labels = getattr(m, "strata", None)
    return 0 if labels is None else len(np.unique(labels))


def _weights_label(m: Any) -> str:
    if not m.weighted:
        return "no"
    kind = "analytic" if m.weights_kind == "analytic" else "frequency"
    if getattr(m, "trials", None) is not None:  # cbind(successes, failures)
        user = not np.allclose(m.sample_weight, m.trials)
        return f"trials x {kind}" if user else "trials (cbind)"
    return kind


def _weights_notes(m: Any) -> list[str]:
    if not m.weighted:
        return []
    if getattr(m, "trials", None) is not None:
        return [
            "cbind(successes, failures): y is the proportion of successes and the trials "
            "successes + failures multiply the weights (R's prior weights), as statsmodels' "
            "two-column binomial response; lam='theory' counts the trials as observations "
            "(each row stands for its trials); "
            + ("BIC counts one observation per row of positive weight."
               if m.weights_kind == "analytic"
               else "BIC's n is the sum of the weights (frequency weights).")
        ]  # fmt: skip
    if m.weights_kind == "analytic":
        return [
            "Sample weights are analytic (precision) weights, as statsmodels' var_weights: "
            "the log-likelihood, AIC and BIC count one observation per row (n = rows of "
            "positive weight), and lam='theory' uses Kish's effective n."
        ]
    return [
        "Sample weights are frequencies, as statsmodels' freq_weights: row i counts s_i "
        "times (n = sum of the weights in BIC and in lam='theory')."
    ]


def _df_meaning(fam: Any) -> str:
    if fam.quadratic:  # gaussian, identity link: the generalized-lasso result applies
        return (
            "For a gaussian fit this is the fused-lasso estimate of the degrees of freedom "
            "(unbiased for the expected df, Tibshirani & Taylor 2012, Ann. Statist.)."
        )
    return (
        f"For the {fam.label} family this df is a heuristic (the jump count is the "
        "gaussian fused-lasso result; no such theorem is known for this likelihood), so "
        "AIC and BIC are approximate: compare fits by cross-validation."
    )


def _df_size_notes(res: Any) -> list[str]:
    """A note when the fit has about as many parameters as observations."""
    m = res.model
    df, n = float(res.df), float(m.wnobs)
    if df >= n:
        return [
            f"df = {df:.0f} is not below the number of observations ({n:.0f}): the fit "
            "interpolates, Df Residuals and the dispersion are undefined, and AIC/BIC "
            "are meaningless. Increase lam or use fewer bins."
        ]
    n_eff = float(m.n_effective)
    if m.weighted and m.weights_kind == "analytic" and df > n_eff:
        return [
            f"df = {df:.0f} exceeds the effective number of observations of the analytic "
            f"weights (Kish's (sum s)^2 / sum s^2 = {n_eff:.1f} of {n:.0f} rows, the n of "
            "lam='theory'): the weighted loss is dominated by a few heavy rows, which a fit "
            "with this many levels can follow one by one. AIC and BIC (on n = rows) do not "
            "see this: judge the fit by cross-validation rather than by AIC/BIC."
        ]
    return []


def _information_criteria(fam: Any) -> str:
    """AIC and BIC as computed, with the family's estimated parameters (an NB θ)."""
    if not fam.extra_df:
        return "AIC = -2 llf + 2 df, BIC = -2 llf + log(n) df."
    names = ", ".join(k for k in fam.parameter_columns() if not k.endswith("_se"))
    k = fam.extra_df
    return (f"AIC = -2 llf + 2 (df + {k}), BIC = -2 llf + log(n) (df + {k}): {names} "
            "is estimated too (R's glm.nb).")


def _dispersion_shown(m: Any) -> bool:
    """Whether the summary reports Pearson's dispersion (not for a Bernoulli response:
    ``_statistics.dispersion_informative``)."""
    stats = getattr(m, "dask_stats", None)  # rows on the Dask workers: reduced
    if stats is not None:
        return not (getattr(m.family, "binary", False) and stats.y_binary)
    y = getattr(m, "y", None)
    if y is None:
        return True
    return dispersion_informative(m.family, y, getattr(m, "trials", None))


def _dispersion_meaning(fam: Any) -> str:
    if fam.estimate_dispersion:
        return f"it estimates {fam.dispersion_name}."
    return "1 under the model (a value well above 1 signals over-dispersion)."


def make_summary(res: Any, precision: int | None = None, sort: str | None = None) -> Summary:
    """Build the :class:`Summary` of a :class:`BinarsityResults`.

    Parameters
    ----------
    res : BinarsityResults
        A fit.
    precision : int, optional
        Significant digits of the cut points and interval labels (default 6).
    sort : {None, "importance"}, optional
        ``"importance"`` orders the term tables by decreasing importance; by default
        terms appear in formula order.

    Returns
    -------
    Summary
        The report.
    """
    m = res.model
    fam = m.family
    resp = m.response
    event = "-"
    if resp.kind == "factor":
        event = f"{resp.event!r} (vs {resp.levels[0]!r})"
    elif resp.kind == "counts":
        event = "successes (of the trials)"
    elif resp.kind == "survival":
        event = "status 2 (censored = 1)" if resp.levels else "event = 1 (censored = 0)"
    elif resp.kind == "boolean" or fam.binary:
        event = "y == 1" if resp.kind != "boolean" else "True"
    left = [
        ("Dep. Variable", resp.name),
        ("Event level", event),
        ("Model", "Binarsity GLM"),
        *fam.header_rows(),
        ("Method", "penalized ML"),
        ("Penalty weights", m.penalty_kind),
        ("Lambda", _fmt(res.lam)),
        ("Lambda chosen by", res.lam_source),
        ("Converged", _fmt(res.converged)),
        ("Iterations", _iterations(res)),
    ]
    right = [
        ("No. Observations", _fmt(res.nobs)),
        *([("Rows dropped (missing)", _fmt(m.n_dropped))] if getattr(m, "n_dropped", 0) else []),
        (_df_label(m), _fmt(res.df)),
        ("Df Residuals", _fmt(res.df_resid)),
        ("Cut-points kept (jumps)", _fmt(res.n_jumps)),
        *(_survival_rows(res) if fam.survival else [
            ("Deviance", _fmt(res.deviance)),
            ("Null deviance", _fmt(res.null_deviance)),
            ("Pearson chi2", _fmt(res.pearson_chi2)),
            *([(f"Dispersion ({fam.dispersion_name}, chi2/df)", _fmt(res.dispersion))]
              if _dispersion_shown(m) else []),
            ("Log-Likelihood", _fmt(res.llf)),
        ]),
        ("AIC", _fmt(res.aic)),
        ("BIC", _fmt(res.bic)),
        *[(name, _fmt(float(stat(res)))) for name, stat in SUMMARY_STATISTICS.items()],
        ("KKT violation", _fmt(res.kkt_violation)),
        ("Sample weights", _weights_label(m)),
        ("Offset", "yes" if m.has_offset else "no"),
    ]
    table = res.term_table()
    blocks = table[table["kind"] != "linear"].copy()
    tables: list[tuple[str, pd.DataFrame]] = []
    if len(blocks):
        shape_of = {b.term: getattr(b, "monotone", None) for b in m.spec.blocks}
        shown = pd.DataFrame(
            {
                "kind": [
                    f"bin, {shape_of[t]}" if k == "bin" and shape_of.get(t) else k
                    for t, k in zip(blocks.index, blocks["kind"], strict=True)
                ],
                "levels": blocks["levels"].astype(int),
                "cuts kept": [
                    f"{int(c)} regions" if k == "pair"
                    else "-" if k not in ("bin", "ordered") else str(int(c))
                    for k, c in zip(blocks["kind"], blocks["cuts_kept"], strict=True)
                ],
                "status": [
                    ("selected" if s else "dropped") if k in ("bin", "ordered", "pair")
                    else "unpenalized"
                    for k, s in zip(blocks["kind"], blocks["selected"], strict=True)
                ],
                "effect min": blocks["effect_min"],
                "effect max": blocks["effect_max"],
                "importance": blocks["importance"],
            },
            index=blocks.index,
        )
        if sort == "importance":
            shown = shown.sort_values("importance", ascending=False, kind="stable")
        tables.append(("Binned and categorical terms (effects on the link scale)", shown))
    cuts = res.cut_points(precision=precision)
    pairs = {b.term for b in m.spec.blocks if getattr(b, "is_pair", False)}
    if len(cuts):
        shown_cuts = pd.DataFrame(
            {"cut": [format_value(c, precision) for c in cuts["cut"]],
             "from": cuts["left"].to_numpy(), "to": cuts["right"].to_numpy(),
             "jump": cuts["jump"].to_numpy()},
            # a pair term's cut lines name their axis: "bin(a):bin(b) [a]"
            index=pd.Index([f"{t} [{c}]" if t in pairs else t
                            for t, c in zip(cuts["term"], cuts["column"], strict=True)],
                           dtype=object),
        )  # fmt: skip
        if "frequency" in cuts:  # after res.bootstrap(): the share of resamples jumping here
            shown_cuts["boot freq"] = [f"{f:.0%}" for f in cuts["frequency"]]
        tables.append(
            ("Cut-points kept (jump of the linear predictor where x passes the cut)", shown_cuts)
        )
    cat = res.categorical_effects()
    if len(cat):
        shown_cat = pd.DataFrame(
            {"vs": cat["reference"].to_numpy(), "effect": cat["effect"].to_numpy(),
             "count": _counts(cat["count"].to_numpy())},
            index=pd.Index([f"{t}[{lv}]" for t, lv in zip(cat["term"], cat["level"],
                                                          strict=True)], dtype=object),
        )  # fmt: skip
        tables.append(("C() terms in reference coding (effect vs the reference level)", shown_cat))
    lin = table[table["kind"] == "linear"]
    if sort == "importance":
        lin = lin.sort_values("importance", ascending=False, kind="stable")
    coefs = dict(zip(m.spec.dense_columns, res.dense_coef, strict=True))
    linear = pd.DataFrame(
        {"coef": ([res.intercept] if m.fit_intercept else []) + [coefs[t] for t in lin.index],
         "effect range": ([np.nan] if m.fit_intercept else []) + list(lin["effect_range"]),
         "importance": ([np.nan] if m.fit_intercept else []) + list(lin["importance"])},
        index=pd.Index((["Intercept"] if m.fit_intercept else []) + list(lin.index),
                       dtype=object),
    )  # fmt: skip
    if len(linear):
        tables.append(("Intercept and unpenalized linear terms", linear))
    if m.intercept_absorbed:
        first = m.spec.blocks[0].term
        constraint = (
            f"No intercept ('- 1'): the first term, {first}, carries full coding - its "
            "levels absorb the intercept and are the linear predictor of its level at the "
            "other terms' weighted average (the total-variation penalty is unchanged by a "
            "common shift of a term's levels). Every other bin() and C() term satisfies "
            "sum_k n_jk theta_jk = 0 (n_jk: weighted training rows in level k). The null "
            "deviance is that of the offset alone (eta = offset), as in R."
        )
    elif fam.survival:
        constraint = (
            "Cox model: no intercept (the partial likelihood does not see a constant in "
            "the linear predictor; a formula's intercept is dropped). Each bin() and C() "
            "term satisfies sum_k n_jk theta_jk = 0 (n_jk: weighted training rows in "
            "level k): its levels are log hazard ratios relative to the weighted average "
            "training row. Deviance: 2 (partial log-likelihood of the saturated model - "
            "that of the fit) (glmnet's coxnet convention), with "
            f"{getattr(fam, 'ties', 'breslow').title()}'s ties; the null deviance is that of "
            "eta = offset."
        )
        constraint += (
            " Relative risk: predict(type='risk') is exp(eta) relative to a row with every "
            "bin() and C() term at its weighted training average and linear terms and "
            "offset at 0; refit().predict() is relative to a row with every term at its "
            "reference (first) level and linear terms at 0."
        )
        if m.response.levels:  # R's status coding
            constraint += (
                f" The status of {m.response.name} was read in R's coding, as "
                "survival::Surv reads it: 2 = event, 1 = censored."
            )
        if getattr(m.spec, "strata", None):
            constraint += (
                f" Stratified by strata({', '.join(map(str, m.spec.strata))}) "
                f"({_n_strata(m)} strata): risk sets, ties and the baseline hazard are "
                "per stratum; the levels are common to all strata."
            )
    elif not m.fit_intercept:
        constraint = (
            "No intercept ('- 1'): the linear predictor has no constant term; the null "
            "deviance is that of the offset alone (eta = offset), as in R."
        )
    else:
        constraint = (
            "Each bin() and C() term satisfies the constraint sum_k n_jk theta_jk = 0 "
            "(n_jk: weighted training rows in level k): its levels are effects relative to "
            "the weighted average training row, and the intercept is the linear predictor "
            "of that average row."
        )
    notes = [
        constraint,
        "df = number of jumps (cut-points kept) + "
        f"{'intercept + ' if _has_constant(m) else ''}unpenalized parameters "
        f"(C() levels - 1, linear terms, missing levels). {_information_criteria(fam)} "
        f"{_df_meaning(fam)}",
        *_weights_notes(m),
        *_df_size_notes(res),
        "Effect range: max - min of a term's effect over the training rows (a linear "
        "term: |coef| times the range of its column). Importance: the weighted mean over "
        "the training rows of |f_j(x) - mean f_j|, f_j the term's contribution to the "
        "linear predictor (EBM's mean absolute score, centred).",
        *([] if fam.survival else [
            f"Dispersion: Pearson chi2 / Df Residuals (Df Residuals = observations - df); "
            f"{_dispersion_meaning(fam)}"] if _dispersion_shown(m) else [
            "No dispersion is shown: for a 0/1 response (one Bernoulli trial per row) "
            "Pearson chi2 / Df Residuals depends on the fitted probabilities only and says "
            "nothing about the variance."]),
        "No standard errors are given for a penalized fit; refit() gives the unpenalized "
        "GLM on the selected cut-points, with standard errors conditional on the "
        "selection.",
    ]
    if len(cuts):
        notes.append(
            "Bins are right-closed: (a, b] holds the values a < x <= b; '= v' marks a bin "
            "whose training rows all had the value v."
        )
    boot = getattr(res, "bootstrap_", None)
    if len(cuts) and boot is not None:
        notes.append(
            f"boot freq: the share of {boot.n_boot} bootstrap refits (resampled "
            f"{'groups' if boot.grouped else 'rows'}, lam={boot.lam_rule!r}) whose step "
            "function jumps at this cut-point."
        )
    if any(not b.penalized for b in m.spec.blocks):
        notes.append(
            "C() terms are unpenalized; their reference-coded effects theta_k - theta_ref "
            "(reference: the first populated level, or C(x, Treatment(level))) are what "
            "refit() and treatment contrasts report."
        )
    shaped = [b.term for b in m.spec.blocks if getattr(b, "monotone", None)]
    if shaped:
        notes.append(
            "Monotone terms (bin(x, monotone=...)): " + ", ".join(shaped) + " are constrained "
            "to a non-decreasing ('increasing') or non-increasing ('decreasing') step "
            "function; every jump goes that way (a missing level stays outside the order)."
        )
    if any(getattr(b, "by", None) is not None for b in m.spec.blocks):
        notes.append(
            "bin(x):C(g) terms hold one chain per level of g over the same bins, not "
            "penalized across levels: the level means of g are in the term (a C(g) term "
            "is absorbed). With a main bin(x) term, the first level of g is the reference "
            "(one level) and the other levels' chains are deviations from the main shape."
        )
    donors = getattr(m, "by_donors", {})
    if donors:
        blocks = m.spec.blocks
        later = ", ".join(f"{blocks[j].term} (g = {blocks[j].by})" for j in sorted(donors))
        notes.append(
            "Several bin(x):C(g) terms share a group column: its level means are in the "
            "first of them only; " + later + " hold(s) one constraint per level of g "
            "(sum_k n_gk theta_gk = 0 within each level), i.e. within-level shapes, so "
            "every level is identified and counted once in df."
        )
    if any(b.has_missing_level for b in m.spec.blocks):
        notes.append(
            "A 'missing' level has its own coefficient, outside the total-variation chain "
            "(its edge is not penalized)."
        )
    disp = res.dispersion
    limit = getattr(fam, "overdispersion_threshold", None)  # poisson: 1.5 (_families)
    if limit is not None and np.isfinite(disp) and disp > limit:
        notes.append(
            f"Over-dispersion: the Pearson dispersion is {disp:.3g} > "
            f"{limit} (1 under the {fam.label} model); the variance grows "
            "faster than the mean, so a quasi-poisson or negative binomial model may fit "
            "better, and refit()'s standard errors are too small by about "
            f"sqrt({disp:.3g})."
        )
    family_note = getattr(m, "family_note", None)  # None on models pickled before 0.3
    if family_note:
        notes.append(family_note)
    n_dropped = getattr(m, "n_dropped", 0)
    if n_dropped:
        notes.append(
            f"{n_dropped} row(s) with a missing value in a column the model uses were "
            "dropped before the fit (missing='drop', R's na.omit); No. Observations counts "
            "the rows kept."
        )
    if not res.converged:
        notes.append(
            f"The solver did not reach its tolerance (KKT violation "
            f"{res.kkt_violation:.3g}); increase max_iter."
        )
    return Summary("Binarsity GLM Results", left, right, tables, notes)
