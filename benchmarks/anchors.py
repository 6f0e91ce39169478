"""What a skilled user writes instead of oslr for a Monte-Carlo study: the same learner on the
same stream law, vectorised across runs in NumPy (float64 or float32: arrays of shape
(runs, ...), one Python iteration per round for all runs), or a numba loop (`parallel=True`,
`prange` over runs). Issue 26's anchors: oslr's run-rounds/s is judged against the best of them.

Per run-round every side computes what the oslr program does: the example (a fresh draw, or the
run's permutation of the dataset), the learner's decision and update, and the running metrics
(loss or reward sums, the comparator's statistic where the family has one: Theta = sum y x for
the linear family), copied into 50 log-spaced checkpoint buffers. What they skip: oslr's key
schedule (`fold_in` per run and round, which makes results independent of batching and chunk
size), its compensated float32 sums and its protocol's budget bookkeeping.

  ogd-full on sparse-linear (d = 64, k = 3): x ~ N(0, I), y = x^T w* + 0.1 N(0, 1); projected
    OGD, eta = 0.5 / d / sqrt(t + 1) on the unit ball; loss and the true model's loss.
  linucb on linear-bandit (d = 20, K = 10 fixed unit arms, theta* on the unit sphere, rewards
    mean + U(-1/2, 1/2)): the O(K d) Sherman-Morrison form of `oslr.learners.linucb` (kappa 1,
    lam0 1); reward and pseudo-regret.
  ogd-random-subset, uniform-subset (d = 64, k = 8 features a round), eps-greedy (linear-bandit,
    A^-1 by Sherman-Morrison), ftpl-random-subset and ftpl-oracle-subset (a9a, k = 10),
    ito-dual-averaging ([ITO] E3, d = 10, k = 4), pege and fpege-gd (unit sphere, d = 20),
    ftpsl-delayed (ftpsl under fixed delays D = 8):
    batched NumPy only (no numba side); each function's docstring says what it computes.
  ftpsl on a9a (d = 123, k = 10, M = 10 geometric resamples, b = 2, eq. (1) rates, the run's
    permutation of the rows): Laplace perturbations by the inverse CDF of uniforms (the fastest
    NumPy draw, and float32 where the side is float32); reward and Theta.

`numpy_batched(name, runs, horizon, dtype)` and `numba_batched(name, runs, horizon)` return a
`call()` that runs the whole study and returns its final metrics (dict of (runs, ...) arrays).
"""

from __future__ import annotations

import math

import numpy as np

from oslr.metrics import checkpoint_rounds

#: the rows with a numba side; NUMPY_NAMES: the rows with batched NumPy sides
NAMES = ("ogd-full", "linucb", "ftpsl")
OGD_D, BANDIT_D, K_ARMS, FTPSL_K, FTPSL_M, SUBSET_K = 64, 20, 10, 10, 10, 8
ITO_D, ITO_K, PEGE_D, FTPSL_DELAY = 10, 4, 20, 8


def _a9a(dtype):
    from oslr.problems.datasets import load_dataset

    x, y = load_dataset("a9a")
    return np.ascontiguousarray(x, dtype), np.ascontiguousarray(y, dtype)


def ftpsl_rates(d: int, k: int, horizon: int, c0: float = 1.0) -> tuple[float, float]:
    """eq. (1) with b = 2: eta = sqrt(k^(1/2) ln d / (d^2 T ln T)), gamma = min(c0 d eta ln T,
    1/2) (c0 = 1 for ftpsl, 2 for ftpsl-delayed, as their specs' defaults)."""
    log_t = max(math.log(horizon), 1.0)
    eta = math.sqrt(k**0.5 * math.log(d) / (d**2 * horizon * log_t))
    return eta, min(c0 * d * eta * log_t, 0.5)


# ----------------------------------------------------------------------------- NumPy, batched


