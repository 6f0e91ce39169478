"""`oslr.Study`: a regret study checked, locked, resumed, played and written, from Python as
`oslr run` does from the command line (it builds a `Study` and plays it here).

    study = oslr.Study(problem="sparse-linear", problem_options={"d": 16, "k": 3},
                       learners=["ogd-full", "ogd-random-subset"], horizon=2000, runs=100,
                       out="results/")
    saved = study.run()                 # what oslr.load("results/") returns
    saved.compare("ogd-full")
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any, NamedTuple

from oslr.study.checks import (Names, check_compare, check_settings, check_sizes,
                               current_names, interval_of)
from oslr.study.prepare import prepare
from oslr.study.resume import (CHECKPOINTS, DEFAULT_OUT, check_out_dir, unfinished_default,
                               writer_checks_the_folder)
from oslr.study.settings import StudySettings, UsageError
from oslr.study.sources import load_config
from oslr.study.until import StudyProgress, run_looks

#: `Study.run`'s progress modes (`StudyProgress`)
PROGRESS_MODES = ("bar", "jsonl", "none")


def _one_of(name: str, value, choices: tuple) -> None:
    if value not in choices:
        raise UsageError(f"{name}={value!r}: choose one of {list(choices)}.")


class Prepared(NamedTuple):
    """A study checked and built (`Study.prepare`): its folder, the problem and its params,
    the plans (learner, grid labels, params) and --until's cap on the runs (None without)."""

    out: Path
    problem: Any
    problem_params: Any
    plans: list
    cap: int | None


class Played(NamedTuple):
    """What `Study.play` did: the results, the last look's decision (None without until), the
    looks, and (process 0 only, else None) the files written, the config and the reference
    the written comparison used."""

    results: list
    decision: Any
    looks: int
    files: dict | None
    config: dict | None
    compare_to: str | None


def finish(study: StudySettings, results, decision, look: int, cap: int | None, out: Path,
           command: str | None = None, plot: bool = True,
           axes: str = "loglog") -> tuple[dict, dict, str | None]:
    """Write the study's files into `out` (`oslr.report.save_study`: config.json last) and only
    then remove its checkpoints. Under until the config records the looks and only until.csv's
    anytime-valid verdicts are written (a fixed-sample test on optionally stopped runs is not
    valid: no compare.csv). Returns (the files written, the config, the comparison's reference
    as written)."""
    from oslr import report

    record, compare_to = study.to_dict(), study.compare_to
    if decision is not None:
        record = {**record, "until": "separated", "max_runs": cap, "runs": look * study.runs,
                  "batch_runs": study.runs, "looks": look,
                  "bounds": None if study.bounds is None else list(study.bounds),
                  "variance": study.variance, "normal": bool(study.normal)}
        compare_to = None
    config = {**record, "command": command}
    files = report.save_study(results, out, config=config, plot=plot, axes=axes,
                              compare_to=compare_to, until=decision)
    # every file is on disk (each written crash-safely, config.json last, the folder flushed):
    # only now may the checkpoints go, so a crash or a power loss never leaves neither
    shutil.rmtree(out / CHECKPOINTS, ignore_errors=True)
    return files, config, compare_to


