"""model/_theta.py: the negative binomial's θ estimated by alternation with β.

Proved here against a maximum of the NB log-likelihood found by SciPy (written out from
its formula, not the package's): the start is the θ of the intercept(+offset)-only
Poisson mean; the alternation ends at a fixed point (θ̂ maximises the likelihood at the
fit's μ, and the fit at θ̂ held fixed is the fit returned); a path uses the θ̂ of its
smallest λ; the unpenalised refit's θ̂ is statsmodels' discrete NegativeBinomial MLE.
Running out of rounds warns naming θ; the Dask solver refuses an estimated θ.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, special

from binarsity_stats.engine._solvers import ConvergenceWarning
from binarsity_stats.families._negbin import NegativeBinomial
from binarsity_stats.model import _theta
from binarsity_stats.model._model import glm
from binarsity_stats.model._theta import (
    alternate_refit,
    fit_alternating,
    fixed_parameter_model,
    start_parameter,
)


def nb_loglik(theta, y, mu, w):
    return np.sum(w * (special.gammaln(y + theta) - special.gammaln(theta)
                       - special.gammaln(y + 1) + theta * np.log(theta) + y * np.log(mu)
                       - (y + theta) * np.log(theta + mu)))  # fmt: skip


def theta_scipy(y, mu, w):
    out = optimize.minimize_scalar(lambda t: -nb_loglik(np.exp(t), y, mu, w),
                                   bounds=(-8, 8), method="bounded",
                                   options={"xatol": 1e-11})  # fmt: skip
    return float(np.exp(out.x))


@pytest.fixture(scope="module")
def counts():
    rng = np.random.default_rng(0)
    n = 400
    df = pd.DataFrame({"x": rng.normal(size=n), "z": rng.normal(size=n),
                       "off": rng.uniform(-0.5, 0.5, n)})  # fmt: skip
    mu = np.exp(0.5 + 0.8 * (df.x > 0) + 0.3 * df.z + df.off)
    df["y"] = rng.negative_binomial(2.0, 2.0 / (2.0 + mu)).astype(float)  # θ = 2
    return df


def test_start_is_the_theta_of_the_null_poisson_mean(counts):
    y = counts["y"].to_numpy()
    w = np.random.default_rng(1).uniform(0.5, 2, len(y))
    off = counts["off"].to_numpy()
    got = start_parameter(NegativeBinomial(), y, w, off)
    mu = np.exp(off) * np.sum(w * y) / np.sum(w * np.exp(off))
    assert got == pytest.approx(theta_scipy(y, mu, w), rel=1e-6)
    flat = start_parameter(NegativeBinomial(), y, w, None)
    assert flat == pytest.approx(theta_scipy(y, np.full_like(y, np.average(y, weights=w)), w),
                                 rel=1e-6)  # fmt: skip


def test_the_alternation_ends_at_a_fixed_point(counts):
    m = glm("y ~ bin(x, 6) + z", counts, family="nb", offset="off")
    res = fit_alternating(m, lambda mm, start: mm.fit(0.01, warm_start=start, tol=1e-10))
    theta = res.model.family.theta
    y = counts["y"].to_numpy()
    assert theta == pytest.approx(theta_scipy(y, res.fittedvalues, np.ones_like(y)), rel=1e-6)
    assert 1.0 < theta < 4.0  # the data's θ is 2
    assert res.model.family.theta_se > 0 and res.model.family.extra_df == 1
    fixed = glm("y ~ bin(x, 6) + z", counts, family=NegativeBinomial(theta), offset="off")
    again = fixed.fit(0.01, tol=1e-10)
    np.testing.assert_allclose(again.coef, res.coef, atol=1e-6)
    assert m.family.estimated_parameter == "theta"  # the user's model is not changed


def test_running_out_of_rounds_warns_naming_theta(counts, monkeypatch):
    monkeypatch.setattr(_theta, "MAX_ALTERNATIONS", 1)
    m = glm("y ~ bin(x, 6) + z", counts, family="nb")
    with pytest.warns(ConvergenceWarning, match="theta of family 'nb' did not converge in 1"):
        fit_alternating(m, lambda mm, start: mm.fit(0.01, warm_start=start))


def test_a_path_uses_the_theta_of_its_smallest_lambda(counts):
    m = glm("y ~ bin(x, 6) + z", counts, family="nb")
    opts = {"solver": "cd", "tol": 1e-10, "max_iter": 1000, "backend": "auto"}
    at = fixed_parameter_model(m, [0.1, 0.02, 0.005], 50, 1e-3, opts)
    direct = fit_alternating(m, lambda mm, s: mm.fit(0.005, warm_start=s, **opts))
    assert at.family.theta == pytest.approx(direct.model.family.theta, rel=1e-7)
    assert at.family.estimated_parameter is None and at.design is m.design
    path = m.fit_path(lams=[0.1, 0.02, 0.005])
    assert all(r.model.family.theta == pytest.approx(at.family.theta, rel=1e-6) for r in path)


def test_alternate_refit_is_the_joint_maximum_likelihood(counts):
    sm = pytest.importorskip("statsmodels.api")
    from statsmodels.discrete.discrete_model import NegativeBinomial as DiscreteNB

    y = counts["y"].to_numpy()
    X = sm.add_constant(np.column_stack([(counts["x"] > 0).astype(float), counts["z"]]))

    def fit_at(family):
        return sm.GLM(y, X, family=sm.families.NegativeBinomial(alpha=1 / family.theta)).fit()

    fit, family = alternate_refit(NegativeBinomial(), fit_at, y, np.ones_like(y), 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        joint = DiscreteNB(y, X).fit(method="bfgs", maxiter=2000, gtol=1e-10, disp=0)
    assert family.theta == pytest.approx(1 / joint.params[-1], rel=1e-4)
    np.testing.assert_allclose(fit.params, joint.params[:-1], rtol=1e-4, atol=1e-5)
