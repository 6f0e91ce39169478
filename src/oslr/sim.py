"""The simulator: chunked `lax.scan` over rounds inside `jit(vmap(...))` over runs x grid points.

Randomness (STYLE.md): run r of a study with seed s uses `run_key = fold_in(key(s), r)`, split into
four streams (problem init, problem rounds, learner init, learner rounds); round t uses
`fold_in(stream, t)`. Hence:

* every learner and every grid point sees the same stream in run r (common random numbers);
* results do not depend on the chunk size, on how many runs share a batch, or on the device count;
* a study killed mid-way (at any moment: each checkpoint is one file replaced atomically, see
  `oslr.atomic`) resumes from its last saved chunk bit-for-bit.

Memory does not grow with the horizon: the scan carries the learner state, the problem state and
the streaming metrics of `oslr.metrics` (running sums plus fixed-size checkpoint buffers).
The runs axis is sharded over all devices of `jax.devices()` (or those given) with
`jax.sharding.NamedSharding`, so one code path serves one CPU, a multi-GPU host and, after
`jax.distributed.initialize()`, several processes or hosts: every process runs the same call,
computes the runs its devices hold, and receives the whole result (`to_host` gathers the
metrics); a checkpoint is kept per process (path/process-I-of-N, that process's runs). A
multi-process study equals the single-process one bit for bit (tests/test_distributed.py).
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import os
import re
import warnings
import zipfile
from pathlib import Path
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.experimental import multihost_utils
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from oslr import atomic, metrics
from oslr.checks import check_integral, check_positive_int, check_seed
from oslr.provenance import runtime
from oslr.result import SimResult, record
from oslr.rollout import (LEARNER_INIT, PROBLEM_INIT, exact_matmuls, init_run, play,
                           run_keys)
from oslr.types import NO_REQUIREMENTS, PREDICTION, Learner, Problem, PyTree

#: Gram-statistics buffers (runs x checkpoints x d x d) above this size are not tracked.
STATS_BYTES_LIMIT = 512 * 2**20


# --------------------------------------------------------------------------- params and grids


def stack_params(params_list: Sequence[PyTree]) -> PyTree:
    """Stack a list of params pytrees along a new leading (grid) axis."""
    return jax.tree.map(lambda *xs: jnp.stack([jnp.asarray(x) for x in xs]), *params_list)


def grid_params(base: PyTree, grid: dict[str, Sequence[Any]] | None,
                prepare: Any = None) -> tuple[list[dict], PyTree]:
    """Cartesian product of `grid` values applied to the dataclass `base`.

    Args:
      base: a params dataclass (e.g. from `oslr.make`).
      grid: field name -> values; None or {} gives the single point `base`.
      prepare: optional `prepare(point) -> point` applied to every grid point (for params that
        depend on others, e.g. an oracle subset that depends on k).

    Returns:
      labels: one dict per grid point (field -> value); params: the stacked params (G, ...).
    """
    grid = dict(grid or {})
    names = {f.name for f in dataclasses.fields(base)}
    for key, values in grid.items():
        if isinstance(values, (str, bytes)) or np.ndim(values) != 1 or len(values) == 0:
            raise ValueError(f"grid {key}={values!r} must be a non-empty list of values, e.g. "
                             f"{{{key!r}: [{values if np.ndim(values) == 0 else '...'}]}}.")
        if key not in names:
            raise ValueError(
                f"grid key {key!r} is not a parameter of this learner; parameters: "
                f"{', '.join(sorted(names))}."
            )
    labels, points = [], []
    for combo in itertools.product(*grid.values()) if grid else [()]:
        label = dict(zip(grid.keys(), combo))
        for k, v in label.items():
            if isinstance(v, (str, bytes)) or np.asarray(v).dtype.kind not in "biuf":
                raise ValueError(f"grid value {k}={v!r} must be a number.")
            check_integral(k, v, getattr(base, k).dtype, "grid: ")
        repl = {k: jnp.asarray(v, getattr(base, k).dtype) for k, v in label.items()}
        labels.append(label)
        point = dataclasses.replace(base, **repl)
        points.append(point if prepare is None else prepare(point))
    return labels, stack_params(points)


# --------------------------------------------------------------------------- results


# --------------------------------------------------------------------------- validation


def _check_finite(name: str, tree: PyTree) -> None:
    for path, leaf in jax.tree_util.tree_leaves_with_path(tree):
        a = np.asarray(leaf)
        if a.dtype.kind == "f" and not np.isfinite(a).all():
            where = jax.tree_util.keystr(path)
            raise ValueError(f"{name}{where} contains NaN or inf; give finite values.")


def _check_types(learner, problem, params, problem_params) -> None:
    """The arguments in the order `simulate(learner, problem, params, problem_params)` takes
    them (a swapped pair otherwise fails deep inside JAX with a dtype error)."""
    order = "simulate(learner, problem, params, problem_params, horizon=..., n_runs=...)"
    if isinstance(learner, Problem) and isinstance(problem, Learner):
        raise ValueError(f"the learner and the problem are swapped: {order}.")
    if not isinstance(learner, Learner):
        raise ValueError(f"the first argument must be a Learner (from oslr.make), got "
                         f"{type(learner).__name__}: {order}.")
    if not isinstance(problem, Problem):
        raise ValueError(f"the second argument must be a Problem (from oslr.make_problem), got "
                         f"{type(problem).__name__}: {order}.")
    for what, value in (("params", params), ("problem_params", problem_params)):
        if isinstance(value, (Learner, Problem)) or (
                isinstance(value, tuple) and any(isinstance(v, (Learner, Problem))
                                                 for v in value)):
            raise ValueError(f"{what} is a {type(value).__name__}, not a params pytree: "
                             f"`learner, params = oslr.make(...)` and `problem, problem_params "
                             f"= oslr.make_problem(...)` return pairs; {order}.")
        if dataclasses.is_dataclass(value):
            for f in dataclasses.fields(value):
                leaf = getattr(value, f.name)
                if isinstance(leaf, (list, tuple, dict)):
                    raise ValueError(
                        f"{what}.{f.name} is a Python {type(leaf).__name__}; each params field "
                        "holds one value (or an array stacked over grid points): to run "
                        f"several values, sweep them: oslr.sweep(learner, problem, params, "
                        f"problem_params, {{{f.name!r}: [...]}}, ...).")


def validate(learner: Learner, problem: Problem, params: PyTree, problem_params: PyTree,
             horizon: int, n_runs: int, seed: int = 0, comparator_k: int | None = None) -> None:
    """Raise ValueError with a clear message for bad input, before any tracing."""
    _check_types(learner, problem, params, problem_params)
    check_positive_int("horizon", horizon)
    check_positive_int("n_runs", n_runs)
    if horizon >= 2**31:
        raise ValueError(f"horizon={horizon} must be below 2^31 = {2**31} (rounds are counted "
                         "in int32); split a longer study in parts.")
    check_seed(seed)
    if comparator_k is not None and not (isinstance(comparator_k, (int, np.integer))
                                         and 1 <= comparator_k <= problem.d):
        raise ValueError(f"comparator_k={comparator_k!r} must satisfy 1 <= k <= d={problem.d}.")
    if not problem.supports(learner.family):
        raise ValueError(
            f"learner {learner.name!r} ({learner.family} family) cannot run on problem "
            f"{problem.name!r} (a {problem.kind} problem)."
        )
    if problem.n_rows is not None and horizon > problem.n_rows and not problem.cycle:
        raise ValueError(
            f"horizon {horizon} exceeds the {problem.n_rows} rows of dataset {problem.name!r}; "
            "lower the horizon or allow cycling (cycle=True / --cycle)."
        )
    (learner.requires or NO_REQUIREMENTS).check(problem, horizon, learner.name)
    _check_finite("learner params", params)
    _check_finite("problem params", problem_params)
    _check_params_read(learner, problem, params, problem_params)


def _check_params_read(learner: Learner, problem: Problem, params: PyTree,
                       problem_params: PyTree) -> None:
    """Params of a kind the learner or problem cannot read (a dict where it reads the fields of
    the dataclass `oslr.make` returns) in one line, not an AttributeError from inside a trace:
    the learner's `check` reads them, and params that are not a dataclass are read by an
    abstract trace of `init` (shapes only, no compile)."""
    def read_learner():
        if learner.check is not None:
            learner.check(params, problem.d)
        if not dataclasses.is_dataclass(params):
            jax.eval_shape(lambda: learner.init(run_keys(0, 0)[LEARNER_INIT], params))

    def read_problem():
        if not dataclasses.is_dataclass(problem_params):
            jax.eval_shape(lambda: problem.init(run_keys(0, 0)[PROBLEM_INIT], problem_params))

    for what, value, reader, read in (("params", params, f"learner {learner.name!r}",
                                       read_learner),
                                      ("problem_params", problem_params,
                                       f"problem {problem.name!r}", read_problem)):
        try:
            read()
        except AttributeError as err:
            raise ValueError(
                f"{what} is a {type(value).__name__} that {reader} cannot read ({err}): pass "
                f"the params that oslr.{'make' if what == 'params' else 'make_problem'} returns, "
                f"changing a value with dataclasses.replace({what}, name=value).") from None


# --------------------------------------------------------------------------- core


def make_run_fns(learner: Learner, problem: Problem, n_ckpt: int, stats: bool):
    """Per-run building blocks of `simulate` (unbatched, unjitted).

    Returns:
      init(seed, run_id, params, problem_params) -> carry, and
      chunk(carry, start, horizon, ckpts, seed, run_id, params, problem_params, length, unroll=1,
      guard=True) -> carry, which plays rounds start .. start + length - 1; with `guard`, rounds
      >= horizon leave the carry as is (a `lax.cond` on the round index, which is not batched over
      runs). Only `length`, `unroll` (rounds per iteration of the compiled loop, see `simulate`)
      and `guard` are static; seed, horizon and the checkpoint rounds are traced.

    A chunk that ends within the horizon needs no guard, and `simulate` compiles the guarded
    program only for a last, partial chunk: the guard costs every round either a select over the
    whole carry, which copies buffers that a round updates by a batched scatter (an SGD history:
    fpege-gd ran 3.3x slower with it), or a conditional (6-12% slower for learners with small
    carries), both measured on the 2-core CPU.
    """
    family = learner.family

    def init(seed, run_id, lp, pp):
        ls, ps = init_run(learner, problem, run_keys(seed, run_id), lp, pp)
        ms = metrics.init(family, problem.d, n_ckpt, stats)
        ms["diag"] = metrics.init_diagnostics(learner.diagnostics, ls, lp, n_ckpt)  # shapes only
        return ls, ps, ms

    def chunk(carry, start, horizon, ckpts, seed, run_id, lp, pp, length: int, unroll: int = 1,
              guard: bool = True):
        keys = run_keys(seed, run_id)

        def round_(c, t):
            ls, ps, ms = c
            ls_new, ps_new, example, record = play(learner, problem, keys, ls, ps, t, lp, pp)
            with exact_matmuls():  # the Gram sums and the learner's diagnostics too
                ms_new = metrics.update(family, ms, example, record, t, ckpts, stats)
                ms_new["diag"] = metrics.record_diagnostics(ms_new["diag"], learner.diagnostics,
                                                            ls_new, lp, t, ckpts)
            return ls_new, ps_new, ms_new

        def body(c, i):
            t = start + i
            if not guard:
                return round_(c, t), None
            return lax.cond(t < horizon, lambda: round_(c, t), lambda: c), None

        carry, _ = lax.scan(body, carry, jnp.arange(length, dtype=jnp.int32), unroll=unroll)
        return carry

    return init, chunk


_COMPILED: dict[tuple, tuple] = {}


def _batched_fns(learner: Learner, problem: Problem, n_ckpt: int, stats: bool):
    """jit(vmap(...)) of the run functions, cached per (learner, problem, shapes)."""
    key = (id(learner.step), id(learner.init), id(problem.sample), id(problem.init), n_ckpt,
           stats)
    if key not in _COMPILED:
        init_one, chunk_one = make_run_fns(learner, problem, n_ckpt, stats)
        init_b = jax.jit(jax.vmap(init_one, in_axes=(None, 0, 0, None)))
        chunk_b = jax.jit(
            jax.vmap(chunk_one, in_axes=(0, None, None, None, None, 0, 0, None, None, None, None)),
            static_argnums=(8, 9, 10),
        )
        # keep the learner and problem alive so that their ids stay unique
        _COMPILED[key] = (init_b, chunk_b, learner, problem)
    return _COMPILED[key][:2]


def clear_compiled() -> None:
    """Drop every compiled study program (this module's cache and JAX's). A process that compiles
    hundreds of distinct programs (the arena: one per learner, problem and budget) otherwise keeps
    them all mapped and runs out of memory mappings (vm.max_map_count) long before RAM."""
    _COMPILED.clear()
    jax.clear_caches()


def stats_bytes(n_total: int, n_ckpt: int, d: int) -> int:
    """Bytes of the comparator's d x d Gram statistics for `n_total` runs at `n_ckpt`
    checkpoints and the running one: float32 sums carry a compensation term of the same size
    (`metrics.compensated`), float64 sums none."""
    itemsize = np.dtype(jnp.zeros(()).dtype).itemsize * (2 if metrics.compensated() else 1)
    return n_total * (n_ckpt + 1) * d**2 * itemsize


def batch_layout(n_grid: int, n_runs: int, run_offset: int, n_dev: int
                 ) -> tuple[np.ndarray, np.ndarray]:
    """(run ids (B,) int32, grid-point index (B,)) of the flat batch: element i is grid point
    i // R, run run_offset + i % R, padded with copies of the last element to a multiple of the
    n_dev devices the runs axis is split over (the padding's results are dropped)."""
    run_ids = np.tile(np.arange(n_runs), n_grid) + run_offset
    pidx = np.repeat(np.arange(n_grid), n_runs)
    pad = (-(n_grid * n_runs)) % n_dev
    run_ids = np.concatenate([run_ids, np.repeat(run_ids[-1:], pad)]).astype(np.int32)
    return run_ids, np.concatenate([pidx, np.repeat(pidx[-1:], pad)])


def _fingerprint(*parts: Any) -> str:
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


#: Checkpoint layout: 2 = one block per device shard (per process under jax.distributed);
#: 3 = the same layout, written after the random streams moved (dataset replays keep permutation
#: keys, not orders; FTPSL draws its noise from raw bits); 4 = one crash-safe file per saved round
#: (`checkpoint-<round>.npz`: the carry's blocks and the metadata together). Older layouts (a
#: `carry.npz` beside a `meta.json`) are refused.
CHECKPOINT_FORMAT = 4


def to_host(tree: PyTree) -> PyTree:
    """NumPy copies of a pytree's arrays; an array spread over several processes
    (`jax.distributed`) is gathered from all of them, so every process gets the whole of it."""
    def fetch(a):
        if isinstance(a, jax.Array) and not a.is_fully_addressable:
            return np.asarray(multihost_utils.process_allgather(a, tiled=True))
        return np.asarray(a)

    return jax.tree.map(fetch, tree)


def _process_dir(path: Path) -> Path:
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


def _checkpoint_file(folder: Path, t_done: int) -> Path:
    return folder / f"checkpoint-{t_done:012d}.npz"


def _saved_rounds(folder: Path) -> list[int]:
    """The rounds of the checkpoint files in `folder`, ascending (temporary files ignored)."""
    if not folder.is_dir():
        return []
    return sorted(int(m.group(1)) for f in folder.iterdir()
                  if (m := re.fullmatch(r"checkpoint-(\d+)\.npz", f.name)))


def _blocks_digest(blocks: dict) -> str:
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


def _save_checkpoint(path: Path, carry: PyTree, t_done: int, fingerprint: str) -> None:
    """Save the carry after round `t_done` as one crash-safe file (`oslr.atomic`) holding the
    carry's blocks, their SHA-256, the study's fingerprint and the runtime, then drop all but
    the last KEEP_ROUNDS rounds' files. Under jax.distributed every process first waits until
    all have saved `t_done`, so that at any moment some round is saved by every process."""
    folder = _process_dir(path)
    folder.mkdir(parents=True, exist_ok=True)
    blocks = {}
    for i, leaf in enumerate(jax.tree.leaves(carry)):
        for shard in leaf.addressable_shards:  # the blocks of each leaf this process holds
            start, stop = _rows(shard.index, leaf.shape)
            blocks[f"{i}/{start}-{stop}"] = np.asarray(shard.data)
    meta = {"t_done": t_done, "fingerprint": fingerprint, "format": CHECKPOINT_FORMAT,
            "sha256": _blocks_digest(blocks), "runtime": runtime()}
    blocks["meta"] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
    atomic.write_atomic(_checkpoint_file(folder, t_done), lambda f: np.savez(f, **blocks))
    if jax.process_count() > 1:
        multihost_utils.sync_global_devices(f"oslr checkpoint {t_done}")
    for t in _saved_rounds(folder)[:-KEEP_ROUNDS]:
        _checkpoint_file(folder, t).unlink(missing_ok=True)


def _read_checkpoint(file: Path) -> tuple[dict, dict]:
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
    if "sha256" in meta and meta["sha256"] != _blocks_digest(arrays):
        raise ValueError("its arrays do not match their SHA-256")
    return meta, arrays


#: what every checkpoint of this format records; one without them is an older oslr's
CHECKPOINT_KEYS = ("t_done", "fingerprint", "format", "sha256", "runtime")


def _resume_round(folder: Path, root: Path) -> int | None:
    """The round to resume from: the last saved one (under jax.distributed, the last one that
    every process saved); None when nothing is saved."""
    rounds = _saved_rounds(folder)
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


def _load_checkpoint(path: Path, like: PyTree, fingerprint: str,
                     sharding: NamedSharding) -> tuple[PyTree, int] | None:
    """The saved carry with `like`'s shapes, its runs axis laid out by `sharding`, and its
    round; None when there is no checkpoint. A checkpoint that cannot be used as it is (another
    study's, an older layout, a damaged file) raises ValueError saying what to do."""
    root = Path(path)
    folder = _process_dir(root)
    fresh = f"delete {root} to start the study afresh"
    if any((folder / name).exists() for name in ("meta.json", "carry.npz")):
        raise ValueError(f"checkpoint in {folder} was written by an older oslr (another file "
                         f"layout); {fresh}.")
    t_done = _resume_round(folder, root)
    if t_done is None:
        return None
    # the newest round first; in a single process an older saved round when it is damaged
    older = [t for t in _saved_rounds(folder) if t < t_done] if jax.process_count() == 1 else []
    damaged = []
    for t in [t_done, *reversed(older)]:
        file = _checkpoint_file(folder, t)
        try:
            meta, arrays = _read_checkpoint(file)
        except ValueError as e:
            damaged.append(f"{file} is damaged ({e})")
            continue
        if meta.get("format") != CHECKPOINT_FORMAT:
            raise ValueError(f"checkpoint {file} was written by an older oslr (format "
                             f"{meta.get('format')}); {fresh}.")
        missing = [k for k in CHECKPOINT_KEYS if k not in meta]
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
                      f"(the rounds after it are played again).", RuntimeWarning, stacklevel=3)
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
                      "bit.", RuntimeWarning, stacklevel=3)
    for t in _saved_rounds(folder):  # rounds past the resumed one are played again
        if t > t_done:
            _checkpoint_file(folder, t).unlink(missing_ok=True)
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

    restored = [jax.make_array_from_callback(
        leaf.shape, sharding, lambda index, i=i, shape=leaf.shape: block(i, shape, index))
        for i, leaf in enumerate(jax.tree.leaves(like))]
    return jax.tree.unflatten(jax.tree.structure(like), restored), t_done


