"""oslr.compile_cache: a second process compiles nothing the first compiled (JAX's persistent
compilation cache and oslr's store, on where asked: `oslr.use_compile_cache`, the CLI,
`Study.run`), counted by JAX's monitoring events; every entry of the store verified before use;
nothing else changes JAX's settings for the process."""

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
oslr.use_compile_cache()
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


@pytest.mark.slow  # with the store off: JAX's cache alone (with the store: the default run's)
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
    assert "oslr.use_compile_cache()" in example
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
    # all compiled by JAX's cache: nothing compiled twice
    assert second[LOWERED] == 3 and second.get("/jax/compilation_cache/cache_misses", 0) == 0
    _every_program_from_the_cache(first, second)
    assert first[REQUESTS] == 3  # the probe, the init and the chunk: nothing else compiled


@pytest.fixture
def store(tmp_path, monkeypatch):
    from oslr import compile_cache

    compile_cache.clear_loaded()
    monkeypatch.setattr(compile_cache, "_STORE_ON", [True])  # as after use_compile_cache
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
    with pytest.warns(compile_cache.StoreWarning, match=f"^oslr's stored program {file} could "
                      r"not be loaded \(JSONDecodeError: .*\): made again and replaced\.$"):
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
    setting = "jax_numpy_rank_promotion"  # a JAX setting outside the trace context
    was = jax.config.values[setting]
    try:
        jax.config.update(setting, "warn" if was != "warn" else "allow")
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
    monkeypatch.setattr(blocks, "play_blocks", lambda **kw: plays.append(kw["play"])
                        or real(**kw))
    res = oslr.simulate(learner, problem, params, pp, horizon=12, n_runs=2, track_stats=True)
    want = program.identity(learner, problem, len(res.ckpts), True)
    assert want is not None and plays[0].ident == want


# ------------------------------------------------ only where asked: no JAX setting changed else

def test_use_persistent_cache__oslr_compile_cache_or_the_users_cache_folder_unless_set_or_off(
        tmp_path, monkeypatch):
    import jax

    import oslr.cli as cli
    from oslr import compile_cache
    from oslr.cli import main

    set_to = []

    class Config:  # jax.config as use_persistent_cache sees it
        jax_compilation_cache_dir = None

        def update(self, name, value):
            set_to.append((name, value))

    config = Config()
    monkeypatch.setattr(jax, "config", config)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("OSLR_COMPILE_CACHE", raising=False)
    compile_cache.use_persistent_cache()
    default = tmp_path / "home" / ".cache" / "oslr" / "jax"
    assert set_to == [("jax_compilation_cache_dir", str(default)),
                      ("jax_persistent_cache_min_compile_time_secs", 0.0)] and default.is_dir()
    del set_to[1:]
    monkeypatch.setenv("OSLR_COMPILE_CACHE", str(tmp_path / "mine"))
    compile_cache.use_persistent_cache()
    assert set_to[-2] == ("jax_compilation_cache_dir", str(tmp_path / "mine"))
    del set_to[1:]
    compile_cache.use_persistent_cache()  # the folder is there from the last run: used again
    assert set_to[-2] == ("jax_compilation_cache_dir", str(tmp_path / "mine"))
    del set_to[1:]
    (tmp_path / "file").write_text("")
    for where in ("off", str(tmp_path / "file" / "sub")):  # off, or a folder that cannot be made
        monkeypatch.setenv("OSLR_COMPILE_CACHE", where)
        compile_cache.use_persistent_cache()
    assert len(set_to) == 1
    config.jax_compilation_cache_dir = "/the/users/own"
    monkeypatch.setenv("OSLR_COMPILE_CACHE", str(tmp_path / "mine"))
    compile_cache.use_persistent_cache()  # a cache the user set is kept
    assert len(set_to) == 1
    calls = []
    monkeypatch.setattr(compile_cache, "use_compile_cache", lambda: calls.append(1))
    monkeypatch.setattr(cli.commands, "cmd_list", lambda args: 0)
    assert main(["list"]) == 0 and calls == []  # only the commands that compile
    monkeypatch.setattr(cli.run, "cmd_run", lambda args: 0)
    assert main(["run"]) == 0 and calls == [1]


