"""The statistics of a Dask model whose rows stay on the workers (``distributed/_dask_stats``,
``glm(..., collect=False)``, issue 26).

Its results' statistics come from per-partition reductions
(``distributed/_dask_stats.py``): they are checked against the in-memory statistics of
the same coefficients on the same rows (``BinarsityResults`` of the model gathered with
``collect=True``) to 1e-10 relative — sums over partitions differ from one sum over
the rows by rounding only. One test on a ``LocalCluster`` shows that no O(n) object
reaches the client (the gather is wrapped and every result's pickled size recorded,
and the code that gathers the partitions is made to raise); one runs the workers as
processes. What is not computed from reductions yet is refused by name.
"""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")

from binarsity_stats import glm  # noqa: E402
from binarsity_stats.model import _model_dask  # noqa: E402
from binarsity_stats.model._model_dask import RowsOnWorkersError  # noqa: E402
from binarsity_stats.model._results import BinarsityResults  # noqa: E402
from _dask_data import dask_test_frame  # noqa: E402

FORMULA = "y ~ bin(age, 8) + C(region) + z"
STATISTICS = ("deviance", "null_deviance", "pearson_chi2", "llf", "aic", "bic",
              "dispersion", "df_resid")  # fmt: skip
RTOL = 1e-10


@pytest.fixture(autouse=True)
def _sync_scheduler():
    with dask.config.set(scheduler="sync"):
        yield


def _frame(n=2000, seed=0, family="poisson"):
    return dask_test_frame(n, seed, family, zero_weights=False)


def _models(df, family, weights=None, offset=None, kind="analytic", parts=4, formula=FORMULA):
    ddf = dd.from_pandas(df, npartitions=parts)
    kw = dict(family=family, sample_weight=weights, offset=offset, weights_kind=kind)
    lazy = glm(formula, ddf, collect=False, **kw)
    gathered = glm(formula, ddf, collect=True, **kw)
    return lazy, gathered, ddf


def _assert_same_results(res, ref):
    for name in STATISTICS:
        np.testing.assert_allclose(getattr(res, name), getattr(ref, name), rtol=RTOL,
                                   err_msg=name)  # fmt: skip
    assert res.df == ref.df and res.nobs == ref.nobs and res.n_jumps == ref.n_jumps
    pd.testing.assert_series_equal(res.term_importance(), ref.term_importance(), rtol=RTOL)
    pd.testing.assert_frame_equal(res.cut_points(), ref.cut_points(), rtol=RTOL)
    pd.testing.assert_frame_equal(res.term_table(), ref.term_table(), rtol=RTOL)
    pd.testing.assert_frame_equal(res.glance(), ref.glance(), rtol=RTOL)
    pd.testing.assert_frame_equal(res.tidy(), ref.tidy(), rtol=RTOL)


@pytest.mark.parametrize(
    ("family", "weights", "offset", "kind"),
    [
        ("poisson", None, None, "analytic"),
        ("poisson", "w", "logt", "analytic"),  # the null fit's Fisher scoring, with offset
        ("binomial", None, None, "analytic"),
        ("binomial", "w", "logt", "freq"),
        ("gaussian", None, None, "analytic"),
        ("gaussian", "w", None, "analytic"),
        ("gaussian", "w", "logt", "freq"),
    ],
)  # fmt: skip
def test_statistics_equal_the_in_memory_ones(family, weights, offset, kind):
    df = _frame(family=family)
    lazy, gathered, _ = _models(df, family, weights, offset, kind)
    assert lazy.rows_on_workers and not gathered.rows_on_workers
    ref_model = glm(FORMULA, df, family=family, sample_weight=weights, offset=offset,
                    weights_kind=kind)  # fmt: skip
    # the level counts and the penalty weights from the reductions
    np.testing.assert_allclose(lazy.bin_counts, ref_model.bin_counts, rtol=RTOL)
    np.testing.assert_allclose(lazy.penalty_weights, ref_model.penalty_weights, rtol=RTOL)
    assert lazy.nobs == ref_model.nobs and lazy.wnobs == pytest.approx(ref_model.wnobs, RTOL)
    assert lazy.n_effective == pytest.approx(ref_model.n_effective, rel=RTOL)
    # lam="theory"'s scalar: U_n (poisson: the null fit's largest mean) and φ̂₀ reduced
    assert lazy.lambda_theory() == pytest.approx(ref_model.lambda_theory(), rel=RTOL)
    lam = 0.05 * ref_model.lambda_max()
    res = lazy.fit(lam)  # the Dask solver: the default of a model on the workers
    assert "dask" in res.lam_source and res.n_jumps > 0
    # the in-memory statistics of the same coefficients on the same rows
    ref = BinarsityResults(gathered, res.solution, res.lam_source)
    _assert_same_results(res, ref)
    # the summary reads the same numbers (shown to 4-6 digits: the same text)
    assert res.summary().as_text() == ref.summary().as_text()


