"""Cross-validation fold scores are the exact held-out deviance at any scale of η.

The fold scores used to go η → μ = g⁻¹(η) → deviance(y, μ): Cox clipped η at 700 (and
log(max(μ, 1e-300)) floored it at −690.8), the binomial clipped μ to [1e-300, 1 − 1e-16]
(a row's deviance capped at 2 log 1e16 ≈ 73.7), Poisson and the log-link statsmodels
families overflowed or underflowed μ to inf / 0 (an infinite score where the deviance is
finite). Now :meth:`Family.deviance_eta` scores from η; the references below are
statsmodels' PHReg (Cox) and the deviance written out in the standard library's
decimal arithmetic at 50 digits.
"""

from __future__ import annotations

import decimal

import numpy as np
import pytest

from binarsity_stats.engine import _solvers
from binarsity_stats.engine._cv import cross_validate
from binarsity_stats.engine._path import PathData
from binarsity_stats.engine._scoring import score
from binarsity_stats.families import _cox
from binarsity_stats.families._families import get_family

_CTX = decimal.Context(prec=50, Emax=10**6, Emin=-(10**6))


def _binned(rng, n, k=4):
    x = rng.uniform(0, 1, size=(n, 2))
    edges = [np.quantile(col, np.linspace(0, 1, k + 1)[1:-1]) for col in x.T]
    codes = np.array([np.searchsorted(e, col) for e, col in zip(edges, x.T, strict=True)],
                     dtype=np.uint8)  # fmt: skip
    bp = np.arange(0, k * 3, k).astype(np.intp)
    w = np.ones(int(bp[-1]))
    w[bp[:-1]] = 0.0
    onehot = np.zeros((n, int(bp[-1])))
    for j in range(codes.shape[0]):
        onehot[np.arange(n), bp[j] + codes[j]] = 1.0
    return x, codes, bp, w, onehot


def _cox_data(seed=3, n=90, low=-700.0):
    rng = np.random.RandomState(seed)
    x, codes, bp, w, onehot = _binned(rng, n)
    eta0 = 1.0 * (x[:, 0] > 0.5)
    t = np.ceil(rng.exponential(np.exp(-eta0)) * 20)  # tied times
    c = np.ceil(rng.exponential(1.5, n) * 20)
    time, event = np.minimum(t, c), (t <= c).astype(float)
    # tiny exposures: log-exposure offsets below the old floor log(1e-300) = −690.8 on a
    # third of the rows (at −800: beyond the exponent range of e^{η − max η})
    off = np.where(rng.uniform(size=n) < 0.3, low, 0.0)
    return time, event, off, codes, bp, w, onehot


_OPTS = {"tol": 1e-10, "max_iter": 5000}


@pytest.mark.parametrize("low", [-700.0, -800.0])
def test_cox_fold_scores_equal_the_held_out_deviance_with_huge_offsets(low):
    """coxnet's fold score [D(all) − D(train)] / events at the fold's fit, D from a
    50-digit partial likelihood and (at −700) statsmodels' PHReg, whose own sums
    underflow at −800. Before the fix the folds were off by ~9 per event at −700 and
    −inf at −800 (a risk set of low-offset rows only)."""
    sm_hr = pytest.importorskip("statsmodels.duration.hazard_regression")
    time, event, off, codes, bp, w, X = _cox_data(low=low)
    n = time.size
    y = _cox.encode(time, event)
    data = PathData(codes, bp, y, "cox", w, offset=off, fit_intercept=False)
    folds = np.arange(n) % 3
    lams = data.lambda_max() * np.array([0.5, 0.05])
    cv = cross_validate(data, lams, folds, opts=_OPTS, early_stopping=False)
    one = np.ones(n)
    for f in range(3):
        tr = folds != f
        sat = _cox.saturated_loss(y, one) - _cox.saturated_loss(y[tr], one[tr])
        for i, lam in enumerate(lams):
            sol = _solvers.solve(codes[:, tr], bp, y[tr], family="cox", lam=lam,
                                 penalty_weights=w, offset=off[tr], fit_intercept=False,
                                 **_OPTS)  # fmt: skip
            eta = X @ sol.coef + off
            loss_all = _decimal_cox_loss(eta, time, event, one)
            loss_tr = _decimal_cox_loss(eta[tr], time[tr], event[tr], one[tr])
            want = 2 * (loss_all - loss_tr - sat) / event[~tr].sum()
            np.testing.assert_allclose(cv.fold_scores[f, i], want, rtol=1e-9)
            if low > -745:
                ll_all = sm_hr.PHReg(time, X, status=event, offset=off).loglike(sol.coef)
                ll_tr = sm_hr.PHReg(time[tr], X[tr], status=event[tr], offset=off[tr])
                want = 2 * (ll_tr.loglike(sol.coef) - ll_all - sat) / event[~tr].sum()
                np.testing.assert_allclose(cv.fold_scores[f, i], want, rtol=1e-9)


