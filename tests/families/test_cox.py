"""family="cox": the Breslow partial likelihood through the engine's seams (issue 14).

What is proved here:

* the packed response keeps time order, ties, events and strata under any subset;
* loss and gradient equal statsmodels' PHReg (Breslow ties, strata, offset) and finite
  differences (weights); the curvature majorises the Hessian (h·1 ≥ vᵀ∇²L v / ‖v‖ on
  random directions, with vᵀ diag(h) v ≥ vᵀ∇²L v);
* CD and FISTA reach the KKT conditions of design.md §2 with the Cox gradient, agree
  with each other and with cvxpy on small instances with ties and weights;
* at λ = 0 on a binned design the fit equals PHReg's (coefficients, log-likelihood).
"""

from __future__ import annotations

import numpy as np
import pytest

from binarsity_stats.engine import _solvers
from binarsity_stats.families import _cox
from binarsity_stats.families._families import get_family


def _surv(rng, n, n_times=None, strata=False):
    x = rng.uniform(0, 1, size=(n, 3))
    eta = 1.2 * (x[:, 0] > 0.5) - 0.8 * (x[:, 1] > 0.3) + 0.3 * x[:, 2]
    t = rng.exponential(np.exp(-eta))
    if n_times:  # heavy ties
        t = np.ceil(t * n_times / t.max())
    c = rng.exponential(1.5, n)
    time = np.minimum(t, c)
    event = (t <= c).astype(float)
    g = rng.randint(0, 3, n) if strata else None
    return x, time, event, g


def _codes(x, k):
    edges = [np.quantile(col, np.linspace(0, 1, k + 1)[1:-1]) for col in x.T]
    codes = np.array([np.searchsorted(e, col, side="left") for e, col in zip(edges, x.T, strict=True)],
                     dtype=np.uint8)  # fmt: skip
    bp = np.arange(0, k * (x.shape[1] + 1), k).astype(np.intp)
    return codes, bp


def test_encode_keeps_order_ties_events_and_strata_in_every_subset():
    rng = np.random.RandomState(0)
    time = rng.choice([0.0, 1.5, 2.0, 7.25], size=50)
    event = rng.randint(0, 2, 50)
    strata = rng.choice(["a", "b"], size=50)
    y = _cox.encode(time, event, strata)
    st, rank, ev = _cox.decode(y)
    assert np.array_equal(ev, event)
    assert np.array_equal(st, (strata == "b").astype(int))
    rows = rng.permutation(50)[:20]
    for i in rows:
        for j in rows:
            assert (rank[i] < rank[j]) == (time[i] < time[j])
    with pytest.raises(ValueError, match="event must be 0/1"):
        _cox.encode(time, event + 2)
    with pytest.raises(ValueError, match="time must be non-negative"):
        _cox.encode(-time - 1, event)
    with pytest.raises(ValueError, match="Surv\\(time, event\\)"):
        get_family("cox").validate_y(np.array([0.5, 1.0]))


@pytest.mark.parametrize("strata", [False, True])
def test_loss_and_gradient_equal_statsmodels_phreg(strata):
    sm_hr = pytest.importorskip("statsmodels.duration.hazard_regression")
    rng = np.random.RandomState(1)
    x, time, event, g = _surv(rng, 120, n_times=15, strata=strata)
    off = rng.uniform(-0.3, 0.3, 120)
    beta = np.array([0.4, -0.7, 0.2])
    mod = sm_hr.PHReg(time, x, status=event, ties="breslow", strata=g, offset=off)
    y = _cox.encode(time, event, g)
    eta = x @ beta + off
    g_out, h_out = np.empty(120), np.empty(120)
    loss = _cox.loss_grad_hess(eta, y, np.ones(120), 1.0, g_out, h_out)
    np.testing.assert_allclose(-loss, mod.loglike(beta), rtol=1e-12)
    np.testing.assert_allclose(-(x.T @ g_out), mod.score(beta), rtol=1e-10, atol=1e-12)
    # the family's deviance and log-likelihood are the same function
    fam = get_family("cox")
    np.testing.assert_allclose(fam.log_likelihood(y, np.exp(eta)), mod.loglike(beta), rtol=1e-12)


