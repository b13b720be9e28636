"""model/_refit: what every refit returns, whatever its family."""

from __future__ import annotations

import numpy as np
import pandas as pd

import binarsity_stats as bs


def test_conf_int_of_a_cox_refit_is_a_frame_named_by_parameter():
    # statsmodels' PHReg gives a bare array; the refit names its rows as GLM's frame does
    rng = np.random.default_rng(0)
    n = 400
    d = pd.DataFrame({"x": rng.uniform(size=n), "z": rng.normal(size=n)})
    t = rng.exponential(np.exp(-(0.8 * (d.x > 0.5) + 0.3 * d.z)))
    c = rng.exponential(2.0, n)
    d["time"], d["event"] = np.minimum(t, c), (t <= c).astype(int)
    refit = bs.glm("Surv(time, event) ~ bin(x, 8) + z", d, family="cox").fit(lam=0.01).refit()
    ci = refit.conf_int()
    assert isinstance(ci, pd.DataFrame)
    assert list(ci.index) == list(refit.params.index)
    np.testing.assert_array_equal(ci.to_numpy(), refit.sm_results.conf_int())
    assert np.all(ci[0] < refit.params) and np.all(refit.params < ci[1])
