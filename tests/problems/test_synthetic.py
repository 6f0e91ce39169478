import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import oslr
from tests.helpers import stream, users_build


@pytest.mark.parametrize("design", ["gaussian", "rademacher"])
def test_sparse_linear__realizable_k_sparse_with_unit_l1(design):
    problem, pp = oslr.make_problem("sparse-linear", d=12, k=4, sigma=0.2, design=design)
    state = problem.init(jax.random.key(0), pp)
    w = np.asarray(state.w_star)
    assert (w != 0).sum() == 4 and np.abs(w).sum() == pytest.approx(1.0, rel=1e-6)
    exs = stream(problem, pp, 0, 0, 2000)
    x = np.asarray(exs.x)
    if design == "rademacher":
        assert set(np.unique(x).tolist()) == {-1.0, 1.0}
    clean = np.asarray(exs.y_clean)
    noise = np.asarray(exs.y) - clean
    assert noise.std() == pytest.approx(0.2, rel=0.1)


def test_sparse_linear__traced_k_under_vmap():
    problem, pp = oslr.make_problem("sparse-linear", d=10, k=3)
    pps = oslr.stack_params([dataclasses.replace(pp, k=jnp.int32(k)) for k in (1, 5, 10)])
    states = jax.jit(jax.vmap(problem.init, (None, 0)))(jax.random.key(1), pps)
    assert (np.asarray(states.w_star) != 0).sum(1).tolist() == [1, 5, 10]


def test_agnostic__sign_labels_with_flip_rate():
    problem, pp = oslr.make_problem("agnostic", d=8, k=2, flip=0.2)
    exs = stream(problem, pp, 0, 0, 4000)
    state = problem.init(jax.random.split(jax.random.fold_in(jax.random.key(0), 0), 4)[0], pp)
    y = np.asarray(exs.y)
    assert set(np.unique(y).tolist()) == {-1.0, 1.0}
    sign = np.where(np.asarray(exs.x) @ np.asarray(state.w_star) >= 0, 1.0, -1.0)
    assert (y != sign).mean() == pytest.approx(0.2, abs=0.03)


def test_drifting__w_star_moves_but_keeps_support():
    problem, pp = oslr.make_problem("drifting", d=8, k=3, drift=0.05)
    state = problem.init(jax.random.key(0), pp)
    new, _ = problem.sample(jax.random.key(1), state, jnp.int32(0), pp)
    assert not np.array_equal(np.asarray(new.w_star), np.asarray(state.w_star))
    assert np.array_equal(np.asarray(new.w_star) != 0, np.asarray(state.w_star) != 0)


def test_redundant_features__appended_and_base_stream_unchanged():
    base, pp = oslr.make_problem("sparse-linear", d=6, k=2)
    wide, _ = oslr.make_problem("sparse-linear", d=6, k=2, n_redundant=4)
    assert wide.d == 10
    # two programs, so equal to the bit under the build users get (tests.helpers.users_build):
    # the suite's fast build (older fusion emitters) rounds 11 of these 300 normals 1-3 ulp apart
    a = users_build(lambda pp: stream(base, pp, 3, 1, 50))(pp)
    b = users_build(lambda pp: stream(wide, pp, 3, 1, 50))(pp)
    np.testing.assert_array_equal(np.asarray(b.x)[:, :6], np.asarray(a.x))
    np.testing.assert_array_equal(np.asarray(b.y), np.asarray(a.y))
    assert np.abs(np.asarray(b.x)[:, 6:]).max() <= 1.0
    # each extra feature is N(0, 1) / 4 clipped to [-1, 1], from its own stream of the round key
    from oslr.problems.synthetic import _REDUNDANT_STREAM

    key = jax.random.key(11)
    state = wide.init(jax.random.key(0), pp)
    _, ex = wide.sample(key, state, jnp.int32(0), pp)
    z = np.asarray(jax.random.normal(jax.random.fold_in(key, _REDUNDANT_STREAM), (4,)))
    np.testing.assert_array_equal(np.asarray(ex.x)[6:], np.clip(z / 4.0, -1.0, 1.0))
    assert np.std(np.asarray(b.x)[:, 6:]) == pytest.approx(0.25, abs=0.05)
    # clipped at both ends: 200,000 extra features reach |z| > 4 a few times each way
    from oslr.problems.synthetic import add_redundant_features

    many = add_redundant_features(base, 200_000)
    extra = np.asarray(many.sample(key, base.init(jax.random.key(0), pp), jnp.int32(0), pp)[1].x)
    assert extra[6:].max() == 1.0 and extra[6:].min() == -1.0
    with pytest.raises(ValueError, match=r"^n_extra must be >= 0, got -1\.$"):
        add_redundant_features(base, -1)
    # the extra block is float32 in float64 mode too (the streams stay float32)
    from tests.helpers import x64

    with x64():
        _, ex64 = wide.sample(key, state, jnp.int32(0), pp)
    assert ex64.x.dtype == jnp.float32
    np.testing.assert_array_equal(np.asarray(ex64.x), np.asarray(ex.x))