def test_weighted_gradient_is_the_derivative_and_curvature_majorises_the_hessian():
    rng = np.random.RandomState(2)
    n = 40
    _, time, event, _ = _surv(rng, n, n_times=6)
    y = _cox.encode(time, event)
    s = rng.exponential(1.0, n)
    eta = rng.normal(size=n)
    g, h = np.empty(n), np.empty(n)
    _cox.loss_grad_hess(eta, y, s, 1.0, g, h)
    eps = 1e-6
    fd = np.array([
        (_cox.loss_grad_hess(eta + eps * np.eye(n)[k], y, s)
         - _cox.loss_grad_hess(eta - eps * np.eye(n)[k], y, s)) / (2 * eps)
        for k in range(n)
    ])  # fmt: skip
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)
    # Hessian by differences of the gradient
    H = np.empty((n, n))
    for k in range(n):
        gp, gm = np.empty(n), np.empty(n)
        _cox.loss_grad_hess(eta + eps * np.eye(n)[k], y, s, 1.0, gp, np.empty(n))
        _cox.loss_grad_hess(eta - eps * np.eye(n)[k], y, s, 1.0, gm, np.empty(n))
        H[:, k] = (gp - gm) / (2 * eps)
    H = (H + H.T) / 2
    gap = np.linalg.eigvalsh(np.diag(h) - H)
    assert gap.min() > -1e-6  # diag(h) − ∇²L is positive semi-definite
    assert abs(g.sum()) < 1e-12 * n  # shift invariance: no intercept


def _kkt_cox(sol, codes, bp, y, s, lam, w):
    """Largest violation of design.md §2 with the Cox gradient (S_j1 = 0 by shift)."""
    n = y.size
    g = np.empty(n)
    _cox.loss_grad_hess(sol.eta, y, s, 1.0 / s.sum(), g, np.empty(n))
    worst = 0.0
    for j in range(codes.shape[0]):
        K = bp[j + 1] - bp[j]
        gj = np.bincount(codes[j], weights=g, minlength=K)
        S = np.cumsum(gj[::-1])[::-1]
        theta = sol.coef[bp[j] : bp[j + 1]]
        worst = max(worst, abs(S[0]))
        for e in range(1, K):
            jump = theta[e] - theta[e - 1]
            bound = lam * w[bp[j] + e]
            if abs(jump) > 1e-8:
                worst = max(worst, abs(S[e] + bound * np.sign(jump)))
            else:
                worst = max(worst, abs(S[e]) - bound)
    return worst


@pytest.mark.parametrize("weighted", [False, True])
def test_cd_and_fista_satisfy_kkt_and_agree_with_cvxpy(weighted):
    cp = pytest.importorskip("cvxpy")
    rng = np.random.RandomState(3)
    n, k = 90, 5
    x, time, event, _ = _surv(rng, n, n_times=12)
    codes, bp = _codes(x, k)
    y = _cox.encode(time, event)
    s = rng.exponential(1.0, n) if weighted else np.ones(n)
    d = int(bp[-1])
    w = np.ones(d)
    w[bp[:-1]] = 0.0
    kw = dict(family="cox", penalty_weights=w, sample_weight=s if weighted else None)
    lmax = _solvers.lambda_max(codes, bp, y, **kw)
    assert lmax > 0
    lam = 0.2 * lmax
    sols = {
        solver: _solvers.solve(
            codes, bp, y, lam=lam, solver=solver, tol=1e-10, max_iter=5000, **kw
        )  # fmt: skip
        for solver in ("cd", "fista")
    }
    for sol in sols.values():
        assert sol.converged
        assert _kkt_cox(sol, codes, bp, y, s, lam, w) < 1e-7
    np.testing.assert_allclose(sols["cd"].coef, sols["fista"].coef, atol=1e-6)
    # cvxpy: the same objective written with log-sum-exp over the risk sets
    theta = cp.Variable(d)
    X = np.zeros((n, d))
    for j in range(codes.shape[0]):
        X[np.arange(n), bp[j] + codes[j]] = 1.0
    eta = X @ theta
    terms = []
    for tg in np.unique(time[event > 0]):
        dg = float(np.sum(s[(time == tg) & (event > 0)]))
        risk = time >= tg
        terms.append(dg * cp.log_sum_exp(eta[risk] + np.log(s[risk])))
    loss = (cp.sum(terms) - cp.sum(cp.multiply(s * event, eta))) / s.sum()
    pen = sum(
        lam * cp.sum(cp.abs(cp.diff(theta[bp[j] : bp[j + 1]]))) for j in range(codes.shape[0])
    )
    counts = X.T @ s
    cons = [counts[bp[j] : bp[j + 1]] @ theta[bp[j] : bp[j + 1]] == 0 for j in range(3)]
    prob = cp.Problem(cp.Minimize(loss + pen), cons)
    prob.solve(solver="CLARABEL")
    best = prob.value
    np.testing.assert_allclose(sols["cd"].coef, theta.value, atol=2e-4)
    # (the engine's objective is on weights scaled to a maximum in [1, 2), which adds a
    # constant (Σ s δ / W) log c to the Cox loss: compare at cvxpy's scale)
    theta.value = sols["cd"].coef
    assert (loss + pen).value <= best + 1e-8


