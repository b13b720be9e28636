"""``glm()``: a binarsity GLM from a formula, fitted at one λ, along a path, or by CV.

The model object owns the training design (bin codes, dense columns, offset, response)
and the penalty weights; every fit goes through the engine's ``solve`` on those codes.

Choices documented here (the docs repeat them):

* **λ = "theory".** The paper's Theorem 1 weights are
  ω_jk = sqrt(2 U_n φ (A + log d) / n · π̂_jk); ``penalty_weights="theory"`` uses
  sqrt(π̂_jk), so the remaining scalar is λ_theory = sqrt(2 U_n φ (A + log d) / n) with
  d the number of binary features of the binned terms, n the number of observations
  (Σ s for frequency weights, so that they give the λ of the repeated rows; Kish's
  effective number (Σ s)² / Σ s² for analytic weights), A = log 40 (the bound then holds with probability ≥ 1 − 2e^{−A} = 0.95),
  U_n the bound on b'' (gaussian 1, binomial 1/4, poisson the largest fitted mean of
  the null model) and φ the dispersion (1 for binomial and poisson; for gaussian σ² is
  estimated scaled-lasso style: a first fit with φ = var(y), then φ̂ = RSS / (n − df)
  and one refit). ``penalty_weights="balanced"``, sqrt(π̂_jk (1 − π̂_jk)), uses the same
  scalar: it is the exact noise level of the centred suffix sums whose union bound
  gives it (``_penalty.lambda_theory``, Notes); adaptive weights have no theory λ.

The λ path and cross-validation, with their choices (the same bins in every fold, the
folds), are in ``_model_path``; the rest of the model's methods are grouped by job in
its base classes: ``_model_interface`` (the fitted-model interface that results read),
``_model_path`` (``fit_path``, ``fit_cv``) and ``_model_dask`` (the Dask twins).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..core._validation import (
    check_lam,
    check_offset_loss,
    check_weights_kind,
    normalized_weights,
)
from ..design._assemble import assemble
from ..design._spec import column_kinds
from ..distributed._dask import is_dask_collection
from ..engine._folds import fold_ids, group_fold_ids
from ..engine._scoring import SCORINGS, weighted_auc
from ..families._families import Family, user_family
from ..formula._formula import (
    Design,
    DesignSpec,
    Response,
    as_frame,
    build_design,
    column_or_array,
    display_formula,
    missing_plan,
)
from ..penalty._penalty import THEORY_A, theory_lambda_fit
from ._model_dask import ROW_ATTRIBUTES, ModelDask, rows_error
from ._model_interface import ModelInterface
from ._model_path import ModelPathCV
from ._results import BinarsityResults, degrees_of_freedom, jump_unit

__all__ = ["glm", "BinarsityModel", "SCORINGS"]

# Re-exported: the engine's path and CV helpers (_path) were defined here before 0.2, and
# THEORY_A, which tests read here.
_REEXPORTED = (fold_ids, group_fold_ids, weighted_auc, THEORY_A)


def glm(
    formula: str,
    data: Any,
    family: str | Family = "gaussian",
    sample_weight: Any = None,
    offset: Any = None,
    n_bins: int = 50,
    penalty_weights: str | np.ndarray = "balanced",
    missing: str = "error",
    weights_kind: str = "analytic",
    client: Any = None,
    *,
    weights: Any = None,
    subset: Any = None,
    exposure: Any = None,
    collect: bool | str = "auto",
) -> BinarsityModel:
    """Specify a binarsity-penalised GLM with an R-style formula.

    Parameters
    ----------
    formula : str
        ``"y ~ terms"``. ``bin(x, n_bins)``: a binned, TV-penalised feature whose cut
        points are learned here and replayed on new data; ``C(x)`` (or a bare
        non-numeric column): an unpenalised categorical; other numeric terms
        (``x``, ``log(x)``, ``x:z``): unpenalised linear; ``offset(expr)``: an offset,
        e.g. ``offset(log(exposure))``; R's ``factor(x)`` reads as ``C(x)``. ``- 1``
        removes the intercept as in R: the first ``bin()`` or ``C()`` term then carries
        full coding (its levels absorb the
        intercept and are not constrained to a weighted sum of zero); with no such
        term the model has no intercept at all. The response may
        be numeric, boolean (``I(affairs > 0)``) or, for binomial, a two-level factor
        whose second level is the event, or R's ``cbind(successes, failures)`` (the
        proportion, with the trials multiplying the weights). ``C(x, Treatment(k))``
        makes level k the reference of the reference-coded table (the fit is
        unchanged). ``y ~ .`` stands for every other column (numeric ones as
        ``bin(col)``, others as ``C(col)``; ``- col`` leaves one out) whatever their
        names hold: a column name is data, never parsed as formula or Python code.
    data : DataFrame, mapping of columns or Dask DataFrame
        Training data. A Dask DataFrame (the ``dask`` extra) is read partition by
        partition: ``bin()`` cut points from mergeable per-partition summaries (identical
        to the in-memory ones up to 100,000 distinct values per feature, a quantile sketch
        beyond), ``C()`` levels merged, codes computed on the workers (``dask_design``);
        weights and offsets are then column names, and only ``bin()``, ``C()``, numeric
        and ``offset()`` terms are supported (user guide, "Big data").
    family : {"gaussian", "binomial", "poisson"}, statsmodels family or Family, default="gaussian"
        Distribution: a name (canonical link) or a statsmodels family instance with a
        convex link, e.g. ``sm.families.Gamma(sm.families.links.Log())`` (the loss is
        then half the unit deviance, design.md §8). R's and statsmodels' spellings
        (``"logistic"``, ``"logit"``, ``"normal"``, ``sm.families.Binomial()`` with its
        canonical link...) are read as the built-in family, with a note in the summary.
        ``"nb"`` (``"negative_binomial"``, ``"negbin"``): the negative binomial with θ
        estimated as R's ``MASS::glm.nb`` (:class:`~binarsity_stats.families.NegativeBinomial`;
        ``fit`` alternates β at λ with θ by maximum likelihood, ``fit_path``/``fit_cv``
        estimate θ once and hold it fixed).
    sample_weight : array-like of shape (n,) or str, optional
        Non-negative row weights s_i, or the name of a column of ``data`` (``y ~ .``
        then leaves it out). By default R's prior ``weights`` (see ``weights_kind``);
        the scikit-learn estimators read ``sample_weight`` with the same default.
    offset : array-like of shape (n,) or str, optional
        Offset added to the linear predictor (on top of ``offset()`` terms), or the name
        of a column of ``data`` (then replayed from new data at predict time).
    n_bins : int, default=50
        Bins of ``bin(x)`` terms that do not give their own.
    penalty_weights : {"theory", "uniform", "balanced"} or ndarray of shape (d,), default="balanced"
        ω_jk of design.md §1: ``"balanced"`` sqrt(π̂_jk (1 − π̂_jk)), the noise level of
        the centred suffix sums (see :func:`binarsity_stats.penalty._penalty.lambda_theory`;
        the default since the ``selection`` benchmark, docs/benchmarks.md),
        ``"theory"`` sqrt(π̂_jk) (the paper's), ``"uniform"`` 1. ``C()`` terms get
        weight 0 (unpenalised) unless an array says otherwise.
    missing : {"error", "separate", "drop"}, default="error"
        Missing values (NaN, None, ``pd.NA``) in the columns the model uses. ``"error"``:
        an error naming the column. ``"separate"``: in a ``bin()``/``C()`` column, a level
        of its own outside the TV chain. ``"drop"``: R's ``na.omit`` - the rows with a
        missing value in any column the model uses (response, terms, weight and offset
        columns or arrays) are dropped before the fit; the number is ``n_dropped`` (and
        in the summary), and ``predict`` gives NaN for new rows with a missing value
        (R's ``na.exclude``; ``predict(..., missing="error")`` raises instead). A term
        may set its own policy: ``bin(x, missing="drop")``, ``C(g, missing="separate")``.
    weights_kind : {"analytic", "freq"}, default="analytic"
        What ``sample_weight`` means. ``"analytic"``: precision (variance) weights, row
        i having variance φ/s_i, e.g. a mean over s_i units or a binomial proportion
        over s_i trials (statsmodels' ``var_weights``); only their ratios matter for
        the standard errors, and the n of ``lam="theory"`` is Kish's effective number
        (Σ s)² / Σ s². ``"freq"``: row i stands for s_i identical rows (statsmodels'
        ``freq_weights``): n = Σ s, and the fit, its λ, standard errors and
        information criteria equal those of the repeated rows. The penalised
        coefficients at a given λ are the same either way.
    client : distributed.Client or str, optional
        With a Dask DataFrame: the cluster that computes (a ``Client``, or a scheduler
        address such as ``"tcp://host:8786"`` to connect to); also used by
        ``fit(solver="dask")``. Default: Dask's current scheduler (the last ``Client``
        created, else threads).

    weights : array-like or str, optional
        R's name of ``sample_weight`` (give one of the two).
    subset : array-like of bool or int, optional
        R's ``subset``: the rows to fit, as a boolean mask of the data's length (a
        Series is read by position) or row positions, e.g. ``subset=df["age"] > 30``
        (an expression in a string is not evaluated).
    exposure : array-like or str, optional
        Positive exposures t_i (a column name or values), for a family with a log
        link: ``log(t)`` joins the offset, as ``offset(log(t))`` in the formula (a
        column is then replayed from new rows; values are not, as an ``offset=`` array).
    collect : bool or "auto", default="auto"
        With a Dask DataFrame: whether the training rows (codes, y, weights, offset) are
        gathered on the client. ``True``: every method works as on in-memory data.
        ``False``: the rows stay on the workers (the client holds O(d) numbers); fits
        use the Dask solver, and ``summary()``, ``glance()``, ``tidy()``,
        ``cut_points()``, ``term_importance()``, ``lam="theory"`` and the deviance,
        Pearson χ², df, log-likelihood, AIC and BIC are computed from per-partition
        reductions, while what needs the rows (``fit_cv``, ``refit``, ``bootstrap``,
        ``relax``, residuals and fitted values, ``report``) is refused with an error
        naming it (gaussian, binomial and poisson families). ``"auto"``: gathered up to
        1,000,000 rows (``_model_dask.COLLECT_MAX_ROWS``), kept on the workers above.
        Ignored for in-memory data.

    Returns
    -------
    BinarsityModel
        Call ``fit``, ``fit_path`` or ``fit_cv`` on it.

    Examples
    --------
    >>> import statsmodels.api as sm
    >>> from binarsity_stats import glm
    >>> df = sm.datasets.fair.load_pandas().data
    >>> model = glm("I(affairs > 0) ~ bin(age) + bin(yrs_married) + C(religious)",
    ...             df, family="binomial")
    >>> res = model.fit(lam=1e-3)
    >>> res.cut_points()  # doctest: +SKIP
    """
    from ._glm_args import read_r_arguments

    formula, data, sample_weight, offset = read_r_arguments(
        formula, data, family, sample_weight, offset, weights, subset, exposure
    )
    return BinarsityModel(
        formula,
        data,
        family=family,
        sample_weight=sample_weight,
        offset=offset,
        n_bins=n_bins,
        penalty_weights=penalty_weights,
        missing=missing,
        weights_kind=weights_kind,
        client=client,
        collect=collect,
    )


class BinarsityModel(ModelInterface, ModelPathCV, ModelDask):
    """A binarsity GLM specified by a formula, ready to fit (see :func:`glm`).

    Parameters
    ----------
    formula, data, family, sample_weight, offset, n_bins, penalty_weights, missing, client
        As in :func:`glm`.
    collect : bool or "auto", default="auto"
        As in :func:`glm`.
    weights_kind : {"analytic", "freq"}, default="analytic"
        As in :func:`glm`.

    Attributes
    ----------
    spec : DesignSpec
        The replayable design recipe (formulaic ``ModelSpec`` with the learned cut
        points and levels).
    design : Design
        The training design: codes (p, n), block offsets, dense columns, offset.
    y : ndarray of shape (n,)
        Response as float.
    response : Response
        How the response was read (event level of a binomial factor).
    family : Family
        The distribution.
    sample_weight : ndarray of shape (n,)
        Row weights (ones when none were given).
    offset : ndarray of shape (n,) or None
        Total offset of the training rows (formula terms plus the argument).
    bin_counts : ndarray of shape (d,)
        Weighted level counts n_jk.
    penalty_weights : ndarray of shape (d,)
        ω used in every fit.
    weights_kind : {"analytic", "freq"}
        What ``sample_weight`` means (see :func:`glm`).
    dask_design : DaskDesign or None
        On a Dask DataFrame: the codes, y, weights and offset partition by partition
        (``fit(solver="dask")`` reads it); None otherwise.
    dask_binning : dict or None
        On a Dask DataFrame: per ``bin()`` column, ``exact`` (False: a quantile sketch)
        and ``rank_error`` (the sketch's bound on the quantile level of a cut point).

    Notes
    -----
    The methods are grouped by job in base classes of their own modules (model/):
    the fitted-model interface (``per_row``, ``binned``, ``prepare``, ``report_coef``,
    ``linear_predictor``, the λ facts; ``_model_interface``), the path and
    cross-validation (``fit_path``, ``fit_cv``; ``_model_path``) and the Dask twins
    (``_model_dask``); construction, ``fit`` and ``adaptive`` are here.
    """

    #: models pickled before ``weights_kind`` existed treated weights as row counts
    weights_kind: str = "freq"

    def __init__(
        self,
        formula: str,
        data: Any,
        *,
        family: str | Family = "gaussian",
        sample_weight: Any = None,
        offset: Any = None,
        n_bins: int = 50,
        penalty_weights: str | np.ndarray = "balanced",
        missing: str = "error",
        weights_kind: str = "analytic",
        client: Any = None,
        collect: bool | str = "auto",
    ) -> None:
        from ._model_dask import check_collect

        collect = check_collect(collect)
        self.family, self.family_note = user_family(family)
        self.weights_kind = check_weights_kind(weights_kind)
        if not isinstance(missing, str) or missing not in ("error", "separate", "drop"):
            raise ValueError(
                f"missing must be one of ('error', 'separate', 'drop'); got {missing!r}."
            )
        if is_dask_collection(data):  # binning by mergeable summaries, codes per partition
            frame, drop_columns = None, None
            built = self._from_dask(formula, data, sample_weight, offset, n_bins, missing,
                                    client, collect, penalty_weights)  # fmt: skip
            if built is None:  # the rows stay on the workers (collect=False)
                return
            spec, design, y, response, sw, off_arg = built
        else:
            frame = as_frame(data)
            named = [v for v in (sample_weight, offset) if isinstance(v, str)]
            self.n_rows_data = len(frame)
            frame, (sample_weight, offset), kept, drop_columns = _drop_missing(
                formula, frame, missing, (sample_weight, offset), named
            )
            self.rows_kept = kept
            n = len(frame)
            sw, self.weight_column = column_or_array(sample_weight, frame, "sample_weight", n)
            off_arg, self.offset_column = column_or_array(offset, frame, "offset", n)
            spec, design, y, response = build_design(
                formula, frame, n_bins=n_bins, missing=missing, sample_weight=sw,
                family=self.family, exclude_columns=named,
            )  # fmt: skip
        n = y.shape[0]
        spec.drop_columns = drop_columns or None
        # kinds of the columns read, for the exporters (to_sql); a Dask frame's dtypes
        read = [*spec.required, getattr(self, "offset_column", None), *(drop_columns or [])]
        spec.column_kinds = column_kinds(data if frame is None else frame, read)
        self._set_design(formula, frame, spec, design, y, response, sw, off_arg,
                         n_bins=n_bins, missing=missing, penalty_weights=penalty_weights)

    @classmethod
    def from_design(
        cls,
        spec: DesignSpec,
        design: Design,
        y: np.ndarray,
        response: Response,
        *,
        family: str | Family,
        penalty_weights: str | np.ndarray = "balanced",
        weights_kind: str = "analytic",
        sample_weight: np.ndarray | None = None,
        offset: np.ndarray | None = None,
        data: Any = None,
    ) -> BinarsityModel:
        """A model on a design another door built (the estimators), without a formula.

        The blocks of ``spec`` carry everything the model reads of its terms (cut points,
        levels, kinds, by-groups); the engine's design, the blocks' kinds and ω come from
        the same assembler as a formula's (``design/_assemble``). The model has no
        formula (``formula`` is None): nothing of it is ever parsed.

        Parameters
        ----------
        spec : DesignSpec
            The recipe: its blocks, dense columns, intercept, ``n_bins`` and
            ``missing``, and ``transform`` for new rows.
        design : Design
            The training design coded by ``spec`` (codes, dense columns; the survival
            times and events, strata labels of a Cox response).
        y : ndarray of shape (n,)
            The response as the engine reads it.
        response : Response
            How the response was read (its name and event level, for the reports).
        family, penalty_weights, weights_kind
            As in :func:`glm`.
        sample_weight, offset : ndarray of shape (n,), optional
            Row weights and offset.
        data : DataFrame, optional
            The training columns (for column names given later, ``groups=``).

        Returns
        -------
        BinarsityModel
            Ready to fit; its results are those of a formula model on the same design.
        """
        self = cls.__new__(cls)
        self.family, self.family_note = user_family(family)
        self.weights_kind = check_weights_kind(weights_kind)
        self.n_rows_data = int(y.shape[0])
        self.weight_column = self.offset_column = None
        self._set_design(None, data, spec, design, y, response, sample_weight, offset,
                         n_bins=spec.n_bins, missing=spec.missing,
                         penalty_weights=penalty_weights)  # fmt: skip
        return self

    def _set_design(
        self, formula: Any, frame: Any, spec: DesignSpec, design: Design, y: np.ndarray,
        response: Response, sw: np.ndarray | None, off_arg: np.ndarray | None, *,
        n_bins: int, missing: str, penalty_weights: str | np.ndarray,
    ) -> None:  # fmt: skip
        """The training design, response, weights, offset and ω of either door."""
        n = y.shape[0]
        self._data = frame  # for column names given later (groups=); not pickled
        #: binomial trials of a cbind(successes, failures) response (None otherwise)
        self.trials = design.trials
        #: times and events of a Surv(time, event) response, shape (n, 2) (else None)
        self.survival = design.survival
        #: stratum labels of a strata() term (family="cox"), else None
        self.strata = getattr(design, "strata", None)
        if design.trials is not None:  # the trials multiply the weights, as in R
            sw = design.trials if sw is None else sw * design.trials
        # a binomial response may be a proportion (the trials as sample weights)
        self.family.validate_y(y, proportions=True)
        self.formula = formula
        self.spec: DesignSpec = spec
        _warn_ordered_and_by(spec.blocks)
        _warn_nested_in_strata(spec.blocks, design.codes, self.strata)
        self.design: Design = design
        self.y = y
        self.response: Response = response
        self.weighted = sw is not None
        self.sample_weight = np.ones(n) if sw is None else sw
        self.offset_arg = off_arg
        total = design.offset
        if off_arg is not None:
            total = off_arg if total is None else total + off_arg
        self.offset = total
        self.n_bins = n_bins
        self.missing = missing
        self.penalty_kind = penalty_weights if isinstance(penalty_weights, str) else "array"
        # the engine's design, its block kinds and ω: decided by the one assembler of
        # every door (design/_assemble); sums over rows are taken on weights scaled to a
        # maximum in [1, 2): the fit does not depend on their scale, and the totals can
        # neither overflow nor underflow
        self._binned, self.penalty_weights = assemble(
            design.codes, design.block_ptr, self._layout(), penalty_weights,
            dense=design.dense, offset=self.offset,
            sample_weight=self.sample_weight if self.weighted else None,
            ones=None if self.weighted else self.sample_weight,
        )  # fmt: skip
        if self.offset is not None:
            self.family.check_offset(self.offset)
            check_offset_loss(self.family, y, self.offset, self.unit_weight)
        self.bin_counts = self._binned.counts * self.weight_scale
        if self.dask_design is not None:
            self.dask_design.kinds = tuple(self._binned.kinds)

    #: the design partition by partition when fitted on a Dask DataFrame (else None)
    dask_design: Any = None
    #: per bin() column of a Dask fit: whether its cut points are exact, its rank error
    dask_binning: dict | None = None

    def _dispersion_of(self, sol: Any, recompute_eta: bool = False) -> float:
        """φ̂ of a fit: Pearson's χ² on its df (the theory λ's second step).

        ``recompute_eta``: η from the coefficients on the collected rows (a Dask
        solution), else the solution's own η.
        """
        dof = degrees_of_freedom(self, sol.coef, len(sol.dense_coef))
        eta = sol.eta
        if recompute_eta or eta is None:
            eta = self.linear_predictor(sol.coef, sol.dense_coef, sol.intercept)
        return self.family.dispersion(
            self.y, self.family.mean(eta), self.unit_weight, dof, nobs=self.n_effective
        )

    # -- rows, data and pickling ----------------------------------------------------------
    #: models pickled before missing="drop" existed dropped no row
    rows_kept: np.ndarray | None = None
    trials: np.ndarray | None = None
    survival: np.ndarray | None = None
    strata: np.ndarray | None = None
    n_rows_data: int | None = None
    family_note: str | None = None

    @property
    def shown_formula(self) -> str:
        """The formula as summaries show it (display only, never parsed): the user's with
        column names for the package's aliases, or for a model without one
        (:meth:`from_design`) its recipe's display text."""
        if self.formula is None:
            return str(self.spec.formula)
        return display_formula(self.formula)

    @property
    def n_dropped(self) -> int:
        """Rows of the data dropped before the fit for a missing value (``missing="drop"``)."""
        return 0 if self.rows_kept is None else int(self.rows_kept.size - self.rows_kept.sum())

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.pop("_data", None)  # the training frame is not part of a saved model
        state.pop("dask_client", None)  # a connection
        state.pop("dask_design", None)  # training partitions (in a cluster's memory)
        state.pop("_jump_unit", None)  # a cache (``_results.jump_unit``)
        state.pop("dask_frame", None)  # the Dask DataFrame (its graph may hold the rows)
        return state

    def __getattr__(self, name: str) -> Any:
        if name in ROW_ATTRIBUTES and self.__dict__.get("dask_stats") is not None:
            raise rows_error(f"model.{name}")
        if name in _RESULTS_ONLY:
            raise AttributeError(
                f"'{type(self).__name__}' has no attribute {name!r}: the model has not been "
                f"fitted; call .fit() first (res = model.fit(); res.{name})."
            )
        raise AttributeError(f"'{type(self).__name__}' object has no attribute {name!r}")

    # -- second stage --------------------------------------------------------------------
    def adaptive(self, first_stage: BinarsityResults, power: float = 1.0) -> BinarsityModel:
        """The adaptive second stage: weights ω_jk / abs(θ̂_jk − θ̂_j,k−1)^power.

        The adaptive lasso (Zou 2006) for the fused penalty: ``first_stage`` is a fit of
        this model (e.g. ``model.fit_cv().best_``); its large steps are penalised less,
        its small ones more, and an edge it fused stays fused (its weight is
        ``_relax.FUSED_FACTOR`` times the largest finite one). The new model shares the
        design; fit it with a number for ``lam``, ``fit_path`` or ``fit_cv``
        (``lam="theory"`` has no meaning for data-dependent weights and is refused).

        Parameters
        ----------
        first_stage : BinarsityResults
            A fit of this model (same design).
        power : float, default=1
            The exponent of the jump sizes.

        Returns
        -------
        BinarsityModel
            A copy of this model with ``penalty_kind == "adaptive"``.
        """
        self.require("adaptive()")
        import copy

        from ..engine._relax import adaptive_weights

        if not isinstance(first_stage, BinarsityResults):
            raise TypeError(
                f"first_stage must be a BinarsityResults of this model; got "
                f"{type(first_stage).__name__}."
            )
        if first_stage.model.design is not self.design:
            raise ValueError("first_stage must be a fit of this model (the same design).")
        sol = first_stage.solution
        w = adaptive_weights(self.penalty_weights, sol.coef, self.block_ptr, power,
                             unit=jump_unit(self))
        other = copy.copy(self)
        other.penalty_weights = w
        other.penalty_kind = "adaptive"
        other.adaptive_power = float(power)
        other._binned = self.binned.with_kinds(self._block_kinds())
        return other

    # -- fitting -------------------------------------------------------------------------
    def fit(
        self,
        lam: float | str = "theory",
        *,
        solver: str = "cd",
        tol: float = 1e-7,
        max_iter: int = 1000,
        warm_start: Any = None,
        relax: float | None = None,
        backend: str = "auto",
    ) -> BinarsityResults:
        """Fit at one λ.

        Parameters
        ----------
        lam : float, "theory" or "alo", default="theory"
            λ ≥ 0 of design.md §1, or ``"theory"`` for the data-driven scale of the
            paper's Theorem 1 (see :meth:`lambda_theory`; for a family with an unknown
            dispersion — gaussian σ², gamma and Tweedie φ — it is estimated from a first
            fit by Pearson's χ²/df and the model refitted once), or ``"alo"``: the λ of
            the default path (:meth:`fit_path`) with the smallest approximate
            leave-one-out deviance (:meth:`PathResults.alo`) — one path instead of the
            K + 1 of ``fit_cv``, walked down until the ALO curve has turned (the last 5
            values above the best plus its standard error, as ``fit_cv``'s early
            stopping; GLM families; not Cox). ``family="nb"``: θ is
            estimated by alternation at this λ (the θ of ``"theory"`` follows θ, as the
            curvature bound does; ``"alo"`` takes the path's θ̂).
        solver : {"cd", "fista", "dask"}, default="cd"
            Engine solver. ``"dask"`` (a model on a Dask DataFrame): the distributed
            solver of ``_dask_solve``, whose rows stay on the workers (statistics per
            partition, tree-reduced, Newton steps on the client; ``max_iter`` then caps
            its Newton steps, 50 at most by default). What it does not support (Cox,
            by-group and monotone terms, an estimated NB θ, ``lam="alo"``) is refused
            naming the term or family (``engine/_backend``).
        tol : float, default=1e-7
            KKT tolerance.
        max_iter : int, default=1000
            Cap on solver passes.
        warm_start : Solution, optional
            Starting point.
        relax : float, optional
            γ of a relaxed fit (:meth:`BinarsityResults.relax`): the fit at λ mixed with
            the unpenalised refit on its segments, γ θ̂ + (1 − γ) θ̃. None: the
            penalised fit (γ = 1).
        backend : {"auto", "rows", "gram"}, default="auto"
            CD's data backend: sweeps over the rows, or every quadratic model solved
            from the weighted Gram of the one-hot design (design.md §9; O(d²) per
            sweep whatever n; gaussian: one Gram for a whole path). ``"auto"``
            chooses by a cost model (docs/architecture.md, "The Gram backend").

        Returns
        -------
        BinarsityResults
            The fit at λ, with its statistics and report.
        """
        if relax is not None:
            from ..engine._relax import check_gamma

            gamma = check_gamma(relax, "relax")
            res = self.fit(lam, solver=solver, tol=tol, max_iter=max_iter,
                           warm_start=warm_start, backend=backend)  # fmt: skip
            return res.relax(gamma, tol=tol, max_iter=max_iter)
        request = [("lam_alo", "lam='alo'")] if isinstance(lam, str) and lam == "alo" else []
        # the in-memory engine's path data, or the Dask backend's: one code path below
        data, opts = self._solver_data(solver, tol, max_iter, backend, request)
        if not isinstance(lam, str):
            lam = check_lam(lam)
        elif lam == "alo":
            self.require("fit(lam='alo')")
            if self.family.survival:
                raise ValueError(
                    "lam='alo' needs a loss that splits by row; the Cox partial likelihood "
                    "does not: use fit_cv()."
                )
            if self.family.estimated_parameter is not None:  # NB θ: the path's θ̂
                path = self.fit_path(solver=solver, tol=tol, max_iter=max_iter,
                                     backend=backend)  # fmt: skip
                curve = path.alo()
            else:  # the path stops once the ALO curve has turned, as CV's walk does
                from ._alo import alo_walk
                from ._path_results import PathResults

                lams, sols, curve = alo_walk(self, opts)
                path = PathResults(self, lams, sols)
            res = path[curve.attrs["best_index"]]
            res.lam_source = "alo"
            res.alo_curve = curve
            return res
        elif lam != "theory":
            raise ValueError(
                f"lam must be a non-negative number, 'theory' or 'alo'; got {lam!r}."
            )
        if self.family.estimated_parameter is not None:  # NB θ: glm.nb's alternation
            from ._theta import fit_alternating

            return fit_alternating(
                self, lambda m, start: m.fit(lam, warm_start=start, solver=solver, tol=tol,
                                             max_iter=max_iter, backend=backend),
                warm_start,
            )  # fmt: skip
        prepared = data.prepare(None)
        on = "" if opts["solver"] != "dask" else " (dask)"
        if lam == "theory":
            sol, _, phi = theory_lambda_fit(
                lambda value, start: prepared.solve(value, warm_start=start, **opts),
                lambda phi: self.lambda_theory(phi=phi),
                (None if not self.family.estimate_dispersion else
                 self._worker_dispersion if self.rows_on_workers else self._dispersion_of),
                warm_start,
            )  # fmt: skip
            how = "theory" if phi is None else (
                f"theory ({self.family.dispersion_name} estimated: {phi:.4g})"
            )  # fmt: skip
            return BinarsityResults(self, sol, how + on)
        sol = prepared.solve(lam, warm_start=warm_start, **opts)
        return BinarsityResults(self, sol, "user" + on)

    def __repr__(self) -> str:
        return (
            f"BinarsityModel({self.shown_formula!r}, family={self.family.name!r}, "
            f"n={self.nobs}, blocks={len(self.spec.blocks)})"
        )


def _warn_ordered_and_by(blocks: list) -> None:
    """Warn by name when an ordered factor is the group of a by-group term.

    The by-group term holds g's level means unpenalised, so ``ordered(g)``'s levels are
    not identified next to it: any λ > 0 fuses them to 0, λ = 0 leaves them arbitrary.
    """
    groups = {b.by for b in blocks if getattr(b, "by", None) is not None}
    for b in blocks:
        if getattr(b, "ordered", False) and b.column in groups:
            by_terms = [c.term for c in blocks if getattr(c, "by", None) == b.column]
            warnings.warn(
                f"{b.term} is not identified next to {', '.join(by_terms)}: the by-group "
                f"term already holds the level means of {b.column!r} (unpenalised), so "
                f"{b.term}'s levels are fused to 0 at any lam > 0 and arbitrary at lam = 0. "
                f"Drop {b.term}.",
                UserWarning,
                stacklevel=3,
            )


def _warn_nested_in_strata(blocks: list, codes: Any, strata: Any) -> None:
    """Warn by name about a term constant within every stratum of a stratified Cox model
    (e.g. ``strata(g) + C(g)``): the partial likelihood does not see it."""
    if strata is None or codes is None or not len(blocks):
        return
    s = np.unique(np.asarray(strata), return_inverse=True)[1]
    for j, b in enumerate(blocks):
        c = np.asarray(codes[j], dtype=np.int64)
        pairs = np.unique(s * (int(c.max(initial=0)) + 1) + c)
        if len(pairs) == len(np.unique(s)) and len(np.unique(c)) > 1:
            warnings.warn(
                f"{b.term} is constant within every stratum of the strata() term: the "
                "stratified partial likelihood does not see it, so its levels are not "
                f"identified (they stay at 0). Drop {b.term}.",
                UserWarning,
                stacklevel=3,
            )


#: Names of the fitted results that users reach for on the model itself.
_RESULTS_ONLY = frozenset({
    "predict", "summary", "params", "coef", "intercept", "cut_points", "shape_functions",
    "plot_shapes", "term_table", "categorical_effects", "selected_terms", "refit",
    "bootstrap", "deviance", "aic", "bic", "llf", "fittedvalues", "resid_response",
    "to_spec", "report", "get_prediction", "conf_int", "bse", "lam", "df",
})  # fmt: skip


def _drop_missing(
    formula: str, frame: Any, missing: str, per_row: tuple, named: list[str]
) -> tuple[Any, tuple, np.ndarray | None, list[str]]:
    """R's na.omit: the rows with a missing value in a column the model uses, removed.

    Returns the rows kept, the per-row arguments (weights, offset) cut to them, the
    mask of kept rows (None when nothing was dropped) and the right-hand-side columns
    whose missing values give a NaN prediction (plus the offset column).
    """
    lhs, rhs = missing_plan(formula, frame, missing, named)
    drop = np.zeros(len(frame), dtype=bool)
    for col in lhs + rhs:
        drop |= frame[col].isna().to_numpy()
    if missing == "drop":
        for value in per_row:
            if isinstance(value, str):
                if value in frame.columns:
                    drop |= frame[value].isna().to_numpy()
                continue
            if value is None or np.ndim(value) != 1 or len(value) != len(frame):
                continue  # the argument's own check reports it
            try:
                drop |= np.isnan(np.asarray(value, dtype=np.float64))
            except (TypeError, ValueError):
                continue
    columns = list(rhs)
    if missing == "drop" and isinstance(per_row[1], str):
        columns.append(per_row[1])  # a new row without its offset cannot be predicted
    if not drop.any():
        return frame, per_row, None, columns
    if drop.all():
        used = sorted(set(lhs + rhs + [v for v in per_row if isinstance(v, str)]))
        raise ValueError(
            f"every row has a missing value in a column the model uses ({used}); "
            "missing='drop' leaves no row to fit."
        )
    kept = ~drop
    cut = tuple(
        v if v is None or isinstance(v, str) or np.ndim(v) != 1 or len(v) != len(frame)
        else np.asarray(v)[kept]
        for v in per_row
    )  # fmt: skip
    return frame.loc[kept], cut, kept, columns


def null_intercept(
    family: Family,
    y: np.ndarray,
    sw: np.ndarray,
    offset: np.ndarray | None,
    fit_intercept: bool = True,
) -> float:
    """β0 of the intercept-only GLM with offset (the null model of the deviance).

    Parameters
    ----------
    family : Family
        Distribution.
    y, sw : ndarray of shape (n,)
        Response and weights.
    offset : ndarray of shape (n,) or None
        Offset.
    fit_intercept : bool, default=True
        Without an intercept the null model is the offset alone (β0 = 0).

    Returns
    -------
    float
        The intercept of the null model.
    """
    if not fit_intercept:
        return 0.0
    sw = normalized_weights(np.asarray(sw, dtype=np.float64))[0]  # sums cannot overflow
    return family.null_intercept(y, sw, offset)