def _ogd_numpy(runs, horizon, dtype, seed, k=None):
    rng = np.random.default_rng(seed)
    d = OGD_D
    ckpts = checkpoint_rounds(horizon)
    w_star = np.zeros((runs, d), dtype)
    support = np.argsort(rng.random((runs, d)), axis=1)[:, :3]
    np.put_along_axis(w_star, support, rng.standard_normal((runs, 3), dtype), axis=1)
    w_star /= np.abs(w_star).sum(1, keepdims=True)
    w = np.zeros((runs, d), dtype)
    loss, loss_star = np.zeros(runs, dtype), np.zeros(runs, dtype)
    buf = np.zeros((2, len(ckpts), runs), dtype)
    eta, c = dtype(0.5 / d), 0
    for t in range(horizon):
        x = rng.standard_normal((runs, d), dtype)
        noise = dtype(0.1) * rng.standard_normal(runs, dtype)
        y = np.einsum("rd,rd->r", x, w_star) + noise
        if k is not None:  # only a uniform k-subset of x is seen
            x = np.where(_random_subsets(rng, runs, d, k), x, dtype(0))
        err = np.einsum("rd,rd->r", x, w) - y
        loss += err * err
        loss_star += noise * noise
        w -= (dtype(2.0) * eta / dtype(math.sqrt(t + 1)) * err)[:, None] * x
        w /= np.maximum(np.sqrt(np.einsum("rd,rd->r", w, w)), dtype(1.0))[:, None]
        if t + 1 == ckpts[c]:
            buf[0, c], buf[1, c] = loss, loss_star
            c += 1
    return {"loss": loss, "loss_wstar": loss_star, "ckpt": buf}


def _bandit(rng, runs, dtype):
    """The linear-bandit instance of each run: K = 10 unit arms in d = 20, theta* on the unit
    sphere; returns the arms (runs, K, d), the arm means (runs, K) and the best mean (runs,)."""
    theta = rng.standard_normal((runs, BANDIT_D), dtype)
    theta /= np.linalg.norm(theta, axis=1, keepdims=True)
    arms = rng.standard_normal((runs, K_ARMS, BANDIT_D), dtype)
    arms /= np.linalg.norm(arms, axis=2, keepdims=True)
    means = np.einsum("rkd,rd->rk", arms, theta)
    return arms, means, means.max(1)


def _linucb_numpy(runs, horizon, dtype, seed):
    rng = np.random.default_rng(seed)
    d, n_arms = BANDIT_D, K_ARMS
    ckpts = checkpoint_rounds(horizon)
    arms, means, best = _bandit(rng, runs, dtype)
    u = arms.copy()  # A^{-1} x_a with A = I
    width, mean = np.einsum("rkd,rkd->rk", u, arms), np.zeros((runs, n_arms), dtype)
    reward, regret = np.zeros(runs, dtype), np.zeros(runs, dtype)
    buf = np.zeros((2, len(ckpts), runs), dtype)
    rows, c = np.arange(runs), 0
    for t in range(horizon):
        arm = np.argmax(mean + np.sqrt(np.maximum(width, 0.0)), axis=1)
        r = means[rows, arm] + rng.random(runs, dtype) - dtype(0.5)
        v = u[rows, arm]  # (runs, d)
        denom = dtype(1.0) + np.maximum(width[rows, arm], 0.0)
        cv = np.einsum("rkd,rd->rk", arms, v) / denom[:, None]
        u -= cv[:, :, None] * v[:, None, :]
        width -= cv * cv * denom[:, None]
        mean += cv * (r - mean[rows, arm])[:, None]
        reward += r
        regret += best - means[rows, arm]
        if t + 1 == ckpts[c]:
            buf[0, c], buf[1, c] = reward, regret
            c += 1
    return {"reward": reward, "pseudo_regret": regret, "ckpt": buf}


#: the largest float below 1 (2u - 1 is -1 when u = 0: a 2^-24 chance per float32 draw)
_BELOW_ONE = {np.float64: np.nextafter(1.0, 0.0), np.float32: np.nextafter(np.float32(1), 0)}


def _laplace(u):
    """Laplace(0, 1) by the inverse CDF of uniforms on [0, 1) (|z| = -log(1 - |2u - 1|))."""
    s = 2.0 * u - 1.0
    return np.copysign(-np.log1p(-np.minimum(np.abs(s), _BELOW_ONE[s.dtype.type])), s)


