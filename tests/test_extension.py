"""A third-party learner: registered from user code (docs/extending.md's example) or through the
`oslr.learners` entry-point group, it works in `oslr.make`, `oslr list` and `oslr run`."""

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import oslr
from oslr import registry
from oslr.cli import main
from oslr.testing import check_spec

GUIDE = Path(__file__).parent.parent / "docs" / "extending.md"


@pytest.fixture
def clean_registry(monkeypatch):
    """Registrations made by a test are dropped afterwards."""
    monkeypatch.setattr(registry.LEARNERS, "_entries", dict(registry.LEARNERS._entries))


def _example() -> str:
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.S)
    return next(b for b in blocks if "register_learner" in b)


@pytest.mark.slow  # behind -m slow to keep the default run under 5 min
def test_extending_guide_third_party_example__registers_and_runs(clean_registry, tmp_path, capsys):
    assert len(_example().strip().splitlines()) <= 20
    exec(compile(_example(), "docs/extending.md", "exec"), {})
    learner, params = oslr.make("constant", d=8, c=0.25)
    assert float(params.c) == 0.25 and learner.name == "constant"
    assert len(check_spec(registry.LEARNERS["constant"])) == 8
    with pytest.raises(ValueError, match=r"c=\[2.0\] is out of range"):  # the declared range
        learner.check(oslr.make("constant", d=8, c=2.0)[1], 8)
    assert main(["list", "--json"]) == 0
    listed = {r["name"]: r for r in json.loads(capsys.readouterr().out)["learners"]}
    assert listed["constant"]["params"][0]["range"] == "[-1, 1]"
    out = tmp_path / "run"
    assert main(["run", "--learners", "constant,ogd-full", "--set", "c=0.1", "--horizon", "60",
                 "--runs", "3", "--out", str(out), "--json", "--no-progress", "--no-plot"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["learner"] for r in rows} == {"constant", "ogd-full"}


_PLUGIN = '''
import jax.numpy as jnp
import oslr

@oslr.register_params
class HalfParams:
    scale: jnp.ndarray = oslr.param(jnp.float32, 0.5, lo=0.0, doc="prediction scale")

def half(d):
    def step(key, state, rnd, params):
        x = rnd.observe(jnp.arange(d) < 1)
        rnd.commit(params.scale * x[0])
        return state
    return oslr.Learner(init=lambda key, params: jnp.zeros(()), step=step,
                        family=oslr.PREDICTION, budget=lambda p: jnp.int32(1), name="demo-half")

SPEC = oslr.LearnerSpec(name="demo-half", family=oslr.PREDICTION, description="half of x_1",
                        factory=half, params=HalfParams, alt={"scale": 0.25})
'''


@pytest.mark.slow  # subprocesses of `oslr list` and `oslr run`; registration from user code
def test_entry_point_learner__found_by_oslr_list_and_run(tmp_path):
    pkg = tmp_path / "oslr_demo_plugin"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(textwrap.dedent(_PLUGIN))
    dist = tmp_path / "oslr_demo_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: oslr-demo-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[oslr.learners]\ndemo-half = oslr_demo_plugin:SPEC\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path), JAX_PLATFORMS="cpu")
    code = textwrap.dedent(f"""
        import json, sys
        from oslr.cli import main
        main(["list", "--json"])
        sys.exit(main(["run", "--learners", "demo-half", "--horizon", "40", "--runs", "2",
                       "--out", {str(tmp_path / "out")!r}, "--json", "--no-progress",
                       "--no-plot"]))
    """)
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    listing, _, run = proc.stdout.partition("\n[")
    names = {r["name"] for r in json.loads(listing)["learners"]}
    assert "demo-half" in names and "ogd-full" in names
    assert {r["learner"] for r in json.loads("[" + run)} == {"demo-half"}


def _toy_run(args):
    """A toy experiment: one row per `--set` value, written as toy-DATASET.csv."""
    import pandas as pd

    df = pd.DataFrame([{"dataset": args.dataset, "runs": args.runs or 3, "seed": args.seed,
                        "quick": args.quick, **args.options}])
    problem, pp = oslr.make_problem("sparse-linear", d=3, k=1)
    learner, params = oslr.make("ogd-full", d=3)
    oslr.simulate(learner, problem, params, pp, horizon=10, n_runs=args.runs or 3)
    args.out.mkdir(parents=True, exist_ok=True)
    df.to_csv(args.out / f"toy-{args.dataset}.csv", index=False)
    return df


def test_a_toy_experiment_registered_from_outside__runs_and_is_listed(monkeypatch, tmp_path,
                                                                      capsys):
    monkeypatch.setattr(registry.EXPERIMENTS, "_entries", dict(registry.EXPERIMENTS._entries))
    oslr.register_experiment(oslr.ExperimentSpec(
        "toy-exp", "a toy experiment", _toy_run, sizes="one row", files=("toy-{dataset}.csv",),
        learners=("ogd-full",), sets_itself=("horizon",), datasets=("small", "large")))
    assert main(["experiment", "--list"]) == 0
    listed = capsys.readouterr().out
    assert "toy-exp         a toy experiment" in listed and "--dataset small | large" in listed
    assert main(["experiment", "toy-exp", "--set", "eta=0.5", "--quick", "--out",
                 str(tmp_path), "--json", "--no-progress"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows == [{"dataset": "small", "runs": 3, "seed": 0, "quick": True, "eta": 0.5}]
    assert (tmp_path / "toy-small.csv").is_file()
    # every run of every study the experiment simulated, written by `oslr experiment`
    import pandas as pd

    runs = pd.read_parquet(tmp_path / "toy-exp-small-runs.parquet")
    assert sorted(set(runs["run"])) == [0, 1, 2] and runs["t"].max() == 10
    assert set(runs["learner"]) == {"ogd-full"} and (runs["study"] == 0).all()
    # what tells studies apart: the learner's scalar params and the problem's labels
    assert (runs["param_eta"] > 0).all() and (runs["info_design"] == "gaussian").all()
    for argv, message in [(["--set", "zzz=1"], "does not take ['zzz']; it takes:"),
                          (["--set", "horizon=5"], "sets ['horizon'] itself"),
                          (["--dataset", "smal"], "did you mean 'small'?")]:
        assert main(["experiment", "toy-exp", *argv, "--out", str(tmp_path / "x")]) == 2
        assert message in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
    # by entry point string, loaded on first use
    oslr.register_experiment("toy-lazy", "tests.test_extension:TOY_LAZY")
    assert main(["experiment", "toy-lazy", "--dataset", "large", "--out", str(tmp_path),
                 "--no-progress"]) == 2  # the folder holds the finished toy-exp
    assert capsys.readouterr().err == (f"oslr: error: --out {tmp_path} already holds the "
                                       "finished experiment 'toy-exp'; it is never overwritten: "
                                       "give another --out (a new or an unfinished folder).\n")
    assert main(["experiment", "toy-lazy", "--dataset", "large", "--out",
                 str(tmp_path / "lazy"), "--no-progress"]) == 0
    assert (tmp_path / "lazy" / "toy-large.csv").is_file()


TOY_LAZY = oslr.ExperimentSpec("toy-lazy", "the same, loaded lazily", _toy_run,
                               datasets=("small", "large"))
