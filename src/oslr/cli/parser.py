"""The command line's parser: one function per command adds its flags (each with its help)."""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Callable

from oslr.cli import commands, run
from oslr.study.sources import add_flags
from oslr.study.settings import whole as _whole


class _Parser(argparse.ArgumentParser):
    """A command's parser whose help may end with text made only when the help is shown
    (`more`), so that building the parser imports nothing heavy."""

    more: Callable[[], str] | None = None

    def format_help(self) -> str:
        text = super().format_help()
        return text if self.more is None else f"{text}\n{self.more()}"


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="oslr", description="Monte-Carlo regret studies for online learning with limited "
        "feature access (JAX)."
    )
    from oslr import __version__

    parser.add_argument("--version", action="version", version=f"oslr {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
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
    p_list.set_defaults(func=commands.cmd_list)


def _add_info(sub) -> None:
    """`oslr info`: versions, backend and devices."""
    p_info = sub.add_parser("info", help="versions, backend, devices, float64 mode and memory "
                                         "(for a bug report or a job's log)")
    p_info.add_argument("--json", action="store_true", help="print JSON")
    p_info.set_defaults(func=commands.cmd_info)


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
    p_plot.set_defaults(func=commands.cmd_plot)


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
    p_cmp.set_defaults(func=commands.cmd_compare)


def _add_merge(sub) -> None:
    """`oslr merge`: saved studies of the same settings joined."""
    p_merge = sub.add_parser("merge", help="join saved studies of the same settings run with "
                                           "other seeds (more runs later)")
    p_merge.add_argument("folders", nargs="+", help="folders written by oslr run")
    p_merge.add_argument("--out", required=True, help="a new folder for the merged per-run files "
                                                       "(a finished study there is refused)")
    p_merge.set_defaults(func=commands.cmd_merge)


def _add_run(sub) -> None:
    """`oslr run`: a regret study."""
    p_run = sub.add_parser("run", help="run a regret study (a small default one without flags)")
    p_run.add_argument("--config", help="TOML study file (flags override it)")
    p_run.add_argument("--import", dest="imports", action="append", metavar="MODULE",
                       help="import a module that registers learners (oslr.register_learner)")
    add_flags(p_run)  # every study setting's flag, from its one declaration
    p_run.add_argument("--json", action="store_true", help="print the summary as JSON")
    p_run.add_argument("--no-plot", action="store_true", help="skip the regret plot")
    p_run.add_argument("--axes", choices=("loglog", "linear", "logx"), default="loglog",
                       help="regret.png axes (default loglog: the slope is the growth exponent)")
    p_run.add_argument("--no-progress", action="store_true", help="hide progress bars")
    p_run.add_argument("--progress", choices=["bar", "jsonl", "none"], default="bar",
                       help="bar: one bar and time left for the whole study (default); jsonl: "
                            "one JSON line per finished chunk on stderr, for a cluster job's "
                            "log (done, total, fraction, eta_s)")
    _add_distributed(p_run)
    p_run.set_defaults(func=run.cmd_run)


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
                       help="runs (a dataset's shuffles) per study point (default: the "
                            "experiment's own, below)")
    p_exp.add_argument("--hold-rates", action="store_true",
                       help="wll-redundant: keep eta and gamma at their values for the original d")
    p_exp.add_argument("--seed", type=_whole, default=0, help="root seed (default 0)")
    p_exp.add_argument("--quick", action="store_true",
                       help="each experiment's small size (below): minutes instead of hours")
    p_exp.add_argument("--set", action="append", metavar="NAME=V",
                       help="learner option or parameter, e.g. eta_scale=10 or n_resamples=20")
    p_exp.add_argument("--out", help="output folder")
    p_exp.add_argument("--json", action="store_true", help="print the result table as JSON")
    p_exp.add_argument("--no-progress", action="store_true", help="hide progress bars")
    p_exp.add_argument("--import", dest="imports", action="append", metavar="MODULE",
                       help="import a module that registers experiments or learners "
                            "(oslr.register_experiment)")
    _add_distributed(p_exp)
    p_exp.more = _experiment_sizes
    p_exp.set_defaults(func=commands.cmd_experiment)


def _experiment_sizes() -> str:
    """Each experiment's full and --quick sizes, from its spec (imported only for the help)."""
    from oslr.registry import EXPERIMENTS

    lines = ["sizes (the full run; quick: what --quick runs):"]
    for name in EXPERIMENTS:
        lines += textwrap.wrap(f"{name}: {EXPERIMENTS[name].sizes}", width=78,
                               initial_indent="  ", subsequent_indent="      ")
    return "\n".join(lines) + "\n"


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
    p_rep.set_defaults(func=commands.cmd_reproduce)


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
