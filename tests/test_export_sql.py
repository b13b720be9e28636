"""SQL export (``to_sql``): the query, run in real databases, predicts what ``predict`` does.

Executed in SQLite (the standard library's) and DuckDB on the training rows and on new
rows with out-of-range values, values on the cut points and missing values, for every
kind of term (bins with and without a missing level, a bin of an expression, ``C()``,
linear and interaction terms, an integer division, offset terms and an offset column),
the three families and the estimators: agreement to 1e-12. Rows that ``predict``
refuses (a missing value without a missing level, an unseen level) give NULL.
"""

from __future__ import annotations

import sqlite3

import numpy as np
import pandas as pd
import pytest
from _export_data import export_frame

from binarsity_stats import BinarsityClassifier, BinarsityGLM, from_spec, glm, to_sql

duckdb = pytest.importorskip("duckdb")


TRAIN, NEW = export_frame(300, 0, sql_names=True), export_frame(60, 1, sql_names=True)
NEW.loc[0, "x1"], NEW.loc[1, "x1"], NEW.loc[2, "x 2"] = 1e6, -1e6, 1e-9  # out of range

CASES = {
    "bins": ("yg ~ bin(x1, 8) + bin(`x 2`, 6)", "gaussian", {}),
    "missing levels": ("yb ~ bin(x3, 6) + C(h) + bin(x1, 4)", "binomial", {"missing": "separate"}),
    "bin of an expression": ("y ~ bin(np.log(`x 2`), 6) + offset(np.log(exposure))", "poisson", {}),
    "linear terms": ("yg ~ bin(x1, 5) + log(`x 2`) + x1:z + I(z ** 2) + I(k / 2) - 1", "gaussian", {}),
    "interactions": ("y ~ bin(x1, 5) + z*g + offset(log(exposure))", "poisson", {"offset": "off"}),
    # NULL where predict gives NaN: rows missing x3, h or z (issue 14)
    "missing='drop'": (
        "y ~ bin(x1, 5) + bin(x3, 6) + C(h) + z + offset(np.log(exposure))", "poisson",
        {"missing": "drop", "offset": "off"},
    ),
    "Treatment reference": ("yb ~ bin(x1, 5) + C(g, Treatment('b'))", "binomial", {}),
}


def _run(query: str, frame: pd.DataFrame, engine: str) -> np.ndarray:
    if engine == "sqlite":
        con = sqlite3.connect(":memory:")
        frame.to_sql("t", con, index=False)
        rows = con.execute(query).fetchall()
    else:
        con = duckdb.connect()
        con.register("t", frame)
        rows = con.execute(query).fetchall()
    return np.array([np.nan if r[-1] is None else r[-1] for r in rows], dtype=float)


def _close(a, b) -> None:
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("engine", ["sqlite", "duckdb"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_the_query_predicts_what_predict_does(case, engine):
    formula, family, kw = CASES[case]
    res = glm(formula, TRAIN, family=family, **kw).fit(lam=2e-3)
    for frame in (TRAIN, NEW):
        for how in ("response", "link"):
            sql = res.to_sql(table="t", dialect=engine, type=how)
            _close(_run(sql, frame, engine), res.predict(frame, type=how))


@pytest.mark.parametrize("engine", ["sqlite", "duckdb"])
def test_values_on_cut_points_and_estimators(engine):
    est = BinarsityGLM(family="poisson", n_bins=8, lam=1e-3).fit(TRAIN[["x1", "z"]], TRAIN["y"])
    edges = est.to_spec()["terms"][0]["edges"]
    new = pd.DataFrame({"x1": np.r_[edges, np.nextafter(edges, np.inf)], "z": 0.0})
    _close(_run(to_sql(est, dialect=engine), new, engine), est.predict(new))
    clf = BinarsityClassifier(n_bins=6, lam=1e-3).fit(TRAIN[["x1", "z"]], TRAIN["yb"])
    _close(_run(to_sql(clf, dialect=engine), NEW, engine), clf.predict_proba(NEW[["x1", "z"]])[:, 1])
    spec_model = from_spec(clf.to_spec())  # the description itself, or a rebuilt model
    assert to_sql(spec_model, dialect=engine) == to_sql(clf.to_spec(), dialect=engine)


@pytest.mark.parametrize("engine", ["sqlite", "duckdb"])
def test_rows_predict_refuses_get_null(engine):
    res = glm("yg ~ bin(x1, 5) + C(g)", TRAIN).fit(lam=1e-3)
    new = NEW.head(4).copy()
    new["x1"] = new["x1"].astype(float)
    new.loc[0, "x1"] = np.nan  # no missing level
    new.loc[1, "g"] = "unseen"
    out = _run(res.to_sql(dialect=engine, keep=["z"]), new, engine)
    assert np.isnan(out[:2]).all()
    _close(out[2:], res.predict(new.iloc[2:]))


def test_the_query_reads_like_sql_and_refuses_what_it_cannot_write():
    res = glm("yb ~ bin(x1, 3) + C(g)", TRAIN, family="binomial").fit(lam=1e-3)
    sql = res.to_sql(table="loans", keep=["id"], name="p")
    assert sql.startswith('SELECT "id",') and sql.endswith("FROM loans")
    assert 'WHEN "x1" <= ' in sql and "WHEN \"g\" = 'it''s'" in sql  # right-closed; quoting
    assert 'AS "p"' in sql and "EXP" in sql
    pg = res.to_sql(dialect="postgresql")
    assert "DOUBLE PRECISION" not in pg  # no division in this model
    with pytest.raises(ValueError, match="dialect must be one of"):
        res.to_sql(dialect="oracle")
    with pytest.raises(ValueError, match="type must be 'response' or 'link'"):
        res.to_sql(type="class")
    odd = glm("yg ~ bin(x1, 3) + np.sin(z)", TRAIN).fit(lam=1e-3)
    with pytest.raises(ValueError, match=r"np.sin\(z\).*cannot be written in SQL"):
        odd.to_sql()
    arr = BinarsityGLM(n_bins=3, lam=1e-3).fit(TRAIN[["x1"]].to_numpy(), TRAIN["yg"])
    with pytest.raises(ValueError, match="fitted on an array"):
        to_sql(arr)
    with pytest.raises(TypeError, match="needs a fitted model"):
        to_sql(42)
    pg_div = glm("yg ~ bin(x1, 3) + I(k / 2)", TRAIN).fit(lam=1e-3).to_sql(dialect="postgresql")
    assert 'CAST("k" AS DOUBLE PRECISION)' in pg_div


def test_a_drop_model_guards_its_columns_explicitly():
    res = glm("yg ~ bin(x1, 5) + bin(x3, 4, missing='separate') + z", TRAIN,
              missing="drop").fit(lam=1e-3)  # fmt: skip
    sql = res.to_sql()
    assert sql.count("IS NULL THEN NULL") == 1
    assert '"x1" IS NULL OR "z" IS NULL THEN NULL' in sql  # x3 keeps its missing level
    new = NEW.copy()
    new.loc[[0, 5], "x1"], new.loc[[5, 7], "z"] = np.nan, np.nan
    expected = res.predict(new)
    assert np.array_equal(np.isnan(expected), new[["x1", "z"]].isna().any(axis=1))
    for engine in ("sqlite", "duckdb"):
        _close(_run(sql, new, engine), expected)
