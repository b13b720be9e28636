"""GLM families: every family-specific fact the engine and the reports use (design.md §8).

A :class:`Family` answers, for a response ``y``, sample weights ``s`` and a linear
predictor η:

* **the engine** — the loss Σ_i s_i ℓ(y_i, η_i), its gradient and IRLS curvature per row
  (:meth:`~Family.grad_hess`; for a non-canonical link the curvature is the
  Fisher-scoring weight μ'(η)² / V(μ)), a bound on the curvature (FISTA's first step,
  the U of the theory λ), whether the loss is quadratic (one Newton step is exact), the
  units of the gradient that ``tol`` is measured in, and the null fit (intercept with
  offset and weights) that every solver starts from;
* **the data checks** — the valid range of y and of the offset, with their messages;
* **the reports** — mean and link, deviance, Pearson dispersion, log-likelihood, the
  statsmodels counterpart used by ``refit``, the summary's header rows, and whether y
  is binary (stratified CV folds, ``scoring="auc"``).

No code outside ``families/`` looks at a family's name: a new family is a new class there.

Two kinds of family exist:

* the built-in ``"gaussian"``, ``"binomial"`` and ``"poisson"`` (canonical links), whose
  loss is s [b(η) − y η] and whose hot loops run in ``_glm_kernels.pyx`` (the Cython
  fast path);
* :class:`StatsmodelsFamily`, built from a statsmodels family instance (e.g.
  ``sm.families.Tweedie(var_power=1.5, link=sm.families.links.Log())``): a NumPy path
  driven by the link and variance functions, whose loss is **half the unit deviance**
  d(y, μ)/2. For a canonical family the two losses differ by a function of y only
  (d/2 = b(η) − yη − [b(θ_y) − y θ_y]), so gradients, solutions and the meaning of λ
  are the same.

Convexity. Only family/link pairs whose loss is convex in η on all of R are accepted
(the solvers' optimality certificate and the theory both need it); see
:data:`CONVEX_LINKS`. With a log link, μ = e^η and the Tweedie half deviance is
−y e^{(1−p)η}/(1−p) + e^{(2−p)η}/(2−p) (p ∉ {1, 2}), whose second derivative
(p−1) y e^{(1−p)η} + (2−p) e^{(2−p)η} is ≥ 0 for every y ≥ 0 and η iff 1 ≤ p ≤ 2
(p = 1 Poisson: e^η − yη; p = 2 gamma: y e^{−η} + η). A binomial link whose inverse is a
CDF F with a log-concave density (logit, probit, cloglog, loglog) gives
−y log F − (1−y) log(1−F), convex since F and 1−F are log-concave; the Cauchy link is
not. Links whose inverse leaves the mean's domain (identity or sqrt for Poisson,
inverse power for gamma, log for binomial) define the loss on a half-line only and
are refused, as are the gaussian with a non-identity link and the inverse Gaussian
(its log-link loss is concave for large η).

Where to add.

* A distribution or link: a :class:`Family` subclass (beside the built-in ones in
  ``_builtin.py``, named in :data:`FAMILIES`), or a row of :data:`CONVEX_LINKS` and its
  closed forms in :class:`StatsmodelsFamily` (``_statsmodels.py``), plus tests;
  nothing outside ``families/`` changes.
* A Cython fast path: kernels in ``_glm_kernels.pyx`` named
  ``{family}_{link}_{quantity}``; a built-in family sets ``_loss_kernel`` and
  ``_grad_hess_kernel``, a statsmodels family is registered in ``_FAST_PATHS``
  (``_statsmodels.py``; gamma/Tweedie, issue 14) and must return the half deviance.
* Cox (design.md §8) is not a per-row loss: :class:`CoxPH` (``_builtin.py``) is built
  with the rows' times (sorted once) and its ``loss_sum``/``grad_hess`` compute
  risk-set sums (``_cox``), with no intercept and no ``mean``.

This module turns what users pass (a name, a tuple, text, a statsmodels instance, a
model description's dict) into a family; the classes live beside it: the base class in
``_family.py``, the built-in families in ``_builtin.py``, the statsmodels families in
``_statsmodels.py``. They are re-exported here: the engine and the modelling layer
import them from this module, and pickles name ``binarsity_stats.families._families``
(``Poisson``, ``CoxPH``, …, and ``_from_key`` — now ``from_key`` — for a statsmodels
family); v0.1.0 pickles
name ``binarsity_stats._families``, which ``_moved`` maps to this module.
"""

