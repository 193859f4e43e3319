"""Reading an input file over HTTP(S), as servers serve it: `open_http_input`; an S3 one's failures said
(`open_s3_input`, `s3_problem`).

fsspec's HTTP file reads a file in ranges of 5 MiB, each one request under aiohttp's default limit of
300 s for the whole request.  Against real servers that meant:

- a server that does not answer ranges (Python's ``http.server``, the one docs/ray.md shows; many
  others) failed every task of a file over 5 MiB at its second range, ``ValueError: The HTTP server
  doesn't appear to support range requests`` (naming no file; a re-run did the same);
- a server that sent the headers and part of the body and then nothing, the connection open, held the
  task for 300 s per range, then failed it naming no file; a slow server that never stalled (1 kB/s)
  failed the same way, its 5 MiB not there in 300 s;
- a connection reset, or fewer bytes than the Content-Length, failed the task with aiohttp's words
  (``ClientPayloadError: ... <ContentLengthError: 400, ...>``: no HTTP 400 was ever answered), naming
  no file.

Here the file is read as one stream (any server serves that; memory stays one read's size, whatever
the file's), with a limit on the time without a byte (`DEFAULT_REMOTE_TIMEOUT`, the reader's
``remote_timeout``), none on the whole: a slow server is read to the end, a stalled one fails the task
after that time.  A seek (resynchronising after damage) opens the file again at that byte: with a
range where the server answers one, else reading from the start and passing over the bytes before it.  A step
back into the last `HttpInput.BACK_BYTES` read is read from them: each WARC's first bytes, read to see what it
is and read again (a WACZ's member in the middle of the zip: without it, a server that answers no range sent the
zip from its start again for each member; a 6.4 MB WACZ of six WARCs was read as 63 MB), and a zip's end
records, read backwards.
Every failure of the server or the connection is a `ReadError` naming the URL, the byte and what
happened: the task fails (the other tasks go on) and a re-run reads the file again.

Over S3 (s3fs, on botocore), a refusal or a server gone failed the task with s3fs's or botocore's words alone,
naming no URL and nothing to do: ``OSError: The specified bucket does not exist``, ``Forbidden``,
``ReadError: [Errno None] b.warc.gz: read error at byte 0: Access Denied``, ``EndpointConnectionError: Could not
connect to the endpoint URL: "http://10.0.0.5:9000/bucket/crawl/a.warc.gz"``.  `s3_problem` says each in words
with what to do (credentials, ``anon``, ``requester_pays``, the endpoint); `open_s3_input` makes a failed read a
`ReadError` naming the ``s3://`` URL, the byte and that.  No secret is in them: botocore's messages hold none.
"""

from __future__ import annotations

import errno
import io
import os

from ..errors import ReadError, printable
from ..io.read_limits import DEFAULT_REMOTE_TIMEOUT
_CONNECT_TIMEOUT = 30.0


def sync(loop, function, *args):
    """`function(*args)`, a coroutine function, run on fsspec's event loop `loop` (its filesystem's)."""
    from fsspec.asyn import sync as fsspec_sync

    return fsspec_sync(loop, function, *args)


def is_http(fs) -> bool:
    """Whether `fs` (a DataFolder's filesystem) is fsspec's HTTP(S) one."""
    protocol = fs.protocol if isinstance(fs.protocol, (tuple, list)) else (fs.protocol,)
    return bool({"http", "https"} & set(protocol))


def is_s3(fs) -> bool:
    """Whether `fs` (a DataFolder's filesystem, or the one it is over) is s3fs's."""
    fs = getattr(fs, "fs", fs)  # (a DataFolder is a DirFileSystem over the true one)
    protocol = fs.protocol if isinstance(fs.protocol, (tuple, list)) else (fs.protocol,)
    return bool({"s3", "s3a"} & set(protocol))


# botocore's tries of an S3 request (one retry: a transient 500 or 503), each of them tried again by s3fs
# (`S3FileSystem.retries`, 5) after a timeout or a lost connection
_S3_BOTOCORE_TRIES = 2
_S3_TIMING = ("read_timeout", "connect_timeout", "retries")


