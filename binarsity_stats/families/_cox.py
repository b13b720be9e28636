"""Risk-set arithmetic of the Cox proportional-hazards model (design.md §8).

The loss of ``family="cox"`` is the negative log partial likelihood with Breslow's
handling of tied times, per stratum h:

    L(η) = Σ_g d_g log D_g − Σ_i s_i δ_i η_i,
    D_g = Σ_{j in h: t_j ≥ t_g} s_j e^{η_j},   d_g = Σ_{i in g} s_i δ_i,

g running over the groups of rows with the same (stratum, time). It is not a sum over
rows, but after one sort of the rows by time its value, gradient and a diagonal
majoriser of its Hessian take O(n) (cumulative sums over the risk sets):

    ∂L/∂η_k = s_k e^{η_k} A_k − s_k δ_k,   A_k = Σ_{g: t_g ≤ t_k} d_g / D_g,
    h_k     = s_k e^{η_k} A_k.

The Hessian is Σ_g (d_g / D_g²)(D_g diag(w_g) − w_g w_gᵀ) with w_g the rows' s e^η
on the risk set of g: it is ≼ diag(h) (each term is a covariance, ≼ its diagonal), so
h majorises the curvature in every direction — the working curvature of the engine's
exact block steps (glmnet's coxnet takes the diagonal of the Hessian itself, which is
smaller; the majoriser makes every block step a descent step of the quadratic model's
true curvature at that point). The loss is invariant to a common shift of η (Σ_k ∂L/∂η_k
= 0): the model has no intercept.

**The response as one float per row.** The engine's seams carry one float64 ``y`` per
row (sliced by CV folds and resamples, passed to the family with η and the weights). A
survival response is packed into it by :func:`encode` as

    y = 2 (stratum · 2²⁶ + rank of t) + δ

(integers, exact in float64): the rank order of the times (ties kept), the event
indicator and the stratum are all the partial likelihood needs, and every subset of rows
keeps them. :func:`decode` reads them back; the times themselves stay with the modelling
layer (baseline hazard, predictions). The sort of a given ``y`` array is computed once
and cached while the array lives (:func:`risk_sets`).
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass

import numpy as np

from ..kernels import _cox_fast
from ._concordance import concordant_weights

__all__ = [
    "RiskSets",
    "encode",
    "decode",
    "survival_columns",
    "risk_sets",
    "loss_grad_hess",
    "saturated_loss",
    "concordance_index",
    "breslow_baseline",
    "MAX_TIMES",
    "MAX_STRATA",
]

_SHIFT = 26
#: at most this many distinct times and strata (the packed y stays below 2^53)
MAX_TIMES = 1 << _SHIFT
MAX_STRATA = 1 << _SHIFT


def encode(time, event, strata=None) -> np.ndarray:
    """Pack survival times, event indicators and strata into one float per row.

    Parameters
    ----------
    time : array-like of shape (n,)
        Follow-up times (finite, non-negative).
    event : array-like of shape (n,)
        1 (or True) for an observed event, 0 for a censored time.
    strata : array-like of shape (n,), optional
        Stratum labels: each stratum has its own baseline hazard (risk sets never cross
        strata).

    Returns
    -------
    ndarray of shape (n,)
        y = 2 (stratum · 2²⁶ + dense rank of the time) + event, float64.
    """
    t = np.asarray(time, dtype=np.float64).ravel()
    e = np.asarray(event)
    if e.dtype == bool:
        e = e.astype(np.float64)
    e = np.asarray(e, dtype=np.float64).ravel()
    if e.shape != t.shape:
        raise ValueError(f"event has {e.size} rows but time has {t.size}.")
    if not np.all(np.isfinite(t)):
        raise ValueError("time contains missing or infinite values.")
    if np.any(t < 0):
        raise ValueError(
            f"time must be non-negative; found values such as {t[t < 0][:3].tolist()}."
        )
    if not np.all(np.isfinite(e)) or not np.all((e == 0) | (e == 1)):
        bad = e[~((e == 0) | (e == 1))][:3].tolist()
        raise ValueError(f"event must be 0/1 (or boolean); found values such as {bad}.")
    _, rank = np.unique(t, return_inverse=True)
    if rank.size and rank.max() >= MAX_TIMES:
        raise ValueError(f"at most {MAX_TIMES} distinct times are supported.")
    key = rank.astype(np.int64)
    if strata is not None:
        s = np.asarray(strata, dtype=object).ravel()
        if s.shape != t.shape:
            raise ValueError(f"strata has {s.size} rows but time has {t.size}.")
        _, sid = np.unique(s.astype(str), return_inverse=True)
        if sid.size and sid.max() >= MAX_STRATA:
            raise ValueError(f"at most {MAX_STRATA} strata are supported.")
        key = key + (sid.astype(np.int64) << _SHIFT)
    return (2 * key + e.astype(np.int64)).astype(np.float64)


def read_status(event) -> tuple[np.ndarray, bool]:
    """The 0/1 event indicator of a status column, read as R's ``survival::Surv`` reads it.

    R's rule (``Surv(time, event)``): a logical status is TRUE = event; a numeric one is
    0 = censored, 1 = event, or, when its largest value is 2, 1 = censored, 2 = event
    (the coding of ``survival::lung``). Where R turns any other value into ``NA`` with
    a warning, this refuses it.

    Parameters
    ----------
    event : array-like of shape (n,)
        The status: boolean, 0/1 or 1/2 (missing values are left to the caller).

    Returns
    -------
    event : ndarray of float64
        1.0 for an event, 0.0 for a censored time (NaN kept).
    r_coding : bool
        Whether the 1/2 coding was read (every non-missing value 1 or 2, at least one 2).

    Raises
    ------
    ValueError
        A value other than 0/1 (or 1/2 when the largest value is 2).
    """
    e = np.asarray(event)
    if e.dtype == bool:
        return e.astype(np.float64).ravel(), False
    e = np.asarray(e, dtype=np.float64).ravel()
    seen = e[~np.isnan(e)]
    r_coding = bool(seen.size) and float(np.max(seen)) == 2.0
    if r_coding:
        bad = seen[(seen != 1) & (seen != 2)]
        if bad.size:
            raise ValueError(
                "event: the largest status is 2, R's 1 = censored / 2 = event coding, but "
                f"other values occur, such as {np.unique(bad)[:3].tolist()}; give 0/1, 1/2 "
                "or booleans."
            )
        e = e - 1.0
    return e, r_coding


_STRATA_HINT = (
    " The strata are not a field of y: give the estimator strata='g' (a column of X), "
    "or use a formula, glm('Surv(time, event) ~ ... + strata(g)', data, family='cox')."
)


def survival_columns(y, n: int | None = None) -> tuple[np.ndarray, np.ndarray, bool]:
    """(time, event) of an estimator's survival ``y``.

    Parameters
    ----------
    y : structured array or array-like of shape (n, 2)
        A structured array with a boolean (or 0/1) event field and a float time field —
        scikit-survival's ``Surv.from_arrays(event, time)``, fields named ``event`` /
        ``status`` / the boolean one, and ``time`` / the float one — or two columns
        ``(time, event)`` (a DataFrame's first column the time).
    n : int, optional
        Expected number of rows (the message names ``y`` and ``X``).

    Returns
    -------
    time, event : ndarray of float64
        The times and the 0/1 events: the status read by :func:`read_status`, the rule
        of the formula's ``Surv(time, status)`` (booleans, 0/1, or R's 1 = censored /
        2 = event when the largest value is 2).
    r_coding : bool
        Whether the status was read in R's 1/2 coding.

    Raises
    ------
    ValueError
        Naming the event field or column: a status other than booleans, 0/1 or 1/2.
    """
    names = getattr(getattr(y, "dtype", None), "names", None)
    if names:
        arr = np.asarray(y)
        fields = {nm.lower(): nm for nm in names}
        ev = fields.get("event") or fields.get("status")
        tm = fields.get("time")
        if ev is None:
            ev = next((nm for nm in names if arr.dtype[nm].kind == "b"), None)
        if tm is None:
            tm = next((nm for nm in names if nm != ev and arr.dtype[nm].kind == "f"), None)
        if ev is None or tm is None or len(names) != 2:
            raise ValueError(
                "a structured survival y needs two fields, the event (boolean, or named "
                f"'event'/'status') and the time (float, or named 'time'); got {names}."
                + _STRATA_HINT
            )
        time, event, where = arr[tm], arr[ev], f"event field {ev!r}"
    else:
        arr = np.asarray(y)
        if arr.ndim != 2 or arr.shape[1] != 2:
            raise ValueError(
                "family='cox' needs y as a structured array (event, time) or two columns "
                f"(time, event); got shape {arr.shape}."
                + (_STRATA_HINT if arr.ndim == 2 and arr.shape[1] > 2 else "")
            )
        time, event = arr[:, 0], arr[:, 1]
        cols = getattr(y, "columns", None)
        where = f"event column {str(cols[1])!r}" if cols is not None else "event column 1"
    try:
        time = np.asarray(time, dtype=np.float64)
        event = np.asarray(event, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("y: the survival time and event must be numbers.") from None
    if n is not None and time.shape[0] != n:
        raise ValueError(f"y has {time.shape[0]} rows but X has {n}.")
    try:
        event, r_coding = read_status(event)  # as the formula's Surv() reads it
    except ValueError as exc:
        raise ValueError(f"y ({where}): {exc}") from None
    bad = event[~((event == 0) | (event == 1))]
    if bad.size:
        raise ValueError(
            f"y ({where}): the status must be booleans, 0/1 (1 = event) or R's 1/2 "
            f"(1 = censored, 2 = event); found values such as {np.unique(bad)[:3].tolist()}."
        )
    return time, event, r_coding


def decode(y) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unpack :func:`encode`: (stratum id, time rank, event) as int64 arrays.

    Parameters
    ----------
    y : ndarray of shape (n,)
        Packed response.

    Returns
    -------
    stratum, rank, event : ndarray of int64
    """
    v = np.asarray(y, dtype=np.float64).astype(np.int64)
    key, event = v >> 1, v & 1
    return key >> _SHIFT, key & (MAX_TIMES - 1), event


