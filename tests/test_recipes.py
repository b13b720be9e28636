"""The recipes of docs/architecture.md ("Where to add"), each done as a toy.

Every toy is added the way the recipe says, by changing only the registration point the
recipe names (monkeypatched here, so nothing leaks into other tests), and is then used
through the public door a user would take: ``glm(..., family="toy")``, a registered
block kind in a fit, an exporter that reads only ``to_spec()``, a ``SolverData``
backend chosen by ``make_problem``, a statistic in ``SUMMARY_STATISTICS`` shown by
``glance()`` and ``summary()``. The first test checks that the counts of files the
documentation states are the ones these toys demonstrate.
"""

from __future__ import annotations

import dataclasses
import math
import re
import sys
import types
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _protocol_only import ProtocolOnly

import binarsity_stats as bs
from binarsity_stats.engine import _solvers
from binarsity_stats.families import _builtin
from binarsity_stats.families._builtin import Gaussian
from binarsity_stats.penalty import _blocks

DOCS = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"


def _frame(n: int = 2_000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "age": rng.uniform(20, 70, n),
        "income": rng.lognormal(3.0, 0.5, n),
        "region": rng.choice(["north", "south", "east"], n),
    })  # fmt: skip
    df["y"] = (np.sin(df["age"] / 10) + 0.5 * (df["region"] == "south")
               + 0.3 * np.log(df["income"]) + rng.normal(size=n))  # fmt: skip
    return df


def _recipe_counts() -> dict[str, str]:
    """The "Package files touched" column of the recipes' table, by what is added."""
    text = DOCS.read_text(encoding="utf-8")
    section = text[text.index("## Where to add") :]
    rows = re.findall(r"^\| (an? [^|]+?) \| (\d+)", section, flags=re.M)
    return {what: count for what, count in rows}


def test_the_documented_counts_are_the_ones_the_toys_show():
    counts = _recipe_counts()
    assert counts == {
        "a family (distribution/link)": "1",
        "a block kind": "6",
        "a solver backend": "2",
        "an exporter": "2",
        "a summary statistic": "1",
    }


# --------------------------------------------------------------------------- a family


class ToyGaussian(Gaussian):
    """The normal distribution again, but on the generic NumPy path (no Cython kernel)."""

    name = "toy"
    _loss_kernel = None
    _grad_hess_kernel = None

    def loss_sum(self, eta, y, sample_weight):
        return float(np.sum(sample_weight * 0.5 * (eta - y) ** 2))

    def grad_hess(self, eta, y, sample_weight, scale, grad_out, hess_out):
        grad_out[:] = scale * sample_weight * (eta - y)
        hess_out[:] = scale * sample_weight
        return self.loss_sum(eta, y, sample_weight)

    def grad_hess_only(self, eta, y, sample_weight, scale, grad_out, hess_out):
        self.grad_hess(eta, y, sample_weight, scale, grad_out, hess_out)


def test_a_family_is_one_class_registered_in_FAMILIES(monkeypatch):
    # the one registration point the recipe names: families/_builtin.FAMILIES
    monkeypatch.setitem(_builtin.FAMILIES, "toy", ToyGaussian)
    df = _frame()
    formula = "y ~ bin(age, 8) + C(region) + bin(income, 6)"
    toy = bs.glm(formula, df, family="toy").fit(lam=0.01)
    ref = bs.glm(formula, df, family="gaussian").fit(lam=0.01)
    assert type(toy.model.family) is ToyGaussian
    assert toy.converged
    # the same fit on another code path (its loss is ½(η − y)², the built-in's η²/2 − yη:
    # they differ by a function of y only); to the solver's tolerance (tol=1e-7 on the
    # KKT violation), far inside 1e-6 relative
    assert math.isclose(toy.deviance, ref.deviance, rel_tol=1e-6)
    shift = float(np.mean(df["y"] ** 2)) / 2
    assert math.isclose(toy.objective - shift, ref.objective, rel_tol=1e-6, abs_tol=1e-9)
    np.testing.assert_allclose(toy.predict(df), ref.predict(df), rtol=0, atol=1e-4)
    # without the registration the name is unknown: FAMILIES is the one place
    monkeypatch.delitem(_builtin.FAMILIES, "toy")
    with pytest.raises(ValueError, match="toy"):
        bs.glm(formula, df, family="toy")


# --------------------------------------------------------------------------- a block kind


