"""The cores oslr's process runs on: `OSLR_CPUS` (a list of core numbers as `taskset -c` takes
it: `0`, `0-3`, `0,2,4-7`) restricts every thread of the process to those cores, once, before
JAX starts its CPU backend. XLA sizes its thread pools from the cores a process may use, so
`OSLR_CPUS=0` runs JAX's CPU work on one thread: the way to compare CPU time with a
single-threaded program, or to run several studies side by side, one per core (README,
"GPUs and several processes"). Unset: every core the process may use, as JAX chooses.
"""

from __future__ import annotations

import os
import sys
import warnings

#: the variable read (once per process, `from_env`)
VARIABLE = "OSLR_CPUS"

_applied: list[frozenset[int] | None] = []  # what `from_env` did in this process


def parse(text: str, allowed: set[int]) -> frozenset[int]:
    """The cores `text` names (`0`, `0-3`, `0,2,4-7`), each one of `allowed`; a ValueError in
    one line (the value, why, what to do) otherwise."""
    have = _listed(sorted(allowed))
    cores: set[int] = set()
    for part in text.replace(" ", "").split(","):
        first, dash, last = part.partition("-")
        last = last if dash else first
        if not (first.isdigit() and last.isdigit() and int(first) <= int(last)):
            raise ValueError(f"{VARIABLE}={text!r}: {part!r} is not a core number or a range "
                             f"like 0-3; give cores as `taskset -c` takes them (this process may "
                             f"use {have}), or unset {VARIABLE}.")
        cores.update(range(int(first), int(last) + 1))
    outside = sorted(cores - set(allowed))
    if outside:
        raise ValueError(f"{VARIABLE}={text!r}: core(s) {_listed(outside)} are not among the "
                         f"cores this process may use ({have}); name some of those, or unset "
                         f"{VARIABLE}.")
    return frozenset(cores)


def _listed(cores: list[int]) -> str:
    return ",".join(str(c) for c in cores)


def pin(cores: frozenset[int]) -> None:
    """Restrict every thread of this process (and so the threads they start) to `cores`."""
    for tid in os.listdir("/proc/self/task"):
        try:
            os.sched_setaffinity(int(tid), cores)
        except ProcessLookupError:  # a thread that ended meanwhile
            pass


def from_env() -> frozenset[int] | None:
    """Apply `OSLR_CPUS` (see the module's doc) the first time this is called in the process;
    return the cores it restricts the process to, None where it is unset. Called before JAX's
    backend starts (`oslr.compile_cache.use_in_this_process`, the `oslr` command)."""
    if _applied:
        return _applied[0]
    text = os.environ.get(VARIABLE, "").strip()
    if not text:
        _applied.append(None)
        return None
    if not hasattr(os, "sched_setaffinity"):
        raise ValueError(f"{VARIABLE}={text!r}: this system has no way to choose a process's "
                         f"cores (Linux's sched_setaffinity); unset {VARIABLE}.")
    cores = parse(text, os.sched_getaffinity(0))
    if _backend_started():
        warnings.warn(f"{VARIABLE}={text!r} applied after JAX started its backend: its threads "
                      "run on those cores, but its thread pools keep the size they were given "
                      "(make no JAX array before oslr's first make, make_problem or simulate)",
                      stacklevel=1)
    pin(cores)
    _applied.append(cores)
    return cores


def count() -> int:
    """How many cores this process may run on now (what XLA sizes its CPU thread pools from)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _backend_started() -> bool:
    bridge = sys.modules.get("jax._src.xla_bridge")
    return bool(bridge is not None and bridge.backends_are_initialized())


__all__ = ["VARIABLE", "count", "from_env", "parse", "pin"]
