"""Validation of user arguments, in one place and with one wording per argument.

Every public entry (formula models, estimators, the engine's ``solve``/``Prepared``,
the prox functions, the CLI) checks its arguments with the functions here, so the same
input gets the same answer, and the same message naming the argument, everywhere.
This module is part of the engine layer: it imports NumPy only (no pandas, formulaic,
scikit-learn or matplotlib).
"""

from __future__ import annotations

__all__: list[str] = []

# --------------------------------------------------------------------------- index arrays
# (block pointers, codes: whatever a kernel will use to index memory)


# --------------------------------------------------------------------------- scalar arguments
# (λ, tol, n_bins, n_jobs, random_state, fit_intercept, warm_start, ...)


# --------------------------------------------------------------------------- row arrays
# (sample weights, offsets, groups)