@pytest.mark.parametrize(
    ("family", "offset", "formula"),
    [
        ("gaussian", None, FORMULA),  # φ estimated: the second fit at λ(φ̂)
        ("gaussian", "logt", FORMULA + " - 1"),  # the first block absorbs the intercept
        ("poisson", "logt", FORMULA + " - 1"),  # U_n at the engine's null fit
    ],
)  # fmt: skip
def test_the_theory_lambda_is_the_in_memory_one(family, offset, formula):
    df = _frame(family=family)
    lazy, gathered, _ = _models(df, family, "w", offset, formula=formula)
    assert lazy.lambda_theory() == pytest.approx(gathered.lambda_theory(), rel=RTOL)
    res = lazy.fit()  # lam="theory", the default
    ref = gathered.fit(solver="dask")  # the in-memory λ and φ̂ steps, the same solver
    assert res.lam_source == ref.lam_source
    assert res.lam == pytest.approx(ref.lam, rel=1e-9)
    _assert_same_results(res, BinarsityResults(gathered, res.solution, res.lam_source))


def test_fit_path_and_prediction_on_the_workers():
    df = _frame(family="binomial")
    lazy, gathered, ddf = _models(df, "binomial")
    path = lazy.fit_path(n_lambdas=4)
    res = path[2]
    _assert_same_results(res, BinarsityResults(gathered, res.solution, res.lam_source))
    # the null fit to its Newton tolerance, as test_dask_solve.py checks it
    np.testing.assert_allclose(lazy.lambda_max(), gathered.lambda_max(), rtol=1e-8)
    pred = res.predict(ddf)  # a lazy Dask Series, one task per partition
    ref = BinarsityResults(gathered, res.solution)
    np.testing.assert_array_equal(pred.compute().to_numpy(), ref.predict(df))
    np.testing.assert_array_equal(res.predict(df), ref.predict(df))
    assert res.to_spec() == ref.to_spec() and res.to_sql() == ref.to_sql()
    # a pickled fit keeps its statistics and its refusals (no rows travel with it)
    saved = pickle.loads(pickle.dumps(res))
    assert saved.deviance == res.deviance
    with pytest.raises(RowsOnWorkersError, match=r"refit\(\) is not available: .*a saved model"):
        saved.refit()
    # what was not computed before saving cannot be: the rows stayed with the cluster
    fresh = pickle.loads(pickle.dumps(path[1]))
    with pytest.raises(RowsOnWorkersError, match="a saved model does not carry them"):
        _ = fresh.deviance
    with pytest.raises(RowsOnWorkersError, match="a saved model does not carry them"):
        fresh.model.fit(0.01)


