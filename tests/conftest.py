"""Shared fixtures: a throwaway PostgreSQL server for the SQL export tests.

``postgres`` (session scope) runs ``initdb`` into a fresh directory under the system's
temporary folder and ``pg_ctl start`` on a Unix socket in it (no TCP port: nothing
listens on the network), as an unprivileged user when the tests run as root (the
``postgres`` system user if it exists, else ``nobody``: PostgreSQL refuses to run as
root), and stops and removes it at the end of the session. The binaries are found in
``$BINARSITY_POSTGRES_BINDIR``, on ``PATH`` or in Debian's
``/usr/lib/postgresql/<version>/bin``. Where they (or the
``psycopg`` driver) are missing the tests using it are skipped with the reason, unless
``BINARSITY_REQUIRE_POSTGRES=1`` (``.ci/run`` sets it, after installing PostgreSQL),
where they fail instead.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import tempfile

import pytest

_REQUIRE = "BINARSITY_REQUIRE_POSTGRES"


def _missing(reason: str) -> None:
    if os.environ.get(_REQUIRE) == "1":
        pytest.fail(f"{_REQUIRE}=1 but {reason}")
    pytest.skip(f"{reason} (.ci/run installs PostgreSQL and sets {_REQUIRE}=1)")


def _postgres_bindir() -> str | None:
    """The folder holding ``initdb`` and ``pg_ctl``: ``$BINARSITY_POSTGRES_BINDIR`` if
    set, else PATH, else Debian's layout (the newest version)."""
    if os.environ.get("BINARSITY_POSTGRES_BINDIR"):
        bindir = os.environ["BINARSITY_POSTGRES_BINDIR"]
        ok = all(os.access(os.path.join(bindir, b), os.X_OK) for b in ("initdb", "pg_ctl"))
        return bindir if ok else None
    found = [os.path.dirname(p) for p in (shutil.which("initdb"), shutil.which("pg_ctl")) if p]
    if len(found) == 2 and found[0] == found[1]:
        return found[0]

    def version(path: str) -> tuple[int, ...]:
        return tuple(int(v) for v in re.findall(r"\d+", path.split("/")[-2]))

    for bindir in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=version, reverse=True):
        if all(os.access(os.path.join(bindir, b), os.X_OK) for b in ("initdb", "pg_ctl")):
            return bindir
    return None


class PostgresServer:
    """A running throwaway server: ``connect()`` gives a psycopg connection to it."""

    def __init__(self, bindir: str, user: str | None) -> None:
        self.bindir, self.user = bindir, user
        # the server's user must reach its folder: /tmp itself, not a private $TMPDIR
        base = "/tmp" if user is not None and os.path.isdir("/tmp") else None
        self.root = tempfile.mkdtemp(prefix="binarsity-pg-", dir=base)
        self.data = os.path.join(self.root, "data")
        self.log = os.path.join(self.root, "server.log")
        if user is not None:  # the server's own user owns its folder
            shutil.chown(self.root, user=user)
        self._run("initdb", "-D", self.data, "-U", "binarsity", "-A", "trust", "-E", "UTF8",
                  "--locale=C", "--no-sync", "--no-instructions")  # fmt: skip
        options = (f"-k {self.root} -c listen_addresses='' -F -c shared_buffers=16MB "
                   "-c max_connections=20")  # fmt: skip
        self._run("pg_ctl", "-D", self.data, "-l", self.log, "-o", options, "-w", "-t", "60",
                  "start")  # fmt: skip
        self.version = None
        with self.connect() as con:
            self.version = con.execute("SHOW server_version").fetchone()[0]

    def _run(self, program: str, *args: str) -> None:
        cmd = [os.path.join(self.bindir, program), *args]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=self.root,
                             user=self.user, env={**os.environ, "LC_ALL": "C"})  # fmt: skip
        if out.returncode != 0:
            log = ""
            if os.path.exists(self.log):
                with open(self.log, encoding="utf-8", errors="replace") as f:
                    log = f.read()[-2000:]
            raise RuntimeError(f"{program} failed ({out.returncode}): {out.stderr[-2000:]}{log}")

    def connect(self):
        import psycopg

        return psycopg.connect(host=self.root, user="binarsity", dbname="postgres",
                               autocommit=True)  # fmt: skip

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres():
    """A throwaway PostgreSQL server for the session (skips, or fails when required)."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        _missing("the psycopg driver is not installed (pip install 'psycopg[binary]')")
    bindir = _postgres_bindir()
    if bindir is None:
        _missing("no PostgreSQL server binaries (initdb, pg_ctl) were found")
    user = None
    if os.geteuid() == 0:  # postgres refuses to run as root
        import pwd

        for name in ("postgres", "nobody"):
            try:
                pwd.getpwnam(name)
            except KeyError:
                continue
            user = name
            break
        else:
            _missing("running as root and neither a 'postgres' nor a 'nobody' user exists")
    server = PostgresServer(bindir, user)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(autouse=True)
def _fold_workers_on_small_data(monkeypatch):
    """Tests that ask for ``n_jobs > 1`` get workers whatever their data's size.

    With ``backend="auto"`` cross-validation starts workers only once the folds' measured
    work pays for them (``_cv.parallel_pays``); the suite's data are small, so without
    this its ``n_jobs=2`` tests would compare the serial walk with itself. Here workers
    start after the first chunk of λ values. The rule itself is tested in
    ``tests/engine/test_cv.py`` (which sets its own values).
    """
    from binarsity_stats.engine import _cv

    monkeypatch.setattr(_cv, "PARALLEL_MIN_SECONDS", 0.0)
    monkeypatch.setattr(_cv, "idle_cores", lambda: 2.0)


class GatherRecord:
    """What reached the Dask client: the pickled size of every object gathered once
    :meth:`arm` has guarded the client.

    ``sizes`` lists them; :meth:`size_of` is the same measure for any object (a model or
    results held by the client).
    """

    def __init__(self, monkeypatch) -> None:
        self.sizes: list[int] = []
        self._monkeypatch = monkeypatch

    @staticmethod
    def size_of(obj) -> int:
        import pickle

        return len(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))

    def arm(self) -> list[int]:
        """From now on the functions that gather partitions raise, and every
        ``Client.gather`` is recorded; returns ``sizes``."""
        import distributed

        from binarsity_stats.distributed import _dask, _dask_model

        def gathering(*args, **kwargs):
            raise AssertionError("the partitions were gathered to the client")

        patch = self._monkeypatch.setattr
        patch(_dask_model, "collect_design", gathering)
        patch(_dask_model, "concat_partitions", gathering)
        patch(_dask, "concat_partitions", gathering)
        gather = distributed.Client.gather

        def recording(client, futures, *args, **kwargs):
            out = gather(client, futures, *args, **kwargs)
            self.sizes.extend(self.size_of(x) for x in (out if isinstance(out, list) else [out]))
            return out

        patch(distributed.Client, "gather", recording)
        return self.sizes


@pytest.fixture
def client_gathers(monkeypatch):
    """A guard against rows reaching the Dask client (issue 26): :class:`GatherRecord`,
    armed by the test where its computation starts."""
    pytest.importorskip("distributed")
    return GatherRecord(monkeypatch)
