"""The solvers reach the data only through the ``SolverData`` protocol (issue 11 §3).

What is proved here:

* **bitwise equality** with the solvers as they were before they went through the
  protocol only (base commit 70b21b7): coef, dense coef, intercept and objective of CD
  and FISTA fits — gaussian, binomial, poisson; weights, offsets, dense columns, free
  (C()) blocks, no intercept, identical blocks (merged), a near-collinear case that the
  polish finishes — and λ_max, a warm-started path and a 3-fold CV. The fingerprints
  below were computed at the base commit (``python tests/test_protocol.py`` prints them).
  Floating-point results depend on libm and BLAS: regenerate them only for a change
  that means to alter the arithmetic, and say so in its commit message;
* CD, FISTA, λ_max, a path and a CV run through a wrapper that exposes **only** the
  members of ``SolverData`` listed in ``_problem.SOLVER_DATA_MEMBERS`` (anything else
  raises) and give the same solutions bit for bit: a distributed backend that implements
  those members runs every solver unchanged;
* every member of the protocol is documented.
"""

from __future__ import annotations

import hashlib
import sys

import numpy as np
import pytest

from binarsity_stats.engine import _polish, _solvers
from binarsity_stats.engine._cv import cross_validate
from binarsity_stats.engine._folds import fold_ids
from binarsity_stats.engine._path import PathData, lambda_grid, solve_path
from binarsity_stats.engine._problem import SOLVER_DATA_MEMBERS, InMemoryProblem, SolverData
from binarsity_stats.engine._solvers import Prepared
from binarsity_stats.families._families import get_family


def _blocks(rng, n, sizes):
    codes = np.empty((len(sizes), n), dtype=np.uint8)
    for j, K in enumerate(sizes):
        codes[j] = rng.randint(0, K, size=n)
    block_ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
    return codes, block_ptr


def _case(name):
    """(codes, block_ptr, y, family, kw for Prepared, solver, λ as a fraction of λ_max)."""
    rng = np.random.RandomState(sum(map(ord, name)))
    n = 240
    sizes = [6, 8, 5, 7]
    codes, bp = _blocks(rng, n, sizes)
    family, solver, frac = name.split("-")[:3]
    opts = set(name.split("-")[3:])
    kw = {}
    kinds = ["tv"] * len(sizes)
    if "free" in opts:
        kinds[2] = "free"
    if "dup" in opts:
        codes = np.vstack([codes, codes[1:2]])  # block 4 repeats block 1
        bp = np.concatenate([bp, [bp[-1] + sizes[1]]]).astype(np.intp)
        kinds.append("tv")
    if "collinear" in opts:
        # block 1 is block 0 shifted by one level at random rows: near-duplicates
        c1 = codes[0].astype(np.int64) + (rng.rand(n) < 0.1)
        codes[1] = np.minimum(c1, sizes[1] - 1).astype(np.uint8)
    d = int(bp[-1])
    w = np.ones(d)
    w[bp[:-1]] = 0.0
    for j, kind in enumerate(kinds):
        if kind == "free":
            w[bp[j] : bp[j + 1]] = 0.0
    kw["block_kinds"] = kinds
    eta = 0.6 * (codes[0] > 2) - 0.4 * (codes[1] > 4) + 0.3 * np.sin(codes[3])
    if "dense" in opts:
        Z = np.column_stack([rng.standard_normal(n) * 3 + 5, rng.exponential(2.0, n)])
        kw["dense"] = Z
        eta = eta + 0.2 * Z[:, 0] - 0.3 * Z[:, 1]
    if "weights" in opts:
        kw["sample_weight"] = rng.exponential(1.0, n) * 1e3
    if "offset" in opts:
        off = rng.uniform(-0.5, 0.5, n)
        kw["offset"] = off
        eta = eta + off
    if "noint" in opts:
        kw["fit_intercept"] = False
    if family == "gaussian":
        y = 2.0 + eta + rng.standard_normal(n)
    elif family == "binomial":
        y = (rng.rand(n) < 1 / (1 + np.exp(-eta))).astype(float)
    else:
        y = rng.poisson(np.exp(0.3 + eta)).astype(float)
    return codes, bp, y, get_family(family), w, kw, solver, float(frac)


