"""A regret study: its settings checked and turned into learners and problems (`prepare`), its
folder claimed and resumed, its runs played in looks (`run_looks`) and its files written
(`finish`); `Study` does all of it from Python, as `oslr run` does from the command line.

    study = oslr.Study(problem="sparse-linear", problem_options={"d": 16, "k": 3},
                       learners=["ogd-full", "ogd-random-subset"], horizon=2000, runs=100,
                       out="results/")
    saved = study.run()                 # what oslr.load("results/") returns
    saved.compare("ogd-full")

Importing this module loads nothing heavy (the `oslr` command imports it before its signal
handlers are in place); JAX and the learners are imported when a study is prepared.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any, NamedTuple

DEFAULT_STUDY: dict[str, Any] = {
    "problem": "sparse-linear",
    "problem_options": {"d": 16, "k": 3, "sigma": 0.1, "design": "gaussian"},
    "learners": ["ogd-full", "ogd-random-subset"],
    "horizon": 2000,
    "runs": 100,
    "seed": 0,
    "grid": {},
    "params": {"k": 4},
    "chunk": 500,
}


#: the folder under `--out` where `oslr run` keeps the chunks of an unfinished study
CHECKPOINTS = ".checkpoints"


class UsageError(ValueError):
    """Bad input to a study or a command: its message is one line saying which value is wrong,
    why, and what to do."""


def load_config(path: str) -> dict[str, Any]:
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib  # type: ignore[no-redef]
    p = Path(path)
    if not p.is_file():
        raise UsageError(f"config file {path} not found.")
    with p.open("rb") as f:
        try:
            cfg = tomllib.load(f)
        except tomllib.TOMLDecodeError as err:
            raise UsageError(f"{path}: not valid TOML ({err}).") from None
        except UnicodeDecodeError as err:  # a binary file
            raise UsageError(f"{path}: not a TOML text file (byte {err.object[err.start]:#04x} "
                             f"at position {err.start} is not UTF-8).") from None
    _check_config_types(path, cfg)
    return cfg


#: TOML keys whose values are lists of names, and keys of name -> value tables.
_LISTS = ("learners",)


_TABLES = ("problem_options", "grid", "params")


def _check_config_types(path: str, cfg: dict[str, Any]) -> None:
    """One line naming the file, the key and the value for a value of the wrong kind."""
    for key in _LISTS:
        if key in cfg and not (isinstance(cfg[key], list)
                               and all(isinstance(v, str) for v in cfg[key])):
            raise UsageError(f"{path}: {key} = {cfg[key]!r} must be a list of names, e.g. "
                             f'{key} = ["ogd-full"].')
    for key in _TABLES:
        if key in cfg and not isinstance(cfg[key], dict):
            raise UsageError(f"{path}: {key} must be a table ([{key}] with name = value lines), "
                             f"got {cfg[key]!r}.")
    for name, values in cfg.get("grid", {}).items():
        if not isinstance(values, list) or not values:
            raise UsageError(f"{path}: [grid] {name} = {values!r} must be a non-empty list of "
                             f"values, e.g. {name} = [{values!r}].")
    for key in ("horizon", "runs", "seed", "chunk", "comparator_k"):
        if isinstance(cfg.get(key), float) and cfg[key].is_integer():
            cfg[key] = int(cfg[key])  # horizon = 1e6
        if key in cfg and (isinstance(cfg[key], bool) or not isinstance(cfg[key], int)):
            raise UsageError(f"{path}: {key} = {cfg[key]!r} must be an integer.")
    for key in ("problem", "out"):
        if key in cfg and not isinstance(cfg[key], str):
            raise UsageError(f"{path}: {key} = {cfg[key]!r} must be a string.")
    if "max_memory" in cfg:
        from oslr.checks import parse_bytes

        try:
            parse_bytes("max_memory", cfg["max_memory"])
        except ValueError as err:
            raise UsageError(f"{path}: {err}") from None


#: the largest count a compiled program holds (rounds, run ids, dimensions are int32)
INT32_MAX = 2**31 - 1


#: each size and the flag that sets it
_SIZE_FLAGS = {"horizon": "--horizon", "runs": "--runs", "chunk": "--chunk",
               "comparator_k": "--comparator-k", "d": "--d", "k": "--k", "n_arms": "--n-arms",
               "n_redundant": "--n-redundant", "max_delay": "--max-delay"}


def check_sizes(study: dict[str, Any]) -> None:
    """Every count a study compiles is an int32: a larger one is refused in one line, before
    any folder is made (run ids are int32 too, so the runs at most 2^31)."""
    values = {**study.get("problem_options", {}), **study}
    for key, flag in _SIZE_FLAGS.items():
        value = values.get(key)
        limit = 2**31 if key == "runs" else INT32_MAX
        if isinstance(value, int) and not isinstance(value, bool) and value > limit:
            raise UsageError(f"{flag} {value} (or {key} in the config) is beyond {limit:,}, the "
                             "largest count the compiled programs hold (int32); give a smaller "
                             "one (split a larger study in parts).")


#: float32's largest finite number (numpy.finfo(numpy.float32).max)
FLOAT32_MAX = 3.4028234663852886e38


def _check_float32(key: str, value, flag: str) -> None:
    """A finite float the learners' float32 params cannot hold is refused before tracing."""
    if isinstance(value, float) and math.isfinite(value) and abs(value) > FLOAT32_MAX:
        raise UsageError(f"{flag} {key}={value:g} is beyond float32's largest number "
                         f"({FLOAT32_MAX:.4g}), in which the learners compute; give a smaller "
                         "value.")


