"""Building KenLM models: training text, lmplz, build_binary and the metadata file.

Shared by the embedded model's build script (scripts/default_model/build.py) and by
`plexity train`, so that every model is tokenised by the same code that scores with it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

from ..scoring.models import ModelInfo
from ..text.sentences import split_sentences
from ..text.plexity_tokenizer import TOKENIZER_VERSION, to_lm_lines
from ..errors import KenLMOutOfMemory, KenLMToolFailed, KenLMToolsMissing, TrainError
from ..runtime.cgroups import oom_kills, out_of_memory
from ..runtime.memory import address_space_limit, usable_memory
from ..runtime.extras import kenlm_tools_install_command
from ..runtime.paths import user_cache_dir
from ..runtime.lifetime import dying_with_this_process

logger = logging.getLogger(__name__)

def kenlm_bin_dir() -> Path:
    env = os.environ.get("PLEXITY_KENLM_BIN")
    if env:
        return Path(env).expanduser()
    # (as platformdirs finds it; expanduser("~/.cache") without HOME or a passwd entry was a relative "~/.cache")
    return user_cache_dir("KenLM's tools", "PLEXITY_KENLM_BIN") / "kenlm" / "bin"


def _check_kenlm_bin_variable(name: str) -> None:
    """Raise TrainError naming $PLEXITY_KENLM_BIN, set and holding no `name`, where it names a tool itself or
    a KenLM build folder whose bin/ holds the tools. (A folder without them is where the set-up installs
    them: `find_tool`'s message names that command.)"""
    given = kenlm_bin_dir()
    for folder in (given / "bin", given / "build" / "bin", given.parent):
        if (folder / name).is_file() and folder != given:
            raise TrainError(f"PLEXITY_KENLM_BIN is {os.environ['PLEXITY_KENLM_BIN']}, which holds no {name}: set "
                             f"it to the folder of lmplz and build_binary ({folder} holds them), or unset it")


def find_tool(name: str) -> str:
    """Path of KenLM's `lmplz` or `build_binary`: $PLEXITY_KENLM_BIN, the cache, then PATH."""
    candidate = kenlm_bin_dir() / name
    if candidate.is_file() and os.access(candidate, os.X_OK):
        return str(candidate)
    if os.environ.get("PLEXITY_KENLM_BIN"):  # (set one level off: named, not passed over for PATH's tools)
        _check_kenlm_bin_variable(name)
    on_path = shutil.which(name)
    if on_path:
        return on_path
    command = kenlm_tools_install_command()
    where = "" if command.startswith("bash /") else " from the root of a plexity_plugins checkout"
    looked = f"{kenlm_bin_dir()}{' ($PLEXITY_KENLM_BIN)' if os.environ.get('PLEXITY_KENLM_BIN') else ''}"
    raise KenLMToolsMissing(
        f"KenLM's {name} is not installed (not in {looked}, not on PATH; the kenlm package on PyPI "
        f"ships only the query module): install lmplz and build_binary with `{command}`{where} "
        f"(as root: cmake and Boost from Debian, then a one-minute build; docs/training.md)")


@dataclass
class CorpusStats:
    documents: int = 0
    sentences: int = 0
    tokens: int = 0


def write_training_text(documents: Iterable[str], out_path: Path, stats: CorpusStats | None = None) -> CorpusStats:
    """Split documents into sentences and write them tokenised, one per line."""
    sentences = ([doc[a:b] for a, b in split_sentences(doc)] for doc in documents)
    return write_training_sentences(sentences, out_path, stats)


def iter_sentences(documents: Iterable[str]) -> Iterator[str]:
    """Sentences (verbatim text) of documents, as the scorer would see them."""
    for doc in documents:
        for a, b in split_sentences(doc):
            yield doc[a:b]


# A line of a KenLM tool's progress bar ("----5---10---15...", "*****..."), or a blank one: left out of the tail of
# its stderr that a failure is told with (it said nothing there but how far the tool had come).
_PROGRESS_BAR = re.compile(r"[-*+0-9\s]*")

# lmplz's -S units are powers of 1024 (b K M G T); its vocabulary table alone takes 24 MiB.
_LMPLZ_UNITS = "bKMGT"
_LMPLZ_MIN_MEMORY = 32 * 2**20


def lmplz_memory(text: str) -> str:
    """lmplz's -S for what people write (20%, 4G, 4GB, 4g, 0.5G, 4GiB): checked here, before a corpus
    is read, since lmplz itself refuses all but `N%` and a whole number with one upper-case letter,
    and takes a bare number as KiB. ValueError, saying what to give, for anything else."""
    given = str(text).strip()
    what = f"--memory {given!r}: give a share of RAM (20%) or a size (4G, 500M)"
    share = re.fullmatch(r"(\d+(?:\.\d+)?)\s*%", given)
    if share:
        if not 0 < float(share.group(1)) <= 100:
            raise ValueError(f"{what}: a share is above 0% and at most 100%")
        return f"{share.group(1)}%"
    size = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([bkmgt]?)(?:i?b)?", given, re.IGNORECASE)
    if not size:
        raise ValueError(what)
    if not size.group(2):
        raise ValueError(f"{what}: lmplz would read a bare number as KiB")
    unit = _LMPLZ_UNITS.upper().index(size.group(2).upper())
    value = float(size.group(1))
    if value * 1024 ** unit < _LMPLZ_MIN_MEMORY:
        raise ValueError(f"{what}: lmplz needs 32M or more (its vocabulary table alone takes 24 MiB)")
    while unit and value != int(value):  # (0.5G: lmplz takes whole numbers only, so 512M)
        value, unit = value * 1024, unit - 1
    return f"{int(value)}{_LMPLZ_UNITS[unit]}"


def _lmplz_bytes(size: str) -> int:
    """The bytes of a size as `lmplz_memory` gives it (500M)."""
    return int(size[:-1]) * 1024 ** _LMPLZ_UNITS.index(size[-1])


def _lmplz_size(size: float) -> str:
    """`size` bytes as lmplz's -S, in whole MiB (32M at the least)."""
    return f"{max(int(size), _LMPLZ_MIN_MEMORY) >> 20}M"


def lmplz_sort_memory(text: str) -> tuple[str, str]:
    """lmplz's -S for `--memory` (`lmplz_memory`'s forms) in this process, and what a share was taken of (else "").
    A share is of the memory a child of this process may use (`usable_memory`: the machine's RAM, or less, a
    cgroup's or RLIMIT_AS's limit), given to lmplz as a size: lmplz takes a share of the machine's RAM, whatever
    the job's limit (-S 20% in a 1 GiB cgroup on 24 GiB: 4.8 GB, and the out-of-memory killer ended it).  A size
    of all that memory or more, which lmplz cannot have, is a ValueError saying what to give."""
    memory = lmplz_memory(text)
    usable, what = usable_memory()
    if memory.endswith("%"):
        share = usable * float(memory[:-1]) / 100
        if share < _LMPLZ_MIN_MEMORY:
            raise ValueError(f"--memory {memory}: {memory} of {what} is {share / 2**20:.0f} MiB, and lmplz needs 32M "
                             f"or more: give it more memory")
        return _lmplz_size(share), f"{memory} of {what}"
    if _lmplz_bytes(memory) >= usable:
        raise ValueError(f"--memory {memory}: more than {what}; give a share (20%) or a size below it, e.g. "
                         f"--memory {_lmplz_size(usable * 0.2)}")
    return memory, ""


def _sort_memory(memory: str) -> tuple[str, str]:
    """`lmplz_sort_memory`, a TrainError where it refuses `memory`."""
    try:
        return lmplz_sort_memory(memory)
    except ValueError as exc:
        raise TrainError(str(exc)) from None


def _out_of_memory(tool: str, failure: KenLMToolFailed, memory: str, said: str, kills_before: int | None) -> str | None:
    """What to say, in one line, of a KenLM `tool` (lmplz, build_binary) that ran out of memory with -S `memory`
    (`said`: of what a share); None if it failed otherwise.  The out-of-memory killer's SIGKILL was "lmplz failed
    (exit -9)" and its progress bar, an allocation that failed under RLIMIT_AS a C++ exception (`MallocException ...
    Cannot allocate memory`, build_binary's `mmap failed ... Cannot allocate memory`)."""
    usable, what = usable_memory()
    ran_out = out_of_memory(kills_before) if failure.returncode == -signal.SIGKILL else None
    if ran_out:
        how = f"{tool} ran out of {ran_out} with -S {memory}"
    elif "Cannot allocate memory" in failure.stderr or "std::bad_alloc" in failure.stderr:
        how = f"{tool} could not allocate its memory with -S {memory}"
    elif failure.returncode == -signal.SIGKILL:
        how = f"{tool} was killed (SIGKILL, as the out-of-memory killer ends a process) with -S {memory}"
    elif failure.returncode in (-signal.SIGSEGV, -signal.SIGBUS) and address_space_limit() is not None:
        # (under RLIMIT_AS lmplz sometimes crashes where a mapping failed instead of throwing: 3 runs in 6 at -S
        # 1000M within 1 GiB, the others its MallocException)
        how = f"{tool} crashed ({signal.Signals(-failure.returncode).name}, as it does when it cannot map memory) " \
              f"with -S {memory}"
    else:
        return None
    if said or not ran_out:  # (what the tool could have: the killer's words have said it)
        how += f", {said or f'within {what}'}"
    less = _lmplz_size(min(_lmplz_bytes(memory) / 2, usable * 0.2))
    return f"{how}: give it less, e.g. --memory {less} ({tool} takes more than its -S)"


def _run_sized(cmd: list[str], memory: str, said: str, work: Path) -> ToolRun:
    """Run a KenLM tool given -S `memory` (`said`: of what a share); one that runs out of memory is a
    `KenLMOutOfMemory` saying what to give."""
    kills_before = oom_kills()
    try:
        return _run(cmd, work)
    except KenLMToolFailed as failure:
        ran_out = _out_of_memory(Path(cmd[0]).name, failure, memory, said, kills_before)
        if ran_out:
            raise KenLMOutOfMemory(ran_out, failure.returncode, failure.stderr) from None
        raise


def lmplz_prune(prune: list[int] | None, order: int) -> list[int] | None:
    """lmplz's --prune counts, checked before a corpus is read (lmplz refuses these only after): one per
    order at most, 0 or more, never lower than the count before. ValueError saying what to give."""
    if not prune:
        return None
    given = f"--prune {' '.join(map(str, prune))}"
    if len(prune) > order:
        raise ValueError(f"{given}: one count per order, at most {order} for an order-{order} model (e.g. "
                         f"{' '.join(['0'] + ['1'] * (order - 1))})")
    if any(count < 0 for count in prune):
        raise ValueError(f"{given}: a count is 0 (no pruning) or more")
    if any(later < earlier for earlier, later in zip(prune, prune[1:])):
        raise ValueError(f"{given}: a count is no lower than the one before it (lmplz keeps the shorter n-grams "
                         f"of every n-gram it keeps)")
    return list(prune)


def build_binary_bits(bits: int | None) -> int | None:
    """build_binary's -q/-b, checked before a corpus is read (build_binary refuses more than 25 bits, and -1 as
    255, only after lmplz has run). ValueError saying what to give."""
    if bits and not 1 <= bits <= 25:
        raise ValueError(f"--quantize {bits}: build_binary quantises to 1 to 25 bits (8 by default; 0: no quantising)")
    return bits or None


def run_lmplz(
    text_path: Path,
    arpa_path: Path,
    order: int,
    memory: str = "20%",
    prune: list[int] | None = None,
    temp_dir: Path | None = None,
    discount_fallback: bool = False,
) -> ToolRun:
    """lmplz: a share of `memory` is taken of what this process may use (`lmplz_sort_memory`); one that runs out of
    memory is a `KenLMOutOfMemory` saying what to give."""
    memory, said = _sort_memory(memory)
    cmd = [find_tool("lmplz"), "-o", str(order), "-S", memory, "--text", str(text_path), "--arpa", str(arpa_path)]
    cmd += ["-T", str(temp_dir or arpa_path.parent)]
    if prune:
        cmd += ["--prune", *map(str, prune)]
    if discount_fallback:
        cmd.append("--discount_fallback")
    return _run_sized(cmd, memory, said, arpa_path.parent)


def run_build_binary(arpa_path: Path, bin_path: Path, quantize_bits: int | None = 8, memory: str = "20%") -> ToolRun:
    """build_binary, its trie sorted in -S `memory`, sized as lmplz's (`lmplz_sort_memory`): without -S it takes 80%
    of the machine's RAM, or all its largest order's n-grams if less (133 MB for 5.5 M 4-grams), whatever the job's
    limit (killed in a 128 MiB cgroup on 24 GiB).  One that runs out of memory is a `KenLMOutOfMemory`."""
    memory, said = _sort_memory(memory)
    cmd = [find_tool("build_binary"), "-s", "-S", memory]
    if quantize_bits:
        cmd += ["-q", str(quantize_bits), "-b", str(quantize_bits)]
    cmd += ["trie", str(arpa_path), str(bin_path)]
    return _run_sized(cmd, memory, said, arpa_path.parent)


@dataclass
class ToolRun:
    """What a KenLM tool reported: its stderr (progress, statistics), peak memory, time."""

    stderr: str
    max_rss_mb: float
    seconds: float


@contextlib.contextmanager
def signals_held():
    """Ctrl-C and SIGTERM held while a tool starts, the list of those that came given to be raised after:
    one that came while `subprocess.Popen` waited for the child's exec was raised inside it, before the
    caller had the child to end, and the tool ran on unreaped (CI: a SIGINT to `plexity train` alone,
    its lmplz still there after).  Only the main thread has signal handlers; elsewhere nothing is held."""
    held: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield held
        return
    previous = {signum: signal.signal(signum, lambda signum, _frame: held.append(signum))
                for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield held
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)  # (None: set outside Python)


def _run(cmd: list[str], work: Path | None = None) -> ToolRun:
    """Run a KenLM tool; raise KenLMToolFailed with the tail of its stderr if it fails.  Its stderr is kept in the
    work folder (`work`), as its other files are: in the temporary folder, a read-only /tmp without TMPDIR (a
    locked-down container) stopped `plexity train` at lmplz with "No usable temporary directory"."""
    logger.info("running %s", " ".join(cmd))
    started = time.perf_counter()
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace", dir=work) as err:
        # (dies with us: a SIGKILL to plexity, which no handler sees, left lmplz running with its share of RAM)
        with signals_held() as held:
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, preexec_fn=dying_with_this_process())
        try:  # wait4 rather than wait: it also gives the child's own peak memory.
            for signum in held:  # (one that came while the tool started: handled here, where the tool is ended)
                signal.raise_signal(signum)
            _pid, status, usage = os.wait4(proc.pid, 0)
        except BaseException:  # (Ctrl-C or SIGTERM to us alone: the tool would go on, with 20% of RAM, writing
            proc.kill()        # into the work folder being removed)
            proc.wait()
            raise
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read()
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        tail = "\n".join([line for line in stderr.strip().splitlines() if not _PROGRESS_BAR.fullmatch(line)][-15:])
        raise KenLMToolFailed(f"{Path(cmd[0]).name} failed (exit {proc.returncode}):\n{tail}", proc.returncode, stderr)
    logger.info("%s finished in %.1fs", Path(cmd[0]).name, seconds)
    return ToolRun(stderr, round(usage.ru_maxrss / 1024, 1), round(seconds, 2))


