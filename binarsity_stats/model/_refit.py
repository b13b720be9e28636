"""The unpenalised refit of a selection (a GLM on the selected segments).

statsmodels' GLM (or PHReg) on the dense selected design below
``_refit_glm.GRAM_MIN_CELLS`` rows × columns; from there IRLS on the codes' sufficient
statistics (``_refit_glm``). Predictions build the design a block of rows at a time.

``BinarsityResults.refit`` builds a :class:`RefitResults`: either conditional on the
selection (same rows) or honest by sample splitting (select on one part, estimate on the
other).

The refit's checks (monotone shape violations, non-identified columns, the identified
GLM refit) and its blocked normal equations are in ``_refit_checks``; the weighted Cox
partial likelihood and its Newton's method in ``_refit_cox``.
"""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..distributed._dask import is_dask_collection
from ..engine._path import strip_eta
from ..core._validation import check_sample_weight
from . import _refit_glm
from ._refit_glm import GLMRefit, block_rows, prediction_blocks
from ._refit_checks import (
    _NO_ESTIMATE,
    _REFERENCE,
    _gram_irls,
    _identified_refit,
    _non_identified,
    _shape_violations,
    _violation_text,
)
from ._refit_cox import _WeightedCoxResults, _fit_weighted_cox  # noqa: F401 (pickles name it here)

if TYPE_CHECKING:  # pragma: no cover
    from ._results import BinarsityResults

__all__ = ["RefitResults", "refit_state"]

# Re-exported: the selected design's level coding, read here by _results.
_REEXPORTED = (_NO_ESTIMATE, _REFERENCE)