def test_cox_fold_scores_are_invariant_to_a_constant_in_eta():
    """The partial likelihood does not see a constant added to η: an offset shifted by
    699.9 (η of the rows with a positive effect beyond the old clip at 700) or −750
    gives the same fold scores."""
    time, event, _, codes, bp, w, _ = _cox_data(seed=4, n=60)
    y = _cox.encode(time, event)
    folds = np.arange(60) % 3
    base = None
    for shift in (0.0, 699.9, -750.0):
        data = PathData(codes, bp, y, "cox", w, offset=np.full(60, shift), fit_intercept=False)
        lams = data.lambda_max() * np.array([0.5, 0.05])
        got = cross_validate(data, lams, folds, opts=_OPTS, early_stopping=False).fold_scores
        if base is None:
            base = got
        np.testing.assert_allclose(got, base, rtol=1e-8)


def test_cox_deviance_eta_takes_a_cached_saturated_loss():
    time, event, off, *_ = _cox_data(seed=5, n=40)
    y = _cox.encode(time, event)
    fam, sw = get_family(("cox", "efron")), np.linspace(0.5, 2.0, 40)
    eta = off + np.linspace(-1, 1, 40)
    want = fam.deviance_eta(y, eta, sw)
    assert fam.deviance_eta(y, eta, sw, saturated=_cox.saturated_loss(y, sw)) == want
    # = −2 (partial log-likelihood − saturated): Efron's loss at the unclipped η
    loss = _cox.loss_grad_hess(eta, y, sw, ties="efron")
    np.testing.assert_allclose(want, 2 * (loss - _cox.saturated_loss(y, sw)), rtol=1e-13)


def _ref_unit_deviance(name, y, eta, p=None):
    """2 [ℓ(y; y) − ℓ(g⁻¹(η); y)] in 50-digit decimal arithmetic (the reference)."""
    c = _CTX
    D = decimal.Decimal
    y, eta = D(float(y)), D(float(eta))

    def log(v):
        return c.ln(v)

    def xlogx(v):
        return v * log(v) if v > 0 else D(0)

    if name == "binomial":  # log μ = −log(1 + e^{−η}), log(1 − μ) = −log(1 + e^η)
        ll = -y * log(1 + c.exp(-eta)) - (1 - y) * log(1 + c.exp(eta))
        return 2 * (xlogx(y) + xlogx(1 - y) - ll)
    mu = c.exp(eta)
    if p == 1:
        return 2 * ((y * log(y / mu) if y > 0 else D(0)) - (y - mu))
    if p == 2:
        return 2 * ((y - mu) / mu - log(y / mu))
    a, b = D(1 - p), D(2 - p)
    pw = lambda v, e: c.exp(e * log(v)) if v > 0 else D(0)  # noqa: E731
    return 2 * (pw(y, b) / (a * b) - y * pw(mu, a) / a + pw(mu, b) / b)


def _ref_mean(name, y, eta, sw, p=None):
    tot = sum(decimal.Decimal(float(s)) * _ref_unit_deviance(name, a, b, p)
              for s, a, b in zip(sw, y, eta, strict=True))  # fmt: skip
    return float(tot / decimal.Decimal(float(np.sum(sw))))


