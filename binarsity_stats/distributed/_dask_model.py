"""Formulas on Dask DataFrames: the design of ``glm(formula, dask_frame)``, partition by partition.

Three passes over the partitions (each a task per partition, nothing but summaries
and codes travels):

1. (weighted fits only) rows and the largest weight, which fix the Binarizer's exact
   fixed point for the weights (``_dask_summary.fixed_point_shift``);
2. the formula evaluated with *summary* transforms: every ``bin()`` term sends the
   mergeable :class:`~binarsity_stats.distributed._dask_summary.ValueSummary` of its values, every ``C()``
   term its levels; summaries are merged in a tree on the workers and the cut points
   and levels are set on the client (identical to the in-memory ones while a feature
   has at most ``max_distinct`` distinct values);
3. the learned recipe (the same :class:`~binarsity_stats.formula._recipe.DesignSpec` an
   in-memory ``glm()`` builds) replayed on every partition: codes (uint8/uint16),
   dense columns, y, weights and offset — :class:`~binarsity_stats.distributed._dask.DaskDesign`.

Supported terms: ``bin()``, ``C()`` (and bare text columns), numeric terms (``x``,
``log(x)``, ``x:z``, ``I(...)``), ``offset()``; a numeric or boolean response.
Everything whose state would be learned per partition (formulaic's ``center``,
``scale``, ``poly``, splines, its own categorical encoding of interactions) is refused
by name, as are ``cbind()`` responses and factor responses (write ``I(y == "yes")``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from formulaic import Formula, model_matrix
from formulaic.errors import FormulaicError
from formulaic.utils.stateful_transforms import stateful_transform

from ._dask import (
    SPLIT_EVERY,
    DaskDesign,
    compute,
    concat_partitions,
    is_dask_collection,
)
from ._dask_summary import (
    ValueSummary,
    cuts_from_summary,
    distinct_per_bin,
    fixed_point_shift,
    to_fixed,
)
from ..formula._columns import FORMULAIC_LOCK, as_float, column_name, did_you_mean
from ..formula._formula import classify_terms
from ..formula._names import (
    alias_names,
    clean_message,
    unalias,
    unwrap,
    with_aliases,
    literal_context,
)
from ..formula._recipe import Design, DesignSpec, integers_as_float
from ..formula._response import Response, read_response
from ..formula._rewrite import (
    categorical_columns,
    required_columns,
    rewrite_rhs,
    term_str,
    expand_dot,
)
from ..formula._transforms import (
    BINARSITY_MARK,
    MISSING_POLICIES,
    check_values,
    reference_of,
    resolve_reference,
    sort_key,
    validate_n_bins,
    transform_context,
)
from ..core._validation import check_min_bin_count, check_sample_weight, code_dtype


def resolve_client(client: Any) -> Any:
    """``client=``: None, a ``distributed.Client``, or a scheduler address to connect to."""
    if client is None:
        return None
    if isinstance(client, str):
        try:
            from distributed import Client
        except ImportError as exc:  # pragma: no cover - the dask extra
            raise ImportError(
                "client='address' needs distributed: pip install 'binarsity-stats[dask]'."
            ) from exc
        return Client(client, set_as_default=False)
    if not (hasattr(client, "compute") and hasattr(client, "scheduler")):
        raise TypeError(
            "client must be a distributed.Client or a scheduler address such as "
            f"'tcp://host:8786'; got {type(client).__name__}."
        )
    return client


def scheduler(client: Any) -> Any:
    """A context in which Dask computes on ``client`` (no change when it is None)."""
    import contextlib

    if client is None:
        return contextlib.nullcontext()
    return _dask().config.set(scheduler=client)


def _dask():
    try:
        import dask
    except ImportError as exc:  # pragma: no cover - the dask extra
        raise ImportError(
            "fits on Dask collections need dask: pip install 'binarsity-stats[dask]'."
        ) from exc
    return dask


# ---------------------------------------------------------------------------------------
# Summary transforms (pass 2)
# ---------------------------------------------------------------------------------------


def _summary_context(
    n_bins: int,
    missing: str,
    q: np.ndarray | None,
    max_distinct: int,
    sketch_size: int,
) -> dict[str, Any]:
    """``bin``/``C``/``offset`` that summarise their input instead of coding it."""

    @stateful_transform
    def bin(data, n_bins=n_bins, missing=missing, min_count=1, _state=None, **options):  # noqa: A001
        name = column_name(data)
        if "pair" in options:  # a pair term bin(a):bin(b), rewritten (formula/_rewrite)
            raise ValueError(
                f"the pair term bin({name}):bin({column_name(options['pair'])}) is not "
                "supported on a Dask DataFrame (block kind 'grid'); fit it in memory."
            )
        if options:
            raise ValueError(
                f"bin({name}, {', '.join(f'{k}=...' for k in options)}) is not supported on a "
                "Dask DataFrame: only n_bins, missing and min_count are."
            )
        x = as_float(data, name, "bin()")
        if missing not in MISSING_POLICIES:
            raise ValueError(
                f"missing must be one of {MISSING_POLICIES}; got {missing!r} in bin({name})."
            )
        validate_n_bins(n_bins, f"bin({name})", missing)
        min_count = check_min_bin_count(min_count, f"min_count in bin({name})")
        check_values(x, name, missing)
        _state.clear()
        _state.update(
            {
                BINARSITY_MARK: "bin",
                "summary": ValueSummary.of(x, q, max_distinct, sketch_size),
                "n_bins": int(n_bins),
                "min_count": int(min_count),
                "missing": missing,
                "column": name,
                "bounds": (int(max_distinct), int(sketch_size)),
            }
        )
        return np.zeros(len(x), dtype=np.uint8)

    @stateful_transform
    def C(data, contr=None, levels=None, missing=missing, _state=None):  # noqa: N802
        name = column_name(data)
        given, reference = reference_of(contr, name)
        values = data if isinstance(data, pd.Series) else pd.Series(np.asarray(data, object))
        isna = values.isna().to_numpy()
        if missing not in MISSING_POLICIES:
            raise ValueError(
                f"missing must be one of {MISSING_POLICIES}; got {missing!r} in C({name})."
            )
        if isna.any() and missing != "separate":
            raise ValueError(
                f"column '{name}' contains missing values (NaN); pass missing='separate' to "
                "give them their own level."
            )
        if levels is not None:
            seen, ordered = list(levels), True
        elif isinstance(values.dtype, pd.CategoricalDtype):
            seen, ordered = list(values.cat.categories), True
        else:
            seen, ordered = pd.unique(values[~isna]).tolist(), False
        _state.clear()
        _state.update(
            {
                BINARSITY_MARK: "C",
                "seen": seen,
                "ordered": ordered,
                "any_na": bool(isna.any()),
                "missing": missing,
                "column": name,
                "given": given,
                "reference": reference,
            }
        )
        return np.zeros(len(values), dtype=np.uint8)

    @stateful_transform
    def offset(data, _state=None):
        name = column_name(data)
        x = as_float(data, name, "offset()")
        _state[BINARSITY_MARK] = "offset"
        return x

    ctx = {"bin": bin, "C": C, "offset": offset}
    for other in transform_context(n_bins, missing):  # the package's other transforms
        if other not in ctx and other not in ("Treatment", "cbind"):
            ctx[other] = _refused(other)
    return ctx


def _refused(name: str) -> Any:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise ValueError(
            f"{name}() terms are not supported on a Dask DataFrame. Supported terms: bin(), "
            "C(), numeric terms (x, log(x), x:z, I(...)) and offset()."
        )

    return refuse


def _merge_states(states: list[dict]) -> dict:
    """Merge the summary states of several partitions (term by term)."""
    out: dict = {}
    for key in states[0]:
        parts = [s[key] for s in states]
        first = parts[0]
        kind = first.get(BINARSITY_MARK)
        if kind == "bin":
            merged = dict(first)
            merged["summary"] = ValueSummary.merge([p["summary"] for p in parts], *first["bounds"])
        elif kind == "C":
            merged = dict(first)
            if first["ordered"]:
                merged["seen"] = first["seen"]
            else:
                seen: dict = {}
                for p in parts:
                    for v in p["seen"]:
                        seen.setdefault(v, None)
                merged["seen"] = list(seen)
            merged["any_na"] = any(p["any_na"] for p in parts)
        else:
            merged = first
        out[key] = merged
    return out


def _merge_nodes(*nodes: dict) -> dict:
    return {
        "rows": sum(n["rows"] for n in nodes),
        "states": _merge_states([n["states"] for n in nodes]),
    }


# ---------------------------------------------------------------------------------------
# The formula on a Dask DataFrame
# ---------------------------------------------------------------------------------------


@dataclass
class _Plan:
    """What every partition task needs (picklable)."""

    lhs: str
    rhs: str
    aliases: dict | None
    shadowed: list | None
    n_bins: int
    missing: str
    family: Any
    weight_column: str | None
    offset_column: str | None
    max_distinct: int
    sketch_size: int
    shift: tuple[int, int] | None = None
    #: columns read as numbers: integers among them evaluated as float64 (as in memory)
    floats: tuple | None = None


def _prepare(frame: pd.DataFrame, plan: _Plan) -> pd.DataFrame:
    data = with_aliases(frame, plan.aliases, plan.shadowed)
    return integers_as_float(data, plan.floats, plan.aliases)


def _partition_weights(frame: pd.DataFrame, plan: _Plan) -> dict:
    """Pass 1: rows and the largest weight of one partition (weights validated)."""
    n = len(frame)
    if plan.weight_column is None or n == 0:
        return {"rows": n, "wmax": 0.0}
    w = check_sample_weight_part(frame[plan.weight_column], plan.weight_column)
    return {"rows": n, "wmax": float(w.max()) if w.size else 0.0}


def check_sample_weight_part(col: pd.Series, name: str) -> np.ndarray:
    """One partition's weights: finite and non-negative (the column named in errors)."""
    w = col.to_numpy(dtype=np.float64, na_value=np.nan)
    if not np.all(np.isfinite(w)):
        raise ValueError(f"sample_weight column '{name}' has missing or infinite values.")
    if np.any(w < 0):
        raise ValueError(f"sample_weight column '{name}' must be non-negative.")
    return w