class RefitResults:
    """An unpenalised GLM on the selected design.

    Parameters
    ----------
    sm_results : statsmodels GLMResults, GLMRefit or PHRegResults
        The fitted model: statsmodels' below ``_refit_glm.GRAM_MIN_CELLS`` rows ×
        columns, :class:`~._refit_glm.GLMRefit` (the same names) from there.
    parent : BinarsityResults
        The penalised fit whose selection was refitted.
    split : dict, optional
        For a sample-splitting refit: ``{"share", "random_state", "select_rows",
        "estimate_rows"}``.

    Attributes
    ----------
    shape_violations : pandas.DataFrame
        Where the refit of a monotone term (``bin(x, monotone=...)``,
        ``ordered(x, monotone=...)``, an estimator's ``monotone=``) goes against its
        direction: one row per pair of neighbouring segments of a chain (``term``,
        ``group`` — the level of g of a ``bin(x):C(g)`` chain, else None — ``from``,
        ``to``, ``change``: the refitted effect of ``to`` minus that of ``from``).
        Empty when every monotone term keeps its direction (or there is none). The
        statsmodels refit is unconstrained: the penalised fit is monotone, its refit on
        the same segments need not be; a violation is also warned about and noted in
        :meth:`summary`.

    Notes
    -----
    By default, standard errors, z-statistics, p-values and confidence intervals are
    conditional on the selection: they treat the cut-points as fixed in advance,
    although the same data chose them, so they are too optimistic; and the kept jumps
    are those that looked largest, so their refitted sizes are biased away from zero
    (the winner's curse). ``refit(split=)`` avoids both. Any other attribute is looked
    up on ``sm_results``.
    """

    NOTE = (
        "Standard errors, tests and intervals are CONDITIONAL ON THE SELECTION: the "
        "cut-points were chosen by the binarsity fit on the same data and are treated as "
        "fixed here, so they understate the uncertainty, and the jumps kept are those that "
        "looked largest on these data, so their estimates are biased away from zero (the "
        "winner's curse). refit(split=0.5) gives honest inference by sample splitting."
    )

    def __init__(self, sm_results: Any, parent: BinarsityResults, split: dict | None = None):
        self.sm_results = sm_results
        self.parent = parent
        self.lam = parent.lam
        self.weights_kind = parent.model.weights_kind if parent.model.weighted else None
        self.split = split
        #: the refit's family: at the θ re-estimated on its rows for an NB θ
        self.refit_family = getattr(sm_results, "_refit_family", None) or parent.model.family
        self.shape_violations = _shape_violations(parent, np.asarray(self.params, dtype=float))
        #: names of the parameters the selected design does not identify (collinear
        #: columns): their standard errors are NaN, and refit() warns naming them
        if isinstance(sm_results, GLMRefit):  # minimum-norm and rank-cut already
            self.non_identified = [self.names[k] for k in sm_results.non_identified_columns]
        else:
            self.non_identified = [self.names[k] for k in _non_identified(sm_results)]
        if self.non_identified and not isinstance(sm_results, GLMRefit):
            self.sm_results = sm_results = _identified_refit(sm_results)
        if self.non_identified:
            warnings.warn(
                "refit(): " + self._non_identified_text(), UserWarning, stacklevel=3
            )
        if len(self.shape_violations):
            warnings.warn(
                "refit(): " + _violation_text(self.shape_violations) + " The unpenalised "
                "refit is not constrained (the penalised fit is monotone); see "
                "RefitResults.shape_violations.",
                UserWarning,
                stacklevel=3,
            )

    refit_family: Any = None

    @property
    def aic(self) -> float:
        """statsmodels' AIC, plus 2 per estimated family parameter (an NB θ, R's glm.nb)."""
        extra = self.refit_family.extra_df if self.refit_family is not None else 0
        value = self.sm_results.aic
        return value if not extra else float(value) + 2.0 * extra

    @property
    def bic(self) -> float:
        """statsmodels' BIC (log-likelihood based), plus log(n) per estimated family
        parameter (an NB θ)."""
        extra = self.refit_family.extra_df if self.refit_family is not None else 0
        value = self.sm_results.bic
        if not extra:
            return value
        return float(value) + math.log(self.sm_results.model.wnobs) * extra

    @property
    def names(self) -> list[str]:
        """Columns of the selected design (the refit's parameter names)."""
        return list(self.parent._selection[1])

    @property
    def params(self) -> pd.Series:
        """Unpenalised coefficients of the selected design."""
        return self._named(self.sm_results.params)

    @property
    def bse(self) -> pd.Series:
        """Standard errors (conditional on the selection unless the refit was split).

        NaN for a parameter the selected design does not identify (``non_identified``).
        """
        bse = self._named(self.sm_results.bse).astype(float)
        if getattr(self, "non_identified", None):
            bse = bse.copy()
            bse[self.non_identified] = np.nan
        return bse

    def _non_identified_text(self) -> str:
        return (
            "the selected design is rank-deficient: the parameter(s) "
            + ", ".join(self.non_identified)
            + " are not identified (a column is a linear combination of others, e.g. a "
            "linear term collinear with a block, C() terms that add up to the intercept, "
            "or a term constant within the strata of a Cox model); their estimates are "
            "arbitrary and their standard errors and intervals are reported as NaN. "
            "Drop or merge the collinear terms."
        )

    def _named(self, values: Any) -> pd.Series:
        # statsmodels' PHReg (the Cox refit) returns bare arrays
        if isinstance(values, pd.Series):
            return values
        return pd.Series(np.asarray(values), index=self.names)

    def conf_int(self, alpha: float = 0.05) -> pd.DataFrame:
        """Confidence intervals of the parameters.

        Conditional on the selection, unless the refit was split.

        Parameters
        ----------
        alpha : float, default=0.05
            1 − coverage.

        Returns
        -------
        DataFrame
            Lower and upper bounds per parameter.
        """
        ci = self.sm_results.conf_int(alpha=alpha)
        if not isinstance(ci, pd.DataFrame):  # PHReg: a bare array; named as GLM's are
            ci = pd.DataFrame(np.asarray(ci, dtype=float), index=list(self.names))
        if getattr(self, "non_identified", None):
            ci = ci.copy()
            ci.loc[self.non_identified, :] = np.nan
        return ci

    def _linear(self, newdata: Any, offset: Any, with_var: bool) -> tuple[Any, Any]:
        """Xβ + offset of new rows (the training rows if None) and, with ``with_var``,
        every row's x'Σx: the selected design is built a block of rows at a time, never
        for all rows at once."""
        m = self.parent.model
        if newdata is None:
            if offset is not None:
                raise ValueError("offset is only used together with newdata.")
            design, off = m.design, m.offset
        elif isinstance(newdata, _refit_glm.ReplayedRows):  # replayed by the caller (CLI)
            design, off = newdata
        else:
            design, off = self.parent._new_design(newdata, offset)
        beta = np.asarray(self.sm_results.params, dtype=np.float64)
        cov = np.asarray(self.sm_results.cov_params(), dtype=np.float64) if with_var else None
        step = block_rows(beta.size)
        blocks = (self.parent._selected_matrix(design, rows=slice(start, start + step))
                  for start in range(0, design.n_obs, step))  # fmt: skip
        eta, var = prediction_blocks(blocks, beta, cov)
        if off is not None:
            eta = eta + off
        return eta, var

    def predict(
        self,
        newdata: Any = None,
        type: str = "response",  # noqa: A002 - R's name
        offset: Any = None,
        se_fit: bool = False,
        missing: str | None = None,
    ) -> Any:
        """Predict with the refitted coefficients, replaying the selected design.

        Parameters
        ----------
        newdata : DataFrame, optional
            New rows (the training rows when omitted), read with the training bins,
            ``C()`` levels and offset terms. A Dask DataFrame gives a lazy Dask Series
            (a DataFrame with ``se_fit``), one task per partition.
        type : {"response", "link"}, default="response"
            Mean response or linear predictor. With ``family="cox"`` (no intercept):
            ``"response"`` is the relative risk e^η and ``"link"`` is η = Xβ relative
            to a row with every ``bin()`` and ``C()`` term at its reference (first)
            segment or level and every linear term at 0 — not the weighted average
            training row of :meth:`BinarsityResults.predict`, so the two differ by a
            constant factor.
        offset : array-like of shape (n,), optional
            Extra offset, as in :meth:`BinarsityResults.predict`.
        se_fit : bool, default=False
            Also return the standard errors of the predictions (R's ``se.fit``): on the
            link scale for ``type="link"``, by the delta method for the mean response.
        missing : {None, "nan", "error"}, optional
            As in :meth:`BinarsityResults.predict`: NaN (or an error) for new rows with a
            missing value in a column whose missing values dropped training rows.

        Returns
        -------
        ndarray of shape (n,) or DataFrame
            The predictions; with ``se_fit=True`` a DataFrame with columns ``fit`` and
            ``se_fit``.
        """
        if type not in ("response", "link"):
            raise ValueError(f"type must be 'response' or 'link'; got {type!r}.")
        if is_dask_collection(newdata):
            from ._refit_dask import predict_lazy

            kwargs = {"type": type, "offset": offset, "se_fit": se_fit, "missing": missing}
            meta = (pd.DataFrame({"fit": np.empty(0), "se_fit": np.empty(0)}) if se_fit
                    else pd.Series(np.empty(0), name="fit"))  # fmt: skip
            return predict_lazy(self, newdata, "predict", kwargs, meta)
        if newdata is not None:
            from ..formula._formula import predict_complete

            return predict_complete(
                self.parent.model.spec, newdata, offset, missing,
                lambda rows, off: self._predict(rows, type, off, se_fit),
            )  # fmt: skip
        return self._predict(None, type, offset, se_fit)

    def _predict(self, newdata: Any, type: str, offset: Any, se_fit: bool) -> Any:  # noqa: A002
        if self.parent.model.family.survival:  # PHReg: η = X β (+ offset), risk e^η
            if se_fit:
                raise ValueError("se_fit is not available for a family='cox' refit.")
            eta, _ = self._linear(newdata, offset, False)
            return eta if type == "link" else np.exp(eta)
        eta, var = self._linear(newdata, offset, se_fit)
        if type == "link":
            fit = eta
        else:
            fit = self.sm_results.model.family.link.inverse(eta)
        if not se_fit:
            return np.asarray(fit)
        if type == "link":
            se = np.sqrt(var)
        else:  # the delta method (statsmodels' get_prediction(which="mean"))
            link = self.sm_results.model.family.link
            se = np.sqrt(link.inverse_deriv(eta) ** 2 * var)
        return pd.DataFrame({"fit": np.asarray(fit), "se_fit": np.asarray(se)})

    def get_prediction(
        self,
        newdata: Any = None,
        offset: Any = None,
        type: str = "response",  # noqa: A002 - R's name
        sample_weight: Any = None,
    ) -> Any:
        """Predictions with their standard errors and intervals (statsmodels' objects).

        Parameters
        ----------
        newdata : DataFrame, optional
            New rows (the training rows when omitted). A Dask DataFrame gives a
            :class:`~._refit_dask.LazyPrediction`, whose ``summary_frame(alpha)`` is a
            lazy Dask DataFrame with the same columns (one task per partition).
        offset : array-like of shape (n,), optional
            Extra offset, as in :meth:`predict`.
        type : {"response", "link"}, default="response"
            Intervals for the mean response (the link-scale interval mapped by the
            inverse link, statsmodels' default) or for the linear predictor.
        sample_weight : array-like of shape (n,), optional
            Analytic weights of the new rows for the observation intervals of a family
            with an estimated dispersion (an observation has variance φ / s; default 1).

        Returns
        -------
        PredictionResults
            ``summary_frame(alpha)`` gives ``mean``, ``mean_se``, ``mean_ci_lower`` and
            ``mean_ci_upper`` (for ``type="link"``: ``predicted``, ``se``, ``ci_lower``,
            ``ci_upper`` of η), and for the gaussian (identity link) also the
            prediction intervals of a new observation ``obs_ci_lower`` and
            ``obs_ci_upper`` (statsmodels' ``regression`` PredictionResults, t
            quantiles with the residual df).
        """
        if type not in ("response", "link"):
            raise ValueError(f"type must be 'response' or 'link'; got {type!r}.")
        if is_dask_collection(newdata):
            from ._refit_dask import LazyPrediction

            if sample_weight is not None:
                raise TypeError("sample_weight is not read with a Dask DataFrame.")
            return LazyPrediction(self, newdata, {"type": type, "offset": offset})
        eta, var = self._linear(newdata, offset, True)
        return self._prediction_results(eta, var, type, sample_weight)

    def _prediction_results(self, eta: np.ndarray, var: np.ndarray, type: str,  # noqa: A002
                            sample_weight: Any) -> Any:  # fmt: skip
        """statsmodels' prediction results of rows with linear predictor ``eta`` and
        variance ``var`` of it (``get_prediction``'s second half)."""
        from statsmodels.base._prediction_inference import (
            PredictionResultsBase,
            PredictionResultsMean,
        )
        from statsmodels.regression._prediction import PredictionResults

        sm = self.sm_results
        dist = "t" if sm.use_t else "norm"
        df = sm.df_resid
        if not self.parent.model.family.quadratic:
            # statsmodels' GLM get_prediction: which=None for the mean (columns mean,
            # mean_se, mean_ci_*: the link-scale interval mapped by the inverse link)
            if type == "link":
                return PredictionResultsBase(eta, var, df=df, dist=dist)
            link = sm.model.family.link
            linpred = PredictionResults(eta, var, var_resid=sm.scale, df=df, dist=dist)
            return PredictionResultsMean(link.inverse(eta), link.inverse_deriv(eta) ** 2 * var,
                                         sm.scale, df=df, dist=dist, linpred=linpred,
                                         link=link)  # fmt: skip
        # identity link: the mean is the linear predictor; add the observation variance
        n = eta.shape[0]
        if sample_weight is None:
            w = np.ones(n)
        else:
            w = check_sample_weight(sample_weight, n, rows_of="the data")
            if np.any(w <= 0):  # the observation variance is scale / w
                row = int(np.flatnonzero(w <= 0)[0])
                raise ValueError(
                    f"sample_weight must be positive for a prediction interval; row {row} has 0."
                )
        return PredictionResults(eta, var, var_resid=sm.scale / w, df=df, dist=dist)

    def summary(self) -> Any:
        """statsmodels' summary with what the inference is conditional on.

        Returns
        -------
        statsmodels.iolib.summary.Summary
            The statsmodels report with the weights and the selection noted.
        """
        kind = "honest (sample splitting)" if self.split else "conditional on the selection"
        smry = self.sm_results.summary(
            title=f"Unpenalised refit on the binarsity selection (lam={self.lam:.4g}), "
            f"inference {kind}"
        )
        notes = []
        if self.weights_kind is not None and self.parent.model.family.survival:
            notes.append(
                f"Sample weights ({self.weights_kind}): case weights s_i of the partial "
                "likelihood (R coxph's weights=)."
            )
        elif self.weights_kind is not None:
            notes.append(
                "Sample weights: analytic (statsmodels var_weights: row i has variance "
                "phi/s_i, and the residual df counts rows)."
                if self.weights_kind == "analytic"
                else "Sample weights: frequencies (statsmodels freq_weights; row i counts "
                "s_i times)."
            )
        if self.split:
            sp = self.split
            notes.append(
                f"SAMPLE SPLITTING: the cut-points were selected (same bins, lam="
                f"{self.lam:.4g}) on {len(sp['select_rows'])} randomly chosen rows (share "
                f"{sp['share']:g}, random_state={sp['random_state']!r}) and this GLM was "
                f"estimated on the other {len(sp['estimate_rows'])} rows only, so its "
                "standard errors, tests and intervals are valid for the selected model, if "
                "that model is correctly specified."
            )
        else:
            notes.append(self.NOTE)
        if any(getattr(b, "monotone", None) for b in self.parent.model.spec.blocks):
            notes.append(
                "Monotone terms are NOT constrained in this unpenalised refit (the penalised "
                "fit is monotone); here "
                + (
                    _violation_text(self.shape_violations)
                    if len(self.shape_violations)
                    else "the refitted segments of every monotone term keep its direction."
                )
            )
        if getattr(self, "non_identified", None):
            notes.append("NOT IDENTIFIED: " + self._non_identified_text())
        if self.refit_family is not None and self.refit_family.extra_df:
            notes.append(
                "Family parameters re-estimated on these rows by maximum likelihood, "
                "alternating with IRLS (R's glm.nb): "
                + "; ".join(f"{k} = {v:.6g}" for k, v in
                            self.refit_family.parameter_columns().items())
                + ". AIC and BIC count them; the standard errors of the coefficients "
                "are at the estimated value (R's glm.nb)."
            )  # fmt: skip
        if hasattr(smry, "add_extra_txt"):
            smry.add_extra_txt(notes)
        else:  # PHReg's summary (statsmodels' summary2)
            for note in notes:
                smry.add_text(note)
        return smry

    def tidy(
        self, conf_int: bool = True, conf_level: float = 0.95, exponentiate: bool = False
    ) -> pd.DataFrame:
        """One row per coefficient: broom's ``tidy()`` of the refit.

        Parameters
        ----------
        conf_int : bool, default=True
            Include ``conf.low`` and ``conf.high`` (broom's ``conf.int``).
        conf_level : float, default=0.95
            Their coverage (broom's ``conf.level``).
        exponentiate : bool, default=False
            exp() of the estimate and the interval (odds, rate or hazard ratios); the
            standard error stays on the link scale, as in broom.

        Returns
        -------
        DataFrame
            ``term``, ``estimate`` (:attr:`params`), ``std.error`` (:attr:`bse`),
            ``statistic`` (estimate / std.error), ``p.value`` (two-sided, normal or t
            as the refit's ``use_t``), ``conf.low``, ``conf.high`` (:meth:`conf_int`).
            Conditional on the selection unless the refit was split (see the class
            Notes); NaN for a parameter the design does not identify.
        """
        from ._tidy import tidy_refit

        return tidy_refit(self, conf_int, conf_level, exponentiate)

    def glance(self) -> pd.DataFrame:
        """One row for the refit: broom's ``glance()``.

        Returns
        -------
        DataFrame
            ``nobs``, ``df`` (parameters estimated: the identified columns of the
            selected design, intercept included), ``df.residual``, ``null.deviance``,
            ``deviance``, ``logLik``, ``AIC``, ``BIC``, ``dispersion`` (the refit's
            scale), ``lambda`` (of the selection) and ``inference`` (conditional on
            the selection or by sample splitting). A Cox refit has no deviance, BIC or
            (weighted) residual df: NaN; its AIC is R's ``AIC(coxph)``,
            −2 log partial likelihood + 2 ``df``.
        """
        from ._tidy import glance_refit

        return glance_refit(self)

    def augment(
        self,
        newdata: Any = None,
        type_predict: str = "link",
        type_residuals: str = "deviance",
        *,
        se_fit: bool = False,
        interval: float | None = None,
        offset: Any = None,
        y: Any = None,
        missing: str | None = None,
    ) -> pd.DataFrame:
        """The data with the refit's predictions: broom's ``augment()``.

        Parameters
        ----------
        newdata : DataFrame, optional
            Rows to predict (default: the training rows, as in
            ``BinarsityResults.augment``).
        type_predict : {"link", "response"}, default="link"
            Scale of ``.fitted`` (broom's ``type.predict``).
        type_residuals : {"deviance", "pearson", "response"}, default="deviance"
            Kind of ``.resid`` (broom's ``type.residuals``).
        se_fit : bool, default=False
            Add ``.se.fit`` (:meth:`predict` with ``se_fit=True``: the link scale's,
            or by the delta method for the response).
        interval : float, optional
            Add ``.lower`` and ``.upper``, the confidence interval of the mean at this
            coverage (the link scale's interval, mapped by the inverse link for the
            response, as statsmodels' ``get_prediction``).
        offset : array-like, optional
            Offset of ``newdata``.
        y : array-like or str, optional
            Observed response of ``newdata`` for ``.resid`` (default: its response
            column when the left-hand side is a plain column).
        missing : {None, "nan", "error"}, optional
            As in :meth:`predict`.

        Returns
        -------
        DataFrame
            The data (a copy) plus ``.fitted``, ``.se.fit`` and ``.lower``/``.upper``
            when asked, and ``.resid`` when the response is known (none for Cox).
        """
        from ._tidy import augment_refit

        return augment_refit(self, newdata, type_predict, type_residuals, offset, y,
                             se_fit, interval, missing)  # fmt: skip

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("sm_results", "parent", "split"):
            raise AttributeError(name)
        return getattr(self.sm_results, name)

    def __repr__(self) -> str:
        how = "split sample" if self.split else "conditional on selection"
        return f"<RefitResults: {len(self.params)} parameters, {how}>"


