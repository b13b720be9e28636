"""A pair term ``bin(a):bin(b)`` in the model description (issue 25).

``to_spec()`` writes the pair's two axes (each an input with its cut points, no missing
level) and the K_a × K_b table of its cells' values, ``null`` for a cell that held no
training row; ``from_spec`` and the standalone scorer predict from it what ``predict``
gives — a null cell adds 0 to η — to 1e-12, on rows in unseen cells, beyond the training
range and with missing values (NaN under ``missing="drop"``, an error otherwise).
Column names are data: quotes, commas, backticks and ``__import__`` in them are only
names. Every reader validates a pair term (shape of the table, finite numbers, the
number of cells) before reading it.
"""

from __future__ import annotations

import copy
import json
import re

import numpy as np
import pandas as pd
import pytest

import binarsity_stats as bs
from binarsity_stats.design import standalone_scorer as scorer

A, B = "a", "b"
TERM = "bin(a, 4):bin(b, 3)"


def _frame(seed: int, n: int = 500) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    a = rng.normal(size=n)
    # b follows a: the corners (low a, high b) and (high a, low b) stay empty
    b = a + rng.normal(scale=0.3, size=n)
    y = 0.5 * a + 1.0 * ((a > 0) & (b > 0.5)) + rng.normal(scale=0.3, size=n)
    return pd.DataFrame({A: a, B: b, "y": y})


@pytest.fixture(scope="module")
def fitted():
    df = _frame(0)
    res = bs.glm(f"y ~ bin(a, 4) + bin(b, 3) + {TERM}", df).fit(lam=0.002)
    return df, res


def _new_rows(df: pd.DataFrame) -> pd.DataFrame:
    """Training rows, rows far beyond the training range and rows in unseen cells."""
    far = pd.DataFrame({A: [50.0, -50.0, 50.0, -50.0, 0.0], B: [50.0, -50.0, -50.0, 50.0, 1e6]})
    return pd.concat([df[[A, B]].head(20), far], ignore_index=True)


def test_the_pair_is_written_as_two_axes_and_a_table(fitted):
    df, res = fitted
    spec = json.loads(json.dumps(res.to_spec()))  # plain JSON
    (term,) = [t for t in spec["terms"] if t["kind"] == "pair"]
    block = res.model.spec.blocks[2]
    assert term["name"] == TERM and term["penalty"] == "grid"
    assert [ax["column"] for ax in term["axes"]] == [A, B]
    assert [ax["input"] for ax in term["axes"]] == [{"column": A}, {"column": B}]
    assert term["axes"][0]["edges"] == list(block.edges)
    assert term["axes"][1]["edges"] == list(block.pair_edges)
    ka, kb = block.grid_shape
    assert len(term["table"]) == ka and all(len(row) == kb for row in term["table"])
    # the observed cells hold θ in the block's order; the others are null
    s = int(res.model.block_ptr[2])
    flat = [(k, m) for k in range(ka) for m in range(kb)]
    values = {c: res.coef[s + i] for i, c in enumerate(block.cells)}
    for c, (k, m) in enumerate(flat):
        assert term["table"][k][m] == values.get(c)
    assert any(v is None for row in term["table"] for v in row)  # the empty corners


def test_from_spec_and_the_scorer_predict_what_predict_gives(fitted):
    df, res = fitted
    spec = json.loads(json.dumps(res.to_spec()))
    new = _new_rows(df)
    expected = res.predict(new)
    for kind in ("response", "link"):
        want = res.predict(new, type=kind) if kind == "link" else expected
        np.testing.assert_allclose(bs.from_spec(spec).predict(new, type=kind), want,
                                   rtol=1e-12, atol=1e-12)  # fmt: skip
        got = scorer.predict(spec, new.to_dict("records"), type=kind)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_a_row_in_an_unseen_cell_gets_zero_from_the_pair(fitted):
    df, res = fitted
    spec = res.to_spec()
    (term,) = [t for t in spec["terms"] if t["kind"] == "pair"]
    block = res.model.spec.blocks[2]
    ka, kb = block.grid_shape
    k, m = next((k, m) for k in range(ka) for m in range(kb) if term["table"][k][m] is None)
    # a point inside the unseen cell (k, m): the middle of its bounds, or beyond an end
    ea = np.concatenate([[block.edges[0] - 1], block.edges, [block.edges[-1] + 1]])
    eb = np.concatenate([[block.pair_edges[0] - 1], block.pair_edges, [block.pair_edges[-1] + 1]])
    row = pd.DataFrame({A: [(ea[k] + ea[k + 1]) / 2], B: [(eb[m] + eb[m + 1]) / 2]})
    assert scorer._term_value(scorer.validate(spec)["terms"][2], row.iloc[0].to_dict()) == 0.0
    # the model's own η on that row: the two main terms and the intercept, nothing else
    without = copy.deepcopy(spec)
    without["terms"] = [t for t in without["terms"] if t["kind"] != "pair"]
    eta = res.predict(row, type="link")
    np.testing.assert_array_equal(eta, bs.from_spec(without).predict(row, type="link"))
    np.testing.assert_array_equal(eta, bs.from_spec(spec).predict(row, type="link"))