def _ftpsl_numpy(runs, horizon, dtype, seed, delay=1, c0=1.0):
    rng = np.random.default_rng(seed)
    x_all, y_all = _a9a(dtype)
    n, d = x_all.shape
    k, m = FTPSL_K, FTPSL_M
    eta, gamma = (dtype(v) for v in ftpsl_rates(d, k, horizon, c0))
    ckpts = checkpoint_rounds(horizon)
    order = np.argsort(rng.random((runs, n)), axis=1)  # each run's permutation of the rows
    s = np.zeros((runs, d), dtype)
    reward, theta_sum = np.zeros(runs, dtype), np.zeros((runs, d), dtype)
    buf_r, buf_t = np.zeros((len(ckpts), runs), dtype), np.zeros((len(ckpts), runs, d), dtype)
    c, inv_sqrt_k = 0, dtype(k**-0.5)
    pending = np.zeros((runs, delay, d), dtype)  # delayed estimates, by the round they apply
    steps = np.arange(1, m + 1)
    for t in range(horizon):
        rows = order[:, t % n]
        x, y = x_all[rows], y_all[rows]
        u = rng.random((runs, m + 1, d + 1), dtype)
        z, explore = _laplace(u[..., :d]), u[..., d] < gamma
        v = eta * s[:, None, :] - z
        score = np.where(explore[..., None], z, np.abs(v))
        top = np.argpartition(-score, k - 1, axis=-1)[..., :k]  # (runs, m + 1, k)
        vq = np.take_along_axis(v[:, 0], top[:, 0], axis=1)
        wq = np.where(explore[:, :1], inv_sqrt_k, -vq / np.linalg.norm(vq, axis=1, keepdims=True))
        xq = np.take_along_axis(x, top[:, 0], axis=1)
        reward += y * np.einsum("rk,rk->r", wq, xq)
        # geometric resampling: h_i = the first resample that plays i (M if none)
        inq = (top[:, 1:, :, None] == top[:, :1, None, :]).any(axis=2)  # (runs, m, k)
        h = np.where(inq.any(1), steps[np.argmax(inq, axis=1)], m).astype(dtype)
        if delay == 1:
            np.put_along_axis(s, top[:, 0], np.take_along_axis(s, top[:, 0], axis=1)
                              - y[:, None] * xq * h, axis=1)
        else:  # the estimate of round t is used from the end of round t + D - 1 on
            slot = pending[:, (t + delay - 1) % delay]
            np.put_along_axis(slot, top[:, 0], np.take_along_axis(slot, top[:, 0], axis=1)
                              - y[:, None] * xq * h, axis=1)
            s += pending[:, t % delay]
            pending[:, t % delay] = 0
        theta_sum += y[:, None] * x
        if t + 1 == ckpts[c]:
            buf_r[c], buf_t[c] = reward, theta_sum
            c += 1
    return {"reward": reward, "theta_sum": theta_sum, "ckpt": (buf_r, buf_t)}


def _ftpsl_delayed_numpy(runs, horizon, dtype, seed):
    """ftpsl-delayed on a9a under the fixed schedule D_t = 8: FTPSL whose estimate of round t
    enters s at the end of round t + 7 (a (runs, 8, d) ring of pending estimates), with the
    learner's default c0 = 2, as `numpy_loops.ftpsl_loop(delay=8, c0=2)` across runs."""
    return _ftpsl_numpy(runs, horizon, dtype, seed, delay=FTPSL_DELAY, c0=2.0)


def _ogd_subset_numpy(runs, horizon, dtype, seed):
    """ogd-random-subset: as ogd-full on a uniform k = 8 subset of x's coordinates per round
    (`benchmarks.numpy_loops.ogd_loop(full=False)` across runs)."""
    return _ogd_numpy(runs, horizon, dtype, seed, k=SUBSET_K)


def _random_subsets(rng, runs, d, k):
    """(runs, d) masks of uniform k-subsets: the k smallest of d uniforms per run."""
    u = rng.random((runs, d), np.float32)
    return u <= np.partition(u, k - 1, axis=1)[:, k - 1:k]


def _uniform_numpy(runs, horizon, dtype, seed):
    """uniform-subset: w* ~ N(0, I) / d, a uniform k = 8 subset per round, reward
    y <x_q, 1 / sqrt(k)> (`numpy_loops.uniform_loop` across runs); the reward sum."""
    rng = np.random.default_rng(seed)
    d, k = OGD_D, SUBSET_K
    ckpts = checkpoint_rounds(horizon)
    w_star = rng.standard_normal((runs, d), dtype) / dtype(d)
    reward, buf = np.zeros(runs, dtype), np.zeros((len(ckpts), runs), dtype)
    c, scale = 0, dtype(k**-0.5)
    for t in range(horizon):
        x = rng.standard_normal((runs, d), dtype)
        y = np.einsum("rd,rd->r", x, w_star) + dtype(0.1) * rng.standard_normal(runs, dtype)
        mask = _random_subsets(rng, runs, d, k)
        reward += y * np.where(mask, x, dtype(0)).sum(1) * scale
        if t + 1 == ckpts[c]:
            buf[c] = reward
            c += 1
    return {"reward": reward, "ckpt": buf[None]}


