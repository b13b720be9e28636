"""The formula layer: ``bin()``, ``C()`` and ``offset()`` terms and the design they build.

A formula such as ``"y ~ bin(age, 50) + C(sex) + income + offset(log(exposure))"`` is
materialised with formulaic, always with this package's own transform context (``bin``
shadows the Python builtin, and our ``C`` replaces formulaic's):

* ``bin(x, n_bins)`` is a formulaic *stateful transform*. On the training data it learns
  the quantile cut points of ``x`` (the engine's :class:`Binarizer`, design.md §6) and
  stores them in the ``ModelSpec``'s transform state; on new data it replays them. It
  emits **one column of integer bin codes**, which :func:`build_design` picks out by term
  and hands to the solver as a row of the (p, n) code array — the one-hot matrix is never
  built (design.md §3).
* ``C(x)`` emits one column of category codes (levels learned once and replayed; an unseen
  level raises). It becomes an *unpenalised* code block: one coefficient per level, made
  identifiable by the binarsity constraint Σ_k n_k θ_k = 0 (a weighted sum-to-zero
  coding). A bare non-numeric column (``y ~ sex``) is read as ``C(sex)``; a bare date,
  time or duration is refused instead (it would get one level per distinct value).
* ``bin(x, n):C(g)`` (or ``bin(x, n, by=g)``): varying coefficients, one TV chain of x
  per level of g over the same cut points, in ONE block (code = level index · d + bin
  code) whose chains are separated by breaks (penalty weight 0 at each level start).
  The breaks leave the level means free, so a ``C(g)`` of the same column is absorbed;
  with a main ``bin(x)`` in the formula the first level of g is the reference (its rows
  share one level) and the other chains are deviations from the main shape. The
  rewrite happens in :func:`rewrite_rhs` (``_by_plan``); the learned levels of g are in
  the ``bin`` state under ``"by"``.
* ``ordered(x, levels=[...])`` (or ``bin(C(x, levels=[...]))``): an ordered factor,
  coded as ``C()`` is but penalised as a TV chain over its levels in their order
  (``Block.ordered``).
* ``offset(expr)`` adds ``expr`` to the linear predictor with coefficient one.
* Every other term (numbers, ``log(x)``, interactions of numeric columns) is a dense,
  unpenalised column.

formulaic pickles a ``ModelSpec``'s state but not the transform functions; the functions
are re-created by :func:`transform_context` whenever a design is replayed, so a pickled
model predicts exactly like the original.

This module builds the design (:func:`build_design`); the jobs it calls on live beside
it in ``formula/``: the transforms (``_transforms``), the rewriting of terms
(``_rewrite``), column names and aliases (``_names``), missing values by row
(``_missing``), the response (``_response``), the design objects (``_recipe``), data
columns (``_columns``) and labels (``_labels``). The names below are also re-exported
from here: the modelling layer imports them from this module, and pickles name
``binarsity_stats.formula._formula.Block`` (and ``Design``, ``DesignSpec``,
``Response``, ``AliasedFormula``); v0.1.0 pickles name ``binarsity_stats._formula``,
which ``_moved`` maps to this module.
"""

from __future__ import annotations

import gc
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
from formulaic import Formula, model_matrix
from formulaic.errors import FormulaicError

from ..design._column_access import is_datetime_like
from ..design._spec import pair_arguments
from ._columns import FORMULAIC_LOCK, as_frame, did_you_mean, strata_labels
from ._columns import column_or_array as column_or_array
from ._labels import format_cut, format_value, interval_label
from ._missing import check_predict_missing, missing_plan, predict_complete
from ._names import (
    AliasedFormula,
    alias_names,
    clean_message,
    unalias,
    unwrap,
    with_aliases,
    with_hints,
    display_formula,
    literal_context,
)
from ._names import ColumnRefs as ColumnRefs
from ._recipe import (
    Block, Design, DesignSpec, _model_columns, _stack_codes, integers_as_float,
)  # fmt: skip
from ._recipe import dense_column_factors as dense_column_factors
from ._response import Response, _cbind_trials, _is_survival, read_response
from ._rewrite import (
    categorical_columns,
    _date_columns,
    required_columns,
    rewrite_rhs,
    _state_key,
    _strip_strata,
    term_str,
    _top_call,
    expand_dot,
)
from ._transforms import MISSING_POLICIES, _OWN, Treatment, validate_n_bins, transform_context

