"""Command line: ``python -m benchmarks SUITE [--quick] [--data-dir DIR] [--out DIR]``."""

from __future__ import annotations

import argparse
import importlib
import shlex
import sys
from pathlib import Path

from ._common import DEFAULT_DATA_DIR, DEFAULT_OUT_DIR, SuiteOutput
from ._ours import EstimatorMissing

SUITES = (
    "speed",
    "paper",
    "timing",
    "scaling",
    "prox",
    "rate",
    "convergence",
    "families",
    "mapping",
    "bootstrap",
    "inference",
    "selection",
    "cv",
    "dask",
    "coxspeed",
    "results",
    "interactive",
    "nbtheta",
    "pairs",
    "grid",
)

#: Suites whose module is not named after them.
MODULES = {"grid": "grid_step"}


def main(argv: list[str] | None = None) -> int:
    """Parse the command line, run one suite (or ``all``) and return the exit code.

    Parameters
    ----------
    argv : list of str, optional
        Arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        0 on success, 2 when a suite needs a part of binarsity_stats that is missing.
    """
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("suite", choices=(*SUITES, "all"))
    parser.add_argument("--quick", action="store_true", help="small run, < 10 min on 2 cores")
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=DEFAULT_DATA_DIR,
        help="folder with adult.csv, bank.csv, churn.csv (default: ../shared/data)",
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT_DIR, help="output folder")
    parser.add_argument("--repeats", type=int, default=None, help="timing repeats (default 3)")
    parser.add_argument(
        "--only",
        default=None,
        help="comma-separated subset: methods for scaling (ours,tick,lightgbm), "
        "data sets for paper (adult,bank,churn); splits long runs",
    )
    args = parser.parse_args(argv)
    command = "python -m benchmarks " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
    status = 0
    # "all" leaves out "mapping" (a check of tick's objective, not a benchmark); it was
    # SUITES[:-1] when mapping came last, which skipped the suites added after it
    every = tuple(s for s in SUITES if s != "mapping")
    for suite in every if args.suite == "all" else (args.suite,):
        module = importlib.import_module(f"benchmarks.{MODULES.get(suite, suite)}")
        out = SuiteOutput(suite, args.out, args.quick, command)
        try:
            module.run(
                out,
                quick=args.quick,
                data_dir=args.data_dir,
                repeats=args.repeats or 3,
                only=set(args.only.split(",")) if args.only else None,
            )
        except EstimatorMissing as exc:
            print(f"suite {suite!r} cannot run yet: {exc}", file=sys.stderr)
            status = 2
    return status


if __name__ == "__main__":
    sys.exit(main())