def test_unpenalised_fit_equals_phreg_on_the_binned_design():
    sm_hr = pytest.importorskip("statsmodels.duration.hazard_regression")
    rng = np.random.RandomState(4)
    n, k = 300, 4
    x, time, event, _ = _surv(rng, n, n_times=25)
    codes, bp = _codes(x, k)
    y = _cox.encode(time, event)
    d = int(bp[-1])
    sol = _solvers.solve(codes, bp, y, family="cox", lam=0.0, penalty_weights=np.zeros(d),
                         tol=1e-11, max_iter=5000)  # fmt: skip
    assert sol.converged
    # PHReg on the dummies of every level but the first of each block
    cols = [(j, lv) for j in range(codes.shape[0]) for lv in range(1, k)]
    Xd = np.column_stack([(codes[j] == lv).astype(float) for j, lv in cols])
    ph = sm_hr.PHReg(time, Xd, status=event, ties="breslow").fit()
    ours = np.array([sol.coef[bp[j] + lv] - sol.coef[bp[j]] for j, lv in cols])
    np.testing.assert_allclose(ours, ph.params, rtol=1e-6, atol=1e-7)
    fam = get_family("cox")
    np.testing.assert_allclose(fam.log_likelihood(y, np.exp(sol.eta)), ph.llf, rtol=1e-10)


def test_concordance_and_baseline_match_lifelines():
    lifelines = pytest.importorskip("lifelines")
    from lifelines.utils import concordance_index

    rng = np.random.RandomState(5)
    x, time, event, _ = _surv(rng, 200, n_times=20)
    risk = np.round(x[:, 0] * 4)  # tied risks too
    ours = _cox.concordance_index(time, event, risk)
    # lifelines scores survival-like predictions: higher = longer
    np.testing.assert_allclose(ours, concordance_index(time, -risk, event), rtol=1e-12)
    del lifelines


def _harrell_by_pairs(time, event, risk, w, strata):
    """Harrell's C from its definition, one pair at a time (O(n²); the reference)."""
    num = den = 0.0
    for i in range(time.size):
        if not event[i]:
            continue
        for j in range(time.size):
            if j == i or strata[i] != strata[j]:
                continue
            # j is still at risk after i's event: a later time, or the same time censored
            if time[j] > time[i] or (time[j] == time[i] and not event[j]):
                pw = w[i] * w[j]
                den += pw
                num += pw * (1.0 if risk[i] > risk[j] else 0.5 if risk[i] == risk[j] else 0.0)
    return num / den


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("stratified", [False, True])
def test_concordance_equals_its_pairwise_definition(weighted, stratified):
    # runs where lifelines does not install (CI's pandas 3): the definition is the reference
    rng = np.random.RandomState(11)
    x, time, event, g = _surv(rng, 120, n_times=15, strata=True)  # tied times
    risk = np.round(x[:, 0] * 4)  # tied risks
    w = rng.uniform(0.5, 3.0, time.size) if weighted else np.ones(time.size)
    g = g if stratified else np.zeros(time.size, dtype=int)
    ours = _cox.concordance_index(time, event, risk, sample_weight=w if weighted else None,
                                  strata=g if stratified else None)  # fmt: skip
    assert ours == pytest.approx(_harrell_by_pairs(time, event, risk, w, g), rel=1e-12)