def _carry_layout(carry: PyTree) -> str:
    """The carry's tree structure and per-run leaf shapes and dtypes (a static option that
    changes the learner's state changes it), for the checkpoint fingerprint."""
    leaves = [(tuple(a.shape[1:]), str(a.dtype)) for a in jax.tree.leaves(carry)]
    return repr((jax.tree.structure(carry), leaves))


def simulate(
    learner: Learner,
    problem: Problem,
    params: PyTree,
    problem_params: PyTree,
    *,
    horizon: int,
    n_runs: int,
    seed: int = 0,
    grid: list[dict] | None = None,
    chunk_size: int | None = None,
    n_checkpoints: int = 50,
    comparator_k: int | None = None,
    comparator_radius: float | None = None,
    track_stats: bool | None = None,
    progress: bool | Callable[[int], Any] = False,
    checkpoint_path: str | os.PathLike | None = None,
    run_offset: int = 0,
    devices: Sequence[jax.Device] | None = None,
    unroll: int = 1,
) -> SimResult:
    """Run `n_runs` independent runs of `learner` on `problem` for every grid point.

    Args:
      learner, problem: from `oslr.make` / `oslr.make_problem`.
      params: learner params; a single point, or stacked (G, ...) when `grid` is given.
      problem_params: problem params (broadcast to every run).
      horizon: rounds T.
      n_runs: independent runs R per grid point (run r uses `fold_in(key(seed), run_offset + r)`).
      seed: root seed.
      grid: G label dicts matching the leading axis of `params` (see `grid_params`).
      chunk_size: rounds per jitted chunk (progress and checkpoints happen between chunks;
        default 1000). Where it does not divide the horizon, the last, partial chunk compiles a
        second program that stops at the horizon (`make_run_fns`).
      n_checkpoints: log-spaced checkpoints for the regret curves.
      comparator_k: sparsity of the F1 comparator (default: the problem's `k` param if any).
      comparator_radius: l2 bound of the F1 comparator (None = unbounded).
      track_stats: keep the F1 Gram statistics for the exact comparator (default: when small).
      progress: True: a tqdm bar over chunks; a function: called with the rounds each finished
        chunk completed (a study-wide bar or log, e.g. `oslr run --progress jsonl`).
      checkpoint_path: folder to save the carry after each chunk and resume from. Each save
        is one file written crash-safely (`oslr.atomic`): a study killed at any moment and
        called again the same way (any chunk size) resumes from its last saved chunk and ends
        bit-identical to an uninterrupted one; a checkpoint of other settings (learner,
        params, problem, horizon, seed, runs, unroll, checkpoints, static options) or a
        damaged one is refused with a ValueError saying so.
      run_offset: index of the first run (to split a study across processes).
      devices: devices to shard the runs axis over (default: all of `jax.devices()`).
      unroll: rounds per iteration of the compiled loop (`lax.scan`'s unroll). On a GPU a round
        of a few thousand runs costs about 100 us of kernel launches and loop overhead whatever
        the learner; unrolling U rounds lets XLA fuse across them and pays the loop's overhead
        once per U rounds (benchmarks/RESULTS-gpu.md measures it). Compile time grows with U;
        on a CPU it rarely helps. The numbers agree with unroll=1 to float rounding.

    Returns:
      A `SimResult`.
    """
    _check_types(learner, problem, params, problem_params)  # before anything touches them
    if grid is None:
        grid = [{}]
        params = stack_params([params])
    n_grid = len(grid)
    lead = {np.shape(x)[0] if np.ndim(x) else None for x in jax.tree.leaves(params)}
    if lead != {n_grid}:
        raise ValueError(f"params must have a leading grid axis of size {n_grid}; got {lead}.")
    validate(learner, problem, params, problem_params, horizon, n_runs, seed, comparator_k)
    horizon, n_runs = int(horizon), int(n_runs)
    if isinstance(run_offset, bool) or not isinstance(run_offset, (int, np.integer)) or not (
            0 <= run_offset and run_offset + n_runs <= 2**31):
        raise ValueError(f"run_offset={run_offset!r} must be an integer >= 0 with run_offset + "
                         f"n_runs <= 2^31 (run ids are int32); got n_runs={n_runs}.")
    ckpts = metrics.checkpoint_rounds(horizon, n_checkpoints)
    chunk_size = min(horizon, check_positive_int("chunk_size", 1000 if chunk_size is None
                                                 else chunk_size))
    unroll = min(chunk_size, check_positive_int("unroll", unroll))

    family = learner.family
    devices = list(devices) if devices is not None else jax.devices()
    comparator_k, stats = check_fits(learner, problem, params, problem_params, horizon, n_runs,
                                     n_checkpoints, comparator_k, track_stats, devices)
    n_total = n_grid * n_runs

    run_ids, pidx = batch_layout(n_grid, n_runs, run_offset, len(devices))
    lp = jax.tree.map(lambda a: jnp.asarray(a)[pidx], params)
    mesh = Mesh(np.array(devices), ("runs",))
    shard = NamedSharding(mesh, PartitionSpec("runs"))
    replicated = NamedSharding(mesh, PartitionSpec())
    run_ids_d = jax.device_put(jnp.asarray(run_ids), shard)
    lp = jax.device_put(lp, shard)
    pp = jax.device_put(problem_params, replicated)

    init_b, chunk_b = _batched_fns(learner, problem, len(ckpts), stats)
    seed_a = jnp.asarray(seed, jnp.uint32)
    horizon_a = jnp.asarray(horizon, jnp.int32)
    ckpts_a = jnp.asarray(ckpts, jnp.int32)
    carry = init_b(seed_a, run_ids_d, lp, pp)
    t_done = 0
    fingerprint = _fingerprint(
        learner.name, repr(learner.info), learner.options or {}, problem.name, problem.d, horizon, seed, run_offset,
        n_total, stats, n_checkpoints, unroll, params, problem_params, repr(problem.info),
        _carry_layout(carry),
    )
    ckpt_dir = Path(checkpoint_path) if checkpoint_path is not None else None
    if ckpt_dir is not None:
        loaded = _load_checkpoint(ckpt_dir, carry, fingerprint, shard)
        if loaded is not None:
            carry, t_done = loaded

    starts = range(t_done, horizon, chunk_size)
    bar = None
    if callable(progress):
        report_done = progress
        if t_done:
            report_done(t_done)  # the rounds resumed from count as done
    elif progress:
        try:  # a widget bar in notebooks when ipywidgets is there, a text bar otherwise
            import ipywidgets  # noqa: F401
            from tqdm.auto import tqdm
        except ImportError:
            from tqdm import tqdm

        bar = tqdm(total=horizon, initial=t_done, unit="round", desc=f"{learner.name}",
                   leave=False)
        report_done = bar.update
    else:
        report_done = None
    for start in starts:
        carry = chunk_b(carry, jnp.asarray(start, jnp.int32), horizon_a, ckpts_a, seed_a,
                        run_ids_d, lp, pp, chunk_size, unroll, start + chunk_size > horizon)
        done = min(start + chunk_size, horizon)
        if ckpt_dir is not None:
            _save_checkpoint(ckpt_dir, carry, done, fingerprint)
        if report_done is not None:
            jax.block_until_ready(carry)
            report_done(done - start)
    if bar is not None:
        bar.close()

    ms = jax.tree.map(lambda a: a[:n_total], to_host(carry[2]))

    def shape(a: np.ndarray) -> np.ndarray:
        return a.reshape((n_grid, n_runs) + a.shape[1:])

    final = {**{k: shape(v) for k, v in metrics.combine(ms["run"]).items()},
             **{k: shape(v)[:, :, -1] for k, v in ms["diag"].items()}}
    _warn_diagnostics(learner, final)
    info = dict(problem.info or {})
    info.update(learner.info or {})
    info.update(devices=[str(d) for d in devices], d=problem.d)
    result = SimResult(
        learner=learner.name,
        problem=problem.name,
        family=family,
        horizon=horizon,
        n_runs=n_runs,
        seed=seed,
        ckpts=ckpts,
        grid=list(grid),
        final=final,
        curves={k: shape(v) for k, v in {**metrics.combine(ms["ckpt"]), **ms["diag"]}.items()},
        params=jax.tree.map(np.asarray, params),
        run_offset=run_offset,
        comparator_k=comparator_k if stats else None,
        comparator_radius=comparator_radius,
        realizable=problem.realizable,
        info=info,
    )
    record(result)
    return result


