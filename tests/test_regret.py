"""Comparators against brute-force NumPy computations."""

import itertools
import math

import numpy as np
import pytest

import oslr
from oslr import regret
from tests.helpers import stream


def _brute_ls(x, y, k, radius=None):
    best = np.inf
    for sup in itertools.combinations(range(x.shape[1]), k):
        xs = x[:, list(sup)]
        if radius is None:
            w = np.linalg.lstsq(xs, y, rcond=None)[0]
        else:  # projected gradient descent on the ball, many iterations (float64)
            w = np.zeros(k)
            step = 0.5 / np.linalg.eigvalsh(xs.T @ xs).max()
            for _ in range(20000):
                w = w - step * 2 * xs.T @ (xs @ w - y)
                n = np.linalg.norm(w)
                if n > radius:
                    w *= radius / n
        best = min(best, np.sum((xs @ w - y) ** 2))
    return best


@pytest.mark.parametrize("seed", [0, 1])
def test_exact_sparse_ls__matches_brute_force_lstsq(seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(40, 7))
    x[:, 5] = x[:, 4]  # a singular support: the pseudo-inverse branch
    y = x[:, [1, 4]] @ [1.0, -2.0] + 0.3 * rng.normal(size=40)
    g, c, s = x.T @ x, x.T @ y, y @ y
    for k in (1, 2, 3):
        got = regret.exact_sparse_ls_loss(g[None], c[None], np.array([s]), k)[0]
        assert got == pytest.approx(_brute_ls(x, y, k), rel=1e-9)


def test_exact_sparse_ls__norm_bound_matches_projected_gradient():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(30, 5))
    y = x @ [2.0, 0, 0, 1.0, 0] + 0.1 * rng.normal(size=30)
    g, c, s = x.T @ x, x.T @ y, y @ y
    got = regret.exact_sparse_ls_loss(g[None], c[None], np.array([s]), 2, radius=1.0)[0]
    assert got == pytest.approx(_brute_ls(x, y, 2, radius=1.0), rel=1e-6)
    free = regret.exact_sparse_ls_loss(g[None], c[None], np.array([s]), 2)[0]
    assert got > free  # the bound binds here (||w*|| > 1)


def test_exact_sparse_ls__a_radius_below_one_hand_computed():
    # G = I, c = (0.6, 0), s = 1: the free w = (0.6, 0) has ||w||^2 = 0.36, inside a radius of
    # 0.6 but outside 0.5 (where a test of ||w||^2 <= radius instead of radius^2 would keep it):
    # loss 1 - 0.36 = 0.64 free, 1 - 2 (0.6)(0.5) + 0.25 = 0.65 at w = (0.5, 0)
    g, c, s = np.eye(2)[None], np.array([[0.6, 0.0]]), np.array([1.0])
    assert regret.exact_sparse_ls_loss(g, c, s, 2)[0] == pytest.approx(0.64, rel=1e-12)
    assert regret.exact_sparse_ls_loss(g, c, s, 2, radius=0.6)[0] == pytest.approx(0.64, rel=1e-9)
    assert regret.exact_sparse_ls_loss(g, c, s, 2, radius=0.5)[0] == pytest.approx(0.65, rel=1e-9)


def test_exact_sparse_ls__a_singular_gram_with_rounding_in_c_inside_the_radius_is_the_free_loss():
    # a duplicated feature makes G singular; float32 statistics leave c slightly off G's range
    # (here 1e-6 on one copy). Inside the radius the comparator is the free (pseudo-inverse)
    # loss, not the ball's solution, which would ride the null direction that the rounding opened
    # (0.056% lower at radius 100 here)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(30, 3))
    x = np.c_[x, x[:, 2]]
    y = x[:, 0] - x[:, 1] + 0.1 * rng.normal(size=30)
    g, c, s = x.T @ x, x.T @ y, np.array([y @ y])
    c[3] += 1e-6
    free = regret.exact_sparse_ls_loss(g[None], c[None], s, 4)[0]
    for radius in (5.0, 100.0):
        got = regret.exact_sparse_ls_loss(g[None], c[None], s, 4, radius=radius)[0]
        # the two pseudo-inverses (elimination, eigenbasis) drop the 1e-6 differently: 5e-8
        assert got == pytest.approx(free, rel=1e-6)
    # the pivot tolerance: a pivot at exactly 1e-12 of the largest diagonal is skipped as zero
    gain = regret._projected_gain(np.diag([1.0, 1e-12])[None, None], np.array([[[0.5, 1e-7]]]))
    assert gain[0, 0] == 0.25


