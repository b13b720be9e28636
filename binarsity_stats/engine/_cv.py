"""K-fold cross-validation at the engine level: the folds walked down the grid in lockstep.

:func:`cross_validate` walks every fold down the grid in lockstep, scores the
held-out rows after each λ and stops once the CV curve has turned (early stopping),
with the folds in ``n_jobs`` worker processes (or threads) and the path on all rows
walked alongside them; the folds come from ``_folds``, the scores and the choice of λ
from ``_scoring``.

Parallel folds and Ctrl-C. A fold's solve is mostly kernels, but the solver's loop
around them (the sweeps' bookkeeping, the polish's small dense algebra, the KKT checks)
is Python that holds the GIL: on two cores, threads over folds gave 1.6× at best. So
with ``n_jobs > 1`` on Linux the folds run in ``n_jobs`` forked worker processes
(``backend="processes"``): a fork shares the codes and every array copy-on-write, the
folds are dealt to the workers once (fold k to worker k mod n_jobs, which keeps its
prepared problems for the whole walk), and per chunk of λ values only the λ go out
and the held-out scores (K floats) come back. The path on all rows is walked in the
calling process at the same time, λ by λ with its own warm starts, instead of after
the folds. Where ``fork`` is missing (Windows, macOS) or the caller is itself a
daemonic process, daemon worker threads do the same (``backend="threads"``). Both
check a stop flag (threads) or are killed (processes) when the caller is interrupted
(``KeyboardInterrupt``) or a fold raises: pending fold work is dropped and the
exception propagates at once — the interpreter does not wait for folds still inside a
solve. Warnings of the workers are re-issued by the caller.

Every fold is computed independently from its own warm starts, so results do not depend
on ``n_jobs`` or the backend (bit for bit), nor on whether a fold's prepared design is
kept for the whole walk or prepared again for each chunk of λ values (``keep``).
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core._validation import check_n_jobs
from ._folds import Folds
from ._path import PathData, solve_path, strip_eta
from ._scoring import HIGHER_IS_BETTER, best_is_last, curve_turned, select_lambda

__all__ = [
    "CVPath",
    "cross_validate",
    "grid_end_message",
    "resolve_n_jobs",
    "resolve_backend",
    "fork_available",
    "CV_BACKENDS",
    "check_patience",
    "parallel_pays",
    "idle_cores",
]


#: Keep every fold's prepared design for the whole walk below this many bytes; above it,
#: a fold's design is prepared again for each chunk of λ values.
KEEP_BYTES = 1 << 30

#: With ``backend="auto"`` and ``n_jobs > 1``, the folds are solved in the calling
#: process and timed until their solves per λ take at least this many seconds; then
#: the workers start (see :func:`parallel_pays`). Forking the workers and the round
#: trip of λ values and scores per chunk cost milliseconds, but a worker's first solves
#: also pay its copy-on-write page faults, and on two cores the calling process walks
#: the path on all rows beside the workers; ``python -m benchmarks interactive`` reports
#: serial and ``n_jobs=2`` side by side.
PARALLEL_MIN_SECONDS = 0.05


# ---------------------------------------------------------------------------------------
# The data of a path
# ---------------------------------------------------------------------------------------

def check_patience(patience: Any) -> int:
    """The early-stopping patience: a positive integer.

    Parameters
    ----------
    patience : int
        The argument.

    Returns
    -------
    int
        ``patience``.
    """
    if isinstance(patience, bool) or not isinstance(patience, (int, np.integer)):
        raise TypeError(f"patience must be a positive integer; got {patience!r}.")
    if patience < 1:
        raise ValueError(f"patience must be >= 1; got {patience}.")
    return int(patience)

def resolve_n_jobs(n_jobs: Any) -> int:
    """Number of worker threads for ``n_jobs`` (see ``_validation.check_n_jobs``).

    Parameters
    ----------
    n_jobs : int
        Non-zero integer.

    Returns
    -------
    int
        At least 1.
    """
    return check_n_jobs(n_jobs)

class FoldPool:
    """Daemon threads that run one task per fold and are never waited for on errors.

    ``concurrent.futures`` joins its (non-daemon) workers when the pool shuts down and
    again at interpreter exit, so a Ctrl-C waited for every running solve. Here the
    caller sets its stop flag and leaves; a worker finishing its λ sees the flag.
    """

    def __init__(self, workers: int) -> None:
        self._tasks: queue.SimpleQueue = queue.SimpleQueue()
        self._threads = [
            threading.Thread(target=self._work, name=f"binarsity-fold-{i}", daemon=True)
            for i in range(workers)
        ]
        for t in self._threads:
            t.start()

    def _work(self) -> None:
        while True:
            task = self._tasks.get()
            if task is None:
                return
            fn, arg, box, done = task
            try:
                box.append((True, fn(arg)))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                box.append((False, exc))
            done.release()

    def map(self, fn: Callable[[Any], Any], args: Sequence[Any]) -> list:
        boxes: list[list] = [[] for _ in args]
        done = threading.Semaphore(0)
        for arg, box in zip(args, boxes, strict=True):
            self._tasks.put((fn, arg, box, done))
        for _ in args:
            # a timed wait, so that a signal reaches the main thread on every platform
            while not done.acquire(timeout=0.2):
                pass
        out = []
        for box in boxes:
            ok, value = box[0]
            if not ok:
                raise value
            out.append(value)
        return out

    def close(self) -> None:
        for _ in self._threads:
            self._tasks.put(None)

#: Parallel execution of the folds (:func:`cross_validate`'s ``backend``).
CV_BACKENDS = ("auto", "processes", "threads")

def fork_available() -> bool:
    """Whether fold workers can be forked processes (Linux, not inside a daemonic process).

    Returns
    -------
    bool
        True on Linux when the ``fork`` start method exists and the current process may
        have children (a ``multiprocessing`` daemonic worker may not).
    """
    return (
        sys.platform.startswith("linux")
        and "fork" in multiprocessing.get_all_start_methods()
        and not multiprocessing.current_process().daemon
    )

def idle_cores() -> float:
    """Cores this process may use that the machine is not already busy with.

    The usable cores (``os.sched_getaffinity`` where it exists, else ``os.cpu_count``)
    less the one-minute load average, not counting this process itself (one runnable
    task). Where the load average is unknown, all usable cores.
    """
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        return float(cores)
    return float(cores) - max(0.0, load - 1.0)

def parallel_pays(
    fold_seconds: float, n_lambdas: int, workers: int, idle: float | None = None
) -> bool:
    """Whether worker processes (or threads) pay for themselves on this walk.

    The folds are solved serially and timed, chunk by chunk of λ values; the rest of the
    walk goes to ``workers`` workers once the folds' solves per λ take at least
    :data:`PARALLEL_MIN_SECONDS` — below it, starting the workers and the round trip of
    every chunk cost more than they save — and the machine has at least 1.5 idle cores
    (:func:`idle_cores`): on a machine already busy, a second worker only takes turns
    with the first. Results do not depend on the choice (every fold walks from its own
    warm starts, in whichever process).

    Parameters
    ----------
    fold_seconds : float
        Wall seconds the folds' solves took on one chunk, serially (preparing excluded).
    n_lambdas : int
        λ values in that chunk.
    workers : int
        Workers that would be used (``min(n_jobs, folds)``).
    idle : float, optional
        Idle cores (default: :func:`idle_cores` now).

    Returns
    -------
    bool
        True to start the workers.
    """
    if workers <= 1 or n_lambdas <= 0 or fold_seconds / n_lambdas < PARALLEL_MIN_SECONDS:
        return False
    return (idle_cores() if idle is None else idle) >= 1.5

def resolve_backend(backend: Any, n_jobs: int) -> str:
    """The execution of the folds: ``"serial"``, ``"processes"`` or ``"threads"``.

    Parameters
    ----------
    backend : {"auto", "processes", "threads"}
        Requested backend; ``"auto"`` is processes where :func:`fork_available`, else
        threads. A request for processes where fork is missing falls back to threads.
    n_jobs : int
        Workers (1: serial, whatever the backend).

    Returns
    -------
    str
        The backend used.
    """
    if backend not in CV_BACKENDS:
        raise ValueError(f"backend must be one of {CV_BACKENDS}; got {backend!r}.")
    if n_jobs <= 1:
        return "serial"
    if backend in ("auto", "processes") and fork_available():
        return "processes"
    return "threads"

def _die_with_parent(parent_pid: int) -> None:
    """Ask Linux to kill this process when its parent dies (``PR_SET_PDEATHSIG``).

    A worker must never outlive the process that forked it: a parent stopped by Ctrl-C
    between forking and its ``try``, killed, or exiting through a path that skips
    :meth:`_ProcessFolds.kill` would otherwise leave orphans fitting for minutes (and
    holding its stdout/stderr pipes open). Where ``prctl`` is unavailable nothing happens.
    """
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent_pid:  # the parent died before prctl took effect
        os._exit(1)

def _process_worker(
    conn: Any, tasks: Sequence[int], run: Callable, parent_pid: int | None = None
) -> None:
    """A forked fold worker: solve its folds on every chunk of λ it receives.

    It receives an array of λ (None: exit) and answers ``("ok", scores per task,
    warnings)`` or ``("err", exception)``. Ctrl-C is the parent's to handle: the parent
    kills its workers, and the worker dies with its parent whatever the parent's exit.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if parent_pid is not None:
        _die_with_parent(parent_pid)
    from ..design import _gram_stats

    # the workers already fill the cores: the Gram kernels of a fold run on one thread
    _gram_stats.DEFAULT_THREADS = 1
    while True:
        try:
            lams = conn.recv()
        except (EOFError, OSError):
            return
        if lams is None:
            return
        try:
            with warnings.catch_warnings(record=True) as caught:
                out = [run(k, lams) for k in tasks]
            msg = ("ok", out, [(str(w.message), w.category) for w in caught])
        except BaseException as exc:  # noqa: BLE001 - handed to the parent
            msg = ("err", exc)
        try:
            try:
                conn.send(msg)
            except OSError:  # the parent is gone
                return
            except Exception:  # an exception that does not pickle: its text
                exc = msg[1]
                conn.send(("err", RuntimeError(f"{type(exc).__name__}: {exc}")))
        except OSError:
            return
        if msg[0] == "err":
            return

