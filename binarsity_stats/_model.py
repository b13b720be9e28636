"""``glm()``: a binarsity GLM from a formula, fitted at one λ, along a path, or by CV.

The model object owns the training design (bin codes, dense columns, offset, response)
and the penalty weights; every fit goes through the engine's ``solve`` on those codes.

Choices documented here (the docs repeat them):

* **λ = "theory".** The paper's Theorem 1 weights are
  ω_jk = sqrt(2 U_n φ (A + log d) / n · π̂_jk); ``penalty_weights="theory"`` uses
  sqrt(π̂_jk), so the remaining scalar is λ_theory = sqrt(2 U_n φ (A + log d) / n) with
  d the number of binary features of the binned terms, n the (Kish effective) number of
  rows, A = log 40 (the bound then holds with probability ≥ 1 − 2e^{−A} = 0.95),
  U_n the bound on b'' (gaussian 1, binomial 1/4, poisson the largest fitted mean of
  the null model) and φ the dispersion (1 for binomial and poisson; for gaussian σ² is
  estimated scaled-lasso style: a first fit with φ = var(y), then φ̂ = RSS / (n − df)
  and one refit).
* **Cross-validation uses the same bins in every fold.** The cut points are learned once
  on all training rows (as the paper does). Binning reads only x, never y, so no label
  information leaks into the held-out folds; and with one set of bins the folds, the λ
  grid and the final refit share one coordinate system, so the CV curve scores exactly
  the design that ``best_`` is fitted on. The penalty weights ω and the λ grid are also
  those of the full data.
* **Folds** are stratified on y for binomial (each class spread round-robin over the
  folds after a seeded shuffle) and plain shuffled otherwise; ``n_jobs`` runs folds in
  threads (the kernels release the GIL), and since each fold is computed independently
  the result does not depend on ``n_jobs``.
"""

from __future__ import annotations

import math
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ._design import BinnedDesign
from ._families import Family, get_family
from ._formula import Design, DesignSpec, Response, _as_float, _as_frame, build_design

if TYPE_CHECKING:  # pragma: no cover
    from ._results import BinarsityResults, CVResults, PathResults

__all__ = ["glm", "BinarsityModel", "SCORINGS"]

