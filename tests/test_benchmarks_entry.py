"""``python -m benchmarks`` measures a built ``binarsity_stats`` (issue 15, reproducibility).

Run from the repository root, ``python -m benchmarks …`` would import the source
folder (the current directory heads ``sys.path``), which in a fresh clone has no
compiled kernels. Each test lays out a checkout in ``tmp_path`` (the real ``benchmarks``
package and a copy of the package's sources) and starts ``python -m benchmarks`` from
its root:

* an uncompiled source folder and an installed package: the installed one is used;
* compiled kernels in the source folder (a development build): the checkout's is used;
* an uncompiled source folder and nothing installed: the run stops with the command
  that fixes it (and a non-zero status), instead of measuring a half-imported package.
"""

from __future__ import annotations

import importlib.machinery
import os
import shutil
import subprocess
import sys
from pathlib import Path

import binarsity_stats

REPO = Path(__file__).resolve().parent.parent
INSTALLED = Path(binarsity_stats.__file__).resolve().parent

PROBE = "import benchmarks, binarsity_stats; print(benchmarks.PACKAGE_DIR); " \
    "print(binarsity_stats.__file__)"  # fmt: skip


def _checkout(root: Path, compiled: bool) -> Path:
    shutil.copytree(REPO / "benchmarks", root / "benchmarks",
                    ignore=shutil.ignore_patterns("results", "__pycache__"))  # fmt: skip
    src = root / "binarsity_stats"
    src.mkdir()
    for pattern in ("*.py", "*.pyx", "*.pxd", "*/*.py", "*/*.pyx", "*/*.pxd"):
        for f in INSTALLED.glob(pattern):
            (src / f.relative_to(INSTALLED)).parent.mkdir(exist_ok=True)
            shutil.copy(f, src / f.relative_to(INSTALLED))
    if compiled:
        suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
        for f in (src / "kernels").glob("*.pyx"):
            (f.parent / (f.stem + suffix)).write_bytes(b"")
    return src


def _run(root: Path, *flags: str, pythonpath: Path | None = None):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    return subprocess.run(
        [sys.executable, *flags, "-c", PROBE],
        cwd=root, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def _run_module(root: Path, *flags: str, pythonpath: Path | None = None):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    return subprocess.run(
        [sys.executable, *flags, "-m", "benchmarks", "--help"],
        cwd=root, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_uncompiled_source_folder_gives_way_to_the_installed_package(tmp_path):
    src = _checkout(tmp_path, compiled=False)
    # the tests' package stands for the installed one (after the root on sys.path, as
    # site-packages is)
    proc = _run(tmp_path, pythonpath=INSTALLED.parent)
    assert proc.returncode == 0, proc.stderr
    used = [Path(line).resolve() for line in proc.stdout.split()]
    assert used[0] == INSTALLED
    assert used[1].parent == INSTALLED
    assert src not in (used[0], used[1].parent)
    # and the documented command starts
    proc = _run_module(tmp_path, pythonpath=INSTALLED.parent)
    assert proc.returncode == 0, proc.stderr
    assert "usage: python -m benchmarks" in proc.stdout


def test_a_compiled_checkout_is_measured_as_it_is(tmp_path):
    src = _checkout(tmp_path, compiled=True)
    proc = _run(tmp_path, pythonpath=INSTALLED.parent)
    assert proc.returncode == 0, proc.stderr
    assert Path(proc.stdout.split()[0]).resolve() == src


def test_nothing_built_stops_with_the_install_command(tmp_path):
    _checkout(tmp_path, compiled=False)
    # -S: no site-packages, so no installed (or editable) binarsity_stats anywhere
    proc = _run_module(tmp_path, "-S")
    assert proc.returncode != 0
    assert 'pip install ".[bench]"' in proc.stderr
    assert "no compiled kernels" in proc.stderr
    assert "Traceback" not in proc.stderr
