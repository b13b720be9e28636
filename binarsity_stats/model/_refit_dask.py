"""The refit of a model whose rows stay on the Dask workers: distributed IRLS (issue 26).

``BinarsityResults.refit()`` of a model built with ``glm(formula, dask_frame,
collect=False)``: the unpenalised GLM on the selected segments — the segment design of
the in-memory refit (``_refit_glm.SegmentDesign`` built per partition from its codes and
the results' ``_selection``) — by IRLS where every Newton step is one pass over the
partitions. Each partition builds XᵀWX and XᵀWz of its rows (``SegmentDesign.
normal_equations``: the codes' Gram statistics, ``design/_gram_stats``), the deviance,
Pearson's χ² and the largest move of η; they are summed in a tree
(``distributed/_dask_stats.reduce_partitions``) and the client holds O(k²) numbers.

The same estimator as in memory (``_refit_glm.irls``): statsmodels' weights and working
response from the penalised fit's η, a Newton step the minimum-norm solution under the
rank cut of ``_rank`` (the same non-identified columns), stopping when a step moves no
row's η by more than 1e-10 (1 + max|η|); the covariance from the last step's XᵀWX times
statsmodels' scale. One more pass gives the log-likelihood at the scale and the null
model's deviance and log-likelihood. No chord steps: on a cluster a pass costs a pass.

:class:`WorkerGLMRefit` is a :class:`~._refit_glm.GLMRefit` whose statistics come from
the reductions (the rows' residuals are refused by name); :func:`predict_lazy` maps a
refit's ``predict``/``get_prediction`` over the partitions of a Dask DataFrame.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ._rank import _cut_inverse, _null_columns, check_irls_outcome
from ._refit_glm import GLMRefit, SegmentDesign

__all__ = ["WorkerGLMRefit", "LazyPrediction", "fit_glm_workers", "predict_lazy", "MAX_ITER"]

#: Newton steps (passes) of the distributed refit before it gives up with a warning.
MAX_ITER = 100


@dataclass
class _Setup:
    """What every task of the refit needs (O(d + k) numbers; shipped with each pass)."""

    block_ptr: np.ndarray
    level_cols: list
    k: int
    fit_intercept: bool
    q: int
    family: Any  # the statsmodels family
    weights_kind: str | None
    start: tuple  # the penalised fit's engine θ, β and β0: the first η


class _PartRows:
    """One partition's rows as the refit reads them (rows of zero analytic weight left
    out, as ``_refit._fit_statsmodels_at`` leaves them out)."""

    def __init__(self, part: dict, setup: _Setup) -> None:
        from ..distributed._dask_stats import partition_eta

        codes = np.asarray(part["codes"])
        n = codes.shape[1]
        y = np.asarray(part["y"], dtype=np.float64).reshape(-1)
        off = part.get("offset")
        off = np.zeros(n) if off is None else np.asarray(off, dtype=np.float64).reshape(-1)
        dense = part.get("dense") if setup.q else None
        if dense is not None:
            dense = np.asarray(dense, dtype=np.float64).reshape(n, setup.q)
        sw = part.get("weight")
        self.var_w = self.freq_w = None
        keep = None
        if setup.weights_kind is not None and sw is not None:
            sw = np.asarray(sw, dtype=np.float64).reshape(-1)
            if setup.weights_kind == "analytic":
                keep = sw > 0
                self.var_w = sw[keep]
            else:
                self.freq_w = sw
        self._part = part
        self._setup = setup
        self._keep = keep
        if keep is not None and not np.all(keep):
            codes, y, off = codes[:, keep], y[keep], off[keep]
            dense = None if dense is None else dense[keep]
        self.y, self.off, self.n = y, off, int(y.shape[0])
        vw = np.ones(self.n) if self.var_w is None else self.var_w
        self.iw = vw if self.freq_w is None else vw * self.freq_w
        self.design = SegmentDesign(np.ascontiguousarray(codes), setup.block_ptr, dense,
                                    setup.level_cols, setup.k, setup.fit_intercept)  # fmt: skip
        self.partition_eta = partition_eta

    def eta(self, beta: np.ndarray | None) -> np.ndarray:
        """Xβ + offset; with β None the penalised fit's η (the IRLS start)."""
        if beta is None:
            s = self._setup
            eta = self.partition_eta(self._part, s.block_ptr, *s.start)
            return eta if self._keep is None else eta[self._keep]
        return self.design.linear(beta) + self.off

    def ones(self) -> np.ndarray:
        return np.ones(self.n)


