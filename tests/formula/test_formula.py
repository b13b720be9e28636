"""The formula layer: bin()/C()/offset() terms, replay of learned state, bad input.

What is proved here: ``bin()`` learns exactly the engine Binarizer's cut points, hands
the solver codes (never dummy columns), and replays the same edges on new data and after
pickling; ``C()`` replays its levels and refuses unseen ones; offsets, responses and the
intercept are read as documented; every bad input raises an error naming the culprit.
"""

import pickle

import numpy as np
import pandas as pd
import pytest

from binarsity_stats.design._binarizer import Binarizer
from binarsity_stats.formula._formula import build_design
from binarsity_stats.formula._labels import format_cut, format_value
from binarsity_stats.formula._transforms import transform_context


@pytest.fixture
def frame():
    rng = np.random.default_rng(0)
    n = 300
    return pd.DataFrame(
        {
            "y": rng.normal(size=n),
            "age": rng.integers(18, 80, size=n),  # integers: builtin bin() would work on them
            "income": rng.lognormal(size=n),
            "sex": rng.choice(["m", "f"], size=n),
            "region": pd.Categorical(rng.choice(["n", "s", "e"], size=n), ["s", "n", "e"]),
            "z": rng.normal(size=n),
            "exposure": rng.uniform(0.5, 2.0, size=n),
            "odd name": rng.normal(size=n),
        }
    )


def test_bin_learns_the_engine_binarizer_edges_and_feeds_codes(frame):
    spec, design, y, _ = build_design("y ~ bin(age, 7) + bin(income)", frame, n_bins=12)
    ref_age = Binarizer(n_bins=7).fit(frame[["age"]])
    ref_inc = Binarizer(n_bins=12).fit(frame[["income"]])
    np.testing.assert_array_equal(spec.blocks[0].edges, ref_age.edges_[0])
    np.testing.assert_array_equal(spec.blocks[1].edges, ref_inc.edges_[0])
    # codes, not dummies: one uint8 row per term, no dense columns at all
    assert design.codes.dtype == np.uint8
    assert design.codes.shape == (2, len(frame))
    assert design.dense is None
    np.testing.assert_array_equal(design.codes, np.vstack([
        ref_age.transform_codes(frame[["age"]]), ref_inc.transform_codes(frame[["income"]])
    ]))  # fmt: skip
    np.testing.assert_array_equal(
        design.block_ptr, np.cumsum([0, ref_age.n_bins_[0], ref_inc.n_bins_[0]])
    )
    np.testing.assert_array_equal(y, frame["y"].to_numpy())


def test_bin_replays_identical_edges_on_new_data_and_after_pickling(frame):
    spec, design, _, _ = build_design("y ~ bin(income, 10) + bin(`odd name`, 5)", frame)
    rows = np.random.default_rng(1).permutation(len(frame))[:50]
    new = frame.iloc[rows].drop(columns="y")
    replay = spec.transform(new)
    np.testing.assert_array_equal(replay.codes, design.codes[:, rows])
    # pickle stores formulaic's state; our transform functions are re-created on replay
    spec2 = pickle.loads(pickle.dumps(spec))
    np.testing.assert_array_equal(spec2.blocks[0].edges, spec.blocks[0].edges)
    np.testing.assert_array_equal(spec2.transform(new).codes, design.codes[:, rows])
    # the replay really uses the stored edges: searchsorted(edges, x, side="left")
    far = pd.DataFrame({"income": [-1e9, spec.blocks[0].edges[3], 1e9], "odd name": 0.0})
    codes = spec2.transform(far).codes[0]
    np.testing.assert_array_equal(codes, [0, 3, len(spec.blocks[0].edges)])


def test_bin_weighted_quantiles_use_sample_weight(frame):
    w = np.random.default_rng(2).integers(1, 4, size=len(frame)).astype(float)
    spec, _, _, _ = build_design("y ~ bin(income, 8)", frame, sample_weight=w)
    ref = Binarizer(n_bins=8).fit(frame[["income"]], sample_weight=w)
    np.testing.assert_array_equal(spec.blocks[0].edges, ref.edges_[0])


