"""Build the Cython kernels of binarsity_stats.

Every ``binarsity_stats/kernels/*.pyx`` file becomes an extension module. Set the
environment variable ``BINARSITY_BOUNDSCHECK=1`` to build the kernels with
bounds and initialisation checks on (the hardening CI job does this).
"""

import os
from pathlib import Path

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

HERE = Path(__file__).parent
CHECKED = os.environ.get("BINARSITY_BOUNDSCHECK", "0") == "1"
#: The kernels are independent: cythonized and compiled in parallel, one job per core.
JOBS = max(1, min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1), 8))

directives = {
    "language_level": 3,
    "boundscheck": CHECKED,
    "wraparound": False,
    "initializedcheck": CHECKED,
    "cdivision": True,
    "embedsignature": True,
}

extensions = [
    Extension(
        f"binarsity_stats.kernels.{pyx.stem}",
        [str(pyx.relative_to(HERE))],
        include_dirs=[np.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        # -g0: no debug symbols (a 7.7 MB wheel became a small one; nothing reads them)
        extra_compile_args=["-O3", "-g0"],
    )
    for pyx in sorted((HERE / "binarsity_stats" / "kernels").glob("*.pyx"))
]

setup(
    ext_modules=cythonize(extensions, compiler_directives=directives, nthreads=JOBS),
    options={"build_ext": {"parallel": JOBS}},
)
