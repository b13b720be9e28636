"""A number stated in a vignette's prose is computed or checked by the page itself.

Issue 24: vignettes stated cut-points, counts and percentages that their own code no
longer produced ("compares 4 with those who rate it 3 or less" while the fit kept a cut
at 2; "every null feature is exactly flat" while one kept a cut). The rule, checked here
without running the notebooks (the docs build runs them, ``nb_execution_raises_on_error``,
so an assert that no longer holds fails the build): every number in a vignette's prose
must be

* **glued**: written as a ``{glue:text}`` role (or in any inline code), so the page
  renders the value its code computed — it cannot go stale;
* **asserted**: the same value is a literal of an ``assert`` statement in one of the
  page's code cells (a hidden ``remove-cell`` cell next to the claim, typically);
* an **input** the page sets: the value is a literal of the page's code (a sample size,
  a true cut of a simulation, numbers written in a ``bin(x, 30)`` formula string);
* for 0 … 10, which are literals of almost every page, only the *same section* counts:
  a literal of one of its ``assert`` statements, or — when the prose names a setting
  ("5-fold", "40 bins", "noise sd 2", "a step of +1") — any literal of its code; or
* not a claim at all: a list or section number ("1.", "section 6", "answer 2"), a
  year, a 0/1 coding, or a number exempted on its line by
  ``<!-- not-computed: 86 (reason) -->``.

Math (``$…$``) and fenced text blocks are not scanned: formulas are notation, and the
R bridges print their breaks from the fit. What the check cannot see: a stale number
that happens to equal a literal it accepts (a large input of the page, or a small one
asserted in the same section) — so a result (a cut, a count, a share) is glued, or
gets an assert next to it, even when the number also occurs in the code.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
VIGNETTES = sorted(p for p in (ROOT / "vignettes").glob("*.md") if p.name != "index.md")

_FENCE = re.compile(r"^\s*(```+|~~~+)\s*(\{code-cell\})?")
_NUMBER = re.compile(
    r"(?<![\w.$\\^_/-])[-−+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:\s?%)?(?![\w.]*\w)"
)
_NOT_A_CLAIM = [
    re.compile(r"^\s*(?:#+\s*)?\d+\.\s"),  # list item or numbered heading "1. "
    re.compile(
        r"(?:[Ss]ection|§|Theorem|Lemma|Corollary|Figure|Table|[Aa]nswer|[Ee]xercise)"
        r"\s*\d+(?:\.\d+)?"
    ),
    re.compile(r"\b0/1\b"),  # a binary coding
]
_SETTING_AFTER = re.compile(
    r"[-\s](?:fold|(?:stratified )?folds|bins?|splits?|repetitions?|resamples?|knots?|"
    r"values? of λ|λ values|per feature|degrees of freedom|quantile bins|smoothing|rows each)\b"
)
_SETTING_BEFORE = re.compile(r"(?:sd|deviation|degree|df\s?=|seed|(?:step|jump)s? of)\s*$")
_EXEMPT = re.compile(r"<!--\s*not-computed:\s*(?P<values>[^(>]*)")


def _value(token: str) -> tuple[float, ...]:
    """The values a prose number may stand for: '62 %' is 62 or 0.62; '−0.8' is ±0.8."""
    t = token.replace("−", "-").replace(",", "").replace(" ", "")
    pct = t.endswith("%")
    x = float(t.rstrip("%"))
    vals = {x, abs(x)}
    if pct:
        vals |= {x / 100, abs(x) / 100}
    return tuple(vals)


def _literals(tree: ast.AST) -> set[float]:
    """Numeric constants, and the numbers written in formula strings ("bin(x, 30)")."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            if not isinstance(node.value, bool):
                out.add(float(node.value))
        elif isinstance(node, (ast.Constant, ast.JoinedStr)):
            parts = node.values if isinstance(node, ast.JoinedStr) else [node]
            text = " ".join(
                v.value for v in parts if isinstance(v, ast.Constant) and isinstance(v.value, str)
            )
            if "bin(" in text:
                out |= {float(v) for v in re.findall(r"(?<![\w.])\d+(?:\.\d+)?", text)}
    return out


