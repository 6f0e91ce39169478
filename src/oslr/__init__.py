"""oslr: a JAX-accelerated, vectorised simulator for online learning with limited feature access.

Public API:
  make, make_problem, list_learners, list_problems   registry
  register_learner, register_problem,                 extension from user code
    register_experiment
  LearnerSpec, Option, param, register_params,        declaring a learner's params and options
    build_params, ProblemSpec, ExperimentSpec,
    ExperimentArgs
  Study                                               a regret study, as `oslr run` runs it
  simulate, sweep, grid_params, stack_params, SimResult   simulator
  load, merge, SavedStudy                             a finished study's folder, read back
  Learner, Problem, Requirements,                     contracts (see oslr.types, oslr.protocol)
    StreamExample, BanditExample

`import oslr` is light (no JAX): each name is imported from its module on first use (PEP 562),
so the `oslr` command installs its signal handlers before anything heavy loads.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

#: public name -> the module that defines it
_EXPORTS = {
    "ProtocolError": "oslr.protocol",
    **dict.fromkeys(["list_learners", "list_problems", "make", "make_problem",
                     "register_experiment", "register_learner", "register_problem"],
                    "oslr.registry"),
    "SimResult": "oslr.result",
    **dict.fromkeys(["SavedStudy", "load", "merge"], "oslr.saved"),
    "Study": "oslr.study",
    "use_compile_cache": "oslr.compile_cache",
    **dict.fromkeys(["grid_params", "simulate", "stack_params", "sweep"], "oslr.sim"),
    **dict.fromkeys(["ExperimentArgs", "ExperimentSpec", "LearnerSpec", "Option", "ProblemSpec",
                     "build_params", "param", "register_params"], "oslr.spec"),
    **dict.fromkeys(["BANDIT", "LINEAR", "PREDICTION", "BanditExample", "Learner", "Problem",
                     "Requirements", "StreamExample"], "oslr.types"),
}

if TYPE_CHECKING:  # what type checkers and IDEs see
    from oslr.protocol import ProtocolError  # noqa: F401
    from oslr.registry import (  # noqa: F401
        list_learners, list_problems, make, make_problem, register_experiment,
        register_learner, register_problem)
    from oslr.result import SimResult  # noqa: F401
    from oslr.saved import SavedStudy, load, merge  # noqa: F401
    from oslr.sim import grid_params, simulate, stack_params, sweep  # noqa: F401
    from oslr.compile_cache import use_compile_cache  # noqa: F401
    from oslr.study import Study  # noqa: F401
    from oslr.spec import (  # noqa: F401
        ExperimentArgs, ExperimentSpec, LearnerSpec, Option, ProblemSpec, build_params, param,
        register_params)
    from oslr.types import (  # noqa: F401
        BANDIT, LINEAR, PREDICTION, BanditExample, Learner, Problem, Requirements, StreamExample)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module), name)
    else:  # a submodule: oslr.report, oslr.stats, ...
        try:
            value = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module 'oslr' has no attribute {name!r}") from None
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))


__version__ = "0.1.0"

__all__ = [
    "BANDIT",
    "BanditExample",
    "ExperimentArgs",
    "ExperimentSpec",
    "LINEAR",
    "PREDICTION",
    "Learner",
    "LearnerSpec",
    "Option",
    "Problem",
    "ProblemSpec",
    "Requirements",
    "ProtocolError",
    "SavedStudy",
    "SimResult",
    "StreamExample",
    "Study",
    "build_params",
    "grid_params",
    "list_learners",
    "list_problems",
    "load",
    "make",
    "make_problem",
    "merge",
    "param",
    "register_experiment",
    "register_learner",
    "register_params",
    "register_problem",
    "simulate",
    "stack_params",
    "sweep",
    "use_compile_cache",
]
