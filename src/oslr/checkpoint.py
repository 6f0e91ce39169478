"""Checkpoints of a study: the carry saved after each chunk, one crash-safe file per round.

`save(path, carry, t_done, fingerprint)` writes `checkpoint-<round>.npz` (the carry's blocks, their
SHA-256, the round, the study's fingerprint and the runtime together) through `oslr.atomic` and
keeps the last KEEP_ROUNDS rounds; `load(path, like, fingerprint, sharding)` returns the carry of
the last whole round of this study, falling back to the older round (with a warning) when the
newest is damaged, and refuses in one line a checkpoint of another study (`fingerprint`), of an
older oslr (its format or a missing key) or one whose every round is damaged. Under
`jax.distributed` each process keeps its own runs (path/process-I-of-N) and all resume from the
last round every process saved.

`keep_studies(root)` gives every study simulated inside it (with no checkpoint path of its own) a
checkpoint folder of its own under `root`, named by the study's fingerprint: an experiment
killed and run again skips the studies it finished (their last round is the horizon) and
resumes the one it was playing.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import re
import shutil
import warnings
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import jax
import numpy as np
from jax.experimental import multihost_utils
from jax.sharding import NamedSharding

from oslr import atomic
from oslr.provenance import runtime
from oslr.types import PyTree


class Identity(NamedTuple):
    """What a study's checkpoints must match to be resumed: the learner (name, info, static
    options), the problem (name, d, info), the rounds, seed, runs, the comparator's statistics,
    the checkpoints, the unroll, the params and the carry's layout. Its digest reads the
    fields in this order: the order is the checkpoint format (a change needs a format bump)."""

    learner: str
    learner_info: str
    options: dict
    problem: str
    d: int
    horizon: int
    seed: int
    run_offset: int
    n_total: int
    stats: bool
    n_checkpoints: int
    unroll: int
    params: Any
    problem_params: Any
    problem_info: str
    carry: Any

    def digest(self) -> str:
        """The fingerprint of a study's checkpoints (`fingerprint` of the fields in order)."""
        return fingerprint(*self)


def fingerprint(*parts: Any) -> str:
    h = hashlib.sha256()
    for p in parts:
        if isinstance(p, (str, int, float, type(None))):
            h.update(repr(p).encode())
        else:
            h.update(repr(jax.tree.structure(p)).encode())
            for leaf in jax.tree.leaves(p):
                a = np.ascontiguousarray(np.asarray(leaf))
                h.update(str((a.shape, a.dtype)).encode())
                h.update(a.tobytes())
    return h.hexdigest()


@dataclass
class KeptStudies:
    """The folder `keep_studies` keeps its studies' checkpoints in, and the studies it resumed:
    (learner name, round resumed from), in the order they were simulated."""

    root: Path
    resumed: list[tuple[str, int]] = field(default_factory=list)


_KEPT: contextvars.ContextVar[KeptStudies | None] = contextvars.ContextVar("oslr_kept_studies",
                                                                          default=None)


@contextlib.contextmanager
def keep_studies(root: str | Path | None):
    """Within: a study simulated without a checkpoint path saves its chunks under
    root/<digest of its fingerprint> and resumes from there (`study_path`). `None` turns this
    off inside an outer `keep_studies` (studies that are timed must be played whole)."""
    token = _KEPT.set(KeptStudies(Path(root)) if root is not None else None)
    try:
        yield _KEPT.get()
    finally:
        _KEPT.reset(token)


def kept_root() -> Path | None:
    """The root of the active `keep_studies` (None outside)."""
    kept = _KEPT.get()
    return None if kept is None else kept.root


def study_path(fingerprint: str) -> Path | None:
    """The checkpoint folder `keep_studies` gives a study of this fingerprint (None outside)."""
    kept = _KEPT.get()
    if kept is None:
        return None
    return kept.root / hashlib.sha256(fingerprint.encode()).hexdigest()[:16]


def note_resumed(learner: str, t_done: int) -> None:
    """Tell the active `keep_studies` that a study of `learner` resumed from round t_done."""
    kept = _KEPT.get()
    if kept is not None and t_done > 0:
        kept.resumed.append((learner, t_done))


def forget_studies() -> None:
    """Remove the checkpoints kept so far (their results are kept elsewhere, as the arena's
    finished cells are)."""
    kept = _KEPT.get()
    if kept is not None:
        shutil.rmtree(kept.root, ignore_errors=True)


