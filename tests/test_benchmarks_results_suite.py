"""``python -m benchmarks results --quick`` runs and records every step it measures.

The suite times and measures the peak memory of what a statistician runs after a fit
(docs/benchmarks.md, "results"). Here at ``--quick`` size (5,000 rows) on a subset of
its steps (one family; not the slow ``report``, ``bootstrap`` and ``fit_cv``): the
command exits 0, writes its table, and every step has a time, a peak and the budget it
is compared with; the generated SQL, run in SQLite, scores as ``predict`` does (to the
17 significant digits it writes).
"""

from __future__ import annotations

import csv
import math
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
STEPS = ("fit", "summary", "to_sql", "refit", "get_prediction", "cli_predict")


def test_results_suite_quick_records_time_and_memory_of_each_step(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks", "results", "--quick",
         "--only", ",".join(("binomial",) + STEPS), "--out", str(tmp_path)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (tmp_path / "results.md").is_file()
    assert (tmp_path / "results_machine.json").is_file()
    with open(tmp_path / "results.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["step"] for r in rows] == list(STEPS)
    for row in rows:
        assert row["family"] == "binomial" and int(row["n"]) == 5_000
        assert not row.get("error"), row
        seconds = float(row["seconds"])
        assert math.isfinite(seconds) and seconds > 0
        assert math.isfinite(float(row["peak_mb"]))
        assert float(row["frame_mb"]) > 0 and float(row["design_mb"]) > 0
        assert math.isfinite(float(row["x_unit"]))
    by_step = {r["step"]: r for r in rows}
    assert float(by_step["fit"]["x_fit"]) == 1.0
    assert int(by_step["refit"]["columns"]) >= 2  # intercept and a segment at least
    assert int(by_step["get_prediction"]["rows"]) == 5_000
    assert float(by_step["to_sql"]["sql_vs_predict"]) <= 1e-9


def test_results_suite_refuses_an_unknown_only_entry(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks", "results", "--quick", "--only", "binomail",
         "--out", str(tmp_path)],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode != 0
    assert "binomail" in proc.stderr and "not a family" in proc.stderr
    assert "Traceback" not in proc.stderr
