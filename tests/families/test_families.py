"""The Family interface (issue 11 §1): one object per family, a generic statsmodels path."""

from __future__ import annotations

import ast
import pathlib

import binarsity_stats

PKG = pathlib.Path(binarsity_stats.__file__).parent
FAMILY_NAMES = {"gaussian", "binomial", "poisson", "gamma", "tweedie", "negativebinomial"}
FAMILY_CLASSES = ("Gaussian", "Binomial", "Poisson", "StatsmodelsFamily", "Tweedie", "Gamma")
#: The family modules of ``families/``: the only code that may look at a family's name.
FAMILY_MODULES = ("_family.py", "_builtin.py", "_statsmodels.py", "_families.py")


def _name_switches(source: str) -> list[str]:
    """Comparisons with a family name, or a family's ``.name`` used to choose a branch."""
    found = []
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            parts = [node.left, *node.comparators]
            if any(
                isinstance(p, ast.Constant)
                and isinstance(p.value, str)
                and p.value.lower() in FAMILY_NAMES
                for p in parts
            ) or any("fam" in ast.unparse(p) and ast.unparse(p).endswith(".name") for p in parts):
                found.append(ast.unparse(node))
        elif isinstance(node, ast.Subscript):
            if "fam" in ast.unparse(node.slice) and ast.unparse(node.slice).endswith(".name"):
                found.append(ast.unparse(node))
        elif isinstance(node, ast.Call) and ast.unparse(node.func) == "isinstance":
            if any(c in ast.unparse(node.args[1]) for c in FAMILY_CLASSES):
                found.append(ast.unparse(node))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr == "get" and any(
                "fam" in ast.unparse(a) and ast.unparse(a).endswith(".name") for a in node.args
            ):
                found.append(ast.unparse(node))
    return found


def test_no_code_outside_the_family_module_switches_on_a_family_name():
    offenders = {}
    for path in sorted(PKG.rglob("*.py")):
        if path.parent.name == "families" and path.name in FAMILY_MODULES:
            continue
        hits = _name_switches(path.read_text(encoding="utf-8"))
        if hits:
            offenders[path.name] = hits
    assert offenders == {}


def test_the_name_switch_detector_sees_the_old_switches():
    old = (
        'if family.name == "gaussian":\n    pass\n'
        'hmax = {"gaussian": 1.0}.get(prob.family.name, None)\n'
        'fam = {"poisson": 1}[m.family.name]\n'
        'stratify = fam == "binomial"\n'
        "if isinstance(m.family, Binomial):\n    pass\n"
    )
    assert len(_name_switches(old)) == 5


# --------------------------------------------------------------------------- the generic path

import pickle  # noqa: E402
import warnings  # noqa: E402

import cvxpy as cp  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
import statsmodels.api as sm  # noqa: E402
from numpy.testing import assert_allclose  # noqa: E402

from binarsity_stats import BinarsityGLM, glm  # noqa: E402
from binarsity_stats.families._families import family_from_dict, get_family  # noqa: E402
from binarsity_stats.families._statsmodels import StatsmodelsFamily  # noqa: E402
from binarsity_stats.kernels._histogram import bin_sums_all  # noqa: E402
from binarsity_stats.penalty._penalty import BinarsityPenalty, penalty_weights  # noqa: E402
from binarsity_stats.engine._solvers import lambda_max, solve  # noqa: E402

links = sm.families.links
SM_BUILTIN = {
    "gaussian": sm.families.Gaussian(),
    "binomial": sm.families.Binomial(),
    "poisson": sm.families.Poisson(),
}


def _gamma():
    return sm.families.Gamma(links.Log())


def _tweedie(p=1.5):
    return sm.families.Tweedie(var_power=p, link=links.Log())


def _design(n=400, p=3, K=8, seed=0):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, K, size=(p, n)).astype(np.uint8)
    bp = (np.arange(p + 1) * K).astype(np.intp)
    eta = 0.3 + 0.6 * (codes[0] > 3) - 0.4 * (codes[1] > 5)
    return codes, bp, eta, rng


