"""Suite ``mapping``: evidence that tick minimises our objective at λ = 1/C.

On small simulated problems, tick's SVRG is run to a tight tolerance on the one-hot
matrix of our bin codes; then

* tick's own objective (``solver.objective``) and ours (:mod:`benchmarks._objective`)
  are evaluated at tick's solution: they must agree to rounding;
* the KKT conditions of *our* objective (design.md §2) are checked at λ = 1/C and at
  λ = 2/C and 1/(2C): the violation must vanish only at λ = 1/C;
* λ̂, the median |S_jl| over the jumps of tick's solution — the λ the solution is
  optimal for — must equal 1/C.
"""

from __future__ import annotations

import warnings

import numpy as np

from ._common import SuiteOutput
from ._data import simulate_logistic
from ._objective import binomial_kkt, binomial_objective
from ._ours import bin_codes
from ._tick import _tick_modules, blocks, onehot_csr


def run(out: SuiteOutput, quick: bool, **_: object) -> None:
    """Run the suite and fill ``out``.

    Parameters
    ----------
    out : SuiteOutput
        Collector of the rows.
    quick : bool
        Smaller problems.
    """
    LogisticRegression, _ = _tick_modules()
    sizes = [(2_000, 4, 10)] if quick else [(2_000, 4, 10), (20_000, 10, 20)]
    for n, p, n_bins in sizes:
        sim = simulate_logistic(n, p, seed=1)
        codes, block_ptr, source = bin_codes(sim.X, n_bins)
        X = onehot_csr(codes, block_ptr)
        starts, lengths = blocks(block_ptr)
        for C in (1e2, 1e3, 1e4):
            learner = LogisticRegression(
                penalty="binarsity",
                C=C,
                tol=1e-13,
                max_iter=3000,
                blocks_start=starts,
                blocks_length=lengths,
                random_state=0,
                verbose=False,
            )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                learner.fit(X, sim.y)
            coef, b0 = np.asarray(learner.weights), float(learner.intercept)
            tick_obj = float(learner._solver_obj.objective(np.append(coef, b0)))
            ours = binomial_objective(codes, block_ptr, sim.y, coef, b0, 1.0 / C)
            kkt = {f: binomial_kkt(codes, block_ptr, sim.y, coef, b0, f / C) for f in (0.5, 1, 2)}
            out.add(
                n=n,
                p=p,
                n_bins=n_bins,
                codes=source,
                C=C,
                strength=learner._prox_obj.strength,
                tick_objective=tick_obj,
                our_objective=ours,
                rel_diff=abs(tick_obj - ours) / abs(ours),
                kkt_viol_lam_1_over_C=kkt[1]["max_violation"],
                kkt_viol_lam_2_over_C=kkt[2]["max_violation"],
                kkt_viol_lam_half_over_C=kkt[0.5]["max_violation"],
                intercept_grad=kkt[1]["intercept_grad"],
                n_jumps=kkt[1]["n_jumps"],
                lam_hat_times_C=kkt[1]["lam_hat"] * C,
                lam_hat_rel_spread=(kkt[1]["lam_hat_q90"] - kkt[1]["lam_hat_q10"]) * C,
            )
    out.note(
        "max KKT violation is relative to the λ tested; λ̂ = median |S_jl| over jumps; "
        "tick: LogisticRegression(penalty='binarsity', solver='svrg', tol=1e-13)"
    )
    out.write()
