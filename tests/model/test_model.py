"""glm(): fits through the formula layer, λ paths and cross-validation.

What is proved here: a formula fit *is* the engine fit on the same codes; fits satisfy
the KKT conditions of design.md §2 (checked here from the gradient, not from the
solver's own report); an ``offset()`` term equals the ``offset=`` argument; the path
starts at the all-zero fit at λ_max and its training deviance never increases; CV is
reproducible and independent of ``n_jobs``; weights equal duplicated rows; pickled
models and results predict identically.
"""

import math
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest

from binarsity_stats.design._binarizer import Binarizer
from binarsity_stats.engine._cv import fork_available
from binarsity_stats.engine._solvers import solve
from binarsity_stats.families._families import get_family
from binarsity_stats.model._model import THEORY_A, fold_ids, glm, weighted_auc
from binarsity_stats.penalty._penalty import BinarsityPenalty, penalty_weights


def simulate(family: str, n: int = 400, seed: int = 0) -> pd.DataFrame:
    """Step-function signal in x1, x2; a categorical g; a linear z; an exposure."""
    rng = np.random.default_rng(seed)
    x1 = rng.normal(size=n)
    x2 = rng.integers(0, 30, size=n)
    g = rng.choice(["a", "b", "c"], size=n)
    z = rng.normal(size=n)
    exposure = rng.uniform(0.5, 3.0, size=n)
    eta = 0.8 * (x1 > 0.3) - 0.6 * (x2 > 20) + 0.4 * (g == "b") + 0.3 * z
    if family == "gaussian":
        y = eta + rng.normal(scale=0.7, size=n)
    elif family == "binomial":
        y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    else:
        y = rng.poisson(exposure * np.exp(eta - 0.5)).astype(float)
    return pd.DataFrame({"y": y, "x1": x1, "x2": x2, "g": g, "z": z, "exposure": exposure})


def kkt_violation(res) -> float:
    """Largest violation of design.md §2's optimality conditions, from scratch."""
    m = res.model
    mu = m.family.mean(res.linear_predictor)
    r = m.sample_weight * (mu - m.y) / m.sample_weight.sum()
    g = np.zeros(int(m.block_ptr[-1]))
    for j in range(m.design.codes.shape[0]):
        s = m.block_ptr[j]
        np.add.at(g, s + m.design.codes[j].astype(np.intp), r)
    pen = BinarsityPenalty(m.block_ptr, m.penalty_weights, m.bin_counts)
    worst = float(pen.kkt_violation(g, res.coef, res.lam, m.fit_intercept).max(initial=0))
    if m.fit_intercept:
        worst = max(worst, abs(float(r.sum())))
    if m.design.dense is not None:
        worst = max(worst, float(np.max(np.abs(m.design.dense.T @ r))))
    # the linear constraints n_jᵀθ_j = 0
    for j in range(len(m.spec.blocks)):
        s, e = m.block_ptr[j], m.block_ptr[j + 1]
        worst = max(worst, abs(float(m.bin_counts[s:e] @ res.coef[s:e])) / m.nobs)
    return worst


FORMULA = "y ~ bin(x1, 12) + bin(x2, 8) + C(g) + z"


@pytest.mark.parametrize("with_dense", [False, True])
def test_formula_fit_is_the_engine_fit_on_the_same_codes(with_dense):
    df = simulate("binomial")
    w = np.random.default_rng(3).uniform(0.5, 2.0, size=len(df))
    formula = FORMULA if with_dense else FORMULA.replace(" + z", "")
    res = glm(formula, df, family="binomial", sample_weight=w).fit(lam=2e-3, tol=1e-10)
    # the same design built by hand from the engine's pieces
    b1 = Binarizer(n_bins=12).fit(df[["x1"]], sample_weight=w)
    b2 = Binarizer(n_bins=8).fit(df[["x2"]], sample_weight=w)
    g_codes = pd.Categorical(df["g"], ["a", "b", "c"]).codes
    codes = np.ascontiguousarray(
        np.vstack([b1.transform_codes(df[["x1"]]), b2.transform_codes(df[["x2"]]), g_codes])
        .astype(np.uint8)
    )  # fmt: skip
    sizes = [b1.n_bins_[0], b2.n_bins_[0], 3]
    block_ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
    np.testing.assert_array_equal(res.model.design.codes, codes)
    counts = np.zeros(block_ptr[-1])
    for j in range(3):
        counts[block_ptr[j] : block_ptr[j + 1]] = np.bincount(codes[j], w, sizes[j])
    omega = penalty_weights("balanced", counts, block_ptr)  # the formula default
    omega[block_ptr[2] :] = 0.0  # C(g) is unpenalised
    np.testing.assert_allclose(res.model.penalty_weights, omega, rtol=1e-12)
    sol = solve(
        codes, block_ptr, df["y"].to_numpy(), family="binomial", lam=2e-3,
        penalty_weights=omega, dense=df[["z"]].to_numpy() if with_dense else None,
        sample_weight=w, tol=1e-10,
    )  # fmt: skip
    # the very same solver call: bitwise the same answer
    np.testing.assert_array_equal(res.coef, sol.coef)
    np.testing.assert_array_equal(res.dense_coef, sol.dense_coef)
    assert res.intercept == sol.intercept