def test_a_block_kind_is_registered_in_one_table_and_used_by_a_fit(monkeypatch):
    """The kind's rules come from ``penalty/_blocks.KINDS`` alone: a toy kind (the TV
    chain's rules, counted) registered there is used by the KKT checks and FISTA's metric
    prox of fits on a binned design, which equal the TV chain's to the solvers' tolerance."""
    from binarsity_stats.design._design import BinnedDesign
    from binarsity_stats.engine._solvers import Prepared

    calls = {"kkt": 0, "prox": 0, "metric_prox": 0}
    tv = _blocks.get_kind("tv")

    def counted(name):
        def rule(*args, **kwargs):
            calls[name] += 1
            return getattr(tv, name)(*args, **kwargs)

        return rule

    monkeypatch.setattr(_blocks, "KINDS", dict(_blocks.KINDS))
    _blocks.register_kind(dataclasses.replace(
        tv, name="toy", kkt=counted("kkt"), prox=counted("prox"),
        metric_prox=counted("metric_prox"), description="a toy chain",
    ))  # fmt: skip
    rng = np.random.default_rng(1)
    n = 3_000
    codes = rng.integers(0, 6, size=(3, n)).astype(np.uint8)
    y = (np.sin(codes[0]) + 0.4 * (codes[2] > 2) + rng.normal(size=n) > 0.5).astype(float)
    bp = np.array([0, 6, 12, 18], dtype=np.intp)
    omega = np.ones(18)
    for solver in ("cd", "fista"):
        fits = {}
        for name in ("tv", "toy"):
            design = BinnedDesign(codes, bp, kinds=[name, "free", name])
            prep = Prepared.from_design(design, y, family="binomial", penalty_weights=omega)
            fits[name] = prep.solve(0.005, solver=solver, tol=1e-9)
        np.testing.assert_allclose(fits["toy"].coef, fits["tv"].coef, rtol=0, atol=1e-6)
    assert calls["kkt"] > 0 and calls["metric_prox"] > 0
    # an unregistered kind is refused by name
    monkeypatch.setattr(_blocks, "KINDS", {k: v for k, v in _blocks.KINDS.items() if k != "toy"})
    with pytest.raises(ValueError, match="unknown block kind 'toy'"):
        BinnedDesign(codes, bp, kinds=["toy", "free", "toy"])


def test_a_signed_block_kind_reaches_a_fit_through_the_formula_door(monkeypatch):
    """End to end through a formula: a toy signed kind (the non-decreasing chain's rules
    and kernel step id, counted) is registered in the table of kinds (file 2 of the
    recipe) and named by the formula option that asks for it (file 3: the values
    ``bin(x, monotone=...)`` accepts); the assembler names the kind from the option
    (file 4, unchanged) and no other package file is touched. ``glm()``, its fit, the
    summary, the cut points, the refit's shape check and the model description then work
    as for the built-in kind, with the same numbers in the same run."""
    from binarsity_stats.core import _validation

    inc = _blocks.get_kind("increasing")
    calls = {"kkt": 0}

    def kkt(*args, **kwargs):
        calls["kkt"] += 1
        return inc.kkt(*args, **kwargs)

    monkeypatch.setattr(_blocks, "KINDS", dict(_blocks.KINDS))
    _blocks.register_kind(dataclasses.replace(inc, name="toy", kkt=kkt, description="a toy"))
    monkeypatch.setattr(_validation, "MONOTONE", (*_validation.MONOTONE, "toy"))
    rng = np.random.default_rng(3)
    n = 4_000
    df = pd.DataFrame({"x": rng.uniform(0, 10, n), "z": rng.normal(size=n)})
    df["y"] = (0.3 * np.floor(df["x"] / 3) + 0.5 * df["z"] + rng.normal(size=n) > 1).astype(float)
    fits = {}
    for shape in ("increasing", "toy"):
        model = bs.glm(f"y ~ bin(x, 12, monotone={shape!r}) + bin(z, 8)", df, family="binomial")
        fits[shape] = model.fit(lam=0.002, tol=1e-10)
    toy, ref = fits["toy"], fits["increasing"]
    assert tuple(toy.model.binned.kinds[:2]) == ("toy", "tv") and calls["kkt"] > 0
    # the same rules and step in the same run: the same fit to rounding
    np.testing.assert_allclose(toy.coef, ref.coef, rtol=0, atol=1e-12)
    assert np.all(np.diff(toy.coef[:12]) >= -1e-12)  # non-decreasing, the kind's sign
    assert "bin, toy" in str(toy.summary())
    pd.testing.assert_frame_equal(
        toy.cut_points().drop(columns=["term", "shape"]), ref.cut_points().drop(columns=["term", "shape"])
    )
    assert set(toy.cut_points()["shape"]) <= {"toy", "free"}
    # the refit's shape check reads the kind's sign from the table: no violation invented
    refit_toy, refit_ref = toy.refit(), ref.refit()
    assert len(refit_toy.shape_violations) == len(refit_ref.shape_violations)
    np.testing.assert_allclose(toy.predict(df), ref.predict(df), rtol=1e-12, atol=0)
    spec = toy.to_spec()
    np.testing.assert_allclose(bs.from_spec(spec).predict(df), ref.predict(df), rtol=1e-12)
    # without the registration the option is refused by name
    monkeypatch.setattr(_validation, "MONOTONE", ("increasing", "decreasing"))
    with pytest.raises(ValueError, match="toy"):
        bs.glm("y ~ bin(x, 12, monotone='toy')", df, family="binomial")


