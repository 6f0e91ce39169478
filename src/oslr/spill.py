"""Per-run arrays too large to hold at once: a study played in blocks of runs (`oslr.blocks`)
writes each block's rows to files as it finishes and reads the whole back as read-only memory
maps, so the host holds one block's rows at a time whatever the run count.

Each array is one unnamed temporary file (deleted by the system when its last map or handle
goes): in the study's checkpoint folder where it has one (the disk the study already writes
to), else in the system's temporary folder (`tempfile.gettempdir()`, `TMPDIR`). The rows are
written with plain file writes, never through a map, so they live in the page cache, not in the
process, until a reader touches them. Each block's rows are read back once against the SHA-256
taken when they were written (`Spill.read`): a file changed on disk meanwhile (cut, overwritten)
stops the study in one line (`SpillError`) instead of giving its zeros as results.
"""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path

import jax
import numpy as np

from oslr.types import PyTree


class SpillError(OSError):
    """Rows read back from a spill file differ from what was written (the file changed on disk
    under the study)."""


class Spill:
    """A pytree of arrays (n_rows, ...) filled block by block (`write`) and read back whole as
    memory maps (`read`, which closes the files; `close` where nothing is read). Every block
    must have the tree structure, dtypes and trailing shapes of the first."""

    def __init__(self, n_rows: int, where: str | Path | None = None):
        self.n_rows = n_rows
        self.where = None if where is None else Path(where)
        self._files: list | None = None
        self._like: list[np.ndarray] = []
        self._treedef = None
        #: (first row, rows, the SHA-256 of each array's rows) of every block written
        self._written: list[tuple[int, int, list[str]]] = []

    def write(self, start: int, tree: PyTree) -> None:
        """Rows start .. start + len - 1 of every array of `tree` (host arrays)."""
        leaves, treedef = jax.tree.flatten(tree)
        if self._files is None:
            if self.where is not None:
                self.where.mkdir(parents=True, exist_ok=True)
            self._treedef = treedef
            # each array's dtype and trailing shape, in arrays of their own: a view of the first
            # block would keep its rows in memory for the whole study
            self._like = [np.empty((0,) + np.shape(a)[1:], np.asarray(a).dtype) for a in leaves]
            self._files = [tempfile.TemporaryFile(dir=self.where) for _ in leaves]
        if treedef != self._treedef:
            raise ValueError(f"Spill.write: a block's tree {treedef} is not the first's "
                             f"{self._treedef}.")
        arrays = [np.ascontiguousarray(a, dtype=like.dtype) for like, a in zip(self._like, leaves)]
        for like, a in zip(self._like, arrays):
            if a.shape[1:] != like.shape[1:] or start + len(a) > self.n_rows:
                raise ValueError(f"Spill.write: rows {start}..{start + len(a) - 1} of shape "
                                 f"{a.shape[1:]} do not fit {self.n_rows} rows of shape "
                                 f"{like.shape[1:]}.")
        for f, a in zip(self._files, arrays):
            f.seek(start * a[:1].nbytes)
            a.tofile(f)
        digests = [hashlib.sha256(a.data).hexdigest() for a in arrays]  # the buffers: no copy
        n = len(arrays[0]) if arrays else 0
        # rows written again (a block played again) are checked as last written
        self._written = [(s, m, d) for s, m, d in self._written
                         if s + m <= start or start + n <= s]
        self._written.append((start, n, digests))

    def read(self) -> PyTree:
        """Every array whole, (n_rows, ...), as a read-only memory map of its file (an empty
        array in memory where it holds no bytes)."""
        if self._files is None:
            raise ValueError("Spill.read: nothing was written.")
        self._check()
        out = []
        for f, like in zip(self._files, self._like):
            shape = (self.n_rows,) + like.shape[1:]
            if like.dtype.itemsize * int(np.prod(shape)) == 0:
                out.append(np.zeros(shape, like.dtype))
                continue
            f.flush()
            out.append(np.memmap(f, dtype=like.dtype, mode="r", shape=shape))
        self.close()  # each map holds its own handle of its file
        return jax.tree.unflatten(self._treedef, out)

    def _check(self) -> None:
        """Every block's rows, read back from the files, against their SHA-256 (`write`)."""
        for start, n, digests in self._written:  # (read through the files' own buffers)
            for f, like, digest in zip(self._files or [], self._like, digests):
                row = like.dtype.itemsize * int(np.prod(like.shape[1:]))
                f.seek(start * row)
                if hashlib.sha256(f.read(n * row)).hexdigest() != digest:
                    where = self.where or tempfile.gettempdir()
                    raise SpillError(
                        f"the per-run results of runs {start}-{start + n - 1}, kept in a "
                        f"temporary file in {where} while the study ran, changed on disk before "
                        "they were read back (cut or overwritten); run the study again (with "
                        "checkpoints, its finished blocks are kept).")

    def close(self) -> None:
        """Close the files (their memory maps, if read, stay valid); idempotent."""
        for f in self._files or []:
            f.close()


__all__ = ["Spill", "SpillError"]
