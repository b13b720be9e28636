"""Varying coefficients ``bin(x):C(g)``: one TV chain per level of g (design.md §7).

What is proven here: the fit of the breaks layout (one block, a chain per level, ω = 0
at each level start, the level means free) is the optimum of design.md §7's model —
per-level chains with one constraint per level, the level means in C(g) — solved by
cvxpy on the dense one-hot matrix (weights, offsets; gaussian, binomial, poisson); a
by-group term with one level is the plain ``bin(x)`` fit; ``C(g)`` next to the term is
absorbed (same fit); the treatment parametrisation of ``bin(x) * C(g)`` spans the same
model (same fit at a vanishing λ); predict, unseen levels and pickles.
"""

from __future__ import annotations

import pickle

import cvxpy as cp
import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import binarsity_stats as bs


def _data(family: str, n: int = 240, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    g = rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2])
    eta = np.where(g == "a", 0.8 * (x > 0), -0.6 * (x > 0.5)) + np.where(g == "c", 0.4, 0.0)
    df = pd.DataFrame({"x": np.round(x, 1), "g": g, "w": rng.uniform(0.3, 2.0, n)})
    df["off"] = rng.normal(scale=0.2, size=n)
    if family == "gaussian":
        df["y"] = eta + rng.normal(scale=0.5, size=n)
    elif family == "binomial":
        df["y"] = (rng.uniform(size=n) < 1 / (1 + np.exp(-eta - df.off))).astype(float)
    else:
        df["y"] = rng.poisson(np.exp(eta + df.off)).astype(float)
    return df


def _cvxpy_by_group(family, x_codes, g_codes, d, G, y, sw, off, lam, w):
    """design.md §7: f_g per level (Σ_k n_gk f_gk = 0 each), level means m (C(g)), b0."""
    n = len(y)
    F = cp.Variable((G, d))
    m = cp.Variable(G)
    b0 = cp.Variable()
    X = np.zeros((n, G * d))
    X[np.arange(n), g_codes * d + x_codes] = 1.0
    Gx = np.zeros((n, G))
    Gx[np.arange(n), g_codes] = 1.0
    eta = X @ cp.reshape(F, (G * d,), order="C") + Gx @ m + b0 + off
    W = sw.sum()
    if family == "gaussian":
        loss = cp.sum(cp.multiply(sw, 0.5 * cp.square(eta) - cp.multiply(y, eta))) / W
    elif family == "binomial":
        loss = cp.sum(cp.multiply(sw, cp.logistic(eta) - cp.multiply(y, eta))) / W
    else:
        loss = cp.sum(cp.multiply(sw, cp.exp(eta) - cp.multiply(y, eta))) / W
    counts = (X * sw[:, None]).sum(axis=0).reshape(G, d)
    pen = 0
    cons = [(Gx * sw[:, None]).sum(axis=0) @ m == 0]
    for gi in range(G):
        pen = pen + cp.sum(cp.multiply(w[gi * d + 1 : (gi + 1) * d], cp.abs(cp.diff(F[gi]))))
        cons.append(counts[gi] @ F[gi] == 0)
    prob = cp.Problem(cp.Minimize(loss + lam * pen), cons)
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    return prob.value


@pytest.mark.parametrize("family", ["gaussian", "binomial", "poisson"])
def test_matches_cvxpy_on_the_per_level_constraint_model(family):
    df = _data(family)
    model = bs.glm("y ~ bin(x, 6):C(g) + offset(off)", df, family=family, sample_weight="w")
    lam = 0.02
    res = model.fit(lam=lam, tol=1e-10, max_iter=20000)
    (block,) = model.spec.blocks
    assert block.by == "g" and block.by_levels == ("a", "b", "c") and block.n_levels == 18
    codes = model.binned.codes[0].astype(np.intp)
    d = block.n_bins
    ref = _cvxpy_by_group(
        family, codes % d, codes // d, d, 3, df.y.to_numpy(), df.w.to_numpy(),
        df.off.to_numpy(), lam, model.penalty_weights,
    )  # fmt: skip
    assert res.converged
    assert_allclose(res.objective, ref, rtol=1e-6)
    # no penalty across levels: the weights vanish at every level start
    assert np.all(model.penalty_weights[[0, 6, 12]] == 0)
    assert np.all(model.penalty_weights[np.r_[1:6, 7:12, 13:18]] > 0)


def test_one_level_is_the_plain_bin_fit():
    df = _data("gaussian")
    df["one"] = "all"
    plain = bs.glm("y ~ bin(x, 8)", df, sample_weight="w")
    by = bs.glm("y ~ bin(x, 8):C(one)", df, sample_weight="w")
    assert_allclose(by.penalty_weights, plain.penalty_weights, rtol=1e-14)
    a, b = plain.fit(lam=0.01, tol=1e-10), by.fit(lam=0.01, tol=1e-10)
    assert_allclose(b.coef, a.coef, atol=1e-10)
    assert_allclose(b.intercept, a.intercept, atol=1e-10)


