"""A Cox model is used as R's survival users use one (issue 22, item 7).

* ``Surv(time, status)`` reads R's 1 = censored / 2 = event coding as ``survival::Surv``
  does (largest value 2), with a note in the summary; 0/1 and booleans as before;
* ``bs.anova`` / ``bs.compare`` take Cox refits: the partial likelihood ratio test of
  statsmodels' PHReg fits of the same designs, df = change in parameters;
* the relative risk's reference is stated and holds: ``predict(type="risk")`` is relative
  to the weighted average training row (linear terms at 0), ``refit().predict()`` to the
  reference levels;
* ``binarsity-stats predict`` on a Cox model: ``--type risk|linear|survival --times``,
  and ``--interval`` refused in one line with exit status 2 (in process and in a
  subprocess); Ctrl-C prints one line and exits 130.
"""

from __future__ import annotations

import io
import os
import pickle
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import binarsity_stats as bs
from binarsity_stats import _cli
from binarsity_stats._cli import main

# the folder holding the package these tests import (the installed one in CI, whose
# kernels are compiled), never the uncompiled source folder of a fresh clone
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(bs.__file__)))


def _frame(n=400, seed=0):
    rng = np.random.RandomState(seed)
    df = pd.DataFrame({"a": rng.uniform(0, 1, n), "b": rng.uniform(0, 1, n),
                       "z": rng.normal(size=n)})  # fmt: skip
    eta = 1.0 * (df.a > 0.5) - 0.7 * (df.b > 0.3) + 0.3 * df.z
    t = rng.exponential(np.exp(-eta))
    c = rng.exponential(1.5, n)
    df["time"] = np.minimum(t, c)
    df["event"] = (t <= c).astype(int)
    df["status"] = df["event"] + 1  # survival::lung's coding
    df["dead"] = df["event"].astype(bool)
    return df


@pytest.fixture(scope="module")
def df():
    return _frame()


# -- R's status coding ---------------------------------------------------------------------
def test_surv_reads_r_status_coding_as_r_does(df):
    r12 = bs.glm("Surv(time, status) ~ bin(a, 4) + z", df, family="cox").fit(lam=1e-3)
    r01 = bs.glm("Surv(time, event) ~ bin(a, 4) + z", df, family="cox").fit(lam=1e-3)
    rtf = bs.glm("Surv(time, dead) ~ bin(a, 4) + z", df, family="cox").fit(lam=1e-3)
    # the same events: the same data, the same solver path, bit for bit
    np.testing.assert_array_equal(r12.coef, r01.coef)
    np.testing.assert_array_equal(rtf.coef, r01.coef)
    assert np.array_equal(r12.model.survival[:, 1], df["event"].to_numpy(float))
    text = str(r12.summary())
    assert "status 2 (censored = 1)" in text
    assert "R's coding" in " ".join(text.split()) and "2 = event, 1 = censored" in " ".join(
        text.split()
    )
    assert "R's coding" not in " ".join(str(r01.summary()).split())


def test_surv_refuses_a_status_that_is_neither_0_1_nor_1_2(df):
    bad = df.assign(status=df["status"].where(df.index != 3, 0))  # 0, 1 and 2
    with pytest.raises(ValueError, match="R's 1 = censored / 2 = event coding"):
        bs.glm("Surv(time, status) ~ bin(a, 4)", bad, family="cox")
    with pytest.raises(ValueError, match="event must be 0/1"):
        bs.glm("Surv(time, status) ~ bin(a, 4)", df.assign(status=df["status"] * 3),
               family="cox")  # fmt: skip


def test_read_status_all_ones_is_all_events_as_in_r():
    from binarsity_stats.families._cox import read_status

    e, r = read_status(np.ones(4))
    assert not r and np.array_equal(e, np.ones(4))  # R: max 1 -> 0/1 coding, all events
    e, r = read_status(np.array([2, 2, 1.0]))
    assert r and np.array_equal(e, [1.0, 1.0, 0.0])


# -- anova and compare on Cox refits --------------------------------------------------------
def _dummies(x, cuts):
    seg = np.searchsorted(np.asarray(cuts), np.asarray(x), side="left")  # right-closed bins
    return (seg[:, None] == np.arange(1, len(cuts) + 1)[None, :]).astype(float)


