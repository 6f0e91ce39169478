"""Float64 NumPy per-round loops of the reference learners, including the synthetic stream.

One run each; the benchmark divides their time per round into the vmapped JAX time per run-round.
"""

from __future__ import annotations

import math

import numpy as np


def _stream(rng, d, w):
    x = rng.normal(size=d)
    return x, x @ w + 0.1 * rng.normal()


def ogd_loop(d: int, k: int, horizon: int, full: bool, seed: int = 0) -> float:
    """Projected OGD (full information or a random k-subset); returns the cumulative loss."""
    rng = np.random.default_rng(seed)
    w_star = np.zeros(d)
    w_star[rng.choice(d, 3, replace=False)] = rng.normal(size=3)
    w_star /= np.abs(w_star).sum()
    w = np.zeros(d)
    eta = 0.5 / d
    total = 0.0
    for t in range(horizon):
        x, y = _stream(rng, d, w_star)
        if not full:
            mask = np.zeros(d, bool)
            mask[rng.choice(d, k, replace=False)] = True
            x = np.where(mask, x, 0.0)
        pred = w @ x
        total += (pred - y) ** 2
        w -= eta / np.sqrt(t + 1) * 2 * (pred - y) * x
        n = np.linalg.norm(w)
        if n > 1.0:
            w /= n
    return total


def uniform_loop(d: int, k: int, horizon: int, seed: int = 0) -> float:
    """Uniform random k-subset play on the sparse-linear stream; returns the cumulative reward."""
    rng = np.random.default_rng(seed)
    w_star = rng.normal(size=d) / d
    total = 0.0
    for _ in range(horizon):
        x, y = _stream(rng, d, w_star)
        q = rng.choice(d, k, replace=False)
        total += y * x[q].sum() * k**-0.5
    return total


