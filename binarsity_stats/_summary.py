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

from ._formula import format_value

__all__ = ["Summary", "make_summary"]

_WIDTH = 78


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
    """A printable report.

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
        self.tables = tables
        self.notes = notes
        self.header = dict(left + right)

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
        for title, table in self.tables:
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

    def __str__(self) -> str:
        return self.as_text()

    def __repr__(self) -> str:
        return self.as_text()

    def _repr_html_(self) -> str:
        return f"<pre>{html.escape(self.as_text())}</pre>"


def _wrap(text: str, width: int) -> list[str]:
    import textwrap

    return textwrap.wrap(text, width=width, subsequent_indent="    ")


def _counts(values: np.ndarray) -> np.ndarray:
    """Counts as integers when they are (unweighted fits), else as floats."""
    return values.astype(np.int64) if np.all(values == np.round(values)) else values


def _iterations(res: Any) -> str:
    sweeps = getattr(res.solution, "n_sweeps", None)
    return f"{res.n_iter} ({sweeps} sweeps)" if sweeps is not None else str(res.n_iter)


def _weights_label(m: Any) -> str:
    if not m.weighted:
        return "no"
    return "analytic" if m.weights_kind == "analytic" else "frequency"


def _weights_notes(m: Any) -> list[str]:
    if not m.weighted:
        return []
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


def make_summary(res: Any, precision: int | None = None) -> Summary:
    """Build the :class:`Summary` of a :class:`BinarsityResults`.

    Parameters
    ----------
    res : BinarsityResults
        A fit.
    precision : int, optional
        Significant digits of the cut points and interval labels (default 6).

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
        ("Df (jumps+intercept+unpen.)", _fmt(res.df)),
        ("Cut-points kept (jumps)", _fmt(res.n_jumps)),
        ("Deviance", _fmt(res.deviance)),
        ("Null deviance", _fmt(res.null_deviance)),
        ("Log-Likelihood", _fmt(res.llf)),
        ("AIC", _fmt(res.aic)),
        ("BIC", _fmt(res.bic)),
        ("KKT violation", _fmt(res.kkt_violation)),
        ("Sample weights", _weights_label(m)),
        ("Offset", "yes" if m.offset is not None else "no"),
    ]
    table = res.term_table()
    blocks = table[table["kind"] != "linear"].copy()
    tables: list[tuple[str, pd.DataFrame]] = []
    if len(blocks):
        shown = pd.DataFrame(
            {
                "kind": blocks["kind"],
                "levels": blocks["levels"].astype(int),
                "cuts kept": [
                    "-" if k != "bin" else str(int(c))
                    for k, c in zip(blocks["kind"], blocks["cuts_kept"], strict=True)
                ],
                "status": [
                    ("selected" if s else "dropped") if k == "bin" else "unpenalized"
                    for k, s in zip(blocks["kind"], blocks["selected"], strict=True)
                ],
                "effect min": blocks["effect_min"],
                "effect max": blocks["effect_max"],
            },
            index=blocks.index,
        )
        tables.append(("Binned and categorical terms (effects on the link scale)", shown))
    cuts = res.cut_points(precision=precision)
    if len(cuts):
        shown_cuts = pd.DataFrame(
            {"cut": [format_value(c, precision) for c in cuts["cut"]],
             "from": cuts["left"].to_numpy(), "to": cuts["right"].to_numpy(),
             "jump": cuts["jump"].to_numpy()},
            index=pd.Index(cuts["term"].to_numpy(), dtype=object),
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
        tables.append(("C() terms in reference coding (effect vs the first level)", shown_cat))
    linear = pd.DataFrame(
        {"coef": ([res.intercept] if m.fit_intercept else []) + list(res.dense_coef)},
        index=pd.Index(
            (["Intercept"] if m.fit_intercept else []) + m.spec.dense_columns, dtype=object
        ),
    )
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
        "df = number of jumps (cut-points kept) + intercept + unpenalized parameters "
        "(C() levels - 1, linear terms, missing levels); the fused-lasso estimate. AIC = "
        "-2 llf + 2 df, BIC = -2 llf + log(n) df.",
        *_weights_notes(m),
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
            "(first populated level as reference) are what refit() and treatment contrasts "
            "report."
        )
    if any(b.has_missing_level for b in m.spec.blocks):
        notes.append(
            "A 'missing' level has its own coefficient, outside the total-variation chain "
            "(its edge is not penalized)."
        )
    if not res.converged:
        notes.append(
            f"The solver did not reach its tolerance (KKT violation "
            f"{res.kkt_violation:.3g}); increase max_iter."
        )
    return Summary("Binarsity GLM Results", left, right, tables, notes)
