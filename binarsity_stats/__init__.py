"""binarsity_stats: interpretable GLMs on binned features under the binarsity penalty.

Alaya, Bussy, Gaïffas & Guilloux, "Binarsity: a penalization for one-hot encoded
features in linear supervised learning", JMLR 20(118), 2019.

The public names are imported on first use (PEP 562): ``import binarsity_stats`` loads
nothing heavy, ``binarsity_stats.glm`` loads the formula layer (formulaic, pandas),
``binarsity_stats.BinarsityGLM`` the estimators (scikit-learn), and statsmodels and
matplotlib are imported only by the methods that need them (``refit``, plots).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__ as __version__

#: public name → the module that defines it
_LAZY: dict[str, str] = {
    # Engine: binning, estimators, solvers
    "Binarizer": "._binarizer",
    "BinarsityGLM": "._estimator",
    "BinarsityClassifier": "._estimator",
    "BinarsityGLMCV": "._estimator_cv",
    "BinarsityClassifierCV": "._estimator_cv",
    "ConvergenceWarning": "._solvers",
    "prox_binarsity": "._prox",
    "prox_tv": "._prox",
    # Modelling layer (formulas, results, plots live behind these names)
    "glm": "._model",
    "BinarsityModel": "._model",
    "BinarsityResults": "._results",
    "PathResults": "._path_results",
    "CVResults": "._path_results",
    "RefitResults": "._refit",
    "BootstrapResults": "._bootstrap",
    "load_fair": "._datasets",
    # Model comparison
    "anova": "._compare",
    "compare": "._compare",
    # The neutral model description (to_spec / from_spec)
    "from_spec": "._spec",
    "SpecModel": "._spec",
    # Exports (read only the description)
    "to_sql": "._export_sql",
    "scorecard": "._scorecard",
    "Scorecard": "._scorecard",
}

__all__ = [
    "Binarizer",
    "BinarsityGLM",
    "BinarsityClassifier",
    "BinarsityGLMCV",
    "BinarsityClassifierCV",
    "ConvergenceWarning",
    "prox_binarsity",
    "prox_tv",
    "glm",
    "BinarsityModel",
    "BinarsityResults",
    "PathResults",
    "CVResults",
    "RefitResults",
    "BootstrapResults",
    "load_fair",
    "anova",
    "compare",
    "from_spec",
    "SpecModel",
    "to_sql",
    "scorecard",
    "Scorecard",
]

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs
    from ._binarizer import Binarizer
    from ._bootstrap import BootstrapResults
    from ._compare import anova, compare
    from ._datasets import load_fair
    from ._estimator import BinarsityClassifier, BinarsityGLM
    from ._estimator_cv import BinarsityClassifierCV, BinarsityGLMCV
    from ._export_sql import to_sql
    from ._model import BinarsityModel, glm
    from ._path_results import CVResults, PathResults
    from ._prox import prox_binarsity, prox_tv
    from ._refit import RefitResults
    from ._results import BinarsityResults
    from ._scorecard import Scorecard, scorecard
    from ._solvers import ConvergenceWarning
    from ._spec import SpecModel, from_spec


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
