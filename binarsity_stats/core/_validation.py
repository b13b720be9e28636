"""Validation of user arguments, in one place and with one wording per argument.

Every public entry (formula models, estimators, the engine's ``solve``/``Prepared``,
the prox functions, the CLI) checks its arguments with the functions here, so the same
input gets the same answer, and the same message naming the argument, everywhere.
This module is part of the engine layer: it imports NumPy only (no pandas, formulaic,
scikit-learn or matplotlib).

Rules shared by every checker:

* A ``TypeError`` for the wrong kind of object, a ``ValueError`` for a bad value; the
  message starts with the argument's name and ends with what was given.
* ``bool`` is not a number (``lam=True``, ``n_jobs=True``, ``tol=False`` are refused),
  and a number is not a bool (``fit_intercept=1`` is refused).
* Arrays of numbers are 1-D arrays of a real dtype (bool, integers, floats) or object
  arrays whose entries are real numbers; text (even ``"1.5"``), complex numbers and
  dates are refused, never converted. ``None``, NaN and ``pd.NA`` in an object array
  are missing values.

The checks of the index arrays the kernels index memory with (``check_block_ptr``,
``check_codes``, ``code_dtype``) are in ``_index_checks.py`` and re-exported here: every
check is imported from this module.
"""

from __future__ import annotations

import numbers
import os
from typing import Any

import numpy as np

from ._index_checks import MAX_LEVELS, check_block_ptr, check_codes, code_dtype

__all__ = [
    "check_block_ptr",
    "check_codes",
    "check_bool",
    "check_lam",
    "check_tol",
    "check_cv_tol",
    "check_int",
    "check_max_iter",
    "check_n_jobs",
    "check_random_state",
    "check_n_bins",
    "check_warm_start",
    "code_dtype",
    "as_real_array",
    "check_sample_weight",
    "normalized_weights",
    "check_offset",
    "check_offset_loss",
    "check_groups",
    "check_unique_names",
    "check_weights_kind",
    "is_missing",
    "MAX_LEVELS",
    "LOSS_LIMIT",
]


#: Largest average loss of the offset-only model that a fit accepts: beyond it, the
#: loss of a solver's trial point (a few times larger) overflows. For the gaussian
#: family this is the ~1e150 bound on |y − offset| that ``y`` itself has.
LOSS_LIMIT = 1e300


# --------------------------------------------------------------------------- scalar arguments
# (λ, tol, n_bins, n_jobs, random_state, fit_intercept, warm_start, ...)


def _is_bool(value: Any) -> bool:
    return isinstance(value, (bool, np.bool_))


def _is_real(value: Any) -> bool:
    """A real number that is not a bool (Python or NumPy scalar, 0-d arrays excluded)."""
    return isinstance(value, numbers.Real) and not _is_bool(value)


