"""The formula layer's results of a fitted estimator (``BinarsityGLM.results``).

An estimator and ``glm()`` fit the same model when the formula names the features in
column order — ``bin(x)`` for a binned feature, ``C(g)`` for a categorical one, ``z``
for a linear one, ``- 1`` without intercept — with the same family, bins, weights and
penalty weights (tests/sklearn/test_estimator_results.py proves it bit for bit). So the
estimator's inspection methods do not re-implement the tables and plots: they build
that ``glm()`` model on the training data, check that it learned the estimator's bins,
levels and penalty weights, and wrap the estimator's own solution in a
``BinarsityResults``. Summary, cut-points, shapes, plots, bootstrap, refit and report
are then the formula layer's, number for number.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from ..families._families import get_family
from ..design._features import BLOCK_KINDS, fitted_column
from ..formula._formula import AliasedFormula, ColumnRefs
from ..model._model import glm
from ..model._results import BinarsityResults
from ..core._validation import as_real_array, check_offset, check_sample_weight

__all__ = ["estimator_results", "estimator_formula", "new_frame"]


def _column_names(st: dict, p: int) -> list[str]:
    names = st.get("feature_names_in_")
    if names is None:
        return [f"x{j}" for j in range(p)]
    out = [str(c) for c in names]
    if len(set(out)) != p:  # e.g. the columns 1 and "1"
        return [f"x{j}" for j in range(p)]
    return out


def _free_name(name: str, names: list[str]) -> str:
    """``name`` with underscores appended until no feature is called so."""
    while name in names:
        name += "_"
    return name


def estimator_formula(est: Any, st: dict, names: list[str], response: str) -> tuple[str, Any]:
    """The formula of an estimator's model and the ``n_bins`` to pass to ``glm()``.

    Parameters
    ----------
    est : BinarsityGLM
        The fitted estimator.
    st : dict
        Its validated fitted state (``est._fitted()``).
    names : list of str
        The column names used in the formula.
    response : str
        The response's column name.

    Returns
    -------
    formula : AliasedFormula
        ``"y ~ bin(a) + C(g) + z"`` (``bin(a, k)`` when ``n_bins`` is per feature;
        ``bin(a, monotone='increasing')`` for a monotone feature; ``bin(a, by=g)``
        (``bin(a):C(g)``) for a feature with a ``by=`` group, whose group column has no
        term of its own;
        ``+ strata(s)`` for the ``strata=`` columns). No feature name is written into
        the text: a name that is not a plain ASCII Python name is an alias
        (``_bsc0_``) of the formula's ``aliases``, so that no name is ever parsed.
    n_bins : int
        The default of the ``bin()`` terms.
    """
    kinds = st["_kinds"]
    k_min = int(getattr(est, "min_bin_count", 1) or 1)
    opt = f", min_count={k_min}" if k_min > 1 else ""  # bins with at least k rows each
    per_feature = np.ndim(est.n_bins) == 1
    nb = list(est.n_bins) if per_feature else None
    if per_feature and len(nb) != len(kinds):  # one entry per binned feature
        it = iter(nb)
        nb = [next(it) if k == "bin" else None for k in kinds]
    shapes = st.get("monotone_")  # None: fitted before monotone features existed
    by = st.get("by_")
    ref = ColumnRefs(set(names) | {response})
    terms = []
    for j, kind in enumerate(kinds):
        q = ref(names[j])
        if kind in ("group", "strata"):  # in a by-group term / the strata() term
            continue
        if kind == "bin":
            shape = shapes[j] if shapes is not None else None
            opts = opt + (f", monotone={shape!r}" if shape else "")
            terms.append(f"bin({q}, {int(nb[j])}{opts})" if per_feature else f"bin({q}{opts})")
            if by is not None and by[j] is not None:  # one chain per level: bin(x):C(g)
                # written bin(x, by=g): formulaic would move an interaction x:g after the
                # main terms, and the blocks must stay in column order
                g = ref(names[fitted_column(st, by[j])])
                terms[-1] = f"{terms[-1][:-1]}, by={g})"
        elif kind == "categorical":
            terms.append(f"C({q})")
        elif kind == "ordered":  # an ordered pandas Categorical: its categories' order
            shape = shapes[j] if shapes is not None else None
            terms.append(f"ordered({q}, monotone={shape!r})" if shape else f"ordered({q})")
        else:
            terms.append(q)
    rhs = " + ".join(terms) + ("" if est.fit_intercept else " - 1")
    strata = [names[fitted_column(st, c)] for c in st.get("strata_") or ()]
    if strata:
        rhs += f" + strata({', '.join(ref(c) for c in strata)})"
    text = f"{response} ~ {rhs}"
    return AliasedFormula(text, ref.aliases), 50 if per_feature else int(est.n_bins)


def _frame(st: dict, X: Any, names: list[str]) -> pd.DataFrame:
    """The features of X as a DataFrame with the formula's column names."""
    kinds = st["_kinds"]
    fitted_names = st.get("feature_names_in_")
    cols = {}
    for j, kind in enumerate(kinds):
        if hasattr(X, "columns"):
            key = fitted_names[j] if fitted_names is not None else X.columns[j]
            if key not in X.columns:
                raise ValueError(f"column {str(key)!r} (used by the model) is missing from X.")
            values = X[key].reset_index(drop=True)
        else:
            values = X[:, j]
            if kind in ("bin", "linear") and values.dtype.kind == "O":
                values = as_real_array(values, f"column {j}")
        cols[names[j]] = values
    return pd.DataFrame(cols)


