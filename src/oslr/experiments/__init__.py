"""Paper experiments, each declared by an `ExperimentSpec` beside its code ([WLL] in `wll`, [KPM]
in `kpm`, [FKK] in `foster`, [KKLP] in `kale`, [ITO] in `ito`; all of them on the same streams in
`arena`). `oslr.registry` maps names to them (`EXPERIMENTS`, loaded on first use); `oslr
experiment NAME`, its `--list` and `oslr reproduce` read the specs. A new experiment is a function
`run(ExperimentArgs) -> DataFrame` and its spec in its module, plus one registry line (or
`oslr.register_experiment(spec)` from user code).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from oslr import atomic
from oslr.registry import EXPERIMENTS, LEARNERS
from oslr.spec import ExperimentArgs

__all__ = ["EXPERIMENTS", "check_options", "run_experiment", "write_runs"]


def check_options(name: str, options: dict) -> None:
    """Refuse, before any work, `--set` names that no learner of experiment `name` takes."""
    EXPERIMENTS[name].check_options(options, LEARNERS)


#: Where an experiment keeps its studies' checkpoints until it has finished (`run_experiment`).
STUDIES = ".studies"


def run_experiment(name: str, dataset: str | None, runs: int | None, seed: int, out: Path,
                   quick: bool, progress: bool, **options) -> pd.DataFrame:
    """Run experiment `name` (its spec's `run`), writing its files into `out`; `dataset` None
    means the experiment's default, `runs` None its own run count.

    Every study it simulates keeps its checkpoints in out/.studies (`checkpoint.keep_studies`):
    run again after a kill, the experiment skips the studies it finished and resumes the one it
    was playing, with the same numbers. The caller removes out/.studies once the experiment's
    folder is finished."""
    import warnings

    from oslr.checkpoint import keep_studies  # (imports jax: not at the module's import)
    from oslr.result import recording

    spec = EXPERIMENTS[name]
    spec.check_options(options, LEARNERS)
    args = ExperimentArgs(dataset=spec.check_dataset(dataset), runs=runs, seed=seed,
                          out=Path(out), quick=quick, progress=progress, options=options)
    with recording() as results, keep_studies(args.out / STUDIES) as kept:
        frame = spec.run(args)
    if kept.resumed:
        warnings.warn(f"{len(kept.resumed)} of {name}'s studies resumed from the checkpoints of "
                      f"an interrupted run in {args.out / STUDIES}: the numbers are those of an "
                      "uninterrupted run, but a wall time the experiment reports covers only the "
                      "rounds played now.", RuntimeWarning, stacklevel=2)
    if spec.runs_file is not None:
        write_runs(results, args.out / spec.runs_file.format(dataset=args.dataset))
    return frame


def write_runs(results, path: Path) -> None:
    """Every run's regret at every checkpoint of every study in `results` (in the order they
    ran; `study` numbers them) as Parquet: columns study, problem, seed, learner, params,
    metric, run, t, value (`oslr.report.runs_curves_frame`; a run is named by its seed and run
    index), and what tells the studies apart: the
    learner's scalar params at each grid point (`param_NAME`) and the scalar labels of the
    problem and the learner (`info_NAME`: design, unit_x, m, ...). Any table of the experiment
    can be recomputed from it without a rerun; tuning studies are included (their runs are the
    seed's tuning run indices)."""
    from oslr.report import params_label, runs_curves_frame

    frames = []
    for i, res in enumerate(results):
        frame = runs_curves_frame([res])
        frame.insert(0, "study", i)
        frame.insert(1, "problem", res.problem)
        frame.insert(2, "seed", res.seed)
        point = frame["params"].map({params_label(p): g for g, p in enumerate(res.grid)})
        for name, values in _param_columns(res).items():
            frame[name] = values[point.to_numpy()]
        for name, value in (res.info or {}).items():
            if isinstance(value, (bool, int, float, str)):
                frame[f"info_{name}"] = value
        frames.append(frame)
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        columns=["study", "problem", "seed", "learner", "params", "metric", "run", "t",
                 "value"])
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic.write_frame_atomic(path, table)


def _param_columns(res) -> dict:
    """param_NAME -> (G,) values of every scalar learner param of `res` (its params are
    stacked over the G grid points)."""
    import dataclasses

    import numpy as np

    params = res.params
    if not dataclasses.is_dataclass(params):
        return {}
    out = {}
    for f in dataclasses.fields(params):
        v = np.asarray(getattr(params, f.name))
        if v.ndim == 1 and len(v) == len(res.grid):
            out[f"param_{f.name}"] = v
    return out