def test_param_names_are_readable_intervals(frame):
    spec, _, _, _ = build_design("y ~ bin(age, 4) + C(sex)", frame)
    e = spec.blocks[0].edges
    names = spec.param_names()
    # right-closed intervals (issue 10: "[a, inf]" read as "a and above")
    assert names[0] == f"bin(age, 4)[(-inf, {format_value(e[0])}]]"
    assert names[1] == f"bin(age, 4)[({format_value(e[0])}, {format_value(e[1])}]]"
    assert names[len(e)] == f"bin(age, 4)[({format_value(e[-1])}, inf]]"
    assert names[-2:] == ["C(sex)[f]", "C(sex)[m]"]
    assert format_cut(38.0) == "38.0" and format_cut(0.1 + 0.2) == "0.3"


def test_categorical_codes_levels_and_bare_text_columns(frame):
    spec, design, _, _ = build_design("y ~ C(region) + sex", frame)
    region, sex = spec.blocks
    assert region.kind == sex.kind == "categorical"
    assert region.levels == ("s", "n", "e")  # the categorical dtype's order
    assert sex.term == "C(sex)" and sex.levels == ("f", "m")  # bare text read as C()
    np.testing.assert_array_equal(design.codes[1], (frame["sex"] == "m").to_numpy())
    assert design.dense is None


def test_numeric_terms_are_dense_and_offset_is_summed(frame):
    spec, design, _, _ = build_design(
        "y ~ bin(age) + z + log(exposure) + offset(log(exposure)) + offset(z)", frame
    )
    assert spec.dense_columns == ["z", "log(exposure)"]
    np.testing.assert_allclose(design.dense[:, 1], np.log(frame["exposure"]))
    np.testing.assert_allclose(design.offset, np.log(frame["exposure"]) + frame["z"])
    assert spec.fit_intercept


def test_no_intercept_formula(frame):
    spec, _, _, _ = build_design("y ~ bin(age) - 1", frame)
    assert not spec.fit_intercept


def test_python_builtin_bin_is_never_used(frame):
    # with the builtin, bin(age) on integers would give strings like '0b10010'
    ctx = transform_context()
    assert ctx["bin"] is not bin
    _, design, _, _ = build_design("y ~ bin(age, 3)", frame)
    assert design.codes.max() <= 2


def test_missing_values_policy(frame):
    f = frame.copy()
    f["income"] = f["income"].where(np.arange(len(f)) % 10 != 0)
    with pytest.raises(ValueError, match="'income'.*missing"):
        build_design("y ~ bin(income)", f)
    spec, design, _, _ = build_design("y ~ bin(income, 5)", f, missing="separate")
    block = spec.blocks[0]
    assert block.has_missing_level and block.chain_length == block.n_levels - 1
    nan_rows = f["income"].isna().to_numpy()
    assert np.all(design.codes[0, nan_rows] == block.n_levels - 1)
    assert np.all(design.codes[0, ~nan_rows] < block.n_levels - 1)
    assert spec.param_names()[block.n_levels - 1] == "bin(income, 5)[missing]"
    # a model without a missing level refuses NaN at predict time, naming the column
    spec_full, _, _, _ = build_design("y ~ bin(income, 5)", frame)
    with pytest.raises(ValueError, match="'income'"):
        spec_full.transform(f)


def test_response_kinds(frame):
    _, _, y, resp = build_design("sex ~ bin(age)", frame, family="binomial")
    assert resp.kind == "factor" and resp.event == "m" and resp.levels == ("f", "m")
    np.testing.assert_array_equal(y, (frame["sex"] == "m").to_numpy())
    _, _, y, resp = build_design("I(z > 0) ~ bin(age)", frame, family="binomial")
    assert resp.kind == "boolean"
    np.testing.assert_array_equal(y, (frame["z"] > 0).to_numpy())
    with pytest.raises(ValueError, match="3 level"):
        build_design("region ~ bin(age)", frame, family="binomial")
    with pytest.raises(ValueError, match="numeric response"):
        build_design("sex ~ bin(age)", frame, family="gaussian")
    f = frame.copy()
    f.loc[3, "y"] = np.nan
    with pytest.raises(ValueError, match="response 'y'"):
        build_design("y ~ bin(age)", f)