def test_greedy_sparse_ls__never_below_exact_optimum(rng):
    for _ in range(5):
        x = rng.normal(size=(25, 8))
        y = rng.normal(size=25)
        g, c, s = x.T @ x, x.T @ y, y @ y
        exact = regret.exact_sparse_ls_loss(g[None], c[None], np.array([s]), 3)[0]
        greedy = regret.greedy_sparse_ls_loss(g[None], c[None], np.array([s]), 3)[0]
        assert greedy >= exact - 1e-9


def test_best_sparse_ls__labels_greedy_as_inexact_above_limit(rng):
    x = rng.normal(size=(20, 12))
    y = rng.normal(size=20)
    g, c, s = x.T @ x, x.T @ y, y @ y
    _, exact = regret.best_sparse_ls_loss(g[None], c[None], np.array([s]), 4,
                                          enumeration_limit=100)
    assert not exact


@pytest.mark.parametrize("b", [1.0, 2.0, 3.0, math.inf])
def test_best_sparse_linear_reward__matches_brute_force(b, rng):
    theta = rng.normal(size=6)
    a = math.inf if b == 1 else (1.0 if math.isinf(b) else b / (b - 1))
    for k in (1, 2, 4):
        brute = max(
            (np.abs(theta[list(sup)]).max() if math.isinf(a)
             else np.sum(np.abs(theta[list(sup)]) ** a) ** (1 / a))
            for sup in itertools.combinations(range(6), k)
        )
        assert regret.best_sparse_linear_reward(theta, k, b) == pytest.approx(brute)


def test_simulated_f1_regret__equals_brute_force_on_the_same_stream():
    d, T = 6, 300
    problem, pp = oslr.make_problem("sparse-linear", d=d, k=2)
    learner, params = oslr.make("ogd-full", d=d)
    res = oslr.simulate(learner, problem, params, pp, horizon=T, n_runs=2, seed=5)
    exs = stream(problem, pp, 5, 1, T)
    x, y = np.asarray(exs.x, np.float64), np.asarray(exs.y, np.float64)
    n = res.ckpts[-5]
    cum = res.curves["loss"][0, 1, -5]
    expected = cum - _brute_ls(x[:n], y[:n], 2)
    assert res.regret_curves()["regret"][0, 1, -5] == pytest.approx(expected, rel=1e-4, abs=1e-3)
    wstar = np.sum((np.asarray(exs.y_clean[:T], np.float64) - y) ** 2)
    assert res.final["loss_wstar"][0, 1] == pytest.approx(wstar, rel=1e-4)


@pytest.mark.slow  # moved behind -m slow to keep the default run under 5 min
def test_simulated_f2_and_f3_regret__equal_brute_force():
    d, T = 6, 200
    problem, pp = oslr.make_problem("sparse-linear", d=d, k=2)
    learner, params = oslr.make("uniform-subset", d=d, k=2)
    res = oslr.simulate(learner, problem, params, pp, horizon=T, n_runs=1, seed=2)
    exs = stream(problem, pp, 2, 0, T)
    theta_sum = np.sum(np.asarray(exs.y, np.float64)[:, None] * np.asarray(exs.x), axis=0)
    best = max(np.linalg.norm(theta_sum[list(s)]) for s in itertools.combinations(range(d), 2))
    reg = res.regret_curves()["regret"][0, 0, -1]
    assert reg == pytest.approx(best - res.final["reward"][0, 0], rel=1e-4)

    bproblem, bpp = oslr.make_problem("linear-bandit", d=4, n_arms=5)
    blearner, bparams = oslr.make("eps-greedy", d=4)
    bres = oslr.simulate(blearner, bproblem, bparams, bpp, horizon=T, n_runs=1, seed=2)
    from oslr.testing import episode_fn
    import jax
    import jax.numpy as jnp

    _, recs = jax.jit(episode_fn(blearner, bproblem, T))(jnp.uint32(2), 0, bparams, bpp)
    bex = stream(bproblem, bpp, 2, 0, T)
    means = np.asarray(bex.means, np.float64)
    pseudo = np.sum(means.max(1) - means[np.arange(T), np.asarray(recs.arm)])
    assert bres.final["pseudo_regret"][0, 0] == pytest.approx(pseudo, rel=1e-4)


