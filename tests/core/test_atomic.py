"""Unit tests of ``binarsity_stats.core._atomic.write_atomic``: a file is written whole
or not at all, with a plain ``open``'s permissions, and no temporary file is left."""

from __future__ import annotations

import os
import stat

import pytest

from binarsity_stats.core._atomic import write_atomic


def _listing(folder):
    return sorted(p.name for p in folder.iterdir())


def test_writes_text_and_returns_the_path_as_given(tmp_path):
    target = tmp_path / "out.txt"
    ret = write_atomic(str(target), lambda fh: fh.write("héllo\n"))
    assert ret == str(target)
    assert target.read_bytes() == "héllo\n".encode()
    assert _listing(tmp_path) == ["out.txt"]


def test_writes_binary_and_other_encodings(tmp_path):
    b = tmp_path / "b.bin"
    write_atomic(b, lambda fh: fh.write(b"\x00\xff"), binary=True)
    assert b.read_bytes() == b"\x00\xff"
    t = tmp_path / "t.txt"
    write_atomic(t, lambda fh: fh.write("é"), encoding="latin-1")
    assert t.read_bytes() == b"\xe9"


def test_replaces_an_existing_file(tmp_path):
    target = tmp_path / "a.txt"
    target.write_text("old")
    write_atomic(target, lambda fh: fh.write("new"))
    assert target.read_text() == "new"
    assert _listing(tmp_path) == ["a.txt"]


@pytest.mark.parametrize("exc", [RuntimeError("disk full"), KeyboardInterrupt()])
def test_a_failing_writer_leaves_the_old_file_and_no_temporary(tmp_path, exc):
    target = tmp_path / "a.txt"
    target.write_text("old")

    def write(fh):
        fh.write("half of the new cont")
        raise exc

    with pytest.raises(type(exc)):
        write_atomic(target, write)
    assert target.read_text() == "old"
    assert _listing(tmp_path) == ["a.txt"]


def test_a_failing_writer_creates_no_file(tmp_path):
    target = tmp_path / "new.txt"
    with pytest.raises(ValueError, match="boom"):
        write_atomic(target, lambda fh: (_ for _ in ()).throw(ValueError("boom")))
    assert _listing(tmp_path) == []


def test_a_missing_folder_is_an_os_error(tmp_path):
    with pytest.raises(OSError):
        write_atomic(tmp_path / "nope" / "a.txt", lambda fh: fh.write("x"))
    assert _listing(tmp_path) == []


def test_a_relative_path_writes_in_the_current_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_atomic("rel.txt", lambda fh: fh.write("x"))
    assert (tmp_path / "rel.txt").read_text() == "x"
    assert _listing(tmp_path) == ["rel.txt"]


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_a_new_file_gets_plain_open_permissions(tmp_path):
    old = os.umask(0o027)
    try:
        write_atomic(tmp_path / "atomic.txt", lambda fh: fh.write("x"))
        with open(tmp_path / "plain.txt", "w") as fh:  # the reference: a plain open
            fh.write("x")
    finally:
        os.umask(old)
    mode = stat.S_IMODE(os.stat(tmp_path / "atomic.txt").st_mode)
    assert mode == stat.S_IMODE(os.stat(tmp_path / "plain.txt").st_mode) == 0o640


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_an_existing_file_keeps_its_permissions(tmp_path):
    target = tmp_path / "a.txt"
    target.write_text("old")
    os.chmod(target, 0o604)
    write_atomic(target, lambda fh: fh.write("new"))
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o604
