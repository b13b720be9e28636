"""Scorecards: a binomial model as points per interval per term (credit scoring).

Reads only the model description of :mod:`._spec`. The scaling is the "points to
double the odds" convention of credit scoring (Siddiqi 2006; optbinning's
``Scorecard(scaling_method="pdo_odds")``): with factor = pdo / ln 2 and
offset = base_score − factor · ln(base_odds),

    score = offset − factor · η,

where η is the model's log-odds of the modelled event (``y = 1``, e.g. default): the
score rises as the event becomes less likely, ``base_score`` points mean odds of
``base_odds`` : 1 against the event, and every ``pdo`` points double those odds. The
score is split into points per term: a binned or categorical term's level k gets
−factor · θ_k plus an equal share (offset − factor · β0) / p of the intercept, so the
points of a row add up to its score exactly; a linear term gets −factor · coef points
per unit of its value, and an offset −factor points per unit. A pair term
``bin(a):bin(b)`` is one of the p terms: its cell (k, l) gets −factor · θ_kl plus the
share, a cell that held no training row (θ = 0, as ``predict``) the share alone, and
``Scorecard.two_way[term]`` shows them as a two-way table (rows: the bins of a,
columns: the bins of b).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["Scorecard", "scorecard"]


def _intervals(edges: Any) -> list[str]:
    """The labels of the right-closed intervals of a binned input's cut points."""
    from ..formula._labels import interval_label

    bounds = [-math.inf, *edges, math.inf]
    return [interval_label(lo, hi) for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]


def _labels(term: Mapping[str, Any]) -> list[str]:
    from ..formula._labels import interval_label

    if term["kind"] == "bin":
        edges = [-math.inf, *term["edges"], math.inf]
        labels = [interval_label(lo, hi) for lo, hi in zip(edges[:-1], edges[1:], strict=True)]
        by = term.get("by")
        if by is not None:  # bin(x):C(g): the intervals of every level's chain
            levels = [str(v) for v in by["levels"]]
            head = [f"{levels[0]}: reference"] if by["main"] else []
            rest = levels[1:] if by["main"] else levels
            labels = head + [f"{g}: {lab}" for g in rest for lab in labels]
    else:
        labels = [str(v) for v in term["levels"]]
    return labels + (["missing"] if term["missing_level"] else [])


