"""The solvers reach the optimum: KKT conditions, a reference convex solver, each other.

References: cvxpy (CLARABEL) on the same objective written with a dense one-hot matrix
on small problems; on real data sets shipped with statsmodels/scikit-learn, the KKT
conditions of design.md §2 and the agreement of the two independent solvers.
"""

import warnings

import cvxpy as cp
import numpy as np
import pytest
from numpy.testing import assert_allclose

from binarsity_stats.kernels._histogram import bin_sums_all
from binarsity_stats.penalty._penalty import BinarsityPenalty, penalty_weights
from binarsity_stats.engine._solvers import ConvergenceWarning, Prepared, lambda_max, solve

FAMILIES = ["gaussian", "binomial", "poisson"]


def _quantile_codes(X, n_bins):
    """A simple quantile binning (the Binarizer is tested on its own)."""
    codes, sizes = [], []
    for x in X.T:
        edges = np.unique(np.quantile(x, np.linspace(0, 1, n_bins + 1)[1:-1]))
        c = np.searchsorted(edges, x, side="left")
        _, c = np.unique(c, return_inverse=True)  # drop empty bins
        codes.append(c)
        sizes.append(int(c.max()) + 1)
    bp = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
    return np.ascontiguousarray(np.vstack(codes).astype(np.uint8)), bp


