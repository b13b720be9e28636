"""Plots: every plot returns a Figure, draws on a given Axes, and matplotlib is only
imported when a plot is asked for."""

import subprocess
import sys

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from binarsity_stats.model._model import glm  # noqa: E402


@pytest.fixture(scope="module")
def model():
    rng = np.random.default_rng(0)
    n = 300
    df = pd.DataFrame(
        {"x": rng.normal(size=n), "k": rng.integers(0, 9, size=n),
         "g": rng.choice(["a", "b"], size=n)}
    )  # fmt: skip
    df.loc[::17, "x"] = np.nan
    df["y"] = (df["x"].fillna(0) > 0) + 0.3 * (df["g"] == "b") + rng.normal(size=n)
    return glm("y ~ bin(x, 10) + bin(k) + C(g)", df, missing="separate")


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_plot_shapes_returns_a_figure_with_one_axes_per_term(model):
    res = model.fit(lam=1e-3)
    fig = res.plot_shapes()
    assert isinstance(fig, Figure)
    titles = [a.get_title() for a in fig.axes if a.get_title()]
    assert titles == ["x", "k", "g"]  # titles from column names (issue 12)
    # the step function drawn is the fitted one: its levels are the chain's θ
    stairs = fig.axes[0].patches[0]
    s = model.block_ptr[0]
    chain = model.spec.blocks[0].chain_length
    np.testing.assert_allclose(stairs.get_data().values, res.coef[s : s + chain])


def test_plots_draw_on_given_axes(model):
    res = model.fit(lam=1e-3)
    fig, axes = plt.subplots(1, 2)
    assert res.plot_shapes(terms=["bin(k)", "C(g)"], ax=axes) is fig
    path = model.fit_path(n_lambdas=5)
    fig2, ax = plt.subplots()
    for kind in ("coef", "df", "deviance"):
        assert path.plot(kind=kind, ax=ax) is fig2
    cv = model.fit_cv(folds=3, n_lambdas=5, random_state=0)
    fig3, ax3 = plt.subplots()
    assert cv.plot(ax=ax3) is fig3
    assert isinstance(cv.plot(), Figure)
    assert isinstance(cv.plot_path(kind="df"), Figure)
    assert path.plot_path(ax=ax) is fig2


def test_bad_plot_arguments(model):
    res = model.fit(lam=1e-3)
    with pytest.raises(ValueError, match="unknown term"):
        res.plot_shapes(terms=["bin(z)"])
    with pytest.raises(ValueError, match="kind"):
        model.fit_path(n_lambdas=2).plot(kind="aic")
    fig, ax = plt.subplots()
    with pytest.raises(ValueError, match="need 3 Axes"):
        res.plot_shapes(ax=ax)


def test_matplotlib_is_imported_lazily(tmp_path):
    import os
    from pathlib import Path

    import binarsity_stats

    code = (
        "import sys, binarsity_stats, binarsity_stats.model._model, binarsity_stats.model._results, "
        "binarsity_stats._cli; print('matplotlib' in sys.modules)"
    )
    # the package this test imported, from a directory the source tree cannot shadow
    env = dict(os.environ, PYTHONPATH=str(Path(binarsity_stats.__file__).resolve().parents[1]))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=tmp_path, env=env)  # fmt: skip
    assert out.stdout.strip() == "False"


# -- the path plot: one labelled line per term -----------------------------------------


@pytest.fixture(scope="module")
def linear_model():
    rng = np.random.default_rng(1)
    n = 240
    df = pd.DataFrame({"x": rng.uniform(0, 10, n), "z": rng.normal(2.0, 3.0, n),
                       "g": rng.choice(["a", "b", "c"], size=n)})  # fmt: skip
    eta = -0.5 + 1.0 * (df["x"] > 5) + 0.2 * df["z"] + 0.5 * (df["g"] == "b")
    df["y"] = rng.binomial(1, 1 / (1 + np.exp(-eta)))
    df["noise"] = rng.normal(size=n)
    return glm("y ~ bin(x, 8) + bin(noise, 6) + z + C(g)", df, family="binomial"), df


