"""A model description is data, never code: hostile or corrupt descriptions are refused.

What is proved here, for every reader of a description — ``from_spec(spec).predict``,
``scorecard(spec).score``, the standalone scorer (module function and command line) and
``to_sql`` (the query then executed in SQLite and DuckDB):

* descriptions carrying Python in their expression fields (``format_version`` 1's
  ``expr``, ``factors`` and offset terms: ``I(0*__import__('os').system(...) + z)``),
  the exponent tower ``I(z * 2 ** 2 ** 40)`` that hung ``predict`` in formulaic, an
  unknown transform, and a payload as a *column name* run nothing: no file is created
  and no process is started (a ``sys.addaudithook`` hook records ``os.system``,
  ``subprocess.Popen``, ``os.exec*``, ``os.posix_spawn``, ``os.spawn*`` and
  ``os.fork``), and the reader raises a ``ValueError`` (for a payload column name, the
  column is simply missing; SQL quotes it as an identifier the database does not know);
* corrupt descriptions — NaN or infinite coefficients, NaN or unsorted cut points, a
  string intercept, a missing key, a wrong θ length, 1e6 cut points, an integer too
  large for a double, deep nesting — get a ``ValueError`` naming the field path, never
  ``KeyError``/``RecursionError``/``OverflowError`` or NaN predictions.

On 01a56f7 the payloads ran (``from_spec(spec).predict(df)`` created the file) and the
corrupt descriptions were accepted or failed with raw exceptions.
"""

from __future__ import annotations

import json
import math
import sqlite3
import sys
import time

import numpy as np
import pandas as pd
import pytest

from binarsity_stats import from_spec, scorecard, to_sql
from binarsity_stats.design import standalone_scorer as scorer

duckdb = pytest.importorskip("duckdb")

#: Audit events that start a process
_PROCESS_EVENTS = ("os.system", "subprocess.Popen", "os.posix_spawn", "os.fork")
_PROCESS_PREFIXES = ("os.exec", "os.spawn")
_EVENTS: list[str] = []
_HOOK_INSTALLED = False


def _hook(event: str, args: tuple) -> None:
    if event in _PROCESS_EVENTS or event.startswith(_PROCESS_PREFIXES):
        _EVENTS.append(event)


@pytest.fixture
def audit():
    """The recorded process events of the test (an audit hook cannot be removed: it is
    installed once per interpreter)."""
    global _HOOK_INSTALLED
    if not _HOOK_INSTALLED:
        sys.addaudithook(_hook)
        _HOOK_INSTALLED = True
    _EVENTS.clear()
    yield _EVENTS
    _EVENTS.clear()


ROWS = pd.DataFrame({"x": [0.1, 0.5, 2.0], "z": [1.0, 2.0, 3.0], "g": ["a", "b", "a"]})


def _base(version: int = 2) -> dict:
    """A valid binomial description reading x (binned), g and z."""
    spec = {
        "format": "binarsity_stats.model_spec", "format_version": version,
        "family": {"name": "binomial", "link": "logit"}, "intercept": 0.25,
        "fit_intercept": True, "lam": 0.01, "response": {"name": "y"},
        "terms": [
            {"kind": "bin", "name": "bin(x, 3)", "column": "x", "input": {"column": "x"},
             "edges": [0.2, 1.0], "intervals": "right-closed", "missing_level": False,
             "penalty": "tv", "theta": [-0.5, 0.0, 0.5]},
            {"kind": "categorical", "name": "C(g)", "column": "g", "levels": ["a", "b"],
             "missing_level": False, "unseen": "error", "penalty": "free",
             "theta": [0.1, -0.1]},
            {"kind": "linear", "name": "z", "factors": [{"column": "z"}], "coef": 0.3},
        ],
        "offset": {"terms": [], "column": None},
    }  # fmt: skip
    if version == 1:  # expressions as text, as version 1 wrote them
        spec["terms"][0]["expr"] = spec["terms"][0].pop("input")["column"]
        spec["terms"][1]["expr"] = "g"
        spec["terms"][2]["factors"] = ["z"]
    return spec


def _payload(path) -> str:
    return f"__import__('os').system('touch {path}')"


