"""Float64 NumPy per-round references of [ITO] Algorithms 1-3, written from the pseudocode and
fed the learner's draws (subsets, uniforms)."""

import numpy as np

from tests.reference.online_greedy import draw_index
from tests.reference.sparse_approx import omp_reference


def da_point(h, lam, radius):
    return -h / max(lam, np.linalg.norm(h) / radius)


def dual_averaging_reference(xs, ys, samples, k, radius=1.0, lam_scale=1.0):
    """Alg. 2. samples: (T, d) bool, S_t. Returns predictions (T,), final h."""
    xs, ys = np.asarray(xs, np.float64), np.asarray(ys, np.float64)
    n_rounds, d = xs.shape
    h = np.zeros(d)
    preds = np.zeros(n_rounds)
    for t in range(n_rounds):
        lam = lam_scale * np.sqrt(8 * d * (t + 1) / (k - 1))
        w = da_point(h, lam, radius)
        preds[t] = w @ xs[t]
        s = samples[t]
        h += 2 * d / (k - 1) * (preds[t] - ys[t]) * np.where(s, xs[t], 0.0)
    return preds, h


def projection_reference(xs, ys, a, explores, k, k_prime, radius=1.0, lam_scale=1.0):
    """Alg. 3 with OMP. explores: (T, m) bool, S_t. Returns predictions (T,), the observed sets
    (T, m) bool, the approximation errors (T,), final eta."""
    xs, ys, a = (np.asarray(v, np.float64) for v in (xs, ys, a))
    n_rounds, _ = xs.shape
    m = a.shape[1]
    eta = np.zeros(m)
    preds, errs = np.zeros(n_rounds), np.zeros(n_rounds)
    used = np.zeros((n_rounds, m), bool)
    for t in range(n_rounds):
        lam = lam_scale * np.sqrt(8 * m * (t + 1) / (k - k_prime))
        u_tilde = da_point(eta, lam, radius)
        u, _ = omp_reference(a, a @ u_tilde, k_prime)
        errs[t] = np.linalg.norm(a @ (u_tilde - u))
        values = a.T @ xs[t]
        used[t] = (u != 0) | explores[t]
        preds[t] = u @ values
        eta += 2 * m / (k - k_prime) * (preds[t] - ys[t]) * np.where(explores[t], values, 0.0)
    return preds, used, errs, eta


def block_bandit_reference(xs, ys, table, uniforms, block, eta, a=1.0):
    """Alg. 1 with Exp3 and VAW over coordinate subsets. table: (K, k); uniforms: (T,) the
    Exp3 draw uniform of each round (read at the block starts). Returns predictions (T,), arms
    (T,), final shifted L-hat (K,)."""
    xs, ys = np.asarray(xs, np.float64), np.asarray(ys, np.float64)
    n_rounds = len(xs)
    n_arms, k = table.shape
    cum = np.zeros(n_arms)
    preds, arms = np.zeros(n_rounds), np.zeros(n_rounds, int)
    for t in range(n_rounds):
        if t % block == 0:
            p = np.exp(-eta * (cum - cum.min()))
            p /= p.sum()
            arm = draw_index(p, uniforms[t])
            prob = p[arm]
            big_a, b, block_loss = a * np.eye(k), np.zeros(k), 0.0
        z = xs[t, table[arm]]
        big_a += np.outer(z, z)
        preds[t] = z @ np.linalg.solve(big_a, b)
        b += ys[t] * z
        arms[t] = arm
        block_loss += (np.clip(preds[t], -1, 1) - ys[t]) ** 2 / 4 / block
        if t % block == block - 1:
            cum[arm] += block_loss / prob
            cum -= cum.min()
    return preds, arms, cum
