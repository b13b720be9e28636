"""Prediction from a fitted estimator: one checked snapshot of its state, then η.

Every prediction reads one snapshot of the fitted state (``_fitted``), validated before
any kernel runs: a ``predict`` racing a ``fit`` in another thread uses the old model or
the new one, and a modified or foreign pickle raises a clear error instead of reading
out of bounds. ``_PredictMixin`` holds ``decision_function``, ``predict``,
``predict_survival`` and ``score``; a Dask X is predicted partition by partition
(``_map_dask``, a lazy Dask Series or Array).
"""

from __future__ import annotations

from numbers import Real
from typing import Any

import numpy as np

from ..core._base import NotFittedError, fitted_snapshot, inconsistent
from ..core._validation import (
    check_block_ptr,
    check_codes,
    check_offset,
    check_sample_weight,
    normalized_weights,
)
from ..design._binarizer import BinarizerCore
from ..design._design import BinnedDesign
from ..design._features import KINDS as FEATURE_KINDS
from ..design._features import LEVEL_KINDS, fitted_column
from ..distributed._dask import is_dask_collection
from ..families import _cox
from ..families._families import get_family
from ._estimator_input import _feature_codes, _strata_labels, _validate_X, response_y
from ._estimator_pairs import pair_eta


class _PartitionMethod:
    """An estimator's method applied to one partition (a picklable task function)."""

    def __init__(self, est: Any, method: str) -> None:
        self.est, self.method = est, method

    def __call__(self, part):
        out = getattr(self.est, self.method)(part)
        if hasattr(part, "index"):
            import pandas as pd

            return pd.Series(out, index=part.index, name=self.method)
        return out


def _map_dask(est: Any, method: str, X: Any, offset: Any, dtype: Any) -> Any:
    """``est.method(X)`` on a Dask X: a lazy Dask Series (DataFrame X) or Array, per block."""
    if offset is not None:
        raise TypeError(
            "offset: predictions on a Dask X take no offset values; add the offset to the "
            "result (η + offset) or predict partition by partition."
        )
    fn = _PartitionMethod(est, method)
    if hasattr(X, "map_partitions") and hasattr(X, "columns"):
        import pandas as pd

        return X.map_partitions(fn, meta=pd.Series(np.empty(0, dtype=dtype), name=method))
    if getattr(X, "ndim", 0) != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features); got {X.ndim}-D.")
    return X.rechunk({1: -1}).map_blocks(fn, drop_axis=1, dtype=dtype)


