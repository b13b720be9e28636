"""model/_results_inference.py: the selected design, its unpenalised refit, and the
bootstrap's entry point.

Proved here: ``segment_of_level`` starts a segment at every kept jump and every chain
start; the selected design is the reference-coded indicator matrix of the fit's
segments built here by hand from the codes; the refit's estimates are the weighted least
squares solution on that matrix (NumPy's ``lstsq``); a level without training weight
gets no column and a row in it is refused by name; the arguments are checked.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from binarsity_stats.model._model import glm
from binarsity_stats.model._results_inference import segment_of_level


def chain_block(length: int, starts: list[int]) -> SimpleNamespace:
    ends = [*starts[1:], length]
    return SimpleNamespace(chain_length=length,
                           chains=lambda: [(s, e, None) for s, e in zip(starts, ends, strict=True)])  # fmt: skip


def test_segment_of_level():
    jumps = np.array([False, False, True, False, True, False])
    np.testing.assert_array_equal(segment_of_level(chain_block(6, [0]), jumps), [0, 0, 1, 1, 2, 2])
    # a second chain (a by-group block) starts a segment even without a jump there
    np.testing.assert_array_equal(segment_of_level(chain_block(6, [0, 3]), jumps),
                                  [0, 0, 1, 2, 3, 3])  # fmt: skip
    # a level after the chain (missing) is a segment of its own
    np.testing.assert_array_equal(segment_of_level(chain_block(4, [0]), jumps[:5]),
                                  [0, 0, 1, 1, 2])  # fmt: skip


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(0)
    n = 300
    df = pd.DataFrame({"x": rng.normal(size=n), "g": rng.choice(list("abc"), n),
                       "z": rng.normal(size=n)})  # fmt: skip
    df["y"] = (df.x > 0) + 0.3 * df.z + 0.5 * (df.g == "b") + rng.normal(size=n)
    w = np.where(df.g == "c", 0.0, rng.uniform(0.5, 2.0, n))  # level c: no training weight
    m = glm("y ~ bin(x, 8) + C(g) + z", df, sample_weight=w)
    return df, w, m, m.fit(lam=0.02)


def test_selected_design_is_the_segment_indicators(fitted):
    df, _, m, res = fitted
    X, names = res.selected_design()
    codes = m.design.codes
    seg = np.concatenate([[0], np.cumsum(res.jumps[1:8])])  # levels 0..7 of bin(x, 8)
    n_seg = seg[-1] + 1
    assert n_seg >= 3
    row_seg = seg[codes[0]]
    cols = [np.ones(len(df))]
    cols += [(row_seg == s).astype(float) for s in range(1, n_seg)]  # first: reference
    cols += [(df["g"] == "b").to_numpy(float)]  # a: reference, c: no weight, no column
    cols += [df["z"].to_numpy()]
    want = np.column_stack(cols)
    np.testing.assert_array_equal(X, want)
    assert names[0] == "Intercept" and names[-2:] == ["C(g)[b]", "z"]
    assert len(names) == X.shape[1]


def test_refit_is_weighted_least_squares_on_the_selected_design(fitted):
    df, w, _, res = fitted
    X, names = res.selected_design()
    sw = np.sqrt(w)
    beta, *_ = np.linalg.lstsq(X * sw[:, None], df["y"].to_numpy() * sw, rcond=None)
    refit = res.refit()
    assert list(refit.params.index) == names
    # a well-conditioned least squares problem in double precision
    np.testing.assert_allclose(refit.params.to_numpy(), beta, rtol=1e-9, atol=1e-11)


def test_a_level_without_training_weight_is_refused_by_name(fitted):
    df, _, _, res = fitted
    refit = res.refit()
    refit.predict(df[df.g != "c"].head(10))
    with pytest.raises(ValueError, match="term 'C\\(g\\)': level c had no training weight"):
        refit.predict(df[df.g == "c"].head(3))


def test_refit_and_bootstrap_check_their_arguments(fitted):
    _, _, _, res = fitted
    with pytest.raises(ValueError, match="cov_type must be one of"):
        res.refit(cov_type="HC9")
    relaxed = res.relax(0.5)
    with pytest.raises(ValueError, match="relax_gamma=0.5.*bootstrap the penalised results"):
        relaxed.bootstrap(n_boot=2)


def test_sandwich_covariance_of_the_refit(fitted):
    """HC0 = (X'WX)^-1 X'W diag(e²) W X (X'WX)^-1, computed here with NumPy."""
    df, w, _, res = fitted
    X, _ = res.selected_design()
    refit = res.refit(cov_type="HC0")
    keep = w > 0
    Xk, wk = X[keep], w[keep]
    e = df["y"].to_numpy()[keep] - Xk @ refit.params.to_numpy()
    bread = np.linalg.inv(Xk.T @ (Xk * wk[:, None]))
    meat = Xk.T @ (Xk * (wk**2 * e**2)[:, None])
    cov = bread @ meat @ bread
    np.testing.assert_allclose(refit.bse.to_numpy(), np.sqrt(np.diag(cov)), rtol=1e-8)
