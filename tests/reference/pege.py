"""Float64 NumPy reference of PEGE and fPEGE-GD on the unit sphere (oslr.learners.pege)."""

import numpy as np


def schedule(d, horizon):
    """(cycle m, position) of rounds 0..horizon-1: cycle m explores d rounds, exploits m."""
    out = []
    m = 1
    while len(out) < horizon:
        out += [(m, pos) for pos in range(d + m)]
        m += 1
    return out[:horizon]


def pege_reference(theta, noise, fast, c_gamma=None, draw=None):
    """The played x of every round.

    Args:
      theta: (T, d) hidden parameter per round; noise: (T,) reward noise.
      fast: fPEGE-GD (one fOLS-GD step per exploration sample, step c / (4 (c + n)), no ridge)
        instead of PEGE's exact mean reward per basis vector.
      c_gamma: the step constant c (fPEGE-GD).
      draw: `draw(t, n) -> i`, the learner's uniform history index in {0..n-1} at round t.

    Returns:
      (T, d) played x.
    """
    theta = np.asarray(theta, np.float64)
    noise = np.asarray(noise, np.float64)
    horizon, d = theta.shape
    sums, counts = np.zeros(d), np.zeros(d)
    est, play = np.zeros(d), np.zeros(d)
    hist = []  # (basis index, reward) of the exploration samples
    xs = np.zeros((horizon, d))
    for t, (_, pos) in enumerate(schedule(d, horizon)):
        explore = pos < d
        x = np.eye(d)[pos] if explore else play / max(np.linalg.norm(play), 1e-12)
        r = x @ theta[t] + noise[t]
        xs[t] = x
        if explore:
            sums[pos] += r
            counts[pos] += 1
            if fast:
                hist.append((pos, r))
                n = len(hist)
                j, y = hist[draw(t, n)]
                xj = np.eye(d)[j]
                est = est + c_gamma / (4.0 * (c_gamma + n)) * (y - est @ xj) * xj
        if pos == d - 1:  # the end of an exploration phase: the estimate exploitation uses
            play = est.copy() if fast else sums / np.maximum(counts, 1.0)
    return xs