def check_encoded(y: np.ndarray) -> None:
    """Raise ``ValueError`` if ``y`` is not a packed survival response.

    Parameters
    ----------
    y : ndarray of shape (n,)
        Response given to the Cox family.
    """
    ok = np.isfinite(y) & (y >= 0) & (y < 2.0**53) & (y == np.floor(y))
    if not np.all(ok):
        raise ValueError(
            "family='cox' needs a survival response: Surv(time, event) in a formula, or "
            "(time, event) / a structured array with 'time' and 'event' fields in the "
            f"estimators; got values such as {y[~ok][:3].tolist()}."
        )


@dataclass(frozen=True)
class RiskSets:
    """The sort of a packed response (computed once per ``y`` array).

    Attributes
    ----------
    order : ndarray of intp
        Rows by (stratum, time) ascending.
    event : ndarray of float64
        δ in that order.
    group_start : ndarray of intp
        Start (in sorted positions) of each group of equal (stratum, time).
    group_size : ndarray of intp
        Rows per group.
    strata : list of (int, int)
        For each stratum, its range of groups [g0, g1) (risk sets stay inside).
    group_bounds : ndarray of intp
        ``group_start`` followed by n (the compiled kernel's group table).
    strata_bounds : ndarray of intp
        The first group of each stratum followed by the number of groups.
    """

    order: np.ndarray
    event: np.ndarray
    group_start: np.ndarray
    group_size: np.ndarray
    strata: list
    group_bounds: np.ndarray
    strata_bounds: np.ndarray


