"""Float64 NumPy OMP, written from [TG07]'s pseudocode with `numpy.linalg.lstsq`."""

import numpy as np


def omp_reference(a, b, s):
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    norms = np.linalg.norm(a, axis=0)
    support, r = [], b.copy()
    u = np.zeros(a.shape[1])
    for _ in range(s):
        score = np.abs(a.T @ r) / np.where(norms > 0, norms, 1.0)
        score[support] = -np.inf
        score[norms == 0] = -np.inf
        support.append(int(np.argmax(score)))
        coef, *_ = np.linalg.lstsq(a[:, support], b, rcond=None)
        u = np.zeros(a.shape[1])
        u[support] = coef
        r = b - a @ u
    return u, support
