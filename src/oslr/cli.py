"""The `oslr` command: `oslr list` and `oslr run` (a Monte-Carlo regret study).

    oslr list [--json]
    oslr run [--config study.toml] [--problem NAME] [--learners A,B] [--horizon T] [--runs R]
             [--grid eta=0.01,0.1] [--set k=4] [--d 16] [--k 3] [--seed 0] [--out DIR] [--json]

With no arguments `oslr run` runs a small default study (sparse linear regression, d = 16, k = 3,
the two OGD references, 2000 rounds x 100 runs). Every input is checked before anything is traced.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import shlex
import shutil
import sys
import time
import warnings
from pathlib import Path
from typing import Any

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
    """Bad command-line input."""


def _parse_value(text: str) -> Any:
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    return text


def _whole(text: str) -> int:
    """An argparse type for counts: an integer, also written as an integral float ("1e6")."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value.is_integer():
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number")
    return int(value)


def _parse_assignments(items: list[str] | None, multi: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items or []:
        if "=" not in item:
            raise UsageError(f"expected name=value, got {item!r}.")
        name, _, value = item.partition("=")
        values = [_parse_value(v) for v in value.split(",") if v != ""]
        if not values:
            raise UsageError(f"no value given for {name!r}.")
        if not multi and len(values) > 1:
            raise UsageError(f"--set {item} gives {len(values)} values; --set takes one (to sweep "
                             f"them, use --grid {item}).")
        out[name.strip()] = values if multi else values[0]
    return out


def _load_config(path: str) -> dict[str, Any]:
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib
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


def build_study(args: argparse.Namespace) -> dict[str, Any]:
    """Merge the default study, the TOML config and the flags (flags win)."""
    study = json.loads(json.dumps(DEFAULT_STUDY))
    cfg: dict[str, Any] = {}
    if args.config or args.problem or args.learners:
        # the default study's learner settings belong to the default study only: a study the
        # user describes starts from the learners' own defaults
        study["params"] = {}
    if args.config:
        cfg = _load_config(args.config)
        unknown = set(cfg) - set(study) - {"out", "comparator_k", "comparator_radius"}
        if unknown:
            raise UsageError(f"unknown config keys {sorted(unknown)}; known: {sorted(study)}.")
        if "problem" in cfg and cfg["problem"] != study["problem"]:
            study["problem_options"] = {}  # (params were emptied above)
        study.update({k: v for k, v in cfg.items() if k not in ("problem_options",)})
        study["problem_options"].update(cfg.get("problem_options", {}))
    if args.problem:
        if args.problem != study["problem"]:
            study["problem_options"] = {}
            study["params"] = {}
        study["problem"] = args.problem
    for flag in ("d", "k", "sigma", "design", "n_redundant", "n_arms", "delays", "max_delay"):
        value = getattr(args, flag, None)
        if value is not None:
            study["problem_options"][flag] = value
    if args.cycle:
        study["problem_options"]["cycle"] = True
    if args.learners:
        study["learners"] = [s.strip() for s in args.learners.split(",") if s.strip()]
    elif study["learners"] == DEFAULT_STUDY["learners"]:
        # prepare says so if they cannot run on the problem
        study["_default_learners"] = args.config or "--problem"
    for key in ("horizon", "runs", "seed", "chunk", "out", "comparator_k"):
        value = getattr(args, key, None)
        if value is not None:
            study[key] = value
    for key in ("horizon", "runs", "chunk"):
        value = study.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or value < 1):
            flag = {"runs": "--runs", "horizon": "--horizon", "chunk": "--chunk"}[key]
            raise UsageError(f"{flag} (or {key} in the config) must be a positive integer, "
                             f"got {value!r}.")
    _check_sizes(study)
    # the default study's sparsities fit a small d (a k the user gives is checked, not changed)
    d, opts = study["problem_options"].get("d"), study["problem_options"]
    if isinstance(d, int) and d >= 1:
        if args.k is None and opts.get("k") == DEFAULT_STUDY["problem_options"]["k"]:
            opts["k"] = min(opts["k"], d)
        if study["params"].get("k") == DEFAULT_STUDY["params"]["k"]:
            study["params"]["k"] = min(study["params"]["k"], d)
    study["grid"] = {**study["grid"], **_parse_assignments(args.grid, multi=True)}
    given = _parse_assignments(args.set, multi=False)
    study["params"] = {**study.get("params", {}), **given}
    both = sorted((set(given) | set(cfg.get("params", {}))) & set(study["grid"]))
    if both:
        raise UsageError(f"{both} both set to one value (--set or [params]) and swept (--grid or "
                         f"[grid]); give each parameter one or the other.")
    return study


#: the largest count a compiled program holds (rounds, run ids, dimensions are int32)
INT32_MAX = 2**31 - 1
#: each size and the flag that sets it
_SIZE_FLAGS = {"horizon": "--horizon", "runs": "--runs", "chunk": "--chunk",
               "comparator_k": "--comparator-k", "d": "--d", "k": "--k", "n_arms": "--n-arms",
               "n_redundant": "--n-redundant", "max_delay": "--max-delay"}


def _check_sizes(study: dict[str, Any]) -> None:
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
    from oslr.checks import unknown_name
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
                       comparator_k=study.get("comparator_k"))
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


def cmd_list(args: argparse.Namespace) -> int:
    from oslr.registry import list_learners, list_problems

    data = {"learners": list_learners(args.d), "problems": list_problems()}
    if args.json:
        print(json.dumps(data, indent=1))
        return 0
    print(f"Learners (defaults at d={args.d}; `oslr list --d N` for another d):")
    for item in data["learners"]:
        print(f"  {item['name']:<20} [{item['family']}] {item['description']}")
        for p in item["params"]:
            flag = "" if p["sweepable"] else "  (not swept)"
            print(f"  {'':<22}{p['name']:<12} = {_show(p['default']):<10} in {p['range']:<14}"
                  f" {p['doc']}{flag}")
        if item["options"]:
            opts = ", ".join(f"{o['name']}={_show(o['default'])}" for o in item["options"])
            print(f"  {'':<22}static options: {opts}")
    print("Problems:")
    for item in data["problems"]:
        print(f"  {item['name']:<20} [{item['kind']}] {item['description']}")
        opts = ", ".join(f"{k}={_show(v)}" for k, v in item["options"].items())
        print(f"  {'':<22}options: {opts}")
    return 0