def parse(text: str) -> tuple[list[tuple[int, int, str]], dict]:
    """Prose lines (line number, section index, text) and the code cells' literals.

    Returns the prose lines outside fences and ``$$`` blocks, and a dict with the literals
    of ``assert`` statements (``"asserted"``), of all code (``"inputs"``) and of the code
    of each section (``"by_section"``).
    """
    lines = text.splitlines()
    prose, i, section, in_math = [], 0, 0, False
    facts = {"asserted": set(), "inputs": set(), "by_section": {}, "asserted_by_section": {}}
    if lines and lines[0].strip() == "---":  # front matter
        i = lines.index("---", 1) + 1
    while i < len(lines):
        line = lines[i]
        m = _FENCE.match(line)
        if m:
            fence, j = m.group(1), i + 1
            while j < len(lines) and not lines[j].strip().startswith(fence):
                j += 1
            if m.group(2):  # an executed cell (a text block is not the page's code)
                body = [ln for ln in lines[i + 1 : j] if not ln.startswith(":")]
                body = [ln for ln in body if ln.strip() != "---"]
                tree = ast.parse("\n".join(body))
                lits = _literals(tree)
                facts["inputs"] |= lits
                facts["by_section"].setdefault(section, set()).update(lits)
                for node in ast.walk(tree):
                    if isinstance(node, ast.Assert):
                        facts["asserted"] |= _literals(node)
                        facts["asserted_by_section"].setdefault(section, set()).update(
                            _literals(node)
                        )
            i = j + 1
            continue
        if line.startswith("#"):
            section += 1
        stripped = line.strip()
        if stripped.startswith("$$"):  # display math: "$$" opens/closes, "$$ … $$" is one line
            if not (len(stripped) > 2 and stripped.endswith("$$")):
                in_math = not in_math
            i += 1
            continue
        if not in_math:
            prose.append((i + 1, section, line))
        i += 1
    return prose, facts


def unbacked_numbers(text: str) -> list[tuple[int, str, str]]:
    """(line, number, the line) of every prose number that the page neither computes nor checks."""
    prose, facts = parse(text)
    bad = []
    for lineno, section, line in prose:
        exempt = set()
        em = _EXEMPT.search(line)
        if em:
            exempt = {v.strip(" ,") for v in em.group("values").split()}
        scan = re.sub(r"<!--.*?-->", " ", line)
        scan = re.sub(r"`[^`]*`", " ", scan)  # inline code and {glue:text}`name` roles
        scan = re.sub(r"\$[^$]*\$", " ", scan)  # inline math
        scan = re.sub(r"\]\([^)]*\)", "]", scan)  # link targets
        scan = re.sub(r"\{[a-z:]+\}", " ", scan)  # role names
        for pat in _NOT_A_CLAIM:
            scan = pat.sub(" ", scan)
        for m in _NUMBER.finditer(scan):
            token = m.group(0)
            if token.strip("+-−%, ") in exempt or token.strip() in exempt:
                continue
            vals = _value(token)
            if re.fullmatch(r"(19|20)\d\d", token.strip()):  # a year (never "2,000")
                continue
            small = all(v == int(v) and abs(v) <= 10 for v in vals)
            if small:  # 0 … 10 are literals of every page: only this section's code counts,
                # and an unasserted literal only for a setting ("5-fold", "sd 2", "40 bins")
                backing = facts["asserted_by_section"].get(section, set())
                after, before = (
                    scan[m.end() : m.end() + 20],
                    scan[max(0, m.start() - 20) : m.start()],
                )
                if _SETTING_AFTER.match(after) or _SETTING_BEFORE.search(before):
                    backing = backing | facts["by_section"].get(section, set())
            else:
                backing = facts["asserted"] | facts["inputs"]
            if any(v in backing for v in vals):
                continue
            bad.append((lineno, token.strip(), line.strip()))
    return bad