def test_linear_bandit__means_are_arm_features_times_theta():
    problem, pp = oslr.make_problem("linear-bandit", d=5, n_arms=7, changing=True)
    state = problem.init(jax.random.key(0), pp)
    _, ex = problem.sample(jax.random.key(1), state, jnp.int32(0), pp)
    np.testing.assert_allclose(np.asarray(ex.means), np.asarray(ex.arms) @ np.asarray(state.theta),
                               rtol=1e-5)
    assert np.abs(np.asarray(ex.rewards - ex.means)).max() <= 0.5 + 1e-6
    np.testing.assert_allclose(np.linalg.norm(np.asarray(ex.arms), axis=1), 1.0, rtol=1e-5)


def test_switching__w_star_changes_every_period_only():
    problem, pp = oslr.make_problem("switching", d=8, k=2, period=5)
    state = problem.init(jax.random.key(0), pp)
    ws = [np.asarray(state.w_star)]  # the first period plays init's w* (no switch at t = 0)
    for t in range(11):
        state, _ = problem.sample(jax.random.key(t + 1), state, jnp.int32(t), pp)
        ws.append(np.asarray(state.w_star))
    changed = [not np.array_equal(ws[t + 1], ws[t]) for t in range(11)]  # at round t
    assert changed == [False] * 5 + [True] + [False] * 4 + [True]
    # the new w* is init's on the round key's own third stream, not on the x draw's key
    k_x, _, k_switch = jax.random.split(jax.random.key(11), 3)
    np.testing.assert_array_equal(ws[11], np.asarray(problem.init(k_switch, pp).w_star))
    assert not np.array_equal(ws[11], np.asarray(problem.init(k_x, pp).w_star))
    # period 1: a fresh w* every round from round 1 on
    problem, pp = oslr.make_problem("switching", d=8, k=2, period=1)
    state = problem.init(jax.random.key(0), pp)
    ws = [np.asarray(state.w_star)]
    for t in range(4):
        state, _ = problem.sample(jax.random.key(t + 1), state, jnp.int32(t), pp)
        ws.append(np.asarray(state.w_star))
    assert [not np.array_equal(ws[t + 1], ws[t]) for t in range(4)] == [False, True, True, True]
    # a zero w* (no support) normalises to zero, not NaN
    from oslr.problems.synthetic import _normalise

    for norm in ("l1", "l2"):
        assert np.asarray(_normalise(jnp.zeros(3), norm)).tolist() == [0.0, 0.0, 0.0]
    assert all((w != 0).sum() == 2 for w in ws)


@pytest.mark.parametrize("d", [8, 12])
def test_hadamard_design__rows_of_an_orthogonal_matrix(d):
    # every row of the order-n Sylvester matrix (n = 16 for d = 12): columns orthogonal over the
    # rows, so uniformly drawn rows give E[x x^T] = I exactly
    from oslr.problems.synthetic import hadamard_row

    n = 1 << (d - 1).bit_length()
    h = np.stack([np.asarray(hadamard_row(i, d)) for i in range(n)])
    np.testing.assert_array_equal(h.T @ h, n * np.eye(d))
    assert (h[:, 0] == 1).all() and set(np.unique(h).tolist()) == {-1.0, 1.0}
    problem, pp = oslr.make_problem("sparse-linear", d=d, k=2, design="hadamard")
    x = np.asarray(stream(problem, pp, 0, 0, 500).x)
    rows = {tuple(r) for r in h}
    assert all(tuple(r) in rows for r in x) and len({tuple(r) for r in x}) > n // 2


def test_correlated_design__columns_correlate_at_0_81():
    problem, pp = oslr.make_problem("sparse-linear", d=10, k=2, design="correlated")
    x = np.asarray(stream(problem, pp, 1, 0, 4000).x, np.float64)
    assert set(np.unique(x).tolist()) == {-1.0, 1.0}
    corr = np.corrcoef(x.T)[~np.eye(10, dtype=bool)]
    assert abs(corr.mean() - 0.81) < 0.03


@pytest.mark.slow  # keeps the default run under 5 min (CI runs it with -m slow)
@pytest.mark.parametrize("name, design", [("sparse-linear", "rademacher"),
                                          ("drifting", "gaussian"), ("agnostic", "rademacher")])
