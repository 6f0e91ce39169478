"""A problem of the user's own, as docs/extending.md writes it: declared, registered, listed with
its options' ranges, each option settable from Python, a TOML file and the command line, and
every input a study cannot run refused in one line before anything is simulated."""

import json
import re
from pathlib import Path

import pytest

import oslr
from oslr import registry
from oslr.cli import main
from oslr.study import UsageError, prepare
from tests.cli.helpers import _study

GUIDE = Path(__file__).parent.parent / "docs" / "extending.md"


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", GUIDE.read_text(), flags=re.S)


@pytest.fixture
def user_problems(monkeypatch):
    """The guide's two problems registered (dropped again afterwards)."""
    monkeypatch.setattr(registry.PROBLEMS, "_entries", dict(registry.PROBLEMS._entries))
    for block in _blocks("python"):
        if "register_problem" in block:
            exec(compile(block, "docs/extending.md", "exec"), {})
    return registry.PROBLEMS


def test_guide_problems__listed_with_their_options_ranges(user_problems, capsys):
    assert {"rotating", "fresh-arms"} <= set(user_problems)
    assert main(["list", "--json"]) == 0
    listed = {p["name"]: p for p in json.loads(capsys.readouterr().out)["problems"]}
    period = {o["name"]: o for o in listed["rotating"]["options"]}["period"]
    assert period == {"name": "period", "default": 500, "doc": "rounds per turn of w*",
                      "type": "int", "range": "[1, inf)"}
    assert main(["list"]) == 0
    text = capsys.readouterr().out
    assert re.search(r"\n {24}period +  = 500 +in \[1, inf\) +rounds per turn of w\*\n", text)


def test_guide_problems__period_from_python_toml_and_the_command_line(user_problems, tmp_path):
    python = oslr.Study(problem="rotating", problem_options={"period": 100},
                        learners=["ogd-full"], horizon=50, runs=2)
    (tmp_path / "r.toml").write_text('problem = "rotating"\nlearners = ["ogd-full"]\n'
                                     "[problem_options]\nperiod = 100\n")
    toml = oslr.Study.from_toml(tmp_path / "r.toml", horizon=50, runs=2)
    flags = _study("--problem", "rotating", "--problem-option", "period=100", "--learners",
                   "ogd-full", "--horizon", "50", "--runs", "2")
    for study in (python, toml, flags):
        assert study.problem_options == {"period": 100}
        assert type(study.problem_options["period"]) is int
        problem, pp, plans = prepare(study)  # every check; nothing traced
        assert problem.name == "rotating" and problem.d == 8 and len(plans) == 1
        assert problem.comparator_sparsity(pp) == 2  # declared, not guessed


@pytest.mark.parametrize("argv,said", [
    (["--problem-option", "period=0"], "oslr: error: problem 'rotating': option period=0 is "
     "out of range [1, inf) (rounds per turn of w*). Change it with --problem-option period.\n"),
    (["--problem-option", "period=2.5"], "oslr: error: --problem-option period=2.5: option "
     "period='2.5' must be a whole number.\n"),
    (["--problem-option", "turns=3"], "oslr: error: --problem-option turns=3: problem "
     "'rotating' does not take option 'turns'; it takes ['d', 'period', 'sigma'].\n"),
    (["--problem-option", "period=5", "--problem-option", "period=6"], "oslr: error: "
     "--problem-option period=5 and --problem-option period=6 name period twice; give it "
     "once.\n")])
def test_guide_problems__a_bad_option_is_one_line_naming_the_flag(user_problems, tmp_path,
                                                                 capsys, argv, said):
    out = tmp_path / "o"
    assert main(["run", "--problem", "rotating", "--learners", "ogd-full", "--horizon", "20",
                 "--runs", "2", "--out", str(out), *argv]) == 2
    assert capsys.readouterr().err == said
    assert not out.exists()


