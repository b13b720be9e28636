"""What a fitted model is, read the same way for binarsity fits and their baselines.

:func:`compare`, :func:`anova` and :func:`heldout` take a binarsity fit next to the
models a statistician compares it with — statsmodels' ``GLM`` and ``PHReg`` results and
lifelines' ``CoxPHFitter`` — and need the same few facts of each: its family, how it
predicts the linear predictor of new rows, where its response and weights come from,
and, for the tests, its data, design and likelihood. :func:`describe_fit` reads them.
No foreign library is imported here: the objects are recognised by their class.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["FitView", "describe_fit", "is_lifelines_cox", "is_statsmodels_glm",
           "is_statsmodels_phreg"]  # fmt: skip


@dataclass
class FitView:
    """The facts of a fitted model that comparisons read.

    Parameters
    ----------
    kind : str
        What the model is (``"penalized"``, ``"refit"``, ``"statsmodels GLM"``, ...).
    family : Any
        Its family, as :func:`~binarsity_stats.families._families.get_family` reads it.
    predict_link : callable
        ``predict_link(data, offset)``: the linear predictor of new rows.
    formula, response : optional
        A binarsity model's formula and how its response was read.
    weight_column, response_column : str, optional
        Columns of new data holding the weights and the response, when known.
    survival_columns : tuple of str, optional
        The (time, event) columns of a lifelines fit.
    strata : bool
        Whether the model is stratified (Cox).
    """

    kind: str
    family: Any
    predict_link: Callable[[Any, Any], np.ndarray]
    formula: Any = None
    response: Any = None
    weight_column: str | None = None
    response_column: str | None = None
    survival_columns: tuple | None = None
    strata: bool = False


def _module(obj: Any) -> str:
    return type(obj).__module__ or ""


def is_statsmodels_glm(obj: Any) -> bool:
    """A statsmodels ``GLM(...).fit()`` result (or its wrapper)."""
    model = getattr(obj, "model", None)
    return (_module(obj).startswith("statsmodels.") and type(model).__name__ == "GLM"
            and _module(model).startswith("statsmodels."))  # fmt: skip


def is_statsmodels_phreg(obj: Any) -> bool:
    """A statsmodels ``PHReg(...).fit()`` result (a binarsity Cox refit holds one too)."""
    model = getattr(obj, "model", None)
    return (_module(obj).startswith("statsmodels.") and type(model).__name__ == "PHReg"
            and _module(model).startswith("statsmodels."))  # fmt: skip


def is_lifelines_cox(obj: Any) -> bool:
    """A fitted lifelines ``CoxPHFitter``."""
    return type(obj).__name__ == "CoxPHFitter" and _module(obj).startswith("lifelines")


def _as_frame_like(data: Any) -> Any:
    import pandas as pd

    return data if isinstance(data, pd.DataFrame) else pd.DataFrame(data)


def describe_fit(obj: Any, who: str) -> FitView:
    """Read a fitted model (binarsity or baseline) for ``who`` (``"heldout"``, ...).

    Raises
    ------
    TypeError
        An object of another kind, named.
    """
    from ._path_results import CVResults
    from ._refit import RefitResults
    from ._results import BinarsityResults

    if isinstance(obj, CVResults):
        obj = obj.best_
    if isinstance(obj, BinarsityResults | RefitResults):
        parent = obj if isinstance(obj, BinarsityResults) else obj.parent
        m = parent.model

        def link(data: Any, offset: Any, fit: Any = obj) -> np.ndarray:
            return np.asarray(fit.predict(data, type="link", offset=offset), dtype=np.float64)

        return FitView(
            kind="refit" if isinstance(obj, RefitResults) else "penalized",
            family=m.family, predict_link=link, formula=m.formula, response=m.response,
            weight_column=getattr(m, "weight_column", None),
            strata=getattr(m, "strata", None) is not None,
        )  # fmt: skip
    if is_statsmodels_glm(obj):
        model = obj.model

        def link(data: Any, offset: Any) -> np.ndarray:
            if getattr(model, "formula", None) is None:
                raise TypeError(
                    f"{who}: the statsmodels GLM was fitted on arrays; fit it with a "
                    "formula (smf.glm) so that new rows can be read by name."
                )
            return np.asarray(obj.predict(_as_frame_like(data), offset=offset,
                                          which="linear"), dtype=np.float64)  # fmt: skip

        names = getattr(model, "endog_names", None)
        return FitView(kind="statsmodels GLM", family=model.family, predict_link=link,
                       response_column=names if isinstance(names, str) else None)  # fmt: skip
    if is_statsmodels_phreg(obj):
        model = obj.model

        def link(data: Any, offset: Any) -> np.ndarray:
            if getattr(model, "formula", None) is None:
                raise TypeError(
                    f"{who}: the statsmodels PHReg was fitted on arrays; fit it with a "
                    "formula (smf.phreg) so that new rows can be read by name."
                )
            pred = obj.predict(exog=_as_frame_like(data), offset=offset, pred_type="lhr")
            return np.asarray(pred.predicted_values, dtype=np.float64)

        return FitView(kind="statsmodels PHReg", family=("cox", model.ties), predict_link=link,
                       strata=getattr(model, "strata", None) is not None)  # fmt: skip
    if is_lifelines_cox(obj):
        if not hasattr(obj, "params_"):
            raise ValueError(f"{who}: the lifelines CoxPHFitter is not fitted.")

        def link(data: Any, offset: Any) -> np.ndarray:
            if offset is not None:
                raise ValueError(f"{who}: lifelines' CoxPHFitter takes no offset.")
            return np.asarray(obj.predict_log_partial_hazard(_as_frame_like(data)),
                              dtype=np.float64)  # fmt: skip

        return FitView(
            kind="lifelines CoxPHFitter", family=("cox", "efron"), predict_link=link,
            weight_column=getattr(obj, "weights_col", None),
            survival_columns=(obj.duration_col, obj.event_col),
            strata=getattr(obj, "strata", None) is not None,
        )  # fmt: skip
    raise TypeError(
        f"{who}: expected a binarsity fit (BinarsityResults, CVResults, RefitResults), a "
        f"statsmodels GLM or PHReg result, or a fitted lifelines CoxPHFitter; got a "
        f"{type(obj).__name__}."
    )
