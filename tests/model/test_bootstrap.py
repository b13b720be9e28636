"""res.bootstrap(): resamples on the same bins, bands, cut-point frequencies, intervals."""

import pickle

import numpy as np
import pandas as pd
import pytest

import binarsity_stats as bs
from binarsity_stats.model._bootstrap import _resample_counts
from binarsity_stats.engine._solvers import solve


def _step_data(n, seed=0, family="gaussian"):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x": rng.uniform(0, 1, n), "z": rng.uniform(0, 1, n),
                       "g": rng.choice(list("abc"), n)})  # fmt: skip
    f = np.where(df["x"] > 0.5, 1.0, 0.0)
    if family == "gaussian":
        df["y"] = f + rng.normal(0, 1, n)
    elif family == "binomial":
        df["y"] = (rng.uniform(size=n) < 1 / (1 + np.exp(-(2 * f - 1)))).astype(float)
    else:
        df["t"] = rng.uniform(0.5, 2.0, n)
        df["y"] = rng.poisson(df["t"] * np.exp(f - 0.5)).astype(float)
    return df


@pytest.fixture(scope="module")
def step_fit():
    df = _step_data(6000)
    res = bs.glm("y ~ bin(x, n_bins=20) + bin(z, n_bins=20)", df).fit()
    return df, res, res.bootstrap(60, random_state=0)


def test_bands_cover_the_true_step_at_most_bins(step_fit):
    # percentile bands are centred on the penalised estimate, whose jumps are shrunk by
    # about λ: at the theory λ they miss the truth (docs/benchmarks.md); at a λ whose
    # bias is below the noise they cover it
    df, res, _ = step_fit
    res = res.model.fit(res.lam / 10)
    boot = res.bootstrap(60, random_state=0)
    bands = boot.shape_bands(0.95)
    x = bands[bands["term"] == "bin(x, n_bins=20)"]
    block = res.model.spec.blocks[0]
    lo, hi = block.intervals()
    mid = np.clip((np.maximum(lo, 0) + np.minimum(hi, 1)) / 2, 0, 1)
    counts = res.model.bin_counts[: block.n_levels]
    truth = (mid > 0.5).astype(float)
    truth -= np.sum(counts * truth) / counts.sum()  # the fit's constraint: Σ n_k θ_k = 0
    inside = (x["lower"].to_numpy() - 1e-9 <= truth) & (truth <= x["upper"].to_numpy() + 1e-9)
    assert inside.mean() >= 0.8
    assert np.all(x["lower"] <= x["upper"])
    # the null feature's band holds 0 at most bins
    z = bands[bands["term"] == "bin(z, n_bins=20)"]
    assert np.mean((z["lower"] <= 1e-9) & (z["upper"] >= -1e-9)) >= 0.8


def test_cut_frequencies_high_at_the_true_cut_low_on_a_null_feature(step_fit):
    df, res, boot = step_fit
    cf = boot.cut_frequencies()
    x = cf[cf["column"] == "x"]
    near = x[np.abs(x["cut"] - 0.5) < 0.03]
    assert near["frequency"].max() >= 0.95
    z = cf[cf["column"] == "z"]
    assert z["frequency"].max() <= 0.25
    assert z["frequency"].mean() <= 0.05
    # the cut-point table and the summary gain the column
    cuts = res.cut_points()
    assert "frequency" in cuts
    text = str(res.summary())
    assert text.count("boot freq") == 2  # the column and its note
    assert "share of 60 bootstrap refits" in text


def test_reproducible_and_bitwise_equal_across_n_jobs():
    df = _step_data(800, seed=3)
    res = bs.glm("y ~ bin(x, n_bins=10) + C(g)", df).fit()
    a = res.bootstrap(8, random_state=5, n_jobs=1)
    b = res.bootstrap(8, random_state=5, n_jobs=2)
    c = res.bootstrap(8, random_state=6, n_jobs=2)
    assert np.array_equal(a.coef, b.coef) and np.array_equal(a.intercept, b.intercept)
    assert not np.array_equal(a.coef, c.coef)


def _manual_refit(res, counts):
    m = res.model
    rows = np.flatnonzero(counts)
    sw = counts[rows] * (m.sample_weight[rows] if m.weighted else 1.0)
    return solve(
        np.ascontiguousarray(m.design.codes[:, rows]), m.block_ptr, m.y[rows],
        family=m.family, lam=res.lam, penalty_weights=m.penalty_weights,
        sample_weight=sw, offset=None if m.offset is None else m.offset[rows], tol=1e-10,
    )  # fmt: skip


@pytest.mark.parametrize("family", ["gaussian", "binomial", "poisson"])
def test_a_resample_is_the_fit_with_weights_times_draws(family):
    df = _step_data(600, seed=1, family=family)
    df["w"] = np.random.default_rng(2).uniform(0.5, 3.0, len(df))
    offset = None
    if family == "poisson":  # exposure t: offset log t
        df["logt"] = np.log(df["t"])
        offset = "logt"
    formula = "y ~ bin(x, n_bins=8) + bin(z, n_bins=8)"
    res = bs.glm(formula, df, family=family, sample_weight="w", offset=offset).fit()
    boot = res.bootstrap(2, random_state=11, tol=1e-10)
    seeds = np.random.default_rng(11).integers(0, 2**63 - 1, size=2, dtype=np.int64)
    for b in range(2):
        counts = _resample_counts(len(df), None, np.random.default_rng(int(seeds[b])))
        ref = _manual_refit(res, counts)
        np.testing.assert_allclose(boot.coef[b], ref.coef, atol=1e-6)
        np.testing.assert_allclose(boot.intercept[b], ref.intercept, atol=1e-6)
    assert boot.converged.all()
    pct = boot.predict(df.head(20), interval=0.9, method="percentile")
    pred = boot.predict(df.head(20), interval=0.9)  # the default: relaxed
    for frame in (pct, pred):
        assert np.all(frame["mean_ci_lower"] <= frame["mean_ci_upper"])
        if family == "binomial":
            assert np.all((frame["mean_ci_lower"] > 0) & (frame["mean_ci_upper"] < 1))
    np.testing.assert_allclose(pct["mean"], res.predict(df.head(20)))
    # the relaxed interval is centred on the fit's cut-points refitted without penalty
    np.testing.assert_allclose(pred["mean"], res.refit().predict(df.head(20)), rtol=1e-5)
    assert pred.attrs["interval"] == "bootstrap (relaxed, 2 resamples)"


