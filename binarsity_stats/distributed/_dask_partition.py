"""What the Dask fit computes in one partition of the rows: the first pass's summary
(counts, sums, dense scales, fold sizes), the statistics at a point (loss, the working
gradient's bin and free-column sums, the curvature-weighted Gram, exact or sampled) and
the loss at candidate steps; partitions of in-memory arrays and the fold of each row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core._validation import check_codes
from ..design._design import BinnedDesign

__all__ = [
    "partitions_from_arrays",
]


_STEPS = (1.0, 0.5, 0.1)


# --------------------------------------------------------------------- partitions


def partitions_from_arrays(codes, y, *, dense=None, weight=None, offset=None, n_parts=4):
    """Split in-memory arrays into ``dask.delayed`` partitions (tests and examples).

    Parameters
    ----------
    codes : ndarray of shape (p, n)
        Bin codes.
    y : ndarray of shape (n,)
        Response.
    dense : ndarray of shape (n, q), optional
        Dense columns.
    weight, offset : ndarray of shape (n,), optional
        Row weights and offset.
    n_parts : int
        Number of partitions (contiguous row ranges).

    Returns
    -------
    list of dask.delayed
        Each yields ``dict(codes=, y=, dense=, weight=, offset=)`` for its rows.
    """
    from dask import delayed

    n = np.shape(y)[0]
    cuts = np.linspace(0, n, n_parts + 1).astype(int)
    parts = []
    for a, b in zip(cuts[:-1], cuts[1:], strict=False):
        part = {
            "codes": np.ascontiguousarray(np.asarray(codes)[:, a:b]),
            "y": np.asarray(y, dtype=np.float64)[a:b],
            "dense": None if dense is None else np.asarray(dense, dtype=np.float64)[a:b],
            "weight": None if weight is None else np.asarray(weight, dtype=np.float64)[a:b],
            "offset": None if offset is None else np.asarray(offset, dtype=np.float64)[a:b],
        }
        parts.append(delayed(part, traverse=False))
    return parts


def _row_hash(index: int, n: int, salt: int) -> np.ndarray:
    """splitmix64 of (partition, row, salt): reproducible pseudo-random bits per row."""
    with np.errstate(over="ignore"):
        z = np.uint64(index) * np.uint64(0x100000000) + np.arange(n, dtype=np.uint64)
        z = z + np.uint64(0x9E3779B97F4A7C15) * np.uint64(1 + 2 * salt)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return z


def fold_of(part: dict, index: int, K: int) -> np.ndarray:
    """Fold ids of a partition's rows: its ``fold`` column.

    The folds are the shared CV's (``engine/_folds``: stratified, grouped or the user's),
    given to the partitions by ``_dask_backend.DaskPathData.with_folds``.
    """
    fold = part.get("fold")
    n = np.shape(part["y"])[0]
    if fold is None:
        raise ValueError(
            f"folds={K}: partition {index} has no fold column; give the folds of the rows "
            "(DaskPathData.with_folds, or a 'fold' array in every partition)."
        )
    fold = np.asarray(fold)
    if fold.shape != (n,) or fold.dtype.kind not in "iu":
        raise ValueError("fold must be an integer column of the partition's length.")
    if n and (fold.min() < 0 or fold.max() >= K):
        raise ValueError(f"fold ids must lie in [0, {K - 1}] (folds={K}).")
    return fold.astype(np.int64)


# --------------------------------------------------------------------- per partition


def _summary(part: dict, block_ptr: np.ndarray, family, q: int, index: int, K: int) -> dict:
    """Pass 1 on one partition: rows, weights, bin counts, moments of y and Z (validated)."""
    codes = check_codes(np.asarray(part["codes"]), block_ptr)
    p, n = codes.shape
    y = np.asarray(part["y"], dtype=np.float64).ravel()
    if y.shape != (n,):
        raise ValueError(f"y has {y.shape[0]} rows but the partition's codes have {n}.")
    if not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or infinite values.")
    family.validate_y(y, proportions=True)
    sw = _weight(part, n, check=True)
    off = part.get("offset")
    if off is not None:
        off = np.asarray(off, dtype=np.float64)
        if off.shape != (n,) or not np.all(np.isfinite(off)):
            raise ValueError("offset must be finite, one value per row.")
        family.check_offset(off)
    Z = _dense(part, n, q, check=True)
    design = BinnedDesign._trusted(codes, block_ptr, None, None, None, None)
    fold = fold_of(part, index, K) if K else None
    out = {
        "n": float(n),
        "W": float(sw.sum()),
        "max_w": float(sw.max()) if n else 0.0,
        "counts": design.histograms(sw),
        "sy": float(sw @ y),
        "syy": float(sw @ (y * y)),
        "sz": sw @ Z if q else np.zeros(0),
        "max_z": Z.max(axis=0) if q and n else np.full(q, -np.inf),
        "min_z": Z.min(axis=0) if q and n else np.full(q, np.inf),
        "max_off": float(off.max()) if off is not None and n else -np.inf,
    }
    if K:
        out["fold_counts"] = np.stack(
            [design.histograms(np.where(fold == k, sw, 0.0)) for k in range(K)]
        )
        out["fold_W"] = np.bincount(fold, weights=sw, minlength=K)
    return out


def _saturated(part: dict, setup: _Setup, index: int, eta0: float) -> dict:
    """The saturated loss of every fold's rows (unit weights): Σ s (ℓ − dev / 2), read
    at any η (here the constant ``eta0``), a function of y only; with the folds'
    held-out losses it gives their held-out deviances."""
    rows = _Rows(part, setup)
    fid = fold_of(part, index, setup.K)
    fam = setup.family
    eta = np.full(rows.n, float(eta0))
    mu = fam.mean(eta)
    sat = np.empty(setup.K)
    for k in range(setup.K):
        w = np.where(fid == k, rows.sw, 0.0)
        sat[k] = fam.loss_sum(eta, rows.y, w) - 0.5 * fam.deviance(rows.y, mu, w)
    return {"sat": sat}


def _with_fold(part: dict, fold: np.ndarray) -> dict:
    """A partition with the fold id of each of its rows (a CV's folds, given)."""
    n = np.asarray(part["codes"]).shape[1]
    if fold.shape != (n,):
        raise ValueError(f"fold ids: {fold.shape[0]} for a partition of {n} rows.")
    return dict(part, fold=fold)


def _n_rows(part: dict) -> int:
    """Rows of a partition."""
    return int(np.asarray(part["codes"]).shape[1])


def _weight(part: dict, n: int, check: bool = False) -> np.ndarray:
    sw = part.get("weight")
    if sw is None:
        return np.ones(n)
    sw = np.asarray(sw, dtype=np.float64).ravel()
    if check and (sw.shape != (n,) or not np.all(np.isfinite(sw)) or np.any(sw < 0)):
        raise ValueError("weight must be finite and non-negative, one value per row.")
    return sw


def _dense(part: dict, n: int, q: int, check: bool = False) -> np.ndarray:
    Z = part.get("dense")
    if Z is None:
        if q:
            raise ValueError(f"dense: the design has {q} dense columns; a partition has none.")
        return np.zeros((n, 0))
    Z = np.asarray(Z, dtype=np.float64)
    if Z.ndim == 1:
        Z = Z[:, None]
    if check and (Z.shape != (n, q) or not np.all(np.isfinite(Z))):
        raise ValueError(f"dense must be finite with shape ({n}, {q}) in every partition.")
    return Z


@dataclass
class _Setup:
    """What a partition needs to evaluate a point (small; shipped with every task)."""

    block_ptr: np.ndarray
    family: object
    q: int
    fit_intercept: bool
    unit: float  # user weights × unit = the solver's weights
    center: np.ndarray
    scale: np.ndarray
    K: int = 0
    gram_fraction: float = 1.0

    @property
    def n_free(self) -> int:
        return self.q + int(self.fit_intercept)


class _Rows:
    """One partition's rows as the passes use them: y, unit weights, the free columns
    U = [1, (Z − center) / scale] and the bin codes, and η at a point (θ, free)."""

    def __init__(self, part: dict, setup: _Setup) -> None:
        codes = np.asarray(part["codes"])
        self.n = n = codes.shape[1]
        self.y = np.asarray(part["y"], dtype=np.float64).ravel()
        self.sw = _weight(part, n) * setup.unit
        self.offset = part.get("offset")
        Z = _dense(part, n, setup.q)
        self.U = U = np.empty((n, setup.n_free))
        if setup.fit_intercept:
            U[:, 0] = 1.0
        if setup.q:
            U[:, int(setup.fit_intercept) :] = (Z - setup.center) / setup.scale
        self.design = BinnedDesign._trusted(codes, setup.block_ptr, None, None, None, None)

    def eta(self, theta: np.ndarray, free: np.ndarray, offset: bool = True) -> np.ndarray:
        """η = U free (+ offset) + X^B θ on these rows."""
        eta = self.U @ free if self.U.shape[1] else np.zeros(self.n)
        if offset and self.offset is not None:
            eta += np.asarray(self.offset, dtype=np.float64)
        self.design.gather_add(theta, eta)
        return eta


def _point(part: dict, setup: _Setup, index: int, x, dx, gram: bool, fold: int) -> dict:
    """One partition at x + dx: loss, gradient, Gram (optional), losses at x + t dx.

    ``fold`` ≥ 0 uses the rows outside that fold (and reports the held-out loss on its
    rows); -2 returns the statistics of every fold separately (stacked, for CV from one
    pass); -1 uses every row.
    """
    rows = _Rows(part, setup)
    n, y, sw, U, design = rows.n, rows.y, rows.sw, rows.U, rows.design
    d = int(setup.block_ptr[-1])
    eta_of = rows.eta
    theta, free = x
    eta0 = eta_of(theta, free)
    if dx is not None:
        deta = eta_of(dx[0], dx[1], offset=False)
        eta = eta0 + deta
    else:
        eta = eta0
    fam = setup.family
    out = {}
    if fold >= 0 or fold == -2:
        fid = fold_of(part, index, setup.K)
    if fold >= 0:
        test = fid == fold
        out["test_loss"] = fam.loss_sum(eta, y, np.where(test, sw, 0.0))
        sw = np.where(test, 0.0, sw)
    r, h = np.empty(n), np.empty(n)
    if dx is not None:
        out["loss_t"] = np.array([fam.loss_sum(eta0 + t * deta, y, sw) for t in _STEPS[1:]])
    groups = [sw] if fold != -2 else [np.where(fid == k, sw, 0.0) for k in range(setup.K)]
    stats = []
    for w in groups:
        loss = fam.grad_hess(eta, y, w, 1.0, r, h)
        g = np.concatenate([design.histograms(r), U.T @ r])
        one = {"loss": loss, "g": g}
        if gram:
            one["M"] = _sampled_gram(design, U, h, d, setup.gram_fraction, index)
        stats.append(one)
    if fold == -2:
        for key in stats[0]:
            out[key] = np.stack([np.asarray(s[key]) for s in stats])
    else:
        out.update(stats[0])
    return out


def _candidates(part: dict, setup: _Setup, index: int, x, steps: list, fold: int) -> dict:
    """One partition at x + s for every candidate step s: loss, gradient, bin curvature.

    The histogram solver's pass (d floats per candidate, no Gram): the loss, the working
    gradient's bin and free-column sums, the curvature's bin sums and the free columns'
    curvature Gram at every candidate point; ``fold`` ≥ 0 as in :func:`_point`.
    """
    rows = _Rows(part, setup)
    n, y, sw, U, design = rows.n, rows.y, rows.sw, rows.U, rows.design
    fam = setup.family
    test = None
    if fold >= 0:
        test = fold_of(part, index, setup.K) == fold
        sw_test = np.where(test, sw, 0.0)
        sw = np.where(test, 0.0, sw)
    keys = ("loss", "g", "H", "UU") + (("test_loss",) if test is not None else ())
    out = {k: [] for k in keys}
    r, h = np.empty(n), np.empty(n)
    for step in steps:
        eta = rows.eta(x[0] + step[0], x[1] + step[1])
        out["loss"].append(fam.grad_hess(eta, y, sw, 1.0, r, h))
        gb, hb = design.histograms2(r, h)
        out["g"].append(np.concatenate([gb, U.T @ r]))
        out["H"].append(hb)
        out["UU"].append(U.T @ (h[:, None] * U))
        if test is not None:
            out["test_loss"].append(fam.loss_sum(eta, y, sw_test))
    return {k: np.asarray(v) for k, v in out.items()}


def _gram(design: BinnedDesign, U: np.ndarray, h: np.ndarray, d: int) -> np.ndarray:
    """[X^B, U]ᵀ diag(h) [X^B, U] for one partition (design.md §9)."""
    m = U.shape[1]
    M = np.empty((d + m, d + m))
    M[:d, :d] = _bin_gram(design, h)
    if m:
        hU = h[:, None] * U
        bf = np.stack([design.histograms(np.ascontiguousarray(hU[:, c])) for c in range(m)], 1)
        M[:d, d:] = bf
        M[d:, :d] = bf.T
        M[d:, d:] = U.T @ hU
    return M


def _sampled_gram(design, U, h, d, fraction: float, index: int) -> np.ndarray:
    """The Gram of one partition, from a fixed sample of its rows when ``fraction`` < 1.

    A proximal-Newton step needs a good metric, not the exact Hessian (the gradient
    and the line search are exact, so the solution is): the Gram of a row sample
    (the same rows on every pass, a hash of (partition, row)) scaled by 1/fraction, plus
    the diagonal's shortfall from its exact value, which keeps it positive semidefinite
    and every bin's curvature exact.
    """
    if fraction >= 1.0:
        return _gram(design, U, h, d)
    keep = _row_hash(index, design.n_rows, 1) < np.uint64(fraction * 2.0**64)
    sub = BinnedDesign._trusted(np.ascontiguousarray(design.codes[:, keep]), design.block_ptr,
                                None, None, None, None)  # fmt: skip
    M = _gram(sub, np.ascontiguousarray(U[keep]), np.ascontiguousarray(h[keep]), d)
    M /= fraction
    exact = np.concatenate([design.histograms(h), np.einsum("ij,ij,i->j", U, U, h)])
    idx = np.arange(M.shape[0])
    M[idx, idx] += np.maximum(exact - M[idx, idx], 0.0)
    return M


def _bin_gram(design: BinnedDesign, h: np.ndarray) -> np.ndarray:
    """X^Bᵀ diag(h) X^B on one thread (a worker's task is one core's work)."""
    try:
        from ..design._gram_stats import bin_pair_gram
    except ImportError:  # before the Gram kernel (issue 15) is built
        return design.gram(h)
    return bin_pair_gram(design.codes, design.block_ptr, h, n_threads=1,
                         diagonal=design.histograms(h))  # fmt: skip


def _combine(*items: dict) -> dict:
    """Sum of partition statistics (max/min for the keys so named)."""
    out = {}
    for key in items[0]:
        vals = [it[key] for it in items]
        if key.startswith("max_"):
            out[key] = np.maximum.reduce(vals) if np.ndim(vals[0]) else max(vals)
        elif key.startswith("min_"):
            out[key] = np.minimum.reduce(vals) if np.ndim(vals[0]) else min(vals)
        else:
            out[key] = sum(vals[1:], vals[0]) if len(vals) > 1 else vals[0]
    return out


def _nbytes(stats: dict) -> int:
    return int(sum(np.asarray(v).nbytes for v in stats.values()))