def _hostile(case: str, path) -> dict:
    """A description that carries code (or a hang) where data belongs."""
    code = _payload(path)
    spec = _base(1)
    if case == "v1 bin expr":
        spec["terms"][0]["expr"] = f"I(0*{code} + x)"
    elif case == "v1 linear factor":
        spec["terms"][2]["factors"] = [f"I(0*{code} + z)"]
    elif case == "v1 offset term":
        spec["offset"]["terms"] = [f"I(0*{code} + z)"]
    elif case == "v1 exponent tower":
        spec["terms"][2]["factors"] = ["I(z * 2 ** 2 ** 40)"]
    elif case == "v1 attribute call":
        spec["terms"][2]["factors"] = [f"np.log({code})"]
    else:
        spec = _base(2)
        if case == "v2 unknown transform":
            spec["terms"][2]["factors"] = [{"column": "z", "transform": "eval"}]
        elif case == "v2 expression in an input":
            spec["terms"][0]["input"] = {"column": "x", "transform": code}
        elif case == "v2 statsmodels family name":
            spec["family"]["statsmodels"] = {"family": "__import__", "link": "os",
                                             "params": {}}  # fmt: skip
        elif case == "v2 payload as a column name":
            spec["terms"][2]["factors"] = [{"column": f"I(0*{code} + z)"}]
        else:
            raise AssertionError(case)
    return spec


HOSTILE = [
    "v1 bin expr", "v1 linear factor", "v1 offset term", "v1 exponent tower",
    "v1 attribute call", "v2 unknown transform", "v2 expression in an input",
    "v2 statsmodels family name", "v2 payload as a column name",
]  # fmt: skip
READERS = ["from_spec", "scorecard", "scorer", "scorer CLI", "to_sql sqlite", "to_sql duckdb"]


def _read(reader: str, spec: dict, tmp_path) -> None:
    """Use the description as a user would; whatever it raises propagates."""
    if reader == "from_spec":
        from_spec(spec).predict(ROWS)
    elif reader == "scorecard":
        scorecard(spec).score(ROWS)
    elif reader == "scorer":
        scorer.predict(spec, ROWS.to_dict("records"))
    elif reader == "scorer CLI":
        (tmp_path / "model.json").write_text(json.dumps(spec))
        ROWS.to_csv(tmp_path / "rows.csv", index=False)
        code = scorer.main([str(tmp_path / "model.json"), str(tmp_path / "rows.csv")])
        if code != 0:
            raise ValueError(f"the scorer exited with {code}")
    else:
        dialect = reader.split()[1]
        query = to_sql(spec, dialect=dialect)
        if dialect == "sqlite":
            con = sqlite3.connect(":memory:")
            ROWS.to_sql("t", con, index=False)
            con.execute(query).fetchall()
        else:
            con = duckdb.connect()
            con.register("frame", ROWS)
            con.execute("CREATE TABLE t AS SELECT * FROM frame")
            con.execute(query).fetchall()


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("case", HOSTILE)
def test_a_hostile_description_runs_nothing(case, reader, tmp_path, audit, capsys):
    sentinel = tmp_path / "pwned"
    spec = _hostile(case, sentinel)
    column_name = case == "v2 payload as a column name"
    start = time.perf_counter()
    # a payload named as a column is a column the data (or the table) lacks: the
    # readers say so, SQL quotes it as an identifier the database does not know
    expected = (ValueError, sqlite3.OperationalError, duckdb.Error) if column_name else ValueError
    with pytest.raises(expected) as info:
        _read(reader, spec, tmp_path)
    assert time.perf_counter() - start < 60  # the exponent tower is never evaluated
    assert not sentinel.exists()
    assert audit == []
    if column_name and reader.startswith("to_sql"):
        assert "__import__" in str(info.value)  # the unknown column, named as it is
    message = str(info.value) + capsys.readouterr().err
    assert "Traceback" not in message