@dataclasses.dataclass
class Study(StudySettings):
    """A Monte-Carlo regret study, as `oslr run` runs it (each setting: `StudySettings`, and
    the table of keys in docs/extending.md): `problem` with its options, the `learners`
    (registry names) with fixed `params` and a swept `grid`, `horizon` rounds, `runs` runs per
    grid point from `seed`; `compare_to` for a paired comparison; `until="separated"` to add
    batches of `runs` runs until every comparison is decided; its folder `out`. Every value is
    checked when it is made and again before anything is traced or written."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.names: Names = current_names()
        self.check()

    def check(self) -> None:
        """Every setting's kind (a path given as `out` kept as its string, the record's)."""
        if isinstance(self.out, os.PathLike):
            self.out = os.fspath(self.out)
        check_settings(self, self.names)

    @classmethod
    def from_toml(cls, path: str | os.PathLike, **changes) -> Study:
        """The study of a TOML file (the keys of `oslr run --config`), with `changes`."""
        return cls(**{**load_config(path), **changes})

    def folder(self) -> Path:
        """Where the study is written: `out`, else the unfinished folder of this very study
        under oslr-results/, else a new oslr-results/run-<time>."""
        return Path(self.out or unfinished_default(self.to_dict())
                    or DEFAULT_OUT / time.strftime("run-%Y%m%d-%H%M%S"))

    def prepare(self, out: Path | None = None) -> Prepared:
        """Every check, before anything is traced or any folder made: the settings, the sizes,
        a finished folder refused, the problem and the learners (`prepare`), the comparison
        (`check_compare`), then the folder made and tried. `out`: the folder `folder()` gave
        (found once: without `out` it names the time)."""
        from oslr import folder
        from oslr.compile_cache import use_compile_cache

        self.check()  # changed since it was made
        check_sizes(self, self.names)
        out = self.folder() if out is None else out
        label = self.names.of("out")
        folder.refuse_finished(out, label)
        use_compile_cache()  # a study entry point: programs kept across processes
        problem, pp, plans = prepare(self, self.names)
        cap = check_compare(self, plans, self.names)
        check_out_dir(out, label)  # made only once the study is known to be valid
        return Prepared(out, problem, pp, plans, cap)

    def play(self, ready: Prepared, progress: str = "bar", log=None, rank: int = 0,
             command: str | None = None, plot: bool = True, axes: str = "loglog") -> Played:
        """Under the folder's lock (held by process 0 of a distributed study): resume or
        refuse what the folder holds, play the looks, and on process 0 write the files."""
        import contextlib

        from oslr import atomic

        log = sys.stderr if log is None else log
        label = self.names.of("out")
        # one writer per folder, and what is there decided under its lock: a study that
        # finished while this one was being prepared is refused, never overwritten
        with atomic.FolderLock(ready.out, label) if rank == 0 else contextlib.nullcontext():
            return self._play_locked(ready, StudyProgress(progress), log, rank, command, plot,
                                     axes)

    def _play_locked(self, ready: Prepared, progress: StudyProgress, log, rank: int,
                     command: str | None, plot: bool, axes: str) -> Played:
        out, problem, pp, plans, cap = ready
        print(f"oslr run: {problem.name} (d={problem.d}), {len(plans)} learner(s), "
              f"T={self.horizon}, {self.runs} runs, seed {self.seed}", file=log)
        saved = out / CHECKPOINTS
        record = self.to_dict()
        if writer_checks_the_folder(saved, record, rank, self.names.of("out")):
            print(f"  resuming from the chunks saved in {saved}", file=log)
        try:
            results, decision, looks = run_looks(self, problem, pp, plans, saved, cap,
                                                 progress, log)
        finally:
            progress.close()
        if rank != 0:  # every process holds the gathered results; process 0 writes them
            return Played(results, decision, looks, None, None, self.compare_to)
        files, config, compare_to = finish(self, results, decision, looks, cap, out,
                                           command=command, plot=plot, axes=axes)
        return Played(results, decision, looks, files, config, compare_to)

    def run(self, progress: str = "bar", log=None, plot: bool = True, axes: str = "loglog"):
        """Check, lock, resume, play and write the study as `oslr run` does; return what
        `oslr.load` returns for its folder. A study killed mid-way resumes when run again with
        the same settings and `out`; a finished folder is never overwritten."""
        from oslr.report import AXES
        from oslr.saved import load

        self.check()
        _one_of("progress", progress, PROGRESS_MODES)
        _one_of("axes", axes, AXES)
        ready = self.prepare()
        self.play(ready, progress, log, plot=plot, axes=axes)
        return load(ready.out)


__all__ = ["PROGRESS_MODES", "Played", "Prepared", "Study", "finish", "interval_of"]
