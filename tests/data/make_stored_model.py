"""Write the stored fitted models that ``tests/test_persistence.py`` loads.

Run once per release whose fitted objects should stay loadable, from the repository
root, after building the extensions in place (``python setup.py build_ext --inplace``)::

    python tests/data/make_stored_model.py

It writes, for the installed ``binarsity_stats.__version__`` (say 0.1.0):

* ``stored_model_v0.1.0.pkl`` — a pickle (protocol 4) of a dict holding fitted objects
  of this version: a ``BinarsityGLM`` (binomial, weights, offset, a missing level),
  a ``BinarsityClassifier`` (text labels), a ``Binarizer``, and ``glm()`` results
  (poisson with ``bin()``, ``C()``, a numeric term and ``offset(log(exposure))``);
  plus the new data and the predictions each object made on it when it was stored.
* ``stored_model_v0.1.0.json`` — the same models in a version-independent form:
  plain numbers and strings only (cut points, levels, coefficients, intercept,
  family), the new data and the stored predictions. Predicting from it needs
  nothing but the documented rules (``code = searchsorted(edges, x, side="left")``,
  the missing level last, η = offset + β0 + Σ θ_j[code] + Zβ, mean = b'(η)), which the
  test re-implements in NumPy. It is the format to migrate from if a later version
  can no longer unpickle an old file.

  Since ``FORMAT_VERSION`` 2 each model of the JSON file is the package's own model
  description, ``to_spec()`` (``binarsity_stats.design._spec``), which ``from_spec()`` reads
  back; :func:`upgrade_v1` turns the models of a version-1 file (v0.1.0) into such
  descriptions, so the stored v0.1.0 models load through ``from_spec`` too.

Never regenerate an existing file to make a failing load test pass: a failure means
that a model saved by an earlier version no longer loads or no longer predicts the
same, which is what the test is there to catch. Fix the loader (e.g. a
``__setstate__`` that upgrades old state) or state the break in the changelog; add the
files of a new version next to the old ones.
"""

from __future__ import annotations

import json
import pickle
import sys
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
if __name__ == "__main__":  # run as a script from a clone: use that clone's (built) package
    sys.path.insert(0, str(HERE.parents[1]))

import binarsity_stats  # noqa: E402
from binarsity_stats import Binarizer, BinarsityClassifier, BinarsityGLM, glm  # noqa: E402

FORMAT = "binarsity_stats.stored_model"
FORMAT_VERSION = 2
FORMULA = "y ~ bin(x1, 8) + bin(x2, 5) + C(g) + z + offset(log(exposure))"


def make_data(n: int, seed: int) -> pd.DataFrame:
    """Deterministic mixed data: two continuous features (one with NaN), a factor."""
    rng = np.random.default_rng(seed)
    x1 = np.round(rng.normal(size=n), 3)
    x2 = rng.integers(0, 30, size=n).astype(float)
    x3 = np.round(rng.gamma(2.0, size=n), 3)
    x3[rng.random(n) < 0.1] = np.nan
    g = rng.choice(["a", "b", "c"], size=n)
    z = np.round(rng.normal(size=n), 3)
    exposure = np.round(rng.uniform(0.5, 3.0, size=n), 3)
    eta = 0.8 * (x1 > 0.3) - 0.6 * (x2 > 20) + 0.4 * (g == "b") + 0.3 * z
    p = 1 / (1 + np.exp(-eta))
    return pd.DataFrame(
        {
            "x1": x1,
            "x2": x2,
            "x3": x3,
            "g": g,
            "z": z,
            "exposure": exposure,
            "event": (rng.random(n) < p).astype(float),
            "label": np.where(rng.random(n) < p, "yes", "no"),
            "y": rng.poisson(exposure * np.exp(eta - 0.5)).astype(float),
            "w": np.round(rng.uniform(0.5, 2.0, size=n), 3),
            "off": np.round(rng.normal(scale=0.2, size=n), 3),
        }
    )


FEATURES = ["x1", "x2", "x3"]


def fit_models(train: pd.DataFrame) -> dict:
    """The fitted objects that are stored (deterministic given ``train``)."""
    X = train[FEATURES]
    est = BinarsityGLM(family="binomial", lam=2e-3, n_bins=8, missing="separate", tol=1e-10)
    est.fit(X, train["event"], sample_weight=train["w"], offset=train["off"])
    clf = BinarsityClassifier(lam=2e-3, n_bins=6, missing="separate", tol=1e-10)
    clf.fit(X, train["label"])
    binarizer = Binarizer(n_bins=7, missing="separate").fit(X)
    res = glm(FORMULA, train[["y", "x1", "x2", "g", "z", "exposure"]], family="poisson").fit(
        lam=1e-3, tol=1e-10
    )
    return {"estimator": est, "classifier": clf, "binarizer": binarizer, "results": res}


def predictions(models: dict, new: pd.DataFrame) -> dict:
    """What each stored object predicts on ``new`` (the values the test compares to)."""
    X = new[FEATURES]
    return {
        "estimator": models["estimator"].predict(X, offset=new["off"]),
        "estimator_link": models["estimator"].decision_function(X, offset=new["off"]),
        "classifier_proba": models["classifier"].predict_proba(X)[:, 1],
        "classifier_labels": models["classifier"].predict(X),
        "binarizer": models["binarizer"].transform(X),
        "results": models["results"].predict(new),
        "results_link": models["results"].predict(new, type="link"),
    }


