"""Results of a binarsity fit at one λ (``BinarsityResults``).

The λ path and cross-validation results live in :mod:`._path_results`, the unpenalised
refit in :mod:`._refit`. ``BinarsityResults`` is defined here (pickles name it here)
with the fit's coefficients and statistics; its other methods come from base classes,
one module of this folder per job: prediction (``_results_prediction``), the per-term
tables (``_results_terms``), the exports (``_results_export``), refit and bootstrap
(``_results_inference``), summary, plots and report (``_results_report``).

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

from ..core._statistics import chain_edges, coefficient_unit, kept_cuts, pearson_dispersion
from ..core._statistics import degrees_of_freedom as _degrees_of_freedom
from ..formula._formula import Block
from ._results_export import ExportMixin
from ._results_inference import InferenceMixin
from ._results_prediction import PredictionMixin, _new_design  # noqa: F401 (importable here)
from ._results_report import ReportMixin
from ._results_terms import TermTablesMixin

if TYPE_CHECKING:  # pragma: no cover
    from ._model import BinarsityModel

__all__ = ["BinarsityResults", "degrees_of_freedom"]


def _chains(blocks: list[Block]) -> list[list[tuple[int, int]]]:
    """Per block its penalised chains ``(first, length)`` (none for a ``C()`` term)."""
    return [
        [(a, k) for a, k, _ in b.chains()] if b.penalized and not _is_pair(b) else []
        for b in blocks
    ]


def _is_pair(block: Block) -> bool:
    return getattr(block, "is_pair", False)


def _pair_dof(model: BinarsityModel, coef: np.ndarray) -> int:
    """The pair terms' degrees of freedom (``_grid.grid_dof``: their regions' face)."""
    from ..core._statistics import jump_tolerance
    from ..core._statistics import grid_dof

    dof = 0
    kinds = model.binned.kinds or ()
    for j, block in enumerate(model.spec.blocks):
        if _is_pair(block):
            grid = kinds[j].block
            s = int(model.block_ptr[j])
            cells = coef[s : s + grid.n_cells]
            tau = jump_tolerance(cells, jump_unit(model))
            dof += grid_dof(grid, cells, model.bin_counts[s : s + grid.n_cells], tau)
    return dof


def _jump_mask(
    theta: np.ndarray, blocks: list[Block], block_ptr: np.ndarray, unit: float = 1.0
) -> np.ndarray:
    """The kept cuts of θ (``_statistics.kept_cuts``: the one definition of a jump)."""
    edges = chain_edges(block_ptr, _chains(blocks))
    return kept_cuts(theta, block_ptr, edges, unit)


def jump_unit(model: BinarsityModel) -> float:
    """The unit of η of a fitted model (``_statistics.coefficient_unit``)."""
    stats = model.__dict__.get("dask_stats")
    if stats is not None and getattr(model.family, "quadratic", False):
        # rows on the Dask workers: the weighted spread of y, reduced (two points of
        # y's weighted mean and standard deviation have that mean and spread)
        y = np.array([stats.y_mean - stats.y_sd, stats.y_mean + stats.y_sd])
        unit = float(model.family.gradient_units(y, np.ones(2)))
        return unit if np.isfinite(unit) and unit > 0 else 1.0
    if not getattr(model.family, "quadratic", False) or getattr(model, "y", None) is None:
        return 1.0
    # every result of a path or CV asks (O(n) passes, a BLAS dot each): computed once
    # per (family, y, weights) of the model — a copy with other rows or weights (folds,
    # resamples, NB's θ) holds other objects and gets its own
    key = (model.family, model.y, model.sample_weight)
    cached = model.__dict__.get("_jump_unit")
    if cached is not None and all(a is b for a, b in zip(cached[0], key)):
        return cached[1]
    unit = coefficient_unit(model.family, model.y, model.unit_weight)
    model.__dict__["_jump_unit"] = (key, unit)
    return unit


def degrees_of_freedom(
    model: BinarsityModel, coef: np.ndarray, n_dense: int, jumps: np.ndarray | None = None
) -> int:
    """Degrees of freedom of a fit: jumps + intercept + unpenalised parameters.

    The fused-lasso estimate (design.md §2, ``_statistics.degrees_of_freedom``): each
    binned term contributes its constant segments minus one (the constraint), plus one
    for a populated missing level; a ``C()`` term its populated levels minus one; each
    dense column one. A by-group term ``bin(x):C(g)`` counts its jumps plus the
    populated levels of g minus one (its level means), except a later term of the same
    g (``model.by_donors``), which holds one constraint per level: its jumps only. A
    pair term ``bin(a):bin(b)`` counts the dimension of the surfaces constant on its
    fused regions that meet its margins (``_grid.grid_dof``).

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
    counts = m.bin_counts
    if any(_is_pair(b) for b in m.spec.blocks):  # a pair's own count: ``_pair_dof``
        counts = counts.copy()
        for j, b in enumerate(m.spec.blocks):
            if _is_pair(b):
                counts[int(m.block_ptr[j]) : int(m.block_ptr[j + 1])] = 0.0
    return _degrees_of_freedom(
        jumps, counts, m.block_ptr, _chains(m.spec.blocks),
        [b.penalized and b.has_missing_level for b in m.spec.blocks], n_unpen, m.by_donors,
    ) + (_pair_dof(m, coef) if any(_is_pair(b) for b in m.spec.blocks) else 0)  # fmt: skip