# --------------------------------------------------------------------------- an exporter


def _toy_predict(spec: dict, frame: pd.DataFrame) -> np.ndarray:
    """A toy exporter: the mean from a model description only (plain Python and NumPy)."""
    eta = np.full(len(frame), float(spec["intercept"]))
    for term in spec["terms"]:
        x = frame[term["input"]["column"]] if "input" in term else frame[term["column"]]
        theta = np.asarray(term["theta"], dtype=float)
        if term["kind"] == "bin":
            assert term["intervals"] == "right-closed"
            level = np.searchsorted(np.asarray(term["edges"]), x.to_numpy(float), side="left")
        elif term["kind"] == "categorical":
            index = {v: k for k, v in enumerate(term["levels"])}
            level = np.array([index[v] for v in x])
        else:
            raise ValueError(f"the toy exporter has no rule for a {term['kind']!r} term")
        eta += theta[level]
    link = spec["family"]["link"]
    if link == "identity":
        return eta
    if link == "logit":
        return 1.0 / (1.0 + np.exp(-eta))
    if link == "log":
        return np.exp(eta)
    raise ValueError(f"the toy exporter has no rule for the {link!r} link")


@pytest.mark.parametrize("family", ["gaussian", "binomial"])
def test_an_exporter_is_a_module_reading_to_spec_and_one_lazy_name(monkeypatch, family):
    df = _frame()
    if family == "binomial":
        df["y"] = (df["y"] > df["y"].median()).astype(float)
    res = bs.glm("y ~ bin(age, 8) + C(region) + bin(income, 6)", df, family=family).fit(lam=0.01)
    # the new module (here a module object) and its one public name in __init__._LAZY
    module = types.ModuleType("binarsity_stats.export._toy")
    module.to_toy = lambda spec: (lambda frame: _toy_predict(spec, frame))
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setitem(bs._LAZY, "to_toy", ".export._toy")
    monkeypatch.delitem(vars(bs), "to_toy", raising=False)
    scorer = bs.to_toy(res.to_spec())
    new = _frame(n=1_000, seed=7)
    # the description's θ are the fit's: the same sums, up to the order of additions
    np.testing.assert_allclose(scorer(new), res.predict(new), rtol=1e-12, atol=1e-12)
    monkeypatch.delitem(vars(bs), "to_toy", raising=False)


# --------------------------------------------------------------------------- a backend


def test_a_solver_backend_is_a_SolverData_chosen_by_make_problem(monkeypatch):
    df = _frame()
    df["y"] = (df["y"] > df["y"].median()).astype(float)
    formula = "y ~ bin(age, 8) + C(region) + bin(income, 6)"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = bs.glm(formula, df, family="binomial").fit(lam=0.005)
    made = []
    build = _solvers.make_problem

    def make_problem(*args, **kwargs):  # the one place a backend is chosen
        made.append(ProtocolOnly(build(*args, **kwargs)))
        return made[-1]

    monkeypatch.setattr(_solvers, "make_problem", make_problem)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        toy = bs.glm(formula, df, family="binomial").fit(lam=0.005)
    assert made and all(isinstance(p, ProtocolOnly) for p in made)
    assert {"loss", "kkt"} <= set().union(*(p.used for p in made))
    # the same operations through the protocol: the same fit, bit for bit
    np.testing.assert_array_equal(toy.params, ref.params)
    assert toy.objective == ref.objective


# --------------------------------------------------------------------------- a statistic


def test_a_summary_statistic_is_one_entry_of_SUMMARY_STATISTICS(monkeypatch):
    from binarsity_stats.core import _statistics

    def deviance_explained(res) -> float:
        return 1.0 - res.deviance / res.null_deviance

    # the one registration point: core/_statistics.SUMMARY_STATISTICS
    monkeypatch.setitem(_statistics.SUMMARY_STATISTICS, "Deviance explained", deviance_explained)
    df = _frame(n=100_000)
    res = bs.glm("y ~ bin(age, 20) + C(region) + bin(income, 10)", df).fit(lam=0.001)
    expected = 1.0 - res.deviance / res.null_deviance
    assert 0.0 < expected < 1.0
    glance = res.glance()
    assert glance["Deviance explained"].iloc[0] == expected
    text = str(res.summary())
    row = next(line for line in text.splitlines() if "Deviance explained" in line)
    assert row.split("Deviance explained:")[1].split()[0] == f"{expected:.4g}"  # 0 < x < 1
    # and without the entry neither report shows it
    monkeypatch.delitem(_statistics.SUMMARY_STATISTICS, "Deviance explained")
    assert "Deviance explained" not in res.glance().columns
    assert "Deviance explained" not in str(res.summary())