#: The formula layer's public names, defined here or in the modules beside this one (the
#: modelling layer imports them from here, and ``as_frame``, ``column_or_array``,
#: ``ColumnRefs``, ``unalias``, ``strata_labels`` and ``dense_column_factors`` too).
__all__ = [
    "AliasedFormula",
    "Treatment",
    "did_you_mean",
    "display_formula",
    "expand_dot",
    "missing_plan",
    "predict_complete",
    "check_predict_missing",
    "Block",
    "Design",
    "DesignSpec",
    "Response",
    "build_design",
    "observed_response",
    "transform_context",
    "format_cut",
    "format_value",
    "interval_label",
]


def build_design(
    formula: str,
    data: Any,
    *,
    n_bins: int = 50,
    missing: str = "error",
    sample_weight: np.ndarray | None = None,
    family: Any = "gaussian",
    exclude_columns: Any = (),
) -> tuple[DesignSpec, Design, np.ndarray, Response]:
    """Materialise a formula on training data.

    Parameters
    ----------
    formula : str
        ``"y ~ terms"``; see the module docstring for the terms.
    data : DataFrame or mapping of columns
        Training data.
    n_bins : int, default=50
        Bins of a ``bin(x)`` term that does not give its own.
    missing : {"error", "separate", "drop"}, default="error"
        Missing values in ``bin()``/``C()`` columns: an error naming the column, or a
        level of their own outside the TV chain. With ``"drop"`` the caller has removed
        the incomplete rows (see :func:`missing_plan`); any left are an error.
    sample_weight : ndarray of shape (n,), optional
        Row weights (used for the weighted quantiles of ``bin()``).
    family : str or Family, default="gaussian"
        Used to read the response (a two-level factor is allowed for a binary family).
    exclude_columns : sequence of str, default=()
        Columns that ``.`` does not expand to (the weight and offset columns).

    Returns
    -------
    spec : DesignSpec
        The replayable recipe.
    design : Design
        The training design.
    y : ndarray of shape (n,)
        The response as float64.
    response : Response
        How the response was read.
    """
    if not isinstance(formula, str):
        raise TypeError(f"formula must be a string; got {type(formula).__name__}.")
    validate_n_bins(n_bins, "glm()", missing)
    if missing not in MISSING_POLICIES:
        raise ValueError(f"missing must be one of {MISSING_POLICIES}; got {missing!r}.")
    data = as_frame(data)
    if len(data) == 0:
        raise ValueError("data has no rows.")
    written = formula
    formula, strata_cols = _strip_strata(formula)
    given = getattr(written, "aliases", None)
    if given:  # a formula the package wrote: its strata() columns are named by alias too
        formula = AliasedFormula(formula, given)
        strata_cols = [given.get(c, c) for c in strata_cols]
    shown = display_formula(formula)  # for messages: the names, never parsed
    if strata_cols and not _is_survival(family):
        raise ValueError(
            f"formula {written!r}: a strata() term needs family='cox' (one baseline hazard "
            "per stratum)."
        )
    source, aliases, shadowed = alias_names(
        expand_dot(formula, data, exclude_columns), data.columns
    )
    try:
        parsed = Formula(source)
    except (FormulaicError, SyntaxError, ValueError) as exc:
        msg = unalias(clean_message(exc), aliases)
        raise ValueError(f"cannot parse formula {shown!r}: {msg}") from None
    if not hasattr(parsed, "lhs") or len(parsed.lhs) == 0:
        raise ValueError(f"formula {shown!r} has no response; write 'y ~ terms'.")
    lhs_cols = required_columns(parsed, "lhs", aliases)
    rhs_cols = required_columns(parsed, "rhs", aliases)
    absent = [c for c in lhs_cols + rhs_cols if c not in data.columns]
    if absent:
        raise ValueError(
            f"formula {shown!r} names column(s) {absent} that are not in the data."
            + did_you_mean(absent, data.columns)
        )
    original = data
    data = with_aliases(data, aliases, shadowed)
    lhs = " + ".join(term_str(t) for t in parsed.lhs)
    dates = _date_columns([f for t in parsed.lhs for f in t.factors], data)
    if dates:
        raise TypeError(
            f"response '{dates[0]}' has date/time dtype {data[dates[0]].dtype}; the response "
            "must be numeric, boolean or (binomial) a two-level factor. Convert it to a number "
            "first (e.g. days since a reference date, or a duration in seconds)."
        )
    try:
        rhs = rewrite_rhs(parsed, data)
    except (ValueError, TypeError) as exc:  # names as the user wrote them (aliases shown)
        raise type(exc)(unalias(str(exc), aliases)) from None
    trials = _cbind_trials(lhs, data, aliases, formula)
    if trials is not None:  # the trials weigh the bins' quantiles as they weigh the loss
        sample_weight = trials if sample_weight is None else sample_weight * trials
    ctx = transform_context(n_bins, missing, sample_weight) | literal_context(aliases)
    # integer columns are evaluated as float64 (I(a*b) would wrap around silently),
    # except those read as categories (their levels stay integers); replayed alike
    floats = [c for c in dict.fromkeys(lhs_cols + rhs_cols)
              if c not in categorical_columns(parsed, aliases)]  # fmt: skip
    try:
        with FORMULAIC_LOCK:
            mms = model_matrix(
                f"{lhs} ~ {rhs}", integers_as_float(data, floats, aliases), context=ctx,
                na_action="ignore",
            )
    except FormulaicError as exc:
        raise with_hints(unwrap(exc, aliases, shown), shown, original.columns) from exc
    except SyntaxError as exc:
        raise ValueError(f"cannot parse formula {shown!r}: {clean_message(exc)}") from None
    except TypeError as exc:  # NumPy refusing a date/time inside an expression, e.g. I(t)
        dates = [c for c in lhs_cols + rhs_cols if is_datetime_like(original[c].dtype)]
        if not dates:
            raise
        raise TypeError(
            f"formula {shown!r} reads date/time column(s) {dates} in an expression that "
            f"needs numbers ({exc}); convert them to numbers first."
        ) from exc
    try:
        y, response, trials = read_response(mms.lhs, lhs, family, data)
    except ValueError as exc:
        raise ValueError(unalias(str(exc), aliases)) from None
    response = replace(response, name=unalias(response.name, aliases))
    mm = mms.rhs
    spec_rhs = mm.model_spec
    blocks, block_cols, dense_cols, offset_cols, intercept = classify_terms(spec_rhs, mm, aliases)
    strata = None
    if strata_cols:
        strata = strata_labels(data, strata_cols)
        surv = trials if response.kind == "survival" else None
        if surv is not None:
            from ..families._cox import encode

            y = encode(surv[:, 0], surv[:, 1], strata)
    spec = DesignSpec(
        formula=written,
        rhs_formula=rhs,
        model_spec=spec_rhs,
        blocks=blocks,
        block_columns=block_cols,
        dense_columns=dense_cols,
        offset_columns=offset_cols,
        fit_intercept=intercept,
        n_bins=n_bins,
        missing=missing,
        required=rhs_cols,
        aliases=aliases or None,
        shadowed=shadowed or None,
        strata=strata_cols or None,
        float_columns=tuple(floats),
    )
    cols, dense, off = _model_columns(mm, dense_cols, offset_cols, block_cols, aliases)
    n = len(mm)
    # formulaic's evaluated columns (the bin codes, a copy of the design's) sit in
    # reference cycles of its materializer: without a collection they stay resident
    # through the fit (1× the design's bytes at its peak). They are young, so a
    # collection of the two youngest generations frees them (~1 ms; a full one ~0.2 s).
    # Collected before the codes are stacked (each model-matrix column freed as it is
    # copied): the build's peak holds two copies of the codes, not three.
    del mms, mm
    gc.collect(1)
    design = _stack_codes(cols, blocks, dense, off, n)
    design.strata = strata
    # a Surv(time, event) response: its (n, 2) times and events (y packs their order)
    design.survival = None
    if response.kind == "survival":
        design.survival, trials = trials, None
    design.trials = trials
    return spec, design, y, response