def test_unit_x__the_same_stream_divided_by_its_norm_before_the_label(name, design):
    # d = 9: a Rademacher x has norm 3, so an undivided label is 3x the divided one
    raw, pp = oslr.make_problem(name, d=9, k=2, design=design)
    unit, _ = oslr.make_problem(name, d=9, k=2, design=design, unit_x=True)
    a, b = stream(raw, pp, 0, 0, 200), stream(unit, pp, 0, 0, 200)
    xa, xb = np.asarray(a.x), np.asarray(b.x)
    np.testing.assert_allclose(np.linalg.norm(xb, axis=1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(xb, xa / np.linalg.norm(xa, axis=1, keepdims=True), rtol=1e-6)
    if name == "sparse-linear":  # y_clean = <w*, x> of the divided x: a third of the raw one
        np.testing.assert_allclose(np.asarray(b.y_clean), np.asarray(a.y_clean) / 3, atol=1e-6)
    if name == "agnostic":  # signs do not move with the scale
        np.testing.assert_array_equal(np.asarray(b.y), np.asarray(a.y))
    assert unit.info["unit_x"] and not raw.info["unit_x"]


def test_ito_synthetic__unnormalised_generator_clipped_or_not():
    problem, pp = oslr.make_problem("ito-synthetic", d=10, k=4, normalise=False)
    exs = stream(problem, pp, 0, 0, 2000)
    norms = np.linalg.norm(np.asarray(exs.x), axis=1)
    assert norms.mean() == pytest.approx(np.sqrt(10), rel=0.05)  # x ~ N(0, I), as drawn
    y = np.asarray(exs.y)
    assert np.abs(y).max() == 1.0  # labels clipped to the paper's bound (and some reach it)
    assert problem.info["normalise"] is False and problem.info["clip"] is True
    free, fpp = oslr.make_problem("ito-synthetic", d=10, k=4, normalise=False, clip=False)
    ex2 = stream(free, fpp, 0, 0, 2000)
    np.testing.assert_array_equal(np.asarray(ex2.x), np.asarray(exs.x))  # the same stream
    y2 = np.asarray(ex2.y)
    assert np.abs(y2).max() > 2.0 and np.array_equal(np.clip(y2, -1, 1), y)


# --------------------------------------------------------------------------- pinned by mutation


def test_hadamard_design__draws_every_row_of_the_next_power_of_two():
    """d = 5: rows of the 8 x 8 Sylvester matrix (not 4 x 4), each equal to H[i, :5]."""
    from oslr.problems.synthetic import hadamard_row

    problem, pp = oslr.make_problem("sparse-linear", d=5, k=2, design="hadamard")
    x = np.asarray(stream(problem, pp, 0, 0, 400).x)
    h8 = np.array([[(-1.0) ** bin(i & j).count("1") for j in range(8)] for i in range(8)])
    rows = {tuple(r) for r in x}
    assert rows == {tuple(r[:5]) for r in h8}  # all 8 rows appear, nothing else
    np.testing.assert_array_equal(np.asarray(hadamard_row(jnp.int32(6), 5)), h8[6, :5])


def test_sphere_design_and_unit_x__norm_one_whatever_the_draw():
    problem, pp = oslr.make_problem("sparse-linear", d=2, k=1, design="sphere")
    x = np.asarray(stream(problem, pp, 0, 0, 200).x)
    np.testing.assert_allclose(np.linalg.norm(x, axis=1), 1.0, rtol=1e-6)
    assert len(np.unique(np.abs(x))) > 100  # a Gaussian direction, not +-1 entries
    # unit_x on a design whose norm is often below 1 (d = 2 Gaussian) scales up as well as down
    problem, pp = oslr.make_problem("sparse-linear", d=2, k=1, unit_x=True)
    raw, _ = oslr.make_problem("sparse-linear", d=2, k=1)
    assert (np.linalg.norm(np.asarray(stream(raw, pp, 0, 0, 200).x), axis=1) < 1).any()
    x = np.asarray(stream(problem, pp, 0, 0, 200).x)
    np.testing.assert_allclose(np.linalg.norm(x, axis=1), 1.0, rtol=1e-6)


def test_clip_y__clips_the_noise_free_label_too():
    problem, pp = oslr.make_problem("sparse-linear", d=8, k=1, sigma=1.0, clip_y=True)
    exs = stream(problem, pp, 0, 0, 300)
    y_clean = np.asarray(exs.y_clean)
    assert np.abs(y_clean).max() == 1.0 and np.abs(np.asarray(exs.y)).max() == 1.0


def test_factory__bounds_on_d_and_k_pinned():
    # a factory built here (the registry's is built at import, which the mutation tool's
    # mutants never reach) and the registry's
    from oslr.problems.synthetic import _factory, sparse_linear

    make = _factory(sparse_linear)
    with pytest.raises(ValueError, match=r"^d must be a positive integer, got 0\.$"):
        make(d=0, k=1)
    for k in (1, 6):
        make(d=6, k=k)
    for k in (0, 7):
        with pytest.raises(ValueError, match=rf"sparsity k={k} must satisfy 1 <= k <= d=6\."):
            make(d=6, k=k)
    # the registry's checks each value against the declaration first, the same edges
    with pytest.raises(ValueError, match=r"^problem 'sparse-linear': option d=0 is out of range "
                                         r"\[1, inf\) \(feature dimension\)\.$"):
        oslr.make_problem("sparse-linear", d=0, k=1)
    for k in (1, 6):
        oslr.make_problem("sparse-linear", d=6, k=k)
    for k in (0, 7):
        with pytest.raises(ValueError, match=rf"^problem 'sparse-linear': option k={k} is out of "
                                             r"range \[1, d=6\] \(sparsity of w\* and of the "
                                             r"comparator\)\.$"):
            oslr.make_problem("sparse-linear", d=6, k=k)


def test_streams__names_kinds_modes_and_defaults():
    from oslr.problems import synthetic as s

    for build, name, mode, realizable in [(s.sparse_linear, "sparse-linear", "realizable", True),
                                          (s.agnostic, "agnostic", "agnostic", False),
                                          (s.drifting, "drifting", "drifting", True),
                                          (s.switching, "switching", "switching", True)]:
        p = build(6)  # the defaults: l1 normalisation, x as drawn
        assert (p.name, p.kind, p.info["mode"], p.realizable) == (name, "stream", mode,
                                                                  realizable)
        assert p.info["unit_x"] is False
    p, _ = oslr.make_problem("ito-synthetic")
    assert p.name == "ito-synthetic" and p.info["clip"] is True
    assert s.synthetic_params(k=3).k.dtype == jnp.int32


def test_factory__defaults_and_every_option_reach_the_problem():
    """The factory itself (the registry's is built at import, out of the mutants' reach)."""
    from oslr.problems.synthetic import _factory, sparse_linear, synthetic_params

    make = _factory(sparse_linear)
    p, pp = make()
    assert p.d == 16 and (int(pp.k), float(pp.sigma), float(pp.flip)) == (3, pytest.approx(0.1),
                                                                           pytest.approx(0.1))
    assert float(pp.drift) == pytest.approx(0.01) and int(pp.period) == 1000
    bare = synthetic_params()
    assert (int(bare.k), float(bare.drift), float(bare.flip), int(bare.period)) == (3, 0.0, 0.0,
                                                                                    1000)
    assert float(bare.sigma) == pytest.approx(0.1)
    p, pp = make(d=8, k=2, design="rademacher")
    state = p.init(jax.random.key(0), pp)
    _, ex = p.sample(jax.random.key(1), state, jnp.int32(0), pp)
    assert set(np.abs(np.asarray(ex.x)).tolist()) == {1.0}  # the design reached the builder
    p, _ = make(d=8, k=2, delays="fixed", max_delay=3)
    assert p.max_delay == 3
    _, noiseless = make(d=4, k=2, sigma=0.0)  # sigma = 0 is allowed: a noiseless stream
    assert float(noiseless.sigma) == 0.0
    from oslr.problems.synthetic import SIGMA_MAX

    assert float(make(d=4, k=2, sigma=SIGMA_MAX)[1].sigma) == SIGMA_MAX  # the bound itself
    with pytest.raises(ValueError, match=r"^noise sigma=2000000.0 must lie in \[0, 1e\+06\]"):
        make(d=4, k=2, sigma=2 * SIGMA_MAX)
    p, _ = make(d=6, k=2, n_redundant=2)
    assert p.d == 8 and p.info["n_redundant"] == 2 and p.info["mode"] == "realizable"


def test_drifting__the_l2_normalisation_holds_after_every_step():
    from oslr.problems.synthetic import drifting, synthetic_params

    p = drifting(8, norm="l2")
    pp = synthetic_params(k=3, drift=0.3)
    state = p.init(jax.random.key(0), pp)
    for t in range(3):
        state, _ = p.sample(jax.random.key(t + 1), state, jnp.int32(t), pp)
        assert np.linalg.norm(np.asarray(state.w_star)) == pytest.approx(1.0, rel=1e-5)


@pytest.mark.parametrize("design", ["gaussian", "rademacher", "sphere", "hadamard",
                                    "correlated"])
def test_streams__float32_draws_in_float64_mode_too(design):
    """The problems' draws are the float32 stream in both modes (a float64 study checks a
    float32 one on the same examples)."""
    from oslr.problems.synthetic import sparse_linear, synthetic_params
    from tests.helpers import x64

    def draw():
        p, pp = sparse_linear(8, design=design), synthetic_params(k=3)
        state = p.init(jax.random.key(4), pp)
        _, ex = p.sample(jax.random.key(5), state, jnp.int32(0), pp)
        return state.w_star, ex.x, ex.y

    f32 = draw()
    with x64():
        f64 = draw()
    for a, b in zip(f32, f64):
        assert b.dtype == jnp.float32
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
