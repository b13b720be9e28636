"""A model fitted in a shell can be used in a shell (issue 13, "The command line").

``fit ... --save model.pkl`` then ``predict model.pkl new.csv -o out.csv [--interval]``
gives the Python predictions (and the refit's statsmodels intervals); ``--missing``,
``--groups``, ``--weights``, ``--offset`` do what the Python arguments of the same names
do; error messages quote the flag a shell user types, never the Python keyword.
"""

import io
import pickle

import numpy as np
import pandas as pd
import pytest

from binarsity_stats import glm
from binarsity_stats._cli import main


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cli")
    rng = np.random.default_rng(3)
    n = 300
    df = pd.DataFrame({
        "age": rng.uniform(18, 80, n), "region": rng.choice(["n", "s", "e"], n),
        "hh": rng.integers(0, 25, n), "w": rng.uniform(0.5, 2, n),
        "expo": rng.uniform(0.5, 2, n), "id": np.arange(n),
    })  # fmt: skip
    df["y"] = (np.sin(df.age / 10) + (df.region == "s") + rng.normal(size=n) > 0.5).astype(int)
    df.loc[[2, 5], "age"] = np.nan
    df.to_csv(tmp / "train.csv", index=False)
    df.drop(columns="y").head(12).to_csv(tmp / "new.csv", index=False)
    return tmp, df


def run(argv):
    out = io.StringIO()
    return main([str(a) for a in argv], out=out), out.getvalue()


FIT = ["fit", "y ~ bin(age, 10) + C(region)", "--family", "binomial"]


def test_fit_save_then_predict_equals_python(files, capsys):
    tmp, df = files
    code, _ = run([*FIT, "--data", tmp / "train.csv", "--missing", "drop", "--weights", "w",
                   "--lam", "0.01", "--save", tmp / "m.pkl"])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    with open(tmp / "m.pkl", "rb") as fh:
        saved = pickle.load(fh)
    ref = glm("y ~ bin(age, 10) + C(region)", df, family="binomial", sample_weight="w",
              missing="drop").fit(lam=0.01)  # fmt: skip
    np.testing.assert_array_equal(saved.coef, ref.coef)
    code, _ = run(["predict", tmp / "m.pkl", tmp / "new.csv", "-o", tmp / "p.csv", "--id", "id"])
    assert code == 0
    out = pd.read_csv(tmp / "p.csv")
    assert list(out.columns) == ["id", "prediction"] and len(out) == 12
    new = df.drop(columns="y").head(12)
    np.testing.assert_allclose(out["prediction"], ref.predict(new), rtol=1e-12)
    assert out["prediction"].isna().to_numpy().nonzero()[0].tolist() == [2, 5]  # na.exclude
    assert "2 NaN for rows with a missing value" in capsys.readouterr().err
    # --missing error raises, naming the flag to type instead of the Python argument
    code, _ = run(["predict", tmp / "m.pkl", tmp / "new.csv", "--missing", "error"])
    err = capsys.readouterr().err
    assert code == 2 and "predict --missing nan" in err and "missing='nan'" not in err


def test_predict_interval_is_the_refits_statsmodels_interval(files, capsys):
    tmp, df = files
    code, _ = run([*FIT, "--data", tmp / "train.csv", "--missing", "drop", "--lam", "0.01",
                   "--save", tmp / "m2.pkl"])  # fmt: skip
    assert code == 0
    code, text = run(["predict", tmp / "m2.pkl", tmp / "new.csv", "--interval", "0.9"])
    assert code == 0
    out = pd.read_csv(io.StringIO(text))
    assert list(out.columns) == ["prediction", "refit", "lower", "upper"]
    res = glm("y ~ bin(age, 10) + C(region)", df, family="binomial",
              missing="drop").fit(lam=0.01)  # fmt: skip
    new = df.drop(columns="y").head(12).drop(index=[2, 5])
    frame = res.refit().get_prediction(new).summary_frame(alpha=0.1)
    keep = out.drop(index=[2, 5])
    np.testing.assert_allclose(keep["lower"], frame["mean_ci_lower"], rtol=1e-10)
    np.testing.assert_allclose(keep["upper"], frame["mean_ci_upper"], rtol=1e-10)
    np.testing.assert_allclose(keep["refit"], frame["mean"], rtol=1e-10)
    assert (keep["lower"] <= keep["refit"]).all() and (keep["refit"] <= keep["upper"]).all()
    assert out.loc[[2, 5]].isna().all().all()
    with pytest.raises(SystemExit) as info:  # argparse: usage and exit status 2
        run(["predict", tmp / "m2.pkl", tmp / "new.csv", "--interval", "95"])
    assert info.value.code == 2
    assert "--interval must be a coverage between 0 and 1" in capsys.readouterr().err


