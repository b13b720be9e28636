"""Suite ``grid``: the pair term's grid block step and the fit's time with a pair (issue 25).

Two parts, on simulated data (no data folder needed):

* **The block step alone** (``part="step"``): ``grid_block_step`` on K × K grids (16 and
  32 per axis) of a simulated pair — cell counts of a correlated (a, b), targets a step
  surface plus noise, curvature the cells' share of the rows — at λ = 0.3, 0.7 and 1.5 ×
  the block's λ_max (regions, a coarse surface, the empty surface), cold and warm
  started (from the cold step's multipliers, at targets moved by 1 % noise: a CD sweep's
  next step). Reported: the dual ascent's sweeps, the LPs solved (HiGHS), the certified
  duality gap and the time per step (median of ``repeats``).
* **The fit** (``part="fit"``): ``glm("y ~ bin(a,K) + bin(b,K) + bin(a,K):bin(b,K)")`` at
  the default (theory) λ, gaussian and binomial, n = 2e3 and 2e4 (2e5 in the full run),
  K = 16 and 32, on a truth with a smooth interaction (``smooth``) and with a step
  interaction (``step``); against the main-effects fit ``y ~ bin(a,K) + bin(b,K)`` on
  the same rows. Reported: both times (median of ``repeats``, formula and binning
  included), their ratio, the grid steps and LPs of the pair fit, its KKT violation and
  the pair's regions. The aim of issue 25: a 16 × 16 pair at n = 2e4 within 3× the main
  effects.

The LPs and steps are counted by wrapping ``penalty._grid``'s functions for the run.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from ._common import SuiteOutput


class _Counter:
    """Counts calls of ``_grid._edge_lp`` and ``grid_block_step`` (wrapped in place)."""

    def __enter__(self):
        from binarsity_stats.engine import _cd
        from binarsity_stats.penalty import _grid

        self._grid, self._cd = _grid, _cd
        self._lp, self._step = _grid._edge_lp, _grid.grid_block_step
        self.lps = self.steps = self.sweeps = 0

        def lp(*args, **kwargs):
            self.lps += 1
            return self._lp(*args, **kwargs)

        def step(*args, **kwargs):
            res = self._step(*args, **kwargs)
            self.steps += 1
            self.sweeps += res.n_iter
            return res

        _grid._edge_lp = lp
        _grid.grid_block_step = step
        _cd.grid_block_step = step
        return self

    def __exit__(self, *exc):
        self._grid._edge_lp = self._lp
        self._grid.grid_block_step = self._step
        self._cd.grid_block_step = self._step
        return False


def _step_case(K: int, seed: int = 0):
    """A K × K pair block as a fit sees it: counts, weights, targets, curvature."""
    from binarsity_stats.penalty._grid import grid_block, grid_weights

    rng = np.random.default_rng(seed)
    n = 20_000
    a = rng.normal(size=n)
    b = 0.5 * a + rng.normal(size=n)
    ka = np.searchsorted(np.quantile(a, np.linspace(0, 1, K + 1)[1:-1]), a)
    kb = np.searchsorted(np.quantile(b, np.linspace(0, 1, K + 1)[1:-1]), b)
    counts = np.bincount(ka * K + kb, minlength=K * K).reshape(K, K).astype(float)
    wa, wb = grid_weights(counts, "theory")
    block = grid_block(counts > 0, (K, K), wa, wb)
    n_c = counts.ravel()[block.cells]
    k, l = block.cell_rows()
    surface = 0.3 * ((k >= K // 2) & (l >= K // 3)) - 0.2 * (l >= 2 * K // 3)
    h = n_c / n
    # the targets of a block step: the surface plus the noise of the cell means
    z = surface + rng.normal(size=len(n_c)) / np.sqrt(n_c)
    return block, z, h, n_c


def _median_time(fn, repeats: int):
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), out


def _steps(out: SuiteOutput, quick: bool, repeats: int) -> None:
    from binarsity_stats.penalty._grid import grid_block_step, grid_lambda_max

    for K in (16, 32):
        block, z, h, n_c = _step_case(K)
        lmax = grid_lambda_max(block, -h * z, n_c)
        rng = np.random.default_rng(1)
        z2 = z + 0.01 * np.abs(z).max() * rng.normal(size=len(z))
        for share in (0.3, 1.5) if quick else (0.3, 0.7, 1.5):
            lam = share * lmax
            for start in ("cold", "warm"):
                with _Counter() as c:
                    if start == "cold":
                        sec, res = _median_time(lambda: grid_block_step(block, z, h, lam, n_c), repeats)
                    else:
                        u0 = grid_block_step(block, z, h, lam, n_c).u
                        c.lps = 0
                        sec, res = _median_time(
                            lambda: grid_block_step(block, z2, h, lam, n_c, warm_u=u0), repeats
                        )
                    lps = c.lps // max(repeats, 1)
                regions = len(np.unique(res.theta))
                out.add(part="step", grid=f"{K}x{K}", cells=block.n_cells, lam_share=share,
                        start=start, sweeps=res.n_iter, lps=lps, gap=f"{res.gap:.1e}",
                        converged=res.converged, regions=regions,
                        ms_per_step=round(1e3 * sec, 1))  # fmt: skip


def _frame(n: int, family: str, truth: str, seed: int = 0):
    import pandas as pd

    rng = np.random.default_rng(seed)
    a = rng.normal(size=n)
    b = rng.uniform(size=n)
    if truth == "step":
        eta = 0.4 * (a > 0) - 0.3 * (b > 0.5) + 0.6 * ((a > 0) & (b > 0.5))
    else:
        eta = 0.5 * a + np.sin(3 * b) + 0.8 * a * (b - 0.5)
    if family == "gaussian":
        y = eta + rng.normal(size=n)
    else:
        y = rng.binomial(1, 1 / (1 + np.exp(-eta))).astype(float)
    return pd.DataFrame({"a": a, "b": b, "y": y})


def _fits(out: SuiteOutput, quick: bool, repeats: int) -> None:
    import binarsity_stats as bs

    sizes = (2_000, 20_000) if quick else (2_000, 20_000, 200_000)
    for family in ("gaussian", "binomial"):
        for truth in ("smooth", "step"):
            for n in sizes:
                for K in (16, 32):
                    if K == 32 and (n < 20_000 or (quick and truth == "step")):
                        continue
                    df = _frame(n, family, truth)
                    mains = f"y ~ bin(a, {K}) + bin(b, {K})"
                    pair = mains + f" + bin(a, {K}):bin(b, {K})"
                    bs.glm(mains, df, family=family).fit()  # warm the imports
                    t_main, _ = _median_time(lambda: bs.glm(mains, df, family=family).fit(), repeats)
                    with _Counter() as c:
                        t_pair, res = _median_time(lambda: bs.glm(pair, df, family=family).fit(), repeats)
                        steps, lps = c.steps // repeats, c.lps // repeats
                    sol = res.solution
                    binned = res.model.binned
                    j = next(i for i, k in enumerate(binned.kinds) if k == "grid")
                    cells = sol.coef[binned.block_ptr[j] :][: binned.kinds[j].block.n_cells]
                    regions = len(np.unique(cells))
                    out.add(part="fit", family=family, truth=truth, n=n, grid=f"{K}x{K}",
                            main_s=round(t_main, 3), pair_s=round(t_pair, 3),
                            ratio=round(t_pair / t_main, 1), grid_steps=steps, lps=lps,
                            kkt=f"{sol.kkt_violation:.1e}", converged=sol.converged,
                            regions=regions)  # fmt: skip


def run(out: SuiteOutput, quick: bool, data_dir: Path, repeats: int = 3, **_: object) -> None:
    """Run the suite and fill ``out``.

    Parameters
    ----------
    out : SuiteOutput
        Collector of the rows.
    quick : bool
        n up to 2e4, λ at 0.3 and 1.5 λ_max for the steps, no 32 × 32 fit of the step
        truth, one repeat (full: n up to 2e5, three λ and ``repeats``).
    data_dir : Path
        Unused (simulated data).
    repeats : int
        Timing repeats (the median is reported).
    """
    reps = 1 if quick else repeats
    _steps(out, quick, reps)
    _fits(out, quick, reps)
    out.note("step: λ as a share of the block's λ_max at its targets; warm = from the cold "
             "step's multipliers at targets moved by 1 % noise")  # fmt: skip
    out.note("fit: glm(...).fit() at the theory λ, formula and binning included; ratio = "
             "pair fit / main-effects fit")  # fmt: skip
    out.write()
