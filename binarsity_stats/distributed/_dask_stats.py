"""The statistics of a Dask model's results from per-partition reductions (issue 26).

A model built with ``glm(formula, dask_frame, collect=False)`` keeps its rows on the
workers: every statistic its results report is a sum over rows, computed as one task
per partition and summed in a tree (``_dask_problem._tree_reduce``), so that the client
receives O(d) numbers, never O(n). Each sum uses the package's families (the one
definition of the deviance, Pearson's χ², the log-likelihood).

* :func:`row_statistics` (two passes at the model's construction): rows, weight totals
  and their largest, the weighted count of every level (the penalty weights, the df,
  the importance of a term), the weighted mean and mean absolute deviation of the dense
  columns, the weighted mean and spread of y (the unit of a gaussian jump).
* :func:`null_fit` (one pass without an offset; Fisher scoring on β0, one pass a
  step, with one).
* :func:`fit_statistics` (one pass a fit): deviance, Pearson's χ², the log-likelihood's
  sums at the fit's coefficients.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ._dask import compute
from ._dask_partition import _dense, _n_rows, _weight
from ._dask_problem import _tree_reduce

__all__ = ["RowStatistics", "row_statistics", "null_fit", "fit_statistics",
           "families_on_workers", "reduce_partitions", "partition_eta"]  # fmt: skip


def families_on_workers() -> list[str]:
    """The registered family names whose statistics the workers can reduce.

    Those declaring ``statistics_on_workers`` (their log-likelihood is a sum over rows,
    or the gaussian's closed form of such sums): the names a refusal lists.
    """
    from ..families._families import FAMILIES

    return [name for name, cls in FAMILIES.items() if getattr(cls, "statistics_on_workers", False)]


@dataclass
class RowStatistics:
    """What the results of a model on the workers need of its rows (O(d) numbers).

    Attributes
    ----------
    n_rows : int
        Training rows.
    n_positive : int
        Rows of positive weight.
    sum_w, sum_w2, max_w : float
        Σ s, Σ s², max s (ones without weights).
    level_w : ndarray of shape (d,)
        Σ s over the rows of every level of the code blocks.
    dense_mean, dense_mad : ndarray of shape (q,)
        Weighted mean z̄ and mean absolute deviation Σ s |z − z̄| / Σ s of every dense
        column.
    dense_min, dense_max : ndarray of shape (q,)
        The smallest and largest value of every dense column.
    y_mean, y_sd : float
        Weighted mean and standard deviation of y.
    r_var : float
        Weighted variance of y − offset (gaussian's null dispersion, the φ̂₀ of
        ``lam="theory"``).
    has_offset : bool
        Whether the rows have an offset.
    offset_max : float
        The largest offset (0 without one).
    y_binary : bool
        Whether every y is 0 or 1 (Pearson's dispersion of a binary family is then no
        test of over-dispersion: ``_statistics.dispersion_informative``).
    """

    n_rows: int
    n_positive: int
    sum_w: float
    sum_w2: float
    max_w: float
    level_w: np.ndarray
    dense_mean: np.ndarray
    dense_mad: np.ndarray
    dense_min: np.ndarray
    dense_max: np.ndarray
    y_mean: float
    y_sd: float
    r_var: float
    has_offset: bool
    offset_max: float
    y_binary: bool


def _first(part: dict, block_ptr: np.ndarray, q: int) -> dict:
    """Pass 1 of one partition: counts, weight totals, weighted sums of y and z."""
    n = _n_rows(part)
    sw = _weight(part, n)
    codes = np.asarray(part["codes"])
    bp = np.asarray(block_ptr)
    level_w = np.zeros(int(bp[-1]))
    for j in range(len(bp) - 1):
        s, e = int(bp[j]), int(bp[j + 1])
        level_w[s:e] = np.bincount(codes[j].astype(np.intp), weights=sw, minlength=e - s)
    Z = _dense(part, n, q)
    y = np.asarray(part["y"], dtype=np.float64)
    off = part.get("offset")
    off = np.zeros(n) if off is None else np.asarray(off, dtype=np.float64)
    return {
        "sum_wr": float(sw @ (y - off)),
        "max_offset": float(off.max()) if n else -np.inf,
        "rows": n, "positive": int(np.count_nonzero(sw > 0)), "sum_w": float(sw.sum()),
        "sum_w2": float(sw @ sw), "max_w": float(sw.max()) if n else 0.0,
        "level_w": level_w, "sum_wz": sw @ Z, "sum_wy": float(sw @ y),
        "min_z": Z.min(axis=0) if n else np.full(q, np.inf),
        "max_z": Z.max(axis=0) if n else np.full(q, -np.inf),
        "offset": int(part.get("offset") is not None),
        "not_binary": int(np.count_nonzero((y != 0) & (y != 1))),
    }  # fmt: skip


def _second(part: dict, q: int, y_mean: float, z_mean: np.ndarray, r_mean: float) -> dict:
    """Pass 2 of one partition: the spread of y, y − offset and the dense columns about
    their means."""
    n = _n_rows(part)
    sw = _weight(part, n)
    y = np.asarray(part["y"], dtype=np.float64)
    off = part.get("offset")
    r = y if off is None else y - np.asarray(off, dtype=np.float64)
    Z = _dense(part, n, q)
    return {"ss_y": float(sw @ (y - y_mean) ** 2), "abs_z": sw @ np.abs(Z - z_mean),
            "ss_r": float(sw @ (r - r_mean) ** 2)}  # fmt: skip


def _reduce(fn: Any, parts: list, *args: Any, client: Any = None, what: str) -> dict:
    from dask import delayed

    tasks = [delayed(fn, pure=True)(p, *args) for p in parts]
    root, _ = _tree_reduce(tasks)
    (out,) = compute(root, client=client, what=what)
    return out


def reduce_partitions(fn: Any, design: Any, *args: Any, client: Any = None,
                      what: str) -> dict:  # fmt: skip
    """``fn(partition, *args)`` on every partition of a Dask design, summed in a tree.

    The one way the modelling layer reduces the rows it keeps on the workers (the
    distributed refit, ``model/_refit_dask``): each task returns a dict of numbers or
    arrays, summed key by key (a key starting ``max_``/``min_``: the largest/smallest);
    the client receives the root only. The computation goes through
    ``_dask.compute`` (its timeouts).

    Parameters
    ----------
    fn : callable
        ``fn(part, *args) -> dict`` (``part``: a partition dict of :class:`DaskDesign`).
    design : DaskDesign
        The persisted design.
    *args
        Shipped with every task (keep them small: O(d²) numbers).
    client : distributed.Client, optional
        Where to compute.
    what : str
        The computation, for a timeout's message.

    Returns
    -------
    dict
        The reduced statistics.
    """
    return _reduce(fn, design.partitions, *args, client=client, what=what)


def partition_eta(part: dict, block_ptr: np.ndarray, coef: np.ndarray,
                  dense_coef: np.ndarray, intercept: float) -> np.ndarray:  # fmt: skip
    """η = offset + β0 + Σ_j θ_j[c_ij] + Z β of one partition's rows (a penalised fit's).

    Parameters
    ----------
    part : dict
        A partition of a :class:`DaskDesign`.
    block_ptr : ndarray of shape (p + 1,)
        Offsets of the blocks in θ.
    coef, dense_coef, intercept
        The engine's θ, β and β0.

    Returns
    -------
    ndarray of shape (n_i,)
    """
    return _eta(part, np.asarray(block_ptr), np.asarray(coef, dtype=np.float64),
                np.asarray(dense_coef, dtype=np.float64).reshape(-1),
                float(intercept))  # fmt: skip


def row_statistics(design: Any, client: Any = None) -> RowStatistics:
    """The row statistics of a Dask design (two passes; module docstring).

    Parameters
    ----------
    design : DaskDesign
        The persisted design (``partitions`` of dicts with ``codes``, ``y``, ``weight``,
        ``dense``, ``offset``).
    client : distributed.Client, optional
        Where to compute.

    Returns
    -------
    RowStatistics
    """
    q = int(design.n_dense)
    first = _reduce(_first, design.partitions, design.block_ptr, q, client=client,
                    what="the counts and weight totals of the rows")  # fmt: skip
    W = first["sum_w"]
    y_mean = first["sum_wy"] / W
    z_mean = np.asarray(first["sum_wz"], dtype=np.float64).reshape(q) / W
    r_mean = first["sum_wr"] / W
    second = _reduce(_second, design.partitions, q, y_mean, z_mean, r_mean, client=client,
                     what="the spread of the response and the dense columns")  # fmt: skip
    return RowStatistics(
        n_rows=int(first["rows"]), n_positive=int(first["positive"]), sum_w=float(W),
        sum_w2=float(first["sum_w2"]), max_w=float(first["max_w"]),
        level_w=np.asarray(first["level_w"], dtype=np.float64), dense_mean=z_mean,
        dense_mad=np.asarray(second["abs_z"], dtype=np.float64).reshape(q) / W,
        dense_min=np.asarray(first["min_z"], dtype=np.float64).reshape(q),
        dense_max=np.asarray(first["max_z"], dtype=np.float64).reshape(q),
        y_mean=float(y_mean), y_sd=float(np.sqrt(max(second["ss_y"], 0.0) / W)),
        r_var=float(max(second["ss_r"], 0.0) / W), has_offset=bool(first["offset"]),
        offset_max=float(first["max_offset"]) if first["offset"] else 0.0,
        y_binary=not first["not_binary"],
    )  # fmt: skip


def _eta(part: dict, block_ptr: np.ndarray, coef: np.ndarray, dense_coef: np.ndarray,
         intercept: float) -> np.ndarray:  # fmt: skip
    """η = offset + β0 + Σ_j θ_j[c_ij] + Z β of one partition's rows."""
    n = _n_rows(part)
    codes = np.asarray(part["codes"])
    eta = np.full(n, float(intercept))
    for j in range(len(block_ptr) - 1):
        eta += coef[int(block_ptr[j]) + codes[j].astype(np.intp)]
    if dense_coef.size:
        eta += _dense(part, n, dense_coef.size) @ dense_coef
    off = part.get("offset")
    if off is not None:
        eta += np.asarray(off, dtype=np.float64)
    return eta


