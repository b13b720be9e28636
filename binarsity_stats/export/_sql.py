"""SQL export: one ``SELECT`` that scores a table with a fitted model, in the database.

Reads only the model description of :mod:`._spec` (``to_spec()``), so formula results,
the estimators and models rebuilt by ``from_spec`` export alike. The linear predictor
is written term by term as in the description,

    η = intercept + offset + Σ_terms θ_term[level] + Σ_linear coef · Π factors,

a binned term as ``CASE WHEN x IS NULL THEN θ_missing WHEN x <= e_1 THEN θ_1 … ELSE
θ_last END`` on the right-closed intervals (e_{k−1}, e_k] (cuts between equal levels
left out; beyond 32 cuts a binary search of nested CASEs, beyond 1,024 the cuts and
levels as text constants the database parses at run time, in linear time), a
categorical term as
``CASE WHEN g = 'a' THEN … END`` (a by-group term ``bin(x):C(g)``: one binned CASE
per level of g inside a CASE on g), a pair term ``bin(a):bin(b)`` as a CASE on the
bins of a whose branches are CASEs on the bins of b (one per row of its table; a cell
without training rows is 0, as in ``predict``), and the mean as the inverse link of η. Every
identifier — columns and the table — is quoted (double quotes, inner ones doubled) and
every level is a literal (single quotes, inner ones doubled): names are data, never
SQL. A description is validated before a word is written. Numbers are
written with 17 significant digits in exponent form, which SQLite and DuckDB read as a
double (DuckDB reads a plain decimal such as ``0.1`` as DECIMAL); PostgreSQL reads any
such constant as NUMERIC (exact decimal arithmetic, a NUMERIC result), so there each
number is cast, ``1.0000000000000000e-01::float8``. The database thus computes what
``predict`` computes up to the rounding of the sums.

PostgreSQL raises an error, aborting the whole query, where SQLite and DuckDB return a
value: ``EXP`` overflowing or underflowing a double, ``LN``/``LOG`` of a number ≤ 0,
``SQRT`` of a negative number, a division by zero, a negative number to a fractional
power. Its query therefore evaluates the inverse link on η in a scalar sub-query that
names η once and saturates where the double range ends (``Infinity``/``0``/``1``, the
values ``predict`` gives there), and guards the functions of term expressions so that
an argument outside their domain gives NULL, as SQLite does. A Cox model's relative
risk is e^min(η, 700) in every dialect, as ``predict`` computes it (same sub-query).

Where ``predict`` raises, the query gives NULL: a missing value of a term without a
missing level, an unseen level of a categorical term. Where ``predict`` gives NaN (a
model fitted with ``missing="drop"``: a row missing a value in one of the description's
``missing.drop_columns``), the query gives NULL too, by an explicit ``CASE WHEN col IS
NULL … THEN NULL`` around the prediction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..families._family import LOG_ETA_MAX
from ..design._spec_model import check_spec

__all__ = ["to_sql", "DIALECTS"]

#: Supported dialects: the double type, how log10 is written, how a number is typed as a
#: double and whether math errors abort the query (then the query guards them).
DIALECTS: dict[str, dict[str, Any]] = {
    "sqlite": {"double": "REAL", "log10": "LOG10", "typed": "{}", "strict": False,
               "nan": None},  # SQLite stores a NaN as NULL
    "duckdb": {"double": "DOUBLE", "log10": "LOG10", "typed": "{}", "strict": False,
               "nan": "CAST('NaN' AS DOUBLE)"},
    "postgresql": {"double": "DOUBLE PRECISION", "log10": "LOG", "typed": "{}::float8",
                   "strict": True, "nan": "'NaN'::float8"},
}  # fmt: skip

#: e^x is finite for x ≤ _EXP_MAX (the log of the largest double) and > 0 for x ≥ _EXP_MIN
_EXP_MAX, _EXP_MIN = 709.782712893384, -745.0

#: Functions of an input's transform and their SQL names (None: the dialect's own)
_FUNCTIONS = {"log": "LN", "exp": "EXP", "sqrt": "SQRT", "abs": "ABS", "log10": None,
              "log2": None, "log1p": None, "expm1": None}  # fmt: skip
#: Binned terms with more cut points than this are written as a binary-search CASE, and
#: with more than _TREE_CASE_MAX as a join against a VALUES table of their intervals
_LINEAR_CASE_MAX = 32
_TREE_CASE_MAX = 1024
_ARITHMETIC_SQL = {"add": "+", "sub": "-", "mul": "*"}


def _spec_of(model: Any) -> Mapping[str, Any]:
    if isinstance(model, Mapping):
        return check_spec(model)  # validated (and translated from format 1) first
    if hasattr(model, "to_spec"):
        return check_spec(model.to_spec())
    raise TypeError(
        "to_sql needs a fitted model (formula results, an estimator, a SpecModel) or its "
        f"to_spec() description; got {type(model).__name__}."
    )


class _Writer:
    def __init__(
        self, dialect: str, kinds: Mapping[str, str] | None = None, table: Any = None
    ) -> None:
        if dialect not in DIALECTS:
            raise ValueError(f"dialect must be one of {sorted(DIALECTS)}; got {dialect!r}.")
        self.d = DIALECTS[dialect]
        self.dialect = dialect
        #: SQLite reads a double-quoted name that is no column as a string literal (its
        #: "double-quoted string" misfeature, on in most builds): there a column is
        #: qualified by its table, which makes an unknown name an error
        self.qualifier = self.table(table) if dialect == "sqlite" and table is not None else None
        self.strict = bool(self.d["strict"])
        #: column → kind at fit time (the description's ``column_kinds``; may be empty)
        self.kinds = dict(kinds or {})

    def no_nan(self, x: str) -> str:
        """A double value with NaN read as NULL: PostgreSQL and DuckDB keep NaN apart from
        NULL (NaN = NaN, NaN above every number), ``predict`` takes NaN as missing."""
        nan = self.d["nan"]
        return x if nan is None else f"NULLIF({x}, {nan})"

    def number_column(self, column: Any) -> str:
        """A data column read as a number: a boolean is 1/0 (DuckDB and PostgreSQL refuse
        ``double * boolean``, NULL stays NULL), a float or unknown column has its NaN as
        NULL, an integer column is itself."""
        kind, x = self.kinds.get(str(column)), self.col(column)
        if kind == "bool":
            one, zero = self.number(1.0), self.number(0.0)
            return f"(CASE WHEN {x} THEN {one} WHEN NOT {x} THEN {zero} END)"
        if kind == "int":
            return x
        return self.no_nan(x)

    def missing(self, column: Any) -> str:
        """The test that a data column is missing (NULL, or NaN in a float column)."""
        x = self.col(column)
        if self.kinds.get(str(column)) == "float":
            x = self.no_nan(x)
        return f"{x} IS NULL"

    def number(self, value: float) -> str:
        value = float(value)
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"the model holds a non-finite number ({value}).")
        return self.d["typed"].format(f"{value:.16e}")

    def saturated_exp(self, e: str) -> str:
        """e^e of a name ``e``: inf above the double range, 0 below (no overflow error)."""
        inf = self.d["typed"].format("'Infinity'")
        return (
            f"CASE WHEN {e} > {self.number(_EXP_MAX)} THEN {inf} "
            f"WHEN {e} < {self.number(_EXP_MIN)} THEN {self.number(0.0)} ELSE EXP({e}) END"
        )

    def exp(self, x: str) -> str:
        """e^x; where math errors abort the query, saturated as a double does (0, inf)."""
        if not self.strict:
            return f"EXP({x})"
        return f"(SELECT {self.saturated_exp('e')} FROM (SELECT {x} AS e) AS e)"

    def function(self, sql: str, x: str) -> str:
        """A math function of a term expression: NULL outside its domain (where ``predict``
        refuses the row), not PostgreSQL's error nor DuckDB's NaN or -inf."""
        if sql == "EXP":
            return self.exp(x)
        if sql in ("LN", "LOG", "LOG10"):
            return f"{sql}(CASE WHEN {x} > 0 THEN {x} END)"
        if sql == "SQRT":
            return f"SQRT(CASE WHEN {x} >= 0 THEN {x} END)"
        return f"{sql}({x})"

    @staticmethod
    def power(a: str, b: str, exponent: float | None) -> str:
        """a ** b, NULL where a constant exponent makes it no finite real number."""
        if exponent is not None and exponent != int(exponent):  # a negative base
            a = f"CASE WHEN {a} >= 0 THEN {a} END"
        if exponent is not None and exponent < 0:  # zero to a negative power
            a = f"NULLIF({a}, 0)"
        return f"POWER({a}, {b})"

    def name(self, column: Any) -> str:
        """An identifier, always quoted: double quotes, inner ones doubled (the rule of
        SQLite, DuckDB and PostgreSQL alike). Refused: a NUL character (no engine takes
        one) and, in PostgreSQL, more than 63 bytes (it would cut the name silently and
        read another column)."""
        text = str(column)
        if "\x00" in text:
            raise ValueError(f"the name {text!r} holds a NUL character, which SQL cannot quote.")
        if self.dialect == "postgresql" and len(text.encode("utf-8")) > 63:
            raise ValueError(
                f"the name {text!r} is longer than PostgreSQL's 63 bytes (it would be "
                "truncated to another name)."
            )
        return '"' + text.replace('"', '""') + '"'

    def col(self, column: Any) -> str:
        """A data column of the table, quoted (and in SQLite qualified by the table)."""
        x = self.name(column)
        return x if self.qualifier is None else f"{self.qualifier}.{x}"

    def table(self, table: Any) -> str:
        """The table: one name, or a sequence of names (``("schema", "table")``), each
        quoted — never pasted as SQL."""
        parts = [table] if isinstance(table, str) else list(table) if isinstance(
            table, Sequence) else None  # fmt: skip
        if not parts or not all(isinstance(p, str) and p for p in parts):
            raise ValueError(
                "table must be a table name (a non-empty string) or a sequence of names "
                f"(schema, table); got {table!r}."
            )
        return ".".join(self.name(p) for p in parts)

    @staticmethod
    def literal(value: Any) -> str:
        """A level as an SQL literal: a string in single quotes (inner ones doubled, NUL
        refused), a number as a number — an integral one as an integer, so that a text
        column holding ``3`` matches the level ``3.0`` in SQLite as in the scorer."""
        if isinstance(value, bool):
            return "TRUE" if value else "FALSE"
        if isinstance(value, int):
            return str(value)
        if isinstance(value, float):
            if value.is_integer() and abs(value) < 2.0**53:
                return str(int(value))
            return repr(value)
        text = str(value)
        if "\x00" in text:
            raise ValueError(f"the level {text!r} holds a NUL character, which SQL cannot quote.")
        return "'" + text.replace("'", "''") + "'"

    def column(self, column: Any) -> str:
        """A data column read as a number (an array position cannot be named)."""
        if isinstance(column, int):
            raise ValueError(
                "the model was fitted on an array (columns are positions): refit it on a "
                "DataFrame so that its columns have names the query can use."
            )
        return self.number_column(column)

    def input(self, source: Mapping[str, Any]) -> str:
        """A description's input (a column with at most one transform) as SQL."""
        transform = source.get("transform")
        if transform in ("add", "sub", "mul", "div"):
            a, b = (self.column(op) if isinstance(op, str) else self.number(op)
                    for op in source["operands"])  # fmt: skip
            if transform == "div":  # no integer division of integer columns
                # x / 0: NULL (SQLite's), not PostgreSQL's error nor DuckDB's inf
                return f"(CAST({a} AS {self.d['double']}) / NULLIF({b}, 0))"
            return f"({a} {_ARITHMETIC_SQL[transform]} {b})"
        x = self.column(source["column"])
        if transform is None:
            return x
        if transform == "power":
            e = source["exponent"]
            return self.power(x, self.number(e), float(e))
        if transform == "scale":
            return f"(({x} - {self.number(source['center'])}) / {self.number(source['scale'])})"
        if transform == "log10":
            return self.function(self.d["log10"], x)
        if transform == "log2":
            return f"({self.function('LN', x)} / {self.number(0.6931471805599453)})"
        if transform == "log1p":  # NULL at x <= -1, as log is outside its domain
            return self.function("LN", f"({self.number(1.0)} + {x})")
        if transform == "expm1":
            return f"({self.exp(x)} - {self.number(1.0)})"
        return self.function(_FUNCTIONS[transform], x)

    def _steps(self, x: str, cuts: list[float], values: list[float]) -> str:
        """θ of x on the intervals (…, c_0], (c_0, c_1], …, (c_last, …).

        Up to 32 cuts: a chain of WHENs. Up to 1,024: a binary search of nested CASEs
        (depth log2 of their number) on x named once in a sub-query. Beyond: the cuts
        and levels as two text constants that the database parses at run time (JSON in
        SQLite, an array in DuckDB and PostgreSQL), the level being the count of cuts
        below x. The databases compile a CASE in a time that grows as the square of its
        branches, and parse a VALUES table slowly (measured with SQLite 3.40: 2.6 s for
        a chain and 1.4 s for a tree of 8,192 cuts; 1 s to parse a VALUES table of
        65,536 rows), a text constant in linear time (65,535 cuts: 0.4 s).
        """
        n = self.number
        if len(cuts) <= _LINEAR_CASE_MAX:
            whens = [f"WHEN {x} <= {n(c)} THEN {n(v)}" for c, v in zip(cuts, values, strict=False)]
            return " ".join([*whens, f"WHEN {x} IS NOT NULL THEN {n(values[-1])}"])
        if len(cuts) <= _TREE_CASE_MAX:

            def tree(lo: int, hi: int) -> str:  # values lo..hi; cut k between k and k + 1
                if lo == hi:
                    return n(values[lo])
                mid = (lo + hi) // 2
                return (f"CASE WHEN v <= {n(cuts[mid])} THEN {tree(lo, mid)} "
                        f"ELSE {tree(mid + 1, hi)} END")  # fmt: skip

            search = f"(SELECT {tree(0, len(values) - 1)} FROM (SELECT {x} AS v) AS bin_v)"
            return f"WHEN {x} IS NOT NULL THEN {search}"
        # the cut points and levels as text the database parses at run time (its number
        # parser, the one that reads a literal): the level is the number of cuts below x
        cut_text = self.literal(",".join(f"{float(c):.16e}" for c in cuts))
        theta_text = self.literal(",".join(f"{float(v):.16e}" for v in values))
        if self.dialect == "sqlite":  # JSON1, built in since SQLite 3.38
            below = f"(SELECT COUNT(*) FROM json_each('[' || {cut_text} || ']') WHERE value < v)"
            pick = f"json_extract('[' || {theta_text} || ']', '$[' || {below} || ']')"
        else:
            array = "string_to_array({}, ',')::float8[]" if self.strict else (
                "CAST(string_split({}, ',') AS DOUBLE[])")  # fmt: skip
            below = (f"(SELECT COUNT(*) FROM unnest({array.format(cut_text)}) AS bin_c(c) "
                     "WHERE c < v)")  # fmt: skip
            pick = f"({array.format(theta_text)})[{below} + 1]"
        return f"WHEN {x} IS NOT NULL THEN (SELECT {pick} FROM (SELECT {x} AS v) AS bin_v)"

    def bin_term(self, term: Mapping[str, Any]) -> str:
        by = term.get("by")
        if by is not None:  # bin(x):C(g): the chain of the row's level of g
            g, d, first = self.col(by["column"]), len(term["edges"]) + 1, 0
            parts = ["CASE"]
            for i, level in enumerate(by["levels"]):
                if i == 0 and by["main"]:
                    value, first = self.number(term["theta"][0]), 1
                else:
                    chain = dict(term, theta=term["theta"][first : first + d], by=None)
                    value, first = f"({self.bin_term(chain)})", first + d
                parts.append(f"WHEN {g} = {self.literal(level)} THEN {value}")
            return " ".join(parts) + " END"
        x = self.input(term["input"])
        if not x.startswith("NULLIF("):  # an expression: log(x) of a NaN x is NaN
            x = self.no_nan(x)
        theta, edges = term["theta"], term["edges"]
        parts = ["CASE"]
        if term["missing_level"]:
            parts.append(f"WHEN {x} IS NULL THEN {self.number(theta[len(edges) + 1])}")
        # level k holds (e_{k-1}, e_k]; a cut between two equal levels changes nothing
        keep = [k for k in range(len(edges)) if theta[k] != theta[k + 1]]
        cuts = [edges[k] for k in keep]
        values = [theta[k] for k in keep] + [theta[len(edges)]]
        parts.append(self._steps(x, cuts, values))
        return " ".join(parts) + " END"

    def axis_value(self, source: Mapping[str, Any]) -> str:
        """A binned input as SQL, its NaN read as NULL."""
        x = self.input(source)
        return x if x.startswith("NULLIF(") else self.no_nan(x)

    def pair_term(self, term: Mapping[str, Any]) -> str:
        """A pair term ``bin(a):bin(b)``: a CASE on the bins of a (right-closed, as a
        ``bin`` term) whose every branch is the CASE of that row of the table on the
        bins of b; equal neighbouring rows (and cells) share a branch, a cell without
        training rows is 0 (as ``predict``), a NULL axis gives NULL."""
        (ax_a, ax_b), table = term["axes"], term["table"]
        xa, xb = self.axis_value(ax_a["input"]), self.axis_value(ax_b["input"])
        rows = [[0.0 if v is None else v for v in row] for row in table]

        def steps(x: str, edges: list[float], values: list[Any], render: Any) -> str:
            keep = [k for k in range(len(edges)) if values[k] != values[k + 1]]
            whens = [f"WHEN {x} <= {self.number(edges[k])} THEN {render(values[k])}"
                     for k in keep]  # fmt: skip
            return " ".join(["CASE", *whens, f"WHEN {x} IS NOT NULL THEN {render(values[-1])}",
                             "END"])  # fmt: skip

        def row_case(values: list[float]) -> str:
            return f"({steps(xb, ax_b['edges'], values, self.number)})"

        return steps(xa, ax_a["edges"], rows, row_case)

    def categorical_term(self, term: Mapping[str, Any]) -> str:
        if isinstance(term["column"], int):
            x = self.column(term["column"])  # the array-fit error
        else:  # levels compare with the column as it is (text, numbers, booleans)
            x = self.col(term["column"])
            if self.kinds.get(str(term["column"])) == "float":  # a NaN is the missing level
                x = self.no_nan(x)
        theta = term["theta"]
        parts = ["CASE"]
        if term["missing_level"]:
            parts.append(f"WHEN {x} IS NULL THEN {self.number(theta[len(term['levels'])])}")
        for level, value in zip(term["levels"], theta, strict=False):
            parts.append(f"WHEN {x} = {self.literal(level)} THEN {self.number(value)}")
        return " ".join(parts) + " END"

    def factor(self, factor: Any) -> str:
        if "level" not in factor:  # an input
            return self.input(factor)
        x = self.col(factor["column"])
        known = ", ".join(self.literal(v) for v in factor["levels"])
        return (
            f"CASE WHEN {x} = {self.literal(factor['level'])} THEN {self.number(1.0)} "
            f"WHEN {x} IN ({known}) THEN {self.number(0.0)} END"
        )

    def linear_term(self, term: Mapping[str, Any]) -> str:
        return " * ".join([self.number(term["coef"])] + [self.factor(f) for f in term["factors"]])


