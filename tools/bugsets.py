"""Replay sets of hand-written plausible bugs against the default run's tests.

    python tools/bugsets.py                       # every set in tools/records/bugsets/, every bug
    python tools/bugsets.py 2026-11-29a           # one set (its file name without .toml)
    python tools/bugsets.py 2026-11-29a --bugs 3,7
    python tools/bugsets.py --table               # rewrite tools/records/BUGSETS.md from the json

mutmut's mutants (`tools/mutation.py`) are syntactic: an operator swapped, a constant moved by
one. The bugs a maintainer writes are semantic: a schedule indexed from t instead of t + 1, an
exponent 1/a where the paper says 1/b, a count of the support alone where the union was meant.
A set is a TOML file of such bugs, each an exact text replacement in one file of src/oslr or of
doctools/ (the docs' tables) (`[[bug]]` with `file`, `old`, `new`, `what`). Each bug is applied
to a fresh copy of src/ and doctools/ (the
checkout is never touched), and the default run's tests of the bug's module (`tests_for` of
`tools/mutation.py`: the mirrored files and their extras) run against the copy, stopping at the
first failure. A bug is caught when a test fails. The verdicts, the first failing test, the
date and the commit go to `tools/records/BUGSETS.json`, and `tools/records/BUGSETS.md` is rendered from it.

A set records the tests as they were: the first run of a new set is the estimate of how many
unnamed bugs the tests catch (kept as `first`); a bug the tests missed is then killed by a new
test and the set rerun.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import functools
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
SETS = ROOT / "tools" / "records" / "bugsets"
RESULTS = ROOT / "tools" / "records" / "BUGSETS.json"
TABLE = ROOT / "tools" / "records" / "BUGSETS.md"


@functools.cache
def _mutation_tool():
    """tools/mutation.py as a module (loaded once): its `tests_for` and `_commit`."""
    spec = importlib.util.spec_from_file_location("mutation_tool", ROOT / "tools" / "mutation.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def load_set(name: str) -> list[dict]:
    """The bugs of set `name` (tools/records/bugsets/NAME.toml), each checked to name a file of
    src/oslr and an `old` text found there exactly once."""
    path = SETS / f"{name}.toml"
    if not path.exists():
        have = sorted(p.stem for p in SETS.glob("*.toml"))
        raise SystemExit(f"no bug set {name!r}; the sets are {have}")
    bugs = tomllib.loads(path.read_text())["bug"]
    for i, b in enumerate(bugs):
        missing = {"file", "old", "new", "what"} - set(b)
        if missing:
            raise SystemExit(f"{name} bug {i}: missing {sorted(missing)}")
        if not b["file"].startswith(ROOTS):
            raise SystemExit(f"{name} bug {i}: {b['file']} is not under src/oslr/ or doctools/")
        n = (ROOT / b["file"]).read_text().count(b["old"])
        if n != 1:
            raise SystemExit(f"{name} bug {i} ({b['what']}): its old text occurs {n} times in "
                             f"{b['file']}; it must occur once (the set is out of date)")
    return bugs


#: the folders a bug may be written into: the package, and the docs' table renderer
ROOTS = ("src/oslr/", "doctools/")


def module_of(path: str) -> str:
    """src/oslr/learners/ogd.py -> oslr.learners.ogd; doctools/tables.py -> doctools.tables."""
    parts = Path(path).with_suffix("").parts
    return ".".join(parts[1:] if parts[0] == "src" else parts)


def first_failure(stdout: str) -> str:
    for line in stdout.splitlines():
        if line.startswith(("FAILED ", "ERROR ")):
            return line.split(" ", 1)[1].split(" - ")[0]
    return ""


def run_bug(bug: dict, workers: int, timeout: int) -> dict:
    """Apply `bug` to a copy of src/ and doctools/ and run its module's default-run tests
    against it."""
    tests = _mutation_tool().tests_for(module_of(bug["file"]))
    with tempfile.TemporaryDirectory(prefix="oslr-bug-") as tmp:
        for top in ("src", "doctools"):
            shutil.copytree(ROOT / top, Path(tmp, top),
                            ignore=shutil.ignore_patterns("__pycache__"))
        target = Path(tmp, bug["file"])
        target.write_text(target.read_text().replace(bug["old"], bug["new"]))
        # the copies first: no working directory on the path (PYTHONSAFEPATH) and pytest's
        # rootdir appended, so `doctools` is the copy's, not the checkout's
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(tmp, "src")), tmp]),
                   PYTHONSAFEPATH="1")
        cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
               "--import-mode=append", "-n", str(workers), *tests]
        try:
            r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True,
                               timeout=timeout)
            caught, failed = r.returncode != 0, first_failure(r.stdout)
            if caught and not failed:
                failed = (r.stdout.strip().splitlines() or ["(no output)"])[-1]
        except subprocess.TimeoutExpired:
            caught, failed = True, f"(timed out after {timeout} s)"
    return {"what": bug["what"], "module": module_of(bug["file"]), "caught": caught,
            "failed": failed, "tests": tests}


def _commit() -> str:
    return _mutation_tool()._commit(RESULTS, TABLE)


def record(results: dict, name: str, verdicts: dict[int, dict], n_bugs: int) -> dict:
    """`results` with set `name`'s verdicts merged in (by bug index); `first` is the caught
    count of the set's first complete run, kept across reruns."""
    entry = dict(results.get(name, {}))
    bugs = dict(entry.get("bugs", {}))
    bugs.update({str(i): v for i, v in verdicts.items()})
    entry.update(bugs=bugs, n_bugs=n_bugs, date=_dt.date.today().isoformat(),
                 commit=_commit())
    if "first" not in entry and len(bugs) == n_bugs:
        entry["first"] = sum(v["caught"] for v in bugs.values())
        entry["first_commit"] = entry["commit"]
    return dict(results, **{name: entry})


