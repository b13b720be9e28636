"""The unpenalised refit of a selection (statsmodels GLM on the selected segments).

``BinarsityResults.refit`` builds a :class:`RefitResults`: either conditional on the
selection (same rows) or honest by sample splitting (select on one part, estimate on the
other).
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ._path import strip_eta
from ._validation import check_sample_weight

if TYPE_CHECKING:  # pragma: no cover
    from ._results import BinarsityResults

__all__ = ["RefitResults"]

_REFERENCE = -1  # a level in the reference segment of the selected design
_NO_ESTIMATE = -2  # a level whose segment had no training weight


class RefitResults:
    """An unpenalised statsmodels GLM on the selected design.

    Parameters
    ----------
    sm_results : statsmodels GLMResults
        The fitted statsmodels model.
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
        self.shape_violations = _shape_violations(parent, np.asarray(self.params, dtype=float))
        #: names of the parameters the selected design does not identify (collinear
        #: columns): their standard errors are NaN, and refit() warns naming them
        self.non_identified = [self.names[k] for k in _non_identified(sm_results)]
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
        if getattr(self, "non_identified", None):
            if isinstance(ci, pd.DataFrame):
                ci = ci.copy()
                ci.loc[self.non_identified, :] = np.nan
            else:  # PHReg: a bare array
                ci = np.array(ci, dtype=float)
                ci[[self.names.index(k) for k in self.non_identified]] = np.nan
        return ci

    def _exog(self, newdata: Any, offset: Any) -> tuple[np.ndarray, np.ndarray | None]:
        """The selected design and the offset of new rows (the training rows if None)."""
        if newdata is None:
            if offset is not None:
                raise ValueError("offset is only used together with newdata.")
            m = self.parent.model
            return self.parent._selected_matrix(m.design), m.offset
        design, off = self.parent._new_design(newdata, offset)
        return self.parent._selected_matrix(design), off

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
            ``C()`` levels and offset terms.
        type : {"response", "link"}, default="response"
            Mean response or linear predictor.
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
        if newdata is not None:
            from ._formula import predict_complete

            return predict_complete(
                self.parent.model.spec, newdata, offset, missing,
                lambda rows, off: self._predict(rows, type, off, se_fit),
            )  # fmt: skip
        return self._predict(None, type, offset, se_fit)

    def _predict(self, newdata: Any, type: str, offset: Any, se_fit: bool) -> Any:  # noqa: A002
        X, off = self._exog(newdata, offset)
        if self.parent.model.family.survival:  # PHReg: η = X β (+ offset), risk e^η
            if se_fit:
                raise ValueError("se_fit is not available for a family='cox' refit.")
            eta = X @ np.asarray(self.sm_results.params)
            if off is not None:
                eta = eta + off
            return eta if type == "link" else np.exp(eta)
        which = "mean" if type == "response" else "linear"
        if not se_fit:
            return np.asarray(self.sm_results.predict(X, offset=off, which=which))
        pred = self.sm_results.get_prediction(X, offset=off, which=which)
        return pd.DataFrame({"fit": np.asarray(pred.predicted), "se_fit": np.asarray(pred.se)})

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
            New rows (the training rows when omitted).
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
        X, off = self._exog(newdata, offset)
        if not self.parent.model.family.quadratic:
            # statsmodels' GLM default for the mean (columns mean, mean_se, mean_ci_*)
            which = None if type == "response" else "linear"
            return self.sm_results.get_prediction(X, offset=off, which=which)
        # identity link: the mean is the linear predictor; add the observation variance
        from statsmodels.regression._prediction import PredictionResults

        lin = self.sm_results.get_prediction(X, offset=off, which="linear")
        n = X.shape[0]
        if sample_weight is None:
            w = np.ones(n)
        else:
            w = check_sample_weight(sample_weight, n, rows_of="the data")
            if np.any(w <= 0):  # the observation variance is scale / w
                row = int(np.flatnonzero(w <= 0)[0])
                raise ValueError(
                    f"sample_weight must be positive for a prediction interval; row {row} has 0."
                )
        return PredictionResults(
            np.asarray(lin.predicted), np.asarray(lin.var_pred),
            var_resid=self.sm_results.scale / w, df=self.sm_results.df_resid,
            dist="t" if self.sm_results.use_t else "norm",
        )  # fmt: skip

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
        if self.weights_kind is not None:
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
                "standard errors, tests and intervals are valid for the selected model."
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
        if hasattr(smry, "add_extra_txt"):
            smry.add_extra_txt(notes)
        else:  # PHReg's summary (statsmodels' summary2)
            for note in notes:
                smry.add_text(note)
        return smry

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("sm_results", "parent", "split"):
            raise AttributeError(name)
        return getattr(self.sm_results, name)

    def __repr__(self) -> str:
        how = "split sample" if self.split else "conditional on selection"
        return f"<RefitResults: {len(self.params)} parameters, {how}>"