class _ProcessFolds:
    """Forked worker processes, each holding a fixed set of folds for the whole walk.

    Fold k goes to worker k mod ``workers``; a worker keeps the problems it prepared
    (with ``keep``), so only λ values and scores cross the pipes. The parent polls the
    pipes with a timeout so that Ctrl-C reaches it at once, and kills the workers on any
    error.
    """

    def __init__(self, workers: int, tasks: Sequence[int], run: Callable) -> None:
        ctx = multiprocessing.get_context("fork")
        self.parts = [list(tasks[i::workers]) for i in range(workers)]
        self.conns: list[Any] = []
        self.procs: list[Any] = []
        try:
            for i, part in enumerate(self.parts):
                parent, child = ctx.Pipe()
                proc = ctx.Process(
                    target=_process_worker, args=(child, part, run, os.getpid()),
                    name=f"binarsity-fold-{i}", daemon=True,
                )  # fmt: skip
                with warnings.catch_warnings():
                    # Python >= 3.12 warns when a multi-threaded process forks; the
                    # workers only run the solver and their pipe, no other thread's locks
                    warnings.simplefilter("ignore", DeprecationWarning)
                    proc.start()
                child.close()
                self.conns.append(parent)
                self.procs.append(proc)
        except BaseException:
            self.kill()
            raise

    def send(self, lams: np.ndarray) -> None:
        for conn in self.conns:
            conn.send(lams)

    def gather(self) -> dict[int, list[float]]:
        out: dict[int, list[float]] = {}
        for part, conn, proc in zip(self.parts, self.conns, self.procs, strict=True):
            # a timed wait, so that a signal reaches the main thread promptly
            while not conn.poll(0.2):
                if not proc.is_alive() and not conn.poll(0):
                    raise RuntimeError(
                        f"a cross-validation worker process died (exit code {proc.exitcode})."
                    )
            try:
                msg = conn.recv()
            except EOFError:
                raise RuntimeError("a cross-validation worker process died.") from None
            if msg[0] == "err":
                raise msg[1]
            for message, category in msg[2]:
                warnings.warn(message, category, stacklevel=4)
            out.update(zip(part, msg[1], strict=True))
        return out

    def close(self) -> None:
        for conn in self.conns:
            try:
                conn.send(None)
            except OSError:
                pass
        for proc in self.procs:
            proc.join(timeout=1.0)
        self.kill()

    def kill(self) -> None:
        for proc in self.procs:
            if proc.is_alive():
                proc.kill()
        for proc in self.procs:
            proc.join(timeout=1.0)
        for conn in self.conns:
            conn.close()
        self.procs, self.conns = [], []