CASES = (
    "gaussian-cd-0.05",
    "gaussian-fista-0.05-weights-offset-dense",
    "gaussian-cd-0.02-dense-noint-free",
    "gaussian-cd-0.001-collinear-dense",
    "binomial-cd-0.05-weights-dense-free",
    "binomial-fista-0.1-offset",
    "binomial-cd-0.05-dup-weights",
    "poisson-cd-0.03-offset-weights-dense",
    "poisson-fista-0.03-weights-dense-free",
    "poisson-cd-0.01-collinear-offset-noint",
    # without the polish: CD's sweeps, joint free-column steps, Anderson steps and line
    # search run to the end
    "gaussian-cd-0.002-collinear-dense-weights-nopolish",
    "binomial-cd-0.02-weights-dense-offset-nopolish",
    "poisson-cd-0.02-dense-noint-free-nopolish",
)


def _prepared(codes, bp, y, family, w, kw):
    return Prepared(codes, bp, y, family=family, penalty_weights=w, **kw)


def _digest(*arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(np.asarray(a, dtype=np.float64)).tobytes())
    return h.hexdigest()[:16]


def _fit_digest(name) -> str:
    codes, bp, y, family, w, kw, solver, frac = _case(name)
    limit = _polish.MAX_BIN_GRAM
    if name.endswith("nopolish"):
        _polish.MAX_BIN_GRAM = 0  # the Polisher reads it when a solve starts
    try:
        prep = _prepared(codes, bp, y, family, w, kw)
        lmax = prep.lambda_max()
        sol = prep.solve(frac * lmax, solver=solver, tol=1e-8, max_iter=5000)
    finally:
        _polish.MAX_BIN_GRAM = limit
    assert sol.converged
    return _digest(
        [lmax], sol.coef, sol.dense_coef, [sol.intercept, sol.objective, sol.n_iter, sol.n_sweeps]
    )


def _path_cv_digest() -> str:
    codes, bp, y, family, w, kw, _, _ = _case("poisson-cd-0-offset-weights-dense")
    kw.pop("block_kinds")
    data = PathData(codes, bp, y, family, w, **kw)
    grid = lambda_grid(data.lambda_max(), 6, 1e-2)
    opts = {"solver": "cd", "tol": 1e-8, "max_iter": 2000}
    path = solve_path(data.prepare(), grid, opts)
    fista = solve_path(data.prepare(), grid[:3], dict(opts, solver="fista"))
    ids = fold_ids(y, 3, random_state=0)
    cv = cross_validate(data, grid, ids, opts=opts, early_stopping=False, refit_path=False)
    arrays = [grid, cv.fold_scores.ravel()]
    for s in path + fista:
        arrays += [s.coef, s.dense_coef, [s.intercept]]
    return _digest(*arrays)


# computed at the base commit 70b21b7 (before the solvers went through the protocol only)
STORED = {
    "gaussian-cd-0.05": "505dedd35b5830a4",
    "gaussian-fista-0.05-weights-offset-dense": "7dcb8fc9a063ae5f",
    "gaussian-cd-0.02-dense-noint-free": "96381b3778fa67c5",
    "gaussian-cd-0.001-collinear-dense": "542da9f6fd63ad69",
    "binomial-cd-0.05-weights-dense-free": "e1b0fdbcf312f936",
    "binomial-fista-0.1-offset": "baf43c522f93e2d7",
    "binomial-cd-0.05-dup-weights": "d5c491d45e49534c",
    "poisson-cd-0.03-offset-weights-dense": "8e13db786d2e4d27",
    "poisson-fista-0.03-weights-dense-free": "ad212880e1b26e81",
    "poisson-cd-0.01-collinear-offset-noint": "b283ecccf8017eab",
    "gaussian-cd-0.002-collinear-dense-weights-nopolish": "2269ba0dd40d753a",
    "binomial-cd-0.02-weights-dense-offset-nopolish": "7793972bcb792c0b",
    "poisson-cd-0.02-dense-noint-free-nopolish": "c50662d87efb9e55",
    # path-cv re-pinned (coxcv14, issue 14): the Poisson fold scores are now the deviance
    # in closed form of η (Family.deviance_eta); they moved by at most 4.4e-16 (≤ 1 ulp)
    "path-cv": "b1fcfcec4ce46221",
}


