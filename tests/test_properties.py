"""Property-based tests (hypothesis): optimality, solver agreement and invariances.

What is proved here, for randomly drawn problems rather than hand-picked ones:

* ``prox_tv`` and ``prox_binarsity`` satisfy their own optimality conditions
  (design.md §2 applied to ½‖θ − v‖² + step·pen(θ) under n_jᵀθ_j = 0), checked from
  scratch here, for random weights (zeros and large ones), counts (zeros, unequal)
  and block sizes 1 and up; with equal counts the exact prox is the paper's Algorithm 1.
* ``cd`` and ``fista`` reach the same objective (both KKT-converged).
* The fit is invariant to the order of the rows, to strictly increasing transforms of
  a feature (quantile bins see ranks only: the codes, hence the fit, are bitwise
  identical), and to duplicating rows versus doubling their sample weight.
* A constant offset c is the intercept shifted by −c.
* λ ≥ λ_max (computed by ``_solvers.lambda_max`` from the fitted attributes) gives
  exactly zero effects, and λ < λ_max does not.

Examples are kept small (a few hundred rows at most, 40 examples per property, more
with ``BINARSITY_HYPOTHESIS_EXAMPLES``) so the file runs in well under a minute; on CI
(``CI=true``) the examples are derandomized so that a run is reproducible.
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal

from binarsity_stats import BinarsityGLM, ConvergenceWarning
from binarsity_stats.penalty._prox import paper_algorithm1, prox_binarsity, prox_tv
from binarsity_stats.engine._solvers import lambda_max

FAMILIES = ("gaussian", "binomial", "poisson")

#: Examples per property; raise it for a long bug hunt (e.g. 2000 in a nightly job).
EXAMPLES = int(os.environ.get("BINARSITY_HYPOTHESIS_EXAMPLES", "40"))

PROPERTY = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=os.environ.get("CI", "").lower() == "true",
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)


# ------------------------------------------------------------------- strategies


@st.composite
def chain_weights(draw, m: int) -> np.ndarray:
    """Penalty weights of a chain: zeros, moderate and large values mixed."""
    kinds = draw(st.lists(st.sampled_from(["zero", "mid", "large"]), min_size=m, max_size=m))
    vals = draw(st.lists(st.floats(0.01, 3.0), min_size=m, max_size=m))
    w = np.array([0.0 if k == "zero" else (1e3 * v if k == "large" else v)
                  for k, v in zip(kinds, vals, strict=True)])  # fmt: skip
    return w


@st.composite
def blocks(draw):
    """(v, block_ptr, weights, counts, step): 1–4 blocks of 1–9 levels."""
    sizes = draw(st.lists(st.integers(1, 9), min_size=1, max_size=4))
    d = sum(sizes)
    v = np.array(draw(st.lists(st.floats(-10, 10), min_size=d, max_size=d)))
    w = draw(chain_weights(d))
    count_kind = draw(st.sampled_from(["positive", "with zeros", "integers", "huge spread"]))
    raw = np.array(draw(st.lists(st.floats(0.0, 1.0), min_size=d, max_size=d)))
    if count_kind == "positive":
        counts = 0.1 + 5 * raw
    elif count_kind == "with zeros":
        counts = np.where(raw < 0.3, 0.0, 10 * raw)
    elif count_kind == "integers":
        counts = np.floor(1 + 20 * raw)
    else:
        counts = 10.0 ** (6 * raw - 3)
    step = draw(st.floats(0.0, 3.0))
    ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
    return v, ptr, w, counts, step


def _tv_optimality_violation(theta, v, w, counts, step):
    """Largest violation of the optimality conditions of one chain, from scratch.

    θ minimises ½‖θ − v‖² + step Σ_{k≥1} ω_k |θ_k − θ_{k−1}| subject to nᵀθ = 0 iff, with
    g = θ − v + μ n and S_l = Σ_{k≥l} g_k: S_0 = 0 (which fixes μ), and for l ≥ 1
    S_l = −step ω_l sign(θ_l − θ_{l−1}) where θ jumps, |S_l| ≤ step ω_l where it does not.
    ``counts=None``: no constraint (μ = 0).
    """
    g = theta - v
    total = counts.sum() if counts is not None else 0.0
    mu = -g.sum() / total if total > 0 else 0.0
    if counts is not None:
        g = g + mu * counts
    S = np.cumsum(g[::-1])[::-1]
    scale = 1.0 + np.abs(v).max() + (np.abs(mu) * counts.max() if total > 0 else 0.0)
    viol = [abs(S[0])]
    jump = np.diff(theta)
    bound = step * w[1:]
    fused = np.abs(jump) <= 1e-10 * scale
    viol += list(np.where(fused, np.maximum(np.abs(S[1:]) - bound, 0.0),
                          np.abs(S[1:] + bound * np.sign(jump))))  # fmt: skip
    return max(viol) / scale


# --------------------------------------------------------------------------- prox


@PROPERTY
@given(data=st.data())
def test_prox_tv_satisfies_its_optimality_conditions(data):
    m = data.draw(st.integers(1, 15), label="m")
    v = np.array(data.draw(st.lists(st.floats(-10, 10), min_size=m, max_size=m), label="v"))
    w = data.draw(chain_weights(m), label="w")
    step = data.draw(st.floats(0.0, 3.0), label="step")
    theta = prox_tv(v, w, step=step)
    assert theta.shape == v.shape and np.all(np.isfinite(theta))
    assert _tv_optimality_violation(theta, v, w, None, step) <= 1e-9 * m


@PROPERTY
@given(problem=blocks())
def test_prox_binarsity_satisfies_its_optimality_conditions(problem):
    v, ptr, w, counts, step = problem
    theta = prox_binarsity(v, ptr, w, counts, step=step)
    assert np.all(np.isfinite(theta))
    for j in range(len(ptr) - 1):
        s, e = ptr[j], ptr[j + 1]
        n_j = counts[s:e]
        # the linear constraint (vacuous when the block has no mass)
        assert abs(n_j @ theta[s:e]) <= 1e-9 * n_j.sum() * (1 + np.abs(v[s:e]).max())
        viol = _tv_optimality_violation(theta[s:e], v[s:e], w[s:e], n_j, step)
        assert viol <= 1e-8 * (e - s), (j, viol)


@PROPERTY
@given(problem=blocks())
def test_prox_binarsity_with_equal_counts_is_the_papers_algorithm_1(problem):
    v, ptr, w, _, step = problem
    exact = prox_binarsity(v, ptr, w, None, step=step)
    assert_allclose(
        exact, paper_algorithm1(v, ptr, w, step=step), atol=1e-9 * (1 + np.abs(v).max())
    )
    # counts=None means equal counts: any constant count vector gives the same prox
    assert_allclose(exact, prox_binarsity(v, ptr, w, np.full(len(v), 3.5), step=step),
                    atol=1e-9 * (1 + np.abs(v).max()))  # fmt: skip


# --------------------------------------------------------------------- problems


@st.composite
def glm_problems(draw, families=FAMILIES):
    """A small random GLM problem: data from a seed, shape and family drawn."""
    family = draw(st.sampled_from(families))
    n = draw(st.integers(30, 200))
    p = draw(st.integers(1, 3))
    n_bins = draw(st.integers(2, 10))
    seed = draw(st.integers(0, 2**32 - 1))
    ties = draw(st.booleans())
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    if ties:  # integer-valued features: heavy ties, fewer distinct values than bins
        X = np.round(3 * X)
    eta = 0.8 * np.sign(X[:, 0]) + (0.5 * np.cos(2 * X[:, -1]) if p > 1 else 0.0)
    if family == "gaussian":
        y = eta + rng.normal(size=n)
    elif family == "binomial":
        y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    else:
        y = rng.poisson(np.exp(eta - 0.5)).astype(float)
    weighted = draw(st.booleans())
    sw = rng.uniform(0.2, 3.0, n) if weighted else None
    return {"family": family, "X": X, "y": y, "n_bins": n_bins, "sw": sw, "rng": rng}


def _fit(prob, X=None, y=None, sw="same", offset=None, **kw):
    est = BinarsityGLM(family=prob["family"], n_bins=prob["n_bins"],
                       tol=kw.pop("tol", 1e-10), max_iter=kw.pop("max_iter", 100_000), **kw)  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est.fit(prob["X"] if X is None else X, prob["y"] if y is None else y,
                sample_weight=prob["sw"] if isinstance(sw, str) else sw, offset=offset)  # fmt: skip
    return est


def _coef_atol(est):
    return 1e-6 * (1.0 + np.abs(est.coef_).max(initial=0.0) + abs(est.intercept_))


# ---------------------------------------------------------------- solver agreement


@PROPERTY
@given(prob=glm_problems(), log_lam=st.floats(-4.0, -1.0))
def test_cd_and_fista_agree_in_objective(prob, log_lam):
    lam = 10.0**log_lam
    cd = _fit(prob, lam=lam, solver="cd")
    fista = _fit(prob, lam=lam, solver="fista", tol=1e-9)
    assert cd.converged_ and fista.converged_
    F = max(abs(cd.objective_), 1.0)
    assert abs(cd.objective_ - fista.objective_) <= 1e-7 * F, (cd.objective_, fista.objective_)


# ---------------------------------------------------------------------- invariances


@PROPERTY
@given(prob=glm_problems(), perm_seed=st.integers(0, 2**32 - 1))
def test_fit_is_invariant_to_row_order(prob, perm_seed):
    ref = _fit(prob, lam=1e-3)
    perm = np.random.default_rng(perm_seed).permutation(len(prob["y"]))
    sw = None if prob["sw"] is None else prob["sw"][perm]
    est = _fit(prob, X=prob["X"][perm], y=prob["y"][perm], sw=sw, lam=1e-3)
    for a, b in zip(est.binarizer_.edges_, ref.binarizer_.edges_, strict=True):
        assert_array_equal(a, b)
    assert_array_equal(est.bin_counts_ > 0, ref.bin_counts_ > 0)
    assert_allclose(est.coef_, ref.coef_, atol=_coef_atol(ref))
    assert_allclose(est.intercept_, ref.intercept_, atol=_coef_atol(ref))


TRANSFORMS = {
    "affine": lambda x: 2.5 * x + 7.0,
    "exp": lambda x: np.exp(x / 400.0),
    "cube": lambda x: x**3,
    "sinh": lambda x: np.sinh(x / 150.0),
    "log-shift": lambda x: np.log(x + 1001.0),
}


@PROPERTY
@given(
    prob=glm_problems(),
    name=st.sampled_from(sorted(TRANSFORMS)),
    values=st.lists(st.integers(-1000, 1000), min_size=30, max_size=200),
)
def test_fit_is_invariant_to_increasing_transforms_of_a_feature(prob, name, values):
    n = len(prob["y"])
    raw = np.resize(np.asarray(values, dtype=np.float64), n)  # integers: no float ties
    X = np.column_stack([raw, prob["X"][:, 1:]]) if prob["X"].shape[1] > 1 else raw[:, None]
    moved = X.copy()
    moved[:, 0] = TRANSFORMS[name](raw)
    # rounding kept the transform strictly increasing on these values (no new ties)
    assume(np.unique(moved[:, 0]).size == np.unique(raw).size)
    a = _fit(prob, X=X, lam=1e-3)
    b = _fit(prob, X=moved, lam=1e-3)
    assert_array_equal(a.binarizer_.transform(X), b.binarizer_.transform(moved))
    assert_array_equal(a.coef_, b.coef_)
    assert a.intercept_ == b.intercept_


@PROPERTY
@given(prob=glm_problems(), dup_seed=st.integers(0, 2**32 - 1))
def test_duplicated_rows_equal_doubled_sample_weights(prob, dup_seed):
    n = len(prob["y"])
    base_w = np.ones(n) if prob["sw"] is None else prob["sw"]
    dup = np.random.default_rng(dup_seed).random(n) < 0.3
    rows = np.concatenate([np.arange(n), np.flatnonzero(dup)])
    repeated = _fit(prob, X=prob["X"][rows], y=prob["y"][rows], sw=base_w[rows], lam=1e-3)
    doubled = _fit(prob, sw=base_w * np.where(dup, 2.0, 1.0), lam=1e-3)
    for a, b in zip(repeated.binarizer_.edges_, doubled.binarizer_.edges_, strict=True):
        assert_array_equal(a, b)
    assert_allclose(repeated.bin_counts_, doubled.bin_counts_, rtol=1e-12)
    assert_allclose(repeated.coef_, doubled.coef_, atol=_coef_atol(doubled))
    assert_allclose(repeated.intercept_, doubled.intercept_, atol=_coef_atol(doubled))
    assert_allclose(repeated.objective_, doubled.objective_, rtol=1e-9, atol=1e-12)


@PROPERTY
@given(prob=glm_problems(), c=st.floats(-3.0, 3.0))
def test_constant_offset_is_a_shifted_intercept(prob, c):
    ref = _fit(prob, lam=1e-3)
    est = _fit(prob, lam=1e-3, offset=np.full(len(prob["y"]), c))
    assert_allclose(est.coef_, ref.coef_, atol=_coef_atol(ref))
    assert_allclose(est.intercept_, ref.intercept_ - c, atol=_coef_atol(ref))
    assert_allclose(est.objective_, ref.objective_, rtol=1e-9, atol=1e-12)


@PROPERTY
@given(prob=glm_problems(), with_offset=st.booleans(), above=st.floats(1e-6, 10.0))
def test_lambda_at_or_above_lambda_max_gives_zero_effects(prob, with_offset, above):
    n = len(prob["y"])
    off = prob["rng"].normal(scale=0.3, size=n) if with_offset else None
    first = _fit(prob, lam=1e-3, offset=off)
    codes = first.binarizer_.transform_codes(prob["X"])
    lmax = lambda_max(
        codes, first.block_ptr_, prob["y"], family=prob["family"],
        penalty_weights=first.penalty_weights_, sample_weight=prob["sw"], offset=off,
    )  # fmt: skip
    assert np.isfinite(lmax) and lmax >= 0
    flat = _fit(prob, lam=lmax * (1.0 + above) + 1e-300, offset=off)
    assert np.all(flat.coef_ == 0.0)
    if lmax > 1e-8:
        # strictly below λ_max something is selected (the bound is tight)
        below = _fit(prob, lam=0.9 * lmax, offset=off)
        assert np.any(below.coef_ != 0.0)


@pytest.mark.parametrize("family", FAMILIES)
def test_lambda_max_is_tight_on_a_fixed_problem(family):
    """The hypothesis test above, pinned on one problem per family (a quick smoke)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    y = {"gaussian": X[:, 0] + rng.normal(size=200),
         "binomial": (X[:, 0] + rng.normal(size=200) > 0).astype(float),
         "poisson": rng.poisson(np.exp(0.5 * X[:, 0])).astype(float)}[family]  # fmt: skip
    prob = {"family": family, "X": X, "y": y, "n_bins": 8, "sw": None, "rng": rng}
    first = _fit(prob, lam=1e-3)
    codes = first.binarizer_.transform_codes(X)
    lmax = lambda_max(codes, first.block_ptr_, y, family=family,
                      penalty_weights=first.penalty_weights_)  # fmt: skip
    assert np.all(_fit(prob, lam=lmax * (1 + 1e-6)).coef_ == 0.0)
    assert np.any(_fit(prob, lam=lmax * (1 - 1e-3)).coef_ != 0.0)
