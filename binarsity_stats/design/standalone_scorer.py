"""Score a fitted binarsity model from its ``to_spec()`` JSON with the standard library only.

This file imports nothing outside Python's standard library and nothing from
``binarsity_stats``: copy it next to a model description and it runs wherever Python 3.9+
runs (a database server, a locked-down scoring host). It reads the description that
``BinarsityResults.to_spec()`` and the estimators' ``to_spec()`` write (``format_version``
2, and the older 1) and computes, for one row at a time, the linear predictor

    η = intercept + offset + Σ_terms θ_term[level of the row] + Σ_linear coef · Π factors

and the mean response g⁻¹(η). A pair term ``bin(a):bin(b)`` (``"kind": "pair"``) adds
the value of the row's cell in its K_a × K_b table, the cell being the bins of the row's
two axes; a cell that held no training row (``null`` in the table) adds 0, as the
package's ``predict`` does. Usage from Python::

    import json, standalone_scorer
    spec = json.load(open("model.json"))
    standalone_scorer.predict(spec, [{"age": 41, "region": "north"}])

or from a shell (CSV in, CSV out, one ``prediction`` column)::

    python standalone_scorer.py model.json rows.csv > predictions.csv

Rows are mappings from column name to value (estimators fitted on arrays: sequences,
indexed by column position). A missing value is ``None`` or NaN; in a CSV, an empty
field (as ``pandas.read_csv`` reads it). An empty string in a row given from Python is
a value like any other (a category level ``""``). A model fitted with
``missing="drop"`` lists in ``missing.drop_columns`` the columns whose missing values
dropped training rows: a row missing one of them gets NaN (as the package's
``predict``); any other missing value outside a missing level is an error. A category
level stored as a number matches the same number written as text (``"3"`` for the
level ``3.0``), as a CSV gives it.

The description is data, never code: nothing in it is evaluated. Its inputs are column
references with at most one transform from a closed list (:data:`TRANSFORMS`), and
**this module holds the one validator of the format** (:func:`validate`), which the
package itself imports (``binarsity_stats.design._spec``) so that every reader checks a
description the same way before using it: types, sizes (:data:`LIMITS`), finite
numbers, strictly increasing cut points, consistent lengths. A ``format_version`` 1
description (expressions as text) is translated by a whitelisting walk of its
expression strings (:func:`expression_input`: names, the listed functions, one
arithmetic operation, numbers) — parsed, never evaluated.
"""

import ast
import bisect
import csv
import json
import math
import sys

#: Description format this module writes the checks for (it also reads 1)
FORMAT = "binarsity_stats.model_spec"
VERSION = 2
#: Bounds of a description: cut points per term, levels per term, θ values per term (the
#: levels of one block: the package codes them in 16 bits), cells of a pair term's table
#: (K_a · K_b, the same 16 bits), terms, factors per linear term, offset terms, length of
#: a string
LIMITS = {
    "edges": 65535, "levels": 65536, "theta": 65536, "cells": 65536, "terms": 10000,
    "factors": 16,
    "offset_terms": 100, "string": 1000, "params": 16, "response_items": 65536,
    "column_position": 2**31 - 1,
}  # fmt: skip
#: Transforms of one column (NumPy's ufunc of the same name)
UNARY = ("log", "log1p", "log2", "log10", "exp", "expm1", "sqrt", "abs")
#: Arithmetic of two operands (columns or numbers)
ARITHMETIC = ("add", "sub", "mul", "div")
#: Every transform an input may carry: ``power`` (``x ** exponent``) and ``scale``
#: (``(x - center) / scale``) besides the two lists above
TRANSFORMS = UNARY + ("power", "scale") + ARITHMETIC
TERM_KINDS = ("bin", "categorical", "linear", "pair")
COLUMN_KINDS = ("bool", "int", "float", "category", "object")
#: Names of functions in a formula expression (bare, or as ``np.``/``numpy.``/``math.``)
_CALLS = {name: name for name in UNARY}
_OPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div"}
#: statsmodels family parameters a description may carry
SM_PARAMS = ("var_power", "alpha", "eql")

_INVERSE_LINKS = {
    "identity": lambda e: e,
    "log": lambda e: _exp(e),
    "logit": lambda e: 1.0 / (1.0 + math.exp(-e)) if e >= 0 else math.exp(e) / (1.0 + math.exp(e)),
    "probit": lambda e: 0.5 * math.erfc(-e / math.sqrt(2.0)),
    "cloglog": lambda e: -math.expm1(-_exp(e)),
    "loglog": lambda e: math.exp(-_exp(-e)),
}


# ---------------------------------------------------------------------------------------
# The one validator of the description format
# ---------------------------------------------------------------------------------------


