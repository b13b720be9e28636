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

import os
from typing import Any

import numpy as np

from ._index_checks import MAX_LEVELS, check_block_ptr, check_codes, code_dtype
from ._numbers import LOSS_LIMIT, _is_bool, _is_integer, _is_real
# the row arrays' checkers (core/_rows), re-exported: every check is imported from here
from ._rows import (
    as_real_array,
    check_groups,
    check_offset,
    check_offset_loss,
    check_sample_weight,
    check_unique_names,
    check_weights_kind,
    is_missing,
    normalized_weights,
)

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




# --------------------------------------------------------------------------- scalar arguments
# (λ, tol, n_bins, n_jobs, random_state, fit_intercept, warm_start, ...)


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
