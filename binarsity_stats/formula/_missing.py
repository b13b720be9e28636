"""Missing values by row: which columns drop a training row (``missing="drop"``, R's
na.omit) and predictions that are NaN on new rows missing one of them (R's na.exclude).
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np
import pandas as pd
from formulaic import Formula
from formulaic.errors import FormulaicError
from formulaic.utils.code import sanitize_variable_names

from ..core._validation import check_offset
from ._columns import as_frame
from ._names import alias_names
from ._recipe import DesignSpec
from ._rewrite import _factor_columns, required_columns, _top_call, expand_dot

__all__ = [
    "check_predict_missing",
    "predict_complete",
    "missing_plan",
]


def check_predict_missing(missing: Any) -> None:
    """Check ``predict``'s ``missing`` argument: None, "nan" or "error".

    Parameters
    ----------
    missing : object
        The argument.
    """
    if missing not in (None, "nan", "error"):
        raise ValueError(f"missing must be None, 'nan' or 'error'; got {missing!r}.")


def _incomplete_rows(spec: DesignSpec, newdata: Any, missing: Any) -> np.ndarray | None:
    """New rows missing a value in a column whose missing values dropped training rows.

    None when there are none, when the model dropped nothing by column
    (``missing="drop"`` unused) or when ``missing="error"`` asks for the error.
    """
    check_predict_missing(missing)
    columns = getattr(spec, "drop_columns", None) or []
    if newdata is None or not columns or missing == "error":
        return None
    frame = as_frame(newdata)
    present = [c for c in columns if c in frame.columns]
    if not present:
        return None
    na = frame[present].isna().any(axis=1).to_numpy()
    return na if na.any() else None


def predict_complete(
    spec: DesignSpec, newdata: Any, offset: Any, missing: Any, predict_rows: Any
) -> Any:
    """``predict_rows(rows, offset)`` on the complete new rows, NaN on the others.

    R's na.exclude: a new row missing a value in one of ``spec.drop_columns`` gets a
    NaN prediction; the rows keep their order and number.

    Parameters
    ----------
    spec : DesignSpec
        The model's design recipe.
    newdata : DataFrame or mapping
        New rows.
    offset : array-like of shape (n,) or None
        Extra offset of the new rows (cut to the complete rows).
    missing : {None, "nan", "error"}
        ``"error"``: no NaN rows, the replay raises naming the column.
    predict_rows : callable
        ``predict_rows(rows, offset)`` returning an array or a DataFrame.

    Returns
    -------
    ndarray or DataFrame
        One entry (row) per new row.
    """
    na = _incomplete_rows(spec, newdata, missing)
    if na is None:
        return predict_rows(newdata, offset)
    frame = as_frame(newdata)
    keep = ~na
    if offset is not None:
        offset = check_offset(offset, len(frame), rows_of="the data")[keep]
    if not keep.any():
        out = predict_rows(frame.iloc[:1], None if offset is None else offset[:1])
    else:
        out = predict_rows(frame.iloc[np.flatnonzero(keep)], offset)
    if isinstance(out, pd.DataFrame):
        full = pd.DataFrame(np.nan, index=range(len(frame)), columns=out.columns)
        if keep.any():
            full.iloc[np.flatnonzero(keep)] = out.to_numpy()
        return full
    full = np.full(len(frame), np.nan)
    if keep.any():
        full[keep] = out
    return full


def _explicit_missing(expr: str) -> Any:
    """The ``missing=`` a ``bin()``/``C()`` call gives itself (keyword or position)."""
    try:
        node = ast.parse(sanitize_variable_names(expr, {}, {}), mode="eval").body
    except SyntaxError:
        return None
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
        return None
    for kw in node.keywords:
        if kw.arg == "missing" and isinstance(kw.value, ast.Constant):
            return kw.value.value
    position = {"bin": 2, "C": 3, "ordered": 2}.get(node.func.id)
    if position is not None and len(node.args) > position:
        arg = node.args[position]
        return arg.value if isinstance(arg, ast.Constant) else None
    return None


def missing_plan(
    formula: str, data: Any, missing: str = "error", exclude_columns: Any = ()
) -> tuple[list[str], list[str]]:
    """The columns whose missing values drop a row (``missing="drop"``, R's na.omit).

    A ``bin()``/``C()`` term drops the rows where its column is missing when it says
    ``missing="drop"`` itself, or when it says nothing and the model's ``missing`` is
    ``"drop"`` (a term's own ``missing="separate"`` keeps them as a level); every other
    term, the response, and the weight/offset columns follow the model's ``missing``.

    Parameters
    ----------
    formula : str
        The formula.
    data : DataFrame
        Training data.
    missing : {"error", "separate", "drop"}, default="error"
        The model's policy.
    exclude_columns : sequence of str, default=()
        Columns ``.`` does not expand to (the weight and offset columns).

    Returns
    -------
    lhs : list of str
        Columns of the response whose missing values drop a row.
    rhs : list of str
        Columns of the right-hand side whose missing values drop a row; new rows
        missing one of them get a NaN prediction.
    """
    data = as_frame(data)
    try:
        text = expand_dot(formula, data, exclude_columns)
        source, aliases, _ = alias_names(text, data.columns)
        parsed = Formula(source)
    except (FormulaicError, SyntaxError, ValueError, TypeError):
        return [], []  # build_design reports the problem
    if not hasattr(parsed, "lhs"):
        return [], []
    columns = set(map(str, data.columns))
    lhs = sorted(required_columns(parsed, "lhs", aliases)) if missing == "drop" else []
    rhs: set[str] = set()
    for term in parsed.rhs:
        for factor in term.factors:
            try:
                call = _top_call(factor.expr)
            except ValueError:
                return [], []
            policy = missing
            if call in ("bin", "C", "ordered"):
                own = _explicit_missing(factor.expr)
                policy = own if isinstance(own, str) else missing
            if policy == "drop":
                rhs |= _factor_columns(factor, aliases)
    return [c for c in lhs if c in columns], sorted(c for c in rhs if c in columns)
