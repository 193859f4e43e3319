"""`plexity serve`'s JSON API, against a real server process on 127.0.0.1."""

from __future__ import annotations

import contextlib
import http.client
import json
import re
import select
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import zlib
from pathlib import Path

import pytest

from plexity_plugins.cli import build_parser
from plexity_plugins.extractors import EXTRACTORS, html_to_text_tags
from plexity_plugins.scoring.scorer import PerplexityScorer
from plexity_plugins.web.app import STATIC_DIR
from web_server import post, server_log, start_server, stop_server

MAX_BYTES = 20_000
ARTICLE = (
    "The city council approved the budget for the new library on Tuesday evening. "
    "The building will open in the spring, the mayor said.\n"
    "Share on Facebook | Share on Twitter | Email\n"
    "Work on the site is expected to start next month.\n"
    "Home | News | Sport | Weather | Contact us"
)
BOILERPLATE = ["Share on Facebook | Share on Twitter | Email", "Home | News | Sport | Weather | Contact us"]
PLEXITY = str(Path(sys.executable).with_name("plexity"))
WEB_DOC = Path(__file__).resolve().parent.parent / "docs" / "web.md"


def get(url: str, headers: dict | None = None) -> tuple[int, dict, dict]:
    """(status, JSON answer, headers) of a GET whose answer must be JSON, an error's too."""
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=30) as response:
            return response.status, json.loads(response.read()), dict(response.headers)
    except urllib.error.HTTPError as error:
        assert error.headers["Content-Type"] == "application/json"
        return error.code, json.loads(error.read()), dict(error.headers)


def serve(*args: str) -> subprocess.CompletedProcess:
    """`plexity serve` with arguments it refuses: it must stop at once, by itself."""
    return subprocess.run([PLEXITY, "serve", *args], capture_output=True, text=True, timeout=120)