def _response(name, eta, rng):
    n = len(eta)
    if name == "gaussian":
        return eta + rng.normal(size=n)
    if name == "binomial":
        return rng.binomial(1, 1 / (1 + np.exp(-eta))).astype(float)
    if name == "poisson":
        return rng.poisson(np.exp(eta)).astype(float)
    if name == "gamma":
        return rng.gamma(2.0, np.exp(eta) / 2.0)
    # Tweedie 1 < p < 2: compound Poisson-gamma, with exact zeros
    return np.where(rng.random(n) < 0.3, 0.0, rng.gamma(2.0, np.exp(eta) / 2.0))


def _counts(codes, bp, sw):
    out = np.zeros(bp[-1])
    bin_sums_all(codes, bp, sw, out)
    return out


def _kkt_half_deviance(sol, codes, bp, y, power, lam, w, sw):
    """design.md §2 for the half-deviance loss of a log-link Tweedie, from scratch.

    ∂/∂η [d(y, e^η)/2] = (μ − y) μ^{1−p} (p = 2: gamma, 1 − y/μ).
    """
    mu = np.exp(sol.eta)
    W = sw.sum()
    r = sw * (mu - y) * mu ** (1.0 - power) / W
    g = np.zeros(bp[-1])
    bin_sums_all(codes, bp, r, g)
    pen = BinarsityPenalty(bp, w, _counts(codes, bp, sw))
    return max(float(pen.kkt_violation(g, sol.coef, lam).max()), abs(r.sum()))


@pytest.mark.parametrize("name", ["gaussian", "binomial", "poisson"])
def test_generic_path_equals_the_cython_kernels_and_the_loss_differs_by_a_constant(name):
    """Half the unit deviance = b(η) − yη + c(y): same gradient, curvature, same λ."""
    codes, bp, eta, rng = _design(n=2000)
    y = _response(name, eta, rng)
    sw = rng.uniform(0.0, 2.0, len(y))
    sw[:5] = 0.0
    fast, generic = get_family(name), get_family(SM_BUILTIN[name])
    assert isinstance(generic, StatsmodelsFamily) and generic._fast is None
    consts = []
    for scale in (3.0, 0.7):
        e = rng.normal(scale=scale, size=len(y))
        out = [np.empty(len(y)) for _ in range(4)]
        lf = fast.grad_hess(e, y, sw, 0.25, out[0], out[1])
        lg = generic.grad_hess(e, y, sw, 0.25, out[2], out[3])
        assert_allclose(out[2], out[0], rtol=1e-12, atol=1e-15)
        assert_allclose(out[3], out[1], rtol=1e-12, atol=1e-15)
        assert_allclose(lg, generic.loss_sum(e, y, sw), rtol=1e-14)
        consts.append(lg - lf)
    # the difference Σ s [b(θ_y) − y θ_y] depends on y only
    assert_allclose(consts[0], consts[1], rtol=1e-10, atol=1e-9)
    assert_allclose(fast.curvature(eta), generic.curvature(eta), rtol=1e-12)
    assert_allclose(fast.gradient_units(y, sw), generic.gradient_units(y, sw), rtol=1e-12)
    assert_allclose(
        fast.null_intercept(y, sw, 0.1 * eta), generic.null_intercept(y, sw, 0.1 * eta),
        rtol=1e-10, atol=1e-12,
    )  # fmt: skip
    mu = fast.mean(eta)
    assert_allclose(generic.deviance(y, mu, sw), fast.deviance(y, mu, sw), rtol=1e-10)


@pytest.mark.parametrize("name", ["gaussian", "binomial", "poisson"])
@pytest.mark.parametrize("solver", ["cd", "fista"])
def test_generic_solution_equals_the_builtin_family(name, solver):
    codes, bp, eta, rng = _design()
    y = _response(name, eta, rng)
    n = len(y)
    sw = rng.uniform(0.2, 2.0, n)
    off = rng.normal(scale=0.3, size=n)
    w = penalty_weights("theory", _counts(codes, bp, sw), bp)
    kw = dict(lam=0.01, penalty_weights=w, sample_weight=sw, offset=off, solver=solver,
              tol=1e-10, max_iter=50000)  # fmt: skip
    a = solve(codes, bp, y, family=name, **kw)
    b = solve(codes, bp, y, family=SM_BUILTIN[name], **kw)
    assert a.converged and b.converged
    assert_allclose(b.coef, a.coef, atol=1e-6)
    assert_allclose(b.intercept, a.intercept, atol=1e-6)
    const = (get_family(SM_BUILTIN[name]).loss_sum(a.eta, y, sw)
             - get_family(name).loss_sum(a.eta, y, sw)) / sw.sum()  # fmt: skip
    assert_allclose(b.objective, a.objective + const, rtol=1e-10, atol=1e-12)
    common = dict(penalty_weights=w, sample_weight=sw, offset=off)
    assert_allclose(
        lambda_max(codes, bp, y, family=SM_BUILTIN[name], **common),
        lambda_max(codes, bp, y, family=name, **common), rtol=1e-6,
    )  # fmt: skip