def _partition_summary(frame: pd.DataFrame, plan: _Plan) -> dict:
    """Pass 2: the summary states of one partition."""
    q = None
    if plan.weight_column is not None and plan.shift is not None:
        w = check_sample_weight_part(frame[plan.weight_column], plan.weight_column)
        q = to_fixed(w, plan.shift)
    ctx = _summary_context(plan.n_bins, plan.missing, q, plan.max_distinct, plan.sketch_size)
    ctx |= literal_context(plan.aliases)
    data = _prepare(frame, plan)
    try:
        with FORMULAIC_LOCK:
            mm = model_matrix(plan.rhs, data, context=ctx, na_action="ignore")
    except FormulaicError as exc:
        raise unwrap(exc, plan.aliases) from exc
    state = mm.model_spec.transform_state
    own = {k: v for k, v in state.items() if isinstance(v, dict) and v.get(BINARSITY_MARK) in ("bin", "C")}
    return {"rows": len(frame), "states": own}


def _tree(dask: Any, leaves: list, split_every: int = SPLIT_EVERY) -> Any:
    level = list(leaves)
    merge = dask.delayed(_merge_nodes, pure=True)
    while len(level) > 1:
        level = [merge(*level[i : i + split_every]) for i in range(0, len(level), split_every)]
    return level[0]