#: Checkpoint layout: 2 = one block per device shard (per process under jax.distributed);
#: 3 = the same layout, written after the random streams moved (dataset replays keep permutation
#: keys, not orders; FTPSL draws its noise from raw bits); 4 = one crash-safe file per saved round
#: (`checkpoint-<round>.npz`: the carry's blocks and the metadata together). Older layouts (a
#: `carry.npz` beside a `meta.json`) are refused.
FORMAT = 4


def process_dir(path: Path) -> Path:
    """Where this process keeps its checkpoint: `path` itself in a single-process study, else
    path/process-I-of-N (each process saves and reloads only the runs its devices hold)."""
    if jax.process_count() == 1:
        return path
    return path / f"process-{jax.process_index()}-of-{jax.process_count()}"


def _rows(index: tuple, shape: tuple) -> tuple[int, int]:
    """The runs (leading-axis) range [start, stop) of block `index` of an array of `shape`."""
    if not shape:
        return 0, 1
    start, stop, _ = index[0].indices(shape[0])
    return start, stop


def file_of(folder: Path, t_done: int) -> Path:
    return folder / f"checkpoint-{t_done:012d}.npz"


def saved_rounds(folder: Path) -> list[int]:
    """The rounds of the checkpoint files in `folder`, ascending (temporary files ignored)."""
    if not folder.is_dir():
        return []
    return sorted(int(m.group(1)) for f in folder.iterdir()
                  if (m := re.fullmatch(r"checkpoint-(\d+)\.npz", f.name)))


def blocks_digest(blocks: dict) -> str:
    """SHA-256 of the carry's blocks (names, shapes, dtypes and bytes, in name order)."""
    h = hashlib.sha256()
    for name in sorted(blocks):
        a = np.ascontiguousarray(blocks[name])
        h.update(f"{name}:{a.shape}:{a.dtype};".encode())
        h.update(a.tobytes())
    return h.hexdigest()


#: saved rounds kept per folder: the newest and the one before, so that a newest file damaged
#: by something else still leaves a round to resume from
KEEP_ROUNDS = 2


def _write(file: Path, arrays: dict, meta: dict) -> None:
    """Write `arrays` and `meta` (with the format, the arrays' SHA-256 and the runtime added)
    as one crash-safe .npz file (`oslr.atomic`), the form `read` reads."""
    meta = {**meta, "format": FORMAT, "sha256": blocks_digest(arrays), "runtime": runtime()}
    arrays = {**arrays, "meta": np.frombuffer(json.dumps(meta).encode(), np.uint8)}
    atomic.write_atomic(file, lambda f: np.savez(f, **arrays))


def save(path: Path, carry: PyTree, t_done: int, fingerprint: str) -> None:
    """Save the carry after round `t_done` as one crash-safe file (`oslr.atomic`) holding the
    carry's blocks, their SHA-256, the study's fingerprint and the runtime, then drop all but
    the last KEEP_ROUNDS rounds' files. Under jax.distributed every process first waits until
    all have saved `t_done`, so that at any moment some round is saved by every process."""
    folder = process_dir(path)
    folder.mkdir(parents=True, exist_ok=True)
    blocks = {}
    for i, leaf in enumerate(jax.tree.leaves(carry)):
        for shard in leaf.addressable_shards:  # the blocks of each leaf this process holds
            start, stop = _rows(shard.index, leaf.shape)
            blocks[f"{i}/{start}-{stop}"] = np.asarray(shard.data)
    _write(file_of(folder, t_done), blocks, {"t_done": t_done, "fingerprint": fingerprint})
    if jax.process_count() > 1:
        multihost_utils.sync_global_devices(f"oslr checkpoint {t_done}")
    for t in saved_rounds(folder)[:-KEEP_ROUNDS]:
        file_of(folder, t).unlink(missing_ok=True)


def read(file: Path) -> tuple[dict, dict]:
    """The metadata and the carry's blocks of one checkpoint file; ValueError (saying why) when
    it cannot be read or its blocks do not match their SHA-256."""
    try:
        if not zipfile.is_zipfile(file):  # np.load would try it as a pickle
            raise ValueError("not an .npz archive")
        with open(file, "rb") as f, np.load(f) as z:
            meta = json.loads(z["meta"].tobytes())
            arrays = {name: z[name] for name in z.files if name != "meta"}
    except (OSError, EOFError, KeyError, ValueError, zipfile.BadZipFile) as e:
        raise ValueError(f"{type(e).__name__}: {e}") from None
    if "sha256" in meta and meta["sha256"] != blocks_digest(arrays):
        raise ValueError("its arrays do not match their SHA-256")
    return meta, arrays


