"""The Dask solver at λ ≥ λ_max returns the exact null fit, as the in-memory one does.

Issue 22 item 6: "a fit at λ ≥ λ_max is exactly flat". The proximal-Newton steps of the
Dask solver left an edge open by their stopping error at λ_max (θ of 5e-9) and the
re-centring of a fused block left a constant 1e-16 above it; now every penalised level
is exactly 0 and the intercept (with the free ``C()`` levels and the offsets) is that of
the unpenalised fit on the fused segments — link(weighted mean of y) for a canonical
family without offset — as ``Prepared._exactly_flat`` gives in memory
(tests/test_jumps.py). Runs on a real ``distributed.LocalCluster``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

import binarsity_stats as bs  # noqa: E402


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0"
    ) as cluster, distributed.Client(cluster) as c:  # fmt: skip
        yield c


def _data(seed: int = 3, n: int = 1500) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "a": rng.normal(size=n), "b": rng.normal(size=n),
        "g": rng.integers(0, 3, n).astype(float), "o": 0.2 * rng.normal(size=n),
        "w": rng.uniform(0.5, 2.0, n),
    })  # fmt: skip
    df["y"] = (rng.random(n) < 1 / (1 + np.exp(0.5 - 0.5 * (df["a"] > 0)))).astype(float)
    df["c"] = rng.poisson(np.exp(0.3 * (df["a"] > 0) + df["o"])).astype(float)
    df["z"] = df["a"].clip(-1, 1) + rng.normal(size=n)
    return df


def _penalised(res) -> np.ndarray:
    m = res.model
    return np.concatenate([
        res.coef[int(m.block_ptr[j]) : int(m.block_ptr[j + 1])]
        for j, block in enumerate(m.spec.blocks) if block.penalized
    ])  # fmt: skip


# the null fit's intercept is known to the KKT tolerance (1e-7 in the gradient's units)
# over the curvature (≥ 0.2 here): 1e-6 leaves a margin of 2
ATOL = 1e-6


@pytest.mark.parametrize(
    ("family", "formula"),
    [
        ("binomial", "y ~ bin(a, 10) + bin(b, 10) + C(g)"),
        ("poisson", "c ~ bin(a, 10) + bin(b, 10) + C(g)"),
        ("gaussian", "z ~ bin(a, 10) + bin(b, 10) + C(g)"),
        ("poisson", "c ~ bin(a, 10) + bin(b, 10) + offset(o)"),
    ],
)
@pytest.mark.parametrize("factor", [1.0, 1.5])
def test_a_dask_fit_at_or_above_lambda_max_is_exactly_the_null_fit(client, family, formula, factor):
    df = _data()
    m = bs.glm(formula, dd.from_pandas(df, npartitions=4), family=family)
    lam = factor * m.lambda_max()
    res = m.fit(lam=lam, solver="dask")
    assert res.solution.n_passes > 0  # the Dask solver ran
    assert np.all(_penalised(res) == 0.0), _penalised(res)
    assert res.n_jumps == 0
    assert res.converged
    local = m.fit(lam=lam)
    assert np.all(_penalised(local) == 0.0)
    assert res.intercept == pytest.approx(local.intercept, abs=ATOL)
    np.testing.assert_allclose(res.coef, local.coef, rtol=0, atol=ATOL)


@pytest.mark.parametrize(("family", "response"), [("binomial", "y"), ("poisson", "c")])
def test_the_dask_null_fit_is_the_link_of_the_weighted_mean(client, family, response):
    df = _data()
    m = bs.glm(f"{response} ~ bin(a, 10) + bin(b, 10)", dd.from_pandas(df, npartitions=4),
               family=family, sample_weight="w")  # fmt: skip
    res = m.fit(lam=m.lambda_max(), solver="dask")
    assert np.all(res.coef == 0.0)
    ybar = float(np.average(df[response], weights=df["w"]))
    link = np.log(ybar / (1 - ybar)) if family == "binomial" else np.log(ybar)
    assert res.intercept == pytest.approx(link, abs=ATOL)


def test_a_block_kind_the_dask_solver_lacks_is_refused_before_any_pass():
    from types import SimpleNamespace

    from binarsity_stats.distributed._dask_problem import DaskProblem
    from binarsity_stats.distributed._dask_solve import partitions_from_arrays

    codes = np.zeros((2, 10), dtype=np.uint8)
    design = SimpleNamespace(block_ptr=np.array([0, 3, 6]), kinds=("tv", "increasing"),
                             n_dense=0, partitions=partitions_from_arrays(codes, np.ones(10)))
    with pytest.raises(ValueError, match=r"block 1 of the design: block kind 'increasing' is "
                                         r"not supported by the dask backend"):  # fmt: skip
        DaskProblem(design, "gaussian")
