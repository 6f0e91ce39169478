"""`oslr reproduce`: regenerate every table file and figure under docs/figures from the current
code in one command, and stamp each file with the commit that made it.

`STEPS` is the manifest: one step per docs/figures file group, with the exact settings the docs
used (the [WLL] steps call the experiment functions with their grids; the others are the
`oslr experiment` presets). Each step writes into out/.work-STEP (kept when the step is killed:
a rerun resumes from the folders there: its studies' checkpoints, the arena's finished cells);
its files are then moved to `out` under the names the docs use, and `out/STAMPS.json` records,
per file, the commit (and whether the checkout had uncommitted changes), the date, the step and
its wall time. Each step
also leaves STEP-runs.parquet, every run's regret at every checkpoint of every study it
simulated (tuning runs included), so that any table is recomputed without a rerun. The
Markdown text in docs/*.md is written by hand from these files; a number there is current when
its file's stamp is.

A full run takes many hours on a small CPU host (the [WLL] sweeps most of them);
`--quick` runs every step at its small size (into another folder: quick numbers are not the
docs' numbers) to check that the whole chain works.
"""

from __future__ import annotations

import datetime
import fcntl
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import pandas as pd

from oslr import atomic, folder, program
from oslr.checkpoint import keep_studies
from oslr.experiments import STUDIES, write_runs
from oslr.provenance import commit
from oslr.result import recording


@dataclass(frozen=True)
class Step:
    """One group of docs/figures files: `files` (their names under docs/figures), the docs page
    they belong to, and `run(out, quick, progress)`, which writes `produced` names into `out`
    (`produced` defaults to `files`; the two differ where an experiment names its files
    otherwise)."""

    name: str
    doc: str
    files: tuple[str, ...]
    run: Callable[[Path, bool, bool], None]
    produced: tuple[str, ...] = field(default=())

    def outputs(self) -> dict[str, str]:
        """produced name -> docs name."""
        return dict(zip(self.produced or self.files, self.files))

    @property
    def runs_file(self) -> str:
        """The step's per-run file: every run's regret at every checkpoint of every study it
        simulated (`oslr.experiments.write_runs`), unless the step writes it itself (it is
        then one of `files`: the arena's, whose finished cells a resumed step does not
        simulate again)."""
        return f"{self.name}-runs.parquet"

    @property
    def writes_own_runs(self) -> bool:
        return self.runs_file in self.outputs().values()

    @property
    def all_files(self) -> tuple[str, ...]:
        """Every file the step puts under the docs' names, its per-run file last."""
        return (*(f for f in self.files if f != self.runs_file), self.runs_file)


def _experiment(name: str, dataset: str | None = None,
                **options) -> Callable[[Path, bool, bool], None]:
    def run(out: Path, quick: bool, progress: bool) -> None:
        from oslr.experiments import run_experiment

        run_experiment(name, dataset, None, 0, out, quick, progress, **options)

    return run


def _spec_step(name: str, files: tuple[str, ...], dataset: str | None = None,
               produced: tuple[str, ...] = ()) -> Step:
    """The step that runs experiment `name` at its preset; its docs page is the spec's."""
    from oslr.registry import EXPERIMENTS

    doc = Path(EXPERIMENTS[name].docs or "").stem
    return Step(name if dataset is None else f"{name}-{dataset}", doc, files,
                _experiment(name, dataset), produced)


_TUNED: dict[str, Any] = {"eta_scale": 30.0, "c0": 0.01}
_WLL_TITLES = {"a9a": 48842, "covtype": 58100, "connect4": 61108, "mnist35": 13454}


def _wll_k(dataset: str, ratios: Sequence[float], stem: str, **options):
    def run(out: Path, quick: bool, progress: bool) -> None:
        import matplotlib.pyplot as plt

        from oslr.experiments.wll import WLL_SHUFFLES, plot_experiment, wll_reward_vs_k

        df = wll_reward_vs_k(dataset, ratios[:2] if quick else ratios,
                             runs=2 if quick else WLL_SHUFFLES,
                             horizon=2000 if quick else None, progress=progress, **options)
        df.to_csv(out / f"{stem}.csv", index=False)
        t = int(df["horizon"].iloc[0])
        plt.close(plot_experiment(df, "ratio", out / f"{stem}.png",
                                  f"{dataset}: {df['runs'].iloc[0]} shuffles, T={t}"))

    return run