def _scotland():
    """Gamma-log on statsmodels' scotland data (the statsmodels Gamma GLM example)."""
    data = sm.datasets.scotland.load_pandas()
    return data.exog.to_numpy(float), data.endog.to_numpy(float)


def _randhie(n=3000):
    """Tweedie-1.5 on doctor visits (randhie: counts with many zeros)."""
    df = sm.datasets.randhie.load_pandas().data.iloc[:n]
    X = df[["lncoins", "idp", "lpi", "fmde", "physlm", "disea", "hlthg", "hlthf"]]
    return X.to_numpy(float), df["mdvis"].to_numpy(float)


def _quantile_codes(X, n_bins):
    codes, sizes = [], []
    for x in X.T:
        edges = np.unique(np.quantile(x, np.linspace(0, 1, n_bins + 1)[1:-1]))
        c = np.searchsorted(edges, x, side="left")
        _, c = np.unique(c, return_inverse=True)
        codes.append(c)
        sizes.append(int(c.max()) + 1)
    bp = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
    return np.ascontiguousarray(np.vstack(codes).astype(np.uint8)), bp


@pytest.mark.parametrize(
    ("family", "power", "data", "n_bins"),
    [(_gamma(), 2.0, _scotland, 6), (_tweedie(1.5), 1.5, _randhie, 12)],
    ids=["gamma-log", "tweedie-1.5"],
)
def test_real_data_kkt_of_the_half_deviance_and_cd_equals_fista(family, power, data, n_bins):
    X, y = data()
    codes, bp = _quantile_codes(X, n_bins)
    n = len(y)
    rng = np.random.default_rng(3)
    sw = rng.uniform(0.5, 1.5, n)
    expo = rng.uniform(0.5, 2.0, n)
    off = np.log(expo)  # an exposure
    w = penalty_weights("theory", _counts(codes, bp, sw), bp)
    lmax = lambda_max(codes, bp, y, family=family, penalty_weights=w, sample_weight=sw,
                      offset=off)  # fmt: skip
    lam = lmax / 10
    fam = get_family(family)
    units = fam.gradient_units(y, sw)
    sols = {}
    for solver, tol in (("cd", 1e-9), ("fista", 1e-8)):
        sol = solve(codes, bp, y, family=family, lam=lam, penalty_weights=w, sample_weight=sw,
                    offset=off, solver=solver, tol=tol, max_iter=50000)  # fmt: skip
        assert sol.converged, solver
        assert _kkt_half_deviance(sol, codes, bp, y, power, lam, w, sw) <= tol * units
        sols[solver] = sol
    assert np.count_nonzero(np.abs(np.diff(sols["cd"].coef)) > 1e-8) > 0
    assert_allclose(sols["cd"].objective, sols["fista"].objective, rtol=1e-7)
    assert_allclose(sols["cd"].coef, sols["fista"].coef, atol=2e-4)
    # at λ_max every penalised chain is flat; just below it is not
    at = solve(codes, bp, y, family=family, lam=lmax * 1.0001, penalty_weights=w,
               sample_weight=sw, offset=off, tol=1e-10, max_iter=50000)  # fmt: skip
    assert np.allclose(at.coef, 0.0, atol=1e-9)


