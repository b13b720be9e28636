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

from . import _moved
from ._version import __version__ as __version__

# pickles of v0.1.0 name the flat module paths (binarsity_stats.model._model, ...)
_moved.install()

#: public name → the module that defines it
_LAZY: dict[str, str] = {
    # Engine: binning, estimators, solvers
    "Binarizer": ".design._binarizer",
    "BinarsityGLM": ".sklearn._estimator",
    "BinarsityClassifier": ".sklearn._estimator",
    "BinarsityGLMCV": ".sklearn._estimator_cv",
    "BinarsityClassifierCV": ".sklearn._estimator_cv",
    "ConvergenceWarning": ".engine._solvers",
    "prox_binarsity": ".penalty._prox",
    "prox_tv": ".penalty._prox",
    # Modelling layer (formulas, results, plots live behind these names)
    "glm": ".model._model",
    "BinarsityModel": ".model._model",
    "BinarsityResults": ".model._results",
    "PathResults": ".model._path_results",
    "CVResults": ".model._path_results",
    "RefitResults": ".model._refit",
    "BootstrapResults": ".model._bootstrap",
    "load_fair": "._datasets",
    "load_wine_quality": "._datasets",
    # Model comparison
    "anova": ".model._compare",
    "compare": ".model._compare",
    "heldout": ".model._heldout",
    # Pair terms: which bin(a):bin(b) a fit is missing
    "rank_pairs": ".model._rank_pairs",
    # The neutral model description (to_spec / from_spec)
    "from_spec": ".design._spec",
    "SpecModel": ".design._spec",
    # Exports (read only the description)
    "to_sql": ".export._sql",
    "scorecard": ".export._scorecard",
    "Scorecard": ".export._scorecard",
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
    "load_wine_quality",
    "anova",
    "compare",
    "heldout",
    "rank_pairs",
    "from_spec",
    "SpecModel",
    "to_sql",
    "scorecard",
    "Scorecard",
]

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs
    from .design._binarizer import Binarizer
    from .model._bootstrap import BootstrapResults
    from .model._compare import anova, compare
    from .model._heldout import heldout
    from .model._rank_pairs import rank_pairs
    from ._datasets import load_fair, load_wine_quality
    from .sklearn._estimator import BinarsityClassifier, BinarsityGLM
    from .sklearn._estimator_cv import BinarsityClassifierCV, BinarsityGLMCV
    from .export._sql import to_sql
    from .model._model import BinarsityModel, glm
    from .model._path_results import CVResults, PathResults
    from .penalty._prox import prox_binarsity, prox_tv
    from .model._refit import RefitResults
    from .model._results import BinarsityResults
    from .export._scorecard import Scorecard, scorecard
    from .engine._solvers import ConvergenceWarning
    from .design._spec import SpecModel, from_spec


#: subpackages reachable as attributes before anything imported them
#: (``bstats.families.NegativeBinomial``)
_SUBPACKAGES = ("families",)


def __getattr__(name: str) -> Any:
    if name in _SUBPACKAGES:
        return importlib.import_module(f".{name}", __name__)
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
