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
monitoring.register_event_duration_secs_listener(
    lambda name, s, **kw: events.update([name, f"{name}:{kw.get('fun_name')}"]))
exec(compile(sys.stdin.read(), "example", "exec"), {})
print("EVENTS", json.dumps(events))
"""

_TINY = """
import oslr
problem, pp = oslr.make_problem("sparse-linear", d=6, k=2, sigma=0.1)
learner, params = oslr.make("ogd-random-subset", d=6, max_k=3)
oslr.sweep(learner, problem, params, pp, {"k": [1, 3]}, horizon=12, n_runs=3)
"""


def _counted(code: str, cache: Path, cwd: Path, store: bool = False) -> str:
    """The output of `code` run in a new process under _COUNTING with the cache folder `cache`
    (and oslr's store of programs on with `store`; the suite turns it off, conftest.py)."""
    env = {k: v for k, v in os.environ.items() if store is False or k != "OSLR_PROGRAM_STORE"}
    env.update(OSLR_COMPILE_CACHE=str(cache), MPLBACKEND="Agg")
    return subprocess.run([sys.executable, "-c", _COUNTING], input=code, env=env, cwd=cwd,
                          capture_output=True, text=True, check=True).stdout


def _events(code: str, cache: Path, cwd: Path) -> dict:
    return json.loads(_counted(code, cache, cwd).split("EVENTS ", 1)[1])


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


# ------------------------------------------------------------ oslr's store of study programs

_TINY_RESULT = _TINY.replace("oslr.sweep(", "res = oslr.sweep(") + """
import hashlib
print("RESULT", hashlib.sha256(b"".join(v.tobytes() for _, v in sorted(res.final.items())))
      .hexdigest())
"""
LOWERED = "/jax/core/compile/jaxpr_to_mlir_module_duration"


def _store_run(code: str, cache: Path, cwd: Path) -> tuple[dict, str]:
    out = _counted(code, cache, cwd, store=True)
    return json.loads(out.split("EVENTS ", 1)[1]), out.split("RESULT ", 1)[1].split()[0]


def test_store__a_second_process_neither_traces_nor_lowers_the_study_and_gets_the_same_bits(
        tmp_path):
    cache = tmp_path / "cache"
    first, bits = _store_run(_TINY_RESULT, cache, tmp_path)
    assert len(list((cache / "programs").glob("*.bin"))) == 2  # the init and the chunk
    second, again = _store_run(_TINY_RESULT, cache, tmp_path)
    assert again == bits
    # the study's init and chunk (each traced and lowered over its arguments' leaves,
    # `compile_cache._export`): in the first process only
    traced = "/jax/core/compile/jaxpr_trace_duration"
    assert first[f"{traced}:over_leaves"] == first[f"{LOWERED}:jit(over_leaves)"] == 2
    assert f"{traced}:over_leaves" not in second and f"{LOWERED}:jit(over_leaves)" not in second
    # what the second lowers: the probe of the compile options and a call of each stored form,
    # all compiled by JAX's cache
    assert second[LOWERED] == 3 and second.get("/jax/compilation_cache/cache_misses", 0) == 0


@pytest.fixture
def store(tmp_path, monkeypatch):
    from oslr import compile_cache

    compile_cache.clear_loaded()
    monkeypatch.delenv("OSLR_PROGRAM_STORE", raising=False)
    monkeypatch.setenv("OSLR_COMPILE_CACHE", str(tmp_path / "cache"))
    assert compile_cache.store_dir() == tmp_path / "cache" / "programs"
    return tmp_path / "cache" / "programs"


def _program():
    """A jitted function with a static argument, counting how often it is traced."""
    import jax
    import jax.numpy as jnp

    traced = []

    def f(x, scale):
        traced.append(1)
        return {"y": jnp.sin(x["a"]) * scale, "n": x["a"].sum()}

    return jax.jit(f, static_argnums=(1,)), traced


def test_load_or_compile__stored_then_loaded_a_damaged_one_replaced(store):
    import jax
    import jax.numpy as jnp

    from oslr import compile_cache

    fn, traced = _program()
    devices = jax.devices()[:1]
    spec = ({"a": jax.ShapeDtypeStruct((3,), jnp.float32)},)
    first = compile_cache.load_or_compile(("t", 1), fn, spec, (2.0,), devices, {})
    (file,) = store.glob("*.bin")
    assert compile_cache.load_or_compile(("t", 1), fn, spec, (2.0,), devices, {}) is first
    compile_cache.clear_loaded()  # as a new process
    second = compile_cache.load_or_compile(("t", 1), fn, spec, (2.0,), devices, {})
    assert len(traced) == 1  # loaded, not traced again
    x = {"a": jnp.arange(3.0)}
    assert jax.tree.structure(second(x)) == jax.tree.structure({"y": 0, "n": 0})
    assert (first(x)["y"] == second(x)["y"]).all() and (second(x)["y"] == jnp.sin(x["a"]) * 2).all()
    assert second.out_info["y"].shape == (3,) and second.memory_analysis() is not None
    file.write_bytes(file.read_bytes()[:100])  # cut short
    compile_cache.clear_loaded()
    third = compile_cache.load_or_compile(("t", 1), fn, spec, (2.0,), devices, {})
    assert len(traced) == 2 and (third(x)["n"] == 3.0)
    assert len(file.read_bytes()) > 100  # replaced whole
    compile_cache.load_or_compile(("t", 2), fn, spec, (3.0,), devices, {})  # another program
    assert len(traced) == 3 and len(list(store.glob("*.bin"))) == 2


def test_load_or_compile__nothing_stored_without_a_digest_on_several_devices_or_when_off(
        store, monkeypatch):
    import jax
    import jax.numpy as jnp

    from oslr import compile_cache

    fn, traced = _program()
    spec = ({"a": jax.ShapeDtypeStruct((3,), jnp.float32)},)
    compile_cache.load_or_compile(None, fn, spec, (2.0,), jax.devices()[:1], {})
    assert not compile_cache._storable([jax.devices()[0]] * 2)  # only the count is read
    monkeypatch.setenv("OSLR_PROGRAM_STORE", "off")
    assert compile_cache.store_dir() is None
    compile_cache.load_or_compile(("t", 1), fn, spec, (2.0,), jax.devices()[:1], {})
    assert not store.exists()


def test_load_or_compile__the_least_recently_used_go_past_the_limit(store, monkeypatch):
    import os as _os

    import jax
    import jax.numpy as jnp

    from oslr import compile_cache

    fn, _ = _program()
    devices = jax.devices()[:1]
    spec = ({"a": jax.ShapeDtypeStruct((3,), jnp.float32)},)
    for i in range(3):
        compile_cache.load_or_compile(("t", i), fn, spec, (float(i),), devices, {})
    files = sorted(store.glob("*.bin"), key=lambda f: f.stat().st_mtime)
    for age, f in enumerate(files):  # oldest first, a second apart
        _os.utime(f, (1000 + age, 1000 + age))
    compile_cache.clear_loaded()  # as a new process: read from the file
    compile_cache.load_or_compile(("t", 0), fn, spec, (0.0,), devices, {})  # used: the newest
    size = max(f.stat().st_size for f in files)
    monkeypatch.setattr(compile_cache, "STORE_BYTES", 2 * size + size // 2)
    compile_cache.load_or_compile(("t", 3), fn, spec, (3.0,), devices, {})  # a fourth: 2 go
    left = set(store.glob("*.bin"))
    kept = {store / f"{compile_cache._key((('t', i), []), devices)}.bin" for i in (0, 3)}
    assert left == kept  # the newest and the one used again; by age, not by name


def test_key__changes_with_what_changes_a_program(store, monkeypatch):
    import jax
    import numpy as np

    from oslr import compile_cache

    devices = jax.devices()[:1]
    base = compile_cache._key(("p",), devices)
    assert compile_cache._key(("p",), devices) == base
    assert compile_cache._key(("q",), devices) != base
    with monkeypatch.context() as m:  # each change undone on its own
        m.setenv("OSLR_THREEFRY", "something else")
        assert compile_cache._key(("p",), devices) != base
    with monkeypatch.context() as m:
        m.setenv("XLA_FLAGS", os.environ.get("XLA_FLAGS", "") + " --xla_dump_to=/nowhere")
        assert compile_cache._key(("p",), devices) != base
    with monkeypatch.context() as m:  # one core or several: in_top_k's counting differs
        from oslr import cpus
        m.setattr(cpus, "count", lambda n=cpus.count() + 1: n)
        assert compile_cache._key(("p",), devices) != base
    setting = "jax_persistent_cache_min_entry_size_bytes"  # a JAX setting outside the trace
    was = jax.config.values[setting]  # context
    try:
        jax.config.update(setting, was + 1)
        assert compile_cache._key(("p",), devices) != base
    finally:
        jax.config.update(setting, was)
    with monkeypatch.context() as m:
        import optax
        m.setattr(optax, "__version__", optax.__version__ + ".other")
        assert compile_cache._key(("p",), devices) != base
    assert compile_cache._key(("p",), devices) == base  # all undone
    # an object's address is left out: two alike objects, the same key
    assert compile_cache._key((object(),), devices) == compile_cache._key((object(),), devices)
    with jax.default_matmul_precision("highest"):
        assert compile_cache._key(("p",), devices) != base
    with jax.set_mesh(jax.sharding.Mesh(np.array(devices), ("x",))):  # trace context alone
        assert compile_cache._key(("p",), devices) != base
    assert len(compile_cache.code_digest()) == 64


def test_value_digest__closures_arrays_and_what_it_cannot_vouch_for():
    import numpy as np

    import oslr
    from oslr import compile_cache
    from oslr.program import identity

    a = oslr.make("ogd-random-subset", d=6, max_k=3)[0]
    b = oslr.make("ogd-random-subset", d=6, max_k=3)[0]  # fresh closures, the same values
    c = oslr.make("ogd-random-subset", d=6, max_k=4)[0]
    assert a.step is not b.step
    assert compile_cache.value_digest(a) == compile_cache.value_digest(b)
    assert compile_cache.value_digest(a) != compile_cache.value_digest(c)
    problem = oslr.make_problem("sparse-linear", d=6, k=2)[0]
    assert identity(a, problem, 5, False) != identity(a, problem, 6, False)
    assert identity(a, problem, 5, False) != identity(a, problem, 5, True)
    x = np.arange(4.0)
    assert compile_cache.value_digest(x) != compile_cache.value_digest(x + 1)
    assert compile_cache.value_digest(x) != compile_cache.value_digest(x.astype(np.float32))
    assert compile_cache.value_digest(lambda y: y) is None  # defined here, not in oslr
    assert compile_cache.value_digest(a._replace(step=lambda *z: z)) is None
    assert compile_cache.value_digest({"k": object()}) is None
    assert identity(a._replace(step=lambda *z: z), problem, 5, False) is None


def test_store__a_study_from_the_store_equals_one_compiled_in_process_bit_for_bit(store,
                                                                                  monkeypatch):
    import numpy as np

    import oslr

    problem, pp = oslr.make_problem("sparse-linear", d=6, k=2, sigma=0.1)
    learner, params = oslr.make("ogd-random-subset", d=6, max_k=3)
    study = dict(horizon=25, n_runs=3, chunk_size=10)  # a last, partial chunk: guarded

    def run():
        return oslr.sweep(learner, problem, params, pp, {"k": [1, 3]}, **study)

    made = run()  # traced, lowered and stored
    assert len(list(store.glob("*.bin"))) == 3  # the init, the chunk and the guarded chunk
    from oslr import compile_cache

    compile_cache.clear_loaded()  # as a new process: from the files
    loaded = run()
    monkeypatch.setenv("OSLR_PROGRAM_STORE", "off")
    plain = run()
    for res in (loaded, plain):
        for key in made.final:
            np.testing.assert_array_equal(res.final[key], made.final[key], err_msg=key)
        for key in made.curves:
            np.testing.assert_array_equal(res.curves[key], made.curves[key], err_msg=key)


def test_value_digest__every_part_of_nested_containers_counts():
    import dataclasses

    from oslr import compile_cache
    from oslr.types import Requirements

    fields = [f.name for f in dataclasses.fields(Requirements)]
    base = Requirements()
    for name in fields:  # each field of an oslr dataclass, the last ones too
        value = getattr(base, name)
        other = dataclasses.replace(base, **{name: (not value) if isinstance(value, bool)
                                             else (value or 0) + 1})
        assert compile_cache.value_digest(other) != compile_cache.value_digest(base), name
    pairs = [((1, 2), (1, 3)), ([(0, 1), (0, 2)], [(0, 1), (0, 3)]),
             ({"a": (1,), "b": (2,)}, {"a": (1,), "b": (3,)})]
    for one, two in pairs:
        assert compile_cache.value_digest(one) != compile_cache.value_digest(two), (one, two)


def test_load_or_compile__kept_in_the_process_until_the_study_programs_are_dropped(store):
    import jax
    import jax.numpy as jnp

    from oslr import compile_cache, program

    fn, traced = _program()
    spec = ({"a": jax.ShapeDtypeStruct((3,), jnp.float32)},)
    got = compile_cache.load_or_compile(("t", 9), fn, spec, (2.0,), jax.devices()[:1], {})
    assert compile_cache.load_or_compile(("t", 9), fn, spec, (2.0,), jax.devices()[:1],
                                         {}) is got  # no file read, no compile
    program.clear_compiled()  # the arena's way out of too many mapped programs
    assert compile_cache.load_or_compile(("t", 9), fn, spec, (2.0,), jax.devices()[:1],
                                         {}) is not got


def test_value_digest__a_function_by_the_values_it_closes_over():
    import types

    from oslr import compile_cache

    def make(scale):
        def step(x):
            return x * scale

        return step

    def as_oslr(fn):  # the same code, as if defined in an oslr module (a trusted one)
        return types.FunctionType(fn.__code__, {"__name__": "oslr.made_here"}, fn.__name__,
                                  fn.__defaults__, fn.__closure__)

    one, two, again = as_oslr(make(1.0)), as_oslr(make(2.0)), as_oslr(make(1.0))
    assert one.__module__ == "oslr.made_here"
    assert compile_cache.value_digest(one) == compile_cache.value_digest(again)
    assert compile_cache.value_digest(one) != compile_cache.value_digest(two)
    assert compile_cache.value_digest(make(1.0)) is None  # defined in the tests: not trusted


def test_value_digest__partials_methods_builtins_and_dict_keys():
    import functools
    import types

    import numpy as np

    from oslr import compile_cache, metrics

    fn = metrics.combine  # a function of oslr
    digest = compile_cache.value_digest
    assert digest(functools.partial(fn, 1)) != digest(functools.partial(fn, 2))
    assert digest(types.MethodType(fn, 1)) != digest(types.MethodType(fn, 2))
    assert digest(np.add) is not None and digest(np.add) != digest(np.multiply)
    assert digest(len) is None  # a builtin outside the trusted modules
    assert digest({"a": 1}) != digest({"b": 1})
    assert digest({1: "a", "b": 2}) is not None  # keys of several types: sorted by repr


def test_store_dir__off_by_either_variable(store, monkeypatch):
    from oslr import compile_cache

    with monkeypatch.context() as m:
        m.setenv("OSLR_COMPILE_CACHE", "off")
        assert compile_cache.store_dir() is None


def test_load_or_compile__the_store_compiles_with_the_options_given(store, monkeypatch):
    import jax
    import jax.numpy as jnp

    from oslr import compile_cache

    seen = []
    real = compile_cache._load_or_export
    monkeypatch.setattr(compile_cache, "_load_or_export",
                        lambda *a: seen.append(a[-1]) or real(*a))
    fn, _ = _program()
    spec = ({"a": jax.ShapeDtypeStruct((3,), jnp.float32)},)
    options = {"xla_cpu_experimental_ynn_fusion_type": ""}
    compile_cache.load_or_compile(("t", 5), fn, spec, (2.0,), jax.devices()[:1], options)
    assert seen == [options]


def test_identity__of_the_learner_the_problem_and_the_stats_simulate_plays(store, monkeypatch):
    import oslr
    from oslr import blocks, program

    problem, pp = oslr.make_problem("sparse-linear", d=6, k=2, sigma=0.1)
    other, _ = oslr.make_problem("sparse-linear", d=8, k=2, sigma=0.1)  # k is in pp: d
    learner, params = oslr.make("ogd-random-subset", d=6, max_k=3)
    assert program.identity(learner, problem, 5, False) != program.identity(learner, other, 5,
                                                                            False)
    plays = []
    real = blocks.play_blocks
    monkeypatch.setattr(blocks, "play_blocks", lambda play, *a: plays.append(play)
                        or real(play, *a))
    res = oslr.simulate(learner, problem, params, pp, horizon=12, n_runs=2, track_stats=True)
    want = program.identity(learner, problem, len(res.ckpts), True)
    assert want is not None and plays[0].ident == want
