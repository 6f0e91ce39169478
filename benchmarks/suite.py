"""The benchmark suite: `python -m benchmarks [--quick | --smoke] [--only PARTS] [--out DIR]`.

Parts (all by default):
  throughput  every registered learner against its float64 NumPy loop (and peer), with program
              memory and GFLOP/s as a share of a float32 matmul peak measured in the same run;
  scaling     throughput versus parallel runs (1 ... 4096) and versus d (10 ... 1000), plotted,
              and foster-hedge versus its number of subsets N = C(d, 3);
  launch      rounds/s and run-rounds/s of linucb and ftpsl against runs and the loop's unroll
              (`oslr.simulate(unroll=U)`): where a round is bound by launches and loop overhead;
  memory      peak resident memory of a 64-run study at T = 10^3 and 10^6 (fresh processes).

Modes: full (T = 2000 rows, the whole grids), `--quick` (T = 500, coarse grids; under 5 minutes
on a 2-core CPU), `--smoke` (tiny sizes; the test suite runs it). On an accelerator the runs
sweep goes on to 16384 and 65536 runs, and `--runs N` sets every throughput row's runs. Results
go to DIR as results.json, RESULTS.md, scaling_runs.csv, scaling_d.csv, memory_T.csv and
scaling.png, with a `-gpu` (etc.) suffix off the CPU. Every file is stamped with the machine,
versions and date.
Nothing is asserted: speed is reported, never tested.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from pathlib import Path

from benchmarks import cases as case_table
from benchmarks.machine import machine, matmul_peak
from benchmarks.notes import NOTES, NOTES_ACCELERATOR
from benchmarks.scaling import (
    d_sweep,
    launch_sweep,
    memory_vs_horizon,
    plot,
    runs_sweep,
    subsets_sweep,
)
from benchmarks.throughput import bench_all, markdown_table, rows_markdown

PARTS = ("throughput", "scaling", "launch", "memory")

MODES = {
    # horizon, repeats, runs override, matmul n, runs grid, runs-sweep learners,
    # d grid, d-sweep learners, d-sweep runs, memory horizons, memory runs
    "full": dict(horizon=2000, repeats=5, runs=None, matmul=2048,
                 runs_grid=[1, 4, 16, 64, 256, 1024, 4096],
                 runs_learners=["ogd-full", "ftpsl", "linucb", "flinucb-gd"],
                 d_grid=[10, 30, 100, 300, 1000], d_learners=["ogd-full", "linucb", "flinucb-gd"],
                 d_runs=64, memory_T=[1000, 1_000_000], memory_runs=64,
                 subsets_d=[8, 16, 32, 64, 128, 256], subsets_runs=16,
                 launch={"linucb": [256, 4096], "ftpsl": [256]}, unrolls=[1, 8]),
    "quick": dict(horizon=500, repeats=5, runs=None, matmul=2048,
                  runs_grid=[1, 4096], runs_learners=["linucb"],
                  d_grid=[10, 100, 1000], d_learners=["linucb"], d_runs=16,
                  memory_T=[1000, 1_000_000], memory_runs=64,
                  subsets_d=[8, 32, 128], subsets_runs=16,
                  launch={"linucb": [256]}, unrolls=[1, 8]),
    "smoke": dict(horizon=20, repeats=1, runs=4, matmul=256, loop_seconds=0.0, runs_grid=[1, 4],
                  runs_learners=["ogd-full"], d_grid=[10, 20], d_learners=["linucb"], d_runs=4,
                  memory_T=[100, 1000], memory_runs=4, subsets_d=[6, 8], subsets_runs=2,
                  launch={"ogd-full": [4]}, unrolls=[1, 2]),
}


def _progress(enabled: bool):
    start = time.perf_counter()

    def say(what: str) -> None:
        if enabled:
            print(f"[{time.perf_counter() - start:6.1f} s] {what}", file=sys.stderr, flush=True)

    return say


def _write_csv(path: Path, rows: list[dict]) -> None:
    if not rows:
        return
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def to_markdown(result: dict, plot_name: str | None) -> str:
    info = result["machine"]
    parts = [
        f"# Benchmark results ({result['mode']} mode)\n",
        f"Machine: {info['cpu']} ({info['cores']} cores), device {info['device']} "
        f"({info['device_kind']}); jax {info['jax']}, jaxlib {info['jaxlib']}, numpy "
        f"{info['numpy']}, Python {info['python']}; {info['date']}. Measured float32 matmul "
        f"peak{' (JAX default precision)' if info['platform'] != 'cpu' else ''}: "
        f"{result['peak_gflops']:.1f} GFLOP/s. Wall time of the suite: "
        f"{result['wall_s']:.0f} s.\n",
    ]
    if result.get("sources"):
        parts += [result["sources"] + "\n"]
    if result.get("rows"):
        parts += [
            "## Throughput\n",
            "oslr_cpu (oslr_wall on an accelerator): run-rounds/s of the compiled, vmapped scan "
            "by process CPU time (wall time), timed in turn with the same study batched across "
            "runs in NumPy float64 and float32 and in numba where `benchmarks/anchors.py` has "
            "them (it says what each side computes per run-round), and for ogd-full, linucb and "
            "ftpsl as a plain JAX scan over batched runs with no harness (jax_plain, "
            "`benchmarks/plain_jax.py`); best_alternative and oslr_over_best: the fastest of "
            "them and oslr's rate over it (the headline ratio); oslr_over_jax_plain: oslr's "
            "rate over the plain scan's. "
            "Secondary columns: jax_run_rounds_per_s: runs x T / median wall seconds; NumPy "
            "and peers: one run, rounds/s. ratio = oslr / the one-run NumPy loop. Peers "
            "(LinUCB, d = 20, K = 10, "
            "one unit theta per arm, shared context): river's `bandit.LinUCBDisjoint` (disjoint "
            "LinUCB, one Bayesian linear regression per arm, dict contexts), Vowpal Wabbit "
            "`--cb_explore_adf --squarecb -q sa` (C++; another exploration algorithm, SquareCB, "
            "so compared for throughput only) and mabwiser's LinUCB (one ridge model per arm); "
            "each is timed in turn with the oslr program and the NumPy loop, and x is oslr's "
            "run-rounds/s over its rounds/s. harness_share: the seconds of the same program "
            "with an idle learner (`benchmarks/harness.py`: the problem's stream and keys, the "
            "protocol round, the metrics, the loop) over the row's, timed in turn with it, by "
            "wall and by CPU time. "
            "jax_mem_mb: the compiled program's "
            "buffers (arguments, outputs, scratch); numpy_mem_mb: tracemalloc peak of one run. "
            "gflops: the case's cost model (benchmarks/cases.py: flops for `linalg`, random "
            "numbers and comparisons for `selection`) x run-rounds/s; pct_peak: share of the "
            "matmul peak.\n",
            rows_markdown(result["rows"],
                          NOTES if info["platform"] == "cpu" else NOTES_ACCELERATOR),
        ]
    if result.get("scaling_runs"):
        parts += ["## Throughput vs parallel runs\n", markdown_table(result["scaling_runs"])]
    if result.get("scaling_d"):
        parts += ["## Throughput vs d\n", markdown_table(result["scaling_d"])]
    if result.get("scaling_subsets"):
        parts += ["## foster-hedge vs the number of subsets N = C(d, 3)\n",
                  "Hedge over every k-subset with projected SGD in each ([FKK] Alg. 1): O(N k) "
                  "work per run-round. subset_updates_per_s = run-rounds/s x N. The sweep stops "
                  "where the estimated buffers pass the cap "
                  f"({result.get('subsets_max_mb', 4096.0) / 1024:g} GB).\n",
                  markdown_table(result["scaling_subsets"])]
    if plot_name:
        parts += [f"![scaling]({plot_name})\n"]
    if result.get("launch"):
        parts += ["## Launch-bound rounds: runs x unroll\n",
                  "us_per_round: one round of all runs together (median seconds of the compiled "
                  "scan / T); unroll: rounds per iteration of the compiled loop "
                  "(`oslr.simulate(unroll=U)`). Where us_per_round stays flat as runs grow, the "
                  "round is bound by kernel launches and loop overhead, not by the work.\n",
                  markdown_table(result["launch"])]
    if result.get("ftpsl_round"):
        parts += ["## FTPSL's round, piece by piece\n",
                  "`[OSLR_CPUS=0] python -m benchmarks.ftpsl_round RUNS --results "
                  "benchmarks/results.json` (a9a, k = 10, M = 10 resamples, T = 200): "
                  "microseconds per round of all runs together, wall time (on one core, "
                  "`cpus` 0, the same as CPU time). noise_us: the M + 1 perturbation draws alone "
                  "(d + 1 words each, two per threefry block, and their Laplace transform); "
                  "np_noise_us, np_select_us, np_round_us: the batched NumPy float32 anchor's "
                  "draws (uniforms, Laplace transform, v = eta S - z), its selection of every "
                  "draw with the resamples' membership test (argpartition), and its whole "
                  "round, on the same shapes in the same process; ftpsl_m1_us: the round with "
                  "M = 1, so draw_us = (ftpsl_us - ftpsl_m1_us) / 9 is one resample draw; "
                  "harness_us: `ftpl-random-subset` on the "
                  "same stream (the replay, the metrics and a cheap FTPL play on 10 "
                  "coordinates); pairs_us, pass_us, top_k_us, select_us: FTPSL's round with "
                  "the resamples' membership tested by rank (`in_top_k`) comparing all pairs at "
                  "once and in one pass on order keys (ftpsl_us is the one the machine takes: "
                  "the pass on one CPU core, the pairs on several), by `lax.top_k`'s first k "
                  "indices, and by each draw's whole mask (what FTPSL does above "
                  "`RANK_TEST_UP_TO`). Each program is compiled and timed after the other.\n",
                  markdown_table([{**r, "draw_us": round((r["ftpsl_us"] - r["ftpsl_m1_us"]) / 9,
                                                         1)}
                                  for r in result["ftpsl_round"]])]
    if result.get("anchors"):
        parts += ["## On all cores and on one, by CPU time\n",
                  "`[OSLR_CPUS=0] python -m benchmarks.anchor_ratios --learners ogd-full,linucb "
                  "--sides numpy_f32,numba --results benchmarks/results.json`: oslr's "
                  "program and the batched NumPy float32 and numba sides (`benchmarks/anchors.py`)"
                  " timed in turn in one process, run-rounds per second by process CPU time "
                  "(`_cpu`) and wall time (`_wall`), median of the repeats, on the cores `cpus` "
                  "(all the process may use, or one: `OSLR_CPUS=0`, every side on core 0, so "
                  "XLA's thread pools have one thread; numba's threads share the core). "
                  "over_numba and over_numpy_f32: oslr's rate over that side's by CPU time.\n",
                  markdown_table([_anchor_row(r) for r in result["anchors"]])]
    if result.get("first_result"):
        parts += ["## Time to a first result\n",
                  "`python -m benchmarks.first_result`: wall seconds of a new process, with an "
                  "empty compilation cache (cold) and with the one the cold process filled "
                  "(warm), medians over the repeats. quickstart: the README's sweep (two "
                  "learners x 3 k x 1,000 runs x 2,000 rounds): import_s until `import oslr` "
                  "returns (oslr imports JAX lazily), jax_s until JAX is imported too, ready_s "
                  "until the block's other import is done too (`from oslr import report`: "
                  "pandas and scipy), result_s until both results are back, sweep_s = result_s "
                  "- ready_s (the sweep itself: making the problem and learners, loading or "
                  "compiling their programs, running them); the same at 100 runs (the issue's "
                  "sweep, where compiling, not running, was most of the time); oslr run: the "
                  "command at its defaults, exit_s its whole process.\n",
                  markdown_table(result["first_result"])]
    if result.get("machinery"):
        parts += ["## What each piece of JAX-internals machinery pays\n",
                  "`python -m benchmarks.machinery`: each piece with it (`with`) and without "
                  "it (`without`), in new processes taken in turn, medians over the repeats. "
                  "store: oslr's program store (`OSLR_PROGRAM_STORE=off` without it), a warm "
                  "first result (JAX's cache filled by an earlier process in both) of the "
                  "README's sweep at 100 runs, its Study example and `oslr run` at its "
                  "defaults, in wall seconds; threefry: oslr's unrolled threefry "
                  "(`OSLR_THREEFRY=rolled` without it) on the headline studies' run-rounds/s by "
                  "process CPU time and on a warm first result; one-pass counting: FTPSL's "
                  "headline on one core (`OSLR_CPUS=0`) counting `in_top_k` in one pass or by "
                  "all pairs; option probes: the compile-option probes' own seconds in a warm "
                  "new process, against the first result they are part of. gain_pct: how much "
                  "faster with the piece (negative: slower); lines: oslr's lines the piece "
                  "takes; jax_apis: the JAX APIs it depends on. A speed piece that gains under "
                  "5% on every headline goes. The store saves a process's tracing and lowering "
                  "once (about a second here), so it pays on a first result and on short "
                  "studies, not on a study of minutes. The option probes are no speed piece: "
                  "they keep a run's bits independent of how many runs share its batch (XLA's "
                  "YNNPACK fusions off, `oslr.program.BATCH_INVARIANT_OPTIONS`) on a jaxlib "
                  "that knows those options and leave them out on one that does not; their row "
                  "is what they cost.\n",
                  markdown_table(result["machinery"])]
    if result.get("blocks"):
        parts += ["## Studies bigger than memory, in blocks of runs\n",
                  "`python -m benchmarks.blocks`: each study in a fresh process, one at a time; "
                  "peak_rss_mb is the process's own peak resident memory, wall_s from the call "
                  "to the result. LinUCB at d = 100, T = 100 under a `max_memory` cap of 256 MiB "
                  "(blocks of 1,830 runs): 1x = 8,000 runs, a state over 4x the cap, then 2x, 4x "
                  "and 8x, and 8x in one batch with no cap; equal_to_one_batch: every run's "
                  "final regret has the same bits as in the one batch. The "
                  "200,000-run study: `oslr run --problem linear-bandit --learners linucb --d 100 "
                  "--runs 200000 --horizon 100` with nothing capped (80% of the memory available "
                  "at its start).\n",
                  markdown_table(result["blocks"],  # every row's columns: a study has its own
                                 list(dict.fromkeys(k for r in result["blocks"] for k in r)))]
    if result.get("memory_T"):
        mem = result["memory_T"]
        growth = f"{mem[-1]['peak_rss_mb'] - mem[0]['peak_rss_mb']:+.1f} MB resident"
        if mem[0].get("peak_device_mb") is not None:
            dev = mem[-1]["peak_device_mb"] - mem[0]["peak_device_mb"]
            growth += f", {dev:+.2f} MB on the device"
        parts += [
            "## Memory vs T\n",
            f"Peak resident memory (and the accelerator's own peak, where it reports one) of a "
            f"whole `oslr.simulate` study in a fresh process, metrics streamed inside the scan. "
            f"T x{mem[-1]['T'] // mem[0]['T']}: {growth}.\n",
            markdown_table(mem),
        ]
    return "\n".join(parts)


def _anchor_row(row: dict) -> dict:
    """An `anchors` row of results.json as RESULTS.md shows it."""
    keep = ("learner", "cpus", "runs", "T", "oslr_cpu", "oslr_wall", "numpy_f32_cpu",
            "numpy_f32_wall", "numba_cpu", "numba_wall")
    out = {k: row.get(k) for k in keep}
    for side in ("numba", "numpy_f32"):
        if row.get(f"{side}_cpu"):
            out[f"over_{side}"] = round(row["oslr_cpu"] / row[f"{side}_cpu"], 2)
    return {**out, "date": row.get("date")}


def merge_rows(path: Path, key: str, rows: list[dict], same=None) -> None:
    """Put `rows` into the results.json at `path` under `key` (all of `key`'s rows replaced, or,
    given `same(row)`, only the kept rows with the `same` of a new one) and write RESULTS.md
    beside it from the whole file."""
    result = json.loads(path.read_text()) if path.exists() else {}
    if same is not None:
        new = {same(r) for r in rows}
        rows = [r for r in result.get(key, []) if same(r) not in new] + rows
    result[key] = rows
    path.write_text(json.dumps(result, indent=1))
    plot = "scaling.png" if (path.parent / "scaling.png").exists() else None
    (path.parent / "RESULTS.md").write_text(to_markdown(result, plot))


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="short horizon, coarse grids (<5 min)")
    mode.add_argument("--smoke", action="store_true", help="tiny sizes (for the test suite)")
    parser.add_argument("--only", default=",".join(PARTS),
                        help=f"comma-separated parts to run, of {','.join(PARTS)}")
    parser.add_argument("--learners", default=None,
                        help="comma-separated learners for the throughput part (default: all)")
    parser.add_argument("--runs", type=int, default=None,
                        help="parallel runs of every throughput row (default: the case's, 256 "
                             "or 1024; more fill a GPU)")
    parser.add_argument("--out", default=None, help="folder for the result files")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    args = parser.parse_args(argv)
    parts = [p.strip() for p in args.only.split(",") if p.strip()]
    unknown = set(parts) - set(PARTS)
    if unknown:
        parser.error(f"unknown part(s) {sorted(unknown)}; choose from {list(PARTS)}.")
    cases = case_table.CASES
    if args.learners:
        names = [n.strip() for n in args.learners.split(",")]
        missing = [n for n in names if n not in case_table.BY_NAME]
        if missing:
            parser.error(f"no benchmark case for {missing}; cases: {list(case_table.BY_NAME)}.")
        cases = [case_table.BY_NAME[n] for n in names]
    mode_name = "smoke" if args.smoke else "quick" if args.quick else "full"
    cfg = dict(MODES[mode_name])
    say = _progress(not args.quiet)
    t0 = time.perf_counter()

    info = machine()
    if info["platform"] != "cpu" and not args.smoke:  # an accelerator fills at larger sizes
        cfg["runs_grid"] = cfg["runs_grid"] + [16384, 65536]
        cfg["matmul"] = 8192
        cfg["launch"] = {"linucb": [1024, 4096, 16384, 65536, 262144],
                         "ftpsl": [1024, 4096, 16384, 65536]}
        cfg["unrolls"] = [1, 8]
    say("matmul peak")
    peak = matmul_peak(cfg["matmul"])
    result: dict = {"mode": mode_name, "machine": info, "peak_gflops": round(peak, 1)}
    out = Path(args.out) if args.out else None
    # the files are rewritten after each part, so an interrupted run keeps what it measured
    if "throughput" in parts:
        result["rows"] = bench_all(cases, args.runs or cfg["runs"], cfg["horizon"],
                                   cfg["repeats"], peak, cfg.get("loop_seconds", 0.3),
                                   progress=say,
                                   clock="cpu" if info["platform"] == "cpu" else "wall")
        _save(result, out, t0)
    if "scaling" in parts:
        h = min(cfg["horizon"], 200)
        result["scaling_runs"] = runs_sweep(cfg["runs_learners"], cfg["runs_grid"], h, 3, say)
        result["scaling_d"] = d_sweep(cfg["d_learners"], cfg["d_grid"], cfg["d_runs"],
                                      min(h, 100), 3, peak, say)
        result["subsets_max_mb"] = 4096.0 if info["platform"] == "cpu" else 32_768.0
        result["scaling_subsets"] = subsets_sweep(cfg["subsets_d"], cfg["subsets_runs"], h, 3,
                                                  peak, say, max_mb=result["subsets_max_mb"])
        _save(result, out, t0)
    if "launch" in parts:
        result["launch"] = launch_sweep(cfg["launch"], cfg["unrolls"], min(cfg["horizon"], 200),
                                        3, say)
        _save(result, out, t0)
    if "memory" in parts:
        result["memory_T"] = memory_vs_horizon(cfg["memory_T"], cfg["memory_runs"], say)
    text = _save(result, out, t0)
    print(text)
    return result


def _save(result: dict, out: Path | None, t0: float) -> str:
    """Write the result files (when `out` is given); return the Markdown report."""
    result["wall_s"] = round(time.perf_counter() - t0, 1)
    plot_name = None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        platform = result["machine"]["platform"]
        suffix = "" if platform == "cpu" else f"-{platform}"
        if result.get("scaling_runs"):
            if plot(result["scaling_runs"], result["scaling_d"], out / f"scaling{suffix}.png"):
                plot_name = f"scaling{suffix}.png"
            _write_csv(out / f"scaling_runs{suffix}.csv", result["scaling_runs"])
            _write_csv(out / f"scaling_d{suffix}.csv", result["scaling_d"])
        if result.get("memory_T"):
            _write_csv(out / f"memory_T{suffix}.csv", result["memory_T"])
        if result.get("scaling_subsets"):
            _write_csv(out / f"scaling_subsets{suffix}.csv", result["scaling_subsets"])
        if result.get("launch"):
            _write_csv(out / f"launch{suffix}.csv", result["launch"])
        (out / f"results{suffix}.json").write_text(json.dumps(result, indent=1))
        text = to_markdown(result, plot_name)
        (out / f"RESULTS{suffix}.md").write_text(text)
        return text
    return to_markdown(result, plot_name)
