"""Training and calibrating models from your own corpora (`plexity train`, `plexity calibrate`,
`plexity models import --calibrate`, scripts/default_model/build.py):

- `corpora`: corpus readers (BNC XML, CORD-19 metadata.csv, plain text) and the skip log;
- `kenlm_tools`: training text, lmplz and build_binary, ARPA counts, model metadata;
- `thresholds`: the held-out split, the percentile rule for default thresholds, calibration,
  writing a threshold into model.json;
- `trainer`: `ModelTrainer`, which runs the steps above for one model.

The names below are this package's public API (importable from ``plexity_plugins.training``).
"""

from .corpora import CORPORA, BncReader, Cord19Reader, CorpusReader, Document, SkipLog, TextReader, make_reader
from ..errors import CorpusError, TrainError
from .thresholds import Calibration, calibrate, metadata_path, read_sample_lines, write_threshold
from .trainer import DROPPED_FILE, ModelTrainer, TrainResult, check_model_name, paper_config

__all__ = ["CORPORA", "DROPPED_FILE", "BncReader", "Calibration", "Cord19Reader", "CorpusError", "CorpusReader",
           "Document", "ModelTrainer", "SkipLog", "TextReader", "TrainError", "TrainResult", "calibrate",
           "check_model_name", "make_reader", "metadata_path", "paper_config", "read_sample_lines", "write_threshold"]
