"""Crash-safe files (`oslr.atomic`): the target is the old file or the whole new one."""

import os

import pytest

from oslr import atomic
from tests.helpers import fake_os


class _Killed(BaseException):
    """A kill: nothing of the writer runs after it (not an Exception, so no handler eats it)."""


def test_write_atomic__replaces_the_file_whole_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "f.json"
    atomic.write_json_atomic(target, {"a": 1})
    atomic.write_json_atomic(target, {"a": 2})
    assert target.read_text() == '{"a": 2}'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.json"]


def test_write_atomic__flushes_the_file_then_renames_then_flushes_the_folder(tmp_path,
                                                                              monkeypatch):
    calls = []
    fake = fake_os(fsync=lambda fd: calls.append(("fsync", "dir" if os.path.isdir(
        os.readlink(f"/proc/self/fd/{fd}")) else "file")) or os.fsync(fd),
        replace=lambda a, b: calls.append(("replace",)) or os.replace(a, b))
    monkeypatch.setattr(atomic, "os", fake)
    atomic.write_text_atomic(tmp_path / "f", "x")
    assert calls == [("fsync", "file"), ("replace",), ("fsync", "dir")]


@pytest.mark.parametrize("kill_at", ["write", "fsync", "replace"])
def test_write_atomic__a_kill_before_the_rename_keeps_the_old_file(tmp_path, monkeypatch,
                                                                    kill_at):
    target = tmp_path / "f.txt"
    atomic.write_text_atomic(target, "old")

    def write(f):
        f.write(b"ne")
        if kill_at == "write":
            raise _Killed
        f.write(b"w")

    fake = fake_os()
    if kill_at == "fsync":
        fake.fsync = lambda fd: (_ for _ in ()).throw(_Killed())
    if kill_at == "replace":
        fake.replace = lambda a, b: (_ for _ in ()).throw(_Killed())
    monkeypatch.setattr(atomic, "os", fake)
    with pytest.raises(_Killed):
        atomic.write_atomic(target, write)
    assert target.read_text() == "old"
    monkeypatch.undo()
    atomic.write_text_atomic(target, "new")  # the leftover temporary is simply replaced
    assert target.read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.txt"]


def test_copy_atomic__copies_bytes(tmp_path):
    (tmp_path / "a").write_bytes(bytes(range(256)) * 10)
    atomic.copy_atomic(tmp_path / "a", tmp_path / "b")
    assert (tmp_path / "b").read_bytes() == bytes(range(256)) * 10


def test_read_json__damaged_file_is_refused_naming_it_and_the_fix(tmp_path):
    (tmp_path / "s.json").write_text('{"a": ')
    with pytest.raises(ValueError, match=r"stamps .*s\.json cannot be read.*delete it"):
        atomic.read_json(tmp_path / "s.json", "stamps", "delete it.")
