"""Registry: learner and problem names -> their specs, loaded only when used.

Each learner module declares its own `LearnerSpec` (defaults, ranges, static options, second
params point) next to its factory; this file only maps names to `"module:attribute"` entry points,
so `import oslr` loads no learner family (an LP solver or a large table stays unloaded until a
study names it). Problems are listed the same way.

Third-party learners register from user code, `oslr.register_learner(spec)` (or a name and an
entry point string), or from an installed package through the entry-point group `oslr.learners`
(`[project.entry-points."oslr.learners"] my-learner = "my_pkg.module:SPEC"`); either way they then
work in `oslr.make`, `oslr run` and `oslr list`.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from importlib import metadata
from typing import Any, Iterator

from oslr import cpus
from oslr.checks import unknown_name
from oslr.spec import ExperimentSpec, LearnerSpec, ProblemSpec
from oslr.types import Learner, Problem

#: Entry-point groups through which installed packages add learners and experiments.
ENTRY_POINT_GROUP = "oslr.learners"
EXPERIMENT_ENTRY_POINT_GROUP = "oslr.experiments"

_LEARNERS = {
    "ogd-full": "oslr.learners.ogd:OGD_FULL",
    "ogd-random-subset": "oslr.learners.ogd:OGD_RANDOM_SUBSET",
    "uniform-subset": "oslr.learners.uniform:UNIFORM_SUBSET",
    "eps-greedy": "oslr.learners.bandits:EPS_GREEDY",
    "linucb": "oslr.learners.linucb:LINUCB",
    "flinucb-gd": "oslr.learners.linucb:FLINUCB_GD",
    "flinucb-svrg": "oslr.learners.linucb:FLINUCB_SVRG",
    "flinucb-sag": "oslr.learners.linucb:FLINUCB_SAG",
    "pege": "oslr.learners.pege:PEGE",
    "fpege-gd": "oslr.learners.pege:FPEGE_GD",
    "ftpsl": "oslr.learners.ftpsl:FTPSL",
    "ftpsl-delayed": "oslr.learners.ftpsl:FTPSL_DELAYED",
    "ftpsl-knapsack": "oslr.learners.ftpsl:FTPSL_KNAPSACK",
    "ftpl-random-subset": "oslr.learners.ftpsl:FTPL_RANDOM_SUBSET",
    "ftpl-oracle-subset": "oslr.learners.ftpsl:FTPL_ORACLE_SUBSET",
    "foster-hedge": "oslr.learners.foster:FOSTER_HEDGE",
    "online-greedy": "oslr.learners.online_greedy:ONLINE_GREEDY",
    "dantzig-poslr": "oslr.learners.dantzig:DANTZIG_POSLR",
    "ito-block-bandit": "oslr.learners.ito:ITO_BLOCK_BANDIT",
    "ito-dual-averaging": "oslr.learners.ito:ITO_DUAL_AVERAGING",
    "ito-projection": "oslr.learners.ito:ITO_PROJECTION",
}

_PROBLEMS = {
    "sparse-linear": "oslr.problems.synthetic:SPARSE_LINEAR",
    "agnostic": "oslr.problems.synthetic:AGNOSTIC",
    "drifting": "oslr.problems.synthetic:DRIFTING",
    "switching": "oslr.problems.synthetic:SWITCHING",
    "ito-synthetic": "oslr.problems.synthetic:ITO_SYNTHETIC",
    "a9a": "oslr.problems.datasets:A9A",
    "connect4": "oslr.problems.datasets:CONNECT4",
    "covtype": "oslr.problems.datasets:COVTYPE",
    "mnist35": "oslr.problems.datasets:MNIST35",
    "kegg": "oslr.problems.datasets:KEGG",
    "linear-bandit": "oslr.problems.bandits:LINEAR_BANDIT",
    "sphere-bandit": "oslr.problems.bandits:SPHERE_BANDIT",
    "obd": "oslr.problems.obd:OBD",
    "set-cover": "oslr.problems.set_cover:SET_COVER",
}


_EXPERIMENTS = {
    "wll-k": "oslr.experiments.wll:WLL_K",
    "wll-redundant": "oslr.experiments.wll:WLL_REDUNDANT",
    "wll-rates": "oslr.experiments.wll:WLL_RATES",
    "kpm-tracking": "oslr.experiments.kpm:KPM_TRACKING",
    "kpm-runtime": "oslr.experiments.kpm:KPM_RUNTIME",
    "kpm-replay": "oslr.experiments.kpm:KPM_REPLAY",
    "kpm-pege": "oslr.experiments.kpm:KPM_PEGE",
    "foster-rate": "oslr.experiments.foster:FOSTER_RATE",
    "foster-hard": "oslr.experiments.foster:FOSTER_HARD",
    "ito-table1": "oslr.experiments.ito:ITO_TABLE1",
    "ito-real": "oslr.experiments.ito:ITO_REAL",
    "kale-calibrate": "oslr.experiments.kale:KALE_CALIBRATE",
    "kale-dantzig": "oslr.experiments.kale:KALE_DANTZIG",
    "kale-greedy": "oslr.experiments.kale:KALE_GREEDY",
    "arena": "oslr.experiments.arena:ARENA_SPEC",
    "arena-k": "oslr.experiments.arena:ARENA_K_SPEC",
    "arena-long": "oslr.experiments.arena:ARENA_LONG_SPEC",
}


def _load(target: str) -> Any:
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


class _Lazy(Mapping):
    """name -> spec; an entry is a spec or a "module:attribute" string loaded on first access."""

    def __init__(self, kind: str, entries: dict[str, Any], group: str | None = None):
        self.kind = kind
        self._entries = dict(entries)
        self._builtin = frozenset(entries)
        self._group = group
        self._scanned = group is None

    def _scan(self) -> None:
        if self._scanned:
            return
        self._scanned = True
        for ep in metadata.entry_points(group=self._group or ""):
            self._entries.setdefault(ep.name, ep)

    def add(self, name: str, entry: Any, replace: bool = False) -> None:
        """Register `entry` under `name`; a built-in's name only with `replace` (a study would
        otherwise report the user's numbers under the built-in's name without a word)."""
        if name in self._builtin and not replace:
            raise ValueError(f"{self.kind} {name!r} is built into oslr; register yours under "
                             f"another name (or pass replace=True to replace the built-in on "
                             "purpose).")
        self._entries[name] = entry

    def __getitem__(self, name: str):
        self._scan()
        if name not in self._entries:
            raise _unknown(self.kind, name, self)
        entry = self._entries[name]
        if isinstance(entry, str):
            entry = _load(entry)
        elif isinstance(entry, metadata.EntryPoint):
            entry = entry.load()
        if callable(entry) and not isinstance(entry, (LearnerSpec, ProblemSpec, ExperimentSpec)):
            entry = entry()  # an entry point may name a function that returns the spec
        if getattr(entry, "name", name) != name:
            raise ValueError(f"{self.kind} entry {name!r} loads a spec named {entry.name!r}.")
        self._entries[name] = entry
        return entry

    def __contains__(self, name: object) -> bool:
        self._scan()
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        self._scan()
        return iter(list(self._entries))

    def __len__(self) -> int:
        self._scan()
        return len(self._entries)


LEARNERS: Mapping[str, LearnerSpec] = _Lazy("learner", _LEARNERS, ENTRY_POINT_GROUP)
PROBLEMS: Mapping[str, ProblemSpec] = _Lazy("problem", _PROBLEMS)
EXPERIMENTS: Mapping[str, ExperimentSpec] = _Lazy("experiment", _EXPERIMENTS,
                                                  EXPERIMENT_ENTRY_POINT_GROUP)


def _unknown(kind: str, name: str, table) -> ValueError:
    return ValueError(unknown_name(kind, name, table))


def _register(table, cls: Any, what: str, spec: Any, entry: str | None, replace: bool) -> None:
    if isinstance(spec, cls):
        table.add(spec.name, spec, replace)
    elif isinstance(spec, str) and isinstance(entry, str) and ":" in entry:
        table.add(spec, entry, replace)
    else:
        raise TypeError(f"register_{what} takes a {cls.__name__}, or a name and a "
                        "'module:attribute' entry.")


def register_learner(spec: LearnerSpec | str, entry: str | None = None, *,
                     replace: bool = False) -> None:
    """Register a learner: a `LearnerSpec`, or a name and a lazy "module:attribute" entry.
    A built-in learner's name is refused (ValueError) unless `replace=True`; registering one of
    your own names again replaces it (a notebook cell run twice).

    Example:
      oslr.register_learner(MY_SPEC)                       # from user code
      oslr.register_learner("my-ogd", "my_pkg.ogd:SPEC")   # loaded on first use
    """
    _register(LEARNERS, LearnerSpec, "learner", spec, entry, replace)


def register_experiment(spec: ExperimentSpec | str, entry: str | None = None, *,
                        replace: bool = False) -> None:
    """Register an experiment: an `ExperimentSpec`, or a name and a lazy "module:attribute"
    entry; it then runs as `oslr experiment NAME` and shows in `oslr experiment --list`.
    Installed packages can use the entry-point group `oslr.experiments` instead. A built-in
    experiment's name is refused unless `replace=True`."""
    _register(EXPERIMENTS, ExperimentSpec, "experiment", spec, entry, replace)