def _at_fit(part: dict, block_ptr, coef, dense_coef, intercept, family, scale: float,
            weights_kind: str | None, top: float) -> dict:  # fmt: skip
    """One partition's sums at a fit: deviance, Pearson's χ², the log-likelihood's."""
    n = _n_rows(part)
    sw = _weight(part, n)
    unit = sw / scale
    y = np.asarray(part["y"], dtype=np.float64)
    eta = _eta(part, block_ptr, coef, dense_coef, intercept)
    mu = family.mean(eta)
    out = {
        "deviance": float(family.deviance_eta(y, eta, unit)),
        "pearson": float(family.pearson_chi2(y, mu, unit)),
    }
    var_w = sw if weights_kind == "analytic" else None
    freq_w = sw if weights_kind == "freq" else None
    if family.profiled_log_likelihood:  # the closed form's sums (Gaussian.log_likelihood)
        v = np.ones(n) if var_w is None else var_w / top
        f = np.ones(n) if freq_w is None else freq_w
        pos = (f > 0) & (v > 0)
        out["nobs"] = float(np.sum(f))
        out["f_v_r2"] = float(np.sum(f * v * (y - mu) ** 2))
        out["log_v"] = float(np.sum(f[pos] * np.log(v[pos])))
    else:  # a sum over rows (Family.log_likelihood), a zero analytic weight left out
        keep = slice(None) if var_w is None else var_w > 0
        out["llf"] = float(family.log_likelihood(
            y[keep], mu[keep], var_weights=None if var_w is None else var_w[keep],
            freq_weights=freq_w,
        ))  # fmt: skip
    return out


