"""Per-run arrays too large to hold at once: a study played in blocks of runs (`oslr.blocks`)
writes each block's rows to files as it finishes and reads the whole back as read-only memory
maps, so the host holds one block's rows at a time whatever the run count.

Each array is one unnamed temporary file (deleted by the system when its last map or handle
goes): in the study's checkpoint folder where it has one (the disk the study already writes
to), else in the system's temporary folder (`tempfile.gettempdir()`, `TMPDIR`). The rows are
written with plain file writes, never through a map, so they live in the page cache, not in the
process, until a reader touches them.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import jax
import numpy as np

from oslr.types import PyTree


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

    def write(self, start: int, tree: PyTree) -> None:
        """Rows start .. start + len - 1 of every array of `tree` (host arrays)."""
        leaves, treedef = jax.tree.flatten(tree)
        if self._files is None:
            if self.where is not None:
                self.where.mkdir(parents=True, exist_ok=True)
            self._treedef = treedef
            self._like = [np.asarray(a)[:0] for a in leaves]
            self._files = [tempfile.TemporaryFile(dir=self.where) for _ in leaves]
        if treedef != self._treedef:
            raise ValueError(f"Spill.write: a block's tree {treedef} is not the first's "
                             f"{self._treedef}.")
        for f, like, a in zip(self._files, self._like, leaves):
            a = np.ascontiguousarray(a, dtype=like.dtype)
            if a.shape[1:] != like.shape[1:] or start + len(a) > self.n_rows:
                raise ValueError(f"Spill.write: rows {start}..{start + len(a) - 1} of shape "
                                 f"{a.shape[1:]} do not fit {self.n_rows} rows of shape "
                                 f"{like.shape[1:]}.")
            f.seek(start * a[:1].nbytes)
            a.tofile(f)

    def read(self) -> PyTree:
        """Every array whole, (n_rows, ...), as a read-only memory map of its file (an empty
        array in memory where it holds no bytes)."""
        if self._files is None:
            raise ValueError("Spill.read: nothing was written.")
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

    def close(self) -> None:
        """Close the files (their memory maps, if read, stay valid); idempotent."""
        for f in self._files or []:
            f.close()


__all__ = ["Spill"]
