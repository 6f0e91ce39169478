"""What a skilled JAX user writes instead of oslr: the headline studies as one plain
`jit(lax.scan)` over rounds with every run batched along a leading axis, no harness (issue 36's
anchors; `benchmarks.anchor_ratios` times them in turn with oslr's program).

Each follows the stream law, the learner and the running metrics of its `benchmarks.anchors`
NumPy side (that module's docstring says what is computed per run-round), with oslr's key
discipline: run r has its own key, folded with the round t for that round's draws (so a run's
numbers do not depend on how many runs are batched). Metrics are running sums copied into 50
log-spaced checkpoint buffers inside the scan, as oslr does; the sums are plain float32 (oslr
adds a compensation term). Products are written elementwise (no matrix product, so no precision
to state on a GPU).

  ogd-full on sparse-linear (d = 64, k = 3): projected OGD, eta = 0.5 / d / sqrt(t + 1).
  linucb on linear-bandit (d = 20, K = 10 unit arms): the O(K d) Sherman-Morrison form.
  ftpsl on a9a (d = 123, k = 10, M = 10 resamples): eq. (1) rates, Laplace perturbations by the
    inverse CDF of uniforms, top-k by `lax.top_k`, each run's permutation of the rows drawn
    once (`jax.random.permutation`, runs x n int32 in memory).

`plain_batched(name, runs, horizon, seed)` returns a `call()` that runs the whole study (compiled
on the first call) and returns its final metrics (dict of (runs, ...) NumPy arrays, and "ckpt").
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from benchmarks.anchors import BANDIT_D, FTPSL_K, FTPSL_M, K_ARMS, OGD_D, ftpsl_rates
from oslr.metrics import checkpoint_rounds

NAMES = ("ogd-full", "linucb", "ftpsl")


def _checkpointed(horizon: int, step, init_carry, sums_of, run_keys):
    """scan `step(carry, t, keys_t) -> carry` over t < horizon, copying `sums_of(carry)` (a
    tuple of (runs, ...) arrays) into (C, runs, ...) buffers at the checkpoint rounds."""
    ckpts = jnp.asarray(checkpoint_rounds(horizon), jnp.int32)
    bufs = tuple(jnp.zeros((len(ckpts),) + s.shape, s.dtype) for s in sums_of(init_carry))

    def body(state, t):
        carry, bufs = state
        keys_t = jax.vmap(jax.random.fold_in, (0, None))(run_keys, t)
        carry = step(carry, t, keys_t)
        i = jnp.clip(jnp.searchsorted(ckpts, t + 1), 0, len(ckpts) - 1)
        hit = ckpts[i] == t + 1
        bufs = tuple(b.at[i].set(jnp.where(hit, s, b[i])) for b, s in zip(bufs, sums_of(carry)))
        return (carry, bufs), None

    (carry, bufs), _ = lax.scan(body, (init_carry, bufs), jnp.arange(horizon, dtype=jnp.int32))
    return carry, bufs


def _split_runs(seed, runs: int):
    """(init keys, round keys) of the runs: one key per run, split in two."""
    keys = jax.random.split(jax.random.key(seed), runs)
    both = jax.vmap(lambda k: jax.random.split(k, 2))(keys)
    return both[:, 0], both[:, 1]


def _ogd(runs: int, horizon: int):
    d = OGD_D
    eta = 0.5 / d

    def study(seed):
        init_keys, round_keys = _split_runs(seed, runs)

        def w_star_of(key):
            k_sup, k_val = jax.random.split(key)
            support = jax.random.permutation(k_sup, d)[:3]
            w = jnp.zeros(d).at[support].set(jax.random.normal(k_val, (3,)))
            return w / jnp.abs(w).sum()

        w_star = jax.vmap(w_star_of)(init_keys)

        def step(carry, t, keys_t):
            w, loss, loss_star = carry
            draw = jax.vmap(lambda k: jax.random.normal(k, (d + 1,)))(keys_t)
            x, noise = draw[:, :d], 0.1 * draw[:, d]
            y = (x * w_star).sum(1) + noise
            err = (x * w).sum(1) - y
            w = w - (2.0 * eta / jnp.sqrt(t + 1.0) * err)[:, None] * x
            w = w / jnp.maximum(jnp.sqrt((w * w).sum(1)), 1.0)[:, None]
            return w, loss + err * err, loss_star + noise * noise

        carry = (jnp.zeros((runs, d)), jnp.zeros(runs), jnp.zeros(runs))
        (_, loss, loss_star), bufs = _checkpointed(horizon, step, carry, lambda c: c[1:],
                                                   round_keys)
        return {"loss": loss, "loss_wstar": loss_star, "ckpt": jnp.stack(bufs)}

    return study


def _linucb(runs: int, horizon: int):
    d, n_arms = BANDIT_D, K_ARMS

    def study(seed):
        init_keys, round_keys = _split_runs(seed, runs)

        def instance(key):
            k_theta, k_arms = jax.random.split(key)
            theta = jax.random.normal(k_theta, (d,))
            arms = jax.random.normal(k_arms, (n_arms, d))
            arms = arms / jnp.linalg.norm(arms, axis=1, keepdims=True)
            return arms, (arms * (theta / jnp.linalg.norm(theta))[None, :]).sum(1)

        arms, means = jax.vmap(instance)(init_keys)
        best, rows = means.max(1), jnp.arange(runs)

        def step(carry, t, keys_t):
            u, width, mean, reward, regret = carry
            arm = jnp.argmax(mean + jnp.sqrt(jnp.maximum(width, 0.0)), axis=1)
            noise = jax.vmap(lambda k: jax.random.uniform(k))(keys_t) - 0.5
            r = means[rows, arm] + noise
            v = u[rows, arm]
            denom = 1.0 + jnp.maximum(width[rows, arm], 0.0)
            cv = (arms * v[:, None, :]).sum(2) / denom[:, None]
            u = u - cv[:, :, None] * v[:, None, :]
            width = width - cv * cv * denom[:, None]
            mean = mean + cv * (r - mean[rows, arm])[:, None]
            return u, width, mean, reward + r, regret + best - means[rows, arm]

        carry = (arms, jnp.ones((runs, n_arms)), jnp.zeros((runs, n_arms)), jnp.zeros(runs),
                 jnp.zeros(runs))
        carry, bufs = _checkpointed(horizon, step, carry, lambda c: c[3:], round_keys)
        return {"reward": carry[3], "pseudo_regret": carry[4], "ckpt": jnp.stack(bufs)}

    return study


def _ftpsl(runs: int, horizon: int):
    from benchmarks.anchors import _a9a

    x_np, y_np = _a9a(np.float32)
    n, d = x_np.shape
    k, m = FTPSL_K, FTPSL_M
    eta, gamma = ftpsl_rates(d, k, horizon)
    below_one = float(np.nextafter(np.float32(1), np.float32(0)))

    def study(seed, x_all, y_all):
        init_keys, round_keys = _split_runs(seed, runs)
        order = jax.vmap(lambda key: jax.random.permutation(key, n))(init_keys)
        runs_ix = jnp.arange(runs)

        def step(carry, t, keys_t):
            s, reward, theta_sum = carry
            rows = order[:, t % n]
            x, y = x_all[rows], y_all[rows]
            u = jax.vmap(lambda key: jax.random.uniform(key, (m + 1, d + 1)))(keys_t)
            sgn = 2.0 * u[..., :d] - 1.0
            z = jnp.copysign(-jnp.log1p(-jnp.minimum(jnp.abs(sgn), below_one)), sgn)
            explore = u[..., d] < gamma
            v = eta * s[:, None, :] - z
            score = jnp.where(explore[..., None], z, jnp.abs(v))
            top = lax.top_k(score, k)[1]  # (runs, m + 1, k)
            played = top[:, 0]
            vq = jnp.take_along_axis(v[:, 0], played, axis=1)
            wq = jnp.where(explore[:, :1], k**-0.5,
                           -vq / jnp.linalg.norm(vq, axis=1, keepdims=True))
            xq = jnp.take_along_axis(x, played, axis=1)
            reward = reward + y * (wq * xq).sum(1)
            inq = (top[:, 1:, :, None] == played[:, None, None, :]).any(axis=2)  # (runs, m, k)
            h = jnp.where(inq.any(1), jnp.argmax(inq, axis=1) + 1, m).astype(jnp.float32)
            s = s.at[runs_ix[:, None], played].add(-y[:, None] * xq * h)
            return s, reward, theta_sum + y[:, None] * x

        carry = (jnp.zeros((runs, d)), jnp.zeros(runs), jnp.zeros((runs, d)))
        (_, reward, theta_sum), bufs = _checkpointed(horizon, step, carry, lambda c: c[1:],
                                                     round_keys)
        return {"reward": reward, "theta_sum": theta_sum, "ckpt": bufs}

    return study, (jnp.asarray(x_np), jnp.asarray(y_np))


def program(name: str, runs: int, horizon: int):
    """(study, data): `study(seed, *data)` runs study `name` (one of NAMES) over batched runs."""
    if name == "ftpsl":
        return _ftpsl(runs, horizon)
    return {"ogd-full": _ogd, "linucb": _linucb}[name](runs, horizon), ()


def plain_batched(name: str, runs: int, horizon: int, seed: int = 0):
    """`call()` running study `name` (one of NAMES) as one jitted scan over batched runs."""
    study, data = program(name, runs, horizon)
    program_ = jax.jit(study)
    seed_a = jnp.asarray(seed, jnp.uint32)

    def call():
        out = jax.block_until_ready(program_(seed_a, *data))
        return jax.tree.map(np.asarray, out)

    return call


__all__ = ["NAMES", "plain_batched", "program"]
