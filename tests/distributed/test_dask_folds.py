"""Cross-validation of a Dask model whose rows stay on the workers (issue 26).

``glm(formula, dask_frame, collect=False).fit_cv()``: the fold ids are computed on the
workers (``distributed/_dask_folds``: dealt per partition from (seed, partition, row),
stratified for binomial; or the user's column), the held-out deviances reduced per
partition, and the walk (grid, early stopping, extension, the choice of λ) is
``engine/_cv.cross_validate``'s. With the same fold ids the CV curve is the in-memory
CV's (collect=True, the in-memory solver) to the solvers' tolerance; on a LocalCluster
with the gathering code made to raise and every gathered result measured, no object of
the rows' size reaches the client.
"""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")

from binarsity_stats import glm  # noqa: E402
from binarsity_stats.distributed._dask_folds import (  # noqa: E402
    FoldRows,
    WorkerFolds,
    with_worker_fold,
)
from binarsity_stats.model._model_dask import RowsOnWorkersError  # noqa: E402

FORMULA = "y ~ bin(age, 8) + C(region) + z"


@pytest.fixture(autouse=True)
def _sync_scheduler():
    with dask.config.set(scheduler="sync"):
        yield


def _frame(n=2000, seed=0, family="binomial"):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "age": rng.integers(18, 80, n).astype(float),
        "region": rng.choice(["north", "south", "east"], n),
        "z": np.round(rng.normal(size=n), 2),
        "fold": rng.integers(1, 6, n),  # glmnet's foldid: 1..5
    })  # fmt: skip
    eta = 0.03 * (df.age - 50) + 0.5 * (df.region == "south") + 0.4 * df.z
    if family == "binomial":
        df["y"] = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    elif family == "poisson":
        df["y"] = rng.poisson(np.exp(eta)).astype(float)
    else:
        df["y"] = 2.0 + eta + rng.normal(size=n)
    return df


def _worker_fold_ids(model, folds, random_state=None):
    """The fold ids the workers compute, gathered here (a test may read them)."""
    spec = model.worker_folds(folds, None, random_state)
    parts = model.dask_design.partitions
    done = dask.compute(*[dask.delayed(with_worker_fold)(p, i, plan)
                          for i, (p, plan) in enumerate(zip(parts, spec.plans, strict=True))])  # fmt: skip
    return spec, np.concatenate([d["fold"] for d in done])


# a tight tolerance: the Dask and in-memory solvers then agree far below 1e-8
TIGHT = dict(tol=1e-9, cv_tol=None)


@pytest.mark.filterwarnings("ignore:lam_min = .* is the smallest:UserWarning")
@pytest.mark.parametrize(
    ("family", "grid"),
    [
        ("binomial", dict(n_lambdas=10)),
        # the curve still falls at the grid's end: the grid is extended, as in memory
        ("poisson", dict(n_lambdas=5, lam_min_ratio=0.1)),
        ("gaussian", dict(n_lambdas=10, patience=2)),
    ],
)  # fmt: skip
def test_the_cv_curve_is_the_in_memory_one_with_the_same_folds(family, grid):
    df = _frame(family=family)
    ddf = dd.from_pandas(df, npartitions=4)
    lazy = glm(FORMULA, ddf, family=family, collect=False)
    gathered = glm(FORMULA, ddf, family=family, collect=True)
    assert lazy.rows_on_workers and not gathered.rows_on_workers
    cv = lazy.fit_cv(folds="fold", **grid, **TIGHT)  # a column of the Dask DataFrame
    ref = gathered.fit_cv(folds=df["fold"].to_numpy(), **grid, **TIGHT)  # in memory
    # the same walk: grid, early stop, extension, choice of λ
    assert cv.lams.size == ref.lams.size and cv.extended == ref.extended
    # λ_max from the null fit's Newton steps on the workers (to its tolerance)
    np.testing.assert_allclose(cv.lams, ref.lams, rtol=1e-8)
    np.testing.assert_allclose(cv.fold_scores, ref.fold_scores, rtol=1e-8)
    np.testing.assert_allclose(cv.mean, ref.mean, rtol=1e-8)
    np.testing.assert_allclose(cv.se, ref.se, rtol=1e-6)  # a difference of near values
    assert cv.idx_min == ref.idx_min and cv.idx_1se == ref.idx_1se
    assert cv.lam_min == pytest.approx(ref.lam_min, rel=1e-8)
    if family == "poisson":
        assert cv.extended > 0
    # the same fold ids as a Dask Series aligned with the frame
    again = lazy.fit_cv(folds=ddf["fold"] * 10, **grid, **TIGHT)
    np.testing.assert_array_equal(again.fold_scores, cv.fold_scores)


def test_the_dask_solver_on_gathered_rows_gives_the_same_curve():
    """The other door to the Dask solver (collect=True, solver="dask": the fold ids sent
    from the client) reads the same folds: the same numbers to rounding."""
    df = _frame()
    ddf = dd.from_pandas(df, npartitions=3)
    cv = glm(FORMULA, ddf, family="binomial", collect=False).fit_cv(folds="fold", n_lambdas=8)
    ref = glm(FORMULA, ddf, family="binomial", collect=True).fit_cv(
        folds=df["fold"].to_numpy(), n_lambdas=8, solver="dask")
    np.testing.assert_allclose(cv.fold_scores, ref.fold_scores, rtol=1e-12)
    assert cv.lam_min == ref.lam_min and cv.lam_1se == ref.lam_1se


