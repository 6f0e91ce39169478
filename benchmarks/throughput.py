"""Throughput, memory and GFLOP/s of every registered learner against its NumPy loop and peers.

For each case of `benchmarks.cases`: compile seconds (ahead-of-time `lower().compile()`, timed
apart), run-rounds per second of the jitted, vmapped scan (median of repeats after a warm-up,
`block_until_ready`; the NumPy loop and the peer are timed in turn within each repeat), the
memory the compiled program holds (arguments + outputs + scratch, from XLA's buffer assignment),
achieved GFLOP/s from the case's cost model as a percentage of the matmul peak measured in the
same run; the same rate and peak allocation (tracemalloc) for the one-run float64 NumPy loop and
the peer, and the ratios. Where `benchmarks.anchors` has them (issue 26), the same study batched
across runs in NumPy float64 and float32 and in numba, and for the headline rows as a plain JAX
scan (`benchmarks.plain_jax`, issue 36), timed in turn with the oslr program:
run-rounds/s of each by process CPU time on a CPU (by wall time on an accelerator, where they run
on the host), the best alternative and oslr's rate over it. Nothing here is asserted.
"""

from __future__ import annotations

import statistics
import time
import tracemalloc

import jax
import jax.numpy as jnp
import numpy as np

import oslr
from benchmarks import anchors, plain_jax
from benchmarks.cases import Case
from benchmarks.harness import idle_make
from oslr import metrics, program, validation
from oslr.registry import LEARNERS

MB = 2.0**20


def build(case: Case, runs: int, horizon: int, problem_opts: dict | None = None,
          unroll: int = 1, make=None):
    """The lowered chunk of `runs` parallel runs of `case` over `horizon` rounds (`unroll` rounds
    per loop iteration, as `oslr.simulate(unroll=...)`) and its args. `make(problem) -> (learner,
    params)`, when given, replaces the case's learner on the case's problem."""
    problem, pp = oslr.make_problem(case.problem, **(problem_opts or case.problem_opts))
    if make is not None:
        learner, params = make(problem)
    else:
        learner, params = oslr.make(case.learner, d=problem.d, horizon=horizon, **case.make_opts)
        prepare = LEARNERS[case.learner].prepare
        if prepare is not None:
            params = prepare(params, problem, pp)
    validation.validate(learner, problem, params, pp, horizon, runs)
    ckpts = metrics.checkpoint_rounds(horizon)
    init_b, chunk_b = program.batched_fns(learner, problem, len(ckpts), False)
    seed = jnp.uint32(0)
    ids = jnp.arange(runs, dtype=jnp.int32)
    lp = jax.tree.map(lambda a: jnp.broadcast_to(a, (runs,) + jnp.shape(a)), params)
    carry = init_b(seed, ids, lp, pp)
    args = (carry, jnp.int32(0), jnp.int32(horizon), jnp.asarray(ckpts, jnp.int32), seed, ids,
            lp, pp)
    k = getattr(params, "k", None)
    lowered = chunk_b.lower(*args, horizon, unroll, False)  # one whole chunk: no horizon guard
    return lowered, args, problem.d, None if k is None else int(k)


def jax_program(case: Case, runs: int, horizon: int, problem_opts: dict | None = None,
                unroll: int = 1, make=None) -> dict:
    """Compile the case (timed) and return `call()` (one blocking run of the chunk) with the
    compile seconds, the program's memory (MB), d and k. The first call is made (warm-up).
    `make`: as `build`."""
    t0 = time.perf_counter()
    lowered, args, d, k = build(case, runs, horizon, problem_opts, unroll, make)
    compiled = lowered.compile()
    compile_s = time.perf_counter() - t0
    mem = compiled.memory_analysis()
    mem_bytes = (mem.argument_size_in_bytes + mem.output_size_in_bytes + mem.temp_size_in_bytes
                 - mem.alias_size_in_bytes) if mem is not None else float("nan")

    def call():
        jax.block_until_ready(compiled(*args))

    call()  # warm-up
    return {"call": call, "d": d, "k": k, "compile_s": compile_s, "mem_mb": mem_bytes / MB}


