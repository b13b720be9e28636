"""Pickles name the module of every class they hold; those names outlive a module split.

Issue 23 split ``formula/_formula.py`` (and others) into modules by job: a class such as
``DesignSpec`` now lives in ``formula/_recipe.py``. A pickle written before the split
names ``binarsity_stats.formula._formula.DesignSpec``; one written by v0.1.0 names
``binarsity_stats._formula.DesignSpec`` (resolved by ``_moved``). What is proved here:

* every fitted object below, written with its classes at their paths *before* the split
  (and at the flat v0.1.0 paths), loads and predicts exactly what the original predicts;
* the objects really hold those classes (the check is not vacuous), and the pickles
  really name the old paths (read back from the pickle's own opcodes).

The pickles are written by a pickler that names each moved class by its old module
(protocol 2, a ``GLOBAL`` opcode): the bytes a pre-split version wrote for it.
"""

from __future__ import annotations

import io
import pickle
import pickletools
import types
from typing import Any

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_array_equal

import binarsity_stats as bs

#: The classes that pickles of fitted objects hold, by the module that defined them
#: before issue 23's split (466bca2).
PRE_SPLIT: dict[str, tuple[str, ...]] = {
    "binarsity_stats.formula._formula": (
        "AliasedFormula", "Block", "Design", "DesignSpec", "Response",
    ),
    # a statsmodels family pickles as ``_from_key(name, link, params)``
    "binarsity_stats.families._families": (
        "Gaussian", "Binomial", "Poisson", "CoxPH", "_from_key",
    ),
    # what fit_dask returns (dask fits through glm() hold an engine Solution)
    "binarsity_stats.distributed._dask_solve": ("DaskSolution",),
    # the model rebuilt from a description (from_spec)
    "binarsity_stats.design._spec": ("SpecModel",),
}  # fmt: skip

#: The same modules under their flat v0.1.0 names (``_moved.MOVED``).
FLAT = {
    "binarsity_stats.formula._formula": "binarsity_stats._formula",
    "binarsity_stats.families._families": "binarsity_stats._families",
    "binarsity_stats.distributed._dask_solve": "binarsity_stats._dask_solve",
    "binarsity_stats.design._spec": "binarsity_stats._spec",
}

#: Where the package defines those names today.
MODULES_NOW = (
    "binarsity_stats.formula._recipe",
    "binarsity_stats.formula._response",
    "binarsity_stats.formula._names",
    "binarsity_stats.families._builtin",
    "binarsity_stats.families._statsmodels",
    "binarsity_stats.distributed._dask_problem",
    "binarsity_stats.design._spec_model",
)


def _classes(old_module: str) -> dict[Any, tuple[str, str]]:
    """Each class (or function) of ``PRE_SPLIT[old_module]``, as the package defines it
    now → its old path."""
    import importlib

    out = {}
    for name in PRE_SPLIT[old_module]:
        cls = _current(name)
        out[cls] = (old_module, name)
    assert importlib.import_module(old_module)  # the old module itself still imports
    return out


#: Names made public since (the old private name stays where pickles look for it).
RENAMED = {"_from_key": "from_key"}


def _current(name: str) -> Any:
    """The class or function of that name where the package defines it today."""
    import importlib

    name = RENAMED.get(name, name)
    for module in MODULES_NOW:
        obj = getattr(importlib.import_module(module), name, None)
        if obj is not None and getattr(obj, "__module__", None) == module:
            return obj
    raise LookupError(name)


class _OldPathPickler(pickle._Pickler):
    """Names the given classes by their old module, as the layout before a split did."""

    # functions are dispatched to the base class's save_global directly: route them here
    dispatch = dict(pickle._Pickler.dispatch)
    dispatch[types.FunctionType] = lambda self, obj: self.save_global(obj)

    def __init__(self, file, old: dict[Any, tuple[str, str]]) -> None:
        super().__init__(file, protocol=2)
        self.old = old

    def save_global(self, obj, name=None):
        if obj in self.old:
            module, qualname = self.old[obj]
            self.write(pickle.GLOBAL + f"{module}\n{qualname}\n".encode())
            self.memoize(obj)
            return
        super().save_global(obj, name)


def _dump_at(obj, old: dict[Any, tuple[str, str]]) -> bytes:
    buf = io.BytesIO()
    _OldPathPickler(buf, old).dump(obj)
    return buf.getvalue()


def _named_paths(data: bytes) -> set[tuple[str, str]]:
    """The (module, name) pairs of the ``GLOBAL`` opcodes of a protocol-2 pickle."""
    out = set()
    for op, arg, _ in pickletools.genops(data):
        if op.name == "GLOBAL":
            module, _, name = arg.partition(" ")
            out.add((module, name))
    return out


