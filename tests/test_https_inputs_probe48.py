"""Inputs given as https:// URLs, as a user of a private server meets them: a certificate of a private CA, one for
another host, one out of date, a plain HTTP server given as https:// and a TLS one as http://, a server that answers
nothing (`plexity_plugins.datatrove.remote_files.http_problem`).

Each stops the run (or fails the task) with one line naming the URL and what is wrong with the certificate or the
connection, with what to do; SSL_CERT_FILE in the run's environment trusts a private CA (docs/ray.md)."""

from __future__ import annotations

import datetime
import ipaddress
import json
import socket
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("aiohttp")

from bad_http_server import read_all, serve  # noqa: E402,F401 - (serve: a fixture)
from helpers import QuietHandler, http_server, read_jsonl_dir, run_plexity  # noqa: E402
from web_archives import write_wacz  # noqa: E402

from plexity_plugins.datatrove.remote_files import open_http_input  # noqa: E402
from plexity_plugins.errors import ReadError  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "examples" / "sample.warc.gz"
UNTRUSTED = ("the server's certificate is not trusted (unable to get local issuer certificate): to trust a private "
             "CA, set SSL_CERT_FILE to its certificate (a PEM file) or SSL_CERT_DIR in the run's environment "
             "(docs/ray.md)")


@pytest.fixture(scope="module")
def certificates(tmp_path_factory) -> Path:
    """A private CA (ca.pem) and certificates it signed, each with its key: good.pem (for 127.0.0.1),
    other_host.pem (for example.org), expired.pem (for 127.0.0.1, out of date since yesterday)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    folder = tmp_path_factory.mktemp("certificates")
    now, day = datetime.datetime.now(datetime.timezone.utc), datetime.timedelta(days=1)

    def name(common_name: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])

    def signed(subject, key, issuer, issuer_key, start, end, *extensions) -> x509.Certificate:
        builder = x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(key.public_key())
        builder = builder.serial_number(x509.random_serial_number()).not_valid_before(start).not_valid_after(end)
        for extension, critical in extensions:
            builder = builder.add_extension(extension, critical=critical)
        return builder.sign(issuer_key, hashes.SHA256())

    def pem(certificate: x509.Certificate) -> bytes:
        return certificate.public_bytes(serialization.Encoding.PEM)

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = signed(name("plexity test CA"), ca_key, name("plexity test CA"), ca_key, now - day, now + 30 * day,
                (x509.BasicConstraints(ca=True, path_length=None), True))
    (folder / "ca.pem").write_bytes(pem(ca))
    localhost = x509.IPAddress(ipaddress.ip_address("127.0.0.1"))
    for file, host, start, end in (("good.pem", localhost, now - day, now + 30 * day),
                                   ("other_host.pem", x509.DNSName("example.org"), now - day, now + 30 * day),
                                   ("expired.pem", localhost, now - 30 * day, now - day)):
        key = ec.generate_private_key(ec.SECP256R1())
        leaf = signed(name("server"), key, ca.subject, ca_key, start, end,
                      (x509.SubjectAlternativeName([host]), False))
        (folder / file).write_bytes(pem(leaf) + key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return folder


@pytest.fixture
def crawl(tmp_path) -> dict:
    """The files a server serves: the sample WARC and a WACZ of it."""
    (tmp_path / "wacz" / "archive").mkdir(parents=True)
    (tmp_path / "wacz" / "archive" / "sample.warc.gz").write_bytes(SAMPLE.read_bytes())
    return {"sample.warc.gz": (SAMPLE, "whole"),
            "crawl.wacz": (write_wacz(tmp_path / "crawl.wacz", tmp_path / "wacz"), "whole")}


def error_line(result) -> str:
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1 and "Traceback" not in result.stderr, result.stderr[-3000:]
    return lines[0]


def test_a_private_ca_s_certificate_stops_the_run_naming_the_url_and_ssl_cert_file(serve, crawl, certificates,
                                                                                  tmp_path):
    """Before: the folder was "no WARC files match **/*.warc* in https://...: give the folder of your .warc ...
    files" (fsspec's listing takes a page it cannot fetch for a folder without files), the file URL was
    "cannot be read: ClientConnectorCertificateError: Cannot connect to host ... [SSLCertVerificationError: (1,
    '[SSL: CERTIFICATE_VERIFY_FAILED] ...')]", with nothing to do."""
    url = serve(crawl, certificate=certificates / "good.pem")
    folder = run_plexity("run", url, "-o", str(tmp_path / "out"), "--extractor", "tags", timeout=120)
    assert error_line(folder) == f"plexity run: error: cannot list the input {url.rstrip('/')}: {UNTRUSTED}"
    file = run_plexity("run", url + "sample.warc.gz", "-o", str(tmp_path / "out"), "--extractor", "tags", timeout=120)
    assert error_line(file) == f"plexity run: error: input {url}sample.warc.gz cannot be read: {UNTRUSTED}"
    assert not (tmp_path / "out").exists()


