"""model/_model_interface.py: the rows, weights, engine view, reported coefficients and
λ facts that results, refits and estimators read of a model.

Proved here: ``per_row`` maps a column name or a full-length argument onto the training
rows (and names the argument when it cannot); the weight totals (``unit_weight`` ×
``weight_scale`` is the weights, ``wnobs`` and ``n_effective`` their textbook sums);
``linear_predictor`` is the gather θ_j[c_ij] + Z β + β0 + offset written as a loop, and
refuses coefficients that do not fit the design; ``report_coef`` folds β0 into the
first block when ``- 1`` absorbs it; ``lambda_max`` is the λ where the binned term
becomes flat; ``lambda_grid`` is log-spaced from it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from binarsity_stats.model._model import glm


def data(n: int = 200, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x": rng.normal(size=n), "g": rng.choice(list("abc"), n),
                       "z": rng.normal(size=n), "o": rng.uniform(-0.2, 0.2, n)})  # fmt: skip
    df["y"] = (df.x > 0) + 0.3 * df.z + 0.5 * (df.g == "b") + rng.normal(size=n)
    return df


def test_per_row_reads_a_column_and_names_the_argument():
    df = data()
    df["grp"] = np.arange(len(df)) % 7
    m = glm("y ~ bin(x, 8) + z", df)
    assert m.per_row(None, "groups") is None
    np.testing.assert_array_equal(m.per_row("grp", "groups"), df["grp"].to_numpy())
    with pytest.raises(ValueError, match=r"groups='grpp' is not a column.*grp"):
        m.per_row("grpp", "groups")


def test_per_row_takes_the_kept_rows_of_a_full_length_argument():
    df = data()
    df.loc[[3, 10, 50], "x"] = np.nan
    m = glm("y ~ bin(x, 8) + z", df, missing="drop")
    assert m.nobs == len(df) - 3
    full = np.arange(len(df))
    got = np.asarray(m.per_row(full, "folds"))
    np.testing.assert_array_equal(got, np.delete(full, [3, 10, 50]))
    kept_length = np.arange(m.nobs)  # already one per training row: unchanged
    assert m.per_row(kept_length, "folds") is kept_length


def test_weight_totals():
    df = data()
    rng = np.random.default_rng(1)
    w = rng.integers(0, 4, len(df)).astype(float) * 1e6
    m = glm("y ~ bin(x, 8) + z", df, sample_weight=w, weights_kind="freq")
    scale = m.weight_scale
    assert scale == 2.0 ** round(np.log2(scale))  # a power of two
    np.testing.assert_array_equal(m.unit_weight * scale, w)  # exact: division by 2^k
    assert 1 <= m.unit_weight.max() < 2
    assert m.wnobs == pytest.approx(w.sum(), rel=1e-15)
    assert m.n_effective == pytest.approx(w.sum(), rel=1e-12)
    assert m.freq_weights is w or np.array_equal(m.freq_weights, w)
    assert m.var_weights is None

    a = glm("y ~ bin(x, 8) + z", df, sample_weight=w, weights_kind="analytic")
    assert a.wnobs == np.count_nonzero(w > 0)  # a zero analytic weight removes the row
    kish = w.sum() ** 2 / (w**2).sum()
    assert a.n_effective == pytest.approx(kish, rel=1e-12)
    assert a.freq_weights is None and a.var_weights is not None

    u = glm("y ~ bin(x, 8) + z", df)
    assert u.wnobs == u.n_effective == u.nobs == len(df)
    assert u.weight_scale == 1.0


def test_linear_predictor_is_the_gather_written_as_a_loop():
    df = data()
    m = glm("y ~ bin(x, 8) + C(g) + z", df, offset=df["o"].to_numpy())
    res = m.fit(lam=0.01)
    eta = m.linear_predictor(res.coef, res.dense_coef, res.intercept)
    codes, ptr = m.design.codes, m.block_ptr
    want = np.empty(m.nobs)
    for i in range(m.nobs):
        s = res.intercept + df["o"].iloc[i] + res.dense_coef[0] * df["z"].iloc[i]
        for j in range(codes.shape[0]):
            s += res.coef[ptr[j] + codes[j, i]]
        want[i] = s
    np.testing.assert_allclose(eta, want, rtol=1e-13, atol=1e-13)


def test_linear_predictor_refuses_coefficients_that_do_not_fit():
    m = glm("y ~ bin(x, 8) + C(g) + z", data())
    res = m.fit(lam=0.01)
    with pytest.raises(ValueError, match=r"len\(coef\) = 10 but the blocks hold 11"):
        m.linear_predictor(res.coef[:-1], res.dense_coef, res.intercept)
    with pytest.raises(ValueError, match="2 dense coefficients for 1 dense columns"):
        m.linear_predictor(res.coef, np.zeros(2), res.intercept)
    with pytest.raises(ValueError, match="1-D array of numbers"):
        m.linear_predictor(res.coef.astype(str), res.dense_coef, res.intercept)


def test_report_coef_folds_the_intercept_into_the_first_block():
    df = data()
    with_int = glm("y ~ bin(x, 8) + C(g) + z", df)
    without = glm("y ~ bin(x, 8) + C(g) + z - 1", df)
    assert not with_int.intercept_absorbed and with_int.solver_intercept
    assert without.intercept_absorbed and without.solver_intercept
    assert not without.fit_intercept
    sol = without.fit(lam=0.01).solution
    coef, b0 = without.report_coef(sol)
    assert b0 == 0.0
    ptr = without.block_ptr
    np.testing.assert_allclose(coef[ptr[0] : ptr[1]], sol.coef[ptr[0] : ptr[1]] + sol.intercept,
                               rtol=0, atol=1e-15)  # fmt: skip
    np.testing.assert_array_equal(coef[ptr[1] :], sol.coef[ptr[1] :])
    # with an intercept the solution is reported unchanged
    sol1 = with_int.fit(lam=0.01).solution
    coef1, b1 = with_int.report_coef(sol1)
    np.testing.assert_array_equal(coef1, sol1.coef)
    assert b1 == sol1.intercept


def test_lambda_max_is_where_the_binned_term_becomes_flat():
    m = glm("y ~ bin(x, 8) + z", data())
    lmax = m.lambda_max()
    assert lmax > 0
    above = m.fit(lam=lmax * 1.01).coef
    below = m.fit(lam=lmax * 0.9).coef
    assert np.ptp(above) < 1e-8
    assert np.ptp(below) > 1e-4


def test_lambda_grid_is_log_spaced_from_lambda_max():
    m = glm("y ~ bin(x, 8) + z", data())
    grid = m.lambda_grid(7, 1e-2)
    assert grid.shape == (7,)
    np.testing.assert_allclose(grid, np.geomspace(m.lambda_max(), 1e-2 * m.lambda_max(), 7),
                               rtol=1e-12)  # fmt: skip
    with pytest.raises(ValueError, match="lam_min_ratio"):
        m.lambda_grid(5, 1.5)


def test_lambda_theory_refuses_adaptive_weights():
    m = glm("y ~ bin(x, 8) + z", data())
    m.lambda_theory()  # defined for the first stage
    m = m.adaptive(m.fit(lam=0.01))
    with pytest.raises(ValueError, match="adaptive penalty weights"):
        m.lambda_theory()


# -- the one declared check: METHOD_NEEDS, lacks(), require() ------------------------------
def test_every_declared_need_is_checked_by_a_method_and_every_check_is_declared():
    """``METHOD_NEEDS`` is the one place a method's needs are written: each key is
    checked by a ``require(...)`` call in the package, and each call names a key."""
    import ast
    import pathlib

    import binarsity_stats
    from binarsity_stats.model._model_interface import METHOD_NEEDS

    called = set()
    for path in pathlib.Path(binarsity_stats.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "require" and node.args
                    and isinstance(node.args[0], ast.Constant)):  # fmt: skip
                called.add(node.args[0].value)
    assert called == set(METHOD_NEEDS)


def test_require_refuses_what_the_model_lacks_and_nothing_else():
    import pandas as pd

    from binarsity_stats import glm
    from binarsity_stats.model._model_dask import RowsOnWorkersError
    from binarsity_stats.model._model_interface import CHAINS, METHOD_NEEDS, ROWS

    rng = np.random.default_rng(3)
    df = pd.DataFrame({"a": rng.normal(size=300), "b": rng.normal(size=300)})
    df["y"] = df.a + rng.normal(size=300)
    plain = glm("y ~ bin(a, 4) + bin(b, 4)", df)
    pair = glm("y ~ bin(a, 4) + bin(b, 4) + bin(a, 3):bin(b, 3)", df)
    assert plain.lacks() == frozenset() and pair.lacks() == frozenset({CHAINS})
    for method, (needs, _) in METHOD_NEEDS.items():
        plain.require(method)  # an in-memory model of chains lacks nothing
        if CHAINS in needs:
            with pytest.raises(ValueError, match=r"does not handle the pair term 'bin\(a, 3\)"):
                pair.require(method, label="my_call()")
        else:
            pair.require(method)
    # rows on the workers (``collect=False``, tested end to end in
    # tests/distributed/test_dask_stats.py): lacks() reads ``rows_on_workers``
    on_workers = type("OnWorkers", (type(plain),), {"rows_on_workers": True})
    plain.__class__ = on_workers
    assert plain.lacks() == frozenset({ROWS})
    with pytest.raises(RowsOnWorkersError, match=r"^bootstrap\(\) is not available"):
        plain.require("bootstrap()")
    plain.require("alo()")  # needs chains, not rows
