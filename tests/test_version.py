"""Unit tests of ``binarsity_stats._version``: one version, which the package, the
build metadata and the installed distribution (when installed) all report."""

from __future__ import annotations

import re
from pathlib import Path

import tomllib

import binarsity_stats
from binarsity_stats._version import __version__

ROOT = Path(__file__).resolve().parents[1]


def test_the_version_is_a_pep440_release_string():
    assert isinstance(__version__, str)
    assert re.fullmatch(r"\d+\.\d+\.\d+((a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?", __version__)


def test_the_package_and_pyproject_give_the_same_version():
    assert binarsity_stats.__version__ == __version__
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    if "version" in project:
        assert project["version"] == __version__
    else:  # a dynamic version read from this module
        assert "version" in project.get("dynamic", [])
