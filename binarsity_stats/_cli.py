"""Command line: ``python -m binarsity_stats {fit,predict,report,demo}``.

``fit FORMULA --data FILE.csv --family F [--cv K] [--plots DIR]`` fits a binarsity GLM
(at ``--lam``, by default the theory λ, or tuned by K-fold CV) and prints the summary,
the cut-points kept and the selected terms; ``--plots DIR`` writes the shape functions
and the CV curve (or the path) as PNG files.

``report FORMULA --data FILE.csv [fit's options] [--output FILE.html] [--bootstrap B]
[--new TEST.csv]`` fits in the same way (or ``report --model SAVED.pkl`` loads a fit saved
by ``fit --save``) and writes the self-contained HTML report of the fit
(``res.report``), with bootstrap bands and cut-point frequencies when ``--bootstrap`` is
given and calibration on ``--new`` rows when given.

``fit ... --save MODEL.pkl`` also saves the fitted results (a pickle) with their
unpenalised refit's coefficients and covariance (``SAVED_REFIT``);
``predict MODEL.pkl NEW.csv [-o PREDICTIONS.csv] [--interval 0.95]`` reads them back and
writes one prediction per row of NEW.csv (with the bounds of a confidence interval of
the mean from the unpenalised refit on the selected cut-points when ``--interval`` is
given: the stored refit, or a refit for a model saved without one). The flags are
named after the Python arguments (``--weights`` for ``sample_weight``, ``--offset``,
``--groups``, ``--missing``) and error messages quote the flags.

``demo`` does the same on statsmodels' ``fair`` data set (a binomial model of whether a
woman had an extramarital affair, 10-fold CV).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

from ._cli_parser import build_parser

__all__ = ["main", "build_parser"]

def _fit_from_args(model: Any, args: argparse.Namespace) -> tuple[Any, Any]:
    """Fit as the options say: (results, CVResults or None)."""
    groups = getattr(args, "groups", None)
    if groups is not None and not args.cv and not getattr(args, "bootstrap", 0):
        raise ValueError("--groups is used by --cv K (whole groups per fold); add --cv.")
    if args.cv:
        cv = model.fit_cv(
            folds=args.cv, scoring=args.scoring, random_state=args.random_state,
            n_jobs=args.n_jobs, verbose=args.verbose, n_lambdas=args.n_lambdas,
            groups=groups,
        )  # fmt: skip
        return (cv.best_ if args.select == "lam_min" else cv.results(args.select)), cv
    return model.fit(lam=args.lam), None


def _report(model: Any, args: argparse.Namespace, out) -> Any:
    """Fit as asked, print the report, write plots; return the results."""
    t0 = time.perf_counter()
    res, cv = _fit_from_args(model, args)
    elapsed = time.perf_counter() - t0
    print(res.summary(precision=args.precision), file=out)
    if cv is not None:
        print(
            f"\nCross-validation ({cv.folds} folds, {cv.scoring}): lam_min = "
            f"{cv.lam_min:.4g}, lam_1se = {cv.lam_1se:.4g}; reported: {args.select}.",
            file=out,
        )
        other = "lam_1se" if args.select == "lam_min" else "lam_min"
        alt = cv.results(other)
        print(
            f"At {other} = {alt.lam:.4g}: {alt.n_jumps} cut-points kept, df = {alt.df}, "
            f"selected: {', '.join(alt.selected_terms()) or '(none)'}.",
            file=out,
        )
    selected = res.selected_terms()
    print("\nSelected terms: " + (", ".join(selected) if selected else "(none)"), file=out)
    print(f"\nFit time: {elapsed:.2f} s", file=out)
    if args.plots is not None:
        _write_plots(res, cv, model, args, out)
    return res


def _write_plots(res: Any, cv: Any, model: Any, args: argparse.Namespace, out) -> None:
    os.environ.setdefault("MPLBACKEND", "Agg")
    from .report._plotting import save_figure

    args.plots.mkdir(parents=True, exist_ok=True)
    written = []
    if model.spec.blocks:
        written.append(save_figure(res.plot_shapes(), args.plots / "shapes.png"))
    if cv is not None:
        written.append(save_figure(cv.plot(), args.plots / "cv.png"))
        written.append(save_figure(cv.path.plot(), args.plots / "path.png"))
    print("Plots written: " + ", ".join(str(p) for p in written), file=out)


_SEPARATORS = {",": "','", ";": "';'", "\t": "tab", "|": "'|'"}


def _detect_sep(header: str) -> str:
    """The separator of a header line: the most frequent of , ; tab | (comma on a tie)."""
    counts = {sep: header.count(sep) for sep in _SEPARATORS}
    best = max(counts, key=lambda sep: (counts[sep], sep == ","))
    return best if counts[best] > 0 else ","


#: File names read as Parquet (any other as CSV).
PARQUET_SUFFIXES = (".parquet", ".pq")


def _read_parquet(path: Path, where: str):
    """A Parquet file as a pandas frame, through pyarrow and narwhals (as ``glm()``
    reads a pyarrow table); every failure a ValueError naming the file."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise ValueError(
            f"{where}: reading Parquet needs pyarrow (pip install pyarrow, or the package's "
            "dask extra); or give a CSV file."
        ) from None
    from .formula._columns import as_frame

    try:
        table = pq.read_table(path)
    except Exception as exc:  # pyarrow's ArrowInvalid, OSError...: the file is not Parquet
        raise ValueError(f"{where} could not be read as Parquet: {exc}") from None
    data = as_frame(table)
    if len(data) == 0:
        raise ValueError(f"{where} has no data rows.")
    return data


