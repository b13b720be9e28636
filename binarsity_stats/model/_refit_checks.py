"""What a refit is checked for, and the blocked normal equations of its GLM fits.

``RefitResults`` (``_refit``) reads here: where the refit of a monotone term goes against
its direction (``_shape_violations``), which columns of the selected design are not
identified (``_non_identified``: a tall-skinny QR by blocks of rows, then the SVD of the
p × p factor) and the rank-deficient GLM refit made the same on every machine
(``_identified_refit``). ``_weighted_gram`` and ``_row_blocks`` go over the rows a block
at a time (never an n × k temporary); ``_gram_irls`` is the start of statsmodels' IRLS
from them. The coding of the selected design's levels (``_REFERENCE``, ``_NO_ESTIMATE``)
is defined here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy import linalg as scipy_linalg

from ..penalty._blocks import get_kind
from ._refit_glm import irls
from ._refit_glm import truncated_inverse as _truncated_inverse

if TYPE_CHECKING:  # pragma: no cover
    from ._results import BinarsityResults

_REFERENCE = -1  # a level in the reference segment of the selected design
_NO_ESTIMATE = -2  # a level whose segment had no training weight


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
        # the kind's sign from the one table of kinds (a new signed kind needs no edit here)
        sign = float(get_kind(shape).direction)
        if sign == 0.0:
            continue
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

    X (n × p, columns scaled to unit norm) and its triangular factor R of X = QR have
    the same singular values and right singular vectors, so the SVD of the p × p factor
    R decides: never an n × n (nor n × p beyond one block of rows) object. R is built
    block by block of rows (R of [R_prev; X_block], a tall-skinny QR), so the extra
    memory is that of one block, whatever n.
    """
    model = getattr(sm_results, "model", None)
    exog = getattr(sm_results, "identify_exog", getattr(model, "exog", None))
    if exog is None:
        return []
    X = np.asarray(exog)
    if X.ndim != 2 or X.shape[1] == 0:
        return []
    surv = getattr(model, "surv", None)
    strata = getattr(sm_results, "identify_strata", None)  # the weighted Cox refit
    if strata is None and surv is not None:  # PHReg
        strata = surv.stratum_rows
    if strata is not None:  # Cox: no constant direction, centred within each stratum
        parts = [np.asarray(r) for r in strata if len(r)]
        n_rows = int(sum(r.size for r in parts))
    else:
        parts = None
        n_rows = X.shape[0]
    p = X.shape[1]
    if n_rows == 0:
        return list(range(p))
    sq = np.zeros(p)
    for block in _row_blocks(X, parts):
        sq += np.einsum("ij,ij->j", block, block)
    scale = np.sqrt(sq)
    scale[scale == 0] = 1.0
    R = np.zeros((0, p))
    for block in _row_blocks(X, parts):
        R = scipy_linalg.qr(
            np.vstack([R, block / scale]), mode="r", overwrite_a=True, check_finite=False
        )[0][: min(R.shape[0] + block.shape[0], p)]
    _, sv, vt = np.linalg.svd(R, full_matrices=True)  # p × p at most
    tol = max(n_rows, p) * np.finfo(np.float64).eps * (sv[0] if sv.size else 1.0) * 10
    rank = int(np.sum(sv > tol))
    null = vt[rank:]
    if not len(null):
        return []
    return [int(k) for k in np.flatnonzero(np.abs(null).max(axis=0) > 1e-8)]


