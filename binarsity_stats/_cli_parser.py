"""The command line's parser: commands, flags, their help and the checks of their values.

``build_parser()`` is used by ``_cli.main`` only (and by the tests); every value a
flag takes is checked by a converter here, so a bad value is refused by argparse
naming the flag.
"""

from __future__ import annotations

import argparse
import copy
import math
from pathlib import Path
from typing import Any

__all__ = ["build_parser"]


_FIT_EPILOG = """\
formula terms:
  bin(x, n_bins)          binned, total-variation penalised feature (cut points learned
                          on the data and replayed at predict time)
  bin(x, 20, monotone='increasing')
                          the same, constrained non-decreasing ('decreasing': the
                          other way)
  C(x)                    unpenalised categorical (a bare text column is read as C(x))
  x, log(x), x:z          unpenalised linear terms
  offset(log(exposure))   offset with coefficient one
  - 1                     no intercept, as in R: the first bin() or C() term then
                          has one free level per category (they absorb the intercept)

  .                       every other column: numeric ones binned, others C(); y ~ . - id
  cbind(s, f) ~ ...       binomial successes and failures (R)

examples:
  python -m binarsity_stats fit "y ~ bin(age) + bin(income, 20) + C(region)" \\
      --data data.csv --family binomial --cv 10 --plots out/ --save model.pkl
  python -m binarsity_stats fit "claims ~ bin(age) + offset(log(exposure))" \\
      --data claims.csv --family poisson --lam 0.001
  python -m binarsity_stats predict model.pkl new.csv -o predictions.csv --interval 0.95
"""

_PREDICT_EPILOG = """\
The model file is a pickle written by 'fit --save': load only files you trust (a pickle
can run code when it is read).

--interval LEVEL adds the columns lower and upper: a confidence interval of the mean
response (or of the linear predictor with --type link) from the unpenalised refit on the
selected cut-points (statsmodels' get_prediction), conditional on the selection; it does
not account for the choice of the cut-points (use 'report --bootstrap' for that). The
refit is stored by 'fit --save' (a model saved before that is refitted here).
A Cox model (family cox) has no such interval: --interval is refused for it.

A Cox model predicts --type risk (the relative risk exp(eta), the default, relative to
a row with every bin() and C() term at its weighted training average and linear terms
at 0), --type linear (eta) or --type survival --times T1,T2,... (the survival
probabilities S(t | x) at those times, Breslow's baseline; one column survival_T per
time).

examples:
  python -m binarsity_stats predict model.pkl new.csv -o predictions.csv
  python -m binarsity_stats predict model.pkl new.csv --interval 0.9 --id customer_id
  python -m binarsity_stats predict cox.pkl new.csv --type survival --times 365,730
"""


_REPORT_EPILOG = """\
examples:
  python -m binarsity_stats report "y ~ bin(age) + C(region)" --data train.csv \\
      --family binomial --cv 10 --bootstrap 200 --new test.csv -o model.html
  python -m binarsity_stats report --model model.pkl --new test.csv -o model.html

With --model the fit saved by 'fit --save' is reported as it was fitted (with its CV
curve when it came from --cv); the options that would change the fit are refused.
"""


def _family(value: str) -> Any:
    from .families._families import family_from_text

    try:
        return family_from_text(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"--family {exc}") from None


def _level(value: str) -> float:
    try:
        level = float(value)
    except ValueError:
        level = -1.0
    if not 0.0 < level < 1.0:
        raise argparse.ArgumentTypeError(
            f"--interval must be a coverage between 0 and 1, e.g. 0.95; got {value!r}"
        )
    return level


