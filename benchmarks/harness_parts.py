"""Where the harness's time goes: the idle learner's program with parts of the metrics removed.

`python -m benchmarks.harness_parts [LEARNER] [--runs R] [--horizon T]` compiles, for the
throughput row of LEARNER (default linucb), the row's own program and its idle learner's
(`benchmarks.harness`), then the idle program four more times with `oslr.metrics.update`
replaced for the build only: `no_copies` (the compensated sums without the 50 checkpoint
copies), `plain` (uncompensated float32 sums with the copies), `plain_no_copies`, and
`first_sum` (only the first running sum, e.g. the reward). Removing every metric is not a
variant: XLA then drops the stream too (nothing reads it). All are timed in turn in one process;
one JSON line per program: microseconds per run-round by wall and by process CPU time. What is
left in `first_sum` is the key schedule, the problem's draws, the protocol round and the loop.
Nothing here is asserted; it measures, it changes nothing in oslr.
"""

from __future__ import annotations

import argparse
import contextlib
import json

from benchmarks.cases import BY_NAME
from benchmarks.harness import idle_make
from benchmarks.throughput import jax_program, timed_in_turn
from oslr import families, metrics, program


def _compensated_without_copies(family, mstate, example, record, t, ckpts, stats):
    inc = families.family(family).increments(example, record, stats)
    run = {}
    for name, value in inc.items():
        s, e = metrics.two_sum(mstate["run"][name], value)
        run[name], run[name + "_lo"] = s, mstate["run"][name + "_lo"] + e
    return dict(mstate, run=run)


def _plain_without_copies(family, mstate, example, record, t, ckpts, stats):
    inc = families.family(family).increments(example, record, stats)
    return dict(mstate, run={n: mstate["run"][n] + inc[n] for n in mstate["run"]})


def _first_sum(family, mstate, example, record, t, ckpts, stats):
    inc = families.family(family).increments(example, record, stats)
    first = families.family(family).running_names(stats)[0]
    return dict(mstate, run={**mstate["run"], first: mstate["run"][first] + inc[first]})


#: variant -> (metrics.update replacement or None, compensated sums?)
VARIANTS = {
    "no_copies": (_compensated_without_copies, True),
    "plain": (None, False),
    "plain_no_copies": (_plain_without_copies, False),
    "first_sum": (_first_sum, False),
}


@contextlib.contextmanager
def _metrics(update, compensated: bool):
    real = metrics.update, metrics.compensated
    metrics.update = update or real[0]
    metrics.compensated = lambda: compensated
    try:
        yield
    finally:
        metrics.update, metrics.compensated = real


def measure(learner: str = "linucb", runs: int | None = None, horizon: int = 2000,
            repeats: int = 5) -> list[dict]:
    case = BY_NAME[learner]
    runs = runs or case.runs
    idle = idle_make(case, horizon)
    calls = {"row": jax_program(case, runs, horizon)["call"],
             "idle": jax_program(case, runs, horizon, make=idle)["call"]}
    for name, (update, compensated) in VARIANTS.items():
        program.clear_compiled()  # the batched functions are cached per learner and problem
        with _metrics(update, compensated):
            calls[name] = jax_program(case, runs, horizon, make=idle)["call"]
    program.clear_compiled()
    sec = timed_in_turn(calls, repeats, min_seconds=0.0)
    work = runs * horizon
    return [{"learner": learner, "program": name, "runs": runs, "T": horizon,
             "us_wall": round(1e6 * t["wall"] / work, 4), "us_cpu": round(1e6 * t["cpu"] / work, 4)}
            for name, t in sec.items()]


def main(argv=None) -> list[dict]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.harness_parts",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("learner", nargs="?", default="linucb")
    parser.add_argument("--runs", type=int, default=None)
    parser.add_argument("--horizon", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    rows = measure(args.learner, args.runs, args.horizon, args.repeats)
    for row in rows:
        print(json.dumps(row), flush=True)
    return rows


if __name__ == "__main__":
    main()