_CACHE: dict[int, tuple] = {}
_LOCK = threading.Lock()


def _build(y: np.ndarray) -> RiskSets:
    stratum, rank, event = decode(y)
    key = (stratum << _SHIFT) + rank
    order = np.argsort(key, kind="stable")
    ks = key[order]
    n = ks.size
    change = np.flatnonzero(np.diff(ks)) + 1 if n else np.zeros(0, dtype=np.intp)
    starts = np.concatenate([[0], change]).astype(np.intp) if n else change.astype(np.intp)
    sizes = np.diff(np.concatenate([starts, [n]])).astype(np.intp)
    gstrat = ks[starts] >> _SHIFT if n else ks
    sc = np.flatnonzero(np.diff(gstrat)) + 1 if n else np.zeros(0, dtype=np.intp)
    bounds = np.concatenate([[0], sc, [starts.size]]).astype(np.intp) if n else [0, 0]
    strata = [(int(bounds[i]), int(bounds[i + 1])) for i in range(len(bounds) - 1)]
    gb = np.ascontiguousarray(np.concatenate([starts, [n]]), dtype=np.intp)
    sb = np.ascontiguousarray(np.asarray(bounds), dtype=np.intp)
    return RiskSets(
        np.ascontiguousarray(order, dtype=np.intp),
        np.ascontiguousarray(event[order], dtype=np.float64),
        starts,
        sizes,
        strata,
        gb,
        sb,
    )


