"""`WarcHtmlReader`: HTML responses of WARC files as datatrove Documents, nothing lost silently."""

from __future__ import annotations

import random
from typing import Callable

from datatrove.io import DataFileLike, DataFolderLike
from datatrove.pipeline.readers.base import BaseDiskReader
from datatrove.utils.logging import logger

from ..errors import NotARegularFile, printable
from ..io.decoding import decode_html_replaced
from ..io.folders import WARC_GLOB, warc_glob
from ..io.input_files import judged_compression, open_input, wat_file
from ..io.payload_sniffing import is_blank
from ..io.read_limits import DEFAULT_READ_TIMEOUT, MAX_DOCUMENT_BYTES, PROGRESS_SECONDS, ReadProgress, reading_limits
from ..io.read_outcomes import (CLEANED_TEXT, CORRUPT_FILE, NOT_A_REGULAR_FILE, NOT_PAGES, PAGE_TEXT,
                                UNREADABLE_FILE, UNSUPPORTED_COMPRESSION, WAT_FILE, describe)
from ..io.wacz_files import WaczFile, is_wacz
from ..io.warc_files import WarcFile
from ..io.warc_writer import WET_PAGE_HEADERS, wet_page_headers
from ..scoring.scorer import sanitize
from .local_paths import anchored
from .remote_files import (DEFAULT_REMOTE_TIMEOUT, is_http, is_s3, listing_failed, open_http_input, open_s3_input,
                           raise_http_listing_error, remote_bounded, s3_problem)
from ..runtime.keywords import suggests_keywords

# A Document's metadata ``warc_type`` is "conversion" when its text is a WET record's: the page's
# text already (every visible line), which no extractor reads and the filter takes as such.
PAGE_TEXT_WARC_TYPE = "conversion"


# A Document's metadata ``cleaned_text`` is True when its text is a cleaned WARC's record read back
# (``plexity clean``'s, ``plexity run --format warc``'s): text an extractor already cut down to the
# page's content, which no extractor reads and the filter cleans with its own method, as the first time.
CLEANED_TEXT_KEY = "cleaned_text"

# A Document's metadata ``replaced_chars``: the characters the reader replaced (U+FFFD) decoding its
# payload's bytes, which `PerplexitySentenceFilter` adds to the document's ``plexity_replaced_chars``
# and its ``replaced_chars`` counter, as ``plexity clean`` and the Scrapy pipeline (given bytes) count them.
REPLACED_CHARS_KEY = "replaced_chars"


def is_page_text(doc) -> bool:
    """Whether `doc` is a WET record's text (a page's text already), not a page's HTML."""
    return doc.metadata.get("warc_type") == PAGE_TEXT_WARC_TYPE


def decoding_replaced(doc) -> int:
    """Characters `WarcHtmlReader` replaced decoding `doc`'s bytes (0 for a Document from elsewhere)."""
    value = doc.metadata.get(REPLACED_CHARS_KEY)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def is_cleaned_text(doc) -> bool:
    """Whether `doc` is a cleaned WARC's record read back (a page's text already, its content)."""
    return doc.metadata.get(CLEANED_TEXT_KEY) is True


def is_text_already(doc) -> bool:
    """Whether `doc` holds a page's text, not its HTML: nothing for an extractor to do."""
    return is_page_text(doc) or is_cleaned_text(doc)


COMPRESSIONS = ("infer", "gzip", None)  # (datatrove's WarcReader's; each file is read by its bytes whatever is said)


def check_compression(compression) -> None:
    """`compression` as datatrove's WarcReader takes it: "infer", "gzip" or None all read each file by its bytes
    (gzip member by member, or none); "zstd", which datatrove's reader reads, is refused when the step is built,
    with the conversion that makes such a crawl one this reader reads."""
    if compression in COMPRESSIONS:
        return
    if compression == "zstd":
        raise ValueError("WarcHtmlReader does not read zstd-compressed WARC files (one stream: no record boundary to "
                         "go on from after damage): convert them to gzip, zstdcat f.warc.zst | gzip > f.warc.gz, and "
                         "leave out compression= (gzip and uncompressed WARCs are read by their bytes)")
    raise ValueError(f"WarcHtmlReader's compression must be one of 'infer', 'gzip' or None (each file is read by its "
                     f"bytes), got {compression!r}")


