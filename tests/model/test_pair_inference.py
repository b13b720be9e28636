"""refit() and bootstrap() of a fit with a pair term ``bin(a):bin(b)`` (issue 25).

The refit is the unpenalised GLM on the selection: the main effects' segments and the
pair's fused regions (``grid_regions`` at the kept-cut tolerance). A region's indicator
that the other columns span (a region that is a whole bin of a main effect, the regions
adding up to the intercept) is dropped, so every coefficient left is identified, as in
R's hierarchical dummy coding of an interaction. Proved here against statsmodels' GLM on
the full, rank-deficient design of segment and region indicators built independently
(its fitted means are unique: the same column space), for three families with weights
and an offset; the sufficient-statistics path equals statsmodels' path; the labels name
a rectangular region by its two intervals. The bootstrap counts, per cut line of the
surface, the share of resamples that keep it (computed here from the cell tables), gives
percentile bands per cell, and refuses the relaxed refits (its default) by name.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

import binarsity_stats as bs
from binarsity_stats.model import _refit_glm

PAIR = "bin(a, 4):bin(b, 4)"
FORMULA = f"y ~ bin(a, 6) + bin(b, 5) + {PAIR} + offset(o)"


def _data(family: str, n: int = 2500, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.uniform(size=n), "b": rng.uniform(size=n),
                       "w": rng.uniform(0.5, 2.0, size=n), "o": rng.uniform(-0.2, 0.2, size=n)})  # fmt: skip
    eta = -0.3 + 0.8 * (df.a > 0.5) + 1.2 * ((df.a > 0.5) & (df.b > 0.5)) + df.o
    if family == "gaussian":
        df["y"] = eta + rng.normal(size=n) * 0.5
    elif family == "binomial":
        df["y"] = (rng.uniform(size=n) < 1 / (1 + np.exp(-eta))).astype(float)
    else:
        df["y"] = rng.poisson(np.exp(eta)).astype(float)
    return df


def _segments(values: np.ndarray, tol: float) -> np.ndarray:
    """Segment ids of a chain: a new one where consecutive values differ by > tol."""
    return np.concatenate([[0], np.cumsum(np.abs(np.diff(values)) > tol)])


def _full_design(model, res) -> np.ndarray:
    """Indicators of every main-effect segment and every pair region (with an intercept
    column: rank-deficient on purpose), built from the codes and the coefficients."""
    cols = [np.ones(model.design.n_obs)]
    for j, block in enumerate(model.spec.blocks):
        s, e = int(model.block_ptr[j]), int(model.block_ptr[j + 1])
        theta = res.coef[s:e]
        tol = 1e-7 * max(1.0, np.abs(theta).max())  # the kept-cut rule's size
        codes = np.asarray(model.design.codes[j])
        if getattr(block, "is_pair", False):
            grid = model.binned.kinds[j].block
            cells = theta[: grid.n_cells]
            same = np.abs(grid.difference(cells)) <= tol
            i, k = grid.edges[same, 0], grid.edges[same, 1]
            adj = coo_matrix((np.ones(i.size), (i, k)), shape=(grid.n_cells,) * 2)
            seg = connected_components(adj, directed=False)[1]
            seg = np.concatenate([seg, seg.max() + 1 + np.arange(e - s - grid.n_cells)])
        else:
            seg = _segments(theta, tol)
        for sid in np.unique(seg):
            cols.append(np.isin(codes, np.flatnonzero(seg == sid)).astype(float))
    return np.column_stack(cols)


SM_FAMILIES = {"gaussian": sm.families.Gaussian(), "binomial": sm.families.Binomial(),
               "poisson": sm.families.Poisson()}  # fmt: skip


@pytest.mark.parametrize("family", ["gaussian", "binomial", "poisson"])
def test_the_refit_is_the_glm_on_the_segments_and_regions(family):
    df = _data(family)
    model = bs.glm(FORMULA, df, family=family, weights="w")
    res = model.fit(lam={"gaussian": 0.01, "binomial": 0.002, "poisson": 0.002}[family])
    regions = int(res.term_table().loc[PAIR, "cuts_kept"])
    assert regions >= 2  # the surface has a step to refit
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no rank-deficiency warning: all identified
        refit = res.refit()
    assert np.all(np.isfinite(refit.bse.values))
    X, names = res.selected_design()
    assert np.linalg.matrix_rank(X) == X.shape[1] == len(names) == len(refit.params)
    # the same fitted means as statsmodels on the full indicator design
    full = _full_design(model, res)
    assert np.linalg.matrix_rank(full) == X.shape[1]  # the same column space's dimension
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # statsmodels says the full design is singular
        sm_fit = sm.GLM(df.y, full, family=SM_FAMILIES[family], var_weights=df.w,
                        offset=df.o).fit(tol=1e-13)  # fmt: skip
    np.testing.assert_allclose(refit.predict(df), sm_fit.fittedvalues, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(refit.deviance, sm_fit.deviance, rtol=1e-8)


def test_the_sufficient_statistics_path_equals_statsmodels(monkeypatch):
    df = _data("binomial", seed=3)
    res = bs.glm(FORMULA, df, family="binomial", weights="w").fit(lam=0.002)
    direct = res.refit()
    monkeypatch.setattr(_refit_glm, "GRAM_MIN_CELLS", 10)  # the codes' Gram from here
    gram = res.refit()
    assert type(gram.sm_results).__name__ == "GLMRefit"
    np.testing.assert_allclose(gram.params.values, direct.params.values, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(gram.bse.values, direct.bse.values, rtol=1e-8)
    frame = gram.get_prediction(df.head(20)).summary_frame()
    np.testing.assert_allclose(frame["mean"], direct.predict(df.head(20)), rtol=1e-9)


def test_a_rectangular_region_is_labelled_by_its_two_intervals():
    df = _data("gaussian", seed=1)
    res = bs.glm(FORMULA, df).fit(lam=0.01)
    names = [k for k in res.refit().params.index if k.startswith(PAIR + "[")]
    assert names
    for name in names:
        label = name[len(PAIR) + 1 : -1]
        assert " x " in label or label.startswith("region "), name


# -- the bootstrap of a fit with a pair term ------------------------------------------------
def _lines_kept(model, coef, j: int) -> tuple[np.ndarray, np.ndarray]:
    """Per axis, the cut lines a jump of the surface crosses, from the cell table (every
    cell observed here): line k of a is kept when some (k, l), (k + 1, l) differ."""
    block = model.spec.blocks[j]
    grid = model.binned.kinds[j].block
    assert grid.n_cells == (len(block.edges) + 1) * (len(block.pair_edges) + 1)
    s = int(model.block_ptr[j])
    table = np.asarray(coef[s : s + grid.n_cells]).reshape(grid.shape)
    tol = 1e-7 * max(1.0, np.abs(table).max())
    return (np.any(np.abs(np.diff(table, axis=0)) > tol, axis=1),
            np.any(np.abs(np.diff(table, axis=1)) > tol, axis=0))  # fmt: skip


def test_the_bootstrap_counts_how_often_each_cut_line_of_the_surface_is_kept():
    df = _data("gaussian", n=1500, seed=4)
    model = bs.glm(f"y ~ bin(a, 4) + bin(b, 4) + {PAIR}", df)
    res = model.fit(lam=0.03)
    boot = res.bootstrap(n_boot=6, random_state=0)
    table = boot.cut_frequencies()
    pair = table[table.term == PAIR]
    want_a = np.mean([_lines_kept(model, c, 2)[0] for c in boot.coef], axis=0)
    want_b = np.mean([_lines_kept(model, c, 2)[1] for c in boot.coef], axis=0)
    fit_a, fit_b = _lines_kept(model, res.coef, 2)
    block = model.spec.blocks[2]
    on_a, on_b = pair[pair.column == "a"], pair[pair.column == "b"]
    np.testing.assert_array_equal(on_a.cut, block.edges)
    np.testing.assert_array_equal(on_b.cut, block.pair_edges)
    np.testing.assert_allclose(on_a.frequency, want_a, rtol=0, atol=1e-15)
    np.testing.assert_allclose(on_b.frequency, want_b, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(on_a.selected, fit_a)
    np.testing.assert_array_equal(on_b.selected, fit_b)
    # the cut-point table of the results gets the same frequencies on its kept lines
    cuts = res.cut_points()
    lines = cuts[cuts.term == PAIR]
    assert len(lines) == int(fit_a.sum() + fit_b.sum()) and "frequency" in cuts
    for _, row in lines.iterrows():
        match = pair[(pair.column == row.column) & (pair.cut == row.cut)]
        assert float(match.frequency.iloc[0]) == row.frequency
    # percentile bands per cell; the relaxed refits (the default) refuse the pair by name
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the coverage note of a λ the benchmark did not measure
        bands = boot.shape_bands(method="percentile")
    cells = bands[bands.term == PAIR]
    assert len(cells) == model.binned.kinds[2].block.n_cells + 1
    assert np.all(cells.lower <= cells.upper)
    with pytest.raises(ValueError, match=r"method='relaxed'.*pair term.*method='percentile'"):
        boot.predict(df.head(3))


# -- the shape table and tidy() of a pair term ------------------------------------------------
def test_the_shape_table_and_tidy_list_a_pair_by_cell_or_by_region():
    df = _data("gaussian", n=1500, seed=4)
    model = bs.glm(f"y ~ bin(a, 4) + bin(b, 4) + {PAIR}", df)
    res = model.fit(lam=0.03)
    s, e = int(model.block_ptr[2]), int(model.block_ptr[3])
    grid = model.binned.kinds[2].block
    cells = res.shape_functions().query("term == @PAIR")
    assert list(cells.label) == model.spec.blocks[2].level_labels()
    np.testing.assert_array_equal(cells.level, res.coef[s:e])
    np.testing.assert_array_equal(cells["count"], model.bin_counts[s:e])
    assert cells.low.isna().all() and cells.high.isna().all()
    regions = res.shape_functions(merge=True).query("term == @PAIR")
    n_regions = int(res.term_table().loc[PAIR, "cuts_kept"])
    assert len(regions) == n_regions + (e - s - grid.n_cells)  # + the empty-cell level
    assert regions["count"].sum() == pytest.approx(model.bin_counts[s:e].sum(), rel=1e-12)
    # each region's level is the value of every cell in it
    for _, row in regions.iloc[:n_regions].iterrows():
        assert row.level in set(res.coef[s : s + grid.n_cells])
    tidy = res.tidy().query("variable == @PAIR")
    np.testing.assert_array_equal(tidy.estimate, res.coef[s:e])
    assert not tidy.cut.any()
    assert len(res.tidy(merge=True).query("variable == @PAIR")) == len(regions)
