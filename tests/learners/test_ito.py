"""[ITO] Algorithms 1-3: exact unbiasedness, the dual-averaging point, golden rates, float64
references fed the same draws, the arm concentration of Alg. 1."""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import oslr
from oslr.learners.ito import (
    bandit_rate,
    da_lambda,
    default_block,
    dual_averaging_point,
    projection_lambda,
    sampled_gradient,
)
from oslr.primitives import random_subset_mask
from oslr.rollout import PROBLEM_INIT, run_keys
from oslr.primitives.projections import projection_matrix
from oslr.primitives.subsets import subset_table
from oslr.spec import Ctx
from oslr.testing import episode_fn
from tests.helpers import learner_keys, stream, x64
from tests.reference.ito import (
    block_bandit_reference,
    dual_averaging_reference,
    projection_reference,
)


@pytest.mark.parametrize("n,size", [(6, 2), (8, 3), (5, 1)])
def test_sampled_gradient__exactly_unbiased_over_all_subsets(n, size):
    rng = np.random.default_rng(n)
    v, y_hat, y = rng.standard_normal(n), 0.3, -0.8
    with x64():
        total = np.zeros(n)
        subsets = list(itertools.combinations(range(n), size))
        for s in subsets:
            mask = np.zeros(n, bool)
            mask[list(s)] = True
            total += np.asarray(sampled_gradient(jnp.asarray(v), jnp.asarray(mask), y_hat, y,
                                                 jnp.int32(size), n), np.float64)
    np.testing.assert_allclose(total / len(subsets), 2 * (y_hat - y) * v, atol=1e-12)


def test_sampled_gradient__second_moment_within_the_theorem_4_bound():
    # ||x|| <= 1, |y| <= 1, ||w|| <= D = 1: E||g||^2 <= 4 (D + 1)^2 d / (k - 1)
    d, k, n = 10, 4, 20_000
    rng = np.random.default_rng(0)
    x = rng.standard_normal(d)
    x /= np.linalg.norm(x)
    y_hat, y = 0.9, -1.0
    keys = jax.random.split(jax.random.key(0), n)
    masks = jax.jit(jax.vmap(lambda kk: random_subset_mask(kk, d, jnp.int32(k - 1), k - 1)))(keys)
    g = jax.jit(jax.vmap(lambda s: sampled_gradient(jnp.asarray(x, jnp.float32), s, y_hat, y,
                                            jnp.int32(k - 1), d)))(masks)
    second = float(np.mean(np.sum(np.asarray(g, np.float64) ** 2, axis=1)))
    # exact: (2d/(k-1))^2 (y_hat - y)^2 (k-1)/d ||x||^2 = 4 d / (k - 1) * 3.61 = 48.13
    assert second == pytest.approx(4 * d / (k - 1) * 1.9**2, rel=0.03)
    assert second <= 4 * (1 + 1) ** 2 * d / (k - 1)


def test_dual_averaging_point__is_the_ball_minimiser():
    rng = np.random.default_rng(1)
    for lam, radius, scale in [(2.0, 1.0, 0.5), (0.5, 1.0, 3.0), (1.0, 0.3, 1.0)]:
        h = scale * rng.standard_normal(5)
        w = np.asarray(dual_averaging_point(jnp.asarray(h), lam, radius), np.float64)
        assert np.linalg.norm(w) <= radius * (1 + 1e-6)
        obj = lambda v: h @ v + lam / 2 * v @ v  # noqa: E731
        cand = rng.standard_normal((5000, 5))
        cand *= (radius * rng.uniform(0, 1, (5000, 1)) ** 0.2
                 / np.linalg.norm(cand, axis=1, keepdims=True))
        assert obj(w) <= min(obj(c) for c in cand) + 1e-6