def _weighted_gram(
    X: np.ndarray, w: np.ndarray, z: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray | None]:
    """XᵀWX (and XᵀWz when ``z`` is given) by blocks of rows, in one pass.

    Never an n × k temporary beyond one block: the normal equations of every IRLS
    step of a refit (:func:`_gram_irls`, :func:`_identified_refit`).
    """
    k = X.shape[1]
    gram = np.zeros((k, k))
    rhs = None if z is None else np.zeros(k)
    step = max(2 * k, _QR_BLOCK // max(k, 1))
    for start in range(0, X.shape[0], step):
        xb = X[start : start + step]
        wb = w[start : start + step]
        gram += xb.T @ (xb * wb[:, None])
        if rhs is not None:
            rhs += xb.T @ (wb * z[start : start + step])
    return gram, rhs


class DenseRows:
    """A dense design X as ``_refit_glm.irls`` reads it (the statsmodels refit's exog).

    ``normal_equations`` by :func:`_weighted_gram` (a block of rows at a time),
    ``gradient`` Xᵀv and ``linear`` Xβ: the same loop as the refit from sufficient
    statistics, on the rows.
    """

    def __init__(self, X: np.ndarray) -> None:
        self.X = X

    def normal_equations(
        self, w: np.ndarray, z: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """XᵀWX and XᵀWz (zeros when ``z`` is None)."""
        gram, rhs = _weighted_gram(self.X, w, z)
        return gram, np.zeros(self.X.shape[1]) if rhs is None else rhs

    def gradient(self, v: np.ndarray) -> np.ndarray:
        """Xᵀv for an n-vector ``v``."""
        return self.X.T @ v

    def linear(self, beta: np.ndarray) -> np.ndarray:
        """Xβ for every row."""
        return self.X @ beta


def _identified_refit(sm_results: Any, max_iter: int = 100) -> Any:
    """A rank-deficient GLM refit made the same on every machine.

    statsmodels solves each IRLS step by ``lstsq`` and the last one by ``pinv`` (1e-15
    cut) of the whitened design: on a design with a null space, whether a rounding-noise
    singular value is inverted depends on the CPU's BLAS kernels, so the null-space
    part of the estimate — and with it μ, the scale and the identified parameters'
    standard errors — moved (8e-6 relative between two kernels, and IRLS wandered for
    its 100 iterations). Here IRLS goes on from statsmodels' estimate with each step the
    minimum-norm solution of the normal equations under the rank cut of
    :func:`_truncated_inverse` — the package's one IRLS loop, ``_refit_glm.irls``, on the
    dense rows (:class:`DenseRows`): the identified parameters are statsmodels' (they do not
    depend on the generalised inverse), the null-space part is exactly the minimum-norm
    one, and the covariance is the rank-cut inverse of XᵀWX. The results object is
    statsmodels' ``GLMResults`` built from them. Cox refits keep their own.
    """
    from statsmodels.genmod.generalized_linear_model import GLMResults, GLMResultsWrapper

    inner = getattr(sm_results, "_results", sm_results)
    model = getattr(inner, "model", None)
    if model is None or not hasattr(model, "family") or not hasattr(model, "iweights"):
        return sm_results  # PHReg and the weighted Cox refit: their own covariance
    X = np.asarray(model.exog, dtype=np.float64)
    y = np.asarray(model.endog, dtype=np.float64)
    off = np.asarray(model._offset_exposure, dtype=np.float64)
    fam = model.family
    prior = np.asarray(model.iweights * model.n_trials, dtype=np.float64)
    start = X @ np.asarray(inner.params, dtype=np.float64) + off
    fit = irls(DenseRows(X), y, fam, prior, off, max_iter, start_eta=start)
    if fit.beta is None:
        return sm_results  # a step not finite: statsmodels' own estimate stands
    beta, converged = fit.beta, fit.converged
    eta = X @ beta + off
    mu = fam.fitted(eta)
    model.weights = prior * fam.weights(mu)
    model.mu = mu
    model.scale = scale = model.estimate_scale(mu)
    cov = _truncated_inverse(_weighted_gram(X, model.weights)[0], X.shape[0])
    out = GLMResults(model, beta, cov, scale, cov_type="nonrobust", use_t=inner.use_t)
    out.method = "IRLS"
    out.mle_settings = dict(getattr(inner, "mle_settings", {}))
    out.fit_history = getattr(inner, "fit_history", {})
    out.converged = bool(converged)
    return GLMResultsWrapper(out)


_QR_BLOCK = 1 << 21  # elements of one block of rows (16 MiB of float64)


def _row_blocks(X: np.ndarray, strata: list[np.ndarray] | None):
    """Blocks of rows of X as float64, centred within each stratum when given.

    A block has about ``_QR_BLOCK`` elements (at least 2p rows), so no copy of X is
    ever made whole.
    """
    step = max(2 * X.shape[1], _QR_BLOCK // max(X.shape[1], 1))
    if strata is None:
        for start in range(0, X.shape[0], step):
            yield np.asarray(X[start : start + step], dtype=np.float64)
        return
    for rows in strata:
        total = np.zeros(X.shape[1])
        for start in range(0, rows.size, step):
            total += np.asarray(X[rows[start : start + step]], dtype=np.float64).sum(axis=0)
        mean = total / rows.size
        for start in range(0, rows.size, step):
            yield np.asarray(X[rows[start : start + step]], dtype=np.float64) - mean


def _gram_irls(model: Any, max_iter: int = 50, rtol: float = 1e-12) -> np.ndarray | None:
    """statsmodels' IRLS for a GLM, each step solved by its k × k normal equations.

    The same start, weights and working response as statsmodels' ``_fit_irls``, but the
    weighted least squares of a step is solved from XᵀWX and XᵀWz (accumulated over
    blocks of rows) instead of an SVD of the n × k weighted design: O(n k²) with a small
    constant, versus statsmodels' ``lstsq`` per iteration. Its estimate is only the
    start of statsmodels' own IRLS, which then converges in one or two of its steps, so
    the results are statsmodels' (its last step and covariance). None when a step is not
    finite (statsmodels then starts from its default).
    """
    X = np.asarray(model.exog, dtype=np.float64)
    y = np.asarray(model.endog, dtype=np.float64)
    if X.ndim != 2 or y.ndim != 1 or not X.shape[1]:
        return None
    fam = model.family
    off = np.asarray(model._offset_exposure, dtype=np.float64)
    iw = np.asarray(model.iweights * model.n_trials, dtype=np.float64)
    with np.errstate(all="ignore"):
        mu = fam.starting_mu(y)
        eta = fam.predict(mu)
        dev = float(fam.deviance(y, mu, model.var_weights, model.freq_weights, 1.0))
        beta = None
        for _ in range(max_iter):
            w = iw * fam.weights(mu)
            z = eta + fam.link.deriv(mu) * (y - mu) - off
            gram, rhs = _weighted_gram(X, w, z)
            if not (np.all(np.isfinite(gram)) and np.all(np.isfinite(rhs))):
                return None
            beta = scipy_linalg.lstsq(gram, rhs, cond=1e-13, check_finite=False)[0]
            eta = X @ beta + off
            mu = fam.fitted(eta)
            new = float(fam.deviance(y, mu, model.var_weights, model.freq_weights, 1.0))
            if not np.isfinite(new):
                return None
            done = abs(new - dev) <= rtol * (abs(new) + 1.0)
            dev = new
            if done:
                break
    return beta
