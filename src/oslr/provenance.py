"""Where a result came from: the `oslr` version, the git commit of the source tree and the
runtime (jax and jaxlib versions, backend, device, XLA flags, float64 mode) that computed it."""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path


def commit() -> dict:
    """The git commit of the source tree (and whether it has uncommitted changes), or unknown."""
    here = Path(__file__).resolve().parent
    try:
        sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True,
                             text=True, check=True).stdout.strip()
        dirty = bool(subprocess.run(["git", "status", "--porcelain", "--", "."], cwd=here,
                                    capture_output=True, text=True, check=True).stdout.strip())
    except (OSError, subprocess.CalledProcessError):
        from oslr import __version__

        return {"commit": f"unknown (oslr {__version__}, not a git checkout)", "dirty": None}
    return {"commit": sha, "dirty": dirty}


def runtime() -> dict:
    """What a compiled study's numbers depend on besides its settings: the jax and jaxlib
    versions, the backend, the device kind, the XLA flags and whether float64 mode is on
    (recorded in every checkpoint and result folder)."""
    import jax
    import jaxlib

    dev = jax.devices()[0]
    return {"jax": jax.__version__, "jaxlib": jaxlib.__version__, "backend": dev.platform,
            "device_kind": dev.device_kind, "xla_flags": os.environ.get("XLA_FLAGS", ""),
            "x64": bool(jax.config.jax_enable_x64)}  # type: ignore[attr-defined]


def stamp() -> dict:
    """{"oslr": version, "commit": sha, "dirty": bool, "python", "numpy", "runtime": runtime()}
    for a result file."""
    import numpy as np

    from oslr import __version__

    return {"oslr": __version__, **commit(), "python": platform.python_version(),
            "numpy": np.__version__, "runtime": runtime()}


#: packages whose versions `oslr info` reports when installed (the optional extras' too)
_INFO_PACKAGES = ("optax", "pandas", "pyarrow", "scipy", "matplotlib", "tqdm", "scikit-learn",
                  "mpax", "numba", "xarray")


def info() -> dict:
    """What a bug report or a cluster job's log needs: `oslr.provenance.stamp()` (versions,
    commit, backend, device kind, XLA flags, float64 mode), every device with its memory where
    the backend reports it, the host's cores and memory, and the optional packages' versions."""
    from importlib import metadata

    import jax

    devices = []
    for dev in jax.devices():
        stats = dev.memory_stats() or {}
        limit = stats.get("bytes_limit")
        devices.append({"id": dev.id, "platform": dev.platform, "kind": dev.device_kind,
                        "memory_gb": None if limit is None else round(limit / 2**30, 1)})
    packages: dict[str, str | None] = {}
    for name in _INFO_PACKAGES:
        try:
            packages[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            packages[name] = None
    pages = os.sysconf("SC_PHYS_PAGES") if hasattr(os, "sysconf") else 0
    return {**stamp(), "devices": devices, "cpu_count": os.cpu_count(),
            "host_memory_gb": round(pages * os.sysconf("SC_PAGE_SIZE") / 2**30, 1) if pages
            else None, "packages": packages}


__all__ = ["commit", "info", "runtime", "stamp"]
