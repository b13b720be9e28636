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
        "coef": 0.3}],
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
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ._design import BinnedDesign
from ..core._validation import check_offset, code_dtype
from .._version import __version__
from .standalone_scorer import ARITHMETIC, UNARY, expression_input, validate

__all__ = ["SPEC_FORMAT", "SPEC_VERSION", "SpecModel", "from_spec", "make_spec"]

SPEC_FORMAT = "binarsity_stats.model_spec"
SPEC_VERSION = 2
#: The kinds of data column ``column_kinds`` records
COLUMN_KINDS = ("bool", "int", "float", "category", "object")


# ---------------------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------------------


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


def _family_from_spec(entry: Mapping[str, Any]) -> Any:
    from ..families._families import get_family

    sm = entry.get("statsmodels")
    if sm is not None:
        from ..families._statsmodels import CONVEX_LINKS, _from_key

        # names looked up in statsmodels' modules: only the known families and links
        if sm["link"] not in CONVEX_LINKS.get(sm["family"], ()):
            raise ValueError(
                f"model description, family.statsmodels: family {sm['family']!r} with link "
                f"{sm['link']!r} is not supported (known: {sorted(CONVEX_LINKS)})."
            )
        return _from_key(sm["family"], sm["link"], tuple(sorted(sm["params"].items())))
    try:
        return get_family(entry["name"])
    except (TypeError, ValueError) as exc:
        raise ValueError(f"model description, family.name: {exc}") from None


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


# ---------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------


def check_spec(spec: Any) -> dict[str, Any]:
    """Validate a model description and return it in the current format.

    Every reader calls it before using anything of a description. It is the one
    validator of the format, ``standalone_scorer.validate`` (shared with the standalone
    scorer, which must run without the package), plus the family lookup.

    Parameters
    ----------
    spec : dict
        A description (``format_version`` 1 is translated to 2).

    Returns
    -------
    dict
        The checked description (a new dict for a version 1 one).

    Raises
    ------
    ValueError
        Naming the field path and what is wrong (format, version, a term, a size).
    """
    if isinstance(spec, Mapping) and not isinstance(spec, dict):
        spec = dict(spec)
    checked = validate(spec)
    _family_from_spec(checked["family"])  # an unknown family is refused here, by name
    return checked


def from_spec(spec: Mapping[str, Any] | str) -> SpecModel:
    """Rebuild a model from its description (a dict or its JSON text).

    The description is data, never code: it is validated (types, sizes, finite numbers,
    increasing cut points) and its inputs are column references with one transform of
    a closed list; nothing in it is evaluated.

    Parameters
    ----------
    spec : dict or str
        What ``to_spec()`` returned (or ``json.dumps`` of it).

    Returns
    -------
    SpecModel
        Predicts exactly what the described model predicted.

    Raises
    ------
    ValueError
        A description that is not valid JSON or not valid, naming the field path.

    Examples
    --------
    >>> import json
    >>> from binarsity_stats import from_spec
    >>> model = from_spec(json.loads(text))  # doctest: +SKIP
    >>> model.predict(new_data)  # doctest: +SKIP
    """
    if isinstance(spec, str | bytes):
        spec = load_json(spec)
    return SpecModel(spec)


def load_json(text: str | bytes) -> Any:
    """Parse a description's JSON text, refusing what ``json`` cannot bound.

    Parameters
    ----------
    text : str or bytes
        JSON text.

    Returns
    -------
    Any
        The parsed value (validate it with :func:`check_spec`).

    Raises
    ------
    ValueError
        Invalid JSON or nesting deeper than Python's recursion limit.
    """
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("model description: the JSON is nested too deeply.") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"model description: not valid JSON ({exc}).") from None


def _column(data: Any, key: Any) -> Any:
    """Column ``key`` of a DataFrame / mapping, or column ``key`` (an int) of an array."""
    if isinstance(key, int) and not (hasattr(data, "columns") or isinstance(data, Mapping)):
        arr = np.asarray(data)
        if arr.ndim != 2 or key >= arr.shape[1]:
            raise ValueError(f"X needs at least {key + 1} columns (2-D); got shape {arr.shape}.")
        return arr[:, key]
    columns = data.columns if hasattr(data, "columns") else data
    if key not in columns:
        raise ValueError(f"column {key!r} (used by the model) is missing from the data.")
    return data[key]


