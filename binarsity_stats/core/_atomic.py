"""Files written whole or not at all: a temporary file in the target folder, then a rename.

``report()``, ``save_figure`` and the command line's ``--save`` write through
:func:`write_atomic`: a full disk, a failing writer or Ctrl-C half-way leaves the
destination as it was (an old file intact, or no file) and no temporary file behind.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

__all__ = ["write_atomic"]


def _new_file_mode(path: Path) -> int:
    """The permissions the file would get from a plain ``open``: the old file's, or
    0o666 without the process's umask."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        mask = os.umask(0o022)
        os.umask(mask)
        return 0o666 & ~mask


def write_atomic(path: Any, write: Callable[[IO], Any], binary: bool = False,
                 encoding: str = "utf-8") -> Any:  # fmt: skip
    """Write ``path`` through ``write(fh)`` on a temporary file, then rename it over ``path``.

    Parameters
    ----------
    path : str or path-like
        Destination; its folder must exist.
    write : callable
        Called once with the open temporary file; writes the whole content.
    binary : bool, default=False
        Open the temporary file in binary mode (else text, ``encoding``).
    encoding : str, default="utf-8"
        Text encoding when ``binary`` is False.

    Returns
    -------
    path
        ``path`` as given.

    Raises
    ------
    OSError
        The folder is missing or not writable, the disk is full, ...: the destination is
        unchanged and the temporary file removed. Any exception of ``write`` (also
        ``KeyboardInterrupt``) likewise.
    """
    target = Path(os.fspath(path))
    folder = target.parent if str(target.parent) else Path(".")
    mode = _new_file_mode(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb" if binary else "w",
                       **({} if binary else {"encoding": encoding})) as fh:  # fmt: skip
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path
