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

from oslr import study as study_module
from oslr.study import (CHECKPOINTS, DEFAULT_OUT, DEFAULT_STUDY, UsageError, check_sizes,
                        load_config)


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


def build_study(args: argparse.Namespace) -> dict[str, Any]:
    """Merge the default study, the TOML config and the flags (flags win)."""
    study = json.loads(json.dumps(DEFAULT_STUDY))
    cfg: dict[str, Any] = {}
    if args.config or args.problem or args.learners:
        # the default study's learner settings belong to the default study only: a study the
        # user describes starts from the learners' own defaults
        study["params"] = {}
    if args.config:
        cfg = load_config(args.config)
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
    check_sizes(study)
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
    out = Path(study.get("out") or study_module.unfinished_default(study)
               or study_module.DEFAULT_OUT / time.strftime("run-%Y%m%d-%H%M%S"))
    from oslr import folder

    folder.refuse_finished(out)  # at once; decided again under the lock below
    rank = _start_distributed(args)
    problem, pp, plans = study_module.prepare(study)  # every check happens here, before tracing
    study.pop("_default_learners", None)
    compare_to, cap = study_module.check_compare(args, study, plans)
    study_module.check_out_dir(out)  # made only once the study is known to be valid
    from oslr import atomic

    # one writer per --out (process 0 of a distributed study writes for all), and what is
    # there decided under its lock (`check_same_study`): a study that finished while this
    # one was being prepared is refused, never overwritten
    with atomic.FolderLock(out, "--out") if rank == 0 else contextlib.nullcontext():
        return _run_locked(args, study, out, rank, problem, pp, plans, compare_to, cap)


class _Silent:
    """Where the log of a process other than 0 goes: nowhere (nothing to open or close)."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


def _run_locked(args, study, out, rank, problem, pp, plans, compare_to, cap) -> int:
    log = sys.stderr if rank == 0 else _Silent()
    saved = out / study_module.CHECKPOINTS
    print(f"oslr run: {problem.name} (d={problem.d}), {len(plans)} learner(s), "
          f"T={study['horizon']}, {study['runs']} runs, seed {study['seed']}", file=log)
    if study_module.writer_checks_the_folder(saved, study, rank):
        print(f"  resuming from the chunks saved in {saved}", file=log)
    same = "same --out" if study.get("out") else f"it finds {out}, or add --out {out}"
    _RESUME["note"] = (f"every finished chunk is saved in {saved}: run the same command again "
                       f"({same}) to resume.")
    t0 = time.perf_counter()
    mode = "none" if args.no_progress or rank != 0 else args.progress
    progress = study_module.StudyProgress(mode)
    try:
        results, decision, look = study_module.run_looks(
            study, problem, pp, plans, saved, cap, compare_to, args.bounds, args.variance,
            progress, log)
    except KeyboardInterrupt:
        print(f"\noslr: interrupted; {_RESUME['note']}", file=log)
        return 130
    finally:
        progress.close()
    if rank != 0:  # every process holds the gathered results; process 0 writes them
        return 0
    files, config, compare_to = study_module.finish(
        results, decision, look, cap, study, out, saved, compare_to, args.bounds,
        args.variance, command=args.command_line, plot=not args.no_plot, axes=args.axes)
    _note_wstar_only(results, log)
    _print_summary(args, results, config["horizon"], compare_to)
    if not args.json:
        if decision is not None:
            _print_until(decision, look, study["runs"], cap)
        print(f"\nwrote {', '.join(sorted(files))} to {out} "
              f"({time.perf_counter() - t0:.1f} s)")
    return 0


def _print_summary(args, results, horizon: int, compare_to: str | None) -> None:
    """The final regret of each entry (JSON with --json), the other regret quantities, and the
    paired comparison with its reference."""
    from oslr import report

    summary = report.summary_frame(results, compare_to=compare_to)
    if args.json:
        print(summary.to_json(orient="records", indent=1))
        return
    primary = summary[summary["primary"]]
    cols = ["learner", "params", "metric", "mean", "ci_low", "ci_high", "n_runs"]
    print(f"\nFinal regret at T={horizon} (mean and 95% t-interval over runs):")
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
    _add_list(sub)
    _add_info(sub)
    _add_plot(sub)
    _add_compare(sub)
    _add_merge(sub)
    _add_run(sub)
    _add_experiment(sub)
    _add_reproduce(sub)
    return parser


def _add_list(sub) -> None:
    """`oslr list`: the registered learners and problems."""
    p_list = sub.add_parser("list", help="list registered learners and problems")
    p_list.add_argument("--json", action="store_true", help="print JSON")
    p_list.add_argument("--d", type=_whole, default=16,
                        help="dimension at which to evaluate d-dependent defaults (default 16)")
    p_list.add_argument("--import", dest="imports", action="append", metavar="MODULE",
                        help="import a module that registers learners (oslr.register_learner)")
    p_list.set_defaults(func=cmd_list)


def _add_info(sub) -> None:
    """`oslr info`: versions, backend and devices."""
    p_info = sub.add_parser("info", help="versions, backend, devices, float64 mode and memory "
                                         "(for a bug report or a job's log)")
    p_info.add_argument("--json", action="store_true", help="print JSON")
    p_info.set_defaults(func=cmd_info)


def _add_plot(sub) -> None:
    """`oslr plot`: figures of a saved study."""
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


def _add_compare(sub) -> None:
    """`oslr compare`: the paired comparison of a saved study."""
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


def _add_merge(sub) -> None:
    """`oslr merge`: saved studies of the same settings joined."""
    p_merge = sub.add_parser("merge", help="join saved studies of the same settings run with "
                                           "other seeds (more runs later)")
    p_merge.add_argument("folders", nargs="+", help="folders written by oslr run")
    p_merge.add_argument("--out", required=True, help="a new folder for the merged per-run files "
                                                       "(a finished study there is refused)")
    p_merge.set_defaults(func=cmd_merge)


def _add_run(sub) -> None:
    """`oslr run`: a regret study."""
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


def _add_experiment(sub) -> None:
    """`oslr experiment`: the papers' experiments."""
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


def _add_reproduce(sub) -> None:
    """`oslr reproduce`: every docs/figures file regenerated."""
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
