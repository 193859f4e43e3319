"""Inputs on S3, as a Common Crawl user reads them, from a real S3 server on 127.0.0.1 (moto's standalone server, the
[test] extra; `plexity_plugins.datatrove.remote_files`).

Every documented form (a folder, a file, a quoted glob; credentials from --storage-options or AWS_* variables, the
endpoint from either) reads what the same WARCs read locally give.  Each refusal or failure of the server is one line
naming the URL and what to do, without a traceback or a secret; a re-run reads again exactly what was lost; a task
of one file does not list the whole bucket."""

from __future__ import annotations

import gzip
import importlib.util
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

# (not a skip: the test environment scripts/setup.sh --test makes has both; without them it is not that environment)
for _package in ("s3fs", "moto"):
    if importlib.util.find_spec(_package) is None:
        pytest.fail(f"{_package} is not installed: run `bash scripts/setup.sh --test`, which installs moto's S3 server "
                    f"and s3fs for these tests", pytrace=False)

import s3fs  # noqa: E402

from s3_server import KEY, SECRET, S3Server, clean_env  # noqa: E402
from plexity_plugins.datatrove import WarcHtmlReader  # noqa: E402
from plexity_plugins.errors import ReadError  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "examples" / "sample.warc.gz"
PLEXITY = [sys.executable, "-m", "plexity_plugins"]


@pytest.fixture(scope="module")
def s3():
    """One server for the module's tests, with the bucket `crawl` of three copies of the sample WARC under
    crawl/2024-01/; stopped after them."""
    server = S3Server()
    fs = server.fs()
    fs.call_s3("create_bucket", Bucket="crawl")
    for i in range(3):
        fs.put(str(SAMPLE), f"crawl/crawl/2024-01/part-{i}.warc.gz")
    yield server
    server.stop()


def plexity(*args: str, env=None) -> subprocess.CompletedProcess:
    done = subprocess.run(PLEXITY + list(args), capture_output=True, text=True, timeout=120, cwd=REPO,
                          env=env or clean_env())
    assert SECRET not in done.stdout + done.stderr
    return done


def run(url: str, out: Path, *args: str, env=None) -> subprocess.CompletedProcess:
    return plexity("run", url, "-o", str(out), "--workers", "2", "--extractor", "tags", *args, env=env)


def documents(out: Path) -> list[str]:
    """The run's documents, each without the file it came from (s3://... or a path), sorted."""
    lines = []
    for f in sorted((out / "documents").glob("*.jsonl.gz")):
        for line in gzip.open(f, "rt"):
            document = json.loads(line)
            document["metadata"].pop("file_path")
            lines.append(json.dumps(document, sort_keys=True))
    return sorted(lines)


def no_secret_in(folder: Path) -> None:
    written = [p for p in folder.rglob("*") if p.is_file() and SECRET.encode() in
               (gzip.decompress(p.read_bytes()) if p.suffix == ".gz" else p.read_bytes())]
    assert written == []


@pytest.fixture(scope="module")
def local_folder(tmp_path_factory) -> Path:
    """The same three WARCs in a local folder."""
    folder = tmp_path_factory.mktemp("local") / "crawl"
    (folder / "2024-01").mkdir(parents=True)
    for i in range(3):
        (folder / "2024-01" / f"part-{i}.warc.gz").write_bytes(SAMPLE.read_bytes())
    return folder


@pytest.fixture(scope="module")
def local_documents(local_folder):
    """The documents plexity run gives of the local folder: (all three files', one file's)."""
    done = run(str(local_folder), local_folder.parent / "out")
    assert done.returncode == 0, done.stderr[-2000:]
    three = documents(local_folder.parent / "out")
    return three, three[::3]  # (the three files are the same: each document three times, in a row)


@pytest.mark.parametrize("form", ["folder, --storage-options with endpoint_url", "one file, AWS_* variables",
                                  "quoted glob, AWS_* variables"])
