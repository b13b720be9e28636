"""Robust (sandwich) covariance of a GLM refit: ``refit(cov_type="HC0" | "HC1" | "HC3")``.

For a GLM the estimating equations are Σ_i s_i x_i = 0 with the score
s_i = w_i (y_i − μ_i) μ'(η_i) / V(μ_i) (R's ``sandwich::estfun.glm``: working residual
times working weight); the bread is (Xᵀ W X)⁻¹ with the IRLS weights
W_i = w_i μ'(η_i)² / V(μ_i). Then (R's ``sandwich::vcovHC``)

* ``HC0``: B (Σ s_i² x_i x_iᵀ) B (White's; statsmodels' ``cov_type="HC0"``),
* ``HC1``: HC0 × n / (n − k),
* ``HC3``: B (Σ s_i² / (1 − h_i)² x_i x_iᵀ) B with the hat values h_i = W_i x_iᵀ B x_i.

The rows are read a block at a time (never the n × k design for a refit built from
sufficient statistics), and the covariance replaces the model-based one in the refit's
results, so standard errors, Wald tests, intervals and ``get_prediction`` use it (with
normal quantiles, as R's ``coeftest`` with ``vcovHC``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["COV_TYPES", "apply_robust_cov"]

COV_TYPES = ("nonrobust", "HC0", "HC1", "HC3")

#: Rows per block when the design is read from the segment codes.
BLOCK_ROWS = 65536


def _row_blocks(sm: Any):
    """(start, stop, X block) of the refit's design, a block at a time."""
    model = sm.model
    design = getattr(model, "design", None)
    n = model.endog.shape[0]
    if design is not None and hasattr(design, "rows"):  # GLMRefit: from the codes
        for start in range(0, n, BLOCK_ROWS):
            stop = min(n, start + BLOCK_ROWS)
            yield start, stop, design.rows(start, stop)
        return
    X = np.asarray(model.exog, dtype=np.float64)
    yield 0, n, X


def robust_cov(sm: Any, cov_type: str) -> np.ndarray:
    """The sandwich covariance of a statsmodels-like GLM result.

    Parameters
    ----------
    sm : GLMResults or GLMRefit
        The refit's results (its ``model`` with ``endog``, weights and family).
    cov_type : {"HC0", "HC1", "HC3"}
        Which estimator.

    Returns
    -------
    ndarray of shape (k, k)
    """
    model = sm.model
    fam = model.family
    y = np.asarray(model.endog, dtype=np.float64)
    n = y.shape[0]
    w = np.ones(n)
    for name in ("var_weights", "freq_weights"):
        value = getattr(model, name, None)
        if value is not None:
            w = w * np.asarray(value, dtype=np.float64)
    mu = np.asarray(sm.fittedvalues, dtype=np.float64)
    deriv = 1.0 / np.asarray(fam.link.deriv(mu), dtype=np.float64)  # dμ/dη
    var = np.asarray(fam.variance(mu), dtype=np.float64)
    score = w * (y - mu) * deriv / var
    irls = w * deriv**2 / var
    bread = np.asarray(sm.normalized_cov_params, dtype=np.float64)
    k = bread.shape[0]
    meat = np.zeros((k, k))
    for start, stop, X in _row_blocks(sm):
        s = score[start:stop]
        if cov_type == "HC3":
            h = irls[start:stop] * np.einsum("ij,jk,ik->i", X, bread, X, optimize=True)
            s = s / np.maximum(1.0 - h, 1e-12)
        Xs = X * s[:, None]
        meat += Xs.T @ Xs
    cov = bread @ meat @ bread
    if cov_type == "HC1":
        cov *= n / max(n - k, 1)
    return cov


def apply_robust_cov(sm: Any, cov_type: str) -> Any:
    """Replace the model-based covariance of ``sm`` by a sandwich one (in place).

    Raises
    ------
    ValueError
        An unknown ``cov_type``.
    """
    if cov_type not in COV_TYPES:
        raise ValueError(f"cov_type must be one of {COV_TYPES}; got {cov_type!r}.")
    if cov_type == "nonrobust":
        return sm
    cov = robust_cov(sm, cov_type)
    if type(sm).__module__.startswith("statsmodels"):
        # statsmodels' own mechanism for a robust covariance (get_robustcov_results), on
        # the results behind the pandas wrapper
        inner = getattr(sm, "_results", sm)
        inner.cov_params_default = cov
        inner.cov_type = cov_type
        inner.cov_kwds = {"description": f"sandwich covariance ({cov_type}, as R's vcovHC)"}
        inner.use_t = False
        for cached in ("bse", "tvalues", "pvalues"):
            getattr(inner, "_cache", {}).pop(cached, None)
    else:  # GLMRefit: scale × normalized_cov_params is its covariance
        sm.normalized_cov_params = cov / sm.scale
        sm.cov_type = cov_type
        sm.use_t = False
    return sm
