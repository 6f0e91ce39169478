"""A results folder: claimed under its lock, finished with a manifest, verified when read back.

Every command that writes a study into a folder (`oslr run`, `oslr experiment`, `oslr merge`)
goes through the same rule: take the folder's lock first (`claim`), then decide under it. A
folder holding a finished study or experiment (its `config.json`) is refused in one line and
never written to; derived outputs (`oslr plot`'s figures) go beside the study under names of
their own (`check_derived`), never over a file the study wrote.

A finished folder holds `manifest.json` (each result file's size, SHA-256 and, for a table, its
rows), written by `finish` just before `config.json`, which comes last and says the folder is
complete. `verify` checks every listed file against it: a file cut short, changed or missing
is a one-line `LoadError` naming it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterable, Iterator
from pathlib import Path

from oslr import atomic

#: the file whose presence says a folder holds a finished study (written last)
CONFIG = "config.json"
#: each result file's size, SHA-256 and rows (written just before config.json)
MANIFEST = "manifest.json"
#: manifest.json's layout
MANIFEST_FORMAT = 1
#: the tables whose rows the manifest records
TABLE_SUFFIXES = (".csv", ".parquet")


class LoadError(ValueError):
    """A folder that is not a finished study, or whose files do not match their manifest."""


class FolderRefused(ValueError):
    """A folder that a command may not write into (it holds a finished study)."""


def is_finished(folder: str | Path) -> bool:
    """True when `folder` holds a finished study or experiment (its config.json)."""
    return (Path(folder) / CONFIG).is_file()


def describe(folder: str | Path) -> str:
    """What the finished `folder` holds, for a message: "a finished oslr run study", ..."""
    try:
        config = json.loads((Path(folder) / CONFIG).read_text())
    except (OSError, ValueError):
        return "a finished study (its config.json)"
    if not isinstance(config, dict):
        return "a finished study (its config.json)"
    if "experiment" in config:
        return f"the finished experiment {config['experiment']!r}"
    if "merged_from" in config:
        return "a finished merge of studies"
    return "a finished oslr run study"


def refuse_finished(folder: str | Path, flag: str = "--out") -> None:
    """FolderRefused, in one line, when `folder` holds a finished study or experiment."""
    if is_finished(folder):
        raise FolderRefused(f"{flag} {folder} already holds {describe(folder)}; it is never "
                            f"overwritten: give another {flag} (a new or an unfinished "
                            "folder).")


@contextlib.contextmanager
def claim(folder: str | Path, flag: str = "--out") -> Iterator[atomic.FolderLock]:
    """Hold `folder`'s lock (created if needed) for the block, having checked under the lock
    that it holds no finished study: a second writer waits for nothing and decides on what
    the first left, never on what it saw before the first finished."""
    with atomic.FolderLock(folder, flag) as lock:
        refuse_finished(folder, flag)
        yield lock


def sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes, read in blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def table_rows(path: Path) -> int:
    """Rows of a CSV or Parquet table (Parquet from its footer, without reading the data)."""
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        return pq.ParquetFile(path).metadata.num_rows
    import pandas as pd

    return len(pd.read_csv(path))


def entry(path: Path, rows: int | None = None) -> dict:
    """The manifest's record of one file: bytes, sha256 and, for a table, rows (`rows` when
    the writer knows them, else counted from the file)."""
    record = {"bytes": path.stat().st_size, "sha256": sha256(path)}
    if path.suffix in TABLE_SUFFIXES:
        record["rows"] = table_rows(path) if rows is None else int(rows)
    return record


def result_files(folder: Path) -> list[str]:
    """The result files of a folder whose study is being finished: every plain file at its top
    level but the lock, config.json, the manifest and hidden files (temporaries)."""
    return sorted(f.name for f in folder.iterdir()
                  if f.is_file() and not f.name.startswith(".")
                  and f.name not in (CONFIG, MANIFEST))


#: config.json's record of the manifest's SHA-256 and of its own (`finish`, `unseal`)
SEAL = "sealed"


def _config_digest(config: dict) -> str:
    """The SHA-256 of a study's settings and of the manifest's digest its seal records, as
    canonical JSON (all of config.json but the digest itself)."""
    rest = {k: v for k, v in config.items() if k != SEAL}
    seal = config.get(SEAL)
    manifest = seal.get("manifest_sha256") if isinstance(seal, dict) else None
    return hashlib.sha256(json.dumps([rest, manifest], sort_keys=True).encode()).hexdigest()


def unseal(folder: Path, config: dict) -> dict:
    """config.json's `config` without its seal, once checked: LoadError in one line where
    config.json changed since it was written, or the manifest it records is missing or another.
    A config without a seal (a folder of an older oslr) is returned as it is."""
    if SEAL not in config:
        return config
    seal, path = config[SEAL], folder / CONFIG
    if not isinstance(seal, dict) or _config_digest(config) != seal.get("config_sha256"):
        raise LoadError(f"{path} does not match its own SHA-256 (its {SEAL!r} record): changed "
                        "since the study wrote it; copy the folder again.")
    manifest = folder / MANIFEST
    if not manifest.is_file():
        raise LoadError(f"{manifest} is missing (config.json records it): the folder is "
                        "incomplete; copy it again.")
    if sha256(manifest) != seal.get("manifest_sha256"):
        raise LoadError(f"{manifest} does not match its SHA-256 in config.json: changed since "
                        "the study wrote it; copy the folder again.")
    return {k: v for k, v in config.items() if k != SEAL}


def finish(folder: str | Path, names: Iterable[str], config: dict,
           rows: dict[str, int] | None = None) -> None:
    """Mark `folder` finished: manifest.json for the files `names` (each already on disk,
    written crash-safely; `rows`: the tables' row counts where the writer knows them, so that
    a table is not read back to count them), then config.json, sealed with the manifest's
    SHA-256 and its own (`unseal`), then the folder flushed. A crash before config.json's
    rename leaves an unfinished folder; after it, a complete one."""
    folder = Path(folder)
    rows = rows or {}
    files = {name: entry(folder / name, rows.get(name)) for name in sorted(set(names))}
    manifest = {"format": MANIFEST_FORMAT, "files": files}
    atomic.write_json_atomic(folder / MANIFEST, manifest, indent=1, sort_keys=True)
    sealed = json.loads(json.dumps(config, default=str))  # as it reads back
    sealed[SEAL] = {"manifest_sha256": sha256(folder / MANIFEST)}
    sealed[SEAL]["config_sha256"] = _config_digest(sealed)
    atomic.write_json_atomic(folder / CONFIG, sealed, indent=1)
    atomic.fsync_dir(folder)


def read_manifest(folder: Path) -> dict[str, dict] | None:
    """name -> record of the folder's manifest; None for a folder of an older oslr (none)."""
    path = folder / MANIFEST
    if not path.exists():
        return None
    try:
        manifest = json.loads(path.read_text())
        files = manifest["files"]
        if manifest.get("format") != MANIFEST_FORMAT or not isinstance(files, dict):
            raise ValueError(f"format {manifest.get('format')!r}")
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise LoadError(f"{path} cannot be read ({type(err).__name__}: {err}): the folder's "
                        "record of its files is damaged; copy the folder again.") from None
    return files


