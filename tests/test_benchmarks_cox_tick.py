"""tick's Cox with binarsity in ``python -m benchmarks families --only cox`` (issue 14).

CI's test run does not install the ``bench`` extra, so tick is absent here: the tick
rows must be noted as not run while the rest of the part runs. What puts tick on our
objective is checked without tick: its one-hot design of our bins with only the
``bin()`` terms as prox blocks, our objective evaluated at any θ (tick's solutions are
scored by it), tick's failure count m and the strength λ W / m. That tick then solves
that objective is checked by the benchmark itself against tick (``mapping_rel_diff``).
No timing here: speed is measured in the benchmark.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np
import pytest

import binarsity_stats as bs

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def fc(monkeypatch):
    # the benchmarks package lives at the repository root (not installed); importing it
    # after binarsity_stats keeps the package under test (benchmarks.__init__)
    monkeypatch.syspath_prepend(str(REPO))
    return importlib.import_module("benchmarks.families_cox")


def _model(fc, n=300, penalty_weights="uniform"):
    df, _, _ = fc._sim(n, seed=1, ties=False)
    df["g"] = np.where(df["x3"] > 0.5, "a", "b")
    formula = "Surv(t, e) ~ bin(x0, 8) + C(g) + bin(x1, 6)"
    return df, bs.glm(formula, df, family="cox", penalty_weights=penalty_weights)


def test_untied_simulation_has_no_ties(fc):
    df, _, _ = fc._sim(500, ties=False)
    tied, _, _ = fc._sim(500)
    assert df["t"].nunique() == len(df)
    assert tied["t"].nunique() < len(tied)  # the default keeps the rounded, tied times


def test_tick_design_penalises_only_the_binned_terms(fc):
    df, model = _model(fc)
    X, starts, lengths = fc.tick_design(model)
    ptr = np.asarray(model.design.block_ptr)
    assert X.shape == (len(df), ptr[-1])
    assert np.all(np.diff(X.indptr) == 3)  # one 1 per block (2 bins + the C() block)
    kinds = model._block_kinds()
    assert kinds == ["tv", "free", "tv"]
    np.testing.assert_array_equal(starts, ptr[[0, 2]])
    np.testing.assert_array_equal(lengths, np.diff(ptr)[[0, 2]])
    theta = np.random.default_rng(0).normal(size=ptr[-1])
    np.testing.assert_allclose(
        X @ theta, model.linear_predictor(theta, np.empty(0), 0.0), rtol=0, atol=1e-13
    )


def test_our_objective_scores_any_theta(fc):
    df, model = _model(fc)
    lam = 0.05 * model.lambda_max()
    res = model.fit(lam=lam)
    F = fc.our_objective(model, res.coef, lam)
    assert F == pytest.approx(res.objective, rel=1e-12)
    # tick centres each block on its plain mean, ours on the bin counts: a constant
    # added to one block changes neither the partial likelihood nor the penalty
    shifted = res.coef.copy()
    ptr = np.asarray(model.design.block_ptr)
    shifted[ptr[0] : ptr[1]] += 0.7
    shifted[ptr[1] : ptr[2]] -= 0.3
    assert fc.our_objective(model, shifted, lam) == pytest.approx(F, rel=1e-12)
    # and it is the objective of a fit: worse away from the optimum
    assert fc.our_objective(model, res.coef * 1.5, lam) > F


def test_tick_failure_count_and_strength(monkeypatch):
    monkeypatch.syspath_prepend(str(REPO))
    tick = importlib.import_module("benchmarks._tick")
    t = np.array([3.0, 1.0, 5.0, 2.0, 4.0])
    # the largest time is an event: tick counts it as censored (its term is 0)
    assert tick.tick_cox_failures(t, np.array([1, 1, 1, 0, 1])) == 3
    assert tick.tick_cox_failures(t, np.array([1, 1, 0, 0, 1])) == 3
    # our F = L/W + λ TV; tick's L/m + s TV = (W/m) F at s = λ W / m
    assert tick.tick_cox_strength(0.01, 200.0, 50) == pytest.approx(0.04)


def test_without_tick_the_tick_rows_are_noted_not_run(fc, monkeypatch, tmp_path):
    tick = importlib.import_module("benchmarks._tick")
    monkeypatch.setattr(tick, "tick_cox_available", lambda: False)
    from benchmarks._common import SuiteOutput

    out = SuiteOutput("families_cox_tick", tmp_path, True, "test")
    fc.run_cox_tick(out, quick=True)
    assert out.rows == []
    assert any("tick" in note and "not run" in note for note in out.notes)
    # the held-out rows: the method raises ImportError, which run_cox notes (as for
    # lifelines) before running the other methods
    df, _, _ = fc._sim(200)
    with pytest.raises(ImportError, match="tick"):
        fc._tick(df[:150], df[150:], ["x0"], [])
