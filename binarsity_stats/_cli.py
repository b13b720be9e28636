"""Command line: ``python -m binarsity_stats {fit,report,demo}``.

``fit FORMULA --data FILE.csv --family F [--cv K] [--plots DIR]`` fits a binarsity GLM
(at ``--lam``, by default the theory λ, or tuned by K-fold CV) and prints the summary,
the cut-points kept and the selected terms; ``--plots DIR`` writes the shape functions
and the CV curve (or the path) as PNG files.

``report FORMULA --data FILE.csv [fit's options] [--output FILE.html] [--bootstrap B]
[--new TEST.csv]`` fits in the same way and writes the self-contained HTML report of the
fit (``res.report``), with bootstrap bands and cut-point frequencies when ``--bootstrap``
is given and calibration on ``--new`` rows when given.

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


_REPORT_EPILOG = """\
examples:
  python -m binarsity_stats report "y ~ bin(age) + C(region)" --data train.csv \\
      --family binomial --cv 10 --bootstrap 200 --new test.csv -o model.html
"""


def _n_boot(value: str) -> int:
    try:
        b = int(value)
    except ValueError:
        b = 0
    if b < 2:
        raise argparse.ArgumentTypeError(
            f"--bootstrap must be an integer >= 2 (the number of resamples); got {value!r}"
        )
    return b


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


def _folds(value: str) -> int:
    try:
        k = int(value)
    except ValueError:
        k = 0
    if k < 2:
        raise argparse.ArgumentTypeError(
            f"--cv must be an integer >= 2 (the number of folds); got {value!r}"
        )
    return k


def _add_common(p: argparse.ArgumentParser, default_cv: int | None) -> None:
    p.add_argument(
        "--cv", type=_folds, default=default_cv, metavar="K",
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
    sub = parser.add_subparsers(dest="command", metavar="{fit,report,demo}")
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
        "--sep", default=None,
        help="field separator of --data, e.g. ';' or tab (default: detected from the header "
        "among , ; tab |)",
    )  # fmt: skip
    fit.add_argument("--encoding", default="utf-8", help="text encoding of --data (default utf-8)")
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
        "--penalty-weights", choices=("theory", "uniform", "balanced"), default="balanced",
        help="penalty weights omega (default balanced)",
    )  # fmt: skip
    fit.add_argument(
        "--missing", choices=("error", "separate"), default="error",
        help="NaN in bin()/C() columns: error, or a level of its own",
    )  # fmt: skip
    fit.add_argument("--weights", metavar="COLUMN", help="column of sample weights")
    fit.add_argument(
        "--weights-kind", choices=("analytic", "freq"), default="analytic",
        help="what --weights means: analytic (precision) weights, the default, or "
        "frequencies (row counts)",
    )  # fmt: skip
    fit.add_argument("--offset", metavar="COLUMN", help="column added to the linear predictor")
    _add_common(fit, None)
    # every fit option, then the page's own (the flags are fit's, not copies)
    rep = sub.add_parser(
        "report",
        parents=[fit],
        add_help=False,
        help="fit as 'fit' does and write the self-contained HTML report",
        description="Fit a binarsity GLM as 'fit' does and write one self-contained HTML "
        "page: the data and the model, the summary, the shape plots, the cut-points (with "
        "their bootstrap frequencies with --bootstrap), the CV curve (with --cv), "
        "calibration (on --new rows when given) and the versions.",
        epilog=_REPORT_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    rep.add_argument(
        "-o", "--output", type=Path, default=Path("report.html"), metavar="FILE",
        help="the HTML file to write (default report.html)",
    )  # fmt: skip
    rep.add_argument(
        "--bootstrap", type=_n_boot, default=0, metavar="B",
        help="bootstrap the fit with B resamples: bands, cut-point frequencies (default: none)",
    )  # fmt: skip
    rep.add_argument(
        "--new", type=Path, metavar="FILE",
        help="CSV of held-out rows (with the response column) for the calibration section",
    )  # fmt: skip
    rep.add_argument("--title", help="title of the page (default: the formula)")
    rep.add_argument(
        "--scale", choices=("link", "response"), default="link",
        help="scale of the shape plots: link, or response (odds/rate ratios)",
    )  # fmt: skip
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


_SEPARATORS = {",": "','", ";": "';'", "\t": "tab", "|": "'|'"}


def _detect_sep(header: str) -> str:
    """The separator of a header line: the most frequent of , ; tab | (comma on a tie)."""
    counts = {sep: header.count(sep) for sep in _SEPARATORS}
    best = max(counts, key=lambda sep: (counts[sep], sep == ","))
    return best if counts[best] > 0 else ","


def _read_data(path: Path, sep: str | None, encoding: str):
    """Read the --data file; every failure is a ValueError naming the file."""
    import pandas as pd

    if path.is_dir():
        raise ValueError(f"--data {path} is a directory; give a CSV file.")
    if not path.is_file():
        raise ValueError(f"--data {path}: no such file.")
    try:
        "".encode(encoding)
    except LookupError:
        raise ValueError(f"--encoding {encoding!r} is not a known text encoding.") from None
    try:
        with open(path, encoding=encoding, newline="") as fh:
            header = fh.readline()
    except UnicodeDecodeError as exc:
        raise ValueError(_not_decoded(path, encoding, exc)) from None
    if not header.strip():
        raise ValueError(f"--data {path} is empty (no header row).")
    detected = sep is None
    if detected:
        sep = _detect_sep(header)
    else:
        sep = {"\\t": "\t", "tab": "\t"}.get(sep, sep)  # '\t' as typed in a shell
    try:
        data = pd.read_csv(path, sep=sep, encoding=encoding)
    except UnicodeDecodeError as exc:
        raise ValueError(_not_decoded(path, encoding, exc)) from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise ValueError(f"--data {path} could not be read as CSV: {exc}".strip()) from None
    if len(data) == 0:
        raise ValueError(f"--data {path} has a header row but no data rows.")
    if data.shape[1] == 1:
        others = [name for c, name in _SEPARATORS.items() if c != sep and c in header]
        if others:
            raise ValueError(
                f"--data {path} was read as one column with separator {_SEPARATORS.get(sep, sep)}"
                f" but its header contains {others[0]}; pass --sep."
            )
    return data, (sep if detected and sep != "," else None)


def _not_decoded(path: Path, encoding: str, exc: UnicodeDecodeError) -> str:
    byte = exc.object[exc.start : exc.start + 1].hex()
    return (
        f"--data {path} is not valid {encoding} text (byte 0x{byte} at position {exc.start});"
        " pass its encoding, e.g. --encoding latin-1."
    )


def _check_plots_dir(path: Path | None) -> None:
    """Fail before fitting when --plots cannot be a directory."""
    if path is None:
        return
    if path.exists() and not path.is_dir():
        raise ValueError(f"--plots {path} is a file; give a directory for the PNG files.")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"--plots {path} cannot be created: {exc.strerror or exc}.") from None


def _model_from_args(args: argparse.Namespace) -> Any:
    """The model of the fit options: read --data, build the formula's model."""
    from ._model import glm

    data, detected = _read_data(args.data, args.sep, args.encoding)
    if detected is not None:
        print(
            f"note: --data {args.data} read with separator {_SEPARATORS[detected]} "
            "(detected from the header; --sep sets it).",
            file=sys.stderr,
        )
    _check_plots_dir(args.plots)
    return glm(
        args.formula, data, family=args.family, sample_weight=args.weights,
        offset=args.offset, n_bins=args.n_bins, penalty_weights=args.penalty_weights,
        missing=args.missing, weights_kind=args.weights_kind,
    )  # fmt: skip


