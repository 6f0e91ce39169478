"""Everything also runs with jax_enable_x64 (the float64 references rely on it; they run the
learners in-process under x64, which exercises the same code paths as the contract checks)."""

import json
import os
import subprocess
import sys

import pytest

_SCRIPT = """
import json, jax, numpy as np, oslr
from oslr.registry import LEARNERS
out = {"x64": bool(jax.config.jax_enable_x64)}
one_per_family = {}
for name, spec in LEARNERS.items():
    one_per_family.setdefault(spec.family, name)
for name in one_per_family.values():
    spec = LEARNERS[name]
    if spec.family == "bandit":
        prob, pp = oslr.make_problem("linear-bandit", d=5)
    else:
        prob, pp = oslr.make_problem("sparse-linear", d=6, k=2)
    learner, params = oslr.make(name, d=prob.d)
    res = oslr.simulate(learner, prob, params, pp, horizon=60, n_runs=2)
    curves = res.regret_curves()
    out[name] = {"dtype": str(res.curves[next(iter(res.curves))].dtype),
                 "finite": bool(all(np.isfinite(v).all() for v in curves.values()))}
print(json.dumps(out))
"""


@pytest.mark.slow  # moved behind -m slow to keep the default run under 5 min
def test_x64__a_learner_of_every_family_simulates_in_float64():
    env = dict(os.environ, JAX_ENABLE_X64="1", JAX_PLATFORMS="cpu")
    proc = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, capture_output=True,
                          text=True, check=True)
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out.pop("x64") is True
    assert len(out) == 3
    for name, row in out.items():
        assert row == {"dtype": "float64", "finite": True}, name
