"""Streaming metrics (`oslr.metrics`): compensated float32 running sums are error-free."""

import types

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from oslr import families, metrics
from oslr.types import BANDIT, LINEAR, PREDICTION, BanditExample, StreamExample


def _queries_sum(counts):
    """The `queries` running sum of a prediction tracker fed `counts` (int) one per round."""
    ckpts = jnp.asarray([len(counts)], jnp.int32)
    state = metrics.init(PREDICTION, 2, 1, stats=False)
    example = types.SimpleNamespace(x=jnp.zeros(2), y=jnp.zeros(()), y_clean=jnp.zeros(()))

    def body(m, tc):
        t, c = tc
        record = types.SimpleNamespace(prediction=jnp.zeros(()), n_queried=c,
                                       over_budget=jnp.zeros((), bool))
        return metrics.update(PREDICTION, m, example, record, t, ckpts, False), None

    counts = jnp.asarray(counts, jnp.int32)
    state, _ = lax.scan(body, state, (jnp.arange(len(counts), dtype=jnp.int32), counts))
    return metrics.combine(state["run"])["queries"], metrics.combine(state["ckpt"])["queries"]


def test_compensated_sums__exact_on_a_short_hard_float32_sum():
    # 2^24 + 1 rounds back to 2^24 in float32: a plain sum of [2^24, 1 x 100, -2^24] is 0
    assert metrics.compensated()
    counts = [2**24] + [1] * 100 + [-(2**24)]
    run, ckpt = _queries_sum(counts)
    assert float(run) == 100.0 and float(ckpt[0]) == 100.0  # the checkpoint copy too
    plain = np.float32(0)
    for c in counts:
        plain = np.float32(plain + np.float32(c))
    assert plain == 0.0  # what an uncompensated float32 sum gives


def test_two_sum__error_term_is_exact():
    a, b = jnp.float32(1.0), jnp.float32(2.0**-30)
    s, e = metrics.two_sum(a, b)
    assert float(s) == 1.0 and float(e) == 2.0**-30
    s, e = metrics.two_sum(b, a)  # either order
    assert float(s) == 1.0 and float(e) == 2.0**-30


# ------------------------------------------------------------------ every family, by property
# A tracker fed random rounds must hold, at every checkpoint round c, the float64 sum of the
# first c rounds' increments (computed here in NumPy from the same draws), and at the end the sum
# of all rounds: every name, every checkpoint, not only the last.


T, D, K = 37, 3, 4


def _record(**fields):
    """A learner's round record as a pytree (the fields the tracker reads)."""
    import collections

    return collections.namedtuple("Record", sorted(fields))(**fields)

CKPTS = np.array([1, 2, 5, 6, 17, 36, 37])  # consecutive pairs: a slot off by one shows


def _prediction_rounds(rng):
    x = rng.normal(size=(T, D)).astype(np.float32)
    y = rng.normal(size=T).astype(np.float32)
    y_clean = rng.normal(size=T).astype(np.float32)
    pred = rng.normal(size=T).astype(np.float32)
    nq = rng.integers(0, D + 1, size=T).astype(np.int32)
    over = rng.random(T) < 0.3
    examples = StreamExample(x=x, y=y, y_clean=y_clean)
    records = _record(prediction=pred, n_queried=nq, over_budget=over)
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    want = {"loss": (pred.astype(np.float64) - y64) ** 2,
            "loss_wstar": (y_clean.astype(np.float64) - y64) ** 2,
            "queries": nq.astype(np.float64), "over_budget": over.astype(np.float64),
            "gram": np.einsum("ti,tj->tij", x64, x64), "xy": y64[:, None] * x64,
            "yy": y64 ** 2}
    return examples, records, want


def _linear_rounds(rng):
    x = rng.normal(size=(T, D)).astype(np.float32)
    y = rng.choice([-1.0, 1.0], size=T).astype(np.float32)
    w = rng.normal(size=(T, D)).astype(np.float32)
    nq = rng.integers(0, D + 1, size=T).astype(np.int32)
    over = rng.random(T) < 0.3
    examples = StreamExample(x=x, y=y, y_clean=y)
    records = _record(w=w, n_queried=nq, over_budget=over)
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    want = {"reward": y64 * np.sum(w.astype(np.float64) * x64, axis=1),
            "theta_sum": y64[:, None] * x64, "queries": nq.astype(np.float64),
            "over_budget": over.astype(np.float64)}
    return examples, records, want


