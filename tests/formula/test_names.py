"""Column names in formulas: backticks, keywords, names that shadow functions, bad formulas.

What is proved here: responses and terms with spaces, dots or Python keywords in
backticks work as in formulaic, and predict/pickle replay them; a data column named
``bin``, ``C``, ``offset`` or ``np`` does not hide the function of that name; a bad
formula raises a ValueError naming the formula (never a raw SyntaxError) in one line
without colour codes, and the CLI exits 2 with one line and no traceback.
"""

import io
import pickle
import re

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

from binarsity_stats import glm
from binarsity_stats._cli import main


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(4)
    n = 300
    x = rng.normal(size=n)
    df = pd.DataFrame({
        "x.1": x, "my x": rng.normal(size=n), "class": rng.choice(["a", "b", "c"], n),
        "if": rng.normal(size=n), "bin": rng.normal(size=n), "C": rng.normal(size=n),
        "offset": rng.uniform(1, 2, n), "np": rng.normal(size=n), "e": rng.normal(size=n),
    })  # fmt: skip
    df["my y"] = (x > 0) + 0.3 * (df["class"] == "b") + 0.2 * rng.normal(size=n)
    df["y"] = df["my y"]
    return df


def _fit(formula, df, **kw):
    return glm(formula, df, **kw).fit(lam=1e-3)


def test_backticked_names_work_as_in_formulaic(frame):
    res = _fit("`my y` ~ bin(`x.1`) + C(`class`) + `my x`", frame)
    assert res.model.response.name == "`my y`"
    names = list(res.params.index)
    assert names[1].startswith("bin(`x.1`)[(-inf, ") and "C(`class`)[b]" in names
    assert names[-1] == "my x"
    assert [b.column for b in res.model.spec.blocks] == ["x.1", "class"]
    # the same fit as with plain names
    plain = frame.rename(columns={"my y": "yy", "x.1": "x1", "class": "klass", "my x": "mx"})
    ref = _fit("yy ~ bin(x1) + C(klass) + mx", plain)
    assert_allclose(res.coef, ref.coef)
    assert_allclose(res.deviance, ref.deviance)
    # replayed on new rows and after pickling
    new = frame.iloc[::7].drop(columns=["my y", "y"])
    assert_allclose(res.predict(new), ref.predict(plain.iloc[::7]))
    assert_allclose(pickle.loads(pickle.dumps(res)).predict(new), res.predict(new))


@pytest.mark.parametrize(
    "formula",
    ["y ~ bin(`if`) + C(`class`)", "`if` ~ bin(`x.1`)", "y ~ `if` + `class`",
     "I(`if` > 0) ~ bin(`x.1`, 5)"],
)  # fmt: skip
def test_python_keywords_in_backticks(frame, formula):
    res = _fit(formula, frame, family="binomial" if formula.startswith("I(") else "gaussian")
    text = " ".join(res.params.index) + res.model.response.name
    assert "_bs" not in text  # no alias leaks into a name
    assert re.search(r"`(if|class)`", text)
    assert_allclose(res.predict(frame), res.fittedvalues)


@pytest.mark.parametrize(
    "formula, first",
    [("y ~ bin(bin)", "bin(`bin`)"), ("y ~ bin(`bin`, 5) + C", "bin(`bin`, 5)"),
     ("y ~ C(C) + bin(`x.1`)", "C(`C`)"), ("y ~ bin(e) + offset(np.log(offset))", "bin(e)"),
     ("y ~ np.exp(`e`) + np + bin(e)", "bin(e)")],
)  # fmt: skip
def test_columns_named_like_functions_do_not_hide_them(frame, formula, first):
    res = _fit(formula, frame)
    assert res.model.spec.blocks[0].term == first
    assert_allclose(res.predict(frame), res.fittedvalues)
    # the same fit with the column renamed
    renamed = frame.rename(columns={"bin": "b_", "C": "c_", "offset": "o_", "np": "n_"})
    plain = (formula.replace("bin(bin)", "bin(b_)").replace("`bin`", "b_")
             .replace("C(C)", "C(c_)").replace("+ C", "+ c_").replace("log(offset)", "log(o_)")
             .replace("+ np +", "+ n_ +"))  # fmt: skip
    assert_allclose(res.deviance, _fit(plain, renamed).deviance, rtol=1e-10)


def test_new_rows_with_a_column_named_like_a_function_predict(frame):
    """Trained without a column 'bin'; new rows bring one: it must not hide bin()."""
    train = frame.drop(columns=["bin", "C", "offset", "np"])
    res = _fit("y ~ bin(e) + C(`class`) + offset(np.log(`my x` ** 2 + 1))", train)
    new = frame.iloc[:20]  # has the columns bin, C, offset and np
    assert_allclose(res.predict(new), res.fittedvalues[:20])


def test_bare_text_column_is_read_as_categorical_even_with_a_column_named_C(frame):
    res = _fit("y ~ `class` + bin(e)", frame)
    assert res.model.spec.blocks[0].term == "C(`class`)"


@pytest.mark.parametrize(
    "formula, match",
    [("y ~ bin(x.1)", r"cannot parse formula 'y ~ bin\(x\.1\)'.*backticks"),
     ("y ~ bin(class)", r"cannot parse formula 'y ~ bin\(class\)'.*backticks"),
     ("y ~ bin(e", r"cannot parse formula 'y ~ bin\(e'"),
     ("y ~ bin(e) +", r"cannot parse formula 'y ~ bin\(e\) \+'"),
     ("y ~ 1 +* e", r"cannot parse formula"),
     ("y ~ e)", r"cannot parse formula 'y ~ e\)'"),
     ("y ~ np.lgo(e)", r"formula 'y ~ np\.lgo\(e\)'.*lgo"),
     ("y ~ `x.2`", r"names column\(s\) \['x\.2'\]")],
)  # fmt: skip
def test_bad_formulas_raise_one_plain_line_naming_the_formula(frame, formula, match):
    with pytest.raises(ValueError, match=match) as info:
        glm(formula, frame)
    msg = str(info.value)
    assert "\x1b" not in msg and "\n" not in msg
    assert not isinstance(info.value, SyntaxError)


def test_cli_bad_formula_exits_2_with_one_line(frame, tmp_path, capsys):
    path = tmp_path / "d.csv"
    frame.to_csv(path, index=False)
    for formula in ("y ~ bin(x.1)", "y ~ bin(e", "y ~ np.lgo(e)"):
        code = main(["fit", formula, "--data", str(path)], out=io.StringIO())
        err = capsys.readouterr().err
        assert code == 2
        assert err.count("\n") == 1 and err.startswith("error: ") and formula in err
        assert "\x1b" not in err and "Traceback" not in err
    code = main(["fit", "`my y` ~ bin(`x.1`) + C(`class`)", "--data", str(path),
                 "--lam", "0.001"], out=io.StringIO())  # fmt: skip
    assert code == 0