def refit_state(refit: RefitResults) -> dict[str, Any]:
    """What the CLI's ``predict --interval`` reads of a GLM refit, without its rows.

    ``fit --save`` stores it beside the results, so that ``predict --interval`` does
    not refit: O(k²) numbers (k = the selected design's columns), however many rows.

    Parameters
    ----------
    refit : RefitResults
        A GLM refit (not Cox) of the results being saved.

    Returns
    -------
    dict
        ``format`` (1), ``names`` (the parameter names), ``params`` (k,) and ``cov``
        (k, k) — exactly the arrays ``get_prediction`` reads (after an identified
        refit or a robust covariance) — and ``scale``, ``df_resid``, ``use_t``.
    """
    sm = refit.sm_results
    return {
        "format": 1,
        "names": list(refit.names),
        "params": np.array(sm.params, dtype=np.float64),
        "cov": np.array(sm.cov_params(), dtype=np.float64),
        "scale": float(sm.scale),
        "df_resid": float(sm.df_resid),
        "use_t": bool(sm.use_t),
    }


def _fit_statsmodels(res: BinarsityResults, rows: np.ndarray, X: np.ndarray | None = None) -> Any:
    """The unpenalised GLM on the selected design of the given training rows; an
    estimated family parameter (NB θ) is re-estimated on them, alternating IRLS at θ
    and θ given μ (``_theta.alternate_refit``, as glm.nb), and the refit's family at
    its θ̂ is kept as ``_refit_family`` on the results.
    """
    m = res.model
    if not m.family.extra_df:
        return _fit_statsmodels_at(res, rows, X, m.family)
    from ._theta import alternate_refit

    if m.var_weights is not None:
        rows = rows[m.var_weights[rows] > 0]  # as _fit_statsmodels_at drops them
    fit, family = alternate_refit(
        m.family, lambda fam: _fit_statsmodels_at(res, rows, X, fam), m.y[rows],
        m.sample_weight[rows], m.family.theta,
    )  # fmt: skip
    fit._refit_family = family
    return fit