def _read_data(path: Path, sep: str | None, encoding: str, flag: str = "--data"):
    """Read the --data file; every failure is a ValueError naming the file.

    ``flag`` is how messages name it ("--data", or "NEW" for predict's positional file,
    named by its path alone).
    """
    import pandas as pd

    where = f"{flag} {path}" if flag.startswith("-") else str(path)

    if path.is_dir():
        raise ValueError(f"{where} is a directory; give a CSV or Parquet file.")
    if not path.is_file():
        raise ValueError(f"{where}: no such file.")
    if path.suffix.lower() in PARQUET_SUFFIXES:
        return _read_parquet(path, where), None
    try:
        "".encode(encoding)
    except LookupError:
        raise ValueError(f"--encoding {encoding!r} is not a known text encoding.") from None
    try:
        with open(path, encoding=encoding, newline="") as fh:
            header = fh.readline()
    except UnicodeDecodeError as exc:
        raise ValueError(_not_decoded(where, encoding, exc)) from None
    if not header.strip():
        raise ValueError(f"{where} is empty (no header row).")
    detected = sep is None
    if detected:
        sep = _detect_sep(header)
    else:
        sep = {"\\t": "\t", "tab": "\t"}.get(sep, sep)  # '\t' as typed in a shell
    try:
        data = pd.read_csv(path, sep=sep, encoding=encoding)
    except UnicodeDecodeError as exc:
        raise ValueError(_not_decoded(where, encoding, exc)) from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise ValueError(f"{where} could not be read as CSV: {exc}".strip()) from None
    if len(data) == 0:
        raise ValueError(f"{where} has a header row but no data rows.")
    if data.shape[1] == 1:
        others = [name for c, name in _SEPARATORS.items() if c != sep and c in header]
        if others:
            raise ValueError(
                f"{where} was read as one column with separator {_SEPARATORS.get(sep, sep)}"
                f" but its header contains {others[0]}; pass --sep."
            )
    return data, (sep if detected and sep != "," else None)


def _not_decoded(where: str, encoding: str, exc: UnicodeDecodeError) -> str:
    byte = exc.object[exc.start : exc.start + 1].hex()
    return (
        f"{where} is not valid {encoding} text (byte 0x{byte} at position {exc.start});"
        " pass its encoding, e.g. --encoding latin-1."
    )


def _check_plots_dir(path: Path | None) -> None:
    """Fail before fitting when --plots cannot be a directory."""
    if path is None:
        return
    if path.exists() and not path.is_dir():
        raise ValueError(f"--plots {path} is a file; give a directory for the PNG files.")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"--plots {path} cannot be created: {exc.strerror or exc}.") from None