def _loss_by_definition(time, event, eta, w, strata, ties):
    """Weighted Breslow / Efron negative log partial likelihood, one event time at a time.

    Efron with weights as R's ``coxph``: a time with m tied events of weight sum d
    contributes (d/m) Σ_{r<m} log(D − (r/m) F), D the weighted risk-set sum, F the
    events' part of it.
    """
    L = 0.0
    for g in np.unique(strata):
        rows = strata == g
        t, e, x, s = time[rows], event[rows], eta[rows], w[rows]
        for u in np.unique(t[e == 1]):
            dead = (t == u) & (e == 1)
            D = np.sum(s[t >= u] * np.exp(x[t >= u]))
            F = np.sum(s[dead] * np.exp(x[dead]))
            m, d = dead.sum(), s[dead].sum()
            L -= np.sum(s[dead] * x[dead])
            r = np.arange(m) / m if ties == "efron" else np.zeros(m)
            L += d / m * np.sum(np.log(D - r * F))
    return L


@pytest.mark.parametrize("ties", ["breslow", "efron"])
def test_weighted_stratified_loss_equals_its_definition(ties):
    # the reference for both the kernel and its NumPy twin where lifelines is absent
    rng = np.random.RandomState(12)
    x, time, event, g = _surv(rng, 150, n_times=12, strata=True)  # heavy ties
    eta = rng.normal(size=time.size) * 2.0
    w = rng.uniform(0.2, 4.0, time.size)
    y = _cox.encode(time, event, g)
    expected = _loss_by_definition(time, event, eta, w, g, ties)
    for f in (_cox.loss_grad_hess, _cox._loss_grad_hess_numpy):
        assert f(eta, y, w, ties=ties) == pytest.approx(expected, rel=1e-12)


# -- the formula layer ----------------------------------------------------------------


def _frame(seed=6, n=300):
    pd = pytest.importorskip("pandas")
    rng = np.random.RandomState(seed)
    age = rng.uniform(20, 80, n)
    bmi = np.round(rng.normal(25, 4, n), 1)  # ties in a binned column
    sex = rng.choice(["f", "m"], n)
    eta = 0.9 * (age > 60) - 0.5 * (bmi < 22) + 0.3 * (sex == "m")
    t = np.ceil(rng.exponential(np.exp(-eta)) * 30)  # tied times
    c = np.ceil(rng.exponential(1.5, n) * 30)
    return pd.DataFrame({"time": np.minimum(t, c), "status": (t <= c).astype(int),
                         "age": age, "bmi": bmi, "sex": sex})  # fmt: skip


