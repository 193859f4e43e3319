"""Model registry: resolve a model name or path to a KenLM file plus its metadata.

A model is a directory holding ``model.bin`` (KenLM binary, or ``model.arpa``) and
``model.json`` (its metadata, see `ModelInfo`).  Names are looked up in order:

1. the embedded default model shipped inside this package (``en-default``, alias
   ``default``);
2. ``$PLEXITY_MODEL_DIR/<name>/`` if that variable is set, else the user's cache
   directory (``~/.cache/plexity_plugins/models/<name>/`` on Linux).

Anything else is taken as a path: a model directory, or a KenLM file (``.bin``,
``.binary``, ``.klm``, ``.arpa``, ``.arpa.gz``) with its metadata beside it in
``<file>.json``.  A bare KenLM file without metadata is refused: nothing says how its
training text was tokenised, and with the wrong tokenizer every token is ``<unk>``.
``plexity models import`` (`plexity_plugins.training.model_import`) turns one into a model.

The metadata names the model's tokenizer (``tokenizer_version``: ``plexity-tok-1``, or
``ccnet`` with its SentencePiece file in ``sp_model``; see `plexity_plugins.text.model_tokenizers`).
"""

from __future__ import annotations

import errno
import json
import logging
import os
import re
import shlex
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from ..errors import ModelError, NoHomeFolder
from ..runtime.environment import misspelt_note
from ..runtime.paths import user_cache_dir
from ..text.plexity_tokenizer import TOKENIZER_VERSION
from .from_pyplexity import STORABLE_MAGIC, is_pyplexity_model, pyplexity_model_message

logger = logging.getLogger(__name__)

DEFAULT_MODEL = "en-default"
ALIASES = {"default": DEFAULT_MODEL}  # names every front end takes for a model
_ALIASES = ALIASES
EMBEDDED_DIR = Path(__file__).parent.parent / "data"
MODEL_FILES = ("model.bin", "model.arpa", "model.arpa.gz")
KENLM_SUFFIXES = (".bin", ".binary", ".klm", ".arpa", ".arpa.gz", ".lm")

ORDERS = range(2, 7)  # the orders `plexity train` builds: KenLM is compiled for up to 6 (KENLM_MAX_ORDER)

# The paper's models (Fernández-Pichel et al., 2023): known names that users build
# from their own copies of the corpora.
PAPER_MODELS = {
    "bigrams-bnc": {"order": 2, "corpus": "bnc"},
    "trigrams-bnc": {"order": 3, "corpus": "bnc"},
    "bigrams-cord19": {"order": 2, "corpus": "cord19"},
    "trigrams-cord19": {"order": 3, "corpus": "cord19"},
}