from __future__ import annotations

import math
from typing import Any

from ._builtin import FAMILIES, Binomial, CoxPH, Gaussian, Poisson
from ._family import Family
from ._negbin import NegativeBinomial
from ._quasi import QuasiBinomial, QuasiPoisson
from ._statsmodels import CONVEX_LINKS, StatsmodelsFamily, from_key, _sm_key

#: The name pickles of a statsmodels family made before it was public call.
_from_key = from_key

# R's quasi families, by name like the built-in ones (every reader of FAMILIES: the
# names of get_family, the CLI's --family, descriptions read back by family_from_dict)
FAMILIES.setdefault("quasipoisson", QuasiPoisson)
FAMILIES.setdefault("quasibinomial", QuasiBinomial)
# the negative binomial, θ estimated (R's MASS::glm.nb; issue 28)
FAMILIES.setdefault("nb", NegativeBinomial)

__all__ = [
    "Family",
    "Gaussian",
    "Binomial",
    "Poisson",
    "QuasiPoisson",
    "QuasiBinomial",
    "NegativeBinomial",
    "StatsmodelsFamily",
    "CoxPH",
    "get_family",
    "family_note",
    "family_from_text",
    "user_family",
    "FAMILY_ALIASES",
    "family_from_dict",
    "FAMILIES",
    "CONVEX_LINKS",
]


def get_family(family: str | Family | Any) -> Family:
    """Return the :class:`Family` for a name, a Family or a statsmodels family instance.

    Parameters
    ----------
    family : str, tuple, Family or statsmodels family
        ``"gaussian"``, ``"binomial"``, ``"poisson"``; ``"gamma"`` and ``"tweedie"``
        (power 1.5) or ``("tweedie", p)`` with 1 < p < 2 have a log link and the
        Cython kernels; ``"cox"`` (Breslow ties) or ``("cox", "efron")``. A statsmodels instance
        (``sm.families.Gamma(sm.families.links.Log())``) gives a
        :class:`StatsmodelsFamily`.

    Returns
    -------
    Family

    Raises
    ------
    ValueError
        For an unknown name, or a statsmodels family/link pair that is not convex.
    """
    if isinstance(family, Family):
        return family
    if isinstance(family, tuple) and len(family) == 2 and family[0] == "cox":
        return CoxPH(family[1])
    named = _named_log_family(family)
    if named is not None:
        return named
    if isinstance(family, str):
        name = family.strip().lower()
        name = FAMILY_ALIASES.get(name, name)
        if name in FAMILIES:
            return FAMILIES[name]()
    if not isinstance(family, str) and _is_statsmodels_family(family):
        return StatsmodelsFamily(family)
    import difflib

    known = sorted(FAMILIES) + list(LOG_LINK_FAMILIES) + sorted(FAMILY_ALIASES)
    close = (
        difflib.get_close_matches(str(family).lower(), known, n=1)
        if isinstance(family, str)
        else []
    )
    hint = f" Did you mean {close[0]!r}?" if close else ""
    raise ValueError(
        f"family must be one of {sorted(FAMILIES) + list(LOG_LINK_FAMILIES)}, "
        f"('tweedie', power) (also R's and statsmodels' spellings "
        f"{sorted(FAMILY_ALIASES)}) or a statsmodels family instance "
        f"(e.g. sm.families.Gamma(sm.families.links.Log())); got {family!r}.{hint}"
    )


