"""The simulator: chunked `lax.scan` over rounds inside `jit(vmap(...))` over runs x grid points.

Randomness (docs/algorithms.md section 0): run r of a study with seed s uses
`run_key = fold_in(key(s), r)`, split into four streams (problem init, problem rounds, learner
init, learner rounds); round t uses `fold_in(stream, t)`. Hence:

* every learner and every grid point sees the same stream in run r (common random numbers);
* results do not depend on the chunk size, on how many runs share a batch, or on the device count;
* a study killed mid-way (at any moment: each checkpoint is one file replaced atomically,
  `oslr.checkpoint`) resumes from its last saved chunk bit-for-bit.

`simulate` checks its inputs (`oslr.validation`) and that the study fits (`oslr.memory`), sizes
its blocks of runs and plays them (`oslr.blocks`): each block's runs placed on the devices, its
compiled chunks (`oslr.program`) played one after another, the carry saved after each
(`oslr.checkpoint`), its per-run results gathered on the host (several blocks: written to disk,
`oslr.spill`); then it collects the result.

Memory does not grow with the horizon: the scan carries the learner state, the problem state and
the streaming metrics of `oslr.metrics` (running sums plus fixed-size checkpoint buffers).
The runs axis is sharded over all devices of `jax.devices()` (or those given) with
`jax.sharding.NamedSharding`, so one code path serves one CPU, a multi-GPU host and, after
`jax.distributed.initialize()`, several processes or hosts: every process runs the same call,
computes the runs its devices hold, and receives the whole result (`oslr.blocks.to_host` gathers the
metrics); a checkpoint is kept per process (path/process-I-of-N, that process's runs). A
multi-process study equals the single-process one bit for bit (tests/test_distributed.py).
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import warnings
from pathlib import Path
from typing import Any, Callable, Mapping, NamedTuple, Sequence

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from oslr import blocks, checkpoint, cpus, memory, metrics, program
from oslr.checks import check_integral, check_positive_int, parse_bytes
from oslr.memory import check_fits
from oslr.result import SimResult, record
from oslr.types import Learner, Problem, PyTree, on_device
from oslr.validation import check_types, validate

# --------------------------------------------------------------------------- params and grids


def stack_params(params_list: Sequence[PyTree]) -> PyTree:
    """Stack a list of params pytrees along a new leading (grid) axis (on the host: a
    transfer, no program to compile)."""
    return jax.tree.map(lambda *xs: on_device(np.stack([np.asarray(x) for x in xs])),
                        *params_list)


def grid_params(base: PyTree, grid: Mapping[str, Sequence[Any]] | None,
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
        repl = {k: on_device(v, getattr(base, k).dtype) for k, v in label.items()}
        labels.append(label)
        point = dataclasses.replace(base, **repl)
        points.append(point if prepare is None else prepare(point))
    return labels, stack_params(points)


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


def simulate(learner: Learner, problem: Problem, params: PyTree, problem_params: PyTree, *,
             horizon: int, n_runs: int, seed: int = 0, grid: list[dict] | None = None,
             chunk_size: int | None = None, n_checkpoints: int = 50,
             comparator_k: int | None = None, comparator_radius: float | None = None,
             track_stats: bool | None = None, progress: bool | Callable[[int], Any] = False,
             checkpoint_path: str | os.PathLike | None = None, run_offset: int = 0,
             devices: Sequence[jax.Device] | None = None, unroll: int = 1,
             max_memory: int | str | None = None) -> SimResult:
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
      checkpoint_path: folder to save the carry after each chunk and resume from
        (`oslr.checkpoint`): a study killed at any moment and called again the same way (any
        chunk size) ends bit-identical to an uninterrupted one; a checkpoint of other settings
        or a damaged one is refused with a ValueError saying so. Inside
        `oslr.checkpoint.keep_studies(root)` a study given none gets one under root.
      run_offset: index of the first run (to split a study across processes).
      devices: devices to shard the runs axis over (default: all of `jax.devices()`).
      unroll: rounds per iteration of the compiled loop (`lax.scan`'s unroll): on a GPU it
        pays the loop's and the launches' overhead once per U rounds (benchmarks/RESULTS-gpu.md);
        compile time grows with U. The numbers agree with unroll=1 to float rounding.
      max_memory: bytes the study may use on each device, or a size such as "4G" (default:
        80% of what is available when it starts). A study whose compiled programs (XLA's
        memory analysis of its init and chunk) need more is played in blocks of runs that fit
        (`oslr.blocks`), one after another, with the same results bit for bit; with
        checkpoints, each finished block is saved and a killed study resumes at its block and
        chunk. The per-run results of a study in blocks are written to disk block by block
        (`oslr.spill`: in `checkpoint_path` or the `keep_studies` root, else the system's
        temporary folder) and the result's `final` and `curves` are read-only memory maps of
        them.

    Returns:
      A `SimResult`.
    """
    check_types(learner, problem, params, problem_params)  # before anything touches them
    cpus.from_env()  # before JAX's backend starts
    if grid is None:
        grid = [{}]
        params = stack_params([params])
    what = _checked(Simulated(learner, problem, params, problem_params, horizon, n_runs, seed,
                              list(grid), n_checkpoints, comparator_k, comparator_radius,
                              track_stats, run_offset))
    return _simulate(what, _execution(what, chunk_size, unroll, devices, max_memory,
                                      checkpoint_path, progress))


