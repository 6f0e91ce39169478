"""Crash-safe files: a file that a study resumes from is replaced whole or not at all.

`write_atomic(path, write)` writes to a temporary name in the same folder, flushes it to disk
(`fsync`), renames it over `path` (atomic on POSIX file systems) and flushes the folder, so that
after a crash at any moment `path` holds either its previous content or the new one, never a
mix, and after a power loss the rename is on disk once `write_atomic` has returned (on file
systems that honour `fsync`). A temporary file left by a killed writer is never read; the next
write to the same path replaces it.

Used for the simulator's checkpoints (`oslr.sim`), the arena's finished cells and
`oslr reproduce`'s files and stamps.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any


def _tmp_path(path: Path) -> Path:
    return path.with_name(f".{path.name}.tmp")


def fsync_dir(folder: str | os.PathLike) -> None:
    """Flush a folder's entries (a rename or a removal in it) to disk."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: str | os.PathLike, write: Callable[[IO[bytes]], Any]) -> None:
    """Replace `path` by what `write(f)` writes into a binary file object, crash-safely.

    Args:
      path: the file to (re)place; its folder must exist.
      write: called once with the open temporary file.
    """
    path = Path(path)
    tmp = _tmp_path(path)
    with open(tmp, "wb") as f:
        write(f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fsync_dir(path.parent)


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """`write_atomic` of a UTF-8 text."""
    data = text.encode()
    write_atomic(path, lambda f: f.write(data))


def write_json_atomic(path: str | os.PathLike, obj: Any, **dumps_kwargs) -> None:
    """`write_atomic` of `json.dumps(obj, **dumps_kwargs)`."""
    write_text_atomic(path, json.dumps(obj, **dumps_kwargs))


def copy_atomic(src: str | os.PathLike, dst: str | os.PathLike) -> None:
    """Copy the file `src` to `dst` crash-safely (`dst` is the old file or the whole copy)."""
    with open(src, "rb") as f_src:
        write_atomic(dst, lambda f: shutil.copyfileobj(f_src, f))


def read_json(path: str | os.PathLike, what: str, fix: str) -> Any:
    """The JSON in `path`, or a ValueError naming the file, what it is and how to go on
    (`fix`) when it cannot be read (damaged by something other than `write_atomic`)."""
    try:
        return json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{what} {path} cannot be read ({type(e).__name__}: {e}); "
                         f"{fix}") from None


__all__ = ["copy_atomic", "fsync_dir", "read_json", "write_atomic", "write_json_atomic",
           "write_text_atomic"]
