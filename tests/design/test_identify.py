"""Two by-group terms sharing one group column are identified (design.md §7, _identify).

``bin(x1):C(g) + bin(x2):C(g)``: the first term keeps g's level means, the later one
holds one constraint per level (within-level shapes). Proven here: the fit equals cvxpy
on that identified model (gaussian, binomial, poisson; weights, offset, no intercept),
the levels are unique (cvxpy's θ), predictions are those of the engine's solution, df
counts every free parameter once, ``refit()`` has no rank-deficiency warning and its SEs
are statsmodels GLM's on a full-rank design built here by hand; the estimators' ``by=``
do the same; single by-term models are untouched.
"""

from __future__ import annotations

import pickle
import warnings

import cvxpy as cp
import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from numpy.testing import assert_allclose

import binarsity_stats as bs

FORMULA = "y ~ bin(x1, 5):C(g) + bin(x2, 4):C(g) + offset(off)"


def _data(family: str, n: int = 300, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x1, x2 = np.round(rng.normal(size=n), 1), np.round(rng.uniform(size=n), 2)
    g = rng.choice(["a", "b", "c"], n, p=[0.45, 0.35, 0.2])
    eta = 0.7 * (x1 > 0) + np.where(g == "b", 0.5, 0.0) - 0.6 * (x2 > 0.4) * (g != "c")
    df = pd.DataFrame({"x1": x1, "x2": x2, "g": g, "w": rng.uniform(0.3, 2.0, n)})
    df["off"] = rng.normal(scale=0.2, size=n)
    if family == "gaussian":
        df["y"] = eta + rng.normal(scale=0.5, size=n)
    elif family == "binomial":
        df["y"] = (rng.uniform(size=n) < 1 / (1 + np.exp(-eta - df.off))).astype(float)
    else:
        df["y"] = rng.poisson(np.exp(eta + df.off)).astype(float)
    return df


def _cvxpy(model, df, family, lam, intercept):
    """θ of design.md §7's identified model: block 0 with its level means (one
    constraint; none without intercept), block 1 with one constraint per level."""
    y, sw, off = df.y.to_numpy(), df.w.to_numpy(), df.off.to_numpy()
    n, bp = len(y), model.block_ptr
    X = np.zeros((n, int(bp[-1])))
    for j in range(2):
        X[np.arange(n), bp[j] + model.binned.codes[j].astype(np.intp)] = 1.0
    theta = cp.Variable(int(bp[-1]))
    b0 = cp.Variable() if intercept else 0.0
    eta = X @ theta + b0 + off
    W = sw.sum()
    if family == "gaussian":
        loss = cp.sum(cp.multiply(sw, 0.5 * cp.square(eta) - cp.multiply(y, eta))) / W
    elif family == "binomial":
        loss = cp.sum(cp.multiply(sw, cp.logistic(eta) - cp.multiply(y, eta))) / W
    else:
        loss = cp.sum(cp.multiply(sw, cp.exp(eta) - cp.multiply(y, eta))) / W
    w = model.penalty_weights
    pen = cp.sum(cp.multiply(w[1:], cp.abs(cp.diff(theta))))  # ω = 0 at block/chain starts
    counts = (X * sw[:, None]).sum(axis=0)
    cons = [counts[: bp[1]] @ theta[: bp[1]] == 0] if intercept else []
    for first, m, _ in model.spec.blocks[1].chains():
        sl = slice(int(bp[1]) + first, int(bp[1]) + first + m)
        cons.append(counts[sl] @ theta[sl] == 0)
    prob = cp.Problem(cp.Minimize(loss + lam * pen), cons)
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    return prob.value, theta.value


@pytest.mark.parametrize(
    ("family", "intercept"),
    [("gaussian", True), ("binomial", True), ("poisson", True), ("gaussian", False)],
)
def test_matches_cvxpy_on_the_identified_model(family, intercept):
    df = _data(family)
    formula = FORMULA if intercept else FORMULA.replace("~", "~ 0 +")
    model = bs.glm(formula, df, family=family, sample_weight="w")
    assert model.by_donors == {1: 0}
    lam = 0.01
    res = model.fit(lam=lam, tol=1e-10, max_iter=20000)
    value, theta = _cvxpy(model, df, family, lam, intercept)
    assert res.converged
    assert_allclose(res.objective, value, rtol=1e-6)
    assert_allclose(res.coef, theta, atol=2e-4)  # unique levels: cvxpy's
    # the predictions are the engine solution's (only the parametrisation moved)
    assert_allclose(model.linear_predictor(res.coef, res.dense_coef, res.intercept),
                    res.solution.eta, rtol=0, atol=1e-10)  # fmt: skip
    # one constraint per level of g in the later term
    bp, n = model.block_ptr, model.bin_counts
    for first, m, _ in model.spec.blocks[1].chains():
        sl = slice(int(bp[1]) + first, int(bp[1]) + first + m)
        assert abs(n[sl] @ res.coef[sl]) < 1e-9 * n[sl].sum()


def _hand_design(res, df):
    """Full-rank design of the fit's segments, built from θ: intercept; block 0's
    (level, segment) indicators but the first; block 1's but the first of each level."""
    m = res.model
    cols, names = [np.ones(len(df))], ["Intercept"]
    for j, block in enumerate(m.spec.blocks):
        s = int(m.block_ptr[j])
        codes = m.binned.codes[j].astype(np.intp)
        first_of_block = True
        for first, length, lvl in block.chains():
            theta = res.coef[s + first : s + first + length]
            seg = np.concatenate([[0], np.cumsum(np.abs(np.diff(theta)) > 1e-9)])
            for sid in range(int(seg[-1]) + 1):
                levels = first + np.flatnonzero(seg == sid)
                if (first_of_block and j == 0) or (sid == 0 and j == 1):
                    first_of_block = False
                    continue
                cols.append(np.isin(codes, levels).astype(float))
                names.append(f"{j}{lvl}{sid}")
    return np.column_stack(cols), names


def test_df_and_refit_standard_errors_equal_statsmodels_on_a_full_rank_design():
    df = _data("gaussian", seed=3)
    model = bs.glm(FORMULA, df, sample_weight="w")
    res = model.fit(lam=2e-3)
    X, _ = _hand_design(res, df)
    assert np.linalg.matrix_rank(X) == X.shape[1]
    assert res.df == X.shape[1]  # every free parameter once (was + 2 level means)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # statsmodels' SingularMatrixWarning before
        ref = res.refit()
    Xs, _ = res.selected_design()
    assert Xs.shape == X.shape
    sm_res = sm.GLM(df.y, X, family=sm.families.Gaussian(), var_weights=df.w,
                    offset=df.off).fit()  # fmt: skip
    assert_allclose(np.sort(ref.bse.to_numpy()), np.sort(sm_res.bse), rtol=1e-8)
    assert_allclose(ref.fittedvalues, sm_res.fittedvalues, rtol=1e-10)


def test_a_C_term_and_monotone_terms_sharing_the_group():
    df = _data("poisson", seed=2)
    f = ("y ~ bin(x1, 5, monotone='increasing'):C(g) + bin(x2, 4, monotone='decreasing'):C(g)"
         " + C(g) + offset(off)")  # fmt: skip
    model = bs.glm(f, df, family="poisson", sample_weight="w")
    assert len(model.spec.blocks) == 2 and model.by_donors == {1: 0}
    res = model.fit(lam=1e-3, tol=1e-10)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ref = res.refit()
    X, _ = res.selected_design()
    assert np.linalg.matrix_rank(X) == X.shape[1] == len(ref.params)
    for j, sign in ((0, 1), (1, -1)):  # the shifts keep each chain monotone
        s = int(model.block_ptr[j])
        for first, m, _ in model.spec.blocks[j].chains():
            assert np.all(sign * np.diff(res.coef[s + first : s + first + m]) >= -1e-12)


def test_exports_and_pickle_predict_the_same():
    from binarsity_stats.design import standalone_scorer

    df = _data("binomial", seed=4)
    res = bs.glm(FORMULA, df, family="binomial", sample_weight="w").fit(lam=5e-3)
    p = res.predict(df)
    assert_allclose(pickle.loads(pickle.dumps(res)).predict(df), p, rtol=0, atol=0)
    spec = res.to_spec()
    assert_allclose(bs.from_spec(spec).predict(df), p, rtol=1e-14)
    rows = df.to_dict("records")
    got = standalone_scorer.predict(spec, rows)
    assert_allclose(got, p, rtol=1e-12)


def test_estimators_by_the_same_group_for_two_features():
    df = _data("gaussian", seed=5)
    X = df[["x1", "x2", "g"]]
    est = bs.BinarsityGLM(n_bins=[5, 4], by={"x1": "g", "x2": "g"}, lam=2e-3,
                          tol=1e-10).fit(X, df.y, sample_weight=df.w)  # fmt: skip
    model = bs.glm("y ~ bin(x1, 5):C(g) + bin(x2, 4):C(g)", df, sample_weight="w")
    res = model.fit(lam=2e-3, tol=1e-10)
    assert_allclose(est.coef_, res.coef, atol=1e-7)
    bp = est.block_ptr_
    n = model.bin_counts
    for first, m, _ in model.spec.blocks[1].chains():
        sl = slice(int(bp[1]) + first, int(bp[1]) + first + m)
        assert abs(n[sl] @ est.coef_[sl]) < 1e-9 * n[sl].sum()
    assert_allclose(est.predict(X), res.predict(df), rtol=1e-7)


def test_a_single_by_term_keeps_its_levels_bit_for_bit():
    df = _data("gaussian")
    model = bs.glm("y ~ bin(x1, 5):C(g) + bin(x2, 4)", df)
    assert model.by_donors == {}
    res = model.fit(lam=1e-3)
    assert np.array_equal(res.coef, np.asarray(res.solution.coef))


def _audit_data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x1": rng.uniform(size=n), "x2": rng.uniform(size=n),
                       "g": rng.choice(list("abc"), n), "w": rng.uniform(0.5, 2, n),
                       "off": rng.normal(scale=0.1, size=n)})  # fmt: skip
    df["y"] = (df.x1 > 0.5) * 1.0 + (df.g == "b") * 0.5 + rng.normal(size=n)
    df["t"], df["e"] = rng.exponential(size=n), rng.uniform(size=n) < 0.7
    df["lin"] = (df.g == "b") * 1.0  # the C(g)[b] column
    df["h"] = rng.choice(list("uv"), n)
    return df


