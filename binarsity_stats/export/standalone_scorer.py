"""Score a fitted binarsity model from its ``to_spec()`` JSON with the standard library only.

This file imports nothing outside Python's standard library and nothing from
``binarsity_stats``: copy it next to a model description and it runs wherever Python 3.9+
runs (a database server, a locked-down scoring host). It reads the description that
``BinarsityResults.to_spec()`` and the estimators' ``to_spec()`` write (``format_version``
1) and computes, for one row at a time, the linear predictor

    η = intercept + offset + Σ_terms θ_term[level of the row] + Σ_linear coef · Π factors

and the mean response g⁻¹(η). Usage from Python::

    import json, standalone_scorer
    spec = json.load(open("model.json"))
    standalone_scorer.predict(spec, [{"age": 41, "region": "north"}])

or from a shell (CSV in, CSV out, one ``prediction`` column)::

    python standalone_scorer.py model.json rows.csv > predictions.csv

Rows are mappings from column name to value (estimators fitted on arrays: sequences,
indexed by column position). A missing value is ``None``, NaN or, in a CSV, an empty
field. A model fitted with ``missing="drop"`` lists in ``missing.drop_columns`` the
columns whose missing values dropped training rows: a row missing one of them gets NaN
(as the package's ``predict``); any other missing value outside a missing level is an
error. Expressions of terms (``log(x)``, ``I(z ** 2)``, ``np.log(exposure)``) are
evaluated by a small safe evaluator: column names, numbers, ``+ - * / **`` and the
functions log, exp, sqrt, abs, log1p, expm1, log2, log10 (bare or as ``np.``/``numpy.``/
``math.`` attributes). Anything else is refused with ``ValueError``.
"""

import ast
import bisect
import csv
import json
import math
import sys

_FUNCTIONS = {
    "log": math.log, "exp": math.exp, "sqrt": math.sqrt, "abs": abs, "log1p": math.log1p,
    "expm1": math.expm1, "log2": math.log2, "log10": math.log10, "I": lambda v: v,
}  # fmt: skip
_BINARY = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b, ast.Pow: lambda a, b: a**b,
}  # fmt: skip
_INVERSE_LINKS = {
    "identity": lambda e: e,
    "log": math.exp,
    "logit": lambda e: 1.0 / (1.0 + math.exp(-e)) if e >= 0 else math.exp(e) / (1.0 + math.exp(e)),
    "probit": lambda e: 0.5 * math.erfc(-e / math.sqrt(2.0)),
    "cloglog": lambda e: -math.expm1(-math.exp(e)),
    "loglog": lambda e: math.exp(-math.exp(-e)),
}


def _missing(value):
    return value is None or (isinstance(value, float) and math.isnan(value)) or value == ""


def _get(row, column):
    if isinstance(column, int) and not isinstance(row, dict):
        return row[column]
    if column not in row:
        raise ValueError(f"column {column!r} (used by the model) is missing from the row.")
    return row[column]


def _number(value, column):
    if _missing(value):
        return math.nan
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return 1.0 if value.strip().lower() == "true" else 0.0  # a boolean column in a CSV
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(f"column {column!r} must be numeric; got {value!r}.") from None


def evaluate(expr, row):
    """The value of a term expression (``x``, ``log(x)``, ``I(z ** 2)``) on one row."""
    names = {}
    source = expr
    for i, quoted in enumerate(sorted(set(_backticked(expr)), key=len, reverse=True)):
        names[f"__bq{i}__"] = quoted[1:-1]
        source = source.replace(quoted, f"__bq{i}__")

    def ev(node):
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return float(node.value)
        if isinstance(node, ast.Name):
            column = names.get(node.id, node.id)
            return _number(_get(row, column), column)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            return _BINARY[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            return -ev(node.operand) if isinstance(node.op, ast.USub) else ev(node.operand)
        if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
            f = node.func
            name = f.id if isinstance(f, ast.Name) else None
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
                name = f.attr if f.value.id in ("np", "numpy", "math") else None
            if name in _FUNCTIONS:
                x = ev(node.args[0])
                return math.nan if math.isnan(x) else _FUNCTIONS[name](x)
        raise ValueError(f"expression {expr!r} is not supported by the standalone scorer.")

    return ev(ast.parse(source, mode="eval").body)


def _backticked(expr):
    parts = expr.split("`")
    return [f"`{p}`" for p in parts[1::2]]


def _level(values, value, has_missing_level, column):
    """Position of a categorical value among the levels (the missing level is last)."""
    if _missing(value):
        if not has_missing_level:
            raise ValueError(f"column {column!r} is missing but the model has no level for it.")
        return len(values)
    for k, level in enumerate(values):
        if value == level or str(value) == str(level):
            return k
    raise ValueError(f"column {column!r} has a level not seen at fit: {value!r}.")


def _term_value(term, row):
    if term["kind"] == "bin":
        if isinstance(term["column"], int) or term["expr"] == term["column"]:
            x = _number(_get(row, term["column"]), term["column"])
        else:  # a binned expression such as log(x)
            x = evaluate(term["expr"], row)
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
    if isinstance(factor, str):
        return evaluate(factor, row)
    if isinstance(factor, int):  # a column position (an estimator fitted on an array)
        return _number(_get(row, factor), factor)
    k = _level(factor["levels"], _get(row, factor["column"]), False, factor["column"])
    return 1.0 if factor["levels"][k] == factor["level"] else 0.0


def _incomplete(spec, row):
    """Whether the row misses a value in a column listed in ``missing.drop_columns``."""
    for column in (spec.get("missing") or {}).get("drop_columns", []):
        if isinstance(column, int) and not isinstance(row, dict):
            present = column < len(row)
        else:
            present = column in row
        if present and _missing(_get(row, column)):
            return True
    return False


def _check_version(spec):
    version = spec.get("format_version") if isinstance(spec, dict) else type(spec).__name__
    if version != 1:
        raise ValueError(f"this scorer reads descriptions of format_version 1; got {version!r}.")


def linear_predictor(spec, row, offset=0.0):
    """η of one row (``offset`` adds to the description's offset terms and column); NaN
    for a row missing a value in one of ``missing.drop_columns``."""
    _check_version(spec)
    if _incomplete(spec, row):
        return math.nan
    eta = float(spec["intercept"])
    off = 0.0
    for expr in spec["offset"]["terms"]:
        off += evaluate(expr, row)
    if spec["offset"].get("column") is not None:
        off += _number(_get(row, spec["offset"]["column"]), spec["offset"]["column"])
    eta += off + offset
    for term in spec["terms"]:
        if term["kind"] == "linear":
            value = term["coef"]
            for factor in term["factors"]:
                value *= _factor(factor, row)
            eta += value
        else:
            eta += _term_value(term, row)
    if math.isnan(eta):
        raise ValueError("a value used by the model is missing from the row.")
    return eta


def predict(spec, rows, type="response"):  # noqa: A002 - the package's name for it
    """Mean responses (``"response"``), linear predictors (``"link"``) or a classifier's
    labels (``"class"``) of rows."""
    _check_version(spec)
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
    """``python standalone_scorer.py model.json rows.csv``: predictions as CSV on stdout."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print("usage: python standalone_scorer.py model.json rows.csv", file=sys.stderr)
        return 2
    with open(argv[0]) as fh:
        spec = json.load(fh)
    with open(argv[1], newline="") as fh:
        rows = list(csv.DictReader(fh))
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["prediction"])
    for value in predict(spec, rows):
        out.writerow([repr(value)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