class Scorecard:
    """Points per interval per term of a binomial model, and the scores of new rows.

    Build it with ``res.scorecard(...)`` or :func:`scorecard`.

    Parameters
    ----------
    spec : dict
        The model description (``to_spec()``) of a binomial model with a logit link.
    pdo : float
        Points that double the odds against the event.
    base_score : float
        The score at odds ``base_odds`` : 1 against the event.
    base_odds : float
        The odds (against the event) that ``base_score`` stands for.
    rounding : int or None
        Decimals the points are rounded to (0: whole points); None keeps them exact.

    Attributes
    ----------
    factor, offset : float
        pdo / ln 2 and base_score − factor · ln(base_odds).
    table : pandas.DataFrame
        One row per level of every binned or categorical term (``term``, ``column``,
        ``bin``, ``theta``, ``points``) and per linear term and offset (``bin`` = "per
        unit", ``points`` per unit of the value).
    two_way : dict of str to pandas.DataFrame
        For each pair term ``bin(a):bin(b)`` (by its name), the points of its cells: one
        row per bin of a, one column per bin of b (the index and columns named by the
        two columns); a cell without training rows holds the intercept's share alone.
    max_rounding_error : float
        Bound on abs(rounded score − exact score) of any row: half a rounding unit per
        binned or categorical term (0 when not rounded); linear terms and offsets are
        not rounded.
    """

    def __init__(
        self,
        spec: Mapping[str, Any],
        pdo: float = 20.0,
        base_score: float = 600.0,
        base_odds: float = 50.0,
        rounding: int | None = None,
    ) -> None:
        from ..design._spec_model import block_theta, check_spec, from_spec

        spec = check_spec(spec)  # validated before anything is read
        if spec["family"]["link"] != "logit":  # only binomial models have it
            raise ValueError(
                "a scorecard needs a binomial model with the logit link (its points are "
                f"log-odds); this model is {spec['family']['name']} with link "
                f"{spec['family']['link']!r}."
            )
        for name, value in (("pdo", pdo), ("base_odds", base_odds)):
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a positive number; got {value!r}.")
        if not (isinstance(base_score, (int, float)) and math.isfinite(base_score)):
            raise ValueError(f"base_score must be a finite number; got {base_score!r}.")
        if rounding is not None and (isinstance(rounding, bool) or not isinstance(rounding, int)
                                     or rounding < 0):  # fmt: skip
            raise ValueError(f"rounding must be None or an integer ≥ 0; got {rounding!r}.")
        self._model = from_spec(spec)
        self.spec = self._model.spec
        self.pdo, self.base_score, self.base_odds = float(pdo), float(base_score), float(base_odds)
        self.rounding = rounding
        self.factor = self.pdo / math.log(2.0)
        self.offset = self.base_score - self.factor * math.log(self.base_odds)
        blocks = [t for t in self.spec["terms"] if t["kind"] != "linear"]
        if not blocks:
            raise ValueError("a scorecard needs at least one binned or categorical term.")
        share = (self.offset - self.factor * float(self.spec["intercept"])) / len(blocks)
        self._points = []
        self.two_way: dict[str, pd.DataFrame] = {}
        rows = []
        for t in blocks:
            theta = block_theta(t)
            pts = share - self.factor * np.asarray(theta, dtype=np.float64)
            if rounding is not None:
                pts = np.round(pts, rounding)
            self._points.append(pts)
            if t["kind"] == "pair":
                rows.extend(self._pair_rows(t, pts))
                continue
            for label, value, p in zip(_labels(t), theta, pts, strict=True):
                rows.append((t["name"], t["column"], label, value, float(p)))
        for t in self.spec["terms"]:
            if t["kind"] == "linear":
                rows.append((t["name"], None, "per unit", t["coef"], -self.factor * t["coef"]))
        off = self.spec["offset"]
        if off["terms"] or off.get("column") is not None:
            rows.append(("offset", off.get("column"), "per unit", 1.0, -self.factor))
        self.table = pd.DataFrame(rows, columns=["term", "column", "bin", "theta", "points"])
        self.max_rounding_error = 0.0 if rounding is None else len(blocks) * 0.5 * 10.0**-rounding

    def _pair_rows(self, term: Mapping[str, Any], pts: np.ndarray) -> list[tuple]:
        """The long table's rows of a pair term (one per cell of its grid, in row-major
        order) and its two-way table in ``two_way``."""
        (ax_a, ax_b), table = term["axes"], term["table"]
        la, lb = _intervals(ax_a["edges"]), _intervals(ax_b["edges"])
        grid = np.full((len(la), len(lb)), pts[-1])  # the cells without training rows
        observed = [(k, m) for k, row in enumerate(table) for m, v in enumerate(row)
                    if v is not None]  # fmt: skip
        for i, (k, m) in enumerate(observed):
            grid[k, m] = pts[i]
        two_way = pd.DataFrame(grid, index=pd.Index(la, name=str(ax_a["column"])),
                               columns=pd.Index(lb, name=str(ax_b["column"])))  # fmt: skip
        self.two_way[term["name"]] = two_way
        column = f"{ax_a['column']} x {ax_b['column']}"
        return [
            (term["name"], column,
             f"{la[k]} x {lb[m]}" + ("" if table[k][m] is not None else " (empty at training)"),
             0.0 if table[k][m] is None else table[k][m], float(grid[k, m]))
            for k in range(len(la)) for m in range(len(lb))
        ]  # fmt: skip

    def points(self, new: Any, offset: Any = None) -> pd.DataFrame:
        """The points of every row, one column per term (and ``offset``), plus ``score``.

        Parameters
        ----------
        new : DataFrame, mapping of columns or 2-D array
            Rows with the columns the model was fitted on.
        offset : array-like, optional
            Offset, as in ``predict``.

        Returns
        -------
        pandas.DataFrame
            Points per term; ``score`` is their sum.
        """
        m = self._model
        n = m._n_rows(new)
        codes = m._codes(new, n)
        blocks = [t for t in self.spec["terms"] if t["kind"] != "linear"]
        out = {t["name"]: pts[codes[j].astype(np.intp)]
               for j, (t, pts) in enumerate(zip(blocks, self._points, strict=True))}  # fmt: skip
        dense = m._dense(new)
        linear = [t for t in self.spec["terms"] if t["kind"] == "linear"]
        for i, t in enumerate(linear):
            out[t["name"]] = -self.factor * t["coef"] * dense[:, i]
        off = m._offset(new, n, offset)
        if off is not None:
            out["offset"] = -self.factor * off
        frame = pd.DataFrame(out, index=getattr(new, "index", None))
        frame["score"] = frame.sum(axis=1)
        return frame

    def score(self, new: Any, offset: Any = None) -> np.ndarray:
        """The score of every row: the sum of its points.

        Parameters
        ----------
        new : DataFrame, mapping of columns or 2-D array
            Rows with the columns the model was fitted on.
        offset : array-like, optional
            Offset, as in ``predict``.

        Returns
        -------
        ndarray
            offset − factor · η exactly when the points are not rounded.
        """
        return self.points(new, offset=offset)["score"].to_numpy()

    def __repr__(self) -> str:
        r = "exact" if self.rounding is None else f"rounded to {self.rounding} decimals"
        return (
            f"<Scorecard pdo={self.pdo:g} base_score={self.base_score:g} "
            f"base_odds={self.base_odds:g}, {len(self.table)} rows, points {r}>"
        )


