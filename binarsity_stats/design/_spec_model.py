"""Reading a model description (see ``_spec``): :func:`check_spec` (the one validator,
``standalone_scorer.validate``, plus the family lookup), :func:`from_spec` and
:class:`SpecModel`, which predicts from the description's inputs in NumPy bit for bit
what the fitted object predicts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..core._validation import check_offset, code_dtype
from ._design import BinnedDesign
from .standalone_scorer import validate

__all__ = [
    "SpecModel",
    "block_theta",
    "check_spec",
    "from_spec",
    "input_values",
    "load_json",
]


def _family_from_spec(entry: Mapping[str, Any]) -> Any:
    from ..families._families import get_family

    sm = entry.get("statsmodels")
    if sm is not None:
        from ..families._statsmodels import CONVEX_LINKS, from_key

        # names looked up in statsmodels' modules: only the known families and links
        if sm["link"] not in CONVEX_LINKS.get(sm["family"], ()):
            raise ValueError(
                f"model description, family.statsmodels: family {sm['family']!r} with link "
                f"{sm['link']!r} is not supported (known: {sorted(CONVEX_LINKS)})."
            )
        return from_key(sm["family"], sm["link"], tuple(sorted(sm["params"].items())))
    try:
        return get_family(entry["name"])
    except (TypeError, ValueError) as exc:
        raise ValueError(f"model description, family.name: {exc}") from None


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


def _observed_cells(term: Mapping[str, Any]) -> np.ndarray:
    """The flat ids ``k · K_b + l`` of a pair term's cells that hold a value, increasing."""
    table = term["table"]
    kb = len(term["axes"][1]["edges"]) + 1
    return np.asarray([k * kb + m for k, row in enumerate(table)
                       for m, v in enumerate(row) if v is not None], dtype=np.intp)  # fmt: skip


def block_theta(term: Mapping[str, Any]) -> list[float]:
    """The levels of a (validated) term's block, as the fitted model's θ holds them.

    Parameters
    ----------
    term : dict
        A ``bin``, ``categorical`` or ``pair`` term of a description.

    Returns
    -------
    list of float
        ``theta``; for a pair term the observed cells' values in row-major order, then
        0 for the cells without training rows (the fitted block's trailing level, which
        carries no parameter).
    """
    if term["kind"] != "pair":
        return list(term["theta"])
    return [v for row in term["table"] for v in row if v is not None] + [0.0]


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
        thetas = [block_theta(t) for t in blocks]
        self._block_ptr = np.concatenate([[0], np.cumsum([len(v) for v in thetas])]).astype(np.intp)
        self._theta = np.asarray([v for theta in thetas for v in theta], dtype=np.float64)
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

        most = int(np.max(np.diff(self._block_ptr), initial=1))
        codes = np.empty((len(self._blocks), n), dtype=code_dtype(most))
        for j, t in enumerate(self._blocks):
            if t["kind"] == "pair":
                codes[j] = self._pair_codes(data, t)
            elif t["kind"] == "bin":
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

    def _pair_codes(self, data: Any, term: Mapping[str, Any]) -> np.ndarray:
        """The level of every row in a pair term's block: the position of its cell among
        the observed cells (row-major), or the trailing level of the unobserved ones."""
        from ._binarizer import bin_codes

        flat = None
        for axis in term["axes"]:
            x = self._input(data, axis["input"])
            edges = np.asarray(axis["edges"], dtype=np.float64)
            c, bad = bin_codes(x, edges, False)
            if bad >= 0:
                what = "infinite values" if not np.isnan(x[bad]) else (
                    "missing values (NaN) but the pair term has no missing level for it")  # fmt: skip
                raise ValueError(f"column {axis['column']!r} contains {what}.")
            flat = c.astype(np.intp) if flat is None else flat * (len(edges) + 1) + c
        cells = _observed_cells(term)
        pos = np.minimum(np.searchsorted(cells, flat), max(len(cells) - 1, 0))
        hit = cells[pos] == flat if len(cells) else np.zeros(len(flat), dtype=bool)
        return np.where(hit, pos, len(cells))

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