def test_missing_values_in_an_axis():
    df = _frame(1)
    df.loc[:9, A] = np.nan
    res = bs.glm(f"y ~ bin(b, 3) + {TERM}", df, missing="drop").fit(lam=0.002)
    spec = res.to_spec()
    assert A in spec["missing"]["drop_columns"]
    new = _new_rows(df)
    expected = res.predict(new)
    assert np.isnan(expected[:10]).all() and np.isfinite(expected[10:]).all()
    np.testing.assert_allclose(bs.from_spec(spec).predict(new), expected, rtol=1e-12,
                               atol=1e-12)  # fmt: skip
    got = np.array(scorer.predict(spec, new.to_dict("records")), dtype=float)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    # without missing="drop": a missing value of an axis is an error naming its column
    full = bs.glm(f"y ~ {TERM}", _frame(2)).fit(lam=0.002)
    bad = pd.DataFrame({A: [0.1], B: [np.nan]})
    with pytest.raises(ValueError, match="'b'"):
        full.predict(bad)
    with pytest.raises(ValueError, match="'b'"):
        bs.from_spec(full.to_spec()).predict(bad)
    with pytest.raises(ValueError, match="'b'"):
        scorer.predict(full.to_spec(), bad.to_dict("records"))


def test_column_names_are_data_in_the_pair_description():
    from binarsity_stats.formula._names import AliasedFormula

    first, second = "my `col`, pair=x'\"", "b`) + __import__('os').system('touch pwned') + ('"
    df = _frame(3).rename(columns={A: first, B: second})
    df[second] = df[second] + 5.0  # positive: the axis is log(b)
    # a formula the package writes names such columns by alias (a backtick cannot be
    # written into formula text); a user's formula backticks the others
    formula = AliasedFormula("y ~ bin(_bsc0_, 3) + bin(_bsc0_, 3):bin(log(_bsc1_), 3)",
                             {"_bsc0_": first, "_bsc1_": second})  # fmt: skip
    res = bs.glm(formula, df).fit(lam=0.002)
    spec = json.loads(json.dumps(res.to_spec()))
    main, term = spec["terms"]
    assert main["input"] == {"column": first}
    assert term["axes"][0]["input"] == {"column": first}
    assert term["axes"][1]["input"] == {"column": second, "transform": "log"}
    assert [ax["column"] for ax in term["axes"]] == [first, second]
    assert "log(" in term["name"].split(":bin(", 1)[1]  # the label keeps the transform
    new = df.head(30)
    expected = res.predict(new)
    np.testing.assert_allclose(bs.from_spec(spec).predict(new), expected, rtol=1e-12,
                               atol=1e-12)  # fmt: skip
    got = scorer.predict(spec, new.to_dict("records"))
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    # a user's formula: quotes, commas and code in backticked names
    plain = "a, b') + __import__('os')"
    df2 = _frame(5).rename(columns={A: plain})
    res2 = bs.glm(f"y ~ bin(`{plain}`, 3):bin(b, 3)", df2).fit(lam=0.002)
    (term2,) = res2.to_spec()["terms"]
    assert term2["axes"][0]["input"] == {"column": plain}
    np.testing.assert_allclose(bs.from_spec(res2.to_spec()).predict(df2), res2.predict(df2),
                               rtol=1e-12, atol=1e-12)  # fmt: skip


def test_an_estimator_recipe_of_plain_columns_names_each_axis():
    # a recipe without formulaic state (BinarsityModel.from_design): inputs are columns
    df = _frame(4)
    res = bs.glm(f"y ~ {TERM}", df).fit(lam=0.002)
    model = res.model
    spec_obj = model.spec
    saved = spec_obj.model_spec
    try:
        spec_obj.model_spec = None
        out = res.to_spec()
    finally:
        spec_obj.model_spec = saved
    assert [ax["input"] for ax in out["terms"][0]["axes"]] == [{"column": A}, {"column": B}]
    np.testing.assert_allclose(bs.from_spec(out).predict(df), res.predict(df), rtol=1e-12,
                               atol=1e-12)  # fmt: skip


def _pair_spec(fitted) -> dict:
    return json.loads(json.dumps(fitted[1].to_spec()))


@pytest.mark.parametrize(
    "fault, path",
    [
        (lambda t: t["table"].pop(), "terms[2].table"),
        (lambda t: t["table"][0].append(0.0), "terms[2].table[0]"),
        (lambda t: t["table"][1].__setitem__(0, float("nan")), "terms[2].table[1][0]"),
        (lambda t: t["table"][1].__setitem__(0, "0.1"), "terms[2].table[1][0]"),
        (lambda t: t["axes"][1].__setitem__("missing_level", True), "terms[2].axes[1].missing_level"),
        (lambda t: t["axes"][0].__setitem__("edges", t["axes"][0]["edges"][::-1]), "terms[2].axes[0].edges"),
        (lambda t: t["axes"][0].__setitem__("input", "__import__('os')"), "terms[2].axes[0].input"),
        (lambda t: t["axes"].pop(), "terms[2].axes"),
        (lambda t: t.__setitem__("code", "x"), "terms[2]"),
        (lambda t: [ax.__setitem__("edges", [float(i) for i in range(300)]) for ax in t["axes"]],
         "terms[2].axes"),
    ],
)  # fmt: skip
def test_every_reader_refuses_a_bad_pair_term_by_its_path(fitted, fault, path):
    spec = _pair_spec(fitted)
    fault(spec["terms"][2])
    for read in (bs.from_spec, scorer.validate, lambda s: bs.to_sql(s)):
        with pytest.raises(ValueError, match=rf"model description, {re.escape(path)}"):
            read(spec)
