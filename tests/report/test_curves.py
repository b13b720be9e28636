"""report/_curves.py: the path and CV plots and the calibration table and plot.

Proved here: ``term_ranges`` is max θ − min θ of every block and |β|·range(x) of every
linear term along the path, recomputed from the path's own fits; the calibration table
of distinct predictions is the equal-count split of the sorted rows (``np.array_split``),
rows of equal prediction always share a group and the rows' order never changes it;
the plots draw exactly those numbers; every bad argument is refused by name.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from binarsity_stats.model._model import glm  # noqa: E402
from binarsity_stats.report._curves import (  # noqa: E402
    calibration_table,
    plot_calibration,
    plot_cv,
    plot_path,
    term_ranges,
)


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def data(n: int = 300, seed: int = 0, base: float = -0.3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x": rng.normal(size=n), "z": rng.uniform(-2, 3, n)})
    eta = base + (df.x > 0) + 0.4 * df.z
    df["y"] = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    return df


@pytest.fixture(scope="module")
def path():
    return glm("y ~ bin(x, 6) + z", data(), family="binomial").fit_path(n_lambdas=6)


def test_term_ranges(path):
    names, ranges = term_ranges(path)
    assert names == ["bin(x, 6)", "z"]
    z = data()["z"].to_numpy()
    for i, res in enumerate(path):
        assert ranges[i, 0] == pytest.approx(np.ptp(res.coef), rel=1e-12, abs=1e-15)
        assert ranges[i, 1] == pytest.approx(abs(res.dense_coef[0]) * np.ptp(z), rel=1e-12)
    assert ranges[0, 0] < 1e-8 < ranges[-1, 0]  # flat at λ_max


def test_plot_path_draws_the_ranges(path):
    fig = plot_path(path, marks={"λ_min": path.lams[2]})
    ax = fig.axes[0]
    _, ranges = term_ranges(path)
    lines = {ln.get_label(): ln for ln in ax.lines}
    np.testing.assert_array_equal(lines["z"].get_ydata(), ranges[:, 1])
    assert any(label.startswith("λ_min = ") for label in lines)
    assert ax.get_xscale() == "log"
    dev = plot_path(path, kind="deviance").axes[0].lines[0].get_ydata()
    np.testing.assert_array_equal(dev, path.deviance)
    with pytest.raises(ValueError, match="kind must be 'range', 'levels', 'df' or 'deviance'"):
        plot_path(path, kind="ranges")


def test_plot_cv_draws_the_curve():
    cv = glm("y ~ bin(x, 6) + z", data(), family="binomial").fit_cv(folds=3, random_state=0,
                                                                      n_lambdas=6)  # fmt: skip
    ax = plot_cv(cv).axes[0]
    points = ax.lines[0]
    np.testing.assert_array_equal(points.get_ydata(), cv.mean)
    vlines = {ln.get_label(): ln.get_xdata()[0] for ln in ax.lines[1:]}
    assert vlines["lam_min"] == cv.lam_min and vlines["lam_1se"] == cv.lam_1se


def test_calibration_of_distinct_predictions_is_the_equal_count_split():
    df = data()
    res = glm("y ~ bin(x, 6) + z", df, family="binomial").fit(lam=0.001)
    pred = np.asarray(res.fittedvalues)
    assert np.unique(pred).size == pred.size  # z makes every prediction distinct
    table = calibration_table(res, bins=10)
    order = np.argsort(pred)
    groups = np.array_split(order, 10)
    assert list(table["count"]) == [len(g) for g in groups] == [30] * 10
    np.testing.assert_allclose(table["predicted"], [pred[g].mean() for g in groups], rtol=1e-13)
    np.testing.assert_allclose(table["observed"], [df["y"].to_numpy()[g].mean() for g in groups],
                               rtol=1e-13)  # fmt: skip


def test_equal_predictions_share_a_group_whatever_the_order():
    df = data()
    res = glm("y ~ bin(x, 6)", df, family="binomial").fit(lam=0.001)  # few distinct values
    t1 = calibration_table(res, new=df, y="y", bins=4)
    shuffled = df.sample(frac=1.0, random_state=1)
    t2 = calibration_table(res, new=shuffled, y=shuffled["y"], bins=4)
    pd.testing.assert_frame_equal(t1, t2)
    # the groups' boundaries (in sorted order) are boundaries of runs of one prediction
    runs = pd.Series(res.predict(df)).value_counts().sort_index().to_numpy()
    assert runs.size < len(df) / 4  # ties larger than a group's share exist
    run_ends = set(np.cumsum(runs).tolist())
    assert set(np.cumsum(t1["count"]).tolist()) <= run_ends
    assert t1["count"].sum() == len(df)


def test_calibration_weights_the_training_rows():
    df = data()
    w = np.random.default_rng(2).uniform(0.5, 3.0, len(df))
    res = glm("y ~ bin(x, 6) + z", df, family="binomial", sample_weight=w).fit(lam=0.001)
    table = calibration_table(res, bins=3)
    pred = np.asarray(res.fittedvalues)
    groups = np.array_split(np.argsort(pred), 3)
    want = [np.average(df["y"].to_numpy()[g], weights=w[g]) for g in groups]
    np.testing.assert_allclose(table["observed"], want, rtol=1e-13)
    np.testing.assert_allclose(table["weight"], [w[g].sum() for g in groups], rtol=1e-13)


def test_plot_calibration_draws_the_table_and_picks_its_scale():
    df = data()
    res = glm("y ~ bin(x, 6) + z", df, family="binomial").fit(lam=0.001)
    ax = plot_calibration(res, bins=5).axes[0]
    table = calibration_table(res, bins=5)
    observed = next(ln for ln in ax.lines if ln.get_label() == "observed")
    np.testing.assert_array_equal(observed.get_xdata(), table["predicted"])
    np.testing.assert_array_equal(observed.get_ydata(), table["observed"])
    assert ax.get_xscale() == "linear"
    rare = data(n=2000, base=-5.0)
    res_rare = glm("y ~ bin(x, 6) + z", rare, family="binomial").fit(lam=0.001)
    assert plot_calibration(res_rare, bins=5).axes[0].get_xscale() == "logit"


def test_bad_arguments_are_refused_by_name():
    df = data()
    res = glm("y ~ bin(x, 6) + z", df, family="binomial").fit(lam=0.01)
    with pytest.raises(ValueError, match="bins must be a positive integer; got 0"):
        calibration_table(res, bins=0)
    with pytest.raises(ValueError, match="bins must be a positive integer; got True"):
        calibration_table(res, bins=True)
    with pytest.raises(ValueError, match="y is only used together with new"):
        calibration_table(res, y=df["y"])
    with pytest.raises(ValueError, match="offset is only used together with new"):
        calibration_table(res, offset=np.zeros(len(df)))
    with pytest.raises(ValueError, match="needs y, the observed response of new"):
        calibration_table(res, new=df)
    with pytest.raises(ValueError, match="y: column 'yy' is not in new"):
        calibration_table(res, new=df, y="yy")
    with pytest.raises(ValueError, match="y has 3 values for 300 rows of new"):
        calibration_table(res, new=df, y=[0, 1, 0])
    with pytest.raises(ValueError, match="y holds NaN or infinite values"):
        calibration_table(res, new=df, y=df["y"].where(df.index > 0))
    with pytest.raises(ValueError, match="scale must be 'auto', 'linear' or 'logit'"):
        plot_calibration(res, scale="log")
    gauss = glm("z ~ bin(x, 6)", df).fit(lam=0.01)
    with pytest.raises(ValueError, match="scale='logit' is for binomial fits"):
        plot_calibration(gauss, scale="logit")
