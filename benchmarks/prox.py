"""Suite ``prox``: the binarsity prox alone — speed against tick, error against cvxpy.

Speed: v = a piecewise-constant signal (a jump every 100 entries) + N(0, 0.5²) noise,
step·strength = 0.5, unit weights and equal counts (the case where tick's
``ProxBinarsity`` is exact), d from 1e3 to 1e7, in two layouts: one block of length d
and blocks of 50 (p = d / 50 features, the shape a solver sees). tick is called as
``ProxBinarsity(strength=0.5, blocks_start, blocks_length).call(v)``; ours as
``prox_binarsity(v, block_ptr, weights=1, counts=None, step=0.5)``.

Accuracy: cvxpy (Clarabel) solves the exact prox
min ½‖θ − v‖² + step Σ_j Σ_{k≥2} ω_jk |θ_jk − θ_j,k−1| s.t. n_jᵀθ_j = 0
on small instances: equal counts, unequal counts (where tick's plain-mean centring is
not the prox, design.md §5) and random weights with zeros and large values (tick has
no weights). Reported: max |θ − θ_cvxpy| and the prox objective's relative excess.
"""

from __future__ import annotations

import numpy as np

from ._common import SuiteOutput, new_figure, save_figure, timed
from ._ours import EstimatorMissing, has_estimator, prox_binarsity

STEP = 0.5


def _signal(d: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    levels = rng.normal(size=d // 100 + 1)
    return np.repeat(levels, 100)[:d] + 0.5 * rng.normal(size=d)


def _tick_prox(block_ptr: np.ndarray, strength: float):
    from tick.prox import ProxBinarsity

    return ProxBinarsity(
        strength=strength,
        blocks_start=block_ptr[:-1].astype(np.uint64),
        blocks_length=np.diff(block_ptr).astype(np.uint64),
    )


def _ptr(d: int, block: int | None) -> np.ndarray:
    if block is None or block >= d:
        return np.array([0, d], dtype=np.int64)
    return np.arange(0, d + 1, block, dtype=np.int64)


def prox_objective(theta, v, block_ptr, weights, step) -> float:
    """½‖θ − v‖² + step Σ_j Σ_{k≥2} ω_jk |θ_jk − θ_j,k−1| (weights at block starts unused)."""
    tv = np.abs(np.diff(theta)) * weights[1:]
    tv[block_ptr[1:-1] - 1] = 0.0
    return float(0.5 * np.sum((theta - v) ** 2) + step * tv.sum())


def cvxpy_prox(v, block_ptr, weights, counts, step) -> np.ndarray:
    """Exact binarsity prox by cvxpy (Clarabel), the reference of the accuracy table."""
    import cvxpy as cp

    theta = cp.Variable(v.size)
    pen, cons = 0, []
    for j in range(block_ptr.size - 1):
        a, b = int(block_ptr[j]), int(block_ptr[j + 1])
        if b - a > 1:
            pen = pen + weights[a + 1 : b] @ cp.abs(cp.diff(theta[a:b]))
        cons.append(counts[a:b] @ theta[a:b] == 0)
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(theta - v) + step * pen), cons)
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    return np.asarray(theta.value)


def _accuracy(out: SuiteOutput, prox, quick: bool) -> None:
    rng = np.random.default_rng(0)
    n_inst = 5 if quick else 20
    cases = ("equal counts", "unequal counts", "weights 0 / large")
    for case in cases:
        for sizes in ([1, 2, 8, 50], [20] * 5, [200]):
            errs_o, errs_t, exc_o, exc_t = [], [], [], []
            block_ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
            d = int(block_ptr[-1])
            for _ in range(n_inst):
                v = rng.normal(size=d) * 2
                counts = np.ones(d) if case == "equal counts" else rng.integers(1, 50, d) * 1.0
                if case == "weights 0 / large":
                    weights = rng.choice([0.0, 0.3, 1.0, 50.0], size=d)
                else:
                    weights = np.ones(d)
                ref = cvxpy_prox(v, block_ptr, weights, counts, STEP)
                f_ref = prox_objective(ref, v, block_ptr, weights, STEP)
                ours = np.asarray(
                    prox(
                        v.copy(),
                        block_ptr,
                        weights,
                        counts=None if case == "equal counts" else counts,
                        step=STEP,
                    )
                )
                errs_o.append(np.max(np.abs(ours - ref)))
                exc_o.append((prox_objective(ours, v, block_ptr, weights, STEP) - f_ref) / f_ref)
                if case != "weights 0 / large":
                    tick = _tick_prox(block_ptr, STEP).call(v)
                    errs_t.append(np.max(np.abs(tick - ref)))
                    # tick's output violates n_jᵀθ_j = 0 for unequal counts; report the
                    # excess of its objective anyway (it is infeasible for our constraint)
                    exc_t.append(
                        (prox_objective(tick, v, block_ptr, weights, STEP) - f_ref) / f_ref
                    )
            out.add(
                part="accuracy",
                case=case,
                blocks=str(sizes) if len(sizes) < 5 else f"{len(sizes)}×{sizes[0]}",
                instances=n_inst,
                ours_max_err=max(errs_o),
                ours_obj_excess=max(exc_o),
                tick_max_err=max(errs_t) if errs_t else float("nan"),
                tick_obj_excess=max(exc_t) if exc_t else float("nan"),
            )