def test_study__each_input_it_cannot_run_refused_before_anything_is_simulated(
        user_problems, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(oslr, "simulate", lambda *a, **k: pytest.fail("simulated anyway"))
    out = str(tmp_path / "o")
    # a prediction learner on a bandit: the family named first, not the default options
    with pytest.raises(UsageError, match=r"^learner 'ogd-full' \(prediction\) cannot run on "
                                         r"problem 'linear-bandit' \(bandit\)"):
        oslr.Study(problem="linear-bandit", learners=["ogd-full"], out=out).run()
    # a stream with no noise-free labels and no declared sparsity: comparator_k named
    plain = registry.PROBLEMS["rotating"]
    registry.register_problem(oslr.ProblemSpec(
        "rotating-plain", "stream", "no sparsity declared", lambda d=8, period=500, sigma=0.1:
        _undeclared(plain.factory(d=d, period=period, sigma=sigma)), plain.options))
    with pytest.raises(UsageError, match=r"^problem 'rotating' declares no sparsity .* give "
                                         r"the comparator's sparsity \(e\.g\. comparator_k=5\)"):
        oslr.Study(problem="rotating-plain", learners=["ogd-random-subset"], params={"k": 2},
                   runs=8, out=out).run()
    assert main(["run", "--problem", "rotating-plain", "--learners", "ogd-random-subset",
                 "--runs", "8", "--out", out]) == 2
    assert capsys.readouterr().err.endswith("(e.g. --comparator-k 5).\n")
    assert main(["run", "--problem", "covtype", "--learners", "ogd-random-subset",
                 "--out", out]) == 2
    assert capsys.readouterr().err.startswith("oslr: error: problem 'covtype' declares no "
                                              "sparsity")
    assert not Path(out).exists()


def _undeclared(made):
    problem, params = made
    return problem._replace(name="rotating", realizable=False, sparsity=None), params


def test_simulate__a_learner_built_for_another_d_is_refused_before_tracing():
    learner, params = oslr.make("ogd-full", d=8)
    problem, pp = oslr.make_problem("sparse-linear", d=16, k=2)
    with pytest.raises(ValueError, match=r"^learner 'ogd-full' was built for d=8, problem "
                                         r"'sparse-linear' has d=16; build it for the problem's "
                                         r"\(oslr\.make\(name, d=16, \.\.\.\)\)\.$"):
        oslr.simulate(learner, problem, params, pp, horizon=5, n_runs=2)


def test_specs__an_unknown_family_kind_or_a_factory_of_other_options_refused_when_made():
    from oslr.learners.ogd import OGD_FULL

    with pytest.raises(ValueError, match=r"^learner 'x': family 'regression' is not one of "
                                         r"\['prediction', 'linear', 'bandit'\]\.$"):
        oslr.LearnerSpec(name="x", family="regression", description="", factory=OGD_FULL.factory,
                         params=OGD_FULL.params)
    with pytest.raises(TypeError, match=r"^learner 'x': its factory does not take the declared "
                                        r"option\(s\) \['zz'\]"):
        oslr.LearnerSpec(name="x", family="prediction", description="", factory=OGD_FULL.factory,
                         params=OGD_FULL.params, options=(oslr.Option("zz", 1),))
    with pytest.raises(ValueError, match=r"^problem 'p': kind 'river' is not one of "):
        oslr.ProblemSpec("p", "river", "", lambda: None)
    with pytest.raises(TypeError, match=r"^problem 'p': its factory takes \['period'\], which no "
                                        r"Option declares"):
        oslr.ProblemSpec("p", "stream", "", lambda period=3: None)
    with pytest.raises(TypeError, match=r"^problem 'p': its factory does not take the declared "
                                        r"option\(s\) \['period'\]"):
        oslr.ProblemSpec("p", "stream", "", lambda: None, (oslr.Option("period", 3),))
    with pytest.raises(TypeError, match=r"^register_problem takes a ProblemSpec"):
        registry.register_problem("rotating")


@pytest.mark.slow  # two small studies of the user's problems: compiles of their own
def test_guide_problems__the_guides_studies_run(user_problems, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run = next(b for b in _blocks("python") if "oslr.Study(" in b)
    exec(compile(run, "docs/extending.md", "exec"), {"oslr": oslr})
    rotating, bandit = oslr.load("rotating-study"), oslr.load("fresh-arms-study")
    assert rotating.config["problem_options"] == {"period": 100}
    assert {"regret", "regret_wstar"} <= set(rotating.metrics())
    assert set(bandit.finals()) == {"linucb", "eps-greedy"}
    (tmp_path / "rotating.toml").write_text(next(b for b in _blocks("toml")
                                                 if "rotating" in b))
    assert main(["run", "--config", "rotating.toml", "--runs", "3", "--horizon", "100",
                 "--out", "toml", "--no-progress", "--no-plot", "--json"]) == 0
    assert oslr.load("toml").config["problem_options"] == {"period": 100}