def test_use_compile_cache__turns_the_store_on_for_the_process(tmp_path, monkeypatch):
    import jax

    from oslr import compile_cache

    monkeypatch.setattr(compile_cache, "_STORE_ON", [])
    monkeypatch.delenv("OSLR_PROGRAM_STORE", raising=False)
    monkeypatch.setenv("OSLR_COMPILE_CACHE", str(tmp_path / "cache"))
    assert compile_cache.store_dir() is None  # not asked for: nothing stored
    cache_dir = jax.config.jax_compilation_cache_dir  # the suite's (conftest): kept
    compile_cache.use_compile_cache()
    assert compile_cache.store_dir() == tmp_path / "cache" / "programs"
    assert jax.config.jax_compilation_cache_dir == cache_dir


#: oslr's building blocks in a new process, printing the JAX settings that changed
_BLOCKS = """
import json, jax
before = {k: repr(v) for k, v in jax.config.values.items()}
import oslr
problem, pp = oslr.make_problem("sparse-linear", d=8, k=2)
learner, params = oslr.make("ogd-full", d=8)
oslr.simulate(learner, problem, params, pp, horizon=10, n_runs=2)
oslr.sweep(learner, problem, params, pp, {"eta": [0.1, 0.2]}, horizon=10, n_runs=2)
after = {k: repr(v) for k, v in jax.config.values.items()}
print("CHANGED", json.dumps(sorted(k for k in before.keys() | after.keys()
                                   if before.get(k) != after.get(k))))
"""


@pytest.mark.slow  # keeps the default run under 5 min (CI runs it with -m slow)
def test_building_blocks__leave_jax_settings_as_they_found_them(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "OSLR_PROGRAM_STORE"}
    env.update(OSLR_COMPILE_CACHE=str(tmp_path / "cache"))
    out = subprocess.run([sys.executable, "-c", _BLOCKS], env=env, cwd=tmp_path,
                         capture_output=True, text=True, check=True).stdout
    assert json.loads(out.split("CHANGED ", 1)[1]) == []
    assert not (tmp_path / "cache").exists()  # neither JAX's cache nor oslr's store


# ------------------------------------------------------ every entry verified before it is used

def _tiny_study(name: str, design: str = "gaussian"):
    """A tiny study's final and curves as one bytes string, and the study's function."""
    import numpy as np

    import oslr

    problem, pp = oslr.make_problem("sparse-linear", d=6, k=2, sigma=0.1, design=design)
    learner, params = oslr.make(name, d=6)

    def run() -> bytes:
        res = oslr.simulate(learner, problem, params, pp, horizon=12, n_runs=3)
        return b"".join(np.asarray(v).tobytes() for _, v in sorted(res.final.items())) + \
            b"".join(np.asarray(v).tobytes() for _, v in sorted(res.curves.items()))

    return run


@pytest.fixture(scope="module")
def cold(tmp_path_factory):
    """Four tiny studies played once with the store empty: (their functions, their bits, the
    entries each stored, init first, as names in the store's folder, that folder)."""
    from oslr import compile_cache

    runs = {n: _tiny_study(n) for n in ("ogd-full", "ogd-random-subset", "uniform-subset")}
    runs["rademacher"] = _tiny_study("ogd-random-subset", "rademacher")
    cache = tmp_path_factory.mktemp("cold") / "cache"
    bits, files = {}, {}
    with pytest.MonkeyPatch.context() as m:
        m.setattr(compile_cache, "_STORE_ON", [True])
        m.delenv("OSLR_PROGRAM_STORE", raising=False)
        m.setenv("OSLR_COMPILE_CACHE", str(cache))
        store = compile_cache.store_dir()
        for name, run in runs.items():
            before = set(store.glob("*.bin")) if store.exists() else set()
            compile_cache.clear_loaded()
            bits[name] = run()
            new = sorted(set(store.glob("*.bin")) - before, key=lambda f: f.stat().st_size)
            files[name] = [f.name for f in new]  # the init first: the smaller program
    compile_cache.clear_loaded()
    return runs, bits, files, store


@pytest.fixture
def entries(store, cold):
    """The cold studies' entries copied into this test's store: (the studies' functions, their
    cold bits, each study's entry files here)."""
    import shutil

    runs, bits, files, where = cold
    shutil.copytree(where, store)
    return runs, bits, {name: [store / f for f in names] for name, names in files.items()}


