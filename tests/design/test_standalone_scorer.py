"""The standard-library scorer (``binarsity_stats/design/standalone_scorer.py``).

It must give the package's predictions from the ``to_spec()`` JSON alone — for every
kind of term (bins with and without a missing level, bins of an expression, ``C()``,
numeric, transformed and interaction linear terms, offsets), the three families and the
estimators — and it must run where the package cannot be installed: it imports only the
standard library (checked on its source) and runs as a script under ``python -I -S``
(no site-packages, so no NumPy) from a folder holding nothing else.
"""

from __future__ import annotations

import ast
import csv
import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _export_data import export_frame

from binarsity_stats import BinarsityClassifier, BinarsityGLM, glm
from binarsity_stats.design import standalone_scorer as scorer

SCORER = Path(scorer.__file__)


TRAIN, NEW = export_frame(300, 0), export_frame(60, 1)
NEW.loc[0, "x1"], NEW.loc[1, "x1"], NEW.loc[2, "x2"] = 1e6, -1e6, 1e-9  # out of range
NEW.loc[3, "x1"] = TRAIN["x1"].quantile(0.5)  # a value on (or next to) a cut point

CASES = {
    "bins": ("yg ~ bin(x1, 8) + bin(x2, 6)", "gaussian", {}),
    "missing levels": ("yb ~ bin(x3, 6) + C(h) + bin(x1, 4)", "binomial", {"missing": "separate"}),
    "bin of an expression": ("y ~ bin(np.log(x2), 6) + offset(np.log(exposure))", "poisson", {}),
    "linear terms": ("yg ~ bin(x1, 5) + log(x2) + x1:z + I(z ** 2) - 1", "gaussian", {}),
    "interactions": ("y ~ bin(x1, 5) + z*g + offset(log(exposure))", "poisson", {"offset": "off"}),
    # rows missing x3, h or z: NaN, as predict gives (issue 14)
    "missing='drop'": (
        "y ~ bin(x1, 5) + bin(x3, 6) + C(h) + z + offset(np.log(exposure))", "poisson",
        {"missing": "drop", "offset": "off"},
    ),
    "Treatment reference": ("yb ~ bin(x1, 5) + C(g, Treatment('b'))", "binomial", {}),
}


def _rows(frame: pd.DataFrame) -> list[dict]:
    return [{k: (None if v is None or (isinstance(v, float) and math.isnan(v)) else v)
             for k, v in row.items()} for row in frame.to_dict("records")]  # fmt: skip


def _close(a, b) -> None:
    np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_scorer_predicts_what_the_fitted_model_predicts(case):
    formula, family, kw = CASES[case]
    res = glm(formula, TRAIN, family=family, **kw).fit(lam=2e-3)
    spec = json.loads(json.dumps(res.to_spec()))
    for how in ("response", "link"):
        _close(scorer.predict(spec, _rows(NEW), type=how), res.predict(NEW, type=how))


@pytest.mark.parametrize("family", ["gaussian", "poisson"])
def test_estimators_on_frames_and_arrays(family):
    y = TRAIN["yg"] if family == "gaussian" else TRAIN["y"]
    cols = ["x1", "x2", "z"]
    est = BinarsityGLM(family=family, n_bins=6, lam=1e-3).fit(TRAIN[cols], y)
    _close(scorer.predict(est.to_spec(), _rows(NEW[cols])), est.predict(NEW[cols]))
    est = BinarsityGLM(family=family, n_bins=6, lam=1e-3).fit(TRAIN[cols].to_numpy(), y)
    rows = NEW[cols].to_numpy().tolist()  # positional columns: rows are sequences
    _close(scorer.predict(est.to_spec(), rows), est.predict(NEW[cols].to_numpy()))


def test_classifier_labels_and_probabilities():
    labels = np.where(TRAIN["yb"] > 0, "yes", "no")
    clf = BinarsityClassifier(n_bins=6, lam=1e-3).fit(TRAIN[["x1", "x2"]], labels)
    spec, rows = clf.to_spec(), _rows(NEW[["x1", "x2"]])
    _close(scorer.predict(spec, rows), clf.predict_proba(NEW[["x1", "x2"]])[:, 1])
    assert scorer.predict(spec, rows, type="class") == list(clf.predict(NEW[["x1", "x2"]]))


