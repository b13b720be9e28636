"""What the summary says about the degrees of freedom (issue 16, "Corrections to the docs").

* The jump count is the gaussian fused-lasso df (Tibshirani & Taylor 2012); for other
  families the summary calls it a heuristic and AIC/BIC approximate.
* A fit with at least as many df as observations, or (analytic weights) more df than
  Kish's effective n, gets a note; a fit well inside its data gets none.
* With analytic weights the llf/AIC/BIC are those of statsmodels' ``var_weights`` (rows
  of star98's 303 districts, not 267,611 students); frequency weights those of
  ``freq_weights`` — compared at λ = 0 on the same one-hot design.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from binarsity_stats import glm


def _notes(res) -> str:
    return " ".join(" ".join(res.summary().notes).split())


@pytest.fixture(scope="module")
def star98() -> pd.DataFrame:
    d = sm.datasets.star98.load_pandas().data
    d = d[["NABOVE", "NBELOW", "LOWINC", "PERMINTE", "PERHISP"]].copy()
    d["tested"] = d["NABOVE"] + d["NBELOW"]
    d["pct"] = 100 * d["NABOVE"] / d["tested"]
    return d


def _frame(n=300, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(size=n)
    eta = np.where(x > 0.5, 1.0, -1.0)
    return pd.DataFrame({"x": x, "z": rng.uniform(size=n),
                         "yg": eta + rng.normal(size=n),
                         "yb": (rng.uniform(size=n) < 1 / (1 + np.exp(-eta))).astype(float),
                         "yp": rng.poisson(np.exp(eta)).astype(float)})  # fmt: skip


def test_df_note_says_exact_for_gaussian_and_heuristic_otherwise():
    d = _frame()
    gauss = _notes(glm("yg ~ bin(x, 10) + bin(z, 10)", d).fit(lam=0.01))
    assert "Tibshirani & Taylor" in gauss and "heuristic" not in gauss
    for y, fam in (("yb", "binomial"), ("yp", "poisson")):
        text = _notes(glm(f"{y} ~ bin(x, 10) + bin(z, 10)", d, family=fam).fit(lam=0.01))
        assert "heuristic" in text and "approximate" in text, fam


def test_a_fit_with_as_many_df_as_rows_gets_a_note():
    d = _frame(n=20, seed=1)
    res = glm("yg ~ bin(x, 12) + bin(z, 12)", d).fit(lam=0.0)
    assert res.df >= res.nobs
    assert "not below the number of observations (20)" in _notes(res)
    small = glm("yg ~ bin(x, 3)", d).fit(lam=0.0)
    assert small.df < small.nobs
    assert "not below the number of observations" not in _notes(small)


def test_more_df_than_kish_n_of_analytic_weights_gets_a_note(star98):
    rhs = "bin(LOWINC, 20) + bin(PERMINTE, 20) + bin(PERHISP, 20)"
    res = glm(f"pct ~ {rhs}", star98, sample_weight="tested").fit(lam=1e-3)
    n_eff = res.model.n_effective
    assert 20 < n_eff < 60 and res.df > n_eff  # ~37 effective rows of 303
    assert f"Kish's (sum s)^2 / sum s^2 = {n_eff:.1f} of 303 rows" in _notes(res)
    # frequency weights: the rows stand for 267,611 students; df is small against that
    freq = glm(f"pct ~ {rhs}", star98, sample_weight="tested", weights_kind="freq")
    assert "exceeds the effective number" not in _notes(freq.fit(lam=1e-3))
    # a sparse fit, below the effective n: no note
    sparse = glm(f"pct ~ {rhs}", star98, sample_weight="tested").fit(lam=3.0)
    assert sparse.df < n_eff
    assert "exceeds the effective number" not in _notes(sparse)


@pytest.mark.parametrize("kind", ["analytic", "freq"])
def test_star98_llf_aic_bic_are_statsmodels_var_or_freq_weights(star98, kind):
    res = glm("pct ~ bin(LOWINC, 6) + bin(PERHISP, 5)", star98, sample_weight="tested",
              weights_kind=kind).fit(lam=0.0, tol=1e-10)  # fmt: skip
    X, _ = res.selected_design()
    w = star98["tested"].to_numpy(float)
    kw = {"var_weights": w} if kind == "analytic" else {"freq_weights": w}
    ref = sm.GLM(res.model.y, X, family=sm.families.Gaussian(), **kw).fit()
    assert res.llf == pytest.approx(ref.llf, rel=1e-7)
    assert res.aic == pytest.approx(ref.aic, rel=1e-7)
    assert res.bic == pytest.approx(ref.bic_llf, rel=1e-7)
    if kind == "analytic":
        # 303 districts: criteria on the scale of 303 rows, and BIC's log(n) = log(303)
        assert abs(res.aic) < 1e4
        assert res.bic - res.aic == pytest.approx((np.log(303) - 2) * res.df)
    else:
        assert res.bic - res.aic == pytest.approx((np.log(w.sum()) - 2) * res.df)
