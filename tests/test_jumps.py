"""One definition of a jump (a kept cut), exact flatness at λ ≥ λ_max, scale equivariance.

What is proved here:

* a jump below the tolerance of ``binarsity_stats.core._statistics`` (1e-7 of η's unit) is no
  cut for ANY reader of a fit: ``n_jumps``, ``cut_points``, ``df``, the term table, the
  summary, the refit's segments (``selected_design``), the relaxed fit's segments, the
  shape plot ("dropped (flat)") and the estimators' ``cut_points`` — while a real jump in
  the same block still counts everywhere;
* a fit at λ = λ_max (the first point of every path, the λ a CV picks when nothing
  matters) and above is exactly the null fit: every penalised level exactly 0, and the
  term table, the summary and the plot agree that the terms are dropped;
* a gaussian fit is equivariant to the scale of y (y·c with λ·c gives θ·c, the same cut
  set) over the representable range, and a y whose square underflows is refused by name
  instead of being "fitted" at θ = 0 with ``converged=True``.
"""

from __future__ import annotations

import dataclasses
import sqlite3

import matplotlib
import numpy as np
import pandas as pd
import pytest

import binarsity_stats as bs
from binarsity_stats.engine._relax import segment_maps
from binarsity_stats.model._results import BinarsityResults
from binarsity_stats.core._statistics import JUMP_RTOL, jump_tolerance

matplotlib.use("Agg")

#: a jump the solver's stopping error can leave (the 5.6e-10 of an edge at λ_max)
TINY = 5.6e-10


def _data(n: int = 3000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "a": rng.normal(size=n), "b": rng.uniform(size=n), "g": rng.integers(0, 3, n),
    })  # fmt: skip
    eta = np.where(df["a"] > 0.3, 0.8, -0.2) + 0.6 * (df["b"] > 0.5)
    df["y"] = rng.binomial(1, 1.0 / (1.0 + np.exp(-eta)))
    df["z"] = eta + rng.normal(size=n)
    return df


def _with_tiny_jump(res: BinarsityResults, j: int, k: int) -> BinarsityResults:
    """``res`` with a jump of TINY added at level k of block j (n_jᵀθ_j = 0 kept)."""
    m = res.model
    s, e = int(m.block_ptr[j]), int(m.block_ptr[j + 1])
    theta = res.coef.copy()
    theta[s + k : e] += TINY
    counts = m.bin_counts[s:e]
    theta[s:e] -= counts @ theta[s:e] / counts.sum()
    assert 0 < abs(theta[s + k] - theta[s + k - 1]) < 2 * TINY
    return BinarsityResults(m, dataclasses.replace(res.solution, coef=theta), "user")


def _dropped_titles(fig) -> list[str]:
    return [
        ax.get_xlabel() for ax in fig.axes
        if any(t.get_text() == "dropped (flat)" for t in ax.texts)
    ]  # fmt: skip


