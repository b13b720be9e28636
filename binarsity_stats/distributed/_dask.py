"""The data side of fits on Dask collections: mergeable binning and codes per partition.

Nothing here imports dask at module level (``import binarsity_stats`` stays light); the
functions that build task graphs import it when called.

**Binning from mergeable summaries.** A ``bin()`` feature's cut points depend on the
training values only through their distinct values and the (weighted) count of each
(``Binarizer`` Notes: the rule is a function of the multiset of values). So each
partition sends :class:`ValueSummary` — its distinct values with their row counts and
their weights in the Binarizer's exact fixed point — and summaries merge by adding the
counts of equal values. While the merged feature has at most ``max_distinct`` distinct
values (:data:`MAX_DISTINCT`, 100,000: ages, amounts in cents, ratings, counts), the
cut points, bin counts, missing level and ``min_count`` merges are *identical* to those
of the in-memory ``Binarizer`` on the concatenated data, whatever the partitioning.

Beyond that bound the summary becomes a *quantile sketch*: the distinct values are
thinned to at most ``sketch_size`` (:data:`SKETCH_SIZE`, 16,384) kept values, each
carrying the mass of the dropped values just below it. One thinning moves any
value's rank (its cumulative mass) by less than M / k (M the mass of the thinned
summary, k the sketch size): the mass between two kept values is below one k-th.
Merging adds the errors, so after thinning at L levels of the merge tree the rank of
every value is off by at most L · M / k, i.e. a cut point's quantile level is within
``rank_error`` (= L / k, stored on the summary, 6.1e-5 per level at the default) of
the exact one; with 50 bins (2% of the mass each) that is far below a bin's width.
The sketch keeps the exact minimum and maximum. Its cut points are those of the
Binarizer rule applied to the sketch (ties, big values and the Sainte-Laguë sharing
work on it unchanged); ``min_count`` merges use the sketch's approximate row counts.

**Codes per partition.** :class:`DaskDesign` is the solver's view: per partition a
dict with the codes (p, n_i) (uint8/uint16, block-major as ``BinnedDesign.codes``),
the dense columns, y, weights and offset, plus the block layout (``block_ptr``,
``kinds``) and the row count.

Layout: the summaries, the fixed point and the cut points from a summary are in
``_dask_summary.py``, which defines :data:`MAX_DISTINCT` and :data:`SKETCH_SIZE`; the
fits read the bounds from this module's names for them, at call time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..design._cuts import bin_sums
from ._dask_summary import (
    MAX_DISTINCT,
    SKETCH_SIZE,
    ValueSummary,
    cuts_from_summary,
    fixed_point_shift,
    to_fixed,
)

#: Summaries merged per node of the reduction tree.
SPLIT_EVERY = 8


def is_dask_collection(obj: Any) -> bool:
    """Whether ``obj`` is a Dask collection (DataFrame, Series, Array), without importing dask.

    Parameters
    ----------
    obj : object
        Anything.

    Returns
    -------
    bool
    """
    module = type(obj).__module__ or ""
    return module.split(".")[0] == "dask" and hasattr(obj, "__dask_graph__")


# =====================================================================================
# The solver's view of the data
# =====================================================================================


@dataclass
class DaskDesign:
    """The binned design of a Dask collection, partition by partition (design.md §9).

    Attributes
    ----------
    block_ptr : ndarray of int64, shape (p + 1,)
        Offsets of the blocks in θ.
    kinds : tuple of str
        Kind of every block (``"tv"``, ``"free"``...; ``_blocks``).
    n_dense : int
        Dense (unpenalised numeric) columns q.
    partitions : list of dask.delayed
        Each computes ``dict(codes=(p, n_i) uint8|uint16 C-contiguous, dense=(n_i, q)
        float64 | None, y=(n_i,) float64, weight=(n_i,) float64 | None, offset=(n_i,)
        float64 | None, fold=None)``. Values are validated (finite, codes in range).
    n_rows : int
        Total rows.
    labels : list of str or None
        Names of θ (one per level).
    counts : ndarray of int64 or None
        Exact unweighted rows per level when every binning was exact, else None.
    dense_names : list of str or None
        Names of the dense columns.
    partition_rows : list of int or None
        Rows of each partition.
    """

    block_ptr: np.ndarray
    kinds: tuple
    n_dense: int
    partitions: list
    n_rows: int
    labels: list | None = None
    counts: np.ndarray | None = None
    dense_names: list | None = None
    partition_rows: list | None = None

    @property
    def n_blocks(self) -> int:
        """Number of code blocks p."""
        return int(len(self.block_ptr) - 1)

    def persist(self, client: Any = None) -> DaskDesign:
        """The same design with its partitions computed and kept in (cluster) memory.

        Parameters
        ----------
        client : distributed.Client, optional
            Persist on this client's cluster (default: the current dask scheduler).

        Returns
        -------
        DaskDesign
        """
        import dask

        parts = (
            client.persist(self.partitions)
            if client is not None
            else dask.persist(*self.partitions)
        )
        out = DaskDesign(**{**self.__dict__})
        out.partitions = list(parts)
        return out

    def collect(self) -> dict[str, Any]:
        """All partitions concatenated in memory (for data that fits on one machine).

        Returns
        -------
        dict
            ``codes`` (p, n), ``dense`` (n, q) or None, ``y``, ``weight``, ``offset``.
        """
        parts = compute(*self.partitions, what="collecting the partitions")
        return concat_partitions(parts, self.n_blocks)


def concat_partitions(parts: Any, n_blocks: int) -> dict[str, Any]:
    """Concatenate partition dicts (see :class:`DaskDesign`) along the rows."""
    parts = list(parts)
    out: dict[str, Any] = {}
    if parts:
        dtype = parts[0]["codes"].dtype
    else:  # pragma: no cover - a collection always has a partition
        dtype = np.uint8
    out["codes"] = np.ascontiguousarray(
        np.concatenate([p["codes"] for p in parts], axis=1)
        if parts else np.empty((n_blocks, 0), dtype=dtype)
    )  # fmt: skip
    for key in ("dense", "y", "weight", "offset"):
        pieces = [p[key] for p in parts]
        out[key] = None if pieces[0] is None else np.concatenate(pieces, axis=0)
    return out


# =====================================================================================
# The estimators on Dask collections: the Binarizer from summaries, codes per partition
# =====================================================================================


def _dask_module() -> Any:
    try:
        import dask
    except ImportError as exc:  # pragma: no cover - the dask extra
        raise ImportError(
            "fits on Dask collections need dask: pip install 'binarsity-stats[dask]'."
        ) from exc
    return dask


#: dask config key: seconds one Dask computation of a fit (a pass over the partitions)
#: may take before it is abandoned with a TimeoutError naming the scheduler's state
TIMEOUT_KEY = "binarsity_stats.dask_timeout"
#: dask config key: seconds a computation may wait with no worker alive
NO_WORKERS_TIMEOUT_KEY = "binarsity_stats.dask_no_workers_timeout"
#: the defaults: an hour per pass, a minute without any worker
DEFAULT_TIMEOUT = 3600.0
DEFAULT_NO_WORKERS_TIMEOUT = 60.0


def _distributed_client(client: Any = None) -> Any:
    """The ``distributed.Client`` a computation runs on: ``client``, or the one dask's
    current scheduler belongs to (``Client(...)`` as default, ``dask.config.set(
    scheduler=client)``); None for the local schedulers (threads, processes, sync)."""
    if client is not None:
        return client
    import sys

    if "distributed" not in sys.modules:
        return None
    from dask.base import get_scheduler

    try:
        get = get_scheduler()
    except Exception:  # pragma: no cover - a broken scheduler setting: dask will say so
        return None
    owner = getattr(get, "__self__", None)
    from distributed import Client

    return owner if isinstance(owner, Client) else None


def _seconds(key: str, default: float) -> float | None:
    import dask

    value = dask.config.get(key, default=default)
    if value is None:
        return None
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"dask config {key!r} must be a number of seconds or None; "
                         f"got {value!r}.") from None  # fmt: skip
    if not value > 0:
        raise ValueError(f"dask config {key!r} must be positive; got {value!r}.")
    return value


def _task_states(dask_scheduler: Any = None) -> dict:
    """The scheduler's tasks counted by state (run on the scheduler)."""
    counts: dict = {}
    for ts in dask_scheduler.tasks.values():
        counts[ts.state] = counts.get(ts.state, 0) + 1
    return counts


