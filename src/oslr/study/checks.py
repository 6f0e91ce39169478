"""A study's checks, each a one-line message naming the value as the caller wrote it (`Names`):
every setting's kind (`check_settings`), the sizes a compiled program holds (`check_sizes`),
grid labels and float32 values, and the comparison and --until settings (`check_compare`).
Each runs before anything is traced or written."""

from __future__ import annotations

import contextlib
import contextvars
import math
from collections.abc import Iterator
from typing import Any

from oslr.study.settings import StudySettings, UsageError, WrongKind, declared, flag

# ----------------------------------------------------------- how a message names a setting

def _text(value: Any) -> str:
    """A value as a command line writes it (a float shortest: -1.0 as -1)."""
    return f"{value:g}" if isinstance(value, float) else str(value)


class Names:
    """How a message names a setting and its value: as Python wrote it (`grid['eta']=0.1`), as
    the command line did (`--grid eta=0.1`) or as a TOML file (`s.toml: [grid] eta = 0.1`).
    `sources` says, per setting, where its value came from: "python", "flag" or a TOML file's
    path (default: `default`)."""

    def __init__(self, default: str = "python", sources: dict[str, str] | None = None):
        self.default, self.sources = default, dict(sources or {})

    def source(self, name: str, key: str | None = None) -> str:
        """Where setting `name` (its entry `key`) came from: "python", "flag", "short" (a
        problem option's own flag, `OPTION_FLAGS`) or a TOML file's path."""
        if key is not None and f"{name}.{key}" in self.sources:
            return self.sources[f"{name}.{key}"]
        return self.sources.get(name, self.default)

    def of(self, name: str, key: str | None = None) -> str:
        """The setting (or its entry `key`) as the caller wrote it, without a value."""
        where = self.source(name, key)
        if where == "python":
            return name if key is None else f"{name}[{key!r}]"
        if where == "short":
            return f"--{key.replace('_', '-')}" if key else flag(name)
        if where == "flag":
            return flag(name) if key is None else f"{flag(name)} {key}"
        return f"{where}: {name}" if key is None else f"{where}: [{name}] {key}"

    def said(self, name: str, value: Any, key: str | None = None) -> str:
        """The setting with its value, as the caller wrote it."""
        import json

        where = self.source(name, key)
        if where == "python":
            return f"{self.of(name, key)}={value!r}"
        if where == "short":
            return f"{self.of(name, key)} {value}"
        if where == "flag":
            text = (",".join(_text(v) for v in value) if isinstance(value, (list, tuple))
                    else _text(value))
            if key is not None:
                return f"{flag(name)} {key}={text}"
            return flag(name) if isinstance(value, bool) else f"{flag(name)} {text}"
        return f"{self.of(name, key)} = {json.dumps(value, default=str)}"

    def form(self, name: str, text: str, python: str | None = None) -> str:
        """Setting `name` written with a placeholder `text` (`python`: Python's, if other)."""
        where = self.source(name)
        if where == "flag":
            return f"{flag(name)} {text}".rstrip()
        return f"{name}={python or text}" if where == "python" else f"{name} = {python or text}"

    def refuse(self, name: str, value: Any, wrong: WrongKind, key: str | None = None):
        """The one-line refusal of `value` for setting `name` (entry `key`)."""
        if isinstance(wrong.example, dict) and key is None and self.source(name) != "python":
            k, v = next(iter(wrong.example.items()))
            example = self.said(name, v, k)
        else:
            example = self.said(name, wrong.example, key)
        where = self.source(name, key)
        if where not in ("python", "flag", "short"):  # a file's key: the path said once
            example = example.removeprefix(f"{where}: ")
        return UsageError(f"{self.said(name, value, key)} must be {wrong.want}, e.g. "
                          f"{example}.")


PYTHON = Names()
FLAGS = Names("flag")


