"""Per-run rows of a study played in blocks, written to files block by block and read back as
read-only memory maps (`oslr.spill`)."""

import os

import numpy as np
import pytest

from oslr.spill import Spill


def _tree(start, n):
    rows = np.arange(start, start + n)
    return {"final": {"regret": rows * 1.5}, "curves": {"regret": np.stack([rows, -rows], 1)
                                                        .astype(np.float32),
                                                        "empty": np.zeros((n, 0))}}


def test_spill__blocks_written_in_any_order_read_back_whole():
    spill = Spill(10)
    for start, n in ((6, 4), (0, 3), (3, 3)):
        spill.write(start, _tree(start, n))
    got = spill.read()
    want = _tree(0, 10)
    np.testing.assert_array_equal(got["final"]["regret"], want["final"]["regret"])
    np.testing.assert_array_equal(got["curves"]["regret"], want["curves"]["regret"])
    assert got["curves"]["regret"].dtype == np.float32
    assert got["curves"]["empty"].shape == (10, 0)


def test_spill__rows_are_read_only_maps_not_copies_in_memory():
    spill = Spill(4)
    spill.write(0, _tree(0, 4))
    got = spill.read()["final"]["regret"]
    assert isinstance(got, np.memmap)
    with pytest.raises(ValueError):
        got[0] = 1.0


def _open_files() -> dict[str, str]:
    """fd -> what it points at, of this process (the listing's own descriptor left out)."""
    out = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            out[fd] = os.readlink(f"/proc/self/fd/{fd}")
        except FileNotFoundError:
            pass
    return out


def test_spill__files_in_the_folder_given_and_closed_once_read(tmp_path):
    before = _open_files()
    spill = Spill(4, tmp_path / "rows")
    spill.write(0, _tree(0, 4))
    opened = {fd: f for fd, f in _open_files().items() if before.get(fd) != f}
    assert {os.path.dirname(f) for f in opened.values()} == {str(tmp_path / "rows")}
    assert len(opened) == 3
    got = spill.read()
    assert not set(opened) & set(_open_files())  # closed: each map holds its own
    assert got["final"]["regret"][3] == 4.5
    assert os.listdir(tmp_path / "rows") == []  # unnamed: nothing is left behind


def test_spill__a_block_unlike_the_first_is_refused():
    spill = Spill(6)
    spill.write(0, _tree(0, 3))
    with pytest.raises(ValueError, match="do not fit"):
        spill.write(3, {"final": {"regret": np.zeros(3)},
                        "curves": {"regret": np.zeros((3, 3), np.float32),
                                   "empty": np.zeros((3, 0))}})
    with pytest.raises(ValueError, match=r"^Spill.write: rows 4\.\.6 of shape \(0,\) do not fit "
                                         r"6 rows of shape \(0,\)\.$"):
        spill.write(4, _tree(4, 3))  # past the last row
    with pytest.raises(ValueError, match="not the first"):
        spill.write(3, {"final": {"regret": np.zeros(3)}})
    spill.close()


def test_spill__nothing_written_is_an_error():
    with pytest.raises(ValueError, match=r"^Spill.read: nothing was written\.$"):
        Spill(3).read()


def test_spill__a_block_of_another_dtype_is_cast_to_the_first_blocks():
    spill = Spill(4)
    spill.write(0, {"v": np.array([1.5, 2.5])})  # float64
    spill.write(2, {"v": np.array([3.5, 4.5], np.float32)})
    got = spill.read()["v"]
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, [1.5, 2.5, 3.5, 4.5])


@pytest.mark.parametrize("fault", ["cut to 0 bytes", "cut by one byte", "a row overwritten",
                                   "the last block's rows overwritten"])
def test_spill__rows_changed_on_disk_before_they_are_read_back_stop_in_one_line(tmp_path, fault):
    from oslr.spill import SpillError

    spill = Spill(10, tmp_path)
    for start, n in ((0, 4), (4, 4), (8, 2)):
        spill.write(start, _tree(start, n))
    f = spill._files[0]  # the first leaf: curves' "empty" (no bytes); take one with rows
    f = next(f for f, like in zip(spill._files, spill._like) if like.dtype.itemsize and
             like.ndim == 1)  # final's regret: 8 bytes a row
    f.flush()
    size = os.fstat(f.fileno()).st_size
    if fault == "cut to 0 bytes":
        f.truncate(0)
    elif fault == "cut by one byte":
        f.truncate(size - 1)
    else:
        f.seek(8 if fault == "a row overwritten" else size - 8)
        f.write(np.float64(-1).tobytes())
    runs = {"cut to 0 bytes": "0-3", "cut by one byte": "8-9", "a row overwritten": "0-3",
            "the last block's rows overwritten": "8-9"}[fault]  # the first block that differs
    with pytest.raises(SpillError, match=rf"^the per-run results of runs {runs}, kept in a "
                       rf"temporary file in {tmp_path} while the study ran, changed on disk "
                       r"before they were read back \(cut or overwritten\); run the study "
                       r"again \(with checkpoints, its finished blocks are kept\)\.$"):
        spill.read()
    spill.close()


def test_spill__rows_written_twice_are_checked_as_last_written():
    spill = Spill(4)
    spill.write(0, _tree(0, 4))
    spill.write(2, _tree(10, 2))  # a block played again over the same rows
    got = spill.read()
    np.testing.assert_array_equal(got["final"]["regret"], np.array([0, 1, 10, 11]) * 1.5)


def test_spill_error__the_command_prints_its_sentence_as_it_is():
    from oslr.cli import _one_line
    from oslr.spill import SpillError

    said = "the per-run results of runs 0-3, kept in a temporary file in /x, changed on disk."
    assert _one_line(SpillError(said)) == said


def test_spill__a_block_just_before_an_earlier_one_keeps_its_check_and_nested_folders(tmp_path):
    from oslr.spill import SpillError

    spill = Spill(8, tmp_path / "a" / "b")  # made with its parents
    spill.write(4, _tree(4, 4))
    spill.write(0, _tree(0, 4))  # ends where the first begins: both checked
    f = next(f for f, like in zip(spill._files, spill._like) if like.ndim == 1)
    f.seek(5 * 8)
    f.write(np.float64(-1).tobytes())
    with pytest.raises(SpillError, match=r"^the per-run results of runs 4-7, "):
        spill.read()
    spill.close()


def test_spill__keeps_no_block_alive_once_written():
    import gc
    import weakref

    spill = Spill(4)
    rows = np.ones((4, 2))  # owns its memory (a view's would be its base's)
    kept = weakref.ref(rows)
    spill.write(0, {"x": rows})
    del rows
    gc.collect()
    assert kept() is None  # only the dtype and trailing shape are kept, not the first block
    spill.close()
