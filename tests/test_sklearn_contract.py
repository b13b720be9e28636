"""scikit-learn's estimator contract at the defaults users run, on any machine.

What is proved here:

* every check of ``parametrize_with_checks`` passes for the four estimators at their
  default parameters, except the checks the package declares through scikit-learn's own
  mechanism (``expected_failed_checks``), each with its reason;
* the one declared failure is by design and nothing else: BinarsityGLM and
  BinarsityClassifier at ``lam="theory"`` read ``sample_weight`` as R's prior weights
  (Kish's effective n in λ), so integer weights and repeated rows get different λ; with
  ``weights_kind="freq"`` or a fixed λ the same check passes, and the CV estimators
  (which choose λ by CV, not by the theory) declare nothing;
* the CV estimators pass the weights-vs-repeated-rows check at defaults because the λ
  with the best CV mean is chosen with ties to the largest λ, a tie being a difference
  below 1e-12 relative (the rounding of the fold fits): on scikit-learn's 15-row problem
  the fold fits at small λ stop where they started (cv_tol) and the CV curve is flat but
  for its last bits, which differ between weights and repeated rows (and between CPUs);
  before, ``argmin`` picked a neighbouring λ by those bits and the check failed.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sklearn")

from sklearn.utils.estimator_checks import (  # noqa: E402
    check_sample_weight_equivalence_on_dense_data,
    parametrize_with_checks,
)

from binarsity_stats import (  # noqa: E402
    BinarsityClassifier,
    BinarsityClassifierCV,
    BinarsityGLM,
    BinarsityGLMCV,
)
from binarsity_stats.sklearn._estimator import expected_failed_checks  # noqa: E402
from binarsity_stats.engine._scoring import best_position, select_lambda

DEFAULTS = [BinarsityGLM(), BinarsityClassifier(), BinarsityGLMCV(), BinarsityClassifierCV()]


@parametrize_with_checks(DEFAULTS, expected_failed_checks=expected_failed_checks)
def test_sklearn_checks_at_default_parameters(estimator, check):
    check(estimator)


def test_the_declared_failures_have_reasons_and_only_theory_with_prior_weights_has_one():
    declared = {type(e).__name__: expected_failed_checks(e) for e in DEFAULTS}
    assert set(declared["BinarsityGLM"]) == {"check_sample_weight_equivalence_on_dense_data"}
    assert declared["BinarsityClassifier"] == declared["BinarsityGLM"]
    assert "Kish" in declared["BinarsityGLM"]["check_sample_weight_equivalence_on_dense_data"]
    assert declared["BinarsityGLMCV"] == {} and declared["BinarsityClassifierCV"] == {}
    for est in (BinarsityGLM(weights_kind="freq"), BinarsityGLM(lam=0.05),
                BinarsityClassifier(weights_kind="freq")):  # fmt: skip
        assert expected_failed_checks(est) == {}


def test_the_declared_failure_is_the_theory_lambda_of_prior_weights():
    # at the default the check fails (λ from Kish's n) ...
    with pytest.raises(AssertionError, match="not equivalent to fitting with removed"):
        check_sample_weight_equivalence_on_dense_data("BinarsityGLM", BinarsityGLM())
    # ... and holds when the weights are frequencies or λ is fixed
    check_sample_weight_equivalence_on_dense_data(
        "BinarsityGLM", BinarsityGLM(weights_kind="freq"))  # fmt: skip
    check_sample_weight_equivalence_on_dense_data("BinarsityGLM", BinarsityGLM(lam=0.05))


@pytest.mark.parametrize("est", [BinarsityGLMCV(), BinarsityClassifierCV()], ids=repr)
def test_cv_estimators_weights_equal_repeated_rows_at_defaults(est):
    check_sample_weight_equivalence_on_dense_data(type(est).__name__, est)


def test_cv_choice_ignores_differences_at_the_rounding_level():
    # a CV curve flat at its minimum but for its last bits (as fold fits that stop where
    # they started give): the largest λ of the flat stretch, whatever the bits say
    flat = 2.597538952805256e-09
    wiggles = flat * (1 + np.array([0.0, -2.3e-15, -1.2e-15, 0.0, -2.3e-15]))
    curve = np.concatenate([[7.8e-09, 7.8e-09], wiggles])
    assert best_position(curve) == 2
    scores = np.vstack([curve, curve, curve])
    _, _, idx_min, idx_1se = select_lambda(scores, "deviance")
    assert idx_min == 2 and idx_1se <= idx_min
    # a difference above the ties' 1e-12 is a better λ; a maximised score ties alike
    curve[5] = flat * (1 - 1e-10)
    assert best_position(curve) == 5
    auc = np.array([0.7, 0.8, 0.8 * (1 + 1e-15), 0.8 * (1 - 1e-15)])
    _, _, idx_min, _ = select_lambda(np.vstack([auc, auc]), "auc")
    assert idx_min == 1
    # NaN (a score undefined at some λ) is never the best
    assert best_position(np.array([np.nan, 3.0, 2.0, 2.0])) == 2