def test_a_reader_in_a_pipeline_and_a_task_name_the_certificate_too(serve, crawl, certificates):
    """WarcHtmlReader alone (datatrove's executors): before, "No files found on https://...!" for a file, a glob or
    a folder; a task opening a file, "cannot open it at byte 0: ClientConnectorCertificateError: ..."."""
    url = serve(crawl, certificate=certificates / "good.pem")
    with pytest.raises(OSError, match=f"^cannot list the input {url.rstrip('/')}: the server's certificate is not "
                                      r"trusted \(unable to get local issuer certificate\): to trust"):
        read_all(url + "sample.warc.gz")
    from fsspec.implementations.http import HTTPFileSystem

    with pytest.raises(ReadError) as raised:
        open_http_input(HTTPFileSystem(), url + "crawl.wacz")
    assert str(raised.value) == f"{url}crawl.wacz: cannot open it at byte 0: {UNTRUSTED}"


@pytest.mark.parametrize("trust", ["SSL_CERT_FILE", "storage option ssl false"])
def test_ssl_cert_file_trusts_a_private_ca_for_a_folder_of_a_warc_and_a_wacz(serve, crawl, certificates, tmp_path,
                                                                              monkeypatch, trust):
    """Documents behaviour that worked before (a guard): aiohttp's default TLS context reads OpenSSL's default
    paths, so SSL_CERT_FILE (or SSL_CERT_DIR) in the run's environment trusts the CA; --storage-options
    '{"ssl": false}' (aiohttp's option of each request) checks no certificate at all.  The documents are those of the
    same files read from disk.  (A remote folder is listed for WARCs only: its WACZ is read by a glob.)"""
    url = serve(crawl, certificate=certificates / "good.pem")
    options = []
    if trust == "SSL_CERT_FILE":
        monkeypatch.setenv("SSL_CERT_FILE", str(certificates / "ca.pem"))
    else:
        options = ["--storage-options", '{"ssl": false}']
    remote = run_plexity("run", url + "*.wa*", "-o", str(tmp_path / "remote"), "--extractor", "tags", *options,
                         timeout=300)
    assert remote.returncode == 0, remote.stderr[-3000:]
    assert "2 WARC files" in remote.stdout
    local_folder = tmp_path / "local_input"
    local_folder.mkdir()
    for name, (source, _) in crawl.items():
        (local_folder / name).write_bytes(Path(source).read_bytes())
    local = run_plexity("run", str(local_folder), "-o", str(tmp_path / "local"), "--extractor", "tags", timeout=300)
    assert local.returncode == 0, local.stderr[-3000:]
    texts = sorted(document["text"] for document in read_jsonl_dir(tmp_path / "local" / "documents"))
    assert len(texts) == 24 and sorted(document["text"] for document in read_jsonl_dir(
        tmp_path / "remote" / "documents")) == texts  # (the sample's 12 pages, from the WARC and from the WACZ)


def test_an_https_input_is_recorded_as_its_url_and_a_run_recorded_the_old_way_resumes(serve, certificates, tmp_path,
                                                                                      monkeypatch):
    """Before: the settings record named an https:// input ``http://https://127.0.0.1:...`` (fsspec's HTTP keeps the
    URL as the path, and "http://" was put before it).  Now the URL as given; a run an earlier version recorded the
    old way resumes instead of stopping as one of other settings."""
    monkeypatch.setenv("SSL_CERT_FILE", str(certificates / "ca.pem"))
    url = serve({"a.warc.gz": (SAMPLE, "ok")}, certificate=certificates / "good.pem")
    out = tmp_path / "out"
    first = run_plexity("run", url, "-o", str(out), "--extractor", "tags", timeout=300)
    assert first.returncode == 0, first.stderr[-2000:]
    record = out / "logs" / "plexity-settings.json"
    assert [step["input"] for step in json.loads(record.read_text())["steps"] if "input" in step] == [url.rstrip("/")]
    record.write_text(record.read_text().replace('"https://', '"http://https://'))  # (as an earlier version wrote it)
    again = run_plexity("run", url, "-o", str(out), "--extractor", "tags", timeout=300)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "1 tasks, 1 already completed" in again.stdout and "1/1 tasks completed (0 in this run" in again.stdout


@pytest.mark.parametrize("certificate, why", [
    ("other_host.pem", "the server's certificate is not for this host (IP address mismatch, certificate is not valid "
                       "for '127.0.0.1'): give the host name it was issued for"),
    ("expired.pem", "the server's certificate is out of date (certificate has expired): it must be renewed (or this "
                    "machine's clock set)")])