def test_anova_of_cox_refits_is_the_partial_likelihood_ratio_test(df):
    from scipy import stats
    from statsmodels.duration.hazard_regression import PHReg

    small = bs.glm("Surv(time, event) ~ bin(a, 4)", df, family="cox").fit(lam=1e-4)
    large = bs.glm("Surv(time, event) ~ bin(a, 4) + bin(b, 4) + z", df,
                   family="cox").fit(lam=1e-4)  # fmt: skip
    cuts = small.cut_points()
    cuts_l = large.cut_points()
    assert small.n_jumps == 3 and large.n_jumps == 6  # every cut kept: designs known
    ca = cuts[cuts.term == "bin(a, 4)"]["cut"].to_numpy()
    cb = cuts_l[cuts_l.term == "bin(b, 4)"]["cut"].to_numpy()
    xa, xb = _dummies(df.a, ca), _dummies(df.b, cb)
    ev = df["event"].to_numpy(float)
    l1 = PHReg(df.time.to_numpy(), xa, status=ev).fit().llf
    l2 = PHReg(df.time.to_numpy(), np.column_stack([xa, xb, df.z]), status=ev).fit().llf
    table = bs.anova(small.refit(), large.refit())
    assert list(table.columns) == ["loglik", "Chisq", "Df", "Pr(>|Chi|)"]
    np.testing.assert_allclose(table["loglik"], [l1, l2], rtol=1e-9)
    lr = 2 * (l2 - l1)
    # both maximise the same concave partial likelihood to Newton's precision
    np.testing.assert_allclose(table["Chisq"].iloc[1], lr, rtol=1e-6)
    assert table["Df"].iloc[1] == 4
    np.testing.assert_allclose(table["Pr(>|Chi|)"].iloc[1], stats.chi2.sf(lr, 4), rtol=1e-5)
    assert table.attrs["test"] == "Chisq"
    with pytest.raises(ValueError, match="'Chisq' or 'LRT' for Cox"):
        bs.anova(small.refit(), large.refit(), test="F")
    # not nested / not the same data: refused by name
    other = bs.glm("Surv(time, event) ~ bin(b, 4)", df, family="cox").fit(lam=1e-4)
    with pytest.raises(ValueError, match="not nested"):
        bs.anova(small.refit(), other.refit())
    shifted = df.assign(time=df.time + 1.0 * (df.index == 0))
    moved = bs.glm("Surv(time, event) ~ bin(a, 4) + bin(b, 4)", shifted,
                   family="cox").fit(lam=1e-4)  # fmt: skip
    with pytest.raises(ValueError, match="same survival times"):
        bs.anova(small.refit(), moved.refit())


def test_compare_takes_cox_refits(df):
    res = bs.glm("Surv(time, event) ~ bin(a, 4) + z", df, family="cox").fit(lam=1e-4)
    ref = res.refit()
    table = bs.compare(res, ref)
    llf = float(ref.sm_results.llf)
    k = len(ref.names)
    row = table.loc["Model 2"]
    assert row["kind"] == "refit" and row["df"] == k
    np.testing.assert_allclose(row["AIC"], -2 * llf + 2 * k, rtol=1e-12)
    np.testing.assert_allclose(row["BIC"], -2 * llf + np.log(len(df)) * k, rtol=1e-12)
    # the same saturated partial likelihood as the penalised fit's deviance
    np.testing.assert_allclose(row["deviance"] - res.deviance, 2 * (res.llf - llf),
                               rtol=1e-9, atol=1e-9 * abs(res.llf))  # fmt: skip
    # at a tiny λ the unpenalised refit improves the penalised fit only slightly
    assert res.llf <= llf + 1e-9 * abs(llf)


# -- the relative risk's reference ---------------------------------------------------------
def test_risk_references_are_stated_and_hold(df):
    res = bs.glm("Surv(time, event) ~ bin(a, 4) + C(g) + z",
                 df.assign(g=np.where(df.b > 0.5, "hi", "lo")), family="cox").fit(lam=1e-3)
    text = " ".join(str(res.summary()).split())
    assert "predict(type='risk') is exp(eta) relative to a row with every bin() and C() " \
        "term at its weighted training average" in text
    assert "refit().predict() is relative to a row with every term at its reference" in text
    eta = res.predict(type="linear")
    beta = float(res.dense_coef[0])
    terms = eta - beta * df.z.to_numpy()  # the bin() and C() terms' effects
    # each term is centred on the (unweighted here) training rows: their sum too
    assert abs(terms.mean()) <= 1e-9 * np.max(np.abs(terms))
    np.testing.assert_allclose(res.predict(type="risk"), np.exp(eta), rtol=1e-12)
    # the refit: a row in the first bin of a, the reference level of g, z = 0 has risk 1
    ref = res.refit()
    row = pd.DataFrame({"a": [df.a.min()], "g": ["hi"], "z": [0.0]})
    assert ref.predict(row)[0] == 1.0
    for fn in (bs.BinarsityResults.predict, bs.RefitResults.predict):
        assert "reference" in fn.__doc__ and "average" in fn.__doc__