def verify(folder: str | Path) -> dict[str, dict] | None:
    """Check every file the manifest lists (size, then SHA-256); LoadError in one line naming
    the first that differs. Returns the manifest's records (None for an older folder)."""
    folder = Path(folder)
    files = read_manifest(folder)
    for name, record in (files or {}).items():
        path = folder / name
        if not path.is_file():
            raise LoadError(f"{path} is missing (manifest.json lists it): the folder is "
                            "incomplete; copy it again.")
        size = path.stat().st_size
        if size != record.get("bytes"):
            raise LoadError(f"{path} has {size} bytes where manifest.json records "
                            f"{record.get('bytes')}: cut short or changed; copy it again.")
        if sha256(path) != record.get("sha256"):
            raise LoadError(f"{path} does not match its SHA-256 in manifest.json: changed "
                            "since the study wrote it; copy it again.")
    return files


def check_derived(path: str | Path, folder: str | Path) -> None:
    """Refuse to write a derived output (a figure redrawn from a finished study) over a file
    the study wrote: its config.json, manifest or a file the manifest lists."""
    path, folder = Path(path), Path(folder)
    if path.resolve().parent != folder.resolve():
        return
    listed = read_manifest(folder)
    # a folder of an older oslr (no manifest): every file there may be the study's
    own = ({CONFIG, MANIFEST} | set(listed)) if listed is not None else {
        f.name for f in folder.iterdir()}
    if path.name in own:
        raise FolderRefused(f"{path} is a file the study wrote; a figure drawn from it goes "
                            "beside it under another name (give another --out).")


__all__ = ["CONFIG", "MANIFEST", "FolderRefused", "LoadError", "check_derived", "claim",
           "describe", "finish", "is_finished", "read_manifest", "refuse_finished", "unseal",
           "result_files", "verify"]
