"""Command line input: separators, encodings, empty files, directories, --cv, --plots, pipes.

What is proved here: a ``;``- or tab-separated file is read (``--sep``, or detected with
a note on stderr) and gives the same report as the comma version; every unreadable
input (non-UTF-8 text, an empty file, a header without rows, a directory, ``--cv 0``,
a ``--plots`` path that is a file) exits 2 with one line naming it, and the ``--plots``
check comes before the fit; ``binarsity-stats ... | head -1`` ends quietly.
"""

import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from binarsity_stats._cli import main


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(8)
    n = 300
    df = pd.DataFrame(
        {"age": rng.integers(18, 70, size=n), "ville": rng.choice(["Orléans", "Nîmes"], n)}
    )
    df["y"] = (df["age"] > 40) + 0.3 * rng.normal(size=n)
    return df


def run(argv):
    out = io.StringIO()
    code = main(argv, out=out)
    return code, out.getvalue()


def _report_body(text):
    """The report without the timing line (it differs between runs)."""
    return "\n".join(line for line in text.splitlines() if not line.startswith("Fit time"))


FIT = ["fit", "y ~ bin(age, 5) + ville", "--lam", "0.001"]


@pytest.mark.parametrize("sep, flag", [(";", ";"), ("\t", "\\t"), ("\t", "tab"), ("|", "|")])
def test_separators_by_flag_or_detected(frame, tmp_path, capsys, sep, flag):
    comma = tmp_path / "comma.csv"
    frame.to_csv(comma, index=False)
    other = tmp_path / "other.csv"
    frame.to_csv(other, index=False, sep=sep)
    code, ref = run([*FIT, "--data", str(comma)])
    assert code == 0 and capsys.readouterr().err == ""
    code, given = run([*FIT, "--data", str(other), "--sep", flag])
    assert code == 0 and _report_body(given) == _report_body(ref)
    assert capsys.readouterr().err == ""
    code, detected = run([*FIT, "--data", str(other)])
    assert code == 0 and _report_body(detected) == _report_body(ref)
    err = capsys.readouterr().err
    assert err.startswith("note: ") and "separator" in err and "--sep" in err


def test_wrong_separator_is_named(frame, tmp_path, capsys):
    path = tmp_path / "semi.csv"
    frame.to_csv(path, index=False, sep=";")
    code, _ = run([*FIT, "--data", str(path), "--sep", ","])
    err = capsys.readouterr().err
    assert code == 2 and str(path) in err and "--sep" in err and err.count("\n") == 1


def test_encodings(frame, tmp_path, capsys):
    path = tmp_path / "latin.csv"
    frame.to_csv(path, index=False, encoding="latin-1")
    code, _ = run([*FIT, "--data", str(path)])
    err = capsys.readouterr().err
    assert code == 2 and str(path) in err and "--encoding" in err and err.count("\n") == 1
    code, out = run([*FIT, "--data", str(path), "--encoding", "latin-1"])
    assert code == 0 and "C(ville)" in out
    code, _ = run([*FIT, "--data", str(path), "--encoding", "no-such-codec"])
    assert code == 2 and "no-such-codec" in capsys.readouterr().err


@pytest.mark.parametrize(
    "content, match", [("", "is empty"), ("\n\n", "is empty"), ("y,age,ville\n", "no data rows")]
)
def test_empty_files_are_named(tmp_path, capsys, content, match):
    path = tmp_path / "empty.csv"
    path.write_text(content)
    code, _ = run([*FIT, "--data", str(path)])
    err = capsys.readouterr().err
    assert code == 2 and str(path) in err and match in err and err.count("\n") == 1


def test_directory_as_data(tmp_path, capsys):
    code, _ = run([*FIT, "--data", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and "is a directory" in err and str(tmp_path) in err


@pytest.mark.parametrize("k", ["0", "1", "-3", "two"])
def test_cv_needs_two_folds(frame, tmp_path, capsys, k):
    path = tmp_path / "d.csv"
    frame.to_csv(path, index=False)
    with pytest.raises(SystemExit) as info:
        main(["fit", "y ~ bin(age)", "--data", str(path), "--cv", k], out=io.StringIO())
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "--cv must be an integer >= 2" in err and "Traceback" not in err


def test_plots_path_that_is_a_file_fails_before_fitting(frame, tmp_path, capsys, monkeypatch):
    path = tmp_path / "d.csv"
    frame.to_csv(path, index=False)
    target = tmp_path / "plots.png"
    target.write_text("not a directory")
    import binarsity_stats.model._model as model_module

    def no_fit(*args, **kwargs):  # pragma: no cover - must not be reached
        raise AssertionError("fitted before checking --plots")

    monkeypatch.setattr(model_module.BinarsityModel, "fit", no_fit)
    monkeypatch.setattr(model_module.BinarsityModel, "fit_cv", no_fit)
    code, out = run([*FIT, "--data", str(path), "--plots", str(target)])
    err = capsys.readouterr().err
    assert code == 2 and "is a file" in err and str(target) in err and out == ""
    code, _ = run(["demo", "--plots", str(target)])
    assert code == 2 and "is a file" in capsys.readouterr().err


def _env():
    import binarsity_stats

    env = dict(os.environ)
    env["PYTHONPATH"] = str(Path(binarsity_stats.__file__).resolve().parent.parent)
    return env


def test_closed_pipe_ends_quietly(frame, tmp_path):
    path = tmp_path / "d.csv"
    frame.to_csv(path, index=False)
    cmd = [sys.executable, "-m", "binarsity_stats", *FIT, "--data", str(path)]
    # the reader is gone before the report is written: every write hits a closed pipe
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(),
                            cwd=tmp_path)  # fmt: skip
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0
    assert "Broken pipe" not in err and "BrokenPipeError" not in err and err == ""


@pytest.mark.parametrize("digits", ["0", "18", "x"])
def test_precision_is_checked_by_argparse(tmp_path, capsys, digits):
    with pytest.raises(SystemExit) as info:
        main(["fit", "y ~ bin(age)", "--data", "d.csv", "--precision", digits])
    assert (
        info.value.code == 2 and "--precision must be an integer 1..17" in capsys.readouterr().err
    )


def test_parquet_data_and_new_rows_give_the_csv_results(frame, tmp_path, capsys):
    """``--data x.parquet`` and ``predict model NEW.parquet`` (issue 28, item 8)."""
    pytest.importorskip("pyarrow")
    csv, pq = tmp_path / "d.csv", tmp_path / "d.parquet"
    frame.to_csv(csv, index=False)
    frame.to_parquet(pq, index=False)
    code, ref = run([*FIT, "--data", str(csv)])
    assert code == 0
    assert run([*FIT, "--data", str(csv), "--save", str(tmp_path / "m.pkl")])[0] == 0
    code, got = run([*FIT, "--data", str(pq)])
    assert code == 0 and _report_body(got) == _report_body(ref)
    code, from_csv = run(["predict", str(tmp_path / "m.pkl"), str(csv)])
    code2, from_pq = run(["predict", str(tmp_path / "m.pkl"), str(pq)])
    assert code == code2 == 0 and from_pq == from_csv
    bad = tmp_path / "bad.parquet"
    bad.write_text("not parquet", encoding="utf-8")
    capsys.readouterr()
    code, _ = run([*FIT, "--data", str(bad)])
    err = capsys.readouterr().err
    assert code == 2 and "could not be read as Parquet" in err and str(bad) in err