def test_glm_surv_formula_at_lambda_zero_equals_phreg_on_the_same_bins():
    sm_hr = pytest.importorskip("statsmodels.duration.hazard_regression")
    import binarsity_stats as bs

    df = _frame()
    res = bs.glm("Surv(time, status) ~ bin(age, 4) + bin(bmi, 3) + C(sex)", df,
                 family="cox").fit(lam=0.0, tol=1e-11, max_iter=5000)  # fmt: skip
    m = res.model
    assert res.intercept == 0.0 and not m.fit_intercept
    # PHReg on the reference-coded dummies of the same bins
    cols = []
    for j in range(m.design.codes.shape[0]):
        K = int(m.block_ptr[j + 1] - m.block_ptr[j])
        cols += [(m.design.codes[j] == level).astype(float) for level in range(1, K)]
    X = np.column_stack(cols)
    ph = sm_hr.PHReg(df["time"].to_numpy(), X, status=df["status"].to_numpy(),
                     ties="breslow").fit()  # fmt: skip
    np.testing.assert_allclose(res.llf, ph.llf, rtol=1e-10)
    eta_sm = X @ ph.params
    # the linear predictor is PHReg's up to a constant (no intercept in a Cox model)
    diff = res.predict(df, type="linear") - eta_sm
    np.testing.assert_allclose(diff, diff[0], atol=1e-6)
    # survival curves with Breslow's baseline are the same whatever the constant
    # Breslow's H0(t) = sum over event times u <= t of d_u / sum_{t_j >= u} e^eta_j, at
    # PHReg's coefficients (PHReg's own baseline_cumulative_hazard lists H0 just before
    # each event time, H0(t-): its values are ours shifted by one event time)
    time, status = df["time"].to_numpy(), df["status"].to_numpy()
    times = np.array([2.0, 10.0, 25.0])
    h0 = np.array([
        sum(np.sum((time == u) & (status == 1)) / np.sum(np.exp(eta_sm)[time >= u])
            for u in np.unique(time[status == 1]) if u <= tt)
        for tt in times
    ])  # fmt: skip
    surv_sm = np.exp(-np.exp(eta_sm)[:, None] * h0[None, :])
    np.testing.assert_allclose(res.predict(df, type="survival", times=times), surv_sm,
                               rtol=1e-6, atol=1e-9)  # fmt: skip
    np.testing.assert_allclose(res.predict(df, type="risk"),
                               np.exp(res.predict(df, type="linear")))  # fmt: skip
    assert 0.5 < res.concordance < 1.0
    text = str(res.summary())
    assert "C-index (Harrell)" in text and "Pearson" not in text and "Intercept" not in text


def test_cox_formula_without_intercept_is_the_same_fit_and_pickles():
    import pickle

    import binarsity_stats as bs

    df = _frame(7)
    f = "Surv(time, status) ~ bin(age) + bin(bmi) + C(sex)"
    a = bs.glm(f, df, family="cox").fit(lam=0.01)
    b = bs.glm(f + " - 1", df, family="cox").fit(lam=0.01)
    np.testing.assert_allclose(a.coef, b.coef, atol=1e-10)
    assert b.intercept == 0.0
    c = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(c.predict(df, type="survival", times=[5.0]),
                                  a.predict(df, type="survival", times=[5.0]))  # fmt: skip


def test_cox_response_errors_name_the_argument():
    import binarsity_stats as bs

    df = _frame(8, 50)
    with pytest.raises(ValueError, match="Surv\\(time, event\\) is the response of family='cox'"):
        bs.glm("Surv(time, status) ~ bin(age)", df, family="gaussian")
    with pytest.raises(ValueError, match="needs a survival response"):
        bs.glm("time ~ bin(age)", df, family="cox")
    bad = df.assign(status=df["status"] + 2)  # (status + 1 is R's 1/2 coding: read)
    with pytest.raises(ValueError, match="event must be 0/1"):
        bs.glm("Surv(time, status) ~ bin(age)", bad, family="cox")
    res = bs.glm("Surv(time, status) ~ bin(age)", df, family="cox").fit(lam=0.05)
    with pytest.raises(ValueError, match="times is required"):
        res.predict(df, type="survival")
    with pytest.raises(ValueError, match="type must be 'risk', 'linear' or 'survival'"):
        res.predict(df, type="mean")


def test_cv_scores_are_coxnet_fold_deviances():
    """Fold score = [D(all rows) − D(training rows)] / events in the fold, at the fold's
    fit (glmnet's cv.glmnet(family="cox", grouped=TRUE)), computed here by hand."""
    from binarsity_stats.engine._cv import cross_validate
    from binarsity_stats.engine._path import PathData

    rng = np.random.RandomState(9)
    n, k = 150, 5
    x, time, event, _ = _surv(rng, n, n_times=30)
    codes, bp = _codes(x, k)
    y = _cox.encode(time, event)
    d = int(bp[-1])
    w = np.ones(d)
    w[bp[:-1]] = 0.0
    data = PathData(codes, bp, y, "cox", w)
    folds = np.arange(n) % 3
    lams = data.lambda_max() * np.array([0.5, 0.1])
    opts = {"tol": 1e-10, "max_iter": 5000}
    cv = cross_validate(data, lams, folds, opts=opts, early_stopping=False)
    fam = get_family("cox")
    for f in range(3):
        train = folds != f
        for i, lam in enumerate(lams):
            sol = _solvers.solve(codes[:, train], bp, y[train], family="cox", lam=lam,
                                 penalty_weights=w, **opts)  # fmt: skip
            eta_all = np.zeros(n)
            for j in range(codes.shape[0]):
                eta_all += sol.coef[bp[j] + codes[j]]
            dev_all = fam.deviance(y, np.exp(eta_all), np.ones(n))
            dev_tr = fam.deviance(y[train], np.exp(eta_all[train]), np.ones(train.sum()))
            want = (dev_all - dev_tr) / event[~train].sum()
            np.testing.assert_allclose(cv.fold_scores[f, i], want, rtol=1e-6)


