import itertools
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from oslr.primitives import (
    TopK,
    geometric_resampling,
    in_top_k,
    radix_select_mask,
    random_subset_mask,
    sherman_morrison_update,
    sparse_oracle,
    sparse_oracle_value,
    top_k_mask,
)
from tests.helpers import x64


def test_top_k_mask__exact_count_for_traced_k():
    score = jnp.asarray(np.random.default_rng(1).normal(size=12), jnp.float32)
    ks = jnp.arange(0, 9, dtype=jnp.int32)
    masks = jax.jit(jax.vmap(lambda k: top_k_mask(score, k, 8)))(ks)
    assert masks.sum(axis=1).tolist() == list(range(9))
    order = np.argsort(-np.asarray(score), kind="stable")
    for k in range(9):
        assert set(np.flatnonzero(masks[k])) == set(order[:k])


def test_top_k_mask__ties_go_to_lower_index():
    mask = top_k_mask(jnp.ones(6), jnp.int32(2), 4)
    assert np.flatnonzero(mask).tolist() == [0, 1] and mask.dtype == jnp.bool_
    mask = top_k_mask(jnp.array([3.0, 1.0, 3.0, 3.0, 0.0]), jnp.int32(2), 3)
    assert np.flatnonzero(mask).tolist() == [0, 2]
    mask = top_k_mask(jnp.array([1.0, 5.0, 3.0, 3.0, 0.0]), jnp.int32(2), 3)
    assert np.flatnonzero(mask).tolist() == [1, 2]