def scorecard(
    model: Any,
    pdo: float = 20.0,
    base_score: float = 600.0,
    base_odds: float = 50.0,
    rounding: int | None = None,
) -> Scorecard:
    """The scorecard of a fitted binomial model (points per interval per term).

    Parameters
    ----------
    model : fitted model or dict
        Formula results, a fitted classifier or binomial estimator, a ``SpecModel``, or
        a ``to_spec()`` description.
    pdo : float, default=20
        Points that double the odds against the event.
    base_score : float, default=600
        The score at odds ``base_odds`` : 1 against the event.
    base_odds : float, default=50
        The odds that ``base_score`` stands for.
    rounding : int or None, default=None
        Decimals the points are rounded to (0: whole points). With None the points of
        a row add up to offset − factor · η exactly; rounded, the score moves by at most
        ``Scorecard.max_rounding_error`` and rows keep their order up to it.

    Returns
    -------
    Scorecard
        ``table`` of points, ``score(new)``, ``points(new)``.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from binarsity_stats import BinarsityClassifier, scorecard
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"age": rng.uniform(18, 80, 400)})
    >>> y = (rng.random(400) < 1 / (1 + np.exp((X["age"] - 40) / 10))).astype(int)
    >>> card = scorecard(BinarsityClassifier(n_bins=5).fit(X, y), rounding=0)
    >>> list(card.table.columns)
    ['term', 'column', 'bin', 'theta', 'points']
    """
    if isinstance(model, Mapping):
        spec = model  # validated by Scorecard
    elif hasattr(model, "to_spec"):
        spec = model.to_spec()
    else:
        raise TypeError(
            "scorecard needs a fitted binomial model (formula results, an estimator, a "
            f"SpecModel) or its to_spec() description; got {type(model).__name__}."
        )
    return Scorecard(spec, pdo=pdo, base_score=base_score, base_odds=base_odds, rounding=rounding)
