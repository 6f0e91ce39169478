"""A results folder (`oslr.folder`): claimed under its lock, finished with a manifest that
`verify` checks file by file, derived outputs never over the study's own files."""

import hashlib
import json

import pytest

from oslr import atomic, folder


def _finished(tmp_path, files=None, config=None):
    out = tmp_path / "s"
    out.mkdir()
    for name, data in (files or {"t.csv": b"a,b\n1,2\n3,4\n", "f.png": b"\x89PNG..."}).items():
        (out / name).write_bytes(data)
    folder.finish(out, folder.result_files(out), config or {"problem": "p"})
    return out


def test_sha256__every_block_of_a_file_larger_than_one_read(tmp_path):
    data = bytes(range(256)) * (3 * 2**20 // 256 + 7)  # three 1 MiB reads and a tail
    (tmp_path / "big").write_bytes(data)
    assert folder.sha256(tmp_path / "big") == hashlib.sha256(data).hexdigest()
    changed = data[:-1] + bytes([data[-1] ^ 1])  # the last byte, in the last block
    (tmp_path / "big").write_bytes(changed)
    assert folder.sha256(tmp_path / "big") == hashlib.sha256(changed).hexdigest()


def test_finish__the_manifest_then_config_json_then_the_folder_flushed(tmp_path, monkeypatch):
    order = []
    real_json, real_fsync = atomic.write_json_atomic, atomic.fsync_dir
    monkeypatch.setattr(atomic, "write_json_atomic",
                        lambda p, *a, **k: order.append(p.name) or real_json(p, *a, **k))
    monkeypatch.setattr(atomic, "fsync_dir", lambda d: order.append("fsync") or real_fsync(d))
    out = _finished(tmp_path)
    assert [o for o in order if o != "fsync"] == ["manifest.json", "config.json"]
    assert order[-2:] == ["fsync", "fsync"]  # config.json's own flush, then the folder's
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest == {"format": 1, "files": {
        "f.png": {"bytes": 7, "sha256": hashlib.sha256(b"\x89PNG...").hexdigest()},
        "t.csv": {"bytes": 12, "rows": 2,
                  "sha256": hashlib.sha256(b"a,b\n1,2\n3,4\n").hexdigest()}}}
    config = json.loads((out / "config.json").read_text())
    seal = {"manifest_sha256": folder.sha256(out / "manifest.json")}
    seal["config_sha256"] = hashlib.sha256(  # the settings and the manifest's digest
        json.dumps([{"problem": "p"}, seal["manifest_sha256"]]).encode()).hexdigest()
    assert config == {"problem": "p", "sealed": seal}
    assert folder.unseal(out, config) == {"problem": "p"}
    assert folder.verify(out) == manifest["files"]
    # both as readable, stable text: one-space indents, the manifest's keys sorted
    assert (out / "manifest.json").read_text() == json.dumps(manifest, indent=1, sort_keys=True)
    assert (out / "config.json").read_text() == json.dumps(config, indent=1)
    assert (out / "config.json").read_text().startswith('{\n "problem": "p",\n "sealed": {')
    folder.finish(out, [], {"z": 1, "a": 2})  # config.json keeps the settings' order
    assert (out / "config.json").read_text().startswith('{\n "z": 1,\n "a": 2,\n "sealed"')
    assert (out / "manifest.json").read_text() == '{\n "files": {},\n "format": 1\n}'


def test_result_files__plain_visible_files_but_config_and_manifest(tmp_path):
    for name in ("a.csv", ".oslr.lock", ".a.csv.12.tmp", "config.json", "manifest.json"):
        (tmp_path / name).write_text("x")
    (tmp_path / "cells").mkdir()
    assert folder.result_files(tmp_path) == ["a.csv"]


@pytest.mark.parametrize("change,message", [
    ("cut", r"t\.csv has 11 bytes where manifest\.json records 12: cut short or changed; copy it "
            r"again\.$"),
    ("same-size", r"t\.csv does not match its SHA-256 in manifest\.json: changed since the study "
                  r"wrote it; copy it again\.$"),
    ("missing", r"t\.csv is missing \(manifest\.json lists it\): the folder is incomplete; copy "
                r"it again\.$")])
def test_verify__a_file_cut_changed_or_missing_is_one_line_naming_it(tmp_path, change, message):
    out = _finished(tmp_path)
    table = out / "t.csv"
    if change == "cut":
        table.write_bytes(table.read_bytes()[:-1])
    elif change == "same-size":
        table.write_bytes(b"a,b\n1,2\n3,5\n")
    else:
        table.unlink()
    with pytest.raises(folder.LoadError, match=message):
        folder.verify(out)


@pytest.mark.parametrize("text,why", [
    ("{", r"JSONDecodeError: Expecting property name .*"), ("[]", r"TypeError: list indices .*"),
    ('{"format": 2, "files": {}}', r"ValueError: format 2"),
    ('{"files": {}}', r"ValueError: format None"), ('{"format": 1}', r"KeyError: 'files'"),
    ('{"format": 1, "files": []}', r"ValueError: format 1")])
def test_read_manifest__a_damaged_one_is_one_line(tmp_path, text, why):
    out = _finished(tmp_path)
    (out / "manifest.json").write_text(text)
    with pytest.raises(folder.LoadError, match=r"manifest\.json cannot be read \(" + why +
                       r"\): the folder's record of its files is damaged; copy the folder "
                       r"again\.$"):
        folder.verify(out)


def test_verify__a_folder_of_an_older_oslr_has_no_manifest(tmp_path):
    assert folder.verify(tmp_path) is None and folder.read_manifest(tmp_path) is None


@pytest.mark.parametrize("config,what", [
    ({"problem": "p"}, "a finished oslr run study"),
    ({"experiment": "arena"}, "the finished experiment 'arena'"),
    ({"merged_from": ["a", "b"]}, "a finished merge of studies"),
    ([1, 2], "a finished study (its config.json)")])
def test_refuse_finished__names_what_the_folder_holds(tmp_path, config, what):
    assert not folder.is_finished(tmp_path)
    folder.refuse_finished(tmp_path)  # nothing there: no refusal
    (tmp_path / "config.json").write_text(json.dumps(config))
    assert folder.is_finished(tmp_path) and folder.describe(tmp_path) == what
    with pytest.raises(folder.FolderRefused) as e:
        folder.refuse_finished(tmp_path, "--to")
    assert str(e.value) == (f"--to {tmp_path} already holds {what}; it is never overwritten: "
                            "give another --to (a new or an unfinished folder).")
    (tmp_path / "config.json").write_text("{")
    assert folder.describe(tmp_path) == "a finished study (its config.json)"


def test_claim__decides_under_the_lock_and_holds_it_for_the_block(tmp_path):
    with folder.claim(tmp_path / "d") as lock:
        assert lock.fd is not None
        with pytest.raises(atomic.FolderBusy):
            atomic.FolderLock(tmp_path / "d").acquire()
    assert lock.fd is None
    (tmp_path / "d" / "config.json").write_text("{}")
    with pytest.raises(folder.FolderRefused), folder.claim(tmp_path / "d"):
        pytest.fail("entered a finished folder")


def test_check_derived__never_over_the_studys_files_elsewhere_anything(tmp_path):
    out = _finished(tmp_path)
    for name in ("t.csv", "f.png", "config.json", "manifest.json"):
        with pytest.raises(folder.FolderRefused, match=r"is a file the study wrote; a figure "
                                                       r"drawn from it goes beside it"):
            folder.check_derived(out / name, out)
    folder.check_derived(out / "plot-regret.png", out)  # a new name: fine
    (out / "plot-regret.png").write_bytes(b"drawn before")
    folder.check_derived(out / "plot-regret.png", out)  # a derived figure is redrawn
    folder.check_derived(tmp_path / "t.csv", out)  # another folder: not the study's
    (out / "manifest.json").unlink()  # an older folder: every file there may be the study's
    with pytest.raises(folder.FolderRefused):
        folder.check_derived(out / "t.csv", out)
    folder.check_derived(out / "new.png", out)