@pytest.mark.parametrize("power", [2.0, 1.5])
def test_gamma_and_tweedie_match_cvxpy(power):
    """y e^{−η} + η (gamma) and 2y e^{−η/2} + 2 e^{η/2} (Tweedie 1.5) are DCP."""
    codes, bp, eta, rng = _design(n=150, p=2, K=6, seed=4)
    y = _response("gamma" if power == 2.0 else "tweedie", eta, rng)
    n = len(y)
    sw = rng.uniform(0.3, 2.0, n)
    off = np.log(rng.uniform(0.5, 2.0, n))
    counts = _counts(codes, bp, sw)
    w = penalty_weights("theory", counts, bp)
    lam = 0.02
    family = _gamma() if power == 2.0 else _tweedie(power)
    sol = solve(codes, bp, y, family=family, lam=lam, penalty_weights=w, sample_weight=sw,
                offset=off, tol=1e-10, max_iter=50000)  # fmt: skip
    X = np.zeros((n, bp[-1]))
    for j in range(codes.shape[0]):
        X[np.arange(n), bp[j] + codes[j]] = 1.0
    theta, b0 = cp.Variable(bp[-1]), cp.Variable()
    e = X @ theta + b0 + off

    def loss_cvx(e):
        if power == 2.0:
            return cp.sum(cp.multiply(sw * y, cp.exp(-e)) + cp.multiply(sw, e)) / sw.sum()
        a, b = 1 - power, 2 - power
        return cp.sum(cp.multiply(-sw * y / a, cp.exp(a * e)) + cp.multiply(sw / b, cp.exp(b * e))
                      ) / sw.sum()  # fmt: skip

    pen = cp.sum(cp.multiply(w[1:], cp.abs(cp.diff(theta))))
    cons = [counts[bp[j] : bp[j + 1]] @ theta[bp[j] : bp[j + 1]] == 0 for j in range(len(bp) - 1)]
    prob = cp.Problem(cp.Minimize(loss_cvx(e) + lam * pen), cons)
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    # the cvxpy loss is the half deviance up to a function of y: compare at η = 0
    zero = np.zeros(n)
    const = get_family(family).loss_sum(zero, y, sw) / sw.sum() - loss_cvx(zero).value
    assert sol.converged
    assert_allclose(sol.objective, prob.value + const, rtol=1e-7)
    assert_allclose(sol.coef, theta.value, atol=1e-4)


# --------------------------------------------------------------------------- checks


@pytest.mark.parametrize(
    ("family", "match"),
    [
        (sm.families.Gaussian(links.Log()), r"Gaussian with link Log.*not convex"),
        (sm.families.Gamma(), r"Gamma with link InversePower.*not convex.*use link Log"),
        (sm.families.Poisson(links.Identity()), r"Poisson with link Identity.*not convex"),
        (sm.families.Binomial(links.Cauchy()), r"Binomial with link Cauchy.*not convex"),
        (_tweedie(2.5), r"Tweedie\(var_power=2.5\) with link Log.*1 <= var_power <= 2"),
        (_tweedie(0.5), r"Tweedie\(var_power=0.5\) with link Log.*not convex"),
        (sm.families.InverseGaussian(links.Log()), r"InverseGaussian with link Log.*no link"),
    ],
)
def test_a_non_convex_family_link_pair_is_refused_by_name(family, match):
    with pytest.raises(ValueError, match=match):
        get_family(family)
    with pytest.raises(ValueError, match=match):
        BinarsityGLM(family=family).fit(np.arange(20.0)[:, None], np.ones(20))


def test_convex_non_canonical_links_are_accepted():
    for fam in (
        sm.families.Binomial(links.Probit()), sm.families.Binomial(links.CLogLog()),
        _tweedie(1.0), _tweedie(2.0), sm.families.NegativeBinomial(alpha=0.5),
    ):  # fmt: skip
        assert isinstance(get_family(fam), StatsmodelsFamily)


@pytest.mark.parametrize(
    ("family", "y", "match"),
    [
        (
            _gamma(),
            [1.0, 0.0, 2.0],
            r"y must be positive for family Gamma; found values such as \[0.0",
        ),
        (_tweedie(1.5), [1.0, -1.0, 0.0], r"non-negative for family Tweedie\(var_power=1.5\)"),
        (_tweedie(2.0), [1.0, 0.0], r"positive for family Tweedie\(var_power=2\)"),
        (sm.families.Binomial(links.Probit()), [0.0, 2.0], r"in \[0, 1\].*Binomial"),
        (sm.families.Poisson(), [np.nan, 1.0], r"NaN or infinite.*Poisson"),
    ],
)
def test_y_outside_the_family_range_is_refused_by_name(family, y, match):
    y = np.array(y * 10)
    codes = np.zeros((1, len(y)), np.uint8)
    with pytest.raises(ValueError, match=match):
        solve(codes, np.array([0, 1]), y, family=family, lam=0.1, penalty_weights=np.zeros(1))


