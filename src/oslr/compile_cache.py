"""Compiled programs kept across processes, so a study run again, a notebook after a kernel
restart, or an experiment whose studies share programs loads them instead of compiling. Both
are on only where asked (`use_compile_cache`: the `oslr` commands and `oslr.Study.run` call it,
a user of the building blocks calls `oslr.use_compile_cache()`); nothing else changes JAX's
settings for the process:

* JAX's persistent compilation cache (`use_persistent_cache`), keyed by JAX from each program
  once it is traced and lowered;
* oslr's store of a study's init and chunks traced and lowered (`load_or_compile`: `jax.export`'s
  StableHLO, compiled from there through JAX's cache), keyed before any tracing by what makes
  the program: oslr's code (`code_digest`), the learner and the problem with every value their
  functions close over (`value_digest`), the arguments' shapes, dtypes and shardings, the
  static arguments, JAX's settings and versions, the devices and the compile options. A hit
  skips the tracing and lowering, most of a warm process's first study. A learner or problem
  with code outside oslr, JAX, optax and NumPy (one registered by a user) has no digest and is
  not stored, nor is a program on several devices: JAX's cache still serves those.

An entry of the store is data, not a pickle (`_entry`): a line of JSON with the whole text of
its key, the tree of its result and the SHA-256 of the rest, then the program's bytes. An
entry is used only when its key's text is the call's, its bytes have that digest and it
deserializes, matches the call's arguments and compiles; any other entry (moved, copied from
another store, cut, flipped) is made again and replaced, with one warning that names the file.
The digest guards against damage and misplacement, not against someone who writes entries on
purpose.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import json
import os
import re
import types
import warnings
from pathlib import Path
from typing import Any, Callable


def use_compile_cache() -> None:
    """Keep compiled programs across processes from now on: JAX's persistent compilation cache
    (`use_persistent_cache`) and oslr's store of study programs (`store_dir`). The `oslr`
    commands that compile and `oslr.Study.run` call it; `oslr.make`, `oslr.simulate` and the
    other building blocks do not, so call it yourself to have them cached:

        import oslr
        oslr.use_compile_cache()
    """
    use_persistent_cache()
    _STORE_ON[:] = [True]


#: whether `use_compile_cache` was called in this process (oslr's store is used only then)
_STORE_ON: list[bool] = []


def use_persistent_cache() -> None:
    """Keep compiled programs in $OSLR_COMPILE_CACHE (default ~/.cache/oslr/jax; "off": none),
    unless a cache is set already (the user's own is kept). An unwritable folder means no
    cache, as before it was set. Changes JAX's settings for the process (its cache folder, and
    every program cached however quickly it compiled): called by `use_compile_cache` only."""
    where = _where()
    import jax

    if where is None or jax.config.jax_compilation_cache_dir:  # type: ignore[attr-defined]
        return
    try:
        where.mkdir(parents=True, exist_ok=True)
    except OSError:  # an unwritable home: compile every time, as without the cache
        return
    jax.config.update("jax_compilation_cache_dir", str(where))
    # every program, not only those that took JAX's default second to compile: a study's many
    # small programs (init, chunks, metrics) add up to most of a new process's compiling
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)


def _where() -> Path | None:
    """$OSLR_COMPILE_CACHE (default ~/.cache/oslr/jax); None when it is "off"."""
    where = os.environ.get("OSLR_COMPILE_CACHE", str(Path.home() / ".cache" / "oslr" / "jax"))
    return None if where == "off" else Path(where)


def store_dir() -> Path | None:
    """The folder of oslr's stored programs: `programs` in $OSLR_COMPILE_CACHE. None (nothing
    stored): before `use_compile_cache` in this process, OSLR_COMPILE_CACHE=off,
    OSLR_PROGRAM_STORE=off (JAX's cache alone: e.g. where oslr's functions are patched in
    memory, which its key cannot see), or several jax.distributed processes (they would write
    one folder)."""
    import jax

    where = _where()
    if not _STORE_ON or where is None or os.environ.get("OSLR_PROGRAM_STORE") == "off":
        return None
    return None if jax.process_count() > 1 else where / "programs"


@functools.cache
def code_digest() -> str:
    """SHA-256 of every file of the installed oslr package (its code and shipped data), read
    once per process: any change to oslr is another program."""
    root = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for f in sorted(root.rglob("*")):
        if f.is_file() and "__pycache__" not in f.parts:
            h.update(str(f.relative_to(root)).encode())
            h.update(f.read_bytes())
    return h.hexdigest()


#: modules whose code a stored program may call: oslr's own (`code_digest`) and libraries whose
#: versions are part of the key
TRUSTED_MODULES = ("oslr", "jax", "jaxlib", "optax", "numpy")


def value_digest(value: Any) -> str | None:
    """A digest of `value` as a traced program sees it: functions by module, name, defaults and
    every value they close over; arrays by dtype, shape and bytes; containers, dataclasses and
    named tuples by their parts. None where some part cannot be told apart that way (a function
    outside TRUSTED_MODULES, an object of another kind)."""
    h = hashlib.sha256()
    try:
        _feed(h, value, {})
    except _Opaque:
        return None
    return h.hexdigest()


class _Opaque(Exception):
    """A part `value_digest` cannot vouch for."""


def _feed(h, value: Any, seen: dict) -> None:
    """Feed `value` to the hash `h`; `seen` holds (by id) what was fed before, and keeps it
    alive: a part fed once and freed would leave its id to another, which would then be
    taken for it."""
    if isinstance(value, (str, bytes, bool, int, float, complex, type(None))):
        h.update(f"{type(value).__name__}:{value!r};".encode())
        return
    if id(value) in seen:  # a function that refers to itself
        h.update(b"<seen>;")
        return
    seen[id(value)] = value
    import numpy as np

    if hasattr(value, "__array__") and hasattr(value, "dtype") and hasattr(value, "shape"):
        a = np.ascontiguousarray(np.asarray(value))
        h.update(f"array:{a.dtype}:{a.shape};".encode())
        h.update(a.tobytes())
    elif isinstance(value, (np.dtype, type)):
        if isinstance(value, type) and not (_trusted(value.__module__)
                                            or value.__module__ == "builtins"):
            raise _Opaque(value)  # a builtin type (an option's declared int) is its name
        h.update(f"type:{value!r};".encode())
    elif isinstance(value, functools.partial):
        h.update(b"partial;")
        _feed(h, (value.func, value.args, value.keywords), seen)
    elif isinstance(value, types.MethodType):
        _feed(h, (value.__func__, value.__self__), seen)
    elif isinstance(value, types.FunctionType):
        _feed_function(h, value, seen)
    elif isinstance(value, (types.BuiltinFunctionType, np.ufunc)):
        if not _trusted(getattr(value, "__module__", None) or "numpy"):
            raise _Opaque(value)
        h.update(f"builtin:{value!r};".encode())
    elif isinstance(value, (tuple, list)):
        h.update(f"{type(value).__qualname__}:{len(value)};".encode())
        for v in value:
            _feed(h, v, seen)
        if hasattr(value, "_fields") and not _trusted(type(value).__module__):
            raise _Opaque(value)
    elif isinstance(value, dict):
        h.update(f"dict:{len(value)};".encode())
        for k, v in sorted(value.items(), key=lambda kv: repr(kv[0])):
            _feed(h, k, seen)
            _feed(h, v, seen)
    elif hasattr(value, "__dataclass_fields__") and _trusted(type(value).__module__):
        h.update(f"dataclass:{type(value).__module__}.{type(value).__qualname__};".encode())
        for name in value.__dataclass_fields__:
            _feed(h, (name, getattr(value, name)), seen)
    else:
        raise _Opaque(value)


def _trusted(module: str | None) -> bool:
    return module is not None and module.split(".")[0] in TRUSTED_MODULES


def _feed_function(h, fn: types.FunctionType, seen: dict) -> None:
    """A function by where it is defined (its code is in `code_digest` or a library's version)
    and every value it closes over or takes by default."""
    if not _trusted(fn.__module__):
        raise _Opaque(fn)
    h.update(f"function:{fn.__module__}.{fn.__qualname__}:{fn.__code__.co_firstlineno};".encode())
    cells = [c.cell_contents for c in fn.__closure__ or () if _filled(c)]
    _feed(h, (cells, fn.__defaults__, fn.__kwdefaults__), seen)


def _filled(cell) -> bool:
    try:
        _ = cell.cell_contents
    except ValueError:  # an empty cell (a name bound after the function was made)
        return False
    return True


#: the variables that say where programs are kept and whether: no program changes with them, so
#: a store copied or synced to another folder (another home) still serves
NOT_IN_KEY = ("OSLR_COMPILE_CACHE", "OSLR_PROGRAM_STORE")

#: JAX's settings of its persistent cache (where, what it keeps, how it reports): no program
#: changes with them (`use_persistent_cache` sets the first two to the store's own folder)
JAX_NOT_IN_KEY = ("jax_compilation_cache_dir", "jax_persistent_cache_min_compile_time_secs",
                  "jax_persistent_cache_min_entry_size_bytes", "jax_compilation_cache_max_size",
                  "jax_enable_compilation_cache", "jax_explain_cache_misses",
                  "jax_raise_persistent_cache_errors")


def _key_text(parts: tuple, devices: list) -> str:
    """The whole of the store's key of a program, as text: `parts` (the caller's: what the
    program computes and its arguments) and everything else that changes the compiled program.
    An entry records it (`_entry`); its file is named by its SHA-256 (`_key`)."""
    import jax
    import jaxlib
    import numpy as np
    from jax._src import config as jax_config

    from oslr import cpus

    try:
        import optax
        optax_version = optax.__version__
    except ImportError:
        optax_version = None
    setting = (code_digest(), jax.__version__, jaxlib.__version__, np.__version__,
               optax_version, sorted((k, v) for k, v in os.environ.items()
                                     if k.startswith(("OSLR_", "XLA_")) and k not in NOT_IN_KEY),
               sorted((k, repr(v)) for k, v in jax.config.values.items()
                      if k not in JAX_NOT_IN_KEY),
               repr(jax_config.trace_context()),
               [(d.platform, d.device_kind, d.id, d.client.platform_version) for d in devices],
               cpus.count(), parts)  # programs for one core differ (topk.in_top_k)
    return re.sub(r" at 0x[0-9a-fA-F]+", "", repr(setting))  # no addresses: the same each run


def _key(parts: tuple, devices: list) -> str:
    """The name of a program's entry in the store: the SHA-256 of its key (`_key_text`)."""
    return _name(_key_text(parts, devices))


