"""``- 1`` in a formula has R's meaning: the first bin()/C() term carries full coding.

Before this was fixed every block kept its weighted sum-to-zero constraint, so the
average row was forced to η = 0: ``I(affairs > 0) ~ C(religious) - 1`` on statsmodels'
``fair`` data had deviance 8725 instead of R's and statsmodels' 7886.16. What is proved:
the deviance and the parameters equal statsmodels' on the same model (C() only, with
bin() terms coded as the fit's own bins at λ = 0, with weights and an offset); at λ > 0
the fit is the intercept model's optimum with the intercept moved into the first block
(the total-variation penalty is shift-invariant); predict, refit, summary and the CLI
help say the same thing; with no block at all the model has no intercept at all.
"""

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
import statsmodels.formula.api as smf
from numpy.testing import assert_allclose

from binarsity_stats import glm


@pytest.fixture(scope="module")
def fair():
    df = sm.datasets.fair.load_pandas().data.copy()
    df["y"] = (df["affairs"] > 0).astype(float)
    return df


def test_categorical_without_intercept_matches_statsmodels(fair):
    formula = "I(affairs > 0) ~ C(religious) - 1"
    # statsmodels reads a boolean formula response as two columns: give it y = 1.0 * event
    ref = smf.glm("y ~ C(religious) - 1", fair, family=sm.families.Binomial()).fit()
    assert_allclose(ref.deviance, 7886.164083, rtol=1e-8)  # statsmodels' (and R's) number
    res = glm(formula, fair, family="binomial").fit()  # defaults: C() is unpenalised
    assert_allclose(res.deviance, ref.deviance, rtol=1e-7)
    assert "Intercept" not in res.params.index
    # full coding: each level is the log-odds of its group, as statsmodels reports
    assert_allclose(res.params.to_numpy(), ref.params.to_numpy(), rtol=1e-5, atol=1e-7)
    assert list(res.params.index) == list(ref.params.index)
    assert_allclose(
        res.params.to_numpy(), [-0.4070978, -0.5698545, -0.8861377, -1.5068746], rtol=1e-5
    )
    # the levels are not constrained to a weighted sum of zero any more
    counts = res.model.bin_counts
    assert abs(np.sum(counts * res.coef)) > 1.0
    # df: one parameter per level, like the unpenalised GLM
    assert res.df == ref.df_model + 1
    # null deviance as in R: the offset alone (eta = 0 here, mu = 1/2)
    assert_allclose(res.null_deviance, 2 * len(fair) * np.log(2), rtol=1e-12)


def test_refit_and_predict_agree(fair):
    formula = "y ~ C(religious) + C(children > 0) - 1"
    res = glm(formula, fair, family="binomial").fit()
    ref = smf.glm(formula, fair, family=sm.families.Binomial()).fit()
    assert_allclose(res.deviance, ref.deviance, rtol=1e-7)
    refit = res.refit()
    assert_allclose(refit.deviance, ref.deviance, rtol=1e-7)
    assert "Intercept" not in refit.params.index
    assert_allclose(refit.predict(fair.iloc[::50]), ref.predict(fair.iloc[::50]), rtol=1e-6)
    assert_allclose(res.predict(fair), ref.predict(fair), rtol=1e-6)
    assert_allclose(res.predict(fair), res.fittedvalues, rtol=1e-12)


def _binned_reference(res, fair, formula_rhs, **kwargs):
    """statsmodels GLM on the fit's own bins (C() of the codes), no intercept."""
    frame = fair.copy()
    for j, codes in enumerate(res.model.design.codes):
        frame[f"code{j}"] = codes
    return smf.glm(f"y ~ {formula_rhs} - 1", frame, **kwargs).fit()


@pytest.mark.parametrize("weighted", [False, True])
def test_binned_terms_weights_and_offset_at_lambda_zero(fair, weighted):
    rng = np.random.default_rng(0)
    sw = rng.uniform(0.2, 3.0, len(fair)) if weighted else None
    off = 0.05 * (fair["educ"].to_numpy() - 14)
    formula = "y ~ bin(age, 4) + bin(yrs_married, 5) + C(religious) - 1"
    res = glm(formula, fair, family="binomial", sample_weight=sw, offset=off).fit(
        lam=0.0, tol=1e-10
    )
    kwargs = {"family": sm.families.Binomial(), "offset": off}
    if weighted:
        kwargs["var_weights"] = sw
    ref = _binned_reference(res, fair, "C(code0) + C(code1) + C(code2)", **kwargs)
    assert_allclose(res.deviance, ref.deviance, rtol=1e-7)
    assert_allclose(res.fittedvalues, np.asarray(ref.fittedvalues), rtol=1e-5, atol=1e-7)


