"""Sandwich standard errors of the refit (issue 28, item 2): ``refit(cov_type=)``.
Mirrors ``binarsity_stats/model/_robust.py``; checked against statsmodels: GLM's
``cov_type="HC0"`` (poisson, analytic weights) and WLS's HC0, HC1 and HC3 (gaussian,
where the GLM sandwich is the regression one), on both refit paths.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats

import binarsity_stats as bstats


@pytest.fixture(scope="module")
def d():
    rng = np.random.default_rng(0)
    n = 700
    f = pd.DataFrame({"x": rng.uniform(size=n), "w": rng.uniform(0.5, 2, n)})
    f["y"] = rng.negative_binomial(2, 2 / (2 + np.exp(1 + (f.x > 0.5))))
    f["g"] = np.log1p(f.y) + rng.normal(scale=0.2 + f.x, size=n)  # heteroskedastic
    return f


@pytest.fixture(params=[False, True], ids=["statsmodels", "statistics"])
def path(request, monkeypatch):
    if request.param:
        from binarsity_stats.model import _refit_glm

        monkeypatch.setattr(_refit_glm, "GRAM_MIN_CELLS", 1)
    return request.param


def test_poisson_hc0_is_statsmodels(d, path):
    res = bstats.glm("y ~ bin(x, 8)", d, family="poisson", sample_weight="w").fit(lam=1e-3)
    X, _ = res.selected_design()
    ref = sm.GLM(d.y, X, family=sm.families.Poisson(), var_weights=d.w).fit(cov_type="HC0")
    refit = res.refit(cov_type="HC0")
    np.testing.assert_allclose(refit.sm_results.bse, ref.bse, rtol=1e-8)
    # inference with normal quantiles, from the sandwich
    z = np.asarray(refit.sm_results.params) / np.asarray(refit.sm_results.bse)
    np.testing.assert_allclose(refit.sm_results.pvalues, 2 * stats.norm.sf(np.abs(z)), rtol=1e-8)
    plain = res.refit()
    assert not np.allclose(plain.sm_results.bse, refit.sm_results.bse, rtol=1e-3)


@pytest.mark.parametrize("cov_type", ["HC0", "HC1", "HC3"])
def test_gaussian_sandwiches_are_the_regression_ones(d, path, cov_type):
    res = bstats.glm("g ~ bin(x, 8)", d, sample_weight="w").fit(lam=1e-3)
    X, _ = res.selected_design()
    ref = sm.WLS(d.g, X, weights=d.w).fit(cov_type=cov_type)
    refit = res.refit(cov_type=cov_type)
    np.testing.assert_allclose(refit.sm_results.bse, ref.bse, rtol=1e-8)
    ci = np.asarray(refit.conf_int())
    np.testing.assert_allclose(ci, np.asarray(ref.conf_int()), rtol=1e-7, atol=1e-12)


def test_bad_cov_types_are_refused(d):
    res = bstats.glm("y ~ bin(x, 8)", d, family="poisson").fit(lam=1e-3)
    with pytest.raises(ValueError, match="cov_type must be one of"):
        res.refit(cov_type="HC2")
    cox = bstats.glm("Surv(w, y) ~ bin(x, 5)", d.assign(y=(d.y > 0).astype(int)),
                     family="cox").fit(lam=1e-3)  # fmt: skip
    with pytest.raises(ValueError, match="not Cox"):
        cox.refit(cov_type="HC0")