def test_a_log_link_offset_beyond_overflow_is_refused_naming_offset():
    with pytest.raises(ValueError, match=r"offset has values as large as 800.*log\(exposure\)"):
        get_family(_tweedie()).check_offset(np.array([0.0, 800.0]))
    get_family(_tweedie()).check_offset(np.array([0.0, 600.0]))


def test_unknown_names_and_objects_are_refused():
    for bad in ("weibull", 3, object()):  # "gamma" is a named family since issue 14
        with pytest.raises(ValueError, match=r"family must be one of .* statsmodels family"):
            get_family(bad)


# --------------------------------------------------------------------------- parametrised


def test_families_pickle_and_compare_by_value():
    for fam in (get_family("poisson"), get_family(_tweedie(1.5)), get_family(_gamma())):
        back = pickle.loads(pickle.dumps(fam))
        assert back == fam and hash(back) == hash(fam)
    assert get_family(_tweedie(1.5)) != get_family(_tweedie(1.6))
    assert get_family(_tweedie(1.5)) == get_family(_tweedie(1.5))
    assert get_family(sm.families.Poisson()) != get_family("poisson")  # different losses
    assert get_family(_tweedie(1.5)).to_statsmodels().var_power == 1.5


def _claims(n=500, seed=5):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.uniform(size=n),
                       "g": rng.choice(list("abc"), n), "expo": rng.uniform(0.5, 2, n)})  # fmt: skip
    eta = 0.5 * (df.x1 > 0) - 0.6 * (df.x2 > 0.6) + 0.3 * (df.g == "b") + np.log(df.expo)
    df["y"] = np.where(rng.random(n) < 0.3, 0.0, rng.gamma(2.0, np.exp(eta) / 2))
    return df


def test_tweedie_in_a_formula_summary_refit_and_pickle():
    df = _claims()
    model = glm("y ~ bin(x1, 8) + bin(x2, 6) + C(g)", df, family=_tweedie(1.5),
                offset=np.log(df["expo"]))  # fmt: skip
    res = model.fit(lam=0.005)
    text = str(res.summary())
    assert "Tweedie" in text and "Variance power:" in text and "1.5" in text
    assert "log" in text
    back = pickle.loads(pickle.dumps(res))
    assert back.model.family == res.model.family
    assert_allclose(back.predict(df), res.predict(df), rtol=0, atol=0)
    refit = res.refit().sm_results
    assert type(refit.model.family).__name__ == "Tweedie"
    assert refit.model.family.var_power == 1.5
    # theory λ estimates the dispersion (Pearson) and says so
    assert "phi estimated" in model.fit().lam_source


@pytest.mark.parametrize(
    "family",
    [_tweedie(1.5), _gamma(), sm.families.Binomial(links.Probit()),
     sm.families.Binomial(links.CLogLog()), sm.families.NegativeBinomial(alpha=0.7)],
    ids=["tweedie-1.5", "gamma-log", "probit", "cloglog", "negbin"],
)  # fmt: skip
def test_generic_statistics_match_statsmodels_on_an_unpenalised_fit(family):
    """Only C() and linear terms: the fit is the GLM; coefficients, deviance, llf, scale."""
    df = _claims()
    fam = get_family(family)
    if fam.binary:
        df["y"] = (df["y"] > 0).astype(float)
    elif fam.name == "gamma":
        df = df[df["y"] > 0].reset_index(drop=True)
    elif fam.name == "negativebinomial":
        df["y"] = np.round(df["y"])
    off = np.log(df["expo"].to_numpy()) if not fam.binary else None
    res = glm("y ~ C(g) + x1", df, family=family, offset=off).fit(lam=0.0, tol=1e-10)
    X = pd.get_dummies(df["g"], drop_first=True, dtype=float).assign(x1=df["x1"])
    ref = sm.GLM(df["y"], sm.add_constant(X), family=family, offset=off).fit(tol=1e-13)
    assert_allclose(res.fittedvalues, ref.fittedvalues, rtol=1e-6)
    assert_allclose(res.deviance, ref.deviance, rtol=1e-8)
    assert_allclose(res.llf, ref.llf, rtol=1e-6)
    m = res.model
    scale = fam.dispersion(m.y, res.fittedvalues, m.sample_weight, res.df)
    assert_allclose(scale if fam.estimate_dispersion else 1.0, ref.scale, rtol=1e-6)