def _times(value: str) -> list[float]:
    try:
        times = [float(v) for v in value.split(",")]
    except ValueError:
        times = []
    if not times or not all(math.isfinite(t) and t >= 0 for t in times):
        raise argparse.ArgumentTypeError(
            "--times must be non-negative numbers separated by commas, e.g. 30,90,365; "
            f"got {value!r}"
        )
    return times


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
        The parser with the ``fit``, ``predict``, ``report`` and ``demo`` subcommands.
    """
    parser = argparse.ArgumentParser(
        prog="python -m binarsity_stats",
        description="Interpretable GLMs on binned features under the binarsity penalty "
        "(Alaya, Bussy, Gaiffas & Guilloux, JMLR 2019).",
    )
    sub = parser.add_subparsers(dest="command", metavar="{fit,predict,report,demo}")
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
    fit.add_argument("--data", required=True, type=Path,
                     help="CSV file with a header row, or a Parquet file (.parquet, .pq)")
    fit.add_argument(
        "--sep", default=None,
        help="field separator of --data, e.g. ';' or tab (default: detected from the header "
        "among , ; tab |)",
    )  # fmt: skip
    fit.add_argument("--encoding", default="utf-8", help="text encoding of --data (default utf-8)")
    fit.add_argument(
        "--family", default="gaussian", type=_family, metavar="FAMILY",
        help="gaussian (default), binomial or poisson, with the canonical link (R's and "
        "statsmodels' spellings logistic, logit, normal... are read as these), gamma, "
        "tweedie (P = 1.5) or tweedie:P (1 <= P <= 2), with the log link; quasipoisson, "
        "quasibinomial (dispersion estimated); nb (negative binomial, theta estimated as "
        "R's glm.nb does); or cox (Breslow's ties; cox:efron for Efron's) with a "
        "Surv(time, event) response",
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
        "--missing", choices=("error", "separate", "drop"), default="error",
        help="missing values in the columns the model uses: error (default), separate (a "
        "level of their own in bin()/C() columns) or drop (drop those rows, R's na.omit)",
    )  # fmt: skip
    fit.add_argument(
        "--weights", metavar="COLUMN", help="column of sample weights (Python: sample_weight)"
    )
    fit.add_argument(
        "--weights-kind", choices=("analytic", "freq"), default="analytic",
        help="what --weights means: analytic (precision) weights, the default, or "
        "frequencies (row counts)",
    )  # fmt: skip
    fit.add_argument("--offset", metavar="COLUMN", help="column added to the linear predictor")
    fit.add_argument(
        "--groups", metavar="COLUMN",
        help="column of group labels: with --cv, whole groups go to one fold (and "
        "'report --bootstrap' resamples whole groups)",
    )  # fmt: skip
    fit.add_argument(
        "--save", type=Path, metavar="FILE",
        help="save the fitted results and their refit to FILE (a pickle) for 'predict'",
    )  # fmt: skip
    _add_common(fit, None)
    # every fit option (copies of fit's: FORMULA and --data become optional, since
    # --model reports a saved fit instead), then the page's own
    rep = sub.add_parser(
        "report",
        help="fit as 'fit' does (or load a saved fit) and write the self-contained HTML report",
        description="Fit a binarsity GLM as 'fit' does, or load one saved by 'fit --save' "
        "(--model), and write one self-contained HTML page: the data and the model, the "
        "summary, the shape plots, the cut-points (with their bootstrap frequencies with "
        "--bootstrap), the CV curve (with --cv, or the saved fit's), calibration (on --new "
        "rows when given) and the versions.",
        epilog=_REPORT_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    for action in fit._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        twin = copy.copy(action)
        if twin.dest == "formula":
            twin.nargs, twin.default = "?", None
            twin.help = "R-style formula, as for 'fit' (not with --model)"
        elif twin.dest == "data":
            twin.required = False
            twin.help = "CSV file with a header row (not with --model)"
        rep._add_action(twin)
    # the fit options a saved fit cannot honour (--model refuses them when changed)
    kept = {"sep", "encoding", "precision", "random_state", "n_jobs", "verbose", "plots"}
    rep.set_defaults(_refitting=tuple(
        (a.dest, a.default, a.option_strings[-1] if a.option_strings else a.dest.upper())
        for a in fit._actions
        if not isinstance(a, argparse._HelpAction) and a.dest not in kept | {"formula", "data"}
    ))  # fmt: skip
    rep.add_argument(
        "--model", type=Path, metavar="FILE",
        help="report the fit saved by 'fit --save' in FILE instead of fitting (a pickle: "
        "load only files you trust)",
    )  # fmt: skip
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
    rep.add_argument(
        "--bands", choices=("percentile", "basic", "relaxed"), default="relaxed",
        help="bootstrap bands drawn with --bootstrap (default relaxed: each resample's "
        "cut-points refitted without the penalty's shrinkage, the band that covered best "
        "in docs/benchmarks.md, suite inference; percentile bands of the penalised fits "
        "undercover at the theory lambda and lam_1se)",
    )  # fmt: skip
    rep.add_argument("--title", help="title of the page (default: the formula)")
    rep.add_argument(
        "--scale", choices=("link", "response"), default="link",
        help="scale of the shape plots: link, or response (odds/rate ratios)",
    )  # fmt: skip
    pred = sub.add_parser(
        "predict",
        help="predict new rows with a model saved by 'fit --save'",
        description="Read a model saved by 'fit --save' and write one prediction per row "
        "of a CSV file (the columns the formula reads; the response is not needed).",
        epilog=_PREDICT_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    pred.add_argument("model", type=Path, help="the file written by 'fit --save'")
    pred.add_argument("new", type=Path, metavar="NEW",
                      help="CSV (or .parquet) file of the rows to predict")
    pred.add_argument(
        "-o", "--output", type=Path, metavar="FILE",
        help="CSV file to write (default: standard output)",
    )  # fmt: skip
    pred.add_argument(
        "--type", choices=("response", "link", "risk", "linear", "survival"),
        default="response",
        help="the mean response (default) or the linear predictor; a Cox model: risk "
        "(= response), linear (= link) or survival (with --times)",
    )  # fmt: skip
    pred.add_argument(
        "--times", type=_times, metavar="T1,T2,...",
        help="with --type survival (Cox): the times at which S(t | x) is predicted",
    )  # fmt: skip
    pred.add_argument(
        "--interval", type=_level, metavar="LEVEL",
        help="add lower/upper bounds of a LEVEL confidence interval (see below)",
    )  # fmt: skip
    pred.add_argument(
        "--missing", choices=("nan", "error"), default=None,
        help="rows missing a value the model dropped rows for at fit (--missing drop): "
        "nan (default for such a model) or error",
    )  # fmt: skip
    pred.add_argument(
        "--id", metavar="COLUMN", help="copy this column of NEW into the output, first"
    )
    pred.add_argument(
        "--sep", default=None, help="field separator of NEW (default: detected from its header)"
    )
    pred.add_argument("--encoding", default="utf-8", help="text encoding of NEW (default utf-8)")
    demo = sub.add_parser(
        "demo",
        help="binomial binarsity model with CV on statsmodels' fair data",
        description="Fit 'affairs > 0' on statsmodels' fair data set (6,366 rows) with a "
        "binarsity logistic model tuned by 10-fold CV; print the summary, the cut-points "
        "and the selected features.",
    )
    _add_common(demo, 10)
    return parser