_NGRAM_COUNT = re.compile(r"^ngram (\d+)=(\d+)$")


def arpa_counts(arpa_path: Path) -> dict[int, int]:
    """n-gram counts from an ARPA header ({1: vocabulary size incl. <s>, </s>, <unk>, ...})."""
    counts: dict[int, int] = {}
    with open(arpa_path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.strip()
            m = _NGRAM_COUNT.match(line)
            if m:
                counts[int(m.group(1))] = int(m.group(2))
            elif line.startswith("\\1-grams:"):
                break
    return counts


def make_info(name: str, order: int, stats: CorpusStats, counts: dict[int, int], **extra) -> ModelInfo:
    """Metadata of a freshly built model; `extra` sets further ModelInfo fields."""
    build = {"documents": stats.documents, "sentences": stats.sentences,
             "ngrams": {str(k): v for k, v in sorted(counts.items())}, **extra.pop("build", {})}
    fields = {"tokenizer_version": TOKENIZER_VERSION, **extra}
    return ModelInfo(name=name, order=order, tokens=stats.tokens, vocab_size=counts.get(1),
                     build=build, **fields)


def write_training_sentences(documents: Iterable[list[str]], out_path: Path,
                             stats: CorpusStats | None = None, tokenizer=None) -> CorpusStats:
    """Like `write_training_text`, for corpora that come already split into sentences
    (the BNC's <s> elements): each item is one document's sentences, tokenised here by
    `tokenizer` (`plexity_plugins.text.model_tokenizers`; default plexity-tok-1)."""
    stats = stats or CorpusStats()
    tokenize = tokenizer.lines if tokenizer is not None else to_lm_lines
    count = tokenizer.count if tokenizer is not None else (lambda line: line.count(" ") + 1)
    with open(out_path, "w", encoding="utf-8") as out:
        for sentences in documents:
            lines = [line for line in tokenize(sentences) if line]
            if not lines:
                continue
            stats.documents += 1
            stats.sentences += len(lines)
            stats.tokens += sum(count(line) for line in lines)
            out.write("\n".join(lines))
            out.write("\n")
    return stats


def needs_discount_fallback(error: Exception) -> bool:
    """lmplz refused to estimate Kneser-Ney discounts (a tiny or artificial corpus)."""
    return "discount_fallback" in str(error)


_RESOURCE_FIELD = re.compile(r"(\w+):([\d.]+)( kB)?")


def kenlm_resources(stderr: str) -> dict[str, float]:
    """The resource line KenLM tools print last ("RSSMax:26964 kB user:0.1 real:0.2"):
    {"rss_max_mb": ..., "user_s": ..., "sys_s": ..., "real_s": ...} (empty if absent)."""
    for line in reversed(stderr.splitlines()):
        if "RSSMax:" in line:
            values = {key: float(value) for key, value, _kb in _RESOURCE_FIELD.findall(line)}
            out = {"rss_max_mb": round(values.get("RSSMax", 0) / 1024, 1)}
            for key in ("user", "sys", "real"):
                if key in values:
                    out[f"{key}_s"] = round(values[key], 2)
            return out
    return {}