def risk_sets(y: np.ndarray) -> RiskSets:
    """The sorted risk sets of a packed response, cached while ``y`` lives.

    Parameters
    ----------
    y : ndarray of shape (n,)
        Packed response (:func:`encode`).

    Returns
    -------
    RiskSets
    """
    key = id(y)
    with _LOCK:
        hit = _CACHE.get(key)
        if hit is not None and hit[0]() is y:
            return hit[1]
    rs = _build(y)
    try:
        ref = weakref.ref(y, lambda _r, k=key: _CACHE.pop(k, None))
    except TypeError:  # not weak-referenceable: no caching
        return rs
    with _LOCK:
        _CACHE[key] = (ref, rs)
    return rs


def loss_grad_hess(
    eta, y, sample_weight, scale=1.0, grad_out=None, hess_out=None, ties="breslow"
) -> float:
    """Negative log partial likelihood, its gradient and diagonal majoriser.

    The compiled kernel ``_cox_fast.cox_loss_grad_hess`` computes them over the sort of
    :func:`risk_sets` (cached per ``y`` array); :func:`_loss_grad_hess_numpy` is its
    NumPy reference (the same sums in the same order).

    Parameters
    ----------
    eta, y, sample_weight : ndarray of shape (n,)
        Linear predictor, packed response and weights.
    scale : float, default=1
        Factor of the outputs ``grad_out``, ``hess_out`` (the engine passes 1/W).
    grad_out, hess_out : ndarray of shape (n,), optional
        Filled in place with scale·∂L/∂η and scale·h (see the module docstring).
    ties : {"breslow", "efron"}, default="breslow"
        Handling of tied event times. Efron's: a group g of m_g events with weighted
        count d_g contributes (d_g / m_g) Σ_{r<m_g} log(D_g − (r/m_g) F_g), F_g the
        risk s e^η of its events (R's ``coxph`` with weights); the curvature is again
        the majoriser s_k e^{η_k} A_k with A_k the sum of k's shares of the
        denominators.

    Returns
    -------
    float
        L(η), unscaled.
    """
    if ties not in ("breslow", "efron"):
        raise ValueError(f"ties must be 'breslow' or 'efron'; got {ties!r}.")
    rs = risk_sets(y)
    n = rs.order.shape[0]
    e = _as_rows(eta, n, "eta")
    s = _as_rows(sample_weight, n, "sample_weight")
    if n and WIDE_ETA < float(e.max()) - float(e.min()) < np.inf:
        # the kernel's e^{η − max η} would underflow (or 1/D_g overflow): log-space sums
        return _loss_grad_hess_wide(e, y, s, scale, grad_out, hess_out, ties)
    want = grad_out is not None or hess_out is not None
    g = _out_rows(grad_out, n, "grad_out") if want else _EMPTY
    h = _out_rows(hess_out, n, "hess_out") if want else _EMPTY
    work = np.empty(2 * n)
    gwork = np.empty(2 * (rs.group_bounds.shape[0] - 1))
    loss = _cox_fast.cox_loss_grad_hess(
        rs.order, rs.event, rs.group_bounds, rs.strata_bounds, e, s, float(scale),
        g, h, work, gwork, ties == "efron", want,
    )  # fmt: skip
    if grad_out is not None and g is not grad_out:
        grad_out[...] = g
    if hess_out is not None and h is not hess_out:
        hess_out[...] = h
    return float(loss)