def _irls_pass(part: dict, setup: _Setup, prev: np.ndarray | None,
               beta: np.ndarray | None) -> dict:  # fmt: skip
    """One Newton step's sums on one partition, at η = Xβ + offset (β None: at the
    penalised start): XᵀWX, XᵀWz, the deviance and Pearson's χ² at μ, the largest
    |η − η_prev| (prev None: from the penalised start) and |η|."""
    rows = _PartRows(part, setup)
    fam = setup.family
    with np.errstate(all="ignore"):
        eta = rows.eta(beta)
        step = 0.0
        if beta is not None and rows.n:
            step = float(np.max(np.abs(eta - rows.eta(prev))))
        mu = fam.fitted(eta)
        w = rows.iw * fam.weights(mu)
        z = eta - rows.off + fam.link.deriv(mu) * (rows.y - mu)
        finite = bool(np.all(np.isfinite(w)) and np.all(np.isfinite(z)))
        if finite:
            gram, rhs = rows.design.normal_equations(w, z)
        else:
            gram, rhs = np.full((setup.k, setup.k), np.nan), np.full(setup.k, np.nan)
        r = rows.y - mu
        vw = 1.0 if rows.var_w is None else rows.var_w
        fw = 1.0 if rows.freq_w is None else rows.freq_w
        dev = float(fam.deviance(rows.y, mu, vw, fw)) if rows.n else 0.0
        pearson = float(np.sum(r**2 / fam.variance(mu) * rows.iw))
    return {
        "gram": gram, "rhs": rhs, "max_step": step,
        "max_eta": float(np.max(np.abs(eta))) if rows.n else 0.0,
        "deviance": dev, "pearson": pearson, "r2": float(np.sum(r**2 * rows.iw)),
        "rows": rows.n,
        "wnobs": float(rows.n if rows.freq_w is None else np.sum(rows.freq_w)),
    }  # fmt: skip


def _likelihood_pass(part: dict, setup: _Setup, beta: np.ndarray, b0: float,
                     llf_scale: float, scale: float) -> dict:  # fmt: skip
    """The log-likelihood at β (at ``llf_scale``), the null model's deviance and
    log-likelihood (μ = g⁻¹(b0 + offset), at ``scale``) on one partition: statsmodels'
    ``family.loglike`` and ``deviance``, sums over rows."""
    rows = _PartRows(part, setup)
    fam = setup.family
    if not rows.n:
        return {"llf": 0.0, "llnull": 0.0, "null_deviance": 0.0}
    vw = rows.ones() if rows.var_w is None else rows.var_w
    fw = rows.ones() if rows.freq_w is None else rows.freq_w
    with np.errstate(all="ignore"):
        mu = fam.fitted(rows.eta(beta))
        null = fam.fitted(b0 + rows.off)
        return {
            "llf": float(fam.loglike(rows.y, mu, var_weights=vw, freq_weights=fw,
                                     scale=llf_scale)),
            "llnull": float(fam.loglike(rows.y, null, var_weights=vw, freq_weights=fw,
                                        scale=scale)),
            "null_deviance": float(fam.deviance(rows.y, null, vw, fw)),
        }  # fmt: skip


class _WorkerModel:
    """What callers read of statsmodels' ``GLM`` on a :class:`WorkerGLMRefit`."""

    def __init__(self, family: Any, names: list[str], yname: str, wnobs: float,
                 weights_kind: str | None, errors: dict) -> None:  # fmt: skip
        self.family = family
        self.exog_names = list(names)
        self.endog_names = yname
        self.wnobs = float(wnobs)
        self.weights_kind = weights_kind
        self.errors = errors

    @property
    def endog(self) -> Any:
        """Refused: the response is on the workers."""
        _raise(self.errors["rows"])

    exog = endog


#: what a refit on the workers refuses, by key (the model words the errors)
_REFUSED = {
    "rows": ("the refit's training rows (sm_results.model.endog)", ""),
    "fitted": ("the refit's fitted values and residuals on the training rows",
               "get_prediction(dask_frame) and predict(dask_frame) give lazy Dask "
               "objects."),
    "null": ("the null model's fitted values on the training rows", ""),
}  # fmt: skip


def _refusals(model: Any) -> dict:
    """The errors of :data:`_REFUSED`, worded by the model (``rows_refusal``)."""
    return {key: model.rows_refusal(what, instead) for key, (what, instead) in _REFUSED.items()}


def _raise(exc: BaseException) -> Any:
    raise type(exc)(*exc.args)


