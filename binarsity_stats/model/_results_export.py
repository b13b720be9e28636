"""The exports of a fit at one λ: its model description (``to_spec``), the SQL query and
the scorecard made from that description.

``ExportMixin`` is a base class of :class:`~binarsity_stats.model._results.BinarsityResults`
(its methods are documented there); it reads ``model``, ``coef``, ``dense_coef``,
``intercept``, ``lam`` and ``relax_gamma`` of the results.
"""

from __future__ import annotations

import ast
from typing import Any

__all__ = ["ExportMixin"]


def _block_factors(model_spec: Any, n_blocks: int) -> list[str] | None:
    """The formula factor of every code block, in block order (``bin(a, 8)``,
    ``bin(a, 8, pair=b)``, ``C(g)``: aliased names, as formulaic holds them), so that an
    input is read from the factor and never from a label that shows a name; None when
    they do not pair up with the blocks."""
    from ..design._spec import parse_expression

    out = []
    for st in model_spec.structure:
        factors = list(st.term.factors)
        parsed = parse_expression(factors[0].expr) if len(factors) == 1 else None
        node = None if parsed is None else parsed[0]
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in ("bin", "C", "ordered")):  # fmt: skip
            out.append(factors[0].expr)
    return out if len(out) == n_blocks else None


class ExportMixin:
    """The exports of :class:`~binarsity_stats.model._results.BinarsityResults`."""

    # -- the neutral description -------------------------------------------------------------
    def _penalty_description(self) -> dict[str, Any]:
        """How the coefficients were penalised (the model description's ``penalty``)."""
        out: dict[str, Any] = {"weights": str(self.model.penalty_kind)}
        if getattr(self, "relax_gamma", None) is not None:
            out["relax"] = float(self.relax_gamma)
        return out

    def to_spec(self) -> dict[str, Any]:
        """A versioned, JSON-serialisable description of the fitted model.

        Per term its kind, expression, column, cut points (right-closed), levels,
        missing level, reference level (``C(g, Treatment(level))``) and θ; the
        intercept, family and link (with parameters such as Tweedie's power), the offset
        terms, the columns whose missing values give NaN predictions
        (``missing="drop"``) and the package version (see the module
        ``binarsity_stats.design._spec``). ``binarsity_stats.from_spec`` rebuilds from it a
        model that predicts bit for bit what this one predicts; exporters read only it.

        Returns
        -------
        dict
            Plain JSON values (``json.dumps`` writes it as is).

        Raises
        ------
        ValueError
            A term that the description cannot replay: a formulaic stateful transform
            (``center(x)``, ``scale(x)``, ``poly(x)``...) or ``C()`` of an expression.
        """
        from ..formula._formula import unalias, dense_column_factors
        from ..design._spec import (
            argument_expr, bin_term, column_input, describe_input, json_value, make_spec,
            pair_arguments, pair_term,
        )  # fmt: skip

        m = self.model
        spec = m.spec
        aliases = getattr(spec, "aliases", None)
        # a recipe of plain columns (an estimator's, BinarsityModel.from_design) has no
        # formulaic state: every input is its block's (or dense term's) column
        columns = spec.model_spec is None
        for key, state in ({} if columns else spec.model_spec.transform_state).items():
            if state and "__binarsity__" not in state:
                raise ValueError(
                    f"term {unalias(key, aliases)!r} uses a stateful transform whose state "
                    "the model description does not record; write it as a data column."
                )
        terms: list[dict[str, Any]] = []
        kinds = m.engine_kinds
        # each block's formula factor (bin(a, n, pair=b, pair_bins=m) for a pair term)
        block_factors = None if columns else _block_factors(spec.model_spec, len(spec.blocks))
        for j, block in enumerate(spec.blocks):
            s, e = int(m.block_ptr[j]), int(m.block_ptr[j + 1])
            if getattr(block, "is_pair", False):  # each axis an input, never text
                if columns:
                    sources = [column_input(block.column), column_input(block.pair_column)]
                elif block_factors is None:
                    raise ValueError(f"term {block.term!r}: its axes cannot be described.")
                else:
                    sources = [describe_input(x, block.term, aliases)
                               for x in pair_arguments(block_factors[j])]  # fmt: skip
                n_cells = len(block.cells)  # the trailing level: no parameter (θ = 0)
                axes = [(sources[0], block.column, block.edges),
                        (sources[1], block.pair_column, block.pair_edges)]  # fmt: skip
                terms.append(pair_term(block.term, axes, block.cells,
                                       self.coef[s : s + n_cells], str(kinds[j])))  # fmt: skip
                continue
            by = getattr(block, "by", None)
            if block_factors is not None:  # the factor, not the label (a name may hold a backtick)
                expr = argument_expr(block_factors[j])
            else:
                expr = argument_expr(block.term if by is None else block.term.rsplit(":C(", 1)[0])
            if block.kind == "bin":
                # the input as a column reference (+ one transform), never as text. The
                # kept cuts: every cut point with θ as fitted — readers treat a cut
                # between two equal levels as absent (the SQL export leaves it out), so a
                # jump rule that flattens θ here decides the cuts of every exporter
                source = (column_input(block.column) if columns
                          else describe_input(expr, block.term, aliases))  # fmt: skip
                terms.append(bin_term(block.term, source, block.column, block.edges,
                                      block.has_missing_level, self.coef[s:e], kinds[j]))  # fmt: skip
                if by is not None:
                    terms[-1]["by"] = {"column": by, "main": bool(block.by_main),
                                       "levels": [json_value(v) for v in block.by_levels]}  # fmt: skip
                continue
            if not columns and describe_input(expr, block.term, aliases) != {"column": block.column}:
                raise ValueError(f"term {block.term!r}: C() of an expression is not described.")
            term = {"kind": "categorical", "name": block.term,
                    "column": block.column, "levels": [json_value(v) for v in block.levels],
                    "missing_level": bool(block.has_missing_level), "unseen": "error",
                    "penalty": kinds[j], "theta": [float(v) for v in self.coef[s:e]]}  # fmt: skip
            if getattr(block, "reference", None) is not None:  # C(g, Treatment(level))
                term["reference"] = json_value(block.reference)
            terms.append(term)
        factors = (
            {c: [column_input(c)] for c in spec.dense_columns} if columns
            else dense_column_factors(spec)
        )  # fmt: skip
        for name, value in zip(spec.dense_columns, self.dense_coef, strict=True):
            terms.append({"kind": "linear", "name": name, "factors": factors[name],
                          "coef": float(value)})  # fmt: skip
        offset_terms = [describe_input(argument_expr(c), c, aliases) for c in spec.offset_columns]
        response = {"name": m.response.name, "kind": m.response.kind}
        if m.response.event is not None:
            response["event"] = json_value(m.response.event)
        return make_spec(
            source=type(self).__name__, family=m.family, intercept=self.intercept,
            fit_intercept=bool(spec.fit_intercept), terms=terms, lam=self.lam,
            response=response, offset_terms=offset_terms, offset_column=m.offset_column,
            penalty=self._penalty_description(),
            drop_columns=getattr(spec, "drop_columns", None),
            kinds=getattr(spec, "column_kinds", None),
        )  # fmt: skip

    def to_sql(self, table: str = "t", dialect: str = "sqlite", **kwargs: Any) -> str:
        """One SQL ``SELECT`` scoring every row of ``table`` with this model.

        Parameters
        ----------
        table : str, default="t"
            The table holding the rows, with the columns the model was fitted on.
        dialect : {"sqlite", "duckdb", "postgresql"}, default="sqlite"
            The database.
        **kwargs
            ``type``, ``name``, ``keep``, ``offset_column`` of :func:`binarsity_stats.to_sql`.

        Returns
        -------
        str
            The query (see :func:`binarsity_stats.to_sql`).
        """
        from ..export._sql import to_sql

        return to_sql(self, table=table, dialect=dialect, **kwargs)

    def scorecard(
        self,
        pdo: float = 20.0,
        base_score: float = 600.0,
        base_odds: float = 50.0,
        rounding: int | None = None,
    ) -> Any:
        """Points per interval per term of a binomial fit (a credit-scoring scorecard).

        Parameters
        ----------
        pdo : float, default=20
            Points that double the odds against the event (y = 1).
        base_score : float, default=600
            The score at odds ``base_odds`` : 1 against the event.
        base_odds : float, default=50
            The odds that ``base_score`` stands for.
        rounding : int or None, default=None
            Decimals of the points (0: whole points); None keeps them exact.

        Returns
        -------
        Scorecard
            ``table`` (points per interval per term), ``score(new)``, ``points(new)``;
            see :func:`binarsity_stats.scorecard`.
        """
        from ..export._scorecard import scorecard

        return scorecard(self, pdo=pdo, base_score=base_score, base_odds=base_odds,
                         rounding=rounding)  # fmt: skip