def _final_state(key: str, st: dict, weighted: bool, aliases: dict | None) -> dict:
    """The transform state of one term, as the in-memory ``glm()`` would have learned it."""
    name = st["column"]
    label = f"column '{unalias(name, aliases, quote=False)}'"
    if st[BINARSITY_MARK] == "bin":
        s: ValueSummary = st["summary"]
        if s.values.size == 0:
            raise ValueError(f"{label} has only missing values.")
        edges, _ = cuts_from_summary(s, st["n_bins"], st["min_count"], weighted, label)
        out = {
            BINARSITY_MARK: "bin",
            "edges": edges,
            "n_bins": st["n_bins"],
            "min_count": st["min_count"],
            "missing": st["missing"],
            "has_missing_level": bool(s.nan_rows > 0 and st["missing"] == "separate"),
            "column": name,
            "data_min": float(s.vmin),
            "data_max": float(s.vmax),
        }
        dist = distinct_per_bin(s, edges)
        if dist is not None:
            out["distinct"], out["single_values"] = dist
        out["_exact"] = bool(s.exact)
        out["_rank_error"] = float(s.rank_error)
        return out
    learned = list(st["seen"]) if st["ordered"] else sorted(st["seen"], key=sort_key)
    if not learned:
        raise ValueError(f"{label} has no non-missing values.")
    out = {
        BINARSITY_MARK: "C",
        "levels": learned,
        "has_missing_level": bool(st["any_na"]),
        "column": name,
        "missing": st["missing"],
    }
    if st["given"]:
        out["reference"] = resolve_reference(st["reference"], learned, name)
    return out


