"""oslr: a JAX-accelerated, vectorised simulator for online learning with limited feature access.

Public API:
  make, make_problem, list_learners, list_problems   registry
  register_learner, register_problem,                 extension from user code
    register_experiment
  LearnerSpec, Option, param, register_params,        declaring a learner's params and options
    build_params, ProblemSpec, ExperimentSpec,
    ExperimentArgs
  simulate, sweep, grid_params, stack_params, SimResult   simulator
  Learner, Problem, Requirements                      contracts (see oslr.types, oslr.protocol)
"""

from oslr.protocol import ProtocolError
from oslr.registry import (
    list_learners,
    list_problems,
    make,
    make_problem,
    register_experiment,
    register_learner,
    register_problem,
)
from oslr.result import SimResult
from oslr.sim import grid_params, simulate, stack_params, sweep
from oslr.spec import (
    ExperimentArgs,
    ExperimentSpec,
    LearnerSpec,
    Option,
    ProblemSpec,
    build_params,
    param,
    register_params,
)
from oslr.types import BANDIT, LINEAR, PREDICTION, Learner, Problem, Requirements

__version__ = "0.1.0"

__all__ = [
    "BANDIT",
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
    "SimResult",
    "build_params",
    "grid_params",
    "list_learners",
    "list_problems",
    "make",
    "make_problem",
    "param",
    "register_experiment",
    "register_learner",
    "register_params",
    "register_problem",
    "simulate",
    "stack_params",
    "sweep",
]