def _fail(path, message):
    raise ValueError(f"model description, {path}: {message}")


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _finite(value, path, what="a finite number"):
    """``value`` as a float, refusing anything but a finite number (no bool, no NaN)."""
    if not _is_number(value):
        _fail(path, f"must be {what}; got {type(value).__name__} {_short(value)}.")
    try:
        out = float(value)
    except OverflowError:
        out = math.inf
    if not math.isfinite(out):
        _fail(path, f"must be {what}; got {_short(value)}.")
    return out


def _short(value):
    text = repr(value) if isinstance(value, (str, int, float, bool, type(None))) else "…"
    return text if len(text) <= 60 else text[:57] + "..."


def _string(value, path, empty=True):
    if not isinstance(value, str):
        _fail(path, f"must be a string; got {type(value).__name__}.")
    if len(value) > LIMITS["string"]:
        _fail(path, f"is longer than {LIMITS['string']} characters.")
    if not empty and not value:
        _fail(path, "must not be empty.")
    return value


def _column_ref(value, path):
    """A data column: its name (a string) or, for an estimator fitted on an array, its
    position (an integer ≥ 0)."""
    if isinstance(value, str):
        return _string(value, path, empty=True)
    if isinstance(value, int) and not isinstance(value, bool):
        if not 0 <= value <= LIMITS["column_position"]:
            _fail(path, f"a column position must be in [0, {LIMITS['column_position']}].")
        return value
    _fail(path, f"must be a column name (string) or position (integer); got {_short(value)}.")


