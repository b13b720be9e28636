"""Column names are data, never code.

A column name reaches the formula layer through ``y ~ .`` and the command line's
``fit "y ~ ." --data file.csv`` (a CSV header); the estimators' inspection methods
(``summary``/``results``/``report``) build their results on the estimator's blocks and
write no formula at all (a name is only a key of the data and a label). None of them
may hand a name to a parser: the formulas the package writes name such columns by
aliases of its own (``_formula.AliasedFormula``). Hostile names below would run a command if pasted into
formula text (they did before: ``x`) + I(0*__import__('os').system(...)) + bin(`x``);
each case runs in an empty working directory and checks that no file appears there
and that no process is started (an audit hook, PEP 578, watches for it).

Awkward but honest names (spaces, quotes, newlines, ``log(x)``, ``a-b``, a fullwidth
``ｚ`` next to ``z``) must each read their own column.
"""

from __future__ import annotations

import io
import os
import pickle
import platform
import sys
import threading
import warnings

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import binarsity_stats as bs
from binarsity_stats import BinarsityClassifier, BinarsityGLM, BinarsityGLMCV
from binarsity_stats.design._binarizer import Binarizer

# --------------------------------------------------------------------------------------
# The watch: audit events of a process being started, recorded while a test runs.
# Audit hooks cannot be removed, so one hook is installed per session and does nothing
# unless the flag is set (only in the thread that set it).
# --------------------------------------------------------------------------------------

_SPAWN_EVENTS = ("os.system", "subprocess.Popen", "os.posix_spawn", "os.spawn", "os.exec",
                 "os.startfile", "pty.spawn")  # fmt: skip
_WATCH = threading.local()
_SEEN: list[tuple[str, str]] = []


def _audit(event: str, args: tuple) -> None:
    if getattr(_WATCH, "on", False) and event.startswith(_SPAWN_EVENTS):
        _SEEN.append((event, repr(args)[:200]))


if not getattr(sys, "_binarsity_untrusted_names_hook", False):
    sys.addaudithook(_audit)
    sys._binarsity_untrusted_names_hook = True


@pytest.fixture
def watched(tmp_path, monkeypatch):
    """An empty working directory and the spawn watch, on for the test's body."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot  # noqa: F401 - font cache built before watching

    platform.processor()  # the report's environment line: `uname -p`, run once and cached

    monkeypatch.chdir(tmp_path)
    _SEEN.clear()
    _WATCH.on = True
    try:
        yield tmp_path
    finally:
        _WATCH.on = False
    assert _SEEN == [], f"a process was started: {_SEEN}"
    assert sorted(os.listdir(tmp_path)) == sorted(_allowed(tmp_path)), os.listdir(tmp_path)


def _allowed(tmp_path) -> list[str]:
    return [f for f in os.listdir(tmp_path) if f in ("data.csv", "report.html")]


#: Each would touch the file "pwned" (or start a process) if pasted into formula text:
#: breaking out of backticks, of a call, and through a newline.
HOSTILE = [
    "x`) + I(0*__import__('os').system('touch pwned')) + bin(`x",
    "x` + I(0*__import__('subprocess').Popen(['touch', 'pwned']).wait()) + `x",
    "x`)\n+ I(0*__import__('os').system('touch pwned')) + bin(`x",
    "x`):C(`x`) + I(0*open('pwned', 'w').close() or 0) + bin(`x",
]


def _frame(name: str, n: int = 240, seed: int = 0) -> pd.DataFrame:
    """A column 'x', the hostile one, a categorical and a binary response."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    h = rng.normal(size=n)
    df = pd.DataFrame({"x": x, name: h, "g": rng.choice(["a", "b", "c"], n)})
    df["y"] = (h + 0.5 * x + rng.normal(size=n) > 0).astype(int)
    return df


def _edges(values: np.ndarray, n_bins: int) -> np.ndarray:
    """Cut points the Binarizer learns from one column on its own."""
    return Binarizer(n_bins=n_bins).fit(values.reshape(-1, 1)).edges_[0]


@pytest.mark.parametrize("name", HOSTILE)
def test_dot_formula_reads_a_hostile_name_as_a_column(watched, name):
    df = _frame(name)
    res = bs.glm("y ~ .", df, family="binomial", n_bins=5).fit()
    blocks = {b.column: b for b in res.model.spec.blocks}
    assert set(blocks) == {"x", name, "g"}
    assert_allclose(blocks[name].edges, _edges(df[name].to_numpy(), 5), rtol=0, atol=0)
    text = str(res.summary())
    assert "_bsc" not in text and "_bs0" not in text  # no alias leaks into a label
    # replayed on new rows and after a round trip through pickle, still no code
    back = pickle.loads(pickle.dumps(res))
    assert_allclose(back.predict(df.iloc[:20]), res.fittedvalues[:20], rtol=1e-12)


