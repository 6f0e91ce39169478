"""Throughput of the reference learners: vmapped oslr runs against float64 NumPy loops.

    python -m benchmarks [--quick] [--out benchmarks/results]

For each learner: compile seconds (ahead-of-time `lower().compile()`, timed apart), run-rounds per
second of the jitted, vmapped scan (median of repeats after a warm-up, `block_until_ready`), the
same for a one-run NumPy loop in the same process, and their ratio. Results go to a JSON file and a
Markdown table stamped with the machine, the versions and the date. Nothing here is asserted.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import oslr
from benchmarks import numpy_loops
from oslr import metrics, sim
from oslr.problems.datasets import load_dataset

CASES = [
    # name, problem, problem options, learner overrides, numpy loop
    ("ogd-full", "sparse-linear", {"d": 64, "k": 3}, {},
     lambda T: numpy_loops.ogd_loop(64, 64, T, full=True)),
    ("ogd-random-subset", "sparse-linear", {"d": 64, "k": 3}, {"k": 8},
     lambda T: numpy_loops.ogd_loop(64, 8, T, full=False)),
    ("uniform-subset", "sparse-linear", {"d": 64, "k": 3}, {"k": 8},
     lambda T: numpy_loops.uniform_loop(64, 8, T)),
    ("eps-greedy", "linear-bandit", {"d": 20, "n_arms": 10}, {},
     lambda T: numpy_loops.eps_greedy_loop(20, 10, T)),
    ("ftpsl", "a9a", {}, {"k": 10},
     lambda T: numpy_loops.ftpsl_loop(*load_dataset("a9a"), k=10, horizon=T)),
    ("ftpl-random-subset", "a9a", {}, {"k": 10},
     lambda T: numpy_loops.ftpl_subset_loop(*load_dataset("a9a"), k=10, horizon=T)),
    ("linucb", "linear-bandit", {"d": 20, "n_arms": 10}, {"n_arms": 10},
     lambda T: numpy_loops.linucb_loop(20, 10, T)),
    ("flinucb-gd", "linear-bandit", {"d": 20, "n_arms": 10}, {"n_arms": 10},
     lambda T: numpy_loops.flinucb_gd_loop(20, 10, T)),
    ("pege", "sphere-bandit", {"d": 20}, {}, lambda T: numpy_loops.pege_loop(20, T)),
]

# learner -> (runs, peer name, peer loop): the peer a researcher would otherwise use, timed in the
# same invocation (benchmark-only dependency; the row says "not installed" without it)
PEERS = {"linucb": (1024, "mabwiser LinUCB",
                    lambda T: numpy_loops.mabwiser_linucb_loop(20, 10, T))}


def machine() -> dict:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {
        "cpu": cpu, "cores": os.cpu_count(), "device": str(jax.devices()[0]),
        "device_kind": jax.devices()[0].device_kind, "jax": jax.__version__,
        "numpy": np.__version__, "date": datetime.date.today().isoformat(),
    }


def _rate(loop, horizon: int, repeats: int) -> float | None:
    """Rounds per second of a one-run Python loop (median of repeats), None if unavailable."""
    times = []
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        if loop(horizon) is None:
            return None
        times.append(time.perf_counter() - t0)
    return horizon / statistics.median(times)


def bench_case(name, problem_name, popts, overrides, loop, runs, horizon, repeats):
    problem, pp = oslr.make_problem(problem_name, **popts)
    learner, params = oslr.make(name, d=problem.d, max_k=overrides.get("k"), horizon=horizon,
                                **overrides)
    ckpts = metrics.checkpoint_rounds(horizon)
    init_b, chunk_b = sim._batched_fns(learner, problem, len(ckpts), False)
    seed = jnp.uint32(0)
    ids = jnp.arange(runs, dtype=jnp.int32)
    lp = jax.tree.map(lambda a: jnp.broadcast_to(a, (runs,) + a.shape), params)
    carry = init_b(seed, ids, lp, pp)
    args = (carry, jnp.int32(0), jnp.int32(horizon), jnp.asarray(ckpts, jnp.int32), seed, ids,
            lp, pp)
    t0 = time.perf_counter()
    compiled = chunk_b.lower(*args, horizon).compile()
    compile_s = time.perf_counter() - t0
    jax.block_until_ready(compiled(*args))  # warm-up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(compiled(*args))
        times.append(time.perf_counter() - t0)
    jax_s = statistics.median(times)
    np_rate = _rate(loop, max(50, min(horizon, 2000)), repeats // 2)
    jax_rate = runs * horizon / jax_s
    peer = {}
    if name in PEERS:
        _, peer_name, peer_loop = PEERS[name]
        peer_rate = _rate(peer_loop, max(20, min(horizon, 300)), 1)
        peer = {"peer": peer_name if peer_rate else f"{peer_name} (not installed)",
                "peer_rounds_per_s": round(peer_rate, 1) if peer_rate else None,
                "peer_ratio": round(jax_rate / peer_rate, 1) if peer_rate else None}
    return {
        "learner": name, "family": learner.family, "d": problem.d,
        "k": int(np.asarray(getattr(params, "k", 0))), "T": horizon, "runs": runs,
        "compile_s": round(compile_s, 3), "jax_run_rounds_per_s": round(jax_rate, 1),
        "numpy_rounds_per_s": round(np_rate, 1), "ratio": round(jax_rate / np_rate, 2),
        **peer,
    }


def to_markdown(rows: list[dict], info: dict) -> str:
    head = (f"Machine: {info['cpu']} ({info['cores']} cores), device {info['device']}; "
            f"jax {info['jax']}, numpy {info['numpy']}; {info['date']}.\n\n")
    cols = ["learner", "family", "d", "k", "T", "runs", "compile_s", "jax_run_rounds_per_s",
            "numpy_rounds_per_s", "ratio", "peer", "peer_rounds_per_s", "peer_ratio"]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        lines.append("| " + " | ".join(str(r.get(c, "")) for c in cols) + " |")
    return head + "\n".join(lines) + "\n"


def main(argv=None) -> list[dict]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks")
    parser.add_argument("--quick", action="store_true", help="short horizon (a few minutes)")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes (for the test suite)")
    parser.add_argument("--runs", type=int, default=256)
    parser.add_argument("--out", default=None, help="folder for results.json / RESULTS.md")
    args = parser.parse_args(argv)
    horizon, repeats, runs = (2000, 5, args.runs) if not args.quick else (500, 5, args.runs)
    if args.smoke:
        horizon, repeats, runs = 20, 1, 4
    info = machine()
    rows = [bench_case(*case, runs=runs if args.smoke else PEERS.get(case[0], (runs,))[0],
                       horizon=horizon, repeats=repeats) for case in CASES]
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "results.json").write_text(json.dumps({"machine": info, "rows": rows}, indent=1))
        (out / "RESULTS.md").write_text(to_markdown(rows, info))
    print(to_markdown(rows, info))
    return rows


if __name__ == "__main__":
    main()
