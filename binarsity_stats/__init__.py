"""binarsity_stats: interpretable GLMs on binned features under the binarsity penalty.

Alaya, Bussy, Gaïffas & Guilloux, "Binarsity: a penalization for one-hot encoded
features in linear supervised learning", JMLR 20(118), 2019.
"""

__version__ = "0.1.0"

# Engine: binning, estimators, solvers
from ._binarizer import Binarizer  # noqa: E402
from ._estimator import BinarsityClassifier, BinarsityGLM  # noqa: E402
from ._prox import prox_binarsity, prox_tv  # noqa: E402
from ._solvers import ConvergenceWarning  # noqa: E402

__all__: list[str] = [
    "Binarizer",
    "BinarsityGLM",
    "BinarsityClassifier",
    "ConvergenceWarning",
    "prox_binarsity",
    "prox_tv",
]

# Modelling layer (formulas, results, plots live behind these names)
from ._datasets import load_fair  # noqa: E402
from ._model import BinarsityModel, glm  # noqa: E402
from ._results import BinarsityResults, CVResults, PathResults, RefitResults  # noqa: E402

__all__ += [
    "glm",
    "BinarsityModel",
    "BinarsityResults",
    "PathResults",
    "CVResults",
    "RefitResults",
    "load_fair",
]