def test_it_imports_only_the_standard_library():
    tree = ast.parse(SCORER.read_text())
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import)
                for a in n.names}  # fmt: skip
    imported |= {n.module.split(".")[0] for n in ast.walk(tree)
                 if isinstance(n, ast.ImportFrom) and n.module}  # fmt: skip
    assert not any(isinstance(n, ast.ImportFrom) and n.level for n in ast.walk(tree))
    assert imported <= set(sys.stdlib_module_names), imported - set(sys.stdlib_module_names)


@pytest.mark.parametrize("case", ["missing levels", "missing='drop'"])
def test_it_runs_as_a_script_without_site_packages(tmp_path, case):
    formula, family, kw = CASES[case]
    res = glm(formula, TRAIN, family=family, **kw).fit(lam=2e-3)
    shutil.copy(SCORER, tmp_path / "standalone_scorer.py")
    (tmp_path / "model.json").write_text(json.dumps(res.to_spec()))
    NEW.to_csv(tmp_path / "rows.csv", index=False)  # missing values as empty fields
    out = subprocess.run(
        [sys.executable, "-I", "-S", "standalone_scorer.py", "model.json", "rows.csv"],
        cwd=tmp_path, capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    values = [float(r["prediction"]) for r in csv.DictReader(out.stdout.splitlines())]
    # CSV holds the data as text (repr of floats round trips), so the predictions agree;
    # with missing="drop" the rows missing x3, h or z are NaN in both (empty CSV fields)
    expected = res.predict(NEW)
    assert np.isnan(expected).any() == (case == "missing='drop'")
    _close(values, expected)


def test_errors_name_the_column_or_expression():
    res = glm("yg ~ bin(x1, 5) + C(g)", TRAIN).fit(lam=1e-3)
    spec = res.to_spec()
    with pytest.raises(ValueError, match="column 'g' has a level not seen"):
        scorer.predict(spec, [{"x1": 0.0, "g": "zzz"}])
    with pytest.raises(ValueError, match="column 'x1' is missing but has no level"):
        scorer.predict(spec, [{"x1": None, "g": "a"}])
    with pytest.raises(ValueError, match="column 'g' .* is missing from the row"):
        scorer.predict(spec, [{"x1": 0.0}])
    with pytest.raises(ValueError, match="not supported by the standalone scorer"):
        scorer.evaluate("__import__('os').getcwd()", {})


def test_values_on_the_cut_points_fall_in_the_right_closed_interval():
    res = glm("yg ~ bin(x1, 8)", TRAIN).fit(lam=1e-4)
    spec = res.to_spec()
    edges = spec["terms"][0]["edges"]
    new = pd.DataFrame({"x1": np.r_[edges, np.nextafter(edges, np.inf)]})
    _close(scorer.predict(spec, _rows(new)), res.predict(new))


def test_boolean_and_nan_inputs(tmp_path):
    """A boolean column used as a number (True/False in rows, ``True``/``False`` text in a
    CSV, as pandas writes it) is 1/0, and NaN is a missing value, as in ``predict``."""
    train, new = TRAIN.copy(), NEW.copy()
    for f in (train, new):
        f["flag"] = f["z"] > 0.2
    res = glm("yb ~ bin(x3, 5) + flag + I(2 * flag) + x1:flag", train, family="binomial",
              missing="separate").fit(lam=1e-3)  # fmt: skip
    spec = res.to_spec()
    rows = new.to_dict("records")  # NaN as NaN
    assert any(isinstance(r["x3"], float) and math.isnan(r["x3"]) for r in rows)
    _close(scorer.predict(spec, rows), res.predict(new))
    shutil.copy(SCORER, tmp_path / "standalone_scorer.py")
    (tmp_path / "model.json").write_text(json.dumps(spec))
    new.to_csv(tmp_path / "rows.csv", index=False)
    out = subprocess.run(
        [sys.executable, "-I", "-S", "standalone_scorer.py", "model.json", "rows.csv"],
        cwd=tmp_path, capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    _close([float(r["prediction"]) for r in csv.DictReader(out.stdout.splitlines())],
           res.predict(new))  # fmt: skip
    points = res.scorecard().score(new)  # affine in the log-odds (NaN: missing level)
    assert np.all(np.isfinite(points))
    assert abs(np.corrcoef(points, res.predict(new, type="link"))[0, 1]) > 1 - 1e-12
