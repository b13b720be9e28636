"""The conventions users bring from R and statsmodels (issue 13, "Formulas and data").

Each test compares with the tool it imitates: statsmodels' formula GLM (which drops
incomplete rows, reads ``C(x, Treatment(k))`` and two-column binomial responses) on the
same model, or with the explicit spelling of the same model here.
"""

import pickle

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
import statsmodels.formula.api as smf

from binarsity_stats import glm
from binarsity_stats.formula._rewrite import expand_dot


def _frame(n=300, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "x": rng.normal(size=n),
        "z": rng.uniform(0, 3, n),
        "g": rng.choice(["a", "b", "c"], n),
        "cell": rng.integers(0, 15, n),
        "w": rng.uniform(0.5, 2.0, n),
        "id": np.arange(n),
    })  # fmt: skip
    df["y"] = np.sin(2 * df.x) + 0.5 * df.z + (df.g == "b") - 0.7 * (df.g == "c")
    df["y"] += rng.normal(scale=0.5, size=n)
    return df


# --------------------------------------------------------------------------- reference level


@pytest.mark.parametrize(
    "term, ref",
    [("C(g, Treatment('b'))", "b"), ("C(g, Treatment(reference='c'))", "c"),
     ("C(g, contr.treatment('b'))", "b"), ("C(g, Treatment(1))", "b"), ("C(g)", "a")],
)  # fmt: skip
def test_treatment_reference_changes_the_table_never_the_fit(term, ref):
    df = _frame()
    base = glm("y ~ C(g) + bin(x, 10) + z", df).fit(lam=0.01)
    res = glm(f"y ~ {term} + bin(x, 10) + z", df).fit(lam=0.01)
    np.testing.assert_array_equal(res.coef, base.coef)  # identical θ
    assert res.intercept == base.intercept
    eff = res.categorical_effects()
    assert set(eff["reference"]) == {ref}
    assert ref not in set(eff["level"]) and len(eff) == 2
    assert "vs the reference level" in res.summary().as_text()


def test_treatment_reference_matches_statsmodels_treatment_contrasts():
    df = _frame()
    formula = "y ~ C(g, Treatment('b')) + z"
    res = glm(formula, df).fit(lam=0)
    ref = smf.glm(formula, df).fit()
    eff = res.categorical_effects().set_index("level")["effect"]
    for level in ("a", "c"):
        np.testing.assert_allclose(
            eff[level], ref.params[f"C(g, Treatment('b'))[T.{level}]"], rtol=1e-6
        )


def test_treatment_with_unknown_level_or_other_contrasts_is_refused():
    df = _frame()
    with pytest.raises(ValueError, match=r"'d' is not a level of column 'g'.*\['a', 'b', 'c'\]"):
        glm("y ~ C(g, Treatment('d'))", df)
    with pytest.raises(ValueError, match=r"only treatment coding is supported"):
        glm("y ~ C(g, Sum)", df)


# --------------------------------------------------------------------------- missing="drop"


def _with_holes(df):
    df = df.copy()
    df.loc[[3, 8, 40], "x"] = np.nan
    df.loc[[5], "g"] = None
    df.loc[[11], "y"] = np.nan
    df.loc[[17], "w"] = np.nan
    return df


