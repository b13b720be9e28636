"""The binned design: bin codes, blocks and their kinds, dense columns, offset, weights.

``BinnedDesign`` is the engine's one representation of the data side of a fit
(design.md §3): the (p, n) array of bin codes (uint8 or uint16, one C-contiguous row per
block), the CSR offsets ``block_ptr`` of the blocks in θ and the kind of every block
(``_blocks``), the unpenalised dense columns Z, the offset and the row weights s_i. It
is validated once, its weighted bin counts n_jk are computed once, and it is the only
caller of the gather/histogram kernels of ``_histogram.pyx``:

* ``X^B θ`` is a gather (``linear_predictor``, ``gather_add``),
* ``(X^B)ᵀ r`` is a histogram (``histograms``, ``histograms2`` for two vectors at once),
* the cell tables of a pair of features (``PairTables``, design.md §10: pair screening).

The formula model and the estimators build one; the solvers' in-memory problem
(``_problem.InMemoryProblem``) wraps one with a response and a family; a CV fold's
training rows are ``fold(rows)`` of it (the same arrays, weight 0 on the other rows), a
held-out fold or a resample ``subset(rows)`` (no re-validation). This module imports
NumPy only.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ._gram_stats import pair_gram_into
from ..kernels import _histogram
from ..penalty._blocks import as_kinds
from ..core._validation import (
    check_block_ptr,
    check_codes,
    check_offset,
    check_sample_weight,
    code_dtype,
    normalized_weights,
)

__all__ = ["BinnedDesign", "PairTables"]


class BinnedDesign:
    """Bin codes with their blocks, dense columns, offset and row weights (validated once).

    Parameters
    ----------
    codes : array-like of shape (p, n)
        Level codes, one row per block; integers below the block's number of levels.
    block_ptr : array-like of shape (p + 1,)
        Offsets of the blocks in θ (starts at 0, strictly increasing).
    kinds : sequence of str, optional
        Kind of every block (``_blocks.KINDS``: ``"tv"``, ``"free"``). None: decided
        from the penalty weights when a problem is built (a block with a positive edge
        weight is a TV chain) — the raw engine API's default.
    dense : array-like of shape (n, q), optional
        Unpenalised numeric columns Z.
    offset : array-like of shape (n,), optional
        Offset of the linear predictor.
    sample_weight : array-like of shape (n,), optional
        Row weights s_i ≥ 0, not all 0 (default 1).
    ones : ndarray of shape (n,), optional
        Without ``sample_weight``: a float64 vector of ones to share as the weights
        (the model's; never written) instead of allocating one.

    Attributes
    ----------
    counts : ndarray of shape (d,)
        Bin counts n_jk = Σ_{i: c_ij = k} s_i on the unit weights (computed once, on
        first use).
    weighted : bool
        Whether row weights were given.
    sample_weight : ndarray of shape (n,)
        The weights in the user's units (ones when not weighted).
    unit_weight, weight_scale : ndarray of shape (n,), float
        ``sample_weight / weight_scale`` with a maximum in [1, 2), and the power of two
        (``_validation.normalized_weights``): every sum over rows is taken on these.
    train_mask : ndarray of bool of shape (n,) or None
        For the design of a CV fold made by :meth:`fold`: which rows it is fitted on
        (every other row has weight 0); None for a design of all its rows. Kept a bit
        a row; each read unpacks it.
    ones : ndarray of shape (n,) or None
        n float64 ones shared by the designs of these rows (the unit weights of an
        unweighted design; a fold's parent's), never written; None when there are none.
    """

    def __init__(
        self,
        codes,
        block_ptr,
        *,
        kinds: Sequence[str] | None = None,
        dense=None,
        offset=None,
        sample_weight=None,
        ones=None,
    ) -> None:
        # every index a kernel uses is checked here (codes < block size, offsets)
        codes = np.asarray(codes)
        if codes.ndim != 2:
            raise ValueError(f"codes must be 2-D (n_blocks, n_samples); got shape {codes.shape}.")
        block_ptr = check_block_ptr(block_ptr, n_blocks=codes.shape[0])
        codes = check_codes(codes, block_ptr)
        p, n = codes.shape
        # the row arrays' messages name y: the engine's entries validate y's length first
        sw = None if n == 0 else check_sample_weight(sample_weight, n, rows_of="y")
        offset = check_offset(offset, n, rows_of="y")
        if dense is not None:
            dense = np.asarray(dense)
            if dense.dtype.kind not in "biuf":
                raise TypeError(f"dense must be numeric; got dtype {dense.dtype}.")
            dense = dense.astype(np.float64)
            if dense.ndim == 1:
                dense = dense[:, None]
            if dense.ndim != 2:
                raise ValueError(f"dense must be 1-D or 2-D (n, q); got shape {dense.shape}.")
            if dense.shape[0] != n:
                raise ValueError(f"dense has {dense.shape[0]} rows but y has {n}.")
            if not np.all(np.isfinite(dense)):
                raise ValueError("dense contains NaN or infinite values.")
        if ones is not None:  # the caller's row vector of ones, shared (never written)
            ones = np.asarray(ones)
            if ones.shape != (n,) or ones.dtype != np.float64 or not np.all(ones == 1.0):
                raise ValueError(f"ones must be {n} float64 ones.")
        self._set(codes, block_ptr, as_kinds(kinds, p), dense, offset, sw, ones=ones)

    def _set(self, codes, block_ptr, kinds, dense, offset, sw, counts=None, unit=None,
             ones=None):  # fmt: skip
        self.codes = codes
        self.block_ptr = block_ptr
        self.kinds = kinds
        self.dense = dense
        self.offset = offset
        n = codes.shape[1]
        self.weighted = sw is not None
        if sw is None:  # unweighted: the unit weights (shared by designs of the same rows)
            sw = ones if ones is not None else np.ones(n)
        self.sample_weight = sw
        # sums over rows are taken on weights scaled to a maximum in [1, 2) (the fit
        # does not depend on their scale; totals neither overflow nor underflow)
        if unit is None:
            unit = (sw, 1.0) if not self.weighted else normalized_weights(sw)
        self.unit_weight, self.weight_scale = unit
        self._counts = counts
        self.train_mask = None
        self._parent_weight = None
        self.ones = None if self.weighted else self.sample_weight

    def _inherit(self, other: BinnedDesign) -> BinnedDesign:
        """``other`` (a design of the same rows) keeps this one's fold rows and ones."""
        if getattr(self, "_train_bits", None) is not None:
            other._train_bits = self._train_bits
            other.ones = self.ones
            other._parent_weight = self._parent_weight
        return other

    @property
    def train_mask(self) -> np.ndarray | None:
        """A fold's training rows (bool, n), or None for a design of all its rows.

        Kept packed, a bit a row (``np.packbits``: a CV keeps one per fold, and ten
        folds' bytes were 1.25 row vectors of float64); each read unpacks a new array.
        """
        bits = getattr(self, "_train_bits", None)  # absent from designs pickled before
        if bits is None:
            return None
        return np.unpackbits(bits, count=self.n_rows).view(bool)

    @train_mask.setter
    def train_mask(self, mask: np.ndarray | None) -> None:
        self._train_bits = None if mask is None else np.packbits(mask)

    def _ones_vector(self) -> np.ndarray:
        """n float64 ones shared by the folds of this design (its unit weights if unweighted)."""
        if self.ones is None:
            self.ones = np.ones(self.n_rows)
        return self.ones

    @property
    def counts(self) -> np.ndarray:
        """Bin counts n_jk on the unit weights, computed on first use and kept.

        These are the solver's (the constraints n_jᵀθ_j = 0 and the penalty weights
        depend on shares only); ``counts * weight_scale`` is in the user's units.
        """
        if self._counts is None:
            self.restore_weights()
            counts = np.zeros(self.n_levels)
            if self.codes.shape[0]:
                _histogram.bin_sums_all(self.codes, self.block_ptr, self.unit_weight, counts)
            self._counts = counts
        return self._counts

    def with_kinds(self, kinds: Sequence[str] | None) -> BinnedDesign:
        """The same design (arrays and counts shared) with other block kinds.

        Parameters
        ----------
        kinds : sequence of str or None
            One kind per block.

        Returns
        -------
        BinnedDesign
        """
        self.restore_weights()  # a released fold's, rebuilt
        other = BinnedDesign.__new__(BinnedDesign)
        other._set(
            self.codes, self.block_ptr, as_kinds(kinds, self.n_blocks), self.dense,
            self.offset, self.sample_weight if self.weighted else None, self._counts,
            (self.unit_weight, self.weight_scale), ones=self.sample_weight,
        )  # fmt: skip
        return self._inherit(other)

    @classmethod
    def _trusted(cls, codes, block_ptr, kinds, dense, offset, sw, unit=None,
                 ones=None) -> BinnedDesign:  # fmt: skip
        """A design from arrays already validated (a subset of a validated design)."""
        self = cls.__new__(cls)
        self._set(codes, block_ptr, kinds, dense, offset, sw, unit=unit, ones=ones)
        return self

    @classmethod
    def checked(cls, codes, block_ptr, *, kinds=None, dense=None, offset=None) -> BinnedDesign:
        """A design of codes and offsets that the caller has already validated.

        For prediction: ``codes`` from ``_validation.check_codes`` against ``block_ptr``,
        a finite offset and dense columns of the right length. Nothing is checked again.

        Parameters
        ----------
        codes : ndarray of shape (p, n), uint8 or uint16, C-contiguous
            Checked codes.
        block_ptr : ndarray of shape (p + 1,), intp
            Checked block offsets.
        kinds : sequence of str, optional
            Block kinds.
        dense : ndarray of shape (n, q), optional
            Dense columns.
        offset : ndarray of shape (n,), optional
            Offset.

        Returns
        -------
        BinnedDesign
        """
        return cls._trusted(codes, block_ptr, kinds, dense, offset, None)

    @property
    def _user_weight(self):
        return self.sample_weight if self.weighted else None

    # -- shape -------------------------------------------------------------------------
    @property
    def n_rows(self) -> int:
        """Number of rows n."""
        return int(self.codes.shape[1])

    @property
    def n_blocks(self) -> int:
        """Number of blocks p."""
        return int(self.codes.shape[0])

    @property
    def n_levels(self) -> int:
        """Number of levels d (the length of θ)."""
        return int(self.block_ptr[-1])

    @property
    def n_dense(self) -> int:
        """Number of dense columns q."""
        return 0 if self.dense is None else int(self.dense.shape[1])

    def subset(self, rows, multiplier=None) -> BinnedDesign:
        """The design of some rows (a CV fold, a bootstrap resample), without validating again.

        Parameters
        ----------
        rows : array-like of int
            Row indices.
        multiplier : ndarray of shape (len(rows),), optional
            Positive factors of those rows' weights (a bootstrap resample: how many times
            each row was drawn).

        Returns
        -------
        BinnedDesign
            Codes, dense columns, offset and weights of those rows; its counts are
            recomputed on them.
        """
        rows = np.asarray(rows, dtype=np.intp)
        codes = np.ascontiguousarray(self.codes[:, rows])
        dense = None if self.dense is None else np.ascontiguousarray(self.dense[rows])
        off = None if self.offset is None else self.offset[rows]
        # the fold's weights are normalised on their own maximum, as if given alone
        sw = self.sample_weight[rows] if self.weighted else None
        if multiplier is not None:
            mult = np.asarray(multiplier, dtype=np.float64)
            sw = mult if sw is None else sw * mult
        # unweighted: the rows' weights are ones, a view of this design's (never written;
        # a CV keeps ten folds' designs)
        ones = None
        if sw is None and not self.weighted and rows.size <= self.sample_weight.shape[0]:
            ones = self.sample_weight[: rows.size]
        return BinnedDesign._trusted(codes, self.block_ptr, self.kinds, dense, off, sw,
                                     ones=ones)  # fmt: skip

    def fold(self, rows) -> BinnedDesign:
        """The design of a CV fold's training rows that shares this design's arrays.

        Codes, dense columns and offset are this design's (nothing copied); the rows
        outside ``rows`` get weight 0, so every sum over rows — bin counts, totals,
        gradients, curvatures, Grams — is that of :meth:`subset` ``(rows)`` for rows in
        increasing order (sums in row order are the same bits: adding 0 changes
        nothing). What is not a weighted sum is taken on the rows alone by the problem
        (the dense columns' scale, identical blocks): :attr:`train_mask`. It keeps a
        row vector of weights and a bit a row instead of the rows' codes, response,
        weights and offset.

        Parameters
        ----------
        rows : array-like of int
            The training rows, distinct.

        Returns
        -------
        BinnedDesign
            n rows, weighted (0 outside ``rows``); its weights are normalised on the
            rows' own maximum, as :meth:`subset`'s.

        Raises
        ------
        ValueError
            If ``rows`` repeats a row (a weight 0 cannot count a row twice: use
            :meth:`subset`).
        """
        rows = np.asarray(rows, dtype=np.intp)
        n = self.n_rows
        mask = np.zeros(n, dtype=bool)
        mask[rows] = True
        if int(np.count_nonzero(mask)) != rows.size:
            raise ValueError("fold(rows): rows repeats a row; use subset(rows).")
        unit = np.zeros(n)
        if self.weighted:
            part, scale = normalized_weights(self.sample_weight[rows])
            unit[rows] = part
            del part
        else:
            unit[mask] = 1.0
            scale = 1.0
        # the weights in the user's units: the unit weights times a power of two (exact)
        user = unit if scale == 1.0 else unit * scale
        out = BinnedDesign._trusted(self.codes, self.block_ptr, self.kinds, self.dense,
                                    self.offset, user, (unit, scale))  # fmt: skip
        out.train_mask = mask
        del mask
        out.ones = self._ones_vector()
        out._parent_weight = self._user_weight  # what restore_weights rebuilds from
        return out

    def release_weights(self) -> bool:
        """Drop a fold's row weights (a row vector) until :meth:`restore_weights`.

        A CV keeps every fold between the λ of its path; between two solves its weights
        are rebuilt from the mask for one pass each, not kept. Arrays already handed out
        stay valid (nothing is written). Only a design made by :meth:`fold` releases.

        Returns
        -------
        bool
            Whether the weights were dropped.
        """
        if getattr(self, "_train_bits", None) is None:
            return False
        self.unit_weight = self.sample_weight = None
        return True

    def restore_weights(self) -> None:
        """Rebuild a fold's weights dropped by :meth:`release_weights` (the same bits)."""
        if self.unit_weight is not None:
            return
        mask = self.train_mask
        unit = np.zeros(mask.shape[0])
        if self._parent_weight is None:
            unit[mask] = 1.0
        else:
            part, scale = normalized_weights(self._parent_weight[mask])
            unit[mask] = part
            del part, scale  # the fold's: the same rows, the same maximum
        self.unit_weight = unit
        self.sample_weight = unit if self.weight_scale == 1.0 else unit * self.weight_scale

    def select_blocks(self, keep, kinds=None) -> BinnedDesign:
        """The design restricted to some blocks (rows, columns, offset, weights shared).

        Parameters
        ----------
        keep : sequence of int
            Block indices, in the order of the new design.
        kinds : sequence of str, optional
            Kinds of the kept blocks (default: their kinds here).

        Returns
        -------
        BinnedDesign
        """
        self.restore_weights()  # a released fold's, rebuilt
        keep = list(keep)
        sizes = np.diff(self.block_ptr)
        bp = np.concatenate([[0], np.cumsum(sizes[keep])]).astype(np.intp)
        if kinds is None and self.kinds is not None:
            kinds = tuple(self.kinds[j] for j in keep)
        return self._inherit(BinnedDesign._trusted(
            np.ascontiguousarray(self.codes[keep]), bp, kinds, self.dense, self.offset,
            self._user_weight, (self.unit_weight, self.weight_scale),
        ))  # fmt: skip

    def segments(self, segments, dense=None) -> BinnedDesign:
        """The design whose levels are segments of levels, all free (a null model).

        Parameters
        ----------
        segments : sequence of ndarray
            ``segments[j][k]``: the segment of level k of block j (0, 1, … in order).
            Blocks with one segment are dropped.
        dense : ndarray of shape (n, q), optional
            The dense columns of the new design (default: none).

        Returns
        -------
        BinnedDesign
        """
        self.restore_weights()  # a released fold's, rebuilt
        seg_codes, seg_sizes = [], []
        for j, seg in enumerate(segments):
            if seg[-1] > 0:
                seg_codes.append(seg[self.codes[j]].astype(self.codes.dtype))
                seg_sizes.append(int(seg[-1]) + 1)
        if seg_codes:
            codes = np.ascontiguousarray(np.vstack(seg_codes))
            bp = np.concatenate([[0], np.cumsum(seg_sizes)]).astype(np.intp)
        else:
            codes = np.zeros((0, self.n_rows), dtype=code_dtype(1))
            bp = np.zeros(1, dtype=np.intp)
        return self._inherit(BinnedDesign._trusted(
            codes, bp, ("free",) * len(seg_sizes), dense, self.offset, self._user_weight,
            (self.unit_weight, self.weight_scale),
        ))  # fmt: skip

    def duplicate_blocks(self) -> list[list[int]]:
        """Groups of blocks with identical codes (collinear blocks) that can be merged.

        TV chains and free levels merge with each other (the merged block takes the
        smaller weight of every edge, so it is free if a member is); other kinds only
        with blocks of their own kind.

        Returns
        -------
        list of list of int
            Each group in increasing order; blocks without a twin are not listed.
        """
        p = self.n_blocks
        if p < 2:
            return []
        sizes = np.diff(self.block_ptr)
        mask = self.train_mask  # a fold: identical on its training rows

        def codes(j: int) -> np.ndarray:
            return self.codes[j] if mask is None else self.codes[j][mask]

        seen: dict[tuple, list[int]] = {}
        for j in range(p):
            kind = None if self.kinds is None else self.kinds[j]
            if kind in ("tv", "free"):
                kind = None
            key = (int(sizes[j]), kind, hash(codes(j).tobytes()))
            seen.setdefault(key, []).append(j)
        groups = []
        for members in seen.values():
            while len(members) > 1:
                first = codes(members[0])
                same = [j for j in members if np.array_equal(codes(j), first)]
                if len(same) > 1:
                    groups.append(same)
                members = [j for j in members if j not in same]
        return groups

    # -- the kernels -------------------------------------------------------------------
    def gather_add(self, theta: np.ndarray, out: np.ndarray, blocks=None) -> None:
        """``out[i] += Σ_j θ_j[c_ij]`` (X^B θ), over all blocks or the given ones."""
        if not self.codes.shape[0]:
            return
        theta = np.ascontiguousarray(theta, dtype=np.float64)
        # the kernel reads theta[block_ptr[j] + code] and writes out[i]: lengths checked
        _check_length(theta, self.n_levels, "theta (the levels)")
        _check_length(out, self.n_rows, "out")
        if blocks is None:
            _histogram.gather_add_all(self.codes, self.block_ptr, theta, out)
        elif len(blocks):
            _histogram.gather_add_blocks(self.codes, self.block_ptr, blocks, theta, out)

    def linear_predictor(self, theta, beta=None, intercept: float = 0.0) -> np.ndarray:
        """η = offset + β0 + Σ_j θ_j[c_ij] + Z β.

        Parameters
        ----------
        theta : ndarray of shape (d,)
            Levels θ.
        beta : ndarray of shape (q,), optional
            Coefficients of the dense columns.
        intercept : float
            β0.

        Returns
        -------
        ndarray of shape (n,)
        """
        eta = np.full(self.n_rows, float(intercept), dtype=np.float64)
        if self.offset is not None:
            eta += self.offset
        self.gather_add(theta, eta)
        if self.dense is not None and beta is not None and len(beta):
            eta += self.dense @ beta
        return eta

    def recode_block(self, j: int, lut: np.ndarray) -> np.ndarray:
        """``lut[c_ij]`` for every row: block j's codes mapped through a table (intp)."""
        return lut[self.codes[j]].astype(np.intp)

    def gram(self, h: np.ndarray, chunk: int = 1 << 21) -> np.ndarray:
        """X^Bᵀ diag(h) X^B: the h-weighted Gram of the one-hot design (design.md §9).

        Diagonal blocks are diagonal (the bin sums of h); block (j, k) is the
        h-weighted co-occurrence table of the codes of blocks j and k, built by the
        threaded kernel of ``_gram`` (``bin_pair_gram``).

        Parameters
        ----------
        h : ndarray of shape (n,)
            Row weights (the curvature).
        chunk : int
            Ignored (kept for the protocol's signature; the tables no longer go through
            bincount chunks).

        Returns
        -------
        ndarray of shape (d, d)
        """
        d = self.n_levels
        B = np.zeros((d, d))
        B[np.arange(d), np.arange(d)] = self.histograms(h)
        # the pairs' tables in threads (``_gram_fast.pair_tables``, row-order sums: the
        # same bits as one bincount per pair)
        pair_gram_into(self.codes, self.block_ptr, np.ascontiguousarray(h, dtype=np.float64), B)
        return B

    def histograms(self, values: np.ndarray) -> np.ndarray:
        """Bin sums of a row vector in every block: (X^B)ᵀ values, shape (d,)."""
        out = np.zeros(self.n_levels)
        if self.codes.shape[0]:
            _check_length(values, self.n_rows, "values")
            _histogram.bin_sums_all(self.codes, self.block_ptr, values, out)
        return out

    def histograms2(self, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(X^B)ᵀ a and (X^B)ᵀ b in one pass over the codes (gradient and curvature)."""
        out_a, out_b = np.zeros(self.n_levels), np.zeros(self.n_levels)
        if self.codes.shape[0]:
            _check_length(a, self.n_rows, "values")
            _check_length(b, self.n_rows, "values")
            _histogram.bin_sums2_all(self.codes, self.block_ptr, a, b, out_a, out_b)
        return out_a, out_b


class PairTables:
    """The K_a × K_b cell tables of pairs of binned features, two row vectors at once.

    The codes, the bins per feature and the two row vectors are validated once; every
    :meth:`table` is then one pass over the two features' codes in a kernel
    (``_histogram.pair_sums2``), never a model matrix (design.md §10, pair screening).

    Parameters
    ----------
    codes : ndarray of uint8 or uint16, shape (p, n)
        Bin codes of the p features, one row per feature.
    n_bins : array_like of int, shape (p,)
        K_j: every code of feature j is in [0, K_j).
    values, weights : array_like of shape (n,)
        The two row vectors summed per cell (e.g. the working gradient and the weights).

    Raises
    ------
    ValueError
        If a shape disagrees, a code is outside its feature's bins or a value is not
        finite.
    """

    def __init__(self, codes: np.ndarray, n_bins: Sequence[int], values: np.ndarray,
                 weights: np.ndarray) -> None:  # fmt: skip
        c = np.asarray(codes)
        if c.ndim != 2 or c.dtype not in (np.uint8, np.uint16):
            raise ValueError(f"codes must be a (p, n) array of uint8 or uint16; got {c.dtype} {c.shape}.")
        p, n = c.shape
        K = np.asarray(n_bins, dtype=np.int64)
        if K.shape != (p,) or np.any(K < 1):
            raise ValueError(f"n_bins must be {p} positive integers (one per row of codes).")
        if n and np.any(c.max(axis=1) >= K):
            bad = int(np.flatnonzero(c.max(axis=1) >= K)[0])
            raise ValueError(f"codes of feature {bad} are outside [0, n_bins[{bad}]).")
        self.codes = np.ascontiguousarray(c)
        self.n_bins = K
        self.values = np.ascontiguousarray(values, dtype=np.float64)
        self.weights = np.ascontiguousarray(weights, dtype=np.float64)
        for arr, name in ((self.values, "values"), (self.weights, "weights")):
            _check_length(arr, n, name)
            if not np.all(np.isfinite(arr)):
                raise ValueError(f"{name} must be finite.")

    def table(self, a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
        """The cell sums of ``values`` and ``weights`` over the grid of features a and b.

        Parameters
        ----------
        a, b : int
            Two features (rows of ``codes``); cell (k, l) is k·K_b + l.

        Returns
        -------
        values_table, weights_table : ndarray of shape (K_a · K_b,)
        """
        p = self.codes.shape[0]
        a, b = int(a), int(b)
        if not (0 <= a < p and 0 <= b < p):
            raise ValueError(f"features ({a}, {b}) are not two of the {p} features.")
        Ka, Kb = int(self.n_bins[a]), int(self.n_bins[b])
        out_v, out_w = np.zeros(Ka * Kb), np.zeros(Ka * Kb)
        _histogram.pair_sums2(self.codes[a], self.codes[b], Kb, self.values, self.weights,
                              out_v, out_w)  # fmt: skip
        return out_v, out_w


def _check_length(arr: np.ndarray, n: int, name: str) -> None:
    """A row or level vector handed to a kernel has the length the kernel indexes."""
    shape = np.shape(arr)
    if len(shape) != 1 or shape[0] != n:
        raise ValueError(f"{name} must have shape ({n},); got {shape}.")
