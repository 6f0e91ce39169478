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
    `oslr` commands that compile; not under jax.distributed (several processes would write one
    folder). An unwritable folder means no cache, as before it was set."""
    where = os.environ.get("OSLR_COMPILE_CACHE", str(Path.home() / ".cache" / "oslr" / "jax"))
    import jax

    if where == "off" or jax.config.jax_compilation_cache_dir:
        return
    try:
        Path(where).mkdir(parents=True, exist_ok=True)
    except OSError:  # an unwritable home: compile every time, as without the cache
        return
    jax.config.update("jax_compilation_cache_dir", where)


__all__ = ["use_persistent_cache"]
