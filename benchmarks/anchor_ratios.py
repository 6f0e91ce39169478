"""oslr against what a skilled user writes (issue 26's anchors, `benchmarks.anchors`).

`python -m benchmarks.anchor_ratios [--runs ...] [--horizon T] [--repeats N] [--sides ...]
[--out DIR]` times,
for ogd-full, linucb and ftpsl, the oslr program of the throughput row (the compiled chunk of
`runs` runs over T rounds, as `oslr.simulate` runs it) and the same study in batched NumPy
float64 and float32, in numba (float64, `prange` over runs; its compilation is a warm-up call
outside the timing) and as a plain JAX scan over batched runs (`benchmarks.plain_jax`, compiled
in its warm-up call), all in this one process, timed in turn, with wall and process CPU time.
Each row reports run-rounds per second of every side by CPU time and by wall time, the best
alternative, and oslr / best (on a CPU by CPU time: the machine is shared, and XLA and numba both
use every core, so CPU seconds compare the work; on an accelerator by wall time). Writes
anchors.json and ANCHORS.md to DIR (`-gpu` etc. off the CPU); `--render FILES` re-renders saved
rows.
Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from benchmarks import anchors, plain_jax
from benchmarks.cases import BY_NAME
from benchmarks.machine import machine
from benchmarks.throughput import jax_program, markdown_table, timed_in_turn

#: the runs of each row (issue 26's table: linucb 1024, the others 256)
RUNS = {"ogd-full": 256, "linucb": 1024, "ftpsl": 256}


#: the sides timed against oslr (`--sides` picks some: on a GPU at 65,536 runs the host's NumPy
#: and numba sides would take most of a lease)
SIDES = ("numpy_f64", "numpy_f32", "jax_plain", "numba")


def measure(name: str, runs: int, horizon: int, repeats: int,
            sides: tuple[str, ...] = SIDES) -> dict:
    """One row: run-rounds/s of oslr and of each of `sides` (CPU and wall), best and ratio."""
    calls = {"oslr": jax_program(BY_NAME[name], runs, horizon)["call"]}
    for side, dtype in (("numpy_f64", np.float64), ("numpy_f32", np.float32)):
        if side in sides:
            calls[side] = anchors.numpy_batched(name, runs, horizon, dtype)
    if "jax_plain" in sides:
        calls["jax_plain"] = plain_jax.plain_batched(name, runs, horizon)
    numba_call = anchors.numba_batched(name, runs, horizon) if "numba" in sides else None
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
    if "numba" in sides and numba_call is None:
        row["note"] = "numba not installed"
    return row


def compare(row: dict, clock: str) -> dict:
    """`row` with the best alternative by `clock` ("cpu" on a CPU: every side uses the same
    cores; "wall" on an accelerator, where oslr's process CPU time is only the host thread that
    launches its kernels) and oslr's rate over it by both clocks."""
    sides = [k[:-4] for k in row if k.endswith("_cpu") and k != "oslr_cpu"]
    best = max(sides, key=lambda s: row[f"{s}_{clock}"])
    out = {**row, "best_alternative": best, "compared_by": clock,
           "oslr_over_best_cpu": round(row["oslr_cpu"] / row[f"{best}_cpu"], 2),
           "oslr_over_best_wall": round(row["oslr_wall"] / row[f"{best}_wall"], 2)}
    if "jax_plain_cpu" in row:  # (rows measured before the plain JAX side have none)
        out["oslr_over_jax_plain"] = round(row[f"oslr_{clock}"] / row[f"jax_plain_{clock}"], 2)
    return out


