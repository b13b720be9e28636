"""Reports show any name literally and are written whole or not at all (issue 22, item 8).

* Column and level names go into matplotlib as plain text: ``$\\frac$`` made
  ``report()`` fail inside mathtext's parser, ``$x$`` turned italic. Every text of the
  figures is checked to be shown as given (not math).
* ``report()``, ``save_figure`` and the CLI's ``--save`` write a temporary file in the
  target folder and rename it: a write that fails half-way (a real file-size limit,
  RLIMIT_FSIZE, standing in for a full disk; a writer raising; Ctrl-C) leaves the old
  file intact and no temporary file behind.
"""

from __future__ import annotations

import io
import os
import pickle
import re
import resource
import signal

import numpy as np
import pandas as pd
import pytest

import binarsity_stats as bs
from binarsity_stats._cli import main

pytest.importorskip("matplotlib")
os.environ.setdefault("MPLBACKEND", "Agg")

NAMES = [r"$\frac$", "a_b", "50%", "$"]


@pytest.fixture(scope="module")
def odd():
    rng = np.random.RandomState(0)
    n = 300
    df = pd.DataFrame({r"$\frac$": rng.uniform(size=n), "a_b": rng.uniform(size=n),
                       "50%": rng.normal(size=n), "$": rng.normal(size=n),
                       "g": rng.choice(["$x$", r"\$y", "p_1"], n)})  # fmt: skip
    df["y"] = rng.normal(size=n) + (df[r"$\frac$"] > 0.5) + df["$"] + (df.g == "$x$")
    formula = r"y ~ bin(`$\frac$`, 4) + bin(a_b, 4) + bin(`50%`, 4) + `$` + C(g)"
    return bs.glm(formula, df).fit(lam=1e-3)


def _shown(fig):
    """Every non-empty text of a drawn figure as matplotlib shows it, and whether as math."""
    from matplotlib.text import Text

    fig.canvas.draw()
    return [t._preprocess_math(t.get_text()) for t in fig.findobj(Text) if t.get_text()]


def test_report_with_mathtext_names_succeeds_and_shows_them_literally(odd, tmp_path):
    path = odd.report(tmp_path / "r.html")
    page = path.read_text(encoding="utf-8")
    assert "<img" in page and "&#x27;" not in page.split("<body", 1)[0]
    shown = _shown(odd.plot_shapes())
    assert not any(math for _, math in shown)
    texts = {s for s, _ in shown}
    for name in NAMES + ["$x$", r"\$y", "p_1"]:
        assert name in texts or any(name in s for s in texts), name
    # the path plot's legend names the terms; only its log-axis ticks are math
    shown = _shown(odd.model.fit_path(n_lambdas=5).plot())
    assert all(s.startswith(r"$\mathdefault{10^") for s, math in shown if math)
    assert {r"bin(`$\frac$`, 4)", "C(g)"} <= {s for s, math in shown if not math}


def test_report_on_a_failing_write_keeps_the_old_file(odd, tmp_path):
    target = tmp_path / "model.html"
    target.write_text("OLD REPORT", encoding="utf-8")
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    old = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    page = odd.report()  # built before the limit: only the write is limited
    assert len(page.encode()) > 20_000
    try:
        resource.setrlimit(resource.RLIMIT_FSIZE, (8192, hard))  # a disk that fills at 8 KiB
        with pytest.raises(OSError):
            odd.report(target)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, old)
    assert target.read_text(encoding="utf-8") == "OLD REPORT"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.html"]
    odd.report(target)  # and a write that succeeds replaces it whole
    # the page is stamped to the minute: the two builds may straddle one
    stamp = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC")
    assert stamp.search(page)
    assert stamp.sub("STAMP", target.read_text(encoding="utf-8")) == stamp.sub("STAMP", page)


def test_cli_save_on_a_failing_write_keeps_the_old_model(tmp_path, capsys, monkeypatch):
    rng = np.random.RandomState(1)
    d = pd.DataFrame({"x": rng.uniform(size=100)})
    d["y"] = rng.normal(size=100)
    d.to_csv(tmp_path / "d.csv", index=False)
    target = tmp_path / "m.pkl"
    target.write_bytes(b"OLD MODEL")

    def half_then_fail(obj, fh, protocol=None):
        data = pickle.dumps(obj, protocol=protocol)
        fh.write(data[: len(data) // 2])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pickle, "dump", half_then_fail)
    code = main(["fit", "y ~ bin(x, 4)", "--data", str(tmp_path / "d.csv"), "--lam", "0.01",
                 "--save", str(target)], out=io.StringIO())  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "No space left on device" in err and err.count("\n") == 1
    assert target.read_bytes() == b"OLD MODEL"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.csv", "m.pkl"]


def test_write_atomic_interrupted_and_permissions(tmp_path):
    from binarsity_stats.core._atomic import write_atomic

    target = tmp_path / "f.txt"

    def interrupted(fh):
        fh.write("partial")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_atomic(target, interrupted)
    assert list(tmp_path.iterdir()) == []
    write_atomic(target, lambda fh: fh.write("whole"))
    assert target.read_text() == "whole"
    mask = os.umask(0o022)
    os.umask(mask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~mask  # as a plain open() gives
    target.chmod(0o600)
    write_atomic(target, lambda fh: fh.write("again"))
    assert target.stat().st_mode & 0o777 == 0o600 and target.read_text() == "again"