def test_rates__golden():
    _, p = oslr.make("ito-dual-averaging", d=10, k=4)
    # sqrt(8 * 10 * 3 / 3) = sqrt(80) = 8.94427
    np.testing.assert_allclose(da_lambda(p, 10, 3), 8.944272, rtol=1e-6)
    _, p = oslr.make("ito-projection", d=10, k=4, k_prime=2, lam_scale=0.5)
    # m = 20: 0.5 sqrt(8 * 20 * 5 / 2) = 0.5 * 20 = 10
    np.testing.assert_allclose(projection_lambda(p, 20, 5), 10.0, rtol=1e-6)
    # Cor. 2, E3 (10, 4): K = 210, T = 5000: tau = ceil((5000/210)^(1/3)) = ceil(2.877) = 3;
    # OGD: ceil((5000/210)^(1/2)) = ceil(4.880) = 5
    assert default_block(Ctx(d=10, horizon=5000, options={"k": 4})) == 3
    assert default_block(Ctx(d=10, horizon=5000, options={"k": 4, "regressor": "ogd"})) == 5
    learner, p = oslr.make("ito-block-bandit", d=10, k=4, horizon=5000)
    assert learner.info["block"] == 3 and learner.info["n_functions"] == 210
    # n_b = ceil(5000 / 3) = 1667: eta = sqrt(2 ln 210 / (1667 * 210)) = sqrt(3.0546e-5)
    # = 0.0055268
    np.testing.assert_allclose(bandit_rate(p, 210, 3), 0.0055268, rtol=1e-4)
    # Tsallis-INF: rate 2 eta_scale (eta_n = rate / sqrt(n)), whatever K and the blocks
    _, p3 = oslr.make("ito-block-bandit", d=10, k=4, horizon=5000, eta_scale=3.0)
    assert float(bandit_rate(p3, 210, 3, "tsallis")) == 6.0
    np.testing.assert_allclose(bandit_rate(p3, 210, 3, "exp3"), 3 * 0.0055268, rtol=1e-4)


def test_ito_block_bandit__its_bandit_option_reaches_the_rate(monkeypatch):
    import oslr.learners.ito as ito
    from oslr.rollout import play_round

    seen = []
    real = ito.bandit_rate
    monkeypatch.setattr(ito, "bandit_rate", lambda *a: seen.append(a[3]) or real(*a))
    for bandit in ("tsallis", "exp3"):
        learner, params = oslr.make("ito-block-bandit", d=4, k=2, horizon=20, bandit=bandit)
        problem, pp = oslr.make_problem("sparse-linear", d=4, k=2)
        ex = stream(problem, pp, 0, 0, 1)
        ex = jax.tree.map(lambda v: v[0], ex)
        jax.eval_shape(lambda s: play_round(learner, jax.random.key(0), s, ex, params,
                                            jnp.int32(0)), learner.init(jax.random.key(1), params))
        assert seen and set(seen) == {bandit}, (bandit, seen)
        seen.clear()


def test_n_forms__the_projection_options_column_count():
    from oslr.learners.ito import _n_forms

    assert _n_forms(Ctx(d=6, horizon=10, options={})) == 12  # "gaussian": m = 2 d
    assert _n_forms(Ctx(d=6, horizon=10, options={"projection": np.ones((6, 9))})) == 9
    assert _n_forms(Ctx(d=6, horizon=10, options={"projection": None})) == 6


def test_ito_dual_averaging__matches_float64_reference_round_by_round():
    d, k, T, seed, run = 8, 3, 60, 2, 1
    problem, pp = oslr.make_problem("ito-synthetic", d=d, k=2)
    learner, params = oslr.make("ito-dual-averaging", d=d, k=k, lam_scale=0.2)
    state, recs = jax.jit(episode_fn(learner, problem, T))(jnp.uint32(seed), run, params, pp)
    exs = stream(problem, pp, seed, run, T)
    samples = np.asarray(recs.query)
    assert (samples.sum(1) == k - 1).all()
    # the learner's draw, recomputed from its round keys
    keys = learner_keys(seed, run, T)
    redraw = jax.jit(jax.vmap(lambda kk: random_subset_mask(kk, d, jnp.int32(k - 1), d - 1)))(keys)
    np.testing.assert_array_equal(samples, np.asarray(redraw))
    preds, h = dual_averaging_reference(exs.x, exs.y, samples, k, lam_scale=0.2)
    np.testing.assert_allclose(np.asarray(recs.prediction), preds, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(state.h), h, rtol=1e-4, atol=1e-4)
    forms = np.asarray(recs.forms)  # one form, the played w, from round 2 on
    assert (np.count_nonzero(np.abs(forms).sum(-1), axis=1)[1:] == 1).all()
    assert np.linalg.norm(forms[:, 0], axis=1).max() <= 1 + 1e-6  # ||w_t|| <= D


