"""The JSON schema of the model description and the one hand-written validator agree.

``binarsity_stats/spec.schema.json`` (packaged) documents the format; every reader runs
``standalone_scorer.validate`` (the package has no runtime dependency on
``jsonschema``). What is proved here, with ``jsonschema`` (a test dependency):

* the schema is a valid draft 2020-12 schema and ships with the package;
* every description the package writes — formula results of every kind of term,
  the estimators, a classifier, a statsmodels family — is valid for both;
* on hostile descriptions whose fault JSON Schema can express (types, required and
  unknown fields, sizes, string lengths, enumerations, infinities) both refuse;
* the faults JSON Schema cannot express (NaN, the order of cut points, θ lengths, a
  reference among the levels, a by-term with a missing level) the validator refuses
  while the schema, by design, does not see them.
"""

from __future__ import annotations

import copy
import json
import math
from importlib import resources

import pytest
from _export_data import export_frame

from binarsity_stats import BinarsityClassifier, BinarsityGLM, glm
from binarsity_stats.design.standalone_scorer import validate

jsonschema = pytest.importorskip("jsonschema")

SCHEMA = json.loads(resources.files("binarsity_stats").joinpath("spec.schema.json").read_text())
CHECKER = jsonschema.Draft202012Validator(SCHEMA)
TRAIN = export_frame(200, 0)


def _valid_descriptions() -> list[dict]:
    sm = pytest.importorskip("statsmodels.api")
    tweedie = sm.families.Tweedie(var_power=1.5, link=sm.families.links.Log())
    fits = [
        glm("yg ~ bin(x1, 5) + bin(x3, 4) + C(h) + log(x2) + I(z ** 2) + x1:z + z:g",
            TRAIN, missing="separate").fit(lam=1e-3),
        glm("y ~ bin(np.log(x2), 4) + C(g, Treatment('b')) + I((z - 1) / 2) + I(2 * z)"
            " + offset(np.log(exposure))", TRAIN, family="poisson", offset="off").fit(lam=1e-3),
        glm("yb ~ bin(x1, 4):C(g) + bin(x2, 3)", TRAIN, family="binomial").fit(lam=1e-3),
        glm("y ~ bin(x1, 5) + z", TRAIN, family=tweedie).fit(lam=1e-3),
        glm("y ~ bin(x1, 5) + bin(x3, 4) + z", TRAIN, family="poisson",
            missing="drop").fit(lam=1e-3),
        BinarsityGLM(n_bins=5, lam=1e-3, linear_features=["z"], categorical_features=["g"])
        .fit(TRAIN[["x1", "z", "g"]], TRAIN["yg"]),
        BinarsityGLM(n_bins=4, lam=1e-3).fit(TRAIN[["x1", "x2"]].to_numpy(), TRAIN["yg"]),
        BinarsityClassifier(n_bins=4, lam=1e-3).fit(TRAIN[["x1", "x2"]], TRAIN["yb"] > 0),
        glm("y ~ bin(x1, 3) + bin(x1, 3):bin(np.log(x2), 3)", TRAIN).fit(lam=1e-3),
    ]  # fmt: skip
    return [json.loads(json.dumps(f.to_spec())) for f in fits]


VALID = _valid_descriptions()


def test_the_schema_is_a_valid_schema_and_is_packaged():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["properties"]["format_version"] == {"const": 2}


@pytest.mark.parametrize("i", range(len(VALID)))
def test_written_descriptions_are_valid_for_both(i):
    CHECKER.validate(VALID[i])
    assert validate(VALID[i])["format_version"] == 2


def _set(path: str, value):
    """A mutation: set the field at a dotted path (``terms.0.edges``) to ``value``."""

    def apply(spec: dict) -> dict:
        keys = [int(k) if k.isdigit() else k for k in path.split(".")]
        node = spec
        for k in keys[:-1]:
            node = node[k]
        if value is _DELETE:
            del node[keys[-1]]
        else:
            node[keys[-1]] = value(node[keys[-1]]) if callable(value) else value
        return spec

    return apply


