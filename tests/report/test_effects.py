"""``plot_effects`` (issue 28, item 5): the predicted mean against each feature for a
reference row, with the refit's or a bootstrap's interval. Mirrors
``binarsity_stats/report/_effects.py``.
"""

from __future__ import annotations

import pickle

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

import binarsity_stats as bstats  # noqa: E402
from binarsity_stats.report._effects import plot_effects, reference_row  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def fit():
    df = bstats.load_fair()
    df["ev"] = (df.affairs > 0).astype(int)
    return bstats.glm("ev ~ bin(age) + bin(yrs_married) + C(religious) + I(educ**2)", df,
                      family="binomial").fit(lam=1e-3), df  # fmt: skip


def test_the_reference_row_is_the_training_median_and_mode(fit):
    res, df = fit
    ref = reference_row(res)
    assert ref.shape == (1, 4)
    assert ref.age.iloc[0] == df.age.median() and ref.educ.iloc[0] == df.educ.median()
    assert ref.religious.iloc[0] == df.religious.mode().iloc[0]  # a C() column: its mode
    assert reference_row(res, {"age": 40.0}).age.iloc[0] == 40.0


def test_each_panel_is_the_prediction_at_the_reference_row_with_the_refit_band(fit):
    res, df = fit
    fig = plot_effects(res)
    panels = [a for a in fig.axes if a.get_visible()]
    assert [a.get_title() for a in panels] == ["age", "yrs_married", "religious", "educ"]
    line = panels[0].get_lines()[0]
    x, y = np.asarray(line.get_xdata()), np.asarray(line.get_ydata())
    assert x.min() == df.age.min() and x.max() == df.age.max()
    rows = pd.concat([reference_row(res)] * len(x), ignore_index=True).assign(age=x)
    np.testing.assert_array_equal(y, res.predict(rows))
    band = res.refit().get_prediction(rows).summary_frame(alpha=0.05)
    poly = panels[0].collections[0].get_paths()[0].vertices
    assert poly[:, 1].min() == pytest.approx(band.mean_ci_lower.min(), rel=1e-12)
    assert poly[:, 1].max() == pytest.approx(band.mean_ci_upper.max(), rel=1e-12)
    assert "refit" in panels[0].get_legend().get_texts()[0].get_text()
    note = [t for t in fig.texts if t.get_gid() == "reference-row"]
    assert note and f"age = {df.age.median():.4g}" in note[0].get_text()


def test_a_bootstrap_band_or_none(fit):
    res, _ = fit
    boot = res.bootstrap(n_boot=10, random_state=0)
    a = plot_effects(res, features="religious", interval=boot).axes[0]
    assert "bootstrap" in a.get_legend().get_texts()[0].get_text()
    a = plot_effects(res, features=["age"], interval=None).axes[0]
    assert a.get_legend() is None and not a.collections


def test_bad_arguments_are_named(fit):
    res, df = fit
    with pytest.raises(ValueError, match=r"unknown feature\(s\) \['income'\]"):
        plot_effects(res, features="income")
    with pytest.raises(ValueError, match=r"reference names column\(s\) \['income'\]"):
        plot_effects(res, reference={"income": 1})
    with pytest.raises(ValueError, match="interval must be"):
        plot_effects(res, interval="wald")
    with pytest.raises(ValueError, match="level must be"):
        plot_effects(res, level=95)
    loaded = pickle.loads(pickle.dumps(res))
    with pytest.raises(ValueError, match=r"no reference value for column .*reference="):
        plot_effects(loaded, interval=None)
    full = {c: df[c].median() for c in ["age", "yrs_married", "educ"]} | {"religious": 3.0}
    assert plot_effects(loaded, reference=full, features="age", interval=None)
    d = df.assign(t=df.age, e=df.ev)
    cox = bstats.glm("Surv(t, e) ~ bin(yrs_married)", d, family="cox").fit(lam=1e-3)
    with pytest.raises(ValueError, match="Cox"):
        plot_effects(cox)


def test_the_results_method_draws_the_same_figure(fit):
    res, _ = fit
    a = res.plot_effects(features="age", interval=None).axes[0]
    b = plot_effects(res, features="age", interval=None).axes[0]
    np.testing.assert_array_equal(a.get_lines()[0].get_ydata(), b.get_lines()[0].get_ydata())
    assert res.plot_calibration(scale="linear").axes[0].get_xscale() == "linear"