def _simulate(family, n=300, p=3, n_bins=8, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    eta = 0.8 * np.sign(X[:, 0]) + 0.5 * (X[:, 1] > 0.7) - 0.3
    if family == "gaussian":
        y = eta + rng.normal(size=n)
    elif family == "binomial":
        y = rng.binomial(1, 1 / (1 + np.exp(-eta))).astype(float)
    else:
        y = rng.poisson(np.exp(eta)).astype(float)
    codes, bp = _quantile_codes(X, n_bins)
    return codes, bp, y, rng


def _counts(codes, bp, sw):
    out = np.zeros(bp[-1])
    bin_sums_all(codes, bp, sw, out)
    return out


def _cvxpy_objective(family, codes, bp, y, lam, w, sw, offset):
    """Solve the same problem with cvxpy on the dense one-hot matrix; return F*."""
    n = codes.shape[1]
    d = bp[-1]
    X = np.zeros((n, d))
    for j in range(codes.shape[0]):
        X[np.arange(n), bp[j] + codes[j]] = 1.0
    counts = _counts(codes, bp, sw)
    theta, b0 = cp.Variable(d), cp.Variable()
    eta = X @ theta + b0 + offset
    W = sw.sum()
    if family == "gaussian":
        loss = cp.sum(cp.multiply(sw, 0.5 * cp.square(eta) - cp.multiply(y, eta))) / W
    elif family == "binomial":
        loss = cp.sum(cp.multiply(sw, cp.logistic(eta) - cp.multiply(y, eta))) / W
    else:
        loss = cp.sum(cp.multiply(sw, cp.exp(eta) - cp.multiply(y, eta))) / W
    pen = cp.sum(cp.multiply(w[1:], cp.abs(cp.diff(theta))))
    cons = [counts[bp[j] : bp[j + 1]] @ theta[bp[j] : bp[j + 1]] == 0 for j in range(len(bp) - 1)]
    prob = cp.Problem(cp.Minimize(loss + lam * pen), cons)
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    return prob.value


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("solver", ["cd", "fista"])
def test_matches_cvxpy_with_weights_and_offset(family, solver):
    codes, bp, y, rng = _simulate(family)
    n = codes.shape[1]
    sw = rng.uniform(0.2, 2.0, n)
    offset = rng.normal(scale=0.3, size=n)
    counts = _counts(codes, bp, sw)
    w = penalty_weights("theory", counts, bp)
    w = w.copy()
    w[w > 0] *= w[w > 0] * rng.uniform(0.5, 1.5, np.count_nonzero(w))  # unequal weights
    lam = 0.02
    sol = solve(codes, bp, y, family=family, lam=lam, penalty_weights=w, sample_weight=sw,
                offset=offset, solver=solver, tol=1e-9, max_iter=20000)  # fmt: skip
    ref = _cvxpy_objective(family, codes, bp, y, lam, w, sw, offset)
    assert sol.converged
    assert_allclose(sol.objective, ref, rtol=1e-6)
    # the constraint holds
    for j in range(len(bp) - 1):
        assert abs(counts[bp[j] : bp[j + 1]] @ sol.coef[bp[j] : bp[j + 1]]) < 1e-8


def _kkt_from_solution(sol, codes, bp, y, family, lam, w, sw, offset):
    """Recompute the KKT violation from scratch (independent of the solver's own)."""
    from binarsity_stats.families._families import get_family

    fam = get_family(family)
    W = sw.sum()
    mu = fam.mean(sol.eta)
    r = sw * (mu - y) / W
    g = np.zeros(bp[-1])
    bin_sums_all(codes, bp, r, g)
    pen = BinarsityPenalty(bp, w, _counts(codes, bp, sw))
    return max(float(pen.kkt_violation(g, sol.coef, lam).max()), abs(r.sum()))


def _real_data(family):
    if family == "binomial":
        import statsmodels.api as sm

        df = sm.datasets.fair.load_pandas().data
        y = (df["affairs"] > 0).to_numpy(float)
        X = df[["rate_marriage", "age", "yrs_married", "children", "religious", "educ"]]
        return X.to_numpy(float), y
    if family == "poisson":
        import statsmodels.api as sm

        df = sm.datasets.randhie.load_pandas().data
        y = df["mdvis"].to_numpy(float)
        X = df[["lncoins", "idp", "lpi", "fmde", "physlm", "disea", "hlthg", "hlthf"]]
        return X.to_numpy(float), y
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    return X, y / y.std()


@pytest.mark.parametrize("family", FAMILIES)
def test_real_data_kkt_and_solver_agreement(family):
    X, y = _real_data(family)
    codes, bp = _quantile_codes(X, 20)
    n = len(y)
    rng = np.random.default_rng(1)
    sw = rng.uniform(0.5, 1.5, n)
    offset = rng.normal(scale=0.1, size=n)
    counts = _counts(codes, bp, sw)
    w = penalty_weights("theory", counts, bp)
    lmax = lambda_max(codes, bp, y, family=family, penalty_weights=w, sample_weight=sw,
                      offset=offset)  # fmt: skip
    lam = lmax / 20
    sols = {}
    for solver, tol in (("cd", 1e-9), ("fista", 1e-7)):
        sol = solve(codes, bp, y, family=family, lam=lam, penalty_weights=w, sample_weight=sw,
                    offset=offset, solver=solver, tol=tol, max_iter=20000)  # fmt: skip
        assert sol.converged, solver
        # tol is in the gradient's units (documented in solve): max(1, sd y) / max(1, mean y)
        mean = np.average(y, weights=sw)
        units = {"gaussian": max(1.0, np.sqrt(np.average((y - mean) ** 2, weights=sw))),
                 "poisson": max(1.0, mean), "binomial": 1.0}[family]  # fmt: skip
        assert _kkt_from_solution(sol, codes, bp, y, family, lam, w, sw, offset) <= tol * units
        sols[solver] = sol
    assert_allclose(sols["cd"].objective, sols["fista"].objective, rtol=1e-7)
    assert np.count_nonzero(np.diff(sols["cd"].coef)) > 0


@pytest.mark.parametrize("family", FAMILIES)
def test_lambda_max_gives_zero_and_just_below_does_not(family):
    codes, bp, y, rng = _simulate(family, n=400, seed=3)
    sw = rng.uniform(0.5, 1.5, codes.shape[1])
    w = penalty_weights("theory", _counts(codes, bp, sw), bp)
    lmax = lambda_max(codes, bp, y, family=family, penalty_weights=w, sample_weight=sw)
    at = solve(codes, bp, y, family=family, lam=lmax, penalty_weights=w, sample_weight=sw)
    assert np.all(at.coef == 0.0)
    below = solve(codes, bp, y, family=family, lam=0.95 * lmax, penalty_weights=w,
                  sample_weight=sw)  # fmt: skip
    assert np.any(below.coef != 0.0)


def test_no_intercept_keeps_constraint_and_kkt():
    codes, bp, y, rng = _simulate("gaussian", seed=5)
    y = y + 2.0
    w = penalty_weights("uniform", _counts(codes, bp, np.ones(len(y))), bp)
    for solver in ("cd", "fista"):
        sol = solve(codes, bp, y, family="gaussian", lam=0.01, penalty_weights=w,
                    fit_intercept=False, solver=solver, tol=1e-9, max_iter=50000)  # fmt: skip
        assert sol.converged and sol.intercept == 0.0
        counts = _counts(codes, bp, np.ones(len(y)))
        for j in range(len(bp) - 1):
            assert abs(counts[bp[j] : bp[j + 1]] @ sol.coef[bp[j] : bp[j + 1]]) < 1e-7


def test_unpenalized_dense_columns_and_categorical_block():
    """A dense column and a zero-weight (categorical) block are fitted without penalty."""
    codes, bp, y, rng = _simulate("gaussian", n=500, seed=7)
    n = codes.shape[1]
    z = rng.normal(size=n)
    cat = rng.integers(0, 4, n).astype(np.uint8)
    y = y + 0.7 * z + np.array([0.0, 0.5, -0.5, 1.0])[cat]
    codes2 = np.ascontiguousarray(np.vstack([codes, cat]))
    bp2 = np.append(bp, bp[-1] + 4).astype(np.intp)
    w = penalty_weights("uniform", _counts(codes2, bp2, np.ones(n)), bp2)
    w[bp[-1] :] = 0.0
    sol = solve(codes2, bp2, y, lam=1e9, penalty_weights=w, dense=z[:, None], tol=1e-10)
    # with every binned chain fused, the fit is OLS on [1, z, category dummies]
    D = np.column_stack([np.ones(n), z, np.eye(4)[cat][:, 1:]])
    beta = np.linalg.lstsq(D, y, rcond=None)[0]
    assert_allclose(sol.eta, D @ beta, atol=1e-7)
    assert np.all(sol.coef[: bp[-1]] == 0)


def test_separable_data_is_finite_and_warns():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 1))
    y = (x[:, 0] > 0).astype(float)
    codes, bp = _quantile_codes(x, 10)
    w = penalty_weights("uniform", _counts(codes, bp, np.ones(200)), bp)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        sol = solve(codes, bp, y, family="binomial", lam=1e-8, penalty_weights=w, max_iter=30)
    assert np.all(np.isfinite(sol.coef)) and np.isfinite(sol.intercept)
    assert any(issubclass(r.category, ConvergenceWarning) for r in rec) or sol.converged


