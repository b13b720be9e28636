"""Broom's three verbs as pandas DataFrames: ``tidy()``, ``glance()``, ``augment()``.

R's broom package turns a fitted model into data frames made for the next step (a
table, a plot, a join): ``tidy`` one row per coefficient, ``glance`` one row per fit,
``augment`` the data with one column per prediction or residual. The functions here do
the same for the penalised fit (``BinarsityResults``), the unpenalised refit
(``RefitResults``), the bootstrap (``BootstrapResults``) and cross-validation
(``CVResults``); each class calls them from a method of the same name. Columns are
named as broom names them (``std.error``, ``p.value``, ``conf.low``, ``.fitted``...),
so that code and habits carry over from R.

Every value is read from the results objects' existing outputs (``params``,
``shape_functions``, ``predict``, the refit's ``bse`` and ``conf_int``, the bootstrap's
resamples, the CV's ``to_frame``): these functions compute no statistic of their own
beyond a standard deviation of the resamples, a Wald statistic and its p-value, and the
residuals' textbook formulas.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from ..core._base import inconsistent
from ..core._statistics import SUMMARY_STATISTICS
from ..formula._columns import as_frame, frame_library, like_callers_frame

__all__ = [
    "TIDY_COLUMNS",
    "augment_bootstrap",
    "augment_refit",
    "augment_results",
    "glance_bootstrap",
    "glance_cv",
    "glance_refit",
    "glance_results",
    "tidy_bootstrap",
    "tidy_cv",
    "tidy_refit",
    "tidy_results",
]

#: broom's columns of ``tidy()`` for a model with standard errors (``conf.int=TRUE``)
TIDY_COLUMNS = ["term", "estimate", "std.error", "statistic", "p.value", "conf.low", "conf.high"]

_RESIDUALS = ("deviance", "pearson", "response")


# -- argument checks -----------------------------------------------------------------------
def check_conf_level(conf_level: Any, name: str = "conf_level") -> float:
    """A coverage strictly between 0 and 1 (broom's ``conf.level``)."""
    if isinstance(conf_level, bool) or not isinstance(
        conf_level, (int, float, np.integer, np.floating)
    ):
        raise TypeError(f"{name} must be a number in (0, 1), e.g. 0.95; got {conf_level!r}.")
    level = float(conf_level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"{name} must be in (0, 1), e.g. 0.95; got {conf_level!r}.")
    return level


def _check_flag(value: Any, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False; got {value!r}.")
    return bool(value)


def _check_type_predict(type_predict: Any) -> str:
    if type_predict not in ("link", "response"):
        raise ValueError(f"type_predict must be 'link' or 'response'; got {type_predict!r}.")
    return str(type_predict)


def _check_type_residuals(type_residuals: Any) -> str:
    if type_residuals not in _RESIDUALS:
        raise ValueError(
            f"type_residuals must be 'deviance', 'pearson' or 'response'; got {type_residuals!r}."
        )
    return str(type_residuals)


# -- tidy ------------------------------------------------------------------------------------
def _level_rows(res: Any, merge: bool) -> pd.DataFrame:
    """One row per parameter of a penalised fit (per constant segment with ``merge``):
    ``term``, ``estimate``, ``variable``, ``level``, ``cut``, ``count``."""
    m = res.model
    shapes = res.shape_functions(merge=merge)
    cols = ["term", "estimate", "variable", "level", "cut", "count"]
    rows: list[dict[str, Any]] = []
    if m.fit_intercept:
        rows.append(dict(zip(cols, ["Intercept", float(res.intercept), "Intercept", None,
                                    False, np.nan], strict=True)))  # fmt: skip
    for j, block in enumerate(m.spec.blocks):
        s = int(m.block_ptr[j])
        own = shapes[shapes["term"] == block.term]
        if getattr(block, "is_pair", False):
            # a pair's cells (or fused regions): a surface has cut lines, not a cut per level
            for row in own.itertuples(index=False):
                rows.append(dict(zip(cols, [f"{block.term}[{row.label}]", float(row.level),
                                            block.term, row.label, False, float(row.count)],
                                     strict=True)))  # fmt: skip
            continue
        # the first level of every row: a segment's first level, else the level itself
        if block.penalized and merge:
            firsts = [a for a, _ in res._segments(j)]
        else:
            firsts = list(range(block.chain_length)) if block.penalized else []
        firsts += list(range(block.chain_length if block.penalized else 0, block.n_levels))
        if len(firsts) != len(own):
            raise inconsistent(f"{block.term} has {len(own)} shape rows for {len(firsts)} levels")
        for first, row in zip(firsts, own.itertuples(index=False), strict=True):
            rows.append(dict(zip(cols, [f"{block.term}[{row.label}]", float(row.level),
                                        block.term, row.label, bool(res.jumps[s + first]),
                                        float(row.count)], strict=True)))  # fmt: skip
    for name, value in zip(m.spec.dense_columns, res.dense_coef, strict=True):
        rows.append(dict(zip(cols, [name, float(value), name, None, False, np.nan],
                             strict=True)))  # fmt: skip
    return pd.DataFrame(rows, columns=cols)


def tidy_results(
    res: Any, conf_int: bool = True, conf_level: float = 0.95, exponentiate: bool = False,
    merge: bool = False,
) -> pd.DataFrame:  # fmt: skip
    """broom's ``tidy()`` of a penalised fit (``BinarsityResults.tidy``; see there)."""
    conf_int = _check_flag(conf_int, "conf_int")
    check_conf_level(conf_level)
    exponentiate = _check_flag(exponentiate, "exponentiate")
    merge = _check_flag(merge, "merge")
    rows = _level_rows(res, merge)
    out = pd.DataFrame({"term": rows["term"], "estimate": rows["estimate"]})
    # the penalised estimate has no valid standard error (see BinarsityResults.tidy)
    for col in ("std.error", "statistic", "p.value"):
        out[col] = np.nan
    if conf_int:
        out["conf.low"] = np.nan
        out["conf.high"] = np.nan
    if exponentiate:
        out["estimate"] = np.exp(out["estimate"])
    for col in ("variable", "level", "cut", "count"):
        out[col] = rows[col]
    return out


def tidy_refit(
    refit: Any, conf_int: bool = True, conf_level: float = 0.95, exponentiate: bool = False
) -> pd.DataFrame:
    """broom's ``tidy()`` of an unpenalised refit (``RefitResults.tidy``; see there)."""
    conf_int = _check_flag(conf_int, "conf_int")
    level = check_conf_level(conf_level)
    exponentiate = _check_flag(exponentiate, "exponentiate")
    params = refit.params
    names = [str(k) for k in params.index]
    est = np.asarray(params, dtype=np.float64)
    se = np.asarray(refit.bse, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, est / se, np.nan)
    if getattr(refit, "use_t", False):
        p = 2.0 * stats.t.sf(np.abs(z), float(refit.df_resid))
    else:
        p = 2.0 * stats.norm.sf(np.abs(z))
    out = pd.DataFrame(
        {"term": names, "estimate": est, "std.error": se, "statistic": z, "p.value": p}
    )
    if conf_int:
        ci = np.asarray(refit.conf_int(alpha=1.0 - level), dtype=np.float64)
        out["conf.low"], out["conf.high"] = ci[:, 0], ci[:, 1]
    if exponentiate:
        out["estimate"] = np.exp(out["estimate"])
        if conf_int:
            out["conf.low"], out["conf.high"] = np.exp(out["conf.low"]), np.exp(out["conf.high"])
    return out


def _bootstrap_draws(boot: Any, method: str) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(parameter names, draws (B, P), estimate (P,)) of every parameter, in ``params``
    order: the resamples' own fits, or their relaxed refits for ``method="relaxed"``."""
    res = boot.results
    if method == "relaxed":
        relaxed = boot._relaxed()
        coef, dense, b0 = relaxed["coef"], relaxed["dense_coef"], relaxed["intercept"]
        est_coef, est_dense, est_b0 = relaxed["estimate"]
    else:
        coef, dense, b0 = boot.coef, boot.dense_coef, boot.intercept
        est_coef, est_dense, est_b0 = res.coef, res.dense_coef, res.intercept
    parts, est_parts = [], []
    if res.model.fit_intercept:
        parts.append(np.asarray(b0, dtype=np.float64)[:, None])
        est_parts.append(np.array([float(est_b0)]))
    parts += [np.asarray(coef, dtype=np.float64),
              np.asarray(dense, dtype=np.float64).reshape(boot.n_boot, -1)]  # fmt: skip
    est_parts += [np.asarray(est_coef, dtype=np.float64),
                  np.asarray(est_dense, dtype=np.float64)]  # fmt: skip
    names = [str(k) for k in res.params.index]
    return names, np.hstack(parts), np.concatenate(est_parts)


def tidy_bootstrap(
    boot: Any, conf_level: float, method: str, exponentiate: bool,
    interval: Callable[[np.ndarray, np.ndarray, float, str], tuple[np.ndarray, np.ndarray]],
) -> pd.DataFrame:  # fmt: skip
    """broom's ``tidy()`` of a bootstrap (``BootstrapResults.tidy``; see there).

    ``interval(draws, estimate, level, method)`` is the bootstrap's own interval rule
    (``_bootstrap_bands._interval``, the one ``shape_bands`` and ``predict`` use).
    """
    exponentiate = _check_flag(exponentiate, "exponentiate")
    names, draws, est = _bootstrap_draws(boot, method)
    lo, hi = interval(draws, est, conf_level, method)
    out = pd.DataFrame(
        {"term": names, "estimate": est,
         "std.error": np.std(draws, axis=0, ddof=1) if draws.shape[0] > 1
         else np.full(est.shape, np.nan),
         "conf.low": lo, "conf.high": hi,
         "conf.method": "relaxed percentile" if method == "relaxed" else method,
         "bias": draws.mean(axis=0) - est}
    )  # fmt: skip
    if exponentiate:
        for col in ("estimate", "conf.low", "conf.high"):
            out[col] = np.exp(out[col])
    return out


def tidy_cv(cv: Any) -> pd.DataFrame:
    """broom's ``tidy()`` of a cross-validation (``CVResults.tidy``; see there)."""
    frame = cv.to_frame()
    mean = frame["mean"].to_numpy(dtype=np.float64)
    se = frame["se"].to_numpy(dtype=np.float64)
    return pd.DataFrame(
        {"lambda": frame["lam"].to_numpy(dtype=np.float64), "estimate": mean,
         "std.error": se, "conf.low": mean - se, "conf.high": mean + se,
         "df": frame["df"].to_numpy()}
    )  # fmt: skip


# -- glance ----------------------------------------------------------------------------------
def glance_results(res: Any) -> pd.DataFrame:
    """broom's ``glance()`` of a penalised fit (``BinarsityResults.glance``; see there)."""
    cv = res.cv_score or {}
    row = {
        "nobs": int(res.nobs), "df": int(res.df), "df.residual": float(res.df_resid),
        "null.deviance": float(res.null_deviance), "deviance": float(res.deviance),
        "logLik": float(res.llf), "AIC": float(res.aic), "BIC": float(res.bic),
        "lambda": float(res.lam), "lambda.source": str(res.lam_source),
        "n.cuts": int(res.n_jumps), "converged": bool(res.converged),
        "cv.scoring": cv.get("scoring"), "cv.score": float(cv.get("mean", np.nan)),
        "cv.std.error": float(cv.get("se", np.nan)),
    }  # fmt: skip
    if res.model.family.survival:
        row["concordance"] = float(res.concordance)
    row.update(res.model.family.parameter_columns())  # an NB θ: theta, theta_se
    row.update({name: float(stat(res)) for name, stat in SUMMARY_STATISTICS.items()})
    return pd.DataFrame([row])


def _number(obj: Any, name: str) -> float:
    """A statistic of a refit, NaN where its statsmodels results do not define it (a Cox
    refit has no deviance, dispersion or residual df)."""
    try:
        value = getattr(obj, name)
    except AttributeError:
        return np.nan
    return np.nan if value is None else float(value)


def glance_refit(refit: Any) -> pd.DataFrame:
    """broom's ``glance()`` of an unpenalised refit (``RefitResults.glance``; see there)."""
    n_params = len(refit.params) - len(getattr(refit, "non_identified", None) or [])
    nobs = _number(refit, "nobs")
    if np.isnan(nobs):  # statsmodels' PHReg: the rows the refit was estimated on
        split = refit.split
        nobs = len(split["estimate_rows"]) if split else refit.parent.model.nobs
    llf, aic = _number(refit, "llf"), _number(refit, "aic")
    if np.isnan(aic):  # a Cox refit: R's AIC(coxph), −2 log partial likelihood + 2 df
        aic = -2.0 * llf + 2.0 * n_params
    row = {
        "nobs": int(nobs), "df": int(n_params), "df.residual": _number(refit, "df_resid"),
        "null.deviance": _number(refit, "null_deviance"),
        "deviance": _number(refit, "deviance"), "logLik": llf,
        "AIC": aic, "BIC": _number(refit, "bic"),
        "dispersion": _number(refit, "scale"), "lambda": float(refit.lam),
        "inference": "sample splitting" if refit.split else "conditional on the selection",
    }  # fmt: skip
    family = getattr(refit, "refit_family", None)
    if family is not None:
        row.update(family.parameter_columns())  # an NB θ re-estimated: theta, theta_se
    return pd.DataFrame([row])


def glance_bootstrap(boot: Any) -> pd.DataFrame:
    """broom's ``glance()`` of a bootstrap (``BootstrapResults.glance``; see there)."""
    res = boot.results
    n_cuts = boot.summary_frame()["n_jumps"].to_numpy(dtype=np.float64)
    row = {
        "nobs": int(res.nobs), "n.boot": int(boot.n_boot),
        "n.converged": int(np.sum(boot.converged)), "lambda": float(res.lam),
        "lambda.rule": str(boot.lam_rule), "resampled": "groups" if boot.grouped else "rows",
        "n.cuts": int(res.n_jumps), "n.cuts.mean": float(n_cuts.mean()) if n_cuts.size
        else np.nan,
    }  # fmt: skip
    return pd.DataFrame([row])


def glance_cv(cv: Any) -> pd.DataFrame:
    """broom's ``glance()`` of a cross-validation (``CVResults.glance``; see there)."""
    row = {
        "lambda.min": float(cv.lam_min), "lambda.1se": float(cv.lam_1se),
        "nobs": int(cv.model.nobs), "folds": int(cv.folds), "scoring": str(cv.scoring),
        "cv.score": float(cv.mean[cv.idx_min]), "cv.std.error": float(cv.se[cv.idx_min]),
        "n.lambda": int(len(cv.lams)), "stopped.early": bool(cv.stopped_early),
    }  # fmt: skip
    if hasattr(cv, "gamma_min"):  # fit_cv(relax=True)
        row["gamma.min"] = float(cv.gamma_min)
    return pd.DataFrame([row])


# -- augment ---------------------------------------------------------------------------------
def residuals(
    family: Any, y: np.ndarray, mu: np.ndarray, kind: str, var_weights: np.ndarray | None = None
) -> np.ndarray:
    """Residuals of observed ``y`` against fitted means ``mu`` (statsmodels' definitions).

    ``response`` y − μ; ``pearson`` √v (y − μ)/√V(μ); ``deviance``
    sign(y − μ) √(v d(y, μ)), v the analytic weights (1 when None).
    """
    y = np.asarray(y, dtype=np.float64)
    mu = np.asarray(mu, dtype=np.float64)
    if kind == "response":
        return y - mu
    if kind == "pearson":
        r = (y - mu) / np.sqrt(family.variance(mu))
        return r if var_weights is None else np.sqrt(var_weights) * r
    d = np.maximum(family.unit_deviance(y, mu), 0.0)
    if var_weights is not None:
        d = var_weights * d
    return np.sign(y - mu) * np.sqrt(d)


def _training_frame(model: Any) -> pd.DataFrame:
    """The training rows the model was fitted on (rows kept by ``missing="drop"``), or an
    empty frame of as many rows when the model does not hold them (a pickled model, a
    Dask fit)."""
    data = model.__dict__.get("_data")
    if isinstance(data, pd.DataFrame) and len(data) == model.nobs:
        return data.copy()
    return pd.DataFrame(index=pd.RangeIndex(model.nobs))


def _observed(model: Any, newdata: pd.DataFrame, y: Any) -> np.ndarray | None:
    """The observed response of ``newdata`` on the fit's scale (a 0/1 indicator of the
    event level for a factor response): ``y`` (values or a column name) when given, else
    the response column when the left-hand side is a plain column of ``newdata``; None
    when neither (no ``.resid``)."""
    n = len(newdata)
    if y is not None:
        values = newdata[y] if isinstance(y, str) else y
        arr = np.asarray(values, dtype=np.float64).ravel()
        if arr.shape[0] != n:
            raise ValueError(f"y has {arr.shape[0]} values for {n} rows of newdata.")
        return arr
    resp = model.response
    if resp.kind not in ("numeric", "boolean", "factor") or resp.name not in newdata.columns:
        return None
    col = newdata[resp.name]
    if resp.kind == "factor":
        return (col.astype(str) == str(resp.event)).to_numpy(dtype=np.float64)
    return np.asarray(col, dtype=np.float64)


def _as_pandas(newdata: Any) -> pd.DataFrame:
    """A copy of the new rows as pandas (polars and pyarrow tables converted)."""
    if not isinstance(newdata, pd.DataFrame | dict) and frame_library(newdata) not in (
        "polars", "pyarrow",
    ):  # fmt: skip
        raise TypeError(
            "newdata must be a pandas, polars or pyarrow DataFrame or a mapping of columns; "
            f"got {type(newdata).__name__}."
        )
    return as_frame(newdata).copy()


def _residual_column(
    out: pd.DataFrame, model: Any, y: np.ndarray | None, mu: np.ndarray, kind: str,
    var_weights: np.ndarray | None = None,
) -> None:  # fmt: skip
    if y is None or model.family.survival:
        return
    with np.errstate(invalid="ignore"):
        out[".resid"] = residuals(model.family, y, mu, kind, var_weights)


def augment_results(
    res: Any, newdata: Any, type_predict: str, type_residuals: str, offset: Any, y: Any,
    missing: str | None,
) -> pd.DataFrame:  # fmt: skip
    """broom's ``augment()`` of a penalised fit (``BinarsityResults.augment``; see there)."""
    type_predict = _check_type_predict(type_predict)
    kind = _check_type_residuals(type_residuals)
    m = res.model
    if newdata is None:
        if y is not None or offset is not None:
            raise ValueError("y and offset are only used together with newdata.")
        out = _training_frame(m)
        out[".fitted"] = res.predict(type=type_predict)
        if not m.family.survival:
            out[".resid"] = {"deviance": res.resid_deviance, "pearson": res.resid_pearson,
                             "response": res.resid_response}[kind]  # fmt: skip
        return out
    out = _as_pandas(newdata)
    obs = _observed(m, out, y)
    out[".fitted"] = res.predict(out, type=type_predict, offset=offset, missing=missing)
    mu = (
        out[".fitted"].to_numpy()
        if type_predict == "response"
        else m.family.mean(out[".fitted"].to_numpy())
    )
    _residual_column(out, m, obs, mu, kind)
    return out if newdata is None else like_callers_frame(out, newdata)


def augment_refit(
    refit: Any, newdata: Any, type_predict: str, type_residuals: str, offset: Any, y: Any,
    se_fit: bool, interval: float | None, missing: str | None,
) -> pd.DataFrame:  # fmt: skip
    """broom's ``augment()`` of an unpenalised refit (``RefitResults.augment``; see there)."""
    type_predict = _check_type_predict(type_predict)
    kind = _check_type_residuals(type_residuals)
    se_fit = _check_flag(se_fit, "se_fit")
    level = None if interval is None else check_conf_level(interval, "interval")
    m = refit.parent.model
    if m.family.survival and (se_fit or level is not None):
        raise ValueError("se_fit and interval are not available for a family='cox' refit.")
    if newdata is None:
        if y is not None or offset is not None:
            raise ValueError("y and offset are only used together with newdata.")
        out, rows, obs = _training_frame(m), None, m.y
    else:
        out = _as_pandas(newdata)
        rows, obs = out, _observed(m, out, y)
    if se_fit or level is not None:
        # the link scale's fit and SE; the response's SE by the delta method and its
        # interval the link's mapped by the inverse link (statsmodels' get_prediction)
        link = refit.predict(rows, type="link", offset=offset, se_fit=True, missing=missing)
        eta, se_eta = link["fit"].to_numpy(), link["se_fit"].to_numpy()
        if type_predict == "link":
            fitted, se = eta, se_eta
        else:
            resp = refit.predict(rows, type="response", offset=offset, se_fit=True,
                                 missing=missing)  # fmt: skip
            fitted, se = resp["fit"].to_numpy(), resp["se_fit"].to_numpy()
    else:
        fitted = np.asarray(
            refit.predict(rows, type=type_predict, offset=offset, missing=missing),
            dtype=np.float64,
        )
    out[".fitted"] = fitted
    if se_fit:
        out[".se.fit"] = se
    if level is not None:
        if getattr(refit, "use_t", False):
            q = float(stats.t.ppf(0.5 + level / 2, float(refit.df_resid)))
        else:
            q = float(stats.norm.ppf(0.5 + level / 2))
        lo, hi = eta - q * se_eta, eta + q * se_eta
        if type_predict == "response":
            lo, hi = m.family.mean(lo), m.family.mean(hi)
            lo, hi = np.minimum(lo, hi), np.maximum(lo, hi)
        out[".lower"], out[".upper"] = lo, hi
    if obs is not None and not m.family.survival:
        mu = fitted if type_predict == "response" else m.family.mean(fitted)
        var_w = m.var_weights if newdata is None else None
        _residual_column(out, m, obs, mu, kind, var_w)
    return out if newdata is None else like_callers_frame(out, newdata)


def augment_bootstrap(
    boot: Any, newdata: Any, type_predict: str, type_residuals: str, offset: Any, y: Any,
    interval: float, method: str, missing: str | None,
) -> pd.DataFrame:  # fmt: skip
    """broom's ``augment()`` of a bootstrap (``BootstrapResults.augment``; see there)."""
    type_predict = _check_type_predict(type_predict)
    kind = _check_type_residuals(type_residuals)
    level = check_conf_level(interval, "interval")
    m = boot.model
    if newdata is None:
        if y is not None or offset is not None:
            raise ValueError("y and offset are only used together with newdata.")
        out, rows, obs = _training_frame(m), None, m.y
    else:
        out = _as_pandas(newdata)
        rows, obs = out, _observed(m, out, y)
    band = boot.predict(rows, interval=level, offset=offset, type=type_predict,
                        method=method, missing=missing)  # fmt: skip
    out[".fitted"] = band["mean"].to_numpy()
    out[".lower"] = band["mean_ci_lower"].to_numpy()
    out[".upper"] = band["mean_ci_upper"].to_numpy()
    if obs is not None and not m.family.survival:
        fitted = out[".fitted"].to_numpy()
        mu = fitted if type_predict == "response" else m.family.mean(fitted)
        var_w = m.var_weights if newdata is None else None
        _residual_column(out, m, obs, mu, kind, var_w)
    return out if newdata is None else like_callers_frame(out, newdata)
