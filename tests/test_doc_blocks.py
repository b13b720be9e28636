"""Every Python block of the README and of the Markdown docs runs as pasted.

The README's "Use" snippet once referred to an undefined ``X`` and a column that does
not exist. Here each fenced ``python`` block of README.md, docs/*.md and the
docs/user_guide and vignette pages is one test case; the blocks of one file run in
order in one namespace (as a reader pastes them one after the other). ``{code-cell}``
blocks are not collected: the docs build executes them (myst-nb, execution forced).

A block that is deliberately not runnable is marked by the HTML comment
``<!-- docs-test: skip (reason) -->`` on the line before its fence; keep them few.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FILES = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
    *sorted((ROOT / "docs" / "user_guide").glob("*.md")),
    *sorted((ROOT / "docs" / "course").glob("*.md")),
    *sorted((ROOT / "vignettes").glob("*.md")),
]
_FENCE = re.compile(r"^(?P<indent> *)(?P<fence>```+|~~~+)\s*(?P<info>[^\n`]*)$")
SKIP = re.compile(r"<!--\s*docs-test:\s*skip\b(?P<why>[^>]*)-->")


def python_blocks(path: Path) -> list[tuple[int, str, str | None]]:
    """(first line number, code, skip reason or None) of every ``python`` fenced block."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, info = m.group("fence"), m.group("info").strip()
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            j += 1
        if info.split()[:1] in (["python"], ["py"], ["python3"]):
            prev = next((lines[k] for k in range(i - 1, -1, -1) if lines[k].strip()), "")
            skip = SKIP.search(prev)
            indent = len(m.group("indent"))
            code = "\n".join(line[indent:] for line in lines[i + 1 : j])
            blocks.append((i + 1, code, skip.group("why").strip(" ()") if skip else None))
        i = j + 1
    return blocks


CASES = [
    pytest.param(path, k, id=f"{path.relative_to(ROOT)}:{line}")
    for path in FILES
    for k, (line, _, _) in enumerate(python_blocks(path))
]
_NAMESPACES: dict[Path, dict] = {}


def _run_through(path: Path, k: int) -> None:
    """Run the blocks of ``path`` up to block k in the file's namespace (once each)."""
    state = _NAMESPACES.setdefault(path, {"ns": {"__name__": "__doc_block__"}, "done": 0})
    blocks = python_blocks(path)
    while state["done"] <= k:
        i = state["done"]
        line, code, skip = blocks[i]
        state["done"] += 1
        if skip is not None:
            if i == k:
                pytest.skip(f"marked not runnable: {skip}")
            continue
        try:
            exec(compile(code, f"{path.relative_to(ROOT)}:{line}", "exec"), state["ns"])
        except Exception as exc:
            state["done"] = len(blocks) + 1  # later blocks depend on this one
            where = "" if i == k else f"an earlier block (line {line}) failed: "
            raise AssertionError(f"{path.name}:{line}: {where}{type(exc).__name__}: {exc}") from exc
        finally:
            _close_figures()
    if state["done"] > len(blocks):
        pytest.fail(f"{path.name}: an earlier block failed")


def _close_figures() -> None:
    import sys

    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")


@pytest.fixture(autouse=True)
def _quiet_backend(monkeypatch, tmp_path):
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.chdir(tmp_path)  # a block that writes a file writes it here
    import matplotlib

    matplotlib.use("Agg")


@pytest.mark.parametrize("path, k", CASES)
def test_block_runs(path: Path, k: int, capsys) -> None:
    _run_through(path, k)


def test_blocks_are_found_and_few_are_skipped():
    readme = python_blocks(ROOT / "README.md")
    assert readme, "the README has no python block"
    skipped = [(p.name, line) for p in FILES for line, _, why in python_blocks(p) if why]
    total = sum(len(python_blocks(p)) for p in FILES)
    assert len(skipped) <= max(2, total // 10), skipped
    assert os.path.isdir(ROOT / "docs")