def test_estimator_with_a_statsmodels_family_clones_and_pickles():
    from sklearn.base import clone

    df = _claims()
    X, y = df[["x1", "x2"]].to_numpy(), df["y"].to_numpy()
    est = BinarsityGLM(family=_gamma(), lam=0.01, n_bins=8)
    with pytest.raises(ValueError, match="positive for family Gamma"):
        est.fit(X, y)
    est = BinarsityGLM(family=_tweedie(1.5), lam=0.01, n_bins=8).fit(X, y)
    assert est.get_params()["family"].var_power == 1.5
    twin = clone(est).fit(X, y)
    assert_allclose(twin.predict(X), est.predict(X), rtol=0, atol=0)
    back = pickle.loads(pickle.dumps(est))
    assert_allclose(back.predict(X), est.predict(X), rtol=0, atol=0)
    assert np.all(est.predict(X) > 0)


def test_the_family_module_imports_statsmodels_lazily():
    """statsmodels is imported inside functions only (the package must import fast)."""
    for module in FAMILY_MODULES:
        tree = ast.parse((PKG / "families" / module).read_text(encoding="utf-8"))
        top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
        names = [a.name for n in top for a in n.names] + [
            n.module or "" for n in top if isinstance(n, ast.ImportFrom)
        ]
        assert names, module
        assert not any(name.startswith("statsmodels") for name in names), module
    # and a name never touches it
    assert get_family("poisson") == get_family("Poisson")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        get_family("gaussian")


def test_a_family_round_trips_through_json():
    import json

    for fam in ("gaussian", "binomial", "poisson", _gamma(), _tweedie(1.5),
                sm.families.Binomial(links.Probit()), sm.families.NegativeBinomial(alpha=0.5)):  # fmt: skip
        f = get_family(fam)
        back = family_from_dict(json.loads(json.dumps(f.to_dict())))
        assert back == f
    assert get_family(_tweedie(1.5)).to_dict()["var_power"] == 1.5


ACCEPTED = [
    sm.families.Gaussian(), sm.families.Binomial(), sm.families.Binomial(links.Probit()),
    sm.families.Binomial(links.CLogLog()), sm.families.Binomial(links.LogLog()),
    sm.families.Poisson(), _gamma(), _tweedie(1.0), _tweedie(1.5), _tweedie(2.0),
    sm.families.NegativeBinomial(alpha=0.5),
]  # fmt: skip


@pytest.mark.parametrize(
    "family", ACCEPTED, ids=lambda f: get_family(f).label + "-" + f.link.__class__.__name__
)
def test_generic_loss_is_half_the_statsmodels_deviance_with_its_derivatives_and_finite_tails(
    family,
):
    fam = get_family(family)
    rng = np.random.default_rng(0)
    if fam.binary:
        y = rng.choice([0.0, 1.0, 0.3], 60)
    elif fam.quadratic:
        y = rng.normal(size=60)
    else:
        y = rng.gamma(1.0, 2.0, 60) * (rng.random(60) < 0.7)
        if fam.name == "gamma" or fam.label == "Tweedie(var_power=2)":
            y += 0.1
    eta = rng.uniform(-3, 3, 60)
    sw = rng.uniform(0.5, 2.0, 60)
    with np.errstate(all="ignore"):
        ref = 0.5 * np.sum(sw * family._resid_dev(y, family.link.inverse(eta)))
    assert_allclose(fam.loss_sum(eta, y, sw), ref, rtol=1e-10)
    g, h = np.empty(60), np.empty(60)
    fam.grad_hess(eta, y, sw, 1.0, g, h)
    eps = 1e-6
    num = (fam._half_deviance(eta + eps, y, sw) - fam._half_deviance(eta - eps, y, sw)) / (2 * eps)
    assert_allclose(g, num, rtol=1e-5, atol=1e-7)
    # Fisher weight: μ'(η)² / V(μ)
    mu = family.link.inverse(eta)
    assert_allclose(h, sw * family.link.inverse_deriv(eta) ** 2 / family.variance(mu), rtol=1e-8)
    # the tails: no NaN, the loss +inf or finite, derivatives finite
    far = np.array([-1000.0, -800.0, -50.0, 50.0, 800.0, 1000.0])
    yf, sf = np.resize(y, 6), np.ones(6)
    gf, hf = np.empty(6), np.empty(6)
    loss = fam.grad_hess(far, yf, sf, 1.0, gf, hf)
    assert not np.isnan(loss) and loss > 0
    assert np.all(np.isfinite(gf)) and np.all(np.isfinite(hf)) and np.all(hf >= 0)
    assert not np.any(np.isnan(fam._half_deviance(far, yf, sf)))


