"""Where a study's settings come from besides Python: a TOML file (`load_config`), the flags
of `oslr run` (`add_flags`, the short flags of common problem options `OPTION_FLAGS`), the two
merged under the default study's rule (`merged`), and the table of keys in docs/extending.md
(`key_table`), each read from the one declaration (`oslr.study.settings`)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from oslr.study.settings import (DEFAULT_PROBLEM, StudySettings, UsageError, declared, flag,
                                 whole)


def load_config(path: str | os.PathLike) -> dict[str, Any]:
    """The settings of a TOML study file, each checked as the file wrote it: every key is a
    study setting (a table for problem_options, grid and params), an empty file is refused,
    and a whole number written as a float (horizon = 1e6) is taken as the integer."""
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib  # type: ignore[no-redef]
    p = Path(path)
    if not p.is_file():
        raise UsageError(f"config file {path} not found.")
    with p.open("rb") as f:
        try:
            cfg = tomllib.load(f)
        except tomllib.TOMLDecodeError as err:
            raise UsageError(f"{path}: not valid TOML ({err}).") from None
        except UnicodeDecodeError as err:  # a binary file
            raise UsageError(f"{path}: not a TOML text file (byte {err.object[err.start]:#04x} "
                             f"at position {err.start} is not UTF-8).") from None
    known = declared()
    if not cfg:
        raise UsageError(f"{path}: no settings in it; give at least one key, e.g. "
                         'learners = ["ogd-full"] (keys: docs/extending.md).')
    unknown = sorted(set(cfg) - set(known))
    if unknown:
        raise UsageError(f"{path}: unknown key(s) {unknown}; a study's keys: {list(known)}.")
    for key, value in cfg.items():
        if isinstance(value, float) and value.is_integer() and known[key].cli.get(
                "type") is whole:
            cfg[key] = int(value)  # horizon = 1e6
        if known[key].table and not isinstance(value, dict):
            raise UsageError(f"{path}: {key} must be a table ([{key}] with name = value "
                             f"lines), got {value!r}.")
    return cfg


def merged(config: dict[str, Any], flags: dict[str, Any]) -> dict[str, Any]:
    """The settings a TOML file's (`config`) and flags (`flags`: each given flag's value, by
    setting) describe, the flags winning (a table's entries by name), under the default
    study's rule: its learners' k = 4 is the default study's alone, so a study the user
    describes (a file, a problem or learners) starts from the learners' own defaults, and
    another problem than the file's starts from its own options."""
    given = dict(config)
    if config or "problem" in flags or "learners" in flags:
        given.setdefault("params", {})
    if "problem" in flags and flags["problem"] != given.get("problem", DEFAULT_PROBLEM):
        given.pop("problem_options", None)  # the file's options are another problem's
        given["params"] = {}
    for name, value in flags.items():
        table = declared()[name].table
        given[name] = {**(given.get(name) or {}), **value} if table else value
    return given


def key_table() -> str:
    """The Markdown table of a study's keys: TOML key and `oslr.Study` field, flag, default,
    what it sets (docs/extending.md)."""
    defaults = StudySettings()
    lines = ["| TOML key, `Study` field | `oslr run` flag | default | what it sets |",
             "|---|---|---|---|"]
    for name, s in declared().items():
        value = getattr(defaults, name)
        shown = "none" if value is None else f"`{value!r}`"
        form = f"`[{name}]` table" if s.table else f"`{name}`"
        lines.append(f"| {form} | `{flag(name)}` | {shown} | {s.doc} |")
    return "\n".join(lines)


def add_flags(parser: argparse.ArgumentParser) -> None:
    """`oslr run`'s flag of every setting, from the declaration (help: its doc), and the
    short flags of the common problem options (`OPTION_FLAGS`)."""
    for name, s in declared().items():
        kwargs = {k: v for k, v in s.cli.items() if k != "flag"}
        kwargs.setdefault("help", s.doc.replace("%", "%%"))
        parser.add_argument(flag(name), dest=name, **kwargs)
    group = parser.add_argument_group(
        "problem options (each the same as --problem-option NAME=VALUE)")
    for name, kwargs in OPTION_FLAGS.items():
        more = {} if kwargs.get("action") else {"metavar": name.upper()}
        group.add_argument("--" + name.replace("_", "-"), dest=name, **{**more, **kwargs})


#: short flags of `oslr run` for the problem options most studies set, each the same as
#: --problem-option NAME=VALUE: name -> add_argument keywords
OPTION_FLAGS: dict[str, dict] = {
    "d": {"type": whole, "help": "feature dimension (synthetic problems)"},
    "k": {"type": whole, "help": "sparsity of w* and of the comparator"},
    "sigma": {"type": float, "help": "label noise (synthetic problems)"},
    "design": {"help": "gaussian, rademacher, sphere, hadamard or correlated (synthetic "
                       "problems)"},
    "n_redundant": {"type": whole, "help": "append this many standard-normal features"},
    "n_arms": {"type": whole, "help": "arms (bandit problems)"},
    "delays": {"help": "feedback delay schedule: fixed, random or batched"},
    "max_delay": {"type": whole, "help": "largest delay D_t"},
    "cycle": {"action": "store_true", "default": None,
              "help": "allow horizons longer than a dataset (rows repeat)"},
}
