"""`oslr.families`: one record per family, and the modules that read it instead of branching."""

import jax.numpy as jnp
import numpy as np
import pytest

from oslr import families, protocol
from oslr.types import BANDIT, LINEAR, PREDICTION, BanditExample, StreamExample


def _stream(d=3):
    x = jnp.arange(1.0, d + 1.0)
    return StreamExample(x=x, y=jnp.float32(2.0), y_clean=jnp.float32(1.5))


def test_family__each_name_its_record_and_an_unknown_one_refused_in_one_line():
    assert [families.family(n).name for n in (PREDICTION, LINEAR, BANDIT)] == [
        PREDICTION, LINEAR, BANDIT]
    with pytest.raises(ValueError, match=r"^unknown family 'F4'$"):
        families.family("F4")


def test_round__the_family_s_round_object_with_budget_and_round_index():
    ex = _stream()
    rnd = families.family(PREDICTION).round(ex, jnp.int32(2), jnp.int32(7), None)
    assert type(rnd) is protocol.PredictionRound and int(rnd.t) == 7
    assert int(rnd._budget) == 2
    rnd = families.family(LINEAR).round(ex, jnp.int32(1), None, None)
    assert type(rnd) is protocol.LinearRound and int(rnd._budget) == 1
    arms = jnp.eye(2)
    bex = BanditExample(arms=arms, rewards=jnp.ones(2), means=jnp.ones(2))
    lookup = lambda ids: ids  # noqa: E731
    rnd = families.family(BANDIT).round(bex, jnp.int32(9), jnp.int32(3), lookup)
    assert type(rnd) is protocol.BanditRound and rnd._lookup is lookup and int(rnd.t) == 3


def test_sums__names_and_shapes_and_the_statistics_only_where_the_comparator_uses_them():
    d = 4
    pred = families.family(PREDICTION)
    assert pred.gram_stats and pred.sums(d, True) == {
        "loss": (), "loss_wstar": (), "queries": (), "over_budget": (), "gram": (d, d),
        "xy": (d,), "yy": ()}
    assert pred.sums(d, False) == {"loss": (), "loss_wstar": (), "queries": (), "over_budget": ()}
    lin = families.family(LINEAR)
    assert not lin.gram_stats and lin.sums(d, True) == {
        "reward": (), "theta_sum": (d,), "queries": (), "over_budget": ()}
    ban = families.family(BANDIT)
    assert not ban.gram_stats and ban.sums(d, True) == {
        "reward": (), "pseudo_regret": (), "accepted": ()}


def test_increments__match_their_sums_names_and_shapes():
    ex = _stream()
    rec = protocol.PredictionRecord(prediction=jnp.float32(1.0), query=jnp.ones(3, bool),
                                    n_queried=jnp.int32(2), over_budget=jnp.bool_(False))
    inc = families.family(PREDICTION).increments(ex, rec, True)
    assert {n: np.shape(v) for n, v in inc.items()} == families.family(PREDICTION).sums(3, True)
    np.testing.assert_array_equal(inc["gram"], np.outer([1, 2, 3], [1, 2, 3]))
    assert float(inc["loss"]) == 1.0 and float(inc["loss_wstar"]) == 0.25