def _scheduler_state(client: Any, futures: list) -> str:
    """Workers alive, tasks processing and results pending, and the scheduler's tasks by
    state (waiting, no-worker: none can run them...), for a message."""
    try:
        workers = client.nthreads()
        processing = client.processing()
        busy = sum(len(v) for v in processing.values())
        alive = f"{len(workers)} worker(s) alive ({sum(workers.values())} threads)"
    except Exception as exc:  # the scheduler itself is unreachable
        alive, busy = f"scheduler unreachable ({type(exc).__name__}: {exc})", "unknown"
    try:
        states = client.run_on_scheduler(_task_states)
        tasks = ", ".join(f"{v} {k}" for k, v in sorted(states.items())) or "none"
    except Exception:  # the scheduler is unreachable (said above) or refuses the call
        tasks = "unknown"
    pending = sum(not f.done() for f in futures)
    address = getattr(getattr(client, "scheduler", None), "address", "?")
    return (f"scheduler {address}: {alive}, {busy} task(s) processing on workers, "
            f"tasks on the scheduler by state: {tasks}; "
            f"{pending} of {len(futures)} result(s) not ready")  # fmt: skip


def _wait_done(future: Any, seconds: float) -> bool:
    """Whether ``future`` is done, waiting up to ``seconds`` (short sleeps, no sync)."""
    import time

    end = time.monotonic() + seconds
    pause = 0.001
    while not future.done():
        if time.monotonic() >= end:
            return False
        time.sleep(pause)
        pause = min(2 * pause, 0.01)
    return True


