"""`write_table_and_figure`: every experiment's table and figure, each replaced whole."""

import os

import matplotlib
import pandas as pd
import pytest

from oslr import atomic
from oslr.experiments.output import write_table_and_figure

matplotlib.use("Agg")


def _plot(path, title):
    import matplotlib.pyplot as plt

    from oslr.report import finish_figure

    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 2], label="a")
    ax.set_title(title)
    return finish_figure(fig, ax, path)


def test_write_table_and_figure__both_files_through_oslr_atomic(tmp_path, monkeypatch):
    written, real = [], atomic.write_atomic
    monkeypatch.setattr(atomic, "write_atomic",
                        lambda p, w: written.append(os.path.basename(p)) or real(p, w))
    df = pd.DataFrame({"a": [1, 2], "b": [0.5, 1.5]})
    write_table_and_figure(tmp_path / "new", "t", df, _plot, "title")
    assert written == ["t.csv", "t.png"]
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "new" / "t.csv"), df)
    assert (tmp_path / "new" / "t.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    write_table_and_figure(tmp_path / "new", "u", df)  # no plot: the table alone
    assert written[2:] == ["u.csv"] and not (tmp_path / "new" / "u.png").exists()


def test_write_table_and_figure__a_failed_write_keeps_the_old_files_whole(tmp_path, monkeypatch):
    old = pd.DataFrame({"a": [1]})
    write_table_and_figure(tmp_path, "t", old, _plot, "old")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}

    def full_disk(f):  # a disk that fills half-way through the file
        f.write(b"a,b\n1,")
        raise OSError(28, "No space left on device")

    real = atomic.write_atomic
    monkeypatch.setattr(atomic, "write_atomic", lambda p, w: real(p, full_disk))
    with pytest.raises(atomic.AtomicWriteError, match="No space left"):
        write_table_and_figure(tmp_path, "t", pd.DataFrame({"a": [1, 2], "b": [3, 4]}), _plot,
                               "new")
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before  # no temporary left


def test_write_table_and_figure__makes_missing_parents_and_hands_the_plot_its_title(tmp_path):
    titles = []

    def plot(path, title):
        titles.append(title)
        return _plot(path, title)

    df = pd.DataFrame({"a": [1]})
    write_table_and_figure(tmp_path / "a" / "b", "t", df, plot, "my title")
    write_table_and_figure(tmp_path / "a" / "b", "u", df, plot)  # no title given: ""
    assert titles == ["my title", ""]
    assert (tmp_path / "a" / "b" / "t.csv").is_file() and (tmp_path / "a" / "b" / "u.png").is_file()


def test_write_table_and_figure__nested_folders_created_and_the_title_passed_on(tmp_path):
    seen = []

    def plot(path, title):
        seen.append((path, title))
        return _plot(path, title)

    out = tmp_path / "a" / "b" / "c"  # no parent exists yet
    df = pd.DataFrame({"a": [1.0]})
    write_table_and_figure(out, "t", df, plot, "E9: 3 runs")
    write_table_and_figure(out, "u", df, plot)  # no title given: an empty one
    assert seen == [(out / "t.png", "E9: 3 runs"), (out / "u.png", "")]
    assert (out / "t.csv").exists() and (out / "u.png").exists()