def _check_grid_labels(key: str, values: list) -> None:
    """Grid values that would print as the same label (4 significant digits) are refused."""
    from oslr.report import params_label

    for v in values:
        _check_float32(key, v, "--grid")
    labels = [params_label({key: v}) for v in values]
    same = sorted({lab for lab in labels if labels.count(lab) > 1})
    if same:
        clash = [v for v, lab in zip(values, labels) if lab == same[0]]
        raise UsageError(f"--grid {key} values {clash} all print as {same[0]!r} (results are "
                         "labelled to 4 significant digits): give each value once, or values "
                         "that differ in their first 4 digits.")


def prepare(study: dict[str, Any]):
    """Build problem, learners and params for a study; raise ValueError for any bad input."""
    import oslr
    from oslr.checks import parse_bytes, unknown_name
    from oslr.memory import check_fits
    from oslr.registry import LEARNERS, PROBLEMS
    from oslr.sim import grid_params
    from oslr.validation import validate

    name = study["problem"]
    if name not in PROBLEMS:
        raise UsageError(unknown_name("problem", name, PROBLEMS))
    try:
        problem, pp = oslr.make_problem(name, **dict(study.get("problem_options", {})))
    except ValueError as err:
        flags = ", ".join(f"--{k.replace('_', '-')}" for k in study.get("problem_options", {}))
        raise UsageError(f"{err.args[0] if err.args else err} Change the problem's options "
                         f"({flags or 'none given'}, or problem_options in the config).") from None
    if not study["learners"]:
        raise UsageError("no learners given.")
    twice = sorted({n for n in study["learners"] if study["learners"].count(n) > 1})
    if twice:
        raise UsageError(f"learner(s) {twice} named twice; name each learner once (to compare "
                         "settings of one learner, sweep them with --grid).")
    for key, values in study.get("grid", {}).items():
        _check_grid_labels(key, values)
    for key, value in study.get("params", {}).items():
        _check_float32(key, value, "--set")
    plans = []
    for lname in study["learners"]:
        if lname not in LEARNERS:
            raise UsageError(unknown_name("learner", lname, LEARNERS))
        spec = LEARNERS[lname]
        if not problem.supports(spec.family) and study.get("_default_learners"):
            raise UsageError(
                f"{study['_default_learners']}: no learners named, and the default ones "
                f"({', '.join(study['learners'])}) "
                f"cannot run on problem {name!r} ({problem.kind}): add --learners A,B or "
                f"learners = [...] to the config (`oslr list` shows each learner's family).")
        if not problem.supports(spec.family):
            raise UsageError(
                f"learner {lname!r} ({spec.family}) cannot run on problem {name!r} "
                f"({problem.kind}); pick learners of a matching family (oslr list)."
            )
        fixed = {k: v for k, v in study.get("params", {}).items() if k in spec.sweepable}
        grid = {k: v for k, v in study.get("grid", {}).items() if k in spec.sweepable}
        ks = [int(v) for v in [fixed.get("k")] + list(grid.get("k", [])) if v is not None]
        takes_max_k = "max_k" in spec.option_names
        max_k = max(ks) if ks and takes_max_k and 1 <= max(ks) <= problem.d else None
        # a delay-aware learner buffers the problem's delays; the simulator explains the others
        delayed = problem.max_delay > 1 and "max_delay" in spec.option_names
        max_delay = problem.max_delay if delayed else None
        # a learner whose shapes depend on the arm count is built for the problem's
        n_arms = problem.n_arms if "n_arms" in spec.option_names else None
        # a learner that enumerates k-subsets has a static k: --set k, else the problem's k
        static_k = _static_k(lname, spec, study, pp)
        try:
            learner, base = oslr.make(lname, d=problem.d, max_k=max_k,
                                      horizon=study["horizon"], max_delay=max_delay,
                                      n_arms=n_arms, **static_k, **fixed)
        except ValueError as err:
            msg = _with_flag_hint(err, study)
            if static_k and "k" not in study.get("params", {}) and msg == str(err.args[0]):
                msg += (f" Its k is static and came from the problem's k={static_k['k']}: "
                        "give another with --set k=K (or the problem's with --k K).")
            raise UsageError(msg) from None
        prep = None
        if spec.prepare is not None:
            def prep(point, _spec=spec):
                return _spec.prepare(point, problem, pp)
        labels, params = grid_params(base, grid, prepare=prep)
        # values fixed with --set (or the config's params) label every row and legend entry
        labels = [{**fixed, **label} for label in labels]
        try:
            validate(learner, problem, params, pp, study["horizon"], study["runs"],
                     study.get("seed", 0), study.get("comparator_k"))
            check_fits(learner, problem, params, pp, study["horizon"], study["runs"],
                       comparator_k=study.get("comparator_k"),
                       max_memory=parse_bytes("max_memory", study.get("max_memory")),
                       results_dir=study.get("out") or ".")
        except ValueError as err:
            raise UsageError(_with_flag_hint(err, study)) from None
        plans.append((learner, labels, params))
    for key in set(study.get("grid", {})) | set(study.get("params", {})):
        if not any(key in LEARNERS[n].sweepable or (key == "k" and "k" in
                   LEARNERS[n].option_names) for n in study["learners"]):
            raise UsageError(
                f"parameter {key!r} is not a parameter of any chosen learner "
                f"({', '.join(study['learners'])}); see `oslr list`."
            )
    return problem, pp, plans


