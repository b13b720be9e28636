"""The binarizer's input: validation of its arguments and of X, and column-by-column access
to X without a full float copy (NumPy arrays, DataFrames, dates as ISO text), with errors
naming the column and row.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import pandas as pd

from ..core._validation import as_real_array, check_n_bins, check_sample_weight

__all__ = [
    "date_levels",
    "is_datetime_like",
]


def _check_choice(value: Any, name: str, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}.")
    return value


def check_binarizer_n_bins(n_bins: Any, n_features: int, missing: str) -> np.ndarray:
    """Validate ``n_bins`` and return it as one int64 per feature."""

    def one(v: Any, where: str) -> int:
        return check_n_bins(v, f"n_bins{where}", missing)

    if isinstance(n_bins, str | bytes) or not np.iterable(n_bins):
        return np.full(n_features, one(n_bins, ""), dtype=np.int64)
    values = list(n_bins)
    if len(values) != n_features:
        raise ValueError(f"n_bins has {len(values)} entries but X has {n_features} features.")
    return np.array([one(v, f"[{j}]") for j, v in enumerate(values)], dtype=np.int64)


def _check_sample_weight(sample_weight: Any, n: int) -> tuple[np.ndarray, int] | None:
    w = check_sample_weight(sample_weight, n)
    return None if w is None else _fixed_point(w)


def _fixed_point(w: np.ndarray) -> tuple[np.ndarray, int]:
    """Weights as int64 multiples ``q`` of ``2**-shift``, with Σ q < 2**61.

    ``shift`` is fixed by max(w) and n only. Sums of ``q`` are exact, so the per-value
    and per-bin weights, and every decision taken on them, do not depend on the order
    of the rows (float sums would, in their last bits). The resolution is
    n max(w) 2**-61; a weight below half of it counts as zero. The binning is invariant
    to the scale of the weights, so w is first divided by 2**e ≥ max(w) (exactly, a
    power of two): one factor 2**(61 - e - bits(n)) would overflow for max(w) below
    ~1e-289 (or underflow for huge weights). Convert sums back with ``from_fixed``.
    """
    _, e = np.frexp(w.max())  # max(w) < 2**e, n < 2**bit_length
    bits = 61 - int(w.shape[0]).bit_length()
    q = np.rint(np.ldexp(np.ldexp(w, -int(e)), bits)).astype(np.int64)
    return q, bits - int(e)


def from_fixed(q_sum: Any, shift: int) -> Any:
    """Weights back from fixed-point sums: ``q_sum * 2**-shift`` (exact when normal)."""
    return np.ldexp(np.asarray(q_sum, dtype=np.float64), -shift)


class _Columns:
    """Column-by-column access to a validated 2-D input, without copying X.

    ``get(j)`` returns column j as a 1-D float32/float64 array: a view when possible
    (possibly strided), else a float64 copy of that one column. ``matrix`` is X itself
    when it is a float32/float64 ndarray (coded in one kernel call), and ``rows(i0,
    i1)`` converts a block of rows of another numeric ndarray to float64; both are None
    for DataFrames, whose columns are separate arrays.
    """

    def __init__(
        self,
        n_samples: int,
        n_features: int,
        names: np.ndarray | None,
        get: Any,
        label: Any,
        matrix: np.ndarray | None = None,
        rows: Any = None,
    ) -> None:
        self.n_samples = n_samples
        self.n_features = n_features
        self.names = names
        self.get = get
        self.label = label
        self.matrix = matrix
        self.rows = rows


def as_columns(X: Any, select: np.ndarray | None = None) -> _Columns:
    """Validate X (types, shape) and wrap it for column access.

    ``select``: for a DataFrame, the column names to take, in this order (the names
    seen in fit); missing names raise, other columns are ignored.
    """
    if isinstance(X, pd.DataFrame):
        return _frame_columns(X, select)
    if isinstance(X, pd.Series) or getattr(X, "ndim", 2) == 1:
        raise ValueError(
            "X must be 2-D (n_samples, n_features), got a 1-D input. Reshape your data: "
            "X.reshape(-1, 1) (or a one-column DataFrame) for a single feature."
        )
    if _is_sparse(X):
        raise TypeError(
            "Sparse input is not supported: the binarizer needs the raw numeric "
            "features; pass a dense array (X.toarray())."
        )
    arr = X if isinstance(X, np.ndarray) else np.asarray(X)
    if arr.dtype.kind in "US" and not isinstance(X, np.ndarray):
        arr = np.asarray(X, dtype=object)  # locate the offending column of a list
    if arr.ndim != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features), got {arr.ndim}-D.")
    n, p = arr.shape
    if p == 0:
        raise ValueError(_NO_FEATURES.format(shape=arr.shape))
    kind = arr.dtype.kind

    def label(j: int) -> str:
        return f"column {j}"

    if kind in "mM":
        raise TypeError(
            f"{label(0)} has dtype {arr.dtype}: datetimes/timedeltas are not numbers; "
            "convert them first (e.g. to days since a reference date)."
        )
    if kind == "c":
        raise ValueError(
            f"Complex data not supported: {label(0)} has dtype {arr.dtype}; the binarizer "
            "takes real numbers."
        )
    if kind in "USV":
        raise TypeError(
            f"{label(0)} has non-numeric dtype {arr.dtype}; the binarizer takes real numbers."
        )
    if kind == "O":
        # numbers only (text refused by column); None, NaN and pd.NA are missing values
        cols = [as_real_array(arr[:, j], label(j)) for j in range(p)]
        return _Columns(n, p, None, lambda j: cols[j], label)
    if kind == "f" and arr.dtype.itemsize in (4, 8) and arr.dtype.isnative:
        return _Columns(n, p, None, lambda j: arr[:, j], label, matrix=arr)
    # bool, integers, float16, non-native byte order
    return _Columns(
        n,
        p,
        None,
        lambda j: arr[:, j].astype(np.float64),
        label,
        rows=lambda i0, i1: arr[i0:i1].astype(np.float64),
    )


_NO_FEATURES = "Found array with 0 feature(s) (shape={shape}) while a minimum of 1 is required."


def _is_sparse(X: Any) -> bool:
    try:
        import scipy.sparse as sp
    except ImportError:  # pragma: no cover
        return False
    return sp.issparse(X)


def _frame_columns(X: pd.DataFrame, select: np.ndarray | None) -> _Columns:
    columns = X.columns
    if select is None:
        if not columns.is_unique:
            dup = columns[columns.duplicated()].unique().tolist()
            raise ValueError(f"X has duplicated column names {dup}; names must be unique.")
        positions = np.arange(len(columns))
        names = np.asarray(columns, dtype=object)
    else:
        missing = [name for name in select if name not in columns]
        if missing:
            raise ValueError(
                f"X lacks column(s) {missing} seen in fit (columns are matched by name)."
            )
        positions = []
        for name in select:
            loc = columns.get_loc(name)
            if not isinstance(loc, numbers.Integral):
                raise ValueError(f"column {name!r} appears more than once in X.")
            positions.append(int(loc))
        positions = np.asarray(positions, dtype=np.intp)
        names = np.asarray(select, dtype=object)
    if len(positions) == 0:
        raise ValueError(_NO_FEATURES.format(shape=X.shape))

    def label(j: int) -> str:
        return f"column {names[j]!r}"

    readers = [_series_reader(X.dtypes.iloc[pos], label(j)) for j, pos in enumerate(positions)]

    def get(j: int) -> np.ndarray:
        return readers[j](X.iloc[:, positions[j]])

    return _Columns(len(X), len(positions), names, get, label)


def _series_reader(dtype: Any, label: str) -> Any:
    """Check a DataFrame column's dtype; return the function that reads it as floats."""
    if isinstance(dtype, pd.CategoricalDtype):
        raise TypeError(
            f"{label} is categorical: bins are for continuous features. Name it in the "
            "estimators' categorical_features=[...] (a factor, one level per category; "
            "glm(): C(col)), or pass numeric codes explicitly (e.g. X[col].cat.codes) if "
            "the categories are ordered."
        )
    if is_datetime_like(dtype):
        raise TypeError(
            f"{label} has datetime-like dtype {dtype}; convert it to a number first, "
            "e.g. (X[col] - reference).dt.days or X[col].dt.year."
        )
    if isinstance(dtype, np.dtype) and dtype.kind == "O":
        # an object column is read as an object ndarray is: real numbers (and missing
        # values) only, text refused by column
        return lambda s: as_real_array(s.to_numpy(), label)
    kind = getattr(dtype, "kind", "O")
    numeric = pd.api.types.is_bool_dtype(dtype) or (
        pd.api.types.is_numeric_dtype(dtype) and kind != "c"
    )
    if not numeric:
        raise TypeError(
            f"{label} has non-numeric dtype {dtype}; bins take real numbers. A "
            "categorical feature: name it in the estimators' categorical_features=[...] "
            "(a factor, one level per category; glm(): C(col)); numbers stored as text: "
            "convert with pd.to_numeric."
        )
    if isinstance(dtype, np.dtype) and kind == "f" and dtype.itemsize in (4, 8):
        return lambda s: s.to_numpy()
    return lambda s: s.to_numpy(dtype=np.float64, na_value=np.nan)


