"""Cost of the Python module against C++ (issue 17's bars; docs/python.md, docs/benchmarks.md).
Run by hand after a build, with Debian's interpreter:

    PYTHONPATH=build/python /usr/bin/python3 benchmarks/python_overhead.py
    build/bin/bench-batch-eval --benchmark_filter='rnea/(kernel-sum|batch)'   # the C++ side

Prints the time of one call from Python (one state: the Evaluator on a row, and Model.rnea
on q, qd, qdd, as contiguous float64 arrays and as strided views) and of batches of 100,000 states on 1 and 2 threads; the fastest of several
repetitions, wall-clock."""
import os
import sys
import time

import numpy as np

import liembs

ARM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "configs", "examples", "iiwa-arm.toml")


def fastest(function, repeat, number):
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            function()
        best = min(best, (time.perf_counter() - start) / number)
    return best


def main():
    arm = liembs.Model(ARM)
    rng = np.random.default_rng(1)
    rows = 100_000
    q, qd, qdd = (rng.uniform(-3, 3, (rows, 7)), rng.uniform(-1, 1, (rows, 7)), rng.uniform(-1, 1, (rows, 7)))
    states = np.hstack([q, qd, qdd])
    evaluator = arm.evaluator("rnea", threads=1)
    row = states[0].copy()
    one_row = fastest(lambda: evaluator(row), 7, 20000)
    q0, qd0, qdd0 = q[0].copy(), qd[0].copy(), qdd[0].copy()
    named = fastest(lambda: arm.rnea(q0, qd0, qdd0), 7, 20000)  # the fast path: contiguous float64
    q1, qd1, qdd1 = (np.repeat(a, 2)[::2] for a in (q0, qd0, qdd0))  # the same values as strided views
    assert not q1.flags.c_contiguous and np.array_equal(arm.rnea(q1, qd1, qdd1), arm.rnea(q0, qd0, qdd0))
    converted = fastest(lambda: arm.rnea(q1, qd1, qdd1), 7, 20000)  # the general path: converted first
    print(f"one state, Evaluator(row):        {one_row * 1e9:8.0f} ns per call")
    print(f"one state, Model.rnea(q, qd, qdd): {named * 1e9:8.0f} ns per call (contiguous float64: read in place)")
    print(f"one state, Model.rnea on views:    {converted * 1e9:8.0f} ns per call (strided: converted first)")
    evaluator.threads = 1
    per_row = fastest(lambda: evaluator(states), 7, 3) / rows  # the C++ batch loop: about one kernel call a row
    print(f"C++ batch, per state:              {per_row * 1e9:8.0f} ns; one call from Python costs "
          f"{(one_row - per_row) * 1e9:.0f} ns (Evaluator), {(named - per_row) * 1e9:.0f} ns (Model.rnea) and "
          f"{(converted - per_row) * 1e9:.0f} ns (Model.rnea on views) more")
    for threads in (1, 2):
        evaluator.threads = threads
        batch = fastest(lambda: evaluator(states), 7, 3)
        named_batch = fastest(lambda: arm.rnea(q, qd, qdd, threads=threads), 7, 3)
        print(f"{rows} states on {threads} thread(s): Evaluator {batch * 1e3:7.2f} ms, Model.rnea {named_batch * 1e3:7.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
