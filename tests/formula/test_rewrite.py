"""R's habits in formulas (issue 28, item 6): ``.`` with ``I()``, ``factor()``, hints.

Mirrors ``binarsity_stats/formula/_rewrite.py`` (``expand_dot``, ``r_spellings``) and the
hints of ``formula/_names.with_hints``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from binarsity_stats import glm
from binarsity_stats.formula._rewrite import expand_dot, r_spellings


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    n = 400
    age = rng.uniform(20, 60, n)
    g = rng.choice(["a", "b", "c"], n)
    return pd.DataFrame({
        "y": np.where(age > 40, 1.0, 0.0) + (g == "b") + rng.normal(scale=0.5, size=n),
        "age": age, "g": g, "wt.kg": rng.normal(size=n), "factor": rng.normal(size=n),
    })  # fmt: skip


def test_dot_keeps_a_column_used_only_inside_identity(frame):
    # R: lm(y ~ . + I(age^2)) has age and I(age^2); a column named as a term is left out
    out = expand_dot("y ~ . + I(age**2)", frame)
    assert "bin(age)" in out and "I(age**2)" in out
    assert "bin(age)" not in expand_dot("y ~ . + C(age)", frame)
    assert "bin(age)" not in expand_dot("y ~ . - age + I(age**2)", frame)
    assert "bin(age)" not in expand_dot("y ~ . + bin(age, 8) + I(age**2)", frame)
    # nested calls inside I() are inside it too
    assert "bin(age)" in expand_dot("y ~ . + I(np.log(age) * 2)", frame)
    res = glm("y ~ . - `wt.kg` - factor + I(age**2)", frame).fit(lam=1e-3)
    assert set(res.term_table().index) == {"bin(age)", "C(g)", "I(age ** 2)"}


def test_factor_is_read_as_C(frame):
    assert r_spellings("y ~ factor(g) + bin(age)") == "y ~ C(g) + bin(age)"
    assert r_spellings("y ~ bin(factor)") == "y ~ bin(factor)"  # a column named factor
    a = glm("y ~ factor(g) + bin(age, 8)", frame).fit(lam=1e-3)
    b = glm("y ~ C(g) + bin(age, 8)", frame).fit(lam=1e-3)
    np.testing.assert_array_equal(a.params.to_numpy(), b.params.to_numpy())
    np.testing.assert_array_equal(a.predict(frame.head(20)), b.predict(frame.head(20)))
    # with a reference level, as C() takes it
    c = glm("y ~ factor(g, Treatment('b')) + bin(age, 8)", frame).fit(lam=1e-3)
    np.testing.assert_allclose(c.predict(frame), b.predict(frame), rtol=0, atol=1e-12)


def test_power_with_caret_inside_identity_says_to_use_double_star(frame):
    with pytest.raises(TypeError, match=r"'\^' is Python's exclusive or.*I\(age\*\*2\)"):
        glm("y ~ bin(age) + I(age^2)", frame).fit(lam=1e-3)


def test_a_dotted_name_inside_a_call_gets_a_backtick_hint(frame):
    with pytest.raises(ValueError, match=r"name 'wt' is not defined.*'wt\.kg'.*`wt\.kg`"):
        glm("y ~ bin(wt.kg)", frame)
    # written as advised, it fits
    res = glm("y ~ bin(`wt.kg`, 5)", frame).fit(lam=1e-3)
    assert "bin(`wt.kg`, 5)" in res.term_table().index


def test_the_documented_alias_leaves_patsy_bs_spline_usable():
    """README's ``import binarsity_stats as bstats`` keeps ``bs()`` free for patsy formulas.

    Under the former alias ``bs`` a statsmodels formula with ``bs(x, df=4)`` evaluated
    the package's module instead of patsy's spline; no documentation page uses it.
    """
    import re
    from pathlib import Path

    import statsmodels.formula.api as smf

    root = Path(__file__).resolve().parents[2]
    pages = [root / "README.md", *root.glob("docs/**/*.md"), *root.glob("vignettes/*.md")]
    pages = [p for p in pages if p.name not in ("changelog.md", "benchmarks.md")]
    assert len(pages) > 20
    shadowing = [str(p.relative_to(root)) for p in pages
                 if re.search(r"import binarsity_stats as bs\b", p.read_text(encoding="utf-8"))]  # fmt: skip
    assert not shadowing
    rng = np.random.default_rng(3)
    d = pd.DataFrame({"x": rng.uniform(size=200)})
    d["y"] = np.sin(6 * d.x) + rng.normal(scale=0.1, size=200)
    import binarsity_stats as bstats  # noqa: F401 - the documented alias, in this scope

    fit = smf.ols("y ~ bs(x, df=4)", d).fit()
    assert fit.params.shape == (5,)


def test_an_estimator_refusing_a_text_column_points_to_categorical_features():
    from binarsity_stats import BinarsityGLM

    X = pd.DataFrame({"a": np.arange(60.0), "g": ["x", "y", "z"] * 20})
    y = np.arange(60.0) + (X.g == "y")
    with pytest.raises(TypeError, match=r"column 'g'.*categorical_features=\[\.\.\.\]"):
        BinarsityGLM(lam=1e-3).fit(X, y)
    with pytest.raises(TypeError, match=r"categorical_features"):
        BinarsityGLM(lam=1e-3).fit(X.astype({"g": "category"}), y)
    fitted = BinarsityGLM(lam=1e-3, categorical_features=["g"]).fit(X, y)  # as advised
    assert np.all(np.isfinite(fitted.predict(X)))