def s3_options(options: dict | None, timeout: float | None) -> dict | None:
    """`options` of an S3 filesystem (--storage-options) with a stalled server bounded by `timeout` (the reader's
    ``remote_timeout``, plexity run --remote-timeout): each try of a request waits `timeout` / (s3fs's tries x
    botocore's) for a byte, so that all of them end in about `timeout` (plus s3fs's and botocore's pauses between
    tries, ~3 s).  (s3fs's read_timeout of 15 s, tried 5 times by botocore and 5 times by s3fs, held a task ~7
    minutes per request.)  Unchanged where `timeout` is none or the user's ``config_kwargs`` set any of
    read_timeout, connect_timeout and retries: theirs then."""
    config = dict((options or {}).get("config_kwargs") or {})
    if not timeout or set(_S3_TIMING) & set(config):
        return options
    try:
        from s3fs import S3FileSystem
    except ImportError:  # (no s3fs: the input is not read from S3 here)
        return options
    per_try = timeout / (max(1, int(S3FileSystem.retries)) * _S3_BOTOCORE_TRIES)
    config.update(read_timeout=per_try, connect_timeout=per_try,
                  retries={"mode": "standard", "total_max_attempts": _S3_BOTOCORE_TRIES})
    return {**(options or {}), "config_kwargs": config}


def remote_bounded(data_folder, timeout: float | None):
    """A reader's `data_folder` (a URL, or a (URL, options) pair) with its filesystem's requests bounded by `timeout`
    (the reader's ``remote_timeout``): S3's by `s3_options`, HTTP(S)'s by `http_listing_options`, so that the listing
    a task makes (its check of the inputs, `run_settings.changed_inputs`; datatrove's own, in a pipeline of yours) and
    its HEADs end as the run's listing does, where aiohttp's 300 s held a task on a silent server.  (The options are
    pickled into every task: aiohttp's ClientTimeout pickles, a frozen dataclass of numbers.)  An HTTP(S) folder's URL
    without its last slash, as plexity run gives it: fsspec's glob under ``http://host/crawl/`` found no file ("No
    files found on http://host/crawl/!"; datatrove's own WarcReader failed on an AssertionError).  Another unchanged
    (a DataFolder, a filesystem given: the user's, as built)."""
    if isinstance(data_folder, str):
        url, options = data_folder, None
    elif isinstance(data_folder, tuple) and len(data_folder) == 2 and isinstance(data_folder[1], (dict, type(None))):
        url, options = data_folder
    else:
        return data_folder
    if not isinstance(url, str):
        return data_folder
    if url.lower().startswith(("s3://", "s3a://")):
        bounded = s3_options(options, timeout)
    elif url.lower().startswith(("http://", "https://")):
        url, bounded = url.rstrip("/"), http_listing_options(options, timeout)
    else:
        return data_folder
    return (url, bounded) if bounded else data_folder


_S3_CREDENTIALS = "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE), or --storage-options' key and secret"
_S3_ENDPOINT = "AWS_ENDPOINT_URL, or --storage-options' client_kwargs.endpoint_url"


def s3_problem(exc: BaseException, anon: bool = False) -> str:
    """What an error of s3fs or botocore means, in words, with what to do (short: a failed task's line shows 300
    characters of it); ``Class: message`` for another.  `anon`: the filesystem reads without credentials."""
    try:
        import botocore.exceptions as boto
    except ImportError:  # (no s3fs: the error is another filesystem's)
        return f"{type(exc).__name__}: {exc}"

    seen, cause = [], exc
    while cause is not None and len(seen) < 5:  # (s3fs's OSError holds botocore's ClientError as its cause)
        seen.append(cause)
        cause = cause.__cause__ or cause.__context__
    client = next((e for e in seen if isinstance(e, boto.ClientError)), None)
    if client is not None:
        error = client.response.get("Error", {})
        code = str(error.get("Code", ""))
        status = client.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        message = error.get("Message") or code
        answer = f"the server answered {status or ''} {code}".replace("  ", " ").rstrip()
        answer += f" ({message})" if message != code else ""
        if code in ("InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken", "InvalidToken",
                    "TokenRefreshRequired"):
            return f"{answer}: check the credentials ({_S3_CREDENTIALS})"
        if code == "NoSuchBucket":
            return f"{answer}: check the bucket's name (a bucket of another S3 service: its endpoint, {_S3_ENDPOINT})"
        if code in ("NoSuchKey", "404"):
            return f"{answer}: not found"
        if status == 403 or code in ("AccessDenied", "AllAccessDisabled", "403"):
            # (a HEAD's 403 has no body: wrong credentials and a refusal look the same)
            if anon:
                return ("refused (403) to a reader without credentials (anon): the bucket is not public; give "
                        "credentials that may read it (AWS_* variables or --storage-options' key and secret)")
            return ("refused (403): give credentials that may read it (AWS_* variables or --storage-options); a "
                    "public bucket: --storage-options '{\"anon\": true}'; requester pays: '{\"requester_pays\": true}'")
        return answer
    for error in seen:
        if isinstance(error, boto.NoCredentialsError):
            return (f"no credentials found: set {_S3_CREDENTIALS}; a public bucket: --storage-options "
                    f"'{{\"anon\": true}}'")
        if isinstance(error, (boto.EndpointConnectionError, boto.ConnectionClosedError, boto.ReadTimeoutError,
                              boto.ConnectTimeoutError)):
            return f"the S3 server could not be reached ({error}); run again when it answers"
    return f"{type(exc).__name__}: {exc}"


