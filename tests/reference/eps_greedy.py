"""Float64 NumPy reference of epsilon-greedy ridge least squares (oslr.learners.bandits)."""

import numpy as np


def eps_greedy_reference(arms, rewards, explore, random_arm, lam):
    """Epsilon-greedy with exact ridge solves, fed the learner's own coin flips and random arms.

    Args:
      arms: (T, K, d); rewards: (T, K) realised rewards; explore: (T,) bool coin results;
      random_arm: (T,) arm drawn for exploration; lam: ridge.

    Returns:
      (T,) pulled arms.
    """
    arms = np.asarray(arms, np.float64)
    d = arms.shape[-1]
    a = lam * np.eye(d)
    b = np.zeros(d)
    pulled = np.zeros(len(arms), int)
    for t in range(len(arms)):
        theta = np.linalg.solve(a, b)
        arm = int(random_arm[t]) if explore[t] else int(np.argmax(arms[t] @ theta))
        pulled[t] = arm
        x = arms[t, arm]
        a += np.outer(x, x)
        b += rewards[t, arm] * x
    return pulled
