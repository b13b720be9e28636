"""Comparing fits: analysis of deviance between nested refits, and a table of fits.

:func:`anova` follows R's ``anova(m1, m2, ..., test=)`` for GLMs (``anova.glmlist`` and
``stat.anova``): one row per model with its residual df and deviance, then for every
model after the first the change in df and deviance from the previous one and the test
statistic. The dispersion used by the tests is that of the model with the fewest
residual df (R: the "biggest" model); it is 1 for the binomial and the poisson. Only
unpenalised refits (:class:`~binarsity_stats.RefitResults`) are compared: the
likelihood-ratio theory does not hold for penalised fits, and the selection makes even
the refits' tests conditional on it (see the refit's notes).

:func:`compare` lays penalised fits side by side: df, deviance, AIC, BIC, cut-points
kept, λ and, when λ came from cross-validation, the CV score and its standard error.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

from ..core._statistics import pearson_dispersion

__all__ = ["anova", "compare"]

#: Relative residual below which a column of the smaller design counts as inside the
#: column space of the larger one.
NESTED_RTOL = 1e-7


class _GLMEntry:
    """One model of a GLM anova: its statsmodels-like results, family and column names."""

    def __init__(self, sm: Any, family: Any, names: list[str]) -> None:
        self.sm_results, self.family, self.names = sm, family, names


def _family_key(family: Any) -> tuple:
    from ..families._families import get_family

    d = get_family(family).to_dict()
    return d.get("name"), d.get("link"), d.get("ties"), d.get("var_power")


def _as_refit(obj: Any, k: int) -> Any:
    from ._baselines import is_lifelines_cox, is_statsmodels_glm, is_statsmodels_phreg
    from ._refit import RefitResults
    from ._results import BinarsityResults

    if isinstance(obj, RefitResults) or is_statsmodels_glm(obj) or is_statsmodels_phreg(obj):
        return obj
    if isinstance(obj, BinarsityResults):
        raise TypeError(
            f"anova: model {k} is a penalised fit (BinarsityResults); likelihood-ratio "
            "tests need unpenalised fits: pass res.refit()"
        )
    if is_lifelines_cox(obj):
        raise TypeError(
            f"anova: model {k} is a lifelines CoxPHFitter, which does not keep its design, "
            "so whether the models are nested cannot be checked. Fit the same model with "
            "statsmodels (smf.phreg(formula, data, status=..., ties=...)) for anova, or "
            "compare by AIC/BIC and held-out partial likelihood with bstats.compare(..., "
            "test=new_rows)."
        )
    raise TypeError(
        f"anova: model {k} is a {type(obj).__name__}; expected the RefitResults of "
        "res.refit(), or a statsmodels GLM or PHReg result"
    )


def _glm_entry(obj: Any) -> _GLMEntry:
    from ._refit import RefitResults

    if isinstance(obj, RefitResults):
        return _GLMEntry(obj.sm_results, obj.parent.model.family, list(obj.names))
    return _GLMEntry(obj, obj.model.family, list(obj.model.exog_names))


def _is_survival(obj: Any) -> bool:
    from ._baselines import is_statsmodels_phreg
    from ._refit import RefitResults

    if isinstance(obj, RefitResults):
        return bool(obj.parent.model.family.survival)
    return is_statsmodels_phreg(obj)


def _weights(sm_model: Any) -> tuple[str, np.ndarray]:
    n = sm_model.endog.shape[0]
    fw = getattr(sm_model, "freq_weights", None)
    vw = getattr(sm_model, "var_weights", None)
    fw = np.ones(n) if fw is None else np.asarray(fw, dtype=np.float64)
    vw = np.ones(n) if vw is None else np.asarray(vw, dtype=np.float64)
    return ("freq" if np.any(fw != 1) else "analytic"), fw * vw


def _offset(sm_model: Any) -> np.ndarray:
    """The offset of a statsmodels-like GLM, its ``exposure`` (stored logged) included."""
    n = sm_model.endog.shape[0]
    total = np.zeros(n)
    for name in ("offset", "exposure"):
        value = getattr(sm_model, name, None)
        if value is not None:
            total = total + np.asarray(value, dtype=np.float64)
    return total


def _same_data(a: Any, b: Any, ka: int, kb: int) -> None:
    """Refuse two fits that are not fitted to the same rows, weights, offset, family."""
    ma, mb = a.sm_results.model, b.sm_results.model
    pair = f"models {ka} and {kb}"
    fa, fb = a.family, b.family
    if _family_key(fa) != _family_key(fb):
        from ..families._families import get_family

        fa, fb = get_family(fa), get_family(fb)
        raise ValueError(
            f"anova: {pair} have different families ({fa.name} with link {fa.link} "
            f"vs {fb.name} with link {fb.link}); a deviance test needs one family"
        )
    if ma.endog.shape != mb.endog.shape or not np.array_equal(ma.endog, mb.endog):
        raise ValueError(
            f"anova: {pair} are not fitted to the same response rows ({ma.endog.shape[0]} "
            f"vs {mb.endog.shape[0]} rows, or different values; a split refit estimates "
            "on its own half)"
        )
    (ka_, wa), (kb_, wb) = _weights(ma), _weights(mb)
    if ka_ != kb_ or not np.array_equal(wa, wb):
        raise ValueError(f"anova: {pair} have different sample weights")
    if not np.allclose(_offset(ma), _offset(mb), rtol=1e-12, atol=1e-12):
        raise ValueError(f"anova: {pair} have different offsets")


def _cox_rows(fit: Any) -> np.ndarray | None:
    """The training rows a Cox refit was estimated on (None: all of them)."""
    split = getattr(fit, "split", None)
    return None if not split else np.sort(np.asarray(split["estimate_rows"]))


class _CoxEntry:
    """One model of a Cox anova: the data it was fitted to, its design and likelihood."""

    def __init__(self, obj: Any) -> None:
        from ._refit import RefitResults

        if isinstance(obj, RefitResults):
            m = obj.parent.model
            rows = _cox_rows(obj)
            pick = (lambda a: a) if rows is None else (lambda a: a[rows])  # noqa: E731
            surv = np.asarray(m.survival, dtype=np.float64)
            self.times, self.status = pick(surv[:, 0]), pick(surv[:, 1])
            self.weights = pick(np.asarray(m.sample_weight, float)) if m.weighted else None
            self.offset = None if m.offset is None else pick(np.asarray(m.offset, float))
            strata = getattr(m, "strata", None)
            self.strata = None if strata is None else pick(np.asarray(strata, dtype=str))
            self.ties = m.family.to_dict().get("ties", "breslow")
            X = np.asarray(obj.parent._selected_matrix(m.design), dtype=np.float64)
            self.design = pick(X)
            self.names = list(obj.names)
            self.npar = float(len(obj.names) - len(getattr(obj, "non_identified", []) or []))
        else:  # statsmodels PHReg
            m = obj.model
            self.times = np.asarray(m.endog, dtype=np.float64)
            self.status = np.asarray(m.status, dtype=np.float64)
            self.weights = None
            self.offset = None if m.offset is None else np.asarray(m.offset, float)
            strata = getattr(m, "strata", None)
            self.strata = None if strata is None else np.asarray(strata).astype(str)
            self.ties = str(m.ties)
            self.design = np.asarray(m.exog, dtype=np.float64)
            self.names = list(m.exog_names)
            self.npar = float(np.linalg.matrix_rank(self.design)) if self.design.size else 0.0
        self.llf = float(obj.sm_results.llf if isinstance(obj, RefitResults) else obj.llf)


def _cox_same_data(a: _CoxEntry, b: _CoxEntry, ka: int, kb: int) -> None:
    """Refuse two Cox fits not fitted to the same times, events, weights, offset, strata."""
    pair = f"models {ka} and {kb}"
    if a.ties != b.ties:
        raise ValueError(f"anova: {pair} are Cox models with different ties ({a.ties} vs "
                         f"{b.ties})")  # fmt: skip

    def same(x: Any, y: Any) -> bool:
        if x is None or y is None:
            return x is None and y is None
        return np.shape(x) == np.shape(y) and np.array_equal(np.asarray(x), np.asarray(y))

    if not (same(a.times, b.times) and same(a.status > 0, b.status > 0)):
        raise ValueError(
            f"anova: {pair} are not fitted to the same survival times and events (a "
            "split refit estimates on its own half)"
        )
    if not same(a.weights, b.weights):
        raise ValueError(f"anova: {pair} have different sample weights")
    zero = np.zeros(a.times.shape[0])
    oa = zero if a.offset is None else a.offset
    ob = zero if b.offset is None else b.offset
    if not np.allclose(oa, ob, rtol=1e-12, atol=1e-12):
        raise ValueError(f"anova: {pair} have different offsets")
    if not same(a.strata, b.strata):
        raise ValueError(
            f"anova: {pair} have different strata (the partial likelihoods are not nested)"
        )


def _cox_anova(fits: list, test: str | None) -> pd.DataFrame:
    """R's ``anova(coxph1, coxph2, ...)``: partial likelihood ratio tests, model by model."""
    from scipy import stats

    from ..families._families import get_family

    if test not in (None, "Chisq", "LRT"):
        raise ValueError(
            f"test must be 'Chisq' or 'LRT' for Cox refits (the partial likelihood ratio "
            f"test); got {test!r}"
        )
    entries = [_CoxEntry(f) for f in fits]
    for k in range(1, len(entries)):
        _cox_same_data(entries[k - 1], entries[k], k, k + 1)
    loglik = np.array([e.llf for e in entries])
    # parameters estimated (R: the non-NA coefficients), collinear columns not counted
    npar = np.array([e.npar for e in entries], dtype=np.float64)
    for k in range(1, len(entries)):
        xa, xb = entries[k - 1].design, entries[k].design
        small, large = (xa, xb) if npar[k - 1] <= npar[k] else (xb, xa)
        if not is_nested(small, large):
            raise ValueError(
                f"anova: models {k} and {k + 1} are not nested: the design of the smaller "
                "(its selected cut-points and terms) is not inside the column space of "
                "the larger one. Likelihood-ratio tests compare nested models only; "
                "compare non-nested fits by AIC/BIC with bstats.compare()."
            )
    ddf = np.r_[np.nan, np.diff(npar)]
    chisq = np.r_[np.nan, 2.0 * np.diff(loglik)]
    with np.errstate(invalid="ignore"):
        p = stats.chi2.sf(np.abs(chisq), np.abs(ddf))
    p[ddf == 0] = np.nan
    table = pd.DataFrame(
        {"loglik": loglik, "Chisq": np.abs(chisq) + 0.0, "Df": np.abs(ddf) + 0.0,
         "Pr(>|Chi|)": p},
        index=pd.Index([f"Model {k}" for k in range(1, len(fits) + 1)], dtype=object),
    )  # fmt: skip
    table.attrs.update(
        test="Chisq", dispersion=1.0, family=get_family(("cox", entries[0].ties)).label,
        models=[e.names for e in entries],
    )  # fmt: skip
    return table