@pytest.mark.parametrize("name", HOSTILE)
def test_cli_fit_of_a_csv_with_a_hostile_header_runs_nothing(watched, name):
    from binarsity_stats._cli import main

    _frame(name).to_csv(watched / "data.csv", index=False)
    out = io.StringIO()
    code = main(["fit", "y ~ .", "--data", "data.csv", "--family", "binomial"], out=out)
    assert code == 0
    assert "Binarsity GLM Results" in out.getvalue()


@pytest.mark.parametrize("name", HOSTILE)
@pytest.mark.parametrize("method", ["summary", "results", "report"])
def test_estimator_inspection_with_a_hostile_column_name_runs_nothing(watched, name, method):
    df = _frame(name)
    X, y = df.drop(columns="y"), df["y"]
    est = BinarsityClassifier(n_bins=5, categorical_features=["g"]).fit(X, y)
    if method == "summary":
        out = str(est.summary(X, y))
    elif method == "results":
        res = est.results(X, y)
        assert [b.column for b in res.model.spec.blocks] == ["x", name, "g"]
        assert_allclose(res.predict(X), est.predict_proba(X)[:, 1], rtol=1e-9)
        back = pickle.loads(pickle.dumps(res))  # the aliases travel with the formula
        assert_allclose(back.predict(X), res.predict(X), rtol=1e-12)
        out = str(res.summary())
    else:
        path = watched / "report.html"
        est.report(X, y, path, new=X.iloc[:60], new_y=y.iloc[:60])
        out = path.read_text(encoding="utf-8")
    assert "_bsc" not in out
    assert "Binarsity GLM" in out


@pytest.mark.parametrize("name", HOSTILE[:2])
def test_linear_feature_with_a_hostile_name_runs_nothing(watched, name):
    df = _frame(name)
    X, y = df.drop(columns=["y", "g"]), df["y"].astype(float)
    est = BinarsityGLM(n_bins=5, linear_features=[name]).fit(X, y)
    res = est.results(X, y)
    assert res.model.spec.dense_columns == [name]
    assert_allclose(res.fittedvalues, est.predict(X), rtol=1e-9, atol=1e-12)


# --------------------------------------------------------------------------------------
# Awkward names read their own column
# --------------------------------------------------------------------------------------

AWKWARD = ["a b", "a-b", "log(x)", "it's", 'q"x', "t`x", "l1\nl2", "Select", "class", "ｚ",
           "z", "âge", "_bsc0_", "a\\1"]  # fmt: skip


def _awkward_frame(n: int = 300) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    # each column its own scale: a column read in place of another has other cut points
    df = pd.DataFrame({c: (k + 1) * rng.normal(size=n) + 10 * k for k, c in enumerate(AWKWARD)})
    df["y"] = df["ｚ"] / 10 + rng.normal(size=n)
    return df


def test_dot_formula_reads_each_awkward_name_as_its_own_column():
    df = _awkward_frame()
    res = bs.glm("y ~ .", df, n_bins=4).fit(lam=0.05)
    blocks = res.model.spec.blocks
    assert [b.column for b in blocks] == AWKWARD
    for b in blocks:  # 'a b' and 'a-b' were one column, so were 'ｚ' and 'z'
        assert_allclose(b.edges, _edges(df[b.column].to_numpy(), 4), rtol=0, atol=0)
    labels = [b.term for b in blocks]
    assert len(set(labels)) == len(labels)
    assert labels[AWKWARD.index("a b")] == "bin(`a b`)"
    assert labels[AWKWARD.index("Select")] == "bin(Select)"
    assert labels[AWKWARD.index("ｚ")] == "bin(ｚ)" and labels[AWKWARD.index("z")] == "bin(z)"
    assert labels[AWKWARD.index("t`x")] == "bin(`t\\`x`)"
    assert labels[AWKWARD.index("l1\nl2")] == "bin(`l1\\nl2`)"
    assert_allclose(res.predict(df.drop(columns="y")), res.fittedvalues, rtol=1e-12)