_EMPTY = np.empty(0)

#: range of η (max − min) beyond which :func:`loss_grad_hess` sums in log space: below
#: it every e^{η − max η} ≥ e^{−600} is a normal float and 1/D_g ≤ e^{600} cannot
#: overflow in the cumulative shares
WIDE_ETA = 600.0


def _loss_grad_hess_wide(
    eta, y, sample_weight, scale=1.0, grad_out=None, hess_out=None, ties="breslow"
) -> float:
    """:func:`loss_grad_hess` with the risk-set sums in log space (any range of η).

    The kernel (and :func:`_loss_grad_hess_numpy`) sums s e^{η − m} with m the
    stratum's largest η: a row more than ~745 below m contributes 0, and a risk set
    made only of such rows has D_g = 0 (the loss −inf, the gradient NaN). Here
    log D_g is a running log-sum-exp from the last time backwards, the shares
    d_g / D_g are carried as logs and every row's h_k = s_k e^{η_k} A_k is formed as
    one exponential of a sum of logs (at most log d_g: no overflow). The same
    formulas otherwise (Efron's denominators as D_g (1 − (r/m_g) F_g / D_g)), and the
    same parameters and result; :func:`loss_grad_hess` calls it when the range of η
    exceeds :data:`WIDE_ETA`.
    """
    rs = risk_sets(y)
    s = np.asarray(sample_weight, dtype=np.float64)[rs.order]
    e = np.asarray(eta, dtype=np.float64)[rs.order]
    sd = s * rs.event
    want = grad_out is not None or hess_out is not None
    gs = np.zeros_like(e) if want else None
    hs = np.zeros_like(e) if want else None
    loss = 0.0
    starts, sizes = rs.group_start, rs.group_size
    for g0, g1 in rs.strata:
        if g1 <= g0:
            continue
        r0 = int(starts[g0])
        r1 = int(starts[g1 - 1] + sizes[g1 - 1])
        es = e[r0:r1]
        m = float(np.max(es))
        with np.errstate(divide="ignore"):
            logw = np.log(s[r0:r1]) + (es - m)  # log(s e^{η − m}); −inf at s = 0
        st = starts[g0:g1] - r0
        logD = np.logaddexp.accumulate(logw[::-1])[::-1][st]
        d = np.add.reduceat(sd[r0:r1], st)
        ev_rows = rs.event[r0:r1]
        mg = np.add.reduceat(ev_rows, st).astype(np.int64)
        live = (d > 0) & (mg > 0)
        if ties == "efron":
            logF = np.logaddexp.reduceat(np.where(ev_rows > 0, logw, -np.inf), st)
            grp = np.repeat(np.arange(mg.size), mg)
            r = np.arange(grp.size) - np.repeat(np.cumsum(mg) - mg, mg)
            frac = r / np.where(mg > 0, mg, 1)[grp]
            wbar = np.where(live, d / np.where(mg > 0, mg, 1), 0.0)[grp]
            with np.errstate(invalid="ignore", over="ignore"):
                q = 1.0 - frac * np.exp(logF[grp] - logD[grp])  # denom / D, in (0, 1]
            ok = wbar > 0
            q = np.where(ok, q, 1.0)
            with np.errstate(invalid="ignore"):
                loss += float(np.sum(np.where(ok, wbar * (logD[grp] + np.log(q)), 0.0)))
            aD = np.bincount(grp, weights=np.where(ok, wbar / q, 0.0), minlength=mg.size)
            bD = np.bincount(
                grp, weights=np.where(ok, wbar * (1 - frac) / q, 0.0), minlength=mg.size
            )
        else:
            loss += float(np.sum(d[live] * logD[live]))
            aD = np.where(live, d, 0.0)
            bD = aD
        loss -= float(np.dot(sd[r0:r1], es - m))
        if not want:
            continue
        with np.errstate(divide="ignore"):
            loga = np.where(aD > 0, np.log(np.where(aD > 0, aD, 1.0)) - logD, -np.inf)
            logb = np.where(bD > 0, np.log(np.where(bD > 0, bD, 1.0)) - logD, -np.inf)
        cum = np.logaddexp.accumulate(loga)
        before = np.concatenate(([-np.inf], cum[:-1]))
        gsz = sizes[g0:g1]
        if ties == "efron":
            own = np.where(ev_rows > 0, np.repeat(logb, gsz), np.repeat(loga, gsz))
            with np.errstate(under="ignore"):
                hk = np.exp(logw + np.repeat(before, gsz)) + np.exp(logw + own)
        else:
            with np.errstate(under="ignore"):
                hk = np.exp(logw + np.repeat(cum, gsz))
        hs[r0:r1] = hk
        gs[r0:r1] = hk - sd[r0:r1]
    if grad_out is not None:
        grad_out[rs.order] = gs * scale
    if hess_out is not None:
        hess_out[rs.order] = hs * scale
    return loss