def compute(*objs: Any, client: Any = None, what: str = "a pass over the partitions") -> tuple:
    """``dask.compute(*objs)``, with a timeout on a distributed cluster.

    On a ``distributed.Client`` (``client``, or the current default) the computation is
    watched: it is abandoned (its futures cancelled) with a ``TimeoutError`` naming the
    scheduler's state — workers alive, tasks processing, the scheduler's tasks by state
    (queued, waiting, no-worker, ...), results pending — after
    ``dask.config.get("binarsity_stats.dask_timeout")`` seconds (default 3600; None: no
    limit), or after ``"binarsity_stats.dask_no_workers_timeout"`` seconds (default 60)
    with no worker alive (killed workers, a cluster scaled to zero), where dask itself
    would wait for ever. The local schedulers compute as ``dask.compute`` does.

    Parameters
    ----------
    *objs : dask collections or delayed objects
        What to compute.
    client : distributed.Client, optional
        The cluster (default: dask's current scheduler).
    what : str, default="a pass over the partitions"
        The computation, for the message.

    Returns
    -------
    tuple
        The results, in the order of ``objs``.

    Raises
    ------
    TimeoutError
        The timeout was reached, or no worker was alive for the no-worker timeout.
    """
    import time

    dask = _dask_module()
    client = _distributed_client(client)
    if client is None:
        return dask.compute(*objs)
    timeout = _seconds(TIMEOUT_KEY, DEFAULT_TIMEOUT)
    lonely = _seconds(NO_WORKERS_TIMEOUT_KEY, DEFAULT_NO_WORKERS_TIMEOUT)
    futures = client.compute(list(objs))
    start = time.monotonic()
    alone_since = None
    pending = list(futures)
    while pending:
        # polled with done() (the future's local state), then fetched with a timeout:
        # distributed's timed wait on a future still running races with its own timeout
        # (UnboundLocalError from its sync(), 2026.8, under load), and a finished
        # future's data can be lost with its worker (the scheduler recomputes it; an
        # untimed fetch would wait for ever with no worker left)
        if _wait_done(pending[0], 0.5):
            if getattr(pending[0], "status", None) == "error":
                pending[0].result()  # the task's own error (known: no wait), raised here
            try:
                pending[0].result(timeout=0.5)
                pending.pop(0)
                continue
            except (TimeoutError, UnboundLocalError):
                pass  # not fetched in time: watched below like a running task
        now = time.monotonic()
        reason = None
        if timeout is not None and now - start >= timeout:
            reason = f"did not finish within {timeout:g} s ({TIMEOUT_KEY!r})"
        elif lonely is not None:
            try:
                alive = len(client.nthreads())
            except Exception:  # the scheduler is gone: as good as no worker
                alive = 0
            alone_since = None if alive else (alone_since or now)
            if alone_since is not None and now - alone_since >= lonely:
                reason = (f"has had no worker alive for {lonely:g} s "
                          f"({NO_WORKERS_TIMEOUT_KEY!r})")  # fmt: skip
        if reason is not None:
            state = _scheduler_state(client, futures)
            try:
                client.cancel(futures)
            except Exception:  # pragma: no cover - best effort on a broken cluster
                pass
            raise TimeoutError(
                f"Dask computation ({what}) {reason}; {state}. Restart or add workers, or "
                f"raise the limit: dask.config.set({{{TIMEOUT_KEY!r}: seconds}})."
            )
    return tuple(client.gather(futures))