def test_refit_names_non_identified_parameters_and_gives_them_no_standard_error():
    df = _audit_data()
    res = bs.glm("y ~ C(g) + lin + bin(x1, 5) + offset(off)", df, sample_weight="w").fit(1e-3)
    with pytest.warns(UserWarning, match=r"C\(g\)\[b\], lin are not identified"):
        ref = res.refit()
    assert ref.non_identified == ["C(g)[b]", "lin"]
    assert ref.bse[["C(g)[b]", "lin"]].isna().all()
    assert ref.conf_int().loc["lin"].isna().all()
    assert "NOT IDENTIFIED" in str(ref.summary())
    # the identified parameters' SEs: statsmodels on the design without the collinear column
    X, names = res.selected_design()
    keep = [k for k, name in enumerate(names) if name != "lin"]
    sm_res = sm.GLM(df.y, X[:, keep], var_weights=df.w, offset=df.off).fit()
    others = [names[k] for k in keep if names[k] != "C(g)[b]"]
    assert ref.bse[others].notna().all()
    assert_allclose(ref.bse[others].to_numpy(),
                    np.asarray(sm_res.bse)[[keep.index(names.index(o)) for o in others]],
                    rtol=1e-6)


@pytest.mark.parametrize("weights", [None, "w"])
def test_refit_of_a_stratified_cox_model_names_a_term_constant_within_strata(weights):
    df = _audit_data()
    with pytest.warns(UserWarning, match=r"C\(g\) is constant within every stratum"):
        model = bs.glm("Surv(t, e) ~ strata(g) + C(g) + bin(x1, 5)", df, family="cox",
                       sample_weight=weights)  # fmt: skip
    res = model.fit(1e-3)
    with pytest.warns(UserWarning, match=r"C\(g\)\[b\], C\(g\)\[c\] are not identified"):
        ref = res.refit()
    assert ref.bse[["C(g)[b]", "C(g)[c]"]].isna().all()
    assert ref.bse.drop(["C(g)[b]", "C(g)[c]"]).notna().all()


def test_full_rank_refits_name_nothing():
    df = _audit_data()
    for formula in ("y ~ 0 + C(g) + bin(x1, 5)", "y ~ C(g) + bin(x1, 5):C(g)",
                    "y ~ 0 + C(g) + C(h)"):
        res = bs.glm(formula, df, sample_weight="w").fit(1e-3)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert res.refit().non_identified == []


def test_an_ordered_factor_that_is_the_group_of_a_by_term_is_named():
    df = _audit_data()
    with pytest.warns(UserWarning, match=r"ordered\(g\) is not identified next to bin\(x1, 5\)"):
        model = bs.glm("y ~ ordered(g) + bin(x1, 5):C(g)", df)
    res = model.fit(1e-3)
    s = int(model.block_ptr[0])
    assert_allclose(res.coef[s : int(model.block_ptr[1])], 0.0, atol=1e-9)  # fused to 0
