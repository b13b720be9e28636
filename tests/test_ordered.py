"""Ordered factors: ``ordered(x, levels=[...])`` / ``bin(C(x, levels=[...]))`` (design.md §7).

A TV chain over the factor's levels in the given order: proven against cvxpy (the
weighted fused lasso over the levels, weights and an offset), equal to ``bin()`` of the
level positions (the same chain), invariant to how the levels are spelled; unseen and
unknown levels are refused by name; labels are the levels; to_spec round trips.
"""

from __future__ import annotations

import json
import pickle

import cvxpy as cp
import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import binarsity_stats as bs

RATINGS = ["AAA", "AA", "A", "BBB", "BB", "B", "CCC", "D"]


def _data(n: int = 400, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    k = rng.integers(0, len(RATINGS), n)
    eta = -2.0 + 0.9 * (k >= 3) + 1.2 * (k >= 6)
    return pd.DataFrame(
        {"rating": np.array(RATINGS, dtype=object)[k], "pos": k.astype(float),
         "w": rng.uniform(0.5, 2.0, n), "off": rng.normal(scale=0.2, size=n),
         "y": (rng.uniform(size=n) < 1 / (1 + np.exp(-eta))).astype(float)}
    )  # fmt: skip


def test_matches_cvxpy_fused_lasso_over_the_levels():
    df = _data()
    model = bs.glm(f"y ~ ordered(rating, levels={RATINGS}) + offset(off)", df,
                   family="binomial", sample_weight="w")  # fmt: skip
    lam = 0.01
    res = model.fit(lam=lam, tol=1e-10, max_iter=20000)
    (block,) = model.spec.blocks
    assert block.ordered and block.penalized and block.levels == tuple(RATINGS)
    assert model._block_kinds() == ["tv"]
    codes = model.binned.codes[0].astype(np.intp)
    assert np.array_equal(codes, df.pos.to_numpy().astype(int))  # the given order
    n, d = len(df), len(RATINGS)
    X = np.zeros((n, d))
    X[np.arange(n), codes] = 1.0
    sw, y, off = df.w.to_numpy(), df.y.to_numpy(), df.off.to_numpy()
    theta, b0 = cp.Variable(d), cp.Variable()
    eta = X @ theta + b0 + off
    loss = cp.sum(cp.multiply(sw, cp.logistic(eta) - cp.multiply(y, eta))) / sw.sum()
    w = model.penalty_weights
    pen = cp.sum(cp.multiply(w[1:], cp.abs(cp.diff(theta))))
    prob = cp.Problem(cp.Minimize(loss + lam * pen), [(X * sw[:, None]).sum(0) @ theta == 0])
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    assert res.converged
    assert_allclose(res.objective, prob.value, rtol=1e-6)
    # the chain fuses neighbouring ratings: fewer distinct levels than ratings
    assert 1 < len(np.unique(np.round(res.coef, 8))) < d


def test_same_chain_as_bin_of_the_positions_and_spellings_agree():
    df = _data()
    a = bs.glm(f"y ~ ordered(rating, levels={RATINGS})", df).fit(lam=0.005, tol=1e-10)
    b = bs.glm(f"y ~ bin(C(rating, levels={RATINGS}))", df).fit(lam=0.005, tol=1e-10)
    c = bs.glm("y ~ bin(pos, 8)", df).fit(lam=0.005, tol=1e-10)
    assert_allclose(b.coef, a.coef, atol=1e-12)
    assert_allclose(c.coef, a.coef, atol=1e-9)
    # a pandas ordered categorical gives its category order without levels=
    df2 = df.assign(rating=pd.Categorical(df.rating, categories=RATINGS, ordered=True))
    d = bs.glm("y ~ ordered(rating)", df2).fit(lam=0.005, tol=1e-10)
    assert_allclose(d.coef, a.coef, atol=1e-12)


def test_labels_cut_points_and_summary_use_the_levels():
    df = _data()
    res = bs.glm(f"y ~ ordered(rating, levels={RATINGS})", df, family="binomial").fit(
        lam=0.01
    )
    shapes = res.shape_functions()
    assert list(shapes["label"]) == RATINGS
    cuts = res.cut_points()
    assert len(cuts) >= 1 and cuts["left"].iloc[0].split("..")[-1] in RATINGS
    assert res.term_table()["kind"].iloc[0] == "ordered"
    assert "ordered" in str(res.summary())
    merged = res.shape_functions(merge=True)
    assert any(".." in lab for lab in merged["label"])


def test_unknown_and_unseen_levels_are_refused_by_name():
    df = _data()
    with pytest.raises(ValueError, match="'rating'.*'CCC'|'rating'.*CCC"):
        bs.glm("y ~ ordered(rating, levels=['AAA', 'AA', 'A', 'BBB', 'BB', 'B', 'D'])", df)
    res = bs.glm(f"y ~ ordered(rating, levels={RATINGS})", df).fit(lam=0.01)
    new = df.head(3).assign(rating=["AAA", "C", "D"])
    with pytest.raises(ValueError, match="'rating'.*C"):
        res.predict(new)
    with pytest.raises(ValueError, match="at least two levels"):
        bs.glm("y ~ ordered(rating, levels=['AAA'])", df)


def test_spec_sql_scorer_and_pickle_round_trip():
    import sqlite3

    from binarsity_stats.design import standalone_scorer

    df = _data()
    res = bs.glm(f"y ~ ordered(rating, levels={RATINGS})", df, family="binomial").fit(
        lam=0.002
    )
    spec = res.to_spec()
    (term,) = spec["terms"]
    assert term["penalty"] == "tv" and term["levels"] == RATINGS
    assert np.array_equal(bs.from_spec(json.loads(json.dumps(spec))).predict(df), res.predict(df))
    assert_allclose(standalone_scorer.predict(spec, df.to_dict("records")), res.predict(df),
                    rtol=1e-12)  # fmt: skip
    con = sqlite3.connect(":memory:")
    df.to_sql("t", con, index=False)
    got = np.array([r[-1] for r in con.execute(res.to_sql(table="t")).fetchall()])
    assert_allclose(got, res.predict(df), rtol=1e-12)
    back = pickle.loads(pickle.dumps(res))
    assert_allclose(back.predict(df), res.predict(df), rtol=0)


def test_plot_draws_the_levels_as_bars():
    import matplotlib

    matplotlib.use("Agg")
    df = _data()
    res = bs.glm(f"y ~ ordered(rating, levels={RATINGS})", df).fit(lam=0.002)
    fig = res.plot_shapes()
    ticks = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert ticks == RATINGS


def test_bootstrap_report_of_an_ordered_factor():
    df = _data(n=200)
    res = bs.glm(f"y ~ ordered(rating, levels={RATINGS})", df).fit(lam=0.003)
    res.bootstrap(n_boot=3, random_state=0)
    html = res.report()
    assert "ordered factor (TV penalised)" in html
    assert np.isnan(res.bootstrap_.cut_frequencies()["cut"]).all()