@pytest.mark.parametrize("path", VIGNETTES, ids=lambda p: p.name)
def test_every_number_in_the_prose_is_computed_or_checked(path: Path) -> None:
    bad = unbacked_numbers(path.read_text(encoding="utf-8"))
    assert not bad, (
        f"{path.name}: numbers in the prose that the page neither glues nor asserts "
        "(glue the value with {glue:text}, add an assert cell next to the claim, or "
        "exempt a non-computed number with <!-- not-computed: N (reason) -->):\n"
        + "\n".join(f"  line {ln}: {tok!r} in: {txt}" for ln, tok, txt in bad)
    )


@pytest.mark.parametrize("path", VIGNETTES, ids=lambda p: p.name)
def test_every_glued_name_is_glued_by_the_page(path: Path) -> None:
    """A {glue:text} role whose name no cell glues renders nothing (a warning, not a number)."""
    text = path.read_text(encoding="utf-8")
    used = set(re.findall(r"\{glue:text\}`([^`:]+)", text))
    glued = set(re.findall(r"""\bglue\(\s*["']([^"']+)["']""", text))
    assert used <= glued, f"{path.name}: glued nowhere: {sorted(used - glued)}"


_PAGE = """\
# A page

```{code-cell} ipython3
res = fit(n=2000, folds=10)
```

The fit keeps KEPT cut-points on 2,000 rows.

```{code-cell} ipython3
:tags: [remove-cell]
assert res.n_jumps == 4
```
"""


def test_a_stale_count_fails_and_a_checked_or_glued_one_passes() -> None:
    assert unbacked_numbers(_PAGE.replace("KEPT", "4")) == []  # asserted; 2,000 is an input
    stale = unbacked_numbers(_PAGE.replace("KEPT", "5"))  # the code asserts 4
    assert [tok for _, tok, _ in stale] == ["5"]
    glued = _PAGE.replace("KEPT", "{glue:text}`kept`")
    assert unbacked_numbers(glued) == []


def test_a_percentage_a_decimal_and_a_small_count_need_their_own_check() -> None:
    page = (
        "# A\n\n```{code-cell} ipython3\nx = sim(0.3, 0.7, reps=40)\n```\n\n"
        "## B\n\nSteps at 0.3 and −0.7; 62 % of the 40 data sets keep a cut at 3.\n"
    )
    toks = [tok for _, tok, _ in unbacked_numbers(page)]
    # 0.3, 0.7 and 40 are inputs; 3 is small and not a literal of this section's code
    assert toks == ["62 %", "3"]
    checked = (
        page + "\n```{code-cell} ipython3\nassert round(share, 2) == 0.62\nassert cut == 3\n```\n"
    )
    assert unbacked_numbers(checked) == []


def test_list_numbers_sections_years_and_exemptions_are_not_claims() -> None:
    page = (
        "# T\n\n1. Fair (1978), section 6 and Theorem 2.\n"
        "Journal of Political Economy 86. <!-- not-computed: 86 (volume) -->\n"
        "$\\lambda = 0.5$ and `res.fit(0.25)`\n\n$$\nx = 17\n$$\n"
    )
    assert unbacked_numbers(page) == []


def test_doc_sources_hold_no_control_characters() -> None:
    """An escape in a non-raw string once wrote a TAB for ``\\t`` of ``\\theta``."""
    pages = [
        ROOT / "README.md",
        *(ROOT / "docs").glob("*.md"),
        *(ROOT / "docs" / "user_guide").glob("*.md"),
        *(ROOT / "vignettes").glob("*.md"),
    ]
    bad = [
        (p.relative_to(ROOT).as_posix(), n)
        for p in pages
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"[\x00-\x08\x0b-\x1f]", line)
    ]
    assert not bad, bad


def test_the_split_refit_note_states_its_condition() -> None:
    """The uncertainty vignette prints this note: "valid" needs "if correctly specified"."""
    import numpy as np
    import pandas as pd

    import binarsity_stats as bs

    rng = np.random.default_rng(0)
    d = pd.DataFrame({"x": rng.uniform(size=400)})
    d["y"] = 1.0 * (d.x > 0.5) + rng.normal(size=400)
    res = bs.glm("y ~ bin(x, 10)", d).fit(lam=0.01)
    note = " ".join(res.refit(split=0.5, random_state=0).summary().extra_txt.split())
    assert "valid for the selected model, if that model is correctly specified" in note