def _refuse_unsupported(spec_rhs: Any, aliases: dict | None) -> None:
    """Terms whose state formulaic would learn per partition are refused by name."""
    for st in spec_rhs.structure:
        for factor in st.term.factors:
            expr = factor.expr
            state = spec_rhs.transform_state.get(expr)
            if isinstance(state, dict) and state and state.get(BINARSITY_MARK) is None:
                raise ValueError(
                    f"term '{unalias(str(st.term), aliases)}' is not supported on a Dask "
                    "DataFrame: its transform learns from the data, and would learn "
                    "something different in every partition. Supported terms: bin(), C(), "
                    "numeric terms (x, log(x), x:z, I(...)) and offset()."
                )
    for expr, (kind, _) in (spec_rhs.encoder_state or {}).items():
        if getattr(kind, "value", kind) == "categorical":
            raise ValueError(
                f"term '{unalias(expr, aliases)}' is encoded by formulaic as a categorical, "
                "which is not supported on a Dask DataFrame (its levels would be learned per "
                "partition): write C(column) as a term of its own."
            )
    for key, state in spec_rhs.transform_state.items():
        if isinstance(state, dict) and state and state.get(BINARSITY_MARK) is None:
            raise ValueError(
                f"'{unalias(key, aliases)}' is not supported on a Dask DataFrame: its "
                "transform learns from the data in every partition. Supported terms: bin(), "
                "C(), numeric terms and offset()."
            )


@dataclass
class DaskFormula:
    """The formula's design on a Dask DataFrame (see the module docstring).

    Attributes
    ----------
    spec : DesignSpec
        The replayable recipe (identical to the in-memory one for exact binning).
    response : Response
        How the response was read.
    design : DaskDesign
        Codes per partition (``kinds`` filled in by the model).
    weight_column, offset_column : str or None
        The columns given as ``sample_weight`` / ``offset``.
    exact : dict
        Per ``bin()`` column, whether its cut points are exact (False: sketch), and
        ``rank_error`` its bound.
    """

    spec: DesignSpec
    response: Response
    design: DaskDesign
    weight_column: str | None
    offset_column: str | None
    exact: dict


