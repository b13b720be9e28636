"""Unit tests of ``binarsity_stats.formula._response``: how the left-hand side of a
formula is read (numeric, boolean, two-level factor, ``cbind()`` counts, ``Surv()``),
from the left-hand side formulaic materialises, as ``build_design`` hands it over."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from formulaic import model_matrix

from binarsity_stats.families import _cox
from binarsity_stats.formula._response import Response, _cbind_trials, _is_logical, read_response
from binarsity_stats.formula._transforms import transform_context

DATA = pd.DataFrame(
    {
        "y": [0.5, 1.5, -2.0, 3.0],
        "flag": [True, False, True, True],
        "sex": ["f", "m", "m", "f"],
        "grade": ["a", "b", "c", "a"],
        "s": [1.0, 0.0, 3.0, 2.0],
        "f": [1.0, 0.0, 1.0, 2.0],
        "t": [5.0, 3.0, 3.0, 8.0],
        "e": [1.0, 0.0, 1.0, 1.0],
        "e12": [2.0, 1.0, 2.0, 2.0],
    }
)


def _read(lhs: str, family="gaussian", data=DATA):
    mm = model_matrix(f"{lhs} ~ 1", data, context=transform_context(), na_action="ignore")
    return read_response(mm.lhs, lhs, family, data)


def test_numeric_response():
    y, resp, trials = _read("y")
    np.testing.assert_array_equal(y, DATA["y"].to_numpy())
    assert resp == Response(name="y", kind="numeric") and trials is None
    assert resp.describe() == "y" and y.dtype == np.float64


def test_boolean_column_and_comparison_are_boolean_responses():
    y, resp, _ = _read("flag", "binomial")
    np.testing.assert_array_equal(y, [1.0, 0.0, 1.0, 1.0])
    assert (resp.kind, resp.event) == ("boolean", "True")
    y, resp, _ = _read("I(y > 1)", "binomial")
    np.testing.assert_array_equal(y, [0.0, 1.0, 0.0, 1.0])
    assert resp.kind == "boolean" and resp.name == "I(y > 1)"


def test_two_level_factor_counts_its_second_level_as_the_event():
    y, resp, _ = _read("sex", "binomial")
    np.testing.assert_array_equal(y, [0.0, 1.0, 1.0, 0.0])
    assert (resp.kind, resp.event, resp.levels) == ("factor", "m", ("f", "m"))
    assert resp.describe() == "sex == 'm'"


def test_factor_responses_the_family_cannot_take_are_refused_by_name():
    with pytest.raises(ValueError, match=r"^response 'grade' is categorical with 3 level\(s\) \['a', 'b', 'c'\]; binomial needs exactly two levels"):
        _read("grade", "binomial")
    with pytest.raises(ValueError, match=r"^response 'sex' is categorical .*family='gaussian' needs a numeric response"):
        _read("sex", "gaussian")


def test_cbind_is_a_proportion_with_the_trials():
    y, resp, trials = _read("cbind(s, f)", "binomial")
    np.testing.assert_array_equal(trials, [2.0, 0.0, 4.0, 4.0])
    np.testing.assert_array_equal(y, [0.5, 0.0, 0.75, 0.5])  # 0 trials: y = 0 (weight 0)
    assert (resp.kind, resp.event) == ("counts", "successes")
    with pytest.raises(ValueError, match=r"^response 'cbind\(s, f\)': cbind\(successes, failures\) is a binomial response; family='poisson'"):
        _read("cbind(s, f)", "poisson")
    bad = DATA.assign(f=[1.0, -1.0, 0.0, 0.0])
    with pytest.raises(ValueError, match=r"^response 'cbind\(s, f\)' contains negative counts"):
        _read("cbind(s, f)", "binomial", bad)
    bad = DATA.assign(f=[1.0, np.nan, 0.0, 0.0])
    with pytest.raises(ValueError, match=r"contains missing or infinite counts"):
        _read("cbind(s, f)", "binomial", bad)


def test_cbind_trials_from_the_data():
    np.testing.assert_array_equal(_cbind_trials("cbind(s, f)", DATA, None, "cbind(s, f) ~ x"),
                                  [2.0, 0.0, 4.0, 4.0])  # fmt: skip
    assert _cbind_trials("y", DATA, None, "y ~ x") is None


def test_surv_is_the_packed_survival_response_of_cox():
    y, resp, values = _read("Surv(t, e)", "cox")
    np.testing.assert_array_equal(y, _cox.encode(DATA["t"], DATA["e"]))
    assert (resp.kind, resp.event, resp.levels) == ("survival", "event", None)
    np.testing.assert_array_equal(values, DATA[["t", "e"]].to_numpy())
    # R's 1 = censored / 2 = event coding
    y, resp, values = _read("Surv(t, e12)", "cox")
    np.testing.assert_array_equal(y, _cox.encode(DATA["t"], DATA["e"]))
    assert (resp.event, resp.levels) == ("2", ("1", "2"))
    np.testing.assert_array_equal(values[:, 1], DATA["e"].to_numpy())


def test_survival_and_family_must_agree():
    with pytest.raises(ValueError, match=r"^response 'Surv\(t, e\)': Surv\(time, event\) is the response of family='cox'; family='poisson'"):
        _read("Surv(t, e)", "poisson")
    with pytest.raises(ValueError, match=r"^family='cox' needs a survival response Surv\(time, event\); got 'y'"):
        _read("y", "cox")
    bad = DATA.assign(e=[1.0, 0.5, 1.0, 0.0])
    with pytest.raises(ValueError, match=r"^response 'Surv\(t, e\)': "):
        _read("Surv(t, e)", "cox", bad)


def test_a_numeric_response_with_missing_values_is_refused_by_name():
    with pytest.raises(ValueError, match=r"^response 'y' \(y\) contains missing or infinite values"):
        _read("y", "gaussian", DATA.assign(y=[1.0, np.nan, 2.0, 3.0]))


@pytest.mark.parametrize(
    ("expr", "logical"),
    [("I(a > 0)", True), ("I((a == 1) | (b < 2))", True), ("y", False), ("np.log(y)", False),
     ("I(a + )", False), ("`weird name` > 3", True)],  # fmt: skip
)
def test_is_logical(expr, logical):
    assert _is_logical(expr) is logical
