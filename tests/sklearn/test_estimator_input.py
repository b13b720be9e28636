"""The survival estimators read R's status coding as the formula's ``Surv()`` does (issue 22).

``Surv(time, status)`` reads a status whose largest value is 2 as R's
``survival::Surv`` does, 1 = censored / 2 = event (``survival::lung``'s coding), with a
note in the summary. The estimators (``family="cox"`` with a structured or two-column y)
read their y's status through the same function (``_cox.read_status``, called by
``_cox.survival_columns``), so:

* a fit on the 1/2 coding is the fit on the 0/1 coding of the same events, bit for bit
  (coefficients, λ = "theory", baseline hazard, Harrell's C), for a structured y, two
  columns and the CV estimator;
* ``summary()`` carries the formula's note, and only for the 1/2 coding;
* a status of {0, 1, 2} or with any other value is refused, naming y's event field or
  column and the values.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_array_equal

from binarsity_stats import BinarsityGLM, BinarsityGLMCV


def _lung_like(n=1000, seed=5):
    """Survival data coded as ``survival::lung``: status 1 = censored, 2 = event."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"age": rng.uniform(40, 80, n), "ph_karno": rng.uniform(50, 100, n)})
    eta = 0.9 * (X.age > 62) - 0.6 * (X.ph_karno > 80)
    t = rng.exponential(np.exp(-eta))
    c = rng.exponential(1.5, n)
    time = np.minimum(t, c).round(3)  # tied times, as in real data
    event = (t <= c).astype(int)
    return X, time, event


def _structured(time, status, dtype):
    y = np.empty(len(time), dtype=[("status", dtype), ("time", "f8")])
    y["status"], y["time"] = status, time
    return y


X, TIME, EVENT = _lung_like()
STATUS = EVENT + 1  # R's coding


def _same_fit(a, b):
    assert_array_equal(a.coef_, b.coef_)
    assert a.lam_ == b.lam_ and a.intercept_ == b.intercept_ == 0.0
    assert_array_equal(a.baseline_hazard_[0], b.baseline_hazard_[0])
    assert_array_equal(a.baseline_hazard_[1], b.baseline_hazard_[1])


def test_structured_y_coded_1_2_is_the_fit_on_0_1_at_the_defaults():
    r12 = BinarsityGLM(family="cox").fit(X, _structured(TIME, STATUS, "i8"))
    r01 = BinarsityGLM(family="cox").fit(X, _structured(TIME, EVENT, "i8"))
    rtf = BinarsityGLM(family="cox").fit(X, _structured(TIME, EVENT.astype(bool), "?"))
    _same_fit(r12, r01)
    _same_fit(rtf, r01)
    assert "_r_coding" not in vars(r12)  # how y was coded is not fitted state
    assert np.any(r01.coef_ != 0)  # the fit is not the null model: the test can fail
    assert r12.score(X, _structured(TIME, STATUS, "i8")) == r01.score(
        X, _structured(TIME, EVENT, "i8")
    )


def test_two_columns_coded_1_2_are_the_fit_on_0_1():
    r12 = BinarsityGLM(family="cox").fit(X, pd.DataFrame({"time": TIME, "status": STATUS}))
    r01 = BinarsityGLM(family="cox").fit(X, np.column_stack([TIME, EVENT]))
    _same_fit(r12, r01)
    # the same folds for both (random_state: shuffled folds differ between calls otherwise)
    cv12 = BinarsityGLMCV(family="cox", cv=3, n_lambdas=8, random_state=0).fit(
        X, np.column_stack([TIME, STATUS]))
    cv01 = BinarsityGLMCV(family="cox", cv=3, n_lambdas=8, random_state=0).fit(
        X, np.column_stack([TIME, EVENT]))
    _same_fit(cv12, cv01)


def test_summary_notes_r_coding_as_the_formula_does():
    y12 = _structured(TIME, STATUS, "i8")
    y01 = _structured(TIME, EVENT, "i8")
    est = BinarsityGLM(family="cox").fit(X, y12)
    text = " ".join(str(est.summary(X, y12)).split())
    assert "R's coding" in text and "2 = event, 1 = censored" in text
    assert "status 2 (censored = 1)" in text
    plain = " ".join(str(BinarsityGLM(family="cox").fit(X, y01).summary(X, y01)).split())
    assert "R's coding" not in plain and "event = 1 (censored = 0)" in plain
    # the results of the 1/2 fit are those of the 0/1 fit: the same solution and events
    assert_array_equal(est.results(X, y12).model.survival[:, 1], EVENT.astype(float))


def test_status_0_1_2_is_refused_naming_the_field_or_column_and_values():
    mixed = STATUS.copy()
    mixed[3] = 0  # 0, 1 and 2
    with pytest.raises(ValueError, match=r"event field 'status'.*R's 1 = censored / 2 = event "
                       r"coding, but other values occur, such as \[0\.0\]"):  # fmt: skip
        BinarsityGLM(family="cox").fit(X, _structured(TIME, mixed, "i8"))
    frame = pd.DataFrame({"time": TIME, "dead": mixed})
    with pytest.raises(ValueError, match=r"event column 'dead'.*such as \[0\.0\]"):
        BinarsityGLM(family="cox").fit(X, frame)
    with pytest.raises(ValueError, match=r"event column 1.*such as \[0\.0\]"):
        BinarsityGLM(family="cox").fit(X, np.column_stack([TIME, mixed]))


def test_other_status_values_are_refused_naming_the_column_and_values():
    with pytest.raises(ValueError, match=r"event column 'status'.*0/1.*R's 1/2.*such as \[3\.0\]"):
        BinarsityGLM(family="cox").fit(X, pd.DataFrame({"time": TIME, "status": EVENT * 3}))
    with pytest.raises(ValueError, match=r"event field 'status'.*such as \[-1\.0\]"):
        BinarsityGLM(family="cox").fit(X, _structured(TIME, EVENT - (EVENT == 0), "i8"))
    est = BinarsityGLM(family="cox").fit(X, np.column_stack([TIME, EVENT]))
    with pytest.raises(ValueError, match=r"event column 1.*such as \[2\.5\]"):
        est.score(X, np.column_stack([TIME, np.where(EVENT == 1, 2.5, 0.0)]))
