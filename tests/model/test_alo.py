"""Approximate leave-one-out along a path (issue 27): ``PathResults.alo()`` and
``fit(lam="alo")``. Mirrors ``binarsity_stats/model/_alo.py``.

The reference is the exact leave-one-out fit: row i given weight 0 (the bins do not
move: x takes 10 values, each with many rows) and λ scaled by W / (W − 1), which is
the objective with row i's loss deleted at the same penalty.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import binarsity_stats as bstats
from binarsity_stats.model._alo import alo_linear_predictor

FORMULA = "y ~ bin(x, 20)"


def _data(family, n=120, seed=0):
    rng = np.random.default_rng(seed)
    x = np.repeat(np.arange(10.0), n // 10)
    rng.shuffle(x)
    eta = np.where(x > 4, 0.8, 0.0) + np.where(x > 7, 0.5, 0.0)
    y = {"gaussian": eta + rng.normal(scale=0.5, size=n),
         "binomial": rng.binomial(1, 1 / (1 + np.exp(-eta))),
         "poisson": rng.poisson(np.exp(eta))}[family]  # fmt: skip
    return pd.DataFrame({"x": x, "y": y})


def _exact_loo(d, family, lam):
    n = len(d)
    out = np.empty(n)
    for i in range(n):
        w = np.ones(n)
        w[i] = 0.0
        fit = bstats.glm(FORMULA, d, family=family, sample_weight=w,
                         penalty_weights="uniform").fit(lam=lam * n / (n - 1), tol=1e-12)  # fmt: skip
        out[i] = fit.linear_predictor[i]
    return out


def test_gaussian_alo_is_the_exact_leave_one_out_where_the_jump_set_holds():
    d = _data("gaussian", n=200)
    res = bstats.glm(FORMULA, d, penalty_weights="uniform").fit(lam=0.01, tol=1e-12)
    assert res.n_jumps >= 2
    eta_loo, leverage = alo_linear_predictor(res)
    exact = _exact_loo(d, "gaussian", 0.01)
    close = np.abs(eta_loo - exact) <= 1e-6
    assert close.mean() >= 0.9  # rows whose deletion moves a cut are the exceptions
    assert np.median(np.abs(eta_loo - exact)) <= 1e-9
    assert np.all((leverage >= 0) & (leverage <= 1))
    # and the penalised fit's own prediction is not the leave-one-out one
    assert np.median(np.abs(res.linear_predictor - exact)) > 1e-3


@pytest.mark.parametrize("family", ["binomial", "poisson"])
def test_alo_risk_is_close_to_the_exact_leave_one_out_risk(family):
    d = _data(family, seed=1)
    res = bstats.glm(FORMULA, d, family=family, penalty_weights="uniform").fit(
        lam=0.01, tol=1e-12)
    fam = res.model.family
    y, w = d.y.to_numpy(float), np.ones(len(d))
    eta_loo, _ = alo_linear_predictor(res)
    exact = _exact_loo(d, family, 0.01)
    alo_risk = fam.deviance_eta(y, eta_loo, w)
    loo_risk = fam.deviance_eta(y, exact, w)
    fit_risk = fam.deviance_eta(y, res.linear_predictor, w)
    assert abs(alo_risk - loo_risk) <= 0.02 * loo_risk
    assert fit_risk < loo_risk  # the in-sample deviance is optimistic; ALO corrects it


def test_fit_alo_takes_the_minimum_of_the_path_curve_and_chooses_as_cv_does():
    rng = np.random.default_rng(3)
    n = 3000
    d = pd.DataFrame({"x": rng.uniform(size=n), "z": rng.uniform(size=n),
                      "u": rng.uniform(size=n)})  # fmt: skip
    eta = np.where(d.x > 0.5, 1.0, 0.0) + np.sin(6 * d.z) * 0.6 - 0.5
    d["y"] = rng.binomial(1, 1 / (1 + np.exp(-eta)))
    train, test = d.iloc[:2000], d.iloc[2000:]
    model = bstats.glm("y ~ bin(x, 20) + bin(z, 20) + bin(u, 20)", train, family="binomial")
    curve = model.fit_path().alo()
    assert list(curve.columns) == ["lam", "df", "alo_deviance", "high_leverage"]
    res = model.fit(lam="alo")
    assert res.lam_source == "alo" and res.lam == curve.attrs["lam_alo"]
    assert res.lam == curve.loc[curve.alo_deviance.idxmin(), "lam"]
    cv = model.fit_cv(folds=10, random_state=0).best_
    held = {name: bstats.heldout(r, test)["mean deviance"] for name, r in
            (("alo", res), ("cv", cv))}  # fmt: skip
    assert held["alo"] <= 1.01 * held["cv"]


def test_alo_is_refused_for_cox():
    d = _data("gaussian").assign(t=lambda f: f.x + 1.0, e=1)
    model = bstats.glm("Surv(t, e) ~ bin(y, 5)", d, family="cox")
    with pytest.raises(ValueError, match="Cox partial likelihood"):
        model.fit(lam="alo")
    with pytest.raises(ValueError, match="lam must be a non-negative number, 'theory' or 'alo'"):
        model.fit(lam="loo")


@pytest.mark.parametrize(
    "formula",
    [
        "y ~ bin(x, 8):C(g) + C(g) + bin(z, 6) + u",
        "y ~ bin(x, 8) + C(g) + bin(z, 6) + u - 1",
        "y ~ bin(x, 8, monotone='increasing') + ordered(k, levels=[0, 1, 2, 3])",
    ],
)
def test_the_segment_basis_spans_the_refits_design(formula):
    """ALO's labels-free basis (every segment's indicator) has the column space of the
    refit's reference-coded design, so the leverages are the same."""
    from binarsity_stats.model._alo import segment_indicators

    rng = np.random.default_rng(3)
    n = 400
    d = pd.DataFrame({"x": rng.uniform(size=n), "z": rng.normal(size=n), "u": rng.normal(size=n),
                      "g": rng.choice(["a", "b", "c"], n), "k": rng.integers(0, 4, n)})
    d["y"] = (d["x"] > 0.4) + 0.5 * (d["g"] == "b") + 0.3 * d["u"] + rng.normal(size=n)
    res = bstats.glm(formula, d).fit(lam=0.02)
    X_ref = np.asarray(res.selected_design()[0], dtype=np.float64)
    X_all = segment_indicators(res)

    def hat(X):
        return np.einsum("ij,jk,ik->i", X, np.linalg.pinv(X.T @ X, rcond=1e-12, hermitian=True),
                         X, optimize=True)  # fmt: skip

    assert np.linalg.matrix_rank(X_all) == np.linalg.matrix_rank(X_ref)
    np.testing.assert_allclose(hat(X_all), hat(X_ref), rtol=0, atol=1e-9)


