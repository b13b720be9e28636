"""The HTML report (``res.report()``): every section present, images that decode, no
external resource, every text escaped; three families with weights and offsets; the
page rendered in headless Chromium with every image displayed (skipped only where no
browser exists; ``.ci/run`` installs one and sets ``BINARSITY_REQUIRE_BROWSER=1``)."""

import base64
import os
import shutil
import struct
import subprocess
from html.parser import HTMLParser

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from binarsity_stats.model._model import glm  # noqa: E402
from binarsity_stats.report._curves import calibration_table  # noqa: E402
from binarsity_stats.report._report import SECTIONS  # noqa: E402

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


class Page(HTMLParser):
    """What a browser would load from the page, and its sections and tables as text."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.sections: list[str] = []
        self.images: list[dict] = []
        self.urls: list[tuple[str, str, str]] = []  # (tag, attribute, value)
        self.tables: list[dict] = []  # {"section", "caption", "rows"}
        self.texts: list[str] = []
        self._section = None
        self._table = None
        self._cell = None
        self._in_caption = False
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append(tag)
        for name in ("src", "href", "srcset", "data", "action", "poster", "background"):
            if attrs.get(name) is not None:
                self.urls.append((tag, name, attrs[name]))
        if tag == "section":
            self._section = attrs.get("id")
            self.sections.append(self._section)
        elif tag == "img":
            self.images.append(attrs | {"section": self._section})
        elif tag == "table":
            self._table = {"section": self._section, "caption": "", "rows": []}
            self.tables.append(self._table)
        elif tag == "caption":
            self._in_caption = True
        elif tag == "tr" and self._table is not None:
            self._table["rows"].append([])
        elif tag in ("td", "th") and self._table is not None:
            self._cell = []

    def handle_endtag(self, tag):
        if tag == "caption":
            self._in_caption = False
        elif tag in ("td", "th") and self._cell is not None and self._table is not None:
            self._table["rows"][-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data):
        self.texts.append(data)
        if self._in_caption and self._table is not None:
            self._table["caption"] += data
        elif self._cell is not None:
            self._cell.append(data)

    def table(self, section: str, caption_start: str) -> list[list[str]]:
        found = [t for t in self.tables
                 if t["section"] == section and t["caption"].startswith(caption_start)]  # fmt: skip
        assert len(found) == 1, (section, caption_start, [t["caption"] for t in self.tables])
        return found[0]["rows"]

    def facts(self, section: str, caption_start: str = "") -> dict[str, str]:
        rows = self.table(section, caption_start)
        return {r[0]: r[1] for r in rows if len(r) == 2}


def decode_png(src: str) -> tuple[int, int]:
    """Width and height of a base64 PNG data URI (its IHDR chunk), after checking it."""
    prefix = "data:image/png;base64,"
    assert src.startswith(prefix)
    raw = base64.b64decode(src[len(prefix) :], validate=True)
    assert raw[:8] == PNG_MAGIC and raw[12:16] == b"IHDR"
    width, height = struct.unpack(">II", raw[16:24])
    assert raw[-8:-4] == b"IEND"
    return width, height


def assert_self_contained(page: Page) -> None:
    assert "script" not in page.tags and "link" not in page.tags and "iframe" not in page.tags
    for tag, attr, value in page.urls:
        if tag == "a" and attr == "href":
            assert value.startswith("#"), value  # only links inside the page
        else:
            assert value.startswith("data:image/png;base64,"), (tag, attr, value[:40])
    text = " ".join(page.texts)
    assert "url(" not in text and "@import" not in text  # nothing loaded by the style sheet


def frame(family: str, n: int = 240, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x": rng.uniform(0, 10, n), "k": rng.integers(0, 6, n),
                       "g": rng.choice(["a", "b", "c"], n), "z": rng.normal(size=n),
                       "w": rng.uniform(0.5, 2.0, n), "t": rng.uniform(0.5, 3.0, n)})  # fmt: skip
    df.loc[rng.choice(n, 15, replace=False), "x"] = np.nan
    eta = 0.8 * (df["x"].fillna(11) > 5) + 0.4 * (df["g"] == "b") + 0.2 * df["z"]
    if family == "gaussian":
        df["y"] = eta + rng.normal(size=n)
    elif family == "binomial":
        df["y"] = rng.binomial(1, 1 / (1 + np.exp(-(eta - 0.5))))
    else:
        df["y"] = rng.poisson(df["t"] * np.exp(eta - 0.3))
    return df


MODELS = {
    # (formula, glm keyword arguments): weights everywhere, offsets as a formula term
    # (poisson's exposure) and as a column (gaussian, binomial)
    "gaussian": ("y ~ bin(x, 6) + bin(k) + C(g) + z", {"offset": "t"}),
    "binomial": ("y ~ bin(x, 6) + C(g) + z", {"offset": "t"}),
    "poisson": ("y ~ bin(x, 6) + C(g) + z + offset(np.log(t))", {}),
}


def fitted(family: str, seed: int = 0):
    formula, kw = MODELS[family]
    df = frame(family, seed=seed)
    model = glm(formula, df, family=family, sample_weight="w", missing="separate", **kw)
    return model.fit(lam=2e-3), df


@pytest.fixture(scope="module")
def cv_report(tmp_path_factory):
    """A gaussian CV fit, bootstrapped, its page written to a file."""
    df = frame("gaussian")
    model = glm(MODELS["gaussian"][0], df, sample_weight="w", offset="t", missing="separate")
    cv = model.fit_cv(folds=3, n_lambdas=6, random_state=0)
    cv.best_.bootstrap(n_boot=8, random_state=0)
    path = tmp_path_factory.mktemp("report") / "model.html"
    assert cv.report(path) == path
    return cv, path, Page(path.read_text(encoding="utf-8"))


def test_cv_report_has_every_section_in_order_and_a_working_table_of_contents(cv_report):
    cv, path, page = cv_report
    assert page.sections == list(SECTIONS)
    links = [v for tag, attr, v in page.urls if tag == "a"]
    assert links == ["#" + s for s in SECTIONS]
    assert_self_contained(page)
    # the summary is embedded as summary().as_html() makes it
    assert cv.best_.summary().as_html() in path.read_text(encoding="utf-8")


def test_every_image_is_a_decodable_png(cv_report):
    _, _, page = cv_report
    where = [img["section"] for img in page.images]
    assert where == ["shapes", "cv", "cv", "calibration"]
    for img in page.images:
        width, height = decode_png(img["src"])
        assert width > 100 and height > 100
        assert img["alt"]


def test_cv_and_bootstrap_sections_report_their_numbers(cv_report):
    cv, _, page = cv_report
    facts = page.facts("cv", "Cross-validation")
    assert facts["Folds"] == "3" and facts["Criterion"] == "deviance"
    assert facts["λ_min (best mean)"] == f"{cv.lam_min:.6g}"
    assert facts["λ_1se (largest within one standard error)"] == f"{cv.lam_1se:.6g}"
    boot = cv.best_.bootstrap_
    bfacts = {r[0]: r[1] for r in page.table("bootstrap", "") if len(r) == 2}
    assert bfacts["Resamples"] == "8"
    assert bfacts["Converged refits"] == f"{int(boot.converged.sum())} of 8"
    # the kept cut-points with this bootstrap's frequencies
    rows = page.table("cut-points", "Cut-points kept")
    assert rows[0] == ["term", "column", "cut", "left", "right", "jump", "frequency"]
    cuts = cv.best_.cut_points()
    assert len(rows) - 1 == len(cuts) > 0
    assert [r[6] for r in rows[1:]] == [f"{f:.0%}" for f in cuts["frequency"]]
    # edges not kept, listed by decreasing frequency from 10% on
    table = boot.cut_frequencies()
    other = table[~table["selected"] & (table["frequency"] >= 0.1)]
    rows = page.table("cut-points", "Edges not kept")
    assert len(rows) - 1 == len(other)
    shown = [float(r[3].rstrip("%")) for r in rows[1:]]
    assert shown == sorted(shown, reverse=True)


def test_data_section_describes_rows_weights_offset_and_terms(cv_report):
    cv, _, page = cv_report
    model = cv.model
    facts = page.facts("data", "The data and the model")
    assert facts["Formula"] == MODELS["gaussian"][0]
    assert facts["Rows"] == "240"
    assert facts["Sample weights"].startswith("column w (analytic; total ")
    assert facts["Offset"] == "column t"
    assert facts["Missing values in bin()/C() columns"] == "separate"
    terms = {r[0]: r for r in page.table("data", "Terms of the formula")[1:]}
    assert list(terms) == ["bin(x, 6)", "bin(k)", "C(g)", "z"]
    assert terms["bin(x, 6)"][5] == "15"  # the NaN rows of x: its missing level
    assert terms["C(g)"][4] == "a, b, c"
    resp = page.facts("data", "The response")
    y, w = model.y, model.sample_weight
    assert resp["Mean of the response (weighted)"] == f"{np.average(y, weights=w):.4g}"


@pytest.mark.parametrize("family", ["gaussian", "binomial", "poisson"])
def test_three_families_with_weights_and_offsets(family):
    res, df = fitted(family)
    scale = "response" if family == "binomial" else "link"  # odds ratios
    page = Page(res.report(scale=scale))
    assert page.sections == [s for s in SECTIONS if s not in ("bootstrap", "cv")]
    assert_self_contained(page)
    assert [img["section"] for img in page.images] == ["shapes", "calibration"]
    for img in page.images:
        decode_png(img["src"])
    facts = page.facts("data", "The data and the model")
    assert facts["Family"] == family and facts["Sample weights"].startswith("column w")
    assert facts["Offset"] == ("the formula's offset() term(s)" if family == "poisson"
                               else "column t")  # fmt: skip
    # the calibration table is calibration_table's, on the weighted training rows
    rows = page.table("calibration", "Calibration table")
    expected = calibration_table(res)
    assert rows[0] == list(expected.columns)
    assert [int(r[2].replace(",", "")) for r in rows[1:]] == list(expected["count"])
    np.testing.assert_allclose([float(r[1]) for r in rows[1:]], expected["observed"], rtol=1e-3)
    if family == "binomial":
        resp = page.facts("data", "The response")
        events = int((df["y"] == 1).sum())
        assert resp["Events (rows with y = 1)"] == f"{events:,}"
        assert "exp(effect) relative to the average training row" in " ".join(page.texts)


def test_calibration_on_new_rows_with_an_offset_column_and_a_held_out_deviance():
    res, _ = fitted("poisson")
    new = frame("poisson", n=90, seed=5)
    page = Page(res.report(new=new))  # y: the response column of new
    facts = page.facts("calibration", "Held-out rows")
    mu = res.predict(new)
    dev = res.model.family.deviance(new["y"].to_numpy(float), mu, np.ones(len(new)))
    assert facts["New rows"] == "90"
    assert float(facts["Deviance on the new rows (per row)"]) == pytest.approx(dev / 90, 1e-5)
    rows = page.table("calibration", "Calibration table")
    expected = calibration_table(res, new, "y")
    np.testing.assert_allclose([float(r[0]) for r in rows[1:]], expected["predicted"], rtol=1e-3)
    # a model with an offset column takes the new rows' offset as predict does
    gres, _ = fitted("binomial")
    gnew = frame("binomial", n=60, seed=6)
    off = np.full(60, -1.0)
    text = gres.report(new=gnew, y=gnew["y"].to_numpy(), offset=off)
    rows = Page(text).table("calibration", "Calibration table")
    shifted = calibration_table(gres, gnew, "y", offset=off)
    np.testing.assert_allclose([float(r[0]) for r in rows[1:]], shifted["predicted"], rtol=1e-3)


def test_new_rows_response_is_read_through_the_formula():
    df = frame("poisson")
    new = frame("poisson", n=80, seed=9)
    res = glm("I(y > 1) ~ bin(x, 5) + C(g)", df, family="binomial", missing="separate").fit(
        lam=1e-3
    )
    page = Page(res.report(new=new, bins=4))
    rows = page.table("calibration", "Calibration table")
    expected = calibration_table(res, new, (new["y"] > 1).to_numpy(float), bins=4)
    np.testing.assert_allclose([float(r[1]) for r in rows[1:]], expected["observed"], rtol=1e-3)


def test_bad_arguments_name_what_is_wrong(cv_report):
    res, df = fitted("gaussian")
    with pytest.raises(ValueError, match="scale must be"):
        res.report(scale="odds")
    with pytest.raises(ValueError, match="scale='response'.*identity"):
        res.report(scale="response")
    with pytest.raises(ValueError, match="level must be"):
        res.report(level=1.5)
    with pytest.raises(ValueError, match="bins must be"):
        res.report(bins=0)
    with pytest.raises(ValueError, match="y is only used together with new"):
        res.report(y=df["y"])
    with pytest.raises(ValueError, match="offset is only used together with new"):
        res.report(offset=np.zeros(len(df)))
    with pytest.raises(ValueError, match="y: the response 'y' cannot be read from new"):
        res.report(new=df.drop(columns="y"))
    with pytest.raises(TypeError, match="new must be a pandas DataFrame"):
        res.report(new=df.to_numpy())
    cv, _, _ = cv_report
    with pytest.raises(ValueError, match="which must be"):
        cv.report(which="best")


def test_text_from_the_data_is_escaped():
    rng = np.random.default_rng(2)
    n = 120
    evil = "<script>alert(1)</script>"
    df = pd.DataFrame({evil: rng.normal(size=n), "g": rng.choice(['<b>"a"</b>', "b&c"], n)})
    df["y"] = df[evil] + rng.normal(size=n)
    res = glm(f"y ~ bin(`{evil}`, 5) + C(g)", df).fit(lam=1e-3)
    text = res.report(title="<i>my</i> model")
    page = Page(text)
    assert "script" not in page.tags and "b" not in page.tags and "i" not in page.tags
    assert evil not in text and "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    seen = " ".join(page.texts)
    assert evil in seen and '<b>"a"</b>' in seen and "<i>my</i> model" in seen


def test_report_writes_utf8_and_returns_the_path_or_the_page(tmp_path):
    from binarsity_stats.report import _report

    res, _ = fitted("binomial")
    calls = []
    real = _report.build_report

    def build(*args, **kw):  # the page is built once and written as it was built
        calls.append(real(*args, **kw))
        return calls[-1]

    _report.build_report = build
    try:
        out = str(tmp_path / "m.html")
        assert res.report(out, title="Ünïcode λ") == out
    finally:
        _report.build_report = real
    saved = open(out, encoding="utf-8").read()
    assert saved == calls[0]
    assert saved.startswith("<!DOCTYPE html>") and '<meta charset="utf-8">' in saved
    assert "<title>Ünïcode λ</title>" in saved
    with pytest.raises(OSError):
        res.report(tmp_path / "no" / "such" / "dir.html")


def test_bootstrap_report_uses_its_own_bootstrap():
    res, _ = fitted("binomial")
    first = res.bootstrap(n_boot=6, random_state=1)
    res.bootstrap(n_boot=5, random_state=2)  # res.bootstrap_ is now the second one
    page = Page(first.report(level=0.8, method="relaxed"))
    assert page.sections == [s for s in SECTIONS if s != "cv"]
    facts = {r[0]: r[1] for r in page.table("bootstrap", "") if len(r) == 2}
    assert facts["Resamples"] == "6"
    assert facts["Bands"].startswith(
        "80% pointwise, method 'relaxed': percentile bands of the relaxed"
    )
    assert "relaxed refits" in " ".join(page.texts)  # the figure's caption says so too
    with pytest.raises(ValueError, match="method must be"):
        first.report(method="bca")
    rows = page.table("cut-points", "Cut-points kept")
    freq = first.cut_frequencies()
    kept = freq[freq["selected"]]
    assert [r[6] for r in rows[1:]] == [f"{f:.0%}" for f in kept["frequency"]]
    # the summary's cut-point table shows the same bootstrap's frequencies
    summary = page.table("summary", "Cut-points kept")
    assert summary[0][-1] == "boot freq"
    assert [r[-1] for r in summary[1:]] == [f"{f:.0%}" for f in kept["frequency"]]
    assert res.bootstrap_ is not first  # the report did not change the fit


def test_a_pickled_cv_fit_reports_its_cv_and_bootstrap(cv_report):
    import pickle

    cv, _, _ = cv_report
    again = pickle.loads(pickle.dumps(cv.best_))
    assert again.cv_ is not None and again.bootstrap_ is not None
    page = Page(again.report())
    assert page.sections == list(SECTIONS)


def test_a_model_without_binned_terms_still_reports():
    df = frame("gaussian")
    res = glm("y ~ C(g) + z", df).fit(lam=1e-3)
    page = Page(res.report())
    assert page.sections == [s for s in SECTIONS if s not in ("bootstrap", "cv")]
    assert "The model has no bin() term." in page.texts


# -- rendered in a real browser ----------------------------------------------------------


def _browser() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


#: Run by the browser after load: every image's natural size into the DOM, so that the
#: dumped DOM tells which images were decoded and displayed.
_PROBE = """<script>
window.addEventListener("load", function () {
  var out = [];
  document.querySelectorAll("img").forEach(function (img) {
    out.push(img.complete && img.naturalWidth > 0 ? img.naturalWidth + "x" + img.naturalHeight
                                                   : "broken");
  });
  var p = document.createElement("pre");
  p.id = "probe";
  p.textContent = "IMAGES:" + out.join(",") + ":END";
  document.body.appendChild(p);
});
</script>"""


def test_every_image_is_displayed_in_headless_chromium(cv_report, tmp_path):
    browser = _browser()
    if browser is None:
        if os.environ.get("BINARSITY_REQUIRE_BROWSER"):
            pytest.fail("BINARSITY_REQUIRE_BROWSER is set but no Chromium was found")
        pytest.skip("no Chromium on this machine (.ci/run installs one)")
    _, path, page = cv_report
    # a copy of the page with the probe (the report itself has no script)
    probed = tmp_path / "probed.html"
    probed.write_text(path.read_text(encoding="utf-8").replace("</body>", _PROBE + "</body>"),
                      encoding="utf-8")  # fmt: skip
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
           "--no-first-run", "--virtual-time-budget=10000", f"--user-data-dir={tmp_path}/ud",
           "--dump-dom", probed.as_uri()]  # fmt: skip
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    dom = out.stdout
    assert '<pre id="probe">IMAGES:' in dom, dom[-2000:]
    shown = dom.split('<pre id="probe">IMAGES:', 1)[1].split(":END", 1)[0].split(",")
    assert len(shown) == len(page.images) == 4
    for size, img in zip(shown, page.images, strict=True):
        assert size != "broken"
        assert tuple(int(v) for v in size.split("x")) == decode_png(img["src"])
