"""Float64 reference of [KKLP] Algorithm 1 with HiGHS as the LP solver, fed given exploration
sets (written from the paper: the estimate, the correction (5), lam_n, doubling, truncation (4))."""

import math

import numpy as np
from scipy.optimize import linprog


def dantzig_highs(g, c, lam, max_doublings=10):
    """The Dantzig selector LP by HiGHS, doubling lam while infeasible: (w, lam)."""
    d = len(c)
    a_ub = np.block([[g, -g], [-g, g]])
    for _ in range(max_doublings + 1):
        res = linprog(np.ones(2 * d), A_ub=a_ub, b_ub=np.concatenate([c + lam, lam - c]),
                      bounds=(0, None), method="highs")
        if res.status == 0:
            return res.x[:d] - res.x[d:], lam
        lam *= 2.0
    return np.zeros(d), lam


def dantzig_reference(xs, ys, explore, k, k0, t0, sigma=0.1, delta=0.1, c_lambda=1.0,
                      mode="unbiased"):
    """Predictions (T,) and final w (d,) of Alg. 1 on a stream with exploration masks (T, d)."""
    xs = np.asarray(xs, np.float64)
    ys = np.asarray(ys, np.float64)
    n_rounds, d = xs.shape
    gram, xy, w = np.zeros((d, d)), np.zeros(d), np.zeros(d)
    preds = np.zeros(n_rounds)
    for t in range(n_rounds):
        t1 = t + 1
        if t1 > t0 and t1 & (t1 - 1) == 0:
            n = t1 - 1
            g = gram.copy()
            diag = np.diag(gram).copy()
            if mode == "unbiased":
                g *= k0 * (d - 1) / (d * (k0 - 1))
            g[np.diag_indices(d)] = diag - (1 - k0 / d) * diag
            g /= n
            lam = c_lambda * math.sqrt(d * math.log(n * d / delta) / (n * k0)) * (sigma + d / k0)
            w_hat, _ = dantzig_highs(g, xy / n, lam)
            top = np.argsort(-np.abs(w_hat), kind="stable")[:k]
            w = np.zeros(d)
            w[top] = w_hat[top]
        preds[t] = w @ xs[t]
        x_hat = np.where(explore[t], xs[t], 0.0) * d / k0
        gram += np.outer(x_hat, x_hat)
        xy += ys[t] * x_hat
    return preds, w
