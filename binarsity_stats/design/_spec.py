"""One model representation: a versioned, JSON-serialisable description of a fitted model.

``to_spec()`` of formula results (``BinarsityResults``) and of the estimators
(``BinarsityGLM``, ``BinarsityClassifier``) returns the same kind of document, and
:func:`from_spec` rebuilds from it a :class:`SpecModel` that predicts bit for bit what
the fitted object predicts. Exporters (SQL, scorecards, a standalone scorer) read only
this document; it holds plain JSON values (numbers, strings, booleans, lists, dicts),
floats written with ``repr`` so that ``json`` round trips them exactly.

The document (``format_version`` 2; the JSON schema ``binarsity_stats/spec.schema.json``
describes it, and the one validator ``standalone_scorer.validate`` enforces it)::

    {"format": "binarsity_stats.model_spec", "format_version": 2,
     "package_version": "0.2.0", "source": "BinarsityResults",
     "family": {"name": "poisson", "link": "log"},          # + "statsmodels": {...}
     "intercept": -0.42, "fit_intercept": true, "lam": 0.001,
     "response": {"name": "y"},                              # + "classes" / "event"
     "terms": [
       {"kind": "bin", "name": "bin(log(x1), 8)", "column": "x1",
        "input": {"column": "x1", "transform": "log"},
        "edges": [...], "intervals": "right-closed", "missing_level": false,
        "penalty": "tv", "theta": [...]},
       {"kind": "categorical", "name": "C(g)", "column": "g",
        "levels": ["a", "b"], "missing_level": false, "unseen": "error",
        "reference": "b", "penalty": "free", "theta": [...]},      # reference: optional
       {"kind": "linear", "name": "x:z", "factors": [{"column": "x"}, {"column": "z"}],
        "coef": 0.3},
       {"kind": "pair", "name": "bin(a, 3):bin(b, 2)",
        "axes": [{"column": "a", "input": {"column": "a"}, "edges": [0.1, 0.5],
                  "missing_level": false},
                 {"column": "b", "input": {"column": "b"}, "edges": [2.0],
                  "missing_level": false}],
        "intervals": "right-closed", "penalty": "grid",
        "table": [[0.2, -0.1], [null, 0.0], [-0.3, 0.4]]}],
     "offset": {"terms": [{"column": "exposure", "transform": "log"}], "column": null},
     "missing": {"drop_columns": ["x1", "g"]},               # optional
     "column_kinds": {"x1": "float", "flag": "bool"},        # optional
     "penalty": {"weights": "balanced"}}                     # optional; + "relax": γ

Names are data, never code: an **input** (what a binned term bins, a linear factor, an
offset term) is a column reference — a name, or a position for an estimator fitted on
an array — with at most one transform from a closed list, which ``from_spec``, the
standalone scorer and the SQL export each implement::

    {"column": "x"}                                   # the column itself
    {"column": "x", "transform": "log"}               # log, log1p, log2, log10, exp,
                                                      # expm1, sqrt, abs (NumPy's)
    {"column": "x", "transform": "power", "exponent": 2}           # x ** 2
    {"column": "x", "transform": "scale", "center": 3, "scale": 2} # (x - 3) / 2
    {"transform": "sub", "operands": ["a", "b"]}      # add, sub, mul, div of two operands,
    {"transform": "div", "operands": [1, "x"]}        # each a column (string) or a number

``to_spec()`` refuses any other expression by name when it writes the description
(write it as a data column instead). Descriptions of ``format_version`` 1 (expressions
as text) are read by translating each expression with a whitelisting walk of its
syntax tree (never evaluated); what it cannot translate is refused naming the field.
Every reader validates a description before use — types, finiteness, strictly
increasing cut points, consistent lengths, sizes (``standalone_scorer.LIMITS``: at
most 65,536 cut points or levels per term, 10,000 terms, strings of 1,000 characters)
— and refuses a bad one with a ``ValueError`` naming the field path
(``terms[2].edges``).

The linear predictor of a row is, in this order (the order the fitted objects sum in)::

    η = intercept + offset + Σ_terms θ_term[code] + Σ_linear coef · Π factors

* ``bin``: ``code = searchsorted(edges, x, side="left")`` with x the value of its
  ``input`` — level k holds (edges[k−1], edges[k]], the end levels reach ±∞ — and, with
  ``missing_level``, NaN gets the last code ``len(edges) + 1``. ``column`` names the
  column the term reads (labels, messages).
* ``penalty`` of a ``bin`` or ``categorical`` term: the block's kind in the engine
  (``_blocks.KINDS``): "tv", the TV chain of the paper; "free", unpenalised levels (a
  ``C()`` term; "tv" when a ``penalty_weights`` array penalised its levels) — and the
  kinds registered later (monotone chains, chains with breaks). Prediction does not
  depend on it.
* ``bin`` with ``"by": {"column": "g", "levels": [...], "main": false}`` (a varying
  coefficient ``bin(x):C(g)``): one chain of ``len(edges) + 1`` levels per level of g
  (no missing level), ``theta`` = the chains one after the other; the code of a row is
  ``i · (len(edges) + 1) + code(x)``, i the position of its g among ``levels`` (an
  unseen level is an error). With ``"main": true`` (a main ``bin(x)`` term too) the
  first level of g has one level, code 0, and level i ≥ 1 starts at
  ``1 + (i − 1) · (len(edges) + 1)``.
* ``pair`` (a two-feature step surface ``bin(a):bin(b)``, design.md §10): each of its
  two ``axes`` is binned as a ``bin`` term without missing level (k =
  ``searchsorted(edges, x, side="left")``; a missing value is an error, or NaN under
  ``missing.drop_columns``), and the term adds ``table[k][l]``, the value of the row's
  cell (k, l) of the K_a × K_b grid (K = ``len(edges) + 1`` per axis; at most
  ``LIMITS["cells"]`` = 65,536 cells). A cell that held no training row is ``null``: it
  carries no parameter and adds **0** to η (the surface is the pure interaction, zero
  on average over each row and column of the grid), which is what the fitted model's
  ``predict`` gives for such a row — also for values beyond the training range, which
  fall in the end bins of each axis.
* ``categorical``: code = position of the value of ``column`` in ``levels``; NaN → the
  missing level (last) when there is one; ``unseen`` says what an unseen value does
  ("error"). ``reference`` (optional) is the level of a ``C(g, Treatment(level))``
  term, the one the reference-coded tables compare the others with; θ and predictions
  do not depend on it.
* ``linear``: the product of its factors, each an input, or, for a categorical
  factor of an interaction (``z:g`` → ``z:g[a]``...), the 0/1 indicator of one level,
  ``{"column": "g", "levels": ["a", "b", "c"], "level": "a"}``.
* ``offset``: the sum of the ``offset(...)`` terms' inputs, plus the data column
  ``offset.column`` when the model was given ``offset="column"``.
* ``family``: the mean is the inverse link of η (statsmodels families keep their class,
  link and parameters, e.g. Tweedie's ``var_power``).
* ``missing`` (optional): a model fitted with ``missing="drop"`` (or ``bin(x,
  missing="drop")``) lists the data columns whose missing values dropped training rows;
  a new row missing a value in one of them is predicted as NaN (R's ``na.exclude``),
  the other rows as usual. Without it, a missing value outside a missing level is an
  error.
* ``column_kinds`` (optional; descriptions written before it lack it): the kind of
  each data column the model reads, as it was at fit time — ``"bool"``, ``"int"``,
  ``"float"``, ``"category"`` or ``"object"``. Prediction does not read it; exporters
  do: a boolean column used as a number is 1/0 (``CASE WHEN flag THEN 1.0 …`` in SQL,
  where DuckDB and PostgreSQL refuse ``double * boolean``), and a float column may
  hold NaN, which PostgreSQL and DuckDB do not treat as NULL.
* ``theta`` of a term with a missing level has ``len(edges) + 2`` values (bin) or
  ``len(levels) + 1`` (categorical); the missing level is last.

Estimators have one term per feature in column order — ``bin``, ``categorical``
(``categorical_features``) or ``linear`` (``linear_features``, written after the
others: the order of the coefficient vector) — whose ``column`` (and input) is the
feature name, or its position when fitted on an array; no offset terms (an offset is passed to
``predict``), and a classifier's ``response.classes`` (``classes[1]`` is the event).

Layout: this module writes descriptions (:func:`make_spec` and the translation of
formula expressions into inputs); reading one (:func:`from_spec`, :class:`SpecModel`,
``check_spec``) is in ``_spec_model.py``, whose public names are re-exported here.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .._version import __version__
from ._spec_model import SpecModel, check_spec, from_spec
from .standalone_scorer import ARITHMETIC, UNARY, expression_input

__all__ = ["SPEC_FORMAT", "SPEC_VERSION", "SpecModel", "from_spec", "make_spec"]


SPEC_FORMAT = "binarsity_stats.model_spec"
SPEC_VERSION = 2
#: The kinds of data column ``column_kinds`` records
COLUMN_KINDS = ("bool", "int", "float", "category", "object")


def _floats(values: Any) -> list[float]:
    return [float(v) for v in np.asarray(values, dtype=np.float64).ravel()]


def json_value(value: Any) -> Any:
    """A category level or label as a plain JSON value (str, int, float, bool or None).

    Parameters
    ----------
    value : Any
        A NumPy or Python scalar.

    Returns
    -------
    Any
        The same value as a Python scalar; anything else as its ``str``.
    """
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    return str(value)


def family_spec(family: Any) -> dict[str, Any]:
    """The ``family`` entry: name and link, and a statsmodels family's class and parameters.

    Parameters
    ----------
    family : Family
        The fitted model's family.

    Returns
    -------
    dict
        ``{"name", "link"}`` (+ ``"statsmodels": {"family", "link", "params"}``).
    """
    out: dict[str, Any] = {"name": str(family.name), "link": str(family.link)}
    key = getattr(family, "_key_", None)
    if key is not None:  # a statsmodels family instance (generic path)
        fam, link, params = key
        out["statsmodels"] = {
            "family": fam, "link": link, "params": {k: float(v) for k, v in params},
        }  # fmt: skip
    return out


def parse_expression(expr: str) -> tuple[ast.expr, dict[str, str]] | None:
    """Parse a formula expression as Python, backtick names standing in as placeholders.

    Parameters
    ----------
    expr : str
        An expression as formulaic writes it (``log(x)``, ```x 1` * 2``).

    Returns
    -------
    tuple or None
        The expression's AST and the map placeholder → backtick name (``"__bq0__"`` →
        ```x 1```); None when it is not valid Python.
    """
    names: dict[str, str] = {}
    source = expr
    for i, quoted in enumerate(re.findall(r"`[^`]*`", expr)):  # not Python names
        names[f"__bq{i}__"] = quoted
        source = source.replace(quoted, f"__bq{i}__", 1)
    try:
        return ast.parse(source, mode="eval").body, names
    except SyntaxError:
        return None


def argument_expr(term: str) -> str:
    """The first argument of a call term: ``bin(log(x), 8)`` → ``log(x)``.

    Parameters
    ----------
    term : str
        A ``bin(...)`` or ``C(...)`` term as formulaic writes it.

    Returns
    -------
    str
        The argument's source text (the term itself when it is not a call).
    """
    parsed = parse_expression(term)
    if parsed is None or not (isinstance(parsed[0], ast.Call) and parsed[0].args):
        return term
    node, names = parsed
    arg = ast.unparse(node.args[0])
    for key, quoted in names.items():
        arg = arg.replace(key, quoted)
    return arg


def pair_arguments(factor: str) -> tuple[str, str]:
    """The two axes' expressions of a pair term's factor ``bin(a, n, pair=b, pair_bins=m)``.

    Parameters
    ----------
    factor : str
        The factor as the formula layer rewrote ``bin(a, n):bin(b, m)`` (aliased names,
        backticks as written).

    Returns
    -------
    tuple of str
        ``(a, b)``: the source text of the first argument and of ``pair=``.

    Raises
    ------
    ValueError
        A factor that is not such a call.
    """
    parsed = parse_expression(factor)
    node = None if parsed is None else parsed[0]
    pair = [k.value for k in getattr(node, "keywords", ()) if k.arg == "pair"]
    if not (isinstance(node, ast.Call) and node.args and len(pair) == 1):
        raise ValueError(f"{factor!r} is not a pair term's factor.")
    out = []
    for arg in (node.args[0], pair[0]):
        text = ast.unparse(arg)
        for key, quoted in parsed[1].items():
            text = text.replace(key, quoted)
        out.append(text)
    return out[0], out[1]


#: What an input may be, as a refusal says it
_DESCRIBABLE = (
    "a column, or one of " + ", ".join(UNARY) + " of a column, a column to a constant "
    "power, (x - c) / s, or "
    + " ".join({"add": "+", "sub": "-", "mul": "*", "div": "/"}[op] for op in ARITHMETIC)
    + " of two operands (columns or numbers)"
)


def describe_input(
    expr: str, term: str, aliases: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The input of a description for a formula expression, or a refusal by name.

    Parameters
    ----------
    expr : str
        The expression as formulaic writes it (``log(x)``, ``I(z ** 2)``, ```a-b```).
    term : str
        The term it belongs to, for the message.
    aliases : dict, optional
        Identifier → column name, for the identifiers a formula used in place of names.

    Returns
    -------
    dict
        ``{"column": ...}`` with at most one transform (see the module docstring).

    Raises
    ------
    ValueError
        ``"term 'I(sin(x))': its input 'sin(x)' cannot be described ..."``: anything
        outside the closed list; write such a value as a data column.
    """
    out = expression_input(expr, aliases)
    if out is None:
        raise ValueError(
            f"term {term!r}: its input {expr!r} cannot be described in a model description "
            f"(only {_DESCRIBABLE} can be exported); compute it as a data column and fit "
            "on that column."
        )
    return out