def _column_arg(value: Any, name: str, columns: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError(
            f"{name}: on a Dask DataFrame give the name of a column of the data "
            f"(e.g. {name}='w'), not values; got {type(value).__name__}."
        )
    if value not in columns:
        raise ValueError(f"{name}={value!r} is not a column of the data." + did_you_mean(
            [value], columns))  # fmt: skip
    return value


def dask_formula_design(
    formula: str,
    data: Any,
    *,
    family: Any,
    sample_weight: Any = None,
    offset: Any = None,
    n_bins: int = 50,
    missing: str = "error",
    max_distinct: int | None = None,
    sketch_size: int | None = None,
) -> DaskFormula:
    """Learn a formula's design on a Dask DataFrame (three passes; module docstring).

    Parameters
    ----------
    formula : str
        ``"y ~ terms"`` with the supported terms.
    data : dask.dataframe.DataFrame
        The training data.
    family : Family
        Reads and validates the response.
    sample_weight, offset : str, optional
        Names of columns of ``data``.
    n_bins : int, default=50
        Bins of ``bin(x)`` terms that do not give their own.
    missing : {"error", "separate"}, default="error"
        Missing values in ``bin()``/``C()`` columns.
    max_distinct : int, optional
        Features with at most this many distinct values are binned exactly (default
        ``_dask.MAX_DISTINCT``, 100,000).
    sketch_size : int, optional
        Values kept by a quantile sketch, rank error 1/sketch_size per merge level
        (default ``_dask.SKETCH_SIZE``, 16,384).

    Returns
    -------
    DaskFormula
    """
    dask = _dask()
    from . import _dask as bounds

    max_distinct = bounds.MAX_DISTINCT if max_distinct is None else max_distinct
    sketch_size = bounds.SKETCH_SIZE if sketch_size is None else sketch_size
    if not isinstance(formula, str):
        raise TypeError(f"formula must be a string; got {type(formula).__name__}.")
    if not is_dask_collection(data) or not hasattr(data, "columns"):
        raise TypeError(f"data must be a Dask DataFrame here; got {type(data).__name__}.")
    if missing == "drop":
        raise ValueError(
            "missing='drop' is not supported on a Dask DataFrame: drop the incomplete rows "
            "first (data.dropna(subset=[...])), or use missing='separate'."
        )
    validate_n_bins(n_bins, "glm()", missing)
    if missing not in MISSING_POLICIES:
        raise ValueError(f"missing must be one of {MISSING_POLICIES}; got {missing!r}.")
    for name, value in (("max_distinct", max_distinct), ("sketch_size", sketch_size)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 16:
            raise ValueError(f"{name} must be an integer ≥ 16; got {value!r}.")
    columns = list(data.columns)
    weight_column = _column_arg(sample_weight, "sample_weight", columns)
    offset_column = _column_arg(offset, "offset", columns)
    named = [c for c in (weight_column, offset_column) if c is not None]
    meta = data._meta
    source, aliases, shadowed = alias_names(expand_dot(formula, meta, named), meta.columns)
    try:
        parsed = Formula(source)
    except (FormulaicError, SyntaxError, ValueError) as exc:
        msg = unalias(clean_message(exc), aliases)
        raise ValueError(f"cannot parse formula {formula!r}: {msg}") from None
    if not hasattr(parsed, "lhs") or len(parsed.lhs) == 0:
        raise ValueError(f"formula {formula!r} has no response; write 'y ~ terms'.")
    lhs_cols = required_columns(parsed, "lhs", aliases)
    rhs_cols = required_columns(parsed, "rhs", aliases)
    absent = [c for c in lhs_cols + rhs_cols if c not in columns]
    if absent:
        raise ValueError(
            f"formula {formula!r} names column(s) {absent} that are not in the data."
            + did_you_mean(absent, columns)
        )
    lhs = " + ".join(term_str(t) for t in parsed.lhs)
    if lhs.replace(" ", "").startswith("cbind("):
        raise ValueError(
            "cbind(successes, failures) responses are not supported on a Dask DataFrame: "
            "give the proportion as the response and the trials as sample_weight."
        )
    if lhs in meta.columns and not (
        pd.api.types.is_numeric_dtype(meta[lhs].dtype)
        or pd.api.types.is_bool_dtype(meta[lhs].dtype)
    ):
        raise ValueError(
            f"response '{lhs}' has dtype {meta[lhs].dtype}: on a Dask DataFrame the response "
            f"must be numeric or boolean; write e.g. I({lhs} == 'yes')."
        )
    rhs = rewrite_rhs(parsed, with_aliases(meta, aliases, shadowed))
    plan = _Plan(lhs, rhs, aliases or None, shadowed or None, int(n_bins), missing, family,
                 weight_column, offset_column, int(max_distinct), int(sketch_size))  # fmt: skip
    plan.floats = tuple(c for c in dict.fromkeys(lhs_cols + rhs_cols)
                        if c not in categorical_columns(parsed, aliases))  # fmt: skip

    # the formula's structure, unsupported terms and the response, on a few rows
    (head,) = compute(data.partitions[0].head(20, compute=False), what="the first rows")
    if len(head) == 0:
        (head,) = compute(data.head(20, npartitions=-1, compute=False), what="the first rows")
    proto = _prepare(head, plan)
    ctx = _summary_context(plan.n_bins, plan.missing, None, max_distinct, sketch_size)
    ctx |= literal_context(plan.aliases)
    try:
        with FORMULAIC_LOCK:
            mms = model_matrix(f"{lhs} ~ {rhs}", proto, context=ctx, na_action="ignore")
    except FormulaicError as exc:
        raise unwrap(exc, aliases, formula) from exc
    _refuse_unsupported(mms.rhs.model_spec, aliases)
    _, response, _ = read_response(mms.lhs, lhs, family, proto)
    response = Response(name=unalias(response.name, aliases), kind=response.kind,
                        event=response.event, levels=response.levels)  # fmt: skip
    if response.kind == "factor":
        raise ValueError(
            f"response '{response.name}' is categorical: on a Dask DataFrame the response "
            f"must be numeric or boolean; write e.g. I({response.name} == 'yes')."
        )

    parts = data.to_delayed()
    if weight_column is not None:  # pass 1: the fixed point of the weights
        stats = compute(*[dask.delayed(_partition_weights)(p, plan) for p in parts],
                        what="the weights of every partition")  # fmt: skip
        n_total = sum(s["rows"] for s in stats)
        wmax = max(s["wmax"] for s in stats)
        if not wmax > 0:
            raise ValueError(
                f"sample_weight column '{weight_column}' is zero for every row; at least one "
                "must be positive."
            )
        plan.shift = fixed_point_shift(n_total, wmax)
    leaves = [dask.delayed(_partition_summary, pure=True)(p, plan) for p in parts]
    (merged,) = compute(_tree(dask, leaves), what="the summaries of the formula's columns")
    n_rows = int(merged["rows"])
    if n_rows == 0:
        raise ValueError("data has no rows.")

    states = {k: _final_state(k, v, weight_column is not None, aliases)
              for k, v in merged["states"].items()}  # fmt: skip
    exact = {
        unalias(v["column"], aliases, quote=False): {
            "exact": v.pop("_exact"), "rank_error": v.pop("_rank_error")}
        for v in states.values() if v[BINARSITY_MARK] == "bin"
    }  # fmt: skip
    spec_rhs = mms.rhs.model_spec
    full_state = dict(spec_rhs.transform_state)
    full_state.update(states)
    spec_rhs = spec_rhs.update(transform_state=full_state)
    blocks, block_cols, dense_cols, offset_cols, intercept = classify_terms(spec_rhs, None, aliases)
    spec = DesignSpec(
        formula=formula,
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
        float_columns=plan.floats,
    )
    task = dask.delayed(_partition_design, pure=True)
    partitions = [task(p, spec, plan) for p in parts]
    design = DaskDesign(
        block_ptr=spec.block_ptr.astype(np.int64),
        kinds=tuple("tv" if b.kind == "bin" else "free" for b in blocks),
        n_dense=len(dense_cols),
        partitions=partitions,
        n_rows=n_rows,
        labels=spec.param_names(),
        dense_names=list(dense_cols),
    )
    return DaskFormula(spec, response, design, weight_column, offset_column, exact)


def _partition_design(frame: pd.DataFrame, spec: DesignSpec, plan: _Plan) -> dict:
    """Pass 3: one partition's codes, dense columns, response, weights and offset."""
    p = len(spec.blocks)
    n = len(frame)
    if n == 0:
        dtype = code_dtype(max((b.n_levels for b in spec.blocks), default=1))
        q = len(spec.dense_columns)
        return {
            "codes": np.empty((p, 0), dtype=dtype),
            "dense": np.empty((0, q)) if q else None,
            "y": np.empty(0),
            "weight": np.empty(0) if plan.weight_column else None,
            "offset": np.empty(0) if (plan.offset_column or spec.offset_columns) else None,
            "fold": None,
            "offset_arg": np.empty(0) if plan.offset_column else None,
            "offset_terms": np.empty(0) if spec.offset_columns else None,
        }
    design: Design = spec.transform(frame)
    data = _prepare(frame, plan)
    try:
        with FORMULAIC_LOCK:
            lhs = model_matrix(f"{plan.lhs} ~ 1", data, na_action="ignore").lhs
    except FormulaicError as exc:
        raise unwrap(exc, plan.aliases) from exc
    y, _, _ = read_response(lhs, plan.lhs, plan.family, data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plan.family.validate_y(y, proportions=True)
    weight = None
    if plan.weight_column is not None:
        weight = check_sample_weight_part(frame[plan.weight_column], plan.weight_column)
    off_arg = None
    if plan.offset_column is not None:
        off_arg = frame[plan.offset_column].to_numpy(dtype=np.float64, na_value=np.nan)
        if not np.all(np.isfinite(off_arg)):
            raise ValueError(f"offset column '{plan.offset_column}' has missing or infinite "
                             "values.")  # fmt: skip
    total = design.offset
    if off_arg is not None:
        total = off_arg if total is None else total + off_arg
    return {
        "codes": np.ascontiguousarray(design.codes),
        "dense": design.dense,
        "y": np.asarray(y, dtype=np.float64),
        "weight": weight,
        "offset": total,
        "fold": None,
        "offset_arg": off_arg,
        "offset_terms": design.offset,
    }


def collect_design(built: DaskFormula) -> tuple[Design, np.ndarray, np.ndarray | None, Any]:
    """The partitions concatenated in memory: (design, y, sample_weight, offset_arg)."""
    parts = compute(*built.design.partitions, what="collecting the partitions")
    out = concat_partitions(parts, built.design.n_blocks)
    pieces = [p["offset_terms"] for p in parts]
    offset_terms = None if pieces[0] is None else np.concatenate(pieces)
    pieces = [p["offset_arg"] for p in parts]
    off_arg = None if pieces[0] is None else np.concatenate(pieces)
    design = Design(codes=out["codes"], block_ptr=built.spec.block_ptr, dense=out["dense"],
                    offset=offset_terms)  # fmt: skip
    if out["weight"] is not None:
        check_sample_weight(out["weight"], out["y"].shape[0], "the data")
    return design, out["y"], out["weight"], off_arg


# ---------------------------------------------------------------------------------------
# Prediction on a Dask DataFrame
# ---------------------------------------------------------------------------------------


class PartitionPredictor:
    """What a worker needs to predict one partition: the recipe and the coefficients.

    A light copy of the model (no training rows), so that the task graph carries a few
    kilobytes whatever the size of the training data.
    """

    def __init__(self, results: Any, type: str, new_design: Any) -> None:  # noqa: A002
        import copy

        m = copy.copy(results.model)
        d = m.design
        if getattr(d, "on_workers", False):  # a model whose rows stay on the workers
            q = int(d.n_dense)
            m.design = Design(codes=np.zeros((len(d.block_ptr) - 1, 0), dtype=np.uint8),
                              block_ptr=d.block_ptr, dense=np.zeros((0, q)) if q else None,
                              offset=None)  # fmt: skip
        else:
            m.design = Design(codes=np.ascontiguousarray(d.codes[:, :0]),
                              block_ptr=d.block_ptr,
                              dense=None if d.dense is None else d.dense[:0],
                              offset=None)  # fmt: skip
        for name in ("y", "sample_weight", "offset", "offset_arg", "_binned", "_data",
                     "trials", "dask_design", "rows_kept"):  # fmt: skip
            if name in m.__dict__ or getattr(d, "on_workers", False):
                m.__dict__[name] = None
        self.model = m
        self.coef = np.asarray(results.coef, dtype=np.float64)
        self.dense_coef = np.asarray(results.dense_coef, dtype=np.float64)
        self.intercept = float(results.intercept)
        self.type = type
        self.new_design = new_design  # _results._new_design (by reference when pickled)

    def __call__(self, frame: pd.DataFrame) -> pd.Series:
        name = "eta" if self.type == "link" else "mu"
        if len(frame) == 0:
            return pd.Series(np.empty(0), index=frame.index, name=name)
        design, off = self.new_design(self.model, frame, None)
        eta = self.model.linear_predictor(self.coef, self.dense_coef, self.intercept, design, off)
        out = eta if self.type == "link" else self.model.family.mean(eta)
        return pd.Series(out, index=frame.index, name=name)


def predict_dask(results: Any, data: Any, kind: str, offset: Any, new_design: Any) -> Any:
    """``results.predict`` on a Dask DataFrame: a lazy Dask Series, one task per partition.

    ``kind`` is predict's ``type`` ('response' or 'link'). ``new_design(model, frame,
    offset)`` replays the recipe on one partition (``_results._new_design``, passed in so
    that this module does not import the results).
    """
    import dask.dataframe as dd

    if offset is not None:
        raise TypeError(
            "offset: on a Dask DataFrame the offset is read from the data; fit with "
            "offset='column' (or an offset() term) instead of passing values."
        )
    if not isinstance(data, dd.DataFrame):  # a Dask Series has .columns ([None]) too
        raise TypeError(f"newdata must be a Dask DataFrame; got {type(data).__name__}.")
    fn = PartitionPredictor(results, kind, new_design)
    name = "eta" if kind == "link" else "mu"
    return data.map_partitions(fn, meta=pd.Series(np.empty(0), name=name))
