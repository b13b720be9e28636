"""Unit tests of ``binarsity_stats.formula._missing``: which columns drop a training row
(``missing="drop"``, R's na.omit) and NaN predictions on new rows missing one of them
(R's na.exclude)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from binarsity_stats.formula._missing import check_predict_missing, missing_plan, predict_complete

DATA = pd.DataFrame(
    {"y": [1.0, 2.0, np.nan], "x": [0.1, np.nan, 0.3], "z": [1.0, 2.0, 3.0], "g": ["a", None, "b"]}
)


# ---------------------------------------------------------------- check_predict_missing


@pytest.mark.parametrize("value", [None, "nan", "error"])
def test_check_predict_missing_accepts_the_three_choices(value):
    check_predict_missing(value)


@pytest.mark.parametrize("value", ["drop", "NaN", 0, ["nan"]])
def test_check_predict_missing_refuses_others_by_name(value):
    with pytest.raises(ValueError, match=r"^missing must be None, 'nan' or 'error'; got"):
        check_predict_missing(value)


# ---------------------------------------------------------------- predict_complete


def _spy():
    calls = []

    def predict_rows(rows, offset):
        calls.append((rows, offset))
        return 10.0 * np.asarray(rows["x"], dtype=float) + (0.0 if offset is None else offset)

    return predict_rows, calls


def test_predict_complete_gives_nan_on_rows_missing_a_dropping_column():
    spec = SimpleNamespace(drop_columns=["x"])
    new = pd.DataFrame({"x": [1.0, np.nan, 3.0, np.nan], "z": [np.nan, 0.0, 0.0, 0.0]})
    predict_rows, calls = _spy()
    out = predict_complete(spec, new, np.array([0.5, 0.6, 0.7, 0.8]), "nan", predict_rows)
    np.testing.assert_array_equal(out, [10.5, np.nan, 30.7, np.nan])
    rows, offset = calls[0]
    assert list(rows.index) == [0, 2]  # only the complete rows are predicted
    np.testing.assert_array_equal(offset, [0.5, 0.7])  # the offset cut to them


def test_predict_complete_keeps_data_frames_and_their_columns():
    spec = SimpleNamespace(drop_columns=["x"])
    new = pd.DataFrame({"x": [np.nan, 2.0]})

    def predict_rows(rows, offset):
        return pd.DataFrame({"lo": rows["x"].to_numpy() - 1, "hi": rows["x"].to_numpy() + 1})

    out = predict_complete(spec, new, None, None, predict_rows)
    assert list(out.columns) == ["lo", "hi"] and len(out) == 2
    assert out.iloc[0].isna().all()
    np.testing.assert_array_equal(out.iloc[1].to_numpy(), [1.0, 3.0])


def test_predict_complete_passes_through_when_nothing_is_dropped():
    new = pd.DataFrame({"x": [np.nan, 2.0]})
    for spec, missing in ((SimpleNamespace(drop_columns=[]), None),
                          (SimpleNamespace(), None),
                          (SimpleNamespace(drop_columns=["x"]), "error"),  # the replay raises
                          (SimpleNamespace(drop_columns=["w"]), None)):  # fmt: skip
        predict_rows, calls = _spy()
        predict_complete(spec, new, None, missing, predict_rows)
        assert calls[0][0] is new


def test_predict_complete_all_rows_missing_is_all_nan():
    spec = SimpleNamespace(drop_columns=["x"])
    new = pd.DataFrame({"x": [np.nan, np.nan]})
    predict_rows, calls = _spy()
    out = predict_complete(spec, new, None, "nan", predict_rows)
    assert out.shape == (2,) and np.all(np.isnan(out))


def test_predict_complete_checks_the_offset_by_name():
    spec = SimpleNamespace(drop_columns=["x"])
    new = pd.DataFrame({"x": [np.nan, 2.0]})
    with pytest.raises(ValueError, match=r"^offset has 3 rows but the data has 2"):
        predict_complete(spec, new, np.zeros(3), "nan", _spy()[0])
    with pytest.raises(ValueError, match=r"^missing must be None"):
        predict_complete(spec, new, None, "drop", _spy()[0])


# ---------------------------------------------------------------- missing_plan


def test_missing_plan_follows_the_models_policy():
    assert missing_plan("y ~ bin(x, 4) + C(g) + z", DATA, "drop") == (["y"], ["g", "x", "z"])
    assert missing_plan("y ~ bin(x, 4) + C(g) + z", DATA, "error") == ([], [])
    assert missing_plan("y ~ bin(x, 4) + C(g) + z", DATA, "separate") == ([], [])


def test_missing_plan_a_terms_own_missing_wins():
    # keyword and positional missing= of bin() (3rd) and C() (4th)
    assert missing_plan("y ~ bin(x, 4, missing='separate') + C(g)", DATA, "drop") == (["y"], ["g"])
    assert missing_plan("y ~ bin(x, 4, 'separate') + z", DATA, "drop") == (["y"], ["z"])
    assert missing_plan("y ~ bin(x, 4, missing='drop') + C(g)", DATA, "error") == ([], ["x"])
    assert missing_plan("y ~ C(g, None, None, 'drop') + z", DATA, "error") == ([], ["g"])


def test_missing_plan_expands_the_dot_without_the_excluded_columns():
    lhs, rhs = missing_plan("y ~ .", DATA, "drop", exclude_columns=["z"])
    assert lhs == ["y"] and rhs == ["g", "x"]


def test_missing_plan_leaves_bad_formulas_to_build_design():
    assert missing_plan("y ~ bin(x,", DATA, "drop") == ([], [])
    assert missing_plan("~ x", DATA, "drop") == ([], [])
