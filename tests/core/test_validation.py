"""One answer per bad argument, whatever the entry (binarsity_stats.core._validation).

Each bad value of an argument is given to every entry that takes the argument — glm()
and its fit/fit_path/fit_cv, the estimators, the Binarizer, the engine's solve and
lambda_max — and every entry must raise the same error type with the same message
(up to what the rows are counted against: "X", "the data", "y"). Then the silent wrong
answers of issue 10: weights of any scale, weights and offsets that overflow, and
``converged`` on a non-finite fit.
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pandas as pd
import pytest

from binarsity_stats import Binarizer
from binarsity_stats import BinarsityClassifier
from binarsity_stats import BinarsityGLM
from binarsity_stats.engine import _solution
from binarsity_stats.core import _validation
from binarsity_stats import glm
from binarsity_stats.engine._solvers import ConvergenceWarning, Prepared, lambda_max, solve
from binarsity_stats.design._spec import from_spec

N = 60
RNG = np.random.default_rng(3)
X = RNG.normal(size=(N, 2))
Y = X[:, 0] - 0.5 * X[:, 1] + RNG.normal(scale=0.5, size=N)
Y01 = (Y > 0).astype(float)
FRAME = pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "y": Y, "e": (Y > 0).astype(float)})
FORMULA = "y ~ bin(a, 6) + bin(b, 6)"


def _codes():
    binarizer = Binarizer(n_bins=6)
    codes = np.ascontiguousarray(binarizer.fit_transform(X).T)
    sizes = np.asarray(binarizer.n_bins_)
    bp = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
    return codes, bp


CODES, BP = _codes()
PW = np.ones(int(BP[-1]))
MODEL = glm(FORMULA, FRAME)
CPUS = os.cpu_count() or 1


def _engine(**kw):
    args = {"penalty_weights": PW, "lam": 1e-2}
    args.update(kw)
    return solve(CODES, BP, Y, **args)


# ---------------------------------------------------------------- entries per argument

ENTRIES = {
    "lam": {
        "glm.fit": lambda v: MODEL.fit(lam=v),
        "BinarsityGLM": lambda v: BinarsityGLM(lam=v).fit(X, Y),
        "BinarsityClassifier": lambda v: BinarsityClassifier(lam=v).fit(X, Y01),
        "solve": lambda v: _engine(lam=v),
        "Prepared.solve": lambda v: Prepared(CODES, BP, Y, penalty_weights=PW).solve(v),
    },
    "tol": {
        "glm.fit": lambda v: MODEL.fit(lam=1e-2, tol=v),
        "glm.fit_path": lambda v: MODEL.fit_path(n_lambdas=2, tol=v),
        "glm.fit_cv": lambda v: MODEL.fit_cv(folds=2, n_lambdas=2, tol=v),
        "BinarsityGLM": lambda v: BinarsityGLM(tol=v).fit(X, Y),
        "BinarsityClassifier": lambda v: BinarsityClassifier(tol=v).fit(X, Y01),
        "solve": lambda v: _engine(tol=v),
    },
    "max_iter": {
        "glm.fit": lambda v: MODEL.fit(lam=1e-2, max_iter=v),
        "glm.fit_path": lambda v: MODEL.fit_path(n_lambdas=2, max_iter=v),
        "glm.fit_cv": lambda v: MODEL.fit_cv(folds=2, n_lambdas=2, max_iter=v),
        "BinarsityGLM": lambda v: BinarsityGLM(max_iter=v).fit(X, Y),
        "solve": lambda v: _engine(max_iter=v),
    },
    "fit_intercept": {
        "BinarsityGLM": lambda v: BinarsityGLM(fit_intercept=v).fit(X, Y),
        "BinarsityClassifier": lambda v: BinarsityClassifier(fit_intercept=v).fit(X, Y01),
        "solve": lambda v: _engine(fit_intercept=v),
        "lambda_max": lambda v: lambda_max(CODES, BP, Y, penalty_weights=PW, fit_intercept=v),
    },
    "n_jobs": {
        "glm.fit_cv": lambda v: MODEL.fit_cv(folds=2, n_lambdas=2, n_jobs=v),
        "check_n_jobs": _validation.check_n_jobs,
    },
    "cv_tol": {
        "glm.fit_cv": lambda v: MODEL.fit_cv(folds=2, n_lambdas=2, cv_tol=v),
    },
    "random_state": {
        "glm.fit_cv": lambda v: MODEL.fit_cv(folds=2, n_lambdas=2, random_state=v),
        "glm.fit_cv(groups)": lambda v: MODEL.fit_cv(
            folds=2, n_lambdas=2, random_state=v, groups=np.arange(N) % 4
        ),
    },
    "warm_start": {
        "glm.fit": lambda v: MODEL.fit(lam=1e-2, warm_start=v),
        "solve": lambda v: _engine(warm_start=v),
    },
    "groups": {
        "glm.fit_cv": lambda v: MODEL.fit_cv(folds=2, n_lambdas=2, groups=v),
    },
    "lams": {
        "glm.fit_path": lambda v: MODEL.fit_path(lams=v),
        "glm.fit_cv": lambda v: MODEL.fit_cv(folds=2, lams=v),
    },
    "sample_weight": {
        "glm": lambda v: glm(FORMULA, FRAME, sample_weight=v),
        "BinarsityGLM": lambda v: BinarsityGLM().fit(X, Y, sample_weight=v),
        "BinarsityClassifier": lambda v: BinarsityClassifier().fit(X, Y01, sample_weight=v),
        "BinarsityGLM.score": lambda v: FITTED.score(X, Y, sample_weight=v),
        "Binarizer": lambda v: Binarizer().fit(X, sample_weight=v),
        "solve": lambda v: _engine(sample_weight=v),
        "lambda_max": lambda v: lambda_max(CODES, BP, Y, penalty_weights=PW, sample_weight=v),
    },
    "offset": {
        "glm": lambda v: glm(FORMULA, FRAME, offset=v),
        "BinarsityGLM": lambda v: BinarsityGLM().fit(X, Y, offset=v),
        "BinarsityGLM.predict": lambda v: FITTED.predict(X, offset=v),
        "results.predict": lambda v: RESULTS.predict(FRAME, offset=v),
        "from_spec().predict": lambda v: SPEC_MODEL.predict(FRAME, offset=v),
        "solve": lambda v: _engine(offset=v),
    },
}

FITTED = BinarsityGLM(lam=1e-2).fit(X, Y)
RESULTS = MODEL.fit(lam=1e-2)
SPEC_MODEL = from_spec(RESULTS.to_spec())

_strings = np.array(["1"] * N, dtype=object)

BAD = {
    "lam": [True, -1.0, np.nan, np.inf, None, [1e-3]],  # a string: see glm.fit("theory")
    "tol": [True, 0.0, -1e-7, np.nan, np.inf, "1e-7", None],
    "max_iter": [True, 0, -5, 10.0, "10", None],
    "fit_intercept": [1, 0, "yes", None, np.float64(1.0)],
    "n_jobs": [True, False, 0, -CPUS - 1, -1000, 1.0, "2", None],
    "cv_tol": [True, 0.0, -1.0, np.nan, "1e-5"],
    "random_state": [True, -1, 1.5, "seed"],
    "warm_start": [True, 1.0, "previous", np.zeros(3)],
    "groups": [np.arange(N - 1), np.r_[np.arange(N - 1), np.nan].astype(object),
               np.r_[[None], np.arange(N - 1)].astype(object),
               pd.array([pd.NA] + [1] * (N - 1), dtype="Int64"),
               np.arange(2 * N).reshape(N, 2), 3, "abc"],
    "sample_weight": [np.ones(N - 1), np.ones((N, 2)), np.ones((N, 1)), -np.ones(N),
                      np.zeros(N), np.r_[np.nan, np.ones(N - 1)], np.r_[np.inf, np.ones(N - 1)],
                      _strings, np.full(N, "1.5"), np.ones(N) + 1j,
                      np.array(["2000-01-01"] * N, dtype="datetime64[D]"),
                      np.r_[1e308, np.full(N - 1, 1e-10)], np.r_[1.7e308, np.ones(N - 1)]],
    "lams": [[], [1e-3, -1.0], [np.nan], np.array(["1e-3"]), np.array(["1e-3"], dtype=object),
             [True, False], 0.1],
    "offset": [np.ones(N - 1), np.ones((N, 2)), np.r_[np.nan, np.zeros(N - 1)],
               np.r_[-np.inf, np.zeros(N - 1)], _strings, np.ones(N) + 1j,
               np.array(["2000-01-01"] * N, dtype="datetime64[D]")],
}  # fmt: skip

CASES = [
    pytest.param(arg, i, id=f"{arg}-{i}-{str(v)[:20]!s}")
    for arg, values in BAD.items()
    for i, v in enumerate(values)
]


def _normalise(message: str) -> str:
    for rows_of in ("the data", "X", "y"):
        message = message.replace(f"but {rows_of} has", "but <rows> has")
    return message


@pytest.mark.parametrize(("arg", "i"), CASES)
def test_every_entry_gives_the_same_error_naming_the_argument(arg, i):
    value = BAD[arg][i]
    answers = {}
    for entry, call in ENTRIES[arg].items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises((TypeError, ValueError)) as info:
                call(value)
        answers[entry] = (type(info.value).__name__, _normalise(str(info.value)))
    kinds = set(answers.values())
    assert len(kinds) == 1, answers
    ((_, message),) = kinds
    assert message.startswith(arg), answers


def test_n_jobs_follows_joblibs_negative_convention_down_to_minus_the_cpu_count():
    assert _validation.check_n_jobs(3) == 3
    assert _validation.check_n_jobs(np.int64(2)) == 2
    assert _validation.check_n_jobs(-1) == CPUS
    assert _validation.check_n_jobs(-CPUS) == 1
    with pytest.raises(ValueError, match=rf"n_jobs must be .*at least -{CPUS}.*got -1000"):
        _validation.check_n_jobs(-1000)


def test_good_values_of_every_argument_pass():
    assert _validation.check_lam(np.float32(0.5)) == 0.5
    assert _validation.check_lam(0) == 0.0
    assert _validation.check_tol(np.float64(1e-7)) == 1e-7
    assert _validation.check_max_iter(np.int32(7)) == 7
    assert _validation.check_bool(np.True_, "fit_intercept") is True
    assert _validation.check_random_state(np.random.default_rng(0)) is not None
    assert _validation.check_random_state(np.int64(3)) == 3
    assert _validation.check_cv_tol(None) is None
    sw = _validation.check_sample_weight(pd.Series(np.arange(N, dtype=float)), N)
    assert sw.dtype == np.float64 and sw.shape == (N,)
    obj = _validation.check_offset(np.arange(N).astype(object), N)
    np.testing.assert_array_equal(obj, np.arange(N))
    nullable = _validation.as_real_array(pd.array([1, None], dtype="Int64"), "x")
    np.testing.assert_array_equal(nullable, [1.0, np.nan])


def test_the_code_dtype_is_chosen_in_one_place():
    assert _validation.code_dtype(256) is np.uint8
    assert _validation.code_dtype(257) is np.uint16
    assert _validation.code_dtype(65536) is np.uint16
    with pytest.raises(ValueError, match="65536"):
        _validation.code_dtype(65537)
    codes = np.array([[0, 300, 2]], dtype=np.int64)
    prep = Prepared(codes, np.array([0, 301]), np.ones(3), penalty_weights=np.ones(301))
    assert prep.prob.codes.dtype == np.uint16


def test_validation_module_imports_numpy_only():
    import ast
    import inspect

    from binarsity_stats.core import _index_checks, _numbers, _rows

    for module in (_validation, _index_checks, _rows, _numbers):  # the checkers
        tree = ast.parse(inspect.getsource(module))
        names = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names.add((node.module or "").split(".")[0])
            elif isinstance(node, ast.ImportFrom):  # within core/ only
                assert node.level == 1, (module.__name__, node.module)
                assert node.module in ("_index_checks", "_rows", "_numbers"), node.module
        assert names <= {"__future__", "numbers", "os", "typing", "numpy"}, names


# ---------------------------------------------------------------- silent wrong answers


def _fits(sw=None, offset=None, family="gaussian"):
    """(intercept, coef, converged) of the same model by glm, the estimator and solve."""
    y = Y01 if family == "binomial" else Y
    frame = FRAME.assign(y=y)
    out = {}
    res = glm(FORMULA, frame, family=family, sample_weight=sw, offset=offset).fit(lam=1e-2)
    out["glm"] = (res.solution.intercept, res.solution.coef, res.solution.converged)
    est = BinarsityGLM(family=family, lam=1e-2, n_bins=6, penalty_weights="uniform")
    est.fit(X, y, sample_weight=sw, offset=offset)
    out["estimator"] = (est.intercept_, est.coef_, est.converged_)
    sol = solve(CODES, BP, y, family=family, lam=1e-2, penalty_weights=PW, sample_weight=sw,
                offset=offset)  # fmt: skip
    out["solve"] = (sol.intercept, sol.coef, sol.converged)
    return out


@pytest.mark.parametrize("scale", [1e-312, 1e-300, 1e-150, 3.0, 1e150, 1e300, 1e307])
@pytest.mark.parametrize("family", ["gaussian", "binomial"])
def test_weights_of_any_scale_give_the_fit_of_unit_weights(scale, family):
    # the objective does not depend on a common scale of the weights: every entry must
    # give the unit-weight fit (bitwise for powers of two, to rounding otherwise), where
    # main overflowed (all 1e306: an error about penalty weights) or underflowed
    # (all 1e-312: a NaN intercept after max_iter passes)
    base = np.linspace(0.5, 1.5, N)
    ref = _fits(base, family=family)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        got = _fits(base * scale, family=family)
    for entry, (b0, coef, converged) in got.items():
        assert converged, entry
        np.testing.assert_allclose(b0, ref[entry][0], rtol=1e-6, atol=1e-9, err_msg=entry)
        np.testing.assert_allclose(coef, ref[entry][1], rtol=1e-6, atol=1e-9, err_msg=entry)


def test_weights_scaled_by_a_power_of_two_give_bitwise_the_same_fit():
    base = np.linspace(0.5, 1.5, N)
    ref = _fits(base)
    for k in (-1000, -3, 5, 1000):
        got = _fits(np.ldexp(base, k))
        for entry in ref:
            assert got[entry][0] == ref[entry][0], (k, entry)
            np.testing.assert_array_equal(got[entry][1], ref[entry][1])


def test_unrepresentable_weight_ranges_are_refused_by_name():
    # one weight of 1.7e308 next to ones: main fitted coef 0 with converged_=True
    for sw in (np.r_[1.7e308, np.ones(N - 1)], np.r_[1.0, np.full(N - 1, 1e-310)]):
        for call in ENTRIES["sample_weight"].values():
            with pytest.raises(ValueError, match=r"sample_weight ranges from .* cannot be "):
                call(sw)


@pytest.mark.parametrize(
    ("family", "offset"),
    [
        ("gaussian", np.full(N, 1e307)),
        ("gaussian", np.where(np.arange(N) % 2, 1e155, -1e155)),
        ("gaussian", np.full(N, -1e200)),
        ("poisson", np.full(N, 800.0)),
    ],
)
def test_offsets_that_overflow_the_loss_are_refused_by_name(family, offset):
    # main: NaN/inf fits flagged only by a ConvergenceWarning
    y = np.abs(np.round(Y)) if family == "poisson" else Y
    frame = FRAME.assign(y=y)
    calls = [
        lambda: glm(FORMULA, frame, family=family, offset=offset),
        lambda: BinarsityGLM(family=family).fit(X, y, offset=offset),
        lambda: solve(CODES, BP, y, family=family, lam=1e-2, penalty_weights=PW, offset=offset),
        lambda: lambda_max(CODES, BP, y, family=family, penalty_weights=PW, offset=offset),
    ]
    for call in calls:
        with pytest.raises(ValueError, match=r"offset has values as large as "):
            call()


def test_large_but_representable_offsets_still_fit():
    # constant offsets are absorbed by the intercept; ~1e100 is far from overflow
    for family, off in (("gaussian", 1e100), ("poisson", 300.0), ("binomial", 1e100)):
        y = {"gaussian": Y, "poisson": np.abs(np.round(Y)), "binomial": Y01}[family]
        sol = solve(CODES, BP, y, family=family, lam=1e-2, penalty_weights=PW,
                    offset=np.full(N, off))  # fmt: skip
        assert np.isfinite(sol.intercept) and np.all(np.isfinite(sol.coef))


def test_converged_is_never_true_for_a_non_finite_fit():
    prep = Prepared(CODES, BP, Y, penalty_weights=PW)
    prob = prep.prob
    theta = np.zeros(prob.d)
    eta = np.zeros(prob.n)
    for bad in ("theta", "b0", "eta"):
        t, b0, e = theta.copy(), 0.0, eta.copy()
        if bad == "theta":
            t[1] = np.nan
        elif bad == "b0":
            b0 = np.inf
        else:
            e[0] = np.nan
        with pytest.warns(ConvergenceWarning, match="non-finite"):
            sol = _solution._finish(prob, t, np.zeros(0), b0, 0.1, e, 0.0, True, 1, 1, 1e-7)
        assert sol.converged is False, bad


# ---------------------------------------------------------------- conversions


def _na_first(values, dtype=object):
    out = np.array(values, dtype=object)
    out[0] = pd.NA
    return out if dtype is object else pd.array(list(out), dtype=dtype)


@pytest.mark.parametrize(
    ("make", "error", "match"),
    [
        # text is refused, never parsed (main fitted "1.5" strings as numbers)
        (lambda: BinarsityGLM().fit(X, np.array([str(v) for v in Y], dtype=object)),
         ValueError, r"Unknown label type: y of dtype object"),
        (lambda: BinarsityGLM().fit(X, np.array([str(v) for v in Y])),
         ValueError, r"Unknown label type: y of dtype <U"),
        # dates are not numbers (main fitted days since 1970)
        (lambda: BinarsityGLM().fit(X, np.array(["2000-01-01"] * N, dtype="datetime64[D]")),
         ValueError, r"Unknown label type: y of dtype datetime64"),
        (lambda: glm(FORMULA, FRAME.assign(y=pd.date_range("2000", periods=N))),
         TypeError, r"response 'y' has date/time dtype"),
        # complex numbers are refused (main dropped the imaginary part in glm)
        (lambda: glm(FORMULA, FRAME.assign(y=Y + 1j)), TypeError, r"response 'y' must be numeric"),
        (lambda: BinarsityGLM().fit(X, Y + 1j), ValueError, r"Complex data not supported: y"),
        (lambda: BinarsityGLM().fit(X.astype(str).astype(object), Y),
         TypeError, r"column 0 holds a non-numeric value '.*' \(str\) at row 0"),
        (lambda: Binarizer().fit(X.astype(str).astype(object)),
         TypeError, r"column 0 holds a non-numeric value"),
        # pd.NA is a missing value, never "boolean value of NA is ambiguous"
        (lambda: BinarsityClassifier().fit(X, _na_first(Y01)),
         ValueError, r"y contains missing labels"),
        (lambda: BinarsityClassifier().fit(X, _na_first(Y01 > 0, "boolean")),
         ValueError, r"y contains missing labels"),
        (lambda: BinarsityGLM(family="binomial").fit(X, _na_first(Y01 > 0, "boolean")),
         ValueError, r"y contains NaN"),
        (lambda: BinarsityGLM().fit(X, _na_first(Y)), ValueError, r"y contains NaN"),
        (lambda: glm("e ~ bin(a)", FRAME.assign(e=_na_first(Y01 > 0, "boolean")),
                     family="binomial"),
         ValueError, r"response 'e' \(y\) contains missing"),
        (lambda: BinarsityGLM().fit(np.c_[_na_first(X[:, 0]), X[:, 1]], Y),
         ValueError, r"column 0 has a missing value \(NaN\) at row 0"),
        (lambda: BinarsityGLM().fit(pd.DataFrame({"a": _na_first(X[:, 0]), "b": X[:, 1]}), Y),
         ValueError, r"column 'a' has a missing value \(NaN\) at row 0"),
        # duplicated names in glm data: main crashed inside pandas/formulaic
        (lambda: glm(FORMULA, pd.concat([FRAME, FRAME[["a"]]], axis=1)),
         ValueError, r"data has duplicated column names \['a'\]"),
        (lambda: glm(FORMULA, pd.concat([FRAME, FRAME[["y"]]], axis=1)),
         ValueError, r"data has duplicated column names \['y'\]"),
        (lambda: MODEL.fit(lam=1e-2).predict(pd.concat([FRAME, FRAME[["b"]]], axis=1)),
         ValueError, r"data has duplicated column names \['b'\]"),
    ],
)  # fmt: skip
def test_conversions_refuse_what_is_not_a_number_and_read_pd_na_as_missing(make, error, match):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(error, match=match):
            make()


def test_object_columns_of_numbers_fit_as_floats_whether_array_or_dataframe():
    # main: an object ndarray of numbers fitted, an object DataFrame column was refused
    ref = BinarsityGLM(lam=1e-2, missing="separate").fit(X, Y)
    frame = pd.DataFrame({"a": pd.Series(list(X[:, 0]), dtype=object), "b": X[:, 1]})
    for data in (X.astype(object), frame):
        est = BinarsityGLM(lam=1e-2, missing="separate").fit(data, Y)
        np.testing.assert_array_equal(est.coef_, ref.coef_)
        assert est.intercept_ == ref.intercept_
    # pd.NA and None in an object array are missing values, fitted as NaN is
    with_nan = X.copy()
    with_nan[0, 0] = np.nan
    ref = BinarsityGLM(lam=1e-2, missing="separate").fit(with_nan, Y)
    for na in (pd.NA, None):
        obj = X.astype(object)
        obj[0, 0] = na
        est = BinarsityGLM(lam=1e-2, missing="separate").fit(obj, Y)
        np.testing.assert_array_equal(est.coef_, ref.coef_)


def test_empty_input_at_predict_gives_the_same_answer_for_arrays_and_frames():
    # main: an empty DataFrame predicted [], an empty ndarray raised
    est_array = BinarsityGLM(lam=1e-2).fit(X, Y)
    est_frame = BinarsityGLM(lam=1e-2).fit(FRAME[["a", "b"]], Y)
    clf = BinarsityClassifier(lam=1e-2).fit(X, Y01)
    for est, empty in ((est_array, X[:0]), (est_array, FRAME[["a", "b"]].iloc[:0]),
                       (est_frame, FRAME[["a", "b"]].iloc[:0])):  # fmt: skip
        assert est.predict(empty).shape == (0,)
        assert est.decision_function(empty).shape == (0,)
    assert clf.predict(X[:0]).shape == (0,)
    assert clf.predict_proba(X[:0]).shape == (0, 2)
    assert MODEL.fit(lam=1e-2).predict(FRAME.iloc[:0]).shape == (0,)


@pytest.mark.parametrize("shift", [-800.0, -300.0, 300.0])
def test_constant_poisson_offsets_far_below_exp_underflow_shift_the_intercept_only(shift):
    # main: e^{-800} underflowed to 0 and the null intercept raised ZeroDivisionError
    y = np.abs(np.round(Y))
    ref = solve(CODES, BP, y, family="poisson", lam=1e-2, penalty_weights=PW)
    for make in (
        lambda off: solve(CODES, BP, y, family="poisson", lam=1e-2, penalty_weights=PW,
                          offset=off),
        lambda off: BinarsityGLM(family="poisson", lam=1e-2, n_bins=6,
                                 penalty_weights="uniform").fit(X, y, offset=off),
    ):  # fmt: skip
        base, moved = make(None), make(np.full(N, shift))
        b0 = getattr(moved, "intercept", getattr(moved, "intercept_", None))
        b0_ref = getattr(base, "intercept", getattr(base, "intercept_", None))
        assert getattr(moved, "converged", getattr(moved, "converged_", None))
        np.testing.assert_allclose(b0 + shift, b0_ref, rtol=1e-7, atol=1e-7)
    assert np.isfinite(ref.intercept)


def test_glm_reads_an_object_column_of_numbers_in_bin_as_the_estimators_do():
    # main: bin() refused an object column of numbers that the estimators accepted
    obj = FRAME.assign(a=pd.Series(list(FRAME.a), dtype=object))
    ref = glm(FORMULA, FRAME).fit(lam=1e-2)
    got = glm(FORMULA, obj).fit(lam=1e-2)
    np.testing.assert_array_equal(got.solution.coef, ref.solution.coef)
    np.testing.assert_array_equal(got.predict(obj), ref.predict(FRAME))
    with_na = obj.copy()
    with_na.loc[0, "a"] = pd.NA
    with pytest.raises(ValueError, match=r"column 'a' contains missing values"):
        glm(FORMULA, with_na)
    w = glm(FORMULA, FRAME.assign(w=pd.Series([1.0] * N, dtype=object)), sample_weight="w")
    np.testing.assert_array_equal(w.fit(lam=1e-2).solution.coef, ref.solution.coef)


def test_estimators_and_glm_never_report_a_non_finite_fit_as_converged():
    # poisson counts near the float limit: the null fit itself overflows (e^η = inf)
    y = np.full(N, 1e308) * np.linspace(0.5, 1.0, N)
    with pytest.warns(ConvergenceWarning):
        est = BinarsityGLM(family="poisson", lam=1e-2).fit(X, y)
    finite = np.isfinite(est.objective_) and np.isfinite(est.intercept_)
    assert not (est.converged_ and not finite)
    with pytest.warns(ConvergenceWarning):
        res = glm(FORMULA, FRAME.assign(y=y), family="poisson").fit(lam=1e-2)
    sol = res.solution
    assert not (sol.converged and not (np.isfinite(sol.objective) and np.isfinite(sol.intercept)))