_CASES = [
    # family, its p (log link), y, η: tails where μ rounds to 0 or 1, over- or underflows
    ("binomial", None, [0, 1, 1, 0, 0.3, 1, 0], [40, -40, -1000, 1000, 60, 37, -36]),
    ("poisson", 1, [3, 0, 2, 1e6, 0.5], [-800, -800, 40, np.log(1e6) + 1e-9, 705]),
    ("gamma", 2, [1.5, 2e-300, 1e250, 3.0, 1.0], [-600, 600, 500, np.log(3.0) + 1e-7, 710]),
    ("tweedie", 1.5, [0, 2.0, 1e-200, 1e200, 4.0], [-800, -700, 400, -300, 1.0]),
]


def _family(name, p):
    if name == "tweedie":
        return get_family(("tweedie", p))
    return get_family(name)


@pytest.mark.parametrize("name,p,y,eta", _CASES)
def test_deviance_score_is_exact_in_the_tails_of_eta(name, p, y, eta):
    y, eta = np.array(y, dtype=float), np.array(eta, dtype=float)
    sw = np.linspace(0.5, 2.0, y.size)
    want = _ref_mean(name, y, eta, sw, p)
    got = score(_family(name, p), "deviance", y, eta, sw)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    if name == "binomial":  # statsmodels' Binomial family (logit) takes the same road
        import statsmodels.api as sm

        got = score(get_family(sm.families.Binomial(sm.families.links.Logit())),
                    "deviance", y, eta, sw)  # fmt: skip
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_binomial_fold_scores_equal_the_held_out_deviance_with_huge_offsets():
    """A fold score is the held-out deviance of the fold's fit, here with rows whose
    offset puts μ within 1e-16 of 0 or 1 against their label (scored 73.7 each before)."""
    rng = np.random.RandomState(7)
    n = 90
    x, codes, bp, w, X = _binned(rng, n)
    y = (rng.uniform(size=n) < 0.4 + 0.3 * (x[:, 0] > 0.5)).astype(float)
    off = np.zeros(n)
    big = rng.choice(n, 12, replace=False)
    off[big] = np.where(y[big] == 0, 45.0, -45.0)
    data = PathData(codes, bp, y, "binomial", w, offset=off)
    folds = np.arange(n) % 3
    lams = data.lambda_max() * np.array([0.5, 0.05])
    cv = cross_validate(data, lams, folds, opts=_OPTS, early_stopping=False)
    for f in range(3):
        tr, te = folds != f, folds == f
        for i, lam in enumerate(lams):
            sol = _solvers.solve(codes[:, tr], bp, y[tr], family="binomial", lam=lam,
                                 penalty_weights=w, offset=off[tr], **_OPTS)  # fmt: skip
            eta = X[te] @ sol.coef + sol.intercept + off[te]
            want = _ref_mean("binomial", y[te], eta, np.ones(te.sum()))
            np.testing.assert_allclose(cv.fold_scores[f, i], want, rtol=1e-10)


def _decimal_cox_loss(eta, time, event, sw, ties="breslow"):
    """The negative log partial likelihood in 50-digit decimal arithmetic (one stratum)."""
    c, D = _CTX, decimal.Decimal
    w = [D(float(s)) * c.exp(D(float(e))) for s, e in zip(sw, eta, strict=True)]
    loss = D(0)
    for t in sorted(set(time[event > 0])):
        at = [i for i in range(time.size) if time[i] >= t]
        evs = [i for i in range(time.size) if time[i] == t and event[i] > 0]
        d = sum(D(float(sw[i])) for i in evs)
        risk = sum(w[i] for i in at)
        F = sum(w[i] for i in evs)
        loss -= sum(D(float(sw[i])) * D(float(eta[i])) for i in evs)
        if ties == "breslow" or len(evs) == 1:
            loss += d * c.ln(risk)
        else:
            m = len(evs)
            loss += sum(d / m * c.ln(risk - D(r) / m * F) for r in range(m))
    return float(loss)


