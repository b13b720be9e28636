"""Interval labels say what the codes do: right-closed bins, ``= v`` for one value.

Codes are ``searchsorted(edges, x, side="left")``, so a bin holds low < x <= high. The
labels used to read ``[4.0, inf]`` ("4 and above") for the bin of values above 4. What
is proved here: on hard data (ties, heavy tails, tiny and huge scales, weights, missing
values) every training value lies in the interval its label names, and a bin is
labelled ``= v`` exactly when its training rows held the single value v; the same
labels appear in params, shape functions (merged or not), cut-point tables, the summary
and the CLI; ``precision=`` rounds them; models saved before this release still load
and print.
"""

import io
import math
import pickle
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from binarsity_stats import glm
from binarsity_stats._cli import main
from binarsity_stats.formula._formula import build_design
from binarsity_stats.formula._labels import format_value, interval_label

DATA = Path(__file__).resolve().parents[1] / "data"
_NUM = r"(-?inf|[-+0-9.e]+)"


def _contains(label: str, x: float) -> bool:
    """Whether the value x lies in the set a label names."""
    if label.startswith("= "):
        return float(label[2:]) == x
    m = re.fullmatch(rf"\({_NUM}, {_NUM}\]", label)
    assert m, f"not a right-closed interval label: {label!r}"
    low, high = float(m.group(1)), float(m.group(2))
    return low < x <= high