def register_problem(spec: ProblemSpec, *, replace: bool = False) -> None:
    """Register a problem spec under its name (a built-in problem's only with `replace=True`).
    The spec checked its kind and its factory's options when it was made."""
    if not isinstance(spec, ProblemSpec):
        raise TypeError(f"register_problem takes a ProblemSpec, got {type(spec).__name__}.")
    PROBLEMS.add(spec.name, spec, replace)  # type: ignore[attr-defined]


def make(name: str, d: int, horizon: int | None = None, **options) -> tuple[Learner, Any]:
    """Build learner `name` for dimension `d` with its default params.

    Args:
      name: registry name (`oslr list`).
      d: feature dimension (static).
      horizon: the T of horizon-dependent defaults (FTPSL's eq. (1), history capacities).
      **options: static options of the learner (`oslr list` shows them, e.g. `max_k`, a static
        bound on the traced k, `b`, `n_resamples`, `max_delay`, `n_arms`) and params fields to
        override (e.g. `k=4`, `eta=0.1`). Options set to None are ignored.

    Example:
      learner, params = oslr.make("ogd-random-subset", d=20, k=4, max_k=8)
    """
    if name not in LEARNERS:
        raise ValueError(unknown_name("learner", name, LEARNERS))
    cpus.from_env()  # before its defaults, arrays, start JAX's backend
    return LEARNERS[name].make(d, horizon, **options)


def spec(name: str) -> LearnerSpec:
    """The `LearnerSpec` of learner `name`."""
    return LEARNERS[name]


def make_problem(name: str, **options) -> tuple[Problem, Any]:
    """Build problem `name` and its default params (`oslr list` shows each problem's options,
    with their types and ranges; each value given is checked against its declaration)."""
    if name not in PROBLEMS:
        raise ValueError(unknown_name("problem", name, PROBLEMS))
    cpus.from_env()
    return PROBLEMS[name].make(**options)


def list_learners(d: int | None = None) -> list[dict]:
    """Registered learners as dicts: name, family, description, reference, params (each with
    default, range, sweepable, doc; defaults evaluated at `d` when given) and static options."""
    return [LEARNERS[n].describe(d) for n in LEARNERS]


def list_problems() -> list[dict]:
    """Registered problems as dicts: name, kind, description and options (each with its
    default, type, range and doc)."""
    return [PROBLEMS[n].describe() for n in PROBLEMS]
