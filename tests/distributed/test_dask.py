"""Fits on Dask DataFrames: mergeable binning, codes per partition, the same results.

The cut points learned from per-partition summaries are compared with the in-memory
``Binarizer`` (ties, weights with zeros, equal weights, NaN, ``min_count``), the quantile
sketch with its documented rank-error bound, and ``glm(formula, dask_frame)`` with
``glm(formula, pandas_frame)`` bit for bit (design, codes, coefficients, predictions,
``to_spec``/``to_sql``); one test runs on a ``distributed.LocalCluster``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")

from binarsity_stats import glm  # noqa: E402
from binarsity_stats.design._binarizer import BinarizerCore  # noqa: E402
from binarsity_stats.distributed._dask import DaskDesign  # noqa: E402
from binarsity_stats.distributed._dask_summary import (  # noqa: E402
    ValueSummary,
    cuts_from_summary,
    fixed_point_shift,
    to_fixed,
)


@pytest.fixture(autouse=True)
def _sync_scheduler():
    with dask.config.set(scheduler="sync"):
        yield


def _column(rng, kind, n):
    if kind == 0:  # few distinct values (ages, ratings)
        return rng.integers(0, 30, n).astype(float)
    if kind == 1:  # a spike at 0 with a continuous tail
        return np.where(rng.random(n) < 0.7, 0.0, rng.exponential(size=n))
    if kind == 2:  # rounded, many ties
        return rng.normal(size=n).round(1)
    return rng.normal(size=n)


@pytest.mark.parametrize("seed", range(4))
def test_merged_summaries_give_the_binarizers_cut_points(seed):
    rng = np.random.default_rng(seed)
    for trial in range(60):
        n = int(rng.integers(5, 2000))
        x = _column(rng, trial % 4, n)
        if trial % 3 == 0:
            x[rng.random(n) < 0.1] = np.nan
        w = None
        if trial % 5 == 1:  # unequal weights, some zero
            w = rng.exponential(size=n)
            w[rng.random(n) < 0.2] = 0.0
            w[0] = 1.0
        elif trial % 5 == 2:  # equal weights: the Binarizer's unweighted shortcut
            w = np.full(n, 2.5)
        n_bins = int(rng.integers(2, 60))
        min_count = int(rng.choice([1, 1, 5, 20]))
        ref = BinarizerCore(n_bins=n_bins, missing="separate", min_bin_count=min_count)
        ref.fit(pd.DataFrame({"x": x}), sample_weight=w)
        q = None if w is None else to_fixed(w, fixed_point_shift(n, w.max()))
        parts = np.split(np.arange(n), np.sort(rng.choice(n, 4)))  # empty parts too
        merged = ValueSummary.merge(
            [ValueSummary.of(x[p], None if q is None else q[p]) for p in parts]
        )
        assert merged.exact
        edges, _ = cuts_from_summary(merged, n_bins, min_count, weighted=w is not None)
        np.testing.assert_array_equal(edges, ref.edges_[0])


@pytest.mark.parametrize("scale", [1e-300, 1e-5, 1e300])
def test_weights_at_any_scale_and_heavy_tails_give_the_binarizers_cut_points(scale):
    rng = np.random.default_rng(7)
    for _ in range(10):
        n = 800
        x = np.where(rng.random(n) < 0.5, 0.0, rng.standard_cauchy(n)).round(2)
        w = rng.exponential(size=n) * scale
        ref = BinarizerCore(n_bins=20).fit(x[:, None], sample_weight=w)
        q = to_fixed(w, fixed_point_shift(n, w.max()))
        parts = np.array_split(np.arange(n), 5)
        merged = ValueSummary.merge([ValueSummary.of(x[p], q[p]) for p in parts])
        edges, _ = cuts_from_summary(merged, 20, weighted=True)
        np.testing.assert_array_equal(edges, ref.edges_[0])


def _tree_merge(leaves, **kw):
    while len(leaves) > 1:  # as the workers merge: groups of 8, thinned at every level
        leaves = [ValueSummary.merge(leaves[i : i + 8], **kw) for i in range(0, len(leaves), 8)]
    return leaves[0]


@pytest.mark.parametrize("tie", [False, True])
def test_sketch_rank_error_is_within_its_bound(tie):
    rng = np.random.default_rng(5)
    n, k = 200_000, 256
    x = rng.lognormal(size=n)
    if tie:
        x[: n // 5] = 1.0  # a big tie: kept as one value with its whole mass
    parts = np.array_split(np.arange(n), 37)
    kw = dict(max_distinct=1000, sketch_size=k)
    merged = _tree_merge([ValueSummary.of(x[p], **kw) for p in parts], **kw)
    assert not merged.exact
    assert merged.values.size <= 2 * k + 2
    assert merged.vmin == x.min() and merged.vmax == x.max()
    assert merged.total_mass == n
    assert merged.rank_error <= merged.levels / k + 1e-15
    assert merged.levels <= 3  # partitions, then two levels of the tree
    # the sketch's cumulative mass at each of its values against the exact ranks
    xs = np.sort(x)
    true_rank = np.searchsorted(xs, merged.values, side="right")
    err = np.abs(true_rank - np.cumsum(merged.mass)).max() / n
    assert 0 < err <= merged.rank_error  # a sketch (the test sees an error), within the bound
    if not tie:  # cut points at their quantile levels k/d, within the bound (+ one step)
        edges, _ = cuts_from_summary(merged, 20)
        assert len(edges) == 19
        levels = np.searchsorted(xs, edges, side="right") / n
        step = merged.mass.max() / n
        assert np.abs(levels - np.arange(1, 20) / 20).max() <= merged.rank_error + step


def _frame(n=1500, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "age": rng.integers(18, 80, n).astype(float),
            "amount": rng.exponential(size=n).round(2),
            "region": rng.choice(["north", "south", "east"], n),
            "z": rng.normal(size=n),
            "w": rng.exponential(size=n),
            "t": rng.uniform(1, 2, n),
        }
    )
    df.loc[rng.random(n) < 0.05, "amount"] = np.nan
    df.loc[: n // 2, "region"] = "north"  # the other levels only in later partitions
    df.loc[n - 3, "region"] = "west"  # a level seen in the last partition only
    mu = np.exp(0.02 * (df.age - 50) + 0.3 * (df.region == "south") + 0.1 * df.z)
    df["claims"] = rng.poisson(mu * df.t)
    return df


FORMULA = "claims ~ bin(age) + bin(amount, 20, min_count=30) + C(region) + z + offset(np.log(t))"


@pytest.mark.parametrize("weighted", [False, True])
def test_glm_on_a_dask_frame_is_the_in_memory_fit(weighted):
    df = _frame()
    ddf = dd.from_pandas(df, npartitions=5)
    kw = dict(family="poisson", missing="separate", sample_weight="w" if weighted else None)
    m1, m2 = glm(FORMULA, df, **kw), glm(FORMULA, ddf, **kw)
    assert [repr(b) for b in m1.spec.blocks] == [repr(b) for b in m2.spec.blocks]
    np.testing.assert_array_equal(m1.design.codes, m2.design.codes)
    assert m2.design.codes.dtype == np.uint8
    np.testing.assert_array_equal(m1.design.dense, m2.design.dense)
    np.testing.assert_array_equal(m1.offset, m2.offset)
    np.testing.assert_array_equal(m1.sample_weight, m2.sample_weight)
    assert all(v["exact"] for v in m2.dask_binning.values())
    r1, r2 = m1.fit(lam=1e-3), m2.fit(lam=1e-3)
    np.testing.assert_array_equal(r1.coef, r2.coef)
    assert r1.intercept == r2.intercept and r1.deviance == r2.deviance
    assert r1.to_spec() == r2.to_spec()
    assert r1.to_sql("t") == r2.to_sql("t")
    assert r1.summary().as_text() == r2.summary().as_text()
    pred = r2.predict(ddf)
    assert isinstance(pred, dd.Series)
    np.testing.assert_array_equal(pred.compute().to_numpy(), r1.predict(df))
    np.testing.assert_array_equal(r2.predict(df, type="link"), r1.predict(df, type="link"))


def test_dask_design_partitions_follow_the_agreed_layout():
    df = _frame(600)
    ddf = dd.from_pandas(df, npartitions=3)
    m = glm(FORMULA, ddf, family="poisson", missing="separate", sample_weight="w")
    design = m.dask_design
    assert isinstance(design, DaskDesign)
    assert design.n_rows == len(df) and len(design.partitions) == 3
    assert design.kinds == ("tv", "tv", "free")
    np.testing.assert_array_equal(design.block_ptr, m.block_ptr)
    parts = dask.compute(*design.partitions)
    assert [p["codes"].shape[1] for p in parts] == [len(p) for p in ddf.partitions]
    first = parts[0]
    assert first["codes"].flags.c_contiguous and first["codes"].dtype == np.uint8
    assert first["dense"].shape == (first["codes"].shape[1], 1)
    for key in ("y", "weight", "offset"):
        assert first[key].dtype == np.float64
    np.testing.assert_array_equal(np.concatenate([p["offset"] for p in parts]), m.offset)
    np.testing.assert_array_equal(np.concatenate([p["y"] for p in parts]), m.y)
    kept = design.persist()  # computed once, kept in memory, same order
    assert kept.n_rows == design.n_rows and len(kept.partitions) == 3
    np.testing.assert_array_equal(kept.collect()["codes"], m.design.codes)


def test_a_sketched_feature_gets_near_quantile_cut_points(monkeypatch):
    from binarsity_stats.distributed import _dask

    monkeypatch.setattr(_dask, "MAX_DISTINCT", 200)
    monkeypatch.setattr(_dask, "SKETCH_SIZE", 64)
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"x": rng.normal(size=4000), "k": rng.integers(0, 50, 4000) * 1.0})
    df["y"] = (df.x > 0) + rng.normal(size=4000)
    ddf = dd.from_pandas(df, npartitions=4)
    m = glm("y ~ bin(x, 10) + bin(k, 10)", ddf)
    assert m.dask_binning["x"]["exact"] is False
    assert m.dask_binning["k"]["exact"] is True  # 50 distinct values: exact
    exact = glm("y ~ bin(x, 10) + bin(k, 10)", df)
    np.testing.assert_array_equal(m.spec.blocks[1].edges, exact.spec.blocks[1].edges)
    xs = np.sort(df.x.to_numpy())
    got = np.searchsorted(xs, m.spec.blocks[0].edges, side="right") / len(xs)
    want = np.searchsorted(xs, exact.spec.blocks[0].edges, side="right") / len(xs)
    assert np.abs(got - want).max() <= m.dask_binning["x"]["rank_error"] + 1 / len(xs)
    res = m.fit(lam=1e-3)  # a sketch has no per-bin distinct values: labels say (a, b]
    assert res.cut_points() is not None
    # every bin is non-empty in the data once coded
    assert np.all(m.bin_counts > 0)


@pytest.mark.parametrize(
    ("formula", "kw", "match"),
    [
        ("y ~ bin(x) + center(z)", {}, "center"),
        ("y ~ bin(x) + poly(z, 2)", {}, "poly"),
        ("g ~ bin(x)", {"family": "binomial"}, "I\\(g == 'yes'\\)"),
        ("cbind(s, f) ~ bin(x)", {"family": "binomial"}, "cbind"),
        ("y ~ bin(x)", {"missing": "drop"}, "dropna"),
        ("y ~ bin(x)", {"sample_weight": np.ones(40)}, "name of a column"),
        ("y ~ bin(x)", {"sample_weight": "ww"}, "'ww' is not a column"),
        ("y ~ bin(x) + nope", {}, "nope"),
        ("y ~ bin(xn)", {}, "column 'xn' contains missing values"),
        ("y ~ bin(x, foo=1)", {}, r"bin\(x, foo=...\) is not supported"),
        ("y ~ bin(x):C(g)", {}, r"bin\(x, by=...\) is not supported"),
        ("y ~ ordered(g, levels=['no', 'yes'])", {}, r"ordered\(\) terms are not supported"),
    ],
)
def test_unsupported_terms_and_arguments_are_refused_by_name(formula, kw, match):
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {"x": rng.normal(size=40), "z": rng.normal(size=40), "y": rng.normal(size=40),
         "g": rng.choice(["no", "yes"], 40), "s": 1.0, "f": 2.0, "w": 1.0,
         "xn": np.r_[np.ones(39), np.nan]}
    )  # fmt: skip
    with pytest.raises((ValueError, TypeError), match=match):
        glm(formula, dd.from_pandas(df, npartitions=2), **kw)


def test_column_names_for_cv_groups_ask_for_values_on_a_dask_model():
    df = _frame(300)
    df["grp"] = np.arange(300) % 7
    m = glm(FORMULA, dd.from_pandas(df, npartitions=2), family="poisson", missing="separate")
    with pytest.raises(ValueError, match="does not keep its data; pass the groups values"):
        m.fit_cv(folds=3, groups="grp", n_lambdas=3)
    cv = m.fit_cv(folds=3, groups=df["grp"].to_numpy(), n_lambdas=3)
    assert np.isfinite(cv.lam_min)


def test_a_negative_weight_in_one_partition_names_the_column():
    df = _frame(300)
    df.loc[250, "w"] = -1.0
    with pytest.raises(ValueError, match="sample_weight column 'w' must be non-negative"):
        glm(FORMULA, dd.from_pandas(df, npartitions=3), family="poisson", sample_weight="w",
            missing="separate")  # fmt: skip


@pytest.mark.parametrize("how", ["default client", "address"])
def test_fit_on_a_local_cluster(how):
    distributed = pytest.importorskip("distributed")
    df = _frame(800)
    ddf = dd.from_pandas(df, npartitions=4)
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=":0"
    ) as cluster:  # fmt: skip
        if how == "address":  # glm(client="tcp://host:8786") connects to that scheduler
            m = glm(FORMULA, ddf, family="poisson", missing="separate",
                    client=cluster.scheduler_address)  # fmt: skip
            assert m.dask_client.scheduler.address == cluster.scheduler_address
            res = m.fit(lam=1e-3)
            pred = res.predict(ddf).compute(scheduler=m.dask_client).to_numpy()
            m.dask_client.close()
        else:
            with dask.config.set(scheduler=None), distributed.Client(cluster):
                m = glm(FORMULA, ddf, family="poisson", missing="separate")
                res = m.fit(lam=1e-3)
                pred = res.predict(ddf).compute().to_numpy()
    r1 = glm(FORMULA, df, family="poisson", missing="separate").fit(lam=1e-3)
    np.testing.assert_array_equal(res.coef, r1.coef)
    np.testing.assert_array_equal(pred, r1.predict(df))
    import pickle

    saved = pickle.loads(pickle.dumps(m))
    assert "dask_client" not in saved.__dict__ and saved.dask_design is None
    np.testing.assert_array_equal(saved.fit(lam=1e-3).coef, r1.coef)


def test_client_must_be_a_client_or_an_address():
    df = _frame(100)
    with pytest.raises(TypeError, match="client must be a distributed.Client or a scheduler"):
        glm(FORMULA, dd.from_pandas(df, npartitions=2), family="poisson", missing="separate",
            client=3)  # fmt: skip


def test_estimators_fit_and_predict_dask_collections():
    import dask.array as da

    from binarsity_stats import BinarsityClassifier, BinarsityGLM

    rng = np.random.default_rng(3)
    n = 1200
    df = pd.DataFrame(
        {
            "age": rng.integers(18, 80, n).astype(float),
            "amount": rng.exponential(size=n).round(2),
            "region": pd.Categorical(rng.choice(["a", "b", "c"], n)),
            "z": rng.normal(size=n),
        }
    )
    df.loc[rng.random(n) < 0.05, "amount"] = np.nan
    y = rng.poisson(np.exp(0.02 * (df.age - 50) + 0.3 * (df.region == "b"))).astype(float)
    w = rng.exponential(size=n)
    w[:50] = 0.0
    kw = dict(family="poisson", missing="separate", categorical_features="auto",
              linear_features=["z"], lam=1e-3, min_bin_count=10)  # fmt: skip
    e1 = BinarsityGLM(**kw).fit(df, y, sample_weight=w)
    e2 = BinarsityGLM(**kw).fit(
        dd.from_pandas(df, npartitions=4), dd.from_pandas(pd.Series(y), npartitions=4),
        sample_weight=w,  # an in-memory array is cut like X's partitions
    )  # fmt: skip
    for a, b in zip(e1.binarizer_.edges_, e2.binarizer_.edges_, strict=True):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(e1.binarizer_.bin_counts_, e2.binarizer_.bin_counts_, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(e1.coef_, e2.coef_)
    assert e1.intercept_ == e2.intercept_
    pred = e2.predict(dd.from_pandas(df, npartitions=3))
    assert isinstance(pred, dd.Series)
    np.testing.assert_array_equal(pred.compute().to_numpy(), e1.predict(df))

    X = rng.normal(size=(n, 3)).round(1)
    label = X[:, 0] + rng.normal(size=n) > 0
    c1 = BinarsityClassifier(lam=1e-3).fit(X, label)
    c2 = BinarsityClassifier(lam=1e-3).fit(
        da.from_array(X, chunks=(500, 2)), da.from_array(label, chunks=500)
    )
    np.testing.assert_array_equal(c1.coef_, c2.coef_)
    labels = c2.predict(da.from_array(X, chunks=(300, 3)))
    assert isinstance(labels, da.Array)
    np.testing.assert_array_equal(labels.compute(), c1.predict(X))
    with pytest.raises(TypeError, match="offset"):
        c2.decision_function(da.from_array(X, chunks=(300, 3)), offset=np.zeros(n))


@pytest.mark.parametrize(("family", "lam"), [("poisson", 1e-3), ("binomial", "theory")])
def test_fit_with_the_dask_solver_matches_the_in_memory_fit(family, lam):
    pytest.importorskip("binarsity_stats.distributed._dask_solve")
    df = _frame(1500)
    df["event"] = (df.claims > 0).astype(float)
    # (not C(region) for binomial: its level seen in 3 rows only is separated, θ → ∞)
    formula = FORMULA if family == "poisson" else "event ~ bin(age) + bin(amount, 20) + z"
    m = glm(formula, dd.from_pandas(df, npartitions=4), family=family, missing="separate",
            sample_weight="w")  # fmt: skip
    r1 = m.fit(lam=lam, tol=1e-9)
    r2 = m.fit(lam=lam, solver="dask", tol=1e-9)
    assert r2.solution.n_passes > 0  # the rows stayed on the workers
    assert r2.lam == pytest.approx(r1.lam, rel=1e-12)
    assert abs(r2.objective - r1.objective) <= 1e-6 * abs(r1.objective)
    np.testing.assert_allclose(r2.coef, r1.coef, atol=1e-5)
    assert r2.lam_source.endswith("(dask)")


def test_the_dask_solver_needs_a_dask_model():
    df = _frame(200)
    with pytest.raises(ValueError, match="needs a model specified on a Dask DataFrame"):
        glm(FORMULA, df, family="poisson", missing="separate").fit(lam=1e-3, solver="dask")