def test_the_results_summarise_plot_and_solve_between_grid_values():
    pytest.importorskip("matplotlib")
    df = _frame()
    ddf = dd.from_pandas(df, npartitions=3)
    lazy = glm(FORMULA, ddf, family="binomial", collect=False)
    gathered = glm(FORMULA, ddf, family="binomial", collect=True)
    cv = lazy.fit_cv(folds=4, n_lambdas=8, random_state=0)
    assert cv.folds == 4 and cv.fold_ids is None and cv.rule["solver"] == "dask"
    assert all(isinstance(side, FoldRows) for split in cv.splits for side in split)
    assert cv.best_.lam == cv.lam_min and "4-fold CV" in cv.best_.lam_source
    text = cv.best_.summary().as_text()
    assert "Binarsity GLM Results" in text and "No. Observations:" in text
    frame = cv.to_frame()
    assert list(frame.columns) == ["lam", "mean", "se", "df"] and len(frame) == cv.lams.size
    assert cv.plot() is not None
    # a λ between grid values is solved on the cluster (the rows never come back)
    lam = float(np.sqrt(cv.lams[2] * cv.lams[3]))
    between = cv.results(lam)
    sol = gathered.fit(lam, solver="dask", tol=1e-9)
    assert between.lam == lam
    assert between.objective == pytest.approx(sol.objective, rel=1e-7)
    # a pickled CV keeps its numbers; the folds' references to the cluster are dropped
    saved = pickle.loads(pickle.dumps(cv))
    np.testing.assert_array_equal(saved.fold_scores, cv.fold_scores)


def test_the_fold_ids_are_dealt_on_the_workers_stratified_and_reproducible():
    df = _frame(n=2003)
    ddf = dd.from_pandas(df, npartitions=5)
    lazy = glm(FORMULA, ddf, family="binomial", collect=False)
    spec, ids = _worker_fold_ids(lazy, 5, random_state=7)
    assert isinstance(spec, WorkerFolds) and spec.stratified and spec.seed == 7
    np.testing.assert_array_equal(np.bincount(ids, minlength=5), spec.sizes)
    assert spec.sizes.max() - spec.sizes.min() <= 1  # balanced as in memory
    y = df["y"].to_numpy()
    for cls in (0.0, 1.0):  # every class spread over the folds to within one row
        per_fold = np.bincount(ids[y == cls], minlength=5)
        assert per_fold.max() - per_fold.min() <= 1
    # a function of (seed, partition, row): the same again, another seed another draw
    np.testing.assert_array_equal(_worker_fold_ids(lazy, 5, random_state=7)[1], ids)
    assert not np.array_equal(_worker_fold_ids(lazy, 5, random_state=8)[1], ids)
    # the fit_cv of a seed uses those folds: the held-out weights are the fold sizes
    cv = lazy.fit_cv(folds=5, random_state=7, n_lambdas=4)
    assert [len(test) for _, test in cv.splits] == list(spec.sizes)
    gaussian = glm(FORMULA, ddf, family="gaussian", collect=False)
    spec_g, ids_g = _worker_fold_ids(gaussian, 3, random_state=0)
    assert not spec_g.stratified and spec_g.sizes.max() - spec_g.sizes.min() <= 1


@pytest.mark.parametrize(
    ("folds", "error", "match"),
    [
        ("flod", ValueError, "folds='flod' is not a column of the data"),
        ("region", TypeError, r"folds \(fold ids\) must hold integers"),
        ("z", ValueError, "whole numbers"),
        (1, ValueError, "folds must be between 2 and the number of rows"),
        (True, TypeError, "folds must be an integer >= 2"),
        (np.arange(3), TypeError, "the name of a column of the data or a Dask Series"),
    ],
)  # fmt: skip
def test_bad_folds_are_refused_by_name(folds, error, match):
    df = _frame(400)
    lazy = glm(FORMULA, dd.from_pandas(df, npartitions=2), family="binomial", collect=False)
    with pytest.raises(error, match=match):
        lazy.fit_cv(folds=folds, n_lambdas=3)


def test_fold_series_of_other_partitions_and_groups_are_refused():
    df = _frame(400)
    ddf = dd.from_pandas(df, npartitions=2)
    lazy = glm(FORMULA, ddf, family="binomial", collect=False)
    other = dd.from_pandas(df["fold"], npartitions=3)
    with pytest.raises(ValueError, match="the fold ids have 3 partitions and the data 2"):
        lazy.fit_cv(folds=other, n_lambdas=3)
    with pytest.raises(ValueError, match="needs at least 2 distinct folds"):
        lazy.fit_cv(folds=ddf["fold"] * 0, n_lambdas=3)
    with pytest.raises(RowsOnWorkersError, match=r"fit_cv\(groups=...\)"):
        lazy.fit_cv(folds=3, groups="region")



def test_no_array_of_the_rows_reaches_the_client(client_gathers):
    distributed = pytest.importorskip("distributed")

    n = 20_000  # an array of the rows: ≥ n bytes (one code block, or int8 fold ids)
    df = _frame(n)
    ddf = dd.from_pandas(df, npartitions=8)

    sizes = client_gathers.arm()
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster, set_as_default=False) as client:  # fmt: skip
        model = glm(FORMULA, ddf, family="binomial", collect=False, client=client)
        before = len(sizes)
        cv = model.fit_cv(folds=5, n_lambdas=4, random_state=0)
        assert len(sizes) > before + 10  # the folds' and the solver's passes
        cv_given = model.fit_cv(folds="fold", n_lambdas=3)
        text = cv.best_.summary().as_text()
    assert cv.fold_scores.shape == (5, cv.lams.size) and np.isfinite(cv.fold_scores).all()
    assert cv_given.folds == 5 and "Binarsity GLM Results" in text
    assert max(sizes) < n, f"an object of {max(sizes)} bytes reached the client"
    cv.model.__dict__.pop("dask_client", None)
    assert client_gathers.size_of(cv) < n  # the results hold no array of the rows either