class _PredictMixin:
    """The fitted state's snapshot and every prediction of ``BinarsityGLM``."""


    def _check_fitted(self):
        if "coef_" not in vars(self):
            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet; call 'fit' first."
            )

    def _fitted(self) -> dict:
        """One snapshot of the fitted state, checked for consistency before any kernel.

        ``coef_``, ``intercept_``, ``block_ptr_``, ``binarizer_`` and the feature kinds
        are read once (the state of one ``fit``, see ``publish_fitted``; a value set by
        hand is taken too) and must agree: ``block_ptr_`` valid offsets with
        ``block_ptr_[-1] == len(coef_)``, one block per binned feature whose size is the
        binarizer's ``n_bins_`` and one per categorical feature sized by its levels,
        one ``linear_coef_`` per linear feature, finite coefficients. Returns the
        snapshot with ``coef_`` and ``block_ptr_`` as private contiguous arrays, the
        binarizer's validated state under ``"_bins"`` and the kinds under ``"_kinds"``.
        """
        self._check_fitted()
        st = fitted_snapshot(self)
        p = st.get("n_features_in_")
        # estimators pickled before the feature kinds existed bin every feature
        kinds = np.asarray(st.get("feature_kinds_", ["bin"] * int(p or 0)), dtype=object)
        if kinds.ndim != 1 or not set(kinds.tolist()) <= set(FEATURE_KINDS) or kinds.size != p:
            raise inconsistent(f"feature_kinds_ is not one of {FEATURE_KINDS} per feature")
        n_bin = int(np.sum(kinds == "bin"))
        binarizer, bins = st.get("binarizer_"), None
        if n_bin:
            if not isinstance(binarizer, BinarizerCore):
                raise inconsistent("binarizer_ is not a fitted Binarizer")
            try:
                bins = binarizer._fitted_state()
            except NotFittedError:
                raise inconsistent("binarizer_ is not fitted") from None
            if bins.p != n_bin:
                raise inconsistent(f"binarizer_ has {bins.p} features, not the {n_bin} binned")
        cats = st.get("categories_", [])
        cat_missing = np.asarray(st.get("categorical_missing_", []))
        n_cat = int(np.sum(np.isin(kinds, LEVEL_KINDS)))
        if len(cats) != n_cat or cat_missing.shape != (n_cat,):
            raise inconsistent(f"categories_ does not hold the {n_cat} categorical features")
        coef = np.asarray(st["coef_"])
        if coef.ndim != 1 or coef.dtype.kind not in "iuf":
            raise inconsistent(f"coef_ is not a 1-D array of numbers (shape {coef.shape})")
        coef = np.array(coef, dtype=np.float64, order="C", copy=True)
        linear = np.asarray(st.get("linear_coef_", np.empty(0)))
        n_lin = int(np.sum(kinds == "linear"))
        if linear.shape != (n_lin,) or linear.dtype.kind not in "iuf":
            raise inconsistent(f"linear_coef_ does not hold the {n_lin} linear features")
        linear = np.array(linear, dtype=np.float64)
        if not (np.all(np.isfinite(coef)) and np.all(np.isfinite(linear))):
            raise inconsistent("coef_ or linear_coef_ holds NaN or infinite values")
        try:
            ptr = check_block_ptr(st.get("block_ptr_"), n_blocks=n_bin + n_cat, name="block_ptr_")
        except (TypeError, ValueError) as exc:
            raise inconsistent(str(exc)) from None
        if ptr[-1] != coef.shape[0]:
            raise inconsistent(f"len(coef_) = {coef.shape[0]} but block_ptr_[-1] = {ptr[-1]}")
        by = st.get("by_")  # None: fitted before by-group features existed
        by_levels = st.get("by_levels_")
        if by is not None:
            by = np.asarray(by, dtype=object)
            if by.shape != (p,) or not isinstance(by_levels, list) or len(by_levels) != p:
                raise inconsistent("by_ or by_levels_ does not hold one entry per feature")
            for j in np.flatnonzero([v is not None for v in by]):
                g = fitted_column(st, by[j])
                if kinds[j] != "bin" or not 0 <= g < p or kinds[g] != "group":
                    raise inconsistent(f"by_ gives feature {j} the group column {by[j]!r}")
                if by_levels[j] is None or len(by_levels[j]) == 0:
                    raise inconsistent(f"by_levels_ has no levels for feature {j}")
        strata = st.get("strata_") or []
        if not isinstance(strata, list) or len(strata) != int(np.sum(kinds == "strata")):
            raise inconsistent("strata_ does not list the strata columns of feature_kinds_")
        for key in strata:
            if not 0 <= fitted_column(st, key) < p or kinds[fitted_column(st, key)] != "strata":
                raise inconsistent(f"strata_ names {key!r}, not a strata column")
        expect, b, c = [], 0, 0
        for j, kind in enumerate(kinds):
            if kind == "bin":
                n_groups = len(by_levels[j]) if by is not None and by[j] is not None else 1
                expect.append(int(bins.n_bins[b]) * n_groups)
                b += 1
            elif kind in LEVEL_KINDS:
                expect.append(len(cats[c]) + int(bool(cat_missing[c])))
                c += 1
        sizes = np.diff(ptr)
        if np.any(sizes != np.asarray(expect, dtype=np.intp)):
            raise inconsistent(
                f"the block sizes {sizes.tolist()} differ from the features' levels {expect} "
                "(the binarizer's n_bins_, the categories)"
            )
        b0 = st.get("intercept_")
        if isinstance(b0, bool) or not isinstance(b0, Real) or not np.isfinite(b0):
            raise inconsistent(f"intercept_ is {b0!r}, not a finite number")
        st.update(
            coef_=coef, linear_coef_=linear, block_ptr_=ptr, intercept_=float(b0), _bins=bins,
            _kinds=kinds, categories_=list(cats), categorical_missing_=cat_missing.astype(bool),
            _name=type(self).__name__,
        )  # fmt: skip
        return st

    def decision_function(self, X, offset=None) -> np.ndarray:
        """Linear predictor η = offset + β0 + Σ_j θ_j[code_ij].

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Features (columns matched by name when fitted on a DataFrame). A Dask
            DataFrame or Array gives a lazy Dask Series or Array (one task per block).
        offset : array-like of shape (n_samples,), optional
            Offset added to the linear predictor (not with a Dask X).

        Returns
        -------
        ndarray of shape (n_samples,)
            The linear predictor of each row.
        """
        if is_dask_collection(X):
            return _map_dask(self, "decision_function", X, offset, np.float64)
        return self._eta(self._fitted(), X, offset)

    @staticmethod
    def _eta(st: dict, X, offset) -> np.ndarray:
        """η on the validated snapshot ``st`` (see ``_fitted``)."""
        X, n = _validate_X(X, allow_empty=True)  # no rows: no predictions, as for a frame
        p = len(st["_kinds"])
        if not hasattr(X, "columns") and X.shape[1] != p:
            raise ValueError(
                f"X has {X.shape[1]} features, but {st['_name']} is expecting "
                f"{p} features as input."
            )
        codes, dense = _feature_codes(st, X, n)
        try:
            codes = check_codes(codes, st["block_ptr_"])
        except ValueError as exc:  # pragma: no cover - the fitted state is checked
            raise inconsistent(str(exc)) from None
        off = check_offset(offset, n)
        design = BinnedDesign.checked(codes, st["block_ptr_"], dense=dense, offset=off)
        eta = design.linear_predictor(st["coef_"], st["linear_coef_"], st["intercept_"])
        pairs = pair_eta(st, X, n)  # the pair terms of interactions= (None without)
        return eta if pairs is None else eta + pairs

    def predict(self, X, offset=None) -> np.ndarray:
        """Mean response b'(η) (for binomial: the probability of the event).

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Features.
        offset : array-like of shape (n_samples,), optional
            Offset added to the linear predictor.

        Returns
        -------
        ndarray of shape (n_samples,)
            The predicted mean response of each row.
        """
        if is_dask_collection(X):
            return _map_dask(self, "predict", X, offset, np.float64)
        return get_family(self.family).mean(self.decision_function(X, offset=offset))

    def predict_survival(self, X, times, offset=None) -> np.ndarray:
        """``family="cox"``: survival probabilities S(t | x) = exp(−H0(t) e^η).

        H0 is Breslow's baseline cumulative hazard on the training rows
        (``baseline_hazard_``), a step function of t; with ``strata``, each row's
        stratum's baseline (a stratum not seen in ``fit`` raises, naming it).

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Features.
        times : array-like of float
            Times at which S is evaluated (non-negative).
        offset : array-like of shape (n_samples,), optional
            Offset added to the linear predictor.

        Returns
        -------
        ndarray of shape (n_samples, len(times))
            S(t | x) of every row (rows) at every time (columns).
        """
        if not get_family(self.family).survival:
            raise ValueError("predict_survival needs family='cox'.")
        self._check_fitted()
        t = np.atleast_1d(np.asarray(times, dtype=np.float64))
        if t.ndim != 1 or not np.all(np.isfinite(t)) or np.any(t < 0):
            raise ValueError("times must be finite non-negative numbers.")
        risk = np.exp(self.decision_function(X, offset=offset))
        base = self.baseline_hazard_
        labels = self._strata_of(X)
        if labels is None:
            base, labels = {"": base}, np.full(risk.shape[0], "", dtype=object)
        h0 = np.empty((risk.shape[0], t.size))
        for label in np.unique(labels):
            if label not in base:
                raise ValueError(
                    f"stratum {str(label)!r} (strata={self.strata_!r}) was not seen when the "
                    f"model was fitted; known strata: {sorted(base)[:10]}."
                )
            event_times, cumhaz = base[label]
            at = np.searchsorted(event_times, t, side="right")
            h0[labels == label] = np.concatenate([[0.0], cumhaz])[at]
        return np.exp(-risk[:, None] * h0)

    def _strata_of(self, X) -> np.ndarray | None:
        """The stratum label of every row of X (None without strata)."""
        st = self._fitted()
        if not st.get("strata_"):
            return None
        X, _ = _validate_X(X, allow_empty=True)
        names = st.get("feature_names_in_")
        if not hasattr(X, "columns") and X.shape[1] != len(st["_kinds"]):
            raise ValueError(
                f"X has {X.shape[1]} features, but {st['_name']} is expecting "
                f"{len(st['_kinds'])} features as input."
            )
        return _strata_labels(X, [fitted_column(st, c) for c in st["strata_"]], names)

    def score(self, X, y, sample_weight=None, offset=None) -> float:
        """Fraction of deviance explained, D² = 1 − D(y, μ̂) / D(y, ȳ).

        For the gaussian family this is R². (``BinarsityGLM`` serves every family, so
        it scores by deviance, as scikit-learn's GLMs do.) With ``family="cox"``:
        Harrell's C of the linear predictor (scikit-survival's score; with ``strata``,
        pairs across strata are not compared, as the formula results' concordance).

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Features.
        y : array-like of shape (n_samples,)
            Response.
        sample_weight : array-like of shape (n_samples,), optional
            Row weights.
        offset : array-like of shape (n_samples,), optional
            Offset of the linear predictor.

        Returns
        -------
        float
            D² on the given rows (1 is a perfect fit, 0 the intercept-only model).
        """
        family = get_family(self.family)
        X, n = _validate_X(X)
        y, extra = response_y(family, y, n)  # the regression y, even for a classifier
        sw = check_sample_weight(sample_weight, n)
        sw = np.ones(n) if sw is None else normalized_weights(sw)[0]
        if family.survival:  # Harrell's C, scikit-survival's score
            eta = self.decision_function(X, offset=offset)
            return _cox.concordance_index(*extra["_survival"], eta, sw, self._strata_of(X))
        mu = self.predict(X, offset=offset)
        dev = family.deviance(y, mu, sw)
        null = family.deviance(y, np.full(n, np.average(y, weights=sw)), sw)
        return float(1.0 - dev / null) if null > 0 else float(dev == 0)
