"""Two checkouts of the package timed in turns in one run (issue 23: "no slower than before").

``python -m benchmarks.side_by_side OLD_TREE NEW_TREE [--rounds 4] [--data-dir DIR]``

Each tree must have its kernels built in place (``python setup.py build_ext --inplace``).
For each round, a fresh Python process per tree imports that tree's package
(``PYTHONPATH=<tree>``, working directory a temporary folder, one BLAS thread) and times,
in CPU seconds (``time.process_time``, best of ``--repeats``):

* ``BinarsityGLM(family="binomial", lam=λ, n_bins=50, penalty_weights="uniform",
  tol=t).fit(X, y)`` on the ``speed`` suite's problems (simulated n = 20,000, p = 28;
  Adult's continuous features), λ ∈ {1e-3, 1e-4};
* ``glm("y ~ bin(x0) + …", adult, family="binomial").fit_cv(folds=K, random_state=0,
  n_jobs=1)`` on 3,000 rows (K = 3) and on all rows (K = 10).

The trees alternate (old, new, old, new, …) so that a change of the machine's load
falls on both. CPU seconds, not wall: on a shared machine the wall time holds the other
processes' share. Printed: the median over rounds per side, new / old, and whether both
sides returned the same value (the coefficients' sum, the CV's ``lam_min``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from ._data import load_real, simulate_logistic

_CHILD = r"""
import json, sys, time, warnings
import numpy as np, pandas as pd
import binarsity_stats as bs
warnings.simplefilter("ignore")
d = np.load(sys.argv[1]); repeats = int(sys.argv[2]); out = {}
def timed(name, fn, reps):
    cpu, value = [], None
    for _ in range(reps):
        c0 = time.process_time(); value = fn(); cpu.append(time.process_time() - c0)
    out[name] = {"cpu": min(cpu), "value": value}
for data in ("simulated", "adult"):
    X, y = d[data + "_X"], d[data + "_y"]
    for lam, tol in ((1e-3, 1e-7 if data == "simulated" else 1e-6), (1e-4, 1e-7)):
        def fit(X=X, y=y, lam=lam, tol=tol):
            est = bs.BinarsityGLM(family="binomial", lam=lam, n_bins=50,
                                  penalty_weights="uniform", tol=tol).fit(X, y)
            return float(np.sum(est.coef_))
        timed(f"fit {data} lam={lam:g}", fit, repeats)
X, y = d["adult_X"], d["adult_y"]
df = pd.DataFrame(X, columns=[f"x{i}" for i in range(X.shape[1])]); df["y"] = y
formula = "y ~ " + " + ".join(f"bin(x{i})" for i in range(X.shape[1]))
def cv(frame, folds):
    res = bs.glm(formula, frame, family="binomial").fit_cv(folds=folds, random_state=0, n_jobs=1)
    return float(res.lam_min)
timed("fit_cv adult 3000 rows, 3 folds", lambda: cv(df.sample(3000, random_state=0), 3), repeats)
timed("fit_cv adult all rows, 10 folds", lambda: cv(df, 10), max(1, repeats - 1))
print(json.dumps(out))
"""


def _run(tree: Path, data: Path, repeats: int, cwd: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree), OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(data), str(repeats)],
        env=env, cwd=cwd, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    """Time both trees in turns and print the table (module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.side_by_side")
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--data-dir", type=Path, default=Path("../shared/data"))
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        import numpy as np

        sim = simulate_logistic(20_000, 28, seed=0)
        X, y, _ = load_real("adult", args.data_dir)
        data = Path(tmp) / "data.npz"
        np.savez(data, simulated_X=sim.X, simulated_y=sim.y, adult_X=X, adult_y=y)
        runs: dict[str, list[dict]] = {"old": [], "new": []}
        for _ in range(args.rounds):
            for side, tree in (("old", args.old), ("new", args.new)):
                runs[side].append(_run(tree.resolve(), data, args.repeats, tmp))
    print("| problem | old CPU s | new CPU s | new / old | same value |")
    print("|---|---|---|---|---|")
    for name in runs["old"][0]:
        old = statistics.median(r[name]["cpu"] for r in runs["old"])
        new = statistics.median(r[name]["cpu"] for r in runs["new"])
        same = {r[name]["value"] for r in runs["old"]} == {r[name]["value"] for r in runs["new"]}
        print(f"| {name} | {old:.3f} | {new:.3f} | {new / old:.2f} | {same} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