def fit_statistics(design: Any, family: Any, coef: np.ndarray, dense_coef: np.ndarray,
                   intercept: float, stats: RowStatistics, weights_kind: str | None,
                   client: Any = None) -> dict:  # fmt: skip
    """Deviance, Pearson's χ² and log-likelihood of a fit, from one pass.

    Parameters
    ----------
    design : DaskDesign
        The persisted design.
    family : Family
        A family with ``statistics_on_workers`` (:func:`families_on_workers`).
    coef, dense_coef, intercept
        The engine's θ, β and β0 (θ as the engine's blocks hold them).
    stats : RowStatistics
        The model's row statistics (the weights' largest).
    weights_kind : {"analytic", "freq"} or None
        What the weights are (None: unweighted).
    client : distributed.Client, optional
        Where to compute.

    Returns
    -------
    dict
        ``deviance`` and ``pearson`` (on the weights divided by the power of two
        ``normalized_weights`` takes, as the in-memory results sum them), ``llf``.
    """
    from ..core._rows import normalized_weights

    scale = normalized_weights(np.array([stats.max_w]))[1]
    coef = np.asarray(coef, dtype=np.float64)
    dense_coef = np.asarray(dense_coef, dtype=np.float64).reshape(-1)
    out = _reduce(_at_fit, design.partitions, np.asarray(design.block_ptr), coef, dense_coef,
                  float(intercept), family, scale, weights_kind, stats.max_w, client=client,
                  what="the deviance and Pearson's statistic of the fit")  # fmt: skip
    if family.profiled_log_likelihood:
        nobs = out["nobs"]
        var = out["f_v_r2"] / nobs
        llf = np.inf if var <= 0 else -nobs / 2 * (np.log(2 * np.pi * var) + 1) + out["log_v"] / 2
    else:
        llf = out["llf"]
    return {"deviance": out["deviance"] * scale, "pearson": out["pearson"] * scale,
            "llf": float(llf)}  # fmt: skip


