"""sklearn/_estimator_predict.py: an estimator's predictions from one checked snapshot.

Proved here: ``decision_function`` is β0 + θ[bin of x] + θ[level of g] + β z + offset
with the bin found here by ``np.searchsorted`` on the fitted right-closed edges;
``predict`` is the inverse link; ``score`` is D² (scikit-learn's ``r2_score`` for the
gaussian, 1 − D/D₀ written out for the binomial); ``predict_survival`` is
exp(−H0(t) e^η) on ``baseline_hazard_``; a Dask X predicts what the in-memory X does;
and a fitted state modified by hand is refused with a clear error before any kernel
reads it (no out-of-bounds gather).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import r2_score

from binarsity_stats import BinarsityGLM
from binarsity_stats.core._base import NotFittedError


def data(n: int = 200, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"x": rng.normal(size=n), "g": rng.choice(list("abc"), n),
                      "z": rng.normal(size=n)})  # fmt: skip
    eta = (X.x > 0) + 0.3 * X.z + 0.4 * (X.g == "b") - 0.5
    return X, eta.to_numpy(), rng


def fitted(family="gaussian", **kw):
    X, eta, rng = data()
    y = eta + rng.normal(size=len(X)) if family == "gaussian" else (
        rng.random(len(X)) < 1 / (1 + np.exp(-eta))).astype(float)  # fmt: skip
    est = BinarsityGLM(family=family, n_bins=6, lam=0.005, categorical_features=["g"],
                       linear_features=["z"], **kw).fit(X, y)  # fmt: skip
    return X, y, est


def test_decision_function_is_the_gather():
    X, _, est = fitted()
    off = np.linspace(-1, 1, len(X))
    edges = est.binarizer_.edges_[0]
    bin_of_x = np.searchsorted(edges, X["x"].to_numpy(), side="left")  # right-closed bins
    level = pd.Categorical(X["g"], categories=est.categories_[0]).codes
    ptr = est.block_ptr_
    want = (est.intercept_ + est.coef_[ptr[0] + bin_of_x] + est.coef_[ptr[1] + level]
            + est.linear_coef_[0] * X["z"].to_numpy() + off)  # fmt: skip
    np.testing.assert_allclose(est.decision_function(X, offset=off), want, rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(est.predict(X, offset=off), want, rtol=1e-14, atol=1e-14)


def test_predict_is_the_inverse_link_and_score_is_d2():
    X, y, est = fitted("binomial")
    eta = est.decision_function(X)
    mu = est.predict(X)
    np.testing.assert_allclose(mu, 1 / (1 + np.exp(-eta)), rtol=1e-13)
    w = np.random.default_rng(3).uniform(0.5, 2, len(y))

    def dev(m):
        return -2 * np.sum(w * (y * np.log(m) + (1 - y) * np.log1p(-m)))

    want = 1 - dev(mu) / dev(np.full_like(mu, np.average(y, weights=w)))
    assert est.score(X, y, sample_weight=w) == pytest.approx(want, rel=1e-12)
    Xg, yg, gauss = fitted()
    assert gauss.score(Xg, yg) == pytest.approx(r2_score(yg, gauss.predict(Xg)), rel=1e-12)


def test_predict_survival():
    X, eta, rng = data()
    t = rng.exponential(np.exp(-eta))
    status = rng.random(len(X)) < 0.8
    y = np.column_stack([t, status.astype(float)])
    est = BinarsityGLM(family="cox", n_bins=5, lam=0.005, categorical_features=["g"],
                       linear_features=["z"]).fit(X, y)  # fmt: skip
    times, cumhaz = est.baseline_hazard_
    grid = [0.0, float(times[2]), float(times[-1]) + 1.0]
    h0 = np.array([0.0, cumhaz[2], cumhaz[-1]])
    want = np.exp(-np.exp(est.decision_function(X))[:, None] * h0)
    np.testing.assert_allclose(est.predict_survival(X, grid), want, rtol=1e-12)
    with pytest.raises(ValueError, match="times must be finite non-negative numbers"):
        est.predict_survival(X, [-1.0])
    _, _, gauss = fitted()
    with pytest.raises(ValueError, match="predict_survival needs family='cox'"):
        gauss.predict_survival(X, [1.0])


def test_a_dask_X_predicts_as_in_memory():
    dd = pytest.importorskip("dask.dataframe")
    import dask

    X, _, est = fitted()
    with dask.config.set(scheduler="sync"):
        lazy = est.predict(dd.from_pandas(X, npartitions=3))
        np.testing.assert_array_equal(lazy.compute().to_numpy(), est.predict(X))
        with pytest.raises(TypeError, match="offset: predictions on a Dask X take no offset"):
            est.decision_function(dd.from_pandas(X, npartitions=3), offset=np.zeros(len(X)))


def test_a_modified_state_is_refused_before_any_kernel():
    X, _, est = fitted()
    with pytest.raises(NotFittedError, match="not fitted yet"):
        BinarsityGLM().predict(X)
    cases = {
        "coef_": (est.coef_[:-1], "len\\(coef_\\) = 8 but block_ptr_\\[-1\\] = 9"),
        "intercept_": (float("nan"), "intercept_ is nan, not a finite number"),
        "linear_coef_": (np.zeros(2), "linear_coef_ does not hold the 1 linear features"),
        "block_ptr_": (np.array([0, 5, 9]), "the block sizes \\[5, 4\\] differ"),
        "feature_kinds_": (np.array(["bin", "oops", "linear"], dtype=object), "feature_kinds_"),
        "categories_": ([np.array(["a", "b"], dtype=object)], "the block sizes"),
    }
    for name, (value, message) in cases.items():
        saved = getattr(est, name)
        setattr(est, name, value)
        try:
            with pytest.raises(ValueError, match="the fitted state is inconsistent: " + message):
                est.predict(X)
        finally:
            setattr(est, name, saved)
    est.predict(X)  # restored
    with pytest.raises(ValueError, match="X has 2 features, but BinarsityGLM is expecting 3"):
        est.predict(np.zeros((4, 2)))
