"""SQL export (``to_sql``): the query, run in real databases, predicts what ``predict`` does.

Executed in SQLite (the standard library's), DuckDB and a real PostgreSQL server (the
session's throwaway server of ``conftest.postgres``: skipped where PostgreSQL is not
installed, required in CI) on the training rows and on new rows with out-of-range
values, values on the cut points and missing values, for every kind of term (bins with
and without a missing level, a bin of an expression, ``C()`` with a quote in a level,
linear and interaction terms, pair terms ``bin(a):bin(b)`` (also their unseen cells, where
the columns are correlated, and names that look like code), an integer division of an integer column, offset terms
and an offset column, by-group chains, ordered factors, monotone bins), every family
(gaussian, binomial, poisson, gamma, Tweedie, Cox's relative risk) and the estimators:
agreement to 1e-12. Rows that ``predict`` refuses (a missing value without a missing
level, an unseen level) give NULL.
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
for _f in (TRAIN, NEW):  # a positive severity (gamma) and a censored time (Cox)
    _f["sev"] = np.exp(0.5 * _f["yg"]) * (1.0 + _f["exposure"])
    _f["time"] = np.ceil(10 * _f["exposure"] * np.exp(-0.3 * _f["yg"]))  # tied times
    _f["event"] = (_f["off"] < 0.08).astype(float)
NEW.loc[0, "x1"], NEW.loc[1, "x1"], NEW.loc[2, "x 2"] = 1e6, -1e6, 1e-9  # out of range
ENGINES = ["sqlite", "duckdb", "postgresql"]

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
    # not bin(np.exp(z)): NumPy's exp and the databases' differ in the last bit for 5% of
    # the values, and a cut point is a training value, so such a row may change bins
    "math functions": ("yg ~ bin(z, 5) + np.exp(z) + np.sqrt(`x 2`) + np.log10(`x 2`)"
                       " + np.abs(z) + I(`x 2` ** 0.5)", "gaussian", {}),  # fmt: skip
    "gamma": ("sev ~ bin(x1, 6) + bin(`x 2`, 4) + C(h) + offset(np.log(exposure))", "gamma",
              {"missing": "separate"}),
    "tweedie": ("y ~ bin(x1, 6) + C(g) + z + offset(np.log(exposure))", ("tweedie", 1.5), {}),
    "cox relative risk": ("Surv(time, event) ~ bin(x1, 5) + C(g) + z", "cox", {}),
    "by-group chains": ("yb ~ bin(x1, 5):C(g) + bin(`x 2`, 4) + offset(off)", "binomial", {}),
    "by-group with main effects": ("yg ~ bin(x1, 5) * C(g)", "gaussian", {}),
    # a pair term (issue 25): a CASE on the bins of x1 of CASEs on the bins of x 2
    "pair term": ("yb ~ bin(x1, 4) + bin(`x 2`, 4) + bin(x1, 4):bin(np.log(`x 2`), 3)",
                  "binomial", {}),  # fmt: skip
    "pair term, missing='drop'": ("yg ~ bin(x3, 4):bin(x1, 3) + z", "gaussian",
                                  {"missing": "drop"}),  # fmt: skip
    "ordered and monotone": (
        "y ~ ordered(g) + bin(x1, 6, monotone='increasing') "
        "+ bin(`x 2`, 5, monotone='decreasing') + offset(np.log(exposure))", "poisson", {},
    ),
}


@pytest.fixture
def run(request):
    """``run(query, frame, engine)``: the query's last column, executed on table ``t``."""

    def run(query: str, frame: pd.DataFrame, engine: str, nan: tuple = ()) -> np.ndarray:
        """``nan``: float columns whose missing values are stored as NaN, not NULL
        (SQLite stores a NaN as NULL)."""
        if engine == "postgresql":
            rows = _run_postgres(request.getfixturevalue("postgres"), query, frame, nan)
        elif engine == "sqlite":
            con = sqlite3.connect(":memory:")
            frame.to_sql("t", con, index=False)
            rows = con.execute(query).fetchall()
        else:
            con = duckdb.connect()
            con.register("frame", frame)
            con.execute("CREATE TABLE t AS SELECT * FROM frame")
            for c in nan:
                con.execute(f'UPDATE t SET "{c}" = CAST(\'NaN\' AS DOUBLE) WHERE "{c}" IS NULL')
                assert con.execute(f'SELECT count(*) FROM t WHERE isnan("{c}")').fetchone()[0]
            rows = con.execute(query).fetchall()
        for r in rows:  # a double, as in the other engines (not NUMERIC: Decimal)
            assert r[-1] is None or isinstance(r[-1], float), (engine, type(r[-1]))
        return np.array([np.nan if r[-1] is None else r[-1] for r in rows], dtype=float)

    return run


