"""tools/bugsets.py's pure helpers and the shipped sets (the replays themselves are a
developer's command)."""

import importlib.util
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location(
    "bugsets_tool", Path(__file__).resolve().parents[1] / "tools" / "bugsets.py")
bugsets = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bugsets)


def test_every_shipped_set_applies_to_the_current_source():
    names = sorted(p.stem for p in bugsets.SETS.glob("*.toml"))
    assert names  # at least one set ships
    for name in names:
        bugs = bugsets.load_set(name)  # each old text occurs once in its file
        assert all(b["old"] != b["new"] and b["what"] for b in bugs)


def test_load_set__refuses_a_stale_or_unknown_set(tmp_path, monkeypatch):
    monkeypatch.setattr(bugsets, "SETS", tmp_path)
    (tmp_path / "s.toml").write_text(
        '[[bug]]\nwhat = "w"\nfile = "src/oslr/checks.py"\nold = "no such text"\nnew = "x"\n')
    with pytest.raises(SystemExit, match=r"s bug 0 \(w\): its old text occurs 0 times"):
        bugsets.load_set("s")
    with pytest.raises(SystemExit, match=r"no bug set 'other'; the sets are \['s'\]"):
        bugsets.load_set("other")
    (tmp_path / "t.toml").write_text('[[bug]]\nwhat = "w"\nfile = "tools/mutation.py"\n'
                                     'old = "a"\nnew = "b"\n')
    with pytest.raises(SystemExit, match="is not under src/oslr/ or doctools/"):
        bugsets.load_set("t")
    (tmp_path / "u.toml").write_text('[[bug]]\nwhat = "w"\nold = "a"\n')
    with pytest.raises(SystemExit, match=r"missing \['file', 'new'\]"):
        bugsets.load_set("u")


def test_module_of_and_first_failure():
    assert bugsets.module_of("src/oslr/learners/ogd.py") == "oslr.learners.ogd"
    assert bugsets.module_of("doctools/tables.py") == "doctools.tables"
    out = ("..F\nFAILED tests/test_a.py::test_x[2] - AssertionError: no\n"
           "FAILED tests/test_b.py::test_y\n1 failed")
    assert bugsets.first_failure(out) == "tests/test_a.py::test_x[2]"
    assert bugsets.first_failure("ERROR tests/t.py - ImportError\n") == "tests/t.py"
    assert bugsets.first_failure("3 passed") == ""


def test_record__first_run_kept_across_reruns(monkeypatch):
    monkeypatch.setattr(bugsets, "_commit", lambda: "abc")
    caught = {"caught": True, "what": "w", "module": "m", "failed": "t"}
    missed = dict(caught, caught=False, failed="")
    r = bugsets.record({}, "s", {0: caught}, n_bugs=2)
    assert "first" not in r["s"]  # not every bug has run yet
    r = bugsets.record(r, "s", {1: missed}, n_bugs=2)
    assert (r["s"]["first"], r["s"]["first_commit"]) == (1, "abc")
    monkeypatch.setattr(bugsets, "_commit", lambda: "def")
    r = bugsets.record(r, "s", {1: caught}, n_bugs=2)  # a test now catches it: rerun
    assert (r["s"]["first"], r["s"]["first_commit"], r["s"]["commit"]) == (1, "abc", "def")
    assert all(v["caught"] for v in r["s"]["bugs"].values())