def row_partitions(X: Any) -> list:
    """Delayed row blocks of a Dask DataFrame or 2-D Dask Array (all columns per block)."""
    if hasattr(X, "to_delayed") and hasattr(X, "columns"):
        return list(X.to_delayed())
    if getattr(X, "ndim", 0) != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features); got {X.ndim}-D.")
    blocks = X.rechunk({1: -1}).to_delayed()
    return list(np.asarray(blocks).reshape(-1))


def partition_lengths(X: Any) -> list[int]:
    """Rows of every row block of a Dask X (one small task per block)."""
    dask = _dask_module()
    return [int(v) for v in compute(*[dask.delayed(len)(p) for p in row_partitions(X)],
                                    what="counting the rows of every partition")]  # fmt: skip


def _aligned(value: Any, name: str, X: Any, lengths: list[int] | None) -> list | None:
    """A per-row argument (y, sample_weight, offset) cut like the row blocks of X."""
    if value is None:
        return None
    if isinstance(value, str) and value.startswith("__binarsity_"):  # see with_row_columns
        return [("column", value)] * len(lengths)
    if isinstance(value, str):
        raise TypeError(f"{name} must be values (an array or a Dask collection), not {value!r}.")
    if is_dask_collection(value):
        if getattr(value, "ndim", 1) != 1:
            raise ValueError(f"{name} must be 1-D; got a {value.ndim}-D Dask collection.")
        if hasattr(value, "to_delayed") and hasattr(value, "npartitions"):
            parts = list(value.to_delayed())
        else:  # a dask Array: its chunks must be X's row blocks
            chunks_x = X.chunks[0] if hasattr(X, "chunks") else None
            if chunks_x is not None and tuple(value.chunks[0]) != tuple(chunks_x):
                value = value.rechunk({0: chunks_x})
            parts = list(np.asarray(value.to_delayed()).reshape(-1))
        n_blocks = len(row_partitions(X))
        if len(parts) != n_blocks:
            raise ValueError(
                f"{name} has {len(parts)} partitions but X has {n_blocks}: give a column of the "
                "same Dask DataFrame (or a Dask collection partitioned like X)."
            )
        return parts
    arr = np.asarray(value.to_numpy() if hasattr(value, "to_numpy") else value)
    total = sum(lengths)
    if arr.ndim != 1 or arr.shape[0] != total:
        raise ValueError(f"{name} has {arr.shape[0] if arr.ndim else 1} rows but X has {total}.")
    bounds = np.cumsum([0, *lengths])
    return [arr[bounds[i] : bounds[i + 1]] for i in range(len(lengths))]


