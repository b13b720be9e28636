"""R's arguments of ``glm()``: ``weights=``, ``subset=`` and ``exposure=``.

An R user writes ``glm(y ~ x, data, weights = w, subset = age > 30)`` and a Stata or
statsmodels user ``exposure=``. They are read here into what the model takes: the
weights as ``sample_weight``, the subset as the rows kept (with every per-row argument
cut alike), the exposure as an ``offset(log(exposure))`` term — written by column
reference (an alias for a name that is not a plain identifier: names are data, never
code), so that new rows replay it from their own column.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..formula._formula import AliasedFormula, ColumnRefs, as_frame

__all__ = ["read_r_arguments"]


def _per_row(value: Any, n: int) -> bool:
    return value is not None and not isinstance(value, str) and np.ndim(value) == 1 and (
        len(value) == n
    )


def _subset_mask(subset: Any, n: int) -> np.ndarray:
    """A boolean mask of the rows kept, from a mask or from row positions."""
    if isinstance(subset, str):
        raise TypeError(
            "subset must be a boolean mask or row positions, e.g. subset=df['age'] > 30 "
            "(an expression in a string is not evaluated: names are data, never code)."
        )
    arr = np.asarray(subset)
    if arr.ndim != 1:
        raise ValueError(f"subset must be one-dimensional; got shape {arr.shape}.")
    if arr.dtype == bool:
        if arr.shape[0] != n:
            raise ValueError(f"subset has {arr.shape[0]} values for {n} rows of data.")
        mask = arr
    elif np.issubdtype(arr.dtype, np.integer):
        if arr.size and (arr.min() < -n or arr.max() >= n):
            raise ValueError(f"subset holds row positions outside 0..{n - 1}.")
        mask = np.zeros(n, dtype=bool)
        mask[arr] = True
    else:
        raise TypeError(
            f"subset must be a boolean mask or integer row positions; got dtype {arr.dtype}."
        )
    if not mask.any():
        raise ValueError("subset keeps no row.")
    return mask


def read_r_arguments(
    formula: Any,
    data: Any,
    family: Any,
    sample_weight: Any,
    offset: Any,
    weights: Any,
    subset: Any,
    exposure: Any,
) -> tuple[Any, Any, Any, Any]:
    """``formula, data, sample_weight, offset`` with R's arguments folded in.

    Parameters
    ----------
    formula, data, family, sample_weight, offset
        As given to :func:`~binarsity_stats.glm`.
    weights : array-like or str, optional
        R's name of ``sample_weight`` (give one of the two).
    subset : array-like of bool or int, optional
        The rows to fit: a boolean mask of the data's length (a pandas Series is read
        by position) or row positions.
    exposure : array-like or str, optional
        Positive exposures t_i (a column name or values): ``log(t)`` joins the offset,
        for a family with a log link (poisson, gamma, Tweedie, negative binomial).

    Returns
    -------
    tuple
        The formula, the data, ``sample_weight`` and ``offset`` to build the model from.
    """
    from ..families._families import get_family

    if weights is not None:
        if sample_weight is not None:
            raise ValueError(
                "give the row weights once: weights= (R's name) or sample_weight=, not both."
            )
        sample_weight = weights
    if subset is None and exposure is None:
        return formula, data, sample_weight, offset
    if hasattr(data, "dask") or type(data).__module__.startswith("dask"):
        raise ValueError(
            "subset= and exposure= are not supported on a Dask DataFrame: filter it first "
            "(ddf[mask]) and write the exposure as a formula term offset(log(col))."
        )
    frame = as_frame(data)
    n = len(frame)
    if subset is not None:
        mask = _subset_mask(subset, n)
        if _per_row(sample_weight, n):
            sample_weight = np.asarray(sample_weight)[mask]
        if _per_row(offset, n):
            offset = np.asarray(offset)[mask]
        if _per_row(exposure, n):
            exposure = np.asarray(exposure)[mask]
        frame = frame.iloc[np.flatnonzero(mask)]
    if exposure is not None:
        fam = get_family(family)
        if fam.link != "log":
            raise ValueError(
                f"exposure= adds log(exposure) to the offset, which needs a log link; the "
                f"{fam.name} family's link is {fam.link}. Give an offset= instead."
            )
        if isinstance(exposure, str):
            if exposure not in frame.columns:
                raise ValueError(f"exposure={exposure!r} is not a column of the data.")
            values = frame[exposure].to_numpy(dtype=np.float64)
            _check_positive(values, f"exposure column {exposure!r}")
            ref = ColumnRefs(set(map(str, frame.columns)), getattr(formula, "aliases", None))
            text = f"{formula} + offset(log({ref(exposure)}))"
            formula = AliasedFormula(text, ref.aliases) if ref.aliases else text
        else:
            values = np.asarray(exposure, dtype=np.float64)
            if values.shape != (len(frame),):
                raise ValueError(
                    f"exposure has {values.size} values for {len(frame)} rows of data."
                )
            _check_positive(values, "exposure")
            logs = np.log(values)
            if offset is None:
                offset = logs
            elif isinstance(offset, str):
                raise ValueError(
                    "an exposure array with an offset column: give both as columns "
                    "(exposure='t', offset='o') or both as arrays."
                )
            else:
                offset = np.asarray(offset, dtype=np.float64) + logs
    return formula, frame, sample_weight, offset


def _check_positive(values: np.ndarray, what: str) -> None:
    bad = ~(np.isfinite(values) & (values > 0))
    if bad.any():
        shown = pd.unique(values[bad])[:3].tolist()
        raise ValueError(
            f"{what} must be positive and finite (its log is the offset); found {shown}."
        )