def observed_response(
    formula: str, data: Any, family: Any, response: Response
) -> tuple[np.ndarray, np.ndarray | None]:
    """The response of new rows, read as the training response was.

    Parameters
    ----------
    formula : str
        The model's formula (only its left-hand side is evaluated).
    data : DataFrame or mapping of columns
        New rows holding the response's columns.
    family : str or Family
        The model's family.
    response : Response
        How the training response was read: a two-level factor is the indicator of the
        training's event level (new rows need not hold both levels).

    Returns
    -------
    y : ndarray
        Shape (n,), float64: the response on the fit's scale (a ``cbind`` proportion);
        for a survival response shape (n, 2): times and events (R's 1/2 status coding
        read as in training).
    trials : ndarray of shape (n,) or None
        The binomial trials of a ``cbind`` response.

    Raises
    ------
    ValueError
        A response column missing from ``data`` (named), or values the family refuses.
    """
    data = as_frame(data)
    if response.kind == "factor":
        if response.name not in data.columns:
            raise ValueError(f"the response column {response.name!r} is not in the data.")
        col = data[response.name]
        return (col.astype(str) == str(response.event)).to_numpy(dtype=np.float64), None
    text, _ = _strip_strata(formula)
    given = getattr(formula, "aliases", None)
    if given:
        text = AliasedFormula(text, given)
    source, aliases, shadowed = alias_names(expand_dot(text, data), data.columns)
    parsed = Formula(source)
    lhs = " + ".join(term_str(t) for t in parsed.lhs)
    absent = [c for c in required_columns(parsed, "lhs", aliases) if c not in data.columns]
    if absent:
        raise ValueError(
            f"the response {response.name!r} needs column(s) {absent}, not in the data."
        )
    ctx = transform_context(50, "error", None) | literal_context(aliases)
    try:
        with FORMULAIC_LOCK:
            mms = model_matrix(f"{lhs} ~ 1", with_aliases(data, aliases, shadowed),
                               context=ctx, na_action="ignore")  # fmt: skip
    except FormulaicError as exc:
        raise unwrap(exc, aliases, display_formula(formula)) from exc
    try:
        y, _, trials = read_response(mms.lhs, lhs, family, data)
    except ValueError as exc:
        raise ValueError(unalias(str(exc), aliases)) from None
    if response.kind == "survival":  # trials holds the (n, 2) times and events
        return trials, None
    return y, trials


