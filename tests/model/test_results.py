"""Results: parameters, cut-points, shape functions, summary numbers, refit, prediction.

What is proved here: the summary's deviance, df, log-likelihood, AIC and BIC equal a
direct computation from the fitted means and the coefficients; the null deviance equals
statsmodels' intercept-only GLM with the same offset; with every jump kept (λ = 0) the
refit equals statsmodels on the same dummy design and reproduces the penalised MLE;
cut-points and shape functions describe the same step functions as ``params``.
"""

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from test_docstrings import package_members

from binarsity_stats._datasets import load_fair
from binarsity_stats.model._model import glm
from binarsity_stats.report._summary import _fmt


@pytest.fixture(scope="module")
def fair():
    df = load_fair()
    df["event"] = np.where(df["affairs"] > 0, "yes", "no")
    return df.iloc[::3].reset_index(drop=True)  # 2,122 rows keep the tests fast


FORMULA = "event ~ bin(rate_marriage) + bin(age) + bin(yrs_married) + C(occupation) + educ"


@pytest.fixture(scope="module")
def res(fair):
    return glm(FORMULA, fair, family="binomial").fit(lam=3e-3, tol=1e-9)


def test_summary_numbers_match_a_direct_computation(res, fair):
    y = (fair["event"] == "yes").to_numpy(float)
    mu = res.fittedvalues
    deviance = -2 * np.sum(y * np.log(mu) + (1 - y) * np.log(1 - mu))
    assert res.deviance == pytest.approx(deviance, rel=1e-12)
    assert res.llf == pytest.approx(-deviance / 2, rel=1e-12)  # 0/1 data: saturated llf = 0
    # df from the coefficients alone: jumps of the binned terms + intercept + C() + educ
    p = res.params
    jumps = 0
    for term in ("bin(rate_marriage)", "bin(age)", "bin(yrs_married)"):
        levels = p[[name.startswith(term + "[") for name in p.index]].to_numpy()
        jumps += int(np.sum(levels[1:] != levels[:-1]))
    df = jumps + 1 + (6 - 1) + 1
    assert res.df == df and res.n_jumps == jumps
    assert res.aic == pytest.approx(deviance + 2 * df, rel=1e-12)
    assert res.bic == pytest.approx(deviance + np.log(len(y)) * df, rel=1e-12)
    text = str(res.summary())
    for label in (
        "Dep. Variable:", "Event level:", "Model Family:", "Binomial", "Link Function:",
        "logit", "No. Observations:", "Lambda:", "Lambda chosen by:", "user",
        "Df (jumps+intercept+unpen.):", "Deviance:", "Null deviance:", "Log-Likelihood:",
        "AIC:", "BIC:", "Converged:", "Iterations:", "sum_k n_jk theta_jk = 0",
        "bin(rate_marriage)", "C(occupation)", "unpenalized", "educ",
    ):  # fmt: skip
        assert label in text, label
    header = res.summary().header
    assert header["No. Observations"] == str(len(fair))
    assert header["Deviance"] == _fmt(deviance)
    assert header["Df (jumps+intercept+unpen.)"] == str(df)
    assert header["AIC"] == _fmt(res.aic)
    assert header["Event level"] == "'yes' (vs 'no')"
    assert header["Lambda"] == _fmt(3e-3)


def test_null_deviance_matches_statsmodels_with_offset():
    rng = np.random.default_rng(0)
    n = 500
    df = pd.DataFrame({"x": rng.normal(size=n), "t": rng.uniform(0.5, 4.0, size=n)})
    df["y"] = rng.poisson(df["t"] * np.exp(0.3 * (df["x"] > 0)))
    res = glm("y ~ bin(x) + offset(log(t))", df, family="poisson").fit(lam=1e-3)
    null = sm.GLM(df["y"], np.ones((n, 1)), family=sm.families.Poisson(),
                  offset=np.log(df["t"])).fit()  # fmt: skip
    assert res.null_deviance == pytest.approx(null.deviance, rel=1e-9)


