"""Unit tests of ``binarsity_stats/__main__.py``: ``python -m binarsity_stats`` runs the
command line (``_cli.main``) and exits with its status; importing the module runs nothing.

Each test starts a child interpreter on the very package this test imported (installed or
built in place), from a temporary directory, so that the source tree's uncompiled folder
cannot shadow it. The commands themselves are tested in ``tests/test_cli*.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import binarsity_stats

#: The folder that holds the imported package (never the repository root as such).
IMPORTED = Path(binarsity_stats.__file__).resolve().parents[1]


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(IMPORTED))
    return subprocess.run([sys.executable, *args], capture_output=True, text=True,
                          timeout=120, cwd=cwd, env=env)  # fmt: skip


def test_help_exits_0_with_the_usage_and_the_commands(tmp_path):
    proc = _run(["-m", "binarsity_stats", "--help"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: python -m binarsity_stats ")
    for command in ("fit", "predict", "report", "demo"):
        assert f"\n    {command} " in proc.stdout, command
    assert proc.stderr == ""


def test_a_bad_command_exits_2_with_one_error_line_and_no_traceback(tmp_path):
    proc = _run(["-m", "binarsity_stats", "frobnicate"], tmp_path)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1, proc.stderr
    assert "invalid choice: 'frobnicate'" in errors[0]
    # the rest of stderr is argparse's usage line
    rest = [line for line in proc.stderr.splitlines() if line not in errors]
    assert rest and all(line.startswith("usage: ") or line.startswith(" ") for line in rest)


def test_no_command_exits_2_naming_the_commands(tmp_path):
    proc = _run(["-m", "binarsity_stats"], tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "error: the following arguments are required: {fit,predict,report,demo}" in proc.stderr


def test_the_status_main_returns_is_the_exit_status(tmp_path):
    # a data error is not argparse's exit: main() returns 2, which __main__ must pass on
    proc = _run(["-m", "binarsity_stats", "fit", "y ~ bin(x)", "--data", "absent.csv"], tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1
    assert "absent.csv" in proc.stderr


def test_importing_the_module_runs_nothing(tmp_path):
    # the main() call is guarded by __name__ == "__main__"
    proc = _run(["-c", "import binarsity_stats.__main__ as m; print(m.main.__module__)"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "binarsity_stats._cli\n" and proc.stderr == ""