@pytest.mark.parametrize("family", ["gaussian", "binomial", "poisson"])
def test_fit_satisfies_kkt_with_weights_and_offset(family):
    df = simulate(family, seed=1)
    w = np.random.default_rng(4).uniform(0.2, 3.0, size=len(df))
    model = glm(FORMULA + " + offset(0.1 * z)", df, family=family, sample_weight=w)
    lam = 0.1 * model.lambda_max()
    res = model.fit(lam=lam, tol=1e-9)
    assert res.converged
    assert kkt_violation(res) <= 1e-7
    assert 0 < res.n_jumps  # at λ_max / 10 something is selected


def test_offset_term_equals_offset_argument():
    df = simulate("poisson", seed=2)
    df["logexp"] = np.log(df["exposure"])
    a = glm("y ~ bin(x1) + bin(x2) + offset(log(exposure))", df, family="poisson")
    b = glm("y ~ bin(x1) + bin(x2)", df, family="poisson", offset=np.log(df["exposure"]))
    c = glm("y ~ bin(x1) + bin(x2)", df, family="poisson", offset="logexp")
    np.testing.assert_allclose(a.offset, b.offset)
    ra, rb, rc = (m.fit(lam=1e-3, tol=1e-9) for m in (a, b, c))
    np.testing.assert_array_equal(ra.coef, rb.coef)
    np.testing.assert_array_equal(ra.coef, rc.coef)
    new = simulate("poisson", n=50, seed=9)
    new["logexp"] = np.log(new["exposure"])
    pa = ra.predict(new)
    np.testing.assert_allclose(pa, rb.predict(new, offset=np.log(new["exposure"])), rtol=1e-13)
    np.testing.assert_allclose(pa, rc.predict(new), rtol=1e-13)  # read from the column
    # the offset multiplies the mean by the exposure
    np.testing.assert_allclose(ra.predict(new.assign(exposure=1.0)) * new["exposure"], pa)


def test_path_starts_flat_at_lambda_max_and_deviance_never_increases():
    df = simulate("binomial", seed=5)
    model = glm(FORMULA, df, family="binomial")
    path = model.fit_path(n_lambdas=15, lam_min_ratio=1e-3, tol=1e-9)
    assert path.lams[0] == pytest.approx(model.lambda_max())
    assert np.all(np.diff(path.lams) < 0)
    first = path[0]
    binned = np.concatenate([
        first.coef[model.block_ptr[j] : model.block_ptr[j + 1]]
        for j, b in enumerate(model.spec.blocks) if b.penalized
    ])  # fmt: skip
    assert np.all(binned == 0.0)  # every binned term exactly zero at λ_max
    assert first.n_jumps == 0
    # df at λ_max: intercept + C(g) (2) + z (1); then more cut-points come in
    assert path.df[0] == 4 == path.df.min()
    assert path.df[-1] > path.df[0]
    assert np.all(np.diff(path.deviance) <= 1e-8 * path.deviance[0])
    assert path.converged.all()
    for i in (3, 9):
        assert kkt_violation(path[i]) <= 1e-7


