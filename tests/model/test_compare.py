"""Model comparison (anova, compare), residuals, dispersion and the summary's formats.

What is proved here: ``bs.anova`` gives statsmodels' likelihood-ratio statistic and
p-value on the same two GLMs (binomial; poisson with an offset and analytic weights)
and statsmodels' F test (WLS ``compare_f_test``) for the gaussian, and refuses
non-nested or differently fitted pairs; the residuals, fitted values, Pearson χ² and
dispersion of a penalised fit at λ = 0 equal statsmodels' on the same GLM with
var_weights / freq_weights; a linear term's effect range is |β| times its column's
range; the HTML parses and the LaTeX has booktabs structure.
"""

import html.parser
import re

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats

import binarsity_stats as bs
from binarsity_stats._datasets import load_fair
from binarsity_stats.model._model import glm


@pytest.fixture(scope="module")
def fair():
    df = load_fair()
    df["event"] = (df["affairs"] > 0).astype(float)
    return df.iloc[::3].reset_index(drop=True)


def _dummies(df, cols):
    X = pd.get_dummies(df[cols].astype("category"), drop_first=True, dtype=float)
    X.insert(0, "const", 1.0)
    return X


def test_anova_binomial_equals_statsmodels_likelihood_ratio(fair):
    f_small = "event ~ bin(rate_marriage)"
    f_large = "event ~ bin(rate_marriage) + bin(religious)"
    small = glm(f_small, fair, family="binomial").fit(lam=0.0, tol=1e-10).refit()
    large = glm(f_large, fair, family="binomial").fit(lam=0.0, tol=1e-10).refit()
    table = bs.anova(small, large)
    fam = sm.families.Binomial()
    s = sm.GLM(fair["event"], _dummies(fair, ["rate_marriage"]), family=fam).fit()
    big = sm.GLM(fair["event"], _dummies(fair, ["rate_marriage", "religious"]), family=fam).fit()
    lr = s.deviance - big.deviance
    assert list(table.columns) == ["Resid. Df", "Resid. Dev", "Df", "Deviance", "Pr(>Chi)"]
    assert table["Resid. Df"].tolist() == [s.df_resid, big.df_resid]
    assert table.loc["Model 2", "Df"] == 3
    assert table.loc["Model 2", "Deviance"] == pytest.approx(lr, rel=1e-7)
    assert table.loc["Model 2", "Pr(>Chi)"] == pytest.approx(stats.chi2.sf(lr, 3), rel=1e-6)
    assert np.isnan(table.loc["Model 1", "Pr(>Chi)"])
    # the order is the caller's (R): larger first gives negative changes, same p-value
    rev = bs.anova(large, small)
    assert rev.loc["Model 2", "Df"] == -3
    assert rev.loc["Model 2", "Pr(>Chi)"] == pytest.approx(table.loc["Model 2", "Pr(>Chi)"])


def test_anova_poisson_with_offset_and_analytic_weights_equals_statsmodels():
    rng = np.random.default_rng(3)
    n = 600
    df = pd.DataFrame({"a": rng.integers(0, 4, n), "b": rng.integers(0, 3, n)})
    df["expo"] = rng.uniform(0.5, 3.0, n)
    df["w"] = rng.uniform(0.5, 2.0, n)
    df["y"] = rng.poisson(df["expo"] * np.exp(0.3 * df["a"] - 0.2 * (df["b"] == 2)))
    off = np.log(df["expo"].to_numpy())
    kw = {"family": "poisson", "offset": off, "sample_weight": "w"}
    small = glm("y ~ bin(a)", df, **kw).fit(lam=0.0, tol=1e-10).refit()
    large = glm("y ~ bin(a) + bin(b)", df, **kw).fit(lam=0.0, tol=1e-10).refit()
    table = bs.anova(small, large, test="LRT")
    fam = sm.families.Poisson()
    s = sm.GLM(df["y"], _dummies(df, ["a"]), family=fam, offset=off, var_weights=df["w"]).fit()
    big = sm.GLM(df["y"], _dummies(df, ["a", "b"]), family=fam, offset=off,
                 var_weights=df["w"]).fit()  # fmt: skip
    lr = s.deviance - big.deviance
    assert table.loc["Model 2", "Deviance"] == pytest.approx(lr, rel=1e-6)
    assert table.loc["Model 2", "Pr(>Chi)"] == pytest.approx(stats.chi2.sf(lr, 2), rel=1e-5)
    assert table.attrs["test"] == "Chisq" and table.attrs["dispersion"] == 1.0
    # a different offset is a different model: refused
    other = glm("y ~ bin(a) + bin(b)", df, family="poisson", sample_weight="w").fit(lam=0.0)
    with pytest.raises(ValueError, match="different offsets"):
        bs.anova(small, other.refit())