@pytest.mark.parametrize(
    ("formula", "error", "match"),
    [
        ("y ~ bin(agex)", ValueError, r"\['agex'\]"),
        ("nope ~ bin(age)", ValueError, r"\['nope'\]"),
        ("y ~ bin(sex)", TypeError, "column 'sex'.*C\\(sex\\)"),
        ("y ~ bin(age):z", ValueError, "cannot be interacted"),
        ("y ~ log(bin(age))", ValueError, "outermost"),
        ("y ~ bin(age, 1)", ValueError, "n_bins"),
        ("y ~ bin(age)", ValueError, "no response"),
    ],
)
def test_bad_formulas_name_the_culprit(frame, formula, error, match):
    if match == "no response":
        formula = "~ bin(age)"
    with pytest.raises(error, match=match):
        build_design(formula, frame)


@pytest.mark.parametrize(
    ("formula", "match"),
    [
        ("t ~ bin(age)", r"response 't' has date/time dtype datetime64"),
        ("d ~ bin(age)", r"response 'd' has date/time dtype timedelta64"),
        ("y ~ t", r"column 't' has date/time dtype.*number.*or write C\(t\)"),
        ("y ~ bin(age) + d", r"column 'd' has date/time dtype timedelta64.*C\(d\)"),
        ("y ~ tz", r"column 'tz' has date/time dtype datetime64\[.*UTC\]"),
        ("y ~ p", r"column 'p' has date/time dtype period"),
        ("y ~ z:t", r"column 't' has date/time dtype datetime64[^;]*; .*bin\(\) it\)\.$"),
        ("I(t) ~ z", r"reads date/time column\(s\) \['t'\]"),
        ("y ~ bin(t)", r"bin\(\) needs a numeric column; column 't'"),
    ],
)
def test_dates_and_durations_are_refused_by_name(frame, formula, match):
    """A bare date/time would become a categorical with one level per date; a date
    response would leak NumPy's UFuncTypeError. Both are refused, naming the column."""
    t = pd.Series(pd.date_range("2000", periods=len(frame)))
    f = frame.assign(t=t, d=t - t[0], tz=t.dt.tz_localize("UTC"), p=t.dt.to_period("D"))
    with pytest.raises(TypeError, match=match) as info:
        build_design(formula, f)
    assert type(info.value) is TypeError
    # the explicit categorical and a numeric conversion stay available
    assert build_design("y ~ C(t)", f)[0].blocks[0].n_levels == len(frame)
    days = f.assign(days=f["d"].dt.days)
    assert build_design("y ~ bin(days, 5)", days)[0].blocks[0].kind == "bin"


def test_bin_replay_uses_the_binarizer_coding_rule(frame):
    """bin() codes through the Binarizer's function, NaN and inf errors named."""
    f = frame.assign(income=frame["income"].where(frame.index % 7 > 0))
    spec, design, _, _ = build_design("y ~ bin(income, 9)", f, missing="separate")
    ref = Binarizer(n_bins=9, missing="separate").fit(f[["income"]])
    np.testing.assert_array_equal(design.codes[0], ref.transform_codes(f[["income"]])[0])
    spec, _, _, _ = build_design("y ~ bin(income, 9)", frame)
    with pytest.raises(ValueError, match="column 'income' contains missing values"):
        spec.transform(f)
    with pytest.raises(ValueError, match="column 'income' contains infinite values"):
        spec.transform(frame.assign(income=np.inf))


def test_predict_time_errors_name_the_column(frame):
    spec, _, _, _ = build_design("y ~ bin(age) + C(sex) + z:region", frame)
    with pytest.raises(ValueError, match=r"\['age'\]"):
        spec.transform(frame.drop(columns="age"))
    with pytest.raises(ValueError, match="'sex'.*'x'"):
        spec.transform(frame.assign(sex="x"))
    with pytest.raises(ValueError, match="'region'"):
        spec.transform(frame.assign(region="w"))


def test_dense_terms_with_nan_are_refused_by_name(frame):
    f = frame.copy()
    f.loc[0, "z"] = np.nan
    with pytest.raises(ValueError, match="'z'"):
        build_design("y ~ bin(age) + z", f)