def test_path_plot_draws_one_labelled_line_per_term(linear_model):
    from binarsity_stats.report._curves import term_ranges

    model, _ = linear_model
    path = model.fit_path(n_lambdas=6)
    fig = path.plot()
    a = fig.axes[0]
    labels = [ln.get_label() for ln in a.get_lines()]
    assert labels == ["bin(x, 8)", "bin(noise, 6)", "C(g)", "z"]
    assert [t.get_text() for t in a.get_legend().get_texts()] == labels
    assert a.get_xscale() == "log"
    assert "log-odds" in a.get_ylabel()
    # each line is the term's range: max θ − min θ over its levels, |β|·range(z) for z
    names, ranges = term_ranges(path)
    k = model.block_ptr
    for i, sol in enumerate(path._solutions):
        theta = model.report_coef(sol)[0]
        assert ranges[i, 0] == pytest.approx(np.ptp(theta[k[0] : k[1]]))
    z = model.design.dense[:, 0]
    betas = np.array([s.dense_coef[0] for s in path._solutions])
    np.testing.assert_allclose(a.get_lines()[3].get_ydata(), np.abs(betas) * np.ptp(z))
    # df on the top axis
    top = [c for c in a.child_axes if c.get_xlabel() == "df"]
    assert len(top) == 1
    ticks = [t.get_text() for t in top[0].get_xticklabels()]
    assert ticks and set(ticks) <= {str(d) for d in path.df}
    # the old per-level view is kept
    fig2 = path.plot(kind="levels")
    assert len(fig2.axes[0].get_lines()) == model.block_ptr[-1]


def test_path_plot_marks_cv_lambdas_and_a_fitted_lambda(linear_model):
    model, _ = linear_model
    cv = model.fit_cv(folds=3, n_lambdas=5, random_state=0)
    a = cv.plot_path().axes[0]
    marked = {ln.get_label().split(" =")[0]: ln.get_xdata()[0] for ln in a.get_lines()
              if ln.get_label().startswith("λ")}  # fmt: skip
    assert marked == {"λ_min": cv.lam_min, "λ_1se": cv.lam_1se}
    a2 = cv.path.plot(marks=0.01).axes[0]
    assert any(ln.get_label().startswith("fitted λ") for ln in a2.get_lines())


# -- plot_shapes: linear terms, dropped terms, units, scale, sharey ----------------------


def _line_of(ax, label=None):
    lines = [ln for ln in ax.get_lines() if ln.get_linewidth() == 2]
    assert len(lines) == 1
    return lines[0]


def test_plot_shapes_draws_linear_terms_with_family_units(linear_model):
    model, df = linear_model
    res = model.fit(lam=1e-3)
    fig = res.plot_shapes()
    axes = {a.get_title(): a for a in fig.axes if a.get_title()}
    assert list(axes) == ["x", "noise", "g", "z"]
    a = axes["z"]
    line = _line_of(a)
    xs, ys = line.get_xdata(), line.get_ydata()
    assert xs[0] == df["z"].min() and xs[-1] == df["z"].max()
    np.testing.assert_allclose(ys, res.dense_coef[0] * xs)
    assert all(ax_.get_ylabel() == "effect (log-odds)" for ax_ in axes.values())
    gauss = glm("y ~ bin(x, 10) + C(g)", _gauss_frame()).fit(lam=1e-3)
    assert gauss.plot_shapes().axes[0].get_ylabel() == "effect (mean)"


def _gauss_frame():
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"x": rng.normal(size=80), "g": rng.choice(["a", "b"], size=80)})
    df["y"] = df["x"] + rng.normal(size=80)
    return df