def test_anova_gaussian_f_test_equals_statsmodels_wls():
    rng = np.random.default_rng(5)
    n = 400
    df = pd.DataFrame({"a": rng.integers(0, 5, n), "b": rng.integers(0, 3, n)})
    df["w"] = rng.uniform(0.2, 3.0, n)
    df["y"] = 0.5 * df["a"] + 0.3 * (df["b"] == 1) + rng.normal(size=n) / np.sqrt(df["w"])
    small = glm("y ~ bin(a)", df, sample_weight="w").fit(lam=0.0, tol=1e-12).refit()
    large = glm("y ~ bin(a) + bin(b)", df, sample_weight="w").fit(lam=0.0, tol=1e-12).refit()
    table = bs.anova(small, large)  # the gaussian's default test is F
    assert list(table.columns)[-2:] == ["F", "Pr(>F)"]
    s = sm.WLS(df["y"], _dummies(df, ["a"]), weights=df["w"]).fit()
    big = sm.WLS(df["y"], _dummies(df, ["a", "b"]), weights=df["w"]).fit()
    fval, pval, ddf = big.compare_f_test(s)
    assert table.loc["Model 2", "Df"] == ddf == 2
    assert table.loc["Model 2", "F"] == pytest.approx(fval, rel=1e-6)
    assert table.loc["Model 2", "Pr(>F)"] == pytest.approx(pval, rel=1e-5)
    chi = bs.anova(small, large, test="Chisq")  # R: Δdev / dispersion against χ²(Δdf)
    assert chi.loc["Model 2", "Pr(>Chi)"] == pytest.approx(
        stats.chi2.sf(fval * 2, 2), rel=1e-5
    )


def test_anova_refuses_non_nested_and_bad_arguments(fair):
    a = glm("event ~ bin(age)", fair, family="binomial").fit(lam=0.0).refit()
    b = glm("event ~ bin(rate_marriage) + educ", fair, family="binomial").fit(lam=0.0)
    with pytest.raises(ValueError, match="not nested"):
        bs.anova(a, b.refit())
    with pytest.raises(TypeError, match="penalised fit"):
        bs.anova(a, b)
    with pytest.raises(ValueError, match="at least two"):
        bs.anova(a)
    with pytest.raises(ValueError, match="test must be"):
        bs.anova(a, a, test="Wald")
    with pytest.raises(ValueError, match="same response rows"):
        bs.anova(a, b.refit(split=0.5, random_state=0))
    gauss = glm("event ~ bin(age)", fair).fit(lam=0.0).refit()
    with pytest.raises(ValueError, match="different families"):
        bs.anova(a, gauss)
    with pytest.warns(RuntimeWarning, match="inappropriate"):
        bs.anova(a, a, test="F")


