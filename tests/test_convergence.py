"""Both solvers reach the KKT tolerance at the DEFAULT tol on hard data (issue 10).

Hard data: near-collinear blocks (x, y, z and carat of a diamond-like object, log price
as y), a poisson count model of doctor visits (statsmodels' randhie), more levels than
rows, weights, ties, tiny and huge scales. Passes are asserted as counts (never times);
optimality is proven by the KKT conditions, cvxpy and solver agreement; the polish on
the fused segments (design.md §9) never raises the objective.
"""

import warnings

import cvxpy as cp
import numpy as np
import pytest
from numpy.testing import assert_allclose

from binarsity_stats import Binarizer, BinarsityGLM
from binarsity_stats._datasets import simulate_collinear_sizes
from binarsity_stats.kernels._histogram import bin_sums_all
from binarsity_stats.penalty._penalty import penalty_weights
from binarsity_stats.engine._polish import polish
from binarsity_stats.engine._solvers import Prepared, _Problem, lambda_max


def _design(X, sw=None, n_bins=50):
    b = Binarizer(n_bins=n_bins)
    codes = np.ascontiguousarray(b.fit_transform(X, sample_weight=sw).T)
    sizes = np.asarray(b.n_bins_, dtype=np.intp)
    bp = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
    counts = np.zeros(bp[-1])
    bin_sums_all(codes, bp, np.ones(codes.shape[1]) if sw is None else sw, counts)
    return codes, bp, penalty_weights("theory", counts, bp)


def _diamonds(n=3000, seed=0):
    """Carat ~ lognormal; length, width, depth ≈ carat^(1/3) with 1% noise; log price."""
    return simulate_collinear_sizes(n, seed)


def _randhie():
    sm = pytest.importorskip("statsmodels.api")
    d = sm.datasets.randhie.load_pandas().data
    return d.drop(columns="mdvis").to_numpy(float), d["mdvis"].to_numpy(float)


CASES = {
    "collinear": (_diamonds, "gaussian"),
    "randhie": (_randhie, "poisson"),
}
# passes (cd sweeps) and iterations (fista) measured at the fix, with headroom;
# before it: cd 574 sweeps / fista > 250k iterations (collinear), fista not within
# 5,000 iterations on randhie (KKT 6e-3)
BOUNDS = {("collinear", "cd"): 50, ("collinear", "fista"): 600, ("randhie", "cd"): 50,
          ("randhie", "fista"): 300}  # fmt: skip


@pytest.fixture(scope="module")
def problems():
    out = {}
    for name, (make, family) in CASES.items():
        X, y = make()
        codes, bp, w = _design(X)
        lmax = lambda_max(codes, bp, y, family=family, penalty_weights=w)
        out[name] = (Prepared(codes, bp, y, family=family, penalty_weights=w), 0.01 * lmax)
    return out