def _with_flag_hint(err: ValueError, study: dict[str, Any]) -> str:
    """The message of `err` and, for a parameter the user set, the flag that sets it."""
    msg = err.args[0] if err.args else str(err)
    for key in sorted(set(study.get("params", {})) | set(study.get("grid", {}))):
        if f"parameter {key}=" in msg:
            flag = "--grid" if key in study.get("grid", {}) else "--set"
            return f"{msg} Change it with {flag} {key}=... (or params/grid in the config)."
    return msg


def _static_k(name: str, spec, study: dict[str, Any], pp) -> dict[str, int]:
    """{"k": K} for a learner with a static k option (it enumerates k-subsets), else {}."""
    if "k" not in spec.option_names:
        return {}
    if "k" in study.get("grid", {}):
        raise UsageError(f"learner {name!r} enumerates k-subsets, so its k is static: run one "
                         "study per k (--set k=K or --k K) instead of a grid over k.")
    if "k" in study.get("params", {}):
        return {"k": int(study["params"]["k"])}
    import numpy as np

    return {"k": int(np.asarray(pp.k))} if hasattr(pp, "k") else {}


def check_out_dir(out: Path) -> None:
    """Refuse an output folder where the results could not be written, before any work: create
    it (and its parents) and a file in it, then remove the file. A permission check alone
    passes on folders where no file can be created (a read-only or virtual file system)."""
    for parent in [out, *out.parents]:
        if parent.exists():
            if not parent.is_dir():
                raise UsageError(f"--out {out}: {parent} exists and is not a folder.")
            break
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / f".oslr-write-test-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as err:
        raise UsageError(f"--out {out}: cannot write there ({err.strerror or err}); give a "
                         "folder you can write to.") from None


#: settings that may change between a killed study and its resumption
_RESUMABLE_CHANGES = {"out", "chunk", "max_memory"}


def settings(study: dict) -> dict:
    """What identifies a study for resuming: its settings as JSON, less what may change."""
    return {k: v for k, v in json.loads(json.dumps(study, default=str)).items()
            if k not in _RESUMABLE_CHANGES and not k.startswith("_")}


#: where `oslr run` without --out puts its folders (run-<time> each)
DEFAULT_OUT = Path("oslr-results")


