"""The shipped data set: its exact bytes, shape, types and the counts published with it.

``load_wine_quality`` reads ``binarsity_stats/datasets/wine_quality.csv.gz`` (package
data). Exact checks only: a checksum of the file's bytes and integer counts, no
floating-point fingerprints.
"""

from __future__ import annotations

import gzip
import hashlib
from importlib.resources import files

import numpy as np
import pandas as pd
import pytest

import binarsity_stats as bs
from binarsity_stats import _datasets

NUMERIC = [
    "fixed_acidity", "volatile_acidity", "citric_acid", "residual_sugar", "chlorides",
    "free_sulfur_dioxide", "total_sulfur_dioxide", "density", "pH", "sulphates", "alcohol",
]  # fmt: skip


def test_file_is_package_data_with_the_documented_checksum():
    path = files("binarsity_stats").joinpath("datasets", "wine_quality.csv.gz")
    raw = gzip.decompress(path.read_bytes())
    assert hashlib.sha256(raw).hexdigest() == _datasets.WINE_QUALITY_SHA256
    assert len(path.read_bytes()) < 100_000  # small enough to ship (docs/course/data.md)


def test_shape_columns_types_and_no_missing():
    df = bs.load_wine_quality()
    assert df.shape == (6497, 13)
    assert list(df.columns) == ["colour", *NUMERIC, "quality"]
    assert isinstance(df["colour"].dtype, pd.CategoricalDtype)
    assert list(df["colour"].cat.categories) == ["red", "white"]
    assert all(df[c].dtype == np.float64 for c in NUMERIC)
    assert df["quality"].dtype == np.int64
    assert not df.isna().any().any()
    # red first, then white, as the two source files
    assert (df["colour"].iloc[:1599] == "red").all()
    assert (df["colour"].iloc[1599:] == "white").all()


def test_counts_match_those_published_with_the_data():
    df = bs.load_wine_quality()
    counts = df.groupby("colour", observed=True)["quality"].value_counts().sort_index()
    assert counts["red"].to_dict() == {3: 10, 4: 53, 5: 681, 6: 638, 7: 199, 8: 18}
    assert counts["white"].to_dict() == {3: 20, 4: 163, 5: 1457, 6: 2198, 7: 880, 8: 175,
                                         9: 5}  # fmt: skip
    # genuinely continuous predictors (the point of shipping it): many distinct values
    white = df[df["colour"] == "white"]
    assert white["alcohol"].nunique() == 103
    assert white["density"].nunique() == 890
    # the duplicated rows of the source are kept, not silently dropped
    assert df[df["colour"] == "red"].duplicated().sum() == 240
    assert white.duplicated().sum() == 937


def test_a_changed_file_is_refused(monkeypatch):
    monkeypatch.setattr(_datasets, "WINE_QUALITY_SHA256", "0" * 64)
    with pytest.raises(RuntimeError, match="wine_quality.csv.gz"):
        bs.load_wine_quality()


def test_loader_is_public_and_lazy():
    assert "load_wine_quality" in bs.__all__
    assert bs.load_wine_quality is _datasets.load_wine_quality
