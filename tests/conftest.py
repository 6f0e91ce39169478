"""Strict JAX flags for the whole suite (equinox-style strictness)."""

import os
import sys
from pathlib import Path

from tests import FAST_BUILD_FLAGS

# Tests compile at XLA's backend optimisation level 0 with XLA:CPU's older fusion emitters
# (tests.FAST_BUILD_FLAGS; set before JAX starts its backend, and inherited by the subprocesses
# that tests launch): programs compile two to three times as fast, which is most of the suite's
# time. Results differ from an optimised build in float rounding (e.g.
# fused multiply-adds), which comparisons with a float64 reference tolerate, unless a rounding
# moves a discrete choice: the optimised build once ranked a top-k entry below a copy of
# itself one ulp apart, which level 0 alone hid and the older emitters showed (topk.in_top_k; a
# test now runs under that build, tests/learners/test_ftpsl.py). Bit-for-bit tests compare runs
# of the same program, or compile both programs as users do (tests.helpers.users_build). Studies,
# notebooks and benchmarks use the default.
# OSLR_TEST_BUILD=default runs the suite exactly as users compile: no test XLA flag, oslr's own
# unrolled threefry, and oslr's store of programs on where users have it (`oslr run`,
# `Study.run`, `oslr.use_compile_cache`), off in a test that patches anything (its key cannot
# see a patch). `.ci/run` runs the contract and reference tests under it too.
_BUILD = os.environ.get("OSLR_TEST_BUILD", "fast")
if _BUILD not in ("fast", "default"):
    raise ValueError(f"OSLR_TEST_BUILD={_BUILD!r}: 'fast' (the default: XLA optimisation level 0, "
                     "older fusion emitters) "
                     "or 'default' (XLA's own optimised build)")

#: where the flags the installed jaxlib knows are handed to xdist's workers and child processes
_PROBED = "OSLR_TEST_FAST_FLAGS"


def _known_to_jaxlib(flags) -> tuple[list[str], list[str]]:
    """(flags whose option the installed jaxlib knows, the others): XLA refuses to start on an
    unknown flag, so a jax release that drops one would stop the whole suite. Asked as oslr
    asks of its own options, by compiling (`oslr.program.known_options`), in a child process:
    this one's backend must start with the flags. Once per jaxlib version (kept in the
    temporary folder) and run (`_PROBED`)."""
    import json
    import tempfile
    from importlib import metadata

    kept = Path(tempfile.gettempdir(), f"oslr-test-flags-jaxlib-{metadata.version('jaxlib')}.json")
    if _PROBED not in os.environ and kept.is_file():
        os.environ[_PROBED] = json.loads(kept.read_text())
    if _PROBED not in os.environ:
        import subprocess

        options = {name: _flag_value(value)
                   for name, value in (f.lstrip("-").split("=", 1) for f in flags)}
        code = ("import json, sys; from oslr.program import known_options; "
                "print(json.dumps(sorted(known_options(json.loads(sys.argv[1])))))")
        env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
        out = subprocess.run([sys.executable, "-c", code, json.dumps(options)], env=env,
                             capture_output=True, text=True, check=True).stdout
        os.environ[_PROBED] = " ".join(json.loads(out.splitlines()[-1]))
        tmp = kept.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(os.environ[_PROBED]))
        tmp.replace(kept)  # whole or not at all: another run may read it meanwhile
    known = set(os.environ[_PROBED].split())
    return ([f for f in flags if f.lstrip("-").split("=")[0] in known],
            [f for f in flags if f.lstrip("-").split("=")[0] not in known])


def _flag_value(text: str):
    """An XLA flag's value as a compile option takes it (a bool or an int where it reads so)."""
    if text in ("true", "false"):
        return text == "true"
    return int(text) if text.lstrip("-").isdigit() else text


_FAST, _DROPPED = _known_to_jaxlib(FAST_BUILD_FLAGS) if _BUILD == "fast" else ([], [])
_HAVE = os.environ.get("XLA_FLAGS", "").split()
if _FAST:  # once: xdist's workers inherit the controller's
    os.environ["XLA_FLAGS"] = " ".join([*_HAVE, *(f for f in _FAST if f not in _HAVE)])


def pytest_report_header(config):
    """The build the suite compiles with, first thing in pytest's output."""
    if _BUILD == "default":
        build = "default (XLA's optimised build, as users get)"
    else:
        build = f"fast ({' '.join(_FAST) or 'no flag known to this jaxlib'})"
        if _DROPPED:
            build += f"; not known to this jaxlib, left out: {' '.join(_DROPPED)}"
    return [f"oslr test build: {build}; OSLR_THREEFRY={os.environ.get('OSLR_THREEFRY')} "
            "(OSLR_TEST_BUILD=default compiles as users do)"]

if _BUILD == "fast":
    # Every hash by JAX's own (rolled) threefry lowering: the same bits (tests/test_prng.py
    # checks the unrolled code against it), programs compile about twice as fast (oslr/prng.py).
    os.environ.setdefault("OSLR_THREEFRY", "rolled")
    # oslr's store of compiled study programs (oslr/compile_cache.py) keys a program by oslr's
    # files, which a test's monkeypatch or a mutant (tools/mutation.py: one set of files, the
    # mutant chosen at run time) does not change: off, as for a user who patches oslr in memory,
    # except in the tests of the store (tests/test_compile_cache.py)
    os.environ.setdefault("OSLR_PROGRAM_STORE", "off")

import jax  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

jax.config.update("jax_numpy_rank_promotion", "raise")


@pytest.fixture(autouse=True)
def _no_store_where_a_test_patches(request):
    """Under the users' build, oslr's store is off in a test that patches (its key cannot see
    a patch, as for a user who patches oslr in memory)."""
    if _BUILD == "default" and "monkeypatch" in request.fixturenames:
        request.getfixturevalue("monkeypatch").setenv("OSLR_PROGRAM_STORE", "off")
    yield


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture(scope="session", autouse=True)
def _compilation_cache(tmp_path_factory):
    """A persistent compilation cache for this session only: many tests build fresh closures of
    the same programs (contract checks, references, the benchmark smoke run), and XLA compiles
    each identical program once (17% off the contract suite on 2 cores)."""
    base = tmp_path_factory.getbasetemp()
    # pytest-xdist workers have their own base folders under a shared root: share the cache;
    # the mutation tool (tools/mutation.py) names one cache for all of a run's mutants
    cache = Path(os.environ.get("OSLR_TEST_JAX_CACHE") or
                 (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "jax-cache")
    cache.mkdir(parents=True, exist_ok=True)
    jax.config.update("jax_compilation_cache_dir", str(cache))
    os.environ["OSLR_COMPILE_CACHE"] = str(cache)  # `oslr` subprocesses: this cache, not ~/.cache
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    yield
