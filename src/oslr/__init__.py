"""oslr: a JAX-accelerated, vectorised simulator for online learning with limited feature access.

Public API:
  make, make_problem, list_learners, list_problems   registry
  simulate, sweep, grid_params, stack_params, SimResult   simulator
  Learner, Problem                                    contracts (see oslr.types, oslr.protocol)
"""

from oslr.protocol import ProtocolError
from oslr.registry import list_learners, list_problems, make, make_problem
from oslr.sim import SimResult, grid_params, simulate, stack_params, sweep
from oslr.types import BANDIT, LINEAR, PREDICTION, Learner, Problem

__version__ = "0.1.0"

__all__ = [
    "BANDIT",
    "LINEAR",
    "PREDICTION",
    "Learner",
    "Problem",
    "ProtocolError",
    "SimResult",
    "grid_params",
    "list_learners",
    "list_problems",
    "make",
    "make_problem",
    "simulate",
    "stack_params",
    "sweep",
]
