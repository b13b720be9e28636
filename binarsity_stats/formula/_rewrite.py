"""Reading and rewriting a parsed formula's terms before formulaic materialises them.

``.`` expanded (:func:`expand_dot`), bare non-numeric columns read as ``C(col)``,
``bin(x):C(g)`` rewritten as one by-group block (:func:`_by_plan`), ``bin(C(x, levels=...))``
as ``ordered(x, ...)``, ``strata()`` terms taken out, and the data columns each side of a
formula reads.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from typing import Any

import pandas as pd
from formulaic.transforms import TRANSFORMS
from formulaic.utils.code import format_expr, sanitize_variable_names

from ..design._column_access import is_datetime_like
from ._columns import as_frame
from ._names import (
    _IS_LITERAL,
    AliasedFormula,
    ColumnRefs,
    _quote,
    _rejoin,
    _scan,
    _source_name,
    display_formula,
)
from ._transforms import _HELPERS, _OWN

__all__ = [
    "expand_dot",
]


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


def term_str(term: Any) -> str:
    """A parsed term written back as formula text (``str(term)`` drops backticks)."""
    return ":".join(
        _source_name(f.expr) if f.eval_method.value == "lookup" else f.expr for f in term.factors
    )


def rewrite_rhs(formula: Any, data: pd.DataFrame) -> str:
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
        if own == ["bin", "bin"] and len(factors) == 2:
            terms.append(_pair_term(factors[0].expr, factors[1].expr, term))
            continue
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
            terms.append(term_str(term))
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


def _pair_term(first: str, second: str, term: Any) -> str:
    """``bin(a, n):bin(b, m)`` (a pair term, design.md §10) as one factor
    ``bin(a, n, pair=b, pair_bins=m)``: the two parsed factors' own (aliased) argument
    texts moved into one call, no column name written."""
    parts = []
    for expr in (first, second):
        pos, kw = _call_args(expr)
        extra = set(kw) - {"n_bins"}
        if not pos or len(pos) > 2 or extra or ("n_bins" in kw and len(pos) > 1):
            raise ValueError(
                f"in the pair term '{term}', each bin() takes its column and a number of "
                "bins only, e.g. bin(a, 16):bin(b, 16)."
            )
        parts.append((pos[0], pos[1] if len(pos) > 1 else kw.get("n_bins")))
    (a, n_a), (b, n_b) = parts
    args = [a] + ([n_a] if n_a is not None else []) + [f"pair={b}"]
    args += [f"pair_bins={n_b}"] if n_b is not None else []
    return f"bin({', '.join(args)})"


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


def required_columns(formula: Any, side: str, aliases: Mapping[str, str]) -> list[str]:
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


def expand_dot(formula: str, data: Any, exclude_columns: Any = ()) -> str:
    """Expand R's ``.`` on the right-hand side into every other column of ``data``.

    A numeric column becomes ``bin(col)`` (the default bins), a text, categorical or
    boolean column ``C(col)``. Left out: the response's columns, every column the
    formula names as a term elsewhere (``y ~ . + C(age)`` does not also bin ``age``;
    ``y ~ . - id`` leaves ``id`` out; as in R, a column used only inside ``I(...)`` stays:
    ``y ~ . + I(age**2)`` has ``bin(age)`` and ``I(age**2)``) and ``exclude_columns`` (the weight and offset columns). A date or
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
        The formula with ``.`` replaced (unchanged when it has none), and R's
        ``factor(x)`` read as ``C(x)`` (:func:`r_spellings`).
    """
    formula = r_spellings(formula)
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
    data = as_frame(data)

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
    # as R: a column used only inside I(...) is another variable (y ~ . + I(age**2)
    # keeps age); one named as a term of its own (age, bin(age), C(age), - age) is not
    terms_named = _names_outside_identity(pieces)
    terms_named |= {given[t] for t in terms_named if t in given}
    skip = terms_named | {str(c) for c in exclude_columns if c is not None}
    # a column is written as itself only when it is a plain ASCII name, else by an
    # alias: no column name is ever pasted into the formula's text (names are data)
    ref = ColumnRefs({str(c) for c in data.columns} | named, given)
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


def _names_outside_identity(pieces: list) -> set[str]:
    """The names of a scanned formula that are not inside an ``I(...)`` call."""
    out: set[str] = set()
    stack: list[bool] = []  # per open parenthesis: is it (inside) an I( call?
    last_name = None
    for kind, text in pieces:
        inside = bool(stack) and stack[-1]
        if kind in ("name", "quoted"):
            if not inside:
                out.add(text)
            last_name = text if kind == "name" else None
            continue
        if text == "(":
            stack.append(inside or last_name == "I")
        elif text == ")" and stack:
            stack.pop()
        if text.strip():
            last_name = None
    return out


def r_spellings(formula: Any) -> Any:
    """R's spellings read as the package's: ``factor(x)`` is ``C(x)``.

    Only a call is rewritten (a column named ``factor`` stays a column); the aliases of
    a formula the package wrote are kept.
    """
    if "factor" not in formula:
        return formula
    pieces = list(_scan(formula))
    texts = [t for _, t in pieces]
    changed = False
    for i, (kind, text) in enumerate(pieces):
        if kind != "name" or text != "factor":
            continue
        j = i + 1
        while j < len(pieces) and not texts[j].strip():
            j += 1
        prev = i - 1
        while prev >= 0 and not texts[prev].strip():
            prev -= 1
        if j < len(pieces) and texts[j] == "(" and not (prev >= 0 and texts[prev] == "."):
            texts[i] = "C"
            changed = True
    if not changed:
        return formula
    out = _rejoin(pieces, texts)
    given = getattr(formula, "aliases", None)
    return AliasedFormula(out, given) if given else out


def categorical_columns(formula: Any, aliases: Mapping[str, str] | None) -> set[str]:
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


_STRATA = re.compile(r"\+\s*strata\(([^()]*)\)|strata\(([^()]*)\)\s*\+?")


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