def _eps_greedy_numpy(runs, horizon, dtype, seed):
    """eps-greedy on linear-bandit (d = 20, K = 10): ridge least squares by Sherman-Morrison on
    A^-1 (runs, d, d), a uniform arm with probability 0.1, else the greedy one
    (`numpy_loops.eps_greedy_loop` across runs); reward and pseudo-regret."""
    rng = np.random.default_rng(seed)
    d, n_arms = BANDIT_D, K_ARMS
    ckpts = checkpoint_rounds(horizon)
    arms, means, best = _bandit(rng, runs, dtype)
    a_inv = np.broadcast_to(np.eye(d, dtype=dtype), (runs, d, d)).copy()
    b = np.zeros((runs, d), dtype)
    reward, regret = np.zeros(runs, dtype), np.zeros(runs, dtype)
    buf = np.zeros((2, len(ckpts), runs), dtype)
    rows, c = np.arange(runs), 0
    for t in range(horizon):
        est = np.einsum("rij,rj->ri", a_inv, b)
        greedy = np.argmax(np.einsum("rkd,rd->rk", arms, est), axis=1)
        explore = rng.random(runs, dtype) < dtype(0.1)
        arm = np.where(explore, rng.integers(0, n_arms, runs), greedy)
        r = means[rows, arm] + rng.random(runs, dtype) - dtype(0.5)
        x = arms[rows, arm]
        u = np.einsum("rij,rj->ri", a_inv, x)
        a_inv -= u[:, :, None] * (u / (dtype(1.0) + np.einsum("rd,rd->r", x, u))[:, None])[:, None]
        b += r[:, None] * x
        reward += r
        regret += best - means[rows, arm]
        if t + 1 == ckpts[c]:
            buf[0, c], buf[1, c] = reward, regret
            c += 1
    return {"reward": reward, "pseudo_regret": regret, "ckpt": buf}


def _ftpl_subset_numpy(runs, horizon, dtype, seed, oracle=False):
    """FTPL on a k = 10 subset of a9a fixed before round 1 (uniform per run, or the offline
    oracle subset, the k largest |sum y x|), eq. (1) rate, Laplace noise on the k slots only,
    as `numpy_loops.ftpl_subset_loop` across runs; reward and Theta = sum y x."""
    rng = np.random.default_rng(seed)
    x_all, y_all = _a9a(dtype)
    n, d = x_all.shape
    k = FTPSL_K
    eta = dtype(ftpsl_rates(d, k, horizon)[0])
    ckpts = checkpoint_rounds(horizon)
    if oracle:
        q = np.broadcast_to(np.argsort(-np.abs(y_all @ x_all), kind="stable")[:k], (runs, k))
    else:
        q = np.argsort(rng.random((runs, d), np.float32), axis=1)[:, :k]
    order = np.argsort(rng.random((runs, n), np.float32), axis=1)
    s = np.zeros((runs, k), dtype)
    reward, theta_sum = np.zeros(runs, dtype), np.zeros((runs, d), dtype)
    buf_r, buf_t = np.zeros((len(ckpts), runs), dtype), np.zeros((len(ckpts), runs, d), dtype)
    c = 0
    for t in range(horizon):
        rows = order[:, t % n]
        x, y = x_all[rows], y_all[rows]
        v = eta * s - _laplace(rng.random((runs, k), dtype))
        w = -v / np.linalg.norm(v, axis=1, keepdims=True)
        xq = np.take_along_axis(x, q, axis=1)
        reward += y * np.einsum("rk,rk->r", w, xq)
        s -= y[:, None] * xq
        theta_sum += y[:, None] * x
        if t + 1 == ckpts[c]:
            buf_r[c], buf_t[c] = reward, theta_sum
            c += 1
    return {"reward": reward, "theta_sum": theta_sum, "ckpt": (buf_r, buf_t)}


def _ftpl_oracle_numpy(runs, horizon, dtype, seed):
    return _ftpl_subset_numpy(runs, horizon, dtype, seed, oracle=True)


