"""The polish's segment kernels (``kernels/_segments``) against their NumPy twins."""

from types import SimpleNamespace

import numpy as np
import pytest

from binarsity_stats.engine._polish import _direction, _face_hessian_numpy
from binarsity_stats.kernels import _segments

EPS = np.finfo(float).eps


def _random_face(rng, n_blocks=4, nu=2):
    """A random face: blocks of levels cut into runs, some levels without rows."""
    sizes = rng.integers(3, 12, n_blocks)
    d = int(sizes.sum())
    seg = np.full(d, -1, dtype=np.intp)
    seg_block, seg_first = [], []
    start, M = 0, 0
    for j, size in enumerate(sizes):
        cuts = np.sort(rng.choice(np.arange(1, size), rng.integers(0, size - 1), replace=False))
        bounds = [0, *cuts.tolist(), int(size)]
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
            seg[start + lo : start + hi] = M
            seg_block.append(j)
            seg_first.append(start + lo)
            M += 1
        start += int(size)
    # zero-count levels (not a run's first level): no segment, a zero row in B
    empty = np.zeros(d, bool)
    empty[rng.random(d) < 0.2] = True
    empty[np.array(seg_first)] = False
    seg[empty] = -1
    X = rng.random((3 * d, d)) * (rng.random((3 * d, d)) < 0.4)
    X[:, empty] = 0.0
    B = X.T @ X
    BU = X.T @ rng.normal(size=(3 * d, nu))
    Uf = rng.normal(size=(nu, nu))
    UU = Uf @ Uf.T + nu * np.eye(nu)
    seg_block = np.array(seg_block, dtype=np.intp)
    N = rng.random(M) + 0.1
    ref = np.full(n_blocks, -1, dtype=np.intp)
    for j in range(n_blocks):
        ids = np.flatnonzero(seg_block == j)
        ref[j] = ids[np.argmax(N[ids])]
    cols = np.setdiff1d(np.arange(M), ref).astype(np.intp)
    face = SimpleNamespace(
        seg=seg, M=M, seg_block=seg_block, seg_first=np.array(seg_first, np.intp),
        N=N, ref=ref, cols=cols,
    )  # fmt: skip
    gram = SimpleNamespace(B=np.ascontiguousarray(B), BU=np.ascontiguousarray(BU), UU=UU)
    return gram, face


def _kernel_face_hessian(gram, face):
    cols = face.cols
    refs = face.ref[face.seg_block[cols]]
    a = face.N[cols] / face.N[refs]
    m, nu = cols.size, gram.UU.shape[0]
    Guu = np.empty((m, m))
    _segments.face_hessian(gram.B, face.seg, cols, refs, a, np.empty((face.M, face.M)), Guu)
    cross = np.empty((m, nu))
    _segments.face_cross(gram.BU, face.seg, cols, refs, a, np.empty((face.M, nu)), cross)
    K = np.empty((nu + m, nu + m))
    K[:nu, :nu] = gram.UU
    K[:nu, nu:] = cross.T
    K[nu:, :nu] = cross
    K[nu:, nu:] = Guu
    return K


@pytest.mark.parametrize("seed", range(5))
def test_face_hessian_kernel_matches_its_numpy_twin(seed):
    rng = np.random.default_rng(seed)
    gram, face = _random_face(rng)
    K = _kernel_face_hessian(gram, face)
    ref = _face_hessian_numpy(gram, face)
    # sums of at most d² non-negative terms, times (1 + a)² ≤ a few: rounding bound
    d = gram.B.shape[0]
    a_max = float((face.N.max() / face.N.min()))
    scale = (1 + a_max) ** 2 * (np.abs(gram.B).sum() + np.abs(gram.BU).sum())
    np.testing.assert_allclose(K, ref, rtol=0, atol=4 * d * d * EPS * scale)