def _rerun_warned(runs: dict, bits: dict, damaged: list) -> None:
    """Each study run again (as a new process) gives its cold bits, with one warning for each
    damaged entry that names its file; a third run reads the entries, made again, without a
    warning."""
    import warnings

    from oslr import compile_cache

    compile_cache.clear_loaded()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for name, run in runs.items():
            assert run() == bits[name], name
    said = [str(w.message) for w in caught if issubclass(w.category, compile_cache.StoreWarning)]
    assert len(said) == len(damaged), said
    for file in damaged:
        assert sum(str(file) in line for line in said) == 1, (file, said)
        assert all("\n" not in line for line in said)
    compile_cache.clear_loaded()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # none now: replaced
        for name, run in runs.items():
            assert run() == bits[name], name


def _only(runs: dict, *names: str) -> dict:
    return {n: runs[n] for n in names}


@pytest.mark.slow  # keeps the default run under 5 min (CI runs it with -m slow)
def test_store__entries_loaded_whole_give_the_cold_bits_without_a_warning(entries):
    runs, bits, _ = entries
    _rerun_warned(runs, bits, [])


def test_store__swapped_entries_of_two_learners_give_the_cold_bits(entries):
    runs, bits, files = entries
    (_, a_chunk), (_, b_chunk) = files["ogd-full"], files["ogd-random-subset"]
    one, two = a_chunk.read_bytes(), b_chunk.read_bytes()
    a_chunk.write_bytes(two)
    b_chunk.write_bytes(one)
    _rerun_warned(_only(runs, "ogd-full", "ogd-random-subset"), bits, [a_chunk, b_chunk])


def test_store__entries_of_another_design_copied_over_give_the_cold_bits(entries):
    runs, bits, files = entries
    for mine, theirs in zip(files["ogd-random-subset"], files["rademacher"]):  # another store's
        mine.write_bytes(theirs.read_bytes())
    _rerun_warned(_only(runs, "ogd-random-subset"), bits, files["ogd-random-subset"])


@pytest.mark.slow  # keeps the default run under 5 min (CI runs it with -m slow)
def test_store__rotated_entries_give_the_cold_bits(entries):
    runs, bits, files = entries
    names = ("ogd-full", "ogd-random-subset", "uniform-subset")
    everything = [f for n in names for f in files[n]]
    contents = [f.read_bytes() for f in everything]
    for f, data in zip(everything, contents[1:] + contents[:1]):
        f.write_bytes(data)
    _rerun_warned(_only(runs, *names), bits, everything)


@pytest.mark.parametrize("where", ["head", "program", "end"])
def test_store__a_flipped_byte_gives_the_cold_bits(entries, where):
    runs, bits, files = entries
    file = files["ogd-random-subset"][-1]
    data = bytearray(file.read_bytes())
    head = data.index(b"\n")
    at = {"head": head // 2, "program": head + 1 + (len(data) - head) // 2,
          "end": len(data) - 1}[where]
    data[at] ^= 0x10
    file.write_bytes(bytes(data))
    _rerun_warned(_only(runs, "ogd-random-subset"), bits, [file])


def _rewritten(file, **change) -> None:
    """Rewrite the entry `file` with its header's fields or program changed and a digest that
    matches: an entry damaged where its digest cannot tell."""
    from oslr import compile_cache

    head, _, program = file.read_bytes().partition(b"\n")
    head = json.loads(head)
    program = change.pop("program", program)
    head.update(change)
    head["sha256"] = compile_cache._digest(head, program)
    file.write_bytes(json.dumps(head).encode() + b"\n" + program)


def test_store__an_entry_that_does_not_deserialize_or_match_the_call_is_made_again(entries):
    runs, bits, files = entries
    init, chunk = files["ogd-full"]
    other = init.read_bytes().partition(b"\n")[2]
    _rewritten(init, program=b"not a program")  # the digest matches: deserializing fails
    _rewritten(chunk, program=other)  # the init's program under the chunk's key: its arguments
    _rerun_warned(_only(runs, "ogd-full"), bits, [init, chunk])


@pytest.mark.parametrize("change", [{"format": "oslr program store entry 0"},
                                    {"out_tree": None},
                                    {"out_tree": ["os:system", None, []]}])
def test_store__an_entry_of_another_format_or_tree_is_made_again(entries, change):
    runs, bits, files = entries
    file = files["ogd-random-subset"][-1]
    _rewritten(file, **change)
    _rerun_warned(_only(runs, "ogd-random-subset"), bits, [file])


