"""Plumbing shared by the suites: machine facts, timing, tables, output files."""

from __future__ import annotations

import csv
import importlib
import json
import os
import platform
import statistics
import subprocess
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import PACKAGE_DIR

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA_DIR = REPO.parent / "shared" / "data"
DEFAULT_OUT_DIR = REPO / "benchmarks" / "results"

_VERSIONED = (
    "numpy",
    "scipy",
    "pandas",
    "sklearn",
    "tick",
    "lightgbm",
    "interpret",
    "pygam",
    "skglm",
    "cvxpy",
    "glum",
    "sksurv",
    "lifelines",
    "binarsity_stats",
)


def cpu_model() -> str:
    """Return the CPU model name read from ``/proc/cpuinfo`` (or ``platform``)."""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _version(module: str) -> str:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mod = importlib.import_module(module)
    except Exception:  # a broken peer must not stop the report
        return "not importable"
    return str(getattr(mod, "__version__", "unknown"))


def _git_commit() -> str:
    try:
        out = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        )
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def machine_info() -> dict[str, Any]:
    """Collect the facts a reader needs to compare timings across machines.

    Returns
    -------
    dict
        CPU model, logical cores, memory, OS, Python version, the versions of the
        package and of every peer, the git commit of the repository and the date.
    """
    try:
        mem_gb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError):
        mem_gb = float("nan")
    info: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "memory_gb": round(mem_gb, 1),
        "os": platform.platform(),
        "python": platform.python_version(),
        "git_commit": _git_commit(),
        "load_avg_1min": round(os.getloadavg()[0], 2),
    }
    info.update({f"version_{m}": _version(m) for m in _VERSIONED})
    info["binarsity_stats_dir"] = PACKAGE_DIR  # the installed package or the checkout's
    return info


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    """Call ``fn()`` once and return ``(result, wall-clock seconds)``."""
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def median_time(fn: Callable[[], Any], repeats: int) -> tuple[Any, float, list[float]]:
    """Time ``repeats`` calls of ``fn()``.

    Parameters
    ----------
    fn : callable
        Called without arguments; it must redo all the work it is timed for.
    repeats : int
        Number of calls (at least 1).

    Returns
    -------
    result : object
        What the last call returned.
    median : float
        Median wall-clock time in seconds.
    times : list of float
        Every measured time.
    """
    times = []
    out = None
    for _ in range(max(1, repeats)):
        out, t = timed(fn)
        times.append(t)
    return out, statistics.median(times), times


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        if value != value:
            return "—"
        if value == 0:
            return "0"
        if abs(value) >= 1e4 or abs(value) < 1e-3:
            return f"{value:.3e}"
        return f"{value:.6g}" if 0.99 < abs(value) < 1.01 else f"{value:.4g}"
    return str(value)


def markdown_table(rows: Sequence[dict[str, Any]], columns: Sequence[str] | None = None) -> str:
    """Render a list of dicts as a GitHub markdown table.

    Parameters
    ----------
    rows : sequence of dict
        One dict per table row.
    columns : sequence of str, optional
        Columns to show, in order (default: the keys of the first row).

    Returns
    -------
    str
        The table, one line per row, without a trailing newline.
    """
    if not rows:
        return "(no rows)"
    cols = list(columns) if columns is not None else list(rows[0])
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join(" --- " for _ in cols) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(_fmt(row.get(c, "")) for c in cols) + " |")
    return "\n".join(lines)


@dataclass
class SuiteOutput:
    """Collects one suite's rows and writes ``SUITE.{md,csv,json}`` and figures.

    Parameters
    ----------
    suite : str
        Suite name, used as the file stem.
    out_dir : Path
        Output directory (created if needed).
    quick : bool
        Whether the run was a ``--quick`` one (recorded in the outputs).
    command : str
        The command line that produced the results.
    """

    suite: str
    out_dir: Path
    quick: bool
    command: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    machine: dict[str, Any] = field(default_factory=machine_info)

    def add(self, **row: Any) -> dict[str, Any]:
        """Append a result row and return it."""
        self.rows.append(row)
        return row

    def note(self, text: str) -> None:
        """Record a line of free text printed under the table."""
        self.notes.append(text)
        print(f"  note: {text}", flush=True)

    def machine_line(self) -> str:
        """One-line summary of the machine, for figure footers."""
        m = self.machine
        return (
            f"{m['cpu']}, {m['cores']} cores, Python {m['python']}, "
            f"binarsity_stats {m['version_binarsity_stats']} ({m['git_commit']}), "
            f"tick {m['version_tick']}"
        )

    def figure_path(self, stem: str) -> Path:
        """Path of a PNG figure ``SUITE_stem.png`` in the output directory."""
        self.out_dir.mkdir(parents=True, exist_ok=True)
        return self.out_dir / f"{self.suite}_{stem}.png"

    def write(self, columns: Sequence[str] | None = None) -> str:
        """Write CSV, JSON and markdown; print and return the markdown.

        Parameters
        ----------
        columns : sequence of str, optional
            Columns of the printed markdown table (the CSV keeps every column).

        Returns
        -------
        str
            The markdown report.
        """
        self.out_dir.mkdir(parents=True, exist_ok=True)
        all_cols: list[str] = []
        for row in self.rows:
            all_cols.extend(k for k in row if k not in all_cols)
        with open(self.out_dir / f"{self.suite}.csv", "w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=all_cols)
            writer.writeheader()
            writer.writerows(self.rows)
        meta = {"suite": self.suite, "quick": self.quick, "command": self.command}
        meta.update(self.machine)
        with open(self.out_dir / f"{self.suite}_machine.json", "w") as fh:
            json.dump(meta, fh, indent=2)
        m = self.machine
        versions = ", ".join(f"{k[8:]} {v}" for k, v in m.items() if k.startswith("version_"))
        md = [
            f"## `{self.suite}`{' (quick)' if self.quick else ''}",
            "",
            f"Command: `{self.command}`  ",
            f"Machine: {m['cpu']}, {m['cores']} logical cores, {m['memory_gb']} GB, {m['os']}, "
            f"load average at start {m['load_avg_1min']}  ",
            f"Python {m['python']}; {versions}; commit {m['git_commit']}; {m['date']}",
            "",
            markdown_table(self.rows, columns if columns is not None else all_cols),
        ]
        if self.notes:
            md += [""] + [f"* {n}" for n in self.notes]
        text = "\n".join(md) + "\n"
        (self.out_dir / f"{self.suite}.md").write_text(text)
        print(text, flush=True)
        return text


def new_figure(ncols: int = 1, width: float = 6.0, height: float = 4.5):
    """Create a matplotlib figure on the Agg backend.

    Parameters
    ----------
    ncols : int
        Number of side-by-side axes.
    width, height : float
        Size of one panel in inches.

    Returns
    -------
    fig : matplotlib.figure.Figure
    axes : list of matplotlib.axes.Axes
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, ncols, figsize=(width * ncols, height), squeeze=False)
    return fig, list(axes[0])


def save_figure(fig, path: Path, footer: str) -> None:
    """Add a machine footer to ``fig``, save it as PNG and close it."""
    import matplotlib.pyplot as plt

    fig.text(0.01, 0.005, footer, fontsize=6, color="0.4")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig(path, dpi=120)
    plt.close(fig)


def reset_peak_rss() -> bool:
    """Reset the kernel's peak-RSS mark (VmHWM) of this process; False if unsupported."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        return False
    return True


def peak_rss_bytes() -> int:
    """Peak resident size since the last :func:`reset_peak_rss` (else since start)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
