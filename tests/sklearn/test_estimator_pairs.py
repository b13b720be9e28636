"""``interactions=`` on the estimators: pairs ranked at the main-effects fit, refitted jointly.

What is proven here: with a true step interaction on (x1, x3) among five features the
estimators choose that pair (k = 1, by name and on an array, the classifier too); the
joint fit is the formula's fit with the pair term ``bin(x1, 16):bin(x3, 16)`` at the
same λ (same objective and predictions); the CV estimator cross-validates again with
the pair; ``interactions=0`` (the default) changes nothing; the parameter is in
``get_params``; bad values and the methods that cannot describe a pair are refused by
name.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

import binarsity_stats as bs


def _data(seed=0, n=3000, strength=1.0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.uniform(size=(n, 5)), columns=["x1", "x2", "x3", "x4", "x5"])
    y = ((X.x1 > 0.5) - 0.5 * (X.x2 > 0.3)
         + strength * ((X.x1 > 0.4) & (X.x3 > 0.6)) + rng.normal(size=n)).to_numpy()  # fmt: skip
    return X, y


def test_interactions_choose_the_true_pair_and_refit_as_the_formula():
    X, y = _data()
    lam = 0.015
    est = bs.BinarsityGLM(interactions=1, lam=lam).fit(X, y)
    assert est.interactions_ == [("x1", "x3")]
    ranking = est.pair_ranking_
    assert len(ranking) == 10 and tuple(ranking.loc[0, ["feature_a", "feature_b"]]) == ("x1", "x3")
    (term,) = est.pair_terms_
    assert np.abs(term["coef"]).max() > 0.05  # the pair enters at this λ
    df = X.assign(y=y)
    res = bs.glm("y ~ bin(x1) + bin(x2) + bin(x3) + bin(x4) + bin(x5) + bin(x1, 16):bin(x3, 16)",
                 df).fit(lam=lam)  # fmt: skip
    assert abs(est.objective_ - res.objective) <= 1e-9 * abs(res.objective)
    np.testing.assert_allclose(est.predict(X), res.predict(df), rtol=0, atol=1e-6)
    main = bs.BinarsityGLM(lam=lam).fit(X, y)
    assert est.score(X, y) > main.score(X, y)


def test_pairs_given_by_name_or_position_and_the_classifier():
    X, y = _data(1)
    est = bs.BinarsityGLM(interactions=[("x3", "x1")], lam=0.05).fit(X, y)
    assert est.interactions_ == [("x1", "x3")] and len(est.pair_ranking_) == 1
    arr = bs.BinarsityGLM(interactions=[(2, 0)], lam=0.05).fit(X.to_numpy(), y)
    assert arr.interactions_ == [(0, 2)]
    np.testing.assert_allclose(arr.predict(X.to_numpy()), est.predict(X), rtol=0, atol=1e-12)
    Xb, yb = _data(2, strength=2.5)
    clf = bs.BinarsityClassifier(interactions=1, lam=0.005).fit(Xb, (yb > 0.5).astype(int))
    assert clf.interactions_ == [("x1", "x3")]
    assert np.all(np.isfinite(clf.predict_proba(Xb)))


@pytest.mark.filterwarnings("ignore:lam_min")
def test_the_cv_estimator_cross_validates_again_with_the_pairs():
    # λ values where the grid block steps are quick (pair fits at small λ are slow today)
    X, y = _data(3)
    est = bs.BinarsityGLMCV(interactions=1, lams=[0.1, 0.05], cv=2, n_jobs=1,
                            random_state=0).fit(X, y)  # fmt: skip
    assert est.interactions_ == [("x1", "x3")] and len(est.pair_terms_) == 1
    assert est.cv_scores_.shape == (2, 2) and est.lam_ in (0.1, 0.05)
    assert est.pair_ranking_.loc[0, "score_to_lam"] > 0


def test_the_default_changes_nothing_and_is_a_parameter():
    X, y = _data(4, n=800)
    for cls in (bs.BinarsityGLM, bs.BinarsityClassifier, bs.BinarsityGLMCV, bs.BinarsityClassifierCV):
        est = cls()
        assert est.get_params()["interactions"] == 0
        assert clone(cls(interactions=3)).interactions == 3
    a = bs.BinarsityGLM(lam=0.05).fit(X, y)
    b = bs.BinarsityGLM(lam=0.05, interactions=0).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert not hasattr(b, "interactions_") and not hasattr(b, "pair_terms_")


def test_bad_interactions_and_what_cannot_describe_a_pair_are_refused():
    X, y = _data(5, n=600)
    for bad, err in ((-1, ValueError), (True, TypeError), ("x1", TypeError), ([("x1",)], ValueError)):
        with pytest.raises(err, match="interactions"):
            bs.BinarsityGLM(interactions=bad, lam=0.05).fit(X, y)
    with pytest.raises(ValueError, match="'x9' is not a feature"):
        bs.BinarsityGLM(interactions=[("x1", "x9")], lam=0.05).fit(X, y)
    with pytest.raises(ValueError, match="'x2' is not a binned feature"):
        bs.BinarsityGLM(interactions=[("x1", "x2")], linear_features=["x2"], lam=0.05).fit(X, y)
    with pytest.raises(ValueError, match="with itself"):
        bs.BinarsityGLM(interactions=[("x1", "x1")], lam=0.05).fit(X, y)
    with pytest.raises(ValueError, match="at least two binned"):
        bs.BinarsityGLM(interactions=1, linear_features=["x2", "x3", "x4", "x5"], lam=0.05).fit(X, y)
    est = bs.BinarsityGLM(interactions=1, lam=0.05).fit(X, y)
    for call, what in ((lambda: est.to_spec(), "to_spec"), (lambda: est.cut_points(), "cut_points"),
                       (lambda: est.results(X, y), "results"), (lambda: est.summary(X, y), "results")):  # fmt: skip
        with pytest.raises(NotImplementedError, match=rf"{what}\(\).*pair terms \[\('x1', 'x3'\)\]"):
            call()
    Xn = X.copy()
    Xn.loc[0, "x3"] = np.nan
    with pytest.raises(ValueError, match="column 'x3'"):
        est.predict(Xn)