def column_input(column: Any) -> dict[str, Any]:
    """The input that reads one data column as it is (a name or an array position).

    Parameters
    ----------
    column : str or int
        The column.

    Returns
    -------
    dict
        ``{"column": column}``.
    """
    return {"column": column}


def factor_input(factor: Any, term: str, aliases: Mapping[str, str] | None = None) -> dict:
    """The input of a formulaic factor: a column looked up by name, or an expression.

    Parameters
    ----------
    factor : formulaic Factor
        A numeric factor of a formula term.
    term : str
        The term, for a refusal.
    aliases : dict, optional
        Identifier → column name.

    Returns
    -------
    dict
        The input (see :func:`describe_input`).
    """
    method = getattr(getattr(factor, "eval_method", None), "value", None)
    if method == "lookup":  # a column named as it is (``a-b``, ``log(x)``): no parsing
        return column_input((aliases or {}).get(factor.expr, factor.expr))
    return describe_input(factor.expr, term, aliases)


def column_kind(values: Any) -> str:
    """The kind of a data column, as ``column_kinds`` of a description records it.

    Parameters
    ----------
    values : Series or array-like
        A training column.

    Returns
    -------
    str
        ``"bool"``, ``"int"``, ``"float"``, ``"category"`` or ``"object"`` (anything else:
        strings, mixed values).
    """
    import pandas as pd

    dtype = values.dtype if hasattr(values, "dtype") else np.asarray(values).dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return "category"
    if pd.api.types.is_bool_dtype(dtype):
        return "bool"
    if pd.api.types.is_integer_dtype(dtype):
        return "int"
    if pd.api.types.is_float_dtype(dtype):
        return "float"
    return "object"