def _anon(fs) -> bool:
    """Whether the S3 filesystem `fs` (or the one the DataFolder `fs` is over) reads without credentials."""
    return bool(getattr(getattr(fs, "fs", fs), "anon", False))


def open_s3_input(fs, path: str, url: str):
    """`path` of the DataFolder `fs` over S3, opened for reading (`S3Input`): FileNotFoundError where the object is
    not there (counted, named, by the reader); every other failure a `ReadError` naming `url` (the task fails and a
    re-run reads the file again; a refusal counted as an unreadable file was a file lost to the run)."""
    try:
        # (not open(size=...) with the size the task's check just had, which would save s3fs's HEAD: s3fs then reads
        # without the ETag's If-Match, and an object rewritten at the same size mid-read was read on, mixed)
        return S3Input(fs.open(path, "rb", compression=None), url)
    except FileNotFoundError:
        raise
    except Exception as exc:  # noqa: BLE001 - s3fs's and botocore's errors: the server's, named
        raise ReadError(printable(f"{url}: cannot open it: {s3_problem(exc, _anon(fs))}")) from exc


class S3Input(io.RawIOBase):
    """An s3fs file whose failed reads are `ReadError`\\s naming its URL, the byte and what happened."""

    def __init__(self, fileobj, url: str):
        super().__init__()
        self.fileobj, self.url = fileobj, url

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.fileobj.tell()

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        return self.fileobj.seek(offset, whence)

    def read(self, size: int = -1) -> bytes:
        start = self.fileobj.tell()
        try:
            return self.fileobj.read(size)
        except Exception as exc:  # noqa: BLE001 - s3fs's and botocore's errors: the server's, named
            why = s3_problem(exc, getattr(getattr(self.fileobj, "fs", None), "anon", False))
            raise ReadError(printable(f"{self.url}: reading stopped at byte {start:,}: {why}")) from exc

    def readinto(self, buffer) -> int:
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)

    def close(self) -> None:
        try:
            self.fileobj.close()
        finally:
            super().close()


def open_http_input(fs, path: str, timeout: float | None = DEFAULT_REMOTE_TIMEOUT):
    """`path` of the HTTP filesystem `fs` (a URL), opened for reading as `HttpInput`."""
    return HttpInput(fs, path, timeout)


def http_timeout(timeout: float | None):
    """aiohttp's limits of a request to an HTTP(S) server: `timeout` (the reader's ``remote_timeout``, plexity run
    --remote-timeout; none: no limit) without a byte, the connection and its TLS handshake included (at most
    `_CONNECT_TIMEOUT`); none on the whole request (aiohttp's default: 300 s)."""
    import aiohttp

    connect = min(_CONNECT_TIMEOUT, timeout) if timeout else _CONNECT_TIMEOUT
    return aiohttp.ClientTimeout(total=None, sock_connect=connect, sock_read=timeout or None)


def http_listing_options(options: dict | None, timeout: float | None) -> dict:
    """`options` of an HTTP(S) filesystem (--storage-options) with its session's requests (a folder's listing, a
    file's size) bounded by `http_timeout`, unless the user's ``client_kwargs`` set a timeout: a server that
    answered nothing held the listing 300 s (aiohttp's default), whatever --remote-timeout said."""
    client = dict((options or {}).get("client_kwargs") or {})
    client.setdefault("timeout", http_timeout(timeout))
    return {**(options or {}), "client_kwargs": client}


def listing_failed(exc: BaseException, folder_url: str, timeout: float | None) -> OSError:
    """The error a listing of the HTTP(S) folder `folder_url` that failed with `exc` stops a run or a task with: the
    URL and what happened (`http_problem`), where a task's check of its inputs took a stall for a folder without
    files ("its input files changed since the run started (1 file(s) listed then, 0 now)") and a 503 was aiohttp's
    ``ClientResponseError: 503, message='Service Unavailable', ...``."""
    return OSError(printable(f"cannot list the input {folder_url}: {http_problem(exc, timeout, folder_url)}"))


