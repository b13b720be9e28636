"""model/_rank.py: the rank-revealing inverse of a refit's normal equations.

Proved here: on a full-rank matrix it is the inverse (NumPy's); it does not depend on
the columns' scales (the cut is on the unit-diagonal scaling, so a column in
micrometres is not mistaken for a null direction); on a rank-deficient Gram matrix it
is a generalised inverse whose null space is exactly the non-identified columns; the
cut sits where ``rank_cut`` documents it, and moves with the number of rows.
"""

from __future__ import annotations

import numpy as np

from binarsity_stats.model._rank import _cut_inverse, _null_columns, rank_cut, truncated_inverse

EPS = np.finfo(np.float64).eps


def design(n: int = 50, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.column_stack([np.ones(n), rng.normal(size=(n, 3))])


def test_full_rank_is_the_inverse():
    G = design().T @ design()
    # cond(G) ~ 10: inverses agree to a few eps times it
    np.testing.assert_allclose(truncated_inverse(G), np.linalg.inv(G), rtol=1e-12, atol=1e-14)
    assert _cut_inverse(G, 50)[1] == 4


def test_the_cut_does_not_depend_on_column_scales():
    X = design()
    D = np.array([1.0, 1e-8, 1e8, 3.0])
    G, Gs = X.T @ X, (X * D).T @ (X * D)
    inv, rank, _ = _cut_inverse(Gs, 50)
    assert rank == 4
    np.testing.assert_allclose(inv * D[:, None] * D[None, :], np.linalg.inv(G), rtol=1e-10)


def test_a_rank_deficient_design_gets_a_generalised_inverse():
    X = design()
    X = np.column_stack([X, X[:, 1] + 2 * X[:, 2]])  # column 4 = col 1 + 2 col 2
    G = X.T @ X
    inv, rank, null = _cut_inverse(G, 50)
    assert rank == 4 and null.shape == (1, 5)
    np.testing.assert_allclose(G @ inv @ G, G, rtol=1e-9, atol=1e-9 * np.abs(G).max())
    assert _null_columns(null) == [1, 2, 4]  # the columns of the dependence, not 0 or 3
    # an identified column (3) has the variance of the design without the dependence
    keep = [0, 1, 2, 3]
    np.testing.assert_allclose(inv[3, 3], np.linalg.inv(G[np.ix_(keep, keep)])[3, 3],
                               rtol=1e-9)  # fmt: skip


def test_where_the_cut_is():
    def gram(delta):  # eigenvalues delta and 2 - delta of the unit-diagonal matrix
        return np.array([[1.0, 1.0 - delta], [1.0 - delta, 1.0]])

    # tol = top · max((max(n, k) · eps · 10)², 10 k eps) ≈ 2 · 20 eps = 8.9e-15 for small n
    assert rank_cut(gram(1e-13))[0].size == 2
    assert rank_cut(gram(1e-15))[0].size == 1
    # with 1e9 rows the squared singular-value rule dominates: (1e9 · eps · 10)² ≈ 4.9e-12
    assert rank_cut(gram(1e-13), n_rows=10**9)[0].size == 1
    vals, vecs, null = rank_cut(gram(1e-15))
    np.testing.assert_allclose(np.abs(null[0]), [2**-0.5, 2**-0.5], rtol=1e-12)


def test_degenerate_matrices():
    inv, rank, null = _cut_inverse(np.zeros((0, 0)), None)
    assert inv.shape == (0, 0) and rank == 0
    vals, vecs, null = rank_cut(np.zeros((3, 3)))
    assert vals.size == 0 and null.shape == (3, 3)
    assert _null_columns(np.zeros((0, 3))) == []
