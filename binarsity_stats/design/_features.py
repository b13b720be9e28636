"""The estimators' feature kinds: which column is binned, categorical or linear.

``BinarsityGLM(categorical_features=..., linear_features=...)`` follows scikit-learn's
``HistGradientBoosting*`` convention: the argument names columns (strings, when ``X``
has column names), gives their positions (integers) or is a boolean mask of length
``n_features``; ``categorical_features="auto"`` takes the pandas ``category`` columns.
Every other column is binned.

* A **categorical** column is a block of free levels, what ``C(x)`` is in a formula:
  levels learned at fit (a pandas column's categories in their order, else the sorted
  distinct values, numbers before strings), coded with ``_binarizer.level_codes`` (the
  coding of ``C()`` and ``from_spec``), a missing level under ``missing="separate"``,
  unpenalised (ω = 0), identified by the weighted sum-to-zero constraint.
* An **ordered** column is a categorical column whose pandas dtype is an *ordered*
  ``Categorical`` (``pd.Categorical(..., ordered=True)``, or ``CategoricalDtype(...,
  ordered=True)``): coded as a categorical one, but a TV chain over its categories in
  their order — what ``ordered(x)`` is in a formula (a rating AAA…D fuses neighbouring
  levels).
* A **linear** column is an unpenalised dense column (a numeric formula term).
* A **group** column is the factor g of a by-group feature (``by={"x": "g"}``, what
  ``bin(x):C(g)`` is in a formula): it has no block of its own — the by-group block of x
  holds one chain per level of g and, through the breaks between them, the level means
  of g (a ``C(g)`` would be absorbed, as in a formula).
* A **strata** column labels the strata of a Cox model (``strata="g"``, what
  ``strata(g)`` is in a formula): no block, one baseline hazard per stratum.

Engine level: NumPy, and pandas only to read a DataFrame's columns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..core._validation import as_real_array, check_monotone, code_dtype, is_missing

__all__ = [
    "KINDS",
    "LEVEL_KINDS",
    "BLOCK_KINDS",
    "feature_kinds",
    "feature_shapes",
    "feature_groups",
    "feature_strata",
    "fitted_column",
    "learn_levels",
    "category_codes",
    "linear_column",
]

#: the kind of every input feature, in the order a formula would name them
KINDS = ("bin", "categorical", "ordered", "linear", "group", "strata")
#: the kinds coded by their levels (``categories_``)
LEVEL_KINDS = ("categorical", "ordered")
#: the kinds with a block of levels in ``coef_`` (group and strata columns have none)
BLOCK_KINDS = ("bin", "categorical", "ordered")


def _is_frame(X: Any) -> bool:
    return hasattr(X, "columns") and hasattr(X, "iloc")


def column(X: Any, j: int) -> Any:
    """Column ``j`` of a DataFrame (a Series) or of a 2-D array."""
    return X.iloc[:, j] if _is_frame(X) else X[:, j]


def _is_category(col: Any) -> bool:
    import pandas as pd

    return isinstance(getattr(col, "dtype", None), pd.CategoricalDtype)


def _selection(value: Any, name: str, p: int, names: Sequence[str] | None) -> np.ndarray:
    """A boolean mask of the p features from names, positions or a mask."""
    mask = np.zeros(p, dtype=bool)
    if value is None:
        return mask
    if isinstance(value, str):
        raise ValueError(
            f"{name} must be None, 'auto' (categorical_features only), or a list of "
            f"column names, positions or a boolean mask; got {value!r}."
        )
    items = np.asarray(list(value) if not isinstance(value, np.ndarray) else value, dtype=object)
    if items.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional; got shape {items.shape}.")
    if items.size == 0:
        return mask
    if all(isinstance(v, bool | np.bool_) for v in items):
        if items.size != p:
            raise ValueError(
                f"{name} as a boolean mask needs one entry per feature ({p}); got {items.size}."
            )
        return items.astype(bool)
    if all(isinstance(v, str) for v in items):
        if names is None:
            raise ValueError(
                f"{name} names columns {list(items)[:5]} but X has no column names (it "
                "is not a DataFrame with string column names); give positions instead."
            )
        lookup = {str(c): k for k, c in enumerate(names)}
        unknown = [v for v in items if v not in lookup]
        if unknown:
            raise ValueError(
                f"{name} names column(s) {unknown[:5]} that are not in X; its columns are "
                f"{[str(c) for c in names][:20]}."
            )
        mask[[lookup[v] for v in items]] = True
        return mask
    ints = [v for v in items if isinstance(v, int | np.integer) and not isinstance(v, bool)]
    if len(ints) != items.size:
        raise ValueError(
            f"{name} must hold only column names, only integer positions or only booleans; "
            f"got {list(items)[:5]}."
        )
    pos = np.asarray(ints, dtype=np.int64)
    if np.any((pos < -p) | (pos >= p)):
        raise ValueError(f"{name} has position(s) outside 0..{p - 1}: {pos.tolist()[:5]}.")
    mask[pos % p] = True
    return mask


def feature_kinds(
    X: Any, categorical_features: Any, linear_features: Any, names: Sequence[str] | None
) -> np.ndarray:
    """The kind of every column of X: ``"bin"``, ``"categorical"``, ``"ordered"``, ``"linear"``.

    A categorical column whose pandas dtype is an ordered ``Categorical`` is ``"ordered"``
    (a TV chain over its categories in their order).

    Parameters
    ----------
    X : DataFrame or 2-D ndarray
        The training features (validated container).
    categorical_features : None, "auto", or names, positions or a boolean mask
        Categorical columns; ``"auto"``: the pandas ``category`` columns of a DataFrame.
    linear_features : None, or names, positions or a boolean mask
        Unpenalised linear columns.
    names : sequence of str or None
        Column names of X (None for an array).

    Returns
    -------
    ndarray of object, shape (n_features,)
        One kind per column.
    """
    p = int(X.shape[1])
    if isinstance(categorical_features, str) and categorical_features == "auto":
        cat = np.array([_is_frame(X) and _is_category(column(X, j)) for j in range(p)], bool)
    else:
        cat = _selection(categorical_features, "categorical_features", p, names)
    lin = _selection(linear_features, "linear_features", p, names)
    both = np.flatnonzero(cat & lin)
    if both.size:
        label = names[both[0]] if names is not None else int(both[0])
        raise ValueError(f"column {label!r} is in both categorical_features and linear_features.")
    kinds = np.full(p, "bin", dtype=object)
    kinds[cat] = "categorical"
    for j in np.flatnonzero(cat):
        col = column(X, j) if _is_frame(X) else None
        if col is not None and _is_category(col) and bool(col.cat.ordered):
            kinds[j] = "ordered"
    kinds[lin] = "linear"
    return kinds


def feature_shapes(
    monotone: Any, kinds: np.ndarray, names: Sequence[str] | None
) -> np.ndarray:
    """The order of every feature's chain: None, ``"increasing"`` or ``"decreasing"``.

    Parameters
    ----------
    monotone : None or dict
        ``{column: "increasing" | "decreasing"}``, a column by name (X a DataFrame) or
        position; only binned features and ordered factors (an ordered pandas
        ``Categorical``) may be monotone.
    kinds : ndarray of object, shape (n_features,)
        The features' kinds (:func:`feature_kinds`).
    names : sequence of str or None
        Column names of X (None for an array).

    Returns
    -------
    ndarray of object, shape (n_features,)
    """
    p = len(kinds)
    shapes = np.full(p, None, dtype=object)
    if monotone is None:
        return shapes
    if not isinstance(monotone, Mapping):
        raise ValueError(
            "monotone must be None or a dict {column: 'increasing' | 'decreasing'} (columns "
            f"by name or position); got {monotone!r}."
        )
    for key, value in monotone.items():
        where = f"monotone[{key!r}]"
        shape = check_monotone(value, where)
        j = int(np.flatnonzero(_selection([key], "monotone", p, names))[0])
        if kinds[j] not in ("bin", "ordered"):  # an ordered factor's chain, as ordered(x)
            raise ValueError(
                f"{where}: column {key!r} is {kinds[j]}, not binned; only binned features "
                "and ordered factors (an ordered pandas Categorical) can be monotone."
            )
        shapes[j] = shape
    return shapes


def _one_column(key: Any, name: str, p: int, names: Sequence[str] | None) -> int:
    """The position of one column given by name or position (``name``: the argument)."""
    if isinstance(key, bool | np.bool_) or not isinstance(key, str | int | np.integer):
        raise ValueError(
            f"{name}: {key!r} is not a column; give a column name (X a DataFrame) or a "
            "position."
        )
    return int(np.flatnonzero(_selection([key], name, p, names))[0])


def _label(j: int, names: Sequence[str] | None) -> Any:
    return str(names[j]) if names is not None else j


def feature_groups(
    by: Any, kinds: np.ndarray, names: Sequence[str] | None
) -> tuple[np.ndarray, np.ndarray]:
    """The group column of every by-group feature (``by={"x": "g"}``).

    Parameters
    ----------
    by : None or dict
        ``{feature: group column}``, columns by name (X a DataFrame) or position; the
        feature is binned, the group column is any other column of X (not linear).
    kinds : ndarray of object, shape (n_features,)
        The features' kinds (:func:`feature_kinds`).
    names : sequence of str or None
        Column names of X (None for an array).

    Returns
    -------
    groups : ndarray of intp, shape (n_features,)
        The position of each feature's group column, −1 for a feature without one.
    kinds : ndarray of object
        The kinds with every group column's kind set to ``"group"``.
    """
    p = len(kinds)
    groups = np.full(p, -1, dtype=np.intp)
    if by is None:
        return groups, kinds
    if not isinstance(by, Mapping):
        raise ValueError(
            "by must be None or a dict {feature: group column} (columns by name or "
            f"position), e.g. by={{'age': 'region'}}; got {by!r}."
        )
    kinds = kinds.copy()
    for key, gkey in by.items():
        where = f"by[{key!r}]"
        j = _one_column(key, "by", p, names)
        g = _one_column(gkey, where, p, names)
        if j == g:
            raise ValueError(f"{where}: the group column is the feature itself ({gkey!r}).")
        if kinds[j] != "bin":
            raise ValueError(
                f"{where}: column {key!r} is {kinds[j]}, not binned; only binned features "
                "can have one chain per group (bin(x):C(g))."
            )
        if kinds[g] == "linear":
            raise ValueError(
                f"{where}: the group column {gkey!r} is in linear_features; a group column "
                "is a factor (leave it out of linear_features)."
            )
        if kinds[g] == "strata":
            raise ValueError(
                f"{where}: column {gkey!r} is a strata column; a column is either a Cox "
                "stratum or a by= group."
            )
        groups[j] = g
    for j in np.flatnonzero(groups >= 0):
        if groups[groups[j]] >= 0:
            raise ValueError(
                f"by: column {_label(int(groups[j]), names)!r} is the group of a feature and "
                "has a group of its own."
            )
        kinds[groups[j]] = "group"
    return groups, kinds


def feature_strata(
    strata: Any, kinds: np.ndarray, names: Sequence[str] | None
) -> tuple[np.ndarray, np.ndarray]:
    """The strata columns of a Cox model (``strata="g"`` or a list of columns).

    Parameters
    ----------
    strata : None, a column, or a list of columns
        Columns by name (X a DataFrame) or position; each is a column of X that is no
        feature (not binned by ``by=``'s group, not linear).
    kinds : ndarray of object, shape (n_features,)
        The features' kinds.
    names : sequence of str or None
        Column names of X (None for an array).

    Returns
    -------
    positions : ndarray of intp
        The strata columns' positions, in the order given.
    kinds : ndarray of object
        The kinds with every strata column's kind set to ``"strata"``.
    """
    p = len(kinds)
    if strata is None:
        return np.empty(0, dtype=np.intp), kinds
    keys = [strata] if isinstance(strata, str | int | np.integer) else strata
    if isinstance(keys, Mapping) or not isinstance(keys, Sequence | np.ndarray) or not len(keys):
        raise ValueError(
            "strata must be None, a column (name or position) or a list of columns; "
            f"got {strata!r}."
        )
    kinds = kinds.copy()
    pos = []
    for key in keys:
        j = _one_column(key, "strata", p, names)
        if j in pos:
            raise ValueError(f"strata names column {key!r} twice.")
        if kinds[j] in ("linear", "group"):
            what = "in linear_features" if kinds[j] == "linear" else "a by= group column"
            raise ValueError(f"strata: column {key!r} is {what}; a stratum column is no feature.")
        pos.append(j)
        kinds[j] = "strata"
    if np.all(kinds == "strata"):
        raise ValueError("strata names every column of X; the model needs a feature.")
    return np.asarray(pos, dtype=np.intp), kinds


def fitted_column(st: Mapping[str, Any], key: Any) -> int:
    """The position in X of a column recorded in an estimator's fitted state.

    Parameters
    ----------
    st : mapping
        The fitted state (``feature_names_in_`` when fitted on a DataFrame).
    key : str or int
        The column as recorded (``by_``, ``strata_``): a name, or a position.

    Returns
    -------
    int
        Its position among the fitted features.
    """
    from ..core._base import inconsistent

    names = st.get("feature_names_in_")
    if names is None or isinstance(key, int | np.integer):
        return int(key)
    hits = [j for j, c in enumerate(names) if str(c) == str(key)]
    if len(hits) != 1:
        raise inconsistent(f"the column {key!r} of the fitted state is not one of X's")
    return hits[0]


def _level_key(v: Any) -> tuple:
    # numbers before strings, each in natural order: the order of C()'s levels
    return (0, v, "") if isinstance(v, int | float | np.number) else (1, 0, str(v))


def column_values(col: Any) -> tuple[list, np.ndarray]:
    """The values of a column as a list and its missing mask (None, NaN, pd.NA)."""
    if hasattr(col, "isna"):
        return col.tolist(), col.isna().to_numpy()
    vals = np.asarray(col, dtype=object).tolist()
    return vals, np.array([is_missing(v) for v in vals], dtype=bool)


def learn_levels(col: Any, name: str, missing: str) -> tuple[list, bool]:
    """The levels of a categorical column and whether it gets a missing level.

    Parameters
    ----------
    col : Series or 1-D array
        The training values.
    name : str
        Column label for the messages.
    missing : {"error", "separate"}
        A missing value raises, or gets a level of its own (the last).

    Returns
    -------
    levels : list
        A category column's categories in their order, else the sorted distinct values.
    has_missing_level : bool
        Whether the column had missing values (``missing="separate"``).
    """
    vals, isna = column_values(col)
    if _is_category(col):
        levels = list(col.cat.categories)
    else:
        import pandas as pd

        present = [v for v, na in zip(vals, isna, strict=True) if not na]
        levels = sorted(pd.unique(pd.Series(present, dtype=object)).tolist(), key=_level_key)
        # integral floats from an array read as the numbers they are (1.0, not '1.0')
    if not levels:
        raise ValueError(f"categorical column {name!r} has no non-missing values.")
    if isna.any() and missing != "separate":
        raise ValueError(
            f"categorical column {name!r} contains missing values; pass missing='separate' "
            "to give them their own level, or drop those rows."
        )
    return levels, bool(isna.any())


def category_codes(col: Any, levels: Sequence[Any], has_missing: bool, name: str) -> np.ndarray:
    """Codes of a categorical column under learned levels (``_binarizer.level_codes``).

    Parameters
    ----------
    col : Series or 1-D array
        The values.
    levels : sequence
        The learned levels, in code order.
    has_missing : bool
        Whether missing values have a level (code ``len(levels)``).
    name : str
        Column label for the messages.

    Returns
    -------
    ndarray of uint8/uint16
        One code per row.
    """
    from ._binarizer import level_codes

    vals, isna = column_values(col)
    out = np.empty(len(vals), dtype=code_dtype(len(levels) + int(has_missing)))
    return level_codes(vals, isna, list(levels), bool(has_missing), name, out)


def linear_column(col: Any, name: str) -> np.ndarray:
    """A linear feature as finite float64 (numbers only; NaN and ±inf refused by name).

    Parameters
    ----------
    col : Series or 1-D array
        The values.
    name : str
        Column label for the messages.

    Returns
    -------
    ndarray of float64
        The column.
    """
    x = np.asarray(as_real_array(col, f"linear feature {name!r}"), dtype=np.float64)
    if not np.all(np.isfinite(x)):
        raise ValueError(
            f"linear feature {name!r} has missing or infinite values; only binned and "
            "categorical features can give missing values a level (missing='separate')."
        )
    return x
