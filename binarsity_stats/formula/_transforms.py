"""The formula's own transforms: ``bin()``, ``C()``, ``ordered()``, ``offset()``, ``cbind()``,
``Surv()`` and ``Treatment()``, their learned state and its replay on new data.

``bin()``, ``C()`` and ``ordered()`` are formulaic *stateful transforms*: on the training
data they learn their cut points or levels and keep them in the ``ModelSpec``'s transform
state; on new data they replay them. formulaic pickles the state but not the functions:
:func:`transform_context` re-creates them whenever a design is replayed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from formulaic.utils.stateful_transforms import stateful_transform

from ..core._validation import check_min_bin_count, check_monotone, check_n_bins, code_dtype
from ..design._binarizer import BinarizerCore, bin_codes, level_codes
from ..design._cuts import distinct_in_levels
from ._columns import as_float, column_name

__all__ = [
    "Treatment",
    "cbind",
    "Surv",
    "offset",
    "transform_context",
]


#: Marker written into the transform state of our stateful transforms.
BINARSITY_MARK = "__binarsity__"
#: The transform names this package owns inside formulas.
_OWN = ("bin", "C", "ordered", "offset")
#: Other names this package gives formulas (checked as calls, never data columns).
_HELPERS = ("Treatment", "cbind", "Surv")
MISSING_POLICIES = ("error", "separate", "drop")
#: Bins per axis of a pair term ``bin(a):bin(b)`` that does not give its own (design.md §10).
PAIR_BINS = 16


def _make_bin(default_n_bins: int, default_missing: str, sample_weight: np.ndarray | None):
    """Create the ``bin`` stateful transform for one materialisation.

    The defaults only matter when the state is learned; a replay reads everything it
    needs from ``_state``.
    """

    @stateful_transform
    def bin(  # noqa: A001
        data, n_bins=None, missing=None, min_count=1, by=None, by_levels=None, _main=False,
        monotone=None, pair=None, pair_bins=None, _state=None,
    ):  # fmt: skip
        """Bin codes of a numeric variable under learned quantile cut points.

        With ``by`` (a column of groups; ``bin(x):C(g)`` is rewritten to it), the codes
        are those of one chain per level of the group over the same cut points.
        ``monotone="increasing"|"decreasing"`` asks for a monotone chain (its block's kind
        in the engine, design.md §7); it changes no code (with ``by``, each level's chain
        is monotone: the breaks between levels are not ordered).

        With ``pair`` (a second numeric column; ``bin(a, n):bin(b, m)`` is rewritten to
        ``bin(a, n, pair=b, pair_bins=m)``), the codes are the cells of the two axes'
        grid that hold training rows (``_pair_codes``; 16 bins per axis by default).
        """
        name = column_name(data)
        x = as_float(data, name, "bin()")
        if _state is None:  # pragma: no cover - formulaic always passes a dict
            _state = {}
        if pair is not None and "edges" not in _state:
            return _learn_pair(x, name, pair, n_bins, pair_bins, missing, default_missing,
                               sample_weight, _state)  # fmt: skip
        if "pair" in _state:
            return _pair_codes(_replay_bin(x, _state, name), pair, _state)
        if "edges" not in _state:
            n_bins = default_n_bins if n_bins is None else n_bins
            missing = default_missing if missing is None else missing
            if by is not None and missing == "separate" and np.any(np.isnan(x)):
                raise ValueError(
                    f"column '{name}' contains missing values; a by-group term "
                    f"bin({name}):C({column_name(by)}) has no missing level (use "
                    "missing='drop')."
                )
            validate_n_bins(n_bins, f"bin({name})", missing)
            _check_missing_policy(missing, f"bin({name})")
            check_values(x, name, missing)
            min_count = check_min_bin_count(min_count, f"min_count in bin({name})")
            monotone = check_monotone(monotone, f"monotone in bin({name})")
            edges, has_missing = _learn_edges(x, n_bins, missing, sample_weight, name, min_count)
            _state.update(
                {
                    BINARSITY_MARK: "bin",
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
            counts, singles = distinct_in_levels(x, codes, len(edges) + 1)
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


def _learn_pair(x, name, pair, n_bins, pair_bins, missing, default_missing, sample_weight,
                state) -> np.ndarray:  # fmt: skip
    """Learn a pair term's two axes (cut points of each) and its observed cells.

    Each axis is binned as a ``bin()`` term of its own (weighted quantiles,
    ``PAIR_BINS`` bins unless given); a cell (k, l) of the K_a × K_b grid is observed
    when a training row falls in it. Missing values are refused (a pair has no missing
    level).
    """
    bname = column_name(pair)
    xb = as_float(pair, bname, "bin()")
    term = f"bin({name}):bin({bname})"
    missing = default_missing if missing is None else missing
    for col, vals in ((name, x), (bname, xb)):
        if np.any(np.isnan(vals)):
            raise ValueError(
                f"column '{col}' contains missing values; the pair term {term} has no "
                "missing level (use missing='drop')."
            )
        check_values(vals, col, "error")
    n_a = PAIR_BINS if n_bins is None else n_bins
    n_b = PAIR_BINS if pair_bins is None else pair_bins
    validate_n_bins(n_a, f"bin({name}) in {term}", "error")
    validate_n_bins(n_b, f"bin({bname}) in {term}", "error")
    axes = []
    for col, vals, nb in ((name, x, n_a), (bname, xb, n_b)):
        edges, _ = _learn_edges(vals, nb, "error", sample_weight, col)
        axes.append({"edges": edges, "n_bins": int(nb), "has_missing_level": False,
                     "missing": missing, "column": col,
                     "data_min": float(np.min(vals)), "data_max": float(np.max(vals))})  # fmt: skip
    state.update({BINARSITY_MARK: "bin", "min_count": 1, "monotone": None, **axes[0]})
    codes_a = _replay_bin(x, state, name)
    codes_b = _replay_bin(xb, axes[1], bname)
    Kb = len(axes[1]["edges"]) + 1
    cells = np.unique(codes_a.astype(np.intp) * Kb + codes_b)
    counts, singles = distinct_in_levels(x, codes_a, len(axes[0]["edges"]) + 1)
    state.update({"distinct": counts, "single_values": singles,
                  "pair": {**axes[1], "cells": cells.tolist(),
                           "bins_written": pair_bins is not None}})  # fmt: skip
    code_dtype(len(cells) + 1)  # refuses a grid beyond the uint16 codes
    return _pair_codes(codes_a, pair, state)


def _pair_codes(codes_a: np.ndarray, pair: Any, state: Mapping[str, Any]) -> np.ndarray:
    """The level of every row of a pair term: the index of its cell among the observed
    ones; a cell without a training row gets the last level (no parameter: θ = 0)."""
    ps = state["pair"]
    bname = ps["column"]
    if pair is None:
        raise ValueError(f"the pair term needs the column '{bname}'.")
    xb = as_float(pair, bname, "bin()")
    codes_b = _replay_bin(xb, ps, bname)
    cells = np.asarray(ps["cells"], dtype=np.intp)
    flat = codes_a.astype(np.intp) * (len(ps["edges"]) + 1) + codes_b
    pos = np.minimum(np.searchsorted(cells, flat), len(cells) - 1)
    out = np.where(cells[pos] == flat, pos, len(cells))
    return out.astype(code_dtype(len(cells) + 1))


def _learn_by(by: Any, levels: Any, main: bool, name: str, d: int) -> dict[str, Any]:
    """The levels of a by-group column (varying coefficients ``bin(x):C(g)``)."""
    gname = column_name(by)
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
        learned = sorted(pd.unique(values).tolist(), key=sort_key)
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


def validate_n_bins(n_bins: Any, where: str, missing: Any = "error") -> None:
    check_n_bins(n_bins, "n_bins", missing if missing == "separate" else "error", f" in {where}")


def check_values(x: np.ndarray, name: str, missing: str) -> None:
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


def reference_of(contr: Any, name: str) -> tuple[bool, Any]:
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


def resolve_reference(reference: Any, learned: list, name: str) -> Any:
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
    if not isinstance(missing, str) or missing not in MISSING_POLICIES:
        raise ValueError(f"missing must be one of {MISSING_POLICIES}; got {missing!r} in {call}.")


def _factor_values(data: Any) -> tuple[pd.Series, np.ndarray]:
    """A factor's values as a Series (object dtype unless already a Series) and its NaN mask.

    Dates and times (any unit, tz-aware too) become their ISO 8601 text
    (:func:`~binarsity_stats.design._column_access.date_levels`): a ``datetime64[ns]`` array turned
    into objects would give nanosecond integers. Durations become ``Timedelta`` objects.
    """
    if not isinstance(data, pd.Series) and getattr(data, "dtype", None) is not None \
            and getattr(data.dtype, "kind", "O") in "mM":  # fmt: skip
        data = pd.Series(data)
    if isinstance(data, pd.Series) and getattr(data.dtype, "kind", "O") == "M":
        from ..design._column_access import date_levels

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
    return sorted(pd.unique(values[~isna]).tolist(), key=sort_key)


def _make_categorical(default_missing: str):
    """Create the ``C`` stateful transform (category codes, levels learned once)."""

    @stateful_transform
    def C(data, contr=None, levels=None, missing=None, _state=None):  # noqa: N802 - formula name
        """Category codes of a variable; an unpenalised block of the binarsity design."""
        name = column_name(data)
        given, reference = reference_of(contr, name)
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
            ref = resolve_reference(reference, learned, name) if given else None
            _state.update(
                {
                    BINARSITY_MARK: "C",
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
        name = column_name(data)
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
                    BINARSITY_MARK: "ordered",
                    "monotone": monotone,
                    "levels": learned,
                    "has_missing_level": bool(isna.any()),
                    "column": name,
                    "missing": missing,
                }
            )
        return _replay_categorical(values, isna, _state, name)

    return ordered


def sort_key(v: Any) -> tuple:
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
    name = column_name(data)
    x = as_float(data, name, "offset()")
    if _state is not None:
        _state[BINARSITY_MARK] = "offset"
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
        name = column_name(value)
        out[what] = as_float(value, name, f"cbind() {what}", "Give counts.")
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
        name = column_name(value)
        out[what] = as_float(value, name, f"Surv() {what}", "Give numbers.")
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