def test_ito_projection__matches_float64_reference_round_by_round():
    d, k, kp, T, seed, run = 5, 4, 2, 40, 1, 0
    a = projection_matrix(d, 8, "gaussian", seed=2)
    problem, pp = oslr.make_problem("ito-synthetic", d=d, k=2)
    learner, params = oslr.make("ito-projection", d=d, k=k, k_prime=kp, projection=a,
                                max_observed=5, lam_scale=0.3)
    state, recs = jax.jit(episode_fn(learner, problem, T))(jnp.uint32(seed), run, params, pp)
    exs = stream(problem, pp, seed, run, T)
    keys = learner_keys(seed, run, T)
    explores = np.asarray(jax.jit(jax.vmap(
        lambda kk: random_subset_mask(kk, 8, jnp.int32(k - kp), 4)))(keys))
    preds, used, errs, eta = projection_reference(exs.x, exs.y, a, explores, k, kp,
                                                  lam_scale=0.3)
    np.testing.assert_array_equal(np.any(np.asarray(recs.forms) != 0, axis=-1), used)
    np.testing.assert_allclose(np.asarray(recs.prediction), preds, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(state.eta), eta, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(float(state.approx_error), errs[-1], rtol=1e-3, atol=1e-5)
    assert (used.sum(1) <= k).all() and errs[-1] > 0


@pytest.mark.slow  # behind -m slow: keeps the default run under 5 min
def test_ito_projection__identity_takes_the_top_k_prime_of_u_tilde():
    d, k, kp, T = 6, 4, 2, 12
    problem, pp = oslr.make_problem("ito-synthetic", d=d, k=2)
    learner, params = oslr.make("ito-projection", d=d, k=k, k_prime=kp, projection="identity")
    _, recs = jax.jit(episode_fn(learner, problem, T))(jnp.uint32(0), 0, params, pp)
    exs = stream(problem, pp, 0, 0, T)
    draw = jax.jit(jax.vmap(lambda kk: random_subset_mask(kk, d, jnp.int32(k - kp), 5)))
    explores = np.asarray(draw(learner_keys(0, 0, T)))
    preds, used, errs, _ = projection_reference(exs.x, exs.y, np.eye(d), explores, k, kp)
    # A = I: u_t = top_k'(u-tilde); the reference's OMP on I gives the same predictions, and
    # each round reveals the k' largest |u-tilde| plus the explored coordinates
    assert (errs[1:] >= 0).all()
    np.testing.assert_array_equal(np.any(np.asarray(recs.forms) != 0, axis=-1), used)
    np.testing.assert_allclose(np.asarray(recs.prediction), preds, rtol=1e-4, atol=1e-5)


@pytest.mark.slow  # keeps the default run under 5 min (CI runs it with -m slow)
def test_ito_projection__max_k_prime_bounds_omp_without_changing_its_answer():
    # OMP built for k' = 2 atoms plays the same rounds as one built for max_observed - 1 = 5
    problem, pp = oslr.make_problem("ito-synthetic", d=8, k=2)
    out = []
    for bound in ({}, {"max_k_prime": 2}):
        learner, params = oslr.make("ito-projection", d=8, k=6, k_prime=2, max_observed=6,
                                    projection="identity", **bound)
        _, recs = jax.jit(episode_fn(learner, problem, 30))(jnp.uint32(2), 1, params, pp)
        out.append(np.asarray(recs.prediction))
    assert learner.info["max_k_prime"] == 2
    learner.check(params, 8)  # k_prime = max_k_prime = 2 is allowed (simulate's check)
    np.testing.assert_array_equal(out[0], out[1])  # every round's prediction
    assert np.all(out[0][1:] != 0)  # every round after the first predicted something
    with pytest.raises(ValueError, match=r"max_k_prime=6 must lie in \[1, max_observed - 1 = 5\]"):
        oslr.make("ito-projection", d=8, max_observed=6, max_k_prime=6)
    learner, params = oslr.make("ito-projection", d=8, k=6, k_prime=3, max_observed=6,
                                max_k_prime=2)
    with pytest.raises(ValueError, match=r"k_prime=\[3\] exceeds max_k_prime=2"):
        oslr.simulate(learner, problem, params, pp, horizon=5, n_runs=1)


def test_ito_projection__refuses_bad_settings():
    with pytest.raises(ValueError, match=r"\|\|A\|\|_2 = 2"):
        oslr.make("ito-projection", d=4, projection=2 * np.eye(4))
    learner, params = oslr.make("ito-projection", d=4, k=3, k_prime=3)
    problem, pp = oslr.make_problem("ito-synthetic", d=4, k=2)
    with pytest.raises(ValueError, match=r"k_prime=\[3\] must be < k=\[3\]"):
        oslr.simulate(learner, problem, params, pp, horizon=5, n_runs=1)


def _exp3_uniforms(keys):
    draw = jax.jit(jax.vmap(lambda kk: jax.random.uniform(jax.random.split(kk)[0], ())))
    return np.asarray(draw(keys), np.float64)


def test_ito_block_bandit__matches_float64_reference_round_by_round():
    d, k, T, block, seed, run = 5, 2, 60, 4, 0, 2
    problem, pp = oslr.make_problem("sparse-linear", d=d, k=2, sigma=0.5, design="rademacher")
    learner, params = oslr.make("ito-block-bandit", d=d, k=k, block=block, horizon=T,
                                eta_scale=20.0, a=0.01)  # a small ridge: some |y-hat| > 1
    state, recs = jax.jit(episode_fn(learner, problem, T))(jnp.uint32(seed), run, params, pp)
    exs = stream(problem, pp, seed, run, T)
    eta = float(bandit_rate(params, 10, block))
    table = subset_table(d, k)
    preds, arms, cum = block_bandit_reference(exs.x, exs.y, table, _exp3_uniforms(
        learner_keys(seed, run, T)), block, eta, a=0.01)
    assert np.abs(preds).max() > 1.0  # the bandit's loss clips them
    q = np.asarray(recs.query)
    np.testing.assert_array_equal(q, _masks(table, arms, d))
    np.testing.assert_allclose(np.asarray(recs.prediction), preds, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(state.bandit.cum_loss), cum, rtol=1e-4, atol=1e-4)
    assert len(set(arms.tolist())) > 2  # the arm moved between blocks


def _masks(table, arms, d):
    out = np.zeros((len(arms), d), bool)
    for t, arm in enumerate(arms):
        out[t, table[arm]] = True
    return out


@pytest.mark.slow
def test_ito_block_bandit__concentrates_on_the_subset_that_fits():
    """y exactly linear in x on w*'s 2-subset: the pulls concentrate on that subset (blocks of
    50 rounds, so that VAW fits within a block; a large eta to concentrate within the horizon)."""
    d, k, T, block = 6, 2, 12_000, 50
    problem, pp = oslr.make_problem("sparse-linear", d=d, k=2, sigma=0.0, design="sphere",
                                    w_norm="l2")
    learner, params = oslr.make("ito-block-bandit", d=d, k=k, horizon=T, block=block,
                                eta_scale=30.0)
    _, recs = jax.jit(episode_fn(learner, problem, T))(jnp.uint32(1), 0, params, pp)
    support = np.asarray(problem.init(run_keys(jnp.uint32(1), 0)[PROBLEM_INIT], pp).support)
    q = np.asarray(recs.query)
    on_target = (q == support[None, :]).all(axis=1)
    assert on_target[-T // 4:].mean() > 0.6, on_target[-T // 4:].mean()
    assert on_target[-T // 4:].mean() > 2 * on_target[: T // 10].mean()


def test_ito_block_bandit__refuses_families_too_large_and_bad_tables():
    with pytest.raises(ValueError, match=r"C\(d=40, k=10\) = 847,660,528 subsets"):
        oslr.make("ito-block-bandit", d=40, k=10, horizon=1000)
    with pytest.raises(ValueError, match=r"\(K, k, d=6\) table"):
        oslr.make("ito-block-bandit", d=6, family=np.ones((3, 2, 5)), horizon=100)
    from oslr.learners.ito import ito_block_bandit

    for k in (0, 7, 2.0):
        with pytest.raises(ValueError, match=rf"^ito-block-bandit: k={k!r} must be an integer "
                                             r"in \[1, d=6\]\.$"):
            ito_block_bandit(6, k=k)


@pytest.mark.slow  # four contract suites: -m slow keeps the default run under 5 min
@pytest.mark.parametrize("opts", [{"bandit": "tsallis"}, {"regressor": "ogd"},
                                  {"regressor": "ons"}, {"family": "projections"}])
def test_ito_block_bandit__options_keep_the_contract(opts):
    """Tsallis-INF, OGD, ONS, and a user family (k = 2 of m = 8 projections: the C(8, 2) pairs of
    rows of a Gaussian A^T) each pass the contract suite."""
    from oslr.registry import LEARNERS
    from oslr.testing import check_learner

    d = 5
    if opts.get("family") == "projections":
        rows = projection_matrix(d, 8, "gaussian", seed=1).T
        opts = {"family": np.stack([rows[list(p)] for p in itertools.combinations(range(8), 2)])}
    problem, pp = oslr.make_problem("ito-synthetic", d=d, k=2)
    learner, params = oslr.make("ito-block-bandit", d=d, k=2, horizon=50, **opts)
    alt = LEARNERS["ito-block-bandit"].alt_params(d, horizon=50)
    assert "blind" in check_learner(learner, params, alt, problem, pp)
    if "family" in opts:
        assert learner.info["n_functions"] == 28 and learner.info["block"] == 2  # (50/28)^(1/3)


def test_default_block__one_round_when_the_horizon_is_below_the_family_size():
    # T / K = 100 / 210 < 1: (T / K)^(1/3) = 0.78, one round a block (never 0)
    assert default_block(Ctx(d=10, horizon=100, options={"k": 4})) == 1
    assert default_block(Ctx(d=10, horizon=100, options={"k": 4, "family": np.ones((5, 2, 10))}
                             )) == 3  # K = 5: ceil(20^(1/3)) = 3


def test_ito_learners__names_defaults_and_refusals_pinned():
    from oslr.learners.ito import ito_block_bandit, ito_dual_averaging, ito_projection

    proj = ito_projection(4)  # max_observed defaults to min(m, 8) = 8 of the m = 8 projections
    assert proj.name == "ito-projection"
    assert ito_block_bandit(5).name == "ito-block-bandit"  # the default bandit is exp3
    with pytest.raises(ValueError, match=r"^ito-projection needs a projection A: 'gaussian', "
                       r"'identity' or a \(d, m\) matrix\.$"):
        ito_projection(4, projection=None)
    with pytest.raises(ValueError, match=r"divide A by its spectral norm\.$"):
        ito_projection(4, projection=2 * np.eye(4))
    with pytest.raises(ValueError, match=r"^ito-dual-averaging: max_k=1 must lie in \[2, d=4\]\.$"):
        ito_dual_averaging(4, max_k=1)
    with pytest.raises(ValueError, match=r"^ito-block-bandit enumerates all C\(d=40, k=10\)"):
        ito_block_bandit(40, k=10)
    table = np.zeros((3, 2, 5), np.float32)  # 3 functions of k = 2 rows each, d = 5
    with pytest.raises(ValueError, match=r"^ito-block-bandit: the family table needs 0\.00 GB, "
                       r"above memory_limit_gb=1e-09\.$"):
        ito_block_bandit(5, family=table, memory_limit_gb=1e-9)


def test_ito_block_bandit__a_family_of_coordinate_rows_plays_as_the_subset_family():
    # the same C(5, 2) subsets given as a (K, k, d) table of one-hot observation rows: the same
    # arms, predictions and losses as the built-in subset family, and k = 2 observations a round
    d, k, T, block = 5, 2, 24, 4
    table = subset_table(d, k)
    rows = np.eye(d, dtype=np.float32)[table]  # (10, 2, 5)
    problem, pp = oslr.make_problem("sparse-linear", d=d, k=2, sigma=0.5)
    out = []
    for family in (None, rows):
        learner, params = oslr.make("ito-block-bandit", d=d, k=k, block=block, horizon=T,
                                    family=family)
        assert int(learner.budget(params)) == k
        state, recs = jax.jit(episode_fn(learner, problem, T))(jnp.uint32(1), 0, params, pp)
        out.append((np.asarray(recs.prediction), np.asarray(state.bandit.cum_loss),
                    np.asarray(recs.n_queried)))
    for a, b in zip(*out):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert (out[0][2] == k).all()