def test_a_C_term_of_the_group_is_absorbed():
    df = _data("gaussian")
    a = bs.glm("y ~ bin(x, 6):C(g)", df).fit(lam=0.01, tol=1e-10)
    b = bs.glm("y ~ C(g) + bin(x, 6):C(g)", df).fit(lam=0.01, tol=1e-10)
    c = bs.glm("y ~ bin(x, 6, by=g)", df).fit(lam=0.01, tol=1e-10)
    assert [bl.term for bl in b.model.spec.blocks] == ["bin(x, 6):C(g)"]
    assert [bl.term for bl in c.model.spec.blocks] == ["bin(x, 6):C(g)"]
    assert_allclose(b.coef, a.coef, atol=1e-12)
    assert_allclose(c.coef, a.coef, atol=1e-12)


def test_main_effect_gives_treatment_deviations_spanning_the_same_model():
    df = _data("gaussian")
    m = bs.glm("y ~ bin(x, 6) * C(g)", df)
    main, by = m.spec.blocks
    assert main.by is None and by.by_main and by.n_levels == 1 + 2 * 6
    assert by.level_labels()[0] == "a: reference"
    text = str(m.fit(lam=0.01).summary())
    assert "deviations from the main shape" in " ".join(text.split())
    # at a vanishing λ both parametrisations interpolate the same cell means
    sep = bs.glm("y ~ bin(x, 6):C(g)", df).fit(lam=1e-9, tol=1e-12, max_iter=50000)
    tr = m.fit(lam=1e-9, tol=1e-12, max_iter=50000)
    assert_allclose(tr.fittedvalues, sep.fittedvalues, atol=1e-6)
    # the reference level's rows are predicted by the main chain alone (+ one free level)
    ref_rows = df.g.to_numpy() == "a"
    codes = m.binned.codes[1]
    assert np.all(codes[ref_rows] == 0) and np.all(codes[~ref_rows] > 0)


def test_predict_replays_the_groups_and_names_an_unseen_level(tmp_path):
    df = _data("binomial")
    res = bs.glm("y ~ bin(x, 6):C(g)", df, family="binomial").fit(lam=0.005)
    assert_allclose(res.predict(df), res.fittedvalues, rtol=1e-12)
    new = df.head(5).copy()
    new.loc[new.index[0], "g"] = "zz"
    with pytest.raises(ValueError, match="'g'.*zz"):
        res.predict(new)
    back = pickle.loads(pickle.dumps(res))
    assert_allclose(back.predict(df), res.fittedvalues, rtol=1e-12)


def test_missing_values_are_refused_by_name():
    df = _data("gaussian")
    df.loc[3, "g"] = None
    with pytest.raises(ValueError, match="'g' contains missing values"):
        bs.glm("y ~ bin(x, 6):C(g)", df)
    df = _data("gaussian")
    df.loc[3, "x"] = np.nan
    with pytest.raises(ValueError, match="'x' contains missing values"):
        bs.glm("y ~ bin(x, 6):C(g)", df, missing="separate")
    # missing="drop" drops the row
    m = bs.glm("y ~ bin(x, 6):C(g)", df, missing="drop")
    assert m.n_dropped == 1


@pytest.mark.parametrize("formula", ["y ~ bin(x, 6):C(g) + offset(off)",
                                     "y ~ bin(x, 6) * C(g) + offset(off)"])  # fmt: skip
def test_exports_predict_what_the_model_predicts(formula):
    import json
    import sqlite3

    from binarsity_stats.design import standalone_scorer

    df = _data("binomial")
    res = bs.glm(formula, df, family="binomial").fit(lam=0.003)
    spec = res.to_spec()
    by = [t for t in spec["terms"] if "by" in t]
    assert len(by) == 1 and by[0]["by"]["levels"] == ["a", "b", "c"]
    assert by[0]["input"] == {"column": "x"} and by[0]["by"]["column"] == "g"
    rebuilt = bs.from_spec(json.loads(json.dumps(spec)))
    assert np.array_equal(rebuilt.predict(df), res.predict(df))
    rows = df.to_dict("records")
    assert_allclose(standalone_scorer.predict(spec, rows), res.predict(df), rtol=1e-12)
    con = sqlite3.connect(":memory:")
    new = df.copy()
    new.loc[new.index[0], "g"] = "zz"  # unseen level: NULL in SQL, as predict raises
    new.to_sql("t", con, index=False)
    got = np.array([r[-1] for r in con.execute(res.to_sql(table="t")).fetchall()], dtype=float)
    assert np.isnan(got[0])
    assert_allclose(got[1:], res.predict(df.iloc[1:]), rtol=1e-12)
    card = res.scorecard()
    rows_of_term = card.table[card.table["term"] == by[0]["name"]]
    assert len(rows_of_term) == len(by[0]["theta"])
    assert rows_of_term["bin"].iloc[-1].startswith("c: (")


