"""Float64 NumPy per-round reference of [KKLP] Algorithm 2 (online greedy), fed given draws.

Written from the pseudocode: the batch losses g_b(V^(i-1) u {j}) by `numpy.linalg.lstsq` on the
batch's rows, VAW by a direct solve of (a I + sum x x^T) on the coordinates of V.
"""

import numpy as np


def draw_index(p, u):
    """Inversion of the cumulative law p at u ~ U(0, 1)."""
    cdf = np.cumsum(p)
    last = int(np.max(np.nonzero(p > 0)[0]))
    return min(int(np.sum(cdf <= u * cdf[-1])), last)


def online_greedy_reference(xs, ys, bins, uniforms, k1, batch, etas, a=1.0):
    """Run Alg. 2.

    Args:
      xs: (T, d); ys: (T,); bins: (k1, d) bin of each coordinate in each BEXP;
      uniforms: (T, k1), the draw uniforms of each BEXP (read at the batch-start rounds);
      etas: (k1,) BEXP rates; a: VAW ridge.

    Returns:
      predictions (T,), queried sets (T, d) bool, final shifted L-hat (k1, d).
    """
    xs = np.asarray(xs, np.float64)
    ys = np.asarray(ys, np.float64)
    n_rounds, d = xs.shape
    cum = np.zeros((k1, d))
    preds = np.zeros(n_rounds)
    queries = np.zeros((n_rounds, d), bool)
    for t in range(n_rounds):
        if t % batch == 0:
            arms, sets, mass = [], [], []
            for i in range(k1):
                p = np.exp(-etas[i] * cum[i])
                p /= p.sum()
                j = draw_index(p, uniforms[t, i])
                u_set = bins[i] == bins[i][j]
                arms.append(j)
                sets.append(u_set)
                mass.append(p[u_set].sum())
            s_mask = np.any(sets, axis=0)
            v_list = sorted(set(arms))
            big_a = a * np.eye(len(v_list))
            b = np.zeros(len(v_list))
            rows, labels = [], []
        x = np.where(s_mask, xs[t], 0.0)
        queries[t] = s_mask
        xv = x[v_list]
        big_a += np.outer(xv, xv)
        preds[t] = xv @ np.linalg.solve(big_a, b)
        b += ys[t] * xv
        rows.append(x)
        labels.append(ys[t])
        if t % batch == batch - 1:
            xb, yb = np.array(rows), np.array(labels)
            for i in range(k1):
                for j in np.nonzero(sets[i])[0]:
                    support = sorted(set(arms[:i]) | {int(j)})
                    w, *_ = np.linalg.lstsq(xb[:, support], yb, rcond=None)
                    loss = np.sum((yb - xb[:, support] @ w) ** 2) / len(yb)
                    cum[i, j] += loss / mass[i]
                cum[i] -= cum[i].min()
    return preds, queries, cum