def date_levels(values: Any) -> Any:
    """Dates and times as the ISO 8601 text a categorical level is (missing kept).

    Each value on its own (so training and new data agree): ``"2024-01-31"`` for a
    time-zone-naive date at midnight, else ``Timestamp.isoformat()``
    (``"2024-01-31T12:30:00"``, ``"2024-01-31T00:00:00+01:00"``). ``C(t)`` on a
    ``datetime64`` column has these levels (labels, summary, ``to_spec``), and a CSV
    column of the same dates, read as text, matches them.

    Parameters
    ----------
    values : Series of datetime64 dtype (naive or tz-aware)
        The column.

    Returns
    -------
    Series of object
        ISO strings, NaN where the value is missing (NaT).
    """
    s = pd.Series(values)
    out = pd.Series(np.full(len(s), np.nan, dtype=object), index=s.index)
    ok = s.notna().to_numpy()
    if ok.any():
        v = s[ok]
        iso = v.map(lambda t: t.isoformat()).astype(object)
        if getattr(v.dt, "tz", None) is None:
            midnight = (v == v.dt.normalize()).to_numpy()
            iso[midnight] = v[midnight].dt.strftime("%Y-%m-%d").astype(object)
        out[ok] = iso.to_numpy(dtype=object)
    return out


def is_datetime_like(dtype: Any) -> bool:
    """Datetimes (tz-aware too), timedeltas and periods: ordered, but not numbers."""
    return getattr(dtype, "kind", "O") in "mM" or isinstance(dtype, pd.PeriodDtype)


def raise_bad_value(value: float, label: str, row: int, fitted: bool = False) -> None:
    if np.isnan(value):
        if fitted:
            raise ValueError(
                f"{label} has a missing value (NaN) at row {row}, but it had none in "
                "training, so it has no missing level. Impute it, or refit with "
                'missing="separate" on data that contains missing values.'
            )
        raise ValueError(
            f"{label} has a missing value (NaN) at row {row}. Impute it, or use "
            'missing="separate" to give missing values a level of their own.'
        )
    raise ValueError(f"{label} has an infinite value ({value}) at row {row}.")