def _inverse_link(link: str, eta: str, w: _Writer, cox: bool = False) -> str:
    if cox:  # predict's relative risk e^min(η, 700), whatever the dialect
        cap, n = w.number(LOG_ETA_MAX), w.number
        low = f"WHEN e < {n(_EXP_MIN)} THEN {n(0.0)} " if w.strict else ""
        inside = f"CASE WHEN e > {cap} THEN EXP({cap}) {low}ELSE EXP(e) END"
        return f"(SELECT {inside} FROM (SELECT {eta} AS e) AS eta)"
    if link == "identity":
        return eta
    if link not in ("log", "logit", "cloglog", "loglog"):
        raise ValueError(f"link {link!r} has no SQL inverse here; export type='link' instead.")
    one = w.number(1.0)
    if not w.strict:
        return {
            "log": f"EXP({eta})",
            "logit": f"{one} / ({one} + EXP(-({eta})))",
            "cloglog": f"{one} - EXP(-EXP({eta}))",
            "loglog": f"EXP(-EXP(-({eta})))",
        }[link]
    # η once, in a scalar sub-query, and no EXP outside the double range: beyond these
    # bounds each formula is inf, or 0 or 1 to within 1e-300, in doubles as in predict
    zero, n = w.number(0.0), w.number
    inside = {
        "log": w.saturated_exp("e"),
        "logit": f"CASE WHEN e > {n(709.0)} THEN {one} WHEN e < {n(_EXP_MIN)} THEN {zero} "
        f"WHEN e < {n(-709.0)} THEN EXP(e) ELSE {one} / ({one} + EXP(-e)) END",
        "cloglog": f"CASE WHEN e > {n(6.6)} THEN {one} WHEN e < {n(_EXP_MIN)} THEN {zero} "
        f"ELSE {one} - EXP(-EXP(e)) END",
        "loglog": f"CASE WHEN e < {n(-6.6)} THEN {zero} WHEN e > {n(-_EXP_MIN)} THEN {one} "
        f"ELSE EXP(-EXP(-e)) END",
    }[link]
    return f"(SELECT {inside} FROM (SELECT {eta} AS e) AS eta)"