def run(out: SuiteOutput, quick: bool, repeats: int = 3, **_: object) -> None:
    """Run the suite and fill ``out``.

    Parameters
    ----------
    out : SuiteOutput
        Collector of the rows.
    quick : bool
        d up to 1e6 and fewer cvxpy instances.
    repeats : int
        Timing repeats, at least (medians of tick and ours called alternately; 31
        for d ≤ 1e5, 9 for 1e6, 3 above).
    """
    ours_ok = has_estimator()
    prox = prox_binarsity() if ours_ok else None
    if not ours_ok:
        out.note("binarsity_stats is missing: only tick's prox is timed")
    ds = [10**k for k in range(3, 7 if quick else 8)]
    for layout in (None, 50):
        for d in ds:
            block_ptr = _ptr(d, layout)
            v = _signal(d)
            # a call takes microseconds to a fraction of a second: many repeats
            # where it is cheap, and the two implementations interleaved so that the
            # machine's drift (shared, noisy) hits both alike
            reps = max(repeats, 31 if d <= 10**5 else 9 if d <= 10**6 else 3)
            tick = _tick_prox(block_ptr, STEP)
            w = np.ones(d)
            calls = {"tick": lambda v=v, tick=tick: tick.call(v)}
            if prox is not None:
                calls["ours"] = lambda v=v, bp=block_ptr, w=w: prox(
                    v, bp, w, counts=None, step=STEP
                )
            times = _interleaved_medians(calls, reps)
            row = out.add(
                part="speed",
                case="one block" if layout is None else "blocks of 50",
                d=d,
                tick_s=times["tick"],
            )
            if prox is not None:
                t_ours = times["ours"]
                ours = np.asarray(prox(v, block_ptr, w, counts=None, step=STEP))
                row.update(
                    ours_s=t_ours,
                    speedup=times["tick"] / t_ours,
                    max_diff_vs_tick=float(np.max(np.abs(ours - tick.call(v)))),
                )
    if prox is not None:
        _accuracy(out, prox, quick)
    _figure(out)
    out.write()
    if prox is None:
        raise EstimatorMissing("binarsity_stats.prox_binarsity is not available yet")


def _interleaved_medians(calls: dict, reps: int) -> dict:
    """Median wall-clock time of each call, the calls alternated ``reps`` times."""
    for fn in calls.values():
        fn()  # warm-up (allocation, caches)
    times: dict = {name: [] for name in calls}
    for _ in range(reps):
        for name, fn in calls.items():
            _, t = timed(fn)
            times[name].append(t)
    return {name: float(np.median(ts)) for name, ts in times.items()}


def _figure(out: SuiteOutput) -> None:
    fig, (ax,) = new_figure()
    for case, style in (("one block", "-"), ("blocks of 50", "--")):
        rows = [r for r in out.rows if r["part"] == "speed" and r["case"] == case]
        d = [r["d"] for r in rows]
        ax.plot(d, [r["tick_s"] for r in rows], "o" + style, color="C1", label=f"tick, {case}")
        if rows and "ours_s" in rows[0]:
            ax.plot(d, [r["ours_s"] for r in rows], "s" + style, color="C0", label=f"ours, {case}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("d (coefficients)")
    ax.set_ylabel("seconds per prox (median)")
    ax.set_title("Binarsity prox, unit weights, equal counts")
    ax.legend()
    save_figure(fig, out.figure_path("times"), out.machine_line())