def with_row_columns(X: Any, **values: Any) -> tuple[Any, dict, list[str]]:
    """Per-row Dask Series (y, weights, offset) as extra columns of a Dask DataFrame X.

    Dask may partition two collections of one frame differently (a column read alone
    from Parquet can be fused into fewer partitions), so they are assigned to X — aligned
    by Dask — and read back per partition by name. Returns ``(X, values, extra_names)``
    with the Series replaced by their column names.
    """
    if not (hasattr(X, "assign") and hasattr(X, "columns")):
        return X, values, []
    extra = {}
    out = dict(values)
    for key, v in values.items():
        if is_dask_collection(v) and getattr(v, "ndim", 2) == 1 and hasattr(v, "npartitions"):
            name = f"__binarsity_{key}__"
            extra[name] = v
            out[key] = name
    if not extra:
        return X, values, []
    return X.assign(**extra), out, list(extra)


def _piece(part: Any, value: Any) -> Any:
    """One partition's per-row values: a column of the partition, or the values."""
    if isinstance(value, tuple) and len(value) == 2 and value[0] == "column":
        return part[value[1]]
    return value


def _features(part: Any, extra: list[str]) -> Any:
    return part.drop(columns=extra) if extra else part


def _as_1d(part: Any) -> np.ndarray:
    return np.asarray(part.to_numpy() if hasattr(part, "to_numpy") else part).reshape(-1)


def _weights_stats(part: Any, w: Any) -> dict:
    from ..core._validation import check_sample_weight

    w = _as_1d(_piece(part, w))
    if w.size == 0:
        return {"rows": 0, "wmax": 0.0}
    w = np.asarray(w, dtype=np.float64)
    if not np.all(np.isfinite(w)):
        raise ValueError("sample_weight has missing or infinite values.")
    if np.any(w < 0):
        raise ValueError("sample_weight must be non-negative.")
    check_sample_weight(w if np.any(w > 0) else None, w.size)
    return {"rows": int(w.size), "wmax": float(w.max())}


def _with_weight(features: Any, part: Any, w: Any) -> tuple:
    return features, _as_1d(_piece(part, w))


def _binned_summaries(part: Any, w: Any, binned: np.ndarray, missing: str, shift: Any,
                      bounds: tuple[int, int]) -> dict:  # fmt: skip
    """One block's summaries of the binned columns (validated as the Binarizer does)."""
    from ..design._column_access import as_columns, raise_bad_value

    if isinstance(part, tuple):  # (features, weights)
        part, w = part
    sub = part.iloc[:, binned] if hasattr(part, "iloc") else np.asarray(part)[:, binned]
    cols = as_columns(sub) if len(part) else None
    q = None if w is None or shift is None else to_fixed(_as_1d(w), shift)
    out = []
    for k in range(len(binned)):
        if cols is None:
            out.append(ValueSummary.of(np.empty(0), None if q is None else q))
            continue
        x = np.asarray(cols.get(k), dtype=np.float64)
        bad = np.isinf(x)
        if bad.any():
            raise_bad_value(float(x[bad][0]), cols.label(k), int(np.flatnonzero(bad)[0]))
        if missing == "error" and np.isnan(x).any():
            raise_bad_value(np.nan, cols.label(k), int(np.flatnonzero(np.isnan(x))[0]))
        out.append(ValueSummary.of(x, q, *bounds))
    return {"rows": len(part), "summaries": out, "bounds": bounds}


def _merge_binned(*nodes: dict) -> dict:
    bounds = nodes[0]["bounds"]
    k = len(nodes[0]["summaries"])
    return {
        "rows": sum(n["rows"] for n in nodes),
        "summaries": [
            ValueSummary.merge([n["summaries"][j] for n in nodes], *bounds) for j in range(k)
        ],  # fmt: skip
        "bounds": bounds,
    }


def _reduce_tree(dask: Any, leaves: list, merge: Any) -> Any:
    level = list(leaves)
    task = dask.delayed(merge, pure=True)
    while len(level) > 1:
        level = [task(*level[i : i + SPLIT_EVERY]) for i in range(0, len(level), SPLIT_EVERY)]
    return level[0]