class WorkerGLMRefit(GLMRefit):
    """:class:`~._refit_glm.GLMRefit` of a distributed refit: the same names and
    meanings, its statistics reduced on the workers (:func:`fit_glm_workers`).

    The rows' fitted values and residuals stay on the workers: asking for them raises
    ``RowsOnWorkersError``.
    """

    def __init__(self, model: _WorkerModel, beta: np.ndarray, cov_unscaled: np.ndarray,
                 scale: float, sums: dict, rank: int, n_iter: int, converged: bool,
                 use_t: bool, non_identified: list[int], nobs: int) -> None:  # fmt: skip
        self.model = model
        self.family = model.family
        self.params = pd.Series(beta, index=model.exog_names)
        self.normalized_cov_params = cov_unscaled
        self.scale = float(scale)
        self.nobs = int(nobs)
        self.df_model = float(rank - 1)
        self.df_resid = float(model.wnobs - rank)
        self.use_t = bool(use_t)
        self.converged = bool(converged)
        self.fit_history = {"iteration": int(n_iter)}
        self.non_identified_columns = list(non_identified)
        self._sums = dict(sums)
        self._cache: dict[str, Any] = {}

    def _refused(self, key: str) -> Any:
        return _raise(self.model.errors[key])

    @property
    def mu(self) -> Any:
        """Refused: the training rows' fitted values stay on the workers."""
        return self._refused("fitted")

    @property
    def _endog(self) -> Any:
        return self._refused("fitted")

    fittedvalues = mu

    @property
    def deviance(self) -> float:
        """The family's deviance at μ (reduced)."""
        return float(self._sums["deviance"])

    @property
    def pearson_chi2(self) -> float:
        """Σ iweights (y − μ)² / V(μ) (reduced)."""
        return float(self._sums["pearson"])

    @property
    def llf(self) -> float:
        """Log-likelihood (statsmodels' rule for its scale; reduced)."""
        return float(self._sums["llf"])

    @property
    def null_deviance(self) -> float:
        """Deviance of the constant-only model (with the offset; reduced)."""
        return float(self._sums["null_deviance"])

    @property
    def llnull(self) -> float:
        """Log-likelihood of the constant-only model at the estimated scale (reduced)."""
        return float(self._sums["llnull"])

    @property
    def null(self) -> Any:
        """Refused: the null model's fitted values stay on the workers."""
        return self._refused("null")

    def predict(self, exog=None, offset=None, which: str = "mean") -> np.ndarray:
        """Mean (or linear predictor, ``which="linear"``) of ``exog``; the training
        rows' are refused (they stay on the workers)."""
        if exog is None:
            return self._refused("fitted")
        return super().predict(exog, offset, which)

    def __repr__(self) -> str:
        return f"<WorkerGLMRefit: {len(self.params)} parameters, reduced on Dask workers>"


def fit_glm_workers(res: Any, max_iter: int = MAX_ITER) -> WorkerGLMRefit:
    """The unpenalised GLM on the selected segments of a model whose rows stay on the
    workers: distributed IRLS (module docstring), a pass per Newton step.

    Parameters
    ----------
    res : BinarsityResults
        The penalised fit (its ``_selection``, ``solution`` and model on the workers).
    max_iter : int, default=MAX_ITER
        Newton steps before giving up (a warning, as in memory).

    Returns
    -------
    WorkerGLMRefit
    """
    from ..distributed._dask_stats import reduce_partitions

    m = res.model
    level_cols, names = res._selection
    design = m.worker_design("refit()")
    client = m.__dict__.get("dask_client")
    fam = m.family.to_statsmodels()
    sol = res.solution
    setup = _Setup(
        block_ptr=np.asarray(m.block_ptr, dtype=np.int64), level_cols=list(level_cols),
        k=len(names), fit_intercept=bool(m.fit_intercept), q=len(m.spec.dense_columns),
        family=fam, weights_kind=m.weights_kind if m.weighted else None,
        start=(np.asarray(sol.coef, dtype=np.float64),
               np.asarray(res.dense_coef, dtype=np.float64).reshape(-1),
               float(sol.intercept)),
    )  # fmt: skip

    def run(prev: np.ndarray | None, beta: np.ndarray | None) -> dict:
        return reduce_partitions(_irls_pass, design, setup, prev, beta, client=client,
                                 what="a Newton step of the refit")  # fmt: skip

    cur = run(None, None)  # XᵀWX and XᵀWz at the penalised fit's η
    n = int(cur["rows"])
    it, converged = 0, False
    prev = beta = hinv = None
    rank, null = 0, np.zeros((0, setup.k))
    while it < max_iter:
        if not (np.all(np.isfinite(cur["gram"])) and np.all(np.isfinite(cur["rhs"]))):
            break
        it += 1
        hinv, rank, null = _cut_inverse(0.5 * (cur["gram"] + cur["gram"].T), n)
        prev, beta = beta, hinv @ cur["rhs"]
        cur = run(prev, beta)
        if cur["max_step"] <= 1e-10 * (1.0 + cur["max_eta"]):
            converged = True
            break
    check_irls_outcome(beta, converged, max_iter)
    wnobs = float(cur["wnobs"])
    fixed = not m.family.estimate_dispersion
    scale = 1.0 if fixed else float(cur["pearson"]) / (wnobs - rank)
    llf_scale = float(cur["r2"]) / wnobs if m.family.quadratic else scale
    b0 = m.worker_null_fit(True)[0]
    lik = reduce_partitions(_likelihood_pass, design, setup, beta, float(b0), llf_scale,
                            scale, client=client,
                            what="the refit's log-likelihood and null deviance")  # fmt: skip
    sums = {"deviance": cur["deviance"], "pearson": cur["pearson"], **lik}
    model = _WorkerModel(fam, names, m.response.name, wnobs, setup.weights_kind,
                         _refusals(m))  # fmt: skip
    return WorkerGLMRefit(model, beta, hinv, scale, sums, rank, it, converged,
                          m.family.estimate_dispersion, _null_columns(null), n)  # fmt: skip


