"""Names are data in every exporter: odd column and table names, levels, huge bin tables.

What is proved here, in SQLite, DuckDB and a real PostgreSQL (``conftest.postgres``):

* column names that need quoting or look like code — ``a-b``, ``log(x)``, a fullwidth
  ``ｚ`` beside a column ``z``, ``Select``, ``my col``, ``q"uote``, ``it's``, a newline —
  give the numbers ``predict`` gives, through ``from_spec``, the standalone scorer and
  the SQL query (on 01a56f7 the description stored ``a-b`` as text that every reader
  evaluated as ``a - b``, ``log(x)`` as the log of x, ``ｚ`` as ``z``);
* the table name is always quoted: ``t; DROP TABLE victim``, ``my table``, ``Select``
  and ``t"x`` are table names like any other, and the victim table survives;
* a bin table of 65,535 cut points runs (measured on a loaded 2-core machine: SQLite
  0.25 s, DuckDB 1.5 s, for 8 rows; a 65,535-branch CASE took SQLite 26 s and a
  binary-search CASE 207 s) and gives exactly the level ``predict`` gives, also for
  values on the cut points — only correctness is asserted, never time;
* the standalone scorer reads an empty-string level as a level (not missing) and, in
  CSV mode, ``3`` for a level stored as ``3.0``; SQL compares numeric levels as numbers.
"""

from __future__ import annotations

import csv
import io
import json
import sqlite3
import sys

import numpy as np
import pandas as pd
import pytest

from binarsity_stats import BinarsityGLM, from_spec, glm, to_sql
from binarsity_stats.design import standalone_scorer as scorer

duckdb = pytest.importorskip("duckdb")

ENGINES = ["sqlite", "duckdb", "postgresql"]
TABLES = ["t; DROP TABLE victim", "my table", "Select", 't"x']


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _sql_type(dtype) -> str:
    if pd.api.types.is_bool_dtype(dtype):
        return "BOOLEAN"
    if pd.api.types.is_integer_dtype(dtype):
        return "BIGINT"
    if pd.api.types.is_float_dtype(dtype):
        return "DOUBLE PRECISION"
    return "TEXT"


def _execute(engine: str, query: str, frame: pd.DataFrame, table: str, request) -> np.ndarray:
    """Create ``table`` (and a table ``victim``) holding the frame, run the query, check
    that ``victim`` survived; the query's last column."""
    columns = ", ".join(f"{_q(str(c))} {_sql_type(frame[c].dtype)}" for c in frame.columns)
    values = [[None if (isinstance(v, float) and np.isnan(v)) else
               (v.item() if isinstance(v, np.generic) else v) for v in row]
              for row in frame.astype(object).to_numpy().tolist()]  # fmt: skip
    marks = ", ".join(["?"] * frame.shape[1])
    if engine == "sqlite":
        con = sqlite3.connect(":memory:")
    elif engine == "duckdb":
        con = duckdb.connect()
    if engine in ("sqlite", "duckdb"):
        con.execute("CREATE TABLE victim (v INTEGER)")
        con.execute(f"CREATE TABLE {_q(table)} ({columns})")
        con.executemany(f"INSERT INTO {_q(table)} VALUES ({marks})", values)
        rows = con.execute(query).fetchall()
        assert con.execute("SELECT count(*) FROM victim").fetchone() == (0,)
    else:
        server = request.getfixturevalue("postgres")
        with server.connect() as con:
            con.execute("CREATE TEMPORARY TABLE victim (v INTEGER)")
            con.execute(f"CREATE TEMPORARY TABLE {_q(table)} ({columns})")
            with con.cursor().copy(f"COPY {_q(table)} FROM STDIN") as copy:
                for row in values:
                    copy.write_row(row)
            rows = con.execute(query).fetchall()
            assert con.execute("SELECT count(*) FROM victim").fetchone() == (0,)
    return np.array([np.nan if r[-1] is None else float(r[-1]) for r in rows])


def _odd_frame(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "a": rng.normal(size=n), "b": rng.normal(size=n) * 5, "x": rng.uniform(1, 3, n),
        "z": rng.normal(size=n) * 100, "ｚ": rng.normal(size=n),
        "a-b": rng.normal(size=n), "log(x)": rng.normal(size=n), "Select": rng.normal(size=n),
        "my col": rng.normal(size=n), 'q"uote': rng.normal(size=n), "new\nline": rng.normal(size=n),
        "it's": rng.choice(["p", "q'r", ""], size=n),
    })  # fmt: skip
    frame["y"] = (frame["a-b"] + frame["log(x)"] - frame["ｚ"] + frame["Select"] > 0) + 0.5 * (
        frame["it's"] == ""
    )
    frame["y"] += rng.normal(size=n) * 0.1
    return frame