def test_dropped_terms_are_marked_not_drawn_flat(linear_model):
    model, _ = linear_model
    lam_max = model.fit_path(n_lambdas=3).lams[0]
    res = model.fit(lam=2 * lam_max)  # every binned term is flat
    fig = res.plot_shapes(terms=["bin(x, 8)", "bin(noise, 6)", "z"])
    main = [a for a in fig.axes if a.get_title()]
    for a in main[:2]:
        assert [t.get_text() for t in a.texts] == ["dropped (flat)"]
        assert not a.patches  # no step drawn
    assert "dropped (flat)" not in [t.get_text() for t in main[2].texts]


def test_response_scale_is_exp_of_the_shape_relative_to_the_average_row(linear_model):
    model, _ = linear_model
    res = model.fit(lam=1e-3)
    fig = res.plot_shapes(terms=["bin(x, 8)"], scale="response")
    a = fig.axes[0]
    s, e = model.block_ptr[0], model.block_ptr[1]
    theta, w = res.coef[s:e], model.bin_counts[s:e]
    expected = np.exp(theta - np.sum(w * theta) / np.sum(w))
    np.testing.assert_allclose(a.patches[0].get_data().values, expected)
    assert a.get_ylabel() == "odds ratio vs average row" and a.get_yscale() == "log"
    gauss = glm("y ~ bin(x, 10) + C(g)", _gauss_frame()).fit(lam=1e-3)
    with pytest.raises(ValueError, match="scale='response'.*identity link"):
        gauss.plot_shapes(scale="response")
    with pytest.raises(ValueError, match="scale must be"):
        res.plot_shapes(scale="odds")


def test_sharey_gives_every_drawn_term_one_range(linear_model):
    model, _ = linear_model
    fig = model.fit(lam=1e-3).plot_shapes(sharey=True)
    lims = {a.get_ylim() for a in fig.axes if a.get_title()}
    assert len(lims) == 1


# -- calibration -----------------------------------------------------------------------


def test_calibration_points_equal_a_hand_computation(linear_model):
    model, df = linear_model
    res = model.fit(lam=1e-3)
    a = res.plot_calibration(bins=4).axes[0]
    obs_line = [ln for ln in a.get_lines() if ln.get_label() == "observed"][0]
    order = np.argsort(res.fittedvalues, kind="stable")
    groups = np.array_split(order, 4)  # 240 rows: 60 each
    np.testing.assert_allclose(obs_line.get_xdata(), [res.fittedvalues[g].mean() for g in groups])
    np.testing.assert_allclose(obs_line.get_ydata(), [df["y"].to_numpy()[g].mean() for g in groups])
    assert [t.get_text() for t in a.texts] == ["n=60"] * 4
    # on new rows with y given as a column name
    new = df.iloc[:100]
    b = res.plot_calibration(new, y="y", bins=2).axes[0]
    pred = res.predict(new)
    halves = np.array_split(np.argsort(pred, kind="stable"), 2)
    line = [ln for ln in b.get_lines() if ln.get_label() == "observed"][0]
    np.testing.assert_allclose(line.get_ydata(), [new["y"].to_numpy()[h].mean() for h in halves])
    with pytest.raises(ValueError, match="needs y"):
        res.plot_calibration(new)


def test_poisson_calibration_is_weighted(linear_model):
    from binarsity_stats.report._curves import calibration_table

    _, df = linear_model
    rng = np.random.default_rng(5)
    df = df.assign(c=rng.poisson(np.exp(0.3 * df["z"].clip(-3, 3))), w=rng.uniform(0.5, 2, len(df)))
    res = glm("c ~ bin(x, 5) + z", df, family="poisson", sample_weight="w").fit(lam=1e-3)
    tab = calibration_table(res, bins=3)
    order = np.argsort(res.fittedvalues, kind="stable")
    w, c = df["w"].to_numpy(), df["c"].to_numpy()
    for g, row in zip(np.array_split(order, 3), tab.itertuples(), strict=True):
        assert row.count == len(g)
        assert row.observed == pytest.approx(np.average(c[g], weights=w[g]))
        assert row.predicted == pytest.approx(np.average(res.fittedvalues[g], weights=w[g]))
    assert isinstance(res.plot_calibration(), Figure)


