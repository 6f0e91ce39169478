"""Strict JAX flags for the whole suite (equinox-style strictness)."""

import os
import sys
from pathlib import Path

from tests import FAST_BUILD_FLAGS

# Bytecode caches (`__pycache__`, git-ignored) are written even where PYTHONDONTWRITEBYTECODE is
# set (as on the CI machine): otherwise every xdist worker rewrites the asserts of every test
# module and every child process (`oslr` commands, scripts) recompiles the package. Children
# inherit it through the environment.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

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
# OSLR_TEST_BUILD=default runs the suite under the build users get (slower to compile): a result
# that only the optimised build gets wrong shows there only (as topk.in_top_k's tie rule did).
_BUILD = os.environ.get("OSLR_TEST_BUILD", "fast")
if _BUILD not in ("fast", "default"):
    raise ValueError(f"OSLR_TEST_BUILD={_BUILD!r}: 'fast' (the default: XLA optimisation level 0, "
                     "older fusion emitters) "
                     "or 'default' (XLA's own optimised build)")


def _known_to_jaxlib(flags) -> tuple[list[str], list[str]]:
    """(flags whose option the installed jaxlib knows, the others): XLA refuses to start on an
    unknown flag, so a jax release that drops one would stop the whole suite. Each option's
    name is looked up in jaxlib's shared libraries (found without importing jaxlib, before JAX
    starts)."""
    import importlib.util
    import mmap

    spec = importlib.util.find_spec("jaxlib")
    roots = [Path(p) for p in (spec.submodule_search_locations or [])] if spec else []
    names = {f: f.split("=")[0].lstrip("-").encode() for f in flags}
    found: set[str] = set()
    for lib in (lib for root in roots for lib in sorted(root.rglob("*.so"))):
        with open(lib, "rb") as f:
            try:
                data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            except ValueError:  # an empty file
                continue
            with data:
                found |= {flag for flag, name in names.items() if data.find(name) != -1}
        if len(found) == len(flags):
            break
    return [f for f in flags if f in found], [f for f in flags if f not in found]


_FAST, _DROPPED = _known_to_jaxlib(FAST_BUILD_FLAGS) if _BUILD == "fast" else ([], [])
if _FAST:
    os.environ["XLA_FLAGS"] = " ".join([os.environ.get("XLA_FLAGS", ""), *_FAST]).strip()


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

# Every hash by JAX's own (rolled) threefry lowering: the same bits (tests/test_prng.py checks the
# unrolled code against it), programs compile about twice as fast (oslr/prng.py).
os.environ.setdefault("OSLR_THREEFRY", "rolled")
# oslr's store of compiled study programs (oslr/compile_cache.py) keys a program by oslr's files,
# which a test's monkeypatch or a mutant (tools/mutation.py: one set of files, the mutant chosen
# at run time) does not change: off, as for a user who patches oslr in memory, except in the
# tests of the store, which turn it on in their own processes (tests/test_compile_cache.py)
os.environ.setdefault("OSLR_PROGRAM_STORE", "off")

import jax  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

jax.config.update("jax_numpy_rank_promotion", "raise")


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