def eps_greedy_loop(d: int, n_arms: int, horizon: int, seed: int = 0) -> float:
    """Epsilon-greedy ridge LS with Sherman-Morrison; returns the pseudo-regret."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=d)
    theta /= np.linalg.norm(theta)
    arms = rng.normal(size=(n_arms, d))
    arms /= np.linalg.norm(arms, axis=1, keepdims=True)
    means = arms @ theta
    a_inv = np.eye(d)
    b = np.zeros(d)
    regret = 0.0
    for _ in range(horizon):
        est = a_inv @ b
        arm = rng.integers(n_arms) if rng.random() < 0.1 else int(np.argmax(arms @ est))
        r = means[arm] + rng.uniform(-0.5, 0.5)
        x = arms[arm]
        u = a_inv @ x
        a_inv -= np.outer(u, u) / (1.0 + x @ u)
        b += r * x
        regret += means.max() - means[arm]
    return regret


def knapsack_dp(values: np.ndarray, costs: np.ndarray, budget: int) -> np.ndarray:
    """Exact 0/1 knapsack by dynamic programming over capacities (integer costs); (d,) bool."""
    d = len(values)
    best = np.zeros(budget + 1)
    take = np.zeros((d, budget + 1), bool)
    caps = np.arange(budget + 1)
    for i in range(d):
        shifted = np.where(caps >= costs[i], best[np.maximum(caps - costs[i], 0)] + values[i],
                           -np.inf)
        take[i] = shifted > best
        best = np.where(take[i], shifted, best)
    chosen, cap = np.zeros(d, bool), budget
    for i in range(d - 1, -1, -1):
        if take[i, cap]:
            chosen[i], cap = True, cap - costs[i]
    return chosen


def ftpsl_loop(x: np.ndarray, y: np.ndarray, k: int, horizon: int, n_resamples: int = 10,
               seed: int = 0, delay: int = 1, costs: np.ndarray | None = None,
               budget: int | None = None, c0: float = 1.0) -> float:
    """FTPSL (b = 2, eq. (1) rates, shared geometric resampling) replaying rows of (x, y).

    `delay` > 1: every estimate arrives `delay` rounds late (ftpsl-delayed, fixed schedule;
    give its default c0 = 2). `c0`: the exploration constant, gamma = min(c0 d eta ln T, 1/2).
    `costs`, `budget`: the knapsack leader (exact DP) and a random-order greedy fill when
    exploring (ftpsl-knapsack). Returns the cumulative reward sum_t y_t <w_t, x_t>.
    """
    rng = np.random.default_rng(seed)
    n, d = x.shape
    log_t = max(np.log(horizon), 1.0)
    eta = np.sqrt(k**0.5 * np.log(d) / (d**2 * horizon * log_t))
    gamma = min(c0 * d * eta * log_t, 0.5)
    s = np.zeros(d)
    total = 0.0

    def draw():
        z = rng.laplace(size=d)
        if costs is not None:
            if rng.random() < gamma:
                used, q = 0, []
                for i in np.argsort(-z):
                    if used + costs[i] <= budget:
                        used += costs[i]
                        q.append(i)
                return np.array(q), np.full(len(q), len(q) ** -0.5)
            v = eta * s - z
            mag = np.abs(v)
            q = np.flatnonzero(knapsack_dp((mag / mag.max()) ** 2, costs, budget))
            return q, -v[q] / np.linalg.norm(v[q])
        if rng.random() < gamma:
            q = np.argpartition(-z, k)[:k]
            return q, np.full(k, k**-0.5)
        v = eta * s - z
        q = np.argpartition(-np.abs(v), k)[:k]
        return q, -v[q] / np.linalg.norm(v[q])

    pending = np.zeros((delay, d))

    order = rng.permutation(n)
    for t in range(horizon):
        row = order[t % n]
        xt, yt = x[row], y[row]
        q, wq = draw()
        total += yt * xt[q] @ wq
        h = np.full(d, n_resamples)
        seen = np.zeros(d, bool)
        for m in range(1, n_resamples + 1):
            qm, _ = draw()
            new = np.zeros(d, bool)
            new[qm] = True
            new &= ~seen
            h[new] = m
            seen |= new
        pending[(t + delay - 1) % delay, q] += -yt * xt[q] * h[q]
        s += pending[t % delay]
        pending[t % delay] = 0.0
    return total


def ftpl_subset_loop(x: np.ndarray, y: np.ndarray, k: int, horizon: int, seed: int = 0,
                     subset: np.ndarray | None = None) -> float:
    """FTPL on a k-subset fixed before round 1 (b = 2): uniformly random, or the given indices
    (the offline oracle subset, computed once outside the loop). Returns the cumulative reward."""
    rng = np.random.default_rng(seed)
    n, d = x.shape
    log_t = max(np.log(horizon), 1.0)
    eta = np.sqrt(k**0.5 * np.log(d) / (d**2 * horizon * log_t))
    q = rng.choice(d, k, replace=False) if subset is None else np.asarray(subset)
    s = np.zeros(k)
    total = 0.0
    order = rng.permutation(n)
    for t in range(horizon):
        row = order[t % n]
        v = eta * s - rng.laplace(size=k)
        w = -v / np.linalg.norm(v)
        xq = x[row, q]
        total += y[row] * xq @ w
        s += -y[row] * xq
    return total


def _bandit(rng, d, n_arms):
    theta = rng.normal(size=d)
    theta /= np.linalg.norm(theta)
    arms = rng.normal(size=(n_arms, d))
    arms /= np.linalg.norm(arms, axis=1, keepdims=True)
    return theta, arms


def linucb_loop(d: int, n_arms: int, horizon: int, kappa: float = 1.0, seed: int = 0) -> float:
    """LinUCB (float64), fixed arms, in oslr's O(K d) form (`oslr.learners.linucb`): u_a =
    A^{-1} x_a, the widths and the means updated by Sherman-Morrison; pseudo-regret."""
    rng = np.random.default_rng(seed)
    theta, arms = _bandit(rng, d, n_arms)
    means = arms @ theta
    u = arms.copy()  # A = I
    width, mean = np.sum(u * arms, axis=1), np.zeros(n_arms)
    regret = 0.0
    for _ in range(horizon):
        arm = int(np.argmax(mean + kappa * np.sqrt(np.maximum(width, 0.0))))
        r = means[arm] + rng.uniform(-0.5, 0.5)
        v, denom = u[arm].copy(), 1.0 + max(width[arm], 0.0)
        c = arms @ v
        u -= np.outer(c, v) / denom
        width -= c * c / denom
        mean += c * (r - mean[arm]) / denom
        regret += means.max() - means[arm]
    return regret


def flinucb_loop(d: int, n_arms: int, horizon: int, tracker: str = "gd", kappa: float = 1.0,
                 alpha: float = 0.75, seed: int = 0) -> float:
    """fLinUCB ([KPM] Alg. 2, float64), fixed arms, arm-index history; pseudo-regret.

    The confidence widths follow the SGD trackers phi of (11); the estimate is fRLS-GD
    (`tracker="gd"`, c n^-alpha steps), SVRG (snapshot when t + 1 is a power of two, step 0.1 / L)
    or SAG (one stored residual per sample, step 1 / L), each with lam_n = n^-(1 - alpha).
    """
    rng = np.random.default_rng(seed)
    theta_star, arms = _bandit(rng, d, n_arms)
    means = arms @ theta_star
    theta, phi = np.zeros(d), np.zeros((n_arms, d))
    hist_arm, hist_r = np.zeros(horizon, int), np.zeros(horizon)
    snap, mu, resid, g_sum, lmax = np.zeros(d), np.zeros(d), np.zeros(horizon), np.zeros(d), 0.0
    regret = 0.0
    for n in range(horizon):
        if n > 0:
            xi = arms[hist_arm[rng.integers(n)]]
            g, lam = n**-alpha, n ** (alpha - 1.0)
            phi += g * (arms / n - np.outer(phi @ xi, xi) - lam * phi)
        ucb = arms @ theta + kappa * np.sqrt(np.maximum(np.sum(phi * arms, 1), 0.0))
        arm = int(np.argmax(ucb))
        x_new, y_new = arms[arm], means[arm] + rng.uniform(-0.5, 0.5)
        hist_arm[n], hist_r[n] = arm, y_new
        i = rng.integers(n + 1)
        x, y = arms[hist_arm[i]], hist_r[i]
        lam = (n + 1) ** (alpha - 1.0)
        if tracker == "gd":
            theta += (n + 1) ** -alpha * ((y - theta @ x) * x - lam * theta)
        elif tracker == "svrg":
            mu += (-(y_new - snap @ x_new) * x_new - mu) / (n + 1)
            lmax = max(lmax, x_new @ x_new)
            g = -(y - theta @ x) * x + (y - snap @ x) * x + mu
            theta = theta - 0.1 / (lmax + lam) * (g + lam * theta)
            if (n + 1) & n == 0:
                snap = theta.copy()
                xs, ys = arms[hist_arm[: n + 1]], hist_r[: n + 1]
                mu = -((ys - xs @ snap)[:, None] * xs).mean(0)
        else:  # sag
            r_new = y_new - theta @ x_new
            g_sum -= (r_new - resid[n]) * x_new
            resid[n] = r_new
            lmax = max(lmax, x_new @ x_new)
            r = y - theta @ x
            g_sum -= (r - resid[i]) * x
            resid[i] = r
            theta = theta - 1.0 / (lmax + lam) * (g_sum / (n + 1) + lam * theta)
        regret += means.max() - means[arm]
    return regret


def pege_loop(d: int, horizon: int, seed: int = 0, fast: bool = False) -> float:
    """PEGE on the unit sphere with basis e_i (float64); `fast`: fPEGE-GD, the estimate moved by
    one fOLS-GD step per exploration sample (step c / (4 (c + n)), c = 6d, as `fpege-gd`).
    Returns the regret."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=d)
    theta /= np.linalg.norm(theta)
    sums, counts = np.zeros(d), np.zeros(d)
    hist_i, hist_r, n, est_gd, c = np.zeros(horizon, int), np.zeros(horizon), 0, np.zeros(d), 6 * d
    regret, t, m = 0.0, 0, 1
    while t < horizon:
        for i in range(d):
            if t == horizon:
                break
            r = theta[i] + rng.uniform(-1, 1)
            sums[i] += r
            counts[i] += 1
            if fast:
                hist_i[n], hist_r[n] = i, r
                n += 1
                j = rng.integers(n)
                est_gd[hist_i[j]] += c / (4.0 * (c + n)) * (hist_r[j] - est_gd[hist_i[j]])
            regret += 1.0 - theta[i]
            t += 1
        est = est_gd if fast else sums / np.maximum(counts, 1)
        x = est / max(np.linalg.norm(est), 1e-12)
        for _ in range(m):
            if t == horizon:
                break
            _ = x @ theta + rng.uniform(-1, 1)
            regret += 1.0 - x @ theta
            t += 1
        m += 1
    return regret


