"""A study's runs played in blocks: the block size that fits (`block_size`: XLA's memory
analysis of the compiled init and chunk, `oslr.memory.fit_block`), and the blocks played one
after another (`play_blocks`), each from its saved chunks to the horizon, its metrics gathered
on the host. A study of several blocks keeps each finished block's metrics
(`oslr.checkpoint.save_block`) and the chunks of the block it is playing, so a killed study
resumes at its block and chunk. Run r's stream depends on r only, and the programs' rounding not
on the batch (`oslr.program.compiler_options`), so the blocks' results equal one batch's bit for
bit."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Callable, NamedTuple

import jax
import numpy as np
from jax.experimental import multihost_utils
from jax.sharding import NamedSharding

from oslr import checkpoint, compile_cache, memory, program, spill
from oslr.types import PyTree, on_device


def to_host(tree: PyTree) -> PyTree:
    """NumPy copies of a pytree's arrays; an array spread over several processes
    (`jax.distributed`) is gathered from all of them, so every process gets the whole of it."""
    def fetch(a):
        if isinstance(a, jax.Array) and not a.is_fully_addressable:
            return np.asarray(multihost_utils.process_allgather(a, tiled=True))
        return np.asarray(a)

    return jax.tree.map(fetch, tree)


class Play(NamedTuple):
    """What every block of a study plays with: its init and chunk (jitted), the runs' sharding,
    the seed, horizon and checkpoint rounds (on the device), the problem's params (replicated),
    the horizon, chunk and unroll as ints, the devices, what the programs compute (`ident`,
    `oslr.program.identity`; None: not stored) and the programs compiled so far, by block size
    (`compiled`)."""

    init_b: Callable
    chunk_b: Callable
    shard: NamedSharding
    seed: jax.Array
    horizon_a: jax.Array
    ckpts: jax.Array
    pp: PyTree
    horizon: int
    chunk_size: int
    unroll: int
    devices: list
    ident: str | None
    compiled: dict


class Block(NamedTuple):
    """Block `b` of a study: elements start .. start + count - 1 of the flat batch (grid point
    major), padded to `size` with copies of its last element; `share` of the study's runs."""

    b: int
    start: int
    count: int  # type: ignore[assignment]  # shadows tuple.count, as a field
    size: int
    n_total: int

    @property
    def share(self) -> float | int:
        return 1 if self.count == self.n_total else self.count / self.n_total


def block_args(play: Play, params: PyTree, ids: np.ndarray, pidx: np.ndarray,
                block: Block):
    """The block's run ids and per-run params, on the devices (sharded over the runs)."""
    sel = np.arange(block.start, block.start + block.size).clip(max=block.start + block.count - 1)
    lp = jax.tree.map(lambda a: np.asarray(a)[pidx[sel]], params)  # on the host: no gather
    return jax.device_put(ids[sel], play.shard), jax.device_put(lp, play.shard)


def _signature(args) -> str:
    """The arguments' tree, shapes, dtypes and shardings: what a compiled program is made for."""
    def leaf(a):
        return (np.shape(a), str(a.dtype), bool(getattr(a, "weak_type", False)),
                str(getattr(a, "sharding", None)))

    return repr((jax.tree.structure(args), jax.tree.leaves(jax.tree.map(leaf, args))))


def _compiled(play: Play, what: str, fn: Callable, args: tuple, statics: tuple = ()):
    """`fn` compiled for `args` and `statics`, once per study (`play.compiled`) and, traced and
    lowered, kept across processes where its identity is known
    (`oslr.compile_cache.load_or_compile`)."""
    key = (what, statics, _signature(args))
    if key not in play.compiled:
        parts = None if play.ident is None else (play.ident, *key)
        play.compiled[key] = compile_cache.load_or_compile(
            parts, fn, args, statics, play.devices, program.compiler_options())
    return play.compiled[key]


def _specs(play: Play, params: PyTree, size: int) -> tuple:
    """The shapes of a block of `size` runs' ids and per-run params, sharded over the runs."""
    run_ids = jax.ShapeDtypeStruct((size,), np.int32, sharding=play.shard)
    lp = jax.tree.map(lambda a: jax.ShapeDtypeStruct((size,) + np.shape(a)[1:],
                                                     np.asarray(a).dtype, sharding=play.shard),
                      params)
    return run_ids, lp


def init_program(play: Play, params: PyTree, size: int):
    """The compiled init for a block of `size` runs."""
    return _compiled(play, "init", play.init_b, (play.seed, *_specs(play, params, size),
                                                 play.pp))


def chunk_program(play: Play, params: PyTree, size: int, guard: bool = False):
    """The compiled chunk for a block of `size` runs; with `guard` it stops at the horizon (a
    last, partial chunk: `oslr.program.make_run_fns`)."""
    carry = jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=play.shard),
                         init_program(play, params, size).out_info)  # as `play_block` puts it
    args = (carry, on_device(0, np.int32), play.horizon_a, play.ckpts, play.seed,
            *_specs(play, params, size), play.pp)
    return _compiled(play, "chunk", play.chunk_b, args, (play.chunk_size, play.unroll, guard))


