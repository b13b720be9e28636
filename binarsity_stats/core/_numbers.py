"""What counts as a number for the checkers of ``core/_validation`` and ``core/_rows``.

A bool is not a number and a number is not a bool; NumPy scalars count as their
Python kinds; 0-d arrays do not.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

__all__ = ["LOSS_LIMIT"]

#: Largest average loss of the offset-only model that a fit accepts: beyond it, the
#: loss of a solver's trial point (a few times larger) overflows. For the gaussian
#: family this is the ~1e150 bound on |y − offset| that ``y`` itself has.
LOSS_LIMIT = 1e300


def _is_bool(value: Any) -> bool:
    return isinstance(value, (bool, np.bool_))


def _is_real(value: Any) -> bool:
    """A real number that is not a bool (Python or NumPy scalar, 0-d arrays excluded)."""
    return isinstance(value, numbers.Real) and not _is_bool(value)


def _is_integer(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not _is_bool(value)
