"""Command line: ``python -m binarsity_stats {fit,demo}``.

``fit FORMULA --data FILE.csv --family F [--cv K] [--plots DIR]`` fits a binarsity GLM
(at ``--lam``, by default the theory λ, or tuned by K-fold CV) and prints the summary,
the cut-points kept and the selected terms; ``--plots DIR`` writes the shape functions
and the CV curve (or the path) as PNG files.

``demo`` does the same on statsmodels' ``fair`` data set (a binomial model of whether a
woman had an extramarital affair, 10-fold CV).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["main", "build_parser"]

_FIT_EPILOG = """\
formula terms:
  bin(x, n_bins)          binned, total-variation penalised feature (cut points learned
                          on the data and replayed at predict time)
  C(x)                    unpenalised categorical (a bare text column is read as C(x))
  x, log(x), x:z          unpenalised linear terms
  offset(log(exposure))   offset with coefficient one
  - 1                     no intercept, as in R: the first bin() or C() term then
                          has one free level per category (they absorb the intercept)

examples:
  python -m binarsity_stats fit "y ~ bin(age) + bin(income, 20) + C(region)" \\
      --data data.csv --family binomial --cv 10 --plots out/
  python -m binarsity_stats fit "claims ~ bin(age) + offset(log(exposure))" \\
      --data claims.csv --family poisson --lam 0.001