def _is_integer(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not _is_bool(value)


def check_bool(value: Any, name: str) -> bool:
    """``value`` as a bool; only ``True``/``False`` (or NumPy bools) are accepted.

    Parameters
    ----------
    value : Any
        The argument.
    name : str
        Its name (``fit_intercept``, ``early_stopping``, ``verbose``, ...).

    Returns
    -------
    bool
    """
    if not _is_bool(value):
        raise TypeError(f"{name} must be True or False; got {value!r}.")
    return bool(value)


def check_lam(lam: Any, name: str = "lam") -> float:
    """λ: a finite number ≥ 0.

    Parameters
    ----------
    lam : Any
        The argument.
    name : str, default="lam"
        Its name in messages.

    Returns
    -------
    float
    """
    if not _is_real(lam):
        raise TypeError(f"{name} must be a non-negative number; got {lam!r}.")
    value = float(lam)
    if not np.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite non-negative number; got {lam!r}.")
    return value


def check_tol(tol: Any, name: str = "tol") -> float:
    """A tolerance: a finite number > 0 (``tol``, ``cv_tol``).

    Parameters
    ----------
    tol : Any
        The argument.
    name : str, default="tol"
        Its name in messages.

    Returns
    -------
    float
    """
    if not _is_real(tol):
        raise TypeError(f"{name} must be a positive number; got {tol!r}.")
    value = float(tol)
    if not (np.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a positive number; got {tol!r}.")
    return value


def check_cv_tol(cv_tol: Any) -> float | None:
    """``cv_tol``: a tolerance (see :func:`check_tol`) or None.

    Parameters
    ----------
    cv_tol : Any
        The argument.

    Returns
    -------
    float or None
    """
    return None if cv_tol is None else check_tol(cv_tol, "cv_tol")


def check_int(value: Any, name: str, low: int = 1, high: int | None = None) -> int:
    """An integer (not a bool) in [low, high].

    Parameters
    ----------
    value : Any
        The argument.
    name : str
        Its name in messages.
    low : int, default=1
        Smallest accepted value.
    high : int, optional
        Largest accepted value.

    Returns
    -------
    int
    """
    what = "a positive integer" if low == 1 and high is None else f"an integer >= {low}"
    if high is not None:
        what = f"an integer between {low} and {high}"
    if not _is_integer(value):
        raise TypeError(f"{name} must be {what}; got {value!r}.")
    if value < low or (high is not None and value > high):
        raise ValueError(f"{name} must be {what}; got {value!r}.")
    return int(value)


def check_max_iter(max_iter: Any) -> int:
    """``max_iter``: an integer ≥ 1.

    Parameters
    ----------
    max_iter : Any
        The argument.

    Returns
    -------
    int
    """
    return check_int(max_iter, "max_iter")


def check_min_bin_count(value: Any, name: str = "min_bin_count") -> int:
    """``min_bin_count`` (``min_count`` of ``bin()``): a positive integer number of rows.

    Parameters
    ----------
    value : Any
        The argument.
    name : str, default="min_bin_count"
        Its name in messages.

    Returns
    -------
    int
        The number (≥ 1).
    """
    if not _is_integer(value) or int(value) < 1:
        raise ValueError(f"{name} must be a positive integer (a number of rows); got {value!r}.")
    return int(value)


MONOTONE = ("increasing", "decreasing")


def check_monotone(value: Any, name: str = "monotone") -> str | None:
    """``monotone`` of ``bin()`` (and each value of the estimators' ``monotone=``).

    Parameters
    ----------
    value : Any
        The argument: None (no order), ``"increasing"`` or ``"decreasing"``.
    name : str, default="monotone"
        Its name in messages.

    Returns
    -------
    str or None
    """
    if value is None or (isinstance(value, str) and value in MONOTONE):
        return value
    raise ValueError(f"{name} must be 'increasing', 'decreasing' or None; got {value!r}.")


def check_n_jobs(n_jobs: Any) -> int:
    """``n_jobs``: the number of worker threads it asks for.

    k > 0 asks for k threads; negative values follow joblib's convention, -1 for one
    thread per CPU and -k for all CPUs but k − 1, down to -(number of CPUs) (one
    thread). 0, values below that and non-integers (bools included) are refused.

    Parameters
    ----------
    n_jobs : Any
        The argument.

    Returns
    -------
    int
        The number of threads (≥ 1).
    """
    cpus = os.cpu_count() or 1
    what = (
        f"a non-zero integer: k > 0 threads, or -k for all CPUs but k - 1 "
        f"(-1: one thread per CPU; at least -{cpus} on this machine with {cpus} CPUs)"
    )
    if not _is_integer(n_jobs):
        raise TypeError(f"n_jobs must be {what}; got {n_jobs!r}.")
    n_jobs = int(n_jobs)
    if n_jobs == 0 or n_jobs < -cpus:
        raise ValueError(f"n_jobs must be {what}; got {n_jobs!r}.")
    return n_jobs if n_jobs > 0 else cpus + 1 + n_jobs


def check_random_state(random_state: Any) -> Any:
    """``random_state``: None, an integer ≥ 0, or a NumPy Generator/RandomState/SeedSequence.

    Parameters
    ----------
    random_state : Any
        The argument.

    Returns
    -------
    Any
        The argument, ready for ``np.random.default_rng``.
    """
    ok = (np.random.Generator, np.random.RandomState, np.random.SeedSequence,
          np.random.BitGenerator)  # fmt: skip
    if random_state is None or isinstance(random_state, ok):
        return random_state
    what = "None, an integer >= 0 or a numpy random Generator"
    if not _is_integer(random_state):
        raise TypeError(f"random_state must be {what}; got {random_state!r}.")
    if random_state < 0:
        raise ValueError(f"random_state must be {what}; got {random_state!r}.")
    return int(random_state)


def check_n_bins(n_bins: Any, name: str = "n_bins", missing: str = "error", where: str = "") -> int:
    """One number of bins: an integer ≥ 2 whose levels fit the uint16 codes.

    Parameters
    ----------
    n_bins : Any
        The argument.
    name : str, default="n_bins"
        Its name in messages (``n_bins[2]`` for an entry of a per-feature list).
    missing : {"error", "separate"}, default="error"
        With ``"separate"`` a missing level comes on top of the bins.
    where : str, default=""
        Where it was given (``" in bin(x1)"``), appended to messages.

    Returns
    -------
    int
    """
    largest = MAX_LEVELS - (missing == "separate")
    what = f"an integer between 2 and {largest}"
    if not _is_integer(n_bins):
        raise TypeError(f"{name} must be {what}; got {n_bins!r}{where}.")
    if n_bins < 2:
        raise ValueError(f"{name} must be {what}; got {n_bins!r}{where}.")
    if n_bins > largest:
        extra = " with missing='separate'" if missing == "separate" else ""
        raise ValueError(
            f"{name} must be {what}; got {n_bins!r}{where}: the codes are uint16, so a "
            f"feature has at most {MAX_LEVELS} levels (n_bins <= {largest}{extra})."
        )
    return int(n_bins)


def check_warm_start(warm_start: Any, d: int, q: int) -> None:
    """A warm start: a solution (``coef``, ``dense_coef``, ``intercept``) of this design.

    Parameters
    ----------
    warm_start : Any
        A :class:`~binarsity_stats.engine._solvers.Solution` (or anything with its three
        coefficient fields).
    d, q : int
        Number of levels and of dense columns of the design.
    """
    if _is_bool(warm_start) or not all(
        hasattr(warm_start, a) for a in ("coef", "dense_coef", "intercept")
    ):
        raise TypeError(
            "warm_start must be a Solution (the .solution of a previous fit) or None; "
            f"got {type(warm_start).__name__}."
        )
    coef = np.asarray(warm_start.coef)
    dense_coef = np.asarray(warm_start.dense_coef)
    if coef.shape != (d,) or dense_coef.shape != (q,):
        raise ValueError("warm_start does not match the design (number of levels/columns).")
    try:
        finite = (
            np.all(np.isfinite(coef))
            and np.all(np.isfinite(dense_coef))
            and np.isfinite(warm_start.intercept)
        )
    except TypeError:
        finite = False
    if not finite:
        raise ValueError("warm_start holds NaN or infinite coefficients.")


# --------------------------------------------------------------------------- row arrays
# (sample weights, offsets, groups)


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
