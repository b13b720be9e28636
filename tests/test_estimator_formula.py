"""The estimators against the formula layer: the same model gives the same numbers.

What is proved here: at its defaults an estimator fits what ``glm(...).fit()`` fits on
the same data (``lam="theory"``, bitwise), and its model description is valid at
those defaults.
"""

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_array_equal

from binarsity_stats import BinarsityClassifier, BinarsityGLM, from_spec, glm

FAMILIES = ["gaussian", "binomial", "poisson"]


def _frame(family, n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    X["c"] = 0.9 * X["a"] + 0.1 * X["c"]  # near-collinear with a
    eta = np.clip(X["a"], -1, 1) + 1.0 * (X["b"] > 0.5)
    if family == "binomial":
        y = rng.binomial(1, 1 / (1 + np.exp(-eta))).astype(float)
    elif family == "poisson":
        y = rng.poisson(np.exp(eta - 0.5)).astype(float)
    else:
        y = 50.0 * (eta + rng.normal(size=n))  # on a scale far from 1
    sw = rng.uniform(0.5, 2.0, n)
    off = rng.normal(scale=0.2, size=n) if family != "gaussian" else None
    return X, np.asarray(y), sw, off


@pytest.mark.parametrize("family", FAMILIES)
def test_the_default_lambda_is_the_formula_default(family):
    X, y, sw, off = _frame(family)
    est = BinarsityGLM(family=family, n_bins=20)
    assert est.get_params()["lam"] == "theory"
    est.fit(X, y, sample_weight=sw, offset=off)
    res = glm("y ~ bin(a) + bin(b) + bin(c)", X.assign(y=y), family=family, n_bins=20,
              sample_weight=sw, offset=off).fit()  # fmt: skip
    assert est.lam_ == res.lam
    assert_array_equal(est.coef_, res.coef)
    assert est.intercept_ == res.intercept


def test_the_theory_lambda_follows_the_family_and_the_scale_of_y():
    # why no fixed default: the λ that theory gives differs by orders of magnitude
    X, y, _, _ = _frame("gaussian")
    lam_gauss = BinarsityGLM(n_bins=20).fit(X, y).lam_
    lam_small = BinarsityGLM(n_bins=20).fit(X, y / 1000).lam_
    lam_binom = BinarsityClassifier(n_bins=20).fit(X, y > 0).lam_
    assert lam_gauss / lam_small == pytest.approx(1000, rel=1e-6)
    assert lam_gauss / lam_binom > 100
    assert BinarsityClassifier().get_params()["lam"] == "theory"


@pytest.mark.parametrize("est", [BinarsityGLM(n_bins=10), BinarsityClassifier(n_bins=10)])
def test_to_spec_at_the_default_lambda_records_the_fitted_lambda(est):
    X, y, _, _ = _frame("binomial")
    est.fit(X, y)
    spec = est.to_spec()
    assert spec["lam"] == est.lam_
    assert_array_equal(from_spec(spec).predict(X, type="link"), est.decision_function(X))
