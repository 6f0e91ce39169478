"""A study's folder claimed for this very study, resumed or refused (oslr.study.resume)."""

import numpy as np
import pytest

from oslr import study as study_module


def test_check_same_study__resuming_only_when_chunks_are_saved(tmp_path):

    saved = tmp_path / study_module.CHECKPOINTS
    study = {"problem": "p", "runs": 2}
    assert study_module.check_same_study(saved, study) is False  # writes study.json
    (saved / "0").mkdir()  # a learner's folder whose checkpoints were deleted
    assert study_module.check_same_study(saved, study) is False
    (saved / "0" / "checkpoint-000000000010.npz").write_bytes(b"")
    assert study_module.check_same_study(saved, study) is True


def test_writer_checks_the_folder__process_0_alone_reads_it_and_every_process_learns_its_verdict(
        tmp_path, monkeypatch):
    import jax
    import numpy as np
    from jax.experimental import multihost_utils


    saved = tmp_path / study_module.CHECKPOINTS
    saved.mkdir()
    (saved / "study.json.tmp-1").write_text("{")  # process 0 half-way through writing it
    study = {"problem": "p", "runs": 2}
    # another process does not look: nothing refused, nothing written
    assert study_module.writer_checks_the_folder(saved, study, 1) is False
    assert sorted(p.name for p in saved.iterdir()) == ["study.json.tmp-1"]
    with pytest.raises(study_module.UsageError, match="chunks of an unknown study"):
        study_module.writer_checks_the_folder(saved, study, 0)  # the writer does, and refuses

    # several processes: each learns process 0's verdict from one gather of a flag
    gathered = []

    def allgather(flag):
        gathered.append(int(flag))
        return np.array([verdict0, 1], np.int32)

    monkeypatch.setattr(jax, "process_count", lambda: 2)
    monkeypatch.setattr(multihost_utils, "process_allgather", allgather)
    verdict0 = 0
    with pytest.raises(study_module.UsageError,
                       match=r"process 0 refused --out .*; this process stops"):
        study_module.writer_checks_the_folder(saved, study, 1, "--out")
    with pytest.raises(study_module.UsageError, match="chunks of an unknown study"):
        study_module.writer_checks_the_folder(saved, study, 0)
    verdict0 = 1
    assert study_module.writer_checks_the_folder(saved, study, 1) is False
    assert gathered == [1, 0, 1]  # process 1 agrees, process 0 refused, process 1 agrees
    (saved / "study.json.tmp-1").unlink()
    assert study_module.writer_checks_the_folder(saved, study, 0) is False  # the writer writes it
    assert (saved / "study.json").exists() and gathered[-1] == 1
