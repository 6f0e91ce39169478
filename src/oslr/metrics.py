"""Streaming metrics reduced inside the scan: memory is fixed, whatever the horizon.

A tracker keeps running sums per run and copies them into fixed-size buffers at `C` log-spaced
checkpoint rounds (docs/algorithms.md R1: 50 log-spaced points plus T). What it sums, and each
round's terms, are the family's (`oslr.families`): losses, rewards, pseudo-regret, the
comparator's statistics, queried features and over-budget rounds.

Precision: in float32 (the default) every running sum is compensated: the carry holds the sum and
its rounding error (TwoSum, an error-free transformation), both checkpointed, and `combine` adds
them in float64 on the host. The relative error of an n-round sum is then below n eps^2 (1e-8 at
n = 1e6, eps = 2^-24) instead of n eps for a plain float32 sum: enough for the cancellation
s - c^T G^-1 c of the exact comparator. Under jax_enable_x64 the sums are plain float64. The
result is the same whatever the chunk size (the compensation is part of the scan carry).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from oslr import families
from oslr.types import Array, float_dtype


def checkpoint_rounds(horizon: int, n: int = 50) -> np.ndarray:
    """Log-spaced round counts in [1, horizon], always ending with `horizon` (int64, sorted)."""
    pts = np.unique(np.round(np.logspace(0.0, np.log10(horizon), n)).astype(np.int64))
    return np.unique(np.concatenate([pts[(pts >= 1) & (pts <= horizon)], [horizon]]))


_float = float_dtype  # float64 under jax_enable_x64, float32 otherwise


def compensated() -> bool:
    """Whether running sums carry a rounding-error term (float32 mode)."""
    return _float() == jnp.float32


_LO = "_lo"  # suffix of the compensation term of a running sum


def init(family: str, d: int, n_ckpt: int, stats: bool) -> dict[str, dict[str, Array]]:
    """Zero running sums and checkpoint buffers for one run."""
    f = _float()
    run = {n: jnp.zeros(shape, f) for n, shape in families.family(family).sums(d, stats).items()}
    if compensated():
        run.update({n + _LO: jnp.zeros_like(v) for n, v in list(run.items())})
    ckpt = {n: jnp.zeros((n_ckpt,) + v.shape, f) for n, v in run.items()}
    return {"run": run, "ckpt": ckpt}


def two_sum(a: Array, b: Array) -> tuple[Array, Array]:
    """(s, e) with s = fl(a + b) and a + b = s + e exactly (Knuth's TwoSum, no branch)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def combine(sums: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Host side: add each compensation term to its sum in float64 (and drop the terms)."""
    out = {}
    for name, value in sums.items():
        if name.endswith(_LO):
            continue
        value = np.asarray(value)
        lo = sums.get(name + _LO)
        out[name] = value if lo is None else value.astype(np.float64) + np.asarray(lo, np.float64)
    return out


def _slot(t: Array, ckpts: Array) -> tuple[Array, Array]:
    """(buffer index, whether round t + 1 is a checkpoint)."""
    i = jnp.clip(jnp.searchsorted(ckpts, t + 1), 0, ckpts.shape[0] - 1)
    return i, ckpts[i] == t + 1


def conditional_writes() -> bool:
    """Whether checkpoint copies are made under a conditional (on a CPU; see `_write_slot`)."""
    return jax.default_backend() == "cpu"


def _write_slot(bufs: dict, values, i: Array, hit: Array) -> dict:
    """`bufs` with `values()[name]` written into slot i of `bufs[name]` where `hit`.

    On a CPU a conditional on `hit` (the round index, not batched over runs, so it stays a
    conditional under vmap): only the checkpoint rounds copy anything, and `values` (a thunk) is
    computed there only (a learner whose round is cheap, like PEGE's idle rounds, otherwise pays
    mostly for the copies; benchmarks/HISTORY.md has the timings).
    Elsewhere a select into the slot every round: on a GPU a conditional may cost a read of its
    predicate by the host each round. Both write the same values (tests/test_metrics.py).
    """
    def write(b):
        vals = values()
        return {n: buf.at[i].set(vals[n]) for n, buf in b.items()}

    if conditional_writes():
        return lax.cond(hit, write, lambda b: b, bufs)
    vals = values()
    return {n: buf.at[i].set(jnp.where(hit, vals[n], buf[i])) for n, buf in bufs.items()}


def update(
    family: str, mstate: dict, example: Any, record: Any, t: Array, ckpts: Array, stats: bool
) -> dict:
    """Add this round's increments; copy the sums into the buffer if round t+1 is a checkpoint."""
    inc = families.family(family).increments(example, record, stats)
    if compensated():
        run = {}
        for n, v in inc.items():
            s, e = two_sum(mstate["run"][n], v)
            run[n], run[n + _LO] = s, mstate["run"][n + _LO] + e
    else:
        run = {n: mstate["run"][n] + inc[n] for n in mstate["run"]}
    i, hit = _slot(t, ckpts)
    return dict(mstate, run=run, ckpt=_write_slot(mstate["ckpt"], lambda: run, i, hit))


def init_diagnostics(diagnostics, lstate: Any, lparams: Any, n_ckpt: int) -> dict:
    """Zero checkpoint buffers (n_ckpt,) for each value of the learner's `diagnostics`."""
    if diagnostics is None:
        return {}
    shapes = jax.eval_shape(diagnostics, lstate, lparams)
    return {name: jnp.zeros((n_ckpt,) + s.shape, _float()) for name, s in shapes.items()}


def record_diagnostics(diag: dict, diagnostics, lstate: Any, lparams: Any, t: Array,
                       ckpts: Array) -> dict:
    """Write the learner's diagnostics into their buffers if round t+1 is a checkpoint.

    t and the checkpoints are not batched over runs, so the `cond` skips the (possibly costly)
    diagnostics on every other round even under vmap.
    """
    if not diag:
        return diag
    i, hit = _slot(t, ckpts)
    f = _float()

    def values():
        return lax.cond(
            hit,
            lambda: {k: jnp.asarray(v).astype(f) for k, v in diagnostics(lstate, lparams).items()},
            lambda: {k: jnp.zeros(b.shape[1:], f) for k, b in diag.items()},
        )

    return _write_slot(diag, values, i, hit)