def _fit_statsmodels_at(res: BinarsityResults, rows: np.ndarray, X: np.ndarray | None,
                        family: Any) -> Any:  # fmt: skip
    """The unpenalised GLM of ``family`` on the selected design of the given rows.

    statsmodels' GLM (or PHReg for Cox) on the dense design below
    ``_refit_glm.GRAM_MIN_CELLS`` rows × columns; at and above it (not Cox), IRLS from
    the codes' sufficient statistics (:func:`_refit_glm.fit_glm_gram`), without the
    n × k design.
    """
    m = res.model
    level_cols, names = res._selection
    if m.family.survival:
        if X is None:
            X = res._selected_matrix(m.design, strict=False)
        return _fit_phreg(res, rows, X, names)
    kwargs: dict[str, Any] = {"family": family.to_statsmodels()}
    fit_kw: dict[str, Any] = {}
    if m.var_weights is not None:
        rows = rows[m.var_weights[rows] > 0]  # zero analytic weight: not an observation
        kwargs["var_weights"] = m.var_weights[rows]
        if rows.size and not m.family.estimate_dispersion:
            # statsmodels stops IRLS when deviance / scale changes by less than an
            # absolute 1e-8; with a fixed scale (binomial, poisson) that is in the
            # weights' units, so analytic weights of mean 1e-8 stopped after the first
            # steps (poisson SEs 1% off): below a mean weight of 1, the rule of unit
            # weights in the weights' units (never looser than statsmodels' default)
            mean_w = float(np.mean(kwargs["var_weights"]))
            if mean_w < 1.0:
                fit_kw["atol"] = 1e-8 * mean_w
    elif m.freq_weights is not None:
        kwargs["freq_weights"] = m.freq_weights[rows]
    if m.offset is not None:
        kwargs["offset"] = m.offset[rows]
    every = rows.size == m.nobs
    if rows.size * len(names) >= _refit_glm.GRAM_MIN_CELLS:
        d = m.design
        dense = d.dense if len(m.spec.dense_columns) else None
        design = _refit_glm.SegmentDesign(
            d.codes if every else np.asarray(d.codes)[:, rows],
            d.block_ptr, dense if every or dense is None else dense[rows],
            level_cols, len(names), m.fit_intercept,
        )  # fmt: skip
        return _refit_glm.fit_glm_gram(
            design, m.y[rows], kwargs["family"], list(names), m.response.name,
            offset=kwargs.get("offset"), var_weights=kwargs.get("var_weights"),
            freq_weights=kwargs.get("freq_weights"), use_t=m.family.estimate_dispersion,
            fixed_scale=not m.family.estimate_dispersion, concentrated_llf=m.family.quadratic,
            start_eta=res.linear_predictor if every else res.linear_predictor[rows],
        )  # fmt: skip
    # statsmodels' GLM without statsmodels.api (its tsa, graphics…: ~1 s of imports)
    from statsmodels.genmod.generalized_linear_model import GLM

    if X is None:
        X = res._selected_matrix(m.design, strict=False)
    # every row (rows ⊆ 0..n−1, distinct): no copy of the n × k design, which statsmodels
    # copies again (a whitened design, its SVD, its k × n pseudo-inverse)
    exog = pd.DataFrame(X if every else X[rows], columns=names, copy=False)
    endog = pd.Series(m.y[rows], name=m.response.name)
    model = GLM(endog, exog, **kwargs)
    start = _gram_irls(model)
    if start is not None:
        fit_kw["start_params"] = start
    if m.family.estimate_dispersion:
        # Pearson's X² / df: statsmodels' default for gaussian, gamma, Tweedie, and
        # the quasi-likelihood scale of a quasi family (a Poisson or binomial GLM)
        fit_kw["scale"] = "X2"
    return model.fit(use_t=m.family.estimate_dispersion, **fit_kw)