def test_warm_start_reaches_same_solution_faster():
    codes, bp, y, _ = _simulate("binomial", n=2000, seed=2)
    w = penalty_weights("theory", _counts(codes, bp, np.ones(len(y))), bp)
    a = solve(codes, bp, y, family="binomial", lam=0.01, penalty_weights=w, tol=1e-9)
    b = solve(codes, bp, y, family="binomial", lam=0.009, penalty_weights=w, tol=1e-9)
    c = solve(codes, bp, y, family="binomial", lam=0.009, penalty_weights=w, tol=1e-9,
              warm_start=a)  # fmt: skip
    assert_allclose(b.objective, c.objective, rtol=1e-9)
    assert c.n_sweeps <= b.n_sweeps


def test_bad_arguments_are_named():
    codes, bp, y, _ = _simulate("gaussian")
    w = np.ones(bp[-1])
    with pytest.raises(ValueError, match="lam"):
        solve(codes, bp, y, lam=-1, penalty_weights=w)
    with pytest.raises(ValueError, match="family"):
        solve(codes, bp, y, family="weibull", lam=1, penalty_weights=w)
    with pytest.raises(ValueError, match="y has"):
        solve(codes, bp, y[:-1], lam=1, penalty_weights=w)
    with pytest.raises(ValueError, match="sample_weight"):
        solve(codes, bp, y, lam=1, penalty_weights=w, sample_weight=-np.ones(len(y)))
    with pytest.raises(ValueError, match="sample_weight"):
        solve(codes, bp, y, lam=1, penalty_weights=w, sample_weight=np.zeros(len(y)))
    with pytest.raises(ValueError, match="offset"):
        solve(codes, bp, y, lam=1, penalty_weights=w, offset=np.full(len(y), np.nan))
    with pytest.raises(ValueError, match="binomial"):
        solve(codes, bp, y, family="binomial", lam=1, penalty_weights=w)
    with pytest.raises(ValueError, match="poisson"):
        solve(codes, bp, -np.abs(y) - 1, family="poisson", lam=1, penalty_weights=w)
    with pytest.raises(ValueError, match="solver"):
        solve(codes, bp, y, lam=1, penalty_weights=w, solver="newton")
    with pytest.raises(ValueError, match="codes of block"):
        solve(codes, np.array([0, 2, 4, 6]), y, lam=1, penalty_weights=np.ones(6))


