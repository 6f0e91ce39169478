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


def test_write_atomic__data_is_on_disk_at_the_fsync(tmp_path, monkeypatch):
    """flush() before fsync(): at the file's fsync the bytes are in the file, not in Python's
    buffer (a missing flush syncs an empty file and the data reaches the disk later)."""
    sizes = []

    def fsync(fd):
        st = os.fstat(fd)
        if not os.path.isdir(os.readlink(f"/proc/self/fd/{fd}")):
            sizes.append(st.st_size)
        return os.fsync(fd)
    monkeypatch.setattr(atomic, "os", fake_os(fsync=fsync))
    atomic.write_atomic(tmp_path / "f", lambda f: f.write(b"x" * 100))
    assert sizes == [100]


def test_write_atomic__each_process_its_own_temporary(tmp_path, monkeypatch):
    seen = []

    def write(f):
        seen.append(os.path.basename(f.name))
        f.write(b"1")
    atomic.write_atomic(tmp_path / "f.csv", write)
    assert seen == [f".f.csv.{os.getpid()}.tmp"]


def test_write_atomic__removes_temporaries_of_dead_writers_only(tmp_path):
    import subprocess
    import sys

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    alive = os.getppid()  # a running process
    for name in (f".f.{dead}.tmp", f".f.{alive}.tmp", ".f.tmp", ".g.1.tmp", "f.1.tmp"):
        (tmp_path / name).write_bytes(b"")
    atomic.write_text_atomic(tmp_path / "f", "new")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["f", f".f.{alive}.tmp", ".g.1.tmp", "f.1.tmp"])


def test_write_atomic__a_failed_write_leaves_no_temporary_and_says_what_to_do(tmp_path):
    import errno

    target = tmp_path / "f"
    atomic.write_text_atomic(target, "old")

    def full(f):
        f.write(b"abc")
        raise OSError(errno.ENOSPC, "No space left on device")
    with pytest.raises(atomic.AtomicWriteError) as e:
        atomic.write_atomic(target, full)
    assert e.value.errno == errno.ENOSPC
    assert str(e.value.strerror) == (f"cannot write {target} (No space left on device); free "
                                     "some space there (or write elsewhere), then run the same "
                                     "command again.")
    assert target.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["f"]
    # a folder where the file should go: one line too
    (tmp_path / "sub").mkdir()
    with pytest.raises(atomic.AtomicWriteError, match="a file stands where a folder should be"):
        atomic.write_text_atomic(tmp_path / "f" / "x", "y")
    with pytest.raises(atomic.AtomicWriteError, match=r"its folder does not exist"):
        atomic.write_text_atomic(tmp_path / "nope" / "x", "y")


def test_os_error_message__every_fix_and_the_fallback(tmp_path):
    import errno

    def msg(code):
        return atomic.os_error_message(OSError(code, os.strerror(code)), "P")
    assert msg(errno.EACCES) == "cannot write P (Permission denied); make the folder writable " \
                                "or write elsewhere."
    assert msg(errno.EROFS).endswith("; the file system is read-only: write elsewhere.")
    assert msg(errno.EISDIR).endswith("; a folder stands where the file should be: move it away "
                                      "or write elsewhere.")
    assert msg(errno.EDQUOT).endswith("; free some of your quota there, then run the same "
                                      "command again.")
    assert msg(errno.EPERM).endswith("make the folder writable or write elsewhere.")
    assert msg(errno.EIO).endswith("; check the path and run the same command again.")


def test_folder_lock__second_holder_refused_naming_the_first_then_free(tmp_path):
    lock = atomic.FolderLock(tmp_path / "d", "--out").acquire()
    try:
        holder = (tmp_path / "d" / ".oslr.lock").read_text()
        assert holder.startswith(f"pid {os.getpid()} on ")
        with pytest.raises(atomic.FolderBusy) as e:
            atomic.FolderLock(tmp_path / "d", "--out").acquire()
        assert str(e.value) == (f"--out {tmp_path / 'd'} is in use by {holder}; wait for it to "
                                "finish (or stop it), or give another folder.")
    finally:
        lock.release()
    lock.release()  # releasing twice is harmless
    with atomic.FolderLock(tmp_path / "d") as again:
        assert again.fd is not None
    assert again.fd is None


def test_folder_lock__released_when_the_holder_is_killed(tmp_path):
    import signal
    import subprocess
    import sys

    code = ("import sys, time; from oslr.atomic import FolderLock; "
            f"FolderLock({str(tmp_path)!r}).acquire(); print('held', flush=True); time.sleep(60)")
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "held"
    with pytest.raises(atomic.FolderBusy, match=f"pid {p.pid} on "):
        atomic.FolderLock(tmp_path).acquire()
    p.send_signal(signal.SIGKILL)
    p.wait()
    p.stdout.close()
    atomic.FolderLock(tmp_path).acquire().release()


