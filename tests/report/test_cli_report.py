"""``binarsity-stats report``: fit from a CSV as ``fit`` does and write the HTML page."""

import io

import numpy as np
import pandas as pd
import pytest
from test_report import SECTIONS, Page, assert_self_contained, decode_png

from binarsity_stats._cli import build_parser, main


def _frame(n, seed):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"age": rng.integers(18, 70, size=n), "region": rng.choice(["n", "s"], n),
                       "w": rng.uniform(0.5, 2.0, n), "t": rng.uniform(1.0, 3.0, n)})  # fmt: skip
    df["claims"] = rng.poisson(df["t"] * np.exp(0.8 * (df["age"] > 40) - 0.5))
    return df


@pytest.fixture
def files(tmp_path):
    train, test = tmp_path / "train.csv", tmp_path / "test.csv"
    _frame(300, 0).to_csv(train, index=False)
    _frame(100, 1).to_csv(test, index=False)
    return train, test


def run(argv):
    out = io.StringIO()
    return main(argv, out=out), out.getvalue()


def test_report_command_writes_the_page_with_cv_bootstrap_and_new_rows(files, tmp_path):
    train, test = files
    page_path = tmp_path / "claims.html"
    code, out = run([
        "report", "claims ~ bin(age) + region + offset(np.log(t))", "--data", str(train),
        "--family", "poisson", "--weights", "w", "--cv", "3", "--n-lambdas", "6",
        "--bootstrap", "4", "--new", str(test), "-o", str(page_path), "--title", "Claims",
    ])  # fmt: skip
    assert code == 0, out
    assert out.startswith(f"Report written: {page_path} (poisson, 300 rows")
    assert "4 bootstrap resamples" in out
    page = Page(page_path.read_text(encoding="utf-8"))
    assert page.sections == list(SECTIONS)
    assert_self_contained(page)
    for img in page.images:
        decode_png(img["src"])
    assert page.facts("calibration", "Held-out rows")["New rows"] == "100"
    assert page.facts("data", "The data and the model")["Sample weights"].startswith("column w")
    assert "Claims" in page.texts


def test_report_command_defaults_and_help(files, tmp_path, monkeypatch, capsys):
    train, _ = files
    monkeypatch.chdir(tmp_path)
    code, out = run(["report", "claims ~ bin(age)", "--data", str(train), "--family",
                     "poisson", "--lam", "0.01"])  # fmt: skip
    assert code == 0 and (tmp_path / "report.html").is_file()
    page = Page((tmp_path / "report.html").read_text(encoding="utf-8"))
    assert "cv" not in page.sections and "bootstrap" not in page.sections
    assert "report" in build_parser().format_help()
    with pytest.raises(SystemExit):
        build_parser().parse_args(["report", "--help"])
    text = capsys.readouterr().out
    for option in ("--output", "--bootstrap", "--new", "--data", "--cv", "--weights"):
        assert option in text, option


def test_report_command_errors_name_the_flag(files, tmp_path, capsys):
    train, _ = files
    base = ["report", "claims ~ bin(age)", "--data", str(train), "--family", "poisson"]
    code, _ = run(base + ["-o", str(tmp_path)])
    assert code == 2 and "--output" in capsys.readouterr().err
    code, _ = run(base + ["-o", str(tmp_path / "no" / "r.html")])
    assert code == 2 and "does not exist" in capsys.readouterr().err
    code, _ = run(base + ["--new", str(tmp_path / "none.csv")])
    err = capsys.readouterr().err
    assert code == 2 and "--new" in err and "no such file" in err
    with pytest.raises(SystemExit):
        build_parser().parse_args(base + ["--bootstrap", "1"])
    assert "--bootstrap must be an integer >= 2" in capsys.readouterr().err


def test_report_of_a_model_saved_by_fit(files, tmp_path, capsys):
    train, test = files
    saved = tmp_path / "model.pkl"
    code, _ = run(["fit", "claims ~ bin(age) + region + offset(np.log(t))", "--data",
                   str(train), "--family", "poisson", "--weights", "w", "--cv", "3",
                   "--n-lambdas", "5", "--save", str(saved)])  # fmt: skip
    assert code == 0 and saved.is_file()
    page_path = tmp_path / "saved.html"
    code, out = run(["report", "--model", str(saved), "--bootstrap", "3", "--new", str(test),
                     "-o", str(page_path)])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    assert out.startswith(f"Report written: {page_path} (poisson, 300 rows")
    page = Page(page_path.read_text(encoding="utf-8"))
    # the saved fit came from fit_cv: its CV curve travels with it
    assert page.sections == list(SECTIONS)
    assert page.facts("data", "The data and the model")["Sample weights"].startswith("column w")
    assert page.facts("calibration", "Held-out rows")["New rows"] == "100"


def test_report_model_refuses_fit_options_and_needs_a_source(files, tmp_path, capsys):
    train, _ = files
    saved = tmp_path / "m.pkl"
    assert run(["fit", "claims ~ bin(age)", "--data", str(train), "--family", "poisson",
                "--lam", "0.01", "--save", str(saved)])[0] == 0  # fmt: skip
    capsys.readouterr()
    out = str(tmp_path / "r.html")
    code, _ = run(["report", "-o", out])
    assert code == 2 and "needs a FORMULA and --data" in capsys.readouterr().err
    code, _ = run(["report", "claims ~ bin(age)", "--model", str(saved), "-o", out])
    assert code == 2 and "drop the formula" in capsys.readouterr().err
    code, _ = run(["report", "--model", str(saved), "--cv", "3", "--family", "binomial",
                   "-o", out])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "--family, --cv would change the fit" in err
    code, _ = run(["report", "--model", str(tmp_path / "none.pkl"), "-o", out])
    assert code == 2 and "no such file" in capsys.readouterr().err
    # a plain saved fit: no CV section, and the page is written
    code, _ = run(["report", "--model", str(saved), "-o", out])
    assert code == 0 and "cv" not in Page(open(out, encoding="utf-8").read()).sections
