"""model/_path_results.py: ``PathResults``, ``CVResults`` and ``RelaxedCVResults``.

Built here directly from a real path and fold scores written by hand, so the choice of
λ (the best mean, the one-standard-error rule, glmnet's), of γ (ties to the larger), the
indexing of a path and the fit between grid values are checked against values worked
out in the test.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from binarsity_stats.model._model import glm
from binarsity_stats.model._path_results import CVResults, PathResults, RelaxedCVResults

LAMS = np.array([0.3, 0.1, 0.03, 0.01])


@pytest.fixture(scope="module")
def model():
    rng = np.random.default_rng(0)
    n = 200
    df = pd.DataFrame({"x": rng.normal(size=n), "z": rng.normal(size=n)})
    df["y"] = (df.x > 0) + 0.3 * df.z + rng.normal(size=n)
    return glm("y ~ bin(x, 8) + z", df)


@pytest.fixture(scope="module")
def path(model):
    return model.fit_path(lams=LAMS, tol=1e-10)


def cv_of(model, path, scores, **kw):
    n = model.nobs
    return CVResults(model, LAMS, np.asarray(scores, float), "deviance", np.arange(n) % 3,
                     path._solutions, **kw)  # fmt: skip


def test_path_indexing(path):
    assert len(path) == 4
    assert path[-1].lam == path[3].lam == 0.01
    assert [r.lam for r in path] == list(LAMS)
    with pytest.raises(IndexError, match="λ position 4 out of range for a path of 4"):
        path[4]
    with pytest.raises(TypeError, match="indexed by λ position"):
        path[0.1]
    with pytest.raises(TypeError, match="indexed by λ position"):
        path[True]


def test_path_tables(path):
    coefs = path.coefs
    assert list(coefs.index) == list(LAMS)
    np.testing.assert_array_equal(coefs.iloc[2].to_numpy(), path[2].params.to_numpy())
    frame = path.to_frame()
    assert list(frame.columns) == ["lam", "df", "deviance", "n_iter", "converged"]
    np.testing.assert_array_equal(frame["df"], [r.df for r in path])
    np.testing.assert_allclose(frame["deviance"], [r.deviance for r in path], rtol=1e-15)


def test_cv_chooses_the_best_mean_and_the_one_standard_error_rule(model, path):
    scores = [[5.0, 3.0, 2.0, 2.2],
              [5.2, 3.1, 2.2, 2.3],
              [4.8, 2.3, 1.8, 1.9]]  # fmt: skip
    cv = cv_of(model, path, scores)
    s = np.asarray(scores)
    np.testing.assert_allclose(cv.mean, s.mean(axis=0), rtol=1e-15)
    np.testing.assert_allclose(cv.se, s.std(axis=0, ddof=1) / np.sqrt(3), rtol=1e-12)
    assert cv.lam_min == 0.03  # mean 2.0
    # best 2.0 + se 0.2 = 2.2: λ = 0.1 has mean 2.8 (outside), so lam_1se = 0.03 too
    assert cv.lam_1se == 0.03
    wide = cv_of(model, path, [[5, 2.6, 2.0, 2.2], [5, 2.0, 3.0, 2.3], [5, 2.0, 1.0, 1.9]])
    # best mean 2.0 at λ = 0.03, se 1/sqrt(3); λ = 0.1 (mean 2.2) is within: lam_1se
    assert wide.lam_min == 0.03 and wide.lam_1se == 0.1
    assert cv.best_.lam == 0.03
    assert cv.best_.cv_score == {"scoring": "deviance", "mean": pytest.approx(2.0), "se": cv.se[2]}
    assert "3-fold CV (lam_min, deviance)" in cv.best_.lam_source


def test_results_at_a_lambda(model, path):
    cv = cv_of(model, path, np.ones((3, 4)) + np.arange(4)[::-1])
    assert cv.results(0.1).lam == 0.1
    between = cv.results(0.05)  # exact fit, not an interpolation
    cold = model.fit(lam=0.05, tol=1e-10)
    assert between.objective == pytest.approx(cold.objective, rel=1e-7, abs=1e-9)
    assert between.cv_score is None  # no CV score between grid values
    with pytest.raises(ValueError, match="outside the cross-validated grid"):
        cv.results(1.0)
    with pytest.raises(ValueError, match="which must be 'lam_min', 'lam_1se'"):
        cv.results("lam_best")
    with pytest.raises(TypeError, match="s must be 'lam_min', 'lam_1se' or a λ value"):
        cv.results(True)
    with pytest.raises(ValueError, match="which must be 'lam_min' or 'lam_1se'"):
        cv.report(which=0.1)


def test_cv_frames_and_early_stop(model, path):
    cv = cv_of(model, path, np.ones((3, 4)) + np.arange(4), grid_size=10)
    assert cv.stopped_early and "4 of 10 λ, stopped early" in repr(cv)
    frame = cv.to_frame()
    np.testing.assert_array_equal(frame["df"], path.df)
    assert not cv_of(model, path, np.ones((3, 4))).stopped_early
    assert len(cv.splits) == 3
    train, test = cv.splits[1]
    np.testing.assert_array_equal(test, np.flatnonzero(np.arange(model.nobs) % 3 == 1))
    assert np.intersect1d(train, test).size == 0 and train.size + test.size == model.nobs


def test_relaxed_cv_chooses_gamma_and_breaks_ties_to_the_larger(model, path):
    g0 = np.full((3, 4), 3.0)
    g_half = np.full((3, 4), 3.0)
    g_half[:, 2] = 1.0  # the best of all
    g1 = np.full((3, 4), 2.0)
    rcv = RelaxedCVResults(model, LAMS, np.stack([g0, g_half, g1]), (0.0, 0.5, 1.0),
                           "deviance", np.arange(model.nobs) % 3, path._solutions)  # fmt: skip
    assert rcv.gamma_min == 0.5 and rcv.lam_min == 0.03
    np.testing.assert_array_equal(rcv.fold_scores, g_half)
    assert rcv.best_.relax_gamma == 0.5
    plain = rcv.penalized_cv
    np.testing.assert_array_equal(plain.fold_scores, g1)
    tie = RelaxedCVResults(model, LAMS, np.stack([g1, g1]), (0.0, 1.0), "deviance",
                           np.arange(model.nobs) % 3, path._solutions)  # fmt: skip
    assert tie.gamma_min == 1.0
    frame = tie.to_frame()
    assert {"mean_gamma_0", "mean_gamma_1"} <= set(frame.columns)
    no_one = RelaxedCVResults(model, LAMS, np.stack([g0]), (0.0,), "deviance",
                              np.arange(model.nobs) % 3, path._solutions)  # fmt: skip
    with pytest.raises(ValueError, match="did not score gamma = 1"):
        _ = no_one.penalized_cv


def test_path_results_from_solutions(model, path):
    again = PathResults(model, path.lams, path._solutions)
    np.testing.assert_array_equal(again.deviance, path.deviance)
    assert again.converged.all()
