"""model/_model_dask.py: ``glm()`` on a Dask DataFrame and the ``solver="dask"`` fits.

Proved here against the in-memory model of the same rows: the Dask design codes the
rows as the in-memory one does; ``fit``, ``fit_path`` and ``fit_cv`` with
``solver="dask"`` reach the in-memory optimum (same objective to the solvers'
tolerance); every fold score of the Dask CV is the held-out mean deviance of the fit on
the other folds, recomputed here with the in-memory engine on the Dask fold ids; what
the distributed solver does not do is refused naming the argument.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")

from binarsity_stats.model._model import glm  # noqa: E402

FORMULA = "y ~ bin(x, 6) + C(g) + z"


@pytest.fixture(autouse=True)
def _sync_scheduler():
    with dask.config.set(scheduler="sync"):
        yield


@pytest.fixture(scope="module")
def frames():
    rng = np.random.default_rng(0)
    n = 300
    df = pd.DataFrame({"x": rng.normal(size=n), "g": rng.choice(list("abc"), n),
                       "z": rng.normal(size=n)})  # fmt: skip
    eta = 0.9 * (df.x > 0) - 0.4 + 0.3 * df.z + 0.5 * (df.g == "b")
    df["y"] = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    with dask.config.set(scheduler="sync"):
        ddf = dd.from_pandas(df, npartitions=3)
        return df, glm(FORMULA, df, family="binomial"), glm(FORMULA, ddf, family="binomial")


def test_the_dask_design_is_the_in_memory_one(frames):
    _, mem, dsk = frames
    assert dsk.dask_design is not None and mem.dask_design is None
    np.testing.assert_array_equal(dsk.block_ptr, mem.block_ptr)
    np.testing.assert_array_equal(dsk.design.codes, mem.design.codes)
    np.testing.assert_array_equal(dsk.spec.blocks[0].edges, mem.spec.blocks[0].edges)
    np.testing.assert_array_equal(dsk.y, mem.y)


def test_fit_and_path_reach_the_in_memory_optimum(frames):
    _, mem, dsk = frames
    res = dsk.fit(lam=0.01, solver="dask", tol=1e-8)
    ref = mem.fit(lam=0.01, tol=1e-10)
    assert res.lam_source == "user (dask)"
    assert res.objective == pytest.approx(ref.objective, rel=1e-6)
    np.testing.assert_allclose(res.predict(type="link"), ref.predict(type="link"), atol=1e-3)
    path = dsk.fit_path(lams=[0.002, 0.02], solver="dask", tol=1e-8)
    np.testing.assert_array_equal(path.lams, [0.02, 0.002])
    for r in path:
        assert r.objective == pytest.approx(mem.fit(lam=r.lam, tol=1e-10).objective, rel=1e-6)


def test_cv_fold_scores_are_held_out_deviances(frames):
    df, mem, dsk = frames
    cv = dsk.fit_cv(folds=3, lams=[0.05, 0.01], solver="dask", tol=1e-8, cv_tol=1e-8)
    assert cv.fold_scores.shape == (3, 2) and set(np.unique(cv.fold_ids)) == {0, 1, 2}
    y = df["y"].to_numpy()
    for k in range(3):
        test = np.flatnonzero(cv.fold_ids == k)
        train = np.flatnonzero(cv.fold_ids != k)
        for i, lam in enumerate(cv.lams):
            sol = mem.prepare(train).solve(lam, tol=1e-10)
            eta = mem.linear_predictor(sol.coef, sol.dense_coef, sol.intercept)[test]
            p = 1 / (1 + np.exp(-eta))
            dev = -2 * np.mean(y[test] * np.log(p) + (1 - y[test]) * np.log1p(-p))
            assert cv.fold_scores[k, i] == pytest.approx(dev, rel=1e-5)
    assert cv.rule["solver"] == "dask" and not cv.stopped_early


def test_what_the_distributed_solver_does_not_do_is_refused(frames):
    _, mem, dsk = frames
    with pytest.raises(ValueError, match='solver="dask" needs a model specified on a Dask'):
        mem.fit(lam=0.01, solver="dask")
    with pytest.raises(TypeError, match="folds must be an integer >= 2 or a fold specification"):
        dsk.fit_cv(folds=True, solver="dask")
    with pytest.raises(ValueError, match="folds must be between 2 and the number of rows"):
        dsk.fit_cv(folds=1, solver="dask")
    # what the backend lacks is refused in one place, naming the argument and the backend
    with pytest.raises(ValueError, match=r"scoring='auc'.*not supported by the dask backend"):
        dsk.fit_cv(folds=3, scoring="auc", solver="dask")
    with pytest.raises(ValueError, match=r"relax=True.*not supported by the dask backend"):
        dsk.fit_cv(folds=3, relax=True, solver="dask")
    with pytest.raises(ValueError, match="lam must be a non-negative number, 'theory' or 'alo'"):
        dsk.fit(lam="best", solver="dask")


def test_groups_reach_the_distributed_cv(frames):
    """Groups are the shared CV's (one code path with the in-memory fit): the Dask CV's
    folds are the in-memory CV's, and no group straddles two folds."""
    _, mem, dsk = frames
    groups = np.arange(300) % 7
    a = dsk.fit_cv(folds=3, groups=groups, solver="dask", n_lambdas=4, random_state=1)
    b = mem.fit_cv(folds=3, groups=groups, n_lambdas=4, random_state=1)
    np.testing.assert_array_equal(a.fold_ids, b.fold_ids)
    for g in np.unique(groups):
        assert len(np.unique(a.fold_ids[groups == g])) == 1


def test_cv_scores_subtract_the_saturated_loss():
    """A Poisson fold's score is its mean deviance 2 Σ [y log(y/μ) − (y − μ)] / n_k: the
    loss minus the saturated loss, which (unlike a 0/1 response's) is not zero."""
    rng = np.random.default_rng(1)
    n = 240
    df = pd.DataFrame({"x": rng.normal(size=n), "z": rng.normal(size=n)})
    df["y"] = rng.poisson(np.exp(0.5 + 0.6 * (df.x > 0) + 0.2 * df.z)).astype(float)
    mem = glm("y ~ bin(x, 5) + z", df, family="poisson")
    dsk = glm("y ~ bin(x, 5) + z", dd.from_pandas(df, npartitions=2), family="poisson")
    cv = dsk.fit_cv(folds=3, lams=[0.02], solver="dask", tol=1e-8, cv_tol=1e-8)
    y = df["y"].to_numpy()
    for k in range(3):
        test, train = np.flatnonzero(cv.fold_ids == k), np.flatnonzero(cv.fold_ids != k)
        sol = mem.prepare(train).solve(0.02, tol=1e-10)
        mu = np.exp(mem.linear_predictor(sol.coef, sol.dense_coef, sol.intercept)[test])
        yt = y[test]
        ylogy = np.where(yt > 0, yt * np.log(np.where(yt > 0, yt, 1.0) / mu), 0.0)
        assert cv.fold_scores[k, 0] == pytest.approx(2 * np.mean(ylogy - (yt - mu)), rel=1e-5)