def test_groups_flag_is_fit_cv_groups(files, capsys):
    tmp, df = files
    code, _ = run([*FIT, "--data", tmp / "train.csv", "--missing", "drop", "--cv", "3",
                   "--groups", "hh", "--n-lambdas", "8", "--save", tmp / "cv.pkl"])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    with open(tmp / "cv.pkl", "rb") as fh:
        saved = pickle.load(fh)
    model = glm("y ~ bin(age, 10) + C(region)", df, family="binomial", missing="drop")
    cv = model.fit_cv(folds=3, groups="hh", random_state=0, n_lambdas=8)
    assert saved.lam == cv.lam_min
    code, _ = run([*FIT, "--data", tmp / "train.csv", "--missing", "drop", "--groups", "hh"])
    assert code == 2 and "--groups is used by --cv" in capsys.readouterr().err


@pytest.mark.parametrize(
    "extra, expected",
    [(["--weights", "W"], "--weights 'W' is not a column of --data. Did you mean 'w'?"),
     (["--offset", "exp"], "--offset 'exp' is not a column of --data. Did you mean 'expo'?"),
     (["--missing", "drop", "--cv", "3", "--groups", "hhh"], "--groups 'hhh' is not a column of --data. Did you "
      "mean 'hh'?"),
     ([], "pass --missing separate to give them their own level, or --missing drop")],
)  # fmt: skip
def test_errors_quote_the_flags_not_the_python_keywords(files, capsys, extra, expected):
    tmp, _ = files
    code, _ = run([*FIT, "--data", tmp / "train.csv", *extra])
    err = capsys.readouterr().err
    assert code == 2 and expected in err, err
    for keyword in ("sample_weight", "offset=", "groups=", "missing='"):
        assert keyword not in err