def test_ratio_axis_has_plain_tick_labels(linear_model):
    model, _ = linear_model
    fig = model.fit(lam=1e-3).plot_shapes(terms=["C(g)"], scale="response")
    fig.canvas.draw()
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels() if t.get_text()]
    assert labels and not any("10^" in t or "$" in t for t in labels)


# -- the missing level and the cut-frequency rug (issue 12) -----------------------------


def _missing_panel(ax):
    panels = [c for c in ax.child_axes if c.get_gid() == "missing-level"]
    assert len(panels) == 1
    return panels[0]


def test_missing_level_is_a_bar_with_its_row_count(model):
    res = model.fit(lam=1e-3)
    fig = res.plot_shapes(terms=["bin(x, 10)"])
    a = fig.axes[0]
    panel = _missing_panel(a)
    s = model.block_ptr[0]
    chain = model.spec.blocks[0].chain_length
    theta_missing = res.coef[s + chain]
    (bar,) = [p for p in panel.patches if p.get_width() > 0]
    assert bar.get_y() == 0.0 and bar.get_height() == pytest.approx(theta_missing)
    n_missing = len(range(0, 300, 17))  # the fixture sets x to NaN on every 17th row
    assert int((model.design.codes[0] == chain).sum()) == n_missing
    assert [t.get_text() for t in panel.get_xticklabels()] == [f"missing\nn={n_missing}"]
    # the panel shares the steps' y axis, so the bar reads on the same scale
    assert panel.get_shared_y_axes().joined(panel, a)
    # a binned term without NaN has no such panel
    k_axes = res.plot_shapes(terms=["bin(k)"]).axes[0]
    assert not [c for c in k_axes.child_axes if c.get_gid() == "missing-level"]


def test_missing_level_bar_on_the_ratio_scale_and_weighted():
    rng = np.random.default_rng(7)
    n = 400
    df = pd.DataFrame({"x": rng.uniform(0, 10, n), "w": rng.uniform(0.5, 2.0, n)})
    df.loc[rng.choice(n, 40, replace=False), "x"] = np.nan
    eta = -0.3 + 0.8 * (df["x"].fillna(20) > 5) + 0.7 * df["x"].isna()
    df["y"] = rng.binomial(1, 1 / (1 + np.exp(-eta)))
    m = glm("y ~ bin(x, 6)", df, family="binomial", missing="separate", sample_weight="w")
    res = m.fit(lam=1e-4)
    a = res.plot_shapes(scale="response").axes[0]
    panel = _missing_panel(a)
    theta, wc = res.coef, m.bin_counts
    center = float(wc @ theta / wc.sum())
    (bar,) = [p for p in panel.patches if p.get_width() > 0]
    # the bar rises from 1 to exp(θ_missing − θ of the average row) on the shared log axis
    assert bar.get_y() == 1.0
    assert bar.get_y() + bar.get_height() == pytest.approx(np.exp(theta[-1] - center))
    assert panel.get_yscale() == "log"
    w_missing = df.loc[df["x"].isna(), "w"].sum()
    label = panel.get_xticklabels()[0].get_text()
    assert label == f"missing\nn=40\nw={w_missing:.3g}"