def open_counted(step, filepath: str, opened):
    """`opened()`, an input file of `step` (a reader of ours) opened; None, counted on the step with a warning,
    when it is not a regular file (``not_a_regular_file``: opening a FIFO waits for ever) or a local one cannot be
    opened (``unreadable_file``).  An error of a remote file passes: the task fails, and a re-run retries it."""
    try:
        return opened()
    except NotARegularFile as exc:
        step.stat_update(NOT_A_REGULAR_FILE)
        # (the file's name, and what the file holds, are the input's characters: no ESC, BEL or CR in a log line)
        logger.warning(printable(f"skipped {filepath}: {exc}"))
    except (FileNotFoundError, PermissionError, IsADirectoryError, NotADirectoryError) as exc:
        step.stat_update(UNREADABLE_FILE)
        logger.warning(printable(f"skipped {filepath}: unreadable ({describe(exc)})"))
    except OSError as exc:
        if not step.data_folder.is_local():
            raise
        step.stat_update(UNREADABLE_FILE)  # a symlink loop ...
        logger.warning(printable(f"skipped {filepath}: unreadable ({describe(exc)})"))
    return None


@suggests_keywords
class WarcHtmlReader(BaseDiskReader):
    """Reads the HTML response records of WARC files (``.warc``, ``.warc.gz``) as Documents, and
    the text records of WET files (``.warc.wet.gz``: ``conversion``, text/plain, Common Crawl's text
    of each page) as Documents whose metadata ``warc_type`` is "conversion" (`is_page_text`):
    the extractor steps of this package pass them on as they are, and `PerplexitySentenceFilter`
    cleans them with its ``page_text_method``.  A cleaned WARC read back (the ``response`` records of
    text/plain with ``X-Plexity-*`` headers that ``plexity clean`` and `WarcResponseWriter` write) gives
    Documents whose metadata ``cleaned_text`` is True (`is_cleaned_text`): passed on by the extractor
    steps too, and cleaned with the filter's own ``method`` (its text was an extractor's).

    Like datatrove's ``WarcReader`` (same arguments, same Document id/url/date), but made
    for crawls that contain anything:

    - the charset comes from a byte order mark, then the HTTP Content-Type, then the page's
      ``<meta charset>`` or ``<?xml encoding>`` (UTF-16 or UTF-32 there means UTF-8, as in
      browsers), else UTF-8 (windows-1252 for Latin-script bytes none of which is UTF-8), undecodable
      bytes replaced (``plexity_plugins.extractors.decode_html``,
      as in every front end);
    - records are read and judged by `plexity_plugins.io.warc_files.WarcFile`, exactly as
      ``plexity clean`` reads them (HTML by Content-Type, else WARC-Identified-Payload-Type,
      else the payload's start; Content-Encoding gzip/deflate/br decoded within the cap);
    - every record is counted (``records``) and becomes a Document (``page_texts`` counts those of
      WET records, ``cleaned_texts`` those of a cleaned WARC) or a skip counted by reason:
      ``skipped_not_response`` (request, metadata, warcinfo ... records), ``skipped_revisit`` (a deduplicating
      crawler's revisit records), ``skipped_redirect_or_error`` (HTTP status 3xx, 4xx, 5xx),
      ``skipped_html_resource`` (a ``resource`` record holding HTML, not read, as datatrove's WarcReader does
      not read one: a page stored without its HTTP response; a ``conversion`` record holding HTML is read, as
      datatrove's reader reads it),
      ``skipped_not_html`` (images, PDF, ...), ``skipped_too_large``,
      ``skipped_empty_payload``, ``skipped_undecodable``, ``skipped_truncated`` (shorter
      than its Content-Length: the records after it are still read), ``skipped_by_adapter`` (a
      custom `adapter` returned None or no text for it);
    - a file that is not a WARC, or ends inside a record, or turns to garbage, is counted in
      ``corrupt_files`` and ``corrupt_files_<problem>`` (``not_a_warc``, ``truncated``,
      ``corrupt``) with a logged warning naming the record after which reading stopped:
      the records before it are kept, the task goes on;
    - past damage in the middle of a file (a wrong Content-Length, garbage) reading resumes
      at the next record (gzip member, or ``WARC/1.`` line), counting ``records_recovered``
      and ``bytes_skipped`` (as ``plexity clean`` does);
    - a page whose record says the crawler kept only its start (``WARC-Truncated``: Common
      Crawl's 1 MiB limit) is read as it is, a compressed one as far as it inflates (as
      datatrove's reader and browsers do), counted in ``pages_cut_by_crawler``, its Document's
      metadata holding ``warc_truncated`` (the header's value: ``length``, ``time`` ...);
    - a WARC compressed otherwise than by gzip (``.warc.bz2``, ``.warc.xz``, ``.warc.zst``: one stream,
      no record boundaries to resume at after damage; or any name, its first bytes a bzip2, xz or zstd
      stream) is not read: counted as ``unsupported_compression``, with a logged warning giving the
      one-line conversion to ``.warc.gz`` (as ``plexity clean`` counts it,
      `plexity_plugins.io.input_files.unsupported_compression`);
    - a Common Crawl WAT file (``.warc.wat.gz``, ``.warc.wat``: the metadata of a crawl's records as JSON, no page's
      text; the default glob takes it) is not read, by its name: counted as ``wat_file``, with a logged warning
      saying where its pages are (as ``plexity clean`` counts it, `plexity_plugins.io.input_files.wat_file`);
    - a WACZ (``.wacz``: a zip of a crawl's WARCs, Webrecorder's and Browsertrix Crawler's) is read as the WARC
      files under its ``archive/``, each streamed from the zip and read as a file of its own (`io.wacz_files`); a
      broken or hostile zip, an encrypted or zip-bomb member, is counted (``unreadable_file``, or
      ``corrupt_files_not_a_warc`` for no zip or one of no WARC) with a logged warning naming it;
    - a listed path that is not a regular file (a FIFO, a socket: opening a FIFO waits for ever)
      is counted as ``not_a_regular_file``, one that cannot be opened (a symlink loop, a file
      gone since the listing) as ``unreadable_file``, each with a logged warning: neither fails
      the task nor the other files;
    - an error of the installation (ImportError, MemoryError, a missing model) stops the task, and so
      does a read of a file that the system fails (EIO: `plexity_plugins.errors.ReadError`, naming the
      file and the byte; never a damaged file): a re-run redoes the task.

    It needs neither libmagic nor cchardet (datatrove's reader sniffs with both).

    Args:
        data_folder: a str, tuple or DataFolder: where the WARC files are
        paths_file: optionally a file with one path per line (relative to `data_folder`)
        compression: datatrove's WarcReader's argument, taken in its place: "infer" (the default), "gzip" or None
            read each file by its bytes, gzip or none; "zstd" is refused (see ``unsupported_compression``)
        limit: maximum number of documents to read per task (-1: all); no record after the last one is
            read or counted
        skip: number of documents to skip at the start of each task's input (counted as
            ``skipped_by_skip_argument``)
        file_progress: show a progress bar over the files
        doc_progress: show a progress bar over the documents
        adapter: as in datatrove's readers; a record it drops (returns None, or a dict without text) is
            counted as ``skipped_by_adapter``
        text_key: as in datatrove's readers
        id_key: as in datatrove's readers
        default_metadata: as in datatrove's readers
        recursive: search `data_folder` recursively
        glob_pattern: files to read, relative to `data_folder` (default ``"**/*.warc*"``: ``.warc``,
            ``.warc.gz`` and WET files, recursively; a ``.warc.bz2``, ``.xz`` or ``.zst`` is counted as
            ``unsupported_compression``, a WAT (``.warc.wat.gz``) as ``wat_file``; in a local folder holding ``.arc``
            or ``.arc.gz`` files, ``"**/*[.w]arc*"``, which reads them too, as the WARC responses warcio converts their
            records to; in one holding ``.wacz`` files, ``"**/*[.w]a[rc][cz]*"``)
        shuffle_files: shuffle the files of each task's shard
        max_payload_bytes: larger HTTP payloads (decompressed) are skipped
            (``skipped_too_large``); bytes or a size (``"50MB"``); default 50 MB, as ``plexity clean
            --max-document-bytes``
        read_timeout: seconds to decode one payload (de-chunk, inflate); a slower one is skipped
            (``skipped_undecodable``); default 30, the extraction time limit's; 0: no limit
        remote_timeout: for a file read over HTTP(S), seconds the server may send no byte (default 60; 0 or
            None: no limit): past it the task fails naming the URL, the byte and the stall; the folder's listing (a
            task's, datatrove's) too, where `data_folder` is a URL or a (URL, options) pair (its ``client_kwargs``'
            timeout, unless they give one: `remote_files.remote_bounded`).  Over S3 (a URL or a
            (URL, options) pair) about as long, with s3fs's and botocore's retries, unless the options'
            ``config_kwargs`` set read_timeout, connect_timeout or retries (`remote_files.s3_options`).  There is no
            limit on a whole file's time (a slow server is read to the end), and a server that does not answer
            ranges is read as well (one stream; `plexity_plugins.datatrove.remote_files`)
        leave_out_other_inputs: the files the glob takes that are another command's input (HTML pages, saved pages,
            text files, datasets of documents: `cleaning.files.other_input`) are not this reader's files, in no
            task's share (``plexity run`` gives True and names them, with what reads them); default False: each is
            read, and counted as ``corrupt_files_not_a_warc``

    Metadata: ``url``, ``date``, ``content_type``, ``charset``, ``file_path``; ``warc_type``
    ("conversion") for a WET record's text, ``cleaned_text`` (True) for a cleaned WARC's record read
    back, ``warc_truncated`` for a page the crawler cut (``WARC-Truncated``); a WET record's
    ``warc_refers_to`` and ``warc_identified_content_language`` (`WET_PAGE_HEADERS`: kept on its cleaned
    record by `WarcResponseWriter`).  Every Document has every key, ``""`` (``cleaned_text`` False) where
    it does not apply: one type per key, as datatrove's ParquetWriter needs.
    """

    # (of the class: a reader rebuilt without its __init__, as a Ray task's is, has them too)
    progress_seconds = PROGRESS_SECONDS  # a line this often while a file is read (`ReadProgress`)
    _listing: list[str] | None = None  # the input's files as this task's check listed them (`use_listing`)
    leave_out_other_inputs = False  # (`takes`)
    _reading = False  # whether `run` has listed its files and reads them

    name = "🕷 WARC HTML"

    def __init__(
        self,
        data_folder: DataFolderLike,
        paths_file: DataFileLike | None = None,
        compression: str | None = "infer",
        limit: int = -1,
        skip: int = 0,
        file_progress: bool = False,
        doc_progress: bool = False,
        adapter: Callable = None,
        text_key: str = "text",
        id_key: str = "id",
        default_metadata: dict = None,
        recursive: bool = True,
        glob_pattern: str | None = WARC_GLOB,
        shuffle_files: bool = False,
        max_payload_bytes: int = MAX_DOCUMENT_BYTES,
        read_timeout: float | None = DEFAULT_READ_TIMEOUT,
        remote_timeout: float | None = DEFAULT_REMOTE_TIMEOUT,
        leave_out_other_inputs: bool = False,
    ):
        # (datatrove's WarcReader's argument, in its place: a pipeline changing one reader for the other, with
        # compression="infer" or "gzip" written out, stopped with "unexpected keyword argument 'compression'")
        check_compression(compression)
        is_seconds = isinstance(remote_timeout, (int, float)) and not isinstance(remote_timeout, bool)
        if remote_timeout is not None and (not is_seconds or not remote_timeout >= 0):
            raise ValueError(f"remote_timeout must be seconds, 0 or more (0 or None: no limit), got {remote_timeout!r}")
        self.remote_timeout = remote_timeout or None
        # (absolute: a worker started in another folder reads the files the driver's folder meant; a remote one's
        # listings and HEADs bounded by remote_timeout, as its reads are)
        super().__init__(remote_bounded(anchored(data_folder), self.remote_timeout), anchored(paths_file), limit, skip,
                         file_progress, doc_progress, adapter, text_key, id_key, default_metadata, recursive,
                         glob_pattern, shuffle_files)
        if self.glob_pattern == WARC_GLOB and self.data_folder.is_local():  # (its ARC files too, if it holds any)
            self.glob_pattern = warc_glob(self.data_folder.path)
        self.max_payload_bytes, self.read_timeout = reading_limits(max_payload_bytes, read_timeout)
        self.leave_out_other_inputs = bool(leave_out_other_inputs)
        self._documents_read = 0  # documents handed to datatrove from this task's files (`read_files_shard`)
        self._adapter_drop_warned = False  # (`_count_adapter_drop`: said once, beside datatrove's own warning)
        if adapter:  # (datatrove's reader fails on an adapter's None: `_adapt` makes it a drop)
            self._user_adapter, self.adapter = self.adapter, self._adapt

    def _opened(self, filepath: str):
        """The file, opened for reading, or OSError."""
        if self.data_folder.is_local():  # (a FIFO is listed like a file, and opening it waits for ever)
            return open_input(self.data_folder.resolve_paths(filepath))
        if is_http(self.data_folder.fs):  # (one stream, any server; a stall or a reset named: `remote_files`)
            return open_http_input(self.data_folder.fs, self.data_folder.resolve_paths(filepath), self.remote_timeout)
        if is_s3(self.data_folder.fs):  # (a refusal, a server gone: the task fails, naming the URL: `remote_files`)
            url = self.data_folder.fs.unstrip_protocol(self.data_folder.resolve_paths(filepath))
            return open_s3_input(self.data_folder, filepath, url)
        return self.data_folder.open(filepath, "rb", compression=None)

    def _open(self, filepath: str):
        """The file, opened for reading (no decompression: warcio reads gzip member by member, so
        the records before a truncated member are still read); None, counted, when it is not a
        regular file or cannot be opened (`open_counted`)."""
        return open_counted(self, filepath, lambda: self._opened(filepath))

    def settings(self) -> dict:
        """What this step was built with, as a run records it (`plexity_plugins.datatrove.run_settings`):
        which files (the tasks' shares of them follow), and what each record may hold."""
        from .run_settings import folder_name, function_code

        settings = {"input": folder_name(self.data_folder), "glob_pattern": self.glob_pattern,
                    "paths_file": str(self.paths_file) if self.paths_file else None, "recursive": self.recursive,
                    "limit": self.limit, "skip": self.skip, "max_payload_bytes": self.max_payload_bytes}
        adapter = getattr(self, "_user_adapter", None)
        if adapter is not None:  # (its documents are what the adapter makes of each record: as datatrove's readers')
            settings["functions"] = {"adapter": function_code(adapter)}
        return settings

    def read_file(self, filepath: str):
        wat = wat_file(filepath)
        if wat:  # a Common Crawl WAT (the glob takes it): no page in it, never opened (as `plexity clean` skips it)
            self._not_read(filepath, WAT_FILE, wat)
            return
        why = judged_compression(filepath, lambda: self._opened(filepath))
        if why:  # a .warc.bz2, .warc.xz, .warc.zst (the glob takes them): its first bytes read, not the file
            self._not_read(filepath, UNSUPPORTED_COMPRESSION, why)
            return
        f = self._open(filepath)
        if f is None:
            return
        with f:
            if not is_wacz(filepath):
                yield from self._read_warc(f, filepath)
                return
            wacz = WaczFile(f, filepath)  # (its WARC members, each read as a WARC file)
            for member in wacz:
                if member.skip:
                    self.stat_update(UNREADABLE_FILE)
                    logger.warning(printable(f"skipped {member.name}: {member.skip}"))
                    continue
                with member.fileobj:
                    yield from self._read_warc(member.fileobj, member.name, member.why_ended)
            if wacz.problem == UNREADABLE_FILE:  # (its zip directory: nothing read, as a file that cannot be opened)
                self.stat_update(UNREADABLE_FILE)
                logger.warning(printable(f"skipped {filepath}: {wacz.problem_detail}"))
            elif wacz.problem is not None:  # (no zip, or no WARC in it: as a file that is no WARC)
                self.stat_update("corrupt_files", f"corrupt_files_{wacz.problem}")
                logger.warning(printable(f"damaged WARC {filepath}: {wacz.problem_detail}"))

    def _read_warc(self, f, filepath: str, why_ended=None):
        """The documents of the WARC file `f` (a file of the folder, or a WACZ's member), named `filepath`; its
        records counted.  `why_ended()`: why reading ended early though the file held no damage there, or ""."""
        # the file's name as the documents' metadata holds it: a name that is not UTF-8 (b"caf\xe9.warc.gz") is
        # listed with surrogates, which no JSON writer takes (orjson failed the task): its bytes escaped
        source = filepath.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        warc = WarcFile(f, self.max_payload_bytes, self.read_timeout, name=filepath)
        records = iter(warc)
        progress = ReadProgress(f, filepath, self.progress_seconds, lambda line: logger.info(printable(line)))
        while not self._limit_reached():  # (checked before a record is read: none is read past the limit)
            record = next(records, None)
            if record is None:
                break
            progress.record()
            with self.track_time():
                data = self._process_record(record, filepath)
            if data is not None:
                document = self.get_document_from_dict(data, source, record.number - 1)
                if document is None:  # (its payload had text: the adapter dropped it)
                    self._count_adapter_drop(record, filepath)
                else:
                    self._count_document(record)
                    yield document
        ended = why_ended() if why_ended else ""  # (a WACZ's member: its zip data damaged ...)
        if warc.problem == UNSUPPORTED_COMPRESSION:  # (its bytes are bzip2 ..., whatever its name)
            self._not_read(filepath, UNSUPPORTED_COMPRESSION, warc.problem_detail)
        elif warc.problem is not None or ended:
            detail = "; ".join(part for part in (warc.problem_detail, ended) if part)
            self.stat_update("corrupt_files", f"corrupt_files_{warc.problem or CORRUPT_FILE}")
            logger.warning(printable(f"damaged WARC {filepath}: {detail}"))
        if warc.bytes_skipped:
            self.stat_update("records_recovered", value=warc.records_recovered)
            self.stat_update("bytes_skipped", value=warc.bytes_skipped)
        if warc.pages_cut_by_crawler:
            self.stat_update("pages_cut_by_crawler", value=warc.pages_cut_by_crawler)

    def takes(self, name: str) -> bool:
        """Whether the listed file `name` is one of this reader's files: all are, but another command's input where
        `leave_out_other_inputs` (`cleaning.files.other_input`: a local file by its name and first line, a remote
        one by its name)."""
        if not self.leave_out_other_inputs:
            return True
        from ..cleaning.files import other_input

        local = self.data_folder.is_local()
        return other_input(self.data_folder.resolve_paths(name) if local else name, local) is None

    def use_listing(self, names: list[str]) -> None:
        """Take this task's files from `names`, the folder's files as the task's check of its inputs just listed them
        (`run_settings.changed_inputs`, the same find or glob as datatrove's ``list_files``, found unchanged since the
        run started), instead of listing the folder again.  Each task listed the whole input twice: with one task per
        file (``plexity run``'s default), n² entries; 10,000 files cost ~0.1 s a listing, a task."""
        self._listing = list(names)

    def run(self, data=None, rank: int = 0, world_size: int = 1):
        """datatrove's, with its "No files found on ...!" said as `NoInputFiles`, naming why and what to give (a
        file or a glob given as the folder, a folder that is not there), as plexity's executors say it before any
        task: under datatrove's own executors, or the reader run alone, a task is the first to find out."""
        if self._listing is None and self.leave_out_other_inputs and not self.paths_file:
            from .run_settings import reader_files  # (datatrove's own listing would hand out the files left out)

            listed = reader_files(self)
            if listed is not None:
                self._listing = list(listed)
        if self._listing is not None and not self.paths_file:
            yield from self._run_listed(data, rank, world_size)
            return
        self._reading = False
        try:
            yield from super().run(data, rank, world_size)
        except RuntimeError as exc:
            if not str(exc).startswith("No files found on"):
                raise
            from .run_settings import check_inputs, folder_name

            check_inputs([self])  # (raises NoInputFiles for a local folder; else datatrove's words stand)
            if is_http(self.data_folder.fs):  # (a page fsspec could not fetch, a certificate refused: no file found)
                try:
                    raise_http_listing_error(self.data_folder.fs, self.data_folder.path)
                except Exception as error:  # noqa: BLE001 - aiohttp's: named
                    raise listing_failed(error, folder_name(self.data_folder), self.remote_timeout) from error
            raise
        except Exception as exc:  # noqa: BLE001 - s3fs's, botocore's, aiohttp's: the listing's failure named
            if self._reading or not (is_s3(self.data_folder.fs) or is_http(self.data_folder.fs)):
                raise
            from .run_settings import folder_name

            if is_http(self.data_folder.fs):  # (a stall: the bare TimeoutError of fsspec's find)
                raise listing_failed(exc, folder_name(self.data_folder), self.remote_timeout) from exc
            why = s3_problem(exc, bool(getattr(self.data_folder.fs, "anon", False)))
            raise OSError(f"cannot list the input {folder_name(self.data_folder)}: {why}") from exc

    def _run_listed(self, data, rank: int, world_size: int):
        """datatrove's `BaseDiskReader.run` on the files of `use_listing`: the same shard, ``[rank::world_size]``."""
        if data:
            yield from data
        if not self._listing:
            raise RuntimeError(f"No files found on {self.data_folder.path}!")
        files_shard = self._listing[rank::world_size]
        if not files_shard:
            logger.warning(f"No files found on {self.data_folder.path} for {rank=}")
        if rank == 0 and world_size > 1 and self.limit != -1:  # (as datatrove's says it)
            logger.info(f"limit={self.limit} applies per task: up to {self.limit * world_size} documents across "
                        f"{world_size} tasks")
        if self.shuffle_files:
            random.shuffle(files_shard)
        for doc in self.read_files_shard(files_shard):
            self.update_doc_stats(doc)
            yield doc

    def read_files_shard(self, shard: list[str]):
        """datatrove's, the `limit` and `skip` kept by `read_file` too, so that the counters count exactly
        the records the task took: `read_file` reads no record after the `limit`-th document (datatrove's
        loop asks for one more document before it stops, which read, counted and dropped a record), and
        counts the documents datatrove passes over for `skip` as ``skipped_by_skip_argument``.  Then
        ``records = documents + Σ skipped_*`` with any `limit` and `skip`."""
        self._documents_read = 0
        self._reading = True  # (listed: a failure from here is a file's, `_opened` names it)
        yield from super().read_files_shard(shard)

    def _limit_reached(self) -> bool:
        """Whether datatrove has taken its `limit` of documents (after `skip`) from this task's files."""
        return self.limit != -1 and self._documents_read >= self.skip + self.limit

    def _count_document(self, record) -> None:
        """Count a document handed to datatrove: passed over for `skip`, or of a page's text already."""
        if self._documents_read < self.skip:
            self.stat_update("skipped_by_skip_argument")
        elif record.kind == PAGE_TEXT:
            self.stat_update("page_texts")
        elif record.kind == CLEANED_TEXT:
            self.stat_update("cleaned_texts")
        self._documents_read += 1

    def _not_read(self, filepath: str, reason: str, why: str) -> None:
        """A file not read (`reason`: a WARC compressed otherwise than by gzip, a WAT): counted, and `why` said (the
        line that converts it, where its pages are)."""
        self.stat_update(reason)
        logger.warning(printable(f"skipped {filepath}: {why}"))

    def _adapt(self, data: dict, path: str, id_in_file):
        """The user's `adapter`, its None (the record dropped) given to datatrove as a dict without
        text, which datatrove's reader drops too (and counts nowhere: `_count_adapter_drop` does)."""
        parsed = self._user_adapter(data, path, id_in_file)
        return {} if parsed is None else parsed

    def _count_adapter_drop(self, record, filepath: str) -> None:
        self.stat_update("skipped_by_adapter")
        if not self._adapter_drop_warned:  # (once per task: an adapter may drop most records on purpose)
            self._adapter_drop_warned = True
            logger.warning(printable(f"the reader's adapter gave no document (None, or no text) for {filepath} "
                                     f"{record.uri}; such records are counted as skipped_by_adapter"))

    def _process_record(self, record, filepath: str) -> dict | None:
        self.stat_update("records")
        if record.skip is not None:
            self.stat_update(f"skipped_{record.skip}")
            # (a crawl's every page has a request and a metadata record: a debug line for each, in the task's log,
            # where datatrove writes DEBUG, was two lines of ~200 bytes a page; what is no page (those, images, PDF)
            # is counted only, as datatrove's WarcReader skips it; a damaged or oversized page is still named)
            if record.skip not in NOT_PAGES:
                logger.debug(printable(f"skipped {filepath} {record.uri}: {record.skip} {record.detail}"))
            return None
        if record.kind in (PAGE_TEXT, CLEANED_TEXT):  # a WET or a cleaned record: the page's text, UTF-8
            (html, replaced), charset = sanitize(record.payload, keep_nul=True), "utf-8"
        else:
            html, charset, replaced = decode_html_replaced(record.payload, record.content_type)
        record.payload = None  # (the text goes on; its bytes need not stay with the reader while it does)
        if is_blank(html):
            self.stat_update("skipped_empty_payload")
            return None
        # Every Document has every key, each of one type ("" or False where it does not apply): datatrove's
        # ParquetWriter takes its schema from the first document, and a key only some pages have (a page the
        # crawler cut, a WET record among WARC records) stopped the task, "Table schema does not match".
        page_headers = wet_page_headers(record.record) if record.record.rec_type == "conversion" else {}
        data = {
            "text": html,
            "id": record.record_id,
            "url": record.uri,
            "date": record.date or "",
            "content_type": record.content_type or "",
            "charset": charset,
            REPLACED_CHARS_KEY: replaced,
            "warc_type": PAGE_TEXT_WARC_TYPE if record.kind == PAGE_TEXT else "",
            CLEANED_TEXT_KEY: record.kind == CLEANED_TEXT,
            # (which page a WET text is of: kept on its cleaned record)
            **{key: page_headers.get(name, "") for name, key in WET_PAGE_HEADERS.items()},
            # the crawler kept only the page's start (and why: length, time, ...)
            "warc_truncated": record.cut_by_crawler or "",
        }
        return data
