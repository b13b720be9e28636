"""Suite ``paper``: the paper's real-data protocol (its Table 5 / Figure 5).

For Adult, Bank and Churn (continuous features only, :func:`benchmarks._data.load_real`):
33 % stratified test split with ``random_state=0``; hyper-parameters tuned by
stratified K-fold CV on the training part (K = 10, ``--quick``: 3) maximising AUC;
refit on the whole training part; test AUC and the training time of that refit (the
median of ``--repeats`` runs, default 3; the CV itself is timed once). Models:

* binarsity, ours: ``BinarsityGLM(family="binomial", n_bins=50)``, λ on a grid, with
  ``penalty_weights="theory"`` (the paper's weighted penalty) and ``"uniform"`` (tick's);
* binarsity, ours, as a user runs it: ``glm("y ~ bin(x0, 50) + ...").fit_cv(folds=K)``
  (50-λ path, deviance, early stopping), timed end to end with the CV - the time
  issue 3 compares with EBM's (at most half; with ``--quick`` EBM has 2 bags only);
* binarsity, tick: ``FeaturesBinarizer(n_cuts=49)`` + ``LogisticRegression(
  penalty="binarsity", C=1/λ)`` (SVRG defaults), same λ grid;
* lasso, skglm: ``SparseLogisticRegression(alpha=λ)`` on the one-hot of our 50 bins;
* group lasso, skglm: ``GroupProxNewton`` on ``LogisticGroup`` + ``WeightedGroupL2``
  (weights sqrt(group size)) on the one-hot without each block's first column (the
  full one-hot is collinear with the intercept and stalls the solver). It is slow, so
  it is tuned by 3-fold CV on 4 values of λ (``--quick``: fixed λ = 1e-4);
* pyGAM ``LogisticGAM`` with one spline per feature, λ by ``gridsearch`` (UBRE) over
  7 values (``--quick``: its default λ only);
* EBM main effects: ``ExplainableBoostingClassifier(interactions=0)``, defaults
  (``--quick``: 2 outer bags instead of 14);
* LightGBM ``LGBMClassifier(n_jobs=os.cpu_count())`` (its default n_jobs=-1 lets
  OpenMP oversubscribe a small VM, 20× slower here) and scikit-learn
  ``RandomForestClassifier()``: otherwise defaults.

skglm's numba kernels are compiled on a tiny problem first, so no time includes the
JIT. The paper's published binarsity AUCs are printed beside ours.
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Callable

import numpy as np

from ._common import SuiteOutput, median_time, new_figure, save_figure
from ._data import PAPER_AUC, load_real
from ._ours import codes_layout, fit_ours, has_estimator, make_binarizer
from ._tick import fit_tick, onehot_csr, tick_binarize

N_BINS = 50
DATASETS = ("adult", "bank", "churn")


def _auc(y, score) -> float:
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(y, score))


def tune(
    fit: Callable,
    score: Callable,
    grid,
    X,
    y,
    n_splits: int,
) -> tuple[object, float, float]:
    """Pick the grid value with the best mean CV AUC.

    Parameters
    ----------
    fit : callable
        ``fit(X, y, value)`` returns a fitted model.
    score : callable
        ``score(model, X)`` returns scores whose order is that of P(y = 1).
    grid : sequence
        Hyper-parameter values.
    X, y : ndarray
        Training data.
    n_splits : int
        Folds of the stratified K-fold (shuffled, ``random_state=0``).

    Returns
    -------
    best : object
        Selected value.
    cv_auc : float
        Its mean CV AUC.
    cv_seconds : float
        Time spent in the CV.
    """
    from sklearn.model_selection import StratifiedKFold

    t0 = time.perf_counter()
    folds = list(StratifiedKFold(n_splits, shuffle=True, random_state=0).split(X, y))
    means = []
    for value in grid:
        aucs = [_auc(y[te], score(fit(X[tr], y[tr], value), X[te])) for tr, te in folds]
        means.append(np.mean(aucs))
    best = int(np.argmax(means))
    return grid[best], float(means[best]), time.perf_counter() - t0


# --- the models: each returns (fit(X, y, value), score(model, X), grid) --------------


def _ours(weights: str, grid):
    def fit(X, y, lam):
        return fit_ours(X, y, family="binomial", lam=lam, n_bins=N_BINS, penalty_weights=weights)

    return fit, lambda m, X: m.decision_function(X), grid


OURS_CV = "binarsity, ours: glm().fit_cv (time incl. CV)"


def _frame(X, columns):
    import pandas as pd

    return pd.DataFrame(
        np.asarray(X, dtype=np.float64), columns=[f"x{i}" for i in range(len(columns))]
    )


def _ours_cv(X, y, columns, n_splits):
    """What a user runs: the formula interface, a 50-λ path, K-fold CV on deviance.

    The time includes the binning, the CV over the whole path (folds in lockstep with
    early stopping, the default) and the refit at ``lam_min`` on all training rows.
    """
    from binarsity_stats import glm

    frame = _frame(X, columns)
    frame["y"] = np.asarray(y, dtype=np.float64)
    formula = "y ~ " + " + ".join(f"bin(x{i}, {N_BINS})" for i in range(len(columns)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cv = glm(formula, frame, family="binomial").fit_cv(folds=n_splits, random_state=0)
    best = cv.best_
    best.n_lambdas_evaluated = len(cv.lams)
    return best


def _tick(grid):
    class Model:
        def __init__(self, X, y, lam):
            self.binarized = tick_binarize(X, N_BINS)
            self.fb = self.binarized.binarizer
            self.fit = fit_tick(self.binarized.X_onehot, y, self.binarized.block_ptr, lam)

        def score(self, X):
            # tick one-hot encodes columns with <= 15 distinct values as categories and
            # its encoder fails on a value unseen in training: score such rows at the
            # block's baseline (all-zero block) instead.
            self.fb.one_hot_encoder.set_params(handle_unknown="ignore")
            return self.fb.transform(X) @ self.fit.coef + self.fit.intercept

    return (lambda X, y, lam: Model(X, y, lam)), (lambda m, X: m.score(X)), grid


class _OneHot:
    """Our bins as a one-hot CSR (optionally without each block's first column)."""

    def __init__(self, X, drop_first: bool = False):
        self.binarizer, _ = make_binarizer(N_BINS)
        self.binarizer.fit(X)
        self.drop_first = drop_first

    def __call__(self, X):
        codes, block_ptr = codes_layout(self.binarizer.transform(X), self.binarizer.n_bins_)
        Xo = onehot_csr(codes, block_ptr)
        if self.drop_first:
            keep = np.setdiff1d(np.arange(block_ptr[-1]), block_ptr[:-1])
            return Xo[:, keep], block_ptr
        return Xo, block_ptr


def _lasso(grid):
    from skglm import SparseLogisticRegression

    def fit(X, y, lam):
        enc = _OneHot(X)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = SparseLogisticRegression(alpha=lam).fit(enc(X)[0], y)
        return enc, model

    return fit, lambda m, X: m[1].decision_function(m[0](X)[0]), grid


def _group_lasso(grid):
    from skglm import GeneralizedLinearEstimator
    from skglm.datafits import LogisticGroup
    from skglm.penalties import WeightedGroupL2
    from skglm.solvers import GroupProxNewton

    def fit(X, y, lam):
        enc = _OneHot(X, drop_first=True)
        Xd, block_ptr = enc(X)
        sizes = np.diff(block_ptr) - 1
        grp_ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int32)
        grp_idx = np.arange(grp_ptr[-1], dtype=np.int32)
        model = GeneralizedLinearEstimator(
            LogisticGroup(grp_ptr, grp_idx),
            WeightedGroupL2(lam, np.sqrt(np.maximum(sizes, 1.0)), grp_ptr, grp_idx),
            GroupProxNewton(fit_intercept=True, tol=1e-4),
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(np.asfortranarray(Xd.toarray()), 2 * y - 1)
        return enc, model

    def score(m, X):
        enc, model = m
        return enc(X)[0] @ np.ravel(model.coef_) + model.intercept_

    return fit, score, grid


def _gam(X, y, quick):
    from pygam import LogisticGAM, s

    terms = s(0)
    for j in range(1, X.shape[1]):
        terms = terms + s(j)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if quick:  # pyGAM is slow (minutes per data set): its default λ = 0.6 only
            return LogisticGAM(terms).fit(X, y)
        return LogisticGAM(terms).gridsearch(X, y, lam=np.logspace(-3, 3, 7), progress=False)


def _default_models(quick: bool):
    from interpret.glassbox import ExplainableBoostingClassifier
    from lightgbm import LGBMClassifier
    from sklearn.ensemble import RandomForestClassifier

    # EBM's default 14 outer bags take minutes here; --quick uses 2
    bags = {"outer_bags": 2} if quick else {}
    return {
        "EBM main effects (interpret)": lambda: ExplainableBoostingClassifier(
            interactions=0, random_state=0, **bags
        ),
        "LightGBM (defaults)": lambda: LGBMClassifier(
            verbose=-1, random_state=0, n_jobs=os.cpu_count()
        ),
        "random forest (sklearn defaults)": lambda: RandomForestClassifier(random_state=0),
    }


def _warm_up() -> None:
    """Compile skglm's numba kernels on a tiny problem so no timing includes the JIT."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = (rng.random(200) < 0.5).astype(float)
    for make in (_lasso, _group_lasso):
        fit, _, _ = make([1e-2])
        fit(X, y, 1e-2)


def run(
    out: SuiteOutput,
    quick: bool,
    data_dir,
    only: set[str] | None = None,
    repeats: int = 3,
    **_: object,
) -> None:
    """Run the suite and fill ``out``.

    Parameters
    ----------
    out : SuiteOutput
        Collector of the rows.
    quick : bool
        3-fold CV, shorter grids, group lasso at a fixed λ.
    data_dir : Path
        Folder with adult.csv, bank.csv and churn.csv.
    only : set of str, optional
        Subset of the data sets to run.
    repeats : int, default=3
        Timed runs of every final fit (the median is reported).
    """
    from sklearn.model_selection import train_test_split

    ours_ok = has_estimator()
    if not ours_ok:
        out.note("binarsity_stats.BinarsityGLM is missing: its rows are left out")
    n_splits = 3 if quick else 10
    _warm_up()
    grid = list(np.logspace(-5, -1.5, 4 if quick else 8))
    for name in (d for d in DATASETS if only is None or d in only):
        X, y, columns = load_real(name, data_dir)
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.33, stratify=y, random_state=0)
        print(f"  {name}: train {Xtr.shape}, test {Xte.shape}", flush=True)
        tuned = []
        scores: dict[str, np.ndarray] = {}  # test scores, for paired bootstrap CIs
        if ours_ok:
            tuned += [
                ("binarsity, ours (theory weights)", _ours("theory", grid), n_splits),
                ("binarsity, ours (uniform weights)", _ours("uniform", grid), n_splits),
            ]
        tuned += [
            ("binarsity, tick", _tick(grid), n_splits),
            ("lasso on bins (skglm)", _lasso(grid), n_splits),
        ]
        gl_grid = [1e-4] if quick else list(np.logspace(-4, -1.5, 4))
        tuned.append(("group lasso on bins (skglm)", _group_lasso(gl_grid), 3))
        for label, (fit, score, values), k in tuned:
            if len(values) > 1:
                best, cv_auc, cv_s = tune(fit, score, values, Xtr, ytr, k)
            else:
                best, cv_auc, cv_s = values[0], float("nan"), 0.0
            model, train_s, _ = median_time(
                lambda fit=fit, best=best, Xtr=Xtr, ytr=ytr: fit(Xtr, ytr, best), repeats
            )
            scores[label] = np.asarray(score(model, Xte), dtype=np.float64)
            _row(out, name, label, _auc(yte, scores[label]), train_s, cv_s, best, cv_auc)
        if ours_ok:
            res, train_s, _ = median_time(
                lambda Xtr=Xtr, ytr=ytr, cols=columns: _ours_cv(Xtr, ytr, cols, n_splits),
                repeats,
            )
            scores[OURS_CV] = np.asarray(res.predict(_frame(Xte, columns), type="link"))
            auc = _auc(yte, scores[OURS_CV])
            hyper = f"lam_min={res.lam:.3g} of {res.n_lambdas_evaluated} λ"
            _row(out, name, OURS_CV, auc, train_s, float("nan"), hyper)
        gam, train_s, _ = median_time(lambda Xtr=Xtr, ytr=ytr: _gam(Xtr, ytr, quick), repeats)
        auc = _auc(yte, gam.predict_proba(Xte))
        hyper = "λ=0.6 (default)" if quick else f"gridsearch λ={np.ravel(gam.lam)[0]:.3g}"
        _row(out, name, "LogisticGAM (pygam)", auc, train_s, float("nan"), hyper)
        for label, make in _default_models(quick).items():
            model, train_s, _ = median_time(
                lambda make=make, Xtr=Xtr, ytr=ytr: make().fit(Xtr, ytr), repeats
            )
            scores[label] = model.predict_proba(Xte)[:, 1]
            _row(out, name, label, _auc(yte, scores[label]), train_s, float("nan"), "defaults")
        _targets(out, name, yte, scores, quick)
    _figure(out)
    out.write(["data", "model", "test_auc", "paper_auc", "train_s", "cv_s", "hyper", "cv_auc"])


def _row(out, name, label, auc, train_s, cv_s, hyper, cv_auc=float("nan")) -> None:
    row = out.add(
        data=name,
        model=label,
        test_auc=auc,
        paper_auc=PAPER_AUC[name] if label.startswith("binarsity") else float("nan"),
        train_s=train_s,
        cv_s=cv_s,
        hyper=hyper if isinstance(hyper, str) else f"{hyper:.3g}",
        cv_auc=cv_auc,
    )
    print(f"    {label}: AUC {auc:.4f}, {train_s:.2f} s", flush=True)
    return row


def paired_auc_ci(y, score_a, score_b, n_boot: int = 2000, seed: int = 0):
    """AUC(a) − AUC(b) on the same test rows and its paired bootstrap 95% interval.

    Rows are resampled with replacement (multinomial weights, the same for both
    models), so the interval accounts for the test set's own sampling noise - which
    is what a difference of a few thousandths in test AUC has to be compared with.

    Returns
    -------
    diff, lo, hi : float
        The observed difference and the 2.5% / 97.5% bootstrap quantiles.
    """
    from binarsity_stats.model._model import weighted_auc

    y = np.asarray(y, dtype=np.float64)
    rng = np.random.default_rng(seed)
    ones = np.ones_like(y)
    diff = weighted_auc(y, score_a, ones) - weighted_auc(y, score_b, ones)
    boots = np.empty(n_boot)
    for b in range(n_boot):
        w = rng.multinomial(y.size, np.full(y.size, 1.0 / y.size)).astype(np.float64)
        boots[b] = weighted_auc(y, score_a, w) - weighted_auc(y, score_b, w)
    lo, hi = np.nanquantile(boots, [0.025, 0.975])
    return float(diff), float(lo), float(hi)


def _targets(out: SuiteOutput, name: str, y_test=None, scores=None, quick: bool = False) -> None:
    rows = {r["model"]: r for r in out.rows if r["data"] == name}
    ours = rows.get("binarsity, ours (theory weights)")
    if ours is None:
        return
    tick = rows["binarsity, tick"]
    ebm = rows["EBM main effects (interpret)"]
    lgb = rows["LightGBM (defaults)"]
    cv = rows.get(OURS_CV)
    if cv is not None:
        ratio = ebm["train_s"] / cv["train_s"]
        out.note(
            f"{name}: glm().fit_cv AUC {cv['test_auc']:.4f} vs EBM {ebm['test_auc']:.4f} "
            f"(gap {ebm['test_auc'] - cv['test_auc']:+.4f}); time incl. CV "
            f"{cv['train_s']:.2f} s vs EBM {ebm['train_s']:.2f} s: {ratio:.1f}x faster "
            + (
                "(--quick: EBM has 2 outer bags, not its defaults; issue 3's bar of >= 2x "
                "is judged by the full run)"
                if quick
                else f"({'met' if ratio >= 2 else 'NOT met'}: issue 3 asks for >= 2x EBM "
                "with defaults)"
            )
        )
    a, t, e = ours["test_auc"], tick["test_auc"], ebm["test_auc"]
    out.note(
        f"{name}: AUC ours {a:.4f} vs tick {t:.4f} ({'met' if a >= t else 'NOT met'}), "
        f"vs EBM {e:.4f}: gap {e - a:+.4f} ({'met' if a >= e - 0.005 else 'NOT met'}); "
        f"single-λ fit {ours['train_s']:.3f} s vs LightGBM {lgb['train_s']:.3f} s "
        f"({'met' if ours['train_s'] < lgb['train_s'] else 'NOT met'})"
    )
    if scores is None:
        return
    a_label = "binarsity, ours (theory weights)"
    for other in ("binarsity, tick", "EBM main effects (interpret)",
                  "binarsity, ours (uniform weights)"):  # fmt: skip
        if a_label in scores and other in scores:
            diff, lo, hi = paired_auc_ci(y_test, scores[a_label], scores[other])
            out.note(
                f"{name}: test AUC of ours (theory weights) minus {other}: {diff:+.4f}, "
                f"paired bootstrap 95% CI [{lo:+.4f}, {hi:+.4f}] (2000 resamples)"
            )


def _figure(out: SuiteOutput) -> None:
    names = [d for d in DATASETS if any(r["data"] == d for r in out.rows)]
    fig, axes = new_figure(ncols=len(names), width=5.0, height=5.0)
    for ax, name in zip(axes, names, strict=True):
        rows = [r for r in out.rows if r["data"] == name]
        ax.barh([r["model"] for r in rows], [r["test_auc"] for r in rows], color="C0")
        ax.axvline(PAPER_AUC[name], color="k", ls=":", label="paper (tick binarsity)")
        lo = min(r["test_auc"] for r in rows)
        ax.set_xlim(max(0.5, lo - 0.03), 1.0)
        ax.set_title(name)
        ax.set_xlabel("test AUC")
        ax.legend(loc="lower right", fontsize=7)
    save_figure(fig, out.figure_path("auc"), out.machine_line())