def test_a_jump_below_the_tolerance_is_no_cut_for_any_reader():
    df = _data()
    m = bs.glm("y ~ bin(a, 8) + bin(b, 8) + C(g)", df, family="binomial")
    lmax = m.lambda_max()
    # λ where bin(a) has real cuts and bin(b) is flat
    base = None
    for f in np.geomspace(0.9, 0.05, 30):
        r = m.fit(lam=f * lmax)
        s_b, e_b = int(m.block_ptr[1]), int(m.block_ptr[2])
        if r.n_jumps >= 1 and not np.any(r.jumps[s_b:e_b]):
            base = r
            break
    assert base is not None
    n_cuts, dof = base.n_jumps, base.df
    table = base.term_table()
    assert not table.loc["bin(b, 8)", "selected"]
    # a tiny jump in the flat term bin(b), and one next to the real cuts of bin(a)
    res = _with_tiny_jump(_with_tiny_jump(base, 1, 4), 0, 1)
    s_a = int(m.block_ptr[0])
    assert not base.jumps[s_a + 1]  # bin(a)'s level 1 was not a cut
    assert res.n_jumps == n_cuts
    assert res.df == dof
    assert len(res.cut_points()) == len(base.cut_points()) == n_cuts
    assert res.cut_points()["term"].tolist().count("bin(b, 8)") == 0
    t = res.term_table()
    assert t.loc["bin(b, 8)", "cuts_kept"] == 0
    assert not t.loc["bin(b, 8)", "selected"]
    assert t["cuts_kept"].sum() == n_cuts
    assert "bin(b, 8)" not in res.selected_terms()
    text = str(res.summary())
    assert f"Cut-points kept (jumps): {n_cuts}".replace(" ", "") in text.replace(" ", "")
    # the refit's design: bin(b) has one segment (no indicator), bin(a) the base's
    X_res, names_res = res.selected_design()
    X_base, names_base = base.selected_design()
    assert names_res == names_base
    np.testing.assert_array_equal(X_res, X_base)
    assert not any(n.startswith("bin(b, 8)") for n in names_res)
    # the relaxed fit's segments (the engine's reader of the same rule)
    w = m.penalty_weights
    unit = 1.0  # binomial: η is dimensionless
    maps_res = segment_maps(res.coef, w, m.block_ptr, unit)
    maps_base = segment_maps(base.coef, w, m.block_ptr, unit)
    for a, b in zip(maps_res, maps_base, strict=True):
        np.testing.assert_array_equal(a, b)
    # the plot marks bin(b) as dropped, as the term table says
    fig = res.plot_shapes()
    assert "bin(b, 8)" in _dropped_titles(fig)
    assert "bin(a, 8)" not in _dropped_titles(fig)
    matplotlib.pyplot.close(fig)


def test_a_real_jump_just_above_the_tolerance_is_a_cut():
    df = _data()
    m = bs.glm("y ~ bin(a, 8) + bin(b, 8)", df, family="binomial")
    flat = m.fit(lam=1.5 * m.lambda_max())
    assert flat.n_jumps == 0
    s, e = int(m.block_ptr[1]), int(m.block_ptr[2])
    theta = flat.coef.copy()
    step = 10 * JUMP_RTOL  # ten times the tolerance (η's unit is 1 for the binomial)
    theta[s + 4 : e] += step
    res = BinarsityResults(m, dataclasses.replace(flat.solution, coef=theta), "user")
    assert res.n_jumps == 1
    assert res.df == flat.df + 1
    assert res.term_table().loc["bin(b, 8)", "selected"]


def test_the_estimators_cut_points_use_the_same_tolerance():
    df = _data()
    X, y = df[["a", "b"]], df["y"]
    est = bs.BinarsityClassifier(n_bins=8, lam=0.02).fit(X, y)
    cuts = est.cut_points()
    ptr = est.block_ptr_
    coef = est.coef_.copy()
    # a tiny jump in the middle of the second feature's chain
    k = int(ptr[1]) + 3
    coef[k:int(ptr[2])] += TINY
    est.coef_ = coef
    after = est.cut_points()
    pd.testing.assert_frame_equal(after.reset_index(drop=True), cuts.reset_index(drop=True),
                                  check_exact=False, atol=1e-8)  # fmt: skip


