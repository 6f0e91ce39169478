"""What each piece of machinery that leans on JAX's internals gains, beside what it costs.

    python -m benchmarks.machinery [--repeats N] [--out benchmarks/results.json]

Each piece is measured with it and without it, in new processes taken in turn (so that both see
the same machine), on the headline studies and on a warm first result:

* `store`, oslr's store of traced and lowered study programs (`oslr/compile_cache.py`): a warm
  first result (JAX's persistent cache filled by an earlier process in both) of the README's
  Python sweep at 100 runs, of its `oslr.Study` example and of `oslr run` at its defaults, with
  the store and with `OSLR_PROGRAM_STORE=off`; on a headline study the store saves what it saves
  on a first result, once per process, against a run of seconds to hours.
* `threefry`, oslr's unrolled threefry (`oslr/prng.py`): the headline studies' run-rounds/s
  (ogd-full, linucb and ftpsl at their throughput rows' sizes, `benchmarks/cases.py`), by
  process CPU time, with `OSLR_THREEFRY=unrolled` (the default) and `rolled`; and the warm first
  result of the sweep.
* `one-pass counting`, `in_top_k` counting in one pass on one CPU core
  (`oslr/primitives/topk.py`): ftpsl's headline on one core (`OSLR_CPUS=0`), by the one pass
  (the default there) and by all pairs.
* `option probes`, the compile-option probes (`oslr.program.known_options`): their own seconds
  in a new process with a warm cache, against the warm first result they are part of.

The costs (lines of oslr's code each piece takes, the JAX APIs it depends on) are counted from
the source (`COSTS`). Wall time and process CPU time; nothing is asserted.
"""

from __future__ import annotations

import inspect
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.first_result import _TIMED, _marks, _quickstart_body, _study_body, repeats_main

ROOT = Path(__file__).resolve().parents[1]

#: the headline studies: (learner, runs, T) of their throughput rows in full mode
HEADLINES = (("ogd-full", 256, 2000), ("linucb", 1024, 2000), ("ftpsl", 256, 800))

#: a child that times one headline study's compiled chunk (`throughput.jax_program`) and prints
#: its run-rounds/s by process CPU time and by wall time
_HEADLINE = """
import json, statistics, sys, time
name, runs, horizon, repeats, pairs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \\
    int(sys.argv[4]), sys.argv[5] == "pairs"
if pairs:  # in_top_k counts every pair at once, as on several cores
    from oslr.learners import ftpsl
    from oslr.primitives import topk
    topk.counts_in_one_pass = ftpsl.counts_in_one_pass = lambda: False
from benchmarks import cases, throughput
case = next(c for c in cases.CASES if c.learner == name)
program = throughput.jax_program(case, runs, horizon)
cpu, wall = [], []
for _ in range(repeats):
    c, w = time.process_time(), time.perf_counter()
    program["call"]()
    cpu.append(time.process_time() - c)
    wall.append(time.perf_counter() - w)
print("RESULT", json.dumps({"cpu_rate": runs * horizon / statistics.median(cpu),
                            "wall_rate": runs * horizon / statistics.median(wall)}))
"""

#: a child that times the compile-option probes of a new process (warm cache)
_PROBES = """
import time
import oslr
oslr.use_compile_cache()
from oslr import program
t = time.perf_counter()
program.compiler_options()
print("PROBES", time.perf_counter() - t)
"""


def _run(cmd: list[str], env: dict, cwd: Path) -> str:
    return subprocess.run(cmd, env={**os.environ, **env}, cwd=cwd, capture_output=True,
                          text=True, check=True).stdout


def headline(name: str, runs: int, horizon: int, settings: dict[str, dict], repeats: int,
             calls: int = 3) -> dict[str, dict]:
    """Median run-rounds/s of `name`'s headline under each of `settings` (label -> env, with
    "COUNT": "pairs" for in_top_k by all pairs), children taken in turn `repeats` times."""
    got: dict[str, list[dict]] = {label: [] for label in settings}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(repeats):
            for label, env in settings.items():
                env = dict(env)
                count = env.pop("COUNT", "default")
                out = _run([sys.executable, "-c", _HEADLINE, name, str(runs), str(horizon),
                            str(calls), count], {**env, "OSLR_COMPILE_CACHE": "off",
                                                 "PYTHONPATH": str(ROOT)}, Path(tmp))
                got[label].append(json.loads(out.split("RESULT ", 1)[1]))
    return {label: {k: statistics.median(r[k] for r in rows) for k in rows[0]}
            for label, rows in got.items()}


def first_results(settings: dict[str, dict], repeats: int) -> dict[str, dict[str, float]]:
    """Median seconds to a warm first result (the cache filled by a first process under the
    same setting) of the README's sweep at 100 runs, its Study and `oslr run`, per setting."""
    sweep = _TIMED.format(body=_quickstart_body().replace("n_runs=1000", "n_runs=100"))
    cases = {"sweep, 100 runs": [sys.executable, "-c", sweep],
             "Study": [sys.executable, "-c", _TIMED.format(body=_study_body())],
             "oslr run": [sys.executable, "-m", "oslr", "run", "--out", "study",
                          "--no-progress"]}
    got: dict[tuple, list[float]] = {}
    for _ in range(repeats):
        for label, env in settings.items():
            with tempfile.TemporaryDirectory() as tmp:
                cache, cwd = Path(tmp, "cache"), Path(tmp)
                for case, cmd in cases.items():
                    _marks(cmd, cache, cwd, env)  # fills the cache
                    for sub in [*cwd.glob("study*"), *cwd.glob("results*")]:
                        sub.rename(cwd / f"old-{time.time_ns()}")
                    marks = _marks(cmd, cache, cwd, env)
                    got.setdefault((case, label), []).append(marks.get("result", marks["exit"]))
    out: dict[str, dict[str, float]] = {}
    for (case, label), seconds in got.items():
        out.setdefault(case, {})[label] = round(statistics.median(seconds), 2)
    return out


