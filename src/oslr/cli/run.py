"""`oslr run`: the flags and the TOML file merged into a study's settings (`build_study`), the
study checked, locked, played and written (`oslr.study`), and its results printed."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from pathlib import Path
from typing import Any

from oslr import study as study_module
from oslr.study import DEFAULT_STUDY, UsageError, check_sizes, load_config


def _parse_value(text: str) -> Any:
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    return text


def _parse_assignments(items: list[str] | None, multi: bool) -> dict[str, Any]:
    """--grid (`multi`) or --set NAME=VALUE items as {NAME: values or value}; a name given twice
    is refused (one --grid lists all of a name's values)."""
    flag = "--grid" if multi else "--set"
    out: dict[str, Any] = {}
    first: dict[str, str] = {}
    for item in items or []:
        if "=" not in item:
            raise UsageError(f"expected name=value, got {item!r}.")
        name, _, value = item.partition("=")
        if name.strip() in first:
            raise UsageError(f"{flag} {first[name.strip()]} and {flag} {item} name "
                             f"{name.strip()} twice; give it once"
                             + (f" with every value ({flag} {name.strip()}=A,B)." if multi
                                else "."))
        first[name.strip()] = item
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
    for key in ("horizon", "runs", "seed", "chunk", "out", "comparator_k", "max_memory"):
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
    from oslr.checks import parse_bytes  # numpy: not before a command needs it

    try:
        parse_bytes("--max-memory", study.get("max_memory"))
    except ValueError as err:
        raise UsageError(str(err)) from None
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


#: what the interrupt message says about resuming (`cmd_run` names its folder)
_RESUME = {"note": ""}


_RESUME_NOTE = ("`oslr run`, `oslr experiment` and `oslr reproduce` resume from their saved "
                "chunks when run again with the same --out.")


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
    # every check happens here, before tracing
    problem, pp, plans, compare_to, cap = study_module.plan(study, args, out)
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
    same = "same --out" if study.get("out") else f"it finds {out}, or add --out {out}"
    _RESUME["note"] = (f"every finished chunk is saved in {saved}: run the same command again "
                       f"({same}) to resume.")
    t0 = time.perf_counter()
    mode = "none" if args.no_progress or rank != 0 else args.progress
    try:
        played = study_module.play(
            study, out, problem, pp, plans, compare_to, cap, study_module.interval_of(args),
            study_module.StudyProgress(mode), log, rank, command=args.command_line,
            plot=not args.no_plot, axes=args.axes)
    except KeyboardInterrupt:
        print(f"\noslr: interrupted; {_RESUME['note']}", file=log)
        return 130
    if rank != 0:
        return 0
    _note_wstar_only(played.results, log)
    assert played.config is not None and played.files is not None  # process 0 wrote them
    _print_summary(args, played.results, played.config["horizon"], played.compare_to)
    if not args.json:
        if played.decision is not None:
            _print_until(played.decision, played.looks, study["runs"], cap)
        print(f"\nwrote {', '.join(sorted(played.files))} to {out} "
              f"({time.perf_counter() - t0:.1f} s)")
    return 0


#: the columns of a printed comparison (compare.csv and --json keep every column)
_COMPARE_COLUMNS = ["name", "mean", "diff", "diff_low", "diff_high", "p_holm", "ahead", "behind",
                    "verdict", "p_free_holm", "free_verdict"]


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
              f"{table['family'].iloc[0]}; free_verdict: the sign-flip test of the same mean):")
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


#: the name of each sequential interval in the printout
_SEQUENCES = {"betting": "betting confidence sequence", "catoni": "Catoni-style sequence",
              "t": "t intervals spent over looks"}


def _print_until(decision, look: int, batch: int, cap: int) -> None:
    """The decision of `oslr run --until separated` and the compute it saved."""
    runs = look * batch
    method = decision["method"].iloc[0]
    print(f"\nUntil separated (anytime-valid 95% intervals: {_SEQUENCES[method]}, assuming "
          f"{decision['assumes'].iloc[0]}; Bonferroni over the comparisons; batches of {batch} "
          f"runs): {look} look(s), {runs} runs.")
    diverged = decision["verdict"] == "diverged"
    for _, r in decision.iterrows():
        if r["verdict"] == "diverged":
            print(f"  {r['name']}: diverged (a run is NaN or inf): not compared")
            continue
        what = ("undecided" if not r["decided"] else
                f"{'better' if r['verdict'] == 'better' else 'worse'} than {r['reference']}")
        print(f"  {r['name']}: {what}: difference {r['diff']:.4g} "
              f"({r['cs_low']:.4g}, {r['cs_high']:.4g})")
    if diverged.all():
        print("Every entry but the reference diverged: nothing was compared.")
    elif decision["decided"].all():
        left = f" ({diverged.sum()} diverged, left out)" if diverged.any() else ""
        print(f"Decided after {runs} of at most {cap} runs{left}: {1 - runs / cap:.0%} of the "
              f"fixed-size study's run-rounds saved.")
    else:
        print(f"Stopped at the cap of {cap} runs (--max-runs) with comparisons undecided: the "
              "learners may not differ, or differ by less than these runs resolve.")
