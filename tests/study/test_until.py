"""A study played and its progress shown (oslr.study.until)."""

import json
import time as time_module

from oslr import study as study_module


def test_study_progress__the_total_grows_with_each_look():
    from oslr.study import StudyProgress

    progress = StudyProgress("none")
    progress.add(300)
    progress.add(300)
    assert progress.total == 600


def test_study_progress__one_total_for_the_study_and_json_lines_for_a_log():
    import io

    from oslr.study import StudyProgress

    out = io.StringIO()
    progress = StudyProgress("jsonl", out)
    progress.add(2 * 100)  # two learners of T = 100
    first, second = progress.for_learner("a"), progress.for_learner("b")
    first(50)
    first(50)
    second(100)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [(r["learner"], r["done"], r["total"], r["fraction"]) for r in lines] == [
        ("a", 50, 200, 0.25), ("a", 100, 200, 0.5), ("b", 200, 200, 1.0)]
    assert lines[-1]["eta_s"] == 0.0 and lines[0]["eta_s"] >= 0.0
    assert StudyProgress("none").for_learner("a") is False  # simulate shows nothing


def test_look_line__what_until_says_after_each_look():
    from oslr.study import look_line as _look_line

    assert _look_line(2, 5, ["a", "b"]) == "  look 2: 10 runs; undecided: a, b"
    assert _look_line(3, 5, []) == "  look 3: 15 runs; every comparison decided"


def test_study_progress__the_time_left_to_a_tenth_of_a_second(monkeypatch):
    import io


    clock = iter([100.0, 100.0 + 1.23456])  # start, then the first chunk
    monkeypatch.setattr(time_module, "perf_counter", lambda: next(clock))
    out = io.StringIO()
    progress = study_module.StudyProgress("jsonl", out)
    progress.add(300)
    progress.for_learner("a")(100)
    line = json.loads(out.getvalue())
    assert line["elapsed_s"] == 1.23 and line["eta_s"] == 2.5  # 1.23456 x 2 = 2.469 -> 2.5
