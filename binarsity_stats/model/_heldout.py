"""Scoring any fitted model on new rows: held-out deviance, partial likelihood, AUC, C.

:func:`heldout` puts a binarsity fit and the baselines a statistician compares it with
(statsmodels' GLM and PHReg, lifelines' ``CoxPHFitter``) on one scale: the deviance of
new rows under the model's family (GLMs), or the partial log-likelihood of the new rows'
own risk sets and Harrell's C (Cox). Which model a fit is, and what it predicts, is read
by :mod:`._baselines`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..engine._scoring import weighted_auc
from ..families._cox import concordance_index, encode
from ..families._families import get_family
from ..formula._formula import as_frame, observed_response
from ._baselines import describe_fit

__all__ = ["heldout"]


def _values(arg: Any, data: pd.DataFrame, name: str, n: int) -> np.ndarray | None:
    if arg is None:
        return None
    if isinstance(arg, str):
        if arg not in data.columns:
            raise ValueError(f"heldout: {name}={arg!r} is not a column of the data.")
        arg = data[arg]
    out = np.asarray(arg, dtype=np.float64)
    if out.shape[0] != n:
        raise ValueError(f"heldout: {name} has {out.shape[0]} values for {n} rows.")
    return out


def heldout(
    model: Any,
    data: Any,
    *,
    y: Any = None,
    sample_weight: Any = None,
    offset: Any = None,
) -> pd.Series:
    """Score a fitted model on new rows: held-out deviance (GLMs), partial likelihood (Cox).

    Parameters
    ----------
    model : fitted model
        A binarsity fit (``BinarsityResults``, ``CVResults`` — its ``best_`` —, or a
        ``RefitResults``), a statsmodels ``GLM`` or ``PHReg`` results object, or a
        fitted lifelines ``CoxPHFitter``.
    data : DataFrame or mapping of columns
        The new rows, with the columns the model predicts from and its response.
    y : str, array-like or pair, optional
        The observed response when it cannot be read from ``data`` by the model itself:
        a column name or values (GLMs); for statsmodels' ``PHReg`` (whose status is not
        part of its formula) the pair ``(time, event)`` of column names or arrays.
        Binarsity fits read their formula's left-hand side (``I(affairs > 0)``,
        ``cbind(s, f)``, ``Surv(time, status)`` with R's 1/2 coding) from ``data``;
        statsmodels GLMs the column named as their response; lifelines its
        ``duration_col`` and ``event_col``.
    sample_weight : str or array-like, optional
        Weights of the new rows (a column name or values). Default: the binarsity
        model's weight column when it was given by name, else 1 (statsmodels and
        lifelines fits: 1). A ``cbind`` response multiplies them by its trials.
    offset : str or array-like, optional
        The offset of the new rows (statsmodels GLMs and PHReg need it passed; a
        binarsity model replays its offset column or ``offset()`` term itself).

    Returns
    -------
    Series
        ``model`` (what was scored), ``family`` and ``n`` (rows scored, weighted sum
        ``weight``); GLMs: ``deviance`` (Σ w d(y, μ̂), the family's unit deviance at
        unit dispersion), ``mean deviance`` (per unit weight) and, for the binomial,
        ``AUC``; Cox: ``partial loglik`` (the Breslow partial log-likelihood of the new
        rows' own risk sets, Efron's for a model fitted with Efron's ties),
        ``partial loglik per event`` and ``C`` (Harrell's concordance).

    Raises
    ------
    TypeError
        A model of another kind.
    ValueError
        A response, weight or offset that cannot be read (named), a stratified Cox
        model, or new rows with missing values.

    Notes
    -----
    Held-out deviances are comparable between models of the same family scored on the
    same rows with the same weights; a lower value is better. The partial
    log-likelihood of the test rows' risk sets does not depend on the baseline
    hazard, so Cox models from the three tools score on one scale.

    Examples
    --------
    >>> import binarsity_stats as bstats
    >>> import statsmodels.formula.api as smf, statsmodels.api as sm
    >>> df = bstats.load_fair()
    >>> df["event"] = (df["affairs"] > 0).astype(int)
    >>> train, test = df.iloc[:4000], df.iloc[4000:]
    >>> steps = bstats.glm("event ~ bin(age) + bin(yrs_married)", train,
    ...                    family="binomial").fit(lam=1e-3)
    >>> linear = smf.glm("event ~ age + yrs_married", train,
    ...                  family=sm.families.Binomial()).fit()
    >>> bool(bstats.heldout(steps, test)["n"] == bstats.heldout(linear, test)["n"])
    True
    """
    data = as_frame(data)
    fit = describe_fit(model, "heldout")
    n = len(data)
    weights = _values(sample_weight, data, "sample_weight", n)
    if weights is None and fit.weight_column is not None:
        weights = _values(fit.weight_column, data, "sample_weight", n)
    w = np.ones(n) if weights is None else weights
    off = _values(offset, data, "offset", n)
    family = get_family(fit.family)
    eta = np.asarray(fit.predict_link(data, off), dtype=np.float64).ravel()
    row: dict[str, Any] = {"model": fit.kind, "family": family.name, "n": n,
                           "weight": float(w.sum())}  # fmt: skip
    if family.survival:
        if fit.strata:
            raise ValueError(
                "heldout: a stratified Cox model is not scored (the risk sets of new rows "
                "would need their strata); score each stratum's rows separately."
            )
        if y is not None:
            if not isinstance(y, tuple | list) or len(y) != 2:
                raise ValueError("heldout: y must be the pair (time, event) for a Cox model.")
            te = np.column_stack([_values(v, data, "y", n) for v in y])
        elif fit.formula is not None:
            te, _ = observed_response(fit.formula, data, family, fit.response)
        elif fit.survival_columns is not None:
            te = np.column_stack([_values(c, data, "y", n) for c in fit.survival_columns])
        else:
            raise ValueError(
                f"heldout: pass y=(time, event) to score a {fit.kind} (its status is not "
                "part of its formula)."
            )
        te = np.asarray(te, dtype=np.float64)
        if not (np.all(np.isfinite(te)) and np.all(np.isfinite(eta)) and np.all(np.isfinite(w))):
            raise ValueError("heldout: the new rows hold missing or infinite values.")
        packed = encode(te[:, 0], te[:, 1])
        llf = float(family.log_likelihood(packed, np.exp(eta), freq_weights=w, eta=eta))
        events = float(np.sum(w * (te[:, 1] > 0)))
        row.update({
            "partial loglik": llf,
            "partial loglik per event": llf / events if events > 0 else np.nan,
            "C": concordance_index(te[:, 0], te[:, 1], eta, w),
        })  # fmt: skip
        return pd.Series(row, dtype=object)
    trials = None
    if y is not None:
        obs = _values(y, data, "y", n)
    elif fit.formula is not None:
        obs, trials = observed_response(fit.formula, data, family, fit.response)
    elif fit.response_column is not None and fit.response_column in data.columns:
        obs = _values(fit.response_column, data, "y", n)
    else:
        raise ValueError(
            f"heldout: the response of this {fit.kind} is not a column of the data; pass "
            "y= (a column name or values)."
        )
    if trials is not None:
        w = w * trials
    if not (np.all(np.isfinite(obs)) and np.all(np.isfinite(eta)) and np.all(np.isfinite(w))):
        raise ValueError("heldout: the new rows hold missing or infinite values.")
    family.validate_y(obs, proportions=True)
    deviance = float(family.deviance_eta(obs, eta, w))
    row.update({"deviance": deviance,
                "mean deviance": deviance / row["weight"] if row["weight"] > 0 else np.nan})
    if family.binary:
        row["AUC"] = weighted_auc(obs, eta, w) if np.all((obs == 0) | (obs == 1)) else np.nan
    return pd.Series(row, dtype=object)
