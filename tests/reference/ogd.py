"""Float64 NumPy reference of the OGD references (oslr.learners.ogd)."""

import numpy as np


def ogd_reference(xs, ys, queries, eta, radius):
    """Projected OGD on the square loss with the given per-round query masks.

    Args:
      xs: (T, d) features; ys: (T,) labels; queries: (T, d) bool observed coordinates.
      eta, radius: step-size scale (eta / sqrt(t + 1)) and l2 radius.

    Returns:
      predictions (T,), final weights (d,).
    """
    xs = np.asarray(xs, np.float64)
    ys = np.asarray(ys, np.float64)
    w = np.zeros(xs.shape[1])
    preds = np.zeros(len(ys))
    for t in range(len(ys)):
        x = np.where(queries[t], xs[t], 0.0)
        preds[t] = w @ x
        w = w - eta / np.sqrt(t + 1.0) * 2.0 * (preds[t] - ys[t]) * x
        n = np.linalg.norm(w)
        if n > radius:
            w = w * radius / n
    return preds, w