#: what every checkpoint of this format records; one without them is an older oslr's
KEYS = ("t_done", "fingerprint", "format", "sha256", "runtime")


def resume_round(folder: Path, root: Path) -> int | None:
    """The round to resume from: the last saved one (under jax.distributed, the last one that
    every process saved); None when nothing is saved."""
    rounds = saved_rounds(folder)
    if jax.process_count() == 1:
        return rounds[-1] if rounds else None
    # the newest two rounds suffice: every process saved the second newest of any process
    mine = np.full(2, -1, np.int64)
    mine[:len(rounds[-2:])] = rounds[-2:]
    held = [set(row) - {-1} for row in np.asarray(multihost_utils.process_allgather(mine))]
    if not any(held):
        return None
    common = set.intersection(*held)
    if not common:
        raise ValueError(f"checkpoints in {root}: the processes saved no round in common "
                         f"({[sorted(h) for h in held]}); delete the folder to start afresh.")
    return max(common)


def fallback_rounds(folder: Path, t_done: int) -> list[int]:
    """The older saved rounds to resume from, newest first, when round `t_done` is damaged: every
    older one in a single process; none under jax.distributed, where the processes must resume
    one round together and another process may have removed its older rounds."""
    if jax.process_count() != 1:
        return []
    return [t for t in reversed(saved_rounds(folder)) if t < t_done]


def load(path: Path, like: PyTree, fingerprint: str,
                     sharding: NamedSharding) -> tuple[PyTree, int] | None:
    """The saved carry with `like`'s shapes, its runs axis laid out by `sharding`, and its
    round; None when there is no checkpoint. A checkpoint that cannot be used as it is (another
    study's, an older layout, a damaged file) raises ValueError saying what to do."""
    root = Path(path)
    folder = process_dir(root)
    fresh = f"delete {root} to start the study afresh"
    if any((folder / name).exists() for name in ("meta.json", "carry.npz")):
        raise ValueError(f"checkpoint in {folder} was written by an older oslr (another file "
                         f"layout); {fresh}.")
    t_done = resume_round(folder, root)
    if t_done is None:
        return None
    damaged = []
    for t in [t_done, *fallback_rounds(folder, t_done)]:
        file = file_of(folder, t)
        try:
            meta, arrays = read(file)
        except ValueError as e:
            damaged.append(f"{file} is damaged ({e})")
            continue
        if meta.get("format") != FORMAT:
            raise ValueError(f"checkpoint {file} was written by an older oslr (format "
                             f"{meta.get('format')}); {fresh}.")
        missing = [k for k in KEYS if k not in meta]
        if missing:  # the same format number, before the digest and the runtime were kept
            raise ValueError(f"checkpoint {file} was written by an older oslr (no "
                             f"{', '.join(missing)} recorded); {fresh}.")
        if meta.get("t_done") != t:
            damaged.append(f"{file} is damaged (it holds round {meta.get('t_done')}, its name "
                           f"says {t})")
            continue
        break
    else:
        raise ValueError(f"checkpoint {damaged[0]}"
                         + (f", and so is every older round ({'; '.join(damaged[1:])})"
                            if len(damaged) > 1 else "") + f"; {fresh}.")
    if damaged:
        warnings.warn(f"checkpoint {damaged[0]}; resuming from round {t} instead "
                      f"(the rounds after it are played again).", RuntimeWarning,
                      stacklevel=7)  # load, blocks.resume, play_block, play_blocks, _simulate,
    # simulate
    t_done = t
    if meta.get("fingerprint") != fingerprint:
        raise ValueError(f"checkpoint in {root} belongs to a different study (settings "
                         "changed); delete the folder or choose another checkpoint path.")
    saved_rt, now_rt = meta["runtime"], runtime()
    if saved_rt != now_rt:
        what = ", ".join(f"{k} {saved_rt.get(k)!r} -> {now_rt.get(k)!r}" for k in sorted(now_rt)
                         if saved_rt.get(k) != now_rt.get(k))
        warnings.warn(f"checkpoint in {root} was saved by another runtime ({what}): the resumed "
                      "study equals an uninterrupted one only to float rounding, not bit for "
                      "bit.", RuntimeWarning, stacklevel=7)
    for t in saved_rounds(folder):  # rounds past the resumed one are played again
        if t > t_done:
            file_of(folder, t).unlink(missing_ok=True)
    saved: dict[int, list] = {}
    for name, data in arrays.items():
        i, rows = name.split("/")
        start, stop = map(int, rows.split("-"))
        saved.setdefault(int(i), []).append((start, stop, data))

    def block(i: int, shape: tuple, index: tuple) -> np.ndarray:
        # any saved block holding these runs (a leaf may have been saved sharded or whole)
        start, stop = _rows(index, shape)
        for s0, s1, data in saved.get(i, ()):
            if s0 <= start and stop <= s1:
                return data[start - s0:stop - s0] if shape else data
        raise ValueError(f"checkpoint in {root} lacks runs {start}-{stop} of this process; "
                         "resume with the same processes and devices, or delete the folder.")

    def leaf_at(i: int, shape: tuple):
        return lambda index: block(i, shape, index)

    restored = [jax.make_array_from_callback(leaf.shape, sharding, leaf_at(i, leaf.shape))
                for i, leaf in enumerate(jax.tree.leaves(like))]
    return jax.tree.unflatten(jax.tree.structure(like), restored), t_done