@pytest.mark.parametrize("family", ["binomial", "gaussian", "poisson"])
@pytest.mark.parametrize("factor", [1.0, 1.5])
def test_a_fit_at_or_above_lambda_max_is_exactly_the_null_fit(family, factor):
    df = _data(seed=3)
    if family == "gaussian":
        formula = "z ~ bin(a, 10) + bin(b, 10) + C(g)"
    elif family == "poisson":
        df["c"] = np.random.default_rng(4).poisson(np.exp(0.3 * (df["a"] > 0)))
        formula = "c ~ bin(a, 10) + bin(b, 10) + C(g)"
    else:
        formula = "y ~ bin(a, 10) + bin(b, 10) + C(g)"
    m = bs.glm(formula, df, family=family)
    res = m.fit(lam=factor * m.lambda_max())
    for j, block in enumerate(m.spec.blocks):
        if block.penalized:
            s, e = int(m.block_ptr[j]), int(m.block_ptr[j + 1])
            assert np.all(res.coef[s:e] == 0.0), (block.term, res.coef[s:e])
    assert res.n_jumps == 0
    table = res.term_table()
    assert not table.loc["bin(a, 10)", "selected"]
    assert not table.loc["bin(b, 10)", "selected"]
    fig = res.plot_shapes(terms=["bin(a, 10)", "bin(b, 10)"])
    assert sorted(_dropped_titles(fig)) == ["bin(a, 10)", "bin(b, 10)"]
    matplotlib.pyplot.close(fig)
    assert res.converged


def _null_data(seed: int = 9) -> pd.DataFrame:
    # y independent of a and b; with this seed the former solver left a jump of 5.7e-10
    # in bin(b) at λ_max, which the summary called "selected" (the Cox/lung symptom)
    rng = np.random.default_rng(seed)
    n = 1500
    df = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n),
                       "g": rng.integers(0, 3, n)})  # fmt: skip
    df["y"] = rng.binomial(1, 0.3, n)
    return df


def _penalised_levels(res) -> np.ndarray:
    m = res.model
    return np.concatenate([
        res.coef[int(m.block_ptr[j]) : int(m.block_ptr[j + 1])]
        for j, block in enumerate(m.spec.blocks) if block.penalized
    ])  # fmt: skip


def test_the_first_point_of_a_path_is_exactly_flat():
    m = bs.glm("y ~ bin(a, 10) + bin(b, 10) + C(g)", _null_data(), family="binomial")
    path = m.fit_path(n_lambdas=5)
    first = path[0]
    assert first.lam == m.lambda_max()
    assert np.all(_penalised_levels(first) == 0.0)
    assert first.n_jumps == 0
    assert first.selected_terms() == ["C(g)"]


def test_cv_choosing_lambda_max_reports_every_binned_term_dropped():
    m = bs.glm("y ~ bin(a, 10) + bin(b, 10) + C(g)", _null_data(), family="binomial")
    cv = m.fit_cv(folds=5, n_lambdas=20, random_state=0)
    res = cv.results("lam_1se")
    assert res.lam == m.lambda_max()
    assert np.all(_penalised_levels(res) == 0.0)
    assert res.n_jumps == 0 and len(res.cut_points()) == 0
    assert res.selected_terms() == ["C(g)"]
    table = res.term_table()
    assert table.loc[["bin(a, 10)", "bin(b, 10)"], "cuts_kept"].tolist() == [0, 0]
    summary = str(res.summary())
    assert "Cut-points kept (jumps):" in summary
    fig = res.plot_shapes(terms=["bin(a, 10)", "bin(b, 10)"])
    assert sorted(_dropped_titles(fig)) == ["bin(a, 10)", "bin(b, 10)"]
    matplotlib.pyplot.close(fig)
    # the refit has no segment indicator of a dropped term
    _, names = res.selected_design()
    assert not any(n.startswith("bin(") for n in names)
    # the description and its SQL carry the same flat terms: one value per binned term,
    # and SQLite's predictions depend on g alone
    spec = res.to_spec()
    assert [len(set(t["theta"])) for t in spec["terms"] if t["kind"] == "bin"] == [1, 1]
    df = _null_data()
    con = sqlite3.connect(":memory:")
    df[["a", "b", "g"]].to_sql("t", con, index=False)
    rows = con.execute(res.to_sql(table="t")).fetchall()
    pred = np.array([r[-1] for r in rows], dtype=np.float64)
    assert pd.Series(pred).groupby(df["g"].to_numpy()).nunique().tolist() == [1, 1, 1]


