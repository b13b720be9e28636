"""Memory safety: every index array a kernel uses is validated first (issue 10).

The Cython kernels index θ, histograms and work buffers by ``block_ptr[j] + code``
without bounds checks. These tests hand every public and semi-public entry the index
arrays that used to get through (unsigned offsets that wrap in ``np.diff``, offsets
that wrap when cast, float/bool offsets silently truncated) and check for a clear
error naming the argument. Before the fix the unsigned cases crashed the interpreter
(SIGSEGV, heap corruption) or returned garbage.
"""

from __future__ import annotations

import numpy as np
import pytest

from binarsity_stats.penalty._penalty import BinarsityPenalty, block_suffix_sums, penalty_weights
from binarsity_stats.penalty._prox import paper_algorithm1, prox_binarsity
from binarsity_stats.engine._solvers import Prepared, lambda_max, solve
from binarsity_stats.core._validation import check_block_ptr, check_codes

# offsets that pass a check made in their own (unsigned) dtype: np.diff wraps
WRAPPING = {
    "uint8": np.array([0, 200, 5], dtype=np.uint8),
    "uint16": np.array([0, 60000, 5], dtype=np.uint16),
    "uint32": np.array([0, 2**32 - 1, 5], dtype=np.uint32),
    "uint64": np.array([0, 2**64 - 1, 5], dtype=np.uint64),
}


@pytest.mark.parametrize("dtype", list(WRAPPING))
@pytest.mark.parametrize("counts", [None, np.arange(1.0, 6.0)])
def test_prox_binarsity_refuses_unsigned_offsets_that_wrap(dtype, counts):
    with pytest.raises(ValueError, match="block_ptr"):
        prox_binarsity(np.ones(5), WRAPPING[dtype], np.ones(5), counts=counts)
    with pytest.raises(ValueError, match="block_ptr"):
        paper_algorithm1(np.ones(5), WRAPPING[dtype], np.ones(5))


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32, np.uint64, np.int8])
def test_valid_offsets_of_any_integer_dtype_give_the_intp_result(dtype):
    v = np.array([3.0, -1.0, 2.0, 0.5, 4.0])
    ref = prox_binarsity(v, np.array([0, 2, 5]), np.ones(5), step=0.3)
    got = prox_binarsity(v, np.array([0, 2, 5], dtype=dtype), np.ones(5), step=0.3)
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize(
    ("ptr", "error", "match"),
    [
        (np.array([0.0, 2.0, 5.0]), TypeError, "block_ptr must be an array of integers"),
        (np.array([False, True, True]), TypeError, "block_ptr must be an array of integers"),
        (np.array([0, 2, 5], dtype=object), TypeError, "block_ptr must be an array of integers"),
        (np.array([0, 2 + 0j, 5]), TypeError, "block_ptr must be an array of integers"),
        (np.array([[0, 2, 5]]), ValueError, "block_ptr must be 1-D"),
        (np.array(5), ValueError, "block_ptr must be 1-D"),
        (np.array([0, -3, 5]), ValueError, "strictly increasing"),
        (np.array([0, 2**63 - 1, 5]), ValueError, "strictly increasing"),
        (np.array([0, 2**63, 5], dtype=np.uint64), ValueError, "too large for an index"),
    ],
)
def test_check_block_ptr_refuses_by_name(ptr, error, match):
    with pytest.raises(error, match=match):
        check_block_ptr(ptr, 5)
    with pytest.raises(error, match=match):
        prox_binarsity(np.ones(5), ptr, np.ones(5))


def test_check_block_ptr_returns_a_private_copy():
    ptr = np.array([0, 2, 5], dtype=np.intp)
    out = check_block_ptr(ptr, 5)
    assert out.dtype == np.intp and out.flags.c_contiguous
    assert not np.shares_memory(out, ptr)


@pytest.mark.parametrize("dtype", list(WRAPPING))
def test_penalty_helpers_refuse_wrapping_offsets(dtype):
    ptr = WRAPPING[dtype]
    with pytest.raises(ValueError, match="block_ptr"):
        penalty_weights("theory", np.ones(5), ptr)
    with pytest.raises(ValueError, match="block_ptr"):
        BinarsityPenalty(ptr, np.ones(5))
    with pytest.raises(ValueError, match="block_ptr"):
        block_suffix_sums(np.ones(5), ptr)


