"""A regret study, from Python (`Study`) as from `oslr run`, in rooms by job:

* `settings`: each setting declared once (type, default, check, doc, flag), the record
  config.json keeps and the identity a resumed study must match;
* `sources`: the TOML reader, `oslr run`'s flags, the two merged, the docs' table of keys;
* `checks`: each check, naming a value as the caller wrote it (Python, flag or TOML key);
* `prepare`: the problem and the learners built, every check before anything is traced;
* `resume`: the study's folder, its lock and its saved chunks;
* `until`: the runs played, once or in batches until separated, with one progress bar;
* `driver`: `Study` itself: prepare, play under the lock, write.

Importing it loads nothing heavy (the `oslr` command imports it before its signal handlers are
in place); JAX and the learners are imported when a study is prepared.
"""

from oslr.study.checks import (FLAGS, PYTHON, Names, check_compare, check_settings,
                               check_sizes, interval_of, naming)
from oslr.study.driver import PROGRESS_MODES, Played, Prepared, Study, finish
from oslr.study.prepare import prepare
from oslr.study.resume import (CHECKPOINTS, DEFAULT_OUT, check_out_dir, check_same_study,
                               unfinished_default, writer_checks_the_folder)
from oslr.study.settings import StudySettings, UsageError, declared, identity
from oslr.study.sources import key_table, load_config
from oslr.study.until import StudyProgress, look_line, run_looks

#: the default study's record: what `oslr run` without flags and `oslr.Study()` run
DEFAULT_STUDY = StudySettings().to_dict()

__all__ = ["CHECKPOINTS", "DEFAULT_OUT", "DEFAULT_STUDY", "FLAGS", "PROGRESS_MODES", "PYTHON",
           "Names", "Played", "Prepared", "Study", "StudyProgress", "StudySettings",
           "UsageError", "check_compare", "check_out_dir", "check_same_study", "check_settings",
           "check_sizes", "declared", "finish", "identity", "interval_of", "key_table",
           "load_config", "look_line", "naming", "prepare", "run_looks", "unfinished_default",
           "writer_checks_the_folder"]
