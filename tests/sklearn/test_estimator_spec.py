"""sklearn/_estimator_spec: the recipe of an estimator's results, coding rows by its blocks."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from binarsity_stats import BinarsityGLM
from binarsity_stats.sklearn._estimator_input import _feature_codes
from binarsity_stats.sklearn._estimator_spec import EstimatorSpec


def _fit(n=800, seed=5):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({
        "age": rng.normal(40, 10, n), "region": rng.choice(["n", "s"], n),
        "g": rng.choice(["a", "b", "c"], n), "z": rng.normal(size=n),
    })  # fmt: skip
    y = np.where(X["region"] == "n", X["age"] > 40, X["age"] < 35) + 0.3 * X["z"]
    y = y + rng.normal(scale=0.5, size=n)
    est = BinarsityGLM(n_bins=12, lam=0.01, by={"age": "region"}, categorical_features=["g"],
                       linear_features=["z"]).fit(X, y)  # fmt: skip
    return est, X, y, rng


def test_new_rows_are_coded_as_the_estimator_codes_them():
    est, X, y, rng = _fit()
    spec = est.results(X, y).model.spec
    assert isinstance(spec, EstimatorSpec) and spec.model_spec is None
    assert [b.term for b in spec.blocks] == ["bin(age):C(region)", "C(g)"]  # glm()'s labels
    new = X.sample(200, random_state=1).reset_index(drop=True)
    design = spec.transform(new[["z", "g", "region", "age"]])  # by name, in any order
    codes, dense = _feature_codes(est._fitted(), new, len(new))  # the predict path
    assert_array_equal(design.codes, codes)
    assert_array_equal(design.dense, dense)
    res = est.results(X, y)
    assert_allclose(res.predict(new), est.predict(new), rtol=1e-12, atol=1e-12)


def test_bad_new_rows_are_refused_naming_the_column():
    est, X, y, _ = _fit()
    spec = est.results(X, y).model.spec
    new = X.iloc[:20].reset_index(drop=True)
    with pytest.raises(ValueError, match=r"column\(s\) \['g'\] required"):
        spec.transform(new.drop(columns="g"))
    with pytest.raises(ValueError, match="'age'"):
        spec.transform(new.assign(age=np.nan))
    with pytest.raises(ValueError, match="'g'"):
        spec.transform(new.assign(g="unseen"))
    with pytest.raises(ValueError, match="'region'"):
        spec.transform(new.assign(region="e"))
