"""Unit tests of ``binarsity_stats._cli_parser``: the commands, the flags' defaults and
the converters that refuse a bad value naming the flag (argparse exits with status 2
and the message on stderr). Running the commands is ``tests/test_cli*.py``'s job."""

from __future__ import annotations

from pathlib import Path

import pytest

from binarsity_stats._cli_parser import build_parser
from binarsity_stats.families._families import get_family

PARSER = build_parser()


def _parse(*argv):
    return PARSER.parse_args(list(argv))


def _refused(capsys, *argv) -> str:
    with pytest.raises(SystemExit) as exc:
        _parse(*argv)
    assert exc.value.code == 2
    return capsys.readouterr().err


def test_fit_defaults():
    ns = _parse("fit", "y ~ bin(x)", "--data", "d.csv")
    assert ns.command == "fit" and ns.formula == "y ~ bin(x)" and ns.data == Path("d.csv")
    assert get_family(ns.family) == get_family("gaussian") and ns.lam == "theory" and ns.cv is None
    assert (ns.n_bins, ns.penalty_weights, ns.missing, ns.weights_kind) == (50, "balanced", "error", "analytic")
    assert (ns.scoring, ns.select, ns.n_lambdas, ns.random_state, ns.n_jobs) == ("deviance", "lam_min", 50, 0, 1)
    assert ns.precision is None and ns.save is None and not ns.verbose


def test_fit_values_are_converted():
    ns = _parse("fit", "y ~ x", "--data", "d.csv", "--family", "cox:efron", "--lam", "0.01",
                "--cv", "5", "--precision", "17", "--save", "m.pkl", "--weights", "w")  # fmt: skip
    assert ns.family == ("cox", "efron") and get_family(ns.family) == get_family(("cox", "efron"))
    assert get_family(_parse("fit", "y ~ x", "--data", "d", "--family", "logistic").family) == get_family("binomial")
    assert ns.lam == 0.01 and ns.cv == 5 and ns.precision == 17
    assert ns.save == Path("m.pkl") and ns.weights == "w"
    assert _parse("fit", "y ~ x", "--data", "d", "--lam", "0").lam == 0.0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--family", "nosuch"], "--family "),
        (["--lam", "-1"], "--lam must be >= 0; got '-1'"),
        (["--lam", "big"], "--lam must be a number >= 0 or 'theory'; got 'big'"),
        (["--cv", "1"], "--cv must be an integer >= 2 (the number of folds); got '1'"),
        (["--cv", "2.5"], "--cv must be an integer >= 2"),
        (["--precision", "0"], "--precision must be an integer 1..17; got '0'"),
        (["--precision", "18"], "--precision must be an integer 1..17; got '18'"),
        (["--missing", "omit"], "invalid choice: 'omit'"),
        (["--scoring", "r2"], "invalid choice: 'r2'"),
    ],
)
def test_fit_refuses_bad_values_naming_the_flag(capsys, argv, message):
    err = _refused(capsys, "fit", "y ~ x", "--data", "d.csv", *argv)
    assert message in err


def test_fit_needs_formula_and_data(capsys):
    assert "the following arguments are required: --data" in _refused(capsys, "fit", "y ~ x")
    assert "required" in _refused(capsys)  # a command is required


def test_predict_flags():
    ns = _parse("predict", "m.pkl", "new.csv", "--interval", "0.9", "--type", "survival",
                "--times", "30,90.5,365", "--id", "cid", "-o", "out.csv")  # fmt: skip
    assert (ns.model, ns.new, ns.output) == (Path("m.pkl"), Path("new.csv"), Path("out.csv"))
    assert ns.interval == 0.9 and ns.type == "survival" and ns.times == [30.0, 90.5, 365.0]
    assert ns.missing is None and ns.id == "cid"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--interval", "1"], "--interval must be a coverage between 0 and 1, e.g. 0.95; got '1'"),
        (["--interval", "x"], "--interval must be a coverage between 0 and 1"),
        (["--times", "30,-1"], "--times must be non-negative numbers separated by commas"),
        (["--times", "30,inf"], "--times must be non-negative numbers"),
        (["--times", ""], "--times must be non-negative numbers"),
        (["--type", "mean"], "invalid choice: 'mean'"),
        (["--missing", "drop"], "invalid choice: 'drop'"),
    ],
)
def test_predict_refuses_bad_values_naming_the_flag(capsys, argv, message):
    assert message in _refused(capsys, "predict", "m.pkl", "new.csv", *argv)


def test_report_has_every_fit_option_with_formula_and_data_optional():
    ns = _parse("report", "--model", "m.pkl")
    assert ns.formula is None and ns.data is None and ns.model == Path("m.pkl")
    assert ns.output == Path("report.html") and ns.bootstrap == 0 and ns.bands == "relaxed"
    fit_dests = {a.dest for a in PARSER._subparsers._group_actions[0].choices["fit"]._actions}
    report_dests = {a.dest for a in PARSER._subparsers._group_actions[0].choices["report"]._actions}
    assert fit_dests <= report_dests
    # the fit options a saved fit cannot honour, with their defaults and flags
    refitting = {dest: (default, flag) for dest, default, flag in ns._refitting}
    assert refitting["lam"] == ("theory", "--lam") and refitting["cv"] == (None, "--cv")
    assert "precision" not in refitting and "formula" not in refitting and "sep" not in refitting
    ns = _parse("report", "y ~ x", "--data", "d.csv", "--bootstrap", "200", "--cv", "3")
    assert ns.bootstrap == 200 and ns.cv == 3 and ns.formula == "y ~ x"


def test_report_refuses_a_bootstrap_below_two(capsys):
    err = _refused(capsys, "report", "--model", "m.pkl", "--bootstrap", "1")
    assert "--bootstrap must be an integer >= 2 (the number of resamples); got '1'" in err


def test_demo_cross_validates_by_default():
    ns = _parse("demo")
    assert ns.command == "demo" and ns.cv == 10
    assert _parse("demo", "--cv", "3").cv == 3


def test_help_texts_document_the_commands():
    text = PARSER.format_help()
    assert "{fit,predict,report,demo}" in text
    fit_help = PARSER._subparsers._group_actions[0].choices["fit"].format_help()
    assert "formula terms:" in fit_help and "bin(x, n_bins)" in fit_help
    pred_help = PARSER._subparsers._group_actions[0].choices["predict"].format_help()
    assert "load only files you trust" in pred_help