def _wll_rates(dataset: str, eta_scales, c0s, stem: str, horizon: int = 5000, plot: bool = True):
    def run(out: Path, quick: bool, progress: bool) -> None:
        import matplotlib.pyplot as plt

        from oslr.experiments.wll import plot_rate_sweep, wll_rate_sweep

        df = wll_rate_sweep(dataset, eta_scales[:2] if quick else eta_scales, c0s,
                            runs=4 if quick else 100, horizon=500 if quick else horizon,
                            progress=progress)
        df.to_csv(out / f"{stem}.csv", index=False)
        if plot:
            plt.close(plot_rate_sweep(df, out / f"{stem}.png",
                                      f"{dataset}: {df['runs'].iloc[0]} shuffles, "
                                      f"T={df['horizon'].iloc[0]}"))

    return run


def _wll_redundant(stem: str, hold_rates: bool):
    def run(out: Path, quick: bool, progress: bool) -> None:
        import matplotlib.pyplot as plt

        from oslr.experiments.wll import WLL_SHUFFLES, plot_experiment, wll_redundant

        df = wll_redundant("a9a", (0.2,) if quick else (0.2, 0.5, 1.0, 1.5),
                           runs=2 if quick else WLL_SHUFFLES, horizon=2000 if quick else None,
                           hold_rates=hold_rates, progress=progress, **_TUNED)
        df.to_csv(out / f"{stem}.csv", index=False)
        plt.close(plot_experiment(df, "rho", out / f"{stem}.png",
                                  f"a9a: {df['runs'].iloc[0]} shuffles, "
                                  f"T={df['horizon'].iloc[0]}"))

    return run


def _kpm_replay_men(out: Path, quick: bool, progress: bool) -> None:
    """docs/kpm-results.md's random/men replay: exact LinUCB beside the three SGD variants at
    kappa = 1, 20 runs (LinUCB is O(K d^2) per event: about 6 min on 2 cores)."""
    from oslr.experiments.kpm import FAST, kpm_replay

    df = kpm_replay("men", kappas=(1.0,), runs=2 if quick else 20, learners=("linucb", *FAST),
                    progress=progress, horizon=1000 if quick else None)
    df.to_csv(out / "kpm-replay-men.csv", index=False)


def _pair(stem: str) -> tuple[str, str]:
    return (f"{stem}.csv", f"{stem}.png")