def _ito_da_numpy(runs, horizon, dtype, seed):
    """[ITO] Alg. 2 on the E3 stream (d = 10, k = 4: x uniform on the sphere, y = <w*, x> +
    0.1 N(0, 1) clipped to [-1, 1]): dual averaging on the (k - 1)-coordinate estimate, as
    `numpy_loops.ito_dual_averaging_loop` across runs; loss and the true model's loss."""
    rng = np.random.default_rng(seed)
    d, k = ITO_D, ITO_K
    ckpts = checkpoint_rounds(horizon)
    w_star = np.where(_random_subsets(rng, runs, d, k), rng.standard_normal((runs, d), dtype),
                      dtype(0))
    w_star /= np.linalg.norm(w_star, axis=1, keepdims=True)
    h = np.zeros((runs, d), dtype)
    loss, loss_star = np.zeros(runs, dtype), np.zeros(runs, dtype)
    buf = np.zeros((2, len(ckpts), runs), dtype)
    c, scale = 0, dtype(2.0 * d / (k - 1))
    for t in range(horizon):
        lam = dtype(math.sqrt(8.0 * d * (t + 1) / (k - 1)))
        w = -h / np.maximum(lam, np.linalg.norm(h, axis=1))[:, None]
        seen = _random_subsets(rng, runs, d, k - 1)
        x = rng.standard_normal((runs, d), dtype)
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        clean = np.einsum("rd,rd->r", x, w_star)
        y = np.clip(clean + dtype(0.1) * rng.standard_normal(runs, dtype), -1, 1)
        err = np.einsum("rd,rd->r", w, x) - y
        loss += err * err
        loss_star += (clean - y) ** 2
        h += np.where(seen, (scale * err)[:, None] * x, dtype(0))
        if t + 1 == ckpts[c]:
            buf[0, c], buf[1, c] = loss, loss_star
            c += 1
    return {"loss": loss, "loss_wstar": loss_star, "ckpt": buf}


def _pege_numpy(runs, horizon, dtype, seed, fast=False):
    """PEGE (or, `fast`, fPEGE-GD) on the unit sphere (d = 20, rewards <x, theta> + U(-1, 1)):
    phases of d exploration rounds on e_1 .. e_d then m exploitation rounds of the normalised
    estimate (m = 1, 2, ...), the same schedule in every run, as `numpy_loops.pege_loop`
    across runs; reward and pseudo-regret. fPEGE-GD moves its estimate by one fOLS-GD step on
    a uniformly drawn past exploration sample (step c / (4 (c + n)), c = 6 d, as `fpege-gd`)."""
    rng = np.random.default_rng(seed)
    d = PEGE_D
    ckpts = checkpoint_rounds(horizon)
    theta = rng.standard_normal((runs, d), dtype)
    theta /= np.linalg.norm(theta, axis=1, keepdims=True)
    sums, counts = np.zeros((runs, d), dtype), np.zeros(d, dtype)
    est_gd, c6 = np.zeros((runs, d), dtype), 6 * d
    hist_i, hist_r = np.zeros(horizon, np.int64), np.zeros((runs, horizon), dtype)
    rows = np.arange(runs)
    reward, regret = np.zeros(runs, dtype), np.zeros(runs, dtype)
    buf = np.zeros((2, len(ckpts), runs), dtype)
    t, m, c, n = 0, 1, 0, 0
    x = np.zeros((runs, d), dtype)
    while t < horizon:
        for phase in ("explore", "exploit"):
            steps = d if phase == "explore" else m
            for j in range(steps):
                if t == horizon:
                    break
                noise = dtype(2) * rng.random(runs, dtype) - dtype(1)
                if phase == "explore":
                    mean = theta[:, j]
                    r = mean + noise
                    sums[:, j] += r
                    counts[j] += 1
                    if fast:
                        hist_i[n], hist_r[:, n] = j, r
                        n += 1
                        pick = rng.integers(0, n, runs)
                        i = hist_i[pick]
                        est_gd[rows, i] += dtype(c6 / (4.0 * (c6 + n))) * (
                            hist_r[rows, pick] - est_gd[rows, i])
                else:
                    mean = np.einsum("rd,rd->r", x, theta)
                    r = mean + noise
                reward += r
                regret += dtype(1) - mean
                t += 1
                if t == ckpts[c]:
                    buf[0, c], buf[1, c] = reward, regret
                    c += 1
            if phase == "explore":
                est = est_gd if fast else sums / np.maximum(counts, 1)
                x = est / np.maximum(np.linalg.norm(est, axis=1, keepdims=True), dtype(1e-12))
        m += 1
    return {"reward": reward, "pseudo_regret": regret, "ckpt": buf}


