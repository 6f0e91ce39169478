"""Input checks (`oslr.checks`): open and closed bounds, through a learner's declared ranges."""

import re

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



def test_check_range__message_pinned_for_each_bound_kind():
    def msg(value, **kw):
        with pytest.raises(ValueError) as e:
            check_range("L", "p", value, **kw)
        return str(e.value)

    assert msg(3.0, hi=2.0) == "L: parameter p=[3.0] is out of range (-inf, 2.0]."
    assert msg(-3.0, lo=-2.0) == "L: parameter p=[-3.0] is out of range [-2.0, inf)."
    assert msg(5.0, lo=0.0, hi=1.0, hint="use a rate below 1.") == (
        "L: parameter p=[5.0] is out of range [0.0, 1.0]. use a rate below 1.")
    # at most five distinct offending values are shown, sorted
    assert msg(np.arange(10.0)[::-1], lo=20.0).startswith(
        "L: parameter p=[0.0, 1.0, 2.0, 3.0, 4.0] is out")


def test_check_integral__message_and_hint():
    from oslr.checks import check_integral

    with pytest.raises(ValueError) as e:
        check_integral("k", 2.5, np.int32)
    assert str(e.value) == ("parameter k=2.5 must be a whole number (it counts something); give "
                            "e.g. k=2 or k=3.")
    with pytest.raises(ValueError) as e:
        check_integral("k", [2.0, np.inf], np.int32, where="ftpsl: ")
    assert str(e.value).startswith("ftpsl: parameter k=")
    assert str(e.value).endswith("(it counts something); give a whole number.")
    check_integral("k", [2.0, 3.0], np.int32)      # whole floats pass
    check_integral("eta", 2.5, np.float32)         # not an integer leaf: no check


@pytest.mark.parametrize("seed,ok", [
    (0, True), (64, True), (3**20, True), (2**32 - 1, True), (np.uint32(7), True),
    (2**32, False), (3**21, False), (-1, False), (True, False), (1.0, False), ("3", False),
])
def test_check_seed__accepts_exactly_the_integers_in_0_to_2_32(seed, ok):
    from oslr.checks import check_seed

    if ok:
        assert check_seed(seed) == int(seed) and type(check_seed(seed)) is int
    else:
        with pytest.raises(ValueError, match=r"seed must be an integer in \[0, 2\^32\)"):
            check_seed(seed)


def test_unknown_name__three_closest_first_then_every_name_sorted():
    from oslr.checks import unknown_name

    names = ["ogd-full", "ogd-fulk", "ogd-fulm", "ogd-fuln", "linucb"]
    assert unknown_name("learner", "ogd-ful", names) == (
        "unknown learner 'ogd-ful'; did you mean 'ogd-fuln' or 'ogd-fulm' or 'ogd-full'? "
        "available: linucb, ogd-fulk, ogd-full, ogd-fulm, ogd-fuln.")
    assert unknown_name("problem", "zzz", ["b", "a"]) == "unknown problem 'zzz'; available: a, b."


@pytest.mark.parametrize("value,ok", [
    (1, True), (7, True), (np.int64(3), True), (np.uint8(1), True),
    (0, False), (-1, False), (True, False), (False, False), (2.0, False), ("3", False),
    (None, False)])
def test_check_positive_int__integers_from_one_bools_refused(value, ok):
    from oslr.checks import check_positive_int

    if ok:
        got = check_positive_int("d", value)
        assert got == int(value) and type(got) is int
    else:
        with pytest.raises(ValueError, match=rf"^d must be a positive integer, got "
                           rf"{re.escape(repr(value))}\.$"):
            check_positive_int("d", value)


@pytest.mark.parametrize("given, want", [
    (100, 100), ("100", 100), ("2k", 2048), ("512M", 512 * 2**20), ("512mb", 512 * 2**20),
    ("4G", 4 * 2**30), ("4GiB", 4 * 2**30), ("1.5G", 3 * 2**29), ("1T", 2**40),
    (" 3 M ", 3 * 2**20), (".5K", 512), (1, 1), ("1", 1), (None, None)])
def test_parse_bytes__binary_units_and_plain_bytes(given, want):
    from oslr.checks import parse_bytes

    assert parse_bytes("max_memory", given) == want


@pytest.mark.parametrize("given, why", [
    ("abc", "is not a memory size"), ("4X", "is not a memory size"),
    ("-1G", "is not a memory size"), (True, "is not a memory size"),
    ("0", "must be at least one byte"), (0, "must be at least one byte"),
    ("0.1", "must be at least one byte")])
def test_parse_bytes__anything_else_is_refused_in_one_line(given, why):
    from oslr.checks import parse_bytes

    with pytest.raises(ValueError, match=rf"^max_memory={given!r} {why}.*e\.g\. 512M"):
        parse_bytes("max_memory", given)


def test_parse_bytes__the_refusal_in_full():
    from oslr.checks import parse_bytes

    with pytest.raises(ValueError) as err:
        parse_bytes("--max-memory", "4Q")
    assert str(err.value) == ("--max-memory='4Q' is not a memory size; give bytes or a number "
                              "with a unit, e.g. 512M, 4G or 1.5GiB.")