def test_every_documented_input_form_reads_what_the_same_warcs_read_locally_give(s3, local_documents, tmp_path,
                                                                                  form):
    """docs/ray.md's input forms and credentials, with plexity run's local executor and 2 workers."""
    out = tmp_path / "out"
    if form.startswith("folder"):
        done = run("s3://crawl/crawl/", out, "--storage-options", json.dumps(s3.options()))
    else:
        url = "s3://crawl/crawl/2024-01/part-1.warc.gz" if form.startswith("one") else \
            "s3://crawl/crawl/*/part-[0-2].warc.gz"
        done = run(url, out, env=clean_env(AWS_ACCESS_KEY_ID=KEY, AWS_SECRET_ACCESS_KEY=SECRET,
                                           AWS_ENDPOINT_URL=s3.url))
    assert done.returncode == 0, done.stderr[-2000:]
    assert documents(out) == local_documents[1 if form.startswith("one") else 0]
    no_secret_in(out)


def test_the_datatrove_step_in_a_users_own_pipeline(s3, local_folder, tmp_path):
    """WarcHtmlReader(("s3://...", options)) in a pipeline of datatrove's own executor, as docs/datatrove.md shows:
    the documents of the same pipeline on the local folder."""
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.writers import JsonlWriter

    from plexity_plugins.datatrove import HtmlTagsExtractor

    for name, folder in (("s3", ("s3://crawl/crawl", s3.options())), ("local", str(local_folder))):
        LocalPipelineExecutor([WarcHtmlReader(folder), HtmlTagsExtractor(),
                               JsonlWriter(str(tmp_path / name / "documents"))],
                              tasks=3, workers=1, logging_dir=str(tmp_path / name / "logs")).run()
    assert len(documents(tmp_path / "s3")) == 36 and documents(tmp_path / "s3") == documents(tmp_path / "local")
    no_secret_in(tmp_path)


@pytest.mark.parametrize("case", ["missing bucket", "no credentials", "server not there"])
def test_a_listing_refused_or_failed_is_one_line_naming_the_url_and_what_to_do(s3, tmp_path, case):
    """Before: "plexity run: error: The specified bucket does not exist" (s3fs's words alone: no URL, nothing to
    do); no credentials and an endpoint that answers nothing named the URL without what to do."""
    url, endpoint, credentials = "s3://crawl/crawl/", s3.url, {"AWS_ACCESS_KEY_ID": KEY, "AWS_SECRET_ACCESS_KEY": SECRET}
    if case == "missing bucket":
        url = "s3://no-such-bucket/crawl/"
    elif case == "no credentials":
        credentials = {}
    else:  # (botocore's retries, ~9 s, left out: the line is the test's)
        endpoint, credentials = "http://127.0.0.1:9", {**credentials, "AWS_MAX_ATTEMPTS": "1"}
    done = run(url, tmp_path / "out", env=clean_env(AWS_ENDPOINT_URL=endpoint, **credentials))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    line = done.stderr.strip()
    assert "\n" not in line and line.startswith(f"plexity run: error: cannot list the input {url.rstrip('/')}: ")
    assert {"missing bucket": "404 NoSuchBucket (The specified bucket does not exist): check the bucket's name",
            "no credentials": "no credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
            "server not there": "the S3 server could not be reached"}[case] in line, line


def test_plexity_clean_of_an_s3_url_says_what_to_use(tmp_path):
    """Before: "plexity clean: error: input s3:/crawl/crawl does not exist" (the URL taken for a path)."""
    done = plexity("clean", "s3://crawl/crawl/", "-o", str(tmp_path / "out"))
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "plexity clean: error: s3://crawl/crawl/ is a URL: plexity clean reads files on this machine; plexity run "
        "'s3://crawl/crawl/' -o DIR reads WARC files from S3, Hugging Face or HTTP(S) (the [remote] extra; "
        "docs/ray.md), or copy them here and clean the copy")


def iam_reader(server: S3Server, deny: str | None) -> tuple[str, str]:
    """A user of `server` (started with INITIAL_NO_AUTH_ACTION_COUNT=3) that may do anything but s3:GetObject of
    `deny`: its key and secret."""
    import botocore.session

    iam = botocore.session.get_session().create_client("iam", endpoint_url=server.url, region_name="us-east-1",
                                                       aws_access_key_id="none", aws_secret_access_key="none")
    iam.create_user(UserName="reader")
    created = iam.create_access_key(UserName="reader")["AccessKey"]
    statements = [{"Effect": "Allow", "Action": "*", "Resource": "*"}]
    statements += [{"Effect": "Deny", "Action": "s3:GetObject", "Resource": deny}] if deny else []
    iam.put_user_policy(UserName="reader", PolicyName="read", PolicyDocument=json.dumps(
        {"Version": "2012-10-17", "Statement": statements}))
    return created["AccessKeyId"], created["SecretAccessKey"]