def _as_rows(v, n: int, name: str) -> np.ndarray:
    a = np.ascontiguousarray(np.asarray(v, dtype=np.float64).ravel())
    if a.shape[0] != n:
        raise ValueError(f"{name} has {a.shape[0]} rows but y has {n}.")
    return a


def _out_rows(out, n: int, name: str) -> np.ndarray:
    """``out`` itself when the kernel can write into it, else a scratch vector."""
    if out is None:
        return np.empty(n)
    if out.shape != (n,):
        raise ValueError(f"{name} has shape {out.shape}; expected ({n},).")
    if out.dtype == np.float64 and out.flags.c_contiguous and out.flags.writeable:
        return out
    return np.empty(n)


def _loss_grad_hess_numpy(
    eta, y, sample_weight, scale=1.0, grad_out=None, hess_out=None, ties="breslow"
) -> float:
    """NumPy reference of :func:`loss_grad_hess` (the compiled kernel's twin in the tests).

    Parameters
    ----------
    eta, y, sample_weight : ndarray of shape (n,)
        Linear predictor, packed response and weights.
    scale : float, default=1
        Factor of the outputs ``grad_out``, ``hess_out`` (the engine passes 1/W).
    grad_out, hess_out : ndarray of shape (n,), optional
        Filled in place with scale·∂L/∂η and scale·h (see the module docstring).
    ties : {"breslow", "efron"}, default="breslow"
        Handling of tied event times. Efron's: a group g of m_g events with weighted
        count d_g contributes (d_g / m_g) Σ_{r<m_g} log(D_g − (r/m_g) F_g), F_g the
        risk s e^η of its events (R's ``coxph`` with weights); the curvature is again
        the majoriser s_k e^{η_k} A_k with A_k the sum of k's shares of the
        denominators.

    Returns
    -------
    float
        L(η), unscaled.
    """
    rs = risk_sets(y)
    s = np.asarray(sample_weight, dtype=np.float64)[rs.order]
    e = np.asarray(eta, dtype=np.float64)[rs.order]
    sd = s * rs.event
    want = grad_out is not None or hess_out is not None
    gs = np.empty_like(e) if want else None
    hs = np.empty_like(e) if want else None
    loss = 0.0
    starts, sizes = rs.group_start, rs.group_size
    for g0, g1 in rs.strata:
        if g1 <= g0:
            continue
        r0 = int(starts[g0])
        r1 = int(starts[g1 - 1] + sizes[g1 - 1])
        es = e[r0:r1]
        m = float(np.max(es)) if es.size else 0.0
        w = s[r0:r1] * np.exp(es - m)
        # D_g: the weighted risk of every row at or after the group's time
        tail = np.cumsum(w[::-1])[::-1]
        st = starts[g0:g1] - r0
        D = tail[st]
        d = np.add.reduceat(sd[r0:r1], st)
        ev = d > 0
        if ties == "efron":
            ev_rows = rs.event[r0:r1]
            mg = np.add.reduceat(ev_rows, st).astype(np.int64)
            F = np.add.reduceat(w * ev_rows, st)
            grp = np.repeat(np.arange(mg.size), mg)  # one entry per event: its group
            r = np.arange(grp.size) - np.repeat(np.cumsum(mg) - mg, mg)
            frac = r / np.where(mg > 0, mg, 1)[grp]
            denom = D[grp] - frac * F[grp]
            wbar = np.where(mg > 0, d / np.where(mg > 0, mg, 1), 0.0)[grp]
            # a group whose events all weigh 0 adds nothing (its denominators may be 0)
            live = wbar > 0
            with np.errstate(divide="ignore", invalid="ignore"):
                loss += float(np.sum(np.where(live, wbar * np.log(denom), 0.0)))
                a = np.bincount(grp, weights=np.where(live, wbar / denom, 0.0), minlength=mg.size)
                b = np.bincount(
                    grp, weights=np.where(live, wbar * (1 - frac) / denom, 0.0), minlength=mg.size
                )
            # the linear term on the shifted scale: Σ_g d_g m cancels Σ s δ m (no
            # cancellation between large terms when η is huge)
            loss -= float(np.dot(sd[r0:r1], es - m))
            if want:
                gsz = sizes[g0:g1]
                before = np.repeat(np.cumsum(a) - a, gsz)
                own = np.where(ev_rows > 0, np.repeat(b, gsz), np.repeat(a, gsz))
                hk = w * (before + own)
                hs[r0:r1] = hk
                gs[r0:r1] = hk - sd[r0:r1]
            continue
        with np.errstate(divide="ignore", invalid="ignore"):
            loss += float(np.sum(d[ev] * np.log(D[ev])))
            ratio = np.where(ev, d / np.where(ev, D, 1.0), 0.0)
        loss -= float(np.dot(sd[r0:r1], es - m))
        if want:
            A = np.repeat(np.cumsum(ratio), sizes[g0:g1])
            hk = w * A
            hs[r0:r1] = hk
            gs[r0:r1] = hk - sd[r0:r1]
    if grad_out is not None:
        grad_out[rs.order] = gs * scale
    if hess_out is not None:
        hess_out[rs.order] = hs * scale
    return loss


