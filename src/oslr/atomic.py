"""Crash-safe files: a file that a study resumes from is replaced whole or not at all.

`write_atomic(path, write)` writes to a temporary name in the same folder, flushes it to disk
(`fsync`), renames it over `path` (atomic on POSIX file systems) and flushes the folder, so that
after a crash at any moment `path` holds either its previous content or the new one, never a
mix, and after a power loss the rename is on disk once `write_atomic` has returned (on file
systems that honour `fsync`). Each process writes under its own temporary name
(`.NAME.PID.tmp`), so two writers never share one; a temporary is removed when the write fails
(a full disk keeps no half file holding the space that is short) and one left by a killed
process is removed by the next write to the same path. A write that fails raises
`AtomicWriteError`, an OSError whose message is one line naming the file and the fix.

`FolderLock` makes a folder single-writer: a second process that asks for it is refused in one
line naming the holder (the lock is the kernel's `flock` on the folder itself, released when the
holder exits, however it exits). `write_frame_atomic` writes a pandas frame as CSV, JSON or
Parquet through `write_atomic`.

Used for the simulator's checkpoints (`oslr.sim`), a study's result files (`oslr.report`), the
experiments' tables, the arena's finished cells and `oslr reproduce`'s files and stamps.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import re
import shutil
import socket
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, Any


class AtomicWriteError(OSError):
    """A crash-safe write failed (disk full, no permission, a file where a folder should be);
    the message is one line naming the path and what to do. The target is unchanged."""


#: what to do, by errno, in AtomicWriteError messages
_FIXES = {
    errno.ENOSPC: "free some space there (or write elsewhere), then run the same command again",
    errno.EDQUOT: "free some of your quota there, then run the same command again",
    errno.EACCES: "make the folder writable or write elsewhere",
    errno.EPERM: "make the folder writable or write elsewhere",
    errno.EROFS: "the file system is read-only: write elsewhere",
    errno.ENOTDIR: "a file stands where a folder should be: move it away or write elsewhere",
    errno.ENOENT: "its folder does not exist (was it removed?): create it or write elsewhere",
    errno.EISDIR: "a folder stands where the file should be: move it away or write elsewhere",
    errno.EEXIST: "a file stands where a folder should be: move it away or write elsewhere",
}


def os_error_message(err: OSError, path: str | os.PathLike, verb: str = "write") -> str:
    """One line for an OSError on `path`: what failed ("cannot VERB PATH") and what to do."""
    fix = (_FIXES.get(err.errno) if err.errno is not None else None) or \
        "check the path and run the same command again"
    return f"cannot {verb} {path} ({err.strerror or err}); {fix}."


def _tmp_path(path: Path) -> Path:
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, someone else's
        return True
    return True


def remove_stale_temporaries(path: str | os.PathLike) -> None:
    """Remove `.NAME.PID.tmp` files beside `path` whose writer is no longer running (left by a
    kill), and the `.NAME.tmp` of older oslr versions."""
    path = Path(path)
    pattern = re.compile(re.escape(f".{path.name}.") + r"(?:(\d+)\.)?tmp")
    for f in path.parent.iterdir():
        m = pattern.fullmatch(f.name)
        if m and (m.group(1) is None or not _pid_alive(int(m.group(1)))):
            f.unlink(missing_ok=True)


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

    Raises:
      AtomicWriteError: the write failed; `path` is unchanged and no temporary is left.
    """
    path = Path(path)
    tmp = _tmp_path(path)
    try:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except Exception as err:  # a kill leaves its temporary: the next write removes it
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(err, OSError) and not isinstance(err, AtomicWriteError):
            raise AtomicWriteError(err.errno, os_error_message(err, path)) from None
        raise
    try:
        fsync_dir(path.parent)
        remove_stale_temporaries(path)
    except OSError as err:
        raise AtomicWriteError(err.errno, os_error_message(err, path.parent)) from None


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


def write_frame_atomic(path: str | os.PathLike, frame, **kwargs) -> None:
    """`write_atomic` of a pandas DataFrame, in the format of `path`'s suffix: .csv
    (`to_csv`, index=False unless given), .json (`to_json`) or .parquet (`to_parquet`)."""
    path = Path(path)
    suffix = path.suffix
    if suffix == ".csv":
        kwargs.setdefault("index", False)
        write_text_atomic(path, frame.to_csv(**kwargs))
    elif suffix == ".json":
        write_text_atomic(path, frame.to_json(**kwargs))
    elif suffix == ".parquet":
        kwargs.setdefault("index", False)
        write_atomic(path, lambda f: frame.to_parquet(f, **kwargs))
    else:
        raise ValueError(f"write_frame_atomic: {path}: give a .csv, .json or .parquet name.")