def _bandit_rounds(rng, replay):
    rewards = rng.normal(size=(T, K)).astype(np.float32)
    means = rng.normal(size=(T, K)).astype(np.float32)
    arm = rng.integers(0, K, size=T).astype(np.int32)
    accepted = rng.random(T) < 0.5 if replay else None
    examples = BanditExample(arms=np.zeros((T, K, D), np.float32), rewards=rewards, means=means)
    records = _record(arm=arm, accepted=accepted)
    acc = np.ones(T) if accepted is None else accepted.astype(np.float64)
    picked = rewards[np.arange(T), arm].astype(np.float64)
    m64 = means.astype(np.float64)
    want = {"reward": picked * acc, "pseudo_regret": m64.max(1) - m64[np.arange(T), arm],
            "accepted": acc}
    return examples, records, want


def _continuous_rounds(rng):
    theta = rng.normal(size=(T, D)).astype(np.float32)
    x = rng.normal(size=(T, D)).astype(np.float32) / 3
    noise = rng.normal(size=T).astype(np.float32)
    best = np.linalg.norm(theta, axis=1).astype(np.float32)
    examples = BanditExample(arms=np.zeros((T, D, D), np.float32), rewards=np.zeros((T, D),
                             np.float32), means=np.zeros((T, D), np.float32), theta=theta,
                             noise=noise, best=best)
    records = _record(x=x)
    mean = np.sum(x.astype(np.float64) * theta.astype(np.float64), axis=1)
    # the pseudo-regret uses the mean reward x^T theta, never the noisy realised one
    want = {"reward": mean + noise, "pseudo_regret": best.astype(np.float64) - mean,
            "accepted": np.ones(T)}
    return examples, records, want


def _track(family, examples, records, stats):
    ckpts = jnp.asarray(CKPTS, jnp.int32)
    state = metrics.init(family, D, len(CKPTS), stats)

    def body(m, args):
        t, ex, rec = args
        return metrics.update(family, m, ex, rec, t, ckpts, stats), None

    xs = (jnp.arange(T, dtype=jnp.int32), jax.tree.map(jnp.asarray, examples),
          jax.tree.map(jnp.asarray, records))
    state, _ = jax.jit(lambda s: lax.scan(body, s, xs))(state)
    return metrics.combine(state["run"]), metrics.combine(state["ckpt"])



CASES = {
    "prediction": (PREDICTION, _prediction_rounds, True),
    "prediction-no-stats": (PREDICTION, _prediction_rounds, False),
    "linear": (LINEAR, _linear_rounds, False),
    "bandit": (BANDIT, lambda rng: _bandit_rounds(rng, replay=False), False),
    "bandit-replay": (BANDIT, lambda rng: _bandit_rounds(rng, replay=True), False),
    "continuous-bandit": (BANDIT, _continuous_rounds, False),
}


@pytest.fixture(params=["conditional", "select"])
def write_path(request, monkeypatch):
    """Both ways of copying the sums into the checkpoint slots (a conditional on a CPU, a select
    elsewhere): every property below holds for each."""
    monkeypatch.setattr(metrics, "conditional_writes", lambda: request.param == "conditional")
    return request.param


@pytest.mark.parametrize("case", list(CASES))
def test_tracker__every_checkpoint_equals_a_float64_prefix_sum(case, write_path):
    family, draw, stats = CASES[case]
    examples, records, want = draw(np.random.default_rng(len(case)))
    if family == PREDICTION and not stats:
        want = {n: v for n, v in want.items() if n not in ("gram", "xy", "yy")}
    run, ckpt = _track(family, examples, records, stats)
    assert set(run) == set(want) == set(ckpt)
    assert families.family(family).running_names(stats) == tuple(want)
    for name, inc in want.items():
        prefix = np.cumsum(inc, axis=0)
        np.testing.assert_allclose(run[name], prefix[-1], rtol=1e-6, atol=1e-5, err_msg=name)
        np.testing.assert_allclose(ckpt[name], prefix[CKPTS - 1], rtol=1e-6, atol=1e-5,
                                   err_msg=name)


def test_running_names__pinned_per_family_and_an_unknown_family_refused():
    assert families.family(PREDICTION).running_names(True) == (
        "loss", "loss_wstar", "queries", "over_budget", "gram", "xy", "yy")
    assert families.family(LINEAR).running_names(False) == ("reward", "theta_sum", "queries",
                                                    "over_budget")
    assert families.family(BANDIT).running_names(True) == ("reward", "pseudo_regret", "accepted")
    with pytest.raises(ValueError, match="unknown family 'nope'"):
        families.family("nope").running_names(False)
    state = metrics.init(LINEAR, 5, 7, stats=False)
    assert set(state["run"]) == {"reward", "theta_sum", "queries", "over_budget", "reward_lo",
                                 "theta_sum_lo", "queries_lo", "over_budget_lo"}
    assert state["ckpt"]["theta_sum"].shape == (7, 5) and state["run"]["theta_sum"].shape == (5,)
    assert state["ckpt"]["reward_lo"].shape == (7,)