def _model_from_args(args: argparse.Namespace) -> Any:
    """The model of the fit options: read --data, build the formula's model.

    Shared by ``fit`` and ``report``; a note on stderr says how --data and --family were
    read when that was a guess or a translation.
    """
    from .model._model import glm

    data, detected = _read_data(args.data, args.sep, args.encoding)
    if detected is not None:
        print(
            f"note: --data {args.data} read with separator {_SEPARATORS[detected]} "
            "(detected from the header; --sep sets it).",
            file=sys.stderr,
        )
    _check_plots_dir(args.plots)
    _check_save(getattr(args, "save", None))
    model = glm(
        args.formula, data, family=args.family, sample_weight=args.weights,
        offset=args.offset, n_bins=args.n_bins, penalty_weights=args.penalty_weights,
        missing=args.missing, weights_kind=args.weights_kind,
    )  # fmt: skip
    if model.family_note:
        print(f"note: {_flag_message(model.family_note)}", file=sys.stderr)
    if model.n_dropped:
        print(
            f"note: {model.n_dropped} row(s) of --data with a missing value dropped "
            "(--missing drop).",
            file=sys.stderr,
        )
    if getattr(args, "groups", None) is not None:  # checked before any fit
        try:
            model.per_row(args.groups, "groups")
        except ValueError as exc:
            raise ValueError(_flag_message(str(exc))) from None
    return model


def _check_save(path: Path | None) -> None:
    """Fail before fitting when --save cannot be written."""
    if path is None:
        return
    if path.is_dir():
        raise ValueError(f"--save {path} is a directory; give a file name, e.g. model.pkl.")
    if not path.parent.is_dir():
        raise ValueError(f"--save {path}: the directory {path.parent} does not exist.")


#: The attribute of the saved results that holds the refit ``predict --interval`` reads
#: (``model._refit.refit_state``, plus the refit's warnings); models saved before it
#: have none and are refitted.
SAVED_REFIT = "_saved_refit"


def _refit_for_save(res: Any) -> dict | None:
    """The refit's coefficients and covariance for ``predict --interval`` (O(k²), no
    row vectors) and its warnings, or None for a Cox model (no intervals) or when the
    refit fails (``predict --interval`` then refits and reports the failure itself)."""
    import warnings

    from .model._refit import refit_state

    if res.model.family.survival:
        return None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            state = refit_state(res.refit())
        except Exception:  # noqa: BLE001 - any failure: saved as before, refitted by predict
            return None
    state["warnings"] = list(dict.fromkeys(
        str(w.message) for w in caught if issubclass(w.category, UserWarning)
    ))  # fmt: skip
    return state


def _save(res: Any, path: Path | None, out) -> None:
    if path is None:
        return
    import pickle

    from .core._atomic import write_atomic

    before = set(vars(res))
    state = _refit_for_save(res)
    # what the refit cached on the results (the n-vector linear_predictor...) is not
    # saved: the file holds what it held before, plus the O(k²) refit
    cached = {key: vars(res).pop(key) for key in set(vars(res)) - before}
    if state is not None:
        vars(res)[SAVED_REFIT] = state
    try:
        # a temporary file renamed over path when complete: no truncated model file
        write_atomic(path, lambda fh: pickle.dump(res, fh, protocol=pickle.HIGHEST_PROTOCOL),
                     binary=True)  # fmt: skip
    finally:
        vars(res).pop(SAVED_REFIT, None)
        vars(res).update(cached)
    print(f"Model saved: {path} (binarsity-stats predict {path} NEW.csv)", file=out)


def _run_fit(args: argparse.Namespace, out) -> int:
    res = _report(_model_from_args(args), args, out)
    _save(res, args.save, out)
    return 0


def _load_model(path: Path) -> Any:
    """The results saved by ``fit --save``; every failure names the file."""
    import pickle

    from .model._results import BinarsityResults

    if path.is_dir() or not path.is_file():
        raise ValueError(f"model file {path}: no such file.")
    try:
        with open(path, "rb") as fh:
            res = pickle.load(fh)
    except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, IndexError) as exc:
        raise ValueError(
            f"model file {path} is not a model saved by 'binarsity-stats fit --save' ({exc})."
        ) from None
    if not isinstance(res, BinarsityResults):
        raise ValueError(
            f"model file {path} holds a {type(res).__name__}, not a model saved by "
            "'binarsity-stats fit --save'."
        )
    return res


