"""What every experiment writes: its table as CSV and, when it draws one, its figure as PNG, each
replaced whole (`oslr.atomic`: a kill leaves the old file or none, never a part)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pandas as pd

from oslr import atomic


def write_table_and_figure(out: Path, stem: str, df: pd.DataFrame,
                           plot: Callable[[Path, str], Any] | None = None,
                           title: str = "") -> None:
    """Write `stem.csv` into `out` (created if needed) and, when `plot(path, title) -> Figure`
    is given and matplotlib is installed, `stem.png`."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    atomic.write_frame_atomic(out / f"{stem}.csv", df)  # whole or absent after a kill
    if plot is None:
        return
    try:
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - plotting is optional
        return
    plt.close(plot(out / f"{stem}.png", title))


__all__ = ["write_table_and_figure"]
