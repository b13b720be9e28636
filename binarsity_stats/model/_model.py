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
* **Cross-validation uses the same bins in every fold.** The cut points are learned once
  on all training rows (as the paper does). Binning reads only x, never y, so no label
  information leaks into the held-out folds; and with one set of bins the folds, the λ
  grid and the final refit share one coordinate system, so the CV curve scores exactly
  the design that ``best_`` is fitted on. The penalty weights ω and the λ grid are also
  those of the full data.
* **Folds** are stratified on y for binomial (each class spread round-robin over the
  folds after a seeded shuffle) and plain shuffled otherwise; ``n_jobs`` runs folds in
  worker processes on Linux, threads elsewhere (``_cv.cross_validate``), and since
  each fold is computed independently the result does not depend on ``n_jobs``.
"""

from __future__ import annotations

import threading
import warnings
from typing import Any

import numpy as np

from ..core._base import inconsistent
from ..distributed._dask import is_dask_collection
from ..design._assemble import BlockLayout, assemble, block_kinds, block_penalty_weights
from ..design._design import BinnedDesign
from ..families._families import Family, user_family
from ..formula._formula import (
    Design,
    DesignSpec,
    Response,
    as_frame,
    column_or_array,
    build_design,
    did_you_mean,
    display_formula,
    missing_plan,
)
from ..design._identify import move_level_means, shared_group_donors
from ..engine._cv import check_patience, cross_validate, grid_end_message, resolve_n_jobs
from ..engine._folds import fold_ids, group_fold_ids, is_fold_ids, resolve_folds
from ..engine._path import PathData, check_grid, lambda_grid, solve_path
from ..engine._solvers import Prepared, check_solver_options
from ..engine._scoring import SCORINGS, check_scoring, weighted_auc
from ._path_results import CVResults, PathResults
from ..penalty._penalty import THEORY_A, lambda_theory, theory_lambda_fit, theory_nobs
from ._results import BinarsityResults, degrees_of_freedom, jump_unit
from ..design._spec import column_kinds
from ..core._validation import (
    check_bool,
    check_cv_tol,
    check_groups,
    check_lam,
    check_max_iter,
    check_offset_loss,
    check_random_state,
    check_tol,
    check_weights_kind,
    normalized_weights,
)

__all__ = ["glm", "BinarsityModel", "SCORINGS"]

# Re-exported: the engine's path and CV helpers (_path) were defined here before 0.2.
_REEXPORTED = (fold_ids, group_fold_ids, weighted_auc)


#: fit_cv keeps every fold's prepared design for the whole walk below this many bytes;
#: above it, a fold's design is prepared again for each chunk of λ values.
_CV_KEEP_BYTES = 1 << 30


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
) -> BinarsityModel:
    """Specify a binarsity-penalised GLM with an R-style formula.

    Parameters
    ----------
    formula : str
        ``"y ~ terms"``. ``bin(x, n_bins)``: a binned, TV-penalised feature whose cut
        points are learned here and replayed on new data; ``C(x)`` (or a bare
        non-numeric column): an unpenalised categorical; other numeric terms
        (``x``, ``log(x)``, ``x:z``): unpenalised linear; ``offset(expr)``: an offset,
        e.g. ``offset(log(exposure))``. ``- 1`` removes the intercept as in R: the first
        ``bin()`` or ``C()`` term then carries full coding (its levels absorb the
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
    )