def cmd_plot(args: argparse.Namespace) -> int:
    """Figures of a saved study: regret against t, or with --against the regret at T against a
    swept parameter (one panel per learner), to --out (PNG, PDF or SVG by its suffix)."""
    from oslr.saved import load

    study = load(args.folder)
    out = Path(args.out) if args.out else study.path / _plot_name(args)
    if args.against:
        study.plot_final(args.against, out, metric=args.metric)
    else:
        study.plot(out, metric=args.metric, axes=args.axes, band=args.band)
    print(f"wrote {out}")
    return 0


def _plot_name(args: argparse.Namespace) -> str:
    """`oslr plot`'s default file, named by what it shows (never a file the study wrote, e.g.
    its regret.png): final_vs_PARAM[-METRIC].png, or plot-regret[-METRIC][-BAND][-AXES].png
    for what differs from the defaults."""
    metric = [args.metric] if args.metric else []
    if args.against:
        return "-".join([f"final_vs_{args.against}", *metric]) + ".png"
    band = [args.band] if args.band != "pointwise" else []
    axes = [args.axes] if args.axes != "loglog" else []
    return "-".join(["plot-regret", *metric, *band, *axes]) + ".png"


#: the columns of a printed comparison (compare.csv and --json keep every column)
_COMPARE_COLUMNS = ["name", "mean", "diff", "diff_low", "diff_high", "p_holm", "ahead", "behind",
                    "verdict", "p_free_holm", "free_verdict"]


def cmd_compare(args: argparse.Namespace) -> int:
    """The paired comparison of a saved study's entries (per-run finals, common random
    numbers), printed or as JSON."""
    from oslr.saved import load

    table = load(args.folder).compare(args.to, metric=args.metric, margin=args.margin)
    if args.json:
        print(table.to_json(orient="records", indent=1))
    else:
        print(f"{table['family'].iloc[0]}; free_verdict: Wilcoxon's signed-rank test, same family")
        cols = ["name", "metric", *_COMPARE_COLUMNS[1:]]
        print(table[cols].to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    return 0


def cmd_merge(args: argparse.Namespace) -> int:
    """Join saved studies of the same settings run with other seeds into --out."""
    from oslr.saved import merge

    merged = merge(args.folders, args.out)
    n = merged.config["runs"]
    print(f"merged {len(args.folders)} folders ({n} runs per entry, seeds "
          f"{merged.config['seed']}) into {merged.path}")
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    from oslr.provenance import info

    data = info()
    if args.json:
        print(json.dumps(data, indent=1))
        return 0
    rt = data.pop("runtime")
    changes = ", with changes" if data["dirty"] else ""
    print(f"oslr {data['oslr']} (commit {data['commit']}{changes})")
    print(f"python {data['python']}, numpy {data['numpy']}, jax {rt['jax']}, "
          f"jaxlib {rt['jaxlib']}")
    print(f"backend {rt['backend']} ({rt['device_kind']}), float64 mode "
          f"{'on' if rt['x64'] else 'off'}, XLA_FLAGS {rt['xla_flags'] or '(none)'}")
    for dev in data["devices"]:
        mem = "" if dev["memory_gb"] is None else f", {dev['memory_gb']} GiB"
        print(f"device {dev['id']}: {dev['platform']} {dev['kind']}{mem}")
    host = data["host_memory_gb"]
    print(f"host: {data['cpu_count']} cores" + ("" if host is None else f", {host} GiB memory"))
    print("packages: " + ", ".join(f"{k} {v or '(not installed)'}"
                                   for k, v in data["packages"].items()))
    return 0


def _show(value) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)

def _check_out_dir(out: Path) -> None:
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