def test_penalty_helpers_check_lengths_and_chain():
    ptr = np.array([0, 2, 5])
    with pytest.raises(ValueError, match="block_ptr must end at len\\(values\\) = 4"):
        block_suffix_sums(np.ones(4), ptr)
    with pytest.raises(ValueError, match="weights must have length 5"):
        BinarsityPenalty(ptr, np.ones(3))
    with pytest.raises(ValueError, match="counts must have length 5"):
        BinarsityPenalty(ptr, np.ones(5), counts=np.ones(7))
    with pytest.raises(ValueError, match="chain_length"):
        penalty_weights("theory", np.ones(5), ptr, chain_length=np.array([2, 9]))
    with pytest.raises(ValueError, match="chain_length"):
        penalty_weights("theory", np.ones(5), ptr, chain_length=np.array([-1, 3]))
    with pytest.raises(TypeError, match="chain_length"):
        penalty_weights("theory", np.ones(5), ptr, chain_length=np.array([2.0, 3.0]))


_RNG = np.random.default_rng(3)
CODES = _RNG.integers(0, 4, size=(2, 40)).astype(np.uint8)
Y = _RNG.normal(size=40)


@pytest.mark.parametrize(
    "ptr",
    [
        np.array([0, 4.5, 8]),  # float: used to be truncated to [0, 4, 8] silently
        np.array([0, 4, 8], dtype=float),
        np.array([0, 2**64 - 4, 8], dtype=np.uint64),
        np.array([0, 4, 8], dtype=bool),
    ],
)
def test_engine_entries_refuse_bad_offsets(ptr):
    kw = {"penalty_weights": np.ones(8)}
    for call in (
        lambda: solve(CODES, ptr, Y, lam=0.1, **kw),
        lambda: Prepared(CODES, ptr, Y, **kw),
        lambda: lambda_max(CODES, ptr, Y, **kw),
    ):
        with pytest.raises((TypeError, ValueError), match="block_ptr"):
            call()


def test_engine_accepts_unsigned_offsets_that_fit():
    a = solve(CODES, np.array([0, 4, 8], dtype=np.uint8), Y, lam=0.01, penalty_weights=np.ones(8))
    b = solve(CODES, np.array([0, 4, 8]), Y, lam=0.01, penalty_weights=np.ones(8))
    np.testing.assert_array_equal(a.coef, b.coef)


def test_check_codes_bounds_every_block():
    ptr = np.array([0, 4, 6], dtype=np.intp)
    codes = np.array([[0, 3, 1], [1, 0, 2]], dtype=np.uint8)
    with pytest.raises(ValueError, match="codes of block 1 reach 2 but the block has 2 levels"):
        check_codes(codes, ptr)
    with pytest.raises(ValueError, match="codes has 1 block"):
        check_codes(codes[:1], ptr)
    assert check_codes(codes[:, :0], ptr).shape == (2, 0)


# ------------------------------------------- predict on a fitted state: consistency


def _fitted(cls=None, **kw):
    from binarsity_stats import BinarsityGLM

    rng = np.random.default_rng(5)
    X = rng.normal(size=(200, 3))
    y = X[:, 0] + rng.normal(size=200)
    return (cls or BinarsityGLM)(n_bins=10, **kw).fit(X, y), X


def _tamper_ptr_far(est):
    est.block_ptr_ = est.block_ptr_ - 10**9  # used to segfault


def _tamper_coef_short(est):
    est.coef_ = est.coef_[:3]  # used to read past the array and return plausible values


def _tamper_coef_nan(est):
    est.coef_ = np.full_like(est.coef_, np.nan)


def _tamper_ptr_unsigned(est):
    est.block_ptr_ = est.block_ptr_.astype(np.uint8) - np.uint8(1)


def _tamper_ptr_sizes(est):
    ptr = est.block_ptr_.copy()
    ptr[1] -= 2  # same total, blocks no longer the binarizer's
    est.block_ptr_ = ptr


def _tamper_edges(est):
    est.binarizer_.edges_[0] = np.linspace(-3, 3, 300)  # 301 levels in a 10-level block


def _tamper_edges_order(est):
    est.binarizer_.edges_[1] = est.binarizer_.edges_[1][::-1].copy()


def _tamper_n_bins(est):
    est.binarizer_.n_bins_ = est.binarizer_.n_bins_ + 1