def _fit_phreg(res: BinarsityResults, rows: np.ndarray, X: np.ndarray, names: list) -> Any:
    """statsmodels' PHReg (the family's ties) on the selected design: the Cox refit.

    PHReg has no sample weights: a weighted fit is refitted by :func:`_fit_weighted_cox`
    (the same model, Newton's method with the exact Hessian).
    """
    from statsmodels.duration.hazard_regression import PHReg

    m = res.model
    if m.survival is None:
        raise ValueError("refit() needs the survival times of the model (Surv(time, event)).")
    if not X.shape[1]:
        raise ValueError("refit(): the selection has no column left (every term is flat).")
    if m.weighted:
        return _fit_weighted_cox(res, rows, X, names)
    exog = pd.DataFrame(X[rows], columns=names)
    kwargs: dict[str, Any] = {"status": m.survival[rows, 1], "ties": m.family.ties}
    if m.offset is not None:
        kwargs["offset"] = m.offset[rows]
    if getattr(m, "strata", None) is not None:
        kwargs["strata"] = m.strata[rows]
    return PHReg(m.survival[rows, 0], exog, **kwargs).fit()
def _split_refit(res: BinarsityResults, split: Any, random_state: Any) -> RefitResults:
    """Select on a random share ``split`` of the rows, estimate on the others."""
    from ..core._validation import check_random_state

    if isinstance(split, bool) or not isinstance(split, (int, float, np.integer, np.floating)):
        raise TypeError(f"split must be a number in (0, 1); got {split!r}.")
    share = float(split)
    if not 0.0 < share < 1.0:
        raise ValueError(
            f"split must be in (0, 1) (the share of rows that selects); got {split!r}."
        )
    m = res.model
    n = m.nobs
    n_select = int(round(share * n))
    if not 0 < n_select < n:
        raise ValueError(f"split={split!r} leaves no rows on one side of {n} rows.")
    rs = check_random_state(random_state)
    perm = (rs if isinstance(rs, np.random.RandomState) else np.random.default_rng(rs)).permutation(
        n
    )
    select_rows = np.sort(perm[:n_select])
    estimate_rows = np.sort(perm[n_select:])
    # the cut-points: the same bins, penalty weights and λ, on the selection rows only
    sol = m.prepare(select_rows).solve(res.lam)
    selected = type(res)(m, strip_eta(sol), "split selection")
    # its segments, populated according to the estimation rows' own weights
    counts = m.binned.subset(estimate_rows).histograms(m.unit_weight[estimate_rows])
    selected.__dict__["_selection"] = selected._selection_recipe(counts)
    info = {"share": share, "random_state": random_state, "select_rows": select_rows,
            "estimate_rows": estimate_rows}  # fmt: skip
    return RefitResults(_fit_statsmodels(selected, estimate_rows), selected, split=info)
