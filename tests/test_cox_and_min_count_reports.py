"""Summaries and plots of Cox fits, min_bin_count and survival y (found by an audit).

* the summary's df label and note, and the path plot's df label, name the intercept only
  when the model has a constant (not for ``family="cox"`` nor ``'- 1'``); the Cox note
  names the ties used;
* the estimators' ``summary``/``plot_shapes`` work for ``family="cox"`` (the rebuilt
  formula reads ``Surv(time, event)``) and for ``min_bin_count`` > 1 (the rebuilt
  formula passes ``min_count=``), with the numbers of the equivalent ``glm()`` fit;
* a survival ``y`` with a third (strata) field is refused with a pointer to
  ``strata()`` in a formula.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

import binarsity_stats as bs


def _frame(seed=0, n=400):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"age": rng.uniform(20, 80, n), "bmi": rng.normal(25, 4, n)})
    eta = 0.9 * (df["age"] > 55) - 0.5 * (df["bmi"] < 23)
    t = rng.exponential(np.exp(-eta))
    c = rng.exponential(1.5, n)
    df["time"] = np.round(np.minimum(t, c), 2)  # rounded: tied times
    df["event"] = (t <= c).astype(int)
    df["y"] = eta + rng.standard_t(3, n)  # heavy-tailed noise
    df["w"] = rng.uniform(0.2, 3.0, n)
    return df


def _header(summary):
    """The summary's text and a lookup of a header field's value by its label."""
    text = summary.as_text()

    def field(label):
        found = re.search(re.escape(label) + r":\s+(\S+)", text)
        return None if found is None else found.group(1)

    return text, field


@pytest.mark.parametrize(
    "formula, family, constant",
    [
        ("Surv(time, event) ~ bin(age) + bin(bmi)", "cox", False),
        ("y ~ bin(age) + bin(bmi) - 1", "gaussian", True),  # absorbed by the first block
        ("y ~ bin(age) + bin(bmi)", "gaussian", True),
    ],
)
def test_summary_df_label_names_the_intercept_only_with_a_constant(formula, family, constant):
    res = bs.glm(formula, _frame(), family=family, sample_weight="w").fit()
    text, field = _header(res.summary())
    label = "Df (jumps+intercept+unpen.)" if constant else "Df (jumps+unpen.)"
    assert field(label) == str(res.df)
    note = "jumps (cut-points kept) + intercept + unpenalized"
    assert (note in " ".join(text.split())) == constant


def test_cox_df_has_no_intercept_and_path_plot_says_so():
    model = bs.glm("Surv(time, event) ~ bin(age) + bin(bmi)", _frame(), family="cox")
    res = model.fit()
    assert res.df == res.n_jumps  # no constant, no unpenalised parameter
    fig = model.fit_path(n_lambdas=4).plot_path(kind="df")
    assert fig.axes[0].get_ylabel() == "df (jumps + unpenalized)"
    import matplotlib.pyplot as plt

    plt.close(fig)
    gauss = bs.glm("y ~ bin(age)", _frame()).fit_path(n_lambdas=3).plot_path(kind="df")
    assert gauss.axes[0].get_ylabel() == "df (jumps + intercept + unpenalized)"
    plt.close(gauss)


@pytest.mark.parametrize("family, ties", [("cox", "Breslow"), (("cox", "efron"), "Efron")])
def test_cox_summary_note_names_the_ties_used(family, ties):
    res = bs.glm("Surv(time, event) ~ bin(age)", _frame(), family=family).fit()
    text = " ".join(res.summary().as_text().split())
    assert f"with {ties}'s ties" in text
    other = {"Breslow": "Efron", "Efron": "Breslow"}[ties]
    assert f"{other}'s ties" not in text and f"{other} ties" not in text


def _surv_y(df):
    y = np.empty(len(df), dtype=[("event", bool), ("time", float)])
    y["event"], y["time"] = df["event"] == 1, df["time"]
    return y


def test_cox_estimator_summary_and_plots_equal_the_formula_fit():
    df = _frame()
    X, y = df[["age", "bmi"]], _surv_y(df)
    est = bs.BinarsityGLM(family="cox", lam=0.01).fit(X, y, sample_weight=df["w"])
    res = est.results(X, y, sample_weight=df["w"])
    ref = bs.glm("Surv(time, event) ~ bin(age) + bin(bmi)", df, family="cox",
                 sample_weight="w").fit(lam=0.01)  # fmt: skip
    np.testing.assert_allclose(res.coef, ref.coef, rtol=1e-6, atol=1e-9)
    assert res.llf == pytest.approx(ref.llf, rel=1e-9)
    assert res.concordance == pytest.approx(est.score(X, y, sample_weight=df["w"]), rel=1e-12)
    text, field = _header(est.summary(X, y, sample_weight=df["w"]))
    assert "Surv(time, event)" in text and field("Df (jumps+unpen.)") == str(ref.df)
    import matplotlib.pyplot as plt

    fig = est.plot_shapes(X, y, sample_weight=df["w"])
    assert any("hazard" in a.get_ylabel() for a in fig.axes)
    plt.close(fig)


def test_cox_estimator_summary_with_features_named_time_and_event():
    df = _frame()
    X = df[["age", "bmi"]].rename(columns={"age": "time", "bmi": "event"})
    y = _surv_y(df)
    est = bs.BinarsityGLM(family="cox", lam=0.01).fit(X, y)
    text = est.summary(X, y).as_text()
    assert "Surv(time_, event_)" in text


def test_min_bin_count_estimator_summary_and_plots():
    rng = np.random.default_rng(3)
    n = 500
    # few distinct values with rare ones (Bank's "campaign"): min_count changes the bins
    campaign = np.minimum(rng.geometric(0.35, n), 30).astype(float)
    X = pd.DataFrame({"campaign": campaign, "x": rng.normal(size=n)})
    y = 0.3 * (campaign > 2) + X["x"] + rng.normal(size=n)
    est = bs.BinarsityGLM(min_bin_count=25).fit(X, y)
    res = est.results(X, y)
    ref = bs.glm("y ~ bin(campaign, min_count=25) + bin(x, min_count=25)",
                 X.assign(y=y)).fit(lam=est.lam_)  # fmt: skip
    np.testing.assert_allclose(res.coef, ref.coef, rtol=1e-6, atol=1e-9)
    assert min(res.model.bin_counts[: res.model.block_ptr[1]]) >= 25
    assert "campaign" in est.summary(X, y).as_text()
    import matplotlib.pyplot as plt

    plt.close(est.plot_shapes(X, y))


def test_estimator_survival_y_with_strata_field_points_to_a_formula():
    df = _frame()
    y = np.empty(len(df), dtype=[("event", bool), ("time", float), ("strata", int)])
    y["event"], y["time"], y["strata"] = df["event"] == 1, df["time"], 0
    with pytest.raises(ValueError, match=r"strata\(g\)"):
        bs.BinarsityGLM(family="cox").fit(df[["age"]], y)
    three = np.column_stack([df["time"], df["event"], np.zeros(len(df))])
    with pytest.raises(ValueError, match=r"strata\(g\)"):
        bs.BinarsityGLM(family="cox").fit(df[["age"]], three)
