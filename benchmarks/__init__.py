"""Reproducible benchmarks of binarsity_stats against its peers and the paper.

Run a suite with ``python -m benchmarks SUITE [--quick] [--data-dir DIR] [--out DIR]``
from the repository root. One module per suite:

* :mod:`benchmarks.speed` — issue 2's speed target, ours vs tick at equal objective;
* :mod:`benchmarks.paper` — the paper's real-data protocol (AUC and training time);
* :mod:`benchmarks.timing` — the paper's computing-time figure (p grows);
* :mod:`benchmarks.scaling` — n from 1e4 to 1e7: time, peak memory, log-log slope;
* :mod:`benchmarks.prox` — the binarsity prox alone, and its error against cvxpy;
* :mod:`benchmarks.rate` — Theorem 2's n^{-2/3} prediction-error rate;
* :mod:`benchmarks.families` — the generic statsmodels-family path vs the Cython kernels;
* :mod:`benchmarks.cv` — 10-fold CV + refit vs EBM main effects, parallel folds;
* :mod:`benchmarks.mapping` — evidence that tick minimises our objective at λ = 1/C.
* :mod:`benchmarks.results` — every statistic after a fit (summary, refit, intervals,
  bootstrap, report, SQL, CLI predict, CV) at 1e5 and 1e6 rows: time and peak memory.

Results (markdown, CSV, PNG, machine facts) go to ``benchmarks/results/`` (git-ignored).

Which ``binarsity_stats`` is measured: importing this package imports it first
(:func:`import_measured_package`): the repository's source folder when its kernels are
compiled (a development checkout), else the installed package — never the uncompiled
source folder that ``python -m benchmarks`` would otherwise find first from the
repository root. Every suite's ``SUITE_machine.json`` records the folder used.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
_SOURCE = _ROOT / "binarsity_stats"


def _is_compiled(folder: Path) -> bool:
    """Whether every Cython kernel of a ``binarsity_stats`` folder has its extension."""
    kernels = folder / "kernels"
    stems = [p.stem for p in kernels.glob("*.pyx")]
    suffixes = importlib.machinery.EXTENSION_SUFFIXES
    return bool(stems) and all(
        any((kernels / (stem + suffix)).exists() for suffix in suffixes) for stem in stems
    )


def _is_root(entry: str) -> bool:
    try:
        return Path(entry or ".").resolve() == _ROOT
    except OSError:  # pragma: no cover - an unreadable path entry
        return False


def import_measured_package() -> str:
    """Import the ``binarsity_stats`` the benchmarks measure; return where it lives.

    Run from the repository root, ``import binarsity_stats`` would find the source
    folder first (the current directory heads ``sys.path``). That folder is used only
    when its Cython kernels are compiled (``pip install -e .`` or ``python setup.py
    build_ext --inplace``: a development checkout). Otherwise — a fresh clone with
    ``pip install ".[bench]"`` — the installed package is imported, with the
    repository root left out of the search. With neither, the run stops with the
    command that fixes it. Called once, when ``benchmarks`` is imported.

    Returns
    -------
    str
        The folder of the imported package.
    """
    module = sys.modules.get("binarsity_stats")
    if module is None:
        if _SOURCE.is_dir() and not _is_compiled(_SOURCE):
            saved = sys.path[:]
            sys.path[:] = [entry for entry in saved if not _is_root(entry)]
            try:
                spec = importlib.util.find_spec("binarsity_stats")
                origin = None if spec is None or spec.origin is None else Path(spec.origin)
                if origin is None or origin.resolve().parent == _SOURCE:
                    raise SystemExit(
                        "benchmarks: binarsity_stats is not installed and the source folder "
                        f"{_SOURCE} has no compiled kernels. Install it first: "
                        'pip install ".[bench]" (or, in a development checkout, '
                        "python setup.py build_ext --inplace)."
                    )
                module = importlib.import_module("binarsity_stats")
            finally:
                sys.path[:] = saved
        else:
            module = importlib.import_module("binarsity_stats")
    return str(Path(module.__file__).resolve().parent)


PACKAGE_DIR = import_measured_package()