def _pg_type(dtype) -> str:
    if pd.api.types.is_bool_dtype(dtype):
        return "BOOLEAN"
    if pd.api.types.is_integer_dtype(dtype):  # kept an integer: I(k / 2) must cast
        return "BIGINT"
    if pd.api.types.is_float_dtype(dtype):
        return "DOUBLE PRECISION"
    return "TEXT"


def _run_postgres(server, query: str, frame: pd.DataFrame, nan: tuple = ()) -> list:
    """The frame as a temporary table ``t`` (NaN/None as NULL, NaN in the ``nan``
    columns), then the query."""
    columns = ", ".join(
        '"' + str(c).replace('"', '""') + '" ' + _pg_type(frame[c].dtype) for c in frame.columns
    )
    stored = frame.astype(object).where(frame.notna(), None)
    for c in nan:  # a float NaN, which COPY writes as 'NaN' (the row order is kept)
        stored[c] = frame[c].astype(object)
    values = stored.to_numpy().tolist()
    with server.connect() as con:
        con.execute(f"CREATE TEMPORARY TABLE t ({columns})")
        with con.cursor().copy("COPY t FROM STDIN") as copy:
            for row in values:
                copy.write_row([v.item() if isinstance(v, np.generic) else v for v in row])
        for c in nan:
            assert con.execute(f'SELECT count(*) FROM t WHERE "{c}" = \'NaN\'').fetchone()[0]
        return con.execute(query).fetchall()


def _close(a, b) -> None:
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", sorted(CASES))
def test_the_query_predicts_what_predict_does(case, engine, run):
    formula, family, kw = CASES[case]
    res = glm(formula, TRAIN, family=family, **kw).fit(lam=2e-3)
    for frame in (TRAIN, NEW):
        for how in ("response", "link"):
            sql = res.to_sql(table="t", dialect=engine, type=how)
            _close(run(sql, frame, engine), res.predict(frame, type=how))


@pytest.mark.parametrize("engine", ENGINES)
def test_values_on_cut_points_and_estimators(engine, run):
    est = BinarsityGLM(family="poisson", n_bins=8, lam=1e-3).fit(TRAIN[["x1", "z"]], TRAIN["y"])
    edges = est.to_spec()["terms"][0]["edges"]
    new = pd.DataFrame({"x1": np.r_[edges, np.nextafter(edges, np.inf)], "z": 0.0})
    _close(run(to_sql(est, dialect=engine), new, engine), est.predict(new))
    clf = BinarsityClassifier(n_bins=6, lam=1e-3).fit(TRAIN[["x1", "z"]], TRAIN["yb"])
    _close(run(to_sql(clf, dialect=engine), NEW, engine), clf.predict_proba(NEW[["x1", "z"]])[:, 1])
    spec_model = from_spec(clf.to_spec())  # the description itself, or a rebuilt model
    assert to_sql(spec_model, dialect=engine) == to_sql(clf.to_spec(), dialect=engine)


@pytest.mark.parametrize("engine", ENGINES)
def test_rows_predict_refuses_get_null(engine, run):
    res = glm("yg ~ bin(x1, 5) + C(g)", TRAIN).fit(lam=1e-3)
    new = NEW.head(4).copy()
    new["x1"] = new["x1"].astype(float)
    new.loc[0, "x1"] = np.nan  # no missing level
    new.loc[1, "g"] = "unseen"
    out = run(res.to_sql(dialect=engine, keep=["z"]), new, engine)
    assert np.isnan(out[:2]).all()
    _close(out[2:], res.predict(new.iloc[2:]))


