"""kernels/_dense.pyx: single-threaded reductions over the dense (unpenalised) columns.

Each kernel agrees with its NumPy twin (its docstring's formula); the Gram is exactly
symmetric; no rows give zeros; an array of the wrong dtype or layout (the columns must
be Fortran-ordered) is refused by the typed memoryviews. Lengths are the driver's to
check (``engine/_problem.InMemoryProblem`` builds every argument from one design).
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from binarsity_stats.kernels import _dense

RNG = np.random.default_rng(0)


def test_dense_kernels_match_numpy():
    n, q = 1000, 3
    U = np.asfortranarray(RNG.normal(size=(n, q)))
    z, h = RNG.normal(size=n), RNG.uniform(size=n)
    assert_allclose(_dense.dot(z, h), z @ h, rtol=1e-12)
    out = np.empty(q)
    _dense.columns_dot(U, z, out)
    assert_allclose(out, U.T @ z, rtol=1e-12)
    gram = np.empty((q, q))
    _dense.weighted_gram(U, h, gram)
    assert_allclose(gram, U.T @ (h[:, None] * U), rtol=1e-12)
    step = RNG.normal(size=q)
    z2, de = z.copy(), np.zeros(n)
    _dense.add_columns(U, step, h, z2, de)
    assert_allclose(de, U @ step, rtol=1e-12)
    assert_allclose(z2, z + h * (U @ step), rtol=1e-12)
    acc = np.zeros(n)
    _dense.matvec_add(U, step, acc)
    assert_allclose(acc, U @ step, rtol=1e-12)
    d = RNG.normal(size=n)
    assert_allclose(_dense.quadratic_model(z, h, d), z @ d + 0.5 * (h * d) @ d, rtol=1e-12)


def test_the_gram_is_exactly_symmetric_and_accumulators_add():
    n, q = 300, 4
    U = np.asfortranarray(RNG.normal(size=(n, q)) * [1, 1e3, 1e-3, 7])
    gram = np.full((q, q), np.nan)
    _dense.weighted_gram(U, RNG.uniform(size=n), gram)
    assert np.array_equal(gram, gram.T)
    assert np.all(np.linalg.eigvalsh(gram) > 0)
    out = np.ones(n)
    step = RNG.normal(size=q)
    _dense.matvec_add(U, step, out)  # adds to what out holds
    assert_allclose(out, 1 + U @ step, rtol=1e-12)


def test_no_rows():
    U = np.asfortranarray(np.empty((0, 2)))
    out = np.full(2, np.nan)
    _dense.columns_dot(U, np.empty(0), out)
    assert np.array_equal(out, [0.0, 0.0])
    assert _dense.dot(np.empty(0), np.empty(0)) == 0.0
    assert _dense.quadratic_model(np.empty(0), np.empty(0), np.empty(0)) == 0.0


def test_wrong_dtype_and_layout_are_refused():
    U = np.ascontiguousarray(RNG.normal(size=(10, 2)))  # C order: not the columns' layout
    with pytest.raises(ValueError, match="not Fortran contiguous"):
        _dense.columns_dot(U, np.zeros(10), np.zeros(2))
    with pytest.raises(ValueError, match="Buffer dtype mismatch"):
        _dense.dot(np.zeros(3, dtype=np.float32), np.zeros(3))
    with pytest.raises(ValueError, match="not C contiguous|not C-contiguous"):
        _dense.weighted_gram(np.asfortranarray(U), np.ones(10), np.zeros((2, 2), order="F"))