def _numeric(values: Any, label: Any) -> np.ndarray:
    if hasattr(values, "to_numpy"):
        try:
            return values.to_numpy(dtype=np.float64, na_value=np.nan)
        except (TypeError, ValueError):
            raise TypeError(f"column {label!r} must be numeric.") from None
    arr = np.asarray(values)
    if arr.dtype.kind not in "biuf":
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"column {label!r} must be numeric.") from None
    return np.ascontiguousarray(arr, dtype=np.float64).ravel()


_UFUNCS = {
    "log": np.log, "log1p": np.log1p, "log2": np.log2, "log10": np.log10, "exp": np.exp,
    "expm1": np.expm1, "sqrt": np.sqrt, "abs": np.abs,
}  # fmt: skip
_ARITHMETIC = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
}  # fmt: skip


def input_values(data: Any, source: Mapping[str, Any]) -> np.ndarray:
    """The values of a description's input over the rows of ``data``.

    Parameters
    ----------
    data : DataFrame, mapping of columns or 2-D array
        The rows.
    source : dict
        A validated input: a column reference with at most one transform.

    Returns
    -------
    ndarray of shape (n,)
        float64; NaN outside a transform's domain (as NumPy computes it), ±inf at its
        poles — the callers refuse those rows as the fitted model does.
    """
    transform = source.get("transform")
    with np.errstate(all="ignore"):
        if transform in _ARITHMETIC:
            a, b = (_numeric(_column(data, op), op) if isinstance(op, str) else op
                    for op in source["operands"])  # fmt: skip
            return np.asarray(_ARITHMETIC[transform](a, b), dtype=np.float64)
        x = _numeric(_column(data, source["column"]), source["column"])
        if transform is None:
            return x
        if transform == "power":
            return np.asarray(x ** source["exponent"], dtype=np.float64)
        if transform == "scale":
            return (x - source["center"]) / source["scale"]
        return _UFUNCS[transform](x)