def test_cv_is_reproducible_and_independent_of_n_jobs():
    df = simulate("binomial", seed=6)
    model = glm(FORMULA, df, family="binomial")
    kw = {"folds": 4, "random_state": 7, "n_lambdas": 8, "lam_min_ratio": 1e-2}
    a = model.fit_cv(**kw)
    b = model.fit_cv(**kw)
    c = model.fit_cv(n_jobs=2, **kw)
    np.testing.assert_array_equal(a.fold_scores, b.fold_scores)
    np.testing.assert_array_equal(a.fold_scores, c.fold_scores)
    np.testing.assert_array_equal(a.best_.coef, c.best_.coef)
    assert a.lam_1se >= a.lam_min
    assert a.best_.lam == a.lam_min
    assert a.best_.lam_source == "4-fold CV (lam_min, deviance)"
    i = int(np.argmin(a.mean))
    assert a.lam_min == a.lams[i]
    # lam_1se: the largest λ whose mean is within one SE of the minimum
    ok = a.mean <= a.mean[i] + a.se[i]
    assert a.lam_1se == a.lams[np.flatnonzero(ok)[0]]
    auc = model.fit_cv(scoring="auc", **kw)
    assert np.nanmax(auc.mean) > 0.6 and auc.lam_min == auc.lams[int(np.nanargmax(auc.mean))]


def test_cv_early_stopping_truncates_the_grid_without_changing_the_choice():
    # small n with many bins: the deviance curve has a clear minimum and then rises
    df = simulate("binomial", n=300, seed=21)
    model = glm("y ~ bin(x1, 30) + bin(x2, 30) + C(g) + z", df, family="binomial")
    kw = {"folds": 5, "random_state": 3, "n_lambdas": 40, "lam_min_ratio": 1e-4}
    whole = model.fit_cv(early_stopping=False, **kw)
    short = model.fit_cv(**kw)  # early_stopping=True, patience=5 by default
    m = len(short.lams)
    assert len(whole.lams) == 40 and m < 40
    # lockstep folds see the same warm starts: the evaluated prefix is identical
    np.testing.assert_array_equal(short.lams, whole.lams[:m])
    np.testing.assert_array_equal(short.fold_scores, whole.fold_scores[:, :m])
    assert (short.lam_min, short.lam_1se) == (whole.lam_min, whole.lam_1se)
    np.testing.assert_array_equal(short.best_.coef, whole.best_.coef)
    assert len(short.path.lams) == m
    assert short.stopped_early and not whole.stopped_early
    assert f"{m} of 40 λ, stopped early" in repr(short) and "(40 λ)" in repr(whole)
    # it stopped because the last `patience` means left the one-SE band of the best
    i = short.idx_min
    assert np.all(short.mean[-5:] > short.mean[i] + short.se[i])
    assert not np.all(short.mean[-6:-1] > short.mean[i] + short.se[i])
    # AUC is maximised: the band is below the best
    auc = model.fit_cv(scoring="auc", patience=3, **kw)
    j = auc.idx_min
    assert len(auc.lams) == 40 or np.all(auc.mean[-3:] < auc.mean[j] - auc.se[j])
    for bad, exc in ((0, ValueError), (2.5, TypeError), (True, TypeError)):
        with pytest.raises(exc, match="patience"):
            model.fit_cv(patience=bad, **kw)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_cv_on_big_data_prepares_folds_per_chunk_with_identical_results(monkeypatch, n_jobs):
    """Above a memory budget the folds are prepared again for each chunk of λ values
    instead of all being held; the fits, and so every result, are the same."""
    import binarsity_stats.engine._path as engine_path  # PathData: prepares the folds
    import binarsity_stats.model._model_path as path_module  # fit_cv's module

    df = simulate("binomial", n=300, seed=21)
    model = glm("y ~ bin(x1, 30) + bin(x2, 30) + C(g) + z", df, family="binomial")
    kw = {"folds": 5, "random_state": 3, "n_lambdas": 40, "lam_min_ratio": 1e-4,
          "n_jobs": n_jobs}  # fmt: skip
    held = model.fit_cv(**kw)
    calls = []
    original = engine_path.PathData.prepare_fold  # folds share the design (issue 22)

    def counting(self, rows=None):
        calls.append(rows is None)
        return original(self, rows)

    monkeypatch.setattr(engine_path.PathData, "prepare_fold", counting)
    monkeypatch.setattr(path_module, "_CV_KEEP_BYTES", 0)
    chunked = model.fit_cv(patience=3, **kw)
    in_caller = list(calls)
    calls.clear()
    again = model.fit_cv(patience=3, **{**kw, "n_jobs": 1})
    monkeypatch.setattr(path_module, "_CV_KEEP_BYTES", 1 << 30)
    serial = list(calls)
    kept = model.fit_cv(patience=3, **kw)
    for res in (chunked, again):
        np.testing.assert_array_equal(res.lams, kept.lams)
        np.testing.assert_array_equal(res.fold_scores, kept.fold_scores)
        np.testing.assert_array_equal(res.best_.coef, kept.best_.coef)
    assert chunked.stopped_early
    # the chunked walk prepared each fold once per chunk of 3 λ values, and the path on
    # all rows (walked alongside the folds) once
    chunks = -(-len(again.lams) // 3)
    assert serial.count(False) == 5 * chunks and serial.count(True) == 1
    if n_jobs == 2 and fork_available():
        # the first chunk's folds are solved in the caller, timed (the auto rule; the
        # suite's conftest makes any work pay), the later chunks' in the worker
        # processes: the caller prepares each fold once and the path on all rows once
        assert sorted(in_caller) == [False] * 5 + [True]
    else:
        assert sorted(in_caller) == sorted(serial)
    assert held.lam_min == model.fit_cv(**kw).lam_min


def test_cv_groups_keep_every_group_in_one_fold():
    df = simulate("binomial", n=240, seed=22)
    model = glm(FORMULA, df, family="binomial")
    rng = np.random.default_rng(5)
    groups = np.array([f"patient{k}" for k in rng.integers(0, 37, size=len(df))])
    kw = {"folds": 4, "random_state": 2, "n_lambdas": 6, "lam_min_ratio": 1e-2}
    cv = model.fit_cv(groups=groups, **kw)
    for label in np.unique(groups):
        assert np.unique(cv.fold_ids[groups == label]).size == 1
    rows = np.bincount(cv.fold_ids, minlength=4)
    biggest = np.bincount(np.unique(groups, return_inverse=True)[1]).max()
    assert rows.max() - rows.min() <= biggest  # greedy balance: within one group
    again = model.fit_cv(groups=pd.Series(groups), **kw)
    np.testing.assert_array_equal(cv.fold_ids, again.fold_ids)
    np.testing.assert_array_equal(cv.fold_scores, again.fold_scores)
    # the folds are really held out by group: scores differ from row-wise folds
    assert not np.array_equal(model.fit_cv(**kw).fold_ids, cv.fold_ids)
    with pytest.raises(ValueError, match="groups has 3 distinct groups but folds=4"):
        model.fit_cv(groups=np.arange(len(df)) % 3, **kw)
    with pytest.raises(ValueError, match="groups has 10 rows but the data has 240"):
        model.fit_cv(groups=np.arange(10), **kw)
    with pytest.raises(ValueError, match="groups contains missing values"):
        model.fit_cv(groups=np.where(np.arange(len(df)) == 7, None, groups), **kw)
    with pytest.raises(ValueError, match="groups must be 1-D"):
        model.fit_cv(groups=np.zeros((len(df), 2)), **kw)


def test_stratified_folds_keep_class_proportions():
    y = np.r_[np.zeros(97), np.ones(23)]
    ids = fold_ids(y, 5, stratify=True, random_state=0)
    per_fold = np.array([[np.sum((ids == k) & (y == c)) for c in (0, 1)] for k in range(5)])
    assert np.ptp(per_fold[:, 1]) <= 1 and np.ptp(per_fold.sum(axis=1)) <= 1
    np.testing.assert_array_equal(ids, fold_ids(y, 5, stratify=True, random_state=0))


def test_weighted_auc_matches_pairwise_definition():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, size=60).astype(float)
    s = rng.integers(0, 6, size=60).astype(float)  # ties
    w = rng.uniform(0.1, 2.0, size=60)
    num = sum(
        w[i] * w[j] * ((s[i] > s[j]) + 0.5 * (s[i] == s[j]))
        for i in range(60) for j in range(60) if y[i] == 1 and y[j] == 0
    )  # fmt: skip
    den = w[y == 1].sum() * w[y == 0].sum()
    assert weighted_auc(y, s, w) == pytest.approx(num / den, rel=1e-12)