def _tamper_missing(est):
    est.binarizer_.has_missing_level_ = np.ones(3, dtype=bool)


def _tamper_intercept(est):
    est.intercept_ = np.inf


def _tamper_binarizer(est):
    est.binarizer_ = None


TAMPERS = [
    (_tamper_ptr_far, "block_ptr_ must start at 0"),
    (_tamper_coef_short, r"len\(coef_\) = 3 but block_ptr_\[-1\] = 30"),
    (_tamper_coef_nan, "coef_ holds NaN"),
    (_tamper_ptr_unsigned, "block_ptr_"),
    (_tamper_ptr_sizes, "block sizes"),
    (_tamper_edges, "n_bins_ does not match the cut points"),
    (_tamper_edges_order, r"edges_\[1\] is not finite and strictly increasing"),
    (_tamper_n_bins, "n_bins_ does not match"),
    (_tamper_missing, "n_bins_ does not match"),
    (_tamper_intercept, "intercept_"),
    (_tamper_binarizer, "binarizer_ is not a fitted Binarizer"),
]


@pytest.mark.parametrize(("tamper", "match"), TAMPERS, ids=[t[0].__name__ for t in TAMPERS])
def test_predict_refuses_an_inconsistent_fitted_state(tamper, match):
    est, X = _fitted()
    tamper(est)
    for call in (lambda: est.predict(X), lambda: est.decision_function(X), est.cut_points):
        with pytest.raises(ValueError, match="the fitted state is inconsistent") as info:
            call()
        assert info.match(match)
        assert "modified or unpickled from another version" in str(info.value)


@pytest.mark.parametrize(("tamper", "match"), TAMPERS[:4], ids=[t[0].__name__ for t in TAMPERS[:4]])
def test_classifier_predict_refuses_an_inconsistent_fitted_state(tamper, match):
    from binarsity_stats import BinarsityClassifier

    rng = np.random.default_rng(2)
    X = rng.normal(size=(200, 3))
    clf = BinarsityClassifier(n_bins=10).fit(X, np.where(X[:, 0] > 0, "yes", "no"))
    tamper(clf)
    for call in (clf.predict, clf.predict_proba, clf.decision_function):
        with pytest.raises(ValueError, match=match):
            call(X)


def test_binarizer_transform_refuses_an_inconsistent_state():
    from binarsity_stats import Binarizer

    X = np.random.default_rng(0).normal(size=(100, 2))
    b = Binarizer(n_bins=300).fit(X)  # 100 levels: uint8 codes
    b.edges_ = [np.linspace(-3, 3, 400), b.edges_[1]]  # 401 levels would wrap in uint8
    with pytest.raises(ValueError, match="the fitted state is inconsistent: n_bins_"):
        b.transform(X)


def test_setting_coef_by_hand_takes_effect_and_is_validated():
    est, X = _fitted()
    eta = est.decision_function(X)
    est.coef_ = est.coef_ + 1.0  # one level more in each of the 3 blocks
    np.testing.assert_allclose(est.decision_function(X), eta + 3.0)
    est.intercept_ = est.intercept_ - 3.0
    np.testing.assert_allclose(est.decision_function(X), eta)


def test_refit_replaces_the_fitted_state_as_a_whole():
    import pandas as pd

    est, X = _fitted()
    est.fit(pd.DataFrame(X, columns=["a", "b", "c"]), X[:, 0])
    assert list(est.feature_names_in_) == ["a", "b", "c"]
    est.fit(X, X[:, 0])  # an array: the names of the previous fit must go
    assert not hasattr(est, "feature_names_in_")