def test_a_refused_object_fails_its_task_in_one_line_and_the_rerun_reads_exactly_it(tmp_path):
    """A server that checks credentials; one object of two refused (403, as requester pays refuses a reader who does
    not pay).  Before: "ReadError: [Errno None] paid/b.warc.gz: read error at byte 0: Access Denied" (no URL, nothing
    to do).  Now the URL and what to do; with the refusal lifted, the same command runs that task only."""
    server = S3Server(INITIAL_NO_AUTH_ACTION_COUNT="3")
    try:
        key, secret = iam_reader(server, deny="arn:aws:s3:::crawl/paid/*")
        fs = server.fs(key, secret)
        fs.call_s3("create_bucket", Bucket="crawl")
        for name in ("free/a.warc.gz", "paid/b.warc.gz"):
            fs.put(str(SAMPLE), f"crawl/{name}")
        env = clean_env(AWS_ENDPOINT_URL=server.url, AWS_ACCESS_KEY_ID=key, AWS_SECRET_ACCESS_KEY=secret)
        out = tmp_path / "out"
        first = run("s3://crawl/", out, env=env)
        assert first.returncode == 1 and "Traceback" not in first.stderr
        assert "(task 1: ReadError: s3://crawl/paid/b.warc.gz: reading stopped at byte 0: refused (403): give " \
               "credentials that may read it (AWS_* variables or --storage-options); a public bucket: " \
               "--storage-options '{\"anon\": true}'; requester pays: '{\"requester_pays\": true}')" \
               in first.stderr.splitlines()[-1], first.stderr[-2000:]
        wrong = run("s3://crawl/", tmp_path / "wrong", env={**env, "AWS_SECRET_ACCESS_KEY": "wrong-Q7"})
        assert wrong.stderr.strip().startswith("plexity run: error: cannot list the input s3://crawl: the server "
                                               "answered 403 SignatureDoesNotMatch")
        assert "check the credentials (AWS_ACCESS_KEY_ID" in wrong.stderr and "wrong-Q7" not in wrong.stderr
        import botocore.session

        botocore.session.get_session().create_client(  # (the refusal lifted: the user's policy without its Deny)
            "iam", endpoint_url=server.url, region_name="us-east-1", aws_access_key_id=key,
            aws_secret_access_key=secret).put_user_policy(UserName="reader", PolicyName="read", PolicyDocument=json.dumps(
                {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}))
        again = run("s3://crawl/", out, env=env)
        assert again.returncode == 0, again.stderr[-2000:]
        assert "2/2 tasks completed (1 in this run" in again.stdout
        stats = json.loads((out / "logs" / "stats.json").read_text())
        reader = next(step for step in stats if step["name"].startswith("📖"))
        assert reader["stats"]["records"]["total"] == 2 * 27
        assert (out / "logs" / "plexity-settings.json").is_file()
        assert secret not in "".join(done.stdout + done.stderr for done in (first, wrong, again))
        for folder in (out, tmp_path / "wrong"):
            written = [p for p in folder.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]
            assert written == []
    finally:
        server.stop()