"""


def _lam(value: str) -> float | str:
    if value == "theory":
        return value
    try:
        lam = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--lam must be a number >= 0 or 'theory'; got {value!r}"
        ) from None
    if lam < 0:
        raise argparse.ArgumentTypeError(f"--lam must be >= 0; got {value!r}")
    return lam


def _precision(value: str) -> int:
    try:
        digits = int(value)
    except ValueError:
        digits = 0
    if not 1 <= digits <= 17:
        raise argparse.ArgumentTypeError(f"--precision must be an integer 1..17; got {value!r}")
    return digits


def _add_common(p: argparse.ArgumentParser, default_cv: int | None) -> None:
    p.add_argument(
        "--cv", type=int, default=default_cv, metavar="K",
        help="tune lambda by K-fold cross-validation"
        + (f" (default {default_cv})" if default_cv else " (default: fit at --lam)"),
    )  # fmt: skip
    p.add_argument(
        "--scoring", choices=("deviance", "mse", "auc"), default="deviance",
        help="CV criterion (default deviance; auc needs binomial)",
    )  # fmt: skip
    p.add_argument(
        "--select", choices=("lam_min", "lam_1se"), default="lam_min",
        help="which CV lambda to report (default lam_min)",
    )  # fmt: skip
    p.add_argument("--n-lambdas", type=int, default=50, help="size of the lambda grid (50)")
    p.add_argument("--random-state", type=int, default=0, help="seed of the CV folds (0)")
    p.add_argument("--n-jobs", type=int, default=1, help="CV folds run in parallel threads")
    p.add_argument("--plots", type=Path, metavar="DIR", help="write PNG plots to DIR")
    p.add_argument(
        "--precision", type=_precision, default=None, metavar="DIGITS",
        help="significant digits of cut points and bin labels (default 6)",
    )  # fmt: skip
    p.add_argument("--verbose", action="store_true", help="show a progress bar")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m binarsity_stats``.

    Returns
    -------
    argparse.ArgumentParser
        The parser with the ``fit`` and ``demo`` subcommands.
    """
    parser = argparse.ArgumentParser(
        prog="python -m binarsity_stats",
        description="Interpretable GLMs on binned features under the binarsity penalty "
        "(Alaya, Bussy, Gaiffas & Guilloux, JMLR 2019).",
    )
    sub = parser.add_subparsers(dest="command", metavar="{fit,demo}")
    sub.required = True
    fit = sub.add_parser(
        "fit",
        help="fit a binarsity GLM from a formula and a CSV file",
        description="Fit a binarsity GLM and print the summary, the cut-points kept and "
        "the selected terms.",
        epilog=_FIT_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    fit.add_argument("formula", help='R-style formula, e.g. "y ~ bin(age) + C(sex)"')
    fit.add_argument("--data", required=True, type=Path, help="CSV file with a header row")
    fit.add_argument(
        "--family", default="gaussian", choices=("gaussian", "binomial", "poisson"),
        help="distribution with its canonical link (default gaussian)",
    )  # fmt: skip
    fit.add_argument(
        "--lam", type=_lam, default="theory",
        help="lambda when --cv is not given: a number or 'theory' (default)",
    )  # fmt: skip
    fit.add_argument("--n-bins", type=int, default=50, help="bins of bin(x) terms (50)")
    fit.add_argument(
        "--penalty-weights", choices=("theory", "uniform"), default="theory",
        help="penalty weights omega (default theory)",
    )  # fmt: skip
    fit.add_argument(
        "--missing", choices=("error", "separate"), default="error",
        help="NaN in bin()/C() columns: error, or a level of its own",
    )  # fmt: skip
    fit.add_argument("--weights", metavar="COLUMN", help="column of sample weights")
    fit.add_argument("--offset", metavar="COLUMN", help="column added to the linear predictor")
    _add_common(fit, None)
    demo = sub.add_parser(
        "demo",
        help="binomial binarsity model with CV on statsmodels' fair data",
        description="Fit 'affairs > 0' on statsmodels' fair data set (6,366 rows) with a "
        "binarsity logistic model tuned by 10-fold CV; print the summary, the cut-points "
        "and the selected features.",
    )
    _add_common(demo, 10)
    return parser


def _report(model: Any, args: argparse.Namespace, out) -> Any:
    """Fit as asked, print the report, write plots; return the results."""
    t0 = time.perf_counter()
    cv = None
    if args.cv:
        cv = model.fit_cv(
            folds=args.cv, scoring=args.scoring, random_state=args.random_state,
            n_jobs=args.n_jobs, verbose=args.verbose, n_lambdas=args.n_lambdas,
        )  # fmt: skip
        res = cv.results(args.select)
    else:
        res = model.fit(lam=args.lam)
    elapsed = time.perf_counter() - t0
    print(res.summary(precision=args.precision), file=out)
    if cv is not None:
        print(
            f"\nCross-validation ({cv.folds} folds, {cv.scoring}): lam_min = "
            f"{cv.lam_min:.4g}, lam_1se = {cv.lam_1se:.4g}; reported: {args.select}.",
            file=out,
        )
        other = "lam_1se" if args.select == "lam_min" else "lam_min"
        alt = cv.results(other)
        print(
            f"At {other} = {alt.lam:.4g}: {alt.n_jumps} cut-points kept, df = {alt.df}, "
            f"selected: {', '.join(alt.selected_terms()) or '(none)'}.",
            file=out,
        )
    selected = res.selected_terms()
    print("\nSelected terms: " + (", ".join(selected) if selected else "(none)"), file=out)
    print(f"\nFit time: {elapsed:.2f} s", file=out)
    if args.plots is not None:
        _write_plots(res, cv, model, args, out)
    return res


def _write_plots(res: Any, cv: Any, model: Any, args: argparse.Namespace, out) -> None:
    os.environ.setdefault("MPLBACKEND", "Agg")
    from ._plotting import save_figure

    args.plots.mkdir(parents=True, exist_ok=True)
    written = []
    if model.spec.blocks:
        written.append(save_figure(res.plot_shapes(), args.plots / "shapes.png"))
    if cv is not None:
        written.append(save_figure(cv.plot(), args.plots / "cv.png"))
        written.append(save_figure(cv.path.plot(), args.plots / "path.png"))
    print("Plots written: " + ", ".join(str(p) for p in written), file=out)


def _run_fit(args: argparse.Namespace, out) -> int:
    import pandas as pd

    from ._model import glm

    if not args.data.is_file():
        raise ValueError(f"--data {args.data}: no such file.")
    data = pd.read_csv(args.data)
    model = glm(
        args.formula, data, family=args.family, sample_weight=args.weights,
        offset=args.offset, n_bins=args.n_bins, penalty_weights=args.penalty_weights,
        missing=args.missing,
    )  # fmt: skip
    _report(model, args, out)
    return 0


def _run_demo(args: argparse.Namespace, out) -> int:
    from ._datasets import FAIR_FORMULA, load_fair
    from ._model import glm

    data = load_fair()
    print(
        "Demo: statsmodels' fair data (Fair 1978; 6,366 married women). Event: time "
        "spent in extramarital affairs > 0.\n"
        f"Formula: {FAIR_FORMULA}\n",
        file=out,
    )
    model = glm(FAIR_FORMULA, data, family="binomial")
    _report(model, args, out)
    return 0


def main(argv: list[str] | None = None, out=None) -> int:
    """Run the command line.

    Parameters
    ----------
    argv : list of str, optional
        Arguments (default ``sys.argv[1:]``).
    out : file-like, optional
        Where the report goes (default stdout).

    Returns
    -------
    int
        Exit status: 0 on success, 2 on a usage or data error.
    """
    out = sys.stdout if out is None else out
    args = build_parser().parse_args(argv)
    try:
        if args.command == "fit":
            return _run_fit(args, out)
        return _run_demo(args, out)
    except (ValueError, TypeError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