@pytest.mark.parametrize("ties", ["breslow", "efron"])
def test_cox_loss_is_exact_when_eta_spans_more_than_the_exponent_range(ties):
    """η spanning more than ~745 (e^{η − max η} underflows to 0 for the lowest rows):
    the loss, gradient and curvature come from log-space risk-set sums, equal to a
    50-digit reference (the loss) and to the kernel on the same η brought within range
    (the low rows' risk is negligible there too)."""
    rng = np.random.RandomState(11)
    n = 40
    time = rng.choice(np.arange(1.0, 12.0), n)  # ties
    event = rng.randint(0, 2, n).astype(float)
    event[time == time.max()] = 1.0  # the last risk set holds only low-η rows below
    sw = rng.uniform(0.5, 2.0, n)
    eta = rng.normal(size=n)
    low = time >= np.quantile(time, 0.6)
    eta[low] -= 800.0
    y = _cox.encode(time, event)
    want = _decimal_cox_loss(eta, time, event, sw, ties)
    g, h = np.empty(n), np.empty(n)
    got = _cox.loss_grad_hess(eta, y, sw, 1.0, g, h, ties)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert np.all(np.isfinite(g)) and np.all(np.isfinite(h))
    # the gradient by finite differences of the 50-digit loss, in two rows
    for i in (int(np.flatnonzero(low)[0]), int(np.flatnonzero(~low)[0])):
        step = np.zeros(n)
        step[i] = 1e-6
        fd = (_decimal_cox_loss(eta + step, time, event, sw, ties)
              - _decimal_cox_loss(eta - step, time, event, sw, ties)) / 2e-6  # fmt: skip
        np.testing.assert_allclose(g[i], fd, rtol=1e-6, atol=1e-9)
    # and the deviance of the family (the fold score's) is the same function
    fam = get_family(("cox", ties))
    dev = fam.deviance_eta(y, eta, sw)
    np.testing.assert_allclose(dev, 2 * (want - _cox.saturated_loss(y, sw)), rtol=1e-12)


