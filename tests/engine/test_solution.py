"""Unit tests of ``binarsity_stats.engine._solution``: the ``Solution`` record, the
initial point every solver starts from, and ``_finish`` (back to the user's scale of
the dense columns, the objective, the warnings of a failed or unconverged solve)."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose

from binarsity_stats.engine._solution import ConvergenceWarning, Solution, _finish, _initial_point
from binarsity_stats.engine._solvers import _Problem
from binarsity_stats.kernels._histogram import bin_sums_all
from binarsity_stats.penalty._penalty import penalty_weights


def _data(n=120, seed=0, sw_scale=1.0):
    rng = np.random.default_rng(seed)
    sizes = [4, 3]
    codes = np.stack([rng.integers(0, s, size=n) for s in sizes]).astype(np.uint8)
    bp = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
    Z = rng.normal(size=(n, 2)) * [3.0, 0.1] + [10.0, -1.0]  # far from centred and unit
    y = rng.poisson(2.0, size=n).astype(float)
    sw = rng.uniform(0.5, 2.0, n) * sw_scale
    offset = rng.normal(scale=0.1, size=n)
    counts = np.zeros(bp[-1])
    bin_sums_all(codes, bp, sw, counts)
    w = penalty_weights("theory", counts, bp)
    return codes, bp, y, Z, sw, offset, w, counts


def _problem(data, family="poisson", fit_intercept=True):
    codes, bp, y, Z, sw, offset, w, _ = data
    return _Problem(codes, bp, y, family, w, dense=Z, sample_weight=sw, offset=offset,
                    fit_intercept=fit_intercept)  # fmt: skip


def _solution(coef, dense_coef, intercept):
    return Solution(coef=np.asarray(coef, float), dense_coef=np.asarray(dense_coef, float),
                    intercept=intercept, lam=0.1, objective=0.0, kkt_violation=0.0,
                    converged=True, n_iter=1, n_sweeps=1, eta=np.zeros(1),
                    bin_counts=np.zeros(1))  # fmt: skip


def test_solution_fields_and_repr_leave_out_the_row_vectors():
    names = [f.name for f in dataclasses.fields(Solution)]
    assert names == ["coef", "dense_coef", "intercept", "lam", "objective", "kkt_violation",
                     "converged", "n_iter", "n_sweeps", "eta", "bin_counts"]  # fmt: skip
    sol = _solution([1.0], [], 0.5)
    text = repr(sol)
    assert "eta=" not in text and "bin_counts=" not in text and "intercept=0.5" in text


def test_convergence_warning_is_a_user_warning():
    assert issubclass(ConvergenceWarning, UserWarning)


def test_cold_start_is_the_intercept_only_fit():
    data = _data()
    y, sw, offset = data[2], data[4], data[5]
    theta, beta, b0 = _initial_point(_problem(data), None)
    assert np.all(theta == 0) and theta.shape == (7,)
    assert np.all(beta == 0) and beta.shape == (2,)
    # poisson with an offset: Σ s (exp(b0 + o) − y) = 0  ⇔  b0 = log(Σ s y / Σ s e^o)
    assert_allclose(b0, np.log(np.sum(sw * y) / np.sum(sw * np.exp(offset))), rtol=1e-12)


def test_cold_start_without_intercept_is_zero():
    theta, beta, b0 = _initial_point(_problem(_data(), fit_intercept=False), None)
    assert b0 == 0.0 and not theta.any() and not beta.any()


def test_warm_start_round_trips_through_the_internal_scale_of_the_dense_columns():
    data = _data()
    prob = _problem(data)
    start = _solution(np.linspace(-0.3, 0.3, 7), [0.25, -4.0], 0.7)
    theta, beta, b0 = _initial_point(prob, start)
    assert theta is not start.coef  # a copy: the solver may write into it
    assert_allclose(theta, start.coef)
    # η is the same in both parametrisations
    Z = data[3]
    eta_user = start.intercept + Z @ start.dense_coef
    eta_internal = prob.linear_predictor(np.zeros(7), beta, b0) - data[5]
    assert_allclose(eta_internal, eta_user, rtol=1e-12, atol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        back = _finish(prob, theta, beta, b0, 0.1, prob.linear_predictor(theta, beta, b0),
                       1.0, False, 0, 0, 1e-7)  # fmt: skip
    assert_allclose(back.dense_coef, start.dense_coef, rtol=1e-12)
    assert_allclose(back.intercept, start.intercept, rtol=1e-12)


def test_warm_start_without_intercept_ignores_its_intercept():
    data = _data()
    prob = _problem(data, fit_intercept=False)
    start = _solution(np.zeros(7), [0.0, 0.0], 5.0)
    _, _, b0 = _initial_point(prob, start)
    assert b0 == 0.0


@pytest.mark.parametrize(
    ("start", "error", "pattern"),
    [
        ("a solution", TypeError, r"warm_start must be a Solution .* got str"),
        (True, TypeError, r"warm_start must be a Solution"),
        ("shape", ValueError, r"warm_start does not match the design"),
        ("nan", ValueError, r"warm_start holds NaN or infinite coefficients"),
    ],
)
def test_a_bad_warm_start_is_refused_by_name(start, error, pattern):
    if start == "shape":
        start = _solution(np.zeros(6), [0.0, 0.0], 0.0)
    elif start == "nan":
        start = _solution(np.zeros(7), [np.nan, 0.0], 0.0)
    with pytest.raises(error, match=pattern):
        _initial_point(_problem(_data()), start)


def test_finish_objective_and_bin_counts_in_the_users_units():
    # weights of 1e6: the problem works on weights normalised to [1, 2); the record
    # gives the bin counts in the user's units, computed here by a plain loop
    data = _data(sw_scale=1e6)
    codes, bp, y, Z, sw, offset, w, _ = data
    prob = _problem(data)
    theta = np.array([0.1, -0.1, 0.2, -0.2, 0.05, 0.0, -0.05])
    beta_user = np.array([0.02, 0.3])
    start = _solution(theta, beta_user, 0.4)
    th, beta, b0 = _initial_point(prob, start)
    eta = prob.linear_predictor(th, beta, b0)
    sol = _finish(prob, th, beta, b0, 0.05, eta, 1e-9, True, 3, 7, 1e-7)
    expected_counts = np.zeros(bp[-1])
    for j in range(len(bp) - 1):
        for i in range(codes.shape[1]):
            expected_counts[bp[j] + codes[j, i]] += sw[i]
    assert_allclose(sol.bin_counts, expected_counts, rtol=1e-13)
    # objective: the weighted poisson loss (up to its constant) + λ Σ ω |Δθ|, from scratch
    eta_ref = offset + 0.4 + Z @ beta_user + sum(theta[bp[j] + codes[j]] for j in range(2))
    pen = float(w[1:] @ np.abs(np.diff(theta)))
    loss = float(prob.loss(eta_ref))
    assert_allclose(sol.objective, loss + 0.05 * pen, rtol=1e-12)
    assert (sol.lam, sol.kkt_violation, sol.converged, sol.n_iter, sol.n_sweeps) == (0.05, 1e-9, True, 3, 7)
    assert type(sol.n_iter) is int and type(sol.converged) is bool


def test_finish_warns_when_not_converged():
    data = _data()
    prob = _problem(data)
    th, beta, b0 = _initial_point(prob, None)
    eta = prob.linear_predictor(th, beta, b0)
    with pytest.warns(ConvergenceWarning, match=r"after 4 iterations \(9 passes\) with a KKT violation of 0\.5 > tol=1e-07"):
        sol = _finish(prob, th, beta, b0, 0.1, eta, 0.5, False, 4, 9, 1e-7)
    assert sol.converged is False


def test_finish_never_reports_a_non_finite_fit_as_converged():
    data = _data()
    prob = _problem(data)
    th, beta, b0 = _initial_point(prob, None)
    th = th.copy()
    th[2] = np.nan
    eta = prob.linear_predictor(np.zeros_like(th), beta, b0)
    with pytest.warns(ConvergenceWarning, match=r"ended on non-finite values"):
        sol = _finish(prob, th, beta, b0, 0.1, eta, 0.0, True, 1, 1, 1e-7)
    assert sol.converged is False


def test_finish_is_silent_on_a_converged_finite_fit():
    data = _data()
    prob = _problem(data)
    th, beta, b0 = _initial_point(prob, None)
    eta = prob.linear_predictor(th, beta, b0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sol = _finish(prob, th, beta, b0, 0.1, eta, 0.0, True, 1, 1, 1e-7)
    assert sol.converged is True
