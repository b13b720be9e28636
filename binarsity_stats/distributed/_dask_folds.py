"""The folds of a cross-validation whose rows stay on the Dask workers (issue 26).

A model built with ``glm(formula, dask_frame, collect=False)`` never brings a row to the
client, so its CV's fold ids are computed where the rows are, one partition at a time,
and kept there next to the partition's codes (a ``fold`` column, int8 for K ≤ 127).
The client holds :class:`WorkerFolds`: K, the rows per fold, and what each partition
needs to compute its own fold ids — O(partitions × strata) numbers, never O(n).

**An int K** (:func:`worker_folds`). The rows are dealt to the folds round-robin after a
shuffle, as the in-memory ``engine/_folds.fold_ids`` does, but with the shuffle done
per partition: partition i permutes its rows of each stratum with a generator seeded by
(seed, i) and deals them starting where the previous partitions (and the previous
strata) stopped. So every fold receives ⌊N_c/K⌋ or ⌈N_c/K⌉ rows of every stratum c
(N_c its rows in all partitions), and ⌊n/K⌋ or ⌈n/K⌉ rows in all — the in-memory
balance — and a row's fold is a function of (seed, partition, its position in the
partition) only: the same on every run, any cluster, any number of workers. One pass
(the strata's row counts per partition) precedes the assignment. The strata are those
of a binary family's y: 0, strictly between 0 and 1 (proportions), 1 (for a 0/1
response: the in-memory classes 0 and 1); a single stratum otherwise. The fold ids
differ from the in-memory ones for the same seed (a different shuffle); give the same
fold ids to both (a column) to compare them.

**The user's fold ids**: the name of a column of the Dask DataFrame given to
:func:`~binarsity_stats.glm`, or a Dask Series with the frame's partitions (e.g.
``ddf["fold"]``, or a column computed from it). As ``engine/_folds.check_fold_ids``
(glmnet's ``foldid``): whole numbers ≥ 0, at least two distinct values, fold k the k-th
smallest value. One pass gathers each partition's distinct values (O(K) numbers) and
checks them; the partitions then map their values to 0..K−1.

The CV walk (``engine/_cv.cross_validate``) names a fold by its rows: here a
:class:`FoldRows` token (the fold and its side, with the number of rows as its length)
stands for them, and ``_dask_backend.DaskPathData`` reads the fold from it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..engine._folds import Folds
from ._dask import compute

__all__ = ["FoldRows", "WorkerFolds", "worker_folds", "with_worker_fold"]

#: the strata of a binary response: y == 0, 0 < y < 1, y == 1
_BINARY_STRATA = 3


class FoldRows:
    """The rows of one side of a fold whose rows stay on the workers (a token).

    Stands where the in-memory CV passes an array of row indices; ``len()`` is the
    number of rows.

    Parameters
    ----------
    fold : int
        The fold k.
    train : bool
        True: the rows of every other fold (fold k's training rows); False: fold k's
        held-out rows.
    n_rows : int
        How many rows.
    """

    def __init__(self, fold: int, train: bool, n_rows: int) -> None:
        self.fold = int(fold)
        self.train = bool(train)
        self.n_rows = int(n_rows)

    def __len__(self) -> int:
        return self.n_rows

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FoldRows):
            return NotImplemented
        return (self.fold, self.train, self.n_rows) == (other.fold, other.train, other.n_rows)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        side = "training rows" if self.train else "held-out rows"
        return f"<fold {self.fold}: {self.n_rows} {side}, on the Dask workers>"


class _Splits(Sequence):
    """``(train, test)`` :class:`FoldRows` of every fold."""

    def __init__(self, sizes: np.ndarray) -> None:
        self.sizes = np.asarray(sizes, dtype=np.int64)

    def __len__(self) -> int:
        return int(self.sizes.size)

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[j] for j in range(*k.indices(len(self)))]
        k = int(k)
        if k < 0:
            k += len(self)
        if not 0 <= k < len(self):
            raise IndexError(f"split {k} of {len(self)}")
        n = int(self.sizes.sum())
        return FoldRows(k, True, n - int(self.sizes[k])), FoldRows(k, False, int(self.sizes[k]))


class WorkerFolds(Folds):
    """The folds of a CV whose rows stay on the workers (see the module docstring).

    A :class:`~binarsity_stats.engine._folds.Folds` whose splits are
    :class:`FoldRows` tokens and whose ``fold_ids`` are on the workers (None here).

    Parameters
    ----------
    sizes : ndarray of shape (K,)
        Rows per fold.
    plans : list
        Per partition, what :func:`with_worker_fold` needs to compute its fold ids.
    kind : str
        ``"dealt"`` (an int K: seeded, stratified or not) or ``"given"`` (the user's).
    seed : int or None
        The seed of a ``"dealt"`` assignment.
    stratified : bool
        Whether a ``"dealt"`` assignment is stratified on y.
    """

    #: read by ``fit_cv`` and the Dask backend: the fold ids are on the workers
    on_workers = True

    def __init__(self, sizes: np.ndarray, plans: list, kind: str, seed: int | None,
                 stratified: bool) -> None:  # fmt: skip
        self.sizes = np.asarray(sizes, dtype=np.int64)
        self.n_obs = int(self.sizes.sum())
        self.splits = _Splits(self.sizes)
        self._ids = None
        self.plans = plans
        self.kind = kind
        self.seed = seed
        self.stratified = bool(stratified)

    @property
    def fold_ids(self) -> None:
        """None: the fold ids are on the workers (``fold`` next to each partition's codes)."""
        return None

    def restrict(self, rows: np.ndarray) -> Folds | None:
        """Refused: the rows are on the workers."""
        raise ValueError(
            "folds whose ids stay on the Dask workers cannot be restricted to a subset of "
            "the rows on the client."
        )

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["plans"] = None  # references to the partitions (the cluster's)
        return state

    def __repr__(self) -> str:
        return f"<Folds {self.n_folds} splits of {self.n_obs} rows, on the Dask workers>"


# --------------------------------------------------------------------- per partition


def _strata(y: np.ndarray, stratify: bool) -> np.ndarray:
    """The stratum of every row: 0 (y = 0), 1 (0 < y < 1), 2 (y = 1); 0 unstratified."""
    if not stratify:
        return np.zeros(y.shape[0], dtype=np.intp)
    return np.where(y == 0, 0, np.where(y == 1, 2, 1)).astype(np.intp)


def _count_strata(part: dict, stratify: bool) -> np.ndarray:
    """Rows of one partition in every stratum (the pass before the dealing)."""
    y = np.asarray(part["y"], dtype=np.float64)
    return np.bincount(_strata(y, stratify), minlength=_BINARY_STRATA if stratify else 1)


def _fold_dtype(K: int) -> Any:
    for dtype in (np.int8, np.int16, np.int32):
        if K <= np.iinfo(dtype).max:
            return dtype
    return np.int64


def _deal(part: dict, index: int, seed: int, K: int, starts: np.ndarray,
          stratify: bool) -> np.ndarray:  # fmt: skip
    """One partition's fold ids: each stratum's rows permuted by a generator seeded by
    (seed, partition) and dealt round-robin from ``starts[stratum]``."""
    y = np.asarray(part["y"], dtype=np.float64)
    strata = _strata(y, stratify)
    rng = np.random.default_rng([int(seed), int(index)])
    out = np.empty(y.shape[0], dtype=_fold_dtype(K))
    for c, start in enumerate(np.asarray(starts, dtype=np.int64)):
        idx = np.flatnonzero(strata == c)
        idx = idx[rng.permutation(idx.size)]
        out[idx] = (int(start) + np.arange(idx.size)) % K
    return out


def _values(column: Any, name: str, n: int) -> np.ndarray:
    """A partition's piece of the user's fold-id column, checked (whole numbers ≥ 0)."""
    values = column.to_numpy() if hasattr(column, "to_numpy") else np.asarray(column)
    values = np.asarray(values).reshape(-1)
    if values.shape[0] != n:
        raise ValueError(
            f"{name} (fold ids): a partition has {values.shape[0]} values for {n} rows of "
            "the data; give a column of the data, or a Dask Series with the data's "
            "partitions."
        )
    if values.dtype.kind == "O":
        try:
            values = values.astype(np.float64)
        except (TypeError, ValueError):
            pass
    if values.dtype.kind == "b" or values.dtype.kind not in "iuf":
        raise TypeError(f"{name} (fold ids) must hold integers; got dtype {values.dtype}.")
    if values.dtype.kind == "f":
        if not np.all(np.isfinite(values)) or np.any(values != np.round(values)):
            raise ValueError(f"{name} (fold ids) must hold whole numbers (no NaN, no fractions).")
    if values.size and values.min() < 0:
        raise ValueError(f"{name} (fold ids) must be >= 0.")
    return values


def _given_labels(part: dict, column: Any, name: str) -> dict:
    """Distinct fold labels of one partition with their row counts."""
    n = int(np.asarray(part["codes"]).shape[1])
    labels, counts = np.unique(_values(column, name, n), return_counts=True)
    return {"labels": labels.astype(np.float64), "counts": counts.astype(np.int64)}


def _map_given(part: dict, column: Any, name: str, labels: np.ndarray) -> np.ndarray:
    """One partition's fold ids: the position of each value among all ``labels``."""
    n = int(np.asarray(part["codes"]).shape[1])
    values = _values(column, name, n).astype(np.float64)
    return np.searchsorted(labels, values).astype(_fold_dtype(labels.size))


def with_worker_fold(part: dict, index: int, plan: tuple) -> dict:
    """A partition with the fold id of each of its rows, computed here (on a worker).

    Parameters
    ----------
    part : dict
        A partition of the Dask design.
    index : int
        Its position among the partitions.
    plan : tuple
        ``("dealt", seed, K, starts, stratify)`` or ``("given", column, name, labels)``.

    Returns
    -------
    dict
        ``part`` with its ``fold`` column.
    """
    if plan[0] == "dealt":
        _, seed, K, starts, stratify = plan
        fold = _deal(part, index, seed, K, starts, stratify)
    else:
        _, column, name, labels = plan
        fold = _map_given(part, column, name, labels)
    return dict(part, fold=fold)


# --------------------------------------------------------------------- the client side


def _seed(random_state: Any) -> int:
    """An integer seed of ``random_state`` (an int is itself; a Generator or None draws
    one, so that the assignment is reproducible from the seed stored on the result)."""
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        return int(random_state)
    return int(np.random.default_rng(random_state).integers(2**63))


def _aligned_column(folds: Any, frame: Any, n_parts: int, name: str) -> list:
    """The partitions of the user's fold-id column (a name of ``frame`` or a Series)."""
    if isinstance(folds, str):
        if frame is None:
            raise ValueError(
                f"{name}={folds!r}: this model does not hold its Dask DataFrame (a saved "
                f"model); pass the fold ids as a Dask Series, e.g. ddf[{folds!r}]."
            )
        if folds not in frame.columns:
            from ..formula._columns import did_you_mean

            raise ValueError(f"{name}={folds!r} is not a column of the data."
                             + did_you_mean([folds], list(frame.columns)))  # fmt: skip
        folds = frame[folds]
    if getattr(folds, "ndim", 1) != 1 or not hasattr(folds, "to_delayed"):
        raise TypeError(
            f"{name}: on a model whose rows stay on the Dask workers give the fold ids as "
            f"the name of a column of the data or a Dask Series; got {type(folds).__name__}."
        )
    if folds.npartitions != n_parts:
        raise ValueError(
            f"{name}: the fold ids have {folds.npartitions} partitions and the data "
            f"{n_parts}; give a column of the data (or a Series computed from it) so that "
            "its partitions are the data's."
        )
    return list(folds.to_delayed())


def worker_folds(design: Any, folds: Any, *, stratify: bool, random_state: Any,
                 frame: Any = None, client: Any = None, name: str = "folds") -> WorkerFolds:  # fmt: skip
    """The folds of a CV on the workers (see the module docstring): one pass.

    Parameters
    ----------
    design : DaskDesign
        The persisted design (its partitions on the workers).
    folds : int, str or dask Series
        K (2 ≤ K ≤ n), or the user's fold ids: a column name of ``frame`` or a Dask Series
        with its partitions.
    stratify : bool
        Stratify an int K on y (a binary family).
    random_state : int, numpy Generator or None
        Seed of an int K's shuffles.
    frame : dask DataFrame, optional
        The data the model was built on (for a column name).
    client : distributed.Client, optional
        Where to compute.
    name : str, default="folds"
        The argument's name in messages.

    Returns
    -------
    WorkerFolds
    """
    import dask

    parts = list(design.partitions)
    n = int(design.n_rows)
    if isinstance(folds, (int, np.integer)) and not isinstance(folds, (bool, np.bool_)):
        K = int(folds)
        if not 2 <= K <= n:
            raise ValueError(
                f"{name} must be between 2 and the number of rows (n_samples = {n}); got {K}."
            )
        seed = _seed(random_state)
        count = dask.delayed(_count_strata, pure=True)
        counts = compute(*[count(p, bool(stratify)) for p in parts], client=client,
                         what="the strata of the folds")  # fmt: skip
        counts = np.asarray(counts, dtype=np.int64).reshape(len(parts), -1)  # (P, S)
        totals = counts.sum(axis=0)
        # stratum c starts where the previous strata ended (the in-memory running start);
        # partition i where the previous partitions' rows of c ended
        starts = np.concatenate([[0], np.cumsum(totals)[:-1]])[None, :] + np.concatenate(
            [np.zeros((1, counts.shape[1]), dtype=np.int64), np.cumsum(counts, axis=0)[:-1]]
        )  # fmt: skip
        sizes = np.zeros(K, dtype=np.int64)
        start = 0
        for total in totals:  # stratum c's rows dealt from ``start``: its share per fold
            sizes += (np.arange(K) - start) % K < total % K
            sizes += total // K
            start += int(total)
        plans = [("dealt", seed, K, starts[i], bool(stratify)) for i in range(len(parts))]
        return WorkerFolds(sizes, plans, "dealt", seed, bool(stratify) and totals.size > 1)
    if isinstance(folds, (bool, np.bool_, float)) or folds is None:
        raise TypeError(
            f"{name} must be an integer >= 2, or the fold ids (a column name or a Dask "
            f"Series) on a model whose rows stay on the Dask workers; got {folds!r}."
        )
    pieces = _aligned_column(folds, frame, len(parts), name)
    given = dask.delayed(_given_labels, pure=True)
    found = compute(*[given(p, c, name) for p, c in zip(parts, pieces, strict=True)],
                    client=client, what="the fold ids")  # fmt: skip
    labels = np.unique(np.concatenate([f["labels"] for f in found]))
    if labels.size < 2:
        raise ValueError(f"{name} (fold ids) needs at least 2 distinct folds; got {labels.size}.")
    sizes = np.zeros(labels.size, dtype=np.int64)
    for f in found:
        np.add.at(sizes, np.searchsorted(labels, f["labels"]), f["counts"])
    plans = [("given", c, name, labels) for c in pieces]
    return WorkerFolds(sizes, plans, "given", None, False)