def raise_http_listing_error(fs, folder: str) -> None:
    """Raise the error reaching `folder` (a URL of the HTTP filesystem `fs`), whose listing found no file, fails with
    (none where its page is there): fsspec's find takes a page it cannot fetch (a certificate refused, no server)
    for a folder without files, and the run said "no WARC files match"."""
    fs.ls(folder, detail=False)


# OpenSSL's verify codes (X509_V_ERR_*) of a certificate that is not trusted, is for another host, or is out of date
_UNTRUSTED = {2, 18, 19, 20, 21}
_OTHER_HOST = {62, 63, 64}
_OUT_OF_DATE = {9, 10}


def _certificate_problem(error) -> str:
    """What a certificate refused (`ssl.SSLCertVerificationError`) means, with what to do."""
    code = getattr(error, "verify_code", None)
    message = str(getattr(error, "verify_message", None) or error).rstrip(".")
    if code in _UNTRUSTED:
        return (f"the server's certificate is not trusted ({message}): to trust a private CA, set SSL_CERT_FILE to "
                f"its certificate (a PEM file) or SSL_CERT_DIR in the run's environment (docs/ray.md)")
    if code in _OTHER_HOST:
        return f"the server's certificate is not for this host ({message}): give the host name it was issued for"
    if code in _OUT_OF_DATE:
        return f"the server's certificate is out of date ({message}): it must be renewed (or this machine's clock set)"
    return f"the server's certificate was refused ({message})"


def http_problem(exc: BaseException, timeout: float | None, url: str | None = None) -> str:
    """What happened, in words, for an error of aiohttp or fsspec reaching or reading an HTTP(S) server.  `url`: the
    one being opened (an ``http://`` one reset before any answer is said to be perhaps an HTTPS server's)."""
    import asyncio
    import ssl

    import aiohttp

    if isinstance(exc, aiohttp.ClientConnectorCertificateError):
        return _certificate_problem(exc.certificate_error)
    if isinstance(exc, aiohttp.ClientSSLError):
        reason = getattr(exc.os_error, "reason", None) or exc.os_error
        if reason == "WRONG_VERSION_NUMBER":
            return "the server does not speak TLS (WRONG_VERSION_NUMBER): a plain HTTP server's URL is http://"
        return f"the TLS handshake failed ({reason})"
    if isinstance(exc, ssl.SSLCertVerificationError):
        return _certificate_problem(exc)
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        return (f"the server sent nothing for {timeout:g} s (stalled; the reader's remote_timeout, plexity run "
                f"--remote-timeout)" if timeout else "timed out")
    if isinstance(exc, aiohttp.ClientResponseError):
        return f"the server answered {exc.status} {exc.message}".rstrip()
    if isinstance(exc, aiohttp.ClientPayloadError):
        cause = exc.__cause__ or exc.__context__
        if isinstance(cause, ConnectionResetError) or "reset" in str(exc).lower():
            return "the connection was reset"
        return "the connection ended before the response did (fewer bytes than its Content-Length)"
    if isinstance(exc, aiohttp.ClientConnectorError) and isinstance(exc.os_error, ConnectionRefusedError):
        return f"the connection was refused (no server at {exc.host}:{exc.port})"
    https_hint = " (an HTTPS server's URL is https://)" if url and url.lower().startswith("http://") else ""
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return "the server closed the connection" + https_hint
    if isinstance(exc, aiohttp.ClientOSError) and exc.errno == errno.ECONNRESET:
        return "the connection was reset before the server answered" + https_hint
    if isinstance(exc, FileNotFoundError):
        return "not found (the server answered 404 or refused it)"
    return f"{type(exc).__name__}: {exc}"