def unfinished_default(study: dict) -> Path | None:
    """The folder under DEFAULT_OUT holding the unfinished chunks of this very study (a run
    without --out that was stopped), so that the same command resumes it; None if there is
    none."""
    from oslr import atomic

    mine = settings(study)
    for file in sorted(DEFAULT_OUT.glob(f"run-*/{CHECKPOINTS}/study.json"), reverse=True):
        folder = file.parent.parent
        if (folder / "config.json").exists():
            continue
        try:
            theirs = atomic.read_json(file, "study settings", "")
        except ValueError:
            continue
        if {k: v for k, v in theirs.items() if k not in _RESUMABLE_CHANGES} == mine:
            return folder
    return None


def check_same_study(saved: Path, study: dict) -> bool:
    """The study's settings are kept in `saved/study.json` (written when its first chunk is
    about to run); a folder of another study is refused naming each setting that differs.
    Returns True when `saved` holds saved chunks (checkpoint files) of this study to resume
    from."""
    from oslr import atomic, folder

    folder.refuse_finished(saved.parent)  # under the lock: decided on what is there now
    mine = settings(study)
    file = saved / "study.json"
    if saved.exists() and not saved.is_dir():
        raise UsageError(f"--out {saved.parent}: {saved} is not a folder (oslr keeps an "
                         "unfinished study's chunks there); move it away and run the same "
                         "command again.")
    if saved.is_dir():  # a temporary of study.json left by a killed writer is no chunk
        atomic.remove_stale_temporaries(file)
    if file.exists():
        theirs = atomic.read_json(file, "study settings", f"delete {saved} to start afresh")
        theirs = {k: v for k, v in theirs.items() if k not in _RESUMABLE_CHANGES}
        diff = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
        if diff:
            shown = "; ".join(f"{k}: saved {theirs.get(k)!r}, now {mine.get(k)!r}"
                              for k in diff[:4])
            raise UsageError(f"--out {saved.parent} holds the unfinished chunks of another "
                             f"study ({shown}); give another --out, or delete {saved} to drop "
                             "them.")
        return next(saved.rglob("checkpoint-*.npz"), None) is not None
    if saved.exists() and any(p.name != atomic.FolderLock.NAME for p in saved.iterdir()):
        raise UsageError(f"--out {saved.parent}: {saved} holds chunks of an unknown study (no "
                         f"study.json: an older oslr?); delete {saved} to start afresh.")
    saved.mkdir(parents=True, exist_ok=True)
    atomic.write_json_atomic(file, mine, indent=1, sort_keys=True)
    return False


def writer_checks_the_folder(saved: Path, study: dict, rank: int) -> bool:
    """`check_same_study` by process 0 alone, the one writer of --out (another process looking
    while process 0 writes study.json would see a half-made folder, refuse it and leave the
    study: the processes' collectives then disagree). Under --distributed every process then
    learns whether process 0 refused, and refuses too. Returns True when resuming."""
    refusal, resuming = None, False
    if rank == 0:
        try:
            resuming = check_same_study(saved, study)
        except UsageError as err:
            refusal = err
    import jax

    if jax.process_count() > 1:
        import numpy as np
        from jax.experimental import multihost_utils

        ok = multihost_utils.process_allgather(np.int32(refusal is None))
        if rank != 0 and not ok[0]:
            refusal = UsageError(f"process 0 refused --out {saved.parent} (its message says "
                                 "why); this process stops too.")
    if refusal is not None:
        raise refusal
    return resuming


def look_line(look: int, batch: int, undecided: list[str]) -> str:
    """What `--until separated` says after each look."""
    return (f"  look {look}: {look * batch} runs; "
            + (f"undecided: {', '.join(undecided)}" if undecided
               else "every comparison decided"))


