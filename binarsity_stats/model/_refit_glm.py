"""The GLM refit from sufficient statistics: IRLS on the selected segments' codes.

The selected design of a binarsity fit is one-hot: every code block maps each of its
levels to one column (its segment's indicator) or to none (the reference segment, a
segment without training weight), plus the intercept and the dense columns. So

    X = [B, U] A,

B the one-hot of the blocks' *segment codes* (a level's position among its block's
selected columns, 0 for none), U = [1, Z] and A the 0/1 map of those columns to the k
parameters. Each IRLS step needs XᵀWX = Aᵀ [B, U]ᵀ W [B, U] A and XᵀWz, built by
``design._gram_stats.gram_statistics`` (the weighted co-occurrence tables of the codes, one
pass, O(n p²) look-ups in the ``_gram_fast`` kernels), and η = Xβ by table look-ups:
never an n × k matrix. The step is the minimum-norm solution under the rank cut of
``truncated_inverse`` (machine independent). Predictions with standard errors
(``x'Σx``) take the dense design a block of rows at a time.

:class:`GLMRefit` is the results object: statsmodels' ``GLMResults`` names and meanings
(params, bse, llf, deviance, scale, df_resid, residuals, summary, …) computed with the
statsmodels family's own formulas on n-vectors. ``refit()`` uses it when the selected
design has at least :data:`GRAM_MIN_CELLS` cells (rows × columns), statsmodels' GLM below.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from ..design._design import BinnedDesign
from ..design._gram_stats import gram_statistics
from ._rank import check_irls_outcome, _cut_inverse, _null_columns, rank_cut, truncated_inverse

__all__ = [
    "GRAM_MIN_CELLS",
    "SegmentDesign",
    "GLMRefit",
    "ReplayedRows",
    "IRLSFit",
    "fit_glm_gram",
    "irls",
    "prediction_blocks",
    "truncated_inverse",
    "rank_cut",
    "dense_rows",
]

#: ``refit()`` fits by sufficient statistics (this module) when rows × columns of the
#: selected design reach this many cells (a dense design of 32 MB); statsmodels' GLM
#: below. Tests lower it to run this path on small data.
GRAM_MIN_CELLS = 4_000_000

#: The refit's IRLS reuses the last Newton step's XᵀWX (chord steps: each only needs
#: Xᵀ W g'(μ)(y − μ), one O(n p) pass, against the O(n p²) pair tables of XᵀWX) while
#: each step moves η by at most this fraction of the previous one; after a slower one
#: the next step is a Newton step (a chord step that does not contract is dropped).
CHORD_RATE = 0.3

#: At most this many chord steps per allowed Newton step (``max_iter``).
CHORD_MAX = 5

#: Cells of one dense block of rows of the selected design (2 MiB of float64).
BLOCK_CELLS = 1 << 18



def block_rows(k: int) -> int:
    """Rows of one dense block of a design with ``k`` columns (at least 2k, ≈ 2 MiB)."""
    return max(2 * k, BLOCK_CELLS // max(k, 1))


class SegmentDesign:
    """The selected design of some rows as codes (never materialised whole).

    Parameters
    ----------
    codes : ndarray of shape (p, n)
        The rows' level codes, one row per code block.
    block_ptr : ndarray of shape (p + 1,)
        Offsets of the blocks' levels.
    dense : ndarray of shape (n, q) or None
        The dense columns (the last q parameters).
    level_cols : list of ndarray
        Per block, the parameter of every level (negative: none).
    k : int
        Number of parameters.
    fit_intercept : bool
        Whether parameter 0 is the intercept.
    """

    def __init__(
        self,
        codes: np.ndarray,
        block_ptr: np.ndarray,
        dense: np.ndarray | None,
        level_cols: list[np.ndarray],
        k: int,
        fit_intercept: bool,
    ) -> None:
        self.k = int(k)
        self.q = 0 if dense is None else int(dense.shape[1])
        self.dense = None if self.q == 0 else np.asarray(dense, dtype=np.float64)
        self.fit_intercept = bool(fit_intercept)
        self.level_cols = [np.asarray(c, dtype=np.intp) for c in level_cols]
        codes = np.asarray(codes)
        self.n_rows = int(codes.shape[1])
        # per block: its selected columns; a level's segment code is its column's position
        # among them + 1 (0: no column)
        self.block_cols = []
        seg_ptr = [0]
        tables = []
        for cols in self.level_cols:
            own = np.unique(cols[cols >= 0])
            self.block_cols.append(own)
            table = np.zeros(cols.size, dtype=np.intp)
            hit = cols >= 0
            table[hit] = np.searchsorted(own, cols[hit]) + 1
            tables.append(table)
            seg_ptr.append(seg_ptr[-1] + own.size + 1)
        self.seg_ptr = np.asarray(seg_ptr, dtype=np.intp)
        width = max((int(t) for t in np.diff(self.seg_ptr)), default=1)
        dtype = np.uint8 if width <= 256 else np.uint16
        # the segment codes: p × n of uint8 (the size of the design's own codes)
        self.seg_codes = np.empty((len(tables), self.n_rows), dtype=dtype)
        for j, table in enumerate(tables):
            np.take(table.astype(dtype), codes[j], out=self.seg_codes[j])
        # A: the columns of [B, U] (segments, then the ones column, then Z) → parameters
        d = int(self.seg_ptr[-1])
        A = np.zeros((d + 1 + self.q, self.k))
        for j, own in enumerate(self.block_cols):
            A[self.seg_ptr[j] + 1 + np.arange(own.size), own] = 1.0
        if self.fit_intercept:
            A[d, 0] = 1.0
        A[d + 1 + np.arange(self.q), self.k - self.q + np.arange(self.q)] = 1.0
        self._map = A
        # the segment codes as an engine design: its one-pass kernels give X^B θ and
        # (X^B)ᵀ v (the weights it is never asked for: a broadcast of ones, no memory)
        self._binned = BinnedDesign._trusted(
            self.seg_codes, self.seg_ptr, None, None, None, None,
            ones=np.broadcast_to(1.0, (self.n_rows,)),
        )  # fmt: skip

    def normal_equations(
        self, w: np.ndarray, z: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """XᵀWX and XᵀWz (zeros when ``z`` is None) from the codes' sufficient statistics.

        Parameters
        ----------
        w : ndarray of shape (n,)
            Non-negative row weights.
        z : ndarray of shape (n,), optional
            Working response.

        Returns
        -------
        gram : ndarray of shape (k, k)
        rhs : ndarray of shape (k,)
        """
        st = gram_statistics(self.seg_codes, self.seg_ptr, free=self.dense, weight=w, z=z)
        A = self._map
        d = int(self.seg_ptr[-1])
        AB, AU = A[:d], A[d:]
        cross = AB.T @ st.BU @ AU
        gram = AB.T @ st.BB @ AB + cross + cross.T + AU.T @ st.UU @ AU
        rhs = AB.T @ st.Bz + AU.T @ st.Uz
        return 0.5 * (gram + gram.T), rhs

    def gradient(self, v: np.ndarray) -> np.ndarray:
        """Xᵀv for an n-vector ``v`` (per block the sums of v over its segments; O(n p)).

        Parameters
        ----------
        v : ndarray of shape (n,)

        Returns
        -------
        ndarray of shape (k,)
        """
        v = np.ascontiguousarray(v, dtype=np.float64)
        d = int(self.seg_ptr[-1])
        out = self._map[:d].T @ self._binned.histograms(v)
        if self.fit_intercept:
            out[0] += float(np.sum(v))
        if self.q:
            out[self.k - self.q :] += v @ self.dense
        return out

    def linear(self, beta: np.ndarray) -> np.ndarray:
        """X β for every row (table look-ups over the codes; an n-vector)."""
        beta = np.asarray(beta, dtype=np.float64)
        eta = np.full(self.n_rows, float(beta[0]) if self.fit_intercept else 0.0)
        # every segment's parameter (0 for a block's segment without a column)
        self._binned.gather_add(self._map[: int(self.seg_ptr[-1])] @ beta, eta)
        if self.q:
            eta += self.dense @ beta[self.k - self.q :]
        return eta

    def rows(self, start: int, stop: int) -> np.ndarray:
        """The dense design of rows ``start:stop`` (one block)."""
        tables = [np.r_[-1, own] for own in self.block_cols]
        return dense_rows(tables, self.k, self.fit_intercept,
                          lambda j: self.seg_codes[j, start:stop],
                          None if self.dense is None else self.dense[start:stop],
                          stop - start)  # fmt: skip

    def materialise(self) -> np.ndarray:
        """The whole n × k design (only for callers that need it: ``anova``'s nesting)."""
        X = np.empty((self.n_rows, self.k))
        step = block_rows(self.k)
        for start in range(0, self.n_rows, step):
            stop = min(start + step, self.n_rows)
            X[start:stop] = self.rows(start, stop)
        return X


def dense_rows(
    level_cols: list[np.ndarray],
    k: int,
    fit_intercept: bool,
    codes_of: Callable[[int], np.ndarray],
    dense: np.ndarray | None,
    n: int,
) -> np.ndarray:
    """The dense selected design of ``n`` rows from their level codes (one block).

    Parameters
    ----------
    level_cols : list of ndarray
        Per code block, the parameter of every level (negative: none, so zeros — the
        reference, a segment without training weight).
    k : int
        Number of parameters.
    fit_intercept : bool
        Whether parameter 0 is the intercept.
    codes_of : callable
        ``codes_of(j)``: the rows' codes of block j.
    dense : ndarray of shape (n, q) or None
        The rows' dense columns (the last q parameters).
    n : int
        Number of rows.

    Returns
    -------
    ndarray of shape (n, k)
    """
    X = np.zeros((n, k))
    if fit_intercept:
        X[:, 0] = 1.0
    rows = np.arange(n)
    for j, cols in enumerate(level_cols):
        col = cols[codes_of(j)]
        hit = col >= 0
        X[rows[hit], col[hit]] = 1.0
    if dense is not None and dense.shape[1]:
        X[:, k - dense.shape[1] :] = dense
    return X


class ReplayedRows(NamedTuple):
    """New rows already replayed on the training recipe: their design and total offset.

    ``RefitResults.get_prediction`` and ``predict`` take it in place of a DataFrame
    (``_results._new_design(model, rows, offset)`` gives the pair), so that a caller
    that also needs the penalised prediction of the same rows — the CLI's
    ``predict --interval`` — replays them once.
    """

    design: Any
    offset: np.ndarray | None


def prediction_blocks(
    blocks: Iterator[np.ndarray], beta: np.ndarray, cov: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray | None]:
    """X β and the rows' x'Σx, a block of rows at a time (never all rows × k).

    Parameters
    ----------
    blocks : iterator of ndarray of shape (m, k)
        The design, block by block of rows.
    beta : ndarray of shape (k,)
    cov : ndarray of shape (k, k) or None
        Covariance of β (None: no variances).

    Returns
    -------
    linear : ndarray of shape (n,)
    var : ndarray of shape (n,) or None
    """
    lin, var = [], []
    for X in blocks:
        lin.append(X @ beta)
        if cov is not None:
            var.append(np.einsum("ij,ij->i", X @ cov, X))
    linear = np.concatenate(lin) if lin else np.zeros(0)
    if cov is None:
        return linear, None
    return linear, (np.concatenate(var) if var else np.zeros(0))


class _Model:
    """What callers read of statsmodels' ``GLM`` on a :class:`GLMRefit` (``.model``)."""

    def __init__(self, endog, design, family, offset, var_weights, freq_weights, names, yname,
                 fixed_scale, concentrated_llf):  # fmt: skip
        self.endog = endog
        self.fixed_scale = bool(fixed_scale)
        self.concentrated_llf = bool(concentrated_llf)
        self.design = design
        self.family = family
        self.offset = offset
        self.var_weights = var_weights
        self.freq_weights = freq_weights
        self.exog_names = list(names)
        self.endog_names = yname
        n = endog.shape[0]
        # constant n-vectors are read-only broadcasts of one number (no memory)
        if var_weights is None and freq_weights is None:
            self.iweights = np.broadcast_to(1.0, (n,))
        else:
            self.iweights = (
                1.0 if var_weights is None else np.asarray(var_weights, dtype=np.float64)
            ) * (1.0 if freq_weights is None else np.asarray(freq_weights, dtype=np.float64))
        self.n_trials = np.broadcast_to(1.0, (n,))
        self.wnobs = float(n if freq_weights is None else np.sum(freq_weights))
        self._offset_exposure = np.broadcast_to(0.0, (n,)) if offset is None else offset

    @property
    def exog(self) -> np.ndarray:
        """The n × k selected design, built on access (for ``anova``'s nesting test)."""
        return self.design.materialise()


class GLMRefit:
    """The unpenalised GLM on the selected segments, fitted from sufficient statistics.

    statsmodels' ``GLMResults`` names and meanings (scale, df, residuals, likelihood and
    its information criteria, Wald inference with t quantiles when ``use_t``), computed
    with the statsmodels family's own formulas; see :func:`fit_glm_gram`.

    Attributes
    ----------
    params, bse, tvalues, pvalues : pandas.Series
    scale, llf, deviance, null_deviance, pearson_chi2, aic, bic : float
    df_model, df_resid, nobs : float
    converged : bool
    non_identified_columns : list of int
        Columns in the null space of the design.
    """

    method = "IRLS"
    cov_type = "nonrobust"

    def __init__(self, model: _Model, beta: np.ndarray, cov_unscaled: np.ndarray,
                 scale: float, mu: np.ndarray, eta: np.ndarray, rank: int, n_iter: int,
                 converged: bool, use_t: bool, non_identified: list[int]) -> None:  # fmt: skip
        self.model = model
        self.family = model.family
        names = model.exog_names
        self.params = pd.Series(beta, index=names)
        self.normalized_cov_params = cov_unscaled
        self.scale = float(scale)
        self.mu = mu
        self._eta = eta
        self.nobs = int(model.endog.shape[0])
        self.df_model = float(rank - 1)
        self.df_resid = float(model.wnobs - rank)
        self.use_t = bool(use_t)
        self.converged = bool(converged)
        self.fit_history = {"iteration": int(n_iter)}
        self.non_identified_columns = list(non_identified)
        self._cache: dict[str, Any] = {}

    # -- inference ---------------------------------------------------------------------
    def cov_params(self) -> pd.DataFrame:
        """Covariance of the estimates: scale × the rank-cut inverse of XᵀWX."""
        idx = self.params.index
        return pd.DataFrame(self.normalized_cov_params * self.scale, index=idx, columns=idx)

    @property
    def bse(self) -> pd.Series:
        """Standard errors."""
        diag = np.clip(np.diag(self.normalized_cov_params) * self.scale, 0.0, None)
        return pd.Series(np.sqrt(diag), index=self.params.index)

    @property
    def tvalues(self) -> pd.Series:
        """Wald statistics params / bse."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return self.params / self.bse

    def _dist(self) -> tuple[Any, tuple]:
        from scipy import stats  # here: 0.5-1 s to import, not needed to predict

        return (stats.t, (self.df_resid,)) if self.use_t else (stats.norm, ())

    @property
    def pvalues(self) -> pd.Series:
        """Two-sided p-values (t with df_resid when ``use_t``, else normal)."""
        dist, args = self._dist()
        return pd.Series(2 * dist.sf(np.abs(self.tvalues), *args), index=self.params.index)

    def conf_int(self, alpha: float = 0.05) -> pd.DataFrame:
        """Wald intervals (columns 0 and 1, as statsmodels)."""
        dist, args = self._dist()
        q = dist.ppf(1 - alpha / 2, *args)
        return pd.DataFrame({0: self.params - q * self.bse, 1: self.params + q * self.bse})

    # -- fitted values and residuals (n-vectors) --------------------------------------
    @property
    def fittedvalues(self) -> np.ndarray:
        """The fitted mean response μ."""
        return self.mu

    @property
    def _endog(self) -> np.ndarray:
        return self.model.endog

    @property
    def resid_response(self) -> np.ndarray:
        """y − μ."""
        return self._endog - self.mu

    @property
    def resid_pearson(self) -> np.ndarray:
        """(y − μ) √(var weight) / √V(μ)."""
        vw = 1.0 if self.model.var_weights is None else self.model.var_weights
        return (self._endog - self.mu) * np.sqrt(vw) / np.sqrt(self.family.variance(self.mu))

    @property
    def resid_working(self) -> np.ndarray:
        """(y − μ) g'(μ)."""
        return self.resid_response * self.family.link.deriv(self.mu)

    @property
    def resid_deviance(self) -> np.ndarray:
        """The family's deviance residuals."""
        return self.family.resid_dev(self._endog, self.mu, var_weights=self._vw(), scale=1.0)

    @property
    def resid_anscombe(self) -> np.ndarray:
        """The family's Anscombe residuals, scaled."""
        return self.family.resid_anscombe(self._endog, self.mu, var_weights=self._vw(),
                                          scale=self.scale)  # fmt: skip

    def _vw(self) -> np.ndarray:
        return np.ones(self.nobs) if self.model.var_weights is None else self.model.var_weights

    def _fw(self) -> np.ndarray:
        return np.ones(self.nobs) if self.model.freq_weights is None else self.model.freq_weights

    @property
    def pearson_chi2(self) -> float:
        """Σ iweights (y − μ)² / V(μ)."""
        return float(np.sum((self._endog - self.mu) ** 2 / self.family.variance(self.mu)
                            * self.model.iweights))  # fmt: skip

    # -- likelihood --------------------------------------------------------------------
    @property
    def deviance(self) -> float:
        """The family's deviance at μ."""
        if "deviance" not in self._cache:
            self._cache["deviance"] = float(
                self.family.deviance(self._endog, self.mu, self._vw(), self._fw())
            )
        return self._cache["deviance"]

    def _llf_scale(self) -> float:
        if self.model.concentrated_llf:  # the gaussian with identity link: profiled
            return float(
                np.sum((self._endog - self.mu) ** 2 * self.model.iweights) / self.model.wnobs
            )
        return self.scale

    @property
    def llf(self) -> float:
        """Log-likelihood (concentrated for the gaussian with identity link, else at the
        estimated scale: statsmodels' rule)."""
        if "llf" not in self._cache:
            self._cache["llf"] = float(self.family.loglike(
                self._endog, self.mu, var_weights=self._vw(), freq_weights=self._fw(),
                scale=self._llf_scale()))  # fmt: skip
        return self._cache["llf"]

    @property
    def null(self) -> np.ndarray:
        """Fitted values of the model with a constant only (and the offset)."""
        if "null" not in self._cache:
            self._cache["null"] = _null_fit(self.model)
        return self._cache["null"]

    @property
    def null_deviance(self) -> float:
        """Deviance of the constant-only model."""
        return float(self.family.deviance(self._endog, self.null, self._vw(), self._fw()))

    @property
    def llnull(self) -> float:
        """Log-likelihood of the constant-only model (at the estimated scale)."""
        return float(self.family.loglike(self._endog, self.null, var_weights=self._vw(),
                                         freq_weights=self._fw(), scale=self.scale))  # fmt: skip

    def pseudo_rsquared(self, kind: str = "cs") -> float:
        """Cox–Snell (``"cs"``) or McFadden (``"mcf"``) pseudo R²."""
        kind = kind.lower()
        if kind.startswith("mcf"):
            return 1 - self.llf / self.llnull
        if kind.startswith("cox") or kind in ("cs", "lr"):
            return 1 - np.exp((self.llnull - self.llf) * (2 / self.nobs))
        raise ValueError("only McFadden and Cox-Snell are available")

    @property
    def aic(self) -> float:
        """−2 llf + 2 (df_model + 1)."""
        return -2 * self.llf + 2 * (self.df_model + 1)

    @property
    def bic_llf(self) -> float:
        """−2 llf + log(wnobs) (df_model + 1)."""
        return -2 * self.llf + np.log(self.model.wnobs) * (self.df_model + 1)

    bic = bic_llf

    @property
    def bic_deviance(self) -> float:
        """deviance − df_resid log(wnobs)."""
        wn = self.model.wnobs
        return self.deviance - (wn - self.df_model - 1) * np.log(wn)

    # -- prediction and report ---------------------------------------------------------
    def predict(self, exog=None, offset=None, which: str = "mean") -> np.ndarray:
        """Mean (or linear predictor, ``which="linear"``) of the training rows or ``exog``."""
        if exog is None:
            eta = self._eta
        else:
            eta = np.asarray(exog, dtype=np.float64) @ self.params.to_numpy()
            if offset is not None:
                eta = eta + offset
        return eta if which == "linear" else self.family.link.inverse(eta)

    def summary(self, yname=None, xname=None, title=None, alpha: float = 0.05) -> Any:
        """statsmodels' GLM summary layout (its ``Summary`` tables)."""
        from statsmodels.iolib.summary import Summary

        try:
            prsq = self.pseudo_rsquared(kind="cs")
        except ValueError:  # pragma: no cover - statsmodels' guard
            prsq = np.nan
        left = [("Dep. Variable:", None), ("Model:", ["GLM"]),
                ("Model Family:", [self.family.__class__.__name__]),
                ("Link Function:", [self.family.link.__class__.__name__]),
                ("Method:", [self.method]), ("Date:", None), ("Time:", None),
                ("No. Iterations:", [f"{self.fit_history['iteration']:d}"]),
                ("Covariance Type:", [self.cov_type])]  # fmt: skip
        right = [("No. Observations:", None), ("Df Residuals:", None), ("Df Model:", None),
                 ("Scale:", [f"{self.scale:#8.5g}"]), ("Log-Likelihood:", None),
                 ("Deviance:", [f"{self.deviance:#8.5g}"]),
                 ("Pearson chi2:", [f"{self.pearson_chi2:#6.3g}"]),
                 ("Pseudo R-squ. (CS):", [f"{prsq:#6.4g}"])]  # fmt: skip
        smry = Summary()
        smry.add_table_2cols(
            self,
            gleft=left,
            gright=right,
            yname=yname,
            xname=xname,
            title=title or "Generalized Linear Model Regression Results",
        )
        smry.add_table_params(self, yname=yname, xname=xname, alpha=alpha, use_t=self.use_t)
        return smry

    def __repr__(self) -> str:
        return f"<GLMRefit: {len(self.params)} parameters, sufficient statistics>"


def _null_fit(model: _Model, max_iter: int = 100) -> np.ndarray:
    """μ of the constant-only GLM (with the offset): IRLS on one parameter."""
    y, fam, iw = model.endog, model.family, model.iweights
    off = model._offset_exposure
    if not np.any(off):
        return np.full(y.shape[0], float(np.sum(iw * y) / np.sum(iw)))
    b = float(np.atleast_1d(fam.link(np.mean(y)))[0])
    for _ in range(max_iter):
        eta = b + off
        mu = fam.fitted(eta)
        w = iw * fam.weights(mu)
        z = eta - off + fam.link.deriv(mu) * (y - mu)
        new = float(np.sum(w * z) / np.sum(w))
        if abs(new - b) <= 1e-13 * (1.0 + abs(b)):
            b = new
            break
        b = new
    return fam.fitted(b + off)


class IRLSFit(NamedTuple):
    """What :func:`irls` returns (``beta`` None when the first step is not finite)."""

    beta: np.ndarray | None
    mu: np.ndarray
    eta: np.ndarray
    cov_unscaled: np.ndarray | None
    rank: int
    null: np.ndarray | None
    n_iter: int
    converged: bool


def irls(
    design: Any,
    y: np.ndarray,
    family: Any,
    iw: np.ndarray,
    off: np.ndarray,
    max_iter: int = 100,
    start_eta: np.ndarray | None = None,
) -> IRLSFit:
    """The package's one IRLS loop of an unpenalised GLM (every refit's).

    statsmodels' weights ``iw · family.weights(μ)`` and working response, from
    ``start_eta`` or statsmodels' start (``family.starting_mu``). A Newton step is the
    minimum-norm solution of XᵀWX β = XᵀWz under the rank cut of
    :func:`truncated_inverse`; chord steps between them reuse the last XᵀWX (see
    :func:`fit_glm_gram`). Stops when a Newton step moves no row's linear predictor by
    more than 1e-10 (1 + max|η|).

    Parameters
    ----------
    design : object
        The design X: ``normal_equations(w, z)`` → (XᵀWX, XᵀWz), ``gradient(v)`` → Xᵀv
        and ``linear(beta)`` → Xβ (a :class:`SegmentDesign`, or the dense rows of
        ``_refit_checks.DenseRows``).
    y : ndarray of shape (n,)
    family : statsmodels.genmod.families.Family
    iw : ndarray of shape (n,)
        Prior weights (statsmodels' ``iweights · n_trials``).
    off : ndarray of shape (n,)
        Offset (and log exposure).
    max_iter : int, default=100
        Newton steps (each with at most :data:`CHORD_MAX` chord steps).
    start_eta : ndarray of shape (n,), optional
        Linear predictor (offset included) to start from.

    Returns
    -------
    IRLSFit
        β, μ and η at the last step, the rank-cut inverse of the last Newton step's
        XᵀWX with its rank and null space, the Newton steps taken, and whether the
        stopping rule was met.
    """
    n = y.shape[0]
    converged = False
    it = 0
    beta = gram = None
    with np.errstate(all="ignore"):
        if start_eta is not None:
            eta = np.asarray(start_eta, dtype=np.float64)
            mu = family.fitted(eta)
        if start_eta is None or not np.all(np.isfinite(mu)):
            mu = family.starting_mu(y)
            eta = family.predict(mu)
        hinv = None  # the rank-cut inverse of the last Newton step's XᵀWX
        chord = False  # the next step reuses it (a chord step: only Xᵀ W g'(μ)(y − μ))
        prev = np.inf
        n_chord = 0
        while it < max_iter:
            w = iw * family.weights(mu)
            if chord:
                # Newton's step with the last XᵀWX: δ = (XᵀWX)⁺ Xᵀ W (z − η + off)
                grad = design.gradient(w * family.link.deriv(mu) * (y - mu))
                if not np.all(np.isfinite(grad)):
                    chord = False
                    continue
                new_beta = beta + hinv @ grad
                n_chord += 1
            else:
                it += 1
                z = eta - off + family.link.deriv(mu) * (y - mu)
                step_gram, rhs = design.normal_equations(w, z)
                if not (np.all(np.isfinite(step_gram)) and np.all(np.isfinite(rhs))):
                    break
                gram = step_gram
                hinv, rank, null = _cut_inverse(gram, n)
                new_beta = hinv @ rhs
            new = design.linear(new_beta) + off
            step = float(np.max(np.abs(new - eta), initial=0.0))
            if chord and not (np.isfinite(step) and step < prev):
                chord = False  # diverging: back to the last point, a Newton step
                continue
            beta, eta = new_beta, new
            mu = family.fitted(eta)
            tol = 1e-10 * (1.0 + float(np.max(np.abs(eta), initial=0.0)))
            if not chord and step <= tol:
                converged = True
                break
            # chord steps while they contract fast; a Newton step when they are slow and
            # to confirm their convergence (its XᵀWX, at the converged η, gives the
            # covariance)
            slow = chord and step > CHORD_RATE * prev
            chord = step > tol and not slow and n_chord < CHORD_MAX * max_iter
            prev = step
    if beta is None:
        return IRLSFit(None, mu, eta, None, 0, None, it, False)
    return IRLSFit(beta, mu, eta, hinv, rank, null, it, converged)


def fit_glm_gram(
    design: SegmentDesign,
    y: np.ndarray,
    family: Any,
    names: list[str],
    yname: str,
    offset: np.ndarray | None = None,
    var_weights: np.ndarray | None = None,
    freq_weights: np.ndarray | None = None,
    use_t: bool = False,
    fixed_scale: bool = False,
    concentrated_llf: bool = False,
    max_iter: int = 100,
    start_eta: np.ndarray | None = None,
) -> GLMRefit:
    """IRLS of a GLM on a :class:`SegmentDesign` from sufficient statistics.

    statsmodels' weights and working response, from ``start_eta`` (``refit()`` passes
    the penalised fit's linear predictor: fewer steps) or statsmodels' start
    (``family.starting_mu``). A Newton step is the minimum-norm solution of
    XᵀWX β = XᵀWz under the rank cut (XᵀWX from the codes' co-occurrence tables, one
    pass over the rows, O(n p²)). Between Newton steps, chord steps reuse the last
    XᵀWX: β += (XᵀWX)⁺ Xᵀ W g'(μ)(y − μ), only a gradient (O(n p)), while each moves η
    by at most :data:`CHORD_RATE` of the previous step (they converge to the same
    stationary point, linearly). Stops when a Newton step moves no row's linear
    predictor by more than 1e-10 (1 + max|η|) — chord steps that get there are
    confirmed by one — so the estimate does not depend on the start or the chord steps.
    The covariance is the rank-cut inverse of that last Newton step's XᵀWX (at the
    converged η: statsmodels' convention) times statsmodels' scale (1 for binomial and
    poisson, else Pearson's χ² / df_resid); the rank and the non-identified columns
    come from the same cut of its unit-diagonal scaling.

    Parameters
    ----------
    design : SegmentDesign
    y : ndarray of shape (n,)
    family : statsmodels.genmod.families.Family
    names : list of str
        Parameter names.
    yname : str
        Response name (the summary's).
    offset, var_weights, freq_weights : ndarray of shape (n,), optional
    use_t : bool, default=False
        t quantiles with df_resid for the Wald inference.
    fixed_scale : bool, default=False
        The dispersion is 1 (binomial, poisson), else Pearson's estimate.
    concentrated_llf : bool, default=False
        The log-likelihood is the profiled one (gaussian with identity link), as
        statsmodels reports it.
    max_iter : int, default=100
        Newton steps (each with at most :data:`CHORD_MAX` chord steps).
    start_eta : ndarray of shape (n,), optional
        Linear predictor (offset included) to start from.

    Returns
    -------
    GLMRefit
    """
    y = np.asarray(y, dtype=np.float64)
    model = _Model(y, design, family, offset, var_weights, freq_weights, names, yname,
                   fixed_scale, concentrated_llf)  # fmt: skip
    fit = irls(design, y, family, model.iweights, model._offset_exposure, max_iter, start_eta)
    beta, mu, eta, hinv, rank, null, it, converged = fit
    check_irls_outcome(beta, converged, max_iter)
    # the covariance from the last step's XᵀWX (statsmodels' convention), its rank
    # (statsmodels' df_model + 1) and null space by the same rank cut
    cov = hinv
    null_cols = _null_columns(null)
    scale = _scale(model, mu, rank)
    return GLMRefit(model, beta, cov, scale, mu, eta, rank, it, converged, use_t, null_cols)


def _scale(model: _Model, mu: np.ndarray, rank: int) -> float:
    """statsmodels' default scale: 1 for a family with a fixed dispersion (binomial,
    poisson), else Pearson's X² / df_resid."""
    if model.fixed_scale:
        return 1.0
    resid = (model.endog - mu) ** 2 * model.iweights
    return float(np.sum(resid / model.family.variance(mu)) / (model.wnobs - rank))