def saturated_loss(y, sample_weight) -> float:
    """Σ_g d_g log d_g: the loss of the saturated model (glmnet's coxnet deviance).

    The deviance of a fit is 2 (L(η) − Σ_g d_g log d_g).

    Parameters
    ----------
    y, sample_weight : ndarray of shape (n,)
        Packed response and weights.

    Returns
    -------
    float
    """
    rs = risk_sets(y)
    sd = np.asarray(sample_weight, dtype=np.float64)[rs.order] * rs.event
    if not sd.size:
        return 0.0
    d = np.add.reduceat(sd, rs.group_start)
    d = d[d > 0]
    return float(np.sum(d * np.log(d)))


def concordance_index(time, event, risk, sample_weight=None, strata=None) -> float:
    """Harrell's C: the share of comparable pairs whose higher risk fails first.

    A pair (i, j) is comparable when i has an event and j is still at risk after it
    (t_j > t_i, or t_j = t_i with j censored), within a stratum; it is concordant when
    risk_i > risk_j and counts one half when the risks tie (lifelines' and
    scikit-survival's convention). Pairs are weighted by s_i s_j.

    Parameters
    ----------
    time, event, risk : array-like of shape (n,)
        Times, event indicators and predicted risk (η or e^η: only the order matters).
    sample_weight : array-like of shape (n,), optional
        Row weights.
    strata : array-like of shape (n,), optional
        Pairs across strata are not compared.

    Returns
    -------
    float
        C in [0, 1] (NaN without a comparable pair).
    """
    t = np.asarray(time, dtype=np.float64).ravel()
    e = np.asarray(event, dtype=np.float64).ravel()
    r = np.asarray(risk, dtype=np.float64).ravel()
    s = np.ones_like(t) if sample_weight is None else np.asarray(sample_weight, float).ravel()
    groups = [np.arange(t.size)]
    if strata is not None:
        lab = np.asarray(strata, dtype=object).astype(str).ravel()
        groups = [np.flatnonzero(lab == u) for u in np.unique(lab)]
    num = den = 0.0
    for rows in groups:
        tt, ee, rr, ss = t[rows], e[rows], r[rows], s[rows]
        # by time; for each event i, the rows after it are those with a larger time or
        # the same time and censored: sort by (time, event descending) puts the censored
        # rows of a time after its events
        order = np.lexsort((-ee, tt))
        tt, ee, rr, ss = tt[order], ee[order], rr[order], ss[order]
        first = np.searchsorted(tt, tt, side="left")
        cum = np.concatenate([[0.0], np.cumsum(ee)])
        # comparable partners of an event at position i: every position from the first
        # row of its time plus the events of that time (the censored rows there, and
        # every later time)
        start = first + (cum[np.searchsorted(tt, tt, side="right")] - cum[first]).astype(np.intp)
        # the weighted pair counts in O(n log² n), never events × n (_concordance)
        stratum_num, stratum_den = concordant_weights(start, rr, ss, np.flatnonzero(ee > 0))
        num += stratum_num
        den += stratum_den
    return num / den if den > 0 else float("nan")


