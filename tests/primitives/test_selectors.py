"""Selectors (docs/algorithms.md B4, B5): unbiasedness by exact enumeration, golden values, laws."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from oslr.primitives.selectors import (
    Draw,
    bexp,
    exp3,
    hedge,
    importance_update,
    tsallis_inf,
    tsallis_probs,
)
from tests.helpers import x64


def _state(sel, cum, key=0):
    return sel.init(jax.random.key(key))._replace(cum_loss=jnp.asarray(cum))


def _expected_increment(sel, state, rate, losses, key):
    """E[L-hat increment] of the real `update`, summed exactly over the followed arm j ~ p.

    `update` stores L-hat shifted by its minimum; arm 3 has loss 0 (its estimate is 0 whatever
    is observed), so the shift of each update is read off arm 3 and undone."""
    p = np.asarray(sel.probs(state, rate), np.float64)
    old = np.asarray(state.cum_loss, np.float64)
    total = np.zeros_like(p)
    for j in range(sel.n_arms):
        observed = sel.observe(key, state, jnp.int32(j))
        draw = Draw(jnp.int32(j), observed, jnp.sum(jnp.where(observed, p, 0.0)))
        new = np.asarray(sel.update(state, draw, jnp.asarray(losses), rate).cum_loss)
        total += p[j] * (new - old + (old[3] - new[3]))
    return total


@pytest.mark.parametrize("make", [lambda: exp3(5), lambda: tsallis_inf(5),
                                  lambda: bexp(5, 2), lambda: hedge(5)])
def test_selector__importance_weighted_estimate_is_unbiased_by_enumeration(make):
    with x64():
        sel = make()
        state = _state(sel, np.array([0.0, 0.3, 1.2, 0.1, 0.7]), key=3)
        rate = jnp.asarray(0.8)
        losses = np.array([0.2, 0.9, 0.5, 0.0, 1.0])
        expected = _expected_increment(sel, state, rate, losses, jax.random.key(1))
        np.testing.assert_allclose(expected, losses, rtol=1e-10, atol=1e-12)
        # and `draw` forms the observed set's probability the same way
        p = np.asarray(sel.probs(state, rate))
        for seed in range(8):
            draw = sel.draw(jax.random.key(seed), state, rate)
            obs = np.asarray(draw.observed)
            assert np.isclose(float(draw.prob), p[obs].sum()) and obs[int(draw.arm)]


def test_exp3__golden_two_arm_round():
    # p = (1/2, 1/2); arm 0 with loss 1/2 adds 1/2 / (1/2) = 1 to L-hat_0; with eta = ln 2 the
    # next law is softmax(-ln2 (1, 0)) = (1/3, 2/3).
    sel = exp3(2)
    state = sel.init(jax.random.key(0))
    eta = jnp.float32(math.log(2.0))
    np.testing.assert_allclose(sel.probs(state, eta), [0.5, 0.5])
    draw = Draw(jnp.int32(0), jnp.array([True, False]), jnp.float32(0.5))
    state = sel.update(state, draw, jnp.array([0.5, 0.9]), eta)
    np.testing.assert_allclose(state.cum_loss, [1.0, 0.0])
    np.testing.assert_allclose(sel.probs(state, eta), [1 / 3, 2 / 3], rtol=1e-6)
    assert int(state.n) == 1


def test_exp3__draw_frequencies_follow_the_law():
    sel = exp3(4)
    state = _state(sel, np.array([0.0, 0.5, 1.0, 3.0], np.float32))
    rate = jnp.float32(1.0)
    arms = jax.jit(jax.vmap(lambda k: sel.draw(k, state, rate).arm))(
        jax.random.split(jax.random.key(1), 40_000))
    freq = np.bincount(np.asarray(arms), minlength=4) / 40_000
    p = np.asarray(sel.probs(state, rate))
    assert np.all(np.abs(freq - p) < 5 * np.sqrt(p * (1 - p) / 40_000) + 1e-9)


def test_exp3__probs_sum_to_one_and_stay_finite_at_huge_losses():
    sel = exp3(6)
    state = sel.init(jax.random.key(0))
    draw = Draw(jnp.int32(2), jnp.arange(6) == 2, jnp.float32(1e-6))
    for _ in range(3):  # losses / prob of 1e6 per round: stored shifted, so no overflow
        state = sel.update(state, draw, jnp.ones(6), jnp.float32(0.1))
    p = np.asarray(sel.probs(state, jnp.float32(0.1)))
    assert np.isfinite(p).all() and abs(p.sum() - 1) < 1e-6
    assert float(state.cum_loss.min()) == 0.0


def test_tsallis_probs__solve_the_normalisation_and_match_the_closed_form():
    with x64():
        cum = jnp.asarray([0.0, 1.0, 2.5, 0.4])
        eta = jnp.asarray(0.9)
        p = np.asarray(tsallis_probs(cum, eta))
        assert abs(p.sum() - 1.0) < 1e-12
        # p_i = 4 / (eta (L_i - x))^2 for one x < min L: recover x from p_0 and check the rest
        x = 0.0 - 2.0 / (0.9 * np.sqrt(p[0]))
        np.testing.assert_allclose(p, 4.0 / (0.9 * (np.asarray(cum) - x)) ** 2, rtol=1e-10)
        # equal losses: the uniform law
        np.testing.assert_allclose(tsallis_probs(jnp.zeros(5), eta), np.full(5, 0.2), rtol=1e-12)


def test_tsallis_inf__anytime_rate_is_rate_over_sqrt_t():
    with x64():
        sel = tsallis_inf(3)
        state = _state(sel, np.array([0.0, 1.0, 2.0]))._replace(n=jnp.asarray(3, jnp.int32))
        np.testing.assert_allclose(sel.probs(state, jnp.asarray(2.0)),
                                   tsallis_probs(state.cum_loss, jnp.asarray(2.0 / 2.0)))


def test_bexp__bins_cover_every_arm_with_at_most_m_each():
    sel = bexp(7, 3)
    state = sel.init(jax.random.key(4))
    sizes = np.bincount(np.asarray(state.bin_of))
    assert sizes.tolist() in ([3, 3, 1],)
    draw = sel.draw(jax.random.key(0), state, jnp.float32(1.0))
    assert int(np.asarray(draw.observed).sum()) <= 3
    assert bool(draw.observed[draw.arm])
    # by default the bins drawn at init stay: the followed arm's whole bin is observed every round
    for s in range(20):
        d = sel.draw(jax.random.key(s), state, jnp.float32(1.0))
        np.testing.assert_array_equal(np.asarray(d.observed),
                                      np.asarray(state.bin_of == state.bin_of[d.arm]))
    # redraw: fresh bins every round, still at most m observed and the followed arm among them
    sel_r = bexp(7, 3, redraw=True)
    obs = [np.asarray(sel_r.draw(jax.random.key(s), state, jnp.float32(1.0)).observed)
           for s in range(20)]
    assert len({o.tobytes() for o in obs}) > 1 and all(o.sum() <= 3 for o in obs)


def test_bexp__refuses_a_budget_outside_1_to_k():
    with pytest.raises(ValueError, match="budget"):
        bexp(4, 5)
    with pytest.raises(ValueError, match=r"^BEXP budget m=0 must lie in \[1, K=4\]\.$"):
        bexp(4, 0)
    full = bexp(4, 4)  # m = K: one bin, every loss seen
    state = full.init(jax.random.key(0))
    assert bool(full.draw(jax.random.key(1), state, jnp.float32(1.0)).observed.all())


def test_hedge__full_information_update_adds_every_loss():
    sel = hedge(3)
    state = sel.init(jax.random.key(0))
    draw = sel.draw(jax.random.key(1), state, jnp.float32(1.0))
    assert bool(draw.observed.all()) and float(draw.prob) == 1.0
    state = sel.update(state, draw, jnp.array([0.5, 0.25, 1.0]), jnp.float32(1.0))
    np.testing.assert_allclose(state.cum_loss, [0.25, 0.0, 0.75])  # shifted by the minimum
    p = np.asarray(sel.probs(state, jnp.float32(2.0)))
    np.testing.assert_allclose(p, np.exp(-2 * np.array([0.25, 0, 0.75])) /
                               np.exp(-2 * np.array([0.25, 0, 0.75])).sum(), rtol=1e-6)


def test_importance_update__divides_by_the_observation_probability():
    sel = exp3(3)
    state = sel.init(jax.random.key(0))
    draw = Draw(jnp.int32(1), jnp.array([False, True, True]), jnp.float32(0.25))
    state = importance_update(state, draw, jnp.array([9.0, 0.5, 0.25]))
    np.testing.assert_allclose(state.cum_loss, [0.0, 2.0, 1.0])


@pytest.mark.parametrize("n", [1, 2, 7, 28, 101])
def test_sample_index__draws_follow_the_law_and_never_a_zero_weight(n):
    # two-level inversion (block sums, then one block): frequencies within a chi-square bound of
    # the normalised weights, zero weights never drawn, every index in range
    from oslr.primitives.selectors import sample_index

    p = np.random.default_rng(n).random(n)
    p[1::3] = 0.0
    keys = jax.random.split(jax.random.key(n), 100_000)
    idx = np.asarray(jax.jit(jax.vmap(lambda k: sample_index(k, jnp.asarray(p, jnp.float32))))(
        keys))
    assert idx.min() >= 0 and idx.max() < n
    counts = np.bincount(idx, minlength=n)
    assert counts[p == 0].sum() == 0
    expected = len(idx) * p / p.sum()
    pos = expected > 0
    chi2 = np.sum((counts[pos] - expected[pos]) ** 2 / expected[pos])
    dof = max(pos.sum() - 1, 1)
    assert chi2 < dof + 6 * np.sqrt(2 * dof), (chi2, dof)


def test_sample_index__float64_mode_draws_the_same_indices():
    """One float32 uniform per draw in both modes: a float64 study picks the same experts."""
    from oslr.primitives.selectors import sample_index

    p = np.random.default_rng(3).random(40)
    keys = jax.random.split(jax.random.key(7), 300)
    def draw(dtype):
        return np.asarray(jax.jit(jax.vmap(lambda k: sample_index(k, jnp.asarray(p, dtype))))(keys))

    f32 = draw(jnp.float32)
    with x64():
        f64 = draw(jnp.float64)
    assert (f32 == f64).mean() > 0.99  # (a draw within float32 rounding of a bin edge may move)


def test_hedge__observes_every_arm_as_a_bool_mask():
    sel = hedge(4)
    state = sel.init(jax.random.key(0))
    seen = sel.observe(jax.random.key(1), state, jnp.int32(2))
    assert seen.dtype == jnp.bool_ and bool(seen.all()) and seen.shape == (4,)
    assert sel.draw(jax.random.key(1), state, jnp.float32(1.0)).observed.dtype == jnp.bool_