def _run_fit(args: argparse.Namespace, out) -> int:
    _report(_model_from_args(args), args, out)
    return 0


def _check_output(path: Path) -> None:
    """Fail before fitting when the page cannot be written."""
    if path.is_dir():
        raise ValueError(f"--output {path} is a directory; give a file name, e.g. model.html.")
    parent = path.parent
    if not parent.is_dir():
        raise ValueError(f"--output {path}: the directory {parent} does not exist.")


def _run_report(args: argparse.Namespace, out) -> int:
    _check_output(args.output)
    new = None
    if args.new is not None:
        try:
            new = _read_data(args.new, args.sep, args.encoding)[0]
        except ValueError as exc:  # the reader names --data; this file is --new
            raise ValueError(str(exc).replace(f"--data {args.new}", f"--new {args.new}")) from None
    model = _model_from_args(args)
    t0 = time.perf_counter()
    cv = None
    if args.cv:
        cv = model.fit_cv(
            folds=args.cv, scoring=args.scoring, random_state=args.random_state,
            n_jobs=args.n_jobs, verbose=args.verbose, n_lambdas=args.n_lambdas,
        )  # fmt: skip
        res = cv.best_ if args.select == "lam_min" else cv.results(args.select)
    else:
        res = model.fit(lam=args.lam)
    if args.bootstrap:
        res.bootstrap(
            n_boot=args.bootstrap, random_state=args.random_state, n_jobs=args.n_jobs,
            verbose=args.verbose,
        )  # fmt: skip
    os.environ.setdefault("MPLBACKEND", "Agg")
    res.report(args.output, new=new, title=args.title, scale=args.scale,
               precision=args.precision)  # fmt: skip
    elapsed = time.perf_counter() - t0
    if args.plots is not None:
        _write_plots(res, cv, model, args, out)
    print(
        f"Report written: {args.output} ({model.family.name}, {model.nobs:,} rows, "
        f"lam = {res.lam:.4g} ({res.lam_source}), {res.n_jumps} cut-points kept"
        + (f", {args.bootstrap} bootstrap resamples" if args.bootstrap else "")
        + f"; {elapsed:.1f} s).",
        file=out,
    )
    return 0


def _run_demo(args: argparse.Namespace, out) -> int:
    from ._datasets import FAIR_FORMULA, load_fair
    from ._model import glm

    _check_plots_dir(args.plots)
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
        Exit status: 0 on success (also when the reader of a pipe stops early), 2 on a
        usage or data error (one line on stderr, no traceback).
    """
    out = sys.stdout if out is None else out
    args = build_parser().parse_args(argv)
    try:
        run = {"fit": _run_fit, "report": _run_report, "demo": _run_demo}[args.command]
        code = run(args, out)
        out.flush()  # a closed pipe shows here, not as a message at interpreter exit
        return code
    except BrokenPipeError:
        # the reader went away (`binarsity-stats ... | head -1`): stop quietly, and
        # point stdout at /dev/null so that the interpreter's final flush is silent
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):  # pragma: no cover - no real stdout
            pass
        return 0
    except (ValueError, TypeError, OSError) as exc:
        print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
