"""What a fit with a pair term ``bin(a):bin(b)`` gives downstream (issue 25).

summary() and term_table() list the pair with the fused regions of its surface and its
degrees of freedom count the surface's face (regions less the margins' constraints);
everything that reads a term as a chain and does not handle a grid yet refuses the pair
by name (relax, adaptive, plot_effects, the relaxed CV, ALO), and FISTA, the Gram
backend and the Dask solver refuse its kind through ``engine/_backend``.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

import binarsity_stats as bs

TERM = "bin(a, 4):bin(b, 4)"


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(0)
    n = 600
    df = pd.DataFrame({"a": rng.normal(size=n), "b": rng.uniform(size=n)})
    step = 1.5 * ((df.a > 0) & (df.b > 0.5))
    df["y"] = (rng.uniform(size=n) < 1 / (1 + np.exp(-(step - 0.5)))).astype(float)
    model = bs.glm(f"y ~ bin(a, 4) + bin(b, 4) + {TERM}", df, family="binomial")
    return df, model, model.fit(lam=0.004)


def test_summary_lists_the_pair_with_its_regions(fitted):
    df, model, res = fitted
    table = res.term_table()
    assert table.loc[TERM, "kind"] == "pair" and bool(table.loc[TERM, "selected"])
    regions = int(table.loc[TERM, "cuts_kept"])
    assert 2 <= regions <= model.binned.kinds[2].block.n_cells
    text = str(res.summary())
    assert TERM in text and f"{regions} regions" in text


def test_params_name_every_cell_of_the_pair(fitted):
    _, model, res = fitted
    grid = model.binned.kinds[2].block
    names = [k for k in res.params.index if k.startswith(TERM + "[")]
    assert len(names) == grid.n_cells + 1 and names[-1] == f"{TERM}[empty at training]"
    assert " x " in names[0]


def test_degrees_of_freedom_count_the_surface_face(fitted):
    from binarsity_stats.core._statistics import grid_dof

    df, model, res = fitted
    grid = model.binned.kinds[2].block
    s = int(model.block_ptr[2])
    cells = res.coef[s : s + grid.n_cells]
    counts = model.bin_counts[s : s + grid.n_cells]
    pair_dof = grid_dof(grid, cells, counts, 1e-7 * max(1.0, np.abs(cells).max()))
    mains = int(res.jumps[: int(model.block_ptr[2])].sum())
    assert pair_dof >= 1
    assert res.df == 1 + mains + pair_dof
    # a surface of one region (λ above the pair's λ_max) has no degree of freedom
    assert grid_dof(grid, np.zeros(grid.n_cells), counts, 0.0) == 0


@pytest.mark.parametrize(
    "call, what",
    [(lambda r: r.relax(), "relax()"),
     (lambda r: r.adaptive(), "adaptive()"),
     (lambda r: r.plot_effects(), "plot_effects()"),
     (lambda r: r.model.adaptive(r), "adaptive()"),
     (lambda r: r.model.fit_cv(folds=3, n_lambdas=4, relax=True), "fit_cv(relax=True)"),
     (lambda r: r.model.fit(lam="alo"), "fit(lam='alo')"),
     (lambda r: r.model.fit_path(lams=[0.01, 0.005]).alo(), "alo()")],
)  # fmt: skip
def test_what_cannot_handle_a_pair_refuses_it_by_name(fitted, call, what):
    _, _, res = fitted
    with pytest.raises(ValueError) as err:
        call(res)
    msg = str(err.value)
    assert msg.startswith(what) and repr(TERM) in msg


@pytest.mark.parametrize("kw, backend", [({"solver": "fista"}, "fista"), ({"backend": "gram"}, "gram")])
def test_fista_and_gram_refuse_the_pair_kind(fitted, kw, backend):
    _, model, _ = fitted
    with pytest.raises(ValueError, match=rf"term {re.escape(repr(TERM))}.*'grid'.*{backend}"):
        model.fit(lam=0.01, **kw)


def test_a_dask_frame_refuses_the_pair_by_name(fitted):
    dd = pytest.importorskip("dask.dataframe")
    dask = pytest.importorskip("dask")
    df, _, _ = fitted
    with dask.config.set(scheduler="sync"), pytest.raises(
        ValueError, match=r"pair term bin\(a\):bin\(b\) is not supported on a Dask"
    ):
        bs.glm(f"y ~ bin(a, 4) + {TERM}", dd.from_pandas(df, npartitions=2))


def test_cut_points_list_the_surface_lines_per_axis():
    rng = np.random.default_rng(3)
    n = 2000
    df = pd.DataFrame({"a": rng.uniform(size=n), "b": rng.uniform(size=n)})
    df["y"] = 1.0 * ((df.a > 0.5) & (df.b > 0.25)) + rng.normal(scale=0.3, size=n)
    res = bs.glm(f"y ~ bin(a, 4) + bin(b, 4) + {TERM}", df).fit(lam=0.003)
    cuts = res.cut_points()
    pair = cuts[cuts.term == TERM]
    block = res.model.spec.blocks[2]
    for column, edges, truth in (("a", block.edges, 0.5), ("b", block.pair_edges, 0.25)):
        lines = pair[pair.column == column]
        assert len(lines) and set(lines.cut) <= set(edges)
        strongest = lines.cut.iloc[int(np.argmax(np.abs(lines.jump.to_numpy())))]
        assert strongest == edges[np.argmin(np.abs(edges - truth))]
    text = str(res.summary())
    assert f"{TERM} [a]" in text and f"{TERM} [b]" in text
