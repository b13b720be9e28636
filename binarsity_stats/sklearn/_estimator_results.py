"""The results of a fitted estimator (``BinarsityGLM.results``), built on its own blocks.

The estimator's inspection methods do not re-implement the tables and plots: they wrap
the estimator's solution in a ``BinarsityResults`` whose model
(``BinarsityModel.from_design``) holds the estimator's own blocks — its fitted cut
points, levels, kinds and by-groups (``_estimator_spec``) — with the training rows
coded under them. No formula is written and nothing is binned again, so the edges,
codes and coefficients are the fit's by construction; the kinds of the blocks and ω
come from the one assembler of every door (``design/_assemble``). Summary, cut-points,
shapes, plots, bootstrap, refit and report are then the formula layer's, number for
number (tests/test_estimator_formula.py compares them with ``glm()``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from ..core._validation import as_real_array, check_offset, check_sample_weight
from ..families import _cox
from ..families._families import get_family
from ..formula._response import Response
from ..model._model import BinarsityModel
from ..model._results import BinarsityResults
from ._estimator_spec import estimator_spec

__all__ = ["estimator_results", "new_frame"]


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


def _check_counts(est: Any, st: dict, model: BinarsityModel) -> None:
    """X (and the weights) code to the fitted level counts n_jk, feature by feature."""
    fitted = st.get("bin_counts_")
    if fitted is None:  # pragma: no cover - every fit publishes them
        return
    fitted, counts, ptr = np.asarray(fitted), model.bin_counts, model.block_ptr
    # every block's counts sum to the total weight: the scale of the absolute margin
    scale = max(float(np.sum(np.abs(fitted[: int(ptr[1])]))) if len(ptr) > 1 else 0.0, 1.0)
    for k, block in enumerate(model.spec.blocks):
        s, e = int(ptr[k]), int(ptr[k + 1])
        # the same sums of the same weights: equal up to rounding of the sums' order
        if counts.shape != fitted.shape or not np.allclose(
            counts[s:e], fitted[s:e], rtol=1e-9, atol=1e-12 * scale
        ):
            what = "bins" if block.kind == "bin" else "levels"
            raise ValueError(
                f"X or sample_weight are not the data {type(est).__name__} was fitted on: "
                f"the (weighted) rows in the {what} of feature {block.column!r} differ "
                "from the fitted counts."
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
        The formula layer's results class on the estimator's blocks, with its
        solution.
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
    response = Response(name=_free_name("y", names), kind="numeric")
    survival = extra.get("_survival")
    classes = st.get("classes_")
    if survival is not None:  # family="cox": the response Surv(time, event)
        # a status given in R's 1/2 coding: the summary says so, as Surv() reads it
        r_coding = bool(extra.get("_r_coding"))
        time_name = _free_name("time", names)
        event_name = _free_name("status" if r_coding else "event", names)
        response = Response(name=f"Surv({time_name}, {event_name})", kind="survival",
                            event="2" if r_coding else "event",
                            levels=("1", "2") if r_coding else None)  # fmt: skip
    elif classes is not None and all(isinstance(c, str) for c in classes):
        # text labels: a two-level factor whose event is its second (sorted) level
        response = replace(response, kind="factor", event=str(classes[1]),
                           levels=tuple(str(c) for c in classes))  # fmt: skip
    data = _frame(st, X, names)
    spec, design = estimator_spec(est, st, data, names, response.name)
    if survival is not None:
        design.survival = np.column_stack([survival[0], survival[1]]).astype(np.float64)
        if spec.strata:  # one baseline hazard per stratum: the labels of strata()
            from ..formula._formula import strata_labels

            design.strata = strata_labels(data, spec.strata)
            yy = _cox.encode(survival[0], survival[1], design.strata)
    model = BinarsityModel.from_design(
        spec, design, yy, response, family=est.family, penalty_weights=est.penalty_weights,
        weights_kind=getattr(est, "weights_kind", "analytic"), sample_weight=sw, offset=off,
        data=data,
    )  # fmt: skip
    _check_counts(est, st, model)
    sol = st["solution_"]
    sol = replace(sol, eta=model.binned.linear_predictor(sol.coef, sol.dense_coef, sol.intercept))
    # y, an offset (and rows of X in another order) are checked through the objective
    # the fit reached on them
    objective = model.prepare().prob.objective(sol.eta, sol.coef, sol.lam)
    fitted = float(st.get("objective_", objective))
    if not np.isclose(objective, fitted, rtol=1e-8, atol=1e-12):
        raise ValueError(
            f"X, y, offset or sample_weight are not the data {type(est).__name__} was fitted "
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