def write_frames_atomic(path: str | os.PathLike, frames: Iterable) -> int:
    """`write_atomic` of one table given as pandas DataFrames of the same columns, one at a
    time (a table too large to build whole): .csv (the header once, no index) or .parquet (one
    row group or more per frame, the first frame's schema); returns the rows written."""
    path = Path(path)
    if path.suffix not in (".csv", ".parquet"):
        raise ValueError(f"write_frames_atomic: {path}: give a .csv or .parquet name.")
    import pandas as pd

    rows, seen = 0, False

    def write(f) -> None:
        nonlocal rows, seen
        writer = None  # Parquet's, from the first frame's schema
        try:
            for frame in frames:
                if path.suffix == ".csv":
                    f.write(frame.to_csv(index=False, header=not seen).encode())
                else:
                    writer = _parquet_piece(f, writer, frame)
                rows, seen = rows + len(frame), True
        finally:
            if writer is not None:
                writer.close()
        if not seen:  # no frame: an empty table
            empty = pd.DataFrame()
            if path.suffix == ".csv":
                f.write(empty.to_csv(index=False).encode())
            else:
                empty.to_parquet(f, index=False)

    write_atomic(path, write)
    return rows


def _parquet_piece(f, writer, frame):
    """Append `frame` to the Parquet `writer` on `f` (made from its schema when None)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(frame, preserve_index=False)
    writer = writer or pq.ParquetWriter(f, table.schema)
    writer.write_table(table.cast(writer.schema))
    return writer


def save_figure_atomic(fig, path: str | os.PathLike, dpi: int) -> None:
    """`write_atomic` of a matplotlib figure, in the format of `path`'s suffix (png when none)."""
    fmt = Path(path).suffix.lstrip(".").lower() or "png"
    write_atomic(path, lambda f: fig.savefig(f, format=fmt, dpi=dpi))


class FolderBusy(ValueError):
    """Another process holds the folder's lock (`FolderLock`)."""


class FolderLock:
    """An exclusive, non-blocking lock on `folder` for as long as the object is held (a
    context manager): a second holder is refused with FolderBusy naming the first (its pid,
    host, start time and command). The lock is `flock` on the folder itself, released by the
    kernel when the holder exits, however it exits (a SIGKILL leaves no stale lock), and it
    cannot be taken from under its holder by deleting a file; the holder's line is written to
    `folder/.oslr.lock` (replaced whole under the lock) for the refusal to quote."""

    NAME = ".oslr.lock"

    def __init__(self, folder: str | os.PathLike, what: str = "folder"):
        self.folder = Path(folder)
        self.what = what
        self.fd: int | None = None

    def acquire(self) -> FolderLock:
        self.folder.mkdir(parents=True, exist_ok=True)
        file = self.folder / self.NAME
        if file.exists() and not file.is_file():
            raise FolderBusy(f"{self.what} {self.folder}: {file} is not a file (oslr keeps the "
                             "name of the lock's holder there); move it away and run the same "
                             "command again.")
        fd = os.open(self.folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise FolderBusy(f"{self.what} {self.folder} is in use by {self._holder(file)}; "
                             "wait for it to finish (or stop it), or give another "
                             "folder.") from None
        except BaseException:
            os.close(fd)
            raise
        me = (f"pid {os.getpid()} on {socket.gethostname()} since "
              f"{time.strftime('%Y-%m-%d %H:%M:%S')} ({' '.join(_argv())[:200]})")
        self.fd = fd
        try:  # the whole line or the previous holder's, never a mix (write_atomic)
            write_text_atomic(file, me)
        except BaseException:
            self.release()
            raise
        return self

    @staticmethod
    def _holder(file: Path) -> str:
        try:
            return file.read_text(errors="replace").strip() or "another process"
        except OSError:
            return "another process"

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing the descriptor releases the flock
            self.fd = None

    def __enter__(self) -> FolderLock:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


def _argv() -> list[str]:
    return [os.path.basename(sys.argv[0])] + sys.argv[1:] if sys.argv else ["python"]


def read_json(path: str | os.PathLike, what: str, fix: str) -> Any:
    """The JSON in `path`, or a ValueError naming the file, what it is and how to go on
    (`fix`) when it cannot be read (damaged by something other than `write_atomic`)."""
    try:
        return json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{what} {path} cannot be read ({type(e).__name__}: {e}); "
                         f"{fix}") from None


__all__ = ["AtomicWriteError", "FolderBusy", "FolderLock", "copy_atomic", "fsync_dir",
           "os_error_message", "read_json", "remove_stale_temporaries",
           "save_figure_atomic", "write_atomic",
           "write_frame_atomic", "write_json_atomic", "write_text_atomic"]