def _fpege_numpy(runs, horizon, dtype, seed):
    return _pege_numpy(runs, horizon, dtype, seed, fast=True)


_NUMPY = {"ogd-full": _ogd_numpy, "ogd-random-subset": _ogd_subset_numpy,
          "uniform-subset": _uniform_numpy, "eps-greedy": _eps_greedy_numpy,
          "linucb": _linucb_numpy, "ftpsl": _ftpsl_numpy, "ftpsl-delayed": _ftpsl_delayed_numpy,
          "ftpl-random-subset": _ftpl_subset_numpy, "ftpl-oracle-subset": _ftpl_oracle_numpy,
          "ito-dual-averaging": _ito_da_numpy, "pege": _pege_numpy, "fpege-gd": _fpege_numpy}


NUMPY_NAMES = tuple(_NUMPY)


def numpy_batched(name: str, runs: int, horizon: int, dtype=np.float64, seed: int = 0):
    """`call()` running the study `name` (one of NUMPY_NAMES) in batched NumPy of `dtype`."""
    fn, dtype = _NUMPY[name], np.dtype(dtype).type
    return lambda: fn(runs, horizon, dtype, seed)


# ------------------------------------------------------------------------------------- numba


def _numba_kernels():
    import numba
    from numba import njit, prange

    @njit(parallel=True, cache=False)
    def ogd(runs, horizon, ckpts, seed):
        d = OGD_D
        loss, loss_star = np.zeros(runs), np.zeros(runs)
        buf = np.zeros((2, len(ckpts), runs))
        for r in prange(runs):
            np.random.seed(seed + r)
            w_star, w, x = np.zeros(d), np.zeros(d), np.zeros(d)
            for j in np.random.permutation(d)[:3]:
                w_star[j] = np.random.standard_normal()
            w_star /= np.abs(w_star).sum()
            c = 0
            for t in range(horizon):
                y = 0.0
                for j in range(d):
                    x[j] = np.random.standard_normal()
                    y += x[j] * w_star[j]
                noise = 0.1 * np.random.standard_normal()
                y += noise
                err = -y
                for j in range(d):
                    err += w[j] * x[j]
                loss[r] += err * err
                loss_star[r] += noise * noise
                step, nrm = 2.0 * 0.5 / d / math.sqrt(t + 1) * err, 0.0
                for j in range(d):
                    w[j] -= step * x[j]
                    nrm += w[j] * w[j]
                if nrm > 1.0:
                    w /= math.sqrt(nrm)
                if t + 1 == ckpts[c]:
                    buf[0, c, r], buf[1, c, r] = loss[r], loss_star[r]
                    c += 1
        return loss, loss_star, buf

    @njit(parallel=True, cache=False)
    def linucb(runs, horizon, ckpts, seed):
        d, n_arms = BANDIT_D, K_ARMS
        reward, regret = np.zeros(runs), np.zeros(runs)
        buf = np.zeros((2, len(ckpts), runs))
        for r in prange(runs):
            np.random.seed(seed + r)
            theta = np.random.standard_normal(d)
            theta /= np.sqrt((theta * theta).sum())
            arms = np.random.standard_normal((n_arms, d))
            means = np.zeros(n_arms)
            for a in range(n_arms):
                arms[a] /= np.sqrt((arms[a] * arms[a]).sum())
                means[a] = (arms[a] * theta).sum()
            best = means.max()
            u = arms.copy()
            width, mean = np.ones(n_arms), np.zeros(n_arms)
            v, cv = np.zeros(d), np.zeros(n_arms)
            c = 0
            for t in range(horizon):
                arm, top = 0, -np.inf
                for a in range(n_arms):
                    ucb = mean[a] + math.sqrt(max(width[a], 0.0))
                    if ucb > top:
                        arm, top = a, ucb
                rew = means[arm] + np.random.random() - 0.5
                v[:] = u[arm]
                denom = 1.0 + max(width[arm], 0.0)
                m_arm = mean[arm]
                for a in range(n_arms):
                    acc = 0.0
                    for j in range(d):
                        acc += arms[a, j] * v[j]
                    cv[a] = acc / denom
                for a in range(n_arms):
                    for j in range(d):
                        u[a, j] -= cv[a] * v[j]
                    width[a] -= cv[a] * cv[a] * denom
                    mean[a] += cv[a] * (rew - m_arm)
                reward[r] += rew
                regret[r] += best - means[arm]
                if t + 1 == ckpts[c]:
                    buf[0, c, r], buf[1, c, r] = reward[r], regret[r]
                    c += 1
        return reward, regret, buf

    @njit(parallel=True, cache=False)
    def ftpsl(x_all, y_all, runs, horizon, ckpts, eta, gamma, seed):
        n, d = x_all.shape
        k, m = FTPSL_K, FTPSL_M
        reward, theta_sum = np.zeros(runs), np.zeros((runs, d))
        buf_r, buf_t = np.zeros((len(ckpts), runs)), np.zeros((len(ckpts), runs, d))
        for r in prange(runs):
            np.random.seed(seed + r)
            order = np.random.permutation(n)
            s = np.zeros(d)
            score, v = np.zeros(d), np.zeros(d)
            top = np.zeros((m + 1, k), np.int64)
            c = 0
            for t in range(horizon):
                row = order[t % n]
                explore0 = False
                for i in range(m + 1):
                    explore = np.random.random() < gamma
                    if i == 0:
                        explore0 = explore
                    for j in range(d):
                        uu = 2.0 * np.random.random() - 1.0
                        z = math.copysign(-math.log1p(-min(abs(uu), 1.0 - 1e-16)), uu)
                        v[j] = eta * s[j] - z
                        score[j] = z if explore else abs(v[j])
                    # top-k by insertion into a sorted buffer of k (d k comparisons)
                    vals = np.full(k, -np.inf)
                    for j in range(d):
                        if score[j] > vals[k - 1]:
                            p = k - 1
                            while p > 0 and vals[p - 1] < score[j]:
                                vals[p] = vals[p - 1]
                                top[i, p] = top[i, p - 1]
                                p -= 1
                            vals[p] = score[j]
                            top[i, p] = j
                    if i == 0:  # the play: weights from this draw's v
                        nrm = 0.0
                        for p in range(k):
                            nrm += v[top[0, p]] ** 2
                        rw = 0.0
                        for p in range(k):
                            wq = k**-0.5 if explore0 else -v[top[0, p]] / math.sqrt(nrm)
                            rw += wq * x_all[row, top[0, p]]
                        reward[r] += y_all[row] * rw
                for p in range(k):
                    j, h = top[0, p], m
                    for i in range(1, m + 1):
                        hit = False
                        for q in range(k):
                            if top[i, q] == j:
                                hit = True
                                break
                        if hit:
                            h = i
                            break
                    s[j] -= y_all[row] * x_all[row, j] * h
                for j in range(d):
                    theta_sum[r, j] += y_all[row] * x_all[row, j]
                if t + 1 == ckpts[c]:
                    buf_r[c, r] = reward[r]
                    buf_t[c, r] = theta_sum[r]
                    c += 1
        return reward, theta_sum, buf_r, buf_t

    del numba
    return {"ogd-full": ogd, "linucb": linucb, "ftpsl": ftpsl}


