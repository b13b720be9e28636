"""``BinarsityGLM(fit_intercept=False)`` has the formula's ``- 1`` meaning.

Before this was fixed the estimators kept every block's weighted sum-to-zero
constraint without an intercept, which forces the average row to η = 0: a silent wrong
answer whenever the response's mean is far from the link's 0 (gaussian y ≈ 10: residual
sum of squares 29747 instead of 28.3). Now the first feature's block carries full coding:
the engine fits with an intercept and its β0 is moved into the first block's levels (the
total-variation penalty is shift-invariant, so this is the optimum of the model whose
first block is free). What is proved: predictions equal the intercept model's at λ > 0,
``intercept_ == 0`` and the first block is shifted by the intercept; at λ = 0 the fit
equals statsmodels' GLM on the one-hot design without intercept (gaussian, binomial,
poisson with an offset, with sample weights); scikit-learn's checks, to_spec/from_spec
(bitwise) and pickling.
"""

import json
import pickle

import numpy as np
import pytest
import statsmodels.api as sm
from numpy.testing import assert_allclose, assert_array_equal

from binarsity_stats import BinarsityClassifier, BinarsityGLM, from_spec

N_BINS = (4, 3)


def _data(family, seed=0, n=400):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.normal(size=n), rng.uniform(0, 5, size=n)])
    off = rng.normal(0, 0.3, size=n)
    shape = np.sin(X[:, 0]) + 0.2 * X[:, 1]
    if family == "gaussian":  # mean far from 0
        y = 10.0 + shape + rng.normal(0, 0.3, size=n)
    elif family == "binomial":  # event rate ≈ 0.9: log-odds far from 0
        y = (rng.uniform(size=n) < 1 / (1 + np.exp(-(2.5 + 0.5 * shape)))).astype(float)
    else:  # counts with mean ≈ e^3
        y = rng.poisson(np.exp(3.0 + 0.3 * shape + off)).astype(float)
    sw = rng.uniform(0.2, 3.0, size=n)
    return X, y, off, sw


def _estimator(family, **kw):
    if family == "binomial":
        return BinarsityClassifier(n_bins=list(N_BINS), **kw)
    return BinarsityGLM(family=family, n_bins=list(N_BINS), **kw)


def _mean(est, X, off=None):
    if isinstance(est, BinarsityClassifier):
        return est.predict_proba(X, offset=off)[:, 1]
    return est.predict(X, offset=off)


def _one_hot_without_intercept(est, X):
    """The fit's own bins: all levels of the first feature, the others less their first."""
    codes = est.binarizer_.transform(X)
    cols = []
    for j, size in enumerate(est.binarizer_.n_bins_):
        first = 0 if j == 0 else 1
        cols += [(codes[:, j] == k).astype(float) for k in range(first, int(size))]
    return np.column_stack(cols)


def test_reproduction_gaussian_mean_far_from_zero():
    X, y, _, _ = _data("gaussian")
    with_b0 = BinarsityGLM(lam=1e-3, n_bins=8).fit(X, y)
    without = BinarsityGLM(lam=1e-3, n_bins=8, fit_intercept=False).fit(X, y)
    rss_with = np.sum((y - with_b0.predict(X)) ** 2)
    rss_without = np.sum((y - without.predict(X)) ** 2)
    # before the fix: ~3e4 instead of ~47 (every block summed to zero, the mean at 0)
    assert rss_without < 1.5 * len(y) * 0.3**2
    assert_allclose(rss_without, rss_with, rtol=1e-10)


@pytest.mark.parametrize("family", ["gaussian", "binomial", "poisson"])
@pytest.mark.parametrize("solver", ["cd", "fista"])
def test_predictions_equal_the_intercept_model(family, solver):
    X, y, off, sw = _data(family, seed=1)
    kw = dict(lam=5e-3, solver=solver)
    fit_kw = dict(sample_weight=sw, offset=off if family == "poisson" else None)
    ref = _estimator(family, **kw).fit(X, y, **fit_kw)
    est = _estimator(family, fit_intercept=False, **kw).fit(X, y, **fit_kw)
    assert est.intercept_ == 0.0
    assert abs(ref.intercept_) > 2.0  # the trap needs a mean far from 0
    ptr = est.block_ptr_
    first = slice(int(ptr[0]), int(ptr[1]))
    rest = slice(int(ptr[1]), None)
    # the first block's levels are the intercept model's shifted by its intercept
    assert_allclose(est.coef_[first], ref.coef_[first] + ref.intercept_, rtol=1e-9, atol=1e-9)
    assert_allclose(est.coef_[rest], ref.coef_[rest], rtol=1e-9, atol=1e-9)
    # the first block is no longer centred; the others still are
    n = est.bin_counts_
    assert abs(np.sum(n[first] * est.coef_[first])) > 1.0
    assert abs(np.sum(n[rest] * est.coef_[rest])) < 1e-6 * np.sum(n[rest])
    off_new = off if family == "poisson" else None
    assert_allclose(_mean(est, X, off_new), _mean(ref, X, off_new), rtol=1e-9)
    assert_allclose(est.objective_, ref.objective_, rtol=1e-12)