@pytest.mark.parametrize("d", [5, 54, pytest.param(123, marks=pytest.mark.slow)])
def test_radix_select_and_top_k_paths__agree_with_a_stable_sort_under_ties(d):
    rng = np.random.default_rng(d)
    scores = np.round(rng.normal(size=(40, d)) * 2) + 0.0  # many ties, no -0.0
    scores[0] = -np.inf  # all tied at -inf
    scores[1, : d // 2] = 1e30  # large magnitudes
    ks = sorted({0, 1, 3, d // 2, d})
    order = np.argsort(-scores, axis=1, kind="stable")
    expected = {k: (order[:, :k, None] == np.arange(d)).any(1) for k in ks}
    x = jnp.asarray(scores, jnp.float32)
    # k is traced: one compile per max_k (top_k path for max_k <= 16, radix select above)
    for max_k in sorted({1, 3, d}):
        kk = [k for k in ks if k <= max_k]
        got = jax.jit(jax.vmap(lambda k: jax.vmap(lambda s: top_k_mask(s, k, max_k))(x)))(
            jnp.asarray(kk, jnp.int32))
        for j, k in enumerate(kk):
            np.testing.assert_array_equal(np.asarray(got[j]), expected[k], f"k={k} max_k={max_k}")
    radix = jax.jit(jax.vmap(lambda k: jax.vmap(lambda s: radix_select_mask(s, k))(x)))(
        jnp.asarray(ks, jnp.int32))
    for j, k in enumerate(ks):
        np.testing.assert_array_equal(np.asarray(radix[j]), expected[k])


@pytest.mark.parametrize("d,k,max_k", [(6, 2, 4), (6, 3, 6), (18, 2, 17)])
def test_random_subset_mask__every_k_subset_equally_likely(d, k, max_k):
    # (6, *): Floyd's algorithm (max_k <= 16); (18, 2, 17): top-k of uniforms
    n = 60000
    keys = jax.random.split(jax.random.key(0), n)
    masks = np.asarray(jax.jit(jax.vmap(
        lambda kk: random_subset_mask(kk, d, jnp.int32(k), max_k)))(keys))
    assert (masks.sum(1) == k).all()
    codes = masks.astype(np.int64) @ (1 << np.arange(d))
    n_subsets = math.comb(d, k)
    observed = np.array([c for c in np.bincount(codes) if c > 0])
    assert len(observed) == n_subsets  # every k-subset occurs
    expected = n / n_subsets
    chi2 = float(((observed - expected) ** 2 / expected).sum())
    df = n_subsets - 1
    assert chi2 < df + 6 * math.sqrt(2 * df), (chi2, df)


def _brute_oracle(v, k, b):
    best = np.inf
    d = len(v)
    a = math.inf if b == 1 else (1.0 if math.isinf(b) else b / (b - 1))
    for size in range(1, k + 1):
        for sup in itertools.combinations(range(d), size):
            vs = np.abs(v[list(sup)])
            val = vs.max() if math.isinf(a) else np.sum(vs**a) ** (1 / a)
            best = min(best, -val)
    return best


@pytest.mark.parametrize("b", [1.0, 1.5, 2.0, 3.0, math.inf])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sparse_oracle__matches_brute_force(b, seed):
    rng = np.random.default_rng(seed)
    d = 7
    v = rng.normal(size=d)
    for k in (1, 2, 4):
        w, q = sparse_oracle(jnp.asarray(v, jnp.float32), jnp.int32(k), d, b)
        w = np.asarray(w, np.float64)
        assert np.count_nonzero(w) <= k
        norm = np.abs(w).max() if math.isinf(b) else np.sum(np.abs(w) ** b) ** (1 / b)
        assert norm <= 1 + 1e-5
        assert w @ v == pytest.approx(_brute_oracle(v, k, b), rel=1e-5, abs=1e-5)
        value = float(sparse_oracle_value(jnp.asarray(v, jnp.float32), jnp.int32(k), d, b))
        assert -value == pytest.approx(_brute_oracle(v, k, b), rel=1e-5)


@pytest.mark.parametrize("b", [1.5, 2.0, 3.0])
def test_sparse_oracle__minimiser_does_not_change_when_v_is_scaled(b):
    # w(c v) = w(v) for c > 0: small losses (max |v| <= 1) and large ones play the same action
    v = np.random.default_rng(3).normal(size=7)
    w, _ = sparse_oracle(jnp.asarray(v, jnp.float32), jnp.int32(3), 7, b)
    assert np.count_nonzero(np.asarray(w)) == 3
    for c in (1e-25, 1e-3, 0.5, 40.0):  # 1e-25: |v|^a would underflow float32 unscaled
        wc, _ = sparse_oracle(jnp.asarray(c * v, jnp.float32), jnp.int32(3), 7, b)
        np.testing.assert_allclose(np.asarray(wc), np.asarray(w), rtol=1e-5, atol=1e-6)


def test_batched_draw__one_call_per_noise_vectorised_play_over_the_batch():
    from oslr.primitives.geometric_resampling import batched_draw

    def noise(key, shape):
        return (jax.random.normal(key, shape + (3,)), jax.random.uniform(key, shape))

    def play(z, u):  # one draw from its noise slices
        return jnp.sum(z) * u

    key = jax.random.key(5)
    z, u = noise(key, (4, 2))
    got = batched_draw(play, noise)(key, (4, 2))
    np.testing.assert_allclose(np.asarray(got), np.asarray(jnp.sum(z, -1) * u), rtol=1e-6)
    assert float(batched_draw(play, noise)(key)) == pytest.approx(
        float(jnp.sum(noise(key, ())[0]) * noise(key, ())[1]), rel=1e-6)


def test_sparse_oracle__zero_vector_gives_zero_action():
    w, _ = sparse_oracle(jnp.zeros(5), jnp.int32(2), 5, 2.0)
    assert np.all(np.asarray(w) == 0)


def test_sherman_morrison__float64_matches_inverse_after_many_updates():
    with x64():
        rng = np.random.default_rng(0)
        d = 6
        xs = jnp.asarray(rng.normal(size=(10_000, d)) / np.sqrt(d))
        a_inv = jnp.eye(d, dtype=jnp.float64)
        a_inv = jax.lax.fori_loop(0, xs.shape[0],
                                  lambda i, m: sherman_morrison_update(m, xs[i]), a_inv)
        a = np.eye(d) + np.asarray(xs).T @ np.asarray(xs)
        np.testing.assert_allclose(np.asarray(a_inv), np.linalg.inv(a), atol=1e-9)


def _brute_knapsack(v, c, budget):
    best = 0.0
    for r in range(len(v) + 1):
        for sub in itertools.combinations(range(len(v)), r):
            if c[list(sub)].sum() <= budget:
                best = max(best, v[list(sub)].sum())
    return best


@pytest.mark.parametrize("seed", range(4))
def test_knapsack_exact__matches_brute_force_over_all_subsets(seed):
    from oslr.primitives import knapsack_exact

    rng = np.random.default_rng(seed)
    d = 11
    for _ in range(5):
        v, c = rng.random(d), rng.integers(1, 7, d)
        budget = int(rng.integers(0, 25))
        m = np.asarray(knapsack_exact(jnp.asarray(v, jnp.float32), jnp.asarray(c, jnp.int32),
                                      jnp.int32(budget), 30))
        assert c[m].sum() <= budget
        assert v[m].sum() == pytest.approx(_brute_knapsack(v, c, budget), abs=1e-5)


def test_knapsack_exact__a_budget_above_the_table_counts_as_max_budget():
    from oslr.primitives import knapsack_exact

    v = jnp.asarray([3.0, 1.0, 2.0, 2.5], jnp.float32)
    c = jnp.asarray([4, 1, 3, 2], jnp.int32)
    at_max = np.asarray(knapsack_exact(v, c, jnp.int32(6), 6))
    assert np.flatnonzero(at_max).tolist() == [0, 3]  # 5.5 at cost 6
    for over in (7, 9, 40):
        np.testing.assert_array_equal(np.asarray(knapsack_exact(v, c, jnp.int32(over), 6)),
                                      at_max)


@pytest.mark.parametrize("solver", ["exact", "fptas"])
def test_knapsack__ties_keep_the_earlier_item(solver):
    # two identical items and room for one: both solvers keep the first (strict improvement only)
    from oslr.primitives import knapsack_exact, knapsack_fptas

    v = jnp.asarray([1.0, 1.0, 0.2], jnp.float32)
    if solver == "exact":
        m = knapsack_exact(v, jnp.asarray([2, 2, 5], jnp.int32), jnp.int32(2), 8)
    else:
        m = knapsack_fptas(v, jnp.asarray([2.0, 2.0, 5.0], jnp.float32), jnp.float32(2.0), 0.1)
    assert np.flatnonzero(np.asarray(m)).tolist() == [0]


def test_fptas_table_size__levels_of_the_rounded_values():
    from oslr.primitives.knapsack import fptas_table_size

    # every rounded value is at most ceil(2 d / eps): d of them sum to at most d ceil(2d/eps);
    # d = 3, eps = 0.5: 3 (12 + 1) + 1 = 40 levels (0..39)
    assert fptas_table_size(3, 0.5) == 40
    assert fptas_table_size(10, 0.1) == 10 * 201 + 1


@pytest.mark.parametrize("eps", [0.5, 0.1])
@pytest.mark.parametrize("scale", [1.0, 1e-3, 1e3])  # the rounding unit scales with max v
def test_knapsack_fptas__within_one_plus_eps_of_the_optimum(eps, scale):
    from oslr.primitives import knapsack_fptas

    rng = np.random.default_rng(7)
    d = 10
    fptas = jax.jit(knapsack_fptas, static_argnums=3)  # one compile for the eight instances
    for _ in range(8):
        v, c = scale * rng.random(d) ** 3, rng.random(d) * 5 + 0.1
        budget = float(rng.random() * 10)
        m = np.asarray(fptas(jnp.asarray(v, jnp.float32), jnp.asarray(c, jnp.float32),
                             jnp.float32(budget), eps))
        assert c[m].sum() <= budget + 1e-6
        assert v[m].sum() >= _brute_knapsack(v, c, budget) / (1 + eps) - 1e-6
    # an item the budget cannot afford, worth 1000 times the rest: the rounding unit comes from
    # the affordable values (from the 1000 every affordable value would round to one unit)
    v, c = scale * np.array([1000.0, 0.2, 0.3, 1.0]), np.array([10.0, 1.0, 1.0, 1.0])
    m = np.asarray(fptas(jnp.asarray(v, jnp.float32), jnp.asarray(c, jnp.float32),
                         jnp.float32(2.0), eps))
    assert np.flatnonzero(m).tolist() == [2, 3]  # the optimum, 1.3 (x scale)


@pytest.mark.parametrize("max_k", [2, 4, 17])  # lax.top_k paths (<= 16) and radix select
def test_top_k_mask__signed_zeros_tie_and_go_to_the_lower_index(max_k):
    # -0.0 and +0.0 are equal: the tie goes to index 0, not to the +0.0 at index 1
    score = jnp.concatenate([jnp.array([-0.0, 0.0, -0.0, 1.0, -1.0]), -2.0 * jnp.ones(15)])
    mask = top_k_mask(score, jnp.int32(2), max_k)
    assert np.flatnonzero(mask).tolist() == [0, 3]
    assert np.flatnonzero(radix_select_mask(score, jnp.int32(3))).tolist() == [0, 1, 3]


# lax.top_k path (<= 16) and radix select; both ways of counting (all pairs, one pass on keys)
@pytest.mark.parametrize("one_pass", [False, True])
@pytest.mark.parametrize("max_k", [3, 17])
def test_in_top_k__agrees_with_top_k_mask_under_ties_and_signed_zeros(max_k, one_pass):
    rng = np.random.default_rng(max_k)
    d = 20
    scores = np.round(rng.normal(size=(200, d)) * 1.5) + 0.0  # many exact ties
    scores[:50] *= np.where(rng.random((50, d)) < 0.5, -1.0, 1.0)  # -0.0 beside +0.0
    scores[50] = 0.0
    x = jnp.asarray(scores, jnp.float32)
    idx = jnp.arange(d)
    ks = jnp.asarray(sorted({0, 1, 2, max_k // 2, max_k}), jnp.int32)  # traced: one compile
    per_k = lambda f: jax.jit(jax.vmap(lambda k: jax.vmap(lambda s: f(s, k))(x)))(ks)  # noqa: E731
    mask = per_k(lambda s, k: top_k_mask(s, k, max_k))
    got = per_k(lambda s, k: in_top_k(s, k, idx, one_pass))
    np.testing.assert_array_equal(np.asarray(got), np.asarray(mask))
    # a few indices, in any order, answer as the full mask does
    sub = jnp.array([7, 0, 19, 7])
    got = jax.jit(jax.vmap(lambda s: in_top_k(s, jnp.int32(2), sub, one_pass)))(x)
    mask = jax.jit(jax.vmap(lambda s: top_k_mask(s, jnp.int32(2), max_k)))(x)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(mask)[:, np.asarray(sub)])


@pytest.mark.parametrize("one_pass", [False, True])
def test_in_top_k__extreme_finite_scores_and_the_unrolled_loop_tail(one_pass):
    # the largest finite floats (their keys + 1 must not wrap) and d = 11, not a multiple of the
    # one pass's unroll: every entry's rank against the sorted answer
    big = float(np.finfo(np.float32).max)
    score = jnp.array([big, -big, 0.0, -0.0, 1.0, big, -1.0, 3.0, -big, 2.0, 0.5], jnp.float32)
    order = np.argsort(-np.asarray(score), kind="stable")
    rank = np.empty(11, int)
    rank[order] = np.arange(11)
    idx = jnp.arange(11)
    for k in range(12):
        got = np.asarray(jax.jit(in_top_k, static_argnums=3)(score, jnp.int32(k), idx, one_pass))
        np.testing.assert_array_equal(got, rank < k, err_msg=f"k={k}")


def test_top_k__float64_scores_rank_by_their_own_precision():
    # 1 and 1 + 1e-12 are one float32: under float64 the larger must win over the lower index
    with x64():
        score = jnp.array([1.0, 1.0 + 1e-12, -3.0, 0.5], jnp.float64)
        assert np.flatnonzero(radix_select_mask(score, jnp.int32(1))).tolist() == [1]
        for one_pass in (False, True):
            got = in_top_k(score, jnp.int32(1), jnp.array([0, 1]), one_pass)
            assert np.asarray(got).tolist() == [False, True]


def test_in_top_k__one_pass_keys_come_from_one_stored_copy_of_the_scores():
    # the pass never excludes an entry from its own count: key_i + 0 > key_i is false only if
    # the slot's key and its row's are the same bits, which holds when both derive from one
    # stored copy (an optimization barrier XLA cannot fuse through). Without it XLA may compute
    # the gathered keys and the rows from separate copies of a fused producer, rounded apart
    # (the incident in `_rank_by_pairs`' comment); this build does not today, so the guard is
    # checked in the program itself.
    def readers(one_pass):
        jaxpr = jax.make_jaxpr(lambda s: in_top_k(s, jnp.int32(2), jnp.array([1, 3]), one_pass))(
            jnp.zeros(5, jnp.float32)).jaxpr
        (score,) = jaxpr.invars
        return [e.primitive.name for e in jaxpr.eqns if score in e.invars]

    assert readers(True) == ["optimization_barrier"]  # the scores read through the barrier only
    assert "optimization_barrier" not in readers(False)  # the pairs: the choice is honoured


def test_in_top_k__counts_in_one_pass_on_one_cpu_core_only(monkeypatch):
    from oslr import cpus
    from oslr.primitives import topk

    for cores, one in ((1, True), (2, False)):
        monkeypatch.setattr(cpus, "count", lambda cores=cores: cores)
        assert topk.counts_in_one_pass() is one
    monkeypatch.setattr(cpus, "count", lambda: 1)
    monkeypatch.setattr(jax, "default_backend", lambda: "gpu")
    assert topk.counts_in_one_pass() is False


@pytest.mark.parametrize("mode", ["shared", "independent"])
def test_geometric_resampling__topk_draws_count_as_their_masks_on_the_selected_set(mode):
    d, k, max_k, M = 12, 3, 4, 6

    def scores(kk, shape):  # rounded normals: ties between coordinates are common
        return jnp.round(2.0 * jax.random.normal(kk, shape + (d,))), jnp.full(shape, k)

    as_masks = lambda kk, shape: jax.vmap(  # noqa: E731
        lambda s, kj: top_k_mask(s, kj, max_k))(*[a.reshape((-1,) + a.shape[len(shape):])
                                                  for a in scores(kk, shape)]).reshape(
        shape + (d,))
    as_topk = lambda kk, shape: TopK(*scores(kk, shape))  # noqa: E731
    keys = jax.random.split(jax.random.key(5), 300)
    sel = jax.vmap(lambda kk: top_k_mask(jax.random.normal(kk, (d,)), jnp.int32(k), max_k))(
        jax.random.split(jax.random.key(6), 300))
    run = lambda draw: np.asarray(jax.jit(jax.vmap(  # noqa: E731
        lambda kk, q: geometric_resampling(draw, kk, M, selected=q, mode=mode, max_k=max_k)))(
        keys, sel))
    h_mask, h_topk = run(as_masks), run(as_topk)
    q = np.asarray(sel)
    np.testing.assert_array_equal(h_topk[q], h_mask[q])
    assert (h_topk[~q] == M).all()
    assert len(np.unique(h_mask[q])) == M  # every count 1..M occurs: the check has teeth


def test_geometric_resampling__shared_is_the_default_and_needs_no_selected_set():
    d, M = 5, 4
    draw = lambda kk, shape: jax.random.bernoulli(kk, 0.4, shape + (d,))  # noqa: E731
    key = jax.random.key(2)
    h = geometric_resampling(draw, key, M)
    np.testing.assert_array_equal(np.asarray(h), np.asarray(
        geometric_resampling(draw, key, M, mode="shared")))
    masks = np.asarray(draw(key, (M,)))  # the same M draws: first hit, or M
    want = np.where(masks.any(0), masks.argmax(0) + 1, M)
    np.testing.assert_array_equal(np.asarray(h), want)


def test_geometric_resampling__refuses_missing_arguments_naming_them():
    d = 5
    masks = lambda kk, shape: jnp.ones(shape + (d,), bool)  # noqa: E731
    ranks = lambda kk, shape: TopK(jnp.zeros(shape + (d,)), jnp.ones(shape, jnp.int32))  # noqa
    key, q = jax.random.key(0), jnp.arange(d) < 2
    with pytest.raises(ValueError, match="unknown resampling mode 'indep'"):
        geometric_resampling(masks, key, 3, selected=q, mode="indep", max_k=2)
    for kwargs in ({}, {"selected": q}, {"max_k": 2}):
        with pytest.raises(ValueError, match="^independent mode needs the selected set and "
                                             "max_k.$"):
            geometric_resampling(masks, key, 3, mode="independent", **kwargs)
        with pytest.raises(ValueError, match="^TopK draws need the selected set and max_k.$"):
            geometric_resampling(ranks, key, 3, **kwargs)


def test_sherman_morrison_update__states_highest_precision():
    from tests.helpers import dot_precisions

    text = jax.jit(sherman_morrison_update).lower(jnp.eye(3), jnp.ones(3)).as_text()
    assert dot_precisions(text) == {("HIGHEST", "HIGHEST")}


def test_check_subset_memory__the_limit_in_decimal_gigabytes_and_the_message():
    from oslr.primitives.subsets import check_subset_memory

    # C(10, 2) = 45 subsets x (1 + 2) x 4 bytes = 540 bytes: a limit of exactly 540 bytes holds
    assert check_subset_memory("x", 10, 2, 1, 540e-9) == 45
    with pytest.raises(ValueError):
        check_subset_memory("x", 10, 2, 1, 539.9999999e-9)
    # C(60, 30) = 118,264,581,564,861,424 subsets x 31 x 4 bytes = 14,664,808,114.04 GB
    with pytest.raises(ValueError) as e:
        check_subset_memory("foster-hedge", 60, 30, 1, 4.0)
    assert str(e.value) == (
        "foster-hedge enumerates all C(d=60, k=30) = 118,264,581,564,861,424 subsets: one run "
        "needs 14,664,808,114.04 GB (1 float32 per subset plus the (N, k) int32 table), above "
        "memory_limit_gb=4. Lower d or k, or raise memory_limit_gb on a device that has the "
        "memory (runs multiply it).")


def test_random_subset_mask__floyd_up_to_max_k_16_then_the_top_k_of_uniforms():
    # the two paths draw the same law but different subsets from one key: pinned at the switch
    d, k = 24, 5
    for i in range(5):
        key = jax.random.key(i)
        floyd = np.asarray(random_subset_mask(key, d, jnp.int32(k), 16))
        j = d - k + np.arange(16)
        t = np.asarray(jax.random.randint(key, (16,), 0, np.maximum(j + 1, 1), jnp.int32))
        want = np.zeros(d, bool)
        for step in range(k):  # Floyd: take t_i, or j_i if t_i is already taken
            want[j[step] if want[t[step]] else t[step]] = True
        np.testing.assert_array_equal(floyd, want)
        wide = np.asarray(random_subset_mask(key, d, jnp.int32(k), 17))
        uniforms = jax.random.uniform(key, (d,), jnp.float32)
        np.testing.assert_array_equal(wide, np.asarray(top_k_mask(uniforms, jnp.int32(k), 17)))


@pytest.mark.parametrize("max_k", [4, 40])  # Floyd's draws; the top-k of uniforms
def test_random_subset_mask__float64_mode_draws_the_same_subsets(max_k):
    keys = jax.random.split(jax.random.key(2), 30)
    ks = jnp.arange(30, dtype=jnp.int32) % (max_k + 1)

    def draw():
        return np.asarray(jax.jit(jax.vmap(lambda key, k: random_subset_mask(key, 48, k, max_k)))(
            keys, ks))

    f32 = draw()
    with x64():
        f64 = draw()
    np.testing.assert_array_equal(f32, f64)
    assert f32.dtype == np.bool_ and (f32.sum(1) == np.asarray(ks)).all()


def test_top_k_mask__the_scatter_path_of_a_wide_score_is_a_bool_mask():
    # max_k * d > 2^15: the first k indices of lax.top_k scattered into a (d,) bool mask
    score = jnp.asarray(np.random.default_rng(4).normal(size=4096), jnp.float32)
    mask = top_k_mask(score, jnp.int32(5), 16)
    assert mask.dtype == jnp.bool_
    assert set(np.flatnonzero(mask)) == set(np.argsort(-np.asarray(score))[:5])