def test_plot_draws_one_curve_per_level():
    import matplotlib

    matplotlib.use("Agg")
    df = _data("gaussian")
    res = bs.glm("y ~ bin(x, 6) * C(g)", df).fit(lam=0.003)
    fig = res.plot_shapes()
    by_axis = [a for a in fig.axes if a.get_legend() is not None]
    assert len(by_axis) == 1
    labels = [t.get_text() for t in by_axis[0].get_legend().get_texts()]
    assert labels == ["a (reference)", "b", "c"]


def test_bootstrap_report_path_and_cv_run_on_a_by_group_model():
    df = _data("gaussian", n=200)
    model = bs.glm("y ~ bin(x, 5) * C(g)", df)
    res = model.fit(lam=0.01)
    boot = res.bootstrap(n_boot=3, random_state=0)
    freq = boot.cut_frequencies()
    assert len(freq) == 4 + 2 * 4  # main chain: 4 edges; 2 deviation chains: 4 each
    assert np.all(freq["cut"].iloc[4:8].to_numpy() == freq["cut"].iloc[:4].to_numpy())
    html = res.report()  # the cut table merges the frequencies per level's cut
    assert "b: (" in html
    cv = model.fit_cv(folds=3, lams=np.geomspace(0.1, 0.01, 4))
    assert np.isfinite(cv.lam_min)


def _numpy_kkt(res, lam):
    """Largest KKT violation of design.md §2, computed here from the rows (NumPy only).

    Per block, S_l = Σ_{k ≥ l} g_k with g the bin sums of s_i (μ_i − y_i) / W: S_0 = 0
    (the intercept), S_l = 0 at a break or a missing level (ω_l = 0: a free edge),
    S_l = −λ ω_l sign(jump) at a jump and |S_l| ≤ λ ω_l on a flat edge.
    """
    m = res.model
    sw = m.unit_weight
    r = sw * (res.fittedvalues - m.y) / sw.sum()
    worst = abs(r.sum())
    w, bp = m.penalty_weights, m.block_ptr
    for j in range(len(bp) - 1):
        s, e = bp[j], bp[j + 1]
        g = np.bincount(m.binned.codes[j], weights=r, minlength=e - s)
        S = np.cumsum(g[::-1])[::-1]
        th = res.coef[s:e]
        for k in range(1, e - s):
            bound = lam * w[s + k]
            if bound == 0:
                v = abs(S[k])
            elif th[k] != th[k - 1]:
                v = abs(S[k] + bound * np.sign(th[k] - th[k - 1]))
            else:
                v = max(abs(S[k]) - bound, 0.0)
            worst = max(worst, v)
    return worst


def test_kkt_on_real_data_with_a_by_group_term_and_an_ordered_factor():
    import statsmodels.api as sm

    fair = sm.datasets.fair.load_pandas().data
    fair["any"] = (fair.affairs > 0).astype(float)
    fair["religious"] = fair.religious.map({1.0: "not", 2.0: "mildly", 3.0: "fairly",
                                            4.0: "strongly"})  # fmt: skip
    lam = 2e-3
    res = bs.glm(
        "any ~ bin(age, 10) * C(religious) + ordered(rate_marriage) + bin(yrs_married, 8)",
        fair, family="binomial",
    ).fit(lam=lam, tol=1e-9, max_iter=5000)  # fmt: skip
    assert res.converged
    assert _numpy_kkt(res, lam) < 1e-7
    assert len(res.cut_points()) > 0


def test_the_order_of_the_group_levels_does_not_change_the_fit():
    df = _data("poisson")
    a = bs.glm("y ~ bin(x, 6):C(g) + offset(off)", df, family="poisson").fit(lam=0.01, tol=1e-10)
    b = bs.glm("y ~ bin(x, 6):C(g, levels=['c', 'a', 'b']) + offset(off)", df,
               family="poisson").fit(lam=0.01, tol=1e-10)  # fmt: skip
    assert b.model.spec.blocks[0].by_levels == ("c", "a", "b")
    assert_allclose(b.fittedvalues, a.fittedvalues, rtol=1e-8)
    assert_allclose(b.coef[6:12], a.coef[0:6], atol=1e-8)  # level a's chain moved