def breslow_baseline(time, event, eta, sample_weight=None, strata=None) -> dict:
    """Breslow's estimate of the baseline cumulative hazard, per stratum.

    H0(t) = Σ_{event times u ≤ t} d_u / Σ_{j: t_j ≥ u} s_j e^{η_j}; then the survival of
    a row with predictor η is S(t) = exp(−H0(t) e^η).

    Parameters
    ----------
    time, event, eta : array-like of shape (n,)
        Training times, events and linear predictors (the same η as predictions use).
    sample_weight : array-like of shape (n,), optional
        Row weights.
    strata : array-like of shape (n,), optional
        Stratum labels.

    Returns
    -------
    dict
        ``{stratum label (str, "" without strata): (event times, H0 at them)}``.
    """
    t = np.asarray(time, dtype=np.float64).ravel()
    e = np.asarray(event, dtype=np.float64).ravel()
    eta = np.asarray(eta, dtype=np.float64).ravel()
    s = np.ones_like(t) if sample_weight is None else np.asarray(sample_weight, float).ravel()
    lab = np.full(t.size, "", dtype=object) if strata is None else np.asarray(strata).astype(str)
    out = {}
    for u in np.unique(lab):
        rows = lab == u
        tt, ee, ww = t[rows], e[rows], s[rows] * np.exp(eta[rows])
        times = np.unique(tt[ee > 0])
        order = np.argsort(tt, kind="stable")
        ts, ws = tt[order], ww[order]
        tail = np.concatenate([np.cumsum(ws[::-1])[::-1], [0.0]])
        at_risk = tail[np.searchsorted(ts, times, side="left")]
        dw = np.bincount(
            np.searchsorted(times, tt[ee > 0]), weights=s[rows][ee > 0], minlength=times.size
        )
        with np.errstate(divide="ignore", invalid="ignore"):
            inc = np.where(at_risk > 0, dw / at_risk, 0.0)
        out[str(u)] = (times, np.cumsum(inc))
    return out
