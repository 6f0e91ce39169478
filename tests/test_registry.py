"""The registry (`oslr.registry`): names to specs, loaded on first use; refusals in one line."""

import dataclasses
from importlib import metadata

import pytest

import oslr
from oslr import registry
from oslr.registry import _Lazy


def test_make_and_make_problem__unknown_names_and_options_refused_in_one_line():
    with pytest.raises(ValueError, match=r"^unknown learner 'ogd-ful'; did you mean "
                       r"'ogd-full'\?"):
        registry.make("ogd-ful", d=4)
    with pytest.raises(ValueError, match=r"^unknown problem 'sparse-linaer'; did you mean "
                       r"'sparse-linear'\?"):
        registry.make_problem("sparse-linaer")
    with pytest.raises(ValueError, match=r"^problem 'sparse-linear' does not take option\(s\) "
                       r"\['zz'\]; it takes \['d', 'k', "):
        registry.make_problem("sparse-linear", zz=1, d=4)


def test_lazy__strings_loaded_once_callables_called_specs_kept_and_names_checked():
    spec = registry.LEARNERS["ogd-full"]
    calls = []

    def build():
        calls.append(1)
        return spec

    table = _Lazy("learner", {"ogd-full": "oslr.learners.ogd:OGD_FULL"})
    assert table.kind == "learner" and list(table) == ["ogd-full"] and len(table) == 1
    assert table["ogd-full"] is spec and table["ogd-full"] is spec  # loaded, then kept
    table.add("via-function", build)
    with pytest.raises(ValueError, match=r"^learner entry 'via-function' loads a spec named "
                       r"'ogd-full'\.$"):
        table["via-function"]
    table.add("ogd-full", build, replace=True)
    assert table["ogd-full"] is spec and calls == [1, 1]
    table.add("ogd-full", spec, replace=True)  # a spec is callable-free: kept as it is
    assert table["ogd-full"] is spec and calls == [1, 1]
    with pytest.raises(ValueError, match=r"^unknown learner 'nope'"):
        table["nope"]
    assert "nope" not in table and "ogd-full" in table


def test_lazy__entry_points_of_the_group_are_scanned_once_on_first_use(monkeypatch):
    seen = []
    point = metadata.EntryPoint("ep-learner", "oslr.learners.ogd:OGD_FULL", "oslr.test")

    def entry_points(group):
        seen.append(group)
        return [point]

    monkeypatch.setattr(registry.metadata, "entry_points", entry_points)
    table = _Lazy("learner", {}, group="oslr.test")
    assert seen == []  # nothing read at construction
    with pytest.raises(ValueError, match="loads a spec named 'ogd-full'"):
        table["ep-learner"]  # loaded through the entry point: its spec has another name
    assert "ep-learner" in table and seen == ["oslr.test"]
    assert list(_Lazy("learner", {"a": "x:y"})) == ["a"]  # no group: nothing scanned


def test_register_and_list__specs_and_entries_refused_otherwise(monkeypatch):
    monkeypatch.setattr(registry.LEARNERS, "_entries", dict(registry.LEARNERS._entries))
    monkeypatch.setattr(registry.EXPERIMENTS, "_entries", dict(registry.EXPERIMENTS._entries))
    monkeypatch.setattr(registry.PROBLEMS, "_entries", dict(registry.PROBLEMS._entries))
    registry.register_learner("lazy-ogd", "oslr.learners.ogd:OGD_FULL")
    from oslr.spec import ProblemSpec

    agnostic = registry.PROBLEMS["agnostic"]
    mine = ProblemSpec("my-stream", "stream", "a copy", agnostic.factory, agnostic.options)
    registry.register_problem(mine)
    assert registry.PROBLEMS["my-stream"] is mine
    assert registry.LEARNERS._entries["lazy-ogd"] == "oslr.learners.ogd:OGD_FULL"
    with pytest.raises(TypeError, match=r"^register_learner takes a LearnerSpec, or a name and "
                       r"a 'module:attribute' entry\.$"):
        registry.register_learner("bad", "no-colon")
    with pytest.raises(TypeError, match=r"^register_experiment takes an? ExperimentSpec"):
        registry.register_experiment(42)
    problems = {p["name"]: p for p in registry.list_problems()}
    assert set(problems["sparse-linear"]) == {"name", "kind", "description", "options"}
    assert problems["linear-bandit"]["kind"] == "bandit"
    n_arms = {o["name"]: o for o in problems["linear-bandit"]["options"]}["n_arms"]
    assert n_arms == {"name": "n_arms", "default": 10, "doc": "arms per round K", "type": "int",
                      "range": "[2, inf)"}
    assert registry.spec("ogd-full") is registry.LEARNERS["ogd-full"]
    assert oslr.list_problems() == registry.list_problems()


