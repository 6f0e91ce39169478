"""Scaling: throughput versus the number of parallel runs and versus d, and memory versus T.

* `runs_sweep`: run-rounds/s of a case at 1 ... 4096 parallel runs (one compile per size).
* `launch_sweep`: rounds/s and run-rounds/s against runs and the loop's unroll (U rounds per
  iteration of the compiled loop), where a round's cost stops falling per run: on a GPU a round
  of a few thousand runs is bound by kernel launches and loop overhead, not by memory traffic.
* `d_sweep`: run-rounds/s, GFLOP/s and % of the matmul peak at d = 10 ... 1000 (synthetic
  problems: `sparse-linear`, `linear-bandit`).
* `subsets_sweep`: `foster-hedge` (Hedge over all C(d, k) subsets) at k = 3 as d, hence
  N = C(d, k), grows, up to a memory cap: run-rounds/s and subset updates/s (x N).
* `memory_vs_horizon`: peak resident memory of `oslr.simulate` at T = 10^3 ... 10^6 with 64 runs,
  each in a fresh process (`python -m benchmarks.scaling --memory T RUNS` prints one JSON line):
  metrics are streamed inside the scan, so memory must not grow with T.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

from benchmarks.cases import BY_NAME
from benchmarks.throughput import time_jax


def _timed_sizes(name: str, runs_list: list[int], horizon: int, repeats: int, progress,
                 max_mb: float, unrolls: list[int] | None = None):
    """Yield (runs, unroll, `time_jax` result) over `runs_list` (and `unrolls`, when given) for
    learner `name`, stopping before a size whose program memory, extrapolated linearly from the
    last one timed, would pass `max_mb`."""
    last = None
    for runs in runs_list:
        if last is not None and last["mem_mb"] * runs / last["runs"] > max_mb:
            return
        for unroll in unrolls or (1,):
            if progress is not None:
                progress(f"{name} runs={runs}" + (f" unroll={unroll}" if unrolls else ""))
            r = time_jax(BY_NAME[name], runs, horizon, repeats, unroll=unroll)
            last = {"runs": runs, "mem_mb": r["mem_mb"]}
            yield runs, unroll, r


def runs_sweep(learners: list[str], runs_list: list[int], horizon: int, repeats: int,
               progress=None, max_mb: float = 16_384.0) -> list[dict]:
    """Run-rounds/s at each number of runs; a learner stops where its program memory, extrapolated
    linearly from the last size, would pass `max_mb` (FTPSL on a9a once kept a 48,842-row replay
    order per run, 1.7 GB at 4096 runs, and XLA's GPU autotuner hit an illegal address at 65536
    runs; the replay order is now a keyed permutation: 0.4-0.6 GB at 4096 runs, 5.8 GB at
    65536 on the H200)."""
    return [{"learner": name, "runs": runs, "d": r["d"], "T": horizon,
             "run_rounds_per_s": round(r["rate"], 1), "compile_s": round(r["compile_s"], 2),
             "mem_mb": round(r["mem_mb"], 2)}
            for name in learners
            for runs, _, r in _timed_sizes(name, runs_list, horizon, repeats, progress, max_mb)]


def launch_sweep(learners: dict[str, list[int]], unrolls: list[int], horizon: int,
                 repeats: int, progress=None, max_mb: float = 16_384.0) -> list[dict]:
    """For each learner and its runs grid, one row per (runs, unroll): microseconds per round (all
    runs together), rounds/s and run-rounds/s, compile seconds and program memory. A learner's
    grid stops as in `runs_sweep`."""
    return [{"learner": name, "runs": runs, "unroll": unroll, "T": horizon,
             "us_per_round": round(1e6 * r["seconds"] / horizon, 2),
             "rounds_per_s": round(horizon / r["seconds"], 1),
             "run_rounds_per_s": round(r["rate"], 1), "compile_s": round(r["compile_s"], 2),
             "mem_mb": round(r["mem_mb"], 2)}
            for name, runs_list in learners.items()
            for runs, unroll, r in _timed_sizes(name, runs_list, horizon, repeats, progress,
                                                max_mb, unrolls)]


def d_sweep(learners: list[str], d_list: list[int], runs: int, horizon: int, repeats: int,
            peak_gflops: float, progress=None) -> list[dict]:
    rows = []
    for name in learners:
        case = BY_NAME[name]
        for d in d_list:
            if progress is not None:
                progress(f"{name} d={d}")
            h = max(10, min(horizon, 20_000 // d))  # O(d^2) rounds: fewer of them at large d
            r = time_jax(case, runs, h, repeats, problem_opts={**case.problem_opts, "d": d})
            gflops = case.ops(d) * r["rate"] / 1e9
            rows.append({"learner": name, "d": d, "runs": runs, "T": h,
                         "run_rounds_per_s": round(r["rate"], 1), "gflops": round(gflops, 3),
                         "pct_peak": round(100 * gflops / peak_gflops, 2),
                         "compile_s": round(r["compile_s"], 2), "mem_mb": round(r["mem_mb"], 2)})
    return rows


def subsets_sweep(d_list: list[int], runs: int, horizon: int, repeats: int, peak_gflops: float,
                  progress=None, max_mb: float = 4096.0) -> list[dict]:
    """`foster-hedge` throughput against N = C(d, k) (k = 3, k' = 5). A size stops the sweep
    when its estimated buffers (the (N, k) weights, N log-weights and about four (N, k)
    temporaries per run) pass `max_mb`; fewer rounds are timed at large N."""
    case = BY_NAME["foster-hedge"]
    k = case.make_opts["k"]
    rows = []
    for d in d_list:
        n = math.comb(d, k)
        est_mb = runs * n * (6 * k + 1) * 4 / 2**20
        if est_mb > max_mb:
            break
        if progress is not None:
            progress(f"foster-hedge d={d} N={n}")
        h = max(5, min(horizon, int(2e7 // (runs * n))))
        r = time_jax(case, runs, h, repeats, problem_opts={**case.problem_opts, "d": d})
        gflops = case.ops(d) * r["rate"] / 1e9
        rows.append({"learner": "foster-hedge", "d": d, "k": k, "n_subsets": n, "runs": runs,
                     "T": h, "run_rounds_per_s": round(r["rate"], 1),
                     "subset_updates_per_s": round(r["rate"] * n, 0),
                     "gflops": round(gflops, 3), "pct_peak": round(100 * gflops / peak_gflops, 2),
                     "compile_s": round(r["compile_s"], 2), "mem_mb": round(r["mem_mb"], 2)})
    return rows


def _peak_rss_kb() -> float:
    """This process's peak resident set (VmHWM; ru_maxrss would carry the parent's peak across
    the fork and exec that started it)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return float(line.split()[1])
    except OSError:
        pass
    import resource

    return float(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def _memory_child(horizon: int, runs: int) -> dict:
    """Run one study in this process and report its peak resident memory."""
    import time

    import jax
    import numpy as np

    import oslr

    t0 = time.perf_counter()
    problem, pp = oslr.make_problem("sphere-bandit", d=20)
    learner, params = oslr.make("pege", d=20, horizon=horizon)
    res = oslr.simulate(learner, problem, params, pp, horizon=horizon, n_runs=runs, seed=0,
                        chunk_size=1000)
    seconds = time.perf_counter() - t0
    result_bytes = sum(np.asarray(v).nbytes for v in [*res.curves.values(), *res.final.values()])
    regret = res.regret_curves()["pseudo_regret"][..., -1]
    stats = jax.devices()[0].memory_stats() or {}  # accelerators report their own peak
    device_mb = stats.get("peak_bytes_in_use")
    return {"T": horizon, "runs": runs, "learner": "pege", "problem": "sphere-bandit d=20",
            "peak_rss_mb": round(_peak_rss_kb() / 1024, 1),
            "peak_device_mb": None if device_mb is None else round(device_mb / 2**20, 2),
            "result_mb": round(result_bytes / 2**20, 3), "seconds": round(seconds, 1),
            "final_regret_mean": round(float(np.mean(regret)), 2)}


def memory_vs_horizon(horizons: list[int], runs: int, progress=None) -> list[dict]:
    rows = []
    for horizon in horizons:
        if progress is not None:
            progress(f"memory T={horizon}")
        out = subprocess.run([sys.executable, "-m", "benchmarks.scaling", "--memory",
                              str(horizon), str(runs)], capture_output=True, text=True,
                             check=True, cwd=Path(__file__).resolve().parent.parent)
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return rows


def plot(runs_rows: list[dict], d_rows: list[dict], path: Path) -> Path | None:
    """Two panels: run-rounds/s vs runs and vs d (log-log), one line per learner."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    names = list(dict.fromkeys(r["learner"] for r in runs_rows + d_rows))
    colour = {n: f"C{i}" for i, n in enumerate(names)}  # one colour per learner in both panels
    d_runs = f" ({d_rows[0]['runs']} runs)" if d_rows else ""
    for ax, rows, x, title in ((axes[0], runs_rows, "runs", "throughput vs parallel runs"),
                               (axes[1], d_rows, "d", f"throughput vs d{d_runs}")):
        for name in dict.fromkeys(r["learner"] for r in rows):
            pts = [r for r in rows if r["learner"] == name]
            ax.plot([r[x] for r in pts], [r["run_rounds_per_s"] for r in pts], "o-", label=name,
                    color=colour[name])
        ax.set(xscale="log", yscale="log", xlabel=x, ylabel="run-rounds / s", title=title)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--memory":
        print(json.dumps(_memory_child(int(sys.argv[2]), int(sys.argv[3]))))
    else:
        sys.exit("usage: python -m benchmarks.scaling --memory T RUNS")