def block_size(play: Play, params: PyTree, n_total: int, root, max_memory: int | None,
               per_run: int) -> int:
    """Runs per block (`memory.fit_block`): all of them when the compiled init and chunk at
    that size fit in what the study may use on each device (`memory.budget`), else the largest
    size that does, starting from what one run's carry (`per_run` bytes, twice) suggests. A
    killed study's block size is kept (nothing is compiled before its checkpoint is checked)."""
    n_dev = len(play.devices)
    have = memory.budget(play.devices[0], max_memory)

    def need(size: int) -> int | None:
        compiled = init_program(play, params, size), chunk_program(play, params, size)
        got = [memory.program_bytes(c) for c in compiled]
        sizes = [g for g in got if g is not None]
        if len(sizes) < len(got):
            return None
        carry = memory.tree_bytes(compiled[0].out_info)
        return max(sizes) + (carry // n_dev if root is not None else 0)  # the checkpoint's copy

    saved = checkpoint.saved_block_size(root)  # kept: it fitted when the study began
    if saved is not None and saved % n_dev == 0:
        return saved
    if root is not None and checkpoint.saved_rounds(checkpoint.process_dir(root)):
        return -(-n_total // n_dev) * n_dev  # begun in one block
    guess = n_total if have is None else max(1, have // (2 * per_run))
    return memory.fit_block(need, n_total, n_dev, guess, have)


def play_block(play: Play, block: Block, params: PyTree, ids, pidx, root, fingerprint: str,
                like: PyTree, report_done, name: str, own_path: bool) -> PyTree:
    """Play block `block` of the study from its saved chunks, if any, to the horizon; return
    its runs' metrics on the host. A study of several blocks keeps each finished block's
    metrics under `root` (`checkpoint.save_block`) and its chunks in a folder of its own."""
    several = block.size < block.n_total
    folder = checkpoint.blocks_folder(root, block.size) if several and root else None
    block_fp = checkpoint.fingerprint(fingerprint, "block", block.b, block.size)
    if folder is not None:
        done = checkpoint.load_block(folder, block.b, like, block_fp, fingerprint)
        if done is not None:
            if report_done is not None:
                report_done(play.horizon * block.share)
            return done
    run_ids, lp = block_args(play, params, ids, pidx, block)
    carry = init_program(play, params, block.size)(play.seed, run_ids, lp, play.pp)
    carry = jax.device_put(carry, play.shard)  # split over the runs, as a saved one is loaded
    ckpt_dir = folder / f"block-{block.b:06d}" if folder is not None else root
    fp = block_fp if several else fingerprint
    carry, t_done = resume(ckpt_dir, fp, carry, play.shard, name, own_path)
    if report_done is not None and t_done:
        report_done(t_done * block.share)  # the rounds resumed from count as done
    chunk_c = None  # looked up once; the guarded one only for a last, partial chunk
    for start in range(t_done, play.horizon, play.chunk_size):  # the chunk after the resume
        guard = start + play.chunk_size > play.horizon
        if chunk_c is None or guard:
            chunk_c = chunk_program(play, params, block.size, guard)
        carry = chunk_c(carry, on_device(start, np.int32), play.horizon_a, play.ckpts,
                        play.seed, run_ids, lp, play.pp)
        if len(play.devices) > 1:  # XLA may hand a zero-size leaf back whole on each device
            carry = jax.device_put(carry, play.shard)  # as the chunk program takes it
        done = min(start + play.chunk_size, play.horizon)
        if ckpt_dir is not None:
            checkpoint.save(ckpt_dir, carry, done, fp)
        if report_done is not None:
            jax.block_until_ready(carry)
            report_done((done - start) * block.share)
    _, _, metric_state = carry  # (learner state, problem state, metrics), `program`
    ms = jax.tree.map(lambda a: a[:block.count], to_host(metric_state))
    if folder is not None:
        checkpoint.save_block(folder, block.b, ms, block_fp, fingerprint)
        shutil.rmtree(checkpoint.process_dir(ckpt_dir), ignore_errors=True)
    return ms


def resume(ckpt_dir: Path | None, fingerprint: str, carry, shard, name: str,
            own_path: bool):
    """The carry and round to play on from: the checkpoint in `ckpt_dir` (None: no
    checkpoints), or the fresh `carry` at round 0."""
    loaded = checkpoint.load(ckpt_dir, carry, fingerprint, shard) if ckpt_dir else None
    if loaded is None:
        return carry, 0
    if not own_path:
        checkpoint.note_resumed(name, loaded[1])
    return loaded


def play_blocks(*, play: Play, params: PyTree, layout: tuple, size: int, root, fingerprint: str,
                like: PyTree, report_done, name: str, own_path: bool,
                reduce: Callable[[PyTree], PyTree]) -> PyTree:
    """Every block of `size` elements of the flat batch `layout` (run ids, grid-point index),
    played in turn (`play_block`), its metrics passed through `reduce` (elementwise along the
    runs) on the host; the reduced rows of all blocks, joined along the runs: in memory for one
    block, else read-only memory maps of files written block by block (`oslr.spill`), so the
    host holds one block's rows at a time."""
    ids, pidx = layout
    n_total = len(ids)
    rows = None if size >= n_total else spill.Spill(n_total, root)
    try:
        for b, start in enumerate(range(0, n_total, size)):  # a loop: warnings count frames
            block = Block(b, start, min(size, n_total - start), size, n_total)
            got = reduce(play_block(play, block, params, ids, pidx, root, fingerprint, like,
                                    report_done, name, own_path))
            if rows is None:
                return got
            rows.write(start, got)
            del got
            memory.release_freed()  # the block's buffers, or the peak grows block by block
        assert rows is not None  # one block returned above
        return rows.read()
    finally:
        if rows is not None:
            rows.close()


__all__ = ["Block", "Play", "block_args", "block_size", "chunk_program", "init_program",
           "play_block", "play_blocks", "resume", "to_host"]
