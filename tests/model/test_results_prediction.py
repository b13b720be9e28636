"""model/_results_prediction.py: prediction on new rows, Cox's baseline hazard,
survival and concordance.

Proved here: a prediction on new rows is the training recipe replayed (rows in another
order predict as on the training data; values beyond the training range fall in the end
bins; the mean is the inverse link of η); the offset is the column named at fit time or
the array given, and its absence is reported by name; ``missing="drop"`` models predict
NaN for incomplete rows; Breslow's H0, S(t | x) and Harrell's C equal loops written here
from their definitions.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from binarsity_stats.model._model import glm


def data(n: int = 300, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x": rng.normal(size=n), "g": rng.choice(list("abc"), n),
                       "z": rng.normal(size=n), "o": rng.uniform(-0.3, 0.3, n)})  # fmt: skip
    eta = (df.x > 0) - 0.5 + 0.3 * df.z + df.o
    df["y"] = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    return df


@pytest.fixture(scope="module")
def binomial():
    df = data()
    res = glm("y ~ bin(x, 6) + C(g) + z", df, family="binomial", offset="o").fit(lam=0.005)
    return df, res


def test_new_rows_replay_the_training_recipe(binomial):
    df, res = binomial
    train = res.predict(type="link")
    order = np.random.default_rng(1).permutation(len(df))
    np.testing.assert_allclose(res.predict(df.iloc[order], type="link"), train[order],
                               rtol=1e-14, atol=1e-14)  # fmt: skip
    mu = res.predict(df.iloc[order])
    np.testing.assert_allclose(mu, 1 / (1 + np.exp(-train[order])), rtol=1e-13)


def test_values_beyond_the_training_range_fall_in_the_end_bins(binomial):
    df, res = binomial
    new = pd.DataFrame({"x": [-1e6, 1e6], "g": ["a", "c"], "z": [0.0, 2.0], "o": [0.1, 0.0]})
    eta = res.predict(new, type="link")
    ptr = res.model.block_ptr
    coef = res.coef
    g_levels = res.model.spec.blocks[1].level_labels()
    ga, gc = ptr[1] + list(g_levels).index("a"), ptr[1] + list(g_levels).index("c")
    want = [res.intercept + coef[0] + coef[ga] + 0.1,
            res.intercept + coef[ptr[1] - 1] + coef[gc] + 2.0 * res.dense_coef[0]]  # fmt: skip
    np.testing.assert_allclose(eta, want, rtol=1e-13, atol=1e-13)


def test_the_offset_is_read_from_its_column_or_given(binomial):
    df, res = binomial
    new = df.head(5)
    base = res.predict(new.assign(o=0.0), type="link")
    np.testing.assert_allclose(res.predict(new, type="link"), base + new["o"].to_numpy(),
                               rtol=1e-13, atol=1e-14)  # fmt: skip
    np.testing.assert_allclose(res.predict(new.drop(columns="o"), type="link", offset=[1.0] * 5),
                               base + 1.0, rtol=1e-13)  # fmt: skip
    with pytest.raises(ValueError, match="column 'o' \\(the model's offset\\) is missing"):
        res.predict(new.drop(columns="o"))
    with pytest.raises(ValueError, match="offset is only used together with newdata"):
        res.predict(offset=np.zeros(len(df)))


def test_arguments_are_checked(binomial):
    df, res = binomial
    with pytest.raises(ValueError, match="type must be 'response' or 'link'; got 'risk'"):
        res.predict(df.head(3), type="risk")
    with pytest.raises(ValueError, match="times is only used with family='cox'"):
        res.predict(df.head(3), times=[1.0])
    with pytest.raises(ValueError, match="baseline_hazard\\(\\) needs family='cox'"):
        res.baseline_hazard()
    assert np.isnan(res.concordance)
    with pytest.raises(ValueError, match="'g'"):
        res.predict(df.head(3).assign(g="zz"))  # an unseen level, named by its column


def test_incomplete_rows_predict_nan_after_missing_drop():
    df = data()
    df.loc[[0, 5], "x"] = np.nan
    res = glm("y ~ bin(x, 6) + z", df, family="binomial", missing="drop").fit(lam=0.01)
    pred = res.predict(df.head(8))
    assert np.isnan(pred[[0, 5]]).all() and np.isfinite(np.delete(pred, [0, 5])).all()
    with pytest.raises(ValueError, match="'x'"):
        res.predict(df.head(8), missing="error")


@pytest.fixture(scope="module")
def cox():
    rng = np.random.default_rng(2)
    n = 120
    df = pd.DataFrame({"age": rng.uniform(20, 80, n), "z": rng.normal(size=n)})
    hazard = np.exp(0.8 * (df.age > 50) + 0.3 * df.z)
    t = rng.exponential(1 / hazard)
    c = rng.exponential(2.0, n)
    df["time"] = np.minimum(t, c)
    df["status"] = (t <= c).astype(int)
    return df, glm("Surv(time, status) ~ bin(age, 5) + z", df, family="cox").fit(lam=0.005)


def test_breslow_baseline_and_survival(cox):
    df, res = cox
    eta = res.predict(type="linear")
    time, status = df["time"].to_numpy(), df["status"].to_numpy()
    events = np.sort(time[status == 1])  # continuous times: no ties
    h0 = np.cumsum([1.0 / np.exp(eta[time >= s]).sum() for s in events])
    base = res.baseline_hazard()
    np.testing.assert_allclose(base["time"], events, rtol=0)
    np.testing.assert_allclose(base["cumhaz"], h0, rtol=1e-10)
    np.testing.assert_allclose(base["survival"], np.exp(-h0), rtol=1e-10)
    times = [0.0, events[3], events[3] + 1e-9, 100.0]
    surv = res.predict(df.head(4), type="survival", times=times)
    want_h = np.array([0.0, h0[3], h0[3], h0[-1]])
    np.testing.assert_allclose(surv, np.exp(-np.exp(eta[:4])[:, None] * want_h), rtol=1e-10)
    with pytest.raises(ValueError, match="times is required with type='survival'"):
        res.predict(df.head(4), type="survival")
    with pytest.raises(ValueError, match="times must be finite non-negative"):
        res.predict(df.head(4), type="survival", times=[-1.0])
    with pytest.raises(ValueError, match="type must be 'risk', 'linear' or 'survival'"):
        res.predict(df.head(4), type="mean")


def test_concordance_is_harrells_c(cox):
    df, res = cox
    eta = res.predict(type="linear")
    time, status = df["time"].to_numpy(), df["status"].to_numpy()
    num = den = 0.0
    for i in range(len(df)):
        if not status[i]:
            continue
        for j in range(len(df)):
            if time[j] > time[i]:  # j outlived i's event: a comparable pair
                den += 1
                num += 1.0 if eta[i] > eta[j] else 0.5 if eta[i] == eta[j] else 0.0
    assert res.concordance == pytest.approx(num / den, rel=1e-12)
