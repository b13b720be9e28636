"""Results of a binarsity fit at one λ (``BinarsityResults``).

The λ path and cross-validation results live in :mod:`._path_results`, the unpenalised
refit in :mod:`._refit`.

Statistics are computed once on first use and cached (as statsmodels does). The fitted
model (design recipe, training codes) travels with the results, so a pickled results
object predicts, summarises and refits exactly like the original.
"""

from __future__ import annotations

import math
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..families import _cox
from ..core._base import inconsistent
from ..distributed._dask import is_dask_collection
from ..formula._formula import Block, as_frame, column_or_array, check_predict_missing, predict_complete
from ._refit import _NO_ESTIMATE, _REFERENCE, RefitResults, _fit_statsmodels, _split_refit
from ..core._statistics import chain_edges, coefficient_unit, is_flat, kept_cuts, pearson_dispersion
from ..core._statistics import degrees_of_freedom as _degrees_of_freedom
from ..core._validation import check_offset

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

    from ._bootstrap import BootstrapResults
    from ._model import BinarsityModel
    from ..report._summary import Summary

__all__ = ["BinarsityResults", "degrees_of_freedom"]

def _new_design(model: BinarsityModel, newdata: Any, offset: Any) -> tuple[Any, np.ndarray | None]:
    """The training recipe replayed on new rows: (design, total offset).

    The offset is the formula's ``offset()`` terms plus ``offset`` when given, else the
    model's offset column read from ``newdata`` (when the model was given one).
    """
    newdata = as_frame(newdata)
    design = model.spec.transform(newdata)
    off = design.offset
    extra = None
    if offset is not None:
        extra = check_offset(offset, design.n_obs, rows_of="the data")
    elif model.offset_column is not None:
        if model.offset_column not in newdata.columns:
            raise ValueError(
                f"column '{model.offset_column}' (the model's offset) is missing from the data."
            )
        # validated as at fit time: numeric and finite, errors naming the column
        extra, _ = column_or_array(model.offset_column, newdata, "offset", design.n_obs)
    if extra is not None:
        off = extra if off is None else off + extra
    return design, off


def _chains(blocks: list[Block]) -> list[list[tuple[int, int]]]:
    """Per block its penalised chains ``(first, length)`` (none for a ``C()`` term)."""
    return [[(a, k) for a, k, _ in b.chains()] if b.penalized else [] for b in blocks]


def _jump_mask(
    theta: np.ndarray, blocks: list[Block], block_ptr: np.ndarray, unit: float = 1.0
) -> np.ndarray:
    """The kept cuts of θ (``_statistics.kept_cuts``: the one definition of a jump)."""
    edges = chain_edges(block_ptr, _chains(blocks))
    return kept_cuts(theta, block_ptr, edges, unit)


def jump_unit(model: BinarsityModel) -> float:
    """The unit of η of a fitted model (``_statistics.coefficient_unit``)."""
    if not getattr(model.family, "quadratic", False) or getattr(model, "y", None) is None:
        return 1.0
    return coefficient_unit(model.family, model.y, model.unit_weight)


def degrees_of_freedom(
    model: BinarsityModel, coef: np.ndarray, n_dense: int, jumps: np.ndarray | None = None
) -> int:
    """Degrees of freedom of a fit: jumps + intercept + unpenalised parameters.

    The fused-lasso estimate (design.md §2, ``_statistics.degrees_of_freedom``): each
    binned term contributes its constant segments minus one (the constraint), plus one
    for a populated missing level; a ``C()`` term its populated levels minus one; each
    dense column one. A by-group term ``bin(x):C(g)`` counts its jumps plus the
    populated levels of g minus one (its level means), except a later term of the same
    g (``model.by_donors``), which holds one constraint per level: its jumps only.

    Parameters
    ----------
    model : BinarsityModel
        The model fitted.
    coef : ndarray of shape (d,)
        θ.
    n_dense : int
        Number of dense (unpenalised numeric) columns.
    jumps : ndarray of bool, optional
        The jump mask of ``coef`` when already computed.

    Returns
    -------
    int
        The degrees of freedom.
    """
    m = model
    if jumps is None:
        jumps = _jump_mask(coef, m.spec.blocks, m.block_ptr, jump_unit(m))
    # an intercept absorbed by the first block ('- 1') is one parameter all the same
    n_unpen = int(m.fit_intercept or m.intercept_absorbed) + int(n_dense)
    return _degrees_of_freedom(
        jumps, m.bin_counts, m.block_ptr, _chains(m.spec.blocks),
        [b.penalized and b.has_missing_level for b in m.spec.blocks], n_unpen, m.by_donors,
    )  # fmt: skip