def _name(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _storable(devices: list) -> bool:
    """Programs on one device: a program for several is compiled as before (JAX's cache)."""
    return len(devices) == 1


def load_or_compile(parts: tuple | None, fn: Any, args: tuple, statics: tuple,
                    devices: list, options: dict):
    """`fn` (a jitted function) compiled for `args` (arrays or shapes) and its `statics`, the
    trailing static arguments. Where the store may keep it (`parts` names what it computes; None:
    no digest, never stored; one device, `_storable`; `store_dir`), its traced and lowered form
    (`jax.export`'s StableHLO, over the arguments' leaves) is loaded from the store or made and
    stored, and compiled from there with the XLA `options` (JAX's persistent cache serves the
    compile): a warm process neither traces nor lowers `fn`. An entry that is not this
    program's, or fails to load, is made again and replaced (`_load`)."""
    where = store_dir() if parts is not None and _storable(devices) else None
    if where is None:
        return fn.lower(*args, *statics).compile()
    text = _key_text((parts, sorted(options.items())), devices)
    key = _name(text)
    if key not in _LOADED:
        _LOADED[key] = _load_or_export(where / f"{key}.bin", text, fn, args, statics, options)
    return _LOADED[key]


#: the programs `load_or_compile` loaded or made in this process, by key (`clear_loaded`)
_LOADED: dict[str, Any] = {}


def clear_loaded() -> None:
    """Drop the programs `load_or_compile` keeps in this process."""
    _LOADED.clear()


class StoreWarning(UserWarning):
    """An entry of oslr's program store was not the program asked for, or damaged: made again."""


def _load_or_export(file: Path, text: str, fn: Callable, args: tuple, statics: tuple,
                    options: dict):
    """The program of the store's `file` when it holds the program keyed by `text` (`_load`),
    else `fn` exported, stored there and compiled."""
    if file.exists():
        try:
            return _load(file, text, args, options)
        except Exception as e:  # noqa: BLE001 - any entry that does not serve: made again
            warnings.warn(f"oslr's stored program {file} {_why(e)}: made again and replaced.",
                          StoreWarning, stacklevel=4)
    exported, out_tree = _export(fn, args, statics)
    try:
        entry = _entry(text, exported.serialize(), out_tree)
    except _Opaque:  # a result tree that cannot be written as data: not stored
        entry = None
    if entry is not None:
        try:
            file.parent.mkdir(parents=True, exist_ok=True)
            from oslr import atomic

            atomic.write_atomic(file, lambda f: f.write(entry))
            _trim(file.parent, STORE_BYTES)
        except OSError:
            pass  # an unwritable folder: not stored
    return _compile(exported, out_tree, args, options)


class _NotThisProgram(Exception):
    """An entry that is whole but holds another program, or another format."""


def _why(e: Exception) -> str:
    if isinstance(e, _NotThisProgram):
        return str(e)
    return f"could not be loaded ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})"


#: the first line of every entry of the store (`_entry`); another is not read
ENTRY_FORMAT = "oslr program store entry 1"


def _entry(text: str, program: bytes, out_tree) -> bytes:
    """An entry of the store: one line of JSON (the format, the whole key `text`, the result's
    tree as data, `_tree_data`, and the SHA-256 of all of the entry but itself, `_digest`),
    then `program`'s bytes."""
    head = {"format": ENTRY_FORMAT, "key": text, "out_tree": _tree_data(out_tree)}
    head["sha256"] = _digest(head, program)
    return json.dumps(head).encode() + b"\n" + bytes(program)


def _digest(head: dict, program: bytes) -> str:
    """The SHA-256 of an entry's header fields other than "sha256" and of its program."""
    fields = {k: v for k, v in head.items() if k != "sha256"}
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode() + b"\n" + program
                          ).hexdigest()


