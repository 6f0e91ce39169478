"""How much of a machine a study needs, from shapes alone (nothing compiled or allocated):
one run's carry (`run_bytes`), the comparator's Gram statistics (`stats_bytes`), and the check
that refuses a study whose state cannot fit on its devices (`check_fits`)."""

from __future__ import annotations

import os
from collections.abc import Sequence

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


def run_bytes(learner: Learner, problem: Problem, params: PyTree, problem_params: PyTree,
              n_ckpt: int, stats: bool) -> int:
    """Bytes of one run's carry (learner state, problem state, metrics) and params, from shapes
    alone (nothing is compiled or allocated): the shapes of the simulator's own batched `init`
    at one run, whose trace JAX keeps, so a repeated study pays for it once."""
    init_b, _ = program.batched_fns(learner, problem, n_ckpt, stats)
    lp = jax.tree.map(lambda a: jax.ShapeDtypeStruct((1,) + np.shape(a)[1:],
                                                     jnp.asarray(a).dtype), params)
    shapes = jax.eval_shape(init_b, jax.ShapeDtypeStruct((), jnp.uint32),
                            jax.ShapeDtypeStruct((1,), jnp.int32), lp, problem_params)
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
    gram = families.family(learner.family).gram_stats  # the comparator's statistics apply
    if comparator_k is None and gram and hasattr(problem_params, "k"):
        comparator_k = int(np.asarray(problem_params.k))
    n_ckpt = len(metrics.checkpoint_rounds(horizon, n_checkpoints))
    leaves = jax.tree.leaves(params)  # stacked over the grid: (G, ...) each
    n_total = (np.shape(leaves[0])[0] if leaves else 1) * n_runs
    if track_stats is None:
        track_stats = gram and comparator_k is not None and (
            stats_bytes(n_total, n_ckpt, problem.d) <= STATS_BYTES_LIMIT)
    stats = bool(track_stats and gram)
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


__all__ = ["STATS_BYTES_LIMIT", "check_fits", "run_bytes", "stats_bytes"]