def one_error_line(stderr: str) -> str:
    """The last line of stderr, which must be the only error line, and no traceback."""
    assert "Traceback" not in stderr and "http://" not in stderr, stderr
    errors = [line for line in stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and errors[0].startswith("plexity serve: error: "), stderr
    return errors[0]


@pytest.fixture(scope="module")
def server(tiny_model, tmp_path_factory):
    """A server with the embedded model as default and a tiny lmplz model installed."""
    models = tmp_path_factory.mktemp("web-models")
    shutil.copytree(tiny_model, models / "tiny")
    process, url = start_server(["--max-bytes", str(MAX_BYTES)], env={"PLEXITY_MODEL_DIR": str(models)})
    yield url
    stop_server(process)



# -- scoring -----------------------------------------------------------------------------

def test_every_sentence_comes_back_with_its_span_score_and_verdict(server):
    status, data, headers = post(server, {"text": ARTICLE, "format": "text", "threshold": None, "model": None})
    assert status == 200 and headers["content-type"] == "application/json"
    assert data["model"] == "en-default" and data["method"] == "region"
    scorer = PerplexityScorer()
    assert data["threshold"] == scorer.threshold
    result = scorer.clean(ARTICLE)
    for sentence, perplexity in zip(data["sentences"], result.perplexities, strict=True):
        assert ARTICLE[sentence["start"]:sentence["end"]] == sentence["text"]
        assert sentence["perplexity"] == perplexity
    assert [s["block"] for s in data["sentences"]] == [0, 0, 1, 2, 3]  # one block per line
    # the verdicts and cleaned text of the Python API and `plexity clean`
    assert [s["text"] for s in data["sentences"] if not s["kept"]] == [d.text for d in result.dropped]
    assert data["clean_text"] == result.text
    assert data["clean_text"].startswith("The city council") and "Share on" not in data["clean_text"]


def test_the_per_sentence_method_drops_exactly_the_sentences_above_the_threshold(server):
    _, data, _ = post(server, {"text": ARTICLE, "method": "sentences"})
    assert data["method"] == "sentences"
    for sentence in data["sentences"]:
        assert sentence["kept"] == (sentence["perplexity"] <= data["threshold"])
    assert [s["text"] for s in data["sentences"] if not s["kept"]] == BOILERPLATE
    assert data["clean_text"] == PerplexityScorer(method="sentences").clean(ARTICLE).text
    assert data["empty"] is None  # there is cleaned text


def test_a_threshold_in_the_request_overrides_the_models(server):
    _, default, _ = post(server, {"text": ARTICLE})
    highest = max(s["perplexity"] for s in default["sentences"]) * 1.01
    _, data, _ = post(server, {"text": ARTICLE, "threshold": highest})
    assert data["threshold"] == highest
    assert all(s["kept"] for s in data["sentences"])
    assert data["clean_text"] == ARTICLE
    # the scores do not depend on the threshold
    assert [s["perplexity"] for s in data["sentences"]] == [s["perplexity"] for s in default["sentences"]]


def test_html_is_extracted_first_and_spans_refer_to_the_extracted_text(server):
    html = ("<html><head><title>T</title><script>var tracking = 1;</script></head><body>"
            "<nav><a>Home</a> | <a>News</a> | <a>Sport</a></nav>"
            f"<p>{ARTICLE.splitlines()[0]}</p><footer>Privacy policy | Terms of use | Cookies</footer></body></html>")
    status, data, _ = post(server, {"text": html, "format": "html"})
    assert status == 200
    extracted = html_to_text_tags(html)
    assert data["text"] == extracted
    assert "tracking" not in data["text"]
    for sentence in data["sentences"]:
        assert extracted[sentence["start"]:sentence["end"]] == sentence["text"]
    assert data["method"] == "regions"  # raw tag text: find the content regions, as `plexity clean` does
    assert data["clean_text"].startswith("The city council approved the budget")
    assert "Privacy policy" not in data["clean_text"]
    _, trimmed, _ = post(server, {"text": html, "format": "html", "extractor": "trafilatura"})
    assert trimmed["method"] == "trim"  # trafilatura already chose the region: only trim its edges


def test_an_empty_cleaned_text_comes_with_the_reason_plexity_clean_counts(server):
    # the learned extractor finds no main content in a one-paragraph snippet: 200, and why it is empty
    status, data, _ = post(server, {"text": "<p>one sentence</p>", "format": "html", "extractor": "learned"})
    assert status == 200
    assert data["text"] == data["clean_text"] == "" and data["sentences"] == []
    assert data["empty"] == "no_text_extracted"  # (cleaning.policy.EMPTY_REASONS)
    _, blank, _ = post(server, {"text": " \n ", "format": "html"})
    assert blank["empty"] == "empty_input"
    _, strict, _ = post(server, {"text": ARTICLE, "threshold": 1, "method": "sentences"})
    assert strict["clean_text"] == "" and strict["empty"] == "all_sentences_dropped"


def test_a_listed_model_can_be_chosen_by_name(server):
    text = "The cat sat on the mat. Click here to subscribe now"
    status, data, _ = post(server, {"text": text, "model": "tiny"})
    assert status == 200
    assert data["model"] == "tiny" and data["threshold"] == 500.0  # its own default
    _, default, _ = post(server, {"text": text})
    assert [s["perplexity"] for s in data["sentences"]] != [s["perplexity"] for s in default["sentences"]]
    _, strict, _ = post(server, {"text": text, "model": "tiny", "threshold": 50, "method": "sentences"})
    assert [s["kept"] for s in strict["sentences"]] == [True, False]  # words it never saw


def test_the_model_list_names_every_model_and_the_limits(server):
    data = json.loads(urllib.request.urlopen(server + "/api/models").read())
    assert {m["name"] for m in data["models"]} == {"en-default", "tiny"}
    default = next(m for m in data["models"] if m["name"] == "en-default")
    assert default["language"] == "en" and default["tokenizer"] == "plexity-tok-1"
    assert data["default"] == "en-default" and data["default_extractor"] == "tags"
    assert data["max_bytes"] == MAX_BYTES
    assert data["methods"] == ["region", "regions", "trim", "sentences"]


# -- refusals ----------------------------------------------------------------------------

@pytest.mark.parametrize("model", ["no-such-model", "/etc/passwd", "../tiny", str(STATIC_DIR)])
def test_an_unknown_model_or_a_path_is_refused_with_404(server, model):
    status, data, _ = post(server, {"text": "Hello there.", "model": model})
    assert status == 404
    assert "unknown model" in data["error"] and "en-default" in data["error"]


def test_an_oversized_body_is_refused_with_413_and_a_message(server):
    status, data, _ = post(server, {"text": "word " * MAX_BYTES})
    assert status == 413
    assert f"{MAX_BYTES:,} bytes" in data["error"] and data["limit"] == "--max-bytes"  # (the option, for a client)


def test_a_client_that_sends_its_whole_body_before_reading_gets_its_413_when_it_asked_for_the_close(server):
    # Python's urllib sends "Connection: close" and reads nothing before its body is sent: uvicorn closed such a
    # connection as soon as it had answered, with the body's bytes unread, and the client met "Connection reset
    # by peer" (a 30 MB body to the default --max-bytes), not its 413
    status, data, _ = post(server, b"x" * (16 * 2**20))  # (more than the socket buffers hold)
    assert status == 413 and data["limit"] == "--max-bytes"
    assert get(server + "/api/models")[0] == 200


def test_an_oversized_chunked_body_without_length_is_refused_too(server):
    host, port = server.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    chunks = (b'{"text": "' + b"x" * 4096 for _ in range(10))  # a generator: sent chunked
    connection.request("POST", "/api/score", body=chunks, encode_chunked=True,
                       headers={"Content-Type": "application/json", "Transfer-Encoding": "chunked"})
    response = connection.getresponse()
    assert response.status == 413
    assert "too large" in json.loads(response.read())["error"]


def test_the_rest_of_a_refused_body_is_not_read_the_answer_is_followed_by_the_connections_end(server):
    # a client announces 100 GB and sends on after its 413; uvicorn read on for as long as it came (6.8 GB
    # and 15 s of the server's CPU in 30 s), then answered a second time on the connection: a 408
    import threading

    host, port = server.removeprefix("http://").split(":")
    client = socket.create_connection((host, int(port)), timeout=30)
    client.sendall(b"POST /api/score HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                   b"Content-Length: 100000000000\r\n\r\n")
    received = bytearray()

    def read() -> None:
        with contextlib.suppress(OSError):
            while block := client.recv(65536):
                received.extend(block)

    reader = threading.Thread(target=read)
    reader.start()
    started, sent = time.monotonic(), 0
    with pytest.raises(OSError):  # (a broken pipe, or reset: the server has stopped reading)
        while time.monotonic() - started < 20:
            client.sendall(b"x" * 65536)
            sent += 65536
    stopped = time.monotonic() - started
    reader.join(timeout=30)
    client.close()
    head, _, body = bytes(received).partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413 ") and json.loads(body)["limit"] == "--max-bytes"  # one answer, whole
    assert stopped < 10, f"the server read on for {stopped:.1f} s ({sent:,} bytes)"
    assert get(server + "/api/models")[0] == 200


def test_a_client_still_sending_a_refused_body_reads_its_whole_answer(server):
    # the rest of a refused body is read and thrown away while it comes (a connection closed with bytes
    # unread is reset, and the reset can take the answer from the client): it was read for 2 s in all, so a
    # client sending on for longer (a slow network, a loaded machine: CI's urllib client of a 3 MB body) met
    # a reset, not its 413; now until the client has been silent 2 s (or has sent 64 MiB, or after 30 s)
    host, port = server.removeprefix("http://").split(":")
    client = socket.create_connection((host, int(port)), timeout=30)
    size = 3 * MAX_BYTES
    client.sendall(b"POST /api/score HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                   b"Content-Length: %d\r\n\r\n" % size)
    for _ in range(30):  # over 3 s
        client.sendall(b"x" * (size // 30))
        time.sleep(0.1)
    received = bytearray()
    while block := client.recv(65536):
        received.extend(block)
    client.close()
    head, _, body = bytes(received).partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413 ") and json.loads(body)["limit"] == "--max-bytes"


def test_the_memory_a_burst_freed_goes_back_to_the_system_after_a_quiet_second():
    # glibc keeps what a program frees for its next allocations: the server held 245 MB after four 1.7 MB
    # bodies at once (146 MB before them) for as long as it ran; after a quiet second it gives them back
    import threading

    from process_tree import rss

    process, url = start_server([])
    try:
        post(url, {"text": "The council approved the budget.", "format": "text"})  # (the model loaded)
        body = json.dumps({"text": "The council approved the budget after a long debate about funding. " * 25_000,
                           "format": "text"})
        clients = [threading.Thread(target=post, args=(url, body)) for _ in range(4)]
        for client in clients:
            client.start()
        for client in clients:
            client.join()
        after_burst = rss(process.pid)
        time.sleep(2)
        # (measured: without the trim the resident memory stays exactly where the burst left it, 4 of 4 runs; with
        # it, it falls by 18-65 MB, by how the burst's objects lay in the heap: 20 MB was too close)
        assert rss(process.pid) < after_burst - 8 * 2**20, (after_burst, rss(process.pid))
    finally:
        stop_server(process)


def test_memory_freed_is_given_back_by_return_freed_memory():
    # (the call the server makes once quiet: glibc's malloc_trim over every arena)
    code = ("from plexity_plugins.runtime.memory import return_freed_memory\n"
            "import os\n"
            "from process_tree import rss\n"
            "blocks = [bytes(1000) + bytes([i % 256]) for i in range(200_000)]  # (past pymalloc's 512 bytes)\n"
            "last = blocks[-1]\n"
            "del blocks\n"
            "freed = rss(os.getpid())\n"
            "assert return_freed_memory()\n"
            "print(freed - rss(os.getpid()))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          cwd=Path(__file__).parent)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) > 150 * 2**20  # (of the 200 MB freed; malloc kept all of it before)


@pytest.mark.parametrize("body, message", [
    (b'{"text": "unterminated', "malformed JSON"),
    (b"\xff\xfe not utf-8", "malformed JSON"),
    (b'["text"]', 'the request must be a JSON object, e.g. {"text": "..."}, not an array'),
    (b'"some text"', "JSON object, e.g. {\"text\": \"...\"}, not a string"),
    (b"null", "JSON object, e.g. {\"text\": \"...\"}, not null"),
    (b"", 'the request body is empty: send a JSON object, e.g. {"text": "..."}'),  # (not "Expecting value")
    (b" \r\n", "the request body is empty"),
    (b'{"format": "text"}', '"text" must be a string'),
    (b'{"text": 42}', '"text" must be a string'),
    (b'{"text": "a", "format": "pdf"}', '"format" must be "text", "html" or null, not "pdf"'),
    (b'{"text": "a", "format": ""}', '"format" must be'),  # (an empty or false value is not "text")
    (b'{"text": "a", "format": false}', '"format" must be'),
    (b'{"text": "a", "format": []}', '"format" must be'),
    (b'{"text": "a", "threshold": -5}', '"threshold"'),
    (b'{"text": "a", "threshold": "high"}', '"threshold"'),
    (b'{"text": "a", "model": 3}', '"model"'),
    (b'{"text": "a", "extractor": "magic"}', '"extractor"'),
    (b'{"text": "a", "method": "vibes"}', '"method"'),
    (b'{"text": "a", "threshold": 1' + b"0" * 5_000 + b"}", "malformed JSON"),  # over Python's int digit limit
    (b'{"text": "a", "threshold": 1' + b"0" * 400 + b"}", '"threshold"'),  # too large for a float
])
def test_bad_requests_get_400_with_a_message_not_a_traceback(server, body, message):
    status, data, _ = post(server, body)
    assert status == 400
    assert message in data["error"]


@pytest.mark.parametrize("body, as_parsed", [
    (b"[" * 5_000 + b"]" * 5_000, "not an array"),
    (b'{"text": ' + b"[" * 5_000 + b"]" * 5_000 + b"}", '"text" must be a string'),
])
def test_a_body_nested_thousands_deep_gets_400_saying_why_whether_or_not_python_parses_it(server, body, as_parsed):
    # Python 3.11 and 3.12's JSON parser stops at ~1,000 levels (RecursionError: "nested too deeply"); 3.13's
    # reads 5,000 (and stops only past this server's body limit), so the request is refused as what it parsed to.
    # Either way a 400 that says why, not a traceback or a 500.
    status, data, _ = post(server, body)
    assert status == 400
    assert data["error"] == "malformed JSON: nested too deeply" or as_parsed in data["error"], data["error"]


PDF = (b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n"
       b"2 0 obj\n<< /Length 44 /Filter /FlateDecode >>\nstream\n" + zlib.compress(b"BT (Hello) Tj ET" * 20)
       + b"\nendstream\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n")


def test_a_pdf_is_refused_with_422_saying_what_it_is_not_scored_as_sentences(server):
    # `plexity clean` skips a PDF named .html or .txt as not_html; the API used to decode its
    # bytes as a page and score them ("%PDF-1.4" came back as the cleaned text)
    request = urllib.request.Request(server + "/api/decode", data=PDF, method="POST",
                                     headers={"Content-Type": "application/octet-stream"})
    with pytest.raises(urllib.error.HTTPError) as refused:  # the page's "open a file"
        urllib.request.urlopen(request, timeout=30)
    assert refused.value.code == 422
    assert json.loads(refused.value.read())["error"] == (
        "the file is not text or HTML: its bytes are PDF (plexity reads HTML and plain text; "
        "plexity clean skips such a file as not_html)")
    for form in ("text", "html"):  # the same bytes, read as text by a client and posted
        status, data, _ = post(server, {"text": PDF.decode("utf-8", "replace"), "format": form})
        assert status == 422 and data["error"].startswith('"text" is not text or HTML: its bytes are PDF')
    status, data, _ = post(server, {"text": "\x00\x01\x02\x03 binary \x04\x05" * 50})  # NULs and control codes
    assert status == 422 and "binary data" in data["error"]
    status, _, _ = post(server, {"text": "%PDF is how a PDF file starts, the council was told."})  # text about it
    assert status == 200


def test_only_json_is_accepted_so_cross_site_forms_cannot_post(server):
    status, data, _ = post(server, "text=hello", content_type="application/x-www-form-urlencoded")
    assert status == 415 and "application/json" in data["error"]


def test_a_foreign_host_header_is_refused_against_dns_rebinding(server):
    status, data, _ = get(server + "/api/models", headers={"Host": "attacker.example"})
    assert status == 400
    assert "invalid Host header 'attacker.example'" in data["error"] and "--allowed-host" in data["error"]


def test_a_path_or_method_the_server_does_not_have_gets_the_same_json_error(server):
    status, data, headers = get(server + "/api/score")  # POST only
    assert status == 405 and headers["allow"] == "POST"
    assert data["error"] == "GET is not allowed on /api/score: use POST"
    for path in ("/no-such-page", "/api/no-such-call", "/static/no-such-file.js"):
        status, data, _ = get(server + path)
        assert status == 404 and data == {"error": f"not found: {path}"}


def test_an_internal_error_is_a_json_500_naming_its_kind_with_the_traceback_in_the_servers_log():
    # a bug inside the server (here: a scorer that raises) used to be Starlette's plain-text
    # "Internal Server Error", the one answer of the API that was not JSON
    broken_scorer = ("import sys\n"
                     "from plexity_plugins.scoring.scorer import PerplexityScorer\n"
                     "def clean(self, text, threshold=None):\n"
                     "    raise RuntimeError('the scorer broke\\nat its second line')\n"
                     "PerplexityScorer.clean = clean\n"
                     "from plexity_plugins.cli import main\n"
                     "sys.exit(main(sys.argv[1:]))\n")
    process, url = start_server([], command=[sys.executable, "-c", broken_scorer])
    try:
        status, data, headers = post(url, {"text": "The council approved the budget on Tuesday."})
        assert status == 500 and headers["content-type"] == "application/json"
        assert data == {"error": "internal error (RuntimeError: the scorer broke); the server's log has the details"}
        assert headers["x-content-type-options"] == "nosniff"  # the security headers, as on every answer
        status, data, _ = get(url + "/api/models")  # and the server goes on answering
        assert status == 200 and data["default"] == "en-default"
    finally:
        stop_server(process)
    log = server_log(process)
    assert "Traceback" in log and "RuntimeError: the scorer broke" in log, log


# -- the page and its assets ---------------------------------------------------------------

def test_the_page_and_assets_come_from_the_package_with_a_strict_policy(server):
    with urllib.request.urlopen(server + "/") as response:
        page = response.read().decode()
        policy = response.headers["Content-Security-Policy"]
        assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert "script-src 'self'" in policy and "connect-src 'self'" in policy and "default-src 'none'" in policy
    assert '<script src="static/app.js"' in page
    for name in ("app.js", "app.css"):
        urllib.request.urlopen(f"{server}/static/{name}").read()
    # nothing is loaded from elsewhere (no CDN): the only URL is the SVG namespace
    for path in STATIC_DIR.iterdir():
        text = path.read_text()
        assert text.replace("http://www.w3.org/2000/svg", "").count("http") == 0, path.name
    # user text enters the DOM through textContent only
    assert "innerHTML" not in (STATIC_DIR / "app.js").read_text()


def test_serve_binds_to_loopback_unless_told_otherwise():
    args = build_parser().parse_args(["serve"])
    assert args.host == "127.0.0.1" and args.port == 8000


# -- start-up ------------------------------------------------------------------------------

@pytest.mark.parametrize("port", ["80000", "-1", "http"])
def test_a_port_outside_0_to_65535_is_a_usage_error(port):
    done = serve("--port", port)
    assert done.returncode == 2
    assert one_error_line(done.stderr) == (f"plexity serve: error: argument --port: not a port: '{port}' "
                                           f"(0 to 65535; 0: any free port)")


@pytest.mark.parametrize("option, value", [("--max-bytes", "-5"), ("--max-bytes", "0"), ("--body-timeout", "-1"),
                                           ("--extract-timeout", "-1"), ("--body-timeout", "nan")])
def test_a_limit_that_would_refuse_every_request_is_a_usage_error(option, value):
    # (they used to start a server that answered every request 413, or 408)
    done = serve(option, value)
    assert done.returncode == 2
    assert f"argument {option}: not a " in one_error_line(done.stderr)


def test_a_language_map_is_refused_saying_serve_takes_one_model():
    # `plexity clean --model en=en-default --model de=...` maps languages to models; serve used to
    # look for a model called 'en=en-default' and say it was not installed
    done = serve("--model", "en=en-default", "--model", "de=ccnet-de")
    assert done.returncode == 2
    assert one_error_line(done.stderr) == (
        "plexity serve: error: argument --model: 'en=en-default' is a language map entry (LANG=MODEL), which "
        "plexity clean and plexity run take; plexity serve scores with one model: name it (e.g. --model "
        "en-default), and a request can name any that `plexity models` lists")
    done = serve("--model", "en-default", "--model", "tiny")  # (the last one used to win, silently)
    assert done.returncode == 2 and "argument --model: given twice" in one_error_line(done.stderr)


def test_sizes_and_time_limits_are_read_as_in_the_other_commands():
    args = build_parser().parse_args(["serve", "--max-bytes", "2MiB", "--body-timeout", "0",
                                      "--extract-timeout", "2.5"])
    assert args.max_bytes == 2 * 1024 * 1024
    assert args.body_timeout == 0 and args.extract_timeout == 2.5  # 0: no limit


def test_a_port_in_use_is_one_error_line_naming_it_and_the_way_out_before_any_url():
    with socket.socket() as other:  # another server holds the port
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        done = serve("--port", str(port))
    assert done.returncode == 2
    assert one_error_line(done.stderr) == (f"plexity serve: error: cannot listen on 127.0.0.1 port {port}: "
                                           f"Address already in use: give another --port (--port 0: any free "
                                           f"one)")


def test_port_0_listens_on_a_free_port_and_prints_the_one_it_got():
    # (on stdout, where a script reads what a command answers; before, on stderr with the warnings)
    process = subprocess.Popen([PLEXITY, "serve", "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               text=True)
    try:
        ready, _, _ = select.select([process.stdout], [], [], 60)
        assert ready, "plexity serve printed nothing within 60 s"
        line = process.stdout.readline()
        match = re.fullmatch(r"plexity serve: http://127\.0\.0\.1:(\d+)/  \(Ctrl\+C to stop\)\n", line)
        assert match and int(match.group(1)) != 0, line
        status, data, _ = get(f"http://127.0.0.1:{match.group(1)}/api/models")
        assert status == 200 and data["default"] == "en-default"
    finally:
        stop_server(process)


def test_the_docs_synopsis_names_every_extractor_and_option():
    synopsis = re.search(r"```text\n(plexity serve .*?)```", WEB_DOC.read_text(), re.S).group(1)
    assert re.search(r"--extractor ([a-z|]+)", synopsis).group(1).split("|") == list(EXTRACTORS)
    usage = subprocess.run([PLEXITY, "serve", "--help"], capture_output=True, text=True, check=True).stdout
    options = set(re.findall(r"--[a-z][a-z-]+", usage)) - {"--help"}
    assert options <= set(re.findall(r"--[a-z][a-z-]+", synopsis)), options


# -- load ----------------------------------------------------------------------------------------

def test_a_burst_of_large_requests_leaves_the_model_list_responsive_and_an_over_full_queue_gets_503():
    import threading

    # one scoring thread and two places in the queue: of 8 requests at once, 5 find it full
    process, url = start_server(["--workers", "1", "--queue", "2", "--max-bytes", "2000000"])
    port = int(url.rsplit(":", 1)[1])
    lines = [ARTICLE.replace("library", f"library {n}") for n in range(2400)]
    body = json.dumps({"text": "\n".join(lines), "format": "text"}).encode()  # ~700 kB
    answers: list[tuple[int, dict, dict]] = []
    events: list[str] = []  # what answered, in order: "scored", "refused", "models"

    def score():
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
        connection.request("POST", "/api/score", body=body, headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        data = json.loads(response.read())
        answers.append((response.status, {k.lower(): v for k, v in response.getheaders()}, data))
        events.append("scored" if response.status == 200 else "refused")
        connection.close()

    try:
        threads = [threading.Thread(target=score) for _ in range(8)]
        for thread in threads:
            thread.start()
        while any(thread.is_alive() for thread in threads):
            with urllib.request.urlopen(url + "/api/models", timeout=300) as response:
                assert response.status == 200 and json.loads(response.read())["default"] == "en-default"
            events.append("models")
            time.sleep(0.05)
        for thread in threads:
            thread.join()
    finally:
        stop_server(process)

    scored = [data for status, _, data in answers if status == 200]
    refused = [(headers, data) for status, headers, data in answers if status == 503]
    assert len(scored) + len(refused) == 8 and scored and refused
    for headers, data in refused:
        assert int(headers["retry-after"]) >= 1 and "busy" in data["error"]
    assert all(data["sentences"] for data in scored)
    # the model list answered all along, between the scored requests, not after them (it used
    # to wait behind them: 7.5 s median while 50 requests of 1.9 MB ran, bench/web_burst.py)
    last_scored = len(events) - 1 - events[::-1].index("scored")
    assert events[:last_scored].count("models") >= 3, events


def test_files_are_decoded_off_the_event_loop_so_the_model_list_answers_meanwhile():
    # /api/decode decoded on the event loop, where every other request waited for it: while ten 2 MB Latin-1 files
    # were decoded, GET /api/models took 1.4 s (median), 2.8 s at most.  The file's answer comes when its decoding
    # ends, so on the event loop no other request is answered in the last half of the time from the file's sending
    # to its answer (the loop is decoding then: none in 8 runs); off it, the model list answers then too (2 to 16
    # times here, a CPU hog beside or not).  (A bound on each wait was tried first: a CI machine's GIL hand-offs
    # between the decoding thread and the loop made a median of three waits 3.4 decodes, no better than before.)
    import threading

    process, url = start_server(["--workers", "1", "--max-bytes", "32000000"])
    port = int(url.rsplit(":", 1)[1])
    latin = (b"caf\xe9 " * 6_000_000)[:24_000_000]  # (about 0.5 s to decode here)
    sent_at: list[float] = []
    decoded_at: list[float] = []

    def decode() -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
        connection.request("POST", "/api/decode", body=latin, headers={"Content-Type": "application/octet-stream"})
        sent_at.append(time.monotonic())
        response = connection.getresponse()
        decoded_at.append(time.monotonic())
        assert response.status == 200 and json.loads(response.read())["charset"] == "cp1252"
        connection.close()

    try:
        thread = threading.Thread(target=decode)
        thread.start()
        answered_at = []  # when each GET /api/models was answered
        while thread.is_alive():
            with urllib.request.urlopen(url + "/api/models", timeout=300) as response:
                assert response.status == 200 and json.loads(response.read())["default"] == "en-default"
            answered_at.append(time.monotonic())
        thread.join()
    finally:
        stop_server(process)
    assert sent_at and decoded_at
    late = sent_at[0] + 0.5 * (decoded_at[0] - sent_at[0])
    assert any(late < t < decoded_at[0] for t in answered_at), (answered_at, sent_at, decoded_at)


def test_slow_bodies_take_no_queue_place_and_are_cut_off_at_the_body_time_limit():
    # one scoring thread and one place in the queue; ten clients that send a byte of their
    # body and then nothing (a byte every few seconds, at best): before, they held every place
    # and every normal request was answered 503 while they lasted
    process, url = start_server(["--workers", "1", "--queue", "1", "--body-timeout", "3"])
    port = int(url.rsplit(":", 1)[1])
    slow = []
    try:
        for _ in range(10):
            connection = socket.create_connection(("127.0.0.1", port), timeout=30)
            connection.sendall(b"POST /api/score HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                               b"Content-Length: 1000\r\n\r\n{")
            slow.append(connection)
        time.sleep(0.5)
        for n in range(3):  # served while the slow ones wait
            status, data, _ = post(url, {"text": f"The council met on day {n}. It approved the budget.",
                                         "format": "text"})
            assert status == 200 and data["sentences"], (status, data)
        for connection in slow:  # each is answered 408 once its body is past the time limit
            answer = b""
            while b"}" not in answer:
                block = connection.recv(4096)
                if not block:
                    break
                answer += block
            assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
            assert b"did not arrive within 3 s" in answer and b'"limit":"--body-timeout"' in answer
    finally:
        for connection in slow:
            connection.close()
        stop_server(process)


def test_bodies_arriving_at_once_are_bounded_past_it_a_request_is_refused_503_at_once():
    # bodies are read before they take a place (above), so nothing bounded how many arrive at once: 400
    # clients that sent 2 MB of a body each and waited held 1 GB of the server (1000: 1.9 GB), until their
    # 408s.  Now the server holds at most 2 x (--workers + --queue) x --max-bytes of bodies: 4 x 100,000
    # bytes here; four clients that sent 99,000 bytes of theirs fill it, and a fifth is answered 503 at once
    process, url = start_server(["--workers", "1", "--queue", "1", "--max-bytes", "100000", "--body-timeout", "20"])
    port = int(url.rsplit(":", 1)[1])

    def upload(sent: int) -> socket.socket:
        client = socket.create_connection(("127.0.0.1", port), timeout=30)
        client.sendall(b"POST /api/score HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                       b"Content-Length: 100000\r\n\r\n" + b" " * sent)
        return client

    held = []
    try:
        for _ in range(4):
            held.append(upload(99_000))
            time.sleep(0.2)
        started = time.monotonic()
        refused = upload(99_000)
        answer = b""
        while block := refused.recv(65536):  # (the answer, then the connection's end)
            answer += block
        refused.close()
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 503 ") and time.monotonic() - started < 10, head
        assert re.search(rb"retry-after: \d+", head.lower()) and "400,000 bytes" in json.loads(body)["error"]
        for client in held:  # (gone: their bodies are given back)
            client.close()
        time.sleep(0.5)
        status, data, _ = post(url, {"text": "The council met. It approved the budget."})
        assert status == 200 and data["sentences"]
    finally:
        for client in held:
            client.close()
        stop_server(process)
    output = server_log(process)  # a client that left mid-body was an uncaught error, its traceback logged
    assert "Traceback" not in output and "Exception in ASGI application" not in output, output[-2000:]


def test_request_headers_too_have_a_time_limit_and_an_unparsable_request_gets_a_json_400():
    # uvicorn's own handling, below the app: a connection that sent nothing, or part of its headers,
    # was held for ever (enough of them take every file descriptor), and a request it could not
    # parse got a plain-text 400
    process, url = start_server(["--body-timeout", "2"])
    port = int(url.rsplit(":", 1)[1])

    def answer(connection: socket.socket) -> bytes:
        received = b""
        while block := connection.recv(4096):
            received += block
        connection.close()
        return received

    try:
        silent = socket.create_connection(("127.0.0.1", port), timeout=30)
        started = time.monotonic()  # (before the server can start its clock: the 400s below take a while)
        partial = socket.create_connection(("127.0.0.1", port), timeout=30)
        partial.sendall(b"GET /api/models HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and never the blank line
        for garbled in (b"NOT HTTP AT ALL\r\n\r\n",
                        b"POST /api/score HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: -1\r\n\r\n"):
            connection = socket.create_connection(("127.0.0.1", port), timeout=30)
            connection.sendall(garbled)
            head, _, body = answer(connection).partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 400 ") and b"content-type: application/json" in head
            assert json.loads(body)["error"].startswith("not a valid HTTP/1.1 request")
        status, data, _ = get(url + "/api/models")  # served meanwhile
        assert status == 200
        head, _, body = answer(partial).partition(b"\r\n\r\n")
        waited = time.monotonic() - started
        assert head.startswith(b"HTTP/1.1 408 ") and 1.5 < waited < 10, (head, waited)
        assert json.loads(body) == {"error": "the request headers did not arrive within 2 s (the server's "
                                             "--body-timeout)"}
        assert answer(silent) == b""  # closed without an answer: it asked nothing
    finally:
        stop_server(process)


def test_out_of_file_descriptors_it_warns_in_one_line_and_answers_once_connections_end():
    # more connections than `ulimit -n`: asyncio logged a traceback for every connection it could not accept,
    # 2,048 a second (49 MB of log, 14 s of CPU, in the 30 s that 200 idle connections to a server of
    # `ulimit -n 128` lasted); now one line every 10 s, and the connections are accepted as others end
    limited = ("import resource, sys; resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64)); "
               "from plexity_plugins.cli import main; sys.exit(main())")
    process, url = start_server(["--body-timeout", "2"], command=[sys.executable, "-c", limited])
    port = int(url.rsplit(":", 1)[1])
    idle = []
    try:
        for _ in range(100):  # (the kernel takes them into the backlog: the server is out of descriptors)
            idle.append(socket.create_connection(("127.0.0.1", port), timeout=30))
        time.sleep(3)
        status, data, _ = get(url + "/api/models")  # answered once idle ones are closed (after 2 s)
        assert status == 200 and data["default"] == "en-default"
    finally:
        for connection in idle:
            connection.close()
        stop_server(process)
    output = server_log(process)
    warnings = [line for line in output.splitlines() if "Too many open files" in line]
    assert 1 <= len(warnings) <= 2 and "Traceback" not in output, output[-3000:]
    assert warnings[0] == ("plexity serve: warning: cannot accept connections: Too many open files (ulimit -n: 64 "
                           "files); new ones wait until others end (an idle one is closed after --body-timeout)")


def test_an_accept_retried_after_the_server_stopped_is_no_traceback(caplog):
    # Out of descriptors, asyncio retries its accept a moment later; a server stopped meanwhile (Ctrl+C, or the
    # test above ending) had closed the socket, and the retry logged "ValueError: Invalid file descriptor: -1"
    # with its traceback (1 run in 3 of the test above, on a busy machine). Now dropped; other errors still reach
    # the loop's own handler.
    import asyncio

    from plexity_plugins.web.app import warn_when_out_of_descriptors

    loop = asyncio.new_event_loop()
    try:
        warn_when_out_of_descriptors(loop)
        closed = socket.socket()
        closed.close()
        retry = loop.call_later(3600, loop._start_serving, None, closed)  # (what asyncio schedules; never run)
        error = ValueError("Invalid file descriptor: -1")
        loop.call_exception_handler({"message": f"Exception in callback {retry!r}", "handle": retry,
                                     "exception": error})
        retry.cancel()
        assert caplog.records == []
        loop.call_exception_handler({"message": "Exception in callback other()", "exception": error})
        assert [record.getMessage() for record in caplog.records] == ["Exception in callback other()"]
    finally:
        loop.close()


def test_a_client_that_reads_nothing_of_its_answer_is_disconnected_and_a_slow_reader_is_served():
    # five clients that posted 2 MB of one-letter lines and read nothing held their 77 MB answers
    # (630 MB) for as long as they stayed connected; now a client that takes none of its answer
    # for --body-timeout seconds is dropped, its answer freed, while one that reads slowly gets all
    process, url = start_server(["--body-timeout", "2"])
    port = int(url.rsplit(":", 1)[1])

    def ask(lines: int) -> socket.socket:
        body = json.dumps({"text": "a\n" * lines}).encode()
        client = socket.socket()
        client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # (the kernel buffers little)
        client.settimeout(60)
        client.connect(("127.0.0.1", port))
        client.sendall(b"POST /api/score HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                       b"Connection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
        return client

    def read_all(client: socket.socket, pause: float = 0.0) -> bytes:
        received = b""
        with contextlib.suppress(ConnectionResetError):
            while block := client.recv(65536):
                received += block
                time.sleep(pause)
        client.close()
        return received

    try:
        stalled = ask(200_000)  # a 22 MB answer
        started = time.monotonic()
        steady = read_all(ask(60_000), pause=0.002)  # 6.7 MB, a little at a time: longer than the limit
        assert time.monotonic() - started > 3
        head, _, body = steady.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200 ") and len(json.loads(body)["sentences"]) == 60_000
        time.sleep(5)  # reading nothing
        head, _, body = read_all(stalled).partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200 ")
        length = int(re.search(rb"content-length: (\d+)", head).group(1))
        assert length > 20_000_000 and len(body) < length / 2  # cut off, not kept for it
        status, _, _ = get(url + "/api/models")
        assert status == 200
    finally:
        stop_server(process)


def test_stopped_it_waits_for_a_slow_reader_no_longer_than_the_body_time_limit():
    # SIGTERM (or Ctrl+C) let the answers under way finish: a client that read its 80 MB answer a little at a
    # time kept the server running for as long as it read (40 minutes at 32 kB/s); now --body-timeout at most
    import signal

    process, url = start_server(["--body-timeout", "2"])
    port = int(url.rsplit(":", 1)[1])
    body = json.dumps({"text": "a\n" * 300_000}).encode()  # a 35 MB answer
    client = socket.socket()
    client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    client.settimeout(60)
    try:
        client.connect(("127.0.0.1", port))
        client.sendall(b"POST /api/score HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                       b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        received = len(client.recv(65536))  # the answer has begun
        process.send_signal(signal.SIGTERM)
        stopped = time.monotonic()
        with contextlib.suppress(OSError):
            while process.poll() is None and time.monotonic() - stopped < 30:
                received += len(client.recv(4096))  # a little at a time: never stalled
                time.sleep(0.05)
        waited = time.monotonic() - stopped
        # (2.2 s alone, 3.6 s beside two busy processes; a server that served on is still serving at 30 s)
        assert process.poll() is not None and waited < 20, f"still serving {waited:.0f} s after SIGTERM"
        assert received < len(body)  # (stopped before the answer was read)
    finally:
        client.close()
        stop_server(process)


def test_answers_waiting_for_slow_readers_are_bounded_the_longest_waiting_is_ended():
    # eight clients that posted 2 MB of one-letter lines each and read their 80 MB answers at 4 kB a second
    # (progress enough for the limit above) held the server at 1.2 GB for the hours it would take; sixteen
    # at 1.24 GB still 55 s in, now 0.89 GB.  The answers waiting are held up to 128 x --max-bytes in all:
    # past it the connection whose answer has waited longest is ended
    process, url = start_server(["--max-bytes", "1000000", "--queue", "4"])  # 128 MB of answers waiting
    port = int(url.rsplit(":", 1)[1])
    body = json.dumps({"text": "a\n" * 330_000}).encode()  # a 39 MB answer

    def ask() -> socket.socket:
        client = socket.socket()
        client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        client.settimeout(60)
        client.connect(("127.0.0.1", port))
        client.sendall(b"POST /api/score HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                       b"Connection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
        assert client.recv(16).startswith(b"HTTP/1.1 200")  # (its answer waits in the server)
        return client

    def rest(client: socket.socket) -> int:
        received = 0
        with contextlib.suppress(ConnectionResetError):
            while block := client.recv(1 << 20):
                received += len(block)
        client.close()
        return received

    try:
        clients = [ask() for _ in range(5)]  # reading nothing more, for now
        received = [rest(client) for client in clients]
    finally:
        stop_server(process)
    whole = received[-1]
    assert whole > 38_000_000  # the newest answer, whole
    assert received[0] < whole / 2 and received[1] < whole / 2, received  # the two that waited longest: ended


def peak_memory_mb(process: subprocess.Popen) -> int:
    """The highest resident memory the process has held so far (VmHWM), in MiB."""
    status = Path(f"/proc/{process.pid}/status").read_text()
    return int(re.search(r"^VmHWM:\s+(\d+) kB", status, re.M).group(1)) // 1024


def test_a_body_of_690000_one_letter_lines_is_answered_without_the_server_growing_by_half_a_gigabyte():
    # 2 MB (the default --max-bytes) of "a\n": 690,000 sentences, 77 MB of answer.  The answer was
    # built as 690,000 dicts (265 MB) and then encoded: the server grew by 520 MB for this one
    # request (two scoring threads: a gigabyte).  Encoded a batch of sentences at a time, and the
    # scores freed before the answer is joined, it grows by about 290 MB (the scores themselves)
    process, url = start_server([])
    try:
        post(url, {"text": "The council met. It approved the budget."})  # the model open, the threads started
        before = peak_memory_mb(process)
        status, data, _ = post(url, {"text": "a\n" * 690_000})
        grown = peak_memory_mb(process) - before
    finally:
        stop_server(process)
    assert status == 200 and len(data["sentences"]) == 690_000
    assert data["sentences"][-1] == {"text": "a", "start": 1_379_998, "end": 1_379_999,
                                     "perplexity": data["sentences"][0]["perplexity"], "tokens": 1,
                                     "block": 689_999, "kept": data["sentences"][0]["kept"]}
    assert grown < 400, f"the server grew by {grown} MiB for one 2 MB request"