def _load(file: Path, text: str, args: tuple, options: dict):
    """The program of the entry `file`, compiled; raises where the entry is not the program
    keyed by `text` (another key, format or digest, a tree or arguments that differ) or fails
    to deserialize or compile."""
    from jax import export

    head_line, _, program = file.read_bytes().partition(b"\n")
    head = json.loads(head_line)
    if not isinstance(head, dict) or head.get("format") != ENTRY_FORMAT:
        raise _NotThisProgram("is not an entry of this oslr's store (another format)")
    if _digest(head, program) != head.get("sha256"):
        raise _NotThisProgram("is damaged (its SHA-256 differs)")
    if head["key"] != text:
        raise _NotThisProgram("holds another program (its key differs: moved, copied or "
                              "renamed)")
    exported = export.deserialize(bytearray(program))
    out_tree = _tree_from_data(head["out_tree"])
    _check_signature(exported, out_tree, args)
    compiled = _compile(exported, out_tree, args, options)
    try:
        os.utime(file)  # recently used: the last to go (`_trim`)
    except OSError:  # trimmed by another process meanwhile: the program loaded is good
        pass
    return compiled


def _check_signature(exported, out_tree, args: tuple) -> None:
    """Raise unless `exported` takes the leaves of `args` (shapes and dtypes) and returns as
    many leaves as `out_tree` holds."""
    import jax

    want = [(tuple(a.shape), str(a.dtype)) for a in jax.tree.leaves(args)]
    got = [(tuple(a.shape), str(a.dtype)) for a in exported.in_avals]
    if got != want:
        raise _NotThisProgram("takes other arguments than the call's")
    if len(exported.out_avals) != out_tree.num_leaves:
        raise _NotThisProgram("returns another tree than its entry says")