def loop_program(loop, horizon: int):
    """`call()` running a one-run loop over `horizon` rounds and its peak allocation (MB), from a
    first, untimed call under tracemalloc (which slows the loop); None if unavailable."""
    tracemalloc.start()
    try:
        if loop(horizon) is None:
            return None
        peak = tracemalloc.get_traced_memory()[1] / MB
    finally:
        tracemalloc.stop()
    loop(horizon)  # a second warm-up: the first timed calls of a process run slow
    return (lambda: loop(horizon)), peak


def timed_in_turn(calls: dict, repeats: int, min_seconds: float = 0.3,
                  max_calls: int = 20) -> dict[str, dict[str, float]]:
    """Median wall and process CPU seconds per call of each of `calls`, timed in turn within each
    of `repeats` rounds (so that every program sees the same machine state: on a shared 2-core VM
    a loop's speed moves by up to 2x over minutes). Within a round a call repeats until
    min_seconds / repeats. CPU time counts every thread of the process (XLA's and numba's), so
    under load it does not flatter a multi-threaded program as wall time does."""
    times: dict[str, dict[str, list[float]]] = {n: {"wall": [], "cpu": []} for n in calls}
    for _ in range(max(1, repeats)):
        for name, call in calls.items():
            n, spent, cpu = 0, 0.0, 0.0
            while n == 0 or (spent < min_seconds / max(1, repeats) and n < max_calls):
                t0, c0 = time.perf_counter(), time.process_time()
                call()
                spent += time.perf_counter() - t0
                cpu += time.process_time() - c0
                n += 1
            times[name]["wall"].append(spent / n)
            times[name]["cpu"].append(cpu / n)
    return {name: {k: statistics.median(v) for k, v in t.items()} for name, t in times.items()}


def interleaved(calls: dict, repeats: int, min_seconds: float = 0.3,
                max_calls: int = 20) -> dict[str, float]:
    """Median wall seconds per call of each of `calls`, timed in turn (`timed_in_turn`)."""
    return {name: t["wall"] for name, t in
            timed_in_turn(calls, repeats, min_seconds, max_calls).items()}


def time_jax(case: Case, runs: int, horizon: int, repeats: int,
             problem_opts: dict | None = None, unroll: int = 1, make=None) -> dict:
    """Compile seconds, median seconds per call, run-rounds/s and program memory (MB) (`make`:
    as `build`)."""
    prog = jax_program(case, runs, horizon, problem_opts, unroll, make)
    seconds = interleaved({"jax": prog["call"]}, repeats, 0.0)["jax"]
    return {**prog, "seconds": seconds, "rate": runs * horizon / seconds}


def anchor_calls(learner: str, runs: int, horizon: int) -> dict:
    """The row's batched alternatives (`benchmarks.anchors`), compiled and warmed up: NumPy
    float64 and float32 where written, numba where written and installed; each call runs
    `anchors.timed_horizon(learner, horizon)` rounds."""
    calls, timed = {}, anchors.timed_horizon(learner, horizon)
    if learner in anchors.NUMPY_NAMES:
        calls["numpy_f64"] = anchors.numpy_batched(learner, runs, timed, np.float64)
        calls["numpy_f32"] = anchors.numpy_batched(learner, runs, timed, np.float32)
    if learner in anchors.NAMES:
        numba_call = anchors.numba_batched(learner, runs, horizon)
        if numba_call is not None:
            calls["numba"] = numba_call
    if learner in plain_jax.NAMES:
        calls["jax_plain"] = plain_jax.plain_batched(learner, runs, timed)
    for call in calls.values():
        call()  # warm-up (numba compiles here)
    return calls


#: the alternatives of a row, in the order of its columns; rows of more runs skip them (a NumPy
#: FTPSL of 65,536 runs would take most of an hour)
ANCHOR_SIDES = ("numpy_f64", "numpy_f32", "numba", "jax_plain")
ANCHOR_MAX_RUNS = 4096