def test_fit_cv_finds_the_step_and_refuses_other_scorings():
    import binarsity_stats as bs

    df = _frame(10, 400)
    m = bs.glm("Surv(time, status) ~ bin(age) + bin(bmi)", df, family="cox")
    cv = m.fit_cv(random_state=0)
    res = cv.results("lam_min")
    # the true log hazard steps up by 0.9 at age 60 and is flat elsewhere
    two = df.iloc[[0, 0, 0]].assign(age=[30.0, 50.0, 75.0])
    lin = res.predict(two, type="linear")
    assert lin[2] - lin[1] > 0.3 and abs(lin[1] - lin[0]) < 0.3
    assert 0.5 < res.concordance < 1
    with pytest.raises(ValueError, match="scoring='mse' does not apply to family='cox'"):
        m.fit_cv(scoring="mse")


def test_spec_sql_and_standalone_scorer_give_the_relative_risk():
    import json
    import sqlite3

    import binarsity_stats as bs

    df = _frame(11, 200)
    res = bs.glm("Surv(time, status) ~ bin(age) + C(sex) + bmi", df, family="cox").fit(lam=0.02)
    risk = res.predict(df, type="risk")
    spec = json.loads(json.dumps(res.to_spec()))
    assert spec["family"] == {"name": "cox", "link": "log"}
    np.testing.assert_array_equal(bs.from_spec(spec).predict(df), risk)
    con = sqlite3.connect(":memory:")
    df.to_sql("t", con)
    got = np.array([r[0] for r in con.execute(res.to_sql(table="t"))])
    np.testing.assert_allclose(got, risk, rtol=1e-12)


def test_estimators_take_a_structured_or_two_column_y_and_equal_the_formula():
    import pickle

    import binarsity_stats as bs

    df = _frame(12, 300)
    X = df[["age", "bmi"]]
    y = np.empty(len(df), dtype=[("status", bool), ("time", float)])
    y["status"], y["time"] = df["status"] == 1, df["time"]
    est = bs.BinarsityGLM(family="cox", lam=0.02).fit(X, y)
    two = bs.BinarsityGLM(family="cox", lam=0.02).fit(X, df[["time", "status"]].to_numpy())
    np.testing.assert_array_equal(est.coef_, two.coef_)
    assert est.intercept_ == 0.0
    res = bs.glm("Surv(time, status) ~ bin(age) + bin(bmi)", df, family="cox").fit(lam=0.02)
    np.testing.assert_allclose(est.decision_function(X), res.predict(df, type="linear"),
                               atol=1e-10)  # fmt: skip
    times = [5.0, 20.0]
    np.testing.assert_allclose(est.predict_survival(X, times),
                               res.predict(df, type="survival", times=times), atol=1e-10)  # fmt: skip
    np.testing.assert_allclose(est.score(X, y), res.concordance)
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.predict(X), est.predict(X))
    with pytest.raises(ValueError, match="structured array \\(event, time\\) or two columns"):
        bs.BinarsityGLM(family="cox").fit(X, df["time"].to_numpy())
    cv = bs.BinarsityGLMCV(family="cox", cv=3).fit(X, y)
    assert 0.5 < cv.score(X, y) < 1


