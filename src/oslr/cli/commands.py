"""The commands other than `oslr run`: list, info, plot, compare, merge, experiment and
reproduce."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

from oslr.cli import run
from oslr.cli.run import _COMPARE_COLUMNS, _parse_assignments
from oslr.study import CHECKPOINTS, DEFAULT_OUT, UsageError


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
        for o in item["options"]:
            shown = f"{o['name']:<12} = {_show(o['default']):<10}"
            where = f" in {o['range']}" if "range" in o else (
                f" one of {o['choices']}" if "choices" in o else "")
            print(f"  {'':<22}{shown}{where:<16} {o['doc']}")
    return 0


def cmd_plot(args: argparse.Namespace) -> int:
    """Figures of a saved study: regret against t, or with --against the regret at T against a
    swept parameter (one panel per learner), to --out (PNG, PDF or SVG by its suffix)."""
    from oslr.saved import load

    study = load(args.folder)
    out = Path(args.out) if args.out else study.path / _plot_name(args)
    if args.against:
        fig = study.plot_final(args.against, out, metric=args.metric)
    else:
        fig = study.plot(out, metric=args.metric, axes=args.axes, band=args.band)
    import matplotlib.pyplot as plt

    plt.close(fig)  # written: kept open it would pile up where the command is called in-process
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


def cmd_compare(args: argparse.Namespace) -> int:
    """The paired comparison of a saved study's entries (per-run finals, common random
    numbers), printed or as JSON."""
    from oslr.saved import load

    table = load(args.folder).compare(args.to, metric=args.metric, margin=args.margin)
    if args.json:
        print(table.to_json(orient="records", indent=1))
    else:
        print(f"{table['family'].iloc[0]}; free_verdict: the sign-flip test of the same mean, "
              "same family")
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


def cmd_experiment(args: argparse.Namespace) -> int:
    from oslr.checks import check_seed, unknown_name
    from oslr.experiments import EXPERIMENTS, STUDIES, run_experiment
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
    options = _parse_assignments(args.set, "--set", multi=False)
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
    rank = run._start_distributed(args)
    if rank != 0:
        # the same work in lockstep with process 0 (resumable cells included) into a scratch
        # folder of its own, removed at the end: only process 0's files are the results
        scratch = out / f".process-{rank}"
        run_experiment(args.name, dataset, args.runs, args.seed, scratch, args.quick,
                       False, **options)
        shutil.rmtree(scratch, ignore_errors=True)
        return 0
    # one writer per --out, deciding under its lock; each file is replaced whole (a kill leaves
    # none half-written); a rerun of an unfinished folder makes every file again, skipping the
    # studies it finished before (their checkpoints in OUT/.studies) and resuming the one it
    # was playing
    made = not out.exists()
    try:
        with folder.claim(out):
            _refuse_a_runs_chunks(out)
            if not made and folder.result_files(out):
                print(f"oslr: {out} holds an earlier, unfinished run: its finished studies are "
                      "reused, and each file is replaced as this run writes it (give another "
                      "--out to keep them).", file=sys.stderr)
            df = run_experiment(args.name, dataset, args.runs, args.seed, out, args.quick,
                                not args.no_progress, **options)
            from oslr.provenance import stamp

            config = {"experiment": args.name, "dataset": dataset, "runs": args.runs,
                      "seed": args.seed, "quick": args.quick, "options": options,
                      "command": args.command_line, **stamp()}
            folder.finish(out, folder.result_files(out), config)
            shutil.rmtree(out / STUDIES, ignore_errors=True)  # finished: nothing to resume
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
        docs = Path(args.tables)
        if not (docs / "figures").is_dir():
            raise UsageError(f"--tables {docs}: no figures folder there; give the docs folder "
                             "(the one holding the pages and figures/).")
        missing: list[str] = []
        changed = _doc_tables(docs).update(docs, missing)
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
        missing = []
        # the pages' generated tables follow the new files
        changed = _doc_tables(out.parent).update(out.parent, missing)
        print(f"rewrote the generated tables of {', '.join(changed) or 'no page'}")
        _say_missing(missing, out.parent)
    return 0


def _doc_tables(docs: Path):
    """The table renderer of the checkout `docs` belongs to (DOCS/../doctools/tables.py): the
    docs' tooling is not installed with oslr."""
    import importlib.util

    path = docs.resolve().parent / "doctools" / "tables.py"
    if not path.is_file():
        raise UsageError(f"{docs}: the docs' tables are rendered by doctools/tables.py of the "
                         f"oslr checkout they belong to, and {path} is not there; run this from "
                         "a checkout (git clone) of oslr.")
    spec = importlib.util.spec_from_file_location("doctools.tables", path)
    assert spec is not None and spec.loader is not None  # a .py file that exists
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _say_missing(missing: list[str], docs: Path) -> None:
    """Name the generated tables left as they were because their files are missing."""
    if missing:
        print(f"left {len(missing)} tables as they were, their files missing: "
              f"{', '.join(missing)}; run `oslr reproduce` for their steps, then "
              f"`oslr reproduce --tables {docs}`", file=sys.stderr)


def _check_run_count(runs: int) -> None:
    if runs < 1:
        raise UsageError(f"--runs must be a positive integer, got {runs}.")