def test_the_query_reads_like_sql_and_refuses_what_it_cannot_write():
    res = glm("yb ~ bin(x1, 3) + C(g)", TRAIN, family="binomial").fit(lam=1e-3)
    sql = res.to_sql(table="loans", keep=["id"], name="p")
    # quoted, and in SQLite qualified by the table (an unknown name is then an error)
    assert sql.startswith('SELECT "loans"."id",') and sql.endswith('FROM "loans"')
    assert 'WHEN "loans"."x1" <= ' in sql and "WHEN \"loans\".\"g\" = 'it''s'" in sql
    assert 'AS "p"' in sql and "EXP" in sql
    pg = res.to_sql(dialect="postgresql")
    assert "DOUBLE PRECISION" not in pg  # no division in this model
    with pytest.raises(ValueError, match="dialect must be one of"):
        res.to_sql(dialect="oracle")
    with pytest.raises(ValueError, match="type must be 'response' or 'link'"):
        res.to_sql(type="class")
    odd = glm("yg ~ bin(x1, 3) + np.sin(z)", TRAIN).fit(lam=1e-3)
    with pytest.raises(ValueError, match=r"np.sin\(z\).*cannot be described"):
        odd.to_sql()  # refused where the description is written (to_spec)
    arr = BinarsityGLM(n_bins=3, lam=1e-3).fit(TRAIN[["x1"]].to_numpy(), TRAIN["yg"])
    with pytest.raises(ValueError, match="fitted on an array"):
        to_sql(arr)
    with pytest.raises(TypeError, match="needs a fitted model"):
        to_sql(42)
    pg_div = glm("yg ~ bin(x1, 3) + I(k / 2)", TRAIN).fit(lam=1e-3).to_sql(dialect="postgresql")
    assert 'CAST("k" AS DOUBLE PRECISION)' in pg_div


def test_a_drop_model_guards_its_columns_explicitly(run):
    res = glm("yg ~ bin(x1, 5) + bin(x3, 4, missing='separate') + z", TRAIN,
              missing="drop").fit(lam=1e-3)  # fmt: skip
    sql = res.to_sql()
    assert sql.count("IS NULL THEN NULL") == 1
    assert '"t"."x1" IS NULL OR "t"."z" IS NULL THEN NULL' in sql  # x3 keeps its missing level
    new = NEW.copy()
    new.loc[[0, 5], "x1"], new.loc[[5, 7], "z"] = np.nan, np.nan
    expected = res.predict(new)
    assert np.array_equal(np.isnan(expected), new[["x1", "z"]].isna().any(axis=1))
    for engine in ENGINES:
        _close(run(res.to_sql(dialect=engine), new, engine), expected)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("link", ["logit", "log", "cloglog", "loglog", "cox"])
def test_a_linear_predictor_beyond_the_double_range_saturates(engine, link, run):
    """η of ±1e4 from a linear term far outside its training range: the mean is 0, 1 or
    inf as in ``predict`` (PostgreSQL's EXP raised overflow/underflow, failing the
    whole query), and the rows around the bounds of the double range agree to 1e-12.
    Cox's relative risk is e^min(η, 700) as in ``predict`` (was e^η in every dialect)."""
    import statsmodels.api as sm

    links = sm.families.links
    family = {"logit": "binomial", "log": "poisson", "cox": "cox",
              "cloglog": sm.families.Binomial(links.CLogLog()),
              "loglog": sm.families.Binomial(links.LogLog())}[link]  # fmt: skip
    y = "Surv(time, event)" if link == "cox" else "yb"
    res = glm(f"{y} ~ bin(x1, 4) + z", TRAIN, family=family).fit(lam=1e-3)
    assert res.to_spec()["family"]["link"] == ("log" if link == "cox" else link)
    targets = np.array([-1e4, -800.0, -745.5, -744.0, -720.0, -709.9, -708.0, -6.7, -6.5, -1.0,
                        0.0, 6.5, 6.7, 699.0, 701.0, 708.0, 709.9, 720.0, 744.0, 745.5, 800.0,
                        1e4])  # fmt: skip
    new = pd.DataFrame({"x1": 0.0, "z": 0.0}, index=range(len(targets)))
    base, slope = res.predict(new.head(1), type="link")[0], res.to_spec()["terms"][-1]["coef"]
    new["z"] = (targets - base) / slope
    eta = res.predict(new, type="link")
    assert np.all(np.abs(eta - targets) < 1e-6 * np.maximum(1.0, np.abs(targets)))
    with np.errstate(over="ignore"):
        expected = res.predict(new)
    _close(run(res.to_sql(dialect=engine, table="t"), new, engine), expected)