def test_refit_is_phreg_on_the_selected_segments():
    sm_hr = pytest.importorskip("statsmodels.duration.hazard_regression")
    import binarsity_stats as bs

    df = _frame(13, 300)
    df["z"] = np.random.RandomState(13).normal(size=len(df))
    res = bs.glm("Surv(time, status) ~ bin(age) + C(sex) + z", df, family="cox").fit(lam=0.03)
    ref = res.refit()
    X, names = res.selected_design()
    assert "Intercept" not in names and ref.names == names
    ph = sm_hr.PHReg(df["time"].to_numpy(), X, status=df["status"].to_numpy(),
                     ties="breslow").fit()  # fmt: skip
    np.testing.assert_allclose(ref.params.to_numpy(), ph.params, rtol=1e-10)
    np.testing.assert_allclose(ref.bse.to_numpy(), ph.bse, rtol=1e-10)
    np.testing.assert_allclose(ref.llf, ph.llf, rtol=1e-12)
    np.testing.assert_allclose(ref.predict(df, type="link"), X @ ph.params, rtol=1e-10)
    assert "CONDITIONAL ON THE SELECTION" in str(ref.summary())
    assert res.refit(split=0.5, random_state=0).params.size > 0
    # a weighted fit is refitted by the package's own Newton (tests/model/test_refit_cox.py)
    w = bs.glm("Surv(time, status) ~ bin(age)", df, family="cox",
               sample_weight=np.ones(len(df)) * 2).fit(lam=0.03)  # fmt: skip
    assert np.all(np.isfinite(w.refit().bse))


def test_strata_term_fits_phreg_stratified_with_one_baseline_per_stratum():
    sm_hr = pytest.importorskip("statsmodels.duration.hazard_regression")
    import binarsity_stats as bs

    df = _frame(14, 300)
    g = np.random.RandomState(14).choice(["a", "b", "c"], len(df))
    df["g"] = g
    df["time"] = df["time"] * np.where(g == "a", 1, 3)  # different baselines
    res = bs.glm("Surv(time, status) ~ bin(age, 4) + strata(g)", df, family="cox").fit(
        lam=0.0, tol=1e-11, max_iter=5000
    )
    m = res.model
    X = np.column_stack([(m.design.codes[0] == lv).astype(float) for lv in range(1, 4)])
    time, status = df["time"].to_numpy(), df["status"].to_numpy()
    ph = sm_hr.PHReg(time, X, status=status, strata=g, ties="breslow").fit()
    np.testing.assert_allclose(res.llf, ph.llf, rtol=1e-10)
    np.testing.assert_allclose(res.refit().llf, ph.llf, rtol=1e-10)
    # Breslow's baseline within each stratum, by hand
    eta = res.predict(df, type="linear")
    surv = res.predict(df, type="survival", times=[30.0])
    for label in "abc":
        rows = g == label
        h0 = sum(
            np.sum((time[rows] == u) & (status[rows] == 1))
            / np.sum(np.exp(eta[rows])[time[rows] >= u])
            for u in np.unique(time[rows][status[rows] == 1])
            if u <= 30.0
        )
        np.testing.assert_allclose(surv[rows, 0], np.exp(-h0 * np.exp(eta[rows])), rtol=1e-10)
    assert set(res.baseline_hazard()["stratum"]) == {"a", "b", "c"}
    with pytest.raises(ValueError, match="stratum 'z'"):
        res.predict(df.head(2).assign(g="z"), type="survival", times=[1.0])
    with pytest.raises(ValueError, match="strata\\(\\) term needs family='cox'"):
        bs.glm("time ~ bin(age) + strata(g)", df, family="poisson")


def test_report_bootstrap_and_plots_of_a_cox_fit():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import binarsity_stats as bs

    df = _frame(15, 200)
    res = bs.glm("Surv(time, status) ~ bin(age) + C(sex)", df, family="cox").fit(lam=0.02)
    page = res.report()
    assert "C-index (Harrell)" in page and 'id="calibration"' not in page
    assert res.bootstrap(n_boot=3, random_state=0).cut_frequencies() is not None
    fig = res.plot_shapes()
    assert "log hazard ratio" in " ".join(ax.get_ylabel() for ax in fig.axes)
    with pytest.raises(ValueError, match="does not apply to family='cox'"):
        res.plot_calibration()