@pytest.mark.parametrize("kind", ["estimator", "binarizer"])
def test_predict_racing_fit_sees_the_old_or_the_new_model(kind):
    """A predict racing a fit on the same object never mixes two fits' state.

    The refitting thread alternates between data with 10-level and 3-level blocks; every
    prediction must be bitwise one of the two models' predictions. Before the fit
    published its state in one assignment, a predict read one fit's binarizer and the
    other's coefficients (about 13 wrong predictions per second here).
    """
    import sys
    import threading
    import time

    from binarsity_stats import Binarizer, BinarsityGLM

    rng = np.random.default_rng(0)
    XA = rng.normal(size=(300, 3))
    XB = rng.integers(0, 3, size=(300, 3)).astype(float)
    yA, yB = XA[:, 0] + rng.normal(size=300), XB[:, 1] + rng.normal(size=300)
    Xt = 2 * rng.normal(size=(2000, 3))
    if kind == "estimator":
        make = lambda: BinarsityGLM(n_bins=40)  # noqa: E731
        fit = lambda est, X, y: est.fit(X, y)  # noqa: E731
        out = lambda est: est.predict(Xt)  # noqa: E731
    else:
        make = lambda: Binarizer(n_bins=40)  # noqa: E731
        fit = lambda est, X, y: est.fit(X)  # noqa: E731
        out = lambda est: est.transform(Xt)  # noqa: E731
    expected = [out(fit(make(), XA, yA)), out(fit(make(), XB, yB))]
    est = fit(make(), XA, yA)
    stop = threading.Event()

    def refit():
        k = 0
        while not stop.is_set():
            fit(est, *((XB, yB) if k % 2 == 0 else (XA, yA)))
            k += 1

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    thread = threading.Thread(target=refit)
    thread.start()
    mixed = total = 0
    try:
        t0 = time.perf_counter()
        # at least 1 s and 20 predictions (a loaded machine is slow), at most 60 s
        while not mixed and time.perf_counter() - t0 < 60 and (
            time.perf_counter() - t0 < 1.0 or total < 20
        ):
            got = out(est)
            total += 1
            mixed += not any(np.array_equal(got, e) for e in expected)
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(old)
    assert total > 10
    assert mixed == 0


def _glm_results():
    import pandas as pd

    from binarsity_stats import glm

    rng = np.random.default_rng(8)
    df = pd.DataFrame({"x": rng.normal(size=150), "g": rng.choice(list("abc"), 150)})
    df["z"] = rng.normal(size=150)
    df["y"] = df.x + (df.g == "b") + rng.normal(size=150)
    return glm("y ~ bin(x, 12) + C(g) + z", df).fit(lam=0.01), df


def _res_coef_short(res):
    res.coef = res.coef[:3]


def _res_coef_nan(res):
    res.coef = np.full_like(res.coef, np.nan)


def _res_codes(res):
    res.model.design.codes[0, 5] = 200  # level 200 of a 12-level block


def _res_blocks(res):
    from dataclasses import replace

    blocks = res.model.spec.blocks
    blocks[0] = replace(blocks[0], n_levels=blocks[0].n_levels + 40)


def _res_dense(res):
    res.dense_coef = np.zeros(4)


RESULT_TAMPERS = [
    (_res_coef_short, r"len\(coef\) = 3"),
    (_res_coef_nan, "NaN or infinite"),
    (_res_codes, "reach 200"),
    (_res_blocks, "block sizes|the blocks hold 55"),
    (_res_dense, "4 dense coefficients for 1 dense columns"),
]


@pytest.mark.parametrize(
    ("tamper", "match"), RESULT_TAMPERS, ids=[t[0].__name__ for t in RESULT_TAMPERS]
)
def test_formula_predict_refuses_an_inconsistent_fitted_state(tamper, match):
    res, df = _glm_results()
    tamper(res)
    calls = [lambda: res.predict()]
    if tamper is not _res_codes:  # the training codes are only read without newdata
        calls.append(lambda: res.predict(df))
    for call in calls:
        with pytest.raises(ValueError, match="the fitted state is inconsistent") as info:
            call()
        assert info.match(match)


# --------------------------------------------------- Binarizer as a scikit-learn transformer


def test_binarizer_passes_check_estimator_at_defaults():
    from sklearn.utils.estimator_checks import check_estimator

    from binarsity_stats import Binarizer

    check_estimator(Binarizer())


def test_binarizer_params_clone_and_feature_names():
    import pandas as pd
    from sklearn.base import clone

    from binarsity_stats import Binarizer

    b = Binarizer(n_bins=7, method="uniform", missing="separate")
    assert b.get_params() == {
        "n_bins": 7, "method": "uniform", "missing": "separate", "min_bin_count": 1
    }
    assert b.set_params(n_bins=4) is b and b.n_bins == 4
    X = np.random.default_rng(1).normal(size=(60, 2))
    b.fit(X)
    c = clone(b)
    assert c.get_params() == b.get_params() and not hasattr(c, "edges_")
    assert list(b.get_feature_names_out()) == ["x0", "x1"]
    f = Binarizer().fit(pd.DataFrame(X, columns=["age", "income"]))
    assert list(f.get_feature_names_out()) == ["age", "income"]
    with pytest.raises(ValueError, match="input_features is not equal"):
        f.get_feature_names_out(["a", "b"])