def test_theory_lambda_is_theorem_1_scale():
    df = simulate("binomial", seed=8)
    model = glm("y ~ bin(x1, 12) + bin(x2, 8) + C(g)", df, family="binomial")
    d = sum(b.n_levels for b in model.spec.blocks if b.penalized)
    expected = math.sqrt(2 * 0.25 * 1.0 * (THEORY_A + math.log(d)) / len(df))
    assert model.lambda_theory() == pytest.approx(expected, rel=1e-12)
    res = model.fit()  # lam="theory" by default
    assert res.lam == pytest.approx(expected) and res.lam_source == "theory"
    gauss = glm("y ~ bin(x1) + bin(x2)", simulate("gaussian", seed=8)).fit(lam="theory")
    assert gauss.lam_source.startswith("theory (sigma^2 estimated")


def test_integer_weights_equal_duplicated_rows():
    df = simulate("gaussian", n=150, seed=10)
    w = np.random.default_rng(11).integers(1, 4, size=len(df)).astype(float)
    dup = df.loc[df.index.repeat(w.astype(int))].reset_index(drop=True)
    a = glm("y ~ bin(x1, 10) + bin(x2, 6) + C(g)", df, sample_weight=w).fit(lam=1e-2, tol=1e-10)
    b = glm("y ~ bin(x1, 10) + bin(x2, 6) + C(g)", dup).fit(lam=1e-2, tol=1e-10)
    np.testing.assert_array_equal(a.model.spec.blocks[0].edges, b.model.spec.blocks[0].edges)
    np.testing.assert_allclose(a.coef, b.coef, atol=1e-7)
    assert a.intercept == pytest.approx(b.intercept, abs=1e-7)


