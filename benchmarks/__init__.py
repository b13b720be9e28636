"""Reproducible benchmarks of binarsity_stats against its peers and the paper.

Run a suite with ``python -m benchmarks SUITE [--quick] [--data-dir DIR] [--out DIR]``
from the repository root. One module per suite:

* :mod:`benchmarks.speed` — issue 2's speed target, ours vs tick at equal objective;
* :mod:`benchmarks.paper` — the paper's real-data protocol (AUC and training time);
* :mod:`benchmarks.timing` — the paper's computing-time figure (p grows);
* :mod:`benchmarks.scaling` — n from 1e4 to 1e7: time, peak memory, log-log slope;
* :mod:`benchmarks.prox` — the binarsity prox alone, and its error against cvxpy;
* :mod:`benchmarks.rate` — Theorem 2's n^{-2/3} prediction-error rate;
* :mod:`benchmarks.families` — the generic statsmodels-family path vs the Cython kernels;
* :mod:`benchmarks.mapping` — evidence that tick minimises our objective at λ = 1/C.

Results (markdown, CSV, PNG, machine facts) go to ``benchmarks/results/`` (git-ignored).
"""