def probe_seconds(repeats: int) -> float:
    """Median seconds of the compile-option probes in a new process with a warm cache."""
    seconds = []
    with tempfile.TemporaryDirectory() as tmp:
        env = {"OSLR_COMPILE_CACHE": str(Path(tmp, "cache")), "PYTHONPATH": str(ROOT)}
        for _ in range(repeats + 1):  # the first fills the cache
            out = _run([sys.executable, "-c", _PROBES], env, Path(tmp))
            seconds.append(float(out.split("PROBES ", 1)[1]))
    return round(statistics.median(seconds[1:]), 3)


def _lines(*objects) -> int:
    return sum(len(inspect.getsource(o).splitlines()) for o in objects)


def costs() -> dict[str, dict]:
    """Lines of oslr's code and the JAX APIs each piece depends on, counted from the source."""
    from oslr import compile_cache, cpus, prng, program
    from oslr.primitives import topk

    cc = compile_cache
    return {
        "store": {"lines": _lines(cc.store_dir, cc.code_digest, cc.value_digest, cc._feed,
                                  cc._trusted, cc._feed_function, cc._filled, cc._key_text,
                                  cc._key, cc._storable, cc.load_or_compile, cc._load_or_export,
                                  cc._why, cc._entry, cc._digest, cc._load, cc._check_signature,
                                  cc._compile, cc._tree_data, cc._plain, cc._unplain,
                                  cc._tree_from_data, cc._export, cc._OverLeaves, cc._trim,
                                  program.identity),
                  "jax_apis": "jax.export (export, serialize, deserialize, Exported.call, "
                              "in_avals, out_avals); PyTreeDef.node_data, children, "
                              "from_node_data_and_children; jax._src.config.trace_context "
                              "(private)"},
        "threefry": {"lines": len(inspect.getsource(prng).splitlines()),
                     "jax_apis": "jax.extend.random.define_prng_impl, threefry2x32_p"},
        "one-pass counting": {"lines": _lines(topk.counts_in_one_pass, topk._rank_by_pass,
                                              topk._ordered_bits, cpus.count),
                              "jax_apis": "lax.optimization_barrier, lax.fori_loop"},
        "option probes": {"lines": _lines(program.known_options, program.compiler_options),
                          "jax_apis": "jax.jit(compiler_options=...) (XLA's option names)"},
    }


def measure(repeats: int = 3) -> list[dict]:
    """The table's rows: per piece, what it gains on each headline and on a warm first result."""
    rows = []
    cost = costs()

    def row(piece: str, study: str, measure_: str, on: float, off: float, unit: str) -> None:
        gain = (on / off - 1) if unit == "run-rounds/s" else (off / on - 1)
        rows.append({"piece": piece, "study": study, "measure": f"{measure_} ({unit})",
                     "with": round(on, 2 if unit == "s" else 0),
                     "without": round(off, 2 if unit == "s" else 0),
                     "gain_pct": round(100 * gain, 1), "lines": cost[piece]["lines"],
                     "jax_apis": cost[piece]["jax_apis"]})
        print(json.dumps(rows[-1]), flush=True)

    warm = first_results({"store": {}, "no store": {"OSLR_PROGRAM_STORE": "off"},
                          "rolled": {"OSLR_THREEFRY": "rolled"}}, repeats)
    for case, by in warm.items():
        row("store", case, "warm first result", by["store"], by["no store"], "s")
    row("threefry", "sweep, 100 runs", "warm first result", warm["sweep, 100 runs"]["store"],
        warm["sweep, 100 runs"]["rolled"], "s")
    for name, runs, horizon in HEADLINES:
        got = headline(name, runs, horizon, {"unrolled": {}, "rolled": {"OSLR_THREEFRY": "rolled"}},
                       repeats)
        row("threefry", f"{name}, {runs} runs x {horizon}", "headline",
            got["unrolled"]["cpu_rate"], got["rolled"]["cpu_rate"], "run-rounds/s")
    name, runs, horizon = HEADLINES[2]
    got = headline(name, runs, horizon, {"pass": {"OSLR_CPUS": "0"},
                                         "pairs": {"OSLR_CPUS": "0", "COUNT": "pairs"}}, repeats)
    row("one-pass counting", f"{name}, {runs} runs x {horizon}, one core", "headline",
        got["pass"]["cpu_rate"], got["pairs"]["cpu_rate"], "run-rounds/s")
    probes = probe_seconds(repeats)
    sweep = warm["sweep, 100 runs"]["store"]
    row("option probes", "sweep, 100 runs", "warm first result", sweep, sweep - probes, "s")
    return rows


def main(argv=None) -> None:
    repeats_main("machinery", __doc__, "machinery", measure, argv)


if __name__ == "__main__":
    main()