#: the named log-link families (issue 14): ``family="gamma"``, ``"tweedie"`` (power 1.5,
#: glum's default) or ``("tweedie", p)`` with 1 < p < 2
LOG_LINK_FAMILIES = ("gamma", "tweedie")
TWEEDIE_DEFAULT_POWER = 1.5


def _named_log_family(family: Any) -> StatsmodelsFamily | None:
    """``"gamma"``, ``"tweedie"`` or ``("tweedie", p)`` as a log-link family, else None."""
    power = None
    if isinstance(family, tuple) and len(family) == 2 and isinstance(family[0], str):
        name, power = family[0].strip().lower(), family[1]
        if name != "tweedie":
            raise ValueError(
                f"family=(name, power) is for the Tweedie family only, e.g. "
                f"('tweedie', 1.5); got {family!r}."
            )
    elif isinstance(family, str) and family.strip().lower() in LOG_LINK_FAMILIES:
        name = family.strip().lower()
    else:
        return None
    from statsmodels.genmod import families as sm_families  # not statsmodels.api (tsa…)

    log = sm_families.links.Log()
    if name == "gamma":
        return StatsmodelsFamily(sm_families.Gamma(link=log))
    if power is None:
        power = TWEEDIE_DEFAULT_POWER
    try:
        p = float(power)
    except (TypeError, ValueError):
        p = math.nan
    if not 1.0 < p < 2.0:
        raise ValueError(
            f"family=('tweedie', power): power must be a number in (1, 2) (1 is the "
            f"Poisson, 2 the gamma: use family='poisson' or 'gamma'); got {power!r}."
        )
    return StatsmodelsFamily(sm_families.Tweedie(var_power=p, link=log))


#: Other spellings of the built-in families (R, statsmodels, glum, scikit-learn).
FAMILY_ALIASES = {
    "logistic": "binomial",
    "logit": "binomial",
    "bernoulli": "binomial",
    "normal": "gaussian",
    "linear": "gaussian",
    "log-linear": "poisson",
    "negative_binomial": "nb",
    "negbin": "nb",
}


def _canonical_builtin(sm_family: Any) -> str | None:
    """The built-in family equal to a statsmodels instance (canonical link), else None."""
    name, link, params = _sm_key(sm_family)
    pairs = {("Gaussian", "Identity"): "gaussian", ("Binomial", "Logit"): "binomial",
             ("Poisson", "Log"): "poisson"}  # fmt: skip
    return None if params else pairs.get((name, link))


def user_family(family: Any) -> tuple[Family, str | None]:
    """The family of a user's ``family=`` argument and how it was read.

    As :func:`get_family`, except that a statsmodels family with its canonical link and
    no parameter (``sm.families.Binomial()``, ``Poisson()``, ``Gaussian()``) becomes the
    built-in family: the same model, fitted with the Cython kernels (its loss differs
    from the statsmodels twin's half deviance by a constant only).

    Parameters
    ----------
    family : str, Family or statsmodels family
        The argument.

    Returns
    -------
    family : Family
    note : str or None
        See :func:`family_note`.
    """
    if not isinstance(family, (str, Family)) and _is_statsmodels_family(family):
        target = _canonical_builtin(family)
        if target:
            return FAMILIES[target](), family_note(family)
    return get_family(family), family_note(family)