@pytest.mark.slow
def test_long_float32_study__regret_matches_a_float64_recomputation_in_every_family():
    # a regression: at T = 1e6 plain float32 running sums put ogd-full's exact-comparator regret at
    # 389 instead of 33 (the best loss s - c^T G^-1 c cancels); at T = 3e5 the plain sums read
    # 50.6 against 31.66. The compensated sums agree with float64 to 1% (measured: 0.04%).
    import jax
    import jax.numpy as jnp

    from oslr.testing import episode_fn

    T = 300_000
    cases = [
        ("ogd-full", "sparse-linear", {"d": 16, "k": 3, "sigma": 0.1}, {}),
        ("uniform-subset", "agnostic", {"d": 12, "k": 3}, {"k": 3}),
        ("eps-greedy", "linear-bandit", {"d": 5, "n_arms": 8}, {}),
    ]
    for name, pname, popts, lopts in cases:
        problem, pp = oslr.make_problem(pname, **popts)
        learner, params = oslr.make(name, d=problem.d, **lopts)
        res = oslr.simulate(learner, problem, params, pp, horizon=T, n_runs=1, chunk_size=20_000)
        _, recs = jax.jit(episode_fn(learner, problem, T))(jnp.uint32(0), 0, params, pp)
        ex = stream(problem, pp, 0, 0, T)
        if learner.family == "prediction":
            x, y = np.asarray(ex.x, np.float64), np.asarray(ex.y, np.float64)
            loss = np.sum((np.asarray(recs.prediction, np.float64) - y) ** 2)
            best, exact = regret.best_sparse_ls_loss(x.T @ x, x.T @ y, y @ y, popts["k"])
            assert exact
            got, want = res.regret_curves()["regret"][0, 0, -1], loss - best
        elif learner.family == "linear":
            x, y = np.asarray(ex.x, np.float64), np.asarray(ex.y, np.float64)
            reward = np.sum(y * np.sum(np.asarray(recs.w, np.float64) * x, axis=1))
            best = regret.best_sparse_linear_reward(y @ x, lopts["k"], 2.0)
            got, want = res.regret_curves()["regret"][0, 0, -1], best - reward
        else:
            means = np.asarray(ex.means, np.float64)
            want = np.sum(means.max(1) - means[np.arange(T), np.asarray(recs.arm)])
            got = res.regret_curves()["pseudo_regret"][0, 0, -1]
        assert abs(got - want) <= 0.01 * abs(want), (name, got, want)


def test_exact_sparse_ls__never_negative_with_fewer_samples_than_k(rng):
    # 3 samples, k = 3: some support interpolates (loss 0), and float32 statistics made the
    # formula s - c^T G^+ c read -0.46 on a simulated run before the clamp
    x = rng.normal(size=(3, 12)).astype(np.float32)
    y = rng.normal(size=3).astype(np.float32)
    g = (x.T @ x).astype(np.float64) + 1e-7 * rng.normal(size=(12, 12))  # inconsistent rounding
    g = 0.5 * (g + g.T)
    best = regret.exact_sparse_ls_loss(g, x.T @ y, float(y @ y), 3)
    assert 0.0 <= best < 1e-3


def _ls_on(xs, y, radius=None):
    """min ||xs w - y||^2 over w (||w|| <= radius): the free solution, or the ridge solution
    (xs^T xs + mu I)^-1 xs^T y whose norm is the radius (bisection on mu, by linear solves)."""
    w = np.linalg.lstsq(xs, y, rcond=None)[0]
    if radius is not None and np.linalg.norm(w) > radius:
        gram, lo, hi = xs.T @ xs, 0.0, 1e6
        for _ in range(200):
            mu = 0.5 * (lo + hi)
            w = np.linalg.solve(gram + mu * np.eye(len(gram)), xs.T @ y)
            lo, hi = (mu, hi) if np.linalg.norm(w) > radius else (lo, mu)
    return float(np.sum((xs @ w - y) ** 2))


def _forward_selection(x, y, k, radius=None):
    """Brute-force forward selection: k times, the unused column whose addition gives the least
    restricted loss; returns (loss, chosen)."""
    chosen, loss = [], float(y @ y)
    for _ in range(k):
        trials = {}
        for j in range(x.shape[1]):
            if j in chosen:
                continue
            cols = chosen + [j]
            trials[j] = _ls_on(x[:, cols], y, radius)
        j = min(trials, key=trials.get)
        chosen.append(j)
        loss = min(loss, trials[j])
    return loss, chosen