def test_a_certificate_for_another_host_or_out_of_date_is_named(serve, crawl, certificates, tmp_path, monkeypatch,
                                                                 certificate, why):
    """The CA trusted, its certificate wrong.  Before: "no WARC files match" for the folder; for a file,
    "ClientConnectorCertificateError: ... certificate verify failed: IP address mismatch ..." (or "... has
    expired")."""
    monkeypatch.setenv("SSL_CERT_FILE", str(certificates / "ca.pem"))
    url = serve(crawl, certificate=certificates / certificate)
    folder = run_plexity("run", url, "-o", str(tmp_path / "out"), "--extractor", "tags", timeout=120)
    assert error_line(folder) == f"plexity run: error: cannot list the input {url.rstrip('/')}: {why}"
    file = run_plexity("run", url + "crawl.wacz", "-o", str(tmp_path / "out"), "--extractor", "tags", timeout=120)
    assert error_line(file) == f"plexity run: error: input {url}crawl.wacz cannot be read: {why}"


def test_plain_http_given_as_https_and_tls_given_as_http_are_named(serve, crawl, certificates, tmp_path):
    """Before: "plexity run: error: Cannot connect to host 127.0.0.1:PORT ssl:default [[SSL: WRONG_VERSION_NUMBER]
    wrong version number ...]" (no URL) and "plexity run: error: [Errno 104] Connection reset by peer"."""
    plain = serve(crawl).replace("http://", "https://")
    result = run_plexity("run", plain, "-o", str(tmp_path / "out"), "--extractor", "tags", timeout=120)
    assert error_line(result) == (f"plexity run: error: cannot list the input {plain.rstrip('/')}: the server does "
                                  f"not speak TLS (WRONG_VERSION_NUMBER): a plain HTTP server's URL is http://")
    tls = serve(crawl, certificate=certificates / "good.pem").replace("https://", "http://")
    result = run_plexity("run", tls + "sample.warc.gz", "-o", str(tmp_path / "out"), "--extractor", "tags",
                         timeout=120)
    assert error_line(result) == (f"plexity run: error: input {tls}sample.warc.gz cannot be read: the connection was "
                                  f"reset before the server answered (an HTTPS server's URL is https://)")


@pytest.fixture
def silent_server():
    """(port, [when each connection came, as time.monotonic()]): a port on 127.0.0.1 that takes connections and never
    sends a byte (nor ends the TLS handshake)."""
    listener = socket.create_server(("127.0.0.1", 0))
    accepted, accepted_at, stop = [], [], threading.Event()

    def accept():
        while not stop.is_set():
            try:
                accepted.append(listener.accept()[0])
                accepted_at.append(time.monotonic())
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    yield listener.getsockname()[1], accepted_at
    stop.set()
    listener.close()
    for connection in accepted:
        connection.close()


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_a_server_that_answers_nothing_fails_the_listing_within_remote_timeout(silent_server, tmp_path, scheme):
    """Before: the listing ignored --remote-timeout and waited aiohttp's own limits, 300 s over http:// and 31 s
    over https://, then said "plexity run: error: " and nothing else."""
    port, accepted_at = silent_server
    url = f"{scheme}://127.0.0.1:{port}/crawl/"
    result = run_plexity("run", url, "-o", str(tmp_path / "out"), "--remote-timeout", "2", "--extractor", "tags",
                         timeout=300)
    ended = time.monotonic()
    assert error_line(result) == (f"plexity run: error: cannot list the input {url.rstrip('/')}: the server sent "
                                  f"nothing for 2 s (stalled; the reader's remote_timeout, plexity run "
                                  f"--remote-timeout)")
    # timed from the listing's connection, not from the run's start: beside two busy processes the run took 21 s,
    # 3 s alone (its start); from the connection, ~2 s (--remote-timeout) and its end.  (aiohttp's 31 s ran from it)
    assert ended - accepted_at[0] < 20, (ended - accepted_at[0], len(accepted_at))


def test_a_port_without_a_server_and_a_folder_the_server_does_not_have_are_named(tmp_path):
    """Before: "plexity run: error: Cannot connect to host 127.0.0.1:PORT ssl:default [Connect call failed ...]" (no
    URL), and for a folder's page answered 404, "no WARC files match **/*.warc* in http://...: give the folder ..."."""
    closed = socket.create_server(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    result = run_plexity("run", f"http://127.0.0.1:{port}/crawl/", "-o", str(tmp_path / "out"), timeout=120)
    assert error_line(result) == (f"plexity run: error: cannot list the input http://127.0.0.1:{port}/crawl: the "
                                  f"connection was refused (no server at 127.0.0.1:{port})")
    with http_server(_NotFound) as server:
        missing = f"http://127.0.0.1:{server.server_port}/crawl"
        result = run_plexity("run", missing + "/", "-o", str(tmp_path / "out"), timeout=120)
    assert error_line(result) == (f"plexity run: error: cannot list the input {missing}: not found (the server "
                                  f"answered 404 or refused it)")


class _NotFound(QuietHandler):
    def _answer(self, body: bool):
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()