class BinarsityResults(PredictionMixin, TermTablesMixin, ExportMixin, InferenceMixin, ReportMixin):
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
        self.model.require("relax()")
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
        self.model.require("adaptive()")
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
        self.model.require(
            "fitted values", "The training rows' linear predictor, fitted values and residuals"
        )
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
        if m.rows_on_workers:
            return self._worker_statistics["pearson"]
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
        if m.rows_on_workers:
            return self._worker_statistics["deviance"]
        # on the normalised weights, then in the user's units (exact: a power of two);
        # from η (not μ, which clips or rounds to 0/1 for large |η|)
        dev = m.family.deviance_eta(m.y, self.linear_predictor, m.unit_weight)
        return float(dev * m.weight_scale)

    @cached_property
    def null_deviance(self) -> float:
        """Deviance of the intercept(+offset)-only model."""
        m = self.model
        if m.rows_on_workers:  # the same for every fit of the model: computed once
            return m.worker_null_fit()[1]
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
        if m.rows_on_workers:
            return self._worker_statistics["llf"]
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
        """AIC = −2 llf + 2 df, plus 2 per estimated family parameter (an NB θ: R's
        glm.nb, −2 llf + 2 (df + 1))."""
        return -2.0 * self.llf + 2.0 * (self.df + self.model.family.extra_df)

    @property
    def bic(self) -> float:
        """BIC = −2 llf + log(n) df, n = Σ s for frequency weights, else the rows of
        positive weight (statsmodels' ``wnobs``); an estimated NB θ counts in df."""
        df = self.df + self.model.family.extra_df
        return -2.0 * self.llf + math.log(self.model.wnobs) * df

    @cached_property
    def _worker_statistics(self) -> dict:
        """Deviance, Pearson's χ² and log-likelihood of a model whose rows stay on the
        Dask workers: one pass, per-partition sums tree-reduced (``_dask_stats``)."""
        from ..distributed._dask_stats import fit_statistics

        m = self.model
        sol = self.solution  # the engine's θ and β0 (not the reported, absorbed ones)
        design = m.worker_design("the deviance, Pearson's statistic and log-likelihood")
        return fit_statistics(
            design, m.family, sol.coef, self.dense_coef, float(sol.intercept), m.dask_stats,
            self.weights_kind, m.__dict__.get("dask_client"),
        )  # fmt: skip

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

    # -- the jump tolerance (the bootstrap's refits share it) ------------------------------
    def _jumps_of(self, coef: np.ndarray) -> np.ndarray:
        """The jump mask of other levels θ on this model's blocks (bootstrap refits)."""
        m = self.model
        return _jump_mask(coef, m.spec.blocks, m.block_ptr, self._eta_unit)

    @cached_property
    def _eta_unit(self) -> float:
        """The unit of η of the jump tolerance (``_statistics.coefficient_unit``)."""
        return jump_unit(self.model)

    def __repr__(self) -> str:
        return (
            f"<BinarsityResults {self.model.family.name} lam={self.lam:.4g} "
            f"({self.lam_source}) df={self.df} deviance={self.deviance:.6g}>"
        )