def foster_loop(d: int, k: int, k_query: int, horizon: int, seed: int = 0) -> float:
    """[FKK] Alg. 1, NumPy-vectorised over the C(d, k) subsets (a careful NumPy user's loop:
    per round one softmax draw, the O(N k) costs and SGD steps as whole-array operations) on the
    sphere stream with clipped labels; returns the cumulative loss."""
    import itertools
    import math

    rng = np.random.default_rng(seed)
    table = np.array(list(itertools.combinations(range(d), k)))
    n = len(table)
    w_star = np.zeros(d)
    w_star[rng.choice(d, k, replace=False)] = rng.normal(size=k)
    w_star /= np.linalg.norm(w_star)
    m = k_query - k
    p, q = m / d, m * (m - 1) / (d * (d - 1))
    eta_h, eta_s = q * math.sqrt(math.log(d) / horizon), q / math.sqrt(horizon)
    cum = np.zeros(n)
    w = np.zeros((n, k))
    total = 0.0
    for _ in range(horizon):
        x = rng.normal(size=d)
        x /= np.linalg.norm(x)
        y = float(np.clip(x @ w_star + 0.1 * rng.normal(), -1.0, 1.0))
        logits = -eta_h * cum
        prob = np.exp(logits - logits.max())
        arm = rng.choice(n, p=prob / prob.sum())
        pred = w[arm] @ x[table[arm]]
        total += (pred - y) ** 2
        r = np.zeros(d, bool)
        r[rng.choice(d, m, replace=False)] = True
        xs = np.where(r, x, 0.0)[table]
        a = np.einsum("nk,nk->n", xs, w)
        diag = 1 / p - 1 / q
        cum += a * a / q + diag * np.einsum("nk,nk->n", xs * xs, w * w) - 2 * y * a / p + y * y
        cum -= cum.min()
        w -= 2 * eta_s * (xs * a[:, None] / q + diag * xs * xs * w - y * xs / p)
        norm = np.linalg.norm(w, axis=1, keepdims=True)
        w *= np.minimum(1.0, 1.0 / np.maximum(norm, 1e-30))
    return total