class StudyProgress:
    """Progress of a whole `oslr run`: one bar (or one JSON line per finished chunk, for a
    cluster job's log) over every learner's rounds, with the time left.

    `mode`: "bar" (tqdm on stderr), "jsonl" (lines {"elapsed_s", "learner", "done", "total",
    "fraction", "eta_s"} on stderr), or "none". `add(rounds)` grows the total (each learner's
    T, and each batch of `--until`); `for_learner(name)` is the callable `oslr.simulate` takes."""

    def __init__(self, mode: str, stream=None):
        self.mode, self.stream = mode, stream or sys.stderr
        self.done, self.total, self.t0, self.bar = 0, 0, time.perf_counter(), None
        if mode == "bar":
            from tqdm import tqdm

            self.bar = tqdm(total=0, unit="round", desc="study", file=self.stream)

    def add(self, rounds: int) -> None:
        self.total += rounds
        if self.bar is not None:
            self.bar.total = self.total
            self.bar.refresh()

    def for_learner(self, name: str):
        def update(rounds: int) -> None:
            self.done += rounds
            if self.bar is not None:
                self.bar.set_postfix_str(name, refresh=False)
                self.bar.update(rounds)
            elif self.mode == "jsonl":
                elapsed = time.perf_counter() - self.t0
                frac = self.done / self.total if self.total else 1.0
                eta = elapsed * (1.0 - frac) / frac if frac > 0 else None
                print(json.dumps({"elapsed_s": round(elapsed, 2), "learner": name,
                                  "done": round(self.done), "total": self.total,
                                  "fraction": round(frac, 4),
                                  "eta_s": None if eta is None else round(eta, 1)}),
                      file=self.stream, flush=True)

        return update if self.mode != "none" else False

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _check_bounds(bounds, compare_to: str | None) -> None:
    """--bounds before any work: two finite numbers lo < hi, symmetric where the reference is
    the best (its pairs are taken either way round as the best changes between looks)."""
    if bounds is None:
        return
    lo, hi = (float(b) for b in bounds)
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise UsageError(f"--bounds {lo:g},{hi:g}: give two finite numbers LO < HI that every "
                         "run's difference of final regrets respects.")
    if compare_to in (None, "best") and lo != -hi:
        raise UsageError(f"--bounds {lo:g},{hi:g} with the best as reference: its pairs are "
                         "taken either way round, so give symmetric bounds (e.g. "
                         f"--bounds=-{max(-lo, hi):g},{max(-lo, hi):g}) or name a reference "
                         "with --compare-to.")


#: the refusal of --until separated with no assumption named (or two)
UNTIL_NEEDS = ("--until separated needs one assumption about the runs' differences of final "
               "regrets: --bounds LO,HI (any distribution within them), --variance V (any with "
               "variance <= V), or --normal (t intervals; not valid for skewed regrets).")


def interval_of(args) -> dict:
    """The assumption --until separated's intervals rest on, from `args` (the command's flags
    or a `Study`): the keyword arguments bounds, variance and normal of
    `oslr.report.sequential_frame`."""
    return {"bounds": getattr(args, "bounds", None), "variance": getattr(args, "variance", None),
            "normal": bool(getattr(args, "normal", False))}


def check_compare(args, study: dict, plans) -> tuple[str | None, int | None]:
    """(--compare-to, --until's cap on the runs) after checking them against the study, before
    any work: a comparison needs two entries and runs to pair; --until needs two runs a batch
    (each look's interval needs a spread) and one assumption for its intervals. `args` has
    compare_to, until, max_runs, bounds, variance and normal (the command's flags, or a
    `Study`)."""
    from oslr.checks import unknown_name
    from oslr.stats import sequential_method

    entries = sum(len(labels) for _, labels, _ in plans)
    names = {learner.name for learner, _, _ in plans}
    compare_to = args.compare_to
    if (compare_to is not None or args.until) and entries < 2:
        raise UsageError("--compare-to and --until compare two learners or grid points or more;"
                         " this study has one (add --learners A,B or a --grid).")
    if compare_to not in (None, "best") and compare_to.split(" [")[0] not in names:
        raise UsageError(unknown_name("learner to compare with", compare_to,
                                      sorted(names) + ["best"]))
    if compare_to not in (None, "best"):
        from oslr.frames import params_label

        points = [lrn.name if len(labels) == 1 else f"{lrn.name} [{params_label(point)}]"
                  for lrn, labels, _ in plans for point in labels]
        if compare_to not in points:
            raise UsageError(f"--compare-to {compare_to!r} names none of the entries {points} "
                             "(a learner with several grid points is one entry per point); give "
                             "one of them or 'best'.")
    if args.max_runs is not None and not args.until:
        raise UsageError("--max-runs caps --until separated; add --until separated or drop it.")
    interval = interval_of(args)
    for flag, value in interval.items():
        if value not in (None, False) and not args.until:
            raise UsageError(f"--{flag} sets --until separated's intervals; add --until "
                             "separated or drop it.")
    if interval["bounds"] is not None and interval["variance"] is not None:
        raise UsageError("give --bounds or --variance, not both: --bounds (a betting sequence) "
                         "is the tighter where every difference is bounded.")
    _check_bounds(interval["bounds"], compare_to)
    if not args.until:
        return compare_to, None
    batch = study["runs"]
    if batch < 2:
        raise UsageError(f"--until separated adds batches of --runs runs; give --runs 2 or more "
                         f"(got {batch}; 10 is a good batch).")
    cap = args.max_runs if args.max_runs is not None else 10 * batch
    if cap > 2**31:
        raise UsageError(f"--max-runs {cap} is beyond 2^31 runs (run ids are int32); lower it "
                         "(or --runs, whose 10 batches it defaults to).")
    if cap < batch:
        raise UsageError(f"--max-runs {cap} is below one batch of --runs {batch}; raise it.")
    try:
        sequential_method(**interval)  # exactly one assumption named
    except ValueError:
        raise UsageError(UNTIL_NEEDS) from None
    return compare_to, cap


