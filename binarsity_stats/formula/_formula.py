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
  rewrite happens in :func:`_rewrite_rhs` (``_by_plan``); the learned levels of g are in
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
"""

from __future__ import annotations

import ast
import difflib
import keyword
import math
import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from formulaic import Formula, model_matrix
from formulaic.errors import FormulaicError
from formulaic.transforms import TRANSFORMS
from formulaic.utils.code import format_expr, sanitize_variable_names
from formulaic.utils.stateful_transforms import stateful_transform

from ..design._binarizer import BinarizerCore, bin_codes, is_datetime_like, level_codes
from ..core._validation import (
    as_real_array,
    check_min_bin_count,
    check_monotone,
    check_n_bins,
    check_offset,
    check_sample_weight,
    check_unique_names,
    code_dtype,
)

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
    "transform_context",
    "format_cut",
    "format_value",
    "interval_label",
]

#: Marker written into the transform state of our stateful transforms.
_MARK = "__binarsity__"
#: The transform names this package owns inside formulas.
_OWN = ("bin", "C", "ordered", "offset")
#: Other names this package gives formulas (checked as calls, never data columns).
_HELPERS = ("Treatment", "cbind", "Surv")
_MISSING_POLICIES = ("error", "separate", "drop")


# ---------------------------------------------------------------------------------------
# Helpers shared by the transforms
# ---------------------------------------------------------------------------------------


def _column_name(data: Any) -> str:
    """Best-effort name of the data handed to a transform (for error messages)."""
    name = getattr(data, "name", None)
    return str(name) if name is not None else "<expression>"


def _as_float(data: Any, name: str, what: str, hint: str | None = None) -> np.ndarray:
    """Return ``data`` as float64, refusing non-numeric columns with a clear message.

    Real numbers and booleans (NumPy or pandas nullable, ``pd.NA`` read as NaN) only:
    text, categories, dates and complex numbers raise a TypeError naming the column,
    followed by ``hint`` (by default: use ``C(name)`` for a categorical).
    """
    if isinstance(data, pd.Series):
        dtype = data.dtype
        real = pd.api.types.is_numeric_dtype(dtype) and getattr(dtype, "kind", "O") != "c"
        if pd.api.types.is_bool_dtype(dtype) or real:
            return data.to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        data = np.asarray(data)
        dtype = data.dtype
        if dtype.kind in "biuf":
            return data.astype(np.float64, copy=False).ravel()
    if isinstance(dtype, np.dtype) and dtype.kind == "O":
        # an object column of real numbers (None/NaN/pd.NA missing) reads as the
        # estimators read one; text in it falls through to the error below
        try:
            return as_real_array(np.asarray(data, dtype=object), name).ravel()
        except TypeError:
            pass
    hint = f"Use C({name}) for a categorical variable." if hint is None else hint
    raise TypeError(f"{what} needs a numeric column; column '{name}' has dtype {dtype}. {hint}")


def did_you_mean(names: Any, choices: Any) -> str:
    """`` Did you mean 'age'?`` for names close to some of ``choices`` (else "").

    Parameters
    ----------
    names : str or list of str
        The names not found.
    choices : iterable
        The names available (non-strings are ignored).

    Returns
    -------
    str
        A sentence to append to an error message, starting with a space, or "".
    """
    names = [names] if isinstance(names, str) else list(names)
    pool = [str(c) for c in choices]
    hints = []
    for name in names:
        close = difflib.get_close_matches(str(name), pool, n=3, cutoff=0.6)
        if not close:  # a different case is the commonest slip: Age for age
            close = [c for c in pool if c.lower() == str(name).lower()]
        if close:
            shown = " or ".join(repr(c) for c in close)
            hints.append(f"{shown} for {name!r}" if len(names) > 1 else shown)
    return f" Did you mean {'; '.join(hints)}?" if hints else ""


def _column_or_array(value: Any, data, name: str, n: int) -> tuple[np.ndarray | None, str | None]:
    """An (n,) finite float array from an array-like or a column name of ``data``.

    Used for ``sample_weight`` and ``offset`` at fit time and for an offset column at
    predict time; errors name the argument and, for a column, the column.
    """
    if value is None:
        return None, None
    column, what = None, name
    if isinstance(value, str):
        if value not in data.columns:
            raise ValueError(
                f"{name}={value!r} is not a column of the data."
                + did_you_mean(value, data.columns)
            )
        column, what = value, f"{name} (column '{value}')"
        value = _as_float(data[value], value, f"{name}={value!r}", "Convert it to numbers first.")
    check = check_sample_weight if name == "sample_weight" else check_offset
    return check(value, n, rows_of="the data", name=what), column


def format_cut(value: float) -> str:
    """Short, readable form of a cut point: ``38.0``, ``0.125``, ``-inf``.

    Parameters
    ----------
    value : float
        A cut point.

    Returns
    -------
    str
        At most six significant digits, always with a decimal point.
    """
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return np.format_float_positional(float(value), precision=6, unique=True, trim="0")


def format_value(value: float, precision: int | None = None) -> str:
    """A number as shown in an interval label: ``38``, ``0.125``, ``-inf``, ``1.5e+09``.

    Parameters
    ----------
    value : float
        A cut point or a training value.
    precision : int, optional
        Significant digits (default 6); trailing zeros and a bare decimal point are
        dropped.

    Returns
    -------
    str
        The shortest form of ``value`` rounded to ``precision`` significant digits.
    """
    digits = _check_precision(precision)
    v = float(value)
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if v == 0:
        return "0"
    if 1e-4 <= abs(v) < 10.0 ** max(digits, 6):
        return np.format_float_positional(v, precision=digits, unique=True, fractional=False,
                                          trim="-")  # fmt: skip
    return np.format_float_scientific(v, precision=digits - 1, unique=True, trim="-")


def _check_precision(precision: Any) -> int:
    if precision is None:
        return 6
    if isinstance(precision, bool) or not isinstance(precision, (int, np.integer)):
        raise TypeError(f"precision must be an integer >= 1; got {precision!r}.")
    if not 1 <= precision <= 17:
        raise ValueError(f"precision must be between 1 and 17; got {precision}.")
    return int(precision)


def interval_label(
    low: float, high: float, single: float | None = None, precision: int | None = None
) -> str:
    """Right-closed interval label of a bin: ``(-inf, 1]``, ``(1, 2]``, ``(4, inf]``.

    A bin holds the values x with low < x ≤ high (codes are
    ``searchsorted(edges, x, side="left")``). When it held one distinct training value,
    the label is that value: ``= 5``.

    Parameters
    ----------
    low, high : float
        The bounds; the end bins reach ±inf.
    single : float, optional
        The one distinct training value of the bin, if it had exactly one.
    precision : int, optional
        Significant digits of the numbers (default 6).

    Returns
    -------
    str
        The label.
    """
    if single is not None and not math.isnan(single):
        return f"= {format_value(single, precision)}"
    return f"({format_value(low, precision)}, {format_value(high, precision)}]"


def _distinct_per_bin(
    x: np.ndarray, codes: np.ndarray, n_chain: int
) -> tuple[list[int], list[float]]:
    """Per chain level: the number of distinct training values (capped at 2) and, when
    there is exactly one, that value (NaN otherwise). O(n): each level is compared with
    one of its own values."""
    inside = codes < n_chain  # a missing level (NaN rows) is outside the chain
    c = codes[inside].astype(np.intp)
    v = x[inside]
    count = np.bincount(c, minlength=n_chain)
    ref = np.zeros(n_chain)
    ref[c] = v
    differ = np.bincount(c, weights=v != ref[c], minlength=n_chain)
    distinct = np.where(count == 0, 0, np.where(differ == 0, 1, 2))
    single = np.where(distinct == 1, ref, np.nan)
    return [int(k) for k in distinct], [float(u) for u in single]


def _level_label(level: Any) -> str:
    if isinstance(level, float) and level.is_integer():
        return format_cut(level)
    return str(level)


# ---------------------------------------------------------------------------------------
# The transforms
# ---------------------------------------------------------------------------------------


def _make_bin(default_n_bins: int, default_missing: str, sample_weight: np.ndarray | None):
    """Create the ``bin`` stateful transform for one materialisation.

    The defaults only matter when the state is learned; a replay reads everything it
    needs from ``_state``.
    """

    @stateful_transform
    def bin(  # noqa: A001
        data, n_bins=None, missing=None, min_count=1, by=None, by_levels=None, _main=False,
        monotone=None, _state=None,
    ):  # fmt: skip
        """Bin codes of a numeric variable under learned quantile cut points.

        With ``by`` (a column of groups; ``bin(x):C(g)`` is rewritten to it), the codes
        are those of one chain per level of the group over the same cut points.
        ``monotone="increasing"|"decreasing"`` asks for a monotone chain (its block's kind
        in the engine, design.md §7); it changes no code (with ``by``, each level's chain
        is monotone: the breaks between levels are not ordered).
        """
        name = _column_name(data)
        x = _as_float(data, name, "bin()")
        if _state is None:  # pragma: no cover - formulaic always passes a dict
            _state = {}
        if "edges" not in _state:
            n_bins = default_n_bins if n_bins is None else n_bins
            missing = default_missing if missing is None else missing
            if by is not None and missing == "separate" and np.any(np.isnan(x)):
                raise ValueError(
                    f"column '{name}' contains missing values; a by-group term "
                    f"bin({name}):C({_column_name(by)}) has no missing level (use "
                    "missing='drop')."
                )
            _validate_n_bins(n_bins, f"bin({name})", missing)
            _check_missing_policy(missing, f"bin({name})")
            _check_values(x, name, missing)
            min_count = check_min_bin_count(min_count, f"min_count in bin({name})")
            monotone = check_monotone(monotone, f"monotone in bin({name})")
            edges, has_missing = _learn_edges(x, n_bins, missing, sample_weight, name, min_count)
            _state.update(
                {
                    _MARK: "bin",
                    "edges": edges,
                    "n_bins": int(n_bins),
                    "min_count": min_count,
                    "monotone": monotone,
                    "missing": missing,
                    "has_missing_level": bool(has_missing),
                    "column": name,
                    "data_min": float(np.nanmin(x)),
                    "data_max": float(np.nanmax(x)),
                }
            )
            codes = _replay_bin(x, _state, name)
            counts, singles = _distinct_per_bin(x, codes, len(edges) + 1)
            _state.update({"distinct": counts, "single_values": singles})
            if by is not None:
                _state["by"] = _learn_by(by, by_levels, bool(_main), name, len(edges) + 1)
                return _by_codes(codes, by, _state["by"], len(edges) + 1)
            return codes
        codes = _replay_bin(x, _state, name)
        if "by" in _state:
            return _by_codes(codes, by, _state["by"], len(_state["edges"]) + 1)
        return codes

    return bin


def _learn_by(by: Any, levels: Any, main: bool, name: str, d: int) -> dict[str, Any]:
    """The levels of a by-group column (varying coefficients ``bin(x):C(g)``)."""
    gname = _column_name(by)
    values = pd.Series(np.asarray(by, dtype=object) if not isinstance(by, pd.Series) else by)
    isna = values.isna().to_numpy()
    if isna.any():
        raise ValueError(
            f"column '{gname}' contains missing values; the by-group term "
            f"bin({name}):C({gname}) has no missing level (use missing='drop')."
        )
    if levels is not None:
        learned = list(levels)
    elif isinstance(values.dtype, pd.CategoricalDtype):
        learned = list(values.cat.categories)
    else:
        learned = sorted(pd.unique(values).tolist(), key=_sort_key)
    if not learned:
        raise ValueError(f"column '{gname}' has no values.")
    if len(set(map(repr, learned))) != len(learned):
        raise ValueError(f"by_levels of bin({name}):C({gname}) repeats a level.")
    n_levels = (1 + (len(learned) - 1) * d) if main else len(learned) * d
    code_dtype(n_levels)  # refuses a block beyond the uint16 codes
    return {"column": gname, "levels": learned, "main": main}


def _by_codes(codes: np.ndarray, by: Any, state: Mapping[str, Any], d: int) -> np.ndarray:
    """Codes of one chain per group level: level index · d + bin code.

    With a main ``bin(x)`` term of the same x (``state["main"]``), the reference (first)
    level's rows share code 0 and the other levels' chains follow (their levels are the
    deviations from the reference level's shape).
    """
    gname = state["column"]
    if by is None:
        raise ValueError(f"the by-group term needs the column '{gname}'.")
    values = pd.Series(np.asarray(by, dtype=object) if not isinstance(by, pd.Series) else by)
    isna = values.isna().to_numpy()
    levels = state["levels"]
    g = np.empty(len(values), dtype=np.intp)
    level_codes(values.tolist(), isna, levels, False, gname, g)
    c = codes.astype(np.intp)
    if state["main"]:
        out = np.where(g == 0, 0, 1 + (g - 1) * d + c)
        n_levels = 1 + (len(levels) - 1) * d
    else:
        out = g * d + c
        n_levels = len(levels) * d
    return out.astype(code_dtype(n_levels))


def _validate_n_bins(n_bins: Any, where: str, missing: Any = "error") -> None:
    check_n_bins(n_bins, "n_bins", missing if missing == "separate" else "error", f" in {where}")


def _check_values(x: np.ndarray, name: str, missing: str) -> None:
    if np.any(np.isinf(x)):
        raise ValueError(f"column '{name}' contains infinite values.")
    if missing != "separate" and np.any(np.isnan(x)):
        raise ValueError(_missing_message(name))


def _missing_message(name: str) -> str:
    return (
        f"column '{name}' contains missing values (NaN); pass missing='separate' to give "
        "them their own level, or missing='drop' to drop those rows (R's na.omit)."
    )


def _learn_edges(
    x: np.ndarray,
    n_bins: int,
    missing: str,
    sample_weight: np.ndarray | None,
    name: str,
    min_count: int = 1,
) -> tuple[np.ndarray, bool]:
    """Learn one feature's interior cut points with the engine's Binarizer."""
    if x.size == 0:
        raise ValueError(f"column '{name}' has no rows.")
    if np.all(np.isnan(x)):
        raise ValueError(f"column '{name}' has only missing values.")
    policy = "separate" if missing == "separate" else "error"
    binarizer = BinarizerCore(
        n_bins=int(n_bins), method="quantile", missing=policy, min_bin_count=min_count
    )
    binarizer.fit(pd.DataFrame({name: x}), sample_weight=sample_weight)
    edges = np.asarray(binarizer.edges_[0], dtype=np.float64)
    has_missing = bool(binarizer.has_missing_level_[0])
    return edges, has_missing


def _replay_bin(x: np.ndarray, state: Mapping[str, Any], name: str) -> np.ndarray:
    """Apply learned cut points with the Binarizer's coding rule (right-closed bins)."""
    has_missing = bool(state["has_missing_level"])
    edges = np.asarray(state["edges"], dtype=np.float64)
    codes, bad = bin_codes(x, edges, has_missing)
    if bad >= 0:
        if not has_missing and np.any(np.isnan(x)):
            if state.get("missing") == "drop":
                raise ValueError(_dropped_message(name))
            raise ValueError(
                f"column '{name}' contains missing values (NaN) but the model has no "
                "missing level for it (fit with missing='separate' on data with NaN)."
            )
        raise ValueError(f"column '{name}' contains infinite values.")
    return codes


class Treatment:
    """Treatment (reference) coding of a ``C()`` term: ``C(x, Treatment("b"))``.

    As in patsy (``Treatment(reference=...)``) and formulaic (``Treatment(base=...)``):
    the level every other level is compared with in the reference-coded table
    (:meth:`BinarsityResults.categorical_effects` and the summary). It changes that
    table only, never the fit: a ``C()`` term is an unpenalised block whose levels are
    identified by a weighted sum-to-zero constraint, and the differences
    θ_k − θ_ref are the same under any coding.

    Parameters
    ----------
    reference : level, optional
        The reference level (a value of the column; an integer that is not a level is
        read as a position, as patsy does). Default: the first level.
    base : level, optional
        formulaic's name for ``reference``.
    """

    def __init__(self, reference: Any = None, base: Any = None) -> None:
        if reference is not None and base is not None:
            raise ValueError("Treatment() takes reference or base, not both.")
        self.reference = base if reference is None else reference

    def __repr__(self) -> str:
        return f"Treatment({self.reference!r})"


def _reference_of(contr: Any, name: str) -> tuple[bool, Any]:
    """(given, level) of a C() contrast argument; only treatment coding is accepted."""
    if contr is None:
        return False, None
    if isinstance(contr, Treatment):
        return contr.reference is not None, contr.reference
    from formulaic.transforms.contrasts import TreatmentContrasts

    if isinstance(contr, TreatmentContrasts):  # formulaic's Treatment / contr.treatment
        from formulaic.utils.sentinels import UNSET

        given = contr.base is not UNSET
        return given, contr.base if given else None
    raise ValueError(
        f"C({name}, {contr!r}): only treatment coding is supported, e.g. "
        f"C({name}, Treatment('level')); a C() term is an unpenalised block identified by a "
        "weighted sum-to-zero constraint, and Treatment() only picks the reference level of "
        "the reference-coded table."
    )


def _resolve_reference(reference: Any, learned: list, name: str) -> Any:
    """The reference level among the learned levels (a value, or patsy's position)."""
    for level in learned:
        try:
            if level == reference or str(level) == str(reference):
                return level
        except (TypeError, ValueError):  # pragma: no cover - exotic level types
            continue
    if isinstance(reference, (int, np.integer)) and not isinstance(reference, bool):
        if -len(learned) <= int(reference) < len(learned):
            return learned[int(reference)]
    shown = [str(v) for v in learned][:10]
    raise ValueError(
        f"C({name}, Treatment({reference!r})): {reference!r} is not a level of column "
        f"'{name}'; its levels are {shown}{'...' if len(learned) > 10 else ''}."
    )


def _check_missing_policy(missing: Any, call: str) -> None:
    """Refuse a ``missing=`` that is not one of the policies, naming the term ``call``."""
    if not isinstance(missing, str) or missing not in _MISSING_POLICIES:
        raise ValueError(f"missing must be one of {_MISSING_POLICIES}; got {missing!r} in {call}.")


def _factor_values(data: Any) -> tuple[pd.Series, np.ndarray]:
    """A factor's values as a Series (object dtype unless already a Series) and its NaN mask.

    Dates and times (any unit, tz-aware too) become their ISO 8601 text
    (:func:`~binarsity_stats.design._binarizer.date_levels`): a ``datetime64[ns]`` array turned
    into objects would give nanosecond integers. Durations become ``Timedelta`` objects.
    """
    if not isinstance(data, pd.Series) and getattr(data, "dtype", None) is not None \
            and getattr(data.dtype, "kind", "O") in "mM":  # fmt: skip
        data = pd.Series(data)
    if isinstance(data, pd.Series) and getattr(data.dtype, "kind", "O") == "M":
        from ..design._binarizer import date_levels

        data = date_levels(data)
    elif isinstance(data, pd.Series) and getattr(data.dtype, "kind", "O") == "m":
        data = data.astype(object)  # Timedelta objects (NaT stays missing)
    values = pd.Series(np.asarray(data, dtype=object) if not isinstance(data, pd.Series) else data)
    return values, values.isna().to_numpy()


def _observed_levels(values: pd.Series, isna: np.ndarray) -> list:
    """A factor's levels when none are given: a categorical's categories, else the sorted
    distinct non-missing values."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        return list(values.cat.categories)
    return sorted(pd.unique(values[~isna]).tolist(), key=_sort_key)


def _make_categorical(default_missing: str):
    """Create the ``C`` stateful transform (category codes, levels learned once)."""

    @stateful_transform
    def C(data, contr=None, levels=None, missing=None, _state=None):  # noqa: N802 - formula name
        """Category codes of a variable; an unpenalised block of the binarsity design."""
        name = _column_name(data)
        given, reference = _reference_of(contr, name)
        values, isna = _factor_values(data)
        if _state is None:  # pragma: no cover - formulaic always passes a dict
            _state = {}
        if "levels" not in _state:
            missing = default_missing if missing is None else missing
            _check_missing_policy(missing, f"C({name})")
            if levels is not None:
                learned = list(levels)
            else:
                learned = _observed_levels(values, isna)
            if not learned:
                raise ValueError(f"column '{name}' has no non-missing values.")
            if isna.any() and missing != "separate":
                raise ValueError(_missing_message(name))
            ref = _resolve_reference(reference, learned, name) if given else None
            _state.update(
                {
                    _MARK: "C",
                    "levels": learned,
                    "has_missing_level": bool(isna.any()),
                    "column": name,
                    "missing": missing,
                }
            )
            if given:
                _state["reference"] = ref
        return _replay_categorical(values, isna, _state, name)

    return C


def _make_ordered(default_missing: str):
    """Create the ``ordered`` stateful transform (an ordered factor: a TV chain)."""

    @stateful_transform
    def ordered(data, levels=None, missing=None, monotone=None, _state=None):
        """Codes of an ordered factor: the position of each value in ``levels``.

        The block is a TV chain over the levels in their order (a rating AAA…D fuses
        neighbouring levels). ``levels`` defaults to the categories of a pandas
        categorical column, else the sorted distinct values; a training value outside
        ``levels`` and an unseen value on new data are refused by name. ``monotone``
        ("increasing" | "decreasing") orders the levels' effects (a monotone chain).
        """
        name = _column_name(data)
        values, isna = _factor_values(data)
        if _state is None:  # pragma: no cover - formulaic always passes a dict
            _state = {}
        if "levels" not in _state:
            missing = default_missing if missing is None else missing
            _check_missing_policy(missing, f"ordered({name})")
            if levels is not None:
                if isinstance(levels, str) or not hasattr(levels, "__iter__"):
                    raise TypeError(f"levels of ordered({name}) must be a list of values.")
                learned = list(levels)
                if len(set(map(repr, learned))) != len(learned):
                    raise ValueError(f"levels of ordered({name}) repeat a value.")
            else:
                learned = _observed_levels(values, isna)
            if len(learned) < 2:
                raise ValueError(f"ordered({name}) needs at least two levels.")
            monotone = check_monotone(monotone, f"monotone in ordered({name})")
            if isna.any() and missing != "separate":
                raise ValueError(_missing_message(name))
            _state.update(
                {
                    _MARK: "ordered",
                    "monotone": monotone,
                    "levels": learned,
                    "has_missing_level": bool(isna.any()),
                    "column": name,
                    "missing": missing,
                }
            )
        return _replay_categorical(values, isna, _state, name)

    return ordered


def _as_ordered(expr: str) -> str | None:
    """``bin(C(x, levels=[...]))`` written as ``ordered(x, levels=[...])`` (else None)."""
    text = expr.strip()
    if not (text.startswith("bin(") and text.endswith(")")):
        return None
    pos, kw = _call_args(text)
    if len(pos) != 1 or kw or not pos[0].startswith("C(") or not pos[0].endswith(")"):
        return None
    inner_pos, inner_kw = _call_args(pos[0])
    if len(inner_pos) != 1 or set(inner_kw) - {"levels", "missing"}:
        raise ValueError(
            f"'{expr}': an ordered factor bin(C(x, levels=[...])) takes levels= and "
            "missing= only."
        )
    return "ordered(" + pos[0][2:]


def _sort_key(v: Any) -> tuple:
    # numbers before strings, each in natural order (mixed types cannot be compared)
    return (0, v, "") if isinstance(v, (int, float, np.number)) else (1, 0, str(v))


def _dropped_message(name: str) -> str:
    return (
        f"column '{name}' contains missing values; the model dropped such rows at fit "
        "(missing='drop'): predict(..., missing='nan') gives NaN for them."
    )


def _replay_categorical(
    values: pd.Series, isna: np.ndarray, state: Mapping[str, Any], name: str
) -> np.ndarray:
    if state.get("missing") == "drop" and not state["has_missing_level"] and isna.any():
        raise ValueError(_dropped_message(name))
    levels = state["levels"]
    n_levels = len(levels) + int(state["has_missing_level"])
    codes = np.empty(len(values), dtype=code_dtype(n_levels))
    return level_codes(values.tolist(), isna, levels, state["has_missing_level"], name, codes)


@stateful_transform
def offset(data: Any, _state: dict | None = None) -> np.ndarray:
    """An offset term: ``expr`` enters the linear predictor with coefficient one."""
    name = _column_name(data)
    x = _as_float(data, name, "offset()")
    if _state is not None:
        _state[_MARK] = "offset"
    return x


def cbind(successes: Any, failures: Any) -> pd.DataFrame:
    """R's two-column binomial response: ``cbind(successes, failures) ~ ...``.

    The model reads it as the proportion successes / (successes + failures) with the
    trials successes + failures as weights (multiplying any ``sample_weight``), as R's
    ``glm`` and statsmodels' GLM with a two-column response do.

    Parameters
    ----------
    successes, failures : array-like of shape (n,)
        Non-negative counts.

    Returns
    -------
    DataFrame
        Columns ``successes`` and ``failures`` (float).
    """
    out = {}
    for what, value in (("successes", successes), ("failures", failures)):
        name = _column_name(value)
        out[what] = _as_float(value, name, f"cbind() {what}", "Give counts.")
    return pd.DataFrame(out)


def Surv(time: Any, event: Any) -> pd.DataFrame:  # noqa: N802 (R's name)
    """R's survival response: ``Surv(time, event) ~ ...`` with ``family="cox"``.

    Parameters
    ----------
    time : array-like of shape (n,)
        Follow-up times (non-negative).
    event : array-like of shape (n,)
        The status, read as R's ``survival::Surv`` reads it: 1 or True for an observed
        event, 0 or False for a censored time; or, when its largest value is 2, R's
        other coding 2 = event, 1 = censored (as in ``survival::lung``; the summary
        notes it). Other values are refused.

    Returns
    -------
    DataFrame
        Columns ``time`` and ``event`` (float; ``event`` as given, the model reads
        the coding).
    """
    out = {}
    for what, value in (("time", time), ("event", event)):
        name = _column_name(value)
        out[what] = _as_float(value, name, f"Surv() {what}", "Give numbers.")
    return pd.DataFrame(out)


def transform_context(
    n_bins: int = 50, missing: str = "error", sample_weight: np.ndarray | None = None
) -> dict[str, Any]:
    """The transform names this package passes to formulaic.

    Parameters
    ----------
    n_bins : int, default=50
        Bins of a ``bin(x)`` term that does not give its own.
    missing : {"error", "separate"}, default="error"
        Missing-value policy of ``bin()`` and ``C()`` terms.
    sample_weight : ndarray of shape (n,), optional
        Row weights for the weighted quantiles of ``bin()`` (used only when learning).

    Returns
    -------
    dict
        ``{"bin": ..., "C": ..., "offset": ..., "Treatment": ...}``; pass it as
        formulaic's ``context``.
        It always wins over the Python builtin ``bin`` and formulaic's ``C``.
    """
    return {
        "bin": _make_bin(n_bins, missing, sample_weight),
        "C": _make_categorical(missing),
        "ordered": _make_ordered(missing),
        "offset": offset,
        "Treatment": Treatment,
        "cbind": cbind,
        "Surv": Surv,
    }


# ---------------------------------------------------------------------------------------
# Design objects
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Block:
    """One code block of the design: a ``bin()`` or a ``C()`` term.

    Parameters
    ----------
    term : str
        The formula term, e.g. ``"bin(age, 50)"``.
    kind : {"bin", "categorical"}
        A binned (TV-penalised) feature or an unpenalised categorical.
    column : str
        The data column (or expression) the term reads.
    n_levels : int
        Number of codes (including a missing level).
    edges : ndarray or None
        Interior cut points of a ``bin()`` term (levels are ``(edges[k-1], edges[k]]``).
    levels : tuple or None
        Category labels of a ``C()`` term.
    has_missing_level : bool
        Whether the last code is a "missing" level outside the TV chain.
    data_min, data_max : float or None
        Training range of a ``bin()`` term (for plots).
    distinct : tuple of int or None
        Distinct training values in each chain level of a ``bin()`` term, capped at 2
        (None for models saved before it was recorded).
    single_values : tuple of float or None
        The training value of each chain level that held exactly one distinct value
        (NaN for the others); such a level is labelled ``= value``.
    reference : object or None
        The reference level of a ``C(x, Treatment(level))`` term (None: the first
        populated level).
    by : str or None
        The group column of a varying-coefficient term ``bin(x):C(g)``: the block holds
        one chain per level of g over the same cut points, separated by unpenalised
        breaks (see :meth:`chains`).
    by_levels : tuple or None
        The levels of ``by``, in block order.
    ordered : bool
        An ordered factor (``ordered(x, levels=[...])``, kind "categorical"): a TV chain
        over its levels in their order.
    by_main : bool
        Whether the formula has a main ``bin(x)`` term too: the first level of ``by`` is
        then the reference, its rows share one free level (code 0), and the other
        levels' chains are deviations from the main term's shape.
    monotone : {"increasing", "decreasing"} or None
        The order a ``bin(x, monotone=...)`` term's chain is constrained to (None: free).
    """

    term: str
    kind: str
    column: str
    n_levels: int
    edges: np.ndarray | None = None
    levels: tuple | None = None
    has_missing_level: bool = False
    data_min: float | None = None
    data_max: float | None = None
    distinct: tuple | None = None
    single_values: tuple | None = None
    reference: Any = None
    by: str | None = None
    by_levels: tuple | None = None
    by_main: bool = False
    ordered: bool = False
    monotone: str | None = None

    @property
    def chain_length(self) -> int:
        """Number of levels in the ordered (TV) chain: all but a missing level.

        For a by-group term, the levels of the whole block (every chain, see
        :meth:`chains`).
        """
        return self.n_levels - int(self.has_missing_level)

    @property
    def n_bins(self) -> int:
        """Number of intervals of a binned term (one chain's length)."""
        return len(self.edges) + 1 if self.edges is not None else self.chain_length

    def chains(self) -> list[tuple[int, int, Any]]:
        """The chains of the block: ``(first level, number of levels, group level)``.

        A ``bin()`` term has one chain over its intervals (group level None); a by-group
        term ``bin(x):C(g)`` has one per level of g, whose level k is the interval k of
        x on the rows of that group (with a main ``bin(x)``, the reference level's rows
        have one level of their own, returned as a chain of length 1). Levels at chain
        starts carry no penalty weight (breaks); a missing level is in no chain.

        Returns
        -------
        list of tuple
            One ``(first, length, group level)`` per chain, in block order.
        """
        if self.by is None:
            return [(0, self.chain_length, None)]
        d = self.n_bins
        out: list[tuple[int, int, Any]] = []
        first = 0
        for i, lvl in enumerate(self.by_levels):
            if i == 0 and self.by_main:
                out.append((0, 1, lvl))
                first = 1
                continue
            out.append((first, d, lvl))
            first += d
        return out

    def position(self, k: int) -> tuple[int, Any]:
        """Interval index within its chain and group level of block level ``k``.

        Parameters
        ----------
        k : int
            A level of the block.

        Returns
        -------
        tuple
            ``(interval index, group level)`` (group level None for a plain chain).
        """
        for first, m, lvl in self.chains():
            if first <= k < first + m:
                return k - first, lvl
        raise IndexError(k)

    @property
    def penalized(self) -> bool:
        """Whether the block carries the TV penalty (``bin()`` terms, ordered factors)."""
        return self.kind == "bin" or bool(getattr(self, "ordered", False))

    def intervals(self) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper bounds of the chain's levels (right-closed intervals).

        Returns
        -------
        low, high : ndarray of shape (chain_length,)
            Level k holds (low[k], high[k]]; the end levels reach ±inf.
        """
        if self.edges is None:
            raise ValueError(f"{self.term} is not a binned term.")
        lo = np.concatenate([[-np.inf], self.edges])
        hi = np.concatenate([self.edges, [np.inf]])
        return lo, hi

    def segment_label(self, first: int, last: int, precision: int | None = None) -> str:
        """Label of the chain levels ``first..last`` taken together (a merged segment).

        Parameters
        ----------
        first, last : int
            Chain positions, ``first <= last``.
        precision : int, optional
            Significant digits (default 6).

        Returns
        -------
        str
            ``(low, high]`` of the union, or ``= v`` when the training rows in it held
            one distinct value v.
        """
        if self.levels is not None:  # an ordered factor: its levels, first..last
            lab = [_level_label(v) for v in self.levels[first : last + 1]]
            return lab[0] if len(lab) == 1 else f"{lab[0]}..{lab[-1]}"
        if self.by is not None:
            (a, lvl), (b, _) = self.position(first), self.position(last)
            if self.by_main and first == 0:
                return f"{_level_label(lvl)}: reference"
            return f"{_level_label(lvl)}: {self._interval_label(a, b, precision)}"
        return self._interval_label(first, last, precision)

    def bounds(self, k: int) -> tuple[float, float]:
        """The interval (low, high] of block level ``k`` of a binned term.

        Parameters
        ----------
        k : int
            A level of the block.

        Returns
        -------
        tuple of float
            ``(low, high)``; NaN for the reference level of a by-group term.
        """
        if self.edges is None:
            return np.nan, np.nan
        if self.by is not None:
            if self.by_main and k == 0:
                return np.nan, np.nan
            k = self.position(k)[0]
        lo, hi = self.intervals()
        return float(lo[k]), float(hi[k])

    def _interval_label(self, first: int, last: int, precision: int | None = None) -> str:
        lo, hi = self.intervals()
        single = None
        if self.distinct is not None and self.single_values is not None:
            filled = [k for k in range(first, last + 1) if self.distinct[k] > 0]
            if len(filled) == 1 and self.distinct[filled[0]] == 1:
                single = self.single_values[filled[0]]
        return interval_label(lo[first], hi[last], single, precision)

    def level_labels(self, precision: int | None = None) -> list[str]:
        """Readable labels of every level, e.g. ``(38, 41]``, ``= 5`` or ``male``.

        Parameters
        ----------
        precision : int, optional
            Significant digits of interval bounds (default 6).

        Returns
        -------
        list of str
            One label per level, ``"missing"`` for a missing level. A binned level k
            holds the values x with low < x ≤ high: ``(low, high]`` (right-closed, the
            end levels reach ±inf), or ``= v`` when it held one distinct training value.
        """
        if self.kind == "bin":
            labels = [self.segment_label(k, k, precision) for k in range(self.chain_length)]
        else:
            labels = [_level_label(v) for v in self.levels]
        if self.has_missing_level:
            labels.append("missing")
        return labels

    def param_names(self, precision: int | None = None) -> list[str]:
        """Coefficient names, e.g. ``bin(age, 50)[(38, 41]]``, ``C(sex)[male]``.

        Parameters
        ----------
        precision : int, optional
            Significant digits of interval bounds (default 6).

        Returns
        -------
        list of str
            One name per level: the term, then its level label in brackets.
        """
        return [f"{self.term}[{lab}]" for lab in self.level_labels(precision)]


@dataclass
class Design:
    """The numerical design of one data set, in the layout the solver takes.

    Parameters
    ----------
    codes : ndarray of shape (p, n), uint8 or uint16
        Level codes, one C-contiguous row per block.
    block_ptr : ndarray of shape (p + 1,)
        Offsets of the blocks in the concatenated coefficient vector θ.
    dense : ndarray of shape (n, q) or None
        Unpenalised numeric columns.
    offset : ndarray of shape (n,) or None
        Sum of the formula's ``offset()`` terms.
    trials : ndarray of shape (n,) or None
        Binomial trials of a ``cbind(successes, failures)`` response (training only).
    survival : ndarray of shape (n, 2) or None
        Times and event indicators of a ``Surv(time, event)`` response (training only).
    strata : ndarray of shape (n,) or None
        Stratum labels of a ``strata()`` term (training only).
    """

    codes: np.ndarray
    block_ptr: np.ndarray
    dense: np.ndarray | None
    offset: np.ndarray | None
    trials: np.ndarray | None = None
    survival: np.ndarray | None = None
    strata: np.ndarray | None = None

    @property
    def n_obs(self) -> int:
        """Number of rows."""
        return self.codes.shape[1]


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


@dataclass
class DesignSpec:
    """The replayable recipe of a design: formulaic's ``ModelSpec`` plus our blocks.

    Parameters
    ----------
    formula : str
        The formula as written by the user.
    rhs_formula : str
        The right-hand side actually materialised (bare categoricals read as ``C()``).
    model_spec : formulaic.ModelSpec
        formulaic's spec with the learned state of every ``bin()`` and ``C()`` term.
    blocks : list of Block
        Code blocks in the order of θ.
    block_columns : list of str
        formulaic column of each block.
    dense_columns : list of str
        formulaic columns of the dense unpenalised terms.
    offset_columns : list of str
        formulaic columns of the ``offset()`` terms.
    fit_intercept : bool
        Whether the formula has an intercept.
    n_bins, missing : int, str
        Defaults the transforms were created with.
    required : list of str
        Data columns the right-hand side reads (checked before every replay).
    aliases : dict or None
        Identifiers that stand for column names formulaic cannot read as they are
        (Python keywords, columns named like a function the formula calls), mapped to
        the column names; added to the data before every replay.
    shadowed : list of str or None
        Names the formula calls (``bin``, ``C``, ``np``...): data columns of these names
        are left out of the data formulaic sees, so that they do not hide the function.
    strata : list of str or None
        Columns of a ``strata(g)`` term (``family="cox"``: one baseline hazard per
        stratum; the term is not part of the linear predictor).
    drop_columns : list of str or None
        Columns whose missing values dropped a training row (``missing="drop"``); a new
        row missing one of them is predicted as NaN (R's na.exclude).
    column_kinds : dict or None
        Kind of each data column read at fit time (``"bool"``, ``"int"``, ``"float"``...;
        see ``_spec.column_kind``), for the exporters (None: fitted before it existed).
    float_columns : tuple of str or None
        Columns read as numbers (not as categories): an integer column among them is
        evaluated as float64, at fit and on every replay (None: fitted before it
        existed, integers read as they are).
    """

    formula: str
    rhs_formula: str
    model_spec: Any
    blocks: list[Block]
    block_columns: list[str]
    dense_columns: list[str]
    offset_columns: list[str]
    fit_intercept: bool
    n_bins: int
    missing: str
    required: list[str] = field(default_factory=list)
    aliases: dict | None = None
    shadowed: list | None = None
    drop_columns: list | None = None
    strata: list | None = None
    column_kinds: dict | None = None
    float_columns: tuple | None = None

    @property
    def block_ptr(self) -> np.ndarray:
        """Offsets of the blocks in θ (length p + 1)."""
        sizes = [b.n_levels for b in self.blocks]
        return np.concatenate([[0], np.cumsum(sizes, dtype=np.intp)]).astype(np.intp)

    @property
    def chain_length(self) -> np.ndarray:
        """Levels of each block in its TV chain (a missing level is outside)."""
        return np.array([b.chain_length for b in self.blocks], dtype=np.intp)

    def param_names(self, precision: int | None = None) -> list[str]:
        """Names of θ, block after block.

        Parameters
        ----------
        precision : int, optional
            Significant digits of interval bounds (default 6).

        Returns
        -------
        list of str
            One name per level of every block.
        """
        return [name for b in self.blocks for name in b.param_names(precision)]

    def transform(self, data: Any) -> Design:
        """Replay the learned design on new data.

        Parameters
        ----------
        data : DataFrame or mapping of columns
            New rows; must hold every column the right-hand side reads.

        Returns
        -------
        Design
            Codes under the *training* cut points and levels, dense columns and offset.

        Raises
        ------
        ValueError
            A missing column, an unseen categorical level, or a NaN where the model has
            no missing level (each message names the column).
        """
        data = _as_frame(data)
        missing_cols = [c for c in self.required if c not in data.columns]
        if missing_cols:
            raise ValueError(
                f"column(s) {missing_cols} required by the formula are missing from the data."
                + did_you_mean(missing_cols, data.columns)
            )
        data = _with_aliases(data, self.aliases, self.shadowed)
        data = _integers_as_float(data, getattr(self, "float_columns", None), self.aliases)
        _check_formulaic_levels(self.model_spec, data)
        ctx = transform_context(self.n_bins, self.missing) | literal_context(self.aliases)
        with warnings.catch_warnings():
            warnings.simplefilter("error", _data_mismatch_warning())
            try:
                mm = self.model_spec.get_model_matrix(data, context=ctx)
            except FormulaicError as exc:
                raise _unwrap(exc, self.aliases) from exc
            except Warning as exc:  # pragma: no cover - levels are checked above
                raise ValueError(str(exc)) from exc
        return _assemble(
            mm, self.blocks, self.block_columns, self.dense_columns, self.offset_columns,
            self.aliases,
        )  # fmt: skip


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
    frame = _as_frame(newdata)
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
    frame = _as_frame(newdata)
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


# ---------------------------------------------------------------------------------------
# Building a design from a formula
# ---------------------------------------------------------------------------------------


def _as_frame(data: Any) -> pd.DataFrame:
    if isinstance(data, pd.DataFrame):
        # a duplicated name is ambiguous for the formula (and formulaic fails on it)
        check_unique_names(data.columns, "data")
        return data
    if isinstance(data, Mapping):
        return pd.DataFrame(dict(data))
    raise TypeError(
        f"data must be a pandas DataFrame or a mapping of columns; got {type(data).__name__}."
    )


def _data_mismatch_warning() -> type[Warning]:
    from formulaic.errors import DataMismatchWarning

    return DataMismatchWarning


def _unwrap(
    exc: BaseException, aliases: Mapping[str, str] | None = None, formula: str | None = None
) -> Exception:
    """Turn formulaic's wrapper into a plain ValueError/TypeError with a readable message.

    Errors our transforms raised (they name the column) keep their type and message;
    anything else (a syntax error, an unknown function or name) becomes a ValueError
    naming the formula. Alias identifiers are replaced by the original column names
    and formulaic's colour codes are removed.
    """
    cause = exc.__cause__ or exc.__context__
    while cause is not None and isinstance(cause, FormulaicError):
        cause = cause.__cause__ or cause.__context__
    where = f"formula {formula!r}: " if formula is not None else ""
    if isinstance(cause, TypeError):
        return TypeError(_unalias(_clean_message(cause), aliases))
    if isinstance(cause, ValueError) and not isinstance(cause, SyntaxError):
        return ValueError(_unalias(_clean_message(cause), aliases))
    if isinstance(cause, SyntaxError):
        return ValueError(f"cannot parse {where}{_clean_message(cause)}")
    text = _unalias(_clean_message(cause if cause is not None else exc), aliases)
    return ValueError(f"{where}{text}" if where else text)


def _check_formulaic_levels(model_spec: Any, data: pd.DataFrame) -> None:
    """Unseen levels of categoricals that formulaic encodes itself (in interactions)."""
    for expr, (kind, state) in (model_spec.encoder_state or {}).items():
        if getattr(kind, "value", kind) != "categorical" or expr not in data.columns:
            continue
        known = set(state.get("categories", []))
        col = data[expr]
        new = set(pd.unique(col[col.notna()])) - known
        if new:
            raise ValueError(
                f"column '{expr}' has level(s) not seen when the model was fitted: "
                f"{sorted(map(str, new))[:5]}."
            )


def _top_call(expr: str) -> str | None:
    """Name of the outermost call of a factor expression (``bin``, ``C``, ...)."""
    try:
        node = ast.parse(sanitize_variable_names(expr, {}, {}), mode="eval").body
    except SyntaxError:
        return None
    inner = [
        n.func.id
        for n in ast.walk(node)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Name)
        and n.func.id in _OWN
        and n is not node
    ]
    if inner:
        raise ValueError(
            f"{inner[0]}() must be the outermost call of a term; found it inside '{expr}'."
        )
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return node.func.id
    return None


def _state_key(expr: str) -> str:
    """formulaic's key of the transform state of a factor that is one call."""
    node = ast.parse(sanitize_variable_names(expr, {}, {}), mode="eval").body
    return format_expr(node)


def _is_numeric_series(col: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(col.dtype) or pd.api.types.is_bool_dtype(col.dtype)


def _reads_column(factor: Any, data: pd.DataFrame) -> bool:
    """Whether a formula factor is a data column read as is (``x``, not ``log(x)``)."""
    return factor.eval_method.value == "lookup" and factor.expr in data.columns


def _date_columns(factors: list, data: pd.DataFrame) -> list[str]:
    """The date/time columns that factors read as is."""
    return [
        f.expr for f in factors if _reads_column(f, data) and is_datetime_like(data[f.expr].dtype)
    ]


def _quote(name: str) -> str:
    """A column name as shown in a label: backticked unless it is a Python name.

    Display only: the result is never parsed (a name holding a backtick would break
    out of the quotes); formulas the package writes name columns by alias.
    """
    if name.isidentifier() and not keyword.iskeyword(name):
        return name
    if "`" in name or not name.isprintable():  # one name, readably: R's escapes
        name = name.replace("\\", "\\\\").replace("`", "\\`")
        name = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in name)
    return f"`{name}`"


def _source_name(name: str) -> str:
    """A looked-up column written back into formula text for formulaic to parse.

    Only names that reached formulaic as one token come here (plain names, aliases,
    names the user backticked): one holding a backtick or a control character cannot
    be written back faithfully and is refused by name rather than spliced in.
    """
    if name.isidentifier() and not keyword.iskeyword(name):
        return name
    if "`" in name or not name.isprintable():
        raise ValueError(f"column {name!r} cannot be written into a formula term.")
    return f"`{name}`"


class AliasedFormula(str):
    """Formula text whose package-generated identifiers stand for data column names.

    The package writes formulas of its own (``y ~ .`` expanded, an estimator's model
    for its results) without ever pasting a column name into the text: every column
    whose name is not a plain ASCII Python name is written as an alias (``_bsc0_``),
    and ``aliases`` maps the alias back to the name. The text is therefore safe to
    parse whatever the names hold (backticks, quotes, newlines, code, fullwidth
    letters that Python would fold onto ASCII ones); the alias columns are added to
    the data formulaic sees, and labels show the real names (:func:`display_formula`).

    Parameters
    ----------
    text : str
        The formula text, naming awkward columns by alias.
    aliases : mapping
        Alias -> column name.
    """

    aliases: dict[str, str]

    def __new__(cls, text: str, aliases: Mapping[str, str]) -> AliasedFormula:
        obj = super().__new__(cls, text)
        obj.aliases = dict(aliases)
        return obj

    def __reduce__(self) -> tuple:
        return (AliasedFormula, (str(self), self.aliases))


def display_formula(formula: Any) -> str:
    """A formula as the user reads it: aliases replaced by the column names (display only).

    Parameters
    ----------
    formula : str
        A formula, possibly an :class:`AliasedFormula`.

    Returns
    -------
    str
        The text with every alias shown as its column name (backticked when it is not a
        Python name). Never parse it: it is for summaries, reports and messages.
    """
    return _unalias(str(formula), getattr(formula, "aliases", None))


#: Names a formula may call or reach by itself: a column of this name is referred to by
#: alias in the formulas the package writes, so that it never hides the function.
_RESERVED = frozenset(_OWN) | frozenset(_HELPERS) | frozenset(TRANSFORMS) | {"I", "np", "strata"}


def _plain_name(name: str) -> bool:
    """Whether a column can be written as itself in formula text: an ASCII Python name
    that is no keyword, no function of the formula and no alias of the package."""
    return (
        name.isascii()
        and name.isidentifier()
        and not keyword.iskeyword(name)
        and name not in _RESERVED
        and not _ANY_ALIAS.fullmatch(name)
    )


class _ColumnRefs:
    """Safe references to data columns in formula text the package writes.

    ``ref(name)`` is ``name`` itself for a plain ASCII Python name, else an alias
    identifier (``_bsc{k}_``) that no column and no name in ``taken`` uses.
    """

    def __init__(self, taken: Any, aliases: Mapping[str, str] | None = None) -> None:
        self.aliases: dict[str, str] = dict(aliases or {})
        self._by_name = {v: a for a, v in self.aliases.items() if _IS_COLUMN.fullmatch(a)}
        self._taken = set(taken) | set(self.aliases)

    def __call__(self, name: str) -> str:
        if _plain_name(name):
            return name
        if name not in self._by_name:
            k = len(self._by_name)
            while _COLUMN.format(k) in self._taken:
                k += 1
            alias = _COLUMN.format(k)
            self._taken.add(alias)
            self._by_name[name] = alias
            self.aliases[alias] = name
        return self._by_name[name]


def _term_str(term: Any) -> str:
    """A parsed term written back as formula text (``str(term)`` drops backticks)."""
    return ":".join(
        _source_name(f.expr) if f.eval_method.value == "lookup" else f.expr for f in term.factors
    )


def _rewrite_rhs(formula: Any, data: pd.DataFrame) -> str:
    """The right-hand side with bare non-numeric columns read as ``C(col)``."""
    terms = []
    intercept = False
    by_terms, absorbed = _by_plan(formula, data)
    for i, term in enumerate(formula.rhs):
        factors = list(term.factors)
        if len(factors) == 1 and factors[0].expr == "1":
            intercept = True
            continue
        if len(factors) == 1 and _as_ordered(factors[0].expr):
            terms.append(_as_ordered(factors[0].expr))
            continue
        if i in by_terms:
            terms.append(by_terms[i])
            continue
        if i in absorbed:
            continue
        own = [k for k in (_top_call(f.expr) for f in factors) if k in _OWN]
        if own and len(factors) > 1:
            raise ValueError(
                f"{own[0]}() terms cannot be interacted with other terms: '{term}' (write "
                "bin(x):C(g) for one chain of x per level of g, or an interaction with a "
                "bare categorical column, e.g. 'z:region', for a dense unpenalised coding)."
            )
        dates = _date_columns(factors, data)
        if dates:
            # as C() it would get one level per distinct date: an interpolating fit
            explicit = f", or write C({_quote(dates[0])}) for an explicit categorical"
            raise TypeError(
                f"column '{dates[0]}' has date/time dtype {data[dates[0]].dtype}; a formula "
                "term needs numbers. Convert it first (e.g. days since a reference date or a "
                f"duration in seconds, then bin() it){explicit if len(factors) == 1 else ''}."
            )
        if (
            len(factors) == 1
            and _reads_column(factors[0], data)
            and not _is_numeric_series(data[factors[0].expr])
        ):
            terms.append(f"C({_source_name(factors[0].expr)})")
        else:
            terms.append(_term_str(term))
    if not terms:
        return "1" if intercept else "0"
    return ("1 + " if intercept else "0 + ") + " + ".join(terms)


def _split_args(inner: str) -> list[str]:
    """Top-level comma-separated pieces of a call's argument text."""
    out, depth, cur, quote = [], 0, [], None
    for ch in inner:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = None
            continue
        if ch in "'\"`":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def _call_args(expr: str) -> tuple[list[str], dict[str, str]]:
    """Positional and keyword argument texts of a one-call expression ``f(a, k=v)``."""
    inner = expr[expr.index("(") + 1 : expr.rindex(")")]
    pos, kw = [], {}
    for piece in _split_args(inner):
        head, eq, rest = piece.partition("=")
        if eq and head.strip().isidentifier() and not rest.startswith("="):
            kw[head.strip()] = rest.strip()
        else:
            pos.append(piece)
    return pos, kw


def _is_group_column(factor: Any, data: pd.DataFrame) -> bool:
    """A bare non-numeric data column (read as ``C(col)``)."""
    return _reads_column(factor, data) and not _is_numeric_series(data[factor.expr])


def _by_plan(formula: Any, data: pd.DataFrame) -> tuple[dict[int, str], set[int]]:
    """Varying-coefficient terms ``bin(x):C(g)`` rewritten as ``bin(x, by=g)``.

    Returns the rewritten text of every by-group term (by position in the formula) and the
    terms it absorbs: a ``C(g)`` (or bare ``g``) of the same column, whose level means
    the by-group block carries (its levels are separated by unpenalised breaks). When
    the formula also has a main ``bin(x)`` of the same x, the by-group block gets
    ``_main=True``: the first level of g is the reference (one free level) and the
    other levels' chains are deviations from its shape (treatment coding).
    """
    by_terms: dict[int, tuple[str, str, str, dict]] = {}
    mains: set[str] = set()
    groups: dict[str, int] = {}
    for i, term in enumerate(formula.rhs):
        factors = list(term.factors)
        if len(factors) == 1 and _as_ordered(factors[0].expr):
            continue
        calls = [_top_call(f.expr) for f in factors]
        if len(factors) == 1 and calls[0] == "bin":
            pos, kw = _call_args(factors[0].expr)
            if not pos:
                continue
            if "by" in kw:
                by_terms[i] = (factors[0].expr, pos[0], kw["by"], {})
            else:
                mains.add(pos[0].replace(" ", ""))
        elif len(factors) == 1 and calls[0] == "C":
            pos, kw = _call_args(factors[0].expr)
            if pos:
                groups[pos[0].replace(" ", "")] = i
        elif len(factors) == 1 and _is_group_column(factors[0], data):
            groups[_source_name(factors[0].expr)] = i
        elif len(factors) == 2 and calls.count("bin") == 1:
            b = factors[calls.index("bin")]
            other = factors[1 - calls.index("bin")]
            oc = calls[1 - calls.index("bin")]
            pos, kw = _call_args(b.expr)
            if oc == "C":
                gpos, gkw = _call_args(other.expr)
                extra = set(gkw) - {"levels"}
                if len(gpos) != 1 or extra:
                    raise ValueError(
                        f"in the by-group term '{term}', C() takes the column and levels= "
                        "only (the first level is the reference)."
                    )
                gexpr, opts = gpos[0], ({"by_levels": gkw["levels"]} if "levels" in gkw else {})
            elif _is_group_column(other, data):
                gexpr, opts = _source_name(other.expr), {}
            else:
                continue
            if not pos or "by" in kw:
                raise ValueError(f"cannot read the by-group term '{term}'.")
            by_terms[i] = (b.expr, pos[0], gexpr, opts)
    rewritten: dict[int, str] = {}
    absorbed: set[int] = set()
    for key, (bexpr, x, gexpr, opts) in by_terms.items():
        extra = "".join(f", {k}={v}" for k, v in opts.items())
        if "by=" in bexpr.replace(" ", ""):
            body = bexpr[: bexpr.rindex(")")]
        else:
            body = bexpr[: bexpr.rindex(")")] + f", by={gexpr}"
        main = ", _main=True" if x.replace(" ", "") in mains else ""
        rewritten[key] = f"{body}{extra}{main})"
        g = gexpr.replace(" ", "")
        if g in groups:
            absorbed.add(groups[g])
    return rewritten, absorbed


def _required_columns(formula: Any, side: str, aliases: Mapping[str, str]) -> list[str]:
    """The data columns one side of a parsed formula reads (original names).

    Computed from the factors' expressions (formulaic's ``required_variables`` reads
    ``x`` for a backticked ``x.1``): a looked-up factor is a column; in a Python
    expression every name that is neither called nor the base of an attribute
    (``np.log``) is one, except formulaic's and this package's transform names.
    """
    names: set[str] = set()
    for term in getattr(formula, side):
        for factor in term.factors:
            names |= _factor_columns(factor, aliases)
    return sorted(names)


def _factor_columns(factor: Any, aliases: Mapping[str, str]) -> set[str]:
    """The data columns (original names) one formula factor reads."""
    names: set[str] = set()
    context = set(TRANSFORMS) | set(_OWN) | set(_HELPERS)
    method = factor.eval_method.value
    if method == "lookup":
        names.add(factor.expr)
    elif method == "python":
        local: dict[str, str] = {}
        code = sanitize_variable_names(factor.expr, {}, local, template="_bsv_{}_")
        try:
            tree = ast.parse(code, mode="eval")
        except SyntaxError:
            return set()  # formulaic reports it when it evaluates the term
        skip = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
        skip |= {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and id(node) not in skip:
                name = local.get(node.id, node.id)
                if _IS_LITERAL.fullmatch(name):  # a string literal, not a column
                    continue
                if name in aliases or name not in context:
                    names.add(name)
    return {aliases.get(n, n) for n in names}


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
    data = _as_frame(data)
    try:
        text = expand_dot(formula, data, exclude_columns)
        source, aliases, _ = _alias_names(text, data.columns)
        parsed = Formula(source)
    except (FormulaicError, SyntaxError, ValueError, TypeError):
        return [], []  # build_design reports the problem
    if not hasattr(parsed, "lhs"):
        return [], []
    columns = set(map(str, data.columns))
    lhs = sorted(_required_columns(parsed, "lhs", aliases)) if missing == "drop" else []
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


def expand_dot(formula: str, data: Any, exclude_columns: Any = ()) -> str:
    """Expand R's ``.`` on the right-hand side into every other column of ``data``.

    A numeric column becomes ``bin(col)`` (the default bins), a text, categorical or
    boolean column ``C(col)``. Left out: the response's columns, every column the
    formula names elsewhere (``y ~ . + C(age)`` does not also bin ``age``; ``y ~ . - id``
    leaves ``id`` out) and ``exclude_columns`` (the weight and offset columns). A date or
    time column is refused (remove it with ``- col`` or convert it first).

    Parameters
    ----------
    formula : str
        The formula, e.g. ``"y ~ . - id"``.
    data : DataFrame
        The data whose columns ``.`` stands for.
    exclude_columns : sequence of str, default=()
        Further columns to leave out.

    Returns
    -------
    str
        The formula with ``.`` replaced (unchanged when it has none).
    """
    pieces = list(_scan(formula))
    kinds = [k for k, _ in pieces]
    texts = [t for _, t in pieces]
    try:
        tilde = texts.index("~")
    except ValueError:
        return formula
    dots = [
        i for i in range(tilde + 1, len(pieces))
        if kinds[i] == "other" and texts[i] == "."
        and not (i > 0 and (kinds[i - 1] in ("name", "quoted", "number") or texts[i - 1] == ")"))
        and not (i + 1 < len(pieces) and kinds[i + 1] in ("name", "quoted", "number"))
    ]  # fmt: skip
    if not dots:
        return formula
    data = _as_frame(data)

    def near(i: int, step: int) -> str:
        j = i + step
        while 0 <= j < len(pieces) and not texts[j].strip():
            j += step
        return texts[j] if 0 <= j < len(pieces) else ""

    for i in dots:
        if near(i, -1) not in ("~", "+", "(") or near(i, 1) not in ("", "+", "-", ")"):
            raise ValueError(
                f"formula {formula!r}: '.' (every other column) can only be added or have "
                "columns removed from it, e.g. 'y ~ . - id'; write interactions explicitly."
            )
    given = dict(getattr(formula, "aliases", None) or {})
    named = {t for k, t in pieces if k in ("name", "quoted")}
    named |= {given[t] for t in named if t in given}
    skip = named | {str(c) for c in exclude_columns if c is not None}
    # a column is written as itself only when it is a plain ASCII name, else by an
    # alias: no column name is ever pasted into the formula's text (names are data)
    ref = _ColumnRefs({str(c) for c in data.columns} | named, given)
    terms = []
    for col in data.columns:
        if not isinstance(col, str) or col in skip:
            continue
        dtype = data[col].dtype
        if is_datetime_like(dtype):
            raise TypeError(
                f"formula {display_formula(formula)!r}: '.' reaches column {col!r} of "
                f"date/time dtype {dtype}; leave it out with '- {_quote(col)}' or convert "
                "it to numbers first."
            )
        numeric = pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)
        if numeric and dtype.kind == "c":
            numeric = False
        if numeric:
            terms.append(f"bin({ref(col)})")
        else:
            terms.append(f"C({ref(col)})")
    expansion = " + ".join(terms) if terms else "1"
    out = list(texts)
    for i in dots:
        out[i] = f"({expansion})" if len(dots) == 1 and terms else expansion
    return AliasedFormula(_rejoin(pieces, out), ref.aliases)


# ---------------------------------------------------------------------------------------
# Column names that formulaic cannot take as they are
# ---------------------------------------------------------------------------------------

#: Template of the identifiers that stand for awkward column names inside formulaic.
_ALIAS = "_bs{}_"
#: Template of the identifiers that stand for string literals holding a quote (a level
#: ``"it's"``): formulaic 1.2 embeds the source of a stateful call in a double-quoted
#: string without escaping it, so such a call (``C(g, levels=["it's"])``) cannot be
#: evaluated. The formula formulaic sees names the literal instead; its value is in the
#: evaluation context (:func:`literal_context`) and names show it again (``_unalias``).
_LITERAL = "_bslit{}_"
_IS_LITERAL = re.compile(r"_bslit\d+_")
#: Template of the identifiers that stand for data columns in the formulas the package
#: writes (``.`` expanded, an estimator's model) and for backticked names that are not
#: plain ASCII Python names (formulaic's own backtick handling maps ``a b`` and ``a-b``
#: to one name, and Python folds a fullwidth ``ｚ`` onto ``z``). Shown as the name.
_COLUMN = "_bsc{}_"
_IS_COLUMN = re.compile(r"_bsc\d+_")
#: Any identifier of the package's: column, keyword/shadow or literal alias.
_ANY_ALIAS = re.compile(r"\b_bs(?:c|lit)?\d+_\b")


def literal_context(aliases: Mapping[str, str] | None) -> dict[str, str]:
    """The string literals a formula's aliases stand for (see ``_LITERAL``), as context."""
    return {a: v for a, v in (aliases or {}).items() if _IS_LITERAL.fullmatch(a)}


def _literal_text(value: str) -> str:
    """A string literal as Python source, double-quoted unless the value holds one."""
    return f'"{value}"' if '"' not in value and "\\" not in value else repr(value)


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_MARKED = re.compile(r"\u29db(.*?)\u29da", re.DOTALL)


def _rejoin(pieces: list, texts: list[str]) -> str:
    """The formula of ``_scan``'s pieces with some texts replaced (backticks restored)."""
    return "".join(
        f"`{t}`" if kind == "quoted" and t == orig else t
        for (kind, orig), t in zip(pieces, texts)
    )


def _scan(formula: str):
    """Split a formula into (kind, text) pieces: "str", "quoted", "name", "number", "other".

    ``quoted`` pieces are backticked names (text without the backticks); an unclosed
    backtick or quote is left to formulaic's parser to report.
    """
    i, n = 0, len(formula)
    while i < n:
        ch = formula[i]
        if ch in "'\"":
            j = i + 1
            while j < n and formula[j] != ch:
                j += 2 if formula[j] == "\\" else 1
            yield "str", formula[i : j + 1]
            i = j + 1
        elif ch == "`":
            j = formula.find("`", i + 1)
            if j < 0:
                yield "other", formula[i:]
                return
            yield "quoted", formula[i + 1 : j]
            i = j + 1
        elif ch.isidentifier():
            j = i + 1
            while j < n and (formula[j].isidentifier() or formula[j].isdigit()):
                j += 1
            yield "name", formula[i:j]
            i = j
        elif ch.isdigit():
            j = i + 1
            while j < n and (formula[j].isalnum() or formula[j] in "._"):
                j += 1
            yield "number", formula[i:j]
            i = j
        else:
            yield "other", ch
            i += 1


def _alias_names(formula: str, columns: Any) -> tuple[str, dict[str, str], list[str]]:
    """Rewrite the formula so that formulaic reads every column name as intended.

    * A backticked Python keyword (`` `class` ``) becomes an alias identifier
      (formulaic 1.2 leaves it as is and the expression does not parse).
    * A backticked plain identifier loses its backticks (formulaic puts them back by
      text replacement, which also hits other names containing it).
    * A data column whose name the formula calls or uses as a module (``bin``, ``C``,
      ``offset``, ``np``, ``log``...) would shadow that function: it is left out of the
      data formulaic sees, and the formula's references to it (bare or backticked, not
      called) become an alias.

    Returns
    -------
    formula : str
        The rewritten formula.
    aliases : dict
        alias -> original column name.
    shadowed : list of str
        The names the formula calls: data columns of these names are left out of the
        data formulaic sees (references to them go through aliases).
    """
    pieces = list(_scan(formula))

    def neighbour(k: int, step: int) -> str:
        """The nearest piece before (step -1) or after (+1) piece k that is not blank."""
        i = k + step
        while 0 <= i < len(pieces) and not pieces[i][1].strip():
            i += step
        return pieces[i][1] if 0 <= i < len(pieces) else ""

    called = set(_OWN)
    for k, (kind, text) in enumerate(pieces):
        if kind == "name" and neighbour(k, 1).startswith(("(", ".")):
            called.add(text)
    names = [c for c in columns if isinstance(c, str)]
    # every called name: a column of that name, in the training data or in new rows at
    # predict time, must not hide the function
    shadowed = sorted(called)
    taken = set(names) | {t for kind, t in pieces if kind == "name"}
    # aliases the formula comes with (an AliasedFormula the package wrote)
    aliases: dict[str, str] = dict(getattr(formula, "aliases", None) or {})
    taken |= set(aliases)
    column = _ColumnRefs(taken, aliases)
    by_name: dict[str, str] = {}

    def alias(name: str) -> str:
        if name not in by_name:
            k = len(by_name)
            while _ALIAS.format(k) in taken:
                k += 1
            by_name[name] = _ALIAS.format(k)
            taken.add(by_name[name])
            column._taken.add(by_name[name])
            aliases[by_name[name]] = name
        return by_name[name]

    out = []
    for k, (kind, text) in enumerate(pieces):
        before, after = neighbour(k, -1), neighbour(k, 1)
        value = _string_value(text) if kind == "str" else None
        if value is not None and ("'" in value or '"' in value):  # see _LITERAL
            n = len(aliases)
            while _LITERAL.format(n) in taken:
                n += 1
            taken.add(_LITERAL.format(n))
            column._taken.add(_LITERAL.format(n))
            aliases[_LITERAL.format(n)] = value
            out.append(_LITERAL.format(n))
        elif kind == "quoted":
            if keyword.iskeyword(text) or text in shadowed:
                out.append(alias(text))
            elif text.isidentifier() and text.isascii():
                out.append(text)
            else:  # never handed to formulaic's backtick handling (see _COLUMN)
                out.append(column(text))
        elif (
            kind == "name"
            and text in shadowed
            and not before.endswith(".")
            and not after.startswith(("(", "."))
        ):
            out.append(alias(text))
        elif (
            kind == "name"
            and not text.isascii()
            and text in names
            and not before.endswith(".")
            and not after.startswith(("(", "."))
        ):  # Python would read a fullwidth 'ｚ' as 'z': the column is named by alias
            out.append(column(text))
        else:
            out.append(text)
    aliases.update(column.aliases)
    return "".join(out), aliases, shadowed


def _string_value(text: str) -> str | None:
    """The value of a string literal's source text (None: not a plain string literal)."""
    try:
        value = ast.literal_eval(text)
    except (SyntaxError, ValueError):
        return None
    return value if isinstance(value, str) else None


def _with_aliases(
    data: pd.DataFrame, aliases: Mapping[str, str] | None, shadowed: list[str] | None
) -> pd.DataFrame:
    """The data formulaic sees: alias columns added, shadowing columns left out."""
    if not aliases and not shadowed:
        return data
    present = [a for a, name in (aliases or {}).items()
               if name in data.columns and not _IS_LITERAL.fullmatch(a)]  # fmt: skip
    frame = data.drop(columns=[c for c in shadowed or [] if c in data.columns])
    if present:
        extra = pd.DataFrame({a: data[(aliases or {})[a]] for a in present}, index=data.index)
        frame = pd.concat([frame, extra], axis=1)
    return frame


def _split_interaction(name: str) -> list[str]:
    """The factor parts of a formulaic column name ``a:b[x]``, splitting on top-level ``:``."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(name):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == ":" and depth == 0:
            parts.append(name[start:i])
            start = i + 1
    parts.append(name[start:])
    return parts


def dense_column_factors(spec: DesignSpec) -> dict[str, list[Any]]:
    """The factors of every dense (unpenalised linear) column, as the model description
    writes them: an input (``{"column": "z", "transform": "log"}``; an expression outside
    the description's closed list is refused by name), or for a categorical factor of an
    interaction (``z:g`` gives ``z:g[a]``, ``z:g[b]``...) the indicator of one level,
    ``{"column": "g", "levels": [...], "level": "a"}``.

    Parameters
    ----------
    spec : DesignSpec
        The design recipe of a fitted formula model.

    Returns
    -------
    dict
        Dense column name (unaliased) → list of factor entries.

    Raises
    ------
    ValueError
        A categorical factor the description cannot replay: contrasts other than
        treatment (dummy) coding, or a categorical expression that is not a column.
    """
    from ..design._spec import argument_expr, factor_input, json_value

    aliases = getattr(spec, "aliases", None)
    model_spec = spec.model_spec
    state = model_spec.encoder_state
    dense = set(spec.dense_columns)
    out: dict[str, list[Any]] = {}
    for st in model_spec.structure:
        exprs = [f.expr for f in st.term.factors]
        by_expr = {f.expr: f for f in st.term.factors}
        categorical = {e for e in exprs if getattr(state.get(e, (None,))[0], "value", "") == "categorical"}
        for col in st.columns:
            name = _unalias(col, aliases, column=True)
            if name not in dense:
                continue
            if not categorical:  # inputs: column references, never expression text
                out[name] = [factor_input(f, name, aliases) for f in st.term.factors]
                continue
            entries: list[Any] = []
            for part in _split_interaction(col):
                if part in exprs and part not in categorical:
                    entries.append(factor_input(by_expr[part], name, aliases))
                    continue
                entry = None
                for e in categorical:
                    if not (part.startswith(e + "[") and part.endswith("]")):
                        continue
                    info = state[e][1]
                    contrasts = getattr(info.get("contrasts"), "contrasts", None)
                    if contrasts is not None and type(contrasts).__name__ != "TreatmentContrasts":
                        raise ValueError(
                            f"term {name!r}: only treatment (dummy) coding of {_unalias(e, aliases)!r} "
                            "is described by the model description."
                        )
                    arg = (argument_expr(e) if e.startswith("C(") else e).strip("`")
                    plain = not any(ch in arg for ch in "()[]+-*/")
                    column = _unalias(arg, aliases, quote=False) if plain else None
                    inner = part[len(e) + 1 : -1]
                    levels = list(info.get("categories", []))
                    by_str = {str(lv): lv for lv in levels}
                    key = inner if inner in by_str else inner[2:] if inner.startswith("T.") else None
                    if column is None or key not in by_str:
                        break
                    entry = {"column": column, "levels": [json_value(v) for v in levels],
                             "level": json_value(by_str[key])}  # fmt: skip
                if entry is None:
                    raise ValueError(f"term {name!r}: its factor {part!r} is not described.")
                entries.append(entry)
            out[name] = entries
    return out


def _unalias(
    text: str, aliases: Mapping[str, str] | None, quote: bool = True, column: bool = False
) -> str:
    """Replace alias identifiers in a name or message by the original column names (and
    literal aliases by the string literal they stand for); ``column``: ``text`` is a
    formulaic column name (a looked-up column in it shows without backticks)."""
    if not aliases:
        return text

    def shown(match: re.Match) -> str:
        a = match.group(0)
        name = aliases.get(a)
        if name is None:
            return a
        if _IS_LITERAL.fullmatch(a):
            return _literal_text(name)
        if not quote:
            return name
        if not _IS_COLUMN.fullmatch(a):
            return f"`{name}`"
        # in a column name formulaic made of a looked-up column (``a-b``, ``a-b:z``,
        # ``g g[u]``) the name shows as is, as formulaic names a backticked column
        i, j = match.span()
        if column and (i == 0 or text[i - 1] == ":") and (j == len(text) or text[j] in ":["):
            return name
        # a column named like one of the package's functions is backticked, as when
        # the formula names it so itself (``bin(`C`)``)
        return f"`{name}`" if name in _OWN or name in _HELPERS else _quote(name)

    # one pass: a name holding another alias's text (or a backslash) is shown as is
    return _ANY_ALIAS.sub(shown, text)


_NAME_HINT = (
    " Write column names that are not Python names (spaces, dots, keywords) in "
    "backticks, e.g. bin(`x.1`) or C(`class`)."
)


def _clean_message(text: Any) -> str:
    """One plain line from a formulaic message: no ANSI colours, no repeated formula."""
    if isinstance(text, SyntaxError):
        msg = str(text.msg).rstrip(".")
        return f"{msg}{'' if msg.endswith('?') else '.'}{_NAME_HINT}"
    text = _ANSI.sub("", str(text))
    marked = _MARKED.search(text)
    first = text.strip().splitlines()[0] if text.strip() else text
    if marked:
        first = f"{first.rstrip('.')} (at {marked.group(1).strip()!r})."
    return " ".join(first.split())


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
    _validate_n_bins(n_bins, "glm()", missing)
    if missing not in _MISSING_POLICIES:
        raise ValueError(f"missing must be one of {_MISSING_POLICIES}; got {missing!r}.")
    data = _as_frame(data)
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
    source, aliases, shadowed = _alias_names(
        expand_dot(formula, data, exclude_columns), data.columns
    )
    try:
        parsed = Formula(source)
    except (FormulaicError, SyntaxError, ValueError) as exc:
        msg = _unalias(_clean_message(exc), aliases)
        raise ValueError(f"cannot parse formula {shown!r}: {msg}") from None
    if not hasattr(parsed, "lhs") or len(parsed.lhs) == 0:
        raise ValueError(f"formula {shown!r} has no response; write 'y ~ terms'.")
    lhs_cols = _required_columns(parsed, "lhs", aliases)
    rhs_cols = _required_columns(parsed, "rhs", aliases)
    absent = [c for c in lhs_cols + rhs_cols if c not in data.columns]
    if absent:
        raise ValueError(
            f"formula {shown!r} names column(s) {absent} that are not in the data."
            + did_you_mean(absent, data.columns)
        )
    original = data
    data = _with_aliases(data, aliases, shadowed)
    lhs = " + ".join(_term_str(t) for t in parsed.lhs)
    dates = _date_columns([f for t in parsed.lhs for f in t.factors], data)
    if dates:
        raise TypeError(
            f"response '{dates[0]}' has date/time dtype {data[dates[0]].dtype}; the response "
            "must be numeric, boolean or (binomial) a two-level factor. Convert it to a number "
            "first (e.g. days since a reference date, or a duration in seconds)."
        )
    try:
        rhs = _rewrite_rhs(parsed, data)
    except (ValueError, TypeError) as exc:  # names as the user wrote them (aliases shown)
        raise type(exc)(_unalias(str(exc), aliases)) from None
    trials = _cbind_trials(lhs, data, aliases, formula)
    if trials is not None:  # the trials weigh the bins' quantiles as they weigh the loss
        sample_weight = trials if sample_weight is None else sample_weight * trials
    ctx = transform_context(n_bins, missing, sample_weight) | literal_context(aliases)
    # integer columns are evaluated as float64 (I(a*b) would wrap around silently),
    # except those read as categories (their levels stay integers); replayed alike
    floats = [c for c in dict.fromkeys(lhs_cols + rhs_cols)
              if c not in _categorical_columns(parsed, aliases)]  # fmt: skip
    try:
        mms = model_matrix(
            f"{lhs} ~ {rhs}", _integers_as_float(data, floats, aliases), context=ctx,
            na_action="ignore",
        )
    except FormulaicError as exc:
        raise _unwrap(exc, aliases, shown) from exc
    except SyntaxError as exc:
        raise ValueError(f"cannot parse formula {shown!r}: {_clean_message(exc)}") from None
    except TypeError as exc:  # NumPy refusing a date/time inside an expression, e.g. I(t)
        dates = [c for c in lhs_cols + rhs_cols if is_datetime_like(original[c].dtype)]
        if not dates:
            raise
        raise TypeError(
            f"formula {shown!r} reads date/time column(s) {dates} in an expression that "
            f"needs numbers ({exc}); convert them to numbers first."
        ) from exc
    try:
        y, response, trials = _read_response(mms.lhs, lhs, family, data)
    except ValueError as exc:
        raise ValueError(_unalias(str(exc), aliases)) from None
    response = replace(response, name=_unalias(response.name, aliases))
    mm = mms.rhs
    spec_rhs = mm.model_spec
    blocks, block_cols, dense_cols, offset_cols, intercept = _classify(spec_rhs, mm, aliases)
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
    design = _assemble(mm, blocks, block_cols, dense_cols, offset_cols, aliases)
    design.strata = strata
    # a Surv(time, event) response: its (n, 2) times and events (y packs their order)
    design.survival = None
    if response.kind == "survival":
        design.survival, trials = trials, None
    design.trials = trials
    return spec, design, y, response


def _categorical_columns(formula: Any, aliases: Mapping[str, str] | None) -> set[str]:
    """The columns (original names) a ``C()``, ``ordered()`` or ``bin(..., by=)`` of a
    parsed formula reads as categories, on either side."""
    aliases = aliases or {}
    out: set[str] = set()
    for side in ("lhs", "rhs"):
        for term in getattr(formula, side, ()):
            for factor in term.factors:
                if factor.eval_method.value != "python":
                    continue
                local: dict[str, str] = {}
                code = sanitize_variable_names(factor.expr, {}, local, template="_bsv_{}_")
                try:
                    tree = ast.parse(code, mode="eval")
                except SyntaxError:
                    continue
                for node in ast.walk(tree):
                    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                        continue
                    if node.func.id in ("C", "ordered"):
                        parts = node.args[:1] + [k.value for k in node.keywords if k.arg == "data"]
                    elif node.func.id == "bin":
                        parts = node.args[4:5] + [k.value for k in node.keywords if k.arg == "by"]
                    else:
                        continue
                    for part in parts:
                        for leaf in ast.walk(part):
                            if isinstance(leaf, ast.Name):
                                name = local.get(leaf.id, leaf.id)
                                out.add(aliases.get(name, name))
    return out


def _integers_as_float(
    data: pd.DataFrame, columns: Sequence[str] | None, aliases: Mapping[str, str] | None
) -> pd.DataFrame:
    """``data`` with its integer columns among ``columns`` (and their aliases) as float64.

    An integer column in an expression (``I(a * b)``, ``a:b``) would be computed in
    int64 and wrap around without a word (2**40 squared is 0); as float64 it is exact up
    to 2**53 and then rounds. NumPy and pandas nullable integers alike (NA becomes NaN).
    """
    if not columns:
        return data
    wanted = set(columns)
    aliases = aliases or {}
    targets = [
        c for c in data.columns
        if isinstance(c, str) and (c in wanted or aliases.get(c) in wanted)
        and isinstance(data[c], pd.Series) and pd.api.types.is_integer_dtype(data[c].dtype)
    ]  # fmt: skip
    if not targets:
        return data
    data = data.copy(deep=False)
    for c in targets:
        data[c] = data[c].astype(np.float64)
    return data


def _classify(model_spec: Any, mm: pd.DataFrame, aliases: Mapping[str, str] | None = None):
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
            offset_cols.extend(_unalias(c, aliases, column=True) for c in st.columns)
            continue
        if kind in ("bin", "C", "ordered"):
            (col,) = st.columns
            s = state[_state_key(factors[0].expr)]
            if kind == "bin":
                edges = np.asarray(s["edges"], dtype=np.float64)
                by = s.get("by")
                term = _unalias(str(st.term), aliases)
                n_levels = len(edges) + 1 + int(s["has_missing_level"])
                if by is not None:
                    text = str(st.term)
                    term = _unalias(text[: text.rindex(", by=")] + ")", aliases)
                    term = f"{term}:C({_unalias(by['column'], aliases)})"
                    G = len(by["levels"])
                    n_levels = 1 + (G - 1) * (len(edges) + 1) if by["main"] else G * n_levels
                block = Block(
                    term=term,
                    kind="bin",
                    column=_unalias(s["column"], aliases, quote=False),
                    n_levels=n_levels,
                    by=None if by is None else _unalias(by["column"], aliases, quote=False),
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
                    term=_unalias(str(st.term), aliases),
                    kind="categorical",
                    column=_unalias(s["column"], aliases, quote=False),
                    n_levels=len(s["levels"]) + int(s["has_missing_level"]),
                    levels=tuple(s["levels"]),
                    has_missing_level=bool(s["has_missing_level"]),
                    reference=s.get("reference"),
                    ordered=kind == "ordered",
                    monotone=s.get("monotone"),
                )
            blocks.append(block)
            block_cols.append(_unalias(col, aliases, column=True))
            continue
        dense_cols.extend(_unalias(c, aliases, column=True) for c in st.columns)
    return blocks, block_cols, dense_cols, offset_cols, intercept


def _assemble(
    mm: pd.DataFrame,
    blocks: list[Block],
    block_cols: list[str],
    dense_cols: list[str],
    offset_cols: list[str],
    aliases: Mapping[str, str] | None = None,
) -> Design:
    if aliases:  # the names are the original ones; formulaic's columns use the aliases
        mm = mm.rename(columns={c: _unalias(c, aliases, column=True) for c in mm.columns})
    n = len(mm)
    dtype = code_dtype(max((b.n_levels for b in blocks), default=1))
    codes = np.empty((len(blocks), n), dtype=dtype)
    for j, col in enumerate(block_cols):
        codes[j] = mm[col].to_numpy()
    sizes = [b.n_levels for b in blocks]
    block_ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
    dense = None
    if dense_cols:
        dense = np.ascontiguousarray(mm[dense_cols].to_numpy(dtype=np.float64))
        bad = ~np.isfinite(dense)
        if bad.any():
            col = dense_cols[int(np.nonzero(bad.any(axis=0))[0][0])]
            raise ValueError(
                f"term '{col}' has missing or infinite values; only bin() and C() terms "
                "can give missing values a level of their own (missing='separate')."
            )
    off = None
    if offset_cols:
        off = mm[offset_cols].to_numpy(dtype=np.float64).sum(axis=1)
        if not np.all(np.isfinite(off)):
            raise ValueError(f"offset term {offset_cols} has missing or infinite values.")
    return Design(codes=codes, block_ptr=block_ptr, dense=dense, offset=off)


_STRATA = re.compile(r"\+\s*strata\(([^()]*)\)|strata\(([^()]*)\)\s*\+?")


def _is_survival(family: Any) -> bool:
    from ..families._families import get_family

    return bool(getattr(get_family(family), "survival", False))


def _strip_strata(formula: str) -> tuple[str, list[str]]:
    """The formula without its ``strata(a, b)`` terms, and their columns."""
    if not isinstance(formula, str) or "strata(" not in formula:
        return formula, []
    cols: list[str] = []
    for m in _STRATA.finditer(formula):
        inner = m.group(1) if m.group(1) is not None else m.group(2)
        cols += [c.strip().strip("`") for c in inner.split(",") if c.strip()]
    out = _STRATA.sub("", formula).strip()
    if out.endswith("~"):
        out += " 1"
    return out, cols


def strata_labels(data: Any, columns: Sequence[str]) -> np.ndarray:
    """One label per row for the strata of ``columns`` (values joined by ``:``).

    Parameters
    ----------
    data : DataFrame
        The rows.
    columns : sequence of str
        The columns of a ``strata()`` term.

    Returns
    -------
    ndarray of str
    """
    frame = _as_frame(data)
    absent = [c for c in columns if c not in frame.columns]
    if absent:
        raise ValueError(f"strata() names column(s) {absent} that are not in the data.")
    parts = []
    for c in columns:
        col = frame[c]
        if col.isna().any():
            raise ValueError(f"strata() column '{c}' contains missing values.")
        parts.append(col.astype(str).to_numpy(dtype=object))
    out = parts[0]
    for p in parts[1:]:
        out = out + ":" + p
    return np.asarray(out, dtype=object)


def _cbind_trials(
    lhs: str, data: pd.DataFrame, aliases: Mapping[str, str] | None, formula: str
) -> np.ndarray | None:
    """successes + failures of a ``cbind(successes, failures)`` response (else None)."""
    if not lhs.replace(" ", "").startswith("cbind("):
        return None
    try:
        counts = model_matrix(
            f"{lhs} ~ 1", data, context={"cbind": cbind}, na_action="ignore"
        ).lhs.to_numpy(dtype=np.float64)
    except FormulaicError as exc:
        raise _unwrap(exc, aliases, formula) from exc
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


def _read_response(
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
    return y, Response(name=name, kind=kind, event=event), None