def bench_case(case: Case, runs: int, horizon: int, repeats: int, peak_gflops: float,
               loop_horizon: int, peer_horizon: int, loop_seconds: float = 0.3,
               clock: str = "cpu") -> dict:
    """One row of the throughput table (see the module docstring). `clock`: how oslr is compared
    with its batched alternatives ("cpu": process CPU time, on a CPU where every side uses the
    same cores; "wall" on an accelerator, where the alternatives run on the host)."""
    prog = jax_program(case, runs, horizon)
    calls = {"jax": prog["call"],
             "harness": jax_program(case, runs, horizon, make=idle_make(case, horizon))["call"]}
    alternatives = anchor_calls(case.learner, runs, horizon) if runs <= ANCHOR_MAX_RUNS else {}
    calls.update(alternatives)
    np_call, np_mem = loop_program(case.loop, loop_horizon)
    calls["numpy"] = np_call
    peers = {name: loop_program(loop, peer_horizon) for name, loop in case.peers}
    calls.update({name: prog[0] for name, prog in peers.items() if prog is not None})
    both = timed_in_turn(calls, repeats, loop_seconds)
    sec = {name: t["wall"] for name, t in both.items()}
    jax_rate = runs * horizon / sec["jax"]
    np_rate = loop_horizon / sec["numpy"]
    ops = case.ops(prog["d"])
    gflops = ops * jax_rate / 1e9
    row = {
        "learner": case.learner, "family": LEARNERS[case.learner].family, "d": prog["d"],
        "k": prog["k"], "T": horizon, "runs": runs, "compile_s": round(prog["compile_s"], 2),
        "jax_run_rounds_per_s": round(jax_rate, 1), "jax_mem_mb": round(prog["mem_mb"], 2),
        "numpy_rounds_per_s": round(np_rate, 1), "numpy_mem_mb": round(np_mem, 3),
        "ratio": round(jax_rate / np_rate, 2),
        "harness_share": round(sec["harness"] / sec["jax"], 2),
        "harness_share_cpu": round(both["harness"]["cpu"] / both["jax"]["cpu"], 2),
        "kind": case.kind, "ops_per_round": round(ops), "gflops": round(gflops, 3),
        "pct_peak": round(100.0 * gflops / peak_gflops, 2),
    }
    work = runs * horizon
    row["oslr_" + clock] = round(work / both["jax"][clock])
    anchor_work = runs * anchors.timed_horizon(case.learner, horizon)
    for side in ANCHOR_SIDES:
        row[f"{side}_{clock}"] = (round(anchor_work / both[side][clock]) if side in alternatives
                                  else None)
    if alternatives:
        best = max(alternatives, key=lambda s_: row[f"{s_}_{clock}"])
        row["best_alternative"] = best
        row["oslr_over_best"] = round(row["oslr_" + clock] / row[f"{best}_{clock}"], 2)
        numpys = [s_ for s_ in alternatives if s_.startswith("numpy")]
        row["oslr_over_numpy"] = round(row["oslr_" + clock] / max(
            row[f"{s_}_{clock}"] for s_ in numpys), 2)
        if "numba" in alternatives:
            row["oslr_over_numba"] = round(row["oslr_" + clock] / row[f"numba_{clock}"], 2)
        if "jax_plain" in alternatives:
            row["oslr_over_jax_plain"] = round(row["oslr_" + clock] / row[f"jax_plain_{clock}"],
                                               2)
    if case.peers:
        row["peers"] = [
            {"peer": name, "rounds_per_s": None, "mem_mb": None, "ratio": None,
             "note": "not installed"} if prog is None else
            {"peer": name, "rounds_per_s": round(peer_horizon / sec[name], 1),
             "mem_mb": round(prog[1], 3),
             "ratio": round(jax_rate * sec[name] / peer_horizon, 1)}
            for name, prog in peers.items()]
    return row


def peer_ratio(row: dict, name: str) -> float | None:
    """oslr's run-rounds/s over the rounds/s of the peer whose name starts with `name`."""
    for p in row.get("peers", ()):
        if p["peer"].startswith(name):
            return p["ratio"]
    return None


def _peers_text(row: dict) -> str:
    return "; ".join(f"{p['peer']}: not installed" if p["ratio"] is None else
                     f"{p['peer']}: {p['rounds_per_s']:,.0f} rounds/s ({p['ratio']:,.0f}x)"
                     for p in row.get("peers", ()))


