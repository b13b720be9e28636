"""The solver data protocol and its in-memory implementation (design.md §4, §9).

The solvers (``_solvers``: CD and FISTA, with the polish, λ_max's null fit, paths and
CV) see the data of a fit only through the members of :class:`SolverData`
(:data:`SOLVER_DATA_MEMBERS`): the linear predictor, the loss and its working
gradient/curvature, their per-bin histograms, the curvature-weighted Grams of the bins
and of the free columns (intercept and dense columns), products with the free columns,
reductions over rows, the KKT check and, for CD, one exact Gauss–Seidel sweep over a set
of blocks. They never read codes, y, weights, offsets, dense columns or private buffers.
:class:`InMemoryProblem` implements it over one
:class:`~binarsity_stats.design._design.BinnedDesign` held in memory, with the arithmetic of
the kernels (row-order sums) so that fits are reproducible bit for bit; a distributed
backend (issue 15) implements the same members over partitions of the rows, adding up
the per-partition sums (``_solvers.make_problem`` is where it is chosen).

Row vectors (η, the working gradient r and curvature h, the CD quadratic model's z and
Δη) are whatever the implementation returns (here NumPy arrays); the solvers only pass
them back, combine them elementwise and assign them in place.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from ..kernels import _cd_fast
from ..kernels import _dense
from ..design._design import BinnedDesign
from ..families._families import Family, get_family
from ..penalty._penalty import BinarsityPenalty
from ..core._validation import check_bool, check_offset_loss

__all__ = ["SolverData", "SOLVER_DATA_MEMBERS", "InMemoryProblem"]

#: The block kinds whose KKT rule the CD kernel computes (``_cd_fast.kkt_blocks``).
_KERNEL_KKT_KINDS = frozenset({"tv", "free", "increasing", "decreasing"})


def block_kkt(penalty: BinarsityPenalty, g, theta, lam: float, fit_intercept: bool) -> np.ndarray:
    """Per-block KKT violations: ``penalty.kkt_violation(g, theta, lam, fit_intercept)``.

    Computed by the kernel ``_cd_fast.kkt_blocks`` (the same arithmetic, bit for bit,
    without a dozen NumPy calls per check) when every block is of a kind it knows
    (:data:`_KERNEL_KKT_KINDS`); any other kind keeps the penalty's NumPy rule.

    Parameters
    ----------
    penalty : BinarsityPenalty
        The penalty (blocks, kinds, weights, counts).
    g : ndarray of shape (d,)
        Bin sums of the working gradient.
    theta : ndarray of shape (d,)
        Current levels.
    lam : float
        λ.
    fit_intercept : bool
        Whether β0 is fitted (else the constraints' multipliers enter).

    Returns
    -------
    ndarray of shape (p,)
    """
    if not set(penalty.kinds) <= _KERNEL_KKT_KINDS:
        return penalty.kkt_violation(g, theta, lam, fit_intercept)
    d = penalty.weights.shape[0]
    out = np.empty(len(penalty.block_ptr) - 1)
    _cd_fast.kkt_blocks(
        np.ascontiguousarray(g, dtype=np.float64), np.ascontiguousarray(theta, dtype=np.float64),
        np.ascontiguousarray(penalty.weights), np.ascontiguousarray(penalty.counts),
        np.ascontiguousarray(penalty.block_ptr, dtype=np.intp), penalty.steps, float(lam),
        bool(fit_intercept), np.empty(d + 1), np.empty(d + 1), out,
    )  # fmt: skip
    return out


class SolverData(Protocol):
    """What a solver may ask of the data of one fit (the solvers' only access to it).

    The objective is F = (1/W) Σ_i s_i [b(η_i) − y_i η_i] + λ pen(θ) with
    η = offset + β0 + X^B θ + Z β (design.md §1); the dense columns Z are those of the
    implementation (it may centre and scale them; ``dense_center``/``dense_scale``
    convert β and β0 back). The *free columns* U are the unpenalised columns that CD
    updates jointly by a Newton step: the intercept's column of ones first (when it is
    fitted), then the internal dense columns; ``n_free`` = q + 1 or q.

    CD, FISTA, the polish, λ_max, paths and CV use exactly the members listed in
    :data:`SOLVER_DATA_MEMBERS` (``tests/engine/test_problem.py`` runs them through a wrapper
    that refuses anything else). Everything row-level (y, weights, offset, codes, dense
    columns) stays behind these operations; what a solver holds is of size d, p, q or
    n_free, plus row vectors it got from the protocol.

    Row vectors (η, the working gradient r and curvature h, the CD quadratic model's z
    and Δη) are whatever the implementation returns from :meth:`row_vector`,
    :meth:`linear_predictor` or :attr:`r`/:attr:`h`. The solvers pass them back, combine
    them elementwise (``a + c * b``, ``np.multiply(a, b, out=c)``) and assign them in
    place (``v[:] = w``, ``v[:] = 0.0``); every reduction over rows is a member here.

    Attributes
    ----------
    n_rows, n_blocks, n_levels, n_dense : int
        n, p, d (length of θ) and q.
    n_free : int
        Number of free columns: q + 1 with an intercept, else q.
    fit_intercept : bool
        Whether β0 is fitted.
    family : Family
        The GLM family (the solvers ask it only whether its loss is quadratic).
    penalty : BinarsityPenalty
        The penalty, with the blocks' kinds (value, prox, KKT rule, λ_max).
    block_ptr : ndarray of shape (p + 1,)
        Offsets of the blocks in θ.
    weights : ndarray of shape (d,)
        Penalty weights ω (0 at block starts and on unpenalised kinds).
    counts : ndarray of shape (d,)
        Weighted bin counts n_jk (the constraints n_jᵀθ_j = 0), in unit weights.
    weight_scale : float
        Factor from the unit weights to the user's weights (``counts * weight_scale``
        are the bin counts in the user's units).
    dense_center, dense_scale : ndarray of shape (q,)
        Z_internal = (Z − center) / scale.
    r, h : row vectors
        Working gradient s_i (b'(η_i) − y_i) / W and curvature s_i b''(η_i) / W at the
        last :meth:`grad_hess` point.
    """

    n_rows: int
    n_blocks: int
    n_levels: int
    n_dense: int
    n_free: int
    fit_intercept: bool
    family: Family
    penalty: BinarsityPenalty
    block_ptr: np.ndarray
    weights: np.ndarray
    counts: np.ndarray
    weight_scale: float
    dense_center: np.ndarray
    dense_scale: np.ndarray

    @property
    def r(self):
        """Working gradient at the last :meth:`grad_hess` point."""

    @property
    def h(self):
        """Working curvature at the last :meth:`grad_hess` point."""

    # -- rows: new vectors and reductions ----------------------------------------------
    def row_vector(self, fill: float | None = None):
        """A new row vector: uninitialised (``fill`` None) or every entry ``fill``."""

    def row_sum(self, v) -> float:
        """Σ_i v_i."""

    def row_dot(self, a, b) -> float:
        """Σ_i a_i b_i."""

    def quadratic_model(self, r, h, d) -> float:
        """Σ_i d_i (r_i + ½ h_i d_i): the loss's quadratic model along Δη = d."""

    # -- evaluation --------------------------------------------------------------------
    def linear_predictor(self, theta, beta, b0):
        """η = offset + β0 + X^B θ + Z_internal β (a new row vector)."""

    def loss(self, eta) -> float:
        """(1/W) Σ_i s_i [b(η_i) − y_i η_i]."""

    def objective(self, eta, theta, lam) -> float:
        """F = loss + λ pen(θ)."""

    def grad_hess(self, eta) -> float:
        """Set :attr:`r`, :attr:`h` to the working gradient/curvature at η; return the loss."""

    def grad_hess_into(self, eta, r_out, h_out) -> float:
        """Working gradient and curvature at η into the given row vectors; return the loss."""

    def grad_hess_only(self, eta) -> None:
        """Set :attr:`r`, :attr:`h` at η without computing the loss."""

    def set_working(self, r, h) -> tuple:
        """Make (r, h) the current working vectors; return the previous pair."""

    def null_intercept(self) -> float:
        """β0 of the intercept(+offset)-only fit (the solvers' cold start)."""

    def gradient_scale(self) -> float:
        """Units of the loss gradient, by which ``tol`` is multiplied."""

    # -- bins --------------------------------------------------------------------------
    def histogram(self, values) -> np.ndarray:
        """(X^B)ᵀ v: the bin sums of a row vector (length d)."""

    def histograms2(self, a, b) -> tuple[np.ndarray, np.ndarray]:
        """(X^B)ᵀ a and (X^B)ᵀ b (in one pass)."""

    def gather_add_blocks(self, blocks, theta, out) -> None:
        """``out += Σ_{j in blocks} θ_j[c_ij]`` (a row vector, in place)."""

    def bin_gram(self, h, chunk: int = ...) -> np.ndarray:
        """X^Bᵀ diag(h) X^B (d × d), the curvature-weighted Gram of the bins (§9)."""

    def kkt(self, r, theta, lam, g=None) -> tuple[float, np.ndarray, np.ndarray]:
        """(worst violation, per-block violations, bin sums of r) at working gradient r."""

    def recenter(self, theta) -> float:
        """Re-centre every block in place (n_jᵀθ_j = 0); return the total shift."""

    def cd_sweep(self, active, lam_w, H, theta, z, delta_eta, h, work) -> tuple:
        """One Gauss–Seidel sweep of exact block steps: ``(max_viol, shift, max_step)``."""

    # -- dense and free columns --------------------------------------------------------
    def dense_dot(self, v) -> np.ndarray:
        """Z_internalᵀ v (length q)."""

    def free_gram(self, h) -> np.ndarray:
        """Uᵀ diag(h) U (n_free × n_free) over the free columns."""

    def free_dot(self, v) -> np.ndarray:
        """Uᵀ v (length n_free)."""

    def free_step(self, step, h, z, delta_eta) -> None:
        """m = U step; ``z += h * m``; ``delta_eta += m`` (CD's joint free step)."""

    def free_matvec_add(self, step, out) -> None:
        """``out += U step`` (a row vector, in place)."""

    def bin_free_gram(self, h) -> np.ndarray:
        """(X^B)ᵀ diag(h) U (d × n_free): the bins × free columns block of the Gram."""

    # -- derived problems --------------------------------------------------------------
    def segment_problem(self, segments) -> SolverData:
        """The unpenalised problem on segments of levels (λ_max's null fit)."""

    def duplicate_blocks(self) -> list[list[int]]:
        """Groups of blocks with identical codes (perfectly collinear), same kind."""

    def merge_blocks(self, groups) -> tuple[SolverData, np.ndarray]:
        """The problem with each group of identical blocks merged into its first block.

        Returns the merged problem and ``take``, the levels of θ it keeps.
        """


#: The members of :class:`SolverData`: all that CD, FISTA, the polish, λ_max, paths and
#: CV may read from a problem (a backend implements exactly these).
SOLVER_DATA_MEMBERS = frozenset(
    name
    for name in list(SolverData.__annotations__) + list(vars(SolverData))
    if not name.startswith("_")
)


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
        self._sw, self.sw_scale = design.unit_weight, design.weight_scale
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
        self.dense_center = np.zeros(self.q)
        self.dense_scale = np.ones(self.q)
        if self.q:
            if self.fit_intercept:
                self.dense_center = (self.sw / self.W) @ self.dense
            centred = self.dense - self.dense_center
            # a fold sharing all rows' arrays (``BinnedDesign.fold``): its own rows' scale
            mask = design.train_mask
            on = centred if mask is None else centred[mask]
            top = np.max(np.abs(on), axis=0) if on.shape[0] else np.ones(self.q)
            del on
            self.dense_scale = np.where(top > 0, top, 1.0)
            self.dense = np.asfortranarray(centred / self.dense_scale)
        # the free columns U = [1, Z_internal] (Fortran order) with an intercept, else Z;
        # Z_internal is then a view of U's last q columns (one extra column of memory)
        self.n_free = self.q + int(self.fit_intercept)
        if self.fit_intercept and not self.q and design.ones is not None:
            # the intercept's column alone: a view of the design's shared ones (an
            # unweighted design's unit weights, a fold's parent's): a row vector fewer
            # at the fit's peak and per CV fold (U is never written)
            self._free = design.ones.reshape(n, 1)
        elif self.fit_intercept:
            self._free = np.empty((n, self.n_free), order="F")
            self._free[:, 0] = 1.0
            if self.q:
                self._free[:, 1:] = self.dense
                self.dense = self._free[:, 1:]
        else:
            self._free = self.dense
        self.counts = design.counts
        w = np.asarray(penalty_weights, dtype=np.float64).ravel()
        if w.shape != (d,):
            raise ValueError(f"penalty_weights must have length {d}; got {w.shape}.")
        if not np.all(np.isfinite(w)) or np.any(w < 0):
            raise ValueError("penalty_weights must be finite and non-negative.")
        self.penalty = BinarsityPenalty(self.block_ptr, w, self.counts, design.kinds)
        self.weights = self.penalty.weights
        # the working vectors, allocated on first use (released between solves by a
        # CV that keeps its folds' problems: :meth:`release_working`)
        self._r = self._h = None

    @property
    def sw(self) -> np.ndarray:
        """The unit row weights (a fold's rebuilt after :meth:`release_working`)."""
        if self._sw is None:
            self.design.restore_weights()
            self._sw = self.design.unit_weight
        return self._sw

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

    @property
    def weight_scale(self) -> float:
        """Factor from the unit weights to the user's weights."""
        return self.sw_scale

    # -- rows --------------------------------------------------------------------------
    def row_vector(self, fill: float | None = None) -> np.ndarray:
        """A new row vector: uninitialised (``fill`` None) or every entry ``fill``."""
        return np.empty(self.n) if fill is None else np.full(self.n, fill, dtype=np.float64)

    def row_sum(self, v) -> float:
        """Σ_i v_i (NumPy's pairwise sum)."""
        return float(v.sum())

    def row_dot(self, a, b) -> float:
        """Σ_i a_i b_i in row order (``_dense.dot``)."""
        return _dense.dot(a, b)

    def quadratic_model(self, r, h, d) -> float:
        """Σ_i d_i (r_i + ½ h_i d_i) in row order (``_dense.quadratic_model``)."""
        return _dense.quadratic_model(r, h, d)

    def null_intercept(self) -> float:
        """β0 of the intercept(+offset)-only fit (the family's closed form)."""
        return self.family.null_intercept(self.y, self.sw, self.offset)

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

        The family's :meth:`~binarsity_stats.families._families.Family.gradient_units`: the
        weighted sd of y for gaussian (ȳ^{2−p} for Tweedie: equivariant to the scale
        of y), max(1, weighted mean of y) for poisson, 1 for binomial and gamma.
        """
        return self.family.gradient_units(self.y, self.sw)

    def dense_dot(self, v) -> np.ndarray:
        """Zᵀ v for the dense columns (single-threaded, deterministic)."""
        out = np.zeros(self.q)
        if self.q:
            _dense.columns_dot(self.dense, v, out)
        return out

    def free_gram(self, h) -> np.ndarray:
        """Uᵀ diag(h) U over the free columns (``_dense.weighted_gram``, row order)."""
        out = np.empty((self.n_free, self.n_free))
        if self.n_free:
            _dense.weighted_gram(self._free, h, out)
        return out

    def free_dot(self, v) -> np.ndarray:
        """Uᵀ v over the free columns (``_dense.columns_dot``, row order)."""
        out = np.empty(self.n_free)
        if self.n_free:
            _dense.columns_dot(self._free, v, out)
        return out

    def free_step(self, step, h, z, delta_eta) -> None:
        """m = U step; ``z += h * m``; ``delta_eta += m`` in one pass."""
        _dense.add_columns(self._free, np.ascontiguousarray(step), h, z, delta_eta)

    def free_matvec_add(self, step, out) -> None:
        """``out += U step`` in row order."""
        _dense.matvec_add(self._free, np.ascontiguousarray(step), out)

    def bin_free_gram(self, h) -> np.ndarray:
        """(X^B)ᵀ diag(h) U: one histogram of ``h * U[:, c]`` per free column."""
        out = np.zeros((self.d, self.n_free))
        for c in range(self.n_free):
            out[:, c] = self.histogram(h * self._free[:, c])
        return out

    def loss(self, eta) -> float:
        """(1/W) Σ_i s_i [b(η_i) − y_i η_i]."""
        return self.family.loss_sum(eta, self.y, self.sw) / self.W

    def objective(self, eta, theta, lam) -> float:
        """F = loss + λ pen(θ)."""
        return self.loss(eta) + lam * self.penalty.value(theta)

    def _working(self) -> None:
        if self._r is None:
            self._r, self._h = np.empty(self.n), np.empty(self.n)

    def release_working(self) -> None:
        """Drop the working vectors r and h (2 row vectors; reallocated when needed).

        A CV keeps every fold's problem between the λ of its path: between solves they
        hold nothing a next solve reads (it starts from the coefficients). A fold that
        shares all rows' arrays (``BinnedDesign.fold``) also drops its row weights,
        rebuilt bit for bit from its mask on next use (one row vector fewer per fold).
        """
        self._r = self._h = None
        if self.design.release_weights():
            self._sw = None

    def grad_hess(self, eta):
        """Fill the working gradient r and weights h (normalised by W); return loss."""
        self._working()
        loss = self.family.grad_hess(eta, self.y, self.sw, 1.0 / self.W, self._r, self._h)
        return loss / self.W

    def grad_hess_into(self, eta, r_out, h_out) -> float:
        """Working gradient and curvature at η into the given buffers; returns the loss."""
        return self.family.grad_hess(eta, self.y, self.sw, 1.0 / self.W, r_out, h_out) / self.W

    def grad_hess_only(self, eta) -> None:
        """Working gradient and curvature at η (no loss)."""
        self._working()
        self.family.grad_hess_only(eta, self.y, self.sw, 1.0 / self.W, self._r, self._h)

    @property
    def r(self):
        """Working gradient at the last :meth:`grad_hess` point."""
        self._working()
        return self._r

    @property
    def h(self):
        """Working curvature at the last :meth:`grad_hess` point."""
        self._working()
        return self._h

    def set_working(self, r, h) -> tuple:
        """Make (r, h) the current working vectors; returns the previous pair (buffers)."""
        self._working()
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
        per_block = block_kkt(self.penalty, g, theta, lam, self.fit_intercept)
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
        cached = self.__dict__.get("_recenter_cache")
        if cached is None or cached[0] is not self.counts:
            # the blocks' sizes and total counts: fixed for the problem (computed once)
            den = np.add.reduceat(self.counts, bp[:-1])
            cached = (self.counts, den, den > 0, np.diff(bp))
            self._recenter_cache = cached
        _, den, populated, sizes = cached
        num = np.add.reduceat(self.counts * theta, bp[:-1])
        shift = np.divide(num, den, out=np.zeros_like(num), where=populated)
        if self.penalty.grids:
            shift[list(self.penalty.grids)] = 0.0  # a grid's margins imply n_jᵀθ_j = 0
        theta -= np.repeat(shift, sizes)
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
            self.penalty.linked,
        )  # fmt: skip

    def gather_add_blocks(self, blocks, theta, out) -> None:
        """``out += Σ_{j in blocks} θ_j[c_ij]``."""
        self.design.gather_add(theta, out, blocks)

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

    def duplicate_blocks(self) -> list[list[int]]:
        """Groups of blocks with identical codes and the same kind (``BinnedDesign``);
        grid blocks are never merged (their penalty is not per level)."""
        grids = self.penalty.grids
        return [g for g in self.design.duplicate_blocks() if not any(j in grids for j in g)]

    def merge_blocks(self, groups) -> tuple[InMemoryProblem, np.ndarray]:
        """The problem with every group of identical blocks merged into its first block.

        Only the sum of a group's levels enters η, and the least penalty of a given sum
        puts each jump where it is cheapest: the merged block's weights are the least of
        the group's, edge by edge. It keeps its members' kind, or is free when they
        differ (its weights, the smaller of every edge, are then 0).

        Parameters
        ----------
        groups : list of list of int
            Groups of identical blocks (:meth:`duplicate_blocks`).

        Returns
        -------
        problem : InMemoryProblem
            The merged problem (the other members of every group dropped).
        take : ndarray of int
            The levels of θ that the merged problem keeps, in its order.
        """
        bp, sizes = self.block_ptr, np.diff(self.block_ptr)
        drop = {j for g in groups for j in g[1:]}
        keep = [j for j in range(self.p) if j not in drop]
        w = self.weights.copy()
        for g in groups:
            s, K = bp[g[0]], sizes[g[0]]
            w[s : s + K] = np.min([self.weights[bp[j] : bp[j] + K] for j in g], axis=0)
        take = np.concatenate([np.arange(bp[j], bp[j + 1]) for j in keep])
        kinds = self.design.kinds
        if kinds is not None:
            kinds = list(kinds)
            for g in groups:
                if len({kinds[j] for j in g}) > 1:
                    kinds[g[0]] = "free"
            kinds = [kinds[j] for j in keep]
        merged = InMemoryProblem(
            self.design.select_blocks(keep, kinds), self.y, self.family, w[take],
            self.fit_intercept,
        )  # fmt: skip
        return merged, take
