import numpy as np
import pytest

import oslr
from oslr.problems.delays import expected_total_delay, with_delays
from tests.helpers import stream


@pytest.mark.parametrize("schedule", ["fixed", "random", "batched"])
def test_delays__range_and_total_match_the_schedule(schedule):
    problem, pp = oslr.make_problem("sparse-linear", d=4, k=1, delays=schedule, max_delay=5)
    delays = np.asarray(stream(problem, pp, 0, 0, 2000).delay)
    assert delays.min() >= 1 and delays.max() <= 5
    total = expected_total_delay(schedule, 5, 2000)
    tol = 0.05 * total if schedule == "random" else 0
    assert abs(delays.sum() - total) <= tol
    if schedule == "batched":  # each block of 5 rounds arrives together at the block's end
        t = np.arange(2000)
        assert np.all((t + delays - 1) % 5 == 4)


def test_delays__unknown_schedule_is_refused():
    with pytest.raises(ValueError, match=r"^problem 'sparse-linear': option delays='sometimes' is "
                                         r"not one of \['fixed', 'random', 'batched'\]\.$"):
        oslr.make_problem("sparse-linear", d=4, k=1, delays="sometimes", max_delay=3)
    from oslr.problems.delays import with_delays  # and the builder's own check behind it

    problem, _ = oslr.make_problem("sparse-linear", d=4, k=1)
    with pytest.raises(ValueError, match="unknown delay schedule 'sometimes'"):
        with_delays(problem, "sometimes", 3)


def test_expected_total_delay__hand_computed_totals():
    # T = 12, L = 5: fixed 5 * 12; random E[D_t] = 3; batched two blocks 5+4+3+2+1, then 5 + 4
    assert expected_total_delay("fixed", 5, 12) == 60.0
    assert expected_total_delay("random", 5, 12) == 36.0
    assert expected_total_delay("batched", 5, 12) == 39.0
    assert expected_total_delay("batched", 5, 10) == 30.0
    assert expected_total_delay("batched", 1, 7) == 7.0


def test_delays__random_schedule_is_uniform_and_not_the_batched_pattern():
    problem, pp = oslr.make_problem("sparse-linear", d=4, k=1, delays="random", max_delay=5)
    delays = np.asarray(stream(problem, pp, 0, 0, 2000).delay)
    counts = np.bincount(delays, minlength=6)[1:]
    assert counts.min() > 300 and counts.max() < 500  # 400 each expected, sd 18
    t = np.arange(2000)
    assert np.mean((t + delays - 1) % 5 == 4) < 0.3


def test_with_delays__keeps_the_examples_and_records_the_schedule():
    base, pp = oslr.make_problem("sparse-linear", d=4, k=1)

    def sample(key, state, t, params):  # an example that shows the round it was drawn for
        state, ex = base.sample(key, state, t, params)
        return state, ex._replace(y=ex.y + t)

    timed = base._replace(sample=sample, info={"source": "test"})
    delayed = with_delays(timed, "batched", 3)
    a, b = stream(timed, pp, 0, 0, 30), stream(delayed, pp, 0, 0, 30)
    np.testing.assert_array_equal(np.asarray(b.y), np.asarray(a.y))
    np.testing.assert_array_equal(np.asarray(b.x), np.asarray(a.x))
    assert delayed.max_delay == 3
    assert delayed.info == {"source": "test", "delay_schedule": "batched", "max_delay": 3}
    with pytest.raises(ValueError, match="max_delay"):
        with_delays(base, "fixed", 0)
