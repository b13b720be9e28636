"""Monotone terms in the modelling layer: ``bin(x, monotone=...)`` and ``monotone=``.

Formulas and estimators ask for the engine's monotone kinds; paths, CV and every fit
stay ordered; the summary, cut-point table and plots say which terms are constrained;
``to_spec``/``from_spec``, pickles, SQL, scorecards and the standalone scorer give
``predict``'s numbers; the CLI fits such a formula; bad values are refused by name.
"""

from __future__ import annotations

import io
import json
import math
import pickle
import sqlite3

import numpy as np
import pandas as pd
import pytest

from binarsity_stats import (
    BinarsityClassifier,
    BinarsityClassifierCV,
    BinarsityGLM,
    BinarsityGLMCV,
    from_spec,
    glm,
)
from binarsity_stats.design import standalone_scorer as scorer
from binarsity_stats._cli import build_parser, main


def _frame(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    age = rng.uniform(18, 80, n)
    bm = rng.integers(50, 150, n).astype(float)
    z = rng.normal(size=n)
    exposure = rng.uniform(0.2, 1.0, n)
    # the truth: frequency falls with age, but with a bump at 60 against the order
    eta = -0.02 * (age - 18) + 0.4 * (age > 60) + 0.012 * (bm - 100) - 1.0
    return pd.DataFrame(
        {"age": age, "bm": bm, "z": z, "exposure": exposure,
         "claims": rng.poisson(exposure * np.exp(eta)).astype(float),
         "lapse": (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)}
    )  # fmt: skip


TRAIN, NEW = _frame(800, 0), _frame(50, 1)
NEW.loc[0, "age"], NEW.loc[1, "bm"] = 1e6, -1e6  # out of range
FORMULA = (
    "claims ~ bin(age, 12, monotone='decreasing') + bin(bm, 10, monotone='increasing') "
    "+ bin(z, 6) + offset(np.log(exposure))"
)


def _blocks(res):
    bp = res.model.block_ptr
    return [res.coef[bp[j] : bp[j + 1]] for j in range(len(bp) - 1)]


@pytest.fixture(scope="module")
def res():
    return glm(FORMULA, TRAIN, family="poisson").fit(lam=1e-3)


def test_formula_terms_are_monotone_chains(res):
    assert res.model._block_kinds() == ["decreasing", "increasing", "tv"]
    age, bm, _ = _blocks(res)
    assert np.all(np.diff(age) <= 0) and np.all(np.diff(bm) >= 0)
    # the unconstrained fit does go up at 60: the constraint is what keeps age ordered
    free = glm(FORMULA.replace(", monotone='decreasing'", ""), TRAIN, family="poisson").fit(
        lam=1e-3
    )
    assert np.any(np.diff(_blocks(free)[0]) > 0)
    assert res.objective >= free.objective - 1e-12


def test_path_and_cv_stay_ordered():
    model = glm(FORMULA, TRAIN, family="poisson")
    path = model.fit_path(n_lambdas=8)
    for fit in path:
        age, bm, _ = _blocks(fit)
        assert np.all(np.diff(age) <= 0) and np.all(np.diff(bm) >= 0)
    # λ_max is exact for the monotone chains: flat there, not just below
    lmax = model.lambda_max()
    top = model.fit(lam=lmax * (1 + 1e-9))
    below = model.fit(lam=lmax * 0.97)
    assert np.all(top.coef == 0.0) and np.any(below.coef != 0.0)
    cv = model.fit_cv(folds=3, n_lambdas=8, random_state=0)
    age, bm, _ = _blocks(cv.results("lam_min"))
    assert np.all(np.diff(age) <= 0) and np.all(np.diff(bm) >= 0)


def test_reports_say_which_terms_are_constrained(res):
    text = str(res.summary())
    assert "bin, decreasing" in text and "bin, increasing" in text
    assert "Monotone terms" in text
    cuts = res.cut_points()
    assert set(cuts["shape"]) <= {"increasing", "decreasing", "free"}
    assert np.all(cuts.loc[cuts["shape"] == "decreasing", "jump"] < 0)
    assert np.all(cuts.loc[cuts["shape"] == "increasing", "jump"] > 0)
    # a model without monotone terms keeps its columns
    plain = glm("claims ~ bin(z, 6)", TRAIN, family="poisson").fit(lam=1e-4)
    assert "shape" not in plain.cut_points().columns
    import matplotlib

    matplotlib.use("Agg")
    fig = res.plot_shapes()
    titles = [a.get_title() for a in fig.axes]
    assert "age (decreasing)" in titles and "bm (increasing)" in titles


def test_spec_pickle_sql_scorer_give_predicts_numbers(res):
    spec = json.loads(json.dumps(res.to_spec()))
    assert [t.get("penalty") for t in spec["terms"]] == ["decreasing", "increasing", "tv"]
    expect = res.predict(NEW)
    np.testing.assert_allclose(from_spec(spec).predict(NEW), expect, rtol=1e-13)
    np.testing.assert_allclose(pickle.loads(pickle.dumps(res)).predict(NEW), expect, rtol=1e-13)
    rows = [{k: float(v) for k, v in r.items()} for r in NEW.to_dict("records")]
    np.testing.assert_allclose(scorer.predict(spec, rows), expect, rtol=1e-12)
    con = sqlite3.connect(":memory:")
    NEW.to_sql("t", con, index=False)
    got = [r[-1] for r in con.execute(res.to_sql(table="t", dialect="sqlite")).fetchall()]
    np.testing.assert_allclose(got, expect, rtol=1e-12)


def test_scorecard_of_a_monotone_binomial_model():
    res = glm("lapse ~ bin(age, 10, monotone='decreasing') + bin(bm, 8)", TRAIN,
              family="binomial").fit(lam=1e-3)  # fmt: skip
    card = res.scorecard(pdo=20, base_score=600, base_odds=50)
    eta = res.predict(NEW, type="link")
    np.testing.assert_allclose(
        card.score(NEW), 600 - 20 / math.log(2) * (eta + math.log(50)), rtol=1e-12
    )


def test_bad_monotone_values_are_refused_by_name():
    with pytest.raises(ValueError, match=r"monotone in bin\(age\) must be 'increasing'"):
        glm("claims ~ bin(age, monotone='up')", TRAIN, family="poisson")
    X = TRAIN[["age", "bm", "z"]]
    with pytest.raises(ValueError, match=r"monotone\['age'\] must be"):
        BinarsityGLM(monotone={"age": "up"}).fit(X, TRAIN["claims"])
    with pytest.raises(ValueError, match="column 'z' is linear, not binned"):
        BinarsityGLM(monotone={"z": "increasing"}, linear_features=["z"]).fit(X, TRAIN["claims"])
    with pytest.raises(ValueError, match="not in X"):
        BinarsityGLM(monotone={"speed": "increasing"}).fit(X, TRAIN["claims"])
    with pytest.raises(ValueError, match="monotone must be None or a dict"):
        BinarsityGLM(monotone="increasing").fit(X, TRAIN["claims"])


def test_estimators_take_monotone_by_name_or_position():
    X, y = TRAIN[["age", "bm", "z"]], TRAIN["claims"]
    est = BinarsityGLM(family="poisson", n_bins=12, lam=1e-3,
                       monotone={"age": "decreasing", 1: "increasing"}).fit(X, y)  # fmt: skip
    assert list(est.monotone_) == ["decreasing", "increasing", None]
    bp, c = est.block_ptr_, est.coef_
    assert np.all(np.diff(c[bp[0] : bp[1]]) <= 0) and np.all(np.diff(c[bp[1] : bp[2]]) >= 0)
    # the same model as the formula's
    res = glm("claims ~ bin(age, 12, monotone='decreasing') + bin(bm, 12, monotone='increasing')"
              " + bin(z, 12)", TRAIN, family="poisson").fit(lam=1e-3)  # fmt: skip
    np.testing.assert_allclose(est.coef_, res.coef, atol=1e-8)
    # inspection, spec and pickles
    assert "bin, decreasing" in str(est.summary(X, y))
    spec = est.to_spec()
    assert [t["penalty"] for t in spec["terms"]] == ["decreasing", "increasing", "tv"]
    np.testing.assert_allclose(from_spec(spec).predict(X), est.predict(X), rtol=1e-13)
    np.testing.assert_allclose(pickle.loads(pickle.dumps(est)).predict(X), est.predict(X))
    assert est.get_params()["monotone"] == {"age": "decreasing", 1: "increasing"}
    cuts = est.cut_points()
    assert np.all(cuts.jump[cuts["shape"] == "decreasing"] < 0)
    assert "shape" not in BinarsityGLM(n_bins=6, lam=1e-4).fit(X, y).cut_points().columns


def test_classifier_and_cv_estimators():
    X = TRAIN[["age", "bm"]].to_numpy()
    clf = BinarsityClassifier(n_bins=8, lam=1e-3, monotone={0: "decreasing"})
    clf.fit(X, TRAIN["lapse"])
    assert np.all(np.diff(clf.coef_[:8]) <= 0)
    for est in (
        BinarsityGLMCV(family="poisson", n_bins=8, cv=3, n_lambdas=6, monotone={1: "increasing"}),
        BinarsityClassifierCV(n_bins=8, cv=3, n_lambdas=6, monotone={1: "increasing"}),
    ):
        y = TRAIN["claims"] if isinstance(est, BinarsityGLMCV) else TRAIN["lapse"]
        est.fit(X, y)
        bp = est.block_ptr_
        assert np.all(np.diff(est.coef_[bp[1] : bp[2]]) >= 0)
        assert "monotone" in est.get_params()


def test_cli_fits_a_monotone_formula(tmp_path, capsys):
    path = tmp_path / "data.csv"
    TRAIN.to_csv(path, index=False)
    out = io.StringIO()
    code = main(["fit", "claims ~ bin(age, 8, monotone='decreasing') + bin(bm, 6)",
                 "--data", str(path), "--family", "poisson", "--lam", "0.001"], out=out)  # fmt: skip
    assert code == 0
    assert "bin, decreasing" in out.getvalue()
    with pytest.raises(SystemExit):
        build_parser().parse_args(["fit", "--help"])
    assert "monotone='increasing'" in capsys.readouterr().out


def test_the_refit_on_segments_is_the_ordered_one():
    # segments {0}, {1}, {2}, {3} of an increasing block whose level means are not
    # ordered: the unpenalised refit must be the isotonic fit on them, not the means
    from binarsity_stats.design._design import BinnedDesign
    from binarsity_stats.engine._relax import unpenalized_on_segments
    from binarsity_stats.engine._solvers import Solution

    codes = np.repeat(np.arange(4), 25)[None, :].astype(np.uint8)
    y = np.array([0.0, 2.0, 1.0, 3.0])[codes[0]]
    design = BinnedDesign(codes, np.array([0, 4]), kinds=("increasing",))
    theta = np.array([-1.5, -0.5, 0.0, 1.5])
    sol = Solution(coef=theta, dense_coef=np.zeros(0), intercept=1.5, lam=0.1,
                   objective=0.0, kkt_violation=0.0, converged=True, n_iter=1, n_sweeps=1,
                   eta=None, bin_counts=np.full(4, 25.0))  # fmt: skip
    refit = unpenalized_on_segments(design, y, "gaussian", sol, np.array([0, 1.0, 1, 1]))
    np.testing.assert_allclose(refit.coef + refit.intercept, [0.0, 1.5, 1.5, 3.0], atol=1e-8)


def test_relaxed_fit_keeps_the_order():
    # the unpenalised refit on the segments is the ordered one, so every mix is ordered
    model = glm("claims ~ bin(age, 30, monotone='decreasing') + bin(bm, 10)", TRAIN,
                family="poisson")  # fmt: skip
    res = model.fit(lam=2e-4)
    free = glm("claims ~ bin(age, 30) + bin(bm, 10)", TRAIN, family="poisson")
    # on these segments an unconstrained refit would go up somewhere
    assert np.any(np.diff(_blocks(free.fit(lam=2e-4).relax(0.0))[0]) > 0)
    for gamma in (0.0, 0.5):
        age = _blocks(res.relax(gamma))[0]
        assert np.all(np.diff(age) <= 0)