def test_binarizer_in_pipeline_and_grid_search():
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    from binarsity_stats import Binarizer

    rng = np.random.default_rng(4)
    X = rng.normal(size=(200, 2))
    y = (np.abs(X[:, 0]) > 1).astype(int)  # a step function of x0: bins help
    pipe = make_pipeline(Binarizer(), OneHotEncoder(handle_unknown="ignore"), LogisticRegression())
    grid = GridSearchCV(pipe, {"binarizer__n_bins": [2, 8]}, cv=3).fit(X, y)
    assert grid.best_params_ == {"binarizer__n_bins": 8}
    assert grid.predict(X).shape == (200,)
    assert list(grid.best_estimator_[:-2].get_feature_names_out()) == ["x0", "x1"]


def test_without_scikit_learn_the_stand_in_base_classes_work(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    import binarsity_stats

    code = """
import sys
sys.modules["sklearn"] = None  # import sklearn -> ImportError
import numpy as np
from binarsity_stats import Binarizer, BinarsityGLM
from binarsity_stats.core._base import NotFittedError
b = Binarizer(n_bins=5)
assert b.get_params() == {"method": "quantile", "missing": "error", "min_bin_count": 1, "n_bins": 5}
X = np.random.default_rng(0).normal(size=(50, 2))
assert b.set_params(n_bins=4).fit_transform(X).max() == 3
est = BinarsityGLM(n_bins=4).fit(X, X[:, 0])
assert est.predict(X).shape == (50,)
try:
    BinarsityGLM().predict(X)
except NotFittedError as exc:
    assert isinstance(exc, ValueError) and isinstance(exc, AttributeError)
else:
    raise SystemExit("not fitted: no error")
"""
    # the child imports the package these tests import (the installed one in CI), never
    # the uncompiled source folder of a checkout: run it outside the checkout
    imported = Path(binarsity_stats.__file__).resolve().parent.parent
    env = dict(os.environ, PYTHONPATH=str(imported))
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120, env=env, cwd=tmp_path)


def test_bin_codes_refuses_an_output_too_narrow_for_its_levels():
    from binarsity_stats.design._binarizer import bin_codes

    x = np.linspace(0, 2, 10)
    edges = np.linspace(0, 1, 300)  # 301 levels: uint8 codes would wrap
    with pytest.raises(ValueError, match="cannot hold the codes of 301 levels"):
        bin_codes(x, edges, False, np.empty(10, dtype=np.uint8))
    codes, bad = bin_codes(x, edges, False, np.empty(10, dtype=np.uint16))
    assert bad == -1 and codes.max() == 300


def test_binarizer_set_output_pandas():
    import pandas as pd

    from binarsity_stats import Binarizer

    X = pd.DataFrame(np.random.default_rng(6).normal(size=(30, 2)), columns=["a", "b"])
    b = Binarizer(n_bins=4).set_output(transform="pandas")
    out = b.fit_transform(X)
    assert isinstance(out, pd.DataFrame) and list(out.columns) == ["a", "b"]
    np.testing.assert_array_equal(out.to_numpy(), Binarizer(n_bins=4).fit(X).transform(X))
    assert isinstance(b.transform(X), pd.DataFrame)


def test_binned_design_kernels_check_vector_lengths():
    """The engine's design hands θ, row vectors and output buffers to the kernels: a
    wrong length (a solution of another design, say) is an error, not a read past θ."""
    from binarsity_stats.design._design import BinnedDesign

    design = BinnedDesign(CODES, np.array([0, 4, 8]))
    eta = design.linear_predictor(np.arange(8.0))
    assert eta.shape == (40,)
    with pytest.raises(ValueError, match=r"theta \(the levels\) must have shape \(8,\)"):
        design.linear_predictor(np.arange(3.0))
    with pytest.raises(ValueError, match=r"out must have shape \(40,\)"):
        design.gather_add(np.arange(8.0), np.zeros(5))
    with pytest.raises(ValueError, match=r"values must have shape \(40,\)"):
        design.histograms(np.ones(7))
    with pytest.raises(ValueError, match=r"values must have shape \(40,\)"):
        design.histograms2(np.ones(40), np.ones(3))