def test_penalised_fit_is_the_intercept_model_reparametrised(fair):
    """At λ > 0: same objective, same η; the first block's levels are θ_1k + β0."""
    rhs = "bin(age, 6) + bin(yrs_married, 8) + C(religious)"
    with_b0 = glm(f"y ~ {rhs}", fair, family="binomial").fit(lam=2e-3, tol=1e-10)
    without = glm(f"y ~ {rhs} - 1", fair, family="binomial").fit(lam=2e-3, tol=1e-10)
    assert_allclose(without.objective, with_b0.objective, rtol=1e-10)
    assert_allclose(without.deviance, with_b0.deviance, rtol=1e-8)
    assert_allclose(without.linear_predictor, with_b0.linear_predictor, atol=1e-7)
    bp = with_b0.model.block_ptr
    assert_allclose(without.coef[: bp[1]], with_b0.coef[: bp[1]] + with_b0.intercept, atol=1e-7)
    assert_allclose(without.coef[bp[1] :], with_b0.coef[bp[1] :], atol=1e-7)
    assert without.intercept == 0.0
    assert without.df == with_b0.df
    assert without.n_jumps == with_b0.n_jumps
    # the path plots and tables report the same parametrisation as params
    path = glm(f"y ~ {rhs} - 1", fair, family="binomial").fit_path(n_lambdas=3)
    assert_allclose(path.coefs.iloc[-1].to_numpy(), path[len(path) - 1].params.to_numpy())


def test_summary_explains_the_coding(fair):
    res = glm("y ~ C(religious) + bin(age, 4) - 1", fair, family="binomial").fit()
    text = res.summary().as_text()
    assert "No intercept" in text and "C(religious)" in text and "full coding" in text
    assert "Intercept " not in text.split("Notes:")[0]


def test_no_block_is_a_true_no_intercept_model():
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"x": rng.normal(size=200), "z": rng.normal(size=200)})
    df["y"] = 2.0 + df["x"] + rng.normal(size=200)
    res = glm("y ~ x + z - 1", df).fit()
    ref = smf.ols("y ~ x + z - 1", df).fit()
    assert_allclose(res.params.to_numpy(), ref.params.to_numpy(), rtol=1e-6)
    assert_allclose(res.deviance, ref.ssr, rtol=1e-8)
    assert res.df == 2


def test_cli_help_describes_minus_one():
    from binarsity_stats._cli_parser import _FIT_EPILOG

    assert "first bin() or C() term" in _FIT_EPILOG


@pytest.mark.parametrize("family", ["poisson", "gaussian"])
def test_other_families_with_weights_and_exposure(family):
    """Poisson counts with log-exposure and weights, gaussian with weights: statsmodels."""
    rng = np.random.default_rng(7)
    n = 400
    df = pd.DataFrame({"g": rng.choice(["a", "b", "c"], n), "h": rng.choice(["u", "v"], n),
                       "expo": rng.uniform(0.5, 3.0, n), "w": rng.uniform(0.3, 2.0, n)})  # fmt: skip
    eta = 0.4 * (df["g"] == "b") - 0.3 * (df["h"] == "v") + np.log(df["expo"])
    df["y"] = rng.poisson(np.exp(eta)) if family == "poisson" else eta + rng.normal(size=n)
    off = np.log(df["expo"]) if family == "poisson" else None
    res = glm("y ~ C(g) + C(h) - 1", df, family=family, sample_weight="w", offset=off).fit()
    fam = sm.families.Poisson() if family == "poisson" else sm.families.Gaussian()
    ref = smf.glm("y ~ C(g) + C(h) - 1", df, family=fam, var_weights=df["w"], offset=off).fit()
    assert_allclose(res.deviance, ref.deviance, rtol=1e-7)
    # statsmodels codes C(h) against its first level; here C(h) keeps its constraint:
    # the same model, g'_k = g_k + h_u and h'_v = h_v - h_u
    p, q = res.params, ref.params
    g = [f"C(g)[{k}]" for k in "abc"]
    assert_allclose(p[g].to_numpy() + p["C(h)[u]"], q[g].to_numpy(), rtol=1e-5, atol=1e-6)
    assert_allclose(p["C(h)[v]"] - p["C(h)[u]"], q["C(h)[T.v]"], rtol=1e-5, atol=1e-6)
    new = df.iloc[:25]
    kw = {"offset": np.log(new["expo"])} if family == "poisson" else {}
    assert_allclose(res.predict(new, **kw), ref.predict(new, **kw), rtol=1e-6)