def check_settings(study: StudySettings, names: Names = PYTHON) -> None:
    """Every setting's declared check, then each entry of the tables: one line naming the first
    value of the wrong kind as the caller wrote it, before anything is traced or written."""
    for name, s in declared().items():
        value = getattr(study, name)
        try:
            s.check(value)
        except WrongKind as wrong:
            raise names.refuse(name, value, wrong) from None
    for key, values in study.grid.items():
        if not isinstance(values, (list, tuple)) or not values:
            raise names.refuse("grid", values, WrongKind(
                "a non-empty list of values", [values]), key)
    for table in ("problem_options", "params"):
        for key, value in (getattr(study, table) or {}).items():
            if not isinstance(value, (int, float, str, bool)):
                raise names.refuse(table, value, WrongKind("a number, a string or a bool", 1),
                                   key)
    both = sorted(set(study.params or {}) & set(study.grid))
    if both:
        raise UsageError(f"{names.of('params', both[0])} and {names.of('grid', both[0])}: "
                         f"{both[0]!r} both fixed to one value and swept; give each parameter "
                         "one or the other.")


# ------------------------------------------------------------------------------ the sizes

#: the largest count a compiled program holds (rounds, run ids, dimensions are int32)
INT32_MAX = 2**31 - 1

#: the sizes a study compiles: its settings', then its problem options'
_SIZES = ("horizon", "runs", "chunk", "comparator_k")
_OPTION_SIZES = ("d", "k", "n_arms", "n_redundant", "max_delay")


def check_sizes(study: StudySettings, names: Names = PYTHON) -> None:
    """Every count a study compiles is an int32: a larger one is refused in one line, before
    any folder is made (run ids are int32 too, so the runs at most 2^31)."""
    sizes = [(names.said(k, getattr(study, k)), k, getattr(study, k)) for k in _SIZES]
    options = study.problem_options or {}
    sizes += [(names.said("problem_options", options[k], k), k, options[k])
              for k in _OPTION_SIZES if k in options]
    for said, key, value in sizes:
        limit = 2**31 if key == "runs" else INT32_MAX
        if isinstance(value, int) and not isinstance(value, bool) and value > limit:
            raise UsageError(f"{said} is beyond {limit:,}, the largest count the compiled "
                             "programs hold (int32); give a smaller one (split a larger study "
                             "in parts).")


#: float32's largest finite number (numpy.finfo(numpy.float32).max)
FLOAT32_MAX = 3.4028234663852886e38


def check_float32(said: str, value) -> None:
    """A finite float the learners' float32 params cannot hold is refused before tracing."""
    if isinstance(value, float) and math.isfinite(value) and abs(value) > FLOAT32_MAX:
        raise UsageError(f"{said} is beyond float32's largest number ({FLOAT32_MAX:.4g}), in "
                         "which the learners compute; give a smaller value.")


def check_grid_labels(study: StudySettings, names: Names = PYTHON) -> None:
    """Grid values that would print as the same label (4 significant digits) are refused, and
    values float32 cannot hold."""
    from oslr.frames import params_label

    for key, values in study.grid.items():
        for v in values:
            check_float32(names.said("grid", v, key), v)
        labels = [params_label({key: v}) for v in values]
        same = sorted({lab for lab in labels if labels.count(lab) > 1})
        if same:
            clash = [v for v, lab in zip(values, labels) if lab == same[0]]
            raise UsageError(f"{names.of('grid', key)} values {clash} all print as {same[0]!r} "
                             "(results are labelled to 4 significant digits): give each value "
                             "once, or values that differ in their first 4 digits.")
    for key, value in (study.params or {}).items():
        check_float32(names.said("params", value, key), value)


# ------------------------------------------------------------------ the comparison and --until

def interval_of(study) -> dict:
    """The assumption --until separated's intervals rest on: the keyword arguments bounds,
    variance and normal of `oslr.report.sequential_frame`."""
    return {"bounds": study.bounds, "variance": study.variance, "normal": bool(study.normal)}


def until_needs(names: Names) -> str:
    """The refusal of until with no assumption named (or two)."""
    return (f"{names.of('until')} separated needs one assumption about the runs' differences of "
            f"final regrets: {names.form('bounds', 'LO,HI', '(LO, HI)')} (any distribution "
            f"within them), {names.form('variance', 'V')} (any with variance <= V), or "
            f"{names.form('normal', '', 'True')} (t intervals; not valid for skewed regrets).")