#: Held-out criteria of ``fit_cv``.
SCORINGS = ("deviance", "mse", "auc")
#: A of Theorem 1: the oracle bound holds with probability 1 − 2e^{−A} = 0.95.
THEORY_A = math.log(40.0)
#: Relative size below which two neighbouring levels count as equal (no jump).
JUMP_TOL = 1e-10

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
    penalty_weights: str | np.ndarray = "theory",
    missing: str = "error",
) -> BinarsityModel:
    """Specify a binarsity-penalised GLM with an R-style formula.

    Parameters
    ----------
    formula : str
        ``"y ~ terms"``. ``bin(x, n_bins)``: a binned, TV-penalised feature whose cut
        points are learned here and replayed on new data; ``C(x)`` (or a bare
        non-numeric column): an unpenalised categorical; other numeric terms
        (``x``, ``log(x)``, ``x:z``): unpenalised linear; ``offset(expr)``: an offset,
        e.g. ``offset(log(exposure))``. ``- 1`` removes the intercept. The response may
        be numeric, boolean (``I(affairs > 0)``) or, for binomial, a two-level factor
        whose second level is the event.
    data : DataFrame or mapping of columns
        Training data.
    family : {"gaussian", "binomial", "poisson"} or Family, default="gaussian"
        Distribution with its canonical link.
    sample_weight : array-like of shape (n,) or str, optional
        Non-negative row weights s_i, or the name of a column of ``data``.
    offset : array-like of shape (n,) or str, optional
        Offset added to the linear predictor (on top of ``offset()`` terms), or the name
        of a column of ``data`` (then replayed from new data at predict time).
    n_bins : int, default=50
        Bins of ``bin(x)`` terms that do not give their own.
    penalty_weights : {"theory", "uniform"} or ndarray of shape (d,), default="theory"
        ω_jk of design.md §1; ``C()`` terms get weight 0 (unpenalised) unless an array
        says otherwise.
    missing : {"error", "separate"}, default="error"
        NaN in ``bin()``/``C()`` columns: an error naming the column, or a level of its
        own outside the TV chain.

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
    )


def _column_or_array(value: Any, data, name: str, n: int) -> tuple[np.ndarray | None, str | None]:
    """An (n,) finite float array from an array-like or a column name of ``data``.

    Used for ``sample_weight`` and ``offset`` at fit time and for an offset column at
    predict time; errors name the argument and, for a column, the column.
    """
    if value is None:
        return None, None
    column, what = None, name
    if isinstance(value, str):
        if value not in data.columns:
            raise ValueError(f"{name}={value!r} is not a column of the data.")
        column, what = value, f"{name} (column '{value}')"
        value = _as_float(data[value], value, f"{name}={value!r}", "Convert it to numbers first.")
    try:
        arr = np.asarray(value, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be numeric.") from None
    if arr.shape[0] != n:
        raise ValueError(f"{what} has {arr.shape[0]} rows but the data has {n}.")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{what} contains NaN or infinite values.")
    return arr, column


class BinarsityModel:
    """A binarsity GLM specified by a formula, ready to fit (see :func:`glm`).

    Parameters
    ----------
    formula, data, family, sample_weight, offset, n_bins, penalty_weights, missing
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
    """

    def __init__(
        self,
        formula: str,
        data: Any,
        *,
        family: str | Family = "gaussian",
        sample_weight: Any = None,
        offset: Any = None,
        n_bins: int = 50,
        penalty_weights: str | np.ndarray = "theory",
        missing: str = "error",
    ) -> None:
        self.family = get_family(family)
        frame = _as_frame(data)
        n = len(frame)
        sw, self.weight_column = _column_or_array(sample_weight, frame, "sample_weight", n)
        if sw is not None:
            if np.any(sw < 0):
                raise ValueError("sample_weight must be non-negative.")
            if not np.any(sw > 0):
                raise ValueError("sample_weight is zero for every row.")
        off_arg, self.offset_column = _column_or_array(offset, frame, "offset", n)
        spec, design, y, response = build_design(
            formula, frame, n_bins=n_bins, missing=missing, sample_weight=sw,
            family=self.family.name,
        )  # fmt: skip
        self.family.validate_y(y)
        self.formula = formula
        self.spec: DesignSpec = spec
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
        binned = self._binned_design()
        self.bin_counts = binned.counts
        self.penalty_weights = self._penalty_weights(penalty_weights)
        self._binned = binned.with_kinds(self._block_kinds())

    # -- design helpers ------------------------------------------------------------------
    @property
    def nobs(self) -> int:
        """Number of training rows."""
        return int(self.y.shape[0])

    @property
    def block_ptr(self) -> np.ndarray:
        """Offsets of the blocks in θ."""
        return self.design.block_ptr

    @property
    def fit_intercept(self) -> bool:
        """Whether the formula has an intercept."""
        return self.spec.fit_intercept

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

    def _block_kinds(self) -> list[str]:
        """Kind of every block: a TV chain for ``bin()``, free levels for ``C()``.

        A ``C()`` term given positive weights by a ``penalty_weights`` array is
        penalised as a chain over its levels in their order.
        """
        bp, w = self.block_ptr, self.penalty_weights
        kinds = []
        for j, block in enumerate(self.spec.blocks):
            chain = block.penalized or bool(np.any(w[bp[j] + 1 : bp[j + 1]] > 0))
            kinds.append("tv" if chain else "free")
        return kinds

    def _penalty_weights(self, kind: str | np.ndarray) -> np.ndarray:
        from ._penalty import penalty_weights as engine_weights

        blocks = self.spec.blocks
        w = engine_weights(kind, self.bin_counts, self.block_ptr, self.spec.chain_length)
        if isinstance(kind, str):
            for j, block in enumerate(blocks):
                if not block.penalized:
                    w[self.block_ptr[j] : self.block_ptr[j + 1]] = 0.0
        return w

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
            binned = self.binned
        elif isinstance(design, BinnedDesign):
            binned = design
        else:
            binned = BinnedDesign(design.codes, design.block_ptr, dense=design.dense, offset=offset)
        return binned.linear_predictor(coef, dense_coef, intercept)

    def _prepare(self, rows: np.ndarray | None = None):
        """The engine's prepared design of all rows or of some (a CV fold), for many λ."""
        from ._solvers import Prepared

        binned = self.binned if rows is None else self.binned.subset(rows)
        y = self.y if rows is None else self.y[rows]
        return Prepared.from_design(
            binned, y, family=self.family, penalty_weights=self.penalty_weights,
            fit_intercept=self.fit_intercept,
        )  # fmt: skip

    def _fold_bytes(self, n_rows: int) -> int:
        """Memory a prepared design of ``n_rows`` rows holds (codes and float arrays)."""
        d = self.design
        per_row = d.codes.shape[0] * d.codes.dtype.itemsize + 8 * 4  # y, weights, r, h
        per_row += 8 * (0 if d.dense is None else 2 * d.dense.shape[1])  # input + scaled
        per_row += 8 * (self.offset is not None)
        return int(n_rows) * per_row

    # -- λ ---------------------------------------------------------------------------
    def lambda_max(self) -> float:
        """λ_max of design.md §2: the smallest λ at which every binned term is flat.

        Returns
        -------
        float
            λ_max; 0 when nothing is penalised.
        """
        from ._solvers import design_lambda_max

        return float(design_lambda_max(
            self.binned, self.y, family=self.family, penalty_weights=self.penalty_weights,
            fit_intercept=self.fit_intercept,
        ))  # fmt: skip

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
        if isinstance(n_lambdas, bool) or not isinstance(n_lambdas, (int, np.integer)):
            raise TypeError(f"n_lambdas must be a positive integer; got {n_lambdas!r}.")
        if n_lambdas < 1:
            raise ValueError(f"n_lambdas must be >= 1; got {n_lambdas}.")
        if not (0 < float(lam_min_ratio) < 1):
            raise ValueError(f"lam_min_ratio must be in (0, 1); got {lam_min_ratio!r}.")
        lmax = self.lambda_max()
        if not lmax > 0:
            # nothing to penalise (no binned term, or every binned term constant)
            return np.zeros(1)
        if n_lambdas == 1:
            return np.array([lmax])
        return lmax * np.logspace(0.0, math.log10(lam_min_ratio), int(n_lambdas))

    def lambda_theory(self, phi: float | None = None, A: float = THEORY_A) -> float:
        """The scalar of the paper's Theorem 1 weights: sqrt(2 U_n φ (A + log d) / n).

        Parameters
        ----------
        phi : float, optional
            Dispersion φ. Default: 1 for binomial and poisson, the weighted variance of
            y (an upper bound on σ²) for gaussian.
        A : float, default=log(40)
            Confidence parameter: the bound holds with probability ≥ 1 − 2e^{−A}.

        Returns
        -------
        float
            λ_theory.
        """
        sw = self.sample_weight
        n_eff = float(sw.sum() ** 2 / np.sum(sw**2))
        d = sum(b.n_levels for b in self.spec.blocks if b.penalized)
        d = max(d, 2)
        fam = self.family.name
        if fam == "gaussian":
            U = 1.0
            if phi is None:
                r = self.y if self.offset is None else self.y - self.offset
                phi = float(np.average((r - np.average(r, weights=sw)) ** 2, weights=sw))
        elif fam == "binomial":
            U, phi = 0.25, 1.0 if phi is None else phi
        else:
            U = float(np.max(self.family.mean(self._null_eta())))
            phi = 1.0 if phi is None else phi
        return math.sqrt(2.0 * U * phi * (A + math.log(d)) / n_eff)

    def _null_eta(self) -> np.ndarray:
        """Linear predictor of the intercept(+offset)-only fit."""
        b0 = null_intercept(
            self.family, self.y, self.sample_weight, self.offset, self.fit_intercept
        )
        eta = np.full(self.nobs, b0)
        return eta if self.offset is None else eta + self.offset

    # -- fitting -------------------------------------------------------------------------
    def fit(
        self,
        lam: float | str = "theory",
        *,
        solver: str = "cd",
        tol: float = 1e-7,
        max_iter: int = 1000,
        warm_start: Any = None,
    ) -> BinarsityResults:
        """Fit at one λ.

        Parameters
        ----------
        lam : float or "theory", default="theory"
            λ ≥ 0 of design.md §1, or ``"theory"`` for the data-driven scale of the
            paper's Theorem 1 (see :meth:`lambda_theory`; for gaussian σ² is estimated
            from a first fit and the model refitted once).
        solver : {"cd", "fista"}, default="cd"
            Engine solver.
        tol : float, default=1e-7
            KKT tolerance.
        max_iter : int, default=1000
            Cap on solver passes.
        warm_start : Solution, optional
            Starting point.

        Returns
        -------
        BinarsityResults
            The fit at λ, with its statistics and report.
        """
        from ._results import BinarsityResults

        opts = {"solver": solver, "tol": tol, "max_iter": max_iter}
        prepared = self._prepare()
        if isinstance(lam, str):
            if lam != "theory":
                raise ValueError(f"lam must be a non-negative number or 'theory'; got {lam!r}.")
            value = self.lambda_theory()
            sol = prepared.solve(value, warm_start=warm_start, **opts)
            how = "theory"
            if self.family.name == "gaussian":
                first = BinarsityResults(self, sol, "theory (first pass)")
                dof = first.df
                n_eff = float(self.sample_weight.sum() ** 2 / np.sum(self.sample_weight**2))
                rss = float(np.sum(self.sample_weight * (self.y - sol.eta) ** 2))
                phi = rss / float(self.sample_weight.sum()) * n_eff / max(n_eff - dof, 1.0)
                value = self.lambda_theory(phi=phi)
                sol = prepared.solve(value, warm_start=sol, **opts)
                how = f"theory (sigma^2 estimated: {phi:.4g})"
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
        prepared = self._prepare(rows)
        sols = []
        prev = None
        for lam in lams:
            # results recompute η from the coefficients: the solver's (n,) copy would
            # only hold memory (a path at n = 1e7 would keep gigabytes of it)
            sol = strip_eta(prepared.solve(float(lam), warm_start=prev, **opts))
            sols.append(sol)
            prev = sol
            if tick is not None:
                tick()
        return sols

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
            As in :meth:`fit`.
        verbose : bool, default=False
            Show a tqdm progress bar.

        Returns
        -------
        PathResults
            Index it (``path[i]``) for the results at the i-th λ.
        """
        from ._results import PathResults

        grid = self._grid(lams, n_lambdas, lam_min_ratio)
        opts = {"solver": solver, "tol": tol, "max_iter": max_iter}
        with _progress(len(grid), verbose, "path") as tick:
            sols = self._path(grid, None, opts, tick)
        return PathResults(self, grid, sols)

    def _grid(self, lams: Any, n_lambdas: int, lam_min_ratio: float) -> np.ndarray:
        if lams is None:
            return self.lambda_grid(n_lambdas, lam_min_ratio)
        grid = np.sort(np.asarray(lams, dtype=np.float64).ravel())[::-1]
        if grid.size == 0 or not np.all(np.isfinite(grid)) or np.any(grid < 0):
            raise ValueError("lams must be a non-empty array of finite values >= 0.")
        return grid

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
    ) -> CVResults:
        """K-fold cross-validation over a λ path; refits the chosen λ on all rows.

        Parameters
        ----------
        folds : int, default=10
            Number of folds K (2 ≤ K ≤ n). Stratified on y for binomial.
        scoring : {"deviance", "mse", "auc"}, default="deviance"
            Held-out criterion: mean weighted deviance, weighted mean squared error of the
            mean response, or (binomial) weighted ROC AUC.
        random_state : int, numpy Generator or None
            Seed of the fold assignment.
        n_jobs : int, default=1
            Folds solved in parallel threads (-1: one per CPU). Results do not depend
            on it.
        verbose : bool, default=False
            Show a tqdm progress bar.
        n_lambdas, lam_min_ratio, lams
            λ grid, as in :meth:`fit_path` (computed once on all rows).
        solver, tol, max_iter
            As in :meth:`fit`; ``tol`` applies to the path on all rows (and so to
            ``best_``).
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
        groups : array-like of shape (n,), optional
            Group labels (a patient, a household, a policy...): all rows of a group go
            to the same fold, so the CV scores a model on groups it has not seen.
            Groups are shuffled with ``random_state`` and given to folds largest first,
            each to the fold with the fewest rows (as scikit-learn's ``GroupKFold``);
            folds are then not stratified. Needs at least ``folds`` groups.

        Returns
        -------
        CVResults
            ``lam_min``, ``lam_1se``, ``best_`` (refit at ``lam_min`` on all rows),
            per-λ ``mean`` and ``se``.

        Notes
        -----
        The bins are learned once on all training rows and shared by every fold (see the
        module notes): binning never sees y, and one set of bins makes the CV curve score
        exactly the design ``best_`` uses.

        With ``early_stopping`` the fits on all rows (``path``) cover the same truncated
        grid as the folds.
        """
        from ._results import CVResults

        if scoring not in SCORINGS:
            raise ValueError(f"scoring must be one of {SCORINGS}; got {scoring!r}.")
        if scoring == "auc" and self.family.name != "binomial":
            raise ValueError("scoring='auc' needs family='binomial'.")
        if isinstance(folds, bool) or not isinstance(folds, (int, np.integer)):
            raise TypeError(f"folds must be an integer >= 2; got {folds!r}.")
        if not 2 <= folds <= self.nobs:
            raise ValueError(f"folds must be between 2 and n = {self.nobs}; got {folds}.")
        if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0:
            raise ValueError(f"n_jobs must be a non-zero integer; got {n_jobs!r}.")
        workers = (os.cpu_count() or 1) if n_jobs < 0 else int(n_jobs)
        grid = self._grid(lams, n_lambdas, lam_min_ratio)
        if groups is None:
            fold_id = fold_ids(
                self.y, int(folds), stratify=self.family.name == "binomial",
                random_state=random_state,
            )  # fmt: skip
        else:
            fold_id = group_fold_ids(groups, int(folds), self.nobs, random_state=random_state)
        opts = {"solver": solver, "tol": tol, "max_iter": max_iter}
        if cv_tol is not None and not (isinstance(cv_tol, (int, float)) and cv_tol > 0):
            raise ValueError(f"cv_tol must be a positive number or None; got {cv_tol!r}.")
        fold_opts = dict(opts, tol=tol if cv_tol is None else float(cv_tol))
        if isinstance(patience, bool) or not isinstance(patience, (int, np.integer)):
            raise TypeError(f"patience must be a positive integer; got {patience!r}.")
        if patience < 1:
            raise ValueError(f"patience must be >= 1; got {patience}.")
        n_folds = int(folds)
        sign = -1.0 if scoring == "auc" else 1.0  # lower sign * score is better
        total = (n_folds + 1) * len(grid)
        with _progress(total, verbose, "cv") as tick:
            # Every fold walks the grid from its own warm start, all folds in lockstep,
            # so that the walk can stop once the CV curve has turned. Small data keep
            # every fold's prepared design for the whole walk; when that would take
            # more than _CV_KEEP_BYTES, a fold's design is prepared again for each
            # chunk of `patience` λ values, so that only one fold per worker is held.
            # Both give the same results bit for bit (the fits are the same).
            rows = [np.flatnonzero(fold_id != k) for k in range(n_folds)]
            held_out = [self._score_design(np.flatnonzero(fold_id == k)) for k in range(n_folds)]
            keep = self._fold_bytes(len(rows[0])) * n_folds <= _CV_KEEP_BYTES
            chunk = 1 if keep else int(patience)
            prepared: list[Any] = [None] * n_folds
            warm: list[Any] = [None] * n_folds

            def run_chunk(k: int, lams: np.ndarray) -> list[float]:
                prep = prepared[k] if prepared[k] is not None else self._prepare(rows[k])
                if keep:
                    prepared[k] = prep
                out = []
                for lam in lams:
                    sol = prep.solve(float(lam), warm_start=warm[k], **fold_opts)
                    warm[k] = strip_eta(sol)  # a warm start needs the coefficients only
                    if tick is not None:
                        tick()
                    out.append(self._score_one(sol, held_out[k], scoring))
                return out

            columns: list[np.ndarray] = []
            pool = ThreadPoolExecutor(max_workers=min(workers, n_folds)) if workers > 1 else None
            try:
                stop = False
                for first in range(0, len(grid), chunk):
                    lams = grid[first : first + chunk]
                    if pool is not None:
                        block = list(pool.map(lambda k, lams=lams: run_chunk(k, lams),
                                              range(n_folds)))  # fmt: skip
                    else:
                        block = [run_chunk(k, lams) for k in range(n_folds)]
                    block = np.asarray(block, dtype=np.float64).reshape(n_folds, len(lams))
                    for j in range(len(lams)):
                        columns.append(block[:, j])
                        if early_stopping and _cv_curve_turned(np.column_stack(columns), sign,
                                                               int(patience)):  # fmt: skip
                            stop = True
                            break
                    if stop:
                        break
            finally:
                if pool is not None:
                    pool.shutdown()
            grid_size = len(grid)
            grid = grid[: len(columns)]
            scores = np.column_stack(columns)
            full = self._path(grid, None, opts, tick)
        return CVResults(self, grid, scores, scoring, fold_id, full, grid_size)

    def _score_design(self, test: np.ndarray) -> tuple:
        """The held-out rows of a fold: (design with its offset, y, weights)."""
        return self.binned.subset(test), self.y[test], self.sample_weight[test]

    def _score_one(self, sol: Any, held_out: tuple, scoring: str) -> float:
        sub, y, sw = held_out
        eta = sub.linear_predictor(sol.coef, sol.dense_coef, sol.intercept)
        return score(self.family, scoring, y, eta, sw)

    def __repr__(self) -> str:
        return (
            f"BinarsityModel({self.formula!r}, family={self.family.name!r}, "
            f"n={self.nobs}, blocks={len(self.spec.blocks)})"
        )


# ---------------------------------------------------------------------------------------
# Shared statistics
# ---------------------------------------------------------------------------------------


def cv_mean_se(fold_scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean over folds and its standard error (std / sqrt(K)) per λ, NaN-aware.

    Parameters
    ----------
    fold_scores : ndarray of shape (K, m)
        Held-out score of every fold at every λ (NaN where undefined).

    Returns
    -------
    mean, se : ndarray of shape (m,)
        NaN mean where no fold is finite; se 0 where fewer than two folds are.
    """
    finite = np.isfinite(fold_scores)
    k = finite.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(k > 0, np.nansum(fold_scores, axis=0) / np.maximum(k, 1), np.nan)
        dev = np.where(finite, fold_scores - mean, 0.0)
        sd = np.sqrt(np.sum(dev**2, axis=0) / np.maximum(k - 1, 1))
    return mean, np.where(k >= 2, sd / np.sqrt(np.maximum(k, 1)), 0.0)


def _cv_curve_turned(fold_scores: np.ndarray, sign: float, patience: int) -> bool:
    """Whether the last ``patience`` λ values all score outside the 1-SE band of the best.

    ``fold_scores`` is (K, m) for the first m λ values; ``sign * mean`` is minimised.
    The band is the best mean plus its standard error, as for ``lam_1se``.
    """
    m = fold_scores.shape[1]
    if m <= patience:
        return False
    mean, se = cv_mean_se(fold_scores)
    loss = sign * mean
    if not np.all(np.isfinite(loss[-patience:])):
        return False
    best = int(np.nanargmin(loss))
    if best >= m - patience:
        return False
    return bool(np.all(loss[-patience:] > loss[best] + se[best]))


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
    off = np.zeros_like(y) if offset is None else offset
    W = float(sw.sum())
    if family.name == "gaussian":
        return float(np.sum(sw * (y - off)) / W)
    if family.name == "poisson":
        return float(math.log(max(np.sum(sw * y), 1e-300) / np.sum(sw * np.exp(off))))
    ybar = min(max(float(np.sum(sw * y) / W), 1e-10), 1 - 1e-10)
    b0 = math.log(ybar / (1 - ybar)) - float(np.sum(sw * off) / W)
    for _ in range(100):
        mu = family.mean(b0 + off)
        g = float(np.sum(sw * (mu - y)))
        h = float(np.sum(sw * mu * (1 - mu)))
        if h <= 0:
            break
        step = g / h
        b0 -= step
        if abs(step) < 1e-13 * max(1.0, abs(b0)):
            break
    return float(b0)


def fold_ids(
    y: np.ndarray, folds: int, *, stratify: bool = False, random_state: Any = None
) -> np.ndarray:
    """Assign rows to K folds after a seeded shuffle (stratified on y if asked).

    Parameters
    ----------
    y : ndarray of shape (n,)
        Response (its distinct values are the strata).
    folds : int
        K.
    stratify : bool, default=False
        Spread every class round-robin over the folds so each fold keeps the class
        proportions.
    random_state : int, numpy Generator or None
        Seed.

    Returns
    -------
    ndarray of shape (n,)
        Fold index in 0..K−1 of every row.
    """
    rng = np.random.default_rng(random_state)
    n = y.shape[0]
    out = np.empty(n, dtype=np.intp)
    if not stratify:
        out[rng.permutation(n)] = np.arange(n) % folds
        return out
    start = 0
    for cls in np.unique(y):
        idx = np.flatnonzero(y == cls)
        idx = idx[rng.permutation(idx.size)]
        out[idx] = (start + np.arange(idx.size)) % folds
        start += idx.size
    return out


def group_fold_ids(groups: Any, folds: int, n: int, *, random_state: Any = None) -> np.ndarray:
    """Assign whole groups of rows to K folds, balancing the number of rows per fold.

    Parameters
    ----------
    groups : array-like of shape (n,)
        Group label of every row (any hashable values, no missing values).
    folds : int
        K (at most the number of distinct groups).
    n : int
        Number of rows expected.
    random_state : int, numpy Generator or None
        Seed of the shuffle that breaks ties between groups of equal size.

    Returns
    -------
    ndarray of shape (n,)
        Fold index in 0..K−1 of every row; rows of one group share it.

    Raises
    ------
    ValueError
        If ``groups`` has the wrong length, missing values, or fewer than K groups.
    """
    import pandas as pd

    values = groups.to_numpy(dtype=object) if isinstance(groups, pd.Series) else groups
    values = np.asarray(values, dtype=object)
    if values.ndim != 1:
        raise ValueError(f"groups must be 1-D (one label per row); got shape {values.shape}.")
    labels = pd.Series(values)
    if labels.shape[0] != n:
        raise ValueError(f"groups has {labels.shape[0]} rows but the data has {n}.")
    if labels.isna().any():
        raise ValueError("groups contains missing values; give every row a group.")
    codes, uniques = pd.factorize(labels, sort=True)
    n_groups = len(uniques)
    if n_groups < folds:
        raise ValueError(
            f"groups has {n_groups} distinct groups but folds={folds}; "
            "use at most as many folds as groups."
        )
    sizes = np.bincount(codes, minlength=n_groups)
    rng = np.random.default_rng(random_state)
    order = rng.permutation(n_groups)
    order = order[np.argsort(-sizes[order], kind="stable")]  # largest first, ties shuffled
    load = np.zeros(folds, dtype=np.int64)
    fold_of_group = np.empty(n_groups, dtype=np.intp)
    for g in order:
        k = int(np.argmin(load))
        fold_of_group[g] = k
        load[k] += sizes[g]
    return fold_of_group[codes]


def weighted_auc(y: np.ndarray, score_: np.ndarray, sw: np.ndarray) -> float:
    """Weighted ROC AUC (ties count one half); NaN when a class is absent.

    Parameters
    ----------
    y : ndarray of shape (n,)
        0/1 labels.
    score_ : ndarray of shape (n,)
        Scores (higher means more likely 1).
    sw : ndarray of shape (n,)
        Weights.

    Returns
    -------
    float
        The AUC in [0, 1].
    """
    pos = y > 0.5
    wp, wn = float(np.sum(sw[pos])), float(np.sum(sw[~pos]))
    if wp <= 0 or wn <= 0:
        return float("nan")
    uniq, inv = np.unique(score_, return_inverse=True)
    neg_w = np.bincount(inv, weights=np.where(pos, 0.0, sw), minlength=uniq.size)
    pos_w = np.bincount(inv, weights=np.where(pos, sw, 0.0), minlength=uniq.size)
    below = np.concatenate([[0.0], np.cumsum(neg_w)[:-1]])
    return float(np.sum(pos_w * (below + 0.5 * neg_w)) / (wp * wn))


def score(family: Family, scoring: str, y: np.ndarray, eta: np.ndarray, sw: np.ndarray) -> float:
    """Held-out score of a fit: mean deviance, MSE of the mean, or AUC.

    Parameters
    ----------
    family : Family
        Distribution.
    scoring : {"deviance", "mse", "auc"}
        Criterion.
    y, eta, sw : ndarray of shape (n,)
        Response, linear predictor (offset included) and weights.

    Returns
    -------
    float
        The score (lower is better, except for AUC).
    """
    if scoring == "auc":
        return weighted_auc(y, eta, sw)
    mu = family.mean(eta)
    W = float(sw.sum())
    if scoring == "mse":
        return float(np.sum(sw * (y - mu) ** 2) / W)
    return family.deviance(y, mu, sw) / W


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


def strip_eta(solution: Any) -> Any:
    """A copy of a Solution without its (n,) linear predictor (for compact paths)."""
    return replace(solution, eta=None)
