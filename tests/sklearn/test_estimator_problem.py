"""sklearn/_estimator_problem.py: an estimator's data validated, binned and assembled.

Proved here: the estimators' design is the formula's — the same codes, block offsets,
dense column and penalty weights as ``glm()`` on the matching formula (plain,
by-group, missing level) — so an estimator and ``glm()`` solve one problem; the engine's
problem built from it solves to ``glm()``'s fit; ``fit_intercept=False`` is absorbed by
the first block; the refusals name the argument or column.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from binarsity_stats import BinarsityGLM
from binarsity_stats.model._model import glm


@pytest.fixture(scope="module")
def X():
    rng = np.random.default_rng(0)
    n = 200
    return pd.DataFrame({"x": rng.normal(size=n), "g": rng.choice(list("abc"), n),
                         "z": rng.normal(size=n)})  # fmt: skip


@pytest.fixture(scope="module")
def y(X):
    rng = np.random.default_rng(1)
    return ((X.x > 0) + 0.3 * X.z + rng.normal(size=len(X))).to_numpy()


def same_design(prob, model):
    np.testing.assert_array_equal(prob.block_ptr, model.block_ptr)
    np.testing.assert_array_equal(prob.design.codes, model.design.codes)
    np.testing.assert_allclose(prob.penalty_weights, model.penalty_weights, rtol=1e-15)
    if model.design.dense is None:
        assert prob.design.dense is None
    else:
        np.testing.assert_array_equal(prob.design.dense, model.design.dense)


def test_the_design_is_the_formulas(X, y):
    est = BinarsityGLM(n_bins=8, categorical_features=["g"], linear_features=["z"])
    prob = est._problem(X, y, None, None)
    same_design(prob, glm("y ~ bin(x, 8) + C(g) + z", X.assign(y=y)))
    assert list(prob.kinds) == ["bin", "categorical", "linear"]
    np.testing.assert_array_equal(prob.chain, [8, 3])
    assert [list(c) for c in prob.categories] == [["a", "b", "c"]]
    assert prob.fit_intercept and not prob.absorbed
    assert list(prob.extra["feature_names_in_"]) == ["x", "g", "z"]


def test_a_by_group_feature_is_one_chain_per_level(X, y):
    est = BinarsityGLM(n_bins=4, by={"x": "g"}, linear_features=["z"])
    prob = est._problem(X, y, None, None)
    same_design(prob, glm("y ~ bin(x, 4):C(g) + z", X.assign(y=y)))
    assert prob.chains == [[(0, 4), (4, 4), (8, 4)]]
    assert prob.by_groups == [1] and prob.extra["by_"][0] == "g"


def test_a_missing_level_sits_outside_the_chain(X, y):
    Xm = X.copy()
    Xm.loc[::10, "x"] = np.nan
    est = BinarsityGLM(n_bins=6, missing="separate", categorical_features=["g"],
                       linear_features=["z"])  # fmt: skip
    prob = est._problem(Xm, y, None, None)
    model = glm("y ~ bin(x, 6) + C(g) + z", Xm.assign(y=y), missing="separate")
    same_design(prob, model)
    assert prob.chain[0] == prob.block_ptr[1] - 1  # the last level is the missing one
    assert np.all(prob.design.codes[0][::10] == prob.block_ptr[1] - 1)


def test_the_engine_problem_solves_to_the_formula_fit(X, y):
    w = np.random.default_rng(2).uniform(0.5, 2.0, len(X))
    off = np.linspace(-0.1, 0.1, len(X))
    est = BinarsityGLM(n_bins=8, categorical_features=["g"], linear_features=["z"])
    prob = est._problem(X, y, w, off)
    sol = prob.prepared().solve(0.01, tol=1e-10)
    ref = glm("y ~ bin(x, 8) + C(g) + z", X.assign(y=y), sample_weight=w, offset=off)
    ref_sol = ref.prepare().solve(0.01, tol=1e-10)
    np.testing.assert_allclose(sol.coef, ref_sol.coef, atol=1e-9)
    np.testing.assert_allclose(sol.dense_coef, ref_sol.dense_coef, atol=1e-9)
    assert prob.path_data().lambda_max() == pytest.approx(ref.lambda_max(), rel=1e-12)


def test_no_intercept_is_absorbed_by_the_first_block(X, y):
    est = BinarsityGLM(n_bins=8, fit_intercept=False, categorical_features=["g"],
                       linear_features=["z"])  # fmt: skip
    prob = est._problem(X, y, None, None)
    assert prob.absorbed and prob.fit_intercept  # the engine fits β0, reported in block 1
    only_linear = BinarsityGLM(fit_intercept=False, linear_features=["z"])
    p2 = only_linear._problem(X[["z"]], y, None, None)
    assert not p2.absorbed and not p2.fit_intercept


def test_refusals_name_the_argument(X, y):
    with pytest.raises(ValueError, match="strata='g' needs family='cox'"):
        BinarsityGLM(strata="g")._problem(X, y, None, None)
    with pytest.raises(ValueError, match="family='nb': the estimators do not estimate theta"):
        BinarsityGLM(family="nb", categorical_features=["g"])._problem(
            X, np.abs(np.round(y)), None, None
        )
    Xm = X.copy()
    Xm.loc[0, "x"] = np.nan
    with pytest.raises(ValueError, match="by\\['x'\\]: column 'x' contains missing values"):
        BinarsityGLM(by={"x": "g"}, missing="separate", linear_features=["z"])._problem(
            Xm, y, None, None
        )
    with pytest.raises(TypeError, match="column 'g' has non-numeric dtype"):
        BinarsityGLM()._problem(X, y, None, None)
    with pytest.raises(ValueError, match="groups"):
        BinarsityGLM(categorical_features=["g"])._problem(X, y, None, None, groups=[1, 2])