def _hard_columns(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    x_nan = rng.normal(size=n)
    x_nan[rng.random(n) < 0.1] = np.nan
    return {
        "ties": rng.integers(0, 6, size=n).astype(float),  # few values: '= v' bins
        "mass": np.where(rng.random(n) < 0.7, 0.0, rng.exponential(size=n)),  # point mass
        "cauchy": rng.standard_cauchy(size=n),  # heavy tails
        "tiny": rng.normal(size=n) * 1e-9,
        "huge": rng.lognormal(size=n) * 1e12,
        "with_nan": x_nan,
    }


@pytest.mark.parametrize("weighted", [False, True])
def test_every_training_value_lies_in_the_interval_its_label_names(weighted):
    rng = np.random.default_rng(11)
    n = 600
    cols = _hard_columns(rng, n)
    df = pd.DataFrame(cols)
    df["y"] = rng.normal(size=n)
    sw = rng.exponential(size=n) if weighted else None
    rhs = " + ".join(f"bin({c}, 12)" for c in cols)
    spec, design, _, _ = build_design(f"y ~ {rhs}", df, missing="separate", sample_weight=sw)
    for j, block in enumerate(spec.blocks):
        x = df[block.column].to_numpy()
        labels = block.level_labels(precision=17)  # exact bounds for the check
        codes = design.codes[j]
        for code in np.unique(codes):
            rows = codes == code
            label = labels[code]
            if np.isnan(x[rows]).all():
                assert label == "missing"
                continue
            inside = [_contains(label, v) for v in x[rows]]
            assert all(inside), (block.column, label, x[rows][~np.array(inside)][:3])
            # '= v' exactly when the bin held one distinct training value
            assert label.startswith("= ") == (np.unique(x[rows]).size == 1), (block.column, label)
        # the label of a value's bin never names another bin: labels are distinct
        assert len(set(labels)) == len(labels)


def test_labels_read_as_right_closed_intervals_and_single_values():
    assert interval_label(4.0, math.inf) == "(4, inf]"
    assert interval_label(-math.inf, 1.0) == "(-inf, 1]"
    assert interval_label(1.0, 2.0) == "(1, 2]"
    assert interval_label(4.0, 5.0, single=5.0) == "= 5"
    assert interval_label(0.123456789, 1e13, precision=3) == "(0.123, 1e+13]"
    assert format_value(38.0) == "38" and format_value(0.1 + 0.2) == "0.3"
    assert format_value(1.5e-7) == "1.5e-07" and format_value(-math.inf) == "-inf"
    with pytest.raises(ValueError, match="precision"):
        format_value(1.0, 0)
    with pytest.raises(TypeError, match="precision"):
        format_value(1.0, 2.5)


@pytest.fixture(scope="module")
def fit():
    rng = np.random.default_rng(5)
    n = 400
    df = pd.DataFrame({"age": rng.integers(18, 30, size=n).astype(float),
                       "income": rng.lognormal(size=n) * 1000.123456})  # fmt: skip
    df["y"] = np.where(df["age"] > 24, 1.0, 0.0) + 0.3 * rng.normal(size=n)
    return glm("y ~ bin(age, 8) + bin(income, 6)", df).fit(lam=1e-3), df


def test_tables_summary_and_params_use_the_same_labels(fit):
    res, df = fit
    age = res.model.spec.blocks[0]
    # integer ages: bins holding one age are labelled by it
    assert any(lab.startswith("= ") for lab in age.level_labels())
    assert not any(name.endswith(".0]") for name in res.params.index)
    shapes = res.shape_functions()
    assert list(shapes["label"][shapes["term"] == "bin(age, 8)"]) == age.level_labels()
    merged = res.shape_functions(merge=True)
    cuts = res.cut_points()
    assert len(cuts) >= 1
    for _, row in cuts.iterrows():
        seg = merged[merged["term"] == row["term"]]
        assert row["left"] in set(seg["label"]) and row["right"] in set(seg["label"])
        left = seg[seg["label"] == row["left"]].iloc[0]
        assert left["high"] == row["cut"]
    for _, seg in merged[merged["term"] == "bin(age, 8)"].iterrows():
        x = df["age"][(df["age"] > seg["low"]) & (df["age"] <= seg["high"])]
        assert all(_contains(seg["label"], v) for v in x)
    text = res.summary().as_text()
    for label in cuts["left"]:
        assert label in text
    assert "[4.0, inf]" not in text and "right-closed" in text
    # precision rounds every label of the report
    short = res.summary(precision=2).as_text()
    inc = res.cut_points(precision=2)
    inc = inc[inc["term"] == "bin(income, 6)"]
    for label in inc["left"]:
        assert label in short
        for number in re.findall(r"-?[0-9][0-9.e+-]*", label):
            assert float(number) == float(f"{float(number):.2g}")  # two significant digits
    with pytest.raises(ValueError, match="precision"):
        res.shape_functions(precision=0)


def test_refit_names_merged_segments_with_the_same_labels(fit):
    res, _ = fit
    _, names = res.selected_design()
    labels = set(res.shape_functions(merge=True)["label"])
    for name in names[1:]:
        assert name.split("[", 1)[1][:-1] in labels


def test_models_saved_before_the_labels_changed_load_and_print():
    path = DATA / "stored_model_v0.1.0.pkl"
    with open(path, "rb") as fh:
        res = pickle.load(fh)["models"]["results"]
    block = res.model.spec.blocks[0]
    assert block.single_values is None  # not recorded then: plain intervals
    assert all(lab.startswith("(") and lab.endswith("]") for lab in block.level_labels())
    text = str(res.summary(precision=3))
    assert "right-closed" in text and "(-inf, " in text
    assert res.shape_functions(merge=True)["label"].str.len().min() > 0


def test_cli_prints_right_closed_labels_with_precision(tmp_path):
    rng = np.random.default_rng(2)
    n = 300
    df = pd.DataFrame({"x": rng.normal(size=n) * 1000})
    df["y"] = (df["x"] > 100).astype(float) + 0.1 * rng.normal(size=n)
    csv = tmp_path / "d.csv"
    df.to_csv(csv, index=False)
    buf = io.StringIO()
    argv = ["fit", "y ~ bin(x, 10)", "--data", str(csv), "--lam", "0.001", "--precision", "2"]
    assert main(argv, out=buf) == 0
    out = buf.getvalue()
    assert re.search(r"\(-inf, -?[0-9.e+]+\]", out)
    assert re.search(r"\([-0-9.e+]+, inf\]", out)
    assert ", inf]" in out and "inf]" in out and "[-inf" not in out
