"""Prediction from a fit at one λ: new rows replayed on the training recipe, Cox's
baseline hazard and concordance, broom's ``augment()``.

``PredictionMixin`` is a base class of :class:`~binarsity_stats.model._results.BinarsityResults`
(its methods are documented there); it reads ``model``, ``coef``, ``dense_coef``,
``intercept`` and ``linear_predictor`` of the results.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..core._base import inconsistent
from ..core._validation import check_offset
from ..distributed._dask import is_dask_collection
from ..families import _cox
from ..formula._formula import as_frame, check_predict_missing, column_or_array, predict_complete

if TYPE_CHECKING:  # pragma: no cover
    from ._model import BinarsityModel

__all__ = ["PredictionMixin"]


def _new_design(model: BinarsityModel, newdata: Any, offset: Any) -> tuple[Any, np.ndarray | None]:
    """The training recipe replayed on new rows: (design, total offset).

    The offset is the formula's ``offset()`` terms plus ``offset`` when given, else the
    model's offset column read from ``newdata`` (when the model was given one).
    """
    newdata = as_frame(newdata)
    design = model.spec.transform(newdata)
    off = design.offset
    extra = None
    if offset is not None:
        extra = check_offset(offset, design.n_obs, rows_of="the data")
    elif model.offset_column is not None:
        if model.offset_column not in newdata.columns:
            raise ValueError(
                f"column '{model.offset_column}' (the model's offset) is missing from the data."
            )
        # validated as at fit time: numeric and finite, errors naming the column
        extra, _ = column_or_array(model.offset_column, newdata, "offset", design.n_obs)
    if extra is not None:
        off = extra if off is None else off + extra
    return design, off


class PredictionMixin:
    """``predict`` and what goes with it, for :class:`BinarsityResults`."""

    # -- prediction ------------------------------------------------------------------------
    def predict(
        self,
        newdata: Any = None,
        type: str = "response",  # noqa: A002 - R's name
        offset: Any = None,
        missing: str | None = None,
        times: Any = None,
        *,
        interval: float | None = None,
    ) -> np.ndarray:
        """Predict on new data with the training cut points and levels.

        Parameters
        ----------
        newdata : DataFrame or Dask DataFrame, optional
            New rows; the training rows when omitted. Needs every column the right-hand
            side of the formula reads (``offset()`` terms are replayed from it). A Dask
            DataFrame gives a lazy Dask Series (one task per partition).
        type : {"response", "link"}, default="response"
            Mean response b'(η) or the linear predictor η. With ``family="cox"``:
            ``"risk"`` (= ``"response"``) the relative risk e^η, ``"linear"``
            (= ``"link"``) η, or ``"survival"`` S(t | x) = exp(−H0(t) e^η) at
            ``times`` with Breslow's baseline (:meth:`baseline_hazard`). A Cox model has
            no intercept: η and the risk are relative to a row with every ``bin()`` and
            ``C()`` term at its weighted training average (the levels satisfy
            Σ n_k θ_k = 0, so the weighted mean of a term's effect over the training
            rows is 0) and every linear term and offset at 0. (``refit().predict()`` is
            relative to the terms' reference levels instead.)
        offset : array-like of shape (n,), optional
            Extra offset for the new rows. When the model was given ``offset=`` as a
            column name it is read from ``newdata``; when it was given an array and
            ``offset`` is omitted here, it is taken as 0 (statsmodels' convention).
        missing : {None, "nan", "error"}, optional
            New rows with a missing value in a column whose missing values dropped
            training rows (``glm(..., missing="drop")`` or ``bin(x, missing="drop")``):
            ``"nan"`` (the default for such a model) predicts NaN for them, as R's
            ``na.exclude``; ``"error"`` raises, naming the column. Other models always
            raise for a missing value outside a missing level.
        times : array-like of float, optional
            ``family="cox"``, ``type="survival"``: the times at which S(t | x) is
            evaluated (required there, refused elsewhere).
        interval : float, optional
            Coverage of a **bootstrap** interval of the mean (or of η), e.g. 0.9: the
            penalised fit has no standard errors, so the interval comes from the last
            :meth:`bootstrap` (one with its defaults is run when there is none) and its
            default ``relaxed`` method (``BootstrapResults.predict``). The frame's
            ``attrs`` name the method and what the coverage benchmark measured of it;
            a warning says when that fell below 85%.

        Returns
        -------
        ndarray of shape (n,) or (n, len(times)), or dask Series, or DataFrame
            Mean response or linear predictor of every row (a dask Series for dask
            ``newdata``); survival probabilities, one column per time, for
            ``type="survival"``. With ``interval``: a DataFrame with ``mean``,
            ``mean_ci_lower`` and ``mean_ci_upper`` (bootstrap).

        Raises
        ------
        ValueError
            A column missing from ``newdata``, an unseen categorical level, a NaN
            without a missing level, or a non-finite offset; the message names the column.
        TypeError
            A non-numeric ``bin()`` or offset column; the message names the column.
        """
        if interval is not None:
            if self.model.family.survival:
                raise ValueError(
                    "interval= is for GLM families; for a Cox fit use refit() and its "
                    "conf_int(), or bootstrap() bands of the shapes."
                )
            boot = getattr(self, "bootstrap_", None)
            if boot is None:
                boot = self.bootstrap()
            return boot.predict(newdata, interval=interval, offset=offset, type=type,
                                missing=missing)  # fmt: skip
        if self.model.family.survival:
            return self._predict_survival(newdata, type, offset, missing, times)
        if times is not None:
            raise ValueError("times is only used with family='cox' and type='survival'.")
        if type not in ("response", "link"):
            raise ValueError(f"type must be 'response' or 'link'; got {type!r}.")
        return self._predict_base(newdata, type, offset, missing)

    def _predict_base(self, newdata, type, offset, missing):  # noqa: A002
        if newdata is not None and is_dask_collection(newdata):
            from ..distributed._dask_model import predict_dask

            check_predict_missing(missing)
            return predict_dask(self, newdata, type, offset, _new_design)
        if newdata is not None:
            return predict_complete(
                self.model.spec, newdata, offset, missing,
                lambda rows, off: self._predict(rows, type, off),
            )  # fmt: skip
        check_predict_missing(missing)
        return self._predict(None, type, offset)

    def _predict_survival(self, newdata, type, offset, missing, times):  # noqa: A002
        types = {"risk": "response", "response": "response", "linear": "link",
                 "link": "link", "survival": "link"}  # fmt: skip
        if type not in types:
            raise ValueError(
                f"type must be 'risk', 'linear' or 'survival' for family='cox'; got {type!r}."
            )
        if (times is None) == (type == "survival"):
            raise ValueError("times is required with type='survival' and only used there.")
        out = self._predict_base(newdata, types[type], offset, missing)
        if type != "survival":
            return out
        t = np.atleast_1d(np.asarray(times, dtype=np.float64))
        if t.ndim != 1 or not np.all(np.isfinite(t)) or np.any(t < 0):
            raise ValueError("times must be finite non-negative numbers.")
        m = self.model
        labels = np.full(out.shape[0], "", dtype=object)
        if m.spec.strata:
            if newdata is None:
                labels = m.strata
            else:
                from ..formula._formula import strata_labels

                labels = strata_labels(newdata, m.spec.strata)
        h0 = np.empty((out.shape[0], t.size))
        for label in np.unique(labels.astype(str)):
            if label not in self._baseline:
                raise ValueError(
                    f"stratum {str(label)!r} of {m.spec.strata} was not seen when the model was "
                    f"fitted; known strata: {sorted(self._baseline)[:10]}."
                )
            event_times, cumhaz = self._baseline[label]
            at = np.searchsorted(event_times, t, side="right")
            h0[labels.astype(str) == label] = np.concatenate([[0.0], cumhaz])[at]
        with np.errstate(invalid="ignore"):
            return np.exp(-np.exp(out)[:, None] * h0)

    @cached_property
    def _baseline(self) -> dict:
        m = self.model
        if m.survival is None:
            raise inconsistent("the model has no survival times")
        return _cox.breslow_baseline(
            m.survival[:, 0], m.survival[:, 1], self.linear_predictor, m.unit_weight,
            getattr(m, "strata", None),
        )

    def baseline_hazard(self) -> pd.DataFrame:
        """Breslow's baseline cumulative hazard H0(t) at the training event times.

        ``family="cox"`` only. H0 goes with :meth:`predict`'s ``type="linear"``
        (levels centred on the weighted average training row): S(t | x) = exp(−H0(t) e^η).

        Returns
        -------
        DataFrame
            Columns ``time``, ``cumhaz`` (H0) and ``survival`` (e^{−H0}, the baseline
            survival); with a ``strata()`` term first a ``stratum`` column (one baseline
            per stratum).
        """
        if not self.model.family.survival:
            raise ValueError("baseline_hazard() needs family='cox'.")
        frames = []
        for label, (times, cumhaz) in self._baseline.items():
            frame = pd.DataFrame({"time": times, "cumhaz": cumhaz, "survival": np.exp(-cumhaz)})
            if self.model.spec.strata:
                frame.insert(0, "stratum", label)
            frames.append(frame)
        return pd.concat(frames, ignore_index=True)

    @cached_property
    def concordance(self) -> float:
        """Harrell's C of η on the training rows (``family="cox"``; NaN otherwise).

        Pairs weighted by s_i s_j; ties in η count one half (lifelines' convention).
        """
        m = self.model
        if m.survival is None:
            return float("nan")
        return _cox.concordance_index(
            m.survival[:, 0], m.survival[:, 1], self.linear_predictor, m.unit_weight,
            getattr(m, "strata", None),
        )

    def _predict(self, newdata: Any, type: str, offset: Any) -> np.ndarray:  # noqa: A002
        m = self.model
        if not (
            np.all(np.isfinite(self.coef))
            and np.all(np.isfinite(self.dense_coef))
            and np.isfinite(self.intercept)
        ):
            raise inconsistent("the coefficients hold NaN or infinite values")
        if newdata is None:
            if offset is not None:
                raise ValueError("offset is only used together with newdata.")
            eta = self.linear_predictor
        else:
            design, off = _new_design(m, newdata, offset)
            eta = m.linear_predictor(self.coef, self.dense_coef, self.intercept, design, off)
        return eta if type == "link" else m.family.mean(eta)

    def _new_design(self, newdata: Any, offset: Any) -> tuple[Any, np.ndarray | None]:
        """The training recipe replayed on new rows: (design, total offset)."""
        return _new_design(self.model, newdata, offset)

    def augment(
        self,
        newdata: Any = None,
        type_predict: str = "link",
        type_residuals: str = "deviance",
        *,
        offset: Any = None,
        y: Any = None,
        missing: str | None = None,
    ) -> pd.DataFrame:
        """The data with the fit's predictions and residuals: broom's ``augment()``.

        Parameters
        ----------
        newdata : DataFrame, optional
            Rows to predict; by default the training rows (the columns of the data
            given to :func:`glm`, the rows kept by ``missing="drop"``; a pickled model
            does not keep them and gives the new columns alone).
        type_predict : {"link", "response"}, default="link"
            Scale of ``.fitted`` (broom's ``type.predict``; its default for a GLM is
            the link). For ``family="cox"``, η or the relative risk.
        type_residuals : {"deviance", "pearson", "response"}, default="deviance"
            Kind of ``.resid`` (broom's ``type.residuals``).
        offset : array-like, optional
            Offset of ``newdata``, as in :meth:`predict`.
        y : array-like or str, optional
            Observed response of ``newdata`` (values or a column name), for ``.resid``;
            by default the response column, when the formula's left-hand side is a
            column of ``newdata`` (a factor response: 1 for its event level).
        missing : {None, "nan", "error"}, optional
            As in :meth:`predict`.

        Returns
        -------
        DataFrame
            The data (a copy) plus ``.fitted`` and, when the response is known,
            ``.resid`` (none for ``family="cox"``). No ``.se.fit``: the penalised fit
            has no valid standard error (see :meth:`tidy`); use ``refit().augment``
            or ``bootstrap().augment`` for uncertainty.
        """
        self.model.require("augment()")
        from ._tidy import augment_results

        return augment_results(self, newdata, type_predict, type_residuals, offset, y, missing)
