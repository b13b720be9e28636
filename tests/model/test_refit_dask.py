"""model/_refit_dask.py: ``refit()`` of a model whose rows stay on the Dask workers.

The refit by distributed IRLS (a pass per Newton step, XᵀWX and XᵀWz of the selected
segments reduced per partition) is the estimator of the in-memory refit: on the same
rows and the same selection (the results of the gathered model, ``collect=True``, at
the same solution) its parameters, standard errors, deviance, log-likelihood, AIC,
scale, df, intervals and predictions equal those of the in-memory refit — statsmodels'
GLM below ``GRAM_MIN_CELLS``, the sufficient-statistics IRLS above — to 1e-9
relative. Both stop when a Newton step moves no row's η by more than 1e-10 (1 + max|η|):
a further step changes β by O(step²), far below 1e-9. The non-identified columns
are the in-memory ones. On a ``LocalCluster`` whose gathering functions raise, no
object of O(n) bytes reaches the client. What still needs the rows is refused by name.
"""

from __future__ import annotations


import numpy as np
import pandas as pd
import pytest

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")

from binarsity_stats import glm  # noqa: E402
from binarsity_stats.model import _refit_glm  # noqa: E402
from binarsity_stats.model._model_dask import RowsOnWorkersError  # noqa: E402
from binarsity_stats.model._results import BinarsityResults  # noqa: E402
from _dask_data import dask_test_frame  # noqa: E402

FORMULA = "y ~ bin(age, 8) + C(region) + z"
RTOL = 1e-9
STATISTICS = ("deviance", "llf", "aic", "bic", "scale", "df_resid", "df_model", "nobs",
              "pearson_chi2", "null_deviance")  # fmt: skip


@pytest.fixture(autouse=True)
def _sync_scheduler():
    with dask.config.set(scheduler="sync"):
        yield


def _frame(n=2000, seed=0, family="poisson"):
    return dask_test_frame(n, seed, family, zero_weights=True)


def _pair(df, family, weights=None, offset=None, kind="analytic", formula=FORMULA,
          parts=4, client=None):  # fmt: skip
    """The penalised fit of the rows kept on the workers, and the same solution's
    results on the gathered model."""
    ddf = dd.from_pandas(df, npartitions=parts)
    kw = dict(family=family, sample_weight=weights, offset=offset, weights_kind=kind)
    lazy = glm(formula, ddf, collect=False, client=client, **kw)
    gathered = glm(formula, ddf, collect=True, **kw)
    res = lazy.fit()  # lam="theory", the default
    return res, BinarsityResults(gathered, res.solution, res.lam_source), ddf


def _assert_same_refit(out, ref, rtol=RTOL):
    assert list(out.names) == list(ref.names)
    pd.testing.assert_series_equal(out.params, ref.params, rtol=rtol, check_names=False)
    pd.testing.assert_series_equal(out.bse, ref.bse, rtol=rtol, check_names=False)
    # the covariance (the identified block: a non-identified column's is arbitrary)
    keep = [name for name in out.names if name not in ref.non_identified]
    np.testing.assert_allclose(np.asarray(out.cov_params().loc[keep, keep]),
                               np.asarray(ref.cov_params().loc[keep, keep]), rtol=rtol,
                               atol=rtol * float(np.max(np.abs(ref.bse[keep]))) ** 2)  # fmt: skip
    for name in STATISTICS:
        np.testing.assert_allclose(float(getattr(out, name)), float(getattr(ref, name)),
                                   rtol=rtol, err_msg=name)  # fmt: skip
    np.testing.assert_allclose(np.asarray(out.conf_int(0.1)), np.asarray(ref.conf_int(0.1)),
                               rtol=rtol)  # fmt: skip
    # p-values: a tail probability of a statistic equal to 1e-9 relative
    np.testing.assert_allclose(out.pvalues, ref.pvalues, rtol=1e-6, atol=1e-12)
    assert out.non_identified == ref.non_identified
    pd.testing.assert_frame_equal(out.tidy(), ref.tidy(), rtol=1e-6, atol=1e-12)