class BinarsityResults:
    """A binarsity GLM fitted at one λ.

    Parameters
    ----------
    model : BinarsityModel
        The model that was fitted.
    solution : Solution
        The engine's solution.
    lam_source : str
        How λ was chosen (shown in the summary), e.g. ``"user"``, ``"theory"``,
        ``"10-fold CV (lam_min, deviance)"``.

    Attributes
    ----------
    lam : float
        λ.
    coef : ndarray of shape (d,)
        θ, the levels of every code block (binned and categorical terms).
    dense_coef : ndarray of shape (q,)
        Coefficients of the unpenalised numeric terms.
    intercept : float
        β0.
    converged : bool
        Whether the solver met its KKT tolerance.
    n_iter : int
        Solver iterations.
    """

    def __init__(self, model: BinarsityModel, solution: Any, lam_source: str = "user") -> None:
        self.model = model
        self.solution = solution
        self.lam = float(solution.lam)
        self.lam_source = lam_source
        # with '- 1' the first block's levels carry the engine's intercept
        self.coef, self.intercept = model.report_coef(solution)
        self.dense_coef = np.asarray(solution.dense_coef, dtype=np.float64)
        self.converged = bool(solution.converged)
        self.n_iter = int(solution.n_iter)
        self.kkt_violation = float(solution.kkt_violation)
        self.objective = float(solution.objective)
        self.cv_rule: dict | None = None  # set by CVResults: the CV rule that chose λ
        self.bootstrap_: Any = None  # the last bootstrap (BootstrapResults)
        self.cv_: Any = None  # the CVResults that chose λ (set by CVResults.results)
        # set by CVResults.results: {"scoring", "mean", "se"} of the CV at this λ
        self.cv_score: dict | None = None
        #: γ of a relaxed fit (:meth:`relax`), None for the penalised fit
        self.relax_gamma: float | None = None

    # -- remedies for spurious steps (see _relax) ----------------------------------------
    def _penalty_description(self) -> dict[str, Any]:
        """How the coefficients were penalised (the model description's ``penalty``)."""
        out: dict[str, Any] = {"weights": str(self.model.penalty_kind)}
        if getattr(self, "relax_gamma", None) is not None:
            out["relax"] = float(self.relax_gamma)
        return out

    def relax(self, gamma: float = 0.0, *, tol: float = 1e-7, max_iter: int = 1000):
        """The relaxed fit on this fit's segments (glmnet's ``relax=TRUE``).

        The model is refitted without penalty on the constant segments of this fit (its
        cut-points kept, nothing else changed): θ̃. The relaxed fit mixes the two,
        θ_γ = γ θ̂ + (1 − γ) θ̃, and the same for β0 and the dense coefficients. γ = 1 is
        this fit, γ = 0 the unpenalised refit on its segments; the penalty's shrinkage
        of the kept steps is undone by 1 − γ. Choose γ with
        ``model.fit_cv(relax=True)`` (λ and γ jointly, as ``cv.glmnet(relax=TRUE)``).

        Parameters
        ----------
        gamma : float, default=0
            The mix, in [0, 1].
        tol : float, default=1e-7
            KKT tolerance of the unpenalised refit.
        max_iter : int, default=1000
            Cap on its solver passes.

        Returns
        -------
        BinarsityResults
            The relaxed fit (same λ, cut-points and df; ``relax_gamma`` = γ). Its
            ``objective`` is NaN (the mix minimises no single objective) and its KKT
            violation is the penalised fit's.

        Notes
        -----
        Unlike :meth:`refit` (statsmodels, for standard errors), this stays a
        binarsity result: it predicts, summarises and exports as one. The unpenalised
        refit inherits the selection's optimism (the winner's curse): its steps are
        larger than the truth on average, which is why γ is tuned by CV.
        """
        from ..engine._relax import check_gamma, mix_solutions, unpenalized_on_segments
        from ..core._validation import check_max_iter, check_tol

        g = check_gamma(gamma)
        tol, max_iter = check_tol(tol), check_max_iter(max_iter)
        base = self if getattr(self, "relax_gamma", None) is None else self._relaxed_from
        cached = base.__dict__.get("_unpenalized")  # (tol, max_iter, solution)
        if cached is None or cached[:2] != (tol, max_iter):
            m = base.model
            unpen = unpenalized_on_segments(
                m.binned, m.y, m.family, base.solution, m.penalty_weights,
                fit_intercept=m.solver_intercept, tol=tol, max_iter=max_iter,
            )  # fmt: skip
            base.__dict__["_unpenalized"] = cached = (tol, max_iter, unpen)
        unpen = cached[2]
        res = BinarsityResults(
            base.model, mix_solutions(base.solution, unpen, g),
            f"{base.lam_source}; relaxed, gamma={g:g}",
        )
        res.relax_gamma = g
        res._relaxed_from = base
        res.cv_rule, res.cv_score = base.cv_rule, base.cv_score
        return res

    def adaptive(self, power: float = 1.0):
        """A second-stage model whose weights are ω_jk / abs(jump of this fit)^power.

        The adaptive lasso's two stages (Zou 2006) for the fused penalty: steps this fit
        kept large are penalised less in the second stage, small ones more, and an edge
        this fit fused stays fused. Fit the returned model as any other (a number for
        ``lam``, ``fit_path``, ``fit_cv``); ``lam="theory"`` has no meaning for these
        weights and is refused.

        Parameters
        ----------
        power : float, default=1
            The exponent of the jump sizes.

        Returns
        -------
        BinarsityModel
            The same formula and data with adaptive penalty weights.
        """
        return self.model.adaptive(self, power=power)

    # -- coefficients ------------------------------------------------------------------
    @cached_property
    def params(self) -> pd.Series:
        """All coefficients with readable names.

        ``Intercept``, then every level of every code block
        (``bin(age, 50)[(38, 41]]`` is the level of ages in (38, 41], ``[= 38]`` a level
        whose training rows all had age 38;
        ``C(sex)[male]``), then the dense terms.
        """
        names, values = [], []
        if self.model.fit_intercept:
            names.append("Intercept")
            values.append(self.intercept)
        names += self.model.spec.param_names()
        values += self.coef.tolist()
        names += self.model.spec.dense_columns
        values += self.dense_coef.tolist()
        return pd.Series(values, index=pd.Index(names, dtype=object), name="coef")

    @cached_property
    def jumps(self) -> np.ndarray:
        """Boolean mask (d,) of the levels where a binned term's step function jumps."""
        return self._jumps_of(self.coef)

    @property
    def n_jumps(self) -> int:
        """Number of cut-points kept (jumps over all binned terms)."""
        return int(self.jumps.sum())

    @cached_property
    def df(self) -> int:
        """Degrees of freedom: jumps + intercept + unpenalised parameters.

        The fused-lasso estimate (design.md §2): each binned term contributes its
        constant segments minus one (the constraint), plus one for a populated missing
        level; a ``C()`` term its populated levels minus one; each dense column one.
        Unbiased for the gaussian family (Tibshirani & Taylor 2012); for the binomial,
        poisson and other families a heuristic, so AIC and BIC are approximate there.
        """
        return degrees_of_freedom(self.model, self.coef, len(self.dense_coef), self.jumps)

    # -- fitted values and statistics ------------------------------------------------------
    @cached_property
    def linear_predictor(self) -> np.ndarray:
        """η on the training rows (offset included).

        Recomputed from the coefficients (one gather pass) rather than taken from the
        solver, so that ``predict(training data)`` reproduces it to the last bit.
        """
        return self.model.linear_predictor(self.coef, self.dense_coef, self.intercept)

    @cached_property
    def fittedvalues(self) -> np.ndarray:
        """Mean response μ = b'(η) on the training rows."""
        return self.model.family.mean(self.linear_predictor)

    @property
    def resid_response(self) -> np.ndarray:
        """Response residuals y − μ on the training rows."""
        return self.model.y - self.fittedvalues

    @property
    def resid_pearson(self) -> np.ndarray:
        """Pearson residuals √v (y − μ) / √V(μ), v the analytic weights (1 otherwise).

        statsmodels' ``GLMResults.resid_pearson`` with ``var_weights``: frequency weights
        repeat a row and do not scale its residual.
        """
        m = self.model
        mu = self.fittedvalues
        r = (m.y - mu) / np.sqrt(m.family.variance(mu))
        return r if m.var_weights is None else np.sqrt(m.var_weights) * r

    @property
    def resid_deviance(self) -> np.ndarray:
        """Deviance residuals sign(y − μ) √(v d(y, μ)), v the analytic weights (1 otherwise).

        statsmodels' ``GLMResults.resid_deviance`` with ``var_weights``.
        """
        m = self.model
        mu = self.fittedvalues
        d = np.maximum(m.family.unit_deviance(m.y, mu), 0.0)
        if m.var_weights is not None:
            d = m.var_weights * d
        return np.sign(m.y - mu) * np.sqrt(d)

    @property
    def df_resid(self) -> float:
        """Residual degrees of freedom: observations (``wnobs``) minus ``df``."""
        return float(self.model.wnobs - self.df)

    @cached_property
    def pearson_chi2(self) -> float:
        """Pearson's statistic Σ s (y − μ)² / V(μ) in the weights' units (statsmodels')."""
        m = self.model
        return float(m.family.pearson_chi2(m.y, self.fittedvalues, m.unit_weight) * m.weight_scale)

    @property
    def dispersion(self) -> float:
        """Pearson estimate of the dispersion, χ² / ``df_resid`` (statsmodels' ``scale``
        on an unpenalised fit of a family with an estimated dispersion — gaussian, gamma,
        Tweedie; for binomial and poisson statsmodels fixes ``scale`` at 1 and this is
        its ``pearson_chi2 / df_resid``, the over-dispersion check). In the units of the
        analytic weights: weights c·s give c times the dispersion. NaN when no residual
        df is left."""
        return pearson_dispersion(self.pearson_chi2, self.df_resid)

    def term_contributions(self) -> pd.DataFrame:
        """Each term's contribution to the linear predictor on the training rows.

        Returns
        -------
        DataFrame of shape (n, terms)
            One column per term: θ_j of the row's level for a binned or categorical
            term, β_k x_k for a linear term. Their sum plus the intercept and the
            offset is :attr:`linear_predictor`.
        """
        m = self.model
        design = m.design
        cols: dict[str, np.ndarray] = {}
        for j, block in enumerate(m.spec.blocks):
            s, e = int(m.block_ptr[j]), int(m.block_ptr[j + 1])
            codes = np.asarray(design.codes[j], dtype=np.intp)
            if codes.size and (codes.min() < 0 or codes.max() >= e - s):
                raise inconsistent(f"the codes of {block.term} exceed its {e - s} levels")
            cols[block.term] = self.coef[s:e][codes]
        dense = design.dense
        for k, (name, value) in enumerate(
            zip(m.spec.dense_columns, self.dense_coef, strict=True)
        ):
            cols[name] = value * np.asarray(dense[:, k], dtype=np.float64)
        return pd.DataFrame(cols, index=pd.RangeIndex(m.nobs))

    def term_importance(self) -> pd.Series:
        """Mean absolute centred effect of every term (EBM's importance).

        For term j with contribution f_j(x_i) on training row i (see
        :meth:`term_contributions`) and weights s_i: Σ s_i abs(f_j(x_i) − f̄_j) / Σ s_i,
        f̄_j = Σ s_i f_j(x_i) / Σ s_i. Centring makes it independent of how a term's
        levels are coded (the intercept absorbs any shift).

        Returns
        -------
        Series
            Indexed by term, on the link scale.
        """
        m = self.model
        w = np.asarray(m.unit_weight, dtype=np.float64)
        total = float(w.sum())
        values = {}
        # a binned or categorical term takes one value per level: sums over its levels'
        # weights (no n × terms table of contributions)
        for j, block in enumerate(m.spec.blocks):
            s, e = int(m.block_ptr[j]), int(m.block_ptr[j + 1])
            codes = np.asarray(m.design.codes[j], dtype=np.intp)
            if codes.size and (codes.min() < 0 or codes.max() >= e - s):
                raise inconsistent(f"the codes of {block.term} exceed its {e - s} levels")
            level_w = np.bincount(codes, weights=w, minlength=e - s)
            theta = self.coef[s:e]
            mean = float(level_w @ theta) / total if total > 0 else 0.0
            values[block.term] = float(level_w @ np.abs(theta - mean)) / total if total > 0 else 0.0
        for k, (name, value) in enumerate(
            zip(m.spec.dense_columns, self.dense_coef, strict=True)
        ):
            c = value * np.asarray(m.design.dense[:, k], dtype=np.float64)
            mean = float(w @ c) / total if total > 0 else 0.0
            values[name] = float(w @ np.abs(c - mean, out=c)) / total if total > 0 else 0.0
        return pd.Series(values, name="importance", dtype=np.float64).rename_axis("term")

    @property
    def weights_kind(self) -> str | None:
        """What the sample weights mean (``"analytic"`` or ``"freq"``); None unweighted."""
        return self.model.weights_kind if self.model.weighted else None

    @property
    def n_dropped(self) -> int:
        """Rows dropped before the fit for a missing value (``missing="drop"``)."""
        return self.model.n_dropped

    @property
    def nobs(self) -> int:
        """Number of training rows."""
        return self.model.nobs

    @cached_property
    def deviance(self) -> float:
        """Weighted deviance Σ_i s_i d(y_i, μ_i)."""
        m = self.model
        # on the normalised weights, then in the user's units (exact: a power of two);
        # from η (not μ, which clips or rounds to 0/1 for large |η|)
        dev = m.family.deviance_eta(m.y, self.linear_predictor, m.unit_weight)
        return float(dev * m.weight_scale)

    @cached_property
    def null_deviance(self) -> float:
        """Deviance of the intercept(+offset)-only model."""
        m = self.model
        sw = m.unit_weight  # sums on the normalised weights (they cannot overflow)
        b0 = m.family.null_intercept(m.y, sw, m.offset) if m.fit_intercept else 0.0
        eta = np.full(m.nobs, b0) if m.offset is None else b0 + m.offset
        return float(m.family.deviance_eta(m.y, eta, sw) * m.weight_scale)

    @cached_property
    def llf(self) -> float:
        """Log-likelihood, with statsmodels' conventions for the weights.

        Analytic weights are statsmodels' ``var_weights`` (row i has variance φ/s_i;
        gaussian: σ² at its maximum-likelihood value Σ s r² / n over the rows of positive
        weight, so a common scale of the weights does not change it); frequency weights
        are ``freq_weights`` (row i counts s_i times, n = Σ s).
        """
        m = self.model
        mu = self.fittedvalues
        var_w, freq_w = m.var_weights, m.freq_weights
        # Cox: the partial likelihood from η itself (μ = e^η is clipped at η = 700)
        eta = self.linear_predictor if getattr(m.family, "survival", False) else None
        if var_w is not None:
            keep = var_w > 0  # a zero analytic weight removes the row (as R's glm does)
            kw = {} if eta is None else {"eta": eta[keep]}
            return float(m.family.log_likelihood(
                m.y[keep], mu[keep], var_weights=var_w[keep], df=self.df, **kw
            ))  # fmt: skip
        kw = {} if eta is None else {"eta": eta}
        return float(m.family.log_likelihood(m.y, mu, freq_weights=freq_w, df=self.df, **kw))

    @property
    def aic(self) -> float:
        """AIC = −2 llf + 2 df."""
        return -2.0 * self.llf + 2.0 * self.df

    @property
    def bic(self) -> float:
        """BIC = −2 llf + log(n) df, n = Σ s for frequency weights, else the rows of
        positive weight (statsmodels' ``wnobs``)."""
        return -2.0 * self.llf + math.log(self.model.wnobs) * self.df

    # -- prediction ------------------------------------------------------------------------
    def predict(
        self,
        newdata: Any = None,
        type: str = "response",  # noqa: A002 - R's name
        offset: Any = None,
        missing: str | None = None,
        times: Any = None,
    ) -> np.ndarray:
        """Predict on new data with the training cut points and levels.

        Parameters
        ----------
        newdata : DataFrame or Dask DataFrame, optional
            New rows; the training rows when omitted. Needs every column the right-hand
            side of the formula reads (``offset()`` terms are replayed from it). A Dask
            DataFrame gives a lazy Dask Series (one task per partition).
        type : {"response", "link"}, default="response"
            Mean response b'(η) or the linear predictor η. With ``family="cox"``:
            ``"risk"`` (= ``"response"``) the relative risk e^η, ``"linear"``
            (= ``"link"``) η, or ``"survival"`` S(t | x) = exp(−H0(t) e^η) at
            ``times`` with Breslow's baseline (:meth:`baseline_hazard`). A Cox model has
            no intercept: η and the risk are relative to a row with every ``bin()`` and
            ``C()`` term at its weighted training average (the levels satisfy
            Σ n_k θ_k = 0, so the weighted mean of a term's effect over the training
            rows is 0) and every linear term and offset at 0. (``refit().predict()`` is
            relative to the terms' reference levels instead.)
        offset : array-like of shape (n,), optional
            Extra offset for the new rows. When the model was given ``offset=`` as a
            column name it is read from ``newdata``; when it was given an array and
            ``offset`` is omitted here, it is taken as 0 (statsmodels' convention).
        missing : {None, "nan", "error"}, optional
            New rows with a missing value in a column whose missing values dropped
            training rows (``glm(..., missing="drop")`` or ``bin(x, missing="drop")``):
            ``"nan"`` (the default for such a model) predicts NaN for them, as R's
            ``na.exclude``; ``"error"`` raises, naming the column. Other models always
            raise for a missing value outside a missing level.
        times : array-like of float, optional
            ``family="cox"``, ``type="survival"``: the times at which S(t | x) is
            evaluated (required there, refused elsewhere).

        Returns
        -------
        ndarray of shape (n,) or (n, len(times)), or dask Series
            Mean response or linear predictor of every row (a dask Series for dask
            ``newdata``); survival probabilities, one column per time, for
            ``type="survival"``.

        Raises
        ------
        ValueError
            A column missing from ``newdata``, an unseen categorical level, a NaN
            without a missing level, or a non-finite offset; the message names the column.
        TypeError
            A non-numeric ``bin()`` or offset column; the message names the column.
        """
        if self.model.family.survival:
            return self._predict_survival(newdata, type, offset, missing, times)
        if times is not None:
            raise ValueError("times is only used with family='cox' and type='survival'.")
        if type not in ("response", "link"):
            raise ValueError(f"type must be 'response' or 'link'; got {type!r}.")
        return self._predict_base(newdata, type, offset, missing)

    def _predict_base(self, newdata, type, offset, missing):  # noqa: A002
        if newdata is not None and is_dask_collection(newdata):
            from ..distributed._dask_model import predict_dask

            check_predict_missing(missing)
            return predict_dask(self, newdata, type, offset, _new_design)
        if newdata is not None:
            return predict_complete(
                self.model.spec, newdata, offset, missing,
                lambda rows, off: self._predict(rows, type, off),
            )  # fmt: skip
        check_predict_missing(missing)
        return self._predict(None, type, offset)

    def _predict_survival(self, newdata, type, offset, missing, times):  # noqa: A002
        types = {"risk": "response", "response": "response", "linear": "link",
                 "link": "link", "survival": "link"}  # fmt: skip
        if type not in types:
            raise ValueError(
                f"type must be 'risk', 'linear' or 'survival' for family='cox'; got {type!r}."
            )
        if (times is None) == (type == "survival"):
            raise ValueError("times is required with type='survival' and only used there.")
        out = self._predict_base(newdata, types[type], offset, missing)
        if type != "survival":
            return out
        t = np.atleast_1d(np.asarray(times, dtype=np.float64))
        if t.ndim != 1 or not np.all(np.isfinite(t)) or np.any(t < 0):
            raise ValueError("times must be finite non-negative numbers.")
        m = self.model
        labels = np.full(out.shape[0], "", dtype=object)
        if m.spec.strata:
            if newdata is None:
                labels = m.strata
            else:
                from ..formula._formula import strata_labels

                labels = strata_labels(newdata, m.spec.strata)
        h0 = np.empty((out.shape[0], t.size))
        for label in np.unique(labels.astype(str)):
            if label not in self._baseline:
                raise ValueError(
                    f"stratum {str(label)!r} of {m.spec.strata} was not seen when the model was "
                    f"fitted; known strata: {sorted(self._baseline)[:10]}."
                )
            event_times, cumhaz = self._baseline[label]
            at = np.searchsorted(event_times, t, side="right")
            h0[labels.astype(str) == label] = np.concatenate([[0.0], cumhaz])[at]
        with np.errstate(invalid="ignore"):
            return np.exp(-np.exp(out)[:, None] * h0)

    @cached_property
    def _baseline(self) -> dict:
        m = self.model
        if m.survival is None:
            raise inconsistent("the model has no survival times")
        return _cox.breslow_baseline(
            m.survival[:, 0], m.survival[:, 1], self.linear_predictor, m.unit_weight,
            getattr(m, "strata", None),
        )

    def baseline_hazard(self) -> pd.DataFrame:
        """Breslow's baseline cumulative hazard H0(t) at the training event times.

        ``family="cox"`` only. H0 goes with :meth:`predict`'s ``type="linear"``
        (levels centred on the weighted average training row): S(t | x) = exp(−H0(t) e^η).

        Returns
        -------
        DataFrame
            Columns ``time``, ``cumhaz`` (H0) and ``survival`` (e^{−H0}, the baseline
            survival); with a ``strata()`` term first a ``stratum`` column (one baseline
            per stratum).
        """
        if not self.model.family.survival:
            raise ValueError("baseline_hazard() needs family='cox'.")
        frames = []
        for label, (times, cumhaz) in self._baseline.items():
            frame = pd.DataFrame({"time": times, "cumhaz": cumhaz, "survival": np.exp(-cumhaz)})
            if self.model.spec.strata:
                frame.insert(0, "stratum", label)
            frames.append(frame)
        return pd.concat(frames, ignore_index=True)

    @cached_property
    def concordance(self) -> float:
        """Harrell's C of η on the training rows (``family="cox"``; NaN otherwise).

        Pairs weighted by s_i s_j; ties in η count one half (lifelines' convention).
        """
        m = self.model
        if m.survival is None:
            return float("nan")
        return _cox.concordance_index(
            m.survival[:, 0], m.survival[:, 1], self.linear_predictor, m.unit_weight,
            getattr(m, "strata", None),
        )

    def _predict(self, newdata: Any, type: str, offset: Any) -> np.ndarray:  # noqa: A002
        m = self.model
        if not (
            np.all(np.isfinite(self.coef))
            and np.all(np.isfinite(self.dense_coef))
            and np.isfinite(self.intercept)
        ):
            raise inconsistent("the coefficients hold NaN or infinite values")
        if newdata is None:
            if offset is not None:
                raise ValueError("offset is only used together with newdata.")
            eta = self.linear_predictor
        else:
            design, off = _new_design(m, newdata, offset)
            eta = m.linear_predictor(self.coef, self.dense_coef, self.intercept, design, off)
        return eta if type == "link" else m.family.mean(eta)

    # -- interpretation --------------------------------------------------------------------
    def _segments(self, j: int) -> list[tuple[int, int]]:
        """Chain positions (first, last) of the constant segments of binned block j."""
        block = self.model.spec.blocks[j]
        s = int(self.model.block_ptr[j])
        breaks = {first for first, _, _ in block.chains()}
        starts = [0] + [
            k for k in range(1, block.chain_length) if self.jumps[s + k] or k in breaks
        ]
        ends = [k - 1 for k in starts[1:]] + [block.chain_length - 1]
        return list(zip(starts, ends, strict=True))

    def cut_points(self, precision: int | None = None) -> pd.DataFrame:
        """The cut-points kept: where a binned term's step function jumps.

        Parameters
        ----------
        precision : int, optional
            Significant digits of the interval labels (default 6).

        Returns
        -------
        DataFrame
            One row per jump: ``term``, ``column``, ``cut`` (x ≤ cut is left of the
            jump), ``left`` and ``right`` (the constant segments on either side, as
            right-closed intervals ``(low, high]`` or ``= v`` for a single training
            value) and ``jump`` (θ_right − θ_left, on the link scale); when a term is
            monotone (``bin(x, monotone=...)``), ``shape`` (``"increasing"``,
            ``"decreasing"`` or ``"free"``); after :meth:`bootstrap`, ``frequency`` (the
            share of resamples that jump there).
        """
        rows, edges = [], []
        m = self.model
        for j, block in enumerate(m.spec.blocks):
            if not block.penalized:
                continue
            s = int(m.block_ptr[j])
            segs = self._segments(j)
            breaks = {first for first, _, _ in block.chains()}
            for (a, b), (c, d) in zip(segs[:-1], segs[1:], strict=True):
                if c in breaks:  # the next group level's chain (by-group terms)
                    continue
                cut_at = block.position(c)[0] if block.by is not None else c
                edges.append((j, c))
                rows.append(
                    {
                        "term": block.term,
                        "column": block.column,
                        "cut": float(block.edges[cut_at - 1]) if block.edges is not None
                        else np.nan,
                        "left": block.segment_label(a, b, precision),
                        "right": block.segment_label(c, d, precision),
                        "jump": float(self.coef[s + c] - self.coef[s + c - 1]),
                    }
                )
        cols = ["term", "column", "cut", "left", "right", "jump"]
        shapes = [getattr(b, "monotone", None) for b in m.spec.blocks]
        if any(shapes):
            # a monotone term's jumps all go its way: say which terms are constrained
            for row, (j, _) in zip(rows, edges, strict=True):
                row["shape"] = shapes[j] or "free"
            cols.append("shape")
        boot = getattr(self, "bootstrap_", None)
        if boot is not None:
            freq = boot._edge_frequency()
            for row, (j, k) in zip(rows, edges, strict=True):
                row["frequency"] = float(freq[int(m.block_ptr[j]) + k])
            cols.append("frequency")
        return pd.DataFrame(rows, columns=cols)

    def shape_functions(self, merge: bool = False, precision: int | None = None) -> pd.DataFrame:
        """The fitted step function of every code block.

        Parameters
        ----------
        merge : bool, default=False
            Merge neighbouring bins with equal levels into one segment.
        precision : int, optional
            Significant digits of the interval labels (default 6).

        Returns
        -------
        DataFrame
            ``term``, ``label`` (``(low, high]``, ``= v`` for a bin that held one
            distinct training value, a category or ``missing``), ``low``, ``high`` (the
            interval (low, high]; NaN for a categorical or missing level), ``level`` (θ
            on the link scale) and ``count`` (weighted training rows).
        """
        m = self.model
        rows = []
        for j, block in enumerate(m.spec.blocks):
            s = int(m.block_ptr[j])
            labels = block.level_labels(precision)
            theta = self.coef[s : int(m.block_ptr[j + 1])]
            counts = m.bin_counts[s : int(m.block_ptr[j + 1])]
            if block.penalized:
                segs = self._segments(j) if merge else [(k, k) for k in range(block.chain_length)]
                for a, b in segs:
                    rows.append(
                        {"term": block.term, "label": block.segment_label(a, b, precision),
                         "low": block.bounds(a)[0], "high": block.bounds(b)[1],
                         "level": float(theta[a]), "count": float(np.sum(counts[a : b + 1]))}
                    )  # fmt: skip
                extra = range(block.chain_length, block.n_levels)
            else:
                extra = range(block.n_levels)
            for k in extra:
                rows.append(
                    {"term": block.term, "label": labels[k], "low": np.nan, "high": np.nan,
                     "level": float(theta[k]), "count": float(counts[k])}
                )  # fmt: skip
        return pd.DataFrame(rows, columns=["term", "label", "low", "high", "level", "count"])

    def term_table(self) -> pd.DataFrame:
        """One row per term: kind, levels, cut-points kept, selected, range of effect.

        Returns
        -------
        DataFrame
            Indexed by term: ``kind`` ("bin", "categorical", "linear"), ``levels``,
            ``cuts_kept``, ``selected``, ``effect_min``, ``effect_max`` (θ over the
            populated levels; for a linear term β x at the smallest and the largest x of
            the training rows), ``effect_range`` (max − min: a linear term's
            abs(β) times its column's range) and ``importance``
            (:meth:`term_importance`).
        """
        m = self.model
        importance = self.term_importance()
        rows = []
        for j, block in enumerate(m.spec.blocks):
            s, e = int(m.block_ptr[j]), int(m.block_ptr[j + 1])
            theta, counts = self.coef[s:e], m.bin_counts[s:e]
            populated = theta[counts > 0] if np.any(counts > 0) else theta
            jumps = int(self.jumps[s:e].sum())
            selected = self._block_selected(j)
            rows.append(
                {"term": block.term, "levels": block.n_levels,
                 "kind": "ordered" if getattr(block, "ordered", False) else block.kind,
                 "cuts_kept": jumps if block.penalized else np.nan, "selected": selected,
                 "effect_min": float(populated.min()), "effect_max": float(populated.max())}
            )  # fmt: skip
        dense = m.design.dense
        for k, (name, value) in enumerate(
            zip(m.spec.dense_columns, self.dense_coef, strict=True)
        ):
            x = np.asarray(dense[:, k], dtype=np.float64)
            ends = value * np.array([x.min(), x.max()]) if x.size else np.zeros(2)
            rows.append(
                {"term": name, "kind": "linear", "levels": np.nan, "cuts_kept": np.nan,
                 "selected": bool(value != 0), "effect_min": float(ends.min()),
                 "effect_max": float(ends.max())}
            )  # fmt: skip
        for row in rows:
            row["effect_range"] = row["effect_max"] - row["effect_min"]
            row["importance"] = float(importance.get(row["term"], 0.0))
        cols = ["kind", "levels", "cuts_kept", "selected", "effect_min", "effect_max",
                "effect_range", "importance"]  # fmt: skip
        if not rows:
            return pd.DataFrame(columns=cols, index=pd.Index([], name="term", dtype=object))
        return pd.DataFrame(rows).set_index("term")[cols]

    def _block_selected(self, j: int) -> bool:
        """Whether term j has an effect: a kept cut, or populated levels that differ by
        more than the jump tolerance (``_statistics``; the term table and the plots)."""
        m = self.model
        s, e = int(m.block_ptr[j]), int(m.block_ptr[j + 1])
        if np.any(self.jumps[s:e]):
            return True
        theta, counts = self.coef[s:e], m.bin_counts[s:e]
        populated = theta[counts > 0] if np.any(counts > 0) else theta
        if populated.size == 0:
            return False
        # a C() term's levels, a binned term's missing level or by-group level means
        return not is_flat(populated, self._eta_unit)

    def categorical_effects(self) -> pd.DataFrame:
        """``C()`` terms in reference coding: each level against the reference level.

        The reference is the level given by ``C(x, Treatment(level))`` (patsy's and
        formulaic's spelling; also ``Treatment(reference=level)``), else the first
        populated level. The fit identifies a categorical by the weighted sum-to-zero constraint; the
        differences θ_k − θ_ref are the same under any coding and are what an
        unpenalised GLM with treatment contrasts reports.

        Returns
        -------
        DataFrame
            ``term``, ``level``, ``reference``, ``effect`` (θ_k − θ_ref, link scale) and
            ``count`` (weighted training rows), one row per non-reference level.
        """
        m = self.model
        rows = []
        for j, block in enumerate(m.spec.blocks):
            if block.penalized:
                continue
            s, e = int(m.block_ptr[j]), int(m.block_ptr[j + 1])
            counts = m.bin_counts[s:e]
            populated = np.flatnonzero(counts > 0)
            if populated.size == 0:
                continue
            ref = int(populated[0])
            chosen = getattr(block, "reference", None)  # C(x, Treatment(level))
            if chosen is not None and chosen in list(block.levels):
                k_ref = list(block.levels).index(chosen)
                if counts[k_ref] <= 0:
                    raise ValueError(
                        f"{block.term}: the reference level {chosen!r} has no training weight."
                    )
                ref = k_ref
            labels = block.level_labels()
            for k in populated[populated != ref]:
                rows.append(
                    {"term": block.term, "level": labels[k], "reference": labels[ref],
                     "effect": float(self.coef[s + k] - self.coef[s + ref]),
                     "count": float(counts[k])}
                )  # fmt: skip
        return pd.DataFrame(rows, columns=["term", "level", "reference", "effect", "count"])

    def selected_terms(self) -> list[str]:
        """Terms with a non-zero effect (binned terms with at least one cut-point kept).

        Returns
        -------
        list of str
            Term names; ``C()`` and linear terms count when their effect is non-zero.
        """
        table = self.term_table()
        return [str(t) for t in table.index[table["selected"].astype(bool)]]

    def summary(self, precision: int | None = None, sort: str | None = None) -> Summary:
        """A statsmodels-style report of the fit.

        Parameters
        ----------
        precision : int, optional
            Significant digits of the cut points and interval labels (default 6).
        sort : {None, "importance"}, optional
            ``"importance"`` lists the terms by decreasing :meth:`term_importance`;
            by default they appear in formula order.

        Returns
        -------
        Summary
            Printable (``print(res.summary())``); ``as_text()``, ``as_html()``,
            ``as_latex()`` and ``tables`` (DataFrames).
        """
        from ..report._summary import make_summary

        if sort not in (None, "importance"):
            raise ValueError(f"sort must be None or 'importance', got {sort!r}")
        return make_summary(self, precision=precision, sort=sort)

    # -- broom's tidy outputs (model/_tidy.py) ---------------------------------------------
    def tidy(
        self,
        conf_int: bool = True,
        conf_level: float = 0.95,
        exponentiate: bool = False,
        merge: bool = False,
    ) -> pd.DataFrame:
        """One row per coefficient: broom's ``tidy()`` of the penalised fit.

        Parameters
        ----------
        conf_int : bool, default=True
            Include the ``conf.low`` and ``conf.high`` columns (broom's ``conf.int``).
        conf_level : float, default=0.95
            Their nominal coverage (broom's ``conf.level``; the intervals are NaN here).
        exponentiate : bool, default=False
            Report exp(estimate) (odds or rate ratios for a logit or log link).
        merge : bool, default=False
            One row per constant segment of every binned term (its cut-points kept,
            neighbouring bins with equal levels merged) instead of one per bin.

        Returns
        -------
        DataFrame
            ``term`` (the name in :attr:`params`; with ``merge`` the term and its
            segment, as ``bin(age, 20)[(38, 50]]``), ``estimate`` (the penalised
            coefficient, link scale), ``std.error``, ``statistic``, ``p.value``,
            ``conf.low`` and ``conf.high`` (all NaN, see Notes), then ``variable`` (the
            formula term the row belongs to), ``level`` (the bin, segment or category
            label; None for the intercept and linear terms), ``cut`` (whether the step
            function jumps at this row's lower edge: a kept cut-point of
            :meth:`cut_points`) and ``count`` (weighted training rows).

        Notes
        -----
        The penalised estimate has no valid standard error, so those columns are
        present (for binding rows with other fits' tables) and NaN: θ̂ is shrunk towards
        its neighbours by an amount that grows with λ, and its cut-points were chosen
        by the same data, so neither the Fisher information nor a sandwich at θ̂ gives
        a standard error, test or interval with its nominal meaning (the lasso's
        standard-error problem). For inference use ``refit(split=0.5).tidy()``
        (unpenalised, on held-out rows), ``refit().tidy()`` (conditional on the
        selection) or ``bootstrap().tidy()`` (resampling intervals, named by their
        method). R: ``broom::tidy(glm_fit)``; glmnet fits have no standard errors in
        broom either.
        """
        from ._tidy import tidy_results

        return tidy_results(self, conf_int, conf_level, exponentiate, merge)

    def glance(self) -> pd.DataFrame:
        """One row for the fit: broom's ``glance()``.

        Returns
        -------
        DataFrame
            One row: ``nobs``, ``df`` (:attr:`df`), ``df.residual``, ``null.deviance``,
            ``deviance``, ``logLik``, ``AIC``, ``BIC`` (approximate outside the gaussian
            family, see :attr:`df`), ``lambda``, ``lambda.source`` (how λ was chosen),
            ``n.cuts`` (cut-points kept), ``converged``, and, for a fit chosen by
            cross-validation, ``cv.scoring``, ``cv.score`` and ``cv.std.error`` (the CV
            mean and its standard error at this λ; None and NaN otherwise);
            ``concordance`` (Harrell's C) for ``family="cox"``.
        """
        from ._tidy import glance_results

        return glance_results(self)

    def augment(
        self,
        newdata: Any = None,
        type_predict: str = "link",
        type_residuals: str = "deviance",
        *,
        offset: Any = None,
        y: Any = None,
        missing: str | None = None,
    ) -> pd.DataFrame:
        """The data with the fit's predictions and residuals: broom's ``augment()``.

        Parameters
        ----------
        newdata : DataFrame, optional
            Rows to predict; by default the training rows (the columns of the data
            given to :func:`glm`, the rows kept by ``missing="drop"``; a pickled model
            does not keep them and gives the new columns alone).
        type_predict : {"link", "response"}, default="link"
            Scale of ``.fitted`` (broom's ``type.predict``; its default for a GLM is
            the link). For ``family="cox"``, η or the relative risk.
        type_residuals : {"deviance", "pearson", "response"}, default="deviance"
            Kind of ``.resid`` (broom's ``type.residuals``).
        offset : array-like, optional
            Offset of ``newdata``, as in :meth:`predict`.
        y : array-like or str, optional
            Observed response of ``newdata`` (values or a column name), for ``.resid``;
            by default the response column, when the formula's left-hand side is a
            column of ``newdata`` (a factor response: 1 for its event level).
        missing : {None, "nan", "error"}, optional
            As in :meth:`predict`.

        Returns
        -------
        DataFrame
            The data (a copy) plus ``.fitted`` and, when the response is known,
            ``.resid`` (none for ``family="cox"``). No ``.se.fit``: the penalised fit
            has no valid standard error (see :meth:`tidy`); use ``refit().augment``
            or ``bootstrap().augment`` for uncertainty.
        """
        from ._tidy import augment_results

        return augment_results(self, newdata, type_predict, type_residuals, offset, y, missing)

    # -- the neutral description -------------------------------------------------------------
    def to_spec(self) -> dict[str, Any]:
        """A versioned, JSON-serialisable description of the fitted model.

        Per term its kind, expression, column, cut points (right-closed), levels,
        missing level, reference level (``C(g, Treatment(level))``) and θ; the
        intercept, family and link (with parameters such as Tweedie's power), the offset
        terms, the columns whose missing values give NaN predictions
        (``missing="drop"``) and the package version (see the module
        ``binarsity_stats.design._spec``). ``binarsity_stats.from_spec`` rebuilds from it a
        model that predicts bit for bit what this one predicts; exporters read only it.

        Returns
        -------
        dict
            Plain JSON values (``json.dumps`` writes it as is).

        Raises
        ------
        ValueError
            A term that the description cannot replay: a formulaic stateful transform
            (``center(x)``, ``scale(x)``, ``poly(x)``...) or ``C()`` of an expression.
        """
        from ..formula._formula import unalias, dense_column_factors
        from ..design._spec import argument_expr, bin_term, describe_input, json_value, make_spec

        m = self.model
        spec = m.spec
        aliases = getattr(spec, "aliases", None)
        for key, state in spec.model_spec.transform_state.items():
            if state and "__binarsity__" not in state:
                raise ValueError(
                    f"term {unalias(key, aliases)!r} uses a stateful transform whose state "
                    "the model description does not record; write it as a data column."
                )
        terms: list[dict[str, Any]] = []
        kinds = m.binned.kinds
        for j, block in enumerate(spec.blocks):
            s, e = int(m.block_ptr[j]), int(m.block_ptr[j + 1])
            by = getattr(block, "by", None)
            expr = argument_expr(block.term if by is None else block.term.rsplit(":C(", 1)[0])
            if block.kind == "bin":
                # the input as a column reference (+ one transform), never as text. The
                # kept cuts: every cut point with θ as fitted — readers treat a cut
                # between two equal levels as absent (the SQL export leaves it out), so a
                # jump rule that flattens θ here decides the cuts of every exporter
                source = describe_input(expr, block.term, aliases)
                terms.append(bin_term(block.term, source, block.column, block.edges,
                                      block.has_missing_level, self.coef[s:e], kinds[j]))  # fmt: skip
                if by is not None:
                    terms[-1]["by"] = {"column": by, "main": bool(block.by_main),
                                       "levels": [json_value(v) for v in block.by_levels]}  # fmt: skip
                continue
            if describe_input(expr, block.term, aliases) != {"column": block.column}:
                raise ValueError(f"term {block.term!r}: C() of an expression is not described.")
            term = {"kind": "categorical", "name": block.term,
                    "column": block.column, "levels": [json_value(v) for v in block.levels],
                    "missing_level": bool(block.has_missing_level), "unseen": "error",
                    "penalty": kinds[j], "theta": [float(v) for v in self.coef[s:e]]}  # fmt: skip
            if getattr(block, "reference", None) is not None:  # C(g, Treatment(level))
                term["reference"] = json_value(block.reference)
            terms.append(term)
        factors = dense_column_factors(spec)
        for name, value in zip(spec.dense_columns, self.dense_coef, strict=True):
            terms.append({"kind": "linear", "name": name, "factors": factors[name],
                          "coef": float(value)})  # fmt: skip
        offset_terms = [describe_input(argument_expr(c), c, aliases) for c in spec.offset_columns]
        response = {"name": m.response.name, "kind": m.response.kind}
        if m.response.event is not None:
            response["event"] = json_value(m.response.event)
        return make_spec(
            source=type(self).__name__, family=m.family, intercept=self.intercept,
            fit_intercept=bool(spec.fit_intercept), terms=terms, lam=self.lam,
            response=response, offset_terms=offset_terms, offset_column=m.offset_column,
            penalty=self._penalty_description(),
            drop_columns=getattr(spec, "drop_columns", None),
            kinds=getattr(spec, "column_kinds", None),
        )  # fmt: skip

    def to_sql(self, table: str = "t", dialect: str = "sqlite", **kwargs: Any) -> str:
        """One SQL ``SELECT`` scoring every row of ``table`` with this model.

        Parameters
        ----------
        table : str, default="t"
            The table holding the rows, with the columns the model was fitted on.
        dialect : {"sqlite", "duckdb", "postgresql"}, default="sqlite"
            The database.
        **kwargs
            ``type``, ``name``, ``keep``, ``offset_column`` of :func:`binarsity_stats.to_sql`.

        Returns
        -------
        str
            The query (see :func:`binarsity_stats.to_sql`).
        """
        from ..export._sql import to_sql

        return to_sql(self, table=table, dialect=dialect, **kwargs)

    def scorecard(
        self,
        pdo: float = 20.0,
        base_score: float = 600.0,
        base_odds: float = 50.0,
        rounding: int | None = None,
    ) -> Any:
        """Points per interval per term of a binomial fit (a credit-scoring scorecard).

        Parameters
        ----------
        pdo : float, default=20
            Points that double the odds against the event (y = 1).
        base_score : float, default=600
            The score at odds ``base_odds`` : 1 against the event.
        base_odds : float, default=50
            The odds that ``base_score`` stands for.
        rounding : int or None, default=None
            Decimals of the points (0: whole points); None keeps them exact.

        Returns
        -------
        Scorecard
            ``table`` (points per interval per term), ``score(new)``, ``points(new)``;
            see :func:`binarsity_stats.scorecard`.
        """
        from ..export._scorecard import scorecard

        return scorecard(self, pdo=pdo, base_score=base_score, base_odds=base_odds,
                         rounding=rounding)  # fmt: skip

    # -- unpenalised refit -------------------------------------------------------------------
    @cached_property
    def _selection(self) -> tuple[list[np.ndarray], list[str]]:
        """The recipe of the selected design: per code block, the column of every level.

        A level maps to its segment's indicator column, to ``_REFERENCE`` (the reference
        segment or level, all zeros) or to ``_NO_ESTIMATE`` (a segment without training
        weight: the refit has no coefficient for it).
        """
        return self._selection_recipe(self.model.bin_counts)

    def _selection_recipe(self, bin_counts: np.ndarray) -> tuple[list[np.ndarray], list[str]]:
        """:attr:`_selection` with the segments populated according to ``bin_counts``
        (the weighted level counts of the rows the GLM is estimated on)."""
        m = self.model
        names: list[str] = ["Intercept"] if m.fit_intercept else []
        level_cols: list[np.ndarray] = []
        # without an intercept the first term is fully coded; a Cox model has no
        # intercept AND no constant direction (PHReg): every term is reference-coded
        full_first = not m.fit_intercept and m.family.has_intercept
        donors = m.by_donors
        for j, block in enumerate(m.spec.blocks):
            s, e = int(m.block_ptr[j]), int(m.block_ptr[j + 1])
            counts = bin_counts[s:e]
            if block.penalized:
                new = self.jumps[s:e][: block.chain_length].copy()
                new[[first for first, _, _ in block.chains() if first > 0]] = True
                seg = np.cumsum(new)
                seg_of_level = np.concatenate(
                    [seg, np.arange(block.chain_length, e - s) - block.chain_length + seg[-1] + 1]
                )
                seg_names = []
                for sid in range(int(seg[-1]) + 1):
                    levels = np.flatnonzero(seg == sid)
                    label = block.segment_label(int(levels[0]), int(levels[-1]))
                    seg_names.append(f"{block.term}[{label}]")
                if block.has_missing_level:
                    seg_names.append(f"{block.term}[missing]")
                n_seg = len(seg_names)
                seg_count = np.bincount(seg_of_level, weights=counts, minlength=n_seg)
            else:
                seg_of_level = np.arange(e - s)
                seg_names = block.param_names()
                n_seg = e - s
                seg_count = counts
            keep = [sid for sid in range(n_seg) if seg_count[sid] > 0]
            col_of_seg = np.full(n_seg, _NO_ESTIMATE, dtype=np.intp)
            if j in donors:  # one constraint per level of g: a reference segment per chain
                starts = {int(seg_of_level[first]) for first, _, _ in block.chains()}
                chain_of = np.cumsum([sid in starts for sid in range(n_seg)])
                refs = {next(sid for sid in keep if chain_of[sid] == c)
                        for c in {int(chain_of[sid]) for sid in keep}}  # fmt: skip
                for sid in refs:
                    col_of_seg[sid] = _REFERENCE
                keep = [sid for sid in keep if sid not in refs]
            elif keep and not full_first:
                col_of_seg[keep[0]] = _REFERENCE
                keep = keep[1:]
            full_first = False
            for sid in keep:
                col_of_seg[sid] = len(names)
                names.append(seg_names[sid])
            level_cols.append(col_of_seg[seg_of_level])
        names.extend(m.spec.dense_columns)
        return level_cols, names

    def _selected_matrix(
        self, design: Any, strict: bool = True, rows: slice | None = None
    ) -> np.ndarray:
        """The selected design's columns for the rows of a (training or replayed) design.

        A row in a level without training weight raises (``strict``) or gets zeros (the
        training rows to fit on: such a row has zero weight). ``rows``: only those rows
        (a block of a prediction).
        """
        from ._refit_glm import dense_rows

        m = self.model
        level_cols, names = self._selection
        rows = slice(0, design.n_obs) if rows is None else rows
        codes = [design.codes[j][rows] for j in range(len(m.spec.blocks))]
        if strict:
            for j, block in enumerate(m.spec.blocks):
                bad = level_cols[j][codes[j]] == _NO_ESTIMATE
                if np.any(bad):
                    level = block.level_labels()[int(codes[j][bad][0])]
                    raise ValueError(
                        f"term '{block.term}': level {level} had no training weight, so the "
                        "refit has no coefficient for it; drop these rows."
                    )
        q = len(m.spec.dense_columns)
        n = len(range(*rows.indices(design.n_obs)))
        return dense_rows(level_cols, len(names), m.fit_intercept, codes.__getitem__,
                          design.dense[rows] if q else None, n)  # fmt: skip

    def selected_design(self) -> tuple[np.ndarray, list[str]]:
        """The dummy design the selection produced (reference coding).

        Every binned term's constant segments become indicators with the first segment as
        reference (a populated missing level gets its own indicator); a ``C()`` term
        gets indicators of its populated levels but the first; dense columns are kept.
        Without an intercept the first code block keeps all its indicators. A segment
        or level without training weight gets no column (its rows, all of zero weight,
        get zeros).

        Returns
        -------
        X : ndarray of shape (n, k)
            Intercept, segment and level indicators, dense columns.
        names : list of str
            Column names, e.g. ``bin(age, 50)[38.0, 52.0]`` for a merged segment.
        """
        return self._selected_matrix(self.model.design, strict=False), list(self._selection[1])

    def refit(self, split: float | None = None, random_state: Any = None) -> RefitResults:
        """The unpenalised GLM on the design the selection produced.

        statsmodels' GLM (PHReg for ``family="cox"``) on the dense selected design;
        when rows × columns reach ``binarsity_stats.model._refit_glm.GRAM_MIN_CELLS``
        (4e6), IRLS from the codes' sufficient statistics instead (never the n × k
        design; the same estimates and statistics, ``sm_results`` then a
        :class:`~binarsity_stats.model._refit_glm.GLMRefit` with statsmodels' names).

        Sample weights are passed as statsmodels' ``var_weights`` (analytic weights, the
        default ``weights_kind``) or ``freq_weights`` (``weights_kind="freq"``); rows of
        zero analytic weight are left out, as R's ``glm`` does. Inference uses the
        t distribution with the residual df when the family has a dispersion to
        estimate (gaussian), the normal otherwise.

        Parameters
        ----------
        split : float in (0, 1), optional
            Honest inference by sample splitting: the cut-points are selected (same bins,
            same λ) on a random share ``split`` of the rows and the GLM is estimated on
            the other rows only, so its standard errors, tests and intervals are valid
            for the selected model. By default the selection of this fit is refitted on
            the same rows, and its inference is conditional on the selection.
        random_state : int, numpy Generator or None
            Seed of the split (ignored without ``split``).

        Returns
        -------
        RefitResults
            Wraps the statsmodels (or ``GLMRefit``) results; ``predict``,
            ``get_prediction`` and ``conf_int`` replay the selected design on new rows.
        """
        if split is None:
            return RefitResults(_fit_statsmodels(self, np.arange(self.nobs)), self)
        return _split_refit(self, split, random_state)

    # -- uncertainty -------------------------------------------------------------------------
    def _jumps_of(self, coef: np.ndarray) -> np.ndarray:
        """The jump mask of other levels θ on this model's blocks (bootstrap refits)."""
        m = self.model
        return _jump_mask(coef, m.spec.blocks, m.block_ptr, self._eta_unit)

    @cached_property
    def _eta_unit(self) -> float:
        """The unit of η of the jump tolerance (``_statistics.coefficient_unit``)."""
        return jump_unit(self.model)

    def _new_design(self, newdata: Any, offset: Any) -> tuple[Any, np.ndarray | None]:
        """The training recipe replayed on new rows: (design, total offset)."""
        return _new_design(self.model, newdata, offset)

    def bootstrap(
        self,
        n_boot: int = 200,
        random_state: Any = None,
        n_jobs: int | None = None,
        lam: str = "same",
        *,
        groups: Any = None,
        solver: str = "cd",
        tol: float = 1e-6,
        max_iter: int = 1000,
        verbose: bool | None = None,
    ) -> BootstrapResults:
        """Refit on ``n_boot`` row resamples, on the same bins, warm-started from this fit.

        A row drawn c times enters a resample with its sample weight multiplied by c; with
        ``groups`` (by default those given to ``fit_cv``) whole groups are drawn; with
        frequency weights (``weights_kind="freq"``) the units they count are drawn, as
        from the repeated rows. The last bootstrap is kept: :meth:`cut_points` and the
        summary then show every cut-point's frequency.

        Which band: the percentile band (``shape_bands()``) is centred on the penalised
        estimate and inherits its shrinkage, which grows with λ; it suits a fit at CV's
        ``lam_min`` (or below). At the theory λ or ``lam_1se`` use
        ``shape_bands(method="relaxed")`` (each resample's cut-points refitted without
        penalty). No band covers exactly next to a true jump; coverage measured by
        ``python -m benchmarks inference`` is in docs/benchmarks.md. For intervals with
        a guarantee, ``refit(split=0.5)``.

        Parameters
        ----------
        n_boot : int, default=200
            Number of resamples.
        random_state : int, numpy Generator or None
            Seed; the result does not depend on ``n_jobs`` (bit for bit).
        n_jobs : int, optional
            Worker threads (None: 1; -1: one per CPU).
        lam : {"same", "cv"}, default="same"
            Keep this fit's λ, or choose λ again on every resample by the fit's
            cross-validation rule (results of ``fit_cv`` only).
        groups : array-like of shape (n,) or str, optional
            Group labels, or the name of a column of the data given to ``glm``:
            resample whole groups (the cluster bootstrap).
        solver : {"cd", "fista"}, default="cd"
            Engine solver of the refits.
        tol : float, default=1e-6
            KKT tolerance of the refits.
        max_iter : int, default=1000
            Cap on solver passes.
        verbose : bool, optional
            Progress bar; default: on for long runs.

        Returns
        -------
        BootstrapResults
            ``shape_bands``, ``cut_frequencies``, ``predict(new, interval=)``,
            ``plot_shapes(bands=True)``.
        """
        if getattr(self, "relax_gamma", None) is not None:
            raise ValueError(
                "bootstrap() resamples the penalised fit; a relaxed fit (relax_gamma="
                f"{self.relax_gamma:g}) is not supported: bootstrap the penalised results."
            )
        from ._bootstrap import bootstrap

        boot = bootstrap(
            self, n_boot, random_state, n_jobs, lam, groups=groups, solver=solver, tol=tol,
            max_iter=max_iter, verbose=verbose,
        )  # fmt: skip
        self.bootstrap_ = boot
        return boot

    # -- plots -------------------------------------------------------------------------------
    def plot_shapes(
        self,
        terms: Any = None,
        ax: Any = None,
        density: bool = True,
        bands: bool = False,
        scale: str = "link",
        sharey: bool = False,
        rug: bool = False,
    ) -> Figure:
        """Shape of every (or the named) term, with the data density.

        Binned terms are step functions, ``C()`` terms bars, linear terms a line over
        their training range; a term the penalty dropped is marked "dropped (flat)". The
        missing level of a binned term (``missing="separate"``) is a bar of its own,
        right of the steps, with its row count.

        Parameters
        ----------
        terms : list of str, optional
            Terms to draw (default: every term; a linear term by its column name).
        ax : matplotlib Axes or array of Axes, optional
            Where to draw (one Axes per term).
        density : bool, default=True
            Shade the weighted share of training rows per bin.
        bands : bool, default=False
            Draw the 95% pointwise bands of the last :meth:`bootstrap`.
        scale : {"link", "response"}, default="link"
            The effect in the link's units (log-odds, log rate, mean), or exp(effect)
            relative to the average training row: an odds ratio (binomial), a rate
            ratio (poisson). The gaussian (identity link) has no ratio scale and
            refuses ``"response"``.
        sharey : bool, default=False
            One y range for all drawn terms.
        rug : bool, default=False
            Draw the cut-point frequencies of the last :meth:`bootstrap` as a rug at the
            bottom of every binned term (a tick per edge, as tall as the share of
            resamples that jump there).

        Returns
        -------
        matplotlib.figure.Figure
            The figure drawn on.
        """
        from ..report._plotting import plot_shapes

        band = freq = None
        boot = getattr(self, "bootstrap_", None)
        if (bands or rug) and boot is None:
            what = "bands=True" if bands else "rug=True"
            raise ValueError(f"{what} needs a bootstrap first: call res.bootstrap().")
        if bands:
            band = boot.shape_bands()
        if rug:
            freq = boot.cut_frequencies()
        return plot_shapes(self, terms=terms, ax=ax, density=density, bands=band, scale=scale,
                           sharey=sharey, rug=freq)  # fmt: skip

    def plot_calibration(
        self, new: Any = None, y: Any = None, bins: int = 10, ax: Any = None
    ) -> Figure:
        """Calibration: binned observed against predicted mean, with the row counts.

        Parameters
        ----------
        new : DataFrame, optional
            New rows; the training rows (and weights) when omitted.
        y : array-like or str, optional
            The observed response of ``new`` (or its column name); needed with ``new``.
        bins : int, default=10
            Groups of equal row counts by predicted mean.
        ax : matplotlib Axes, optional
            Where to draw.

        Returns
        -------
        matplotlib.figure.Figure
            The figure drawn on (numbers: ``_plotting.calibration_table``).
        """
        from ..report._plotting import plot_calibration

        return plot_calibration(self, new=new, y=y, bins=bins, ax=ax)

    # -- the report ------------------------------------------------------------------------
    def report(
        self,
        path: Any = None,
        new: Any = None,
        y: Any = None,
        *,
        offset: Any = None,
        title: str | None = None,
        scale: str = "link",
        level: float = 0.95,
        method: str = "percentile",
        bins: int = 10,
        precision: int | None = None,
    ) -> Any:
        """One self-contained HTML page of the fit, for a reader with only a browser.

        The page holds: the data and the model (formula, family, rows, weights, offset,
        every term's column and training range), the :meth:`summary`, the shape plots
        (with the 95% bands and the cut-frequency rug of the last :meth:`bootstrap`, if
        any), the cut-points kept (with their bootstrap frequencies, and the edges not
        kept that resamples often cut), the bootstrap's settings, the cross-validation
        curve and path (when λ came from ``fit_cv``), calibration (binned observed
        against predicted mean) on the training rows or on ``new``, and the versions of
        the package and its libraries. Plots are embedded PNG images; there is no
        script and no link to any file or address, so the page reads offline and can
        be mailed or archived as it is. Every text from the data is HTML-escaped.

        Parameters
        ----------
        path : str or path-like, optional
            File to write (UTF-8). When omitted the page is returned as a string.
        new : DataFrame, optional
            Held-out rows for the calibration section (and a held-out deviance);
            default: the training rows, with their weights.
        y : array-like or str, optional
            The observed response of ``new``, or the name of its column; default the
            formula's response column, when ``new`` has it.
        offset : array-like, optional
            Offset of ``new``, as in :meth:`predict`.
        title : str, optional
            Title of the page (default "Binarsity GLM: " and the formula).
        scale : {"link", "response"}, default="link"
            Scale of the shape plots (see :meth:`plot_shapes`).
        level : float, default=0.95
            Coverage of the bootstrap bands, when bootstrapped.
        method : {"percentile", "basic", "relaxed"}, default="percentile"
            The bootstrap bands (``BootstrapResults.shape_bands``): ``"relaxed"``
            removes the penalty's shrinkage (the one to use at the theory λ or
            ``lam_1se``; it draws the relaxed fit under its band).
        bins : int, default=10
            Groups of equal row counts in the calibration plot.
        precision : int, optional
            Significant digits of cut-points and interval labels (default 6).

        Returns
        -------
        str or path-like
            ``path`` as given, or the HTML page when ``path`` is None.

        Raises
        ------
        ValueError
            A bad ``scale``, ``level`` or ``bins``; ``y`` or ``offset`` without ``new``;
            ``new`` without ``y`` and without the response column.

        See Also
        --------
        CVResults.report : the report of a cross-validated fit.
        BootstrapResults.report : the report with that bootstrap's bands.

        Examples
        --------
        >>> res = glm("y ~ bin(x)", df).fit()  # doctest: +SKIP
        >>> res.bootstrap(200, random_state=0)  # doctest: +SKIP
        >>> res.report("model.html")  # doctest: +SKIP
        'model.html'
        """
        from ..report._report import write_report

        return write_report(
            self, path, new=new, y=y, offset=offset, cv=getattr(self, "cv_", None),
            boot=getattr(self, "bootstrap_", None), title=title, scale=scale, level=level,
            method=method, bins=bins, precision=precision,
        )  # fmt: skip

    def __repr__(self) -> str:
        return (
            f"<BinarsityResults {self.model.family.name} lam={self.lam:.4g} "
            f"({self.lam_source}) df={self.df} deviance={self.deviance:.6g}>"
        )
