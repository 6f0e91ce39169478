"""oslr against what a skilled user writes (issue 26's anchors, `benchmarks.anchors`).

`python -m benchmarks.anchor_ratios [--runs ...] [--horizon T] [--repeats N] [--out DIR]` times,
for ogd-full, linucb and ftpsl, the oslr program of the throughput row (the compiled chunk of
`runs` runs over T rounds, as `oslr.simulate` runs it) and the same study in batched NumPy
float64 and float32 and in numba (float64, `prange` over runs; its compilation is a warm-up call
outside the timing), all in this one process, timed in turn, with wall and process CPU time.
Each row reports run-rounds per second of every side by CPU time and by wall time, the best
alternative, and oslr / best (by CPU time: the machine is shared, and XLA and numba both use
every core, so CPU seconds compare the work). Writes anchors.json and ANCHORS.md to DIR.
Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from benchmarks import anchors
from benchmarks.cases import BY_NAME
from benchmarks.machine import machine
from benchmarks.throughput import jax_program, markdown_table, timed_in_turn

#: the runs of each row (issue 26's table: linucb 1024, the others 256)
RUNS = {"ogd-full": 256, "linucb": 1024, "ftpsl": 256}


def measure(name: str, runs: int, horizon: int, repeats: int) -> dict:
    """One row: run-rounds/s of oslr and of each anchor (CPU and wall), best and ratio."""
    calls = {"oslr": jax_program(BY_NAME[name], runs, horizon)["call"],
             "numpy_f64": anchors.numpy_batched(name, runs, horizon, np.float64),
             "numpy_f32": anchors.numpy_batched(name, runs, horizon, np.float32)}
    numba_call = anchors.numba_batched(name, runs, horizon)
    if numba_call is not None:
        numba_call()  # compiles
        calls["numba"] = numba_call
    for call in calls.values():
        call()  # warm-up
    sec = timed_in_turn(calls, repeats, min_seconds=0.0)
    work = runs * horizon
    row = {"learner": name, "runs": runs, "T": horizon}
    for side, t in sec.items():
        row[f"{side}_cpu"] = round(work / t["cpu"])
        row[f"{side}_wall"] = round(work / t["wall"])
    others = [s for s in sec if s != "oslr"]
    best = max(others, key=lambda s: row[f"{s}_cpu"])
    row["best_alternative"] = best
    row["oslr_over_best_cpu"] = round(row["oslr_cpu"] / row[f"{best}_cpu"], 2)
    row["oslr_over_best_wall"] = round(row["oslr_wall"] / row[f"{best}_wall"], 2)
    if numba_call is None:
        row["note"] = "numba not installed"
    return row


def to_markdown(rows: list[dict], stamp: dict) -> str:
    return "\n".join([
        "# oslr against batched NumPy and numba\n",
        f"`python -m benchmarks.anchor_ratios`, {stamp}.\n",
        "Run-rounds per second of the whole study (stream, learner, running metrics with 50 "
        "checkpoint copies), each side timed in turn in one process, median of the repeats; "
        "`_cpu` by process CPU time, `_wall` by wall time. `benchmarks/anchors.py` says what "
        "every side computes per run-round. oslr_over_best: oslr's rate over the best "
        "alternative's (chosen by CPU time).\n",
        markdown_table(rows)])


def main(argv=None) -> list[dict]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.anchor_ratios",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--learners", default=",".join(anchors.NAMES))
    parser.add_argument("--runs", type=int, default=None, help="runs of every row")
    parser.add_argument("--horizon", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", default=None, help="folder for anchors.json and ANCHORS.md")
    args = parser.parse_args(argv)
    rows = []
    for name in args.learners.split(","):
        rows.append(measure(name, args.runs or RUNS[name], args.horizon, args.repeats))
        print(json.dumps(rows[-1]), flush=True)
    if args.out:
        out = Path(args.out)
        stamp = machine()
        try:
            import numba

            stamp["numba"] = numba.__version__
        except ImportError:
            stamp["numba"] = None
        (out / "anchors.json").write_text(json.dumps({"machine": stamp, "rows": rows}, indent=1))
        (out / "ANCHORS.md").write_text(to_markdown(rows, _stamp_text(stamp)))
    return rows


def _stamp_text(stamp: dict) -> str:
    keep = ("cpu", "cores", "platform", "jax", "numpy", "numba", "date")
    return ", ".join(f"{k} {stamp[k]}" for k in keep if k in stamp)


if __name__ == "__main__":
    main()
