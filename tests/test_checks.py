"""Input checks (`oslr.checks`): open and closed bounds, through a learner's declared ranges."""

import numpy as np
import pytest

import oslr
from oslr.checks import check_range


@pytest.mark.parametrize("value,kw,ok", [
    (0.0, {"lo": 0.0, "lo_open": True}, False),     # equal to an open lower bound
    (0.0, {"lo": 0.0}, True),                       # equal to a closed one
    (1e-30, {"lo": 0.0, "lo_open": True}, True),
    (1.0, {"hi": 1.0, "hi_open": True}, False),     # equal to an open upper bound
    (1.0, {"hi": 1.0}, True),
    (np.nextafter(1.0, 0.0), {"hi": 1.0, "hi_open": True}, True),
    ([0.5, 1.0], {"lo": 0.0, "hi": 1.0, "lo_open": True, "hi_open": True}, False),  # a grid
])
def test_check_range__a_value_on_an_open_bound_is_refused(value, kw, ok):
    if ok:
        check_range("demo", "p", value, **kw)
    else:
        with pytest.raises(ValueError, match=r"demo: parameter p=\[(0\.0|1\.0)\] is out of range"):
            check_range("demo", "p", value, **kw)


def test_declared_open_bounds__refused_at_the_bound_before_tracing():
    # dantzig-poslr's delta lies in (0, 1): both ends refused, a value inside accepted
    for delta in (0.0, 1.0):
        learner, params = oslr.make("dantzig-poslr", d=6, delta=delta)
        with pytest.raises(ValueError, match=r"delta=\[" + str(delta) + r"\] is out of range "
                                             r"\(0\.0, 1\.0\)"):
            learner.check(params, 6)
    learner, params = oslr.make("dantzig-poslr", d=6, delta=0.5)
    learner.check(params, 6)
    # ogd's eta lies in (0, inf): 0 refused
    learner, params = oslr.make("ogd-full", d=4, eta=0.0)
    with pytest.raises(ValueError, match=r"eta=\[0\.0\] is out of range \(0\.0, inf\)"):
        learner.check(params, 4)