def _frame(n: int = 300, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    g = rng.choice(["a", "b", "c"], size=n)
    t = rng.exponential(size=n) + 0.1
    return pd.DataFrame({
        "y": np.sin(2 * x) + 0.5 * (g == "b") + rng.normal(scale=0.5, size=n),
        "x": x, "g": g, "odd name": rng.normal(size=n), "t": t,
        "e": rng.integers(0, 2, size=n), "odd time": t,
    })  # fmt: skip


def _fitted():
    df = _frame()
    new = _frame(50, 1)
    dot = bs.glm("y ~ .", df[["y", "x", "g", "odd name"]], n_bins=8).fit(0.01)
    plain = bs.glm("y ~ bin(x, 8) + C(g) + `odd name`", df).fit(0.01)
    cox = bs.glm("Surv(t, e) ~ bin(x, 5) + C(g)", df, family="cox").fit(0.01)
    binomial = bs.glm("e ~ bin(x, 5) + C(g)", df, family="binomial").fit(0.01)
    poisson = bs.glm("e ~ bin(x, 5) + offset(np.log(t))", df, family="poisson").fit(0.01)
    gamma = bs.glm("t ~ bin(x, 5) + C(g)", df, family="gamma").fit(0.01)  # statsmodels
    # an exposure column: the formula names 'odd time' by alias (an AliasedFormula)
    exposed = bs.glm("e ~ bin(x, 5)", df, family="poisson", exposure="odd time").fit(0.01)
    X = df[["x", "odd name"]]  # an estimator's results: built on its blocks, no formula
    est = bs.BinarsityGLM(n_bins=8, lam=0.01).fit(X, df["y"])
    fits = {"dot": dot, "plain": plain, "cox": cox, "binomial": binomial, "poisson": poisson,
            "gamma": gamma, "exposed": exposed,
            "estimator": est.results(X, df["y"])}  # fmt: skip
    return fits, new


def _old_paths(old_module: str, layout: str) -> dict[Any, tuple[str, str]]:
    old = _classes(old_module)
    if layout == "v0.1.0":
        old = {cls: (FLAT[module], name) for cls, (module, name) in old.items()}
    return old


@pytest.mark.parametrize("layout", ["pre-split", "v0.1.0"])
@pytest.mark.parametrize(
    "old_module", ["binarsity_stats.formula._formula", "binarsity_stats.families._families"]
)
def test_pickles_naming_the_old_module_paths_load_and_predict(old_module, layout):
    fitted, new = _fitted()
    old = _old_paths(old_module, layout)
    data = _dump_at(fitted, old)
    named = _named_paths(data)
    held = {path for path in old.values() if path in named}
    # every class of the old module is in the fitted objects, named by its old path
    assert held == set(old.values())
    assert not {(cls.__module__, cls.__name__) for cls in old} & named
    loaded = pickle.loads(data)
    for key, res in fitted.items():
        again = loaded[key]
        assert type(again.model.spec) is type(res.model.spec)
        assert type(again.model.family) is type(res.model.family)
        assert_array_equal(again.predict(new), res.predict(new))
        assert_array_equal(again.params, res.params)
        assert str(again.summary()) == str(res.summary())


@pytest.mark.parametrize("layout", ["pre-split", "v0.1.0"])
def test_a_dask_solution_naming_the_old_module_path_loads(layout):
    dask = pytest.importorskip("dask")
    from binarsity_stats.distributed._dask_solve import fit_dask, partitions_from_arrays

    rng = np.random.default_rng(0)
    codes = rng.integers(0, 6, size=(2, 600)).astype(np.uint8)
    y = np.sin(codes[0]) + rng.normal(size=600)
    design = types.SimpleNamespace(
        block_ptr=np.arange(0, 13, 6), kinds=None, n_dense=0,
        partitions=partitions_from_arrays(codes, y, n_parts=3),
    )  # fmt: skip
    with dask.config.set(scheduler="sync"):
        sol = fit_dask(design, "gaussian", 0.01)
    old = _old_paths("binarsity_stats.distributed._dask_solve", layout)
    data = _dump_at(sol, old)
    assert set(old.values()) <= _named_paths(data)
    again = pickle.loads(data)
    assert type(again) is type(sol)
    assert_array_equal(again.coef, sol.coef)
    assert again.n_passes == sol.n_passes and again.intercept == sol.intercept


@pytest.mark.parametrize("layout", ["pre-split", "v0.1.0"])
def test_a_spec_model_naming_the_old_module_path_loads(layout):
    fitted, new = _fitted()
    model = bs.from_spec(fitted["plain"].to_spec())
    old = _old_paths("binarsity_stats.design._spec", layout)
    data = _dump_at(model, old)
    assert set(old.values()) <= _named_paths(data)
    again = pickle.loads(data)
    assert type(again) is type(model)
    assert_array_equal(again.predict(new), model.predict(new))
    assert_array_equal(again.predict(new), fitted["plain"].predict(new))


def test_results_and_their_bootstrap_pickle_by_the_modules_that_define_them():
    """``BinarsityResults`` and ``BootstrapResults`` get methods from base classes in other
    modules (by job) but are defined where pickles look for them; a pickle names no base."""
    df, new = _frame(), _frame(50, 1)
    res = bs.glm("y ~ bin(x, 8) + C(g) + `odd name`", df).fit(0.01)
    boot = res.bootstrap(20, random_state=0)
    relaxed = boot.shape_bands(method="relaxed")  # its refits are cached and pickled too
    data = pickle.dumps(res, protocol=2)
    named = _named_paths(data)
    assert ("binarsity_stats.model._results", "BinarsityResults") in named
    assert ("binarsity_stats.model._bootstrap", "BootstrapResults") in named
    assert not [m for m, _ in named if m.startswith(("binarsity_stats.model._results_",
                                                     "binarsity_stats.model._bootstrap_"))]  # fmt: skip
    again = pickle.loads(data)
    assert_array_equal(again.predict(new), res.predict(new))
    pd.testing.assert_frame_equal(again.cut_points(), res.cut_points())  # with frequencies
    assert again.to_spec() == res.to_spec()
    assert str(again.summary()) == str(res.summary())
    pd.testing.assert_frame_equal(again.bootstrap_.shape_bands(method="relaxed"), relaxed)
    pd.testing.assert_frame_equal(again.bootstrap_.predict(new), boot.predict(new))
