"""The suite's own helpers where a wrong one would hide bugs (tests/helpers.py)."""

import json
import os
import subprocess
import sys

import jax
import numpy as np

from tests import FAST_BUILD_FLAGS, USERS_BUILD_OPTIONS
from tests.helpers import default_build_env, users_build

# a program whose float32 bits differ between XLA's level-0 and optimised builds
_PROGRAM = """
import json
import jax, jax.numpy as jnp, numpy as np

def f(x):
    return (jnp.cumsum(x * x[::-1] + jnp.sin(x)).reshape(64, -1)
            @ jnp.cos(x).reshape(64, -1).T)

x = jnp.asarray(np.random.default_rng(0).standard_normal(4096), jnp.float32)
"""


def test_users_build__compiles_as_a_child_under_the_default_build_does():
    # the options are the fast build's flags, at XLA's own values
    assert sorted(USERS_BUILD_OPTIONS) == sorted(f.split("=")[0][2:] for f in FAST_BUILD_FLAGS)
    child = _PROGRAM + "print(json.dumps(np.asarray(jax.jit(f)(x)).tolist()))"
    out = subprocess.run([sys.executable, "-c", child], env=default_build_env(),
                         capture_output=True, text=True, check=True)
    want = np.asarray(json.loads(out.stdout.strip().splitlines()[-1]), np.float32)
    scope: dict = {}
    exec(_PROGRAM, scope)
    f, x = scope["f"], scope["x"]
    np.testing.assert_array_equal(np.asarray(users_build(f)(x)), want)
    # and the suite's fast build differs here (the check can fail; the compilation cache keeps
    # the two builds apart)
    if all(flag in os.environ.get("XLA_FLAGS", "") for flag in FAST_BUILD_FLAGS):
        assert not np.array_equal(np.asarray(jax.jit(f)(x)), want)


def test_known_to_jaxlib__the_fast_builds_flags_known_and_an_unknown_one_left_out():
    from tests.conftest import _known_to_jaxlib

    made_up = "--xla_cpu_no_such_option_anywhere=true"
    known, dropped = _known_to_jaxlib([*FAST_BUILD_FLAGS, made_up])
    assert known == list(FAST_BUILD_FLAGS) and dropped == [made_up]
    assert _known_to_jaxlib([]) == ([], [])
