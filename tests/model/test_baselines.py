"""model/_baselines.py: one view (``FitView``) of a binarsity fit or a baseline model.

Proved here: every kind of fit is recognised by its class (binarsity results, a CV's
best fit, a refit; statsmodels' GLM and PHReg; lifelines' CoxPHFitter) and its
``predict_link`` gives that model's own linear predictor of new rows; what cannot be
read by column name (a model fitted on arrays, an unfitted lifelines model, an offset
for lifelines, anything else) is refused naming the caller.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from binarsity_stats.model._baselines import (
    describe_fit,
    is_lifelines_cox,
    is_statsmodels_glm,
    is_statsmodels_phreg,
)
from binarsity_stats.model._model import glm


@pytest.fixture(scope="module")
def df():
    rng = np.random.default_rng(0)
    n = 200
    out = pd.DataFrame({"x": rng.normal(size=n), "z": rng.normal(size=n)})
    out["y"] = ((out.x > 0) + 0.5 * out.z + rng.normal(size=n) > 0.5).astype(float)
    out["time"] = rng.exponential(np.exp(-0.5 * out.x))
    out["status"] = (rng.random(n) < 0.8).astype(int)
    return out


def test_binarsity_fits(df):
    res = glm("y ~ bin(x, 5) + z", df, family="binomial").fit(lam=0.01)
    view = describe_fit(res, "heldout")
    assert view.kind == "penalized" and view.family is res.model.family
    assert view.formula == res.model.formula and not view.strata
    new = df.head(7)
    np.testing.assert_array_equal(view.predict_link(new, None), res.predict(new, type="link"))
    np.testing.assert_allclose(view.predict_link(new, np.ones(7)),
                               res.predict(new, type="link") + 1, rtol=1e-14)  # fmt: skip
    refit = res.refit()
    rview = describe_fit(refit, "compare")
    assert rview.kind == "refit"
    np.testing.assert_array_equal(rview.predict_link(new, None), refit.predict(new, type="link"))
    cv = glm("y ~ bin(x, 5) + z", df, family="binomial").fit_cv(folds=3, random_state=0,
                                                                  n_lambdas=5)  # fmt: skip
    cview = describe_fit(cv, "heldout")
    np.testing.assert_array_equal(cview.predict_link(new, None),
                                  cv.best_.predict(new, type="link"))  # fmt: skip


def test_statsmodels_glm(df):
    sm = pytest.importorskip("statsmodels.api")
    smf = pytest.importorskip("statsmodels.formula.api")
    fit = smf.glm("y ~ x + z", df, family=sm.families.Binomial()).fit()
    assert is_statsmodels_glm(fit) and not is_statsmodels_phreg(fit)
    view = describe_fit(fit, "heldout")
    assert view.kind == "statsmodels GLM" and view.response_column == "y"
    new = df.head(5)
    want = fit.params["Intercept"] + fit.params["x"] * new.x + fit.params["z"] * new.z
    np.testing.assert_allclose(view.predict_link(new, None), want, rtol=1e-12)
    arrays = sm.GLM(df["y"].to_numpy(), sm.add_constant(df[["x", "z"]].to_numpy()),
                    family=sm.families.Binomial()).fit()  # fmt: skip
    with pytest.raises(TypeError, match="heldout: the statsmodels GLM was fitted on arrays"):
        describe_fit(arrays, "heldout").predict_link(new, None)


def test_statsmodels_phreg(df):
    smf = pytest.importorskip("statsmodels.formula.api")
    fit = smf.phreg("time ~ x + z", df, status=df["status"].to_numpy()).fit()
    assert is_statsmodels_phreg(fit) and not is_statsmodels_glm(fit)
    view = describe_fit(fit, "compare")
    assert view.family == ("cox", "breslow") and not view.strata
    new = df.head(5)
    want = fit.params[0] * new.x + fit.params[1] * new.z
    lp = view.predict_link(new, None)
    # PHReg's linear predictor is centred: differences between rows are the model's
    np.testing.assert_allclose(lp - lp[0], want - want.iloc[0], rtol=1e-10, atol=1e-12)


def test_lifelines_cox(df):
    lifelines = pytest.importorskip("lifelines")
    cph = lifelines.CoxPHFitter()
    with pytest.raises(ValueError, match="compare: the lifelines CoxPHFitter is not fitted"):
        describe_fit(cph, "compare")
    cph.fit(df[["time", "status", "x", "z"]], duration_col="time", event_col="status")
    assert is_lifelines_cox(cph)
    view = describe_fit(cph, "compare")
    assert view.survival_columns == ("time", "status") and view.family == ("cox", "efron")
    new = df.head(5)
    lp = view.predict_link(new, None)
    want = cph.params_["x"] * new.x + cph.params_["z"] * new.z
    np.testing.assert_allclose(lp - lp[0], want - want.iloc[0], rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="compare: lifelines' CoxPHFitter takes no offset"):
        view.predict_link(new, np.zeros(5))


def test_anything_else_is_refused_by_name():
    with pytest.raises(TypeError, match="anova: expected a binarsity fit .* got a dict"):
        describe_fit({}, "anova")
    assert not is_statsmodels_glm(object()) and not is_lifelines_cox(object())