def family_from_text(text: str) -> Any:
    """The ``family=`` argument a command-line ``--family`` names.

    Parameters
    ----------
    text : str
        A built-in name or alias (``"binomial"``, ``"logit"``, ``"cox"``...),
        ``"cox:efron"`` / ``"cox:breslow"`` (the Cox model with these ties), ``"gamma"``,
        ``"tweedie"`` (P = 1.5, glm()'s default) or ``"tweedie:P"`` with 1 <= P <= 2
        (statsmodels' families with the log link: their canonical links are not convex).

    Returns
    -------
    str or statsmodels family
        What :func:`glm` takes.

    Raises
    ------
    ValueError
        For any other text, with the closest known name.
    """
    name = text.strip().lower()
    if name in FAMILIES or name in FAMILY_ALIASES:
        return text
    if name.startswith("cox:"):
        ties = name.split(":", 1)[1].strip()
        if ties not in ("breslow", "efron"):
            raise ValueError(f"cox:TIES needs TIES = breslow or efron; got {text!r}")
        return ("cox", ties)
    if name == "tweedie":
        name = "tweedie:1.5"  # glm(family="tweedie")'s variance power
    if name == "gamma" or name.startswith("tweedie:"):
        from statsmodels.genmod import families as sm_families  # not statsmodels.api

        log = sm_families.links.Log()
        if name == "gamma":
            return sm_families.Gamma(log)
        try:
            power = float(name.split(":", 1)[1])
        except ValueError:
            power = -1.0
        if not 1.0 <= power <= 2.0:
            raise ValueError(
                f"tweedie:P needs a variance power 1 <= P <= 2 (log link); got {text!r}"
            )
        return sm_families.Tweedie(var_power=power, link=log)
    import difflib

    known = sorted(FAMILIES) + sorted(FAMILY_ALIASES) + ["gamma", "tweedie", "cox:efron"]
    close = difflib.get_close_matches(name, known, n=1)
    raise ValueError(
        f"must be one of {', '.join(sorted(FAMILIES))}, cox:efron, gamma, tweedie or "
        f"tweedie:P (also {', '.join(sorted(FAMILY_ALIASES))}); got {text!r}"
        + (f". Did you mean {close[0]!r}?" if close else "")
    )


def family_note(family: Any) -> str | None:
    """How a family given under another spelling was read, for the summary (else None).

    Parameters
    ----------
    family : str, Family or statsmodels family
        The ``family`` argument as the user gave it.

    Returns
    -------
    str or None
        E.g. ``family='logit' read as 'binomial' (logit link).``; None when the
        argument is a built-in name, a Family or a statsmodels family kept as it is.
    """
    if isinstance(family, str):
        name = family.strip().lower()
        if name in FAMILY_ALIASES:
            target = FAMILY_ALIASES[name]
            link = FAMILIES[target]().link
            return f"family={family!r} read as {target!r} ({link} link)."
        return None
    if not isinstance(family, Family) and _is_statsmodels_family(family):
        target = _canonical_builtin(family)
        if target:
            return (
                f"family={type(family).__name__}() with its canonical link read as "
                f"{target!r} (the same model, fitted with the built-in kernels)."
            )
    return None


def family_from_dict(spec: dict[str, Any]) -> Family:
    """Rebuild a family from :meth:`Family.to_dict` (e.g. a model read back from JSON).

    Parameters
    ----------
    spec : dict
        The output of :meth:`Family.to_dict`.

    Returns
    -------
    Family
        A family equal to the one described.
    """
    if "ties" in spec:  # family="cox"
        return CoxPH(spec["ties"])
    if "theta" in spec:  # family="nb" at its (estimated or given) θ, now fixed
        return NegativeBinomial(spec["theta"])
    if "statsmodels" not in spec:
        return get_family(spec["name"])
    params = tuple(
        (k, float(spec[k])) for k in ("var_power", "alpha") if k in spec
    )  # the order of _sm_key
    return from_key(spec["statsmodels"], spec["sm_link"], params)


def _is_statsmodels_family(obj: Any) -> bool:
    """Whether obj is a statsmodels family, without importing statsmodels for a string."""
    module = type(obj).__module__ or ""
    if not module.startswith("statsmodels"):
        return False
    from statsmodels.genmod.families import Family as SMFamily

    return isinstance(obj, SMFamily)
