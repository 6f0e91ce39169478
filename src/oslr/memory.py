"""How much of a machine a study needs: from shapes alone (nothing compiled or allocated), one
run's carry (`run_bytes`) and results (`result_bytes`), the comparator's Gram statistics
(`stats_bytes`) and the check that refuses a study no block of runs makes fit (`check_fits`);
from the compiled programs (`program_bytes`, XLA's memory analysis), the runs per block that fit
in what a study may use (`fit_block`, `budget`)."""

from __future__ import annotations

import ctypes
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from oslr import families, metrics, program
from oslr.types import Learner, Problem, PyTree

#: Gram-statistics buffers (runs x checkpoints x d x d) above this size are not tracked.
STATS_BYTES_LIMIT = 512 * 2**20


def stats_bytes(n_total: int, n_ckpt: int, d: int) -> int:
    """Bytes of the comparator's d x d Gram statistics for `n_total` runs at `n_ckpt`
    checkpoints and the running one: float32 sums carry a compensation term of the same size
    (`metrics.compensated`), float64 sums none."""
    itemsize = np.dtype(jnp.result_type(float)).itemsize * (2 if metrics.compensated() else 1)
    return n_total * (n_ckpt + 1) * d**2 * itemsize


def tree_bytes(tree: PyTree) -> int:
    """Bytes of a pytree's arrays (or of their shapes: anything with a shape and a dtype)."""
    return int(sum(np.prod(a.shape) * np.dtype(a.dtype).itemsize for a in jax.tree.leaves(tree)))


def carry_shapes(learner: Learner, problem: Problem, params: PyTree, problem_params: PyTree,
             n_ckpt: int, stats: bool) -> tuple[PyTree, PyTree]:
    """(the shapes of one run's carry: learner state, problem state, metrics; one run's
    params) from the simulator's own batched `init` at one run, whose trace JAX keeps."""
    init_b, _ = program.batched_fns(learner, problem, n_ckpt, stats)
    lp = jax.tree.map(lambda a: jax.ShapeDtypeStruct((1,) + np.shape(a)[1:],
                                                     jnp.asarray(a).dtype), params)
    shapes = jax.eval_shape(init_b, jax.ShapeDtypeStruct((), jnp.uint32),
                            jax.ShapeDtypeStruct((1,), jnp.int32), lp, problem_params)
    return shapes, lp


def run_bytes(learner: Learner, problem: Problem, params: PyTree, problem_params: PyTree,
              n_ckpt: int, stats: bool) -> int:
    """Bytes of one run's carry (learner state, problem state, metrics) and params, from shapes
    alone (nothing is compiled or allocated)."""
    shapes, lp = carry_shapes(learner, problem, params, problem_params, n_ckpt, stats)
    return tree_bytes((shapes, lp))


def result_bytes(learner: Learner, problem: Problem, params: PyTree, problem_params: PyTree,
                 n_ckpt: int, stats: bool) -> int:
    """Bytes of one run's metrics (what the host keeps of every run once its block is done)."""
    shapes, _ = carry_shapes(learner, problem, params, problem_params, n_ckpt, stats)
    return tree_bytes(shapes[2])


#: the share of the memory available at the start that a study's block may plan to use: the
#: rest is for the results gathered on the host, the checkpoint's copy and XLA's own buffers
BUDGET_SHARE = 0.8