@dataclass
class CVPath:
    """What :func:`cross_validate` returns.

    Attributes
    ----------
    lams : ndarray of shape (m,)
        The λ values evaluated (the grid, cut where the walk stopped, or extended
        below its end: see ``extended``).
    fold_scores : ndarray of shape (K, m)
        Held-out score of every fold at every λ.
    fold_ids : ndarray of shape (n,) or None
        Fold of every row (see :class:`Folds`).
    grid_size : int
        Length of the grid requested (more than m when the walk stopped early).
    path : list of Solution or None
        Fits on all rows along ``lams`` (None when not asked for).
    mean, se : ndarray of shape (m,)
        Mean score over folds and its standard error.
    idx_min, idx_1se : int
        Positions of ``lam_min`` and ``lam_1se`` in ``lams``.
    folds : Folds or None
        The splits.
    extended : int
        λ values added below the grid's end (``extend``) because the best λ was the
        last one evaluated.
    backend : str
        How the folds ran at the end of the walk: ``"serial"``, ``"processes"`` or
        ``"threads"`` (with ``backend="auto"``, serial while the folds' measured work
        did not pay for workers: :func:`parallel_pays`).
    """

    lams: np.ndarray
    fold_scores: np.ndarray
    fold_ids: np.ndarray | None
    grid_size: int
    path: list | None
    mean: np.ndarray
    se: np.ndarray
    idx_min: int
    idx_1se: int
    folds: Folds | None = None
    extended: int = 0
    backend: str = "serial"

    @property
    def lam_min(self) -> float:
        """λ with the best mean score."""
        return float(self.lams[self.idx_min])

    @property
    def lam_1se(self) -> float:
        """Largest λ whose mean score is within one standard error of the best."""
        return float(self.lams[self.idx_1se])


