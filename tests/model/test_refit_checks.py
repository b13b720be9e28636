"""The refit's statistics hold at 200,000 rows: memory linear in n, never an n × n object.

``refit()`` checks which parameters the selected design identifies. It did so with the
full SVD of the n × k design (``full_matrices=True``: an n × n matrix of left singular
vectors, 320 GB at n = 200,000), so ``refit()``, ``get_prediction``, ``report()`` and
the CLI's ``predict --interval`` ran out of memory from about 25,000 rows. The check now
works on the k × k triangular factor of a blocked QR.

The bound is linear in n with a wide margin: tracemalloc (which sees numpy's
allocations) must stay under 32 × (the selected design's bytes + one float64 vector of
n), measured here at about 20 ×. An n × n temporary would exceed it by four orders of
magnitude, so the assertion does not depend on the machine.
"""

from __future__ import annotations

import tracemalloc
import warnings

import numpy as np
import pandas as pd
import pytest

import binarsity_stats as bs
from binarsity_stats.model._refit import _non_identified

N = 200_000


@pytest.fixture(scope="module")
def large_fit():
    rng = np.random.default_rng(0)
    X = rng.uniform(0.0, 1.0, (N, 3))
    eta = -0.3 + 1.0 * (X[:, 0] > 0.5) - 0.8 * (X[:, 1] > 0.3) + 0.5 * (X[:, 2] > 0.7)
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    df["y"] = rng.binomial(1, 1.0 / (1.0 + np.exp(-eta))).astype(float)
    res = bs.glm("y ~ bin(a) + bin(b) + bin(c)", df, family="binomial").fit()
    return df, res


def _peak(fn):
    tracemalloc.start()
    try:
        out = fn()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return out, peak


def _budget(res) -> float:
    X, _ = res.selected_design()
    return 32.0 * (X.nbytes + 8.0 * X.shape[0])


def test_refit_at_200k_rows_uses_memory_linear_in_n(large_fit):
    df, res = large_fit
    import statsmodels.api  # noqa: F401 - its import is not the refit's memory

    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # nothing non-identified here
        ref, peak = _peak(res.refit)
    assert peak < _budget(res), f"refit peak {peak / 2**20:.0f} MiB"
    assert ref.non_identified == []
    assert np.isfinite(np.asarray(ref.bse)).all()
    assert ref.nobs == N


def test_prediction_intervals_at_200k_rows(large_fit):
    df, res = large_fit
    ref = res.refit()
    frame, peak = _peak(lambda: ref.get_prediction(df).summary_frame(alpha=0.05))
    assert peak < _budget(res), f"get_prediction peak {peak / 2**20:.0f} MiB"
    assert len(frame) == N
    lower, upper = frame["mean_ci_lower"].to_numpy(), frame["mean_ci_upper"].to_numpy()
    mean = frame["mean"].to_numpy()
    assert np.all((lower < mean) & (mean < upper))
    pred, peak = _peak(lambda: ref.predict(df, se_fit=True))
    assert peak < _budget(res), f"predict(se_fit=True) peak {peak / 2**20:.0f} MiB"
    np.testing.assert_allclose(pred["fit"], mean, rtol=1e-12)
    assert np.all(pred["se_fit"] > 0)


class _Model:
    def __init__(self, exog):
        self.exog = exog


class _Results:
    def __init__(self, exog):
        self.model = _Model(exog)


def test_identifiability_check_on_200k_rows_finds_the_collinear_columns():
    # a design whose columns 2 and 3 add up to column 1 (the intercept): both are named,
    # column 4 (independent) is not — the verdict of the former full SVD, in k × k memory
    rng = np.random.default_rng(1)
    g = rng.integers(0, 2, N).astype(float)
    X = np.column_stack([np.ones(N), g, 1.0 - g, rng.standard_normal(N)])
    found, peak = _peak(lambda: _non_identified(_Results(X)))
    assert found == [0, 1, 2]
    assert peak < 4 * X.nbytes
    assert _non_identified(_Results(X[:, [0, 1, 3]])) == []


def test_the_rank_deficient_refit_runs_the_one_irls_loop(monkeypatch):
    """``_identified_refit`` runs ``_refit_glm.irls`` (the refit from sufficient statistics'
    loop) on the dense rows; its estimate is the full-rank fit's to that loop's tolerance
    and splits a duplicated column's effect evenly (the minimum-norm solution)."""
    import statsmodels.api as sm

    from binarsity_stats.model import _refit_checks, _refit_glm

    designs = []

    def counting(design, *args, **kwargs):
        designs.append(type(design).__name__)
        return _refit_glm.irls(design, *args, **kwargs)

    monkeypatch.setattr(_refit_checks, "irls", counting, raising=True)
    rng = np.random.default_rng(3)
    n = 100_000
    x = rng.normal(size=n)
    g = (rng.random(n) < 0.3).astype(float)
    y = rng.binomial(1, 1 / (1 + np.exp(-(0.2 + 0.5 * x - 0.7 * g)))).astype(float)
    full = np.column_stack([np.ones(n), x, g])
    deficient = np.column_stack([full, g])  # g twice: one direction not identified
    fam = sm.families.Binomial()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = sm.GLM(y, full, family=fam).fit(tol=1e-12)
        out = _refit_checks._identified_refit(sm.GLM(y, deficient, family=fam).fit())
    assert designs == ["DenseRows"]
    assert out.converged
    params = np.asarray(out.params)
    # the loop stops when η moves by ≤ 1e-10 (1 + max|η|); statsmodels' reference at
    # its deviance tolerance 1e-12: parameters agree far inside 1e-7
    np.testing.assert_allclose(params[:2], ref.params[:2], rtol=0, atol=1e-7)
    np.testing.assert_allclose(params[2] + params[3], ref.params[2], rtol=0, atol=1e-7)
    np.testing.assert_allclose(params[2], params[3], rtol=0, atol=1e-7)
    np.testing.assert_allclose(out.fittedvalues, ref.fittedvalues, rtol=0, atol=1e-8)