TRAIN, NEW = _odd_frame(400, 0), _odd_frame(40, 1)
LINEAR = ["a-b", "log(x)", "ｚ", "my col", "new\nline"]
BINNED = ["Select", 'q"uote', "a"]
FEATURES = [*BINNED, "it's", *LINEAR]


@pytest.fixture(scope="module")
def fitted():
    est = BinarsityGLM(n_bins=5, lam=1e-3, linear_features=LINEAR, categorical_features=["it's"])
    return est.fit(TRAIN[FEATURES], TRAIN["y"])


def test_odd_column_names_are_columns_for_every_reader(fitted):
    spec = json.loads(json.dumps(fitted.to_spec()))
    expected = fitted.predict(NEW[FEATURES])
    linear = [t for t in spec["terms"] if t["kind"] == "linear"]
    assert [t["factors"] for t in linear] == [[{"column": c}] for c in LINEAR]
    np.testing.assert_array_equal(from_spec(spec).predict(NEW[FEATURES]), expected)
    rows = NEW[FEATURES].to_dict("records")
    np.testing.assert_allclose(scorer.predict(spec, rows), expected, rtol=1e-12, atol=1e-12)


def test_a_formula_with_backticked_names_exports_columns():
    res = glm("y ~ bin(a, 4) + `a-b` + `log(x)` + ｚ + bin(`Select`, 3)", TRAIN).fit(lam=1e-3)
    spec = res.to_spec()
    linear = [t["factors"] for t in spec["terms"] if t["kind"] == "linear"]
    assert linear == [[{"column": "a-b"}], [{"column": "log(x)"}], [{"column": "ｚ"}]]
    np.testing.assert_array_equal(from_spec(spec).predict(NEW), res.predict(NEW))
    for engine in ("sqlite", "duckdb"):
        out = _execute(engine, res.to_sql(table="t", dialect=engine), NEW, "t", None)
        np.testing.assert_allclose(out, res.predict(NEW), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("table", TABLES)
@pytest.mark.parametrize("engine", ENGINES)
def test_odd_names_and_tables_in_every_engine(fitted, engine, table, request):
    query = to_sql(fitted, table=table, dialect=engine, keep=["a"])
    out = _execute(engine, query, NEW[FEATURES], table, request)
    np.testing.assert_allclose(out, fitted.predict(NEW[FEATURES]), rtol=1e-12, atol=1e-12)


def test_names_sql_cannot_hold_are_refused(fitted):
    with pytest.raises(ValueError, match="NUL"):
        to_sql(fitted, table="t\x00x")
    with pytest.raises(ValueError, match="63 bytes"):
        to_sql(fitted, table="t" * 64, dialect="postgresql")
    with pytest.raises(ValueError, match="table must be a table name"):
        to_sql(fitted, table="")
    assert 'FROM "main"."t"' in to_sql(fitted, table=("main", "t"))


def test_an_unknown_column_is_an_error_in_sqlite_not_a_string():
    """SQLite reads a double-quoted unknown name as a string literal; qualified by the
    table, a column the table lacks is an error (on 01a56f7 the query ran, reading the
    name as text: 0 for the term)."""
    res = glm("y ~ bin(a, 4) + `a-b`", TRAIN).fit(lam=1e-3)
    con = sqlite3.connect(":memory:")
    NEW.drop(columns=["a-b"]).to_sql("t", con, index=False)
    with pytest.raises(sqlite3.OperationalError, match="no such column"):
        con.execute(res.to_sql(table="t")).fetchall()


def _big_spec(k: int, seed: int) -> dict:
    """k cut points (a block holds at most 65,536 levels: the missing level below that)."""
    rng = np.random.default_rng(seed)
    edges = np.unique(rng.uniform(-1, 1, k))
    missing = bool(edges.size < 65535)
    return {
        "format": "binarsity_stats.model_spec", "format_version": 2,
        "family": {"name": "gaussian", "link": "identity"}, "intercept": 0.5,
        "terms": [{"kind": "bin", "name": "bin(x)", "column": "x", "input": {"column": "x"},
                   "edges": edges.tolist(), "missing_level": missing,
                   "theta": rng.normal(size=edges.size + 1 + missing).tolist()}],
        "offset": {"terms": []},
    }  # fmt: skip


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("k", [65535, 1000, 40])
def test_large_bin_tables_give_predicts_levels(engine, k, request):
    """65,535 cuts (the text-constant search), 1,000 (the binary-search CASE) and 40:
    every row, including values on the cut points and next to them and a missing one,
    gets exactly predict's level."""
    spec = _big_spec(k, 3)
    edges = np.asarray(spec["terms"][0]["edges"])
    x = np.r_[-2.0, 2.0, edges[[0, 1, k // 2, -1]], np.nextafter(edges[[0, k // 3]], 9)]
    if spec["terms"][0]["missing_level"]:
        x = np.r_[x, np.nan]
    frame = pd.DataFrame({"x": x})
    expected = from_spec(spec).predict(frame)
    out = _execute(engine, to_sql(spec, dialect=engine), frame, "t", request)
    np.testing.assert_array_equal(out, expected)  # θ + 0.5: exact in doubles either way
    assert np.isfinite(expected).all()


def test_empty_string_and_numeric_levels():
    """``""`` is a level for the scorer as for predict; a CSV's ``3`` is the level 3.0 in
    the scorer and in SQL (on 01a56f7 the scorer read ``""`` as missing — 0.667 against
    predict's 2.0 — and refused ``3``)."""
    rng = np.random.default_rng(5)
    train = pd.DataFrame({"g": rng.choice(["", "a", "b"], 300),
                          "k": rng.choice([1.0, 3.0, 2.5], 300)})  # fmt: skip
    y = 2.0 * (train["g"] == "") + (train["k"] == 3.0) + rng.normal(size=300) * 0.01
    est = BinarsityGLM(lam=1e-4, categorical_features=["g", "k"]).fit(train, y)
    spec = est.to_spec()
    new = pd.DataFrame({"g": ["", "a", "b", ""], "k": [3.0, 1.0, 2.5, 1.0]})
    expected = est.predict(new)
    np.testing.assert_allclose(scorer.predict(spec, new.to_dict("records")), expected,
                               rtol=1e-12, atol=1e-12)  # fmt: skip
    text = io.StringIO()
    csv.writer(text).writerows([["g", "k"], ["a", "3"], ["b", "1"], ["a", "2.5"]])
    rows = list(csv.DictReader(io.StringIO(text.getvalue())))
    as_numbers = pd.DataFrame({"g": ["a", "b", "a"], "k": [3.0, 1.0, 2.5]})
    np.testing.assert_allclose(scorer.predict(spec, rows), est.predict(as_numbers),
                               rtol=1e-12, atol=1e-12)  # fmt: skip
    con = sqlite3.connect(":memory:")  # k stored as text, as a CSV import leaves it
    con.execute('CREATE TABLE t ("g" TEXT, "k" TEXT)')
    con.executemany("INSERT INTO t VALUES (?, ?)", [("a", "3"), ("b", "1"), ("", "1")])
    out = [r[0] for r in con.execute(to_sql(spec, table="t")).fetchall()]
    as_numbers = pd.DataFrame({"g": ["a", "b", ""], "k": [3.0, 1.0, 1.0]})
    np.testing.assert_allclose(out, est.predict(as_numbers), rtol=1e-12, atol=1e-12)


def test_the_scorer_script_reads_odd_names_from_csv(fitted, tmp_path):
    """The CSV round trip of the odd names through the scorer's command line."""
    import shutil
    import subprocess

    shutil.copy(scorer.__file__, tmp_path / "standalone_scorer.py")
    (tmp_path / "model.json").write_text(json.dumps(fitted.to_spec()))
    # an empty CSV field is a missing value (as pandas.read_csv reads it): the rows with
    # the level "" of it's are left out (the scorer would refuse a missing level)
    rows = NEW.loc[NEW["it's"] != "", FEATURES]
    rows.to_csv(tmp_path / "rows.csv", index=False)
    out = subprocess.run(
        [sys.executable, "-I", "-S", "standalone_scorer.py", "model.json", "rows.csv"],
        cwd=tmp_path, capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    values = [float(r["prediction"]) for r in csv.DictReader(out.stdout.splitlines())]
    np.testing.assert_allclose(values, fitted.predict(rows), rtol=1e-12, atol=1e-12)