_RATIOS = (0.05, 0.1, 0.2, 0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
_K_RATIOS = {"a9a": _RATIOS, "covtype": (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0),
             "connect4": (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0),
             "mnist35": (0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0)}

def _arena_tables(name: str) -> tuple[str, ...]:
    """An arena's tables, its per-run file (the arena writes it from its cells, finished ones
    included: a resumed step has it whole) last."""
    return (f"{name}.csv", f"{name}.json", f"{name}.md", f"{name}-curves.csv",
            f"{name}-tuning.csv", f"{name}-runs.parquet")


#: The arena's figures: one per problem and budget (the datasets' budgets scale with their d).
_ARENA_PNGS = [(p, b) for p in ("rip", "agnostic", "drifting", "correlated") for b in (5, 10)] + [
    ("kegg", 6), ("kegg", 13), ("a9a", 31), ("a9a", 62)]

STEPS: tuple[Step, ...] = (
    *(Step(f"wll-k-{ds}", "wll-results", _pair(f"wll-k-{ds}-tuned"),
           _wll_k(ds, _K_RATIOS[ds], f"wll-k-{ds}-tuned", **_TUNED))
      for ds in ("a9a", "covtype", "connect4", "mnist35")),
    Step("wll-k-a9a-eq1", "wll-results", _pair("wll-k-a9a-eq1"),
         _wll_k("a9a", (0.05, 0.1, 0.2, 0.3, 0.5), "wll-k-a9a-eq1")),
    *(Step(f"wll-rates-{ds}", "wll-results", _pair(f"wll-rates-{ds}"),
           _wll_rates(ds, (1.0, 3.0, 10.0, 30.0, 100.0), (0.0, 0.01, 0.1, 1.0),
                      f"wll-rates-{ds}"))
      for ds in ("a9a", "covtype", "connect4")),
    *(Step(f"wll-rates-hi-{ds}", "wll-results", (f"wll-rates-hi-{ds}.csv",),
           _wll_rates(ds, (300.0, 1000.0), (0.0, 0.01), f"wll-rates-hi-{ds}", plot=False))
      for ds in ("a9a", "covtype", "connect4")),
    Step("wll-rates-mnist35", "wll-results", _pair("wll-rates-mnist35"),
         _wll_rates("mnist35", (10.0, 30.0, 100.0, 300.0), (0.0, 0.01), "wll-rates-mnist35",
                    horizon=2000)),
    Step("wll-redundant-tuned", "wll-results", _pair("wll-redundant-a9a-tuned"),
         _wll_redundant("wll-redundant-a9a-tuned", False)),
    Step("wll-redundant-held", "wll-results", _pair("wll-redundant-a9a-held"),
         _wll_redundant("wll-redundant-a9a-held", True)),
    Step("kpm-tracking", "kpm-results", _pair("kpm-tracking-all"),
         _experiment("kpm-tracking", "all")),
    _spec_step("kpm-replay", ("kpm-replay-all.csv",), "all"),
    Step("kpm-replay-men", "kpm-results", ("kpm-replay-men.csv",), _kpm_replay_men),
    _spec_step("kpm-runtime", _pair("kpm-runtime"), produced=_pair("kpm-runtime-synthetic")),
    _spec_step("kpm-pege", _pair("kpm-pege"), produced=_pair("kpm-pege-sphere")),
    _spec_step("foster-rate", _pair("foster-rate")),
    _spec_step("foster-hard", (*_pair("foster-hard"), "foster-hard-decisions.csv")),
    _spec_step("kale-calibrate", ("kale-calibrate.csv",)),
    _spec_step("kale-dantzig", _pair("kale-dantzig")),
    _spec_step("kale-greedy", _pair("kale-greedy")),
    _spec_step("ito-table1", (*_pair("ito-table1"), "ito-table1-curves.csv",
                              "ito-table1-finals.csv")),
    Step("ito-table1-raw", "ito-results", tuple(
        f"ito-table1-raw{end}" for end in (".csv", ".png", "-curves.csv", "-finals.csv")),
         _experiment("ito-table1", normalise=False, clip=False), tuple(
        f"ito-table1{end}" for end in (".csv", ".png", "-curves.csv", "-finals.csv"))),
    Step("ito-table1-tuned", "ito-results", tuple(
        f"ito-table1-tuned{end}" for end in (".csv", ".png", "-curves.csv", "-finals.csv")),
         _experiment("ito-table1", normalise=False, clip=False, tune=True), tuple(
        f"ito-table1{end}" for end in (".csv", ".png", "-curves.csv", "-finals.csv"))),
    _spec_step("ito-real", (*_pair("ito-real"), "ito-real-finals.csv")),
    _spec_step("arena", (*_arena_tables("arena"),
                         *(f"arena-{p}-b{b}.png" for p, b in _ARENA_PNGS))),
    _spec_step("arena-long", (*_arena_tables("arena-long"), "arena-long-rip-b5.png")),
    _spec_step("arena-k", (*_arena_tables("arena-k"),
                           *(f"arena-k-rip-b10-k{k}.png" for k in (1, 2, 4)))),
)


def select(only: Sequence[str] | None) -> list[Step]:
    """The steps whose name or docs page is in `only` (all when None); unknown names refused."""
    if not only:
        return list(STEPS)
    known = {s.name for s in STEPS} | {s.doc for s in STEPS}
    unknown = sorted(set(only) - known)
    if unknown:
        raise ValueError(f"reproduce: unknown steps {unknown}; steps and pages: "
                         f"{', '.join(sorted(known))}.")
    return [s for s in STEPS if s.name in only or s.doc in only]


def reproduce(steps: Sequence[Step], out: str | Path, quick: bool = False,
              progress: bool = False, log=print) -> dict:
    """Run `steps`, move their files into `out` under the docs' names and stamp them.

    Returns the stamps written to out/STAMPS.json (merged with those already there).
    """
    out = Path(out)
    folder.refuse_finished(out)  # a finished study's or experiment's folder is never written
    out.mkdir(parents=True, exist_ok=True)
    path = out / "STAMPS.json"
    stamps = _stamp(path, {})  # a damaged stamps file is refused before any work
    source = commit()
    for i, step in enumerate(steps, 1):
        log(f"[{i}/{len(steps)}] {step.name} ({step.doc})")
        t0 = time.perf_counter()
        # the step works in out/.work-STEP, removed once its files are in place: a killed step
        # leaves it, and the rerun resumes from the folders saved there (its studies'
        # checkpoints, the arena's finished cells); its loose files are made again
        scratch = out / f".work-{step.name}"
        resumed = scratch.exists()
        # one process per step's folder: a second `oslr reproduce` of the step into the same
        # --out is refused in one line naming the first (atomic.FolderBusy)
        lock = atomic.FolderLock(scratch, f"step {step.name}'s work folder").acquire()
        try:
            folder.refuse_finished(out)  # again, under the lock: what is there now
            if resumed:
                log(f"  resuming from {scratch}")
                for stale in scratch.iterdir():
                    if not stale.is_dir() and stale.name != atomic.FolderLock.NAME:
                        stale.unlink()
            with recording() as results, keep_studies(scratch / STUDIES):
                step.run(scratch, quick, progress)
            stamps = _finish_step(step, scratch, results, path, source, quick, log, t0)
        finally:
            lock.release()
    return stamps


def _finish_step(step: Step, scratch: Path, results, path: Path, source: dict, quick: bool,
                 log, t0: float) -> dict:
    """Put the files of `step` (made in `scratch`) in place beside the stamps file `path`,
    stamp them with `source` (`commit()`), remove `scratch`; return all stamps."""
    out = path.parent
    seconds = time.perf_counter() - t0
    if not step.writes_own_runs:
        write_runs(results, scratch / f".runs-{step.runs_file}")
    # keep no step's programs alive: one process compiling every step's programs ran
    # out of memory mappings (LLVM "Cannot allocate memory", then a crash) at step 10
    # of the wll chain
    program.clear_compiled()
    made = {}
    for produced, name in step.outputs().items():
        if (scratch / produced).exists():
            made[produced] = name
        elif quick:  # a quick run covers fewer problems (the arena's figures)
            log(f"  {name}: not made at the quick size")
        else:
            raise RuntimeError(f"reproduce: step {step.name} did not write {produced}.")
    if not step.writes_own_runs:
        made[f".runs-{step.runs_file}"] = step.runs_file  # the per-run file last
    # every file is replaced whole (oslr.atomic); while a step's files are being put in
    # place their stamps say so, so a kill in between leaves no file under a stale stamp
    pending = f"incomplete: killed while writing; rerun step {step.name}"
    _stamp(path, {name: {"step": step.name, "doc": step.doc, "commit": pending}
                  for name in made.values()})
    done = {}
    for produced, name in made.items():
        atomic.copy_atomic(scratch / produced, out / name)
        done[name] = {**source, "step": step.name, "doc": step.doc, "quick": quick,
                      "date": datetime.datetime.now(datetime.timezone.utc)
                      .isoformat(timespec="seconds"),
                      "seconds": round(seconds, 1)}
    stamps = _stamp(path, done)
    shutil.rmtree(scratch)
    return stamps


def _stamp(path: Path, entries: dict) -> dict:
    """Merge `entries` into the stamps file `path` and return all its stamps.

    The file is re-read under an exclusive lock on its folder before each write, so two
    `oslr reproduce` runs into one folder (e.g. `--only arena` beside `--only wll-results`)
    keep each other's stamps."""
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        fcntl.flock(folder, fcntl.LOCK_EX)  # released when the descriptor is closed
        stamps = atomic.read_json(path, "stamps file", f"delete it, then rerun `oslr reproduce "
                                  f"--out {path.parent}` for every step") if path.exists() else {}
        if entries:
            stamps.update(entries)
            atomic.write_json_atomic(path, stamps, indent=1, sort_keys=True)
        return stamps
    finally:
        os.close(folder)


def manifest() -> pd.DataFrame:
    """One row per step: name, docs page, files (the last its per-run file)."""
    return pd.DataFrame([{"step": s.name, "doc": s.doc,
                          "files": ", ".join(s.all_files)}
                         for s in STEPS])


__all__ = ["STEPS", "Step", "commit", "manifest", "reproduce", "select"]
