"""R's quasipoisson and quasibinomial (issue 28, item 2). Mirrors
``binarsity_stats/families/_quasi.py``: the fit of the Poisson (binomial) family, the
dispersion estimated by Pearson's χ²/df and used by the refit — checked against
statsmodels' ``GLM(...).fit(scale="X2")`` — and by ``anova``'s F test; no likelihood.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats

import binarsity_stats as bstats
from binarsity_stats.families._families import family_from_dict, get_family


@pytest.fixture(scope="module")
def counts():
    rng = np.random.default_rng(0)
    n = 600
    d = pd.DataFrame({"x": rng.uniform(size=n), "z": rng.normal(size=n),
                      "w": rng.uniform(0.5, 2, n)})  # fmt: skip
    mu = np.exp(1 + 0.8 * (d.x > 0.5) + 0.2 * d.z)
    d["y"] = rng.negative_binomial(2, 2 / (2 + mu))  # over-dispersed counts
    d["k"] = rng.integers(1, 6, n)
    d["s"] = rng.binomial(d.k, 1 / (1 + np.exp(-(d.x > 0.5) + 0.3)))
    d["p"] = d.s / d.k
    return d


def test_the_fit_is_the_poisson_fit_and_the_dispersion_is_pearsons(counts):
    q = bstats.glm("y ~ bin(x, 8) + z", counts, family="quasipoisson").fit(lam=1e-3)
    p = bstats.glm("y ~ bin(x, 8) + z", counts, family="poisson").fit(lam=1e-3)
    np.testing.assert_array_equal(q.params.to_numpy(), p.params.to_numpy())
    assert q.dispersion == pytest.approx(q.pearson_chi2 / q.df_resid, rel=1e-12)
    assert q.dispersion > 2  # the data are over-dispersed
    assert np.isnan(q.llf) and np.isnan(q.aic) and np.isnan(q.bic)
    text = str(q.summary())
    assert "QuasiPoisson" in text and "estimated (Pearson chi2 / df)" in text
    assert get_family("quasipoisson").estimate_dispersion
    assert family_from_dict(q.model.family.to_dict()) == q.model.family


@pytest.mark.parametrize("gram", [False, True])
def test_the_refit_is_statsmodels_quasi_likelihood(counts, gram, monkeypatch):
    if gram:  # the refit from sufficient statistics gives the same numbers
        from binarsity_stats.model import _refit_glm

        monkeypatch.setattr(_refit_glm, "GRAM_MIN_CELLS", 1)
    q = bstats.glm("y ~ bin(x, 8) + z", counts, family="quasipoisson",
                   sample_weight="w").fit(lam=1e-3)  # fmt: skip
    refit = q.refit()
    X, _ = q.selected_design()
    ref = sm.GLM(counts.y, X, family=sm.families.Poisson(), var_weights=counts.w).fit(
        scale="X2")
    np.testing.assert_allclose(refit.sm_results.params, ref.params, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(refit.sm_results.scale, ref.scale, rtol=1e-7)
    np.testing.assert_allclose(refit.sm_results.bse, ref.bse, rtol=1e-6)
    assert refit.sm_results.use_t  # t quantiles with the residual df, as R's quasi
    b = bstats.glm("p ~ bin(x, 8)", counts, family="quasibinomial",
                   sample_weight="k").fit(lam=1e-3)  # fmt: skip
    Xb, _ = b.selected_design()
    refb = sm.GLM(counts.p, Xb, family=sm.families.Binomial(), var_weights=counts.k).fit(
        scale="X2")
    np.testing.assert_allclose(b.refit().sm_results.bse, refb.bse, rtol=1e-6)


def test_anova_of_quasi_refits_is_the_f_test(counts):
    small = bstats.glm("y ~ z", counts, family="quasipoisson").fit(lam=1e-3).refit()
    large = bstats.glm("y ~ bin(x, 8) + z", counts, family="quasipoisson").fit(lam=1e-3).refit()
    table = bstats.anova(small, large)
    assert "F" in table.columns
    big = large.sm_results
    ddev = small.sm_results.deviance - big.deviance
    ddf = small.sm_results.df_resid - big.df_resid
    f = ddev / ddf / big.scale
    assert table["F"].iloc[1] == pytest.approx(f, rel=1e-8)
    assert table["Pr(>F)"].iloc[1] == pytest.approx(stats.f.sf(f, ddf, big.df_resid), rel=1e-6)


def test_the_theory_lambda_estimates_the_dispersion(counts):
    q = bstats.glm("y ~ bin(x, 8) + z", counts, family="quasipoisson").fit()
    assert "estimated" in q.lam_source
    p = bstats.glm("y ~ bin(x, 8) + z", counts, family="poisson").fit()
    assert q.lam > p.lam  # φ > 1 widens the theory λ
