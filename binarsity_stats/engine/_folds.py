"""Fold assignment for K-fold cross-validation.

:func:`fold_ids` (shuffled, stratified on y if asked), :func:`group_fold_ids` (whole
groups per fold, balanced by rows), and :func:`resolve_folds`, which turns whatever a
user passes (an int, fold ids, a scikit-learn splitter or ``(train, test)`` pairs) into
one :class:`Folds`: written once for ``fit_cv`` and the ``*CV`` estimators.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core._validation import as_real_array, check_groups, check_random_state

__all__ = [
    "fold_ids",
    "group_fold_ids",
    "Folds",
    "check_fold_ids",
    "is_fold_ids",
    "resolve_folds",
]


def fold_ids(
    y: np.ndarray, folds: int, *, stratify: bool = False, random_state: Any = None
) -> np.ndarray:
    """Assign rows to K folds after a seeded shuffle (stratified on y if asked).

    Parameters
    ----------
    y : ndarray of shape (n,)
        Response (its distinct values are the strata).
    folds : int
        K.
    stratify : bool, default=False
        Spread every class round-robin over the folds so each fold keeps the class
        proportions.
    random_state : int, numpy Generator or None
        Seed.

    Returns
    -------
    ndarray of shape (n,)
        Fold index in 0..K−1 of every row.
    """
    rng = np.random.default_rng(check_random_state(random_state))
    n = y.shape[0]
    out = np.empty(n, dtype=np.intp)
    if not stratify:
        out[rng.permutation(n)] = np.arange(n) % folds
        return out
    start = 0
    for cls in np.unique(y):
        idx = np.flatnonzero(y == cls)
        idx = idx[rng.permutation(idx.size)]
        out[idx] = (start + np.arange(idx.size)) % folds
        start += idx.size
    return out

def group_fold_ids(groups: Any, folds: int, n: int, *, random_state: Any = None) -> np.ndarray:
    """Assign whole groups of rows to K folds, balancing the number of rows per fold.

    Parameters
    ----------
    groups : array-like of shape (n,)
        Group label of every row (any hashable values, no missing values).
    folds : int
        K (at most the number of distinct groups).
    n : int
        Number of rows expected.
    random_state : int, numpy Generator or None
        Seed of the shuffle that breaks ties between groups of equal size.

    Returns
    -------
    ndarray of shape (n,)
        Fold index in 0..K−1 of every row; rows of one group share it.

    Raises
    ------
    ValueError
        If ``groups`` has the wrong length, missing values, or fewer than K groups.
    """
    import pandas as pd  # labels of any type: pandas' factorize and missing-value rules

    labels = pd.Series(check_groups(groups, n))
    codes, uniques = pd.factorize(labels, sort=True)
    n_groups = len(uniques)
    if n_groups < folds:
        raise ValueError(
            f"groups has {n_groups} distinct groups but folds={folds}; "
            "use at most as many folds as groups."
        )
    sizes = np.bincount(codes, minlength=n_groups)
    rng = np.random.default_rng(check_random_state(random_state))
    order = rng.permutation(n_groups)
    order = order[np.argsort(-sizes[order], kind="stable")]  # largest first, ties shuffled
    load = np.zeros(folds, dtype=np.int64)
    fold_of_group = np.empty(n_groups, dtype=np.intp)
    for g in order:
        k = int(np.argmin(load))
        fold_of_group[g] = k
        load[k] += sizes[g]
    return fold_of_group[codes]

class Folds:
    """The train/test splits of a cross-validation, however they were given.

    Parameters
    ----------
    splits : list of (ndarray, ndarray)
        Row indices (int) of the training and of the held-out rows of every split.
    n_obs : int
        Number of rows.

    Attributes
    ----------
    splits : sequence of (ndarray, ndarray)
        ``(train, test)`` row indices per split, as scikit-learn's ``split`` yields them
        (of fold ids: made when a split is read, not kept).
    fold_ids : ndarray of shape (n,) or None
        The split whose held-out set holds each row (glmnet's ``foldid``, 0-based); −1
        for a row in no held-out set (e.g. the first block of ``TimeSeriesSplit``).
        None when held-out sets overlap (``ShuffleSplit``, ``RepeatedKFold``).
    n_folds : int
        Number of splits.
    """

    def __init__(self, splits: Sequence, n_obs: int) -> None:
        self.n_obs = int(n_obs)
        if isinstance(splits, _FoldIdSplits):  # fold ids: disjoint held-out sets
            self.splits = splits
            self._ids = splits.fold_id
            return
        self.splits = [(np.asarray(tr, dtype=np.intp), np.asarray(te, dtype=np.intp))
                       for tr, te in splits]  # fmt: skip
        ids = np.full(self.n_obs, -1, dtype=np.intp)
        seen = np.zeros(self.n_obs, dtype=np.intp)
        for k, (_, test) in enumerate(self.splits):
            ids[test] = k
            np.add.at(seen, test, 1)
        self._ids = _compact_ids(ids, len(self.splits)) if np.all(seen <= 1) else None

    @property
    def fold_ids(self) -> np.ndarray | None:
        """The fold of every row (intp; −1: in no held-out set), or None (overlapping).

        Kept in the smallest integer type that holds the splits (int8 for up to 127:
        a CV keeps it through its walk); each read makes the intp array.
        """
        # a Folds pickled before the compact ids kept ``fold_ids`` in its __dict__
        ids = self.__dict__["_ids"] if "_ids" in self.__dict__ else self.__dict__.get("fold_ids")
        return None if ids is None else ids.astype(np.intp)

    @property
    def n_folds(self) -> int:
        """Number of splits."""
        return len(self.splits)

    @classmethod
    def from_fold_ids(cls, fold_id: np.ndarray) -> Folds:
        """Splits of a fold-id array of values 0..K−1 (every row held out once).

        Parameters
        ----------
        fold_id : ndarray of shape (n,)
            Fold of every row.

        Returns
        -------
        Folds
            Split k trains on the rows of the other folds and scores fold k.
        """
        fold_id = np.asarray(fold_id)
        if fold_id.dtype.kind not in "iu":
            fold_id = fold_id.astype(np.intp)
        k = int(fold_id.max()) + 1 if fold_id.size else 0
        return cls(_FoldIdSplits(_compact_ids(fold_id, k)), fold_id.shape[0])

    def restrict(self, rows: np.ndarray) -> Folds | None:
        """The same splits on a subset of the rows, renumbered to positions in ``rows``.

        A bootstrap resample replays fixed folds this way: each distinct drawn row keeps
        its side of every split. Splits left without a training or a held-out row are
        dropped.

        Parameters
        ----------
        rows : ndarray of int
            Distinct row indices, increasing.

        Returns
        -------
        Folds or None
            None when no split keeps both sides.
        """
        rows = np.asarray(rows, dtype=np.intp)
        pos = np.full(self.n_obs, -1, dtype=np.intp)
        pos[rows] = np.arange(rows.size)
        out = []
        for train, test in self.splits:
            tr, te = pos[train], pos[test]
            tr, te = tr[tr >= 0], te[te >= 0]
            if tr.size and te.size:
                out.append((tr, te))
        return Folds(out, rows.size) if out else None

    def __repr__(self) -> str:
        return f"<Folds {self.n_folds} splits of {self.n_obs} rows>"

def _compact_ids(ids: np.ndarray, n_folds: int) -> np.ndarray:
    """Fold ids in −1..n_folds−1 in the smallest signed integer type that holds them.

    Parameters
    ----------
    ids : ndarray of int of shape (n,)
        Fold of every row (−1: none).
    n_folds : int
        Number of folds.

    Returns
    -------
    ndarray of shape (n,)
        The same values as int8, int16, int32 or int64 (a copy unless already so).
    """
    for dtype in (np.int8, np.int16, np.int32):
        if n_folds <= np.iinfo(dtype).max:
            return ids.astype(dtype, copy=False)
    return ids.astype(np.int64, copy=False)


class _FoldIdSplits(Sequence):
    """The ``(train, test)`` pairs of a fold-id array, each made when asked for.

    Split k is ``(flatnonzero(fold_id != k), flatnonzero(fold_id == k))``; nothing but
    the fold ids is kept (K training index vectors would be 0.9 K row vectors of int64:
    a CV reads one split at a time).
    """

    def __init__(self, fold_id: np.ndarray) -> None:
        self.fold_id = fold_id
        self._k = int(fold_id.max()) + 1 if fold_id.size else 0

    def __len__(self) -> int:
        return self._k

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[j] for j in range(*k.indices(self._k))]
        k = int(k)
        if k < 0:
            k += self._k
        if not 0 <= k < self._k:
            raise IndexError(f"split {k} of {self._k}")
        ids = self.fold_id
        return np.flatnonzero(ids != k), np.flatnonzero(ids == k)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _FoldIdSplits):
            return np.array_equal(self.fold_id, other.fold_id)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


def _is_splitter(obj: Any) -> bool:
    return callable(getattr(obj, "split", None)) and not isinstance(obj, (str, bytes, np.ndarray))

def _looks_like_pairs(obj: Any) -> bool:
    """An iterable of (train, test) index pairs (scikit-learn's ``cv=`` iterable)."""
    if isinstance(obj, (str, bytes, np.ndarray)) or hasattr(obj, "dtype"):
        return False
    if not isinstance(obj, (list, tuple)):
        return hasattr(obj, "__iter__") and not hasattr(obj, "__len__")  # a generator
    return len(obj) > 0 and all(
        isinstance(p, (list, tuple)) and len(p) == 2 and np.ndim(p[0]) == 1 for p in obj
    )

def is_fold_ids(folds: Any) -> bool:
    """Whether ``folds`` would be read as a fold-id array (not an int, splitter or pairs).

    Parameters
    ----------
    folds : Any
        A ``folds=`` argument.

    Returns
    -------
    bool
        True for an array-like of per-row values (what :func:`check_fold_ids` reads).
    """
    if folds is None or isinstance(folds, (bool, np.bool_, int, np.integer, float, str, bytes)):
        return False
    return not _is_splitter(folds) and not _looks_like_pairs(folds)

def _check_splits(splits: Any, n: int, what: str) -> list:
    out = []
    for k, pair in enumerate(splits):
        if not (isinstance(pair, (list, tuple)) and len(pair) == 2):
            raise ValueError(f"{what} must yield (train, test) pairs of row indices; "
                             f"split {k} is {type(pair).__name__}.")  # fmt: skip
        sides = []
        for side, idx in zip(("train", "test"), pair, strict=True):
            arr = np.asarray(idx)
            if arr.ndim != 1 or (arr.size and arr.dtype.kind not in "iu"):
                raise ValueError(
                    f"{what}: the {side} rows of split {k} must be a 1-D array of integer "
                    f"row indices; got dtype {arr.dtype} and shape {arr.shape}."
                )
            if arr.size == 0:
                raise ValueError(f"{what}: split {k} has no {side} rows.")
            if arr.min() < 0 or arr.max() >= n:
                raise ValueError(
                    f"{what}: split {k} has {side} row indices outside 0..{n - 1} "
                    f"(the data has {n} rows)."
                )
            sides.append(arr.astype(np.intp))
        if np.intersect1d(sides[0], sides[1]).size:
            raise ValueError(f"{what}: split {k} has rows both in train and in test.")
        out.append((sides[0], sides[1]))
    if not out:
        raise ValueError(f"{what} yielded no split.")
    return out

def check_fold_ids(fold_id: Any, n: int, name: str = "folds") -> np.ndarray:
    """A fold-id array (glmnet's ``foldid``) → fold indices 0..K−1.

    Parameters
    ----------
    fold_id : array-like of shape (n,)
        Integer labels, one per row (any K ≥ 2 distinct non-negative values; fold k is
        the k-th smallest label, so glmnet's 1..K become 0..K−1).
    n : int
        Number of rows.
    name : str, default="folds"
        The argument's name in messages.

    Returns
    -------
    ndarray of shape (n,)
        Fold index of every row.
    """
    arr = np.asarray(fold_id)
    if arr.dtype.kind == "O" and arr.ndim == 1:  # a column of numbers read as objects
        try:
            arr = as_real_array(arr, name)
        except (TypeError, ValueError):
            pass  # refused below with the message listing what folds may be
    if arr.dtype.kind == "b" or arr.dtype.kind not in "iuf" or arr.ndim != 1:
        raise TypeError(
            f"{name} must be an integer >= 2, a fold-id array (one integer per row), a scikit-learn "
            f"splitter (an object with .split) or (train, test) pairs; got {fold_id!r:.80}."
        )
    if arr.shape[0] != n:
        raise ValueError(f"{name} (fold ids) has {arr.shape[0]} rows but the data has {n}.")
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise ValueError(f"{name} (fold ids) must hold whole numbers (no NaN, no fractions).")
    if np.any(arr < 0):
        raise ValueError(
            f"{name} (fold ids) must be >= 0; for rows never held out use scikit-learn's "
            f"PredefinedSplit(test_fold) as {name}."
        )
    labels, codes = np.unique(arr, return_inverse=True)
    if labels.size < 2:
        raise ValueError(f"{name} (fold ids) needs at least 2 distinct folds; got {labels.size}.")
    return codes.reshape(-1).astype(np.intp)

def resolve_folds(
    folds: Any,
    y: np.ndarray,
    *,
    groups: Any = None,
    stratify: bool = False,
    random_state: Any = None,
    X: Any = None,
    split_y: Any = None,
    name: str = "folds",
) -> Folds:
    """The splits of a cross-validation from any of the usual ways to give them.

    Parameters
    ----------
    folds : int, array-like, splitter or iterable of pairs
        * an int K (2 ≤ K ≤ n): shuffled K folds (:func:`fold_ids`, stratified on y if
          ``stratify``), or whole groups per fold when ``groups`` is given
          (:func:`group_fold_ids`);
        * a fold-id array of n integers (glmnet's ``foldid``; :func:`check_fold_ids`);
        * a scikit-learn splitter — any object with ``split(X, y, groups)`` (``KFold``,
          ``StratifiedKFold``, ``GroupKFold``, ``TimeSeriesSplit``...);
        * an iterable of ``(train, test)`` row-index pairs.
    y : ndarray of shape (n,)
        Response (the strata of an int K; what a splitter sees unless ``split_y``).
    groups : array-like of shape (n,), optional
        Group labels, for an int K or a splitter (refused with fold ids or pairs).
    stratify : bool, default=False
        Stratify an int K on y.
    random_state : int, numpy Generator or None
        Seed of an int K's shuffle (a splitter uses its own).
    X : array-like, optional
        What a splitter's ``split`` receives as X (default: a placeholder of n rows).
    split_y : array-like, optional
        What a splitter receives as y (default ``y``; a classifier's labels).
    name : str, default="folds"
        The argument's name in messages (the estimators' ``cv``).

    Returns
    -------
    Folds
        The splits, checked: integer indices within the rows, non-empty sides, no row
        in both.
    """
    n = int(y.shape[0])
    if isinstance(folds, (int, np.integer)) and not isinstance(folds, (bool, np.bool_)):
        if not 2 <= folds <= n:
            raise ValueError(
                f"{name} must be between 2 and the number of rows (n_samples = {n}); got {folds}."
            )
        if groups is None:
            ids = fold_ids(y, int(folds), stratify=stratify, random_state=random_state)
        else:
            ids = group_fold_ids(groups, int(folds), n, random_state=random_state)
        return Folds.from_fold_ids(ids)
    if isinstance(folds, (bool, np.bool_, float, str, bytes)) or folds is None:
        raise TypeError(
            f"{name} must be an integer >= 2, a fold-id array (one integer per row), a "
            f"scikit-learn splitter (an object with .split) or (train, test) pairs; got "
            f"{folds!r}."
        )
    if _is_splitter(folds):
        if groups is not None:
            groups = check_groups(groups, n)
        Xs = np.zeros((n, 1)) if X is None else X
        ys = y if split_y is None else split_y
        what = f"{name} ({type(folds).__name__})"
        return Folds(_check_splits(folds.split(Xs, ys, groups), n, what), n)
    if groups is not None:
        raise ValueError(
            "groups is used with folds=int or a scikit-learn splitter; fold ids or "
            "(train, test) pairs already say which rows are held out together."
        )
    if _looks_like_pairs(folds):
        return Folds(_check_splits(folds, n, f"{name} (train, test pairs)"), n)
    return Folds.from_fold_ids(check_fold_ids(folds, n, name))


# ---------------------------------------------------------------------------------------
# Grids and the walk
# ---------------------------------------------------------------------------------------
