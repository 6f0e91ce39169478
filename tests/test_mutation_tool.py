"""tools/mutation.py's pure helpers (the mutation runs themselves are a developer's command)."""

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "mutation_tool", Path(__file__).resolve().parents[1] / "tools" / "mutation.py")
mutation = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mutation)


def test_function_of__functions_methods_and_private_names():
    assert mutation.function_of("oslr.stats.x_compare__mutmut_3") == "compare"
    assert mutation.function_of("oslr.sim.xǁStudyǁrun__mutmut_12") == "Study.run"
    assert mutation.function_of("oslr.experiments.doc_tables.x__signed__mutmut_2") == "_signed"
    assert mutation.function_of("oslr.a.x_f__mutmut_x__mutmut_7") == "f__mutmut_x"


def _record(seed, killed, tested=40, mutants=300, equivalent=()):
    return {"seed": seed, "killed": killed, "tested": tested, "mutants": mutants,
            "equivalent": list(equivalent)}


def test_with_first_look__kept_across_reruns_of_one_sample_new_for_a_new_sample():
    first = mutation.with_first_look(_record(1, 33, equivalent=["e"]), None)
    assert first["first"] == [33, 39]
    # the same sample rerun after tests were added: the first look stays
    again = mutation.with_first_look(_record(1, 39, equivalent=["e"]), first)
    assert again["first"] == [33, 39] and again["killed"] == 39
    # another seed, or another sample size, or a module whose mutants changed: a new first look
    assert mutation.with_first_look(_record(2, 36), again)["first"] == [36, 40]
    assert mutation.with_first_look(_record(1, 20, tested=20), again)["first"] == [20, 20]
    assert mutation.with_first_look(_record(1, 38, mutants=301), again)["first"] == [38, 40]
    # a seed-0 rerun of a record from before seeds were kept: its first look is unknown
    old = {k: v for k, v in _record(0, 40).items() if k != "seed"}
    assert "first" not in mutation.with_first_look(_record(0, 40), old)
    assert mutation.with_first_look(_record(0, 37), None)["first"] == [37, 40]


def test_first_cell__first_kills_over_the_sample_less_its_equivalents_or_blank():
    # 33 killed at first of 40 with one equivalent then; two more found equivalent since
    r = {"first": [33, 39], "tested": 40, "equivalent": ["a", "b", "c"]}
    assert mutation.first_look(r) == (33, 37)
    assert mutation._first_cell(r) == "33 of 37 (89.2%)"
    assert mutation._first_cell({"tested": 40, "equivalent": []}) == ""


def test_tests_for__mirrored_files_then_extras_files_or_single_tests():
    assert mutation.tests_for("oslr.primitives.topk") == [
        "tests/test_primitives.py",
        "tests/learners/test_ftpsl.py::"
        "test_ftpsl__matches_the_reference_under_the_optimised_build_users_get"]
    assert mutation.tests_for("oslr.metrics") == [
        "tests/test_metrics.py", "tests/test_sim.py", "tests/test_regret.py"]