def test_store__an_entry_is_data_its_key_in_full(entries):
    import hashlib

    from oslr import compile_cache

    _, _, files = entries
    for file in files["ogd-random-subset"]:
        head, _, program = file.read_bytes().partition(b"\n")
        head = json.loads(head)
        assert head["format"] == compile_cache.ENTRY_FORMAT
        assert file.stem == hashlib.sha256(head["key"].encode()).hexdigest()
        assert compile_cache.code_digest() in head["key"]
        assert head["sha256"] == compile_cache._digest(head, program)
        assert set(head) == {"format", "key", "out_tree", "sha256"}
        assert b"pickle" not in program[:16] and not program.startswith(b"\x80")


def test_tree_data__every_tree_of_a_study_written_and_read_back():
    import jax
    import jax.numpy as jnp

    from oslr import compile_cache, program

    import oslr
    for name in ("ogd-random-subset", "ftpsl", "linucb"):
        spec = oslr.registry.spec(name)
        problem, pp = oslr.testing.example_problem(spec.family, d=8)
        learner, params = oslr.make(name, d=8)
        init, _ = program.make_run_fns(learner, problem, 3, True)
        out = jax.eval_shape(init, jnp.uint32(0), jnp.int32(0), params, pp)
        tree = jax.tree.structure(out)
        data = json.loads(json.dumps(compile_cache._tree_data(tree)))
        assert compile_cache._tree_from_data(data) == tree, name
    mixed = jax.tree.structure({"a": (1, [2, None]), "b": {"c": ()}})
    assert compile_cache._tree_from_data(compile_cache._tree_data(mixed)) == mixed
    params = jax.tree.structure(oslr.make("ftpsl", d=8)[1])  # a dataclass: a tuple as aux data
    data = json.loads(json.dumps(compile_cache._tree_data(params)))
    assert data[1] == {"tuple": []} and compile_cache._tree_from_data(data) == params
    assert compile_cache._unplain(compile_cache._plain((1, [2, (3,)], "x", None, 1.5))) == (
        1, [2, (3,)], "x", None, 1.5)
    with pytest.raises(compile_cache._Opaque):
        compile_cache._tree_data(jax.tree.structure(_Mine(1, 2)))  # a type not trusted


class _Mine(tuple):
    """A pytree node type defined outside oslr's trusted modules."""

    def __new__(cls, *a):
        return super().__new__(cls, a)


def _register_mine():
    import jax

    jax.tree_util.register_pytree_node(_Mine, lambda m: (tuple(m), None),
                                       lambda _, c: _Mine(*c))


_register_mine()


def test_store__a_header_changed_where_it_still_reads_is_caught_by_the_digest(entries):
    runs, bits, files = entries
    file = files["ogd-random-subset"][-1]
    data = file.read_bytes()
    head = data[:data.index(b"\n")]
    assert b'"loss"' in head
    file.write_bytes(data.replace(b'"loss"', b'"lmss"', 1))  # a metric renamed in the tree
    _rerun_warned(_only(runs, "ogd-random-subset"), bits, [file])


# ------------------------------------------------------------------ every input of the key

def _as_module(fn, module: str):
    """`fn`'s code, defaults and closure as if defined in `module`."""
    import types

    out = types.FunctionType(fn.__code__, {"__name__": module}, fn.__name__, fn.__defaults__,
                             fn.__closure__)
    out.__kwdefaults__ = fn.__kwdefaults__
    return out


def test_value_digest__defaults_keyword_defaults_and_closures_count():
    from oslr import compile_cache

    digest = compile_cache.value_digest

    def make(scale, shift=0.0, *, power=1):
        def step(x, a=shift, *, b=power):
            return (x * scale + a) ** b

        return _as_module(step, "oslr.made_here")

    base = digest(make(1.0))
    assert base is not None and digest(make(1.0)) == base
    assert digest(make(2.0)) != base  # a closed-over value
    assert digest(make(1.0, shift=1.0)) != base  # a default
    assert digest(make(1.0, power=2)) != base  # a keyword-only default
    one = make(1.0)
    one.__defaults__ = (0,)  # the int 0, not the float 0.0
    assert digest(one) != base


@pytest.mark.parametrize("module", ["oslr_plugin", "numpyro", "jaxopt", "optaxx", "numpy_ext",
                                    "jaxlib_fake", "osl", "myoslr.oslr"])
def test_value_digest__a_module_that_shares_only_a_prefix_is_not_trusted(module):
    from oslr import compile_cache

    def step(x):
        return x

    assert compile_cache.value_digest(_as_module(step, "oslr.learners.mine")) is not None
    assert compile_cache.value_digest(_as_module(step, module)) is None
    assert compile_cache.value_digest(_Mine) is None  # a type defined in the tests


