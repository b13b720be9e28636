"""``plot_shapes`` draws a pair term ``bin(a):bin(b)`` as a heat map (issue 25).

Checked on the artists, not on pixels: the surface's mesh holds the fitted cell table
(its cells without training rows masked), the region boundaries are segments on the
surface's kept cut lines (``cut_points``) and only there, a small grid's cells hold their
training row counts, and ``scale="response"`` draws exp(θ); ``report()`` shows the pair
term in its terms table and its heat map among the shapes.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

import binarsity_stats as bs  # noqa: E402

TERM = "bin(a, 5):bin(b, 4)"


@pytest.fixture(scope="module")
def res():
    rng = np.random.default_rng(3)
    n = 1500
    a = rng.uniform(size=n)
    b = np.clip(a + rng.normal(scale=0.25, size=n), -0.2, 1.2)  # empty corners
    y = 1.0 * ((a > 0.5) & (b > 0.4)) + rng.normal(scale=0.3, size=n)
    df = pd.DataFrame({"a": a, "b": b, "y": y})
    return bs.glm(f"y ~ bin(a, 4) + bin(b, 4) + {TERM}", df, family="gaussian").fit(lam=0.003)


def _table(res) -> np.ndarray:
    m = res.model
    grid = m.binned.kinds[2].block
    s = int(m.block_ptr[2])
    ia, ib = grid.cell_rows()
    table = np.full(m.spec.blocks[2].grid_shape, np.nan)
    table[ia, ib] = res.coef[s : s + grid.n_cells]
    return table


def _artists(ax, gid):
    return [c for c in [*ax.collections, *ax.texts] if c.get_gid() == gid]


def test_the_heat_map_holds_the_cell_table(res):
    fig = res.plot_shapes(terms=[TERM])
    ax = fig.axes[0]
    (mesh,) = _artists(ax, "pair-surface")
    table = _table(res)
    data = mesh.get_array()
    assert np.isnan(table).any()  # unseen cells: masked, not drawn as 0
    np.testing.assert_array_equal(np.ma.getmaskarray(data).ravel(), np.isnan(table.T).ravel())
    np.testing.assert_array_equal(np.ma.filled(data, np.nan).ravel(), table.T.ravel())
    assert ax.get_xlabel() == "a" and ax.get_ylabel() == "b" and ax.get_title() == TERM
    plt.close(fig)


def test_region_boundaries_lie_on_the_kept_cut_lines(res):
    fig = res.plot_shapes(terms=[TERM])
    ax = fig.axes[0]
    (lines,) = _artists(ax, "pair-regions")
    cuts = res.cut_points()
    cuts = cuts[cuts.term == TERM]
    segs = [np.asarray(s) for s in lines.get_segments()]
    assert segs
    vertical = {float(s[0, 0]) for s in segs if s[0, 0] == s[1, 0]}
    horizontal = {float(s[0, 1]) for s in segs if s[0, 1] == s[1, 1]}
    assert vertical == set(cuts[cuts.column == "a"].cut)
    assert horizontal == set(cuts[cuts.column == "b"].cut)
    # the strongest line is the truth's (a = 0.5, b = 0.4), to within a bin
    block = res.model.spec.blocks[2]
    assert min(abs(v - 0.5) for v in vertical) <= np.max(np.diff(block.edges))
    plt.close(fig)


def test_a_small_grid_shows_its_row_counts(res):
    fig = res.plot_shapes(terms=[TERM])
    ax = fig.axes[0]
    texts = _artists(ax, "pair-cell-count")
    grid = res.model.binned.kinds[2].block
    assert len(texts) == grid.n_cells
    assert sum(int(t.get_text()) for t in texts) == len(res.fittedvalues)
    plt.close(fig)
    fig = res.plot_shapes(terms=[TERM], density=False)
    assert not _artists(fig.axes[0], "pair-cell-count")
    plt.close(fig)


def test_the_response_scale_draws_ratios():
    rng = np.random.default_rng(4)
    df = pd.DataFrame({"a": rng.uniform(size=800), "b": rng.uniform(size=800)})
    eta = 1.5 * ((df.a > 0.5) & (df.b > 0.5)) - 0.7
    df["y"] = (rng.uniform(size=800) < 1 / (1 + np.exp(-eta))).astype(float)
    r = bs.glm(f"y ~ bin(a, 4) + bin(b, 4) + {TERM}", df, family="binomial").fit(lam=0.002)
    fig = r.plot_shapes(terms=[TERM], scale="response")
    (mesh,) = _artists(fig.axes[0], "pair-surface")
    np.testing.assert_allclose(np.ma.filled(mesh.get_array(), np.nan).ravel(),
                               np.exp(_table(r).T).ravel(), rtol=1e-12)  # fmt: skip
    plt.close(fig)


def test_every_term_in_one_figure(res):
    fig = res.plot_shapes()
    assert len(_artists(fig.axes[2], "pair-surface")) == 1
    plt.close(fig)


def test_the_report_includes_the_pair_term(res, tmp_path):
    import re

    html = res.report(tmp_path / "pair.html")
    page = open(html, encoding="utf-8").read()
    ids = re.findall(r'<section id="([^"]+)"', page)
    assert ids[:4] == ["data", "summary", "shapes", "cut-points"]
    data = re.search(r'<section id="data".*?</section>', page, re.S).group(0)
    cells = len(res.model.spec.blocks[2].cells)
    assert "pair (grid TV penalised)" in data and f"{cells} of 5 x 4 cells" in data
    assert "a x b" in data
    shapes = re.search(r'<section id="shapes".*?</section>', page, re.S).group(0)
    assert shapes.count("<img") == 1  # the heat map is drawn with the other shapes
