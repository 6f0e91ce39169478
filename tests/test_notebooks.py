"""The notebooks run (at a small size) so they never rot."""

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))


@pytest.mark.slow  # each starts a kernel and compiles its studies: -m slow (and CI) runs them
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook__executes_at_small_size(path, monkeypatch):
    monkeypatch.setenv("OSLR_NB_RUNS", "3")
    monkeypatch.setenv("OSLR_NB_T", "150")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook__saved_with_its_outputs_and_figures(path):
    """A reader on GitHub sees what each cell printed and drew without running it."""
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type != "code" or not cell.source.strip():
            continue
        outputs = cell.get("outputs", [])
        assert cell.get("execution_count") is not None, (path.name, cell.source[:60])
        assert not any(o.get("output_type") == "error" for o in outputs), path.name
        if "plt.show()" in cell.source:
            assert any("image/png" in o.get("data", {}) for o in outputs), (
                path.name, cell.source[:60])