def test_params_cut_points_and_shape_functions_agree(res):
    p = res.params
    assert p.index[0] == "Intercept" and p.iloc[0] == res.intercept
    # right-closed labels (issue 10): the level (22, 27] held only age 27 in training
    assert "bin(age)[= 27]" in p.index and "bin(age)[= 17.5]" in p.index
    assert "C(occupation)[1.0]" in p.index and p.index[-1] == "educ"
    shapes = res.shape_functions()
    cuts = res.cut_points()
    assert list(cuts.columns) == ["term", "column", "cut", "left", "right", "jump"]
    for _, row in cuts.iterrows():
        s = shapes[shapes["term"] == row["term"]]
        left = s[s["high"] == row["cut"]]["level"].item()
        right = s[s["low"] == row["cut"]]["level"].item()
        assert row["jump"] == pytest.approx(right - left)
    age = shapes[shapes["term"] == "bin(age)"]
    assert age["count"].sum() == res.nobs
    assert np.isinf(age["low"].iloc[0]) and np.isinf(age["high"].iloc[-1])
    merged = res.shape_functions(merge=True)
    n_segments = merged.groupby("term").size()
    assert n_segments["bin(age)"] == 1 + np.sum(cuts["term"] == "bin(age)")
    assert merged[merged["term"] == "bin(age)"]["count"].sum() == res.nobs
    table = res.term_table()
    assert table.loc["bin(age)", "cuts_kept"] == np.sum(cuts["term"] == "bin(age)")
    assert table.loc["educ", "kind"] == "linear"


def test_refit_with_all_jumps_kept_matches_statsmodels_on_the_dummy_design(fair):
    formula = "event ~ bin(rate_marriage) + bin(religious) + C(occupation)"
    res = glm(formula, fair, family="binomial").fit(lam=0.0, tol=1e-10)
    m = res.model
    assert res.n_jumps == sum(b.n_levels - 1 for b in m.spec.blocks if b.penalized)
    refit = res.refit()
    # the same design built independently: dummies of the raw values, first level dropped
    X = pd.get_dummies(
        fair[["rate_marriage", "religious", "occupation"]].astype("category"),
        drop_first=True, dtype=float,
    )  # fmt: skip
    X.insert(0, "const", 1.0)
    y = (fair["event"] == "yes").astype(float)
    # to convergence: statsmodels' default stops when the deviance changes by < 1e-8,
    # its standard errors then use the weights of the step before (1e-6 off here)
    ref = sm.GLM(y, X, family=sm.families.Binomial()).fit(tol=1e-13)
    np.testing.assert_allclose(refit.params.to_numpy(), ref.params.to_numpy(), rtol=1e-6)
    np.testing.assert_allclose(refit.bse.to_numpy(), ref.bse.to_numpy(), rtol=1e-6)
    assert refit.deviance == pytest.approx(ref.deviance, rel=1e-9)
    # λ = 0 is the unpenalised MLE: the penalised fit and the refit coincide
    np.testing.assert_allclose(res.fittedvalues, refit.fittedvalues, rtol=1e-6)
    assert res.deviance == pytest.approx(ref.deviance, rel=1e-8)
    assert "CONDITIONAL ON THE SELECTION" in str(refit.summary())
    # the summary's reference-coded C() effects are the unpenalised treatment contrasts
    cat = res.categorical_effects()
    names = [f"{t}[{lv}]" for t, lv in zip(cat["term"], cat["level"], strict=True)]
    np.testing.assert_allclose(cat["effect"], refit.params[names], rtol=1e-5)
    assert "C() terms in reference coding" in str(res.summary())


def test_refit_merges_unselected_cut_points(res):
    refit = res.refit()
    X, names = res.selected_design()
    cuts = res.cut_points()
    n_seg_cols = sum(1 for n in names if n.startswith("bin("))
    assert n_seg_cols == len(cuts)  # one indicator per kept cut (first segment = reference)
    assert list(refit.params.index) == names
    # the refit spans the penalised fit: its deviance cannot be larger
    assert refit.deviance <= res.deviance + 1e-8


def test_predict_replays_the_design(res, fair):
    np.testing.assert_allclose(res.predict(fair), res.fittedvalues, rtol=1e-13)
    np.testing.assert_allclose(res.predict(fair, type="link"), res.linear_predictor, rtol=1e-13)
    np.testing.assert_array_equal(res.predict(), res.fittedvalues)
    with pytest.raises(ValueError, match=r"\['age'\]"):
        res.predict(fair.drop(columns="age"))
    with pytest.raises(ValueError, match="'occupation'"):
        res.predict(fair.assign(occupation=9.0))
    with pytest.raises(ValueError, match="type"):
        res.predict(fair, type="class")