def run_looks(study: dict, problem, pp, plans, saved: Path, cap: int | None,
              compare_to: str | None, interval: dict, progress: StudyProgress, log):
    """Play the study: every learner once, or under --until separated in batches of `runs`
    runs (consecutive run ids) until every comparison with the reference is decided or the runs
    reach `cap` (`interval`: the assumption its intervals rest on, `interval_of`). Each
    learner's chunks are checkpointed under `saved`. Returns (the results,
    the last look's decision frame or None, the number of looks)."""
    import oslr
    from oslr import report
    from oslr.result import SimResult

    batch = study["runs"]
    parts: list[list] = [[] for _ in plans]
    look, decision = 0, None
    while True:
        look += 1
        progress.add(len(plans) * study["horizon"])
        for i, (learner, labels, params) in enumerate(plans):
            t1 = time.perf_counter()
            res = oslr.simulate(
                learner, problem, params, pp, horizon=study["horizon"], n_runs=batch,
                seed=study["seed"], grid=labels, chunk_size=study.get("chunk"),
                comparator_k=study.get("comparator_k"), max_memory=study.get("max_memory"),
                comparator_radius=study.get("comparator_radius"),
                progress=progress.for_learner(learner.name), run_offset=(look - 1) * batch,
                checkpoint_path=saved / (f"{i}-{learner.name}" if cap is None
                                         else f"{i}-{learner.name}-look{look}"))
            res.info["wall_seconds"] = round(time.perf_counter() - t1, 3)
            parts[i].append(res)
            print(f"  {learner.name}: {len(labels)} grid point(s) x {batch} runs in "
                  f"{res.info['wall_seconds']:.1f} s", file=log)
        if cap is None:
            return [p[0] for p in parts], None, look
        results = [SimResult.concat_runs(p) for p in parts]
        decision = report.sequential_frame(results, look, compare_to or "best", **interval)
        undecided = decision[~decision["decided"]]
        print(look_line(look, batch, list(undecided["name"])), file=log)
        if undecided.empty or (look + 1) * batch > cap:
            return results, decision, look


def finish(results, decision, look: int, cap: int | None, study: dict, out: Path, saved: Path,
           compare_to: str | None, interval: dict, command: str | None = None,
           plot: bool = True, axes: str = "loglog") -> tuple[dict, dict, str | None]:
    """Write the study's files into `out` (`oslr.report.save_study`: config.json last) and only
    then remove its checkpoints. Under --until the config records the looks and only until.csv's
    anytime-valid verdicts are written (a fixed-sample test on optionally stopped runs is not
    valid: no compare.csv). Returns (the files written, the config, the comparison's reference
    as written)."""
    from oslr import report

    if decision is not None:
        study = {**study, "until": "separated", "max_runs": cap, "runs": look * study["runs"],
                 "batch_runs": study["runs"], "looks": look,
                 "bounds": None if interval["bounds"] is None else list(interval["bounds"]),
                 "variance": interval["variance"], "normal": interval["normal"]}
        compare_to = None
    config = {**study, "command": command}
    files = report.save_study(results, out, config=config, plot=plot, axes=axes,
                              compare_to=compare_to, until=decision)
    # every file is on disk (each written crash-safely, config.json last, the folder flushed):
    # only now may the checkpoints go, so a crash or a power loss never leaves neither
    shutil.rmtree(saved, ignore_errors=True)
    return files, config, compare_to


def plan(study: dict, how, out: Path):
    """Everything checked before anything is traced or any folder made: the problem and the
    learners (`prepare`), the comparison (`check_compare`; `how` has compare_to, until,
    max_runs, bounds, variance and normal), then `out` made and tried. Returns (problem, its params,
    the plans, the reference to compare with, the --until cap)."""
    problem, pp, plans = prepare(study)
    study.pop("_default_learners", None)
    compare_to, cap = check_compare(how, study, plans)
    check_out_dir(out)  # made only once the study is known to be valid
    return problem, pp, plans, compare_to, cap


