"""Command line: help, fit on a CSV (with CV and plots), the demo, and errors."""

import io
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from binarsity_stats._cli import build_parser, main


@pytest.fixture
def csv(tmp_path):
    rng = np.random.default_rng(0)
    n = 400
    df = pd.DataFrame(
        {"age": rng.integers(18, 70, size=n), "income": rng.lognormal(size=n),
         "region": rng.choice(["north", "south"], size=n)}
    )  # fmt: skip
    eta = 1.2 * (df["age"] > 40) - 0.5 + 0.4 * (df["region"] == "south")
    df["bought"] = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(int)
    path = tmp_path / "data.csv"
    df.to_csv(path, index=False)
    return path


def run(argv):
    out = io.StringIO()
    code = main(argv, out=out)
    return code, out.getvalue()


def test_help_documents_both_commands(capsys):
    parser = build_parser()
    top = parser.format_help()
    assert "fit" in top and "demo" in top
    with pytest.raises(SystemExit):
        parser.parse_args(["fit", "--help"])
    fit_help = capsys.readouterr().out
    for option in (
        "--data",
        "--family",
        "--cv",
        "--plots",
        "--lam",
        "bin(x, n_bins)",
        "C(x)",
        "offset(log(exposure))",
    ):
        assert option in fit_help, option
    # every name --family reads is named in its help (argparse wraps lines: join words)
    from binarsity_stats.families._families import FAMILIES

    words = " ".join(fit_help.split())
    for name in FAMILIES:
        assert name in words, name
    with pytest.raises(SystemExit):
        parser.parse_args(["demo", "--help"])
    assert "fair" in capsys.readouterr().out


def test_fit_with_cv_prints_the_report_and_writes_plots(csv, tmp_path):
    plots = tmp_path / "plots"
    code, out = run([
        "fit", "bought ~ bin(age) + bin(income, 10) + region", "--data", str(csv),
        "--family", "binomial", "--cv", "3", "--n-lambdas", "8", "--plots", str(plots),
    ])  # fmt: skip
    assert code == 0
    assert "Binarsity GLM Results" in out and "Binomial" in out
    assert "3-fold CV (lam_min, deviance)" in out
    assert "Cut-points kept" in out and "bin(age)" in out
    assert "Selected terms:" in out and "C(region)" in out
    assert {p.name for p in plots.iterdir()} == {"shapes.png", "cv.png", "path.png"}


def test_fit_at_a_given_lambda(csv):
    code, out = run(["fit", "bought ~ bin(age)", "--data", str(csv), "--family", "binomial",
                     "--lam", "0.002"])  # fmt: skip
    assert code == 0 and "Lambda chosen by:" in out and "user" in out


def test_errors_name_the_culprit_and_exit_2(csv, capsys):
    code, _ = run(["fit", "bought ~ bin(agex)", "--data", str(csv)])
    assert code == 2 and "['agex']" in capsys.readouterr().err
    code, _ = run(["fit", "bought ~ bin(age)", "--data", str(csv.with_name("none.csv"))])
    assert code == 2 and "no such file" in capsys.readouterr().err


def _same_package_env():
    """Run a subprocess on the very package this test imported (installed or in-place),
    from a directory where the source tree cannot shadow it."""
    import os

    import binarsity_stats

    env = dict(os.environ)
    env["PYTHONPATH"] = str(Path(binarsity_stats.__file__).resolve().parent.parent)
    return env


def test_demo_runs_as_a_module(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "binarsity_stats", "demo", "--cv", "3", "--n-lambdas", "8"],
        capture_output=True, text=True, timeout=120, check=True, cwd=tmp_path,
        env=_same_package_env(),
    )  # fmt: skip
    for text in ("fair", "bin(rate_marriage)", "Cut-points kept", "Selected terms:",
                 "lam_1se"):  # fmt: skip
        assert text in out.stdout, text


def test_installed_command_runs_the_demo_from_the_source_checkout():
    """README's quick start: ``pip install . && binarsity-stats demo`` from the clone's
    root, where ``python -m`` would import the uncompiled source folder first."""
    root = Path(__file__).resolve().parent.parent
    pyproject = (root / "pyproject.toml").read_text()
    assert '[project.scripts]\nbinarsity-stats = "binarsity_stats._cli:main"' in pyproject
    exe = shutil.which("binarsity-stats")
    if exe is None:
        pytest.skip("binarsity-stats is not installed here (pip install . puts it on PATH)")
    out = subprocess.run(
        [exe, "demo", "--cv", "3", "--n-lambdas", "8"],
        capture_output=True, text=True, timeout=120, check=True, cwd=root,
    )  # fmt: skip
    assert "bin(rate_marriage)" in out.stdout and "Selected terms:" in out.stdout
