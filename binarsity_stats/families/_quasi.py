"""R's quasi families: the Poisson and binomial fits with an estimated dispersion.

``family="quasipoisson"`` and ``"quasibinomial"`` fit exactly what ``"poisson"`` and
``"binomial"`` fit (the same loss, kernels and solutions); what changes is the
inference. The dispersion φ is estimated by Pearson's χ² / df (R's
``summary.glm``) and used everywhere a dispersion enters: the theory λ, the summary,
the refit's standard errors (statsmodels' ``scale="X2"``, t quantiles with the
residual df), ``anova``'s default F test. A quasi family has no likelihood: its
log-likelihood, AIC and BIC are NaN, as R reports ``NA``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._builtin import Binomial, Poisson

__all__ = ["QuasiBinomial", "QuasiPoisson"]


class _Quasi:
    """What the quasi families change: an estimated dispersion and no likelihood."""

    estimate_dispersion = True
    dispersion_name = "phi"
    overdispersion_threshold = None  # φ is estimated and used: no over-dispersion note
    _statsmodels_name = ""

    def to_statsmodels(self) -> Any:
        """statsmodels' family of the same mean and variance (the refit passes
        ``scale="X2"``, statsmodels' quasi-likelihood).

        Returns
        -------
        statsmodels.genmod.families.Family
        """
        from statsmodels.genmod import families  # not statsmodels.api (tsa, graphics…)

        return getattr(families, self._statsmodels_name)()

    def log_likelihood(self, y: np.ndarray, mu: np.ndarray, var_weights: Any = None,
                       freq_weights: Any = None, df: float = 0.0) -> float:  # fmt: skip
        """NaN: a quasi-likelihood has no log-likelihood (R: ``logLik`` and AIC ``NA``).

        Parameters
        ----------
        y, mu, var_weights, freq_weights, df
            As for the other families; unused.

        Returns
        -------
        float
        """
        return float("nan")

    def header_rows(self) -> list[tuple[str, str]]:
        """Rows of the summary header: the family, its link, how φ is estimated.

        Returns
        -------
        list of (str, str)
        """
        return [("Model Family", type(self).__name__), ("Link Function", self.link),
                ("Dispersion", "estimated (Pearson chi2 / df)")]  # fmt: skip


class QuasiPoisson(_Quasi, Poisson):
    """R's ``quasipoisson``: the Poisson fit, variance φ μ with φ estimated."""

    name = "quasipoisson"
    _statsmodels_name = "Poisson"


class QuasiBinomial(_Quasi, Binomial):
    """R's ``quasibinomial``: the binomial fit, variance φ μ (1 − μ) with φ estimated."""

    name = "quasibinomial"
    _statsmodels_name = "Binomial"
