"""The solver data protocol and its in-memory implementation (design.md §4, §9).

The solvers (``_solvers``: CD and FISTA) see the data of a fit only through the
operations of :class:`SolverData`: the linear predictor, the loss and its working
gradient/curvature, their per-bin histograms, products with the unpenalised columns,
the KKT check and, for CD, one exact Gauss–Seidel sweep over a set of blocks. They never
read codes, rows or private buffers. :class:`InMemoryProblem` implements it over one
:class:`~binarsity_stats._design.BinnedDesign` held in memory; a distributed backend
(issue 15) implements the same operations over partitions of the rows, adding up the
per-partition histograms.

Row vectors (η, the working gradient r and curvature h, the CD quadratic model's z and
Δη) are whatever the implementation returns (here NumPy arrays); the solvers only pass
them back or combine them elementwise (``+``, ``*``).
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from . import _cd_fast, _dense
from ._design import BinnedDesign
from ._families import Family, get_family
from ._penalty import BinarsityPenalty
from ._validation import check_bool, check_offset_loss

__all__ = ["SolverData", "InMemoryProblem"]


class SolverData(Protocol):
    """What a solver may ask of the data of one fit (the solvers' only access to it).

    The objective is F = (1/W) Σ_i s_i [b(η_i) − y_i η_i] + λ pen(θ) with
    η = offset + β0 + X^B θ + Z β (design.md §1); the dense columns Z are those of the
    implementation (it may centre and scale them; ``dense_center``/``dense_scale``
    convert β and β0 back).

    Attributes
    ----------
    n_rows, n_blocks, n_levels, n_dense : int
        n, p, d (length of θ) and q.
    fit_intercept : bool
        Whether β0 is fitted.
    family : Family
        The GLM family.
    penalty : BinarsityPenalty
        The penalty, with the blocks' kinds (value, prox, KKT rule, λ_max).
    counts : ndarray of shape (d,)
        Weighted bin counts n_jk (the constraints n_jᵀθ_j = 0).
    dense_center, dense_scale : ndarray of shape (q,)
        Z_internal = (Z − center) / scale.
    r, h : row vectors
        Working gradient s_i (b'(η_i) − y_i) / W and curvature s_i b''(η_i) / W at the
        last :meth:`grad_hess` point.

    Notes
    -----
    The solvers also read, today, the short names of the in-memory implementation:
    ``n, p, d, q`` (sizes), ``block_ptr``, ``weights`` (ω), ``W`` and ``sw``/``sw_scale``
    (unit weights), ``y``, ``offset`` and ``dense`` (the internal columns) — in the
    null start, FISTA's metric and the polish's free columns. Row-level arrays among
    them are the ones a distributed implementation must still turn into operations.
    """

    n_rows: int
    n_blocks: int
    n_levels: int
    n_dense: int
    fit_intercept: bool
    family: Family
    penalty: BinarsityPenalty
    counts: np.ndarray
    dense_center: np.ndarray
    dense_scale: np.ndarray

    @property
    def r(self): ...

    @property
    def h(self): ...

    def linear_predictor(self, theta, beta, b0): ...

    def loss(self, eta) -> float: ...

    def objective(self, eta, theta, lam) -> float: ...

    def grad_hess(self, eta) -> float: ...

    def grad_hess_into(self, eta, r_out, h_out) -> float: ...

    def set_working(self, r, h) -> tuple: ...

    def histogram(self, values) -> np.ndarray: ...

    def histograms2(self, a, b) -> tuple[np.ndarray, np.ndarray]: ...

    def dense_dot(self, v) -> np.ndarray: ...

    def kkt(self, r, theta, lam, g=None) -> tuple[float, np.ndarray, np.ndarray]: ...

    def recenter(self, theta) -> float: ...

    def gradient_scale(self) -> float: ...

    def cd_sweep(self, active, lam_w, H, theta, z, delta_eta, h, work) -> tuple: ...

    def gather_add_blocks(self, blocks, theta, out) -> None: ...

    def gather_add(self, theta, out) -> None: ...

    def recode_block(self, j, lut): ...

    def bin_gram(self, h, chunk: int = ...) -> np.ndarray: ...

    def segment_problem(self, segments) -> SolverData: ...


class InMemoryProblem:
    """:class:`SolverData` over a :class:`BinnedDesign` in memory (one fit's data).

    Parameters
    ----------
    design : BinnedDesign
        Codes, blocks and kinds, dense columns, offset and weights (validated).
    y : array-like of shape (n,)
        Response.
    family : str or Family
        GLM family.
    penalty_weights : array-like of shape (d,)
        ω_jk (block starts ignored; forced to 0 on unpenalised kinds).
    fit_intercept : bool
        Whether to fit β0.
    """

    def __init__(self, design: BinnedDesign, y, family, penalty_weights, fit_intercept) -> None:
        self.family: Family = get_family(family)
        self.design = design
        n, p, d = design.n_rows, design.n_blocks, design.n_levels
        y = np.asarray(y, dtype=np.float64).ravel()
        if y.shape[0] != n:
            raise ValueError(f"y has {y.shape[0]} rows but the design has {n}.")
        if n == 0:
            raise ValueError("no rows to fit (n_samples = 0).")
        # the loss is that of a proportion for a binomial y in [0, 1] (glm() allows it;
        # the estimators refuse it before they get here)
        self.family.validate_y(y, proportions=True)
        self.y = np.ascontiguousarray(y)
        self.n, self.p, self.d = n, p, d
        self.block_ptr = design.block_ptr
        # every sum is taken on weights scaled to a maximum in [1, 2) (the objective
        # does not depend on their scale): W can neither overflow nor underflow
        self.sw, self.sw_scale = design.unit_weight, design.weight_scale
        self.W = float(self.sw.sum())
        self.offset = design.offset
        if self.offset is not None:
            self.family.check_offset(self.offset)
            check_offset_loss(self.family, self.y, self.offset, self.sw)
        self.fit_intercept = check_bool(fit_intercept, "fit_intercept")
        # With an intercept the solver works on columns centred at their weighted mean
        # (same η, but no slow trade-off between β0 and an uncentred column); the
        # intercept is converted on the way in (warm start) and out (Solution).
        # They are also scaled to a largest absolute value of 1 (β is converted back in
        # the Solution): the Gram matrix of the joint Newton step then neither overflows
        # nor depends on the units, and the KKT test of a dense column is scale-free.
        self.dense = np.zeros((n, 0)) if design.dense is None else np.asfortranarray(design.dense)
        self.q = self.dense.shape[1]
        self.dense_input = self.dense
        self.dense_center = np.zeros(self.q)
        self.dense_scale = np.ones(self.q)
        if self.q:
            if self.fit_intercept:
                self.dense_center = (self.sw / self.W) @ self.dense
            centred = self.dense - self.dense_center
            top = np.max(np.abs(centred), axis=0) if n else np.ones(self.q)
            self.dense_scale = np.where(top > 0, top, 1.0)
            self.dense = np.asfortranarray(centred / self.dense_scale)
        self.counts = design.counts
        w = np.asarray(penalty_weights, dtype=np.float64).ravel()
        if w.shape != (d,):
            raise ValueError(f"penalty_weights must have length {d}; got {w.shape}.")
        if not np.all(np.isfinite(w)) or np.any(w < 0):
            raise ValueError("penalty_weights must be finite and non-negative.")
        self.penalty = BinarsityPenalty(self.block_ptr, w, self.counts, design.kinds)
        self.weights = self.penalty.weights
        self._r = np.empty(n)
        self._h = np.empty(n)

    @property
    def codes(self) -> np.ndarray:
        """The design's codes (for inspection; not part of the protocol, solvers never read it)."""
        return self.design.codes

    # -- sizes -------------------------------------------------------------------------
    @property
    def n_rows(self) -> int:
        """n."""
        return self.n

    @property
    def n_blocks(self) -> int:
        """p."""
        return self.p

    @property
    def n_levels(self) -> int:
        """d."""
        return self.d

    @property
    def n_dense(self) -> int:
        """q."""
        return self.q

    # -- evaluation --------------------------------------------------------------------
    def linear_predictor(self, theta, beta, b0):
        """η = offset + β0 + X^B θ + Z_internal β."""
        eta = np.full(self.n, b0, dtype=np.float64)
        if self.offset is not None:
            eta += self.offset
        self.design.gather_add(theta, eta)
        if self.q:
            _dense.matvec_add(self.dense, beta, eta)
        return eta

    def gradient_scale(self) -> float:
        """Units of the loss gradient, by which ``tol`` is multiplied.

        The family's :meth:`~binarsity_stats._families.Family.gradient_units`: max(1,
        weighted sd of y) for gaussian, max(1, weighted mean of y) for poisson, 1 for
        binomial, so it changes nothing for responses of unit scale.
        """
        return self.family.gradient_units(self.y, self.sw)

    def dense_dot(self, v) -> np.ndarray:
        """Zᵀ v for the dense columns (single-threaded, deterministic)."""
        out = np.zeros(self.q)
        if self.q:
            _dense.columns_dot(self.dense, v, out)
        return out

    def loss(self, eta) -> float:
        """(1/W) Σ_i s_i [b(η_i) − y_i η_i]."""
        return self.family.loss_sum(eta, self.y, self.sw) / self.W

    def objective(self, eta, theta, lam) -> float:
        """F = loss + λ pen(θ)."""
        return self.loss(eta) + lam * self.penalty.value(theta)

    def grad_hess(self, eta):
        """Fill the working gradient r and weights h (normalised by W); return loss."""
        loss = self.family.grad_hess(eta, self.y, self.sw, 1.0 / self.W, self._r, self._h)
        return loss / self.W

    def grad_hess_into(self, eta, r_out, h_out) -> float:
        """Working gradient and curvature at η into the given buffers; returns the loss."""
        return self.family.grad_hess(eta, self.y, self.sw, 1.0 / self.W, r_out, h_out) / self.W

    def grad_hess_only(self, eta) -> None:
        """Working gradient and curvature at η (no loss)."""
        self.family.grad_hess_only(eta, self.y, self.sw, 1.0 / self.W, self._r, self._h)

    @property
    def r(self):
        """Working gradient at the last :meth:`grad_hess` point."""
        return self._r

    @property
    def h(self):
        """Working curvature at the last :meth:`grad_hess` point."""
        return self._h

    def set_working(self, r, h) -> tuple:
        """Make (r, h) the current working vectors; returns the previous pair (buffers)."""
        old = self._r, self._h
        self._r, self._h = r, h
        return old

    def histogram(self, values) -> np.ndarray:
        """(X^B)ᵀ values."""
        return self.design.histograms(values)

    def histograms2(self, a, b) -> tuple[np.ndarray, np.ndarray]:
        """(X^B)ᵀ a and (X^B)ᵀ b in one pass."""
        return self.design.histograms2(a, b)

    def kkt(self, r, theta, lam, g=None) -> tuple[float, np.ndarray, np.ndarray]:
        """Overall and per-block KKT violation at the point with working gradient r.

        ``g`` (the bin sums of r) is computed when not given.
        """
        if g is None:
            g = self.histogram(r)
        per_block = self.penalty.kkt_violation(g, theta, lam, self.fit_intercept)
        worst = float(per_block.max()) if per_block.size else 0.0
        if self.fit_intercept:
            worst = max(worst, abs(float(r.sum())))
        if self.q:
            worst = max(worst, float(np.max(np.abs(self.dense_dot(r)))))
        return worst, per_block, g

    def recenter(self, theta) -> float:
        """Re-centre every block (n_jᵀθ_j = 0); return the total shift (for β0)."""
        if not self.p:
            return 0.0
        bp = self.block_ptr
        num = np.add.reduceat(self.counts * theta, bp[:-1])
        den = np.add.reduceat(self.counts, bp[:-1])
        shift = np.divide(num, den, out=np.zeros_like(num), where=den > 0)
        theta -= np.repeat(shift, np.diff(bp))
        return float(shift.sum())

    # -- coordinate descent ------------------------------------------------------------
    def cd_sweep(self, active, lam_w, H, theta, z, delta_eta, h, work) -> tuple:
        """One Gauss–Seidel sweep of exact block steps over ``active`` (``_cd_fast``).

        Updates θ, the quadratic model's gradient z = r + h Δη and Δη in place; each
        block's step is the one of its kind. Returns ``(max_violation, intercept_shift,
        max_abs_step)``.
        """
        return _cd_fast.cd_sweep(
            self.design.codes, self.block_ptr, active, lam_w, H, self.counts, theta, z,
            delta_eta, h, self.fit_intercept, 1e-12, work, self.penalty.steps,
        )  # fmt: skip

    def gather_add_blocks(self, blocks, theta, out) -> None:
        """``out += Σ_{j in blocks} θ_j[c_ij]``."""
        self.design.gather_add(theta, out, blocks)

    def gather_add(self, theta, out) -> None:
        """``out += X^B θ`` (all blocks)."""
        self.design.gather_add(theta, out)

    def recode_block(self, j, lut):
        """Block j's codes through a table: the row vector ``lut[c_ij]`` (integers)."""
        return self.design.recode_block(j, lut)

    def bin_gram(self, h, chunk: int = 1 << 21) -> np.ndarray:
        """X^Bᵀ diag(h) X^B (d × d), the weighted Gram of the bins (design.md §9)."""
        return self.design.gram(h, chunk=chunk)

    # -- derived problems --------------------------------------------------------------
    def segment_problem(self, segments) -> InMemoryProblem:
        """The unpenalised problem on segments of levels (the null fit of λ_max).

        ``segments[j]`` maps the levels of block j to segment indices 0, 1, …; blocks
        with a single segment are dropped (they are constant). The dense columns are
        this problem's internal (centred, scaled) ones; every block is free.
        """
        design = self.design.segments(segments, dense=self.dense if self.q else None)
        return InMemoryProblem(design, self.y, self.family, np.zeros(design.n_levels),
                               self.fit_intercept)  # fmt: skip
