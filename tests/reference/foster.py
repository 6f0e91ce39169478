"""Float64 NumPy per-round reference of [FKK] Algorithm 1, fed given random draws.

Written from the pseudocode, not from the learner: X_t and z_t are formed as the d x d matrix and
d-vector of line 8, every w_S lives in R^d, and line 9 / 10 are applied subset by subset.
"""

import itertools
import math

import numpy as np


def estimators(x, y, r_mask, p, q):
    """X_t (d, d) and z_t (d,) of line 8 from the coordinates in R only."""
    d = len(x)
    xr = np.where(r_mask, x, 0.0)
    big_x = np.outer(xr, xr) / q
    big_x[np.diag_indices(d)] = xr**2 / p
    return big_x, y * xr / p


def rates(d, k, k_query, horizon, hedge_scale=1.0, sgd_scale=1.0):
    m = k_query - k
    p = m / d
    q = m * (m - 1) / (d * (d - 1))
    eta_hedge = hedge_scale * q * math.sqrt(math.log(d) / horizon)
    return p, q, eta_hedge, sgd_scale * q / math.sqrt(horizon)


def foster_reference(xs, ys, uniforms, r_masks, k, k_query, horizon, hedge_scale=1.0,
                     sgd_scale=1.0, radius=1.0):
    """Run Alg. 1 on a stream.

    Args:
      xs: (T, d); ys: (T,).
      uniforms: (T,) U(0, 1) of the subset draws (S-hat by inversion of the cumulative D_t, subsets
        in lexicographic order); r_masks: (T, d) bool, the extra sets R_t.

    Returns:
      predictions (T,), arms (T,), final weights (N, d), final log D (N,).
    """
    xs = np.asarray(xs, np.float64)
    ys = np.asarray(ys, np.float64)
    d = xs.shape[1]
    subsets = [list(s) for s in itertools.combinations(range(d), k)]
    n = len(subsets)
    p, q, eta_h, eta_s = rates(d, k, k_query, horizon, hedge_scale, sgd_scale)
    log_d = np.full(n, -math.log(n))
    w = np.zeros((n, d))
    preds, arms = np.zeros(len(ys)), np.zeros(len(ys), int)
    for t in range(len(ys)):
        cdf = np.cumsum(np.exp(log_d))
        arm = min(int(np.sum(cdf <= uniforms[t] * cdf[-1])), n - 1)
        arms[t] = arm
        preds[t] = w[arm] @ xs[t]
        big_x, z = estimators(xs[t], ys[t], r_masks[t], p, q)
        cost = np.array([w[s] @ big_x @ w[s] - 2 * z @ w[s] + ys[t] ** 2 for s in range(n)])
        log_d = log_d - eta_h * cost
        log_d = log_d - np.logaddexp.reduce(log_d)
        for s, subset in enumerate(subsets):
            i_s = np.zeros(d)
            i_s[subset] = 1.0
            new = w[s] - 2 * eta_s * i_s * (big_x @ w[s] - z)
            norm = np.linalg.norm(new)
            w[s] = new * radius / norm if norm > radius else new
    return preds, arms, w, log_d