def test_greedy_sparse_ls__brute_force_forward_selection_on_random_instances_with_a_radius():
    # random small instances, batched (2, 3): greedy = forward selection without repeats; with a
    # radius it is never below the exact constrained optimum (a re-picked coordinate would be:
    # the bound then binds on a support of fewer distinct columns counted twice)
    rng = np.random.default_rng(7)
    n, d, k = 12, 5, 3
    xs = rng.normal(size=(2, 3, n, d))
    ys = 3.0 * xs[..., 0] + 2.0 * xs[..., 1] + rng.normal(size=(2, 3, n))
    g = np.einsum("abti,abtj->abij", xs, xs)
    c = np.einsum("abti,abt->abi", xs, ys)
    s = np.einsum("abt,abt->ab", ys, ys)
    for radius in (None, 1.5):
        greedy = regret.greedy_sparse_ls_loss(g, c, s, k, radius)
        exact = regret.exact_sparse_ls_loss(g, c, s, k, radius)
        assert greedy.shape == exact.shape == (2, 3)
        for i, j in itertools.product(range(2), range(3)):
            want, chosen = _forward_selection(xs[i, j], ys[i, j], k, radius)
            assert len(set(chosen)) == k
            assert greedy[i, j] == pytest.approx(want, rel=1e-6), (radius, i, j)
            brute = min(_ls_on(xs[i, j][:, list(sup)], ys[i, j], radius)
                        for sup in itertools.combinations(range(d), k))
            assert exact[i, j] == pytest.approx(brute, rel=1e-6)
            assert greedy[i, j] >= exact[i, j] - 1e-9
        if radius is not None:  # the radius binds: the constrained optimum is above the free one
            assert np.all(exact > regret.exact_sparse_ls_loss(g, c, s, k) + 1.0)


def test_best_sparse_ls__exact_below_the_enumeration_limit_whatever_the_batch(rng):
    # C(6, 3) = 20 supports; a (2, 7) batch: the limit compares with C(d, k) alone
    x = rng.normal(size=(2, 7, 10, 6))
    y = rng.normal(size=(2, 7, 10))
    g, c, s = (np.einsum("abti,abtj->abij", x, x), np.einsum("abti,abt->abi", x, y),
               np.einsum("abt,abt->ab", y, y))
    loss, exact = regret.best_sparse_ls_loss(g, c, s, 3, enumeration_limit=20)
    assert exact and loss.shape == (2, 7)
    np.testing.assert_allclose(loss, regret.exact_sparse_ls_loss(g, c, s, 3))
    loss, exact = regret.best_sparse_ls_loss(g, c, s, 3, enumeration_limit=19)
    assert not exact
    np.testing.assert_allclose(loss, regret.greedy_sparse_ls_loss(g, c, s, 3))


@pytest.mark.parametrize("b", [2.0, math.inf])
def test_best_sparse_linear_reward__batched_with_a_k_per_element(b, rng):
    theta = rng.normal(size=(2, 3, 5))
    ks = np.array([[1, 2, 3], [4, 5, 2]])
    got = regret.best_sparse_linear_reward(theta, ks, b)
    assert got.shape == (2, 3)
    for i, j in itertools.product(range(2), range(3)):
        assert got[i, j] == pytest.approx(regret.best_sparse_linear_reward(theta[i, j],
                                                                           int(ks[i, j]), b))


def test_exact_sparse_ls__the_same_optimum_when_the_supports_are_solved_in_small_batches(rng):
    # C(7, 3) = 35 supports for a batch of 4: batch_supports = 10 solves 2 supports per call
    x = rng.normal(size=(4, 12, 7))
    y = rng.normal(size=(4, 12))
    g, c, s = (np.einsum("bti,btj->bij", x, x), np.einsum("bti,bt->bi", x, y),
               np.einsum("bt,bt->b", y, y))
    whole = regret.exact_sparse_ls_loss(g, c, s, 3)
    np.testing.assert_allclose(regret.exact_sparse_ls_loss(g, c, s, 3, batch_supports=10), whole)
    for b in range(4):
        assert whole[b] == pytest.approx(_brute_ls(x[b], y[b], 3), rel=1e-8)