def _all_digests() -> dict:
    out = {name: _fit_digest(name) for name in CASES}
    out["path-cv"] = _path_cv_digest()
    return out


@pytest.mark.parametrize("name", CASES)
def test_fits_are_bitwise_those_of_the_base_commit(name):
    assert _fit_digest(name) == STORED[name]


def test_lambda_max_path_and_cv_are_bitwise_those_of_the_base_commit():
    assert _path_cv_digest() == STORED["path-cv"]


class ProtocolOnly:
    """A problem that exposes only the members of ``SolverData`` (anything else raises).

    Derived problems (``segment_problem``, ``select_blocks``) come wrapped too, so the
    null fit of λ_max and the merged problem of identical blocks are held to it as well.
    """

    _DERIVED = ("segment_problem", "select_blocks")

    def __init__(self, inner) -> None:
        object.__setattr__(self, "_inner", inner)
        object.__setattr__(self, "used", set())

    def __getattr__(self, name):
        if name not in SOLVER_DATA_MEMBERS:
            raise AttributeError(f"{name!r} is not a member of the SolverData protocol")
        self.used.add(name)
        value = getattr(self._inner, name)
        if name in self._DERIVED:
            return lambda *a, **k: ProtocolOnly(value(*a, **k))
        return value

    def __setattr__(self, name, value):
        raise AttributeError(f"a solver set {name!r} on the problem")


@pytest.fixture
def protocol_only(monkeypatch):
    """Every problem the engine builds is wrapped; returns the list of wrappers."""
    made = []
    build = _solvers.make_problem

    def wrapped(*args, **kwargs):
        made.append(ProtocolOnly(build(*args, **kwargs)))
        return made[-1]

    monkeypatch.setattr(_solvers, "make_problem", wrapped)
    return made


@pytest.mark.parametrize("name", CASES)
def test_solvers_run_through_the_protocol_members_only(name, protocol_only):
    assert _fit_digest(name) == STORED[name]
    assert protocol_only and all(isinstance(p, ProtocolOnly) for p in protocol_only)


def test_path_and_cv_run_through_the_protocol_members_only(protocol_only):
    assert _path_cv_digest() == STORED["path-cv"]
    # the folds' problems, the path's and λ_max's
    assert len(protocol_only) >= 5


def test_the_wrapper_refuses_what_the_protocol_does_not_offer(protocol_only):
    codes, bp, y, family, w, kw, _, _ = _case("gaussian-cd-0.05-dense")
    prob = _prepared(codes, bp, y, family, w, kw).prob
    assert isinstance(prob, ProtocolOnly)
    for name in ("y", "sw", "offset", "dense", "design", "codes", "n", "p", "d", "q", "W"):
        with pytest.raises(AttributeError, match="not a member"):
            getattr(prob, name)


def test_every_protocol_member_is_documented():
    doc = SolverData.__doc__
    for name in SOLVER_DATA_MEMBERS:
        member = getattr(SolverData, name, None)
        if callable(member) or isinstance(member, property):
            assert (member.__doc__ or "").strip(), f"SolverData.{name} has no docstring"
        else:
            assert name in doc, f"SolverData.{name} is not in the Attributes section"
    # the in-memory implementation has every member
    missing = [m for m in SOLVER_DATA_MEMBERS if not hasattr(InMemoryProblem, m)]
    codes, bp, y, family, w, kw, _, _ = _case("gaussian-cd-0.05")
    prob = _prepared(codes, bp, y, family, w, kw).prob
    assert [m for m in missing if not hasattr(prob, m)] == []


if __name__ == "__main__":
    for key, value in _all_digests().items():
        print(f'    "{key}": "{value}",')
    sys.exit(0)
