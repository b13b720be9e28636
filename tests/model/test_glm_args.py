"""R's arguments of ``glm()`` (issue 28, item 6): ``weights=``, ``subset=``,
``exposure=``. Mirrors ``binarsity_stats/model/_glm_args.py``: each is the fit of the
spelling the package had before (``sample_weight=``, the data cut by hand,
``offset(log(t))``), to the last bit, and new rows replay an exposure column.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import binarsity_stats as bstats


@pytest.fixture(scope="module")
def d():
    rng = np.random.default_rng(0)
    n = 800
    f = pd.DataFrame({"x": rng.uniform(size=n), "t": rng.uniform(0.5, 3, n),
                      "w": rng.uniform(0.5, 2, n), "my t": rng.uniform(0.5, 3, n)})  # fmt: skip
    f["y"] = rng.poisson(f.t * np.exp(np.where(f.x > 0.5, 1.0, 0.0)))
    return f


def _same(a, b):
    np.testing.assert_array_equal(a.params.to_numpy(), b.params.to_numpy())
    assert a.model.nobs == b.model.nobs


def test_weights_is_sample_weight(d):
    _same(bstats.glm("y ~ bin(x, 10)", d, family="poisson", weights="w").fit(lam=1e-3),
          bstats.glm("y ~ bin(x, 10)", d, family="poisson", sample_weight="w").fit(lam=1e-3))
    with pytest.raises(ValueError, match="weights= .* or sample_weight=, not both"):
        bstats.glm("y ~ bin(x, 10)", d, weights="w", sample_weight="w")


def test_exposure_is_an_offset_of_its_log_replayed_from_new_rows(d):
    a = bstats.glm("y ~ bin(x, 10)", d, family="poisson", exposure="my t").fit(lam=1e-3)
    b = bstats.glm("y ~ bin(x, 10) + offset(log(`my t`))", d, family="poisson").fit(lam=1e-3)
    _same(a, b)
    new = d.head(20).assign(**{"my t": 2.0})
    np.testing.assert_array_equal(a.predict(new), b.predict(new))
    arr = bstats.glm("y ~ bin(x, 10)", d, family="poisson", exposure=d.t.to_numpy()).fit(lam=1e-3)
    off = bstats.glm("y ~ bin(x, 10)", d, family="poisson", offset=np.log(d.t)).fit(lam=1e-3)
    np.testing.assert_array_equal(arr.params.to_numpy(), off.params.to_numpy())
    # with an offset array, the two add up
    both = bstats.glm("y ~ bin(x, 10)", d, family="poisson", exposure=d.t.to_numpy(),
                      offset=np.full(len(d), 0.5)).fit(lam=1e-3)  # fmt: skip
    ref = bstats.glm("y ~ bin(x, 10)", d, family="poisson",
                     offset=np.log(d.t) + 0.5).fit(lam=1e-3)  # fmt: skip
    np.testing.assert_array_equal(both.params.to_numpy(), ref.params.to_numpy())


def test_subset_is_the_data_cut_with_every_per_row_argument(d):
    keep = (d.x > 0.2).to_numpy()
    w = d.w.to_numpy()
    a = bstats.glm("y ~ bin(x, 10)", d, family="poisson", subset=keep, sample_weight=w,
                   exposure=d.t.to_numpy()).fit(lam=1e-3)  # fmt: skip
    cut = d[keep]
    b = bstats.glm("y ~ bin(x, 10)", cut, family="poisson", sample_weight=w[keep],
                   offset=np.log(cut.t.to_numpy())).fit(lam=1e-3)  # fmt: skip
    _same(a, b)
    positions = np.flatnonzero(keep)
    _same(bstats.glm("y ~ bin(x, 10)", d, family="poisson", subset=positions).fit(lam=1e-3),
          bstats.glm("y ~ bin(x, 10)", cut, family="poisson").fit(lam=1e-3))
    # a Series mask is read by position, whatever its index
    shuffled = pd.Series(keep, index=np.arange(len(d))[::-1])
    _same(bstats.glm("y ~ bin(x, 10)", d, family="poisson", subset=shuffled).fit(lam=1e-3),
          bstats.glm("y ~ bin(x, 10)", cut, family="poisson").fit(lam=1e-3))


def test_bad_r_arguments_are_named(d):
    with pytest.raises(TypeError, match="not evaluated"):
        bstats.glm("y ~ bin(x)", d, subset="x > 0.2")
    with pytest.raises(ValueError, match="subset has 3 values for 800 rows"):
        bstats.glm("y ~ bin(x)", d, subset=[True, False, True])
    with pytest.raises(ValueError, match="keeps no row"):
        bstats.glm("y ~ bin(x)", d, subset=np.zeros(len(d), dtype=bool))
    with pytest.raises(ValueError, match="needs a log link.*identity"):
        bstats.glm("y ~ bin(x)", d, exposure="t")
    with pytest.raises(ValueError, match="exposure='nope' is not a column"):
        bstats.glm("y ~ bin(x)", d, family="poisson", exposure="nope")
    with pytest.raises(ValueError, match=r"exposure column 't' must be positive.*\[0.0\]"):
        bstats.glm("y ~ bin(x)", d.assign(t=0.0), family="poisson", exposure="t")