@pytest.mark.parametrize("name", ["OSLR_THREEFRY", "OSLR_CPUS", "OSLR_SOMETHING_NEW",
                                  "XLA_FLAGS", "XLA_PYTHON_CLIENT_PREALLOCATE", "XLA_NEW"])
def test_key__each_oslr_and_xla_variable_changes_it(monkeypatch, name):
    import jax

    from oslr import compile_cache

    devices = jax.devices()[:1]
    monkeypatch.delenv(name, raising=False)
    base = compile_cache._key(("p",), devices)
    monkeypatch.setenv(name, "1")
    one = compile_cache._key(("p",), devices)
    monkeypatch.setenv(name, "2")
    assert len({base, one, compile_cache._key(("p",), devices)}) == 3
    monkeypatch.delenv(name)
    monkeypatch.setenv("OTHER_" + name, "1")  # a variable of neither: the same program
    assert compile_cache._key(("p",), devices) == base


def test_key__where_the_store_is_and_whether_it_is_used_leave_it(monkeypatch, tmp_path):
    import jax

    from oslr import compile_cache

    devices = jax.devices()[:1]
    assert compile_cache.NOT_IN_KEY == ("OSLR_COMPILE_CACHE", "OSLR_PROGRAM_STORE")
    monkeypatch.setenv("OSLR_COMPILE_CACHE", str(tmp_path / "one"))
    monkeypatch.setenv("OSLR_PROGRAM_STORE", "on")
    base = compile_cache._key(("p",), devices)
    monkeypatch.setenv("OSLR_COMPILE_CACHE", str(tmp_path / "two"))  # a store moved elsewhere
    monkeypatch.delenv("OSLR_PROGRAM_STORE")
    assert compile_cache._key(("p",), devices) == base
    was = jax.config.values["jax_compilation_cache_dir"]  # and JAX's cache with it
    try:
        jax.config.update("jax_compilation_cache_dir", str(tmp_path / "two"))
        assert compile_cache._key(("p",), devices) == base
    finally:
        jax.config.update("jax_compilation_cache_dir", was)


def test_key__each_jax_setting_changes_it(monkeypatch):
    import jax

    from oslr import compile_cache

    devices = jax.devices()[:1]
    real = jax.config
    values = dict(real.values)
    base = compile_cache._key(("p",), devices)

    class Config:  # jax.config with one setting changed
        def __init__(self, changed):
            self.values = changed

    for name in values:
        monkeypatch.setattr(jax, "config", Config({**values, name: ("changed", values[name])}))
        if name in compile_cache.JAX_NOT_IN_KEY:  # the persistent cache's own settings
            assert compile_cache._key(("p",), devices) == base, name
        else:
            assert compile_cache._key(("p",), devices) != base, name
    assert "jax_compilation_cache_dir" in compile_cache.JAX_NOT_IN_KEY
    assert "jax_enable_x64" not in compile_cache.JAX_NOT_IN_KEY
    monkeypatch.setattr(jax, "config", Config(values))
    assert compile_cache._key(("p",), devices) == base


def test_key__the_devices_change_it():
    import jax

    from oslr import compile_cache

    class Client:
        def __init__(self, version):
            self.platform_version = version

    class Device:
        def __init__(self, platform="cpu", kind="cpu", id=0, version="v1"):
            self.platform, self.device_kind, self.id = platform, kind, id
            self.client = Client(version)

    base = compile_cache._key(("p",), [Device()])
    assert compile_cache._key(("p",), [Device()]) == base
    for other in (Device(platform="gpu"), Device(kind="H100"), Device(id=1),
                  Device(version="v2")):
        assert compile_cache._key(("p",), [other]) != base
    assert compile_cache._key(("p",), [Device(), Device(id=1)]) != base
    assert compile_cache._key(("p",), jax.devices()[:1]) != base


# ------------------------------------------------- every learner: the store's bits are the same

#: one learner in the default run (with the guarded last chunk); every other with -m slow
_EVERY_KIND = {"ogd-full"}


def _registry_cases():
    from oslr.registry import LEARNERS

    return [name if name in _EVERY_KIND else pytest.param(name, marks=pytest.mark.slow)
            for name in sorted(LEARNERS)]