def column_kinds(data: Any, columns: Sequence[Any]) -> dict[str, str] | None:
    """``column_kinds`` of a description: the kind of each of ``columns`` found in ``data``.

    Parameters
    ----------
    data : DataFrame or mapping of columns
        The training data.
    columns : sequence of str
        The data columns the model reads.

    Returns
    -------
    dict or None
        Column name → kind (see :func:`column_kind`); None when no column is found.
    """
    keys = data.columns if hasattr(data, "columns") else data
    out = {str(c): column_kind(data[c]) for c in columns if isinstance(c, str) and c in keys}
    return out or None


def make_spec(
    *,
    source: str,
    family: Any,
    intercept: float,
    fit_intercept: bool,
    terms: list[dict[str, Any]],
    lam: float | None = None,
    response: dict[str, Any] | None = None,
    offset_terms: Sequence[str] = (),
    offset_column: str | None = None,
    penalty: Mapping[str, Any] | None = None,
    drop_columns: Sequence[Any] | None = None,
    kinds: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Assemble (and check) a model description.

    Parameters
    ----------
    source : str
        The class that wrote it (``"BinarsityResults"``, ``"BinarsityGLM"``...).
    family : Family
        Distribution and link.
    intercept : float
        β0 as the fitted object reports it.
    fit_intercept : bool
        Whether the model has an intercept.
    terms : list of dict
        The terms, in the order of the fitted coefficient vector.
    lam : float, optional
        λ of the fit.
    response : dict, optional
        ``name`` and, for classifiers, ``classes``.
    offset_terms : sequence of str, optional
        Expressions of ``offset(...)`` terms.
    offset_column : str, optional
        Data column read as an offset at predict time.
    penalty : dict, optional
        How the coefficients were penalised (descriptive; prediction does not read it):
        ``weights`` (``"theory"``, ``"uniform"``, ``"balanced"``, ``"adaptive"`` or
        ``"array"``) and, for a relaxed fit, ``relax`` (its γ).
    drop_columns : sequence of str, optional
        Data columns whose missing values dropped training rows (``missing="drop"``):
        new rows missing one of them are predicted as NaN.
    kinds : dict, optional
        ``column_kinds``: the kind of each data column read (see :func:`column_kind`).

    Returns
    -------
    dict
        The JSON-serialisable description.
    """
    spec = {
        "format": SPEC_FORMAT,
        "format_version": SPEC_VERSION,
        "package_version": __version__,
        "source": source,
        "family": family_spec(family),
        "intercept": float(intercept),
        "fit_intercept": bool(fit_intercept),
        "lam": None if lam is None else float(lam),
        "response": dict(response or {}),
        "terms": terms,
        "offset": {"terms": list(offset_terms), "column": offset_column},
    }
    if penalty is not None:
        spec["penalty"] = {str(k): json_value(v) for k, v in penalty.items()}
    if drop_columns:
        spec["missing"] = {"drop_columns": [json_value(c) for c in drop_columns]}
    if kinds:
        spec["column_kinds"] = {str(k): str(v) for k, v in kinds.items()}
    check_spec(spec)
    return spec


def bin_term(
    name: str,
    source: Mapping[str, Any],
    column: Any,
    edges: Any,
    missing_level: bool,
    theta: Any,
    penalty: str = "tv",
) -> dict[str, Any]:
    """A ``bin`` term entry (see the module docstring).

    Parameters
    ----------
    name : str
        Term label.
    source : dict
        The input binned: a column reference with at most one transform (see
        :func:`describe_input`, :func:`column_input`).
    column : str or int
        The data column it reads (a position for an estimator fitted on an array).
    edges : array-like
        Interior cut points, increasing.
    missing_level : bool
        Whether NaN has a level (the last).
    theta : array-like
        The levels.
    penalty : str, default="tv"
        The block's kind in the engine (``_blocks.KINDS``).

    Returns
    -------
    dict
        The entry.
    """
    return {
        "kind": "bin", "name": str(name), "column": column, "input": dict(source),
        "edges": _floats(edges), "intervals": "right-closed",
        "missing_level": bool(missing_level), "penalty": str(penalty), "theta": _floats(theta),
    }  # fmt: skip


def pair_term(
    name: str,
    axes: Sequence[tuple[Mapping[str, Any], Any, Any]],
    cells: Sequence[int],
    theta: Any,
    penalty: str = "grid",
) -> dict[str, Any]:
    """A ``pair`` term entry (see the module docstring).

    Parameters
    ----------
    name : str
        Term label (``bin(a, 8):bin(b, 8)``).
    axes : sequence of two tuples
        ``(input, column, edges)`` of each axis: the input binned (a column reference
        with at most one transform), the data column it reads, its interior cut points.
    cells : sequence of int
        The observed cells, flat ids ``k · K_b + l``, in the order of ``theta``.
    theta : array-like
        One value per observed cell (a block's trailing level for the cells without
        training rows, which carries no parameter, is not passed).
    penalty : str, default="grid"
        The block's kind in the engine.

    Returns
    -------
    dict
        The entry: the table holds ``null`` for the cells without training rows.
    """
    ka, kb = (len(edges) + 1 for _, _, edges in axes)
    table: list[list[float | None]] = [[None] * kb for _ in range(ka)]
    values = _floats(theta)
    if len(values) != len(cells):
        raise ValueError(f"term {name!r}: {len(values)} values for {len(cells)} cells.")
    for cell, value in zip(cells, values, strict=True):
        k, m = divmod(int(cell), kb)
        table[k][m] = value
    return {
        "kind": "pair", "name": str(name),
        "axes": [{"column": column, "input": dict(source), "edges": _floats(edges),
                  "missing_level": False} for source, column, edges in axes],
        "intervals": "right-closed", "penalty": str(penalty), "table": table,
    }  # fmt: skip
