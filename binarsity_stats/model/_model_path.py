"""The λ path and K-fold cross-validation of ``BinarsityModel`` (``fit_path``, ``fit_cv``).

``ModelPathCV`` is a base class of :class:`~binarsity_stats.model._model.BinarsityModel`.
``fit_cv`` runs in named steps: its arguments checked (``fit_cv``), the folds
(``_cv_folds``), the lockstep walk of the folds down the grid (``_cv_walk``,
``engine/_cv.cross_validate``), the grid-end warning, and the results (``_cv_results``,
with the relaxed fits' scores of ``_relaxed_cv``).

Choices documented here (the docs repeat them):

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

from ..core._validation import (
    check_bool,
    check_cv_tol,
    check_groups,
    check_random_state,
)
from ..engine._backend import check_supported
from ..engine._cv import check_patience, cross_validate, grid_end_message, resolve_n_jobs
from ..engine._folds import is_fold_ids, resolve_folds
from ..engine._path import check_grid, lambda_grid, solve_path
from ..engine._scoring import check_scoring
from ..engine._solvers import check_solver_options
from ._path_results import CVResults, PathResults
from ._theta import fixed_parameter_model

__all__ = ["ModelPathCV"]

#: fit_cv keeps every fold's prepared design for the whole walk below this many bytes;
#: above it, a fold's design is prepared again for each chunk of λ values.
_CV_KEEP_BYTES = 1 << 30


class ModelPathCV:
    """Fits along a λ grid and K-fold cross-validation over it.

    A base class of :class:`~binarsity_stats.model._model.BinarsityModel`.
    """

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
            same path (grid from λ_max on the cluster, warm starts) solved by the
            distributed solver: one first pass, λ_max's null fit, then its Newton passes
            (a gaussian path: none after the null fit).
        verbose : bool, default=False
            Show a tqdm progress bar.
        backend : {"auto", "rows", "gram"}, default="auto"
            As in :meth:`fit`.

        Returns
        -------
        PathResults
            Index it (``path[i]``) for the results at the i-th λ.

        Notes
        -----
        A family parameter to estimate (``family="nb"``'s θ) is estimated once, by
        alternation at the smallest λ of the grid (the grid at θ given the Poisson null
        fit), and held fixed along the path (whose grid is then at θ̂): every ``path[i]``
        has that θ̂ (``model/_theta.py``; suite ``nbtheta`` for the cost).
        """
        # the in-memory engine's path data, or the Dask backend's: one code path below
        data, opts = self._solver_data(solver, tol, max_iter, backend)
        if self.family.estimated_parameter is not None:  # NB θ: estimated once, then fixed
            model = fixed_parameter_model(self, lams, n_lambdas, lam_min_ratio, opts)
            return model.fit_path(n_lambdas, lam_min_ratio, lams=lams, solver=solver,
                                  tol=tol, max_iter=max_iter, verbose=verbose,
                                  backend=backend)  # fmt: skip
        grid = self._grid(lams, n_lambdas, lam_min_ratio, data)
        with _progress(len(grid), verbose, "path") as tick:
            sols = solve_path(data.prepare(None), grid, opts, tick)
        return PathResults(self, grid, sols)

    def _grid(self, lams: Any, n_lambdas: int, lam_min_ratio: float, data: Any) -> np.ndarray:
        """The λ grid: ``lams`` checked, or the default from the backend's λ_max."""
        if lams is None:
            lambda_grid(1.0, n_lambdas, lam_min_ratio)  # the arguments, before λ_max's fit
            return lambda_grid(data.lambda_max(), n_lambdas, lam_min_ratio)
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
            Linux, threads elsewhere; the path on all rows is solved meanwhile. The
            folds start serially and are timed: the workers start only once the folds'
            solves take at least ``_cv.PARALLEL_MIN_SECONDS`` (50 ms) per λ and the
            machine has 1.5 idle cores, so small problems and busy machines stay
            serial. Results do not depend on it.
        verbose : bool, default=False
            Show a tqdm progress bar.
        n_lambdas, lam_min_ratio, lams
            λ grid, as in :meth:`fit_path` (computed once on all rows).
        solver, tol, max_iter
            As in :meth:`fit`; ``tol`` applies to the path on all rows (and so to
            ``best_``). ``solver="dask"`` (a model on a Dask DataFrame): the same CV
            (the same folds, grid, extension, early stopping and choice of λ) with the
            fold fits and the path on all rows solved by the distributed solver; the
            folds (an int K, fold ids or ``groups``; each held-out row in one fold) are
            shipped once to the workers; ``scoring="deviance"``; ``n_jobs`` is ignored
            (the cluster parallelises each pass); ``relax`` is refused.
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

        A family parameter to estimate (``family="nb"``'s θ) is estimated once on all
        rows, as in :meth:`fit_path`, and held fixed in every fold and along the path:
        the held-out deviances are all at that θ̂.

        A ``UserWarning`` names the fix when the best λ still sits at an end of the
        grid that could go further: its smallest λ (after the extension, or with an
        explicit ``lams``), or the largest λ of an explicit ``lams`` below λ_max. The
        default grid starts at λ_max, where every binned term is already flat, so a
        ``lam_min`` there (nothing beats the intercept-only fit) needs no warning.
        """
        # rows on the workers: the fold ids are computed there (``_dask_folds``)
        check_scoring(scoring, self.family, np.zeros(0) if self.rows_on_workers else self.y)
        request = [(f"scoring:{scoring}", f"scoring={scoring!r}")]
        if relax is not None and relax is not False:
            request.append(("relax", f"relax={relax!r}"))
            self.require("fit_cv(relax=)", f"fit_cv(relax={relax!r})")
        # the in-memory engine's path data, or the Dask backend's: one code path below
        data, opts = self._solver_data(solver, tol, max_iter, backend, request)
        if self.family.estimated_parameter is not None:  # NB θ: estimated once, then fixed
            model = fixed_parameter_model(self, lams, n_lambdas, lam_min_ratio, opts)
            return model.fit_cv(
                folds, scoring, random_state, n_jobs, verbose, n_lambdas=n_lambdas,
                lam_min_ratio=lam_min_ratio, lams=lams, solver=solver, tol=tol,
                max_iter=max_iter, cv_tol=cv_tol, early_stopping=early_stopping,
                patience=patience, groups=groups, relax=relax, extend_grid=extend_grid,
                backend=backend,
            )  # fmt: skip
        gammas = _check_relax(relax)
        if isinstance(folds, (bool, np.bool_)):  # before any work: True is not 1 fold
            raise TypeError(
                f"folds must be an integer >= 2 or a fold specification; got {folds!r}."
            )
        workers = resolve_n_jobs(n_jobs)
        if not data.capabilities.supports("parallel_folds"):
            workers = 1  # the backend parallelises each solve itself (a cluster)
        random_state = check_random_state(random_state)
        cv_tol = check_cv_tol(cv_tol)
        check_bool(early_stopping, "early_stopping")
        check_bool(extend_grid, "extend_grid")
        patience = check_patience(patience)
        grid = self._grid(lams, n_lambdas, lam_min_ratio, data)
        fold_spec, groups = self._cv_folds(folds, groups, random_state)
        on_workers = getattr(fold_spec, "on_workers", False)  # ids computed there
        if fold_spec.fold_ids is None and not on_workers:  # not one held-out fold per row
            what = f"folds ({fold_spec.n_folds} splits)"
            check_supported(data.capabilities, [("overlapping_folds", what)])
        # the backend's view of the folds
        data = data.with_folds(fold_spec if on_workers else fold_spec.fold_ids)
        fold_opts = dict(opts, tol=tol if cv_tol is None else float(cv_tol))
        # a default grid continues below its end (one more span of lam_min_ratio at
        # most) while its last λ scores best; an explicit grid is the user's: a warning
        extend = len(grid) if (lams is None and extend_grid) else 0
        cv = self._cv_walk(
            data, grid, fold_spec, scoring=scoring, opts=opts, fold_opts=fold_opts,
            workers=workers, early_stopping=early_stopping, patience=patience,
            extend=extend, verbose=verbose,
        )  # fmt: skip
        message = grid_end_message(cv, scoring, user_grid=lams is not None,
                                   lambda_max=data.lambda_max)  # fmt: skip
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
        if solver == "dask" or self.rows_on_workers:
            rule["solver"] = "dask"
            if not self.rows_on_workers:
                # results(λ) between the grid's values re-solve in memory (issue 26: on Dask)
                opts = check_solver_options("cd", tol, max_iter, backend)
        return self._cv_results(cv, data, fold_spec, scoring, gammas, rule, opts,
                                fold_opts, workers)  # fmt: skip

    def _cv_folds(self, folds: Any, groups: Any, random_state: Any) -> tuple[Any, Any]:
        """``fit_cv``'s folds (``_folds.Folds``) and its groups, one label per row.

        ``groups`` and fold ids may name a column of the data given to :func:`glm`.
        """
        if self.rows_on_workers:  # fold ids computed on the workers, never gathered
            return self.worker_folds(folds, groups, random_state), None
        groups = self.per_row(groups, "groups")  # a column name of the data, or labels
        if groups is not None:
            groups = check_groups(groups, self.nobs)
        if isinstance(folds, str) or is_fold_ids(folds):
            folds = self.per_row(folds, "folds")  # fold ids: a column name, or values
        fold_spec = resolve_folds(
            folds, self.y, groups=groups, stratify=self.family.binary,
            random_state=random_state,
        )  # fmt: skip
        return fold_spec, groups

    def _cv_walk(
        self, data: Any, grid: np.ndarray, fold_spec: Any, *, scoring: str,
        opts: dict[str, Any], fold_opts: dict[str, Any], workers: int,
        early_stopping: bool, patience: int, extend: int, verbose: bool,
    ) -> Any:  # fmt: skip
        """The folds and the path on all rows walked down ``grid`` (``_cv.cross_validate``)."""
        # every fold's prepared design is kept for the whole walk unless that takes more
        # than _CV_KEEP_BYTES; then a fold is prepared again per chunk of λ values
        keep = sum(data.fold_bytes(len(tr)) for tr, _ in fold_spec.splits) <= _CV_KEEP_BYTES
        total = (fold_spec.n_folds + 1) * len(grid)
        with _progress(total, verbose, "cv") as tick:
            return cross_validate(
                data, grid, fold_spec, scoring=scoring, opts=opts, fold_opts=fold_opts,
                n_jobs=workers, early_stopping=early_stopping, patience=patience,
                keep=keep, prepare=data.prepare_fold, tick=tick, extend=extend,
            )  # fmt: skip

    def _cv_results(
        self, cv: Any, data: Any, fold_spec: Any, scoring: str, gammas: Any,
        rule: dict[str, Any], opts: dict[str, Any], fold_opts: dict[str, Any], workers: int,
    ) -> CVResults:  # fmt: skip
        """``CVResults`` of the walk, or ``RelaxedCVResults`` with the relaxed fits' scores."""
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
