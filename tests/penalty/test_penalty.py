"""The one theory-λ step (``penalty._penalty.theory_lambda_fit``) every door runs.

Proves the protocol (one fit when φ is known; a fit at λ(φ̂₀), φ̂ from it, one more
fit at λ(φ̂) warm-started from the first), and that the formula door and the estimator
reach the same λ and dispersion through it on the same data.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.testing import assert_allclose

import binarsity_stats as bs
from binarsity_stats.penalty._penalty import theory_lambda_fit


def test_one_fit_when_the_dispersion_is_known():
    calls = []
    sol, lam, phi = theory_lambda_fit(
        lambda v, s: calls.append((v, s)) or f"fit@{v}", lambda p: 2.0 if p is None else p,
        None, warm_start="w",
    )  # fmt: skip
    assert (sol, lam, phi) == ("fit@2.0", 2.0, None)
    assert calls == [(2.0, "w")]


def test_a_second_fit_at_the_estimated_dispersion_warm_started():
    calls = []
    sol, lam, phi = theory_lambda_fit(
        lambda v, s: calls.append((v, s)) or f"fit@{v}",
        lambda p: 1.0 if p is None else 10.0 * p,
        lambda s: 0.5 if s == "fit@1.0" else np.nan,
    )  # fmt: skip
    assert (sol, lam, phi) == ("fit@5.0", 5.0, 0.5)
    assert calls == [(1.0, None), (5.0, "fit@1.0")]


def test_formula_and_estimator_reach_the_same_theory_lambda_and_dispersion():
    rng = np.random.default_rng(0)
    n = 2000
    df = pd.DataFrame({"a": rng.uniform(size=n), "b": rng.uniform(size=n)})
    df["y"] = 3.0 * (df.a > 0.5) + rng.normal(scale=2.0, size=n)
    res = bs.glm("y ~ bin(a, 8) + bin(b, 8)", df).fit(lam="theory")
    est = bs.BinarsityGLM(n_bins=8, lam="theory").fit(df[["a", "b"]], df.y)
    # "theory (Dispersion estimated: 4.01)" — the formula's record of the step
    assert res.lam_source.startswith("theory (") and "estimated" in res.lam_source
    phi = float(res.lam_source.rsplit(": ", 1)[1].rstrip(")"))
    assert_allclose(est.lam_, res.lam, rtol=1e-9)
    assert_allclose(est.dispersion_, phi, rtol=1e-3)  # printed to 4 digits
    assert 3.0 < est.dispersion_ < 5.0  # the noise variance, 4
