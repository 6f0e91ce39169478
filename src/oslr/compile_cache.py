"""JAX's persistent compilation cache for oslr's programs: each program compiled once per
machine, so a study run again, a notebook after a kernel restart, or an experiment whose studies
share programs loads them instead of compiling (JAX keys each entry by the program, the compile
options and the versions)."""

from __future__ import annotations

import os
from pathlib import Path


def use_persistent_cache() -> None:
    """Keep compiled programs in $OSLR_COMPILE_CACHE (default ~/.cache/oslr/jax; "off": none),
    unless a cache is set already (the user's own is kept). Called by `oslr.simulate` and the
    `oslr` commands that compile. An unwritable folder means no cache, as before it was set."""
    where = os.environ.get("OSLR_COMPILE_CACHE", str(Path.home() / ".cache" / "oslr" / "jax"))
    import jax

    if where == "off" or jax.config.jax_compilation_cache_dir:
        return
    try:
        Path(where).mkdir(parents=True, exist_ok=True)
    except OSError:  # an unwritable home: compile every time, as without the cache
        return
    jax.config.update("jax_compilation_cache_dir", where)
    # every program, not only those that took JAX's default second to compile: a study's many
    # small programs (init, chunks, metrics) add up to most of a new process's compiling
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)


def use_in_this_process() -> None:
    """`use_persistent_cache`, except in one of several jax.distributed processes (they would
    write one folder). Called where oslr first builds arrays (`oslr.make`, `oslr.make_problem`)
    and where it compiles (`oslr.simulate`), so a new process compiles none of what an earlier
    one did."""
    import jax

    if jax.process_count() == 1:
        use_persistent_cache()


__all__ = ["use_persistent_cache", "use_in_this_process"]