def _add_distributed(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("several processes or hosts (jax.distributed)")
    g.add_argument("--distributed", action="store_true",
                   help="run as one of several processes: jax.distributed.initialize() finds the "
                        "others on SLURM or Open MPI (elsewhere give the three options below); "
                        "the runs are sharded over every process's devices, process 0 writes")
    g.add_argument("--coordinator", metavar="HOST:PORT",
                   help="address of process 0 (default: JAX's detection or "
                        "JAX_COORDINATOR_ADDRESS)")
    g.add_argument("--num-processes", dest="num_processes", type=_whole, metavar="N",
                   help="how many processes run the study (default: JAX's detection)")
    g.add_argument("--process-id", dest="process_id", type=_whole, metavar="I",
                   help="this process's index, 0 .. N - 1")


def _start_distributed(args: argparse.Namespace) -> int:
    """Join the other processes of a --distributed study (before JAX starts its backend);
    returns this process's index (0 when alone)."""
    n, i = args.num_processes, args.process_id
    if not args.distributed:
        if (args.coordinator, n, i) != (None, None, None):
            raise UsageError("--coordinator, --num-processes and --process-id need "
                             "--distributed.")
        return 0
    if n is not None and n < 1:
        raise UsageError(f"--num-processes {n}: give at least 1.")
    if i is not None and n is not None and not 0 <= i < n:
        raise UsageError(f"--process-id {i}: must lie in 0 .. {n - 1} (--num-processes {n}).")
    import jax

    jax.distributed.initialize(coordinator_address=args.coordinator, num_processes=n,
                               process_id=i)
    return jax.process_index()


def cmd_run(args: argparse.Namespace) -> int:
    study = build_study(args)
    if args.distributed and not study.get("out"):
        raise UsageError("--distributed needs --out: every process must name the same folder "
                         "(without it each would pick its own oslr-results/run-<time>).")
    out = Path(study.get("out") or _unfinished_default(study)
               or DEFAULT_OUT / time.strftime("run-%Y%m%d-%H%M%S"))
    saved = out / CHECKPOINTS
    from oslr import folder

    folder.refuse_finished(out)  # at once; decided again under the lock below
    rank = _start_distributed(args)
    problem, pp, plans = prepare(study)  # every check happens here, before tracing
    study.pop("_default_learners", None)
    compare_to, until_cap = _check_compare(args, study, plans)
    _check_out_dir(out)  # made only once the study is known to be valid
    from oslr import atomic

    # one writer per --out (process 0 of a distributed study writes for all), and what is
    # there decided under its lock (`_check_same_study`): a study that finished while this
    # one was being prepared is refused, never overwritten
    with atomic.FolderLock(out, "--out") if rank == 0 else contextlib.nullcontext():
        return _run_locked(args, study, out, saved, rank, problem, pp, plans, compare_to,
                           until_cap)


#: settings that may change between a killed study and its resumption
_RESUMABLE_CHANGES = {"out", "chunk"}


def _settings(study: dict) -> dict:
    """What identifies a study for resuming: its settings as JSON, less what may change."""
    return {k: v for k, v in json.loads(json.dumps(study, default=str)).items()
            if k not in _RESUMABLE_CHANGES and not k.startswith("_")}


#: where `oslr run` without --out puts its folders (run-<time> each)
DEFAULT_OUT = Path("oslr-results")


def _unfinished_default(study: dict) -> Path | None:
    """The folder under DEFAULT_OUT holding the unfinished chunks of this very study (a run
    without --out that was stopped), so that the same command resumes it; None if there is
    none."""
    from oslr import atomic

    mine = _settings(study)
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


def _check_same_study(saved: Path, study: dict) -> bool:
    """The study's settings are kept in `saved/study.json` (written when its first chunk is
    about to run); a folder of another study is refused naming each setting that differs.
    Returns True when `saved` holds saved chunks (checkpoint files) of this study to resume
    from."""
    from oslr import atomic, folder

    folder.refuse_finished(saved.parent)  # under the lock: decided on what is there now
    mine = _settings(study)
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


def _writer_checks_the_folder(saved: Path, study: dict, rank: int) -> bool:
    """`_check_same_study` by process 0 alone, the one writer of --out (another process looking
    while process 0 writes study.json would see a half-made folder, refuse it and leave the
    study: the processes' collectives then disagree). Under --distributed every process then
    learns whether process 0 refused, and refuses too. Returns True when resuming."""
    refusal, resuming = None, False
    if rank == 0:
        try:
            resuming = _check_same_study(saved, study)
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


class _Silent:
    """Where the log of a process other than 0 goes: nowhere (nothing to open or close)."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


def _run_locked(args, study, out, saved, rank, problem, pp, plans, compare_to,
                until_cap) -> int:

    import oslr
    from oslr import report
    from oslr.result import SimResult
    log = sys.stderr if rank == 0 else _Silent()
    print(f"oslr run: {problem.name} (d={problem.d}), {len(plans)} learner(s), "
          f"T={study['horizon']}, {study['runs']} runs, seed {study['seed']}", file=log)
    if _writer_checks_the_folder(saved, study, rank):
        print(f"  resuming from the chunks saved in {saved}", file=log)
    same = "same --out" if study.get("out") else f"it finds {out}, or add --out {out}"
    _RESUME["note"] = (f"every finished chunk is saved in {saved}: run the same command again "
                       f"({same}) to resume.")
    t0 = time.perf_counter()
    batch, cap = study["runs"], until_cap
    parts: list[list] = [[] for _ in plans]
    look, decision = 0, None
    mode = "none" if args.no_progress or rank != 0 else args.progress
    progress = StudyProgress(mode)
    try:
        while True:
            look += 1
            offset = (look - 1) * batch
            progress.add(len(plans) * study["horizon"])
            for i, (learner, labels, params) in enumerate(plans):
                t1 = time.perf_counter()
                res = oslr.simulate(
                    learner, problem, params, pp, horizon=study["horizon"], n_runs=batch,
                    seed=study["seed"], grid=labels, chunk_size=study.get("chunk"),
                    comparator_k=study.get("comparator_k"),
                    comparator_radius=study.get("comparator_radius"),
                    progress=progress.for_learner(learner.name), run_offset=offset,
                    checkpoint_path=saved / (f"{i}-{learner.name}" if cap is None
                                             else f"{i}-{learner.name}-look{look}"),
                )
                res.info["wall_seconds"] = round(time.perf_counter() - t1, 3)
                parts[i].append(res)
                print(f"  {learner.name}: {len(labels)} grid point(s) x {batch} runs in "
                      f"{res.info['wall_seconds']:.1f} s", file=log)
            if cap is None:
                break
            results = [SimResult.concat_runs(p) for p in parts]
            decision = report.sequential_frame(results, look, compare_to or "best",
                                               bounds=getattr(args, "bounds", None),
                                               variance=getattr(args, "variance", None))
            undecided = decision[~decision["decided"]]
            print(_look_line(look, batch, list(undecided["name"])), file=log)
            if undecided.empty or (look + 1) * batch > cap:
                break
    except KeyboardInterrupt:
        print(f"\noslr: interrupted; {_RESUME['note']}", file=log)
        return 130
    finally:
        progress.close()
    if decision is None:  # one batch: each learner's result as simulate returned it
        results = [p[0] for p in parts]
    if rank != 0:  # every process holds the gathered results; process 0 writes them
        return 0
    if decision is not None:
        study = {**study, "until": "separated", "max_runs": cap, "runs": look * batch,
                 "batch_runs": batch, "looks": look,
                 "bounds": None if getattr(args, "bounds", None) is None
                 else list(args.bounds), "variance": getattr(args, "variance", None)}
        # a fixed-sample test on optionally stopped runs is not valid: under --until only
        # until.csv's anytime-valid verdicts are written (no compare.csv, no verdict columns)
        compare_to = None
    files = report.save_study(results, out, config={**study, "command": args.command_line},
                              plot=not args.no_plot, axes=args.axes, compare_to=compare_to,
                              until=decision)
    # every file is on disk (each written crash-safely, config.json last, the folder flushed):
    # only now may the checkpoints go, so a crash or a power loss never leaves neither
    shutil.rmtree(saved, ignore_errors=True)  # the study is complete: its files say it all
    summary = report.summary_frame(results, compare_to=compare_to)
    _note_wstar_only(results, log)
    if args.json:
        print(summary.to_json(orient="records", indent=1))
    else:
        primary = summary[summary["primary"]]
        cols = ["learner", "params", "metric", "mean", "ci_low", "ci_high", "n_runs"]
        print(f"\nFinal regret at T={study['horizon']} (mean and 95% t-interval over runs):")
        print(primary[cols].to_string(index=False, float_format=lambda v: f"{v:.3f}"))
        other = summary[~summary["primary"]]
        if len(other):
            print("\nOther regret quantities:")
            print(other[cols].to_string(index=False, float_format=lambda v: f"{v:.3f}"))
        if compare_to is not None:
            table = report.compare_frame(results, compare_to)
            print(f"\nPaired comparison with {table['reference'].iloc[0]} on the same "
                  f"{results[0].n_runs} runs (difference = learner - reference; 95% t interval; "
                  f"{table['family'].iloc[0]}; free_verdict: Wilcoxon's signed-rank test):")
            print(table[_COMPARE_COLUMNS].to_string(index=False,
                                                    float_format=lambda v: f"{v:.4g}"))
        if decision is not None:
            _print_until(decision, look, batch, cap)
        print(f"\nwrote {', '.join(sorted(files))} to {out} "
              f"({time.perf_counter() - t0:.1f} s)")
    return 0


def _look_line(look: int, batch: int, undecided: list[str]) -> str:
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
                                  "done": self.done, "total": self.total,
                                  "fraction": round(frac, 4),
                                  "eta_s": None if eta is None else round(eta, 1)}),
                      file=self.stream, flush=True)

        return update if self.mode != "none" else False

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _note_wstar_only(results, log) -> None:
    """One line when a prediction study reports regret against w* only: the comparator's d x d
    statistics did not fit (`oslr.memory.STATS_BYTES_LIMIT`), so no best-in-hindsight regret."""
    from oslr.memory import STATS_BYTES_LIMIT

    short = [r.learner for r in results if r.family == "prediction"
             and "regret_wstar" in r.regret_curves() and "regret" not in r.regret_curves()
             and "regret_lb_greedy" not in r.regret_curves()]
    if short:
        d = results[0].info.get("d", "?")
        print(f"note: the regret of {', '.join(short)} is against the true w* (regret_wstar), "
              f"not the best k-sparse comparator in hindsight: its d x d statistics (d={d}) for "
              f"every run and checkpoint do not fit in {STATS_BYTES_LIMIT // 2**20} MB; fewer "
              f"--runs or a smaller d bring it back.", file=log)


def _print_until(decision, look: int, batch: int, cap: int) -> None:
    """The decision of `oslr run --until separated` and the compute it saved."""
    runs = look * batch
    print(f"\nUntil separated (anytime-valid 95% intervals, union bound over looks and "
          f"comparisons; batches of {batch} runs): {look} look(s), {runs} runs.")
    for _, r in decision.iterrows():
        what = ("undecided" if not r["decided"] else
                f"{'better' if r['verdict'] == 'better' else 'worse'} than {r['reference']}")
        print(f"  {r['name']}: {what}: difference {r['diff']:.4g} "
              f"({r['cs_low']:.4g}, {r['cs_high']:.4g})")
    if decision["decided"].all():
        print(f"Decided after {runs} of at most {cap} runs: {1 - runs / cap:.0%} of the "
              f"fixed-size study's run-rounds saved.")
    else:
        print(f"Stopped at the cap of {cap} runs (--max-runs) with comparisons undecided: the "
              "learners may not differ, or differ by less than these runs resolve.")


def cmd_experiment(args: argparse.Namespace) -> int:
    from oslr.checks import check_seed, unknown_name
    from oslr.experiments import EXPERIMENTS, run_experiment
    from oslr.registry import LEARNERS

    if args.list or args.name is None:
        specs = [EXPERIMENTS[name] for name in EXPERIMENTS]
        if args.json:
            print(json.dumps([spec.describe() for spec in specs], indent=1))
            return 0
        print("Experiments (oslr experiment NAME [--quick]; sizes: full, then --quick):")
        for spec in specs:
            print(f"  {spec.name:<15} {spec.description}")
            details = [spec.sizes, ", ".join(spec.all_files)]
            if spec.datasets:
                details.append(f"--dataset {' | '.join(spec.datasets)}")
            if spec.docs:
                details.append(spec.docs)
            for line in filter(None, details):
                print(f"  {'':<15}   {line}")
        return 0
    if args.name not in EXPERIMENTS:
        raise UsageError(unknown_name("experiment", args.name, EXPERIMENTS))
    spec = EXPERIMENTS[args.name]
    if args.runs is not None:
        _check_run_count(args.runs)
    check_seed(args.seed)  # before any folder is made or anything compiled
    dataset = spec.check_dataset(args.dataset)
    out = Path(args.out) if args.out else _experiment_default_out(args.name, dataset)
    options = _parse_assignments(args.set, multi=False)
    if args.hold_rates:
        if "hold_rates" not in spec.extra_options:
            raise UsageError(f"--hold-rates does not apply to {args.name}.")
        options["hold_rates"] = True
    spec.check_options(options, LEARNERS)  # unknown names stop here, before any work
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} exists and is not a folder; give a folder (new or one "
                         "this experiment wrote before).")
    from oslr import atomic, folder

    folder.refuse_finished(out)  # at once; decided again under the lock below
    rank = _start_distributed(args)
    if rank != 0:
        # the same work in lockstep with process 0 (resumable cells included) into a scratch
        # folder of its own, removed at the end: only process 0's files are the results
        scratch = out / f".process-{rank}"
        run_experiment(args.name, dataset, args.runs, args.seed, scratch, args.quick,
                       False, **options)
        shutil.rmtree(scratch, ignore_errors=True)
        return 0
    # one writer per --out, deciding under its lock; each file is replaced whole (a kill leaves
    # none half-written) and a rerun of an unfinished folder makes every file again (only the
    # arena's finished cells are kept and reused)
    made = not out.exists()
    try:
        with folder.claim(out):
            _refuse_a_runs_chunks(out)
            if not made and folder.result_files(out):
                print(f"oslr: {out} holds files of an earlier, unfinished run: each is replaced "
                      "as this run writes it (give another --out to keep them).",
                      file=sys.stderr)
            df = run_experiment(args.name, dataset, args.runs, args.seed, out, args.quick,
                                not args.no_progress, **options)
            from oslr.provenance import stamp

            config = {"experiment": args.name, "dataset": dataset, "runs": args.runs,
                      "seed": args.seed, "quick": args.quick, "options": options,
                      "command": args.command_line, **stamp()}
            folder.finish(out, folder.result_files(out), config)
    except ValueError:  # UsageError too
        # refused by the experiment's own checks before it wrote anything: the folder made
        # for the lock goes again, as if it had never been made
        if made and [p.name for p in out.iterdir()] == [atomic.FolderLock.NAME]:
            (out / atomic.FolderLock.NAME).unlink()
            out.rmdir()
        raise
    if args.json:
        print(df.to_json(orient="records", indent=1))
        return 0
    shown = spec.summary(df) if spec.summary is not None else df
    if isinstance(shown, str):
        print(shown)
    else:
        if "n" in shown:  # curves: show the last checkpoint of each line
            shown = shown[shown["n"] == shown["n"].max()]
        cols = [c for c in _SUMMARY_COLUMNS if c in shown] or list(shown.columns)
        print(shown[cols].to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    files = ", ".join([*(f.format(dataset=dataset) for f in spec.all_files), "config.json"])
    print(f"\nwrote {files} to {out}")
    return 0


def _experiment_default_out(name: str, dataset: str | None) -> Path:
    """oslr-results/NAME[-DATASET], where an unfinished run of it resumes; once that holds a
    finished experiment, a folder of its own named by the time."""
    base = DEFAULT_OUT / (name if dataset is None else f"{name}-{dataset}")
    from oslr import folder

    if folder.is_finished(base):
        return base.with_name(f"{base.name}-{time.strftime('%Y%m%d-%H%M%S')}")
    return base


def _refuse_a_runs_chunks(out: Path) -> None:
    """An experiment is not written into a folder holding an unfinished `oslr run` study."""
    if (out / CHECKPOINTS).exists():
        raise UsageError(f"--out {out} holds the unfinished chunks of an oslr run study "
                         f"({out / CHECKPOINTS}); give another --out (rerun that study to "
                         "finish it).")


#: the columns `oslr experiment` prints, when a result has them, in this order
_SUMMARY_COLUMNS = (
    "learner", "d", "k", "k_query", "budget", "horizon", "satisfiable", "ratio", "rho",
    "eta_scale", "c0", "kappa", "reward_mean", "reward_ci_low", "reward_ci_high",
    "comparator_reward_mean", "ctr_mean", "ctr_ci_low", "ctr_ci_high", "accepted_mean",
    "ms_per_round", "slope", "tracking_error", "regret_over_sqrt_n", "regret", "loss", "ci_low",
    "ci_high", "threshold", "says_satisfiable", "theorem_1_order", "exponent", "design", "k0",
    "metric", "mean", "n", "solved", "c_quantile", "c_all", "bound", "method", "k_prime",
    "regret_5", "paper", "wall_s", "paper_s", "final_regret")


def cmd_reproduce(args: argparse.Namespace) -> int:
    from oslr.experiments import reproduce as rep

    if args.list:
        for row in rep.manifest().itertuples():
            print(f"{row.step:<22} {row.doc:<15} {row.files}")
        return 0
    if args.tables is not None:
        from oslr.experiments.doc_tables import update

        docs = Path(args.tables)
        if not (docs / "figures").is_dir():
            raise UsageError(f"--tables {docs}: no figures folder there; give the docs folder "
                             "(the one holding the pages and figures/).")
        missing: list[str] = []
        changed = update(docs, missing)
        print(f"rewrote the generated tables of {', '.join(changed) or 'no page (all current)'}")
        _say_missing(missing, docs)
        return 0
    steps = rep.select(args.only)
    out = Path(args.out)
    if args.quick and out.resolve() == (Path.cwd() / "docs" / "figures").resolve():
        raise UsageError("--quick numbers are not the docs' numbers: write them elsewhere "
                         "(--out DIR), or drop --quick to regenerate docs/figures.")
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} exists and is not a folder.")
    rep.reproduce(steps, out, args.quick, not args.no_progress)
    source = rep.commit()["commit"]
    print(f"wrote {sum(len(s.files) for s in steps)} files and STAMPS.json to {out} "
          f"(commit {source})")
    if out.name == "figures" and any(out.parent.glob("*.md")) and not args.quick:
        from oslr.experiments.doc_tables import update

        missing: list[str] = []
        changed = update(out.parent, missing)  # the pages' generated tables follow the new files
        print(f"rewrote the generated tables of {', '.join(changed) or 'no page'}")
        _say_missing(missing, out.parent)
    return 0


def _say_missing(missing: list[str], docs: Path) -> None:
    """Name the generated tables left as they were because their files are missing."""
    if missing:
        print(f"left {len(missing)} tables as they were, their files missing: "
              f"{', '.join(missing)}; run `oslr reproduce` for their steps, then "
              f"`oslr reproduce --tables {docs}`", file=sys.stderr)


def _import_plugins(modules: list[str] | None) -> None:
    """Import the modules named by --import (they call oslr.register_learner)."""
    import importlib

    if modules and os.getcwd() not in sys.path:  # a module in the current folder
        sys.path.insert(0, os.getcwd())
    for name in modules or []:
        try:
            importlib.import_module(name)
        except ImportError as err:
            raise UsageError(f"--import {name}: cannot import it ({err}); is it on PYTHONPATH "
                             "or installed?") from None


def _bounds(text: str) -> tuple[float, float]:
    """--bounds LO,HI: two finite numbers, LO < HI."""
    parts = text.split(",")
    try:
        lo, hi = (float(p) for p in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give two numbers LO,HI, e.g. -5000,5000")
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise argparse.ArgumentTypeError(f"{text!r}: give finite LO < HI")
    return lo, hi


def _positive_float(text: str) -> float:
    """--variance V: a finite number > 0."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give a number, e.g. 2500") from None
    if not (math.isfinite(v) and v > 0):
        raise argparse.ArgumentTypeError(f"{text!r}: give a finite number > 0")
    return v


