"""A study played: every learner once, or under until="separated" in batches of runs until
each comparison is decided (`run_looks`), with one progress bar (or JSON lines) over the whole
study (`StudyProgress`)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from oslr.study.checks import interval_of
from oslr.study.settings import StudySettings


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


def run_looks(study: StudySettings, problem, pp, plans, saved: Path, cap: int | None,
              progress: StudyProgress, log):
    """Play the study: every learner once, or under until separated in batches of `runs`
    runs (consecutive run ids) until every comparison with the reference is decided or the runs
    reach `cap` (on the assumption its intervals rest on, `interval_of`). Each learner's chunks
    are checkpointed under `saved`. Returns (the results,
    the last look's decision frame or None, the number of looks)."""
    import oslr
    from oslr import report
    from oslr.result import SimResult

    batch = study.runs
    parts: list[list] = [[] for _ in plans]
    look, decision = 0, None
    while True:
        look += 1
        progress.add(len(plans) * study.horizon)
        for i, (learner, labels, params) in enumerate(plans):
            t1 = time.perf_counter()
            res = oslr.simulate(
                learner, problem, params, pp, horizon=study.horizon, n_runs=batch,
                seed=study.seed, grid=labels, chunk_size=study.chunk,
                comparator_k=study.comparator_k, max_memory=study.max_memory,
                comparator_radius=study.comparator_radius,
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
        decision = report.sequential_frame(results, look, study.compare_to or "best",
                                           **interval_of(study))
        undecided = decision[~decision["decided"]]
        print(look_line(look, batch, list(undecided["name"])), file=log)
        if undecided.empty or (look + 1) * batch > cap:
            return results, decision, look