def test_family_spellings_and_unreadable_model_files(files, capsys):
    tmp, _ = files
    code, _ = run(["fit", "y ~ bin(age, 10)", "--family", "logit", "--data", tmp / "train.csv",
                   "--missing", "drop"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 0 and "--family logit read as 'binomial'" in err
    code, _ = run(["predict", tmp / "train.csv", tmp / "new.csv"])
    assert code == 2 and "is not a model saved by 'binarsity-stats fit --save'" in (
        capsys.readouterr().err
    )
    code, _ = run(["predict", tmp / "nothing.pkl", tmp / "new.csv"])
    assert code == 2 and "nothing.pkl: no such file" in capsys.readouterr().err


def test_family_gamma_and_tweedie_flags_are_the_log_link_statsmodels_families(tmp_path, capsys):
    import statsmodels.api as sm

    rng = np.random.default_rng(1)
    d = pd.DataFrame({"x": rng.uniform(0, 3, 200)})
    d["y"] = rng.gamma(2.0, np.exp(2 * np.sin(3 * d.x)) / 2.0)
    d.to_csv(tmp_path / "g.csv", index=False)
    log = sm.families.links.Log()
    for flag, family in (("gamma", sm.families.Gamma(log)),
                         ("tweedie:1.5", sm.families.Tweedie(var_power=1.5, link=log))):
        code, _ = run(["fit", "y ~ bin(x, 10)", "--data", tmp_path / "g.csv", "--family", flag,
                       "--lam", "0.01", "--save", tmp_path / "g.pkl"])  # fmt: skip
        assert code == 0, capsys.readouterr().err
        with open(tmp_path / "g.pkl", "rb") as fh:
            saved = pickle.load(fh)
        ref = glm("y ~ bin(x, 10)", d, family=family).fit(lam=0.01)
        assert saved.model.family == ref.model.family
        np.testing.assert_array_equal(saved.coef, ref.coef)
    with pytest.raises(SystemExit):
        run(["fit", "y ~ bin(x)", "--data", tmp_path / "g.csv", "--family", "tweedie:3"])
    assert "variance power 1 <= P <= 2" in capsys.readouterr().err


def _bits(values) -> np.ndarray:
    return np.asarray(values, dtype=np.float64).view(np.int64)


@pytest.mark.parametrize("gram", [False, True])
@pytest.mark.parametrize("kind", ["response", "link"])
def test_predict_interval_equals_the_python_calls_bit_for_bit(files, capsys, monkeypatch,
                                                               gram, kind):  # fmt: skip
    """The CLI replays the rows once for both predictions (issue 22 item 5); its file
    holds exactly ``res.predict`` and ``refit().get_prediction().summary_frame``: the
    same float64 bits after the CSV round trip (the interval, from the refit stored by
    ``fit --save``, to 1e-12 relative), with a model offset, for the statsmodels refit
    and the one from sufficient statistics (``gram``)."""
    from binarsity_stats.model import _refit_glm

    tmp, df = files
    if gram:  # the refit from the codes' sufficient statistics at any size
        monkeypatch.setattr(_refit_glm, "GRAM_MIN_CELLS", 0)
    model = tmp / f"off_{gram}_{kind}.pkl"
    code, _ = run([*FIT, "--data", tmp / "train.csv", "--missing", "drop", "--lam", "0.01",
                   "--offset", "expo", "--save", model])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    out_csv = tmp / f"pi_{gram}_{kind}.csv"
    code, _ = run(["predict", model, tmp / "new.csv", "--interval", "0.9", "--type", kind,
                   "-o", out_csv, "--id", "id"])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    out = pd.read_csv(out_csv)
    with open(model, "rb") as fh:
        res = pickle.load(fh)
    new = df.drop(columns="y").head(12).drop(index=[2, 5])
    keep = out.drop(index=[2, 5])
    np.testing.assert_array_equal(keep["id"], new["id"])
    np.testing.assert_array_equal(_bits(keep["prediction"]), _bits(res.predict(new, type=kind)))
    refit = res.refit()
    assert isinstance(refit.sm_results, _refit_glm.GLMRefit) == gram
    frame = refit.get_prediction(new, type=kind).summary_frame(alpha=0.1)
    # the interval from the refit fit --save stored: the same η and x'Σx, the family's
    # inverse link in place of statsmodels' (tests/test_cli_saved_refit.py)
    for col, k in (("refit", 0), ("lower", 2), ("upper", 3)):
        np.testing.assert_allclose(keep[col], frame.iloc[:, k], rtol=1e-12, atol=0, err_msg=col)
    assert out.drop(columns="id").loc[[2, 5]].isna().all().all()


@pytest.mark.parametrize("arrow", [True, False])
@pytest.mark.parametrize("chunk", [1 << 16, 1000])
def test_the_csv_writer_round_trips_every_float_exactly(tmp_path, monkeypatch, chunk, arrow):
    """``write_csv`` writes each float as its shortest repr: read back by pandas (and
    by float()), every value has the same float64 bits; NaN is an empty field; an id
    column of text is quoted as pandas quotes it."""
    from binarsity_stats import _cli
    from binarsity_stats._cli import write_csv

    monkeypatch.setattr(_cli, "_CSV_ROWS", chunk)  # 1000: rows formatted in 5 chunks
    monkeypatch.setattr(_cli, "_USE_PYARROW", arrow)  # pyarrow's writer, or repr
    if arrow:
        pytest.importorskip("pyarrow")
    rng = np.random.default_rng(0)
    special = [0.0, -0.0, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 0.1 + 0.2,
               1 / 3, -1e-300, 1e22, 123456789.12345679, np.inf, -np.inf]  # fmt: skip
    values = np.concatenate([special, rng.standard_normal(2000) * 10.0 ** rng.integers(-300, 300, 2000),
                             rng.random(2000)])  # fmt: skip
    n = values.size
    ids = np.array([f'r{i}, "q"' if i % 7 == 0 else f"r{i}" for i in range(n)], dtype=object)
    table = pd.DataFrame({"my id": ids, "prediction": values, "lower": values[::-1].copy()})
    table.loc[5, "lower"] = np.nan
    path = tmp_path / "p.csv"
    with open(path, "w", newline="") as fh:
        write_csv(table, fh)
    back = pd.read_csv(path, keep_default_na=True)
    assert list(back.columns) == ["my id", "prediction", "lower"]
    np.testing.assert_array_equal(back["my id"].to_numpy(dtype=object), ids)
    np.testing.assert_array_equal(_bits(back["prediction"]), _bits(values))
    lower = table["lower"].to_numpy()
    assert np.isnan(back["lower"][5])
    ok = ~np.isnan(lower)
    np.testing.assert_array_equal(_bits(back["lower"][ok]), _bits(lower[ok]))
    # the text itself: float() of each field gives the same bits (any correct reader)
    lines = path.read_text().splitlines()[1:]
    fields = [line.rsplit(",", 2)[1] for line in lines]
    np.testing.assert_array_equal(_bits([float(f) for f in fields]), _bits(values))
    # pandas' own writer gives the same values
    ref = pd.read_csv(io.StringIO(table.to_csv(index=False)))
    pd.testing.assert_frame_equal(back, ref, check_exact=True)


def test_the_csv_writer_keeps_every_row_and_formats_other_columns_as_pandas(tmp_path):
    """A one-column table with NaN keeps its rows (a quoted empty field, not a blank line
    that readers skip); dates, nullable integers and text as pandas writes them."""
    from binarsity_stats._cli import write_csv

    one = pd.DataFrame({"prediction": [0.5, np.nan, 0.25]})
    text = io.StringIO()
    write_csv(one, text)
    assert text.getvalue() == one.to_csv(index=False)
    back = pd.read_csv(io.StringIO(text.getvalue()))
    assert len(back) == 3 and np.isnan(back["prediction"][1])
    mixed = pd.DataFrame({
        "when": pd.to_datetime(["2020-01-02 00:00", None, "2021-03-04 05:06"]),
        "n": pd.array([1, None, 3], dtype="Int64"),
        "name": ["a,b", 'say "x"', "line\nbreak"],
        "ok": [True, False, True],
        "prediction": [1e-310, -0.0, 2.5],
    })  # fmt: skip
    text = io.StringIO()
    write_csv(mixed, text)
    assert text.getvalue() == mixed.to_csv(index=False)
