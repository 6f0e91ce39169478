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

from oslr.registry import EXPERIMENTS
from oslr.spec import ExperimentArgs

__all__ = ["EXPERIMENTS", "check_options", "run_experiment"]


def check_options(name: str, options: dict) -> None:
    """Refuse, before any work, `--set` names that no learner of experiment `name` takes."""
    EXPERIMENTS[name].check_options(options)


def run_experiment(name: str, dataset: str | None, runs: int | None, seed: int, out: Path,
                   quick: bool, progress: bool, **options) -> pd.DataFrame:
    """Run experiment `name` (its spec's `run`), writing its files into `out`; `dataset` None
    means the experiment's default, `runs` None its own run count."""
    spec = EXPERIMENTS[name]
    spec.check_options(options)
    args = ExperimentArgs(dataset=spec.check_dataset(dataset), runs=runs, seed=seed,
                          out=Path(out), quick=quick, progress=progress, options=options)
    return spec.run(args)
