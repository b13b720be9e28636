# cython: language_level=3
"""The Cox partial likelihood over sorted risk sets (design.md §8): one kernel.

:func:`cox_loss_grad_hess` is the compiled twin of ``_cox._loss_grad_hess_numpy`` (the
reference, kept for the tests): the negative log partial likelihood with Breslow's or
Efron's ties, its gradient and the diagonal majoriser of its Hessian (the formulas are
in ``_cox``'s module docstring), from the sort that ``_cox.risk_sets`` computed once per
response array. Per stratum it takes two passes over the sorted rows — backwards for the
risk-set sums D_g (and Efron's per-group shares), forwards for the cumulative shares
A_k — with the same sums in the same order as the NumPy path, so the two agree to
rounding. Rows are gathered from and scattered back to the caller's order through
``order``; the GIL is released for both passes.

Every index the kernel follows is checked before the passes start (a bad ``order``,
group or stratum table raises ``ValueError``): whatever it is handed, it never reads
or writes outside its arrays.
"""

cimport cython
from libc.math cimport exp, log

cdef extern from "math.h" nogil:
    double INFINITY


def cox_loss_grad_hess(
    const Py_ssize_t[::1] order,
    const double[::1] event,
    const Py_ssize_t[::1] group_bounds,
    const Py_ssize_t[::1] strata_bounds,
    const double[::1] eta,
    const double[::1] sw,
    double scale,
    double[::1] grad_out,
    double[::1] hess_out,
    double[::1] work,
    double[::1] gwork,
    bint efron,
    bint want,
):
    """Cox loss L(η); with ``want``, ``grad_out``/``hess_out`` (caller's row order) ← scale·∂L, scale·h.

    Parameters (n rows, G groups of equal (stratum, time), S strata):

    * ``order`` (n): rows sorted by (stratum, time); every entry in [0, n);
    * ``event`` (n): δ (0/1) in sorted order;
    * ``group_bounds`` (G + 1): sorted positions where each group starts, then n;
      increasing from 0;
    * ``strata_bounds`` (S + 1): group index where each stratum starts, then G;
      non-decreasing from 0;
    * ``eta``, ``sw`` (n): linear predictor and weights in the caller's order;
    * ``grad_out``, ``hess_out`` (n, or any length when ``want`` is false);
    * ``work`` (2 n) and ``gwork`` (2 G) scratch.

    NumPy: ``_cox._loss_grad_hess_numpy``. Returns the loss (unscaled).
    """
    cdef Py_ssize_t n = order.shape[0], G = group_bounds.shape[0] - 1
    cdef Py_ssize_t S = strata_bounds.shape[0] - 1
    cdef Py_ssize_t i, k, g, h, r0, r1, g0, g1, a0, a1, mg, r
    cdef double m, acc, D, d, F, wk, sdk, loss = 0.0, wbar, frac, denom, inv, ga, gb
    cdef double cum, before = 0.0, own, hk, dot
    cdef double[::1] sws

    # ---- validate every index the passes follow
    if G < 0 or S < 0:
        raise ValueError("group_bounds and strata_bounds need at least one entry.")
    if event.shape[0] != n or eta.shape[0] != n or sw.shape[0] != n:
        raise ValueError(
            f"order, event, eta and sw must have the same length; got {n}, "
            f"{event.shape[0]}, {eta.shape[0]}, {sw.shape[0]}."
        )
    if work.shape[0] < 2 * n or gwork.shape[0] < 2 * G:
        raise ValueError("work needs 2 n entries and gwork 2 G entries.")
    if want and (grad_out.shape[0] != n or hess_out.shape[0] != n):
        raise ValueError(
            f"grad_out and hess_out need {n} entries; got {grad_out.shape[0]}, "
            f"{hess_out.shape[0]}."
        )
    if group_bounds[0] != 0 or group_bounds[G] != n:
        raise ValueError("group_bounds must run from 0 to n.")
    for g in range(G):
        if group_bounds[g + 1] <= group_bounds[g]:
            raise ValueError("group_bounds must be strictly increasing.")
    if strata_bounds[0] != 0 or strata_bounds[S] != G:
        raise ValueError("strata_bounds must run from 0 to the number of groups.")
    for h in range(S):
        if strata_bounds[h + 1] < strata_bounds[h]:
            raise ValueError("strata_bounds must be non-decreasing.")
    for k in range(n):
        if order[k] < 0 or order[k] >= n:
            raise ValueError(f"order has an entry {order[k]} outside [0, {n}).")

    sws = work[n:]
    with nogil:
        for h in range(S):
            g0 = strata_bounds[h]
            g1 = strata_bounds[h + 1]
            if g1 <= g0:
                continue
            r0 = group_bounds[g0]
            r1 = group_bounds[g1]
            # the rows' η in sorted order (one gather), and the largest: e^{η − m} ≤ 1
            # cannot overflow
            m = -INFINITY
            for k in range(r0, r1):
                work[k] = eta[order[k]]
                if work[k] > m:
                    m = work[k]
            # w = s e^{η − m} and the sorted weights; Σ s δ (η − m): the linear term on
            # the shifted scale (no cancellation between Σ d (log D + m) and Σ s δ η
            # when η is huge)
            dot = 0.0
            for k in range(r0, r1):
                sws[k] = sw[order[k]]
                dot += sws[k] * event[k] * (work[k] - m)
                work[k] = sws[k] * exp(work[k] - m)
            loss -= dot
            # backward pass: D_g, then each group's share(s) in gwork
            acc = 0.0
            for g in range(g1 - 1, g0 - 1, -1):
                a0 = group_bounds[g]
                a1 = group_bounds[g + 1]
                d = 0.0
                F = 0.0
                mg = 0
                for k in range(a1 - 1, a0 - 1, -1):
                    acc += work[k]
                    d += sws[k] * event[k]
                    F += work[k] * event[k]
                    mg += event[k] > 0
                D = acc
                if not efron:
                    if d > 0:
                        loss += d * log(D)
                        gwork[g] = d / D
                    else:
                        gwork[g] = 0.0
                    continue
                # Efron: the m_g events of the group leave the risk set in m_g equal
                # steps; each step r has weight d_g / m_g and denominator D − (r/m_g) F
                ga = 0.0
                gb = 0.0
                if mg > 0 and d > 0:
                    wbar = d / mg
                    for r in range(mg):
                        frac = (<double>r) / mg
                        denom = D - frac * F
                        inv = wbar / denom
                        loss += wbar * log(denom)
                        ga += inv
                        gb += (1.0 - frac) * inv
                gwork[g] = ga
                gwork[G + g] = gb
            if not want:
                continue
            # forward pass: A_k = the shares of the groups at or before k's time
            cum = 0.0
            for g in range(g0, g1):
                a0 = group_bounds[g]
                a1 = group_bounds[g + 1]
                ga = gwork[g]
                cum += ga
                if efron:
                    before = cum - ga
                for k in range(a0, a1):
                    i = order[k]
                    wk = work[k]
                    if efron:
                        own = gwork[G + g] if event[k] > 0 else ga
                        hk = wk * (before + own)
                    else:
                        hk = wk * cum
                    sdk = sws[k] * event[k]
                    hess_out[i] = scale * hk
                    grad_out[i] = scale * (hk - sdk)
    return loss