def to_sql(
    model: Any,
    table: str = "t",
    dialect: str = "sqlite",
    type: str = "response",  # noqa: A002 - the package's name for it
    name: str = "prediction",
    keep: Sequence[str] = (),
    offset_column: str | None = None,
) -> str:
    """One ``SELECT`` statement that scores every row of a table with a fitted model.

    Parameters
    ----------
    model : fitted model or dict
        Formula results, a fitted estimator, a ``SpecModel`` — anything with
        ``to_spec()`` — or the description itself.
    table : str or sequence of str, default="t"
        The table (or view) holding the rows, whose columns have the names the model was
        fitted with: its name, always quoted as an identifier (``"my table"``,
        ``"Select"``; never pasted as SQL, so ``"t; DROP TABLE x"`` is only a strange
        name), or ``("schema", "table")``. For a sub-query, create a view.
    dialect : {"sqlite", "duckdb", "postgresql"}, default="sqlite"
        SQLite needs its math functions (``LN``, ``EXP``; built in since 3.35 in
        most distributions).
    type : {"response", "link"}, default="response"
        The mean response g⁻¹(η) or the linear predictor η.
    name : str, default="prediction"
        The output column's name.
    keep : sequence of str, optional
        Columns of the table to select beside the prediction (e.g. a row id).
    offset_column : str, optional
        A column of the table added to η (the ``offset=`` of ``predict``); by default
        the offset column the model was fitted with, if any.

    Returns
    -------
    str
        The query, ``SELECT …, <expression> AS "prediction" FROM table``. Rows where
        ``predict`` raises (a missing value without a missing level, an unseen level)
        or gives NaN (``missing="drop"`` models) get NULL.

    Raises
    ------
    ValueError
        An unknown dialect or type, an invalid description (named by its field path),
        a link without an SQL inverse, a model fitted on an array, or a name SQL cannot
        quote (a NUL character; more than 63 bytes in PostgreSQL).

    Examples
    --------
    >>> import sqlite3
    >>> import numpy as np, pandas as pd
    >>> from binarsity_stats import BinarsityGLM, to_sql
    >>> X = pd.DataFrame({"x": np.linspace(0, 1, 50)})
    >>> est = BinarsityGLM(n_bins=4, lam=1e-3).fit(X, np.sin(6 * X["x"]))
    >>> con = sqlite3.connect(":memory:")
    >>> _ = X.to_sql("t", con)
    >>> rows = con.execute(to_sql(est, table="t")).fetchall()
    >>> bool(np.allclose([r[0] for r in rows], est.predict(X)))
    True
    """
    if type not in ("response", "link"):
        raise ValueError(f"type must be 'response' or 'link'; got {type!r}.")
    spec = _spec_of(model)
    w = _Writer(dialect, spec.get("column_kinds"), table)
    pieces = [w.number(spec["intercept"])]
    for source in spec["offset"]["terms"]:
        pieces.append(w.input(source))
    column = offset_column if offset_column is not None else spec["offset"].get("column")
    if column is not None:
        pieces.append(w.no_nan(w.col(column)))
    for term in spec["terms"]:
        if term["kind"] == "bin":
            pieces.append(f"({w.bin_term(term)})")
        elif term["kind"] == "categorical":
            pieces.append(f"({w.categorical_term(term)})")
        elif term["kind"] == "pair":
            pieces.append(f"({w.pair_term(term)})")
        else:
            pieces.append(f"({w.linear_term(term)})")
    eta = "\n    + ".join(pieces)
    family = spec["family"]
    cox = family["name"] == "cox"
    value = eta if type == "link" else _inverse_link(family["link"], f"\n    {eta}\n", w, cox)
    drop = (spec.get("missing") or {}).get("drop_columns") or []
    if drop:  # missing="drop": NULL where predict gives NaN (R's na.exclude)
        for c in drop:
            if isinstance(c, int):
                w.column(c)  # the array-fit error
        na = " OR ".join(w.missing(c) for c in drop)
        value = f"CASE WHEN {na} THEN NULL ELSE {value} END"
    selected = [w.col(c) for c in keep] + [f"{value} AS {w.name(name)}"]
    return "SELECT " + ",\n  ".join(selected) + f"\nFROM {w.table(table)}"
