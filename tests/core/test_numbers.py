"""Unit tests of ``binarsity_stats.core._numbers``: what counts as a number for the
checkers (a bool is not a number; NumPy scalars count as their Python kinds; 0-d
arrays do not) and the loss limit of an offset-only model."""

from __future__ import annotations

import decimal
import fractions

import numpy as np
import pytest

from binarsity_stats.core._numbers import LOSS_LIMIT, _is_bool, _is_integer, _is_real

#: (value, is_bool, is_real, is_integer)
CASES = [
    (True, True, False, False),
    (np.bool_(False), True, False, False),
    (1, False, True, True),
    (np.int8(1), False, True, True),
    (np.uint64(7), False, True, True),
    (1.5, False, True, False),
    (np.float32(1.0), False, True, False),
    (float("nan"), False, True, False),
    (fractions.Fraction(1, 3), False, True, False),
    (decimal.Decimal("1.5"), False, False, False),  # not a numbers.Real
    (1 + 0j, False, False, False),
    ("1", False, False, False),
    (None, False, False, False),
    (np.array(1.0), False, False, False),  # 0-d arrays are not scalars
    (np.array(1), False, False, False),
    (np.array(True), False, False, False),
]


@pytest.mark.parametrize(("value", "boolean", "real", "integer"), CASES)
def test_kinds(value, boolean, real, integer):
    assert _is_bool(value) is boolean
    assert _is_real(value) is real
    assert _is_integer(value) is integer


def test_loss_limit_leaves_room_for_trial_points():
    # a solver's trial point has a loss a few times the offset-only loss: it must stay finite
    assert np.isfinite(LOSS_LIMIT * 100)
    assert LOSS_LIMIT == 1e300
    # gaussian: the half squared error of |y - offset| = 1e150 is 5e299, within the limit
    assert 0.5 * 1e150**2 <= LOSS_LIMIT < 0.5 * 1e151**2
