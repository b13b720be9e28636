"""The left-hand side of a formula: a numeric, boolean or two-level factor response,
``cbind(successes, failures)`` counts or a ``Surv(time, event)`` survival response.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from formulaic import model_matrix
from formulaic.errors import FormulaicError
from formulaic.utils.code import sanitize_variable_names

from ..core._validation import as_real_array
from ._columns import FORMULAIC_LOCK
from ._names import unwrap
from ._transforms import cbind

__all__ = [
    "Response",
]


@dataclass(frozen=True)
class Response:
    """What the left-hand side of the formula is.

    Parameters
    ----------
    name : str
        The left-hand side, e.g. ``"y"`` or ``"I(affairs > 0)"``.
    kind : {"numeric", "boolean", "factor", "counts", "survival"}
        How ``y`` was read (``"counts"``: ``cbind(successes, failures)``, y the
        proportion of successes, the trials multiplying the weights; ``"survival"``:
        ``Surv(time, event)``, y the packed response of ``_cox.encode``).
    event : str or None
        For a two-level factor (binomial): the level counted as 1 (the second level,
        as in R); for a boolean: ``"True"``; for a survival response ``"event"``, or
        ``"2"`` when the status was given in R's 1 = censored / 2 = event coding.
    levels : tuple or None
        Both levels of a factor response (R's status coding: ``("1", "2")``).
    """

    name: str
    kind: str
    event: str | None = None
    levels: tuple | None = None

    def describe(self) -> str:
        """One line for the summary, e.g. ``sex == 'm'``.

        Returns
        -------
        str
            The response, with its event level for a factor.
        """
        if self.kind == "factor":
            return f"{self.name} == {self.event!r}"
        return self.name


def _is_survival(family: Any) -> bool:
    from ..families._families import get_family

    return bool(getattr(get_family(family), "survival", False))


def _cbind_trials(
    lhs: str, data: pd.DataFrame, aliases: Mapping[str, str] | None, formula: str
) -> np.ndarray | None:
    """successes + failures of a ``cbind(successes, failures)`` response (else None)."""
    if not lhs.replace(" ", "").startswith("cbind("):
        return None
    try:
        with FORMULAIC_LOCK:
            counts = model_matrix(
                f"{lhs} ~ 1", data, context={"cbind": cbind}, na_action="ignore"
            ).lhs.to_numpy(dtype=np.float64)
    except FormulaicError as exc:
        raise unwrap(exc, aliases, formula) from exc
    if counts.ndim != 2 or counts.shape[1] != 2:
        return None  # a cbind() nested in an expression: read as any other response
    total = counts.sum(axis=1)
    return np.where(np.isfinite(total) & (total > 0), total, 0.0)


def _is_logical(expr: str) -> bool:
    """Whether a response expression is a comparison (``I(affairs > 0)``)."""
    try:
        node = ast.parse(sanitize_variable_names(expr, {}, {}), mode="eval")
    except SyntaxError:
        return False
    return any(isinstance(n, (ast.Compare, ast.BoolOp)) for n in ast.walk(node))


def read_response(
    lhs: pd.DataFrame, name: str, family: Any, data: pd.DataFrame
) -> tuple[np.ndarray, Response, np.ndarray | None]:
    """The response as float64, how it was read (numeric, boolean, 2-level factor,
    ``cbind`` counts) and the binomial trials of a ``cbind`` response (else None)."""
    from ..families._families import get_family

    family = get_family(family)
    fam = family.label
    cols = list(lhs.columns)
    survival = (
        len(cols) == 2 and cols[0].endswith("[time]") and cols[1].endswith("[event]")
    )
    if survival != bool(getattr(family, "survival", False)):
        raise ValueError(
            f"response '{name}': Surv(time, event) is the response of family='cox'; "
            f"family={fam!r} needs another response."
            if survival
            else f"family={fam!r} needs a survival response Surv(time, event); got '{name}'."
        )
    if survival:
        from ..families._cox import encode, read_status

        values = lhs.to_numpy(dtype=np.float64)
        if not np.all(np.isfinite(values)):
            raise ValueError(f"response '{name}' contains missing or infinite values.")
        try:
            values[:, 1], r_coding = read_status(values[:, 1])  # R's 1/2 coding as R reads it
            y = encode(values[:, 0], values[:, 1])
        except ValueError as exc:
            raise ValueError(f"response '{name}': {exc}") from None
        resp = Response(name=name, kind="survival", event="2" if r_coding else "event",
                        levels=("1", "2") if r_coding else None)  # fmt: skip
        return y, resp, values  # build_design keeps the times and events (0/1)
    if len(cols) == 2 and cols[0].endswith("[successes]") and cols[1].endswith("[failures]"):
        if not family.binary:
            raise ValueError(
                f"response '{name}': cbind(successes, failures) is a binomial response; "
                f"family={fam!r} needs one numeric column."
            )
        counts = lhs.to_numpy(dtype=np.float64)
        if not np.all(np.isfinite(counts)):
            raise ValueError(f"response '{name}' contains missing or infinite counts.")
        if np.any(counts < 0):
            raise ValueError(f"response '{name}' contains negative counts.")
        trials = counts.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            y = np.where(trials > 0, counts[:, 0] / np.where(trials > 0, trials, 1.0), 0.0)
        return y, Response(name=name, kind="counts", event="successes"), trials
    spec = lhs.model_spec
    enc = spec.encoder_state or {}
    categorical = any(getattr(k, "value", k) == "categorical" for k, _ in enc.values())
    if categorical:
        (kind, state), *_ = enc.values()
        levels = list(state.get("categories", [c.split("[", 1)[-1][:-1] for c in cols]))
        if len(levels) != 2 or not family.binary:
            what = (
                f"{fam} needs exactly two levels"
                if family.binary
                else (f"family={fam!r} needs a numeric response")
            )
            raise ValueError(
                f"response '{name}' is categorical with {len(levels)} level(s) "
                f"{[str(v) for v in levels][:10]}; {what}."
            )
        values = lhs.to_numpy(dtype=np.float64)
        if not np.all(values.sum(axis=1) == 1):
            raise ValueError(f"response '{name}' contains missing values.")
        y = values[:, -1].copy()
        resp = Response(name=name, kind="factor", event=str(levels[1]), levels=tuple(levels))
        return y, resp, None
    if len(cols) != 1:
        raise ValueError(f"the response must be one column; '{name}' gives {len(cols)}.")
    col = lhs[cols[0]]
    raw_bool = name in data.columns and pd.api.types.is_bool_dtype(data[name].dtype)
    kind = "boolean" if raw_bool or _is_logical(name) else "numeric"
    y = as_real_array(col, f"response '{name}'")  # complex refused, not truncated
    if not np.all(np.isfinite(y)):
        raise ValueError(f"response '{name}' (y) contains missing or infinite values.")
    event = "True" if kind == "boolean" else None
    return _frame_column(y, name, data), Response(name=name, kind=kind, event=event), None


def _frame_column(y: np.ndarray, name: str, data: pd.DataFrame) -> np.ndarray:
    """``y`` as a read-only view of the data's column ``name`` when that holds its bits.

    A response that is a float64 column of the frame as it is (``y ~ ...``) is read in
    place rather than kept as formulaic's copy: a row vector fewer while the model
    lives (the frame is the caller's, and the model keeps it for column names given
    later). Anything else (an expression, another dtype, a strided column) keeps ``y``.
    """
    if name not in data.columns or not isinstance(data[name], pd.Series):
        return y
    column = data[name]
    if column.dtype != np.float64:
        return y
    values = column.to_numpy(copy=False)
    if (
        values.dtype != np.float64 or values.ndim != 1 or not values.flags.c_contiguous
        or values.shape != y.shape or not np.array_equal(values, y)
    ):  # fmt: skip
        return y
    view = values.view()
    view.flags.writeable = False  # the model never writes y; the frame's bits stay
    return view
