"""``fit --save`` stores the refit that ``predict --interval`` needs (issue 22 item 5).

``predict --interval`` from a new save does not refit (its fixed cost was a refit from
the stored rows, plus importing statsmodels and scipy.stats); its numbers are those of a
save without the stored refit and of the Python API's ``refit().get_prediction(new)``
to 1e-12 relative (the same coefficients, covariance and arithmetic; the inverse link is
the family's, not statsmodels' formula). The stored refit is O(k²): the file holds no
row vector it did not hold before. A model saved before the change (no stored refit,
e.g. the v0.1.0 pickle of ``tests/data``) still predicts with an interval, refitting.
"""

import io
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import binarsity_stats
from binarsity_stats._cli import SAVED_REFIT, main
from binarsity_stats.model import _refit_glm
from binarsity_stats.model._results import BinarsityResults

DATA = Path(__file__).parent / "data"
#: the folder holding the binarsity_stats these tests import (the installed, compiled one
#: in CI; a source checkout has no kernels unless built in place)
IMPORTED = Path(binarsity_stats.__file__).resolve().parents[1]
RTOL = 1e-12


def run(argv):
    out = io.StringIO()
    return main([str(a) for a in argv], out=out), out.getvalue()


def _frame(n: int, family: str, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "age": rng.uniform(18, 80, n), "region": rng.choice(["n", "s", "e"], n),
        "expo": rng.uniform(0.5, 2, n), "id": np.arange(n),
    })  # fmt: skip
    eta = np.sin(df.age / 10) + 0.5 * (df.region == "s")
    if family == "binomial":
        df["y"] = (eta + rng.normal(size=n) > 0.5).astype(int)
    elif family in ("poisson", "quasipoisson"):
        df["y"] = rng.poisson(np.exp(0.5 * eta))
    elif family == "gamma":
        df["y"] = rng.gamma(2.0, np.exp(eta) / 2.0)
    else:
        df["y"] = eta + rng.normal(size=n)
    return df


FORMULA = "y ~ bin(age, 10) + C(region)"


def _fit_and_save(tmp: Path, df: pd.DataFrame, family: str, name: str) -> Path:
    df.to_csv(tmp / f"{name}.csv", index=False)
    model = tmp / f"{name}.pkl"
    code, _ = run(["fit", FORMULA, "--data", tmp / f"{name}.csv", "--family", family,
                   "--lam", "0.002", "--offset", "expo", "--save", model])  # fmt: skip
    assert code == 0
    return model


def _predict(model: Path, new_csv: Path, out_csv: Path, kind: str) -> pd.DataFrame:
    code, _ = run(["predict", model, new_csv, "--interval", "0.9", "--type", kind,
                   "-o", out_csv, "--id", "id"])  # fmt: skip
    assert code == 0
    return pd.read_csv(out_csv)


def _old_format(model: Path, path: Path) -> Path:
    """The same results pickled as ``fit --save`` did before it stored the refit."""
    with open(model, "rb") as fh:
        res = pickle.load(fh)
    del vars(res)[SAVED_REFIT]
    with open(path, "wb") as fh:
        pickle.dump(res, fh, protocol=pickle.HIGHEST_PROTOCOL)
    return path


@pytest.mark.parametrize("gram", [False, True])
@pytest.mark.parametrize("kind", ["response", "link"])
@pytest.mark.parametrize("family", ["binomial", "poisson", "gaussian", "quasipoisson", "gamma"])
def test_interval_from_the_stored_refit_equals_a_refit(tmp_path, monkeypatch, family, kind, gram):
    if gram:  # the refit from the codes' sufficient statistics at any size
        monkeypatch.setattr(_refit_glm, "GRAM_MIN_CELLS", 0)
    df = _frame(400, family)
    model = _fit_and_save(tmp_path, df, family, "train")
    new = df.drop(columns="y").head(25)
    new.to_csv(tmp_path / "new.csv", index=False)
    old = _old_format(model, tmp_path / "old.pkl")
    want_old = _predict(old, tmp_path / "new.csv", tmp_path / "old.csv", kind)

    with open(model, "rb") as fh:
        res = pickle.load(fh)
    refit = res.refit()
    frame = refit.get_prediction(new, type=kind).summary_frame(alpha=0.1)

    # the new save predicts without refitting
    def no_refit(*args, **kwargs):
        raise AssertionError("predict --interval refitted a model saved with its refit")

    monkeypatch.setattr(BinarsityResults, "refit", no_refit)
    got = _predict(model, tmp_path / "new.csv", tmp_path / "new_out.csv", kind)
    assert list(got.columns) == ["id", "prediction", "refit", "lower", "upper"]
    np.testing.assert_array_equal(got["id"], new["id"])
    np.testing.assert_array_equal(got["prediction"], want_old["prediction"])
    for col, k in (("refit", 0), ("lower", 2), ("upper", 3)):
        np.testing.assert_allclose(got[col], want_old[col], rtol=RTOL, atol=0, err_msg=col)
        np.testing.assert_allclose(got[col], frame.iloc[:, k], rtol=RTOL, atol=0, err_msg=col)
    assert np.all(got["lower"] < got["upper"])