def test_register__a_built_in_name_is_refused_unless_replaced_on_purpose(monkeypatch):
    for table in (registry.LEARNERS, registry.EXPERIMENTS, registry.PROBLEMS):
        monkeypatch.setattr(table, "_entries", dict(table._entries))
    builtin = registry.LEARNERS["ogd-full"]
    mine = dataclasses.replace(registry.LEARNERS["ogd-random-subset"], name="ogd-full")
    with pytest.raises(ValueError, match=r"^learner 'ogd-full' is built into oslr; register "
                       r"yours under another name \(or pass replace=True to replace the "
                       r"built-in on purpose\)\.$"):
        registry.register_learner(mine)
    with pytest.raises(ValueError, match=r"^learner 'ogd-full' is built into oslr"):
        registry.register_learner("ogd-full", "oslr.learners.ogd:OGD_RANDOM_SUBSET")
    assert registry.LEARNERS["ogd-full"] is builtin  # untouched
    from oslr.spec import ProblemSpec

    agnostic = registry.PROBLEMS["agnostic"]
    problem = ProblemSpec("sparse-linear", "stream", "a copy", agnostic.factory,
                          agnostic.options)
    with pytest.raises(ValueError, match=r"^problem 'sparse-linear' is built into oslr"):
        registry.register_problem(problem)
    with pytest.raises(ValueError, match=r"^experiment 'arena' is built into oslr"):
        registry.register_experiment("arena", "oslr.experiments.arena:ARENA_K_SPEC")
    registry.register_learner(mine, replace=True)
    assert registry.LEARNERS["ogd-full"] is mine
    # on purpose, by a lazy entry and for a problem too
    registry.register_learner("ogd-full", "oslr.learners.ogd:OGD_FULL", replace=True)
    assert registry.LEARNERS._entries["ogd-full"] == "oslr.learners.ogd:OGD_FULL"
    registry.register_problem(problem, replace=True)
    assert registry.PROBLEMS["sparse-linear"] is problem
    table = _Lazy("learner", {"ogd-full": "oslr.learners.ogd:OGD_FULL"})
    with pytest.raises(ValueError, match=r"^learner 'ogd-full' is built into oslr"):
        table.add("ogd-full", "x:y")  # refused by default
    table.add("mine", "x:y")
    table.add("mine", "x:z")
    assert table._entries["mine"] == "x:z"
    again = dataclasses.replace(mine, name="my-ogd")
    registry.register_learner(again)
    registry.register_learner(again)  # one of the user's own names, registered again
    assert registry.LEARNERS["my-ogd"] is again


def test_learner_specs__every_option_default_is_the_factorys():
    # an option's default is written in the spec (Option), in the spec's factory and in the
    # learner module's public factory (e.g. linucb's refactor_every): a default changed in one
    # place only would run another learner than `oslr list` shows
    import importlib
    import inspect

    checked, differ = 0, []
    for name in registry.LEARNERS:
        spec = registry.LEARNERS[name]
        module = importlib.import_module(spec.factory.__module__)
        factories = [spec.factory] + [f for f in vars(module).values()
                                      if inspect.isfunction(f) and f.__module__ == module.__name__
                                      and not f.__name__.startswith("_")]
        for option in spec.options:
            assert option.name in inspect.signature(spec.factory).parameters, (name, option.name)
            if callable(option.default):  # derived from the study (e.g. the horizon)
                continue
            for f in factories:
                p = inspect.signature(f).parameters.get(option.name)
                if p is not None and p.default is not inspect.Parameter.empty:
                    checked += 1
                    if p.default != option.default:
                        differ.append((name, option.name, f.__name__, p.default, option.default))
    assert differ == [] and checked > 40, (checked, differ)