def blocks_folder(root: Path, size: int) -> Path:
    """Where a study played in blocks of `size` runs keeps each block's chunks
    (block-<b>/checkpoint-<round>.npz) and each finished block's metrics (block-<b>.npz)."""
    return Path(root) / f"blocks-of-{size}"


def saved_block_size(root: Path | None) -> int | None:
    """The block size of the blocks saved under `root` (the largest, if several); None."""
    if root is None or not Path(root).is_dir():
        return None
    sizes = [int(m.group(1)) for f in Path(root).iterdir()
             if (m := re.fullmatch(r"blocks-of-(\d+)", f.name))]
    return max(sizes, default=None)


def block_file(folder: Path, b: int) -> Path:
    return process_dir(folder) / f"block-{b:06d}.npz"


def save_block(folder: Path, b: int, metrics: PyTree, fingerprint: str,
               study: str | None = None) -> None:
    """Save finished block `b`'s metrics (host arrays, every run of the block) as one
    crash-safe file with their SHA-256, the block's fingerprint and the `study`'s."""
    arrays = {str(i): np.asarray(a) for i, a in enumerate(jax.tree.leaves(metrics))}
    file = block_file(folder, b)
    file.parent.mkdir(parents=True, exist_ok=True)
    _write(file, arrays, {"block": b, "fingerprint": fingerprint, "study": study})


def load_block(folder: Path, b: int, like: PyTree, fingerprint: str,
               study: str | None = None) -> PyTree | None:
    """Finished block `b`'s metrics with `like`'s tree structure; None when not saved or
    damaged or another block's (with a warning: the block is played again). ValueError for
    another study's."""
    file = block_file(folder, b)
    if not file.exists():
        return None
    try:
        meta, arrays = read(file)
    except ValueError as e:
        warnings.warn(f"finished block {file} is damaged ({e}); playing it again.",
                      RuntimeWarning, stacklevel=6)  # play_block, play_blocks, _simulate, simulate
        return None
    other = ValueError(f"{file} belongs to a different study (settings changed, or an older "
                       f"oslr); delete {folder} or choose another checkpoint path.")
    if meta.get("format") != FORMAT or meta.get("study") not in (None, study):
        raise other  # (a block saved by an oslr that did not record its study: its fingerprint)
    if meta.get("block") != b:  # whole, but another block's of this study (moved or copied)
        warnings.warn(f"finished block {file} holds block {meta.get('block')}'s results, not "
                      f"block {b}'s; playing it again.", RuntimeWarning, stacklevel=6)
        return None
    if meta.get("fingerprint") != fingerprint:
        raise other
    treedef = jax.tree.structure(like)
    n_leaves = len(jax.tree.leaves(like))
    return jax.tree.unflatten(treedef, [arrays[str(i)] for i in range(n_leaves)])


def carry_layout(carry: PyTree) -> str:
    """The carry's tree structure and per-run leaf shapes and dtypes (a static option that
    changes the learner's state changes it), for the checkpoint fingerprint."""
    leaves = [(tuple(a.shape[1:]), str(a.dtype)) for a in jax.tree.leaves(carry)]
    return repr((jax.tree.structure(carry), leaves))


__all__ = ["FORMAT", "KEEP_ROUNDS", "KEYS", "block_file", "blocks_digest", "blocks_folder",
           "carry_layout", "file_of", "fingerprint", "load", "load_block", "process_dir", "read",
           "resume_round", "save", "save_block", "saved_block_size", "saved_rounds"]
