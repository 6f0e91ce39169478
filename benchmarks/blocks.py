"""Studies bigger than memory, played in blocks of runs (`oslr.simulate`'s `max_memory`).

`python -m benchmarks.blocks [--case big|flat|all] [--out FILE]` prints one JSON line per study
and with `--out` merges them into FILE (`benchmarks/results.json`, key `blocks`) and rewrites
the RESULTS.md beside it (`benchmarks.suite.to_markdown`):

* `big`: the study of issue #58, `oslr run --problem linear-bandit --learners linucb --d 100
  --runs 200000 --horizon 100` with nothing capped: the blocks come from the memory available;
* `flat`: LinUCB at d = 100 (100 rounds) under one `max_memory` cap of 256 MiB, whose blocks
  hold 1,830 runs: 1x is 8,000 runs (a state more than 4x the cap: five blocks), then 2x, 4x
  and 8x, and the 8x study again in one batch with no cap: the peak resident memory of each,
  and whether each blocked study's per-run final regrets equal, bit for bit, the same runs of
  the one batch (run r's stream depends on r only).

Every study runs in a fresh process, one at a time; its peak resident memory is the process's
own (`ru_maxrss`), its wall time from the call to the result. Nothing here is asserted.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

_BIG = ["run", "--problem", "linear-bandit", "--learners", "linucb", "--d", "100", "--runs",
        "200000", "--horizon", "100", "--no-progress", "--no-plot"]

#: a child study: prints {"wall_s", "peak_rss_mb", "block_runs"} and saves the final regrets
_CHILD = """
import json, resource, sys, time
import numpy as np
import oslr
problem, pp = oslr.make_problem("linear-bandit", d=100)
learner, params = oslr.make("linucb", d=100)
runs, cap, out = int(sys.argv[1]), (None if sys.argv[2] == "none" else sys.argv[2]), sys.argv[3]
t0 = time.perf_counter()
res = oslr.simulate(learner, problem, params, pp, horizon=100, n_runs=runs, max_memory=cap)
wall = time.perf_counter() - t0
np.save(out, res.final["pseudo_regret"][0])
print(json.dumps({"wall_s": round(wall, 1), "block_runs": res.info.get("block_runs", runs),
                  "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                                       / 1024)}))
"""

_CLI = """
import json, resource, sys, time
from oslr.cli import main
t0 = time.perf_counter()
code = main(sys.argv[1:])
print(json.dumps({"exit": code, "wall_s": round(time.perf_counter() - t0, 1),
                  "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                                       / 1024)}))
"""


def _child(script: str, *args: str) -> dict:
    out = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True,
                         cwd=ROOT)
    if out.returncode != 0:
        return {"exit": out.returncode, "stderr": out.stderr.strip().splitlines()[-1:]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def big() -> list[dict]:
    """The 200,000-run LinUCB study through the command line, with its blocks."""
    with tempfile.TemporaryDirectory() as tmp:
        got = _child(_CLI, *_BIG, "--out", str(Path(tmp, "study")))
        config = Path(tmp, "study", "config.json")
        if config.exists():
            info = json.loads(config.read_text())["results"][0]["info"]
            got["block_runs"] = info.get("block_runs", 200000)
    row = {"study": "oslr run linucb d=100, 200,000 runs, T=100", "runs": 200000, **got}
    print(json.dumps(row), flush=True)
    return [row]


def flat(cap: str = "256M", base: int = 8000) -> list[dict]:
    """LinUCB under one cap at 1x-8x `base` runs, each against one uncapped batch of 8x."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        one = _child(_CHILD, str(8 * base), "none", str(Path(tmp, "one.npy")))
        whole = np.load(Path(tmp, "one.npy"))
        for mult in (1, 2, 4, 8):
            got = _child(_CHILD, str(mult * base), cap, str(Path(tmp, f"{mult}.npy")))
            same = np.array_equal(np.load(Path(tmp, f"{mult}.npy")), whole[:mult * base])
            rows.append({"study": f"linucb d=100 T=100, max_memory {cap}", "runs": mult * base,
                         **got, "equal_to_one_batch": bool(same)})
            print(json.dumps(rows[-1]), flush=True)
        rows.append({"study": "linucb d=100 T=100, one batch", "runs": 8 * base, **one,
                     "equal_to_one_batch": True})
        print(json.dumps(rows[-1]), flush=True)
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.blocks", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--case", choices=("big", "flat", "all"), default="all")
    parser.add_argument("--out", default=None, help="results.json to merge the rows into")
    args = parser.parse_args(argv)
    rows = (flat() if args.case in ("flat", "all") else []) + (
        big() if args.case in ("big", "all") else [])
    if args.out:
        from benchmarks.suite import merge_rows

        merge_rows(Path(args.out), "blocks", rows, same=lambda r: r["study"])


if __name__ == "__main__":
    main()
