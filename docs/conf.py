"""Sphinx configuration of the binarsity_stats documentation.

Build (warnings are errors, vignettes executed)::

    pip install ".[docs]"
    sphinx-build -W -b html docs docs/_build/html

The vignettes live in ``vignettes/`` at the top of the repository; ``docs/vignettes`` is
a relative symbolic link to that folder, so they are part of the source tree and
myst-nb executes every one of them on each build (``nb_execution_mode = "force"``): a
vignette that raises fails the build.
"""

from __future__ import annotations

import inspect
import os
import re
from pathlib import Path

import binarsity_stats

HERE = Path(__file__).resolve().parent

# The vignettes must be reachable from the source tree (a checkout without the link —
# e.g. an archive that dropped symlinks — is reported clearly rather than silently
# building a site without them).
if not (HERE / "vignettes").is_dir():
    raise RuntimeError(
        "docs/vignettes is missing: it must be a symbolic link to ../vignettes "
        "(ln -s ../vignettes docs/vignettes)."
    )

# The notebooks' kernels draw with matplotlib's inline backend (ipykernel's default), so
# MPLBACKEND must not force another backend on them.
if os.environ.get("MPLBACKEND", "").lower() == "agg":
    del os.environ["MPLBACKEND"]
# Figures at 150 dpi (slide quality): the kernels read docs/matplotlibrc.
os.environ["MATPLOTLIBRC"] = str(HERE / "matplotlibrc")
# Keep the kernels' linear algebra single-threaded: the fits are histogram passes and
# the CI machine has two cores.
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")

# -- Project information ----------------------------------------------------------------
project = "binarsity_stats"
author = "binarsity_stats developers"
copyright = "2026, binarsity_stats developers"  # noqa: A001 - Sphinx's name
release = binarsity_stats.__version__
version = ".".join(release.split(".")[:2])

# -- General configuration --------------------------------------------------------------
extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_nb",
    "sphinx_copybutton",
]

source_suffix = {".rst": "restructuredtext", ".md": "myst-nb"}
root_doc = "index"
templates_path = ["_templates"]
exclude_patterns = [
    "_build",
    "jupyter_execute",
    "**.ipynb_checkpoints",
    "vignettes/README.md",
]

# -- autodoc / autosummary / numpydoc ---------------------------------------------------
autosummary_generate = True
autosummary_imported_members = True
autodoc_typehints = "none"  # numpydoc's Parameters sections carry the types
autodoc_default_options = {"member-order": "bysource"}
numpydoc_show_class_members = False  # the class template lists the methods itself
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks: set[str] = set()  # validated by the test suite instead

# -- MyST / myst-nb ---------------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
nb_execution_mode = "force"
nb_execution_raises_on_error = True
nb_execution_show_tb = True
nb_execution_timeout = 600  # seconds per cell: a guard against a hung cell (the slowest cell takes ~100 s on a loaded 2-core machine)
nb_merge_streams = True
nb_execution_in_temp = False  # cells run in the vignette's folder

# -- HTML -------------------------------------------------------------------------------
html_theme = "furo"
html_title = f"binarsity_stats {release}"
html_show_sourcelink = False

copybutton_prompt_text = r">>> |\.\.\. |\$ "
copybutton_prompt_is_regexp = True


# -- Hooks ------------------------------------------------------------------------------
# scikit-learn's machinery (parameter getters and setters, metadata-routing request
# methods generated per estimator) is not part of this package's API; its docstrings
# cross-reference scikit-learn's own site.
_SKLEARN_MACHINERY = {"get_params", "set_params", "get_metadata_routing", "set_output"}

# A bare name ending in an underscore is a reStructuredText reference ("name_"); in a
# numpydoc type such as "shape (n_features_in_,)" it means the attribute. Quote such
# names when they are directly followed by a comma or a closing bracket.
_TRAILING_UNDERSCORE = re.compile(r"(?<![`\w*])([A-Za-z]\w*_)(?=[,)\]])")


def _skip_sklearn_machinery(app, what, name, obj, skip, options):
    if name in _SKLEARN_MACHINERY or (name.startswith("set_") and name.endswith("_request")):
        return True
    return None


# The class template documents inherited members (a results class gets its methods from
# base classes in model/, one per job); only those defined in this package, not those of
# scikit-learn's mixins (ClassifierMixin.score).
def _skip_foreign_members(app, what, name, obj, skip, options):
    target = getattr(obj, "fget", None) or getattr(obj, "func", None) or obj
    if what != "class" or not (inspect.isroutine(target) or inspect.isdatadescriptor(obj)):
        return None  # attributes (documented by #: comments) are the class's own
    module = getattr(target, "__module__", None) or "binarsity_stats"
    return True if module.split(".")[0] != "binarsity_stats" else None


def _quote_trailing_underscores(app, what, name, obj, options, lines):
    for i, line in enumerate(lines):
        if not line.lstrip().startswith((">>>", "...")):
            lines[i] = _TRAILING_UNDERSCORE.sub(r"``\1``", line)


def setup(app):
    app.connect("autodoc-skip-member", _skip_sklearn_machinery)
    app.connect("autodoc-skip-member", _skip_foreign_members)
    app.connect("autodoc-process-docstring", _quote_trailing_underscores, priority=900)
