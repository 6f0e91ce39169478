"""How long a new process takes to a first result, with an empty compilation cache and with the
one an earlier process left (`oslr.compile_cache`).

`python -m benchmarks.first_result [--repeats N] [--out FILE]` prints one JSON line per case and
cache state, and with `--out` merges them into FILE (`benchmarks/results.json`, key
`first_result`) and rewrites the RESULTS.md beside it (`benchmarks.suite.to_markdown`):

* `quickstart`: the README's Python sweep (two learners x 3 k x 1,000 runs x 2,000 rounds), from
  the process's start: `import_s` until `import oslr` returns, `jax_s` until JAX is imported
  too (oslr imports it at its first use), `ready_s` until the block's other imports are done
  too (`from oslr import report`: pandas and scipy), `result_s` until both results are on the
  host; `sweep_s` is result_s - ready_s, the sweep itself (making the problem and learners,
  loading or compiling their programs, running them);
* `quickstart, 100 runs`: the same at 100 runs (where the compiling, not the running, is most
  of the time);
* `quickstart Study`: the README's `oslr.Study` example (100 runs), to its folder read back;
* `oslr run`: the command at its defaults (100 runs, 2,000 rounds, two learners), the process's
  wall time.

Each case runs `--repeats` times cold (a new, empty cache folder each time) and warm (the folder
the cold run filled); the medians are reported. Wall time, one process at a time; nothing here
is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: the child prints its own clock at each mark; the parent's clock before the spawn is 0
_TIMED = """
import time
print("MARK start", time.time(), flush=True)
{body}
"""


def _quickstart_body() -> str:
    """The README's sweep (without its printing and plotting), with a mark after the import
    and one when the results are on the host."""
    readme = (ROOT / "README.md").read_text()
    block = next(b for b in re.findall(r"```python\n(.*?)```", readme, flags=re.S)
                 if "oslr.sweep" in b)
    code = block.split("print(", 1)[0]
    code = code.replace("import oslr\n", 'import oslr\nprint("MARK import", time.time())\n'
                        'import jax\nprint("MARK jax", time.time())\n', 1)
    imports, rest = code.split("\n\n", 1)  # the block's imports, then the study
    ready, result = 'print("MARK ready", time.time())', 'print("MARK result", time.time())'
    return f"{imports}\n{ready}\n\n{rest}{result}\n"


def _study_body() -> str:
    """The README's `oslr.Study` example (without its printing), with a mark when the study's
    folder is read back."""
    readme = (ROOT / "README.md").read_text()
    block = next(b for b in re.findall(r"```python\n(.*?)```", readme, flags=re.S)
                 if "oslr.Study(" in b)
    code = block.split("print(", 1)[0]
    return f'{code}print("MARK result", time.time())\n'


def _marks(cmd: list[str], cache: Path, cwd: Path, extra: dict | None = None
           ) -> dict[str, float]:
    """Seconds from before the spawn to each MARK the child prints, and to its exit (`extra`:
    more environment variables)."""
    env = dict(os.environ, OSLR_COMPILE_CACHE=str(cache), MPLBACKEND="Agg", **(extra or {}))
    t0 = time.time()
    out = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, check=True).stdout
    end = time.time() - t0
    marks = {line.split()[1]: float(line.split()[2]) - t0 for line in out.splitlines()
             if line.startswith("MARK ")}
    return {**marks, "exit": end}


def measure(repeats: int = 3) -> list[dict]:
    """Median seconds of each case, cold and warm."""
    body = _quickstart_body()
    cases = {
        "quickstart": [sys.executable, "-c", _TIMED.format(body=body)],
        "quickstart, 100 runs": [sys.executable, "-c", _TIMED.format(
            body=body.replace("n_runs=1000", "n_runs=100"))],
        "quickstart Study": [sys.executable, "-c", _TIMED.format(body=_study_body())],
        "oslr run": [sys.executable, "-m", "oslr", "run", "--out", "study", "--no-progress"],
    }
    rows = []
    for name, cmd in cases.items():
        cold, warm = [], []
        for _ in range(repeats):
            with tempfile.TemporaryDirectory() as tmp:
                cache, cwd = Path(tmp, "cache"), Path(tmp)
                cold.append(_marks(cmd, cache, cwd))
                # a finished study is never overwritten
                for sub in [*cwd.glob("study*"), *cwd.glob("results*")]:
                    sub.rename(cwd / f"old-{time.time_ns()}")
                warm.append(_marks(cmd, cache, cwd))
        for state, runs in (("cold", cold), ("warm", warm)):
            row = {"case": name, "cache": state, "repeats": repeats}
            for key in ("import", "jax", "ready", "result", "exit"):
                if key in runs[0]:
                    row[f"{key}_s"] = round(statistics.median(r[key] for r in runs), 2)
            if "ready" in runs[0]:  # the sweep itself: from every import done to the results
                row["sweep_s"] = round(statistics.median(r["result"] - r["ready"] for r in runs), 2)
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def repeats_main(module: str, doc: str, key: str, measure_rows, argv=None) -> None:
    """`python -m benchmarks.MODULE [--repeats N] [--out FILE]`: `measure_rows(repeats)`, and
    with --out its rows merged into FILE under `key` (RESULTS.md beside it rewritten)."""
    parser = argparse.ArgumentParser(prog=f"python -m benchmarks.{module}", description=doc,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=None, help="results.json to merge the rows into")
    args = parser.parse_args(argv)
    rows = measure_rows(args.repeats)
    if args.out:
        from benchmarks.suite import merge_rows

        merge_rows(Path(args.out), key, rows)


def main(argv=None) -> None:
    repeats_main("first_result", __doc__, "first_result", measure, argv)


if __name__ == "__main__":
    main()