def test_gaussian_against_statsmodels_at_lambda_zero_weighted():
    X, y, _, sw = _data("gaussian", seed=2)
    est = BinarsityGLM(lam=0.0, n_bins=list(N_BINS), fit_intercept=False).fit(
        X, y, sample_weight=sw
    )
    Z = _one_hot_without_intercept(est, X)
    ref = sm.WLS(y, Z, weights=sw).fit()
    assert_allclose(est.predict(X), ref.fittedvalues, rtol=1e-8)
    # the first block's levels: statsmodels' levels for rows at the others' first level
    k0 = int(N_BINS[0])
    theta = est.coef_
    second0 = theta[k0]  # θ of the second feature's first level
    assert_allclose(theta[:k0] + second0, ref.params[:k0], rtol=1e-8)
    assert est.intercept_ == 0.0


def test_binomial_against_statsmodels_at_lambda_zero_weighted():
    X, y, _, sw = _data("binomial", seed=3)
    est = BinarsityClassifier(lam=0.0, n_bins=list(N_BINS), fit_intercept=False).fit(
        X, y, sample_weight=sw
    )
    Z = _one_hot_without_intercept(est, X)
    ref = sm.GLM(y, Z, family=sm.families.Binomial(), freq_weights=sw).fit(tol=1e-12)
    assert_allclose(est.predict_proba(X)[:, 1], ref.fittedvalues, rtol=1e-6)
    assert_allclose(est.decision_function(X), Z @ ref.params, rtol=1e-6, atol=1e-6)
    assert est.intercept_ == 0.0


def test_poisson_with_offset_against_statsmodels_at_lambda_zero_weighted():
    X, y, off, sw = _data("poisson", seed=4)
    est = BinarsityGLM(family="poisson", lam=0.0, n_bins=list(N_BINS), fit_intercept=False)
    est.fit(X, y, sample_weight=sw, offset=off)
    Z = _one_hot_without_intercept(est, X)
    ref = sm.GLM(y, Z, family=sm.families.Poisson(), offset=off, freq_weights=sw).fit(tol=1e-12)
    # the fit is certified to the default tol (KKT ≤ 1e-7 in gradient units), not to
    # rounding: the fitted means agree to that tolerance's margin, the deviance (flat at
    # the optimum) to its square
    assert_allclose(est.predict(X, offset=off), ref.fittedvalues, rtol=2e-6)
    mu = est.predict(X, offset=off)
    dev = 2 * np.sum(sw * (np.where(y > 0, y * np.log(np.where(y > 0, y, 1) / mu), 0) - (y - mu)))
    assert_allclose(dev, ref.deviance, rtol=1e-9)
    assert est.intercept_ == 0.0


def test_theory_lambda_counts_the_absorbed_intercept():
    # lam="theory" is the intercept model's λ (the engine fits β0), as for glm('... - 1')
    X, y, _, _ = _data("gaussian", seed=5)
    ref = BinarsityGLM(lam="theory", n_bins=8).fit(X, y)
    est = BinarsityGLM(lam="theory", n_bins=8, fit_intercept=False).fit(X, y)
    assert est.lam_ == ref.lam_
    assert_allclose(est.predict(X), ref.predict(X), rtol=1e-10)


@pytest.mark.parametrize("family", ["gaussian", "binomial", "poisson"])
def test_spec_round_trip_bitwise_and_pickle(family):
    import pandas as pd

    X, y, off, _ = _data(family, seed=6)
    df = pd.DataFrame(X, columns=["a", "b"])
    use_off = off if family == "poisson" else None
    est = _estimator(family, lam=2e-3, fit_intercept=False).fit(df, y, offset=use_off)
    spec = json.loads(json.dumps(est.to_spec(), allow_nan=False))
    assert spec["fit_intercept"] is False and spec["intercept"] == 0.0
    model = from_spec(spec)
    assert_array_equal(model.predict(df, type="link", offset=use_off),
                       est.decision_function(df, offset=use_off))  # fmt: skip
    clone = pickle.loads(pickle.dumps(est))
    assert_array_equal(_mean(clone, df, use_off), _mean(est, df, use_off))
    assert clone.intercept_ == 0.0


def test_sklearn_check_estimator_without_intercept():
    from sklearn.utils.estimator_checks import check_estimator

    # frequency weights: the semantics sklearn's sample-weight check tests (test_estimator)
    check_estimator(BinarsityGLM(fit_intercept=False, weights_kind="freq"))
    check_estimator(BinarsityClassifier(fit_intercept=False, weights_kind="freq"))
