"""Validation of the row arrays: sample weights, offsets, CV groups, names (one wording each).

Part of the one place of validation (``core/_validation``, which re-exports every
checker here, and whose rules apply: a ``TypeError`` for the wrong kind of object, a
``ValueError`` for a bad value, the argument named first; bool is not a number; text,
complex numbers and dates are refused, never converted). NumPy only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._numbers import LOSS_LIMIT, _is_bool, _is_real

__all__ = [
    "as_real_array",
    "check_sample_weight",
    "normalized_weights",
    "check_offset",
    "check_offset_loss",
    "check_groups",
    "check_unique_names",
    "check_weights_kind",
    "is_missing",
]


def is_missing(value: Any) -> bool:
    """None, NaN, NaT or pandas' NA, recognised without importing pandas.

    Parameters
    ----------
    value : Any
        One entry of an object array.

    Returns
    -------
    bool
    """
    if value is None:
        return True
    if type(value).__name__ in ("NAType", "NaTType"):
        return True
    try:
        return bool(value != value)
    except (TypeError, ValueError):
        return False


def as_real_array(value: Any, name: str) -> np.ndarray:
    """``value`` as a float64 array, refusing what is not real numbers by name.

    Real dtypes (bool, integers, floats) convert; an object array converts when every
    entry is a real number or missing (None, NaN, ``pd.NA``: NaN); pandas nullable
    arrays convert with ``pd.NA`` as NaN. Text (even ``"1.5"``), complex numbers, dates
    and anything else raise a TypeError naming the argument.

    Parameters
    ----------
    value : array-like
        The argument.
    name : str
        Its name in messages.

    Returns
    -------
    ndarray of float64
        Same shape as ``value``.
    """
    to_numpy = getattr(value, "to_numpy", None)
    if to_numpy is not None and not isinstance(value, np.ndarray):
        kind = getattr(getattr(value, "dtype", None), "kind", "O")
        if kind in "biuf":  # pandas nullable dtypes: pd.NA becomes NaN
            try:
                return np.asarray(to_numpy(dtype=np.float64, na_value=np.nan))
            except (TypeError, ValueError):
                pass
        value = to_numpy()
    arr = np.asarray(value)
    kind = arr.dtype.kind
    if kind in "biuf":
        return arr.astype(np.float64)
    if kind == "O":
        out = np.empty(arr.shape, dtype=np.float64)
        flat = out.reshape(-1)
        for i, v in enumerate(arr.reshape(-1)):
            if is_missing(v):
                flat[i] = np.nan
            elif _is_real(v) or _is_bool(v):
                flat[i] = float(v)
            else:
                raise TypeError(
                    f"{name} holds a non-numeric value {v!r} ({type(v).__name__}) at row "
                    f"{i}; the argument must be a real number: a string, even '1.5', is not "
                    "a number (convert text with pd.to_numeric first)."
                )
        return out
    raise TypeError(f"{name} must be numeric; got dtype {arr.dtype}.")


def _row_array(value: Any, name: str, n: int, rows_of: str) -> np.ndarray:
    arr = as_real_array(value, name)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional; got shape {arr.shape}.")
    if arr.shape[0] != n:
        raise ValueError(f"{name} has {arr.shape[0]} rows but {rows_of} has {n}.")
    if not np.all(np.isfinite(arr)):
        row = int(np.flatnonzero(~np.isfinite(arr))[0])
        raise ValueError(
            f"{name} contains NaN or infinite values (first at row {row}: {arr[row]})."
        )
    return np.ascontiguousarray(arr)


def check_sample_weight(
    sample_weight: Any, n: int, rows_of: str = "X", name: str = "sample_weight"
) -> np.ndarray | None:
    """Row weights: n finite values ≥ 0, at least one positive; None stays None.

    Weights are returned in the user's units; sums are taken on
    :func:`normalized_weights`, so any scale fits (all 1e306, all 1e-312). Weights
    whose range cannot be represented next to each other (a positive weight more
    than ~1e308 times smaller than the largest) are refused.

    Parameters
    ----------
    sample_weight : array-like of shape (n,) or None
        The argument.
    n : int
        Number of rows expected.
    rows_of : str, default="X"
        What has n rows (``"X"``, ``"the data"``, ``"y"``), for messages.
    name : str, default="sample_weight"
        Its name in messages.

    Returns
    -------
    ndarray of shape (n,) or None
    """
    if sample_weight is None:
        return None
    sw = _row_array(sample_weight, name, n, rows_of)
    if np.any(sw < 0):
        row = int(np.flatnonzero(sw < 0)[0])
        raise ValueError(f"{name} must be non-negative; row {row} has {sw[row]}.")
    if not np.any(sw > 0):
        raise ValueError(f"{name} is zero for every row; at least one must be positive.")
    normalized_weights(sw, name)
    return sw


def normalized_weights(sw: np.ndarray, name: str = "sample_weight") -> tuple[np.ndarray, float]:
    """Weights divided by a power of two close to their maximum, and that factor.

    The objective (1/W) Σ s_i ℓ_i does not change when every weight is multiplied by
    one constant, so every sum is taken on weights whose largest is in [1, 2): the
    total W ≤ 2n can neither overflow (all weights 1e306) nor underflow (all 1e-312).
    Dividing by a power of two is exact, so weights that differ by a power-of-two
    factor give bitwise the same fit, and unit weights are unchanged.

    Parameters
    ----------
    sw : ndarray of shape (n,)
        Validated weights (finite, ≥ 0, one positive).
    name : str, default="sample_weight"
        Its name in messages.

    Returns
    -------
    normalized : ndarray of shape (n,)
        ``sw / scale``.
    scale : float
        The power of two.
    """
    _, e = np.frexp(np.max(sw))
    shift = int(e) - 1
    out = np.ldexp(sw, -shift)
    positive = sw > 0
    if np.any(out[positive] < np.finfo(np.float64).tiny):
        low = float(np.min(sw[positive]))
        raise ValueError(
            f"{name} ranges from {low:.3g} to {float(np.max(sw)):.3g}: a ratio beyond "
            "1e308 cannot be represented; set the negligible weights to 0 or rescale."
        )
    return out, float(np.ldexp(1.0, shift))


def check_offset(
    offset: Any, n: int, rows_of: str = "X", name: str = "offset"
) -> np.ndarray | None:
    """An offset of the linear predictor: n finite numbers; None stays None.

    Whether the family's loss can be evaluated at it is checked by
    :func:`check_offset_loss`, once y and the family are known.

    Parameters
    ----------
    offset : array-like of shape (n,) or None
        The argument.
    n : int
        Number of rows expected.
    rows_of : str, default="X"
        What has n rows, for messages.
    name : str, default="offset"
        Its name in messages.

    Returns
    -------
    ndarray of shape (n,) or None
    """
    if offset is None:
        return None
    return _row_array(offset, name, n, rows_of)


def check_offset_loss(
    family: Any, y: np.ndarray, offset: np.ndarray | None, sw: np.ndarray
) -> None:
    """Refuse an offset at which the family's loss overflows (a fit would be NaN/inf).

    The average loss of the offset-only model, (1/W) Σ s_i ℓ(y_i, offset_i), must be
    finite and at most :data:`LOSS_LIMIT` (the solver evaluates points a few times
    further out). Family-agnostic: it asks the family for its loss only. For the
    gaussian family this bounds |y − offset| by ~1e150, as y itself is bounded; for
    poisson it bounds the offset by ~690 (exp overflows at 709).

    Parameters
    ----------
    family : Family
        The distribution (its ``loss_sum``).
    y : ndarray of shape (n,)
        Response.
    offset : ndarray of shape (n,) or None
        Offset (nothing to check when None).
    sw : ndarray of shape (n,)
        Normalised weights (see :func:`normalized_weights`).
    """
    if offset is None:
        return
    with np.errstate(all="ignore"):
        loss = float(family.loss_sum(offset, y, sw)) / float(np.sum(sw))
    if not (np.isfinite(loss) and loss <= LOSS_LIMIT):
        top = float(np.max(np.abs(offset)))
        raise ValueError(
            f"offset has values as large as {top:.3g} in magnitude: the {family.name} "
            f"loss at the offset alone is {loss:.3g}, beyond what float64 can fit "
            f"(~{LOSS_LIMIT:.0e}); rescale the offset."
        )


def check_groups(groups: Any, n: int, rows_of: str = "the data") -> np.ndarray:
    """CV group labels: one hashable label per row, none missing.

    Parameters
    ----------
    groups : array-like of shape (n,)
        The argument.
    n : int
        Number of rows expected.
    rows_of : str, default="the data"
        What has n rows, for messages.

    Returns
    -------
    ndarray of shape (n,), dtype object
    """
    to_numpy = getattr(groups, "to_numpy", None)
    if to_numpy is not None and not isinstance(groups, np.ndarray):
        groups = to_numpy(dtype=object)
    if isinstance(groups, (str, bytes)) or np.ndim(groups) == 0:
        raise TypeError(f"groups must be an array of one label per row; got {groups!r}.")
    values = np.asarray(groups, dtype=object)
    if values.ndim != 1:
        raise ValueError(f"groups must be 1-D (one label per row); got shape {values.shape}.")
    if values.shape[0] != n:
        raise ValueError(f"groups has {values.shape[0]} rows but {rows_of} has {n}.")
    missing = [i for i, v in enumerate(values) if is_missing(v)]
    if missing:
        raise ValueError(
            f"groups contains missing values (first at row {missing[0]}); give every row a group."
        )
    return values


def check_unique_names(names: Any, what: str) -> None:
    """Column names must be unique; the message names the duplicates.

    Parameters
    ----------
    names : iterable
        Column names.
    what : str
        The container (``"X"``, ``"data"``), for messages.
    """
    seen: set = set()
    dup: list = []
    for name in names:
        if name in seen and name not in dup:
            dup.append(name)
        seen.add(name)
    if dup:
        raise ValueError(f"{what} has duplicated column names {dup}; names must be unique.")


def check_weights_kind(weights_kind: Any) -> str:
    """What sample weights mean: ``"analytic"`` (precision) or ``"freq"`` (row counts).

    Parameters
    ----------
    weights_kind : Any
        The argument.

    Returns
    -------
    str
    """
    if not isinstance(weights_kind, str) or weights_kind not in ("analytic", "freq"):
        raise ValueError(
            "weights_kind must be 'analytic' (precision weights, statsmodels' var_weights) "
            f"or 'freq' (row counts, freq_weights); got {weights_kind!r}."
        )
    return weights_kind