@pytest.mark.parametrize("name", _registry_cases())
def test_store__every_learner_from_the_store_equals_the_store_off_bit_for_bit(store, monkeypatch,
                                                                              name):
    import numpy as np

    import oslr
    from oslr import compile_cache
    from oslr.testing import example_problem

    spec = oslr.registry.spec(name)
    learner, _ = spec.make(8)
    problem, pp = (oslr.make_problem("kegg") if getattr(learner.requires, "dataset", False)
                   else example_problem(spec.family, learner.requires, 8))
    options = {"n_arms": problem.n_arms} if "n_arms" in spec.option_names else {}
    learner, params = spec.make(problem.d, **options)

    def run():
        res = oslr.simulate(learner, problem, params, pp, horizon=14, n_runs=3, chunk_size=8)
        return {**{f"final {k}": v for k, v in res.final.items()},
                **{f"curves {k}": v for k, v in res.curves.items()}}

    made = run()  # traced, lowered and stored
    assert len(list(store.glob("*.bin"))) == 3  # the init, the chunk, the guarded last chunk
    compile_cache.clear_loaded()  # as a new process: from the files
    loaded = run()
    monkeypatch.setenv("OSLR_PROGRAM_STORE", "off")
    plain = run()
    assert made.keys() == loaded.keys() == plain.keys()
    for key in made:
        np.testing.assert_array_equal(loaded[key], made[key], err_msg=key)
        np.testing.assert_array_equal(plain[key], made[key], err_msg=key)


# ---------------------------------------- the study entry points: nothing compiled twice

_STUDY_RUN = """
import sys
import oslr
oslr.Study(problem="sparse-linear", problem_options={"d": 6, "k": 2}, learners=["ogd-full"],
           horizon=20, runs=3, out=sys.argv[-1]).run(progress="none", plot=False)
"""

_OSLR_RUN = """
import sys
from oslr.cli import main
main(["run", "--problem", "sparse-linear", "--d", "6", "--k", "2", "--learners", "ogd-full",
      "--horizon", "20", "--runs", "3", "--no-progress", "--out", sys.argv[-1]])
"""


def _counted_study(code: str, cache: Path, cwd: Path, out: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "OSLR_PROGRAM_STORE"}
    env.update(OSLR_COMPILE_CACHE=str(cache), MPLBACKEND="Agg")
    got = subprocess.run([sys.executable, "-c", _COUNTING, out], input=code, env=env, cwd=cwd,
                         capture_output=True, text=True, check=True).stdout
    return json.loads(got.split("EVENTS ", 1)[1])


@pytest.mark.slow  # two new processes each; Study.run asking for the cache: the test below
@pytest.mark.parametrize("code", [_STUDY_RUN, _OSLR_RUN], ids=["Study.run", "oslr run"])
def test_study_entry_points__a_second_process_compiles_nothing_the_first_compiled(tmp_path,
                                                                                  code):
    cache = tmp_path / "cache"
    first = _counted_study(code, cache, tmp_path, "one")
    second = _counted_study(code, cache, tmp_path, "two")  # a new folder: the same study
    assert first.get("/jax/compilation_cache/cache_misses", 0) > 0
    assert second.get("/jax/compilation_cache/cache_misses", 0) == 0
    assert any((cache / "programs").glob("*.bin"))  # the store was on: Study.run asked for it
    traced = "/jax/core/compile/jaxpr_trace_duration:over_leaves"
    assert first.get(traced, 0) >= 2 and traced not in second  # the study's programs: loaded


@pytest.mark.parametrize("command", ["run", "experiment", "reproduce"])
def test_study_entry_points__ask_for_the_cache_before_anything_compiles(monkeypatch, command):
    import oslr
    import oslr.cli as cli
    from oslr import compile_cache, study
    from oslr.study import driver

    asked = []
    monkeypatch.setattr(compile_cache, "use_compile_cache", lambda: asked.append("cache"))

    def stop(*a, **k):
        asked.append("plan")
        raise study.UsageError("stopped here")

    monkeypatch.setattr(driver, "prepare", stop)
    with pytest.raises(study.UsageError, match="stopped here"):
        oslr.Study(problem="sparse-linear", learners=["ogd-full"], out="nowhere").run()
    assert asked == ["cache", "plan"]
    asked.clear()
    func = {"run": "cmd_run", "experiment": "cmd_experiment", "reproduce": "cmd_reproduce"}
    module = cli.run if command == "run" else cli.commands
    monkeypatch.setattr(module, func[command], lambda args: asked.append(command) or 0)
    argv = {"run": ["run"], "experiment": ["experiment", "wll-table1"],
            "reproduce": ["reproduce", "--quick"]}[command]
    assert cli.main(argv) == 0 and asked == ["cache", command]
