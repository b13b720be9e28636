"""Release packaging (issue 28, item 7): the licence, the citation file, the wheel build.

The files are read from the checkout (no build here: ``.ci/wheel`` builds the sdist and
the wheel, installs the wheel in a fresh environment and runs a smoke subset against it).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from binarsity_stats._version import __version__

try:
    import tomllib
except ImportError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_license_is_an_spdx_string_with_its_file(pyproject):
    project = pyproject["project"]
    # PEP 639: an SPDX expression, not the table form setuptools deprecates
    assert project["license"] == "BSD-3-Clause"
    assert project["license-files"] == ["LICENSE"]
    # no licence classifier next to the expression (setuptools refuses both)
    assert not any(c.startswith("License ::") for c in project.get("classifiers", []))
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("BSD 3-Clause License")
    assert "Neither the name of the copyright holder" in text  # the third clause
    # setuptools reads PEP 639's fields from version 77 on
    requires = pyproject["build-system"]["requires"]
    (setuptools_req,) = [r for r in requires if r.startswith("setuptools")]
    minimum = re.fullmatch(r"setuptools>=(\d+)(?:\.\d+)*", setuptools_req)
    assert minimum is not None and int(minimum.group(1)) >= 77, setuptools_req


def test_citation_cff_cites_the_paper_and_the_package(pyproject):
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    # the keys CFF 1.2.0 requires of the file and of a reference
    for key in ("cff-version", "message", "title", "authors"):
        assert cff.get(key), key
    assert cff["cff-version"] == "1.2.0"
    assert cff["type"] == "software"
    assert cff["version"] == __version__ == pyproject["project"]["version"]
    assert cff["license"] == pyproject["project"]["license"]
    assert all(a.get("name") or a.get("family-names") for a in cff["authors"])
    paper = cff["preferred-citation"]
    for key in ("type", "title", "authors"):
        assert paper.get(key), key
    assert paper["type"] == "article"
    assert paper["title"].startswith("Binarsity: a penalization for one-hot encoded features")
    assert [a["family-names"] for a in paper["authors"]] == [
        "Alaya", "Bussy", "Gaïffas", "Guilloux"
    ]  # fmt: skip
    assert paper["journal"] == "Journal of Machine Learning Research"
    assert (paper["volume"], str(paper["issue"]), paper["start"], paper["end"], paper["year"]) == (
        20, "118", 1, 34, 2019
    )  # fmt: skip


def test_wheel_build_is_wired_into_ci(pyproject):
    run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^bash \.ci/wheel$", run, re.M), ".ci/run does not run .ci/wheel"
    wheel = (ROOT / ".ci" / "wheel").read_text(encoding="utf-8")
    assert "-m build" in wheel and ".ci/wheel_tests" in wheel
    cibw = pyproject["tool"]["cibuildwheel"]
    builds = cibw["build"].split()
    assert builds == ["cp310-*", "cp311-*", "cp312-*", "cp313-*"]
    assert "musllinux" in cibw["skip"]  # manylinux only
    assert ".ci/wheel_tests" in cibw["test-command"]
    assert (ROOT / ".ci" / "wheel_tests").is_file()
    # the smoke subset names only test files that exist
    listed = re.findall(r"tests/(test_\w+\.py)", (ROOT / ".ci" / "wheel_tests").read_text())
    assert listed and all((ROOT / "tests" / name).is_file() for name in listed), listed