class Simulated(NamedTuple):
    """What `simulate` simulates (the learner on the problem, with which params, how long, how
    many runs from which seed, which regret quantities): `simulate`'s arguments of these
    names, params stacked over the `grid`'s points."""

    learner: Learner
    problem: Problem
    params: PyTree
    problem_params: PyTree
    horizon: int
    n_runs: int
    seed: int
    grid: list[dict]
    n_checkpoints: int
    comparator_k: int | None
    comparator_radius: float | None
    track_stats: bool | None
    run_offset: int


class Execution(NamedTuple):
    """How `simulate` plays it (none of it moves a number; `unroll` to float rounding), checked
    (`_execution`): rounds per chunk and per loop iteration (within the horizon), the devices,
    the memory in bytes (None: what is available), the checkpoints' folder, the progress."""

    chunk_size: int
    unroll: int
    devices: list
    max_memory: int | None
    checkpoint_path: str | os.PathLike | None
    progress: bool | Callable[[int], Any]


def _simulate(what: Simulated, how: Execution) -> SimResult:
    """`simulate` of checked records (`_checked`): the programs, the blocks, the result."""
    learner, problem, params, pp = what.learner, what.problem, what.params, what.problem_params
    ckpts = metrics.checkpoint_rounds(what.horizon, what.n_checkpoints)
    comparator_k, stats = check_fits(
        learner, problem, params, pp, what.horizon, what.n_runs, what.n_checkpoints,
        what.comparator_k, what.track_stats, how.devices, how.max_memory,
        how.checkpoint_path or checkpoint.kept_root())
    n_total = len(what.grid) * what.n_runs
    play = _play(what, how, ckpts, stats)
    shapes, lp1 = memory.carry_shapes(learner, problem, params, pp, len(ckpts), stats)
    fingerprint = checkpoint.Identity(
        learner=learner.name, learner_info=repr(learner.info), options=learner.options or {},
        problem=problem.name, d=problem.d, horizon=what.horizon, seed=what.seed,
        run_offset=what.run_offset, n_total=n_total, stats=stats,
        n_checkpoints=what.n_checkpoints, unroll=how.unroll, params=params, problem_params=pp,
        problem_info=repr(problem.info), carry=checkpoint.carry_layout(shapes)).digest()
    root = (Path(how.checkpoint_path) if how.checkpoint_path is not None
            else checkpoint.study_path(fingerprint))
    size = blocks.block_size(play, params, n_total, root, how.max_memory,
                             memory.tree_bytes((shapes, lp1)))  # = memory.run_bytes
    report_done, bar = _progress(how.progress, learner.name, what.horizon)
    flat = blocks.play_blocks(
        play=play, params=params, layout=batch_layout(len(what.grid), what.n_runs,
                                                      what.run_offset, 1),
        size=size, root=root, fingerprint=fingerprint, like=shapes[2], report_done=report_done,
        name=learner.name, own_path=how.checkpoint_path is not None, reduce=_flat_results)
    if bar is not None:
        bar.refresh()  # the last chunk may have come within tqdm's minimum interval
        bar.close()
    return _result(what, how, flat, ckpts, comparator_k if stats else None, size)


def _result(what: Simulated, how: Execution, flat: dict, ckpts: np.ndarray,
            comparator_k: int | None, size: int) -> SimResult:
    """The `SimResult` of the played blocks' rows `flat` (recorded for `oslr.result`'s
    listeners), diagnostics warned about."""
    learner, problem = what.learner, what.problem
    final, curves = _per_point(flat, len(what.grid), what.n_runs)
    _warn_diagnostics(learner, final)
    info = {**(problem.info or {}), **(learner.info or {}),
            "devices": [str(d) for d in how.devices], "d": problem.d}
    if size < len(what.grid) * what.n_runs:
        info["block_runs"] = size
    result = SimResult(
        learner=learner.name, problem=problem.name, family=learner.family, horizon=what.horizon,
        n_runs=what.n_runs, seed=what.seed, ckpts=ckpts, grid=list(what.grid), final=final,
        curves=curves,
        params=jax.tree.map(np.asarray, what.params), run_offset=what.run_offset,
        comparator_k=comparator_k, comparator_radius=what.comparator_radius,
        realizable=problem.realizable, info=info)
    record(result)
    return result