def write_table(results: dict) -> None:
    lines = ["# Hand-written bug sets", "",
             "Generated by `python tools/bugsets.py --table` from `tools/records/BUGSETS.json` (do not "
             "edit by hand). Each set", "(`tools/records/bugsets/*.toml`) holds plausible bugs written by "
             "hand, each replayed on a copy of src/ against the", "default run's tests of its "
             "module (`tools/bugsets.py`). *First run* = bugs caught when the set was first",
             "run, before any test was written for them.", ""]
    for name, e in sorted(results.items()):
        bugs = e["bugs"]
        caught = sum(v["caught"] for v in bugs.values())
        first = (f"; first run {e['first']} of {e['n_bugs']} "
                 f"({100 * e['first'] / e['n_bugs']:.0f}%, {e['first_commit']})"
                 if "first" in e else "")
        lines += [f"## {name}", "",
                  f"{caught} of {len(bugs)} caught ({e['date']}, {e['commit']}){first}.", "",
                  "| # | module | bug | caught by |", "|---|---|---|---|"]
        for i in sorted(bugs, key=int):
            v = bugs[i]
            by = f"`{v['failed']}`" if v["caught"] else "**missed**"
            lines.append(f"| {i} | `{v['module']}` | {v['what']} | {by} |")
        lines.append("")
    TABLE.write_text("\n".join(lines))


def load_results() -> dict:
    return json.loads(RESULTS.read_text()) if RESULTS.exists() else {}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sets", nargs="*", help="set names (tools/records/bugsets/NAME.toml); default all")
    ap.add_argument("--bugs", help="only these bug indices, e.g. 3,7")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 2,
                    help="pytest-xdist workers per bug")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per bug")
    ap.add_argument("--table", action="store_true", help="only rewrite tools/records/BUGSETS.md")
    a = ap.parse_args(argv)
    if a.table:
        write_table(load_results())
        return 0
    names = a.sets or sorted(p.stem for p in SETS.glob("*.toml"))
    only = {int(i) for i in a.bugs.split(",")} if a.bugs else None
    for name in names:
        bugs = load_set(name)
        for i, bug in enumerate(bugs):
            if only is not None and i not in only:
                continue
            v = run_bug(bug, a.workers, a.timeout)
            print(f"{name} #{i} {v['module']}: {'caught' if v['caught'] else 'MISSED'} "
                  f"({bug['what']}) {v['failed']}", flush=True)
            results = record(load_results(), name, {i: v}, len(bugs))
            RESULTS.write_text(json.dumps(results, indent=1) + "\n")
        write_table(load_results())
    return 0


if __name__ == "__main__":
    sys.exit(main())