@pytest.mark.parametrize("ties", ["breslow", "efron"])
def test_log_space_cox_sums_equal_the_kernel_within_range(ties):
    """The log-space path (η ranges beyond WIDE_ETA) is the kernel's function: equal
    loss, gradient and curvature on random tied, weighted, stratified data (zero
    weights included), and unchanged by a shift of η by 5,000."""
    rng = np.random.RandomState(12)
    for trial in range(12):
        n = rng.randint(1, 50)
        t = rng.choice(rng.uniform(0, 5, max(1, n // 3)), n)
        strata = rng.randint(0, 2, n) if trial % 2 else None
        y = _cox.encode(t, rng.randint(0, 2, n), strata)
        sw = rng.uniform(0, 2, n) * (rng.uniform(size=n) > 0.1)
        eta = rng.normal(size=n) * 3
        g1, h1, g2, h2 = (np.empty(n) for _ in range(4))
        want = _cox.loss_grad_hess(eta, y, sw, 0.7, g1, h1, ties)
        got = _cox._loss_grad_hess_wide(eta, y, sw, 0.7, g2, h2, ties)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(g2, g1, rtol=1e-10, atol=1e-13)
        np.testing.assert_allclose(h2, h1, rtol=1e-10, atol=1e-13)
        shifted = _cox._loss_grad_hess_wide(eta + 5000.0, y, sw, ties=ties)
        np.testing.assert_allclose(shifted, want, rtol=1e-10, atol=1e-10)


def test_reported_deviances_are_exact_with_huge_offsets():
    """``results.deviance`` and ``null_deviance`` come from η too: a Cox fit with
    log-exposure offsets of −700 (η floored at −690.8 through μ before) and a binomial
    fit with rows at offset ±45 against their label (73.7 per row before)."""
    pd = pytest.importorskip("pandas")
    import binarsity_stats as bs

    time, event, off, codes, *_ = _cox_data(seed=6, n=80)
    df = pd.DataFrame({"time": time, "event": event, "x": codes[0].astype(float), "o": off})
    res = bs.glm("Surv(time, event) ~ bin(x, 4) + offset(o)", df, family="cox").fit(lam=0.01)
    y, one = _cox.encode(time, event), np.ones(time.size)
    sat = _cox.saturated_loss(y, one)
    eta = res.predict(df, type="linear")
    want = 2 * (_decimal_cox_loss(eta, time, event, one) - sat)
    np.testing.assert_allclose(res.deviance, want, rtol=1e-10)
    want0 = 2 * (_decimal_cox_loss(off, time, event, one) - sat)
    np.testing.assert_allclose(res.null_deviance, want0, rtol=1e-10)
    # the partial log-likelihood too (−L(η))
    np.testing.assert_allclose(res.llf, -_decimal_cox_loss(eta, time, event, one), rtol=1e-10)

    rng = np.random.RandomState(8)
    n = 60
    yb = (rng.uniform(size=n) < 0.5).astype(float)
    o = np.where(rng.uniform(size=n) < 0.2, np.where(yb == 0, 45.0, -45.0), 0.0)
    dfb = pd.DataFrame({"y": yb, "x": rng.uniform(size=n), "o": o})
    res = bs.glm("y ~ bin(x, 3) + offset(o)", dfb, family="binomial").fit(lam=0.05)
    eta = res.predict(dfb, type="link")
    np.testing.assert_allclose(res.deviance, n * _ref_mean("binomial", yb, eta, np.ones(n)),
                               rtol=1e-10)  # fmt: skip


@pytest.mark.parametrize("weighted", [False, True])
def test_cox_concordance_fold_scores_are_harrell_c_of_the_held_out_rows(weighted):
    """scoring='concordance' (glmnet's type.measure="C"): each fold's score is Harrell's
    C of its held-out rows at the fold's fit (pairs within strata, case weights), and the
    higher mean wins λ."""
    rng = np.random.RandomState(8)
    time, event, _, codes, bp, w, X = _cox_data(seed=8, n=150, low=0.0)
    n = time.size
    g = rng.randint(0, 2, n)
    sw = rng.uniform(0.5, 2.0, n) if weighted else np.ones(n)
    y = _cox.encode(time, event, g)
    data = PathData(codes, bp, y, "cox", w, sample_weight=sw, fit_intercept=False)
    folds = np.arange(n) % 3
    lams = data.lambda_max() * np.array([0.5, 0.1, 0.02])
    cv = cross_validate(data, lams, folds, scoring="concordance", opts=_OPTS,
                        early_stopping=False)  # fmt: skip
    for f in range(3):
        tr, te = folds != f, folds == f
        for i, lam in enumerate(lams):
            sol = _solvers.solve(codes[:, tr], bp, y[tr], family="cox", lam=lam,
                                 penalty_weights=w, sample_weight=sw[tr],
                                 fit_intercept=False, **_OPTS)  # fmt: skip
            expected = _cox.concordance_index(time[te], event[te], (X @ sol.coef)[te],
                                              sample_weight=sw[te], strata=g[te])  # fmt: skip
            assert cv.fold_scores[f, i] == pytest.approx(expected, abs=1e-12)
    assert cv.idx_min == int(np.nanargmax(np.nanmean(cv.fold_scores, axis=0)))


def test_concordance_scoring_is_for_cox_only_and_named_in_errors():
    import pandas as pd

    import binarsity_stats as bs

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.uniform(size=60), "y": rng.normal(size=60)})
    with pytest.raises(ValueError, match="scoring='concordance'.*needs family='cox'"):
        bs.glm("y ~ bin(x, 4)", df).fit_cv(folds=3, scoring="concordance")
    with pytest.raises(ValueError, match="does not apply to family='cox'.*'concordance'"):
        df["t"], df["e"] = rng.exponential(size=60), 1
        bs.glm("Surv(t, e) ~ bin(x, 4)", df, family="cox").fit_cv(folds=3, scoring="mse")
