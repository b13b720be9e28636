"""Pair terms through the formula door (design.md §10, issue 25).

``glm("y ~ bin(a, 4) + bin(b, 4) + bin(a, 4):bin(b, 4)", df)`` fits the two main effects
and a step surface over the cells of the two axes' grid, identified by weighted zero
margins. What is proven here: the fit equals cvxpy's optimum of the same objective
(gaussian, binomial, poisson; row weights and an offset; an empty cell; a tied axis) to
1e-7 in relative objective; the surface's margins hold to 1e-10; the reported KKT
violation is ≤ tol; a pair whose first axis has one bin adds nothing (the 1-D chain's
fit); swapping a and b gives the same fit; ``bin(a) * bin(b)`` expands to the mains and
the pair (16 bins per axis); ``fit_path``/``fit_cv`` run with a pair; a cell empty at
training predicts with no pair effect; what is not supported yet refuses by name.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pandas as pd
import pytest

import binarsity_stats as bs


def _frame(seed, family, n=800, empty=True, tied=False, offset=False):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=n)
    b = rng.integers(0, 6, n).astype(float) if tied else rng.uniform(size=n)
    if empty:  # no row with a and b both high: the top-right cells are empty
        b = np.where(a > np.quantile(a, 0.75), np.minimum(b, np.quantile(b, 0.5)), b)
    eta = 0.4 * (a > 0) - 0.3 * (b > np.median(b)) + 0.9 * ((a > 0) & (b > np.median(b)))
    o = 0.3 * rng.normal(size=n) if offset else np.zeros(n)
    if family == "gaussian":
        y = eta + o + rng.normal(size=n)
    elif family == "binomial":
        y = rng.binomial(1, 1 / (1 + np.exp(-(eta + o)))).astype(float)
    else:
        y = rng.poisson(np.exp(eta + o)).astype(float)
    return pd.DataFrame({"a": a, "b": b, "o": o, "y": y, "w": rng.uniform(0.5, 2.0, n)})


def _reference(res, family):
    """cvxpy's optimum of the fit's objective, and the objective at the fit (same code)."""
    model = res.model
    binned = model.binned
    prob = model.prepare().prob
    pen = prob.penalty
    bp = binned.block_ptr
    n, d = binned.n_rows, int(bp[-1])
    X = np.zeros((n, d))
    for j in range(binned.n_blocks):
        X[np.arange(n), bp[j] + binned.codes[j]] = 1.0
    s = binned.sample_weight
    th, b0 = cp.Variable(d), cp.Variable()
    off = 0.0 if binned.offset is None else binned.offset
    eta = X @ th + b0 + off
    if family == "gaussian":
        loss = cp.sum(cp.multiply(s, 0.5 * cp.square(eta) - cp.multiply(res_y(model), eta)))
    elif family == "binomial":
        loss = cp.sum(cp.multiply(s, cp.logistic(eta) - cp.multiply(res_y(model), eta)))
    else:
        loss = cp.sum(cp.multiply(s, cp.exp(eta) - cp.multiply(res_y(model), eta)))
    loss = loss / s.sum()
    w = pen.weights
    terms, cons = [], []
    cnt = s @ X
    for j in range(binned.n_blocks):
        a, e = int(bp[j]), int(bp[j + 1])
        if j in pen.grids:
            g = pen.grids[j]
            c = th[a + g.edges[:, 1]] - th[a + g.edges[:, 0]]
            terms.append(cp.sum(cp.multiply(g.edge_weights, cp.abs(c))))
            cons.append(g.margin_matrix(cnt[a : a + g.n_cells]) @ th[a : a + g.n_cells] == 0)
            cons.append(th[a + g.n_cells : e] == 0)  # the empty-cell level: no parameter
        else:
            terms.append(cp.sum(cp.multiply(w[a + 1 : e], cp.abs(th[a + 1 : e] - th[a : e - 1]))))
            cons.append(cnt[a:e] @ th[a:e] == 0)
    obj = loss + res.lam * sum(terms)
    problem = cp.Problem(cp.Minimize(obj), cons)
    problem.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    th.value, b0.value = res.solution.coef, res.solution.intercept
    return problem.value, float(obj.value)


def res_y(model):
    return model.prepare().prob.y


def _pair_cells(res):
    model = res.model
    j = [b.is_pair for b in model.spec.blocks].index(True)
    bp = model.binned.block_ptr
    grid = model.prepare().prob.penalty.grids[j]
    theta = res.solution.coef[bp[j] : bp[j + 1]]
    return grid, theta, res.solution.bin_counts[bp[j] : bp[j + 1]]


FORMULA = "y ~ bin(a, 4) + bin(b, 4) + bin(a, 4):bin(b, 4)"


# cvxpy may call a solve at 1e-12 "inaccurate": the comparison to 1e-7 still decides
@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")
@pytest.mark.parametrize(
    "family, weighted, offset, tied",
    [("gaussian", False, False, False), ("binomial", True, False, False),
     ("poisson", False, True, False), ("gaussian", True, True, True),
     ("binomial", False, False, True)],
)  # fmt: skip
def test_pair_fit_equals_cvxpy(family, weighted, offset, tied):
    df = _frame(11, family, tied=tied, offset=offset)
    formula = FORMULA + (" + offset(o)" if offset else "")
    model = bs.glm(formula, df, family=family, sample_weight=df["w"] if weighted else None)
    lam = 0.05 * model.lambda_max()
    tol = 1e-9
    res = model.fit(lam=lam, tol=tol)
    assert res.converged and res.kkt_violation <= tol * model.prepare().tol_scale
    best, ours = _reference(res, family)
    assert abs(ours - best) <= 1e-7 * abs(best)
    grid, theta, counts = _pair_cells(res)
    assert np.any(theta != 0)
    cells = theta[: grid.n_cells]
    assert theta[grid.n_cells :].tolist() == [0.0] * (len(theta) - grid.n_cells)
    M = grid.margin_matrix(counts[: grid.n_cells])
    assert np.abs(M @ cells).max() <= 1e-10 * np.abs(M).sum(axis=1).max() * np.abs(cells).max()
    if not tied:
        assert grid.n_cells < 16  # the empty cells carry no parameter


def test_a_pair_with_one_bin_on_an_axis_is_the_chain_alone():
    df = _frame(3, "gaussian", empty=False)
    df["a"] = 1.0  # one bin: the b-margins fix every cell at 0
    lam = 0.01
    pair = bs.glm("y ~ bin(b, 4) + bin(a, 4):bin(b, 4)", df).fit(lam=lam, tol=1e-10)
    chain = bs.glm("y ~ bin(b, 4)", df).fit(lam=lam, tol=1e-10)
    grid, theta, _ = _pair_cells(pair)
    assert grid.shape == (1, 4)
    assert np.abs(theta).max() <= 1e-12  # 0 up to the rounding of the margins
    np.testing.assert_allclose(pair.coef[:4], chain.coef, rtol=0, atol=1e-8)
    assert abs(pair.objective - chain.objective) <= 1e-10 * abs(chain.objective)


def test_swapping_the_axes_gives_the_same_fit():
    df = _frame(5, "binomial")
    lam = 0.004
    ab = bs.glm("y ~ bin(a, 4) + bin(b, 4) + bin(a, 4):bin(b, 4)", df, family="binomial")
    ba = bs.glm("y ~ bin(b, 4) + bin(a, 4) + bin(b, 4):bin(a, 4)", df, family="binomial")
    r1, r2 = ab.fit(lam=lam, tol=1e-9), ba.fit(lam=lam, tol=1e-9)
    assert abs(r1.objective - r2.objective) <= 1e-8 * abs(r1.objective)
    np.testing.assert_allclose(r1.predict(df), r2.predict(df), rtol=0, atol=1e-6)


def test_the_star_expands_to_the_mains_and_the_pair():
    df = _frame(2, "gaussian")
    model = bs.glm("y ~ bin(a) * bin(b)", df)
    terms = [(b.term, b.kind) for b in model.spec.blocks]
    assert terms == [("bin(a)", "bin"), ("bin(b)", "bin"), ("bin(a):bin(b)", "pair")]
    pair = model.spec.blocks[2]
    assert pair.grid_shape == (16, 16)
    assert model.binned.kinds[2] == "grid"


def test_a_cell_empty_at_training_predicts_no_pair_effect():
    df = _frame(4, "gaussian")
    res = bs.glm(FORMULA, df).fit(lam=0.002)
    # a and b both at their top bins: a cell without training rows (``_frame``)
    new = pd.DataFrame({"a": [df.a.max()], "b": [df.b.max() + 1.0], "o": [0.0]})
    expect = res.intercept + res.coef[3] + res.coef[7]  # β0 + the two mains' top bins
    got = float(np.asarray(res.predict(new))[0])  # identity link: the prediction is η
    assert abs(got - expect) <= 1e-12 * max(1.0, abs(expect))


def test_path_and_cv_run_with_a_pair():
    df = _frame(6, "gaussian", n=600)
    model = bs.glm(FORMULA, df)
    path = model.fit_path(n_lambdas=6)
    assert len(path.lams) == 6 and path.converged.all()
    cv = model.fit_cv(n_lambdas=6, folds=3, n_jobs=1)
    assert np.isfinite(cv.lam_min) and cv.lam_min <= path.lams[0]


def test_bad_pair_terms_are_refused_by_name():
    df = _frame(1, "gaussian")
    with pytest.raises(ValueError, match="pair term"):
        bs.glm("y ~ bin(a, 4, monotone='increasing'):bin(b, 4)", df)
    df.loc[0, "b"] = np.nan
    with pytest.raises(ValueError, match="'b'.*missing"):
        bs.glm("y ~ bin(a, 4):bin(b, 4)", df)


def test_a_weight_array_cannot_weigh_the_grid():
    df = _frame(1, "gaussian")
    d = int(bs.glm(FORMULA, df).binned.block_ptr[-1])
    with pytest.raises(ValueError, match=r"bin\(a, 4\):bin\(b, 4\)"):
        bs.glm(FORMULA, df, penalty_weights=np.ones(d))


def test_column_names_are_data_in_a_pair_term():
    rng = np.random.default_rng(8)
    n = 400
    first, second = "my col, pair=x", "b') + __import__('os')"
    df = pd.DataFrame({first: rng.normal(size=n), second: rng.uniform(size=n)})
    df["y"] = rng.normal(size=n) + (df[first] > 0) * (df[second] > 0.5)
    model = bs.glm(f"y ~ bin(`{first}`, 3):bin(`{second}`, 3)", df)
    (block,) = model.spec.blocks
    assert (block.column, block.pair_column, block.grid_shape) == (first, second, (3, 3))
    res = model.fit(lam=0.01)
    assert np.isfinite(res.predict(df.head(3))).all()


def test_a_pickled_pair_fit_predicts_and_fits_alike():
    import pickle

    df = _frame(9, "gaussian", n=400)
    res = bs.glm(FORMULA, df).fit(lam=0.01)
    back = pickle.loads(pickle.dumps(res))
    np.testing.assert_array_equal(back.predict(df), res.predict(df))
    assert back.model.binned.kinds[2] == "grid"
    again = back.model.fit(lam=0.01)
    np.testing.assert_array_equal(again.coef, res.coef)


def test_cells_the_margins_leave_free_at_infinite_lambda_are_refused():
    # five isolated cells (the corners and the centre of a 3 × 3 grid): no two are
    # neighbours, and a checkerboard of the corners meets every margin
    pts = [(0, 0), (0, 2), (2, 0), (2, 2), (1, 1)]
    a, b = np.repeat(np.array(pts, float).T, 30, axis=1)
    df = pd.DataFrame({"a": a, "b": b, "y": np.random.default_rng(0).normal(size=a.size)})
    with pytest.raises(ValueError, match=r"pair term 'bin\(a, 3\):bin\(b, 3\)'.*fewer bins"):
        bs.glm("y ~ bin(a, 3):bin(b, 3)", df)
    # the same cells with their neighbours filled are fitted
    full = pd.DataFrame({"a": np.repeat([0.0, 1.0, 2.0], 30), "b": np.tile([0.0, 1.0, 2.0], 30)})
    full["y"] = np.random.default_rng(1).normal(size=len(full))
    assert np.isfinite(bs.glm("y ~ bin(a, 3):bin(b, 3)", full).lambda_max())
