"""The design objects: a ``bin()``/``C()`` term's :class:`Block`, the numerical
:class:`Design` the solver takes, and the replayable :class:`DesignSpec` (formulaic's
``ModelSpec`` plus the blocks) that gives the design of new data.
"""

from __future__ import annotations

import gc
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from formulaic.errors import FormulaicError

from ..core._validation import code_dtype
from ._columns import FORMULAIC_LOCK, as_frame, did_you_mean
from ._labels import _level_label, interval_label
from ._names import unalias, unwrap, with_aliases, literal_context
from ._transforms import transform_context

__all__ = [
    "Block",
    "Design",
    "DesignSpec",
    "dense_column_factors",
]


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
    pair_column : str or None
        The second column of a pair term ``bin(a, n):bin(b, m)`` (kind ``"pair"``,
        design.md §10; ``column``/``edges`` are the first axis', ``pair_edges`` the
        second's).
    pair_edges : ndarray or None
        Interior cut points of the pair's second axis.
    cells : tuple of int or None
        The pair's observed cells (flat ids k·K_b + l), one level each in this order;
        the block's last level is a cell without training rows (no parameter).
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
    pair_column: str | None = None
    pair_edges: np.ndarray | None = None
    cells: tuple | None = None

    @property
    def is_pair(self) -> bool:
        """Whether the block is a pair term's grid (``bin(a):bin(b)``)."""
        return getattr(self, "kind", None) == "pair"

    @property
    def grid_shape(self) -> tuple[int, int]:
        """(K_a, K_b) of a pair term's grid."""
        return (len(self.edges) + 1, len(self.pair_edges) + 1)

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
        return self.kind in ("bin", "pair") or bool(getattr(self, "ordered", False))

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
            One label per level, ``"missing"`` for a missing level (a pair term: one per
            observed cell, ``(a bin) x (b bin)``, then ``"empty at training"``). A binned level k
            holds the values x with low < x ≤ high: ``(low, high]`` (right-closed, the
            end levels reach ±inf), or ``= v`` when it held one distinct training value.
        """
        if self.kind == "pair":  # a cell of the grid: "(low, high] x (low, high]"
            lo_a, hi_a = self.intervals()
            bounds_b = np.concatenate([[-np.inf], self.pair_edges, [np.inf]])
            Kb = len(self.pair_edges) + 1
            labels = [
                f"{interval_label(lo_a[k], hi_a[k], precision=precision)} x "
                f"{interval_label(bounds_b[l], bounds_b[l + 1], precision=precision)}"
                for k, l in (divmod(int(c), Kb) for c in self.cells)
            ]
            return labels + ["empty at training"]
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

    def frame_of(self, data: Any) -> pd.DataFrame:
        """``data`` as a DataFrame holding every column the model reads (``required``).

        Parameters
        ----------
        data : DataFrame or mapping of columns
            New rows.

        Returns
        -------
        DataFrame
            The rows; a missing column raises a ValueError naming it.
        """
        data = as_frame(data)
        missing_cols = [c for c in self.required if c not in data.columns]
        if missing_cols:
            raise ValueError(
                f"column(s) {missing_cols} required by the formula are missing from the data."
                + did_you_mean(missing_cols, data.columns)
            )
        return data

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
        data = self.frame_of(data)
        data = with_aliases(data, self.aliases, self.shadowed)
        data = integers_as_float(data, getattr(self, "float_columns", None), self.aliases)
        _check_formulaic_levels(self.model_spec, data)
        ctx = transform_context(self.n_bins, self.missing) | literal_context(self.aliases)
        with warnings.catch_warnings():
            warnings.simplefilter("error", _data_mismatch_warning())
            try:
                with FORMULAIC_LOCK:
                    mm = self.model_spec.get_model_matrix(data, context=ctx)
            except FormulaicError as exc:
                raise unwrap(exc, self.aliases) from exc
            except Warning as exc:  # pragma: no cover - levels are checked above
                raise ValueError(str(exc)) from exc
        cols, dense, off = _model_columns(
            mm, self.dense_columns, self.offset_columns, self.block_columns, self.aliases
        )
        n = len(mm)
        del mm
        if n * len(cols) >= _COLLECT_BYTES:
            # formulaic's evaluated columns (a copy of the codes) sit in reference
            # cycles: freed before the codes are stacked (as at training, build_design)
            gc.collect(1)
        return _stack_codes(cols, self.blocks, dense, off, n)


#: codes of at least this many bytes (uint8) are worth a young-generation collection
#: (~1 ms) before they are stacked: a large prediction holds one copy of them fewer
_COLLECT_BYTES = 1 << 22


def _data_mismatch_warning() -> type[Warning]:
    from formulaic.errors import DataMismatchWarning

    return DataMismatchWarning


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
            name = unalias(col, aliases, column=True)
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
                            f"term {name!r}: only treatment (dummy) coding of {unalias(e, aliases)!r} "
                            "is described by the model description."
                        )
                    arg = (argument_expr(e) if e.startswith("C(") else e).strip("`")
                    plain = not any(ch in arg for ch in "()[]+-*/")
                    column = unalias(arg, aliases, quote=False) if plain else None
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


def integers_as_float(
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


def _model_columns(
    mm: pd.DataFrame,
    dense_cols: list[str],
    offset_cols: list[str],
    block_cols: list[str],
    aliases: Mapping[str, str] | None = None,
) -> tuple[list[np.ndarray], np.ndarray | None, np.ndarray | None]:
    """The blocks' code columns (views of ``mm``'s), the dense columns and the offset.

    Read before formulaic's model matrix is released, so that its evaluated columns
    (a copy of the codes besides ``mm``'s) can be freed before the codes are stacked
    (:func:`_stack_codes`).
    """
    # the names are the original ones; formulaic's columns use the aliases (looked up,
    # not renamed: a renamed frame is a copy of every column)
    name = {unalias(c, aliases, column=True): c for c in mm.columns} if aliases else {}
    cols = [mm[name.get(c, c)].to_numpy() for c in block_cols]
    dense = None
    if dense_cols:
        wanted = [name.get(c, c) for c in dense_cols]
        dense = np.ascontiguousarray(mm[wanted].to_numpy(dtype=np.float64))
        bad = ~np.isfinite(dense)
        if bad.any():
            col = dense_cols[int(np.nonzero(bad.any(axis=0))[0][0])]
            raise ValueError(
                f"term '{col}' has missing or infinite values; only bin() and C() terms "
                "can give missing values a level of their own (missing='separate')."
            )
    off = None
    if offset_cols:
        off = mm[[name.get(c, c) for c in offset_cols]].to_numpy(dtype=np.float64).sum(axis=1)
        if not np.all(np.isfinite(off)):
            raise ValueError(f"offset term {offset_cols} has missing or infinite values.")
    return cols, dense, off


def _stack_codes(
    cols: list[np.ndarray], blocks: list[Block], dense: np.ndarray | None,
    off: np.ndarray | None, n: int,
) -> Design:  # fmt: skip
    """The (p, n) codes from the blocks' columns; each column released once copied."""
    dtype = code_dtype(max((b.n_levels for b in blocks), default=1))
    codes = np.empty((len(blocks), n), dtype=dtype)
    for j in range(len(cols)):
        codes[j] = cols[j]
        cols[j] = None  # the model matrix's column (if nothing else holds it): freed
    sizes = [b.n_levels for b in blocks]
    block_ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
    return Design(codes=codes, block_ptr=block_ptr, dense=dense, offset=off)

