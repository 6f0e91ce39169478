"""What the command-line tests share: the small study they run, a study made as `oslr run` makes
it, and the help texts they pin."""

import json
from pathlib import Path

import numpy as np
import pandas as pd

from oslr.cli import main
from tests.helpers import interrupt_after_saves, subprocess_env


def _study(*argv: str):
    """The `oslr.Study` that `oslr run ARGV` makes."""
    from oslr.cli import make_parser
    from oslr.cli.run import study_of

    return study_of(make_parser().parse_args(["run", *argv]))


def _with_func(parser, func):
    parser.set_defaults(func=func)
    for action in parser._subparsers._group_actions:
        for sub in action.choices.values():
            sub.set_defaults(func=func)
    return parser


def _small(learners="ogd-full", runs=3, horizon=60, chunk=20):
    return ["run", "--learners", learners, "--runs", str(runs), "--horizon", str(horizon),
            "--chunk", str(chunk), "--no-progress", "--no-plot", "--json"]


_SMALL = _small()


def _killed_after_two_chunks(monkeypatch, argv) -> None:
    from oslr import checkpoint

    real = checkpoint.save
    interrupt_after_saves(monkeypatch, 2)
    assert main(argv) == 130
    monkeypatch.setattr(checkpoint, "save", real)


def _oslr(args, **kw):
    """`python -m oslr.cli ARGS` importing the modules this process imports (under the mutation
    tool, the mutated copy)."""
    import subprocess
    import sys

    return subprocess.Popen([sys.executable, "-m", "oslr.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=subprocess_env(), **kw)


def _catches(pid: int, signum: int) -> bool:
    """Whether process `pid` has a handler for `signum` (its SigCgt mask in /proc)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            mask = next(line for line in f if line.startswith("SigCgt:")).split()[1]
    except (OSError, StopIteration):
        return False
    return bool(int(mask, 16) >> (signum - 1) & 1)


_BIG_EXPERIMENT = """
import sys
import numpy as np
import pandas as pd
import oslr
from oslr import atomic
from oslr.experiments.output import write_table_and_figure

def plot(path, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from oslr.report import finish_figure
    fig, ax = plt.subplots()
    ax.plot(np.arange(1000), np.sqrt(np.arange(1000)), label="a")
    return finish_figure(fig, ax, path)

def run(a):
    problem, pp = oslr.make_problem("sparse-linear", d=4, k=1)
    learner, params = oslr.make("ogd-full", d=4)
    oslr.simulate(learner, problem, params, pp, horizon=20, n_runs=2)
    df = pd.DataFrame({"i": np.arange(300_000), "v": np.sqrt(np.arange(300_000))})
    print("writing", file=sys.stderr, flush=True)
    for _ in range(3):  # the same files, again and again: a kill lands in some write
        write_table_and_figure(a.out, "big", df, plot, "t")
        atomic.write_frame_atomic(a.out / "big-every-other.csv", df.iloc[::2])
    print("written", file=sys.stderr, flush=True)
    return df.head(2)

oslr.register_experiment(oslr.ExperimentSpec(
    "big", "big tables", run, files=("big.csv", "big.png", "big-every-other.csv")))
from oslr.cli import entry
sys.argv = ["oslr", "experiment", "big", "--no-progress", "--out", sys.argv[1]]
entry()
"""


def _all_help() -> str:
    import argparse
    import os

    from oslr.cli import make_parser

    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"  # argparse wraps to the terminal width
    try:
        parser = make_parser()
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        texts = [parser.format_help()] + [sub.choices[n].format_help() for n in sub.choices]
    finally:
        if before is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = before
    return "\n".join(texts)


def _finishes_meanwhile(out: Path, what: str = "x"):
    """A stand-in for another writer that finishes a study in `out` while this command is
    still deciding (between its first look and the lock)."""
    def finish(*args, **kwargs):
        out.mkdir(parents=True, exist_ok=True)
        (out / "config.json").write_text(json.dumps({"note": what}))
        (out / "summary.csv").write_text("theirs\n")
    return finish


def oslr_load(path):
    from oslr.saved import load

    return load(path)