@pytest.mark.parametrize(
    ("family", "weights", "offset", "kind"),
    [
        ("poisson", None, None, "analytic"),
        ("poisson", "w", "logt", "analytic"),
        ("binomial", None, None, "analytic"),
        ("binomial", "w", "logt", "freq"),
        ("gaussian", None, None, "analytic"),
        ("gaussian", "w", "logt", "analytic"),
        ("gaussian", "w", None, "freq"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("gram", [False, True], ids=["statsmodels", "gram"])
def test_the_refit_on_the_workers_is_the_in_memory_refit(family, weights, offset, kind, gram,
                                                          monkeypatch):  # fmt: skip
    df = _frame(family=family)
    if gram:  # the in-memory refit from sufficient statistics (its path above 4e6 cells)
        monkeypatch.setattr(_refit_glm, "GRAM_MIN_CELLS", 1)
    res, ref_res, ddf = _pair(df, family, weights, offset, kind)
    assert res.n_jumps > 0
    out, ref = res.refit(), ref_res.refit()
    assert type(out.sm_results).__name__ == "WorkerGLMRefit"
    _assert_same_refit(out, ref)
    # llnull: the null model's log-likelihood, read by the summary's pseudo R²
    np.testing.assert_allclose(out.sm_results.llnull, ref.sm_results.llnull, rtol=RTOL)
    # predictions with their intervals on new rows, from the covariance
    new = df.iloc[:60]
    pd.testing.assert_frame_equal(out.get_prediction(new).summary_frame(0.1),
                                  ref.get_prediction(new).summary_frame(0.1),
                                  rtol=RTOL)  # fmt: skip
    pd.testing.assert_frame_equal(out.predict(new, se_fit=True), ref.predict(new, se_fit=True),
                                  rtol=RTOL)  # fmt: skip
    # on a Dask DataFrame: lazy, one task per partition
    frame = out.get_prediction(ddf, type="link").summary_frame(alpha=0.1)
    assert isinstance(frame, dd.DataFrame)
    pd.testing.assert_frame_equal(frame.compute(),
                                  ref.get_prediction(df, type="link").summary_frame(0.1),
                                  rtol=RTOL)  # fmt: skip
    lazy_mean = out.predict(ddf)
    assert isinstance(lazy_mean, dd.Series)
    np.testing.assert_allclose(lazy_mean.compute().to_numpy(), ref.predict(df), rtol=RTOL)
    # the summary: the same header numbers and table (iterations and time aside)
    text = out.summary().as_text()
    assert "Unpenalised refit on the binarsity selection" in text
    assert f"{out.deviance:#8.5g}".strip() in text


def test_without_an_intercept_the_first_term_is_fully_coded_as_in_memory():
    df = _frame(family="poisson")
    res, ref_res, _ = _pair(df, "poisson", "w", "logt", formula=FORMULA + " - 1")
    out, ref = res.refit(), ref_res.refit()
    assert "Intercept" not in out.names
    _assert_same_refit(out, ref)


@pytest.mark.filterwarnings("ignore::statsmodels.tools.sm_exceptions.SingularMatrixWarning")
def test_the_non_identified_columns_are_the_in_memory_ones():
    df = _frame(family="poisson")
    df["z2"] = 2.0 * df.z  # a dense column collinear with z
    res, ref_res, _ = _pair(df, "poisson", formula=FORMULA + " + z2")
    with pytest.warns(UserWarning, match="not identified"):
        out = res.refit()
    with pytest.warns(UserWarning, match="not identified"):
        ref = ref_res.refit()
    assert out.non_identified == ref.non_identified == ["z", "z2"]
    assert out.bse[["z", "z2"]].isna().all()
    keep = [name for name in out.names if name not in out.non_identified]
    pd.testing.assert_series_equal(out.params[keep], ref.params[keep], rtol=RTOL)
    pd.testing.assert_series_equal(out.bse[keep], ref.bse[keep], rtol=RTOL)
    # the identified combination z + 2 z2 is estimated alike
    np.testing.assert_allclose(out.params["z"] + 2 * out.params["z2"],
                               ref.params["z"] + 2 * ref.params["z2"], rtol=RTOL)  # fmt: skip
    np.testing.assert_allclose(out.deviance, ref.deviance, rtol=RTOL)



def test_no_row_reaches_the_client_on_a_cluster(client_gathers):
    distributed = pytest.importorskip("distributed")

    n = 40_000  # an array of the rows: ≥ n bytes (one code block) or 8 n (floats)
    df = _frame(n, family="binomial")
    ref_res = None
    with dask.config.set(scheduler="sync"):
        _, ref_res, _ = _pair(df, "binomial", "w", None, "freq", parts=8)
        ref = ref_res.refit()

    sizes = client_gathers.arm()
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster, set_as_default=False) as client:  # fmt: skip
        ddf = dd.from_pandas(df, npartitions=8)
        lazy = glm(FORMULA, ddf, family="binomial", sample_weight="w", weights_kind="freq",
                   collect=False, client=client)  # fmt: skip
        res = BinarsityResults(lazy, ref_res.solution, ref_res.lam_source)
        start = len(sizes)
        out = res.refit()
        passes = len(sizes) - start
        text = out.summary().as_text()
        frame = out.get_prediction(ddf).summary_frame()  # lazy: nothing computed yet
    assert passes >= 3 and len(sizes) > passes
    assert max(sizes) < n, f"an object of {max(sizes)} bytes reached the client"
    assert "Unpenalised refit" in text and isinstance(frame, dd.DataFrame)
    _assert_same_refit(out, ref)


@pytest.mark.parametrize(
    ("call", "named"),
    [
        (lambda r: r.refit(split=0.5), r"refit\(split=...\)"),
        (lambda r: r.refit(cov_type="HC1"), r"refit\(cov_type='HC1'\)"),
        (lambda r: r.refit().fittedvalues, "the refit's fitted values and residuals"),
        (lambda r: r.refit().resid_deviance, "the refit's fitted values and residuals"),
        (lambda r: r.refit().sm_results.model.endog, "the refit's training rows"),
        (lambda r: r.refit().predict(), "training"),
    ],
)  # fmt: skip
def test_what_needs_the_rows_is_refused_by_name(call, named):
    df = _frame(400)
    lazy = glm(FORMULA, dd.from_pandas(df, npartitions=2), family="poisson", collect=False)
    res = lazy.fit(0.01)
    with pytest.raises(RowsOnWorkersError, match=named) as info:
        call(res)
    assert "collect=True" in str(info.value)
