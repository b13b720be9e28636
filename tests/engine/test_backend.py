"""``engine/_backend``: declared capabilities and the one place that refuses a request.

What is proved: a backend that declares every feature (the in-memory engine) refuses
nothing; a missing feature, block kind or CV score is refused with a message naming what
needs it and the backend; the first missing feature of a request is the one named.
"""

import pytest

from binarsity_stats.engine._backend import (
    FEATURES,
    IN_MEMORY,
    Capabilities,
    check_supported,
    kind_feature,
)
from binarsity_stats.penalty._blocks import KINDS


def test_the_in_memory_engine_supports_every_feature_kind_and_score():
    request = [(f, f) for f in FEATURES] + [(kind_feature(k), k) for k in KINDS]
    request.append(("scoring:auc", "scoring='auc'"))
    check_supported(IN_MEMORY, request)  # nothing raised


def test_a_missing_feature_is_refused_naming_the_term_and_the_backend():
    caps = Capabilities("toy", frozenset({kind_feature("tv"), "scoring:deviance"}))
    check_supported(caps, [(kind_feature("tv"), "term 'bin(x)'")])
    with pytest.raises(ValueError, match=(
        r"^term 'bin\(x, monotone='increasing'\)': block kind 'increasing' is not supported "
        r"by the toy backend \(it supports block kinds \['tv'\], scoring \['deviance'\]\)\.$"
    )):  # fmt: skip
        check_supported(caps, [
            (kind_feature("tv"), "term 'bin(z)'"),
            (kind_feature("increasing"), "term 'bin(x, monotone='increasing')'"),
            ("by_group", "term 'bin(x):C(g)'"),
        ])  # fmt: skip
    with pytest.raises(ValueError, match=r"^scoring='mse': held-out score 'mse' is not"):
        check_supported(caps, [("scoring:mse", "scoring='mse'")])
    with pytest.raises(ValueError, match=r"^family 'cox': a loss that is not a sum over rows"):
        check_supported(caps, [("coupled_rows", "family 'cox'")])


def test_capabilities_are_declared_not_guessed():
    caps = Capabilities("toy", frozenset())
    assert not caps.supports("relax") and IN_MEMORY.supports("relax")
    with pytest.raises(ValueError, match="relaxed cross-validation"):
        check_supported(caps, [("relax", "relax=True")])