def test_missing_drop_is_the_fit_on_the_complete_rows_with_weights_dropped_alike():
    df = _with_holes(_frame())
    res = glm("y ~ bin(x, 10) + C(g) + z", df, sample_weight="w", missing="drop").fit(lam=0.01)
    complete = df.dropna(subset=["x", "g", "y", "w"])
    ref = glm("y ~ bin(x, 10) + C(g) + z", complete, sample_weight="w").fit(lam=0.01)
    assert res.n_dropped == 6 and res.nobs == len(complete) == len(df) - 6
    np.testing.assert_allclose(res.coef, ref.coef, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(res.deviance, ref.deviance, rtol=1e-10)
    text = res.summary().as_text()
    assert "Rows dropped (missing):" in text and "6 row(s) with a missing value" in text
    # an array of weights of the data's length is cut to the rows kept as well
    arr = glm("y ~ bin(x, 10) + C(g) + z", df, sample_weight=df["w"].to_numpy(),
              missing="drop").fit(lam=0.01)  # fmt: skip
    np.testing.assert_allclose(arr.coef, ref.coef, rtol=1e-10, atol=1e-12)


def test_missing_drop_matches_statsmodels_formula_default_na_drop():
    df = _with_holes(_frame())
    res = glm("y ~ C(g) + z + x", df, missing="drop").fit(lam=0)
    ref = smf.glm("y ~ C(g) + z + x", df.drop(columns="w")).fit()  # statsmodels drops NaN rows
    assert res.nobs == ref.nobs
    eff = res.categorical_effects().set_index("level")["effect"]
    np.testing.assert_allclose(eff["b"], ref.params["C(g)[T.b]"], rtol=1e-6)
    np.testing.assert_allclose(res.deviance, ref.deviance, rtol=1e-8)


def test_predict_gives_nan_for_incomplete_rows_or_raises_on_request():
    df = _with_holes(_frame())
    res = glm("y ~ bin(x, 10) + C(g)", df, missing="drop").fit(lam=0.01)
    new = df.iloc[:12]
    pred = res.predict(new)
    assert pred.shape == (12,)
    assert np.isnan(pred[[3, 8, 5]]).all() and np.isfinite(np.delete(pred, [3, 5, 8])).all()
    complete = new.drop(index=[3, 5, 8])
    np.testing.assert_allclose(np.delete(pred, [3, 5, 8]), res.predict(complete))
    with pytest.raises(ValueError, match=r"column '[xg]' contains missing values.*missing='nan'"):
        res.predict(new, missing="error")
    refit = res.refit().predict(new)
    assert np.isnan(refit[[3, 5, 8]]).all() and np.isfinite(refit[[0, 1, 2]]).all()
    # without missing="drop" a NaN is an error, as before
    plain = glm("y ~ bin(x, 10) + C(g)", df.dropna()).fit(lam=0.01)
    with pytest.raises(ValueError, match=r"column '[xg]' contains missing values"):
        plain.predict(new)


def test_per_term_missing_policies():
    df = _with_holes(_frame()).drop(columns="w")
    # model default 'error', one term drops: only x's holes go
    m = glm("y ~ bin(x, 10, missing='drop') + z", df.dropna(subset=["y"]))
    assert m.n_dropped == 3
    # model default 'drop', one term keeps its NaN as a level of its own
    m = glm("y ~ bin(x, 10, missing='separate') + C(g)", df, missing="drop")
    assert m.n_dropped == 2 and m.spec.blocks[0].has_missing_level
    with pytest.raises(ValueError, match=r"column 'g' contains missing values.*missing='drop'"):
        glm("y ~ C(g)", df.dropna(subset=["y"]))


def test_missing_drop_with_cv_bootstrap_and_groups_of_the_full_length():
    df = _with_holes(_frame())
    m = glm("y ~ bin(x, 10) + z", df, missing="drop")
    kept = df.dropna(subset=["x", "y"])
    cv = m.fit_cv(folds=3, groups=df["cell"].to_numpy(), random_state=0, n_lambdas=8)
    cv2 = m.fit_cv(folds=3, groups=kept["cell"].to_numpy(), random_state=0, n_lambdas=8)
    cv3 = m.fit_cv(folds=3, groups="cell", random_state=0, n_lambdas=8)
    np.testing.assert_array_equal(cv.fold_ids, cv2.fold_ids)
    np.testing.assert_array_equal(cv.fold_ids, cv3.fold_ids)
    boot = cv.best_.bootstrap(n_boot=3, random_state=0, groups="cell")
    assert boot.grouped and boot.coef.shape[0] == 3


def test_missing_drop_cuts_an_offset_array_and_bootstrap_predicts_nan_rows():
    df = _with_holes(_frame())
    off = 0.1 * np.arange(len(df)) / len(df)
    res = glm("y ~ bin(x, 10) + C(g)", df, offset=off, missing="drop").fit(lam=0.01)
    complete = df.dropna(subset=["x", "g", "y"])
    ref = glm("y ~ bin(x, 10) + C(g)", complete, offset=off[complete.index]).fit(lam=0.01)
    np.testing.assert_allclose(res.coef, ref.coef, rtol=1e-10, atol=1e-12)
    boot = res.bootstrap(n_boot=3, random_state=0)
    pred = boot.predict(df.iloc[:10], offset=off[:10], method="percentile")
    assert pred.shape == (10, 3) and pred.loc[[3, 5, 8]].isna().all().all()
    assert pred.drop(index=[3, 5, 8]).notna().all().all()
    np.testing.assert_allclose(
        pred["mean"].drop(index=[3, 5, 8]),
        res.predict(df.iloc[:10], offset=off[:10])[[0, 1, 2, 4, 6, 7, 9]],
    )


def test_calibration_leaves_out_new_rows_predicted_nan():
    from binarsity_stats.report._curves import calibration_table

    df = _with_holes(_frame()).dropna(subset=["y"])
    res = glm("y ~ bin(x, 10) + C(g)", df, missing="drop").fit(lam=0.01)
    table = calibration_table(res, df, df["y"].to_numpy(), 5)
    assert table["count"].sum() == len(df) - 4 and np.isfinite(table["predicted"]).all()


def test_missing_drop_of_every_row_is_an_error_naming_the_columns():
    df = _frame().assign(x=np.nan)
    with pytest.raises(ValueError, match=r"every row has a missing value.*'x'"):
        glm("y ~ bin(x)", df, missing="drop")


# --------------------------------------------------------------------------- groups by name


def test_groups_as_a_column_name_equal_the_labels():
    df = _frame()
    m = glm("y ~ bin(x, 10) + z", df)
    a = m.fit_cv(folds=3, groups="cell", random_state=1, n_lambdas=6)
    b = m.fit_cv(folds=3, groups=df["cell"], random_state=1, n_lambdas=6)
    np.testing.assert_array_equal(a.fold_ids, b.fold_ids)
    with pytest.raises(ValueError, match=r"groups='cel' is not a column.*Did you mean 'cell'"):
        m.fit_cv(folds=3, groups="cel")
    saved = pickle.loads(pickle.dumps(m))
    assert "_data" not in saved.__dict__
    with pytest.raises(ValueError, match=r"saved \(pickled\) model does not keep"):
        saved.fit_cv(folds=3, groups="cell")


# --------------------------------------------------------------------------- binomial counts


def test_star98_cbind_fits_without_reshaping_and_refits_as_statsmodels():
    d = sm.datasets.star98.load_pandas().data
    res = glm("cbind(NABOVE, NBELOW) ~ bin(LOWINC, 10) + bin(PERASIAN, 10) + PERBLACK", d,
              family="binomial").fit()  # fmt: skip
    assert res.n_jumps > 0  # the theory λ counts trials, not rows
    refit = res.refit()
    X = refit.sm_results.model.exog
    ref = sm.GLM(d[["NABOVE", "NBELOW"]], X, family=sm.families.Binomial()).fit(tol=1e-12)
    np.testing.assert_allclose(refit.sm_results.params, ref.params, rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(refit.sm_results.bse, ref.bse, rtol=1e-6)
    np.testing.assert_allclose(refit.sm_results.deviance, ref.deviance, rtol=1e-8)
    text = res.summary().as_text()
    assert "successes" in text and "trials (cbind)" in text


def test_cbind_equals_a_proportion_with_trials_as_weights():
    d = sm.datasets.star98.load_pandas().data
    trials = d["NABOVE"] + d["NBELOW"]
    prop = d.assign(p=d["NABOVE"] / trials, n=trials)
    a = glm("cbind(NABOVE, NBELOW) ~ bin(LOWINC, 10)", d, family="binomial").fit()
    b = glm("p ~ bin(LOWINC, 10)", prop, family="binomial", sample_weight="n",
            weights_kind="freq").fit()  # fmt: skip
    np.testing.assert_allclose(a.lam, b.lam, rtol=1e-10)
    np.testing.assert_allclose(a.coef, b.coef, rtol=1e-7, atol=1e-9)
    with pytest.raises(ValueError, match=r"cbind\(successes, failures\) is a binomial response"):
        glm("cbind(NABOVE, NBELOW) ~ bin(LOWINC)", d, family="poisson")


def test_cbind_and_treatment_reproduce_r_on_the_budworm_data():
    """R, Venables & Ripley, *Modern Applied Statistics with S* (4th ed., 2002), §7.2:
    ``budworm.lg <- glm(SF ~ sex*ldose, family = binomial)`` with
    ``SF <- cbind(numdead, numalive = 20 - numdead)`` (sex F the reference) prints
    coefficients -2.9935, 0.1750, 0.9060, 0.3529 (standard errors 0.5527, 0.7783, 0.1671,
    0.2700) and a residual deviance of 4.994 on 8 degrees of freedom."""
    dead = np.array([1, 4, 9, 13, 18, 20, 0, 2, 6, 10, 12, 16])
    d = pd.DataFrame({"ldose": np.tile(np.arange(6.0), 2), "numdead": dead,
                      "numalive": 20 - dead, "sex": np.repeat(["M", "F"], 6)})  # fmt: skip
    res = glm("cbind(numdead, numalive) ~ C(sex, Treatment('F')) + ldose + ldose:sex", d,
              family="binomial").fit(lam=0, tol=1e-10)  # fmt: skip
    effect = res.categorical_effects()
    assert effect["reference"].tolist() == ["F"] and effect["level"].tolist() == ["M"]
    np.testing.assert_allclose(effect["effect"], [0.1750], atol=5e-5)
    np.testing.assert_allclose(res.params[["ldose", "ldose:sex[T.M]"]], [0.9060, 0.3529],
                               atol=5e-5)  # fmt: skip
    np.testing.assert_allclose([res.deviance, res.df_resid], [4.994, 8], atol=5e-4)
    refit = res.refit().sm_results
    np.testing.assert_allclose(refit.params, [-2.9935, 0.1750, 0.9060, 0.3529], atol=5e-5)
    np.testing.assert_allclose(refit.bse, [0.5527, 0.7783, 0.1671, 0.2700], atol=5e-5)


# --------------------------------------------------------------------------- y ~ .


def test_dot_expands_to_every_other_column():
    df = _frame().assign(flag=lambda f: f.x > 0)
    text = expand_dot("y ~ . - id - cell", df, exclude_columns=["w"])
    assert text == "y ~ (bin(x) + bin(z) + C(g) + C(flag)) - id - cell"
    a = glm("y ~ . - id - cell", df, sample_weight="w").fit(lam=0.02)
    b = glm("y ~ bin(x) + bin(z) + C(g) + C(flag)", df, sample_weight="w").fit(lam=0.02)
    np.testing.assert_array_equal(a.coef, b.coef)
    assert list(a.params.index) == list(b.params.index)
    # a column named elsewhere is not also binned
    assert expand_dot("y ~ . + C(cell)", df[["y", "x", "cell"]]) == "y ~ (bin(x)) + C(cell)"
    with pytest.raises(TypeError, match=r"'\.' reaches column 'day'.*'- day'"):
        glm("y ~ .", df.assign(day=pd.Timestamp("2024-01-01")))
    with pytest.raises(ValueError, match=r"'\.' \(every other column\) can only be added"):
        glm("y ~ .:x", df)


# --------------------------------------------------------------------------- spellings


def test_misspelled_column_gets_did_you_mean():
    df = _frame()
    with pytest.raises(ValueError, match=r"\['xx'\] that are not in the data\. Did you mean 'x'"):
        glm("y ~ bin(xx)", df)
    with pytest.raises(ValueError, match=r"sample_weight='W' is not a column.*Did you mean 'w'"):
        glm("y ~ bin(x)", df, sample_weight="W")
    res = glm("y ~ bin(x)", df).fit(lam=0.1)
    with pytest.raises(ValueError, match=r"\['x'\] required by the formula.*Did you mean 'X'"):
        res.predict(df.rename(columns={"x": "X"}))


@pytest.mark.parametrize(
    "given, expected",
    [("logistic", "binomial"), ("logit", "binomial"), ("Binomial", "binomial"),
     ("normal", "gaussian"), (sm.families.Binomial(), "binomial"),
     (sm.families.Poisson(), "poisson"), (sm.families.Gaussian(), "gaussian")],
)  # fmt: skip
def test_family_spellings_of_r_and_statsmodels_map_to_the_builtin_with_a_note(given, expected):
    df = _frame().assign(yb=lambda f: (f.y > 0.5).astype(float), yc=lambda f: np.round(f.z))
    response = {"binomial": "yb", "poisson": "yc", "gaussian": "y"}[expected]
    m = glm(f"{response} ~ bin(x, 10)", df, family=given)
    assert m.family.name == expected
    ref = glm(f"{response} ~ bin(x, 10)", df, family=expected)
    np.testing.assert_array_equal(m.fit(lam=0.01).coef, ref.fit(lam=0.01).coef)
    if not (isinstance(given, str) and given.lower() == expected):
        assert "read as" in m.fit(lam=0.01).summary().as_text()
    with pytest.raises(ValueError, match=r"Did you mean 'binomial'"):
        glm("yb ~ bin(x)", df, family="binomal")


def test_unfitted_model_says_call_fit_first():
    m = glm("y ~ bin(x)", _frame())
    for name in ("predict", "summary", "params", "cut_points"):
        with pytest.raises(AttributeError, match=r"has not been fitted; call \.fit\(\) first"):
            getattr(m, name)
    with pytest.raises(AttributeError, match=r"has no attribute 'nonsense'$"):
        m.nonsense  # noqa: B018
