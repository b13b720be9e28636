"""Reading the user's data: a frame, a column as numbers, an argument given as a column
name, the strata labels; every error names the column or the argument.
"""

from __future__ import annotations

import difflib
import threading
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..core._validation import as_real_array, check_offset, check_sample_weight, check_unique_names

#: Held around every formulaic evaluation. formulaic parses each factor's code with
#: :mod:`ast`, and CPython 3.11's parser fails when several threads parse at once
#: ("AST constructor recursion depth mismatch", CPython gh-106905): Dask's threaded
#: workers replay a design in many partitions at the same time.
FORMULAIC_LOCK = threading.RLock()

__all__ = [
    "did_you_mean",
    "strata_labels",
]


def column_name(data: Any) -> str:
    """Best-effort name of the data handed to a transform (for error messages)."""
    name = getattr(data, "name", None)
    return str(name) if name is not None else "<expression>"


def as_float(data: Any, name: str, what: str, hint: str | None = None) -> np.ndarray:
    """Return ``data`` as float64, refusing non-numeric columns with a clear message.

    Real numbers and booleans (NumPy or pandas nullable, ``pd.NA`` read as NaN) only:
    text, categories, dates and complex numbers raise a TypeError naming the column,
    followed by ``hint`` (by default: use ``C(name)`` for a categorical).
    """
    if isinstance(data, pd.Series):
        dtype = data.dtype
        real = pd.api.types.is_numeric_dtype(dtype) and getattr(dtype, "kind", "O") != "c"
        if pd.api.types.is_bool_dtype(dtype) or real:
            return data.to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        data = np.asarray(data)
        dtype = data.dtype
        if dtype.kind in "biuf":
            return data.astype(np.float64, copy=False).ravel()
    if isinstance(dtype, np.dtype) and dtype.kind == "O":
        # an object column of real numbers (None/NaN/pd.NA missing) reads as the
        # estimators read one; text in it falls through to the error below
        try:
            return as_real_array(np.asarray(data, dtype=object), name).ravel()
        except TypeError:
            pass
    hint = f"Use C({name}) for a categorical variable." if hint is None else hint
    raise TypeError(f"{what} needs a numeric column; column '{name}' has dtype {dtype}. {hint}")


def did_you_mean(names: Any, choices: Any) -> str:
    """`` Did you mean 'age'?`` for names close to some of ``choices`` (else "").

    Parameters
    ----------
    names : str or list of str
        The names not found.
    choices : iterable
        The names available (non-strings are ignored).

    Returns
    -------
    str
        A sentence to append to an error message, starting with a space, or "".
    """
    names = [names] if isinstance(names, str) else list(names)
    pool = [str(c) for c in choices]
    hints = []
    for name in names:
        close = difflib.get_close_matches(str(name), pool, n=3, cutoff=0.6)
        if not close:  # a different case is the commonest slip: Age for age
            close = [c for c in pool if c.lower() == str(name).lower()]
        if close:
            shown = " or ".join(repr(c) for c in close)
            hints.append(f"{shown} for {name!r}" if len(names) > 1 else shown)
    return f" Did you mean {'; '.join(hints)}?" if hints else ""


def column_or_array(value: Any, data, name: str, n: int) -> tuple[np.ndarray | None, str | None]:
    """An (n,) finite float array from an array-like or a column name of ``data``.

    Used for ``sample_weight`` and ``offset`` at fit time and for an offset column at
    predict time; errors name the argument and, for a column, the column.
    """
    if value is None:
        return None, None
    column, what = None, name
    if isinstance(value, str):
        if value not in data.columns:
            raise ValueError(
                f"{name}={value!r} is not a column of the data."
                + did_you_mean(value, data.columns)
            )
        column, what = value, f"{name} (column '{value}')"
        value = as_float(data[value], value, f"{name}={value!r}", "Convert it to numbers first.")
    check = check_sample_weight if name == "sample_weight" else check_offset
    return check(value, n, rows_of="the data", name=what), column


def frame_library(data: Any) -> str:
    """The top-level module of a data object's class (``"polars"``, ``"pandas"``...)."""
    return (type(data).__module__ or "").split(".")[0]


def as_frame(data: Any) -> pd.DataFrame:
    """The user's rows as a pandas DataFrame.

    pandas frames are used as they are; a mapping of columns is made a frame; polars and
    pyarrow tables (any eager frame narwhals reads) are converted, their column names
    and dtypes kept (narwhals, a dependency of formulaic).
    """
    if isinstance(data, pd.DataFrame):
        # a duplicated name is ambiguous for the formula (and formulaic fails on it)
        check_unique_names(data.columns, "data")
        return data
    if isinstance(data, Mapping):
        return pd.DataFrame(dict(data))
    if frame_library(data) in ("polars", "pyarrow", "modin", "cudf"):
        import narwhals as nw

        try:
            frame = nw.from_native(data, eager_only=True).to_pandas()
        except TypeError:  # a lazy frame or a series: said below
            frame = None
        if isinstance(frame, pd.DataFrame):
            check_unique_names(frame.columns, "data")
            return frame
    raise TypeError(
        "data must be a pandas, polars or pyarrow DataFrame (or a mapping of columns); got "
        f"{type(data).__name__} from module {type(data).__module__!r}"
        + (" (collect a lazy frame first: .collect())" if "Lazy" in type(data).__name__
           else "")  # fmt: skip
        + "."
    )


def like_callers_frame(out: pd.DataFrame, data: Any) -> Any:
    """``out`` as the kind of frame ``data`` was: polars or pyarrow when it was one."""
    library = frame_library(data)
    if library == "polars":
        import polars

        return polars.from_pandas(out.reset_index(drop=True))
    if library == "pyarrow":
        import pyarrow

        return pyarrow.Table.from_pandas(out, preserve_index=False)
    return out


def strata_labels(data: Any, columns: Sequence[str]) -> np.ndarray:
    """One label per row for the strata of ``columns`` (values joined by ``:``).

    Parameters
    ----------
    data : DataFrame
        The rows.
    columns : sequence of str
        The columns of a ``strata()`` term.

    Returns
    -------
    ndarray of str
    """
    frame = as_frame(data)
    absent = [c for c in columns if c not in frame.columns]
    if absent:
        raise ValueError(f"strata() names column(s) {absent} that are not in the data.")
    parts = []
    for c in columns:
        col = frame[c]
        if col.isna().any():
            raise ValueError(f"strata() column '{c}' contains missing values.")
        parts.append(col.astype(str).to_numpy(dtype=object))
    out = parts[0]
    for p in parts[1:]:
        out = out + ":" + p
    return np.asarray(out, dtype=object)