# ----------------------------------------------------------- version-independent form


def _floats(values) -> list:
    return [float(v) for v in np.asarray(values, dtype=np.float64).ravel()]


def _binarizer_json(b) -> dict:
    return {
        "kind": "Binarizer",
        "features": [
            {"column": str(name), "edges": _floats(e), "has_missing_level": bool(m)}
            for name, e, m in zip(b.feature_names_in_, b.edges_, b.has_missing_level_, strict=True)
        ],
    }


def upgrade_v1(doc: dict) -> dict:
    """The models of a ``FORMAT_VERSION`` 1 file (v0.1.0) as ``to_spec()`` descriptions.

    Version 1 wrote its own layout (``features`` / ``blocks`` with ``levels`` = θ);
    the description has one term per block with ``theta``, the family by name and
    link, and the offset terms. Only the fields the models of that file use are read.
    """
    from binarsity_stats.design._spec import SPEC_FORMAT

    links = {"gaussian": "identity", "binomial": "logit", "poisson": "log"}

    def head(source, family, intercept, fit_intercept, lam, terms, response, offsets=()):
        return {
            "format": SPEC_FORMAT, "format_version": 1,
            "package_version": doc["package_version"], "source": source,
            "family": {"name": family, "link": links[family]}, "intercept": intercept,
            "fit_intercept": fit_intercept, "lam": lam, "response": response,
            "terms": terms, "offset": {"terms": list(offsets), "column": None},
        }  # fmt: skip

    out = {}
    for key in ("estimator", "classifier"):
        m = doc["models"][key]
        terms = [
            {"kind": "bin", "name": f["column"], "expr": f["column"], "column": f["column"],
             "edges": f["edges"], "intervals": "right-closed",
             "missing_level": f["has_missing_level"], "penalty": "tv", "theta": f["levels"]}
            for f in m["features"]
        ]  # fmt: skip
        response = {"classes": m["classes"]} if "classes" in m else {}
        out[key] = head(m["kind"], m["family"], m["intercept"],
                        m["params"]["fit_intercept"], m["params"]["lam"], terms, response)  # fmt: skip
    r = doc["models"]["results"]
    terms = []
    for b in r["blocks"]:
        entry = {"name": b["term"], "expr": b["column"], "column": b["column"],
                 "missing_level": b["has_missing_level"], "theta": b["levels"]}  # fmt: skip
        if b["kind"] == "bin":
            entry.update(kind="bin", edges=b["edges"], intervals="right-closed", penalty="tv")
        else:
            entry.update(kind="categorical", levels=b["categories"], unseen="error",
                         penalty="free")  # fmt: skip
        terms.append(entry)
    terms += [{"kind": "linear", "name": d["column"], "factors": [d["column"]], "coef": d["coef"]}
              for d in r["dense"]]  # fmt: skip
    out["results"] = head("BinarsityResults", r["family"], r["intercept"], True, r["lam"],
                          terms, {"name": r["formula"].split("~")[0].strip()}, [r["offset"]])  # fmt: skip
    return out


def _frame_json(df: pd.DataFrame) -> dict:
    out = {}
    for c in df.columns:
        col = df[c]
        if col.dtype.kind == "f":
            out[c] = [None if np.isnan(v) else float(v) for v in col]
        else:
            out[c] = [str(v) for v in col]
    return out


def to_json(models: dict, new: pd.DataFrame, preds: dict) -> dict:
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "package_version": binarsity_stats.__version__,
        "models": {
            "estimator": models["estimator"].to_spec(),
            "classifier": models["classifier"].to_spec(),
            "binarizer": _binarizer_json(models["binarizer"]),
            "results": models["results"].to_spec(),
        },
        "newdata": _frame_json(new),
        "predictions": {
            k: (v.tolist() if v.dtype.kind != "f" else _floats(v)) for k, v in preds.items()
        },
    }


def main() -> None:
    train = make_data(160, seed=2024)
    new = make_data(40, seed=7)
    # the new rows hit unseen extremes too: outside the training range, on a cut point
    new.loc[0, "x1"] = 1e6
    new.loc[1, "x1"] = -1e6
    models = fit_models(train)
    new.loc[2, "x1"] = float(models["estimator"].binarizer_.edges_[0][2])
    preds = predictions(models, new)
    pkl = HERE / f"stored_model_v{binarsity_stats.__version__}.pkl"
    js = HERE / f"stored_model_v{binarsity_stats.__version__}.json"
    payload = {
        "package_version": binarsity_stats.__version__,
        "models": models,
        "newdata": new,
        "predictions": preds,
    }
    with open(pkl, "wb") as fh:
        pickle.dump(payload, fh, protocol=4)
    with open(js, "w") as fh:
        json.dump(to_json(models, new, preds), fh, indent=1, allow_nan=False)
        fh.write("\n")
    print(f"wrote {pkl.name} and {js.name}")


if __name__ == "__main__":
    main()