def test_pickle_round_trips_predict_identically():
    df = simulate("binomial", seed=12)
    model = glm(FORMULA + " + offset(0.2 * z)", df, family="binomial")
    res = model.fit(lam=1e-3)
    path = model.fit_path(n_lambdas=5)
    cv = model.fit_cv(folds=3, n_lambdas=5, random_state=0)
    new = simulate("binomial", n=40, seed=13)
    for obj, pred in (
        (res, lambda r: r.predict(new)),
        (path, lambda p: p[3].predict(new)),
        (cv, lambda c: c.best_.predict(new, type="link")),
        (model, lambda m: m.spec.transform(new).codes),
    ):
        again = pickle.loads(pickle.dumps(obj))
        np.testing.assert_array_equal(pred(again), pred(obj))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"sample_weight": -np.ones(400)}, "sample_weight"),
        ({"sample_weight": np.ones(3)}, "sample_weight has 3 rows"),
        ({"sample_weight": "nope"}, "sample_weight='nope'"),
        ({"offset": np.full(400, np.nan)}, "offset"),
        ({"sample_weight": "g"}, r"sample_weight='g' needs a numeric column; column 'g'"),
        ({"offset": "g"}, r"offset='g' needs a numeric column; column 'g' has dtype"),
        ({"offset": "t"}, r"offset='t' needs a numeric column; column 't' has dtype datetime"),
        ({"sample_weight": "w_nan"}, r"sample_weight \(column 'w_nan'\) contains NaN"),
        ({"family": "gamma"}, "family"),
        ({"penalty_weights": "flat"}, "penalty_weights"),
        ({"missing": "omit"}, "missing"),
        ({"n_bins": 1}, "n_bins"),
    ],
)
def test_bad_model_arguments_are_named(kwargs, match):
    data = simulate("gaussian")
    n = len(data)
    data = data.assign(
        g=np.where(np.arange(n) % 2, "a", "b"),
        t=pd.date_range("2000", periods=n),
        w_nan=np.where(np.arange(n) == 5, np.nan, 1.0),
    )
    with pytest.raises((ValueError, TypeError), match=match) as info:
        glm(FORMULA, data, **kwargs)
    assert type(info.value) in (ValueError, TypeError)


def test_bad_fit_arguments_are_named():
    model = glm(FORMULA, simulate("gaussian"))
    with pytest.raises(ValueError, match="lam"):
        model.fit(lam=-1.0)
    with pytest.raises(ValueError, match="lam"):
        model.fit(lam="oracle")
    with pytest.raises(ValueError, match="folds"):
        model.fit_cv(folds=1)
    with pytest.raises(ValueError, match="auc"):
        model.fit_cv(scoring="auc")
    with pytest.raises(ValueError, match="scoring"):
        model.fit_cv(scoring="r2")
    with pytest.raises(ValueError, match="lam_min_ratio"):
        model.fit_path(lam_min_ratio=2.0)
    with pytest.raises(ValueError, match="y must be 0 or 1"):
        glm(FORMULA, simulate("gaussian"), family="binomial")


def test_verbose_path_shows_progress(capsys):
    model = glm("y ~ bin(x1)", simulate("gaussian", n=100))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit_path(n_lambdas=3, verbose=True)
    assert "3/3" in capsys.readouterr().err


def test_families_helpers_consistent():
    fam = get_family("poisson")
    df = simulate("poisson", seed=3)
    res = glm("y ~ bin(x1) + offset(log(exposure))", df, family="poisson").fit(lam=1e-3)
    np.testing.assert_allclose(res.fittedvalues, fam.mean(res.linear_predictor))
    np.testing.assert_allclose(res.predict(df), res.fittedvalues, rtol=1e-13)
