"""Inspection of a fitted estimator: its cut points, description and results.

``_InspectMixin`` holds what a statistician reads of a fit: ``cut_points`` and
``to_spec`` from the fitted state alone, and the formula layer's results on the training
data (``results``: ``_estimator_results``; ``summary``, ``shape_functions``,
``plot_shapes``, ``report``, ``bootstrap`` through it). The formula layer is imported
only when a results object is asked for.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core._statistics import jump_tolerance
from ..design._features import BLOCK_KINDS, fitted_column
from ..families._families import get_family
from ._estimator_input import _validate_X
from ._estimator_pairs import refuse_pairs


class _InspectMixin:
    """Cut points, the model description and the formula layer's results of a fit."""


    def cut_points(self):
        """The selected cut points: the bin edges where a binned feature's level jumps.

        Returns
        -------
        DataFrame
            One row per jump: ``feature`` (the column name, or ``x0``, ``x1``, … when
            fitted on an array), ``cut`` (x ≤ cut is left of the jump) and ``jump``
            (θ_right − θ_left on the link scale), and ``shape`` (``"increasing"``,
            ``"decreasing"``, ``"free"``) when a feature is monotone, and ``level`` (the
            level of the group column whose chain jumps) when a feature has ``by``. The
            formula results' table (interval labels, bootstrap frequencies) is
            ``results(X, y).cut_points()``.
        """
        import pandas as pd

        refuse_pairs(self, "cut_points()")
        st = self._fitted()
        names = st.get("feature_names_in_")
        ptr, coef, bins = st["block_ptr_"], st["coef_"], st["_bins"]
        shapes = st.get("monotone_")  # None: fitted before monotone features existed
        by, by_levels = st.get("by_"), st.get("by_levels_")
        unit = float(st.get("_eta_unit_", 1.0))  # 1: fitted before the unit was kept
        rows, k, b = [], 0, 0
        for j, kind in enumerate(st["_kinds"]):
            if kind not in BLOCK_KINDS:
                continue
            if kind == "bin":
                edges = np.asarray(bins.edges[b])
                d = int(bins.n_bins[b])
                levels = [None] if by is None or by[j] is None else list(by_levels[j])
                label = str(names[j]) if names is not None else f"x{j}"
                shape = shapes[j] if shapes is not None else None
                # a kept cut: the one jump tolerance (``_statistics``) of the block
                tau = jump_tolerance(coef[int(ptr[k]) : int(ptr[k + 1])], unit)
                for i, level in enumerate(levels):  # one chain per level of a by= group
                    lev = coef[int(ptr[k]) + i * d : int(ptr[k]) + i * d + len(edges) + 1]
                    for e in np.flatnonzero(np.abs(np.diff(lev)) > tau):
                        rows.append((label, float(edges[e]), float(lev[e + 1] - lev[e]),
                                     shape or "free", level))  # fmt: skip
                b += 1
            k += 1
        out = pd.DataFrame(rows, columns=["feature", "cut", "jump", "shape", "level"])
        if by is None or all(v is None for v in by):
            out = out.drop(columns="level")
        # the shape column only when a feature is monotone (as the formula results')
        return out if shapes is not None and any(shapes) else out.drop(columns="shape")

    # -- the formula layer's results ---------------------------------------------------
    def results(self, X, y, sample_weight=None, offset=None) -> Any:
        """The formula layer's results object of this fit, on its training data.

        The estimator keeps no training rows (its pickle does not grow with them), so
        the statistics that need them — deviance, df, residuals, the summary, the
        labels of bins holding one value, bootstraps — are computed on the data given
        here, which must be the data of ``fit``. The model is built on this
        estimator's own blocks (its cut points, levels, family, weights and penalty
        weights; no formula is written and nothing is binned again), with its terms
        labelled as ``glm()`` labels them (``bin(x)``, ``C(g)`` for a categorical
        feature, ``z`` for a linear one), and its solution is this estimator's: every
        table and plot is that of the formula naming the features in column order,
        number for number.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            The training features.
        y : array-like of shape (n_samples,)
            The training response (class labels for the classifier).
        sample_weight : array-like of shape (n_samples,), optional
            The training weights.
        offset : array-like of shape (n_samples,), optional
            The training offset.

        Returns
        -------
        BinarsityResults
            With ``summary()``, ``cut_points()``, ``shape_functions()``,
            ``plot_shapes()``, ``bootstrap()``, ``refit()``, ``to_spec()``...

        Raises
        ------
        ValueError
            When the data are not those of ``fit``: the (weighted) rows in a feature's
            bins or levels differ from the fitted counts, or the fitted solution's
            objective on them differs from ``objective_``.
        """
        from ._estimator_results import estimator_results

        refuse_pairs(self, "results()")
        st = self._fitted()
        X, n = _validate_X(X)
        return estimator_results(self, st, X, n, y, sample_weight, offset)

    def summary(self, X, y, sample_weight=None, offset=None, **kwargs) -> Any:
        """The statsmodels-style summary of the fit, as ``glm()`` results print it.

        Parameters
        ----------
        X, y, sample_weight, offset
            The training data (see :meth:`results`).
        **kwargs
            Options of ``BinarsityResults.summary`` (``precision``, ``sort``).

        Returns
        -------
        Summary
            ``print(est.summary(X, y))``; ``as_text()``, ``as_html()``, ``as_latex()``,
            ``tables``.
        """
        return self.results(X, y, sample_weight, offset).summary(**kwargs)

    def shape_functions(self, X, y, sample_weight=None, offset=None, **kwargs) -> Any:
        """The fitted step function of every binned and categorical feature.

        Parameters
        ----------
        X, y, sample_weight, offset
            The training data (see :meth:`results`).
        **kwargs
            Options of ``BinarsityResults.shape_functions`` (``merge``, ``precision``).

        Returns
        -------
        DataFrame
            ``term``, ``label``, ``low``, ``high``, ``level``, ``count``.
        """
        return self.results(X, y, sample_weight, offset).shape_functions(**kwargs)

    def plot_shapes(self, X, y, sample_weight=None, offset=None, **kwargs) -> Any:
        """Shape plot of every feature, as ``BinarsityResults.plot_shapes`` draws it.

        Parameters
        ----------
        X, y, sample_weight, offset
            The training data (see :meth:`results`).
        **kwargs
            Options of ``BinarsityResults.plot_shapes`` (``terms``, ``scale``, ...).

        Returns
        -------
        matplotlib.figure.Figure
            The figure drawn on.
        """
        return self.results(X, y, sample_weight, offset).plot_shapes(**kwargs)

    def report(
        self, X, y, path=None, sample_weight=None, offset=None, *, new=None, new_y=None,
        new_offset=None, **kwargs,
    ) -> Any:  # fmt: skip
        """The self-contained HTML report of the fit (``BinarsityResults.report``).

        For a report with bootstrap bands and cut-point frequencies, bootstrap the
        results first: ``res = est.results(X, y); res.bootstrap(); res.report(path)``.

        Parameters
        ----------
        X, y, sample_weight, offset
            The training data (see :meth:`results`).
        path : str or path-like, optional
            File to write; the page is returned as a string when omitted.
        new : DataFrame or array-like, optional
            Held-out rows for the calibration section (as ``X``; column names of
            ``feature_names_in_``, or ``x0``, ``x1``, ... for an estimator fitted on an
            array).
        new_y : array-like, optional
            The observed response of ``new`` (class labels for the classifier).
        new_offset : array-like, optional
            The offset of ``new``.
        **kwargs
            Other options of ``BinarsityResults.report`` (``title``, ``scale``,
            ``level``, ``bins``, ``precision``).

        Returns
        -------
        str or path-like
            ``path`` as given, or the HTML page when ``path`` is None.
        """
        from ._estimator_results import new_frame

        res = self.results(X, y, sample_weight, offset)
        if new is not None:
            new, n_new = _validate_X(new)
            new, new_y = new_frame(self, self._fitted(), new, n_new, new_y)
        return res.report(path, new, new_y, offset=new_offset, **kwargs)

    def bootstrap(self, X, y, sample_weight=None, offset=None, **kwargs) -> Any:
        """The bootstrap of the fit on its own bins (``BinarsityResults.bootstrap``).

        Parameters
        ----------
        X, y, sample_weight, offset
            The training data (see :meth:`results`).
        **kwargs
            Options of ``BinarsityResults.bootstrap`` (``n_boot``, ``random_state``,
            ``n_jobs``, ``groups``, ...).

        Returns
        -------
        BootstrapResults
            ``shape_bands()``, ``cut_frequencies()``, ``predict(new, interval=)``,
            ``plot_shapes(bands=True)``; ``boot.results`` has the cut-point
            frequencies in its ``cut_points()`` and summary.
        """
        return self.results(X, y, sample_weight, offset).bootstrap(**kwargs)

    def to_spec(self) -> dict:
        """A versioned, JSON-serialisable description of the fitted model.

        One term per feature: ``bin`` (cut points, right-closed; missing level; θ),
        ``categorical`` (levels, missing level, θ) or ``linear`` (coefficient), whose
        column is the feature name, or its position when fitted on an array; the
        intercept, family and link, a classifier's classes and the package version —
        the same document as ``BinarsityResults.to_spec`` (see
        ``binarsity_stats.design._spec``). ``binarsity_stats.from_spec`` rebuilds a model
        predicting bit for bit the same.

        Returns
        -------
        dict
            Plain JSON values.
        """
        refuse_pairs(self, "to_spec()")
        st = self._fitted()  # one consistent snapshot, as predict reads
        from ..design._spec import bin_term, column_input, json_value, make_spec

        bins, ptr, coef, kinds = st["_bins"], st["block_ptr_"], st["coef_"], st["_kinds"]
        names = st.get("feature_names_in_")
        pw = np.asarray(st.get("penalty_weights_", ()))
        shapes = st.get("monotone_")  # None: fitted before monotone features existed
        by = st.get("by_")
        terms, linear = [], []
        k = b = c = 0
        for j, kind in enumerate(kinds):
            col = json_value(names[j]) if names is not None else j
            label = str(col) if names is not None else f"x{j}"
            if kind not in BLOCK_KINDS and kind != "linear":  # a by= group or strata column
                continue
            if kind == "linear":
                linear.append({"kind": "linear", "name": label, "factors": [column_input(col)],
                               "coef": float(st["linear_coef_"][len(linear)])})  # fmt: skip
                continue
            s, e = int(ptr[k]), int(ptr[k + 1])
            k += 1
            if kind == "bin":
                shape = shapes[j] if shapes is not None else None
                terms.append(bin_term(label, column_input(col), col, bins.edges[b], bins.has_missing[b],
                                      coef[s:e], penalty=shape or "tv"))  # fmt: skip
                if by is not None and by[j] is not None:  # bin(x):C(g), as the formula's
                    g = fitted_column(st, by[j])
                    gcol = json_value(names[g]) if names is not None else g
                    glabel = str(gcol) if names is not None else f"x{g}"
                    terms[-1]["name"] = f"{label}:C({glabel})"
                    terms[-1]["by"] = {"column": gcol, "main": False,
                                       "levels": [json_value(v) for v in st["by_levels_"][j]]}
                b += 1
                continue
            chain = pw.size == ptr[-1] and bool(np.any(pw[s + 1 : e] > 0))
            shape = (shapes[j] if shapes is not None else None) or "tv"  # ordered factors
            terms.append(
                {"kind": "categorical", "name": label, "column": col,
                 "levels": [json_value(v) for v in st["categories_"][c]],
                 "missing_level": bool(st["categorical_missing_"][c]), "unseen": "error",
                 "penalty": shape if chain else "free", "theta": [float(v) for v in coef[s:e]]}
            )  # fmt: skip
            c += 1
        response = {}
        if "classes_" in st:
            response["classes"] = [json_value(c) for c in st["classes_"]]
        return make_spec(
            source=type(self).__name__, family=get_family(self.family),
            intercept=st["intercept_"], fit_intercept=bool(self.fit_intercept),
            terms=terms + linear, lam=float(st["lam_"] if "lam_" in st else self.lam),
            response=response,
            penalty={"weights": pw if isinstance(pw := self.penalty_weights, str) else "array"},
            kinds=st.get("column_kinds_"),
        )  # fmt: skip