@pytest.mark.parametrize("name", list(CASES))
def test_both_solvers_meet_default_tol_in_bounded_passes(problems, name):
    prep, lam = problems[name]
    sols = {}
    for solver in ("cd", "fista"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no ConvergenceWarning
            sol = prep.solve(lam, solver=solver)  # default tol and max_iter
        assert sol.converged
        assert sol.kkt_violation <= 1e-7 * prep.tol_scale
        count = sol.n_sweeps if solver == "cd" else sol.n_iter
        assert count <= BOUNDS[name, solver], (solver, count)
        sols[solver] = sol
    # the same optimum (to the precision that tol = 1e-7 on the gradient implies)
    cd, fi = sols["cd"], sols["fista"]
    assert abs(cd.objective - fi.objective) <= 1e-10 * abs(cd.objective)
    assert_allclose(cd.eta, fi.eta, atol=1e-5)
    assert_allclose(cd.coef, fi.coef, atol=1e-4)


def test_many_levels_few_rows_in_a_handful_of_sweeps():
    # n = 10 rows, p = 50 features (10 bins each): 3,785 CD passes before the polish
    for seed in range(5):
        rng = np.random.default_rng(seed)
        X, y = rng.normal(size=(10, 50)), rng.normal(size=10)
        est = BinarsityGLM().fit(X, y)
        assert est.converged_ and est.kkt_violation_ <= 1e-7
        assert est.n_iter_ <= 30, (seed, est.n_iter_)
        fi = BinarsityGLM(solver="fista").fit(X, y)
        assert fi.converged_
        # η is unique (strictly convex loss in η); θ need not be with 500 levels
        assert_allclose(fi.decision_function(X), est.decision_function(X), atol=1e-6)


def _cvxpy(family, codes, bp, y, lam, w, sw):
    n, d = codes.shape[1], bp[-1]
    X = np.zeros((n, d))
    for j in range(codes.shape[0]):
        X[np.arange(n), bp[j] + codes[j]] = 1.0
    counts = np.zeros(d)
    bin_sums_all(codes, bp, sw, counts)
    theta, b0 = cp.Variable(d), cp.Variable()
    eta = X @ theta + b0
    W = sw.sum()
    if family == "gaussian":
        loss = cp.sum(cp.multiply(sw, 0.5 * cp.square(eta) - cp.multiply(y, eta))) / W
    else:
        loss = cp.sum(cp.multiply(sw, cp.exp(eta) - cp.multiply(y, eta))) / W
    pen = cp.sum(cp.multiply(w[1:], cp.abs(cp.diff(theta))))
    cons = [counts[bp[j] : bp[j + 1]] @ theta[bp[j] : bp[j + 1]] == 0 for j in range(len(bp) - 1)]
    prob = cp.Problem(cp.Minimize(loss + lam * pen), cons)
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    return prob.value


@pytest.mark.parametrize("variant", ["weighted", "tied", "tiny", "huge", "poisson"])
def test_small_collinear_variants_match_cvxpy(variant):
    rng = np.random.default_rng(1)
    X, y = _diamonds(n=120, seed=2)
    family, sw = "gaussian", np.ones(len(y))
    if variant == "weighted":
        sw = rng.integers(0, 4, len(y)).astype(float)
        sw[:3] = 0.0
    elif variant == "tied":
        X = np.round(X, 1)  # heavy ties: unequal bin counts
    elif variant == "tiny":
        y = 1e-6 * y
    elif variant == "huge":
        y = 1e6 * y
    else:
        family = "poisson"
        y = rng.poisson(np.exp(y - 7.5)).astype(float)
    codes, bp, w = _design(X, sw=sw, n_bins=8)
    lmax = lambda_max(codes, bp, y, family=family, penalty_weights=w, sample_weight=sw)
    lam = 0.02 * lmax
    prep = Prepared(codes, bp, y, family=family, penalty_weights=w, sample_weight=sw)
    ref = _cvxpy(family, codes, bp, y, lam, w, sw)
    scale = max(1.0, abs(ref))
    for solver in ("cd", "fista"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            sol = prep.solve(lam, solver=solver)
        assert sol.converged and sol.kkt_violation <= 1e-7 * prep.tol_scale
        assert sol.objective <= ref + 1e-8 * scale, (solver, sol.objective, ref)
        assert sol.objective >= ref - 1e-6 * scale


@pytest.mark.parametrize("family", ["gaussian", "poisson"])
@pytest.mark.parametrize("weighted", [False, True])
def test_polish_never_raises_the_objective(family, weighted):
    rng = np.random.default_rng(3)
    X, y = _diamonds(n=400, seed=4)
    if family == "poisson":
        y = rng.poisson(np.exp(y - 7.5)).astype(float)
    sw = rng.uniform(0.1, 3.0, len(y)) if weighted else None
    codes, bp, w = _design(X, sw=sw, n_bins=12)
    lmax = lambda_max(codes, bp, y, family=family, penalty_weights=w, sample_weight=sw)
    prob = _Problem(codes, bp, y, family, w, None, sw, None, True)
    tol = 1e-7 * prob.gradient_scale()
    for frac in (0.3, 0.03, 0.003):
        lam = frac * lmax
        for _trial in range(4):
            # arbitrary points with fused runs: random piecewise-constant θ
            theta = np.zeros(prob.d)
            for j in range(prob.p):
                s, e = bp[j], bp[j + 1]
                cuts = np.sort(
                    rng.choice(np.arange(1, e - s), size=min(3, e - s - 1), replace=False)
                )
                theta[s:e] = np.repeat(
                    rng.normal(0, 0.3, len(cuts) + 1), np.diff([0, *cuts, e - s])
                )
            b0 = float(np.log(y.mean())) if family == "poisson" else float(y.mean())
            eta = prob.linear_predictor(theta, np.zeros(0), b0)
            F0 = prob.objective(eta, theta, lam)
            res = polish(prob, theta, np.zeros(0), b0, lam, tol)
            if res is None:
                continue
            assert res.objective <= F0 + 1e-14 * abs(F0)
            eta1 = prob.linear_predictor(res.theta, res.beta, res.b0)
            assert_allclose(res.objective, prob.objective(eta1, res.theta, lam), rtol=1e-12)
        # polishing the optimum keeps it (objective not higher, KKT still met)
        sol = Prepared(codes, bp, y, family=family, penalty_weights=w, sample_weight=sw).solve(lam)
        res = polish(prob, sol.coef, np.zeros(0), sol.intercept, lam, tol)
        if res is not None:
            assert res.objective <= sol.objective + 1e-14 * abs(sol.objective)
            assert res.kkt <= tol


@pytest.mark.parametrize("family", ["gaussian", "poisson"])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_polish_is_exact_with_dense_columns_weights_and_no_intercept(family, fit_intercept):
    rng = np.random.default_rng(5)
    X, y = _diamonds(n=300, seed=6)
    if family == "poisson":
        y = rng.poisson(np.exp(y - 7.5)).astype(float)
    Z = np.column_stack([rng.normal(size=300), rng.uniform(0, 100, 300)])  # units differ
    sw = rng.uniform(0.2, 2.0, 300)
    sw[:5] = 0.0
    codes, bp, w = _design(X, sw=sw, n_bins=10)
    lmax = lambda_max(codes, bp, y, family=family, penalty_weights=w, dense=Z, sample_weight=sw,
                      fit_intercept=fit_intercept)  # fmt: skip
    lam = 0.02 * lmax
    prep = Prepared(codes, bp, y, family=family, penalty_weights=w, dense=Z, sample_weight=sw,
                    fit_intercept=fit_intercept)  # fmt: skip
    prob = prep.prob
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loose = prep.solve(lam, tol=1e-2, max_iter=3)  # a rough point, jump set nearly right
    beta = loose.dense_coef * prob.dense_scale  # the solver's internal columns
    b0 = loose.intercept + float(prob.dense_center @ loose.dense_coef) if fit_intercept else 0.0
    res = polish(prob, loose.coef, beta, b0, lam, 1e-7 * prep.tol_scale)
    assert res is not None
    assert res.objective <= loose.objective + 1e-14 * abs(loose.objective)
    exact = prep.solve(lam)
    assert exact.converged
    assert res.objective <= exact.objective + 1e-12 * abs(exact.objective)
    # from a rough point (KKT 5e-3 .. 0.2) the active-set steps find the optimum's face
    # and solve it exactly (measured: 1e-12 .. 1e-17)
    assert res.kkt <= 1e-10 * prep.tol_scale


@pytest.mark.parametrize("variant", ["weighted", "tied", "huge", "binomial", "randhie-weighted"])
def test_variants_meet_default_tol_in_bounded_passes(variant):
    rng = np.random.default_rng(0)
    if variant.startswith("randhie"):
        (X, y), family = _randhie(), "poisson"
    else:
        (X, y), family = _diamonds(3000), "gaussian"
    sw = rng.integers(0, 4, len(y)).astype(float) if "weighted" in variant else None
    if variant == "tied":
        X = np.round(X, 1)
    elif variant == "huge":
        y = 1e6 * y
    elif variant == "binomial":  # expensive or not, given the size: correlated features
        family = "binomial"
        y = (y + 0.3 * rng.standard_normal(len(y)) > np.median(y)).astype(float)
    codes, bp, w = _design(X, sw=sw)
    lam = 0.01 * lambda_max(codes, bp, y, family=family, penalty_weights=w, sample_weight=sw)
    prep = Prepared(codes, bp, y, family=family, penalty_weights=w, sample_weight=sw)
    objectives = []
    for solver, bound in (("cd", 60), ("fista", 400)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            sol = prep.solve(lam, solver=solver)
        assert sol.converged and sol.kkt_violation <= 1e-7 * prep.tol_scale
        assert (sol.n_sweeps if solver == "cd" else sol.n_iter) <= bound
        objectives.append(sol.objective)
    assert abs(objectives[0] - objectives[1]) <= 1e-10 * abs(objectives[0])
