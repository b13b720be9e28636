"""A ``SolverData`` that forwards the protocol's members, and only them (shared by
``tests/engine/test_problem.py`` and the solver-backend toy of ``tests/test_recipes.py``)."""

from __future__ import annotations

from binarsity_stats.engine._problem import SOLVER_DATA_MEMBERS


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