@pytest.mark.parametrize(
    "family",
    ["gaussian", "binomial", "poisson", _gamma(), _tweedie(1.5),
     sm.families.Binomial(links.Probit()), sm.families.NegativeBinomial(alpha=0.5)],
    ids=lambda f: get_family(f).label,
)  # fmt: skip
def test_the_null_fit_is_statsmodels_intercept_only_glm_with_offset_and_weights(family):
    fam = get_family(family)
    rng = np.random.default_rng(7)
    n = 300
    off = rng.normal(scale=0.5, size=n)
    sw = rng.uniform(0.2, 3.0, n)
    mu = fam.mean(0.3 + off)
    if fam.binary:
        y = rng.binomial(1, mu).astype(float)
    elif fam.quadratic:
        y = mu + rng.normal(size=n)
    else:
        y = rng.gamma(2.0, mu / 2.0) * (rng.random(n) < (0.7 if fam.name == "tweedie" else 1))
        y = np.round(y) if fam.name in ("poisson", "negativebinomial") else y
    sm_fam = fam.to_statsmodels()
    for o in (off, None):
        ref = sm.GLM(y, np.ones((n, 1)), family=sm_fam, offset=o, var_weights=sw).fit(tol=1e-14)
        assert_allclose(fam.null_intercept(y, sw, o), ref.params[0], rtol=1e-9, atol=1e-10)


def test_cv_with_statsmodels_families():
    df = _claims(n=400)
    cv = glm("y ~ bin(x1, 6) + C(g)", df, family=_tweedie(1.5)).fit_cv(
        folds=3, n_lambdas=5, random_state=0
    )
    assert np.all(np.isfinite(cv.mean)) and cv.best_.model.family == get_family(_tweedie(1.5))
    df["b"] = (df["y"] > 0).astype(float)
    probit = sm.families.Binomial(links.Probit())
    cv = glm("b ~ bin(x1, 6) + C(g)", df, family=probit).fit_cv(
        folds=3, n_lambdas=5, scoring="auc", random_state=0
    )
    assert np.all((cv.mean > 0.5) & (cv.mean <= 1))
    with pytest.raises(ValueError, match="auc"):
        glm("y ~ bin(x1, 6)", df, family=_tweedie(1.5)).fit_cv(folds=3, n_lambdas=3, scoring="auc")


def test_registered_names_resolve_whatever_was_imported_first(tmp_path):
    """nb and the quasi families join ``_builtin.FAMILIES`` where ``get_family`` is
    defined (``_families``), so no import order reaches get_family without them: a fresh
    interpreter that imports ``_builtin`` alone first still resolves them."""
    import os
    import subprocess
    import sys

    code = (
        "from binarsity_stats.families._builtin import FAMILIES\n"
        "from binarsity_stats.families._families import get_family\n"
        "print(*[type(get_family(f)).__name__ for f in ('nb', 'quasipoisson', 'quasibinomial')])\n"
    )
    env = dict(os.environ, PYTHONPATH=str(PKG.resolve().parent))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path, env=env)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["NegativeBinomial", "QuasiPoisson", "QuasiBinomial"]
