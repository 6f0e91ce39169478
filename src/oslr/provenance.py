"""Where a result came from: the `oslr` version and the git commit of the source tree."""

from __future__ import annotations

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


def stamp() -> dict:
    """{"oslr": version, "commit": sha, "dirty": bool} for a result file."""
    from oslr import __version__

    return {"oslr": __version__, **commit()}


__all__ = ["commit", "stamp"]
