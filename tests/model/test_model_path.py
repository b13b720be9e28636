"""model/_model_path.py: ``fit_path`` and ``fit_cv`` of a model.

Proved here: the path at every λ is the fit at that λ (same objective to the solver's
tolerance); its training deviance never increases as λ decreases; every fold score of
``fit_cv`` is the held-out mean deviance of the fit on that fold's training rows,
recomputed here from ``prepare(train).solve(λ)`` and NumPy; fold ids and group columns
are read from the data; the arguments are checked before any work, naming themselves.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from binarsity_stats.engine._relax import GAMMAS
from binarsity_stats.model._model import glm
from binarsity_stats.model._model_path import _check_relax


def data(n: int = 240, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x": rng.normal(size=n), "g": rng.choice(list("abc"), n),
                       "z": rng.normal(size=n)})  # fmt: skip
    df["y"] = (df.x > 0) + 0.3 * df.z + 0.4 * (df.g == "b") + rng.normal(size=n)
    df["fold"] = np.arange(n) % 4 + 1
    df["household"] = rng.integers(0, 30, n)
    return df


FORMULA = "y ~ bin(x, 8) + C(g) + z"


def test_the_path_at_every_lambda_is_the_fit_there():
    m = glm(FORMULA, data())
    lams = [0.01, 0.2, 0.05]  # unsorted: used decreasing
    path = m.fit_path(lams=lams, tol=1e-9)
    np.testing.assert_array_equal(path.lams, [0.2, 0.05, 0.01])
    for i, lam in enumerate(path.lams):
        cold = m.fit(lam=lam, tol=1e-9)
        # two solutions within KKT 1e-9 of one strongly convex problem
        assert path[i].objective == pytest.approx(cold.objective, rel=1e-7, abs=1e-9)
        np.testing.assert_allclose(path[i].coef, cold.coef, atol=1e-5)


def test_the_default_path_starts_flat_and_its_deviance_never_increases():
    m = glm(FORMULA, data())
    path = m.fit_path(n_lambdas=12, lam_min_ratio=1e-3, tol=1e-9)
    np.testing.assert_allclose(path.lams, m.lambda_grid(12, 1e-3), rtol=1e-12)
    ptr = m.block_ptr
    assert np.ptp(path[0].coef[ptr[0] : ptr[1]]) < 1e-8  # λ_max: the binned term is flat
    dev = path.deviance
    assert np.all(np.diff(dev) <= 1e-8 * dev[0])
    assert dev[-1] < dev[0]


def held_out_deviance(m, df, train, test, lam):
    """Mean gaussian deviance on ``test`` of the fit on ``train`` (NumPy)."""
    sol = m.prepare(train).solve(lam, tol=1e-11)
    eta = m.linear_predictor(sol.coef, sol.dense_coef, sol.intercept)
    y = df["y"].to_numpy()
    return np.mean((y[test] - eta[test]) ** 2)


def test_every_fold_score_is_the_held_out_deviance_of_its_fit():
    df = data()
    m = glm(FORMULA, df)
    lams = [0.3, 0.05, 0.01]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # λ grid below λ_max
        cv = m.fit_cv(folds="fold", lams=lams, early_stopping=False, cv_tol=None, tol=1e-11)
    np.testing.assert_array_equal(cv.fold_ids, df["fold"].to_numpy() - 1)
    assert cv.fold_scores.shape == (4, 3)
    for k in range(4):
        test = np.flatnonzero(df["fold"].to_numpy() == k + 1)
        train = np.setdiff1d(np.arange(len(df)), test)
        for i, lam in enumerate(cv.lams):
            want = held_out_deviance(m, df, train, test, lam)
            assert cv.fold_scores[k, i] == pytest.approx(want, rel=1e-6)
    assert cv.lam_min == cv.lams[np.argmin(cv.fold_scores.mean(axis=0))]


def test_groups_stay_in_one_fold():
    df = data()
    m = glm(FORMULA, df)
    cv = m.fit_cv(folds=5, groups="household", random_state=0, n_lambdas=5)
    for g in np.unique(df["household"]):
        assert np.unique(cv.fold_ids[df["household"].to_numpy() == g]).size == 1
    with pytest.raises(ValueError, match="groups='househld' is not a column"):
        m.fit_cv(folds=5, groups="househld")


def test_cv_is_reproducible_with_a_seed():
    m = glm(FORMULA, data())
    a = m.fit_cv(folds=3, random_state=7, n_lambdas=6)
    b = m.fit_cv(folds=3, random_state=7, n_lambdas=6)
    np.testing.assert_array_equal(a.fold_ids, b.fold_ids)
    np.testing.assert_array_equal(a.mean, b.mean)


def test_arguments_are_checked_by_name():
    m = glm(FORMULA, data())
    with pytest.raises(TypeError, match="folds must be an integer >= 2"):
        m.fit_cv(folds=True)
    with pytest.raises(TypeError, match="early_stopping"):
        m.fit_cv(folds=3, early_stopping="yes")
    with pytest.raises(TypeError, match="relax must be a bool or a sequence"):
        m.fit_cv(folds=3, relax="yes")
    with pytest.raises(ValueError, match="scoring"):
        m.fit_cv(folds=3, scoring="auc")  # binomial only
    with pytest.raises(ValueError, match="lam"):
        m.fit_path(lams=[0.1, -1.0])


def test_check_relax():
    assert _check_relax(False) is None and _check_relax(None) is None
    assert _check_relax(True) == GAMMAS
    assert _check_relax([1, 0.5, 0.5, 0]) == (0.0, 0.5, 1.0)  # sorted, once each
    with pytest.raises(ValueError, match="at least one gamma"):
        _check_relax([])
    with pytest.raises(ValueError, match="relax"):
        _check_relax([1.5])