def _release_working(prep: Any) -> None:
    """Drop a kept problem's working vectors between its solves (if it has them)."""
    release = getattr(getattr(prep, "prob", None), "release_working", None)
    if release is not None:
        release()


def cross_validate(
    data: PathData,
    grid: np.ndarray,
    folds: Any,
    *,
    scoring: str = "deviance",
    opts: dict[str, Any] | None = None,
    fold_opts: dict[str, Any] | None = None,
    n_jobs: int = 1,
    early_stopping: bool = True,
    patience: int = 5,
    keep: bool | None = None,
    refit_path: bool = True,
    prepare: Callable[[np.ndarray | None], Any] | None = None,
    tick: Callable[[], None] | None = None,
    extend: int = 0,
    backend: str = "auto",
) -> CVPath:
    """Cross-validation of a λ grid: the folds walk down it in lockstep.

    Every fold solves the grid from its own warm starts; after each λ the held-out rows
    are scored. With ``early_stopping`` the walk stops once the last ``patience`` mean
    scores are all outside the one-standard-error band of the best so far
    (:func:`curve_turned`); then the fits on all rows (``refit_path``) cover the
    evaluated grid. When the grid is exhausted and its last λ has the best mean score
    (:func:`best_is_last`), up to ``extend`` more values continue it downwards at the
    grid's own ratio, ``patience`` at a time, until the best λ is no longer the last.

    Parameters
    ----------
    data : PathData
        All rows.
    grid : ndarray of shape (m,)
        λ values, decreasing (from all rows).
    folds : Folds or ndarray of shape (n,)
        The splits (:func:`resolve_folds`), or a fold-id array of values 0..K−1
        (:func:`fold_ids`, :func:`group_fold_ids`).
    scoring : {"deviance", "mse", "auc", "concordance"}, default="deviance"
        Held-out criterion (AUC is maximised, the others minimised).
    opts : dict, optional
        ``solver``, ``tol``, ``max_iter`` of the fits on all rows.
    fold_opts : dict, optional
        The same for the fold fits (default: ``opts``).
    n_jobs : int, default=1
        Fold workers (results do not depend on it). The path on all rows is walked
        alongside, in the calling process (or as one more task of the threads).
    early_stopping : bool, default=True
        Stop once the CV curve has turned.
    patience : int, default=5
        λ values outside the band that stop the walk.
    keep : bool, optional
        Keep every fold's prepared problem for the whole walk (True), or prepare a fold
        again for each chunk of ``patience`` λ values (False, bounded memory). Default:
        keep when all folds take at most ``KEEP_BYTES``.
    refit_path : bool, default=True
        Also solve the evaluated grid on all rows (``CVPath.path``).
    prepare : callable, optional
        ``prepare(rows)`` → a problem with ``solve``; default ``data.prepare_fold`` (the
        folds share all rows' arrays), or ``data.prepare``.
    tick : callable, optional
        Called after every solve (a progress bar).
    extend : int, default=0
        At most this many λ values added below the grid's end (0: never).
    backend : {"auto", "processes", "threads"}, default="auto"
        How ``n_jobs > 1`` workers run (see the module docstring): forked processes
        where available, else threads. With ``"auto"`` the folds are solved in this
        process and timed, and the workers start once that work pays for them
        (:func:`parallel_pays`); ``"processes"`` and ``"threads"`` start
        them at once. Results do not depend on it (``CVPath.backend`` says which ran).

    Returns
    -------
    CVPath
        Scores, the evaluated grid, the choice of λ and the path on all rows.
    """
    opts = {} if opts is None else dict(opts)
    fold_opts = opts if fold_opts is None else dict(fold_opts)
    prepare = getattr(data, "prepare_fold", data.prepare) if prepare is None else prepare
    wanted = resolve_backend(backend, int(n_jobs))
    # "auto": the folds run here, timed, until their work pays for workers
    decide = backend == "auto" and wanted != "serial"
    mode = "serial" if decide else wanted
    if not isinstance(folds, Folds):
        folds = Folds.from_fold_ids(folds)
    n_folds = folds.n_folds
    sign = -1.0 if scoring in HIGHER_IS_BETTER else 1.0  # lower sign * score is better
    # a fold's training rows are read when it is prepared (of fold ids, made then)
    held_out, n_train = [], []
    for k in range(n_folds):
        train, test = folds.splits[k]
        held_out.append(data.held_out(test))
        n_train.append(len(train))
        del train
    if keep is None:
        keep = sum(data.fold_bytes(r) for r in n_train) <= KEEP_BYTES
    chunk = 1 if keep else int(patience)
    # task k < K is fold k; task K (with refit_path) the path on all rows, walked with
    # the folds instead of after them (its warm starts are its own: the same fits)
    full = n_folds if refit_path else None
    prepared: list[Any] = [None] * (n_folds + 1)
    warm: list[Any] = [None] * (n_folds + 1)
    path_sols: list[Any] = []
    prepare_seconds = [0.0]  # of the folds, in this process (not part of their solves)
    stop = threading.Event()

    def run_chunk(k: int, lams: np.ndarray, tick: Callable[[], None] | None = None) -> list:
        if stop.is_set():
            return []
        if k == full:
            if prepared[k] is None:  # kept: the full problem is solved once per λ anyway
                prepared[k] = prepare(None)
            path_sols.extend(solve_path(prepared[k], lams, opts, tick, warm_start=warm[k]))
            warm[k] = path_sols[-1] if path_sols else warm[k]
            _release_working(prepared[k])
            return []
        if prepared[k] is not None:
            prep = prepared[k]
        else:
            started = time.perf_counter()
            prep = prepare(folds.splits[k][0])
            prepare_seconds[0] += time.perf_counter() - started
        if keep:
            prepared[k] = prep
        out = []
        for lam in lams:
            if stop.is_set():  # interrupted, or another fold failed: drop the rest
                break
            sol = prep.solve(float(lam), **fold_opts, warm_start=warm[k])
            warm[k] = strip_eta(sol)  # a warm start needs the coefficients only
            if tick is not None:
                tick()
            out.append(data.score(sol, held_out[k], scoring))
        if keep:  # kept until its next λ: without its working vectors (2 per fold)
            _release_working(prep)
        return out

    grid_size = len(grid)
    grid = np.asarray(grid, dtype=np.float64)
    # the grid's own log step continues it (a single value or a zero end cannot)
    ratio = grid[-1] / grid[-2] if grid_size >= 2 and grid[-1] > 0 else 0.0
    extend = int(extend) if 0 < ratio < 1 else 0
    extended = 0
    columns: list[np.ndarray] = []
    workers = min(int(n_jobs), n_folds)
    tasks = list(range(n_folds)) + ([full] if full is not None else [])
    pool: Any = None

    def start_workers() -> Any:
        # forked mid-walk, the workers inherit every fold's warm start
        if mode == "threads":
            return FoldPool(min(int(n_jobs), len(tasks)))
        if mode == "processes":
            return _ProcessFolds(workers, range(n_folds), run_chunk)
        return None

    pool = start_workers()

    def run_block(lams: np.ndarray) -> list:
        nonlocal mode, pool, decide
        if mode == "threads":
            return pool.map(lambda k, lams=lams: run_chunk(k, lams, tick), tasks)[:n_folds]
        if mode == "serial":
            started, prepare_seconds[0] = time.perf_counter(), 0.0
            out = [run_chunk(k, lams, tick) for k in range(n_folds)]
            solve_seconds = time.perf_counter() - started - prepare_seconds[0]
            if full is not None:
                run_chunk(full, lams, tick)
            if decide:  # measured again after every chunk: later λ cost more
                if parallel_pays(solve_seconds, len(lams), workers):
                    decide = False
                    mode = wanted
                    pool = start_workers()
                    if mode == "processes":  # the workers hold the folds' problems now
                        prepared[:n_folds] = [None] * n_folds
            return out
        pool.send(lams)  # the workers solve the folds while this process walks the path
        if full is not None:
            run_chunk(full, lams, tick)
        scores = pool.gather()
        if tick is not None:
            for _ in range(sum(len(v) for v in scores.values())):
                tick()
        return [scores[k] for k in range(n_folds)]

    try:
        first = 0
        while True:
            if first >= len(grid):
                if extended >= extend or not best_is_last(np.column_stack(columns), sign):
                    break
                more = min(int(patience), extend - extended)
                grid = np.concatenate([grid, grid[-1] * ratio ** np.arange(1, more + 1)])
                extended += more
            lams = grid[first : first + chunk]
            first += len(lams)
            block = np.asarray(run_block(lams), dtype=np.float64).reshape(n_folds, len(lams))
            turned = False
            for j in range(len(lams)):
                columns.append(block[:, j])
                if early_stopping and curve_turned(np.column_stack(columns), sign,
                                                   int(patience)):  # fmt: skip
                    turned = True
                    break
            if turned:
                break
    except BaseException:
        stop.set()
        if mode == "processes":
            pool.kill()
            pool = None
        raise
    finally:
        if pool is not None:
            pool.close()
    lams = np.asarray(grid[: len(columns)], dtype=np.float64)
    extended = max(0, len(lams) - grid_size)
    scores = np.column_stack(columns)
    path = path_sols[: len(lams)] if refit_path else None
    mean, se, idx_min, idx_1se = select_lambda(scores, scoring)
    return CVPath(lams, scores, folds.fold_ids, grid_size, path, mean, se, idx_min, idx_1se,
                  folds=folds, extended=extended, backend=mode)  # fmt: skip

