"""λ_max is evaluated at the null fit with the unpenalised terms free (design.md §2).

The docs (user_guide/penalty.md, the glossary) say so; this proves it on a model whose
``C()`` and linear terms matter: λ_max equals max |S_jl| / ω_jl computed by hand at
statsmodels' GLM on the intercept, the ``C()`` dummies and the linear column — not at
the intercept-only fit, which gives a different (here larger) value — and it is the
smallest λ at which every binned term is flat.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from binarsity_stats import glm


def _frame(n=600, seed=4):
    rng = np.random.default_rng(seed)
    g = rng.choice(["a", "b", "c"], size=n)
    z = rng.normal(size=n)
    x = rng.uniform(size=n) + 0.8 * (g == "b")  # x correlated with the C() term
    eta = 1.2 * (g == "b") - 0.7 * (g == "c") + 0.5 * z + 0.4 * (x > 0.9)
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-eta))).astype(float)
    return pd.DataFrame({"y": y, "x": x, "z": z, "g": g})


def _lambda_by_hand(res, y, mu):
    """max |S_jl| / ω_jl over the edges of the binned term, at fitted means mu."""
    m = res.model
    block = 0  # bin(x, 10) comes first
    s, e = int(m.block_ptr[block]), int(m.block_ptr[block + 1])
    codes = np.asarray(m.design.codes[block], dtype=np.intp)
    hist = np.bincount(codes, weights=(mu - y) / len(y), minlength=e - s)
    suffix = np.cumsum(hist[::-1])[::-1]
    w = np.asarray(m.penalty_weights)[s:e]
    inner = w > 0
    return float(np.max(np.abs(suffix[inner]) / w[inner]))


def test_lambda_max_is_taken_at_the_null_fit_with_c_and_linear_terms_free():
    d = _frame()
    model = glm("y ~ bin(x, 10) + C(g) + z", d, family="binomial")
    lam_max = model.lambda_max()
    res = model.fit(lam=lam_max)
    y = res.model.y
    # the null fit: statsmodels' GLM on intercept + C(g) dummies + z
    X = sm.add_constant(pd.get_dummies(d["g"], drop_first=True).astype(float).assign(z=d.z))
    null = sm.GLM(y, X, family=sm.families.Binomial()).fit(tol=1e-12)
    assert lam_max == pytest.approx(_lambda_by_hand(res, y, null.fittedvalues), rel=1e-6)
    # the intercept-only fit would give another value
    only = _lambda_by_hand(res, y, np.full_like(y, y.mean()))
    assert abs(only - lam_max) > 0.05 * lam_max
    # and λ_max is the smallest λ with every binned term flat
    assert res.n_jumps == 0
    assert model.fit(lam=0.98 * lam_max).n_jumps > 0