@pytest.mark.parametrize("c", [1e-140, 1e-100, 1e-50, 1e-8, 1e8, 1e50, 1e100, 1e140])
def test_gaussian_fit_is_equivariant_to_the_scale_of_y(c):
    df = _data(n=2000, seed=5)
    ref = bs.glm("z ~ bin(a, 10) + bin(b, 10)", df).fit(lam=0.01)
    scaled = bs.glm("w ~ bin(a, 10) + bin(b, 10)", df.assign(w=df["z"] * c)).fit(lam=0.01 * c)
    assert scaled.converged
    # coefficients to 1e-9 of their scale (the solver's tol is relative to y's spread)
    top = float(np.max(np.abs(ref.coef)))
    np.testing.assert_allclose(scaled.coef / c, ref.coef, rtol=0, atol=1e-9 * top)
    np.testing.assert_array_equal(scaled.jumps, ref.jumps)
    assert scaled.n_jumps == ref.n_jumps > 0
    assert scaled.df == ref.df


@pytest.mark.parametrize("c", [1e-160, 1e-200, 1e-300])
def test_a_gaussian_y_whose_square_underflows_is_refused(c):
    df = _data(n=500, seed=5)
    df["w"] = df["z"] * c
    with pytest.raises(ValueError, match=r"y has values no larger than .* rescale y"):
        bs.glm("w ~ bin(a, 10) + bin(b, 10)", df)
    with pytest.raises(ValueError, match=r"rescale y"):
        bs.BinarsityGLM(n_bins=10).fit(df[["a", "b"]], df["w"])
    sm = pytest.importorskip("statsmodels.api")
    with pytest.raises(ValueError, match=r"y has values no larger than .* rescale y"):
        bs.glm("w ~ bin(a, 10) + bin(b, 10)", df, family=sm.families.Gaussian())


def test_the_jump_tolerance_follows_the_unit_of_eta():
    theta = np.array([0.0, 1e-3, 2e-3])
    assert jump_tolerance(theta, 1.0) == JUMP_RTOL
    assert jump_tolerance(theta * 1e-100, 1e-100) == pytest.approx(JUMP_RTOL * 1e-100)
    assert jump_tolerance(np.array([0.0, 50.0]), 1.0) == pytest.approx(50 * JUMP_RTOL)


def test_the_exact_null_fit_keeps_linear_terms_in_the_data_units():
    """At λ ≥ λ_max the solver swaps a flat-within-tolerance solution for the exact null
    fit, which runs on the problem's internal (centred, scaled) dense columns: its
    linear coefficients and intercept must come back in the data's units (a CV that
    chose λ_max once returned them scaled — the model's own predictions were off)."""
    rng = np.random.default_rng(3)
    n = 400
    df = pd.DataFrame({"x": rng.normal(size=n), "z": 1000 * rng.normal(size=n),
                       "w": 50 + 0.01 * rng.normal(size=n)})  # fmt: skip
    df["y"] = 0.002 * df["z"] + 3 * df["w"] + rng.normal(size=n)
    model = bs.glm("y ~ bin(x, 4) + z + w", df)
    res = model.fit(lam=1.0)
    prep = model.prepare()
    lmax = model.lambda_max()
    sol = res.solution
    # a solution flat but for a jump far below the tolerance, above λ_max
    theta = sol.coef.copy()
    theta[1] += 1e-13
    tiny = dataclasses.replace(sol, coef=theta, lam=2 * lmax)
    null = prep._exactly_flat(tiny, 2 * lmax, 1e-7)
    assert np.all(null.coef == 0)
    ols = np.linalg.lstsq(np.column_stack([np.ones(n), df["z"], df["w"]]), df["y"], rcond=None)[0]
    np.testing.assert_allclose(null.dense_coef, ols[1:], rtol=1e-6)
    np.testing.assert_allclose(null.intercept, ols[0], rtol=1e-6, atol=1e-6)