class _PartitionRefit:
    """What a worker needs to predict one partition with a refit: a copy of the refit
    whose parent model holds no rows and no client (a few kilobytes in the graph)."""

    def __init__(self, refit: Any, light_model: Any, method: str, kwargs: dict) -> None:
        parent = copy.copy(refit.parent)
        parent.__dict__ = {k: v for k, v in parent.__dict__.items() if k != "bootstrap_"}
        parent.model = light_model
        # the selection was computed on the client (it reads the model's level counts)
        parent.__dict__["_selection"] = refit.parent._selection
        self.refit = copy.copy(refit)
        self.refit.parent = parent
        self.method = method
        self.kwargs = {k: v for k, v in kwargs.items() if k != "alpha"}
        self.alpha = kwargs.get("alpha", 0.05)

    def __call__(self, frame: pd.DataFrame) -> Any:
        if self.method == "predict":
            out = self.refit.predict(frame, **self.kwargs)
            if isinstance(out, pd.DataFrame):
                return out.set_axis(frame.index)
            return pd.Series(out, index=frame.index, name="fit")
        pred = self.refit.get_prediction(frame, **self.kwargs)
        return pred.summary_frame(alpha=self.alpha).set_axis(frame.index)


class LazyPrediction:
    """``RefitResults.get_prediction`` of a Dask DataFrame: its ``summary_frame`` is a
    lazy Dask DataFrame (one task per partition).

    Parameters
    ----------
    refit : RefitResults
        The refit.
    data : dask.dataframe.DataFrame
        New rows.
    kwargs : dict
        ``get_prediction``'s other arguments (``type``).
    """

    def __init__(self, refit: Any, data: Any, kwargs: dict) -> None:
        self.refit, self.data, self.kwargs = refit, data, dict(kwargs)

    def summary_frame(self, alpha: float = 0.05) -> Any:
        """The columns of statsmodels' ``summary_frame(alpha)`` for every row, lazily.

        Parameters
        ----------
        alpha : float, default=0.05
            1 − the intervals' coverage.

        Returns
        -------
        dask.dataframe.DataFrame
        """
        meta = self.refit._prediction_results(np.zeros(1), np.ones(1),
                                              self.kwargs.get("type", "response"),
                                              None).summary_frame(alpha=alpha).iloc[:0]  # fmt: skip
        return predict_lazy(self.refit, self.data, "get_prediction",
                            {**self.kwargs, "alpha": alpha}, meta)  # fmt: skip


def predict_lazy(refit: Any, data: Any, method: str, kwargs: dict, meta: Any) -> Any:
    """A refit's ``predict`` or ``get_prediction(...).summary_frame(alpha)`` on a Dask
    DataFrame: one task per partition (a lazy Dask Series or DataFrame).

    Parameters
    ----------
    refit : RefitResults
        The refit (its parameters and covariance travel with the tasks).
    data : dask.dataframe.DataFrame
        New rows.
    method : {"predict", "get_prediction"}
        What to compute per partition.
    kwargs : dict
        Its arguments (``alpha``: the summary frame's).
    meta : pandas object
        The empty result (the columns and dtypes).

    Returns
    -------
    dask.dataframe.Series or DataFrame
    """
    import dask.dataframe as dd

    from ..distributed._dask_model import PartitionPredictor

    if not isinstance(data, dd.DataFrame):  # a Dask Series has .columns ([None]) too
        raise TypeError(f"newdata must be a Dask DataFrame; got {type(data).__name__}.")
    if kwargs.get("offset") is not None:
        raise TypeError(
            "offset: on a Dask DataFrame the offset is read from the data; fit with "
            "offset='column' (or an offset() term) instead of passing values."
        )
    kwargs = {k: v for k, v in kwargs.items() if k != "offset"}
    light = PartitionPredictor(refit.parent, "link", None).model
    fn = _PartitionRefit(refit, light, method, kwargs)
    return data.map_partitions(fn, meta=meta)
