"""Hardening: every bad input gets a named error, numerics never lie, fits are reproducible.

What is proved here (issue 6; the table of behaviours is docs/input_validation.md):

* **Named errors where data enters.** Each bad input to the estimators, the
  ``Binarizer``, ``glm()`` formulas, the prox and every ``predict`` raises a ValueError
  or TypeError whose message names the culprit (the column, ``y``, ``lam``,
  ``n_bins``, ``sample_weight``, ``offset``, ...). The tables below are the reference.
* **pandas dtypes.** Nullable Int64/Float64/boolean columns fit exactly as their
  NumPy equivalents (``pd.NA`` is a missing value under the missing policy);
  categorical, string and datetime columns are refused by name.
* **Numerics.** Separable data, huge or tiny feature values, constant responses,
  constant features, saturated logistic and Poisson fits and ``max_iter`` exhaustion
  give finite coefficients and predictions, a ConvergenceWarning that states the KKT
  violation when the solver stops early, and never a hang (every test here is killed
  with a traceback after ``HANG_SECONDS``).
* **Determinism and concurrency.** Identical input gives bitwise-identical fits; fits
  run in parallel threads equal sequential fits bitwise; ``fit_cv(n_jobs=2)`` equals
  ``n_jobs=1`` bitwise for the same ``random_state``.

Known bugs in files this test does not own are pinned by ``xfail(strict=True)`` tests
whose reason states the bug; they turn into failures (XPASS) once fixed, as a prompt to
drop the marker.
"""

from __future__ import annotations

import faulthandler
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from numpy.testing import assert_array_equal

from binarsity_stats import (
    Binarizer,
    BinarsityClassifier,
    BinarsityGLM,
    ConvergenceWarning,
    glm,
)
from binarsity_stats.penalty._prox import prox_binarsity, prox_tv

# log(0) in a user's offset(log(exposure)) warns in NumPy before we refuse the -inf
pytestmark = pytest.mark.filterwarnings("ignore:divide by zero encountered in log:RuntimeWarning")

#: Any single test here that runs longer than this is a hang: dump tracebacks and exit.
HANG_SECONDS = 120

SOLVERS = ["cd", "fista"]
FAMILIES = ["gaussian", "binomial", "poisson"]