def _check_compare(args: argparse.Namespace, study: dict, plans) -> tuple[str | None, int | None]:
    """(--compare-to, --until's cap on the runs) after checking them against the study, before
    any work: a comparison needs two entries and runs to pair; --until needs two runs a batch
    (each look's interval needs a spread)."""
    from oslr.checks import unknown_name

    entries = sum(len(labels) for _, labels, _ in plans)
    names = {learner.name for learner, _, _ in plans}
    compare_to = args.compare_to
    if (compare_to is not None or args.until) and entries < 2:
        raise UsageError("--compare-to and --until compare two learners or grid points or more;"
                         " this study has one (add --learners A,B or a --grid).")
    if compare_to not in (None, "best") and compare_to.split(" [")[0] not in names:
        raise UsageError(unknown_name("learner to compare with", compare_to,
                                      sorted(names) + ["best"]))
    if args.max_runs is not None and not args.until:
        raise UsageError("--max-runs caps --until separated; add --until separated or drop it.")
    for flag in ("bounds", "variance"):
        if getattr(args, flag, None) is not None and not args.until:
            raise UsageError(f"--{flag} sets --until separated's intervals; add --until "
                             "separated or drop it.")
    if getattr(args, "bounds", None) is not None and getattr(args, "variance", None) is not None:
        raise UsageError("give --bounds or --variance, not both: --bounds (a betting sequence) "
                         "is the tighter where every difference is bounded.")
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
    return compare_to, cap