def _check_same_bins(est: Any, st: dict, model: Any, names: list[str]) -> None:
    """The formula learned the estimator's bins, levels and penalty weights."""
    bins = st["_bins"]
    b = c = k = 0
    by = st.get("by_")
    for j, kind in enumerate(st["_kinds"]):
        if kind not in BLOCK_KINDS:
            continue
        block = model.spec.blocks[k]
        k += 1
        if kind == "bin":
            same = np.array_equal(np.asarray(block.edges), bins.edges[b]) and bool(
                block.has_missing_level
            ) == bool(bins.has_missing[b])
            if by is not None and by[j] is not None:  # the group's levels in block order
                levels = getattr(block, "by_levels", None)
                same = same and levels is not None and list(levels) == list(st["by_levels_"][j])
            b += 1
        else:
            levels = list(st["categories_"][c])
            same = list(block.levels) == levels and bool(block.has_missing_level) == bool(
                st["categorical_missing_"][c]
            )
            c += 1
        if not same:
            raise ValueError(
                f"X is not the data {type(est).__name__} was fitted on: the "
                f"{'cut points' if kind == 'bin' else 'levels'} of feature {names[j]!r} "
                "learned from it differ from the fitted ones."
            )
    if not np.array_equal(model.penalty_weights, np.asarray(st["penalty_weights_"])):
        raise ValueError(
            f"X and sample_weight are not the data {type(est).__name__} was fitted on: "
            "the penalty weights learned from them differ from the fitted ones."
        )