@pytest.mark.parametrize("solver", ["cd", "fista"])
def test_identical_blocks_are_merged_exactly(solver):
    """Two features with identical bins (x and 2x): the split of the effect between
    them is not identified; the merged solve is exact and the KKT holds per block."""
    codes, bp, y, rng = _simulate("binomial", n=800, seed=11)
    codes2 = np.ascontiguousarray(np.vstack([codes, codes[0]]))
    K0 = bp[1] - bp[0]
    bp2 = np.append(bp, bp[-1] + K0).astype(np.intp)
    sw = np.ones(codes.shape[1])
    counts = _counts(codes2, bp2, sw)
    w = penalty_weights("theory", counts, bp2)
    w[bp2[-2] + 1 :: 2] *= 0.5  # the copy is cheaper on every other edge
    lam = 0.005
    sol = solve(codes2, bp2, y, family="binomial", lam=lam, penalty_weights=w, solver=solver,
                tol=1e-8, max_iter=20000)  # fmt: skip
    assert sol.converged
    assert _kkt_from_solution(sol, codes2, bp2, y, "binomial", lam, w, sw, 0.0) <= 1e-8
    # the same optimum as the problem where the first block carries min weights alone
    w_single = penalty_weights("theory", _counts(codes, bp, sw), bp)
    w_single[: bp[1]] = np.minimum(w[: bp[1]], w[bp2[-2] :])
    ref = solve(codes, bp, y, family="binomial", lam=lam, penalty_weights=w_single, tol=1e-10)
    assert_allclose(sol.objective, ref.objective, rtol=1e-9)
    for j in range(len(bp2) - 1):
        s, e = bp2[j], bp2[j + 1]
        assert abs(counts[s:e] @ sol.coef[s:e]) < 1e-9


@pytest.mark.parametrize("duplicate", [False, True])
def test_prepared_design_reused_along_a_path_equals_fresh_solves(duplicate):
    """Paths and CV folds prepare a design once and solve it at many λ: the reuse
    (scratch buffers, merged identical blocks, the tolerance's scale) must not leak
    anything from one solve into the next - bitwise the same as fresh solves."""
    codes, bp, y, rng = _simulate("binomial", n=600, seed=4)
    if duplicate:
        codes = np.ascontiguousarray(np.vstack([codes, codes[1]]))
        bp = np.append(bp, bp[-1] + bp[2] - bp[1]).astype(np.intp)
    sw = rng.uniform(0.5, 2.0, size=len(y))
    w = penalty_weights("theory", _counts(codes, bp, sw), bp)
    dense = rng.normal(size=(len(y), 2))
    kw = {"family": "binomial", "penalty_weights": w, "dense": dense, "sample_weight": sw}
    prepared = Prepared(codes, bp, y, **kw)
    assert (prepared.merged is not None) == duplicate
    prev_a = prev_b = None
    for lam in (0.05, 0.01, 0.002, 0.01):  # down the path, then back up
        a = prepared.solve(lam, tol=1e-9, warm_start=prev_a)
        b = solve(codes, bp, y, lam=lam, tol=1e-9, warm_start=prev_b, **kw)
        for field in ("coef", "dense_coef", "eta", "bin_counts"):
            np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
        assert (a.intercept, a.objective, a.n_sweeps) == (b.intercept, b.objective, b.n_sweeps)
        prev_a, prev_b = a, b
    with pytest.raises(ValueError, match="lam"):
        prepared.solve(-1.0)
    with pytest.raises(ValueError, match="warm_start does not match"):
        prepared.solve(0.01, warm_start=solve(codes[:1], bp[:2], y, lam=0.01,
                                              penalty_weights=w[: bp[1]]))  # fmt: skip