def run_bytes(learner: Learner, problem: Problem, params: PyTree, problem_params: PyTree,
              n_ckpt: int, stats: bool) -> int:
    """Bytes of one run's carry (learner state, problem state, metrics) and params, from shapes
    alone (nothing is compiled or allocated): the shapes of the simulator's own batched `init`
    at one run, whose trace JAX keeps, so a repeated study pays for it once."""
    init_b, _ = _batched_fns(learner, problem, n_ckpt, stats)
    lp = jax.tree.map(lambda a: jax.ShapeDtypeStruct((1,) + np.shape(a)[1:],
                                                     jnp.asarray(a).dtype), params)
    shapes = jax.eval_shape(init_b, jnp.uint32(0), jax.ShapeDtypeStruct((1,), jnp.int32), lp,
                            problem_params)
    leaves = jax.tree.leaves(shapes) + jax.tree.leaves(lp)
    return int(sum(np.prod(a.shape) * np.dtype(a.dtype).itemsize for a in leaves))


def _available_bytes(device) -> int | None:
    """Memory a study may use on `device`: the accelerator's limit, or the host's physical
    memory for a CPU; None when unknown."""
    try:
        stats = device.memory_stats() or {}
    except Exception:  # noqa: BLE001 - not every backend reports
        stats = {}
    if stats.get("bytes_limit"):
        return int(stats["bytes_limit"])
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def check_fits(learner: Learner, problem: Problem, params: PyTree, problem_params: PyTree,
               horizon: int, n_runs: int, n_checkpoints: int = 50,
               comparator_k: int | None = None, track_stats: bool | None = None,
               devices: Sequence[jax.Device] | None = None) -> tuple[int | None, bool]:
    """Refuse (ValueError) a study of `n_runs` runs per grid point (`params` stacked over the
    grid) whose state cannot fit on `devices` (default: all of `jax.devices()`), from shapes
    alone. Returns the comparator's k (default: the problem's k for a prediction learner) and
    whether the comparator's Gram statistics are kept (`track_stats`; default: when small)."""
    family = learner.family
    if comparator_k is None and family == PREDICTION and hasattr(problem_params, "k"):
        comparator_k = int(np.asarray(problem_params.k))
    n_ckpt = len(metrics.checkpoint_rounds(horizon, n_checkpoints))
    leaves = jax.tree.leaves(params)  # stacked over the grid: (G, ...) each
    n_total = (np.shape(leaves[0])[0] if leaves else 1) * n_runs
    if track_stats is None:
        track_stats = family == PREDICTION and comparator_k is not None and (
            stats_bytes(n_total, n_ckpt, problem.d) <= STATS_BYTES_LIMIT)
    stats = bool(track_stats and family == PREDICTION)
    devices = list(devices) if devices is not None else jax.devices()
    _check_memory(learner, problem, params, problem_params, n_ckpt, stats, n_total,
                  len(devices), devices[0])
    return comparator_k, stats


