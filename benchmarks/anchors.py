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
  ftpsl-knapsack (a9a, the DP knapsack of every draw across runs), flinucb-gd / -svrg / -sag
    (linear-bandit, histories (runs, T)), foster-hedge (the 560 subsets' Hedge and SGD as
    (runs, 560, 3) arrays), online-greedy (agnostic, d = 100), dantzig-poslr (sparse-linear,
    d = 100, its LPs by HiGHS one run at a time), ito-projection and ito-block-bandit ([ITO] E3):
    batched NumPy only; each function's docstring says what it computes. Their metrics: the
    row's loss or reward sums (prediction rows also the true model's loss), no Gram statistics
    (the benchmark's oslr program keeps none either).

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
ITO_D, ITO_K, PEGE_D, FTPSL_DELAY, KNAPSACK_BUDGET = 10, 4, 20, 8, 20


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
    n_arms = K_ARMS
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


def _row_orders(rng, runs: int, n: int) -> np.ndarray:
    """Each run's uniform permutation of the n rows (runs, n): a Fisher-Yates shuffle of every
    row (`Generator.permuted`), 4x quicker than an argsort of uniforms on a9a."""
    return rng.permuted(np.broadcast_to(np.arange(n, dtype=np.int32), (runs, n)), axis=1)


def _perturbed_draws(rng, s, eta, gamma, draws):
    """The eq. (2) draws of a round for every run: Laplace perturbations z (runs, draws, d) by
    the inverse CDF of uniforms, the exploration coins (runs, draws) and v = eta S - z, from
    one block of uniforms in S's dtype."""
    runs, d = s.shape
    u = rng.random((runs, draws, d + 1), s.dtype)
    z = _laplace(u[..., :d])
    return z, u[..., d] < gamma, eta * s[:, None, :] - z


def _ftpsl_numpy(runs, horizon, dtype, seed, delay=1, c0=1.0):
    rng = np.random.default_rng(seed)
    x_all, y_all = _a9a(dtype)
    n, d = x_all.shape
    k, m = FTPSL_K, FTPSL_M
    eta, gamma = (dtype(v) for v in ftpsl_rates(d, k, horizon, c0))
    ckpts = checkpoint_rounds(horizon)
    order = _row_orders(rng, runs, n)
    s = np.zeros((runs, d), dtype)
    reward, theta_sum = np.zeros(runs, dtype), np.zeros((runs, d), dtype)
    buf_r, buf_t = np.zeros((len(ckpts), runs), dtype), np.zeros((len(ckpts), runs, d), dtype)
    c, inv_sqrt_k = 0, dtype(k**-0.5)
    pending = np.zeros((runs, delay, d), dtype)  # delayed estimates, by the round they apply
    steps = np.arange(1, m + 1)
    for t in range(horizon):
        rows = order[:, t % n]
        x, y = x_all[rows], y_all[rows]
        z, explore, v = _perturbed_draws(rng, s, eta, gamma, m + 1)
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
    order = _row_orders(rng, runs, n)
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


# ------------------------------------------------- NumPy, batched: the rows of issue 26's second half


def _knapsack_dp(values, costs, budget):
    """(P, d) values -> (P, d) bool: the exact 0/1 knapsack of every row by the DP over
    capacities (`numpy_loops.knapsack_dp` across rows; strict > keeps the earlier choice)."""
    p, d = values.shape
    best = np.zeros((p, budget + 1), values.dtype)
    take = np.zeros((d, p, budget + 1), bool)
    shifted = np.full((p, budget + 1), -np.inf, values.dtype)
    for i in range(d):
        c = int(costs[i])
        shifted[:, c:] = best[:, :budget + 1 - c] + values[:, i:i + 1]
        np.greater(shifted, best, out=take[i])
        np.maximum(best, shifted, out=best)
    chosen, cap, rows = np.zeros((p, d), bool), np.full(p, budget), np.arange(p)
    for i in range(d - 1, -1, -1):
        chosen[:, i] = take[i, rows, cap]
        cap -= np.where(chosen[:, i], costs[i], 0)
    return chosen


def _greedy_fill(z, costs, budget):
    """(P, d) scores -> (P, d) bool: visit coordinates by decreasing score and take each one
    that still fits (`oslr.learners.ftpsl.greedy_fill` across rows)."""
    p, d = z.shape
    order, rows = np.argsort(-z, axis=1), np.arange(p)
    used, chosen = np.zeros(p, np.int64), np.zeros((p, d), bool)
    for j in range(d):
        i = order[:, j]
        fits = used + costs[i] <= budget
        used += np.where(fits, costs[i], 0)
        chosen[rows, i] = fits
    return chosen


def _ftpsl_knapsack_numpy(runs, horizon, dtype, seed):
    """ftpsl-knapsack on a9a (costs 1 + i mod 3, budget B = 20, k = 20 in eq. (1), b = 2,
    M = 10): each of the M + 1 draws of a round leads with the exact knapsack of values
    (|v| / max |v|)^2 or, exploring, fills greedily in the order of z; the play weighs its set
    by Lemma 1 (-v_J / ||v_J||) or 1 / sqrt(|J|); h_i = the first resample whose set holds i.
    As `numpy_loops.ftpsl_loop(costs=, budget=)` across runs; reward and Theta."""
    rng = np.random.default_rng(seed)
    x_all, y_all = _a9a(dtype)
    n, d = x_all.shape
    m, budget = FTPSL_M, KNAPSACK_BUDGET
    costs = 1 + np.arange(d) % 3
    eta, gamma = (dtype(v) for v in ftpsl_rates(d, budget, horizon))
    ckpts = checkpoint_rounds(horizon)
    order = _row_orders(rng, runs, n)
    s = np.zeros((runs, d), dtype)
    reward, theta_sum = np.zeros(runs, dtype), np.zeros((runs, d), dtype)
    buf_r, buf_t = np.zeros((len(ckpts), runs), dtype), np.zeros((len(ckpts), runs, d), dtype)
    steps, c = np.arange(1, m + 1), 0
    for t in range(horizon):
        rows = order[:, t % n]
        x, y = x_all[rows], y_all[rows]
        z, explore, v = _perturbed_draws(rng, s, eta, gamma, m + 1)
        mag = np.abs(v)
        values = (mag / np.maximum(mag.max(-1, keepdims=True), dtype(1e-30))) ** 2
        lead = _knapsack_dp(values.reshape(-1, d), costs, budget)
        fill = _greedy_fill(z.reshape(-1, d), costs, budget)
        q = np.where(explore.reshape(-1, 1), fill, lead).reshape(runs, m + 1, d)
        q0, v0 = q[:, 0], np.where(q[:, 0], v[:, 0], dtype(0))
        size = np.maximum(q0.sum(1), 1).astype(dtype)
        w = np.where(explore[:, :1], q0 / np.sqrt(size)[:, None],
                     -v0 / np.linalg.norm(v0, axis=1, keepdims=True))
        reward += y * np.einsum("rd,rd->r", w, x)
        hit = q[:, 1:] & q0[:, None]  # (runs, m, d)
        h = np.where(hit.any(1), steps[np.argmax(hit, axis=1)], m).astype(dtype)
        s -= np.where(q0, y[:, None] * x * h, dtype(0))
        theta_sum += y[:, None] * x
        if t + 1 == ckpts[c]:
            buf_r[c], buf_t[c] = reward, theta_sum
            c += 1
    return {"reward": reward, "theta_sum": theta_sum, "ckpt": (buf_r, buf_t)}


def _flinucb_numpy(runs, horizon, dtype, seed, tracker="gd"):
    """fLinUCB ([KPM] Alg. 2) on linear-bandit (d = 20, K = 10, kappa 1, alpha = 0.75): the
    confidence widths from the SGD tracker phi (K, d) of (11), one uniformly drawn past arm a
    round; the estimate by fRLS-GD (`tracker="gd"`), SVRG (snapshot and full gradient when
    t + 1 is a power of two) or SAG (a stored residual per sample), as
    `numpy_loops.flinucb_loop` across runs (histories (runs, T)); reward and pseudo-regret."""
    rng = np.random.default_rng(seed)
    d, n_arms, alpha = BANDIT_D, K_ARMS, 0.75
    ckpts = checkpoint_rounds(horizon)
    arms, means, best = _bandit(rng, runs, dtype)
    rows = np.arange(runs)
    theta, phi = np.zeros((runs, d), dtype), np.zeros((runs, n_arms, d), dtype)
    hist_arm, hist_r = np.zeros((runs, horizon), np.int64), np.zeros((runs, horizon), dtype)
    snap, mu, g_sum = (np.zeros((runs, d), dtype) for _ in range(3))
    resid, lmax = np.zeros((runs, horizon), dtype), np.zeros(runs, dtype)
    reward, regret = np.zeros(runs, dtype), np.zeros(runs, dtype)
    buf = np.zeros((2, len(ckpts), runs), dtype)
    c = 0
    for n in range(horizon):
        if n > 0:
            xi = arms[rows, hist_arm[rows, rng.integers(0, n, runs)]]
            g, lam = dtype(n**-alpha), dtype(n ** (alpha - 1.0))
            phi += g * (arms / dtype(n) - np.einsum("rkd,rd->rk", phi, xi)[:, :, None]
                        * xi[:, None, :] - lam * phi)
        width = np.sqrt(np.maximum(np.einsum("rkd,rkd->rk", phi, arms), 0))
        arm = np.argmax(np.einsum("rkd,rd->rk", arms, theta) + width, axis=1)
        x_new, y_new = arms[rows, arm], means[rows, arm] + rng.random(runs, dtype) - dtype(0.5)
        hist_arm[:, n], hist_r[:, n] = arm, y_new
        i = rng.integers(0, n + 1, runs)
        x, y = arms[rows, hist_arm[rows, i]], hist_r[rows, i]
        lam = dtype((n + 1) ** (alpha - 1.0))
        if tracker == "gd":
            theta += dtype((n + 1) ** -alpha) * (
                (y - np.einsum("rd,rd->r", theta, x))[:, None] * x - lam * theta)
        elif tracker == "svrg":
            mu += (-(y_new - np.einsum("rd,rd->r", snap, x_new))[:, None] * x_new - mu) / dtype(
                n + 1)
            np.maximum(lmax, np.einsum("rd,rd->r", x_new, x_new), out=lmax)
            g = ((np.einsum("rd,rd->r", theta, x) - np.einsum("rd,rd->r", snap, x))[:, None] * x
                 + mu)
            theta -= (dtype(0.1) / (lmax + lam))[:, None] * (g + lam * theta)
            if (n + 1) & n == 0:
                snap = theta.copy()
                xs = arms[rows[:, None], hist_arm[:, :n + 1]]  # (runs, n + 1, d)
                mu = -np.einsum("rn,rnd->rd", hist_r[:, :n + 1]
                                - np.einsum("rnd,rd->rn", xs, snap), xs) / dtype(n + 1)
        else:  # sag
            r_new = y_new - np.einsum("rd,rd->r", theta, x_new)
            g_sum -= (r_new - resid[:, n])[:, None] * x_new
            resid[:, n] = r_new
            np.maximum(lmax, np.einsum("rd,rd->r", x_new, x_new), out=lmax)
            r = y - np.einsum("rd,rd->r", theta, x)
            g_sum -= (r - resid[rows, i])[:, None] * x
            resid[rows, i] = r
            theta -= (dtype(1.0) / (lmax + lam))[:, None] * (g_sum / dtype(n + 1) + lam * theta)
        reward += y_new
        regret += best - means[rows, arm]
        if n + 1 == ckpts[c]:
            buf[0, c], buf[1, c] = reward, regret
            c += 1
    return {"reward": reward, "pseudo_regret": regret, "ckpt": buf}


def _flinucb_svrg_numpy(runs, horizon, dtype, seed):
    return _flinucb_numpy(runs, horizon, dtype, seed, "svrg")


def _flinucb_sag_numpy(runs, horizon, dtype, seed):
    return _flinucb_numpy(runs, horizon, dtype, seed, "sag")


def _sparse_w_star(rng, runs, d, k, dtype, norm=2):
    """(runs, d) k-sparse w* (uniform support, N(0, 1) entries) of unit l1 or l2 norm."""
    w = np.where(_random_subsets(rng, runs, d, k), rng.standard_normal((runs, d), dtype),
                 dtype(0))
    return w / np.linalg.norm(w, ord=norm, axis=1, keepdims=True)


def _sphere_example(rng, runs, d, w_star, dtype):
    """[ITO] E3 / [FKK] E5 examples: x uniform on the unit sphere, y = clip(<w*, x> + 0.1 N(0, 1),
    -1, 1); (x, y, the clipped noise-free label)."""
    x = rng.standard_normal((runs, d), dtype)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    clean = np.einsum("rd,rd->r", x, w_star)
    y = np.clip(clean + dtype(0.1) * rng.standard_normal(runs, dtype), -1, 1)
    return x, y, np.clip(clean, -1, 1)


def _categorical(rng, prob, dtype):
    """One index per row of the (runs, N) unnormalised probabilities (inverse CDF)."""
    cdf = np.cumsum(prob, axis=1)
    u = rng.random((len(prob), 1), dtype) * cdf[:, -1:]
    return np.minimum((cdf <= u).sum(1), prob.shape[1] - 1)


def _foster_numpy(runs, horizon, dtype, seed):
    """[FKK] Alg. 1 on the sphere stream (d = 16, k = 3, k' = 5): Hedge over the C(16, 3) = 560
    subsets (one softmax draw a round) and an SGD learner per subset, all updated from the
    unbiased estimates on m = k' - k uniformly queried coordinates, as `numpy_loops.foster_loop`
    across runs ((runs, 560, 3) weights); loss and the true model's loss."""
    import itertools

    from benchmarks.cases import FOSTER_D, FOSTER_K, FOSTER_KQ

    rng = np.random.default_rng(seed)
    d, k = FOSTER_D, FOSTER_K
    table = np.array(list(itertools.combinations(range(d), k)))
    n_sub, rows = len(table), np.arange(runs)
    w_star = _sparse_w_star(rng, runs, d, k, dtype)
    m = FOSTER_KQ - k
    p, q = m / d, m * (m - 1) / (d * (d - 1))
    eta_h, eta_s = dtype(q * math.sqrt(math.log(d) / horizon)), dtype(q / math.sqrt(horizon))
    inv_p, inv_q, diag = dtype(1 / p), dtype(1 / q), dtype(1 / p - 1 / q)
    ckpts = checkpoint_rounds(horizon)
    cum, w = np.zeros((runs, n_sub), dtype), np.zeros((runs, n_sub, k), dtype)
    loss, loss_star = np.zeros(runs, dtype), np.zeros(runs, dtype)
    buf = np.zeros((2, len(ckpts), runs), dtype)
    c = 0
    for t in range(horizon):
        x, y, clean = _sphere_example(rng, runs, d, w_star, dtype)
        arm = _categorical(rng, np.exp(-eta_h * cum), dtype)  # cum >= 0 with min 0
        pred = np.einsum("rk,rk->r", w[rows, arm], x[rows[:, None], table[arm]])
        loss += (pred - y) ** 2
        loss_star += (clean - y) ** 2
        xs = np.where(_random_subsets(rng, runs, d, m), x, dtype(0))[:, table]  # (runs, N, k)
        a = np.einsum("rnk,rnk->rn", xs, w)
        yc = y[:, None]
        cum += (a * a * inv_q + diag * np.einsum("rnk,rnk->rn", xs * xs, w * w)
                - dtype(2) * yc * a * inv_p + yc * yc)
        cum -= cum.min(1, keepdims=True)
        w -= dtype(2) * eta_s * (xs * (a * inv_q)[..., None] + diag * xs * xs * w
                                 - yc[..., None] * xs * inv_p)
        w /= np.maximum(np.linalg.norm(w, axis=2, keepdims=True), dtype(1))
        if t + 1 == ckpts[c]:
            buf[0, c], buf[1, c] = loss, loss_star
            c += 1
    return {"loss": loss, "loss_wstar": loss_star, "ckpt": buf}


def _vaw_step(a_inv, b, z, y):
    """One Vovk-Azoury-Warmuth round of every run, in place: the prediction
    z^T (A + z z^T)^-1 b from A^-1 (runs, n, n) by Sherman-Morrison, then A^-1 and b = sum y z
    take the round's (z, y) (runs, n), (runs,). Returns the predictions (runs,)."""
    az = np.einsum("rij,rj->ri", a_inv, z)
    den = 1 + np.einsum("ri,ri->r", z, az)
    pred = np.einsum("ri,ri->r", az, b) / den
    a_inv -= az[:, :, None] * (az / den[:, None])[:, None, :]
    b += y[:, None] * z
    return pred


def _online_greedy_numpy(runs, horizon, dtype, seed):
    """[KKLP] Alg. 2 on the agnostic stream (Rademacher x, d = 100, y = sign(<w*, x>) flipped
    w.p. 0.1, w* 5-sparse): k1 = 10 BEXPs of budget k0 / k1 = 1 (bins of one coordinate each),
    a batch of B = 4 rounds per draw, VAW by Sherman-Morrison on the chosen coordinates (a repeated
    choice enters once: its later copies are zero columns), each BEXP's batch loss the residual of
    least squares on the earlier BEXPs' coordinates and its own (stacked `numpy.linalg.pinv`: the
    min-norm solution, as `lstsq`), as `numpy_loops.online_greedy_loop` across runs; loss and the
    sign model's loss."""
    from benchmarks.cases import GREEDY_B, GREEDY_D, GREEDY_K0, GREEDY_K1

    rng = np.random.default_rng(seed)
    d, k0, k1, batch = GREEDY_D, GREEDY_K0, GREEDY_K1, GREEDY_B
    assert k0 == k1, "the anchor is written for bins of one coordinate (k0 = k1)"
    rows = np.arange(runs)
    w_star = _sparse_w_star(rng, runs, d, 5, dtype, norm=1)
    n_batches = -(-horizon // batch)
    eta = dtype(math.sqrt(math.log(d) / (d * n_batches)))
    ckpts = checkpoint_rounds(horizon)
    cum = np.zeros((runs, k1, d), dtype)
    loss, loss_star = np.zeros(runs, dtype), np.zeros(runs, dtype)
    buf = np.zeros((2, len(ckpts), runs), dtype)
    xb, yb = np.zeros((runs, batch, k1), dtype), np.zeros((runs, batch), dtype)
    c = 0
    for t in range(horizon):
        if t % batch == 0:
            prob = np.exp(-eta * cum)  # (runs, k1, d), min 0 per BEXP
            arms = np.stack([_categorical(rng, prob[:, i], dtype) for i in range(k1)], 1)
            mass = prob[rows[:, None], np.arange(k1), arms] / prob.sum(2)  # (runs, k1)
            first = np.ones((runs, k1), bool)  # each coordinate's first slot
            for i in range(1, k1):
                first[:, i] = (arms[:, :i] != arms[:, i:i + 1]).all(1)
            a_inv = np.broadcast_to(np.eye(k1, dtype=dtype), (runs, k1, k1)).copy()
            b = np.zeros((runs, k1), dtype)
        x = rng.integers(0, 2, (runs, d)).astype(dtype) * dtype(2) - dtype(1)
        clean = np.where(np.einsum("rd,rd->r", x, w_star) >= 0, dtype(1), dtype(-1))
        y = np.where(rng.random(runs, dtype) < dtype(0.1), -clean, clean)
        xa = x[rows[:, None], arms]  # (runs, k1): the chosen coordinates
        xv = np.where(first, xa, dtype(0))
        pred = _vaw_step(a_inv, b, xv, y)
        loss += (pred - y) ** 2
        loss_star += (clean - y) ** 2
        xb[:, t % batch], yb[:, t % batch] = xa, y
        if t % batch == batch - 1:
            for i in range(k1):  # BEXP i: least squares on the coordinates of BEXPs 0 .. i
                cols = xb[:, :, :i + 1]  # (runs, B, i + 1)
                fit = np.einsum("rbi,ri->rb", cols,
                                np.einsum("rib,rb->ri", np.linalg.pinv(cols), yb))
                lsq = ((yb - fit) ** 2).mean(1)
                cum[rows, i, arms[:, i]] += lsq / mass[:, i]
            cum -= cum.min(2, keepdims=True)
        if t + 1 == ckpts[c]:
            buf[0, c], buf[1, c] = loss, loss_star
            c += 1
    return {"loss": loss, "loss_wstar": loss_star, "ckpt": buf}


def _dantzig_numpy(runs, horizon, dtype, seed, k=5, k0=10, c_lambda=0.3, sigma=0.1,
                   delta=0.1):
    """[KKLP] Alg. 1 on sparse-linear (Rademacher, d = 100, k = 5, ||w*||_1 = 1, sigma 0.1):
    k0 = 10 uniformly queried coordinates a round, the unbiased Gram and correlation estimates
    summed across runs ((runs, d, d)), the Dantzig LPs at the powers of two after
    t0 = ceil(k ln d ln T) solved per run by HiGHS (`scipy.optimize.linprog`, lambda doubled
    until feasible), top-k truncation; as `numpy_loops.dantzig_loop` across runs (the LPs run
    in float64 in both dtypes); loss and the true model's loss."""
    from scipy.optimize import linprog

    rng = np.random.default_rng(seed)
    d = 100
    rows = np.arange(runs)
    w_star = _sparse_w_star(rng, runs, d, k, dtype, norm=1)
    t0 = math.ceil(k * math.log(d) * math.log(horizon))
    ckpts = checkpoint_rounds(horizon)
    gram, xy, w = np.zeros((runs, d, d), dtype), np.zeros((runs, d), dtype), np.zeros(
        (runs, d), dtype)
    loss, loss_star = np.zeros(runs, dtype), np.zeros(runs, dtype)
    buf = np.zeros((2, len(ckpts), runs), dtype)
    off, on = k0 * (d - 1) / (d * (k0 - 1)), k0 / d
    c = 0
    for t in range(horizon):
        t1 = t + 1
        if t1 > t0 and t1 & (t1 - 1) == 0:
            n = t1 - 1
            lam0 = c_lambda * math.sqrt(d * math.log(n * d / delta) / (n * k0)) * (sigma + d / k0)
            for r in rows:
                g = gram[r].astype(np.float64) * off
                g[np.diag_indices(d)] = np.diag(gram[r]) * on
                g /= n
                cr, lam = xy[r].astype(np.float64) / n, lam0
                a_ub = np.block([[g, -g], [-g, g]])
                for _ in range(11):
                    res = linprog(np.ones(2 * d), A_ub=a_ub,
                                  b_ub=np.concatenate([cr + lam, lam - cr]), bounds=(0, None),
                                  method="highs")
                    if res.status == 0:
                        break
                    lam *= 2
                w_hat = res.x[:d] - res.x[d:] if res.status == 0 else np.zeros(d)
                top = np.argsort(-np.abs(w_hat), kind="stable")[:k]
                w[r] = 0
                w[r, top] = w_hat[top]
        x = rng.integers(0, 2, (runs, d)).astype(dtype) * dtype(2) - dtype(1)
        clean = np.einsum("rd,rd->r", x, w_star)
        y = clean + dtype(sigma) * rng.standard_normal(runs, dtype)
        loss += (np.einsum("rd,rd->r", x, w) - y) ** 2
        loss_star += (clean - y) ** 2
        x_hat = np.where(_random_subsets(rng, runs, d, k0), x, dtype(0)) * dtype(d / k0)
        gram += x_hat[:, :, None] * x_hat[:, None, :]
        xy += y[:, None] * x_hat
        if t + 1 == ckpts[c]:
            buf[0, c], buf[1, c] = loss, loss_star
            c += 1
    return {"loss": loss, "loss_wstar": loss_star, "ckpt": buf}


def _ito_projection_numpy(runs, horizon, dtype, seed, k_prime=2):
    """[ITO] Alg. 3 on the E3 stream (d = 10, k = 4, k' = 2) with oslr's Gaussian A (d x 2d,
    ||A||_2 = 1, seed 0, the same in every run): dual averaging in R^2d, then k' = 2 OMP
    iterations on A u-tilde (batched `numpy.linalg.solve` on the support's Gram block), k - k' = 2 uniformly queried
    coordinates of A^T x for the estimate; as `numpy_loops.ito_projection_loop` across runs;
    loss and the true model's loss."""
    from oslr.primitives.projections import projection_matrix

    rng = np.random.default_rng(seed)
    d, k = ITO_D, ITO_K
    m, rows = 2 * d, np.arange(runs)
    w_star = _sparse_w_star(rng, runs, d, k, dtype)
    a = projection_matrix(d).astype(dtype)  # oslr's A: one for every run
    gram = a.T @ a
    norms = np.sqrt(np.diag(gram))
    ckpts = checkpoint_rounds(horizon)
    eta = np.zeros((runs, m), dtype)
    loss, loss_star = np.zeros(runs, dtype), np.zeros(runs, dtype)
    buf = np.zeros((2, len(ckpts), runs), dtype)
    scale, c = dtype(2.0 * m / (k - k_prime)), 0
    for t in range(horizon):
        lam = dtype(math.sqrt(8.0 * m * (t + 1) / (k - k_prime)))
        u_tilde = -eta / np.maximum(lam, np.linalg.norm(eta, axis=1))[:, None]
        atb = u_tilde @ gram  # A^T (A u-tilde)
        u, support = np.zeros((runs, m), dtype), np.zeros((runs, 0), np.int64)
        for _ in range(k_prime):  # OMP
            score = np.abs(atb - u @ gram) / norms
            score[rows[:, None], support] = -np.inf
            support = np.concatenate([support, np.argmax(score, 1)[:, None]], 1)
            block = gram[support[:, :, None], support[:, None, :]]
            coef = np.linalg.solve(block, np.take_along_axis(atb, support, 1)[..., None])[..., 0]
            u = np.zeros((runs, m), dtype)
            u[rows[:, None], support] = coef
        seen = _random_subsets(rng, runs, m, k - k_prime)
        x, y, clean = _sphere_example(rng, runs, d, w_star, dtype)
        values = x @ a
        pred = np.einsum("ri,ri->r", u, values)
        loss += (pred - y) ** 2
        loss_star += (clean - y) ** 2
        eta += np.where(seen, (scale * (pred - y))[:, None] * values, dtype(0))
        if t + 1 == ckpts[c]:
            buf[0, c], buf[1, c] = loss, loss_star
            c += 1
    return {"loss": loss, "loss_wstar": loss_star, "ckpt": buf}


def _ito_block_numpy(runs, horizon, dtype, seed):
    """[ITO] Alg. 1 on the E3 stream (d = 10, k = 4): Exp3 over the C(10, 4) = 210 coordinate
    subsets, one per block of tau = ceil((T / 210)^(1/3)) rounds, VAW on the k observed values
    restarted each block (Sherman-Morrison), the block's mean clipped loss / 4 fed back
    importance-weighted; as `numpy_loops.ito_block_bandit_loop` across runs; loss and the true
    model's loss."""
    import itertools

    rng = np.random.default_rng(seed)
    d, k = ITO_D, ITO_K
    table = np.array(list(itertools.combinations(range(d), k)))
    n_arms, rows = len(table), np.arange(runs)
    w_star = _sparse_w_star(rng, runs, d, k, dtype)
    block = max(1, math.ceil((horizon / n_arms) ** (1 / 3)))
    eta = dtype(math.sqrt(2.0 * math.log(n_arms) / (-(-horizon // block) * n_arms)))
    ckpts = checkpoint_rounds(horizon)
    cum = np.zeros((runs, n_arms), dtype)
    loss, loss_star = np.zeros(runs, dtype), np.zeros(runs, dtype)
    buf = np.zeros((2, len(ckpts), runs), dtype)
    c = 0
    for t in range(horizon):
        if t % block == 0:
            prob = np.exp(-eta * (cum - cum.min(1, keepdims=True)))
            arm = _categorical(rng, prob, dtype)
            p_arm = prob[rows, arm] / prob.sum(1)
            a_inv = np.broadcast_to(np.eye(k, dtype=dtype), (runs, k, k)).copy()
            b, block_loss = np.zeros((runs, k), dtype), np.zeros(runs, dtype)
        x, y, clean = _sphere_example(rng, runs, d, w_star, dtype)
        z = x[rows[:, None], table[arm]]
        pred = _vaw_step(a_inv, b, z, y)
        loss += (pred - y) ** 2
        loss_star += (clean - y) ** 2
        block_loss += (np.clip(pred, -1, 1) - y) ** 2 / dtype(4 * block)
        if t % block == block - 1:
            cum[rows, arm] += block_loss / p_arm
        if t + 1 == ckpts[c]:
            buf[0, c], buf[1, c] = loss, loss_star
            c += 1
    return {"loss": loss, "loss_wstar": loss_star, "ckpt": buf}


_NUMPY = {"ogd-full": _ogd_numpy, "ogd-random-subset": _ogd_subset_numpy,
          "uniform-subset": _uniform_numpy, "eps-greedy": _eps_greedy_numpy,
          "linucb": _linucb_numpy, "ftpsl": _ftpsl_numpy, "ftpsl-delayed": _ftpsl_delayed_numpy,
          "ftpl-random-subset": _ftpl_subset_numpy, "ftpl-oracle-subset": _ftpl_oracle_numpy,
          "ito-dual-averaging": _ito_da_numpy, "pege": _pege_numpy, "fpege-gd": _fpege_numpy,
          "ftpsl-knapsack": _ftpsl_knapsack_numpy, "flinucb-gd": _flinucb_numpy,
          "flinucb-svrg": _flinucb_svrg_numpy, "flinucb-sag": _flinucb_sag_numpy,
          "foster-hedge": _foster_numpy, "online-greedy": _online_greedy_numpy,
          "dantzig-poslr": _dantzig_numpy, "ito-projection": _ito_projection_numpy,
          "ito-block-bandit": _ito_block_numpy}


NUMPY_NAMES = tuple(_NUMPY)

#: rows whose anchors are timed over fewer rounds than the row's T (a call of 2,000 rounds takes
#: 18 s): their cost per round does not depend on t, so run-rounds/s is the same
TIMED_ROUNDS = {"foster-hedge": 400}


def timed_horizon(name: str, horizon: int) -> int:
    """The rounds of `name`'s anchor calls in the benchmark: `horizon`, or less (TIMED_ROUNDS)."""
    return min(horizon, TIMED_ROUNDS.get(name, horizon))


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


__all__ = ["NAMES", "NUMPY_NAMES", "TIMED_ROUNDS", "ftpsl_rates", "numba_batched",
           "numpy_batched", "timed_horizon"]
