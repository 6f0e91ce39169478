"""Specs: what a learner, problem or experiment module declares about itself, and the one generic
params builder.

A learner module states, next to its factory (gymnax `default_params`, jumanji entry points):

* its params dataclass, whose fields are declared once with `param(dtype, default, ...)`: the
  dtype, the default (a value or a function of the build context `Ctx`), whether a user may sweep
  it, and its valid range (checked before tracing by `check_params`);
* a `LearnerSpec`: the factory `factory(d, **options) -> Learner`, its declared static `Option`s
  (they fix shapes or control flow), per-learner default overrides, pinned fields, the second
  params point for the contract suite and an optional `prepare` hook.

`build_params(cls, ctx, **overrides)` builds any params dataclass from its declaration;
`LearnerSpec.make(d, horizon, **kw)` splits keyword arguments into static options and params,
refuses unknown names (saying which names exist) and returns `(learner, params)`.

Example (a third-party learner, see README "Your own learner"):

    @register_params
    class MyParams:
        eta: Array = param(jnp.float32, lambda c: 1.0 / c.d, lo=0.0, lo_open=True,
                           doc="step size")

    SPEC = LearnerSpec(name="my-ogd", family=PREDICTION, description="...",
                       factory=my_ogd, params=MyParams)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import jax
import jax.numpy as jnp
import numpy as np

from oslr.checks import check_integral, check_positive_int, check_range
from oslr.types import FAMILIES, KINDS, Family, Kind, Learner, float_dtype, on_device

#: The horizon used by horizon-dependent defaults when `make` is given none.
DEFAULT_HORIZON = 10_000

_META = "oslr"


@dataclass(frozen=True)
class Param:
    """Declaration of one params field.

    Attributes:
      dtype: the array dtype of the leaf (float32, int32, bool); float32 means the mode's float
        (`oslr.types.float_dtype`: float64 under jax_enable_x64).
      default: a value, or `default(ctx) -> value` (e.g. `lambda c: max(1, c.d // 4)`).
      sweepable: whether `oslr run --grid/--set` and `oslr list` offer it (arrays such as a cost
        vector are settable from Python but not swept).
      lo, hi: inclusive bounds (exclusive when `lo_open` / `hi_open`); a number, the name of a
        static option or of "d" (resolved from the context), or None for unbounded.
      doc: one line for `oslr list` and error messages.
      shape: None for a scalar, or "d" for a (d,) vector.
    """

    dtype: Any
    default: Any
    sweepable: bool = True
    lo: Any = None
    hi: Any = None
    lo_open: bool = False
    doc: str = ""
    shape: str | None = None
    hi_open: bool = False


def param(dtype, default, *, sweepable: bool = True, lo=None, hi=None, lo_open: bool = False,
          hi_open: bool = False, doc: str = "", shape: str | None = None):
    """A dataclass field declaring one params leaf (see `Param`)."""
    return field(metadata={_META: Param(dtype, default, sweepable, lo, hi, lo_open, doc, shape,
                                        hi_open)})


def register_params(cls):
    """Make `cls` a frozen, keyword-only dataclass registered as a JAX pytree."""
    return jax.tree_util.register_dataclass(dataclass(frozen=True, kw_only=True)(cls))


def declared(cls) -> dict[str, Param]:
    """Field name -> `Param` of a params dataclass (in field order)."""
    out = {}
    for f in dataclasses.fields(cls):
        if _META not in f.metadata:
            raise TypeError(f"{cls.__name__}.{f.name} is not declared with oslr.spec.param().")
        out[f.name] = f.metadata[_META]
    return out


@dataclass(frozen=True)
class Ctx:
    """What defaults may depend on: `d`, the study `horizon`, the static `options` and (through
    `ctx[name]`) the value of another params field, resolved on demand."""

    d: int
    horizon: int = DEFAULT_HORIZON
    options: Mapping[str, Any] = field(default_factory=dict)
    _get: Callable[[str], Any] | None = None

    def __getitem__(self, name: str) -> Any:
        if self._get is None:
            raise KeyError(name)
        return self._get(name)

    def bound(self, value):
        """Resolve a bound: a number, "d", a static option name, or a function of the context."""
        if isinstance(value, str):
            return self.d if value == "d" else self.options[value]
        return value(self) if callable(value) else value


def _resolve(value, ctx: Ctx):
    return value(ctx) if callable(value) else value


def build_params(cls, ctx: Ctx | int, defaults: Mapping[str, Any] | None = None, **overrides):
    """Build the params dataclass `cls` from its declaration.

    Args:
      cls: a dataclass whose fields are declared with `param`.
      ctx: the build context (or just d).
      defaults: default overrides (value or `ctx -> value`) that take precedence over the
        declaration (a learner that shares a params class with another, e.g. the LinUCB variants).
      **overrides: field values; unknown names raise ValueError listing the fields.

    Returns:
      An instance of `cls` whose leaves are arrays of the declared dtypes.
    """
    ctx = Ctx(d=ctx) if isinstance(ctx, int) else ctx
    decl = declared(cls)
    unknown = set(overrides) - set(decl)
    if unknown:
        raise ValueError(f"unknown parameter(s) {sorted(unknown)}; parameters: "
                         f"{', '.join(decl)}.")
    defaults = dict(defaults or {})
    values: dict[str, Any] = {}
    busy: set[str] = set()

    def get(name: str):
        if name not in values:
            if name in busy:
                raise ValueError(f"circular default for parameter {name!r} of {cls.__name__}.")
            busy.add(name)
            if name in overrides:
                raw = overrides[name]
            else:
                raw = _resolve(defaults.get(name, decl[name].default), here)
            values[name] = _as_leaf(cls, name, decl[name], raw, here)
        return values[name]

    here = dataclasses.replace(ctx, _get=lambda n: np.asarray(get(n)))
    return cls(**{name: get(name) for name in decl})


def _as_leaf(cls, name: str, p: Param, raw, ctx: Ctx):
    if isinstance(raw, (str, bytes)):
        raise ValueError(f"parameter {name}={raw!r} of {cls.__name__} must be a number.")
    try:
        a = np.asarray(raw)
    except (TypeError, ValueError) as err:
        raise ValueError(f"parameter {name}={raw!r} must be numeric ({err}).") from None
    if a.dtype.kind not in "biuf":
        raise ValueError(f"parameter {name}={raw!r} must be numeric, got dtype {a.dtype}.")
    check_integral(name, raw, p.dtype, f"{cls.__name__}: ")
    if p.shape == "d" and a.shape != (ctx.d,):
        raise ValueError(f"parameter {name} must have shape ({ctx.d},), got {a.shape}.")
    # a float leaf follows the mode: float32, or float64 under jax_enable_x64
    return on_device(a, float_dtype() if p.dtype == jnp.float32 else p.dtype)


def check_params(cls, params, learner: str, ctx: Ctx | int, skip: tuple[str, ...] = ()) -> None:
    """Check every declared range on concrete (possibly batched) params; ValueError names the
    learner, the field, the bad values and the range."""
    ctx = Ctx(d=ctx) if isinstance(ctx, int) else ctx
    for name, p in declared(cls).items():
        if name in skip or (p.lo is None and p.hi is None):
            continue
        lo = None if p.lo is None else ctx.bound(p.lo)
        hi = None if p.hi is None else ctx.bound(p.hi)
        check_range(learner, name, getattr(params, name), lo=lo, hi=hi, lo_open=p.lo_open,
                    hi_open=p.hi_open, hint=p.doc and f"({name}: {p.doc})")


def range_text(p: Param, ctx: Ctx | None = None) -> str:
    """'[1, max_k]' / '(0, inf)' style text of a declared range."""
    def show(v, inf):
        if v is None:
            return inf
        if ctx is not None:
            try:
                return f"{ctx.bound(v):g}"
            except (KeyError, TypeError):
                pass
        return v if isinstance(v, str) else f"{v:g}" if not callable(v) else "?"

    left = "(" if p.lo_open or p.lo is None else "["
    right = ")" if p.hi is None or p.hi_open else "]"
    return f"{left}{show(p.lo, '-inf')}, {show(p.hi, 'inf')}{right}"


#: what the harness fills a learner's static option with (`Option.fill`)
FILLS = {
    "max_k": "the largest k the study sets or sweeps (a static bound on the traced k)",
    "k": "the study's k (params k, else the problem's k): a static sparsity",
    "max_delay": "the problem's largest feedback delay",
    "n_arms": "the problem's arm count",
}

#: the types an option's value may be declared to have
OPTION_TYPES = (int, float, bool, str)


@dataclass(frozen=True)
class Option:
    """A static option of a learner or problem factory (fixes shapes or control flow, or a
    problem's stream; not swept).

    Attributes:
      name: keyword of the factory.
      default: a value, or `default(ctx) -> value` (e.g. a history capacity from the horizon).
      doc: one line for `oslr list`.
      choices: allowed values (None: any).
      type: int, float, bool or str: the type a value must have (a text value from the command
        line is read as it; an int is taken where a float is declared); None: any.
      lo, hi: inclusive bounds of a number: a number, or the name of another option (or "d")
        resolved when the options are known; None: unbounded.
      fill: what the harness sets it to when a study builds the learner (`FILLS`): "max_k",
        "k", "max_delay" or "n_arms"; None: the option's default or the user's value.
    """

    name: str
    default: Any = None
    doc: str = ""
    choices: tuple | None = None
    type: type | None = None
    lo: Any = None
    hi: Any = None
    fill: str | None = None

    def __post_init__(self) -> None:
        if self.fill is not None and self.fill not in FILLS:
            raise ValueError(f"Option {self.name!r}: fill={self.fill!r} is not one of "
                             f"{list(FILLS)}.")
        if self.type is not None and self.type not in OPTION_TYPES:
            raise ValueError(f"Option {self.name!r}: type={self.type!r} is not one of int, "
                             "float, bool, str.")

    def range_text(self, values: Mapping[str, Any] | None = None) -> str:
        """'[1, d]' style text of the declared range ('' when none), bounds named by another
        option shown with their value where `values` holds it."""
        if self.lo is None and self.hi is None:
            return ""

        def show(bound, inf):
            if bound is None:
                return inf
            if isinstance(bound, str):
                return f"{bound}={values[bound]}" if values and bound in values else bound
            return f"{bound:g}"

        return (f"{'(' if self.lo is None else '['}{show(self.lo, '-inf')}, "
                f"{show(self.hi, 'inf')}{')' if self.hi is None else ']'}")

    def check(self, value: Any, values: Mapping[str, Any], owner: str) -> Any:
        """`value` as declared (an int taken as a float where a float is declared); ValueError
        naming `owner`, the option, the value and what it must be. `values`: every option's
        value, for bounds named by another option."""
        if self.type is not None:
            value = self._as_type(value, owner)
        if self.choices is not None and value not in self.choices:
            raise ValueError(f"{owner}: option {self.name}={value!r} is not one of "
                             f"{list(self.choices)}.")
        lo = values.get(self.lo) if isinstance(self.lo, str) else self.lo
        hi = values.get(self.hi) if isinstance(self.hi, str) else self.hi
        if isinstance(value, (int, float)) and not isinstance(value, bool) and (
                (lo is not None and not value >= lo) or (hi is not None and not value <= hi)):
            raise ValueError(f"{owner}: option {self.name}={value!r} is out of range "
                             f"{self.range_text(values)} ({self.doc or self.name}).")
        return value

    def _as_type(self, value: Any, owner: str) -> Any:
        """`value` as the declared type: a NumPy number as Python's, an integer as a float
        where a float is declared; ValueError for anything else (a bool is no number)."""
        import numbers

        kind = self.type
        assert kind is not None  # called where a type is declared
        number = not isinstance(value, (bool, np.bool_))
        if kind is int and number and isinstance(value, numbers.Integral):
            return int(value)
        if kind is float and number and isinstance(value, numbers.Real):
            return float(value)
        if kind is bool and isinstance(value, (bool, np.bool_)):
            return bool(value)
        if kind is str and isinstance(value, str):
            return value
        raise ValueError(f"{owner}: option {self.name}={value!r} must be of type "
                         f"{kind.__name__} ({self.doc or self.name}).")

    def parse(self, text: str) -> Any:
        """A command-line text as the declared type (ValueError saying which type)."""
        kind = self.type if self.type is not None or callable(self.default) else type(self.default)
        if kind is bool:
            if text.lower() not in ("true", "false", "1", "0"):
                raise ValueError(f"option {self.name}={text!r} must be true or false.")
            return text.lower() in ("true", "1")
        if kind in (int, float):
            try:
                number = float(text)
            except ValueError:
                raise ValueError(f"option {self.name}={text!r} must be a number.") from None
            if kind is int:
                if not number.is_integer():
                    raise ValueError(f"option {self.name}={text!r} must be a whole number.")
                return int(number)
            return number
        return text

    def describe(self, value: Any = None) -> dict:
        """A JSON-ready row for `oslr list` (`value`: the default to show)."""
        shown = self.default if value is None else value
        return {"name": self.name, "default": "derived" if callable(shown) else shown,
                "doc": self.doc, **({"choices": list(self.choices)} if self.choices else {}),
                **({"type": self.type.__name__} if self.type else {}),
                **({"range": self.range_text()} if self.range_text() else {}),
                **({"fill": self.fill} if self.fill else {})}


def check_factory(owner: str, factory: Callable[..., Any], names: tuple[str, ...],
                  leading: tuple[str, ...] = (), strict: bool = True) -> None:
    """TypeError unless `factory` takes `leading` positional arguments and a keyword argument
    for each declared option (a `**kwargs` factory takes any), and declares every keyword it
    takes (a keyword no declaration names could never be set from a study)."""
    import inspect

    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):
        return  # a builtin or C callable: nothing to read
    params = sig.parameters
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return
    missing = [n for n in (*leading, *names) if n not in params]
    if missing:
        raise TypeError(f"{owner}: its factory does not take the declared option(s) "
                        f"{missing}; it takes {list(params)}.")
    undeclared = [n for n, p in params.items() if strict and n not in names
                  and n not in leading and p.kind is not p.VAR_POSITIONAL]
    if undeclared:
        raise TypeError(f"{owner}: its factory takes {undeclared}, which no Option declares; "
                        "declare each (options=(Option(...), ...)) so a study can set it.")


@dataclass(frozen=True)
class LearnerSpec:
    """Everything the registry, the CLI and the contract suite need to know about a learner.

    Attributes:
      name: registry name.
      family: protocol family (`PREDICTION`, `LINEAR`, `BANDIT`).
      description: one line for `oslr list`.
      factory: `factory(d, **options) -> Learner`.
      params: the params dataclass (fields declared with `param`).
      options: the factory's static options.
      defaults: per-learner default overrides of params fields (value or `ctx -> value`).
      fixed: params fields this learner pins (not settable, not swept), value or `ctx -> value`.
      alt: overrides giving the second params point of the contract suite.
      reference: the paper / algorithm it implements.
      prepare: optional `prepare(params, problem, problem_params) -> params`, applied to each grid
        point before a study (e.g. the offline oracle subset for its k).
    """

    name: str
    family: Family
    description: str
    factory: Callable[..., Learner]
    params: type
    options: tuple[Option, ...] = ()
    defaults: Mapping[str, Any] = field(default_factory=dict)
    fixed: Mapping[str, Any] = field(default_factory=dict)
    alt: Mapping[str, Any] = field(default_factory=dict)
    reference: str = ""
    prepare: Callable[..., Any] | None = None

    def __post_init__(self) -> None:
        """Refuse, when declared, a family oslr does not know and a factory that does not
        take `d` and the declared options."""
        if self.family not in FAMILIES:
            raise ValueError(f"learner {self.name!r}: family {self.family!r} is not one of "
                             f"{list(FAMILIES)}.")
        check_factory(f"learner {self.name!r}", self.factory, self.option_names, ("d",),
                      strict=False)

    @property
    def option_names(self) -> tuple[str, ...]:
        return tuple(o.name for o in self.options)

    def filled(self, fill: str) -> str | None:
        """The static option the harness sets to `fill` (`Option.fill`), or None."""
        return next((o.name for o in self.options if o.fill == fill), None)

    @property
    def param_names(self) -> tuple[str, ...]:
        """Params fields a user may set (declared, not pinned)."""
        return tuple(n for n in declared(self.params) if n not in self.fixed)

    @property
    def sweepable(self) -> tuple[str, ...]:
        """Params fields a study may sweep or fix from the command line."""
        return tuple(n for n, p in declared(self.params).items()
                     if p.sweepable and n not in self.fixed)

    def context(self, d: int, horizon: int | None = None, **options) -> Ctx:
        """The build context with every static option resolved (given value or default)."""
        ctx = Ctx(d=check_positive_int("d", d),
                  horizon=DEFAULT_HORIZON if horizon is None else int(horizon))
        resolved: dict[str, Any] = {}
        for opt in self.options:
            value = options[opt.name] if opt.name in options else _resolve(
                opt.default, dataclasses.replace(ctx, options=resolved))
            if opt.choices is not None and value not in opt.choices:
                raise ValueError(f"{self.name}: option {opt.name}={value!r} is not one of "
                                 f"{list(opt.choices)}.")
            resolved[opt.name] = value
        return dataclasses.replace(ctx, options=resolved)

    def default_params(self, d: int, horizon: int | None = None, **overrides):
        """The learner's default params for dimension d (overrides by field name)."""
        options = {k: overrides.pop(k) for k in list(overrides) if k in self.option_names}
        return self._params(self.context(d, horizon, **options), overrides)

    def alt_params(self, d: int, horizon: int | None = None):
        """The second params point of the contract suite (same shapes as the default)."""
        return self._params(self.context(d, horizon), {}, alt=True)

    def _params(self, ctx: Ctx, overrides: dict, alt: bool = False):
        pinned = set(overrides) & set(self.fixed)
        if pinned:
            raise ValueError(f"{self.name}: parameter(s) {sorted(pinned)} are fixed by this "
                             "learner and cannot be set.")
        unknown = set(overrides) - set(declared(self.params))
        if unknown:
            raise ValueError(
                f"{self.name}: unknown parameter(s) {sorted(unknown)}; parameters: "
                f"{', '.join(self.param_names) or 'none'}; static options: "
                f"{', '.join(self.option_names) or 'none'}."
            )
        layers = {**self.defaults, **(self.alt if alt else {}), **self.fixed}
        return build_params(self.params, ctx, layers, **overrides)

    def make(self, d: int, horizon: int | None = None, **kwargs) -> tuple[Learner, Any]:
        """Build `(learner, default params)`; keyword arguments are static options or params
        fields (None values are ignored)."""
        kwargs = {k: v for k, v in kwargs.items() if v is not None}
        options = {k: v for k, v in kwargs.items() if k in self.option_names}
        overrides = {k: v for k, v in kwargs.items() if k not in options}
        ctx = self.context(d, horizon, **options)
        if "max_k" in ctx.options and ctx.options["max_k"] is not None and not (
                1 <= ctx.options["max_k"] <= d):
            raise ValueError(f"max_k={ctx.options['max_k']} must satisfy 1 <= max_k <= d={d}.")
        params = self._params(ctx, overrides)
        learner = self.factory(ctx.d, **ctx.options)
        own = learner.check

        def check(values, d_problem: int) -> None:
            # the declared ranges (one place for every learner), then the learner's own checks
            check_params(self.params, values, self.name, ctx, skip=tuple(self.fixed))
            if own is not None:
                own(values, d_problem)

        return learner._replace(check=check, options=dict(ctx.options), d=ctx.d), params

    def describe(self, d: int | None = None) -> dict:
        """A JSON-ready description: family, params (default, range, sweepable), options."""
        ctx = self.context(d) if d is not None else None
        defaults = self.default_params(d) if d is not None else None
        rows = []
        for name, p in declared(self.params).items():
            if name in self.fixed:
                continue
            default = self.defaults.get(name, p.default)
            if defaults is not None:
                value = np.asarray(getattr(defaults, name))
                shown: Any = value.tolist() if value.ndim == 0 else f"array{value.shape}"
            else:
                shown = "derived" if callable(default) else default
            rows.append({"name": name, "default": shown, "range": range_text(p, ctx),
                         "sweepable": p.sweepable, "dtype": jnp.dtype(p.dtype).name,
                         "doc": p.doc})
        opts = []
        for o in self.options:
            value = ctx.options[o.name] if ctx is not None else o.default
            opts.append({"name": o.name,
                         "default": "derived" if callable(value) else value,
                         "doc": o.doc, **({"choices": list(o.choices)} if o.choices else {})})
        return {"name": self.name, "family": self.family, "description": self.description,
                "reference": self.reference, "params": rows, "options": opts}


@dataclass(frozen=True)
class ProblemSpec:
    """A registered problem: `factory(**options) -> (Problem, params)`.

    Attributes:
      name, kind ("stream" or "bandit"), description: for the registry and `oslr list`.
      factory: takes a keyword argument for each declared option, and no other.
      options: the factory's `Option`s (type, default, range, doc): `oslr list` shows them,
        `make` checks every value against them, and a study sets any of them
        (`problem_options`, `oslr run --problem-option NAME=VALUE`).
    """

    name: str
    kind: Kind
    description: str
    factory: Callable[..., Any]
    options: tuple[Option, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"problem {self.name!r}: kind {self.kind!r} is not one of "
                             f"{list(KINDS)}.")
        check_factory(f"problem {self.name!r}", self.factory, self.option_names)

    @property
    def option_names(self) -> tuple[str, ...]:
        return tuple(o.name for o in self.options)

    def option(self, name: str) -> Option:
        """The declared option `name` (ValueError naming the options there are)."""
        for o in self.options:
            if o.name == name:
                return o
        raise ValueError(f"problem {self.name!r} does not take option {name!r}; it takes "
                         f"{list(self.option_names) or 'none'}.")

    def defaults(self) -> dict[str, Any]:
        """Each option's default value."""
        return {o.name: o.default for o in self.options}

    def make(self, **options) -> tuple[Any, Any]:
        """`(problem, params)` for `options` (the rest at their defaults), each value checked
        against its declaration first."""
        bad = sorted(set(options) - set(self.option_names))
        if bad:
            raise ValueError(f"problem {self.name!r} does not take option(s) {bad}; it takes "
                             f"{list(self.option_names)}.")
        values = {**self.defaults(), **options}
        for o in self.options:
            if o.name in options and options[o.name] is not None:
                options[o.name] = o.check(options[o.name], values, f"problem {self.name!r}")
        return self.factory(**options)

    def describe(self) -> dict:
        """A JSON-ready description: kind, description, each option (default, type, range)."""
        return {"name": self.name, "kind": self.kind, "description": self.description,
                "options": [o.describe() for o in self.options]}


@dataclass(frozen=True)
class ExperimentArgs:
    """What `oslr experiment NAME` passes to an experiment's `run`.

    Attributes:
      dataset: the `--dataset` value (the spec's first dataset by default; None for an
        experiment on its own streams); runs: `--runs` (None: the experiment's own default);
      seed; out: the folder to write into; quick: the quick size; progress: show progress bars;
      options: the `--set` values (checked against the spec's learners before `run`).
    """

    dataset: str | None
    runs: int | None
    seed: int
    out: Any
    quick: bool
    progress: bool
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ExperimentSpec:
    """A registered experiment (`oslr experiment NAME`), declared beside its code.

    Attributes:
      name, description: the registry name and the one line `oslr experiment --list` shows.
      run: `run(ExperimentArgs) -> pandas.DataFrame`; writes `files` into `args.out`.
      sizes: the full and the quick sizes, in words (e.g. "T = 20,000, 10 runs; quick: ...").
      files: the names it writes (`{dataset}` filled in), and `docs`: the docs page using them.
      learners: the learners whose params and static options `--set` may name (None: every
        prediction learner); sets_itself: the names it sets itself (refused in `--set`);
        extra_options: other `--set` names it takes.
      datasets: the `--dataset` values it accepts, the first the default; () when it runs on
        its own streams (then `--dataset` is refused).
      summary: `summary(df) -> DataFrame or str`, what the command prints (default: the
        frame's main columns).
      records_runs: `run_experiment` writes every run's regret at every checkpoint of every
        study the experiment simulates into `runs_file` (False where the experiment writes its
        own per-run file, named in `files`).
    """

    name: str
    description: str
    run: Callable[[ExperimentArgs], Any]
    sizes: str = ""
    files: tuple[str, ...] = ()
    docs: str | None = None
    learners: tuple[str, ...] | None = ()
    sets_itself: tuple[str, ...] = ()
    extra_options: tuple[str, ...] = ()
    datasets: tuple[str, ...] = ()
    summary: Callable[[Any], Any] | None = None
    records_runs: bool = True

    @property
    def runs_file(self) -> str | None:
        """The per-run file `run_experiment` writes (None: the experiment writes its own)."""
        if not self.records_runs:
            return None
        return f"{self.name}{'-{dataset}' if self.datasets else ''}-runs.parquet"

    @property
    def all_files(self) -> tuple[str, ...]:
        """`files` and the per-run file."""
        return self.files + ((self.runs_file,) if self.runs_file else ())

    def check_options(self, options: Mapping[str, Any],
                      learners: Mapping[str, "LearnerSpec"]) -> None:
        """Refuse, before any work, `--set` names that no learner of the experiment takes
        (`learners`: the registry's table, name -> LearnerSpec, handed in so that this module
        does not import the registry)."""
        from oslr.types import PREDICTION

        names = list(self.learners) if self.learners is not None else [
            n for n in learners if learners[n].family == PREDICTION]
        known = set(self.extra_options)
        for learner in names:
            known |= set(learners[learner].param_names) | set(learners[learner].option_names)
        clash = sorted(set(options) & set(self.sets_itself))
        if clash:
            raise ValueError(f"experiment {self.name} sets {clash} itself; remove them from "
                             "--set.")
        unknown = sorted(set(options) - known)
        if unknown:
            takes = ", ".join(sorted(known - set(self.sets_itself))) or "no options"
            raise ValueError(f"experiment {self.name} does not take {unknown}; it takes: "
                             f"{takes}.")

    def check_dataset(self, dataset: str | None) -> str | None:
        """The dataset to run on (the default when None); ValueError for one it does not take."""
        from oslr.checks import unknown_name

        if not self.datasets:
            if dataset is not None:
                raise ValueError(f"experiment {self.name} runs on its own streams; drop "
                                 f"--dataset {dataset}.")
            return None
        if dataset is None:
            return self.datasets[0]
        if dataset not in self.datasets:
            raise ValueError(unknown_name(f"dataset of {self.name}", dataset, self.datasets))
        return dataset

    def describe(self) -> dict:
        """A JSON-ready description (`oslr experiment --list --json`)."""
        return {"name": self.name, "description": self.description, "sizes": self.sizes,
                "files": list(self.all_files), "docs": self.docs,
                "datasets": list(self.datasets),
                "learners": None if self.learners is None else list(self.learners),
                "sets_itself": list(self.sets_itself)}


__all__ = [
    "DEFAULT_HORIZON",
    "Ctx",
    "ExperimentArgs",
    "ExperimentSpec",
    "LearnerSpec",
    "Option",
    "Param",
    "ProblemSpec",
    "build_params",
    "check_params",
    "declared",
    "param",
    "range_text",
    "register_params",
]
