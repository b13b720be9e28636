"""Column names that formulaic cannot take as they are: aliases, and names shown back.

A column name is data, never formula text: the formulas the package writes name awkward
columns by alias (:class:`AliasedFormula`), a formula the user writes is rewritten so that
formulaic reads every name as intended (:func:`alias_names`), the data formulaic sees gets
the alias columns (:func:`with_aliases`), and messages and labels show the names again
(:func:`unalias`, :func:`display_formula`).
"""

from __future__ import annotations

import ast
import keyword
import re
from collections.abc import Mapping
from typing import Any

import pandas as pd
from formulaic.errors import FormulaicError
from formulaic.transforms import TRANSFORMS

from ._transforms import _HELPERS, _OWN

__all__ = [
    "AliasedFormula",
    "display_formula",
    "literal_context",
]


def unwrap(
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
        return TypeError(unalias(clean_message(cause), aliases))
    if isinstance(cause, ValueError) and not isinstance(cause, SyntaxError):
        return ValueError(unalias(clean_message(cause), aliases))
    if isinstance(cause, SyntaxError):
        return ValueError(f"cannot parse {where}{clean_message(cause)}")
    text = unalias(clean_message(cause if cause is not None else exc), aliases)
    return ValueError(f"{where}{text}" if where else text)


def with_hints(exc: Exception, formula: str, columns: Any) -> Exception:
    """Add the hint an R user needs to an error raised while evaluating a formula.

    ``^`` inside ``I()`` is Python's exclusive or (R's power is ``**`` here); a name
    that is the start of a dotted column name (R's ``wt.kg``) needs backticks inside
    a call.
    """
    text = str(exc)
    hint = ""
    if isinstance(exc, TypeError) and "xor" in text and "^" in formula:
        hint = (
            " Inside I(...), '^' is Python's exclusive or, not a power: write powers "
            "with '**', e.g. I(age**2) for R's I(age^2)."
        )
    match = re.search(r"name '([^']+)' is not defined", text)
    if match:
        start = match.group(1) + "."
        dotted = [str(c) for c in columns if str(c).startswith(start)]
        if dotted:
            hint = (
                f" Column {dotted[0]!r} has a dot in its name: inside a call, write it in "
                f"backticks, {_quote(dotted[0])} (a dot is Python's attribute access)."
            )
    if not hint:
        return exc
    return type(exc)(text + ("" if text.rstrip().endswith(".") else ".") + hint)


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
    return unalias(str(formula), getattr(formula, "aliases", None))


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


def shown_name(name: str) -> str:
    """A column name as the term labels show it (display only: never parsed).

    The name itself when it can stand in formula text as it is, else backticked (R's
    escapes for a backtick or a control character): what :func:`unalias` shows for the
    alias of that name in a term, so that a label is the same whichever door built it.

    Parameters
    ----------
    name : str
        A data column's name.

    Returns
    -------
    str
        The name as a label shows it, e.g. ``age``, ```a b```, ```bin```.
    """
    if _plain_name(name):
        return name
    return f"`{name}`" if name in _OWN or name in _HELPERS else _quote(name)


class ColumnRefs:
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


#: Template of the identifiers that stand for awkward column names inside formulaic.
_ALIAS = "_bs{}_"
#: Template of the identifiers that stand for string literals holding a quote (a level
#: ``"it's"``): formulaic 1.2 embeds the source of a stateful call in a double-quoted
#: string without escaping it, so such a call (``C(g, levels=["it's"])``) cannot be
#: evaluated. The formula formulaic sees names the literal instead; its value is in the
#: evaluation context (:func:`literal_context`) and names show it again (``unalias``).
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


def alias_names(formula: str, columns: Any) -> tuple[str, dict[str, str], list[str]]:
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
    column = ColumnRefs(taken, aliases)
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


def with_aliases(
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


def unalias(
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


def clean_message(text: Any) -> str:
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
