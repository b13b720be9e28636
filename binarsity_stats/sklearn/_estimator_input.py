"""The estimators' input: their parameters, X, y and the columns of X, checked.

What ``fit``, ``predict`` and ``score`` read before any binning or kernel: the
constructor's arguments (``_check_params``), the container of X (``_validate_X``), the
response (``response_y``; a survival y in ``survival_y``; a classifier's labels in
``class_labels``), the columns of X by name or position and their codes under a fitted
state (``_feature_codes``), a by-group feature's group column and the strata labels.
Messages follow scikit-learn's wording and name the column or argument.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..core._base import DataConversionWarning as _DataConversionWarning
from ..core._validation import (
    as_real_array,
    check_bool,
    check_max_iter,
    check_tol,
    check_weights_kind,
    code_dtype,
    is_missing,
)
from ..design._features import (
    BLOCK_KINDS,
    category_codes,
    fitted_column,
    learn_levels,
    linear_column,
)
from ..engine._solvers import SOLVERS
from ..families import _cox
from ..families._families import get_family
from ..penalty._penalty import PENALTY_WEIGHTS


def _check_params(est) -> None:
    """Validate constructor arguments at fit time (never mutate them)."""
    get_family(est.family)
    check_weights_kind(getattr(est, "weights_kind", "analytic"))
    if est.solver not in SOLVERS:
        raise ValueError(f"solver must be one of {SOLVERS}; got {est.solver!r}.")
    check_tol(est.tol)
    check_max_iter(est.max_iter)
    check_bool(est.fit_intercept, "fit_intercept")
    pw = est.penalty_weights
    if isinstance(pw, str) and pw not in PENALTY_WEIGHTS:
        raise ValueError(f"penalty_weights must be one of {PENALTY_WEIGHTS} or an array; got {pw!r}.")


def _y_array(y) -> np.ndarray:
    if y is None:
        raise ValueError("requires y to be passed, but the target y is None.")
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        warnings.warn(
            "A column-vector y was passed when a 1d array was expected; it is raveled.",
            _DataConversionWarning,
            stacklevel=4,
        )
        y = y[:, 0]
    if y.ndim != 1:
        raise ValueError(f"y should be a 1d array; got shape {y.shape}.")
    return y


def response_y(family: Any, y: Any, n: int) -> tuple[np.ndarray, dict]:
    """A regression estimator's y as the engine reads it, and what it adds to the fit.

    Parameters
    ----------
    family : Family
        The fitted family (``get_family``).
    y : array-like
        The response given to ``fit`` / ``score``.
    n : int
        The number of rows of X.

    Returns
    -------
    y : ndarray of float64
        The numbers of y (the packed response of ``_cox.encode`` for ``family="cox"``).
    extra : dict
        For ``family="cox"`` (see :func:`survival_y`), else empty.
    """
    if family.survival:
        return survival_y(y, n)
    y = _y_array(y)
    if y.dtype.kind == "c":
        raise ValueError("Complex data not supported: y must hold real numbers.")
    if y.dtype.kind not in "biuf":
        # numbers only: text (even "1.5") and dates are refused, not converted;
        # None, NaN and pd.NA in an object array are missing values
        try:
            if y.dtype.kind != "O":
                raise TypeError
            y = as_real_array(y, "y")
        except TypeError:
            raise ValueError(
                f"Unknown label type: y of dtype {y.dtype} is not numeric."
            ) from None
    if y.shape[0] != n:
        raise ValueError(f"y has {y.shape[0]} rows but X has {n}.")
    return y.astype(np.float64), {}


def survival_y(y: Any, n: int) -> tuple[np.ndarray, dict]:
    """``family="cox"``: the packed response and the times and events of a survival y.

    The status is read as the formula's ``Surv(time, status)`` reads it, by the same
    rule (``_cox.read_status`` through ``_cox.survival_columns``): booleans, 0/1, or
    R's 1 = censored / 2 = event when the largest value is 2 (``survival::lung``).

    Parameters
    ----------
    y : structured array or array-like of shape (n, 2)
        The survival response (see ``_cox.survival_columns``).
    n : int
        The number of rows of X.

    Returns
    -------
    y : ndarray of float64
        The packed response of ``_cox.encode`` (time order, events).
    extra : dict
        ``"_survival"``: (time, event 0/1) for Breslow's baseline, Harrell's C and the
        results' formula (never published); ``"_r_coding"``: True when the status was
        read in R's 1/2 coding (the results' summary says so).
    """
    time, event, r_coding = _cox.survival_columns(y, n)
    extra: dict = {"_survival": (time, event)}
    if r_coding:
        extra["_r_coding"] = True
    return _cox.encode(time, event), extra


def class_labels(y: Any, n: int) -> tuple[np.ndarray, dict]:
    """The classifier's y: two class labels as 0/1 and ``{"classes_": labels}``.

    Parameters
    ----------
    y : array-like
        The class labels given to ``fit``.
    n : int
        The number of rows of X.

    Returns
    -------
    y : ndarray of float64
        0 for ``classes_[0]``, 1 for ``classes_[1]``.
    extra : dict
        ``{"classes_": the two sorted labels}``.
    """
    y = _y_array(y)
    if y.shape[0] != n:
        raise ValueError(f"y has {y.shape[0]} rows but X has {n}.")
    if y.dtype.kind == "f":
        if not np.all(np.isfinite(y)):
            raise ValueError("y contains NaN or infinite values.")
        if np.any(y != np.round(y)):
            raise ValueError(
                "Unknown label type: continuous target; BinarsityClassifier needs "
                "two class labels (use BinarsityGLM for a numeric response)."
            )
    if y.dtype.kind == "O" and any(is_missing(v) for v in y):
        raise ValueError("y contains missing labels (None or NaN).")
    try:
        classes, yi = np.unique(y, return_inverse=True)
    except TypeError:
        raise TypeError(
            "y mixes label types that cannot be ordered (e.g. numbers and strings)."
        ) from None
    if len(classes) > 2:
        raise ValueError(
            f"Only binary classification is supported. The target has {len(classes)} classes."
        )
    if len(classes) < 2:
        raise ValueError("BinarsityClassifier needs 2 classes; y has 1 class.")
    # published with the rest of the fitted state, at the end of fit
    return yi.astype(np.float64), {"classes_": classes}


def _check_missing(missing: Any) -> None:
    """The estimators' ``missing``: "error" or "separate"; "drop" refused with the reason.

    scikit-learn's estimators never drop rows: ``fit`` uses every row of X and y (a
    Pipeline, ``cross_val_score`` and the sample weights line rows up by position), and
    ``predict`` returns one finite prediction per row (a scorer fails on NaN). So
    ``missing="drop"`` — ``glm()``'s R convention, NaN predictions included — is not
    offered here; the message says what to do instead.
    """
    if isinstance(missing, str) and missing == "drop":
        raise ValueError(
            "missing must be one of ['error', 'separate'], got 'drop': the scikit-learn "
            "estimators do not drop rows (fit uses every row of X and y; predict returns "
            "one prediction per row). Drop the incomplete rows before fit (X.dropna()), "
            "give missing values a level of their own (missing='separate'), or use "
            "glm(..., missing='drop'), which drops them and predicts NaN for them."
        )


def _validate_X(X, allow_empty=False):
    """Check the container of X before binning; messages follow scikit-learn's wording.

    DataFrames pass through (the Binarizer checks their columns by name); anything
    else becomes a 2-D ndarray. Returns ``(X, n_rows)``.
    """
    if X is None:
        raise ValueError("X is None; expected a 2-D array or a DataFrame of numbers.")
    if hasattr(X, "columns") and hasattr(X, "iloc"):
        if X.shape[1] == 0:
            raise ValueError(
                f"Found array with 0 feature(s) (shape={X.shape}) while a minimum of 1 is required."
            )
        return X, int(X.shape[0])
    try:
        import scipy.sparse as sp

        if sp.issparse(X):
            raise TypeError(
                "Sparse input is not supported: the binarizer needs the raw numeric "
                "features; pass a dense array (X.toarray())."
            )
    except ImportError:  # pragma: no cover
        pass
    X = np.asarray(X)
    if X.ndim == 1:
        raise ValueError(
            "Expected 2D array, got 1D array instead. Reshape your data either using "
            "array.reshape(-1, 1) if your data has a single feature or array.reshape(1, -1) "
            "if it contains a single sample."
        )
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features); got shape {X.shape}.")
    if X.shape[1] == 0:
        raise ValueError(
            f"Found array with 0 feature(s) (shape={X.shape}) while a minimum of 1 is required."
        )
    if X.shape[0] == 0 and not allow_empty:
        raise ValueError(
            f"Found array with 0 sample(s) (shape={X.shape}) while a minimum of 1 is required."
        )
    if X.dtype.kind == "c":
        raise ValueError("Complex data not supported: X must hold real numbers.")
    return X, int(X.shape[0])


def _binned_columns(X, idx: np.ndarray):
    """The binned features of X (positions ``idx``): a DataFrame's columns or an array.

    An object array's columns must hold numbers (text is refused, not parsed; None,
    NaN and pd.NA are missing); messages name the column's position in X.
    """
    if hasattr(X, "columns") and hasattr(X, "iloc"):
        return X.iloc[:, idx] if len(idx) != X.shape[1] else X
    sub = X[:, idx] if len(idx) != X.shape[1] else X
    if sub.dtype.kind == "O":
        sub = np.column_stack([as_real_array(X[:, j], f"column {j}") for j in idx])
        sub = sub.reshape(X.shape[0], len(idx))
    return sub


def _feature_names(X):
    """Column names of a DataFrame (unique; features are matched by them), else None."""
    if not (hasattr(X, "columns") and hasattr(X, "iloc")):
        return None
    if not X.columns.is_unique:
        dup = X.columns[X.columns.duplicated()].unique().tolist()
        raise ValueError(f"X has duplicated column names {dup}; names must be unique.")
    return np.asarray(X.columns, dtype=object)


def _feature_column(X, j: int, names):
    """Feature j of X: by name when fitted on a DataFrame with names, else by position."""
    if hasattr(X, "columns") and hasattr(X, "iloc"):
        if names is not None:
            key = names[j]
            if key not in X.columns:
                raise ValueError(f"column {str(key)!r} (used by the model) is missing from X.")
            return X[key]
        return X.iloc[:, j]
    return X[:, j]


def _feature_codes(st: dict, X, n: int):
    """Codes (blocks × rows) and the dense linear columns of X under the fitted state."""
    from ..design._binarizer import code_all, columns_for_transform

    kinds, bins = st["_kinds"], st["_bins"]
    names = st.get("feature_names_in_")
    blocks = [j for j in range(len(kinds)) if kinds[j] in BLOCK_KINDS]
    by = st.get("by_")
    codes = np.empty((len(blocks), n), dtype=code_dtype(int(np.diff(st["block_ptr_"]).max())))
    if bins is not None:
        binned = np.flatnonzero(kinds == "bin")
        sub = X if hasattr(X, "columns") and bins.names is not None else _binned_columns(X, binned)
        bcodes = code_all(columns_for_transform(sub, bins), bins)
    b = c = row = 0
    dense = []
    for j in range(len(kinds)):
        label = str(names[j]) if names is not None else f"column {j}"
        if kinds[j] == "linear":
            dense.append(linear_column(_feature_column(X, j, names), label))
            continue
        if kinds[j] not in BLOCK_KINDS:  # a by= group or a strata column: no block
            continue
        if kinds[j] == "bin":
            if by is not None and by[j] is not None:  # one chain per level of the group
                g = fitted_column(st, by[j])
                glabel = str(names[g]) if names is not None else f"column {g}"
                levels = st["by_levels_"][j]
                gc = category_codes(_feature_column(X, g, names), levels, False, glabel)
                d = int(bins.n_bins[b])
                codes[row] = gc.astype(np.intp) * d + bcodes[b]
            else:
                codes[row] = bcodes[b]
            b += 1
        else:
            codes[row] = category_codes(_feature_column(X, j, names), st["categories_"][c],
                                        bool(st["categorical_missing_"][c]), label)  # fmt: skip
            c += 1
        row += 1
    Z = np.ascontiguousarray(np.column_stack(dense), dtype=np.float64) if dense else None
    return codes, Z


def _group_levels(col, glabel: str, xlabel: str) -> list:
    """The levels of a by-group feature's group column (``by={x: g}``), checked."""
    from ..design._features import column_values

    vals, isna = column_values(col)
    where = f"by[{xlabel!r}]"
    if isna.any():
        raise ValueError(
            f"{where}: the group column {glabel!r} contains missing values; a by-group "
            "feature has no missing level (bin(x):C(g) neither): drop those rows or give "
            "them a level of their own (e.g. 'missing')."
        )
    x = np.asarray(col) if not hasattr(col, "dtype") else col
    if getattr(x, "dtype", np.dtype(object)).kind == "f":
        v = np.asarray(x, dtype=np.float64)
        if np.any(v != np.round(v)):
            bad = v[v != np.round(v)][:3].tolist()
            raise ValueError(
                f"{where}: the group column {glabel!r} holds non-integer numbers (e.g. "
                f"{bad}); a group column is a factor (one chain per level): give it labels "
                "or integer codes, or bin it first."
            )
    levels, _ = learn_levels(col, glabel, "error")
    return levels


def _by_block(xlabel: str, glabel: str, levels: list, d: int) -> int:
    """The size of a by-group block (one chain of ``d`` bins per level), checked."""
    size = len(levels) * d
    if size > 65536:
        raise ValueError(
            f"by[{xlabel!r}]: {len(levels)} levels of the group column {glabel!r} times "
            f"{d} bins make {size} levels in one block, more than the 65536 a block can "
            "hold; use fewer levels (is the group column a factor?) or fewer bins."
        )
    return size


def _strata_labels(X, positions: Any, names) -> np.ndarray:
    """One stratum label per row from the strata columns (``strata()``'s labels)."""
    import pandas as pd

    from ..formula._formula import strata_labels

    cols = {}
    for j in positions:
        key = str(names[j]) if names is not None else f"x{j}"
        values = _feature_column(X, j, names)
        cols[key] = values.reset_index(drop=True) if hasattr(values, "reset_index") else values
    return strata_labels(pd.DataFrame(cols), list(cols))
