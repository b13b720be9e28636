"""Numbers and intervals as labels show them: cut points, right-closed intervals, levels."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = [
    "format_cut",
    "format_value",
    "interval_label",
]


def format_cut(value: float) -> str:
    """Short, readable form of a cut point: ``38.0``, ``0.125``, ``-inf``.

    Parameters
    ----------
    value : float
        A cut point.

    Returns
    -------
    str
        At most six significant digits, always with a decimal point.
    """
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return np.format_float_positional(float(value), precision=6, unique=True, trim="0")


def format_value(value: float, precision: int | None = None) -> str:
    """A number as shown in an interval label: ``38``, ``0.125``, ``-inf``, ``1.5e+09``.

    Parameters
    ----------
    value : float
        A cut point or a training value.
    precision : int, optional
        Significant digits (default 6); trailing zeros and a bare decimal point are
        dropped.

    Returns
    -------
    str
        The shortest form of ``value`` rounded to ``precision`` significant digits.
    """
    digits = _check_precision(precision)
    v = float(value)
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if v == 0:
        return "0"
    if 1e-4 <= abs(v) < 10.0 ** max(digits, 6):
        return np.format_float_positional(v, precision=digits, unique=True, fractional=False,
                                          trim="-")  # fmt: skip
    return np.format_float_scientific(v, precision=digits - 1, unique=True, trim="-")


def _check_precision(precision: Any) -> int:
    if precision is None:
        return 6
    if isinstance(precision, bool) or not isinstance(precision, (int, np.integer)):
        raise TypeError(f"precision must be an integer >= 1; got {precision!r}.")
    if not 1 <= precision <= 17:
        raise ValueError(f"precision must be between 1 and 17; got {precision}.")
    return int(precision)


def interval_label(
    low: float, high: float, single: float | None = None, precision: int | None = None
) -> str:
    """Right-closed interval label of a bin: ``(-inf, 1]``, ``(1, 2]``, ``(4, inf]``.

    A bin holds the values x with low < x ≤ high (codes are
    ``searchsorted(edges, x, side="left")``). When it held one distinct training value,
    the label is that value: ``= 5``.

    Parameters
    ----------
    low, high : float
        The bounds; the end bins reach ±inf.
    single : float, optional
        The one distinct training value of the bin, if it had exactly one.
    precision : int, optional
        Significant digits of the numbers (default 6).

    Returns
    -------
    str
        The label.
    """
    if single is not None and not math.isnan(single):
        return f"= {format_value(single, precision)}"
    return f"({format_value(low, precision)}, {format_value(high, precision)}]"


def _level_label(level: Any) -> str:
    if isinstance(level, float) and level.is_integer():
        return format_cut(level)
    return str(level)