@pytest.fixture(autouse=True)
def _no_hang():
    faulthandler.dump_traceback_later(HANG_SECONDS, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


# ---------------------------------------------------------------------------- data


def _xy(family: str = "binomial", n: int = 300, p: int = 3, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    eta = 1.0 * (X[:, 0] > 0) - 0.7 * (X[:, 1] > 0.8) + 0.3 * np.sin(2 * X[:, 2 % p])
    if family == "binomial":
        y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    elif family == "poisson":
        y = rng.poisson(np.exp(eta - 0.3)).astype(float)
    else:
        y = eta + rng.normal(scale=0.5, size=n)
    return X, y


def _frame(n: int = 200, seed: int = 1, family: str = "poisson") -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x1 = rng.normal(size=n)
    x2 = rng.integers(0, 30, size=n)
    g = rng.choice(["a", "b", "c"], size=n)
    z = rng.normal(size=n)
    exposure = rng.uniform(0.5, 3.0, size=n)
    eta = 0.8 * (x1 > 0.3) - 0.6 * (x2 > 20) + 0.4 * (g == "b") + 0.3 * z
    if family == "binomial":
        y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    elif family == "gaussian":
        y = eta + rng.normal(scale=0.5, size=n)
    else:
        y = rng.poisson(exposure * np.exp(eta - 0.5)).astype(float)
    return pd.DataFrame({"y": y, "x1": x1, "x2": x2, "g": g, "z": z, "exposure": exposure})


N = 120
_RNG = np.random.default_rng(7)
X = _RNG.normal(size=(N, 3))
Y01 = (X[:, 0] + _RNG.normal(size=N) > 0).astype(float)
DF = pd.DataFrame(X, columns=["a", "b", "c"])


def _with(values, row, value):
    out = np.array(values, dtype=float, copy=True)
    out[row] = value
    return out


def _Xwith(j, row, value):
    out = X.copy()
    out[row, j] = value
    return out


def _est(**kw):
    kw.setdefault("n_bins", 8)
    return BinarsityGLM(**kw)


def _check(fn, error, match):
    """``fn()`` raises ``error`` whose message matches ``match``."""
    with pytest.raises(error, match=match) as info:
        fn()
    # exactly a ValueError/TypeError raised by our validation, not a subclass leaking
    # from NumPy or pandas (e.g. UFuncTypeError) whose message happens to match
    assert type(info.value) in (ValueError, TypeError), type(info.value)
    return info.value


# ------------------------------------------------------------- estimators: fit input

ESTIMATOR_FIT_CASES = [
    # X
    ("X NaN, missing='error'", lambda: _est().fit(_Xwith(1, 5, np.nan), Y01),
     ValueError, r"column 1 has a missing value \(NaN\) at row 5"),
    ("X NaN in a DataFrame", lambda: _est().fit(DF.assign(b=_with(DF.b, 5, np.nan)), Y01),
     ValueError, r"column 'b' has a missing value \(NaN\) at row 5"),
    ("X +inf", lambda: _est().fit(_Xwith(2, 7, np.inf), Y01),
     ValueError, r"column 2 has an infinite value \(inf\) at row 7"),
    ("X -inf with missing='separate'",
     lambda: _est(missing="separate").fit(_Xwith(0, 3, -np.inf), Y01),
     ValueError, r"column 0 has an infinite value \(-inf\) at row 3"),
    ("X pd.NA in Int64", lambda: _est().fit(
        DF.assign(c=pd.array([1, None, 2, 3] * (N // 4), dtype="Int64")), Y01),
     ValueError, r"column 'c' has a missing value"),
    ("X no rows", lambda: _est().fit(np.empty((0, 3)), np.empty(0)),
     ValueError, r"0 sample"),
    ("X DataFrame with no rows", lambda: _est().fit(DF.iloc[:0], np.empty(0)),
     ValueError, r"no rows"),
    ("X no columns", lambda: _est().fit(np.empty((N, 0)), Y01), ValueError, r"0 feature"),
    ("X 1-D", lambda: _est().fit(X[:, 0], Y01), ValueError, r"Expected 2D array"),
    ("X 3-D", lambda: _est().fit(X[:, :, None], Y01), ValueError, r"X must be 2-D"),
    ("X complex", lambda: _est().fit(X + 0j, Y01), ValueError, r"Complex data"),
    ("X sparse", lambda: _est().fit(sp.csr_matrix(X), Y01), TypeError, r"Sparse input"),
    ("X strings", lambda: _est().fit(np.full((N, 2), "a"), Y01), TypeError, r"column 0"),
    ("X text column", lambda: _est().fit(DF.assign(c="x"), Y01),
     TypeError, r"column 'c' has non-numeric dtype"),
    ("X categorical column",
     lambda: _est().fit(DF.assign(c=pd.Categorical(["u", "v"] * (N // 2))), Y01),
     TypeError, r"column 'c' is categorical"),
    ("X datetime column",
     lambda: _est().fit(DF.assign(c=pd.date_range("2000", periods=N)), Y01),
     TypeError, r"column 'c' has datetime-like dtype"),
    ("X timedelta column",
     lambda: _est().fit(DF.assign(c=pd.to_timedelta(np.arange(N), unit="D")), Y01),
     TypeError, r"column 'c' has datetime-like dtype"),
    ("X duplicated column names", lambda: _est().fit(DF.set_axis(["a", "a", "c"], axis=1), Y01),
     ValueError, r"duplicated column names \['a'\]"),
    # y
    ("y None", lambda: _est().fit(X, None), ValueError, r"target y is None"),
    ("y NaN", lambda: _est().fit(X, _with(Y01, 3, np.nan)), ValueError, r"y contains NaN"),
    ("y inf", lambda: _est().fit(X, _with(Y01, 3, np.inf)), ValueError, r"y contains NaN or inf"),
    ("y pd.NA", lambda: _est().fit(X, pd.array([1.0, None] * (N // 2), dtype="Float64")),
     ValueError, r"y contains NaN"),
    ("y text", lambda: _est().fit(X, np.full(N, "a")), ValueError, r"y of dtype <U1"),
    ("y 2-D", lambda: _est().fit(X, np.c_[Y01, Y01]), ValueError, r"y should be a 1d array"),
    ("y length", lambda: _est().fit(X, Y01[:-1]), ValueError, rf"y has {N - 1} rows but X has {N}"),
    ("y binomial not 0/1", lambda: _est(family="binomial").fit(X, 2 * Y01),
     ValueError, r"y must be 0 or 1 for family='binomial'"),
    ("y binomial fraction", lambda: _est(family="binomial").fit(X, Y01 / 2),
     ValueError, r"y must be 0 or 1 for family='binomial'"),
    ("y poisson negative", lambda: _est(family="poisson").fit(X, Y01 - 1),
     ValueError, r"y must be non-negative for family='poisson'"),
    ("y gaussian beyond 1e150 (the squared loss overflows)", lambda: _est().fit(X, Y01 * 1e200),
     ValueError, r"y has values as large as 1e\+200 in magnitude"),
    # sample_weight
    ("sample_weight length", lambda: _est().fit(X, Y01, sample_weight=np.ones(N - 1)),
     ValueError, rf"sample_weight has {N - 1} rows but X has {N}"),
    ("sample_weight negative", lambda: _est().fit(X, Y01, sample_weight=_with(np.ones(N), 0, -1)),
     ValueError, r"sample_weight must be non-negative"),
    ("sample_weight all zero", lambda: _est().fit(X, Y01, sample_weight=np.zeros(N)),
     ValueError, r"sample_weight is zero for every row"),
    ("sample_weight NaN", lambda: _est().fit(X, Y01, sample_weight=_with(np.ones(N), 0, np.nan)),
     ValueError, r"sample_weight contains NaN"),
    ("sample_weight inf", lambda: _est().fit(X, Y01, sample_weight=_with(np.ones(N), 0, np.inf)),
     ValueError, r"sample_weight contains NaN or infinite"),
    ("sample_weight text", lambda: _est().fit(X, Y01, sample_weight=np.full(N, "a")),
     TypeError, r"sample_weight must be numeric"),
    ("sample_weight 2-D", lambda: _est().fit(X, Y01, sample_weight=np.ones((N, 2))),
     ValueError, r"sample_weight must be one-dimensional"),
    # offset
    ("offset length", lambda: _est().fit(X, Y01, offset=np.ones(3)),
     ValueError, rf"offset has 3 rows but X has {N}"),
    ("offset NaN", lambda: _est().fit(X, Y01, offset=_with(np.zeros(N), 4, np.nan)),
     ValueError, r"offset contains NaN"),
    ("offset -inf", lambda: _est().fit(X, Y01, offset=_with(np.zeros(N), 4, -np.inf)),
     ValueError, r"offset contains NaN or infinite"),
    ("offset text", lambda: _est().fit(X, Y01, offset=np.full(N, "a")),
     TypeError, r"offset must be numeric"),
    # constructor parameters, checked at fit time
    ("lam < 0", lambda: _est(lam=-1e-3).fit(X, Y01), ValueError, r"lam must be a finite non-negative"),
    ("lam NaN", lambda: _est(lam=np.nan).fit(X, Y01), ValueError, r"lam must be a finite"),
    ("lam inf", lambda: _est(lam=np.inf).fit(X, Y01), ValueError, r"lam must be a finite"),
    ("lam text", lambda: _est(lam="big").fit(X, Y01), TypeError, r"lam must be a non-negative number"),
    ("n_bins < 2", lambda: BinarsityGLM(n_bins=1).fit(X, Y01), ValueError, r"n_bins must be an integer between 2 and 65536; got 1"),
    ("n_bins too large for uint16 codes", lambda: BinarsityGLM(n_bins=65537).fit(X, Y01),
     ValueError, r"got 65537: the codes are uint16"),
    ("n_bins too large with a missing level",
     lambda: BinarsityGLM(n_bins=65536, missing="separate").fit(X, Y01),
     ValueError, r"n_bins must be an integer between 2 and 65535; got 65536: the codes are uint16.*missing='separate'"),
    ("n_bins float", lambda: BinarsityGLM(n_bins=2.5).fit(X, Y01), TypeError, r"n_bins must be an integer between 2 and"),
    ("n_bins bool", lambda: BinarsityGLM(n_bins=True).fit(X, Y01), TypeError, r"n_bins must be an integer between 2 and"),
    ("n_bins per feature, wrong length", lambda: BinarsityGLM(n_bins=[4, 5]).fit(X, Y01),
     ValueError, r"n_bins has 2 entries but X has 3 features"),
    ("n_bins per feature, one < 2", lambda: BinarsityGLM(n_bins=[4, 1, 5]).fit(X, Y01),
     ValueError, r"n_bins\[1\] must be an integer between 2 and 65536; got 1"),
    ("family unknown", lambda: _est(family="weibull").fit(X, Y01), ValueError, r"family must be one of"),
    ("solver unknown", lambda: _est(solver="newton").fit(X, Y01), ValueError, r"solver must be one of"),
    ("missing unknown", lambda: _est(missing="drop").fit(X, Y01), ValueError, r"missing must be one of"),
    ("tol <= 0", lambda: _est(tol=0.0).fit(X, Y01), ValueError, r"tol must be a positive"),
    ("max_iter 0", lambda: _est(max_iter=0).fit(X, Y01), ValueError, r"max_iter must be a positive"),
    ("max_iter float", lambda: _est(max_iter=10.0).fit(X, Y01), TypeError, r"max_iter must be a positive"),
    ("penalty_weights unknown name", lambda: _est(penalty_weights="flat").fit(X, Y01),
     ValueError, r"penalty_weights must be one of \('theory', 'uniform', 'balanced'\) or an array"),
    ("penalty_weights wrong length", lambda: _est(penalty_weights=np.ones(5)).fit(X, Y01),
     ValueError, r"penalty_weights must have length 24"),
    ("penalty_weights negative", lambda: _est(penalty_weights=-np.ones(24)).fit(X, Y01),
     ValueError, r"penalty_weights must be finite and non-negative"),
    ("penalty_weights NaN", lambda: _est(penalty_weights=np.full(24, np.nan)).fit(X, Y01),
     ValueError, r"penalty_weights must be finite and non-negative"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("fn", "error", "match"),
    [pytest.param(fn, err, m, id=name) for name, fn, err, m in ESTIMATOR_FIT_CASES],
)
def test_estimator_fit_rejects_bad_input_by_name(fn, error, match):
    _check(fn, error, match)


CLASSIFIER_CASES = [
    ("one class", np.zeros(N), ValueError, r"needs 2 classes; y has 1 class"),
    ("three classes", np.arange(N) % 3, ValueError, r"Only binary classification"),
    ("continuous y", np.linspace(0, 1, N), ValueError, r"continuous target"),
    ("NaN label", _with(Y01, 0, np.nan), ValueError, r"y contains NaN"),
    ("y length", Y01[:-2], ValueError, rf"y has {N - 2} rows but X has {N}"),
    ("None label", np.array([None, 1] * (N // 2), dtype=object), ValueError,
     r"y contains missing labels \(None or NaN\)"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("y", "error", "match"), [pytest.param(*c[1:], id=c[0]) for c in CLASSIFIER_CASES]
)
def test_classifier_rejects_bad_labels_by_name(y, error, match):
    _check(lambda: BinarsityClassifier(n_bins=8).fit(X, y), error, match)


# ---------------------------------------------------------------- estimators: predict


@pytest.fixture(scope="module")
def fitted_on_frame():
    return _est(family="binomial").fit(DF, Y01)


PREDICT_CASES = [
    ("missing column", lambda e: e.predict(DF.drop(columns="b")),
     ValueError, r"X lacks column\(s\) \['b'\] seen in fit"),
    ("wrong number of features", lambda e: e.predict(X[:, :2]),
     ValueError, r"X has 2 features, but BinarsityGLM is expecting 3"),
    ("NaN without a missing level", lambda e: e.predict(DF.assign(a=np.nan)),
     ValueError, r"column 'a' has a missing value \(NaN\) at row 0, but it had none in training"),
    ("pd.NA without a missing level",
     lambda e: e.predict(DF.assign(a=pd.array([None] * N, dtype="Float64"))),
     ValueError, r"column 'a' has a missing value"),
    ("inf", lambda e: e.predict(DF.assign(c=np.inf)), ValueError, r"column 'c' has an infinite"),
    ("text column", lambda e: e.predict(DF.assign(a="x")), TypeError, r"column 'a' has non-numeric"),
    ("categorical column", lambda e: e.predict(DF.assign(a=pd.Categorical(["u"] * N))),
     TypeError, r"column 'a' is categorical"),
    ("offset NaN", lambda e: e.predict(DF, offset=np.full(N, np.nan)), ValueError, r"offset contains NaN"),
    ("offset length", lambda e: e.predict(DF, offset=np.ones(2)), ValueError, r"offset has 2 rows"),
    ("1-D", lambda e: e.predict(X[:, 0]), ValueError, r"Expected 2D array"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("fn", "error", "match"), [pytest.param(*c[1:], id=c[0]) for c in PREDICT_CASES]
)
def test_estimator_predict_rejects_bad_input_by_name(fitted_on_frame, fn, error, match):
    _check(lambda: fn(fitted_on_frame), error, match)


def test_predict_before_fit_raises_not_fitted():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError, match="not fitted yet"):
        _est().predict(X)
    with pytest.raises(NotFittedError, match="not fitted yet"):
        Binarizer().transform(X)


def test_predict_matches_columns_by_name_and_ignores_extras(fitted_on_frame):
    ref = fitted_on_frame.predict(DF)
    assert_array_equal(fitted_on_frame.predict(DF[["c", "a", "b"]]), ref)
    assert_array_equal(fitted_on_frame.predict(DF.assign(extra="text")), ref)
    assert fitted_on_frame.predict(DF.iloc[:0]).shape == (0,)


# --------------------------------------------------------------------- Binarizer

BINARIZER_CASES = [
    ("n_bins None", lambda: Binarizer(n_bins=None).fit(X), TypeError, r"n_bins must be an integer between 2 and"),
    ("n_bins text", lambda: Binarizer(n_bins="5").fit(X), TypeError, r"n_bins must be an integer between 2 and"),
    ("n_bins 1", lambda: Binarizer(n_bins=1).fit(X), ValueError, r"n_bins must be an integer between 2 and 65536; got 1"),
    ("n_bins 65537", lambda: Binarizer(n_bins=65537).fit(X), ValueError, r"got 65537: the codes are uint16"),
    ("method unknown", lambda: Binarizer(method="kmeans").fit(X), ValueError, r"method must be one of"),
    ("missing unknown", lambda: Binarizer(missing="drop").fit(X), ValueError, r"missing must be one of"),
    ("sample_weight negative", lambda: Binarizer().fit(X, sample_weight=-np.ones(N)),
     ValueError, r"sample_weight must be non-negative"),
    ("sample_weight all zero", lambda: Binarizer().fit(X, sample_weight=np.zeros(N)),
     ValueError, r"sample_weight is zero for every row"),
    ("sample_weight NaN", lambda: Binarizer().fit(X, sample_weight=np.full(N, np.nan)),
     ValueError, r"sample_weight contains NaN or infinite values"),
    ("sample_weight length", lambda: Binarizer().fit(X, sample_weight=np.ones(3)),
     ValueError, rf"sample_weight has 3 rows but X has {N}"),
    ("all-missing column, missing='separate'",
     lambda: Binarizer(missing="separate").fit(np.c_[X[:, 0], np.full(N, np.nan)]),
     ValueError, r"column 1 has no non-missing value"),
    ("missing values only on zero-weight rows",
     lambda: Binarizer(missing="separate").fit(
         np.c_[X[:, 0], _with(X[:, 1], 0, np.nan)], sample_weight=_with(np.zeros(N), 0, 1.0)),
     ValueError, r"column 1 has no non-missing value with a positive weight"),
    ("object array holding text", lambda: Binarizer().fit(np.array([[1.0, "a"], [2.0, "b"]], dtype=object)),
     TypeError, r"column 1 holds a non-numeric value 'a'"),
    ("complex", lambda: Binarizer().fit(X + 1j), ValueError, r"Complex data not supported: column 0 has dtype complex"),
    ("datetime ndarray", lambda: Binarizer().fit(np.array([["2000-01-01"]], dtype="datetime64[D]")),
     TypeError, r"datetimes/timedeltas are not numbers"),
    ("period column", lambda: Binarizer().fit(pd.DataFrame({"p": pd.period_range("2000", periods=3)})),
     TypeError, r"column 'p' has datetime-like dtype period"),
    ("tz-aware datetime column",
     lambda: Binarizer().fit(pd.DataFrame({"t": pd.date_range("2000", periods=3, tz="UTC")})),
     TypeError, r"column 't' has datetime-like dtype"),
    ("interval column", lambda: Binarizer().fit(pd.DataFrame({"i": pd.interval_range(0, 3)})),
     TypeError, r"column 'i' has non-numeric dtype interval"),
    ("1-D input", lambda: Binarizer().fit(X[:, 0]), ValueError, r"X must be 2-D"),
    ("transform: missing column",
     lambda: Binarizer(n_bins=4).fit(DF).transform(DF[["a", "c"]]),
     ValueError, r"X lacks column\(s\) \['b'\]"),
    ("transform: wrong number of features",
     lambda: Binarizer(n_bins=4).fit(X).transform(X[:, :1]),
     ValueError, r"X has 1 features, but Binarizer is expecting 3 features as input"),
    ("transform: NaN without a missing level",
     lambda: Binarizer(n_bins=4).fit(X).transform(_Xwith(2, 9, np.nan)),
     ValueError, r"column 2 has a missing value \(NaN\) at row 9"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("fn", "error", "match"), [pytest.param(*c[1:], id=c[0]) for c in BINARIZER_CASES]
)
def test_binarizer_rejects_bad_input_by_name(fn, error, match):
    _check(fn, error, match)


@pytest.mark.parametrize("scale", [1e-300, 1e-150, 1e150, 1e300])
def test_uniform_weights_of_any_scale_fit_like_unit_weights(scale):
    """The objective (1/W) Σ s_i ℓ_i and the weighted quantiles ignore the weights' scale."""
    X_, y = _xy("binomial", n=200)
    ref = _est(family="binomial").fit(X_, y)
    est = _est(family="binomial").fit(X_, y, sample_weight=np.full(200, scale))
    for a, b in zip(est.binarizer_.edges_, ref.binarizer_.edges_, strict=True):
        assert_array_equal(a, b)
    np.testing.assert_allclose(est.coef_, ref.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(est.bin_counts_ / scale, ref.bin_counts_, rtol=1e-12)


# ------------------------------------------------------------------------ prox

V = np.array([1.0, 3.0, 2.0, 5.0, -1.0])
W = np.ones(5)
BP = np.array([0, 2, 5])
C = np.array([1.0, 2.0, 3.0, 1.0, 2.0])

PROX_CASES = [
    ("prox_tv: v NaN", lambda: prox_tv(_with(V, 0, np.nan), W), ValueError, r"v must be finite"),
    ("prox_tv: v inf", lambda: prox_tv(_with(V, 0, np.inf), W), ValueError, r"v must be finite"),
    ("prox_tv: v 2-D", lambda: prox_tv(V[None], W), ValueError, r"v must be 1-D"),
    ("prox_tv: v text", lambda: prox_tv(np.array(["a"]), np.ones(1)), TypeError, r"v must be an array of real"),
    ("prox_tv: v complex", lambda: prox_tv(V + 0j, W), TypeError, r"v must be an array of real"),
    ("prox_tv: weights negative", lambda: prox_tv(V, -W), ValueError, r"weights must be >= 0"),
    ("prox_tv: weights NaN", lambda: prox_tv(V, _with(W, 1, np.nan)), ValueError, r"weights must be finite"),
    ("prox_tv: weights length", lambda: prox_tv(V, W[:3]), ValueError, r"weights must have length 5"),
    ("prox_tv: step negative", lambda: prox_tv(V, W, step=-1.0), ValueError, r"step must be a finite non-negative number; got -1"),
    ("prox_tv: step NaN", lambda: prox_tv(V, W, step=np.nan), ValueError, r"step must be a finite non-negative number; got nan"),
    ("prox_tv: step bool", lambda: prox_tv(V, W, step=True), TypeError, r"step must be a non-negative number; got True"),
    ("prox_binarsity: counts negative", lambda: prox_binarsity(V, BP, W, -C), ValueError, r"counts must be >= 0"),
    ("prox_binarsity: counts NaN", lambda: prox_binarsity(V, BP, W, _with(C, 2, np.nan)),
     ValueError, r"counts must be finite"),
    ("prox_binarsity: counts length", lambda: prox_binarsity(V, BP, W, C[:4]),
     ValueError, r"counts must have length 5"),
    ("prox_binarsity: block_ptr float", lambda: prox_binarsity(V, BP.astype(float), W, C),
     TypeError, r"block_ptr must be an array of integers"),
    ("prox_binarsity: block_ptr start", lambda: prox_binarsity(V, [1, 2, 5], W, C),
     ValueError, r"block_ptr must start at 0"),
    ("prox_binarsity: block_ptr end", lambda: prox_binarsity(V, [0, 2, 6], W, C),
     ValueError, r"block_ptr must end at len\(v\) = 5"),
    ("prox_binarsity: empty block", lambda: prox_binarsity(V, [0, 2, 2, 5], W, C),
     ValueError, r"block_ptr must be strictly increasing"),
    ("prox_binarsity: block_ptr past the end", lambda: prox_binarsity(V, [0, 2**62, 5], W, C),
     ValueError, r"block_ptr must be strictly increasing"),
    ("prox_binarsity: block_ptr empty", lambda: prox_binarsity(V, np.array([], dtype=int), W, C),
     ValueError, r"block_ptr must be 1-D with at least one entry"),
    ("prox_binarsity: weights length", lambda: prox_binarsity(V, BP, W[:2], C),
     ValueError, r"weights must have length 5"),
    ("prox_binarsity: step negative", lambda: prox_binarsity(V, BP, W, C, step=-1),
     ValueError, r"step must be a finite non-negative number; got -1"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("fn", "error", "match"), [pytest.param(*c[1:], id=c[0]) for c in PROX_CASES]
)
def test_prox_rejects_bad_input_by_name(fn, error, match):
    _check(fn, error, match)


def test_prox_is_scale_equivariant_at_extreme_magnitudes():
    """prox(c·v; c·ω) = c·prox(v; ω): no overflow, underflow or loss of structure."""
    ref_tv = prox_tv(V, W)
    ref_b = prox_binarsity(V, BP, W, C)
    for c in (1e-300, 1e-150, 1e150, 1e300):
        np.testing.assert_allclose(prox_tv(c * V, c * W) / c, ref_tv, rtol=1e-12)
        got = prox_binarsity(c * V, BP, c * W, C) / c
        np.testing.assert_allclose(got, ref_b, rtol=1e-9, atol=1e-12 * np.abs(V).max())
        # counts only enter through their ratios within a block
        got = prox_binarsity(V, BP, W, c * C)
        np.testing.assert_allclose(got, ref_b, rtol=1e-9, atol=1e-12)


# --------------------------------------------------- engine: solve and lambda_max

_SRNG = np.random.default_rng(11)
S_CODES = _SRNG.integers(0, 4, size=(2, 50)).astype(np.uint8)
S_BP = np.array([0, 4, 8])
S_Y = _SRNG.normal(size=50)
S_W = np.ones(8)


def _solve(codes=S_CODES, block_ptr=S_BP, y=S_Y, **kw):
    from binarsity_stats.engine._solvers import solve

    kw.setdefault("lam", 0.1)
    kw.setdefault("penalty_weights", S_W)
    return solve(codes, block_ptr, y, **kw)


def _lmax(codes=S_CODES, block_ptr=S_BP, y=S_Y, **kw):
    from binarsity_stats.engine._solvers import lambda_max

    kw.setdefault("penalty_weights", S_W)
    return lambda_max(codes, block_ptr, y, **kw)


# The kernels index θ and the histograms by block_ptr[j] + code without bounds checks:
# these are the validations that make that safe (and .ci/boundscheck proves it).
SOLVER_CASES = [
    ("code beyond its block", lambda: _solve(codes=np.where(S_CODES == 3, 7, S_CODES).astype(np.uint8)),
     ValueError, r"codes of block 0 reach 7 but the block has 4 levels"),
    ("lambda_max: code beyond its block", lambda: _lmax(codes=np.where(S_CODES == 3, 7, S_CODES).astype(np.uint8)),
     ValueError, r"codes of block 0 reach 7"),
    ("negative codes", lambda: _solve(codes=S_CODES.astype(np.int64) - 1),
     ValueError, r"codes must be integers in \[0, 65535\]"),
    ("codes beyond uint16", lambda: _solve(codes=S_CODES.astype(np.int64) * 30000),
     ValueError, r"codes must be integers in \[0, 65535\]"),
    ("codes 1-D", lambda: _solve(codes=S_CODES[0]), ValueError, r"codes must be 2-D"),
    ("block_ptr wrong length", lambda: _solve(block_ptr=np.array([0, 4])),
     ValueError, r"block_ptr must have length n_blocks \+ 1 = 3"),
    ("block_ptr not starting at 0", lambda: _solve(block_ptr=np.array([1, 4, 8])),
     ValueError, r"block_ptr must start at 0"),
    ("block_ptr decreasing", lambda: _solve(block_ptr=np.array([0, 8, 4])),
     ValueError, r"block_ptr must be strictly increasing"),
    ("y length", lambda: _solve(y=S_Y[:3]), ValueError, r"y has 3 rows but the design has 50"),
    ("no rows", lambda: _solve(codes=S_CODES[:, :0], y=S_Y[:0]), ValueError, r"no rows to fit"),
    ("penalty_weights NaN", lambda: _solve(penalty_weights=_with(S_W, 2, np.nan)),
     ValueError, r"penalty_weights must be finite and non-negative"),
    ("penalty_weights length", lambda: _solve(penalty_weights=S_W[:5]),
     ValueError, r"penalty_weights must have length 8"),
    ("dense NaN", lambda: _solve(dense=np.full(50, np.nan)), ValueError, r"dense contains NaN"),
    ("dense length", lambda: _solve(dense=np.ones(3)), ValueError, r"dense has 3 rows but y has 50"),
    ("lam < 0", lambda: _solve(lam=-1.0), ValueError, r"lam must be a finite non-negative"),
    ("lam text", lambda: _solve(lam="a"), TypeError, r"lam must be a non-negative number"),
    ("tol NaN", lambda: _solve(tol=np.nan), ValueError, r"tol must be a positive number"),
    ("max_iter float", lambda: _solve(max_iter=10.0), TypeError, r"max_iter must be a positive integer"),
    ("solver unknown", lambda: _solve(solver="newton"), ValueError, r"solver must be one of"),
    ("warm start of another design",
     lambda: _solve(codes=S_CODES[:1], block_ptr=S_BP[:2], penalty_weights=S_W[:4], warm_start=_solve()),
     ValueError, r"warm_start does not match the design"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("fn", "error", "match"), [pytest.param(*c[1:], id=c[0]) for c in SOLVER_CASES]
)
def test_solver_validates_what_the_kernels_index_with(fn, error, match):
    _check(fn, error, match)


@pytest.mark.parametrize("bad", [0.5, np.nan])
def test_solver_refuses_non_integer_codes(bad):
    codes = S_CODES.astype(np.float64)
    codes[0, 0] = bad
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's invalid-cast warning
        _check(lambda: _solve(codes=codes), (ValueError, TypeError), r"codes")


def test_non_finite_warm_start_is_refused_by_name():
    from dataclasses import replace

    bad = replace(_solve(), coef=np.full(8, np.nan))
    _check(lambda: _solve(warm_start=bad, max_iter=50), ValueError, r"warm_start")


# ------------------------------------------------------------------------ glm()

FRAME = _frame()
NF = len(FRAME)
FORMULA = "y ~ bin(x1, 8) + bin(x2, 5) + C(g) + z"


def _glm(formula=FORMULA, data=None, **kw):
    kw.setdefault("family", "poisson")
    return glm(formula, FRAME if data is None else data, **kw)


def _nan_at(col, row=3, value=np.nan, data=None):
    f = (FRAME if data is None else data).copy()
    f[col] = f[col].astype(float)
    f.loc[row, col] = value
    return f


GLM_CASES = [
    ("absent column", lambda: _glm("y ~ bin(nope) + C(g)"),
     ValueError, r"names column\(s\) \['nope'\] that are not in the data"),
    ("absent response", lambda: _glm("nope ~ bin(x1)"), ValueError, r"\['nope'\]"),
    ("no response", lambda: _glm("~ bin(x1)"), ValueError, r"has no response"),
    ("formula not a string", lambda: glm(3, FRAME), TypeError, r"formula must be a string"),
    ("data not a frame", lambda: glm(FORMULA, [1, 2, 3]), TypeError, r"data must be a pandas, polars or pyarrow DataFrame"),
    ("no rows", lambda: _glm(data=FRAME.iloc[:0]), ValueError, r"data has no rows"),
    ("bin() column NaN", lambda: _glm(data=_nan_at("x1")),
     ValueError, r"column 'x1' contains missing values \(NaN\)"),
    ("bin() column inf", lambda: _glm(data=_nan_at("x1", value=np.inf)),
     ValueError, r"column 'x1' contains infinite values"),
    ("bin() column inf with missing='separate'",
     lambda: _glm(data=_nan_at("x1", value=-np.inf), missing="separate"),
     ValueError, r"column 'x1' contains infinite values"),
    ("bin() column pd.NA (Int64)", lambda: _glm(
        "y ~ bin(x2)", FRAME.assign(x2=pd.array(np.where(np.arange(NF) % 7 == 0, None, FRAME.x2),
                                                dtype="Int64"))),
     ValueError, r"column 'x2' contains missing values"),
    ("bin() on text", lambda: _glm("y ~ bin(g)"), TypeError, r"bin\(\) needs a numeric column; column 'g'"),
    ("bin() on categorical", lambda: _glm("y ~ bin(g)", FRAME.assign(g=pd.Categorical(FRAME.g))),
     TypeError, r"column 'g' has dtype category"),
    ("bin() on datetime", lambda: _glm("y ~ bin(t)", FRAME.assign(t=pd.date_range("2000", periods=NF))),
     TypeError, r"column 't' has dtype datetime64"),
    ("bin() on object text", lambda: _glm("y ~ bin(o)", FRAME.assign(o=pd.Series(["a"] * NF, dtype=object))),
     TypeError, r"column 'o' has dtype object"),
    ("bin(x, 1)", lambda: _glm("y ~ bin(x1, 1)"), ValueError, r"n_bins must be an integer between 2 and 65536; got 1 in bin\(x1\)"),
    ("bin(x, 70000)", lambda: _glm("y ~ bin(x1, 70000)"), ValueError, r"got 70000 in bin\(x1\): the codes are uint16"),
    ("bin(x, 2.5)", lambda: _glm("y ~ bin(x1, 2.5)"), TypeError, r"n_bins must be an integer between 2 and 65536; got 2.5 in bin\(x1\)"),
    ("glm(n_bins=0)", lambda: _glm(n_bins=0), ValueError, r"n_bins must be an integer between 2 and 65536; got 0 in glm\(\)"),
    ("glm(n_bins=70000)", lambda: _glm(n_bins=70000), ValueError, r"got 70000 in glm\(\): the codes are uint16"),
    ("C() column missing", lambda: _glm("y ~ C(g)", FRAME.assign(g=FRAME.g.where(np.arange(NF) % 5 > 0))),
     ValueError, r"column 'g' contains missing values"),
    ("dense term NaN", lambda: _glm(data=_nan_at("z")), ValueError, r"term 'z' has missing or infinite"),
    ("dense term pd.NA", lambda: _glm(
        "y ~ i", FRAME.assign(i=pd.array(np.where(np.arange(NF) % 7 == 0, None, FRAME.x2), dtype="Int64"))),
     ValueError, r"term 'i' has missing or infinite"),
    ("response NaN", lambda: _glm(data=_nan_at("y")), ValueError, r"response 'y' \(y\) contains missing"),
    ("response pd.NA", lambda: _glm(data=FRAME.assign(y=pd.array(np.where(np.arange(NF) % 7 == 0, None, FRAME.y.astype(int)), dtype="Int64"))),
     ValueError, r"response 'y' \(y\) contains missing"),
    ("response negative, poisson", lambda: _glm(data=FRAME.assign(y=-1.0 - FRAME.y)),
     ValueError, r"y must be non-negative for family='poisson'"),
    ("response not 0/1, binomial", lambda: _glm(family="binomial"),
     ValueError, r"y must be 0 or 1 for family='binomial'"),
    ("response three levels, binomial", lambda: _glm("g ~ bin(x1)", family="binomial"),
     ValueError, r"3 level"),
    ("response text, gaussian", lambda: _glm("g ~ bin(x1)", family="gaussian"),
     ValueError, r"numeric response"),
    ("family unknown", lambda: _glm(family="weibull"), ValueError, r"family must be one of"),
    ("missing unknown", lambda: _glm(missing="omit"), ValueError, r"missing must be one of"),
    ("penalty_weights unknown", lambda: _glm(penalty_weights="flat"), ValueError, r"penalty_weights"),
    ("sample_weight negative", lambda: _glm(sample_weight=-np.ones(NF)),
     ValueError, r"sample_weight must be non-negative"),
    ("sample_weight all zero", lambda: _glm(sample_weight=np.zeros(NF)),
     ValueError, r"sample_weight is zero for every row"),
    ("sample_weight NaN", lambda: _glm(sample_weight=_with(np.ones(NF), 0, np.nan)),
     ValueError, r"sample_weight contains NaN"),
    ("sample_weight length", lambda: _glm(sample_weight=np.ones(3)),
     ValueError, rf"sample_weight has 3 rows but the data has {NF}"),
    ("sample_weight names no column", lambda: _glm(sample_weight="nope"),
     ValueError, r"sample_weight='nope' is not a column"),
    ("sample_weight names a text column", lambda: _glm(sample_weight="g"),
     TypeError, r"sample_weight='g' needs a numeric column; column 'g' has dtype str"),
    ("sample_weight names a datetime column",
     lambda: _glm(sample_weight="t", data=FRAME.assign(t=pd.date_range("2000", periods=NF))),
     TypeError, r"sample_weight='t' needs a numeric column; column 't' has dtype datetime64"),
    ("offset names a text column", lambda: _glm(offset="g"),
     TypeError, r"offset='g' needs a numeric column; column 'g' has dtype str"),
    ("response datetime", lambda: _glm("t ~ bin(x1)", FRAME.assign(t=pd.date_range("2000", periods=NF)),
                                       family="gaussian"),
     TypeError, r"response 't' has date/time dtype datetime64"),
    ("bare datetime term", lambda: _glm("y ~ t", FRAME.assign(t=pd.date_range("2000", periods=NF))),
     TypeError, r"column 't' has date/time dtype datetime64.*C\(t\)"),
    ("bare timedelta term",
     lambda: _glm("y ~ bin(x1) + t", FRAME.assign(t=pd.to_timedelta(np.arange(NF), unit="D"))),
     TypeError, r"column 't' has date/time dtype timedelta64"),
    ("gaussian response beyond 1e150", lambda: _glm(data=FRAME.assign(y=FRAME.y * 1e200), family="gaussian"),
     ValueError, r"y has values as large as [0-9.]+e\+20[01]"),
    ("offset NaN", lambda: _glm(offset=_with(np.zeros(NF), 0, np.nan)), ValueError, r"offset contains NaN"),
    ("offset length", lambda: _glm(offset=np.ones(3)), ValueError, rf"offset has 3 rows but the data has {NF}"),
    ("offset() term not finite", lambda: _glm("y ~ bin(x1) + offset(log(exposure))",
                                                _nan_at("exposure", value=0.0)),
     ValueError, r"offset term \['offset\(log\(exposure\)\)'\] has missing or infinite"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("fn", "error", "match"), [pytest.param(*c[1:], id=c[0]) for c in GLM_CASES]
)
def test_glm_rejects_bad_input_by_name(fn, error, match):
    _check(fn, error, match)


@pytest.fixture(scope="module")
def glm_model():
    return _glm(FORMULA + " + offset(log(exposure))")


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"lam": -1.0}, ValueError, r"lam must be a finite non-negative"),
        ({"lam": np.nan}, ValueError, r"lam must be a finite"),
        ({"lam": np.inf}, ValueError, r"lam must be a finite"),
        ({"lam": "oracle"}, ValueError, r"lam must be a non-negative number, 'theory' or 'alo'"),
        ({"lam": None}, TypeError, r"lam must be a non-negative number"),
        ({"lam": 1e-3, "solver": "newton"}, ValueError, r"solver must be one of"),
        ({"lam": 1e-3, "tol": -1.0}, ValueError, r"tol must be a positive"),
        ({"lam": 1e-3, "max_iter": 0}, ValueError, r"max_iter must be a positive"),
    ],
)
def test_glm_fit_rejects_bad_arguments_by_name(glm_model, kwargs, error, match):
    _check(lambda: glm_model.fit(**kwargs), error, match)


def test_glm_path_and_cv_reject_bad_arguments_by_name(glm_model):
    _check(lambda: glm_model.fit_path(lams=[1e-3, -1.0]), ValueError, r"lams must be")
    _check(lambda: glm_model.fit_path(lams=[]), ValueError, r"lams must be")
    _check(lambda: glm_model.fit_path(n_lambdas=0), ValueError, r"n_lambdas must be >= 1")
    _check(lambda: glm_model.fit_path(lam_min_ratio=0.0), ValueError, r"lam_min_ratio")
    _check(lambda: glm_model.fit_cv(folds=1), ValueError, r"folds must be between 2")
    _check(lambda: glm_model.fit_cv(folds=NF + 1), ValueError, r"folds must be between 2")
    _check(lambda: glm_model.fit_cv(folds=2.5), TypeError, r"folds must be an integer")
    _check(lambda: glm_model.fit_cv(n_jobs=0), ValueError, r"n_jobs must be a non-zero")
    _check(lambda: glm_model.fit_cv(scoring="r2"), ValueError, r"scoring must be one of")
    _check(lambda: glm_model.fit_cv(scoring="auc"), ValueError, r"scoring='auc' needs")


@pytest.fixture(scope="module")
def glm_results(glm_model):
    return glm_model.fit(lam=1e-3)


NEW = _frame(n=30, seed=5)

GLM_PREDICT_CASES = [
    ("missing bin() column", lambda r: r.predict(NEW.drop(columns="x1")),
     ValueError, r"column\(s\) \['x1'\] required by the formula are missing"),
    ("missing C() column", lambda r: r.predict(NEW.drop(columns="g")), ValueError, r"\['g'\]"),
    ("missing dense column", lambda r: r.predict(NEW.drop(columns="z")), ValueError, r"\['z'\]"),
    ("missing offset() column", lambda r: r.predict(NEW.drop(columns="exposure")),
     ValueError, r"\['exposure'\]"),
    ("unseen level", lambda r: r.predict(NEW.assign(g="zz")),
     ValueError, r"column 'g' has level\(s\) not seen when the model was fitted: \['zz'\]"),
    ("missing level value", lambda r: r.predict(NEW.assign(g=None)),
     ValueError, r"column 'g' contains missing values but the model has no missing level"),
    ("bin() column NaN", lambda r: r.predict(NEW.assign(x1=np.nan)),
     ValueError, r"column 'x1' contains missing values \(NaN\) but the model has no missing level"),
    ("bin() column inf", lambda r: r.predict(NEW.assign(x1=-np.inf)),
     ValueError, r"column 'x1' contains infinite values"),
    ("bin() column text", lambda r: r.predict(NEW.assign(x1="a")),
     TypeError, r"bin\(\) needs a numeric column; column 'x1'"),
    ("dense column NaN", lambda r: r.predict(NEW.assign(z=np.nan)),
     ValueError, r"term 'z' has missing or infinite"),
    ("offset() term not finite", lambda r: r.predict(NEW.assign(exposure=0.0)),
     ValueError, r"offset term \['offset\(log\(exposure\)\)'\]"),
    ("offset argument NaN", lambda r: r.predict(NEW, offset=np.full(30, np.nan)),
     ValueError, r"offset contains NaN or infinite values"),
    ("offset argument length", lambda r: r.predict(NEW, offset=np.ones(3)),
     ValueError, r"offset has 3 rows but the data has 30"),
    ("type unknown", lambda r: r.predict(NEW, type="probability"), ValueError, r"type must be"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("fn", "error", "match"), [pytest.param(*c[1:], id=c[0]) for c in GLM_PREDICT_CASES]
)
def test_glm_predict_rejects_bad_input_by_name(glm_results, fn, error, match):
    _check(lambda: fn(glm_results), error, match)


def test_glm_predict_accepts_equivalent_pandas_dtypes(glm_results):
    ref = glm_results.predict(NEW)
    assert np.all(np.isfinite(ref))
    same = NEW.assign(
        x1=pd.array(NEW.x1, dtype="Float64"),
        x2=pd.array(NEW.x2, dtype="Int64"),
        g=pd.Categorical(NEW.g),
    )
    assert_array_equal(glm_results.predict(same), ref)
    assert glm_results.predict(NEW.iloc[:0]).shape == (0,)


def test_glm_offset_column_is_checked_at_predict_time():
    """glm(offset="exposure") replays the column from newdata, with the same checks."""
    res = _glm("y ~ bin(x1, 8)", offset="exposure").fit(lam=1e-3)
    assert np.all(np.isfinite(res.predict(NEW)))
    _check(lambda: res.predict(NEW.assign(exposure=np.nan)), ValueError,
           r"offset \(column 'exposure'\) contains NaN or infinite")  # fmt: skip
    _check(lambda: res.predict(NEW.assign(exposure=np.inf)), ValueError,
           r"offset \(column 'exposure'\) contains NaN or infinite")  # fmt: skip
    _check(lambda: res.predict(NEW.assign(exposure="a")), TypeError,
           r"offset='exposure' needs a numeric column; column 'exposure'")  # fmt: skip
    _check(lambda: res.predict(NEW.drop(columns="exposure")), ValueError,
           r"column 'exposure' \(the model's offset\) is missing")  # fmt: skip


# ---------------------------------------------------------- pandas dtypes accepted


def test_nullable_and_boolean_columns_fit_like_their_numpy_equivalents():
    rng = np.random.default_rng(3)
    ints = rng.integers(0, 40, N)
    flags = rng.random(N) < 0.4
    plain = pd.DataFrame({"i": ints.astype(float), "f": X[:, 1], "b": flags.astype(float)})
    nullable = pd.DataFrame(
        {
            "i": pd.array(ints, dtype="Int64"),
            "f": pd.array(X[:, 1], dtype="Float64"),
            "b": pd.array(flags, dtype="boolean"),
        }
    )
    numpy_kinds = pd.DataFrame({"i": ints.astype(np.uint8), "f": X[:, 1].astype(np.float32)
                                .astype(np.float64), "b": flags})  # fmt: skip
    ref = _est(family="binomial").fit(plain, Y01)
    for frame in (nullable, numpy_kinds):
        est = _est(family="binomial").fit(frame, Y01)
        assert_array_equal(est.coef_, ref.coef_)
        assert est.intercept_ == ref.intercept_
        assert_array_equal(est.predict(frame), ref.predict(plain))


def test_pd_na_is_a_missing_value_under_the_separate_policy():
    with_nan = X[:, 0].copy()
    with_nan[::9] = np.nan
    a = pd.DataFrame({"x": with_nan})
    b = pd.DataFrame(
        {"x": pd.array([None if np.isnan(v) else v for v in with_nan], dtype="Float64")}
    )
    ea = _est(family="binomial", missing="separate").fit(a, Y01)
    eb = _est(family="binomial", missing="separate").fit(b, Y01)
    assert ea.binarizer_.has_missing_level_[0]
    assert_array_equal(ea.coef_, eb.coef_)
    assert_array_equal(ea.predict(b), eb.predict(a))
    assert np.all(np.isfinite(eb.predict(b)))


def test_glm_nullable_columns_fit_like_numpy_columns():
    base = _glm("y ~ bin(x1, 8) + bin(x2, 5) + C(g)").fit(lam=1e-3)
    data = FRAME.assign(
        x1=pd.array(FRAME.x1, dtype="Float64"),
        x2=pd.array(FRAME.x2, dtype="Int64"),
        g=pd.Categorical(FRAME.g),
        y=pd.array(FRAME.y.astype(int), dtype="Int64"),
    )
    res = _glm("y ~ bin(x1, 8) + bin(x2, 5) + C(g)", data).fit(lam=1e-3)
    assert_array_equal(res.coef, base.coef)
    assert res.intercept == base.intercept


# ------------------------------------------------------------------------ numerics


def _fit_quietly(est, *args, **kwargs):
    """Fit, returning the ConvergenceWarnings raised (other warnings propagate)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        est.fit(*args, **kwargs)
    conv = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    for w in caught:
        if not issubclass(w.category, ConvergenceWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return conv


def _assert_finite_fit(est, X_, conv):
    assert np.all(np.isfinite(est.coef_)), "non-finite coefficients"
    assert np.isfinite(est.intercept_)
    assert np.isfinite(est.objective_)
    assert np.all(np.isfinite(est.predict(X_)))
    if est.converged_:
        assert not conv
    else:
        # stopped early: the warning says so and states the violation it stopped at
        assert len(conv) == 1
        msg = str(conv[0].message)
        assert f"KKT violation of {est.kkt_violation_:.3g}" in msg
        assert "max_iter" in msg


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("lam", [0.0, 1e-8, 1e-4])
def test_separable_binomial_is_finite(solver, lam):
    Xs = np.random.default_rng(0).normal(size=(400, 3))
    y = (Xs[:, 0] > 0).astype(float)
    est = _est(family="binomial", lam=lam, n_bins=10, solver=solver, max_iter=300)
    conv = _fit_quietly(est, Xs, y)
    _assert_finite_fit(est, Xs, conv)
    p = est.predict(Xs)
    assert np.all((p >= 0) & (p <= 1))
    # the separation is found (only the bin that straddles 0 mixes the classes)
    assert np.mean((p > 0.5) == (y == 1)) > 0.95


@pytest.mark.parametrize("scale", [1e300, 1e-300, 1e150, -1e-150])
def test_huge_and_tiny_feature_values_give_the_unscaled_fit(scale):
    """Codes depend on ranks only, so a rescaled feature gives the bitwise-same fit."""
    X_, y = _xy("binomial", n=300)
    ref = _est(family="binomial", n_bins=10).fit(X_, y)
    scaled = X_.copy()
    scaled[:, 0] *= scale
    if scale < 0:  # a decreasing map reverses the levels of that feature
        scaled[:, 0] = -scaled[:, 0]
    est = _est(family="binomial", n_bins=10).fit(scaled, y)
    assert_array_equal(est.coef_, ref.coef_)
    assert est.intercept_ == ref.intercept_
    assert_array_equal(est.predict(scaled), ref.predict(X_))


def test_values_near_the_float_limits_are_binned_and_fit():
    rng = np.random.default_rng(2)
    big = np.finfo(np.float64).max
    Xe = np.c_[rng.choice([-big, -1.0, 0.0, 1e-308, big], size=200), rng.normal(size=200)]
    y = (Xe[:, 0] > 0).astype(float)
    est = _est(family="binomial", n_bins=10)
    conv = _fit_quietly(est, Xe, y)
    _assert_finite_fit(est, Xe, conv)
    assert est.binarizer_.n_bins_[0] == 5


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize(
    ("family", "value"),
    [("gaussian", 0.0), ("gaussian", 5.0), ("binomial", 0.0), ("binomial", 1.0), ("poisson", 0.0)],
)
def test_constant_response_gives_zero_effects_and_finite_intercept(family, value, solver):
    X_, _ = _xy(n=200)
    y = np.full(200, value)
    est = _est(family=family, n_bins=10, solver=solver, max_iter=300)
    conv = _fit_quietly(est, X_, y)
    _assert_finite_fit(est, X_, conv)
    assert np.all(est.coef_ == 0)
    mu = est.predict(X_)
    np.testing.assert_allclose(mu, value, atol=1e-8)


@pytest.mark.parametrize("family", FAMILIES)
def test_feature_with_one_distinct_value_has_zero_effect_and_changes_nothing(family):
    X_, y = _xy(family, n=300)
    # at a fixed λ: lam="theory" (the default) grows with log d, and the constant
    # feature adds one level to d
    ref = _est(family=family, n_bins=10, tol=1e-10, lam=1e-3).fit(X_, y)
    with_const = np.c_[X_[:, :1], np.full(300, 3.25), X_[:, 1:]]
    est = _est(family=family, n_bins=10, tol=1e-10, lam=1e-3).fit(with_const, y)
    s, e = est.block_ptr_[1], est.block_ptr_[2]
    assert e - s == 1 and est.coef_[s] == 0
    np.testing.assert_allclose(np.delete(est.coef_, s), ref.coef_, atol=1e-7)
    np.testing.assert_allclose(est.intercept_, ref.intercept_, atol=1e-7)
    # every feature constant: the intercept-only fit
    est = _est(family=family, n_bins=10).fit(np.ones((300, 2)), y)
    assert np.all(est.coef_ == 0)
    np.testing.assert_allclose(est.predict(np.ones((3, 2))), y.mean(), rtol=1e-8)


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize(
    "case",
    ["poisson, rates e^±6", "poisson, empty half", "poisson, offset +500", "poisson, offset -700",
     "binomial, offset +800", "binomial, offset separates"],
)  # fmt: skip
def test_saturated_fits_with_vanishing_working_weights_are_finite(case, solver):
    rng = np.random.default_rng(4)
    n = 400
    Xs = rng.normal(size=(n, 3))
    off = None
    if case == "poisson, rates e^±6":
        family, y = "poisson", rng.poisson(np.exp(np.where(Xs[:, 0] > 1, 6, -6))).astype(float)
    elif case == "poisson, empty half":
        family, y = "poisson", np.where(Xs[:, 0] > 0, rng.poisson(5, n), 0).astype(float)
    elif case.startswith("poisson, offset"):
        family, y = "poisson", rng.poisson(3, n).astype(float)
        off = np.full(n, 500.0 if "+" in case else -700.0)
    else:
        family, y = "binomial", (Xs[:, 0] > 0).astype(float)
        off = np.full(n, 800.0) if "800" in case else np.where(y > 0, 50.0, -50.0)
    est = _est(family=family, lam=1e-6, n_bins=10, solver=solver, max_iter=300)
    conv = _fit_quietly(est, Xs, y, offset=off)
    _assert_finite_fit(est, Xs, conv)
    assert np.all(np.isfinite(est.predict(Xs, offset=off)))


@pytest.mark.parametrize("solver", SOLVERS)
def test_max_iter_exhaustion_warns_with_the_kkt_violation(solver):
    X_, y = _xy("binomial", n=400)
    est = _est(family="binomial", lam=1e-4, n_bins=20, solver=solver, max_iter=1, tol=1e-12)
    conv = _fit_quietly(est, X_, y)
    assert not est.converged_
    assert est.kkt_violation_ > 1e-12
    _assert_finite_fit(est, X_, conv)


def test_huge_counts_poisson_is_finite():
    X_, _ = _xy(n=300)
    y = np.floor(np.exp(3 + 2 * (X_[:, 0] > 0))) * 1e6
    est = _est(family="poisson", n_bins=10, max_iter=300)
    conv = _fit_quietly(est, X_, y)
    _assert_finite_fit(est, X_, conv)


@pytest.mark.parametrize("solver", SOLVERS)
def test_gaussian_response_near_the_overflow_limit_is_finite(solver):
    """|y| up to 1e150 fits (finite, maybe unconverged); beyond, y is refused by name."""
    X_, y = _xy("gaussian", n=300)
    est = _est(family="gaussian", n_bins=10, max_iter=200, solver=solver)
    conv = _fit_quietly(est, X_, y / np.abs(y).max() * 1e150)
    _assert_finite_fit(est, X_, conv)


@pytest.mark.parametrize(("solver", "c"), [("cd", 1e12), ("fista", 1e3)])
def test_gaussian_fit_is_equivariant_to_the_scale_of_y(solver, c):
    X_, y = _xy("gaussian", n=2000, p=4)
    ref = _est(family="gaussian", lam=1e-3, n_bins=20, solver=solver).fit(X_, y + 3)
    est = _est(family="gaussian", lam=1e-3 * c, n_bins=20, solver=solver)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est.fit(X_, c * (y + 3))
    np.testing.assert_allclose(est.coef_ / c, ref.coef_, atol=1e-6)


# ---------------------------------------------------- determinism and concurrency


def _fit_case(family, solver, seed=0):
    X_, y = _xy(family, n=800, p=4, seed=seed)
    rng = np.random.default_rng(seed + 100)
    sw = rng.uniform(0.5, 2.0, len(y))
    off = rng.normal(scale=0.2, size=len(y))
    est = _est(family=family, solver=solver, lam=2e-3, n_bins=16, tol=1e-9, max_iter=20000)
    est.fit(X_, y, sample_weight=sw, offset=off)
    return est


def _fingerprint(est):
    return (
        est.coef_.tobytes(),
        np.float64(est.intercept_).tobytes(),
        np.float64(est.objective_).tobytes(),
        est.n_iter_,
    )


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("family", FAMILIES)
def test_identical_input_gives_bitwise_identical_fits(family, solver):
    a, b = _fit_case(family, solver), _fit_case(family, solver)
    assert _fingerprint(a) == _fingerprint(b)


def test_parallel_thread_fits_equal_sequential_fits():
    cases = [(f, s, seed) for f in FAMILIES for s in SOLVERS for seed in (0, 1)]
    sequential = [_fingerprint(_fit_case(*c)) for c in cases]
    with ThreadPoolExecutor(max_workers=4) as pool:
        threaded = list(pool.map(lambda c: _fingerprint(_fit_case(*c)), cases))
    assert threaded == sequential


def test_one_estimator_object_per_thread_and_shared_predict():
    est = _fit_case("binomial", "cd")
    X_, _ = _xy("binomial", n=800, p=4)
    ref = est.predict(X_)
    out = [None] * 8
    barrier = threading.Barrier(8)

    def work(i):
        barrier.wait()
        out[i] = est.predict(X_)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for o in out:
        assert_array_equal(o, ref)


def test_binarizer_and_prox_in_threads_equal_sequential_calls():
    rng = np.random.default_rng(8)
    Xs = [rng.normal(size=(3000, 4)) for _ in range(6)]
    ws = [rng.uniform(0.1, 2.0, 3000) for _ in range(6)]

    def binarize(i):
        b = Binarizer(n_bins=32, missing="separate").fit(Xs[i], sample_weight=ws[i])
        return [e.tobytes() for e in b.edges_], b.transform(Xs[i]).tobytes()

    vs = [rng.normal(size=400) for _ in range(6)]
    ptr = np.arange(0, 401, 40)

    def prox(i):
        counts = np.abs(vs[(i + 1) % 6]) + 0.1
        return prox_binarsity(vs[i], ptr, np.abs(vs[(i + 2) % 6]), counts, step=0.3).tobytes()

    for fn in (binarize, prox):
        sequential = [fn(i) for i in range(6)]
        with ThreadPoolExecutor(max_workers=3) as pool:
            assert list(pool.map(fn, range(6))) == sequential


def test_glm_fits_in_threads_equal_sequential_fits():
    data = {fam: _frame(n=300, seed=11, family=fam) for fam in FAMILIES}

    def run(fam):
        res = glm(FORMULA, data[fam], family=fam).fit(lam=1e-3, tol=1e-9)
        return res.coef.tobytes(), res.dense_coef.tobytes(), res.intercept

    sequential = [run(f) for f in FAMILIES]
    with ThreadPoolExecutor(max_workers=3) as pool:
        assert list(pool.map(run, FAMILIES)) == sequential


@pytest.mark.parametrize("family", ["binomial", "poisson"])
def test_cv_with_two_jobs_equals_one_job_bitwise(family):
    data = _frame(n=300, seed=21, family=family)
    w = np.random.default_rng(5).uniform(0.5, 2.0, len(data))
    model = glm("y ~ bin(x1, 10) + bin(x2, 6) + C(g)", data, family=family, sample_weight=w)
    kw = {"folds": 4, "n_lambdas": 6, "random_state": 3}
    one = model.fit_cv(n_jobs=1, **kw)
    two = model.fit_cv(n_jobs=2, **kw)
    assert_array_equal(one.fold_ids, two.fold_ids)
    assert_array_equal(one.fold_scores, two.fold_scores)
    assert_array_equal(one.mean, two.mean)
    assert_array_equal(one.se, two.se)
    assert one.lam_min == two.lam_min and one.lam_1se == two.lam_1se
    assert_array_equal(one.best_.coef, two.best_.coef)
    assert one.best_.intercept == two.best_.intercept
    # and the seed is what makes it reproducible: another seed changes the folds
    other = model.fit_cv(n_jobs=2, **{**kw, "random_state": 4})
    assert not np.array_equal(other.fold_ids, one.fold_ids)


# ------------------------------------------------------------ glm() numerics


def test_glm_constant_columns_and_constant_responses_fit_path_and_cv():
    df = _frame(n=200, seed=9, family="binomial")
    # a constant bin() column: one level, zero effect; the rest of the fit is unchanged
    with_const = glm("y ~ bin(c) + bin(x1, 8)", df.assign(c=2.0), family="binomial")
    plain = glm("y ~ bin(x1, 8)", df, family="binomial")
    a, b = with_const.fit(lam=1e-3, tol=1e-10), plain.fit(lam=1e-3, tol=1e-10)
    assert a.coef[0] == 0.0 and with_const.block_ptr[1] == 1
    np.testing.assert_allclose(a.coef[1:], b.coef, atol=1e-7)
    # nothing to penalise: λ_max = 0, the grid is [0], CV still chooses a λ
    only_const = glm("y ~ bin(c)", df.assign(c=2.0), family="binomial")
    assert_array_equal(only_const.fit_path(n_lambdas=4).lams, [0.0])
    assert only_const.fit_cv(folds=3, n_lambdas=4, random_state=0).lam_min == 0.0
    # constant responses at the boundary of the family's domain
    for family, value in (("binomial", 0.0), ("binomial", 1.0), ("poisson", 0.0)):
        model = glm("y ~ bin(x1, 8) + C(g)", df.assign(y=value), family=family)
        for res in (model.fit(lam=1e-3), model.fit(), model.fit_path(n_lambdas=3)[2]):
            assert np.all(np.isfinite(res.coef)) and np.isfinite(res.intercept)
            np.testing.assert_allclose(res.fittedvalues, value, atol=1e-8)
        cv = model.fit_cv(folds=3, n_lambdas=3, random_state=0)
        assert np.all(np.isfinite(cv.mean)) and np.isfinite(cv.lam_min)


def test_cv_auc_skips_folds_lacking_a_class_and_names_the_scoring_when_none_has_both():
    """Rare events: a fold without positives has no AUC; it is skipped, not a crash."""
    df = _frame(n=200, seed=9, family="binomial")
    rare = (np.arange(len(df)) == 0).astype(float)
    model = glm("y ~ bin(x1, 8)", df.assign(y=rare), family="binomial")
    cv = model.fit_cv(folds=3, n_lambdas=4, scoring="auc", random_state=0)
    assert np.isfinite(cv.lam_min) and np.isfinite(cv.lam_1se)
    assert np.all(np.isfinite(cv.mean)) and np.all(np.isfinite(cv.se))
    never = glm("y ~ bin(x1, 8)", df.assign(y=0.0), family="binomial")
    _check(lambda: never.fit_cv(folds=3, n_lambdas=4, scoring="auc", random_state=0),
           ValueError, r"scoring='auc' is undefined on every fold")  # fmt: skip


@pytest.mark.parametrize("scale", [1e-300, 1e300])
def test_glm_dense_terms_of_extreme_scale_give_the_rescaled_fit(scale):
    """A numeric term in other units is the same model: β scales by 1/c, η is unchanged."""
    df = _frame(n=200, seed=9, family="binomial")
    ref = glm("y ~ bin(x1, 8) + z", df, family="binomial").fit(lam=1e-3, tol=1e-10)
    res = glm("y ~ bin(x1, 8) + z", df.assign(z=df.z * scale), family="binomial")
    res = res.fit(lam=1e-3, tol=1e-10)
    assert res.converged and np.all(np.isfinite(res.dense_coef))
    np.testing.assert_allclose(res.dense_coef * scale, ref.dense_coef, rtol=1e-6)
    np.testing.assert_allclose(res.coef, ref.coef, atol=1e-7)


def test_perfect_gaussian_fit_reports_without_runtime_warnings():
    df = _frame(n=50, seed=9, family="gaussian")
    res = glm("y ~ bin(x1, 8)", df.assign(y=5.0), family="gaussian").fit(lam=1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        assert res.llf == np.inf
        str(res.summary())