def missed_targets(row: dict) -> list[str]:
    """The issues' targets (2-core CPU) this row misses: >= 1.5x the best batched NumPy
    (float64 or float32) where written, >= 1x numba and >= 1x a plain JAX scan (issue 36) where
    written, a LinUCB harness share (CPU)
    <= 0.25 (issue 26); >= 10x its one-run NumPy loop for every learner
    (foster-hedge and ftpsl: >= 20x); LinUCB >= 100x NumPy and >= 500x river's LinUCB;
    linear-algebra learners >= 25% of the peak."""
    missed = []
    over_numpy, over_numba = row.get("oslr_over_numpy"), row.get("oslr_over_numba")
    if over_numpy is not None and not over_numpy >= 1.5:
        missed.append(f"{over_numpy}x batched NumPy < 1.5x")
    if over_numba is not None and not over_numba >= 1.0:
        missed.append(f"{over_numba}x numba < 1x")
    over_plain = row.get("oslr_over_jax_plain")
    if over_plain is not None and not over_plain >= 1.0:
        missed.append(f"{over_plain}x a plain JAX scan < 1x")
    if row["learner"] == "linucb" and not row.get("harness_share_cpu", 0.0) <= 0.25:
        missed.append(f"harness share {row['harness_share_cpu']} > 0.25")
    if not row["ratio"] >= 10:
        missed.append(f"{row['ratio']}x NumPy < 10x")
    elif row["learner"] in ("foster-hedge", "ftpsl") and not row["ratio"] >= 20:
        missed.append(f"{row['ratio']}x NumPy < 20x")
    if row["learner"] == "linucb":
        if not row["ratio"] >= 100:
            missed.append(f"{row['ratio']}x NumPy < 100x")
        river = peer_ratio(row, "river")
        if river is not None and not river >= 500:
            missed.append(f"{river}x river < 500x")
    if row["kind"] == "linalg" and not row["pct_peak"] >= 25:
        missed.append(f"{row['pct_peak']}% of peak < 25%")
    return missed


def markdown_table(rows: list[dict], cols: list[str] | None = None) -> str:
    """A Markdown table of `rows` (columns: `cols`, default the first row's keys; None -> "")."""
    if not rows:
        return ""
    cols = cols or list(rows[0])
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join("" if r.get(c) is None else str(r[c]) for c in cols) + " |"
              for r in rows]
    return "\n".join(lines) + "\n"


def rows_markdown(rows: list[dict], notes: dict[str, str]) -> str:
    """The throughput table plus, for each row that misses a target, why and what would fix it."""
    clock = "wall" if any("oslr_wall" in r for r in rows) else "cpu"
    cols = ["learner", "family", "d", "k", "T", "runs", f"oslr_{clock}",
            *(f"{side}_{clock}" for side in ANCHOR_SIDES), "best_alternative", "oslr_over_best",
            "oslr_over_jax_plain", "compile_s", "jax_run_rounds_per_s", "jax_mem_mb",
            "numpy_rounds_per_s", "numpy_mem_mb", "ratio", "harness_share", "harness_share_cpu",
            "kind", "gflops", "pct_peak", "peers", "targets"]
    table, misses = [], []
    for r in rows:
        missed = missed_targets(r)
        table.append({**r, "peers": _peers_text(r), "targets": "missed" if missed else "met"})
        if missed:
            why = notes.get(r["learner"], "no profile recorded yet.")
            misses.append(f"- **{r['learner']}** ({'; '.join(missed)}): {why}")
    text = markdown_table(table, cols)
    if misses:
        text += "\nMissed targets, what dominates the round, and the fix:\n\n" + "\n".join(misses)
        text += "\n"
    return text


def bench_all(cases: list[Case], runs: int | None, horizon: int, repeats: int,
              peak_gflops: float, loop_seconds: float = 0.3, progress=None,
              clock: str = "cpu") -> list[dict]:
    """Every case's row (runs: the case's own unless given; clock: as `bench_case`)."""
    rows = []
    for case in cases:
        if progress is not None:
            progress(case.learner)
        h = max(10, round(horizon * case.horizon_scale))
        rows.append(bench_case(case, runs or case.runs, h, repeats, peak_gflops,
                               loop_horizon=max(20, min(h, 2000)),
                               peer_horizon=max(20, min(h, 300)), loop_seconds=loop_seconds,
                               clock=clock))
    return rows


__all__ = ["ANCHOR_SIDES", "anchor_calls", "bench_all", "bench_case", "build", "interleaved", "jax_program", "loop_program",
           "markdown_table", "missed_targets", "peer_ratio", "rows_markdown", "time_jax",
           "timed_in_turn"]