def _meminfo_available() -> int | None:
    """MemAvailable of /proc/meminfo (Linux), in bytes; None elsewhere."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _cgroup_available() -> int | None:
    """What the process's cgroup (v2) still allows (memory.max less memory.current); None
    when unlimited or unknown."""
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        used = Path("/sys/fs/cgroup/memory.current").read_text().strip()
    except OSError:
        return None
    if not limit.isdigit() or not used.isdigit():
        return None
    return max(0, int(limit) - int(used))


def _available_bytes(device) -> int | None:
    """Memory a study may use on `device` now: what the accelerator has left of its limit, or
    for a CPU what the host has available (MemAvailable, within the cgroup's limit; the
    physical memory where neither is known); None when unknown."""
    try:
        stats = device.memory_stats() or {}
    except Exception:  # noqa: BLE001 - not every backend reports
        stats = {}
    if stats.get("bytes_limit"):
        return int(stats["bytes_limit"]) - int(stats.get("bytes_in_use", 0))
    known = [b for b in (_meminfo_available(), _cgroup_available()) if b is not None]
    if known:
        return min(known)
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def budget(device, max_memory: int | None = None) -> int | None:
    """Bytes a block of runs may need on `device`: BUDGET_SHARE of what is available, and at
    most `max_memory` (a cap the user set); None when neither is known."""
    have = _available_bytes(device)
    caps = [int(BUDGET_SHARE * have)] if have is not None else []
    return min(caps + ([int(max_memory)] if max_memory is not None else []), default=None)


def program_bytes(compiled) -> int | None:
    """Bytes a compiled program needs on each device while it runs (XLA's memory analysis:
    arguments, outputs and temporaries, less what outputs reuse of arguments); None when the
    backend does not report it."""
    try:
        m = compiled.memory_analysis()
    except Exception:  # noqa: BLE001 - not every backend reports
        return None
    if m is None:
        return None
    return int(m.argument_size_in_bytes + m.output_size_in_bytes + m.temp_size_in_bytes
               - m.alias_size_in_bytes)


def fit_block(need: Callable[[int], int | None], n_total: int, n_dev: int, guess: int,
              have: int | None) -> int:
    """The runs per block (a multiple of the `n_dev` devices, at most `n_total` rounded up to
    one): all of them when `need(size)` (bytes on each device for a block of `size` runs, or
    None when unknown) is within `have`, else the largest size that is, found from `guess`
    runs per device by scaling the size by have / need (what a block needs grows in proportion
    to its runs) until it fits. Raises ValueError, in one line, when one run per device does
    not fit."""
    whole = -(-n_total // n_dev) * n_dev
    if have is None:
        return whole
    size = min(whole, max(1, guess) * n_dev)
    while True:
        bytes_ = need(size)
        if bytes_ is None or bytes_ <= have:
            return size
        if size == n_dev:
            raise ValueError(
                f"one run on each device needs about {bytes_ / 2**20:,.1f} MiB, more than the "
                f"{have / 2**20:,.1f} MiB this study may use; free memory, raise max_memory "
                f"(--max-memory) if you set it, or make each run smaller (fewer n_checkpoints, "
                f"a smaller d).")
        # strictly smaller each time, so this ends
        size = max(n_dev, min(size - n_dev, int(size * have / bytes_ * 0.95) // n_dev * n_dev))


def check_fits(learner: Learner, problem: Problem, params: PyTree, problem_params: PyTree,
               horizon: int, n_runs: int, n_checkpoints: int = 50,
               comparator_k: int | None = None, track_stats: bool | None = None,
               devices: Sequence[jax.Device] | None = None,
               max_memory: int | None = None,
               results_dir: str | os.PathLike | None = None) -> tuple[int | None, bool]:
    """Refuse (ValueError) a study of `n_runs` runs per grid point (`params` stacked over the
    grid) whose state cannot fit on `devices` (default: all of `jax.devices()`), or whose
    per-run results fit neither the host nor the disk of `results_dir` (where a study in blocks
    writes them, `oslr.spill`; default: the system's temporary folder), from shapes alone.
    Returns the comparator's k (default: the problem's k for a prediction learner) and
    whether the comparator's Gram statistics are kept (`track_stats`; default: when small)."""
    gram = families.family(learner.family).gram_stats  # the comparator's statistics apply
    if comparator_k is None and gram:
        comparator_k = problem.comparator_sparsity(problem_params)
    n_ckpt = len(metrics.checkpoint_rounds(horizon, n_checkpoints))
    leaves = jax.tree.leaves(params)  # stacked over the grid: (G, ...) each
    n_total = (np.shape(leaves[0])[0] if leaves else 1) * n_runs
    if track_stats is None:
        track_stats = gram and comparator_k is not None and (
            stats_bytes(n_total, n_ckpt, problem.d) <= STATS_BYTES_LIMIT)
    stats = bool(track_stats and gram)
    devices = list(devices) if devices is not None else jax.devices()
    _check_memory(learner, problem, params, problem_params, n_ckpt, stats, n_total,
                  len(devices), devices[0], max_memory, results_dir)
    return comparator_k, stats


def release_freed() -> bool:
    """Hand the host memory freed so far back to the system (glibc's `malloc_trim`): without
    it, memory freed by one block of runs stays with the process's allocator arenas and the
    peak grows block after block. False where the C library has no such call."""
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (AttributeError, OSError):
        return False
    trim(0)
    return True


def disk_free(where: str | os.PathLike | None) -> int:
    """Free bytes on the disk of the folder `where` (its nearest existing parent when it does
    not exist yet; the system's temporary folder when None)."""
    path = Path(tempfile.gettempdir() if where is None else where).absolute()
    while not path.exists():
        path = path.parent
    return shutil.disk_usage(path).free


def _check_memory(learner, problem, params, problem_params, n_ckpt: int, stats: bool,
                  n_total: int, n_dev: int, device, max_memory: int | None = None,
                  results_dir: str | os.PathLike | None = None) -> None:
    """Refuse, before anything is allocated or compiled, a study that no block of runs makes
    fit: one run on each device whose input and output carry (2x its state) exceed what a block
    may use (`budget`), or per-run results of all `n_total` runs beyond the host's memory (a
    study too large for it plays in blocks and writes them to disk, `oslr.spill`) and beyond
    the disk of `results_dir` too."""
    shapes, lp = carry_shapes(learner, problem, params, problem_params, n_ckpt, stats)
    per_run = tree_bytes((shapes, lp))  # run_bytes and result_bytes from one trace
    have = budget(device, max_memory)
    if have is not None and 2 * per_run > have:
        raise ValueError(
            f"one run of this study needs about {2 * per_run / 2**20:,.1f} MiB on each device "
            f"(its state, {per_run:,} bytes, twice), more than the {have / 2**20:,.1f} MiB it "
            f"may use on {device.platform}; free memory, raise max_memory (--max-memory) if "
            f"you set it, or make each run smaller (fewer n_checkpoints, a smaller d).")
    results = n_total * tree_bytes(shapes[2])
    host = budget(jax.devices("cpu")[0])
    where = tempfile.gettempdir() if results_dir is None else results_dir
    disk = int(disk_free(where) * BUDGET_SHARE)
    if host is not None and results > max(host, disk):
        raise ValueError(
            f"the per-run results of this study ({n_total:,} runs x grid points) need about "
            f"{results / 2**30:.1f} GiB, more than the {host / 2**30:.1f} GiB it may use on "
            f"the host and the {disk / 2**30:.1f} GiB it may use on the disk of {where}; run "
            f"fewer runs at a time (in Python: run_offset splits a study and the results "
            f"combine, or fewer n_checkpoints; with oslr run: fewer --runs now, more later "
            f"under another --seed, joined by `oslr merge`), or write to a larger disk.")


__all__ = ["BUDGET_SHARE", "STATS_BYTES_LIMIT", "budget", "carry_shapes", "check_fits",
           "disk_free", "fit_block", "program_bytes", "release_freed", "result_bytes",
           "run_bytes", "stats_bytes", "tree_bytes"]