@dataclass
class ModelInfo:
    """Metadata stored with every model in ``model.json``."""

    name: str
    order: int | None = None
    corpus: str = "unknown"
    tokens: int | None = None
    vocab_size: int | None = None
    tokenizer_version: str | None = None
    threshold: float | None = None  # for raw text (methods "region", "sentences")
    threshold_extracted: float | None = None  # for extractor output (method "trim")
    licence: str = "unknown"
    attribution: str = ""
    language: str = "en"
    description: str = ""
    sp_model: str | None = None  # the SentencePiece model of a "ccnet" tokenizer, relative to the model's directory
    document_threshold: float | None = None  # default max document perplexity (PerplexityDocumentFilter)
    threshold_procedure: str = ""
    build: dict[str, Any] = field(default_factory=dict)
    sha256: str | None = None  # of the KenLM file, written by `save`; checked when the model is opened
    path: str = ""  # the KenLM file; filled in when resolved, not stored

    @classmethod
    def from_dict(cls, data: dict[str, Any], path: Path) -> "ModelInfo":
        known = {f.name for f in fields(cls)}
        info = cls(**{k: v for k, v in data.items() if k in known and k != "path"})
        info.path = str(path)
        return info

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("path")
        return data

    def save(self, json_path: Path) -> None:
        """Write the card beside its KenLM file, with that file's SHA-256 (`check_intact` compares it when the model
        is opened: a file damaged since it was trained or imported segfaulted KenLM or scored wrongly, unsaid)."""
        model_file = _model_file_in(Path(json_path).parent)
        if model_file is not None:
            self.sha256 = file_sha256(model_file)
        json_path.write_text(json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n")


def model_dir() -> Path:
    """Where trained models are installed: ``$PLEXITY_MODEL_DIR`` or the user cache dir."""
    env = os.environ.get("PLEXITY_MODEL_DIR")
    if env:
        path = Path(env).expanduser()
        if path.exists() and not path.is_dir():  # (else "[Errno 20] Not a directory: 'FILE/NAME'", the knob unsaid)
            raise ModelError(f"PLEXITY_MODEL_DIR is {env}, which is not a folder: set it to the folder of your "
                             f"models, or unset it (then {user_cache_dir() / 'models'})")
        return path
    return user_cache_dir() / "models"


def model_argument(directory: str | Path, name: str) -> str:
    """What --model takes for the model installed in `directory`: its name where the name finds it
    (`$PLEXITY_MODEL_DIR`), else the folder (installed with --output-dir elsewhere)."""
    try:
        found = (model_dir() / name).resolve() == Path(directory).resolve()
    except (ModelError, NoHomeFolder):  # ($PLEXITY_MODEL_DIR is a file, or no home folder: no name finds it)
        found = False
    return name if found else str(directory)


def install_dir(output_dir: str | Path | None = None) -> Path:
    """Where `plexity train` and `plexity models import` install a model: `--output-dir`, else `model_dir()`."""
    if not output_dir:
        return model_dir()
    path = Path(output_dir).expanduser()
    if path.exists() and not path.is_dir():  # (else "[Errno 17] File exists", or 20, naming no option)
        raise ModelError(f"--output-dir {output_dir} is a file, not a folder: give the folder to install the model "
                         f"in (it gets a folder of the model's name)")
    return path


def writable_install_dir(output_dir: str | Path | None = None) -> Path:
    """`install_dir`, made if it is not there, or a `ModelError` naming it and the ways to install elsewhere when this
    user cannot make it or write in it: a user whose HOME is not theirs to write (cron's or a service's, HOME unset
    or read-only) or a shared model folder owned by someone else met "cannot write /nonexistent: permission denied:
    choose an output this user may write to", naming neither the model directory nor --output-dir or
    PLEXITY_MODEL_DIR."""
    import errno

    folder = install_dir(output_dir)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        refused = None if os.access(folder, os.W_OK | os.X_OK) else os.strerror(errno.EACCES).lower()
    except OSError as exc:
        if exc.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
            raise
        refused = (exc.strerror or os.strerror(exc.errno)).lower()
    if refused is None:
        return folder
    if output_dir:
        where = f"--output-dir {output_dir}"
    elif os.environ.get("PLEXITY_MODEL_DIR"):
        where = f"the model directory {folder} (PLEXITY_MODEL_DIR)"
    else:
        under = ("XDG_CACHE_HOME" if os.environ.get("XDG_CACHE_HOME")
                 else f"HOME {os.path.expanduser('~')}")  # (platformdirs' cache dir: XDG's, else under HOME)
        where = f"the model directory {folder} (the user cache dir, under {under})"
    raise ModelError(f"cannot install a model in {where}: {refused} for this user: give --output-dir DIR, or set "
                     f"PLEXITY_MODEL_DIR to a folder this user may write to (then --model NAME finds the model there)")


def _model_file_in(directory: Path) -> Path | None:
    for name in MODEL_FILES:
        if (directory / name).is_file():
            return directory / name
    return None


MAX_METADATA_BYTES = 16 << 20  # a model.json is a few kB (the embedded model's: 3 kB)

_PERPLEXITY_KEYS = ("threshold", "threshold_extracted", "document_threshold")
_COUNT_KEYS = ("order", "tokens", "vocab_size")
_TEXT_KEYS = ("licence", "attribution", "description", "threshold_procedure")
_NAME_KEYS = ("tokenizer_version", "language", "sp_model")  # a str, or null


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:  # (json.loads keeps the last silently: a card edited by hand had two thresholds)
            raise ValueError(f"the key {key!r} is given twice")
        seen[key] = value
    return seen


def _card_problem(data: dict[str, Any]) -> str | None:
    """What is wrong with a model.json's values, or None.  (Each was taken as it was: a threshold "500" or [500]
    ended `plexity score` and `clean` in a TypeError traceback, true was a threshold of 1.0, an order "3" was
    "has order 3 but its metadata says 3", a language 5 or a build [] a traceback in the language gate or in
    `plexity models`, a misspelt "treshold" was ignored and the model's default used in its place.)"""
    import difflib
    import math
    import numbers

    def number(value) -> bool:
        return isinstance(value, numbers.Real) and not isinstance(value, bool)

    if not isinstance(data.get("name"), str) or not data["name"].strip():
        return f"'name' is {data.get('name')!r}, not a name (a non-empty string)"
    for key in _PERPLEXITY_KEYS:
        value = data.get(key)
        if value is not None and not (number(value) and math.isfinite(value) and value > 0):
            return f"{key!r} is {value!r}: a positive perplexity (a number, not in quotes), or null for none"
    for key in _COUNT_KEYS:
        value = data.get(key)
        whole = isinstance(value, int) and not isinstance(value, bool)
        if value is not None and not (whole and value >= (key == "order")):
            least = "1" if key == "order" else "0"
            return f"{key!r} is {value!r}: a whole number of {least} or more (not in quotes), or null"
    for key in _NAME_KEYS:
        value = data.get(key)
        if value is not None and not isinstance(value, str):
            return f"{key!r} is {value!r}: a string, or null"
    for key in _TEXT_KEYS:
        value = data.get(key)
        if value is not None and not isinstance(value, str):
            return f"{key!r} is {value!r}: a string"
    if data.get("sha256") is not None and not (isinstance(data["sha256"], str)
                                               and re.fullmatch(r"[0-9a-f]{64}", data["sha256"])):
        return f"'sha256' is {data['sha256']!r}: the KenLM file's SHA-256 (64 hex digits), or null"
    if data.get("build") is not None and not isinstance(data["build"], dict):
        return f"'build' is {data['build']!r}: an object"
    known = [f.name for f in fields(ModelInfo) if f.name != "path"]
    for key in data:
        close = difflib.get_close_matches(key, known, n=1, cutoff=0.8) if key not in known else []
        if close:  # (a key of a newer version, no near miss of a known one, is left alone)
            return f"it has {key!r}, which is no key of a model's metadata: did you mean {close[0]!r}?"
    return None


def _load_metadata(json_path: Path, model_path: Path) -> ModelInfo:
    try:
        size = json_path.stat().st_size
        if size > MAX_METADATA_BYTES:  # (read whole into memory, as every listing of the models reads each one)
            raise ModelError(f"model metadata {json_path} is {size:,} bytes, not a model's metadata (a few kB): "
                             f"it is read whole by every command that lists or loads models")
        data = json.loads(json_path.read_text(encoding="utf-8"), object_pairs_hook=_unique_keys)
    except (OSError, ValueError) as exc:
        raise ModelError(f"cannot read model metadata {json_path}: {exc}") from exc
    if not isinstance(data, dict) or "name" not in data:
        raise ModelError(f"model metadata {json_path} is not a JSON object with a 'name'")
    problem = _card_problem(data)
    if problem:
        raise ModelError(f"model metadata {json_path}: {problem}")
    data = {**data, **{key: "" for key in _TEXT_KEYS if data.get(key, "") is None},
            "build": data.get("build") or {}}
    return ModelInfo.from_dict(data, model_path)


def _from_directory(directory: Path) -> ModelInfo:
    model_path = _model_file_in(directory)
    if model_path is None:
        for name in MODEL_FILES:  # (`plexity models import` links the KenLM file: it may have moved since)
            link = directory / name
            if link.is_symlink():
                raise ModelError(f"{link} links to {os.readlink(link)}, which is not there any more (a model "
                                 f"imported without --copy links its KenLM file): put the file back, or import "
                                 f"it again with `plexity models import {shlex.quote(directory.name)} --kenlm FILE ... "
                                 f"--force`")
        raise ModelError(f"{directory} holds no model file (expected one of {', '.join(MODEL_FILES)})")
    json_path = directory / "model.json"
    if not json_path.is_file():  # (its KenLM file as one given alone: not a model, or how to import it)
        return _from_file(model_path)
    return _load_metadata(json_path, model_path)


KENLM_BINARY_MAGIC = b"mmap lm "


def kenlm_file_name(path: Path) -> str | None:
    """The name `resolve` knows a KenLM file by, from its first bytes: model.bin for a KenLM
    binary, model.arpa(.gz) for ARPA text; None for anything else."""
    import gzip

    with open(path, "rb") as f:
        head = f.read(64)
    if head.startswith(KENLM_BINARY_MAGIC):
        return "model.bin"
    if head.startswith(b"\x1f\x8b"):
        try:
            with gzip.open(path, "rb") as f:
                head = f.read(64)
        except (OSError, EOFError):
            return None
        return "model.arpa.gz" if head.lstrip().startswith(b"\\data\\") else None
    return "model.arpa" if head.lstrip().startswith(b"\\data\\") else None


def refuse_pyplexity_model(path: Path) -> None:
    """Raise the ModelError for a file that is no KenLM file but one of pyplexity's models (a script or command
    ported from pyplexity gives its `--model PATH`); return for any other."""
    with open(path, "rb") as f:
        head = f.read(len(STORABLE_MAGIC))
    if is_pyplexity_model(head):
        raise ModelError(pyplexity_model_message(path))


def _from_file(path: Path) -> ModelInfo:
    sidecar = Path(str(path) + ".json")
    if sidecar.is_file():
        return _load_metadata(sidecar, path)
    if (path.parent / "model.json").is_file() and path.name in MODEL_FILES:
        return _load_metadata(path.parent / "model.json", path)
    if kenlm_file_name(path) is None:
        refuse_pyplexity_model(path)
        raise ModelError(f"{path} is not a model: neither a KenLM binary nor an ARPA file (a model is a name "
                         f"`plexity models` lists, a model directory, or a KenLM file with its metadata)")
    raise ModelError(bare_kenlm_message(path))


def bare_kenlm_message(path: Path) -> str:
    return (
        f"{path} is a bare KenLM file: nothing says how its training text was tokenised, and scored "
        f"with the wrong tokenizer nearly every token is <unk> and its perplexities are meaningless. "
        f"Import it once, declaring its tokenizer: `plexity models import NAME --kenlm {shlex.quote(str(path))} "
        f"--tokenizer ccnet --sp-model xx.sp.model --language xx` for a CCNet / edugp model (its "
        f".sp.model lies beside the .arpa.bin), or `--tokenizer {TOKENIZER_VERSION}` for a model "
        f"built from this package's tokenised text; then use --model NAME."
    )


def _missing_name_error(name: str) -> ModelError:
    if name in PAPER_MODELS:
        from ..runtime.extras import kenlm_tools_install_command

        spec = PAPER_MODELS[name]
        corpus = {"bnc": "the British National Corpus (XML edition, written part)",
                  "cord19": "the CORD-19 metadata.csv (abstracts)"}[spec["corpus"]]
        return ModelError(
            f"model '{name}' is not installed in {model_dir()}. It is the paper's order-"
            f"{spec['order']} model of {corpus}, which cannot be shipped: build it from your own "
            f"copy with `plexity train --corpus {spec['corpus']} --order {spec['order']} "
            f"--name {name} PATH` (needs KenLM's lmplz: `{kenlm_tools_install_command()}` installs it)."
        )
    available = ", ".join(info.name for info in list_models()) or "none"
    return ModelError(
        f"unknown model '{name}': not a file or directory, and not installed in {model_dir()} "
        f"(available: {available}; set PLEXITY_MODEL_DIR to look elsewhere{misspelt_note('PLEXITY_MODEL_DIR')})"
    )


def _named_by_folder(directory: Path) -> ModelInfo:
    """The model of a folder that a name finds (embedded or in `model_dir()`), named by that folder: the name
    `--model` takes for it.  (A model folder copied or renamed, `cp -r news3 news3-95` to calibrate a variant,
    keeps the name its model.json was written with: it was listed as a second `news3`, its scores and a run's
    stats and records said `news3`, and `plexity serve` offered `news3` twice, scoring both with one of them.)"""
    info = _from_directory(directory)
    info.name = directory.name
    return info


def resolve(model: str | os.PathLike | None = None) -> ModelInfo:
    """The metadata (with `.path` set) of a model given by name, path or None (default)."""
    if model is None:
        model = DEFAULT_MODEL
    if not isinstance(model, (str, os.PathLike)):  # (os.fspath's TypeError did not say which argument)
        raise ModelError(f"model is {model!r}: a model name (`plexity models` lists them) or a path")
    name = _ALIASES.get(str(model), str(model))
    embedded = EMBEDDED_DIR / name
    if os.sep not in name and embedded.is_dir():
        return _named_by_folder(embedded)
    installed = None
    if os.sep not in name:
        try:
            installed = model_dir() / name
        except NoHomeFolder:  # (a path still finds its model: `plexity train --output-dir` sets its threshold so)
            if not Path(name).expanduser().exists():
                raise
    if installed is not None and installed.is_dir():
        return _named_by_folder(installed)
    if installed is not None and installed.is_symlink():  # (a link to no folder: "unknown model" said nothing)
        raise ModelError(_broken_link(installed))
    # Absolute from here on, as datatrove's DataFolder makes a local path: a step pickled to a Ray or
    # Slurm worker started in another folder still finds the model the driver's folder meant.
    given = Path(model).expanduser()
    path = given.absolute()
    if path.is_dir():
        return _from_directory(path)
    if path.is_file() and path.name == "model.json":  # (a model's metadata names its model: its folder)
        return _from_directory(path.parent)
    if path.is_file():
        return _from_file(path)
    if os.sep in name or name.endswith(KENLM_SUFFIXES):
        raise ModelError(f"model file {given} does not exist")
    raise _missing_name_error(name)


def list_models() -> list[ModelInfo]:
    """Every model that a name resolves to: embedded first, then installed ones."""
    found: list[ModelInfo] = []
    try:
        installed = model_dir()
    except NoHomeFolder:  # (no home folder, no PLEXITY_MODEL_DIR: nothing can be installed, the embedded ones are)
        installed = None
    for base in (EMBEDDED_DIR, installed):
        if base is None:
            continue
        if not base.is_dir():
            continue
        # (a hidden folder is none: `plexity train`'s .NAME.partial-* and .NAME.work-*, which a killed train leaves
        # until the next train of that name, were "skipping ...: holds no model file" on every listing of the models,
        # `plexity models`, the unknown-model error, each of `plexity serve`'s /api/models requests)
        # (a link leading nowhere, a loop or its target gone, is said: a name that should be listed is not)
        for directory in sorted(p for p in base.iterdir() if (p.is_dir() or p.is_symlink() and not p.exists())
                                and not p.name.startswith(".")):
            try:
                if not directory.is_dir():
                    raise ModelError(_broken_link(directory))
                if base != EMBEDDED_DIR and (directory.name in _ALIASES or (EMBEDDED_DIR / directory.name).is_dir()):
                    # (listed as a second en-default, or as "default", while --model NAME gives the embedded model)
                    meant = _ALIASES.get(directory.name, directory.name)
                    raise ModelError(f"'{directory.name}' names the embedded model ({meant}), which --model "
                                     f"{directory.name} always gives: rename the folder to use this one")
                found.append(_named_by_folder(directory))
            except ModelError as exc:
                logger.warning("skipping %s: %s", directory, exc)
    return found


def _broken_link(link: Path) -> str:
    """What a symbolic link in the model folder that leads to no folder is (a loop, its target gone, a file)."""
    try:
        target = os.readlink(link)
    except OSError:
        target = "?"
    try:
        link.stat()
    except OSError as exc:
        why = "a loop of links" if exc.errno == errno.ELOOP else "its target is not there"
    else:
        why = "a file, not a model's folder"
    return f"{link} is a symbolic link to {target}, which leads to no model folder ({why})"


def sp_model_path(info: ModelInfo) -> Path | None:
    """The SentencePiece file a model declares (relative to its metadata's directory)."""
    if not info.sp_model:
        return None
    path = Path(info.sp_model).expanduser()
    return path if path.is_absolute() else Path(info.path).parent / path


def get_tokenizer(info: ModelInfo):
    """The tokenizer `info` declares (`plexity_plugins.text.model_tokenizers`), checked."""
    from ..text.model_tokenizers import PLEXITY, SENTENCEPIECE_TOKENIZERS, tokenizer_for
    from ..errors import TokenizerError

    # Another plexity-tok version reaches here only through allow_tokenizer_mismatch (`check_tokenizer`).
    name = info.tokenizer_version if info.tokenizer_version in SENTENCEPIECE_TOKENIZERS else PLEXITY
    try:
        return tokenizer_for(name, sp_model_path(info))
    except TokenizerError as exc:
        raise ModelError(f"model '{info.name}' ({info.path}): {exc}") from exc


def check_tokenizer(info: ModelInfo, allow_mismatch: bool = False) -> None:
    """Refuse a model whose training text was tokenised by another tokenizer version."""
    from ..text.model_tokenizers import SENTENCEPIECE_TOKENIZERS

    if info.tokenizer_version in (None, TOKENIZER_VERSION, *SENTENCEPIECE_TOKENIZERS):
        return
    message = (
        f"model '{info.name}' ({info.path}) was built with tokenizer {info.tokenizer_version!r}, "
        f"but this plexity_plugins tokenises with {TOKENIZER_VERSION!r}: its perplexities would "
        f"be meaningless. Rebuild the model with this version (plexity train), or pass "
        f"allow_tokenizer_mismatch=True to use it anyway."
    )
    if not allow_mismatch:
        raise ModelError(message)
    logger.warning(message)


def load_kenlm(info: ModelInfo):
    """Open the KenLM model, memory-mapped so that worker processes share its pages."""
    try:
        import kenlm
    except ImportError as exc:  # ("pip install kenlm", the generic hint, fails to compile on Python 3.13+)
        from ..errors import InstallationError
        from ..runtime.extras import kenlm_module_install_command

        raise InstallationError(f"the kenlm module (a requirement of plexity_plugins) cannot be imported ({exc}), "
                                f"and {info.path} is read with it: {kenlm_module_install_command()} installs it "
                                f"(on Python 3.13 and later `pip install kenlm` does not compile: its sdist's C++ "
                                f"predates 3.13)", exc) from exc

    path = Path(info.path)
    config = kenlm.Config()
    # mmap the binary (shared page cache across processes); ARPA has to be parsed into RAM.
    config.load_method = kenlm.LoadMethod.POPULATE_OR_LAZY
    config.show_progress = False
    # (its "Loading the LM will be faster if you build a binary file." on stderr, also before the error of a model.bin
    # cut short, which it then reads as ARPA text; `load_native` says what to do of a gzipped ARPA file)
    config.arpa_complain = kenlm.ARPALoadComplain.NONE
    try:
        lm = kenlm.Model(str(path), config)
    except Exception as exc:  # kenlm raises OSError/RuntimeError subclasses with C++ messages
        raise ModelError(f"cannot load KenLM model {path} (corrupt or not a KenLM file?): {kenlm_reason(exc, path)}") \
            from exc
    _check_order(info, lm.order)
    check_intact(info)  # (after KenLM's own checks of its header, which say what a file cut short lacks)
    return lm


# KenLM's exceptions say where in its source they were thrown, and the check that failed, before what is wrong:
# "Cannot read model 'P' (lm/binary_format.cc:160 in void* lm::ngram::BinaryFormat::LoadBinary(std::size_t) threw
# FormatLoadException because `file_size != util::kBadSize && file_size < total_map'. Binary file has size 2000 but
# the headers say it should be at least 3096)".
_KENLM_WHERE = re.compile(r"(?:[\w/.]+/)?\w+\.(?:cc|hh|cpp|h):\d+ in .*? threw [\w:]+(?: because `.*?')?\.\s*")


def kenlm_reason(exc: BaseException, path: str | os.PathLike) -> str:
    """What KenLM's exception says is wrong with the file at `path`, without its source location (one line)."""
    detail = " ".join(str(exc).split())
    shown = detail.removeprefix(f"Cannot read model '{path}' (")
    if shown != detail:
        shown = shown.removesuffix(")")
    shown = _KENLM_WHERE.sub("", shown, count=1)
    return shown[:300]


def load_native(info: ModelInfo):
    """The model opened by the compiled path (`plexity_plugins.runtime.native`), memory-mapped like
    `load_kenlm`; False (with a warning) if that path cannot open it, e.g. a compressed
    ARPA file, in which case the scorer uses the kenlm module instead."""
    from ..runtime import native

    try:
        model = native.load_model(str(info.path))
    except OSError as exc:
        if str(info.path).endswith(".gz"):  # (KenLM's own message, cut at 300 characters, named its source file)
            logger.warning("the compiled scorer reads no gzipped ARPA file: %s is scored with the kenlm module, which "
                           "parses the whole file at every start; KenLM's build_binary makes a binary model both "
                           "read at once (build_binary model.arpa.gz model.bin, then import model.bin)", info.path)
            return False
        load_kenlm(info)  # (a file neither path reads, damaged or not KenLM's, is one error: it was said twice, first
        # as "compiled scorer cannot open ...: using the kenlm module", a fallback that then failed the same way)
        logger.warning("compiled scorer cannot open %s (%s): using the kenlm module", info.path,
                       kenlm_reason(exc, info.path))
        return False
    _check_order(info, model.order)
    check_intact(info)  # (after KenLM's own checks of its header, which say what a file cut short lacks)
    return model


def _check_order(info: ModelInfo, order: int) -> None:
    if info.order is not None and order != info.order:
        raise ModelError(f"model {info.path} has order {order} but its metadata says {info.order}")


_CHECKSUMS: dict[tuple, str] = {}  # (path, size, mtime) -> sha256, for this process


def file_sha256(path: str | os.PathLike) -> str:
    """SHA-256 of a file as hex, once per process and file version (~16 ms for the embedded model's 17 MB, ~1 s a
    GB)."""
    import hashlib

    path = Path(path)
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    if key not in _CHECKSUMS:
        digest = hashlib.sha256()
        with open(path, "rb") as f:
            while block := f.read(1 << 20):
                digest.update(block)
        _CHECKSUMS[key] = digest.hexdigest()
    return _CHECKSUMS[key]


def file_versions(info: ModelInfo) -> tuple:
    """(size, mtime in ns) of the model's files (the KenLM file, a CCNet model's SentencePiece file; None for one
    not there): a stat each, no byte read, for a pickled scorer to carry.  A cache keyed by a pickled step
    (datasets' `map`, hashed with dill) otherwise saw a model rebuilt in place under an unchanged card (lmplz over
    model.bin, a card without a checksum, an imported model's linked file) as the same, and returned the old
    model's results."""
    versions = []
    for path in (info.path, sp_model_path(info)):
        try:
            stat = os.stat(path) if path else None
        except OSError:
            stat = None
        versions.append(stat and (stat.st_size, stat.st_mtime_ns))
    return tuple(versions)


def check_intact(info: ModelInfo) -> None:
    """The KenLM file is the one its card was written with (its SHA-256), else a `ModelError` naming it.  A file
    damaged inside its tables (bits flipped on a disk, a copy gone wrong) opens as KenLM reads its header only: of six
    such copies of a model, one segfaulted the process at its first sentence and three scored without a word, wrong.
    A card written before the checksum was kept (no `sha256`) is not checked."""
    if not info.sha256:
        return
    found = file_sha256(info.path)
    if found != info.sha256:
        raise ModelError(f"model file {info.path} is not the file its model.json was written with (SHA-256 "
                         f"{found[:12]}..., the card says {info.sha256[:12]}...): it was damaged or replaced since; "
                         f"train or import the model again")


def model_checksum(info: ModelInfo) -> str:
    """SHA-256 of the model's files (the KenLM file, and a CCNet model's SentencePiece file), as
    hex: what a run records of its model (`plexity_plugins.datatrove.run_settings`), so that a
    model retrained under the same name is told apart.  Computed once per process and file
    version (~0.05 s for the embedded model's 17 MB, ~2 s a GB)."""
    import hashlib

    check_intact(info)  # (the same hash: a run's driver refuses a damaged file before any task opens it)
    sp = sp_model_path(info)
    if sp is None:
        return file_sha256(info.path)
    return hashlib.sha256((file_sha256(info.path) + file_sha256(sp)).encode()).hexdigest()
