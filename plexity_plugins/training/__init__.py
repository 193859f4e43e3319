"""Training and calibrating models from your own corpora (`plexity train`, `plexity calibrate`,
`plexity models import --calibrate`, scripts/default_model/build.py):

- `corpora`: corpus readers (BNC XML, CORD-19 metadata.csv, plain text) and the skip log;
- `kenlm_tools`: training text, lmplz and build_binary, ARPA counts, model metadata;
- `thresholds`: the held-out split, the percentile rule for default thresholds, calibration,
  writing a threshold into model.json;
- `trainer`: `ModelTrainer`, which runs the steps above for one model.

The names below are this package's public API (importable from ``plexity_plugins.training``).
"""

from ..errors import CorpusError, TrainError
from ..runtime.lazy import lazy_names

# Imported on first use: `plexity train --help` and `plexity calibrate --help` need only the constants of
# `thresholds` and `kenlm_tools`, not the corpus readers with BlingFire and numpy.
__getattr__, __dir__ = lazy_names(__name__, {
    **dict.fromkeys(["CORPORA", "BncReader", "Cord19Reader", "CorpusReader", "Document", "SkipLog", "TextReader",
                     "make_reader"], ".corpora"),
    **dict.fromkeys(["Calibration", "calibrate", "metadata_path", "read_sample_lines", "write_threshold"],
                    ".thresholds"),
    **dict.fromkeys(["DROPPED_FILE", "ModelTrainer", "TrainResult", "check_model_name", "paper_config"], ".trainer")})

__all__ = ["CORPORA", "DROPPED_FILE", "BncReader", "Calibration", "Cord19Reader", "CorpusError", "CorpusReader",
           "Document", "ModelTrainer", "SkipLog", "TextReader", "TrainError", "TrainResult", "calibrate",
           "check_model_name", "make_reader", "metadata_path", "paper_config", "read_sample_lines", "write_threshold"]