def _shape_violations(parent: BinarsityResults, params: np.ndarray) -> pd.DataFrame:
    """Neighbouring segments of a monotone chain whose refitted effects go the wrong way.

    A level's refitted effect is its segment's coefficient (0 in the reference segment;
    a segment without training weight has none and is skipped); within a chain every
    effect is relative to the same reference, so their differences are the refit's
    jumps.
    """
    m = parent.model
    level_cols = parent._selection[0]
    rows = []
    for j, block in enumerate(m.spec.blocks):
        shape = getattr(block, "monotone", None)
        if not shape:
            continue
        sign = 1.0 if shape == "increasing" else -1.0
        cols = level_cols[j]
        for first, length, group in block.chains():
            segs: list[list] = []  # [column, effect, first level, last level]
            for k in range(first, first + length):
                c = int(cols[k])
                if segs and segs[-1][0] == c:
                    segs[-1][3] = k
                    continue
                effect = params[c] if c >= 0 else (0.0 if c == _REFERENCE else np.nan)
                segs.append([c, effect, k, k])
            segs = [s for s in segs if np.isfinite(s[1])]
            for a, b in zip(segs[:-1], segs[1:], strict=True):
                change = float(b[1] - a[1])
                if sign * change < 0:
                    rows.append((block.term, group, block.segment_label(a[2], a[3]),
                                 block.segment_label(b[2], b[3]), change))  # fmt: skip
    return pd.DataFrame(rows, columns=["term", "group", "from", "to", "change"])


def _violation_text(violations: pd.DataFrame) -> str:
    """One sentence naming the segments where a monotone term's refit goes the wrong way."""
    parts = [
        f"{term}{'' if group is None else f' (level {group})'}: {a} -> {b} ({change:+.4g})"
        for term, group, a, b, change in violations.itertuples(index=False, name=None)
    ]
    return "the refit goes against the declared direction of " + "; ".join(parts) + "."


def _non_identified(sm_results: Any) -> list[int]:
    """Columns of a refit's design that are not identified (in the null space of X).

    A GLM's design as statsmodels saw it (rows of positive weight); a Cox model's (no
    constant direction) centred within each stratum that has events, so that a column
    constant within every stratum — or collinear with others after centring — shows.
    """
    model = getattr(sm_results, "model", None)
    exog = getattr(model, "exog", None)
    if exog is None:
        return []
    X = np.asarray(exog, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] == 0:
        return []
    surv = getattr(model, "surv", None)
    if surv is not None:  # PHReg
        parts = [X[r] - X[r].mean(axis=0) for r in surv.stratum_rows if len(r)]
        X = np.vstack(parts) if parts else X[:0]
    if X.shape[0] == 0:
        return list(range(X.shape[1]))
    scale = np.sqrt((X**2).sum(axis=0))
    scale[scale == 0] = 1.0
    _, sv, vt = np.linalg.svd(X / scale, full_matrices=True)
    tol = max(X.shape) * np.finfo(np.float64).eps * (sv[0] if sv.size else 1.0) * 10
    rank = int(np.sum(sv > tol))
    null = vt[rank:]
    if not len(null):
        return []
    return [int(k) for k in np.flatnonzero(np.abs(null).max(axis=0) > 1e-8)]


def _fit_statsmodels(res: BinarsityResults, rows: np.ndarray, X: np.ndarray | None = None) -> Any:
    """statsmodels' GLM on the selected design of the given training rows."""
    import statsmodels.api as sm

    m = res.model
    if X is None:
        X = res._selected_matrix(m.design, strict=False)
    names = res._selection[1]
    if m.family.survival:
        return _fit_phreg(res, rows, X, names)
    kwargs: dict[str, Any] = {"family": m.family.to_statsmodels()}
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
    exog = pd.DataFrame(X[rows], columns=names)
    endog = pd.Series(m.y[rows], name=m.response.name)
    return sm.GLM(endog, exog, **kwargs).fit(use_t=m.family.estimate_dispersion, **fit_kw)


def _fit_phreg(res: BinarsityResults, rows: np.ndarray, X: np.ndarray, names: list) -> Any:
    """statsmodels' PHReg (the family's ties) on the selected design: the Cox refit.

    PHReg has no sample weights: a weighted Cox fit is refused by name.
    """
    from statsmodels.duration.hazard_regression import PHReg

    m = res.model
    if m.weighted:
        raise ValueError(
            "refit() of a weighted family='cox' fit is not available: statsmodels' PHReg "
            "takes no sample weights."
        )
    if m.survival is None:
        raise ValueError("refit() needs the survival times of the model (Surv(time, event)).")
    exog = pd.DataFrame(X[rows], columns=names)
    kwargs: dict[str, Any] = {"status": m.survival[rows, 1], "ties": m.family.ties}
    if m.offset is not None:
        kwargs["offset"] = m.offset[rows]
    if getattr(m, "strata", None) is not None:
        kwargs["strata"] = m.strata[rows]
    if not exog.shape[1]:
        raise ValueError("refit(): the selection has no column left (every term is flat).")
    return PHReg(m.survival[rows, 0], exog, **kwargs).fit()


def _split_refit(res: BinarsityResults, split: Any, random_state: Any) -> RefitResults:
    """Select on a random share ``split`` of the rows, estimate on the others."""
    from ._validation import check_random_state

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
    sol = m._prepare(select_rows).solve(res.lam)
    selected = type(res)(m, strip_eta(sol), "split selection")
    # its segments, populated according to the estimation rows' own weights
    counts = m.binned.subset(estimate_rows).histograms(m.unit_weight[estimate_rows])
    selected.__dict__["_selection"] = selected._selection_recipe(counts)
    X = selected._selected_matrix(m.design, strict=False)
    info = {"share": share, "random_state": random_state, "select_rows": select_rows,
            "estimate_rows": estimate_rows}  # fmt: skip
    return RefitResults(_fit_statsmodels(selected, estimate_rows, X), selected, split=info)