def test_compare_table_rows_and_cv_score(fair):
    m = glm("event ~ bin(age) + bin(rate_marriage)", fair, family="binomial")
    a = glm("event ~ bin(age)", fair, family="binomial").fit(lam=1e-3)
    cvres = m.fit_cv(folds=3, random_state=0)
    table = bs.compare(a, cvres, a.refit(), names=["age", "cv", "refit"])
    assert list(table.index) == ["age", "cv", "refit"]
    assert table.loc["age", "AIC"] == pytest.approx(a.aic)
    assert table.loc["age", "BIC"] == pytest.approx(a.bic)
    assert table.loc["age", "cuts kept"] == a.n_jumps
    assert np.isnan(table.loc["age", "CV score"])
    best = cvres.best_
    assert table.loc["cv", "df"] == best.df and table.loc["cv", "deviance"] == best.deviance
    assert table.loc["cv", "CV score"] == pytest.approx(cvres.mean[cvres.idx_min])
    assert table.loc["cv", "CV se"] == pytest.approx(cvres.se[cvres.idx_min])
    assert table.loc["refit", "AIC"] == pytest.approx(a.refit().sm_results.aic)
    # a fit taken from the CV carries its score
    one_se = bs.compare(cvres.results("lam_1se"))
    assert one_se["CV score"].iloc[0] == pytest.approx(cvres.mean[cvres.idx_1se])
    with pytest.raises(ValueError, match="names has 1"):
        bs.compare(a, a, names=["x"])
    with pytest.raises(TypeError, match="expected fits"):
        bs.compare(a, "b")


@pytest.mark.parametrize("kind", ["analytic", "freq"])
def test_residuals_and_dispersion_equal_statsmodels_with_weights(kind):
    rng = np.random.default_rng(11)
    n = 300
    df = pd.DataFrame({"a": rng.integers(0, 4, n), "x": rng.normal(size=n)})
    df["w"] = rng.integers(1, 4, n).astype(float)
    df["y"] = rng.poisson(np.exp(0.4 * df["a"] - 0.5 + 0.3 * df["x"]))
    res = glm("y ~ bin(a) + x", df, family="poisson", sample_weight="w",
              weights_kind=kind).fit(lam=0.0, tol=1e-12)  # fmt: skip
    X = _dummies(df, ["a"]).assign(x=df["x"])
    wkw = {"var_weights": df["w"]} if kind == "analytic" else {"freq_weights": df["w"]}
    ref = sm.GLM(df["y"], X, family=sm.families.Poisson(), **wkw).fit(tol=1e-12)
    np.testing.assert_allclose(res.fittedvalues, ref.fittedvalues, rtol=1e-6)
    np.testing.assert_allclose(res.resid_response, ref.resid_response, rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(res.resid_pearson, ref.resid_pearson, rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(res.resid_deviance, ref.resid_deviance, rtol=1e-5, atol=1e-8)
    assert res.df_resid == pytest.approx(ref.df_resid)
    assert res.pearson_chi2 == pytest.approx(ref.pearson_chi2, rel=1e-6)
    assert res.dispersion == pytest.approx(ref.pearson_chi2 / ref.df_resid, rel=1e-6)
    header = res.summary().header
    assert float(header["Df Residuals"]) == pytest.approx(ref.df_resid)
    assert "Dispersion (phi, chi2/df)" in header


def test_gaussian_dispersion_is_statsmodels_scale():
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"a": rng.integers(0, 3, 200)})
    df["y"] = df["a"] + rng.normal(scale=2.0, size=200)
    res = glm("y ~ bin(a)", df).fit(lam=0.0, tol=1e-12)
    ref = sm.GLM(df["y"], _dummies(df, ["a"])).fit()
    assert res.dispersion == pytest.approx(ref.scale, rel=1e-8)
    assert "Dispersion (sigma^2, chi2/df)" in res.summary().header


def test_poisson_overdispersion_note():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.integers(0, 4, 500)})
    mu = np.exp(1.0 + 0.2 * df["a"])
    df["y"] = rng.negative_binomial(1.0, 1.0 / (1.0 + mu))  # variance mu + mu^2
    df["z"] = rng.poisson(mu)
    over = glm("y ~ bin(a)", df, family="poisson").fit(lam=1e-3)
    assert over.dispersion > 1.5
    assert "Over-dispersion" in over.summary().as_text()
    plain = glm("z ~ bin(a)", df, family="poisson").fit(lam=1e-3)
    assert plain.dispersion < 1.5
    assert "Over-dispersion" not in plain.summary().as_text()