def test_face_hessian_refuses_out_of_range_indices():
    rng = np.random.default_rng(0)
    gram, face = _random_face(rng, nu=1)
    cols = face.cols
    refs = face.ref[face.seg_block[cols]]
    a = face.N[cols] / face.N[refs]
    m = cols.size
    G, out = np.empty((face.M, face.M)), np.empty((m, m))
    bad_seg = face.seg.copy()
    bad_seg[0] = face.M  # one past the table
    with pytest.raises(ValueError, match="segment index"):
        _segments.face_hessian(gram.B, bad_seg, cols, refs, a, G, out)
    bad_seg[0] = -2
    with pytest.raises(ValueError, match="segment index"):
        _segments.face_cross(gram.BU, bad_seg, cols, refs, a, np.empty((face.M, 1)), out[:, :1].copy())
    bad_cols = cols.copy()
    bad_cols[-1] = face.M
    with pytest.raises(ValueError, match="out of range"):
        _segments.face_hessian(gram.B, face.seg, bad_cols, refs, a, G, out)
    with pytest.raises(ValueError, match="agree in size"):
        _segments.face_hessian(gram.B, face.seg, cols, refs, a[:-1], G, out)
    with pytest.raises(ValueError, match="d × d"):
        _segments.face_hessian(gram.B[:-1], face.seg, cols, refs, a, G, out)
    with pytest.raises(ValueError, match="square"):
        _segments.face_hessian(gram.B, face.seg, cols, refs, a, G[:, :-1].copy(), out)


@pytest.mark.parametrize("m", [1, 7, 60, 250])
def test_cholesky_kernel_factors_and_solves(m):
    rng = np.random.default_rng(m)
    A = rng.normal(size=(m, 2 * m + 3))
    K = A @ A.T
    L = K.copy()
    assert _segments.cholesky(L) == 0
    L = np.tril(L)
    ref = np.linalg.cholesky(K)
    cond = np.linalg.cond(K)
    # backward-stable: L Lᵀ = K + E with |E| ≲ m ε |K|; L itself to cond × that
    np.testing.assert_allclose(L @ L.T, K, rtol=0, atol=4 * m * EPS * np.abs(K).max())
    np.testing.assert_allclose(L, ref, rtol=0, atol=4 * m * EPS * cond * np.abs(ref).max())
    b = rng.normal(size=m)
    x = b.copy()
    _segments.cholesky_solve(np.ascontiguousarray(np.tril(L)), x)
    np.testing.assert_allclose(K @ x, b, rtol=0, atol=8 * m * EPS * cond * np.abs(b).max())


def test_cholesky_kernel_reports_the_failing_pivot_and_checks_shapes():
    K = np.array([[4.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]])  # singular 2×2 corner
    assert _segments.cholesky(K.copy()) == 2
    assert _segments.cholesky(np.full((2, 2), np.nan)) == 1
    with pytest.raises(ValueError, match="square"):
        _segments.cholesky(np.ones((2, 3)))
    with pytest.raises(ValueError, match="length m"):
        _segments.cholesky_solve(np.eye(3), np.ones(2))
    with pytest.raises(ValueError, match="zero pivot"):
        _segments.cholesky_solve(np.zeros((2, 2)), np.ones(2))


@pytest.mark.parametrize("m", [5, 120])
def test_direction_is_the_newton_step_and_handles_singular_systems(m):
    rng = np.random.default_rng(m)
    A = rng.normal(size=(m, 2 * m))
    K = A @ A.T
    g = rng.normal(size=m)
    step, linear = _direction(K, g, 1e-12)
    assert not linear
    cond = np.linalg.cond(K)
    np.testing.assert_allclose(K @ step, -g, rtol=0, atol=16 * m * EPS * cond * np.abs(g).max())
    # a duplicated unknown: the pseudo-inverse step, in the range of K
    K2 = np.zeros((m + 1, m + 1))
    K2[:m, :m] = K
    K2[m, :m] = K2[:m, m] = K[0]
    K2[m, m] = K[0, 0]
    g2 = np.append(g, g[0])
    step2, linear2 = _direction(K2, g2, 1e-9)
    assert not linear2
    np.testing.assert_allclose(K2 @ step2, -g2, rtol=0, atol=1e-6 * np.abs(g).max())