def _predictions(res: Any, new: Any, args: argparse.Namespace) -> Any:
    """The output table of ``predict``: [id], prediction[, lower, upper]."""
    import pandas as pd

    from .formula._formula import predict_complete

    cox = bool(getattr(res.model.family, "survival", False))
    if args.type in ("risk", "linear", "survival") and not cox:
        raise ValueError(
            f"--type {args.type} is for a Cox model (family cox); this model's family is "
            f"{res.model.family.name}: use --type response or --type link."
        )
    if (args.type == "survival") != (args.times is not None):
        raise ValueError(
            "--type survival needs --times, e.g. --times 30,90,365."
            if args.type == "survival"
            else "--times is only used with --type survival (a Cox model)."
        )
    if cox and args.interval is not None:
        raise ValueError(
            "--interval is not available for a Cox model (the unpenalised Cox refit has "
            "no prediction intervals here); drop --interval, or use 'report --bootstrap' "
            "for bootstrap bands of the effects."
        )
    if args.type == "survival":
        values = res.predict(new, type="survival", times=args.times, missing=args.missing)
        table = pd.DataFrame(
            {f"survival_{t:g}": values[:, k] for k, t in enumerate(args.times)}
        )
    elif args.interval is None:
        values = res.predict(new, type=args.type, missing=args.missing)
        table = pd.DataFrame({"prediction": values})
    else:
        alpha = 1.0 - args.interval
        saved = _saved_refit(res)
        if saved is None:  # saved before fit --save stored the refit: refit now
            refit = res.refit()
            frame = lambda rows, offset: _interval_frame(  # noqa: E731
                res, refit, rows, offset, args.type, alpha)
        else:
            frame = lambda rows, offset: _saved_interval_frame(  # noqa: E731
                res, saved, rows, offset, args.type, alpha)
        table = predict_complete(res.model.spec, new, None, args.missing, frame)
    if args.id is not None:
        table.insert(0, args.id, new[args.id].to_numpy())
    return table


def _checked_design(res: Any, rows: Any, offset: Any) -> tuple[Any, Any]:
    """The replayed design and offset of ``rows``, after checking that the saved
    coefficients are finite (a corrupted model file is refused, not predicted from)."""
    import numpy as np

    from .core._base import inconsistent

    if not (np.all(np.isfinite(res.coef)) and np.all(np.isfinite(res.dense_coef))
            and np.isfinite(res.intercept)):  # fmt: skip
        raise inconsistent("the coefficients hold NaN or infinite values")
    return res._new_design(rows, offset)


def _interval_frame(res: Any, refit: Any, rows: Any, offset: Any, type_: str,
                    alpha: float) -> Any:  # fmt: skip
    """prediction, refit, lower, upper of complete rows, the design replayed ONCE.

    The penalised prediction is ``res.predict(rows, type=type_, offset=offset)``'s
    arithmetic (``BinarsityResults._predict``) and the interval
    ``refit.get_prediction(rows, offset=offset, type=type_).summary_frame(alpha)``'s,
    both on the same replayed design (``ReplayedRows``), so the output equals the
    Python calls bit for bit; replaying the rows twice was 0.5× a fit at 1e6 rows.
    """
    import pandas as pd

    from .model._refit_glm import ReplayedRows

    m = res.model
    design, off = _checked_design(res, rows, offset)
    eta = m.linear_predictor(res.coef, res.dense_coef, res.intercept, design, off)
    pred = refit.get_prediction(ReplayedRows(design, off), type=type_)
    sf = pred.summary_frame(alpha=alpha)
    return pd.DataFrame({
        "prediction": eta if type_ == "link" else m.family.mean(eta),
        "refit": sf.iloc[:, 0].to_numpy(),
        "lower": sf.iloc[:, 2].to_numpy(),
        "upper": sf.iloc[:, 3].to_numpy(),
    })  # fmt: skip


def _saved_refit(res: Any) -> dict | None:
    """The refit stored by ``fit --save`` (None in a model saved before it), checked
    against the results' selection; its warnings are given again."""
    import warnings

    import numpy as np

    from .core._base import inconsistent

    state = vars(res).get(SAVED_REFIT)
    if state is None:
        return None
    names = list(res._selection[1])
    k = len(names)
    try:
        ok = (state["format"] == 1 and list(state["names"]) == names
              and np.shape(state["params"]) == (k,)
              and np.shape(state["cov"]) == (k, k))  # fmt: skip
    except (KeyError, TypeError):
        ok = False
    if not ok:
        raise inconsistent("the refit stored by fit --save does not match its selection")
    for message in state.get("warnings", ()):
        warnings.warn("refit(): " + message.removeprefix("refit(): "), UserWarning,
                      stacklevel=2)  # fmt: skip
    return state


