"""A study's folder: made and tried before any work (`check_out_dir`), claimed for this very
study under its lock (`check_same_study`: resume its saved chunks, refuse another study's), and
found again when a study run without a folder is run again (`unfinished_default`)."""

from __future__ import annotations

import os
from pathlib import Path

from oslr.study.settings import UsageError, declared, identity

#: the folder under the study's folder where its chunks are kept until it finishes
CHECKPOINTS = ".checkpoints"


def check_out_dir(out: Path, label: str = "out") -> None:
    """Refuse an output folder where the results could not be written, before any work: create
    it (and its parents) and a file in it, then remove the file. A permission check alone
    passes on folders where no file can be created (a read-only or virtual file system)."""
    for parent in [out, *out.parents]:
        if parent.exists():
            if not parent.is_dir():
                raise UsageError(f"{label} {out}: {parent} exists and is not a folder.")
            break
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / f".oslr-write-test-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as err:
        raise UsageError(f"{label} {out}: cannot write there ({err.strerror or err}); give a "
                         "folder you can write to.") from None


#: where `oslr run` without --out puts its folders (run-<time> each)
DEFAULT_OUT = Path("oslr-results")


def unfinished_default(study: dict) -> Path | None:
    """The folder under DEFAULT_OUT holding the unfinished chunks of this very study (a run
    without --out that was stopped), so that the same command resumes it; None if there is
    none."""
    from oslr import atomic

    mine = identity(study)
    for file in sorted(DEFAULT_OUT.glob(f"run-*/{CHECKPOINTS}/study.json"), reverse=True):
        folder = file.parent.parent
        if (folder / "config.json").exists():
            continue
        try:
            theirs = atomic.read_json(file, "study settings", "")
        except ValueError:
            continue
        if {k: v for k, v in theirs.items() if k not in _may_change()} == mine:
            return folder
    return None


def check_same_study(saved: Path, study: dict, label: str = "out") -> bool:
    """The study's settings are kept in `saved/study.json` (written when its first chunk is
    about to run); a folder of another study is refused naming each setting that differs.
    Returns True when `saved` holds saved chunks (checkpoint files) of this study to resume
    from."""
    from oslr import atomic, folder

    folder.refuse_finished(saved.parent)  # under the lock: decided on what is there now
    mine = identity(study)
    file = saved / "study.json"
    if saved.exists() and not saved.is_dir():
        raise UsageError(f"{label} {saved.parent}: {saved} is not a folder (oslr keeps an "
                         "unfinished study's chunks there); move it away and run the same "
                         "command again.")
    if saved.is_dir():  # a temporary of study.json left by a killed writer is no chunk
        atomic.remove_stale_temporaries(file)
    if file.exists():
        theirs = atomic.read_json(file, "study settings", f"delete {saved} to start afresh")
        theirs = {k: v for k, v in theirs.items() if k not in _may_change()}
        diff = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
        if diff:
            shown = "; ".join(f"{k}: saved {theirs.get(k)!r}, now {mine.get(k)!r}"
                              for k in diff[:4])
            raise UsageError(f"{label} {saved.parent} holds the unfinished chunks of another "
                             f"study ({shown}); give another {label}, or delete {saved} to drop "
                             "them.")
        return next(saved.rglob("checkpoint-*.npz"), None) is not None
    if saved.exists() and any(p.name != atomic.FolderLock.NAME for p in saved.iterdir()):
        raise UsageError(f"{label} {saved.parent}: {saved} holds chunks of an unknown study (no "
                         f"study.json: an older oslr?); delete {saved} to start afresh.")
    saved.mkdir(parents=True, exist_ok=True)
    atomic.write_json_atomic(file, mine, indent=1, sort_keys=True)
    return False


def writer_checks_the_folder(saved: Path, study: dict, rank: int, label: str = "out") -> bool:
    """`check_same_study` by process 0 alone, the one writer of --out (another process looking
    while process 0 writes study.json would see a half-made folder, refuse it and leave the
    study: the processes' collectives then disagree). Under --distributed every process then
    learns whether process 0 refused, and refuses too. Returns True when resuming."""
    refusal, resuming = None, False
    if rank == 0:
        try:
            resuming = check_same_study(saved, study, label)
        except UsageError as err:
            refusal = err
    import jax

    if jax.process_count() > 1:
        import numpy as np
        from jax.experimental import multihost_utils

        ok = multihost_utils.process_allgather(np.int32(refusal is None))
        if rank != 0 and not ok[0]:
            refusal = UsageError(f"process 0 refused {label} {saved.parent} (its message says "
                                 "why); this process stops too.")
    if refusal is not None:
        raise refusal
    return resuming


def _may_change() -> set[str]:
    """The settings that may change between a killed study and its resumption."""
    return {n for n, s in declared().items() if s.resumable}