@pytest.mark.parametrize(
    ("call", "named"),
    [
        (lambda m, r: m.fit_cv(groups="region"), r"fit_cv\(groups=...\)"),
        (lambda m, r: m.fit(0.01, solver="fista"), "solver='fista'"),
        (lambda m, r: r.bootstrap(n_boot=2), r"bootstrap\(\)"),
        (lambda m, r: r.relax(), r"relax\(\)"),
        (lambda m, r: r.adaptive(), r"adaptive\(\)"),
        (lambda m, r: r.report(), r"report\(\)"),
        (lambda m, r: r.augment(), r"augment\(\)"),
        (lambda m, r: r.fittedvalues, "linear predictor, fitted values and residuals"),
        (lambda m, r: r.resid_pearson, "linear predictor, fitted values and residuals"),
        (lambda m, r: r.plot_shapes(), r"plot_shapes\(\)"),
        (lambda m, r: r.plot_calibration(), r"plot_calibration\(\)"),
        (lambda m, r: m.y, "model.y"),
        (lambda m, r: m.design.codes, "training codes"),
    ],
)  # fmt: skip
def test_what_needs_the_rows_is_refused_by_name(call, named):
    df = _frame(400)
    lazy = glm(FORMULA, dd.from_pandas(df, npartitions=2), family="poisson", collect=False)
    res = lazy.fit(0.01)
    with pytest.raises(RowsOnWorkersError, match=named) as info:
        call(lazy, res)
    assert "collect=True" in str(info.value)  # and says how to gather them


def test_collect_argument_and_the_automatic_threshold(monkeypatch):
    df = _frame(400)
    ddf = dd.from_pandas(df, npartitions=2)
    assert not glm(FORMULA, ddf, family="poisson").rows_on_workers  # below the threshold
    monkeypatch.setattr(_model_dask, "COLLECT_MAX_ROWS", 399)
    assert glm(FORMULA, ddf, family="poisson").rows_on_workers
    assert not glm(FORMULA, ddf, family="poisson", collect=True).rows_on_workers
    with pytest.raises(ValueError, match="collect must be True, False or 'auto'; got 'yes'"):
        glm(FORMULA, ddf, family="poisson", collect="yes")
    with pytest.raises(ValueError, match="family 'gamma'.*collect=True"):
        glm(FORMULA, ddf.assign(y=ddf.y + 1), family="gamma", collect=False)



def test_no_array_of_the_rows_reaches_the_client(client_gathers):
    distributed = pytest.importorskip("distributed")

    n = 40_000  # an array of the rows: ≥ n bytes (one code block) or 8 n (floats)
    df = _frame(n, family="binomial")
    ddf = dd.from_pandas(df, npartitions=8)

    sizes = client_gathers.arm()
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster, set_as_default=False) as client:  # fmt: skip
        model = glm(FORMULA, ddf, family="binomial", collect=False, client=client)
        res = model.fit()  # lam="theory": its null fit is reduced too
        text = res.summary().as_text()
        glance = res.glance()
    assert "Binarsity GLM Results" in text and glance["nobs"].iloc[0] == n
    assert len(sizes) > 10  # the construction's, the solver's and the statistics' passes
    assert max(sizes) < n, f"an object of {max(sizes)} bytes reached the client"
    # the model and its results hold no array of the rows either
    res.model.__dict__.pop("dask_client", None)
    assert client_gathers.size_of(res) < n


def test_statistics_with_worker_processes():
    distributed = pytest.importorskip("distributed")
    df = _frame(1500, family="poisson")
    ddf = dd.from_pandas(df, npartitions=3)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster, set_as_default=False) as client:  # fmt: skip
        lazy = glm(FORMULA, ddf, family="poisson", offset="logt", collect=False, client=client)
        res = lazy.fit(0.01)
        stats = {name: getattr(res, name) for name in STATISTICS}
        importance = res.term_importance()
    gathered = glm(FORMULA, ddf, family="poisson", offset="logt", collect=True)
    ref = BinarsityResults(gathered, res.solution)
    for name, value in stats.items():
        np.testing.assert_allclose(value, getattr(ref, name), rtol=RTOL, err_msg=name)
    pd.testing.assert_series_equal(importance, ref.term_importance(), rtol=RTOL)