def _check_memory(learner, problem, params, problem_params, n_ckpt: int, stats: bool,
                  n_total: int, n_dev: int, device) -> None:
    """Refuse, before anything is allocated or compiled, a study whose carry cannot fit: a
    chunk holds its input and output carry (2x the state) on each device."""
    need = 2 * run_bytes(learner, problem, params, problem_params, n_ckpt, stats) * (
        -(-n_total // n_dev))
    have = _available_bytes(device)
    if have is not None and need > have:
        raise ValueError(
            f"this study needs about {need / 2**30:.1f} GiB on each device for its state "
            f"({n_total:,} runs x grid points, {need // max(1, 2 * -(-n_total // n_dev)):,} bytes "
            f"a run, twice), more than the {have / 2**30:.1f} GiB of {device.platform}; run fewer "
            f"runs at a time (in Python: run_offset splits a study and the results combine, or "
            f"fewer n_checkpoints; with oslr run: fewer --runs now, more later under another "
            f"--seed, joined by `oslr merge`).")


def _warn_diagnostics(learner: Learner, final: dict) -> None:
    """Warn about every diagnostic named in `learner.info["warn_if_nonzero"]` (name -> what it
    counts) that is non-zero at the horizon in some run (a solver failure a study must not hide)."""
    for name, what in (learner.info or {}).get("warn_if_nonzero", {}).items():
        values = np.asarray(final.get(name, 0.0))
        if np.any(values > 0):
            warnings.warn(f"{learner.name}: {int(values.sum())} {what} ({int((values > 0).sum())}"
                          f" of {values.size} runs; diagnostic {name!r}).", RuntimeWarning,
                          stacklevel=3)


def sweep(learner: Learner, problem: Problem, params: PyTree, problem_params: PyTree,
          grid: dict[str, Sequence[Any]], **kwargs) -> SimResult:
    """Simulate every point of the cartesian `grid` of learner params x `n_runs` seeds at once.

    Example:
      res = sweep(learner, problem, params, pp, {"k": [2, 4, 8], "eta": [0.01, 0.1]},
                  horizon=5000, n_runs=1000)
      res.summary_table()   # labelled pandas table

    Args:
      grid: params field -> values (see `grid_params`); other keyword arguments go to `simulate`.
    """
    labels, stacked = grid_params(params, grid)
    return simulate(learner, problem, stacked, problem_params, grid=labels, **kwargs)