def _compile(exported, out_tree, args: tuple, options: dict):
    import jax

    compiled = jax.jit(exported.call, compiler_options=options).lower(
        *jax.tree.leaves(args)).compile()
    return _OverLeaves(compiled, out_tree)


def _tree_data(tree) -> Any:
    """A PyTreeDef as JSON data: None for a leaf, else [type, aux data, children], the type by
    module and name (`_tree_from_data` takes it back; types outside TRUSTED_MODULES and
    Python's builtins, or aux data other than plain values, raise `_Opaque`)."""
    node = tree.node_data()
    if node is None:
        return None
    kind, aux = node
    if not (kind.__module__ == "builtins" or _trusted(kind.__module__)):
        raise _Opaque(kind)
    return [f"{kind.__module__}:{kind.__qualname__}", _plain(aux),
            [_tree_data(c) for c in tree.children()]]


def _plain(value: Any) -> Any:
    """Aux data as JSON (a tuple as {"tuple": [...]}, to be told from a list)."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, tuple):
        return {"tuple": [_plain(v) for v in value]}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    raise _Opaque(value)


def _unplain(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(_unplain(v) for v in value["tuple"])
    if isinstance(value, list):
        return [_unplain(v) for v in value]
    return value


def _tree_from_data(data: Any):
    """The PyTreeDef `_tree_data` wrote, its types looked up in their modules (trusted ones
    and Python's builtins only: nothing else is imported)."""
    import jax

    if data is None:
        return jax.tree.structure(0)
    name, aux, children = data
    module, _, qualname = name.partition(":")
    if module == "builtins":
        kind = {"NoneType": type(None), "tuple": tuple, "list": list, "dict": dict}[qualname]
    elif _trusted(module):
        kind = importlib.import_module(module)
        for part in qualname.split("."):
            kind = getattr(kind, part)
    else:
        raise _NotThisProgram(f"names a type outside oslr's trusted modules ({name})")
    return jax.tree_util.PyTreeDef.from_node_data_and_children(
        jax.tree_util.default_registry, (kind, _unplain(aux)),
        [_tree_from_data(c) for c in children])


def _export(fn: Callable, args: tuple, statics: tuple):
    """(`fn` at `args` and `statics`, traced and lowered over the leaves of `args` (the
    serialized form keeps no pytree of oslr's types), the tree of its result)."""
    import jax
    from jax import export

    in_tree, box = jax.tree.structure(args), []
    inner = getattr(fn, "__wrapped__", fn)  # the jitted function's own: options go outside

    def over_leaves(*leaves):
        out = inner(*jax.tree.unflatten(in_tree, leaves), *statics)
        box.append(jax.tree.structure(out))
        return jax.tree.leaves(out)

    exported = export.export(jax.jit(over_leaves))(*jax.tree.leaves(args))
    return exported, box[0]


class _OverLeaves:
    """A program compiled over its arguments' leaves, called with trees and returning one."""

    def __init__(self, compiled, out_tree):
        self.compiled, self.out_tree = compiled, out_tree

    def __call__(self, *args):
        import jax

        return jax.tree.unflatten(self.out_tree, self.compiled(*jax.tree.leaves(args)))

    @property
    def out_info(self):
        import jax

        return jax.tree.unflatten(self.out_tree, self.compiled.out_info)

    def memory_analysis(self):
        return self.compiled.memory_analysis()


#: the most bytes of programs the store keeps; the least recently used go first
STORE_BYTES = 1 << 30


def _trim(where: Path, limit: int) -> None:
    """Remove the least recently used programs in `where` until they take at most `limit`."""
    files = sorted(where.glob("*.bin"), key=lambda f: f.stat().st_mtime, reverse=True)
    total = 0
    for f in files:
        total += f.stat().st_size
        if total > limit:
            f.unlink(missing_ok=True)


__all__ = ["ENTRY_FORMAT", "JAX_NOT_IN_KEY", "NOT_IN_KEY", "STORE_BYTES", "TRUSTED_MODULES",
           "StoreWarning", "clear_loaded", "code_digest", "load_or_compile", "store_dir",
           "use_compile_cache", "use_persistent_cache", "value_digest"]
