"""The shared statistics (``binarsity_stats.core._statistics``): dispersion and df.

What is proved here:

* a Bernoulli response (0/1, one trial per row — numeric, boolean or a two-level
  factor, also through the estimators' results) gets no Pearson dispersion line and no
  over-dispersion note in the summary: for 0/1 data χ²/df depends on the fitted
  probabilities only. A grouped binomial response (``cbind``, proportions with trials)
  and the other families keep the line;
* ``degrees_of_freedom`` counts jumps, populated missing levels, free levels and the
  unpenalised parameters as design.md §2 says, on hand-built blocks.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import binarsity_stats as bs
from binarsity_stats.core._statistics import (
    chain_edges,
    degrees_of_freedom,
    dispersion_informative,
    kept_cuts,
    pearson_dispersion,
)

DISPERSION_ROW = "Dispersion (phi, chi2/df)"


def _data(n: int = 800, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.normal(size=n)})
    p = 1.0 / (1.0 + np.exp(-np.where(df["a"] > 0, 0.7, -0.4)))
    df["y"] = rng.binomial(1, p)
    df["yes"] = df["y"].astype(bool)
    df["label"] = np.where(df["y"] == 1, "event", "none")
    df["s"] = rng.binomial(6, p)
    df["f"] = 6 - df["s"]
    df["c"] = rng.poisson(np.exp(0.3 * (df["a"] > 0)))
    return df


@pytest.mark.parametrize("formula", ["y ~ bin(a, 6)", "yes ~ bin(a, 6)", "label ~ bin(a, 6)"])
def test_a_bernoulli_response_has_no_dispersion_line(formula):
    res = bs.glm(formula, _data(), family="binomial").fit(lam=0.005)
    text = str(res.summary())
    assert DISPERSION_ROW not in text
    assert "over-dispersion" not in text
    assert "No dispersion is shown: for a 0/1 response" in text


def test_the_classifier_results_have_no_dispersion_line():
    df = _data()
    est = bs.BinarsityClassifier(n_bins=6, lam=0.005).fit(df[["a"]], df["y"])
    text = str(est.results(df[["a"]], df["y"]).summary())
    assert DISPERSION_ROW not in text
    assert "over-dispersion" not in text


def test_a_grouped_binomial_response_keeps_its_dispersion_line():
    df = _data()
    res = bs.glm("cbind(s, f) ~ bin(a, 6)", df, family="binomial").fit(lam=0.005)
    text = str(res.summary())
    assert DISPERSION_ROW in text
    assert "over-dispersion" in text
    assert np.isfinite(res.dispersion)


@pytest.mark.parametrize(("formula", "family"), [("c ~ bin(a, 6)", "poisson"),
                                                 ("a ~ bin(c, 3)", "gaussian")])  # fmt: skip
def test_other_families_keep_their_dispersion_line(formula, family):
    res = bs.glm(formula, _data(), family=family).fit(lam=0.005)
    assert "Dispersion (" in str(res.summary())


def test_dispersion_informative_rule():
    binom = bs.glm("y ~ bin(a, 6)", _data(), family="binomial").family
    y01 = np.array([0.0, 1.0, 1.0, 0.0])
    assert not dispersion_informative(binom, y01)
    assert not dispersion_informative(binom, y01, trials=np.ones(4))
    assert dispersion_informative(binom, y01, trials=np.array([1.0, 3.0, 1.0, 1.0]))
    assert dispersion_informative(binom, np.array([0.0, 0.5, 1.0, 0.25]))
    assert pearson_dispersion(10.0, 4.0) == 2.5
    assert np.isnan(pearson_dispersion(10.0, 0.0))


def test_degrees_of_freedom_on_hand_built_blocks():
    # block 0: a chain of 4 levels + a missing level; block 1: a C() term of 3 levels;
    # block 2: a by-group term, two chains of 3 levels (free level means)
    block_ptr = np.array([0, 5, 8, 14])
    chains = [[(0, 4)], [], [(0, 3), (3, 3)]]
    theta = np.array([0.0, 0.0, 1.0, 1.0, 2.0,  # one jump (level 2), missing level set
                      0.1, -0.2, 0.1,  # free levels
                      0.0, 0.0, 0.5, 1.0, 1.0, 1.0])  # one jump in chain 1, breaks free
    counts = np.ones(14)
    edges = chain_edges(block_ptr, chains)
    # no edge at a block start, at a chain start or into the missing level
    assert not edges[[0, 4, 5, 6, 7, 8, 11]].any()
    jumps = kept_cuts(theta, block_ptr, edges)
    assert np.flatnonzero(jumps).tolist() == [2, 10]
    dof = degrees_of_freedom(jumps, counts, block_ptr, chains, [True, False, False], 1)
    # intercept 1 + jumps 2 + missing level 1 + C() levels − 1 = 2 + level means − 1 = 1
    assert dof == 7
    # an empty missing level is no parameter; a donor block holds no level means
    counts[4] = 0.0
    assert degrees_of_freedom(jumps, counts, block_ptr, chains, [True, False, False], 1,
                              by_donors={2: 0}) == 5  # fmt: skip