def grid_end_message(
    cv: CVPath, scoring: str, *, user_grid: bool, lambda_max: Callable[[], float]
) -> str | None:
    """A warning when the best λ sits at an end of the grid that could have gone further.

    * the smallest λ evaluated is the best (the CV curve was still improving): after
      the automatic extension of a default grid, or with an explicit grid;
    * with an explicit grid, its largest λ is the best and lies below λ_max (larger λ —
      simpler fits — were not tried). A default grid starts at λ_max, where every
      chain is already flat: its top end is never too low.

    Parameters
    ----------
    cv : CVPath
        The result of :func:`cross_validate`.
    scoring : str
        The criterion (for the message).
    user_grid : bool
        Whether the grid was given explicitly (``lams``).
    lambda_max : callable
        Returns λ_max (called only when needed).

    Returns
    -------
    str or None
        The message naming the fix, or None.
    """
    m = len(cv.lams)
    if m < 2:
        return None
    if cv.idx_min == m - 1 and cv.lams[-1] > 0:
        where = (f"after extending the grid by {cv.extended} values" if cv.extended
                 else "the end of the grid")  # fmt: skip
        if user_grid:
            fix = "pass lams reaching further down (or lams=None: the default grid extends itself)"
        else:
            fix = ("pass a smaller lam_min_ratio or lams reaching further down; a CV that "
                   "prefers the least penalised fit may also want finer bins (n_bins)")  # fmt: skip
        return (
            f"lam_min = {cv.lams[-1]:.4g} is the smallest λ evaluated ({where}): the CV "
            f"{scoring} was still improving there, so a smaller λ may be better; {fix}."
        )
    if cv.idx_min == 0 and user_grid:
        lmax = float(lambda_max())
        if cv.lams[0] < lmax * (1 - 1e-9):
            return (
                f"lam_min = {cv.lams[0]:.4g} is the largest λ of lams, below λ_max = "
                f"{lmax:.4g}: larger λ (simpler fits) were not tried; add values up to "
                "λ_max (or pass lams=None for the default grid, which starts there)."
            )
    return None


# ---------------------------------------------------------------------------------------
# Scores and the choice of λ
# ---------------------------------------------------------------------------------------
