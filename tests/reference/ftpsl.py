"""Float64 NumPy per-round reference of FTPSL ([WLL] Algorithms 1-2), fed given random draws."""

import math

import numpy as np


def rates(k, d, horizon, b, eta_scale=1.0, c0=1.0, gamma_max=0.5):
    e = 1.0 if math.isinf(b) else (b - 1.0) / b
    log_t = max(math.log(horizon), 1.0)
    eta = eta_scale * math.sqrt(k**e * math.log(d) / (d**2 * horizon * log_t))
    return eta, min(c0 * d * eta * log_t, gamma_max)


def top_k(values, k):
    """Indices of the k largest values (ties to the lower index)."""
    return np.argsort(-np.asarray(values), kind="stable")[:k]


def oracle(v, k, b):
    """Lemma 1: argmin over K_{k,b} of <w, v>."""
    d = len(v)
    w = np.zeros(d)
    if b == 1.0:
        i = int(np.argmax(np.abs(v)))
        w[i] = -np.sign(v[i])
        return w, np.isin(np.arange(d), [i])
    q = top_k(np.abs(v), k)
    if math.isinf(b):
        w[q] = -np.sign(v[q])
    else:
        a = b / (b - 1.0)
        w[q] = -np.sign(v[q]) * np.abs(v[q]) ** (a - 1) / np.sum(np.abs(v[q]) ** a) ** (1 / b)
    return w, np.isin(np.arange(d), q)


def draw(s, z, u_coin, k, b, eta, gamma):
    """One play of eq. (2) from the given coin uniform and perturbation.

    Exploring, the uniform k-subset is top_k(z) (z i.i.d. continuous, so exchangeable), as in the
    learner.
    """
    d = len(s)
    if u_coin < gamma:
        q = np.isin(np.arange(d), top_k(z, k))
        scale = 1.0 if math.isinf(b) else k ** (-1.0 / b)
        return np.where(q, scale, 0.0), q
    return oracle(eta * s - z, k, b)


def ftpsl_reference(xs, ys, draws, k, horizon, b, n_resamples, eta_scale=1.0, c0=1.0,
                    delays=None):
    """Run FTPSL on a stream with the given draws.

    Args:
      xs: (T, d); ys: (T,).
      draws: dict of arrays 'z' (T, 1 + M, d) and 'u_coin' (T, 1 + M); index 0 is the play, 1..M
        the geometric-resampling draws (shared mode).
      k, horizon, b, n_resamples, eta_scale, c0: as the learner.
      delays: optional (T,) D_t >= 1; the estimate of round t joins S from round t + D_t on
        ([WLL] section 4.1). None = no delay.

    Returns:
      plays (T, d) and the final S (d,).
    """
    xs = np.asarray(xs, np.float64)
    d = xs.shape[1]
    eta, gamma = rates(k, d, horizon, b, eta_scale=eta_scale, c0=c0)
    s = np.zeros(d)
    plays = np.zeros_like(xs)
    parked = {}  # round from which an estimate is used -> sum of estimates
    for t in range(len(ys)):
        s = s + parked.pop(t, 0.0)
        args = [(draws["z"][t, n], draws["u_coin"][t, n]) for n in range(1 + n_resamples)]
        w, q = draw(s, *args[0], k, b, eta, gamma)
        plays[t] = w
        theta = -ys[t] * xs[t]
        hits = np.array([draw(s, *a, k, b, eta, gamma)[1] for a in args[1:]])  # (M, d)
        h = np.where(hits.any(0), hits.argmax(0) + 1, n_resamples)
        est = np.where(q, theta * h, 0.0)
        arrive = t + 1 if delays is None else t + int(delays[t])
        parked[arrive] = parked.get(arrive, 0.0) + est
    return plays, s


def subset_ftpl_reference(xs, ys, zs, subset, eta):
    """FTPL restricted to a fixed subset Q (b = 2), fed the learner's perturbations.

    Args:
      xs: (T, d); ys: (T,); zs: (T, d) Laplace perturbations; subset: (d,) bool; eta: rate.

    Returns:
      plays (T, d).
    """
    xs = np.asarray(xs, np.float64)
    s = np.zeros(xs.shape[1])
    plays = np.zeros_like(xs)
    for t in range(len(ys)):
        v = np.where(subset, eta * s - zs[t], 0.0)
        plays[t] = np.where(subset, -v / np.linalg.norm(v), 0.0)
        s += np.where(subset, -ys[t] * xs[t], 0.0)
    return plays