class SpecModel:
    """A model rebuilt from its description: predicts, and writes the description back.

    Parameters
    ----------
    spec : dict
        A description (see :func:`from_spec`); validated before use.

    Attributes
    ----------
    spec : dict
        The description.
    family : Family
        The distribution and link.
    """

    def __init__(self, spec: Mapping[str, Any]) -> None:
        # validated first (and translated from format 1); then a private copy
        self.spec = json.loads(json.dumps(check_spec(spec)))
        self.family = _family_from_spec(self.spec["family"])
        blocks = [t for t in self.spec["terms"] if t["kind"] != "linear"]
        sizes = [len(t["theta"]) for t in blocks]
        self._block_ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
        self._theta = np.asarray([v for t in blocks for v in t["theta"]], dtype=np.float64)
        self._blocks = blocks
        self._linear = [t for t in self.spec["terms"] if t["kind"] == "linear"]
        self._coef = np.asarray([t["coef"] for t in self._linear], dtype=np.float64)

    def to_spec(self) -> dict[str, Any]:
        """The description this model was built from.

        Returns
        -------
        dict
            A copy.
        """
        return json.loads(json.dumps(self.spec))

    # -- the pieces of η ------------------------------------------------------------------
    def _n_rows(self, data: Any) -> int:
        if hasattr(data, "shape"):
            return int(data.shape[0])
        if isinstance(data, Mapping):
            return len(next(iter(data.values()))) if data else 0
        return len(data)

    def _input(self, data: Any, source: Mapping[str, Any]) -> np.ndarray:
        """The values of an input: a column with at most one transform (NumPy's)."""
        return input_values(data, source)

    def _codes(self, data: Any, n: int) -> np.ndarray:
        from ._binarizer import bin_codes

        most = max((len(t["theta"]) for t in self._blocks), default=1)
        codes = np.empty((len(self._blocks), n), dtype=code_dtype(most))
        for j, t in enumerate(self._blocks):
            if t["kind"] == "bin":
                x = self._input(data, t["input"])
                edges = np.asarray(t["edges"], dtype=np.float64)
                c, bad = bin_codes(x, edges, bool(t["missing_level"]))
                if bad >= 0:
                    what = "missing values (NaN) but the model has no missing level for it"
                    if not np.isnan(x[bad]):
                        what = "infinite values"
                    raise ValueError(f"column {t['column']!r} contains {what}.")
                by = t.get("by")
                if by is not None:  # one chain per level of the group column
                    g = self._categorical_codes(
                        _column(data, by["column"]),
                        {"levels": by["levels"], "missing_level": False, "column": by["column"]},
                    )
                    d = len(edges) + 1
                    c = np.where(g == 0, 0, 1 + (g - 1) * d + c) if by["main"] else g * d + c
                codes[j] = c
            else:
                codes[j] = self._categorical_codes(_column(data, t["column"]), t)
        return codes

    @staticmethod
    def _categorical_codes(values: Any, term: Mapping[str, Any]) -> np.ndarray:
        import pandas as pd

        from ._binarizer import level_codes

        series = values if isinstance(values, pd.Series) else pd.Series(np.asarray(values, object))
        if getattr(series.dtype, "kind", "O") == "M":  # dates: their ISO text, as C() stores
            from ._column_access import date_levels

            series = date_levels(series)
        isna = series.isna().to_numpy()
        levels = term["levels"]
        out = np.empty(len(series), dtype=np.intp)
        return level_codes(
            series.tolist(), isna, levels, bool(term["missing_level"]), str(term["column"]), out
        )

    def _offset(self, data: Any, n: int, offset: Any) -> np.ndarray | None:
        entry = self.spec["offset"]
        off = None
        if entry["terms"]:
            cols = [self._input(data, e) for e in entry["terms"]]
            off = np.column_stack(cols).sum(axis=1)
            if not np.all(np.isfinite(off)):
                raise ValueError(f"offset term {entry['terms']} has missing or infinite values.")
        extra = None
        if offset is not None:
            extra = check_offset(offset, n, rows_of="the data")
        elif entry.get("column") is not None:
            extra = _numeric(_column(data, entry["column"]), entry["column"])
            extra = check_offset(extra, n, "the data", f"offset (column '{entry['column']}')")
        if extra is not None:
            off = extra if off is None else off + extra
        return off

    def _indicator(self, data: Any, factor: Mapping[str, Any]) -> np.ndarray:
        """The 0/1 column of one level of a categorical factor (an interaction's dummy)."""
        term = {"column": factor["column"], "levels": factor["levels"], "missing_level": False}
        codes = self._categorical_codes(_column(data, factor["column"]), term)
        return (codes == factor["levels"].index(factor["level"])).astype(np.float64)

    def _dense(self, data: Any) -> np.ndarray | None:
        if not self._linear:
            return None
        columns = []
        for t in self._linear:
            values = [self._indicator(data, f) if "level" in f else self._input(data, f)
                      for f in t["factors"]]  # fmt: skip
            col = values[0]
            for v in values[1:]:
                col = col * v
            columns.append(col)
        dense = np.ascontiguousarray(np.column_stack(columns), dtype=np.float64)
        if not np.all(np.isfinite(dense)):
            bad = int(np.nonzero(~np.isfinite(dense).all(axis=0))[0][0])
            raise ValueError(f"term '{self._linear[bad]['name']}' has missing or infinite values.")
        return dense

    # -- prediction -----------------------------------------------------------------------
    def _incomplete_rows(self, data: Any, n: int, missing: Any) -> np.ndarray | None:
        """Rows missing a value in a ``missing.drop_columns`` column (None: no such row)."""
        if missing not in (None, "nan", "error"):
            raise ValueError(f"missing must be None, 'nan' or 'error'; got {missing!r}.")
        columns = (self.spec.get("missing") or {}).get("drop_columns") or []
        if not columns or missing == "error":
            return None
        import pandas as pd

        na = np.zeros(n, dtype=bool)
        for col in columns:
            try:
                values = _column(data, col)
            except ValueError:
                continue  # the replay names a column the terms need
            na |= np.asarray(pd.isna(pd.Series(np.asarray(values, dtype=object))), dtype=bool)
        return na if na.any() else None

    @staticmethod
    def _rows(data: Any, rows: np.ndarray) -> Any:
        """The given rows of a DataFrame, a mapping of columns or a 2-D array."""
        if hasattr(data, "iloc"):
            return data.iloc[rows]
        if isinstance(data, Mapping):
            return {k: np.asarray(v)[rows] for k, v in data.items()}
        return np.asarray(data)[rows]

    def decision_function(
        self, data: Any, offset: Any = None, missing: str | None = None
    ) -> np.ndarray:
        """The linear predictor η of every row.

        Parameters
        ----------
        data : DataFrame, mapping of columns or 2-D array
            New rows (an array only for a model whose terms name column positions).
        offset : array-like of shape (n,), optional
            Offset; replaces the ``offset.column`` of the description.
        missing : {None, "nan", "error"}, optional
            Rows with a missing value in a column of the description's
            ``missing.drop_columns`` (a model fitted with ``missing="drop"``): NaN (the
            default, as the fitted model's ``predict``) or ``"error"``, which raises
            naming the column. Other descriptions raise for a missing value outside a
            missing level.

        Returns
        -------
        ndarray of shape (n,)
            η, summed in the fitted object's order (NaN for the rows above).
        """
        n = self._n_rows(data)
        na = self._incomplete_rows(data, n, missing)
        if na is not None:
            eta = np.full(n, np.nan)
            keep = np.flatnonzero(~na)
            if keep.size:
                off = None if offset is None else check_offset(offset, n, rows_of="the data")
                eta[keep] = self._eta(self._rows(data, keep), None if off is None else off[keep])
            return eta
        return self._eta(data, offset)

    def _eta(self, data: Any, offset: Any) -> np.ndarray:
        n = self._n_rows(data)
        codes = self._codes(data, n)
        off = self._offset(data, n, offset)
        dense = self._dense(data)
        # the codes are checked against the blocks before the gather reads θ with them
        design = BinnedDesign(codes, self._block_ptr, dense=dense, offset=off)
        return design.linear_predictor(self._theta, self._coef, float(self.spec["intercept"]))

    def predict(
        self,
        data: Any,
        type: str = "response",  # noqa: A002
        offset: Any = None,
        missing: str | None = None,
    ) -> np.ndarray:
        """Mean response, linear predictor or (classifiers) class label of every row.

        Parameters
        ----------
        data : DataFrame, mapping of columns or 2-D array
            New rows.
        type : {"response", "link", "class"}, default="response"
            μ = g⁻¹(η), η, or the label ``classes[η > 0]`` of a classifier.
        offset : array-like of shape (n,), optional
            Offset (see :meth:`decision_function`).
        missing : {None, "nan", "error"}, optional
            Rows missing a value in a ``missing.drop_columns`` column: NaN (None as the
            label) or an error (see :meth:`decision_function`).

        Returns
        -------
        ndarray of shape (n,)
            One value per row.
        """
        if type not in ("response", "link", "class"):
            raise ValueError(f"type must be 'response', 'link' or 'class'; got {type!r}.")
        eta = self.decision_function(data, offset=offset, missing=missing)
        if type == "link":
            return eta
        if type == "class":
            classes = self.spec["response"].get("classes")
            if classes is None:
                raise ValueError("type='class' needs a classifier's description (classes).")
            labels = np.asarray(classes)[(eta > 0).astype(int)]
            if np.isnan(eta).any():
                labels = labels.astype(object)
                labels[np.isnan(eta)] = None
            return labels
        return self.family.mean(eta)

    def __repr__(self) -> str:
        kinds = [t["kind"] for t in self.spec["terms"]]
        return (
            f"<SpecModel from {self.spec['source']} ({self.spec['family']['name']}, "
            f"{len(kinds)} terms, package {self.spec['package_version']})>"
        )
