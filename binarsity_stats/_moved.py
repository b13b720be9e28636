"""Old module paths of the flat layout (v0.1.0), resolved to where the code lives now.

Pickles name the module of every class they hold: a model pickled by v0.1.0 names
``binarsity_stats.model._model.BinarsityModel``, ``binarsity_stats.design._binarizer.Binarizer``
and so on. The package now keeps its modules in folders by layer (``model/``,
``design/``, …); :data:`MOVED` maps each old name to its new one and
:class:`MovedModuleFinder` (appended to :data:`sys.meta_path` when the package is
imported, so it is asked only after the ordinary finders found nothing) makes an
import of an old name return the new module object itself — the same classes, so
``isinstance`` holds and a pickle loads unchanged. New code imports the new paths.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from types import ModuleType

#: old module name (below ``binarsity_stats``) → its module now
MOVED: dict[str, str] = {
    "_binning": "kernels._binning",
    "_histogram": "kernels._histogram",
    "_glm_kernels": "kernels._glm_kernels",
    "_fused_lasso": "kernels._fused_lasso",
    "_tv_prox": "kernels._tv_prox",
    "_cd_fast": "kernels._cd_fast",
    "_dense": "kernels._dense",
    "_gram_fast": "kernels._gram_fast",
    "_isotonic": "kernels._isotonic",
    "_cox_fast": "kernels._cox_fast",
    "_validation": "core._validation",
    "_base": "core._base",
    "_families": "families._families",
    "_cox": "families._cox",
    "_blocks": "penalty._blocks",
    "_penalty": "penalty._penalty",
    "_prox": "penalty._prox",
    "_metric": "penalty._metric",
    "_binarizer": "design._binarizer",
    "_design": "design._design",
    "_features": "design._features",
    "_spec": "design._spec",
    "_identify": "design._identify",
    "_problem": "engine._problem",
    "_solvers": "engine._solvers",
    "_gram": "engine._gram",
    "_polish": "engine._polish",
    "_relax": "engine._relax",
    "_path": "engine._path",
    "_formula": "formula._formula",
    "_dask": "distributed._dask",
    "_dask_model": "distributed._dask_model",
    "_dask_solve": "distributed._dask_solve",
    "_model": "model._model",
    "_results": "model._results",
    "_path_results": "model._path_results",
    "_refit": "model._refit",
    "_bootstrap": "model._bootstrap",
    "_compare": "model._compare",
    "_export_sql": "export._sql",
    "_scorecard": "export._scorecard",
    "standalone_scorer": "design.standalone_scorer",
    "_summary": "report._summary",
    "_plotting": "report._plotting",
    "_report": "report._report",
    "_estimator": "sklearn._estimator",
    "_estimator_cv": "sklearn._estimator_cv",
    "_estimator_results": "sklearn._estimator_results",
}

_PACKAGE = __name__.rpartition(".")[0]


class _AliasLoader(importlib.abc.Loader):
    """Loads an old name as the module that lives under the new one."""

    def __init__(self, new_name: str) -> None:
        self.new_name = new_name

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(self.new_name)
        self._spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # the new module is already executed; importlib binds it under the old name but
        # has set its __spec__ to the old name's: put back its own, or its relative
        # imports would see __package__ != __spec__.parent
        module.__spec__ = self._spec


class MovedModuleFinder(importlib.abc.MetaPathFinder):
    """Finds ``binarsity_stats.<old name>`` for every name of :data:`MOVED`."""

    def find_spec(self, fullname: str, path: object = None, target: object = None):
        package, _, name = fullname.rpartition(".")
        if package != _PACKAGE or name not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(
            fullname, _AliasLoader(f"{_PACKAGE}.{MOVED[name]}")
        )


def install() -> None:
    """Append the finder to :data:`sys.meta_path` once."""
    if not any(isinstance(f, MovedModuleFinder) for f in sys.meta_path):
        sys.meta_path.append(MovedModuleFinder())