class Played(NamedTuple):
    """What `play` did: the results, the last look's decision (None without --until), the
    looks, and (process 0 only, else None) the files written, the config and the reference
    the written comparison used."""

    results: list
    decision: Any
    looks: int
    files: dict | None
    config: dict | None
    compare_to: str | None


def play(study: dict, out: Path, problem, pp, plans, compare_to: str | None, cap: int | None,
         interval: dict, progress: StudyProgress, log, rank: int = 0,
         command: str | None = None, plot: bool = True, axes: str = "loglog") -> Played:
    """Under `out`'s lock (held by process 0): decide what the folder holds
    (`writer_checks_the_folder`: resume, refuse another study), play the looks (`run_looks`),
    close the progress, and on process 0 write the files (`finish`)."""
    saved = out / CHECKPOINTS
    if writer_checks_the_folder(saved, study, rank):
        print(f"  resuming from the chunks saved in {saved}", file=log)
    try:
        results, decision, looks = run_looks(study, problem, pp, plans, saved, cap, compare_to,
                                             interval, progress, log)
    finally:
        progress.close()
    if rank != 0:  # every process holds the gathered results; process 0 writes them
        return Played(results, decision, looks, None, None, compare_to)
    files, config, compare_to = finish(results, decision, looks, cap, study, out, saved,
                                       compare_to, interval, command=command,
                                       plot=plot, axes=axes)
    return Played(results, decision, looks, files, config, compare_to)


#: `Study.run`'s progress modes (`StudyProgress`)
PROGRESS_MODES = ("bar", "jsonl", "none")


def _one_of(name: str, value, choices: tuple) -> None:
    if value not in choices:
        raise UsageError(f"{name}={value!r}: choose one of {list(choices)}.")