def _saved_interval_frame(res: Any, saved: dict, rows: Any, offset: Any, type_: str,
                          alpha: float) -> Any:  # fmt: skip
    """:func:`_interval_frame` from the refit stored by ``fit --save``: no refit, and
    neither statsmodels nor scipy.stats imported.

    η and x'Σx as ``RefitResults.get_prediction`` computes them (the same blocks and
    arithmetic on the same coefficients and covariance); the interval as statsmodels'
    ``summary_frame`` forms it: η ± q·√(x'Σx) with q the normal quantile (Student's t
    with the residual df when the family estimates a dispersion), mapped by the inverse
    link for ``type="response"`` (the identity for a quadratic family, whose interval is
    the mean's). Equal to the Python calls to rounding (the inverse link is the
    family's, not statsmodels' formula).
    """
    import numpy as np
    import pandas as pd
    from scipy import special

    from .model._refit_glm import block_rows, prediction_blocks

    m = res.model
    design, off = _checked_design(res, rows, offset)
    eta_pen = m.linear_predictor(res.coef, res.dense_coef, res.intercept, design, off)
    beta, cov = saved["params"], saved["cov"]
    step = block_rows(beta.size)
    blocks = (res._selected_matrix(design, rows=slice(start, start + step))
              for start in range(0, design.n_obs, step))  # fmt: skip
    eta, var = prediction_blocks(blocks, beta, cov)
    if off is not None:
        eta = eta + off
    p = 1.0 - alpha / 2.0
    q = special.stdtrit(saved["df_resid"], p) if saved["use_t"] else special.ndtri(p)
    half = q * np.sqrt(var)
    lower, upper = eta - half, eta + half
    if type_ == "link" or m.family.quadratic:
        fit = eta
    else:
        fit, lower, upper = m.family.mean(eta), m.family.mean(lower), m.family.mean(upper)
    return pd.DataFrame({
        "prediction": eta_pen if type_ == "link" else m.family.mean(eta_pen),
        "refit": fit, "lower": lower, "upper": upper,
    })  # fmt: skip


def _csv_field(text: str) -> str:
    """A CSV field as pandas' ``to_csv`` quotes it (QUOTE_MINIMAL, comma, '\n')."""
    if any(c in text for c in ',"\n\r'):
        return '"' + text.replace('"', '""') + '"'
    return text


def _csv_column(column: Any) -> list[str]:
    """One output column as CSV fields: floats as ``repr`` (the shortest text that reads
    back to the same float64 bits), NaN as an empty field (pandas' ``na_rep``), integers
    and booleans as ``str``; any other column (an ``--id`` of text or dates) as pandas'
    ``to_csv`` formats and quotes it."""
    import csv
    import io

    import numpy as np

    # NumPy columns only: an extension column (nullable Int64…) has its own text
    arr = column.to_numpy() if isinstance(column.dtype, np.dtype) else np.empty(0, object)
    if arr.dtype.kind == "f":
        arr = arr.astype(np.float64, copy=False)
        fields = list(map(float.__repr__, arr.tolist()))
        for i in np.flatnonzero(np.isnan(arr)).tolist():
            fields[i] = ""
        return fields
    if arr.dtype.kind in "iub":
        return list(map(str, arr.tolist()))
    text = column.to_frame().to_csv(index=False, header=False, lineterminator="\n")
    return [_csv_field(row[0]) if row else "" for row in csv.reader(io.StringIO(text))]


#: Rows ``write_csv`` formats at a time (its memory is bounded, however many rows).
_CSV_ROWS = 1 << 16

#: Whether ``write_csv`` may format float columns with pyarrow's CSV writer (when
#: importable; tests switch it off to check the pure-Python path).
_USE_PYARROW = True


def _arrow_float_lines(rows: Any) -> list[str] | None:
    """The float64 columns of ``rows`` as CSV lines (no header) by pyarrow's C++ writer
    (shortest round-trip decimals, NaN as an empty field), or None without pyarrow."""
    if not _USE_PYARROW:
        return None
    try:
        import pyarrow as pa
        import pyarrow.csv as pa_csv
    except ImportError:
        return None
    arrays = {str(k): pa.array(rows[name].to_numpy(), from_pandas=True)
              for k, name in enumerate(rows.columns)}  # fmt: skip
    buf = pa.BufferOutputStream()
    pa_csv.write_csv(pa.table(arrays), buf, pa_csv.WriteOptions(include_header=False))
    return buf.getvalue().to_pybytes().decode("ascii").split("\n")[: len(rows)]