def _check_run_count(runs: int) -> None:
    if runs < 1:
        raise UsageError(f"--runs must be a positive integer, got {runs}.")


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="oslr", description="Monte-Carlo regret studies for online learning with limited "
        "feature access (JAX)."
    )
    from oslr import __version__

    parser.add_argument("--version", action="version", version=f"oslr {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    p_list = sub.add_parser("list", help="list registered learners and problems")
    p_list.add_argument("--json", action="store_true", help="print JSON")
    p_list.add_argument("--d", type=_whole, default=16,
                        help="dimension at which to evaluate d-dependent defaults (default 16)")
    p_list.add_argument("--import", dest="imports", action="append", metavar="MODULE",
                        help="import a module that registers learners (oslr.register_learner)")
    p_list.set_defaults(func=cmd_list)

    p_info = sub.add_parser("info", help="versions, backend, devices, float64 mode and memory "
                                         "(for a bug report or a job's log)")
    p_info.add_argument("--json", action="store_true", help="print JSON")
    p_info.set_defaults(func=cmd_info)

    p_plot = sub.add_parser("plot", help="plot a saved study (regret against t, or the regret "
                                         "at T against a swept parameter)")
    p_plot.add_argument("folder", help="a folder written by oslr run, merge or experiment")
    p_plot.add_argument("--against", metavar="PARAM",
                        help="the regret at T against this swept parameter, a panel per learner")
    p_plot.add_argument("--metric", help="regret quantity (default: the primary one)")
    p_plot.add_argument("--axes", choices=["loglog", "linear", "logx"], default="loglog",
                        help="axes of the regret plot (default loglog: the slope is the growth "
                             "exponent)")
    p_plot.add_argument("--band", choices=["pointwise", "simultaneous"], default="pointwise",
                        help="95%% bands at each checkpoint (default) or covering each whole "
                             "curve at once (bootstrap-t max band)")
    p_plot.add_argument("--out", help="figure file, .png/.pdf/.svg (default: in the folder, "
                                      "named by what it shows, never over the study's files)")
    p_plot.set_defaults(func=cmd_plot)

    p_cmp = sub.add_parser("compare", help="paired comparison of a saved study's learners")
    p_cmp.add_argument("folder", help="a folder written by oslr run (or oslr merge)")
    p_cmp.add_argument("--to", default="best",
                       help="reference entry: a learner, 'learner [params]' or best (default)")
    p_cmp.add_argument("--metric", help="regret quantity (default: the primary one)")
    p_cmp.add_argument("--margin", type=float,
                       help="largest difference called equivalent: an entry not separated from "
                            "the reference is 'equivalent' where TOST shows it within +-MARGIN")
    p_cmp.add_argument("--json", action="store_true", help="print JSON")
    p_cmp.set_defaults(func=cmd_compare)

    p_merge = sub.add_parser("merge", help="join saved studies of the same settings run with "
                                           "other seeds (more runs later)")
    p_merge.add_argument("folders", nargs="+", help="folders written by oslr run")
    p_merge.add_argument("--out", required=True, help="a new folder for the merged per-run files "
                                                       "(a finished study there is refused)")
    p_merge.set_defaults(func=cmd_merge)

    p_run = sub.add_parser("run", help="run a regret study (a small default one without flags)")
    p_run.add_argument("--config", help="TOML study file (flags override it)")
    p_run.add_argument("--import", dest="imports", action="append", metavar="MODULE",
                       help="import a module that registers learners (oslr.register_learner)")
    p_run.add_argument("--problem", help="problem name (oslr list)")
    p_run.add_argument("--learners", help="comma-separated learner names")
    p_run.add_argument("--horizon", type=_whole, help="rounds T")
    p_run.add_argument("--runs", type=_whole, help="independent runs per grid point")
    p_run.add_argument("--seed", type=_whole, help="root seed")
    p_run.add_argument("--grid", action="append", metavar="NAME=V1,V2",
                       help="sweep a learner parameter (repeatable; cartesian product)")
    p_run.add_argument("--set", action="append", metavar="NAME=V",
                       help="fix a learner parameter (repeatable)")
    p_run.add_argument("--d", type=_whole, help="feature dimension (synthetic problems)")
    p_run.add_argument("--k", type=_whole, help="sparsity of w* and of the comparator")
    p_run.add_argument("--sigma", type=float, help="label noise (synthetic problems)")
    p_run.add_argument("--design", help="gaussian, rademacher, sphere, hadamard or correlated "
                                        "(synthetic problems)")
    p_run.add_argument("--n-redundant", dest="n_redundant", type=_whole,
                       help="append this many standard-normal features")
    p_run.add_argument("--n-arms", dest="n_arms", type=_whole, help="arms (bandit problems)")
    p_run.add_argument("--delays", help="feedback delay schedule: fixed, random or batched")
    p_run.add_argument("--max-delay", dest="max_delay", type=_whole, help="largest delay D_t")
    p_run.add_argument("--cycle", action="store_true",
                       help="allow horizons longer than a dataset (rows repeat)")
    p_run.add_argument("--comparator-k", dest="comparator_k", type=_whole,
                       help="sparsity of the best-in-hindsight comparator (prediction family)")
    p_run.add_argument("--chunk", type=_whole, help="rounds per jitted chunk")
    p_run.add_argument("--out", help="output folder (default oslr-results/run-<time>)")
    p_run.add_argument("--json", action="store_true", help="print the summary as JSON")
    p_run.add_argument("--no-plot", action="store_true", help="skip the regret plot")
    p_run.add_argument("--axes", choices=("loglog", "linear", "logx"), default="loglog",
                       help="regret.png axes (default loglog: the slope is the growth exponent)")
    p_run.add_argument("--no-progress", action="store_true", help="hide progress bars")
    p_run.add_argument("--progress", choices=["bar", "jsonl", "none"], default="bar",
                       help="bar: one bar and time left for the whole study (default); jsonl: "
                            "one JSON line per finished chunk on stderr, for a cluster job's "
                            "log (done, total, fraction, eta_s)")
    p_run.add_argument("--compare-to", dest="compare_to", metavar="NAME|best",
                       help="paired comparison of every learner (and grid point) with NAME or "
                            "the best, on the same runs (Holm-corrected): printed and compare.csv")
    p_run.add_argument("--until", choices=("separated",),
                       help="add batches of --runs runs until every comparison with the "
                            "reference (--compare-to, default best) is decided by an "
                            "anytime-valid 95%% interval, or --max-runs is reached")
    p_run.add_argument("--max-runs", dest="max_runs", type=_whole,
                       help="--until's cap on the runs (default 10 x --runs)")
    p_run.add_argument("--bounds", type=_bounds, metavar="LO,HI",
                       help="--until: bounds every run's difference of final regrets respects "
                            "(e.g. --bounds=-T,T for losses in [0, 1]); the intervals are then "
                            "distribution-free (a betting confidence sequence) instead of t "
                            "intervals that assume normal differences")
    p_run.add_argument("--variance", type=_positive_float, metavar="V",
                       help="--until: an upper bound on the variance of a run's difference of "
                            "final regrets, for unbounded (e.g. heavy-tailed) ones; the "
                            "intervals are then distribution-free (a Catoni-style confidence "
                            "sequence); a bound below the true variance voids them")
    _add_distributed(p_run)
    p_run.set_defaults(func=cmd_run)

    p_exp = sub.add_parser("experiment", help="reproduce a paper figure (oslr experiment --list)")
    p_exp.add_argument("--list", action="store_true", help="list the experiments and exit")
    from oslr.registry import EXPERIMENTS  # names only: no experiment module is imported

    p_exp.add_argument("name", nargs="?", help="one of: " + ", ".join(EXPERIMENTS))
    p_exp.add_argument("--dataset", default=None,
                       help="wll-*: a9a (default), connect4, covtype, mnist35 or kegg; "
                            "kpm-tracking / kpm-replay: the OBD campaign all (default), men or "
                            "women (oslr experiment --list says which experiment takes which)")
    p_exp.add_argument("--runs", type=_whole, default=None,
                       help="shuffles per point (default 5 as in the paper; 100 for wll-rates)")
    p_exp.add_argument("--hold-rates", action="store_true",
                       help="wll-redundant: keep eta and gamma at their values for the original d")
    p_exp.add_argument("--seed", type=_whole, default=0, help="root seed (default 0)")
    p_exp.add_argument("--quick", action="store_true",
                       help="each experiment's small size (oslr experiment --list says what it "
                            "runs): minutes instead of hours")
    p_exp.add_argument("--set", action="append", metavar="NAME=V",
                       help="learner option or parameter, e.g. eta_scale=10 or n_resamples=20")
    p_exp.add_argument("--out", help="output folder")
    p_exp.add_argument("--json", action="store_true", help="print the result table as JSON")
    p_exp.add_argument("--no-progress", action="store_true", help="hide progress bars")
    p_exp.add_argument("--import", dest="imports", action="append", metavar="MODULE",
                       help="import a module that registers experiments or learners "
                            "(oslr.register_experiment)")
    _add_distributed(p_exp)
    p_exp.set_defaults(func=cmd_experiment)

    p_rep = sub.add_parser("reproduce", help="regenerate every docs/figures file from the "
                           "current code, stamped with the commit (hours; --quick: minutes)")
    p_rep.add_argument("--out", default="oslr-reproduce",
                       help="folder for the files and STAMPS.json (docs/figures regenerates the "
                            "docs' own files; default oslr-reproduce)")
    p_rep.add_argument("--only", nargs="+", metavar="STEP",
                       help="steps or docs pages (e.g. kale-results arena); see --list")
    p_rep.add_argument("--quick", action="store_true",
                       help="every step at its small size, to check the chain (not into docs)")
    p_rep.add_argument("--list", action="store_true", help="list the steps and their files")
    p_rep.add_argument("--tables", metavar="DOCS",
                       help="only rewrite the generated tables of DOCS/*.md from DOCS/figures "
                            "(done after any reproduce into a docs figures folder)")
    p_rep.add_argument("--no-progress", action="store_true", help="no progress bars")
    p_rep.set_defaults(func=cmd_reproduce)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = make_parser()
    args = parser.parse_args(argv)
    args.command_line = shlex.join(["oslr", *(sys.argv[1:] if argv is None else argv)])
    from oslr.problems.datasets import DataError

    warnings.formatwarning = _one_line_warning
    try:
        _import_plugins(getattr(args, "imports", None))
        # (not before jax.distributed.initialize, which must come before any backend use)
        if (args.func in (cmd_run, cmd_experiment, cmd_reproduce, cmd_info)
                and not getattr(args, "distributed", False)):
            _check_backend()
        if args.func in (cmd_run, cmd_experiment, cmd_reproduce):
            from oslr.compile_cache import use_persistent_cache

            use_persistent_cache()
        return args.func(args)
    except BrokenPipeError:  # the reader left: `_quiet_when_the_reader_leaves`
        raise
    except (ValueError, KeyError, DataError, OSError) as err:
        # bad input or a file that cannot be written or read: a clear message, no traceback
        print(f"oslr: error: {_one_line(err)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # one line, not JAX's stack
        print("\noslr: interrupted. " + _RESUME_NOTE, file=sys.stderr)
        return 130


def _one_line(err: BaseException) -> str:
    """The message of an input or OS error, on one line."""
    from oslr.atomic import AtomicWriteError, os_error_message

    if isinstance(err, AtomicWriteError):
        return err.strerror or str(err)
    if isinstance(err, OSError):
        where = err.filename if err.filename is not None else "a file"
        return os_error_message(err, where, verb="use")
    return str(err.args[0] if err.args else err)


def _one_line_warning(message, category, filename, lineno, line=None) -> str:
    """`warnings`' format for the command: `oslr: warning: MESSAGE`, with no source line."""
    return f"oslr: warning: {message}\n"


def _check_backend() -> None:
    """One line, not JAX's traceback, when JAX_PLATFORMS names a backend this machine lacks."""
    import jax

    try:
        jax.devices()
    except (RuntimeError, AssertionError) as err:
        wanted = os.environ.get("JAX_PLATFORMS", "")
        why = str(err).split("\n")[0] or "no such device or plugin here"
        raise UsageError(f"JAX cannot start the backend that JAX_PLATFORMS={wanted!r} asks for "
                         f"({why}); unset JAX_PLATFORMS (or set it to cpu), or install the "
                         "jax build for that device.") from None


#: what the interrupt message says about resuming (`cmd_run` names its folder)
_RESUME = {"note": ""}
_RESUME_NOTE = ("`oslr run`, `oslr reproduce` and the arena experiments resume from their saved "
                "parts when run again with the same --out; other experiments start over.")

#: exit status after each signal (128 + its number, as a shell reports it): a batch scheduler
#: requeues on it (e.g. SLURM's --requeue), and the same command then resumes
SIGNAL_EXIT = {"SIGINT": 130, "SIGHUP": 129, "SIGTERM": 143}


def _install_signal_handlers() -> None:
    """SIGINT, SIGTERM and SIGHUP end the process at once with one line and status 128 + the
    signal's number, whatever it is doing (importing, compiling, inside a JAX call or a
    callback): the C-level handler writes the signal to a pipe (`signal.set_wakeup_fd`) and a
    thread waiting on it prints the line and calls `os._exit`. Nothing is lost that a SIGKILL
    would not lose: every saved chunk and file is written crash-safely (`oslr.atomic`), and a
    half-written temporary is never read."""
    import signal
    import threading

    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    numbers = {getattr(signal, name): code for name, code in SIGNAL_EXIT.items()}
    for signum in numbers:
        signal.signal(signum, lambda *_: None)  # no KeyboardInterrupt: the thread below acts

    def wait() -> None:
        while True:
            data = os.read(read_fd, 1)
            if data and data[0] in numbers:
                name = signal.Signals(data[0]).name
                try:
                    sys.stderr.write(f"\noslr: stopped by {name} (exit status "
                                     f"{numbers[data[0]]}); {_RESUME['note'] or _RESUME_NOTE}\n")
                    sys.stderr.flush()
                finally:
                    os._exit(numbers[data[0]])

    threading.Thread(target=wait, name="oslr-signals", daemon=True).start()


def entry() -> None:
    """The `oslr` console command: signal handlers first, then `main`."""
    _install_signal_handlers()
    sys.exit(_quiet_when_the_reader_leaves(main))


def _quiet_when_the_reader_leaves(run) -> int:
    """`run()`'s exit status; when what reads our output has gone (`oslr list | head`), no
    traceback: stop as a tool killed by SIGPIPE does (status 141), with stdout sent to
    /dev/null so that the interpreter's last flush finds no closed pipe either."""
    try:
        code = run()
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":  # pragma: no cover
    entry()