def _corrupt(case: str) -> tuple[dict | str, str]:
    """A corrupt description and the field path its refusal must name."""
    spec = _base(2)
    bin_, cat, lin = spec["terms"]
    if case == "NaN coefficient":
        lin["coef"] = math.nan
        return spec, r"terms\[2\]\.coef"
    if case == "infinite theta":
        bin_["theta"][1] = math.inf
        return spec, r"terms\[0\]\.theta\[1\]"
    if case == "NaN edge":
        bin_["edges"][0] = math.nan
        return spec, r"terms\[0\]\.edges\[0\]"
    if case == "unsorted edges":
        bin_["edges"] = [1.0, 0.2]
        return spec, r"terms\[0\]\.edges.*increase strictly"
    if case == "tied edges":
        bin_["edges"] = [0.2, 0.2]
        return spec, r"terms\[0\]\.edges.*increase strictly"
    if case == "string intercept":
        spec["intercept"] = "0.25"
        return spec, r"intercept: must be a finite number"
    if case == "boolean coefficient":
        lin["coef"] = True
        return spec, r"terms\[2\]\.coef"
    if case == "integer beyond a double":
        lin["coef"] = 10**400
        return spec, r"terms\[2\]\.coef"
    if case == "missing intercept":
        del spec["intercept"]
        return spec, r"has no 'intercept'"
    if case == "missing edges":
        del bin_["edges"]
        return spec, r"terms\[0\].*has no 'edges'"
    if case == "wrong theta length":
        cat["theta"] = [0.1]
        return spec, r"terms\[1\]\.theta.*theta needs 2 values"
    if case == "1e6 edges":
        bin_["edges"] = np.linspace(0, 1, 10**6).tolist()
        bin_["theta"] = [0.0] * (10**6 + 1)
        return spec, r"terms\[0\]\.edges: has 1000000 items; at most 65535"
    if case == "deep nesting (unknown field)":
        deep: list = []
        for _ in range(5000):
            deep = [deep]
        spec["extra"] = deep
        return spec, r"unknown field 'extra'"
    if case == "terms not a list":
        spec["terms"] = {"kind": "bin"}
        return spec, r"terms: must be a list"
    if case == "term not an object":
        spec["terms"][0] = "bin(x)"
        return spec, r"terms\[0\]: must be an object"
    if case == "factor not an input":
        lin["factors"] = ["z"]
        return spec, r"terms\[2\]\.factors\[0\]"
    if case == "reference not a level":
        cat["reference"] = "zzz"
        return spec, r"terms\[1\]\.reference"
    if case == "unknown family":
        spec["family"] = {"name": "nonsense", "link": "logit"}
        return spec, r"family"
    if case == "huge string":
        bin_["name"] = "x" * 100_000
        return spec, r"terms\[0\]\.name: is longer than 1000"
    raise AssertionError(case)


CORRUPT = [
    "NaN coefficient", "infinite theta", "NaN edge", "unsorted edges", "tied edges",
    "string intercept", "boolean coefficient", "integer beyond a double",
    "missing intercept", "missing edges", "wrong theta length", "1e6 edges",
    "deep nesting (unknown field)", "terms not a list",
    "term not an object", "factor not an input", "reference not a level",
    "unknown family", "huge string",
]  # fmt: skip


@pytest.mark.parametrize("reader", ["from_spec", "scorecard", "scorer", "to_sql sqlite"])
@pytest.mark.parametrize("case", CORRUPT)
def test_a_corrupt_description_is_refused_naming_the_field(case, reader, tmp_path):
    spec, field = _corrupt(case)
    if case == "unknown family" and reader == "scorer":
        # the scorer knows no families, only links: the link is valid, so it scores
        scorer.predict(spec, ROWS.to_dict("records"))
        return
    with pytest.raises(ValueError, match=field):
        _read(reader, spec, tmp_path)  # a fresh description per case


def test_deeply_nested_json_text_is_refused(tmp_path, capsys):
    text = "[" * 100_000 + "]" * 100_000
    with pytest.raises(ValueError, match="nested too deeply"):
        from_spec(text)
    (tmp_path / "model.json").write_text(text)
    ROWS.to_csv(tmp_path / "rows.csv", index=False)
    assert scorer.main([str(tmp_path / "model.json"), str(tmp_path / "rows.csv")]) == 2
    assert "nested too deeply" in capsys.readouterr().err


def test_the_scorer_cli_refuses_a_corrupt_description_in_one_line(tmp_path, capsys):
    spec, _ = _corrupt("NaN edge")
    (tmp_path / "model.json").write_text(json.dumps(spec))  # json writes NaN
    ROWS.to_csv(tmp_path / "rows.csv", index=False)
    assert scorer.main([str(tmp_path / "model.json"), str(tmp_path / "rows.csv")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "terms[0].edges[0]" in err


def test_a_valid_description_still_predicts_after_validation():
    """The base description of this file is valid: the refusals above are the mutations'."""
    spec = _base(2)
    p = from_spec(spec).predict(ROWS, type="link")
    expected = 0.25 + np.array([-0.5, 0.0, 0.5]) + np.array([0.1, -0.1, 0.1]) + 0.3 * ROWS["z"]
    np.testing.assert_allclose(p, expected, rtol=1e-15, atol=1e-15)
    np.testing.assert_allclose(scorer.predict(spec, ROWS.to_dict("records"), type="link"),
                               expected, rtol=1e-15, atol=1e-15)  # fmt: skip
    np.testing.assert_allclose(
        from_spec(_base(1)).predict(ROWS, type="link"), expected, rtol=1e-15, atol=1e-15
    )  # version 1 is translated
