import numpy as np
import pytest

import oslr
from oslr.problems.delays import expected_total_delay
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
    with pytest.raises(ValueError, match="unknown delay schedule"):
        oslr.make_problem("sparse-linear", d=4, k=1, delays="sometimes", max_delay=3)