def test_linear_effect_range_and_importance(fair):
    res = glm("event ~ bin(age) + bin(rate_marriage) + educ + yrs_married", fair,
              family="binomial").fit(lam=2e-3)  # fmt: skip
    table = res.term_table()
    for name in ["educ", "yrs_married"]:
        x = fair[name].to_numpy()
        k = res.model.spec.dense_columns.index(name)
        beta = res.dense_coef[k]
        assert table.loc[name, "effect_range"] == pytest.approx(abs(beta) * np.ptp(x))
        assert table.loc[name, "importance"] == pytest.approx(
            np.mean(np.abs(beta * x - np.mean(beta * x)))
        )
    contrib = res.term_contributions()
    eta = contrib.sum(axis=1).to_numpy() + res.intercept
    np.testing.assert_allclose(eta, res.linear_predictor, rtol=1e-10, atol=1e-12)
    ordered = res.summary(sort="importance").tables
    binned = [t for t in ordered if t.attrs["title"].startswith("Binned")][0]
    assert binned["importance"].is_monotonic_decreasing
    linear = [t for t in ordered if t.attrs["title"].startswith("Intercept")][0]
    assert linear["importance"].iloc[1:].is_monotonic_decreasing
    assert list(linear.index[1:]) == list(
        table.loc[["educ", "yrs_married"], "importance"].sort_values(ascending=False).index
    )
    with pytest.raises(ValueError, match="sort must be"):
        res.summary(sort="size")


class _Checker(html.parser.HTMLParser):
    VOID = {"br", "hr", "img", "meta"}

    def __init__(self):
        super().__init__()
        self.stack, self.tables, self.cells = [], 0, []

    def handle_starttag(self, tag, attrs):
        if tag not in self.VOID:
            self.stack.append(tag)
        self.tables += tag == "table"

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, (tag, self.stack[-3:])
        self.stack.pop()

    def handle_data(self, data):
        self.cells.append(data)


def test_summary_html_latex_and_tables(fair):
    res = glm("event ~ bin(age) + bin(rate_marriage) + C(occupation) + educ", fair,
              family="binomial").fit(lam=2e-3)  # fmt: skip
    smry = res.summary()
    parser = _Checker()
    parser.feed(smry.as_html())
    parser.close()
    assert parser.stack == []
    assert parser.tables == len(smry.tables)
    text = "".join(parser.cells)
    assert "Binarsity GLM Results" in text and "(a, b]" in text
    assert "<script" not in smry.as_html() and smry._repr_html_() == smry.as_html()
    # tables: the header first, then DataFrames carrying their titles
    assert all(isinstance(t, pd.DataFrame) for t in smry.tables)
    assert smry.tables[0].loc["Deviance", "value"] == smry.header["Deviance"]
    assert smry.titles[1].startswith("Binned")
    tex = smry.as_latex()
    n_tab = len(smry.tables)
    assert tex.count("\\begin{tabular}") == tex.count("\\end{tabular}") == n_tab
    assert tex.count("\\toprule") == tex.count("\\bottomrule") == n_tab
    assert tex.count("\\midrule") == n_tab - 1  # every table but the header
    assert tex.count("{") == tex.count("}") + tex.count("\\}") - tex.count("\\{")
    # every row of a table has as many cells as its header; specials escaped
    for body in re.findall(r"\\begin\{tabular\}\{(\w+)\}(.*?)\\end\{tabular\}", tex, re.S):
        ncol = len(body[0])
        for line in body[1].splitlines():
            if line.endswith("\\\\") and "multicolumn" not in line:
                assert len(re.findall(r"(?<!\\)&", line)) == ncol - 1, line
    assert re.search(r"(?<!\\)[_%#]", tex.replace("\\_", "")) is None
