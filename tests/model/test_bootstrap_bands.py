"""Honest default bands (issue 28, item 1): the default bootstrap band is the relaxed
one — the better band at every λ the ``inference`` benchmark measured — and every band
says, in its own output, what that benchmark measured of its coverage at its kind of λ,
warning when it fell below 85%. ``res.predict(new, interval=)`` gives the bootstrap's
interval on the penalised fit. Mirrors ``binarsity_stats/model/_bootstrap_bands.py``.
"""

from __future__ import annotations

import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

import binarsity_stats as bstats  # noqa: E402
from binarsity_stats.model._bootstrap_bands import (  # noqa: E402
    MEASURED_COVERAGE,
    MEASURED_PREDICT_COVERAGE,
    coverage_note,
)


def _range(kind: str, method: str = "relaxed", table=MEASURED_COVERAGE) -> str:
    lo, hi = table[method, kind]
    return f"{lo:.0f}-{hi:.0f}%"


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    n = 600
    d = pd.DataFrame({"x": rng.uniform(size=n), "z": rng.uniform(size=n)})
    d["y"] = np.where(d.x > 0.4, 1.0, 0.0) + rng.normal(scale=0.7, size=n)
    return d


def _boot(res, n_boot=12):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return res.bootstrap(n_boot=n_boot, random_state=0)


def test_the_default_band_is_the_relaxed_one(data):
    res = bstats.glm("y ~ bin(x, 10) + bin(z, 10)", data).fit(lam=0.01)
    boot = _boot(res)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        default, relaxed = boot.shape_bands(), boot.shape_bands(method="relaxed")
        pct = boot.shape_bands(method="percentile")
        pd.testing.assert_frame_equal(default, relaxed)
        assert not default[["lower", "upper"]].equals(pct[["lower", "upper"]])
        pd.testing.assert_frame_equal(boot.predict(data.head(9)),
                                      boot.predict(data.head(9), method="relaxed"))  # fmt: skip
        assert boot.tidy()["conf.method"].iloc[0] == boot.tidy(method="relaxed")[
            "conf.method"].iloc[0]  # fmt: skip


def test_each_band_says_what_was_measured_at_its_kind_of_lambda(data):
    model = bstats.glm("y ~ bin(x, 10) + bin(z, 10)", data)
    theory = model.fit()
    boot = _boot(theory)
    theory_range = _range("theory")
    with pytest.warns(UserWarning, match=rf"relaxed bands at theory: .* {theory_range} .* below 85%"):
        bands = boot.shape_bands()
    assert theory_range in bands.attrs["coverage_note"]
    with warnings.catch_warnings():  # once per bootstrap and method
        warnings.simplefilter("error", UserWarning)
        boot.shape_bands()
    with pytest.warns(UserWarning, match=rf"percentile bands at theory: .* {_range('theory', 'percentile')}"):
        boot.shape_bands(method="percentile")
    cv = model.fit_cv(folds=3, random_state=0, n_lambdas=12)
    note, short = coverage_note(cv.best_, "relaxed")
    lo, hi = MEASURED_COVERAGE["relaxed", "lam_min"]
    assert "lam_min" in note and f"{lo:.0f}-{hi:.0f}%" in note and short == (lo < 85)
    note, _ = coverage_note(cv.results("lam_1se"), "percentile")
    assert "lam_1se" in note and _range("lam_1se", "percentile") in note
    note, short = coverage_note(model.fit(lam=0.02), "relaxed")
    assert "did not measure" in note and short
    # the measured ranges are those of docs/benchmarks.md's table
    assert all(0 <= lo <= hi <= 100 for lo, hi in MEASURED_COVERAGE.values())
    assert all(MEASURED_COVERAGE["relaxed", k][0] > MEASURED_COVERAGE["percentile", k][0]
               for k in ("theory", "lam_1se", "lam_min"))  # fmt: skip


def test_figures_and_the_report_carry_the_note(data, tmp_path):
    res = bstats.glm("y ~ bin(x, 10) + bin(z, 10)", data).fit()
    boot = _boot(res)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        fig = boot.plot_shapes()
        notes = [t.get_text() for t in fig.texts if t.get_gid() == "coverage-note"]
        assert notes and _range("theory") in notes[0]
        page = res.report(tmp_path / "r.html")
    html = page.read_text(encoding="utf-8") if hasattr(page, "read_text") else open(page).read()
    assert "Measured coverage" in html and "below 85%" in html


def test_predict_with_an_interval_on_the_penalised_fit_is_the_bootstrap_one(data):
    res = bstats.glm("y ~ bin(x, 10) + bin(z, 10)", data).fit(lam=0.01)
    boot = _boot(res)
    new = data.head(15)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        out = res.predict(new, interval=0.9)
        pd.testing.assert_frame_equal(out, boot.predict(new, interval=0.9))
    assert list(out.columns) == ["mean", "mean_ci_lower", "mean_ci_upper"]
    assert out.attrs["interval"].startswith("bootstrap (relaxed")
    assert isinstance(res.predict(new), np.ndarray)  # without interval: unchanged
    fresh = bstats.glm("y ~ bin(x, 6)", data.head(150)).fit(lam=0.01)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        auto = fresh.predict(data.head(5), interval=0.8)  # runs a default bootstrap
    assert fresh.bootstrap_.n_boot == 200 and auto.shape == (5, 3)
    d = data.assign(t=data.x + 0.1, e=1)
    cox = bstats.glm("Surv(t, e) ~ bin(z, 5)", d, family="cox").fit(lam=0.01)
    with pytest.raises(ValueError, match="interval= is for GLM families"):
        cox.predict(d.head(3), interval=0.9)


def test_prediction_intervals_say_what_was_measured_of_them(data):
    """``predict(new, interval=)`` carries the benchmark's coverage of the true mean on new
    rows (not the bands' coverage of bin levels), and warns only where it fell short."""
    model = bstats.glm("y ~ bin(x, 10) + bin(z, 10)", data)
    boot = _boot(model.fit())
    new = data.head(20)
    short = MEASURED_PREDICT_COVERAGE["relaxed", "theory"][0] < 85
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = boot.predict(new, interval=0.9)
    note = out.attrs["coverage_note"]
    assert "relaxed intervals at theory" in note and "new rows away from the jumps" in note
    assert _range("theory", table=MEASURED_PREDICT_COVERAGE) in note
    assert any("intervals at theory" in str(w.message) for w in caught) == short
    note, _ = coverage_note(boot.results, "basic", "intervals")
    assert "did not measure by the basic method" in note
    assert all(MEASURED_PREDICT_COVERAGE["relaxed", k][0]
               > MEASURED_PREDICT_COVERAGE["percentile", k][0]
               for k in ("theory", "lam_1se", "lam_min"))  # fmt: skip
