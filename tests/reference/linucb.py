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


def flinucb_reference(arms, rewards, i_phi, i_est, kappa, c_gamma, alpha, c_lambda,
                      tracker="frls-gd", step_scale=1.0):
    """fLinUCB ([KPM] Alg. 2) with fixed arms, fed the learner's sampled history indices: the
    confidence widths by the SGD step (11), the estimate by `tracker` ("frls-gd" (9), "svrg" or
    "sag", docs/algorithms.md L2.3-L2.4).

    Args:
      arms: (K, d) the fixed arm set; rewards: (T, K); i_phi, i_est: (T,) uniform draws in
        {0..n-1} used by the confidence step (before the pull, n = t samples) and by the
        estimate's step (after it, n = t + 1), as the learner draws them; step_scale: the SVRG /
        SAG step step_scale / (max ||x||^2 + lam_n); the rest as in the learner.

    Returns:
      pulled (T,) arms and thetas (T, d) after each round.
    """
    arms = np.asarray(arms, np.float64)
    n_arms, d = arms.shape
    theta, phi = np.zeros(d), np.zeros((n_arms, d))
    snap, mu, resid, g_sum, lmax = np.zeros(d), np.zeros(d), [], np.zeros(d), 0.0
    hist_x, hist_y = [], []
    pulled, thetas = np.zeros(len(rewards), int), np.zeros((len(rewards), d))

    def grad(th, x, y):  # the data gradient -(y - th^T x) x
        return -(y - th @ x) * x

    for t in range(len(rewards)):
        n = t
        if n > 0:
            xi = hist_x[i_phi[t]]
            gamma, lam = c_gamma * n ** -alpha, c_lambda * n ** (alpha - 1.0)
            phi = phi + gamma * (arms / n - np.outer(phi @ xi, xi) - lam * phi)
        ucb = arms @ theta + kappa * np.sqrt(np.maximum(np.sum(phi * arms, 1), 0.0))
        arm = int(np.argmax(ucb))
        pulled[t] = arm
        x_new, y_new = arms[arm], float(rewards[t, arm])
        hist_x.append(x_new)
        hist_y.append(y_new)
        n = t + 1
        x, y = hist_x[i_est[t]], hist_y[i_est[t]]
        lam = c_lambda * n ** (alpha - 1.0)
        lmax = max(lmax, x_new @ x_new)
        if tracker == "frls-gd":
            theta = theta + c_gamma * n ** -alpha * ((y - theta @ x) * x - lam * theta)
        elif tracker == "svrg":
            mu = mu + (grad(snap, x_new, y_new) - mu) / n
            g = grad(theta, x, y) - grad(snap, x, y) + mu
            theta = theta - step_scale / (lmax + lam) * (g + lam * theta)
            if (t + 1) & t == 0:  # a snapshot at rounds t + 1 = 1, 2, 4, ...
                snap = theta.copy()
                mu = np.mean([grad(snap, hx, hy) for hx, hy in zip(hist_x, hist_y)], axis=0)
        elif tracker == "sag":
            resid.append(y_new - theta @ x_new)
            g_sum = g_sum - resid[-1] * x_new
            r = y - theta @ x
            g_sum = g_sum - (r - resid[i_est[t]]) * x
            resid[i_est[t]] = r
            theta = theta - step_scale / (lmax + lam) * (g_sum / n + lam * theta)
        thetas[t] = theta
    return pulled, thetas
