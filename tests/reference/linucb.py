"""Float64 NumPy references of LinUCB and fLinUCB-GD (oslr.learners.linucb)."""

import numpy as np


def linucb_reference(arms, rewards, kappa, lam0, follow=None):
    """LinUCB with exact ridge solves ([LCLS10], shared theta).

    Args:
      arms: (T, K, d) arm features; rewards: (T, K) realised rewards; kappa, lam0: as in the
        learner.
      follow: optional (T,) arms to pull instead of the argmax (to score another run's choices).

    Returns:
      (T,) pulled arms (ties to the lower index) and (T, K) UCB scores.
    """
    arms = np.asarray(arms, np.float64)
    d = arms.shape[-1]
    a = lam0 * np.eye(d)
    b = np.zeros(d)
    pulled = np.zeros(len(arms), int)
    scores = np.zeros(arms.shape[:2])
    for t in range(len(arms)):
        a_inv = np.linalg.inv(a)
        width = np.einsum("kd,de,ke->k", arms[t], a_inv, arms[t])
        scores[t] = arms[t] @ (a_inv @ b) + kappa * np.sqrt(np.maximum(width, 0.0))
        arm = int(np.argmax(scores[t])) if follow is None else int(follow[t])
        pulled[t] = arm
        x = arms[t, arm]
        a += np.outer(x, x)
        b += rewards[t, arm] * x
    return pulled, scores


def flinucb_gd_reference(arms, rewards, i_phi, i_est, kappa, c_gamma, alpha, c_lambda):
    """fLinUCB-GD ([KPM] Alg. 2) with fixed arms, fed the learner's sampled history indices.

    Args:
      arms: (K, d) the fixed arm set; rewards: (T, K); i_phi, i_est: (T,) uniform draws in
        {0..n-1} used by the confidence step (before the pull, n = t samples) and by the fRLS-GD
        step (after it, n = t + 1), as the learner draws them; the rest as in the learner.

    Returns:
      pulled (T,) arms and thetas (T, d) after each round.
    """
    arms = np.asarray(arms, np.float64)
    n_arms, d = arms.shape
    theta, phi = np.zeros(d), np.zeros((n_arms, d))
    hist_x, hist_y = [], []
    pulled, thetas = np.zeros(len(rewards), int), np.zeros((len(rewards), d))
    for t in range(len(rewards)):
        n = t
        if n > 0:
            xi = hist_x[i_phi[t]]
            gamma, lam = c_gamma * n ** -alpha, c_lambda * n ** (alpha - 1.0)
            phi = phi + gamma * (arms / n - np.outer(phi @ xi, xi) - lam * phi)
        ucb = arms @ theta + kappa * np.sqrt(np.maximum(np.sum(phi * arms, 1), 0.0))
        arm = int(np.argmax(ucb))
        pulled[t] = arm
        hist_x.append(arms[arm])
        hist_y.append(float(rewards[t, arm]))
        n = t + 1
        x, y = hist_x[i_est[t]], hist_y[i_est[t]]
        gamma, lam = c_gamma * n ** -alpha, c_lambda * n ** (alpha - 1.0)
        theta = theta + gamma * ((y - theta @ x) * x - lam * theta)
        thetas[t] = theta
    return pulled, thetas