class BinarsityModel:
    """A binarsity GLM specified by a formula, ready to fit (see :func:`glm`).

    Parameters
    ----------
    formula, data, family, sample_weight, offset, n_bins, penalty_weights, missing, client
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
    ) -> None:
        self.family, self.family_note = user_family(family)
        self.weights_kind = check_weights_kind(weights_kind)
        if not isinstance(missing, str) or missing not in ("error", "separate", "drop"):
            raise ValueError(
                f"missing must be one of ('error', 'separate', 'drop'); got {missing!r}."
            )
        if is_dask_collection(data):  # binning by mergeable summaries, codes per partition
            frame, drop_columns = None, None
            spec, design, y, response, sw, off_arg = self._from_dask(
                formula, data, sample_weight, offset, n_bins, missing, client
            )
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

    def _fit_dask(self, lam: Any, tol: Any, max_iter: Any, warm_start: Any) -> BinarsityResults:
        """``fit(solver="dask")``: the distributed solver on ``dask_design``."""
        if self.dask_design is None:
            raise ValueError(
                'solver="dask" needs a model specified on a Dask DataFrame (glm(formula, '
                "dask_frame)); this one was given in-memory data."
            )
        from ..distributed._dask_solve import fit_dask

        tol = check_tol(tol)
        max_iter = min(check_max_iter(max_iter), 50)
        if not isinstance(lam, str):
            lam = check_lam(lam)
        elif lam != "theory":
            raise ValueError(f"lam must be a non-negative number or 'theory'; got {lam!r}.")

        def solve(value: float, start: Any) -> Any:
            return fit_dask(
                self.dask_design, self.family, value, penalty_weights=self.penalty_weights,
                fit_intercept=self.solver_intercept, tol=tol, max_iter=max_iter,
                warm_start=start, client=self.__dict__.get("dask_client"),
            )  # fmt: skip

        if lam != "theory":
            return BinarsityResults(self, solve(lam, warm_start), "user (dask)")
        sol, _, phi = theory_lambda_fit(
            solve, lambda phi: self.lambda_theory(phi=phi),
            (lambda s: self._dispersion_of(s, recompute_eta=True))
            if self.family.estimate_dispersion else None,
            warm_start,
        )  # fmt: skip
        how = "theory (dask)" if phi is None else (
            f"theory (dask; {self.family.dispersion_name} estimated: {phi:.4g})"
        )  # fmt: skip
        return BinarsityResults(self, sol, how)

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

    def _from_dask(self, formula, data, sample_weight, offset, n_bins, missing, client=None):
        """The design of a Dask DataFrame: mergeable binning, codes per partition
        (``_dask_model``); the partitions are also concatenated here, so that every
        statistic of the results is computed as for in-memory data."""
        from ..distributed._dask_model import (
            collect_design,
            dask_formula_design,
            resolve_client,
            scheduler,
        )

        self.dask_client = client = resolve_client(client)
        with scheduler(client):
            built = dask_formula_design(
                formula, data, family=self.family, sample_weight=sample_weight, offset=offset,
                n_bins=n_bins, missing=missing,
            )  # fmt: skip
            # coded once, kept in the workers' memory: the solver's passes read the codes
            built.design = built.design.persist(client)
            design, y, sw, off_arg = collect_design(built)
        self.n_rows_data = y.shape[0]
        self.rows_kept = None
        self.weight_column, self.offset_column = built.weight_column, built.offset_column
        self.dask_design = built.design
        self.dask_binning = built.exact
        return built.spec, design, y, built.response, sw, off_arg

    # -- rows, data and pickling ----------------------------------------------------------
    #: models pickled before missing="drop" existed dropped no row
    rows_kept: np.ndarray | None = None
    trials: np.ndarray | None = None
    survival: np.ndarray | None = None
    strata: np.ndarray | None = None
    n_rows_data: int | None = None
    family_note: str | None = None

    @property
    def n_dropped(self) -> int:
        """Rows of the data dropped before the fit for a missing value (``missing="drop"``)."""
        return 0 if self.rows_kept is None else int(self.rows_kept.size - self.rows_kept.sum())

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.pop("_data", None)  # the training frame is not part of a saved model
        state.pop("dask_client", None)  # a connection
        state.pop("dask_design", None)  # training partitions (in a cluster's memory)
        return state

    def __getattr__(self, name: str) -> Any:
        if name in _RESULTS_ONLY:
            raise AttributeError(
                f"'{type(self).__name__}' has no attribute {name!r}: the model has not been "
                f"fitted; call .fit() first (res = model.fit(); res.{name})."
            )
        raise AttributeError(f"'{type(self).__name__}' object has no attribute {name!r}")

    def per_row(self, value: Any, name: str) -> Any:
        """A per-row argument (``groups=``, ``folds=``) as one value per training row.

        Part of the fitted-model interface (docs/architecture.md).

        Parameters
        ----------
        value : str, array-like or None
            A column name of the training data, or values for the rows of the data
            given to :func:`glm` (the rows kept are taken when ``missing="drop"``
            dropped some) or for the rows kept.
        name : str
            The argument's name, for messages.

        Returns
        -------
        ndarray or None
            One value per training row (None for None).
        """
        if value is None:
            return None
        if isinstance(value, str):
            data = self.__dict__.get("_data")
            if data is None and self.dask_design is not None:
                raise ValueError(
                    f"{name}={value!r}: a model on a Dask DataFrame does not keep its data; "
                    f"pass the {name} values, one per training row (e.g. "
                    f"data[{value!r}].compute().to_numpy())."
                )
            if data is None:
                raise ValueError(
                    f"{name}={value!r}: a saved (pickled) model does not keep its training "
                    f"data; pass the {name} values, one per training row."
                )
            if value not in data.columns:
                raise ValueError(
                    f"{name}={value!r} is not a column of the data."
                    + did_you_mean(value, data.columns)
                )
            return data[value].to_numpy(dtype=object)
        kept = self.rows_kept
        if kept is not None and np.ndim(value) == 1 and len(value) == kept.size != self.nobs:
            to_numpy = getattr(value, "to_numpy", None)
            values = to_numpy(dtype=object) if to_numpy is not None else np.asarray(value)
            return values[kept]
        return value

    # -- design helpers ------------------------------------------------------------------
    @property
    def unit_weight(self) -> np.ndarray:
        """The weights divided by a power of two near their largest (see ``weight_scale``).

        Sums over rows are taken on these: the fit does not depend on the scale of the
        weights, and their totals can neither overflow nor underflow.
        """
        return normalized_weights(self.sample_weight)[0]

    @property
    def weight_scale(self) -> float:
        """The power of two by which ``unit_weight`` was divided (1 without weights)."""
        return normalized_weights(self.sample_weight)[1]

    @property
    def nobs(self) -> int:
        """Number of training rows."""
        return int(self.y.shape[0])

    @property
    def wnobs(self) -> float:
        """Number of observations the weights stand for: Σ s for frequency weights,
        else the number of rows of positive weight (the n of BIC)."""
        if self.weighted and self.weights_kind == "freq":
            return float(self.unit_weight.sum()) * self.weight_scale
        if self.weighted:  # a zero analytic weight removes the row (as in R's glm)
            return float(np.count_nonzero(self.sample_weight > 0))
        return float(self.nobs)

    @property
    def n_effective(self) -> float:
        """The n of ``lam="theory"``: Σ s for frequency weights, Kish's effective
        number (Σ s)² / Σ s² for analytic ones (n when unweighted)."""
        trials = getattr(self, "trials", None)
        if trials is not None:
            # cbind(successes, failures): row i stands for t_i Bernoulli trials, each of
            # the user's weight u_i; the n of those trials is Σ u t (frequency weights)
            # or Kish's (Σ u t)² / Σ u² t (analytic), Σ t unweighted
            t, t_scale = normalized_weights(trials)
            u = np.divide(self.sample_weight, trials, out=np.zeros_like(t), where=trials > 0)
            u, u_scale = normalized_weights(u) if np.any(u > 0) else (u, 1.0)
            if self.weights_kind == "freq":
                return float(np.sum(u * t)) * u_scale * t_scale
            return float(np.sum(u * t) ** 2 / np.sum(u * u * t)) * t_scale
        # on the weights scaled to a maximum in [1, 2): no overflow in the sums
        return theory_nobs(self.unit_weight, self.weights_kind, self.weight_scale)

    @property
    def var_weights(self) -> np.ndarray | None:
        """The weights as statsmodels' ``var_weights`` (analytic weights), else None."""
        return self.sample_weight if self.weighted and self.weights_kind == "analytic" else None

    @property
    def freq_weights(self) -> np.ndarray | None:
        """The weights as statsmodels' ``freq_weights`` (row counts), else None."""
        return self.sample_weight if self.weighted and self.weights_kind == "freq" else None

    @property
    def block_ptr(self) -> np.ndarray:
        """Offsets of the blocks in θ."""
        return self.design.block_ptr

    @property
    def fit_intercept(self) -> bool:
        """Whether the model has an intercept (the formula's; never for ``family="cox"``,
        whose partial likelihood does not see a constant: it is dropped with a note)."""
        return self.spec.fit_intercept and self.family.has_intercept

    @property
    def intercept_absorbed(self) -> bool:
        """Whether the first code block carries the intercept (``- 1`` with a block).

        Without an intercept, R codes the first factor with one column per level. Here
        the first ``bin()``/``C()`` block drops its sum-to-zero constraint instead: the
        engine fits the model with an intercept β0 and the reported levels of the first
        block are θ_1k + β0. The total-variation penalty is unchanged by a common shift
        of a block's levels, so this is exactly the optimum of the model whose first
        block is freely coded.
        """
        if not self.family.has_intercept:
            return False
        return not self.spec.fit_intercept and bool(self.spec.blocks)

    @property
    def solver_intercept(self) -> bool:
        """Whether the engine fits an intercept (also when the first block absorbs it).

        Always for a family without one (Cox): the engine's β0 then has a zero gradient
        and only absorbs the centring of the dense columns; it is reported as 0.
        """
        if not self.family.has_intercept:
            return True
        return self.spec.fit_intercept or self.intercept_absorbed

    def report_coef(self, solution: Any) -> tuple[np.ndarray, float]:
        """θ and β0 of an engine solution as reported (see :attr:`intercept_absorbed`).

        Parameters
        ----------
        solution : Solution
            The engine's solution on this model's design.

        Returns
        -------
        coef : ndarray of shape (d,)
            θ; with an absorbed intercept the first block's levels include β0.
        intercept : float
            β0; 0 with an absorbed intercept.
        """
        coef = np.array(solution.coef, dtype=np.float64)
        intercept = float(solution.intercept)
        if self.intercept_absorbed:
            coef[int(self.block_ptr[0]) : int(self.block_ptr[1])] += intercept
            intercept = 0.0
        if not self.family.has_intercept:
            intercept = 0.0  # a constant in η does not change the Cox model
        donors = self.by_donors
        if donors:  # later by-group blocks of a shared group: within-level shapes only
            blocks = self.spec.blocks
            chains = [b.chains() if b.by is not None else None for b in blocks]
            coef = move_level_means(coef, self.block_ptr, self.bin_counts, chains, donors)
        return coef, intercept

    @property
    def by_donors(self) -> dict[int, int]:
        """By-group blocks sharing a group column with an earlier one (``_identify``).

        ``{later block: first block}``: the first by-group block of a group column holds
        its level means, every later one one constraint per level of the group
        (within-level shapes only), so the levels reported are unique.
        """
        return shared_group_donors([b.by for b in self.spec.blocks])

    def _binned_design(self) -> BinnedDesign:
        return BinnedDesign(
            self.design.codes, self.design.block_ptr, dense=self.design.dense,
            offset=self.offset, sample_weight=self.sample_weight if self.weighted else None,
        )  # fmt: skip

    @property
    def binned(self) -> BinnedDesign:
        """The engine's view of the training data: codes, block kinds, dense, offset, weights."""
        binned = self.__dict__.get("_binned")
        if binned is None:  # a model pickled before the design object existed
            binned = self._binned_design().with_kinds(self._block_kinds())
            self._binned = binned
        return binned

    def _layout(self) -> list[BlockLayout]:
        """What the assembler needs of every block of the formula (design/_assemble)."""
        blocks = self.spec.blocks
        chain = self.spec.chain_length
        if chain is None:
            chain = np.diff(self.block_ptr)
        return [
            BlockLayout(
                penalized=bool(block.penalized), chain_length=int(chain[j]),
                # Block.monotone: None on models pickled before monotone chains existed
                monotone=getattr(block, "monotone", None),
                chains=block.chains() if block.by is not None else None,
            )  # fmt: skip
            for j, block in enumerate(blocks)
        ]

    def _block_kinds(self) -> list[str]:
        """Kind of every block: a TV chain for ``bin()``, free levels for ``C()``.

        A ``C()`` term given positive weights by a ``penalty_weights`` array is
        penalised as a chain over its levels in their order. A ``bin(x, monotone=...)``
        chain is the monotone kind of that name (``"increasing"``, ``"decreasing"``).
        """
        return block_kinds(self.penalty_weights, self.block_ptr, self._layout())

    def _penalty_weights(self, kind: str | np.ndarray) -> np.ndarray:
        # on the unit weights (shares only): no overflow
        return block_penalty_weights(kind, self.binned.counts, self.block_ptr, self._layout())

    def linear_predictor(
        self, coef: np.ndarray, dense_coef: np.ndarray, intercept: float,
        design: Design | None = None, offset: np.ndarray | None = None,
    ) -> np.ndarray:  # fmt: skip
        """η = offset + β0 + Σ_j θ_j[c_ij] + Z β on a design (the training one by default).

        Parameters
        ----------
        coef : ndarray of shape (d,)
            θ.
        dense_coef : ndarray of shape (q,)
            Coefficients of the dense columns.
        intercept : float
            β0.
        design : Design, optional
            A replayed design; the training design when omitted.
        offset : ndarray of shape (n,), optional
            Total offset; the training offset when ``design`` is omitted.

        Returns
        -------
        ndarray of shape (n,)
            The linear predictor of every row.
        """
        if design is None:
            design, offset = self.design, self.offset
        coef, codes, block_ptr, dense_coef, intercept = self._checked_levels(
            coef, dense_coef, intercept, design
        )
        binned = BinnedDesign.checked(codes, block_ptr, dense=design.dense, offset=offset)
        return binned.linear_predictor(coef, dense_coef, intercept)

    def _checked_levels(self, coef, dense_coef, intercept, design: Design):
        """The coefficients and codes checked against each other before the gather.

        A modified or foreign pickle (results, model or spec) raises a clear error
        instead of sending the kernel out of bounds: θ with one entry per level of
        the formula's blocks, the design's blocks those of the spec, every
        code below its block's size, the dense coefficients one per dense column.
        """
        from ..core._validation import check_block_ptr, check_codes

        coef = np.asarray(coef)
        if coef.ndim != 1 or coef.dtype.kind not in "iuf":
            raise inconsistent(f"coef is not a 1-D array of numbers (shape {coef.shape})")
        coef = np.array(coef, dtype=np.float64, order="C", copy=True)
        dense_coef = np.asarray(dense_coef, dtype=np.float64).reshape(-1)
        sizes = [int(b.n_levels) for b in self.spec.blocks]
        try:
            ptr = check_block_ptr(design.block_ptr, n_blocks=len(sizes))
            if np.any(np.diff(ptr) != sizes):
                raise ValueError(
                    f"the design's block sizes {np.diff(ptr).tolist()} are not the "
                    f"formula's {sizes}"
                )
            if ptr[-1] != coef.shape[0]:
                raise ValueError(f"len(coef) = {coef.shape[0]} but the blocks hold {ptr[-1]}")
            codes = check_codes(design.codes, ptr)
        except (TypeError, ValueError) as exc:
            raise inconsistent(str(exc)) from None
        q = 0 if design.dense is None else design.dense.shape[1]
        if dense_coef.shape[0] != q:
            raise inconsistent(f"{dense_coef.shape[0]} dense coefficients for {q} dense columns")
        return coef, codes, ptr, dense_coef, float(intercept)

    def _path_data(self) -> PathData:
        """The engine's view of the training rows (arrays shared, nothing copied)."""
        return PathData.from_design(
            self.binned, self.y, self.family, self.penalty_weights,
            fit_intercept=self.solver_intercept,
        )  # fmt: skip

    def prepare(self, rows: np.ndarray | None = None) -> Prepared:
        """The engine's validated problem on the given rows, for solves at many λ.

        Part of the fitted-model interface that results, refits, bootstrap and the
        estimators use (docs/architecture.md, "The fitted-model interface"): a re-solve
        at another λ is ``model.prepare().solve(lam, warm_start=...)``.

        Parameters
        ----------
        rows : ndarray of int, optional
            Training rows (all by default), e.g. a fold or a selection half.

        Returns
        -------
        Prepared
            The engine's prepared problem (``solve``, ``prob``).
        """
        return self._path_data().prepare(rows)

    # -- λ ---------------------------------------------------------------------------
    def lambda_max(self) -> float:
        """λ_max of design.md §2: the smallest λ at which every binned term is flat.

        Evaluated at the null fit: every penalised chain fused, while the intercept, the
        offset, the ``C()`` and linear terms and any missing level stay free (fitted
        exactly first); it is the intercept(+offset)-only fit only when the model has no
        unpenalised term.

        Returns
        -------
        float
            λ_max; 0 when nothing is penalised.
        """
        return self._path_data().lambda_max()

    def lambda_grid(self, n_lambdas: int = 50, lam_min_ratio: float = 1e-3) -> np.ndarray:
        """Log-spaced λ grid from λ_max down to ``lam_min_ratio`` · λ_max.

        Parameters
        ----------
        n_lambdas : int, default=50
            Number of values.
        lam_min_ratio : float, default=1e-3
            Smallest λ as a fraction of λ_max (in (0, 1)).

        Returns
        -------
        ndarray of shape (n_lambdas,)
            Decreasing.
        """
        lambda_grid(1.0, n_lambdas, lam_min_ratio)  # the arguments, before λ_max's fit
        return lambda_grid(self.lambda_max(), n_lambdas, lam_min_ratio)

    def lambda_theory(self, phi: float | None = None, A: float = THEORY_A) -> float:
        """The scalar of the paper's Theorem 1 weights: sqrt(2 U_n φ (A + log d) / n).

        Parameters
        ----------
        phi : float, optional
            Dispersion φ. Default: 1 for binomial and poisson; for a family with an
            estimated dispersion, Pearson's χ² / W at the null fit (an upper bound on φ;
            for gaussian the weighted variance of y, an upper bound on σ²).
        A : float, default=log(40)
            Confidence parameter: the bound holds with probability ≥ 1 − 2e^{−A}.

        Returns
        -------
        float
            λ_theory.
        """
        if self.penalty_kind == "adaptive":
            raise ValueError(
                "lam='theory' is not defined for adaptive penalty weights (they depend "
                "on a first-stage fit); give lam a number or use fit_cv."
            )
        d = sum(b.n_levels for b in self.spec.blocks if b.penalized)
        return lambda_theory(
            self.family, self.y, self.unit_weight, self.offset, d, self.n_effective,
            fit_intercept=self.solver_intercept, phi=phi, A=A,
        )  # fmt: skip

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
        lam : float or "theory", default="theory"
            λ ≥ 0 of design.md §1, or ``"theory"`` for the data-driven scale of the
            paper's Theorem 1 (see :meth:`lambda_theory`; for a family with an unknown
            dispersion — gaussian σ², gamma and Tweedie φ — it is estimated from a first
            fit by Pearson's χ²/df and the model refitted once).
        solver : {"cd", "fista", "dask"}, default="cd"
            Engine solver. ``"dask"`` (a model on a Dask DataFrame): the distributed
            solver of ``_dask_solve``, whose rows stay on the workers (statistics per
            partition, tree-reduced, Newton steps on the client; ``max_iter`` then caps
            its Newton steps, 50 at most by default).
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
        if solver == "dask":
            return self._fit_dask(lam, tol, max_iter, warm_start)
        opts = check_solver_options(solver, tol, max_iter, backend)
        if not isinstance(lam, str):
            lam = check_lam(lam)
        elif lam != "theory":
            raise ValueError(f"lam must be a non-negative number or 'theory'; got {lam!r}.")
        prepared = self.prepare()
        if lam == "theory":
            sol, _, phi = theory_lambda_fit(
                lambda value, start: prepared.solve(value, warm_start=start, **opts),
                lambda phi: self.lambda_theory(phi=phi),
                self._dispersion_of if self.family.estimate_dispersion else None,
                warm_start,
            )  # fmt: skip
            how = "theory" if phi is None else (
                f"theory ({self.family.dispersion_name} estimated: {phi:.4g})"
            )  # fmt: skip
            return BinarsityResults(self, sol, how)
        sol = prepared.solve(lam, warm_start=warm_start, **opts)
        return BinarsityResults(self, sol, "user")

    def _path(
        self,
        lams: np.ndarray,
        rows: np.ndarray | None,
        opts: dict[str, Any],
        tick=None,
    ) -> list:
        """Solve along ``lams`` with warm starts; returns Solutions without their η."""
        return solve_path(self.prepare(rows), lams, opts, tick)

    def fit_path(
        self,
        n_lambdas: int = 50,
        lam_min_ratio: float = 1e-3,
        *,
        lams: Any = None,
        solver: str = "cd",
        tol: float = 1e-7,
        max_iter: int = 1000,
        verbose: bool = False,
        backend: str = "auto",
    ) -> PathResults:
        """Fit along a decreasing λ grid with warm starts.

        Parameters
        ----------
        n_lambdas : int, default=50
            Grid size (ignored when ``lams`` is given).
        lam_min_ratio : float, default=1e-3
            Smallest λ as a fraction of λ_max.
        lams : array-like, optional
            Explicit λ values (sorted decreasing before use).
        solver, tol, max_iter
            As in :meth:`fit`. ``solver="dask"`` (a model on a Dask DataFrame): the
            path of the distributed solver, one first pass for the whole grid, then its
            Newton passes (a gaussian path: one pass in all).
        verbose : bool, default=False
            Show a tqdm progress bar.
        backend : {"auto", "rows", "gram"}, default="auto"
            As in :meth:`fit`.

        Returns
        -------
        PathResults
            Index it (``path[i]``) for the results at the i-th λ.
        """
        if solver == "dask":
            return self._fit_path_dask(self._grid(lams, n_lambdas, lam_min_ratio), tol, max_iter)
        opts = check_solver_options(solver, tol, max_iter, backend)
        grid = self._grid(lams, n_lambdas, lam_min_ratio)
        with _progress(len(grid), verbose, "path") as tick:
            sols = self._path(grid, None, opts, tick)
        return PathResults(self, grid, sols)

    def _fit_path_dask(self, grid: np.ndarray, tol: Any, max_iter: Any) -> PathResults:
        """``fit_path(solver="dask")``: a warm-started path from per-partition statistics.

        One :class:`~binarsity_stats.distributed._dask_solve.DaskProblem` (one first pass) serves the
        whole grid; every λ starts from the previous solution and its statistics (a
        gaussian path: one pass of statistics for every λ).
        """
        if self.dask_design is None:
            raise ValueError(
                'solver="dask" needs a model specified on a Dask DataFrame (glm(formula, '
                "dask_frame)); this one was given in-memory data."
            )
        from ..distributed._dask_solve import DaskProblem, fit_path_dask

        prob = DaskProblem(
            self.dask_design, self.family, self.penalty_weights, self.solver_intercept,
            client=self.__dict__.get("dask_client"),
        )  # fmt: skip
        path = fit_path_dask(prob, grid, tol=check_tol(tol),
                             max_iter=min(check_max_iter(max_iter), 50))  # fmt: skip
        order = np.argsort(-np.asarray(grid, dtype=float), kind="stable")
        sols = [None] * len(grid)
        for i, sol in zip(order, path.solutions, strict=True):
            sols[i] = sol
        return PathResults(self, grid, sols)

    def _grid(self, lams: Any, n_lambdas: int, lam_min_ratio: float) -> np.ndarray:
        if lams is None:
            return self.lambda_grid(n_lambdas, lam_min_ratio)
        return check_grid(lams)

    def fit_cv(
        self,
        folds: int = 10,
        scoring: str = "deviance",
        random_state: Any = None,
        n_jobs: int = 1,
        verbose: bool = False,
        *,
        n_lambdas: int = 50,
        lam_min_ratio: float = 1e-3,
        lams: Any = None,
        solver: str = "cd",
        tol: float = 1e-7,
        max_iter: int = 1000,
        cv_tol: float | None = 1e-5,
        early_stopping: bool = True,
        patience: int = 5,
        groups: Any = None,
        relax: Any = False,
        extend_grid: bool = True,
        backend: str = "auto",
    ) -> CVResults:
        """K-fold cross-validation over a λ path; refits the chosen λ on all rows.

        Parameters
        ----------
        folds : int, array-like, scikit-learn splitter or iterable of pairs, default=10
            * an int K (2 ≤ K ≤ n): shuffled folds (``random_state``), stratified on y
              for binomial, or whole ``groups`` per fold;
            * a fold-id array, one integer per row (glmnet's ``foldid``; fold k is the
              k-th smallest value, so 1..K works as in R), or the name of such a
              column of the data given to :func:`glm` (with ``missing="drop"``, the
              values of the rows kept are used, as for ``groups``);
            * a scikit-learn splitter, any object with ``split(X, y, groups)``
              (``KFold``, ``StratifiedKFold``, ``GroupKFold`` with ``groups``,
              ``TimeSeriesSplit``, ``PredefinedSplit``...); its ``split`` receives a
              placeholder X of n rows, the response y and ``groups``;
            * an iterable of ``(train, test)`` row-index pairs.

            The splits used are stored on the result (``splits``, ``fold_ids``).
        scoring : {"deviance", "mse", "auc", "concordance"}, default="deviance"
            Held-out criterion: mean weighted deviance, weighted mean squared error of the
            mean response, or (binomial) weighted ROC AUC.
        random_state : int, numpy Generator or None
            Seed of the fold assignment.
        n_jobs : int, default=1
            Folds solved in parallel (-1: one per CPU): forked worker processes on
            Linux, threads elsewhere; the path on all rows is solved meanwhile. Results
            do not depend on it.
        verbose : bool, default=False
            Show a tqdm progress bar.
        n_lambdas, lam_min_ratio, lams
            λ grid, as in :meth:`fit_path` (computed once on all rows).
        solver, tol, max_iter
            As in :meth:`fit`; ``tol`` applies to the path on all rows (and so to
            ``best_``). ``solver="dask"`` (a model on a Dask DataFrame): the fold paths
            and the path on all rows are fitted by the distributed solver; ``folds``
            must be an integer K (every row is hashed to a fold, ``fold_ids`` of the
            result), ``scoring="deviance"``, and the whole grid is evaluated (no early
            stopping or extension); ``n_jobs`` is ignored.
        cv_tol : float or None, default=1e-5
            KKT tolerance of the fold fits (None: ``tol``). The folds only rank the λ
            values; at this tolerance their held-out scores move by far less than their
            standard errors (on Adult, Bank, Churn and fair, ``lam_min`` and ``lam_1se``
            are the same as with 1e-7), and the small-λ end of the grid, where the
            problem is ill-conditioned, costs a few passes instead of hundreds.
        early_stopping : bool, default=True
            Walk the folds down the grid in lockstep and stop once the CV curve has
            clearly turned: after ``patience`` consecutive λ values whose mean score is
            outside the one-standard-error band of the best so far (worse than best +
            its standard error). ``lam_min`` and ``lam_1se`` are then final unless the
            curve dips again by more than a standard error further down, and the
            smallest λ values - the slowest, most overfitted fits - are skipped. The
            grid actually evaluated is ``lams`` of the result. False: the whole grid.
        patience : int, default=5
            The number of consecutive λ values outside the band that stops the walk.
        groups : array-like of shape (n,) or str, optional
            Group labels, or the name of a column of the data given to :func:`glm`
            (a patient, a household, a policy...): all rows of a group go
            to the same fold, so the CV scores a model on groups it has not seen.
            Groups are shuffled with ``random_state`` and given to folds largest first,
            each to the fold with the fewest rows (as scikit-learn's ``GroupKFold``);
            folds are then not stratified. Needs at least ``folds`` groups. With a
            splitter, passed to its ``split``; refused with fold ids or pairs.
        relax : bool or sequence of float, default=False
            Also cross-validate relaxed fits (``cv.glmnet(relax=TRUE)``): at every λ
            each fold scores γ θ̂(λ) + (1 − γ) θ̃(λ), θ̃ the unpenalised refit on the
            segments of θ̂ (see :meth:`BinarsityResults.relax`), for γ in glmnet's
            grid (0, 0.25, 0.5, 0.75, 1) or the values given; λ and γ are chosen
            jointly. The grid is the one the penalised CV evaluated (its early
            stopping and extension included); the relaxed pass solves each fold's path
            once more.
        extend_grid : bool, default=True
            When the last λ of the default grid scores best (the CV curve is still
            improving where the grid ends), continue the grid below its end at the
            same log step, ``patience`` values at a time, until the best λ is no
            longer the last (at most as many values again as the grid has: λ_max ·
            ``lam_min_ratio``² by default). ``extended`` on the result counts the
            values added. An explicit ``lams`` is never extended.
        backend : {"auto", "rows", "gram"}, default="auto"
            As in :meth:`fit` (every fold and the refit).

        Returns
        -------
        CVResults
            ``lam_min``, ``lam_1se``, ``best_`` (refit at ``lam_min`` on all rows),
            per-λ ``mean`` and ``se``. With ``relax``: a ``RelaxedCVResults`` whose
            ``gamma_min`` is the γ chosen and ``best_`` the relaxed fit.

        Notes
        -----
        The bins are learned once on all training rows and shared by every fold (see the
        module notes): binning never sees y, and one set of bins makes the CV curve score
        exactly the design ``best_`` uses.

        With ``early_stopping`` the fits on all rows (``path``) cover the same truncated
        grid as the folds.

        A ``UserWarning`` names the fix when the best λ still sits at an end of the
        grid that could go further: its smallest λ (after the extension, or with an
        explicit ``lams``), or the largest λ of an explicit ``lams`` below λ_max. The
        default grid starts at λ_max, where every binned term is already flat, so a
        ``lam_min`` there (nothing beats the intercept-only fit) needs no warning.
        """
        check_scoring(scoring, self.family, self.y)
        if solver == "dask":
            return self._fit_cv_dask(
                folds, scoring, self._grid(lams, n_lambdas, lam_min_ratio), tol, max_iter,
                cv_tol, random_state=random_state, n_jobs=n_jobs, groups=groups, relax=relax,
            )  # fmt: skip
        gammas = _check_relax(relax)
        if isinstance(folds, (bool, np.bool_)):  # before any work: True is not 1 fold
            raise TypeError(
                f"folds must be an integer >= 2 or a fold specification; got {folds!r}."
            )
        workers = resolve_n_jobs(n_jobs)
        random_state = check_random_state(random_state)
        opts = check_solver_options(solver, tol, max_iter, backend)
        cv_tol = check_cv_tol(cv_tol)
        check_bool(early_stopping, "early_stopping")
        check_bool(extend_grid, "extend_grid")
        patience = check_patience(patience)
        grid = self._grid(lams, n_lambdas, lam_min_ratio)
        groups = self.per_row(groups, "groups")  # a column name of the data, or labels
        if groups is not None:
            groups = check_groups(groups, self.nobs)
        if isinstance(folds, str) or is_fold_ids(folds):
            folds = self.per_row(folds, "folds")  # fold ids: a column name, or values
        fold_spec = resolve_folds(
            folds, self.y, groups=groups, stratify=self.family.binary,
            random_state=random_state,
        )  # fmt: skip
        fold_opts = dict(opts, tol=tol if cv_tol is None else float(cv_tol))
        data = self._path_data()
        # every fold's prepared design is kept for the whole walk unless that takes more
        # than _CV_KEEP_BYTES; then a fold is prepared again per chunk of λ values
        keep = sum(data.fold_bytes(len(tr)) for tr, _ in fold_spec.splits) <= _CV_KEEP_BYTES
        # a default grid continues below its end (one more span of lam_min_ratio at
        # most) while its last λ scores best; an explicit grid is the user's: a warning
        extend = len(grid) if (lams is None and extend_grid) else 0
        total = (fold_spec.n_folds + 1) * len(grid)
        with _progress(total, verbose, "cv") as tick:
            cv = cross_validate(
                data, grid, fold_spec, scoring=scoring, opts=opts, fold_opts=fold_opts,
                n_jobs=workers, early_stopping=early_stopping, patience=patience,
                keep=keep, prepare=self.prepare, tick=tick, extend=extend,
            )  # fmt: skip
        message = grid_end_message(cv, scoring, user_grid=lams is not None,
                                   lambda_max=self.lambda_max)  # fmt: skip
        if message is not None:
            warnings.warn(message, UserWarning, stacklevel=2)
        rule = {
            "folds": fold_spec.n_folds, "scoring": scoring, "lams": grid, "cv_tol": cv_tol,
            "early_stopping": bool(early_stopping), "patience": patience, "groups": groups,
            "extend": extend,
            # fixed splits (fold ids, a splitter's, pairs) are replayed on a resample;
            # an int K draws new folds
            "splits": None if isinstance(folds, (int, np.integer)) else fold_spec,
        }  # fmt: skip
        if gammas is None:
            return CVResults(
                self, cv.lams, cv.fold_scores, scoring, cv.fold_ids, cv.path, cv.grid_size,
                rule=rule, folds=fold_spec, extended=cv.extended, opts=opts,
            )  # fmt: skip
        from ._path_results import RelaxedCVResults

        scores = self._relaxed_cv(data, cv.lams, fold_spec, gammas, scoring, fold_opts, workers)
        rule["relax"] = list(gammas)
        return RelaxedCVResults(
            self, cv.lams, scores, gammas, scoring, cv.fold_ids, cv.path, cv.grid_size,
            rule=rule, folds=fold_spec, extended=cv.extended, opts=opts,
        )  # fmt: skip

    def _fit_cv_dask(self, folds, scoring, grid, tol, max_iter, cv_tol, **other) -> CVResults:
        """``fit_cv(solver="dask")``: fold paths and the path on all rows on Dask.

        One :class:`~binarsity_stats.distributed._dask_solve.DaskProblem` (one first pass, which also
        counts every fold) serves the K fold paths and the path on all rows. The folds are
        the engine's: a hash of (partition, row), reproducible, given back as ``fold_ids``
        (in the model's row order). The held-out mean loss of a fold becomes its mean
        deviance, 2 (loss − saturated loss) / W_fold, the in-memory ``fit_cv``'s score.
        The whole grid is evaluated (no early stopping or extension).
        """
        if self.dask_design is None:
            raise ValueError(
                'solver="dask" needs a model specified on a Dask DataFrame (glm(formula, '
                "dask_frame)); this one was given in-memory data."
            )
        if isinstance(folds, (bool, np.bool_)) or not isinstance(folds, (int, np.integer)):
            raise TypeError(
                'folds: fit_cv(solver="dask") takes an integer number of folds K (the '
                "engine hashes every row of every partition to a fold); fold-id arrays, "
                f"columns, splitters and (train, test) pairs are in-memory only; got {folds!r}."
            )
        if scoring != "deviance":
            raise ValueError(
                f'scoring={scoring!r}: fit_cv(solver="dask") scores the held-out deviance '
                "only (scoring='deviance')."
            )
        if other.get("groups") is not None:
            raise ValueError('groups: not supported by fit_cv(solver="dask").')
        if other.get("relax") not in (None, False):
            raise ValueError('relax: not supported by fit_cv(solver="dask").')
        K = int(folds)
        if K < 2:
            raise ValueError(f"folds must be an integer >= 2; got {K}.")
        from ..distributed._dask_solve import DaskProblem, fit_cv_dask, fit_path_dask

        tol = check_tol(tol)
        max_iter = min(check_max_iter(max_iter), 50)
        fold_tol = tol if cv_tol is None else float(check_cv_tol(cv_tol))
        client = self.__dict__.get("dask_client")
        prob = DaskProblem(
            self.dask_design, self.family, self.penalty_weights, self.solver_intercept,
            client=client, folds=K,
        )  # fmt: skip
        fold_ids = _dask_fold_ids(prob, K)
        if fold_ids.shape != self.y.shape:  # pragma: no cover - the gathered rows differ
            raise RuntimeError("the Dask partitions do not match the model's rows.")
        cv = fit_cv_dask(prob, grid, tol=fold_tol, max_iter=max_iter)
        # the engine's score is the held-out mean loss Σ s ℓ / Σ s; the model's, the mean
        # deviance: 2 (Σ s ℓ − Σ s ℓ_saturated) / Σ s, the saturated loss read on each
        # fold's rows (loss − deviance / 2 at any η: a function of y only)
        sw = self.sample_weight
        sw = np.ones(self.nobs) if sw is None else np.asarray(sw, dtype=np.float64)
        eta = np.full(self.nobs, prob.start_intercept())
        fam = self.family
        scores = np.empty_like(cv.cv_loss)
        for k in range(K):
            rows = fold_ids == k
            w, yk, ek = sw[rows], self.y[rows], eta[rows]
            W = float(w.sum())
            saturated = (fam.loss_sum(ek, yk, w) - 0.5 * fam.deviance(yk, fam.mean(ek), w)) / W
            scores[k] = 2.0 * (cv.cv_loss[k] - saturated)
        path = fit_path_dask(prob, grid, tol=tol, max_iter=max_iter)
        lams = np.asarray(cv.lambdas, dtype=np.float64)  # decreasing, as path.solutions
        sols = list(path.solutions)
        rule = {
            "folds": K, "scoring": scoring, "lams": grid, "cv_tol": cv_tol,
            "early_stopping": False, "patience": None, "groups": None, "extend": 0,
            "splits": None, "solver": "dask",
        }  # fmt: skip
        return CVResults(
            self, lams, scores, scoring, fold_ids, sols, len(grid), rule=rule,
            opts=check_solver_options("cd", tol, check_max_iter(max_iter), "auto"),
        )  # fmt: skip

    def _relaxed_cv(self, data, lams, folds, gammas, scoring, fold_opts, workers):
        """Fold scores (G, K, m) of the relaxed fits (see ``_relax.relaxed_path_scores``)."""
        from concurrent.futures import ThreadPoolExecutor

        from ..engine._relax import relaxed_path_scores

        n_folds = folds.n_folds

        def one(k: int) -> np.ndarray:
            rows, test = folds.splits[k]
            held = data.held_out(test)
            return relaxed_path_scores(
                self.prepare(rows), data.design.subset(rows), self.y[rows], self.family,
                self.penalty_weights, lams, gammas, held,
                lambda sol, h: data.score(sol, h, scoring),
                fit_intercept=self.solver_intercept, opts=fold_opts,
            )  # fmt: skip

        if workers > 1:
            with ThreadPoolExecutor(min(workers, n_folds)) as pool:
                per_fold = list(pool.map(one, range(n_folds)))
        else:
            per_fold = [one(k) for k in range(n_folds)]
        return np.stack(per_fold, axis=1)

    def __repr__(self) -> str:
        return (
            f"BinarsityModel({display_formula(self.formula)!r}, family={self.family.name!r}, "
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


def _dask_fold_ids(prob: Any, K: int) -> np.ndarray:
    """The engine's fold of every row, in the order the model gathered the partitions."""
    import dask

    from ..distributed._dask_solve import fold_of

    tasks = [dask.delayed(fold_of, pure=True)(part, i, K)
             for i, part in enumerate(prob.partitions)]  # fmt: skip
    from ..distributed._dask import compute

    parts = compute(*tasks, client=prob.client, what="the folds of the rows")
    return np.concatenate([np.asarray(f, dtype=np.int64) for f in parts])


def _check_relax(relax: Any) -> tuple[float, ...] | None:
    """``fit_cv``'s ``relax``: False/None (no relaxed CV), True (glmnet's γ grid) or γs."""
    from ..engine._relax import GAMMAS, check_gamma

    if relax is None or relax is False:
        return None
    if relax is True:
        return GAMMAS
    if isinstance(relax, (str, bytes)) or not hasattr(relax, "__iter__"):
        raise TypeError(f"relax must be a bool or a sequence of gamma in [0, 1]; got {relax!r}.")
    gammas = tuple(sorted({check_gamma(g, "relax") for g in relax}))
    if not gammas:
        raise ValueError("relax must hold at least one gamma in [0, 1].")
    return gammas


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


class _progress:
    """A thread-safe tqdm bar (or a no-op) as a context manager yielding ``tick()``."""

    def __init__(self, total: int, verbose: bool, desc: str):
        self.total, self.verbose, self.desc = total, verbose, desc
        self.bar = None
        self.lock = threading.Lock()

    def __enter__(self):
        if not self.verbose:
            return None
        from tqdm.auto import tqdm

        self.bar = tqdm(total=self.total, desc=self.desc, unit="fit")

        def tick() -> None:
            with self.lock:
                self.bar.update(1)

        return tick

    def __exit__(self, exc_type, *exc) -> None:
        if self.bar is not None:
            if exc_type is None and self.bar.n < self.total:
                # the CV stopped early: the bar ends full at the work actually done
                self.bar.total = self.bar.n
                self.bar.refresh()
            self.bar.close()