@pytest.mark.parametrize("name", ["t.csv", "t.json", "t.parquet"])
def test_write_frame_atomic__each_format_reads_back(tmp_path, name):
    import pandas as pd

    df = pd.DataFrame({"a": [1, 2], "b": [0.5, -1.0]})
    atomic.write_frame_atomic(tmp_path / name, df)
    back = {"t.csv": pd.read_csv, "t.json": pd.read_json,
            "t.parquet": pd.read_parquet}[name](tmp_path / name)
    pd.testing.assert_frame_equal(back, df)
    assert (tmp_path / "t.csv").exists() == (name == "t.csv")
    if name == "t.csv":
        assert (tmp_path / name).read_text() == "a,b\n1,0.5\n2,-1.0\n"
    with pytest.raises(ValueError, match=r"give a \.csv, \.json or \.parquet name"):
        atomic.write_frame_atomic(tmp_path / "t.txt", df)


def test_write_atomic__other_errors_pass_through_unchanged(tmp_path):
    def bad(f):
        raise KeyError("not an OS error")
    with pytest.raises(KeyError, match="not an OS error"):
        atomic.write_atomic(tmp_path / "f", bad)
    assert list(tmp_path.iterdir()) == []


def test_write_atomic__a_failed_folder_flush_names_the_folder(tmp_path, monkeypatch):
    import errno

    def fail(folder):
        raise OSError(errno.EIO, "Input/output error")
    monkeypatch.setattr(atomic, "fsync_dir", fail)
    with pytest.raises(atomic.AtomicWriteError) as e:
        atomic.write_text_atomic(tmp_path / "f", "x")
    assert e.value.strerror == (f"cannot write {tmp_path} (Input/output error); check the path "
                                "and run the same command again.")
    assert e.value.errno == errno.EIO


def test_write_atomic__a_stale_temporary_removed_by_another_writer_meanwhile(tmp_path,
                                                                            monkeypatch):
    # two writers clean up the same dead writer's temporary: the one that finds it gone goes on
    from pathlib import Path

    (tmp_path / ".f.tmp").write_bytes(b"")
    listing = Path.iterdir

    def iterdir(self):
        out = list(listing(self))
        (tmp_path / ".f.tmp").unlink(missing_ok=True)  # gone between the listing and unlink
        return iter(out)

    monkeypatch.setattr(Path, "iterdir", iterdir)
    atomic.write_text_atomic(tmp_path / "f", "new")
    assert (tmp_path / "f").read_text() == "new"


def test_argv__the_program_name_and_arguments_or_python_without_any(monkeypatch):
    import sys

    monkeypatch.setattr(sys, "argv", ["/usr/bin/oslr", "run", "-n", "3"])
    assert atomic._argv() == ["oslr", "run", "-n", "3"]
    monkeypatch.setattr(sys, "argv", [])
    assert atomic._argv() == ["python"]


def test_write_frame_atomic__parquet_drops_a_non_default_index(tmp_path):
    import pandas as pd

    df = pd.DataFrame({"a": [1, 2]}, index=[5, 7])
    atomic.write_frame_atomic(tmp_path / "t.parquet", df)
    back = pd.read_parquet(tmp_path / "t.parquet")
    assert list(back.columns) == ["a"] and list(back.index) == [0, 1]


def test_folder_lock__makes_missing_parents_and_says_who_holds_it(tmp_path, monkeypatch):
    import re
    import sys

    monkeypatch.setattr(sys, "argv", ["/usr/bin/oslr", "run", "--out", "x" * 400])
    with atomic.FolderLock(tmp_path / "a" / "b"):
        holder = (tmp_path / "a" / "b" / ".oslr.lock").read_text()
    m = re.fullmatch(r"pid (\d+) on (\S+) since (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) \((.*)\)", holder)
    assert m and int(m.group(1)) == os.getpid()
    assert m.group(4) == ("oslr run --out " + "x" * 400)[:200]


def test_folder_lock__a_holder_that_wrote_nothing_is_another_process(tmp_path):
    import fcntl

    tmp_path.joinpath(".oslr.lock").write_text("")
    fd = os.open(tmp_path, os.O_RDONLY)  # the lock is on the folder itself
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        with pytest.raises(atomic.FolderBusy, match=r"folder .* is in use by another process;"):
            atomic.FolderLock(tmp_path).acquire()
    finally:
        os.close(fd)
    atomic.FolderLock(tmp_path).acquire().release()


def test_folder_lock__a_failing_flock_raises_its_error_and_closes_the_file(tmp_path,
                                                                            monkeypatch):
    import errno
    import fcntl
    import types

    def no_locks(fd, op):
        raise OSError(errno.ENOLCK, "No locks available")
    monkeypatch.setattr(atomic, "fcntl", types.SimpleNamespace(
        flock=no_locks, LOCK_EX=fcntl.LOCK_EX, LOCK_NB=fcntl.LOCK_NB))
    before = len(os.listdir("/proc/self/fd"))
    with pytest.raises(OSError) as e:
        atomic.FolderLock(tmp_path).acquire()
    assert e.value.errno == errno.ENOLCK
    assert len(os.listdir("/proc/self/fd")) == before  # the lock file's descriptor is closed


@pytest.mark.parametrize("name,magic", [("f.png", b"\x89PNG"), ("f.SVG", b"<?xml"),
                                        ("f", b"\x89PNG")])