class HttpInput(io.RawIOBase):
    """A file over HTTP(S), read as one stream; seekable by opening it again (`open_http_input`), or within the last
    `BACK_BYTES` read, from them."""

    BACK_BYTES = 1 << 20

    def __init__(self, fs, path: str, timeout: float | None = DEFAULT_REMOTE_TIMEOUT):
        super().__init__()
        self.fs, self.path, self.timeout = fs, path, timeout
        self.url = fs.unstrip_protocol(path) if hasattr(fs, "unstrip_protocol") else path
        self._stream, self._pos, self._wanted, self.size = None, 0, 0, None
        self._behind = bytearray()  # the last bytes read from the stream, up to `_pos`
        self._open_at(0)

    async def _get(self, start: int):
        """The response to a GET of the file from byte `start` (a range; the server may answer all of it)."""
        options = dict(self.fs.kwargs)
        headers = dict(options.pop("headers", None) or {})
        # the file's bytes as they are (a .warc.gz gzipped again in transit has no length to seek by)
        headers.setdefault("Accept-Encoding", "identity")
        if start:
            headers["Range"] = f"bytes={start}-"
        timeout = http_timeout(self.timeout)
        session = await self.fs.set_session()
        response = await session.get(self.fs.encode_url(self.path), headers=headers, timeout=timeout, **options)
        if response.status == 404:
            response.release()
            raise FileNotFoundError(f"{_redacted(self.url)}: not found (the server answered 404)")
        try:
            response.raise_for_status()
        except Exception:
            response.release()
            raise
        return response

    async def _read_some(self, size: int) -> bytes:
        return await self._stream.content.read(size)

    async def _release(self, response) -> None:
        response.close()

    def _fail(self, exc: BaseException, doing: str) -> ReadError:
        from ..errors import printable

        url = self.url if doing == "cannot open it" else None
        why = http_problem(exc, self.timeout, url)
        return ReadError(printable(f"{_redacted(self.url)}: {doing} at byte {self._pos:,}: {why}"))

    def _open_at(self, start: int) -> None:
        self._close_stream()
        self._behind.clear()
        if start and self.size is not None and start >= self.size:  # (at or past the end: nothing to ask for)
            self._pos = start
            return
        try:
            stream = sync(self.fs.loop, self._get, start)
        except (ReadError, FileNotFoundError):  # (a 404: the reader counts it, unreadable_file, naming it)
            raise
        except Exception as exc:  # noqa: BLE001 - aiohttp's and fsspec's errors: the server's, named
            self._pos = start
            raise self._fail(exc, "cannot open it") from exc
        self._stream, self._pos = stream, start
        if self.size is None and "Content-Encoding" not in stream.headers:  # (else the length is not the file's)
            total = stream.headers.get("Content-Range", "").rpartition("/")[2]
            length = stream.headers.get("Content-Length", "") if stream.status == 200 else ""
            self.size = int(total) if total.isdigit() else int(length) if length.isdigit() else None
        if start and stream.status != 206:  # the range ignored: the whole body, bytes before `start` passed over
            self._pos = 0
            self._skip(start)

    def _skip(self, count: int) -> None:
        while count > 0:
            data = self._read_raw(min(count, 1 << 20))
            if not data:
                break
            count -= len(data)

    def _read_stream(self, size: int) -> bytes:
        back = self._pos - self._wanted
        if 0 < back <= len(self._behind):  # (a step back into what was just read)
            start = len(self._behind) - back
            data = bytes(self._behind[start:start + min(size, back)])
            self._wanted += len(data)
            return data
        if self._wanted != self._pos:  # (a seek: done when read from, as a seek to the end and back costs nothing)
            wanted = self._wanted
            if wanted > self._pos and wanted - self._pos <= 1 << 16 and self._stream is not None:
                self._skip(wanted - self._pos)  # (a short step forward: read, not a new request)
            else:
                self._open_at(wanted)
            self._wanted = self._pos
        data = self._read_raw(size)
        self._wanted = self._pos
        return data

    def _read_raw(self, size: int) -> bytes:
        if self._stream is None:
            return b""
        try:
            data = sync(self.fs.loop, self._read_some, size)
        except Exception as exc:  # noqa: BLE001 - aiohttp's and fsspec's errors: the server's, named
            raise self._fail(exc, "reading stopped") from exc
        self._pos += len(data)
        self._behind += data
        del self._behind[:max(0, len(self._behind) - self.BACK_BYTES)]
        return data

    def _close_stream(self) -> None:
        if self._stream is not None:
            stream, self._stream = self._stream, None
            try:
                sync(self.fs.loop, self._release, stream)
            except Exception:  # noqa: BLE001 - (a connection already gone)
                pass

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._wanted

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:
            chunks = []
            while chunk := self._read_stream(1 << 20):
                chunks.append(chunk)
            return b"".join(chunks)
        return self._read_stream(size) if size else b""

    def readinto(self, buffer) -> int:
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        if whence == os.SEEK_CUR:
            offset += self._wanted
        elif whence == os.SEEK_END:
            if self.size is None:  # (not said, or compressed in transit all the same: read to its end to know it)
                self._read_stream(0)  # (positioned where the last seek asked)
                while self._read_raw(1 << 20):
                    pass
                self.size = self._pos
            offset += self.size
        self._wanted = max(0, offset)
        return self._wanted

    def close(self) -> None:
        self._close_stream()
        super().close()


def _redacted(url: str) -> str:
    """`url` without its password (`without_password`)."""
    from ..runtime.extras import without_password

    return without_password(url)