def fit_binarizer_dask(
    binarizer: Any,
    X: Any,
    binned: np.ndarray,
    names: np.ndarray | None,
    sample_weight: Any = None,
    max_distinct: int | None = None,
    sketch_size: int | None = None,
    extra: list[str] | None = None,
) -> dict:
    """Fit ``binarizer`` (a ``BinarizerCore``) on the binned columns of a Dask X.

    The fitted state is that of ``binarizer.fit`` on the concatenated rows while every
    feature has at most ``max_distinct`` distinct values (module docstring).

    Parameters
    ----------
    binarizer : BinarizerCore
        Unfitted; its ``n_bins``, ``missing`` and ``min_bin_count`` are used.
    X : dask DataFrame or 2-D dask Array
        The features.
    binned : ndarray of int
        Positions of the binned columns.
    names : ndarray or None
        Column names of X (a DataFrame), else None.
    sample_weight : dask collection or array-like, optional
        Row weights (weighted quantiles, as the Binarizer).
    max_distinct, sketch_size : int, optional
        Defaults :data:`MAX_DISTINCT`, :data:`SKETCH_SIZE`.
    extra : list of str, optional
        Columns of X that are not features (:func:`with_row_columns`).

    Returns
    -------
    dict
        ``rows`` (per partition), ``exact`` (per binned feature) and ``rank_error``.
    """
    from ..core._base import publish_fitted
    from ..core._validation import check_min_bin_count
    from ..design._column_access import check_binarizer_n_bins, from_fixed

    dask = _dask_module()
    bounds = (
        MAX_DISTINCT if max_distinct is None else int(max_distinct),
        SKETCH_SIZE if sketch_size is None else int(sketch_size),
    )
    missing = binarizer.missing if binarizer.missing in ("error", "separate") else None
    if missing is None:
        raise ValueError(f"missing must be 'error' or 'separate'; got {binarizer.missing!r}.")
    parts = row_partitions(X)
    lengths = partition_lengths(X)
    weights = _aligned(sample_weight, "sample_weight", X, lengths)
    shift = None
    if weights is not None:
        stats = compute(*[dask.delayed(_weights_stats)(p, w)
                          for p, w in zip(parts, weights, strict=True)],
                        what="the weights of every partition")  # fmt: skip
        wmax = max(s["wmax"] for s in stats)
        if not wmax > 0:
            raise ValueError("sample_weight is zero for every row; at least one must be positive.")
        shift = fixed_point_shift(sum(lengths), wmax)
    n_bins = check_binarizer_n_bins(binarizer.n_bins, len(binned), missing)
    min_count = check_min_bin_count(binarizer.min_bin_count)
    task = dask.delayed(_binned_summaries, pure=True)
    feats = [dask.delayed(_features)(p, extra or []) for p in parts] if extra else parts
    leaves = [task(f, None, binned, missing, shift, bounds) if weights is None else
              task(dask.delayed(_with_weight)(f, p, weights[i]), "w", binned, missing, shift,
                   bounds)
              for i, (f, p) in enumerate(zip(feats, parts, strict=True))]  # fmt: skip
    (merged,) = compute(_reduce_tree(dask, leaves, _merge_binned),
                        what="the summaries of the binned features")  # fmt: skip
    if merged["rows"] == 0:
        raise ValueError("X has no rows: at least one sample is needed to fit.")
    edges, counts, has_nan, exact, err = [], [], [], [], []
    for k, s in enumerate(merged["summaries"]):
        label = f"column {names[binned[k]]!r}" if names is not None else f"column {k}"
        e, _ = cuts_from_summary(s, int(n_bins[k]), min_count, shift is not None, label)
        live = s.rows_pos > 0
        c = bin_sums(s.values[live], s.mass[live], e)
        any_nan = s.nan_rows > 0
        nan_c: Any = s.nan_rows
        if shift is not None:
            c = from_fixed(c, shift[1] - shift[0])
            nan_c = float(from_fixed(s.nan_mass, shift[1] - shift[0]))
        edges.append(np.asarray(e, dtype=np.float64))
        counts.append(np.append(c, nan_c) if any_nan else c)
        has_nan.append(any_nan)
        exact.append(bool(s.exact))
        err.append(float(s.rank_error))
    has_nan = np.asarray(has_nan, dtype=bool)
    n_bins_ = np.array([len(e) + 1 + m for e, m in zip(edges, has_nan, strict=True)], np.int64)
    publish_fitted(
        binarizer,
        {
            "edges_": edges,
            "has_missing_level_": has_nan,
            "n_bins_": n_bins_,
            "bin_counts_": counts,
            "n_features_in_": len(binned),
            "feature_names_in_": None if names is None else np.asarray(names[binned], object),
        },
    )
    return {"rows": lengths, "exact": exact, "rank_error": err}


