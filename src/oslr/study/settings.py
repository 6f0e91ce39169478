"""A study's settings, each declared once: its name, type, default, check, doc and `oslr run`
flag, as the metadata of a `StudySettings` field.

Everything that lists a study's settings reads them from here: the TOML reader (`load_config`),
`oslr run`'s flags (`add_flags`), the record written to config.json and compared on resuming
(`StudySettings.to_dict`, `identity`), and the table of keys in docs/extending.md
(`key_table`). A value of the wrong kind is refused in one line that names it as the caller
wrote it (`Names`): `grid['eta']` from Python, `--grid eta=` from the command line,
`study.toml: [grid] eta` from a TOML file.

Importing this module loads nothing heavy (the `oslr` command imports it before its signal
handlers are in place).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import math
import os
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

#: the metadata key of a declared setting
_META = "oslr-setting"


class UsageError(ValueError):
    """Bad input to a study or a command: its message is one line saying which value is wrong,
    why, and what to do."""


class WrongKind(ValueError):
    """A value a setting's check refuses: what it must be and an example value (`Names` turns
    it into the one line the caller reads)."""

    def __init__(self, want: str, example: Any):
        super().__init__(want)
        self.want, self.example = want, example


@dataclasses.dataclass(frozen=True)
class Setting:
    """One setting of a study (the metadata of a `StudySettings` field).

    Attributes:
      doc: one line for the flag's help and the docs' table of keys.
      check: `check(value)` raises `WrongKind` for a value of the wrong kind (None passes for
        a setting whose default is None).
      cli: `add_argument` keywords of its `oslr run` flag (`--name-with-dashes`).
      record: whether config.json records it (None left out); the comparison and --until's
        settings are recorded by the driver with what they decided.
      resumable: whether it may change between a killed study and its resumption.
      table: None for one value; else a table of names (`[grid]` in a TOML file, repeated
        NAME=VALUE flags) whose entries are: "options" (one value each, read as the problem
        declares it), "value" (one value each) or "values" (a list each, NAME=V1,V2).
    """

    doc: str
    check: Callable[[Any], None]
    cli: dict = dataclasses.field(default_factory=dict)
    record: bool = True
    resumable: bool = False
    table: str | None = None


def setting(default: Any = None, *, factory: Callable[[], Any] | None = None, **meta):
    """A dataclass field declaring one study setting (see `Setting`)."""
    info = {_META: Setting(**meta)}
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata=info)
    return dataclasses.field(default=default, metadata=info)


# ------------------------------------------------------------------ the kinds of value checked

def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _positive_int(value) -> None:
    if not _is_int(value) or value < 1:
        raise WrongKind("a positive integer", 100)


def _integer(value) -> None:
    if not _is_int(value):
        raise WrongKind("an integer", 0)


def _optional(check: Callable[[Any], None]) -> Callable[[Any], None]:
    def optional(value) -> None:
        if value is not None:
            check(value)

    return optional


def _name(what: str, example: str) -> Callable[[Any], None]:
    def name(value) -> None:
        if not isinstance(value, str):
            raise WrongKind(what, example)

    return name


def _names(value) -> None:
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise WrongKind("a list of learner names", ["ogd-full"])


def _table(value) -> None:
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise WrongKind("a table of name -> value", {"eta": 0.1})


def _grid(value) -> None:
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise WrongKind("a table of name -> list of values", {"eta": [0.1, 0.2]})


def _size(value) -> None:
    from oslr.checks import parse_bytes  # numpy: only once a size is given

    try:
        parse_bytes("max_memory", value)
    except ValueError:
        raise WrongKind("bytes or a size such as 512M or 4G", "4G") from None


def _positive_number(value) -> None:
    if (not isinstance(value, (int, float)) or isinstance(value, bool)
            or not math.isfinite(value) or value <= 0):
        raise WrongKind("a finite number > 0", 1.0)


def _bounds(value) -> None:
    ok = isinstance(value, (list, tuple)) and len(value) == 2 and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
        for v in value)
    if not ok or not value[0] < value[1]:
        raise WrongKind("two finite numbers LO < HI", (-1000.0, 1000.0))


def _folder(value) -> None:
    if not isinstance(value, (str, os.PathLike)):
        raise WrongKind("a folder's path", "results/")


def _until(value) -> None:
    if value != "separated":
        raise WrongKind("'separated' (or None)", "separated")


def _flag(value) -> None:
    if not isinstance(value, bool):
        raise WrongKind("True or False", True)


# --------------------------------------------------------------- the flags' own value parsers

def whole(text: str) -> int:
    """An argparse type for counts: an integer, also written as an integral float ("1e6")."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value.is_integer():
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number")
    return int(value)