_DELETE = object()
#: Faults JSON Schema expresses: both must refuse
BOTH = {
    "string intercept": _set("intercept", "0.5"),
    "boolean intercept": _set("intercept", True),
    "infinite coefficient": _set("terms.0.theta.0", math.inf),
    "number beyond a double": _set("intercept", 10**400),
    "missing intercept": _set("intercept", _DELETE),
    "missing theta": _set("terms.0.theta", _DELETE),
    "unknown top-level field": _set("extra", [[[]]]),
    "unknown term field": _set("terms.0.code", "__import__('os')"),
    "unknown kind": _set("terms.0.kind", "spline"),
    "unknown transform": _set("terms.0.input", {"column": "x1", "transform": "eval"}),
    "power without exponent": _set("terms.0.input", {"column": "x1", "transform": "power"}),
    "expression text as input": _set("terms.0.input", "log(x1)"),
    "arithmetic of numbers only": _set("terms.0.input", {"transform": "add", "operands": [1, 2]}),
    "three operands": _set("terms.0.input", {"transform": "add", "operands": ["a", "b", "c"]}),
    "scale of zero": _set(
        "terms.0.input", {"column": "x", "transform": "scale", "center": 0, "scale": 0}
    ),
    "too many edges": _set("terms.0.edges", lambda e: [float(i) for i in range(65536)]),
    "too many terms": _set("terms", lambda t: t * (10001 // len(t) + 1)),
    "long name": _set("terms.0.name", "x" * 1001),
    "negative column position": _set("terms.0.column", -1),
    "boolean missing level": _set("terms.0.missing_level", "yes"),
    "intervals left-closed": _set("terms.0.intervals", "left-closed"),
    "format_version 3": _set("format_version", 3),
    "drop columns as text": _set("missing", {"drop_columns": "x1"}),
    "unknown column kind": _set("column_kinds", {"x1": "evil"}),
    "three classes": _set("response.classes", ["a", "b", "c"]),
    "statsmodels dunder": _set(
        "family.statsmodels", {"family": "__import__", "link": "Log", "params": {}}
    ),
    "statsmodels unknown parameter": _set(
        "family.statsmodels", {"family": "Tweedie", "link": "Log", "params": {"__class__": 1}}
    ),
    "offset as expression text": _set("offset.terms", ["log(exposure)"]),
    "empty family name": _set("family.name", ""),
    "duplicate levels": _set("terms.1.levels", lambda lv: [lv[0], *lv]),
    "pair axis with a missing level": _set("terms.1.axes.0.missing_level", True),
    "pair cell as text": _set("terms.1.table.0.0", "0.5"),
    "pair with one axis": _set("terms.1.axes", lambda ax: ax[:1]),
    "pair table too long": _set("terms.1.table", lambda t: [[0.0]] * 65537),
}
#: Faults only the validator sees (JSON Schema cannot say them)
VALIDATOR_ONLY = {
    "NaN coefficient": _set("terms.0.theta.0", math.nan),
    "unsorted edges": _set("terms.0.edges", lambda e: e[::-1]),
    "wrong theta length": _set("terms.0.theta", lambda t: t[:-1]),
    "reference not a level": _set("terms.1.reference", "zzz"),
    "pair table of the wrong shape": _set("terms.1.table", lambda t: t[:-1]),
    "pair row of the wrong length": _set("terms.1.table.0", lambda r: r + [0.0]),
    "pair cell NaN": _set("terms.1.table.0.0", math.nan),
}


@pytest.mark.parametrize("fault", sorted(BOTH))
def test_both_refuse_what_the_schema_can_say(fault):
    # the description a fault applies to: a categorical term (terms[1] of VALID[1]), a
    # statsmodels family (VALID[3]), a classifier (VALID[-2]), a pair term (the last);
    # else VALID[0]
    base = {"duplicate levels": 1, "statsmodels dunder": 3,
            "statsmodels unknown parameter": 3, "three classes": -2}.get(fault, 0)  # fmt: skip
    if fault.startswith("pair"):  # the pair term (terms[1] of the last)
        base = -1
    spec = BOTH[fault](copy.deepcopy(VALID[base]))
    assert not CHECKER.is_valid(spec)
    with pytest.raises(ValueError, match="model description|not a model description"):
        validate(spec)


@pytest.mark.parametrize("fault", sorted(VALIDATOR_ONLY))
def test_the_validator_refuses_what_the_schema_cannot_say(fault):
    spec = VALIDATOR_ONLY[fault](copy.deepcopy(VALID[-1 if fault.startswith("pair") else 1]))
    assert CHECKER.is_valid(spec)  # documented in the schema's description
    with pytest.raises(ValueError, match="model description"):
        validate(spec)
