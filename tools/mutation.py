"""Mutation testing of one module at a time with mutmut, on the tests that mirror it.

    python tools/mutation.py oslr.checks oslr.stats     # every mutant (a seeded sample of
                                                        #   --sample where a module has more)
    python tools/mutation.py --changed [BASE]           # the modules a change touches (git diff)
    python tools/mutation.py --table                    # rewrite tools/records/MUTATION.md from the json
    python tools/mutation.py --survivors oslr.checks    # each live mutant's diff (kept in the json)
    python tools/mutation.py oslr.stats --functions compare,holm   # only these functions'
                                                        #   mutants: the code a change touched

For each module mutmut copies the package into `mutants/` (ignored by git), writes every mutant
of the module as a trampoline, runs the module's tests (`tests_for`: the mirrored test files
plus the listed extras) once to learn which test reaches which function, then runs each mutant
on the tests that reach it (stopping at the first failure), each in a fresh process forked from a
server that has imported jax, numpy and pandas but started no backend, so a mutant is traced
and compiled anew. The tests run as in the default run (`-m 'not slow'`, the suite's fast
build: tests.FAST_BUILD_FLAGS) in one process each (`-n 0`), two mutants at a time on two cores.

Code that runs at import (module-level specs, factories and closures built when the module is
imported) is imported once before the mutants fork, so its mutants take effect only where a
test calls that code again: such tests build the spec or factory themselves (e.g.
`test_pege.py`'s `_spec(fast=True)`); otherwise these mutants show as survived.

Verdicts: killed (a test failed, the test process crashed, or the mutant ran past mutmut's
timeout: 15 x the clean duration + 1 s), survived, or no test (no selected test reached the
function: counted as survived). Mutants listed in `tools/records/MUTATION-equivalent.toml` with a
reason (programs that behave the same) leave the denominator. The score, the counts, the date
and the commit of each module go to `tools/records/MUTATION.json`, and `tools/records/MUTATION.md` is rendered
from it.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import fnmatch
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "tools" / "records" / "MUTATION.json"
TABLE = ROOT / "tools" / "records" / "MUTATION.md"
EQUIVALENT = ROOT / "tools" / "records" / "MUTATION-equivalent.toml"
PRELOAD = ["jax", "jax.numpy", "numpy", "scipy.stats", "pandas", "optax"]

# Tests beyond the mirrored ones (tests/<pkg>/test_<module>.py, tests/test_<pkg>.py,
# tests/test_<module>.py): a module whose promises are checked elsewhere too.
EXTRA_TESTS = {
    "doctools.tables": ["tests/experiments/test_doc_tables.py",
                        "tests/experiments/test_doc_prose.py", "tests/test_docs.py"],
    "oslr.checks": ["tests/test_spec.py"],
    "oslr.metrics": ["tests/test_sim.py", "tests/test_regret.py"],
    "oslr.families": ["tests/test_metrics.py", "tests/test_result.py", "tests/test_protocol.py",
                      "tests/test_regret.py"],
    "oslr.regret": ["tests/test_sim.py", "tests/test_metrics.py"],
    "oslr.result": ["tests/test_report.py", "tests/test_sim.py"],
    "oslr.protocol": ["tests/test_contract.py"],
    "oslr.rollout": ["tests/test_sim.py", "tests/test_checkpoint.py", "tests/test_prng.py",
                     "tests/test_protocol.py"],
    "oslr.sim": ["tests/test_checkpoint.py", "tests/test_rollout.py", "tests/test_blocks.py",
                 "tests/test_compile_cache.py"],
    "oslr.blocks": ["tests/test_sim.py", "tests/test_checkpoint.py",
                    "tests/test_compile_cache.py"],
    "oslr.spill": ["tests/test_blocks.py"],
    "oslr.checkpoint": ["tests/test_sim.py", "tests/cli/", "tests/test_blocks.py"],
    "oslr.program": ["tests/test_sim.py", "tests/test_checkpoint.py", "tests/test_rollout.py",
                     "tests/test_metrics.py", "tests/test_compile_cache.py"],
    "oslr.memory": ["tests/test_sim.py", "tests/cli/", "tests/test_blocks.py"],
    "oslr.validation": ["tests/test_sim.py", "tests/cli/", "tests/test_extension_problems.py"],
    "oslr.prng": ["tests/test_rollout.py"],
    "oslr.spec": ["tests/test_extension.py", "tests/test_extension_problems.py"],
    # each problem's declared options and comparator, checked with every problem's
    **{f"oslr.problems.{m}": ["tests/test_spec.py", "tests/test_extension_problems.py"]
       for m in ("synthetic", "bandits", "datasets", "set_cover", "obd", "delays")},
    "oslr.registry": ["tests/test_extension.py", "tests/test_spec.py",
                      "tests/test_extension_problems.py",
                      "tests/test_cpus.py"],  # make applies OSLR_CPUS before JAX starts
    "oslr.report": ["tests/test_result.py", "tests/cli/", "tests/test_saved.py"],
    "oslr.frames": ["tests/test_report.py", "tests/test_result.py", "tests/test_saved.py"],
    "oslr.provenance": ["tests/cli/"],
    "oslr.cli": ["tests/test_readme.py", "tests/experiments/test_doc_tables.py"],
    # the commands that compile ask for the compile cache first
    "oslr.cli.__init__": ["tests/cli/test_main.py", "tests/test_compile_cache.py::"
                          "test_study_entry_points__ask_for_the_cache_before_anything_compiles"],
    "oslr.cli.commands": ["tests/test_saved.py", "tests/test_extension.py",
                          "tests/experiments/test_doc_tables.py",
                          "tests/experiments/test_reproduce.py"],
    "oslr.__init__": ["tests/test_imports.py", "tests/test_extension.py"],
    "oslr.testing": ["tests/test_contract.py", "tests/test_x64.py"],
    # primitives whose numeric checks live with the code that uses them
    "oslr.primitives.tree": ["tests/test_rollout.py", "tests/learners/test_bandits.py"],
    "oslr.primitives.subsets": ["tests/test_primitives.py", "tests/test_regret.py",
                                "tests/learners/test_foster.py"],
    "oslr.primitives.history": ["tests/learners/test_least_squares.py"],
    "oslr.types": ["tests/test_contract.py", "tests/test_protocol.py", "tests/test_spec.py",
                   "tests/test_extension_problems.py"],
    # the one test of the optimised build users get (a bug only that build showed, 2026-12-01)
    "oslr.primitives.topk": [
        "tests/learners/test_ftpsl.py::"
        "test_ftpsl__matches_the_reference_under_the_optimised_build_users_get"],
    "oslr.experiments.__init__": ["tests/test_extension.py", "tests/experiments/test_reproduce.py"],
    # the folder's rules as the commands and load meet them
    "oslr.folder": ["tests/test_saved.py", "tests/cli/", "tests/test_report.py"],
    "oslr.saved": ["tests/cli/"],
    "oslr.atomic": ["tests/test_folder.py"],
    "oslr.study.__init__": ["tests/study/", "tests/cli/test_run.py"],
    # a study's rooms: each promise is kept by the study as Python and the command run it
    **{f"oslr.study.{room}": ["tests/study/", "tests/cli/test_run.py"]
       for room in ("settings", "sources", "checks", "prepare", "resume", "until")},
    "oslr.study.driver": ["tests/study/", "tests/cli/test_run.py", "tests/test_compile_cache.py::"
                          "test_study_entry_points__ask_for_the_cache_before_anything_compiles"],
    "oslr.cli.parser": ["tests/cli/test_main.py", "tests/cli/test_run.py"],
    "oslr.cli.run": ["tests/study/"],
    # its tests (the mirror) run the CLI, Study.run and the building blocks in new processes
    "oslr.compile_cache": ["tests/test_blocks.py"],
}
LEARNER_EXTRAS = ["tests/test_contract.py", "tests/test_x64.py"]


def module_path(module: str) -> Path:
    """`oslr.learners.ogd` -> src/oslr/learners/ogd.py (a package's __init__.py otherwise)."""
    p = ROOT / "src" / Path(*module.split("."))
    return p.with_suffix(".py") if p.with_suffix(".py").exists() else p / "__init__.py"


def tests_for(module: str) -> list[str]:
    """The test files of `module`: mirrored names that exist, then EXTRA_TESTS (files, or single
    tests as FILE::NAME)."""
    parts = module.split(".")[1:]
    if parts[-1] == "__init__":  # a package: its own name (the top one has only its extras)
        parts = parts[:-1] or ["__init__"]
    name, pkg = parts[-1], parts[:-1]
    cands = [Path("tests", *pkg, f"test_{name}.py"), Path("tests", f"test_{name}.py")]
    if pkg:
        cands.append(Path("tests", f"test_{pkg[-1]}.py"))
        if pkg[0] == "learners":
            cands += [Path(p) for p in LEARNER_EXTRAS]
    out = [str(c) for c in cands if (ROOT / c).exists()]
    out += [t for t in EXTRA_TESTS.get(module, []) if (ROOT / t.split("::")[0]).exists()]
    if not out and module.endswith(".__init__"):  # a package with no tests of its own
        out = ["tests/test_imports.py"]
    return list(dict.fromkeys(out))


def all_modules() -> list[str]:
    src = ROOT / "src"
    mods = []
    for p in sorted((src / "oslr").rglob("*.py")):
        rel = p.relative_to(src).with_suffix("")
        mods.append(".".join(rel.parts))
    return mods


def changed_modules(base: str) -> list[str]:
    out = subprocess.run(["git", "diff", "--name-only", base, "--", "src/oslr"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout.split()
    return [".".join(Path(f).relative_to("src").with_suffix("").parts) for f in out
            if f.endswith(".py") and (ROOT / f).exists()]


def load_equivalent() -> dict[str, dict]:
    """Mutant name -> {"reason": ..., "diff": ...} from tools/records/MUTATION-equivalent.toml. mutmut
    numbers a function's mutants in order, so an edit of the function renumbers them: an entry
    with a `diff` (the mutant's changed lines, as MUTATION.json keeps them) counts only for a
    mutant of that very diff (`is_equivalent`)."""
    if not EQUIVALENT.exists():
        return {}
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    return dict(tomllib.loads(EQUIVALENT.read_text()))


def is_equivalent(name: str, diff: str | None, equivalent: dict[str, dict]) -> bool:
    """`name` is listed, and its recorded diff (when the entry has one and the diff is known)
    is the listed one: a renumbered name of another mutant does not count."""
    entry = equivalent.get(name)
    if entry is None:
        return False
    return "diff" not in entry or diff is None or entry["diff"].strip() == diff.strip()


def _configure(module: str, tests: list[str]) -> None:
    """mutmut reads [tool.mutmut] from pyproject.toml; this run's module and tests go on top."""
    import mutmut.configuration as mc

    base_reader = mc._config_reader()
    rel = str(module_path(module).relative_to(ROOT))
    preload = ROOT / "mutants-preload.txt"
    preload.write_text("\n".join(PRELOAD) + "\n")
    over = {
        "source_paths": ["src/oslr"],
        "only_mutate": [rel],
        "pytest_add_cli_args_test_selection": tests,
        "preload_modules_file": str(preload),
    }

    def reader(key, default):
        return over[key] if key in over else base_reader(key, default)

    mc._config_reader = lambda: reader
    mc.reset_config()


def _meta(module: str) -> dict:
    rel = module_path(module).relative_to(ROOT)
    return json.loads((ROOT / "mutants" / f"{rel}.meta").read_text())


def function_of(name: str) -> str:
    """The function a mutant mutates: oslr.stats.x_compare__mutmut_3 -> compare,
    oslr.sim.xǁStudyǁrun__mutmut_1 -> Study.run."""
    part = name.rsplit(".", 1)[-1].rsplit("__mutmut_", 1)[0]
    return part[2:].replace("ǁ", ".")  # after the prefix "x_" (function) or "xǁ" (method)


def run_module(module: str, sample: int, seed: int, max_children: int,
               functions: list[str] | None = None) -> dict:
    """Run mutmut on `module` (only the mutants of `functions`, a method as Class.method, where
    given); return its record for MUTATION.json."""
    import mutmut.__main__ as mm

    tests = tests_for(module)
    if not tests:
        raise SystemExit(f"{module}: no test file found; add one to EXTRA_TESTS in {__file__}")
    shutil.rmtree(ROOT / "mutants", ignore_errors=True)
    # one XLA compilation cache for every mutant of the run: a program the mutant does not
    # change is compiled once (the cache key is the program itself, so a mutant's own program
    # is always compiled anew)
    # the mutants share one set of files (the mutant is chosen at run time), which oslr's store
    # of programs cannot tell apart: off, whatever the build
    os.environ["OSLR_PROGRAM_STORE"] = "off"
    os.environ.setdefault("OSLR_TEST_JAX_CACHE", str(Path(os.environ.get("TMPDIR", "/tmp"),
                                                          "oslr-mutation-jax-cache")))
    _configure(module, tests)
    os.chdir(ROOT)
    # generate once to learn the mutant names, then sample
    mm.makedirs(Path("mutants"), exist_ok=True)
    mm.copy_src_dir()
    mm.copy_also_copy_files()
    mm.setup_source_paths()
    mm.store_lines_covered_by_tests()
    mm.create_mutants(max_children)
    names = sorted(_meta(module)["exit_code_by_key"])
    if functions:
        unknown = set(functions) - {function_of(n) for n in names}
        if unknown:
            raise SystemExit(f"{module} has no mutants in {sorted(unknown)}: give functions "
                             "by name (a method as Class.method).")
        names = [n for n in names if function_of(n) in functions]
    if not names:
        return {"module": module, "mutants": 0, "tested": 0, "killed": 0, "survived": [],
                "no_tests": [], "equivalent": [], "score": None, "tests": tests}
    chosen = names if len(names) <= sample else sorted(random.Random(seed).sample(names, sample))
    mm._run(chosen, max_children)
    codes = _meta(module)["exit_code_by_key"]
    from mutmut.stats import status_by_exit_code

    status = {n: status_by_exit_code[codes[n]] for n in chosen}
    equivalent = load_equivalent()
    # a mutant that crashes the test process (segfault) is caught as surely as a failed test
    caught = ("killed", "timeout", "segfault")
    eq = [n for n in chosen if status[n] not in caught and n in equivalent
          and is_equivalent(n, _diff(n) if "diff" in equivalent[n] else None, equivalent)]
    killed = [n for n in chosen if status[n] in caught]
    survived = [n for n in chosen if status[n] == "survived" and n not in eq]
    no_tests = [n for n in chosen if status[n] == "no tests" and n not in eq]
    other = [n for n in chosen if n not in killed + survived + no_tests + eq]
    denom = len(chosen) - len(eq)
    diffs = {n: _diff(n) for n in survived + no_tests + eq}
    return {
        "module": module, "mutants": len(names), "tested": len(chosen), "killed": len(killed),
        "survived": survived, "no_tests": no_tests, "other": {n: status[n] for n in other},
        "equivalent": eq, "score": round(len(killed) / denom, 4) if denom else None,
        "tests": tests, "date": _dt.date.today().isoformat(), "commit": _commit(),
        "seed": seed, "live_diffs": diffs,
    }


def with_first_look(r: dict, previous: dict | None) -> dict:
    """`r` with `first`: [killed, scored] of the first run of its sample (the same seed and
    mutants), carried over from `previous` when that ran the same sample, else this run's own.
    The first look is the score before any test was written for these mutants: an estimate of
    how many unnamed bugs the tests catch, which the final score (after the survivors are
    killed) is not."""
    same = (previous is not None and previous.get("seed") == r["seed"]
            and previous.get("tested") == r["tested"] and previous.get("mutants") == r["mutants"])
    if same and "first" in previous:
        return dict(r, first=previous["first"])
    if previous is not None and previous.get("seed") is None and r["seed"] == 0:
        return r  # a seed-0 record from before seeds were kept: its first look is unknown
    return dict(r, first=[r["killed"], r["tested"] - len(r["equivalent"])])


def _diff(name: str) -> str:
    """The changed lines of mutant `name` (kept in MUTATION.json: `mutants/` is rebuilt by the
    next run)."""
    out = subprocess.run(["mutmut", "show", name], cwd=ROOT, capture_output=True,
                         text=True).stdout
    return "\n".join(line for line in out.splitlines()
                     if line[:1] in "+-" and not line.startswith(("+++", "---")))


def _commit(results: Path = RESULTS, table: Path = TABLE) -> str:
    """HEAD's short hash, with "+changes" when src/ or tests/ differ from it (the tool's own
    `results` and `table` files aside)."""
    sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                         text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "src", "tests",
                            f":!{results.relative_to(ROOT)}", f":!{table.relative_to(ROOT)}"],
                           cwd=ROOT, capture_output=True, text=True).stdout.strip()
    return sha + ("+changes" if dirty else "")


def load_results() -> dict:
    return json.loads(RESULTS.read_text()) if RESULTS.exists() else {}


def apply_equivalents(r: dict, equivalent: dict[str, dict]) -> dict:
    """`r` with the live mutants listed in tools/records/MUTATION-equivalent.toml since its run moved to
    its equivalents (where an entry has a diff, only the mutant of that diff), and its score
    recomputed."""
    diffs = r.get("live_diffs", {})
    live = [n for n in r["survived"] + r["no_tests"]
            if is_equivalent(n, diffs.get(n), equivalent)]
    if not live:
        return r
    r = dict(r, survived=[n for n in r["survived"] if n not in live],
             no_tests=[n for n in r["no_tests"] if n not in live],
             equivalent=r["equivalent"] + live)
    denom = r["tested"] - len(r["equivalent"])
    r["score"] = round(r["killed"] / denom, 4) if denom else None
    return r


def write_table(results: dict) -> None:
    rows = []
    tot_k = tot_n = f_k = f_n = n_first = 0
    equivalent = load_equivalent()
    for m in all_modules():
        r = results.get(m)
        if r is not None and r["tested"]:
            r = apply_equivalents(r, equivalent)
        if r is None:
            rows.append(f"| `{m}` | | | | | not yet run | |")
            continue
        if not r["tested"]:
            rows.append(f"| `{m}` | 0 | | | | no mutants (nothing to mutate) | |")
            continue
        live = len(r["survived"]) + len(r["no_tests"])
        denom = r["tested"] - len(r["equivalent"])
        tot_k += r["killed"]
        tot_n += denom
        if (first := first_look(r)) is not None:
            n_first, f_k, f_n = n_first + 1, f_k + first[0], f_n + first[1]
        sampled = ("" if r["tested"] == r["mutants"]
                   else f" (sample of {r['mutants']}, seed {r.get('seed', 0)})")
        rows.append(f"| `{m}` | {r['tested']}{sampled} | {r['killed']} | {live} | "
                    f"{len(r['equivalent'])} | {100 * r['score']:.1f}% ({r['date']}, "
                    f"{r['commit']}) | {_first_cell(r)} |")
    overall = f"{100 * tot_k / tot_n:.1f}% ({tot_k} of {tot_n})" if tot_n else "n/a"
    first_overall = (f"Modules with a first look: {n_first}, {f_k} of {f_n} killed at "
                     f"first look ({100 * f_k / f_n:.1f}%)." if f_n else "")
    focused = []
    for key in sorted(k for k in results if ":" in k):
        r = apply_equivalents(results[key], equivalent)
        if r["score"] is None:
            continue
        live = len(r["survived"]) + len(r["no_tests"])
        focused.append(f"| `{key}` | {r['tested']} | {r['killed']} | {live} | "
                       f"{len(r['equivalent'])} | {100 * r['score']:.1f}% ({r['date']}, "
                       f"{r['commit']}) | {_first_cell(r)} |")
    TABLE.write_text(
        "# Mutation scores\n\n"
        "Generated by `python tools/mutation.py --table` from `tools/records/MUTATION.json` (do not edit "
        "by hand). Each module's mutants (mutmut 3; a seeded random sample where a module has\n"
        "more than the sample size) run against the default run's tests that mirror the module "
        "(`tools/mutation.py`, `tests_for`). *Live* = survived + reached by no selected test;\n"
        "*equivalent* = listed with its reason in `tools/records/MUTATION-equivalent.toml`. Score = "
        "killed / (tested - equivalent). *First look* = the mutants of the same sample killed at "
        "its first run,\nbefore any test was written for them, over the sample less its "
        "equivalents (recorded since seeds were kept; blank\nbefore): the estimate of how many "
        "bugs nobody named the tests catch."
        + (f" {first_overall}" if first_overall else "") + "\n\n"
        f"Overall: {overall}.\n\n"
        "| module | mutants tested | killed | live | equivalent | score (date, commit) | "
        "first look |\n"
        "|---|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n"
        + ("\nFocused runs (`--functions`: the mutants of the functions a change touched; not "
           "in the overall score):\n\n| module:functions | mutants tested | killed | live | "
           "equivalent | score (date, commit) | first look |\n|---|---|---|---|---|---|---|\n"
           + "\n".join(focused) + "\n" if focused else ""))


def first_look(r: dict) -> tuple[int, int] | None:
    """(killed at the first run, mutants that can be killed): the first run's kills over the
    sample less the mutants listed as equivalent since (a mutant killed is never one)."""
    if "first" not in r:
        return None
    return r["first"][0], r["tested"] - len(r["equivalent"])


def _first_cell(r: dict) -> str:
    got = first_look(r)
    if got is None or not got[1]:
        return ""
    k, n = got
    return f"{k} of {n} ({100 * k / n:.1f}%)"


def show_survivors(module: str) -> None:
    r = load_results().get(module)
    if not r:
        raise SystemExit(f"{module}: not in {RESULTS.name}; run it first")
    for n in r["survived"] + r["no_tests"]:
        kind = "survived" if n in r["survived"] else "no test reached it"
        print(f"# {n} ({kind})\n{r.get('live_diffs', {}).get(n, '(diff not recorded)')}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("modules", nargs="*", help="dotted module names, e.g. oslr.checks; "
                    "shell patterns allowed (oslr.learners.*)")
    ap.add_argument("--changed", nargs="?", const="HEAD", metavar="BASE",
                    help="the modules under src/oslr that differ from BASE (default HEAD)")
    ap.add_argument("--sample", type=int, default=60,
                    help="mutants per module at most (a seeded random sample; default 60)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-children", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--table", action="store_true", help="only rewrite tools/records/MUTATION.md")
    ap.add_argument("--survivors", metavar="MODULE", help="print the live mutants' diffs")
    ap.add_argument("--functions", metavar="F,G", help="one module's mutants in these functions "
                    "only (recorded as MODULE:F,G, listed apart from the module scores)")
    a = ap.parse_args(argv)
    if a.survivors:
        show_survivors(a.survivors)
        return 0
    mods = []
    for pat in a.modules:
        hits = [m for m in all_modules() if fnmatch.fnmatch(m, pat)]
        if not hits:
            raise SystemExit(f"no module matches {pat!r}; e.g. oslr.checks, oslr.learners.*")
        mods += hits
    if a.changed:
        mods += changed_modules(a.changed)
    functions = a.functions.split(",") if a.functions else None
    if functions and len(dict.fromkeys(mods)) != 1:
        raise SystemExit("--functions needs exactly one module.")
    results = load_results()
    for m in dict.fromkeys(mods):
        # each module in its own process: mutmut keeps global state per run
        if len(mods) > 1:
            cmd = [sys.executable, __file__, m, "--sample", str(a.sample), "--seed",
                   str(a.seed), "--max-children", str(a.max_children)]
            if subprocess.run(cmd, cwd=ROOT).returncode != 0:
                print(f"{m}: the mutation run failed (see above); going on", file=sys.stderr)
            results = load_results()
            continue
        r = run_module(m, a.sample, a.seed, a.max_children, functions)
        if functions:
            m = f"{m}:{','.join(functions)}"
            r["module"] = m
        results = load_results()
        r = with_first_look(r, results.get(m))
        results[m] = r
        RESULTS.write_text(json.dumps(dict(sorted(results.items())), indent=1) + "\n")
        live = len(r["survived"]) + len(r["no_tests"])
        score = "n/a" if r["score"] is None else f"{100 * r['score']:.1f}%"
        print(f"{m}: {r['killed']} of {r['tested'] - len(r['equivalent'])} killed ({score}), "
              f"{live} live, {len(r['equivalent'])} equivalent")
        for n in r["survived"] + r["no_tests"]:
            print("  live:", n)
    write_table(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