def _scalar(value, path):
    """A category level or label: a string, a finite number or a boolean."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return _string(value, path)
    if _is_number(value):
        _finite(value, path)
        return value
    _fail(path, f"must be a string, a finite number or a boolean; got {_short(value)}.")


def _mapping(value, path, required=(), optional=()):
    if not isinstance(value, dict):
        _fail(path, f"must be an object; got {type(value).__name__}.")
    for key in value:
        if key not in required and key not in optional:
            known = ", ".join(repr(k) for k in (*required, *optional))
            _fail(path, f"unknown field {_short(key)} (fields: {known}).")
    for key in required:
        if key not in value:
            _fail(path, f"has no {key!r}.")
    return value


def _array(value, path, limit, minimum=0):
    if not isinstance(value, list):
        _fail(path, f"must be a list; got {type(value).__name__}.")
    if len(value) > limit:
        _fail(path, f"has {len(value)} items; at most {limit} are allowed.")
    if len(value) < minimum:
        _fail(path, f"needs at least {minimum} item(s).")
    return value


def _numbers(value, path, limit):
    _array(value, path, limit)
    for k, v in enumerate(value):
        _finite(v, f"{path}[{k}]")
    return value


def _check_input(value, path):
    """An input: a column reference with at most one transform of :data:`TRANSFORMS`."""
    if not isinstance(value, dict):
        _fail(path, f"must be an input object ({{'column': ...}}); got {_short(value)}.")
    transform = value.get("transform")
    if transform is None:
        _mapping(value, path, ("column",))
        _column_ref(value["column"], f"{path}.column")
        return value
    if transform not in TRANSFORMS:
        _fail(
            f"{path}.transform",
            f"unknown transform {_short(transform)} (known: {', '.join(TRANSFORMS)}).",
        )
    if transform in ARITHMETIC:
        _mapping(value, path, ("transform", "operands"))
        ops = _array(value["operands"], f"{path}.operands", 2, 2)
        for k, op in enumerate(ops):
            if isinstance(op, str):
                _string(op, f"{path}.operands[{k}]")
            else:
                _finite(op, f"{path}.operands[{k}]", "a column name or a finite number")
        if not any(isinstance(op, str) for op in ops):
            _fail(f"{path}.operands", "needs at least one column name.")
        return value
    if transform == "power":
        _mapping(value, path, ("column", "transform", "exponent"))
        _finite(value["exponent"], f"{path}.exponent")
    elif transform == "scale":
        _mapping(value, path, ("column", "transform", "center", "scale"))
        _finite(value["center"], f"{path}.center")
        if _finite(value["scale"], f"{path}.scale") == 0.0:
            _fail(f"{path}.scale", "must not be 0.")
    else:
        _mapping(value, path, ("column", "transform"))
    _column_ref(value["column"], f"{path}.column")
    return value


def input_columns(value):
    """The data columns an input reads, in order.

    Parameters
    ----------
    value : dict
        A checked input.

    Returns
    -------
    list
        Column names (or positions).
    """
    if "operands" in value:
        return [op for op in value["operands"] if isinstance(op, str)]
    return [value["column"]]


def _check_levels(value, path):
    _array(value, path, LIMITS["levels"])
    seen = set()
    for k, level in enumerate(value):
        _scalar(level, f"{path}[{k}]")
        key = (isinstance(level, str), isinstance(level, bool), level)  # 1 == 1.0, not True
        if key in seen:
            _fail(f"{path}[{k}]", f"level {_short(level)} appears twice.")
        seen.add(key)
    return value


def _check_term(term, i):
    path = f"terms[{i}]"
    if not isinstance(term, dict):
        _fail(path, f"must be an object; got {type(term).__name__}.")
    kind = term.get("kind")
    name = term.get("name")
    if kind not in TERM_KINDS:
        _fail(f"{path}.kind", f"term {_short(name)} has unknown kind {_short(kind)}.")
    label = f"term {name!r}" if isinstance(name, str) and len(name) <= 200 else "term"
    if kind == "bin":
        _mapping(term, path, ("kind", "name", "column", "input", "edges", "missing_level",
                              "theta"), ("intervals", "penalty", "by"))  # fmt: skip
        _string(name, f"{path}.name")
        _column_ref(term["column"], f"{path}.column")
        _check_input(term["input"], f"{path}.input")
        edges = _check_edges(term["edges"], f"{path}.edges", label)
        if term.get("intervals", "right-closed") != "right-closed":
            _fail(f"{path}.intervals", f"{label}: only 'right-closed' intervals are read.")
        if not isinstance(term["missing_level"], bool):
            _fail(f"{path}.missing_level", "must be true or false.")
        if "penalty" in term:
            _string(term["penalty"], f"{path}.penalty")
        n = len(edges) + 1 + int(term["missing_level"])
        by = term.get("by")
        if by is not None:
            _mapping(by, f"{path}.by", ("column", "levels", "main"))
            _column_ref(by["column"], f"{path}.by.column")
            levels = _check_levels(by["levels"], f"{path}.by.levels")
            if not levels or not isinstance(by["main"], bool) or term["missing_level"]:
                _fail(
                    f"{path}.by",
                    f"{label}: 'by' needs 'column', 'levels' and 'main' (and no missing level).",
                )
            n = 1 + (len(levels) - 1) * n if by["main"] else len(levels) * n
        theta = _numbers(term["theta"], f"{path}.theta", LIMITS["theta"])
        if len(theta) != n:
            _fail(f"{path}.theta", f"{label}: theta needs {n} values.")
    elif kind == "pair":
        _check_pair(term, path, label)
    elif kind == "categorical":
        _mapping(term, path, ("kind", "name", "column", "levels", "missing_level", "theta"),
                 ("unseen", "reference", "penalty"))  # fmt: skip
        _string(name, f"{path}.name")
        _column_ref(term["column"], f"{path}.column")
        levels = _check_levels(term["levels"], f"{path}.levels")
        if not isinstance(term["missing_level"], bool):
            _fail(f"{path}.missing_level", "must be true or false.")
        theta = _numbers(term["theta"], f"{path}.theta", LIMITS["theta"])
        n = len(levels) + int(term["missing_level"])
        if len(theta) != n:
            _fail(f"{path}.theta", f"{label}: theta needs {n} values.")
        if term.get("unseen", "error") != "error":
            _fail(f"{path}.unseen", f"{label}: unseen={_short(term['unseen'])} unknown.")
        if term.get("reference") is not None and term["reference"] not in levels:
            _fail(
                f"{path}.reference",
                f"{label}: reference {_short(term['reference'])} is not one of its levels.",
            )
        if "penalty" in term:
            _string(term["penalty"], f"{path}.penalty")
    else:
        _mapping(term, path, ("kind", "name", "factors", "coef"))
        _string(name, f"{path}.name")
        _finite(term["coef"], f"{path}.coef")
        factors = _array(term["factors"], f"{path}.factors", LIMITS["factors"], 1)
        for j, f in enumerate(factors):
            fpath = f"{path}.factors[{j}]"
            if isinstance(f, dict) and "level" in f:  # one level's 0/1 indicator
                _mapping(f, fpath, ("column", "levels", "level"))
                _column_ref(f["column"], f"{fpath}.column")
                levels = _check_levels(f["levels"], f"{fpath}.levels")
                _scalar(f["level"], f"{fpath}.level")
                if f["level"] not in levels:
                    _fail(
                        fpath,
                        f"{label}: a factor must be an input or "
                        "{'column', 'levels', 'level'} with level among levels.",
                    )
            elif isinstance(f, dict):
                _check_input(f, fpath)
            else:
                _fail(
                    fpath,
                    f"{label}: a factor must be an input or "
                    "{'column', 'levels', 'level'} with level among levels.",
                )
    return term


def _check_edges(value, path, label):
    edges = _numbers(value, path, LIMITS["edges"])
    for k in range(1, len(edges)):
        if not edges[k - 1] < edges[k]:
            _fail(
                path,
                f"{label}: cut points must increase strictly "
                f"(edges[{k - 1}] = {edges[k - 1]!r}, edges[{k}] = {edges[k]!r}).",
            )
    return edges


def _check_pair(term, path, label):
    """A pair term ``bin(a):bin(b)``: two axes (each an input binned on its cut points,
    no missing level) and the K_a × K_b table of the cells' values, null for a cell
    without training rows (it adds 0 to η)."""
    _mapping(term, path, ("kind", "name", "axes", "table"), ("intervals", "penalty"))
    _string(term["name"], f"{path}.name")
    if term.get("intervals", "right-closed") != "right-closed":
        _fail(f"{path}.intervals", f"{label}: only 'right-closed' intervals are read.")
    if "penalty" in term:
        _string(term["penalty"], f"{path}.penalty")
    axes = _array(term["axes"], f"{path}.axes", 2, 2)
    shape = []
    for k, axis in enumerate(axes):
        apath = f"{path}.axes[{k}]"
        _mapping(axis, apath, ("column", "input", "edges", "missing_level"))
        _column_ref(axis["column"], f"{apath}.column")
        _check_input(axis["input"], f"{apath}.input")
        shape.append(len(_check_edges(axis["edges"], f"{apath}.edges", label)) + 1)
        if axis["missing_level"] is not False:
            _fail(f"{apath}.missing_level", f"{label}: a pair axis has no missing level (false).")
    if shape[0] * shape[1] > LIMITS["cells"]:
        _fail(
            f"{path}.axes",
            f"{label}: a grid of {shape[0]} x {shape[1]} cells; at most {LIMITS['cells']} "
            "cells are allowed.",
        )
    rows = _array(term["table"], f"{path}.table", shape[0], shape[0])
    for k, row in enumerate(rows):
        _array(row, f"{path}.table[{k}]", shape[1], shape[1])
        for m, v in enumerate(row):
            if v is not None:
                _finite(v, f"{path}.table[{k}][{m}]", "a finite number or null")


def _check_family(family):
    _mapping(family, "family", ("name", "link"), ("statsmodels",))
    _string(family["name"], "family.name", empty=False)
    _string(family["link"], "family.link", empty=False)
    sm = family.get("statsmodels")
    if sm is not None:
        _mapping(sm, "family.statsmodels", ("family", "link", "params"))
        for key in ("family", "link"):  # statsmodels class names: letters only
            name = _string(sm[key], f"family.statsmodels.{key}", empty=False)
            if not (name[:1].isupper() and name.isascii() and name.isalpha() and len(name) <= 64):
                _fail(
                    f"family.statsmodels.{key}",
                    f"must be a statsmodels class name "
                    f"(ASCII letters, capitalised); got {_short(name)}.",
                )
        params = _mapping(sm["params"], "family.statsmodels.params", (), SM_PARAMS)
        for key, value in params.items():
            if not (key == "eql" and isinstance(value, bool)):
                _finite(value, f"family.statsmodels.params.{key}")


def _check_response(response):
    if not isinstance(response, dict):
        _fail("response", f"must be an object; got {type(response).__name__}.")
    for key, value in response.items():
        path = f"response.{_short(key)}"
        _string(key, "response (a field name)")
        if value is None:
            continue
        if isinstance(value, list):
            _array(value, path, LIMITS["response_items"])
            for k, v in enumerate(value):
                _scalar(v, f"{path}[{k}]")
        else:
            _scalar(value, path)
    classes = response.get("classes")
    if classes is not None and (not isinstance(classes, list) or len(classes) != 2):
        _fail("response.classes", "a classifier's description has two classes.")


_TOP_REQUIRED = ("format", "format_version", "family", "intercept", "terms", "offset")
_TOP_OPTIONAL = ("package_version", "source", "fit_intercept", "lam", "response", "penalty",
                 "missing", "column_kinds")  # fmt: skip


def validate(spec):
    """Check a model description and return it in the current format (a new dict).

    The one validator of the format: ``binarsity_stats.from_spec``, the scorecard, the
    SQL export and this scorer all call it before reading anything. A ``format_version``
    1 description is first translated (:func:`upgrade_v1`).

    Parameters
    ----------
    spec : dict
        A description (parsed JSON).

    Returns
    -------
    dict
        The description, ``format_version`` 2 (the same object's values, not copies).

    Raises
    ------
    ValueError
        Naming the field path (``terms[2].edges``) and what is wrong.
    """
    if not isinstance(spec, dict) or spec.get("format") != FORMAT:
        raise ValueError(f"not a model description: expected 'format': {FORMAT!r}.")
    version = spec.get("format_version")
    if version == 1:
        spec = upgrade_v1(spec)
    elif version != VERSION or isinstance(version, bool):
        raise ValueError(
            f"model description format_version {_short(version)} is not supported by this "
            f"version (it reads 1 and {VERSION})."
        )
    _mapping(spec, "(top level)", _TOP_REQUIRED, _TOP_OPTIONAL)
    for key in ("package_version", "source"):
        if key in spec:
            _string(spec[key], key)
    if "fit_intercept" in spec and not isinstance(spec["fit_intercept"], bool):
        _fail("fit_intercept", "must be true or false.")
    if spec.get("lam") is not None:
        _finite(spec["lam"], "lam")
    _check_family(spec["family"])
    _finite(spec["intercept"], "intercept")
    terms = _array(spec["terms"], "terms", LIMITS["terms"])
    for i, term in enumerate(terms):
        _check_term(term, i)
    _check_response(spec.get("response", {}))
    offset = _mapping(spec["offset"], "offset", ("terms",), ("column",))
    for k, entry in enumerate(_array(offset["terms"], "offset.terms", LIMITS["offset_terms"])):
        _check_input(entry, f"offset.terms[{k}]")
    if offset.get("column") is not None:
        _column_ref(offset["column"], "offset.column")
    penalty = spec.get("penalty")
    if penalty is not None:
        if not isinstance(penalty, dict):
            _fail("penalty", "must be an object.")
        for key, value in penalty.items():
            _string(key, "penalty (a field name)")
            if value is not None:
                _scalar(value, f"penalty.{_short(key)}")
    missing = spec.get("missing")
    if missing is not None:
        _mapping(missing, "missing", ("drop_columns",))
        for k, c in enumerate(_array(missing["drop_columns"], "missing.drop_columns",
                                     LIMITS["terms"])):  # fmt: skip
            _column_ref(c, f"missing.drop_columns[{k}]")
    kinds = spec.get("column_kinds")
    if kinds is not None:
        if not isinstance(kinds, dict) or len(kinds) > LIMITS["terms"]:
            _fail("column_kinds", f"must map at most {LIMITS['terms']} columns to a kind.")
        for key, value in kinds.items():
            _string(key, "column_kinds (a column name)")
            if value not in COLUMN_KINDS:
                _fail(
                    f"column_kinds[{_short(key)}]",
                    f"must be one of {', '.join(COLUMN_KINDS)}; got {_short(value)}.",
                )
    return spec


# ---------------------------------------------------------------------------------------
# Formula expressions → inputs (format 1 descriptions, and the package's writer)
# ---------------------------------------------------------------------------------------


def _placeholders(text):
    """``text`` with each backticked name replaced by an identifier, and their map."""
    names, out, parts = {}, [], text.split("`")
    if len(parts) % 2 == 0:
        return None, names
    for k, part in enumerate(parts):
        if k % 2:
            key = f"__bq{len(names)}__"
            names[key] = part
            out.append(key)
        else:
            out.append(part)
    return "".join(out), names


def expression_input(text, aliases=None):
    """The input a formula expression describes, or None when it describes none.

    A whitelisting walk of the parsed expression (it is never evaluated): a column name
    (bare or in backticks), one of :data:`UNARY` of a column (bare, or as ``np.``,
    ``numpy.`` or ``math.`` attribute; ``I()`` is transparent), a column to a constant
    power, ``(x - c) / s``, or ``+ - * /`` of two operands each a column or a number.

    Parameters
    ----------
    text : str
        The expression, as formulaic writes it (``log(x)``, ``I(z ** 2)``,
        ```a-b```).
    aliases : dict, optional
        Identifier → column name, for identifiers that stand for other names.

    Returns
    -------
    dict or None
        The input (see :func:`validate`).
    """
    if not isinstance(text, str) or len(text) > LIMITS["string"]:
        return None
    source, quoted = _placeholders(text)
    if source is None:
        return None
    try:
        tree = ast.parse(source.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    lines = source.strip().encode("utf-8").split(b"\n")
    aliases = aliases or {}

    def column(node):
        if not isinstance(node, ast.Name) or node.lineno != node.end_lineno:
            return None
        # the name as written: Python folds identifiers to NFKC (a fullwidth "ｚ" is "z")
        raw = lines[node.lineno - 1][node.col_offset : node.end_col_offset].decode("utf-8")
        if raw in quoted:
            return quoted[raw]
        return aliases.get(raw, raw)

    def number(node):
        sign = 1
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            sign = -1 if isinstance(node.op, ast.USub) else 1
            node = node.operand
        if isinstance(node, ast.Constant) and _is_number(node.value):
            try:
                value = sign * node.value
                return value if math.isfinite(float(value)) else None
            except OverflowError:
                return None
        return None

    def operand(node):
        name = column(node)
        return name if name is not None else number(node)

    def walk(node):
        while (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "I"
            and len(node.args) == 1
            and not node.keywords
        ):
            node = node.args[0]
        name = column(node)
        if name is not None:
            return {"column": name}
        if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
            f, fname = node.func, None
            if isinstance(f, ast.Name):
                fname = f.id
            elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
                fname = f.attr if f.value.id in ("np", "numpy", "math") else None
            inner = walk(node.args[0])
            if fname in _CALLS and inner is not None and set(inner) == {"column"}:
                return {"column": inner["column"], "transform": _CALLS[fname]}
            return None
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            name = column(node.operand)
            return None if name is None else {"transform": "mul", "operands": [name, -1.0]}
        if not isinstance(node, ast.BinOp):
            return None
        if isinstance(node.op, ast.Pow):
            base, exponent = column(node.left), number(node.right)
            if base is None or exponent is None:
                return None
            return {"column": base, "transform": "power", "exponent": exponent}
        if (
            isinstance(node.op, ast.Div)
            and isinstance(node.left, ast.BinOp)
            and isinstance(node.left.op, ast.Sub)
        ):  # (x - c) / s
            x, c, s = column(node.left.left), number(node.left.right), number(node.right)
            if x is not None and c is not None and s is not None and s != 0:
                return {"column": x, "transform": "scale", "center": c, "scale": s}
        if type(node.op) not in _OPS:
            return None
        a, b = operand(node.left), operand(node.right)
        if a is None or b is None or not (isinstance(a, str) or isinstance(b, str)):
            return None
        return {"transform": _OPS[type(node.op)], "operands": [a, b]}

    try:
        return walk(tree)
    except RecursionError:
        return None


def upgrade_v1(spec):
    """A ``format_version`` 1 description in the current format (a new dict).

    Version 1 held a binned term's input and the linear factors and offset terms as
    formula expressions (``"expr": "log(x)"``, ``"factors": ["x", "I(z ** 2)"]``); each
    is translated by :func:`expression_input` — parsed, never evaluated — and refused
    with a ``ValueError`` naming its field when it describes no input.

    Parameters
    ----------
    spec : dict
        A version 1 description.

    Returns
    -------
    dict
        Version 2 (validate it before use: :func:`validate` does both).
    """

    def translate(text, path, column=None):
        if column is not None and text == column:
            return {"column": column}
        if isinstance(text, str) and text.isidentifier():
            return {"column": text}
        out = expression_input(text)
        if out is None:
            _fail(
                path,
                f"expression {_short(text)} is not a column, one of "
                f"{', '.join(UNARY)} of a column, a power, or + - * / of two columns or "
                "a column and a number (format_version 1).",
            )
        return out

    out = dict(spec, format_version=VERSION)
    terms = spec.get("terms")
    if isinstance(terms, list):
        new_terms = []
        for i, term in enumerate(terms):
            if isinstance(term, dict) and term.get("kind") in ("bin", "categorical"):
                term = dict(term)
                expr = term.pop("expr", None)
                column = term.get("column")
                if term["kind"] == "bin":
                    if isinstance(column, int) and not isinstance(column, bool):
                        term["input"] = {"column": column}
                    else:
                        term["input"] = translate(expr, f"terms[{i}].expr", column)
                elif expr is not None and expr != column:
                    _fail(f"terms[{i}].expr", "a categorical term reads a column.")
            elif isinstance(term, dict) and term.get("kind") == "linear":
                term = dict(term)
                factors = term.get("factors")
                if isinstance(factors, list):
                    term["factors"] = [
                        {"column": f} if isinstance(f, int) and not isinstance(f, bool)
                        else translate(f, f"terms[{i}].factors[{j}]") if isinstance(f, str)
                        else f for j, f in enumerate(factors)
                    ]  # fmt: skip
            new_terms.append(term)
        out["terms"] = new_terms
    offset = spec.get("offset")
    if isinstance(offset, dict) and isinstance(offset.get("terms"), list):
        out["offset"] = dict(offset, terms=[
            translate(e, f"offset.terms[{k}]") if isinstance(e, str) else e
            for k, e in enumerate(offset["terms"])
        ])  # fmt: skip
    return out


# ---------------------------------------------------------------------------------------
# Scoring one row
# ---------------------------------------------------------------------------------------


def _is_nan(value):
    return value is None or (isinstance(value, float) and math.isnan(value))


def _get(row, column):
    if isinstance(column, int) and not isinstance(row, dict):
        return row[column]
    if column not in row:
        raise ValueError(f"column {column!r} (used by the model) is missing from the row.")
    return row[column]


def _number(value, column):
    if _is_nan(value):
        return math.nan
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("true", "false"):
            return 1.0 if text == "true" else 0.0  # a boolean column in a CSV
        if text == "":
            return math.nan
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"column {column!r} must be numeric; got {value!r}.") from None


def _exp(x):
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def _unary(name, x):
    """NumPy's value of the function (NaN outside its domain, ±inf at its poles)."""
    if math.isnan(x):
        return x
    if name in ("log", "log2", "log10", "log1p"):
        arg = x + 1.0 if name == "log1p" and x > -1.0 else x
        floor = -1.0 if name == "log1p" else 0.0
        if x < floor:
            return math.nan
        if x == floor:
            return -math.inf
        if math.isinf(x):
            return math.inf
        if name == "log1p":
            return math.log1p(x)
        return {"log": math.log, "log2": math.log2, "log10": math.log10}[name](arg)
    if name == "exp":
        return _exp(x)
    if name == "expm1":
        try:
            return math.expm1(x)
        except OverflowError:
            return math.inf
    if name == "sqrt":
        return math.nan if x < 0 else math.sqrt(x)
    return abs(x)


def _power(x, e):
    if math.isnan(x) or math.isnan(e):
        return math.nan
    try:
        out = x**e
    except ZeroDivisionError:  # 0 ** negative
        return math.inf
    except OverflowError:
        odd = float(e).is_integer() and int(e) % 2 == 1
        return -math.inf if (x < 0 and odd) else math.inf
    return math.nan if isinstance(out, complex) else float(out)


def _arith(op, a, b):
    if op == "add":
        return a + b
    if op == "sub":
        return a - b
    if op == "mul":
        return a * b
    if b == 0.0:  # NumPy's x / 0
        return (
            math.nan
            if (a == 0.0 or math.isnan(a))
            else math.copysign(math.inf, a) * (math.copysign(1.0, b))
        )
    return a / b


def input_value(value, row):
    """The value of a (checked) input on one row.

    Parameters
    ----------
    value : dict
        An input of a description (see :func:`validate`).
    row : mapping or sequence
        The row.

    Returns
    -------
    float
        NaN where a column is missing or the transform is outside its domain.
    """
    transform = value.get("transform")
    if transform in ARITHMETIC:
        a, b = (_number(_get(row, op), op) if isinstance(op, str) else float(op)
                for op in value["operands"])  # fmt: skip
        return _arith(transform, a, b)
    x = _number(_get(row, value["column"]), value["column"])
    if transform is None:
        return x
    if transform == "power":
        return _power(x, value["exponent"])
    if transform == "scale":
        return (x - value["center"]) / value["scale"]
    return _unary(transform, x)


def evaluate(expr, row):
    """The value of a formula expression (``x``, ``log(x)``, ``I(z ** 2)``) on one row:
    translated to an input by :func:`expression_input` (never evaluated as code)."""
    value = expression_input(expr)
    if value is None:
        raise ValueError(f"expression {_short(expr)} is not supported by the standalone scorer.")
    return input_value(value, row)


def _same_level(value, level):
    if value == level and type(value) is not bool and type(level) is not bool:
        return True
    if isinstance(level, bool) or isinstance(value, bool):
        return str(value).strip().lower() == str(level).lower()
    if _is_number(level) and isinstance(value, str):  # "3" from a CSV for the level 3.0
        try:
            return float(value) == float(level)
        except ValueError:
            return False
    return str(value) == str(level)


def _level(values, value, has_missing_level, column):
    """Position of a categorical value among the levels (the missing level is last)."""
    if _is_nan(value):
        if not has_missing_level:
            raise ValueError(f"column {column!r} is missing but the model has no level for it.")
        return len(values)
    for k, level in enumerate(values):
        if _same_level(value, level):
            return k
    raise ValueError(f"column {column!r} has a level not seen at fit: {value!r}.")


def _axis_bin(axis, row):
    """The bin of a pair axis on one row: (e[k-1], e[k]] → k; missing or infinite values
    are errors (an axis has no missing level)."""
    x = input_value(axis["input"], row)
    if math.isnan(x):
        raise ValueError(f"column {axis['column']!r} is missing but has no level.")
    if math.isinf(x):
        raise ValueError(f"column {axis['column']!r} is infinite.")
    return bisect.bisect_left(axis["edges"], x)


def _term_value(term, row):
    if term["kind"] == "pair":  # the cell (k, l); a cell without training rows adds 0
        a, b = term["axes"]
        value = term["table"][_axis_bin(a, row)][_axis_bin(b, row)]
        return 0.0 if value is None else value
    if term["kind"] == "bin":
        x = input_value(term["input"], row)
        if math.isnan(x):
            if not term["missing_level"]:
                raise ValueError(f"column {term['column']!r} is missing but has no level.")
            return term["theta"][len(term["edges"]) + 1]
        if math.isinf(x):
            raise ValueError(f"column {term['column']!r} is infinite.")
        k = bisect.bisect_left(term["edges"], x)  # (e[k-1], e[k]] → k
        by = term.get("by")
        if by is not None:  # bin(x):C(g): the chain of the row's level of g
            i = _level(by["levels"], _get(row, by["column"]), False, by["column"])
            d = len(term["edges"]) + 1
            if by["main"]:
                return term["theta"][0 if i == 0 else 1 + (i - 1) * d + k]
            return term["theta"][i * d + k]
        return term["theta"][k]
    value = _get(row, term["column"])
    return term["theta"][_level(term["levels"], value, term["missing_level"], term["column"])]


def _factor(factor, row):
    if "level" in factor:  # one level's indicator
        k = _level(factor["levels"], _get(row, factor["column"]), False, factor["column"])
        return 1.0 if factor["levels"][k] == factor["level"] else 0.0
    return input_value(factor, row)


def _incomplete(spec, row):
    """Whether the row misses a value in a column listed in ``missing.drop_columns``."""
    for column in (spec.get("missing") or {}).get("drop_columns", []):
        if isinstance(column, int) and not isinstance(row, dict):
            present = column < len(row)
        else:
            present = column in row
        if present and _is_nan(_get(row, column)):
            return True
    return False


class _Checked(dict):
    """A description :func:`validate` accepted (JSON never makes one of these)."""


def _checked(spec):
    """The description, validated (and translated from format 1) once per call."""
    if type(spec) is _Checked:
        return spec
    if not isinstance(spec, dict):
        raise ValueError(
            f"not a model description: expected a JSON object; got {type(spec).__name__}."
        )
    return _Checked(validate(spec))


def linear_predictor(spec, row, offset=0.0):
    """η of one row (``offset`` adds to the description's offset terms and column); NaN
    for a row missing a value in one of ``missing.drop_columns``."""
    spec = _checked(spec)
    if _incomplete(spec, row):
        return math.nan
    eta = float(spec["intercept"])
    off = 0.0
    for entry in spec["offset"]["terms"]:
        off += input_value(entry, row)
    if spec["offset"].get("column") is not None:
        off += _number(_get(row, spec["offset"]["column"]), spec["offset"]["column"])
    if not math.isfinite(off):
        raise ValueError("the row's offset is missing or infinite.")
    eta += off + offset
    for term in spec["terms"]:
        if term["kind"] == "linear":
            value = term["coef"]
            for factor in term["factors"]:
                value *= _factor(factor, row)
            if not math.isfinite(value):
                raise ValueError(f"term {term['name']!r} has a missing or infinite value.")
            eta += value
        else:
            eta += _term_value(term, row)
    if math.isnan(eta):
        raise ValueError("a value used by the model is missing from the row.")
    return eta


def predict(spec, rows, type="response"):  # noqa: A002 - the package's name for it
    """Mean responses (``"response"``), linear predictors (``"link"``) or a classifier's
    labels (``"class"``) of rows. The description is validated first (:func:`validate`)."""
    spec = _checked(spec)
    link = spec["family"]["link"]
    if type not in ("response", "link", "class"):
        raise ValueError(f"type must be 'response', 'link' or 'class'; got {type!r}.")
    if type == "response" and link not in _INVERSE_LINKS:
        raise ValueError(f"link {link!r} is not supported by the standalone scorer.")
    etas = [linear_predictor(spec, row) for row in rows]
    if type == "class":
        classes = spec["response"].get("classes")
        if classes is None:
            raise ValueError("type='class' needs a classifier's description (classes).")
        return [None if math.isnan(e) else classes[1] if e > 0 else classes[0] for e in etas]
    inverse = _INVERSE_LINKS.get(link)
    return etas if type == "link" else [math.nan if math.isnan(e) else inverse(e) for e in etas]


def main(argv=None):
    """``python standalone_scorer.py model.json rows.csv``: predictions as CSV on stdout.

    An empty CSV field is a missing value (as ``pandas.read_csv`` reads it). A bad
    description or row prints one line to stderr and exits with status 2."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print("usage: python standalone_scorer.py model.json rows.csv", file=sys.stderr)
        return 2
    try:
        with open(argv[0], encoding="utf-8") as fh:
            try:
                spec = json.load(fh)
            except RecursionError:
                raise ValueError("the model description is nested too deeply.") from None
        spec = _checked(spec)
        with open(argv[1], newline="", encoding="utf-8") as fh:
            rows = [{k: (None if v == "" else v) for k, v in row.items()}
                    for row in csv.DictReader(fh)]  # fmt: skip
        values = predict(spec, rows)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["prediction"])
    for value in values:
        out.writerow([repr(value)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