def online_greedy_loop(d: int, k0: int, k1: int, batch: int, horizon: int,
                       seed: int = 0) -> float:
    """[KKLP] Alg. 2 on a Rademacher design with sign labels of a 5-sparse w* (the agnostic
    stream): k1 BEXPs with budgets k0 // k1 (+1 for the first k0 % k1), VAW by Sherman-Morrison
    on the chosen coordinates, batch losses by `numpy.linalg.lstsq`; returns the cumulative
    loss."""
    rng = np.random.default_rng(seed)
    w_star = np.zeros(d)
    w_star[rng.choice(d, 5, replace=False)] = rng.normal(size=5)
    m = [k0 // k1 + (i < k0 % k1) for i in range(k1)]
    bins = [np.argsort(rng.permutation(d)) // mi for mi in m]
    n_batches = -(-horizon // batch)
    etas = [np.sqrt(np.log(d) / (-(-d // mi) * n_batches)) for mi in m]
    cum = np.zeros((k1, d))
    total = 0.0
    for t in range(horizon):
        if t % batch == 0:
            arms, sets, mass = [], [], []
            for i in range(k1):
                p = np.exp(-etas[i] * cum[i])
                p /= p.sum()
                j = rng.choice(d, p=p)
                u = bins[i] == bins[i][j]
                arms.append(j), sets.append(u), mass.append(p[u].sum())
            s_idx = np.nonzero(np.any(sets, axis=0))[0]
            v_idx = np.array(sorted(set(arms)))
            a_inv, b = np.eye(len(v_idx)), np.zeros(len(v_idx))
            rows, labels = [], []
        x = rng.choice([-1.0, 1.0], size=d)
        y = 1.0 if x @ w_star >= 0 else -1.0
        y = -y if rng.random() < 0.1 else y
        xv = x[v_idx]
        ax = a_inv @ xv
        pred = (ax @ b) / (1.0 + xv @ ax)
        total += (pred - y) ** 2
        a_inv -= np.outer(ax, ax) / (1.0 + xv @ ax)
        b += y * xv
        rows.append(x[s_idx]), labels.append(y)
        if t % batch == batch - 1:
            xb, yb = np.array(rows), np.array(labels)
            col = {int(c): n for n, c in enumerate(s_idx)}
            for i in range(k1):
                for j in np.nonzero(sets[i])[0]:
                    cols = [col[c] for c in sorted(set(arms[:i]) | {int(j)})]
                    w = np.linalg.lstsq(xb[:, cols], yb, rcond=None)[0]
                    cum[i, j] += np.sum((yb - xb[:, cols] @ w) ** 2) / len(yb) / mass[i]
                cum[i] -= cum[i].min()
    return total


def dantzig_loop(d: int, k: int, k0: int, horizon: int, seed: int = 0, c_lambda: float = 0.3,
                 sigma: float = 0.1, delta: float = 0.1) -> float:
    """[KKLP] Alg. 1 on a Rademacher design with a k-sparse w*, ||w*||_1 = 1 and noise sigma:
    the unbiased Gram estimate, the LPs at powers of two after t0 = ceil(k ln d ln T) solved by
    HiGHS (`scipy.optimize.linprog`, a C++ simplex / IPM: a strong baseline), top-k truncation;
    returns the cumulative loss."""
    import math

    from scipy.optimize import linprog

    rng = np.random.default_rng(seed)
    w_star = np.zeros(d)
    w_star[rng.choice(d, k, replace=False)] = rng.normal(size=k)
    w_star /= np.abs(w_star).sum()
    t0 = math.ceil(k * math.log(d) * math.log(horizon))
    gram, xy, w = np.zeros((d, d)), np.zeros(d), np.zeros(d)
    total = 0.0
    for t in range(horizon):
        t1 = t + 1
        if t1 > t0 and t1 & (t1 - 1) == 0:
            n = t1 - 1
            diag = np.diag(gram).copy()
            g = gram * (k0 * (d - 1) / (d * (k0 - 1)))
            g[np.diag_indices(d)] = diag * k0 / d
            g /= n
            c = xy / n
            lam = c_lambda * math.sqrt(d * math.log(n * d / delta) / (n * k0)) * (sigma + d / k0)
            a_ub = np.block([[g, -g], [-g, g]])
            for _ in range(11):
                res = linprog(np.ones(2 * d), A_ub=a_ub, b_ub=np.concatenate([c + lam, lam - c]),
                              bounds=(0, None), method="highs")
                if res.status == 0:
                    break
                lam *= 2
            w_hat = res.x[:d] - res.x[d:] if res.status == 0 else np.zeros(d)
            top = np.argsort(-np.abs(w_hat), kind="stable")[:k]
            w = np.zeros(d)
            w[top] = w_hat[top]
        x = rng.choice([-1.0, 1.0], size=d)
        y = x @ w_star + sigma * rng.normal()
        total += (x @ w - y) ** 2
        explore = np.zeros(d, bool)
        explore[rng.choice(d, k0, replace=False)] = True
        x_hat = np.where(explore, x, 0.0) * d / k0
        gram += np.outer(x_hat, x_hat)
        xy += y * x_hat
    return total


def _sphere_stream(rng, d, w_star, sigma=0.1):
    x = rng.normal(size=d)
    x /= np.linalg.norm(x)
    return x, float(np.clip(x @ w_star + sigma * rng.normal(), -1.0, 1.0))


def _ito_w_star(rng, d, k):
    w = np.zeros(d)
    w[rng.choice(d, k, replace=False)] = rng.normal(size=k)
    return w / np.linalg.norm(w)


def ito_dual_averaging_loop(d: int, k: int, horizon: int, seed: int = 0) -> float:
    """[ITO] Alg. 2 on the E3 stream: dual averaging on the (k - 1)-coordinate gradient
    estimate, radius 1; returns the cumulative loss."""
    rng = np.random.default_rng(seed)
    w_star = _ito_w_star(rng, d, k)
    h, total = np.zeros(d), 0.0
    for t in range(horizon):
        lam = np.sqrt(8.0 * d * (t + 1) / (k - 1))
        w = -h / max(lam, np.linalg.norm(h))
        s = rng.choice(d, k - 1, replace=False)
        x, y = _sphere_stream(rng, d, w_star)
        pred = w @ x
        total += (pred - y) ** 2
        h[s] += 2.0 * d / (k - 1) * (pred - y) * x[s]
    return total


def _omp(a, gram, b, s):
    norms = np.sqrt(np.diag(gram))
    atb = a.T @ b
    support, u = [], np.zeros(a.shape[1])
    for _ in range(s):
        score = np.abs(atb - gram @ u) / norms
        score[support] = -np.inf
        support.append(int(np.argmax(score)))
        u = np.zeros(a.shape[1])
        u[support] = np.linalg.solve(gram[np.ix_(support, support)], atb[support])
    return u


def ito_projection_loop(d: int, k: int, k_prime: int, horizon: int, seed: int = 0) -> float:
    """[ITO] Alg. 3 on the E3 stream with oslr's Gaussian A (d x 2d, ||A||_2 = 1, seed 0): OMP
    every round; returns the cumulative loss."""
    from oslr.primitives.projections import projection_matrix

    rng = np.random.default_rng(seed)
    w_star = _ito_w_star(rng, d, k)
    a = projection_matrix(d).astype(np.float64)
    m = a.shape[1]
    gram = a.T @ a
    eta, total = np.zeros(m), 0.0
    for t in range(horizon):
        lam = np.sqrt(8.0 * m * (t + 1) / (k - k_prime))
        u_tilde = -eta / max(lam, np.linalg.norm(eta))
        u = _omp(a, gram, a @ u_tilde, k_prime)
        s = rng.choice(m, k - k_prime, replace=False)
        x, y = _sphere_stream(rng, d, w_star)
        values = a.T @ x  # only supp(u) and s are read
        pred = u @ values
        total += (pred - y) ** 2
        eta[s] += 2.0 * m / (k - k_prime) * (pred - y) * values[s]
    return total


def ito_block_bandit_loop(d: int, k: int, horizon: int, seed: int = 0) -> float:
    """[ITO] Alg. 1 on the E3 stream: Exp3 over the C(d, k) coordinate subsets per block of
    tau = ceil((T / K)^(1/3)) rounds, VAW (Sherman-Morrison) restarted each block; returns the
    cumulative loss."""
    import itertools

    rng = np.random.default_rng(seed)
    w_star = _ito_w_star(rng, d, k)
    table = np.array(list(itertools.combinations(range(d), k)))
    n_arms = len(table)
    block = max(1, math.ceil((horizon / n_arms) ** (1 / 3)))
    eta = np.sqrt(2.0 * np.log(n_arms) / (-(-horizon // block) * n_arms))
    cum, total = np.zeros(n_arms), 0.0
    for t in range(horizon):
        if t % block == 0:
            p = np.exp(-eta * (cum - cum.min()))
            p /= p.sum()
            arm = rng.choice(n_arms, p=p)
            a_inv, b, block_loss = np.eye(k), np.zeros(k), 0.0
        x, y = _sphere_stream(rng, d, w_star)
        z = x[table[arm]]
        az = a_inv @ z
        pred = (az @ b) / (1.0 + z @ az)
        total += (pred - y) ** 2
        a_inv -= np.outer(az, az) / (1.0 + z @ az)
        b += y * z
        block_loss += (np.clip(pred, -1, 1) - y) ** 2 / 4.0 / block
        if t % block == block - 1:
            cum[arm] += block_loss / p[arm]
    return total


def mabwiser_linucb_loop(d: int, n_arms: int, horizon: int, seed: int = 0) -> float | None:
    """The peer: mabwiser's LinUCB (one ridge model per arm on the shared context, its design),
    online: predict then partial_fit each round. None when mabwiser is not installed (it is a
    benchmark-only dependency: `pip install mabwiser`). Returns the pseudo-regret."""
    try:
        from mabwiser.mab import MAB, LearningPolicy
    except ImportError:
        return None
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=(n_arms, d))
    theta /= np.linalg.norm(theta, axis=1, keepdims=True)
    mab = MAB(arms=list(range(n_arms)), learning_policy=LearningPolicy.LinUCB(alpha=1.0),
              seed=seed)
    ctx = rng.normal(size=(n_arms, d)) / np.sqrt(d)
    mab.fit(decisions=list(range(n_arms)), rewards=[0.0] * n_arms, contexts=ctx)
    regret = 0.0
    for _ in range(horizon):
        c = rng.normal(size=d) / np.sqrt(d)
        means = theta @ c
        arm = mab.predict([c])
        mab.partial_fit([arm], [means[arm] + rng.uniform(-0.5, 0.5)], [c])
        regret += means.max() - means[arm]
    return regret


def _shared_context_stream(d: int, n_arms: int, seed: int):
    """The peers' stream (as `mabwiser_linucb_loop`): one unit theta per arm, a shared Gaussian
    context c ~ N(0, I/d) per round, reward theta_a^T c + U(-0.5, 0.5)."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=(n_arms, d))
    theta /= np.linalg.norm(theta, axis=1, keepdims=True)
    return rng, theta


def river_linucb_loop(d: int, n_arms: int, horizon: int, seed: int = 0) -> float | None:
    """The peer: river's `bandit.LinUCBDisjoint` (one Bayesian linear regression per arm on the
    shared context, updated online; contexts are dicts). None when river is not installed (a
    benchmark-only dependency: `pip install river`). Returns the pseudo-regret."""
    try:
        from river import bandit
    except ImportError:
        return None
    rng, theta = _shared_context_stream(d, n_arms, seed)
    policy = bandit.LinUCBDisjoint(alpha=1.0, seed=seed)
    arms = list(range(n_arms))
    names = [f"x{j}" for j in range(d)]
    regret = 0.0
    for _ in range(horizon):
        c = rng.normal(size=d) / np.sqrt(d)
        means = theta @ c
        ctx = dict(zip(names, c.tolist()))
        arm = policy.pull(arms, context=ctx)
        policy.update(arm, ctx, float(means[arm] + rng.uniform(-0.5, 0.5)))
        regret += means.max() - means[arm]
    return regret


def vw_squarecb_loop(d: int, n_arms: int, horizon: int, seed: int = 0) -> float | None:
    """The peer for throughput only: Vowpal Wabbit's contextual bandit (`--cb_explore_adf
    --squarecb`, another exploration algorithm than LinUCB, C++ engine) on the same stream, one
    action-dependent-features example per round (shared context, one indicator line per arm,
    context x arm interactions), predict then learn the cost -reward of the sampled arm. None
    when vowpalwabbit is not installed. Returns the pseudo-regret."""
    try:
        import vowpalwabbit
    except ImportError:
        return None
    rng, theta = _shared_context_stream(d, n_arms, seed)
    vw = vowpalwabbit.Workspace(f"--cb_explore_adf --squarecb -q sa --quiet --random_seed {seed}")
    actions = [f"|a arm{a}" for a in range(n_arms)]
    regret = 0.0
    for _ in range(horizon):
        c = rng.normal(size=d) / np.sqrt(d)
        means = theta @ c
        shared = "shared |s " + " ".join(f"{j}:{v:.6f}" for j, v in enumerate(c))
        pmf = np.asarray(vw.predict([shared, *actions]), np.float64)
        arm = int(rng.choice(n_arms, p=pmf / pmf.sum()))
        cost = -float(means[arm] + rng.uniform(-0.5, 0.5))
        lines = [shared] + [(f"0:{cost}:{pmf[a]} " if a == arm else "") + actions[a]
                            for a in range(n_arms)]
        vw.learn(lines)
        regret += means.max() - means[arm]
    vw.finish()
    return regret