def test_kkt_on_real_data_stanford_heart_transplants_at_the_defaults():
    """statsmodels' bundled Stanford heart transplant data (69 patients, survival in
    days, ties): glm() at its defaults (50 bins, balanced weights); both solvers meet the
    KKT conditions with the Cox gradient and agree; λ_max is the smallest flat λ."""
    sm = pytest.importorskip("statsmodels.api")
    import binarsity_stats as bs

    df = sm.datasets.heart.load_pandas().data
    model = bs.glm("Surv(survival, censors) ~ bin(age)", df, family="cox")
    lmax = model.lambda_max()
    m = model
    codes, bp, w = m.design.codes, m.block_ptr, m.penalty_weights
    y, s = m.y, np.ones(m.nobs)
    fits = {}
    for solver in ("cd", "fista"):
        res = model.fit(lam=0.3 * lmax, solver=solver, tol=1e-10, max_iter=20000)
        assert _kkt_cox(res.solution, codes, bp, y, s, 0.3 * lmax, w) < 1e-8
        fits[solver] = res
    np.testing.assert_allclose(fits["cd"].coef, fits["fista"].coef, atol=1e-6)
    assert fits["cd"].n_jumps > 0
    assert model.fit(lam=lmax * (1 + 1e-6)).n_jumps == 0
    assert model.fit(lam=lmax * 0.98).n_jumps > 0


def test_efron_ties_equal_phreg_efron():
    sm_hr = pytest.importorskip("statsmodels.duration.hazard_regression")
    import pickle

    import binarsity_stats as bs

    rng = np.random.RandomState(16)
    x, time, event, g = _surv(rng, 150, n_times=8, strata=True)
    beta = np.array([0.3, -0.2, 0.5])
    for strata in (None, g):
        ph = sm_hr.PHReg(time, x, status=event, ties="efron", strata=strata)
        y = _cox.encode(time, event, strata)
        go = np.empty(150)
        loss = _cox.loss_grad_hess(x @ beta, y, np.ones(150), 1.0, go, np.empty(150), "efron")
        np.testing.assert_allclose(-loss, ph.loglike(beta), rtol=1e-12)
        np.testing.assert_allclose(-(x.T @ go), ph.score(beta), rtol=1e-10)
    # weighted: the gradient is the derivative, the curvature majorises the Hessian
    s = rng.exponential(1.0, 40)
    y = _cox.encode(time[:40], event[:40])
    eta = rng.normal(size=40)
    g_out, h_out = np.empty(40), np.empty(40)
    _cox.loss_grad_hess(eta, y, s, 1.0, g_out, h_out, "efron")
    E = 1e-6 * np.eye(40)
    fd = [(_cox.loss_grad_hess(eta + E[k], y, s, ties="efron")
           - _cox.loss_grad_hess(eta - E[k], y, s, ties="efron")) / 2e-6 for k in range(40)]  # fmt: skip
    np.testing.assert_allclose(g_out, fd, rtol=1e-6, atol=1e-8)
    # the formula at λ = 0 is PHReg(ties="efron") on the same bins, and its refit too
    df = _frame(16, 300)
    res = bs.glm("Surv(time, status) ~ bin(age, 4)", df, family=("cox", "efron")).fit(
        lam=0.0, tol=1e-11, max_iter=5000
    )
    m = res.model
    X = np.column_stack([(m.design.codes[0] == lv).astype(float) for lv in range(1, 4)])
    ph = sm_hr.PHReg(df["time"].to_numpy(), X, status=df["status"].to_numpy(),
                     ties="efron").fit()  # fmt: skip
    np.testing.assert_allclose(res.llf, ph.llf, rtol=1e-10)
    np.testing.assert_allclose(res.refit().params.to_numpy(), ph.params, rtol=1e-10)
    assert "Efron" in str(res.summary())
    assert pickle.loads(pickle.dumps(res)).model.family == get_family(("cox", "efron"))
    with pytest.raises(ValueError, match="ties must be 'breslow' or 'efron'"):
        get_family(("cox", "exact"))