def test_grouped_resampling_keeps_groups_whole():
    groups = np.repeat(np.arange(30), 7)
    rng = np.random.default_rng(0)
    for _ in range(5):
        counts = _resample_counts(groups.size, groups, rng)
        per_group = counts.reshape(30, 7)
        assert np.all(per_group == per_group[:, :1])  # a group is drawn whole
        assert per_group[:, 0].sum() == 30  # as many groups as there are
    df = _step_data(210, seed=4)
    df["grp"] = groups
    cv = bs.glm("y ~ bin(x, n_bins=6)", df).fit_cv(folds=3, random_state=0, groups=df["grp"])
    boot = cv.best_.bootstrap(3, random_state=0)
    assert boot.grouped
    boot_cv = cv.best_.bootstrap(2, random_state=0, lam="cv")
    assert boot_cv.lam_rule == "cv" and np.all(np.isin(boot_cv.lams, cv.lams))


def test_lam_cv_needs_a_cv_fit_and_arguments_are_checked():
    df = _step_data(300, seed=5)
    res = bs.glm("y ~ bin(x, n_bins=6)", df).fit()
    with pytest.raises(ValueError, match="fit_cv"):
        res.bootstrap(2, lam="cv")
    with pytest.raises(ValueError, match="lam must be"):
        res.bootstrap(2, lam="min")
    with pytest.raises(ValueError, match="n_boot"):
        res.bootstrap(0)
    boot = res.bootstrap(3, random_state=0)
    with pytest.raises(ValueError, match="level"):
        boot.shape_bands(95)
    with pytest.raises(ValueError, match="interval"):
        boot.predict(df, interval=1.5)


def test_pickled_bootstrap_results_give_the_same_tables(step_fit):
    df, res, boot = step_fit
    again = pickle.loads(pickle.dumps(boot))
    pd.testing.assert_frame_equal(again.shape_bands(), boot.shape_bands())
    pd.testing.assert_frame_equal(again.cut_frequencies(), boot.cut_frequencies())
    pd.testing.assert_frame_equal(again.results.cut_points(), res.cut_points())


def test_plot_shapes_draws_bands(step_fit):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    df, res, boot = step_fit
    fig = boot.plot_shapes()
    assert len(fig.axes) >= 2
    fig2 = res.plot_shapes(bands=True)
    assert len(fig2.axes) >= 2


def test_frequency_weights_resample_units_as_the_repeated_rows_do():
    # a row of frequency weight 10 is 10 identical units: the bootstrap draws units, so its
    # spread is that of the 600 repeated rows, not that of 60 rows drawn whole (√10 wider)
    rng = np.random.default_rng(8)
    df = pd.DataFrame({"x": rng.uniform(0, 1, 60), "y": rng.normal(0, 1, 60), "w": 10.0})
    rep = df.loc[df.index.repeat(10)].reset_index(drop=True)
    formula = "y ~ bin(x, n_bins=3)"
    freq = bs.glm(formula, df, sample_weight="w", weights_kind="freq").fit(1e-4)
    plain = bs.glm(formula, rep).fit(1e-4)
    np.testing.assert_allclose(freq.coef, plain.coef, atol=1e-6)
    sd_freq = freq.bootstrap(150, random_state=0).intercept.std()
    sd_rep = plain.bootstrap(150, random_state=0).intercept.std()
    assert 0.75 < sd_freq / sd_rep < 1.33
    # analytic weights are observations: their rows are drawn whole
    analytic = bs.glm(formula, df, sample_weight="w").fit(1e-4)
    assert analytic.bootstrap(150, random_state=0).intercept.std() > 2 * sd_rep
    counts = _resample_counts(4, None, np.random.default_rng(0), np.array([2.0, 0.0, 1.0, 3.0]))
    assert counts.sum() == 6 and counts[1] == 0


def test_relaxed_plot_draws_the_relaxed_fit_inside_its_band(step_fit):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    df, res, boot = step_fit
    theory = res.model.fit()  # a large λ: the penalised step is shrunk, the relaxed one not
    tboot = theory.bootstrap(20, random_state=0)
    bands = tboot.shape_bands(0.9, method="relaxed")
    fig = tboot.plot_shapes(terms=["bin(x, n_bins=20)"], method="relaxed")
    drawn = [p for p in fig.axes[0].patches if type(p).__name__ == "StepPatch"]
    heights = drawn[0].get_data().values  # the step line is drawn first, then the band
    x = bands[bands["term"] == "bin(x, n_bins=20)"]
    np.testing.assert_allclose(heights, x["estimate"].to_numpy())
    assert not np.allclose(heights, theory.coef[:20])
    lo, hi = x["lower"].to_numpy(), x["upper"].to_numpy()
    assert np.mean((lo <= heights + 1e-12) & (heights <= hi + 1e-12)) >= 0.9
