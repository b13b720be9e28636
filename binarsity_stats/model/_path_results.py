"""Results of a λ path (``PathResults``) and of K-fold cross-validation (``CVResults``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..engine._folds import Folds
from ..engine._path import strip_eta
from ..engine._scoring import HIGHER_IS_BETTER, select_lambda
from ._results import BinarsityResults

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

    from ._model import BinarsityModel

__all__ = ["PathResults", "CVResults", "RelaxedCVResults"]


class PathResults:
    """Fits along a decreasing λ grid (warm-started).

    Parameters
    ----------
    model : BinarsityModel
        The model.
    lams : ndarray of shape (m,)
        The grid, decreasing.
    solutions : list of Solution
        One per λ.

    Attributes
    ----------
    lams : ndarray of shape (m,)
        λ values.
    df : ndarray of shape (m,)
        Degrees of freedom per λ.
    deviance : ndarray of shape (m,)
        Training deviance per λ.
    n_iter : ndarray of shape (m,)
        Solver iterations per λ.
    converged : ndarray of shape (m,)
        Whether each fit converged.
    """

    def __init__(self, model: BinarsityModel, lams: np.ndarray, solutions: list) -> None:
        self.model = model
        self.lams = np.asarray(lams, dtype=np.float64)
        df, dev = [], []
        for sol in solutions:
            res = BinarsityResults(model, sol)
            df.append(res.df)
            dev.append(res.deviance)
        self.df = np.asarray(df, dtype=np.intp)
        self.deviance = np.asarray(dev)
        self.n_iter = np.asarray([s.n_iter for s in solutions], dtype=np.intp)
        self.converged = np.asarray([s.converged for s in solutions], dtype=bool)
        self._solutions = [strip_eta(s) for s in solutions]

    def __len__(self) -> int:
        return len(self.lams)

    def __getitem__(self, i: int) -> BinarsityResults:
        if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)):
            raise TypeError(f"path results are indexed by λ position (an int); got {i!r}.")
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"λ position {i} out of range for a path of {n}.")
        i = int(i) % n
        return BinarsityResults(self.model, self._solutions[i], f"path position {i} of {n}")

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    @property
    def coefs(self) -> pd.DataFrame:
        """Coefficients per λ (rows: λ, columns: parameter names)."""
        names = list(self[0].params.index) if len(self) else []
        values = np.array([self[i].params.to_numpy() for i in range(len(self))])
        return pd.DataFrame(values, index=pd.Index(self.lams, name="lam"), columns=names)

    def to_frame(self) -> pd.DataFrame:
        """λ, df, deviance, iterations and convergence per position.

        Returns
        -------
        DataFrame
            One row per λ.
        """
        return pd.DataFrame(
            {"lam": self.lams, "df": self.df, "deviance": self.deviance,
             "n_iter": self.n_iter, "converged": self.converged}
        )  # fmt: skip

    def alo(self) -> pd.DataFrame:
        """Approximate leave-one-out deviance at every λ of the path (Wang et al., 2018).

        On the fused segments of each fit the model is a smooth GLM, so each row's
        leave-one-out prediction follows from its leverage in the segment design: λ is
        chosen from this one path instead of the K + 1 paths of ``fit_cv``. Exact for
        the gaussian family when deleting a row keeps the fit's jump set; a first-order
        approximation otherwise (``docs/user_guide/choosing_lambda.md``).

        Returns
        -------
        DataFrame
            One row per λ: ``lam``, ``df``, ``alo_deviance`` (mean deviance per unit
            weight of the rows at their leave-one-out predictions; lower is better)
            and ``high_leverage`` (rows that alone determine a segment). ``attrs``
            holds ``lam_alo``, the λ of the smallest ALO deviance.

        Raises
        ------
        ValueError
            A Cox model (its partial likelihood does not split by row).
        """
        from ._alo import alo_curve

        self.model.require("alo()")
        return alo_curve(self)

    def plot(self, kind: str = "range", ax: Any = None, marks: Any = None) -> Figure:
        """Regularisation path: term effect ranges, levels, df or deviance against λ.

        Parameters
        ----------
        kind : {"range", "levels", "df", "deviance"}, default="range"
            One labelled line per term (its effect range), every level θ, the
            degrees of freedom, or the training deviance (see ``_curves.plot_path``).
        ax : matplotlib Axes, optional
            Where to draw.
        marks : dict or float, optional
            λ values to mark with vertical lines, ``{label: λ}`` (a float: "fitted λ").

        Returns
        -------
        matplotlib.figure.Figure
            The figure drawn on.
        """
        from ..report._curves import plot_path

        return plot_path(self, kind=kind, ax=ax, marks=marks)

    def plot_path(self, kind: str = "range", ax: Any = None, marks: Any = None) -> Figure:
        """Alias of :meth:`plot`.

        Parameters
        ----------
        kind : {"range", "levels", "df", "deviance"}, default="range"
            One labelled line per term (its effect range), every level θ, the
            degrees of freedom, or the training deviance (see ``_curves.plot_path``).
        ax : matplotlib Axes, optional
            Where to draw.
        marks : dict or float, optional
            λ values to mark with vertical lines, ``{label: λ}`` (a float: "fitted λ").

        Returns
        -------
        matplotlib.figure.Figure
            The figure drawn on.
        """
        return self.plot(kind=kind, ax=ax, marks=marks)

    def __repr__(self) -> str:
        return (
            f"<PathResults {len(self)} lambdas from {self.lams[0]:.4g} to "
            f"{self.lams[-1]:.4g}, df {self.df.min()}..{self.df.max()}>"
        )


class CVResults:
    """K-fold cross-validation of a λ path.

    Parameters
    ----------
    model : BinarsityModel
        The model.
    lams : ndarray of shape (m,)
        The λ grid (from the full data), decreasing.
    fold_scores : ndarray of shape (K, m)
        Held-out score of every fold at every λ.
    scoring : {"deviance", "mse", "auc", "concordance"}
        Criterion (AUC is maximised, the others minimised).
    fold_ids : ndarray of shape (n,)
        Fold of every training row.
    full_path : list of Solution
        Fits on all rows along the grid.
    grid_size : int, optional
        Length of the grid requested; more than m when the CV stopped early
        (default: m).
    rule : dict, optional
        The CV settings (``folds``, ``scoring``, ``lams``, ``groups``, ``cv_tol``,
        ``early_stopping``, ``patience``, ``extend``, ``splits``) that
        ``bootstrap(lam="cv")`` replays.
    folds : Folds, optional
        The splits (default: those of ``fold_ids``).
    extended : int, default=0
        λ values added below the requested grid because its last λ scored best.
    opts : dict, optional
        ``solver``, ``tol``, ``max_iter`` of the fits on all rows (for
        :meth:`results` at a λ between grid values).

    Attributes
    ----------
    folds : int
        Number of splits K.
    fold_ids : ndarray of shape (n,) or None
        The split whose held-out set holds each row (0..K−1; −1 for a row never held
        out, e.g. by ``TimeSeriesSplit``); None when held-out sets overlap.
    splits : list of (ndarray, ndarray)
        The ``(train, test)`` row indices of every split, as used.
    extended : int
        λ values added below the requested grid (``fit_cv(extend_grid=True)``).
    mean, se : ndarray of shape (m,)
        Mean over folds and its standard error (std / sqrt(K)).
    lam_min : float
        λ with the best mean score.
    lam_1se : float
        Largest λ whose mean is within one standard error of the best.
    best_ : BinarsityResults
        The fit on all rows at ``lam_min``.
    path : PathResults
        The fits on all rows along the grid.
    """

    def __init__(
        self,
        model: BinarsityModel,
        lams: np.ndarray,
        fold_scores: np.ndarray,
        scoring: str,
        fold_ids: np.ndarray,
        full_path: list,
        grid_size: int | None = None,
        rule: dict | None = None,
        folds: Folds | None = None,
        extended: int = 0,
        opts: dict | None = None,
    ) -> None:
        self.model = model
        # how λ was chosen (folds, criterion, grid, groups): bootstrap(lam="cv") replays it
        self.rule = rule
        self.lams = np.asarray(lams, dtype=np.float64)
        self.grid_size = len(self.lams) if grid_size is None else int(grid_size)
        self.fold_scores = np.asarray(fold_scores, dtype=np.float64)
        self.scoring = scoring
        self.fold_ids = fold_ids
        self.folds = self.fold_scores.shape[0]
        if folds is None and fold_ids is not None:
            folds = Folds.from_fold_ids(fold_ids)
        self._folds = folds
        self.extended = int(extended)
        self.opts = opts
        self.mean, self.se, self.idx_min, self.idx_1se = select_lambda(self.fold_scores, scoring)
        self.lam_min = float(self.lams[self.idx_min])
        self.lam_1se = float(self.lams[self.idx_1se])
        self.path = PathResults(model, self.lams, full_path)
        self.best_ = self.results("lam_min")

    @property
    def splits(self) -> list:
        """The ``(train, test)`` row indices of every split, as used."""
        folds = getattr(self, "_folds", None)
        return [] if folds is None else list(folds.splits)

    def _position(self, lam: Any) -> int | None:
        """Position of a λ on the evaluated grid (None: between grid values)."""
        if isinstance(lam, (bool, np.bool_)) or not isinstance(lam, (int, float, np.number)):
            raise TypeError(f"s must be 'lam_min', 'lam_1se' or a λ value (a number); got {lam!r}.")
        lam = float(lam)
        lo, hi = float(self.lams.min()), float(self.lams.max())
        tol = 1e-9 * max(hi, 1e-300)
        if not (lo - tol <= lam <= hi + tol):
            raise ValueError(
                f"λ = {lam:.6g} is outside the cross-validated grid [{lo:.6g}, {hi:.6g}]: "
                "the CV says nothing about it; fit it with model.fit(lam=...)."
            )
        hit = np.flatnonzero(np.abs(self.lams - lam) <= 1e-9 * np.maximum(self.lams, 1e-300))
        return int(hit[0]) if hit.size else None

    def results(self, which: Any = "lam_min") -> BinarsityResults:
        """The fit on all rows at ``lam_min``, ``lam_1se`` or any λ of the grid's range.

        Parameters
        ----------
        which : {"lam_min", "lam_1se"} or float, default="lam_min"
            Which λ. A number on the evaluated grid (``lams``, to a relative 1e-9)
            returns the path's fit there; a number between two grid values is fitted
            exactly, warm-started from the path at the next larger grid λ (glmnet's
            ``exact=TRUE``; glmnet's default interpolates the coefficients linearly
            instead, which is not a fit of the model); a number outside the grid's range
            is refused (the CV has not scored it: use ``model.fit(lam=...)``).

        Returns
        -------
        BinarsityResults
            The fit on all rows at that λ. ``cv_score`` holds the CV mean and standard
            error at a λ of the grid (None between grid values); ``cv_rule`` is set
            only for ``lam_min`` and ``lam_1se`` (what ``bootstrap(lam="cv")`` replays).
        """
        if isinstance(which, str):
            if which not in ("lam_min", "lam_1se"):
                raise ValueError(f"which must be 'lam_min', 'lam_1se' or a λ value; got {which!r}.")
            i = self.idx_min if which == "lam_min" else self.idx_1se
            res = self.path[i]
            res.lam_source = f"{self.folds}-fold CV ({which}, {self.scoring})"
            rule = getattr(self, "rule", None)
            res.cv_rule = None if rule is None else dict(rule, which=which)
        else:
            i = self._position(which)
            if i is None:
                return self._fit_between(float(which))
            res = self.path[i]
            res.lam_source = f"λ {i + 1} of the {self.folds}-fold CV grid"
        res.cv_score = {"scoring": self.scoring, "mean": float(self.mean[i]),
                        "se": float(self.se[i])}  # fmt: skip
        res.cv_ = self  # the report draws this CV's curve
        return res

    def _fit_between(self, lam: float) -> BinarsityResults:
        """The exact fit at a λ between grid values, warm-started from the path."""
        larger = np.flatnonzero(self.lams > lam)
        start = self.path._solutions[int(larger.max())] if larger.size else None
        opts = getattr(self, "opts", None) or {}
        if opts.get("solver") == "dask":  # rows on the workers: solved on the cluster
            sol = self.model.solve_on_cluster(lam, start, opts["tol"], opts["max_iter"])
        else:
            sol = self.model.prepare().solve(lam, warm_start=start, **opts)
        res = BinarsityResults(
            self.model, sol, f"λ between grid values of the {self.folds}-fold CV (exact fit)"
        )
        res.cv_ = self  # the report draws this CV's curve
        return res

    def predict(self, newdata: Any = None, s: Any = "lam_1se", **kwargs: Any) -> np.ndarray:
        """Predict with the fit at ``lam_1se``, ``lam_min`` or a λ (``cv.glmnet``'s ``s``).

        Parameters
        ----------
        newdata : DataFrame, optional
            New rows (the training rows when omitted).
        s : {"lam_1se", "lam_min"} or float, default="lam_1se"
            Which fit: glmnet's default ``"lambda.1se"`` (the sparser model within one
            standard error of the best), ``"lam_min"``, or a λ as in :meth:`results`.
        **kwargs
            ``type`` and ``offset``, as in :meth:`BinarsityResults.predict`.

        Returns
        -------
        ndarray of shape (n,)
            Predictions of every row.
        """
        return self.results(s).predict(newdata, **kwargs)

    def to_frame(self) -> pd.DataFrame:
        """λ, mean score, standard error and df of the full-data fit per λ.

        Returns
        -------
        DataFrame
            One row per λ.
        """
        return pd.DataFrame(
            {"lam": self.lams, "mean": self.mean, "se": self.se, "df": self.path.df}
        )

    def plot(self, ax: Any = None) -> Figure:
        """CV curve: mean ± one standard error against λ, with ``lam_min`` and ``lam_1se``.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw.

        Returns
        -------
        matplotlib.figure.Figure
            The figure drawn on.
        """
        from ..report._curves import plot_cv

        return plot_cv(self, ax=ax)

    def plot_path(self, kind: str = "range", ax: Any = None) -> Figure:
        """The full-data regularisation path with λ_min and λ_1se marked.

        See :meth:`PathResults.plot`.

        Parameters
        ----------
        kind : {"range", "levels", "df", "deviance"}, default="range"
            One labelled line per term (its effect range), every level θ, the
            degrees of freedom, or the training deviance (see ``_curves.plot_path``).
        ax : matplotlib Axes, optional
            Where to draw.

        Returns
        -------
        matplotlib.figure.Figure
            The figure drawn on.
        """
        marks = {"λ_min": self.lam_min, "λ_1se": self.lam_1se}
        return self.path.plot(kind=kind, ax=ax, marks=marks)

    def report(
        self,
        path: Any = None,
        new: Any = None,
        y: Any = None,
        *,
        which: str = "lam_min",
        offset: Any = None,
        title: str | None = None,
        scale: str = "link",
        level: float = 0.95,
        method: str = "relaxed",
        bins: int = 10,
        precision: int | None = None,
    ) -> Any:
        """The HTML report of the fit at ``lam_min`` (or ``lam_1se``), with the CV curve.

        The page of ``BinarsityResults.report`` for the chosen fit, with a
        cross-validation section: the folds, criterion and grid, λ_min and λ_1se, the
        CV curve and the path with both marked. A bootstrap of :attr:`best_` (made by
        ``cv.best_.bootstrap()``) is shown when ``which="lam_min"``.

        Parameters
        ----------
        path : str or path-like, optional
            File to write; when omitted the page is returned as a string.
        new : DataFrame, optional
            Held-out rows for the calibration section.
        y : array-like or str, optional
            The observed response of ``new`` (default its response column).
        which : {"lam_min", "lam_1se"}, default="lam_min"
            The fit reported.
        offset : array-like, optional
            Offset of ``new``.
        title : str, optional
            Title of the page.
        scale : {"link", "response"}, default="link"
            Scale of the shape plots.
        level : float, default=0.95
            Coverage of the bootstrap bands.
        method : {"percentile", "basic", "relaxed"}, default="relaxed"
            The bootstrap bands (``BootstrapResults.shape_bands``).
        bins : int, default=10
            Groups of the calibration plot.
        precision : int, optional
            Significant digits of cut-points and labels.

        Returns
        -------
        str or path-like
            ``path`` as given, or the HTML page.
        """
        if which not in ("lam_min", "lam_1se"):
            raise ValueError(f"which must be 'lam_min' or 'lam_1se'; got {which!r}.")
        res = self.best_ if which == "lam_min" else self.results(which)
        res.cv_ = self
        return res.report(path, new, y, offset=offset, title=title, scale=scale, level=level,
                          method=method, bins=bins, precision=precision)  # fmt: skip

    def tidy(self) -> pd.DataFrame:
        """One row per λ of the CV curve: broom's ``tidy()`` of a ``cv.glmnet``.

        Returns
        -------
        DataFrame
            ``lambda``, ``estimate`` (the mean held-out score), ``std.error`` (its
            standard error over the folds), ``conf.low`` and ``conf.high`` (mean ∓ one
            standard error, glmnet's ``cvlo``/``cvup``) and ``df`` (degrees of freedom of
            the fit on all rows; glmnet's ``nzero``).
        """
        from ._tidy import tidy_cv

        return tidy_cv(self)

    def glance(self) -> pd.DataFrame:
        """One row for the cross-validation: broom's ``glance()`` of a ``cv.glmnet``.

        Returns
        -------
        DataFrame
            ``lambda.min``, ``lambda.1se``, ``nobs``, ``folds``, ``scoring``,
            ``cv.score`` and ``cv.std.error`` (at ``lambda.min``), ``n.lambda`` and
            ``stopped.early``; ``gamma.min`` for ``fit_cv(relax=True)``.
        """
        from ._tidy import glance_cv

        return glance_cv(self)

    def augment(self, newdata: Any = None, s: Any = "lam_1se", **kwargs: Any) -> pd.DataFrame:
        """The data with the predictions of the fit at ``s`` (as :meth:`predict`).

        Parameters
        ----------
        newdata : DataFrame, optional
            Rows to predict (default: the training rows).
        s : {"lam_1se", "lam_min"} or float, default="lam_1se"
            Which fit, as in :meth:`predict`.
        **kwargs
            ``type_predict``, ``type_residuals``, ``offset``, ``y``, ``missing``, as
            in ``BinarsityResults.augment``.

        Returns
        -------
        DataFrame
            ``results(s).augment(newdata, ...)``.
        """
        return self.results(s).augment(newdata, **kwargs)

    @property
    def stopped_early(self) -> bool:
        """Whether the folds stopped before the end of the requested grid (``fit_cv``'s
        ``early_stopping``: the CV curve had turned)."""
        return len(self.lams) < getattr(self, "grid_size", len(self.lams))

    def __repr__(self) -> str:
        grid = f"{len(self.lams)} λ"
        if self.stopped_early:
            grid = f"{len(self.lams)} of {self.grid_size} λ, stopped early"
        elif getattr(self, "extended", 0):
            grid = f"{len(self.lams)} λ, {self.extended} added below the grid"
        return (
            f"<CVResults {self.folds}-fold {self.scoring} ({grid}): "
            f"lam_min={self.lam_min:.4g}, lam_1se={self.lam_1se:.4g}>"
        )


class RelaxedCVResults(CVResults):
    """Cross-validation of relaxed fits over λ and γ jointly (``fit_cv(relax=True)``).

    As ``cv.glmnet(relax=TRUE)``: every fold scores, at every λ of the grid, the mixes
    γ θ̂(λ) + (1 − γ) θ̃(λ) of its penalised fit and the unpenalised refit on that fit's
    segments (:meth:`BinarsityResults.relax`). The γ whose best mean score is best is
    chosen (ties: the larger γ, the fit closer to the penalised one); ``mean``, ``se``,
    ``lam_min``, ``lam_1se`` and ``fold_scores`` are then that γ's, and ``best_`` is
    the relaxed fit on all rows at (``lam_min``, ``gamma_min``).

    Parameters
    ----------
    model : BinarsityModel
        The model.
    lams : ndarray of shape (m,)
        The λ grid evaluated, decreasing.
    relaxed_scores : ndarray of shape (G, K, m)
        Held-out score of every γ, fold and λ.
    gammas : sequence of float
        The γ values (G of them).
    scoring : {"deviance", "mse", "auc", "concordance"}
        Criterion.
    fold_ids : ndarray of shape (n,)
        Fold of every row.
    full_path : list of Solution
        Penalised fits on all rows along the grid.
    grid_size : int, optional
        Length of the grid requested.
    rule : dict, optional
        The CV settings (as :class:`CVResults`).

    Attributes
    ----------
    gammas : tuple of float
        The γ grid.
    gamma_min : float
        The γ chosen.
    relaxed_scores : ndarray of shape (G, K, m)
        Every γ's fold scores.
    """

    def __init__(
        self,
        model: BinarsityModel,
        lams: np.ndarray,
        relaxed_scores: np.ndarray,
        gammas: Any,
        scoring: str,
        fold_ids: np.ndarray,
        full_path: list,
        grid_size: int | None = None,
        rule: dict | None = None,
        folds: Folds | None = None,
        extended: int = 0,
        opts: dict | None = None,
    ) -> None:
        self.gammas = tuple(float(g) for g in gammas)
        self.relaxed_scores = np.asarray(relaxed_scores, dtype=np.float64)
        sign = -1.0 if scoring in HIGHER_IS_BETTER else 1.0
        best = []
        for g in range(len(self.gammas)):
            mean, _, idx, _ = select_lambda(self.relaxed_scores[g], scoring)
            best.append(sign * mean[idx])
        best_arr = np.asarray(best)
        # ties go to the larger γ (closer to the penalised fit)
        order = np.lexsort((-np.asarray(self.gammas), best_arr))
        self.gamma_index = int(order[0])
        self.gamma_min = self.gammas[self.gamma_index]
        super().__init__(
            model, lams, self.relaxed_scores[self.gamma_index], scoring, fold_ids,
            full_path, grid_size, rule, folds=folds, extended=extended, opts=opts,
        )  # fmt: skip

    def results(self, which: str = "lam_min", gamma: float | None = None) -> BinarsityResults:
        """The relaxed fit on all rows at ``lam_min`` or ``lam_1se`` and γ.

        Parameters
        ----------
        which : {"lam_min", "lam_1se"}, default="lam_min"
            Which λ (of the γ chosen).
        gamma : float, optional
            γ of the mix (default: ``gamma_min``).

        Returns
        -------
        BinarsityResults
            The relaxed fit (``relax_gamma`` set).
        """
        res = super().results(which)
        g = self.gamma_min if gamma is None else gamma
        out = res.relax(g)
        out.lam_source = f"{self.folds}-fold CV ({which}, gamma={out.relax_gamma:g}, {self.scoring})"
        return out

    @property
    def penalized_cv(self) -> CVResults:
        """The plain (γ = 1) cross-validation of the same folds and grid.

        Its ``best_`` is the penalised fit at the λ the penalised CV curve chooses
        (``fit_cv(relax=False)`` with the same arguments gives the same result).
        """
        if 1.0 not in self.gammas:
            raise ValueError("the relaxed CV did not score gamma = 1 (the penalised fit).")
        return CVResults(
            self.model, self.lams, self.relaxed_scores[self.gammas.index(1.0)], self.scoring,
            self.fold_ids, self.path._solutions, self.grid_size, self.rule,
            folds=getattr(self, "_folds", None), extended=getattr(self, "extended", 0),
            opts=getattr(self, "opts", None),
        )  # fmt: skip

    def to_frame(self) -> pd.DataFrame:
        """λ, the chosen γ's mean score and standard error, df, and every γ's mean.

        Returns
        -------
        DataFrame
            One row per λ; columns ``mean_gamma_<γ>`` for every γ.
        """
        frame = super().to_frame()
        for g, gamma in enumerate(self.gammas):
            frame[f"mean_gamma_{gamma:g}"] = np.nanmean(self.relaxed_scores[g], axis=0)
        return frame

    def __repr__(self) -> str:
        return super().__repr__()[:-1] + f", gamma_min={self.gamma_min:g}>"