def estimator_results(
    est: Any, st: dict, X: Any, n: int, y: Any, sample_weight: Any, offset: Any
) -> Any:
    """``BinarsityResults`` of a fitted estimator on its training data.

    Parameters
    ----------
    est : BinarsityGLM or BinarsityClassifier
        The fitted estimator.
    st : dict
        Its validated fitted state (``est._fitted()``).
    X : DataFrame or ndarray
        The training features, their container validated (``_validate_X``).
    n : int
        Their number of rows.
    y, sample_weight, offset
        The rest of the data of its ``fit``.

    Returns
    -------
    BinarsityResults
        The formula layer's results, with the estimator's solution.
    """
    p = len(st["_kinds"])
    if not hasattr(X, "columns") and X.shape[1] != p:
        raise ValueError(f"X has {X.shape[1]} features, but {st['_name']} is expecting {p}.")
    yy, extra = est._prepare_y(y, n)
    if "classes_" in st and not np.array_equal(extra.get("classes_"), st["classes_"]):
        raise ValueError(
            f"y has the classes {list(extra.get('classes_'))}, not the fitted "
            f"{list(st['classes_'])}."
        )
    sw = check_sample_weight(sample_weight, n)
    off = check_offset(offset, n)
    names = _column_names(st, p)
    response = "y"
    while response in names:
        response += "_"
    survival = extra.get("_survival")
    if survival is not None:  # family="cox": the formula's response is Surv(time, event)
        # a status given in R's 1/2 coding goes to Surv() as given: the formula reads it
        # by the same rule (_cox.read_status) and its summary says so
        r_coding = bool(extra.get("_r_coding"))
        time_name = _free_name("time", names)
        event_name = _free_name("status" if r_coding else "event", names)
        response = f"Surv({time_name}, {event_name})"  # plain names, free of the features'
    formula, n_bins = estimator_formula(est, st, names, response)
    data = _frame(st, X, names)
    if survival is not None:
        status = np.asarray(survival[1], dtype=float) + (1.0 if r_coding else 0.0)
        data[time_name], data[event_name] = survival[0], status
    else:
        data[response] = yy
    classes = st.get("classes_")
    if classes is not None and all(isinstance(c, str) for c in classes):
        # text labels: the formula reads a two-level factor whose event is its second
        # (sorted) level, classes_[1] — the summary then names the event level
        data[response] = np.asarray(classes, dtype=object)[yy.astype(np.intp)]
    model = glm(
        formula, data, family=est.family, sample_weight=sw, offset=off, n_bins=n_bins,
        penalty_weights=est.penalty_weights, missing=est.missing,
        weights_kind=getattr(est, "weights_kind", "analytic"),
    )  # fmt: skip
    _check_same_bins(est, st, model, names)
    sol = st["solution_"]
    sol = replace(sol, eta=model.binned.linear_predictor(sol.coef, sol.dense_coef, sol.intercept))
    # y (and an offset) are checked through the objective the fit reached on them
    objective = model.prepare().prob.objective(sol.eta, sol.coef, sol.lam)
    fitted = float(st.get("objective_", objective))
    if not np.isclose(objective, fitted, rtol=1e-8, atol=1e-12):
        raise ValueError(
            f"y, offset or sample_weight are not the data {type(est).__name__} was fitted "
            f"on: the fitted solution's objective on them is {objective:.10g}, not "
            f"{fitted:.10g}."
        )
    if "n_folds_" in st:  # a *CV estimator: λ chosen by its cross-validation
        how = f"{st['n_folds_']}-fold CV ({est.select}, {est.scoring})"
    elif isinstance(est.lam, str):
        how = "theory"
        if "dispersion_" in st:
            fam = get_family(est.family)
            how = f"theory ({fam.dispersion_name} estimated: {st['dispersion_']:.4g})"
    else:
        how = "user"
    return BinarsityResults(model, sol, how)


def new_frame(est: Any, st: dict, X: Any, n: int, y: Any) -> tuple[pd.DataFrame, Any]:
    """New rows as the formula results read them: (data frame, response or None).

    Parameters
    ----------
    est : BinarsityGLM or BinarsityClassifier
        The fitted estimator.
    st : dict
        Its validated fitted state.
    X : DataFrame or ndarray
        New rows, their container validated.
    n : int
        Their number of rows.
    y : array-like, optional
        Their response (class labels for a classifier).

    Returns
    -------
    data : DataFrame
        The features under the formula's column names.
    y : ndarray or None
        The response as the formula reads it (0/1 for a classifier).
    """
    p = len(st["_kinds"])
    if not hasattr(X, "columns") and X.shape[1] != p:
        raise ValueError(f"new has {X.shape[1]} features, but {st['_name']} is expecting {p}.")
    data = _frame(st, X, _column_names(st, p))
    if y is None:
        return data, None
    if "classes_" in st:
        labels, classes = np.asarray(y), np.asarray(st["classes_"])
        if labels.shape != (n,) or not np.all(np.isin(labels, classes)):
            raise ValueError(
                f"new_y must hold {n} labels among the fitted classes {classes.tolist()}."
            )
        return data, (labels == classes[1]).astype(np.float64)
    yy, _ = est._prepare_y(y, n)
    return data, yy