def test_checkpoint_rounds__log_spaced_fifty_points_ending_at_the_horizon():
    assert checkpoint_list(10) == list(range(1, 11))
    got = metrics.checkpoint_rounds(10**6)
    # 50 points 10^(6 i / 49), i = 0..49: the last two are round(10^(288/49)) = 754312 and 10^6
    assert got[-2:].tolist() == [754312, 10**6] and got[0] == 1
    assert got.dtype == np.int64 and np.all(np.diff(got) > 0)
    assert metrics.checkpoint_rounds(7, n=3).tolist() == [1, 3, 7]  # 7^0, 7^0.5, 7^1


def checkpoint_list(horizon):
    return metrics.checkpoint_rounds(horizon).tolist()


def test_checkpoint_copies__a_conditional_on_the_cpu_the_same_values_by_either_path(monkeypatch):
    # on a CPU only the checkpoint rounds copy (a cond on the unbatched round index, kept under
    # vmap over runs); off it a select each round. Both give the same buffers, to the bit.
    assert metrics.conditional_writes() == (jax.default_backend() == "cpu")
    examples, records, _ = _bandit_rounds(np.random.default_rng(3), replay=True)
    got = {}
    for path in (True, False):
        monkeypatch.setattr(metrics, "conditional_writes", lambda path=path: path)
        got[path] = _track(BANDIT, examples, records, False)
        ckpts = jnp.asarray(CKPTS, jnp.int32)
        state = metrics.init(BANDIT, D, len(CKPTS), False)
        ex0, rec0 = (jax.tree.map(lambda a: jnp.asarray(a)[0], z) for z in (examples, records))
        jaxpr = jax.make_jaxpr(jax.vmap(
            lambda m: metrics.update(BANDIT, m, ex0, rec0, jnp.int32(0), ckpts, False)))(
            jax.tree.map(lambda a: jnp.stack([a, a]), state))
        assert ("cond[" in str(jaxpr)) == path
    for part in (0, 1):  # running sums, checkpoint buffers
        for name in got[True][part]:
            np.testing.assert_array_equal(got[True][part][name], got[False][part][name],
                                          err_msg=name)


@pytest.mark.parametrize("path", ["conditional", "select"])
def test_diagnostics__recorded_at_checkpoint_rounds_only_from_state_and_params(path,
                                                                              monkeypatch):
    monkeypatch.setattr(metrics, "conditional_writes", lambda: path == "conditional")
    ckpts = jnp.asarray([2, 3, 5], jnp.int32)

    def diagnostics(lstate, lparams):
        return {"w_norm": lstate * lparams, "pair": jnp.stack([lstate, -lstate])}

    diag = metrics.init_diagnostics(diagnostics, jnp.float32(0), jnp.float32(1), 3)
    assert {k: v.shape for k, v in diag.items()} == {"w_norm": (3,), "pair": (3, 2)}
    assert metrics.init_diagnostics(None, 0, 0, 3) == {}
    assert metrics.record_diagnostics({}, diagnostics, 0, 0, 0, ckpts) == {}
    for t in range(6):  # state t + 1 after round t, params 10
        diag = metrics.record_diagnostics(diag, diagnostics, jnp.float32(t + 1),
                                          jnp.float32(10.0), jnp.int32(t), ckpts)
    np.testing.assert_array_equal(diag["w_norm"], [20.0, 30.0, 50.0])
    np.testing.assert_array_equal(diag["pair"], [[2, -2], [3, -3], [5, -5]])


def test_combine__adds_each_compensation_term_in_float64_and_drops_it():
    out = metrics.combine({"a": np.float32([1.0, 2.0]), "a_lo": np.float32([2.0**-30, 0.0]),
                           "b": np.float32(3.0)})
    assert set(out) == {"a", "b"}
    assert out["a"].dtype == np.float64 and out["a"][0] == 1.0 + 2.0**-30
    assert out["b"].dtype == np.float32 and out["b"] == 3.0


def test_tracker__float64_mode_keeps_plain_sums_equal_to_the_prefix_sums():
    from tests.helpers import x64

    with x64():
        assert not metrics.compensated()
        examples, records, want = _prediction_rounds(np.random.default_rng(5))
        run, ckpt = _track(PREDICTION, examples, records, True)
        assert not any(name.endswith("_lo") for name in run)
        for name, inc in want.items():
            prefix = np.cumsum(inc, axis=0)
            np.testing.assert_allclose(run[name], prefix[-1], rtol=1e-12, err_msg=name)
            np.testing.assert_allclose(ckpt[name], prefix[CKPTS - 1], rtol=1e-12, err_msg=name)
