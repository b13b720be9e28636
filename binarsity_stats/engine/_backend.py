"""What a solver backend supports, declared once, and the one place that refuses the rest.

A solver backend (the in-memory engine, the Dask solver of ``distributed/``) declares its
:class:`Capabilities`: the block kinds its block steps know and the features of a
request it can honour (a partial likelihood, a family parameter to estimate, by-group
chains, relaxed CV...). The modelling layer describes a request as ``(feature, what)``
pairs — ``what`` names the term, family or argument as the user wrote it — and
:func:`check_supported` refuses the first one the backend lacks, naming it and the
backend (skglm's ``_penalty_required_attr`` idiom: the solver states what it needs, the
caller does not keep its own list of exceptions).

Features (:data:`FEATURES`; a block kind is the feature ``"kind:<name>"``, a CV score
``"scoring:<name>"``):
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "FEATURES", "Capabilities", "IN_MEMORY", "FISTA", "GRAM", "check_supported", "kind_feature",
]

#: Every feature a request can need, with what it is (the error message's words).
FEATURES: dict[str, str] = {
    "coupled_rows": "a loss that is not a sum over rows (not row-separable: a partial "
                    "likelihood couples rows through its risk sets)",
    "estimated_parameter": "a family parameter estimated by alternation",
    "by_group": "by-group chains (one chain per level of a factor)",
    "lam_alo": "lam='alo' (approximate leave-one-out along a path)",
    "relax": "relaxed cross-validation (relax=)",
    "overlapping_folds": "held-out sets that are not one fold per row",
    "parallel_folds": "folds solved in parallel on the client (n_jobs)",
}

__doc__ += "".join(f"\n* ``{k}``: {v};" for k, v in FEATURES.items()).rstrip(";") + ".\n"


def kind_feature(kind: str) -> str:
    """The feature of a block kind (``"kind:" + name``).

    Parameters
    ----------
    kind : str
        A name of ``penalty._blocks.KINDS``.

    Returns
    -------
    str
    """
    return f"kind:{kind}"


@dataclass(frozen=True)
class Capabilities:
    """The declared capabilities of a solver backend.

    Attributes
    ----------
    name : str
        The backend as the user selects it (``solver="dask"``), for messages.
    features : frozenset of str or None
        The features supported (see :data:`FEATURES`, ``"kind:<name>"``,
        ``"scoring:<name>"``); None: every feature.
    lacks : frozenset of str
        Features not supported even when ``features`` is None (every other one).
    """

    name: str
    features: frozenset | None = None
    lacks: frozenset = frozenset()

    def supports(self, feature: str) -> bool:
        """Whether ``feature`` is supported.

        Parameters
        ----------
        feature : str

        Returns
        -------
        bool
        """
        if feature in self.lacks:
            return False
        return self.features is None or feature in self.features


#: The in-memory engine: every feature.
IN_MEMORY = Capabilities("in-memory (cd, fista)")
#: The FISTA solver: every feature but a block kind without a prox (a pair's grid).
FISTA = Capabilities("fista solver", lacks=frozenset({kind_feature("grid")}))
#: CD from the Gram (``backend="gram"``): every feature but a kind whose step the Gram
#: kernel lacks (a pair's grid).
GRAM = Capabilities("gram", lacks=frozenset({kind_feature("grid")}))


def check_supported(capabilities: Capabilities, request: Iterable[tuple[str, str]]) -> None:
    """Refuse the first feature of ``request`` that the backend does not support.

    Parameters
    ----------
    capabilities : Capabilities
        The backend's declaration.
    request : iterable of (str, str)
        ``(feature, what)``: the feature needed and what needs it (a term, a family, an
        argument, as the user wrote it).

    Raises
    ------
    ValueError
        Naming ``what``, the feature and the backend.
    """
    for feature, what in request:
        if capabilities.supports(feature):
            continue
        kind, _, name = feature.partition(":")
        if kind == "kind":
            need = f"block kind {name!r}"
        elif kind == "scoring":
            need = f"held-out score {name!r}"
        else:
            need = FEATURES.get(feature, feature)
        have = sorted(capabilities.features or ())
        kinds = [f[5:] for f in have if f.startswith("kind:")]
        scores = [f[8:] for f in have if f.startswith("scoring:")]
        extra = []
        if kinds:
            extra.append(f"block kinds {kinds}")
        if scores:
            extra.append(f"scoring {scores}")
        supported = f" (it supports {', '.join(extra)})" if extra else ""
        raise ValueError(
            f"{what}: {need} is not supported by the {capabilities.name} backend"
            f"{supported}."
        )