@pytest.mark.parametrize("engine", ENGINES)
def test_math_outside_its_domain_gives_null_where_predict_refuses(engine, run):
    """log of a number ≤ 0, sqrt of a negative one, a fractional power of a negative
    one, a division by zero: ``predict`` refuses such a row (NaN or inf in a term), the
    query gives NULL for it (PostgreSQL raised an error failing the whole query; DuckDB
    gave NaN, -inf or inf, and a NaN inside bin() fell into the last bin)."""
    # a description holds one transform of a column: the shifted columns are data
    train = TRAIN.assign(u=TRAIN["x1"] + 4, v=TRAIN["z"] + 4, w=TRAIN["x1"] + 5)
    res = glm("yg ~ bin(np.log(u), 4) + np.sqrt(v) + I(v ** 0.5) "
              "+ I(k / w) + np.log10(`x 2`)", train).fit(lam=1e-3)  # fmt: skip
    new = NEW.head(7).copy()
    new["x1"] = [1.0, -4.0, -4.5, -5.0, 0.2, 0.3, 0.1]
    new["z"] = [0.1, 0.2, 0.3, 0.0, -5.0, 0.3, 0.2]
    new["x 2"] = [1.0, 1.0, 1.0, 1.0, 1.0, -1.0, 2.0]
    new = new.assign(u=new["x1"] + 4, v=new["z"] + 4, w=new["x1"] + 5)
    out = run(res.to_sql(dialect=engine), new, engine)
    for i in range(len(new)):
        try:
            with np.errstate(all="ignore"):
                expected = res.predict(new.iloc[[i]])
        except ValueError:
            expected = np.array([np.nan])
        _close(out[i : i + 1], expected)
    assert np.isnan(out[1:6]).all() and not np.isnan(out[[0, 6]]).any()