def _play(what: Simulated, how: Execution, ckpts: np.ndarray, stats: bool) -> blocks.Play:
    """What every block of the study plays with (`oslr.blocks.Play`): the programs, the runs
    split over the devices, the problem's params on every one of them."""
    learner, problem = what.learner, what.problem
    init_b, chunk_b = program.batched_fns(learner, problem, len(ckpts), stats)
    mesh = Mesh(np.array(how.devices), ("runs",))
    return blocks.Play(
        init_b, chunk_b, NamedSharding(mesh, PartitionSpec("runs")),
        on_device(what.seed, np.uint32), on_device(what.horizon, np.int32),
        on_device(ckpts, np.int32),
        jax.device_put(what.problem_params, NamedSharding(mesh, PartitionSpec())),
        what.horizon, how.chunk_size, how.unroll, how.devices,
        program.identity(learner, problem, len(ckpts), stats), {})


def _flat_results(ms: dict) -> dict:
    """{"final": ..., "curves": ...} of the gathered metrics `ms`, each (n, ...) over the flat
    batch's elements: the running sums at the horizon and the diagnostics' last checkpoint; the
    checkpoint buffers and every diagnostic's buffer."""
    last = {k: v[:, -1] for k, v in ms["diag"].items()}
    return {"final": {**metrics.combine(ms["run"]), **last},
            "curves": {**metrics.combine(ms["ckpt"]), **ms["diag"]}}


def _per_point(flat: dict, n_grid: int, n_runs: int) -> tuple[dict, dict]:
    """(final values, curves) of `_flat_results`, each reshaped to (n_grid, n_runs, ...)."""
    def shape(a: np.ndarray) -> np.ndarray:
        return a.reshape((n_grid, n_runs) + a.shape[1:])

    return ({k: shape(v) for k, v in flat["final"].items()},
            {k: shape(v) for k, v in flat["curves"].items()})


def _checked(what: Simulated) -> Simulated:
    """`simulate`'s record checked (`validate`, the grid axis, the run ids), its counts as
    ints."""
    n_grid = len(what.grid)
    lead = {np.shape(x)[0] if np.ndim(x) else None for x in jax.tree.leaves(what.params)}
    if lead != {n_grid}:
        raise ValueError(f"params must have a leading grid axis of size {n_grid}; got {lead}.")
    validate(what.learner, what.problem, what.params, what.problem_params, what.horizon,
             what.n_runs, what.seed, what.comparator_k)
    horizon, n_runs, run_offset = int(what.horizon), int(what.n_runs), what.run_offset
    if isinstance(run_offset, bool) or not isinstance(run_offset, (int, np.integer)) or not (
            0 <= run_offset and run_offset + n_runs <= 2**31):
        raise ValueError(f"run_offset={run_offset!r} must be an integer >= 0 with run_offset + "
                         f"n_runs <= 2^31 (run ids are int32); got n_runs={n_runs}.")
    return what._replace(horizon=horizon, n_runs=n_runs)


def _execution(what: Simulated, chunk_size: int | None, unroll: int,
               devices: Sequence[jax.Device] | None, max_memory: int | str | None,
               checkpoint_path: str | os.PathLike | None, progress) -> Execution:
    """`simulate`'s execution arguments checked: the chunk (default 1000) and the unroll
    within the horizon, the devices listed (default: all of JAX's), the memory in bytes."""
    chunk = min(what.horizon, check_positive_int("chunk_size", 1000 if chunk_size is None
                                                 else chunk_size))
    return Execution(chunk, min(chunk, check_positive_int("unroll", unroll)),
                     list(devices) if devices is not None else jax.devices(),
                     parse_bytes("max_memory", max_memory), checkpoint_path, progress)


def _progress(progress, name: str, horizon: int):
    """(a function called with the rounds each chunk completed, or None; the tqdm bar to close,
    or None) for `simulate`'s `progress`: a callable as given, True a bar (a notebook widget
    where ipywidgets is installed), False nothing. A study played in blocks reports each
    block's rounds times its share of the runs, so the rounds add up to the horizon."""
    if callable(progress):
        return progress, None
    if not progress:
        return None, None
    try:  # a widget bar in notebooks when ipywidgets is there, a text bar otherwise
        import ipywidgets  # noqa: F401
        from tqdm.auto import tqdm
    except ImportError:
        from tqdm import tqdm

    bar = tqdm(total=horizon, unit="round", desc=f"{name}", leave=False)
    return bar.update, bar


def _warn_diagnostics(learner: Learner, final: dict) -> None:
    """Warn about every diagnostic named in `learner.warn_if_nonzero` (name -> what it counts)
    that is non-zero at the horizon in some run (a solver failure a study must not hide)."""
    for name, what in (learner.warn_if_nonzero or {}).items():
        values = np.asarray(final.get(name, 0.0))
        if np.any(values > 0):
            warnings.warn(f"{learner.name}: {int(values.sum())} {what} ({int((values > 0).sum())}"
                          f" of {values.size} runs; diagnostic {name!r}).", RuntimeWarning,
                          stacklevel=3)


def sweep(learner: Learner, problem: Problem, params: PyTree, problem_params: PyTree,
          grid: Mapping[str, Sequence[Any]], **kwargs) -> SimResult:
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