def _bounds_text(text: str) -> tuple[float, float]:
    """--bounds LO,HI: two finite numbers, LO < HI."""
    try:
        lo, hi = (float(p) for p in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: give two numbers LO,HI, e.g. -5000,5000") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise argparse.ArgumentTypeError(f"{text!r}: give finite LO < HI")
    return lo, hi


def _names_text(text: str) -> list[str]:
    """--learners A,B: the names, blanks dropped."""
    return [name.strip() for name in text.split(",") if name.strip()]


def positive_float(text: str) -> float:
    """A finite number > 0 (--variance V)."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give a number, e.g. 2500") from None
    if not (math.isfinite(v) and v > 0):
        raise argparse.ArgumentTypeError(f"{text!r}: give a finite number > 0")
    return v


# -------------------------------------------------------------------------- the declaration

#: the default study: `oslr run` without flags, `oslr.Study()` without arguments
DEFAULT_PROBLEM = "sparse-linear"
DEFAULT_PROBLEM_OPTIONS: dict[str, Any] = {"d": 16, "k": 3, "sigma": 0.1, "design": "gaussian"}
DEFAULT_LEARNERS = ("ogd-full", "ogd-random-subset")
#: the default study's learner settings (for the default problem and learners only)
DEFAULT_PARAMS: dict[str, Any] = {"k": 4}


@dataclasses.dataclass
class StudySettings:
    """The settings of a regret study, each declared once (`Setting`); `oslr.Study` runs them.

    `problem_options`, `learners` and `params` left None are the default study's (its problem's
    options, its learners, its learners' k = 4) where they apply, else empty."""

    problem: str = setting(
        DEFAULT_PROBLEM, doc="the problem's name (`oslr list`)",
        check=_name("a problem's name", DEFAULT_PROBLEM), cli={"metavar": "NAME"})
    problem_options: dict | None = setting(
        doc="the problem's options (`oslr list` shows each problem's, with ranges)",
        check=_optional(_table), table="options",
        cli={"action": "append", "metavar": "NAME=VALUE", "flag": "--problem-option"})
    learners: list | None = setting(
        doc="the learners' names (`oslr list`; comma-separated on the command line)",
        check=_optional(_names), cli={"metavar": "A,B", "type": _names_text})
    horizon: int = setting(2000, doc="rounds T of every run", check=_positive_int,
                           cli={"type": whole})
    runs: int = setting(100, doc="independent runs per grid point", check=_positive_int,
                        cli={"type": whole})
    seed: int = setting(0, doc="the root seed (run r uses fold_in(key(seed), r))",
                        check=_integer, cli={"type": whole})
    grid: dict = setting(
        factory=dict, doc="learner parameters swept (cartesian product): name -> values",
        check=_grid, table="values", cli={"action": "append", "metavar": "NAME=V1,V2"})
    params: dict | None = setting(
        doc="learner parameters, and static options, fixed: name -> value",
        check=_optional(_table), table="value",
        cli={"action": "append", "metavar": "NAME=V", "flag": "--set"})
    chunk: int = setting(500, doc="rounds per compiled chunk (progress and checkpoints "
                         "between chunks)", check=_positive_int, resumable=True,
                         cli={"type": whole})
    max_memory: int | str | None = setting(
        doc="memory the study may use (bytes or e.g. 4G; default 80% of what is available): "
            "beyond it the runs are played in blocks that fit, with the same results",
        check=_optional(_size), resumable=True, cli={"metavar": "SIZE"})
    comparator_k: int | None = setting(
        doc="sparsity of the best-in-hindsight comparator (default: the problem's)",
        check=_optional(_positive_int), cli={"type": whole})
    comparator_radius: float | None = setting(
        doc="l2 bound of the best-in-hindsight comparator (default: unbounded)",
        check=_optional(_positive_number), cli={"type": positive_float, "metavar": "R"})
    out: str | None = setting(
        doc="the study's folder (default oslr-results/run-<time>, or the unfinished folder "
            "of this very study)", check=_optional(_folder), resumable=True)
    compare_to: str | None = setting(
        doc="paired comparison of every learner (and grid point) with this one or the best, "
            "on the same runs (Holm-corrected): printed and compare.csv",
        check=_optional(_name("a learner's name or 'best'", "best")), record=False,
        cli={"metavar": "NAME|best"})
    until: str | None = setting(
        doc="'separated': add batches of `runs` runs until every comparison with the reference "
            "is decided by an anytime-valid 95% interval, or max_runs is reached; needs one of "
            "bounds, variance, normal", check=_optional(_until), record=False,
        cli={"choices": ("separated",)})
    max_runs: int | None = setting(
        doc="until's cap on the runs (default 10 x runs)", check=_optional(_integer),
        record=False, cli={"type": whole})
    bounds: tuple | None = setting(
        doc="until: bounds every run's difference of final regrets respects; the intervals "
            "are then distribution-free (a betting confidence sequence)",
        check=_optional(_bounds), record=False,
        cli={"type": _bounds_text, "metavar": "LO,HI"})
    variance: float | None = setting(
        doc="until: an upper bound on the variance of a run's difference of final regrets "
            "(a Catoni-style confidence sequence; a bound below the true variance voids it)",
        check=_optional(_positive_number), record=False,
        cli={"type": positive_float, "metavar": "V"})
    normal: bool = setting(
        False, doc="until: assume normal differences of final regrets (t intervals spent over "
                   "looks; not valid for skewed or heavy-tailed regrets)",
        check=_flag, record=False, cli={"action": "store_true"})

    def __post_init__(self) -> None:
        """The default study's settings where none were given: its learners, its problem's
        options (those given laid over them), and its learners' k; the default sparsities
        lowered to fit a small d the user gave (a k the user gave is checked, never
        changed)."""
        self.default_learners = self.learners is None
        if self.learners is None:
            self.learners = list(DEFAULT_LEARNERS)
        given = self.problem_options
        if self.problem == DEFAULT_PROBLEM and (given is None or isinstance(given, dict)):
            self.problem_options = {**DEFAULT_PROBLEM_OPTIONS, **(given or {})}
        elif given is None:
            self.problem_options = {}
        default_params = self.params is None
        if self.params is None:
            self.params = (dict(DEFAULT_PARAMS) if self.default_learners
                           and self.problem == DEFAULT_PROBLEM else {})
        options = self.problem_options if isinstance(self.problem_options, dict) else {}
        d = options.get("d")
        if self.problem != DEFAULT_PROBLEM or not (_is_int(d) and isinstance(d, int) and d >= 1):
            return
        if "k" not in (given or {}):
            options["k"] = min(DEFAULT_PROBLEM_OPTIONS["k"], d)
        if default_params and "k" in self.params:
            self.params["k"] = min(DEFAULT_PARAMS["k"], d)

    def to_dict(self) -> dict:
        """The study's settings as config.json records them (and resuming compares)."""
        import json

        out = {}
        for name, s in declared().items():
            value = getattr(self, name)
            if s.record and value is not None:
                out[name] = os.fspath(value) if isinstance(value, os.PathLike) else value
        return json.loads(json.dumps(out))


@functools.cache
def declared() -> Mapping[str, Setting]:
    """Each study setting's name -> its `Setting`, in the declaration's order (read once: the
    declaration is fixed; read-only)."""
    return MappingProxyType({f.name: f.metadata[_META] for f in dataclasses.fields(StudySettings)})


def flag(name: str) -> str:
    """The `oslr run` flag of setting `name`."""
    return declared()[name].cli.get("flag", "--" + name.replace("_", "-"))


def identity(record: dict) -> dict:
    """What identifies a study for resuming: its record less the settings that may change."""
    import json

    may_change = {n for n, s in declared().items() if s.resumable}
    return {k: v for k, v in json.loads(json.dumps(record, default=str)).items()
            if k not in may_change and not k.startswith("_")}
