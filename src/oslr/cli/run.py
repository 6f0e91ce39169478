"""`oslr run`: an `oslr.Study` made from the TOML file and the flags (`study_of`, each read
from the settings' one declaration), prepared, played and written by the study itself, and its
results printed."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from oslr.study import CHECKPOINTS, Names, Study, UsageError, declared, load_config, naming
from oslr.study.settings import DEFAULT_PROBLEM, flag
from oslr.study.sources import OPTION_FLAGS, merged


def _parse_value(text: str) -> Any:
    """A --set or --grid value: an int, else a float, else true/false, else the text."""
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    return text


def _parse_assignments(items: list[str] | None, option: str, multi: bool,
                       parse=lambda name, text: _parse_value(text)) -> dict[str, Any]:
    """The NAME=VALUE items of flag `option` (`multi`: NAME=V1,V2) as {NAME: value or
    values}; a name given twice is refused (one --grid lists all of a name's values)."""
    out: dict[str, Any] = {}
    first: dict[str, str] = {}
    for item in items or []:
        if "=" not in item:
            raise UsageError(f"{option} {item}: expected name=value.")
        name, _, value = item.partition("=")
        name = name.strip()
        if name in first:
            raise UsageError(f"{option} {first[name]} and {option} {item} name {name} twice; "
                             "give it once" + (f" with every value ({option} {name}=A,B)."
                                               if multi else "."))
        first[name] = item
        if not multi and "," in value:
            raise UsageError(f"{option} {item} gives {value.count(',') + 1} values; {option} "
                             f"takes one (to sweep them, use --grid {item}).")
        values = [parse(name, v) for v in (value.split(",") if multi else [value]) if v != ""]
        if not values:
            raise UsageError(f"{option} {item}: no value given for {name!r}.")
        out[name] = values if multi else values[0]
    return out


def _entry_parser(table: str, problem: str):
    """How a NAME=VALUE entry's value is read: as `problem` declares the option NAME
    ("options"), else as `_parse_value` reads it."""
    from oslr.registry import PROBLEMS

    def parse(name: str, text: str) -> Any:
        if table != "options" or problem not in PROBLEMS:
            return _parse_value(text)  # an unknown problem is refused by name later
        try:
            return PROBLEMS[problem].option(name).parse(text)
        except ValueError as err:
            raise UsageError(f"--problem-option {name}={text}: {err}") from None

    return parse


def _flags(args: argparse.Namespace, problem: str) -> tuple[dict[str, Any], dict[str, str]]:
    """Each study setting the flags give (from the declaration: a table's NAME=VALUE entries
    parsed), and where each came from ("flag", or "short" for a problem option's own flag)."""
    flags: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for name, s in declared().items():
        value = getattr(args, name, None)
        if value is None or value is False:
            continue
        if s.table:
            value = _parse_assignments(value, flag(name), s.table == "values",
                                       _entry_parser(s.table, problem))
            sources.update({f"{name}.{k}": "flag" for k in value})
        else:
            sources[name] = "flag"
        flags[name] = value
    short = {n: getattr(args, n) for n in OPTION_FLAGS if getattr(args, n, None) is not None}
    for name in set(short) & set(flags.get("problem_options", {})):
        raise UsageError(f"--{name.replace('_', '-')} and --problem-option {name}= both given; "
                         "give it once.")
    if short:
        flags["problem_options"] = {**flags.get("problem_options", {}), **short}
        sources.update({f"problem_options.{k}": "short" for k in short})
    return flags, sources


def study_of(args: argparse.Namespace) -> Study:
    """The study the TOML file (`--config`) and the flags describe, flags winning: each setting
    from its one declaration (`oslr.study.settings`), refused in one line naming the flag or the
    file's key it came from."""
    config = load_config(args.config) if args.config else {}
    flags, sources = _flags(args, args.problem or config.get("problem", DEFAULT_PROBLEM))
    with naming(Names("flag", {**dict.fromkeys(config, args.config), **sources})):
        return Study(**merged(config, flags))


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
    study = study_of(args)
    if args.distributed and not study.out:
        raise UsageError("--distributed needs --out: every process must name the same folder "
                         "(without it each would pick its own oslr-results/run-<time>).")
    from oslr import folder

    out = study.folder()
    folder.refuse_finished(out, "--out")  # at once; decided again under the lock
    rank = _start_distributed(args)
    ready = study.prepare(out)  # every check happens here, before tracing
    log = sys.stderr if rank == 0 else _Silent()
    saved = ready.out / CHECKPOINTS
    same = "same --out" if study.out else f"it finds {ready.out}, or add --out {ready.out}"
    _RESUME["note"] = (f"every finished chunk is saved in {saved}: run the same command again "
                       f"({same}) to resume.")
    t0 = time.perf_counter()
    mode = "none" if args.no_progress or rank != 0 else args.progress
    try:
        played = study.play(ready, mode, log, rank, command=args.command_line,
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
        if played.decision is not None and ready.cap is not None:
            _print_until(played.decision, played.looks, study.runs, ready.cap)
        print(f"\nwrote {', '.join(sorted(played.files))} to {ready.out} "
              f"({time.perf_counter() - t0:.1f} s)")
    return 0


class _Silent:
    """Where the log of a process other than 0 goes: nowhere (nothing to open or close)."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


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