_KERNELS: dict = {}


def numba_batched(name: str, runs: int, horizon: int, seed: int = 0):
    """`call()` running the study `name` as a float64 numba loop (`prange` over runs), or None
    when numba is not installed (`pip install -e ".[bench]"`) or the row has no numba side
    (not in NAMES). The first call compiles."""
    if name not in NAMES:
        return None
    try:
        if not _KERNELS:
            _KERNELS.update(_numba_kernels())
    except ImportError:
        return None
    kernel, ckpts = _KERNELS[name], checkpoint_rounds(horizon)
    if name == "ftpsl":
        x, y = _a9a(np.float64)
        eta, gamma = ftpsl_rates(x.shape[1], FTPSL_K, horizon)

        def call():
            reward, theta_sum, buf_r, buf_t = kernel(x, y, runs, horizon, ckpts, eta, gamma,
                                                     seed)
            return {"reward": reward, "theta_sum": theta_sum, "ckpt": (buf_r, buf_t)}

        return call
    keys = {"ogd-full": ("loss", "loss_wstar"), "linucb": ("reward", "pseudo_regret")}[name]

    def call():
        a, b, buf = kernel(runs, horizon, ckpts, seed)
        return {keys[0]: a, keys[1]: b, "ckpt": buf}

    return call


__all__ = ["NAMES", "NUMPY_NAMES", "ftpsl_rates", "numba_batched", "numpy_batched"]