def test_without_postgresql_its_cases_skip_unless_required(monkeypatch):
    """The ``postgres`` fixture's policy: skip with the reason, fail when CI requires it."""
    import conftest

    monkeypatch.setenv("BINARSITY_POSTGRES_BINDIR", "/nonexistent")
    assert conftest._postgres_bindir() is None
    monkeypatch.delenv("BINARSITY_REQUIRE_POSTGRES", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no PostgreSQL.*BINARSITY_REQUIRE_POSTGRES"):
        conftest._missing("no PostgreSQL server binaries")
    monkeypatch.setenv("BINARSITY_REQUIRE_POSTGRES", "1")
    with pytest.raises(pytest.fail.Exception, match="BINARSITY_REQUIRE_POSTGRES=1 but no Postgre"):
        conftest._missing("no PostgreSQL server binaries")


def _expected_rows(res, new: pd.DataFrame) -> np.ndarray:
    """``predict`` row by row; NaN (the query's NULL) where it refuses the row."""
    out = np.empty(len(new))
    for i in range(len(new)):
        try:
            out[i] = res.predict(new.iloc[[i]])[0]
        except ValueError:
            out[i] = np.nan
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_boolean_columns_used_as_numbers(engine, run):
    """A boolean column in a linear term, an expression and an interaction (and binned):
    1/0 in the query, as in ``predict``. DuckDB and PostgreSQL refused ``double *
    boolean`` before ``column_kinds`` recorded the column's kind."""
    train, new = TRAIN.copy(), NEW.copy()
    for f in (train, new):
        f["flag"] = f["z"] > 0.2
    res = glm("yg ~ bin(x1, 5) + flag + I(flag * 2) + x1:flag + C(g)", train).fit(lam=1e-3)
    assert res.to_spec()["column_kinds"]["flag"] == "bool"
    for frame in (train, new):
        _close(run(res.to_sql(dialect=engine), frame, engine), res.predict(frame))
    est = BinarsityGLM(n_bins=5, lam=1e-3, linear_features=["flag"])
    est.fit(train[["x1", "flag"]], train["yg"])
    assert est.to_spec()["column_kinds"] == {"x1": "float", "flag": "bool"}
    _close(run(to_sql(est, dialect=engine), new, engine), est.predict(new[["x1", "flag"]]))
    binned = BinarsityGLM(n_bins=4, lam=1e-3).fit(train[["x1", "flag"]], train["yg"])
    _close(run(to_sql(binned, dialect=engine), new, engine), binned.predict(new[["x1", "flag"]]))
    old = res.to_spec()  # a description written before column_kinds: still reads
    del old["column_kinds"]
    assert np.array_equal(from_spec(old).predict(new), res.predict(new))
    if engine == "sqlite":  # SQLite stores booleans as 0/1: the old query ran there
        _close(run(to_sql(old, dialect=engine), new, engine), res.predict(new))


@pytest.mark.parametrize("engine", ENGINES)
def test_nan_stored_as_nan_is_missing(engine, run):
    """NaN in a double column, stored as NaN (not NULL) in PostgreSQL and DuckDB: the
    missing level where the term has one, NULL where ``predict`` refuses the row or
    gives NaN (``missing="drop"``). Both engines compare NaN equal to NaN and above every
    number, so such a row fell into the last bin (or gave NaN) before."""
    new = NEW.head(12).copy()
    new.loc[[0, 1, 2], "x3"] = np.nan  # missing level
    new.loc[3, "x1"], new.loc[4, "z"] = np.nan, np.nan  # no missing level: refused
    new.loc[5, "off"] = np.nan  # an offset column: refused
    new.loc[6, "x 2"] = np.nan  # inside an expression (log) of a binned term: refused
    nan = ("x1", "x3", "z", "off", "x 2")
    res = glm("yb ~ bin(x3, 6) + C(h) + bin(x1, 4) + z + bin(np.log(`x 2`), 4)", TRAIN,
              family="binomial", missing="separate", offset="off").fit(lam=2e-3)  # fmt: skip
    expected = _expected_rows(res, new)
    assert np.isnan(expected[3:7]).all() and not np.isnan(expected[:3]).any()
    _close(run(res.to_sql(dialect=engine), new, engine, nan=nan), expected)
    drop = glm("yg ~ bin(x1, 5) + bin(x3, 4, missing='separate') + z", TRAIN,
               missing="drop").fit(lam=1e-3)  # fmt: skip
    expected = drop.predict(new)
    assert np.isnan(expected[[3, 4]]).all() and not np.isnan(expected[:3]).any()
    _close(run(drop.to_sql(dialect=engine), new, engine, nan=nan), expected)
    est = BinarsityGLM(n_bins=5, lam=1e-3, missing="separate").fit(TRAIN[["x3", "z"]], TRAIN["yg"])
    # a float categorical (its NaN: the missing level) and a boolean as C() and bin()
    train, new2 = TRAIN.copy(), new.head(8).copy()
    for f in (train, new2):
        f["kf"], f["flag"] = (f["k"] % 3).astype(float), f["z"] > 0.2
    train.loc[:20, "kf"], new2.loc[[0, 1], "kf"] = np.nan, np.nan
    cat = glm("yg ~ bin(x1, 4) + C(kf) + C(flag) + bin(flag)", train,
              missing="separate").fit(lam=1e-3)  # fmt: skip
    expected = _expected_rows(cat, new2)
    assert not np.isnan(expected[:3]).any()
    _close(run(cat.to_sql(dialect=engine), new2, engine, nan=("kf",)), expected)
    expected = _expected_rows(est, new[["x3", "z"]])
    assert not np.isnan(expected[:3]).any()
    _close(run(to_sql(est, dialect=engine), new, engine, nan=nan), expected)


LEVELS = """levels=['say "b"', "it's", 'a']"""
QUOTED = {
    "ordered": f"yg ~ bin(x1, 5) + ordered(q, {LEVELS})",
    "C levels": f"yg ~ bin(x1, 5) + C(q, {LEVELS})",
    "Treatment": "yg ~ bin(x1, 5) + C(q, Treatment(\"it's\"))",
    "bin of C": f"yg ~ bin(x1, 5) + bin(C(q, {LEVELS}))",
    "by-group": f"yg ~ bin(x1, 4):C(q, {LEVELS}) + z",
}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", sorted(QUOTED))
def test_levels_with_quotes_in_formulas(case, engine, run):
    """Levels holding a quote written in the formula (``"it's"``, ``'say "b"'``): formulaic
    1.2 failed to evaluate such a stateful call ("unterminated string literal"). The
    term's name shows the levels as written; JSON, pickle, from_spec and the query (SQL
    quoting ``''``) predict what ``predict`` does."""
    import json
    import pickle

    train, new = TRAIN.copy(), NEW.copy()
    for f in (train, new):
        f["q"] = f["g"].replace({"b": 'say "b"'})
    res = glm(QUOTED[case], train).fit(lam=1e-3)
    spec = res.to_spec()
    term = next(t for t in spec["terms"] if t["kind"] != "bin" or t.get("by"))
    levels = term["by"]["levels"] if term.get("by") else term["levels"]
    assert set(levels) == {"a", "it's", 'say "b"'}
    if case != "Treatment":
        assert levels == ['say "b"', "it's", "a"]
        assert "_bslit" not in str(res.summary()) and ("it's" in term["name"] or case == "by-group")
    else:
        assert term["name"] == "C(q, Treatment(\"it's\"))" and term["reference"] == "it's"
    expected = res.predict(new)
    assert np.array_equal(from_spec(json.loads(json.dumps(spec))).predict(new), expected)
    assert np.array_equal(pickle.loads(pickle.dumps(res)).predict(new), expected)
    sql = res.to_sql(dialect=engine)
    assert "'it''s'" in sql and "'say \"b\"'" in sql
    _close(run(sql, new, engine), expected)


def test_a_refused_term_with_quoted_levels_is_named_as_written():
    train = TRAIN.assign(q=TRAIN["g"])
    with pytest.raises(ValueError, match=r"""x1:C\(q, levels=\['a', 'b', "it's"\]\)"""):
        glm("""yg ~ x1:C(q, levels=['a', 'b', "it's"])""", train)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_pair_term_with_unseen_cells_and_hostile_names(engine, run):
    from binarsity_stats.formula._names import AliasedFormula

    first, second = "a, `b`) + __import__('os')", 'q"uote\'s'
    rng = np.random.default_rng(7)
    n = 400
    a = rng.normal(size=n)
    b = a + rng.normal(scale=0.3, size=n)  # the off-diagonal corners stay empty
    train = pd.DataFrame({first: a, second: b})
    train["y"] = a + ((a > 0) & (b > 0.5)) + rng.normal(scale=0.3, size=n)
    # names with backticks reach a formula by alias only (as the package writes them)
    formula = AliasedFormula("y ~ bin(_bsc0_, 3) + bin(_bsc0_, 4):bin(_bsc1_, 4)",
                             {"_bsc0_": first, "_bsc1_": second})  # fmt: skip
    res = glm(formula, train).fit(lam=2e-3)
    table = [t for t in res.to_spec()["terms"] if t["kind"] == "pair"][0]["table"]
    assert any(v is None for row in table for v in row)
    new = pd.DataFrame({first: [3.0, -3.0, 0.0, 1e6, -1e6, np.nan],
                        second: [-3.0, 3.0, 0.0, -1e6, 1e6, 0.0]})  # fmt: skip
    new = pd.concat([train.drop(columns="y").head(40), new], ignore_index=True)
    expected = res.predict(new.iloc[:-1])
    got = run(res.to_sql(table="t", dialect=engine), new, engine)
    _close(got[:-1], expected)
    assert np.isnan(got[-1])  # predict refuses a missing axis value: NULL
