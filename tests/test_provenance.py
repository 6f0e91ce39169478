"""Where a result came from (`oslr.provenance`): the version and the git commit."""

import itertools
import re
import subprocess
from pathlib import Path

import pytest

import oslr
from oslr import provenance


def test_commit__the_checkouts_head_and_whether_its_source_has_changes():
    got = provenance.commit()
    head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                          cwd=provenance.__file__.rsplit("/", 1)[0]).stdout.strip()
    assert re.fullmatch(r"[0-9a-f]{40}", got["commit"]) and got["commit"] == head
    assert isinstance(got["dirty"], bool)


@pytest.mark.parametrize("error", [OSError(2, "no git"),
                                   subprocess.CalledProcessError(128, ["git"])])
def test_commit__outside_a_git_checkout_says_so_with_the_version(monkeypatch, error):
    def fail(*args, **kwargs):
        raise error

    monkeypatch.setattr(provenance.subprocess, "run", fail)
    assert provenance.commit() == {
        "commit": f"unknown (oslr {oslr.__version__}, not a git checkout)", "dirty": None}
    assert provenance.stamp() == {"oslr": oslr.__version__, **provenance.commit()}


def test_commit__dirty_when_git_lists_a_change(monkeypatch):
    outputs = itertools.cycle(["abc\n", " M src/oslr/sim.py\n"])
    calls = []
    package = Path(provenance.__file__).resolve().parent

    def fake(args, **kwargs):
        calls.append(args)
        # run in the package's own folder: the checkout holding this oslr, not the caller's
        assert kwargs == {"cwd": package, "capture_output": True, "text": True, "check": True}
        return subprocess.CompletedProcess(args, 0, stdout=next(outputs))

    monkeypatch.setattr(provenance.subprocess, "run", fake)
    assert provenance.commit() == {"commit": "abc", "dirty": True}
    assert calls == [["git", "rev-parse", "HEAD"], ["git", "status", "--porcelain", "--", "."]]
    assert list(provenance.stamp())[0] == "oslr"
    outputs = itertools.cycle(["abc\n", "\n"])  # nothing listed: clean
    assert provenance.commit() == {"commit": "abc", "dirty": False}
