"""model/_results_report.py: what a fit shows a reader (summary, plots, HTML report).

The module hands a fit to report/; proved here is its own part: ``sort="importance"``
orders the summary's terms by ``term_importance`` (formula order by default), the
bootstrap-only options refuse to run without a bootstrap, and the report is written to
the path given or returned as one HTML page, the title escaped.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from binarsity_stats.model._model import glm  # noqa: E402


@pytest.fixture(scope="module")
def res():
    rng = np.random.default_rng(0)
    n = 300
    df = pd.DataFrame({"x": rng.normal(size=n), "g": rng.choice(list("abc"), n)})
    # g matters far more than x: importance puts C(g) before bin(x, 6)
    eta = 0.3 * (df.x > 0) + 2.0 * (df.g == "b") - 1.0
    df["y"] = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    return glm("y ~ bin(x, 6) + C(g)", df, family="binomial").fit(lam=0.002)


def terms_table(summary) -> pd.DataFrame:
    return next(t for t in summary.tables if "importance" in t.columns and "kind" in t.columns)


def test_summary_sorts_by_importance_on_request(res):
    imp = res.term_importance()
    assert imp["C(g)"] > imp["bin(x, 6)"]
    assert list(terms_table(res.summary()).index) == ["bin(x, 6)", "C(g)"]
    assert list(terms_table(res.summary(sort="importance")).index) == ["C(g)", "bin(x, 6)"]
    with pytest.raises(ValueError, match="sort must be None or 'importance', got 'size'"):
        res.summary(sort="size")


def test_bands_and_rug_need_a_bootstrap(res):
    with pytest.raises(ValueError, match="bands=True needs a bootstrap first"):
        res.plot_shapes(bands=True)
    with pytest.raises(ValueError, match="rug=True needs a bootstrap first"):
        res.plot_shapes(rug=True)


def test_plot_shapes_draws_the_named_terms(res):
    fig = res.plot_shapes(terms=["C(g)"])
    try:
        titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
        assert titles == ["g"]
    finally:
        plt.close(fig)


def test_the_report_is_one_page_written_where_asked(res, tmp_path):
    page = res.report(title="<b>risk & co</b>")
    assert page.lstrip().lower().startswith("<!doctype html")
    assert "&lt;b&gt;risk &amp; co&lt;/b&gt;" in page and "<b>risk" not in page
    target = tmp_path / "model.html"
    assert res.report(target) == target
    assert target.read_text(encoding="utf-8").lstrip().lower().startswith("<!doctype html")
    plt.close("all")