# -- the command line ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def saved(tmp_path_factory, df):
    tmp = tmp_path_factory.mktemp("coxcli")
    df.to_csv(tmp / "train.csv", index=False)
    df.drop(columns=["time", "status", "event", "dead"]).head(15).to_csv(
        tmp / "new.csv", index=False
    )
    code = main(["fit", "Surv(time, event) ~ bin(a, 4) + z", "--data", str(tmp / "train.csv"),
                 "--family", "cox", "--lam", "0.001", "--save", str(tmp / "cox.pkl")],
                out=io.StringIO())  # fmt: skip
    assert code == 0
    with open(tmp / "cox.pkl", "rb") as fh:
        res = pickle.load(fh)
    return tmp, res


def _run(argv):
    out = io.StringIO()
    return main([str(a) for a in argv], out=out), out.getvalue()


def test_cli_predict_cox_survival_and_risk(saved):
    tmp, res = saved
    new = pd.read_csv(tmp / "new.csv")
    code, text = _run(["predict", tmp / "cox.pkl", tmp / "new.csv", "--type", "survival",
                       "--times", "0.5,1,2"])  # fmt: skip
    assert code == 0
    out = pd.read_csv(io.StringIO(text))
    assert list(out.columns) == ["survival_0.5", "survival_1", "survival_2"]
    np.testing.assert_allclose(out.to_numpy(), res.predict(new, type="survival",
                               times=[0.5, 1, 2]), rtol=1e-12)  # fmt: skip
    for kind in ("risk", "linear"):
        code, text = _run(["predict", tmp / "cox.pkl", tmp / "new.csv", "--type", kind])
        assert code == 0
        np.testing.assert_allclose(pd.read_csv(io.StringIO(text))["prediction"],
                                   res.predict(new, type=kind), rtol=1e-12)  # fmt: skip


@pytest.mark.parametrize("extra, message", [
    (["--interval", "0.95"], "--interval is not available for a Cox model"),
    (["--type", "survival"], "--type survival needs --times"),
    (["--times", "1"], "--times is only used with --type survival"),
])  # fmt: skip
def test_cli_predict_cox_refusals_are_one_line_exit_2(saved, capsys, extra, message):
    tmp, _ = saved
    code, _ = _run(["predict", tmp / "cox.pkl", tmp / "new.csv", *extra])
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("\n") == 1 and "Traceback" not in err


def test_cli_predict_cox_interval_in_a_subprocess(saved):
    tmp, _ = saved
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-m", "binarsity_stats", "predict",
                        str(tmp / "cox.pkl"), str(tmp / "new.csv"), "--interval", "0.95"],
                       capture_output=True, text=True, env=env, cwd=str(tmp), timeout=120)  # fmt: skip
    assert p.returncode == 2, p.stderr
    assert p.stderr.startswith("error: --interval is not available for a Cox model")
    assert p.stderr.count("\n") == 1 and p.stdout == ""


def test_cli_type_for_cox_refused_on_a_glm(tmp_path):
    rng = np.random.RandomState(1)
    d = pd.DataFrame({"x": rng.uniform(size=100)})
    d["y"] = rng.normal(size=100)
    d.to_csv(tmp_path / "d.csv", index=False)
    assert _run(["fit", "y ~ bin(x, 4)", "--data", tmp_path / "d.csv", "--lam", "0.01",
                 "--save", tmp_path / "m.pkl"])[0] == 0  # fmt: skip
    code, _ = _run(["predict", tmp_path / "m.pkl", tmp_path / "d.csv", "--type", "risk"])
    assert code == 2


def test_ctrl_c_prints_one_line_and_exits_130(saved, capsys, monkeypatch):
    tmp, _ = saved

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(_cli, "_predictions", interrupted)
    code, _ = _run(["predict", tmp / "cox.pkl", tmp / "new.csv"])
    assert code == 130 and capsys.readouterr().err == "interrupted\n"


def test_ctrl_c_as_a_real_signal_in_a_subprocess(saved):
    tmp, _ = saved
    code = (
        "import os, signal, sys\n"
        "import binarsity_stats._cli as c\n"
        "def stop(*a, **k):\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "    raise AssertionError('not interrupted')\n"
        "c._predictions = stop\n"
        f"sys.exit(c.main(['predict', {str(tmp / 'cox.pkl')!r}, {str(tmp / 'new.csv')!r}]))\n"
    )
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       cwd=str(tmp), timeout=120)  # fmt: skip
    assert p.returncode == 130, p.stderr
    assert p.stderr == "interrupted\n"
