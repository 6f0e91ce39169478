"""OSLR_CPUS (`oslr.cpus`): the cores a process runs on, parsed, checked, applied to every thread
before JAX starts, and the numbers unchanged on one core."""

import os
import sys

import numpy as np
import pytest

from oslr import cpus
from tests.helpers import run_child

ALLOWED = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else {0}
FIRST = min(ALLOWED)

pytestmark = pytest.mark.skipif(not hasattr(os, "sched_setaffinity"),
                                reason="no sched_setaffinity (not Linux)")


@pytest.fixture
def fresh(monkeypatch):
    """`cpus.from_env` as in a new process, with OSLR_CPUS set by `set`."""
    monkeypatch.setattr(cpus, "_applied", [])

    def set_to(value):
        monkeypatch.setenv(cpus.VARIABLE, value)
    return set_to


@pytest.mark.parametrize("text, want", [("0", {0}), ("0-3", {0, 1, 2, 3}),
                                        ("0,2,4-5", {0, 2, 4, 5}), (" 1 , 3 ", {1, 3})])
def test_parse__taskset_lists(text, want):
    assert cpus.parse(text, set(range(8))) == want


@pytest.mark.parametrize("text, part", [("a", "'a'"), ("3-1", "'3-1'"), ("0,", "''"),
                                        ("1-", "'1-'"), ("-1", "'-1'"), ("0;1", "'0;1'")])
def test_parse__not_a_list_names_the_part_and_the_cores_allowed(text, part):
    with pytest.raises(ValueError) as err:
        cpus.parse(text, {0, 1})
    msg = str(err.value)
    assert "\n" not in msg and f"OSLR_CPUS={text!r}" in msg and part in msg
    assert "may use 0,1" in msg and "unset OSLR_CPUS" in msg


def test_parse__cores_outside_the_mask_are_named():
    with pytest.raises(ValueError, match=r"core\(s\) 2,5 are not among the cores this process "
                                         r"may use \(0,1\)"):
        cpus.parse("0-2,5", {0, 1})


def test_from_env__unset_is_none_and_pins_nothing(fresh, monkeypatch):
    monkeypatch.delenv(cpus.VARIABLE, raising=False)
    monkeypatch.setattr(cpus, "pin", lambda cores: pytest.fail("pinned"))
    assert cpus.from_env() is None


def test_from_env__applied_once_per_process(fresh, monkeypatch):
    pinned = []
    monkeypatch.setattr(cpus, "pin", pinned.append)
    fresh(",".join(map(str, sorted(ALLOWED))))
    with pytest.warns(UserWarning, match=r"after JAX started its backend: its threads run on "
                      r"those cores, but its thread pools keep the size they were given "
                      r"\(make no JAX array before oslr's first make, make_problem or "
                      r"simulate\)"):  # this suite's has
        assert cpus.from_env() == ALLOWED
    fresh("bad")  # not read again
    assert cpus.from_env() == ALLOWED and pinned == [ALLOWED]


def test_from_env__no_warning_before_jax_starts(fresh, monkeypatch, recwarn):
    import types

    monkeypatch.setattr(cpus, "pin", lambda cores: None)
    monkeypatch.setitem(sys.modules, "jax._src.xla_bridge",
                        types.SimpleNamespace(backends_are_initialized=lambda: False))
    fresh(str(FIRST))
    assert cpus.from_env() == {FIRST} and not recwarn.list


def test_pin__every_thread_of_the_process_then_back():
    import threading

    started, stop = threading.Event(), threading.Event()
    other = threading.Thread(target=lambda: (started.set(), stop.wait()))
    other.start()
    started.wait()
    try:
        cpus.pin(frozenset({FIRST}))
        masks = {tid: os.sched_getaffinity(int(tid)) for tid in os.listdir("/proc/self/task")}
    finally:
        cpus.pin(frozenset(ALLOWED))  # this worker back on its cores
        stop.set()
        other.join()
    assert masks and all(m == {FIRST} for m in masks.values()), masks
    assert os.sched_getaffinity(0) == ALLOWED


def test_count__the_cores_allowed_now(monkeypatch):
    try:
        cpus.pin(frozenset({FIRST}))
        one = cpus.count()
    finally:
        cpus.pin(frozenset(ALLOWED))
    assert (one, cpus.count()) == (1, len(ALLOWED))
    monkeypatch.delattr(os, "sched_getaffinity")  # elsewhere: every core the system has
    monkeypatch.setattr(os, "cpu_count", lambda: 6)
    assert cpus.count() == 6
    monkeypatch.setattr(os, "cpu_count", lambda: None)  # unknown: one
    assert cpus.count() == 1


def test_from_env__without_sched_setaffinity_says_so(fresh, monkeypatch):
    monkeypatch.delattr(os, "sched_setaffinity")
    fresh("0")
    with pytest.raises(ValueError, match="no way to choose a process's cores"):
        cpus.from_env()


def test_cli__a_bad_value_is_one_line_and_status_2(fresh, capsys):
    from oslr.cli import main

    fresh("zero")
    assert main(["list"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("oslr: error: OSLR_CPUS='zero'") and "\n" not in err


_ONE_CORE = """
import json, os
import oslr
problem, pp = oslr.make_problem("sparse-linear", d=8, k=2)  # JAX's backend starts here
learner, params = oslr.make("ogd-random-subset", d=8, k=3)
res = oslr.simulate(learner, problem, params, pp, horizon=40, n_runs=5)
masks = set()
for tid in os.listdir("/proc/self/task"):
    try:
        masks.add(tuple(sorted(os.sched_getaffinity(int(tid)))))
    except ProcessLookupError:
        pass
print(json.dumps({"masks": sorted(masks), "threads": len(os.listdir("/proc/self/task")),
                  "loss": res.final["loss"].tolist()}))
"""


def test_one_core__every_thread_on_it_and_the_same_numbers():
    import oslr

    got = run_child(_ONE_CORE, **{cpus.VARIABLE: str(FIRST)})
    assert got["masks"] == [[FIRST]], got["masks"]  # JAX's threads too, made after the pin
    problem, pp = oslr.make_problem("sparse-linear", d=8, k=2)
    learner, params = oslr.make("ogd-random-subset", d=8, k=3)
    want = oslr.simulate(learner, problem, params, pp, horizon=40, n_runs=5)
    np.testing.assert_array_equal(np.asarray(got["loss"]), want.final["loss"])