def _code_block(
    part: Any, binarizer: Any, binned: np.ndarray, y: Any, w: Any, off: Any, extra: list
) -> dict:
    """One block: codes of the binned columns, the block with them in place, y, w, offset."""
    y, w, off = _piece(part, y), _piece(part, w), _piece(part, off)
    part = _features(part, extra)
    n = len(part)
    is_frame = hasattr(part, "iloc")
    if n and binarizer is not None:
        sub = part.iloc[:, binned] if is_frame else np.asarray(part)[:, binned]
        codes = binarizer.transform_codes(sub)
    else:
        codes = np.empty((len(binned), 0), dtype=np.uint8)
    if is_frame:
        local = part.copy()
        for k, j in enumerate(binned):
            local[local.columns[j]] = codes[k]
    else:
        local = np.array(part, dtype=np.float64 if np.asarray(part).dtype.kind != "O" else object)
        for k, j in enumerate(binned):
            local[:, j] = codes[k]
    return {
        "codes": codes,
        "X": local,
        "y": None if y is None else (y if hasattr(y, "iloc") else _as_1d(y)),
        "weight": None if w is None else _as_1d(w).astype(np.float64),
        "offset": None if off is None else _as_1d(off).astype(np.float64),
    }


def collect_estimator_data(
    X: Any, y: Any, binarizer: Any, binned: np.ndarray, lengths: list[int],
    sample_weight: Any = None, offset: Any = None, extra: list | None = None,
) -> dict:  # fmt: skip
    """Code every block of a Dask X on the workers and gather the codes on the client.

    Returns ``X`` (the features with every binned column replaced by its codes, in
    memory), ``codes`` (k, n), ``y``, ``sample_weight`` and ``offset`` (None when not
    given).
    """
    import pandas as pd

    dask = _dask_module()
    parts = row_partitions(X)
    ys = _aligned(y, "y", X, lengths)
    ws = _aligned(sample_weight, "sample_weight", X, lengths)
    offs = _aligned(offset, "offset", X, lengths)
    task = dask.delayed(_code_block, pure=True)
    blocks = compute(*[
        task(p, binarizer, binned, ys[i], None if ws is None else ws[i],
             None if offs is None else offs[i], extra or [])
        for i, p in enumerate(parts)
    ], what="coding every partition")  # fmt: skip
    frames = [b["X"] for b in blocks]
    if hasattr(frames[0], "iloc"):
        local = pd.concat(frames, axis=0, ignore_index=True)
    else:
        local = np.concatenate(frames, axis=0)
    yy = [b["y"] for b in blocks]
    y_all = (pd.concat(yy, ignore_index=True) if hasattr(yy[0], "iloc")
             else np.concatenate(yy))  # fmt: skip

    def cat(key: str) -> Any:
        pieces = [b[key] for b in blocks]
        return None if pieces[0] is None else np.concatenate(pieces)

    return {
        "X": local,
        "codes": np.ascontiguousarray(np.concatenate([b["codes"] for b in blocks], axis=1)),
        "y": y_all,
        "sample_weight": cat("weight"),
        "offset": cat("offset"),
    }


def meta_of(X: Any) -> Any:
    """An empty in-memory X with the columns and dtypes of a Dask X (for feature kinds)."""
    if hasattr(X, "_meta") and hasattr(X, "columns"):
        return X._meta
    return np.empty((0, X.shape[1]), dtype=X.dtype)