def write_csv(table: Any, fh: Any) -> None:
    """Write the predictions table as CSV: header, one line per row, no index.

    The values ``table.to_csv(fh, index=False)`` writes, 6× faster (pandas formats each
    float through NumPy, 0.7× a fit at 1e6 rows): every float as the shortest decimal
    that parses back to the same float64 — by pyarrow's C++ CSV writer when pyarrow is
    installed, else Python's ``repr`` — so the file round-trips exactly through
    ``pandas.read_csv`` (or any correctly rounding reader); NaN as an empty field.

    Parameters
    ----------
    table : pandas.DataFrame
        The columns to write (floats; an ``--id`` column of any type first).
    fh : text file
        Where to write.
    """
    import numpy as np

    fh.write(",".join(_csv_field(str(name)) for name in table.columns) + "\n")
    # the trailing float64 columns (all but an --id column) go to pyarrow in one block
    first = len(table.columns)
    while first > 0 and table.dtypes.iloc[first - 1] == np.float64:
        first -= 1
    block = len(table.columns) - first >= 2  # one column: NaN would be a blank line
    for start in range(0, len(table), _CSV_ROWS):
        rows = table.iloc[start : start + _CSV_ROWS]
        lines = _arrow_float_lines(rows.iloc[:, first:]) if block else None
        names = table.columns[:first] if lines is not None else table.columns
        columns = [_csv_column(rows[name]) for name in names]
        if lines is not None:
            columns.append(lines)
        if len(columns) == 1 and lines is None:  # a blank line would be skipped: quote it
            columns = [[f if f else '""' for f in columns[0]]]
        fh.write("\n".join(map(",".join, zip(*columns))) + "\n")


def _run_predict(args: argparse.Namespace, out) -> int:
    res = _load_model(args.model)
    new, _ = _read_data(args.new, args.sep, args.encoding, flag="NEW")
    if args.id is not None and args.id not in new.columns:
        from .formula._formula import did_you_mean

        raise ValueError(
            f"--id {args.id!r} is not a column of {args.new}." + did_you_mean(args.id, new.columns)
        )
    if args.output is not None:
        _check_output(args.output, example="predictions.csv")
    table = _predictions(res, new, args)
    if args.output is None:
        write_csv(table, out)
    else:
        with open(args.output, "w", encoding="utf-8", newline="") as fh:
            write_csv(table, fh)
        n_nan = int(table.iloc[:, -1].isna().sum())
        print(
            f"Predictions written: {args.output} ({len(table):,} rows"
            + (f", {n_nan} NaN for rows with a missing value" if n_nan else "")
            + (f", {args.interval:g} interval of the refit" if args.interval else "")
            + ").",
            file=sys.stderr,
        )
    return 0


#: Python keywords in messages, as the flags a shell user types.
_FLAGS = [
    (r"\bpredict\(\.\.\., missing='(\w+)'\)", r"predict --missing \1"),
    (r"\bsample_weight='([^']*)'", r"--weights '\1'"),
    (r"\bsample_weight=", "--weights "),
    (r"\bsample_weight\b", "--weights"),
    (r"\bweights_kind\b", "--weights-kind"),
    (r"\boffset='([^']*)'", r"--offset '\1'"),
    (r"\boffset \(column", "--offset (column"),
    (r"\bgroups='([^']*)'", r"--groups '\1'"),
    (r"^groups\b", "--groups"),
    (r"\bmissing='(\w+)'", r"--missing \1"),
    (r"^missing must\b", "--missing must"),
    (r"\bfamily='([^']*)'", r"--family \1"),
    (r"\bpenalty_weights\b", "--penalty-weights"),
    (r"\bn_bins must\b", "--n-bins must"),
    (r"\bis not a column of the data\b", "is not a column of --data"),
    (r"\bin glm\(\)", "in --n-bins"),
]


def _flag_message(text: str) -> str:
    """An error message with the Python keywords replaced by the command-line flags."""
    import re

    for pattern, repl in _FLAGS:
        text = re.sub(pattern, repl, text)
    return text


def _check_output(path: Path, example: str = "model.html") -> None:
    """Fail before fitting when the page cannot be written."""
    if path.is_dir():
        raise ValueError(f"--output {path} is a directory; give a file name, e.g. {example}.")
    parent = path.parent
    if not parent.is_dir():
        raise ValueError(f"--output {path}: the directory {parent} does not exist.")