def test_fit_alo_stops_where_the_curve_has_turned_and_matches_the_full_path():
    """``fit(lam="alo")`` solves a prefix of the default grid (stopping as CV's walk
    does) and picks the same λ as the curve of the whole path."""
    from binarsity_stats.model._alo import curve_turned

    d = _data("binomial", 1500, seed=5)
    model = bstats.glm(FORMULA, d, family="binomial")
    fit = model.fit(lam="alo")
    full = model.fit_path().alo()
    solved = fit.alo_curve
    assert len(solved) <= len(full)
    np.testing.assert_allclose(solved["lam"], full["lam"].iloc[: len(solved)], rtol=1e-12)
    np.testing.assert_allclose(solved["alo_deviance"],
                               full["alo_deviance"].iloc[: len(solved)], rtol=1e-9)  # fmt: skip
    assert fit.lam == solved.attrs["lam_alo"]
    assert solved["alo_deviance"].min() <= full["alo_deviance"].min() * 1.01
    if len(solved) < len(full):  # stopped early: the rule held at the last λ solved
        ses = [0.0] * len(solved)
        assert curve_turned(list(solved["alo_deviance"]), ses, 5)
    assert not curve_turned([3.0, 2.0, 1.0, 1.5, 1.6], [0.1] * 5, 5)
    assert curve_turned([3.0, 1.0, 2.0, 2.1, 2.2, 2.3, 2.4], [0.1] * 7, 5)
    assert not curve_turned([3.0, 1.0, 1.05, 2.1, 2.2, 2.3, 2.4], [0.1] * 7, 5)


def test_alo_in_row_blocks_equals_the_whole_design(monkeypatch):
    """The segment design is built a block of rows at a time: the leverages are those
    of the whole design (any block size: 1 row, an uneven split, all rows)."""
    from binarsity_stats.model import _alo

    rng = np.random.default_rng(4)
    n = 997
    d = pd.DataFrame({"x": rng.uniform(size=n), "z": rng.normal(size=n), "u": rng.normal(size=n),
                      "g": rng.choice(["a", "b", "c"], n)})  # fmt: skip
    d["y"] = rng.binomial(1, 1 / (1 + np.exp(-(1.0 * (d["x"] > 0.4) + 0.4 * d["u"]))))
    res = bstats.glm("y ~ bin(x, 12) + bin(z, 8):C(g) + C(g) + u", d,
                     family="binomial").fit(lam=0.005)  # fmt: skip
    X = _alo.segment_indicators(res)
    hess = np.empty(n)
    res.model.family.grad_hess_only(np.asarray(res.linear_predictor, dtype=np.float64),
                                    np.asarray(res.model.y, dtype=np.float64),
                                    np.asarray(res.model.sample_weight, dtype=np.float64), 1.0,
                                    np.empty(n), hess)  # fmt: skip
    A_inv = np.linalg.pinv(X.T @ (X * hess[:, None]), rcond=1e-12, hermitian=True)
    whole = np.clip(np.einsum("ij,jk,ik->i", X, A_inv, X) * hess, 0, 1)
    for floats in (1, 37 * X.shape[1], 1 << 22):
        monkeypatch.setattr(_alo, "BLOCK_FLOATS", floats)
        _, leverage = alo_linear_predictor(res)
        np.testing.assert_allclose(leverage, whole, rtol=1e-9, atol=1e-12)


def test_alo_memory_does_not_grow_with_rows_times_segments():
    """At 2e5 rows and ~100 segment columns the whole segment design would take 160 MB;
    ALO's peak allocation stays within a few row vectors plus one block."""
    import tracemalloc

    from binarsity_stats.model import _alo

    rng = np.random.default_rng(5)
    n = 200_000
    d = pd.DataFrame({f"x{i}": rng.uniform(size=n) for i in range(4)})
    eta = sum(np.sin(6 * d[f"x{i}"]) for i in range(4))
    d["y"] = eta + rng.normal(size=n)
    res = bstats.glm("y ~ " + " + ".join(f"bin(x{i}, 40)" for i in range(4)), d).fit(lam=1e-4)
    width = _alo._segment_layout(res)[1]
    assert width >= 60, width  # enough segments for the whole design to be large
    tracemalloc.start()
    try:
        alo_linear_predictor(res)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    whole = 8 * n * width
    bound = 12 * 8 * n + 3 * 8 * _alo.BLOCK_FLOATS + 8 * width * width * 4
    assert peak <= bound < whole, (peak, bound, whole)
