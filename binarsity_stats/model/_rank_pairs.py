"""``rank_pairs(results)``: which pair terms ``bin(a):bin(b)`` a fit is missing (issue 25).

At a fitted model (main effects, or anything else), every pair of its binned features is
scored by the λ_max of the pair's grid block at the fit's working gradient (design.md
§10, ``engine/_pair_screen``): the KKT violation of adding ``bin(a, n):bin(b, n)`` with
θ = 0, in λ's own units. A pair whose score exceeds the fit's λ would enter the model
at that λ; the ranking is the formula door's version of the estimators'
``interactions=k``. The pair's axes are binned as the pair term bins them (``n_bins``
weighted quantiles per axis, re-learned from the raw columns), so the score is the one
of the term a user would add to the formula.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..engine._pair_screen import PairScreen, screen_columns

__all__ = ["rank_pairs", "ranking_table", "working_gradient", "check_n_bins_pairs"]

#: ``penalty_weights`` rules a pair's grid has edge weights for (``grid_weights``).
GRID_WEIGHT_RULES = ("theory", "balanced", "uniform")


def check_n_bins_pairs(n_bins: Any, who: str = "rank_pairs") -> int:
    """``n_bins`` of the pair axes: an integer ≥ 2 (bool refused)."""
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 2:
        raise ValueError(f"{who}: n_bins must be an integer >= 2 (bins per axis); got {n_bins!r}.")
    return int(n_bins)


def working_gradient(family: Any, y: np.ndarray, eta: np.ndarray, weight: np.ndarray,
                     who: str = "rank_pairs") -> np.ndarray:  # fmt: skip
    """Per-row gradient of the average loss with respect to η: s_i ∂ℓ/∂η_i / Σ s.

    Raises
    ------
    ValueError
        For a family without a per-row working gradient (Cox: its partial likelihood
        couples the rows through the risk sets).
    """
    if getattr(family, "survival", False):
        raise ValueError(
            f"{who}: the family {family.name!r} has no per-row working gradient (its partial "
            "likelihood couples the rows); pair ranking supports the GLM families "
            "(gaussian, binomial, poisson, gamma, Tweedie, ...)."
        )
    w = np.ascontiguousarray(weight, dtype=np.float64)
    total = float(w.sum())
    if not total > 0:
        raise ValueError(f"{who}: the sample weights sum to 0.")
    g, h = np.empty(len(w)), np.empty(len(w))
    family.grad_hess(np.ascontiguousarray(eta, dtype=np.float64),
                     np.ascontiguousarray(y, dtype=np.float64), w, 1.0 / total, g, h)  # fmt: skip
    return g


def ranking_table(screen: PairScreen, names: Sequence[str], lam: float) -> Any:
    """The ranking as a DataFrame, best first: feature_a, feature_b, score,
    score_to_lam (score / λ of the fit), n_cells, rank."""
    import pandas as pd

    scores = np.asarray(screen.scores, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = scores / lam if lam > 0 else np.full(len(scores), np.inf)
    return pd.DataFrame({
        "feature_a": [str(names[a]) for a, _ in screen.pairs],
        "feature_b": [str(names[b]) for _, b in screen.pairs],
        "score": scores,
        "score_to_lam": rel,
        "n_cells": np.asarray(screen.n_cells, dtype=np.int64),
        "rank": np.arange(1, len(scores) + 1, dtype=np.int64),
    })  # fmt: skip


def candidate_indices(candidates: Any, names: Sequence[str], who: str) -> list[tuple[int, int]]:
    """Pairs of feature names (or positions) → index pairs; clear errors otherwise."""
    from ..formula._columns import did_you_mean

    if isinstance(candidates, (str, bytes)) or not hasattr(candidates, "__iter__"):
        raise TypeError(f"{who}: candidates must be a list of pairs (a, b) of feature names.")
    index = {str(n): j for j, n in enumerate(names)}
    out = []
    for pair in candidates:
        if isinstance(pair, (str, bytes)) or not hasattr(pair, "__len__") or len(pair) != 2:
            raise ValueError(f"{who}: each candidate must be a pair (a, b); got {pair!r}.")
        idx = []
        for name in pair:
            if isinstance(name, (int, np.integer)) and not isinstance(name, bool) \
                    and not isinstance(names[0], (int, np.integer)):  # fmt: skip
                if not 0 <= int(name) < len(names):
                    raise ValueError(f"{who}: candidate feature {name!r} is not one of the "
                                     f"{len(names)} binned features.")  # fmt: skip
                idx.append(int(name))
                continue
            if str(name) not in index:
                raise ValueError(
                    f"{who}: {name!r} in the candidate {tuple(pair)!r} is not a binned feature "
                    f"of the model (binned: {', '.join(map(repr, map(str, names)))})."
                    + did_you_mean(str(name), [str(n) for n in names])
                )
            idx.append(index[str(name)])
        if idx[0] == idx[1]:
            raise ValueError(f"{who}: the candidate {tuple(pair)!r} pairs a feature with itself.")
        out.append((min(idx), max(idx)))
    if not out:
        raise ValueError(f"{who}: candidates is empty.")
    return list(dict.fromkeys(out))


def _binned_columns(model: Any) -> tuple[list[str], list[str]]:
    """The binned features of a formula model (plain ``bin(x)`` terms): names, terms."""
    names, terms = [], []
    for block in model.spec.blocks:
        if block.kind == "bin" and block.by is None and block.column not in names:
            names.append(block.column)
            terms.append(block.term)
    return names, terms


def rank_pairs(results: Any, candidates: Sequence[tuple[str, str]] | None = None,
               n_bins: int = 16, *, data: Any = None) -> Any:  # fmt: skip
    """Rank pairs of binned features by the pair term each would add to a fit.

    Every pair (a, b) of the fit's binned features (``bin(x)`` terms) is scored by the
    λ_max of the pair term ``bin(a, n_bins):bin(b, n_bins)`` at the fit: the smallest λ at
    which that term, added with θ = 0, would stay empty (the KKT violation of its grid
    block at the fit's working gradient, design.md §10; a principled analogue of EBM's
    FAST). A pair whose score exceeds the fit's λ (``score_to_lam > 1``) would enter the
    model at that λ. The pair's axes are binned as the pair term bins them (``n_bins``
    weighted quantiles per axis, learned again from the raw columns), and its grid's
    edge weights follow the fit's ``penalty_weights`` rule. The cost per pair is one pass
    over two rows of codes and a small linear programme on the grid.

    Parameters
    ----------
    results : BinarsityResults or CVResults
        A fit of ``glm()`` (``fit``, or ``fit_cv``: its fit at ``lam_1se``). Gaussian,
        binomial, Poisson and the other GLM families (not Cox).
    candidates : sequence of (str, str), optional
        The pairs to score, by column name (the order within a pair does not matter).
        Default: every pair of binned features.
    n_bins : int, default=16
        Bins per axis of the pair terms (``bin(a):bin(b)``'s default).
    data : DataFrame, optional
        The training data, for a model loaded from disk (a saved model does not keep its
        training frame); the rows the fit used are taken from it.

    Returns
    -------
    pandas.DataFrame
        One row per pair, best first: ``feature_a``, ``feature_b``, ``score`` (λ_max of
        the pair term at the fit), ``score_to_lam`` (score / the fit's λ), ``n_cells``
        (observed cells of the pair's grid) and ``rank`` (1 = best).

    Raises
    ------
    ValueError
        Fewer than two binned features, an unknown candidate name, a column with missing
        values, a family without a per-row gradient (Cox), weights given as an array
        (adaptive), or a model without its training data.

    Examples
    --------
    >>> import numpy as np, pandas as pd, binarsity_stats as bs
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame(rng.uniform(size=(2000, 3)), columns=["a", "b", "c"])
    >>> df["y"] = (df.a > 0.5) + 1.5 * ((df.b > 0.5) & (df.c > 0.5)) + rng.normal(size=2000)
    >>> res = bs.glm("y ~ bin(a, 10) + bin(b, 10) + bin(c, 10)", df).fit(lam=0.002)
    >>> table = bs.rank_pairs(res)
    >>> tuple(table.loc[0, ["feature_a", "feature_b"]])
    ('b', 'c')
    """
    from ._path_results import CVResults

    if isinstance(results, CVResults):
        results = results.results("lam_1se")
    model = getattr(results, "model", None)
    if model is None or not hasattr(results, "solution") or model.__class__.__name__ != "BinarsityModel":
        raise TypeError(
            "rank_pairs needs the results of glm().fit() or fit_cv() (BinarsityResults); "
            f"got {type(results).__name__}."
        )
    n_bins = check_n_bins_pairs(n_bins)
    model.require("rank_pairs()")
    kind = getattr(model, "penalty_kind", "balanced")
    if kind not in GRID_WEIGHT_RULES:
        raise ValueError(
            f"rank_pairs: the fit's penalty_weights are {kind!r}; a pair term's grid has "
            f"edge weights by a rule only ({', '.join(GRID_WEIGHT_RULES)})."
        )
    names, _ = _binned_columns(model)
    if len(names) < 2:
        raise ValueError(
            f"rank_pairs needs at least two binned features (bin(x) terms); the model has "
            f"{len(names)}{': ' + repr(names[0]) if names else ''}."
        )
    frame = _training_frame(model, data)
    cols = np.empty((model.nobs, len(names)))
    for j, name in enumerate(names):
        if name not in frame.columns:
            raise ValueError(
                f"rank_pairs reads the raw column {name!r} of bin({name}); it is not a "
                "column of the training data (a pair term bins plain columns)."
            )
        x = np.asarray(frame[name], dtype=np.float64)
        if not np.all(np.isfinite(x)):
            raise ValueError(
                f"rank_pairs: column {name!r} has missing or infinite values; a pair term "
                "has no missing level (fit with missing='drop')."
            )
        cols[:, j] = x
    pairs = None if candidates is None else candidate_indices(candidates, names, "rank_pairs")
    grad = working_gradient(model.family, model.y, results.linear_predictor, model.unit_weight)
    screen, _ = screen_columns(
        cols, grad, model.unit_weight, n_bins=n_bins,
        binning_weight=model.sample_weight if model.weighted else None,
        pairs=pairs, weights=kind,
    )  # fmt: skip
    return ranking_table(screen, names, float(results.lam))


def _training_frame(model: Any, data: Any) -> Any:
    """The training rows' columns: the model's frame, or ``data`` (its kept rows)."""
    if data is None:
        frame = model.__dict__.get("_data")
        if frame is None:
            raise ValueError(
                "rank_pairs needs the training data: a model loaded from disk does not keep "
                "it; pass data=<the training DataFrame>."
            )
        return frame
    from ..formula._formula import as_frame

    frame = as_frame(data)
    kept = getattr(model, "rows_kept", None)
    if kept is not None and len(frame) == len(kept) and len(frame) != model.nobs:
        frame = frame[np.asarray(kept, dtype=bool)]
    if len(frame) != model.nobs:
        raise ValueError(
            f"rank_pairs: data has {len(frame)} rows; the model was fitted on {model.nobs}."
        )
    return frame