def _check_report_source(args: argparse.Namespace) -> None:
    """FORMULA --data, or --model, not both; no fitting option with --model."""
    if args.model is None:
        if args.formula is None or args.data is None:
            raise ValueError(
                "report needs a FORMULA and --data FILE.csv to fit, or --model FILE (a fit "
                "saved by 'fit --save')."
            )
        return
    given = [name for name in ("formula", "data") if getattr(args, name) is not None]
    if given:
        raise ValueError(
            f"--model {args.model} reports a saved fit; drop the {' and '.join(given)} "
            "(or drop --model to fit)."
        )
    changed = [flag for dest, default, flag in args._refitting
               if getattr(args, dest) != default]  # fmt: skip
    if changed:
        raise ValueError(
            f"--model {args.model} reports the saved fit as it is; {', '.join(changed)} "
            "would change the fit: fit from FORMULA --data instead."
        )


def _run_report(args: argparse.Namespace, out) -> int:
    _check_output(args.output)
    _check_report_source(args)
    new = None
    if args.new is not None:
        new = _read_data(args.new, args.sep, args.encoding, flag="--new")[0]
    t0 = time.perf_counter()
    if args.model is not None:
        res = _load_model(args.model)
        model, cv = res.model, getattr(res, "cv_", None)
    else:
        model = _model_from_args(args)
        res, cv = _fit_from_args(model, args)
    if args.bootstrap:
        res.bootstrap(
            n_boot=args.bootstrap, random_state=args.random_state, n_jobs=args.n_jobs,
            verbose=args.verbose, groups=args.groups,
        )  # fmt: skip
    os.environ.setdefault("MPLBACKEND", "Agg")
    res.report(args.output, new=new, title=args.title, scale=args.scale, method=args.bands,
               precision=args.precision)  # fmt: skip
    elapsed = time.perf_counter() - t0
    if args.plots is not None:
        _check_plots_dir(args.plots)
        _write_plots(res, cv, model, args, out)
    _save(res, args.save, out)
    print(
        f"Report written: {args.output} ({model.family.name}, {model.nobs:,} rows, "
        f"lam = {res.lam:.4g} ({res.lam_source}), {res.n_jumps} cut-points kept"
        + (f", {args.bootstrap} bootstrap resamples" if args.bootstrap else "")
        + f"; {elapsed:.1f} s).",
        file=out,
    )
    return 0


def _run_demo(args: argparse.Namespace, out) -> int:
    from ._datasets import FAIR_FORMULA, load_fair
    from .model._model import glm

    _check_plots_dir(args.plots)
    data = load_fair()
    print(
        "Demo: statsmodels' fair data (Fair 1978; 6,366 married women). Event: time "
        "spent in extramarital affairs > 0.\n"
        f"Formula: {FAIR_FORMULA}\n",
        file=out,
    )
    model = glm(FAIR_FORMULA, data, family="binomial")
    _report(model, args, out)
    return 0


def main(argv: list[str] | None = None, out=None) -> int:
    """Run the command line.

    Parameters
    ----------
    argv : list of str, optional
        Arguments (default ``sys.argv[1:]``).
    out : file-like, optional
        Where the report goes (default stdout).

    Returns
    -------
    int
        Exit status: 0 on success (also when the reader of a pipe stops early), 2 on a
        usage or data error (one line on stderr, no traceback), 130 when interrupted
        (Ctrl-C; the line ``interrupted`` on stderr).
    """
    out = sys.stdout if out is None else out
    args = build_parser().parse_args(argv)
    try:
        run = {"fit": _run_fit, "predict": _run_predict, "report": _run_report,
               "demo": _run_demo}[args.command]  # fmt: skip
        code = run(args, out)
        out.flush()  # a closed pipe shows here, not as a message at interpreter exit
        return code
    except BrokenPipeError:
        # the reader went away (`binarsity-stats ... | head -1`): stop quietly, and
        # point stdout at /dev/null so that the interpreter's final flush is silent
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):  # pragma: no cover - no real stdout
            pass
        return 0
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except (ValueError, TypeError, OSError) as exc:
        print(f"error: {_flag_message(' '.join(str(exc).split()))}", file=sys.stderr)
        return 2