def _sizes(tmp: Path, n: int) -> tuple[int, int, dict, int]:
    df = _frame(n, "binomial", seed=1)
    model = _fit_and_save(tmp, df, "binomial", f"n{n}")
    with open(model, "rb") as fh:
        res = pickle.load(fh)
    state = vars(res)[SAVED_REFIT]
    old = _old_format(model, tmp / f"old{n}.pkl")
    return model.stat().st_size, old.stat().st_size, state, len(res._selection[1])


def test_the_stored_refit_holds_no_row_vectors(tmp_path):
    """At 2,000 and 16,000 rows: every array of the stored refit is of the k columns'
    size, and the file grows by the pickled refit alone (no cached n-vector of the
    refit, such as the penalised linear predictor, is saved with it)."""
    for n in (2_000, 16_000):
        new_size, old_size, state, k = _sizes(tmp_path, n)
        arrays = [v for v in state.values() if isinstance(v, np.ndarray)]
        assert {a.shape for a in arrays} == {(k,), (k, k)}
        assert len(state["names"]) == k
        extra = new_size - old_size
        assert 0 < extra <= len(pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)) + 256
        assert extra < 8 * n  # less than one float64 n-vector


def test_a_model_saved_without_the_refit_predicts_an_interval_by_refitting(tmp_path):
    """The v0.1.0 pickle's ``glm()`` results (poisson, an offset term), saved as
    ``fit --save`` wrote them then: ``predict --interval`` refits, and its file holds
    the Python calls' numbers (the same code path: the same bits)."""
    with open(DATA / "stored_model_v0.1.0.pkl", "rb") as fh:
        stored = pickle.load(fh)
    res, new = stored["models"]["results"], stored["newdata"]
    assert SAVED_REFIT not in vars(res)
    with open(tmp_path / "old.pkl", "wb") as fh:
        pickle.dump(res, fh, protocol=pickle.HIGHEST_PROTOCOL)
    new.to_csv(tmp_path / "new.csv", index=False)
    code, _ = run(["predict", tmp_path / "old.pkl", tmp_path / "new.csv", "--interval", "0.95",
                   "-o", tmp_path / "out.csv"])  # fmt: skip
    assert code == 0
    got = pd.read_csv(tmp_path / "out.csv")
    back = pd.read_csv(tmp_path / "new.csv")  # the columns as the CLI read them
    frame = res.refit().get_prediction(back).summary_frame(alpha=0.05)
    np.testing.assert_array_equal(got["prediction"], res.predict(back))
    for col, k in (("refit", 0), ("lower", 2), ("upper", 3)):
        np.testing.assert_array_equal(got[col], frame.iloc[:, k], err_msg=col)


def test_predict_interval_from_a_saved_refit_imports_no_statsmodels(tmp_path):
    """A child process (as a shell user runs it): with the refit stored, neither
    statsmodels nor scipy.stats is imported."""
    df = _frame(300, "binomial")
    model = _fit_and_save(tmp_path, df, "binomial", "train")
    df.drop(columns="y").head(20).to_csv(tmp_path / "new.csv", index=False)
    code = (
        "import sys\n"
        "from binarsity_stats._cli import main\n"
        f"rc = main(['predict', {str(model)!r}, {str(tmp_path / 'new.csv')!r}, '--interval',"
        f" '0.95', '-o', {str(tmp_path / 'out.csv')!r}])\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] == 'statsmodels'"
        " or m.startswith('scipy.stats') or m.split('.')[0] == 'matplotlib')\n"
        "print(rc, heavy)\n"
    )
    env = dict(os.environ, PYTHONPATH=str(IMPORTED))
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[0] == "0 []", proc.stdout
    assert len(pd.read_csv(tmp_path / "out.csv")) == 20


def test_a_refit_that_fails_at_save_leaves_the_model_saved_as_before(tmp_path, monkeypatch):
    """``fit --save`` never fails for the stored refit: without it the file is what it
    was before, and ``predict --interval`` refits (and reports a failure itself)."""
    def failing(*args, **kwargs):
        raise RuntimeError("refit failed")

    df = _frame(300, "poisson")
    with monkeypatch.context() as patch:
        patch.setattr(BinarsityResults, "refit", failing)
        model = _fit_and_save(tmp_path, df, "poisson", "train")
    with open(model, "rb") as fh:
        assert SAVED_REFIT not in vars(pickle.load(fh))
    df.drop(columns="y").head(10).to_csv(tmp_path / "new.csv", index=False)
    got = _predict(model, tmp_path / "new.csv", tmp_path / "out.csv", "response")
    assert got[["refit", "lower", "upper"]].notna().all().all()