def test_a_server_that_stops_mid_file_fails_the_task_naming_the_url_and_the_byte(tmp_path):
    """Before: "EndpointConnectionError: Could not connect to the endpoint URL: "http://127.0.0.1:.../bkt/big.warc.gz""
    (botocore's, the object named by the endpoint's address, not as the input).  Now a ReadError (the task fails; a
    re-run reads the file again) naming the s3:// URL and the byte."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    data = io.BytesIO()
    writer = WARCWriter(data, gzip=True)
    for i, kind in enumerate(["text/html"] + ["image/jpeg"] * 3 + ["text/html"]):
        payload = b"<p>The council met on Tuesday.</p>" if kind == "text/html" else os.urandom(1 << 20)
        headers = StatusAndHeaders("200 OK", [("Content-Type", kind)], protocol="HTTP/1.1")
        writer.write_record(writer.create_warc_record(f"http://example.org/{i}", "response",
                                                      payload=io.BytesIO(payload), http_headers=headers))
    server = S3Server()
    try:
        fs = server.fs()
        fs.call_s3("create_bucket", Bucket="bkt")
        fs.pipe("bkt/crawl/big.warc.gz", data.getvalue())
        # (read 1 MiB at a time, s3fs's and botocore's retries one: the test's, not the failure's, time)
        options = server.options(default_block_size=1 << 20, config_kwargs={"retries": {"max_attempts": 1}})
        reader = WarcHtmlReader(("s3://bkt/crawl", options))
        records = iter(reader.read_file("big.warc.gz"))
        assert next(records).metadata["url"] == "http://example.org/0"
        server.stop()
        with pytest.raises(ReadError) as raised:
            next(records)
    finally:
        server.stop()
    assert re.fullmatch(r"s3://bkt/crawl/big\.warc\.gz: reading stopped at byte [\d,]+: the S3 "
                        r"server could not be reached \(.*\); run again when it answers", str(raised.value))


def test_a_task_of_one_object_does_not_list_the_bucket_and_sees_its_object_gone_or_replaced(s3, tmp_path):
    """One task per file, plexity run's default: each task listed the whole input again to check it (2,000 objects:
    2,000 listings of two requests each, 4 million entries).  A task of few files now asks for its own (one request
    each); the run lists the input as it starts.  An object deleted or replaced (another size) since the run started
    still stops its task, named; the other tasks read theirs."""
    from datatrove.pipeline.writers import JsonlWriter

    from plexity_plugins.datatrove import LocalTaskExecutor
    from plexity_plugins.datatrove.run_settings import changed_task_inputs, run_settings

    fs = s3.fs()
    fs.call_s3("create_bucket", Bucket="six")
    for i in range(6):
        fs.put(str(SAMPLE), f"six/crawl/f{i}.warc.gz")
    before = s3.listings()
    LocalTaskExecutor([WarcHtmlReader(("s3://six/crawl", s3.options())), JsonlWriter(str(tmp_path / "out"))],
                      tasks=6, workers=1, logging_dir=str(tmp_path / "logs")).run()
    assert len(list((tmp_path / "logs" / "completions").iterdir())) == 6
    assert s3.listings() - before <= 2, s3.log[-20:]  # (the run's, as it starts: it was 1 + 6)
    reader = WarcHtmlReader(("s3://six/crawl", s3.options()))
    settings = run_settings([reader], 6, True)
    fs.rm("six/crawl/f1.warc.gz")
    fs.pipe("six/crawl/f2.warc.gz", b"WARC/1.0\r\n")
    assert changed_task_inputs([reader], settings, 0, 6) == [] and reader._listing[0::6] == ["f0.warc.gz"]
    assert changed_task_inputs([WarcHtmlReader(("s3://six/crawl", s3.options()))], settings, 1, 6) == \
        ["removed: f1.warc.gz"]
    assert changed_task_inputs([WarcHtmlReader(("s3://six/crawl", s3.options()))], settings, 2, 6)[0].startswith(
        "rewritten: f2.warc.gz ")


def test_anon_reads_a_public_bucket_and_a_private_one_is_a_task_failure_not_a_skip(s3, local_documents, tmp_path):
    """--storage-options '{"anon": true}' reads a public object.  A private one refused (403) as it was opened was
    counted as an unreadable file, "skipped a.warc.gz: unreadable (PermissionError: Forbidden)", and the task
    completed: a re-run never read it again.  Now its task fails, naming the URL and that the bucket is not public."""
    fs = s3.fs()
    fs.call_s3("create_bucket", Bucket="public")
    fs.call_s3("put_object", Bucket="public", Key="crawl/a.warc.gz", Body=SAMPLE.read_bytes(), ACL="public-read")
    fs.call_s3("create_bucket", Bucket="private")
    fs.call_s3("put_object", Bucket="private", Key="crawl/a.warc.gz", Body=SAMPLE.read_bytes())
    anon = {"anon": True, "client_kwargs": {"endpoint_url": s3.url}}
    done = run("s3://public/crawl/", tmp_path / "out", "--storage-options", json.dumps(anon))
    assert done.returncode == 0, done.stderr[-2000:]
    assert documents(tmp_path / "out") == local_documents[1]
    reader = WarcHtmlReader(("s3://private/crawl", anon))
    with pytest.raises(ReadError) as raised:
        list(reader.read_file("a.warc.gz"))
    assert str(raised.value) == (
        "s3://private/crawl/a.warc.gz: cannot open it: refused (403) to a reader without credentials (anon): the "
        "bucket is not public; give credentials that may read it (AWS_* variables or --storage-options' key and "
        "secret)")
    assert "unreadable_file" not in reader.stats.stats