def _pair_block(st: Any, s: Mapping[str, Any], aliases: Mapping[str, str] | None) -> Block:
    """The Block of a pair term ``bin(a, n):bin(b, m)`` (kind ``"pair"``, design.md §10):
    its levels are the observed cells of the two axes' grid, then one level for a cell
    without training rows (no parameter)."""
    ps = s["pair"]
    text = str(st.term)
    first = text[: text.index(", pair=")] + ")"
    # the term as the user wrote it
    bins = f", {ps['n_bins']}" if ps.get("bins_written") else ""
    second = pair_arguments(text)[1]  # the second axis' expression (log(b)), not its column
    term = f"{unalias(first, aliases)}:bin({unalias(second, aliases)}{bins})"
    return Block(
        term=term,
        kind="pair",
        column=unalias(s["column"], aliases, quote=False),
        n_levels=len(ps["cells"]) + 1,
        edges=np.asarray(s["edges"], dtype=np.float64),
        data_min=s.get("data_min"),
        data_max=s.get("data_max"),
        pair_column=unalias(ps["column"], aliases, quote=False),
        pair_edges=np.asarray(ps["edges"], dtype=np.float64),
        cells=tuple(int(c) for c in ps["cells"]),
    )


def classify_terms(model_spec: Any, mm: pd.DataFrame, aliases: Mapping[str, str] | None = None):
    """Sort formulaic's terms into code blocks, dense columns, offsets, intercept.

    Term and column names are returned with the original column names (no aliases).
    """
    blocks: list[Block] = []
    block_cols: list[str] = []
    dense_cols: list[str] = []
    offset_cols: list[str] = []
    intercept = False
    state = model_spec.transform_state
    for st in model_spec.structure:
        factors = list(st.term.factors)
        if len(factors) == 1 and factors[0].expr == "1":
            intercept = True
            continue
        kinds = [_top_call(f.expr) for f in factors]
        own = [k for k in kinds if k in _OWN]
        if own and len(factors) > 1:
            raise ValueError(
                f"{own[0]}() terms cannot be interacted with other terms: '{st.term}'."
            )
        kind = own[0] if own else None
        if kind == "offset":
            offset_cols.extend(unalias(c, aliases, column=True) for c in st.columns)
            continue
        if kind in ("bin", "C", "ordered"):
            (col,) = st.columns
            s = state[_state_key(factors[0].expr)]
            if kind == "bin" and "pair" in s:
                blocks.append(_pair_block(st, s, aliases))
                block_cols.append(unalias(col, aliases, column=True))
                continue
            if kind == "bin":
                edges = np.asarray(s["edges"], dtype=np.float64)
                by = s.get("by")
                term = unalias(str(st.term), aliases)
                n_levels = len(edges) + 1 + int(s["has_missing_level"])
                if by is not None:
                    text = str(st.term)
                    term = unalias(text[: text.rindex(", by=")] + ")", aliases)
                    term = f"{term}:C({unalias(by['column'], aliases)})"
                    G = len(by["levels"])
                    n_levels = 1 + (G - 1) * (len(edges) + 1) if by["main"] else G * n_levels
                block = Block(
                    term=term,
                    kind="bin",
                    column=unalias(s["column"], aliases, quote=False),
                    n_levels=n_levels,
                    by=None if by is None else unalias(by["column"], aliases, quote=False),
                    by_levels=None if by is None else tuple(by["levels"]),
                    by_main=bool(by and by["main"]),
                    edges=edges,
                    has_missing_level=bool(s["has_missing_level"]),
                    data_min=s.get("data_min"),
                    data_max=s.get("data_max"),
                    # recorded since 0.2: older pickled specs label every level (low, high]
                    distinct=tuple(s["distinct"]) if "distinct" in s else None,
                    single_values=tuple(s["single_values"]) if "single_values" in s else None,
                    monotone=s.get("monotone"),
                )
            else:
                block = Block(
                    term=unalias(str(st.term), aliases),
                    kind="categorical",
                    column=unalias(s["column"], aliases, quote=False),
                    n_levels=len(s["levels"]) + int(s["has_missing_level"]),
                    levels=tuple(s["levels"]),
                    has_missing_level=bool(s["has_missing_level"]),
                    reference=s.get("reference"),
                    ordered=kind == "ordered",
                    monotone=s.get("monotone"),
                )
            blocks.append(block)
            block_cols.append(unalias(col, aliases, column=True))
            continue
        dense_cols.extend(unalias(c, aliases, column=True) for c in st.columns)
    return blocks, block_cols, dense_cols, offset_cols, intercept
