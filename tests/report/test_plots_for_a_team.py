"""Plots a team reads (issue 28, item 5): ratio axes with several plain ticks, bands
clipped with a mark, labelled density and rug, 0/1 terms as two bars, the centring of
effects said on the figure, a df axis whose labels never overlap, logit calibration for
rare events. Mirrors ``binarsity_stats/report/_plotting.py``.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from binarsity_stats import glm  # noqa: E402
from binarsity_stats.report._curves import plot_calibration, plot_cv  # noqa: E402
from binarsity_stats.report._plotting import plot_shapes  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def binomial_fit():
    rng = np.random.default_rng(0)
    n = 3000
    d = pd.DataFrame({"x": rng.uniform(size=n), "z": rng.integers(0, 2, n).astype(float),
                      "g": rng.choice(["a", "b", "c"], n)})  # fmt: skip
    eta = 0.25 * (d.x > 0.5) + 0.2 * d.z - 0.1
    d["y"] = rng.binomial(1, 1 / (1 + np.exp(-eta)))
    return glm("y ~ bin(x, 10) + z + C(g)", d, family="binomial").fit(lam=1e-3), d


def _labelled_ticks(a):
    lo, hi = a.get_ylim()
    return [t for t, lab in zip(a.get_yticks(), a.get_yticklabels(), strict=True)
            if lo <= t <= hi and lab.get_text()]  # fmt: skip


def test_a_narrow_ratio_axis_has_several_plain_ticks(binomial_fit):
    res, _ = binomial_fit
    fig = plot_shapes(res, terms=["bin(x, 10)"], scale="response")
    a = fig.axes[0]
    lo, hi = a.get_ylim()
    assert hi / lo < 2  # the case matplotlib labels with a single "1"
    ticks = _labelled_ticks(a)
    assert len(ticks) >= 3
    labels = [lab.get_text() for lab in a.get_yticklabels() if lab.get_text()]
    assert not any("10^" in t or "$" in t for t in labels)


def test_a_wide_band_is_clipped_and_marked(binomial_fit):
    res, _ = binomial_fit
    m = res.model
    rows = []
    for j, block in enumerate(m.spec.blocks):
        s, e = int(m.block_ptr[j]), int(m.block_ptr[j + 1])
        for k in range(s, e):
            rows.append({"term": block.term, "lower": res.coef[k] - 0.05,
                         "upper": res.coef[k] + 0.05})  # fmt: skip
    bands = pd.DataFrame(rows)
    first = bands.index[bands.term == "bin(x, 10)"][0]
    bands.loc[first, ["lower", "upper"]] = [-1e6, 1e6]  # a relaxed band on a one-row bin
    fig = plot_shapes(res, terms=["bin(x, 10)"], bands=bands)
    a = fig.axes[0]
    assert a.get_ylim()[1] < 10 and a.get_ylim()[0] > -10
    marks = [ln for ln in a.get_lines() if ln.get_gid() == "clipped-band"]
    assert {ln.get_marker() for ln in marks} == {"^", "v"}
    assert any("clipped" in t.get_text() for t in a.texts)
    # a band within range is drawn as it is, unmarked
    plain = plot_shapes(res, terms=["bin(x, 10)"], bands=bands.drop(index=first).pipe(
        lambda b: pd.concat([b, bands.loc[[first]].assign(lower=-0.1, upper=0.1)]).sort_index()))
    assert not [ln for ln in plain.axes[0].get_lines() if ln.get_gid() == "clipped-band"]


def test_density_and_rug_are_labelled(binomial_fit):
    res, _ = binomial_fit
    block = res.model.spec.blocks[0]
    rug = pd.DataFrame({"term": block.term, "cut": block.edges,
                        "frequency": np.linspace(0.1, 1.0, len(block.edges))})  # fmt: skip
    fig = plot_shapes(res, terms=["bin(x, 10)"], rug=rug)
    labels = [a.get_ylabel() for a in fig.axes]
    assert any("share of rows" in lab for lab in labels)
    legend = fig.axes[0].get_legend()
    assert legend is not None and "cut frequency" in legend.get_texts()[0].get_text()


def test_a_binary_linear_term_is_two_bars(binomial_fit):
    res, _ = binomial_fit
    a = plot_shapes(res, terms=["z"]).axes[0]
    assert [t.get_text() for t in a.get_xticklabels()] == ["0", "1"]
    bars = [p for p in a.patches if p.get_width() > 0]
    assert len(bars) == 2
    heights = sorted(p.get_height() for p in bars)
    beta = float(res.params["z"])
    np.testing.assert_allclose(sorted([0.0, beta]), heights, atol=1e-12)
    assert not a.get_lines() or all(len(ln.get_xdata()) <= 2 for ln in a.get_lines())


def test_the_centring_of_effects_is_said_when_linear_and_binned_terms_share_a_figure(
    binomial_fit,
):
    res, _ = binomial_fit
    note = [t for t in plot_shapes(res).texts if t.get_gid() == "centring-note"]
    assert note and "average training row" in note[0].get_text()
    assert not [t for t in plot_shapes(res, terms=["bin(x, 10)"]).texts
                if t.get_gid() == "centring-note"]  # fmt: skip
    assert not [t for t in plot_shapes(res, scale="response").texts
                if t.get_gid() == "centring-note"]  # fmt: skip


def test_the_df_axis_labels_are_spread_and_the_lambda_axis_keeps_its_own(binomial_fit):
    _, d = binomial_fit
    cv = glm("y ~ bin(x, 10) + z + C(g)", d, family="binomial").fit_cv(
        folds=3, random_state=0, lams=np.geomspace(0.02, 0.0015, 40))
    fig = plot_cv(cv)
    a = fig.axes[0]
    tops = [c for c in a.child_axes]
    assert len(tops) == 1
    top = tops[0]
    ticks = np.asarray(top.get_xticks())
    labels = [t.get_text() for t in top.get_xticklabels()]
    assert 2 <= len(ticks) <= 9
    spacing = np.diff(np.sort(np.log10(ticks)))
    span = np.log10(cv.lams.max() / cv.lams.min())
    assert spacing.min() >= span / 8 - 1e-9
    assert len(set(labels)) == len(labels)  # one label per df value
    assert not [t for t in top.xaxis.get_minorticklabels() if t.get_text()]


def test_calibration_of_rare_events_is_on_the_logit_scale():
    rng = np.random.default_rng(1)
    n = 20000
    d = pd.DataFrame({"x": rng.uniform(size=n)})
    d["y"] = rng.binomial(1, np.where(d.x > 0.5, 0.04, 0.01))
    res = glm("y ~ bin(x, 10)", d, family="binomial").fit(lam=1e-4)
    a = plot_calibration(res).axes[0]
    assert a.get_xscale() == "logit" and a.get_yscale() == "logit"
    assert plot_calibration(res, scale="linear").axes[0].get_xscale() == "linear"
    gauss = glm("x ~ bin(y, 2)", d.assign(y=d.y.astype(float))).fit(lam=1e-3)
    assert plot_calibration(gauss).axes[0].get_xscale() == "linear"
    with pytest.raises(ValueError, match="for binomial fits"):
        plot_calibration(gauss, scale="logit")
    with pytest.raises(ValueError, match="scale must be"):
        plot_calibration(res, scale="log")
