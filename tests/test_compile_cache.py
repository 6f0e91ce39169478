"""oslr.compile_cache: a second process compiles nothing the first compiled (JAX's persistent
compilation cache, used by `oslr.simulate` as by the CLI), counted by JAX's monitoring events."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).parent.parent / "README.md"

#: run CODE in a new process, counting JAX's persistent-cache events; prints them as JSON
_COUNTING = """
import collections, json, sys
from jax import monitoring
events = collections.Counter()
monitoring.register_event_listener(lambda name, **kw: events.update([name]))
monitoring.register_event_duration_secs_listener(lambda name, s, **kw: events.update([name]))
exec(compile(sys.stdin.read(), "example", "exec"), {})
print("EVENTS", json.dumps(events))
"""

_TINY = """
import oslr
problem, pp = oslr.make_problem("sparse-linear", d=6, k=2, sigma=0.1)
learner, params = oslr.make("ogd-random-subset", d=6, max_k=3)
oslr.sweep(learner, problem, params, pp, {"k": [1, 3]}, horizon=12, n_runs=3)
"""


def _events(code: str, cache: Path, cwd: Path) -> dict:
    env = dict(os.environ, OSLR_COMPILE_CACHE=str(cache), MPLBACKEND="Agg")
    out = subprocess.run([sys.executable, "-c", _COUNTING], input=code, env=env, cwd=cwd,
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out.split("EVENTS ", 1)[1])


def _misses_then_hits(code: str, tmp_path: Path) -> tuple[dict, dict]:
    cache = tmp_path / "cache"
    return _events(code, cache, tmp_path), _events(code, cache, tmp_path)


def test_a_second_process_compiles_nothing_the_first_compiled(tmp_path):
    first, second = _misses_then_hits(_TINY, tmp_path)
    _every_program_from_the_cache(first, second)
    # the study's init and its chunk and nothing else: params, grids and scalars are made on
    # the host and transferred, not converted by small compiled programs; and the one-line
    # program that asks this jaxlib whether it knows the batch-invariant compiler options
    # (`oslr.program.compiler_options`)
    assert first[REQUESTS] == 3
    assert any((tmp_path / "cache").iterdir())


REQUESTS = "/jax/compilation_cache/compile_requests_use_cache"


def _every_program_from_the_cache(first: dict, second: dict) -> None:
    """Every program the first process compiled went to the cache (none too small or too quick
    for it, none compiled before the cache was set), and the second compiled none of them."""
    assert first.get("/jax/compilation_cache/cache_misses", 0) == first[REQUESTS]
    assert second.get("/jax/compilation_cache/cache_misses", 0) == 0
    assert second["/jax/compilation_cache/cache_hits"] == second[REQUESTS] == first[REQUESTS]


@pytest.mark.slow  # two new processes of the README's example (~20 s)
def test_the_readme_quickstart_in_a_second_process_compiles_nothing(tmp_path):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    example = next(b for b in blocks if "oslr.sweep" in b)
    small = example.replace("n_runs=1000", "n_runs=4").replace("horizon=2000", "horizon=100")
    first, second = _misses_then_hits(small, tmp_path)
    _every_program_from_the_cache(first, second)


def test_use_persistent_cache__off_caches_nothing(tmp_path):
    out = _events(_TINY, Path("off"), tmp_path)
    assert not out.get("/jax/compilation_cache/cache_misses")
    assert not out.get("/jax/compilation_cache/cache_hits")