def test_save_figure_atomic__format_from_the_suffix_at_the_given_resolution(tmp_path, name,
                                                                            magic):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(2, 1))
    atomic.save_figure_atomic(fig, tmp_path / name, dpi=50)
    plt.close(fig)
    data = (tmp_path / name).read_bytes()
    assert data.startswith(magic) and [p.name for p in tmp_path.iterdir()] == [name]
    if magic == b"\x89PNG":  # width and height in the PNG header: 2 x 1 inches at 50 dpi
        assert int.from_bytes(data[16:20], "big") == 100
        assert int.from_bytes(data[20:24], "big") == 50


def test_folder_lock__the_lock_file_is_readable_by_all_writable_by_its_owner(tmp_path):
    old = os.umask(0o022)
    try:
        with atomic.FolderLock(tmp_path / "d"):
            mode = (tmp_path / "d" / atomic.FolderLock.NAME).stat().st_mode & 0o777
    finally:
        os.umask(old)
    assert mode == 0o644


def test_folder_lock__deleting_the_lock_file_lets_no_second_writer_in(tmp_path):
    with atomic.FolderLock(tmp_path / "d", "--out"):
        (tmp_path / "d" / atomic.FolderLock.NAME).unlink()
        with pytest.raises(atomic.FolderBusy, match=r"is in use by another process;"):
            atomic.FolderLock(tmp_path / "d", "--out").acquire()
    atomic.FolderLock(tmp_path / "d").acquire().release()


def test_folder_lock__a_longer_previous_holder_line_leaves_no_tail(tmp_path, monkeypatch):
    import sys

    (tmp_path / atomic.FolderLock.NAME).write_text("pid 1 on h since then (" + "y" * 300 + ")")
    monkeypatch.setattr(sys, "argv", ["oslr", "run"])
    with atomic.FolderLock(tmp_path):
        holder = (tmp_path / atomic.FolderLock.NAME).read_text()
    assert holder.startswith(f"pid {os.getpid()} on ") and holder.endswith(" (oslr run)")
    assert "y" not in holder
    assert sorted(p.name for p in tmp_path.iterdir()) == [atomic.FolderLock.NAME]


def test_folder_lock__a_folder_where_the_lock_file_goes_is_one_line(tmp_path):
    (tmp_path / atomic.FolderLock.NAME).mkdir()
    with pytest.raises(atomic.FolderBusy) as e:
        atomic.FolderLock(tmp_path, "--out").acquire()
    assert str(e.value) == (f"--out {tmp_path}: {tmp_path / atomic.FolderLock.NAME} is not a "
                            "file (oslr keeps the name of the lock's holder there); move it "
                            "away and run the same command again.")


def test_folder_lock__a_holder_line_that_is_not_utf8_is_quoted_with_replacements(tmp_path):
    import fcntl

    (tmp_path / atomic.FolderLock.NAME).write_bytes(b"pid 7 on h\xff\xfe since then")
    fd = os.open(tmp_path, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        with pytest.raises(atomic.FolderBusy, match="is in use by pid 7 on h\ufffd\ufffd since "
                                                    "then; wait"):
            atomic.FolderLock(tmp_path).acquire()
    finally:
        os.close(fd)


@pytest.mark.parametrize("name", ["t.csv", "t.parquet"])
def test_write_frames_atomic__pieces_make_one_table_and_count_its_rows(tmp_path, name):
    import pandas as pd
    import pyarrow.parquet as pq

    pieces = [pd.DataFrame({"a": [i, i + 1], "s": ["x", "y"], "b": [0.5 * i, -1.0]})
              for i in range(0, 6, 2)]
    assert atomic.write_frames_atomic(tmp_path / name, iter(pieces)) == 6
    read = pd.read_csv if name == "t.csv" else pd.read_parquet
    pd.testing.assert_frame_equal(read(tmp_path / name), pd.concat(pieces, ignore_index=True))
    if name == "t.parquet":
        assert pq.ParquetFile(tmp_path / name).metadata.num_row_groups == 3  # one a piece
    else:
        assert (tmp_path / name).read_text().count("a,s,b") == 1  # the header once
    assert atomic.write_frames_atomic(tmp_path / name, iter([])) == 0
    assert read(tmp_path / name).empty if name == "t.parquet" else (
        (tmp_path / name).read_text().strip() == "")
    with pytest.raises(ValueError, match=r"give a \.csv or \.parquet name"):
        atomic.write_frames_atomic(tmp_path / "t.json", iter(pieces))


def test_write_frames_atomic__a_failure_mid_way_keeps_the_old_table(tmp_path):
    import pandas as pd

    path = tmp_path / "t.parquet"
    old = pd.DataFrame({"a": [7]})
    atomic.write_frame_atomic(path, old)

    def pieces():
        yield pd.DataFrame({"a": [1, 2]})
        raise RuntimeError("killed")

    with pytest.raises(RuntimeError, match="killed"):
        atomic.write_frames_atomic(path, pieces())
    pd.testing.assert_frame_equal(pd.read_parquet(path), old)
    assert os.listdir(tmp_path) == ["t.parquet"]