def _kind(name: str, value, kinds, want: str, example: str) -> None:
    """One line unless `value` is of `kinds` (a bool counts as an int only where bool is
    named)."""
    kinds = kinds if isinstance(kinds, tuple) else (kinds,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise UsageError(f"{name}={value!r} must be {want}, e.g. {example}.")


def check_fields(study: Study) -> None:
    """One line naming the field, as Python wrote it, for a `Study` value of the wrong kind:
    before anything is traced or written."""
    _kind("problem", study.problem, str, "a problem's name", 'problem="sparse-linear"')
    _kind("problem_options", study.problem_options, dict, "a dict of the problem's options",
          'problem_options={"d": 16}')
    learners = study.learners
    _kind("learners", learners, (list, tuple), "a list of learner names",
          'learners=["ogd-full"]')
    for i, name in enumerate(learners):
        _kind(f"learners[{i}]", name, str, "a learner's name", '"ogd-full"')
    for key in ("horizon", "runs", "chunk"):
        _kind(key, getattr(study, key), int, "a positive integer", f"{key}=100")
        if getattr(study, key) < 1:
            raise UsageError(f"{key}={getattr(study, key)!r} must be a positive integer.")
    _kind("seed", study.seed, int, "an integer", "seed=0")
    _kind("grid", study.grid, dict, "a dict of name -> list of values", 'grid={"eta": [0.1]}')
    for key, values in study.grid.items():
        if not isinstance(values, (list, tuple)) or not values:
            raise UsageError(f"grid[{key!r}]={values!r} must be a non-empty list of values, e.g. "
                             f"grid={{{key!r}: [{values!r}]}}.")
    _kind("params", study.params, dict, "a dict of name -> value", 'params={"k": 4}')
    both = sorted(set(study.params) & set(study.grid))
    if both:
        raise UsageError(f"{both} both in params (one value) and in grid (swept); give each "
                         "parameter one or the other.")
    for key in ("comparator_k", "max_runs"):
        if getattr(study, key) is not None:
            _kind(key, getattr(study, key), int, "an integer or None", f"{key}=10")
    if study.out is not None:
        _kind("out", study.out, (str, os.PathLike), "a folder's path or None", 'out="results/"')
    if study.compare_to is not None:
        _kind("compare_to", study.compare_to, str, "a learner's name, 'best' or None",
              'compare_to="best"')
    if study.until is not None:
        _one_of("until", study.until, ("separated",))
    _kind("normal", study.normal, bool, "True or False", "normal=True")


@dataclasses.dataclass
class Study:
    """A Monte-Carlo regret study, as `oslr run` runs it: `problem` with its options, the
    `learners` (registry names) with fixed `params` and a swept `grid`, `horizon` rounds, `runs`
    runs per grid point from `seed`; `compare_to` ("best" or a learner) for a paired
    comparison; `until="separated"` to add batches of `runs` runs until every comparison is
    decided (at most `max_runs`; the one assumption its intervals rest on: `bounds` or a
    `variance` bound for a distribution-free sequence, or `normal` differences); its
    folder `out` (default: oslr-results/run-<time>, or the unfinished folder of this very
    study); `max_memory` (bytes or a size such as "4G") caps what it may use, beyond which its
    runs are played in blocks (`oslr.simulate`). Every value is checked before anything is
    traced or written."""

    problem: str = DEFAULT_STUDY["problem"]
    problem_options: dict | None = None  # None: the default study's for its problem, else {}
    learners: list = dataclasses.field(default_factory=lambda: list(DEFAULT_STUDY["learners"]))
    horizon: int = DEFAULT_STUDY["horizon"]
    runs: int = DEFAULT_STUDY["runs"]
    seed: int = DEFAULT_STUDY["seed"]
    grid: dict = dataclasses.field(default_factory=dict)
    params: dict = dataclasses.field(default_factory=dict)
    chunk: int = DEFAULT_STUDY["chunk"]
    max_memory: int | str | None = None
    comparator_k: int | None = None
    out: str | None = None
    compare_to: str | None = None
    until: str | None = None
    max_runs: int | None = None
    bounds: tuple | None = None
    variance: float | None = None
    normal: bool = False

    def __post_init__(self) -> None:
        if self.problem_options is None:  # the problem's own defaults (the default study's)
            self.problem_options = (dict(DEFAULT_STUDY["problem_options"])
                                    if self.problem == DEFAULT_STUDY["problem"] else {})
        self._check()

    def _check(self) -> None:
        """`check_fields`, with a path given as `out` kept as its string (the record's)."""
        if isinstance(self.out, os.PathLike):
            self.out = os.fspath(self.out)
        check_fields(self)

    @classmethod
    def from_toml(cls, path: str | os.PathLike, **changes) -> Study:
        """The study of a TOML file (the keys of `oslr run --config`), with `changes`."""
        return cls(**{**load_config(str(path)), **changes})

    def to_dict(self) -> dict:
        """The study's settings as `oslr run` records them (config.json, resuming)."""
        keys = ("problem", "problem_options", "learners", "horizon", "runs", "seed", "grid",
                "params", "chunk", "max_memory", "comparator_k", "out")
        out = {k: getattr(self, k) for k in keys}
        return {k: v for k, v in json.loads(json.dumps(out)).items()
                if v is not None or k not in ("max_memory", "comparator_k", "out")}

    def folder(self) -> Path:
        """Where the study is written: `out`, else the unfinished folder of this very study
        under oslr-results/, else a new oslr-results/run-<time>."""
        study = self.to_dict()
        return Path(self.out or unfinished_default(study)
                    or DEFAULT_OUT / time.strftime("run-%Y%m%d-%H%M%S"))

    def run(self, progress: str = "bar", log=None, plot: bool = True, axes: str = "loglog"):
        """Check, lock, resume, play and write the study as `oslr run` does; return what
        `oslr.load` returns for its folder. A study killed mid-way resumes when run again with
        the same settings and `out`; a finished folder is never overwritten."""
        from oslr import atomic, folder
        from oslr.compile_cache import use_compile_cache
        from oslr.report import AXES
        from oslr.saved import load

        self._check()  # changed since it was made
        _one_of("progress", progress, PROGRESS_MODES)
        _one_of("axes", axes, AXES)
        log = sys.stderr if log is None else log
        study = self.to_dict()
        check_sizes(study)
        out = self.folder()
        folder.refuse_finished(out, "out")
        use_compile_cache()  # a study entry point: programs kept across processes
        problem, pp, plans, compare_to, cap = plan(study, self, out)
        with atomic.FolderLock(out, "out"):
            play(study, out, problem, pp, plans, compare_to, cap, interval_of(self),
                 StudyProgress(progress), log, plot=plot, axes=axes)
        return load(out)


__all__ = ["CHECKPOINTS", "DEFAULT_OUT", "DEFAULT_STUDY", "Played", "Study", "StudyProgress",
           "UsageError", "check_compare", "check_out_dir", "check_same_study", "check_sizes",
           "finish", "interval_of", "load_config", "plan", "play", "prepare", "run_looks",
           "settings", "unfinished_default", "writer_checks_the_folder"]
