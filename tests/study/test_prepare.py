"""A study's problem and learners built, every check before tracing (oslr.study.prepare)."""

import json

import pytest

from tests.cli.helpers import _study


def test_prepare__a_delay_aware_learner_keeps_its_own_buffer_on_an_undelayed_stream():
    from oslr.study import UsageError, prepare

    study = _study("--problem", "agnostic", "--d", "6", "--k", "2", "--learners",
                   "ftpsl-delayed", "--horizon", "20", "--runs", "2")
    _, _, plans = prepare(study, study.names)
    learner = plans[0][0]
    assert learner.options["max_delay"] == 64  # its default: no delays to size it by
    study.params = {"zzz": 1.0}
    with pytest.raises(UsageError, match=r"^params\['zzz'\]: 'zzz' is not a parameter of any "
                                         r"chosen learner \(ftpsl-delayed\)"):
        prepare(study)


def test_hint__names_where_the_parameter_was_set():
    from oslr.study import FLAGS, PYTHON, StudySettings
    from oslr.study.prepare import _hint

    err = ValueError("ogd-full: parameter eta=[-1.] is out of range (0, inf).")
    grid, fixed = StudySettings(grid={"eta": [-1.0]}), StudySettings(params={"eta": -1.0})
    assert _hint(err, grid, FLAGS).endswith("Change it with --grid eta.")
    assert _hint(err, fixed, FLAGS).endswith("Change it with --set eta.")
    assert _hint(err, fixed, PYTHON).endswith("Change it with params['eta'].")
    assert _hint(err, StudySettings(params={}), FLAGS) == err.args[0]


def test_prepare__a_static_k_is_a_parameter_of_a_learner_that_takes_it():
    from oslr.study import UsageError, prepare

    study = _study("--learners", "foster-hedge", "--d", "6", "--set", "k=2", "--horizon", "10",
                   "--runs", "2")
    _, _, plans = prepare(study)  # k is not swept by foster-hedge but is one of its options
    assert [learner.name for learner, _, _ in plans] == ["foster-hedge"]
    # a static k makes k a parameter, not any other name
    study.params = {"bogus": 1.0}
    with pytest.raises(UsageError, match="'bogus' is not a parameter of any chosen "
                                         r"learner \(foster-hedge\)"):
        prepare(study)


def test_prepare__a_learner_sized_by_the_arm_count_gets_the_problems():
    from oslr.study import prepare

    study = _study("--problem", "linear-bandit", "--learners", "linucb", "--d", "4", "--n-arms",
                   "6", "--horizon", "10", "--runs", "2")
    _, _, plans = prepare(study)
    assert plans[0][0].options["n_arms"] == 6


def test_prepare__delay_sized_by_the_stream_and_a_study_without_params_or_grid_keys():
    import oslr
    from oslr.study import prepare

    study = oslr.Study(problem="agnostic", learners=["ftpsl-delayed"], horizon=20, runs=2,
                       problem_options={"d": 6, "k": 2, "delays": "fixed", "max_delay": 3})
    _, _, plans = prepare(study)
    assert plans[0][0].options["max_delay"] == 3  # the stream's, not the default 64
    # a learner with a static k (foster-hedge enumerates k-subsets): k from the problem
    study.learners, study.problem_options = ["foster-hedge"], {"d": 6, "k": 2}
    _, _, plans = prepare(study)
    assert plans[0][0].options["k"] == 2


def test_prepare__a_grid_of_k_1_alone_sets_max_k_1_and_an_empty_study_reports_done(capsys):
    import io

    import oslr
    from oslr.study import StudyProgress, prepare

    study = oslr.Study(learners=["ogd-random-subset"], grid={"k": [1]}, horizon=20, runs=2)
    _, _, plans = prepare(study)
    assert plans[0][0].options["max_k"] == 1  # the grid's largest k is the static bound
    out = io.StringIO()
    StudyProgress("jsonl", out).for_learner("a")(0)  # nothing to do: done
    assert json.loads(out.getvalue())["fraction"] == 1.0


@pytest.fixture
def small_max_k(monkeypatch):
    """ogd-random-subset again, under another name, with a static bound max_k whose default is
    1 (the harness must set it from the study's k)."""
    import dataclasses

    from oslr import registry
    from oslr.learners.ogd import OGD_RANDOM_SUBSET
    from oslr.spec import Option

    monkeypatch.setattr(registry.LEARNERS, "_entries", dict(registry.LEARNERS._entries))
    spec = dataclasses.replace(OGD_RANDOM_SUBSET, name="ogd-max-k-1", options=(
        Option("max_k", 1, "static bound on the traced k", type=int, fill="max_k"),))
    registry.register_learner(spec)
    return spec


@pytest.mark.parametrize("k,max_k", [(8, 8), (3, 3), (9, None)])
def test_prepare__max_k_filled_from_the_study_up_to_d_itself(small_max_k, k, max_k):
    import oslr
    from oslr.study import UsageError, prepare

    study = oslr.Study(problem_options={"d": 8, "k": 2}, learners=["ogd-max-k-1"],
                       params={"k": k}, horizon=10, runs=2)
    if max_k is None:  # beyond d: no bound set, and the learner's own range refuses k
        with pytest.raises(UsageError, match=r"parameter k=\[9\] is out of range \[1, 1\]"):
            prepare(study)
        return
    _, _, plans = prepare(study)
    assert plans[0][0].options["max_k"] == max_k


def test_prepare__params_set_a_learners_static_option_but_a_grid_never_does():
    import oslr
    from oslr.study import UsageError, prepare

    study = oslr.Study(problem="linear-bandit", learners=["linucb", "eps-greedy"],
                       params={"history": "features"}, horizon=10, runs=2)
    _, _, plans = prepare(study)
    linucb, labels, _ = plans[0]
    assert linucb.options["history"] == "features" and labels == [{"history": "features"}]
    assert plans[1][1] == [{}]  # eps-greedy takes no history: not its label
    flags = _study("--problem", "linear-bandit", "--learners", "linucb", "--set",
                   "history=features", "--horizon", "10", "--runs", "2")
    assert prepare(flags)[2][0][0].options["history"] == "features"
    study.grid, study.params = {"history": ["features", "arm"]}, {}
    with pytest.raises(UsageError, match=r"^grid\['history'\]: 'history' is not a parameter of "
                                         r"any chosen learner"):
        prepare(study)
    study.grid, study.params = {}, {"n_arms": 5}  # the harness fills it from the problem
    with pytest.raises(UsageError, match=r"^params\['n_arms'\]: 'n_arms' is not a parameter"):
        prepare(study)