def test_dot_minus_an_awkward_name_leaves_that_column_out():
    df = _awkward_frame()
    res = bs.glm("y ~ . - `a b` - `ｚ`", df, n_bins=4).fit(lam=0.05)
    columns = [b.column for b in res.model.spec.blocks]
    assert "a b" not in columns and "ｚ" not in columns
    assert "a-b" in columns and "z" in columns


def test_backticked_fullwidth_and_punctuated_names_in_a_written_formula():
    df = _awkward_frame()
    res = bs.glm("y ~ bin(`ｚ`, 4) + bin(`a-b`, 4) + `a b`", df).fit(lam=0.05)
    b0, b1 = res.model.spec.blocks
    assert (b0.column, b1.column) == ("ｚ", "a-b")
    assert_allclose(b0.edges, _edges(df["ｚ"].to_numpy(), 4), rtol=0, atol=0)
    assert_allclose(b1.edges, _edges(df["a-b"].to_numpy(), 4), rtol=0, atol=0)
    assert res.model.spec.dense_columns == ["a b"]
    assert_allclose(res.model.design.dense[:, 0], df["a b"].to_numpy(), rtol=0, atol=0)


@pytest.mark.parametrize("Est", [BinarsityGLM, BinarsityGLMCV])
def test_estimator_results_read_each_awkward_name_as_its_own_column(Est):
    df = _awkward_frame()
    X, y = df.drop(columns="y"), df["y"]
    linear = ["a-b", "log(x)", "ｚ"]  # in column order
    kw = {"cv": 3} if Est is BinarsityGLMCV else {"lam": 0.05}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = Est(n_bins=4, linear_features=linear, **kw).fit(X, y)
    res = est.results(X, y)
    binned = [c for c in AWKWARD if c not in linear]
    assert [b.column for b in res.model.spec.blocks] == binned
    assert res.model.spec.dense_columns == linear
    dense = res.model.design.dense
    for j, c in enumerate(linear):  # the column itself, not log(x) nor z
        assert_allclose(dense[:, j], df[c].to_numpy(), rtol=0, atol=0)
    assert_allclose(res.fittedvalues, est.predict(X), rtol=1e-9, atol=1e-9)
    text = str(res.summary())
    assert "_bsc1_" not in text and "bin(_bsc0_)" in text  # the column named _bsc0_ only


def test_integer_columns_in_an_expression_do_not_wrap_around():
    rng = np.random.default_rng(5)
    n = 200
    big = rng.integers(1, 5, n).astype(np.int64) * 2**40
    df = pd.DataFrame({"a": big, "b": big, "g": rng.integers(0, 3, n), "x": rng.normal(size=n)})
    df["y"] = rng.normal(size=n)
    res = bs.glm("y ~ bin(x, 4) + I(a * b) + C(g)", df).fit(lam=0.1)
    exact = big.astype(np.float64) ** 2  # < 2**87: float64 is within 1 ulp
    assert_allclose(res.model.design.dense[:, 0], exact, rtol=4e-16)
    new = df.iloc[:30].reset_index(drop=True)
    assert_allclose(res.model.spec.transform(new).dense[:, 0], exact[:30], rtol=4e-16)
    # a column read as categories keeps its integer levels
    assert res.model.spec.blocks[1].levels == (0, 1, 2)
    assert "C(g)[1]" in res.params.index


def test_dask_frame_reads_awkward_names_and_integer_expressions_alike():
    dd = pytest.importorskip("dask.dataframe")
    rng = np.random.default_rng(6)
    n = 300
    big = rng.integers(1, 5, n).astype(np.int64) * 2**40
    df = pd.DataFrame({"a b": rng.normal(size=n), "a-b": 5 + 3 * rng.normal(size=n),
                       "ｚ": rng.normal(size=n), "z": 2 * rng.normal(size=n),
                       "k": big})  # fmt: skip
    df["y"] = rng.normal(size=n)
    ddf = dd.from_pandas(df, npartitions=3)
    formula = "y ~ bin(`a b`, 4) + bin(`a-b`, 4) + bin(`ｚ`, 4) + bin(z, 4) + I(k * k)"
    lazy, eager = bs.glm(formula, ddf), bs.glm(formula, df)
    assert [b.column for b in lazy.spec.blocks] == ["a b", "a-b", "ｚ", "z"]
    for b, ref in zip(lazy.spec.blocks, eager.spec.blocks):
        assert_allclose(b.edges, ref.edges, rtol=0, atol=0)
    exact = big.astype(np.float64) ** 2
    assert_allclose(lazy.design.dense[:, 0], exact, rtol=4e-16)
    assert_allclose(eager.design.dense[:, 0], exact, rtol=4e-16)