def is_nested(small: np.ndarray, large: np.ndarray, rtol: float = NESTED_RTOL) -> bool:
    """Whether the column space of ``small`` lies inside that of ``large``.

    Parameters
    ----------
    small, large : ndarray of shape (n, p) and (n, q)
        Two design matrices on the same rows.
    rtol : float, default=NESTED_RTOL
        Largest relative residual ‖x − P x‖ / ‖x‖ of a column x of ``small`` projected
        on the columns of ``large``.

    Returns
    -------
    bool
    """
    small = np.asarray(small, dtype=np.float64)
    large = np.asarray(large, dtype=np.float64)
    if small.shape[1] == 0:
        return True
    if large.shape[1] == 0:
        return bool(np.all(small == 0))
    # an orthonormal basis of the larger design's column space (rank-revealing SVD)
    u, s, _ = np.linalg.svd(large, full_matrices=False)
    keep = s > s[0] * max(large.shape) * np.finfo(float).eps if s.size else s > 0
    u = u[:, keep]
    resid = small - u @ (u.T @ small)
    norms = np.linalg.norm(small, axis=0)
    return bool(np.all(np.linalg.norm(resid, axis=0) <= rtol * np.maximum(norms, 1e-300)))


def anova(*models: Any, test: str | None = None) -> pd.DataFrame:
    """Analysis of deviance between nested unpenalised refits (R's ``anova``).

    Parameters
    ----------
    *models : RefitResults
        Two or more refits (``res.refit()``) on the same rows, response, weights,
        offset and family, each nested in the next or containing it (the column space of
        the smaller design inside that of the larger), in the order the table lists
        them (usually smallest first).
    test : {"Chisq", "LRT", "F"}, optional
        The test of each change: ``"Chisq"`` (or ``"LRT"``) compares the change of
        deviance divided by the dispersion with a χ² on the change of df; ``"F"``
        divides the change of deviance per df by the dispersion and compares with
        F(Δdf, residual df of the model with fewest residual df). Default: ``"F"`` for a
        family whose dispersion is estimated (gaussian, gamma, Tweedie), ``"Chisq"``
        otherwise (R ≥ 4.4's default). The dispersion is 1 for the binomial and the
        poisson, else the Pearson estimate χ²/df of the model with fewest residual df.

    Returns
    -------
    DataFrame
        One row per model (``Model 1``, ...): ``Resid. Df``, ``Resid. Dev``, ``Df``,
        ``Deviance`` (changes from the previous row; empty on the first) and ``F`` and
        ``Pr(>F)``, or ``Pr(>Chi)``. ``attrs`` holds the test, the dispersion and the
        design column names of each model. For Cox refits (``family="cox"``) the table
        is R's ``anova`` of ``coxph`` fits: ``loglik`` (the partial log-likelihood),
        ``Chisq`` (twice the change of the partial log-likelihood from the previous
        row: the partial likelihood ratio statistic), ``Df`` (the change in the number
        of parameters) and ``Pr(>|Chi|)`` (χ² on ``Df``); ``test`` must be
        ``"Chisq"`` (or ``"LRT"``, or omitted).

    Raises
    ------
    ValueError
        Fewer than two models, a pair that is not nested or not fitted to the same
        data, or an unknown ``test``.
    TypeError
        An argument that is not a refit.

    Notes
    -----
    Residual df are statsmodels' ``df_resid``: observations minus parameters, where
    observations are the rows (analytic weights, statsmodels' ``var_weights``) or the
    sum of the weights (frequency weights, ``freq_weights``). The deviances include the
    weights. The tests are conditional on the cut-points selected by the penalised fits
    (chosen on the same data), as the refits' standard errors are.

    Examples
    --------
    >>> import binarsity_stats as bstats
    >>> df = bstats.load_fair()
    >>> df["event"] = (df["affairs"] > 0).astype(int)
    >>> small = bstats.glm("event ~ bin(age)", df, family="binomial").fit(lam=1e-3)
    >>> large = bstats.glm("event ~ bin(age) + bin(rate_marriage)", df,
    ...                family="binomial").fit(lam=1e-3)
    >>> table = bstats.anova(small.refit(), large.refit())
    >>> list(table.columns)
    ['Resid. Df', 'Resid. Dev', 'Df', 'Deviance', 'Pr(>Chi)']
    """
    from scipy import stats

    if len(models) < 2:
        raise ValueError(f"anova needs at least two refits to compare; got {len(models)}")
    fits = [_as_refit(m, k) for k, m in enumerate(models, start=1)]
    survival = [_is_survival(f) for f in fits]
    if any(survival):
        if not all(survival):
            raise ValueError("anova: a Cox model cannot be compared with a GLM")
        return _cox_anova(fits, test)
    from ..families._families import get_family

    fits = [_glm_entry(f) for f in fits]
    family = get_family(fits[0].family)
    if test is None:
        test = "F" if family.estimate_dispersion else "Chisq"
    if test not in ("Chisq", "LRT", "F"):
        raise ValueError(f"test must be 'Chisq', 'LRT' or 'F'; got {test!r}")
    if test == "LRT":
        test = "Chisq"
    for k in range(1, len(fits)):
        _same_data(fits[k - 1], fits[k], k, k + 1)
        a, b = fits[k - 1].sm_results, fits[k].sm_results
        xa, xb = np.asarray(a.model.exog), np.asarray(b.model.exog)
        small, large = (xa, xb) if a.df_resid >= b.df_resid else (xb, xa)
        if not is_nested(small, large):
            raise ValueError(
                f"anova: models {k} and {k + 1} are not nested: the design of the smaller "
                "(its selected cut-points and terms) is not inside the column space of "
                "the larger one. Likelihood-ratio tests compare nested models only; "
                "compare non-nested fits by AIC/BIC with bstats.compare()."
            )
    if test == "F" and not family.estimate_dispersion:
        warnings.warn(
            f"an F test with the {family.label} family (dispersion fixed at 1) is "
            "inappropriate; use test='Chisq'",
            RuntimeWarning,
            stacklevel=2,
        )
    resdf = np.array([float(f.sm_results.df_resid) for f in fits])
    resdev = np.array([float(f.sm_results.deviance) for f in fits])
    big = fits[int(np.argmin(resdf))].sm_results
    if family.estimate_dispersion:
        dispersion = pearson_dispersion(big.pearson_chi2, big.df_resid)
    else:
        dispersion = 1.0
    ddf = np.r_[np.nan, -np.diff(resdf)] + 0.0  # + 0.0: no "-0.0" for identical models
    ddev = np.r_[np.nan, -np.diff(resdev)] + 0.0
    table = pd.DataFrame(
        {"Resid. Df": resdf, "Resid. Dev": resdev, "Df": ddf, "Deviance": ddev},
        index=pd.Index([f"Model {k}" for k in range(1, len(fits) + 1)], dtype=object),
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        if test == "F":
            fval = (ddev / ddf) / dispersion
            fval[(ddf == 0) | ~(fval >= 0)] = np.nan  # as R's stat.anova
            p = stats.f.sf(fval, np.abs(ddf), float(big.df_resid))
            table["F"] = fval
            table["Pr(>F)"] = p
        else:
            stat = ddev / dispersion
            p = stats.chi2.sf(np.abs(stat), np.abs(ddf))
            p[ddf == 0] = np.nan
            table["Pr(>Chi)"] = p
    table.attrs.update(
        test=test, dispersion=dispersion, family=family.label,
        models=[list(f.names) for f in fits],
    )  # fmt: skip
    return table


def _baseline_row(obj: Any) -> dict[str, Any] | None:
    """The row of a statsmodels GLM/PHReg result or a lifelines CoxPHFitter (else None).

    AIC and BIC as each tool's own for a GLM (statsmodels' ``aic``, ``bic_llf``); for
    Cox models from the partial log-likelihood with n the rows, as the binarsity Cox
    refit's row: −2 ℓ + 2 k and −2 ℓ + log(n) k.
    """
    from ._baselines import is_lifelines_cox, is_statsmodels_glm, is_statsmodels_phreg

    empty = {"cuts_kept": np.nan, "lam": np.nan, "cv_score": np.nan, "cv_se": np.nan,
             "scoring": None}  # fmt: skip
    if is_statsmodels_glm(obj):
        return {"kind": "statsmodels GLM", "df": float(len(obj.params)),
                "deviance": float(obj.deviance), "aic": float(obj.aic),
                "bic": float(obj.bic_llf), **empty}  # fmt: skip
    if is_statsmodels_phreg(obj) or is_lifelines_cox(obj):
        if is_lifelines_cox(obj):
            llf, k, n = float(obj.log_likelihood_), float(len(obj.params_)), len(obj.durations)
            kind = "lifelines CoxPHFitter"
        else:
            exog = np.asarray(obj.model.exog)
            llf, n = float(obj.llf), exog.shape[0]
            k = float(np.linalg.matrix_rank(exog)) if exog.size else 0.0
            kind = "statsmodels PHReg"
        return {"kind": kind, "df": k, "deviance": np.nan, "aic": -2.0 * llf + 2.0 * k,
                "bic": -2.0 * llf + np.log(n) * k, **empty}  # fmt: skip
    return None


def _row(obj: Any) -> dict[str, Any]:
    from ._path_results import CVResults
    from ._refit import RefitResults
    from ._results import BinarsityResults

    cv = None
    if isinstance(obj, CVResults):
        cv = {"mean": float(obj.mean[obj.idx_min]), "se": float(obj.se[obj.idx_min]),
              "scoring": obj.scoring}  # fmt: skip
        obj = obj.best_
    if isinstance(obj, RefitResults) and obj.parent.model.family.survival:
        # a Cox refit: the partial likelihood; the deviance against the saturated
        # partial likelihood of the penalised fit (glmnet's coxnet convention)
        parent = obj.parent
        llf = float(obj.sm_results.llf)
        k = float(len(obj.names) - len(getattr(obj, "non_identified", []) or []))
        n = float(parent.model.wnobs)
        if obj.split:
            n = float(len(obj.split["estimate_rows"]))
        deviance = (
            float(parent.deviance) + 2.0 * (float(parent.llf) - llf) if not obj.split
            else np.nan
        )  # fmt: skip
        return {"kind": "refit", "df": k, "deviance": deviance, "aic": -2.0 * llf + 2.0 * k,
                "bic": -2.0 * llf + np.log(n) * k, "cuts_kept": int(parent.n_jumps),
                "lam": float(parent.lam), "cv_score": np.nan, "cv_se": np.nan,
                "scoring": None}  # fmt: skip
    if isinstance(obj, RefitResults):
        sm = obj.sm_results
        parent = obj.parent
        return {"kind": "refit", "df": float(sm.df_model + 1), "deviance": float(sm.deviance),
                "aic": float(sm.aic), "bic": float(sm.bic_llf),
                "cuts_kept": int(parent.n_jumps), "lam": float(parent.lam),
                "cv_score": np.nan, "cv_se": np.nan, "scoring": None}  # fmt: skip
    base = _baseline_row(obj)
    if base is not None:
        return base
    if not isinstance(obj, BinarsityResults):
        raise TypeError(
            f"compare: expected fits (BinarsityResults, CVResults or RefitResults, a "
            f"statsmodels GLM or PHReg result, a fitted lifelines CoxPHFitter); got a "
            f"{type(obj).__name__}"
        )
    if cv is None:
        cv = getattr(obj, "cv_score", None)
    kind = "penalized" if obj.lam > 0 else "unpenalized (lam = 0)"
    return {"kind": kind, "df": float(obj.df), "deviance": obj.deviance,
            "aic": obj.aic, "bic": obj.bic, "cuts_kept": int(obj.n_jumps), "lam": obj.lam,
            "cv_score": np.nan if cv is None else cv["mean"],
            "cv_se": np.nan if cv is None else cv["se"],
            "scoring": None if cv is None else cv["scoring"]}  # fmt: skip


def compare(*fits: Any, names: list[str] | None = None, test: Any = None) -> pd.DataFrame:
    """A table of fits side by side: df, deviance, AIC, BIC, cut-points, CV score.

    Parameters
    ----------
    *fits : BinarsityResults, CVResults, RefitResults or a baseline
        The fits. A :class:`~binarsity_stats.CVResults` stands for its ``best_`` fit
        with the CV score at ``lam_min``; a fit taken from ``fit_cv().results()`` (or
        ``best_``) carries its CV score too. Baselines in the same table: statsmodels
        ``GLM`` and ``PHReg`` results and fitted lifelines ``CoxPHFitter`` objects.
    names : list of str, optional
        Row labels (default ``Model 1``, ``Model 2``, ...).
    test : DataFrame, optional
        New rows to score every fit on (:func:`~binarsity_stats.heldout`): adds
        ``test deviance`` (GLMs; ``test AUC`` for the binomial) or ``test partial
        loglik`` and ``test C`` (Cox). A statsmodels PHReg needs ``heldout`` itself (its
        status is not part of its formula).

    Returns
    -------
    DataFrame
        One row per fit: ``kind`` (``"penalized"``, ``"unpenalized (lam = 0)"``,
        ``"refit"``, ``"statsmodels GLM"``, ``"statsmodels PHReg"``,
        ``"lifelines CoxPHFitter"``), ``df``,
        ``deviance``, ``AIC``, ``BIC``, ``cuts kept``, ``lam``, and ``CV score``,
        ``CV se`` and ``scoring`` (empty when λ did not come from cross-validation).
        AIC and BIC use each fit's df (for a penalised fit: jumps + intercept +
        unpenalised parameters, see the summary). A Cox refit's row uses its partial
        log-likelihood: df = its parameters, deviance = 2 (saturated − fitted partial
        log-likelihood), as the penalised Cox fit's (NaN for a split refit).

    Raises
    ------
    ValueError
        No fit, or ``names`` of the wrong length.
    TypeError
        An argument that is not a fit.

    Notes
    -----
    The fits need not be nested, but AIC, BIC and deviances are comparable only
    between fits to the same rows, response and weights; CV scores only between fits
    cross-validated on the same folds and criterion.

    Examples
    --------
    >>> import binarsity_stats as bstats
    >>> df = bstats.load_fair()
    >>> df["event"] = (df["affairs"] > 0).astype(int)
    >>> a = bstats.glm("event ~ bin(age)", df, family="binomial").fit(lam=1e-3)
    >>> b = bstats.glm("event ~ bin(age) + bin(rate_marriage)", df,
    ...            family="binomial").fit(lam=1e-3)
    >>> table = bstats.compare(a, b, names=["age", "age + marriage"])
    >>> list(table.index)
    ['age', 'age + marriage']
    """
    if not fits:
        raise ValueError("compare needs at least one fit")
    if names is None:
        names = [f"Model {k}" for k in range(1, len(fits) + 1)]
    names = [str(n) for n in names]
    if len(names) != len(fits):
        raise ValueError(f"names has {len(names)} entries for {len(fits)} fits")
    rows = [_row(f) for f in fits]
    table = pd.DataFrame(rows, index=pd.Index(names, dtype=object))
    table = table.rename(
        columns={"aic": "AIC", "bic": "BIC", "cuts_kept": "cuts kept", "cv_score": "CV score",
                 "cv_se": "CV se"}
    )[["kind", "df", "deviance", "AIC", "BIC", "cuts kept", "lam", "CV score", "CV se",
       "scoring"]]  # fmt: skip
    if test is not None:
        from ._heldout import heldout

        scores = [heldout(f, test) for f in fits]
        for key, column in (("deviance", "test deviance"), ("AUC", "test AUC"),
                            ("partial loglik", "test partial loglik"), ("C", "test C")):
            values = [float(sc[key]) if key in sc.index else np.nan for sc in scores]
            if not all(np.isnan(values)):
                table[column] = values
    return table