def to_markdown(rows: list[dict], stamp: dict) -> str:
    return "\n".join([
        "# oslr against batched NumPy, numba and a plain JAX scan\n",
        f"`python -m benchmarks.anchor_ratios`, {_stamp_text(stamp)}.\n",
        "Run-rounds per second of the whole study (stream, learner, running metrics with 50 "
        "checkpoint copies), each side timed in turn in one process, median of the repeats; "
        "`_cpu` by process CPU time, `_wall` by wall time. `benchmarks/anchors.py` says what "
        "every side computes per run-round. oslr_over_best: oslr's rate over the best "
        "alternative's, chosen by `compared_by` (CPU time on a CPU; wall time on an accelerator, "
        "where the NumPy and numba sides run on the host's cores); oslr_over_jax_plain: oslr's "
        "rate over the plain JAX scan's (`benchmarks/plain_jax.py`) by the same clock. The "
        "plain FTPSL scan draws its (M + 1) x (d + 1) uniforms a run-round with JAX's default "
        "threefry and selects with `lax.top_k`, what a JAX user writes first; oslr's round "
        "uses an unrolled hash for small draws and a rank test for the selection (RESULTS.md, "
        "\"FTPSL's round, piece by piece\": `lax.top_k`'s indices 2.4x slower than the rank "
        "test), hence the gap. A row's T is shorter where a side is slow (ftpsl).\n",
        markdown_table(rows)])


def write(rows: list[dict], stamp: dict, out: Path) -> list[dict]:
    """Compare every row by the platform's clock and write anchors{suffix}.json and
    ANCHORS{suffix}.md to `out` (suffix -gpu etc. off the CPU)."""
    clock = "cpu" if stamp["platform"] == "cpu" else "wall"
    rows = [compare(r, clock) for r in rows]
    suffix = "" if stamp["platform"] == "cpu" else f"-{stamp['platform']}"
    (out / f"anchors{suffix}.json").write_text(json.dumps({"machine": stamp, "rows": rows},
                                                          indent=1))
    (out / f"ANCHORS{suffix}.md").write_text(to_markdown(rows, stamp))
    return rows


def main(argv=None) -> list[dict]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.anchor_ratios",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--learners", default=",".join(anchors.NAMES))
    parser.add_argument("--runs", type=int, default=None, help="runs of every row")
    parser.add_argument("--horizon", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sides", default=",".join(SIDES),
                        help=f"the sides timed against oslr, of {','.join(SIDES)}")
    parser.add_argument("--out", default=None, help="folder for anchors.json and ANCHORS.md")
    parser.add_argument("--results", default=None, metavar="JSON",
                        help="also merge the rows into this results.json (key `anchors`, one "
                             "row per learner and cores: RESULTS.md's table); OSLR_CPUS=0 in "
                             "the environment runs every side on core 0 (`oslr.cpus`)")
    parser.add_argument("--render", nargs="+", default=None, metavar="JSON",
                        help="measure nothing: merge the rows of these anchors.json files (one "
                             "machine) and write them to --out")
    args = parser.parse_args(argv)
    if args.render:
        saved = [json.loads(Path(p).read_text()) for p in args.render]
        return write([r for f in saved for r in f["rows"]], saved[0]["machine"],
                     Path(args.out or "."))
    sides = tuple(args.sides.split(","))
    unknown = sorted(set(sides) - set(SIDES))
    if unknown or not sides:
        parser.error(f"--sides {args.sides}: unknown {unknown}; choose from {','.join(SIDES)}")
    rows = []
    for name in args.learners.split(","):
        rows.append(measure(name, args.runs or RUNS[name], args.horizon, args.repeats, sides))
        print(json.dumps(rows[-1]), flush=True)
    if args.out:
        stamp = machine()
        try:
            import numba

            stamp["numba"] = numba.__version__
        except ImportError:
            stamp["numba"] = None
        rows = write(rows, stamp, Path(args.out))
    if args.results:
        merge_results(Path(args.results), rows)
    return rows


def merge_results(path: Path, rows: list[dict]) -> None:
    """Put `rows` into the results.json at `path` (key `anchors`), each compared by the
    platform's clock and stamped with the cores it ran on and the date, replacing the rows of
    the same learner on the same cores."""
    from benchmarks.machine import cores
    from benchmarks.suite import merge_rows

    stamp = machine()
    clock = "cpu" if stamp["platform"] == "cpu" else "wall"
    new = [{**compare(r, clock), "cpus": cores(), "date": stamp["date"]} for r in rows]
    merge_rows(path, "anchors", new, same=lambda r: (r["learner"], r["cpus"]))


def _stamp_text(stamp: dict) -> str:
    keep = ("cpu", "cores", "device_kind", "platform", "jax", "numpy", "numba", "date")
    return ", ".join(f"{k} {stamp[k]}" for k in keep if k in stamp)


if __name__ == "__main__":
    main()