def test_cut_frequency_rug_draws_every_cut_edge_by_its_frequency(model):
    res = model.fit(lam=1e-3)
    with pytest.raises(ValueError, match="rug=True needs a bootstrap"):
        res.plot_shapes(rug=True)
    boot = res.bootstrap(n_boot=12, random_state=0)
    freq = boot.cut_frequencies()
    fig = res.plot_shapes(rug=True)
    for a, term in zip(fig.axes[:2], ["bin(x, 10)", "bin(k)"], strict=True):
        (rug,) = [c for c in a.collections if c.get_gid() == "cut-frequency-rug"]
        rows = freq[(freq["term"] == term) & (freq["frequency"] > 0)]
        segs = rug.get_segments()
        np.testing.assert_allclose([s_[0, 0] for s_ in segs], rows["cut"])
        np.testing.assert_allclose([s_[1, 1] - s_[0, 1] for s_ in segs], 0.15 * rows["frequency"])
    # the C() term has no edges and no rug; without rug=True nothing is drawn
    assert not [c for c in fig.axes[2].collections if c.get_gid() == "cut-frequency-rug"]
    plain = res.plot_shapes()
    assert not [c for a in plain.axes for c in a.collections
                if c.get_gid() == "cut-frequency-rug"]  # fmt: skip


def test_bootstrap_plot_shapes_forwards_scale_sharey_and_rug(linear_model):
    model, _ = linear_model
    res = model.fit(lam=1e-3)
    boot = res.bootstrap(n_boot=10, random_state=1)
    fig = boot.plot_shapes(terms=["bin(x, 8)", "C(g)"], scale="response", sharey=True, rug=True)
    drawn = [a for a in fig.axes if a.get_title()]
    assert all(a.get_yscale() == "log" for a in drawn)
    assert len({a.get_ylim() for a in drawn}) == 1
    assert [c for c in drawn[0].collections if c.get_gid() == "cut-frequency-rug"]
    # the band is drawn on the ratio scale too: its top is exp(upper − centre)
    bands = boot.shape_bands()
    s, e = model.block_ptr[0], model.block_ptr[1]
    w, theta = model.bin_counts[s:e], res.coef[s:e]
    center = float(w @ theta / w.sum())
    upper = bands[bands["term"] == "bin(x, 8)"]["upper"].to_numpy()
    band = [p for p in drawn[0].patches if p.get_fill()][0]
    np.testing.assert_allclose(band.get_data().values, np.exp(upper - center))


def test_calibration_on_new_rows_reads_text_labels_as_the_event():
    import pandas as pd

    from binarsity_stats import glm
    from binarsity_stats.report._curves import calibration_table

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.normal(size=300)})
    df["y"] = np.where(rng.random(300) < 1 / (1 + np.exp(-df["x"])), "yes", "no")
    res = glm("y ~ bin(x, 5)", df, family="binomial").fit(lam=1e-3)
    pd.testing.assert_frame_equal(calibration_table(res, df, df["y"], bins=3),
                                  calibration_table(res, bins=3))  # fmt: skip


def test_calibration_keeps_tied_predictions_in_one_group():
    # fair's rows are sorted by the outcome and two rating terms give a few distinct p̂:
    # a tie split by row order made a group of observed 0.000 at predicted 0.168
    import binarsity_stats as bs
    from binarsity_stats.report._curves import calibration_table

    fair = bs.load_fair()
    fair["y"] = (fair["affairs"] > 0).astype(int)
    formula = "y ~ bin(rate_marriage) + bin(religious)"
    res = glm(formula, fair, family="binomial").fit(lam=1e-3)
    tab = calibration_table(res)
    assert tab["count"].sum() == len(fair)
    assert np.all(np.diff(tab["predicted"]) > 0)  # a distinct p̂ per group boundary
    # each group's observed share agrees with its predicted mean (an unpenalised-ish fit on
    # its own training rows): no group of all zeros or all ones
    assert np.all(np.abs(tab["observed"] - tab["predicted"]) < 0.05)
    # and the table does not depend on the order of the rows
    shuffled = fair.sample(frac=1, random_state=0)
    tab2 = calibration_table(glm(formula, shuffled, family="binomial").fit(lam=1e-3))
    np.testing.assert_allclose(tab2[["predicted", "observed"]], tab[["predicted", "observed"]],
                               rtol=1e-9)
    np.testing.assert_array_equal(tab2["count"], tab["count"])