def test_predict_validates_the_offset_column_like_fit(fair):
    """glm(offset="col") reads the column from newdata, checked as at fit time."""
    data = fair.assign(expo=np.linspace(0.5, 2.0, len(fair)))
    r = glm("event ~ bin(age, 5)", data, family="binomial", offset="expo").fit(lam=1e-2)
    np.testing.assert_allclose(r.predict(data, type="link"), r.linear_predictor, rtol=1e-13)
    np.testing.assert_array_equal(r.predict(dict(data)), r.predict(data))  # a mapping
    bad = data["expo"].where(data.index != 4)
    with pytest.raises(ValueError, match=r"offset \(column 'expo'\) contains NaN"):
        r.predict(data.assign(expo=bad))
    with pytest.raises(TypeError, match=r"offset='expo' needs a numeric column; column 'expo'"):
        r.predict(data.assign(expo="a"))
    with pytest.raises(ValueError, match=r"column 'expo' \(the model's offset\) is missing"):
        r.predict(data.drop(columns="expo"))


def test_path_and_cv_results_interfaces(fair):
    model = glm("event ~ bin(rate_marriage) + bin(age)", fair, family="binomial")
    path = model.fit_path(n_lambdas=6)
    assert len(path) == 6 and path[-1].lam == path.lams[-1]
    assert path[2].lam_source == "path position 2 of 6"
    coefs = path.coefs
    assert coefs.shape == (6, 1 + int(model.block_ptr[-1]))
    np.testing.assert_array_equal(coefs.iloc[4].to_numpy(), path[4].params.to_numpy())
    frame = path.to_frame()
    assert list(frame.columns) == ["lam", "df", "deviance", "n_iter", "converged"]
    with pytest.raises(IndexError):
        path[6]
    with pytest.raises(TypeError):
        path[1.5]
    cv = model.fit_cv(folds=3, n_lambdas=6, random_state=1)
    assert list(cv.to_frame().columns) == ["lam", "mean", "se", "df"]
    one = cv.results("lam_1se")
    assert one.lam == cv.lam_1se and "lam_1se" in one.lam_source
    assert "3-fold CV (lam_min, deviance)" in str(cv.best_.summary())


def test_public_modelling_names_have_numpydoc_docstrings():
    """Every public function, class and method of the modelling layer documents its
    parameters and return value (numpydoc's validator, as skglm checks it)."""
    import importlib
    import inspect

    validate = pytest.importorskip("numpydoc.validate").validate
    codes = {"GL08", "PR01", "PR02", "PR07", "RT01", "RT03", "SS01"}
    problems = []
    for mod_name in ("_formula", "_model", "_results", "_summary", "_plotting", "_cli",
                     "_datasets"):  # fmt: skip
        mod = importlib.import_module(f"binarsity_stats.{mod_name}")
        for name in mod.__all__:
            obj = getattr(mod, name)
            if not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue  # constants are documented by their #: comments
            targets = [f"binarsity_stats.{mod_name}.{name}"]
            if inspect.isclass(obj):
                targets += [
                    f"binarsity_stats.{mod_name}.{name}.{attr}"
                    for attr, val in package_members(obj).items()
                    if not attr.startswith("_") and (callable(val) or isinstance(val, property))
                ]
            for target in targets:
                errors = [c for c, _ in validate(target)["errors"] if c in codes]
                if errors:
                    problems.append((target, errors))
    assert problems == []


def test_the_unit_of_a_jump_is_computed_once_per_model_and_anew_for_other_rows(monkeypatch):
    """``jump_unit`` (O(n) passes) is asked by every result of a path: computed once per
    (family, y, weights); a copy of the model with other y gets its own."""
    import copy

    from binarsity_stats.model import _results

    rng = np.random.default_rng(5)
    df = pd.DataFrame({"x": rng.normal(size=400)})
    df["y"] = 3.0 * (df.x > 0) + rng.normal(size=400)
    model = glm("y ~ bin(x, 6)", df)
    calls = []
    real = _results.coefficient_unit
    monkeypatch.setattr(_results, "coefficient_unit", lambda *a: calls.append(1) or real(*a))
    path = model.fit_path(n_lambdas=8)
    dfs = [r.df for r in path]  # every point's df and cut points ask for the unit
    first = _results.jump_unit(model)
    assert len(dfs) == 8 and len(calls) == 1
    other = copy.copy(model)
    other.y = model.y * 10.0
    assert _results.jump_unit(other) == pytest.approx(10.0 * first, rel=1e-12)
    assert len(calls) == 2
    assert "_jump_unit" not in model.__getstate__()