def _null_pass(part: dict, family: Any, b0: float, scale: float) -> dict:
    """Loss, gradient and curvature of one partition at the constant η = β0 + offset."""
    n = _n_rows(part)
    unit = _weight(part, n) / scale
    y = np.asarray(part["y"], dtype=np.float64)
    off = part.get("offset")
    eta = np.full(n, b0) if off is None else b0 + np.asarray(off, dtype=np.float64)
    g, h = np.empty(n), np.empty(n)
    f = family.grad_hess(eta, y, unit, 1.0, g, h) if n else 0.0
    return {"loss": float(f), "g": float(g.sum()), "h": float(h.sum()),
            "deviance": float(family.deviance_eta(y, eta, unit))}  # fmt: skip


def null_fit(design: Any, family: Any, fit_intercept: bool, stats: RowStatistics,
             client: Any = None) -> tuple[float, float]:  # fmt: skip
    """The intercept and deviance of the intercept(+offset)-only model, as in memory.

    Without an offset β0 = g(ȳ) (``Family.null_intercept`` of the weighted mean); with
    one, the Fisher scoring of ``Family.null_intercept`` (a step halved until the loss
    drops), one pass a trial.

    Parameters
    ----------
    design : DaskDesign
        The persisted design.
    family : Family
        The fitted family.
    fit_intercept : bool
        Without an intercept the null model is the offset alone.
    stats : RowStatistics
        The model's row statistics.
    client : distributed.Client, optional
        Where to compute.

    Returns
    -------
    b0 : float
        The null model's intercept (0 without one).
    deviance : float
        Its deviance, in the weights' units.
    """
    from ..core._rows import normalized_weights

    scale = normalized_weights(np.array([stats.max_w]))[1]

    def at(b0: float) -> dict:
        return _reduce(_null_pass, design.partitions, family, float(b0), scale,
                       client=client, what="the null model's deviance")  # fmt: skip

    b0 = 0.0
    if fit_intercept:
        b0 = float(family.null_intercept(np.array([stats.y_mean]), np.array([1.0])))
    cur = at(b0)
    if fit_intercept and stats.has_offset:
        for _ in range(100):
            if not (cur["h"] > 0 and np.isfinite(cur["g"])):
                break
            step = cur["g"] / cur["h"]
            limit = cur["loss"] + 1e-12 * abs(cur["loss"])
            for _ in range(60):
                new = at(b0 - step)
                if np.isfinite(new["loss"]) and new["loss"] <= limit:
                    break
                step *= 0.5
            else:
                break
            b0 -= step
            converged = abs(step) <= 1e-14 * max(1.0, abs(b0))
            cur = new
            if converged:
                break
    return float(b0), float(cur["deviance"] * scale)