def _check_bounds(study: StudySettings, names: Names) -> None:
    """Bounds symmetric where the reference is the best (its pairs are taken either way round
    as the best changes between looks)."""
    if study.bounds is None:
        return
    lo, hi = (float(b) for b in study.bounds)
    if study.compare_to in (None, "best") and lo != -hi:
        raise UsageError(f"{names.said('bounds', study.bounds)} with the best as reference: "
                         "its pairs are taken either way round, so give symmetric bounds "
                         f"({-max(-lo, hi):g}, {max(-lo, hi):g}) or name a reference with "
                         f"{names.of('compare_to')}.")


def _check_reference(study: StudySettings, plans, names: Names) -> None:
    from oslr.checks import unknown_name
    from oslr.frames import params_label

    entries = sum(len(labels) for _, labels, _ in plans)
    if (study.compare_to is not None or study.until) and entries < 2:
        raise UsageError(f"{names.of('compare_to')} and {names.of('until')} compare two "
                         "learners or grid points or more; this study has one (add learners "
                         "or a grid).")
    if study.compare_to in (None, "best"):
        return
    names_ = {learner.name for learner, _, _ in plans}
    if study.compare_to.split(" [")[0] not in names_:
        raise UsageError(unknown_name("learner to compare with", study.compare_to,
                                      sorted(names_) + ["best"]))
    points = [lrn.name if len(labels) == 1 else f"{lrn.name} [{params_label(point)}]"
              for lrn, labels, _ in plans for point in labels]
    if study.compare_to not in points:
        raise UsageError(f"{names.said('compare_to', study.compare_to)} names none of the "
                         f"entries {points} (a learner with several grid points is one entry "
                         "per point); give one of them or 'best'.")


def check_compare(study: StudySettings, plans, names: Names = PYTHON) -> int | None:
    """--until's cap on the runs, after checking the comparison's settings against the study,
    before any work: a comparison needs two entries and runs to pair; until needs two runs a
    batch (each look's interval needs a spread) and one assumption for its intervals."""
    from oslr.stats import sequential_method

    _check_reference(study, plans, names)
    if study.max_runs is not None and not study.until:
        raise UsageError(f"{names.of('max_runs')} caps {names.of('until')} separated; add "
                         f"{names.said('until', 'separated')} or drop it.")
    interval = interval_of(study)
    for key, value in interval.items():
        if value not in (None, False) and not study.until:
            raise UsageError(f"{names.of(key)} sets {names.of('until')} separated's intervals; "
                             f"add {names.said('until', 'separated')} or drop it.")
    if interval["bounds"] is not None and interval["variance"] is not None:
        raise UsageError(f"give {names.of('bounds')} or {names.of('variance')}, not both: "
                         "bounds (a betting sequence) are the tighter where every difference "
                         "is bounded.")
    _check_bounds(study, names)
    if not study.until:
        return None
    batch = study.runs
    if batch < 2:
        raise UsageError(f"{names.said('runs', batch)}: until separated adds batches of this "
                         "many runs; give 2 or more (10 is a good batch).")
    cap = study.max_runs if study.max_runs is not None else 10 * batch
    if cap > 2**31:
        raise UsageError(f"{names.said('max_runs', cap)} is beyond 2^31 runs (run ids are "
                         "int32); lower it (or the runs, whose 10 batches it defaults to).")
    if cap < batch:
        raise UsageError(f"{names.said('max_runs', cap)} is below one batch of "
                         f"{names.said('runs', batch)}; raise it.")
    try:
        sequential_method(**interval)  # exactly one assumption named
    except ValueError:
        raise UsageError(until_needs(names)) from None
    return cap




# ------------------------------------------------------- the names of the study being made

_NAMING: contextvars.ContextVar[Names] = contextvars.ContextVar("oslr_study_names",
                                                                default=PYTHON)


def current_names() -> Names:
    """How the study being made names its settings (`naming`; Python's by default)."""
    return _NAMING.get()


@contextlib.contextmanager
def naming(names: Names) -> Iterator[Names]:
    """Within this context a `Study` made names its settings by `names` (the command line
    makes its study within `naming(Names("flag", ...))`)."""
    token = _NAMING.set(names)
    try:
        yield names
    finally:
        _NAMING.reset(token)


__all__ = ["FLAGS", "FLOAT32_MAX", "INT32_MAX", "Names", "PYTHON", "check_compare",
           "check_float32", "check_grid_labels", "check_settings", "check_sizes", "current_names",
           "interval_of", "naming", "until_needs"]
